"""Batching rules for nn2's ops (ops/norm_more.py)."""
from ..ops import norm_more as _norm
from ..ops import normalization as _normalization
from ._batching import per_example, register, unwrap, wrap


@register(_norm.NativeGroupNorm)
def group_norm(cls, args, kwargs, level):
    """the vmapped examples are more examples of the batch: (B, N, C, *) -> (B*N, C, *), when only x is batched"""
    (v, batched), rest = unwrap(args[0], level), args[1:]
    if not batched or any(unwrap(a, level)[1] for a in rest[:2]):
        return per_example(cls, args, kwargs, level)
    out = cls.apply(v.reshape(v.shape[0] * v.shape[1], *v.shape[2:]), *rest, **kwargs)
    return wrap(out.reshape(v.shape), level)


@register(_normalization.NativeLayerNorm)
def layer_norm(cls, args, kwargs, level):
    """the statistics run over the last dims (counted from the end), so a batch dim in front changes nothing, when
    only x is batched"""
    (v, batched), rest = unwrap(args[0], level), args[1:]
    if not batched or any(unwrap(a, level)[1] for a in rest[:2]):
        return per_example(cls, args, kwargs, level)
    return wrap(cls.apply(v, *rest, **kwargs), level)
