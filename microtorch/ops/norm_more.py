"""More normalisations: group_norm (one op), and rms_norm composed of existing ops the way torch composes it (so
that the grad_fn names agree). instance_norm, built on batch_norm, and local_response_norm, built on the pools, are
in nn/_functional_norm.py."""
import math

import numpy as np

from .._fma import fma
from .._tensor import Tensor
from . import _moments_kernel as moments_kernel
from ._checks import need_floating
from ._memory_formats import channels_last_of
from ._op import Op
from .scalar_overloads import add_scalar


def _groups(x, g):
    """(N, C, *) -> (N, G, C/G * prod(*)): the elements each group's statistics run over."""
    return x.reshape(x.shape[0], g, int(np.prod(x.shape[1:])) // g)


def _per_channel(v, x):
    """a (C,) weight shaped to broadcast against (N, C, *)"""
    return v.reshape((1, -1) + (1,) * (x.ndim - 2))


class NativeGroupNorm(Op):
    """y = (x - mean_g) / sqrt(var_g + eps) * w + b;  dx = rstd (gh - mean(gh) - xh mean(gh xh)), gh = g w.
    As torch's node it keeps each group's mean and rstd, (N, groups), which backward recomputes from x (so that a
    double backward differentiates them)."""
    _grad_fn_name = "NativeGroupNormBackward0"
    _edges = (0, 1, 2)  # (as torch's: the weight's and bias's edges are there, None when they are)
    _saved_names = ("input", "weight", "result1", "result2")
    _saved_values = {"N": "N", "C": "C", "HxW": "HxW", "group": "groups", "eps": "shown_eps"}

    @staticmethod
    def forward(ctx, x, w, b, groups, eps):
        ctx.groups, ctx.eps, ctx.shown_eps = groups, eps, float(eps)
        ctx.N, ctx.C, ctx.HxW = x.shape[0], x.shape[1], math.prod(x.shape[2:])
        if type(x) is np.ndarray and moments_kernel.applies(x) and (x.ndim < 4 or x.flags.c_contiguous):
            out, mean, rstd = _group_norm_like_torch(x, w, b, groups, eps)
        else:
            out, mean, rstd = _group_norm_formula(x, w, b, groups, eps)  # (vmap's batches, float16)
        stats = (np.asarray(s, x.dtype).reshape(x.shape[0], groups) for s in (mean, rstd))
        ctx.save_for_backward(x, w, *stats)
        return channels_last_of(out, x)

    @staticmethod
    def _normalized(ctx, x):
        xg = _groups(x, ctx.groups)
        centered = xg - xg.mean(-1, keepdim=True)
        rstd = ((centered * centered).mean(-1, keepdim=True) + ctx.eps).rsqrt()
        return centered * rstd, rstd

    @staticmethod
    def backward(ctx, grad):
        x, w, _mean, _rstd = ctx.saved_tensors
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


def _group_norm_formula(x, w, b, groups, eps):
    """(the normalized x, each group's mean, rstd) by the formula"""
    xg = _groups(x, groups)
    mean = xg.mean(-1, keepdims=True)
    rstd = 1 / np.sqrt(((xg - mean) ** 2).mean(-1, keepdims=True) + eps)
    out = ((xg - mean) * rstd).reshape(x.shape)
    if w is not None:
        out = out * _per_channel(w, x)
    if b is not None:
        out = out + _per_channel(b, x)
    return np.asarray(out, x.dtype), mean, rstd


def _group_norm_like_torch(x, w, b, groups, eps):
    """(the normalized x, each group's mean, rstd) as torch's CPU kernel computes them, to the bit (float32,
    float64): each group's moments as layer_norm's (_moments_kernel.py), rstd = 1 / sqrt(max(var, 0) + eps) in
    double; without weight and bias (x - mean) * rstd, else per channel x * scale + (bias - scale * mean),
    scale = rstd * weight, both multiply-adds fused."""
    n, c = x.shape[:2]
    d = c // groups
    xg = np.ascontiguousarray(x).reshape(n, groups, d, -1)
    mean, var = moments_kernel.rowwise_moments(xg.reshape(n * groups, -1))
    rstd = (1 / np.sqrt(np.maximum(var, 0).astype(np.float64) + eps)).astype(x.dtype).reshape(n, groups, 1, 1)
    mean = mean.reshape(n, groups, 1, 1)
    if w is None and b is None:
        return ((xg - mean) * rstd).reshape(x.shape), mean, rstd
    gamma = (w if w is not None else np.ones(c, x.dtype)).reshape(1, groups, d, 1)
    beta = (b if b is not None else np.zeros(c, x.dtype)).reshape(1, groups, d, 1)
    scale = rstd * gamma
    bias = fma(-scale, mean, beta).astype(x.dtype, copy=False)
    return fma(xg, scale, bias).astype(x.dtype, copy=False).reshape(x.shape), mean, rstd


def _group_sizes(input, num_groups):
    """torch's Python wrapper: [N*C // G, G, *spatial], and its rule of more than one value per group"""
    if isinstance(num_groups, Tensor):
        if num_groups.dtype.is_complex:
            raise NotImplementedError('group_norm: "div_floor_cpu" not implemented for complex num_groups')
        if num_groups.numel() != 1:
            how = "no values" if num_groups.numel() == 0 else "more than one value"
            raise RuntimeError(f"group_norm: Boolean value of Tensor with {how} is ambiguous (num_groups must be an int)")
        return
    if not isinstance(num_groups, (int, float, np.number)):
        raise TypeError(f"group_norm(): unsupported operand type(s) for //: 'int' and '{type(num_groups).__name__}' "
                        "(num_groups must be an int)")
    n, c = input.shape[:2]
    if num_groups == 0:
        raise ZeroDivisionError("group_norm(): integer division or modulo by zero (num_groups must be positive)")
    per_group = [n * c // num_groups, num_groups] + list(input.shape[2:])
    if np.prod([per_group[0]] + per_group[2:]) == 1:
        raise ValueError(f"group_norm: Expected more than 1 value per channel when training, got input size "
                         f"{per_group}")


def _check_group_norm(input, num_groups, weight, bias):
    """torch's checks in its order: the Python wrapper's, the argument parser's types, then the kernel's"""
    if input.ndim < 2:
        raise RuntimeError(f"group_norm: Expected at least 2 dimensions for input tensor but received {input.ndim}")
    _group_sizes(input, num_groups)
    if not isinstance(num_groups, (int, np.integer)) or isinstance(num_groups, bool):
        raise TypeError(f"group_norm(): argument 'num_groups' (position 2) must be int, not "
                        f"{type(num_groups).__name__}")
    for pos, name, v in ((3, "weight", weight), (4, "bias", bias)):
        if v is not None and not isinstance(v, Tensor):
            raise TypeError(f"group_norm(): argument '{name}' (position {pos}) must be Tensor, not {type(v).__name__}")
    c = input.shape[1]
    if num_groups < 0 or c % num_groups:
        raise RuntimeError(f"group_norm: Expected number of channels in input to be divisible by num_groups, but got "
                           f"input of shape {list(input.shape)} and num_groups={num_groups}")
    for name, v in (("weight", weight), ("bias", bias)):
        if v is not None and (v.ndim != 1 or v.shape[0] != c):
            raise RuntimeError(f"group_norm: Expected {name} to be a vector of size equal to the number of channels "
                               f"in input, but got {name} of shape {list(v.shape)} and input of shape "
                               f"{list(input.shape)}")


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalise each of num_groups groups of channels of every example by its own mean and variance."""
    _check_group_norm(input, num_groups, weight, bias)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"GroupNormKernelImpl" not implemented for {input.dtype}: group_norm needs a '
                                  "real floating point input; convert it with .float()")
    return NativeGroupNorm.apply(input, weight, bias, int(num_groups), eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """x / sqrt(mean(x^2) + eps) * weight over the last len(normalized_shape) dims (eps: the dtype's epsilon)."""
    shape = tuple(normalized_shape)
    if not shape:
        raise RuntimeError(f"rms_norm: Expected normalized_shape to be at least 1-dimensional, i.e., containing at "
                           f"least one element, but got normalized_shape = {list(shape)}")
    if len(shape) > input.ndim:
        raise ValueError(f"rms_norm: Input tensor must have at least {len(shape)} dimensions, but got {input.ndim}")
    if tuple(input.shape[input.ndim - len(shape):]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape [*, "
                           f"{', '.join(map(str, shape))}], but got input of size{list(input.shape)}")
    if weight is not None and tuple(weight.shape) != shape:
        raise RuntimeError(f"rms_norm: Expected weight to be of same shape as normalized_shape, but got weight of "
                           f"shape {list(weight.shape)} and normalized_shape = {list(shape)}")
    need_floating(input, "rms_norm")
    half = input._data.dtype == np.float16  # (torch computes a float16 input in float32, its eps too: one rounding)
    x = input.float() if half else input
    if eps is None:
        eps = float(np.finfo(x._data.dtype).eps)
    dims = tuple(range(-len(shape), 0))
    out = x * add_scalar(x.pow(2).mean(dims, keepdim=True), eps).rsqrt()  # (torch's steps: pow, mean, add_, rsqrt)
    out = out if weight is None else out * weight
    return out.to(input.dtype) if half else out


def _cross_map_window(channels, size):
    """(C, C) 0/1 matrix: which channels' squares enter channel c's scale in torch's CrossMapLRN2d (its running
    window keeps channel 0 once c passes pre_pad; reproduced as it is)"""
    pre_pad = int((size - 1) / 2 + 1)
    a = np.zeros((channels, channels))
    a[0, :min(pre_pad, channels)] = 1
    for c in range(1, channels):
        a[c] = a[c - 1]
        if c < channels - pre_pad + 1:
            a[c, c + pre_pad - 1] += 1
        if c > pre_pad:
            a[c, c - pre_pad] -= 1
    return a


class CrossMapLRN2d(Op):
    """y = x s^-beta, s = k + alpha/size * A x^2 (A sums neighbouring channels): dx = g s^-beta - 2 alpha beta / size
    x A^T(g x s^(-beta-1))"""
    _grad_fn_name = "CrossMapLRN2dBackward"

    @staticmethod
    def forward(ctx, x, size, alpha, beta, k):
        ctx.window = _cross_map_window(x.shape[1], size).astype(x.dtype)
        ctx.args = (size, alpha, beta, k)
        out = x * CrossMapLRN2d._scale(ctx, x) ** -beta
        ctx.save_for_backward(x, out)  # (torch's Function saves its output too; backward recomputes the scale)
        return out

    @staticmethod
    def _scale(ctx, x):
        size, alpha, _, k = ctx.args
        window = ctx.window if isinstance(x, np.ndarray) else Tensor._make(ctx.window)
        sq = x * x
        mixed = np.einsum("cj,nj...->nc...", window, sq) if isinstance(x, np.ndarray) else \
            (window @ sq.movedim(1, -1).unsqueeze(-1)).squeeze(-1).movedim(-1, 1)
        return mixed * (alpha / size) + k

    @staticmethod
    def _vjp(ctx, x, g):
        size, alpha, beta, _ = ctx.args
        s = CrossMapLRN2d._scale(ctx, x)
        inner = (g * x * s ** (-beta - 1)).movedim(1, -1).unsqueeze(-1)
        back = (Tensor._make(ctx.window.T.copy()) @ inner).squeeze(-1).movedim(-1, 1)
        return g * s ** -beta - back * x * (2 * alpha * beta / size)

    @staticmethod
    def backward(ctx, grad):
        x, _out = ctx.saved_tensors
        return CrossMapLRN2d._vjp(ctx, x, grad), None, None, None, None

    @staticmethod
    def jvp(ctx, t, *_):
        size, alpha, beta, _k = ctx.args
        x = ctx.inputs[0]
        s = CrossMapLRN2d._scale(ctx, x)
        ds = (Tensor._make(ctx.window) @ (2 * x * t).movedim(1, -1).unsqueeze(-1)).squeeze(-1).movedim(-1, 1)
        return t * s ** -beta - x * beta * s ** (-beta - 1) * ds * (alpha / size)


def cross_map_lrn2d(input, size, alpha=1e-4, beta=0.75, k=1):
    """torch's legacy CrossMapLRN2d (a 4-d input; the module is its only entry point)"""
    if input.ndim != 4:
        raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.ndim}D instead.")
    return CrossMapLRN2d.apply(input, size, alpha, beta, k)
