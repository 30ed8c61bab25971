"""torch.special: the special functions under torch's names for them.

Most are microtorch's ops under a second name (expit is sigmoid, gammaln is lgamma, psi is digamma, gammainc is
igamma...), with the same nodes as in torch (torch.special.expit records SigmoidBackward0); xlog1py and zeta live
only here, as in torch, with torch's three nodes each (tensor and tensor, a number first, a number second); so do
the normal distribution's functions, erfcx, i0e, i1e and entr (ops/special_unary.py), and the Bessel family that
torch does not differentiate (ops/special_bessel.py), and the orthogonal polynomials (ops/special_poly.py).
"""
import microtorch as _mt

from .ops._checks import guard_namespace as _guard_namespace
from .ops.special import i1, xlog1py, zeta  # noqa: F401
from .ops.special_bessel import (airy_ai, bessel_j0, bessel_j1, bessel_y0, bessel_y1,  # noqa: F401
                                  modified_bessel_i0, modified_bessel_i1, modified_bessel_k0, modified_bessel_k1,
                                  scaled_modified_bessel_k0, scaled_modified_bessel_k1, spherical_bessel_j0)
from .ops.special_poly import (chebyshev_polynomial_t, chebyshev_polynomial_u,  # noqa: F401
                               chebyshev_polynomial_v, chebyshev_polynomial_w, hermite_polynomial_h,
                               hermite_polynomial_he, laguerre_polynomial_l, legendre_polynomial_p,
                               shifted_chebyshev_polynomial_t, shifted_chebyshev_polynomial_u,
                               shifted_chebyshev_polynomial_v, shifted_chebyshev_polynomial_w)
from .ops.special_unary import entr, erfcx, i0e, i1e, log_ndtr, ndtr, ndtri  # noqa: F401

digamma = psi = _mt.digamma
erf, erfc, erfinv = _mt.erf, _mt.erfc, _mt.erfinv
exp2, expm1, log1p = _mt.exp2, _mt.expm1, _mt.log1p
expit, logit = _mt.sigmoid, _mt.logit
gammaln, polygamma, multigammaln = _mt.lgamma, _mt.polygamma, _mt.mvlgamma
gammainc, gammaincc = _mt.igamma, _mt.igammac
i0, sinc = _mt.i0, _mt.sinc
softmax, log_softmax, logsumexp = _mt.softmax, _mt.log_softmax, _mt.logsumexp
xlogy = _mt.xlogy


def round(input, *, decimals=0):  # noqa: A001 (torch's name)
    return _mt.round(input, decimals=decimals)

__all__ = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
           "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma", "entr", "erf",
           "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln",
           "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1", "i1e", "laguerre_polynomial_l",
           "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp", "modified_bessel_i0",
           "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "multigammaln", "ndtr", "ndtri",
           "polygamma", "psi", "round", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
           "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
           "shifted_chebyshev_polynomial_w", "sinc", "softmax", "spherical_bessel_j0", "xlog1py", "xlogy", "zeta"]
_guard_namespace(globals(), ["xlog1py", "zeta"], overrides={"input": "tensor_or_number"})  # (zeta(2, t) too)
_guard_namespace(globals(), ["i1", "entr", "erfcx", "i0e", "i1e", "log_ndtr", "ndtr", "ndtri", "airy_ai", "bessel_j0",
                             "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
                             "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
                             "scaled_modified_bessel_k1", "spherical_bessel_j0"])
_POLYNOMIALS = [n for n in __all__ if n.endswith(("polynomial_t", "polynomial_u", "polynomial_v", "polynomial_w",
                                                  "polynomial_h", "polynomial_he", "polynomial_l", "polynomial_p"))]
_guard_namespace(globals(), _POLYNOMIALS, overrides={"x": "tensor_or_number", "n": "tensor_or_number"})
