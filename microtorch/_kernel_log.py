"""float32 ln x as SLEEF computes it (its u10 log, AVX-512 build), the vector log torch's kernels call inside
log_softmax, so that microtorch gives their bits (float64 stays with numpy's, as in _kernel_exp.py).

x = m 2^e with m in [0.75, 1.5) (the CPU's getexp and getmant), then ln x = e ln 2 + 2 atanh((m - 1)/(m + 1)), the
atanh by a short polynomial and the rest carried in pairs of numbers (a value and its rounding error: SLEEF's
"double-float" steps, each written out below with its fused multiply-adds). (Facts from SLEEF's sources, checked
bit for bit against torch in tests/test_log_softmax_bits.py.)
"""
import numpy as np

from . import _libm_f32
from ._kernel_exp import by_lanes
from ._double_float import add_pf, add_pp, div_pp, mul_pf, two_sum
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
        xh, xl = div_pp(*two_sum(F32(-1), m), *two_sum(F32(1), m))
        x2 = xh * xh
        sh, sl = mul_pf(*_LN2, e)
        sh, sl = add_pp(sh, sl, xh * F32(2), xl * F32(2))
        poly = fma32(fma32(F32(0.3027294874), x2, F32(0.3996108174)), x2, F32(0.6666694880))
        sh, sl = add_pf(sh, sl, x2 * xh * poly)
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


def log1p(d, lanes):
    """log(1 + d) of a float32 array as torch's kernels compute it: SLEEF's u10 log1p where `lanes` (the vector
    loop's elements, _kernel_exp.lane_mask), the C library's log1pf elsewhere."""
    return by_lanes(d, lanes, log1p_vector, _libm_f32.log1pf)


def log1p_vector(d):
    """SLEEF's u10 log1p of a float32 array (torch's vector loops): 1 + d = m 2^e as in log (m from d directly, not from the rounded 1 + d), then the same
    atanh series; beyond 1e23 its log of d"""
    with np.errstate(all="ignore"):  # (-1, below -1, infinities and NaN are set at the end)
        e = _getexp((d + F32(1)) * (F32(1) / F32(0.75)))
        e = np.where(np.isposinf(e), F32(128), e)
        t = np.ldexp(F32(1), -np.rint(e).astype(np.int32)).astype(F32)
        m = fma32(d, t, t - F32(1))
        sh, sl = mul_pf(*_LN2, e)
        two_m = F32(2) + m
        xh, xl = div_pp(m, F32(0), two_m, (F32(2) - two_m) + m)
        x2 = xh * xh
        poly = fma32(fma32(F32(0.3027294874), x2, F32(0.3996108174)), x2, F32(0.6666694880))
        sh, sl = add_pp(sh, sl, xh * F32(2), xl * F32(2))
        sh, sl = add_pf(sh, sl, x2 * xh * poly)
        r = sh + sl
    big = d > F32(1e23)  # (rare: its log for those only)
    if big.any():
        r = np.asarray(r)
        r[big] = log(d[big])
    r = np.where(d < F32(-1), F32(np.nan), np.where(d == F32(-1), F32(-np.inf), r))
    return np.where((d == 0) & np.signbit(d), F32(-0.0), r)
