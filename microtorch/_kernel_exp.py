"""e^x as torch's CPU kernels compute it inside sigmoid, silu and the others that call `Vectorized::exp`, so that
microtorch gives their bits.

torch's elementwise loop runs over 128 bytes at a time (32 floats or 16 doubles) with SLEEF's exp, the vector math
library's (its u10 variant: a Cody-Waite reduction by ln 2 and a polynomial, every multiply-add fused), and over
the rest of each thread's share (its tail) and over strided inputs with the C library's exp (glibc's: a table of
2^(i/32) and a cubic, in double). (Facts about SLEEF, glibc and torch's loops from their sources, checked bit for
bit against torch in tests/test_kernel_exp_bits.py.)
"""
import math
from decimal import Decimal, getcontext

import numpy as np

from ._fma import fma

F32 = np.float32
_EXPF_POLY = [0.000198527617612853646278381, 0.00139304355252534151077271, 0.00833336077630519866943359,
              0.0416664853692054748535156, 0.166666671633720397949219, 0.5]
_EXPD_POLY = [0.2081276378237164457e-8, 0.2511210703042288022e-7, 0.2755762628169491192e-6,
              0.2755723402025388239e-5, 0.2480158687479686264e-4, 0.1984126989855865850e-3,
              0.1388888888914497797e-2, 0.8333333333314938210e-2, 0.4166666666666602598e-1,
              0.1666666666666669072e+0]  # (highest power first)
_R_LN2 = 1.442695040888963407359924681001892137426645954152985934135449406931


def expf(d):
    """float32 e^d: d = q ln 2 + s with q an integer (ln 2 in two parts), e^s by a degree-7 polynomial, times 2^q;
    below -104 exactly 0, above 100 inf."""
    d = np.asarray(d, F32)
    q = np.rint(d * F32(_R_LN2))
    s = fma(q, F32(-0.693145751953125), d)
    s = fma(q, F32(-1.428606765330187045e-06), s)
    u = np.full_like(s, F32(_EXPF_POLY[0]))
    for c in _EXPF_POLY[1:]:
        u = fma(u, s, F32(c))
    u = F32(1) + fma(s * s, u, s)
    return np.where(d > F32(100), F32(np.inf), np.where(d < F32(-104), F32(0), _times_power_of_two(u, q)))


def expd(d):
    """float64 e^d: the same reduction, a degree-12 polynomial whose first ten coefficients are summed in Estrin's
    order (pairs, then by s^2, s^4, s^8), then three fused steps; above 709.78 inf, below -1000 exactly 0."""
    d = np.asarray(d, np.float64)
    q = np.rint(d * _R_LN2)
    s = fma(q, -.69314718055966295651160180568695068359375, d)
    s = fma(q, -.28235290563031577122588448175013436025525412068e-12, s)
    s2 = s * s
    s4 = s2 * s2
    c = _EXPD_POLY
    pair = [fma(s, c[i], c[i + 1]) for i in range(0, 10, 2)]  # (c9 s + c8, c7 s + c6, ... c1 s + c0)
    low = fma(s4, fma(s2, pair[1], pair[2]), fma(s2, pair[3], pair[4]))
    u = fma(s4 * s4, pair[0], low)
    for k in (0.5, 1.0, 1.0):
        u = fma(u, s, k)
    return np.where(d > 709.78271114955742909217217426, np.inf, np.where(d < -1000, 0.0, _times_power_of_two(u, q)))


def _times_power_of_two(u, q):
    """u 2^q, in two factors (so that a q near the exponent's limit does not overflow early)"""
    qi = np.nan_to_num(q, nan=0.0, posinf=0.0, neginf=0.0).astype(np.int64)
    half = qi >> 1
    with np.errstate(over="ignore", invalid="ignore"):
        return u * np.ldexp(u.dtype.type(1), half) * np.ldexp(u.dtype.type(1), qi - half)


def exp(x, shares, layout=None):
    """e^x of a float32 or float64 array as torch's vector kernels compute it: SLEEF's exp on the vector lanes, the
    C library's on each tail. `shares(n)`: the [start, stop) of each thread's part of a loop of n elements. layout:
    the kernel's input, when x was computed from it (-x of a strided view is contiguous, the view is not)."""
    layout = x if layout is None else layout
    if x.ndim == 0 or not _dense(layout):  # (torch's loop over a strided input is the scalar one)
        return libm_exp(x)
    flat, order = _in_memory_order(x, layout)
    lanes = vector_lanes(flat.size, x.itemsize, shares)
    with np.errstate(over="ignore"):
        out = np.where(lanes, (expf if x.dtype == F32 else expd)(flat), libm_exp(flat))
    return out.reshape([x.shape[d] for d in order]).transpose(np.argsort(order))


def vector_lanes(n, itemsize, shares):
    """A mask over n elements in memory order: True where the vector loop computes them (runs of 128 bytes from
    the start of each thread's share), False on each share's tail."""
    step = 128 // itemsize
    mask = np.zeros(n, bool)
    for start, stop in shares(n):
        mask[start:stop - (stop - start) % step] = True
    return mask


def libm_exp(x):
    """The C library's exp (the scalar one torch's loop calls): glibc's expf, or Python's math.exp for doubles
    (the same C function; numpy's own exp differs from it in the last bit now and then)."""
    x = np.asarray(x)
    if x.dtype == F32:
        return libm_expf(x)
    return np.asarray(np.frompyfunc(_math_exp, 1, 1)(x), np.float64) if x.size else x.copy()


def _math_exp(v):
    try:
        return math.exp(v)
    except OverflowError:
        return math.inf


def _two_to_the_32ths():
    """glibc's table: the bits of 2^(i/32), each less i << 47 (the part that adding k << 47 puts back)."""
    getcontext().prec = 40
    bits = [np.float64(float(Decimal(2) ** (Decimal(i) / 32))).view(np.uint64) for i in range(32)]
    return np.array([b - np.uint64(i << 47) for i, b in enumerate(bits)], np.uint64)


_EXP2F_TABLE = _two_to_the_32ths()
_EXPF_CUBIC = [float.fromhex("0x1.c6af84b912394p-5") / 32 ** 3, float.fromhex("0x1.ebfce50fac4f3p-3") / 32 ** 2,
               float.fromhex("0x1.62e42ff0c52d6p-1") / 32]


def libm_expf(x):
    """glibc's expf (its FMA build): x 32/ln 2 = k + r, e^x = 2^(k/32) (table times 2^(k//32)) times a cubic in r,
    in double, rounded once to float."""
    x = np.asarray(x, F32)
    with np.errstate(over="ignore", invalid="ignore"):  # (infinities and NaN are replaced below)
        z = float.fromhex("0x1.71547652b82fep+0") * 32 * x.astype(np.float64)
        shifted = z + float.fromhex("0x1.8p+52")
        k = shifted.view(np.uint64)
        r = z - (shifted - float.fromhex("0x1.8p+52"))
        s = (_EXP2F_TABLE[k % np.uint64(32)] + (k << np.uint64(47))).view(np.float64)
        c0, c1, c2 = _EXPF_CUBIC
        y = (fma(fma(c0, r, c1), r * r, fma(c2, r, 1.0)) * s).astype(F32)
    y = np.where(x > F32(float.fromhex("0x1.62e42ep6")), F32(np.inf), y)
    return np.where(x < F32(-float.fromhex("0x1.9fe368p6")), F32(0), np.where(np.isnan(x), x, y))


def _dense(x):
    """x's elements fill one block of memory (its dims in any order): torch's loop then runs over it as one row."""
    expected = x.itemsize
    for d in sorted(range(x.ndim), key=lambda d: x.strides[d]):
        if x.shape[d] != 1 and x.strides[d] != expected:
            return False
        expected *= x.shape[d]
    return True


def _in_memory_order(x, layout):
    """x's elements in the order layout's lie in memory (layout dense), and the order of dims that gives it."""
    order = sorted(range(x.ndim), key=lambda d: -layout.strides[d])
    return np.ascontiguousarray(x.transpose(order)).reshape(-1), order
