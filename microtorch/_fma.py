"""The fused multiply-add a*b + c, rounded once, in numpy: torch's kernels are compiled with contraction on, so
`a * b + c` there is one fused instruction where numpy's two operations round twice. Special functions
(ops/special_fma.py) and random draws (_random.py) compute the same fused steps to give torch's last bits.
"""
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
