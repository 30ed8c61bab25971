"""The C library's float32 expf, expm1f, log1pf, tanhf and erff, which torch's elementwise loops call on each
thread's tail (the elements after the last whole vector) and on strided inputs, so that microtorch gives their bits
there too.

These are glibc's (2.36, as on Debian 12): expf its own (a table of 2^(i/32) and a cubic, in double, in its build
with fused multiply-adds); the others Sun's fdlibm algorithms converted to float (a reduction, short polynomials and
a correction term, every step rounded to float32, no fused steps). Written here over numpy arrays, each branch of
the C code a mask; checked value for value against the C library in tests/test_libm_f32.py.
"""
from decimal import Decimal, getcontext

import numpy as np

from ._fma import fma

F32, I32 = np.float32, np.int32
_LN2_HI, _LN2_LO, _INV_LN2 = F32(6.9313812256e-01), F32(9.0580006145e-06), F32(1.4426950216e+00)
_ONE, _HALF, _TWO = F32(1), F32(0.5), F32(2)
_DEFAULT_NAN = np.array(0xffc00000, np.uint32).view(F32)  # (x86's NaN for an invalid operation: sign bit set)
_EXPM1_Q = [F32(v) for v in (-3.3333335072e-02, 1.5873016091e-03, -7.9365076090e-05, 4.0082177293e-06,
                             -2.0109921195e-07)]  # (expm1f's rational form, lowest degree first)


def _bits(x):
    return x.view(I32)


def _floats(i):
    return np.asarray(i, I32).view(F32)


def expm1f(x):
    """e^x - 1: x = k ln 2 + r (r as hi - lo), e^r - 1 by a rational form in r^2, then 2^k put back"""
    x = np.array(x, F32, ndmin=1)
    with np.errstate(all="ignore"):  # (every branch is computed on every element; the masks pick)
        hx, negative = _bits(x) & 0x7fffffff, np.signbit(x)
        k, r, c = _expm1_reduce(x, hx, negative)
        hfx = _HALF * r
        hxs = r * hfx
        r1 = _ONE + hxs * _poly(_EXPM1_Q, hxs)
        t = F32(3) - r1 * hfx
        e = hxs * ((r1 - t) / (F32(6) - r * t))
        out = np.where(k == 0, r - (r * e - hxs), _expm1_scaled(k, r, (r * (e - c) - c) - hxs))
        out = np.where(hx < 0x33000000, x, out)  # |x| < 2^-25: x itself
        out = np.where((hx >= 0x4195b844) & negative, F32(-1), out)  # below -27 ln 2: -1
        out = np.where((hx >= 0x42b17218) & ~negative, F32(np.inf), out)
        return np.where(np.isnan(x), x + x, out)


def _expm1_reduce(x, hx, negative):
    """(k, r, c): x = k ln 2 + r with r's rounding error c; k = 0 for |x| <= ln 2 / 2"""
    sign = np.where(negative, F32(-1), _ONE)
    near = hx < 0x3F851592  # |x| < 1.5 ln 2: k = +-1
    k = np.where(near, sign.astype(I32), (_INV_LN2 * x + _HALF * sign).astype(I32))
    t = k.astype(F32)
    hi = np.where(near, x - sign * _LN2_HI, x - t * _LN2_HI)
    lo = np.where(near, sign * _LN2_LO, t * _LN2_LO)
    r = hi - lo
    c = (hi - r) - lo
    reduced = hx > 0x3eb17218
    return np.where(reduced, k, 0), np.where(reduced, r, x), np.where(reduced, c, F32(0))


def _expm1_scaled(k, r, e):
    """e^x - 1 from r, its correction e and k (fdlibm's cases for k = -1, 1, small, large)"""
    shift = np.clip(k, 0, 31)
    small = _floats(0x3f800000 - (0x1000000 >> shift)) - (e - r)  # 2 <= k < 23: (1 - 2^-k) - (e - r)
    large = (r - (e + _floats((0x7f - np.clip(k, 0, 127)) << 23))) + _ONE  # 23 <= k <= 56
    far = _ONE - (e - r)  # k <= -2 or k > 56: (1 - (e - r)) 2^k - 1
    y = np.where(k < 23, small, large)
    y = np.where((k <= -2) | (k > 56), far, y)
    y = _floats(_bits(y) + (k << 23))
    y = np.where((k <= -2) | (k > 56), y - _ONE, y)
    y = np.where(k == 1, np.where(r < F32(-0.25), -_TWO * (e - (r + _HALF)), _ONE + _TWO * (r - e)), y)
    return np.where(k == -1, _HALF * (r - e) - _HALF, y)


_LP = [F32(v) for v in (6.6666668653e-01, 4.0000000596e-01, 2.8571429849e-01, 2.2222198546e-01, 1.8183572590e-01,
                        1.5313838422e-01, 1.4798198640e-01)]  # (lowest degree first, as _poly takes them)


def log1pf(x):
    """log(1 + x): 1 + x = 2^k (1 + f) with f in [sqrt(2)/2 - 1, sqrt(2) - 1] and the rounding of 1 + x kept as c,
    then log(1 + f) = f - (f^2/2 - s (f^2/2 + R(s^2))) with s = f / (2 + f)"""
    x = np.array(x, F32, ndmin=1)
    with np.errstate(all="ignore"):
        hx = _bits(x)
        k, f, c, hu = _log1p_reduce(x, hx)
        hfsq = _HALF * f * f
        kf = k.astype(F32)
        z_small = hfsq * (_ONE - F32(0.66666666666666666) * f)  # |f| < 2^-20
        small = np.where(k == 0, f - z_small, kf * _LN2_HI - ((z_small - (kf * _LN2_LO + c)) - f))
        small = np.where(f == 0, np.where(k == 0, F32(0), kf * _LN2_HI + (c + kf * _LN2_LO)), small)
        s = f / (_TWO + f)
        z = s * s
        big_r = z * _poly(_LP, z)
        out = np.where(k == 0, f - (hfsq - s * (hfsq + big_r)),
                       kf * _LN2_HI - ((hfsq - (s * (hfsq + big_r) + (kf * _LN2_LO + c))) - f))
        out = np.where(hu == 0, small, out)
        ax = hx & 0x7fffffff
        tiny = (hx < 0x3ed413d7) & (ax < 0x31000000)  # |x| < 2^-29
        out = np.where(tiny, np.where(ax < 0x24800000, x, x - x * x * _HALF), out)
        out = np.where(hx >= 0x7f800000, x + x, out)
        below = np.where(x == F32(-1), F32(-np.inf), _DEFAULT_NAN)  # (x - x) / (x - x): the CPU's default NaN
        out = np.where((hx < 0x3ed413d7) & (ax >= 0x3f800000), below, out)
        return np.where(np.isnan(x), x + x, out)


def _log1p_reduce(x, hx):
    """(k, f, c, hu): for -0.2929 < x < 0.41422 k = 0 and f = x (hu 1, any non-zero); else 1 + x = 2^k (1 + f)
    with c the rounding error of 1 + x divided by it, hu f's significand bits (0: |f| < 2^-20)"""
    direct = (hx < 0x3ed413d7) & ((hx > 0) | (hx <= I32(np.uint32(0xbe95f61f).view(I32))))
    moderate = hx < 0x5a000000
    u = np.where(moderate, _ONE + x, x)
    k = (_bits(u) >> 23) - 127
    c = np.where(k > 0, _ONE - (u - x), x - (u - _ONE)) / u
    c = np.where(moderate, c, F32(0))
    hu = _bits(u) & 0x007fffff
    up = hu >= 0x3504f7
    u = _floats(np.where(up, hu | 0x3f000000, hu | 0x3f800000))
    k = np.where(up, k + 1, k)
    hu = np.where(up, (0x00800000 - hu) >> 2, hu)
    f = u - _ONE
    return np.where(direct, 0, k), np.where(direct, x, f), np.where(direct, F32(0), c), np.where(direct, 1, hu)


def tanhf(x):
    """tanh x = 1 - 2 / (e^(2|x|) - 1 + 2) for |x| >= 1, -t / (t + 2) with t = e^(-2|x|) - 1 below, its sign put
    back; +-1 from 22 on"""
    x = np.array(x, F32, ndmin=1)
    with np.errstate(all="ignore"):
        ix, a = _bits(x) & 0x7fffffff, np.abs(x)
        t_big, t_small = expm1f(_TWO * a), expm1f(-_TWO * a)
        z = np.where(ix >= 0x3f800000, _ONE - _TWO / (t_big + _TWO), -t_small / (t_small + _TWO))
        z = np.where(ix >= 0x41b00000, _ONE, z)
        z = np.where(np.signbit(x), -z, z)
        z = np.where(ix < 0x24000000, x * (_ONE + x), z)
        z = np.where(ix == 0, x, z)
        return np.where(ix >= 0x7f800000, np.where(np.signbit(x), _ONE / x - _ONE, _ONE / x + _ONE), z)


def _two_to_the_32ths():
    """glibc's table: the bits of 2^(i/32), each less i << 47 (the part that adding k << 47 puts back)."""
    getcontext().prec = 40
    bits = [np.float64(float(Decimal(2) ** (Decimal(i) / 32))).view(np.uint64) for i in range(32)]
    return np.array([b - np.uint64(i << 47) for i, b in enumerate(bits)], np.uint64)


_EXP2F_TABLE = _two_to_the_32ths()
_EXPF_CUBIC = [float.fromhex("0x1.c6af84b912394p-5") / 32 ** 3, float.fromhex("0x1.ebfce50fac4f3p-3") / 32 ** 2,
               float.fromhex("0x1.62e42ff0c52d6p-1") / 32]


def expf(x):
    """glibc's expf (its FMA build): x 32/ln 2 = k + r, e^x = 2^(k/32) (table times 2^(k//32)) times a cubic in r,
    in double, rounded once to float."""
    x = np.asarray(x, F32)
    with np.errstate(over="ignore", invalid="ignore"):  # (infinities and NaN are replaced below)
        z = float.fromhex("0x1.71547652b82fep+0") * 32 * x.astype(np.float64)
        shifted = z + float.fromhex("0x1.8p+52")
        k = shifted.view(np.uint64)
        r = z - (shifted - float.fromhex("0x1.8p+52"))
        s = (_EXP2F_TABLE[k % np.uint64(32)] + (k << np.uint64(47))).view(np.float64)
        y = _expf_rounded(r, s)
    y = np.where(x > F32(float.fromhex("0x1.62e42ep6")), F32(np.inf), y)
    return np.where(x < F32(-float.fromhex("0x1.9fe368p6")), F32(0), np.where(np.isnan(x), x, y))


def _expf_rounded(r, s):
    """glibc's cubic in r times s, rounded to float: its three fused steps matter only where the double result lies
    within a few of its units of a float's tie (a few times in a billion), so the plain steps are computed everywhere
    and the fused ones only there (the same float either way elsewhere: the two differ by under 4 units)."""
    c0, c1, c2 = _EXPF_CUBIC
    y = ((c0 * r + c1) * (r * r) + (c2 * r + 1.0)) * s
    near = np.abs((y.view(np.int64) & 0x1FFFFFFF) - 0x10000000) < 64
    if near.any():
        y = np.where(near, fma(fma(c0, r, c1), r * r, fma(c2, r, 1.0)) * s, y)
    return y.astype(F32)


def _coefficients(*values):
    return [F32(v) for v in values]


_ERF_SMALL = (_coefficients(1.2837916613e-01, -3.2504209876e-01, -2.8481749818e-02, -5.7702702470e-03,
                            -2.3763017452e-05),
              _coefficients(1, 3.9791721106e-01, 6.5022252500e-02, 5.0813062117e-03, 1.3249473704e-04,
                            -3.9602282413e-06))
_ERF_NEAR_ONE = (_coefficients(-2.3621185683e-03, 4.1485610604e-01, -3.7220788002e-01, 3.1834661961e-01,
                               -1.1089469492e-01, 3.5478305072e-02, -2.1663755178e-03),
                 _coefficients(1, 1.0642088205e-01, 5.4039794207e-01, 7.1828655899e-02, 1.2617121637e-01,
                               1.3637083583e-02, 1.1984500103e-02))
_ERFC_MID = (_coefficients(-9.8649440333e-03, -6.9385856390e-01, -1.0558626175e+01, -6.2375331879e+01,
                           -1.6239666748e+02, -1.8460508728e+02, -8.1287437439e+01, -9.8143291473e+00),
             _coefficients(1, 1.9651271820e+01, 1.3765776062e+02, 4.3456588745e+02, 6.4538726807e+02,
                           4.2900814819e+02, 1.0863500214e+02, 6.5702495575e+00, -6.0424413532e-02))
_ERFC_FAR = (_coefficients(-9.8649431020e-03, -7.9928326607e-01, -1.7757955551e+01, -1.6063638306e+02,
                           -6.3756646729e+02, -1.0250950928e+03, -4.8351919556e+02),
             _coefficients(1, 3.0338060379e+01, 3.2579251099e+02, 1.5367296143e+03, 3.1998581543e+03,
                           2.5530502930e+03, 4.7452853394e+02, -2.2440952301e+01))
_ERX, _EFX = F32(8.4506291151e-01), F32(1.2837916613e-01)


def _poly(coefficients, z):
    """c0 + z (c1 + z (c2 + ...)), each step rounded"""
    out = coefficients[-1]
    for c in coefficients[-2::-1]:
        out = c + z * out
    return out


def erff(x):
    """erf x: x (1 + R(x^2)/S(x^2)) below 0.84375, erx + P(|x|-1)/Q below 1.25, else 1 - e^(-z^2 - 0.5625)
    e^((z - |x|)(z + |x|) + R/S) / |x| with z |x| cut to 12 bits (R, S rational in 1/x^2); +-1 from 6 on"""
    x = np.array(x, F32, ndmin=1)
    with np.errstate(all="ignore"):
        ix, a, negative = _bits(x) & 0x7fffffff, np.abs(x), np.signbit(x)
        z = x * x
        small = x + x * (_poly(_ERF_SMALL[0], z) / _poly(_ERF_SMALL[1], z))
        small = np.where(ix < 0x31800000, x + _EFX * x, small)  # |x| < 2^-28
        small = np.where(ix < 0x04000000, F32(0.0625) * (F32(16) * x + (F32(16) * _EFX) * x), small)
        s = a - _ONE
        ratio = _poly(_ERF_NEAR_ONE[0], s) / _poly(_ERF_NEAR_ONE[1], s)
        near_one = np.where(negative, -_ERX - ratio, _ERX + ratio)
        s = _ONE / (a * a)
        mid = ix < 0x4036DB6E  # |x| < 1/0.35
        big_r = np.where(mid, _poly(_ERFC_MID[0], s), _poly(_ERFC_FAR[0], s))
        big_s = np.where(mid, _poly(_ERFC_MID[1], s), _poly(_ERFC_FAR[1], s))
        cut = _floats(_bits(a) & I32(np.uint32(0xfffff000).view(I32)))
        r = expf(-cut * cut - F32(0.5625)) * expf((cut - a) * (cut + a) + big_r / big_s)
        tail = np.where(negative, r / a - _ONE, _ONE - r / a)
        out = np.where(ix < 0x3f580000, small, np.where(ix < 0x3fa00000, near_one, tail))
        out = np.where(ix >= 0x40c00000, np.where(negative, F32(-1), _ONE), out)
        return np.where(ix >= 0x7f800000, np.where(negative, F32(-1), _ONE) + _ONE / x, out)
