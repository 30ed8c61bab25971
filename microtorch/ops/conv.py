"""Convolution, pooling and embedding.

All of them rest on one pair of linear maps: `Im2col` copies every sliding window of an
image into a column (so that a convolution becomes one matrix product), and `Col2im` adds
columns back into an image. Each is the other's adjoint, so each one's backward is the other:
that is what keeps convolution and pooling differentiable any number of times.
"""
import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .._tensor import Tensor
from ._memory_formats import channels_last_of
from ._op import Op, shown_dim
from .elementwise import where


def _out_size(size, k, s, pad_lo, pad_hi, d):
    return (size + pad_lo + pad_hi - d * (k - 1) - 1) // s + 1


def _im2col(x, kernel, dilation, pads, stride, pad_value=0.0):
    """(N, C, H, W) -> (N, C*kh*kw, OH*OW); pads = ((top, bottom), (left, right))."""
    n, c = x.shape[:2]
    (kh, kw), (dh, dw), (sh, sw) = kernel, dilation, stride
    if any(p for pair in pads for p in pair):
        x = np.pad(x, ((0, 0), (0, 0)) + tuple(pads), constant_values=pad_value)
    win = sliding_window_view(x, (dh * (kh - 1) + 1, dw * (kw - 1) + 1), axis=(2, 3))
    win = win[:, :, ::sh, ::sw, ::dh, ::dw]                      # (N, C, OH, OW, kh, kw)
    oh, ow = win.shape[2:4]
    return win.transpose(0, 1, 4, 5, 2, 3).reshape(n, c * kh * kw, oh * ow)


def _show_window(ctx, kernel, dilation, pads, stride):
    """the window arguments torch's unfold and fold nodes show (padding: each dim's near side)"""
    ctx.kernel_size, ctx.dilation, ctx.stride = kernel, dilation, stride
    ctx.padding = tuple(lo for lo, _ in pads)


_WINDOW = {"kernel_size": "kernel_size", "dilation": "dilation", "padding": "padding", "stride": "stride"}


def _col2im(cols, size, kernel, dilation, pads, stride):
    """The adjoint of _im2col: add every column back into its window of an (N, C, H, W) image."""
    (kh, kw), (dh, dw), (sh, sw) = kernel, dilation, stride
    (pt, pb), (pl, pr) = pads
    h, w = size[0] + pt + pb, size[1] + pl + pr
    oh = _out_size(size[0], kh, sh, pt, pb, dh)
    ow = _out_size(size[1], kw, sw, pl, pr, dw)
    n = cols.shape[0]
    c = cols.shape[1] // (kh * kw)
    cols = cols.reshape(n, c, kh, kw, oh, ow)
    out = np.zeros((n, c, h, w), dtype=cols.dtype)
    for i in range(kh):
        for j in range(kw):
            out[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh, j * dw:j * dw + sw * (ow - 1) + 1:sw] += cols[:, :, i, j]
    return np.ascontiguousarray(out[:, :, pt:h - pb, pl:w - pr])  # (a fresh image, as torch's: not a view of the pad)


class Im2col(Op):
    """unfold: every kernel window becomes a column; its adjoint (and gradient) is fold"""
    _grad_fn_name = "Im2ColBackward0"
    _saved_values = {**_WINDOW, "self_sym_argsize_minus_1": "width", "self_sym_argsize_minus_2": "height"}

    @staticmethod
    def forward(ctx, x, kernel, dilation, pads, stride):
        ctx.args = (x.shape[-2:], kernel, dilation, pads, stride)
        ctx.height, ctx.width = x.shape[-2:]
        _show_window(ctx, kernel, dilation, pads, stride)
        if x.ndim == 3:  # unbatched (C, H, W): one node all the same, as torch's
            return _im2col(x[None], kernel, dilation, pads, stride)[0]
        return _im2col(x, kernel, dilation, pads, stride)

    @staticmethod
    def backward(ctx, grad):
        return Col2im.apply(grad, *ctx.args), None, None, None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return Im2col.apply(t, *ctx.inputs[1:])


class Col2im(Op):
    """fold: columns are added back into their windows; its adjoint (and gradient) is unfold"""
    _grad_fn_name = "Col2ImBackward0"
    _saved_values = _WINDOW

    @staticmethod
    def forward(ctx, cols, size, kernel, dilation, pads, stride):
        ctx.args = (kernel, dilation, pads, stride)
        _show_window(ctx, kernel, dilation, pads, stride)
        if cols.ndim == 2:  # unbatched (C*kh*kw, L)
            return _col2im(cols[None], size, kernel, dilation, pads, stride)[0]
        return _col2im(cols, size, kernel, dilation, pads, stride)

    @staticmethod
    def backward(ctx, grad):
        return Im2col.apply(grad, *ctx.args), None, None, None, None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return Col2im.apply(t, *ctx.inputs[1:])


CONVOLUTION_VALUES = {"bias_sym_sizes_opt": "bias_sizes", "dilation": "dilation", "groups": "groups",
                      "output_padding": "output_padding", "padding": "padding", "stride": "stride",
                      "transposed": "transposed"}


def show_convolution(ctx, b, stride, pads, dilation, groups, transposed, shown=None):
    """the arguments torch's ConvolutionBackward0 shows: each spatial dim's padding (its near side: padding='same'
    pads no less on the far side), a transposed one's output_padding (what its far side takes off), a bias's sizes
    ((0,) without one); shown: (padding, output_padding) where torch shows them otherwise (padding='valid': (0,))"""
    ctx.stride, ctx.dilation, ctx.groups, ctx.transposed = stride, dilation, groups, transposed
    ctx.padding, ctx.output_padding = shown or (tuple(lo for lo, _ in pads),
                                                tuple(lo - hi if transposed else 0 for lo, hi in pads))
    ctx.bias_sizes = (0,) if b is None else b.shape


class Convolution(Op):
    """d conv(x, w, b) = (fold(W^T g), g unfold(x)^T, sum(g)): conv is W @ unfold(x) + b"""
    _grad_fn_name = "ConvolutionBackward0"
    _edges = (0, 1, 2)  # (input, weight, bias: a bias left out is torch's undefined tensor)
    _saved_names, _saved_values = ("input", "weight"), CONVOLUTION_VALUES

    @staticmethod
    def forward(ctx, x, w, b, stride, pads, dilation, groups, shown=None):
        ctx.save_for_backward(x, w)
        one_d = x.ndim == 3                              # conv1d runs as a conv2d of height 1
        show_convolution(ctx, b, stride[one_d:], pads[one_d:], dilation[one_d:], groups, False, shown)  # (not the
        # height; shown: see show_convolution)
        if one_d:
            x, w = x[:, :, None], w[:, :, None]
        n, o, k = x.shape[0], w.shape[0], w.shape[2:]
        cols = _im2col(x, k, dilation, pads, stride)     # (N, C*kh*kw, L)
        cols = cols.reshape(n, groups, cols.shape[1] // groups, cols.shape[2])  # (sizes given: no -1 if empty)
        out = np.matmul(w.reshape(groups, o // groups, -1), cols)
        oh = _out_size(x.shape[2], k[0], stride[0], *pads[0], dilation[0])
        out = out.reshape(n, o, oh, cols.shape[-1] // oh)
        if b is not None:
            out += b.reshape(1, -1, 1, 1)
        ctx.args = (one_d, x.shape, k, stride, pads, dilation, groups)
        return out[:, :, 0] if one_d else channels_last_of(out, x, w)

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        one_d, shape, k, stride, pads, dilation, groups = ctx.args
        if one_d:
            x, w, grad = x.unsqueeze(2), w.unsqueeze(2), grad.unsqueeze(2)
        n, o = grad.shape[:2]
        g = grad.reshape(n, groups, o // groups, math.prod(grad.shape[2:]))  # (N, G, O/G, L)
        wg = w.reshape(groups, o // groups, -1)                            # (G, O/G, C/G*kh*kw)
        gx = gw = gb = None
        if ctx.needs_input_grad[0]:
            cols = (wg.transpose(1, 2) @ g).reshape(n, groups * wg.shape[2], g.shape[-1])
            gx = Col2im.apply(cols, shape[2:], k, dilation, pads, stride)
            gx = gx.squeeze(2) if one_d else gx
        if ctx.needs_input_grad[1]:
            cols = Im2col.apply(x, k, dilation, pads, stride)
            cols = cols.reshape(n, groups, cols.shape[1] // groups, cols.shape[-1])
            gw = (g @ cols.transpose(2, 3)).sum(0).reshape(w.shape)
            gw = gw.squeeze(2) if one_d else gw
        if ctx.needs_input_grad[2]:
            gb = grad.sum((0, 2, 3))
        return gx, gw, gb, None, None, None, None

    @staticmethod
    def jvp(ctx, tx, tw, tb, *_):
        x, w, _, *rest = ctx.inputs  # bilinear in (x, w), plus b
        return Convolution.apply(tx, w, None, *rest) + Convolution.apply(x, tw, tb, *rest)


def _plane_indices(arg, inside, size, kernel, stride, pads, dilation):
    """The flat index (row * W + col) in its input plane of each window's pick (arg, its position in the
    window), as torch returns it; a window wholly in the padding gets torch's starting guess, which lies
    past the plane."""
    from .pool_more import first_in_input
    (h, w), oh = size, _out_size(size[0], kernel[0], stride[0], *pads[0], dilation[0])
    ow = arg.shape[-1] // oh
    ki, kj = np.divmod(arg, kernel[1])
    r0, q0 = (np.arange(o) * stride[i] - pads[i][0] for i, o in enumerate((oh, ow)))
    r = r0.repeat(ow)[None] + ki * dilation[0]
    q = np.tile(q0, oh)[None] + kj * dilation[1]
    if inside.all():
        return (r * w + q).astype(np.int64)
    guess = first_in_input(r0, dilation[0]).repeat(ow) * w + np.tile(first_in_input(q0, dilation[1]), oh)
    return np.where(inside, r * w + q, guess[None]).astype(np.int64)


MAX_POOL_VALUES = {"kernel_size": "kernel_size", "stride": "stride", "padding": "padding", "dilation": "dilation",
                   "ceil_mode": "ceil_mode"}
AVG_POOL_VALUES = {"kernel_size": "kernel_size", "stride": "stride", "padding": "padding", "ceil_mode": "ceil_mode",
                   "count_include_pad": "count_include_pad", "divisor_override": "divisor_override"}


def show_max_pool(ctx, shown, kernel, stride, pads, dilation):
    """what torch's max pool nodes show: the arguments as the user gave them, `shown` (kernel_size, stride, padding,
    dilation, ceil_mode; stride () when left out), else as the op takes them (ceil_mode False: the op is given its
    padding, which ceil_mode may have grown, not the flag)"""
    ctx.kernel_size, ctx.stride, ctx.padding, ctx.dilation, ctx.ceil_mode = \
        shown or (kernel, stride, tuple(lo for lo, _ in pads), dilation, False)


def show_avg_pool(ctx, shown, kernel, stride, pads):
    """what torch's average pool nodes show: `shown` (kernel_size, stride, padding, ceil_mode, count_include_pad,
    divisor_override, as the user gave them), else the arguments as the op takes them and torch's defaults"""
    ctx.kernel_size, ctx.stride, ctx.padding, ctx.ceil_mode, ctx.count_include_pad, ctx.divisor_override = \
        shown or (kernel, stride, tuple(lo for lo, _ in pads), False, True, None)


class MaxPool2d(Op):
    """d max(window) = 1 at the window's (first) argmax, 0 elsewhere, folded back. x: (N, C, H, W) or, unbatched as
    torch's node takes it, (C, H, W)"""
    _grad_fn_name = "MaxPool2DWithIndicesBackward0"
    _saved_names = ("self", "result1")  # (torch's: the input and the indices, freed by backward)
    _saved_values = MAX_POOL_VALUES

    @staticmethod
    def forward(ctx, x, kernel, stride, pads, dilation, shown=None):
        from .pool_more import torch_window_pick
        show_max_pool(ctx, shown, kernel, stride, pads, dilation)
        lead, (h, w) = x.shape[:-2], x.shape[-2:]
        cols = _im2col(x.reshape(math.prod(lead), 1, h, w), kernel, dilation, pads, stride, -np.inf)  # (NC, k, L)
        valid = _im2col(np.ones((1, 1, h, w), bool), kernel, dilation, pads, stride, False)
        arg, out, inside = torch_window_pick(cols, valid, axis=1)  # (NC, L)
        inside = np.broadcast_to(inside, arg.shape)
        oh = _out_size(h, kernel[0], stride[0], *pads[0], dilation[0])
        ow = cols.shape[-1] // oh
        mask = np.zeros(cols.shape, dtype=x.dtype)  # nothing for a window wholly in the padding
        np.put_along_axis(mask, arg[:, None], inside[:, None].astype(x.dtype), axis=1)
        ctx.mask, ctx.args = mask, (kernel, dilation, pads, stride)
        indices = _plane_indices(arg, inside, (h, w), kernel, stride, pads, dilation).reshape(lead + (oh, ow))
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(x, indices)
        return channels_last_of(out.reshape(lead + (oh, ow)), x), channels_last_of(indices, x)

    @staticmethod
    def backward(ctx, grad, _):
        x, _indices = ctx.saved_tensors  # (the mask, which ctx keeps, says the same as the indices)
        kernel, dilation, pads, stride = ctx.args
        g = grad.reshape(ctx.mask.shape[0], 1, ctx.mask.shape[-1])
        g = where(Tensor._make(ctx.mask != 0), g, 0.0)  # (exact zeros off the argmax: a NaN gradient stays there)
        return (Col2im.apply(g, x.shape[-2:], kernel, dilation, pads, stride).reshape(x.shape),) + (None,) * 5

    @staticmethod
    def jvp(ctx, t, *_):
        kernel, dilation, pads, stride = ctx.args
        cols = Im2col.apply(t.reshape((ctx.mask.shape[0], 1) + tuple(t.shape[-2:])), kernel, dilation, pads, stride)
        return (cols * Tensor._make(ctx.mask)).sum(1).reshape(ctx.output[0].shape), None


class AvgPool2d(Op):
    """d mean(window) = 1/divisor on every element of the window, folded back. x: (N, C, H, W) or (C, H, W)"""
    _grad_fn_name = "AvgPool2DBackward0"
    _saved_names = ("self",)  # (torch's node keeps the input, for its shape)
    _saved_values = AVG_POOL_VALUES

    @staticmethod
    def forward(ctx, x, kernel, stride, pads, divisor, shown=None):
        show_avg_pool(ctx, shown, kernel, stride, pads)
        lead, (h, w) = x.shape[:-2], x.shape[-2:]
        cols = _im2col(x.reshape(math.prod(lead), 1, h, w), kernel, (1, 1), pads, stride)  # (NC, k, L)
        out = cols.sum(axis=1) / divisor
        oh, ow = (_out_size(size, kernel[i], stride[i], *pads[i], 1) for i, size in enumerate((h, w)))
        ctx.scale = np.broadcast_to(1 / divisor, (1,) + cols.shape[1:]).astype(x.dtype)
        ctx.args = (kernel, pads, stride)
        ctx.save_for_backward(x)
        out = out.reshape(lead + (oh, ow)).astype(x.dtype, copy=False)  # (sizes given: an empty batch has no -1)
        return channels_last_of(out, x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        kernel, pads, stride = ctx.args
        g = grad.reshape(math.prod(x.shape[:-2]), 1, ctx.scale.shape[-1]) * Tensor._make(ctx.scale)
        return (Col2im.apply(g, x.shape[-2:], kernel, (1, 1), pads, stride).reshape(x.shape),) + (None,) * 5

    @staticmethod
    def jvp(ctx, t, *_):
        return AvgPool2d.apply(t, *ctx.inputs[1:])


def shown_padding_idx(padding_idx):
    """padding_idx as torch's embedding nodes show it: -1 (as an unsigned 64-bit int) for none"""
    return shown_dim(-1 if padding_idx is None else padding_idx)


class Embedding(Op):
    """d weight[idx] = the gradient rows added into the rows idx (none into padding_idx; each divided by how
    often its index occurs with scale_grad_by_freq)"""
    _grad_fn_name = "EmbeddingBackward0"
    _saved_names = ("indices",)
    _saved_values = {"padding_idx": "shown_padding_idx", "scale_grad_by_freq": "scale", "sparse": "sparse",
                     "weight_sym_argsize_0": "n_rows"}

    @staticmethod
    def forward(ctx, weight, idx, padding_idx, scale_grad_by_freq=False):
        ctx.shape, ctx.padding_idx, ctx.scale = weight.shape, padding_idx, scale_grad_by_freq
        ctx.shown_padding_idx, ctx.n_rows, ctx.sparse = shown_padding_idx(padding_idx), weight.shape[0], False
        ctx.save_for_backward(idx)
        return weight[idx]

    @staticmethod
    def backward(ctx, grad):
        (idx,) = ctx.saved_tensors
        return EmbeddingDenseBackward.apply(grad, ctx.shape, idx._data, ctx.padding_idx, ctx.scale), None, None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return Embedding.apply(t, *ctx.inputs[1:])


class EmbeddingDenseBackward(Op):
    """dW = zeros with the gradient rows g[k] added into rows idx[k] (times 1 / count(idx[k]) with
    scale_grad_by_freq, none into padding_idx); its own gradient is gg[idx], unscaled as torch's"""
    _grad_fn_name = "EmbeddingDenseBackwardBackward0"
    _saved_names = ("indices",)
    _saved_values = {"padding_idx": "shown_padding_idx"}

    @staticmethod
    def forward(ctx, g, shape, idx, padding_idx, scale_grad_by_freq):
        ctx.padding_idx, ctx.shown_padding_idx = padding_idx, shown_padding_idx(padding_idx)
        ctx.save_for_backward(idx)
        flat, rows = idx.reshape(-1), g.reshape(-1, shape[1])
        if scale_grad_by_freq:
            rows = rows / np.bincount(flat, minlength=shape[0])[flat][:, None].astype(g.dtype)
        if padding_idx is not None:  # (none at all: a NaN gradient there adds nothing, as torch skips the row)
            rows = np.where((flat != padding_idx)[:, None], rows, 0)
        out = np.zeros(shape, dtype=g.dtype)
        np.add.at(out, flat, rows)
        return out

    @staticmethod
    def backward(ctx, grad):
        from .index import index_select, masked_fill
        idx = ctx.saved_tensors[0]._data
        flat = idx.reshape(-1)
        rows = index_select(grad, 0, Tensor._make(flat))
        if ctx.padding_idx is not None:
            rows = masked_fill(rows, Tensor._make((flat == ctx.padding_idx)[:, None]), 0.0)
        return rows.view(idx.shape + (grad.shape[1],)), None, None, None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return EmbeddingDenseBackward.apply(t, *ctx.inputs[1:])
