"""The gradients of matrix-vector and batched products as torch's formulas write them, beside torch 2.13.

A gradient computed with create_graph=True has a graph of its own (the visualizer draws it; a second backward runs
it). A scan of ~480 expressions this round found 82 whose gradient's graph differs from torch's; these are the
products' (`a @ v`, addmv, addr, bmm, baddbmm, addbmm), fixed: mv's gradient is `grad.ger(vec)` (a reshape times
vec) and `mat.t().mv(grad)` (TBackward0, not TransposeBackward0), bmm's a bmm with the other transposed (not
matmul's folding), and alpha and beta multiply only when they are not 1 (torch's maybe_multiply).
"""
import numpy as np
import pytest
import torch

import microtorch as mt
from tests.saved_compare import gradient_graphs

LIBS = (torch, mt)

CASES = {  # name: (f(L, *leaves), leaf shapes)
    "a @ v": (lambda L, a, v: a @ v, [(2, 3), (3,)]),
    "mv": (lambda L, a, v: a.mv(v), [(2, 3), (3,)]),
    "v @ a": (lambda L, v, a: v @ a, [(2,), (2, 3)]),
    "addmv": (lambda L, x, a, v: L.addmv(x, a, v), [(2,), (2, 3), (3,)]),
    "addmv, alpha and beta": (lambda L, x, a, v: L.addmv(x, a, v, beta=0.5, alpha=2.0), [(2,), (2, 3), (3,)]),
    "addr": (lambda L, x, u, v: L.addr(x, u, v), [(2, 3), (2,), (3,)]),
    "addr, alpha": (lambda L, x, u, v: L.addr(x, u, v, alpha=-1.5), [(2, 3), (2,), (3,)]),
    "bmm": (lambda L, a, b: L.bmm(a, b), [(2, 2, 3), (2, 3, 4)]),
    "baddbmm": (lambda L, x, a, b: L.baddbmm(x, a, b), [(2, 2, 4), (2, 2, 3), (2, 3, 4)]),
    "baddbmm, alpha": (lambda L, x, a, b: L.baddbmm(x, a, b, alpha=0.25), [(2, 2, 4), (2, 2, 3), (2, 3, 4)]),
    "addbmm": (lambda L, x, a, b: L.addbmm(x, a, b), [(2, 4), (3, 2, 3), (3, 3, 4)]),
    "addbmm, beta": (lambda L, x, a, b: L.addbmm(x, a, b, beta=2.0), [(2, 4), (3, 2, 3), (3, 3, 4)]),
}


def _leaf(L, shape):
    return (L.arange(1.0, 1 + int(np.prod(shape)), dtype=L.float64).reshape(shape) / 7).requires_grad_()


def _rounded(v):
    """saved values with their floats to 12 significant digits (the products' last bits are BLAS's: the known
    table of docs/testing.md)"""
    if isinstance(v, float):
        return float(f"{v:.12g}")
    if isinstance(v, (list, tuple)):
        return type(v)(_rounded(x) for x in v)
    if isinstance(v, dict):
        return {k: _rounded(x) for k, x in v.items()}
    return v


def _assert_same(want, got):
    """the same graphs and saved values, and the same first- and second-order gradients to the bit"""
    assert got[0] == want[0]
    for w, g in zip(want[1] + want[2], got[1] + got[2]):
        assert (w is None) == (g is None)
        if w is not None:
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("name", CASES)
def test_the_gradients_graph_is_torchs(name):
    f, shapes = CASES[name]
    want, got = (gradient_graphs(f, [_leaf(L, s) for s in shapes], L) for L in LIBS)
    assert _rounded(got[0]) == _rounded(want[0])
    for w, g in zip(want[1] + want[2], got[1] + got[2]):
        assert (w is None) == (g is None)
        if w is not None:
            np.testing.assert_allclose(g, w, rtol=1e-14, atol=1e-14)


WRITES = {  # select_scatter and slice_scatter: torch's formulas write zeros into the gradient and select or slice it
    "select_scatter": (lambda L, a, v: a.select_scatter(v, 0, 0), [(2, 3), (3,)]),
    "select_scatter, negative": (lambda L, a, v: a.select_scatter(v, -1, -2), [(2, 3), (2,)]),
    "slice_scatter": (lambda L, a, b: a.slice_scatter(b, 1, 0, 1), [(2, 3), (2, 1)]),
    "slice_scatter, step": (lambda L, a, b: a.slice_scatter(b, -1, None, None, 2), [(2, 4), (2, 2)]),
    "slice_scatter, negative start": (lambda L, a, b: a.slice_scatter(b, 0, -1), [(3, 2), (1, 2)]),
}


@pytest.mark.parametrize("name", WRITES)
def test_the_gradients_graph_of_a_scatter_is_torchs(name):
    f, shapes = WRITES[name]
    want, got = (gradient_graphs(f, [_leaf(L, s) for s in shapes], L) for L in LIBS)
    _assert_same(want, got)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4), (4, 2), (1, 1)])
def test_the_gradient_of_trace_is_torchs_index_fill(shape):
    """torch's trace_backward fills grad into a row of zeros at every (cols + 1)-th place and views it as X
    (IndexFillBackward1 over ViewBackward0); microtorch used a where with an identity mask"""
    want, got = (gradient_graphs(lambda L, a: a.trace(), [_leaf(L, shape)], L) for L in LIBS)
    assert got[0] == want[0]
    for w, g in zip(want[1] + want[2], got[1] + got[2]):
        np.testing.assert_array_equal(g, w)


SELECTING = {  # torch's value_selecting_reduction_backward (a scatter into zeros) and cummaxmin_backward (scatter_add)
    "topk": (lambda L, a: a.topk(2)[0], [(2, 4)]),
    "sort": (lambda L, a: a.sort(1)[0], [(2, 4)]),
    "sort, negative dim": (lambda L, a: a.sort(-1, descending=True)[0], [(2, 4)]),
    "kthvalue": (lambda L, a: a.kthvalue(2, 1)[0], [(2, 4)]),
    "kthvalue, keepdim": (lambda L, a: a.kthvalue(2, 1, keepdim=True)[0], [(2, 4)]),
    "median": (lambda L, a: a.median(1)[0], [(2, 4)]),
    "mode": (lambda L, a: a.mode(0)[0], [(3, 2)]),
    "max(dim)": (lambda L, a: a.max(-1)[0], [(2, 4)]),
    "cummax": (lambda L, a: a.cummax(1)[0], [(2, 4)]),
    "cummin, negative dim": (lambda L, a: a.cummin(-2)[0], [(3, 2)]),
}


@pytest.mark.parametrize("name", SELECTING)
def test_the_gradients_graph_of_a_selecting_op_is_torchs(name):
    f, shapes = SELECTING[name]

    def leaf(L, shape):  # (distinct values in no order: the selected places are the same in both)
        n = int(np.prod(shape))
        return L.tensor(((np.arange(n) * 7) % n / 3.0).reshape(shape), dtype=L.float64, requires_grad=True)
    want, got = (gradient_graphs(f, [leaf(L, s) for s in shapes], L) for L in LIBS)
    _assert_same(want, got)
