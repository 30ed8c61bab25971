"""The backward of the pointwise losses as one op each, as torch computes it (smooth_l1_loss_backward,
huber_loss_backward, soft_margin_loss_backward): a gradient taken with create_graph=True shows torch's node
(SmoothL1LossBackwardBackward0...) with edges to the incoming gradient, the input and the target, and that
node's own derivatives are torch's double-backward formulas."""
import numpy as np

from .._tensor import Tensor
from ._op import Op, plain, unrecorded


def _norm(x, reduction):
    """torch's factor in x's dtype: 1/numel for 'mean', else 1"""
    return x.dtype.type(1.0 / x.size if reduction == "mean" else 1.0)


def _sign(d):
    """+1 above 0, else -1 (torch's vectorised kernels choose so: an exact 0 gets -1, never reached there)"""
    return np.where(d > 0, d.dtype.type(1), d.dtype.type(-1))


class _LossBackward(Op):
    """g * slope(x, y) * norm as one node. Its derivatives: in g, the same op of the incoming gradient (summed to
    g's shape by the engine); in x, torch's double backward `curvature(gg * g, x, y)`; in y, minus that (the loss
    depends on x - y: the target's gradient is this op with x and y swapped). Subclasses give `values` (numpy, torch's
    vectorised kernel) and `curvature` (Tensor ops)."""
    _saved_names = ("grad_output", "self", "target")

    @staticmethod
    def forward(ctx, g, x, y, reduction="mean", bound=1.0):
        ctx.reduction, ctx.bound = reduction, bound
        ctx.save_for_backward(g, x, y)
        return ctx._forward_cls.values(g, x, y, reduction, bound).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, gg):
        g, x, y = ctx.saved_tensors
        cls, need = ctx._forward_cls, ctx.needs_input_grad
        dg = cls.apply(gg, x, y, reduction=ctx.reduction, bound=ctx.bound) if need[0] else None
        dx = cls.curvature(gg * g, x, y, ctx.reduction, ctx.bound) if need[1] or need[2] else None
        return dg, dx if need[1] else None, -dx if need[2] else None

    @staticmethod
    def jvp(ctx, tg, tx, ty):
        g, x, y = ctx.inputs[:3]
        cls = ctx._forward_cls
        return cls.apply(tg, x, y, reduction=ctx.reduction, bound=ctx.bound) + \
            cls.curvature(g * (tx - ty), x, y, ctx.reduction, ctx.bound)


def loss_grads(cls, ctx, grad, x, y, bound=1.0):
    """(d/dx, d/dy) of a pointwise loss whose backward op is cls, each where needed: torch's
    loss_backward(grad, self, target) and loss_backward(grad, target, self)"""
    need = ctx.needs_input_grad
    return (_one(cls, grad, x, y, ctx.reduction, bound) if need[0] else None,
            _one(cls, grad, y, x, ctx.reduction, bound) if need[1] else None)


def _one(cls, g, a, b, reduction, bound):
    if unrecorded(g) and unrecorded(a) and unrecorded(b):  # (no node to make: the values alone)
        return plain(cls.values(g._data, a._data, b._data, reduction, bound).astype(a._data.dtype, copy=False))
    return cls.apply(g, a, b, reduction=reduction, bound=bound)


def _inside(x, y, bound):
    """1 where |x - y| < bound, else 0, in x's dtype (a constant)"""
    return Tensor._make((np.abs(x._data - y._data) < bound).astype(x._data.dtype))


def _per_element(h, x, reduction):
    return h / x.numel() if reduction == "mean" else h


class SmoothL1LossBackward(_LossBackward):
    """g * clamp((x - y) / beta, -1, 1) * norm;  d/dx = g / beta inside (-beta, beta), else 0"""
    _grad_fn_name = "SmoothL1LossBackwardBackward0"

    @staticmethod
    def values(g, x, y, reduction, beta):
        d = x - y
        slope = np.where(np.abs(d) >= x.dtype.type(beta), _sign(d), d / x.dtype.type(beta))
        return _norm(x, reduction) * slope * g

    @staticmethod
    def curvature(h, x, y, reduction, beta):  # (torch's smooth_l1_loss_double_backward)
        return _per_element(h * _inside(x, y, beta) / beta, x, reduction)


class HuberLossBackward(_LossBackward):
    """g * clamp(x - y, -delta, delta) * norm;  d/dx = g inside (-delta, delta), else 0"""
    _grad_fn_name = "HuberLossBackwardBackward0"

    @staticmethod
    def values(g, x, y, reduction, delta):
        d = x - y
        c = x.dtype.type(delta)
        return _norm(x, reduction) * np.where(np.abs(d) >= c, _sign(d) * c, d) * g

    @staticmethod
    def curvature(h, x, y, reduction, delta):  # (torch's huber_loss_double_backward)
        return _per_element(h * _inside(x, y, delta), x, reduction)


class SoftMarginLossBackward(_LossBackward):
    """-g y z / (1 + z) * norm, z = exp(-y x);  d/dx = g y^2 z / (1 + z)^2 (torch's soft_margin_loss_double_backward);
    the target is not differentiable (no edge)"""
    _grad_fn_name = "SoftMarginLossBackwardBackward0"
    _edges = (0, 1)

    @staticmethod
    def values(g, x, y, reduction, _bound):
        z = np.exp(-y * x)
        return y * z * -_norm(x, reduction) / (z + 1) * g

    @staticmethod
    def curvature(h, x, y, reduction, _bound):
        z = (x * -y).exp()
        zplus1 = z + 1
        return _per_element(h * (y * y) * z / (zplus1 * zplus1), x, reduction)

    @staticmethod
    def jvp(ctx, *tangents):  # (torch has no forward-mode formula for it: forward over reverse raises there)
        raise NotImplementedError("Trying to use forward AD with soft_margin_loss_backward that does not support it "
                                  "because it has not been implemented yet. (torch 2.13 has no forward-mode formula "
                                  "for it either: take this second derivative with reverse mode, "
                                  "autograd.grad(..., create_graph=True))")
