"""Where each distribution puts its mass, as a check and torch's name for it (its `support` constraint).

A mixture checks a value against its component's support before scoring it, and torch's error names that
support; the classes written first check their own values inline, so their supports are listed here.
"""
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import real
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal, real_vector
from .normal import Normal


def support_of(dist):
    """(check, label) for `dist`: check(value) is a bool tensor, true where the value is in the support;
    None for a class whose support is unknown (its values are then not checked)."""
    own = getattr(dist, "_support", None)
    if own is not None:
        return own()
    if isinstance(dist, Normal):
        return real, "Real()"
    if isinstance(dist, Bernoulli):
        return (lambda v: (v == 0) | (v == 1)), "Boolean()"
    if isinstance(dist, Categorical):
        top = dist._num_events - 1
        label = f"IntegerInterval(lower_bound=0, upper_bound={top})"
        return (lambda v: (v >= 0) & (v <= top) & (v == v.floor())), label
    if isinstance(dist, MultivariateNormal):
        return real_vector, "IndependentConstraint(Real(), 1)"
    if isinstance(dist, Multinomial):
        n = dist.total_count
        return (lambda v: (v >= 0).all(-1) & (v.sum(-1) <= n)), "Multinomial()"
    return None
