"""Parameter: a Tensor that a Module registers as one of its learnable weights.

Also the placeholders of lazy modules (nn.LazyLinear...): UninitializedParameter and UninitializedBuffer know
their dtype and device but not their shape, refuse to take part in any op until `materialize(shape)` gives
them memory, and then become a Parameter and a plain Tensor.
"""
import os
import sys

from .._tensor import Tensor, _made_leaf
from .._user_line import _PACKAGE
from ._buffer import Buffer  # noqa: F401  (torch.nn.parameter.Buffer is nn.Buffer)

__all__ = ["Parameter", "UninitializedParameter", "is_lazy", "Buffer", "UninitializedBuffer",
           "UninitializedTensorMixin"]


from .._torch_function import _disabled_torch_function_impl

class Parameter(Tensor):
    """A leaf tensor (requires_grad=True by default) that, assigned as an attribute of a Module,
    shows up in `module.parameters()`. It shares memory with the tensor it wraps."""
    __torch_function__ = _disabled_torch_function_impl  # (its ops give plain tensors, as torch's)

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from .._creation import empty
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): expected a Tensor as data, got {type(data).__name__}; wrap it first, "
                            "e.g. Parameter(microtorch.tensor(values))")
        if isinstance(data, UninitializedTensorMixin):  # (no data to share yet)
            raise ValueError(_refusal(data, "Parameter"))
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

    def __deepcopy__(self, memo):
        """As torch's: a new Parameter of a copy of the values, nothing else (no grad, hooks or attributes)."""
        if id(self) not in memo:
            memo[id(self)] = type(self)(Tensor._make(self._data.copy()), self._requires_grad)
        return memo[id(self)]


# ---- lazy modules' placeholders --------------------------------------------------------------
_ARRAY = Tensor.__dict__["_data"]  # the slot that holds a tensor's numpy array, read past the refusing property below


class UninitializedTensorMixin:
    """What UninitializedParameter and UninitializedBuffer share: an empty array that gives the dtype and device,
    a `shape` that raises, and every op refused (ValueError) until `materialize`."""

    __slots__ = ()
    cls_to_become = None

    def __init__(self, *args, **kwargs):  # (__new__ did the work: Tensor's and Parameter's __init__ take no dtype=)
        pass

    @property
    def _data(self):
        # every op reads its operands' arrays: reading this one is how an op is refused
        raise ValueError(_refusal(self))

    @_data.setter
    def _data(self, array):
        _ARRAY.__set__(self, array)

    def _stand_in(self):
        """A plain tensor on the empty array, which the methods torch allows (dtype, to, size...) run on."""
        t = Tensor._make(_ARRAY.__get__(self), self._requires_grad)
        t._version_counter = self._version_counter
        return t

    def _converted(self, tensor):
        """What a conversion (.double(), .to(...)) returns when it makes a new tensor."""
        return tensor

    @property
    def shape(self):
        op = _op_given(self)
        if op is not None and op != "load_state_dict":  # an op read it: refused as any other use
            raise ValueError(_refusal(self, op))
        raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. This error usually happens "
                           "in `load_state_dict` when trying to load an uninitialized parameter into an initialized "
                           "one. Call `forward` to initialize the parameters before accessing their attributes.")

    def materialize(self, shape, device=None, dtype=None):
        """Give it memory of `shape` (not initialized), on its device and of its dtype unless others are given;
        it then becomes a Parameter (a Tensor for a buffer)."""
        from .._creation import empty
        stand_in = self._stand_in()
        device = stand_in.device if device is None else device
        self._data = empty(shape, device=device, dtype=stand_in.dtype if dtype is None else dtype)._data
        self.__class__ = self.cls_to_become

    def requires_grad_(self, requires_grad=True):
        raise ValueError(_refusal(self, "requires_grad_"))

    def share_memory_(self):
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call `forward` to initialize "
                           "the parameters before calling `module.share_memory()`.")

    def __repr__(self):
        return f"<{type(self).__name__}>"

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        return (type(self), (self._requires_grad,))

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            stand_in = self._stand_in()
            memo[id(self)] = type(self)(self._requires_grad, stand_in.device, stand_in.dtype)
        return memo[id(self)]


def _allowed_method(name):
    def method(self, *args, **kwargs):
        stand_in = self._stand_in()
        out = getattr(stand_in, name)(*args, **kwargs)
        return self if out is stand_in else self._converted(out) if isinstance(out, Tensor) else out
    method.__name__ = method.__qualname__ = name
    return method


def _allowed_property(name):
    return property(lambda self: getattr(self._stand_in(), name))


# what torch lets an uninitialized tensor do: say its dtype and device, and convert them (Module.double() before
# the first forward makes the module's parameters float64)
for _name in ("size", "is_floating_point", "is_complex", "to", "double", "float", "half", "int", "long", "short",
              "char", "cpu", "get_device", "copy_"):
    if hasattr(Tensor, _name):
        setattr(UninitializedTensorMixin, _name, _allowed_method(_name))
for _name in ("dtype", "device", "is_meta", "is_cuda", "layout", "ndim"):
    setattr(UninitializedTensorMixin, _name, _allowed_property(_name))
UninitializedTensorMixin.data = property(lambda self: self._stand_in().data, Tensor.data.fset)


def _refusal(tensor, op=None):
    """torch's ValueError message for an uninitialized tensor handed to an op, naming the op the user called."""
    where = op or _op_given(tensor)
    return (f"Attempted to use an uninitialized parameter in {f'`{where}`' if where else 'an op'}. This error "
            f"happens when you are using a `LazyModule` or explicitly manipulating "
            f"`microtorch.nn.parameter.{type(tensor).__name__}` objects. When using LazyModules Call `forward` with a "
            "dummy batch to initialize the parameters before calling microtorch functions")


_WRAPPERS = ("with_out", "ranged", "accepting_numpy_names", "operator",
             "torch_function_dispatch")  # decorators: the op they wrap is inside


def _op_given(tensor):
    """The name of the outermost microtorch function that was handed `tensor`, as torch's __torch_function__ names
    the first torch function called with it (`linear` for F.linear(x, w), `mul` for w * 2), or None when the user
    read it directly. (An op's error guard knows its op's name, as `op` or in its generated code's file name.)"""
    frames, frame = [], sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        if frame.f_code.co_filename != __file__:  # (this file's refusing properties and methods)
            frames.append(frame)
        frame = frame.f_back
    for frame in reversed(frames):
        values = frame.f_locals
        if frame.f_code.co_name in _WRAPPERS or not any(_holds(v, tensor) for v in values.values()):
            continue
        if isinstance(values.get("op"), str):
            return values["op"]
        where = os.path.basename(frame.f_code.co_filename)
        if where.startswith("<guard of "):  # (a generated guard, "ops/<guard of rmul (operator): mul>")
            return where[len("<guard of "):].split(" ")[0]
        name = frame.f_code.co_name
        return name if name.startswith("__") else name.lstrip("_")  # (Tensor.zero_ is a function _zero)
    return None


def _holds(value, tensor):
    return value is tensor or isinstance(value, (tuple, list)) and any(v is tensor for v in value)


def is_lazy(param):
    """Whether `param` is an UninitializedParameter or an UninitializedBuffer."""
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter whose shape a lazy module infers from its first input: until then only its dtype and device
    can be read or converted; `materialize(shape)` makes it a Parameter."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        from .._creation import empty
        return Parameter.__new__(cls, empty(0, device=device, dtype=dtype), requires_grad)


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer (BatchNorm's running statistics) whose shape a lazy module infers from its first input;
    `materialize(shape)` makes it a Tensor."""

    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        from .._creation import empty
        t = cls._make(empty(0, device=device, dtype=dtype)._data)
        t.requires_grad = requires_grad
        t.persistent, t._is_buffer = persistent, True
        return t

    def _converted(self, tensor):
        # torch's conversions of a plain Tensor subclass keep the subclass: module.double() keeps the placeholder
        return UninitializedBuffer(tensor.requires_grad, tensor.device, tensor.dtype, self.persistent)
