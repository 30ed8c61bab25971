"""Categorical(probs or logits): one draw of an index from 0 to K-1 with the given weights."""
import microtorch as _mt

from .. import _creation
from .distribution import Distribution, lazy_parameter, simplex


def probs_and_logits(probs, logits, cls):
    """The normalised (probs, logits) pair of a class that takes exactly one of them."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    if probs is not None:
        if probs.dim() < 1:
            raise ValueError(f"{cls}: `probs` must be at least one-dimensional, got shape {tuple(probs.shape)}")
        return probs / probs.sum(-1, keepdim=True), None
    if logits.dim() < 1:
        raise ValueError(f"{cls}: `logits` must be at least one-dimensional, got shape {tuple(logits.shape)}")
    return None, logits - logits.logsumexp(-1, keepdim=True)


def probs_to_logits(probs, is_binary=False):
    """log(p) (or log(p / (1 - p)) for a binary probability), with p kept inside (eps, 1 - eps)."""
    eps = _mt.finfo(probs.dtype).eps
    p = probs.clamp(eps, 1 - eps)
    return p.log() - (1 - p).log() if is_binary else p.log()


class Categorical(Distribution):
    """P(X = k) = probs[..., k]; probs is logits.softmax(-1) and logits is probs.log()."""
    _expandable = ("probs", "logits")
    _arg_checks = {"probs": (simplex, "Simplex()"), "logits": (lambda v: v == v, "IndependentConstraint(Real(), 1)")}

    def __init__(self, probs=None, logits=None, validate_args=None):
        probs, logits = probs_and_logits(probs, logits, "Categorical")
        if probs is not None:
            self.probs = probs
        else:
            self.logits = logits
        self._num_events = (probs if probs is not None else logits).shape[-1]
        super().__init__((probs if probs is not None else logits).shape[:-1], validate_args=validate_args)

    @lazy_parameter
    def probs(self):
        return self.logits.softmax(-1)

    @lazy_parameter
    def logits(self):
        return probs_to_logits(self.probs)

    @property
    def param_shape(self):
        return self.probs.shape

    @property
    def mean(self):
        return _creation.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype)

    @property
    def mode(self):
        return self.probs.argmax(-1)

    @property
    def variance(self):
        return self.mean

    def sample(self, sample_shape=()):
        flat = self.probs.detach().reshape(-1, self._num_events)
        draws = _creation.multinomial(flat, max(1, _numel(sample_shape)), True)
        return draws.T.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        self._validate_sample(value, lambda v: (v >= 0) & (v <= self._num_events - 1) & (v == v.floor()),
                              f"IntegerInterval(lower_bound=0, upper_bound={self._num_events - 1})")
        value = value.long().unsqueeze(-1)
        value, log_pmf = _mt.broadcast_tensors(value, self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self):
        logits = self.logits.clamp(min=_mt.finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = _mt.arange(self._num_events).reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n
