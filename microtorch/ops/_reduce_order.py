"""torch's order in the CPU reductions that are not sums (var, std, var_mean, prod, the 1-norm), so that they give
torch 2.13's bits: each has a loop of its own in ATen (var: float64 passes to one number, else Welford's updates;
prod: registers of running products; the 1-norm: one running sum per result), walked in memory order as
_sum_order's TensorIterator model says."""
import math
import struct

import numpy as np

from .._fma import _SPLIT, fma, fma32
from ._range_kernels import _GRAIN, _thread_chunks, intraop_threads
from ._sum_order import VECTOR_BYTES, _iteration, _kept, _steps, _walked, mean_like_torch


def var_all_like_torch(x, correction):
    """torch's var of a float32 or float64 x reduced to one number (std_var_all_cpu), as a float64: the mean in
    torch's order in x's dtype, then the squares of x - mean in float64, added one after another in memory order
    (a running sum per 2-d step of the iteration, the steps added into each thread's total, the threads' totals
    added in turn), divided by n - correction."""
    mean = float(mean_like_torch(x))
    x = x.reshape(1) if x.ndim == 0 else x
    sizes, strides, _, perm = _iteration(x.shape, x.strides, [True] * x.ndim)
    if len(sizes) == 1:
        sizes, strides = sizes + [1], strides + [0]
    view = _walked(x, perm, sizes)
    total, n = np.float64(0), x.size
    for begin, end in _thread_chunks(n):
        steps = [block.astype(np.float64).reshape(-1) - mean for block in _steps(view, sizes, begin, end)]
        own = np.float64(0)  # (this thread's total: each step's running sum added in)
        for dx in steps:
            own += np.add.accumulate(dx * dx)[-1]
        total += own
    with np.errstate(divide="ignore", invalid="ignore"):
        return total / np.float64(max(0, n - correction))


def prod_like_torch(v, split=True):
    """torch's product of a contiguous 1-d float32 or float64 v (binary_kernel_reduce_vec, another order than
    sum's): four registers of running products over rows of four registers, the four multiplied in pairs, then a
    running product of their lanes and of the terms after the last row; above 32768 terms per thread, then the
    threads' products in turn."""
    n = v.shape[0]
    if split and n >= _GRAIN and intraop_threads() > 1:
        parts = _thread_chunks(n)
        slots = np.ones(intraop_threads(), v.dtype)
        slots[:len(parts)] = [prod_like_torch(v[b:e], False) for b, e in parts]
        return prod_like_torch(slots, False)
    lanes = VECTOR_BYTES // v.itemsize
    k = n - n % (4 * lanes)
    terms = v[k:]
    if k:
        regs = np.multiply.reduce(v[:k].reshape(-1, 4 * lanes), 0).reshape(4, lanes)
        terms = np.concatenate([(regs[0] * regs[1]) * (regs[2] * regs[3]), terms])
    return np.multiply.accumulate(terms)[-1] if len(terms) else v.dtype.type(1)


_WELFORD_ROWS = 4096  # (a Python step per reduced element: longer reductions keep numpy's two passes)


def var_welford_like_torch(x, dims, correction):
    """torch's var over dims with several results, and var_mean's (WelfordOps in float64, no fused multiply-add):
    each result's elements taken in memory order, one Welford update each, done for all results at once; (var,
    mean) as float64 arrays of the kept dims' shape, or None past _WELFORD_ROWS elements per result (or the 32768
    where threads share one)."""
    kept = [d for d in range(x.ndim) if d not in dims]
    rows = math.prod([x.shape[d] for d in dims])
    if rows > _WELFORD_ROWS or not rows:
        return None
    table = _memory_rows(x, dims)
    mean = np.zeros(table.shape[1])
    m2 = np.zeros(table.shape[1])
    for i, row in enumerate(table):
        value = row.astype(np.float64)
        delta = value - mean
        mean = mean + delta / (i + 1)
        m2 = m2 + delta * (value - mean)
    with np.errstate(divide="ignore", invalid="ignore"):
        var = m2 / (rows - correction if rows > correction else 0)
    return var.reshape([x.shape[d] for d in kept]), mean.reshape([x.shape[d] for d in kept])


def _memory_rows(x, dims):
    """x as a (reduced elements, results) table, each column a result's elements in memory order."""
    reduced = [d for d in _iteration(x.shape, x.strides, [d in dims for d in range(x.ndim)])[3] if d in dims]
    return x.transpose(reduced[::-1] + [d for d in range(x.ndim) if d not in dims]).reshape(
        math.prod([x.shape[d] for d in dims]), -1)


def running_sum_like_torch(x, dims=None, keepdim=False):
    """The sum that torch's plain reduction loop (binary_kernel_reduce: the 1-norm, ...) takes: each result's
    elements added one after another in memory order; one result of 32768 elements or more in a part per
    thread, the parts added in turn."""
    every = tuple(range(x.ndim)) if dims is None else dims
    if x.size == 0:  # (a sum of nothing: 0)
        out = np.zeros([s for d, s in enumerate(x.shape) if d not in every], x.dtype)
        return _kept(out, x.shape, every) if keepdim else out
    table = _memory_rows(x, every)
    n = table.shape[0]
    if table.shape[1] == 1 and n >= _GRAIN:
        parts = [np.add.accumulate(table[b:e], 0)[-1] for b, e in _thread_chunks(n)]
        out = np.add.accumulate(np.concatenate(parts))[-1:]
    else:
        out = np.add.accumulate(table, 0)[-1] if n else np.zeros(table.shape[1], x.dtype)
    return _kept(out, x.shape, every) if keepdim else out.reshape([s for d, s in enumerate(x.shape) if d not in every])


def p_norm_like_torch(a, p, dims=None, keepdim=False, vector=True):
    """torch's p-norm of a = |x| (float32 or float64, p not 0, 1 or +-inf): over one contiguous run of the
    innermost dim of a real x (vector), p = 2 takes its vectorised loop (_two_norm_rows); else its plain loop's
    running sum of |x|^p (std::pow, in a's dtype), then the sum to the power 1/p (1/p in a's dtype; p = 2: the
    square root)."""
    every = tuple(range(a.ndim)) if dims is None else dims
    if p == 2 and a.size and vector:
        rows = _last_dims_rows(a, every)
        if rows is not None:
            out = np.sqrt(_two_norm_rows(rows))
            return _kept(out, a.shape, every) if keepdim else out.reshape(
                [s for d, s in enumerate(a.shape) if d not in every])
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        total = running_sum_like_torch(a * a if p == 2 else _pow(a, a.dtype.type(p)), dims, keepdim)
        return np.sqrt(total) if p == 2 else _pow(total, a.dtype.type(1) / a.dtype.type(p))


def _pow(v, e):
    """std::pow in v's dtype: float32's (the C library's powf, nearly always the correctly rounded value) computed in
    float64 and rounded once; float64's numpy's (an ulp off the C library's pow on about 5% of values)"""
    if v.dtype == np.float32:
        return np.power(v.astype(np.float64), np.float64(e)).astype(np.float32)
    return np.power(v, e)


def _last_dims_rows(a, every):
    """a as (results, reduced elements) rows when torch's reduction runs over one contiguous run of memory per
    result (is_reduce_lastdim: one reduced dim after TensorIterator merges them, the innermost, unit stride); else
    None"""
    if a.flags.c_contiguous and every == tuple(range(a.ndim - len(every), a.ndim)):  # (the common call)
        return a.reshape(-1, math.prod(a.shape[a.ndim - len(every):]))
    _, strides, reduced, _ = _iteration(a.shape, a.strides, [d in every for d in range(a.ndim)])
    if sum(reduced) == 1 and reduced[0] and strides[0] == a.itemsize:
        return _memory_rows(a, every).T
    return None


def _two_norm_rows(rows):
    """torch's vectorised sum of squares of each row: a register's lanes (32 bytes) each a running sum over whole
    registers, the lanes added in turn, then the rest of the row one by one, each square fused into the sum (as
    measured against torch: its compiler squares a float32 rest of four or more four at a time, unfused, first)"""
    n, lanes = rows.shape[1], VECTOR_BYTES // rows.itemsize
    whole = n - n % lanes
    squares = rows[:, :whole] * rows[:, :whole]
    # (numpy adds along a slow axis in order, one slice after another (more than one number wide: a single
    # column it would add pairwise): running sums, as torch's lanes)
    regs = np.add.reduce(squares.reshape(len(rows), -1, lanes).transpose(1, 0, 2), 0)
    total = regs[:, 0]
    for lane in range(1, lanes):
        total = total + regs[:, lane]
    unfused = whole + 4 if rows.dtype == np.float32 and n - whole >= 4 else whole
    for d in range(whole, unfused):
        total = total + rows[:, d] * rows[:, d]
    if unfused == n:
        return total
    if len(rows) == 1:  # (one row, the whole tensor's norm: exact in Python's floats, quicker than arrays)
        out = _fused_squares(rows[0, unfused:].tolist(), float(total[0]), rows.dtype == np.float32)
        if out is not None:
            return np.array([out], rows.dtype)
    fused = fma32 if rows.dtype == np.float32 else fma
    for d in range(unfused, n):
        total = fused(rows[:, d], rows[:, d], total)
    return total


def _fused_squares(values, total, single):
    """total + v*v for each v in turn, each rounded once (a fused multiply-add), in Python's floats. float64: v*v
    split exactly into products of 26-bit halves (Veltkamp), their sum with total correctly rounded by math.fsum.
    float32 (single): v*v is exact in a double, the sum rounds to float32 as the exact one would unless it lands on
    a float32 tie (None then: the caller takes fma32, which settles it)."""
    for v in values:
        if single:
            s = v * v + total
            if struct.unpack("<q", struct.pack("<d", s))[0] & 0x1FFFFFFF == 0x10000000:
                return None
            total = float(np.float32(s))
            continue
        rounded = total + v * v
        if not math.isfinite(rounded):  # (inf or NaN: the fused value is the same, and fsum would raise)
            total = rounded
            continue
        hi = _SPLIT * v
        hi = hi - (hi - v)
        lo = v - hi
        total = math.fsum((hi * hi, 2 * hi * lo, lo * lo, total))
    return total
