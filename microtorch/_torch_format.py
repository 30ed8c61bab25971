"""Read the zip files torch.save writes (its format since torch 1.6), without importing torch.

Such a file is a zip archive whose members sit in one folder (`archive/` since torch 2.x, the file's stem before):
`data.pkl` pickles the saved object, `data/<key>` holds the raw bytes of one storage, `byteorder` says how those
bytes are ordered ("little" when it is missing). In the pickle every tensor is a call of a rebuild function,
`torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks)`, and every storage a
persistent id `('storage', <storage class>, key, location, numel)` that the unpickler resolves itself.

The pickle is read by `_TorchUnpickler`, whose `find_class` knows only the globals of `_GLOBALS`: the rebuild
functions, the storage classes, dtypes, torch.Size and torch.device, OrderedDict, Counter and the builtins that
pickle uses for sets, complex numbers and bytes; the family of objects torch.load(weights_only=True) accepts.
Any other global (a whole nn.Module, a user's class) is refused with pickle.UnpicklingError before it is looked
up, so a file never makes microtorch import a module or call anything else, and torch is never imported. The
loaded tensors are microtorch's: one numpy buffer per storage, and each tensor a view of it made by `set_` with
the saved offset, sizes and strides, so tensors that shared a storage in torch share memory here too.

The pure-Python unpickler (pickle._Unpickler) is used rather than the C one because it lets BUILD be narrowed:
BUILD sets attributes of the object below it, and the C unpickler would set them on whatever the file names,
even a dtype that the whole process shares. torch writes BUILD only for a state dict's `_metadata`.
"""
import io
import pickle
import pickletools
import re
import struct
import sys
import zipfile
import zlib
from collections import Counter, OrderedDict

import numpy as np

from . import _dtype
from ._serialization import safe_global
from ._storage import _LEGACY_BY_NAME, TypedStorage, UntypedStorage
from ._tensor import Size, Tensor, device
from .nn.parameter import Parameter


class _Corrupt(Exception):
    """The file breaks the format (a member missing, a storage too short, a tensor outside its storage)."""


class _Refused(Exception):
    """The file holds something microtorch will not build; load raises it as pickle.UnpicklingError (not one while
    unpickling, so that the unpickler's own errors, which mean a damaged file, stay apart)."""


class _Ref:
    """A global the file may only pass as an argument (a storage class, a tensor type): not callable, so that a
    crafted file cannot call it (torch's legacy storage classes would allocate any size asked)."""
    __slots__ = ("name", "value")

    def __init__(self, name, value):
        self.name, self.value = name, value

    def __repr__(self):
        return f"<torch global {self.name}>"


# ---- what the rebuild functions do ----------------------------------------------------------------------------------
def _rebuild_tensor(storage, storage_offset, size, stride):
    """A tensor over `storage` at an offset, with sizes and strides, made as torch makes it (with set_, so its
    _version is 1, as torch's loaded tensors)."""
    if not isinstance(storage, TypedStorage):
        raise _Corrupt(f"a tensor is rebuilt from a {type(storage).__name__}, not from a storage")
    t = Tensor._make(np.empty(0, storage.dtype.np))
    try:
        return t.set_(storage, storage_offset, tuple(size), tuple(stride))
    except (RuntimeError, TypeError) as e:
        raise _Corrupt(f"a tensor's sizes, strides or offset do not fit its storage ({e})") from None


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
    """torch's usual record of a tensor. Hooks are never saved (torch writes an empty OrderedDict)."""
    t = _with_metadata(_rebuild_tensor(storage, storage_offset, size, stride), metadata)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype, metadata=None):
    """torch's record of a tensor whose dtype has no legacy storage class: the storage is bytes, the dtype given."""
    if not (isinstance(storage, TypedStorage) and isinstance(dtype, _dtype.dtype)):
        raise _Corrupt("a tensor is rebuilt from something other than a storage and a dtype")
    typed = TypedStorage._wrap(storage._untyped_storage, dtype)
    return _rebuild_tensor_v2(typed, storage_offset, size, stride, requires_grad, backward_hooks, metadata)


def _with_metadata(t, metadata):
    """torch saves a lazily conjugated or negated tensor's memory as it is, with a flag (`{'conj': True}`).
    microtorch has no such flags: the loaded tensor holds the values, in memory of its own."""
    if not metadata:
        return t
    if not isinstance(metadata, dict) or set(metadata) - {"conj", "neg"}:
        raise _Corrupt(f"unknown tensor metadata {metadata!r}")
    data = t._data
    if metadata.get("conj"):
        data = np.conj(data)
    if metadata.get("neg"):
        data = np.negative(data)
    t._data = data  # (t is not handed out yet: no view of it, no graph)
    return t


def _rebuild_parameter(data, requires_grad, backward_hooks):
    if not isinstance(data, Tensor):
        raise _Corrupt(f"a Parameter is rebuilt from a {type(data).__name__}, not from a tensor")
    return Parameter(data, requires_grad=bool(requires_grad))


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    """A Parameter that had Python attributes of its own (`p.my_flag = True`)."""
    return _with_state(_rebuild_parameter(data, requires_grad, backward_hooks), state)


def _rebuild_from_type_v2(func, new_type, args, state):
    """A tensor with Python attributes of its own: `func(*args)` rebuilds it, `state` holds the attributes."""
    if func not in _REBUILDERS or not (isinstance(new_type, _Ref) and new_type.value in (Tensor, Parameter)):
        raise _Corrupt("a tensor is rebuilt with a function or type that torch does not write there")
    t = func(*args)
    if new_type.value is Parameter and not isinstance(t, Parameter):
        t = Parameter(t, requires_grad=t.requires_grad)
    return _with_state(t, state)


def _with_state(t, state):
    """Set the attributes torch saved with a tensor; only new public names, never one Tensor defines."""
    if not state:
        return t
    if not isinstance(state, dict):
        raise _Refused(f"microtorch cannot restore a tensor's state of type {type(state).__name__}")
    for key, value in state.items():
        if not (isinstance(key, str) and key.isidentifier() and not key.startswith("_")
                and not hasattr(type(t), key) and key not in t.__dict__):
            raise _Refused(f"microtorch will not set the attribute {key!r} of a loaded tensor (it restores only "
                           "new public attributes)")
        setattr(t, key, value)
    return t


_REBUILDERS = (_rebuild_tensor, _rebuild_tensor_v2, _rebuild_tensor_v3, _rebuild_parameter,
               _rebuild_parameter_with_state)


def _bytes(text, encoding="latin1"):
    """_codecs.encode, as protocol 2 pickles bytes: only a str in latin-1."""
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise _Corrupt("bytes are pickled as a latin-1 string")
    return text.encode("latin1")


def _bytearray(*args):
    """bytearray of some bytes, not of a size (a crafted file could ask for any size)."""
    if args and isinstance(args[0], int):
        raise _Corrupt("a bytearray is pickled from its bytes, not from a size")
    return bytearray(*args)


# ---- the globals a file may name -------------------------------------------------------------------------------------
def _globals():
    """{(module, name): what find_class gives for it}: torch's names (and pickle's protocol-2 builtins), mapped to
    microtorch's objects."""
    table = {("collections", "OrderedDict"): OrderedDict, ("collections", "Counter"): Counter,
             ("torch", "Size"): Size, ("torch", "device"): device,
             ("torch", "Tensor"): _Ref("torch.Tensor", Tensor),
             ("torch.nn.parameter", "Parameter"): _Ref("torch.nn.parameter.Parameter", Parameter),
             ("torch.storage", "UntypedStorage"): _Ref("torch.storage.UntypedStorage", _dtype.uint8),
             ("torch._tensor", "_rebuild_from_type_v2"): _rebuild_from_type_v2, ("_codecs", "encode"): _bytes}
    for fn in _REBUILDERS:
        table["torch._utils", fn.__name__] = fn
    for module in ("builtins", "__builtin__"):
        table.update({(module, "set"): set, (module, "frozenset"): frozenset, (module, "complex"): complex,
                      (module, "bytearray"): _bytearray})
    for dt in _dtype.ALL:
        table["torch", dt.name] = dt
    for name, cls in _LEGACY_BY_NAME.items():
        table["torch", name] = _Ref(f"torch.{name}", cls.dtype)
    return table


_GLOBALS = _globals()
# torch's dtypes that microtorch lacks (bfloat16, uint16, float8_e4m3fn, complex32, qint8, bits8, ...)
_OTHER_DTYPE = re.compile(r"(b?float|q?u?int|complex|bits)\d.*|.*Storage")
_OTHER_TENSORS = {  # torch's rebuild functions for tensors microtorch has no kind of
    "_rebuild_sparse_tensor": "a sparse tensor (in torch: t.to_dense())",
    "_get_layout": "a sparse tensor (in torch: t.to_dense())",
    "_rebuild_qtensor": "a quantized tensor (in torch: t.dequantize())",
    "_rebuild_nested_tensor": "a nested tensor (in torch: t.to_padded_tensor(0.0))",
    "_rebuild_meta_tensor_no_storage": "a tensor on the meta device, which has no values",
    "_rebuild_wrapper_subclass": "a tensor subclass without storage",
    "_rebuild_device_tensor_from_numpy": "a tensor of a device without storage (in torch: t.cpu())",
    "_rebuild_device_tensor_from_cpu_tensor": "a tensor of a device without storage (in torch: t.cpu())"}


# ---- the archive -----------------------------------------------------------------------------------------------------
def _swaps(zf, folder):
    """Whether the storages' bytes must be swapped: the file's byte order (torch's default: little) is not ours."""
    try:
        order = zf.read(f"{folder}/byteorder").decode("ascii", "replace").strip()
    except KeyError:
        order = "little"
    if order not in ("little", "big"):
        raise _Corrupt(f"unknown byte order {order!r}")
    return order != sys.byteorder


def _device_for(location, map_location):
    """Where torch would restore a storage saved at `location`, map_location read as torch reads it: a dict maps
    saved locations to new ones, a device (or its name) takes every storage. A callable is taken to put storages on
    the CPU (as `lambda storage, loc: storage` does): it is given torch's storages, which there are none of here."""
    if isinstance(location, bytes):  # (files from Python 2)
        location = location.decode("ascii", "replace")
    if map_location is None:
        return str(location)
    if isinstance(map_location, dict):
        return str(map_location.get(location, location))
    return "cpu" if callable(map_location) else str(map_location)


def _check_location(location, map_location):
    where = _device_for(location, map_location)
    if where == "cpu" or where.startswith("cpu:"):
        return
    if where.startswith("cuda"):
        raise RuntimeError("Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is "
                           "False. If you are running on a CPU-only machine, please use torch.load with "
                           "map_location=torch.device('cpu') to map your storages to the CPU. (microtorch runs "
                           "on numpy, on the CPU.)")
    raise RuntimeError(f"don't know how to restore data location of torch.storage.UntypedStorage (tagged with "
                       f"{where}); microtorch loads storages onto the CPU: pass map_location='cpu'")


# ---- the unpickler ---------------------------------------------------------------------------------------------------
class _TorchUnpickler(pickle._Unpickler):
    """Reads data.pkl: globals from `_GLOBALS` only, storages from the archive's members, BUILD only on an
    OrderedDict."""

    dispatch = dict(pickle._Unpickler.dispatch)

    def __init__(self, file, zf, folder, name, map_location, weights_only):
        super().__init__(file)
        self._zip, self._folder, self._name = zf, folder, name
        self._map_location, self._weights_only = map_location, weights_only
        self._swap = _swaps(zf, folder)
        self._storages = {}  # key -> TypedStorage: every tensor over one key shares its memory

    def find_class(self, module, name):
        found = _GLOBALS.get((module, name)) or safe_global(module, name)
        if found is not None:
            return found
        if module == "torch" and _OTHER_DTYPE.fullmatch(name):
            what = f"a storage of class torch.{name}" if name.endswith("Storage") else f"a tensor of dtype torch.{name}"
            raise RuntimeError(f"load: {self._name!r} holds {what}, which microtorch does not have (its dtypes: "
                               f"{', '.join(d.name for d in _dtype.ALL)}). In torch, convert it first, e.g. "
                               "torch.save({k: v.float() for k, v in state_dict.items()}, path)")
        if module in ("torch._utils", "torch.serialization") and name in _OTHER_TENSORS:
            raise RuntimeError(f"load: {self._name!r} holds {_OTHER_TENSORS[name]}, which microtorch does not have; "
                               "microtorch loads dense CPU tensors")
        raise _Refused(self._refusal(f"{module}.{name}"))

    def _refusal(self, name):
        hint = (" (a whole torch model or one of its layers, as torch.save(model, path) writes)"
                if name.startswith("torch.nn.") else "")
        fix = ("In torch, save the model's state dict instead: torch.save(model.state_dict(), path); then here: "
               "model.load_state_dict(microtorch.load(path)).")
        if self._weights_only:
            return (f"Weights only load failed: {self._name!r} was written by torch.save and names the global "
                    f"{name}{hint}, which is not an allowed global. microtorch loads only tensors, Parameters and "
                    "containers of them (dicts, lists, tuples, numbers, strings, None, torch.Size, dtypes) from "
                    f"torch's files, as torch.load(path, weights_only=True) does, and the classes given to "
                    f"microtorch.serialization.add_safe_globals([...]) if you trust the file. {fix}")
        return (f"load: {self._name!r} was written by torch.save and names the global {name}{hint}, which "
                "microtorch cannot rebuild: it reads torch's files without torch, so it loads only tensors, "
                f"Parameters and containers of them from them, even with weights_only=False. {fix}")

    def persistent_load(self, pid):
        """('storage', storage class, key, location, numel) -> a TypedStorage over the member data/<key>."""
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] in ("storage", b"storage")):
            raise _Corrupt(f"unknown persistent id {str(pid)[:80]}")
        _, kind, key, location, numel = pid
        if not (isinstance(kind, _Ref) and isinstance(kind.value, _dtype.dtype)):
            raise _Corrupt(f"a storage of kind {kind!r}")
        _check_location(location, self._map_location)
        if key not in self._storages:
            self._storages[key] = self._read_storage(str(key), numel, kind.value)
        return self._storages[key]

    def _read_storage(self, key, numel, dt):
        member = f"{self._folder}/data/{key}"
        try:
            size = self._zip.getinfo(member).file_size
        except KeyError:
            raise _Corrupt(f"its storage {key!r} is missing (no member {member!r})") from None
        if not isinstance(numel, int) or numel < 0 or size < numel * dt.itemsize:
            raise _Corrupt(f"its storage {key!r} holds {size} bytes, not {numel} elements of {dt.name}")
        raw = np.frombuffer(self._zip.read(member), np.uint8, count=numel * dt.itemsize).copy()
        if self._swap:
            raw.view(dt.np).byteswap(inplace=True)
        return TypedStorage._wrap(UntypedStorage._over(raw), dt)

    def _load_build(self):
        """BUILD: torch writes it to give a state dict its `_metadata` (an OrderedDict's attribute)."""
        target = self.stack[-2]
        if safe_global(type(target).__module__, type(target).__qualname__) is type(target):
            return pickle._Unpickler.load_build(self)  # (an instance of a class the user allowed: its state)
        state = self.stack.pop()
        if type(target) is not OrderedDict or not isinstance(state, dict) or not all(isinstance(k, str)
                                                                                       for k in state):
            raise _Refused(f"load: {self._name!r} sets the state of a {type(target).__name__}: microtorch sets only "
                           "an OrderedDict's attributes (a state dict's _metadata)")
        target.__dict__.update(state)

    dispatch[pickle.BUILD[0]] = _load_build


def load_zip(zf, folder, name, map_location=None, weights_only=True):
    """The object a torch.save zip file holds (open as zf, its members under `folder/`)."""
    if f"{folder}/constants.pkl" in zf.namelist():
        raise RuntimeError(f"load: {name!r} is a TorchScript archive (torch.jit.save), which microtorch cannot "
                           "run; in torch, save the model's state dict instead: torch.save(model.state_dict(), path)")
    try:
        data = zf.read(f"{folder}/data.pkl")
        for _ in pickletools.genops(data):  # (a damaged pickle is found before anything in it is looked up)
            pass
        return _TorchUnpickler(io.BytesIO(data), zf, folder, name, map_location, weights_only is not False).load()
    except _Refused as e:
        raise pickle.UnpicklingError(str(e)) from None
    except (_Corrupt, pickle.UnpicklingError, EOFError, ValueError, KeyError, TypeError, IndexError, AttributeError,
            OverflowError, UnicodeDecodeError, struct.error, zlib.error, zipfile.BadZipFile) as e:
        problem = e
    why = problem if isinstance(problem, _Corrupt) else f"reading it failed ({type(problem).__name__}: {problem})"
    raise RuntimeError(f"load: {name!r} is corrupt: it is a zip file as torch.save writes them, but {why}") from None
