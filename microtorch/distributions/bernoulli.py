"""Bernoulli(probs or logits): 1 with probability p, else 0."""
from .. import _creation
from ..autograd.grad_mode import no_grad
from ..nn import functional as F
from .categorical import probs_to_logits
from .distribution import Distribution, broadcast_all, lazy_parameter, unit_interval


class Bernoulli(Distribution):
    """log_prob(x) = x log p + (1 - x) log(1 - p), computed from the logits as a BCE-with-logits."""
    _expandable = ("probs", "logits")
    _arg_checks = {"probs": (unit_interval, "Interval(lower_bound=0.0, upper_bound=1.0)"),
                   "logits": (lambda v: v == v, "Real()")}

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        super().__init__(self.__dict__.get("probs", self.__dict__.get("logits")).shape, validate_args=validate_args)

    @lazy_parameter
    def probs(self):
        return self.logits.sigmoid()

    @lazy_parameter
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        return (self.probs >= 0.5).to(self.probs.dtype)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        with no_grad():
            return _creation.bernoulli(self.probs.expand(self._extended_shape(sample_shape)))

    def log_prob(self, value):
        self._validate_sample(value, lambda v: (v == 0) | (v == 1), "Boolean()")
        logits, value = broadcast_all(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")
