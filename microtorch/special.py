"""torch.special: the special functions under torch's names for them.

Most are microtorch's ops under a second name (expit is sigmoid, gammaln is lgamma, psi is digamma, gammainc is
igamma...), with the same nodes as in torch (torch.special.expit records SigmoidBackward0); xlog1py and zeta live
only here, as in torch, with torch's three nodes each (tensor and tensor, a number first, a number second); so do
the normal distribution's functions, erfcx, i0e, i1e and entr (ops/special_unary.py), and the Bessel family that
torch does not differentiate (ops/special_bessel.py).
"""
import microtorch as _mt

from .ops._checks import guard_namespace as _guard_namespace
from .ops.special import i1, xlog1py, zeta  # noqa: F401
from .ops.special_bessel import (airy_ai, bessel_j0, bessel_j1, bessel_y0, bessel_y1,  # noqa: F401
                                  modified_bessel_i0, modified_bessel_i1, modified_bessel_k0, modified_bessel_k1,
                                  scaled_modified_bessel_k0, scaled_modified_bessel_k1, spherical_bessel_j0)
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

__all__ = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc",
           "gammaln", "i0", "i0e", "i1", "i1e", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp", "modified_bessel_i0",
           "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round", "scaled_modified_bessel_k0",
           "scaled_modified_bessel_k1", "sinc", "softmax", "spherical_bessel_j0", "xlog1py", "xlogy", "zeta"]
_guard_namespace(globals(), ["xlog1py", "zeta"], overrides={"input": "tensor_or_number"})  # (zeta(2, t) too)
_guard_namespace(globals(), ["i1", "entr", "erfcx", "i0e", "i1e", "log_ndtr", "ndtr", "ndtri", "airy_ai", "bessel_j0",
                             "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
                             "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
                             "scaled_modified_bessel_k1", "spherical_bessel_j0"])
