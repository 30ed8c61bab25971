"""Forward mode through torch.special's new ops, beside torch 2.13: the differentiable ones give torch's tangents,
the Bessel family and the polynomials none. FORWARD_AD_SPECIAL is also part of tests/test_forward_ad.py's table,
whose test checks that every jvp rule runs somewhere."""
import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfw

import microtorch as mt
import microtorch.autograd.forward_ad as mfw


def _f(*shape):  # (test_forward_ad.py's specs: "f" a normal float64 input, "p" a positive one)
    return ("f", shape)


def _p(*shape):
    return ("p", shape)


FORWARD_AD_SPECIAL = [
    ("special_ndtr", lambda L, a: L.special.ndtr(a), [_f(4)]),
    ("special_log_ndtr", lambda L, a: L.special.log_ndtr(a), [_f(4)]),
    ("special_ndtri", lambda L, a: L.special.ndtri(a.sigmoid()), [_f(4)]),
    ("special_erfcx", lambda L, a: L.special.erfcx(a), [_f(4)]),
    ("special_i0e", lambda L, a: L.special.i0e(a), [_f(4)]),
    ("special_i1e", lambda L, a: L.special.i1e(a), [_f(4)]),
    ("special_entr", lambda L, a: L.special.entr(a), [_p(4)]),
] + [(f"special_{name}", (lambda n: lambda L, a: getattr(L.special, n)(a))(name), [_p(4)]) for name in (
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
    "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
    "spherical_bessel_j0")] + [(f"special_{name}", (lambda n: lambda L, a, b: getattr(L.special, n)(a, b * 3))(name),
                                [_f(4), _p(4)]) for name in (
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
    "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
    "legendre_polynomial_p")]


def _tangent(lib, fw, f, values):
    with fw.dual_level():
        args = [fw.make_dual(lib.tensor(v), lib.tensor(np.cos(v))) for v in values]
        t = fw.unpack_dual(f(lib, *args)).tangent
        return None if t is None else t.numpy()


@pytest.mark.parametrize("name,f,specs", FORWARD_AD_SPECIAL, ids=[o[0] for o in FORWARD_AD_SPECIAL])
def test_tangents_as_torch(name, f, specs):
    rng = np.random.default_rng(8)
    values = [np.abs(rng.standard_normal(s)) + 0.1 if kind == "p" else rng.standard_normal(s) for kind, s in specs]
    t, m = _tangent(torch, tfw, f, values), _tangent(mt, mfw, f, values)
    if t is None:
        assert m is None
    else:
        np.testing.assert_allclose(m, t, rtol=1e-13)
