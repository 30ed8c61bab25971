"""The base of torch.distributions' classes: shapes, argument checks and the sampling interface.

A distribution has a batch shape (independent distributions side by side) and an event shape (one
draw). `sample` draws without a graph; `rsample` (where a class has it) draws through the
reparameterisation trick, so gradients reach the parameters; `log_prob` is differentiable.
"""
import math

from .. import _tensor
from ..autograd.grad_mode import enable_grad, no_grad


def broadcast_all(*values):
    """Numbers and tensors broadcast to one shape, as tensors (numbers take the tensors' dtype)."""
    import microtorch as mt
    tensors = [v for v in values if isinstance(v, _tensor.Tensor)]
    dtype = tensors[0].dtype if tensors else mt.get_default_dtype()
    as_tensors = [v if isinstance(v, _tensor.Tensor) else mt.tensor(float(v), dtype=dtype) for v in values]
    return tuple(mt.broadcast_tensors(*as_tensors))  # (one already of the shape stays itself, as in torch)


class Distribution:
    """What every distribution has: batch_shape, event_shape, sample/log_prob and argument checks."""
    has_rsample = False
    _arg_checks = {}   # parameter name -> (predicate, torch's name of the constraint)
    _validate_default = __debug__

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        import microtorch as mt
        self._batch_shape, self._event_shape = mt.Size(batch_shape), mt.Size(event_shape)
        self._validate_args = self._validate_default if validate_args is None else validate_args
        if self._validate_args:
            for name, (check, label) in self._arg_checks.items():
                if name in self.__dict__:   # (a parameter given, not one derived from another)
                    _check(self.__dict__[name], check, f"parameter {name}", label, self)

    @staticmethod
    def set_default_validate_args(value):
        if value not in (True, False):
            raise ValueError(f"set_default_validate_args: expected True or False, got {value!r}")
        Distribution._validate_default = value

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    @property
    def stddev(self):
        return self.variance.sqrt()

    _expandable = ()   # the parameters expand() repeats over a larger batch (a subclass without any has none)

    def expand(self, batch_shape, _instance=None):
        """The same distribution repeated over a larger batch: each parameter expanded (views, no copy), those
        derived lazily from another (Bernoulli's logits from probs) left to be derived again."""
        import microtorch as mt
        if not self._expandable:
            raise NotImplementedError(f"{type(self).__name__}.expand is not implemented")
        new = type(self).__new__(type(self)) if _instance is None else _instance
        batch = mt.Size(batch_shape)
        for name in self._expandable:
            if name in self.__dict__:
                value = self.__dict__[name]
                setattr(new, name, value.expand(batch + value.shape[len(self._batch_shape):]))
        for name, value in self.__dict__.items():  # (Categorical's number of events)
            if not name.startswith("_") or name in ("_batch_shape", "_event_shape", "_validate_args"):
                continue
            new.__dict__.setdefault(name, value)
        Distribution.__init__(new, batch, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _extended_shape(self, sample_shape=()):
        import microtorch as mt
        return mt.Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def sample(self, sample_shape=()):
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        raise NotImplementedError(f"{type(self).__name__} has no rsample (it is not reparameterizable); "
                                  "use sample(), which gives no gradient")

    def sample_n(self, n):
        return self.sample((n,))

    def perplexity(self):
        return self.entropy().exp()

    def _validate_sample(self, value, check, label):
        """torch's checks on a value to score (with validate_args): a tensor, ending in the event's shape,
        broadcastable with batch_shape + event_shape, inside the support (`check`, shown as `label`)."""
        if not self._validate_args:
            return
        if not isinstance(value, _tensor.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event, expected = tuple(self._event_shape), tuple(self._batch_shape) + tuple(self._event_shape)
        if tuple(value.shape[value.dim() - len(event):]) != event:
            raise ValueError(f"The right-most size of value must match event_shape: {value.size()} vs "
                             f"{self._event_shape}.")
        if any(i != 1 and j != 1 and i != j for i, j in zip(reversed(value.shape), reversed(expected))):
            raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {value.size()} vs "
                             f"{type(self._batch_shape)(expected)}.")
        if not bool(check(value).all()):
            raise ValueError(f"Expected value argument (Tensor of shape {tuple(value.shape)}) to be within the support "
                             f"({label}) of the distribution {self!r}, but found invalid values:\n{value}")

    def __repr__(self):
        shown = []
        for name in self._arg_checks:
            if name in self.__dict__:
                v = self.__dict__[name]
                shown.append(f"{name}: {v if v.numel() == 1 else v.size()}")  # (f-string: a 0-d tensor shows its
                # number, a one-element vector its tensor, as torch's)
        return f"{type(self).__name__}({', '.join(shown)})"


class lazy_parameter:
    """A parameter derived from the one given (probs from logits or back) on first use, then kept."""

    def __init__(self, derive):
        self.derive, self.__doc__ = derive, derive.__doc__

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        with enable_grad():  # (derived with its history even when first read under no_grad, as torch's)
            value = obj.__dict__[self.name] = self.derive(obj)   # (the instance's value hides this from now on)
        return value


def _check(value, check, name, label, dist, what="satisfy the constraint"):
    """Raise torch's ValueError when `check(value)` is not true everywhere."""
    if not bool(check(value).all()):
        raise ValueError(f"Expected {name} (Tensor of shape {tuple(value.shape)}) of distribution {dist!r} "
                         f"to {what} {label}, but found invalid values:\n{value}")


def positive(v):
    return v > 0


def real(v):
    return v == v


def unit_interval(v):
    return (v >= 0) & (v <= 1)


def simplex(v):
    return ((v >= 0).all(-1) & ((v.sum(-1) - 1).abs() < 1e-6))


def log_sqrt_2pi():
    return math.log(math.sqrt(2 * math.pi))
