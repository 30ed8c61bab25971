"""torch's memory formats (preserve_format, contiguous_format, channels_last, channels_last_3d): how clone lays
out the copy it makes.

torch's default, preserve_format, keeps a dense layout as it is (the clone of a transposed tensor is
transposed: its strides, is_contiguous() and whether a later view() works are the original's), and gives
any other layout dense strides in the same order (its infer_dense_strides). numpy's copy would be C order.
"""
import numpy as np

from ._layout import _fastest_first


class memory_format:  # noqa: N801 (torch's name)
    """One of torch's memory formats; they are compared by identity."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return "microtorch." + self._name


preserve_format = memory_format("preserve_format")
contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
_FASTEST_FIRST = {channels_last: (1, 3, 2, 0), channels_last_3d: (1, 4, 3, 2, 0)}  # C, then W (H, D), then N


def laid_out(x, fmt):
    """A copy of the array x in the memory format fmt."""
    if fmt is contiguous_format or type(x) is not np.ndarray or min(x.strides, default=0) < 0:
        return x.copy()  # (C order; vmap's batched arrays keep their own copy)
    if fmt is preserve_format:
        if x.flags.c_contiguous and min(x.shape, default=2) > 1:  # the common case: numpy's copy is the same
            return x.copy()
        return _copy_with_strides(x, _preserved_strides(x.shape, [s // x.itemsize for s in x.strides]))
    return _copy_with_strides(x, _dense_in_order(x.shape, _order(fmt, x, "clone")))


def _order(fmt, x, op):
    """The dims of x from fastest to slowest in fmt (channels_last: C, W, H, N), or torch's error for its rank."""
    order = _FASTEST_FIRST[fmt]
    if x.ndim != len(order):
        raise RuntimeError(f"required rank {len(order)} tensor to use {fmt._name} format ({op}: got a {x.ndim}-d "
                           f"tensor of shape {list(x.shape)}; use contiguous_format)")
    return order


def is_laid_out(x, fmt):
    """torch's is_contiguous(memory_format=fmt) of the array x: dense in fmt's order of dims (size-1 dims aside)."""
    if fmt not in _FASTEST_FIRST:  # contiguous_format (and preserve_format, which torch reads as it)
        return bool(x.flags["C_CONTIGUOUS"])  # (vmap's batched arrays answer flags by key only)
    order = _FASTEST_FIRST[fmt]
    if x.ndim != len(order) or type(x) is not np.ndarray:
        return False
    dense = _dense_in_order(x.shape, order)
    return all(s // x.itemsize == d for s, d, n in zip(x.strides, dense, x.shape) if n != 1)


def suggested_format(x):
    """torch's suggest_memory_format: channels_last(_3d) for a 4-d (5-d) array whose strides read so
    (like_channels_last), else contiguous_format (what `to(memory_format=...)` compares with before it copies, and the
    layout pad gives)."""
    if type(x) is np.ndarray and like_channels_last(x.shape, x.strides):
        return channels_last if x.ndim == 4 else channels_last_3d
    return contiguous_format


def like_channels_last(shape, strides):
    """torch's is_channels_last_strides_2d/3d: a 4-d or 5-d layout whose strides grow in the order C, W, (H, D,)
    N; ambiguous ones (a size-1 channel dim with equal strides) count as C order."""
    if len(shape) not in (4, 5) or strides[1] == 0:
        return False
    low = 0
    for d in [1] + list(range(len(shape) - 1, 1, -1)) + [0]:
        if shape[d] == 0 or strides[d] < low or d == 0 and low == strides[1]:
            return False
        low = strides[d] * shape[d] if shape[d] > 1 else strides[d]
    return True


def channels_last_of(out, *inputs, ranks=(4, 5)):
    """out, a fresh array, laid out channels_last (channels_last_3d) when one of inputs (arrays of out's rank, among
    `ranks`) suggests that format: torch's convolutions, pools and resampling give their output the layout their
    input (or weight) is in. Else out as it is."""
    for x in inputs:
        if type(x) is np.ndarray and x.ndim == out.ndim and x.ndim in ranks and like_channels_last(x.shape, x.strides):
            order = _FASTEST_FIRST[channels_last if x.ndim == 4 else channels_last_3d]
            strides = _dense_in_order(out.shape, order)
            if [s // out.itemsize for s in out.strides] == strides or type(out) is not np.ndarray:
                return out
            return _copy_with_strides(out, strides)
    return out


def in_layout_of(out, x):
    """out, a fresh array of x's shape, in the layout of torch's empty_like(x): x's own strides when x is dense (those
    of its size-1 dims too), else dense ones in the order of x's (sort's values and indices are allocated so)."""
    if type(x) is not np.ndarray or x.flags.c_contiguous and 1 not in x.shape or out.ndim < 2:
        return out
    strides = _preserved_strides(x.shape, [s // x.itemsize for s in x.strides])
    if [s // out.itemsize for s in out.strides] == strides:
        return out
    return _copy_with_strides(out, strides)


def empty_like_layout(x, np_dtype, fmt, op="empty_like"):
    """An uninitialized array of x's shape in np_dtype, laid out as clone(x, memory_format=fmt) would be (the
    *_like factories: by default x's own dense layout, as torch's preserve_format)."""
    strides = None
    if fmt in _FASTEST_FIRST:
        strides = _dense_in_order(x.shape, _order(fmt, x, op))
    elif fmt is preserve_format and type(x) is np.ndarray and (not x.flags.c_contiguous or 1 in x.shape) and \
            min(x.strides, default=0) >= 0:  # (a size-1 dim keeps its stride too)
        strides = _preserved_strides(x.shape, [s // x.itemsize for s in x.strides])
    if strides is None:
        return np.empty(x.shape, np_dtype)
    itemsize = np.dtype(np_dtype).itemsize
    return np.ndarray(x.shape, np_dtype, np.empty(x.size, np_dtype), 0, [s * itemsize for s in strides])


def _preserved_strides(shape, strides):
    """torch's strides (in elements) for the preserve_format copy of a tensor: its own when it is dense without
    overlaps (is_non_overlapping_and_dense), else dense ones ordered as its strides (infer_dense_strides)."""
    need = 1
    for d in sorted((d for d in range(len(shape)) if shape[d] > 1), key=lambda d: strides[d]):
        if strides[d] != need:
            return _dense_in_order(shape, _fastest_first(list(range(len(shape))), [strides], shape))
        need *= shape[d]
    return strides


def _dense_in_order(shape, fastest_first):
    out, step = [0] * len(shape), 1
    for d in fastest_first:
        out[d] = step
        step *= max(shape[d], 1)  # (a size-0 dim counts as 1, as torch's)
    return out


def _copy_with_strides(x, strides):
    """A fresh array with x's values laid out with these strides (in elements, dense without overlaps)."""
    out = np.ndarray(x.shape, x.dtype, np.empty(x.size, x.dtype), 0, [s * x.itemsize for s in strides])
    out[...] = x
    return out
