"""Tensor subclasses written by users, dispatched as torch dispatches them (`__torch_function__`).

In torch an op given an instance of a Tensor subclass calls the class's `__torch_function__(func, types, args,
kwargs)`; the default one (Tensor's) runs the op with dispatch switched off and hands back each Tensor of the
result as the subclass (`as_subclass`, which records AliasBackward0). So `MyT(...) * 2` is a MyT, and a class may
override `__torch_function__` to log or change what ops do (PyTorch's "Extending torch" notes). Parameter switches
it off: its ops give plain Tensors.

Nothing of this runs until a user defines a subclass: then `enable` wraps the public functions (microtorch.*,
nn.functional, linalg, special, fft) and Tensor's methods and operators with `dispatching`, which looks for such
instances among the arguments and otherwise calls through. The engine's backward never dispatches (torch's
formulas run below it).
"""
import functools
import importlib
import sys
import threading
import types

from . import _tensor
from ._tensor import Tensor

_state = threading.local()  # .off: inside a __torch_function__ call (DisableTorchFunctionSubclass)
_enabled = False
_user_classes = set()  # the subclasses of Tensor defined outside microtorch


def _disabled_torch_function_impl(func, types, args=(), kwargs=None):
    """A class's __torch_function__ that switches dispatch off (Parameter's): its ops run as Tensor's."""
    with DisableTorchFunctionSubclass():
        return func(*args, **(kwargs or {}))


class DisableTorchFunctionSubclass:
    """Within it, ops do not call subclasses' __torch_function__ (the default implementation runs ops so)."""

    def __enter__(self):
        _state.off = getattr(_state, "off", 0) + 1

    def __exit__(self, *exc):
        _state.off -= 1


def _convert(ret, cls):
    """Each Tensor in ret as an instance of cls (torch's _convert), tuples and lists element by element."""
    if isinstance(ret, Tensor) and not isinstance(ret, cls):
        return ret.as_subclass(cls)
    if isinstance(ret, (tuple, list)):
        items = [_convert(r, cls) for r in ret]
        return type(ret)(*items) if hasattr(ret, "_fields") else type(ret)(items)
    return ret


@classmethod
def default_torch_function(cls, func, types, args=(), kwargs=None):
    """Tensor.__torch_function__: run func without dispatch, then its Tensors as instances of cls."""
    if not all(issubclass(cls, t) for t in types):
        return NotImplemented
    with DisableTorchFunctionSubclass():
        ret = func(*args, **(kwargs or {}))
    return _convert(ret, cls)


def _dispatches(value):
    """Is value an instance of a user's subclass whose __torch_function__ is on?"""
    cls = type(value)
    return cls in _user_classes and \
        getattr(cls.__torch_function__, "__func__", cls.__torch_function__) is not _disabled_torch_function_impl


def _overloaded(args, kwargs):
    """The arguments that dispatch (one level into lists and tuples, as torch's `tensors` arguments), subclasses
    before their base classes, else in order."""
    found = []
    for a in (*args, *kwargs.values()):
        for v in (a if isinstance(a, (list, tuple)) else (a,)):
            if _dispatches(v) and not any(type(f) is type(v) for f in found):
                at = next((i for i, f in enumerate(found) if issubclass(type(v), type(f))), len(found))
                found.insert(at, v)
    return found


def _handle(func, overloaded, args, kwargs):
    types_ = tuple(type(v) for v in overloaded)
    for v in overloaded:
        ret = type(v).__torch_function__(func, types_, args, kwargs)
        if ret is not NotImplemented:
            return ret
    names = [f"<class '{t.__module__}.{t.__qualname__}'>" for t in types_]
    raise TypeError(f"no implementation found for '{getattr(func, '__qualname__', func)}' on types that implement "
                    f"__torch_function__: [{', '.join(names)}]")


def dispatching(fn, engine):
    """fn, calling a subclass's __torch_function__ when an argument is an instance of one."""
    classes, containers = _user_classes, (list, tuple)

    @functools.wraps(fn)
    def torch_function_dispatch(*args, **kwargs):
        for a in args:  # (the cheap test first: no user's instance among the arguments, no dispatch)
            if type(a) in classes or type(a) in containers:
                break
        else:
            if not kwargs or not any(type(a) in classes or type(a) in containers for a in kwargs.values()):
                return fn(*args, **kwargs)
        if getattr(_state, "off", 0) or getattr(engine._local, "task", None) is not None:  # (per thread)
            return fn(*args, **kwargs)
        overloaded = _overloaded(args, kwargs)
        if not overloaded:
            return fn(*args, **kwargs)
        return _handle(torch_function_dispatch, overloaded, args, kwargs)
    torch_function_dispatch.__microtorch_dispatching__ = True
    return torch_function_dispatch


_NOT_DISPATCHED = {"__init__", "__new__", "__repr__", "__str__", "__format__", "__len__", "__bool__", "__float__",
                   "__int__", "__index__", "__complex__", "__hash__", "__iter__", "__array__", "__reduce_ex__",
                   "__deepcopy__", "__getstate__", "__setstate__", "__init_subclass__", "__torch_function__",
                   "__class_getitem__", "backward", "register_hook", "retain_grad", "requires_grad_", "tolist",
                   "item", "numpy", "dim", "size", "stride", "numel", "element_size", "data_ptr", "is_floating_point",
                   "is_complex", "type", "as_subclass"}
# the namespace's functions that are not torch functions (transforms, serialization...): left as they are, so that
# they stay the objects other names hold (torch.vmap is torch.func.vmap)
_NOT_TORCH_FUNCTIONS = ("microtorch.func", "microtorch.autograd", "microtorch._serialization", "microtorch.utils",
                        "microtorch._random", "microtorch.random")
_NAMESPACES = ("microtorch", "microtorch.nn.functional", "microtorch.linalg", "microtorch.special", "microtorch.fft")


def subclass_defined(cls):
    """Tensor.__init_subclass__'s hook: a user's subclass dispatches; the first one turns dispatch on."""
    if cls.__module__.split(".")[0] == "microtorch":
        return
    _user_classes.add(cls)
    _enable()


def _enable():
    """Once: wrap the public functions and Tensor's methods and operators with `dispatching`."""
    global _enabled
    if _enabled:
        return
    _enabled = True
    from .autograd import engine
    for name, fn in list(vars(Tensor).items()):
        if isinstance(fn, types.FunctionType) and name not in _NOT_DISPATCHED and \
                (not name.startswith("_") or name.endswith("__")):
            setattr(Tensor, name, dispatching(fn, engine))
    for module_name in _NAMESPACES:
        try:
            module = sys.modules.get(module_name) or importlib.import_module(module_name)
        except ImportError:  # (a namespace this microtorch does not have)
            continue
        for name in getattr(module, "__all__", [n for n in vars(module) if not n.startswith("_")]):
            fn = getattr(module, name, None)
            if isinstance(fn, types.FunctionType) and not getattr(fn, "__microtorch_dispatching__", False) \
                    and not fn.__module__.startswith(_NOT_TORCH_FUNCTIONS):
                setattr(module, name, dispatching(fn, engine))
    autograd = importlib.import_module("microtorch.autograd")
    for name in ("grad", "backward"):  # (torch's autograd.grad and backward dispatch too: grad's results are MyT)
        setattr(autograd, name, dispatching(getattr(autograd, name), engine))


def _make_subclass(cls, data, require_grad=False, dispatch_sizes_strides_policy=None, dispatch_device=False,
                   dispatch_layout=False, _extra_dispatch_keys=None, storage_size=None):
    """Tensor._make_subclass: an instance of cls over data's memory (and version counter), a leaf without history,
    requiring grad if asked (how a subclass's __new__ makes its instances, as nn.Parameter's in torch)."""
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError(f"_make_subclass(): argument 'cls' must be a subclass of Tensor, not {cls!r}")
    if not isinstance(data, Tensor):
        raise TypeError(f"_make_subclass(): argument 'data' (position 2) must be Tensor, not {type(data).__name__}")
    out = cls._make(data._data)
    out._version_counter = data._version_counter
    out.requires_grad_(bool(require_grad))
    return out


Tensor.__torch_function__ = default_torch_function
Tensor._make_subclass = staticmethod(_make_subclass)
_tensor.subclass_hooks.append(subclass_defined)
