"""as_strided and empty_strided: a tensor as any sizes and strides over its storage.

`x.as_strided(size, stride, offset)` reads x's storage (the whole buffer x lives in, not only x's
elements) at offset + sum(i_k * stride_k), without copying: the result is a view. Its gradient is
found through the storage: the output's gradient is added at the storage positions it read (a
position read twice gets both), then read back at x's own positions, as torch's as_strided_backward.
"""
import numpy as np

from .._meta import MetaArray, meta_array
from .._tensor import Tensor
from ..autograd.views import geometry
from ._op import Op
from .inplace import AsStrided, AsStridedScatter
from .resize import _buffer_of
from .shape import _share


class AsStridedView(Op):
    """out[i] = storage[offset + i . stride];  d = the gradient summed at each storage position, read at x's"""
    _grad_fn_name = "AsStridedBackward0"
    _saved_values = {"size": "size", "stride": "stride", "storage_offset": "offset"}

    @staticmethod
    def forward(ctx, x, size, stride, offset):
        if type(x) is MetaArray:  # (a meta tensor has no storage to read: a meta view of the size asked)
            ctx.meta_shape = x.shape
            return meta_array(size, x.dtype)
        storage = _storage_elements(x)
        ctx.size, ctx.stride, ctx.offset, ctx.count = size, stride, offset, storage.size
        ctx.read_at = _positions(storage.size, size, stride, offset)
        ctx.x_at = _positions(storage.size, *_place_of(x, storage))
        return np.lib.stride_tricks.as_strided(storage[offset:], size, [s * x.itemsize for s in stride],
                                               writeable=x.flags.writeable)

    @staticmethod
    def backward(ctx, grad):
        if hasattr(ctx, "meta_shape"):
            return Tensor._make(meta_array(ctx.meta_shape, grad._data.dtype)), None, None, None
        summed = AsStridedScatter.apply(grad, (ctx.count,), ctx.read_at)
        gx = AsStrided.apply(summed, ctx.x_at)
        overlap = np.bincount(ctx.x_at.ravel(), minlength=ctx.count)[ctx.x_at]
        if ctx.x_at.size and overlap.max() > 1:  # (x reads a position twice: each read gets its share, as torch)
            gx = gx / Tensor._make(overlap.astype(gx._data.dtype))
        return gx, None, None, None

    @staticmethod
    def jvp(ctx, t, *_):
        """The tangent read as the primal is: t placed at x's storage positions (an overlapping x's tangent holds
        one value per position, so the sum there is divided back), then read at the output's."""
        storage = AsStridedScatter.apply(t, (ctx.count,), ctx.x_at)
        counts = np.bincount(ctx.x_at.ravel(), minlength=ctx.count)
        if counts.max(initial=0) > 1:
            storage = storage / Tensor._make(np.maximum(counts, 1).astype(storage._data.dtype))
        return AsStrided.apply(storage, ctx.read_at)


def _storage_elements(x):
    """x's buffer as a flat array of x's dtype, from the buffer's first element."""
    held = _buffer_of(x, writable=False)
    if held is None:  # (no buffer numpy holds whole: x's own copy, as a fresh tensor's storage)
        return np.ascontiguousarray(x).reshape(-1)
    return held[0][:held[0].size - held[0].size % x.itemsize].view(x.dtype)


def _place_of(x, storage):
    """x's own (shape, strides in elements, offset in elements) within storage."""
    shape, strides, address, _ = geometry(x)
    start = (address - storage.__array_interface__["data"][0]) // x.itemsize
    return shape, [s // x.itemsize for s in strides], start


def _positions(n, size, stride, offset):
    """The storage positions (in elements) of a view of size and stride at offset, as an int array of that size."""
    flat = np.arange(n, dtype=np.intp)
    return np.lib.stride_tricks.as_strided(flat[offset:], size, [s * flat.itemsize for s in stride]).copy()


def _ints(value, what, position, op):
    """size or stride as a tuple of ints, or torch's TypeError."""
    if not isinstance(value, (tuple, list)):
        raise TypeError(f"{op}(): argument '{what}' (position {position}) must be tuple of ints, not "
                        f"{type(value).__name__}")
    for i, v in enumerate(value):
        if not isinstance(v, (int, np.integer)):
            raise TypeError(f"{op}(): argument '{what}' (position {position}) must be tuple of ints, but found "
                            f"element of type {type(v).__name__} at pos {i}")
    return tuple(int(v) for v in value)


def _check_geometry(size, stride, offset, itemsize, available):
    """torch's checks of as_strided's arguments, in torch's order and words."""
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: {list(stride)}")
    _check_extent(size, stride)
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    needed = 0 if 0 in size else (offset + _extent(size, stride)) * itemsize
    if needed > available:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and "
                           f"itemsize {itemsize} requiring a storage size of {needed} are out of bounds for storage "
                           f"of size {available} (as_strided reads the storage of its input; pick sizes and strides "
                           "that stay within it)")


def _check_extent(size, stride):
    if any(n < 0 for n in size) or any(s < 0 for s in stride):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and strides={list(stride)}")


def _extent(size, stride):
    """How many elements of storage a view of size and stride spans, from its first element."""
    return 0 if 0 in size else 1 + sum((n - 1) * s for n, s in zip(size, stride))


def as_strided(input, size, stride, storage_offset=None):
    """torch.as_strided: a view of input's storage with the given sizes and strides (see the module's docstring)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"as_strided(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    size, stride = _ints(size, "size", 2, "as_strided"), _ints(stride, "stride", 3, "as_strided")
    if storage_offset is not None and not isinstance(storage_offset, (int, np.integer)):
        raise TypeError("as_strided(): argument 'storage_offset' (position 4) must be int, not "
                        f"{type(storage_offset).__name__}")
    if type(input._data) is MetaArray:  # (no storage to stay within: torch checks no bounds on meta)
        offset, available = int(storage_offset or 0), float("inf")
    else:
        storage = _storage_elements(input._data)
        offset = _place_of(input._data, storage)[2] if storage_offset is None else int(storage_offset)
        available = storage.size * input._data.itemsize
    _check_geometry(size, stride, offset, input._data.itemsize, available)
    return _share(AsStridedView.apply(input, size, stride, offset), input)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """torch.empty_strided: a new tensor of the given sizes and strides over a storage just large enough (its
    values are unspecified; microtorch's are zeros)."""
    from .._creation import empty
    size, stride = _ints(size, "size", 1, "empty_strided"), _ints(stride, "stride", 2, "empty_strided")
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality of strides "
                           f"({len(stride)})")
    if any(n < 0 for n in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: {list(size)}")
    _check_extent(size, stride)
    storage = empty(_extent(size, stride), dtype=dtype, device=device)
    if type(storage._data) is MetaArray:  # (no memory to lay out: a meta tensor of the size)
        out = Tensor._make(meta_array(size, storage._data.dtype))
    else:
        out = Tensor._make(np.lib.stride_tricks.as_strided(storage._data, size,
                                                           [s * storage._data.itemsize for s in stride]))
    return out.requires_grad_() if requires_grad else out


def new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False, **_layout):
    """x.new_empty_strided: empty_strided in x's dtype unless another is given."""
    return empty_strided(size, stride, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)
