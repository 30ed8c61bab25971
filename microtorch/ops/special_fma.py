"""torch's special-function kernels' arithmetic in numpy, so that their last bits come out the same.

- The fused multiply-add, a*b + c rounded once: the kernels are compiled with contraction on, so `a * b - c` and
  `a * b + c` are one fused instruction, which rounds once where numpy's two operations round twice. A recurrence of
  hundreds of steps (the polynomials of degree n) or a Chebyshev series that cancels (Clenshaw's) magnifies that
  last bit; computing the same fused steps gives torch's bits.
- The C library's exp, log, sin, cos and acos, which the kernels call element by element: numpy's own vectorized
  versions differ from them in the last place for some arguments. Likewise its pow (c_pow) and, through ctypes, its
  lgamma (c_lgamma, c_lgammas), which Python's math module does not expose as they are.
"""
import functools
import math

import numpy as np

from .._fma import fma, halves  # noqa: F401  (the fused multiply-add; its home is the base layer, for _random.py)

def _c_call(fn, v):
    """fn(v) with the C function's answers where Python's math raises instead"""
    try:
        return fn(v)
    except OverflowError:
        return math.inf
    except ValueError:  # log(0) is -inf; log of a negative, cos(inf), acos(2) are NaN
        return -math.inf if v == 0 else math.nan


def libm(name, a):
    """math.<name> (the C library's function) element by element, in a's dtype (float32: the double result
    rounded, as the C library's float functions nearly always round)"""
    fn = getattr(math, name)
    values = np.frompyfunc(lambda v: _c_call(fn, v), 1, 1)(a.astype(np.float64))
    return np.asarray(values, dtype=np.float64).astype(a.dtype) if a.size else a.copy()


def _c_pow(a, b):
    """the C library's pow(a, b); numpy's answer (the C one) where Python's math raises instead"""
    try:
        return math.pow(a, b)
    except (OverflowError, ValueError):  # pow(0, -1) is inf, pow(-2, 0.5) NaN, pow(10, 400) inf
        with np.errstate(all="ignore"):
            return float(np.power(np.float64(a), np.float64(b)))


_c_pow_each = np.frompyfunc(_c_pow, 2, 1)


def c_pow(a, b):
    """a ** b in float64 with the C library's pow, element by element: numpy's vectorized pow differs from it
    in the last place for about 3 arguments in 100, and a kernel's loop (zeta's) carries that difference on."""
    a, b = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(b, np.float64))
    return np.asarray(_c_pow_each(a, b), dtype=np.float64) if a.size else a * b


def _python_lgamma(v):
    """Python's own lgamma, with the C library's answers where it raises (inf at the poles)"""
    if math.isnan(v):
        return v
    return math.inf if math.isinf(v) or (v <= 0 and v == math.floor(v)) else math.lgamma(v)


@functools.cache
def _c_library_lgamma():
    """the C library's lgamma; Python's where no C library can be loaded (as in the browser's Pyodide)"""
    try:
        import ctypes
        import ctypes.util
        lgamma = ctypes.CDLL(ctypes.util.find_library("m")).lgamma
    except Exception:  # (a probe: in a browser find_library or CDLL may fail in ways of their own)
        return _python_lgamma
    lgamma.restype, lgamma.argtypes = ctypes.c_double, [ctypes.c_double]
    return lgamma


def c_lgamma(v):
    """lgamma of one number with the C library's lgamma, which torch's scalar kernels call. Python's math.lgamma is
    Python's own: it differs in the last place (exp(lgamma(8)) is 5040.000000000002 there, 5039.999999999993 in the
    C library), and near 1 and 2, where lgamma is 0, it is only good to 1e-9 of the value."""
    return _c_library_lgamma()(float(v))


@functools.cache
def _lgamma_each():
    return np.frompyfunc(_c_library_lgamma(), 1, 1)


def c_lgammas(a):
    """lgamma of each element of a, in float64, with the C library's lgamma (see c_lgamma)"""
    a = np.asarray(a, dtype=np.float64)
    return np.asarray(_lgamma_each()(a), dtype=np.float64) if a.size else a.copy()
