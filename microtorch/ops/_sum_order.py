"""torch's order of additions in a CPU sum, so that sum, mean, nansum and logsumexp give torch 2.13's bits
(_reduce_order.py does var, std, prod and the 1-norm).

numpy adds pairwise in blocks of eight; torch 2.13 (ATen's cascade_sum in SumKernel.cpp) walks the input in
memory order and keeps running sums in vector registers, in three shapes of loop:
- "cascade": a running sum down a column, handed up to a coarser level every 2**p terms (p = 4 for up to 2**19
  terms, then log2(n) / 4), the levels added at the end;
- "ilp": the terms dealt round-robin to four cascades (ilp: instruction-level parallelism), plus the leftover
  terms into the first, then the four added in order;
- "vector": a contiguous row read one register at a time into an "ilp" sum of registers, then a running sum of
  the terms after the last full register and of the register's lanes.
Which one a row or column gets depends on the strides and sizes that TensorIterator leaves after putting the
reduced dims first and merging dims (see `_iteration`). Above 32768 elements the work is cut between threads,
which moves the cut points (see `_two_passes`, `_split_columns`). Each shape is a few numpy reductions over
whole axes: numpy adds along the first axis of a C-ordered array row by row, which is a running sum; along the
last it pairs terms up, which is why that case goes through `np.add.accumulate`. Contiguous full sums, the
common call, take shorter paths (`_flat`).
"""
import math

import numpy as np

from ._range_kernels import _GRAIN, _thread_chunks, intraop_threads

_F16, _F32, _F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)


# torch's Vectorized<T> in this kernel: 32 bytes (8 floats, 4 doubles), on AVX-512 machines too (torch 2.13
# dispatches sum to its AVX2 build there; measured the same under ATEN_CPU_CAPABILITY=avx512, avx2 and default)
VECTOR_BYTES = 32


def _running(a, axis=0):
    """a[0] + a[1] + ... along axis (0 or 1) of a C-ordered a, one after another, for every other index (0 for no
    terms): numpy's reduction adds row by row when columns follow the axis, else it pairs terms up."""
    n = a.shape[axis]
    if n == 1:
        return a[0] if axis == 0 else a[:, 0]
    if n < 3 or a.strides[axis] > a.itemsize:
        return np.add.reduce(a, axis)
    return np.add.accumulate(a, axis)[-1] if axis == 0 else np.add.accumulate(a, axis)[:, -1]


def _cascade(a):
    """multi_row_sum: the sum of a's rows (axis 0) in torch's levels, for every column."""
    n, cols = a.shape[0], a.shape[1:]
    step = 1 << max(4, (n - 1).bit_length() // 4)
    if n < step:
        return _running(a)
    k = n - n % step
    levels = [_running(a[k:])] if k < n else []  # (level 0: the rows after the last full block)
    sums = _running(a[:k].reshape(-1, step, *cols), 1)
    for _ in range(2):  # levels 1 and 2 keep the partial groups; level 3 takes every full one
        k = len(sums) - len(sums) % step
        if k == 0:  # (no full group: the levels above stay 0)
            break
        if k < len(sums):
            levels.append(_running(sums[k:]))
        sums = _running(sums[:k].reshape(-1, step, *cols), 1)
    levels.append(_running(sums))
    total = levels[0]
    for level in levels[1:]:  # (levels that stayed 0 are left out: adding 0 changes no sum but -0's sign)
        total = total + level
    return total


def _register_rows(rows):
    """_cascade of a C-ordered table, as one numpy reduction up to 16 rows (a single block)."""
    return np.add.reduce(rows, 0) if len(rows) <= 16 else _cascade(rows)


def _ilp(a):
    """row_sum: a's rows dealt to four cascades, the rows after the last four into the first, then added."""
    k = a.shape[0] - a.shape[0] % 4
    part = _cascade(a[:k].reshape(-1, 4, *a.shape[1:]))
    first = part[0]
    for row in a[k:]:
        first = first + row
    return ((first + part[1]) + part[2]) + part[3]


def _vector(a, lanes, per_load):
    """vectorized_inner_sum over axis 0 (contiguous in torch's memory): registers of `per_load` terms, folded to
    `lanes` accumulator lanes (float16 loads 2 terms per float lane), summed by `_ilp`; then a running sum from 0
    of the terms after the last full register and of the lanes."""
    k = a.shape[0] - a.shape[0] % per_load
    regs = a[:k].reshape(-1, per_load, *a.shape[1:])
    if per_load != lanes:
        regs = regs[:, :lanes] + regs[:, lanes:]  # (the two halves of a register, as converted to float)
    return _running(np.concatenate([a[k:], _ilp(regs)]))


def _call(a, s1, i0, i1, item, dtype):
    """What the kernel's loop gives for one 2-d block: a (s0, ..., s1) in the accumulating dtype, axis 0 the
    reduced dim of stride i0, the last the dim of stride i1 beside it. Returns (..., s1)."""
    per_load, lanes = VECTOR_BYTES // item, VECTOR_BYTES // a.dtype.itemsize
    flat = a.reshape(a.shape[0], -1)
    if i0 == item and a.shape[0] >= per_load:
        return _vector(flat, lanes, per_load).reshape(a.shape[1:])
    if i1 == item and s1 >= per_load:
        cut = s1 - s1 % (4 * lanes)  # groups of four registers get cascades, the columns after them ilp sums
    elif i0 < i1:
        cut = 0
    else:
        cut = s1 - s1 % 4
    if cut == s1:
        return _cascade(flat).reshape(a.shape[1:])
    if cut == 0:
        return _ilp(flat).reshape(a.shape[1:])
    left = _cascade(np.ascontiguousarray(a[..., :cut]).reshape(a.shape[0], -1))
    right = _ilp(np.ascontiguousarray(a[..., cut:]).reshape(a.shape[0], -1))
    return np.concatenate([left.reshape(a.shape[1:-1] + (cut,)), right.reshape(a.shape[1:-1] + (-1,))], -1)


def _iteration(shape, strides, reduced):
    """TensorIterator's dims for a reduction, innermost first: (sizes, input strides, reduced flags, and the
    order of x's dims that gives them, innermost first) after
    reorder_dimensions (reduced dims first, then by the contiguous output's strides, the input's breaking ties)
    and coalesce_dimensions (neighbours that walk memory as one dim become one)."""
    n = len(shape)
    out, step = [0] * n, 1
    for d in reversed(range(n)):
        if not reduced[d]:
            out[d], step = step, step * shape[d]

    def order(a, b):  # 1: a goes after b (should_swap)
        if (out[a] == 0) != (out[b] == 0):
            return 1 if out[b] == 0 else -1
        for st in (out, strides):
            if st[a] and st[b]:
                if st[a] != st[b]:
                    return 1 if st[a] > st[b] else -1
                if shape[a] > shape[b]:
                    return 1
        return 0
    perm = list(reversed(range(n)))
    for i in range(1, n):  # (an insertion sort that stops at the first decisive comparison)
        j = i
        for k in range(i - 1, -1, -1):
            c = order(perm[k], perm[j])
            if c < 0:
                break
            if c > 0:
                perm[k], perm[j], j = perm[j], perm[k], k
    dims = [[shape[p], strides[p], out[p]] for p in perm]
    merged = dims[:1]
    for d in dims[1:]:
        last = merged[-1]
        if last[0] == 1 or d[0] == 1 or (last[0] * last[1] == d[1] and last[0] * last[2] == d[2]):
            if last[0] == 1:
                last[1], last[2] = d[1], d[2]
            last[0] *= d[0]
        else:
            merged.append(d)
    return [d[0] for d in merged], [d[1] for d in merged], [d[2] == 0 for d in merged], perm


def _walked(x, perm, sizes):
    """x with its dims in the iteration's order, merged dims as one (outermost first; a view where the merged
    dims walk memory evenly, which is what merging them means)."""
    return x.transpose(perm[::-1]).reshape(sizes[::-1])


def _first(a):
    """a with its last axis first."""
    return a.transpose((a.ndim - 1,) + tuple(range(a.ndim - 1)))


def _added_in_turn(parts, out_dtype, axis=-1):
    """What torch's output holds after `out += part` for each part along axis, from 0, in out_dtype (for float16,
    each part and each partial sum is rounded to float16; the parts are in the accumulating dtype)."""
    parts = np.moveaxis(parts, axis, 0)
    if parts.dtype == out_dtype:
        return _running(np.ascontiguousarray(parts)) + out_dtype.type(0)  # (0 + a sum of zeros is +0)
    total = np.zeros(parts.shape[1:], out_dtype)
    for part in parts.astype(out_dtype):  # (c10::Half's += rounds the float part first)
        total = (total.astype(np.float32) + part.astype(np.float32)).astype(out_dtype)
    return total


def _dense(x):
    """Whether x's elements fill its memory without gaps or overlaps, in some order of dims."""
    expect = x.itemsize
    for stride, size in sorted((abs(t), s) for s, t in zip(x.shape, x.strides) if s != 1):
        if stride != expect:
            return False
        expect *= size
    return True


def torch_cast(x, dtype):
    """x.to(dtype) as torch lays it out: a dense tensor keeps its strides, any other becomes C-contiguous."""
    return x.astype(dtype, order="K") if _dense(x) else np.ascontiguousarray(x, dtype)


def _loaded(a, acc, nans):
    """a as the kernel reads it: a C-ordered copy in the accumulating dtype (NaNs read as 0 for nansum)."""
    a = np.ascontiguousarray(a, acc)
    return np.where(np.isnan(a), acc.type(0), a) if nans else a


def torch_sum(x, dims=None, nans=False):
    """x summed over dims (a tuple, None: all) with torch's additions (nans: NaNs count as 0, nansum's kernel);
    x is in the dtype torch sums in (float16 sums in float32 and rounds at the end). The result has numpy's
    keepdims=False shape."""
    out_shape = () if dims is None else tuple(s for d, s in enumerate(x.shape) if d not in dims)
    if nans and x.ndim == 0:
        x = np.where(np.isnan(x), x.dtype.type(0), x)
    if x.size == 0 or x.ndim == 0:
        return np.zeros(out_shape, x.dtype) + x.reshape(out_shape) if x.size else np.zeros(out_shape, x.dtype)
    if min(x.strides) < 0:
        x = np.ascontiguousarray(x)  # (torch has no negative strides; a flipped array is read as a dense one)
    if dims and not nans and x.dtype != _F16 and x.flags.c_contiguous:
        out = _leading_or_trailing(x, dims)
        if out is not None:
            return out.reshape(out_shape)
    sizes, strides, reduced, perm = _iteration(x.shape, x.strides, [dims is None or d in dims for d in range(x.ndim)])
    if x.dtype == _F16 and len(sizes) > 1 and reduced[1] and not nans:
        # sum_out's float buffer: where the kernel would add row sums into a float16 output, torch sums a float32
        # copy into a float32 result and rounds that once
        return torch_sum(torch_cast(x, np.float32), dims).astype(_F16)
    if not reduced[0]:  # (a sum over dims of size 1: 0 + x)
        return (_loaded(x, x.dtype, nans).reshape(out_shape) + x.dtype.type(0)).astype(x.dtype)
    if len(sizes) == 1:
        sizes, strides, reduced = sizes + [1], strides + [0], reduced + [True]
    view = _walked(x, perm, sizes)
    acc = np.dtype(np.float32) if x.dtype == _F16 else x.dtype
    if math.prod(out_shape) == 1 and x.size >= _GRAIN and intraop_threads() > 1:
        return _two_passes(view, sizes, strides, x.dtype, nans).reshape(out_shape)
    block = _loaded(_first(view), acc, nans)
    parts = _split_columns(block, sizes, strides, reduced, x.dtype)
    if not reduced[1]:
        return (parts + acc.type(0)).astype(x.dtype).reshape(out_shape)
    k = reduced.index(False) if False in reduced else len(reduced)
    kept = math.prod(sizes[k:])
    return _added_in_turn(parts.reshape(kept, -1), x.dtype).reshape(out_shape)


def _leading_or_trailing(x, dims):
    """The common sums of a C-ordered x over its first dims (a bias's gradient, a batch's mean) or its last (a
    row's), whose iteration is two merged dims: straight to the kernel's loop (None for other dims)."""
    k, item = len(dims), x.itemsize
    if all(x.shape[d] == 1 for d in range(x.ndim) if d not in dims):  # (one result: the dims kept have size 1)
        return _flat(x.reshape(-1))
    rows = math.prod(x.shape[:k]) if dims == tuple(range(k)) else None
    if rows is None and dims == tuple(range(x.ndim - k, x.ndim)):
        cols = math.prod(x.shape[x.ndim - k:])
        if cols > 1 and x.size > cols:  # (rows of cols: a vector or ilp sum of each row)
            return _call(np.ascontiguousarray(x.reshape(-1, cols).T), x.size // cols, item, cols * item, item,
                         x.dtype) + x.dtype.type(0)
        return None
    if rows is None or rows < 2 or x.size == rows:
        return None
    cols = x.size // rows
    return _split_columns(x.reshape(rows, cols), [rows, cols], [cols * item, item], [True, False], x.dtype) \
        + x.dtype.type(0)


def _split_columns(block, sizes, strides, reduced, dtype):
    """_call on the block, cut as parallel_dim_reduction cuts the dim beside the reduced one between threads
    when that is the only kept dim (the cut moves where the cascade columns end)."""
    item, s1 = dtype.itemsize, sizes[1]
    if reduced[1] or len(sizes) > 2 or block.size < _GRAIN or s1 < 2 or intraop_threads() < 2:
        return _call(block, s1, strides[0], strides[1], item, dtype)
    threads = intraop_threads()
    tasks = min(threads, s1)
    chunk = -(-s1 // tasks)
    per = 128 // item if strides[1] == item else 1  # (contiguous columns: cut at multiples of 128 bytes)
    cuts = sorted({c - c % per if c != s1 else c for c in range(0, s1 + chunk, chunk) if c <= s1} | {s1})
    parts = [_call(np.ascontiguousarray(block[..., b:e]), e - b, strides[0], strides[1], item, dtype)
             for b, e in zip(cuts, cuts[1:]) if b != e]
    return np.concatenate(parts, -1)


def _two_passes(view, sizes, strides, dtype, nans):
    """A full sum of 32768 elements or more: each thread sums its range of the iteration (in serial_for_each's
    2-d steps) into its own slot, then the slots (one per thread) are summed."""
    acc = np.dtype(np.float32) if dtype == _F16 else dtype
    slots = np.zeros(intraop_threads(), dtype)
    for t, (begin, end) in enumerate(_thread_chunks(view.size)):
        parts = [_call(_loaded(_first(block), acc, nans), block.shape[-2], strides[0],
                       strides[1], dtype.itemsize, dtype).reshape(-1) for block in _steps(view, sizes, begin, end)]
        slots[t] = _added_in_turn(np.concatenate(parts), dtype)
    return torch_sum(slots)


def _steps(view, sizes, begin, end):
    """The 2-d blocks (..., step1, step0) that serial_for_each hands the loop for the range [begin, end) of the
    iteration (DimCounter: the rest of a row, then whole rows up to the end of dim 1, ...)."""
    values, rest = [], begin
    for s in sizes:
        values.append(rest % s)
        rest //= s
    offset = begin
    while offset < end:
        step0 = min(sizes[0] - values[0], end - offset)
        step1 = min(sizes[1] - values[1], (end - offset) // sizes[0]) if step0 == sizes[0] else 1
        at = tuple(values[:1:-1])
        yield view[at + (slice(values[1], values[1] + step1), slice(values[0], values[0] + step0))]
        offset += step0 * step1
        carry, i = (step1, 1) if step1 != 1 else (step0, 0)
        while carry and i < len(sizes):
            values[i] += carry
            carry = 1 if values[i] >= sizes[i] else 0
            values[i] -= sizes[i] if carry else 0
            i += 1


def _flat(v, split=True):
    """torch's sum of a contiguous 1-d v (float16 added in float32): vectorized_inner_sum; above 32768 terms
    each thread sums its part into a slot of its own, then the slots are summed."""
    n = v.shape[0]
    if split and n >= _GRAIN and intraop_threads() > 1:
        parts = _thread_chunks(n)
        slots = np.zeros(intraop_threads(), v.dtype)
        slots[:len(parts)] = [_flat(v[b:e], False) for b, e in parts]
        return _flat(slots, False)
    return _double(v) if v.dtype == _F64 else _single(v) if v.dtype == _F32 else _vector_1d(v)


def _single(v):
    """_flat of float32 below the thread cut, in few numpy calls: the running sums of rows of four registers, the
    registers after them stacked under the first so that one more reduction adds them in torch's order, then a
    running sum from 0 of the terms after the last register and of the lanes."""
    n = v.shape[0]
    if n < 8:  # (ilp: the first term, the terms after four, then the second to fourth)
        terms = v if n < 5 else np.concatenate((v[:1], v[4:], v[1:4]))
        return np.add.accumulate(terms)[-1] + _F32.type(0) if n else np.array(0, _F32)
    k, end = n - n % 32, n - n % 8
    if k:
        regs = _register_rows(v[:k].reshape(-1, 32))
        lanes = np.add.reduce(np.concatenate((regs[:8], v[k:end], regs[8:])).reshape(-1, 8), 0)
    else:  # (one to three registers and no row: the first register's lanes take them in turn, the others stay 0)
        lanes = np.add.reduce(v[:end].reshape(-1, 8), 0)
    return np.add.accumulate(np.concatenate((v[end:], lanes)))[-1] + _F32.type(0)


def _double(v):
    """_flat of float64 below the thread cut, as a 0-d array."""
    return np.array(_double_value(v))


def _double_value(v):
    """_flat of float64 below the thread cut, as a Python float: the registers' four lanes finished in Python
    floats (the same roundings in fewer numpy calls)."""
    n = v.shape[0]
    if n < 4:  # (a running sum)
        total = 0.0
        for t in v.tolist():
            total += t
        return total
    k = n - n % 16  # (rows of four registers: running sums per lane, by the cheapest numpy call for the count)
    if k < 32:
        vals = v.tolist()
        p, vals = (vals[:16] if k else [0.0] * 16), vals[k:]
    else:
        p = v[:16] + v[16:32] if k == 32 else _register_rows(v[:k].reshape(-1, 16))
        p, vals = p.tolist(), v[k:].tolist()
    a, b, c, d = p[0], p[1], p[2], p[3]
    end = len(vals) - len(vals) % 4
    for i in range(0, end, 4):
        a, b, c, d = a + vals[i], b + vals[i + 1], c + vals[i + 2], d + vals[i + 3]
    total = 0.0
    for t in vals[end:]:
        total += t
    total += ((a + p[4]) + p[8]) + p[12]
    total += ((b + p[5]) + p[9]) + p[13]
    total += ((c + p[6]) + p[10]) + p[14]
    return total + (((d + p[7]) + p[11]) + p[15])


def _vector_1d(v):
    """_flat below the thread cut for any dtype, with numpy: the "vector" loop where a register fits, else
    "ilp"."""
    acc = np.dtype(np.float32) if v.dtype == _F16 else v.dtype
    per_load = VECTOR_BYTES // v.itemsize
    a = v.astype(acc)[:, None]
    out = _vector(a, VECTOR_BYTES // acc.itemsize, per_load) if v.shape[0] >= per_load else _ilp(a)
    return (out[0] + acc.type(0)).astype(v.dtype)


def sum_like_torch(x, dims=None, keepdim=False, dtype=None):
    """np.sum(x, dims, dtype=dtype, keepdims=keepdim) with torch's additions for floating and complex dtypes
    (integer sums are exact in any order: numpy's)."""
    if dims is None and x.dtype is _F64 and dtype is None and type(x) is np.ndarray and x.size < _GRAIN \
            and x.flags.c_contiguous:  # (the common call, first)
        out = _double(x.reshape(-1))
        return out.reshape((1,) * x.ndim) if keepdim else out
    if dtype is not None and dtype != x.dtype:
        if np.dtype(dtype).kind not in "fc" or x.dtype.kind not in "fcbiu":
            return x.sum(axis=dims, keepdims=keepdim, dtype=dtype)
        x = torch_cast(x, dtype)
    if x.dtype.kind not in "fc" or type(x) is not np.ndarray:
        return x.sum(axis=dims, keepdims=keepdim, dtype=dtype)
    if dims is None and x.flags.c_contiguous:  # (the common call: one dim in memory order)
        out = _flat(x.reshape(-1))
    else:
        out = torch_sum(x, dims)
    return _kept(out, x.shape, dims) if keepdim else out


def mean_like_torch(x, dims=None, keepdim=False, dtype=None):
    """torch's CPU mean: the sum in torch's order (float16 sums in float32), divided by the count in that
    precision, then given the result's dtype."""
    if dims is None and dtype is None and x.dtype is _F64 and 0 < x.size < _GRAIN and x.flags.c_contiguous:
        return np.array(_double_value(x.reshape(-1)) / x.size)  # (the common call, first: Python's float division)
    out_dtype = x.dtype if dtype is None else np.dtype(dtype)
    sum_dtype = np.dtype(np.float32) if out_dtype == _F16 else out_dtype
    total = sum_like_torch(x, dims, keepdim, None if sum_dtype == x.dtype else sum_dtype)
    n = x.size if dims is None else math.prod([x.shape[d] for d in dims])
    return np.asanyarray(total / n, out_dtype)  # (asanyarray: a meta array stays meta)


def _kept(out, shape, dims):
    return out.reshape([1 if dims is None or d in dims else s for d, s in enumerate(shape)])


def nansum_like_torch(x, dims=None, keepdim=False):
    """np.nansum(x, dims, keepdims=keepdim) with torch's additions (nansum's kernel is sum's, reading NaN as 0)."""
    if x.dtype.kind not in "f" or type(x) is not np.ndarray:
        return np.nansum(x, axis=dims, keepdims=keepdim)
    if dims is None and x.flags.c_contiguous:
        v = x.reshape(-1)
        out = _flat(np.where(np.isnan(v), v.dtype.type(0), v))
    else:
        out = torch_sum(x, dims, nans=True)
    return _kept(out, x.shape, dims) if keepdim else out
