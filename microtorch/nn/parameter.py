"""Parameter: a Tensor that a Module registers as one of its learnable weights."""
from .._tensor import Tensor, _made_leaf


class Parameter(Tensor):
    """A leaf tensor (requires_grad=True by default) that, assigned as an attribute of a Module,
    shows up in `module.parameters()`. It shares memory with the tensor it wraps."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from .._creation import empty
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): expected a Tensor as data, got {type(data).__name__}; wrap it first, "
                            "e.g. Parameter(microtorch.tensor(values))")
        p = object.__new__(cls)
        p._data = data._data
        p.grad_fn = None
        p._output_nr = 0
        p._version_counter = data._version_counter
        p._requires_grad = False
        p.requires_grad = requires_grad
        return _made_leaf(p) if requires_grad else p  # (made inside func.grad: the transform's own leaf)

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        return (Parameter, (Tensor._make(self._data.copy()), self._requires_grad))

