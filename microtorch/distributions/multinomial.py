"""Multinomial(total_count, probs or logits): how often each of K outcomes comes up in n draws."""
import microtorch as _mt

from ..autograd.grad_mode import no_grad
from .categorical import Categorical
from .distribution import Distribution


class Multinomial(Distribution):
    """log_prob(x) = log n! - sum_k log x_k! + sum_k x_k log p_k, for counts x that sum to n."""

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("Multinomial: inhomogeneous total_count is not supported; pass an int")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits, validate_args=validate_args)
        shape = self._categorical.param_shape
        super().__init__(shape[:-1], shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The same counts over a larger batch: the inner Categorical expanded."""
        new = type(self).__new__(type(self)) if _instance is None else _instance
        new.total_count, new._categorical = self.total_count, self._categorical.expand(batch_shape)
        Distribution.__init__(new, _mt.Size(batch_shape), self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        """Draw total_count categories per distribution and count them (a scatter_add of ones)."""
        sample_shape = tuple(sample_shape)
        with no_grad():
            draws = self._categorical.sample((self.total_count,) + sample_shape)
            draws = draws.movedim(0, -1)   # (sample, batch, total_count)
            counts = _mt.zeros(self._extended_shape(sample_shape), dtype=self.probs.dtype)
            return counts.scatter_add_(-1, draws, _mt.ones_like(draws, dtype=self.probs.dtype))

    def log_prob(self, value):
        if self._validate_args:
            ok = bool(((value >= 0).all(-1) & (value.sum(-1) <= self.total_count)).all())   # (torch's support)
            if not ok:
                raise ValueError(f"Expected value argument (Tensor of shape {tuple(value.shape)}) of distribution "
                                 f"{self!r} to be within the support (Multinomial(upper_bound={self.total_count})), "
                                 f"but found invalid values:\n{value}")
        logits, value = _mt.broadcast_tensors(self.logits, value)
        log_factorial_n = (value.sum(-1) + 1).lgamma()
        log_factorial_xs = (value + 1).lgamma().sum(-1)
        # 0 * log(0) counts as 0: an outcome of probability 0 that did not come up costs nothing
        logits = _mt.where((value == 0) & (logits == float("-inf")), _mt.zeros_like(logits), logits)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)
