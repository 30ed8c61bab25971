"""Robust regression losses: smooth L1 and Huber (quadratic near zero, linear beyond a threshold)."""
import types

import numpy as np

from ._op import Op
from .elementwise import clamp
from .nn import _check_reduction, _pointwise_loss


def _reduced(loss, reduction):
    return np.asarray(loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss)


def _reduced_t(loss, reduction):
    return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss


class SmoothL1Loss(Op):
    """l = d^2/(2 beta) if |d| < beta else |d| - beta/2, d = x - y;  dl/dx = clamp(d/beta, -1, 1) = -dl/dy"""
    _grad_fn_name = "SmoothL1LossBackward0"

    @staticmethod
    def forward(ctx, x, y, reduction="mean", beta=1.0):
        ctx.reduction, ctx.beta = reduction, beta
        ctx.save_for_backward(x, y)
        z = np.abs(x - y)
        return _reduced(np.where(z < beta, 0.5 * z * z / beta, z - 0.5 * beta).astype(x.dtype, copy=False), reduction)

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        g = clamp((x - y) / ctx.beta, -1, 1) * grad
        if ctx.reduction == "mean":
            g = g / x.numel()
        return (g if ctx.needs_input_grad[0] else None, -g if ctx.needs_input_grad[1] else None)

    @staticmethod
    def jvp(ctx, tx, ty):
        x, y = ctx.inputs[:2]
        return _reduced_t(clamp((x - y) / ctx.beta, -1, 1) * (tx - ty), ctx.reduction)


class HuberLoss(Op):
    """l = d^2/2 if |d| < delta else delta (|d| - delta/2), d = x - y;  dl/dx = clamp(d, -delta, delta) = -dl/dy"""
    _grad_fn_name = "HuberLossBackward0"

    @staticmethod
    def forward(ctx, x, y, reduction="mean", delta=1.0):
        ctx.reduction, ctx.delta = reduction, delta
        ctx.save_for_backward(x, y)
        z = np.abs(x - y)
        return _reduced(np.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta)).astype(x.dtype, copy=False),
                        reduction)

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        g = clamp(x - y, -ctx.delta, ctx.delta) * grad
        if ctx.reduction == "mean":
            g = g / x.numel()
        return (g if ctx.needs_input_grad[0] else None, -g if ctx.needs_input_grad[1] else None)

    @staticmethod
    def jvp(ctx, tx, ty):
        x, y = ctx.inputs[:2]
        return _reduced_t(clamp(x - y, -ctx.delta, ctx.delta) * (tx - ty), ctx.reduction)


def _with(cls, **options):
    """cls with its threshold bound, in the shape _pointwise_loss calls (`.apply(x, y, reduction=)`)."""
    return types.SimpleNamespace(apply=lambda x, y, reduction: cls.apply(x, y, reduction=reduction, **options))


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta. beta is where the loss turns "
                           f"from quadratic to linear (got beta={beta}); use beta >= 0 (beta=0 is l1_loss).")
    if beta == 0.0:
        from .nn import l1_loss
        return l1_loss(input, target, reduction=reduction)
    return _pointwise_loss(_with(SmoothL1Loss, beta=float(beta)), input, target, reduction, "smooth_l1_loss")


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta. delta is where the loss "
                           f"turns from quadratic to linear (got delta={delta}); use delta > 0.")
    if weight is None:
        return _pointwise_loss(_with(HuberLoss, delta=float(delta)), input, target, reduction, "huber_loss")
    if weight.shape != input.shape:
        raise ValueError(f"Weights and input must have the same size. (huber_loss: weight {list(weight.shape)}, "
                         f"input {list(input.shape)})")
    _check_reduction(reduction, "huber_loss")
    loss = _pointwise_loss(_with(HuberLoss, delta=float(delta)), input, target, "none", "huber_loss") * weight
    return _reduced_t(loss, reduction)


def legacy_reduction(size_average, reduce):
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    return ("mean" if size_average else "sum") if reduce else "none"
