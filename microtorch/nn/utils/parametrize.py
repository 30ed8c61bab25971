"""parametrize: a module's tensor computed from other tensors every time it is read.

`register_parametrization(module, "weight", P())` moves the weight into `module.parametrizations.weight.original`
(a `ParametrizationList`, a ModuleList of the parametrizations that also holds the original tensors) and swaps
the module's class for a generated subclass, `Parametrized<Class>`, with a property `weight` that returns
P(original). Registering again on the same name chains: P2(P1(original)). Assigning `module.weight = X` calls
the parametrizations' `right_inverse` backwards to find the originals. Inside `with cached():` each parametrized
tensor is computed once and reused.
"""
import collections.abc
import copy
import copyreg
from contextlib import contextmanager

from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ..modules.container import ModuleDict, ModuleList
from ..parameter import Parameter

__all__ = ["cached", "ParametrizationList", "register_parametrization", "is_parametrized",
           "remove_parametrizations", "type_before_parametrizations", "transfer_parametrizations_and_params"]

_cache_depth = 0
_cache = {}


@contextmanager
def cached():
    """Compute each parametrized tensor once inside the block (the first time it is read), and reuse that value;
    the values are dropped when the outermost block ends."""
    global _cache_depth, _cache
    _cache_depth += 1
    try:
        yield
    finally:
        _cache_depth -= 1
        if not _cache_depth:
            _cache = {}


def _register_parameter_or_buffer(module, name, value):
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _set_in_place(dest, src):
    """dest takes src's data and keeps its identity (an optimizer holding dest still updates the original)."""
    dest.set_(src)


def _check_kept(value, original, what):
    if getattr(value, what) != getattr(original, what):
        raise ValueError(f"When `right_inverse` outputs one tensor, it may not change the {what}.\n"
                         f"original.{what}: {getattr(original, what)}\n"
                         f"right_inverse(original).{what}: {getattr(value, what)}")


def _inverted(modules, value, skip_missing):
    """value passed through the right_inverse of each parametrization, last registered first (none: identity)."""
    with no_grad():
        for module in reversed(modules):
            if hasattr(module, "right_inverse"):
                try:
                    value = module.right_inverse(value)
                except NotImplementedError:
                    if not skip_missing:
                        raise
            elif not skip_missing:
                raise RuntimeError(f"parametrization {type(module).__name__} does not implement right_inverse.")
    return value


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor of a module, in the order they apply, and the original tensor(s) they
    start from: `original`, or `original0`, `original1`, ... when the first right_inverse returns several.
    register_parametrization makes it; it is not meant to be built by hand."""

    def __init__(self, modules, original, unsafe=False):
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        shape, dtype = original.shape, original.dtype
        new = _inverted(list(self), original, skip_missing=True)
        if not isinstance(new, (Tensor, collections.abc.Sequence)):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                             f"Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            _check_kept(new, original, "dtype")
            with no_grad():
                _set_in_place(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            self._register_originals(new, original)
        if not self.unsafe:
            self._check_result(shape, dtype)

    def _register_originals(self, values, original):
        for i, value in enumerate(values):
            if not isinstance(value, Tensor):
                raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                                 f"Got element {i} of the sequence with type {type(value).__name__}.")
            if isinstance(original, Parameter):
                value = Parameter(value, original.requires_grad)
            value.requires_grad_(original.requires_grad)
            _register_parameter_or_buffer(self, f"original{i}", value)

    def _check_result(self, shape, dtype):
        value = self()
        if not isinstance(value, Tensor):
            raise ValueError(f"A parametrization must return a tensor. Got {type(value).__name__}.")
        for what, before, after in (("dtype", dtype, value.dtype), ("shape", shape, value.shape)):
            if after != before:
                raise ValueError(f"Registering a parametrization may not change the {what} of the tensor, unless "
                                 f"`unsafe` flag is enabled.\nunparametrized {what}: {before}\n"
                                 f"parametrized {what}: {after}")

    def right_inverse(self, value):
        """Store the originals that give `value`: the right_inverse of each parametrization, last one first."""
        with no_grad():
            value = _inverted(list(self), value, skip_missing=False)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got {type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype {value.dtype} while "
                                     f"`original` has dtype {self.original.dtype}")
                _set_in_place(self.original, value)
                return
            if not isinstance(value, collections.abc.Sequence):
                raise ValueError(f"'right_inverse' must return a sequence of tensors. Got {type(value).__name__}.")
            if len(value) != self.ntensors:
                raise ValueError(f"'right_inverse' must return a sequence of tensors of length {self.ntensors}. "
                                 f"Got a sequence of length {len(value)}.")
            for i, tensor in enumerate(value):
                original = getattr(self, f"original{i}")
                if not isinstance(tensor, Tensor):
                    raise ValueError("'right_inverse' must return a sequence of tensors or reference-type opaques. "
                                     f"Got element {i} of type {type(tensor).__name__}.")
                if original.dtype != tensor.dtype:
                    raise ValueError(f"Tensor {i} returned by `right_inverse` has dtype {tensor.dtype} while "
                                     f"`original{i}` has dtype {original.dtype}")
                _set_in_place(original, tensor)

    def forward(self):
        modules = list(self)
        if self.is_tensor:
            x = modules[0](self.original)
        else:
            x = modules[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in modules[1:]:
            x = module(x)
        return x


# ---- the generated class and its properties ------------------------------------------------------------------
def _deepcopy(self, memo):
    """deepcopy without pickling (which a parametrized module refuses): a new object of the same class."""
    if id(self) in memo:
        return memo[id(self)]
    replica = self.__new__(self.__class__)
    memo[id(self)] = replica
    replica.__dict__ = copy.deepcopy(self.__dict__, memo)
    for slot in copyreg._slotnames(self.__class__):
        if hasattr(self, slot):
            setattr(replica, slot, copy.deepcopy(getattr(self, slot), memo))
    return replica


def _refuse_pickling(self):
    raise RuntimeError("Serialization of parametrized modules is only supported through state_dict(). See:\n"
                       "https://pytorch.org/tutorials/beginner/saving_loading_models.html"
                       "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training")


def _inject_new_class(module):
    """Give this one module a class of its own, Parametrized<Class>, so that properties can be set on it."""
    cls = module.__class__
    namespace = {"__getstate__": _refuse_pickling}
    if not hasattr(cls, "__deepcopy__"):
        namespace["__deepcopy__"] = _deepcopy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), namespace)


def _inject_property(module, tensor_name):
    if hasattr(module, tensor_name):
        raise AssertionError(f"Module already has an attribute named '{tensor_name}'")

    def get_parametrized(self):
        parametrization = self.parametrizations[tensor_name]
        if not _cache_depth:
            return parametrization()
        key = (id(self), tensor_name)
        value = _cache.get(key)
        if value is None:
            value = _cache[key] = parametrization()
        return value

    def set_original(self, value):
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


# ---- the public functions ---------------------------------------------------------------------------------
def _check_chained(module, tensor_name, parametrization):
    """A parametrization added to one already there must keep module.<name>'s dtype and shape (so must its
    right_inverse), unless unsafe."""
    y = getattr(module, tensor_name)
    x = parametrization(y)
    if not isinstance(x, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(x).__name__}.")
    for what, before, after in (("dtype", y.dtype, x.dtype), ("shape", y.shape, x.shape)):
        if after != before:
            raise ValueError(f"Registering a parametrization may not change the {what} of the tensor, unless the "
                             f"`unsafe` flag is enabled.\nmodule.{tensor_name}.{what}: {before}\n"
                             f"parametrization(module.{tensor_name}).{what}: {after}")
    if not hasattr(parametrization, "right_inverse"):
        return
    try:
        z = parametrization.right_inverse(x)
    except NotImplementedError:
        return
    if not isinstance(z, Tensor):
        raise ValueError(f"parametrization.right_inverse must return a tensor. Got: {type(z).__name__}")
    for what, before, after in (("dtype", y.dtype, z.dtype), ("shape", y.shape, z.shape)):
        if after != before:
            raise ValueError(f"The tensor returned by parametrization.right_inverse must have the same {what} as "
                             f"module.{tensor_name}, unless the `unsafe` flag is enabled.\n"
                             f"module.{tensor_name}.{what}: {before}\nreturned {what}: {after}")


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Make module.<tensor_name> read as parametrization(original), the original kept in
    module.parametrizations[tensor_name]; a second call on the same name chains. Returns module."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            _check_chained(module, tensor_name, parametrization)
        module.parametrizations[tensor_name].append(parametrization)
        module.parametrizations[tensor_name].unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a parametrized element with "
                         f"name '{tensor_name}'")
    return module


def is_parametrized(module, tensor_name=None):
    """Whether module has any parametrization (or one on tensor_name)."""
    parametrizations = getattr(module, "parametrizations", None)
    if not isinstance(parametrizations, ModuleDict):
        return False
    return len(parametrizations) > 0 if tensor_name is None else tensor_name in parametrizations


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Undo register_parametrization on tensor_name: module.<tensor_name> becomes a parameter (or buffer) again,
    holding the parametrized value (leave_parametrized=True) or the original. The module gets its own class
    back once nothing is parametrized."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with no_grad():
                _set_in_place(original, getattr(module, tensor_name))
    elif leave_parametrized:
        value = getattr(module, tensor_name)
        original = Parameter(value) if value.requires_grad else value
    else:
        raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is parametrized in "
                         "terms of a sequence of tensors.")
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module):
    """The module's class as it was before any parametrization (its own class when it has none)."""
    return module.__class__.__bases__[0] if is_parametrized(module) else type(module)


def transfer_parametrizations_and_params(from_module, to_module, tensor_name=None):
    """Register from_module's parametrizations (all, or tensor_name's) on to_module, which then shares the
    original tensors; a tensor to_module lacks is made first. Returns to_module."""
    if not is_parametrized(from_module):
        return to_module
    names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
    for name in names:
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name)))
        source = from_module.parametrizations[name]
        for parametrization in source:
            register_parametrization(to_module, name, parametrization)
        target = to_module.parametrizations[name]
        if hasattr(source, "original"):
            target.original = source.original
        else:
            i = 0
            while hasattr(source, f"original{i}"):
                setattr(target, f"original{i}", getattr(source, f"original{i}"))
                i += 1
    return to_module
