"""Follow-ups of the round on what nodes save, beside torch 2.13:

* `x[idx] = v` (ops/inplace.py's IndexPut) saves the key's index tensors as torch's IndexPutBackward0 does: the
  user's own (pack hooks see them, a second backward raises, an in-place change of the index after the write makes
  backward raise), `_saved_indices` laid out as torch's list (None for a dim without a tensor index, the ellipsis
  spelled out, nothing after the last index) and `_saved_accumulate`; a key whose basic part torch takes as a view
  first (an integer, None, a slice not spanning its dim) gives CopySlices, whose pack hooks see the same tensors,
  and a slice spanning its dim (`0:`, `:5` of 3) is no view, as in torch;
* under vmap, `x[j] = v` with a batched index writes each example's own rows (it wrote nothing before);
* `a.max(dim)` / `a.min(dim)` show `_saved_dim` as given (-1: 2**64 - 1).
"""
import warnings

import numpy as np
import pytest
import torch

import microtorch as mt
from tests.saved_compare import assert_saves_as_torch, leaves_of, observe


def _a(T, shape=(2, 3, 4)):
    data = np.arange(float(np.prod(shape))).reshape(shape) / 7 - 1
    return T.tensor(data, dtype=T.float64, requires_grad=True)


def _i(T, *values, dtype=None):
    return T.tensor(list(values), dtype=dtype or T.int64)


def _s(T):
    return T.tensor(1.5, dtype=T.float64, requires_grad=True)


def _set(key, value=_s, shape=(2, 3, 4)):
    """y = a.clone(); y[key] = value"""
    def f(T):
        y = _a(T, shape).clone()
        y[key(T)] = value(T)
        return y
    return f


SETITEM = {
    "index": _set(lambda T: _i(T, 1, 0)),
    "index_then_slice": _set(lambda T: (_i(T, 1, 0), slice(None))),
    "slice_index_slice": _set(lambda T: (slice(None), _i(T, 0, 2), slice(None))),
    "ellipsis_index": _set(lambda T: (Ellipsis, _i(T, 0, 3))),
    "index_ellipsis": _set(lambda T: (_i(T, 1, 0), Ellipsis)),
    "index_slice_index": _set(lambda T: (_i(T, 0, 1), slice(None), _i(T, 0, 2))),
    "slice_as_written_whole": _set(lambda T: (slice(0, None), _i(T, 0, 2))),
    "slice_past_the_end": _set(lambda T: (slice(None, 9), _i(T, 0, 2))),
    "mask_2d": _set(lambda T: T.tensor([[True, False, True], [False, True, True]])),
    "slice_mask": _set(lambda T: (slice(None), T.tensor([True, False, True]))),
    "ellipsis_mask": _set(lambda T: (Ellipsis, T.tensor([True, False, True, False]))),
    "int32": _set(lambda T: _i(T, 1, 0, dtype=T.int32)),
    "negative": _set(lambda T: _i(T, -1, 0)),
    "repeated": _set(lambda T: _i(T, 1, 1)),
    "two_d_index": _set(lambda T: T.tensor([[0, 1], [1, 0]])),
    "broadcast_pair": _set(lambda T: (T.tensor([[0], [1]]), _i(T, 0, 2))),
    "same_tensor_twice": _set(lambda T: (lambda i: (i, i))(_i(T, 1, 0))),
    "list": _set(lambda T: [1, 0]),
    "nested_list": _set(lambda T: ([[1, 0]],)),
    "range": _set(lambda T: range(2)),
    "numpy_array": _set(lambda T: np.array([1, 0])),
    "values_tensor": _set(lambda T: (slice(None), _i(T, 0, 2)),
                          lambda T: T.tensor([[0.5], [1.0]], dtype=T.float64, requires_grad=True)),
    "values_need_no_grad": _set(lambda T: _i(T, 1, 0), lambda T: T.tensor(2.0, dtype=T.float64)),
    "empty_index": _set(lambda T: _i(T)),
    # torch takes a view first: CopySlices (its pack hooks still see the index tensors)
    "int_index": _set(lambda T: (0, _i(T, 0, 2))),
    "index_int": _set(lambda T: (_i(T, 0, 1), 0)),
    "slice_from_one_index": _set(lambda T: (slice(1, None), _i(T, 0, 2))),
    "index_none_index": _set(lambda T: (_i(T, 0, 1), None, _i(T, 0, 2))),
    "stepped_slice_index": _set(lambda T: (slice(None, None, 2), _i(T, 2))),
}


@pytest.mark.parametrize("name", list(SETITEM))
def test_setitem_saves_as_torch(name):
    assert_saves_as_torch(SETITEM[name])


@pytest.mark.parametrize("name", list(SETITEM))
def test_setitem_node_accumulate_and_gradients_as_torch(name):
    out = []
    for T in (torch, mt):
        y = SETITEM[name](T)
        node = y.grad_fn
        accumulate = node._saved_accumulate if node.name() == "IndexPutBackward0" else None
        weights = T.arange(float(y.numel()), dtype=T.float64).reshape(y.shape)
        grads = T.autograd.grad((y * weights).sum(), leaves_of(node))
        out.append((node.name(), accumulate, [np.asarray(g).tolist() for g in grads]))
    assert out[0] == out[1]


def _changed_index(T, write):
    """backward after the index (or mask) tensor given to x[idx] = v changed in place"""
    a = _a(T, (2, 3))
    i, m = _i(T, 0, 1), a.detach() > 0
    y = a.clone()
    index = write(i, m)
    y[index] = _s(T)
    if index is m:
        m.logical_not_()
    else:
        i.add_(0)
    try:
        y.sum().backward()
        return "ok"
    except RuntimeError as e:
        return str(e).split(": [")[0], str(e).split("] ")[1].split(". ")[0]


@pytest.mark.parametrize("write", [lambda i, m: i, lambda i, m: (slice(None), i), lambda i, m: (0, i),
                                   lambda i, m: m, lambda i, m: (i, Ellipsis)],
                         ids=["index", "slice_index", "int_index", "mask", "index_ellipsis"])
def test_an_index_changed_after_the_write_makes_backward_raise_as_torch(write):
    assert _changed_index(mt, write) == _changed_index(torch, write)


def test_a_write_without_grad_saves_nothing_and_a_copy_of_the_index_is_unaffected():
    """Under no_grad nothing is recorded; with grad, a list index is converted (no user tensor to watch)."""
    for T in (torch, mt):
        y = _a(T).detach().clone()
        with T.no_grad():
            y[_i(T, 1)] = 2.0
        assert y.grad_fn is None
    assert observe(mt, SETITEM["list"]) == observe(torch, SETITEM["list"])


@pytest.mark.parametrize("name", ["index", "slice_index_slice", "mask_2d", "int_index", "values_tensor"])
def test_double_backward_and_forward_mode_through_setitem_as_torch(name):
    out = []
    for T in (torch, mt):
        a = _a(T)

        def f(x):
            y = x * x
            key = {"index": _i(T, 1, 0), "slice_index_slice": (slice(None), _i(T, 0, 2)),
                   "mask_2d": a.detach()[..., 0] > 0, "int_index": (0, _i(T, 0, 2)),
                   "values_tensor": (slice(None), _i(T, 0, 2))}[name]
            y[key] = x[0, 0, 0] * 3
            return y
        (g,) = T.autograd.grad((f(a) ** 2).sum(), a, create_graph=True)
        (gg,) = T.autograd.grad((g ** 2).sum(), a)
        tangent = T.ones_like(a.detach())
        _, jvp = T.func.jvp(f, (a.detach(),), (tangent,))
        out.append([np.round(t.detach().numpy(), 10).tolist() for t in (g, gg, jvp)])
    assert out[0] == out[1]


def test_pack_hooks_that_store_copies_give_the_same_gradients():
    grads = []
    for T in (torch, mt):
        with T.autograd.graph.saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
            ys = [SETITEM[n](T) for n in ("index_slice_index", "mask_2d", "int_index", "values_tensor")]
        grads.append([[np.asarray(g).tolist() for g in T.autograd.grad(y.sum(), leaves_of(y.grad_fn))] for y in ys])
    assert grads[0] == grads[1]


@pytest.mark.parametrize("key", [lambda T: (True,), lambda T: T.tensor(True), lambda T: (_i(T, 1, 0), True)],
                         ids=["true", "zero_dim_true", "index_true"])
def test_a_bool_in_the_key_records_copyslices_as_torch_but_packs_no_long_index(key):
    """Not matched: torch writes a bool of the key as an unsqueeze (a view: CopySlices, as here) and a long index
    [0] (or [] for False), which its pack hooks see; here numpy reads the bool itself (a Python one is saved as
    nothing, a 0-d tensor as itself). Pinned, so that a change shows."""
    seen = [observe(T, _set(key)) for T in (torch, mt)]
    assert seen[0][0] == seen[1][0] == "torch::autograd::CopySlices" and seen[0][2:] == seen[1][2:]
    assert ("tensor", (1,), "int64", [0]) in seen[0][1] and ("tensor", (1,), "int64", [0]) not in seen[1][1]


def test_a_wrong_expectation_fails():
    """The comparison can fail: a key that differs between the two libraries is caught."""
    def differs(T):
        y = _a(T).clone()
        y[(slice(None), _i(T, 0, 2)) if T is torch else _i(T, 0, 1)] = _s(T)
        return y
    with pytest.raises(AssertionError):
        assert_saves_as_torch(differs)
    with pytest.raises(AssertionError):
        assert _changed_index(mt, lambda i, m: i) == "ok"


# ---- vmap: a batched index ----------------------------------------------------------------------------
_X = np.random.default_rng(0).standard_normal((3, 4, 5, 6))
_J = [[0, 1], [3, 2], [1, 1]]
VMAP = {  # key(T, j), the value's shape per example, whether the value is batched
    "index": (lambda T, j: (j,), (2, 5, 1), True),
    "index_value_not_batched": (lambda T, j: (j,), (5, 6), False),
    "slice_index": (lambda T, j: (slice(None), j), (2, 1), True),
    "slice_index_full_value": (lambda T, j: (slice(None), j), (4, 1, 1), False),
    "slice_index_slice": (lambda T, j: (slice(None), j, slice(None)), (4, 2, 6), True),
    "slice_int_index": (lambda T, j: (slice(None), 0, j), (4, 1), True),
    "separated": (lambda T, j: (j, slice(None), T.tensor([[0], [5]])), (2, 2, 5), True),
    "slice_separated": (lambda T, j: (slice(None), j, T.tensor([2, 3])), (4, 2), True),
    "ellipsis": (lambda T, j: (Ellipsis, j.clamp(max=2)), (4, 5, 2), False),
    "int_index": (lambda T, j: (0, j), (2, 1), True),
    "index_pair": (lambda T, j: (j, T.tensor([0, 4])), (1, 6), True),
    "two_d": (lambda T, j: (j.reshape(2, 1), T.tensor([1, 2, 3])), (6,), True),
    "negative": (lambda T, j: (-j - 1,), (6,), True),
}


def _vmapped(T, name, vmap):
    key, shape, batched = VMAP[name]
    value = np.random.default_rng(1).standard_normal(((3,) if batched else ()) + shape)
    xs, vs, js = T.tensor(_X, requires_grad=True), T.tensor(value, requires_grad=True), T.tensor(_J)

    def f(x, j, v):
        y = x * 1
        y[key(T, j)] = v
        return y
    if vmap:
        out = T.func.vmap(f, in_dims=(0, 0, 0 if batched else None))(xs, js, vs)
    else:
        out = T.stack([f(xs[b], js[b], vs[b] if batched else vs) for b in range(3)])
    grads = T.autograd.grad((out ** 2).sum(), (xs, vs))
    return [np.round(t.detach().numpy(), 10).tolist() for t in (out, *grads)]


@pytest.mark.parametrize("name", list(VMAP))
def test_vmap_writes_each_examples_own_index_as_torch_per_example(name):
    """Each example's rows, with the gradients, as torch writes them one example at a time; in one op (no
    per-example fallback warning)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _vmapped(mt, name, True) == _vmapped(torch, name, False)


@pytest.mark.parametrize("name", ["index", "index_value_not_batched", "int_index", "index_pair", "two_d",
                                  "negative", "separated"])
def test_vmap_of_a_batched_index_as_torchs_vmap(name):
    assert _vmapped(mt, name, True) == _vmapped(torch, name, True)


def test_vmap_with_an_index_not_batched_is_unchanged():
    def f(T):
        i = _i(T, 0, 2)

        def g(x):
            y = x.clone()
            y[:, i] = 2.0
            return y
        xs = T.tensor(_X, requires_grad=True)
        return T.func.vmap(T.func.grad(lambda x: (g(x) ** 2).sum()))(xs).tolist()
    assert f(mt) == f(torch)


# ---- max / min along a dim: _saved_dim as given --------------------------------------------------------
MAX_MIN = {
    "max 1": lambda T: _a(T, (2, 3)).max(1),
    "max -1": lambda T: _a(T, (2, 3)).max(-1),
    "max -2 keepdim": lambda T: _a(T, (2, 3)).max(-2, keepdim=True),
    "max 0-d -1": lambda T: _a(T, ()).max(-1),
    "max 0-d 0": lambda T: _a(T, ()).max(0),
    "max 3-d -3": lambda T: _a(T).max(-3),
    "min 0": lambda T: _a(T, (2, 3)).min(0),
    "min -1 keepdim": lambda T: _a(T).min(-1, True),
    "min 0-d -1": lambda T: _a(T, ()).min(-1),
    "torch.max -2": lambda T: T.max(_a(T), -2),
    "torch.min dim= -1": lambda T: T.min(_a(T, (2, 3)), dim=-1),
    "numpy int dim": lambda T: _a(T, (2, 3)).max(np.int64(-1)),
    "empty rows": lambda T: _a(T, (0, 3)).min(-1),
}


@pytest.mark.parametrize("case", list(MAX_MIN))
def test_max_min_save_the_dim_as_given(case):
    f = MAX_MIN[case]
    names = ["_saved_dim", "_saved_keepdim", "_saved_self_sym_sizes"]
    assert observe(mt, f, names) == observe(torch, f, names)
    assert_saves_as_torch(f)


def test_max_min_dim_wrong_expectation_fails():
    node = MAX_MIN["max -1"](mt)[0].grad_fn
    assert node._saved_dim == 2 ** 64 - 1
    with pytest.raises(AssertionError):
        assert node._saved_dim == 1


def test_max_min_under_vmap_and_forward_mode_as_torch():
    out = []
    for T in (torch, mt):
        xs = T.tensor(_X[:, 0], requires_grad=True)
        values = T.func.vmap(lambda x: x.max(-1).values + x.min(0, keepdim=True).values.sum())(xs)
        (g,) = T.autograd.grad(values.sum(), xs)
        _, jvp = T.func.jvp(lambda x: x.max(-1).values, (xs.detach(),), (T.ones_like(xs.detach()),))
        out.append([np.round(t.detach().numpy(), 10).tolist() for t in (values, g, jvp)])
    assert out[0] == out[1]
