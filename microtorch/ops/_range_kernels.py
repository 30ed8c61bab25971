"""The values of torch's CPU range kernels (linspace, logspace, arange, range), rounded where torch's loops round.

numpy's linspace and arange compute in float64 and cast; torch computes in the tensor's own precision, from
both ends, with fused multiply-adds, and (arange) in vector registers that restart at every lane group. Each
function here takes bounds already converted as torch converts them (the caller checks them) and returns the
numpy array torch 2.13 fills, bit for bit, on an x86-64 CPU with AVX2 or AVX-512 (its kernels there are compiled
with FMA contraction; a CPU without AVX2 runs plain multiply-adds, and an ARM one 16-byte registers in arange, so
their last bits differ in places).
"""
import math
import os

import numpy as np

from .._fma import fma
from .special_fma import libm

_GRAIN = 32768  # at::internal::GRAIN_SIZE: parallel_for gives a loop longer than this to several threads
_VECTOR_BYTES = 32  # one AVX2 register: arange's vectorized loop fills this many bytes per step
_NEG_NAN = np.uint64(0xFFF8000000000000).view(np.float64)  # the NaN the C library's pow returns (sign set)


def _half(values):
    """float16 as c10::Half takes a float or double: rounded to float first (twice, as torch); beyond its range,
    inf"""
    with np.errstate(over="ignore"):
        return np.asarray(values).astype(np.float32).astype(np.float16)


def int_to_float32(n):
    """the Python int n rounded once to float32 (to nearest, ties to even), as C converts an int64; numpy goes
    through double, which rounds twice for some n beyond 2**53"""
    if abs(n) <= 2 ** 53:
        return np.float32(n)
    shift = abs(n).bit_length() - 24
    top, rest = divmod(abs(n), 1 << shift)
    half = 1 << (shift - 1)
    top += rest > half or rest == half and top & 1
    with np.errstate(over="ignore"):
        return np.float32(math.copysign(top << shift, n))


def _fused(step, index, c):
    """step * index + c rounded once, index holding whole numbers below 2**26: step is split by clearing its low
    27 bits (Veltkamp's split, special_fma's, overflows for a step beyond about 1e299)"""
    step = np.asarray(step)
    if step.dtype != np.float64:
        return fma(step, index, c)
    high = (step.view(np.int64) & ~np.int64((1 << 27) - 1)).view(np.float64)
    return fma(step, index, c, a_halves=(high, step - high))


def linspace(start, end, steps, np_dtype):
    """torch's linspace kernel: start + step*i for the first half, end - step*(steps-1-i) for the rest (so the
    ends are exact, unless step is infinite); step = (end - start) / (steps - 1) in the dtype (in double for an
    integer dtype, whose values are then truncated toward zero). start, end: numbers of np_dtype (Python ints for
    an integer dtype)."""
    if steps <= 1:
        return np.full(steps, start, np_dtype)
    half = steps // 2
    first = np.arange(half)
    from_end = steps - 1 - np.arange(half, steps)
    if np_dtype.kind in "iu":
        step = (float(end) - float(start)) / (steps - 1)
        values = np.concatenate([_fused(step, first.astype(np.float64), np.float64(start)),
                                 _fused(step, -from_end.astype(np.float64), np.float64(end))])
        values = np.trunc(values).astype(np.int64).astype(np_dtype)
    elif np_dtype == np.float16:  # (c10::Half rounds after every operation, an index too)
        step = (end - start) / _half(steps - 1)
        values = np.concatenate([start + step * _half(first), end - step * _half(from_end)])
    else:  # (end - step*k as step * -k + end: a NaN step keeps its sign, as in the fused instruction)
        with np.errstate(over="ignore", invalid="ignore"):
            step = (end - start) / np_dtype.type(steps - 1)
            values = np.concatenate([_fused(step, first.astype(np_dtype), start),
                                     _fused(step, -from_end.astype(np_dtype), end)]).astype(np_dtype)
    return values


def logspace(start, end, steps, base, np_dtype):
    """torch's logspace for a real dtype: base ** x, x from start and from end as linspace's (in double,
    without fused steps: this loop is compiled without them), the difference end - start taken in the dtype;
    pow is the C library's. steps == 1 is the caller's (torch fills base ** start)."""
    half = steps // 2
    span = end - start
    if np_dtype in (np.int32, np.int64):  # (C subtracts these in their own width, which wraps; narrower ones in int)
        bits = 8 * np.dtype(np_dtype).itemsize
        span = (span + 2 ** (bits - 1)) % 2 ** bits - 2 ** (bits - 1)
    step = float(span) / (steps - 1)
    from_end = steps - 1 - np.arange(half, steps)
    x = np.concatenate([float(start) + step * np.arange(half), float(end) - step * from_end])
    return to_dtype(np.array([c_pow(base, v) for v in x.tolist()], dtype=np.float64), np_dtype)


def complex_logspace(start, end, steps, base, np_dtype):
    """torch's logspace for a complex dtype (steps >= 2): x from both ends in its complex arithmetic, written out
    part by part as c10::complex computes it (so zeros keep their signs): the step is (end - start) times
    1 / (steps - 1), as its division by a complex number with no imaginary part works out; then the C library's
    cpow(base, x), exp(x * log(base))."""
    real = np.dtype(np_dtype).type(0).real.dtype.type
    s_r, s_i, e_r, e_i = real(start.real), real(start.imag), real(end.real), real(end.imag)
    d_r, d_i, zero = e_r - s_r, e_i - s_i, real(0)
    scale = real(1) / real(steps - 1)
    step_r, step_i = (d_r + d_i * zero) * scale, (d_i - d_r * zero) * scale
    k = np.concatenate([np.arange(steps // 2), steps - 1 - np.arange(steps // 2, steps)]).astype(real)
    from_start = np.arange(steps) < steps // 2
    m_r, m_i = step_r * k - step_i * zero, step_r * zero + step_i * k
    x_r = np.where(from_start, s_r + m_r, e_r - m_r)
    x_i = np.where(from_start, s_i + m_i, e_i - m_i)
    return c_cpow(real(base), x_r, x_i, np_dtype)


def c_cpow(base, x_r, x_i, np_dtype):
    """the C library's cpow(base + 0i, x) = cexp(x * clog(base)) in the precision of base's type (clog's real
    part through log1p for |base| in [0.5, 2), as glibc's; cexp through exp, cos and sin)"""
    real = type(base)
    size = abs(base)
    if 0.5 <= size < 2 and size != 1:  # (glibc's clog near 1: log1p((|x| - 1)(|x| + 1)) / 2)
        log_r = libm("log1p", np.asarray((size - real(1)) * (size + real(1)))) / real(2)
    else:
        log_r = libm("log", np.asarray(size))
    log_i = real(math.atan2(0.0, base))
    z_r, z_i = x_r * log_r - x_i * log_i, x_r * log_i + x_i * log_r
    grows = libm("exp", z_r)
    turns = np.abs(z_i) > np.finfo(real).tiny  # (cexp takes a tiny angle as its own sine, cosine 1)
    cos = np.where(turns, libm("cos", z_i), real(1))
    sin = np.where(turns, libm("sin", z_i), z_i)
    out = np.empty(np.shape(x_r), np_dtype)
    out.real, out.imag = grows * cos, grows * sin
    return out


def pow_real_complex(base, exponent):
    """C++'s std::pow(double base, complex<double> exponent): polar(pow(base, re), im * log(base)) for a positive
    base, else the C library's cpow"""
    if base > 0:
        rho, theta = c_pow(base, exponent.real), exponent.imag * math.log(base)
        return complex(rho * math.cos(theta), rho * math.sin(theta))
    return c_cpow(np.float64(base), np.float64(exponent.real), np.float64(exponent.imag), np.complex128)[()]


def c_pow(base, exponent):
    """pow(base, exponent) as the C library's: math.pow, whose domain and range errors are numbers in C"""
    try:
        return math.pow(base, exponent)
    except OverflowError:  # (a huge power: inf, negative for a negative base to an odd power)
        return -math.inf if base < 0 and exponent % 2 == 1 else math.inf
    except ValueError:  # (0 to a negative power: inf, -0 for an odd one; a negative base to a fraction: NaN)
        if base == 0:
            return math.copysign(math.inf, base) if exponent % 2 == 1 else math.inf
        return _NEG_NAN


def to_dtype(values, np_dtype):
    """doubles stored into np_dtype as a C cast stores them: float16 through float; an integer type truncated,
    through a 32-bit int (64-bit for int64) as x86's conversion does, whose out-of-range answer is its lowest value"""
    if np_dtype == np.float16:
        return _half(values)
    if np_dtype.kind not in "iu":
        with np.errstate(over="ignore"):  # (beyond float32: inf, as the C cast)
            return values.astype(np_dtype)
    wide = np.int64 if np_dtype == np.int64 else np.int32
    info = np.iinfo(wide)
    fits = np.isfinite(values) & (values >= info.min) & (values < -float(info.min))
    whole = np.where(fits, np.trunc(np.where(fits, values, 0)), info.min)
    return whole.astype(wide).astype(np_dtype)


def arange(start, step, size, np_dtype):
    """torch's arange kernel for a floating dtype: start + step*i in double (float for float16), fused; the
    vectorized loop fills a register of lanes at a time from base = start + step*i0 (in the dtype) as base,
    base + step, base + 2*step..., two registers per turn, the rest one by one; a loop longer than _GRAIN is first
    cut between threads."""
    acc = np.float32 if np_dtype == np.float16 else np.float64
    start, step = acc(start), acc(step)
    if start.is_integer() and step.is_integer() and step and max(abs(start), abs(start + step * size)) <= 2 ** np.finfo(
            np_dtype).nmant:  # (whole numbers the dtype holds: every way of adding them gives the same values)
        first = start + step * acc(0)  # (start + step*0: -0.0 + 0.0 is 0.0, as in torch's loop)
        return np.arange(first, start + step * size, step, dtype=np_dtype)
    lanes = _VECTOR_BYTES // np.dtype(np_dtype).itemsize
    out = np.empty(size, np_dtype)
    for begin, stop in _thread_chunks(size):
        vector_end = begin + (stop - begin) // (2 * lanes) * (2 * lanes)
        bases = to_dtype(_fused(step, np.arange(begin, vector_end, lanes).astype(acc), start), np_dtype)
        lane = np.arange(lanes).astype(acc)
        block = to_dtype(_fused(step, lane[None, :], bases.astype(acc)[:, None]), np_dtype)
        block[:, 0] = bases  # (the first lane is base itself, not base + 0*step: -0.0 stays -0.0)
        out[begin:vector_end] = block.ravel()
        out[vector_end:stop] = to_dtype(_fused(step, np.arange(vector_end, stop).astype(acc), start), np_dtype)
    return out


def torch_range(start, end, step, np_dtype):
    """torch.range's loop for a floating dtype (end included): int((end - start) / step + 1) values start + i*step,
    counted and computed in double (float for float16), not fused (this loop is compiled without)"""
    acc = np.float32 if np_dtype == np.float16 else np.float64
    start, end, step = acc(start), acc(end), acc(step)
    size = int((end - start) / step + acc(1))
    return to_dtype(start + np.arange(max(size, 0)).astype(acc) * step, np_dtype)


def _thread_chunks(size, grain=_GRAIN):
    """(begin, end) of each thread's part of a loop of `size`, as at::parallel_for (OpenMP) cuts it (grain: the
    least a thread gets; 0: every thread gets a share)"""
    if size <= grain or size == 0:
        return [(0, size)]
    threads = min(intraop_threads(), -(-size // grain)) if grain else min(intraop_threads(), size)
    chunk = -(-size // threads)
    return [(b, min(size, b + chunk)) for b in range(0, size, chunk)]


SET_THREADS = [None]  # torch.set_num_threads(n) (see _runtime.py)


def intraop_threads():
    """the threads torch runs one op on: what set_num_threads set, else OMP_NUM_THREADS if set, else one per
    physical core (hyperthreads of a core count once; Linux tells which those are, elsewhere each CPU counts)"""
    if SET_THREADS[0] is not None:
        return SET_THREADS[0]
    env = os.environ.get("OMP_NUM_THREADS", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    cpus = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else range(os.cpu_count() or 1)
    cores = set()
    for cpu in cpus:
        try:
            with open(f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list") as f:
                cores.add(f.read().strip())
        except OSError:
            cores.add(cpu)
    return max(len(cores), 1)
