"""softmax as torch's CPU kernels compute it, so that microtorch gives their bits. (log_softmax's gradient also in
float64, with numpy's exp for SLEEF's: all but a few of torch's bits.)

Over the last dim (`_vec_softmax_lastdim`), per row: the max, then e^(x - max) with SLEEF's exp on every element
(vector loads of the row's end are padded, not handed to the C library), their sum in the kernel's order, one
reciprocal, and a product. Over another dim (`_vec_softmax`), 16 floats side by side along the dims
after it: e^(x - max) (SLEEF's exp, or the C library's where fewer than a vector's worth are left in a thread's share
or before the end of those dims), summed along the dim one after another from 0, and each divided by the sum.

torch's `vec::reduce_all` sums a row in 64-byte vectors (16 floats): lane by lane, the row's blocks one
after the other (a last partial block adds into the first lanes only), then the lanes by halves (lane i with lane
i + 8, i + 4, ...); a row shorter than one vector is summed from its start,
one element after another. (Facts from
torch's sources, aten/src/ATen/cpu/vec/functional_base.h and native/cpu/SoftMaxKernel.cpp, checked bit for bit in
tests/test_softmax_bits.py.)
"""
import numpy as np

from .._fma import fma
from .. import _kernel_log
from .._kernel_exp import expf
from .._libm_f32 import expf as libm_expf
from ._range_kernels import _thread_chunks


def lanes_of(dtype):
    return 64 // np.dtype(dtype).itemsize


def row_sums(rows):
    """torch's vec::reduce_all(+) of each row of a 2-d array (map2_reduce_all's too: the products are rounded first)"""
    n, lanes = rows.shape[1], lanes_of(rows.dtype)
    if n < lanes:
        acc = rows[:, 0].copy()
        for i in range(1, n):
            acc += rows[:, i]
        return acc
    full = n - n % lanes
    acc = rows[:, :lanes].copy()
    for start in range(lanes, full, lanes):
        acc += rows[:, start:start + lanes]
    if full < n:
        acc[:, :n - full] += rows[:, full:]
    return _lanes_summed(acc)


def softmax_backward_lastdim(g, y):
    """softmax's gradient (g - sum(g y)) y over the last dim, as torch's kernel (its sum as row_sums)"""
    g2, y2 = np.ascontiguousarray(g).reshape(-1, g.shape[-1]), np.ascontiguousarray(y).reshape(-1, y.shape[-1])
    return ((g2 - row_sums(g2 * y2)[:, None]) * y2).reshape(np.broadcast_shapes(g.shape, y.shape))


def _lanes_summed(acc):
    """The vector's lanes added up by halves (AVX-512's shuffles for floats: lane i with i + 8, then i + 4, ...)"""
    half = acc.shape[1] // 2
    while half:
        acc = acc[:, :half] + acc[:, half:2 * half]
        half //= 2
    return acc[:, 0]


def softmax_lastdim(x):
    """softmax of a float32 array (at least 1-d, not empty) over its last dim, as torch's kernel (see the
    module's docstring)"""
    rows = np.ascontiguousarray(x).reshape(-1, x.shape[-1])
    top = rows.max(axis=1, keepdims=True)
    e = _exp(rows - top, np.ones(rows.shape, bool))
    scale = rows.dtype.type(1) / row_sums(e)
    return (e * scale[:, None]).reshape(x.shape)


def softmax_over(x, dim):
    """softmax of a float32 array (not empty) over a dim that is not its last, as torch's kernel"""
    dim = dim % x.ndim
    outer, size = int(np.prod(x.shape[:dim])), x.shape[dim]
    blocks = np.ascontiguousarray(x).reshape(outer, size, -1)
    vector = _vector_positions(outer, blocks.shape[2], lanes_of(x.dtype))
    shifted = blocks - blocks.max(axis=1, keepdims=True)
    e = _exp(shifted, np.broadcast_to(vector[:, None, :], shifted.shape))
    total = np.zeros_like(e[:, 0, :])
    for d in range(size):
        total += e[:, d, :]
    return (e / total[:, None, :]).reshape(x.shape)


def _vector_positions(outer, inner, lanes):
    """Which (outer, inner) positions the kernel computes with vectors: runs of `lanes` inside each thread's share
    of outer * inner positions that do not cross the end of an inner row (the rest, one by one, with the C library)."""
    vector = np.zeros(outer * inner, bool)
    for begin, end in _thread_chunks(outer * inner, grain=0):
        idx = begin
        while idx < end:
            inner_idx = idx % inner
            if inner_idx + lanes <= inner and idx + lanes <= end:
                vector[idx:idx + lanes] = True
                idx += lanes
            else:
                idx += (end - idx) if idx + lanes > end else (inner - inner_idx)
    return vector.reshape(outer, inner)


def softmax_backward_over(g, y, dim):
    """softmax's gradient over a dim that is not the last, as torch's kernel: sum(g y) along the dim one fused
    multiply-add after another from 0 (`sum += g * y` is compiled into one), then y (g - sum)"""
    dim = dim % g.ndim
    outer, size = int(np.prod(g.shape[:dim])), g.shape[dim]
    g3, y3 = np.ascontiguousarray(g).reshape(outer, size, -1), np.ascontiguousarray(y).reshape(outer, size, -1)
    total = np.zeros_like(g3[:, 0, :])
    for d in range(size):
        total = fma(g3[:, d, :], y3[:, d, :], total)
    return (y3 * (g3 - total[:, None, :])).reshape(g.shape)


def log_softmax_lastdim(x):
    """log_softmax of a float32 array (at least 1-d, not empty) over its last dim, as torch's kernel: per
    row the max, the sum of e^(x - max) (row_sums of SLEEF's exp), SLEEF's log of it, then (x - max) - log"""
    rows = np.ascontiguousarray(x).reshape(-1, x.shape[-1])
    shifted = rows - rows.max(axis=1, keepdims=True)
    total = row_sums(_exp(shifted, np.ones(shifted.shape, bool)))
    return (shifted - _log(total)[:, None]).reshape(x.shape)


def log_softmax_over(x, dim):
    """log_softmax over a dim that is not the last, as torch's kernel: the dims after it cut in chunks (a chunk's
    whole vectors with SLEEF's exp, its rest with the C library's), sums along the dim from 0, SLEEF's log"""
    dim = dim % x.ndim
    outer, size = int(np.prod(x.shape[:dim])), x.shape[dim]
    blocks = np.ascontiguousarray(x).reshape(outer, size, -1)
    vector = _chunk_vectors(blocks.shape[2], size, x.itemsize)
    shifted = blocks - blocks.max(axis=1, keepdims=True)
    e = _exp(shifted, np.broadcast_to(vector, shifted.shape))
    total = np.zeros_like(e[:, 0, :])
    for d in range(size):
        total += e[:, d, :]
    return (shifted - _log(total)[:, None, :]).reshape(x.shape)


def _log(total):
    """SLEEF's log (float64: numpy's stands in for it)"""
    return _kernel_log.log(total) if total.dtype == np.float32 else np.log(total)


def log_softmax_backward_lastdim(g, y):
    """log_softmax's gradient g - e^y sum(g) over the last dim, as torch's kernel (row_sums, SLEEF's exp, and the
    product and difference fused into one step)"""
    g2, y2 = np.ascontiguousarray(g).reshape(-1, g.shape[-1]), np.ascontiguousarray(y).reshape(-1, y.shape[-1])
    e = _exp(y2, np.ones(y2.shape, bool))
    return fma(-e, np.broadcast_to(row_sums(g2)[:, None], e.shape), g2).reshape(g.shape)


def _exp(y, vector):
    """e^y as the kernel computes it: SLEEF's exp where `vector`, the C library's elsewhere. (float64: numpy's exp
    stands in for SLEEF's, and differs from it in a few last bits.)"""
    if y.dtype == np.float32:
        return np.where(vector, expf(y), libm_expf(y)) if not vector.all() else expf(y)
    from .special_fma import libm
    return np.where(vector, np.exp(y), libm("exp", y)) if not vector.all() else np.exp(y)


def log_softmax_backward_over(g, y, dim):
    """log_softmax's gradient over a dim that is not the last, as torch's kernel: sum(g) along the dim from 0, then
    g - e^y sum in one fused step (e^y: SLEEF's on each chunk's whole vectors, the C library's on the rest)"""
    dim = dim % g.ndim
    outer, size = int(np.prod(g.shape[:dim])), g.shape[dim]
    g3, y3 = np.ascontiguousarray(g).reshape(outer, size, -1), np.ascontiguousarray(y).reshape(outer, size, -1)
    vector = _chunk_vectors(g3.shape[2], size, g.itemsize)
    e = _exp(y3, np.broadcast_to(vector, y3.shape))
    total = np.zeros_like(g3[:, 0, :])
    for d in range(size):
        total += g3[:, d, :]
    return fma(-e, np.broadcast_to(total[:, None, :], e.shape), g3).reshape(g.shape)


def _chunk_vectors(inner, size, itemsize):
    """Which positions along the dims after the softmax dim torch's chunked kernels compute with vectors: the dims
    are cut in chunks of a 128 KiB block's worth (whole vectors), and each chunk's whole vectors are."""
    lanes = 64 // itemsize
    chunk = min(max(128 * 1024 // size // itemsize, lanes) // lanes * lanes, inner)
    vector = np.zeros(inner, bool)
    for begin in range(0, inner, chunk):
        part = min(chunk, inner - begin)
        vector[begin:begin + part - part % lanes] = True
    return vector
