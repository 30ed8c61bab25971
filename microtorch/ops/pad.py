"""Padding: constant (ConstantPadNd), and reflect / replicate / circular as an index map of the input."""
import numpy as np

from .._tensor import Tensor
from ._memory_formats import contiguous_format, laid_out, suggested_format
from ._op import Op
from .reduce import c_order


def _widths(ndim, pad):
    """torch's flat pad (last dim first: left, right, then the dim before...) as np.pad's per-dim pairs."""
    widths = [(0, 0)] * ndim
    for i in range(len(pad) // 2):
        widths[ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    return widths


class ConstantPadNd(Op):
    """out = x surrounded by `value` (a negative pad crops);  d/dx = the matching slice of g"""
    _grad_fn_name = "ConstantPadNdBackward0"

    @staticmethod
    def forward(ctx, x, pad=(), value=0.0):
        ctx.pad, ctx.shape = pad, x.shape
        widths = _widths(x.ndim, pad)
        crop = tuple(slice(max(-lo, 0), x.shape[i] - max(-hi, 0)) for i, (lo, hi) in enumerate(widths))
        grow = [(max(lo, 0), max(hi, 0)) for lo, hi in widths]
        out = np.pad(x[crop], grow, constant_values=value)
        fmt = suggested_format(x)  # (torch's result: channels_last for such an input, else C order; numpy's
        if fmt is not contiguous_format:                    # keeps x's order; vmap's batched arrays as they are)
            return laid_out(out, fmt)
        return c_order(out)

    @staticmethod
    def backward(ctx, grad):
        return ConstantPadNd.apply(grad, pad=tuple(-p for p in ctx.pad), value=0.0)

    @staticmethod
    def jvp(ctx, t):
        return ConstantPadNd.apply(t, pad=ctx.pad, value=0.0)


_NP_MODE = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


class IndexedPad(Op):
    """out[j] = x[map[j]] (map: which input element each padded position repeats);  d/dx = g summed by map"""
    _grad_fn_name = "ReflectionPadBackward0"

    @staticmethod
    def forward(ctx, x, pad=(), mode="reflect"):
        ctx.shape = x.shape
        ctx.map = np.pad(np.arange(x.size).reshape(x.shape), _widths(x.ndim, pad), mode=_NP_MODE[mode])
        return x.reshape(-1)[ctx.map]

    @staticmethod
    def backward(ctx, grad):
        from .index import ScatterIntoZeros
        flat = ScatterIntoZeros.apply(grad.reshape(-1), (int(np.prod(ctx.shape)),), (ctx.map.reshape(-1),))
        return flat.reshape(ctx.shape)

    @staticmethod
    def jvp(ctx, t):
        from .index import take
        return take(t, Tensor._make(ctx.map))


def _indexed_class(mode, k):
    name = {"reflect": f"ReflectionPad{k}D", "replicate": f"ReplicationPad{k}D"}.get(mode)
    grad_fn = name + "Backward0" if name else "torch::autograd::CopySlices"  # torch composes circular in place
    return _CLASSES.setdefault((mode, k), type(f"{mode.capitalize()}Pad{k}d", (IndexedPad,),
                                                {"_grad_fn_name": grad_fn, "__module__": __name__,
                                                 "__doc__": IndexedPad.__doc__}))


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
    if mode not in _NP_MODE:
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
    return _indexed_class(mode, k).apply(input, pad=pad, mode=mode)
