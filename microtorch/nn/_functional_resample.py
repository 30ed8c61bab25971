"""nn.functional, spatial part: lp and fractional pooling, unpooling, interpolate, shuffles, affine_grid.

The ops live in ops/pool_more.py and ops/upsample.py; this module checks arguments the way
torch does and builds the per-dim matrices each interpolation mode multiplies by.
"""
import math

import numpy as np

from .._creation import rand
from .._tensor import Tensor
from ..ops import pool_more as _pm
from ..ops import upsample as _up
from ._functional_spatial import _int_sizes, avg_pool3d, max_pool3d
from .functional import _batched, _no_max_pool_kernel, _tuple, avg_pool1d, avg_pool2d, max_pool1d, max_pool2d


# ---- power-average pooling ----------------------------------------------------------------------
def _unpack(kernel_size, n, op):
    """torch's `kw, kh = _pair(kernel_size)`: a sequence must hold exactly n values."""
    k = tuple(kernel_size) if isinstance(kernel_size, (tuple, list, Tensor)) else (kernel_size,) * n
    if len(k) != n and n > 1:
        raise ValueError(f"{op}: {'not enough' if len(k) < n else 'too many'} values to unpack (expected {n}, got "
                         f"{len(k)}); kernel_size must be an int or {n} ints")
    return k


def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, n, op):
    k = _unpack(kernel_size, n, op)
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    avg, mx = ((avg_pool1d, max_pool1d), (avg_pool2d, max_pool2d), (avg_pool3d, max_pool3d))[n - 1]
    s = stride if stride is not None else kernel_size
    infinite = isinstance(norm_type, (int, float)) and math.isinf(norm_type)  # (a tensor goes to pow, as in torch)
    try:
        if infinite and norm_type > 0:  # the largest magnitude of each window
            return mx(input.abs(), kernel_size, s, 0, 1, ceil_mode)
        if infinite:  # the smallest magnitude
            return -mx(-input.abs(), kernel_size, s, 0, 1, ceil_mode)
        out = avg(input.pow(norm_type), kernel_size, s, 0, ceil_mode)
    except (TypeError, RuntimeError, ValueError, NotImplementedError) as e:  # name the op the user called
        raise type(e)(f"{op}: {e}") from None
    return (out.sign() * out.abs().relu()).mul(math.prod(k)).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1, "lp_pool1d")


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2, "lp_pool2d")


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3, "lp_pool3d")


# ---- fractional max pooling ---------------------------------------------------------------------
def _fractional(input, kernel_size, output_size, output_ratio, return_indices, samples, n, op):
    if output_size is None and output_ratio is None:
        raise ValueError(f"{op} requires specifying either an output_size or an output_ratio")
    _int_sizes(kernel_size if isinstance(kernel_size, (tuple, list)) else (kernel_size,), "kernel_size", 2, op)
    if samples is None and input.ndim <= n:  # (torch reads the channel count, input.size(-n-1), to draw them)
        r = max(input.ndim, 1)
        raise IndexError(f"{op}: Dimension out of range (expected to be in range of [{-r}, {r - 1}], but got "
                         f"{-n - 1}); the input must be (C, {'D, ' * (n == 3)}H, W) or (N, C, {'D, ' * (n == 3)}H, W)")
    x, _ = _batched(input, n, op)
    if samples is None:  # (torch draws them in the input's dtype first: its uniform kernel has no integer one)
        _no_max_pool_kernel(x, op, "check_uniform_bounds", "biu")
    elif isinstance(samples, Tensor) and samples.dtype != x.dtype:
        raise RuntimeError(f"{op}(): Expect _random_samples to have the same dtype as input (they are "
                           f"{samples.dtype}, the input {x.dtype}); draw them with dtype=input.dtype")
    k = _tuple(kernel_size, n, "kernel_size", op)
    if output_size is None:
        ratio = output_ratio if isinstance(output_ratio, (tuple, list)) else (output_ratio,) * n
        output_size = tuple(int(s * r) for s, r in zip(x.shape[2:], ratio))
    out_sz = _tuple(output_size, n, "output_size", op)
    for dim, (s, kk, o) in enumerate(zip(x.shape[2:], k, out_sz)):
        if o + kk - 1 > s - (n == 3):  # (torch's 3-d kernel wants one element to spare)
            raise RuntimeError(f"{op}(): pool size {kk} too large relative to input size {s} and output size {o} "
                               f"along spatial dim {dim}; the output size plus the pool size - 1 must fit the input")
    if samples is None:
        samples = rand(x.shape[0], x.shape[1], n, dtype=x.dtype)
    elif tuple(samples.shape) != (x.shape[0], x.shape[1], n):
        raise RuntimeError(f"{op}(): expected _random_samples of size {[x.shape[0], x.shape[1], n]}, got "
                           f"{list(samples.shape)}")
    if x.numel():  # (the shapes are checked before the dtype, and an empty batch pools nothing, as in torch)
        _no_max_pool_kernel(x, op, f"fractional_max_pool{n}d_out_frame", "bciu")
    cls = _pm.FractionalMaxPool2d if n == 2 else _pm.FractionalMaxPool3d
    # (unbatched stays unbatched, as in torch; complex samples come only with an empty batch: nothing to draw)
    out, idx = cls.apply(input, k, out_sz, samples.detach()._data.real)
    return (out, idx) if return_indices else out


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    return _fractional(input, kernel_size, output_size, output_ratio, return_indices, _random_samples, 2,
                       "fractional_max_pool2d")


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    return _fractional(input, kernel_size, output_size, output_ratio, return_indices, _random_samples, 3,
                       "fractional_max_pool3d")


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    return _fractional(input, kernel_size, output_size, output_ratio, True, _random_samples, 2,
                       "fractional_max_pool2d_with_indices")


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    return _fractional(input, kernel_size, output_size, output_ratio, True, _random_samples, 3,
                       "fractional_max_pool3d_with_indices")


# ---- unpooling ------------------------------------------------------------------------------------
def _unpool_size(x, k, s, p, output_size, n, op):
    default = tuple((x.shape[-n + i] - 1) * s[i] + k[i] - 2 * p[i] for i in range(n))
    if output_size is None:
        return default
    size = tuple(output_size)
    if len(size) == n + 2:
        size = size[2:]
    if len(size) != n:
        raise ValueError(f"{op}: output_size should be a sequence containing {n} or {n + 2} elements, but it has a "
                         f"length of '{len(size)}'")
    for i in range(n):
        lo, hi = default[i] - s[i], default[i] + s[i]
        if not lo < size[i] < hi:
            raise ValueError(f"{op}: invalid output_size \"{list(size)}\" (dim {i} must be between {lo} and {hi})")
    return tuple(int(v) for v in size)


def _unpool_args(input, kernel_size, stride, padding, output_size, n, op):
    k = _tuple(kernel_size, n, "kernel_size", op)
    s = _tuple(stride if stride is not None else k, n, "stride", op)
    return _unpool_size(input, k, s, _tuple(padding, n, "padding", op), output_size, n, op)


def _max_unpool(input, indices, size, n, op):
    if indices.dtype.np != np.int64:
        raise RuntimeError(f"{op}: elements in indices should be type int64 but got: {indices.dtype}")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"{op}: Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: {list(indices.shape)}")
    _batched(input, n, op)
    idx = indices.detach()._data
    if idx.size and (idx.min() < 0 or idx.max() >= math.prod(size)):
        bad = idx.min() if idx.min() < 0 else idx.max()
        raise RuntimeError(f"{op}: Found an invalid max index: {bad} (output volumes are of size "
                           f"{'x'.join(map(str, size))}); pass the indices that the matching max_pool returned")
    return (_pm.MaxUnpool2d if n == 2 else _pm.MaxUnpool3d).apply(input, idx, size)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    size = _unpool_args(input, kernel_size, stride, padding, output_size, 1, "max_unpool1d")
    return _max_unpool(input.unsqueeze(-1), indices.unsqueeze(-1), size + (1,), 2, "max_unpool1d").squeeze(-1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    size = _unpool_args(input, kernel_size, stride, padding, output_size, 2, "max_unpool2d")
    return _max_unpool(input, indices, size, 2, "max_unpool2d")


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    size = _unpool_args(input, kernel_size, stride, padding, output_size, 3, "max_unpool3d")
    return _max_unpool(input, indices, size, 3, "max_unpool3d")


from ..ops._checks import guard_namespace as _guard_namespace  # noqa: E402
from .._api_errors import clean_namespace as _clean_namespace  # noqa: E402
__all__ = [n for n, v in list(globals().items()) if callable(v) and not n.startswith("_") and v.__module__ == __name__]
# torch's Python-level functions check their arguments in their own order (done here); the rest as torch's C++
_PYTHON_ORDER = {n for n in __all__ if n.startswith(("fractional", "lp_pool"))}
_guard_namespace(globals(), [n for n in __all__ if n not in _PYTHON_ORDER])  # a wrong type: torch's TypeError
_clean_namespace(globals(), __all__)  # an internal error becomes torch's kind, naming the op
