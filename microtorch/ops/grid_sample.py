"""grid_sample: read an image at the (x, y[, z]) locations of a grid: bilinearly, bicubically (2-d) or at
the nearest pixel.

out[n, c, p] = sum over the taps e around location p of  w_e(p) * x[n, c, tap_e(p)]: the 2^d corners
with weights that are products of the fractional parts (bilinear), the 4x4 neighbours with products
of cubic convolution weights (bicubic, torch's a = -0.75), or a single 1 (nearest). The source
coordinate of every location is a piecewise-affine function of the grid (unnormalized, then clipped
or reflected by padding_mode; bicubic pads its taps instead): on its piece, coordinate = a * grid + b,
and forward keeps a and b so that backward can rebuild the coordinates as Tensor ops of the grid.
Backward is then written with Tensor ops (and TakeFlat/PutFlatAdd), so it differentiates again.
"""
import itertools

import numpy as np

from .._tensor import Tensor
from ._op import Op
from .pool_more import PutFlatAdd, TakeFlat
from .shape import stack


def _reflect(c, a, size, align_corners):
    """torch's reflect_coordinates: fold c into [lo, lo + span] by mirror images (a: dc/dgrid)."""
    lo, span = (0.0, size - 1.0) if align_corners else (-0.5, float(size))
    if span <= 0:
        return np.zeros_like(c), np.zeros_like(a)
    sign = np.where(c < lo, -1.0, 1.0)
    u = np.abs(c - lo)
    flips = np.floor(u / span)
    extra = u - flips * span
    even = flips % 2 == 0
    return np.where(even, extra + lo, span - extra + lo), a * sign * np.where(even, 1.0, -1.0)


def source_coords(grid, sizes, align_corners, padding_mode):
    """Per spatial dim (in D, H, W order): the source coordinate c and its slope a = dc/dgrid."""
    n, out = len(sizes), []
    for d, size in enumerate(sizes):
        g = grid[..., n - 1 - d].astype(np.float64)
        scale = (size - 1) / 2 if align_corners else size / 2
        c = (g + 1) * scale - (0.0 if align_corners else 0.5)
        a = np.full(g.shape, scale)
        if padding_mode == "reflection":
            c, a = _reflect(c, a, size, align_corners)
        if padding_mode != "zeros":
            a = np.where((c > 0) & (c < size - 1), a, 0.0)  # clipped: the coordinate stops moving
            c = np.clip(c, 0, size - 1)
        out.append((c, a))
    return out


def _padded_tap(p, size, padding_mode, align_corners):
    """bicubic reads its taps through the padding: clipped into the image, or reflected first"""
    if padding_mode == "reflection":
        p = _reflect(p, 0.0, size, align_corners)[0]
    return np.clip(p, 0, size - 1) if padding_mode != "zeros" else p


def corners(coords, sizes, channels, mode, padding_mode, align_corners):
    """[(flat index per plane (N, C, *out), in-bounds mask (N, *out), tap offsets)] and floor(c) per dim."""
    base = [np.rint(c) if mode == "nearest" else np.floor(c) for c, _ in coords]
    strides = [int(np.prod(sizes[d + 1:])) for d in range(len(sizes))]
    taps = {"nearest": (0,), "bilinear": (0, 1), "bicubic": (-1, 0, 1, 2)}[mode]
    out = []
    for e in itertools.product(taps, repeat=len(sizes)):
        at = [b + k for b, k in zip(base, e)]
        if mode == "bicubic":
            at = [_padded_tap(p, s, padding_mode, align_corners) for p, s in zip(at, sizes)]
        valid = np.all([(p >= 0) & (p < s) for p, s in zip(at, sizes)], axis=0)
        flat = sum(np.clip(p, 0, s - 1).astype(np.int64) * st for p, s, st in zip(at, sizes, strides))
        flat = np.broadcast_to(flat[:, None], (flat.shape[0], channels) + flat.shape[1:])
        out.append((flat, valid, e))
    return out, base


_A = -0.75  # torch's bicubic grid_sample (interpolate's antialias uses -0.5)


def _near(u):
    """cubic convolution weight at distance u in [0, 1], and its derivative"""
    return ((_A + 2) * u - (_A + 3)) * u * u + 1, (3 * (_A + 2) * u - 2 * (_A + 3)) * u


def _far(u):
    """cubic convolution weight at distance u in [1, 2], and its derivative"""
    return ((_A * u - 5 * _A) * u + 8 * _A) * u - 4 * _A, (3 * _A * u - 10 * _A) * u + 8 * _A


def _kernel(f, k, mode):
    """the 1-d weight of tap k (its offset from floor(c)) at fractional part f (array or Tensor), and its d/df"""
    if mode != "bicubic":
        return (f, 1.0) if k else (1 - f, -1.0)
    if k in (0, 1):
        w, dw = _near(f if k == 0 else 1 - f)
        return w, (dw if k == 0 else -dw)
    w, dw = _far(f + 1 if k == -1 else 2 - f)
    return w, (dw if k == -1 else -dw)


def _weight(frac, e, mode, skip=None):
    """prod over dims d != skip of tap e_d's weight, with frac as arrays or Tensors"""
    w = 1.0
    for d, (f, k) in enumerate(zip(frac, e)):
        if d != skip:
            w = w * _kernel(f, k, mode)[0]
    return w


class GridSampler(Op):
    """out = sum_e w_e(grid) x[corner_e(grid)]: d/dx puts g*w_e at the corners, d/dgrid = g . x dw_e/dgrid"""
    _grad_fn_name = None  # GridSampler2DBackward0 / GridSampler3DBackward0
    _saved_names = ("input", "grid")  # (packed grid first, by name, as torch's)
    _saved_values = {"interpolation_mode": "interpolation_mode", "padding_mode": "padding_mode",
                     "align_corners": "align_corners"}

    @staticmethod
    def forward(ctx, x, grid, mode, padding_mode, align_corners):
        ctx.interpolation_mode = ("bilinear", "nearest", "bicubic").index(mode)  # (ATen's codes, as torch shows them)
        ctx.padding_mode = ("zeros", "border", "reflection").index(padding_mode)
        ctx.align_corners = align_corners
        sizes = x.shape[2:]
        # (bicubic pads its taps, not the coordinate: the coordinate is only unnormalized)
        coords = source_coords(grid, sizes, align_corners, padding_mode if mode != "bicubic" else "zeros")
        ctx.corners, base = corners(coords, sizes, x.shape[1], mode, padding_mode, align_corners)
        ctx.slopes = [(a, c - a * grid[..., len(sizes) - 1 - d]) for d, (c, a) in enumerate(coords)]
        ctx.base, ctx.mode = base, mode
        ctx.save_for_backward(x, grid)
        frac = [c - b for (c, _), b in zip(coords, base)]
        out = 0
        for flat, valid, e in ctx.corners:
            w = (_weight(frac, e, mode) if mode != "nearest" else 1.0) * valid
            v = np.take_along_axis(x.reshape(x.shape[0], x.shape[1], -1), flat.reshape(flat.shape[:2] + (-1,)), 2)
            out = out + v.reshape(flat.shape) * w[:, None]
        return np.asarray(out, dtype=x.dtype)

    @staticmethod
    def backward(ctx, grad):
        x, grid = ctx.saved_tensors
        frac, rows = _pieces(ctx, grid)
        gx = ggrid = None
        if ctx.needs_input_grad[0]:
            gx = 0
            for (flat, valid, e), w in zip(ctx.corners, rows):
                gx = gx + PutFlatAdd.apply(grad * w.unsqueeze(1), flat, tuple(x.shape), len(ctx.base))
        if ctx.needs_input_grad[1]:
            dc = _dvalue_dcoords(ctx, x, frac, lambda v: (grad * v).sum(1))
            n = len(dc)
            ggrid = stack([dc[n - 1 - k] * Tensor._make(ctx.slopes[n - 1 - k][0].astype(grad._data.dtype))
                           for k in range(n)], -1)
        return gx, ggrid, None, None, None

    @staticmethod
    def jvp(ctx, tx, tgrid, *_):
        x, grid = ctx.inputs[:2]
        cls = GridSampler2d if grid.ndim == 4 else GridSampler3d
        out = cls.apply(tx, grid, *ctx.inputs[2:]) if tx is not None else 0
        if tgrid is None or ctx.mode == "nearest":
            return out
        frac, _ = _pieces(ctx, grid)
        dc = _dvalue_dcoords(ctx, x, frac, lambda v: v, channel_dim=True)
        n = len(dc)
        for d in range(n):
            slope = Tensor._make(ctx.slopes[d][0].astype(x._data.dtype))
            out = out + dc[d] * (tgrid.select(-1, n - 1 - d) * slope).unsqueeze(1)
        return out


def _pieces(ctx, grid):
    """The fractional parts (Tensors of the grid) and each corner's weight times its mask."""
    n, dt = len(ctx.base), grid._data.dtype
    frac = []
    for d in range(n):
        a, b = ctx.slopes[d]
        c = grid.select(-1, n - 1 - d) * Tensor._make(a.astype(dt)) + Tensor._make(b.astype(dt))
        frac.append(c - Tensor._make(ctx.base[d].astype(dt)))
    rows = []
    for flat, valid, e in ctx.corners:
        w = _weight(frac, e, ctx.mode) if ctx.mode != "nearest" else Tensor._make(np.ones(valid.shape, dt))
        rows.append(w * Tensor._make(valid.astype(dt)))
    return frac, rows


def _dvalue_dcoords(ctx, x, frac, reduce, channel_dim=False):
    """d out / d coordinate_d for each spatial dim d, reduced over channels by `reduce`."""
    n, dt = len(ctx.base), x._data.dtype
    dc = [0] * n
    if ctx.mode == "nearest":
        return [Tensor._make(np.zeros(ctx.corners[0][1].shape, dt))] * n
    for flat, valid, e in ctx.corners:
        mask = valid.astype(dt)[:, None] if channel_dim else valid.astype(dt)
        v = reduce(TakeFlat.apply(x, flat, n)) * Tensor._make(mask)
        for d in range(n):
            w = _weight(frac, e, ctx.mode, skip=d) * _kernel(frac[d], e[d], ctx.mode)[1]
            w = w.unsqueeze(1) if channel_dim and isinstance(w, Tensor) else w
            dc[d] = dc[d] + v * w
    return dc


class GridSampler2d(GridSampler):
    _grad_fn_name = "GridSampler2DBackward0"


class GridSampler3d(GridSampler):
    _grad_fn_name = "GridSampler3DBackward0"
