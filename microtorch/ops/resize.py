"""A tensor's storage: resizing it in place (`resize_`, `resize_as_`), torch's deprecated `resize` / `resize_as`,
`storage_offset()`, and writing through a view numpy marked read-only (`writable_alias`).

torch's `resize_` gives a tensor a new shape over its storage: the elements from its storage offset on, read in
contiguous order (not in the tensor's own order if it was transposed). The storage grows, keeping its bytes, when the
new shape needs more elements than it holds; the new ones are uninitialized. Autograd cannot follow this, so a tensor
that requires grad is refused. Here a tensor's storage is the numpy buffer its array lives in: the resized tensor is
a new array over that buffer, so its aliases and views still share its elements. One difference: when the storage
has to grow, the grown buffer is a copy (zeros past the old bytes), and only the resized tensor moves to it; torch's
aliases of the same storage move with it.

`resize(*sizes)` and `resize_as(t)` are the old out-of-place forms: they warn, and only reshape (the number of
elements must stay), with torch's node ResizeBackward.
"""
import functools
import operator
import types

import numpy as np

from .. import _meta
from .._tensor import Size, Tensor
from .._user_line import warn_at_user_line
from ..autograd import views
from ..autograd.function import Function
from ._checks import _is_int
from ._memory_formats import _FASTEST_FIRST, _dense_in_order, _order, contiguous_format, memory_format


def resize_(self, *sizes, size=None, memory_format=None):
    """self, with shape `sizes` over its storage from its offset on (see the module's docstring)."""
    if size is not None:
        if sizes:
            raise TypeError("resize_() got multiple values for argument 'size' (pass the sizes once)")
        sizes = (size,)
    shape = _sizes_of("resize_", sizes)
    if _count(shape) * self._data.itemsize >= 2 ** 63:
        raise RuntimeError(f"resize_(): Storage size calculation overflowed with sizes={list(shape)}: no tensor can "
                           "have that many elements; ask for a smaller size.")
    strides = _strides_for("resize_", shape, memory_format)
    _check_resizable(self, "resize_")
    a = self._data
    if tuple(a.shape) == shape and memory_format is None:  # (torch: nothing changes)
        return self
    if getattr(a, "__vmap_batched__", False):
        raise RuntimeError("resize_(): vmap cannot resize a batched tensor in place (each example would change its "
                           "shape); resize before or after the vmapped function")
    if _meta.is_meta(self):  # a meta tensor has a shape and no storage
        self._data = _meta.meta_array(shape, a.dtype)
    else:
        self._data = _over_storage(a, shape, strides)
    if tuple(a.shape) != shape:  # (torch counts a new shape as a change, not new strides alone)
        views.bump_version(self)
    return self


def resize_as_(self, the_template, *, memory_format=None):
    """resize_ to the_template's shape (not its layout: that is memory_format's)."""
    if not isinstance(the_template, Tensor):
        raise TypeError(f"resize_as_(): argument 'the_template' (position 1) must be Tensor, not "
                        f"{type(the_template).__name__}")
    _check_resizable(self, "resize_as_")
    return resize_(self, *the_template.shape, memory_format=memory_format)


def _sizes_of(op, sizes):
    """The new shape from torch's two spellings, ints or one sequence of them (an integer tensor of one element
    counts as its int), as a tuple; torch's TypeError or RuntimeError for anything else."""
    if not sizes and op == "resize_":
        raise TypeError(f'{op}() missing 1 required positional arguments: "size" (e.g. x.{op}(2, 3))')
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list, Size)):
        sizes = tuple(sizes[0])
    elif len(sizes) > 1 and any(isinstance(s, (tuple, list)) for s in sizes):
        raise TypeError(f"{op}() takes 1 positional argument but {len(sizes)} were given (pass the sizes as ints, "
                        f"{op}(2, 3), or as one tuple, {op}((2, 3)))")
    shape = []
    for s in sizes:
        if isinstance(s, Tensor) and s.numel() == 1 and s.dtype.is_floating_point is False and s.dtype.name != "bool":
            s = int(s.item())
        if not _is_int(s):
            raise TypeError(f"{op}(): argument 'size' (position 1) must be tuple of ints, not {type(s).__name__}")
        if s < 0:
            raise RuntimeError(f"{op}(): Trying to resize to a negative dimension {s}: {list(sizes)}; sizes are "
                               "counts of elements, 0 or more")
        shape.append(int(s))
    return tuple(shape)


def _strides_for(op, shape, fmt):
    """The strides, in elements, of the resized tensor: contiguous, or channels_last(_3d) if asked."""
    if fmt is not None and not isinstance(fmt, memory_format):
        raise TypeError(f"{op}(): argument 'memory_format' must be microtorch.memory_format, not "
                        f"{type(fmt).__name__}")
    if fmt is None or fmt is contiguous_format:
        return _dense_in_order(shape, range(len(shape) - 1, -1, -1))
    if fmt not in _FASTEST_FIRST:
        raise RuntimeError(f"Unsupported memory formatPreserve ({op}: preserve_format has no layout to keep in a "
                           "new shape; pass contiguous_format or channels_last)")
    return _dense_in_order(shape, _order(fmt, types.SimpleNamespace(ndim=len(shape), shape=list(shape)), op))


def _check_resizable(t, op):
    """torch's refusals: a tensor that requires grad (under no_grad too), an inference tensor outside
    inference_mode."""
    if t._requires_grad:
        raise RuntimeError(f"cannot resize variables that require grad ({op}: autograd cannot follow a tensor whose "
                           "shape changes in place; resize t.detach(), or make a new tensor, e.g. t.reshape(...))")
    from .inplace import _check_mutable
    _check_mutable(t, op)


def _over_storage(a, shape, strides):
    """A new array of `shape` (with `strides`, in elements) over a's buffer from a's offset on; over a grown copy
    of the buffer if it is too small."""
    storage, offset = _storage_of(a)
    itemsize = a.itemsize
    extent = 0 if _count(shape) == 0 else 1 + sum((size - 1) * stride for size, stride in zip(shape, strides))
    if (offset + extent) * itemsize > storage.size:  # grow: the old bytes first, then zeros
        try:
            grown = np.zeros((offset + extent) * itemsize, np.uint8)
        except MemoryError:
            raise RuntimeError(f"resize_(): can't allocate memory for {list(shape)} elements of "
                               f"{itemsize} bytes; ask for a smaller size") from None
        grown[:storage.size] = storage
        storage = grown
    return np.ndarray(shape, a.dtype, storage, offset * itemsize, [s * itemsize for s in strides])


def _count(shape):
    """The number of elements of shape, exactly (a Python int: no overflow)."""
    n = 1
    for size in shape:
        n *= size
    return n


def storage_offset(self):
    """torch's x.storage_offset(): where x's first element lies in its storage, counted in elements."""
    if type(self._data) is not np.ndarray:
        return 0
    held = _buffer_of(self._data, writable=False)
    return 0 if held is None else max(held[1], 0) // self._data.itemsize


def writable_alias(a):
    """a writable array over a's memory with a's own shape and strides, or None. numpy marks every view of an
    expanded array read-only, even one with no element twice (a slice of one row); torch writes into such a view's
    storage, so microtorch writes through this alias. None where the buffer itself is read-only, or is not one numpy
    holds whole."""
    held = _buffer_of(a)
    if held is None:
        return None
    try:
        return np.ndarray(a.shape, a.dtype, held[0], held[1], a.strides)
    except (ValueError, TypeError):  # (a view reaching outside the buffer: numpy refuses to build it)
        return None


def _storage_of(a):
    """The bytes of the buffer a's array lives in, and a's offset into it in elements (torch's storage and
    storage_offset); a's own copy where no writable buffer numpy holds whole is there."""
    storage, start = _buffer_of(a) or _buffer_of(np.array(a, order="C"))  # (np.array: always a fresh, writable copy)
    return storage, max(start, 0) // a.itemsize


def _buffer_of(a, writable=True):
    """(the bytes of the buffer that holds a's memory, a's offset into them in bytes), or None where that buffer is
    not contiguous, or (writable) is read-only. The buffer is the end of a's chain of bases (as_strided's holder
    too)."""
    root = a
    while isinstance(getattr(root.base, "base", None), np.ndarray) or isinstance(root.base, np.ndarray):
        root = root.base if isinstance(root.base, np.ndarray) else root.base.base
    if writable and not root.flags.writeable or not (root.flags.c_contiguous or root.flags.f_contiguous):
        return None
    start = a.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    return root.reshape(-1, order="A").view(np.uint8), start


class Resize(Function):
    """torch's deprecated out-of-place resize: a reshape that keeps the number of elements."""

    @staticmethod
    def forward(ctx, tensor, sizes):
        ctx.input_sizes = tensor.shape
        return tensor.contiguous().view(*sizes)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.contiguous().view(ctx.input_sizes), None


Resize.__name__ = "Resize"


def resize(self, *sizes):
    """The deprecated x.resize(*sizes): a reshape, with torch's warning."""
    warn_at_user_line("non-inplace resize is deprecated")
    return Resize.apply(self, _same_count("resize", self, sizes))


def resize_as(self, tensor):
    """The deprecated x.resize_as(t): a reshape to t's shape, with torch's warning."""
    warn_at_user_line("non-inplace resize_as is deprecated")
    if not isinstance(tensor, Tensor):
        raise TypeError(f"resize_as(): argument 'tensor' must be Tensor, not {type(tensor).__name__}")
    return Resize.apply(self, _same_count("resize_as", self, tuple(tensor.shape)))


def _same_count(op, tensor, sizes):
    """The sizes, if they are ints that keep tensor's number of elements; else torch's error. (torch's multiplies
    what it is given: a TypeError where that fails, a RuntimeError where the count is not the tensor's.)"""
    if not all(_is_int(s) for s in sizes):
        try:
            functools.reduce(operator.mul, sizes, 1)
        except TypeError as e:
            raise TypeError(f"{op}(): {e} (the sizes must be ints, e.g. x.{op}(3, 2))") from None
        raise RuntimeError(f"requested resize to {', '.join(map(str, sizes))}, but {op} takes the sizes as ints, "
                           f"e.g. x.{op}(3, 2); for a tuple of sizes: x.{op}(*sizes)")
    n = _count(sizes)
    if tensor.numel() != n:
        raise RuntimeError(
            f"requested resize to {'x'.join(map(str, sizes))} ({n} elements in total), but the given tensor has a "
            f"size of {'x'.join(map(str, tensor.shape))} ({tensor.numel()} elements). autograd's resize can only "
            f"change the shape of a given tensor, while preserving the number of elements. ({op}: use x.reshape(...) "
            "for a new shape, or x.detach().resize_(...) to change the number of elements.)")
    return tuple(sizes)


# (resize_ and resize_as_ check their own arguments: the guard would read them by resize's and resize_as's)
# (resize and resize_as too: torch's are Python functions, whose bad sizes fail as RuntimeErrors)
for _own_checks in (resize_, resize_as_, resize, resize_as):
    _own_checks.__microtorch_guarded__ = True
