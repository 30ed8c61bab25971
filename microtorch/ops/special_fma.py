"""The fused multiply-add, a*b + c rounded once, in numpy. torch's special-function kernels are compiled with
contraction on: the compiler makes `a * b - c` and `a * b + c` into one fused instruction, which rounds once where
numpy's two operations round twice. A recurrence of hundreds of steps (the polynomials of degree n) or a Chebyshev
series that cancels (Clenshaw's) magnifies that last bit; computing the same fused steps gives torch's bits."""
import numpy as np

_SPLIT = 134217729.0  # 2^27 + 1: Veltkamp's constant, splitting a double into two halves of 26 bits


def _halves(v):
    t = _SPLIT * v
    hi = t - (t - v)
    return hi, v - hi


def fma(a, b, c):
    """a*b + c with one rounding. float32: the product is exact in float64. float64: Dekker's exact product
    p + e and Knuth's exact sum of p and c (s + t), then one rounding of s + (t + e); where that is not finite
    (infinities, NaN, overflow in the split) the plain a*b + c, which is then the same."""
    a, b, c = np.asarray(a), np.asarray(b), np.asarray(c)
    if np.result_type(a, b, c) == np.float32:
        return (a.astype(np.float64) * b + c).astype(np.float32)
    p = a * b
    ah, al = _halves(a)
    bh, bl = _halves(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s = p + c
    v = s - p
    t = (p - (s - v)) + (c - v)
    fused = s + (t + e)
    return np.where(np.isfinite(fused), fused, p + c)
