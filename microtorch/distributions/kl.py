"""kl_divergence(p, q) = E_p[log p(x) - log q(x)] in closed form, looked up by the pair of types.

`register_kl(P, Q)` files a function under (P, Q). A pair of distributions finds every registered pair of
their base classes; the most specific wins, read first by p's class then by q's. When reading by q first
would pick another function, kl_divergence warns (RuntimeWarning) and uses the first. As in torch, Normal
and Bernoulli are exponential families: two different ones meet in a pair that refuses with its own error.
"""
import abc
import math
import warnings

import microtorch as _mt

from ..nn import functional as F
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .independent import Independent, sum_rightmost
from .multivariate_normal import MultivariateNormal, mahalanobis
from .normal import Normal
from .uniform import Uniform

_REGISTRY = {}   # (type_p, type_q) -> function, as registered
_FOUND = {}      # (type(p), type(q)) -> the function dispatch chose, or NotImplemented

__all__ = ["register_kl", "kl_divergence"]


class ExponentialFamily(Distribution, metaclass=abc.ABCMeta):
    """Stands for torch's base class of Normal and Bernoulli in the lookup (they are registered as virtual
    subclasses); it computes nothing itself."""


ExponentialFamily.register(Normal)
ExponentialFamily.register(Bernoulli)


def register_kl(type_p, type_q):
    """Decorator: `@register_kl(P, Q) def kl(p, q): ...` makes kl_divergence use it for P and Q (and their
    subclasses, unless a more specific pair is registered)."""
    for t in (type_p, type_q):
        if not isinstance(t, type):
            raise TypeError("issubclass() arg 1 must be a class")

    def decorator(fun):
        _REGISTRY[type_p, type_q] = fun
        _FOUND.clear()   # (a new pair can change what earlier lookups chose)
        return fun
    return decorator


def _below(a, b):
    """a is strictly more specific than b, read lexicographically: the first types decide unless equal."""
    def at_most(x, y):
        for s, t in zip(x, y):
            if not issubclass(s, t):
                return False
            if s is not t:
                return True
        return True
    return at_most(a, b) and a != b


def _most_specific(pairs):
    best = pairs[0]
    for pair in pairs[1:]:
        if _below(pair, best):
            best = pair
    return best


def _dispatch(type_p, type_q):
    matches = [pair for pair in _REGISTRY if issubclass(type_p, pair[0]) and issubclass(type_q, pair[1])]
    if not matches:
        return NotImplemented
    left = _most_specific(matches)
    right = tuple(reversed(_most_specific([tuple(reversed(m)) for m in matches])))
    if _REGISTRY[left] is not _REGISTRY[right]:
        warnings.warn(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). "
                      f"Please register_kl({left[0].__name__}, {right[1].__name__})", RuntimeWarning, stacklevel=2)
    return _REGISTRY[left]


def kl_divergence(p, q):
    """KL(p || q), one value per element of the batch. NotImplementedError when no pair is registered."""
    key = (type(p), type(q))
    if key not in _FOUND:
        _FOUND[key] = _dispatch(*key)
    fun = _FOUND[key]
    if fun is NotImplemented:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type {type(p).__name__} and q type "
                                  f"{type(q).__name__}")
    return fun(p, q)


# ---- closed forms ---------------------------------------------------------------------------------------------
@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    # p log(p/q) + (1-p) log((1-p)/(1-q)), each log written as softplus of logits; 0 log 0 counts as 0
    t1 = p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits))
    t1[q.probs == 0] = math.inf
    t1[p.probs == 0] = 0
    t2 = (1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits))
    t2[q.probs == 1] = math.inf
    t2[p.probs == 1] = 0
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t[(q.probs == 0).expand_as(t)] = math.inf   # (q misses an outcome p has)
    t[(p.probs == 0).expand_as(t)] = 0
    return t.sum(-1)


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    if type(p) is not type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential families cannot "
                                  + " " * 28 + "be computed using Bregman divergences")
    # (torch computes a Bregman divergence from natural parameters here, which these classes do not have)
    raise NotImplementedError(f"No KL(p || q) is implemented for p type {type(p).__name__} and q type "
                              f"{type(q).__name__}")


def _trace_xxt(x):
    """trace(X X^T) = the sum of X's squared entries, for each matrix of a batch."""
    rows, cols = x.shape[-2], x.shape[-1]
    return x.reshape(-1, rows * cols).pow(2).sum(-1).reshape(x.shape[:-2])


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    # (log det Sq - log det Sp + tr(Sq^-1 Sp) + M_q(mu_q - mu_p) - n) / 2, with the Cholesky factors Lp, Lq
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with" + " " * 26
                         + "different event shapes cannot be computed")
    lp, lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_log_dets = lq.diagonal(dim1=-2, dim2=-1).log().sum(-1) - lp.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    n = p.event_shape[0]
    batch = tuple(_mt.broadcast_shapes(lq.shape[:-2], lp.shape[:-2]))
    ratio = _mt.linalg.solve_triangular(lq.expand(batch + (n, n)), lp.expand(batch + (n, n)), upper=False)
    trace = _trace_xxt(ratio)
    m = mahalanobis(lq, q.loc - p.loc)
    return half_log_dets + 0.5 * (trace + m - n)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    result[(q.low > p.low) | (q.high < p.high)] = math.inf   # (p reaches where q has no mass)
    return result


@register_kl(Normal, Uniform)
def _kl_normal_infinity(p, q):
    return _mt.full_like(p.loc, math.inf)   # (a Normal has mass outside any interval)


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    # -H(p) - E_p[log q]: E_p[(x - mu)^2] = width^2 / 12 + (centre - mu)^2
    width = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / width).log()
    t2 = width.pow(2) / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (t2 + t3) / q.scale.pow(2)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)
