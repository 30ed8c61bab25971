"""Which elements of an elementwise result torch's CPU loop (cpu_kernel_vec) computes with its vector formula and
which with its scalar one, where the two round differently (the losses' backward kernels).

The loop walks the result in C order with TensorIterator's dims: size-1 dims dropped, neighbours merged where every
operand steps through them as through one. Along the innermost (merged) dim it runs the vector formula two
registers (64 bytes) at a time when every operand is contiguous there, or all but one input that stays put (a
broadcast number); the rest of each row, and every element of any other layout, takes the scalar formula. A loop
longer than 32768 elements is cut among threads first, and each thread's piece of a row has its own tail."""
import math

import numpy as np

from ._range_kernels import _GRAIN, _thread_chunks

_STEP_BYTES = 64  # (two 32-byte registers a turn: 8 doubles, 16 floats, as measured against torch 2.13)


def scalar_lanes(shape, itemsize, operands):
    """The flat indices (C order) of a result of `shape` that torch's loop computes with its scalar formula, for
    inputs `operands` (arrays numpy broadcasts to shape). The result is torch's fresh contiguous gradient, which
    fixes the walk to C order: an input laid out otherwise (transposed, strided along the last dim) takes the
    scalar loop throughout."""
    shape = tuple(shape)
    n = math.prod(shape)
    step = _STEP_BYTES // itemsize
    numbers = sum(a.ndim == 0 for a in operands)
    if n <= _GRAIN and numbers <= 1 and all(a.ndim == 0 or a.shape == shape and a.flags.c_contiguous
                                            for a in operands):  # (the common call: one row, its tail)
        return np.arange(n - n % step if n > 1 else 0, n)
    strides = [[st // a.itemsize for st in np.broadcast_to(a, shape).strides] for a in operands]
    size0, inner = _inner_row(shape, strides)
    fixed = [k for k, st in enumerate(inner) if st == 0]
    if size0 == 1 or len(fixed) > 1 or any(st != 1 for st in inner if st != 0):
        return np.arange(n)  # (a loop of one, or a layout the vector loop does not take: all scalar)
    return np.flatnonzero(~_vector_mask(n, size0, step))


def _inner_row(shape, strides):
    """(the length of TensorIterator's innermost row after merging dims, each operand's stride along it): C order,
    size-1 dims dropped, an outer dim merged while every operand (and the contiguous result) steps over it as one
    more row"""
    dims = [d for d in range(len(shape)) if shape[d] != 1]
    if not dims:
        return 1, [0] * len(strides)
    last = dims[-1]
    size0 = shape[last]
    for d in reversed(dims[:-1]):
        if any(s[d] != s[last] * size0 for s in strides):
            break
        size0 *= shape[d]
    return size0, [s[last] for s in strides]


def _vector_mask(n, size0, step):
    """True for the elements of a loop of n in rows of size0 that the vector formula computes: whole steps from
    the start of each row's piece within each thread's share"""
    mask = np.zeros(n, bool)
    for begin, end in _thread_chunks(n):
        if size0 >= end - begin and begin // size0 == (end - 1) // size0:  # (one piece: the common case)
            mask[begin:begin + (end - begin) // step * step] = True
            continue
        i = np.arange(begin, end)
        row = i - i % size0
        start, stop = np.maximum(row, begin), np.minimum(row + size0, end)
        mask[begin:end] = i - start < (stop - start) // step * step
    return mask
