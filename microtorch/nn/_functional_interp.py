"""nn.functional: interpolate (and the older upsample names), pixel/channel shuffle, affine_grid."""
from .._user_line import warn_at_user_line

import numpy as np

from ..ops import grid_sample as _gs
from ..ops import upsample as _up
from .._tensor import Tensor
from ._functional_spatial import _need_real_floating, adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d

_MODES = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact")
_NEEDS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}
_NAMES = {"nearest": "UpsampleNearest{}D", "nearest-exact": "UpsampleNearestExact{}D", "linear": "UpsampleLinear1D",
          "bilinear": "UpsampleBilinear2D", "bicubic": "UpsampleBicubic2D", "trilinear": "UpsampleTrilinear3D"}


def _spatial_list(v, n, what, input, op):
    if not isinstance(v, (tuple, list)):
        return (v,) * n
    if len(v) != n:
        raise ValueError(f"{op}: Input and {what} must have the same number of spatial dimensions, but got input "
                         f"with spatial dimensions of {list(input.shape[2:])} and {what} of {list(v)}. Please "
                         f"provide input tensor in (N, C, d1, d2, ...,dK) format and {what} in (o1, o2, ...,oK) "
                         "format.")
    return tuple(v)


def _sizes(input, size, scale_factor, recompute_scale_factor, mode, op):
    """torch's order: the output sizes, and the scales the kernels use (None: in/out)."""
    n = input.ndim - 2
    if size is not None and scale_factor is not None:
        raise ValueError(f"{op}: only one of size or scale_factor should be defined")
    if size is not None:
        out, scales = _spatial_list(size, n, "output size", input, op), (None,) * n
    elif scale_factor is not None:
        out, scales = None, _spatial_list(scale_factor, n, "scale_factor", input, op)
    else:
        raise ValueError(f"{op}: either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError(f"{op}: recompute_scale_factor is not meaningful with an explicit size.")
    if recompute_scale_factor or (mode == "area" and out is None):
        if not all(isinstance(f, (int, float)) and not isinstance(f, bool) for f in scales):
            raise TypeError(f"{op}: scale_factor must be a float or a tuple of floats, got {scale_factor!r}")
        out, scales = tuple(int(input.shape[2 + i] * float(scales[i]) // 1) for i in range(n)), (None,) * n
    return out, scales


def _matrices(mode, out_n, in_n, scale, align_corners, antialias, nd):
    """(the matrix the forward applies, the one whose transpose the backward applies) for one spatial dim: the
    same, except where torch's forward and backward kernels disagree, as said below"""
    if antialias:  # torch's forward copies a dim whose size stays, whatever scale_factor says; its backward does not
        m = _up.antialias_matrix(out_n, in_n, scale, align_corners, mode == "bicubic")
        return (np.eye(in_n) if out_n == in_n else m), m
    if mode == "nearest":  # torch's legacy index rule: in every backward, and in the 2-d forward
        legacy = _up.nearest_matrix(out_n, in_n, scale, False, legacy=True)
        return (legacy if nd == 2 else _up.nearest_matrix(out_n, in_n, scale, False)), legacy
    m = _up.nearest_matrix(out_n, in_n, scale, True)  # (nearest-exact: the other modes take a Taps kernel)
    return m, m


def _check_dims(input, mode, antialias, op):
    n = input.ndim - 2
    if antialias and not (mode in ("bilinear", "bicubic") and input.ndim == 4):
        raise ValueError(f"{op}: Anti-alias option is restricted to bilinear and bicubic modes and requires a 4-D "
                         "tensor as input")
    if mode in _NEEDS and n in (1, 2, 3) and _NEEDS[mode] != n:
        raise NotImplementedError(f"{op}: Got {input.ndim}D input, but {mode} mode needs {_NEEDS[mode] + 2}D input")
    if mode not in _MODES or n not in (1, 2, 3):
        raise NotImplementedError(f"{op}: Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) "
                                  f"for the modes: nearest | linear | bilinear | bicubic | trilinear | area | "
                                  f"nearest-exact (got {mode})")


def _checked_sizes(out, scales, op):
    for v in out:
        if not isinstance(v, int) or isinstance(v, bool):
            raise TypeError(f"{op}(): argument 'output_size' (position 2) must be tuple of ints, but found element "
                            f"of type {type(v).__name__}")
    for f in scales:
        if f is not None and (not isinstance(f, (int, float)) or isinstance(f, bool)):
            raise TypeError(f"{op}(): argument 'scale_factors' must be tuple of floats, but found element of type "
                            f"{type(f).__name__}")


def _interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor, antialias, op):
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if mode in ("nearest", "area", "nearest-exact") and align_corners is not None:
        raise ValueError(f"{op}: align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    out, scales = _sizes(input, size, scale_factor, recompute_scale_factor, mode, op)
    _check_dims(input, mode, antialias, op)
    n = input.ndim - 2
    if mode == "area":
        return (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[n - 1](input, out)
    if out is None:
        _checked_sizes((), scales, op)
        out = tuple(int(input.shape[2 + i] * float(scales[i]) // 1) for i in range(n))
    _checked_sizes(out, scales, op)
    _need_real_floating(input, op) if mode != "nearest" else None
    if any(o <= 0 for o in out) or any(s <= 0 for s in input.shape[2:]):
        raise RuntimeError(f"{op} ({mode}): Input and output sizes should be greater than 0, but got input "
                           f"({', '.join(map(str, input.shape[2:]))}) and output ({', '.join(map(str, out))})")
    if input.shape[1] == 0:  # (no channels: torch's kernels refuse an empty input, a batch of none aside)
        raise RuntimeError(f"Non-empty {input.ndim}D data tensor expected but got a tensor with sizes "
                           f"{list(input.shape)}")
    if mode in _NEEDS and not antialias:  # torch's kernels, their indices, weights and order of additions
        mats = back_mats = _up.Taps(mode == "bicubic", zip(out, input.shape[2:], scales), bool(align_corners))
    else:
        pairs = [_matrices(mode, o, i, s, bool(align_corners), antialias, n) for o, i, s in
                 zip(out, input.shape[2:], scales)]
        mats, back_mats = tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)
    op = _up.RESAMPLE[_NAMES[mode].format(n) + ("Aa" if antialias else "")]
    return op.apply(input, mats, back_mats, (scales, bool(align_corners)))  # (the last: what its node shows)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resample the spatial dims of (N, C, *spatial) to `size` (or times `scale_factor`) with `mode`."""
    return _interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor, antialias,
                        "interpolate")


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    warn_at_user_line("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.")
    return _interpolate(input, size, scale_factor, mode, align_corners, None, False, "upsample")


def upsample_nearest(input, size=None, scale_factor=None):
    warn_at_user_line("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.")
    return _interpolate(input, size, scale_factor, "nearest", None, None, False, "upsample_nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    warn_at_user_line("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.")
    return _interpolate(input, size, scale_factor, "bilinear", True, None, False, "upsample_bilinear")


# ---- shuffles --------------------------------------------------------------------------------------
def _at_least_3d(input, op):
    if input.ndim < 3:
        raise RuntimeError(f"{op} expects input to have at least 3 dimensions, but got input with {input.ndim} "
                           "dimension(s)")


def pixel_shuffle(input, upscale_factor):
    """(*, C*r*r, H, W) -> (*, C, H*r, W*r)"""
    _at_least_3d(input, "pixel_shuffle")
    r = int(upscale_factor)
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    if input.shape[-3] % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={input.shape[-3]} is not divisible by {r * r}")
    return _up.PixelShuffle.apply(input, r)


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H*r, W*r) -> (*, C*r*r, H, W)"""
    _at_least_3d(input, "pixel_unshuffle")
    r = int(downscale_factor)
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    for name, size in (("height", input.shape[-2]), ("width", input.shape[-1])):
        if size % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by downscale_factor, but input."
                               f"size({-2 if name == 'height' else -1})={size} is not divisible by {r}")
    return _up.PixelUnshuffle.apply(input, r)


def channel_shuffle(input, groups):
    """(N, g*k, *) -> (N, k*g, *): channel i of group j moves to j of group i"""
    return _channel_shuffle(input, groups, "channel_shuffle")


def _channel_shuffle(input, groups, op, cls=_up.ChannelShuffle):
    _at_least_3d(input, op)
    if groups <= 0:
        raise RuntimeError(f"{op}: Number of groups to divide channels in must be positive. Value of groups:{groups}")
    if input.shape[1] % groups:
        raise RuntimeError(f"{op}: Number of channels must be divisible by groups. Got {input.shape[1]} channels and "
                           f"{groups} groups.")
    return cls.apply(input, int(groups))


def native_channel_shuffle(input, groups):
    return _channel_shuffle(input, groups, "native_channel_shuffle", _up.NativeChannelShuffle)


def affine_grid(theta, size, align_corners=None):
    """The sampling grid (N, *spatial, n) of the affine maps theta (N, n, n+1) over output `size`."""
    if align_corners is None:
        align_corners = _default_align(align_corners)
    if not isinstance(theta, Tensor):
        raise TypeError(f"affine_grid(): argument 'theta' (position 1) must be Tensor, not {type(theta).__name__}")
    if not theta.is_floating_point():
        raise ValueError(f"affine_grid: Expected theta to have floating point type, but got {theta.dtype}")
    if not hasattr(size, "__len__"):
        raise TypeError(f"affine_grid: object of type '{type(size).__name__}' has no len(); size must be a list of "
                        "4 or 5 ints (N, C, H, W[, D])")
    if len(size) not in (4, 5):
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in size):
        raise TypeError(f"affine_grid(): argument 'size' (position 2) must be tuple of ints, got {size!r}")
    size = tuple(int(v) for v in size)
    n = len(size) - 2
    if theta.ndim != 3 or tuple(theta.shape[1:]) != (n, n + 1) or theta.shape[0] != size[0]:
        raise ValueError(f"Expected a batch of {n}D affine matrices of shape Nx{n}x{n + 1} for size "
                         f"{list(size)}. Got {list(theta.shape)}.")
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {list(size)}")
    return _up.AffineGridGenerator.apply(theta, size, bool(align_corners))


def _default_align(align_corners):
    if align_corners is None:
        warn_at_user_line("Default grid_sample and affine_grid behavior has changed to align_corners=False since "
                          "1.3.0. Please specify align_corners=True if the old behavior is desired. See the "
                          "documentation of grid_sample for details.")
        return False
    return bool(align_corners)


def _check_grid(input, grid):
    if input.ndim not in (4, 5) or grid.ndim != input.ndim or grid.shape[0] != input.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got input with "
                           f"sizes {list(input.shape)} and grid with sizes {list(grid.shape)} (input (N, C, H, W) "
                           "with grid (N, H_out, W_out, 2), or 5-d with a grid of 3 coordinates)")
    if grid.shape[-1] != input.ndim - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.ndim - 2} in last dimension, but got "
                           f"grid with sizes {list(grid.shape)}")
    if input.dtype is not grid.dtype:
        raise RuntimeError(f"grid_sampler(): expected input and grid to have same dtype, but input has {input.dtype} "
                           f"and grid has {grid.dtype}")


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """input (N, C, *spatial) read at grid (N, *out, n) (x, y[, z] in [-1, 1]) -> (N, C, *out)"""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    align_corners = _default_align(align_corners)
    _check_grid(input, grid)
    if mode == "bicubic" and input.ndim != 4:
        raise RuntimeError(f"grid_sampler(): bicubic interpolation only supports 4D input (got {input.ndim}D); use "
                           "mode='bilinear' or 'nearest' for 5-D input")
    cls = _gs.GridSampler2d if input.ndim == 4 else _gs.GridSampler3d
    return cls.apply(input, grid, mode, padding_mode, align_corners)


from ..ops._checks import guard_namespace as _guard_namespace  # noqa: E402
from .._api_errors import clean_namespace as _clean_namespace  # noqa: E402
__all__ = [n for n, v in list(globals().items()) if callable(v) and not n.startswith("_") and v.__module__ == __name__]
# torch's Python-level functions check their arguments in their own order (done here); the rest as torch's C++
_PYTHON_ORDER = {"interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "affine_grid", "grid_sample"}
_guard_namespace(globals(), [n for n in __all__ if n not in _PYTHON_ORDER],  # a wrong type: torch's TypeError
                 overrides={"upscale_factor": "int", "downscale_factor": "int", "groups": "int"})
_clean_namespace(globals(), __all__)  # an internal error becomes torch's kind, naming the op
