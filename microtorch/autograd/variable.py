"""Variable, kept (as torch keeps it) so that old code runs: every Tensor is a Variable, and
`Variable(t, requires_grad=True)` returns a Tensor, a new leaf that shares t's data."""
from .._tensor import Tensor, _made_leaf


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """Deprecated: use tensors directly (`t.requires_grad_()`)."""

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        t = data.detach() if data is not None else Tensor()
        t.requires_grad = requires_grad  # (the attribute: torch allows Variable(x, requires_grad=True) inside func.grad)
        return _made_leaf(t) if requires_grad else t
