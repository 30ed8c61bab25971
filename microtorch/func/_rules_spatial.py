"""Batching rules for the spatial ops of ops/{conv_more,pool_more,upsample,grid_sample}.py.

The vmapped batch joins the images' batch dim N (B examples of N images are B*N images); a
convolution whose weight differs per example folds the batch into the groups instead.
"""
from ..ops import conv_more as cm, grid_sample as gs, pool_more as pm, upsample as up
from ..ops import shape as sh
from ._batching import _NoRule, _batch_size, movedim, register, unwrap, wrap
from ._rules import _fold, _materialized, _unfold, fold_into_n

# (torch has no rule for nearest-exact upsampling nor affine_grid: they run per example, warning as torch's)
register(cm.Im2colNd, cm.Col2imNd, pm.MaxPool3d, pm.AvgPool3d, pm.AdaptiveMaxPool2d, pm.AdaptiveMaxPool3d,
         up.PixelShuffle, up.PixelUnshuffle, up.ChannelShuffle,
         *(cls for name, cls in up.RESAMPLE.items() if "NearestExact" not in name))(fold_into_n)


@register(cm.ConvolutionNd)
def convolution_nd(cls, args, kwargs, level):
    x, w, b, stride, pads, dilation, groups, transposed = args
    B = _batch_size(args, level)
    wb, bb = unwrap(w, level)[1], b is not None and unwrap(b, level)[1]
    if not wb and not bb:  # the batch joins the images' batch dim N
        out = cls.apply(_fold(unwrap(x, level)[0], B), w, b, stride, pads, dilation, groups, transposed)
        return wrap(_unfold(out, B), level)
    # per-example weights: B times the groups, the batch folded into the channels (weight dim 0 in both kinds)
    xv = _materialized(x, level, B)                               # (B, N, C, *spatial)
    n, spatial = xv.shape[1], tuple(xv.shape[3:])
    xv = sh.View.apply(movedim(xv, 0, 1), (n, -1) + spatial)      # (N, B*C, *spatial)
    wv = _materialized(w, level, B)
    wv = sh.View.apply(wv, (B * wv.shape[1],) + tuple(wv.shape[2:]))
    bv = None if b is None else _materialized(b, level, B)
    o = bv.shape[1] if bv is not None else None
    bv = None if bv is None else sh.View.apply(bv, (B * o,))
    out = cls.apply(xv, wv, bv, stride, pads, dilation, groups * B, transposed)   # (N, B*O, *out_spatial)
    out = sh.View.apply(out, (n, B, -1) + tuple(out.shape[2:]))
    return wrap(movedim(out, 1, 0), level)


@register(gs.GridSampler2d, gs.GridSampler3d)
def grid_sample(cls, args, kwargs, level):
    x, grid = args[:2]
    if kwargs:
        raise _NoRule
    B = _batch_size(args, level)
    xv, gv = _materialized(x, level, B), _materialized(grid, level, B)
    return wrap(_unfold(cls.apply(_fold(xv, B), _fold(gv, B), *args[2:]), B), level)
