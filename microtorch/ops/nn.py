"""Neural-network functions: softmax family, linear, losses and dropout."""
import numpy as np

from .._tensor import Tensor
from .._user_line import warn_at_user_line
from ..autograd.grad_mode import is_grad_enabled
from ._checks import need_floating
from ._kernels import _NAMES, _TYPE_META
from ._nll_cascade import cascade_nll
from ._layout import like_torch
from ._op import Op, normalize_dims, shown_dim
from ._sum_order import mean_like_torch, sum_like_torch
from ._softmax_kernels import (log_softmax_backward_lastdim, log_softmax_backward_over, log_softmax_lastdim,
                               log_softmax_over, softmax_backward_lastdim, softmax_backward_over, softmax_lastdim,
                               softmax_over)
from .elementwise import DivScalar, MulScalar, div_scalar, where
from ._zero_tangent import ZeroTangent
from .linalg import addmm, matmul
from .reduce import show_on_read
from .scalar_overloads import add_scalar
from .loss_backward import (REDUCTION_CODES, MseLossBackward, bce_input_grad, bce_target_grad, loss_grads,
                            loss_jvp)
from .._user_line import warn_at_user_line


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
    _saved_names, _saved_values = ("result",), {"dim": "shown_dim"}

    @staticmethod
    def forward(ctx, x, dim, given_dim=None):
        ctx.dim, ctx.given_dim = dim, given_dim  # (dim: x's own, None for a 0-d x; given_dim: shown when read)
        if x.size and x.ndim and x.dtype in _KERNEL_FLOATS:  # (torch's kernels: to the bit in float32)
            out = softmax_lastdim(x) if dim in (-1, x.ndim - 1) else softmax_over(x, dim)
        else:
            e = np.exp(x - np.amax(x, axis=dim, keepdims=True, initial=-np.inf))  # (empty dim: empty out)
            out = np.asarray(e / e.sum(axis=dim, keepdims=True), order="C")  # (contiguous as torch's; 0-d stays 0-d)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return SoftmaxBackwardData.apply(grad, y, dim=ctx.dim, given_dim=ctx.given_dim), None

    @staticmethod
    def jvp(ctx, t):
        y = ctx.output
        return y * (t - (t * y).sum(dim=ctx.dim, keepdim=True))


class SoftmaxBackwardData(Op):
    """softmax's backward y * (g - sum(g*y)) as one op (torch's): d/dg is the same map of gg,
    d/dy = g gg - sum(y g) gg - g sum(y gg)"""
    _grad_fn_name = "SoftmaxBackwardDataBackward0"
    _saved_names, _saved_values = ("grad_output", "output"), Softmax._saved_values

    @staticmethod
    def forward(ctx, g, y, dim, given_dim=None):
        ctx.dim, ctx.given_dim = dim, given_dim
        ctx.save_for_backward(g, y)
        if g.shape == y.shape and g.size and g.ndim and g.dtype == y.dtype and g.dtype in _KERNEL_FLOATS:
            last = dim in (-1, g.ndim - 1)  # (torch's kernels: to the bit in float32, but for a few exps in float64)
            return softmax_backward_lastdim(g, y) if last else softmax_backward_over(g, y, dim)
        return y * (g - (g * y).sum(axis=dim, keepdims=True))

    @staticmethod
    def backward(ctx, gg):
        g, y = ctx.saved_tensors
        d = ctx.dim
        return (SoftmaxBackwardData.apply(gg, y, dim=d, given_dim=ctx.given_dim) if ctx.needs_input_grad[0] else None,
                g * gg - (y * g).sum(d, True) * gg - g * (y * gg).sum(d, True) if ctx.needs_input_grad[1] else None)

    @staticmethod
    def jvp(ctx, tg, ty):
        g, y = ctx.inputs[:2]
        d = ctx.dim
        return SoftmaxBackwardData.apply(tg, y, dim=d, given_dim=ctx.given_dim) + ty * (g - (g * y).sum(d, True)) - \
            y * (ty * g).sum(d, True)


_KERNEL_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))  # (float64: numpy's exp and log for SLEEF's)


class LogSoftmax(Op):
    """d log_softmax: g - softmax * sum(g)"""
    _grad_fn_name = "LogSoftmaxBackward0"
    _saved_names, _saved_values = ("result",), Softmax._saved_values

    @staticmethod
    def forward(ctx, x, dim, given_dim=None):
        ctx.dim, ctx.given_dim = dim, given_dim
        if x.size and x.ndim and x.dtype in _KERNEL_FLOATS:  # (torch's kernels: to the bit in float32)
            out = log_softmax_lastdim(x) if dim in (-1, x.ndim - 1) else log_softmax_over(x, dim)
        else:
            out = x - x.max(axis=dim, keepdims=True, initial=-np.inf)  # shifted: exp cannot overflow
            out -= np.log(np.exp(out).sum(axis=dim, keepdims=True))  # (in place: one temporary fewer)
            out = np.asarray(out, order="C")  # (contiguous as torch's; 0-d stays 0-d)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return LogSoftmaxBackwardData.apply(grad, y, dim=ctx.dim, given_dim=ctx.given_dim), None

    @staticmethod
    def jvp(ctx, t):
        return t - (t * ctx.output.exp()).sum(dim=ctx.dim, keepdim=True)


class LogSoftmaxBackwardData(Op):
    """log_softmax's backward g - exp(y) sum(g) as one op (torch's): d/dg = gg - sum(gg exp(y)),
    d/dy = -sum(g) exp(y) gg"""
    _grad_fn_name = "LogSoftmaxBackwardDataBackward0"
    _saved_names, _saved_values = ("grad_output", "output"), Softmax._saved_values

    @staticmethod
    def forward(ctx, g, y, dim, given_dim=None):
        ctx.dim, ctx.given_dim = dim, given_dim
        ctx.save_for_backward(g, y)
        if g.shape == y.shape and g.size and g.ndim and g.dtype == y.dtype and g.dtype in _KERNEL_FLOATS:
            last = dim in (-1, g.ndim - 1)  # (torch's kernels: to the bit in float32, but for a few exps in float64)
            return log_softmax_backward_lastdim(g, y) if last else log_softmax_backward_over(g, y, dim)
        return g - np.exp(y) * g.sum(axis=dim, keepdims=True)

    @staticmethod
    def backward(ctx, gg):
        g, y = ctx.saved_tensors
        d = ctx.dim
        return (gg - (gg * y.exp()).sum(d, True) if ctx.needs_input_grad[0] else None,
                -g.sum(d, True) * y.exp() * gg if ctx.needs_input_grad[1] else None)

    @staticmethod
    def jvp(ctx, tg, ty):
        g, y = ctx.inputs[:2]
        d = ctx.dim
        return tg - y.exp() * tg.sum(d, True) - y.exp() * ty * g.sum(d, True)


show_on_read(Softmax, SoftmaxBackwardData, LogSoftmax, LogSoftmaxBackwardData,  # (the dim as given: -1 shows as
             shown_dim=lambda node: shown_dim(node.dim if node.given_dim is None else node.given_dim))  # 2**64 - 1)


def _implicit_dim(x):
    return 0 if x.ndim in (0, 1, 3) else 1  # torch's legacy choice where no dim is given


def _given_dim(x, dim):
    """A softmax dim given other than as an int, as torch's node shows it: its implicit choice for None, the int of a
    0-d tensor or numpy integer."""
    return _implicit_dim(x) if dim is None else int(dim)


def _softmax_dim(x, dim, op):
    """The one dim to normalize over, checked as torch does before the dtype (None for a 0-d x)."""
    if type(dim) is int and -x.ndim <= dim < x.ndim:  # the common call: one of x's dims
        return dim % x.ndim
    if dim is None:
        warn_at_user_line(f"Implicit dimension choice for {op} has been deprecated. Change the call to include dim=X "
                          "as an argument.")
        dim = _implicit_dim(x)
    if isinstance(dim, Tensor) and dim.ndim == 0 and not dim.dtype.is_floating_point:
        dim = int(dim)
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
        raise TypeError(f"{op}(): argument 'dim' (position 2) must be int, not {type(dim).__name__}; pass one dim "
                        "such as -1")
    d = normalize_dims(dim, x.ndim, op)[0]
    return d if x.ndim else None


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    d = _softmax_dim(input, dim, "softmax")
    if dtype is not None:
        input = input.to(dtype)
    need_floating(input, "softmax")
    given = dim if type(dim) is int else _given_dim(input, dim)  # (torch's node shows it unwrapped: -1 as 2**64 - 1)
    return Softmax.apply(input, dim=d, given_dim=given)  # (by keyword: the node's edges are its tensors', as torch's)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    d = _softmax_dim(input, dim, "log_softmax")
    if dtype is not None:
        input = input.to(dtype)
    need_floating(input, "log_softmax")
    return LogSoftmax.apply(input, dim=d, given_dim=dim if type(dim) is int else _given_dim(input, dim))


def linear(input, weight, bias=None):
    xs, ws = input._data.shape, weight._data.shape
    if not xs or not ws:
        raise RuntimeError(f"linear: both arguments need to be at least 1D, but they are {len(xs)}D and "
                           f"{len(ws)}D; give the input a batch or feature dimension")
    if xs[-1] != ws[-1]:
        rows = int(np.prod(xs[:-1])) if len(xs) > 1 else 1
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{xs[-1]} and {ws[-1]}x{ws[0]}): "
                           f"linear expects inputs whose last dimension is in_features={ws[-1]}")
    if input._data.dtype != weight._data.dtype:  # (torch's words: matmul's without a bias, addmm's with one)
        a, b = input._data.dtype.name, weight._data.dtype.name
        said = (f"expected m1 and m2 to have the same dtype, but got: {_TYPE_META[a]} != {_TYPE_META[b]}" if bias is None
                else f"mat1 and mat2 must have the same dtype, but got {_NAMES[a]} and {_NAMES[b]}")
        raise RuntimeError(said + " (linear: convert the input or the weight, e.g. x.to(w.dtype))")
    if input._data.dtype.kind == "b":  # (after the dtypes, as torch checks them)
        raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool' (linear: torch has no kernel for "
                                  "bool tensors; convert the input first, e.g. x.float())")
    if isinstance(bias, Tensor) and (bias._data.ndim > 1 or bias._data.size not in (1, ws[0])):
        raise RuntimeError(f"linear: the bias of shape {list(bias.shape)} does not broadcast to the output's "
                           f"out_features={ws[0]}; give it shape [{ws[0]}]")
    if bias is None:
        return matmul(input, weight.t())
    if len(xs) == 2:
        return addmm(bias, input, weight.t())
    if input.is_contiguous() and (len(xs) == 3 or bias.ndim == 1):
        # torch folds a contiguous input into a matrix: view(-1, in) -> addmm -> view back
        out = addmm(bias, input.reshape(-1, xs[-1]), weight.t())
        return out.view(*xs[:-1], ws[0])
    return matmul(input, weight.t()).add_(bias)  # (any other input: the product, then the bias added in place)


class MseLoss(Op):
    """d (x-y)^2 = 2(x-y), -2(x-y): torch's mse_loss_backward, one op (loss_backward.py)"""
    _grad_fn_name = "MseLossBackward0"
    _saved_names, _saved_values = ("self", "target"), {"reduction": "reduction_code"}

    @staticmethod
    def forward(ctx, x, y, reduction="mean"):
        ctx.reduction, ctx.reduction_code = reduction, REDUCTION_CODES[reduction]
        ctx.save_for_backward(x, y)
        d = (x - y) ** 2
        if reduction == "mean":  # (in torch's order of additions: a loss prints torch's last digit)
            return np.asarray(mean_like_torch(d))
        return np.asarray(sum_like_torch(d)) if reduction == "sum" else like_torch(d, x, y)  # (laid out as torch's)

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        return loss_grads(MseLossBackward, ctx, grad, x, y)

    @staticmethod
    def jvp(ctx, tx, ty):
        return loss_jvp(MseLossBackward, ctx, tx, ty)


def legacy_reduction(size_average, reduce):
    """The reduction the deprecated size_average and reduce name (None: True), with torch's warning."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    how = ("mean" if size_average else "sum") if reduce else "none"
    warn_at_user_line(f"size_average and reduce args will be deprecated, please use reduction='{how}' instead.")
    return how


def chosen_reduction(size_average, reduce, reduction):
    """reduction, unless the legacy size_average or reduce is given: then theirs, as torch's losses."""
    return legacy_reduction(size_average, reduce) if size_average is not None or reduce is not None else reduction


def _check_reduction(reduction, op):
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{op}: {reduction} is not a valid value for reduction; use 'none', 'mean' or 'sum'")


def _warn_target_size(x, y):
    warn_at_user_line(f"Using a target size ({y.shape}) that is different to the input size ({x.shape}). This will "
                      "likely lead to incorrect results due to broadcasting. Please ensure they have the same size.")


def _pointwise_loss(cls, x, y, reduction, op):
    _check_reduction(reduction, op)
    if x.shape != y.shape:
        _warn_target_size(x, y)
        from .shape import broadcast_to
        try:
            shape = np.broadcast_shapes(x.shape, y.shape)
        except ValueError:
            raise RuntimeError(f"{op}: The size of tensor a ({list(x.shape)}) must match the size of tensor "
                               f"b ({list(y.shape)})") from None
        x, y = (t if tuple(t.shape) == shape else broadcast_to(t, shape) for t in (x, y))  # (torch's expand_outplace)
    from ._op import promoted
    x, y = promoted(x, y)
    return cls.apply(x, y, reduction=reduction)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    reduction = chosen_reduction(size_average, reduce, reduction)
    if weight is not None:
        return _weighted_loss((input - target) ** 2, weight, input, reduction, "mse_loss")
    return _pointwise_loss(MseLoss, input, target, reduction, "mse_loss")


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    reduction = chosen_reduction(size_average, reduce, reduction)
    if input.shape != target.shape:
        _warn_target_size(input, target)
    if weight is not None:
        return _weighted_loss((input - target).abs(), weight, input, reduction, "l1_loss")
    _check_reduction(reduction, "l1_loss")
    return _reduce((input - target).abs(), reduction, "l1_loss")  # as torch composes it


def _weighted_loss(errors, weight, input, reduction, op):
    """torch's weighted form (composed, as torch): each error times its weight; the mean divides by their sum."""
    _check_reduction(reduction, op)
    if weight.shape != input.shape:
        raise ValueError(f"{op}: Weights and input must have the same size (weight {list(weight.shape)}, input "
                         f"{list(input.shape)}); pass one weight per element of input")
    return _reduce(errors * weight, reduction, op, weight_sum=weight.sum())


class NllLossBackward(Op):
    """nll_loss's backward g * local (g / total for 'mean'), linear in g and flat in logp: d = (local, 0). As torch's
    node, it keeps the target and the weight, and shows nll_loss's reduction and ignore_index."""
    _grad_fn_name = "NllLossBackwardBackward0"
    _saved_names = ("target", "weight")
    _saved_values = {"ignore_index": "shown_ignore_index", "reduction": "reduction_code"}

    @staticmethod
    def forward(ctx, g, logp, local, total, target, weight, reduction, ignore_index):
        ctx.local, ctx.total, ctx.reduction, ctx.ignore_index = local, total, reduction, ignore_index
        ctx.save_for_backward(target, weight)
        if total is not None:  # torch divides g by the total weight first, then multiplies by -w[y]
            g = g / total
        # torch writes g into the target entries only: an inf or nan g leaves the others 0 (not 0 * inf)
        return np.where(local != 0, g * local, 0).astype(local.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        ctx.saved_tensors  # (torch's node reads what it saved: a second backward through a freed one raises)
        glogp = Tensor._make(np.zeros(ctx.local.shape, ctx.local.dtype)) if ctx.needs_input_grad[1] else None
        local = Tensor._make(ctx.local)
        gg = where(local != 0, grad * local, 0.0)
        if ctx.total is not None:  # torch's nll_loss of grad, 'mean': summed, then over the total (0/0 on an empty batch)
            gg = gg.sum() / Tensor._make(ctx.total)
        return (gg, glogp) + (None,) * 6

    @staticmethod
    def jvp(ctx, tg, *_):
        d = tg * Tensor._make(ctx.local)
        return d if ctx.total is None else d / Tensor._make(ctx.total)


class NllLoss2DBackward(NllLossBackward):
    _grad_fn_name = "NllLoss2DBackwardBackward0"


class NllLoss(Op):
    """-w[y] logp[y]: the gradient is -w[y] at the target entry (/ sum of w[y] for 'mean')"""
    _grad_fn_name = "NllLossBackward0"
    _saved_names = ("self", "target", "weight", "total_weight")
    _saved_values = NllLossBackward._saved_values
    _double = NllLossBackward

    @staticmethod
    def forward(ctx, logp, target, weight=None, reduction="mean", ignore_index=-100):
        c = 1 if logp.ndim > 1 else 0
        valid = target != ignore_index
        at = _target_entries(np.where(valid, target, 0), c)  # (an ignored target picks class 0, with weight 0)
        wt = (valid if weight is None else np.where(valid, weight[at[c]], 0)).astype(logp.dtype)  # w[y], 0 if ignored
        picked = wt * logp[at]
        losses = -picked if c else 0.0 - picked  # (1-d: torch subtracts from 0, so -0 is +0)
        ctx.local = np.zeros(logp.shape, logp.dtype)  # d loss / d logp, before 'mean' divides
        ctx.local[at] = -wt
        ctx.reduction, ctx.c, ctx.total, ctx.ignore_index = reduction, c, None, ignore_index
        if reduction != "none" and logp.dtype.kind == "f" and target.size:  # (torch's cascade of partial sums)
            summed, total = cascade_nll(logp[at], valid, None if weight is None else wt)
            total = np.asarray(total)
        else:  # (unreduced, torch's kernel leaves total_weight 0, but for a 1-d logp's)
            summed, total = losses.sum(), np.asarray(wt.sum() if reduction != "none" or not c else 0, logp.dtype)
        ctx.save_for_backward(logp, target, weight, total)  # (what torch saves; backward reads logp)
        if reduction == "none":
            return np.asarray(losses)
        if reduction == "sum":
            return np.asarray(summed)
        ctx.total = total
        return np.asarray(summed / total)

    @staticmethod
    def backward(ctx, grad):
        logp, target, weight, _total = ctx.saved_tensors
        g = grad.unsqueeze(ctx.c) if ctx.reduction == "none" else grad
        return ctx._forward_cls._double.apply(g, logp, ctx.local, ctx.total, target._data,
                                              None if weight is None else weight._data, ctx.reduction,
                                              ctx.ignore_index), None

    @staticmethod
    def jvp(ctx, tlogp):
        d = tlogp * Tensor._make(ctx.local)  # the loss is linear in logp
        if ctx.reduction == "none":
            return d.sum(dim=ctx.c)
        return d.sum() if ctx.total is None else d.sum() / Tensor._make(ctx.total)


def _target_entries(t, c):
    """The index of each target's entry in logp: the target in the class dim c, and in every other
    dim an open grid (0..n-1, shaped to broadcast against the others)."""
    grid = [np.arange(n).reshape((n,) + (1,) * (t.ndim - 1 - i)) for i, n in enumerate(t.shape)]
    return tuple(grid[:c] + [t] + grid[c:])


class NllLoss2D(NllLoss):
    _grad_fn_name = "NllLoss2DBackward0"
    _double = NllLoss2DBackward


# torch's nll_loss_forward returns total_weight beside the loss: its node packs it last, after its inputs (the order
# of the names would put it before weight)
NllLoss._pack_order = NllLoss2D._pack_order = (0, 1, 2, 3)
show_on_read(NllLoss, NllLoss2D, NllLossBackward, NllLoss2DBackward,
             shown_ignore_index=lambda node: shown_dim(node.ignore_index),  # (-100 shows as 2**64 - 100)
             reduction_code=lambda node: REDUCTION_CODES[node.reduction])


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    reduction = chosen_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "nll_loss")
    t, shape = target._data, input._data.shape
    if t.dtype not in (np.int64, np.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {_NAMES[t.dtype.name]} (nll_loss takes "
                           "class indices: use target.long())")
    if len(shape) == 1 and t.ndim == 1:  # (torch reads a 1-d target of one element for a (C,) input as that element)
        if t.shape[0] != 1:
            raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {t.shape[0]}")
        t = t.reshape(())
    if not shape or t.shape != (shape[:1] + shape[2:] if len(shape) > 1 else ()):  # (N, d1, ...) or () for (C,)
        _target_shape_error(shape, t.shape)
    n_classes = shape[1] if len(shape) > 1 else shape[0]
    if t.size and (t.min() < 0 or t.max() >= n_classes):  # (the cheap test first: ignored targets may be < 0)
        bad = (t != ignore_index) & ((t < 0) | (t >= n_classes))
        if bad.any():
            raise IndexError(f"nll_loss: Target {t[bad].flat[0]} is out of bounds (there are {n_classes} classes)")
    w = weight._data if weight is not None else None
    kw = dict(weight=w, reduction=reduction, ignore_index=ignore_index)
    if len(shape) <= 2:  # (the target by keyword: the node's edges are its tensors', as torch's)
        return NllLoss.apply(input, target=t, **kw)
    if len(shape) == 4:
        return NllLoss2D.apply(input, target=t, **kw)
    # as torch: other ranks are viewed as (N, C, 1, -1) images
    n, c, hw = input.shape[0], input.shape[1], int(np.prod(input.shape[2:]))  # (not -1: n may be 0)
    out = NllLoss2D.apply(input.contiguous().view(n, c, 1, hw), target=t.reshape(n, 1, hw), **kw)
    return out.view(n, *input.shape[2:]) if reduction == "none" else out


def _target_shape_error(shape, target_shape):
    """torch's error for class indices whose shape is not the input's without its class dim (N, d1, ...)."""
    if not shape:
        raise ValueError("Expected 1 or more dimensions (got 0): nll_loss takes log-probabilities of shape (C,) or "
                         "(N, C, ...)")
    batch = target_shape[0] if target_shape else 0  # (torch counts a 0-d target as a batch of 0)
    if len(shape) > 1 and batch != shape[0]:
        raise ValueError(f"Expected input batch_size ({shape[0]}) to match target batch_size ({batch}).")
    if len(shape) <= 2 and len(target_shape) > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported (nll_loss: one class index "
                           "per row)")
    if len(shape) == 4 and len(target_shape) != 3:  # (torch's nll_loss2d)
        raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got targets of dimension: "
                           f"{len(target_shape)}")
    if len(shape) > 2:
        raise RuntimeError(f"Expected target size {list(shape[:1]) + list(shape[2:])}, got {list(target_shape)}")
    raise RuntimeError(f"nll_loss: expected the target to have the input's shape without the class dim "
                       f"({list(shape[:1]) + list(shape[2:])}), got {list(target_shape)}")


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    reduction = chosen_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "cross_entropy")
    if label_smoothing > 1.0:  # (torch checks it where it smooths: a negative one is taken as none)
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    need_floating(input, "cross_entropy")
    if input.ndim == 0:
        raise RuntimeError("cross_entropy: the input must have a class dimension (shape (C,) or (N, C, ...)), "
                           "got a 0-d tensor")
    cdim = 1 if input.ndim > 1 else 0
    logp = log_softmax(input, cdim)
    n_classes = input.shape[cdim]
    w = weight
    if weight is not None and input.ndim > 1:  # broadcast the class weights over dim 1
        w = weight.view([1, n_classes] + [1] * (input.ndim - 2))
    if target.shape == input.shape:  # class probabilities, as torch composes it
        if not target.dtype.is_floating_point:
            raise RuntimeError(f"Expected floating point type for target with class probabilities, got "
                               f"{_NAMES[target._data.dtype.name]}")
        p = target
        if label_smoothing > 0:
            p = MulScalar.apply(p, 1 - label_smoothing) + label_smoothing / n_classes
        terms = logp * p if w is None else logp * p * w
        if reduction == "none":
            return -terms.sum(cdim)
        if reduction == "sum":
            return -terms.sum()
        if input.numel() == 0:  # torch: the sum, filled with NaN in place (no division by zero)
            return -terms.sum().fill_(float("nan"))
        return DivScalar.apply(-terms.sum(), input.numel() // n_classes)
    nll = nll_loss(logp, target, weight=weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing <= 0:
        return nll
    ignore_mask = target == ignore_index
    smooth = -(logp.sum(cdim) if w is None else (logp * w).sum(cdim))
    smooth = smooth.masked_fill(ignore_mask, 0.0)
    if reduction == "mean":
        if weight is None:
            smooth = smooth.sum() / (~ignore_mask).sum()
        else:
            kept = target._data[~ignore_mask._data].reshape(-1)
            smooth = smooth.sum() / Tensor._make(weight._data[kept]).sum()
    elif reduction == "sum":
        smooth = smooth.sum()
    return MulScalar.apply(nll, 1 - label_smoothing) + MulScalar.apply(smooth, label_smoothing / n_classes)


def _in_double(fn, v):
    """fn(v), a float32 v's computed in float64 and rounded once (torch's kernel calls the C library's float
    functions, nearly always the correctly rounded value; numpy's float32 log is further off)"""
    return fn(v.astype(np.float64)).astype(np.float32) if v.dtype == np.float32 else fn(v)


def _log_sigmoid(x):
    """log sigmoid(x) in the steps of torch's kernel, min(x, 0) - log1p(e^-|x|); float32's e^x and log1p (SLEEF's in
    torch) as the correctly rounded ones, computed in float64: one value in 20 an ulp off (the model of SLEEF's exp in
    _kernel_exp.py gets one in 150, at 100 times the cost: 0.17 ms a call on 100 floats, a tenth of a training step)"""
    return np.minimum(x, x.dtype.type(0)) - _in_double(np.log1p, _in_double(np.exp, -np.abs(x)))


def _torch_reduction(losses, reduction):
    """torch's apply_loss_reduction: its mean or sum, in its order of additions"""
    if reduction == "none":
        return losses
    return np.asarray(mean_like_torch(losses) if reduction == "mean" else sum_like_torch(losses))


class BinaryCrossEntropy(Op):
    """d bce(p, y) / dp = (p - y) / (p (1 - p)) (one op, loss_backward.py), d/dy = -logit(p): torch's formulas"""
    _grad_fn_name = "BinaryCrossEntropyBackward0"
    _edges = (0, 1)  # (torch's node: none for the weight, which may not require grad)
    _saved_names, _saved_values = ("self", "target", "weight"), {"reduction": "reduction_code"}

    @staticmethod
    def forward(ctx, p, y, weight=None, reduction="mean"):
        ctx.reduction, ctx.reduction_code = reduction, REDUCTION_CODES[reduction]
        ctx.save_for_backward(p, y, weight)
        one, floor = p.dtype.type(1), p.dtype.type(-100)  # (torch's kernel, in its order; then its reduction)
        l = (y - one) * np.maximum(_in_double(np.log1p, -p), floor) - y * np.maximum(_in_double(np.log, p), floor)
        return _torch_reduction(l if weight is None else l * weight, reduction)

    @staticmethod
    def backward(ctx, grad):
        p, y, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        return (bce_input_grad(grad, p, y, w, ctx.reduction) if need[0] else None,
                bce_target_grad(grad, p, w, ctx.reduction) if need[1] else None, None)

    @staticmethod
    def jvp(ctx, tp, ty, _tw):  # (torch's: the two backward formulas of the tangents, then the reduction)
        p, y, w = ctx.inputs[:3]
        ty = Tensor._make(np.zeros(ty._data.shape, ty._data.dtype)) if type(ty) is ZeroTangent else ty  # (zeros, as
        # torch's formula sees them: times logit(p) they are NaN where p is 0 or 1)
        d = bce_input_grad(tp, p, y, w, "none") + bce_target_grad(ty, p, w, "none")
        return d.mean() if ctx.reduction == "mean" else d.sum() if ctx.reduction == "sum" else d


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    reduction = chosen_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "binary_cross_entropy")
    if input.shape != target.shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size "
                         f"({input.shape}) is deprecated. Please ensure they have the same size.")
    if weight is not None:  # (torch's F expands the weight to the target's shape: its node saves that)
        try:
            weight = weight.expand(np.broadcast_shapes(tuple(target.shape), tuple(weight.shape)))
        except ValueError:
            raise RuntimeError(f"Shape mismatch: objects cannot be broadcast to a single shape: "
                               f"{[tuple(target.shape), tuple(weight.shape)]}; sizes must be equal or 1 when aligned "
                               "from the right") from None
    _refuse_grad("binary_cross_entropy", weight=weight)
    if input._data.dtype.kind not in "f":  # (torch has a kernel for floating point probabilities only)
        raise NotImplementedError(f'"binary_cross_entropy" not implemented for \'{_NAMES[input._data.dtype.name]}\' '
                                  "(it takes probabilities: convert with .float())")
    if target.dtype is not input.dtype:  # (torch's kernel reads the target in the input's dtype)
        raise RuntimeError(f"Found dtype {_NAMES[target._data.dtype.name]} but expected "
                           f"{_NAMES[input._data.dtype.name]} (binary_cross_entropy: convert the target, e.g. "
                           f"target.to(input.dtype))")
    if weight is not None and weight.dtype is not input.dtype:
        weight = weight.to(input.dtype)  # (torch multiplies the loss by it in the input's dtype)
    if ((input._data < 0) | (input._data > 1)).any():
        raise RuntimeError("all elements of input should be between 0 and 1 (binary_cross_entropy takes "
                           "probabilities; for logits use binary_cross_entropy_with_logits)")
    if weight is not None and weight.shape != target.shape:  # (torch's kernel multiplies the loss by it in place)
        raise RuntimeError(f"output with shape {list(target.shape)} doesn't match the broadcast shape "
                           f"{list(weight.shape)}")
    return BinaryCrossEntropy.apply(input, target, weight, reduction=reduction)


def _refuse_grad(op, **weights):
    """torch's op has no gradient for its weights: one that requires grad is refused where it would be recorded."""
    for name, w in weights.items():
        if isinstance(w, Tensor) and w.requires_grad and is_grad_enabled():
            raise RuntimeError(f"The function '{op}' is not differentiable with respect to argument '{name}'. This "
                               f"input cannot have requires_grad True. (Pass {name}.detach().)")


def _weighted_mean(ctx, g, w, x):
    """g times the loss's weight, then divided by the element count for reduction='mean' (torch's order)."""
    g = g if w is None else g * w
    return div_scalar(g, x.numel()) if ctx.reduction == "mean" else g  # (torch's div_ by the count: DivBackward1)


class BinaryCrossEntropyWithLogits(Op):
    """d bce(sigmoid(x), y) / dx = (1 + (pw - 1) y) sigmoid(x) - pw y;  d/dy = (pw - 1) softplus(-x) - x"""
    _grad_fn_name = "BinaryCrossEntropyWithLogitsBackward0"
    _edges = (0, 1)  # (torch's node: none for the weights, which may not require grad)
    _saved_names, _saved_values = ("self", "target", "weight", "pos_weight"), {"reduction": "reduction_code"}

    @classmethod
    def apply(cls, x, y, weight=None, pos_weight=None, **kwargs):  # (F's function and torch's op both come here)
        _refuse_grad("binary_cross_entropy_with_logits", weight=weight, pos_weight=pos_weight)
        return super().apply(x, y, weight, pos_weight, **kwargs)

    @staticmethod
    def forward(ctx, x, y, weight=None, pos_weight=None, reduction="mean"):
        ctx.reduction, ctx.reduction_code = reduction, REDUCTION_CODES[reduction]
        ctx.save_for_backward(x, y, weight, pos_weight)
        one = x.dtype.type(1)
        log_sigmoid = _log_sigmoid(x)  # (torch's steps: (1 - y) x - log sigmoid(x) ((pw - 1) y + 1), times w)
        if pos_weight is not None:
            log_sigmoid = log_sigmoid * ((pos_weight - one) * y + one)
        loss = (one - y) * x - log_sigmoid
        loss = (loss if weight is None else loss * weight).astype(x.dtype, copy=False)
        return _torch_reduction(loss, reduction)

    @staticmethod
    def backward(ctx, grad):
        from .elementwise import sigmoid
        x, y, w, pw = ctx.saved_tensors
        gx = gy = None
        if ctx.needs_input_grad[0]:  # (torch's formulas, in its order: the same last bits)
            if pw is None:
                gx = sigmoid(x) - y
            else:
                t = pw * y
                gx = (add_scalar(t, 1) - y) * sigmoid(x) - t  # (t.add(1): AddBackward1)
            gx = _weighted_mean(ctx, gx * grad, w, x)
        if ctx.needs_input_grad[1]:
            from .activation import LogSigmoid
            gy = -x * grad if pw is None else (LogSigmoid.apply(-x) - LogSigmoid.apply(x) * pw) * grad
            gy = _weighted_mean(ctx, gy, w, x)
        return gx, gy, None, None

    @staticmethod
    def jvp(ctx, tx, ty, _tw, _tpw):
        from .elementwise import log1p, relu, sigmoid
        x, y, w, pw = ctx.inputs[:4]
        dx = sigmoid(x) - y if pw is None else (1 + (pw - 1) * y) * sigmoid(x) - pw * y
        dy = -x if pw is None else (pw - 1) * (relu(-x) + log1p((-x.abs()).exp())) - x
        d = tx * dx + ty * dy
        if w is not None:
            d = d * w
        return d.mean() if ctx.reduction == "mean" else d.sum() if ctx.reduction == "sum" else d


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    reduction = chosen_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "binary_cross_entropy_with_logits")
    if input.shape != target.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    if input._data.dtype.kind not in "f":  # (torch's first kernel there is log_sigmoid's)
        raise NotImplementedError(f'"log_sigmoid_cpu" not implemented for \'{_NAMES[input._data.dtype.name]}\' '
                                  "(binary_cross_entropy_with_logits takes floating point logits: .float())")
    if not (target.dtype.is_floating_point or target.dtype.is_complex):  # (the loss is written in the target's dtype)
        raise RuntimeError(f"result type {_NAMES[input._data.dtype.name]} can't be cast to the desired output type "
                           f"{_NAMES[target._data.dtype.name]} (binary_cross_entropy_with_logits: the target holds "
                           "probabilities, use target.float())")
    return BinaryCrossEntropyWithLogits.apply(input, target, weight, pos_weight, reduction=reduction)


def dropout(input, p=0.5, training=True, inplace=False):
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return input
    if p == 1:
        return input * 0
    if input.is_meta:  # no data, and no draw (the generator stays where it was, as in torch)
        return input * 1.0
    from .._random import bernoulli_mask
    from ._memory_formats import empty_like_layout, preserve_format
    like = empty_like_layout(input._data, input._data.dtype, preserve_format)  # (torch's noise: empty_like(input))
    mask = bernoulli_mask(input.shape, 1 - p, input.dtype.np, like) / (1 - p)
    return input * Tensor._make(mask.astype(input._data.dtype))
