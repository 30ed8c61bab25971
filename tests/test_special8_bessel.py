"""torch.special's Bessel family without a derivative (bessel_j0/j1/y0/y1, modified_bessel_i0/i1/k0/k1,
scaled_modified_bessel_k0/k1, spherical_bessel_j0, airy_ai) beside torch 2.13: values in float64 and float32 over
wide ranges, the exact values at 0, -0, +-inf, NaN and negative arguments, dtypes, refusals, and results that
never require grad (no node, no tangent), as torch's."""
import warnings

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfw

import microtorch as mt
import microtorch.autograd.forward_ad as mfw
import microtorch.special as mts
from test_special8_unary import assert_as_torch

NAMES = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
         "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
         "spherical_bessel_j0"]
# torch's kernels fuse a*b + c (one rounding) where they are compiled for AVX2 or AVX512, its CPU capability here;
# its DEFAULT kernels (ATEN_CPU_CAPABILITY=default) round twice and give other last bits, so there the bit-for-bit
# tests are skipped and the tolerances are those of unfused arithmetic
FUSED = torch.backends.cpu.get_cpu_capability() in ("AVX2", "AVX512")
BITS = pytest.mark.skipif(not FUSED, reason="torch's kernels are not the fused ones (CPU capability DEFAULT)")
# the functions that oscillate: near their zeros the error is measured against the size of the terms (1)
OSCILLATING = {"airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "spherical_bessel_j0"}
EDGES = [0., -0., np.inf, -np.inf, np.nan, 5e-324, 1e-300, 1e-20, 1e-6, 1e-5, 0.5, 1., 2., 2.09, 5., 8., 8.32, 8.33,
         103.8, 103.9, 700., 710., 1e8, 1e200, -1e-20, -0.5, -1., -2., -2.09, -2.1, -5., -10., -100., -1e5]


def _args():
    rng = np.random.default_rng(8)
    return np.concatenate([EDGES, rng.uniform(-10, 10, 1000), rng.uniform(-40, 40, 1000),
                           np.exp(rng.uniform(-30, 30, 1000)), -np.exp(rng.uniform(-30, 12, 1000))])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", NAMES)
def test_values_as_torch(name, dtype):
    """within 8 eps of torch, relative to the value (to 1 for the oscillating functions, whose zeros cancel terms
    of that size): the same Cephes approximations, computed in the same dtype. float64 is torch's bits
    (test_float64_bits_as_torch); float32 differs in the last places where the C library's float functions (expf,
    logf, sinf, cosf) do not round as the double ones rounded to float. Measured: at most 4.2 eps in float32
    (scaled_modified_bessel_k0)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = _args().astype(dtype)
    t = getattr(torch.special, name)(torch.tensor(x)).numpy()
    m = getattr(mts, name)(mt.tensor(x)).numpy()
    assert m.dtype == t.dtype
    np.testing.assert_array_equal(np.isnan(m), np.isnan(t))
    np.testing.assert_array_equal(np.isinf(m), np.isinf(t))
    scale = np.maximum(np.abs(t.astype(np.float64)), 1.0 if name in OSCILLATING else 0.0)
    with np.errstate(invalid="ignore"):
        err = np.where((m == t) | np.isnan(t), 0, np.abs(m.astype(np.float64) - t) / scale)
    assert err.max() <= 8 * np.finfo(dtype).eps


@pytest.mark.parametrize("name", NAMES)
def test_edges_exactly_as_torch(name):
    """0 and -0 (inf, -inf or the series' value), the infinities (0, NaN, inf), NaN, negatives (NaN for the Y and K
    functions), and the ends of each approximation's range"""
    x = np.array(EDGES)
    m = getattr(mts, name)(mt.tensor(x, dtype=mt.float64)).numpy()
    t = getattr(torch.special, name)(torch.tensor(x, dtype=torch.float64)).numpy()
    exact = np.isinf(x) | np.isnan(x) | (x <= 0) & name.startswith(("bessel_y", "modified_bessel_k", "scaled"))
    np.testing.assert_array_equal(m[exact], t[exact])
    eps = np.finfo(np.float64).eps
    np.testing.assert_allclose(m, t, rtol=8 * eps, atol=8 * eps if name in OSCILLATING else 1e-300)


INPUTS = {"int": lambda L: L.tensor([0, 1, 3]), "bool": lambda L: L.tensor([True, False]),
          "0-d": lambda L: L.tensor(2.5), "empty": lambda L: L.ones(0, 3),
          "half": lambda L: L.tensor([0.5], dtype=L.float16), "complex": lambda L: L.tensor([1j]),
          "number": lambda L: 2.5}


@pytest.mark.parametrize("kind", INPUTS)
@pytest.mark.parametrize("name", NAMES)
def test_inputs_as_torch(name, kind):
    assert_as_torch(lambda L, S: getattr(S, name)(INPUTS[kind](L)))


def test_refusals_name_the_op():
    with pytest.raises(NotImplementedError, match=r'"bessel_y1_cpu" not implemented for \'Half\''):
        mts.bessel_y1(mt.tensor([1.], dtype=mt.float16))
    with pytest.raises(NotImplementedError, match=r'"airy_ai_cpu" not implemented for \'ComplexDouble\''):
        mts.airy_ai(mt.tensor([1j], dtype=mt.complex128))


@pytest.mark.parametrize("name", NAMES)
def test_no_gradient_as_torch(name):
    """a result computed from a tensor that requires grad has no history, and forward mode gives it no tangent"""
    for lib, fw, S in ((torch, tfw, torch.special), (mt, mfw, mts)):
        x = lib.tensor([0.5, 3.], requires_grad=True)
        y = getattr(S, name)(x)
        assert not y.requires_grad and y.grad_fn is None
        with fw.dual_level():
            assert fw.unpack_dual(getattr(S, name)(fw.make_dual(x.detach(), lib.ones(2)))).tangent is None


def test_vmap_gives_the_values():
    x = mt.tensor([[0.5, 3.], [1., 9.], [20., 0.1]], dtype=mt.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (no batching rule yet: vmap runs it per example, and says so)
        out = mt.func.vmap(mts.bessel_y1)(x)
    np.testing.assert_array_equal(out.numpy(), mts.bessel_y1(x).numpy())


@BITS
@pytest.mark.parametrize("name", NAMES)
def test_float64_bits_as_torch(name):
    """in float64 the same steps give torch's bits: Cephes' approximations, each a*b + c fused as torch's compiled
    kernel fuses it, and the C library's exp, log, sin and cos"""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = _args()
    np.testing.assert_array_equal(getattr(mts, name)(mt.tensor(x)).numpy(),
                                  getattr(torch.special, name)(torch.tensor(x)).numpy())


def test_backward_raises_torchs_error():
    """torch has no derivative: the result has no history, and backward says so (RuntimeError in both)"""
    for lib, S in ((torch, torch.special), (mt, mts)):
        x = lib.tensor([0.5, 1.], requires_grad=True)
        with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad"):
            S.modified_bessel_k1(x).sum().backward()


@BITS
def test_i0_and_special_i1_bits_as_torch():
    """torch.i0 and torch.special.i1 share these kernels (special.i1's own: its float32 series is shorter, its
    product in another order): torch's bits in float64 and float16 (computed in float32 and rounded once)"""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for dtype in ("float64", "float16"):
            x = _args().astype(dtype)
            for m, t in ((mt.i0, torch.i0), (mts.i1, torch.special.i1)):
                np.testing.assert_array_equal(m(mt.tensor(x)).numpy(), t(torch.tensor(x)).numpy())
