"""Matrix products with torch's rules for 1-D, 2-D and batched operands."""
import numpy as np

from .._tensor import Tensor
from ._op import Op, promoted


class Matmul(Op):
    """d(A@B) = (G @ B^T, A^T @ G), with 1-D operands promoted and batch dims summed"""
    _grad_fn_name = "UnsafeViewBackward0"

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return np.matmul(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        if a.ndim == 1 and b.ndim == 1:
            return grad * b.conj(), grad * a.conj()
        a2 = a.unsqueeze(0) if a.ndim == 1 else a
        b2 = b.unsqueeze(-1) if b.ndim == 1 else b
        g = grad.unsqueeze(-2) if a.ndim == 1 else grad
        g = g.unsqueeze(-1) if b.ndim == 1 else g
        ga = gb = None
        if ctx.needs_input_grad[0]:
            ga = matmul(g, b2.mT.conj())
            ga = ga.squeeze(-2) if a.ndim == 1 else ga
        if ctx.needs_input_grad[1]:
            gb = matmul(a2.mT.conj(), g)
            gb = gb.squeeze(-1) if b.ndim == 1 else gb
        return ga, gb

    @staticmethod
    def jvp(ctx, ta, tb):
        a, b = ctx.inputs
        return matmul(ta, b) + matmul(a, tb)


class Mm(Matmul):
    _grad_fn_name = "MmBackward0"


class Mv(Matmul):
    _grad_fn_name = "MvBackward0"


class Dot(Matmul):
    _grad_fn_name = "DotBackward0"


class Bmm(Matmul):
    _grad_fn_name = "BmmBackward0"


def _check(a, b, op):
    if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
        raise TypeError(f"{op}(): expected Tensors, got {type(a).__name__} and {type(b).__name__}")
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(f"{op}: both arguments need to be at least 1D, but they are {a.ndim}D and {b.ndim}D")
    ka = a.shape[-1]
    kb = b.shape[-2] if b.ndim > 1 else b.shape[0]
    if ka != kb:
        if a.ndim == 1 and b.ndim == 1:
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] to "
                               f"have the same number of elements, but got {a.shape[0]} and {b.shape[0]} elements "
                               "respectively")
        sa = "x".join(map(str, a.shape if a.ndim > 1 else (1,) + tuple(a.shape)))
        sb = "x".join(map(str, b.shape if b.ndim > 1 else tuple(b.shape) + (1,)))
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({sa} and {sb}) in {op}: the last "
                           f"dimension of the first ({ka}) must equal the first dimension of the second ({kb})")
    try:
        np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise RuntimeError(f"{op}: the batch dimensions {list(a.shape[:-2])} and {list(b.shape[:-2])} are not "
                           "broadcastable") from None
    if a.dtype is not b.dtype:
        if a.requires_grad or b.requires_grad:
            a, b = promoted(a, b)
        else:
            raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {a.dtype} != {b.dtype}")
    return a, b


def matmul(a, b):
    a, b = _check(a, b, "matmul")
    if a.ndim == 2 and b.ndim == 2:
        return Mm.apply(a, b)
    if a.ndim == 1 and b.ndim == 1:
        return Dot.apply(a, b)
    if a.ndim == 2 and b.ndim == 1:
        return Mv.apply(a, b)
    return Matmul.apply(a, b)


def mm(a, b):
    if a.ndim != 2 or b.ndim != 2:
        raise RuntimeError(f"mm: self must be a matrix and mat2 must be a matrix (got {a.ndim}D and {b.ndim}D); "
                           "use matmul for other shapes")
    a, b = _check(a, b, "mm")
    return Mm.apply(a, b)


def bmm(a, b):
    if a.ndim != 3 or b.ndim != 3:
        raise RuntimeError(f"bmm: batch1 must be a 3D tensor and batch2 a 3D tensor (got {a.ndim}D and {b.ndim}D)")
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(f"bmm: batch1 and batch2 must have same number of batches, got {a.shape[0]} and "
                           f"{b.shape[0]}")
    a, b = _check(a, b, "bmm")
    return Bmm.apply(a, b)


def mv(a, v):
    if a.ndim != 2 or v.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {a.ndim}, {v.ndim}")
    a, v = _check(a, v, "mv")
    return Mv.apply(a, v)


def dot(a, b):
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    a, b = _check(a, b, "dot")
    return Dot.apply(a, b)


vdot = None


def outer(a, b):
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"outer: expected 1D tensors, got {a.ndim}D and {b.ndim}D")
    return a.unsqueeze(1) * b


ger = outer


class Addmm(Op):
    """bias + x @ w: d = (G, G @ w^T, x^T @ G)"""
    _grad_fn_name = "AddmmBackward0"

    @staticmethod
    def forward(ctx, bias, x, w):
        ctx.save_for_backward(x, w)
        return bias + x @ w

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        return (grad if ctx.needs_input_grad[0] else None,
                grad.mm(w.mT.conj()) if ctx.needs_input_grad[1] else None,
                x.mT.conj().mm(grad) if ctx.needs_input_grad[2] else None)

    @staticmethod
    def jvp(ctx, tbias, tx, tw):
        _, x, w = ctx.inputs
        return tbias + matmul(tx, w) + matmul(x, tw)


def addmm(bias, x, w, *, beta=1, alpha=1):
    if beta != 1 or alpha != 1:
        return bias * beta + mm(x, w) * alpha
    x, w = _check(x, w, "addmm")
    return Addmm.apply(bias, x, w)


class Einsum(Op):
    """einsum: each operand's gradient is an einsum of the gradient with the others"""
    _grad_fn_name = "EinsumBackward0"

    @staticmethod
    def forward(ctx, *ops, equation):
        ctx.equation = equation
        ctx.save_for_backward(*ops)
        return np.asarray(np.einsum(equation, *ops))

    @staticmethod
    def backward(ctx, grad):
        ops = ctx.saved_tensors
        lhs, out = ctx.equation.split("->")
        terms = lhs.split(",")
        grads = []
        for i, term in enumerate(terms):
            if not ctx.needs_input_grad[i]:
                grads.append(None)
                continue
            others = [t for j, t in enumerate(terms) if j != i]
            # indices that appear only in this operand were summed over: broadcast them back
            sizes = {c: ops[i].shape[k] for k, c in enumerate(term)}
            missing = [c for c in term if c not in out and all(c not in o for o in others)]
            eq = ",".join([out] + others) + "->" + "".join(c for c in term if c not in missing)
            g = einsum(eq, grad, *[o.conj() for j, o in enumerate(ops) if j != i])
            if missing:
                present = "".join(c for c in term if c not in missing)
                g = einsum(present + "->" + present, g)
                shape = [sizes[c] if c not in missing else 1 for c in term]
                perm_src = present + "".join(missing)
                g = g.reshape([sizes[c] for c in present] + [1] * len(missing))
                g = g.permute([perm_src.index(c) for c in term]).expand(*[sizes[c] for c in term])
                del shape
            grads.append(g)
        return tuple(grads)


def _normalize_equation(equation, operands):
    eq = equation.replace(" ", "")
    if "->" not in eq:
        letters = [c for c in eq if c.isalpha()]
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
        eq = eq + "->" + out
    if "..." in eq:
        raise NotImplementedError("einsum with '...' is not supported by microtorch; write the dimensions out")
    return eq


def einsum(equation, *operands):
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    eq = _normalize_equation(equation, operands)
    terms = eq.split("->")[0].split(",")
    if len(terms) != len(operands):
        raise RuntimeError(f"einsum(): {len(terms)} operands in the equation but {len(operands)} tensors given")
    for t, o in zip(terms, operands):
        if len(t) != o.ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(t)}) does not match "
                               f"the number of dimensions ({o.ndim}) for operand {terms.index(t)}")
    operands = promoted(*operands)
    return Einsum.apply(*operands, equation=eq)
