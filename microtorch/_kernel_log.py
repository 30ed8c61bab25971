"""float32 ln x as SLEEF computes it (its u10 log, AVX-512 build), the vector log torch's kernels call inside
log_softmax, so that microtorch gives their bits (float64 stays with numpy's, as in _kernel_exp.py).

x = m 2^e with m in [0.75, 1.5) (the CPU's getexp and getmant), then ln x = e ln 2 + 2 atanh((m - 1)/(m + 1)), the
atanh by a short polynomial and the rest carried in pairs of numbers (a value and its rounding error: SLEEF's
"double-float" steps, each written out below with its fused multiply-adds). (Facts from SLEEF's sources, checked
bit for bit against torch in tests/test_log_softmax_bits.py.)
"""
import numpy as np

from ._fma import fma32

F32 = np.float32
_LN2 = (F32(0.69314718246459960938), F32(-1.904654323148236017e-09))  # (ln 2 as a pair)


def log(d):
    """SLEEF's u10 log of a float32 array"""
    d = np.asarray(d, F32)
    with np.errstate(all="ignore"):  # (zeros, negatives, infinities and NaN are set at the end)
        e = _getexp(d * (F32(1) / F32(0.75)))
        e = np.where(np.isinf(e), F32(128), e)
        m = _getmant(d)
        xh, xl = _div2(*_add2(F32(-1), m), *_add2(F32(1), m))
        x2 = xh * xh
        sh, sl = _mul2(*_LN2, e)
        sh, sl = _add22(sh, sl, xh * F32(2), xl * F32(2))
        poly = fma32(fma32(F32(0.3027294874), x2, F32(0.3996108174)), x2, F32(0.6666694880))
        sh, sl = _add21(sh, sl, x2 * xh * poly)
        r = sh + sl
    r = np.where(d == 0, F32(-np.inf), r)
    r = np.where(np.isposinf(d), F32(np.inf), r)
    return np.where((d < 0) | np.isnan(d), F32(np.nan), r)


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
    return s, fma32(xl, y, fma32(xh, y, -s))


def _div2(nh, nl, dh, dl):
    t = F32(1) / dh
    s = nh * t
    u = fma32(t, nh, -s)
    v = fma32(-dl, t, fma32(-dh, t, F32(1)))
    return s, fma32(s, v, fma32(nl, t, u))
