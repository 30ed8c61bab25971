"""ln x as SLEEF computes it (its u10 log, AVX-512 build), the vector log torch's kernels call inside log_softmax,
so that microtorch gives their bits.

x = m 2^e with m in [0.75, 1.5) (the CPU's getexp and getmant), then ln x = e ln 2 + 2 atanh((m - 1)/(m + 1)), the
atanh by a short polynomial and the rest carried in pairs of numbers (a value and its rounding error: SLEEF's
"double-float" steps, each written out below with its fused multiply-adds). (Facts from SLEEF's sources, checked
bit for bit against torch in tests/test_log_softmax_bits.py.)
"""
import numpy as np

from ._fma import fma

_LN2 = {np.float32: (0.69314718246459960938, -1.904654323148236017e-09),
        np.float64: (0.693147180559945286226764, 2.319046813846299558417771e-17)}
_POLY_D = [0.1532076988502701353e+0, 0.1525629051003428716e+0, 0.1818605932937785996e+0, 0.2222214519839380009e+0,
           0.2857142932794299317e+0, 0.3999999999635251990e+0, 0.6666666666667333541e+0]  # (highest power first)


def log(d):
    """SLEEF's u10 log of a float32 or float64 array"""
    d = np.asarray(d)
    t = d.dtype.type
    with np.errstate(all="ignore"):  # (zeros, negatives, infinities and NaN are set at the end)
        e = _getexp(d * t(1 / 0.75 if t is np.float64 else np.float32(1) / np.float32(0.75)))
        e = np.where(np.isinf(e), t(128 if t is np.float32 else 1024), e)
        m = _getmant(d)
        xh, xl = _div2(*_add2(t(-1), m), *_add2(t(1), m))
        x2 = xh * xh
        sh, sl = _mul2(t(_LN2[t][0]), t(_LN2[t][1]), e)
        sh, sl = _add22(sh, sl, xh * t(2), xl * t(2))
        sh, sl = _add21(sh, sl, x2 * xh * _poly(x2, t))
        r = sh + sl
    r = np.where(d == 0, t(-np.inf), r)
    r = np.where(np.isposinf(d), t(np.inf), r)
    return np.where((d < 0) | np.isnan(d), t(np.nan), r)


def _poly(x2, t):
    if t is np.float32:
        p = fma(np.float32(0.3027294874), x2, np.float32(0.3996108174))
        return fma(p, x2, np.float32(0.6666694880))
    c = _POLY_D
    x4 = x2 * x2
    low = fma(x4, fma(x2, c[3], c[4]), fma(x2, c[5], c[6]))  # (Estrin, as SLEEF's POLY7)
    return fma(x4 * x4, fma(x4, c[0], fma(x2, c[1], c[2])), low)


def _getexp(v):
    """floor(log2 |v|) as a float, as AVX-512's getexp (subnormals by their value)"""
    mant, exp = np.frexp(np.abs(v))
    e = np.where(v == 0, v.dtype.type(-np.inf), (exp - 1).astype(v.dtype))
    return np.where(np.isinf(v), v.dtype.type(np.inf), e)


def _getmant(d):
    """the significand of d scaled into [0.75, 1.5), as AVX-512's getmant with that interval"""
    mant, _ = np.frexp(np.abs(d))  # (in [0.5, 1))
    return np.where(mant < 0.75, mant * 2, mant).astype(d.dtype)


def _add2(x, y):
    """x + y as a pair (value, rounding error)"""
    s = x + y
    v = s - x
    return s, (x - (s - v)) + (y - v)


def _add21(xh, xl, y):
    s = xh + y
    return s, ((xh - s) + y) + xl


def _add22(xh, xl, yh, yl):
    s = xh + yh
    return s, (((xh - s) + yh) + xl) + yl


def _mul2(xh, xl, y):
    s = xh * y
    return s, fma(xl, y, fma(xh, y, -s))


def _div2(nh, nl, dh, dl):
    t = dh.dtype.type(1) / dh
    s = nh * t
    u = fma(t, nh, -s)
    v = fma(-dl, t, fma(-dh, t, dh.dtype.type(1)))
    return s, fma(s, v, fma(nl, t, u))
