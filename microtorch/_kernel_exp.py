"""float32 e^x as torch's CPU kernels compute it inside sigmoid, softmax and the others that call
`Vectorized::exp`, so that microtorch gives their bits.

torch's elementwise loop runs over 128 bytes at a time (32 floats) with SLEEF's exp, the vector math library's (its
u10 variant: a Cody-Waite reduction by ln 2 and a polynomial, every multiply-add fused), and over the rest of each
thread's share (its tail) and over strided inputs with the C library's expf (glibc's: a table of 2^(i/32) and a
cubic, in double). (Facts about SLEEF, glibc and torch's loops from their sources, checked bit for bit against
torch in tests/test_kernel_exp_bits.py.) float64 stays with numpy's exp: SLEEF's double steps need an exact
double fma, which numpy can only emulate at some 50 times the cost, too slow for every training step.
"""
import numpy as np

from . import _libm_f32
from ._double_float import add2_pf, add2_pp, add_fp, add_pp, div_pp, mul_pf, mul_pp, reciprocal_p, square_p
from ._fma import fma, fma32, fma32_quiet, horner32, horner32_quiet

F32 = np.float32
_EXPF_POLY = [0.000198527617612853646278381, 0.00139304355252534151077271, 0.00833336077630519866943359,
              0.0416664853692054748535156, 0.166666671633720397949219, 0.5]
_R_LN2 = 1.442695040888963407359924681001892137426645954152985934135449406931


def expf(d):
    """float32 e^d: d = q ln 2 + s with q an integer (ln 2 in two parts), e^s by a degree-7 polynomial, times 2^q;
    below -104 exactly 0, above 100 inf. (A large array in slices that stay in the cache: the fused steps take
    many passes.)"""
    d = np.asarray(d, F32)
    if d.size <= _SLICE:
        return _expf(d)
    flat, out = d.reshape(-1), np.empty(d.size, F32)
    for start in range(0, flat.size, _SLICE):
        out[start:start + _SLICE] = _expf(flat[start:start + _SLICE])
    return out.reshape(d.shape)


_SLICE = 65536


def _expf(d):
    with np.errstate(invalid="ignore", over="ignore"):  # (one switch for every step: inf * 0 is NaN, as the fma's)
        q = np.rint(d * F32(_R_LN2))
        s = fma32_quiet(q, F32(-0.693145751953125), d)
        s = fma32_quiet(q, F32(-1.428606765330187045e-06), s)
        u = horner32_quiet(_EXPF_COEFFICIENTS, s)
        u = F32(1) + fma32_quiet(s * s, u, s)
        out = _times_power_of_two(u, q)
    return np.where(d > F32(100), F32(np.inf), np.where(d < F32(-104), F32(0), out))


_EXPF_COEFFICIENTS = [F32(c) for c in _EXPF_POLY]


def _times_power_of_two(u, q):
    """u 2^q, in two factors (so that a q near the exponent's limit does not overflow early), each 2^h made from its
    bits (q is clipped to where it matters: beyond it the result is 0 or inf anyway, set by the caller; a NaN's q
    casts to any integer: its u is NaN already). Called with numpy kept quiet."""
    qi = np.clip(q, -200, 200).astype(np.int32)
    half = qi >> 1
    return u * _power_of_two(half) * _power_of_two(qi - half)


def _power_of_two(h):
    return ((h + 127) << 23).astype(np.int32).view(F32)


def exp(x, shares, layout=None, others=()):
    """e^x of a float32 array as torch's vector kernels compute it: SLEEF's exp on the vector lanes, the C library's
    on each tail. `shares(n)`: the [start, stop) of each thread's part of a loop of n elements. layout: the kernel's
    input, when x was computed from it (-x of a strided view is contiguous, the view is not); others: the kernel's
    other inputs (see lane_mask)."""
    return by_lanes(x, lane_mask(x if layout is None else layout, shares, *others), expf, _libm_f32.expf)


def by_lanes(x, lanes, vector, scalar):
    """vector(x) where `lanes`, scalar(x) elsewhere (what torch's loop computes with its vector function and with the
    C library's), laid out as x, as torch's loop writes its result"""
    if lanes.all() or not lanes.any():
        out = np.asarray((vector if lanes.all() else scalar)(x), F32).reshape(x.shape)
        if x.ndim < 2 or x.flags.c_contiguous or out.strides == x.strides:
            return out
        values, out = out, np.empty_like(x, F32)
        out[...] = values
        return out
    out = np.empty_like(x, F32)
    out[lanes], out[~lanes] = vector(x[lanes]), scalar(x[~lanes])
    return out


def vector_lanes(n, itemsize, shares, step_bytes=128):
    """A mask over n elements in memory order: True where the vector loop computes them (runs of 128 bytes from
    the start of each thread's share, two AVX-512 registers; 64 for a kernel built for AVX2 only), False on each
    share's tail."""
    step = step_bytes // itemsize
    mask = np.zeros(n, bool)
    for start, stop in shares(n):
        mask[start:stop - (stop - start) % step] = True
    return mask


def lane_mask(x, shares, *others, step_bytes=128):
    """A mask of x's shape: True where torch's vector loop computes the element, False on each thread's tail (and
    everywhere torch's scalar loop runs). Its loop reads every input in one order: all of them dense and laid out
    alike, it runs over their memory as one row; otherwise over the rows that every input keeps contiguous from
    some dim on (a slice of each row, say), one row at a time; with none (a strided last dim, inputs laid out
    differently) the scalar loop reads every element. `others`: the kernel's other inputs (a number, or a tensor
    broadcast from one, does not count). step_bytes: see vector_lanes."""
    arrays = [x] + [o for o in others if any(o.strides)]
    if x.ndim == 0:
        return np.zeros(x.shape, bool)
    if all(a.strides == x.strides for a in arrays) and _dense(x):
        order = sorted(range(x.ndim), key=lambda d: -x.strides[d])
        lanes = vector_lanes(x.size, x.itemsize, shares, step_bytes)
        return lanes.reshape([x.shape[d] for d in order]).transpose(np.argsort(order))
    order = sorted(range(x.ndim), key=lambda d: -x.strides[d])  # (torch's loop walks x's dims slowest to fastest
    if order != list(range(x.ndim)) and min(x.strides) >= 0:  # in memory: a transposed slice by its columns)
        mask = lane_mask(x.transpose(order), shares, *[o.transpose(order) for o in others], step_bytes=step_bytes)
        return mask.transpose(np.argsort(order))
    start = max(_contiguous_from(a) for a in arrays)
    return row_lane_mask(x.shape, start, shares, step_bytes // x.itemsize) if start < x.ndim else \
        np.zeros(x.shape, bool)


def _contiguous_from(x):
    """The first dim from which on x's elements lie next to each other in C order (x.ndim: not even the last)."""
    dim, expected = x.ndim, x.itemsize
    while dim > 0 and (x.shape[dim - 1] == 1 or x.strides[dim - 1] == expected):
        dim -= 1
        expected *= x.shape[dim]
    return dim


def row_lane_mask(shape, dim, shares, step=32):
    """The lane mask of a kernel whose inputs are contiguous from `dim` on but not across the dims before it (the
    halves glu splits x into): torch's loop runs the vector loop over each row of prod(shape[dim:]) elements, or
    over the part of it in a thread's share, `step` elements at a time (32 floats: 128 bytes)."""
    length, rows = int(np.prod(shape[dim:])), int(np.prod(shape[:dim]))
    mask = np.zeros(rows * length, bool)
    if length == 0:  # (an empty tensor: no loop runs)
        return mask.reshape(shape)
    for start, stop in shares(rows * length):
        for row in range(start // length, -(-stop // length)):
            lo, hi = max(start, row * length), min(stop, (row + 1) * length)
            mask[lo:hi - (hi - lo) % step] = True
    return mask.reshape(shape)


def _dense(x):
    """x's elements fill one block of memory (its dims in any order): torch's loop then runs over it as one row."""
    expected = x.itemsize
    for d in sorted(range(x.ndim), key=lambda d: x.strides[d]):
        if x.shape[d] != 1 and x.strides[d] != expected:
            return False
        expected *= x.shape[d]
    return True


def expm1(x, lanes):
    """e^x - 1 of a float32 array as torch's kernels compute it (elu, selu, celu): SLEEF's u10 expm1 where `lanes`
    (lane_mask), the C library's expm1f elsewhere. float64: numpy's."""
    return by_lanes(x, lanes, expm1_vector, _libm_f32.expm1f) if x.dtype == F32 else np.expm1(x)


def expm1_vector(a):
    """SLEEF's u10 expm1: e^a as a pair (_exp_pair), less 1 as a pair, rounded once; -1 below -16.64, inf above
    88.72, -0.0 kept"""
    with np.errstate(all="ignore"):  # (out-of-range and NaN lanes are set below)
        hi, lo = add2_pf(*_exp_pair(a), F32(-1))
        x = hi + lo
    x = np.where(a > F32(88.72283172607421875), F32(np.inf), x)
    x = np.where(a < F32(-16.635532333438687426013570), F32(-1), x)
    return np.where((a == 0) & np.signbit(a), a, x)


def tanh(x, lanes):
    """tanh of a float32 array as torch's kernels compute it inside mish and gelu's tanh form: SLEEF's u10 tanh
    where `lanes`, the C library's tanhf elsewhere. float64: numpy's."""
    return by_lanes(x, lanes, tanh_vector, _libm_f32.tanhf) if x.dtype == F32 else np.tanh(x)


def tanh_vector(x):
    """SLEEF's u10 tanh: (e - 1/e) / (e + 1/e) with e = e^|x| as pairs, its sign put back; 1 beyond 8.66"""
    with np.errstate(all="ignore"):  # (large and NaN lanes are set below)
        eh, el = _exp_pair(np.abs(x))
        rh, rl = reciprocal_p(eh, el)
        yh, yl = div_pp(*add_pp(eh, el, -rh, -rl), *add_pp(eh, el, rh, rl))
        y = yh + yl
    y = np.where((np.abs(x) > F32(8.664339742)) | np.isnan(y), F32(1), y)
    return np.where(np.isnan(x), x, np.copysign(y, x))


def _exp_pair(d):
    """SLEEF's expk2f for a single float d: d = q ln 2 + s (s as a pair), e^s by a polynomial carried in pairs,
    times 2^q (in two factors); 0 below -104"""
    q = np.rint(d * F32(_R_LN2)).astype(np.int32)
    qf = q.astype(F32)  # (an int32 times a float32 would be float64 in numpy)
    sh, sl = add2_pf(d, np.zeros_like(d), qf * F32(-0.693145751953125))
    sh, sl = add2_pf(sh, sl, qf * F32(-1.428606765330187045e-06))
    u = horner32([F32(c) for c in (0.1980960224e-3, 0.1394256484e-2, 0.8333456703e-2, 0.4166637361e-1)], sh)
    th, tl = add2_pf(*mul_pf(sh, sl, u), F32(0.166666659414234244790680580464))
    th, tl = add2_pf(*mul_pp(sh, sl, th, tl), F32(0.5))
    th, tl = add2_pp(sh, sl, *mul_pp(*square_p(sh, sl), th, tl))
    th, tl = add_fp(F32(1), th, tl)
    with np.errstate(invalid="ignore"):  # (a NaN's q: its pair is NaN already)
        q = np.clip(q, -200, 200)
    p, r = _power_of_two(q >> 1), _power_of_two(q - (q >> 1))
    dead = d < F32(-104)
    return np.where(dead, F32(0), th * p * r), np.where(dead, F32(0), tl * p * r)
