"""SLEEF's "double-float" steps: a float32 value carried as a pair (hi, lo), hi the rounded value and lo what rounding
lost, so that its u10 functions (log, log1p, expm1, which torch's float32 vector loops call) keep about 48 bits
through their middle steps. Each step as SLEEF writes it for a CPU with fused multiply-adds; `_p` is a pair and `_f`
one float in the names (SLEEF's dfadd2_vf2_vf2_vf is add2_pf). The `add2` steps are exact sums of any two values,
the `add` ones assume the first is the larger.
"""
import numpy as np

from ._fma import fma32

F32 = np.float32


def two_sum(x, y):
    """x + y as a pair, exactly (dfadd2_vf2_vf_vf)"""
    s = x + y
    v = s - x
    return s, (x - (s - v)) + (y - v)


def add_fp(x, yh, yl):
    s = x + yh
    return s, ((x - s) + yh) + yl


def add_pf(xh, xl, y):
    s = xh + y
    return s, ((xh - s) + y) + xl


def add_pp(xh, xl, yh, yl):
    s = xh + yh
    return s, (((xh - s) + yh) + xl) + yl


def add2_pf(xh, xl, y):
    s, t = two_sum(xh, y)
    return s, t + xl


def add2_pp(xh, xl, yh, yl):
    s, t = two_sum(xh, yh)
    return s, t + (xl + yl)


def mul_pf(xh, xl, y):
    s = xh * y
    return s, fma32(xl, y, fma32(xh, y, -s))


def mul_pp(xh, xl, yh, yl):
    s = xh * yh
    return s, fma32(xh, yl, fma32(xl, yh, fma32(xh, yh, -s)))


def square_p(xh, xl):
    s = xh * xh
    return s, fma32(xh + xh, xl, fma32(xh, xh, -s))


def div_pp(nh, nl, dh, dl):
    t = F32(1) / dh
    s = nh * t
    u = fma32(t, nh, -s)
    v = fma32(-dl, t, fma32(-dh, t, F32(1)))
    return s, fma32(s, v, fma32(nl, t, u))


def reciprocal_p(dh, dl):
    """1 / (dh + dl) as a pair (dfrec_vf2_vf2)"""
    s = F32(1) / dh
    return s, s * fma32(-dl, s, fma32(-dh, s, F32(1)))
