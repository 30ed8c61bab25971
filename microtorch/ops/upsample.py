"""Resampling: interpolate's modes, adaptive average pooling, pixel/channel shuffle, affine_grid.

Every interpolation mode (nearest, nearest-exact, linear, bilinear, bicubic, trilinear, area) is
separable and linear: along each spatial dim it multiplies by a small (out, in) matrix that says
how much of each input element each output element takes. `Resample` applies one matrix per
spatial dim; its gradient applies the transposed matrices (the adjoint), so any order works (where
torch's backward kernel uses other matrices than its forward, Resample is given those too).
Antialiased bilinear and bicubic are separable and linear too: only their matrices differ.
The linear modes and bicubic take a `Taps` kernel in place of the matrices: it gathers each output's taps and adds
them, and scatters the gradient back, as torch's kernels do (their indices, weights and order of additions), so
that values and gradients have torch's last bits; a matrix product adds in another order.
"""
import functools
import itertools
import math

import numpy as np

from .._fma import fma, fma64, halves
from .._tensor import Tensor
from . import _range_kernels
from ._memory_formats import channels_last, channels_last_3d, channels_last_of, is_laid_out
from ._op import NoDerivative, Op, unrecorded
from .linalg import Bmm


def apply_mats(x, mats):
    """Multiply the last len(mats) dims of a numpy array by mats[i] (out_i, in_i) each (or run the Taps kernel)."""
    if isinstance(mats, Taps):
        return mats(x)
    nd = len(mats)
    for i, m in enumerate(mats):
        d = x.ndim - nd + i
        x = np.swapaxes(np.matmul(np.swapaxes(x, d, -1), m.T.astype(x.dtype, copy=False)), d, -1)
    return x


def _transposed(mats):
    return mats.T if isinstance(mats, Taps) else tuple(m.T for m in mats)


class Resample(Op):
    """y = x times mats[i] along spatial dim i; d/dx multiplies by the transposed mats (by the transposed
    back_mats where torch's backward kernel does not use its forward's: see nn/_functional_interp.py).
    shown: (a scale per spatial dim, None where a size was given; align_corners), as torch's node shows them"""
    _grad_fn_name = "ResampleBackward0"
    adjoint = None  # the op of the transposed mats, which computes the backward (None: Resample itself)
    _channels_last = ()  # the ranks of a channels-last input whose layout the output keeps (as torch's kernels)
    _show = None  # what the node shows (the named ops and their adjoints: see _named)

    @staticmethod
    def forward(ctx, x, mats, back_mats=None, shown=None):
        ctx.mats, ctx.back_mats, ctx.shown = mats, (mats if back_mats is None else back_mats), shown
        out = channels_last_of(np.ascontiguousarray(apply_mats(x, mats)), x, ranks=ctx._forward_cls._channels_last)
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
                              "_show": staticmethod(show) if show else None,
                              "_channels_last": (4,) if name == "AdaptiveAvgPool3D" else (4, 5)})
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


def nearest_matrix(out_n, in_n, scale, exact, legacy=False):
    """legacy: torch's nearest_idx, which copies when out == in and takes i // 2 when out == 2 in, whatever the
    scale_factor (the backward kernels of mode 'nearest' use it, and the 2-d forward kernel)"""
    s = np.float32(in_n / out_n if scale is None else 1.0 / scale)  # torch computes this in float
    dst = np.arange(out_n, dtype=np.float32) + (np.float32(0.5) if exact else 0)
    src = np.minimum(np.floor(dst * s).astype(np.int64), in_n - 1)
    if legacy and out_n in (in_n, 2 * in_n):
        src = np.arange(out_n) // (out_n // in_n)
    return _rows(out_n, in_n, src[:, None], np.ones((out_n, 1)))


def _cubic(u, a):
    """Keys' cubic convolution kernel at distances u >= 0 (zero from 2 on)"""
    near = ((a + 2) * u - (a + 3)) * u * u + 1
    far = ((a * u - 5 * a) * u + 8 * a) * u - 4 * a
    return np.where(u < 1, near, np.where(u < 2, far, 0.0))


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


# ---- torch's linear and cubic kernels --------------------------------------------------------------------------
# Its CPU kernels compute the indices and weights in the input's compute type (float for float32, double for
# float64), and are compiled with contraction on: `a * b + c` there is one fused multiply-add (_fma.fma). Which
# products fuse was read off torch's outputs: in `t0*w0 + t1*w1` the first, and each next tap fuses onto the sum.
def _fused(w, x, acc, w_halves=None):
    """fma(w, x, acc) for the big arrays of these kernels. float32: the product is exact in float64, and so is the sum
    mostly, whose rounding to float32 is then right; where it lands on a float32 tie it may have been rounded there
    (a fifth of them here: weights like 0.25 make short sums), and is moved one float64 step toward what rounding
    lost (_fma redoes every element when one ties). float64: _fma's, the small w split once (w_halves)"""
    if acc.dtype != np.float32:
        with np.errstate(invalid="ignore", over="ignore"):
            return fma64(w, x, acc, w_halves)
    with np.errstate(invalid="ignore"):
        product = np.multiply(w, x, dtype=np.float64)
        total = product + acc
    out = total.astype(np.float32)
    tie = np.flatnonzero((total.view(np.int64) & 0x1FFFFFFF) == 0x10000000)
    if tie.size:
        p, c, s = (_pick(v, total.shape, tie) for v in (product, acc, total))
        lost = (p - (s - (s - p))) + (c - (s - p))  # (Knuth's two-sum: what s = p + c rounded away)
        s = np.where(lost != 0, np.nextafter(s, np.where(lost > 0, np.inf, -np.inf)), s)
        out.ravel()[tie] = s.astype(np.float32)
    return out


def _pick(v, shape, flat):
    """the elements of v, broadcast to shape, at these flat positions"""
    if v.shape == shape:
        return np.ravel(v)[flat]
    return np.broadcast_to(v, shape)[np.unravel_index(flat, shape)]


def _compute_type(dtype):
    """torch's opmath type: float32 for half, else the input's own"""
    return np.dtype(np.float32) if dtype.itemsize < 4 else dtype


def _scale(out_n, in_n, scale, align_corners, t):
    """area_pixel_compute_scale, in the type t: 1/scale_factor where one was given, else in/out"""
    if align_corners:
        return t(in_n - 1) / t(out_n - 1) if out_n > 1 else t(0)
    return t(1.0 / scale) if scale is not None and scale > 0 else t(in_n) / t(out_n)


def _source(out_n, in_n, scale, align_corners, t, fused, cubic):
    """area_pixel_compute_source_index of every output index in t: s * (i + 0.5) - 0.5, one fused step in the kernels
    compiled with contraction (not in the bicubic backward's); the linear modes clamp it at 0"""
    s, dst = _scale(out_n, in_n, scale, align_corners, t), np.arange(out_n).astype(t)
    if align_corners:
        return s * dst
    half = t(0.5)
    src = fma(np.full(out_n, s), dst + half, -half) if fused else s * (dst + half) - half
    return src if cubic else np.where(src < 0, t(0), src)


def _guarded(src, in_n, t):
    """guard_index_and_lambda: the index below src (floored through float32, whatever t is: torch calls floorf), at
    most in_n - 1, and the fraction past it, clamped to [0, 1]"""
    index = np.minimum(np.floor(src.astype(np.float32)).astype(np.int64), in_n - 1)
    return index, np.minimum(np.maximum(src - index.astype(t), t(0)), t(1))


def linear_taps(out_n, in_n, scale, align_corners, t, stored=None):
    """compute_source_index_and_lambda: (out, 2) indices and weights; a dim whose size stays has weights 1 and 0 on
    the same element (torch adds that 0 * x too: an infinite neighbour gives NaN). stored: the half type the generic
    kernel keeps its weights in (lambda0 = 1 - lambda1 of the stored lambda1, stored too)"""
    if out_n == in_n:
        same = np.arange(out_n)
        return np.stack([same, same], 1), np.stack([np.ones(out_n, t), np.zeros(out_n, t)], 1)
    i0, lam = _guarded(_source(out_n, in_n, scale, align_corners, t, True, False), in_n, t)
    keep = (lambda v: v) if stored is None else (lambda v: v.astype(stored).astype(t))  # noqa: E731
    lam = keep(lam)
    return np.stack([i0, i0 + (i0 < in_n - 1)], 1), np.stack([keep(t(1) - lam), lam], 1)


def _cubic_weights(lam, t, fused):
    """get_cubic_upsample_coefficients (Keys, A = -0.75) at the fractions lam. fused: as the forward kernel computes
    them, every step fused except the last (seen in its weights); the bicubic backward, compiled without, rounds each"""
    a = -0.75
    if fused:
        near = lambda u: fma(np.full(u.shape, a + 2, t), u, t(-(a + 3))) * u * u + t(1)  # noqa: E731
        far = lambda u: fma(fma(np.full(u.shape, a, t), u, t(-5 * a)), u, t(8 * a)) * u - t(4 * a)  # noqa: E731
    else:
        near = lambda u: (t(a + 2) * u - t(a + 3)) * u * u + t(1)  # noqa: E731
        far = lambda u: ((t(a) * u - t(5 * a)) * u + t(8 * a)) * u - t(4 * a)  # noqa: E731
    rest = t(1) - lam
    return np.stack([far(lam + t(1)), near(lam), near(rest), far(rest + t(1))], 1)


def cubic_taps(out_n, in_n, scale, align_corners, t, fused=True):
    """(out, 4) indices (clamped into the input) and Keys weights, as HelperInterpCubic computes them"""
    i0, lam = _guarded(_source(out_n, in_n, scale, align_corners, t, fused, True), in_n, t)
    return np.clip(i0[:, None] + np.arange(-1, 3), 0, in_n - 1), _cubic_weights(lam, t, fused)


def _along(w, axis, ndim):
    """the weights w (out,) shaped to broadcast along axis of an ndim array"""
    return w.reshape((-1,) + (1,) * (ndim - 1 - axis))


def _nested_sum(x, taps, t):
    """upsample_generic_Nd_kernel_impl: each output the nested sum over its taps, the first spatial dim outermost.
    The inner sums depend only on their own indices, so they are computed one dim at a time from the last, each
    as the kernel adds it: fma(t0, w0, t1 * w1), then each further tap fused onto the sum"""
    y = x.astype(t, copy=False)
    for k in range(len(taps) - 1, -1, -1):
        axis, (index, w) = y.ndim - len(taps) + k, taps[k]
        tap = [np.take(y, index[:, j], axis=axis) for j in range(index.shape[1])]
        ws = [_along(w[:, j], axis, y.ndim) for j in range(index.shape[1])]
        split = [halves(v) if t == np.float64 else None for v in ws]
        y = _fused(ws[0], tap[0], tap[1] * ws[1], split[0])
        for j in range(2, len(tap)):
            y = _fused(ws[j], tap[j], y, split[j])
    return y


def _corner_sum(x, taps, t):
    """cpu_upsample_linear_channels_last: each output the sum over the 2**n corners around it, each weighted by the
    product of its lambdas ((d * h) * w), added in corner order in the kernel's scalar loop, and from the last corner
    back (its first two fused the other way round) in its vector loop, which takes the channels 8 floats or 4
    doubles at a time"""
    nd = len(taps)
    terms = []
    for corner in itertools.product((0, 1), repeat=nd):
        where = np.ix_(*[index[:, c] for (index, _), c in zip(taps, corner)])
        weight = functools.reduce(np.multiply, np.ix_(*[w[:, c] for (_, w), c in zip(taps, corner)]))
        terms.append((x[(Ellipsis,) + where].astype(t, copy=False), weight))
    out = _fused(terms[0][1], terms[0][0], terms[1][0] * terms[1][1])
    for value, weight in terms[2:]:
        out = _fused(weight, value, out)
    channels = x.shape[-nd - 1]
    vectored = channels - channels % (32 // t.itemsize)
    if vectored:
        part = (Ellipsis, slice(0, vectored)) + (slice(None),) * nd
        vec = _fused(terms[-1][1], terms[-1][0][part], terms[-2][0][part] * terms[-2][1])
        for value, weight in reversed(terms[:-2]):
            vec = _fused(weight, value[part], vec)
        out[part] = vec
    return out


def _by_corners(x, out_sizes):
    """torch's choice of the channels-last kernel for bilinear (a channels-last input of more than 3 channels, a small
    output, or one thread and 3 channels) and trilinear (a channels-last input of more than 3 channels)"""
    channels = x.shape[-len(out_sizes) - 1]
    if len(out_sizes) == 2:
        return (is_laid_out(x, channels_last) and channels > 3) or sum(out_sizes) <= 128 or (
            channels == 3 and _range_kernels.intraop_threads() == 1)
    return len(out_sizes) == 3 and is_laid_out(x, channels_last_3d) and channels > 3


def _in_rounds(target):
    """the positions of target split into rounds, each holding any element at most once, the k-th round the k-th
    contributions to each: adding round after round adds into each element in the order of target"""
    order = np.argsort(target, kind="stable")
    ordered = target[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    rank = np.empty_like(order)
    rank[order] = np.arange(len(target)) - np.repeat(starts, np.diff(np.r_[starts, len(target)]))
    by_rank = np.argsort(rank, kind="stable")
    bounds = np.searchsorted(rank[by_rank], np.arange(rank.max(initial=-1) + 2))
    return [by_rank[bounds[r]:bounds[r + 1]] for r in range(len(bounds) - 1)]


def _linear_plan(taps, out_sizes, in_sizes):
    """cpu_upsample_linear_backward's contributions in its order (each output in turn, and its corners with the first
    dim's tap outermost): the input element each goes to, and its weight, the lambdas' product ((d * h) * w)"""
    nd = len(taps)
    target, weight = 0, None
    for k, ((index, lam), size) in enumerate(zip(taps, in_sizes)):
        shape = [1] * (2 * nd)
        shape[k], shape[nd + k] = out_sizes[k], 2
        target = target * size + index.reshape(shape)
        weight = lam.reshape(shape) if weight is None else weight * lam.reshape(shape)
    full = tuple(out_sizes) + (2,) * nd
    return np.broadcast_to(target, full).ravel(), (np.broadcast_to(weight, full).ravel(),)


def _cubic_plan(taps, out_sizes, in_sizes):
    """upsample_bicubic2d_backward's contributions in its order (each output in turn, its x taps outermost): the input
    element each goes to, and its y and x weights"""
    (ih, yw), (iw, xw) = taps
    full = tuple(out_sizes) + (4, 4)
    target = ih[:, None, None, :] * in_sizes[1] + iw[None, :, :, None]
    return target.ravel(), (np.broadcast_to(yw[:, None, None, :], full).ravel(),
                            np.broadcast_to(xw[None, :, :, None], full).ravel())


def _adjoint(g, plan, in_sizes, t, cubic):
    """torch's backward kernels: each contribution added into its input element in the kernel's order, a round at a
    time (which keeps that order into every element), the planes last (rows gather fast). linear:
    fma(weight, grad, sum); bicubic: sum + (grad * y weight) * x weight (that file is compiled without fused steps)"""
    target, factors, rounds = plan
    nd = len(in_sizes)
    lead = g.shape[:len(g.shape) - nd]
    planes = g.reshape(math.prod(lead), math.prod(g.shape[len(lead):]))
    grad = np.ascontiguousarray(planes.T.astype(t, copy=False))  # (outputs, planes)
    source = np.arange(target.size) // (target.size // grad.shape[0])  # (the output each contribution comes from)
    acc = np.zeros((math.prod(in_sizes), grad.shape[1]), t)
    for part in rounds:
        at, weights = target[part], [f[part, None] for f in factors]
        if cubic:
            acc[at] = acc[at] + (grad[source[part]] * weights[0]) * weights[1]
        else:
            acc[at] = _fused(weights[0], grad[source[part]], acc[at])
    return np.ascontiguousarray(acc.T).reshape(lead + tuple(in_sizes))


class Taps:
    """interpolate's linear modes and bicubic as torch's CPU kernels compute them, in Resample's place of matrices:
    dims holds (out, in, scale_factor or None) per spatial dim. Calling it resamples the trailing dims; `.T` is torch's
    backward kernel, which adds each output's share into the input in the kernel's order"""

    def __init__(self, cubic, dims, align_corners, transposed=False, cache=None):
        self.cubic, self.dims, self.align_corners, self.transposed = cubic, tuple(dims), align_corners, transposed
        self._cache = {} if cache is None else cache  # (shared with the transpose: the same taps)

    def __len__(self):
        return len(self.dims)

    @property
    def T(self):  # noqa: N802 (numpy's name, as the matrices it stands for have)
        return Taps(self.cubic, self.dims, self.align_corners, not self.transposed, self._cache)

    def taps(self, t, fused=True, stored=None):
        """the (indices, weights) of every dim in the compute type t (rounded to stored, a half type, as the generic
        forward kernel keeps them)"""
        key = (t, fused, stored)
        if key not in self._cache:
            if self.cubic:
                taps = [cubic_taps(o, i, s, self.align_corners, t.type, fused) for o, i, s in self.dims]
                if stored is not None:
                    taps = [(index, w.astype(stored).astype(t)) for index, w in taps]
            else:
                taps = [linear_taps(o, i, s, self.align_corners, t.type, stored) for o, i, s in self.dims]
            self._cache[key] = taps
        return self._cache[key]

    def adjoint_plan(self, t):
        """the backward kernel's contributions and the rounds that add them (they depend on the indices only)"""
        key = ("adjoint", t)
        if key not in self._cache:
            out_sizes, in_sizes = [o for o, _, _ in self.dims], [i for _, i, _ in self.dims]
            make = _cubic_plan if self.cubic else _linear_plan
            target, factors = make(self.taps(t, fused=not self.cubic), out_sizes, in_sizes)
            self._cache[key] = target, factors, _in_rounds(target)
        return self._cache[key]

    def __call__(self, x):
        t = _compute_type(x.dtype)
        if self.transposed:
            in_sizes = tuple(i for _, i, _ in self.dims)
            if self.cubic and in_sizes == x.shape[-2:]:  # (torch's bicubic backward copies then)
                out = x.astype(t)
            else:
                out = _adjoint(x, self.adjoint_plan(t), in_sizes, t, self.cubic)
        elif not self.cubic and _by_corners(x, [o for o, _, _ in self.dims]):
            out = _corner_sum(x, self.taps(t), t)
        else:  # (the generic kernel keeps its weights in the input's type)
            out = _nested_sum(x, self.taps(t, stored=None if t == x.dtype else x.dtype), t)
        return out.astype(x.dtype, copy=False)


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
        return channels_last_of(_shuffle(x, r), x, ranks=(4,))

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
