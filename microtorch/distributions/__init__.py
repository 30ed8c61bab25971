"""torch.distributions' most taught classes: Normal, Bernoulli, Categorical, Multinomial, MultivariateNormal,
Uniform, Independent, MixtureSameFamily, and kl_divergence with its register_kl.

Each has torch's names and shapes (batch_shape, event_shape, sample, rsample where it exists,
log_prob, entropy, mean, variance) and checks its arguments with torch's ValueError. The random draws
come from microtorch's generator, which draws torch's numbers for the same seed (a MultivariateNormal's, as long as
its Cholesky factor has torch's bits: numpy's LAPACK and torch's differ in the last bit on some matrices).
"""
from . import (bernoulli, categorical, independent, kl, mixture_same_family, multinomial,  # noqa: F401
               multivariate_normal, normal, uniform)
from .bernoulli import Bernoulli  # noqa: F401
from .categorical import Categorical  # noqa: F401
from .distribution import Distribution  # noqa: F401
from .independent import Independent  # noqa: F401
from .kl import kl_divergence, register_kl  # noqa: F401
from .mixture_same_family import MixtureSameFamily  # noqa: F401
from .multinomial import Multinomial  # noqa: F401
from .multivariate_normal import MultivariateNormal  # noqa: F401
from .normal import Normal  # noqa: F401
from .uniform import Uniform  # noqa: F401

__all__ = ["Bernoulli", "Categorical", "Distribution", "Independent", "MixtureSameFamily", "Multinomial",
           "MultivariateNormal", "Normal", "Uniform", "kl_divergence", "register_kl"]
