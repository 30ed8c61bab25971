"""grid_sample: read an image at the (x, y[, z]) locations of a grid: bilinearly, bicubically (2-d) or at
the nearest pixel, rounding as torch 2.13's CPU kernels round, so that values and gradients are its bits.

out[n, c, p] = sum over the taps e around location p of  w_e(p) * x[n, c, tap_e(p)]: the 2^d corners
with weights that are products of the fractional parts (bilinear), the 4x4 neighbours with products
of cubic convolution weights (bicubic, torch's a = -0.75), or a single 1 (nearest). The source
coordinate of every location is a piecewise-affine function of the grid (unnormalized, then clipped
or reflected by padding_mode; bicubic pads its taps instead).

torch has two kernels, which round differently:
- 2-d: vector registers, compiled with fused multiply-adds. The unnormalization (g + 1) * size/2 - 0.5 is
  one fused step, and so are some of the products in the weighted sums: which ones the compiler fused was
  found by comparing with torch, and each formula below says (for bicubic's backward it differs between
  the kernel that computes the input's gradient and the one that does not: see _contracted). Its backward
  adds into the input's gradient one group of lanes at a time: the group's north-west corners, then its
  north-east ones, and so on.
- 3-d: one location at a time, without fused steps: ((g + 1) * size - 1) / 2, weights that are products of
  three distances, sums in corner order.
Known differences: bicubic with a grid that is not contiguous goes through other copies of torch's loop,
compiled with other fusions: its values can differ from torch's in the last bit there. float16 (and other
dtypes without a kernel here) is computed in float32 and rounded once, where torch rounds every step.
A backward without a graph (the usual one) runs these kernels in numpy. With create_graph, or for a
forward-mode tangent, it is written with Tensor ops (and TakeFlat/PutFlatAdd), so that it differentiates
again: on the piece of the grid where each location falls, coordinate = a * grid + b, and the Tensor ops
rebuild the coordinates from the grid (those values agree with torch's to rounding, not to the bit).
"""
import itertools

import numpy as np

from .._fma import fma
from .._tensor import Tensor
from ._op import Op, unrecorded
from .pool_more import PutFlatAdd, TakeFlat
from .shape import stack

# the registers of torch's 2-d kernel: 32 bytes (8 floats, 4 doubles a lane group), as its AVX2 build has them;
# torch 2.13 runs that build on AVX-512 machines too (measured: the input's gradient adds in groups of 8 floats)
_LANE_BYTES = 32
_KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _fused(a, b, c, dtype):
    """a * b + c rounded once, in dtype"""
    return np.asarray(fma(a, b, c), dtype)


# ---- the 2-d kernel's coordinates: vector arithmetic, fused -------------------------------------------------
def _unnormalized_fused(g, size, align_corners):
    """[-1, 1] -> pixel coordinates, and the scale (d coordinate / d grid)"""
    t = g.dtype.type
    if align_corners:
        scale = t(size - 1) / t(2)
        return (g + t(1)) * scale, scale
    scale = t(size) / t(2)
    return _fused(g + t(1), scale, t(-0.5), g.dtype), scale


def _reflect_fused(c, size, align_corners):
    """fold c into the image by mirror images, and the sign of d folded / d c. (The vector kernel folds by twice
    the span: one flip more where the rest is past the middle.)"""
    t = c.dtype.type
    if align_corners and size <= 1:
        return np.zeros_like(c), np.zeros_like(c)
    twice_span = t(size - 1) * t(2) if align_corners else t(size) * t(2)
    shifted = c if align_corners else c - t(-0.5)
    folded = np.abs(shifted)
    flips = np.trunc(folded / twice_span)
    extra = _fused(-flips, twice_span, folded, c.dtype)
    mirrored = twice_span - extra
    flip = extra > mirrored
    value = np.where(flip, mirrored, extra)
    sign = np.where(flip ^ (shifted < 0), t(-1), t(1))
    return (value if align_corners else value + t(-0.5)), sign


def _clip_fused(c, size, keep_nan):
    """clip c to [0, size - 1], and where it moves with the grid (strictly inside). The forward's clamp turns NaN
    into 0; the backward's maximum and minimum keep it."""
    t = c.dtype.type
    top = t(size - 1)
    above = (c > 0) | np.isnan(c) if keep_nan else c > 0
    low = np.where(above, c, t(0))
    clipped = np.where((low < top) | (keep_nan & np.isnan(low)), low, top)
    return clipped, (low != 0) & (clipped != top)


def _location_fused(g, size, padding_mode, align_corners, backward=False):
    """(coordinate, slope d coordinate / d grid) of the 2-d kernel for one spatial dim"""
    c, scale = _unnormalized_fused(g, size, align_corners)
    slope = np.full(c.shape, scale)
    if padding_mode == "reflection":
        c, sign = _reflect_fused(c, size, align_corners)
        slope = sign * scale
    if padding_mode != "zeros":
        c, inside = _clip_fused(c, size, keep_nan=backward)
        slope = np.where(inside, slope, c.dtype.type(0))
    return c, slope


# ---- the 3-d kernel's coordinates: one at a time, not fused ------------------------------------------------
def _unnormalized_plain(g, size, align_corners):
    t = g.dtype.type
    if align_corners:
        return (g + t(1)) / t(2) * t(size - 1), t(size - 1) / t(2)
    return ((g + t(1)) * t(size) - t(1)) / t(2), t(size) / t(2)


def _reflect_plain(c, size, align_corners):
    """fold c into [low, low + span] by mirror images (C's fmod and floor), and the sign of d folded / d c"""
    t = c.dtype.type
    twice_low, twice_high = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
    if twice_low == twice_high:
        return np.zeros_like(c), np.zeros_like(c)
    low, span = t(twice_low) / t(2), t(twice_high - twice_low) / t(2)
    shifted = c - low
    folded = np.abs(shifted)
    extra = np.fmod(folded, span)
    flips = np.floor(folded / span)
    odd = (np.abs(flips) < 2.0 ** 31) & (np.fmod(flips, 2) != 0)  # (C's int of a larger one: INT_MIN, even)
    value = np.where(odd, span - extra + low, extra + low)
    sign = np.where(odd ^ (shifted < 0), t(-1), t(1))
    return value, sign


def _clip_plain(c, size, backward):
    """std::min(size - 1, std::max(c, 0)) (NaN becomes size - 1); the backward's version keeps NaN and counts
    the edges as outside"""
    t = c.dtype.type
    top = t(size - 1)
    if backward:
        inside = ~((c <= 0) | (c >= top))
        return np.where(c <= 0, t(0), np.where(c >= top, top, c)), inside
    low = np.where(c < 0, t(0), c)
    return np.where(low < top, low, top), None


def _location_plain(g, size, padding_mode, align_corners, backward=False):
    """(coordinate, slope) of the 3-d kernel for one spatial dim"""
    c, scale = _unnormalized_plain(g, size, align_corners)
    slope = np.full(c.shape, scale)
    if padding_mode == "reflection":
        c, sign = _reflect_plain(c, size, align_corners)
        slope = slope * sign
    if padding_mode != "zeros":
        c, inside = _clip_plain(c, size, backward)
        if backward:
            slope = slope * inside.astype(c.dtype)
    return c, slope


def torch_coords(grid, sizes, padding_mode, align_corners, backward=False):
    """Per spatial dim (in D, H, W order): torch's source coordinate and its slope, as the 2-d (fused) or 3-d
    kernel computes them"""
    n = len(sizes)
    location = _location_fused if n == 2 else _location_plain
    return [location(grid[..., n - 1 - d], size, padding_mode, align_corners, backward)
            for d, size in enumerate(sizes)]


# ---- reading the image --------------------------------------------------------------------------------------
def _planes(x):
    """(N, C, *spatial) -> (N, C, S)"""
    return x.reshape(x.shape[:2] + (int(np.prod(x.shape[2:])),))


def _tap(base, offset, size, checked):
    """the integer index base + offset (floats holding whole numbers), and whether it is read: where `checked`,
    if it lies in [0, size); else where finite (the 2-d kernel reads a clipped coordinate unchecked; a NaN
    one, out of its bounds, is read here as outside)"""
    at = base + offset
    valid = (at >= 0) & (at < size) if checked else np.isfinite(at)
    return np.where(valid, at, 0).astype(np.int64), valid


def _read(planes, index, valid):
    """planes (N, C, S) at flat indices (N, P), 0 where not valid -> (N, C, P)"""
    values = np.take_along_axis(planes, np.where(valid, index, 0)[:, None, :], 2)
    return np.where(valid[:, None, :], values, planes.dtype.type(0))


def _corner_taps(coords, sizes, checked):
    """floor(c) per dim, and per corner (all 0/1 offsets, the last dim fastest): (flat index, valid). Unchecked
    (the 2-d kernel's border and reflection), only the index past the floor is checked against the size."""
    bases = [np.floor(c) for c in coords]
    strides = [int(np.prod(sizes[d + 1:])) for d in range(len(sizes))]
    taps = []
    for offsets in itertools.product((0, 1), repeat=len(sizes)):
        flat, valid = 0, True
        for base, k, size, stride in zip(bases, offsets, sizes, strides):
            at, ok = _tap(base, k, size, checked or k == 1)
            flat, valid = flat + at * stride, valid & ok
        taps.append((flat, valid, offsets))
    return bases, taps


# ---- 2-d bilinear -----------------------------------------------------------------------------------------------
def _bilinear_2d_setup(x, grid, padding_mode, align_corners, backward):
    """the distances (w, e, n, s) to the four sides, the slopes, the four weights and the corners' taps"""
    (cy, ay), (cx, ax) = torch_coords(grid, x.shape[2:], padding_mode, align_corners, backward)
    one = x.dtype.type(1)
    bases, taps = _corner_taps([cy, cx], x.shape[2:], padding_mode == "zeros")
    w = cx - bases[1]
    n = cy - bases[0]
    e, s = one - w, one - n
    weights = [s * e, s * w, n * e, n * w]  # nw, ne, sw, se
    return (w, e, n, s), (ax, ay), weights, taps


def _bilinear_2d(x, grid, padding_mode, align_corners):
    """nw + ne + sw + se, each value times its weight: every product after the first fused into the sum"""
    _, _, weights, taps = _bilinear_2d_setup(x, grid, padding_mode, align_corners, False)
    planes = _planes(x)
    vals = [_read(planes, flat, valid) for flat, valid, _ in taps]
    out = vals[0] * weights[0][:, None]
    for v, wt in zip(vals[1:], weights[1:]):
        out = _fused(v, wt[:, None], out, x.dtype)
    return out


def _bilinear_2d_backward(grad, x, grid, padding_mode, align_corners, scatter):
    """d input: each corner's weight * grad; d grid: per channel, gx += ((ne - nw) * s + (se - sw) * n) * grad
    (the second product and the last fused), likewise gy, then times the slopes"""
    (w, e, n, s), (ax, ay), weights, taps = _bilinear_2d_setup(x, grid, padding_mode, align_corners, True)
    planes = _planes(x)
    nw, ne, sw, se = [_read(planes, flat, valid) for flat, valid, _ in taps]
    dt = x.dtype
    along_x = _fused(se - sw, n[:, None], (ne - nw) * s[:, None], dt)
    along_y = _fused(se - ne, w[:, None], (sw - nw) * e[:, None], dt)
    gx = gy = np.zeros(w.shape, dt)
    for c in range(x.shape[1]):
        gx = _fused(along_x[:, c], grad[:, c], gx, dt)
        gy = _fused(along_y[:, c], grad[:, c], gy, dt)
    gin = scatter and scatter([(wt[:, None] * grad, flat, valid) for wt, (flat, valid, _) in zip(weights, taps)])
    return gin, np.stack([gx * ax, gy * ay], -1)


# ---- nearest ------------------------------------------------------------------------------------------------------
def _nearest_taps(x_shape, grid, padding_mode, align_corners, backward=False):
    """the nearest pixel of every location (round half to even): (flat index, valid)"""
    sizes = x_shape[2:]
    flat, valid = 0, True
    checked = padding_mode == "zeros" or len(sizes) == 3  # (the 3-d kernel checks every index)
    backward = backward and len(sizes) == 3  # (the 2-d kernel's backward finds them as its forward does)
    for d, (c, _) in enumerate(torch_coords(grid, sizes, padding_mode, align_corners, backward)):
        at, ok = _tap(np.rint(c), 0, sizes[d], checked)
        flat, valid = flat + at * int(np.prod(sizes[d + 1:])), valid & ok
    return flat, valid


def _nearest(x, grid, padding_mode, align_corners):
    return _read(_planes(x), *_nearest_taps(x.shape, grid, padding_mode, align_corners))


def _nearest_backward(grad, x, grid, padding_mode, align_corners, scatter):
    """grad added at each location's nearest pixel; the grid's gradient is 0"""
    gin = scatter and scatter([(grad,) + _nearest_taps(x.shape, grid, padding_mode, align_corners, True)])
    return gin, np.zeros(grid.shape, x.dtype)


# ---- 2-d bicubic ------------------------------------------------------------------------------------------------
_A = -0.75  # torch's bicubic grid_sample (interpolate's antialias uses -0.5)


def _step(a, b, c, fused, dt):
    """a * b + c: rounded once where the compiler fused it, else twice"""
    return _fused(a, b, c, dt) if fused else a * b + c


def _cubic_weights(t, far_fused=False):
    """the four taps' cubic convolution weights at fractional part t: the near ones' steps fused, the far ones'
    only in some of the backward kernels (see _contracted)"""
    a, dt, one = t.dtype.type(_A), t.dtype, t.dtype.type(1)

    def near(u):
        return _fused(_fused(a + 2, u, -(a + 3), dt) * u, u, one, dt)

    def far(u):
        return _step(_step(_step(a, u, -5 * a, far_fused, dt), u, 8 * a, far_fused, dt), u, -4 * a, far_fused, dt)
    return [far(t + one), near(t), near(one - t), far(2 - t)]


def _cubic_slopes(t, fused):
    """d weight / d t for the four taps"""
    a, dt = t.dtype.type(_A), t.dtype
    u0, u1, u2, u3 = -1 - t, 0 - t, 1 - t, 2 - t
    return [_step(_step(-3 * a, u0, -10 * a, fused, dt), u0, -8 * a, fused, dt),
            _step(-3 * (a + 2), u1, -2 * (a + 3), fused, dt) * u1,
            _step(3 * (a + 2), u2, -2 * (a + 3), fused, dt) * u2,
            _step(_step(3 * a, u3, -10 * a, fused, dt), u3, 8 * a, fused, dt)]


def _contracted(dtype, padding_mode, need_input):
    """whether the bicubic backward kernel fuses the far weights' and the slopes' steps: the compiler chose per
    kernel (found by comparing with torch): only those that leave the input's gradient out, but the float64
    reflection one"""
    return not need_input and not (dtype == np.float64 and padding_mode == "reflection")


def _padded_taps(base, size, padding_mode, align_corners):
    """the taps floor - 1 ... floor + 2 of one dim, read through the padding: (index, valid) each"""
    out = []
    for k in (-1, 0, 1, 2):
        at = base + k
        if padding_mode == "reflection":
            at = _reflect_fused(at, size, align_corners)[0]
        if padding_mode != "zeros":
            at = _clip_fused(at, size, keep_nan=False)[0]
        out.append(_tap(np.trunc(at), 0, size, padding_mode == "zeros"))
    return out


def _bicubic_setup(x, grid, padding_mode, align_corners, backward=False, need_input=False):
    """per dim x, y: (weights, their slopes (backward), the scale, the four taps); the coordinates are only
    unnormalized"""
    fused = backward and _contracted(x.dtype, padding_mode, need_input)
    dims = []
    for d, size in ((0, x.shape[3]), (1, x.shape[2])):
        c, scale = _unnormalized_fused(grid[..., d], size, align_corners)
        base = np.floor(c)
        t = c - base
        dims.append((_cubic_weights(t, fused), _cubic_slopes(t, fused) if backward else None, scale,
                     _padded_taps(base, size, padding_mode, align_corners)))
    return dims


def _bicubic_values(x, taps_x, taps_y):
    """values[j][i]: the image at tap (x_i, y_j), 0 outside -> (N, C, P) each; the taps' (index, valid)"""
    planes, width = _planes(x), x.shape[3]
    taps = [[(iy * width + ix, vy & vx) for ix, vx in taps_x] for iy, vy in taps_y]
    return [[_read(planes, *tap) for tap in row] for row in taps], taps


def _bicubic(x, grid, padding_mode, align_corners):
    """per row w0 v0 + w1 v1 + w2 v2 + w3 v3 along x (only the first product fused), then the rows along y
    (every product after the first fused)"""
    (wx, _, _, tx), (wy, _, _, ty) = _bicubic_setup(x, grid, padding_mode, align_corners)
    values, _ = _bicubic_values(x, tx, ty)
    dt = x.dtype
    wx = [w[:, None] for w in wx]
    rows = [(_fused(wx[0], v[0], wx[1] * v[1], dt) + wx[2] * v[2]) + wx[3] * v[3] for v in values]
    out = wy[0][:, None] * rows[0]
    for w, row in zip(wy[1:], rows[1:]):
        out = _fused(w[:, None], row, out, dt)
    return out


def _bicubic_backward(grad, x, grid, padding_mode, align_corners, scatter):
    """per channel and tap (x outer, y inner): d input += grad * wx * wy; gx -= value * grad * dwx * wy (the last
    product fused into the difference), likewise gy; then times the scales"""
    (wx, sx, kx, tx), (wy, sy, ky, ty) = _bicubic_setup(x, grid, padding_mode, align_corners, True, scatter is not None)
    values, taps = _bicubic_values(x, tx, ty)
    dt = x.dtype
    gx = gy = np.zeros(wx[0].shape, dt)
    for c in range(x.shape[1]):
        g = grad[:, c]
        for i, j in itertools.product(range(4), range(4)):
            value_grad = values[j][i][:, c] * g
            gx = _fused(-(value_grad * sx[i]), wy[j], gx, dt)
            gy = _fused(-(value_grad * sy[j]), wx[i], gy, dt)
    gin = scatter and scatter([(grad * wx[i][:, None] * wy[j][:, None],) + taps[j][i]
                               for i, j in itertools.product(range(4), range(4))])
    return gin, np.stack([gx * kx, gy * ky], -1)


# ---- 3-d bilinear -----------------------------------------------------------------------------------------------
def _trilinear_setup(x, grid, padding_mode, align_corners, backward):
    """coordinates and slopes (D, H, W order); per dim the distances (base + 1 - c, c - base), the factors of
    the corners below and above; the corners"""
    coords = torch_coords(grid, x.shape[2:], padding_mode, align_corners, backward)
    bases, taps = _corner_taps([c for c, _ in coords], x.shape[2:], True)
    one = x.dtype.type(1)
    factors = [((b + one) - c, c - b) for (c, _), b in zip(coords, bases)]
    return coords, factors, taps


def _corner_weight(factors, offsets, skip=None, start=None):
    """start (if given) times a corner's factors, x's first, then y's, then z's (leaving out dim `skip`)"""
    w = start
    for d in reversed(range(len(factors))):
        if d != skip:
            f = factors[d][offsets[d]]
            w = f if w is None else w * f
    return w


def _trilinear(x, grid, padding_mode, align_corners):
    """0 + each valid corner's value times its weight, in corner order"""
    _, factors, taps = _trilinear_setup(x, grid, padding_mode, align_corners, False)
    planes = _planes(x)
    out = np.zeros((x.shape[0], x.shape[1]) + taps[0][0].shape[1:], x.dtype)
    for flat, valid, offsets in taps:
        step = _read(planes, flat, valid) * _corner_weight(factors, offsets)[:, None]
        out = np.where(valid[:, None], out + step, out)
    return out


def _trilinear_backward(grad, x, grid, padding_mode, align_corners, scatter):
    """d input: weight * grad at each corner; d grid: per channel and valid corner, g_d -+= value * (the other
    dims' factors) * grad, then times the slope"""
    coords, factors, taps = _trilinear_setup(x, grid, padding_mode, align_corners, True)
    planes, dt, nd = _planes(x), x.dtype, len(factors)
    values = [_read(planes, flat, valid) for flat, valid, _ in taps]
    sums = [np.zeros(coords[0][0].shape, dt) for _ in range(nd)]
    for c in range(x.shape[1]):
        for v, (flat, valid, offsets) in zip(values, taps):
            for d in range(nd):
                step = _corner_weight(factors, offsets, skip=d, start=v[:, c]) * grad[:, c]
                sums[d] = np.where(valid, sums[d] + step if offsets[d] else sums[d] - step, sums[d])
    gin = scatter and scatter([(_corner_weight(factors, offsets)[:, None] * grad, flat, valid)
                               for flat, valid, offsets in taps])
    return gin, np.stack([coords[d][1] * sums[d] for d in reversed(range(nd))], -1)


# ---- adding into the input's gradient in torch's order -------------------------------------------------------
def _contiguous(sizes, strides):
    """at::geometry_is_contiguous: the strides of a contiguous layout (sizes of 1 do not count)"""
    expected = 1
    for size, stride in zip(reversed(sizes), reversed(strides)):
        if size == 0:
            return True
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True


def _lane_slots(grid):
    """the 2-d kernel's walk over a grid slice (N, H, W, 2): (groups, lanes) of location indices, -1 for an
    empty lane. A slice stored (H, W, 2) contiguously, or whose x and y planes are each contiguous, is walked
    flat in groups of lanes; any other layout row by row."""
    _, h, w, _ = grid.shape
    lanes = _LANE_BYTES // grid.itemsize
    strides = [s // grid.itemsize for s in grid.strides[1:]]
    flat = _contiguous((h, w, 2), strides) or ((strides[1] == 1 or w == 1) and _contiguous((h, w), strides[:2]))
    rows, length = (1, h * w) if flat else (h, w)
    at = np.arange(-(-length // lanes) * lanes)
    slots = np.arange(rows)[:, None] * length + at[None, :]
    return np.where(at[None, :] < length, slots, -1).reshape(-1, lanes)


def _scatter_in_lanes(parts, x_shape, grid):
    """zeros(x_shape) with parts [(value (N, C, P), flat index (N, P), valid (N, P))] added as the 2-d kernel
    adds them: lane group by lane group, within a group part by part, within a part lane by lane"""
    slots = _lane_slots(grid)
    filled = slots >= 0
    take = np.where(filled, slots, 0)
    values = np.stack([np.where(valid[:, None], v, 0)[..., take] for v, _, valid in parts], -2)
    values = np.where(filled[:, None, :], values, values.dtype.type(0))  # (N, C, groups, parts, lanes)
    index = np.stack([np.where(valid, i, 0)[..., take] for _, i, valid in parts], -2)  # (N, groups, parts, lanes)
    return _add_in_order(values, index, x_shape)


def _scatter_in_order(parts, x_shape):
    """the same for the 3-d kernel: location by location, within a location part by part"""
    values = np.stack([np.where(valid[:, None], v, 0) for v, _, valid in parts], -1)  # (N, C, P, parts)
    index = np.stack([np.where(valid, i, 0) for _, i, valid in parts], -1)
    return _add_in_order(values, index, x_shape)


def _add_in_order(values, index, x_shape):
    """values (N, C, ...) added one after another, in their order, into planes (N, C, S) at index (N, ...)"""
    n, c = x_shape[:2]
    plane = int(np.prod(x_shape[2:]))
    offsets = (np.arange(n * c) * plane).reshape((n, c) + (1,) * (index.ndim - 1))
    out = np.zeros(n * c * plane, values.dtype)
    np.add.at(out, (index[:, None] + offsets).ravel(), values.ravel())  # (in float32, every sum rounds)
    return out.reshape(x_shape)


# ---- dispatch -----------------------------------------------------------------------------------------------------
def _kernel_arrays(*arrays):
    """the arrays in a dtype torch's kernels compute in (float16 and others: float32, rounded back after)"""
    return [a if a.dtype in _KERNEL_DTYPES else a.astype(np.float32) for a in arrays]


def _locations(grid):
    """(N, *out, n) -> (N, P, n)"""
    return grid.reshape((grid.shape[0], int(np.prod(grid.shape[1:-1])), grid.shape[-1]))


def sample(x, grid, mode, padding_mode, align_corners):
    """grid_sample's values, as torch's kernels compute them"""
    dtype = x.dtype
    xk, gk = _kernel_arrays(x, grid)
    flat = _locations(gk)
    kernel = {"nearest": _nearest, "bicubic": _bicubic}.get(mode, _bilinear_2d if x.ndim == 4 else _trilinear)
    out = kernel(xk, flat, padding_mode, align_corners)
    return out.reshape(x.shape[:2] + grid.shape[1:-1]).astype(dtype, copy=False)


def sample_backward(grad, x, grid, mode, padding_mode, align_corners, need_input):
    """(d input or None, d grid) of grid_sample, as torch's backward kernels compute them"""
    dtype = x.dtype
    gk, xk, grid_k = _kernel_arrays(grad, x, grid)
    flat = _locations(grid_k)
    if not need_input:
        scatter = None
    elif x.ndim == 4:
        scatter = lambda parts: _scatter_in_lanes(parts, x.shape, grid)  # noqa: E731 (the walk of grid's layout)
    else:
        scatter = lambda parts: _scatter_in_order(parts, x.shape)  # noqa: E731
    kernel = {"nearest": _nearest_backward, "bicubic": _bicubic_backward}.get(
        mode, _bilinear_2d_backward if x.ndim == 4 else _trilinear_backward)
    gin, ggrid = kernel(_planes(gk), xk, flat, padding_mode, align_corners, scatter)
    gin = None if gin is None else gin.astype(dtype, copy=False)
    return gin, ggrid.reshape(grid.shape).astype(dtype, copy=False)


# ---- the Op; its backward as Tensor ops where a graph records it ---------------------------------------------
def _reflect(c, size, align_corners):
    """reflect_coordinates in float64, for bicubic's taps on the Tensor path"""
    lo, span = (0.0, size - 1.0) if align_corners else (-0.5, float(size))
    if span <= 0:
        return np.zeros_like(c)
    u = np.abs(c - lo)
    flips = np.floor(u / span)
    extra = u - flips * span
    return np.where(flips % 2 == 0, extra + lo, span - extra + lo)


def _padded_tap(p, size, padding_mode, align_corners):
    """bicubic reads its taps through the padding: clipped into the image, or reflected first"""
    if padding_mode == "reflection":
        p = _reflect(p, size, align_corners)
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


def _geometry(ctx, x_shape, grid):
    """the Tensor path's pieces (once): torch's coordinates (bicubic: only unnormalized) with their slopes; the
    corners; per dim the slope a and offset b of coordinate = a * grid + b (in float64)"""
    if getattr(ctx, "corners", None) is not None:
        return
    sizes = x_shape[2:]
    padding = ctx.padding if ctx.mode != "bicubic" else "zeros"
    g = grid if grid.dtype in _KERNEL_DTYPES else grid.astype(np.float32)
    coords = torch_coords(g, sizes, padding, ctx.align_corners, backward=True)
    ctx.corners, ctx.base = corners(coords, sizes, x_shape[1], ctx.mode, ctx.padding, ctx.align_corners)
    n = len(sizes)
    ctx.slopes = [(a.astype(np.float64), c.astype(np.float64) - a.astype(np.float64) * g[..., n - 1 - d])
                  for d, (c, a) in enumerate(coords)]


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
        ctx.mode, ctx.padding, ctx.corners = mode, padding_mode, None
        ctx.save_for_backward(x, grid)
        return sample(x, grid, mode, padding_mode, align_corners)

    @staticmethod
    def backward(ctx, grad):
        x, grid = ctx.saved_tensors
        if unrecorded(grad) and unrecorded(x) and unrecorded(grid):  # (no graph: torch's kernel, in numpy)
            gx, ggrid = sample_backward(grad._data, x._data, grid._data, ctx.mode, ctx.padding, ctx.align_corners,
                                        ctx.needs_input_grad[0])
            return (Tensor._make(gx) if ctx.needs_input_grad[0] else None,
                    Tensor._make(ggrid) if ctx.needs_input_grad[1] else None, None, None, None)
        _geometry(ctx, x.shape, grid._data)
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
        _geometry(ctx, x.shape, grid._data)
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
