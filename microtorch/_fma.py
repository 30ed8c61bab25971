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
    """a*b + c with one rounding. float32: the product is exact in float64, and the sum (rounded to odd where it
    matters) rounds to float32 as the exact sum would. float64: Dekker's exact product p + e and Knuth's exact sum of p
    and c (s + t), then s + (t + e) with t + e rounded to odd (Boldo and Melquiond's emulation, which rounds once;
    plain t + e would round twice near a tie); where that is not finite (infinities, NaN, overflow in the split)
    the plain a*b + c, which is then the same, as it is where the result is 0 (its sign). a_halves: halves(a),
    when a loop multiplies by the same a at every step."""
    a, b, c = np.asarray(a), np.asarray(b), np.asarray(c)
    if np.result_type(a, b, c) == np.float32:
        return fma32(a, b, c)
    with np.errstate(invalid="ignore", over="ignore"):  # (an infinity's NaNs and overflows are replaced below)
        return fma64(a, b, c, a_halves)


def fma64(a, b, c, a_halves=None):
    """fma for float64 arrays, without fma's conversions and error-state switch: for loops that call it many times
    with numpy kept quiet around them."""
    p = a * b
    ah, al = halves(a) if a_halves is None else a_halves
    bh, bl = halves(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s, t = _two_sum(p, c)
    fused = s + _odd_sum(t, e)
    return np.where(np.isfinite(fused) & (fused != 0), fused, p + c)


def fma32_quiet(a, b, c):
    """fma32 for float32 arrays, numpy kept quiet by the caller"""
    return _fma32(np.multiply(a, b, dtype=np.float64), np.asarray(c, np.float64))


def fma32(a, b, c):
    """fma for float32 operands (arrays or numbers), the product exact in float64: the kernels' fast path"""
    with np.errstate(invalid="ignore"):  # (inf * 0: NaN, as the instruction gives)
        return _fma32(np.multiply(a, b, dtype=np.float64), np.float64(c) if np.ndim(c) == 0 else c.astype(np.float64))


def _fma32(p, c):
    """float32's p + c (p an exact product in float64), rounded once: the float64 sum rounds to float32 as the
    exact one would unless it lands on a float32 tie (its low 29 bits 1000...0), where it is redone rounded to odd
    (rare: checked with one mask rather than computed for every element)."""
    s = np.asarray(p + c)
    tie = (s.view(np.int64) & 0x1FFFFFFF) == 0x10000000  # (never an exact 0: p == -c needs no redoing)
    if tie.any():
        if s.size <= 256:  # (redone everywhere and picked: fewer numpy calls than picking the ties out first)
            s = np.where(tie, _odd_sum(p, c), s)
        else:  # (a large array has a few ties: only those redone)
            s[tie] = _odd_sum(np.broadcast_to(p, s.shape)[tie], np.broadcast_to(c, s.shape)[tie])
    return s.astype(np.float32)


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


def horner32(coefficients, x):
    """The polynomial with these float32 coefficients (highest degree first, numbers or arrays) at x, each step one
    fused multiply-add, as the compiled kernels evaluate theirs"""
    with np.errstate(invalid="ignore"):
        return horner32_quiet(coefficients, x)


def horner32_quiet(coefficients, x):
    """horner32, numpy kept quiet by the caller; x is float32. The steps stay in float64 between the roundings to
    float32 (every value is a float32 in a float64), so each step costs one product, one sum and the rounding."""
    x64 = np.asarray(x, np.float64)
    out = np.broadcast_to(np.asarray(coefficients[0], np.float64), x64.shape)
    for c in coefficients[1:]:
        out = _fma32(out * x64, np.asarray(c, np.float64)).astype(np.float64)
    return out.astype(np.float32)
