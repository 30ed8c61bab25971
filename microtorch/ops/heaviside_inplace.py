"""heaviside_ (in place) records a node whose backward refuses, as torch's: torch has no derivative for the
step function (0 below zero, the given value at zero, 1 above) and says so when backward reaches it."""
import numpy as np

from ._op import Op


class HeavisideNoDerivative(Op):
    """heaviside(x, values): backward raises torch's "derivative ... is not implemented" """
    _grad_fn_name = "NotImplemented"

    @staticmethod
    def forward(ctx, x, values):
        return np.heaviside(x, values).astype(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("derivative for aten::heaviside_ is not implemented (the step function has no useful "
                           "gradient; use a smooth surrogate such as sigmoid(k * x) to train through it)")

    @staticmethod
    def jvp(ctx, tx, tv):
        raise RuntimeError("derivative for aten::heaviside_ is not implemented (forward mode)")


def heaviside_of(input, values):
    """heaviside with torch's checks, recorded when an input requires grad"""
    from .pointwise import heaviside
    out = heaviside(input, values)  # (its dtype check and error)
    if not (input.requires_grad or values.requires_grad):
        return out
    return HeavisideNoDerivative.apply(input, values)
