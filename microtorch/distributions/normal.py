"""Normal(loc, scale): the Gaussian, reparameterizable (rsample = loc + scale * eps)."""
import math

from .. import _creation
from .distribution import Distribution, broadcast_all, log_sqrt_2pi, positive, real


class Normal(Distribution):
    """N(loc, scale^2); log_prob(x) = -(x - loc)^2 / (2 scale^2) - log(scale) - log(sqrt(2 pi))."""
    has_rsample = True
    _expandable = ("loc", "scale")
    _arg_checks = {"loc": (real, "Real()"), "scale": (positive, "GreaterThan(lower_bound=0.0)")}

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, validate_args=validate_args)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.scale.pow(2)

    def rsample(self, sample_shape=()):
        eps = _creation.randn(tuple(self._extended_shape(sample_shape)), dtype=self.loc.dtype)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        self._validate_sample(value, real, "Real()")
        return -((value - self.loc) ** 2) / (2 * self.variance) - self.scale.log() - log_sqrt_2pi()

    def cdf(self, value):
        return 0.5 * (1 + ((value - self.loc) / (self.scale * math.sqrt(2))).erf())

    def icdf(self, value):
        return self.loc + self.scale * (2 * value - 1).erfinv() * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()
