"""tril and triu: the lower or upper triangle of the last two dims, the other elements zero. The gradient keeps the
same triangle of the incoming gradient (the op is a mask, linear in its input), as torch's TrilBackward0 does."""
import numpy as np

from ._op import Op, shown_dim
from .reduce import c_order


class Tril(Op):
    """d tril(x, k) = tril(g, k). torch's node shows k as shown_dim shows it (-1 as 2**64 - 1)"""
    _grad_fn_name = "TrilBackward0"
    _saved_values = {"diagonal": "shown"}

    @staticmethod
    def forward(ctx, x, diagonal):
        ctx.diagonal, ctx.shown = diagonal, shown_dim(diagonal)
        return c_order(np.tril(x, diagonal))  # (torch's triangles are C-ordered whatever x's layout)

    @staticmethod
    def backward(ctx, grad):
        return ctx.function_class.apply(grad, ctx.diagonal), None  # (Tril, or Triu below: the same triangle)

    @staticmethod
    def jvp(ctx, t, _diagonal):
        return ctx.function_class.apply(t, ctx.diagonal)


class Triu(Tril):
    """d triu(x, k) = triu(g, k)"""
    _grad_fn_name = "TriuBackward0"

    @staticmethod
    def forward(ctx, x, diagonal):
        ctx.diagonal, ctx.shown = diagonal, shown_dim(diagonal)
        return c_order(np.triu(x, diagonal))


def _matrix_arg(x, op):
    if x.ndim < 2:
        raise RuntimeError(f"{op}: input tensor must have at least 2 dimensions (got shape {list(x.shape)}); "
                           "a triangle needs rows and columns")


def tril(input, diagonal=0):
    """The elements on and below the diagonal-th diagonal of each matrix (the last two dims), zeros above."""
    _matrix_arg(input, "tril")
    return Tril.apply(input, diagonal)


def triu(input, diagonal=0):
    """The elements on and above the diagonal-th diagonal of each matrix (the last two dims), zeros below."""
    _matrix_arg(input, "triu")
    return Triu.apply(input, diagonal)
