"""torch's special-function kernels' arithmetic in numpy, so that their last bits come out the same.

- The fused multiply-add, a*b + c rounded once: the kernels are compiled with contraction on, so `a * b - c` and
  `a * b + c` are one fused instruction, which rounds once where numpy's two operations round twice. A recurrence of
  hundreds of steps (the polynomials of degree n) or a Chebyshev series that cancels (Clenshaw's) magnifies that
  last bit; computing the same fused steps gives torch's bits.
- The C library's exp, log, sin, cos and acos, which the kernels call element by element: numpy's own vectorized
  versions differ from them in the last place for some arguments.
"""
import math

import numpy as np

_SPLIT = 134217729.0  # 2^27 + 1: Veltkamp's constant, splitting a double into two halves of 26 bits


def halves(v):
    """v = hi + lo, each with 26 significant bits (Veltkamp): products of halves are exact"""
    t = _SPLIT * v
    hi = t - (t - v)
    return hi, v - hi


def fma(a, b, c, a_halves=None):
    """a*b + c with one rounding. float32: the product is exact in float64. float64: Dekker's exact product
    p + e and Knuth's exact sum of p and c (s + t), then one rounding of s + (t + e); where that is not finite
    (infinities, NaN, overflow in the split) the plain a*b + c, which is then the same. a_halves: halves(a), when
    a loop multiplies by the same a at every step."""
    a, b, c = np.asarray(a), np.asarray(b), np.asarray(c)
    if np.result_type(a, b, c) == np.float32:
        return (a.astype(np.float64) * b + c).astype(np.float32)
    p = a * b
    ah, al = halves(a) if a_halves is None else a_halves
    bh, bl = halves(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s = p + c
    v = s - p
    t = (p - (s - v)) + (c - v)
    fused = s + (t + e)
    return np.where(np.isfinite(fused), fused, p + c)


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
