"""Neural-network functions: softmax family, linear, losses and dropout."""
import numpy as np

from .._tensor import Tensor
from ._op import Op, normalize_dims


def _reduce(loss, reduction, op, weight_sum=None):
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.mean() if weight_sum is None else loss.sum() / weight_sum
    raise ValueError(f"{op}: {reduction} is not a valid value for reduction; use 'none', 'mean' or 'sum'")


class Softmax(Op):
    """d softmax: y * (g - sum(g*y))"""
    _grad_fn_name = "SoftmaxBackward0"

    @staticmethod
    def forward(ctx, x, dim):
        ctx.dim = dim
        e = np.exp(x - np.amax(x, axis=dim, keepdims=True))
        out = e / e.sum(axis=dim, keepdims=True)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return y * (grad - (grad * y).sum(dim=ctx.dim, keepdim=True)), None

    @staticmethod
    def jvp(ctx, t, _dim):
        y = ctx.output
        return y * (t - (t * y).sum(dim=ctx.dim, keepdim=True))


class LogSoftmax(Op):
    """d log_softmax: g - softmax * sum(g)"""
    _grad_fn_name = "LogSoftmaxBackward0"

    @staticmethod
    def forward(ctx, x, dim):
        ctx.dim = dim
        shifted = x - np.amax(x, axis=dim, keepdims=True)
        out = shifted - np.log(np.exp(shifted).sum(axis=dim, keepdims=True))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad - y.exp() * grad.sum(dim=ctx.dim, keepdim=True), None

    @staticmethod
    def jvp(ctx, t, _dim):
        return t - (t * ctx.output.exp()).sum(dim=ctx.dim, keepdim=True)


def _softmax_dim(x, dim, op):
    if dim is None:
        dim = 0 if x.ndim in (0, 1, 3) else 1  # torch's legacy implicit choice
    return normalize_dims(dim, x.ndim, op)[0]


def softmax(x, dim=None, _stacklevel=3, dtype=None):
    if dtype is not None:
        x = x.to(dtype)
    return Softmax.apply(x, _softmax_dim(x, dim, "softmax"))


def log_softmax(x, dim=None, _stacklevel=3, dtype=None):
    if dtype is not None:
        x = x.to(dtype)
    return LogSoftmax.apply(x, _softmax_dim(x, dim, "log_softmax"))


def linear(x, weight, bias=None):
    if x.shape[-1] != weight.shape[-1]:
        rows = int(np.prod(x.shape[:-1])) if x.ndim > 1 else 1
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{x.shape[-1]} and "
                           f"{weight.shape[-1]}x{weight.shape[0]}): linear expects inputs whose last dimension "
                           f"is in_features={weight.shape[-1]}")
    from .linalg import addmm, matmul
    if x.ndim == 2 and bias is not None:
        return addmm(bias, x, weight.t())
    out = matmul(x, weight.t())
    return out + bias if bias is not None else out


class MseLoss(Op):
    """d (x-y)^2 = 2(x-y), -2(x-y)"""
    _grad_fn_name = "MseLossBackward0"

    @staticmethod
    def forward(ctx, x, y, reduction="mean"):
        ctx.reduction = reduction
        ctx.save_for_backward(x, y)
        d = (x - y) ** 2
        return np.asarray(d.mean() if reduction == "mean" else d.sum() if reduction == "sum" else d)

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        g = (x - y) * 2 * grad
        if ctx.reduction == "mean":
            g = g / x.numel()
        return (g if ctx.needs_input_grad[0] else None, -g if ctx.needs_input_grad[1] else None)

    @staticmethod
    def jvp(ctx, tx, ty):
        x, y = ctx.inputs
        d = (x - y) * 2 * (tx - ty)
        return d.mean() if ctx.reduction == "mean" else d.sum() if ctx.reduction == "sum" else d


class L1Loss(Op):
    """d |x-y| = sign(x-y), -sign(x-y)"""
    _grad_fn_name = "L1LossBackward0"

    @staticmethod
    def forward(ctx, x, y, reduction="mean"):
        ctx.reduction = reduction
        ctx.save_for_backward(x, y)
        d = np.abs(x - y)
        return np.asarray(d.mean() if reduction == "mean" else d.sum() if reduction == "sum" else d)

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        g = (x - y).sign() * grad
        if ctx.reduction == "mean":
            g = g / x.numel()
        return (g if ctx.needs_input_grad[0] else None, -g if ctx.needs_input_grad[1] else None)


def _check_reduction(reduction, op):
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{op}: {reduction} is not a valid value for reduction; use 'none', 'mean' or 'sum'")


def _pointwise_loss(cls, x, y, reduction, op):
    _check_reduction(reduction, op)
    if x.shape != y.shape:
        import warnings
        warnings.warn(f"Using a target size ({y.shape}) that is different to the input size ({x.shape}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they "
                      "have the same size.", UserWarning, stacklevel=3)
        from .shape import broadcast_to
        try:
            shape = np.broadcast_shapes(x.shape, y.shape)
        except ValueError:
            raise RuntimeError(f"{op}: The size of tensor a ({list(x.shape)}) must match the size of tensor "
                               f"b ({list(y.shape)})") from None
        x, y = broadcast_to(x, shape), broadcast_to(y, shape)
    from ._op import promoted
    x, y = promoted(x, y)
    return cls.apply(x, y, reduction=reduction)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    return _pointwise_loss(MseLoss, input, target, reduction, "mse_loss")


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    return _pointwise_loss(L1Loss, input, target, reduction, "l1_loss")


class NllLoss(Op):
    """-w[y] logp[y]: the gradient is -w[y] at the target entry, 0 elsewhere"""
    _grad_fn_name = "NllLossBackward0"

    @staticmethod
    def forward(ctx, logp, target, weight=None, reduction="mean", ignore_index=-100):
        # logp: (N, C, ...); move C last for indexing
        lp = np.moveaxis(logp, 1, -1) if logp.ndim > 1 else logp[None]
        t = target if logp.ndim > 1 else target[None]
        valid = t != ignore_index
        safe_t = np.where(valid, t, 0)
        w = np.ones(lp.shape[-1], dtype=logp.dtype) if weight is None else weight
        wt = np.where(valid, w[safe_t], 0).astype(logp.dtype)
        picked = np.take_along_axis(lp, safe_t[..., None], axis=-1)[..., 0]
        losses = -wt * picked
        ctx.in_shape, ctx.reduction, ctx.c_axis = logp.shape, reduction, 1 if logp.ndim > 1 else 0
        ctx.safe_t, ctx.wt = safe_t, wt
        ctx.denom = wt.sum()
        if reduction == "none":
            return losses if logp.ndim > 1 else losses[0]
        if reduction == "sum":
            return np.asarray(losses.sum())
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.asarray(losses.sum() / ctx.denom)

    @staticmethod
    def backward(ctx, grad):
        scale = ctx.wt / ctx.denom if ctx.reduction == "mean" else ctx.wt
        g = grad if ctx.reduction == "none" else grad.reshape([1] * ctx.safe_t.ndim)
        if ctx.reduction == "none" and len(ctx.in_shape) == 1:
            g = g.reshape(1)
        onehot = np.zeros(ctx.safe_t.shape + (ctx.in_shape[ctx.c_axis],), dtype=ctx.wt.dtype)
        np.put_along_axis(onehot, ctx.safe_t[..., None], 1, axis=-1)
        local = Tensor._make(-(onehot * scale[..., None]).astype(grad._data.dtype))
        out = (g.unsqueeze(-1) * local)
        out = out.movedim(-1, 1) if len(ctx.in_shape) > 1 else out.reshape(ctx.in_shape)
        return out, None, None


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    _check_reduction(reduction, "nll_loss")
    t = target._data
    if t.dtype.kind not in "iu":
        raise RuntimeError(f"nll_loss: expected target of dtype int64 (class indices), got {target.dtype}; use "
                           "target.long()")
    n_classes = input.shape[1] if input.ndim > 1 else input.shape[0]
    bad = (t != ignore_index) & ((t < 0) | (t >= n_classes))
    if bad.any():
        raise IndexError(f"nll_loss: Target {t[bad].flat[0]} is out of bounds (there are {n_classes} classes)")
    if input.ndim > 1 and (input.shape[0] != t.shape[0]):
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size ({t.shape[0]}).")
    w = weight._data if weight is not None else None
    return NllLoss.apply(input, t, weight=w, reduction=reduction, ignore_index=ignore_index)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    _check_reduction(reduction, "cross_entropy")
    cdim = 1 if input.ndim > 1 else 0
    logp = log_softmax(input, cdim)
    n_classes = input.shape[cdim]
    if target.dtype.is_floating_point:  # class probabilities
        if target.shape != input.shape:
            raise RuntimeError(f"cross_entropy: with class probabilities the target must have the input's shape "
                               f"{list(input.shape)}, got {list(target.shape)}")
        p = target
        if label_smoothing:
            p = p * (1 - label_smoothing) + label_smoothing / n_classes
        wl = logp if weight is None else logp * weight.reshape([-1] + [1] * (input.ndim - cdim - 1))
        loss = -(wl * p).sum(dim=cdim)
        if reduction == "mean":
            return loss.sum() / (input.shape[0] if input.ndim > 1 else 1)
        return _reduce(loss, reduction, "cross_entropy")
    nll = nll_loss(logp, target, weight=weight, ignore_index=ignore_index, reduction=reduction)
    if not label_smoothing:
        return nll
    valid = Tensor._make((target._data != ignore_index).astype(logp._data.dtype))
    wl = logp if weight is None else logp * weight.reshape([-1] + [1] * (input.ndim - cdim - 1))
    smooth = -(wl.sum(dim=cdim)) * valid
    if reduction == "mean":
        if weight is None:
            smooth = smooth.sum() / valid.sum()
        else:
            wt = weight._data[np.where(target._data != ignore_index, target._data, 0)] * valid._data
            smooth = smooth.sum() / float(wt.sum())
    elif reduction == "sum":
        smooth = smooth.sum()
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / n_classes)


class BinaryCrossEntropy(Op):
    """d bce(p, y) = (p - y) / (p (1 - p))"""
    _grad_fn_name = "BinaryCrossEntropyBackward0"

    @staticmethod
    def forward(ctx, p, y, weight=None, reduction="mean"):
        ctx.reduction = reduction
        ctx.save_for_backward(p, y, weight)
        with np.errstate(divide="ignore"):
            l = -(y * np.maximum(np.log(p), -100) + (1 - y) * np.maximum(np.log1p(-p), -100))
        if weight is not None:
            l = l * weight
        return np.asarray(l.mean() if reduction == "mean" else l.sum() if reduction == "sum" else l)

    @staticmethod
    def backward(ctx, grad):
        p, y, w = ctx.saved_tensors
        g = grad * (p - y) / ((p * (1 - p)).clamp(min=1e-12))
        if w is not None:
            g = g * w
        if ctx.reduction == "mean":
            g = g / p.numel()
        return g, (grad * ((1 - p).log().clamp(min=-100) - p.log().clamp(min=-100)) *
                   (w if w is not None else 1) / (p.numel() if ctx.reduction == "mean" else 1)
                   if ctx.needs_input_grad[1] else None), None

    @staticmethod
    def jvp(ctx, tp, ty, _tw):
        p, y, w = ctx.inputs
        d = tp * (p - y) / (p * (1 - p)).clamp(min=1e-12) + \
            ty * ((1 - p).log().clamp(min=-100) - p.log().clamp(min=-100))
        if w is not None:
            d = d * w
        return d.mean() if ctx.reduction == "mean" else d.sum() if ctx.reduction == "sum" else d


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    _check_reduction(reduction, "binary_cross_entropy")
    if input.shape != target.shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size "
                         f"({input.shape}) is deprecated. Please ensure they have the same size.")
    if ((input._data < 0) | (input._data > 1)).any():
        raise RuntimeError("all elements of input should be between 0 and 1 (binary_cross_entropy takes "
                           "probabilities; for logits use binary_cross_entropy_with_logits)")
    return BinaryCrossEntropy.apply(input, target, weight, reduction=reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    _check_reduction(reduction, "binary_cross_entropy_with_logits")
    if input.shape != target.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    # (1 - y) x + (1 + (pw - 1) y) softplus(-x), written in differentiable ops
    from .elementwise import softplus
    sp = softplus(-input)
    if pos_weight is not None:
        lw = 1 + (pos_weight - 1) * target
        loss = (1 - target) * input + lw * sp
    else:
        loss = (1 - target) * input + sp
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction, "binary_cross_entropy_with_logits")


def dropout(input, p=0.5, training=True, inplace=False):
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return input
    if p == 1:
        return input * 0
    from .._random import bernoulli_mask
    mask = bernoulli_mask(input.shape, 1 - p, input.dtype.np) / (1 - p)
    return input * Tensor._make(mask.astype(input._data.dtype))
