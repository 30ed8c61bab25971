"""einsum, computed as torch computes it: out of the ops a student already knows.

torch's einsum (ATen's Linear.cpp) is not one op with its own derivative. It parses the equation, lines every
operand up in one order of labels (the output's, then the summed ones) with `diagonal`, `unsqueeze` and `permute`,
then contracts the operands two at a time from the left: a `mul` where nothing is summed, else `permute`, `reshape`
to three dims, `bmm`, `view` and `permute` back. microtorch does the same with its own Tensor ops, so an einsum's
graph, its saved tensors, its result's layout and its last bits are those of torch's, and the gradient needs no rule
of its own: each of those ops knows its derivative.

Labels are numbered as torch numbers them: A-Z are 0-25 and a-z 26-51 (the summed labels are taken in that order);
the j-th of the dims an ellipsis covers is 52 + j, counted so that every operand's ellipsis ends at the same dim.
"""
import math

from .._tensor import Tensor
from ..autograd._hooks import composite
from ._checks import check_einsum

_ELLIPSIS = 52


def _subscript(c):
    return ord(c) - ord("A") if c.isupper() else ord(c) - ord("a") + 26


def _letter(s):
    return chr(ord("A") + s) if s < 26 else chr(ord("a") + s - 26)


def _sublist_equation(args):
    """torch's other spelling, einsum(x, [0, 1], y, [1, 2], [0, 2]): labels as numbers below 52, `...` as Ellipsis."""
    def term(labels):
        if not isinstance(labels, (list, tuple)):
            raise TypeError(f"einsum(): a subscript list must be a list of ints, not {type(labels).__name__}: "
                            "write einsum(x, [0, 1], y, [1, 2], [0, 2])")
        out = ""
        for s in labels:
            if s is Ellipsis:
                out += "..."
            elif not isinstance(s, int):
                raise TypeError(f"einsum(): a subscript must be an int in [0, 52) or Ellipsis, not "
                                f"{type(s).__name__}")
            elif 0 <= s < 52:
                out += _letter(s)
            else:
                raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")
        return out
    equation = ",".join(term(labels) for labels in args[1::2])
    if len(args) % 2:
        return equation + "->" + term(args[-1]), args[:-1:2]
    return equation, args[::2]


def _operand_labels(terms, operands):
    """Each operand's labels, an ellipsis spelled out as the dims it covers, and how many dims the widest covers."""
    if len(terms) < len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation: give one term per "
                           f"operand ({len(terms)} terms, {len(operands)} operands)")
    ell = 0
    for k, (t, x) in enumerate(zip(terms, operands)):
        n = len(t.replace("...", ""))
        if n > x.ndim if "..." in t else n != x.ndim:
            what = "is more than" if "..." in t else "does not match"
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({n}) {what} the number of "
                               f"dimensions ({x.ndim}) for operand {k}" + ("" if "..." in t else " and no ellipsis "
                                                                              "was given"))
        if "..." in t:
            ell = max(ell, x.ndim - n)
    labels = []
    for t, x in zip(terms, operands):
        before, dots, after = t.partition("...")
        covered = x.ndim - len(before) - len(after) if dots else 0
        labels.append([_subscript(c) for c in before] + [_ELLIPSIS + j for j in range(ell - covered, ell)]
                      + [_subscript(c) for c in after])
    return labels, ell


def _label_order(labels, rhs, arrow, ell):
    """torch's order of the labels every operand is lined up in: the output's (given, or `...` then the labels seen
    once, A-Z before a-z), then the summed ones (an ellipsis left out of the output first). Returns it and the
    number of output dims."""
    counts = [0] * _ELLIPSIS
    for term in labels:
        for s in term:
            if s < _ELLIPSIS:
                counts[s] += 1
    dots = list(range(_ELLIPSIS, _ELLIPSIS + ell))
    if not arrow:
        out = dots + [s for s in range(_ELLIPSIS) if counts[s] == 1]
    else:
        before, has_dots, after = rhs.partition("...")
        out = [_subscript(c) for c in before] + (dots if has_dots else []) + [_subscript(c) for c in after]
    summed = [d for d in dots if d not in out] + [s for s in range(_ELLIPSIS) if counts[s] and s not in out]
    return out + summed, len(out)


def _not_broadcast(s, k, dim, n, seen):
    """torch's message for a label (or a dim under `...`) whose size n meets another size seen before."""
    if s >= _ELLIPSIS:
        return (f"einsum(): dimension {dim} covered by ellipsis in operand {k} has size {n} which does not broadcast "
                f"with previously seen ellipsis with size {seen} for the respective dimension")
    return (f"einsum(): subscript {_letter(s)} has size {n} for operand {k} which does not broadcast with previously "
            f"seen size {seen}")


def _lined_up(x, term, order, sizes, counts, k):
    """Operand k with one dim per label of `order`: the diagonal of a repeated label, a size-1 dim where it has no
    label, permuted into place. sizes and counts (how many operands have a label with a size other than 1) grow."""
    place, dim = [-1] * len(order), 0
    where = {s: i for i, s in enumerate(order)}
    for s in term:
        p = where[s]
        if place[p] == -1:
            n = x.shape[dim]
            if n != 1:
                if sizes[p] not in (1, n):
                    raise RuntimeError(_not_broadcast(s, k, dim, n, sizes[p]))
                sizes[p] = n
                counts[p] += 1
            place[p] = dim
            dim += 1
        else:  # a repeated label: its diagonal, moved to the first one's place
            if x.shape[dim] != x.shape[place[p]]:
                raise RuntimeError(f"einsum(): subscript {_letter(s)} is repeated for operand {k} but the sizes "
                                   f"don't match, {x.shape[dim]} != {x.shape[place[p]]}")
            x = x.diagonal(0, place[p], dim).movedim(-1, place[p])
    for p in range(len(place)):
        if place[p] == -1:
            x = x.unsqueeze(dim)
            place[p] = dim
            dim += 1
    return x.permute(place)


def _contract(ops, counts, n_out):
    """Contract the lined-up operands two at a time from the left. A summed label that no later operand has is
    summed by the product where both have it; where only one has it, that one sums it first."""
    while len(ops) > 1:
        a, b = ops.pop(0), ops.pop(0)
        summed, a_own, b_own = [], [], []
        for d in range(n_out, len(counts)):
            in_a, in_b = a.shape[d] != 1, b.shape[d] != 1
            if in_a and in_b:
                counts[d] -= 1
                if counts[d] == 1:
                    summed.append(d)
                    counts[d] = 0
            elif counts[d] == 1 and (in_a or in_b):
                (a_own if in_a else b_own).append(d)
                counts[d] = 0
        if a_own:
            a = a.sum(a_own, True)
        if b_own:
            b = b.sum(b_own, True)
        ops.insert(0, _sum_of_product(a, b, summed))
    return ops[0]


def _sum_of_product(left, right, summed):
    """(left * right).sum(summed, keepdim=True) as torch's sumproduct_pair computes it: a bmm of the dims both have
    (lro, the batch), those only the left has (lo) and only the right has (ro), over the summed ones."""
    if not summed:
        return left * right
    lro, lo, ro = [], [], []
    for d in range(left.ndim):
        if d not in summed:
            in_left, in_right = left.shape[d] != 1, right.shape[d] != 1
            (lro if in_left and in_right else lo if in_left else ro).append(d)
    if lo and ro and ro[-1] < lo[0]:  # (torch swaps the two so that bmm's result is already in the output's order)
        left, right, lo, ro = right, left, ro, lo
    size = lambda x, dims: math.prod(x.shape[d] for d in dims)  # noqa: E731
    out_size = [left.shape[d] for d in lro + lo] + [1] * len(summed) + [right.shape[d] for d in ro]
    batch, n_sum = size(left, lro), size(left, summed)
    a = left.permute(lro + lo + summed + ro).reshape(batch, size(left, lo), n_sum)
    b = right.permute(lro + summed + ro + lo).reshape(batch, n_sum, size(right, ro))
    order = lro + lo + summed + ro  # (the result's dims, in bmm's order, permuted back below)
    return a.bmm(b).view(out_size).permute([order.index(d) for d in range(len(order))])


@composite("aten::einsum")
def einsum(*args):
    """Einstein summation: einsum("ij,jk->ik", a, b) is a @ b; also einsum(a, [0, 1], b, [1, 2], [0, 2])."""
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, or at least one "
                         "operand and its subscripts list")
    if isinstance(args[0], Tensor):
        equation, operands = _sublist_equation(args)
    else:
        equation, operands = args[0], args[1:]
    if not isinstance(equation, str):
        raise TypeError(f"einsum(): argument 'equation' must be str, not {type(equation).__name__}: give the "
                        "subscripts as a string such as 'ij,jk->ik'")
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    for k, x in enumerate(operands):
        if not isinstance(x, Tensor):
            raise TypeError(f"einsum(): expected Tensor as element {k} in argument 1 (the operands), but got "
                            f"{type(x).__name__}; make it a tensor with torch.tensor(...)")
    equation = equation.replace(" ", "")
    check_einsum(equation, operands)
    lhs, arrow, rhs = equation.partition("->")
    labels, ell = _operand_labels(lhs.split(","), operands)
    order, n_out = _label_order(labels, rhs, arrow, ell)
    sizes, counts = [1] * len(order), [0] * len(order)
    ops = [_lined_up(x, term, order, sizes, counts, k) for k, (x, term) in enumerate(zip(operands, labels))]
    result = _contract(ops, counts, n_out)
    if len(order) == n_out:
        return result
    if len(operands) > 1:  # (every summed dim is 1 by now)
        return result.view(result.shape[:n_out])
    return result.sum(list(range(n_out, len(order))))
