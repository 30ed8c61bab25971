"""Batching rules for the ops of ops/{index_more,order,scan,misc_more}.py (and shape.py's diagonal), where torch
has one: under vmap they run once on the whole batch.

The ops that write at a numpy key (index_copy, index_fill, index_put, scatter_add, select/slice_scatter) write
into the batch flattened: the rule turns the key into the positions it writes in every example, so one write
covers them all, whether the key is the same for each example or batched. The ops along a dim get the dim
shifted by one, with the indices they were given (computed by numpy on the batch) taken as they are.

torch has no rule for put, masked_scatter, fill_diagonal_ (a put), renorm and unfold's backward: they keep the
per-example fallback and its warning."""
import math

import numpy as np

from ..ops import index_more as im, misc_more as mm, order as od, scan as sc, shape as sh
from .._tensor import Tensor
from ._batching import (BatchedArray, _batch_size, _has_batched, _np_materialize, _NoRule, _top_level, physical_key,
                        register, unwrap, wrap, wrap_outputs)
from ._rules import _materialized, _pad, _view_of


# ---- writes at a key ------------------------------------------------------------------------------
def _lifted(pos, arrays):
    """pos, the same for every example of the outer vmap that batches some of the index arrays (in
    vmap(jacfwd(f)) or vmap(vmap(f)), an index batched by the outer level only)"""
    outer = {a.level: a for a in arrays if type(a) is BatchedArray}
    if not outer:
        return pos
    if len(outer) > 1:
        raise _NoRule
    a = outer.popitem()[1]
    return BatchedArray(Tensor._make(np.broadcast_to(pos, (a.batch_size,) + pos.shape)), a.level)


def _batched_key_positions(key, pos, level):
    """pos[key] for each example when key holds batched arrays (with the batch in front)."""
    arrays = [i for i, k in enumerate(key) if not isinstance(k, slice)]
    q, n = arrays[0], len(arrays)
    if arrays != list(range(q, q + n)) or any(type(key[i]) not in (np.ndarray, BatchedArray) or
                                              key[i].dtype.kind not in "iu" for i in arrays):
        raise _NoRule  # (bool masks, ints or split arrays: per example)
    if not _has_batched(key, level):  # batched by an outer vmap only: numpy keeps adjacent arrays in place
        return _lifted(pos, key)[(slice(None),) + key]
    nb = max(key[i].ndim for i in arrays)
    adv = tuple(_pad(key[i].phys, key[i].ndim, nb) if type(key[i]) is BatchedArray and key[i].level == level
                else key[i] for i in arrays)
    batch = np.arange(pos.shape[0]).reshape((-1,) + (1,) * nb)
    # the batch index next to the example's own arrays, so numpy keeps them where one example has them
    out = np.moveaxis(_lifted(pos, adv), 0, q)[key[:q] + (batch,) + adv + key[q + n:]]
    return np.moveaxis(out, q, 0)


def _positions(key, shape, B, level):
    """The positions in the flattened batch (B examples of `shape`) that `key` writes, laid out as one example's
    x[key] is, with the batch in front."""
    pos = np.arange(B * math.prod(shape)).reshape((B,) + shape)
    key = key if isinstance(key, tuple) else (key,)
    if _top_level(key) >= 0:
        return _batched_key_positions(key, pos, level)
    pkey, p = physical_key(key, shape)
    out = pos[pkey]
    return np.moveaxis(out, p, 0) if p else out


@register(im.Place, im.AddAt)
def write_at_key(cls, args, kwargs, level):
    x, src = args
    key = kwargs["key"]
    B = _batch_size((x, src, key), level)
    shape = tuple(x.shape)
    where = _positions(key, shape, B, level)
    flat = sh.reshape(_materialized(x, level, B), (B * math.prod(shape),))
    s = _materialized(src, level, B)  # (index_put's value broadcasts: its dims line up from the right)
    if kwargs.get("src_key"):  # (scatter_add's larger src: the part it writes, per example)
        s = s[(slice(None),) + kwargs["src_key"]]
    out = cls.apply(flat, _pad(s, s.ndim - 1, where.ndim - 1), key=(where,))
    return wrap(sh.reshape(out, (B,) + shape), level)


@register(im.Put, im.PutAccumulate)
def no_rule_in_torch(cls, args, kwargs, level):
    """put_ is an index_put underneath, but torch runs it per example (with its warning): so does microtorch."""
    raise _NoRule


@register(im.DiagonalScatter)
def diagonal_scatter(cls, args, kwargs, level):
    x, src, offset, d1, d2 = args
    B = _batch_size(args, level)
    return wrap(cls.apply(_materialized(x, level, B), _materialized(src, level, B), offset, d1 + 1, d2 + 1), level)


@register(sh.Diagonal)
def diagonal(cls, args, kwargs, level):
    x, offset, d1, d2 = args
    v, _ = unwrap(x, level)
    out = cls.apply(v, offset, d1 + 1, d2 + 1)
    return wrap(out if cls is sh.DiagonalCopy else _view_of(out, v), level)


@register(sh.DiagonalBackward)
def diagonal_backward(cls, args, kwargs, level):
    g, shape, offset, d1, d2 = args
    v, _ = unwrap(g, level)
    return wrap(cls.apply(v, (v.shape[0],) + tuple(shape), offset, d1 + 1, d2 + 1), level)


# ---- ops along a dim, with the indices numpy found (median, kthvalue, mode, cummax, cummin) -----------
@register(od.Picked, sc.CumExtreme)
def picked_along_dim(cls, args, kwargs, level):
    x, dim, indices = args
    B = _batch_size(args, level)
    idx = _np_materialize(indices, level, B)
    return wrap(cls.apply(_materialized(x, level, B), dim + 1, idx, **kwargs), level)


@register(od.EvenlyShared)
def median_of_all(cls, args, kwargs, level):
    """the median of each whole example: one value per example (numpy picked them), shared as torch's"""
    v, _ = unwrap(args[0], level)
    return wrap(cls.apply(v, value=_np_materialize(kwargs["value"], level, v.shape[0])), level)


@register(od.Aminmax)
def aminmax(cls, args, kwargs, level):
    v, _ = unwrap(args[0], level)
    dim, keepdim = kwargs["dim"], kwargs["keepdim"]
    if dim is not None:
        return wrap_outputs(cls.apply(v, dim=dim + 1, keepdim=keepdim), level)
    B = v.shape[0]
    lo, hi = cls.apply(sh.reshape(v, (B, -1)), dim=1, keepdim=False)
    shape = (B,) + (1,) * (v.ndim - 1) if keepdim else (B,)
    return wrap(sh.reshape(lo, shape), level), wrap(sh.reshape(hi, shape), level)


# ---- sliding windows and narrow_copy ------------------------------------------------------------------
@register(mm.Unfold)
def unfold(cls, args, kwargs, level):
    v, _ = unwrap(args[0], level)
    return wrap(cls.apply(v, args[1] + 1, *args[2:]), level)


@register(mm.NarrowCopy)
def narrow_copy(cls, args, kwargs, level):
    v, _ = unwrap(args[0], level)
    return wrap(cls.apply(v, key=(slice(None),) + tuple(kwargs["key"])), level)
