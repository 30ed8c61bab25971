"""The twenty-first round's findings (fuzz ranges from 4.95M and teaching code beside torch), each checked
against torch 2.13."""
import warnings

import numpy as np
import pytest
import torch as real_torch

import microtorch

LIBS = (real_torch, microtorch)


def _signed_zeros(rng, shape, dtype):
    x = np.where(rng.random(shape) < 0.5, -0.0, 0.0).astype(dtype)
    if x.size and rng.random() < 0.3:
        x.reshape(-1)[rng.integers(x.size)] = -1.0
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("seed", range(40))
def test_aminmax_keeps_torchs_zero(seed, dtype):
    """fuzz 4,989,557: aminmax of -0 and +0 along a dim is the first zero (numpy's is the last); over everything,
    the zero of max() and min(); 1 / x shows the sign."""
    rng = np.random.default_rng(seed)
    shape = tuple(int(n) for n in rng.integers(1, 24, size=int(rng.integers(1, 4))))
    x = _signed_zeros(rng, shape, dtype)
    dim = None if seed % 4 == 0 else int(rng.integers(-len(shape), len(shape)))
    keepdim = bool(seed % 3 == 0)
    kwargs = {} if dim is None else {"dim": dim}
    got = [lib.aminmax(lib.from_numpy(x.copy()), keepdim=keepdim, **kwargs) for lib in LIBS]
    for want, ours in zip(got[0], got[1]):
        assert np.array_equal(np.signbit(want.numpy()), np.signbit(ours.numpy())), (shape, dim)
        assert want.shape == ours.shape


def _nan_through_abs(lib, op, dim, correction, create_graph):
    """fuzz 5,049,949: |var| of a slice holding nan. abs's gradient is sgn(nan) = 0, which torch's sgn backward
    makes an exact zero: the second order through var's (x - mean), nan, stays 0."""
    a = lib.tensor([[0.0, 0.5], [0.25, 1.0]], dtype=lib.float64, requires_grad=True)
    x = lib.where(lib.tensor([[True, False], [True, True]]), a, lib.tensor(float("nan"), dtype=lib.float64))
    kwargs = {} if dim is None else {"dim": dim}
    y = getattr(lib, op)(x, correction=correction, **kwargs).abs()
    g, = lib.autograd.grad(y.sum() * 1.5, a, create_graph=True)
    g2, = lib.autograd.grad(g.sum(), a, create_graph=create_graph, allow_unused=True)
    return g.detach().numpy(), g2.detach().numpy(), g2.requires_grad


@pytest.mark.filterwarnings("ignore:.*degrees of freedom is")
@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("dim", [None, 0, 1])
@pytest.mark.parametrize("correction", [0, 1, 2, 5])
@pytest.mark.parametrize("op", ["var", "std"])
def test_second_order_of_abs_of_nan_variance(op, correction, dim, create_graph):
    want, ours = (_nan_through_abs(lib, op, dim, correction, create_graph) for lib in LIBS)
    for w, o in zip(want[:2], ours[:2]):
        np.testing.assert_array_equal(w, o)
    assert want[2] == ours[2]


def _dof_warnings(lib, name, shape, dim, correction):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        getattr(lib, name)(lib.ones(shape), correction=correction, **({} if dim is None else {"dim": dim}))
    return [(w.category, str(w.message).split(" (Triggered internally")[0], w.filename) for w in caught]


@pytest.mark.parametrize("shape, dim, correction", [
    ((3, 0), 0, 1), ((0, 3), 0, 1), ((0,), None, 1), ((0,), None, 0), ((3, 0), 0, 0), ((3, 0), 1, 0), ((3, 1), 1, 1),
    ((2,), None, 2.5), ((2,), None, 1.5), ((2,), None, -1), ((1,), None, 0), ((2, 3), (0, 1), 6), ((2, 3), (0, 1), 5),
    ((4, 2), None, 2)])
@pytest.mark.parametrize("name", ["var", "std", "var_mean", "std_mean"])
def test_variance_warns_without_degrees_of_freedom(name, shape, dim, correction):
    """torch warns, at the caller's line, where the reduction factor (input numel over output numel, 0 for an empty
    result) is at most the correction; microtorch said nothing."""
    want, ours = (_dof_warnings(lib, name, shape, dim, correction) for lib in LIBS)
    assert want == ours
