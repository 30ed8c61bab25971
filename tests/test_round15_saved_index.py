"""What indexing nodes and the number products save, beside torch 2.13: the index tensors torch's
IndexBackward0, IndexSelectBackward0, GatherBackward0, TakeBackward0 and MaskedSelectBackward0 keep (seen by
pack hooks, `_saved_indices` / `_saved_index` / `_saved_mask`, freed by backward so a second one raises, and
checked for in-place changes), and the number `t * 2` and `t / 2` keep as a tensor."""
import numpy as np
import pytest
import torch

import microtorch as mt
from tests.saved_compare import assert_saves_as_torch, observe


def _a(T):
    return T.tensor(np.arange(24.0).reshape(2, 3, 4) / 7, dtype=T.float64, requires_grad=True)


def _i(T, values=(0, 2), dtype=None):
    return T.tensor(list(values), dtype=dtype or T.int64)


def _m(T):
    return T.tensor([[True, False, True], [False, True, True]])


INDEXING = {
    "one_dim": lambda T: _a(T)[:, _i(T)],
    "first_dim_list": lambda T: _a(T)[[0, 1]],
    "ellipsis": lambda T: _a(T)[..., _i(T)],
    "ellipsis_then_slice": lambda T: _a(T)[..., _i(T), :],
    "after_select": lambda T: _a(T)[0, _i(T)],
    "after_unsqueeze": lambda T: _a(T)[None, :, _i(T)],
    "two_apart": lambda T: _a(T)[_i(T, (1,)), :, _i(T)],
    "broadcast_pair": lambda T: _a(T)[:, _i(T, (0, 2)).reshape(2, 1), _i(T, (1, 3))],
    "mask": lambda T: _a(T)[_m(T)],
    "mask_one_dim": lambda T: _a(T)[:, T.tensor([True, False, True])],
    "int32": lambda T: _a(T)[_i(T, (1, 0), T.int32)],
    "negative": lambda T: _a(T)[:, _i(T, (-1, 0))],
    "empty": lambda T: _a(T)[:, _i(T, ())],
    "index_select": lambda T: _a(T).index_select(1, _i(T)),
    "index_select_int32": lambda T: _a(T).index_select(2, _i(T, (3, 3, 0), T.int32)),
    "index_select_0d": lambda T: T.tensor(1.5, dtype=T.float64, requires_grad=True).index_select(0, T.tensor(0)),
    "index_select_0d_1d": lambda T: T.tensor(1.5, dtype=T.float64, requires_grad=True).index_select(0, _i(T, (0,))),
    "gather": lambda T: _a(T).gather(2, T.tensor([[[0, 3], [1, 1], [2, 0]], [[3, 3], [0, 1], [2, 2]]])),
    "gather_smaller": lambda T: _a(T).gather(1, T.tensor([[[2]], [[0]]])),
    "take": lambda T: _a(T).take(_i(T, (5, -1, 0))),
    "masked_select": lambda T: _a(T)[:, :, 0].masked_select(_m(T)),
    "masked_select_broadcast": lambda T: _a(T).masked_select(T.tensor([True, False, False, True])),
    "masked_fill": lambda T: _a(T)[:, :, 1].masked_fill(_m(T), 0.5),
}

NUMBERS = {
    "mul": lambda T: _a(T) * 2,
    "rmul": lambda T: 2.5 * _a(T),
    "div": lambda T: _a(T) / 4,
    "mul_fn": lambda T: T.mul(_a(T), 3),
    "mul_method": lambda T: _a(T).mul(3.0),
    "true_divide": lambda T: T.true_divide(_a(T), 2),
    "mul_inplace": lambda T: _a(T).clone().mul_(2),
    "div_inplace": lambda T: _a(T).clone().div_(2),
    "mul_0d": lambda T: T.tensor(1.5, dtype=T.float64, requires_grad=True) * 2,
    "mul_float32": lambda T: _a(T).float() * 0.5,
}


@pytest.mark.parametrize("name", sorted(INDEXING))
def test_indexing_nodes_save_their_index_as_torch(name):
    assert_saves_as_torch(INDEXING[name])


@pytest.mark.parametrize("name", sorted(NUMBERS))
def test_a_number_saved_as_a_tensor_is_freed_as_torch(name):
    assert_saves_as_torch(NUMBERS[name])


def test_the_comparison_can_fail():
    """A node that saves nothing (add) against one that saves (mul): observe tells them apart."""
    add = observe(mt, lambda T: _a(T) + 2)
    mul = observe(mt, lambda T: _a(T) * 2)
    assert add[3] == "ok" and mul[3] == "raises"
    assert observe(torch, lambda T: _a(T) * 2)[1:] != add[1:]


def test_a_number_product_with_retain_graph_runs_twice():
    for T in (torch, mt):
        a = _a(T)
        y = (a * 2).sum()
        y.backward(retain_graph=True)
        y.backward()
        np.testing.assert_array_equal(np.asarray(a.grad.detach()), np.full((2, 3, 4), 4.0))


CHANGED = {
    "getitem": lambda T, a, i, m: a[:, i],
    "mask": lambda T, a, i, m: a[m],
    "index_select": lambda T, a, i, m: a.index_select(1, i),
    "gather": lambda T, a, i, m: a.gather(2, i.expand(2, 3, 2)),
    "take": lambda T, a, i, m: a.take(i),
    "masked_select": lambda T, a, i, m: a[:, :, 0].masked_select(m),
    "masked_fill": lambda T, a, i, m: a[:, :, 0].masked_fill(m, 1.0),
}


@pytest.mark.parametrize("name", sorted(CHANGED))
def test_an_index_changed_in_place_fails_backward_as_torch(name):
    """torch saves the index tensor itself: changed in place after the op, backward raises (before, microtorch
    used the changed values, or numpy's ValueError reached the user when a mask changed its count)."""
    messages = []
    for T in (torch, mt):
        a, i, m = _a(T), _i(T), _m(T)
        y = CHANGED[name](T, a, i, m)
        i[0], m[0, 0] = 1, False
        with pytest.raises(RuntimeError, match="modified by an inplace operation") as e:
            y.sum().backward()
        messages.append(str(e.value).split("[")[1].split(" ", 1)[1].split("]")[0])  # the shape, e.g. "[2]"
    assert messages[0] == messages[1]


def test_an_index_unchanged_gives_torchs_gradient():
    grads = []
    for T in (torch, mt):
        a, i = _a(T), _i(T, (2, 0, 2))
        (a[:, i] * T.arange(3.0, dtype=T.float64).reshape(1, 3, 1)).sum().backward()
        grads.append(np.asarray(a.grad.detach()))
    np.testing.assert_array_equal(grads[0], grads[1])


def test_gathers_second_derivative_keeps_its_index():
    """gather's backward (ScatterAddBackward0 under create_graph) saves the index as torch's does."""
    nodes = []
    for T in (torch, mt):
        a = _a(T)
        g, = T.autograd.grad((a.gather(2, T.tensor([[[1]] * 3] * 2)) ** 2).sum(), a, create_graph=True)
        nodes.append((g.grad_fn.name(), tuple(g.grad_fn._saved_index.shape), g.grad_fn._saved_dim))
    assert nodes[0] == nodes[1]
