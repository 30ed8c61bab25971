"""Triangular solves (linalg.solve_triangular, triangular_solve) and the solves with a Cholesky factor
(cholesky_solve, cholesky_inverse), with the Tensor helpers the decompositions share.

Forward substitutes row by row in numpy (numpy has no triangular solver); backward and jvp are Tensor ops
over the same solves, so they differentiate again."""
import numpy as np

from .._tensor import Tensor
from ._op import Op
from .linalg import matmul


# ---- numpy kernels ------------------------------------------------------------------------------
def _tri_solve_np(a, b, upper, left=True, unit=False):
    """X with A X = B (left) or X A = B, reading only A's triangle (and not its diagonal if unit)."""
    if not left:  # X A = B  <=>  A^T X^T = B^T, and A^T has the other triangle
        xt = _tri_solve_np(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2), not upper, True, unit)
        return np.ascontiguousarray(np.swapaxes(xt, -1, -2))
    n = a.shape[-1]
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    x = np.zeros(batch + b.shape[-2:], dtype=np.result_type(a, b))
    for i in (range(n - 1, -1, -1) if upper else range(n)):
        done = slice(i + 1, n) if upper else slice(0, i)
        s = b[..., i, :] - np.einsum("...k,...kj->...j", a[..., i, done], x[..., done, :])
        x[..., i, :] = s if unit else s / a[..., i, i, None]
    return x


# ---- Tensor helpers for the derivatives -----------------------------------------------------------
def _mH(x):
    return x.mT.conj()


def _tril(x, k=0):
    return x * Tensor._make(np.tril(np.ones(x.shape[-2:], dtype=bool), k))


def _triu(x, k=0):
    return x * Tensor._make(np.triu(np.ones(x.shape[-2:], dtype=bool), k))


def _eye(like, m, n=None):
    return Tensor._make(np.eye(m, n, dtype=like._data.dtype))


def _solve(a, b, upper, left=True, unit=False):
    """the differentiable triangular solve (A^-1 B or B A^-1)"""
    return SolveTriangular.apply(a, b, upper=upper, left=left, unit=unit)


def _real_diag(m):
    """diag(Re m) as a matrix (the diagonal a Hermitian part keeps)"""
    d = m.diagonal(0, -2, -1)
    d = d.real.to(m.dtype) if m.is_complex() else d
    return d.diag_embed()


# ---- triangular solves ------------------------------------------------------------------------------
class SolveTriangular(Op):
    """X = A^-1 B (left) or B A^-1, A triangular;  gB = A^-H G (or G A^-H), gA = -gB X^H (or -X^H gB) on A's
    triangle"""
    _grad_fn_name = "LinalgSolveTriangularBackward0"
    _saved_names = ("self", "result")
    _saved_values = {"upper": "upper", "left": "left", "unitriangular": "unit"}

    @staticmethod
    def forward(ctx, a, b, upper, left=True, unit=False):
        ctx.upper, ctx.left, ctx.unit = upper, left, unit
        out = _tri_solve_np(a, b, upper, left, unit)
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, x = ctx.saved_tensors
        gb = _solve(_mH(a), grad, not ctx.upper, ctx.left, ctx.unit)
        if not ctx.needs_input_grad[0]:
            return None, gb
        ga = -matmul(gb, _mH(x)) if ctx.left else -matmul(_mH(x), gb)
        return _on_triangle(ga, ctx.upper, ctx.unit), gb

    @staticmethod
    def jvp(ctx, ta, tb):
        a, x = ctx.inputs[0], ctx.output
        ta = _on_triangle(ta, ctx.upper, ctx.unit)
        rhs = tb - (matmul(ta, x) if ctx.left else matmul(x, ta))
        return _solve(a, rhs, ctx.upper, ctx.left, ctx.unit)


def _on_triangle(g, upper, unit):
    """what of g reaches a triangular A: its triangle, without the diagonal when A's is taken as ones"""
    return _triu(g, int(unit)) if upper else _tril(g, -int(unit))


class TriangularSolve(Op):
    """(X, A) with op(A) X = B, op(A) = A or A^T;  gB = op(A)^-H G, gA = -gB X^H (or -X gB^T) on the triangle,
    plus the gradient of the copy of A"""
    _grad_fn_name = "TriangularSolveBackward0"
    _saved_names = ("self", "A", "solution")
    _saved_values = {"upper": "upper", "transpose": "transpose", "unitriangular": "unit"}

    @staticmethod
    def forward(ctx, b, a, upper=True, transpose=False, unit=False):
        ctx.upper, ctx.transpose, ctx.unit = upper, transpose, unit
        eff = np.swapaxes(a, -1, -2) if transpose else a
        x = _tri_solve_np(eff, b, upper != transpose, True, unit)
        ctx.save_for_backward(b, a, x)
        return x, np.broadcast_to(a, x.shape[:-2] + a.shape[-2:]).copy()  # (A in the common batch shape)

    @staticmethod
    def backward(ctx, gx, gm):
        _, a, x = ctx.saved_tensors
        gb = TriangularSolve.apply(gx, a.conj(), upper=ctx.upper, transpose=not ctx.transpose, unit=ctx.unit)[0]
        ga = -matmul(x.conj(), gb.mT) if ctx.transpose else -matmul(gb, _mH(x))
        return gb, _on_triangle(ga, ctx.upper, ctx.unit) + gm

    @staticmethod
    def jvp(ctx, tb, ta):
        # torch 2.13's rule, kept for agreement with torch: it takes dA whole and untransposed (solve_triangular's
        # jvp keeps only A's triangle, which is the derivative of what forward computes)
        a, (x, _) = ctx.inputs[1], ctx.output
        rhs = tb - matmul(ta, x)
        return TriangularSolve.apply(rhs, a, upper=ctx.upper, transpose=ctx.transpose, unit=ctx.unit)[0], ta.clone()


def _deprecated(name, advice):
    """torch's one-time warning for its deprecated linalg functions, with the replacement"""
    from .._user_line import warn_once
    warn_once(name, f"torch.{name} is deprecated in favor of {advice} and will be removed in a future PyTorch "
                    "release.")


def _matrices(a, op, name="A", square=True):
    from .linalg_more import _square
    if not isinstance(a, Tensor):
        raise TypeError(f"{op}(): argument '{name}' must be Tensor, not {type(a).__name__}")
    if a.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor {name} must have at least 2 dimensions.")
    if square:
        _square(a, op)
    elif not (a.dtype.is_floating_point or a.dtype.is_complex):
        raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. Got {a.dtype}")
    return a


def _broadcast_pair(a, b, op, left=True, expand=True):
    """A and B promoted to one dtype and expanded to their common batch shape (torch broadcasts the batch). Not
    expanded: the op broadcasts them itself, unrecorded as in torch (the engine sums each gradient back)."""
    from ._op import promoted
    _matrices(b, op, "B", square=False)
    n = a.shape[-1]
    if (b.shape[-2] if left else b.shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"{op}: Incompatible shapes of A and B for the equation {eq} ({n}x{n} and "
                           f"{b.shape[-2]}x{b.shape[-1]}); B needs {n} {'rows' if left else 'columns'}")
    try:
        batch = np.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2]))
    except ValueError:
        raise RuntimeError(f"{op}: the batch dimensions of A {list(a.shape[:-2])} and B {list(b.shape[:-2])} do "
                           "not broadcast") from None
    a, b = promoted(a, b)
    if not expand:
        return a, b
    return a.expand(*batch, *a.shape[-2:]), b.expand(*batch, *b.shape[-2:])


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """torch.linalg.solve_triangular: X with A X = B (left) or X A = B, A upper or lower triangular."""
    a, b = _broadcast_pair(_matrices(A, "linalg.solve_triangular"), B, "linalg.solve_triangular", left, False)
    return SolveTriangular.apply(a, b, upper=bool(upper), left=bool(left), unit=bool(unitriangular))


def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False):
    """torch.triangular_solve (deprecated there): (X, a copy of A) with op(A) X = b."""
    from .reduce import return_type
    _deprecated("triangular_solve", "torch.linalg.solve_triangular (its arguments reversed, no copy of A)")
    a, b = _broadcast_pair(_matrices(A, "triangular_solve"), input, "triangular_solve", expand=False)
    x, m = TriangularSolve.apply(b, a, upper=bool(upper), transpose=bool(transpose), unit=bool(unitriangular))
    return return_type("triangular_solve", ("solution", "cloned_coefficient"))(x, m)


# ---- Cholesky solves -----------------------------------------------------------------------------------
def _chol_solve_np(b, c, upper):
    """(C C^H)^-1 B for a lower C, (C^H C)^-1 B for an upper one"""
    ch = np.swapaxes(c, -1, -2).conj()
    if upper:
        return _tri_solve_np(c, _tri_solve_np(ch, b, False), True)
    return _tri_solve_np(ch, _tri_solve_np(c, b, False), True)


def _chol_tangent(c, tc, upper):
    """dA of A = L L^H (or U^H U)"""
    return matmul(_mH(tc), c) + matmul(_mH(c), tc) if upper else matmul(tc, _mH(c)) + matmul(c, _mH(tc))


def _chol_grad(c, s, upper):
    """gC from the Hermitian gradient s of A = L L^H (or U^H U)"""
    return -matmul(c, s) if upper else -matmul(s, c)


class CholeskySolve(Op):
    """X = (L L^H)^-1 B;  gB = (L L^H)^-1 G, gL = -(gB X^H + X gB^H) L"""
    _grad_fn_name = "CholeskySolveBackward0"
    _saved_names = ("self", "input2", "result")
    _saved_values = {"upper": "upper"}

    @staticmethod
    def forward(ctx, b, c, upper=False):
        ctx.upper = upper
        out = _chol_solve_np(b, c, upper)
        ctx.save_for_backward(b, c, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        _, c, x = ctx.saved_tensors
        gb = CholeskySolve.apply(grad, c, upper=ctx.upper)
        if not ctx.needs_input_grad[1]:
            return gb, None
        s = matmul(gb, _mH(x))
        return gb, _chol_grad(c, s + _mH(s), ctx.upper)

    @staticmethod
    def jvp(ctx, tb, tc):
        c, x = ctx.inputs[1], ctx.output
        return CholeskySolve.apply(tb - matmul(_chol_tangent(c, tc, ctx.upper), x), c, upper=ctx.upper)


class CholeskyInverse(Op):
    """X = (L L^H)^-1;  gL = -(X (G + G^H) X) L"""
    _grad_fn_name = "CholeskyInverseBackward0"
    _saved_names = ("self", "result")
    _saved_values = {"upper": "upper"}

    @staticmethod
    def forward(ctx, c, upper=False):
        ctx.upper = upper
        eye = np.broadcast_to(np.eye(c.shape[-1], dtype=c.dtype), c.shape)
        out = _chol_solve_np(eye, c, upper)
        ctx.save_for_backward(c, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        c, x = ctx.saved_tensors
        return _chol_grad(c, matmul(x, matmul(grad + _mH(grad), x)), ctx.upper)

    @staticmethod
    def jvp(ctx, tc):
        # torch 2.13's rule, kept for agreement with torch: P = -X dC X C^H (C, dC the lower factor and its
        # tangent), dX = P + P^H; it differs from the Jacobian backward uses, -X (dC C^H + C dC^H) X
        c, x = ctx.inputs[0], ctx.output
        c, tc = (_mH(c), _mH(tc)) if ctx.upper else (c, tc)
        p = -matmul(matmul(matmul(x, tc), x), _mH(c))
        return p + _mH(p)


def cholesky_solve(input, input2, upper=False):
    """X = A^-1 B for A = L L^H (upper=False) or U^H U, given the factor."""
    op = "cholesky_solve"
    c = _matrices(input2, op, "input2")
    if input.ndim >= 2 and input.shape[-2] != c.shape[-1]:
        raise RuntimeError(f"Incompatible matrix sizes for cholesky_solve: each A matrix is {c.shape[-1]} by "
                           f"{c.shape[-1]} but each b matrix is {input.shape[-2]} by {input.shape[-1]}")
    c, b = _broadcast_pair(c, input, op)
    return CholeskySolve.apply(b, c, upper=bool(upper))


def cholesky_inverse(input, upper=False):
    """A^-1 for A = L L^H (upper=False) or U^H U, given the factor."""
    return CholeskyInverse.apply(_matrices(input, "cholesky_inverse"), upper=bool(upper))
