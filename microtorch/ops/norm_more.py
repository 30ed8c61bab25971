"""More normalisations: group_norm (one op), and rms_norm, local_response_norm composed of existing ops
the way torch composes them (so that the grad_fn names agree). instance_norm, built on batch_norm, is in
nn/_functional_norm.py."""
import numpy as np

from ._checks import need_floating
from ._op import Op


def _groups(x, g):
    """(N, C, *) -> (N, G, C/G * prod(*)): the elements each group's statistics run over."""
    return x.reshape(x.shape[0], g, -1)


def _per_channel(v, x):
    """a (C,) weight shaped to broadcast against (N, C, *)"""
    return v.reshape((1, -1) + (1,) * (x.ndim - 2))


class NativeGroupNorm(Op):
    """y = (x - mean_g) / sqrt(var_g + eps) * w + b;  dx = rstd (gh - mean(gh) - xh mean(gh xh)), gh = g w"""
    _grad_fn_name = "NativeGroupNormBackward0"

    @staticmethod
    def forward(ctx, x, w, b, groups, eps):
        ctx.groups, ctx.eps = groups, eps
        xg = _groups(x, groups)
        mean = xg.mean(-1, keepdims=True)
        rstd = 1 / np.sqrt(((xg - mean) ** 2).mean(-1, keepdims=True) + eps)
        out = ((xg - mean) * rstd).reshape(x.shape)
        if w is not None:
            out = out * _per_channel(w, x)
        if b is not None:
            out = out + _per_channel(b, x)
        ctx.save_for_backward(x, w)
        return np.asarray(out, x.dtype)

    @staticmethod
    def _normalized(ctx, x):
        xg = _groups(x, ctx.groups)
        centered = xg - xg.mean(-1, keepdim=True)
        rstd = ((centered * centered).mean(-1, keepdim=True) + ctx.eps).rsqrt()
        return centered * rstd, rstd

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        xh, rstd = NativeGroupNorm._normalized(ctx, x)
        dims = (0,) + tuple(range(2, x.ndim))
        gx = gw = gb = None
        if ctx.needs_input_grad[0]:
            gh = _groups(grad if w is None else grad * _per_channel(w, x), ctx.groups)
            gx = (rstd * (gh - gh.mean(-1, keepdim=True) - xh * (gh * xh).mean(-1, keepdim=True))).reshape(x.shape)
        if ctx.needs_input_grad[1]:
            gw = (grad * xh.reshape(x.shape)).sum(dims)
        if ctx.needs_input_grad[2]:
            gb = grad.sum(dims)
        return gx, gw, gb, None, None

    @staticmethod
    def jvp(ctx, tx, tw, tb, _g, _eps):
        x, w = ctx.inputs[0], ctx.inputs[1]
        xh, rstd = NativeGroupNorm._normalized(ctx, x)
        out = None
        if tx is not None:
            tg = _groups(tx, ctx.groups)
            dxh = rstd * (tg - tg.mean(-1, keepdim=True) - xh * (tg * xh).mean(-1, keepdim=True))
            out = dxh.reshape(x.shape) if w is None else dxh.reshape(x.shape) * _per_channel(w, x)
        if tw is not None:
            term = xh.reshape(x.shape) * _per_channel(tw, x)
            out = term if out is None else out + term
        if tb is not None:
            out = _per_channel(tb, x) + (0 if out is None else out)
        return out


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalise each of num_groups groups of channels of every example by its own mean and variance."""
    if input.ndim < 2:
        raise RuntimeError(f"group_norm: Expected at least 2 dimensions for input tensor but received {input.ndim}")
    need_floating(input, "group_norm")
    c = input.shape[1]
    if num_groups <= 0 or c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={num_groups}")
    for name, v in (("weight", weight), ("bias", bias)):
        if v is not None and (v.ndim != 1 or v.shape[0] != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {list(v.shape)} and input of shape {list(input.shape)}")
    return NativeGroupNorm.apply(input, weight, bias, num_groups, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """x / sqrt(mean(x^2) + eps) * weight over the last len(normalized_shape) dims (eps: the dtype's epsilon)."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if tuple(input.shape[input.ndim - len(shape):]) != shape or len(shape) > input.ndim:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape [*, "
                           f"{', '.join(map(str, shape))}], but got input of size{list(input.shape)}")
    if weight is not None and tuple(weight.shape) != shape:
        raise RuntimeError(f"rms_norm: Expected weight to be of same shape as normalized_shape, but got weight of "
                           f"shape {list(weight.shape)} and normalized_shape = {list(shape)}")
    need_floating(input, "rms_norm")
    if eps is None:
        eps = float(np.finfo(input._data.dtype).eps)
    dims = tuple(range(-len(shape), 0)) if shape else ()
    out = input * ((input * input).mean(dims, keepdim=True) + eps).rsqrt() if dims else \
        input * (input * input + eps).rsqrt()
    return out if weight is None else out * weight


def _channel_window_sum(sq, size):
    """sum of sq over channels c - size//2 .. c + (size-1)//2 (zeros outside), for (N, C, *)"""
    from .pad import pad
    c = sq.shape[1]
    flat = sq.reshape(sq.shape[0], c, -1)
    padded = pad(flat, (0, 0, size // 2, (size - 1) // 2))
    total = padded[:, 0:c]
    for j in range(1, size):
        total = total + padded[:, j:j + c]
    return total.reshape(sq.shape)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """x / (k + alpha * mean of x^2 over `size` neighbouring channels) ** beta"""
    if input.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.ndim} dimensions)")
    if input.numel() == 0:
        return input
    if size < 1:
        raise RuntimeError(f"local_response_norm: size must be at least 1, got {size}")
    div = _channel_window_sum(input * input, size) * (1.0 / size)
    return input / (div * alpha + k) ** beta

