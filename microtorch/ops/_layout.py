"""The memory layout torch gives the result of an elementwise op on operands of different layouts.

numpy lays such a result out in C order; torch's TensorIterator orders the dims by the operands'
strides, and the first operand that tells two dims apart decides (`x.t() + y` is transposed like
`x.t()`). Students never see strides, but they see what depends on them: whether a later reshape
is a view (ViewBackward0) or a copy (UnsafeViewBackward0 over CloneBackward0), and whether view()
refuses. When every operand is C-contiguous, both libraries agree and nothing is done.
"""
import numpy as np


def like_torch(out, *inputs):
    """out (a fresh numpy result of the op on `inputs`) laid out as torch's would be."""
    if out.ndim < 2 or out.size < 2:
        return out
    for x in inputs:  # (an operand of one dim, or broadcast from one element, tells no two dims apart;
        # c_contiguous first: the common operand stops there)
        if isinstance(x, np.ndarray) and not x.flags.c_contiguous and x.ndim > 1 and any(x.strides):
            break
    else:  # every operand is laid out in C order, as numpy's result
        return out
    arrays = [x for x in inputs if isinstance(x, np.ndarray) and x.ndim]
    dims = [d for d in range(out.ndim) if out.shape[d] > 1]  # (a size-1 dim's stride is no one's business)
    strides = [_broadcast_strides(x, out.shape) for x in arrays]
    order = _fastest_first(dims, strides, out.shape)[::-1]  # slowest to fastest
    if _dense_in(out, order):  # numpy chose the same layout
        return out
    rest = [d for d in range(out.ndim) if d not in order]
    layout = rest + order
    buf = np.empty([out.shape[d] for d in layout], out.dtype)
    result = buf.transpose(np.argsort(layout))
    result[...] = out
    return result


def like_torch_pair(out, a, b):
    """like_torch(out, a, b) for the two arrays of a binary op, answering the common case first: both laid out in
    C order, as numpy's result is, so nothing to do (a third of the cost of like_torch's loop over its operands,
    which W6's products and sums pay on every op)."""
    if type(a) is np.ndarray and type(b) is np.ndarray and a.flags.c_contiguous and b.flags.c_contiguous:
        return out  # (vmap's batched arrays and meta arrays take like_torch's own tests)
    return like_torch(out, a, b)


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
