"""torch's legacy typed-tensor classes: microtorch.FloatTensor, LongTensor, ... and set_default_tensor_type.

Older tutorials write `torch.FloatTensor([0.1, 1.0])`, `torch.LongTensor(n, 1)`, `x.type(torch.FloatTensor)`
and `isinstance(x, torch.FloatTensor)`. As in torch, these classes make no tensors of their own kind: calling one
returns a plain Tensor of its dtype (the legacy constructor Tensor() has, `_tensor.legacy_array`, with the class's
dtype instead of the default one), and `isinstance` asks the tensor's dtype (the metaclass's `__instancecheck__`).
`x.type(cls)` reads a class by its name (`_tensor.legacy_type_dtype`), so the core never imports this module.
"""
import importlib

from . import _dtype
from ._tensor import Tensor, legacy_array
from ._user_line import warn_once


class tensortype(type):
    """The type of the legacy classes (torch's is torch.tensortype): a class is a dtype on the CPU."""

    def __instancecheck__(cls, obj):  # (a float32 Tensor, nn.Parameter included, is a FloatTensor; a meta or sparse
        # one is not)
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and not obj.is_meta and not obj.is_sparse

    def __call__(cls, *args, **kwargs):
        """FloatTensor(2, 3), FloatTensor(size), FloatTensor(data), FloatTensor(t) (t's alias): a Tensor of
        cls.dtype."""
        made = legacy_array(cls.dtype, cls.__name__, args, kwargs)
        if not isinstance(made, Tensor):
            return Tensor._make(made)
        if made.dtype is not cls.dtype:
            raise TypeError(f"{cls.__name__}(tensor): expected a tensor of dtype {cls.dtype}, got {made.dtype}; "
                            f"convert it with t.type(microtorch.{cls.__name__}) or t.to({cls.dtype})")
        return Tensor(made)  # (an alias: its memory and version, AliasBackward0 when it requires grad)


def _legacy_class(name, dt):
    return tensortype(name, (), {"__module__": "microtorch", "__qualname__": name, "dtype": dt, "is_sparse": False,
                                 "is_cuda": False, "__doc__": f"torch's legacy class of {dt} tensors on the CPU."})


FloatTensor = _legacy_class("FloatTensor", _dtype.float32)
DoubleTensor = _legacy_class("DoubleTensor", _dtype.float64)
HalfTensor = _legacy_class("HalfTensor", _dtype.float16)
ByteTensor = _legacy_class("ByteTensor", _dtype.uint8)
CharTensor = _legacy_class("CharTensor", _dtype.int8)
ShortTensor = _legacy_class("ShortTensor", _dtype.int16)
IntTensor = _legacy_class("IntTensor", _dtype.int32)
LongTensor = _legacy_class("LongTensor", _dtype.int64)
BoolTensor = _legacy_class("BoolTensor", _dtype.bool_)
CLASSES = {c.__name__: c for c in (FloatTensor, DoubleTensor, HalfTensor, ByteTensor, CharTensor, ShortTensor,
                                   IntTensor, LongTensor, BoolTensor)}


def set_default_tensor_type(t, /):
    """torch's deprecated way to set the default dtype: t a floating legacy class or its name ('torch.DoubleTensor')."""
    if isinstance(t, str):
        t = _class_named(t)
    warn_once("set_default_tensor_type", "torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please "
              "use torch.set_default_dtype() and torch.set_default_device() as alternatives.")
    if not isinstance(t, tensortype):
        raise TypeError(f"invalid type object: only floating-point types are supported as the default type (got "
                        f"{t!r}); pass e.g. microtorch.DoubleTensor, or call microtorch.set_default_dtype(dtype)")
    if not t.dtype.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type (got {t.__name__}); pass "
                        f"FloatTensor, DoubleTensor or HalfTensor")
    _dtype.set_default_dtype(t.dtype)


def _class_named(name):
    """What a dotted name such as 'torch.DoubleTensor' names, imported as torch imports it ('torch' is microtorch
    here); torch's errors for a CUDA class and for a name that is nothing."""
    root, _, rest = name.partition(".")
    if rest.startswith("cuda.") and root in ("torch", "microtorch"):
        raise TypeError(f"type {name} not available. Torch not compiled with CUDA enabled. (microtorch runs on "
                        f"numpy, on the CPU: use '{root}.{rest[len('cuda.'):]}')")
    try:
        found = importlib.import_module("microtorch" if root == "torch" else root)
    except (ImportError, ValueError, TypeError) as e:  # (torch imports the name as given; its error, named here)
        raise type(e)(f"set_default_tensor_type('{name}'): {e}; pass a floating legacy class or its name, e.g. "
                      "'torch.DoubleTensor'") from None
    for part in rest.split(".") if rest else ():
        if not hasattr(found, part):
            raise AttributeError(f"module '{found.__name__}' has no attribute '{part}' (set_default_tensor_type "
                                 f"takes a floating legacy class or its name, e.g. 'torch.DoubleTensor')")
        found = getattr(found, part)
    return found
