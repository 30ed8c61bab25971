"""Convolution in any number of spatial dims, plain and transposed (conv3d, conv_transpose1d/2d/3d).

The same pair of adjoint linear maps as ops/conv.py, for n spatial dims: `Im2colNd` copies every
sliding window into a column, `Col2imNd` adds columns back into an image. A convolution is
W @ im2col(x); a transposed convolution is col2im(W^T @ x), the adjoint of the convolution with
the same weight (which is why its backward looks like the other's forward).
"""
import itertools
import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ._memory_formats import channels_last_of
from ._op import Op
from .conv import CONVOLUTION_VALUES, show_convolution

_ALL = slice(None)


def out_size(size, k, s, pad_lo, pad_hi, d):
    return (size + pad_lo + pad_hi - d * (k - 1) - 1) // s + 1


def in_size(out, k, s, pad_lo, pad_hi, d):
    """The image size whose windows give `out` columns exactly (the transposed convolution's output)."""
    return (out - 1) * s - pad_lo - pad_hi + d * (k - 1) + 1


def im2col_nd(x, kernel, dilation, pads, stride, pad_value=0.0):
    """(N, C, *size) -> (N, C*prod(kernel), prod(out)); pads = ((lo, hi), ...), a negative hi crops."""
    n, c, nd = x.shape[0], x.shape[1], len(kernel)
    crop = tuple(slice(0, s + hi if hi < 0 else None) for s, (_, hi) in zip(x.shape[2:], pads))
    x = x[(_ALL, _ALL) + crop]
    if any(lo or hi > 0 for lo, hi in pads):
        x = np.pad(x, ((0, 0), (0, 0)) + tuple((lo, max(hi, 0)) for lo, hi in pads), constant_values=pad_value)
    span = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
    win = sliding_window_view(x, span, axis=tuple(range(2, 2 + nd)))
    win = win[(_ALL, _ALL) + tuple(slice(None, None, s) for s in stride) + tuple(slice(None, None, d) for d in dilation)]
    outs = win.shape[2:2 + nd]
    perm = (0, 1) + tuple(range(2 + nd, 2 + 2 * nd)) + tuple(range(2, 2 + nd))
    return win.transpose(perm).reshape(n, c * math.prod(kernel), math.prod(outs))


def col2im_nd(cols, size, kernel, dilation, pads, stride):
    """The adjoint of im2col_nd: add every column back into its window of an (N, C, *size) image."""
    outs = tuple(out_size(*a) for a in zip(size, kernel, stride, *zip(*pads), dilation))
    n, c = cols.shape[0], cols.shape[1] // math.prod(kernel)
    cols = cols.reshape((n, c) + tuple(kernel) + outs)
    buf = tuple(s + lo + max(hi, 0) for s, (lo, hi) in zip(size, pads))
    out = np.zeros((n, c) + buf, dtype=cols.dtype)
    for offs in itertools.product(*(range(k) for k in kernel)):
        at = tuple(slice(o * d, o * d + s * (m - 1) + 1, s) for o, d, s, m in zip(offs, dilation, stride, outs))
        out[(_ALL, _ALL) + at] += cols[(_ALL, _ALL) + offs]
    return np.ascontiguousarray(out[(_ALL, _ALL) + tuple(slice(lo, lo + s) for s, (lo, _) in zip(size, pads))])


class Im2colNd(Op):
    """every kernel window becomes a column; its adjoint (and gradient) is Col2imNd"""
    _grad_fn_name = "Im2ColBackward0"

    @staticmethod
    def forward(ctx, x, kernel, dilation, pads, stride):
        ctx.args = (x.shape[2:], kernel, dilation, pads, stride)
        return im2col_nd(x, kernel, dilation, pads, stride)

    @staticmethod
    def backward(ctx, grad):
        return Col2imNd.apply(grad, *ctx.args), None, None, None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return Im2colNd.apply(t, *ctx.inputs[1:])


class Col2imNd(Op):
    """columns are added back into their windows; its adjoint (and gradient) is Im2colNd"""
    _grad_fn_name = "Col2ImBackward0"

    @staticmethod
    def forward(ctx, cols, size, kernel, dilation, pads, stride):
        ctx.args = (kernel, dilation, pads, stride)
        return col2im_nd(cols, size, kernel, dilation, pads, stride)

    @staticmethod
    def backward(ctx, grad):
        return Im2colNd.apply(grad, *ctx.args), None, None, None, None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return Col2imNd.apply(t, *ctx.inputs[1:])


def _conv_forward(x, w, groups, k, stride, pads, dilation):
    n, o = x.shape[0], w.shape[0]
    cols = im2col_nd(x, k, dilation, pads, stride)                          # (N, C*K, L)
    cols = cols.reshape(n, groups, cols.shape[1] // groups, cols.shape[2])  # (sizes given: an empty batch has no -1)
    out = np.matmul(w.reshape(groups, o // groups, -1), cols)
    outs = tuple(out_size(*a) for a in zip(x.shape[2:], k, stride, *zip(*pads), dilation))
    return out.reshape((n, o) + outs)


def _transposed_forward(x, w, groups, k, stride, pads, dilation):
    n, cin, cog = x.shape[0], w.shape[0], w.shape[1]
    xg = x.reshape(n, groups, cin // groups, math.prod(x.shape[2:]))        # (N, G, Cin/G, L)
    wg = w.reshape(groups, cin // groups, -1)                               # (G, Cin/G, Cout/G*K)
    cols = np.matmul(wg.transpose(0, 2, 1), xg).reshape(n, groups * cog * math.prod(k), xg.shape[-1])
    size = tuple(in_size(*a) for a in zip(x.shape[2:], k, stride, *zip(*pads), dilation))
    return col2im_nd(cols, size, k, dilation, pads, stride)


class ConvolutionNd(Op):
    """conv: y = W @ im2col(x) + b; transposed: y = col2im(W^T @ x) + b (pads (p, p - output_padding))"""
    _grad_fn_name = "ConvolutionBackward0"
    _edges = (0, 1, 2)  # (input, weight, bias: a bias left out is torch's undefined tensor)
    _saved_names, _saved_values = ("input", "weight"), CONVOLUTION_VALUES

    @staticmethod
    def forward(ctx, x, w, b, stride, pads, dilation, groups, transposed, shown=None):
        ctx.save_for_backward(x, w)
        ctx.args = (stride, pads, dilation, groups, transposed)
        show_convolution(ctx, b, stride, pads, dilation, groups, transposed, shown)
        k = w.shape[2:]
        run = _transposed_forward if transposed else _conv_forward
        out = run(x, w, groups, k, stride, pads, dilation)
        if b is not None:
            out += b.reshape((1, -1) + (1,) * len(k))
        return channels_last_of(out, x, w)

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        transposed = ctx.args[-1]
        gx, gw = (_transposed_backward if transposed else _conv_backward)(ctx, x, w, grad)
        gb = grad.sum((0,) + tuple(range(2, grad.ndim))) if ctx.needs_input_grad[2] else None
        return gx, gw, gb, None, None, None, None, None

    @staticmethod
    def jvp(ctx, tx, tw, tb, *_):
        x, w, _, *rest = ctx.inputs  # bilinear in (x, w), plus b
        return ConvolutionNd.apply(tx, w, None, *rest) + ConvolutionNd.apply(x, tw, tb, *rest)


def _conv_backward(ctx, x, w, grad):
    stride, pads, dilation, groups, _ = ctx.args
    k, n, o = tuple(w.shape[2:]), grad.shape[0], grad.shape[1]
    g = grad.reshape(n, groups, o // groups, math.prod(grad.shape[2:]))     # (N, G, O/G, L)
    gx = gw = None
    if ctx.needs_input_grad[0]:
        cols = (w.reshape(groups, o // groups, -1).transpose(1, 2) @ g).reshape(n, groups * math.prod(w.shape[1:]),
                                                                                g.shape[-1])
        gx = Col2imNd.apply(cols, tuple(x.shape[2:]), k, dilation, pads, stride)
    if ctx.needs_input_grad[1]:
        cols = Im2colNd.apply(x, k, dilation, pads, stride)
        cols = cols.reshape(n, groups, cols.shape[1] // groups, cols.shape[-1])
        gw = (g @ cols.transpose(2, 3)).sum(0).reshape(w.shape)
    return gx, gw


def _transposed_backward(ctx, x, w, grad):
    stride, pads, dilation, groups, _ = ctx.args
    k, n, cin = tuple(w.shape[2:]), x.shape[0], w.shape[0]
    ga = Im2colNd.apply(grad, k, dilation, pads, stride)                   # (N, Cout*K, L)
    ga = ga.reshape(n, groups, ga.shape[1] // groups, ga.shape[-1])        # (N, G, Cout/G*K, L)
    gx = gw = None
    if ctx.needs_input_grad[0]:
        gx = (w.reshape(groups, cin // groups, -1) @ ga).reshape(x.shape)
    if ctx.needs_input_grad[1]:
        xg = x.reshape(n, groups, cin // groups, math.prod(x.shape[2:]))
        gw = (xg @ ga.transpose(2, 3)).sum(0).reshape(w.shape)
    return gx, gw
