"""Padding: constant (ConstantPadNd), reflect / replicate as an index map of the input, circular composed as torch's."""
import numpy as np

from .._tensor import Tensor
from ._memory_formats import contiguous_format, laid_out, suggested_format
from ._op import Op, shown_dim
from .reduce import c_order
from .shape import narrow


def _grow_and_crop(ndim, pad):
    """torch's flat pad (last dim first: left, right, then the dim before...) as np.pad's per-dim pairs of its
    positive widths, and a function cropping an array by its negative ones."""
    widths = [(0, 0)] * ndim
    for i in range(len(pad) // 2):
        widths[ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])

    def crop(a):
        return a[tuple(slice(max(-lo, 0), n - max(-hi, 0)) for n, (lo, hi) in zip(a.shape, widths))]
    return [(max(lo, 0), max(hi, 0)) for lo, hi in widths], crop


class ConstantPadNd(Op):
    """out = x surrounded by `value` (a negative pad crops);  d/dx = the matching slice of g"""
    _grad_fn_name = "ConstantPadNdBackward0"
    _saved_values = {"pad": "shown_pad"}

    @staticmethod
    def forward(ctx, x, pad=(), value=0.0):
        ctx.pad, ctx.shape = pad, x.shape
        ctx.shown_pad = tuple(shown_dim(p) for p in pad)  # (a negative width as torch shows it)
        grow, crop = _grow_and_crop(x.ndim, pad)
        return _torch_layout(np.pad(crop(x), grow, constant_values=value), x)

    @staticmethod
    def backward(ctx, grad):
        return ConstantPadNd.apply(grad, pad=tuple(-p for p in ctx.pad), value=0.0)

    @staticmethod
    def jvp(ctx, t):
        return ConstantPadNd.apply(t, pad=ctx.pad, value=0.0)


def _torch_layout(out, x):
    """out as torch's pad kernels lay it out: channels_last for such an input, else C order (numpy's np.pad keeps
    x's order; vmap's batched arrays as they are)"""
    fmt = suggested_format(x)
    return laid_out(out, fmt) if fmt is not contiguous_format else c_order(out)


_NP_MODE = {"reflect": "reflect", "replicate": "edge"}


class IndexedPad(Op):
    """out[j] = x[map[j]] (map: which input element each padded position repeats);  d/dx = g summed by map"""
    _grad_fn_name = "ReflectionPadBackward0"
    _saved_names, _saved_values = ("self",), {"padding": "padding"}  # (torch's node keeps x, for its shape)

    @staticmethod
    def forward(ctx, x, pad=(), mode="reflect"):
        ctx.padding = tuple(shown_dim(p) for p in pad)  # (a negative width as torch shows it)
        ctx.save_for_backward(x)
        grow, crop = _grow_and_crop(x.ndim, pad)  # (torch mirrors or repeats x's own edges, then crops: a
        ctx.map = crop(np.pad(np.arange(x.size).reshape(x.shape), grow, mode=_NP_MODE[mode]))  # negative width cuts)
        return _torch_layout(x.reshape(-1)[ctx.map], x)

    @staticmethod
    def backward(ctx, grad):
        from .index import ScatterIntoZeros
        shape = ctx.saved_tensors[0].shape  # (a freed node raises here, as torch's)
        flat = ScatterIntoZeros.apply(grad.reshape(-1), (int(np.prod(shape)),), (ctx.map.reshape(-1),))
        return flat.reshape(shape)

    @staticmethod
    def jvp(ctx, t):
        from .index import take
        return take(t, Tensor._make(ctx.map))


def _indexed_class(mode, k):
    name = {"reflect": f"ReflectionPad{k}D", "replicate": f"ReplicationPad{k}D"}[mode]
    return _CLASSES.setdefault((mode, k), type(f"{mode.capitalize()}Pad{k}d", (IndexedPad,),
                                                {"_grad_fn_name": name + "Backward0", "__module__": __name__,
                                                 "__doc__": IndexedPad.__doc__}))


def _pad_circular(x, pad):
    """torch's _pad_circular, step by step (its graph: a CopySlices per copy, a SliceBackward0 per slice): x's
    (cropped) middle copied into an empty result, then each padded dim's borders copied from the result itself."""
    k, nd = len(pad) // 2, x.ndim
    shape = list(x.shape)
    for i in range(k):
        shape[nd - 1 - i] += pad[2 * i] + pad[2 * i + 1]
        if shape[nd - 1 - i] < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
    # (the empty result, in C order as torch's: zeros beside x.detach(), batched as x is under vmap, where
    # x.new_empty's would not be)
    out = ConstantPadNd.apply(x.detach(), pad=pad, value=0.0).contiguous()
    out_part, in_part = out, x
    for i in range(k):
        dim, lo, hi = nd - 1 - i, pad[2 * i], pad[2 * i + 1]
        out_part = narrow(out_part, dim, max(lo, 0), shape[dim] - max(lo, 0) - max(hi, 0))
        in_part = narrow(in_part, dim, max(-lo, 0), x.shape[dim] - max(-lo, 0) - max(-hi, 0))
    out_part.copy_(in_part)
    for i in range(k):  # (corners are written more than once, as torch's)
        dim, lo, hi = nd - 1 - i, pad[2 * i], pad[2 * i + 1]
        if lo > 0:
            narrow(out, dim, 0, lo).copy_(narrow(out, dim, shape[dim] - lo - max(hi, 0), lo))
        if hi > 0:
            narrow(out, dim, shape[dim] - hi, hi).copy_(narrow(out, dim, max(lo, 0), hi))
    return out


_CLASSES = {}


def pad(input, pad, mode="constant", value=None):
    """torch.nn.functional.pad: pad = (left, right) for the last dim, then (top, bottom) for the one before..."""
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError(f"Padding length must be divisible by 2 (pad: {list(pad)}): give (left, right) pairs")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {input.ndim}")
    if mode == "constant":
        return ConstantPadNd.apply(input, pad=pad, value=0.0 if value is None else value)
    if mode not in _NP_MODE and mode != "circular":
        raise NotImplementedError(f"Unrecognised padding mode {mode}: use 'constant', 'reflect', 'replicate' or "
                                  "'circular'")
    k = len(pad) // 2
    if k > 3 or input.ndim not in (k + 1, k + 2):
        raise NotImplementedError(f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor: "
                                  f"mode {mode!r} pads {k} dim(s) of a {k + 1}D or {k + 2}D input ((C, ...) or "
                                  "(N, C, ...))")
    for i in range(k):
        size, (lo, hi) = input.shape[input.ndim - 1 - i], pad[2 * i:2 * i + 2]
        if mode == "reflect" and (lo >= size or hi >= size):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input dimension, "
                               f"but got: padding ({lo}, {hi}) at dimension {input.ndim - 1 - i} of input "
                               f"{list(input.shape)}")
        if mode == "circular" and (lo > size or hi > size):
            raise RuntimeError("Padding value causes wrapping around more than once.")
    if mode == "circular":
        return _pad_circular(input, pad)
    return _indexed_class(mode, k).apply(input, pad=pad, mode=mode)
