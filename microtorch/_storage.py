"""torch's storage API: `t.storage()`, `t.untyped_storage()`, TypedStorage, UntypedStorage, the legacy classes
(FloatStorage, LongStorage, ...), `t.set_(storage, offset, size, stride)` and `is_storage`.

"Deep Learning with PyTorch" (ch. 3) and fast.ai's 01_matmul look under a tensor at the flat memory it lives
in: `points.storage()` lists its six floats, `points.storage()[0] = 2.0` changes `points`, and `points[1]`,
`points.t()` and `points` share one storage at different offsets and strides.

Here a tensor's memory is a numpy buffer: the end of its array's chain of bases (`ops/resize._buffer_of`, which
`storage_offset()` reads too). An UntypedStorage is that buffer seen as bytes (a uint8 array over it, so writes go
through to every tensor over the buffer), and a TypedStorage is an UntypedStorage read as elements of a dtype.
As in torch, `t.untyped_storage()` is the same object for every tensor over one buffer while someone holds it
(`_LIVE`), and `t.storage()` a new TypedStorage around it each time. TypedStorage is deprecated in torch: the
first use in a process warns once.

What is not torch's: a new storage (`UntypedStorage(n)`, `FloatStorage(n)`) is zeros, not uninitialized memory;
storages cannot grow (`resize_`, and `set_` with a size past the storage's end, which torch grows it for, raise);
nothing is shared between processes (`is_shared()` is False, there is no `share_memory_`); the storages of a
meta tensor have no bytes and count numel elements, even for a view.
"""
import collections.abc
import copy
import weakref

import numpy as np

from . import _dtype, _meta
from ._creation import zeros
from ._tensor import Size, Tensor, device as _device, tensor
from ._user_line import _WARNED_ONCE, warn_once
from .autograd import grad_mode, views
from .ops.inplace import _check_mutable
from .ops.resize import _buffer_of

_MODULE = "microtorch.storage"  # (torch's classes live in torch.storage; so do these, by microtorch/storage.py)
_WARN_KEY = "TypedStorage is deprecated"
_DEPRECATED = ("TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only "
               "storage class. This should only matter to you if you are using storages directly.  To access "
               "UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()")  # (torch's words)
_CPU, _META = _device("cpu"), _device("meta")


def _warn():
    """torch warns once per process, the first time TypedStorage is used (at the user's line)."""
    if _WARN_KEY not in _WARNED_ONCE:
        warn_once(_WARN_KEY, _DEPRECATED)


def _reset_warn_typed_storage_removal():
    """Let the next use of TypedStorage warn again (torch.storage has the same private switch)."""
    _WARNED_ONCE.discard(_WARN_KEY)


# ---- a tensor's buffer -------------------------------------------------------------------------------------------
_LIVE = {}  # (address, nbytes) of a buffer -> weak reference to the UntypedStorage over it


def _no_batched(t):
    if getattr(t._data, "__vmap_batched__", False):
        raise NotImplementedError("Cannot access storage of BatchedTensorImpl (inside vmap a tensor stands for a "
                                  "whole batch and has no storage of its own; look at storages outside vmap)")


def untyped_storage(self):
    """torch's t.untyped_storage(): the bytes of the buffer t lives in, from its first byte (not t's)."""
    _no_batched(self)
    if _meta.is_meta(self):  # (no bytes: a storage that knows its size only)
        return UntypedStorage._over(None, self.numel() * self.element_size())
    held = _buffer_of(self._data, writable=False)
    if held is None:  # (not one buffer numpy holds whole: a read-only copy, so that no write is lost silently)
        copied = np.array(self._data, order="C").reshape(-1).view(np.uint8)
        copied.flags.writeable = False
        return UntypedStorage._over(copied)
    buffer = held[0]
    key = (buffer.__array_interface__["data"][0], buffer.size)
    found = _LIVE.get(key)
    found = found() if found is not None else None
    if found is None:
        found = UntypedStorage._over(buffer)
        _LIVE[key] = weakref.ref(found, lambda ref, key=key: _LIVE.get(key) is ref and _LIVE.pop(key))
    return found


def _typed_storage(self):
    """t.storage() without the deprecation warning."""
    return TypedStorage._wrap(untyped_storage(self), self.dtype)


def storage(self):
    """torch's t.storage(): t's whole buffer as elements of t's dtype (the base's, for a view)."""
    _warn()
    return _typed_storage(self)


# ---- UntypedStorage ----------------------------------------------------------------------------------------------
def _int_index(idx, name):
    """idx as an int if it is one (a numpy integer too; not a bool), else torch's TypeError."""
    if isinstance(idx, (int, np.integer)) and not isinstance(idx, (bool, np.bool_)):
        return int(idx)
    raise TypeError(f"can't index a {name} with {type(idx).__name__}")


def _byte_range(idx, n):
    """(start, stop) of a slice of n bytes: torch's storages take a step of 1 only."""
    start, stop, step = idx.indices(n)
    if step != 1:
        raise RuntimeError(f"Trying to slice with a step of {step}, but only a step of 1 is supported")
    return start, max(start, stop)


class UntypedStorage:
    """A buffer's bytes (torch.UntypedStorage): `len` in bytes, items are ints 0..255, writes go through."""

    is_sparse = False
    is_cuda = False

    def __init__(self, *args, device=None):
        """UntypedStorage() (no bytes), UntypedStorage(n) (n zero bytes), UntypedStorage([ints]) (those bytes)."""
        made = _made_tensor(args, _dtype.uint8, device, _bytes_from)
        self._adopt(untyped_storage(made))

    @classmethod
    def _over(cls, buffer, nbytes=None):
        """The storage over `buffer` (a 1-d uint8 array; None on the meta device, with nbytes)."""
        out = cls.__new__(cls)
        out._bytes = buffer
        out._nbytes = buffer.size if buffer is not None else nbytes
        out.device = _CPU if buffer is not None else _META
        return out

    def _adopt(self, other):
        self._bytes, self._nbytes, self.device = other._bytes, other._nbytes, other.device

    def _data(self):
        """The bytes, to read: a meta storage has none (torch's error)."""
        if self._bytes is None:
            raise NotImplementedError("Not available for 'meta' device type")
        return self._bytes

    def _writable(self):
        data = self._data()
        if not data.flags.writeable:
            raise RuntimeError("this storage's memory is read-only (its tensor was made over a read-only buffer, "
                               "or over memory numpy does not hold as one buffer); write into a clone() instead")
        return data

    def __len__(self):
        return self._nbytes

    def nbytes(self):
        return self._nbytes

    def size(self):
        return self._nbytes

    def element_size(self):
        return 1

    def data_ptr(self):
        return 0 if self._bytes is None else self._bytes.__array_interface__["data"][0]

    def __getitem__(self, idx):
        """An int 0..255, or for a slice a storage over those bytes (sharing them)."""
        if isinstance(idx, slice):
            start, stop = _byte_range(idx, self._nbytes)
            return UntypedStorage._over(self._data()[start:stop])
        i = _int_index(idx, "microtorch.UntypedStorage")
        if not -self._nbytes <= i < self._nbytes:
            raise IndexError(f"index {i if i >= 0 else i + self._nbytes} out of range for storage of size "
                             f"{self._nbytes}")
        return int(self._data()[i])

    def __setitem__(self, idx, value):
        """Write an int (kept modulo 256) at an index 0..n-1, or into every byte of a slice."""
        if isinstance(idx, slice):
            start, stop = _byte_range(idx, self._nbytes)
        else:
            try:
                start = _int_index(idx, "microtorch.UntypedStorage")
            except TypeError as e:
                raise RuntimeError(str(e)) from None
            if not 0 <= start < self._nbytes:
                raise RuntimeError(f"out of bounds (item assignment takes an index from 0 to {self._nbytes - 1}; "
                                   f"this storage has {self._nbytes} bytes, and a negative index is refused)")
            stop = start + 1
        self._writable()[start:stop] = _byte_value(value, "can only set storage content with a int types, but got {} "
                                                           "instead")

    def fill_(self, value):
        self._writable()[:] = _byte_value(value, "fill_ expects int, but got {}")
        return self

    def copy_(self, source, non_blocking=None):
        """Copy source's bytes (a storage of the same number of bytes, of any dtype) into this one."""
        if isinstance(source, TypedStorage):
            source = source._untyped_storage
        if not isinstance(source, UntypedStorage):
            raise TypeError(f"copy_(): argument 'src' (position 1) must be microtorch.Storage, not "
                            f"{type(source).__name__}")
        if source._nbytes != self._nbytes:
            raise RuntimeError(f"size does not match, self was {self._nbytes} bytes but src was {source._nbytes} "
                               "bytes")
        self._writable()[:] = source._data()
        return self

    def clone(self):
        return UntypedStorage._over(self._data().copy())

    def tolist(self):
        return self._data().tolist()

    def __iter__(self):
        return iter(self.tolist())

    def __copy__(self):
        return self.clone()

    def __deepcopy__(self, memo):
        return self.clone()

    def cpu(self):
        return self

    def untyped(self):
        return self

    def type(self, dtype=None, non_blocking=False):
        return f"{_MODULE}.UntypedStorage" if dtype is None else _cast_to(self, dtype)

    def is_shared(self):
        return False

    def is_pinned(self, device=None):
        return False

    def resizable(self):
        return False  # (torch's are: microtorch's buffers cannot grow in place)

    def get_device(self):
        return self.device.index

    def __repr__(self):
        return _listing(self, f"[{_MODULE}.UntypedStorage(device={self.device}) of size {self._nbytes}]")

    __str__ = __repr__

    def _to(self, dtype):
        """A new TypedStorage of dtype holding each byte's value."""
        return _typed_storage(Tensor._make(self._data().astype(dtype.np)))


def _byte_value(value, message):
    """An int as the byte it writes (torch keeps its low 8 bits); torch's error for anything else (a bool is an
    int here, as in torch)."""
    if not isinstance(value, int):
        module = type(value).__module__.split(".")[0]
        name = type(value).__name__ if module in ("builtins", "microtorch") else f"{module}.{type(value).__name__}"
        raise RuntimeError(message.format(name))
    return value & 0xFF


def _listing(s, info):
    """torch's str of a storage: one item per line, each after a space, then the info line."""
    if s.device.type == "meta":
        return "...\n" + info
    return " " + "\n ".join(str(v) for v in s.tolist()) + "\n" + info


def _bytes_from(data):
    """The checks torch's UntypedStorage(sequence) makes: a sequence of ints."""
    if not isinstance(data, collections.abc.Sequence) or isinstance(data, str):
        raise RuntimeError(f"microtorch.UntypedStorage(): Expected a sequence type, but got {type(data).__name__}")
    for v in data:
        if not isinstance(v, int):
            raise RuntimeError(f"microtorch.UntypedStorage(): tried to construct a storage from a sequence "
                               f"({type(data).__name__}), but one of the items was of type {type(v).__name__} "
                               "instead of int")
    return np.array([v & 0xFF for v in data], np.uint8)


def _made_tensor(args, dt, device, from_sequence):
    """The tensor whose buffer a new storage takes: no elements, n zeros, or the sequence's values."""
    if len(args) > 1:
        raise RuntimeError(f"{_usage(dt)}\nToo many positional arguments")
    if not args:
        return zeros(0, dtype=dt, device=device)
    if isinstance(args[0], (int, np.integer)) and not isinstance(args[0], bool):
        return zeros(int(args[0]), dtype=dt, device=device)
    return tensor(from_sequence(args[0]), dtype=dt, device=device)


def _usage(dt):
    return ("a storage takes one of: no arguments, (int size), (Sequence data), or (*, UntypedStorage wrap_storage)"
            f" (making a storage of {dt})")


# ---- TypedStorage ------------------------------------------------------------------------------------------------
def _typed_sequence(data):
    """TypedStorage(data) takes a sequence (list, tuple, ...), as torch's."""
    if not isinstance(data, collections.abc.Sequence):
        raise TypeError(f"TypedStorage(): argument type not recognized: {type(data)} (give a size, a sequence of "
                        "numbers, or wrap_storage=)")
    return data


def _check_wrapping(args, device, dtype, wrap_storage):
    """TypedStorage(wrap_storage=untyped, dtype=dt) takes nothing else (torch's error types)."""
    usage = "TypedStorage(wrap_storage=...) takes an UntypedStorage and a dtype, and no positional arguments or device"
    if args or device is not None or dtype is None:
        raise RuntimeError(f"{usage} (got {len(args)} positional arguments, device={device}, dtype={dtype})")
    if not isinstance(wrap_storage, UntypedStorage):
        raise TypeError(f"{usage}: argument 'wrap_storage' must be UntypedStorage, but got {type(wrap_storage)}")


class TypedStorage:
    """A buffer read as elements of one dtype (torch.TypedStorage, deprecated): items are Python numbers, item
    assignment writes through to every tensor over the buffer."""

    is_sparse = False
    __slots__ = ("dtype", "_untyped_storage")  # (as small as can be: see _wrap)

    def __init__(self, *args, device=None, dtype=None, wrap_storage=None, _internal=False):
        """TypedStorage([size or sequence], dtype=, device=), or TypedStorage(wrap_storage=untyped, dtype=)."""
        if not _internal:
            _warn()
        if wrap_storage is None:
            self.dtype = _dtype.get_default_dtype() if dtype is None else _dtype.to_dtype(dtype)
            wrap_storage = untyped_storage(_made_tensor(args, self.dtype, device, _typed_sequence))
        else:
            _check_wrapping(args, device, dtype, wrap_storage)
            self.dtype = _dtype.to_dtype(dtype)
        self._untyped_storage = wrap_storage

    @classmethod
    def _wrap(cls, untyped, dt):
        """A new TypedStorage over `untyped`, made with no other object on the way. torch makes a new one per call
        too: the book's `id(points.storage()) == id(points_t.storage())` is True there only because the second
        takes the first's freed memory. Made this way (slots, no keywords), the second one here does too."""
        out = object.__new__(cls)
        out._untyped_storage, out.dtype = untyped, dt
        return out

    def _size(self):
        return self._untyped_storage._nbytes // self.dtype.itemsize

    def _values(self, write=False):
        """The elements: a numpy array over the storage's bytes."""
        u = self._untyped_storage
        data = u._writable() if write else u._data()
        return data[:self._size() * self.dtype.itemsize].view(self.dtype.np)

    def _index(self, idx):
        """idx wrapped into 0..size-1, with torch's errors."""
        if isinstance(idx, slice):
            raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        if not isinstance(idx, int):
            raise RuntimeError(f"can't index a {type(self)} with {type(idx)}")
        if type(idx) is not int:
            raise TypeError(f"can't index a {type(self)} with {type(idx)}")
        n = self._size()
        if not -n <= idx < n:
            raise IndexError(f"index {idx} out of range for storage of size {n}")
        return idx % n

    def __getitem__(self, idx):
        _warn()
        if self.device.type == "meta":
            raise NotImplementedError("Not available for 'meta' device type")
        return self._values()[self._index(idx)].item()

    def __setitem__(self, idx, value):
        """Write as `tensor[idx] = value` writes (an int or a slice; a number or a tensor)."""
        _warn()
        if not isinstance(idx, (int, slice)):
            raise RuntimeError(f"can't index a {type(self)} with {type(idx)}")
        if isinstance(value, (TypedStorage, UntypedStorage)):
            raise RuntimeError(f"cannot set item with value type {type(value)}")
        Tensor._make(self._values(write=True))[idx] = value

    def __len__(self):
        _warn()
        return self._size()

    def size(self):
        _warn()
        return self._size()

    def __iter__(self):
        _warn()
        return iter(self._values().tolist())

    def tolist(self):
        _warn()
        return self._values().tolist()

    @property
    def device(self):
        _warn()
        return self._untyped_storage.device

    @property
    def is_cuda(self):
        _warn()
        return False

    def element_size(self):
        _warn()
        return self.dtype.itemsize

    def nbytes(self):
        _warn()
        return self._untyped_storage._nbytes

    def data_ptr(self):
        _warn()
        return self._untyped_storage.data_ptr()

    def untyped(self):
        _warn()
        return self._untyped_storage

    def get_device(self):
        _warn()
        return self.device.index

    def is_shared(self):
        _warn()
        return False

    def is_pinned(self, device=None):
        _warn()
        return False

    def resizable(self):
        _warn()
        return False

    def fill_(self, value):
        _warn()
        self[0:self._size()] = value
        return self

    def copy_(self, source, non_blocking=None):
        """Copy source's bytes (a storage of as many bytes, of any dtype: torch copies bytes, not values)."""
        _warn()
        self._untyped_storage.copy_(source)
        return self

    def _wrapped(self, untyped):
        return TypedStorage._wrap(untyped, self.dtype)

    def clone(self):
        _warn()
        return self._wrapped(self._untyped_storage.clone())

    def cpu(self):
        _warn()
        return self._wrapped(self._untyped_storage)

    def __copy__(self):
        return self._wrapped(self._untyped_storage.clone())

    def __deepcopy__(self, memo):  # (the untyped storage through deepcopy's memo: two wrappers of it stay one)
        return self._wrapped(copy.deepcopy(self._untyped_storage, memo))

    def type(self, dtype=None, non_blocking=False):
        """'microtorch.FloatStorage' (the legacy class's name); given a class or its name, a converted copy."""
        _warn()
        if dtype is None:
            legacy = _LEGACY.get(self.dtype.name) if self.device.type == "cpu" else None
            return f"microtorch.{legacy.__name__}" if legacy is not None else f"{_MODULE}.TypedStorage"
        return _cast_to(self, dtype)

    def _to(self, dtype):
        """A new storage of dtype holding these values converted (always a copy, as torch's)."""
        return _typed_storage(Tensor._make(self._values()).to(dtype).clone())

    def __repr__(self):
        _warn()
        info = f"[{_MODULE}.TypedStorage(dtype={self.dtype}, device={self.device}) of size {self._size()}]"
        return _listing(self, info)

    __str__ = __repr__


def _cast_to(s, target):
    """s.type(FloatStorage) / s.type('microtorch.FloatStorage'): a copy converted to that class's dtype."""
    name = target if isinstance(target, str) else getattr(target, "__name__", "")
    legacy = _LEGACY_BY_NAME.get(name.rpartition(".")[2])
    if legacy is None:
        raise TypeError(f"type(): expected a storage class such as microtorch.DoubleStorage or its name, got "
                        f"{target!r}")
    return s._to(legacy.dtype)


def _conversion(dt):
    def convert(self):
        if isinstance(self, TypedStorage):
            _warn()
        return self._to(dt)
    convert.__name__ = convert.__qualname__ = _CONVERSIONS[dt.name]
    convert.__doc__ = f"A copy of the storage's values as {dt}."
    return convert


_CONVERSIONS = {"float64": "double", "float32": "float", "float16": "half", "int64": "long", "int32": "int",
                "int16": "short", "int8": "char", "uint8": "byte", "bool": "bool", "complex64": "complex_float",
                "complex128": "complex_double"}
for _cls in (TypedStorage, UntypedStorage):
    _cls.__module__ = _MODULE
    for _name in _CONVERSIONS:
        setattr(_cls, _CONVERSIONS[_name], _conversion(_dtype._BY_NAME[_name]))


# ---- the legacy classes: FloatStorage, LongStorage, ... -------------------------------------------------------------
class _LegacyStorageMeta(type):
    """A legacy class makes TypedStorages of its dtype; a TypedStorage of that dtype on the CPU is one of it."""

    def __instancecheck__(cls, obj):
        dt = cls.__dict__.get("dtype")
        return type(obj) is TypedStorage and dt is not None and obj.dtype is dt and obj.device.type == "cpu"


class _LegacyStorage(TypedStorage, metaclass=_LegacyStorageMeta):
    def __new__(cls, *args, wrap_storage=None, dtype=None, device=None):
        """FloatStorage(), FloatStorage(n), FloatStorage(sequence), FloatStorage(wrap_storage=untyped)."""
        _warn()
        if dtype is not None or device is not None:
            raise RuntimeError(f"{cls.__name__}() takes no dtype= or device= (its dtype is {cls.dtype}, on the "
                               "CPU); use TypedStorage(..., dtype=, device=) for another")
        if len(args) == 1 and not isinstance(args[0], (int, np.integer, collections.abc.Sequence)):
            raise TypeError(f"{cls.__name__}(): argument type not recognized: {type(args[0])} (give a size, a "
                            "sequence of numbers, or wrap_storage=)")
        if wrap_storage is not None and args:
            raise RuntimeError(f"{cls.__name__}(): no positional arguments should be given with 'wrap_storage'")
        return TypedStorage(*args, dtype=cls.dtype, wrap_storage=wrap_storage, _internal=True)


def _legacy(name, dt):
    return _LegacyStorageMeta(name, (_LegacyStorage,), {"dtype": dt, "__module__": "microtorch", "__qualname__": name,
                                                        "__doc__": f"torch's legacy class of {dt} storages."})


_LEGACY = {dt: _legacy(name, _dtype._BY_NAME[dt]) for dt, name in {
    "float32": "FloatStorage", "float64": "DoubleStorage", "float16": "HalfStorage", "int64": "LongStorage",
    "int32": "IntStorage", "int16": "ShortStorage", "int8": "CharStorage", "uint8": "ByteStorage",
    "bool": "BoolStorage", "complex64": "ComplexFloatStorage", "complex128": "ComplexDoubleStorage"}.items()}
_LEGACY_BY_NAME = {cls.__name__: cls for cls in _LEGACY.values()}


def is_storage(obj):
    """torch.is_storage: is obj a TypedStorage or an UntypedStorage?"""
    return isinstance(obj, (TypedStorage, UntypedStorage))


# ---- Tensor methods that read or replace a tensor's storage ------------------------------------------------------
def storage_type(self):
    """t.storage_type(): the legacy class of t's dtype (microtorch.FloatStorage)."""
    return _LEGACY[self.dtype.name]


def is_shared(self):
    """False: nothing in microtorch lives in memory shared between processes."""
    return False


def is_set_to(self, tensor):
    """True when both tensors are the same view of the same storage: offset, sizes and strides."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"is_set_to(): argument 'tensor' (position 1) must be Tensor, not {type(tensor).__name__}")
    same = untyped_storage(self) is untyped_storage(tensor)
    return same and (self.storage_offset(), self.shape, self.stride()) == \
        (tensor.storage_offset(), tensor.shape, tensor.stride())


_NO_SOURCE = object()  # (set_() without arguments; an explicit None is torch's TypeError)


def set_(self, source=_NO_SOURCE, storage_offset=None, size=None, stride=None):
    """torch's t.set_(): make t a view of another tensor's memory, or of a storage at an offset with sizes and
    strides (in elements), or of nothing (no argument). In place: t's version moves, its values are the source's.
    torch checks the arguments' types, then a tensor source's dtype, then autograd's refusals."""
    if source is not _NO_SOURCE and not isinstance(source, (Tensor, TypedStorage, UntypedStorage)):
        raise TypeError(f"set_(): argument 'source' must be Tensor or Storage, not {type(source).__name__}; e.g. "
                        "t.set_(storage, offset, size, stride)")
    plain = isinstance(source, Tensor) and (storage_offset, size, stride) == (None, None, None)
    if plain and source.dtype is not self.dtype:
        raise RuntimeError(f"set_: could not set tensor of type {source.dtype} to a tensor of type {self.dtype}; "
                           f"convert the source with .to({self.dtype}) first")
    _check_settable(self, source)
    if source is _NO_SOURCE:
        if (storage_offset, size, stride) != (None, None, None):
            raise TypeError("set_(): with no source, set_() takes no offset, size or stride")
        data = np.empty(0, self.dtype.np)
    elif plain:
        _no_batched(source)
        data = source._data.view()
    else:
        data = _over_storage(self, source, storage_offset, size, stride)
    self._data = data
    views.bump_version(self)
    return self


def _check_settable(self, source):
    """torch's refusals: a tensor that requires grad (while grad mode is on), an inference tensor outside
    inference_mode, a batched tensor. A source that requires grad is refused too: torch's result has a grad_fn that
    cannot run backward."""
    _no_batched(self)
    _check_mutable(self, "set_")
    if not grad_mode.is_grad_enabled():
        return
    if self._requires_grad:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation." if
                           self.grad_fn is None else "set_: autograd cannot follow a tensor whose memory is replaced "
                           "(this one requires grad); call set_ on t.detach(), or under no_grad()")
    if isinstance(source, Tensor) and source._requires_grad:
        raise RuntimeError("set_: autograd cannot follow a tensor set to the memory of one that requires grad "
                           "(torch's result has no backward); pass source.detach()")


def _over_storage(self, source, offset, size, stride):
    """A new array of self's dtype over source's storage (a tensor's, a TypedStorage, an UntypedStorage)."""
    start = 0
    if isinstance(source, Tensor):
        if source.dtype is not self.dtype:
            raise RuntimeError(f"Could not set tensor of type {source.dtype} to a tensor of type {self.dtype}")
        if not source.is_contiguous():
            raise RuntimeError("passed in tensor to be used as storage must be contiguous (set_ with an offset and "
                               "sizes takes the source's whole storage; pass source.contiguous() or its storage)")
        start = source.storage_offset()  # (a tensor's offset counts from its own first element)
        source = untyped_storage(source)
    elif isinstance(source, TypedStorage):
        if source.dtype is not self.dtype:
            raise RuntimeError(f"Expected a Storage of type {self.dtype} or an UntypedStorage, but got type "
                               f"{source.dtype} for argument 1 'storage'")
        source = source._untyped_storage
    if (source.device.type == "meta") != _meta.is_meta(self):
        raise RuntimeError(f'Attempted to set the storage of a tensor on device "{self.device}" to a storage on '
                           f'different device "{source.device}". This is no longer allowed; the devices must match.')
    itemsize = self.dtype.itemsize
    if size is None and (offset is not None or stride is not None):
        raise TypeError("set_(): give the size with the offset: t.set_(storage, offset, size[, stride])")
    offset = _checked_ints(offset if offset is not None else 0, "storage_offset") + start
    shape = (source._nbytes // itemsize,) if size is None else _checked_ints(size, "size")
    strides = _checked_ints(stride, "stride") if stride is not None else _contiguous(shape)
    _check_bounds(shape, strides, offset, itemsize, source._nbytes)
    if source.device.type == "meta":
        return _meta.meta_array(shape, self.dtype.np)
    return np.ndarray(shape, self.dtype.np, source._data(), offset * itemsize, [s * itemsize for s in strides])


def _checked_ints(value, name):
    """An int (storage_offset) or a tuple of ints (size, stride), as set_ takes them."""
    if name == "storage_offset":
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
            raise TypeError(f"set_(): argument 'storage_offset' must be int, not {type(value).__name__}")
        if value < 0:
            raise RuntimeError(f"Tensor: invalid storage offset {value}")
        return int(value)
    if not isinstance(value, (tuple, list, Size)):
        raise TypeError(f"set_(): argument '{name}' must be tuple of ints, not {type(value).__name__}")
    if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value):
        raise TypeError(f"set_(): argument '{name}' must be tuple of ints, but found an element that is not an int")
    if any(v < 0 for v in value):
        raise RuntimeError(f"set_(): negative {name} {list(value)} ({'sizes' if name == 'size' else 'strides'} are "
                           "0 or more)")
    return tuple(int(v) for v in value)


def _contiguous(shape):
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def _check_bounds(shape, strides, offset, itemsize, nbytes):
    """torch's error when the view reaches past the storage's end (where torch would grow the storage)."""
    if len(strides) != len(shape):
        raise RuntimeError(f"mismatch in length of strides and shape ({len(strides)} strides for {len(shape)} sizes)")
    extent = 0 if 0 in shape else offset + 1 + sum((n - 1) * s for n, s in zip(shape, strides))
    if extent * itemsize > nbytes:
        raise RuntimeError(f"setStorage: sizes {list(shape)}, strides {list(strides)}, storage offset {offset}, and "
                           f"itemsize {itemsize} requiring a storage size of {extent * itemsize} are out of bounds "
                           f"for storage of size {nbytes} (microtorch's storages cannot grow: make a larger one, "
                           "e.g. a tensor of the size you need, and set_ to its storage)")


# ---- wiring ------------------------------------------------------------------------------------------------------
_METHODS = {"storage": storage, "_typed_storage": _typed_storage, "untyped_storage": untyped_storage,
            "storage_type": storage_type, "is_shared": is_shared, "is_set_to": is_set_to, "set_": set_}
_NAMES = ["TypedStorage", "UntypedStorage", "is_storage", "Storage", *(c.__name__ for c in _LEGACY.values())]


def install(tensor_class, namespace):
    """Give Tensor its storage methods, and the namespace (microtorch's) the storage classes, `is_storage` and the
    module `microtorch.storage` (torch's classes print as torch.storage.TypedStorage)."""
    for name, fn in _METHODS.items():
        setattr(tensor_class, name, fn)
    values = dict(globals(), Storage=_LEGACY["float32"], **{c.__name__: c for c in _LEGACY.values()})
    for name in _NAMES:
        namespace[name] = values[name]
    namespace["__all__"].extend(n for n in _NAMES if n not in namespace["__all__"])
    from . import storage  # (the public module the classes name as theirs, as torch's live in torch.storage)
    namespace["storage"] = storage
