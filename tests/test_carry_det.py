"""det, slogdet and logdet at singular matrices, beside torch 2.13: torch's first order without create_graph
solves on the LU factors (0 where det is exactly 0), with create_graph it switches to an SVD formula where
|det| < 100 eps (the adjugate at rank n-1, NaN in the second order at rank < n-1), and a batch mixing both
kinds is put together by index_put. Values, NaN/inf patterns and grad_fn names are compared."""
import numpy as np
import pytest
import torch

import microtorch as mt

_R = np.random.default_rng(0)
_RANK2 = _R.standard_normal((3, 3))
_RANK2[2] = _RANK2[0] + _RANK2[1]

MATRICES = {
    "regular": np.array([[2.0, 1.0, 0.5], [1.0, 3.0, -1.0], [0.0, 1.0, 4.0]]),
    "rank_n-1_2x2": np.array([[1.0, 2.0], [2.0, 4.0]]),
    "rank_n-1_3x3": np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]),
    "rank_n-1_rounded": _RANK2,
    "rank_n-1_diagonal": np.diag([1.0, 2.0, 0.0]),
    "rank_n-2": np.diag([1.0, 0.0, 0.0]),
    "rank_1_outer": np.outer(_R.standard_normal(3), _R.standard_normal(3)),
    "zero_3x3": np.zeros((3, 3)),
    "zero_1x1": np.zeros((1, 1)),
    "tiny_det": np.eye(3) * 1e-6,
    "batch_mixed": np.stack([np.diag([1.0, 2.0, 0.0]), np.eye(3) * 2, np.zeros((3, 3))]),
    "batch_regular": np.stack([np.eye(2) * 2, np.array([[1.0, 2.0], [3.0, 4.0]])]),
}


def _grads(lib, x, fn, create_graph):
    """(value, grad_fn names, first-order gradient, second-order gradient) or the exception type."""
    t = lib.tensor(x, requires_grad=True)
    try:
        y = fn(lib, t)
        (g,) = lib.autograd.grad(y.sum(), t, create_graph=create_graph)
        if not create_graph:
            return y.detach().numpy(), type(y.grad_fn).__name__, g.numpy()
        (h,) = lib.autograd.grad((g * g).sum(), t)
    except Exception as e:  # noqa: BLE001 (the type is what is compared)
        return RuntimeError if isinstance(e, RuntimeError) else type(e)  # torch's LinAlgError is one
    return y.detach().numpy(), (type(y.grad_fn).__name__, type(g.grad_fn).__name__), g.detach().numpy(), h.numpy()


def _same(t, m):
    if isinstance(t, type):
        assert m == t
        return
    assert len(t) == len(m)
    for a, b in zip(t, m):
        if isinstance(a, np.ndarray):
            assert a.shape == b.shape
            np.testing.assert_allclose(b, a, rtol=1e-7, atol=1e-10, equal_nan=True)
        else:
            assert a == b


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("name", MATRICES)
def test_det_gradients_match_torch(name, create_graph):
    fn = lambda lib, t: lib.det(t)  # noqa: E731
    x = MATRICES[name]
    _same(_grads(torch, x, fn, create_graph), _grads(mt, x, fn, create_graph))


def test_det_second_order_at_rank_n_minus_1_is_finite_and_first_is_the_adjugate():
    t = mt.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=mt.float64, requires_grad=True)
    (g,) = mt.autograd.grad(mt.det(t), t, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), [[4.0, -2.0], [-2.0, 1.0]], atol=1e-12)  # adjugate^T
    (h,) = mt.autograd.grad((g * g).sum(), t)
    np.testing.assert_allclose(h.numpy(), [[2.0, 4.0], [4.0, 8.0]], atol=1e-12)  # d/dA sum(adj^2), by hand
    assert type(g.grad_fn).__name__ == "MmBackward0"


def _logabsdet(lib, t):
    return lib.linalg.slogdet(t)[1]


@pytest.mark.parametrize("fn", [_logabsdet, lambda lib, t: lib.logdet(t)], ids=["slogdet", "logdet"])
@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("name", ["regular", "rank_n-1_2x2", "rank_n-2", "zero_3x3", "batch_mixed",
                                  "batch_regular"])
def test_slogdet_and_logdet_gradients_match_torch(name, create_graph, fn):
    """inf and nan from the zero pivot without create_graph; torch's LinAlgError (a RuntimeError) with it"""
    x = MATRICES[name]
    _same(_grads(torch, x, fn, create_graph), _grads(mt, x, fn, create_graph))


def _tangents(lib, x, fn):
    t = lib.tensor(x)
    outs = [lib.func.jvp(lambda a: fn(lib, a), (t,), (lib.tensor(dx),))[1] for dx in (np.ones_like(x), np.eye(
        x.shape[-1]) + 0 * x)]
    return [o.numpy() for o in outs]


@pytest.mark.parametrize("fn", [lambda lib, t: lib.det(t), _logabsdet], ids=["det", "slogdet"])
@pytest.mark.parametrize("name", ["regular", "rank_n-1_2x2", "rank_n-1_diagonal", "zero_3x3", "batch_mixed"])
def test_forward_mode_at_singular_matrices_matches_torch(name, fn):
    """det's tangent is 0 where det is 0 (torch's nudged LU), slogdet's is inf or nan (the plain LU)"""
    x = MATRICES[name]
    for t, m in zip(_tangents(torch, x, fn), _tangents(mt, x, fn)):
        np.testing.assert_allclose(m, t, rtol=1e-7, atol=1e-10, equal_nan=True)


def test_complex_near_singular_first_order_is_torchs_rounding_noise():
    """torch factors A itself for a complex matrix (A^T for a real one): near a singular matrix det and
    its gradient are rounding noise, and microtorch factors the same matrix so the noise is the same"""
    r = np.random.default_rng(5)
    c = r.standard_normal((3, 3)) + 1j * r.standard_normal((3, 3))
    c[2] = c[0] * (1 + 2j)
    grads = []
    for lib in (torch, mt):
        t = lib.tensor(c, requires_grad=True)
        (g,) = lib.autograd.grad((lib.det(t) * (1 + 0.5j)).real.sum(), t)
        grads.append(g.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-9, atol=1e-9)
