"""float32 e^x as torch's CPU kernels compute it inside sigmoid, softmax and the others that call
`Vectorized::exp`, so that microtorch gives their bits.

torch's elementwise loop runs over 128 bytes at a time (32 floats) with SLEEF's exp, the vector math library's (its
u10 variant: a Cody-Waite reduction by ln 2 and a polynomial, every multiply-add fused), and over the rest of each
thread's share (its tail) and over strided inputs with the C library's expf (glibc's: a table of 2^(i/32) and a
cubic, in double). (Facts about SLEEF, glibc and torch's loops from their sources, checked bit for bit against
torch in tests/test_kernel_exp_bits.py.) float64 stays with numpy's exp: SLEEF's double steps need an exact
double fma, which numpy can only emulate at some 50 times the cost, too slow for every training step.
"""
from decimal import Decimal, getcontext

import numpy as np

from ._fma import fma, fma32

F32 = np.float32
_EXPF_POLY = [0.000198527617612853646278381, 0.00139304355252534151077271, 0.00833336077630519866943359,
              0.0416664853692054748535156, 0.166666671633720397949219, 0.5]
_R_LN2 = 1.442695040888963407359924681001892137426645954152985934135449406931


def expf(d):
    """float32 e^d: d = q ln 2 + s with q an integer (ln 2 in two parts), e^s by a degree-7 polynomial, times 2^q;
    below -104 exactly 0, above 100 inf."""
    d = np.asarray(d, F32)
    q = np.rint(d * F32(_R_LN2))
    s = fma32(q, F32(-0.693145751953125), d)
    s = fma32(q, F32(-1.428606765330187045e-06), s)
    u = np.full_like(s, F32(_EXPF_POLY[0]))
    for c in _EXPF_POLY[1:]:
        u = fma32(u, s, F32(c))
    u = F32(1) + fma32(s * s, u, s)
    return np.where(d > F32(100), F32(np.inf), np.where(d < F32(-104), F32(0), _times_power_of_two(u, q)))


def _times_power_of_two(u, q):
    """u 2^q, in two factors (so that a q near the exponent's limit does not overflow early), each 2^h made from its
    bits (q is clipped to where it matters: beyond it the result is 0 or inf anyway, set by the caller)"""
    with np.errstate(invalid="ignore"):  # (a NaN's q: its u is NaN already)
        qi = np.clip(np.nan_to_num(q), -200, 200).astype(np.int32)
    half = qi >> 1
    return u * _power_of_two(half) * _power_of_two(qi - half)


def _power_of_two(h):
    return ((h + 127) << 23).astype(np.int32).view(F32)


def exp(x, shares, layout=None):
    """e^x of a float32 array as torch's vector kernels compute it: SLEEF's exp on the vector lanes, the C library's
    on each tail. `shares(n)`: the [start, stop) of each thread's part of a loop of n elements. layout: the kernel's
    input, when x was computed from it (-x of a strided view is contiguous, the view is not)."""
    layout = x if layout is None else layout
    if x.ndim == 0 or not _dense(layout):  # (torch's loop over a strided input is the scalar one)
        return libm_expf(x)
    flat, order = _in_memory_order(x, layout)
    lanes = vector_lanes(flat.size, x.itemsize, shares)
    out = expf(flat)
    if not lanes.all():
        out[~lanes] = libm_expf(flat[~lanes])
    return out.reshape([x.shape[d] for d in order]).transpose(np.argsort(order))


def vector_lanes(n, itemsize, shares):
    """A mask over n elements in memory order: True where the vector loop computes them (runs of 128 bytes from
    the start of each thread's share), False on each share's tail."""
    step = 128 // itemsize
    mask = np.zeros(n, bool)
    for start, stop in shares(n):
        mask[start:stop - (stop - start) % step] = True
    return mask


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
