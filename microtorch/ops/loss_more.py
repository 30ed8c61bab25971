"""Margin losses over classes (multi_margin_loss, multilabel_margin_loss) and the CTC loss.

As in torch, their gradients are computed in forward's numpy pass and have no derivative of their own:
a second backward raises torch's "derivative for ... is not implemented".
"""
import numpy as np

from .._tensor import Tensor
from ._kernels import _NAMES
from ._op import Op
from .loss import legacy_reduction
from .nn import _check_reduction


class FirstOrderOnly(Op):
    """g * local (a gradient computed in forward); its own derivative is not implemented, as in torch"""
    _grad_fn_name = "torch::autograd::NotImplemented"

    @staticmethod
    def forward(ctx, g, x, local, op):
        ctx.op = op
        return np.asarray(g * local, dtype=local.dtype)

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError(f"derivative for aten::{ctx.op}_backward is not implemented")

    @staticmethod
    def jvp(ctx, *tangents):
        raise RuntimeError(f"derivative for aten::{ctx.op}_backward is not implemented")


class _LocalGradLoss(Op):
    """a loss whose forward leaves d loss / d x in ctx.local; ctx.rows: the dims of x that the per-entry
    losses ('none') leave out"""

    @staticmethod
    def backward(ctx, grad):
        x = ctx.saved_tensors[0]
        g = grad if ctx.reduction != "none" else grad.reshape(ctx.grad_shape)
        return (FirstOrderOnly.apply(g, x, ctx.local, ctx.op),) + (None,) * (ctx.n_args - 1)

    @staticmethod
    def jvp(ctx, t, *_):
        d = t * Tensor._make(getattr(ctx, "true_local", ctx.local))
        return d.sum(ctx.rows) if ctx.reduction == "none" else d.sum()


class MultiMarginLoss(_LocalGradLoss):
    """sum_{i != y} w[y] max(0, margin - x[y] + x[i])^p / C"""
    _grad_fn_name = "MultiMarginLossBackward0"
    _saved_names = ("self", "target", "weight")
    _saved_values = {"p": "p", "margin": "margin", "reduction": "reduction_code"}

    @staticmethod
    def forward(ctx, x, target, p, margin, weight, reduction):
        ctx.op, ctx.n_args, ctx.rows, ctx.reduction = "multi_margin_loss", 6, -1, reduction
        ctx.p, ctx.margin, ctx.reduction_code = p, margin, _REDUCTION_CODES[reduction]
        x2 = x.reshape(-1, x.shape[-1] if x.ndim else 1)
        c, rows, t = x2.shape[1], np.arange(x2.shape[0]), target.reshape(-1)
        z = x.dtype.type(margin) - x2[rows, t][:, None] + x2  # (torch's kernel, in x's dtype and its order)
        z[rows, t] = 0
        pos = z > 0
        w = None if weight is None else weight[t].astype(x.dtype)[:, None]
        h = np.where(pos, z if p == 1 else z * z, 0)
        h = h if w is None else h * w
        losses = (_running_sums(h) / x.dtype.type(c)).astype(x.dtype)  # (a row's terms added in turn)
        ctx.local = _multi_margin_local(z, pos, w, p, rows, t, x2.shape[0] if reduction == "mean" else 1)
        ctx.local = ctx.local.reshape(x.shape)
        ctx.grad_shape = x.shape[:-1] + (1,) if x.ndim else ()
        ctx.save_for_backward(x, target, weight)
        if reduction == "none":
            return losses.reshape(target.shape)
        total = _running_sums(losses.astype(np.float64)[None])[0]  # (the rows' sum in double, as torch's)
        return np.asarray(total / x2.shape[0] if reduction == "mean" else total, x.dtype)


_REDUCTION_CODES = {"none": 0, "mean": 1, "sum": 2}  # (torch's nodes show the reduction as its enum's number)


def _running_sums(table):
    """each row of table summed in order, one term after another"""
    return np.add.accumulate(table, 1)[:, -1] if table.shape[1] else np.zeros(len(table), table.dtype)


def _multi_margin_local(z, pos, w, p, rows, t, frames):
    """torch's multi_margin_loss_backward for an incoming gradient of 1: h = g (p = 1) or 2 g z where z > 0, times
    the target's weight, g = 1 / (frames C) in x's dtype; the target's entry minus the others, taken in turn"""
    dt = z.dtype.type
    g = dt(np.float64(1.0) / (frames * z.shape[1]))  # (an empty batch: inf, as torch's, never used)
    h = np.where(pos, g if p == 1 else dt(2) * g * z, dt(0))
    h = h if w is None else h * w
    h[rows, t] = 0
    h[rows, t] = -_running_sums(h)
    return h


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    """A margin loss over classes: every wrong class i scoring within `margin` of the target class costs."""
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    _check_reduction(reduction, "multi_margin_loss")
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    if weight is not None and weight.requires_grad:
        raise RuntimeError("The function 'multi_margin_loss' is not differentiable with respect to argument "
                           "'weight'. This input cannot have requires_grad True.")
    if input.ndim > 2:
        raise RuntimeError(f"multi_margin_loss: Expected non-empty vector or matrix with optional 0-dim batch size, "
                           f"but got: {list(input.shape)}")
    t = target._data if target.numel() else target._data.astype(np.int64)
    if t.dtype.kind not in "iu":
        raise RuntimeError(f"multi_margin_loss: expected scalar type Long but found {target.dtype} for the target; "
                           "use target.long()")
    n = input.shape[0] if input.ndim == 2 else 1
    if t.size != n or t.ndim > 1:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                           f"samples (batch size). Expected target size [{n}], but got {list(t.shape)}. Input has "
                           f"shape {list(input.shape)}.")
    if input._data.dtype.kind != "f" or input._data.dtype.itemsize < 4:  # (torch: float and double kernels only)
        raise NotImplementedError(f'"multi_margin_loss_cpu_kernel" not implemented for '
                                  f"'{_NAMES[input._data.dtype.name]}': the input holds scores, a float32 or float64 "
                                  "tensor")
    c = input.shape[-1] if input.ndim else 1
    if t.size and (t.min() < 0 or t.max() >= c):
        raise RuntimeError(f"multi_margin_loss: target out of range (the targets are class indices, 0 to {c - 1})")
    return MultiMarginLoss.apply(input, t, p, margin, None if weight is None else weight._data, reduction)


def _label_sets(t, c):
    """per row: the target classes (entries before the first -1) and whether each class is one of them"""
    valid = np.cumprod(t >= 0, axis=-1).astype(bool)  # everything after the first -1 is ignored
    is_target = np.zeros(t.shape[:-1] + (c,), bool)
    rows = np.nonzero(valid)
    is_target[rows[:-1] + (t[rows],)] = True
    return valid, is_target


class MultilabelMarginLoss(_LocalGradLoss):
    """sum over target classes j and non-target classes i of max(0, 1 - (x[j] - x[i])) / C"""
    _grad_fn_name = "MultilabelMarginLossBackward0"
    _saved_names = ("self", "target", "is_target")
    _saved_values = {"reduction": "reduction_code"}

    @staticmethod
    def forward(ctx, x, target, reduction):
        ctx.op, ctx.n_args, ctx.rows, ctx.reduction = "multilabel_margin_loss", 3, -1, reduction
        ctx.reduction_code = _REDUCTION_CODES[reduction]
        x2, t2 = x.reshape(-1, x.shape[-1] if x.ndim else 1), target.reshape(-1, target.shape[-1] if x.ndim else 1)
        n, c = x2.shape
        valid, is_target = _label_sets(t2, c)
        xj = np.take_along_axis(x2, np.where(valid, t2, 0), 1)  # (N, J): the target classes' scores
        z = x.dtype.type(1) - xj[:, :, None] + x2[:, None, :]  # (N, J, C), in x's dtype as torch's kernel
        active = (z > 0) & valid[:, :, None] & ~is_target[:, None, :]
        # (torch's kernel: each row's terms added in turn in double, the row's sum returned in x's dtype)
        sums = _running_sums(np.where(active, z, 0).astype(np.float64).reshape(n, active[0].size if n else 0))
        sums = sums.astype(x.dtype)
        ctx.local = _multilabel_local(active, t2, valid, x.dtype, n if reduction == "mean" else 1).reshape(x.shape)
        ctx.grad_shape = x.shape[:-1] + (1,) if x.ndim else ()
        ctx.save_for_backward(x, target, is_target.astype(x.dtype).reshape(target.shape))
        if reduction == "none":
            return (sums / x.dtype.type(c)).reshape(x.shape[:-1] if x.ndim > 1 else ())
        total = _running_sums(sums.astype(np.float64)[None])[0] / c  # (the rows' total in double)
        return np.asarray(total / n if reduction == "mean" else total, x.dtype)


MultilabelMarginLoss._pack_order = (0, 1, 2)  # (torch's is_target is a result of its op: packed after the inputs)


def _multilabel_local(active, t2, valid, dtype, frames):
    """torch's multilabel_margin_loss_backward for an incoming gradient of 1: g = 1 / (frames C) in x's dtype,
    added to a non-target class once per target it comes within the margin of, taken from a target class once per
    such class (each a running sum of g's, as torch adds them)"""
    c = active.shape[2]
    g = dtype.type(np.float64(1.0) / (frames * c))
    counts = active.sum(1)  # (+ for each non-target class i ...)
    np.add.at(counts, (np.arange(len(t2))[:, None].repeat(t2.shape[1], 1), np.where(valid, t2, 0)),
              -active.sum(2))  # (... - for each target class j; a class is one or the other)
    steps = np.concatenate([[dtype.type(0)], np.add.accumulate(np.full(max(np.abs(counts).max(initial=0), 1), g))])
    return np.where(counts >= 0, steps[np.abs(counts)], -steps[np.abs(counts)]).astype(dtype)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """A margin loss for several labels per example: each target class should beat each other class by 1.
    target holds class indices, ended by -1 (the rest is ignored)."""
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    _check_reduction(reduction, "multilabel_margin_loss")
    for name, t in (("input", input), ("target", target)):
        if not isinstance(t, Tensor):
            raise TypeError(f"multilabel_margin_loss(): argument '{name}' must be Tensor, not {type(t).__name__}")
    if input.ndim > 2 or tuple(target.shape) != tuple(input.shape) and not (input.ndim == 0 and target.numel() == 1):
        raise RuntimeError(f"multilabel_margin_loss: inconsistent target size: {list(target.shape)} for input of "
                           f"size: {list(input.shape)}; the target has the input's shape (class indices, -1 ends them)")
    t = target._data
    if input._data.dtype.kind != "f" or input._data.dtype.itemsize < 4:  # (torch: float and double kernels only)
        raise NotImplementedError(f'"multilabel_margin_loss_forward_out_frame" not implemented for '
                                  f"'{_NAMES[input._data.dtype.name]}': the input holds scores, a float32 or float64 "
                                  "tensor")
    if t.dtype.kind == "c":
        raise NotImplementedError(f'multilabel_margin_loss: "min_all" not implemented for {target.dtype}: the target '
                                  "holds class indices")
    if t.dtype.kind not in "iu":
        raise RuntimeError(f"multilabel_margin_loss: expected scalar type Long but found {target.dtype} for the "
                           "target; use target.long()")
    c = input.shape[-1] if input.ndim else 1
    if t.size and t.max() >= c or (t < -1).any():
        raise RuntimeError(f"multilabel_margin_loss: target out of range: the targets are class indices 0 to {c - 1}, "
                           "ended by -1")
    return MultilabelMarginLoss.apply(input, t.reshape(input.shape), reduction)


def _lse(*terms):
    """elementwise log(sum(exp(terms))), -inf when every term is -inf"""
    m = np.maximum.reduce(terms)
    safe = np.where(np.isneginf(m), 0, m)
    return safe + np.log(sum(np.exp(t - safe) for t in terms))


def _shifted(a, k):
    """a moved k places right along the last axis, -inf coming in"""
    out = np.full_like(a, -np.inf)
    out[..., k:] = a[..., :a.shape[-1] - k]
    return out


def _ctc_one(lp, labels, blank):
    """log alpha and log beta over the extended label sequence (blank, l1, blank, ..., blank) of one example;
    lp: (T, C) log-probabilities for its T frames. Returns (nll, log(alpha * beta) of shape (T, 2L+1), ext)."""
    ext = np.full(2 * len(labels) + 1, blank, np.int64)
    ext[1::2] = labels
    T, S = lp.shape[0], len(ext)
    skip = np.zeros(S, bool)  # may a path jump over the blank before s?
    skip[2:] = (ext[2:] != blank) & (ext[2:] != ext[:-2])
    alpha, beta = np.full((T, S), -np.inf), np.full((T, S), -np.inf)
    alpha[0, :min(2, S)] = lp[0, ext[:min(2, S)]]
    for t in range(1, T):
        alpha[t] = _lse(alpha[t - 1], _shifted(alpha[t - 1], 1), np.where(skip, _shifted(alpha[t - 1], 2), -np.inf)) \
            + lp[t, ext]
    beta[T - 1, max(S - 2, 0):] = lp[T - 1, ext[max(S - 2, 0):]]
    skip_back = np.append(skip[2:], [False, False])  # may a path jump from s to s + 2?
    for t in range(T - 2, -1, -1):
        nxt = beta[t + 1]
        beta[t] = _lse(nxt, _shifted(nxt[::-1], 1)[::-1], np.where(skip_back, _shifted(nxt[::-1], 2)[::-1], -np.inf)) \
            + lp[t, ext]
    nll = -_lse(alpha[T - 1, -1], alpha[T - 1, -2] if S > 1 else -np.inf)
    return nll, alpha + beta, ext


class CtcLoss(_LocalGradLoss):
    """-log sum over alignments of prod_t p_t(path_t); d/d lp = -sum_{s: ext_s = c} alpha beta / p / exp(lp), to
    which backward adds exp(lp) as torch does (the same gradient once it passes through log_softmax)"""
    _grad_fn_name = "CtcLossBackward0"

    @staticmethod
    def forward(ctx, lp, targets, input_lengths, target_lengths, blank, zero_infinity):
        ctx.op, ctx.n_args, ctx.rows, ctx.reduction = "_ctc_loss", 6, (0, 2), "none"
        T, N, C = lp.shape
        losses, local, true = np.zeros(N, lp.dtype), np.zeros(lp.shape, lp.dtype), np.zeros(lp.shape, lp.dtype)
        for n in range(N):
            Tn, labels = int(input_lengths[n]), targets[n]
            if Tn == 0:
                losses[n] = 0.0 if len(labels) == 0 else np.inf
                continue
            nll, ab, ext = _ctc_one(lp[:Tn, n].astype(np.float64), labels, blank)
            losses[n] = nll
            lcab = np.full((Tn, C), -np.inf)
            for c in np.unique(ext):
                lcab[:, c] = _lse(*ab[:, ext == c].T) if (ext == c).sum() > 1 else ab[:, ext == c][:, 0]
            true[:Tn, n] = -np.exp(lcab + nll - lp[:Tn, n]) if np.isfinite(nll) else (0 if zero_infinity else np.nan)
            local[:Tn, n] = np.exp(lp[:Tn, n]) + true[:Tn, n] if np.isfinite(nll) else true[:Tn, n]
        ctx.local, ctx.true_local, ctx.grad_shape = local, true, (1, N, 1)  # (true_local: the derivative, for jvp)
        ctx.save_for_backward(lp)
        return losses.astype(lp.dtype)


def _lengths(v, name, n):
    arr = np.asarray(v._data if isinstance(v, Tensor) else v).reshape(-1)
    if arr.dtype.kind not in "iu":
        raise RuntimeError(f"ctc_loss: {name} must be integers (a tensor of int64 or a list of ints), got {arr.dtype}")
    if len(arr) != n:
        raise RuntimeError(f"ctc_loss: {name} must have one entry per batch element ({n}), got {len(arr)}")
    return arr


def _ctc_targets(targets, tl, n):
    """one int64 array of labels per example, from the padded (N, S) or the concatenated (sum(lengths),) form"""
    t = targets._data if isinstance(targets, Tensor) else np.asarray(targets)
    if t.dtype.kind not in "iu":
        raise RuntimeError(f"ctc_loss: targets must be class indices (int64), got {t.dtype}")
    if t.ndim == 2:
        if t.shape[0] != n or tl.size and tl.max() > t.shape[1]:
            raise RuntimeError(f"ctc_loss: Expected tensor to have size at least {int(tl.max())} at dimension 1, but "
                               f"got size {t.shape[1]} for targets of shape {list(t.shape)}")
        return [t[i, :tl[i]] for i in range(n)]
    if t.ndim != 1 or tl.sum() > t.shape[0]:
        raise RuntimeError(f"ctc_loss: the concatenated targets ({list(t.shape)}) must hold sum(target_lengths) = "
                           f"{int(tl.sum())} labels")
    return np.split(t[:tl.sum()], np.cumsum(tl)[:-1])


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """Connectionist Temporal Classification: -log of the total probability of every alignment of the target
    to the T frames of log_probs (T, N, C) (or (T, C)), blanks and repeats collapsed."""
    _check_reduction(reduction, "ctc_loss")
    if log_probs.ndim not in (2, 3):
        raise RuntimeError(f"ctc_loss: log_probs must be (T, N, C) or (T, C), got {list(log_probs.shape)}")
    batched = log_probs.ndim == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    T, N, C = lp.shape
    il, tl = _lengths(input_lengths, "input_lengths", N), _lengths(target_lengths, "target_lengths", N)
    if not 0 <= blank < C:
        raise RuntimeError(f"ctc_loss: blank must be in label range (0 to {C - 1}), got {blank}")
    if il.size and (il.max() > T or il.min() < 0):
        raise RuntimeError(f"ctc_loss: Expected input_lengths to have value at most {T}, but got value {int(il.max())}"
                           f" (the number of frames T of log_probs)")
    if not batched and getattr(targets, "ndim", 2) == 1:
        targets = targets.reshape(1, -1)  # an unbatched target sequence
    res = CtcLoss.apply(lp, _ctc_targets(targets, tl, N), il, tl, blank, zero_infinity)
    if zero_infinity:  # (as torch: where(loss == inf, 0, loss))
        from .elementwise import where
        res = where(Tensor._make(res._data == np.inf), Tensor._make(np.zeros((), res._data.dtype)), res)
    if reduction == "mean":
        return (res / Tensor._make(np.maximum(tl, 1).astype(res._data.dtype))).mean()
    if reduction == "sum":
        return res.sum()
    return res if batched else res.squeeze(0)


def _check_linear_ce(input, linear_weight, target, linear_bias, ignore_index):
    if input.ndim < 1 or input.ndim > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.ndim}")
    if linear_weight.ndim < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.ndim}")
    if input.shape[-1] != linear_weight.shape[-1]:
        raise RuntimeError(f"expected equal input and linear_weight last dimensions (in_features), got "
                           f"{input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    classes = tuple(linear_weight.shape[:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != classes:
        raise RuntimeError(f"expected linear_bias shape {classes}, got {tuple(linear_bias.shape)}")
    if len(classes) > 1 and input.ndim == 1:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires "
                           f"batched input, (N, {input.shape[-1]}), got unbatched input with shape "
                           f"{tuple(input.shape)}")
    logits_shape = tuple(input.shape[:-1]) + classes
    if input.ndim == 2 and target.ndim >= 1 and target.shape[0] != input.shape[0]:
        raise ValueError(f"linear_cross_entropy: Expected input batch_size ({input.shape[0]}) to match target "
                         f"batch_size ({target.shape[0]}).")
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    return logits_shape


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None, reduction="mean",
                         ignore_index=None, label_smoothing=0.0, options=None):
    """cross_entropy(linear(input, linear_weight, linear_bias), target): torch's `options` choose a chunked
    evaluation that saves GPU memory on large vocabularies; the values are those of this reference path."""
    from .nn import cross_entropy, linear
    logits_shape = _check_linear_ce(input, linear_weight, target, linear_bias, ignore_index)
    n_out = int(np.prod(linear_weight.shape[:-1]))
    w = linear_weight.reshape(n_out, input.shape[-1]) if linear_weight.ndim > 2 else linear_weight
    b = linear_bias.reshape(n_out) if linear_bias is not None and linear_bias.ndim > 1 else linear_bias
    logits = linear(input, w, b).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=-100 if ignore_index is None else ignore_index, label_smoothing=label_smoothing)
