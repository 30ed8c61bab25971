"""The strides torch gives the result of an einsum of two or more operands (ATen's Linear.cpp, torch 2.13).

torch lines every operand up in one order of labels (the output's, then the summed ones), contracts them two at a
time from the left, and returns a view of the last product. A product with labels to sum is a `bmm`, whose result
is permuted back to that order: dense, but often not in C order (torch swaps the two operands when every output dim
of the second comes before those of the first, so `einsum('ij,jk->ki', a, b)` is in C order, while
`einsum('bij,bjk->kib', a, b)` is not). A product with nothing to sum is an elementwise `mul`, laid out by
TensorIterator from the operands' strides. Students see the layout through what depends on it: whether `view()`
works, whether `contiguous()` copies, whether a later matmul folds. Nothing is computed here: the operands are
(size, stride) pairs per label, in elements.
"""
import numpy as np

from ._layout import _fastest_first
from .einsum_copies import _permuted
from .shape import view_strides


def result_strides(terms, out, shapes, strides):
    """The strides (in elements) of torch's einsum of operands with these labels (a repeated label: its diagonal),
    shapes and strides, for the output labels `out`; None for one operand (a view or a sum, as microtorch's) or an
    empty dim."""
    if len(terms) < 2 or any(0 in s for s in shapes):
        return None
    labels = list(out) + sorted({c for t in terms for c in t} - set(out))
    ops = [_permuted(t, labels, s, st) for t, s, st in zip(terms, shapes, strides)]
    counts = [sum(op[d][0] != 1 for op in ops) for d in range(len(labels))]  # operands that still have each label
    while len(ops) > 1:
        a, b, summed = _sum_one_sided(ops.pop(0), ops.pop(0), counts, len(out))
        ops.insert(0, _bmm_result(a, b, summed) if summed else _mul_result(a, b))
    return _dropped(ops[0], len(out))


def _sum_one_sided(a, b, counts, n_out):
    """torch's step before each product: a summed label that only one of the two still has (and no operand after
    them) is summed away in it (keepdim: a dense result in C order); one both have, and no later operand, is summed
    by the product. Returns the two operands and the dims the product sums."""
    summed, own = [], ([], [])
    for d in range(n_out, len(a)):
        sa, sb = a[d][0] != 1, b[d][0] != 1
        if sa and sb:
            counts[d] -= 1
            if counts[d] == 1:
                summed.append(d)
                counts[d] = 0
        elif counts[d] == 1 and (sa or sb):
            own[0 if sa else 1].append(d)
            counts[d] = 0
    a, b = (_dense([(1 if d in dims else n) for d, (n, _) in enumerate(op)]) if dims else op
            for op, dims in zip((a, b), own))
    return a, b, summed


def _bmm_result(a, b, summed):
    """sumproduct_pair: the dims both have (lro), only the left has (lo), the rest (ro, size-1 dims included); bmm's
    result is laid out (lro, lo, summed, ro) and permuted back. The operands swap when ro ends before lo starts."""
    lro, lo, ro = [], [], []
    for d in range(len(a)):
        if d not in summed:
            sl, sr = a[d][0] != 1, b[d][0] != 1
            (lro if sl and sr else lo if sl else ro).append(d)
    left, right = a, b
    if lo and ro and ro[-1] < lo[0]:
        lo, ro, left, right = ro, lo, b, a
    order = lro + lo + summed + ro
    sizes = [left[d][0] for d in lro + lo] + [1] * len(summed) + [right[d][0] for d in ro]
    result = [None] * len(a)
    for d, dim in zip(order, _dense(sizes)):
        result[d] = dim
    return result


def _mul_result(a, b):
    """at::mul of the two: TensorIterator's layout, dims sorted by the operands' strides (0 where broadcast); two
    operands of one shape, both contiguous, take its fast path (C order)."""
    shape = [max(na, nb) for (na, _), (nb, _) in zip(a, b)]
    if [n for n, _ in a] == shape == [n for n, _ in b] and _contiguous(a) and _contiguous(b):
        return _dense(shape)
    strides = [[0 if n != size else s for (n, s), size in zip(op, shape)] for op in (a, b)]
    fastest = _fastest_first(list(range(len(shape))), strides, shape)
    result, step = [None] * len(shape), 1
    for d in fastest:
        result[d] = (shape[d], step)
        step *= max(shape[d], 1)
    return result


def _dropped(result, n_out):
    """The strides of the final view that drops the summed dims (size 1 by now), as torch's view computes them."""
    sizes, strides = [n for n, _ in result], [s for _, s in result]
    if len(result) == n_out:
        return strides
    stand_in = np.lib.stride_tricks.as_strided(np.zeros(1, np.int8), sizes, strides)
    return view_strides(stand_in, sizes[:n_out])


def _dense(sizes):
    """(size, stride) per dim of a dense tensor in C order (torch's strides: a size-1 dim's is the next one's)."""
    out, step = [], 1
    for n in reversed(sizes):
        out.append((n, step))
        step *= max(n, 1)
    return out[::-1]


def _contiguous(op):
    """torch's is_contiguous: C order, size-1 dims' strides not read."""
    step = 1
    for n, s in reversed(op):
        if n != 1 and s != step:
            return False
        step *= n
    return True
