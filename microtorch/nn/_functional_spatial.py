"""nn.functional, spatial part: 3-d and transposed convolution, pooling of every kind, unpooling.

The ops live in ops/conv_more.py and ops/pool_more.py; this module checks arguments the way
torch does and brings 1-d and unbatched inputs to the shapes the ops take.
"""
import numpy as np

from .._tensor import Tensor

from ..ops import conv_more as _cm
from ..ops._kernels import _NAMES
from ..ops import pool_more as _pm
from ..ops._memory_formats import channels_last, suggested_format
from ..ops import upsample as _up
from .functional import (_batched, _conv, _given, _max_pool_input, _no_max_pool_kernel, _pool_pads, _tuple,
                         avg_pool1d, avg_pool2d, max_pool1d, max_pool2d)


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


def _per_dim(output_padding, stride, dilation):
    """conv_transpose's numbers as torch's message lists them, per named dim (1-d is computed as 2-d: a height of
    output padding 0 and stride 1 comes first)."""
    if len(stride) == 1:
        output_padding, stride, dilation = (0,) + output_padding, (1,) + stride, (1,) + dilation
    dims = ("depth", "height", "width")[-len(stride):]
    return " ".join(f"{what}_{dim}: {v}" for what, values in (("output_padding", output_padding), ("stride", stride),
                                                               ("dilation", dilation)) for dim, v in zip(dims, values))


def _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, n, op):
    x, unbatched = _batched(input, n, op)
    _check_transposed(x, weight, bias, groups, n, op)
    s, p = _tuple(stride, n, "stride", op), _tuple(padding, n, "padding", op)
    d, op_ = _tuple(dilation, n, "dilation", op), _tuple(output_padding, n, "output_padding", op)
    for o, si, di in zip(op_, s, d):
        if o >= si and o >= di:
            raise RuntimeError(f"{op}: output padding must be smaller than either stride or dilation, but got "
                               f"{_per_dim(op_, s, d)}")
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
    _max_pool_input(input, 3, "max_pool3d")
    k = _tuple(kernel_size, 3, "kernel_size", "max_pool3d")
    s = _tuple(stride if stride not in (None, []) else k, 3, "stride", "max_pool3d")
    d = _tuple(dilation, 3, "dilation", "max_pool3d")
    pads = _pool_pads(input.shape[-3:], k, s, _tuple(padding, 3, "padding", "max_pool3d"), d, ceil_mode, "max_pool3d",
                      channels=input.shape[-4])
    _no_max_pool_kernel(input, "max_pool3d")
    shown = (_given(kernel_size, 3), () if stride in (None, []) else _given(stride, 3), _given(padding, 3),
             _given(dilation, 3), bool(ceil_mode))  # (as torch's node shows them)
    out, idx = _pm.MaxPool3d.apply(input, k, s, pads, d, shown)  # (an unbatched input stays unbatched, as in torch)
    return (out, idx) if return_indices else out


def _renamed(op, fn, input, kernel_size, *args):
    """fn(...) whose errors name `op` (the *_with_indices spelling the user called)."""
    k = kernel_size if isinstance(kernel_size, (tuple, list)) else (kernel_size,)
    _int_sizes(k, "kernel_size", 2, op)
    try:
        return fn(input, kernel_size, *args)
    except (RuntimeError, ValueError) as e:
        raise type(e)(f"{op}: {e}") from None


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return _renamed("max_pool1d_with_indices", max_pool1d, input, kernel_size, stride, padding, dilation,
                    ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return _renamed("max_pool2d_with_indices", max_pool2d, input, kernel_size, stride, padding, dilation,
                    ceil_mode, True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return _renamed("max_pool3d_with_indices", max_pool3d, input, kernel_size, stride, padding, dilation,
                    ceil_mode, True)


def _avg_divisor(size, k, s, p, pads, count_include_pad, dtype):
    """How many elements each window covers (padding counted or not, never the ceil_mode overhang)."""
    if count_include_pad:
        ones = np.ones((1, 1) + tuple(n + 2 * q for n, q in zip(size, p)), dtype=dtype)
        extra = tuple((0, hi - q) for (_, hi), q in zip(pads, p))
    else:
        ones, extra = np.ones((1, 1) + tuple(size), dtype=dtype), pads
    return _cm.im2col_nd(ones, k, (1,) * len(k), extra, s).sum(axis=1)[0]


def _avg_pool3d_checks(input, x, k, s, p, ceil_mode, divisor_override):
    """torch's checks of avg_pool3d in its order: the divisor, the arguments, the input's shape (a dim other than the
    batch empty, the image smaller than the kernel), the output's, then the dtype. x: input batched. Returns the
    pads."""
    if divisor_override == 0:
        raise RuntimeError("avg_pool3d: divisor must be not zero")

    def shape_check():
        if 0 in tuple(x.shape)[1:]:
            raise RuntimeError(f"avg_pool3d(): Expected input's non-batch dimensions to have positive length, but "
                               f"input has a shape of {list(input.shape)} and non-batch dimension 0 has length zero!")
        if any(size < kk for size, kk in zip(x.shape[2:], k)):
            t, h, w = x.shape[2:]
            raise RuntimeError(f"avg_pool3d: input image (T: {t} H: {h} W: {w}) smaller than kernel size (kT: {k[0]} "
                               f"kH: {k[1]} kW: {k[2]}); use a smaller kernel_size")
    pads = _pool_pads(x.shape[2:], k, s, p, (1, 1, 1), ceil_mode, "avg_pool3d", shape_check)
    dt = x._data.dtype
    if dt.kind in "bc" or dt.kind in "iu" and dt != np.int64 or dt.itemsize < 4:  # (torch's: float, double, int64)
        raise NotImplementedError(f'avg_pool3d: "avg_pool3d_out_frame" not implemented for \'{_NAMES[dt.name]}\': '
                                  "convert the input first, e.g. x.float()")
    return pads


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    x, _ = _batched(input, 3, "avg_pool3d")
    k = _tuple(kernel_size, 3, "kernel_size", "avg_pool3d")
    s = _tuple(stride if stride not in (None, []) else k, 3, "stride", "avg_pool3d")
    p = _tuple(padding, 3, "padding", "avg_pool3d")
    pads = _avg_pool3d_checks(input, x, k, s, p, ceil_mode, divisor_override)
    if divisor_override:
        divisor = np.asarray(divisor_override, dtype=x.dtype.np)
    else:
        divisor = _avg_divisor(x.shape[2:], k, s, p, pads, count_include_pad, x.dtype.np)
    shown = (_given(kernel_size, 3), () if stride in (None, []) else _given(stride, 3), _given(padding, 3),
             bool(ceil_mode), bool(count_include_pad), divisor_override)  # (as torch's node shows them)
    return _pm.AvgPool3d.apply(input, k, s, pads, divisor, shown)


# ---- adaptive pooling ---------------------------------------------------------------------------
def _need_real_floating(x, op):
    """torch's NotImplementedError for a pooling kernel that has no integer, bool or complex version."""
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f'"{op}" not implemented for {x.dtype}: pooling needs a real floating point '
                                  "input; convert it with .float()")


def _flag(value, name, op):
    """A bool argument, as torch's `if value:` reads it (a tensor of several values is ambiguous)."""
    if isinstance(value, Tensor) and value.numel() != 1:
        raise RuntimeError(f"{op}: Boolean value of Tensor with more than one value is ambiguous ({name}); pass "
                           "True or False")
    return bool(value)


def _int_sizes(sizes, name, pos, op):
    for v in sizes:
        if not (v is None or isinstance(v, (int, np.integer)) and not isinstance(v, bool)):
            raise TypeError(f"{op}(): argument '{name}' (position {pos}) must be tuple of ints, not "
                            f"{type(v).__name__}; pass ints, e.g. (2, 3)")
    return sizes


def _list_with_default(output_size, input, n, op):
    """torch's order: an int is n copies; a sequence's None entries take the input's sizes."""
    if isinstance(output_size, (int, np.integer)) and not isinstance(output_size, bool):
        return (int(output_size),) * n
    if not isinstance(output_size, (tuple, list, Tensor, str)):
        raise TypeError(f"{op}(): output_size must be an int or a tuple of {n} ints (or None), not "
                        f"{type(output_size).__name__}")
    if input.ndim <= len(output_size):
        raise ValueError(f"{op}: Input dimension should be at least {len(output_size) + 1} for an output_size of "
                         f"{len(output_size)} values (input of size {list(input.shape)})")
    _int_sizes(output_size if not isinstance(output_size, Tensor) else [output_size], "output_size", 2, op)
    if len(output_size) != n:
        raise RuntimeError(f"{op}: output_size must be an int or a tuple of {n} ints, got {list(output_size)}")
    return tuple(int(input.shape[-n + i]) if v is None else int(v) for i, v in enumerate(output_size))


def _check_output_size(x, out, op):
    if any(v < 0 for v in out):
        raise RuntimeError(f"{op}: elements of output_size must be greater than or equal to 0 but got {out}")
    if any(s == 0 for s in x.shape[2:]) and any(out):
        raise RuntimeError(f"{op}: Expected input to have non-zero size for non-batch dimensions, but input has "
                           f"sizes {list(x.shape)}")


def _adaptive_avg(input, out_sz, n, op):
    x, unbatched = _batched(input, n, op)
    if not unbatched and x.shape[1] == 0:  # (torch allows an empty batch, not empty channels)
        raise RuntimeError(f"{op}(): Expected input to have non-zero size for non-batch dimensions, but input has "
                           f"sizes {list(input.shape)} with dimension 1 being empty")
    _check_output_size(x, out_sz, op)
    if all(out_sz) and x.numel():
        _need_real_floating(x, op)
    if all(v == 1 for v in out_sz):  # torch takes the mean here, restrided in place when the input is channels-last
        out = input.mean(tuple(range(-1, -n - 1, -1)), keepdim=True)
        if n == 2 and suggested_format(input._data) is channels_last:
            out.as_strided_(out.shape, (out.shape[1], 1, out.shape[1], out.shape[1]))
        return out
    mats = tuple(_up.area_matrix(o, i) for o, i in zip(out_sz, x.shape[2:]))
    return _up.RESAMPLE[f"AdaptiveAvgPool{n}D"].apply(input, mats)


def _one(output_size, op):
    size = output_size if isinstance(output_size, (tuple, list)) else (output_size,)
    if any(v is None for v in size):
        raise TypeError(f"{op}(): argument 'output_size' (position 2) must be tuple of ints, not None")
    _int_sizes(tuple(size), "output_size", 2, op)
    if len(size) != 1:
        raise RuntimeError(f"{op}(): argument 'output_size' (position 2) must be an int or a tuple of one int, got "
                           f"{output_size}")
    return tuple(size)


def adaptive_avg_pool1d(input, output_size):
    size = _one(output_size, "adaptive_avg_pool1d")
    if input.ndim not in (2, 3):
        raise RuntimeError(f"adaptive_avg_pool1d(): Expected 2D or 3D tensor, but got {list(input.shape)}")
    return _adaptive_avg(input.unsqueeze(-2), (1,) + size, 2, "adaptive_avg_pool1d").squeeze(-2)


def adaptive_avg_pool2d(input, output_size):
    return _adaptive_avg(input, _list_with_default(output_size, input, 2, "adaptive_avg_pool2d"), 2,
                         "adaptive_avg_pool2d")


def adaptive_avg_pool3d(input, output_size):
    return _adaptive_avg(input, _list_with_default(output_size, input, 3, "adaptive_avg_pool3d"), 3,
                         "adaptive_avg_pool3d")


def _adaptive_max(input, out_sz, n, op):
    x, unbatched = _batched(input, n, op)
    if not unbatched and x.shape[1] == 0:  # (torch allows an empty batch, not empty channels)
        raise RuntimeError(f"{op}(): Expected input to have non-zero size for non-batch dimensions, but input has "
                           f"sizes {list(input.shape)} with dimension 1 being empty")
    _check_output_size(x, out_sz, op)
    # torch's kernel refuses integers even for an empty result (and a 1-d pool runs the 2-d kernel)
    _no_max_pool_kernel(x, op, "adaptive_max_pool2d" if n == 2 else "adaptive_max_pool3d_cpu", "bciu")
    if any(s == 0 for s in x.shape[2:]) or not all(out_sz):
        z = np.zeros(input.shape[:input.ndim - n] + tuple(out_sz))
        return Tensor._make(z.astype(x.dtype.np)), Tensor._make(z.astype(np.int64))
    return (_pm.AdaptiveMaxPool2d if n == 2 else _pm.AdaptiveMaxPool3d).apply(input, out_sz)


def _adaptive_max_1d(input, output_size, op):
    size = _one(output_size, op)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"{op}(): Expected 2D or 3D tensor, but got {list(input.shape)}")
    out, idx = _adaptive_max(input.unsqueeze(-2), (1,) + size, 2, op)
    return out.squeeze(-2), idx.squeeze(-2)


def _adaptive_max_nd(input, output_size, n, op):
    return _adaptive_max(input, _list_with_default(output_size, input, n, op), n, op)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    return _adaptive_max_1d(input, output_size, "adaptive_max_pool1d_with_indices")


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    return _adaptive_max_nd(input, output_size, 2, "adaptive_max_pool2d_with_indices")


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    return _adaptive_max_nd(input, output_size, 3, "adaptive_max_pool3d_with_indices")


def adaptive_max_pool1d(input, output_size, return_indices=False):
    both = _flag(return_indices, "return_indices", "adaptive_max_pool1d")
    out = _adaptive_max_1d(input, output_size, "adaptive_max_pool1d")
    return out if both else out[0]


def adaptive_max_pool2d(input, output_size, return_indices=False):
    both = _flag(return_indices, "return_indices", "adaptive_max_pool2d")
    out = _adaptive_max_nd(input, output_size, 2, "adaptive_max_pool2d")
    return out if both else out[0]


def adaptive_max_pool3d(input, output_size, return_indices=False):
    both = _flag(return_indices, "return_indices", "adaptive_max_pool3d")
    out = _adaptive_max_nd(input, output_size, 3, "adaptive_max_pool3d")
    return out if both else out[0]


from ..ops._checks import guard_namespace as _guard_namespace  # noqa: E402
from .._api_errors import clean_namespace as _clean_namespace  # noqa: E402
__all__ = [n for n, v in list(globals().items()) if callable(v) and not n.startswith("_") and v.__module__ == __name__]
# torch's Python-level functions check their arguments in their own order (done here); the rest as torch's C++
_PYTHON_ORDER = {n for n in __all__ if n.startswith(("adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max"))}
_guard_namespace(globals(), [n for n in __all__ if n not in _PYTHON_ORDER])  # a wrong type: torch's TypeError
_clean_namespace(globals(), __all__)  # an internal error becomes torch's kind, naming the op
