"""Batching rules for the fused products and vector ops of ops/linalg_more.py.

addmv, addr, baddbmm, addbmm, vdot and dist are written with ops that batch already (matmul,
elementwise, sums, norms) on the batched arguments themselves: each example computes what the fused
op computes. cross and diag_embed run once on the whole batch, their dims one further right.
"""
from ..ops import linalg_more as la
from ..ops import reduce as rd
from ._batching import _batch_size, register, unwrap, wrap
from ._rules import _materialized, _ndim


def _scaled_sum(x, product, beta, alpha):
    """beta x + alpha product, where beta = 0 ignores x (NaN and inf in it too), as the fused ops"""
    out = product if alpha == 1 else product * alpha
    if beta == 0:
        return out
    return out + (x if beta == 1 else x * beta)


@register(la.Addmv)
def addmv(cls, args, kwargs, level):
    x, a, v = args[:3]
    return _scaled_sum(x, a @ v, kwargs.get("beta", 1), kwargs.get("alpha", 1))


@register(la.Addr)
def addr(cls, args, kwargs, level):
    x, u, v = args[:3]
    return _scaled_sum(x, u.unsqueeze(1) * v, kwargs.get("beta", 1), kwargs.get("alpha", 1))


@register(la.Baddbmm)
def baddbmm(cls, args, kwargs, level):
    """(also addbmm, its subclass: the products summed over the bmm batch)"""
    x, a, b = args[:3]
    product = a @ b
    if cls is la.Addbmm:
        product = product.sum(0)
    return _scaled_sum(x, product, kwargs.get("beta", 1), kwargs.get("alpha", 1))


@register(la.Vdot)
def vdot(cls, args, kwargs, level):
    a, b = args
    return (a.conj() * b).sum()


@register(la.Dist)
def dist(cls, args, kwargs, level):
    a, b = args[:2]
    p = args[2] if len(args) > 2 else kwargs.get("p", 2)
    return rd.Norm.apply(a - b, ord=p)


@register(la.Cross)
def cross(cls, args, kwargs, level):
    a, b, dim = args
    B = _batch_size(args, level)
    n = _ndim(a)
    return wrap(cls.apply(_materialized(a, level, B), _materialized(b, level, B), dim % n + 1), level)


@register(la.DiagEmbed)
def diag_embed(cls, args, kwargs, level):
    v, _ = unwrap(args[0], level)
    offset, dim1, dim2 = args[1:]
    n = _ndim(args[0]) + 1
    return wrap(cls.apply(v, offset, dim1 % n + 1, dim2 % n + 1), level)
