"""heaviside_ (in place) records a node whose backward refuses, as torch's: torch has no derivative for the
step function (0 below zero, the given value at zero, 1 above) and says so when backward reaches it."""
import numpy as np

from ._op import Op


class HeavisideNoDerivative(Op):
    """heaviside(x, values): backward raises torch's "derivative ... is not implemented" """
    _grad_fn_name = "NotImplemented"

    @staticmethod
    def forward(ctx, x, values):
        return _step(x, values)

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("derivative for aten::heaviside_ is not implemented (the step function has no useful "
                           "gradient; use a smooth surrogate such as sigmoid(k * x) to train through it)")

    @staticmethod
    def jvp(ctx, tx, tv):
        raise RuntimeError("derivative for aten::heaviside_ is not implemented (forward mode)")


def _step(x, values):
    """values where x == 0, else 1 where x > 0 and 0 elsewhere (NaN too, as torch)"""
    return np.where(x == 0, values, x > 0).astype(x.dtype)


def heaviside_of(input, values):
    """heaviside with torch's checks, recorded when an input requires grad"""
    from .._tensor import Tensor
    if input.dtype != values.dtype:
        raise RuntimeError(f"heaviside is not yet implemented for tensors with different dtypes ({input.dtype} and "
                           f"{values.dtype}); convert one, e.g. values.to(input.dtype)")
    if not (input.requires_grad or values.requires_grad):
        return Tensor._make(_step(input._data, values._data))
    return HeavisideNoDerivative.apply(input, values)
