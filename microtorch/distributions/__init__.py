"""torch.distributions' most taught classes: Normal, Bernoulli, Categorical, Multinomial and MultivariateNormal.

Each has torch's names and shapes (batch_shape, event_shape, sample, rsample where it exists,
log_prob, entropy, mean, variance) and checks its arguments with torch's ValueError. The random draws
come from microtorch's generator, which draws torch's numbers for the same seed (a MultivariateNormal's, as long as
its Cholesky factor has torch's bits: numpy's LAPACK and torch's differ in the last bit on some matrices).
"""
from . import bernoulli, categorical, multinomial, multivariate_normal, normal  # noqa: F401
from .bernoulli import Bernoulli  # noqa: F401
from .categorical import Categorical  # noqa: F401
from .distribution import Distribution  # noqa: F401
from .multinomial import Multinomial  # noqa: F401
from .multivariate_normal import MultivariateNormal  # noqa: F401
from .normal import Normal  # noqa: F401

__all__ = ["Bernoulli", "Categorical", "Distribution", "Multinomial", "MultivariateNormal", "Normal"]
