"""torch.distributions' most taught classes: Normal, Bernoulli, Categorical and Multinomial.

Each has torch's names and shapes (batch_shape, event_shape, sample, rsample where it exists,
log_prob, entropy, mean, variance) and checks its arguments with torch's ValueError. The random draws
come from microtorch's generator, so they are not the numbers torch draws for the same seed.
"""
from . import bernoulli, categorical, multinomial, normal  # noqa: F401
from .bernoulli import Bernoulli  # noqa: F401
from .categorical import Categorical  # noqa: F401
from .distribution import Distribution  # noqa: F401
from .multinomial import Multinomial  # noqa: F401
from .normal import Normal  # noqa: F401

__all__ = ["Bernoulli", "Categorical", "Distribution", "Multinomial", "Normal"]
