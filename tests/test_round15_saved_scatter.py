"""What the nodes of the ops that write at an index save, beside torch 2.13: index_put (and its in-place form),
put, masked_scatter, index_copy, index_fill, scatter, scatter_add, scatter_reduce and index_add keep the index,
indices or mask tensor as the user gave it (seen by pack hooks, `_saved_index` / `_saved_indices` / `_saved_mask`,
freed by backward so a second one raises, checked for in-place changes), the source where torch keeps it (only
when it needs a gradient), and the values torch shows beside them (`_saved_dim` as given, `_saved_accumulate`,
`_saved_alpha`, `_saved_source_dim`, `_saved_source_sym_sizes`)."""
import warnings

import numpy as np
import pytest
import torch

import microtorch as mt
from tests.saved_compare import assert_saves_as_torch, leaves_of, observe, saved_names


def _a(T, grad=True):
    return T.tensor([[0.5, 1.5, -2.0], [2.5, -1.0, 0.25]], dtype=T.float64, requires_grad=grad)


def _b(T, grad=True):
    return T.tensor([[1.5, -0.5, 3.0], [0.1, 0.2, 0.3]], dtype=T.float64, requires_grad=grad)


def _v(T, grad=True):
    return T.tensor([0.3, -1.2, 2.0], dtype=T.float64, requires_grad=grad)


def _s(T, value=2.0, grad=True):
    return T.tensor(value, dtype=T.float64, requires_grad=grad)


def _i(T, values=(0, 2), dtype=None):
    return T.tensor(list(values), dtype=dtype or T.int64)


def _j(T, dtype=None):
    return T.tensor([[0, 1], [2, 0]], dtype=dtype or T.int64)


def _m(T):
    return T.tensor([[True, False, True], [False, True, True]])


INDEX_PUT = {
    "index_put": lambda T: _a(T).index_put((_i(T, (1, 0)),), _v(T)),
    "accumulate": lambda T: _a(T).index_put((_i(T, (1, 1)),), _v(T), accumulate=True),
    "in_place": lambda T: _a(T).clone().index_put_((_i(T, (1, 0)),), _v(T)),
    "in_place_accumulate": lambda T: _a(T).clone().index_put_((_i(T, (0, 0)),), _v(T), accumulate=True),
    "two_indices": lambda T: _a(T).index_put((_i(T, (1, 0)), _i(T)), _s(T)),
    "two_indices_accumulate": lambda T: _a(T).index_put((_i(T, (1, 1)), _i(T, (2, 2))), _s(T), accumulate=True),
    "mask": lambda T: _a(T).index_put((_m(T),), _s(T)),
    "mask_accumulate": lambda T: _a(T).index_put((_m(T),), T.arange(4.0, dtype=T.float64), accumulate=True),
    "negative": lambda T: _a(T).index_put((_i(T, (-1, 0)),), _b(T)[0]),
    "int32": lambda T: _a(T).index_put((_i(T, (1, 0), T.int32),), _v(T)),
    "zero_dim_index": lambda T: _a(T).index_put((T.tensor(-1),), _v(T)),
    "empty_index": lambda T: _a(T).index_put((_i(T, ()),), _v(T)),
    "values_need_no_grad": lambda T: _a(T).index_put((_i(T, (1, 0)),), _v(T, False)),
    "values_need_no_grad_accumulate": lambda T: _a(T).index_put((_i(T, (1,)),), _v(T, False), accumulate=True),
    "self_needs_no_grad": lambda T: _a(T, False).index_put((_i(T, (1, 0)),), _v(T)),
}

PUT = {
    "put": lambda T: _a(T).put(_i(T), _b(T)[0, :2]),
    "accumulate": lambda T: _a(T).put(_i(T, (1, 1)), _b(T)[0, :2], accumulate=True),
    "in_place": lambda T: _a(T).clone().put_(_i(T), _b(T)[0, :2]),
    "in_place_accumulate": lambda T: _a(T).clone().put_(_i(T), _b(T)[0, :2], accumulate=True),
    "source_needs_no_grad": lambda T: _a(T).put(_i(T), _b(T, False)[0, :2]),
    "source_needs_no_grad_accumulate": lambda T: _a(T).put(_i(T), _b(T, False)[0, :2], accumulate=True),
    "self_needs_no_grad": lambda T: _a(T, False).put(_i(T), _b(T)[0, :2]),
    "negative_2d_index": lambda T: _a(T).put(T.tensor([[-1, 0]]), _b(T)[0, :2]),
    "empty": lambda T: _a(T).put(_i(T, ()), _b(T)[0, :0]),
}

MASKED_SCATTER = {
    "masked_scatter": lambda T: _a(T).masked_scatter(_m(T), _b(T)),
    "broadcast_mask": lambda T: _a(T).masked_scatter(T.tensor([True, False, True]), _b(T)),
    "source_needs_no_grad": lambda T: _a(T).masked_scatter(_m(T), _b(T, False)),
    "self_needs_no_grad": lambda T: _a(T, False).masked_scatter(_m(T), _b(T)),
    "longer_source": lambda T: _a(T).masked_scatter(_m(T), T.arange(9.0, dtype=T.float64, requires_grad=True)),
    "zero_dim": lambda T: _s(T).masked_scatter(T.tensor(True), T.tensor([3.0], dtype=T.float64, requires_grad=True)),
    "in_place": lambda T: _a(T).clone().masked_scatter_(_m(T), _b(T)),
}

INDEX_COPY = {
    "index_copy": lambda T: _a(T).index_copy(1, _i(T), _b(T)[:, :2]),
    "negative_dim": lambda T: _a(T).index_copy(-1, _i(T), _b(T)[:, :2]),
    "source_needs_no_grad": lambda T: _a(T).index_copy(1, _i(T), _b(T, False)[:, :2]),
    "self_needs_no_grad": lambda T: _a(T, False).index_copy(0, _i(T, (1,)), _b(T)[:1]),
    "empty": lambda T: _a(T).index_copy(0, _i(T, ()), _b(T)[:0]),
    "in_place": lambda T: _a(T).clone().index_copy_(-2, _i(T, (1,)), _b(T)[:1]),
}

INDEX_FILL = {
    "number": lambda T: _a(T).index_fill(1, _i(T), 2.0),
    "int_number": lambda T: _a(T).index_fill(0, _i(T, (1,)), 3),
    "negative_dim": lambda T: _a(T).index_fill(-1, _i(T, (-1, 0)), 2.0),
    "zero_dim_index": lambda T: _a(T).index_fill(-1, T.tensor(1), 2.0),
    "tensor": lambda T: _a(T).index_fill(1, _i(T), _s(T)),
    "tensor_repeated_index": lambda T: _a(T).index_fill(1, _i(T, (2, 2)), _s(T)),
    "tensor_needs_no_grad": lambda T: _a(T).index_fill(1, _i(T), _s(T, grad=False)),
    "tensor_of_another_dtype": lambda T: _a(T).index_fill(1, _i(T, (0, 0)), T.tensor(-1.5, requires_grad=True)),
    "only_tensor_needs_grad": lambda T: _a(T, False).index_fill(-2, _i(T, (1,)), _s(T)),
    "in_place": lambda T: _a(T).clone().index_fill_(1, _i(T), -1.5),
    "in_place_tensor": lambda T: _a(T).clone().index_fill_(1, _i(T), _s(T)),
}

SCATTER = {
    "scatter": lambda T: _a(T).scatter(1, _j(T), _b(T)[:, :2]),
    "negative_dim": lambda T: _a(T).scatter(-1, _j(T), _b(T)[:, :2]),
    "source_needs_no_grad": lambda T: _a(T).scatter(1, _j(T), _b(T, False)[:, :2]),
    "self_needs_no_grad": lambda T: _a(T, False).scatter(1, _j(T), _b(T)[:, :2]),
    "int32": lambda T: _a(T).scatter(1, _j(T, T.int32), _b(T)[:, :2]),
    "zero_dim_index": lambda T: _v(T).scatter(0, T.tensor(1), _s(T)),
    "value": lambda T: _a(T).scatter(1, _j(T), 1.0),
    "value_negative_dim": lambda T: _v(T).scatter(-1, T.tensor(1), 2.0),
    "in_place": lambda T: _a(T).clone().scatter_(1, _j(T), _b(T)[:, :2]),
    "in_place_value": lambda T: _a(T).clone().scatter_(0, _j(T)[:1], 0.5),
    "scatter_add": lambda T: _a(T).scatter_add(1, _j(T), _b(T)[:, :2]),
    "scatter_add_negative_dim": lambda T: _a(T).scatter_add(-1, _j(T), _b(T)[:, :2]),
    "scatter_add_source_needs_no_grad": lambda T: _a(T).scatter_add(1, _j(T), _b(T, False)[:, :2]),
    "scatter_add_zero_dim_index": lambda T: _v(T).scatter_add(0, T.tensor(1), _s(T)),
    "scatter_add_in_place": lambda T: _a(T).clone().scatter_add_(0, _j(T) % 2, _b(T)[:, :2]),
    "scatter_add_int32": lambda T: _a(T).scatter_add(1, _j(T, T.int32), _b(T)[:, :2]),
}

SCATTER_REDUCE = {
    **{reduce: lambda T, r=reduce: _a(T).scatter_reduce(1, _j(T), _b(T)[:, :2], r)
       for reduce in ("sum", "prod", "mean", "amax", "amin")},
    "amax_without_self": lambda T: _a(T).scatter_reduce(1, _j(T), _b(T)[:, :2], "amax", include_self=False),
    "negative_dim": lambda T: _a(T).scatter_reduce(-1, _j(T), _b(T)[:, :2], "mean"),
    "source_needs_no_grad": lambda T: _a(T).scatter_reduce(1, _j(T), _b(T, False)[:, :2], "sum"),
    "self_needs_no_grad": lambda T: _a(T, False).scatter_reduce(1, _j(T), _b(T)[:, :2], "prod"),
    "zero_dim_index": lambda T: _v(T).scatter_reduce(0, T.tensor(1), _s(T), "sum"),
    "in_place": lambda T: _a(T).clone().scatter_reduce_(0, _j(T) % 2, _b(T)[:, :2], "amin"),
    "int32": lambda T: _a(T).scatter_reduce(1, _j(T, T.int32), _b(T)[:, :2], "prod"),
    "index_reduce": lambda T: _a(T).index_reduce(-1, _i(T), _b(T)[:, :2], "prod"),
}

INDEX_ADD = {
    "index_add": lambda T: _a(T).index_add(1, _i(T), _b(T)[:, :2]),
    "alpha": lambda T: _a(T).index_add(1, _i(T), _b(T)[:, :2], alpha=2.0),
    "int_alpha": lambda T: _a(T).index_add(0, _i(T, (1,)), _b(T)[:1], alpha=3),
    "source_needs_no_grad": lambda T: _a(T).index_add(1, _i(T), _b(T, False)[:, :2]),
    "self_needs_no_grad": lambda T: _a(T, False).index_add(1, _i(T), _b(T)[:, :2]),
    "int32": lambda T: _a(T).index_add(1, _i(T, (2, 2), T.int32), _b(T)[:, :2]),
    "empty": lambda T: _a(T).index_add(0, _i(T, ()), T.zeros(0, 3, dtype=T.float64, requires_grad=True)),
    "in_place_negative_dim": lambda T: _a(T).clone().index_add_(-1, _i(T), _b(T)[:, :2]),
}

CASES = {f"{op}-{name}": f for op, table in (("index_put", INDEX_PUT), ("put", PUT), ("masked_scatter", MASKED_SCATTER),
                                             ("index_copy", INDEX_COPY), ("index_fill", INDEX_FILL),
                                             ("scatter", SCATTER), ("scatter_reduce", SCATTER_REDUCE),
                                             ("index_add", INDEX_ADD)) for name, f in table.items()}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_node_saves_its_index_as_torch(name):
    assert_saves_as_torch(CASES[name])


def _every_saved_name(f):
    """all of the `_saved_` attributes torch's node shows, those saved_compare leaves out too"""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        node = f(torch).grad_fn
    return saved_names(node, skip=("_sym_strides",))


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_values_beside_the_index_are_torchs(name):
    """_saved_dim (as given: a negative dim shows as an unsigned 64-bit int), _saved_accumulate, _saved_alpha,
    _saved_source_dim and _saved_source_sym_sizes, which saved_compare does not compare."""
    names = _every_saved_name(CASES[name])
    assert observe(mt, CASES[name], names) == observe(torch, CASES[name], names)


def test_the_comparison_can_fail():
    """index_copy's node with and without the source saved; a wrong dim; a node that saves nothing (add): the
    comparisons tell them apart."""
    with pytest.raises(AssertionError):
        assert_saves_as_torch(lambda T: _a(T).index_copy(1, _i(T), _b(T, T is torch)[:, :2]))
    f = INDEX_COPY["negative_dim"]
    names = _every_saved_name(f)
    assert observe(mt, f, names) != observe(torch, lambda T: _a(T).index_copy(1, _i(T), _b(T)[:, :2]), names)
    assert observe(mt, lambda T: _a(T) + 1)[3] == "ok" and observe(mt, SCATTER["value"])[3] == "raises"


CHANGED = {
    "index_put": lambda T, a, i, m: a.index_put((i,), T.tensor(1.0, dtype=T.float64)),
    "index_put_mask": lambda T, a, i, m: a.index_put((m,), T.tensor(1.0, dtype=T.float64), accumulate=True),
    "put": lambda T, a, i, m: a.put(i, T.ones(2, dtype=T.float64)),
    "masked_scatter": lambda T, a, i, m: a.masked_scatter(m, a.detach()),
    "index_copy": lambda T, a, i, m: a.index_copy(1, i, a.detach()[:, :2]),
    "index_fill": lambda T, a, i, m: a.index_fill(1, i, 0.5),
    "scatter": lambda T, a, i, m: a.scatter(1, i.expand(2, 2), 0.5),
    "scatter_add": lambda T, a, i, m: a.detach().scatter_add(1, i.expand(2, 2), a[:, :2]),
    "scatter_reduce": lambda T, a, i, m: a.scatter_reduce(1, i.expand(2, 2), a[:, :2], "amax"),
    "index_add": lambda T, a, i, m: a.detach().index_add(1, i, a[:, :2]),
}


@pytest.mark.parametrize("name", sorted(CHANGED))
def test_an_index_changed_in_place_fails_backward_as_torch(name):
    """The node keeps the user's index tensor itself: changed in place after the op, backward raises (before,
    microtorch used the index as it was)."""
    messages = []
    for T in (torch, mt):
        a, i, m = _a(T), _i(T, (0, 1)), _m(T)
        y = CHANGED[name](T, a, i, m)
        i[0], m[0, 0] = 1, False
        with pytest.raises(RuntimeError, match="modified by an inplace operation") as e:
            y.sum().backward()
        messages.append(str(e.value).split("[")[1].split(" ", 1)[1].split("]")[0])  # the shape, e.g. "[2]"
    assert messages[0] == messages[1]


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradients_and_second_derivatives_are_torchs(name):
    """The values, the first derivatives, and those of (grad ** 2).sum() under create_graph, as torch's."""
    results = []
    for T in (torch, mt):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = CASES[name](T)
            leaves = [t for t in leaves_of(y.grad_fn) if t.requires_grad]
            w = T.arange(y.numel(), dtype=y.dtype).reshape(y.shape).cos()
            grads = T.autograd.grad((y * w).sum(), leaves, create_graph=True, allow_unused=True)
            used = [g for g in grads if g is not None and g.requires_grad]
            second = T.autograd.grad(sum((g ** 2).sum() for g in used), leaves, allow_unused=True) if used else ()
        results.append([np.asarray(t.detach()).tolist() if t is not None else None
                        for t in (y, *grads, *second)])
    assert results[0] == results[1]


def test_retain_graph_lets_backward_run_twice():
    for f in (INDEX_PUT["two_indices"], PUT["put"], MASKED_SCATTER["masked_scatter"], SCATTER["value"],
              INDEX_ADD["alpha"]):
        grads = []
        for T in (torch, mt):
            y = f(T)
            y.sum().backward(retain_graph=True)
            y.sum().backward()
            grads.append([np.asarray(t.detach()).tolist() for t in leaves_of(y.grad_fn)])
        assert grads[0] == grads[1]


WRITES = {
    "index_put": lambda T, x: x.index_put((_i(T, (1, 0)),), x[0] * 2),
    "index_put_accumulate": lambda T, x: x.index_put((_i(T, (1, 1)),), x[0, 1], accumulate=True),
    "put": lambda T, x: x.put(_i(T), x[1, :2]),
    "put_accumulate": lambda T, x: x.put(_i(T, (4, 4)), x[1, :2], accumulate=True),
    "masked_scatter": lambda T, x: x.masked_scatter(_m(T), x * 2),
    "index_copy": lambda T, x: x.index_copy(1, _i(T), x[:, :2]),
    "index_fill": lambda T, x: x.index_fill(-1, _i(T), 1.0),
    "index_fill_tensor": lambda T, x: x.index_fill(1, _i(T, (2, 2)), x[0, 0] * 3),
    "scatter": lambda T, x: x.scatter(1, _j(T), x[:, 1:] * 3),
    "scatter_value": lambda T, x: x.scatter(1, _j(T), 0.5),
    "scatter_add": lambda T, x: x.scatter_add(1, _j(T), x[:, :2]),
    "scatter_reduce": lambda T, x: x.scatter_reduce(1, _j(T), x[:, :2].exp(), "mean"),
    "index_add": lambda T, x: x.index_add(1, _i(T), x[:, :2], alpha=-2.0),
}


@pytest.mark.parametrize("name", sorted(WRITES))
def test_tangents_are_torchs(name):
    """Forward-mode AD through the ops that now save their index: the tangents torch's jvp gives."""
    out = []
    for T in (torch, mt):
        primal, tangent = _a(T, False), T.arange(6.0, dtype=T.float64).reshape(2, 3).sin()
        out.append(np.asarray(T.func.jvp(lambda x: WRITES[name](T, x), (primal,), (tangent,))[1]).tolist())
    assert out[0] == out[1]


@pytest.mark.parametrize("name", sorted(WRITES))
def test_vmap_and_its_gradients_are_torchs(name):
    """vmap through them (torch's batching rules, or the per-example loop), and the per-example gradients."""
    out = []
    for T in (torch, mt):
        xs = T.arange(12.0, dtype=T.float64).reshape(2, 2, 3).cos()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            values = T.func.vmap(lambda x: WRITES[name](T, x))(xs)
            grads = T.func.vmap(T.func.grad(lambda x: (WRITES[name](T, x) ** 2).sum()))(xs)
        out.append((np.asarray(values).tolist(), np.asarray(grads).tolist()))
    assert out[0] == out[1]


def _set(key, value=None):
    """y = a.clone(); y[key] = value: index_put_ through a non-leaf"""
    def f(T):
        y = _a(T).clone()
        y[key(T)] = _s(T, 1.5) if value is None else value(T)
        return y
    return f


SETITEM = {
    "tensor": _set(lambda T: _i(T, (1, 0))),
    "tensor_values": _set(lambda T: _i(T, (1, 0)), _v),
    "after_a_slice": _set(lambda T: (slice(None), _i(T))),
    "mask": _set(lambda T: _m(T)),
    "list": _set(lambda T: [1, 0]),
    "two_tensors": _set(lambda T: (_i(T, (1, 0)), _i(T))),
}


@pytest.mark.parametrize("name", sorted(SETITEM))
def test_setitem_records_torchs_node_and_gradients(name):
    """x[idx] = v on a non-leaf: torch's IndexPutBackward0, with torch's gradients (what it saves: below)."""
    results = []
    for T in (torch, mt):
        y = SETITEM[name](T)
        leaves = leaves_of(y.grad_fn)
        grads = T.autograd.grad((y * T.arange(6.0, dtype=T.float64).reshape(2, 3)).sum(), leaves)
        results.append((y.grad_fn.name(), [np.asarray(g).tolist() for g in grads]))
    assert results[0] == results[1]


@pytest.mark.parametrize("name", sorted(SETITEM))
def test_setitem_saves_its_indices_as_torch(name):
    assert_saves_as_torch(SETITEM[name])


def test_index_fill_with_a_tensor_links_the_value_as_torch():
    """The 0-d value is the node's second input itself (before, a where and an expand stood between them)."""
    names = []
    for T in (torch, mt):
        y = INDEX_FILL["tensor_repeated_index"](T)
        names.append([type(n).__name__ for n, _ in y.grad_fn.next_functions])
    assert names[0] == names[1] == ["AccumulateGrad", "AccumulateGrad"]


def test_pack_hooks_that_store_copies_give_the_same_gradients():
    """Saved tensors packed into copies (as an offloading hook does) and unpacked again: torch's gradients."""
    grads = []
    for T in (torch, mt):
        with T.autograd.graph.saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
            ys = [f(T) for f in (INDEX_PUT["two_indices"], PUT["put"], SCATTER["scatter"], INDEX_ADD["alpha"],
                                 INDEX_COPY["index_copy"], MASKED_SCATTER["masked_scatter"])]
        grads.append([[np.asarray(g).tolist() for g in T.autograd.grad(y.sum(), leaves_of(y.grad_fn))] for y in ys])
    assert grads[0] == grads[1]
