"""Resampling: interpolate's modes, adaptive average pooling, pixel/channel shuffle, affine_grid.

Every interpolation mode (nearest, nearest-exact, linear, bilinear, bicubic, trilinear, area) is
separable and linear: along each spatial dim it multiplies by a small (out, in) matrix that says
how much of each input element each output element takes. `Resample` applies one matrix per
spatial dim; its gradient applies the transposed matrices (the adjoint), so any order works (where
torch's backward kernel uses other matrices than its forward, Resample is given those too).
Antialiased bilinear and bicubic are separable and linear too: only their matrices differ.
"""
import math

import numpy as np

from .._tensor import Tensor
from . import _range_kernels
from ._op import NoDerivative, Op, unrecorded
from .linalg import Bmm


def apply_mats(x, mats):
    """Multiply the last len(mats) dims of a numpy array by mats[i] (out_i, in_i) each."""
    nd = len(mats)
    for i, m in enumerate(mats):
        d = x.ndim - nd + i
        x = np.swapaxes(np.matmul(np.swapaxes(x, d, -1), m.T.astype(x.dtype, copy=False)), d, -1)
    return x


def _transposed(mats):
    return tuple(m.T for m in mats)


class Resample(Op):
    """y = x times mats[i] along spatial dim i; d/dx multiplies by the transposed mats (by the transposed
    back_mats where torch's backward kernel does not use its forward's: see nn/_functional_interp.py).
    shown: (a scale per spatial dim, None where a size was given; align_corners), as torch's node shows them"""
    _grad_fn_name = "ResampleBackward0"
    adjoint = None  # the op of the transposed mats, which computes the backward (None: Resample itself)
    _show = None  # what the node shows (the named ops and their adjoints: see _named)

    @staticmethod
    def forward(ctx, x, mats, back_mats=None, shown=None):
        ctx.mats, ctx.back_mats, ctx.shown = mats, (mats if back_mats is None else back_mats), shown
        out = np.ascontiguousarray(apply_mats(x, mats))
        if ctx._forward_cls._show is not None:
            ctx._forward_cls._show(ctx, x.shape, out.shape, shown)
        return out

    @staticmethod
    def backward(ctx, grad):
        adjoint = ctx._forward_cls.adjoint or Resample
        # the adjoint's own backward is this op's forward kernel again (as torch's double backward)
        return adjoint.apply(grad, _transposed(ctx.back_mats), _transposed(ctx.mats), ctx.shown), None, None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return Resample.apply(t, ctx.mats)


class _KeepsInput(Resample):
    """Resample whose node saves its input, as torch's adaptive average pools (for the input's shape): pack hooks see
    it, `_saved_self` shows it, and backward frees it (a second backward raises)"""
    _saved_names = ("self",)

    @staticmethod
    def forward(ctx, x, mats, back_mats=None, shown=None):
        ctx.save_for_backward(x)
        return Resample.forward(ctx, x, mats, back_mats, shown)

    @staticmethod
    def backward(ctx, grad):
        ctx.saved_tensors  # noqa: B018 (unpacked as torch's node does: raises once freed, or if the input changed)
        return Resample.backward(ctx, grad)


_SCALES = {1: ("scales",), 2: ("scales_h", "scales_w"), 3: ("scales_d", "scales_h", "scales_w")}


def _show_scales(ctx, output_size, shown):
    """the output's spatial sizes, a scale per spatial dim (a float, None where a size was given) and align_corners,
    as torch's upsampling nodes show them"""
    scales, ctx.align_corners = shown or ((None,) * len(output_size), False)
    ctx.output_size = output_size
    ctx.__dict__.update(zip(_SCALES[len(output_size)], (None if f is None else float(f) for f in scales)))


def _upsampled(ctx, in_shape, out_shape, shown):
    """torch's upsampling node: the input's sizes too"""
    ctx.self_sym_sizes = in_shape
    _show_scales(ctx, out_shape[len(out_shape) - len(ctx.mats):], shown)


def _upsampled_back(ctx, in_shape, out_shape, shown):
    """torch's node of an upsampling's backward: the forward's output size is its gradient's"""
    _show_scales(ctx, in_shape[len(in_shape) - len(ctx.mats):], shown)


def _pooled_back(ctx, in_shape, out_shape, shown):
    """torch's node of an adaptive average pool's backward: its gradient's spatial sizes"""
    ctx.__dict__.update((f"grad_output_sym_argsize_minus_{k}", in_shape[-k]) for k in range(1, len(ctx.mats) + 1))


def _named(name):
    """The op `name` and its adjoint, each the other's backward: torch names the nodes of a second order graph
    <name>BackwardBackward0. Each shows torch's node's values (an adaptive average pool only the input it saves)"""
    nd = int(name[name.index("D") - 1])
    if name.startswith("AdaptiveAvgPool"):
        base, values, show, show_back = _KeepsInput, {}, None, _pooled_back
        back_values = {v: v for v in (f"grad_output_sym_argsize_minus_{k}" for k in range(1, nd + 1))}
    else:
        back_values = {"output_size": "output_size", **{v: v for v in _SCALES[nd]}}
        if "Nearest" not in name:
            back_values["align_corners"] = "align_corners"
        base, show, show_back = Resample, _upsampled, _upsampled_back
        values = {**back_values, "self_sym_sizes": "self_sym_sizes"}
    op = type(name, (base,), {"_grad_fn_name": name + "Backward0", "__doc__": base.__doc__, "_saved_values": values,
                              "_show": staticmethod(show) if show else None})
    op.adjoint = type(name + "Backward", (Resample,), {"_grad_fn_name": name + "BackwardBackward0", "adjoint": op,
                                                       "__doc__": Resample.__doc__, "_saved_values": back_values,
                                                       "_show": staticmethod(show_back)})
    return op


RESAMPLE = {name: _named(name) for name in (
    "UpsampleNearest1D", "UpsampleNearest2D", "UpsampleNearest3D", "UpsampleNearestExact1D",
    "UpsampleNearestExact2D", "UpsampleNearestExact3D", "UpsampleLinear1D", "UpsampleBilinear2D",
    "UpsampleBicubic2D", "UpsampleTrilinear3D", "AdaptiveAvgPool2D", "AdaptiveAvgPool3D", "UpsampleBilinear2DAa",
    "UpsampleBicubic2DAa")}


# ---- the matrices, one spatial dim at a time ---------------------------------------------------------
def _rows(out_n, in_n, cols, weights):
    """An (out, in) matrix from per-row column indices and weights (repeated columns add up)."""
    m = np.zeros((out_n, in_n))
    np.add.at(m, (np.arange(out_n)[:, None].repeat(cols.shape[1], 1), cols), weights)
    return m


def _source(out_n, in_n, scale, align_corners):
    """The source coordinate of each output element (torch's area_pixel_compute_source_index)."""
    dst = np.arange(out_n, dtype=np.float64)
    if align_corners:
        return dst * ((in_n - 1) / (out_n - 1) if out_n > 1 else 0.0)
    s = in_n / out_n if scale is None else 1.0 / scale
    return s * (dst + 0.5) - 0.5


def nearest_matrix(out_n, in_n, scale, exact, legacy=False):
    """legacy: torch's nearest_idx, which copies when out == in and takes i // 2 when out == 2 in, whatever the
    scale_factor (the backward kernels of mode 'nearest' use it, and the 2-d forward kernel)"""
    s = np.float32(in_n / out_n if scale is None else 1.0 / scale)  # torch computes this in float
    dst = np.arange(out_n, dtype=np.float32) + (np.float32(0.5) if exact else 0)
    src = np.minimum(np.floor(dst * s).astype(np.int64), in_n - 1)
    if legacy and out_n in (in_n, 2 * in_n):
        src = np.arange(out_n) // (out_n // in_n)
    return _rows(out_n, in_n, src[:, None], np.ones((out_n, 1)))


def linear_matrix(out_n, in_n, scale, align_corners):
    src = np.maximum(_source(out_n, in_n, scale, align_corners), 0.0)
    i0 = np.minimum(np.floor(src).astype(np.int64), in_n - 1)
    i1 = np.minimum(i0 + 1, in_n - 1)
    lam = src - i0
    return _rows(out_n, in_n, np.stack([i0, i1], 1), np.stack([1 - lam, lam], 1))


def _cubic(u, a):
    """Keys' cubic convolution kernel at distances u >= 0 (zero from 2 on)"""
    near = ((a + 2) * u - (a + 3)) * u * u + 1
    far = ((a * u - 5 * a) * u + 8 * a) * u - 4 * a
    return np.where(u < 1, near, np.where(u < 2, far, 0.0))


def cubic_matrix(out_n, in_n, scale, align_corners, a=-0.75):
    src = _source(out_n, in_n, scale, align_corners)
    i = np.floor(src).astype(np.int64)
    t = src - i
    w = _cubic(np.stack([t + 1, t, 1 - t, 2 - t], 1), a)
    cols = np.clip(i[:, None] + np.arange(-1, 3)[None], 0, in_n - 1)
    return _rows(out_n, in_n, cols, w)


def antialias_matrix(out_n, in_n, scale, align_corners, cubic):
    """interpolate(antialias=True): when shrinking, the triangle (bilinear) or Keys a=-0.5 (bicubic) kernel is
    stretched by the scale, so every input element inside it contributes; the weights of a row sum to 1"""
    if align_corners:
        s = (in_n - 1) / (out_n - 1) if out_n > 1 else 0.0
    else:
        s = in_n / out_n if scale is None else 1.0 / scale
    stretch = max(s, 1.0)
    support = (2.0 if cubic else 1.0) * stretch
    center = s * (np.arange(out_n) + 0.5)
    lo = np.maximum((center - support + 0.5).astype(np.int64), 0)           # torch truncates toward zero here
    hi = np.minimum((center + support + 0.5).astype(np.int64), in_n)
    j = np.arange(in_n)[None]
    u = np.abs(j - center[:, None] + 0.5) / stretch
    w = _cubic(u, -0.5) if cubic else np.maximum(1 - u, 0.0)
    w = np.where((j >= lo[:, None]) & (j < hi[:, None]), w, 0.0)
    total = w.sum(1, keepdims=True)
    return w / np.where(total == 0, 1, total)


def area_matrix(out_n, in_n):
    """adaptive average pooling: the mean over [floor(i*in/out), ceil((i+1)*in/out))"""
    i = np.arange(out_n)
    start, end = (i * in_n) // out_n, -((-(i + 1) * in_n) // out_n)
    j = np.arange(in_n)[None]
    inside = (j >= start[:, None]) & (j < end[:, None])
    return inside / np.maximum(end - start, 1)[:, None]


# ---- shuffles ---------------------------------------------------------------------------------------
def _shuffle(x, r):
    """(*, C*r*r, H, W) -> (*, C, H*r, W*r)"""
    lead, (c, h, w) = x.shape[:-3], x.shape[-3:]
    y = x.reshape(lead + (c // (r * r), r, r, h, w))
    k = len(lead)
    y = y.transpose(tuple(range(k)) + (k, k + 3, k + 1, k + 4, k + 2))
    return y.reshape(lead + (c // (r * r), h * r, w * r))


def _unshuffle(x, r):
    """(*, C, H*r, W*r) -> (*, C*r*r, H, W)"""
    lead, (c, h, w) = x.shape[:-3], x.shape[-3:]
    y = x.reshape(lead + (c, h // r, r, w // r, r))
    k = len(lead)
    y = y.transpose(tuple(range(k)) + (k, k + 2, k + 4, k + 1, k + 3))
    return y.reshape(lead + (c * r * r, h // r, w // r))


class PixelShuffle(Op):
    """a permutation of elements: its gradient is the inverse permutation, pixel_unshuffle"""
    _grad_fn_name = "PixelShuffleBackward0"
    _saved_values = {"upscale_factor": "r"}

    @staticmethod
    def forward(ctx, x, r):
        ctx.r = r
        return _shuffle(x, r)

    @staticmethod
    def backward(ctx, grad):
        return PixelUnshuffle.apply(grad, ctx.r), None

    @staticmethod
    def jvp(ctx, t, _):
        return PixelShuffle.apply(t, ctx.r)


class PixelUnshuffle(Op):
    """a permutation of elements: its gradient is the inverse permutation, pixel_shuffle"""
    _grad_fn_name = "PixelUnshuffleBackward0"
    _saved_values = {"downscale_factor": "r"}

    @staticmethod
    def forward(ctx, x, r):
        ctx.r = r
        return _unshuffle(x, r)

    @staticmethod
    def backward(ctx, grad):
        return PixelShuffle.apply(grad, ctx.r), None

    @staticmethod
    def jvp(ctx, t, _):
        return PixelUnshuffle.apply(t, ctx.r)


class ChannelShuffle(Op):
    """channels (g, C/g) -> (C/g, g): the gradient shuffles back with C/g groups"""
    _grad_fn_name = "ChannelShuffleBackward0"
    _saved_values = {"groups": "groups"}

    @staticmethod
    def forward(ctx, x, groups):
        n, c = x.shape[0], x.shape[1]
        ctx.groups, ctx.back = groups, c // groups
        y = x.reshape((n, groups, c // groups) + x.shape[2:]).swapaxes(1, 2)
        return np.ascontiguousarray(y).reshape(x.shape)

    @staticmethod
    def backward(ctx, grad):
        return ChannelShuffle.apply(grad, ctx.back), None

    @staticmethod
    def jvp(ctx, t, _):
        return ChannelShuffle.apply(t, ctx.inputs[1])


class NativeChannelShuffle(NoDerivative):
    """native_channel_shuffle: channel_shuffle's values with no derivative (torch's node is NotImplemented; its
    backward raises, naming the op)"""
    _grad_fn_name = "torch::autograd::NotImplemented"

    @staticmethod
    def forward(ctx, x, groups):
        return ChannelShuffle.forward(ctx, x, groups)

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("derivative for aten::native_channel_shuffle is not implemented: use channel_shuffle, "
                           "whose gradient shuffles back")

    @staticmethod
    def jvp(ctx, t, _groups):
        raise RuntimeError("derivative for aten::native_channel_shuffle is not implemented (forward mode)")


# ---- affine_grid --------------------------------------------------------------------------------------
def _linspace(steps, align_corners, dtype):
    """torch's linspace_from_neg_one: its linspace(-1, 1, steps) in the dtype (filled from both ends), times
    steps - 1 then divided by steps without align_corners (two roundings); a single step is 0"""
    if steps <= 1:
        return np.zeros(max(steps, 0), dtype)
    t = dtype.type
    values = _range_kernels.linspace(t(-1), t(1), steps, dtype)
    return values if align_corners else values * t(steps - 1) / t(steps)


def base_grid(size, align_corners, dtype=np.dtype(np.float64)):
    """(prod(spatial), n+1): the normalized (x, y[, z], 1) of every output location, in dtype (as torch builds it)"""
    spatial = size[2:]
    axes = np.meshgrid(*[_linspace(s, align_corners, dtype) for s in spatial], indexing="ij")
    cols = [a.ravel() for a in reversed(axes)] + [np.ones(math.prod(spatial), dtype)]
    return np.stack(cols, 1)


def _kernel_dtype(dtype):
    """the dtype the products are computed in: float32 for the ones numpy has no linspace kernel of"""
    return dtype if dtype in (np.float16, np.float32, np.float64) else np.dtype(np.float32)


def _products_in_order(a, b, axis):
    """sum over `axis` of the products a * b (broadcast), added one after another from 0, as torch's bmm adds
    these thin products (its own loop for the small, the BLAS's for the others: both in order)"""
    products = np.moveaxis(a * b, axis, 0)
    total = np.zeros(products.shape[1:], products.dtype)
    for term in products:  # (a handful of terms here; the backward's many go through _column_sums)
        total = total + term
    return total


def _column_sums(products):
    """(P, ...) -> the sum over P, row after row (numpy adds the rows of a C-ordered array in turn), from 0"""
    rows = np.ascontiguousarray(products.reshape(products.shape[0], -1))
    total = np.add.reduce(np.concatenate([np.zeros((1, rows.shape[1]), rows.dtype), rows]), axis=0)
    return total.reshape(products.shape[1:])


class _BmmInOrder(Bmm):
    """torch's bmm of the base grid with the grid's gradient (the gradient of theta): each sum in order"""
    _grad_fn_name = "BmmBackward0"
    in_order = staticmethod(lambda a, b: _column_sums(np.moveaxis(a[:, :, :, None] * b[:, None, :, :], 2, 0)))


class AffineGridGenerator(Op):
    """grid = base @ theta^T (linear in theta): d theta = (base^T @ g)^T, summed in torch's order"""
    _grad_fn_name = "AffineGridGeneratorBackward0"
    _saved_values = {"align_corners": "align_corners", "size": "size"}

    @staticmethod
    def forward(ctx, theta, size, align_corners):
        dtype = _kernel_dtype(theta.dtype)
        base = base_grid(size, align_corners, dtype)
        ctx.base, ctx.size, ctx.align_corners = base, size, align_corners
        # (N, P, n): grid[n, p, k] = sum_j base[p, j] * theta[n, k, j], j in order
        grid = _products_in_order(base[None, :, None, :], theta.astype(dtype)[:, None, :, :], axis=3)
        return grid.reshape((size[0],) + tuple(size[2:]) + (len(size) - 2,)).astype(theta.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        n, k = ctx.size[0], len(ctx.size) - 2
        dtype = grad._data.dtype
        base = ctx.base.astype(_kernel_dtype(dtype), copy=False)
        if unrecorded(grad):  # (torch's (base^T @ g)^T: the transpose of a contiguous (N, n+1, n))
            g = grad._data.reshape(n, -1, k).astype(base.dtype, copy=False)
            sums = _column_sums(np.moveaxis(base[None, :, :, None] * g[:, :, None, :], 1, 0))
            return Tensor._make(np.ascontiguousarray(sums.astype(dtype, copy=False)).transpose(0, 2, 1)), None, None
        base_t = Tensor._make(np.ascontiguousarray(np.broadcast_to(base, (n,) + base.shape)).transpose(0, 2, 1))
        return _BmmInOrder.apply(base_t, grad.view(n, -1, k)).transpose(1, 2), None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return AffineGridGenerator.apply(t, *ctx.inputs[1:])
