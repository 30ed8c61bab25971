"""torch functions that torch itself composes from other ops (so their grad_fn is the last op's):
diff, tile, the *stack and *split families, take_along_dim, float_power, nanmean, argsort, msort,
repeat_interleave; and counting functions with no gradient (histc, histogram, bincount, unique,
searchsorted, bucketize)."""
import builtins

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ._op import as_array
from ._range_kernels import torch_range
from . import shape as sh
from .elementwise import pow as pow_
from .elementwise import div, sub
from .index import gather
from .reduce import return_type
from ._op import normalize_dims
from .misc import sort
from .misc_more import Unique2, UniqueDim
from .order import stable_by_name
from .rearrange import nansum
from .._user_line import warn_at_user_line


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """out[i] = x[i+1] - x[i] along dim, n times (prepend/append joined first); of a bool tensor, as torch,
    x[i+1] xor x[i] (bool subtraction is refused)."""
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    dim = normalize_dims(dim, input.ndim, "diff")[0]
    parts = [p for p in (prepend, input, append) if p is not None]
    x = sh.cat(parts, dim) if len(parts) > 1 else input
    for _ in range(n):
        length = x.shape[dim]
        if length == 0:
            break
        later, earlier = _slice(x, dim, 1, length), _slice(x, dim, 0, length - 1)
        x = later != earlier if x.dtype.name == "bool" else sub(later, earlier)
    return x


def tile(input, dims):
    dims = tuple(dims)
    if len(dims) < input.ndim:
        dims = (1,) * (input.ndim - len(dims)) + dims
    return sh.repeat(input, dims)  # (repeat puts leading 1s before a shape with fewer dims itself, as torch)


def ravel(input):
    return sh.reshape(input, (-1,))


def fliplr(input):
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return sh.flip(input, (1,))


def flipud(input):
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return sh.flip(input, (0,))


def positive(input):
    if input.dtype.name == "bool":
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def atleast_2d(*tensors):
    one = len(tensors) == 1 and isinstance(tensors[0], Tensor)
    ts = tensors[0] if len(tensors) == 1 and not one else tensors
    out = [t if t.ndim >= 2 else sh.unsqueeze(sh.atleast_1d(t), 0) if t.ndim == 1 else sh.reshape(t, (1, 1))
           for t in ts]
    return out[0] if one else tuple(out)


def atleast_3d(*tensors):
    one = len(tensors) == 1 and isinstance(tensors[0], Tensor)
    ts = tensors[0] if len(tensors) == 1 and not one else tensors
    out = []
    for t in ts:
        if t.ndim == 0:
            t = sh.reshape(t, (1, 1, 1))
        elif t.ndim == 1:
            t = sh.unsqueeze(sh.unsqueeze(t, 0), -1)
        elif t.ndim == 2:
            t = sh.unsqueeze(t, -1)
        out.append(t)
    return out[0] if one else tuple(out)


def vstack(tensors):
    return sh.cat(list(atleast_2d(*tensors)), 0)


row_stack = vstack


def hstack(tensors):
    if not len(tensors):
        raise RuntimeError("hstack expects a non-empty TensorList")
    ts = [sh.atleast_1d(t) for t in tensors]
    return sh.cat(ts, 0 if ts[0].ndim == 1 else 1)


def dstack(tensors):
    return sh.cat(list(atleast_3d(*tensors)), 2)


def column_stack(tensors):
    cols = [sh.reshape(t, (-1, 1)) if t.ndim <= 1 else t for t in tensors]
    return sh.cat(cols, 1)


def true_divide(input, other):
    """div without rounding_mode (torch's true_divide takes none)."""
    return div(input, other)


def _sections_or_indices(op, given):
    """The one of torch's keywords (sections=, indices=, tensor_indices_or_sections=) a call passed, as an int
    or a list (a tensor: 0-d is a count of sections, 1-d the indices)."""
    passed = [v for v in given if v is not None]
    if len(passed) != 1:
        raise TypeError(f"{op}(): pass the number of sections or the indices to cut at, once (got {len(passed)})")
    value = passed[0]
    if isinstance(value, Tensor):
        return int(value.item()) if value.ndim == 0 else [int(i) for i in value.tolist()]
    return value


def tensor_split(input, sections=None, dim=0, *, indices=None, tensor_indices_or_sections=None):
    """Pieces along dim: `n` nearly equal ones (the first n % size one longer), or cut at given indices."""
    indices_or_sections = _sections_or_indices("tensor_split", (sections, indices, tensor_indices_or_sections))
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    size = input.shape[dim]
    if isinstance(indices_or_sections, int):
        n = indices_or_sections
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        if n > size + 1 and n > 2 ** 20:  # more sections than elements: all but `size` of them are empty
            raise RuntimeError(f"tensor_split: {n} sections of a dimension of size {size} would be mostly empty "
                               "tensors; ask for at most as many sections as elements")
        q, r = divmod(size, n)
        cuts = [i * q + builtins.min(i, r) for i in range(1, n)]
    else:
        cuts = [int(i) for i in indices_or_sections]
    bounds = [0] + cuts + [size]
    return tuple(_slice(input, dim, builtins.min(a, size), builtins.max(builtins.min(b, size), builtins.min(a, size)))
                 for a, b in zip(bounds, bounds[1:]))


def _slice(x, dim, start, stop):
    key = [slice(None)] * x.ndim
    key[dim] = slice(start, stop)
    return x[tuple(key)]


def _split_family(name, dim, min_ndim):
    def fn(input, sections=None, *, indices=None):
        indices_or_sections = _sections_or_indices(name, (sections, indices))
        if input.ndim < min_ndim:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {min_ndim} dimension, but got a tensor "
                               f"with {input.ndim} dimensions!")
        d = 0 if name == "hsplit" and input.ndim == 1 else dim
        if isinstance(indices_or_sections, int) and (indices_or_sections <= 0 or input.shape[d] % indices_or_sections):
            raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but the size of the dimension "
                               f"{input.shape[d]} is not divisible by the split_size {indices_or_sections}!")
        return tensor_split(input, indices_or_sections, d)
    fn.__name__ = fn.__qualname__ = name
    return fn


vsplit, hsplit, dsplit = _split_family("vsplit", 0, 1), _split_family("hsplit", 1, 1), _split_family("dsplit", 2, 3)


def take_along_dim(input, indices, dim=None):
    if dim is None:
        return gather(sh.reshape(input, (-1,)), 0, sh.reshape(indices, (-1,)))
    dim = dim % input.ndim
    ones = [tuple(1 if i == dim else s for i, s in enumerate(t.shape)) for t in (input, indices)]
    shape = list(np.broadcast_shapes(*ones))
    shape_x, shape_i = list(shape), list(shape)
    shape_x[dim], shape_i[dim] = input.shape[dim], indices.shape[dim]
    return gather(sh.broadcast_to(input, shape_x), dim, sh.broadcast_to(indices, shape_i))


def float_power(input, exponent):
    """input ** exponent computed in double precision (complex128 for complex inputs)."""
    complex_ = any(isinstance(v, Tensor) and v.dtype.is_complex or isinstance(v, complex) for v in (input, exponent))
    dt = _dtype.complex128 if complex_ else _dtype.float64
    number = complex if complex_ else float  # (a number is taken as a double too: torch's node shows 2.0)
    a = input.to(dt) if isinstance(input, Tensor) else number(input)
    b = exponent.to(dt) if isinstance(exponent, Tensor) else number(exponent)
    return pow_(a, b)


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                           f"{input.dtype}")
    dim = None if isinstance(dim, (list, tuple)) and len(dim) == 0 else dim  # (none given: every dim, as torch)
    if dim is not None:
        normalize_dims(dim, input.ndim, "nanmean")  # (a dim out of range in nanmean's name)
    counted = (~input.isnan()).sum(dim, keepdim) if dim is not None else (~input.isnan()).sum()
    return nansum(input, dim, keepdim, dtype=dtype) / counted


@stable_by_name
def argsort(input, dim=-1, descending=False, *, stable=False):
    normalize_dims(dim, input.ndim, "argsort")  # (a dim out of range in argsort's name)
    return sort(input, dim=dim, descending=descending, stable=stable).indices


def msort(input):
    normalize_dims(0, input.ndim, "msort")
    from .misc import _no_complex
    _no_complex(input, "msort: Sort")
    return sort(input, 0).values


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Each element (or slice along dim) repeated `repeats` times in place."""
    if isinstance(repeats, Tensor) and repeats.numel() != 1 or isinstance(repeats, (list, tuple)):
        from .index import index_select
        reps = repeats._data if isinstance(repeats, Tensor) else np.asarray(repeats)
        x, d = (sh.reshape(input, (-1,)), 0) if dim is None else (input, dim)
        idx = np.repeat(np.arange(x.shape[d]), reps)
        return index_select(x, d, Tensor._make(idx.astype(np.int64)))
    if repeats is None:
        raise TypeError("repeat_interleave(): missing the repeats argument: an int, or a tensor of counts")
    d = None if dim is None else normalize_dims(dim, input.ndim, "repeat_interleave")[0]
    r = int(repeats)
    x, d = (sh.reshape(input, (-1,)), 0) if dim is None else (input, d)
    wide = sh.expand(sh.unsqueeze(x, d + 1), *(x.shape[:d + 1] + (r,) + x.shape[d + 1:]))
    return sh.reshape(sh.clone(wide), x.shape[:d] + (x.shape[d] * r,) + x.shape[d + 1:])


# ---- counting: no gradient ------------------------------------------------------------------------
histogram_result = return_type("histogram", ("hist", "bin_edges"))


def _no_grad_result(arr, dtype=None):
    arr = arr if dtype is None else arr.astype(dtype)
    if getattr(arr, "__vmap_batched__", False) or arr.flags.c_contiguous:
        return Tensor._make(arr)
    return Tensor._make(arr.copy())  # (np.ascontiguousarray would make a 0-d result 1-d)


def histc(input, bins=100, min=0, max=0):
    """Counts in `bins` equal bins over [min, max] (the data's range when both are 0)."""
    a = input._data
    if bins <= 0:
        raise RuntimeError(f"torch.histc: bins must be > 0, but got {bins}")
    # (no Python floats or branches on the range: under vmap each example has its own)
    lo, hi = (a.min(), a.max()) if min == 0 and max == 0 and a.size else (np.float64(min), np.float64(max))
    if not (np.isfinite(lo) & np.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{lo}, {hi}] is not finite; pass min= and max=, or drop NaN/inf")
    lo, hi = np.where(lo == hi, lo - 1, lo), np.where(lo == hi, hi + 1, hi)
    counts, _ = np.histogram(a, bins=bins, range=(lo, hi))
    return _no_grad_result(counts, a.dtype)


def histogram(input, bins=100, *, range=None, weight=None, density=False):
    a = input._data
    if isinstance(bins, Tensor) and bins.dtype != input.dtype:
        raise RuntimeError(f"torch.histogram: input tensor and bins tensors should have the same dtype, but got input "
                           f"{input.dtype} and bins {bins.dtype}")
    edges = bins._data if isinstance(bins, Tensor) else bins
    if not isinstance(bins, Tensor) and (not isinstance(bins, (int, np.integer)) or bins <= 0) or \
            isinstance(bins, Tensor) and bins.ndim != 1:
        raise RuntimeError(f"torch.histogram(): bins must be a positive int or a 1-d tensor of edges, got {bins!r}")
    if range is None and not isinstance(bins, Tensor) and a.size and not np.all(np.isfinite(a)):
        raise RuntimeError("torch.histogram: the input's range is not finite (it holds NaN or inf); pass range=(lo, hi)")
    w = weight._data if weight is not None else None
    hist, bin_edges = np.histogram(a, bins=edges, range=range, weights=w, density=density)
    return histogram_result(_no_grad_result(hist, a.dtype), _no_grad_result(bin_edges, a.dtype))


def bincount(input, weights=None, minlength=0):
    a = input._data
    if a.ndim != 1 or a.dtype.kind not in "iu":
        raise RuntimeError(f"bincount only supports 1-d non-negative integral inputs (got shape {list(a.shape)}, "
                           f"dtype {input.dtype})")
    if a.size and a.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    w = weights._data if weights is not None else None
    out = np.bincount(a, weights=w, minlength=minlength)
    return _no_grad_result(out, w.dtype if w is not None and w.dtype.kind == "f" else
                           (np.float64 if w is not None else np.int64))


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    a = input._data
    values, inverse, counts = np.unique(a, return_inverse=True, return_counts=True, axis=dim,
                                        equal_nan=False)  # (each NaN a value of its own, as torch's; rows too)
    out = [(Unique2 if dim is None else UniqueDim).apply(input, np.ascontiguousarray(values))]
    if return_inverse:
        out.append(_no_grad_result(inverse.reshape(a.shape if dim is None else -1), np.int64))
    if return_counts:
        out.append(_no_grad_result(counts, np.int64))
    return out[0] if len(out) == 1 else tuple(out)


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    seq = sorted_sequence._data
    vals = input._data if isinstance(input, Tensor) else np.asarray(input)
    if seq.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 "
                           "dimension")
    if seq.ndim > 1 and not isinstance(input, Tensor):
        raise RuntimeError(f"torch.searchsorted(): input value can be a scalar only when boundaries tensor dimension "
                           f"is 1, but we got boundaries tensor dim({seq.ndim}) and input value's dim(0) numel(1)")
    if seq.ndim > 1 and (vals.ndim != seq.ndim or vals.shape[:-1] != seq.shape[:-1]):
        raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                           f"dimensions of boundaries tensor and input value tensor must match, but we got boundaries "
                           f"tensor {list(seq.shape)} and input value tensor {list(vals.shape)}")
    side = side or ("right" if right else "left")
    if seq.ndim == 1:
        out = np.searchsorted(seq, vals, side=side)
    else:
        out = np.stack([np.searchsorted(s, v, side=side) for s, v in zip(seq.reshape(-1, seq.shape[-1]),
                                                                             vals.reshape(-1, vals.shape[-1]))])
        out = out.reshape(vals.shape)
    return _no_grad_result(as_array(out), np.int32 if out_int32 else np.int64)


def bucketize(input, boundaries, *, out_int32=False, right=False):
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def range_(start=0, end=None, step=1, *, dtype=None, requires_grad=False, **kwargs):
    """torch.range (deprecated in torch): like arange, but `end` is included."""
    if end is None:
        raise TypeError('range() missing 1 required positional arguments: "end" (torch.range(start, end) includes '
                        "end; arange(end) counts from 0 without it)")
    warn_at_user_line("torch.range is deprecated and will be removed in a future release because its behavior is "
                      "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                      "[start, end).", UserWarning)
    from .._creation import _finish
    if not (np.isfinite(start) and np.isfinite(end)) or step == 0:
        raise RuntimeError(f"range: unsupported range: {start} -> {end} with step {step}")
    dt = _dtype.to_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()
    if dt.is_floating_point:
        return _finish(torch_range(start, end, step, dt.np), dt, requires_grad)
    n = int(np.floor((end - start) / step)) + 1
    return _finish(start + step * np.arange(builtins.max(n, 0), dtype=np.float64), dt, requires_grad)
