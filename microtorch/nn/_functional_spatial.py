"""nn.functional, spatial part: 3-d and transposed convolution, pooling of every kind, unpooling.

The ops live in ops/conv_more.py and ops/pool_more.py; this module checks arguments the way
torch does and brings 1-d and unbatched inputs to the shapes the ops take.
"""
import numpy as np

from ..ops import conv_more as _cm
from ..ops import pool_more as _pm
from ..ops import upsample as _up
from .functional import _batched, _conv, _pool_pads, _tuple, avg_pool1d, avg_pool2d, max_pool1d, max_pool2d


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def _check_transposed(x, weight, bias, groups, n, op):
    if weight.ndim != n + 2:
        raise RuntimeError(f"{op}: expected a weight of {n + 2} dimensions (in_channels, out_channels/groups, "
                           f"kernel...), got size {list(weight.shape)}")
    if x.dtype is not weight.dtype or (bias is not None and bias.dtype is not weight.dtype):
        raise RuntimeError(f"{op}: Input type ({x.dtype}) and weight type ({weight.dtype}) should be the same; "
                           "convert the input (x.double()) or the module (.double())")
    if groups < 1 or weight.shape[0] % groups:
        raise RuntimeError(f"{op}: in_channels ({weight.shape[0]}) must be divisible by groups ({groups})")
    if x.shape[1] != weight.shape[0]:
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected input{list(x.shape)} "
                           f"to have {weight.shape[0]} channels, but got {x.shape[1]} channels instead")


def _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, n, op):
    x, unbatched = _batched(input, n, op)
    _check_transposed(x, weight, bias, groups, n, op)
    s, p = _tuple(stride, n, "stride", op), _tuple(padding, n, "padding", op)
    d, op_ = _tuple(dilation, n, "dilation", op), _tuple(output_padding, n, "output_padding", op)
    for o, si, di in zip(op_, s, d):
        if o >= si and o >= di:
            raise RuntimeError(f"{op}: output padding must be smaller than either stride or dilation, but got "
                               f"output_padding={op_}, stride={s}, dilation={d}")
    for size, k, si, pi, di, o in zip(x.shape[2:], weight.shape[2:], s, p, d, op_):
        if _cm.in_size(size, k, si, pi, pi - o, di) <= 0:
            raise RuntimeError(f"{op}: the output would have no elements (input size {size}, kernel {k}, stride "
                               f"{si}, padding {pi}); use less padding")
    pads = tuple((pi, pi - o) for pi, o in zip(p, op_))
    out = _cm.ConvolutionNd.apply(x, weight, bias, s, pads, d, groups, True)
    return out.squeeze(0) if unbatched else out


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 1,
                           "conv_transpose1d")


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 2,
                           "conv_transpose2d")


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 3,
                           "conv_transpose3d")


# ---- 3-d max and average pooling -----------------------------------------------------------------
def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    x, unbatched = _batched(input, 3, "max_pool3d")
    k = _tuple(kernel_size, 3, "kernel_size", "max_pool3d")
    s = _tuple(stride if stride not in (None, []) else k, 3, "stride", "max_pool3d")
    d = _tuple(dilation, 3, "dilation", "max_pool3d")
    pads = _pool_pads(x.shape[2:], k, s, _tuple(padding, 3, "padding", "max_pool3d"), d, ceil_mode, "max_pool3d")
    out, idx = _pm.MaxPool3d.apply(x, k, s, pads, d)
    if unbatched:
        out, idx = out.squeeze(0), idx.squeeze(0)
    return (out, idx) if return_indices else out


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def _avg_divisor(size, k, s, p, pads, count_include_pad, dtype):
    """How many elements each window covers (padding counted or not, never the ceil_mode overhang)."""
    if count_include_pad:
        ones = np.ones((1, 1) + tuple(n + 2 * q for n, q in zip(size, p)), dtype=dtype)
        extra = tuple((0, hi - q) for (_, hi), q in zip(pads, p))
    else:
        ones, extra = np.ones((1, 1) + tuple(size), dtype=dtype), pads
    return _cm.im2col_nd(ones, k, (1,) * len(k), extra, s).sum(axis=1)[0]


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    x, unbatched = _batched(input, 3, "avg_pool3d")
    k = _tuple(kernel_size, 3, "kernel_size", "avg_pool3d")
    s = _tuple(stride if stride not in (None, []) else k, 3, "stride", "avg_pool3d")
    p = _tuple(padding, 3, "padding", "avg_pool3d")
    pads = _pool_pads(x.shape[2:], k, s, p, (1, 1, 1), ceil_mode, "avg_pool3d")
    if divisor_override:
        divisor = np.asarray(divisor_override, dtype=x.dtype.np)
    else:
        divisor = _avg_divisor(x.shape[2:], k, s, p, pads, count_include_pad, x.dtype.np)
    out = _pm.AvgPool3d.apply(x, k, s, pads, divisor)
    return out.squeeze(0) if unbatched else out


# ---- adaptive pooling ---------------------------------------------------------------------------
def _output_size(output_size, x, n, op):
    """output_size as a tuple; None keeps the input's size along that dim."""
    sizes = output_size if isinstance(output_size, (tuple, list)) else (output_size,) * n
    if len(sizes) == 1:
        sizes = tuple(sizes) * n
    if len(sizes) != n:
        raise RuntimeError(f"{op}: output_size must be an int or a tuple of {n} ints, got {output_size}")
    out = tuple(int(x.shape[-n + i]) if v is None else int(v) for i, v in enumerate(sizes))
    if any(v < 0 for v in out):
        raise RuntimeError(f"{op}: elements of output_size must be greater than or equal to 0 but got {out}")
    for size, v in zip(x.shape[-n:], out):
        if size == 0 and v:
            raise RuntimeError(f"{op}: input of size {list(x.shape)} has an empty spatial dim; it cannot be "
                               "pooled to a non-empty output")
    return out


def _adaptive_avg(input, output_size, n, op):
    x, unbatched = _batched(input, n, op)
    out_sz = _output_size(output_size, x, n, op)
    if all(v == 1 for v in out_sz):  # torch takes the mean here
        out = x.mean(tuple(range(2, 2 + n)), keepdim=True)
    else:
        mats = tuple(_up.area_matrix(o, i) for o, i in zip(out_sz, x.shape[2:]))
        out = _up.RESAMPLE[f"AdaptiveAvgPool{n}D"].apply(x, mats)
    return out.squeeze(0) if unbatched else out


def adaptive_avg_pool1d(input, output_size):
    if input.ndim not in (2, 3):
        raise RuntimeError(f"adaptive_avg_pool1d(): Expected 2D or 3D tensor, but got {list(input.shape)}")
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1,) + _tuple(output_size, 1, "output_size",
                                                                   "adaptive_avg_pool1d")).squeeze(-2)


def adaptive_avg_pool2d(input, output_size):
    return _adaptive_avg(input, output_size, 2, "adaptive_avg_pool2d")


def adaptive_avg_pool3d(input, output_size):
    return _adaptive_avg(input, output_size, 3, "adaptive_avg_pool3d")


def _adaptive_max(input, output_size, return_indices, n, op):
    x, unbatched = _batched(input, n, op)
    out_sz = _output_size(output_size, x, n, op)
    if any(s == 0 for s in x.shape[2:]):
        raise RuntimeError(f"{op}: Expected input to have non-zero size for non-batch dimensions, but input has "
                           f"sizes {list(input.shape)}")
    out, idx = (_pm.AdaptiveMaxPool2d if n == 2 else _pm.AdaptiveMaxPool3d).apply(x, out_sz)
    if unbatched:
        out, idx = out.squeeze(0), idx.squeeze(0)
    return (out, idx) if return_indices else out


def adaptive_max_pool1d(input, output_size, return_indices=False):
    if input.ndim not in (2, 3):
        raise RuntimeError(f"adaptive_max_pool1d(): Expected 2D or 3D tensor, but got {list(input.shape)}")
    size = (1,) + _tuple(output_size, 1, "output_size", "adaptive_max_pool1d")
    out, idx = _adaptive_max(input.unsqueeze(-2), size, True, 2, "adaptive_max_pool1d")
    out, idx = out.squeeze(-2), idx.squeeze(-2)
    return (out, idx) if return_indices else out


def adaptive_max_pool2d(input, output_size, return_indices=False):
    return _adaptive_max(input, output_size, return_indices, 2, "adaptive_max_pool2d")


def adaptive_max_pool3d(input, output_size, return_indices=False):
    return _adaptive_max(input, output_size, return_indices, 3, "adaptive_max_pool3d")


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    return adaptive_max_pool3d(input, output_size, True)


from ..ops._checks import guard_namespace as _guard_namespace  # noqa: E402
from .._api_errors import clean_namespace as _clean_namespace  # noqa: E402
__all__ = [n for n, v in list(globals().items()) if callable(v) and not n.startswith("_") and v.__module__ == __name__]
_guard_namespace(globals(), __all__)  # an argument of the wrong type raises torch's TypeError
_clean_namespace(globals(), __all__)  # an internal error becomes torch's kind, naming the op
