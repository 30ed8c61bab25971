"""Module: the base class of every layer and model.

A Module keeps three ordered dicts: its Parameters, its buffers (tensors that are state but
not learned, like BatchNorm's running mean) and its child Modules. Assigning an attribute
files the value into the right dict, which is how `named_parameters()` finds "net.0.weight".
Calling a module runs its hooks around `forward`; with no hook registered it is just
`forward`.
"""
import functools
import inspect
from collections import OrderedDict, namedtuple

from ... import _dtype
from ..._tensor import Tensor, cuda_unavailable, device, device_type, unavailable
from ...autograd import graph
from ...autograd.function import Function
from ..._user_line import warn_at_user_line
from ...autograd.grad_mode import is_grad_enabled, no_grad
from ..parameter import Parameter, is_lazy
from . import _legacy_hooks


def _made_on_device(init):
    """A layer's __init__ whose `device=` is honoured: its parameters and buffers are made on that device, as
    torch's factory_kwargs make them ('meta': shapes without data; a device microtorch lacks: its error)."""
    signature = inspect.signature(init)

    @functools.wraps(init)
    def made_on(self, *args, **kwargs):
        try:
            where = signature.bind_partial(self, *args, **kwargs).arguments.get("device")
        except TypeError:  # (wrong arguments: the call below raises Python's own error for them)
            where = None
        if where is None:
            return init(self, *args, **kwargs)
        with where if isinstance(where, device) else device(where):
            return init(self, *args, **kwargs)
    return made_on


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(s, spaces):
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    return lines[0] + "\n" + "\n".join((spaces * " ") + line if line.strip() else "" for line in lines[1:])


def _type_name(value):
    if isinstance(value, Tensor):
        return f"microtorch.{value.type().split('.')[-1]}"
    return type(value).__name__


class Module:
    """Base class for all neural network modules; subclasses define `forward`."""

    training: bool
    _version = 1

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.__module__.startswith("microtorch.") and "__init__" in cls.__dict__ \
                and "device" in inspect.signature(cls.__init__).parameters:
            cls.__init__ = _made_on_device(cls.__init__)

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected arguments; Module.__init__ takes none "
                            "(call super().__init__() first in your own __init__)")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = {}
        d["_forward_pre_hooks"] = OrderedDict()  # (the hook containers are torch's type: they print as torch's)
        d["_forward_pre_hooks_with_kwargs"] = set()
        d["_forward_hooks"] = OrderedDict()
        d["_forward_hooks_with_kwargs"] = set()
        d["_forward_hooks_always_called"] = set()
        d["_backward_hooks"] = OrderedDict()
        d["_backward_pre_hooks"] = OrderedDict()

    def forward(self, *input):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function: '
                                  "define forward(self, x) in your Module subclass")

    # ---- calling: hooks around forward -------------------------------------------------
    def __call__(self, *args, **kwargs):
        d = self.__dict__
        if not (d["_forward_pre_hooks"] or d["_forward_hooks"] or d["_backward_hooks"] or d["_backward_pre_hooks"]):
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    def _call_with_hooks(self, args, kwargs):
        listening = bool(graph._listeners)
        for hook_id, hook in list(self._forward_pre_hooks.items()):
            before = args
            if hook_id in self._forward_pre_hooks_with_kwargs:
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError("forward pre-hook registered with with_kwargs=True must return None or a "
                                           f"tuple of (new_args, new_kwargs), but got {result!r}.")
                    args, kwargs = result
            else:
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
            if listening:
                graph.emit(graph.HookFired("module_forward_pre", self, hook, before, args))

        bw, full = None, self.__dict__.get("_is_full_backward_hook") is not False
        if (self._backward_hooks and full or self._backward_pre_hooks) and is_grad_enabled():
            bw = _BackwardHook(self)
            args = bw.setup_input_hook(args)
        try:
            result = self.forward(*args, **kwargs)
        except Exception:
            for hook_id, hook in list(self._forward_hooks.items()):
                if hook_id in self._forward_hooks_always_called:
                    try:
                        hook(self, args, kwargs, None) if hook_id in self._forward_hooks_with_kwargs \
                            else hook(self, args, None)
                    except Exception:
                        pass
            raise
        for hook_id, hook in list(self._forward_hooks.items()):
            before = result
            if hook_id in self._forward_hooks_with_kwargs:
                new = hook(self, args, kwargs, result)
            else:
                new = hook(self, args, result)
            if new is not None:
                result = new
            if listening:
                graph.emit(graph.HookFired("module_forward", self, hook, before, result))
        if bw is not None:
            result = bw.setup_output_hook(result)
        if not full and self._backward_hooks:
            _legacy_hooks.attach(self, args, result)
        return result

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """hook(module, args) -> None or new args, before forward (with_kwargs: hook(module, args, kwargs))."""
        handle = _add_hook(self._forward_pre_hooks, hook, prepend)
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs.add(handle.id)
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """hook(module, args, output) -> None or a new output, after forward."""
        handle = _add_hook(self._forward_hooks, hook, prepend)
        if with_kwargs:
            self._forward_hooks_with_kwargs.add(handle.id)
        if always_call:
            self._forward_hooks_always_called.add(handle.id)
        return handle

    def register_full_backward_hook(self, hook, prepend=False):
        """hook(module, grad_input, grad_output) -> None or a new grad_input, once the gradients
        with respect to the module's inputs are computed."""
        self._one_kind_of_backward_hook(True)
        return _add_hook(self._backward_hooks, hook, prepend)

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """hook(module, grad_output) -> None or a new grad_output, before the module's gradients are computed."""
        return _add_hook(self._backward_pre_hooks, hook, prepend)

    def register_backward_hook(self, hook):
        """Deprecated (as in torch): hook(module, grad_input, grad_output) on the grad_fn of the output only
        (see _legacy_hooks); register_full_backward_hook gives the module's own gradients."""
        self._one_kind_of_backward_hook(False)
        return _add_hook(self._backward_hooks, hook, False)

    def _one_kind_of_backward_hook(self, full):
        if self.__dict__.get("_is_full_backward_hook") is (not full):
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single Module. "
                               "Please use only one of them.")
        self.__dict__["_is_full_backward_hook"] = full

    # ---- attributes: parameters, buffers, submodules ----------------------------------
    def __getattr__(self, name):
        d = self.__dict__
        if "_parameters" in d:
            if name in d["_parameters"]:
                return d["_parameters"][name]
            if name in d["_buffers"]:
                return d["_buffers"][name]
            if name in d["_modules"]:
                return d["_modules"][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call "
                                     "(call super().__init__() first in your __init__)")
            _remove_from(self, name, "_buffers", "_modules")
            d.pop(name, None)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_type_name(value)}' as parameter '{name}' "
                                "(microtorch.nn.Parameter or None expected); wrap it: nn.Parameter(value)")
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            if params is None:
                raise AttributeError("cannot assign module before Module.__init__() call "
                                     "(call super().__init__() first in your __init__)")
            _remove_from(self, name, "_parameters", "_buffers")
            d.pop(name, None)
            d["_modules"][name] = value
        elif params is not None and name in d["_modules"]:
            if value is not None:
                raise TypeError(f"cannot assign '{_type_name(value)}' as child module '{name}' "
                                "(microtorch.nn.Module or None expected)")
            d["_modules"][name] = value
        elif getattr(value, "_is_buffer", False) and isinstance(value, Tensor):  # nn.Buffer(t) (nn2)
            _remove_from(self, name, "_parameters", "_modules")
            d.pop(name, None)
            self.register_buffer(name, value, value.persistent)
        elif params is not None and name in d["_buffers"]:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_type_name(value)}' as buffer '{name}' "
                                "(microtorch.Tensor or None expected)")
            d["_buffers"][name] = value
        else:
            object.__setattr__(self, name, value)

    def __delattr__(self, name):
        for attr in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__[attr]:
                del self.__dict__[attr][name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        keys = list(object.__dir__(self)) + list(self._parameters) + list(self._modules) + list(self._buffers)
        return sorted(k for k in set(keys) if not k[0].isdigit())

    def register_parameter(self, name, param):
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_name(self, name, "parameter", "_parameters")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_type_name(param)}' object to parameter '{name}' "
                            "(microtorch.nn.Parameter or None required)")
        if param is not None and param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                             "created explicitly. To express '{name}' as a function of another Tensor, compute "
                             "the value in the forward() method.")
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        """A tensor that is state (saved in state_dict if persistent) but not a parameter."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name(self, name, "buffer", "_buffers")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_type_name(tensor)}' object to buffer '{name}' "
                            "(microtorch Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_type_name(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {type(name).__name__}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target):
        mod = self
        if target == "":
            return mod
        for item in target.split("."):
            if item not in mod._modules:
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = mod._modules[item]
        return mod

    def get_parameter(self, target):
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if name not in mod._parameters:
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return mod._parameters[name]

    # ---- iteration ---------------------------------------------------------------------
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if remove_duplicate:
            if self in memo:
                return
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        memo = set()
        for name, m in self._modules.items():
            if m is not None and m not in memo:
                memo.add(m)
                yield name, m

    def children(self):
        for _, m in self.named_children():
            yield m

    def _named_members(self, attr, prefix, recurse, remove_duplicate):
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse \
            else [(prefix, self)]
        for mod_prefix, module in modules:
            for name, v in module.__dict__[attr].items():
                if v is None or (remove_duplicate and id(v) in memo):
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield mod_prefix + ("." if mod_prefix else "") + name, v

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """(name, Parameter) pairs, named by their path: "net.0.weight"."""
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # ---- modes and gradients ------------------------------------------------------------
    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                g = p.grad
                if g.grad_fn is not None:
                    g.detach_()
                else:
                    g.requires_grad_(False)
                g._data[...] = 0
                g._version_counter[0] += 1

    # ---- conversions --------------------------------------------------------------------
    def apply(self, fn):
        """fn(module) for every submodule (children first) and self; returns self."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def _apply(self, fn, recurse=True):
        """Convert every parameter and buffer in place: the Parameter objects stay the same (so an
        optimizer built before `.double()` still holds them); their data and .grad change."""
        for m in self.children() if recurse else ():
            m._apply(fn)
        with no_grad():
            for p in self._parameters.values():
                if p is None:
                    continue
                new = fn(p)
                if new is not p:
                    p._data = new._data
                    if p._grad is not None:
                        p._grad = Tensor._make(fn(p._grad)._data)
            for name, b in self._buffers.items():
                if b is not None:
                    self._buffers[name] = fn(b)
        return self

    def to(self, *args, **kwargs):
        """to(dtype), to("cpu"), to(tensor): converts floating-point parameters and buffers."""
        dtype, meta = kwargs.get("dtype"), False
        for a in list(args) + [kwargs.get("device")]:
            if isinstance(a, _dtype.dtype):
                dtype = a
            elif isinstance(a, Tensor):
                dtype = a.dtype
            elif a is not None and device_type(a) == "meta":  # shapes without data, e.g. a base for functional_call
                meta = True
            elif a is not None and device_type(a) != "cpu":
                raise unavailable(a)
        if meta:
            self._apply(lambda t: t.to("meta"))
        if dtype is None:
            return self
        dtype = _dtype.to_dtype(dtype)
        if not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got desired "
                            f"dtype={dtype}")
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() or t.is_complex() else t)

    def to_empty(self, *, device, recurse=True):
        """Parameters and buffers moved to `device` without their values: how a model built on 'meta' (shapes
        only) gets memory, to be filled by reset_parameters() or load_state_dict() (here they hold zeros)."""
        from ..._creation import empty_like
        return self._apply(lambda t: empty_like(t, device=device), recurse)

    def double(self):
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def float(self):
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def half(self):
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def type(self, dst_type):
        """Every parameter and buffer converted to dst_type (a dtype, a legacy class such as DoubleTensor, or its
        name), integer buffers included, as torch's (Module.to(dtype) leaves those alone); self."""
        def convert(t):
            new = t.type(dst_type)
            if t.requires_grad and not (new.is_floating_point() or new.is_complex()):  # (torch's check on .data =)
                raise RuntimeError(f"data set to a tensor that requires gradients must be floating point or complex "
                                   f"dtype (Module.type({dst_type!r}) would make a parameter {new.dtype}; call "
                                   f"requires_grad_(False) on the parameters first, or convert to a floating type)")
            return new
        return self._apply(convert)

    def cpu(self):
        return self

    def cuda(self, device=None):
        raise cuda_unavailable(device)

    # ---- state dict -----------------------------------------------------------------------
    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """An OrderedDict of name -> tensor for every parameter and persistent buffer. The
        tensors share memory with the module's (detached unless keep_vars=True)."""
        if args:  # torch's deprecated positional form state_dict(destination, prefix, keep_vars)
            warn_at_user_line("Positional args are being deprecated, use kwargs instead. Refer to https://pytorch.org/"
                              "docs/main/generated/torch.nn.Module.html#torch.nn.Module.state_dict for details.",
                              FutureWarning)
            destination = args[0]
            prefix = args[1] if len(args) > 1 else prefix
            keep_vars = args[2] if len(args) > 2 else keep_vars
        if destination is None:
            destination = OrderedDict()
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        return destination

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        """This module's own entries of state_dict (torch's name: a lazy module overrides it)."""
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        """hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs), run by
        load_state_dict before it checks anything (module first with with_module=True): how a lazy module
        materializes its parameters to the shapes it is given."""
        hooks = self.__dict__.setdefault("_load_state_dict_pre_hooks", {})
        return _add_hook(hooks, functools.partial(hook, self) if with_module else hook, False)

    def _state_entries(self):
        """name -> (owning module, attribute dict, attribute name) for everything state_dict saves."""
        out = {}
        for prefix, m in self.named_modules(remove_duplicate=False):
            pre = prefix + "." if prefix else ""
            for name, p in m._parameters.items():
                if p is not None:
                    out[pre + name] = (m, "_parameters", name)
            for name, b in m._buffers.items():
                if b is not None and name not in m._non_persistent_buffers_set:
                    out[pre + name] = (m, "_buffers", name)
        return out

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy the tensors of `state_dict` into this module's parameters and buffers.

        As torch's: every entry that fits is copied, then any error is raised together (missing or
        unexpected keys with strict=True, a shape mismatch, a value that is not a tensor), so a failed
        strict load has still loaded what matched. Returns (missing_keys, unexpected_keys)."""
        if not isinstance(state_dict, dict):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict).__name__}.")
        for prefix, m in self.named_modules():  # (a lazy module's pre-hook materializes it to the shapes given)
            for hook in list(m.__dict__.get("_load_state_dict_pre_hooks", {}).values()):
                hook(state_dict, prefix + "." if prefix else "", {}, strict, [], [], [])
        entries = self._state_entries()
        missing = [k for k in entries if k not in state_dict and not _count_filled_in(k, entries[k], state_dict)]
        unexpected = [k for k in state_dict if k not in entries]
        errors = []
        if strict:
            if missing:
                errors.append("Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing)))
            if unexpected:
                errors.append("Unexpected key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in unexpected)))
        plan = []
        for key, (module, attr, name) in entries.items():
            if key not in state_dict:
                continue
            value, current = state_dict[key], module.__dict__[attr][name]
            if not isinstance(value, Tensor):
                errors.append(f'While copying the parameter named "{key}", expected microtorch.Tensor or Tensor-like '
                              f"object from checkpoint but received {type(value)}")
                continue
            if is_lazy(current):  # (a lazy module's own uninitialized one, given one: as torch, nothing to copy)
                continue
            if value.shape != current.shape:
                errors.append(f"size mismatch for {key}: copying a param with shape {value.shape} from checkpoint, "
                              f"the shape in current model is {current.shape}.")
                continue
            plan.append((module, attr, name, value, current))
        for module, attr, name, value, current in plan:
            if assign:
                new = Parameter(value, current.requires_grad) if attr == "_parameters" else value
                module.__dict__[attr][name] = new
            elif current.is_meta and not value.is_meta:  # (no memory to copy into: torch warns and moves on)
                warn_at_user_line(f"for {name}: copying from a non-meta parameter in the checkpoint to a meta "
                                  "parameter in the current model, which is a no-op. (Did you mean to pass "
                                  "`assign=True` to assign items in the state dictionary to their corresponding key "
                                  "in the module instead of copying them in place?)")
            else:
                current._data[...] = value._data.astype(current._data.dtype, copy=False)
                current._version_counter[0] += 1
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)

    # ---- repr ---------------------------------------------------------------------------
    def extra_repr(self):
        """The text inside Module(...) for a leaf layer, e.g. "in_features=2, out_features=3"."""
        return ""

    def _get_name(self):
        return type(self).__name__

    def __repr__(self):
        extra = self.extra_repr()
        lines = extra.split("\n") if extra else []
        for key, module in self._modules.items():
            lines.append("(" + key + "): " + _addindent(repr(module), 2))
        main = self._get_name() + "("
        if lines:
            if len(lines) == 1 and not self._modules:
                main += lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"

    def __setstate__(self, state):
        self.__dict__.update(state)


def _count_filled_in(key, entry, state_dict):
    """A BatchNorm's num_batches_tracked absent from a state dict without version metadata (a plain dict, or one
    saved before torch had the count): torch keeps the module's own count and does not call the key missing."""
    from .normalization import _BatchNorm
    module, _, name = entry
    if name != "num_batches_tracked" or not isinstance(module, _BatchNorm):
        return False
    version = (getattr(state_dict, "_metadata", None) or {}).get(key[:-len(name)].rstrip("."), {}).get("version")
    return version is None or version < 2


def _add_hook(hooks, fn, prepend):
    handle = graph.add_hook(hooks, fn)
    if prepend:
        items = list(hooks.items())
        hooks.clear()
        hooks[handle.id] = fn
        hooks.update((k, v) for k, v in items if k != handle.id)
    return handle


def _remove_from(module, name, *attrs):
    for attr in attrs:
        module.__dict__[attr].pop(name, None)
    module._non_persistent_buffers_set.discard(name)


def _check_name(module, name, what, attr):
    if not isinstance(name, str):
        raise TypeError(f"{what} name should be a string. Got {type(name).__name__}")
    if "." in name:
        raise KeyError(f'{what} name can\'t contain "."')
    if name == "":
        raise KeyError(f'{what} name can\'t be empty string ""')
    if hasattr(module, name) and name not in module.__dict__[attr]:
        raise KeyError(f"attribute '{name}' already exists")


# ---- full backward hooks ------------------------------------------------------------------
class BackwardHookFunction(Function):
    """Identity on the module's inputs (or outputs): its node is where the gradients with respect
    to all of them arrive together, so a hook on the node sees grad_input (or grad_output)."""

    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *grads):
        return grads


class _BackwardHook:
    """One call of a module with full backward hooks: wraps its inputs and outputs in
    BackwardHookFunction and calls hook(module, grad_input, grad_output) when both are known."""

    def __init__(self, module):
        self.module = module
        self.n_inputs = 0
        self.inputs_hooked = False
        self.grad_outputs = None

    @staticmethod
    def _wrap(values, hook):
        tensors = [(i, v) for i, v in enumerate(values) if isinstance(v, Tensor)]
        if not any(t.requires_grad for _, t in tensors) or any(getattr(t._data, "__vmap_batched__", False)
                                                                for _, t in tensors):
            return values, False  # (torch's too: inside vmap its batched tensors read as not requiring grad)
        new = BackwardHookFunction.apply(*[t for _, t in tensors])
        next(t for t in new if t.grad_fn is not None).grad_fn.register_prehook(hook)
        values = list(values)
        for (i, _), t in zip(tensors, new):
            values[i] = t
        return values, True

    def setup_input_hook(self, args):
        self.n_inputs = sum(isinstance(a, Tensor) for a in args)
        new, self.inputs_hooked = self._wrap(args, self._on_grad_input)
        return tuple(new)

    def setup_output_hook(self, result):
        single = isinstance(result, Tensor)
        values = [result] if single else result
        if not isinstance(values, (list, tuple)):
            return result
        new, hooked = self._wrap(values, self._on_grad_output)
        if not hooked:
            return result
        return new[0] if single else type(result)(new)

    def _on_grad_output(self, grads):
        listening = bool(graph._listeners)
        grads = tuple(grads)
        for hook in list(self.module._backward_pre_hooks.values()):
            before = grads
            new = hook(self.module, grads)
            if new is not None:
                grads = tuple(new) if isinstance(new, (tuple, list)) else (new,)
            if listening:
                graph.emit(graph.HookFired("module_backward_pre", self.module, hook, before, grads))
        self.grad_outputs = grads
        if not self.inputs_hooked:  # no input requires grad: the hooks run now, with grad_input all None
            grad_inputs = (None,) * self.n_inputs
            for hook in list(self.module._backward_hooks.values()):
                res = hook(self.module, grad_inputs, grads)
                if res is not None and not all(r is None for r in res):
                    raise RuntimeError("Backward hook for Modules where no input requires gradient should always "
                                       "return None or None for all gradients.")
                if listening:
                    graph.emit(graph.HookFired("module_backward", self.module, hook, grad_inputs, grad_inputs))
        return grads
    _on_grad_output._microtorch_internal = True      # plumbing: viz.hook_timeline hides it

    def _on_grad_input(self, grads):
        listening = bool(graph._listeners)
        grads = tuple(grads)
        for hook in list(self.module._backward_hooks.values()):
            before = grads
            res = hook(self.module, grads, self.grad_outputs)
            if res is not None:
                res = tuple(res) if isinstance(res, (tuple, list)) else (res,)
                if len(res) != len(grads):
                    raise RuntimeError(f"Backward hook returned an invalid number of grad_input, got {len(res)}, "
                                       f"but expected {len(grads)}")
                grads = res
            if listening:
                graph.emit(graph.HookFired("module_backward", self.module, hook, before, grads))
        return grads
    _on_grad_input._microtorch_internal = True
