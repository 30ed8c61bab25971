"""Pooling beyond ops/conv.py: 3-d max and average pooling, adaptive, fractional and unpooling.

Every max pool here finds, for each output element, the flat index of its maximum in the input
plane (torch returns the same indices); its gradient is then g added at those indices
(`PutFlatAdd`), whose adjoint is reading at them (`TakeFlat`). Average pooling and adaptive
average pooling are linear maps and their backward is their adjoint.
"""
import math

import numpy as np

from .._tensor import Tensor
from ._op import Op
from .elementwise import where
from .conv import AVG_POOL_VALUES, MAX_POOL_VALUES, show_avg_pool, show_max_pool
from .conv_more import Col2imNd, im2col_nd, out_size
from ._memory_formats import channels_last_of


def _planes(x, nd):
    """(*planes, *spatial) with nd spatial dims -> (prod(planes), prod(spatial))"""
    return x.reshape(math.prod(x.shape[:x.ndim - nd]), math.prod(x.shape[x.ndim - nd:]))


class TakeFlat(Op):
    """y[p, i] = x[p].flatten()[idx[p, i]] for every plane p; its adjoint (and gradient) is PutFlatAdd"""
    _grad_fn_name = "GatherBackward0"

    @staticmethod
    def forward(ctx, x, idx, nd):
        ctx.in_shape, ctx.idx, ctx.nd = x.shape, idx, nd
        return np.take_along_axis(_planes(x, nd), _planes(idx, nd), axis=1).reshape(idx.shape)

    @staticmethod
    def backward(ctx, grad):
        return PutFlatAdd.apply(grad, ctx.idx, ctx.in_shape, ctx.nd), None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return TakeFlat.apply(t, *ctx.inputs[1:])


class PutFlatAdd(Op):
    """zeros(shape)[p].flatten()[idx[p, i]] += g[p, i] for every plane p; its adjoint (and gradient) is TakeFlat"""
    _grad_fn_name = "ScatterAddBackward0"

    @staticmethod
    def forward(ctx, g, idx, shape, nd):
        ctx.idx, ctx.nd = idx, nd
        return put_flat_add(g, idx, shape, nd)

    @staticmethod
    def backward(ctx, grad):
        return TakeFlat.apply(grad, ctx.idx, ctx.nd), None, None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return PutFlatAdd.apply(t, *ctx.inputs[1:])


def put_flat_add(g, idx, shape, nd):
    planes, size = math.prod(shape[:len(shape) - nd]), math.prod(shape[len(shape) - nd:])
    flat = (_planes(idx, nd) + np.arange(planes)[:, None] * size).ravel()
    out = np.bincount(flat, weights=g.ravel().astype(np.float64), minlength=planes * size)
    return out.astype(g.dtype).reshape(shape)


class IndexedMaxPool(Op):
    """d max(window) = g at the window's argmax (flat index in the plane), 0 elsewhere (and nothing for a
    window lying wholly in the padding, whose -inf depends on no input)"""
    _grad_fn_name = None  # each pool names itself
    _saved_names = ("self", "result1")  # (torch's: the input and the indices it returns)

    @staticmethod
    def backward(ctx, grad, _):
        x, _indices = ctx.saved_tensors  # (ctx.idx: the indices, but a window's in the padding where it has one)
        g = grad if ctx.keep is None else where(ctx.keep, grad, 0.0)
        return (PutFlatAdd.apply(g, ctx.idx, x.shape, ctx.nd),) + (None,) * ctx.n_args

    @staticmethod
    def jvp(ctx, t, *_):
        picked = TakeFlat.apply(t, ctx.idx, ctx.nd)
        return (picked if ctx.keep is None else where(ctx.keep, picked, 0.0)), None


def torch_window_pick(vals, valid, axis=-1):
    """The element of each window (along axis) that torch's CPU max pools pick: the first maximum, but the
    last NaN if there is one (every NaN replaces the running max), and the window's first element in the
    input when nothing beats -inf (the starting guess). vals holds padding as -inf, valid marks what is not
    padding (it may broadcast). Returns (the position in the window, the max, whether the window reaches
    the input at all)."""
    arg = vals.argmax(axis=axis)  # numpy's argmax stops at the first NaN: the window's max is NaN iff it has one
    top = np.take_along_axis(vals, np.expand_dims(arg, axis), axis=axis).squeeze(axis)
    if np.isnan(top).any():
        last_nan = vals.shape[axis] - 1 - np.isnan(np.flip(vals, axis)).argmax(axis=axis)
        arg = np.where(np.isnan(top), last_nan, arg)
    stuck = top == -np.inf
    if stuck.any():
        arg = np.where(stuck, valid.argmax(axis=axis), arg)
    return arg, top, valid.any(axis=axis)


def first_in_input(start, dilation):
    """torch's starting guess in each dim: the window's first coordinate >= 0, stepping by the dilation
    (past the input's end for a window wholly in the padding, so its index is out of range, as torch's)"""
    return start + np.maximum(0, (dilation - 1 - start) // dilation) * dilation


def window_max(ctx, x, coords, n_args):
    """The max of x over windows given per spatial dim as coordinates (B, out_d, k_d), B = 1 or N*C;
    coordinates outside the input are padding (-inf); torch_window_pick chooses. Returns (values, flat
    indices). An unbatched (C, *spatial) input is a batch of one."""
    nd, given = len(coords), x
    x = x if x.ndim == nd + 2 else x[None]
    n, c, size = x.shape[0], x.shape[1], x.shape[2:]
    flat, valid, start = 0, True, 0
    strides = [math.prod(size[d + 1:]) for d in range(nd)]
    for d, co in enumerate(coords):
        first = np.take_along_axis(co, (co >= 0).argmax(-1)[..., None], -1)  # (B, out_d, 1)
        shape = [co.shape[0]] + [1] * (2 * nd)
        shape[1 + d], shape[1 + nd + d] = co.shape[1], co.shape[2]
        co = co.reshape(shape)
        valid = valid & (co >= 0) & (co < size[d])
        flat = flat + np.clip(co, 0, size[d] - 1) * strides[d]
        start = start + first.reshape(shape[:1 + nd]) * strides[d]
    outs = flat.shape[1:1 + nd]
    window = math.prod(flat.shape[1 + nd:])
    flat = np.broadcast_to(flat, (n * c,) + flat.shape[1:]).reshape(n * c, math.prod(outs), window)
    valid = np.broadcast_to(valid, (n * c,) + np.shape(valid)[1:]).reshape(flat.shape)
    per_plane = flat.reshape(n * c, math.prod(outs) * window)
    vals = np.take_along_axis(_planes(x, nd), per_plane, axis=1).reshape(flat.shape)
    vals = np.where(valid, vals, -np.inf).astype(x.dtype, copy=False)
    arg, out, inside = torch_window_pick(vals, valid)
    out = out.reshape((n, c) + outs)
    picked = np.take_along_axis(flat, arg[..., None], axis=2)[..., 0].reshape((n, c) + outs).astype(np.int64)
    inside = inside.reshape((n, c) + outs)
    idx = np.where(inside, picked, np.broadcast_to(start, (n * c,) + outs).reshape((n, c) + outs))
    ctx.keep = None if inside.all() else Tensor._make(inside[0] if given.ndim == nd + 1 else inside)
    if given.ndim == nd + 1:
        out, idx, picked = out[0], idx[0], picked[0]
    ctx.idx, ctx.n_args, ctx.nd = picked, n_args, nd
    ctx.mark_non_differentiable(idx)
    ctx.save_for_backward(given, idx)
    return out, idx


class MaxPool3d(IndexedMaxPool):
    _grad_fn_name = "MaxPool3DWithIndicesBackward0"
    _saved_values = MAX_POOL_VALUES

    @staticmethod
    def forward(ctx, x, kernel, stride, pads, dilation, shown=None):
        show_max_pool(ctx, shown, kernel, stride, pads, dilation)
        coords = [(np.arange(out_size(s, k, st, lo, hi, d)) * st - lo)[None, :, None] + np.arange(k)[None, None] * d
                  for s, k, st, (lo, hi), d in zip(x.shape[-3:], kernel, stride, pads, dilation)]
        return tuple(channels_last_of(a, x) for a in window_max(ctx, x, coords, 5))


def adaptive_bounds(size, out):
    """torch's adaptive windows: [floor(i*size/out), ceil((i+1)*size/out))"""
    i = np.arange(out)
    return (i * size) // out, -((-(i + 1) * size) // out)


class AdaptiveMaxPool(IndexedMaxPool):
    _grad_fn_name = None

    @staticmethod
    def forward(ctx, x, output_size):
        coords = []
        for size, out in zip(x.shape[x.ndim - len(output_size):], output_size):
            start, end = adaptive_bounds(size, out)
            k = int((end - start).max()) if out else 1
            co = np.minimum(start[:, None] + np.arange(k)[None], end[:, None] - 1)  # repeat the last element
            coords.append(co[None])
        return tuple(channels_last_of(a, x, ranks=(4,)) for a in window_max(ctx, x, coords, 1))  # (3-d: C order)


class AdaptiveMaxPool2d(AdaptiveMaxPool):
    _grad_fn_name = "AdaptiveMaxPool2DBackward0"


class AdaptiveMaxPool3d(AdaptiveMaxPool):
    _grad_fn_name = "AdaptiveMaxPool3DBackward0"


def fractional_starts(samples, size, k, out):
    """torch's pseudo-random window starts for one spatial dim; samples (B,) in [0, 1)."""
    if out == 1:
        return np.full(samples.shape + (1,), size - k, dtype=np.int64)
    alpha = (size - k) / (out - 1)
    i = np.arange(out - 1)
    seq = (np.floor((i[None] + samples[:, None]) * alpha) - np.floor(samples[:, None] * alpha)).astype(np.int64)
    return np.concatenate([seq, np.full(samples.shape + (1,), size - k, dtype=np.int64)], axis=1)


class FractionalMaxPool(IndexedMaxPool):
    _grad_fn_name = None
    _saved_values = {"kernel_size": "kernel_size", "output_size": "output_size"}

    @staticmethod
    def forward(ctx, x, kernel, output_size, samples):
        nd = len(kernel)
        ctx.kernel_size, ctx.output_size = kernel, output_size
        s = samples.reshape(-1, nd).astype(np.float64)
        # torch's samples are (x, y[, z]) per plane: the last spatial dim first
        coords = [fractional_starts(s[:, nd - 1 - d], size, k, out)[:, :, None] + np.arange(k)[None, None]
                  for d, (size, k, out) in enumerate(zip(x.shape[x.ndim - nd:], kernel, output_size))]
        return window_max(ctx, x, coords, 3)


class FractionalMaxPool2d(FractionalMaxPool):
    _grad_fn_name = "FractionalMaxPool2DBackward0"


class FractionalMaxPool3d(FractionalMaxPool):
    _grad_fn_name = "FractionalMaxPool3DBackward0"


class AvgPool3d(Op):
    """d mean(window) = g/divisor on every element of the window, folded back"""
    _grad_fn_name = "AvgPool3DBackward0"
    _saved_names = ("self",)  # (torch's node keeps the input, for its shape)
    _saved_values = AVG_POOL_VALUES

    @staticmethod
    def forward(ctx, x, kernel, stride, pads, divisor, shown=None):
        show_avg_pool(ctx, shown, kernel, stride, pads)
        lead, size = x.shape[:-3], x.shape[-3:]                                 # (N, C) or just (C,)
        cols = im2col_nd(x.reshape((-1, 1) + size), kernel, (1,) * len(kernel), pads, stride)  # (NC, K, L)
        outs = tuple(out_size(*a, 1) for a in zip(size, kernel, stride, *zip(*pads)))
        ctx.scale = np.broadcast_to(1 / divisor, (1, 1, cols.shape[2])).astype(x.dtype)
        ctx.args = (kernel, pads, stride)
        ctx.save_for_backward(x)
        return (cols.sum(axis=1) / divisor).astype(x.dtype, copy=False).reshape(lead + outs)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        shape, (kernel, pads, stride) = x.shape, ctx.args
        g = grad.reshape(math.prod(shape[:-3]), 1, ctx.scale.shape[2]) * Tensor._make(ctx.scale)
        g = g.expand(g.shape[0], math.prod(kernel), g.shape[2])
        out = Col2imNd.apply(g, tuple(shape[-3:]), kernel, (1,) * len(kernel), pads, stride)
        return out.reshape(shape), None, None, None, None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return AvgPool3d.apply(t, *ctx.inputs[1:])


class MaxUnpool(Op):
    """out = zeros(size); out.flatten()[idx] = x per plane; d/dx is reading g at idx"""
    _grad_fn_name = None
    _saved_names = ("indices",)

    @staticmethod
    def forward(ctx, x, idx, size):
        nd = len(size)
        ctx.idx, ctx.nd, ctx.in_shape = idx, nd, x.shape[:x.ndim - nd] + tuple(size)
        out = np.zeros((math.prod(x.shape[:x.ndim - nd]), math.prod(size)), dtype=x.dtype)
        np.put_along_axis(out, _planes(idx, nd), _planes(x, nd), axis=1)
        ctx.save_for_backward(idx)
        return out.reshape(ctx.in_shape)

    @staticmethod
    def backward(ctx, grad):
        (idx,) = ctx.saved_tensors
        return TakeFlat.apply(grad, idx._data, ctx.nd), None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return PutFlatAdd.apply(t, ctx.idx, ctx.in_shape, ctx.nd)  # (linear: the same put, on the tangent)


class MaxUnpool2d(MaxUnpool):
    _grad_fn_name = "MaxUnpool2DBackward0"


class MaxUnpool3d(MaxUnpool):
    _grad_fn_name = "MaxUnpool3DBackward0"
