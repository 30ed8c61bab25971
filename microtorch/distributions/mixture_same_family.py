"""MixtureSameFamily(mixture, components): pick component k with the Categorical's probability, then draw from it.

The components are one distribution whose rightmost batch dim (of size K) indexes them, e.g. a
MultivariateNormal with batch shape (K,) for a mixture of K Gaussians. Shapes, with B the mixture's batch
shape and E the event shape: the components have batch (B, K), the mixture batch B and events E.

- log_prob(x) = logsumexp_k(log w_k + log p_k(x)): x gets a K dim (size 1) before the event dims, so that
  every component scores it at once;
- sample draws the K components' samples and keeps the chosen one (a gather along K): no rsample, the
  choice of k has no gradient.
"""
import microtorch as _mt

from ..autograd.grad_mode import no_grad
from ._support import support_of
from .categorical import Categorical
from .distribution import Distribution


class MixtureSameFamily(Distribution):
    """p(x) = sum_k w_k p_k(x), with w the mixture's probs and p_k the components."""
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        self._mixture_distribution, self._component_distribution = mixture_distribution, component_distribution
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(" The Mixture distribution needs to be an  instance of torch.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution needs to be an instance of torch.distributions.Distribution")
        mix_batch = mixture_distribution.batch_shape
        comp_batch = _mt.Size(component_distribution.batch_shape[:-1])
        for a, b in zip(reversed(mix_batch), reversed(comp_batch)):
            if a != 1 and b != 1 and a != b:
                raise ValueError(f"`mixture_distribution.batch_shape` ({mix_batch}) is not compatible with "
                                 f"`component_distribution.batch_shape`({comp_batch})")
        # (read through logits, as torch does: a mixture given probs derives its logits here, and shows both)
        k_mix, k_comp = mixture_distribution.logits.shape[-1], component_distribution.batch_shape[-1]
        if k_mix != k_comp:
            raise ValueError(f"`mixture_distribution component` ({k_mix}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({k_comp})")
        self._num_component = k_mix
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(comp_batch, component_distribution.event_shape, validate_args=validate_args)

    @property
    def mixture_distribution(self):
        return self._mixture_distribution

    @property
    def component_distribution(self):
        return self._component_distribution

    def _support(self):
        """(check, torch's name): a value is in the support when it is in every component's."""
        found = support_of(self._component_distribution)
        if found is None:
            return (lambda v: _mt.tensor(True)), "MixtureSameFamilyConstraint()"
        check, label = found
        return (lambda v: check(self._pad(v))), f"MixtureSameFamilyConstraint({label})"

    def _pad(self, x):
        """x with a dim of size 1 where the components' K dim is (just before the event dims)."""
        return x.unsqueeze(-1 - self._event_ndims)

    def _pad_mixture_dimensions(self, x):
        """The mixture's (B', K) probs reshaped to line up with the components' (B, K, E) (torch's rule:
        ones inserted before K unless the mixture has exactly one batch dim, ones after K for E)."""
        dist_ndims, mix_ndims = len(self._batch_shape), len(self._mixture_distribution.batch_shape)
        pad = 0 if mix_ndims == 1 else dist_ndims - mix_ndims
        shape = tuple(x.shape)
        return x.reshape(shape[:-1] + (1,) * pad + shape[-1:] + (1,) * self._event_ndims)

    @property
    def mean(self):
        probs = self._pad_mixture_dimensions(self._mixture_distribution.probs)
        return _mt.sum(probs * self._component_distribution.mean, dim=-1 - self._event_ndims)

    @property
    def variance(self):
        """The law of total variance: the mean of the components' variances plus the variance of their means."""
        probs = self._pad_mixture_dimensions(self._mixture_distribution.probs)
        k_dim = -1 - self._event_ndims
        comp = self._component_distribution
        mean_of_variances = _mt.sum(probs * comp.variance, dim=k_dim)
        variance_of_means = _mt.sum(probs * (comp.mean - self._pad(self.mean)).pow(2.0), dim=k_dim)
        return mean_of_variances + variance_of_means

    def cdf(self, x):
        if not hasattr(self._component_distribution, "cdf"):
            raise NotImplementedError(f"{type(self._component_distribution).__name__} has no cdf")
        cdf_x = self._component_distribution.cdf(self._pad(x))
        return _mt.sum(cdf_x * self._mixture_distribution.probs, dim=-1)

    def log_prob(self, x):
        self._validate_sample(x, *self._support())
        log_prob_x = self._component_distribution.log_prob(self._pad(x))   # (sample, B, K)
        log_weights = _mt.log_softmax(self._mixture_distribution.logits, dim=-1)   # (B, K)
        return _mt.logsumexp(log_prob_x + log_weights, dim=-1)

    def sample(self, sample_shape=()):
        """The mixture draws k first, then every component draws; k picks among them (that order keeps torch's
        random numbers)."""
        with no_grad():
            sample_shape, event = tuple(sample_shape), tuple(self._event_shape)
            k_dim = len(sample_shape) + len(self._batch_shape)
            ks = self._mixture_distribution.sample(sample_shape)   # (sample, B)
            drawn = self._component_distribution.sample(sample_shape)   # (sample, B, K, E)
            ks = ks.reshape(tuple(ks.shape) + (1,) * (len(event) + 1))
            ks = ks.repeat((1,) * (ks.dim() - len(event)) + event)
            return _mt.gather(drawn, k_dim, ks).squeeze(k_dim)

    def __repr__(self):
        return f"MixtureSameFamily(\n  {self._mixture_distribution},\n  {self._component_distribution})"
