"""cdist: the p-norm distance between every row of x1 and every row of x2 (batched, broadcasting the
batch dims). Two ops, as in torch: Cdist computes the differences directly; for p = 2 on many rows
EuclideanDist uses ||a||^2 + ||b||^2 - 2 a.b, one matrix product (faster, slightly less exact)."""
import math

import numpy as np

from ._op import Op
from .elementwise import where
from .inplace import _type_name

_MODES = {"use_mm_for_euclid_dist_if_necessary": 0, "use_mm_for_euclid_dist": 1, "donot_use_mm_for_euclid_dist": 2}


def _pair_diffs(x1, x2):
    """d[..., i, j, :] = x1[..., i, :] - x2[..., j, :]"""
    return x1[..., :, None, :] - x2[..., None, :, :]


def _weights(diff, dist, p):
    """d dist_ij / d x1_ik, from the differences (Tensors); 0 where the distance is 0 (torch's choice)."""
    d = dist.unsqueeze(-1)
    zero, safe = d == 0, where(d == 0, d * 0 + 1, d)
    if p == 0:
        return diff * 0
    if p == 1:
        return diff.sign()
    if math.isinf(p):
        return diff.sign() * (diff.abs() == d)
    if p == 2:
        return where(zero, diff * 0, diff / safe)
    if p < 2:
        skip = zero | (diff == 0) if p < 1 else zero
        safe_abs = where(diff == 0, diff * 0 + 1, diff.abs())
        return where(skip, diff * 0, diff.sign() * safe_abs ** (p - 1) / safe ** (p - 1))
    return where(zero, diff * 0, diff * diff.abs() ** (p - 2) / safe ** (p - 1))


class Cdist(Op):
    """out_ij = ||x1_i - x2_j||_p;  d out_ij / d x1_i = sign(d) |d|^(p-1) / out_ij^(p-1) = -d out_ij / d x2_j"""
    _grad_fn_name = "CdistBackward0"
    _saved_names, _saved_values = ("x1", "x2", "result"), {"p": "p"}

    @staticmethod
    def forward(ctx, x1, x2, p=2.0):
        ctx.p = p
        a = np.abs(_pair_diffs(x1, x2))
        if p == 0:
            out = (a != 0).sum(-1)
        elif math.isinf(p):
            out = a.max(-1, initial=0)
        elif p == 1:
            out = a.sum(-1)
        elif p == 2:
            out = np.sqrt((a * a).sum(-1))
        else:
            out = (a ** p).sum(-1) ** (1 / p)
        out = np.asarray(out, dtype=np.result_type(x1, x2))
        ctx.save_for_backward(x1, x2, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        x1, x2, out = ctx.saved_tensors
        g = _weights(_pair_diffs(x1, x2), out, ctx.p) * grad.unsqueeze(-1)
        return g.sum(-2) if ctx.needs_input_grad[0] else None, -g.sum(-3) if ctx.needs_input_grad[1] else None

    @staticmethod
    def jvp(ctx, t1, t2):
        x1, x2 = ctx.inputs[:2]
        w = _weights(_pair_diffs(x1, x2), ctx.output, ctx.p)
        t1 = x1 * 0 if t1 is None else t1
        t2 = x2 * 0 if t2 is None else t2
        return (w * _pair_diffs(t1, t2)).sum(-1)


class EuclideanDist(Op):
    """out = sqrt(max(0, ||a_i||^2 + ||b_j||^2 - 2 a_i.b_j));  d out / d a_i = sum_j g_ij (a_i - b_j) / out_ij"""
    _grad_fn_name = "EuclideanDistBackward0"

    @staticmethod
    def forward(ctx, x1, x2):
        n1, n2 = (x1 * x1).sum(-1, keepdims=True), (x2 * x2).sum(-1, keepdims=True)
        a = np.concatenate([-2 * x1, n1, np.ones_like(n1)], -1)     # one product gives all three terms
        b = np.concatenate([x2, np.ones_like(n2), n2], -1)
        out = np.sqrt(np.maximum(a @ np.swapaxes(b, -1, -2), 0))
        ctx.save_for_backward(x1, x2, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        x1, x2, out = ctx.saved_tensors
        ratio = where(out == 0, grad * 0, grad / where(out == 0, out * 0 + 1, out))
        g1 = x1 * ratio.sum(-1, keepdim=True) - ratio @ x2
        g2 = x2 * ratio.sum(-2).unsqueeze(-1) - ratio.mT @ x1
        return g1 if ctx.needs_input_grad[0] else None, g2 if ctx.needs_input_grad[1] else None

    @staticmethod
    def jvp(ctx, t1, t2):
        x1, x2 = ctx.inputs[:2]
        out = ctx.output
        t1 = x1 * 0 if t1 is None else t1
        t2 = x2 * 0 if t2 is None else t2
        num = (x1 * t1).sum(-1, keepdim=True) + (x2 * t2).sum(-1).unsqueeze(-2) - t1 @ x2.mT - x1 @ t2.mT
        return where(out == 0, out * 0, num / where(out == 0, out * 0 + 1, out))


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The p-norm distance between each row of x1 (..., P, M) and each row of x2 (..., R, M): (..., P, R)."""
    if compute_mode not in _MODES:
        raise ValueError(f"cdist(): {compute_mode} is not a valid value for compute_mode; one of {list(_MODES)}")
    _check_cdist(x1, x2, p)
    batch = np.broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2]))
    (r1, m), r2 = x1.shape[-2:], x2.shape[-2]
    mode = _MODES[compute_mode]
    if x1.numel() and x2.numel() and p == 2 and (mode == 1 or mode == 0 and (r1 > 25 or r2 > 25)):
        n = int(np.prod(batch))
        if n == 1:  # (one batch, or none: torch takes the inputs as they are)
            return EuclideanDist.apply(x1, x2).view(*batch, r1, r2)
        a = x1.expand(*batch, r1, m).contiguous().view(n, r1, m)  # (torch copies an expanded input: CloneBackward0)
        b = x2.expand(*batch, r2, m).contiguous().view(n, r2, m)
        return EuclideanDist.apply(a, b).view(*batch, r1, r2)
    return Cdist.apply(x1, x2, p=float(p))


def _check_cdist(x1, x2, p):
    for name, x in (("X1", x1), ("X2", x2)):
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.ndim}D")
        if not x.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {_type_name(x._data.dtype)}")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"cdist(): X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: "
                           f"{x2.shape[-1]}")
    if not p >= 0:
        raise RuntimeError("cdist only supports non-negative p values")
    try:
        np.broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2]))
    except ValueError:
        raise RuntimeError(f"cdist: the batch dims of x1 {list(x1.shape)} and x2 {list(x2.shape)} do not "
                           "broadcast; give them equal sizes or size 1") from None
