"""Vector norms at their edges beside torch 2.13: ord=0 has no gradient at all in torch (a leaf's .grad stays None,
autograd.grad calls the input unused), ord=-inf is the smallest |x| (its gradient shared among ties, as inf's),
and ties and NaNs of ord=+-inf, for torch.norm, Tensor.norm and linalg.vector_norm, values, gradients and the
second order."""
import numpy as np
import pytest
import torch

import microtorch as mt

INF = float("inf")
A = np.array([[1.0, -3.0, 3.0], [0.0, 0.0, 0.0], [2.0, -2.0, 2.0], [-1.0, 0.5, -1.0]])
CALLS = {
    "norm": lambda L, x, o, kw: L.norm(x, p=o, **kw),
    "Tensor.norm": lambda L, x, o, kw: x.norm(o, **kw),
    "vector_norm": lambda L, x, o, kw: L.linalg.vector_norm(x, ord=o, **kw),
}


def _nan_equal(a, b):
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("call", list(CALLS))
@pytest.mark.parametrize("dim", [None, 0, 1])
def test_ord_zero_has_no_gradient(call, dim):
    kw = {} if dim is None else {"dim": dim}
    seen = []
    for lib in (mt, torch):
        x = lib.tensor(A, requires_grad=True)
        y = CALLS[call](lib, x, 0, kw)
        y.sum().backward()
        (g,) = lib.autograd.grad(CALLS[call](lib, x, 0, kw).sum(), x, allow_unused=True)
        (z,) = lib.autograd.grad(CALLS[call](lib, x, 0, kw).sum(), x, allow_unused=True, materialize_grads=True)
        with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
            lib.autograd.grad(CALLS[call](lib, x, 0, kw).sum(), x)
        seen.append((y.grad_fn.name(), y.detach().numpy().tolist(), x.grad, g, z.numpy().tolist()))
    assert seen[0] == seen[1]
    assert seen[0][2] is None and seen[0][3] is None


def test_ord_zero_beside_another_term_gives_that_terms_gradient():
    out = []
    for lib in (mt, torch):
        x = lib.tensor(A, requires_grad=True)
        (lib.linalg.vector_norm(x, ord=0, dim=1) * 2 + x.sum()).sum().backward()
        out.append(x.grad.numpy())
    _nan_equal(*out)


def _first_and_second(lib, call, o, dim, data, dtype="float64"):
    kw = {} if dim is None else {"dim": dim}
    x = lib.tensor(data, dtype=getattr(lib, dtype), requires_grad=True)
    y = CALLS[call](lib, x, o, kw)
    w = lib.tensor(np.arange(1.0, 1 + y.numel()).reshape(tuple(y.shape)), dtype=getattr(lib, dtype))
    (g,) = lib.autograd.grad(y, x, w, create_graph=True)
    (h,) = lib.autograd.grad(g, x, lib.tensor(data + 0.25, dtype=getattr(lib, dtype)), allow_unused=True)
    return (y.grad_fn.name(), y.detach().numpy(), g.detach().numpy(), g.grad_fn.name(),
            None if h is None else h.numpy(force=True))  # (force: torch's exact zero)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("call", list(CALLS))
@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1)])
@pytest.mark.parametrize("o", [INF, -INF])
def test_ord_inf_and_minus_inf_with_ties_as_torch(o, dim, call, dtype):
    mine, theirs = (_first_and_second(lib, call, o, dim, A, dtype) for lib in (mt, torch))
    assert mine[0] == theirs[0] and mine[3] == theirs[3]
    for a, b in zip(mine[1:], theirs[1:]):
        if not isinstance(a, str):
            _nan_equal(a, b)


@pytest.mark.parametrize("o", [INF, -INF])
def test_a_nan_counts_as_the_extreme(o):
    data = np.array([[1.0, np.nan, -1.0], [2.0, -2.0, 3.0], [np.nan, np.nan, 0.5]])
    mine, theirs = (_first_and_second(lib, "vector_norm", o, 1, data) for lib in (mt, torch))
    for a, b in zip(mine[1:3], theirs[1:3]):
        _nan_equal(a, b)


def test_minus_inf_of_an_empty_dim_is_torchs_error():
    for lib in (mt, torch):
        with pytest.raises(RuntimeError, match="cannot compute the -inf norm"):
            lib.linalg.vector_norm(lib.zeros(0, 3), ord=-INF, dim=0)
        assert tuple(lib.linalg.vector_norm(lib.zeros(0, 3), ord=-INF, dim=1).shape) == (0,)


@pytest.mark.parametrize("o", [0, INF, -INF])
def test_forward_mode_at_the_edges(o):
    out = []
    for lib in (mt, torch):
        fwd = lib.autograd.forward_ad
        with fwd.dual_level():
            d = fwd.make_dual(lib.tensor(A), lib.tensor(np.linspace(-1, 1, 12).reshape(4, 3)))
            out.append(fwd.unpack_dual(lib.linalg.vector_norm(d, ord=o, dim=1)).tangent.numpy())
    _nan_equal(*out)


def _norms(lib, x, o, dim, dtype):
    t = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
    n = lib.linalg.vector_norm(t, ord=o, dim=dim)
    n.sum().backward()
    return n.detach().numpy(), t.grad.numpy()


@pytest.mark.parametrize("dim", [None, 1, 0, -1, (1, 2)])
def test_two_norm_is_torchs_bits_in_float64(dim):
    # torch's 2-norm over a contiguous last dim: four running sums of squares (a 32-byte register), added in turn,
    # then the rest of the row fused in; over other dims, one running sum per result
    rng = np.random.default_rng(21)
    for shape in [(37,), (5, 83), (3, 17, 9), (1, 1000), (40, 8)]:
        if isinstance(dim, tuple) and len(shape) < 3 or dim not in (None, 0, -1) and len(shape) < 2:
            continue
        x = rng.standard_normal(shape) * 3
        for a, b in zip(_norms(mt, x, 2, dim, "float64"), _norms(torch, x, 2, dim, "float64")):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("cols", [131, 12, 7, 16, 300])
def test_two_norm_float32_rows(cols):
    # (float32: eight lanes; a rest of four or more squared four at a time first, unfused, then fused one by one)
    rng = np.random.default_rng(22)
    x = rng.standard_normal((400, cols)).astype(np.float32)
    for a, b in zip(_norms(mt, x, 2, 1, "float32"), _norms(torch, x, 2, 1, "float32")):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("o", [0.5, -1, 3, 1.5])
def test_other_orders_add_in_torchs_order(o):
    # one running sum of |x|^p per result, then the power 1/p (numpy's pow may be an ulp off the C library's)
    rng = np.random.default_rng(23)
    x = np.abs(rng.standard_normal((7, 300))) + 0.1
    for dim in (None, 1, 0):
        for a, b in zip(_norms(mt, x, o, dim, "float64"), _norms(torch, x, o, dim, "float64")):
            np.testing.assert_allclose(a, b, rtol=2e-15)


@pytest.mark.parametrize("o", [2, INF, -INF])
@pytest.mark.parametrize("dim", [None, 1, 0])
def test_complex_norms_take_torchs_magnitude(o, dim):
    # |z| as torch's abs of a complex number, C's hypot (numpy's complex abs rounds a third of them otherwise), and
    # the 2-norm of a complex tensor by torch's plain loop, not the real one's vectorised loop
    rng = np.random.default_rng(24)
    z = rng.standard_normal((5, 37)) + 1j * rng.standard_normal((5, 37))
    kw = {} if dim is None else {"dim": dim}
    mine, theirs = (lib.linalg.vector_norm(lib.tensor(z), ord=o, **kw).numpy() for lib in (mt, torch))
    np.testing.assert_array_equal(mine, theirs)
    if o != 2:  # (the gradient picks the extreme entries: their magnitudes must tie as torch's do)
        grads = []
        for lib in (mt, torch):
            t = lib.tensor(z, requires_grad=True)
            lib.linalg.vector_norm(t, ord=o, **kw).sum().backward()
            grads.append((t.grad.numpy() != 0).sum())
        assert grads[0] == grads[1]


@pytest.mark.parametrize("o", [3, 1.5, 0.5])
def test_float32_orders_as_torchs_powf(o):
    rng = np.random.default_rng(25)
    x = rng.standard_normal((9, 200)).astype(np.float32)
    for dim in (None, 1):
        mine, theirs = (lib.linalg.vector_norm(lib.tensor(x), ord=o, dim=dim).numpy() for lib in (mt, torch))
        np.testing.assert_allclose(mine, theirs, rtol=1.2e-7)
        assert (mine != theirs).sum() <= max(1, mine.size // 10)


@pytest.mark.parametrize("values", [[1e200, 3.0, 1, 2, 5], [1e160] * 5, [np.inf, 1, 2, 3, 4], [np.nan] * 5,
                                    [1e-300] * 9, [1.0] * 9 + [1e155], [1e153] * 6 + [1.3e153], [-np.inf, 1, 2]])
def test_two_norm_at_the_ends_of_the_range(values):
    # (the rest of the row is fused in Python's floats: overflow, inf and NaN there as torch's)
    x = np.array(values)
    mine, theirs = (lib.linalg.vector_norm(lib.tensor(x)).item() for lib in (mt, torch))
    assert repr(mine) == repr(theirs)
