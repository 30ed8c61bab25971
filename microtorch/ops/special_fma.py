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
    """a*b + c with one rounding. float32: the product is exact in float64, and the sum rounded to odd there
    rounds to float32 as the exact sum would. float64: Dekker's exact product p + e and Knuth's exact sum of p
    and c (s + t), then s + (t + e) with t + e rounded to odd (Boldo and Melquiond's emulation, which rounds once;
    plain t + e would round twice near a tie); where that is not finite (infinities, NaN, overflow in the split)
    the plain a*b + c, which is then the same, as it is where the result is 0 (its sign). a_halves: halves(a),
    when a loop multiplies by the same a at every step."""
    a, b, c = np.asarray(a), np.asarray(b), np.asarray(c)
    with np.errstate(invalid="ignore", over="ignore"):  # (an infinity's NaNs and overflows are replaced below)
        if np.result_type(a, b, c) == np.float32:
            p = a.astype(np.float64) * b
            return np.where(p == -c, p + c, _odd_sum(p, c.astype(np.float64))).astype(np.float32)
        p = a * b
        ah, al = halves(a) if a_halves is None else a_halves
        bh, bl = halves(b)
        e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
        s, t = _two_sum(p, c)
        fused = s + _odd_sum(t, e)
        return np.where(np.isfinite(fused) & (fused != 0), fused, p + c)


def _two_sum(x, y):
    """x + y = s + t exactly (Knuth): s rounded, t what rounding lost"""
    s = x + y
    v = s - x
    return s, (x - (s - v)) + (y - v)


def _odd_sum(x, y):
    """x + y rounded to odd: exact, or else whichever neighbour has an odd last bit (so that rounding it again to
    fewer bits rounds as the exact sum would)"""
    s, t = _two_sum(x, y)
    s = np.asarray(s, np.float64)
    even = (s.view(np.int64) & 1) == 0
    return np.where((t != 0) & even & np.isfinite(s), np.nextafter(s, np.where(t > 0, np.inf, -np.inf)), s)


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
