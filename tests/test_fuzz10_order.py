"""Equal values in sort, argsort, topk, kthvalue and mode get torch 2.13's indices (its C++ algorithms replayed by
microtorch/ops/_std_order.py), beside the real torch: many ties, NaN, every size class of the algorithms (up to
16 elements, nth_element's and partial_sort's ranges of k), several dtypes, dims and layouts."""
import numpy as np
import pytest
import torch

import microtorch as mt

SIZES = [1, 2, 3, 4, 16, 17, 33, 64, 100, 257, 1000]


def _data(n, seed, dtype="float64", nan=False, rows=3):
    rng = np.random.default_rng(seed)
    x = rng.integers(-2, 3, (rows, n)).astype(dtype)
    if nan:
        x[rng.random(x.shape) < 0.2] = np.nan
    return x


def _same(call, x):
    t, m = call(torch, torch.tensor(x)), call(mt, mt.tensor(x))
    assert np.array_equal(t.indices.numpy(), m.indices.numpy()), (t.indices, m.indices)
    assert np.array_equal(t.values.numpy(), m.values.numpy(), equal_nan=True)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype, nan", [("float64", False), ("float64", True), ("float32", True), ("int64", False)])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_of_ties_as_torch(n, dtype, nan, descending):
    """std::sort past 16 elements is no stable sort; stable=True is, both ways"""
    x = _data(n, n, dtype, nan)
    _same(lambda L, t: L.sort(t, 1, descending=descending), x)
    _same(lambda L, t: L.sort(t.t(), dim=0, descending=descending, stable=True), x)
    t, m = (L.argsort(L.tensor(x), dim=1, descending=descending) for L in (torch, mt))
    assert np.array_equal(t.numpy(), m.numpy())


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("nan", [False, True])
@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("sorted_", [True, False])
def test_topk_of_ties_as_torch(n, nan, largest, sorted_):
    """partial_sort when k * 64 <= n, else nth_element and (sorted) a sort of the first k - 1; unsorted, the first
    k are left as nth_element leaves them, ties or not"""
    x = _data(n, n + 1, nan=nan)
    for k in sorted({0, 1, 2, n // 64, n // 2, n - 1, n} & set(range(n + 1))):
        _same(lambda L, t: L.topk(t, k, 1, largest=largest, sorted=sorted_), x)
        _same(lambda L, t: L.topk(t.t(), k, 0, largest=largest, sorted=sorted_), x)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("nan", [False, True])
def test_kthvalue_and_mode_of_ties_as_torch(n, nan):
    """kthvalue is Sedgewick's quickselect; mode std::sort with a plain `<` (a NaN is a run of its own)"""
    x = _data(n, n + 2, nan=nan)
    for k in sorted({1, 2, (n + 1) // 2, n} & set(range(1, n + 1))):
        _same(lambda L, t: L.kthvalue(t, k, 1), x)
        _same(lambda L, t: L.kthvalue(t.t(), k, 0, keepdim=True), x)
    _same(lambda L, t: L.mode(t, 1), x)
    _same(lambda L, t: L.mode(t.t(), 0), x)


def test_the_gradient_of_a_tie_goes_where_torchs_index_says():
    """the values of ties are equal, their gradients are not: they follow the indices"""
    x = _data(40, 7)[0]
    w = np.random.default_rng(8).uniform(0.5, 1.5, 5)

    def grad(L):
        t = L.tensor(x, requires_grad=True)
        (L.topk(t, 5).values * L.tensor(w)).sum().backward()
        return t.grad.numpy()
    assert np.array_equal(grad(torch), grad(mt))
