"""Which operand of a two-operand einsum torch copies before its product.

torch's einsum (ATen's Linear.cpp) permutes each operand into one order of labels (the output's labels, then the
summed ones in alphabetical order, upper case first), drops or sums the labels one operand lacks, then contracts with
`bmm` (or `dot` when every label is summed), reshaping each operand to three dims first. A reshape that cannot be a
view copies: `bmm` then saves that copy for backward, not a view of the operand, so the operand may change in place
after the einsum and backward still works (with its old values). Where the reshape is a view, the saved tensor shares
the operand's version counter and an in-place change makes backward raise. `copies()` retraces that path on the
operands' shapes and strides (nothing is computed), so that microtorch's einsum saves a copy where torch's does.
"""
import numpy as np

from .shape import view_strides


def copies(terms, out, shapes, strides):
    """For operand 0 and operand 1, what torch's product reads (and saves) of it when that is not a view of it:
    "sum" (a label only it has was summed first), "copy" (a reshape could not be a view), else None. terms: each
    operand's labels (a repeated label takes a diagonal); shapes, strides: in elements."""
    labels = list(out) + sorted({c for t in terms for c in t} - set(out))
    a, b = (_permuted(t, labels, s, st) for t, s, st in zip(terms, shapes, strides))
    if any(0 in (na, nb) for (na, _), (nb, _) in zip(a, b)):  # (an empty label: torch returns zeros, no product)
        return None, None
    a, b, summed, fresh = _drop_one_sided(a, b, len(out))
    if not summed:  # a product of the two (torch's mul): each operand as it is
        copied = [False, False]
    elif len(summed) == len(a):  # every dim summed: torch flattens both for dot
        copied = [len(t) > 1 and _copies_to(t, [_numel(t)]) for t in (a, b)]
    else:
        copied = _pair_copies(a, b, summed)
    return tuple("sum" if f else "copy" if c else None for f, c in zip(fresh, copied))


def _permuted(term, labels, shape, stride):
    """The operand as torch lines it up: (size, stride) per label, a diagonal's stride the sum of its dims', a
    missing label a dim of size 1 (unsqueezed at the end: stride 1)."""
    dims = {}
    for c, n, s in zip(term, shape, stride):
        dims[c] = (n, dims[c][1] + s) if c in dims else (n, s)
    return [dims.get(c, (1, 1)) for c in labels]


def _drop_one_sided(a, b, n_out):
    """torch's squeeze or sum of a summed label that only one operand has with a size other than 1. Returns the
    two operands' dims left, the summed dims left for the product, and which operand a sum made a new tensor."""
    a, b, summed, k = list(a), list(b), [], n_out
    fresh = [False, False]
    for _ in range(n_out, len(a)):
        na, nb = a[k][0], b[k][0]
        if nb == 1 or na == 1:  # one operand has it: that one sums it (a size 1 is squeezed), the other squeezes
            fresh[0] |= nb == 1 and na != 1
            fresh[1] |= nb != 1
            del a[k], b[k]
        else:
            summed.append(k)
            k += 1
    return a, b, summed, tuple(fresh)


def _pair_copies(left, right, summed):
    """sumproduct_pair: the dims in both (lro), in left only (lo), in right only (ro), and the summed ones; left
    is permuted to (lro, lo, sum, ro) and reshaped to 3 dims, right to (lro, sum, ro, lo)."""
    lro, lo, ro = [], [], []
    for i, ((nl, _), (nr, _)) in enumerate(zip(left, right)):
        if i in summed:
            continue
        (lro if nl != 1 and nr != 1 else lo if nl != 1 else ro).append(i)
    size = lambda t, ds: _numel([t[d] for d in ds])  # noqa: E731
    three = [size(left, lro), size(left, lo), size(left, summed)], [size(left, lro), size(left, summed), size(right, ro)]
    return (_copies_to([left[d] for d in lro + lo + summed + ro], three[0]),
            _copies_to([right[d] for d in lro + summed + ro + lo], three[1]))


def _numel(dims):
    n = 1
    for d in dims:
        n *= d[0] if isinstance(d, tuple) else d
    return n


def _copies_to(dims, new_shape):
    """Whether reshaping (size, stride) dims to new_shape copies (shape.py's view_strides: torch's computeStride),
    read off a stand-in array with those sizes and strides (in elements: itemsize 1), never read."""
    sizes, strides = [n for n, _ in dims], [s for _, s in dims]
    stand_in = np.lib.stride_tricks.as_strided(np.zeros(1, np.int8), sizes, strides)
    return view_strides(stand_in, new_shape) is None
