"""The gradients of the indexing and writing ops as torch's formulas write them, beside torch 2.13.

With create_graph=True a gradient has a graph of its own, which the visualizer draws and a second backward runs.
torch writes the gradient of `x[idx]` as zeros with the gradient added in by `_index_put_impl_`, that of
index_select by `index_add_`, of gather by `scatter_add_`, of take by `put_`, of masked_select by `masked_scatter_`;
the source's gradient of scatter_add is a gather, of index_add and index_copy an index_select, of put a take, of
index_put an index, of masked_scatter an op of its own. microtorch used one internal scatter (IndexPutBackward0 with
a single edge) for all of them; now each records the op torch records, with its edges and saved values.
"""
import numpy as np
import pytest
import torch

import microtorch as mt
from tests.saved_compare import gradient_graphs, graph_of

LIBS = (torch, mt)


def _leaf(L, shape, dtype):
    return (L.arange(1.0, 1 + int(np.prod(shape)), dtype=dtype).reshape(shape) / 3).requires_grad_()


I = lambda L, *v: L.tensor(list(v))  # noqa: E731
M = lambda L: L.tensor([[True, False, True], [False, True, True]])  # noqa: E731

CASES = {  # name: (f(L, *leaves), leaf shapes)
    "index_select": (lambda L, x: x.index_select(1, I(L, 0, 2, 2)), [(2, 3)]),
    "index_select, negative dim": (lambda L, x: x.index_select(-1, I(L, 0, 2, 2)), [(2, 3)]),
    "index_select, 3-d": (lambda L, x: x.index_select(0, I(L, 1, 1)), [(2, 3, 2)]),
    "gather": (lambda L, x: x.gather(1, L.tensor([[0, 2], [1, 1]])), [(2, 3)]),
    "gather, negative dim": (lambda L, x: x.gather(-1, L.tensor([[0, 2], [1, 1]])), [(2, 3)]),
    "take": (lambda L, x: x.take(I(L, 0, 5, -1)), [(2, 3)]),
    "masked_select": (lambda L, x: x.masked_select(M(L)), [(2, 3)]),
    "masked_select, broadcast": (lambda L, x: x.masked_select(M(L)), [(3,)]),
    "x[:, list]": (lambda L, x: x[:, [0, 2, 2]], [(2, 3)]),
    "x[mask]": (lambda L, x: x[x > 1], [(2, 3)]),
    "x[list, list]": (lambda L, x: x[[0, 1], [2, 2]], [(2, 3)]),
    "x[list, :, list]": (lambda L, x: x[[0, 1], :, [1, 0]], [(2, 3, 2)]),
    "scatter_add": (lambda L, x, s: x.scatter_add(1, L.tensor([[0, 1, 1], [2, 2, 0]]), s), [(2, 3), (2, 3)]),
    "scatter_add, negative dim": (lambda L, x, s: x.scatter_add(-1, L.tensor([[0, 1], [2, 2]]), s),
                                  [(2, 3), (2, 2)]),
    "index_add": (lambda L, x, s: x.index_add(1, I(L, 0, 2, 2), s), [(2, 3), (2, 3)]),
    "index_add, alpha": (lambda L, x, s: x.index_add(0, I(L, 1, 1), s, alpha=2.5), [(2, 3), (2, 3)]),
    "index_copy": (lambda L, x, s: x.index_copy(1, I(L, 0, 2, 1), s), [(2, 3), (2, 3)]),
    "index_fill": (lambda L, x: x.index_fill(-1, I(L, 0, 2), 1.5), [(2, 3)]),
    "put": (lambda L, x, s: x.put(I(L, 0, 5, 4), s), [(2, 3), (3,)]),
    "put, accumulate": (lambda L, x, s: x.put(I(L, 0, 5, 5), s, accumulate=True), [(2, 3), (3,)]),
    "index_put": (lambda L, x, s: x.index_put((I(L, 0, 1),), s), [(2, 3), (2, 3)]),
    "index_put, broadcast": (lambda L, x, s: x.index_put((I(L, 0, 1),), s), [(2, 3), (3,)]),
    "index_put, accumulate": (lambda L, x, s: x.index_put((I(L, 0, 1, 1),), s, accumulate=True), [(2, 3), (3, 3)]),
    "masked_scatter": (lambda L, x, s: x.masked_scatter(M(L), s), [(2, 3), (2, 3)]),
}


@pytest.mark.parametrize("name", CASES)
def test_the_gradients_graph_is_torchs(name):
    f, shapes = CASES[name]
    want, got = (gradient_graphs(f, [_leaf(L, s, L.float64) for s in shapes], L) for L in LIBS)
    assert got[0] == want[0]
    for w, g in zip(want[1] + want[2], got[1] + got[2]):
        assert (w is None) == (g is None)
        if w is not None:
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("name", ["x[:, list]", "gather", "index_select", "take", "masked_select"])
def test_a_plain_backward_gives_torchs_gradient(name):
    f, shapes = CASES[name]
    grads = []
    for L in LIBS:
        xs = [_leaf(L, s, L.float32) for s in shapes]
        (f(L, *xs) * L.linspace(-2, 2, 1, dtype=L.float32)).sum().backward()
        grads.append([x.grad.numpy() for x in xs])
    for w, g in zip(*grads):
        np.testing.assert_array_equal(g, w)


ZERO_D = {  # writes into and reads from a 0-d tensor, which torch treats as one element (numpy refused them)
    "index_fill": lambda L, x, v: x.index_fill(0, L.tensor([0]), 1.0),
    "put, accumulate": lambda L, x, v: x.put(L.tensor([0, 0]), v(1.0, 2.0), accumulate=True),
    "put": lambda L, x, v: x.put(L.tensor([0, -1]), v(1.0, 2.0)),
    "index_add, 1-d source": lambda L, x, v: x.index_add(0, L.tensor([0]), v(3.0)),
    "index_add": lambda L, x, v: x.index_add(0, L.tensor([0]), v(3.0)[0]),
    "index_add, 0-d index": lambda L, x, v: x.index_add(0, L.tensor(0), v(3.0)[0]),
    "scatter_add": lambda L, x, v: x.scatter_add(0, L.tensor([0]), v(3.0)),
    "scatter_add, 0-d index": lambda L, x, v: x.scatter_add(0, L.tensor(0), v(3.0)[0]),
    "scatter, 0-d index": lambda L, x, v: x.scatter(0, L.tensor(0), v(3.0)[0]),
    "index_copy": lambda L, x, v: x.index_copy(0, L.tensor([0]), v(3.0)),
    "take": lambda L, x, v: x.take(L.tensor([0, 0, -1])),
    "index_select": lambda L, x, v: x.index_select(0, L.tensor([0])),
    "gather": lambda L, x, v: x.gather(0, L.tensor(0)),
    "gather, index 1": lambda L, x, v: x.gather(0, L.tensor(1)),
}


def _zero_d(L, name):
    x = L.tensor(2.0, dtype=L.float64, requires_grad=True)
    try:
        y = ZERO_D[name](L, x, lambda *v: L.tensor(v, dtype=L.float64))
    except RuntimeError:
        return "RuntimeError"
    (g,) = L.autograd.grad((y * y).sum(), x, create_graph=True)
    return y.tolist(), y.grad_fn.name(), g.item(), graph_of(g)


@pytest.mark.parametrize("name", ZERO_D)
def test_a_0d_tensor_is_written_and_read_as_one_element(name):
    assert _zero_d(mt, name) == _zero_d(torch, name)


@pytest.mark.parametrize("op", ["gather", "scatter_add", "scatter", "index_select", "take"])
@pytest.mark.parametrize("dtype", ["int32", "int16", "uint8"])
def test_the_index_dtypes_torch_takes(op, dtype):
    calls = {"gather": lambda L, x, i: x.gather(1, i.reshape(2, 1)),
             "scatter_add": lambda L, x, i: x.scatter_add(1, i.reshape(2, 1), x[:, :1]),
             "scatter": lambda L, x, i: x.scatter(1, i.reshape(2, 1), x[:, :1]),
             "index_select": lambda L, x, i: x.index_select(1, i),
             "take": lambda L, x, i: x.take(i)}
    seen = []
    for L in LIBS:
        x = L.arange(6.0).reshape(2, 3)
        try:
            seen.append(calls[op](L, x, L.tensor([2, 0], dtype=getattr(L, dtype))).tolist())
        except RuntimeError:
            seen.append("RuntimeError")
    assert seen[1] == seen[0]


WRITES = {  # a source of another dtype than self's: torch refuses it (microtorch wrote it, converted)
    "put": lambda L, x, s: x.put(L.tensor([0, 1]), s[0, :2]),
    "put, accumulate": lambda L, x, s: x.put(L.tensor([0, 1]), s[0, :2], accumulate=True),
    "index_add": lambda L, x, s: x.index_add(0, L.tensor([0, 1]), s),
    "scatter": lambda L, x, s: x.scatter(1, L.tensor([[0, 1, 2], [2, 1, 0]]), s),
    "scatter_add": lambda L, x, s: x.scatter_add(1, L.tensor([[0, 1, 2], [2, 1, 0]]), s),
    "index_copy": lambda L, x, s: x.index_copy(0, L.tensor([0, 1]), s),
}


@pytest.mark.parametrize("name", WRITES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_source_of_another_dtype_is_refused_as_torch(name, dtype):
    seen = []
    for L in LIBS:
        try:
            seen.append(WRITES[name](L, L.zeros(2, 3, dtype=L.float64), L.ones(2, 3, dtype=getattr(L, dtype))).sum()
                        .item())
        except RuntimeError:
            seen.append("RuntimeError")
    assert seen[1] == seen[0]


@pytest.mark.parametrize("src_shape", [(2, 3), (2, 2), (3, 3)])
def test_scatter_add_of_a_larger_src_links_it_and_raises_in_backward_as_torch(src_shape):
    """torch's node links src itself (no slice before it); its gradient has the index's shape, so a larger src makes
    backward raise (microtorch sliced src first and gave it a padded gradient)"""
    seen = []
    for L in LIBS:
        s = L.ones(*src_shape, requires_grad=True)
        y = L.zeros(2, 4).scatter_add(-1, L.tensor([[0, 1], [2, 3]]), s)
        try:
            y.sum().backward()
            seen.append((graph_of(y), s.grad.tolist()))
        except RuntimeError as e:
            seen.append((graph_of(y), "invalid gradient" in str(e)))
    assert seen[1] == seen[0]
