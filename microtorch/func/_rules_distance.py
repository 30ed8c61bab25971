"""Batching rule for cdist's two ops (microtorch/ops/distance.py): they broadcast leading batch dims
already, so vmap's dim becomes one more batch dim in front (size 1 for an argument it does not batch)."""
from ..ops import distance
from ..ops import shape as _sh
from ._batching import register, unwrap, wrap
from ._rules import _ndim


@register(distance.Cdist, distance.EuclideanDist)
def pairwise_rows(cls, args, kwargs, level):
    ndims = [_ndim(a) for a in args[:2]]
    k = max(ndims)

    def leading(a, nd):
        v, batched = unwrap(a, level)
        shape = tuple(v.shape)
        if batched:   # (B, *example) -> (B, 1.., *example): the examples' batch dims line up
            return _sh.reshape(v, shape[:1] + (1,) * (k - nd) + shape[1:])
        return _sh.reshape(v, (1,) * (1 + k - nd) + shape)
    return wrap(cls.apply(*[leading(a, nd) for a, nd in zip(args[:2], ndims)], **kwargs), level)
