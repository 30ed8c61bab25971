"""Uniform(low, high): every value of [low, high) equally likely; reparameterizable (low + u (high - low))."""
from .. import _creation, _tensor
from .distribution import Distribution, broadcast_all


class Uniform(Distribution):
    """Density 1 / (high - low) on [low, high), 0 elsewhere (log_prob -inf there when not validating)."""
    has_rsample = True
    _expandable = ("low", "high")

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        numbers = not any(isinstance(v, _tensor.Tensor) for v in (low, high))
        super().__init__(() if numbers else self.low.shape, validate_args=validate_args)

    @property
    def _arg_checks(self):
        # each bound is checked against the other, so the constraint's name shows the other's value
        return {"low": (lambda v: v < self.high, f"LessThan(upper_bound={self.high})"),
                "high": (lambda v: self.low < v, f"GreaterThan(lower_bound={self.low})")}

    def _support(self):
        """(check, torch's name): the closed interval [low, high] (a value equal to high passes the check)."""
        return (lambda v: (self.low <= v) & (v <= self.high),
                f"Interval(lower_bound={self.low}, upper_bound={self.high})")

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return float("nan") * self.high   # (every point is a mode: torch answers nan)

    @property
    def stddev(self):
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=()):
        u = _creation.rand(tuple(self._extended_shape(sample_shape)), dtype=self.low.dtype)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value):
        self._validate_sample(value, *self._support())
        # log of an indicator: 0 inside, -inf outside
        inside = self.low.le(value).type_as(self.low).mul(self.high.gt(value).type_as(self.low))
        return inside.log() - (self.high - self.low).log()

    def cdf(self, value):
        self._validate_sample(value, *self._support())
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return (self.high - self.low).log()
