"""The memory layout torch gives the result of an elementwise op on operands of different layouts.

numpy lays such a result out in C order; torch's TensorIterator orders the dims by the operands'
strides, and the first operand that tells two dims apart decides (`x.t() + y` is transposed like
`x.t()`). Students never see strides, but they see what depends on them: whether a later reshape
is a view (ViewBackward0) or a copy (UnsafeViewBackward0 over CloneBackward0), and whether view()
refuses. When every operand is C-contiguous, both libraries agree and nothing is done.
"""
import functools

import numpy as np


def like_torch(out, *inputs):
    """out (a fresh numpy result of the op on `inputs`) laid out as torch's would be."""
    if out.ndim < 2 or out.size < 2:
        return out
    odd = False  # an operand in C order by numpy's flags, but not by the strides of its size-1 dims
    for x in inputs:  # (an operand of one dim, or broadcast from one element, tells no two dims apart)
        if not isinstance(x, np.ndarray):
            continue
        if not x.flags.c_contiguous:
            if x.ndim > 1 and any(x.strides):
                break
        elif not odd and 1 in x.shape and x.ndim > 1:
            odd = x.strides != _c_strides(x.shape, x.itemsize)
    else:  # every operand is laid out in C order, as numpy's result; torch's sort reads size-1 dims' strides too,
        # unless no operand broadcasts and none is a number (its fast path)
        if not odd or all(type(x) is np.ndarray and x.shape == out.shape for x in inputs if x is not None):
            return out  # (None: a bound clamp was not given, which is no operand to torch)
    arrays = [x for x in inputs if isinstance(x, np.ndarray) and x.ndim]
    return sorted_by(out, [_broadcast_strides(x, out.shape) for x in arrays])


def as_input(out, x):
    """out, an elementwise result of the one array x (its shape), laid out as torch's TensorIterator lays it out: in
    x's order with x's size-1 dims' strides, which numpy keeps neither of when x is not C-contiguous (a diagonal, a
    permutation). vmap's and meta arrays as they are."""
    if type(x) is np.ndarray and x.ndim > 1 and not x.flags.c_contiguous and type(out) is np.ndarray \
            and out.shape == x.shape:
        return like_torch(out, x)
    return out


def laid_out_as_input(cls):
    """Class decorator for an Op whose forward computes an elementwise result of its first argument: the result laid
    out by as_input, and what forward saved of it (relu's result) with it."""
    forward = cls.forward

    @functools.wraps(forward)
    def relaid(ctx, x, *args, **kwargs):
        out = forward(ctx, x, *args, **kwargs)
        laid = as_input(out, x)
        if laid is not out and ctx._to_save:
            ctx._to_save = tuple(laid if s is out else s for s in ctx._to_save)
        return laid
    cls.forward = staticmethod(relaid)
    return cls


def sorted_by(out, strides):
    """out laid out as TensorIterator lays out a result whose operands have these strides over out's dims (0 where
    broadcast). Size-1 dims take part in the sort as in torch: they have strides of their own (seen by .stride())
    and can carry a comparison past a dim no operand tells apart."""
    order = _fastest_first(list(range(out.ndim)), strides, out.shape)[::-1]  # slowest to fastest
    if _dense_in(out, order):  # numpy chose the same layout
        return out
    buf = np.empty([out.shape[d] for d in order], out.dtype)
    result = buf.transpose(np.argsort(order))
    result[...] = out
    return result


def like_torch_pair(out, a, b):
    """like_torch(out, a, b) for the two arrays of a binary op, answering the common case first: both laid out in
    C order, as numpy's result is, so nothing to do (a third of the cost of like_torch's loop over its operands,
    which W6's products and sums pay on every op)."""
    if (type(a) is np.ndarray and type(b) is np.ndarray and a.flags.c_contiguous and b.flags.c_contiguous
            and (a.shape == b.shape or 1 not in a.shape and 1 not in b.shape)):
        return out  # (vmap's batched arrays and meta arrays take like_torch's own tests)
    return like_torch(out, a, b)


def dense_strides(shape, itemsize):
    """C-order strides in bytes, a size-0 dim counted as 1 (as torch's)."""
    out, step = [], itemsize
    for n in reversed(shape):
        out.append(step)
        step *= max(n, 1)
    return out[::-1]


def _c_strides(shape, itemsize):
    """dense_strides as a tuple, remembered (W6's (100, 1) asks on every op)."""
    key = (shape, itemsize)
    strides = _C_STRIDES.get(key)
    if strides is None:
        if len(_C_STRIDES) > 1024:
            _C_STRIDES.clear()
        strides = _C_STRIDES[key] = tuple(dense_strides(shape, itemsize))
    return strides


_C_STRIDES = {}


def with_number(out, a):
    """out, a fresh result of an op on the array a and a number, laid out as torch's: the number is a 0-d operand to
    torch, which takes its fast path (C order for a contiguous a) only when no operand is; its sort then also reads
    the strides of a's size-1 dims (numpy's result has C strides there; a later op that broadcasts reads them)."""
    if type(out) is np.ndarray and out.ndim > 1 and 1 in out.shape:
        return like_torch(out, a, 0)
    return out


def converted(x, np_dtype):
    """x (an operand's array) in np_dtype, laid out as torch converts an operand to its op's dtype (x.to(dtype),
    before the result's layout is chosen from the operands): a dense x keeps its strides, a broadcast one gets its
    stride-0 dims in C order, where numpy's astype makes them the fastest. x itself when it has the dtype."""
    if x.dtype == np_dtype:
        return x
    out = x.astype(np_dtype)
    return like_torch(out, x) if type(x) is np.ndarray and not x.flags.c_contiguous else out  # (vmap's batched
    # arrays: as they are)


def _broadcast_strides(x, shape):
    """x's strides over the output's dims, 0 where x is broadcast (as TensorIterator sees them)."""
    lead = len(shape) - x.ndim
    return [0 if d < lead or x.shape[d - lead] != shape[d] else x.strides[d - lead] for d in range(len(shape))]


def _fastest_first(dims, strides, shape):
    """TensorIterator's insertion sort: compare two dims by the first operand whose strides differ
    (broadcast dims skipped; on equal strides the smaller size goes first)."""
    def should_swap(d0, d1):
        for st in strides:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return 1 if s0 > s1 else -1
            if shape[d0] > shape[d1]:
                return 1
        return 0
    perm = list(reversed(dims))
    for i in range(1, len(perm)):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    return perm


def _dense_in(out, order):
    """out's strides are those of a dense array laid out slowest-to-fastest in `order`."""
    step = out.itemsize
    for d in reversed(order):
        if out.strides[d] != step:
            return False
        step *= out.shape[d]
    return True
