"""Buffer: marks a tensor that, assigned to a Module attribute, becomes a buffer (state, not a parameter)."""
from .._tensor import Tensor


class _BufferMeta(type):
    """isinstance(t, Buffer) holds for a tensor made by Buffer(...) (which stays a plain Tensor, as in torch)"""

    def __instancecheck__(cls, instance):
        return isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False)


class Buffer(metaclass=_BufferMeta):
    """Buffer(data, persistent=True): `module.name = Buffer(t)` is `module.register_buffer("name", t, persistent)`."""

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            from .._creation import empty
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Buffer(): expected a Tensor as data, got {type(data).__name__}; wrap it first, e.g. "
                            "Buffer(microtorch.tensor(values))")
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent, t._is_buffer = persistent, True
        return t
