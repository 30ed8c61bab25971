"""Batching rules for the ops that the backward and jvp of pooling, upsampling and grid_sample run
(ops/pool_more.py's TakeFlat and PutFlatAdd, ops/upsample.py's Resample), so that vmap(jacrev(f))
and jvp under vmap batch as torch's do. Both kinds work on trailing dims, and every leading dim is
one more plane: vmap's batch is another one in front.
"""
import numpy as np

from ..ops import pool_more as pm, upsample as up
from ._batching import BatchedArray, _batch_size, _NoRule, register, unwrap, wrap
from ._rules import _materialized


def _index_batch(idx, level, B):
    """the flat indices of every example: the batch's own, or one array shared by all"""
    if type(idx) is BatchedArray and idx.level == level:
        return idx.phys
    if not isinstance(idx, np.ndarray):
        raise _NoRule
    return np.broadcast_to(idx, (B,) + idx.shape)


@register(pm.TakeFlat)
def take_flat(cls, args, kwargs, level):
    x, idx, nd = args
    B = _batch_size(args, level)
    return wrap(cls.apply(_materialized(x, level, B), _index_batch(idx, level, B), nd), level)


@register(pm.PutFlatAdd)
def put_flat_add(cls, args, kwargs, level):
    g, idx, shape, nd = args
    B = _batch_size(args, level)
    return wrap(cls.apply(_materialized(g, level, B), _index_batch(idx, level, B), (B,) + tuple(shape), nd), level)


@register(up.Resample)
def resample(cls, args, kwargs, level):
    """(the backward ops and the jvp of every mode; the named forward ops have rules in _rules_spatial.py)"""
    v, _ = unwrap(args[0], level)
    return wrap(cls.apply(v, *args[1:]), level)


@register(*(c for name, cls in up.RESAMPLE.items() if "NearestExact" in name for c in (cls, cls.adjoint)))
def no_rule_in_torch(cls, args, kwargs, level):
    """torch has no rule for nearest-exact upsampling nor its backward: per example, with the performance warning"""
    raise _NoRule
