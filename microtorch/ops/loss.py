"""Robust regression losses: smooth L1 and Huber (quadratic near zero, linear beyond a threshold)."""
import types

import numpy as np

from ._kernels import _NAMES
from ._layout import like_torch
from ._op import Op
from ._sum_order import mean_like_torch, sum_like_torch
from .._creation import zeros_like
from .._tensor import Tensor
from ..autograd.grad_mode import is_grad_enabled
from .elementwise import where
from .loss_backward import (REDUCTION_CODES, HuberLossBackward, SmoothL1LossBackward, SoftMarginLossBackward,
                            loss_grads, loss_jvp)
from .nn import _check_reduction, _pointwise_loss, _reduce, legacy_reduction
from .nn import chosen_reduction as _reduction
from .pointwise import clamp_min
from .scalar_overloads import add_scalar, scalar_minus, sub_scalar
from .._user_line import warn_at_user_line


def _reduced(loss, reduction, *operands):
    """the losses reduced as torch's apply_loss_reduction: its sum and mean, in its order of additions; unreduced,
    laid out as torch's elementwise loop lays out its result from the operands"""
    if reduction == "none":
        return like_torch(loss, *operands)
    return np.asarray(mean_like_torch(loss) if reduction == "mean" else sum_like_torch(loss))


def _reduced_t(loss, reduction):
    """The same reduction on a Tensor (reduction already checked by the op's public function)."""
    return _reduce(loss, reduction, "loss")


class SmoothL1Loss(Op):
    """l = d^2/(2 beta) if |d| < beta else |d| - beta/2, d = x - y;  dl/dx = clamp(d/beta, -1, 1) = -dl/dy"""
    _grad_fn_name = "SmoothL1LossBackward0"
    _saved_names, _saved_values = ("self", "target"), {"beta": "beta", "reduction": "reduction_code"}

    @staticmethod
    def forward(ctx, x, y, reduction="mean", beta=1.0):
        ctx.reduction, ctx.beta, ctx.reduction_code = reduction, beta, REDUCTION_CODES[reduction]
        ctx.save_for_backward(x, y)
        z = np.abs(x - y)
        return _reduced(np.where(z < beta, 0.5 * z * z / beta, z - 0.5 * beta).astype(x.dtype, copy=False), reduction,
                        x, y)

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        return loss_grads(SmoothL1LossBackward, ctx, grad, x, y, ctx.beta)

    @staticmethod
    def jvp(ctx, tx, ty):
        return loss_jvp(SmoothL1LossBackward, ctx, tx, ty, ctx.beta)


class HuberLoss(Op):
    """l = d^2/2 if |d| < delta else delta (|d| - delta/2), d = x - y;  dl/dx = clamp(d, -delta, delta) = -dl/dy"""
    _grad_fn_name = "HuberLossBackward0"
    _saved_names, _saved_values = ("self", "target"), {"delta": "delta", "reduction": "reduction_code"}

    @staticmethod
    def forward(ctx, x, y, reduction="mean", delta=1.0):
        ctx.reduction, ctx.delta, ctx.reduction_code = reduction, delta, REDUCTION_CODES[reduction]
        ctx.save_for_backward(x, y)
        z = np.abs(x - y)
        return _reduced(np.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta)).astype(x.dtype, copy=False),
                        reduction, x, y)

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        return loss_grads(HuberLossBackward, ctx, grad, x, y, ctx.delta)

    @staticmethod
    def jvp(ctx, tx, ty):
        return loss_jvp(HuberLossBackward, ctx, tx, ty, ctx.delta)


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


# ---- losses torch composes from other ops (their grad_fn is the reduction's, as in torch) ------------
def _reduced_loss(loss, reduction, op):
    _check_reduction(reduction, op)
    return _reduce(loss, reduction, op)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """sum target (log target - input): input holds log-probabilities (target too if log_target)."""
    from .pointwise import xlogy
    reduction = _reduction(size_average, reduce, reduction)
    if input.dtype.is_complex or target.dtype.is_complex:
        raise RuntimeError("kl_div: Complex inputs not supported.")
    if not (input.dtype.is_floating_point and target.dtype.is_floating_point):
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if reduction == "mean":
        warn_at_user_line("reduction: 'mean' divides the total loss by both the batch size and the support size."
                          "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                          "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                          UserWarning)
    loss = target.exp() * (target - input) if log_target else xlogy(target, target) - target * input
    if reduction == "batchmean":
        total = loss.sum()
        return total / input.shape[0] if input.ndim else total
    return _reduced_loss(loss, reduction, "kl_div")


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """exp(input) - target input (log_input), or input - target log(input + eps); full adds Stirling's term."""
    import math
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "poisson_nll_loss")
    loss = input.exp() - target * input if log_input else input - target * _plus(input, eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + where(target > 1, stirling, stirling * 0)
    return _reduced_loss(loss, reduction, "poisson_nll_loss")


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """(log var + (input - target)^2 / var) / 2 (+ log(2 pi) / 2 if full); var is clamped to eps, without gradient."""
    import math
    from ..autograd.grad_mode import no_grad
    if isinstance(var, (int, float)):
        var = input.new_full(input.shape, var)
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:
            var = var.unsqueeze(-1)
        elif not (input.shape[:-1] == var.shape[:-1] and var.shape[-1] == 1):
            raise ValueError(f"var is of incorrect size (gaussian_nll_loss: var {list(var.shape)}, input "
                             f"{list(input.shape)}); it must match the input, or have one dim fewer, or 1 last")
    _check_reduction(reduction, "gaussian_nll_loss")
    if (var._data < 0).any():
        raise ValueError("var has negative entry/entries")
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduced_loss(loss, reduction, "gaussian_nll_loss")


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    """max(0, -target (input1 - input2) + margin)"""
    reduction = _reduction(size_average, reduce, reduction)
    if not (input1.ndim == input2.ndim == target.ndim):
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {list(input1.shape)}, input2: {list(input2.shape)}, target: "
                           f"{list(target.shape)} ")
    loss = clamp_min(_plus(-target * (input1 - input2), margin), 0)
    return _reduced_loss(loss, reduction, "margin_ranking_loss")


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """input where target == 1, max(0, margin - input) where target == -1"""
    reduction = _reduction(size_average, reduce, reduction)
    if input.dtype.is_complex:
        raise NotImplementedError("clamp is not supported for complex types (hinge_embedding_loss's input)")
    if input._data.dtype.kind == "b":  # (torch subtracts the input from the margin)
        two = target._data.dtype.kind == "b"
        raise RuntimeError("Subtraction, the `-` operator, with " + (
            "two bool tensors is not supported. Use the `^` or `logical_xor()` operator instead." if two else
            "a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` "
            "operator instead.") + " (hinge_embedding_loss)")
    zeros = zeros_like(input)  # (not input * 0: an infinite input gives inf, not nan)
    loss = where(target != 1, clamp_min(scalar_minus(margin, input), 0), zeros) + where(target != -1, input, zeros)
    return _reduced_loss(loss, reduction, "hinge_embedding_loss")


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-target input))"""
    reduction = _reduction(size_average, reduce, reduction)
    kind = input._data.dtype.kind  # (torch negates the input, then exponentiates in its dtype, in place)
    if kind == "b":
        from .elementwise import NO_BOOL_NEGATION
        raise RuntimeError(NO_BOOL_NEGATION + " (soft_margin_loss's input)")
    if kind in "iu":
        name = _NAMES[input._data.dtype.name]
        raise RuntimeError(f"result type Float can't be cast to the desired output type {name} (soft_margin_loss "
                           "computes in its input's dtype: pass floating point scores, .float())")
    if isinstance(target, Tensor) and target.requires_grad and is_grad_enabled():  # (torch checks when it records)
        raise RuntimeError("The function 'soft_margin_loss' is not differentiable with respect to argument 'target'. "
                           "This input cannot have requires_grad True. (Pass target.detach().)")
    return _pointwise_loss(SoftMarginLoss, input, target, reduction, "soft_margin_loss")


def _log1p_exp(v):
    """log(1 + e^v) in torch's steps, e^v then log1p (inf where e^v overflows, as torch's); float32's e^v and log1p
    the correctly rounded ones, computed in float64 (torch's exp op is MKL's, nearly always that; its log1p SLEEF's)"""
    if v.dtype == np.float32:
        return np.log1p(np.exp(v.astype(np.float64)).astype(np.float32).astype(np.float64)).astype(np.float32)
    return np.log1p(np.exp(v))


class SoftMarginLoss(Op):
    """l = log(1 + exp(-y x));  dl/dx = -y sigmoid(-y x)"""
    _grad_fn_name = "SoftMarginLossBackward0"
    _edges = (0,)  # (torch's node has none for the target, which may not require grad)
    _saved_names, _saved_values = ("self", "target"), {"reduction": "reduction_code"}

    @staticmethod
    def forward(ctx, x, y, reduction="mean"):
        ctx.reduction, ctx.reduction_code = reduction, REDUCTION_CODES[reduction]
        ctx.save_for_backward(x, y)
        return _reduced(_log1p_exp(-x * y), reduction)

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        return loss_grads(SoftMarginLossBackward, ctx, grad, x, y)[0], None

    @staticmethod
    def jvp(ctx, tx, ty):
        x, y = ctx.inputs[:2]
        return _reduced_t(-y * (-y * x).sigmoid() * tx, ctx.reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """-(y log sigmoid(x) + (1 - y) log sigmoid(-x)), averaged over the classes (the last dim)"""
    from .activation import LogSigmoid
    from ._checks import need_dims
    need_dims(input, "multilabel_soft_margin_loss")  # the classes are the last dim: a 0-d input has none
    reduction = _reduction(size_average, reduce, reduction)
    loss = -(target * LogSigmoid.apply(input) + (1 - target) * LogSigmoid.apply(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.ndim - 1
    loss = loss.sum(class_dim) / input.shape[class_dim]
    return _reduced_loss(loss, reduction, "multilabel_soft_margin_loss")


def _plus(t, s):
    """t + s for a number s as ATen's C++ adds one (add.Scalar, AddBackward1); an integer t promotes as `+` does"""
    return add_scalar(t, s) if t.dtype.is_floating_point else t + s


def _aten_norm():
    """reduce.Norm under the name torch's at::norm gives it (NormBackward1), for the ops that call at::norm."""
    global _AtenNorm
    if _AtenNorm is None:
        from .reduce import Norm
        _AtenNorm = type("AtenNorm", (Norm,), {"_grad_fn_name": "NormBackward1", "__module__": __name__,
                                               "__doc__": Norm.__doc__, "_saved_names": Norm._saved_names,
                                               "_saved_values": {"dim": "shown_dims", "keepdim": "keepdim",
                                                                 "p": "ord"}})  # (its p: a float, as torch's)
    return _AtenNorm


_AtenNorm = None


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p over the last dim"""
    d = _plus(x1 - x2, eps)
    dims = (d.ndim - 1,) if d.ndim else None  # (torch's node shows the last dim, -1 of a 0-d d)
    return _aten_norm().apply(d, ord=float(p), dims=dims, keepdim=keepdim, given_dim=(d.ndim - 1,))


class ClampedClone(Op):
    """max(n, eps) with n's own gradient: torch's cosine_similarity clones each norm, then clamps the clone in place
    outside the graph, so the node is the clone's and the gradient passes as if nothing were clamped"""
    _grad_fn_name = "CloneBackward0"

    @staticmethod
    def forward(ctx, n, eps):
        ctx.eps = eps
        return np.maximum(n, n.dtype.type(eps))

    @staticmethod
    def backward(ctx, grad):
        return grad

    @staticmethod
    def jvp(ctx, t):  # (forward mode sees the clamp, no_grad or not: torch's clamp_min rule)
        return where(Tensor._make(ctx.inputs[0]._data >= ctx.eps), t, 0.0)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum(x1 x2) / (max(||x1||, eps) max(||x2||, eps)) along dim, each norm clamped as torch does (ClampedClone)"""
    from .._dtype import result_type
    from .reduce import norm
    common = result_type(x1, x2)
    if not common.is_floating_point:
        raise RuntimeError(f"cosine_similarity(): expected common dtype to be floating point, yet common dtype is "
                           f"{_NAMES.get(np.dtype(common.np).name, common.np)}; convert the inputs with .float()")
    n1 = ClampedClone.apply(norm(x1, 2, dim, True), eps=float(eps))
    n2 = ClampedClone.apply(norm(x2, 2, dim, True), eps=float(eps))
    right = x2 / n2  # (torch's C++ computes this operand first: pack hooks see its division first)
    return ((x1 / n1) * right).sum(dim)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p, eps) along dim"""
    from .pointwise import clamp_min
    from .reduce import norm
    denom = clamp_min(norm(input, p, dim, True), eps).expand_as(input)  # (torch's clamp_min: ClampMinBackward0)
    if out is not None:  # (torch divides into out: div's rules and errors)
        from ._out import write_out
        return write_out(out, input / denom, "div", (input,))
    return input / denom


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    """1 - cos(x1, x2) where target == 1, max(0, cos(x1, x2) - margin) where target == -1"""
    reduction = _reduction(size_average, reduce, reduction)
    dim = input1.ndim - 1
    eps = float(np.float32(1e-12))  # (torch's EPSILON there is a float constant)
    prod = (input1 * input2).sum(dim)
    mag1, mag2 = _plus((input1 * input1).sum(dim), eps), _plus((input2 * input2).sum(dim), eps)
    cos = prod / (mag1 * mag2).sqrt()
    zeros = zeros_like(cos)
    neg = clamp_min(sub_scalar(cos, margin), 0)
    loss = where(target == 1, scalar_minus(1, cos), zeros) + where(target == -1, neg, zeros)
    return _reduced_loss(loss, reduction, "cosine_embedding_loss")


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    """max(0, margin + d(a, p) - d(a, n)), d the p-norm distance (swap: d(a, n) -> min(d(a, n), d(p, n)))"""
    reduction = _reduction(size_average, reduce, reduction)
    if not (anchor.ndim == positive.ndim == negative.ndim):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and negative "
                           f"{negative.ndim}D inputs")
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        from .elementwise import minimum
        d_neg = minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    loss = clamp_min(_plus(d_pos, margin) - d_neg, 0)
    return _reduced_loss(loss, reduction, "triplet_margin_loss")


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0,
                                      swap=False, reduction="mean"):
    """max(0, margin + d(a, p) - d(a, n)) for any distance function d (pairwise_distance by default)"""
    d = distance_function if distance_function is not None else pairwise_distance
    d_pos, d_neg = d(anchor, positive), d(anchor, negative)
    if swap:
        from .elementwise import minimum
        d_neg = minimum(d_neg, d(positive, negative))
    loss = (margin + d_pos - d_neg).clamp(min=0)
    return _reduced_loss(loss, reduction, "triplet_margin_with_distance_loss")
