"""Independent(base, n): the same distribution, with its n rightmost batch dims read as event dims.

A batch of 3 Normals scores a value with 3 log-densities; Independent(Normal(...), 1) scores it with their
sum, the log-density of one 3-vector with independent coordinates (a VAE's diagonal Gaussian).
"""
import microtorch as _mt

from ._support import support_of
from .distribution import Distribution


def sum_rightmost(value, ndims):
    """`value` summed over its `ndims` last dims (flattened into one, then one sum)."""
    if ndims == 0:
        return value
    return value.reshape(tuple(value.shape[:-ndims]) + (-1,)).sum(-1)


class Independent(Distribution):
    """log_prob and entropy are the base's summed over the reinterpreted dims; draws and moments are the base's."""

    def __init__(self, base_distribution, reinterpreted_batch_ndims, validate_args=None):
        n_batch = len(base_distribution.batch_shape)
        if reinterpreted_batch_ndims > n_batch:
            raise ValueError("Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), "
                             f"actual {reinterpreted_batch_ndims} vs {n_batch}")
        shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        split = len(shape) - reinterpreted_batch_ndims - len(base_distribution.event_shape)
        self.base_dist, self.reinterpreted_batch_ndims = base_distribution, reinterpreted_batch_ndims
        super().__init__(shape[:split], shape[split:], validate_args=validate_args)

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    def _support(self):
        """(check, torch's name): the base's support, all of it true over the reinterpreted dims."""
        found = support_of(self.base_dist)
        if found is None or self.reinterpreted_batch_ndims == 0:
            return found
        check, label = found
        n = self.reinterpreted_batch_ndims
        return (lambda v: _all_rightmost(check(v), n), f"IndependentConstraint({label}, {n})")

    @property
    def mean(self):
        return self.base_dist.mean

    @property
    def mode(self):
        return self.base_dist.mode

    @property
    def variance(self):
        return self.base_dist.variance

    def expand(self, batch_shape, _instance=None):
        """The base expanded to batch_shape plus the reinterpreted dims."""
        if not hasattr(self.base_dist, "expand"):
            raise NotImplementedError(f"{type(self.base_dist).__name__} cannot be expanded")
        new = type(self).__new__(type(self)) if _instance is None else _instance
        batch = tuple(_mt.Size(batch_shape))
        new.base_dist = self.base_dist.expand(batch + tuple(self._event_shape[:self.reinterpreted_batch_ndims]))
        new.reinterpreted_batch_ndims = self.reinterpreted_batch_ndims
        Distribution.__init__(new, batch, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=()):
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=()):
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value):
        return sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self):
        return sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def enumerate_support(self, expand=True):
        if self.reinterpreted_batch_ndims > 0:
            raise NotImplementedError("Enumeration over cartesian product is not implemented")
        if not hasattr(self.base_dist, "enumerate_support"):
            raise NotImplementedError(f"{type(self.base_dist).__name__} does not enumerate its support")
        return self.base_dist.enumerate_support(expand=expand)

    def __repr__(self):
        return f"{type(self).__name__}({self.base_dist}, {self.reinterpreted_batch_ndims})"


def _all_rightmost(valid, ndims):
    """True where `valid` is true over all of its `ndims` last dims (a check's shape may be smaller: none left)."""
    keep = max(valid.dim() - ndims, 0)
    return valid.reshape(tuple(valid.shape[:keep]) + (-1,)).all(-1)
