"""Shape ops: views, broadcasting, joining and splitting. `sum_to` (the adjoint of
broadcasting) lives here and is what the engine uses to undo broadcasting."""
import math

import numpy as np

from .._tensor import Tensor, _size_arg
from .._user_line import warn_once
from ..autograd._hooks import composite
from ._checks import check_size, need_dims
from ._layout import dense_strides as _dense_strides, like_torch
from ._memory_formats import (in_layout_of, laid_out, like_channels_last, memory_format as _memory_format,
                              preserve_format)
from ._op import Op, normalize_dims, plain, shown_dim, shown_dims, unrecorded
from ._sum_order import sum_like_torch
from ._zero_tangent import ZeroTangent
from .inplace import mark_view


class SumTo(Op):
    """sum_to(g, shape): sum over the dimensions broadcasting added or stretched"""
    _grad_fn_name = "SumBackward1"
    _saved_values = {"dim": "dims", "keepdim": "keepdim", "self_sym_sizes": "in_shape"}

    @staticmethod
    def forward(ctx, g, shape):
        ctx.in_shape = g.shape
        out, ctx.dims = _summed_to(g, shape)
        ctx.keepdim = True  # (torch's: leading dims go in a view, see sum_to)
        return out

    @staticmethod
    def backward(ctx, grad):
        return expand_to(grad, ctx.in_shape), None

    @staticmethod
    def jvp(ctx, t, _shape):
        return sum_to(t, ctx.inputs[1])


def one_dim(dim, ndim, op):
    """normalize_dims of one dim: an int in range is wrapped here, anything else gets its checks."""
    if type(dim) is int and -ndim <= dim < ndim:
        return dim % ndim
    return normalize_dims(dim, ndim, op)[0]


def _sizes(args, kw, name, op):
    """Sizes given as *args, or (as torch also accepts) as one keyword argument `name`. None of them: torch's
    TypeError, of a 0-d tensor too (its sizes are an empty tuple, given as one: x.reshape(()))."""
    if not args and not kw:
        raise TypeError(f'{op}() missing 1 required positional arguments: "{name}"; e.g. x.{op}(2, 3), or x.{op}(()) '
                        "for a 0-d shape")
    if kw:
        if set(kw) != {name} or args:
            raise TypeError(f"{op}() got an unexpected keyword argument {next(k for k in kw if k != name) if set(kw) != {name} else name!r}")
        return (kw[name],)
    return args


def _summed_to(g, shape):
    """(g summed over the dims broadcasting added or stretched to reach g's shape from `shape`, those dims)."""
    lead = g.ndim - len(shape)
    stretched = () if 1 not in shape else tuple([i for i in range(lead, g.ndim)  # (a bias has no size-1 dim)
                                                 if shape[i - lead] == 1 and g.shape[i] != 1])
    dims = tuple(range(lead)) + stretched
    if g.dtype == np.float32:  # (torch's order of additions: a bias's gradient is torch's to the bit; float64
        # keeps numpy's, quicker, for the benchmarks' steps)
        return np.asarray(sum_like_torch(g, dims, bool(stretched)).reshape(shape), order="C"), dims
    if not stretched:  # only leading dims to sum: a result of its own (AccumulateGrad may keep it)
        return np.asarray(np.add.reduce(g, dims), order="C"), dims  # (asarray: a 0-d array, not a scalar.
        # add.reduce: what g.sum() calls, through a Python function of numpy's)
    out = g.sum(axis=dims, keepdims=True)
    return np.asarray(out.reshape(shape), order="C"), dims  # (ascontiguousarray makes a 0-d result 1-d)


def sum_to(g, shape):
    shape = tuple(shape)
    if g._data.shape == shape:  # (the array's tuple: g.shape builds a Size)
        return g
    if unrecorded(g):  # (a backward without create_graph: the sum alone, no node to make and drop)
        return plain(_summed_to(g._data, shape)[0])
    if not g._requires_grad:  # nothing will record it: one op
        return SumTo.apply(g, shape)
    # torch's steps, which a double backward's graph shows: a sum over every dim to a 0-d shape
    # (SumBackward0); else a sum with keepdim (SumBackward1), and a view that drops the leading dims
    if not shape:
        from .reduce import Sum
        return Sum.apply(g)
    lead = g._data.ndim - len(shape)
    kept = SumTo.apply(g, (1,) * lead + shape)
    return _share(View.apply(kept, shape), kept) if lead else kept


class Expand(Op):
    """broadcast x to a larger shape; the gradient is summed back"""
    _grad_fn_name = "ExpandBackward0"
    _saved_values = {"self_sym_sizes": "in_shape"}

    @staticmethod
    def forward(ctx, x, shape):
        ctx.in_shape = x.shape
        return _expanded_array(x, shape)

    @staticmethod
    def backward(ctx, grad):
        return sum_to(grad, ctx.in_shape), None

    @staticmethod
    def jvp(ctx, t, _shape):
        return Expand.apply(t, ctx.inputs[1])


def _expanded_array(x, shape):
    """The array x expanded to shape, laid out as torch's expand."""
    lead = len(shape) - x.ndim
    if tuple(shape) == (1,) * lead + x.shape:  # nothing repeated: a writable view, as in-place ops may write it
        out = x[(None,) * lead + (Ellipsis,)]  # (the Ellipsis: a view even when 0-d)
        if lead and type(x) is np.ndarray:  # (numpy gives the new dims stride 0)
            strides = _expand_strides(x, shape, lead)
            return out if out.strides == tuple(strides) else _strided_view(x, shape, strides)
        return out
    if not x.ndim and type(x) is np.ndarray:  # the 0-d gradient of a sum over everything: every stride 0, one call
        out = np.ndarray(shape, x.dtype, x, 0, (0,) * lead)
        out.setflags(write=False)  # (as _stretched's)
        return out
    return _stretched(x, shape, lead)


def _stretched(x, shape, lead):
    """x expanded to shape as torch's expand lays it out: a read-only array on x's memory with torch's
    strides (np.broadcast_to gives every size-1 dim stride 0, and builds an nditer: 3-4 us, the cost of
    a whole small op)."""
    if type(x) is not np.ndarray:  # (meta and vmap-batched arrays: numpy's function knows them)
        return np.broadcast_to(x, shape)
    strides = _expand_strides(x, shape, lead)
    if 0 in x.strides:  # x repeats elements itself (an expanded gradient expanded again): keep one of each
        x = x[tuple([slice(None, 1) if st == 0 else slice(None) for st in x.strides])]
    out = _strided_view(x, shape, strides)
    out.setflags(write=False)  # as numpy's: writing would change every repeat of an element
    return out


def _expand_strides(x, shape, lead):
    """torch's strides (in bytes) for x expanded to shape: 0 along the dims it repeats, x's own along the
    others, and along a new size-1 dim the stride of the dim after it times that dim's size (0 past a 0-d x)."""
    strides = [0] * lead
    for n, s, st in zip(x.shape, shape[lead:], x.strides):
        strides.append(st if n == s else 0)
    if 1 in shape[:lead]:  # (rare: a new dim that repeats nothing)
        step = shape[lead] * strides[lead] if x.ndim else 0
        for i in range(lead - 1, -1, -1):
            step = strides[i] = step if shape[i] == 1 else 0
    return strides


def _strided_view(x, shape, strides):
    """A view of x's memory with these shape and strides (in bytes, from x's first element): through x's
    memory as a buffer when x is contiguous (0.4 us), else np.lib.stride_tricks.as_strided (2-4 us)."""
    try:
        return np.ndarray(shape, x.dtype, x, 0, strides)
    except (TypeError, ValueError):
        return np.lib.stride_tricks.as_strided(x, shape, strides)


def broadcast_to(input, size):
    if isinstance(size, (int, np.integer)):  # (torch's parser: expand takes *sizes, broadcast_to one tuple)
        raise TypeError(f"broadcast_to(): argument 'size' (position 2) must be tuple of ints, not "
                        f"{type(size).__name__}; pass the shape as a tuple, e.g. ({size},)")
    return _expanded(input, tuple(size))


def expand_to(g, shape):
    """g.expand(shape) without its checks, for backward formulas: g broadcasts to `shape` by construction
    (a reduced gradient back to its input's shape). A view even when nothing changes, as torch's. In a backward
    without create_graph, the expanded array alone (no ExpandBackward0 node to make and drop)."""
    if unrecorded(g):  # (always on g's memory: marked as a view without asking numpy, see _share)
        return mark_view(plain(_expanded_array(g._data, tuple(shape))), g, g._view_multi)
    return _share(Expand.apply(g, shape), g)


def broadcasts_to(shape, target):
    """A tensor of `shape` broadcasts to `target`: sizes aligned from the right are equal or 1."""
    lead = len(target) - len(shape)
    if lead < 0 or target and min(target) < 0:
        return False
    for s, t in zip(shape, target[lead:]):  # (a loop: the engine checks every gradient with this)
        if s != t and s != 1:
            return False
    return True


def expand(input, *sizes, **size):
    return _expanded(input, _size_arg(_sizes(sizes, size, "size", "expand")))


def _expanded(x, sizes):
    """x expanded to sizes (-1 keeps a dim's size): always a new view, even of x's own shape, as torch's."""
    return _share(Expand.apply(x, expanded_shape(x, sizes)), x)


def expanded_shape(x, sizes):
    """The shape x expands to (-1 keeps a dim's size), or torch's error for sizes it cannot expand to (setitem's
    too: torch expands the value to the slice it writes)."""
    have = x._data.shape
    lead = len(sizes) - len(have)
    if lead < 0:
        raise RuntimeError(f"expand({x.type()}{{{list(have)}}}, size={list(sizes)}): the number of sizes provided "
                           f"({len(sizes)}) must be greater or equal to the number of dimensions in the tensor "
                           f"({len(have)})")
    if -1 in sizes[:lead]:
        raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension "
                           f"{max(i for i in range(lead) if sizes[i] == -1)} (-1 keeps the size of an existing dim; "
                           "give new dims their size)")  # (torch names the last one)
    shape = tuple([have[i - lead] if s == -1 and i >= lead else s for i, s in enumerate(sizes)])
    if not broadcasts_to(have, shape):
        d = next(i for i in reversed(range(len(shape))) if shape[i] < 0 or i >= lead and have[i - lead] not in (1, shape[i]))
        raise RuntimeError(f"The expanded size of the tensor ({shape[d]}) must match the existing size "
                           f"({have[d - lead] if d >= lead else 1}) at non-singleton dimension {d}.  Target sizes: "
                           f"{list(sizes)}.  Tensor sizes: {list(have)}")
    return shape


def expand_as(input, other):
    return expand(input, tuple(other.shape))  # (a tuple: a 0-d other gives sizes (), not no sizes at all)


def _share(out, x, multi=False):
    """Views share the version counter (and remember their base) as in torch; a view of an exact zero (sgn's
    gradient) is one too, as torch's view of a zero tensor."""
    if isinstance(out, Tensor) and out is not x and (np.may_share_memory(out._data, x._data)  # (O(1) bounds check)
                                                     or out._data.size == 0):  # (empty arrays share nothing)
        mark_view(out, x, multi or x._view_multi)  # a view of split()'s output too
        if type(x) is ZeroTangent and type(out) is Tensor:
            out.__class__ = ZeroTangent
    return out


class View(Op):
    """reshape without copying; the gradient is reshaped back"""
    _grad_fn_name = "ViewBackward0"
    _saved_values = {"self_sym_sizes": "in_shape"}

    @staticmethod
    def forward(ctx, x, shape):
        ctx.in_shape = x.shape
        out = x.reshape(shape)
        if type(x) is not np.ndarray or x.size and x.flags.c_contiguous and (not x.ndim or x.strides[-1] == x.itemsize) \
                and shape != x.shape:
            return out  # numpy's strides are torch's here: dense, in C order (to the same shape numpy keeps x's)
        # torch's strides otherwise; None: no view has that shape, and numpy copied (internal callers view
        # tangents and vmap's batches of any layout)
        strides = view_strides(x, out.shape)
        return out if strides is None or out.strides == tuple(strides) else _strided_view(x, out.shape, strides)

    @staticmethod
    def backward(ctx, grad):
        return reshape(grad, ctx.in_shape), None

    @staticmethod
    def jvp(ctx, t, _shape):
        return View.apply(t, ctx.inputs[1])


def view_strides(x, shape):
    """torch's strides (in bytes) for the array x viewed as `shape` (its computeStride), or None when no view of
    x's memory has that shape. x's dims are taken in chunks that are dense in memory, each chunk split into the
    new dims; a size-1 dim gets the stride its place in the chunk gives it (numpy picks others)."""
    old, st = x.shape, x.strides
    if not old:
        return [x.itemsize] * len(shape)
    if x.size == 0:  # (any strides fit: torch keeps x's for the same shape, else dense ones)
        return list(st) if tuple(shape) == old else _dense_strides(shape, x.itemsize)
    out, view_d, base, t_numel, v_numel = [0] * len(shape), len(shape) - 1, st[-1], 1, 1
    for d in range(len(old) - 1, -1, -1):
        t_numel *= old[d]
        if d == 0 or old[d - 1] != 1 and st[d - 1] != t_numel * base:  # the end of a dense chunk
            while view_d >= 0 and (v_numel < t_numel or shape[view_d] == 1):
                out[view_d] = v_numel * base
                v_numel *= shape[view_d]
                view_d -= 1
            if v_numel != t_numel:
                return None
            if d:
                base, t_numel, v_numel = st[d - 1], 1, 1
    return out if view_d == -1 else None


class Alias(View):
    _grad_fn_name = "AliasBackward0"
    _saved_values = {}


class UnsafeView(View):
    _grad_fn_name = "UnsafeViewBackward0"


class ReshapeAlias(View):
    _grad_fn_name = "ReshapeAliasBackward0"  # torch's name for reshape of a non-contiguous tensor without a copy


class Clone(Op):
    """a copy; the gradient passes through"""
    _grad_fn_name = "CloneBackward0"

    @staticmethod
    def forward(ctx, x, memory_format=None):
        return x.copy() if memory_format is None else laid_out(x, memory_format)  # (None: C order, for ops)

    @staticmethod
    def backward(ctx, grad):
        return grad

    @staticmethod
    def jvp(ctx, t):
        return t


def clone(input, *, memory_format=preserve_format):
    """A copy laid out as torch's: by default with input's own layout when it is dense (preserve_format)."""
    memory_format = preserve_format if memory_format is None else memory_format
    if not isinstance(memory_format, _memory_format):
        raise TypeError(f"clone(): argument 'memory_format' must be microtorch.memory_format, not "
                        f"{type(memory_format).__name__}; pass e.g. microtorch.contiguous_format")
    return Clone.apply(input, memory_format=memory_format)


def _infer_shape(x, shape, op):
    """shape with its -1 filled in from x's size, checked in torch's order (its infer_size)."""
    shape, n, known, inferred = list(shape), x._data.size, 1, None  # (size: numel() goes through its checks)
    for i, s in enumerate(shape):
        if s == -1:
            if inferred is not None:
                raise RuntimeError(f"{op}: only one dimension can be inferred (shape {shape})")
            inferred = i
        elif s < 0:
            raise RuntimeError(f"{op}: invalid shape dimension {s} at index {i} of shape {shape}")
        else:
            known *= s
    if inferred is not None and n == known == 0:
        raise RuntimeError(f"{op}: cannot reshape tensor of 0 elements into shape {shape} because the unspecified "
                           "dimension size -1 can be any value and is ambiguous")
    if inferred is not None and known and n % known == 0:
        shape[inferred] = n // known
    elif inferred is not None or known != n:
        raise RuntimeError(f"shape '{shape}' is invalid for input of size {n} ({op} of a tensor of shape "
                           f"{list(x.shape)})")
    return tuple(shape)


def view(input, *shape, **size):
    if not shape and set(size) == {"dtype"}:  # x.view(dtype=...)
        return _view_as_dtype(input, size["dtype"])
    x, shape = input, _sizes(shape, size, "size", "view")
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer, tuple, list)):
        return _view_as_dtype(x, shape[0])
    shape = _infer_shape(x, _size_arg(shape), "view")
    if not getattr(x._data.flags, "c_contiguous", True) and view_strides(x._data, shape) is None:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one dimension spans across "
            f"two contiguous subspaces). Use .reshape(...) instead. (view of shape {list(x.shape)} to {list(shape)})")
    return _share(View.apply(x, shape), x)


def _view_as_dtype(x, dtype):
    """x.view(dtype): x's memory read as another dtype (its bits, not its values), as torch: not differentiable,
    sharing x's version counter; a different element size changes the last dim's size."""
    from .._dtype import to_dtype
    from ._kernels import _NAMES
    have, want = x._data.dtype, to_dtype(dtype).np
    if have.itemsize != want.itemsize:
        names = f"{_NAMES.get(have.name, have.name)} as {_NAMES.get(want.name, want.name)} (different element sizes)"
        ratio = want.itemsize // have.itemsize
        if x._data.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 to view {names}")
        if x.stride(-1) != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 to view {names}, but got {x.stride(-1)}")
        if ratio > 1 and x._data.shape[-1] % ratio:
            raise RuntimeError(f"self.size(-1) must be divisible by {ratio} to view {names}, but got "
                               f"{x._data.shape[-1]}")
    out = Tensor._make(x._data.view(want))
    out._version_counter = x._version_counter  # (an in-place change of either shows in both)
    return out


@composite("aten::reshape")
def reshape(input, *shape, **kw):
    x, shape = input, _sizes(shape, kw, "shape", "reshape")
    shape = _infer_shape(x, _size_arg(shape), "reshape")
    if getattr(x._data.flags, "c_contiguous", True):  # (vmap's batched data: as contiguous)
        return _share(View.apply(x, shape), x)
    if view_strides(x._data, shape) is not None:
        return _share(ReshapeAlias.apply(x, shape), x)
    return UnsafeView.apply(Clone.apply(x), shape)


def flatten(input, start_dim=0, end_dim=-1):
    have = input._data.shape
    s, e = one_dim(start_dim, len(have), "flatten"), one_dim(end_dim, len(have), "flatten")
    if not have:
        return reshape.__wrapped__(input, 1)  # (torch's flatten shows no aten::reshape)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    return reshape.__wrapped__(input, have[:s] + (math.prod(have[s:e + 1]),) + have[e + 1:])


def unflatten(input, dim, sizes):
    d = one_dim(dim, input._data.ndim, "unflatten")  # (a 0-d tensor takes dim 0 or -1 here, then is refused)
    if input._data.ndim == 0:
        raise RuntimeError("unflatten: Dimension specified as 0 but tensor has no dimensions (a 0-d tensor has "
                           "no dim to split; reshape it instead)")
    sizes, n = list(sizes), input._data.shape[d]
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty; give the sizes that dim is split into, e.g. (2, -1)")
    known = 1
    for i, s in enumerate(sizes):
        if s == -1 and sizes.index(-1) < i:
            raise RuntimeError(f"unflatten: only one dimension can be inferred (sizes {sizes}); give the others")
        if s < -1:
            raise RuntimeError(f"unflatten: invalid shape dimension {s} at index {i} of shape {sizes}")
        known *= s if s != -1 else 1
    if -1 in sizes and n == known == 0:
        raise RuntimeError(f"unflatten: cannot reshape tensor of 0 elements into shape {sizes} because the "
                           "unspecified dimension size -1 can be any value and is ambiguous")
    if -1 in sizes and known and n % known == 0:
        sizes[sizes.index(-1)] = n // known
    elif known != n or -1 in sizes:
        raise RuntimeError(f"unflatten: Provided sizes {sizes} don't multiply up to the size of dim {d} ({n}) in "
                           f"the input tensor (shape {list(input.shape)})")
    shape = input._data.shape[:d] + tuple(sizes) + input._data.shape[d + 1:]
    return _share(View.apply(input, shape), input)  # (splitting one dim is always a view, as torch's)


class Squeeze(Op):
    """drop size-1 dimensions; the gradient gets them back"""
    _grad_fn_name = "SqueezeBackward0"
    _saved_values = {"self_sym_sizes": "in_shape"}

    @staticmethod
    def forward(ctx, x, dims=None):
        ctx.in_shape, ctx.dims = x.shape, dims
        return x.squeeze(axis=dims)  # (the method: np.squeeze adds a Python call)

    @staticmethod
    def backward(ctx, grad):
        # torch's unsqueeze_to: one unsqueeze per squeezed dim, in increasing order (its double backward
        # graph shows them)
        for d, n in enumerate(ctx.in_shape):
            if n == 1 and (ctx.dims is None or d in ctx.dims):
                grad = unsqueeze(grad, d)
        return grad, None

    @staticmethod
    def jvp(ctx, t):
        return View.apply(t, ctx.output._data.shape)


class SqueezeDim(Squeeze):
    """squeeze(x, dim): torch's node shows the dim as given (shown: see shown_dim); a caller that gives none shows
    the one dim it squeezes (matmul's row)"""
    _grad_fn_name = "SqueezeBackward1"
    _saved_values = {"dim": "shown", "self_sym_sizes": "in_shape"}

    @staticmethod
    def forward(ctx, x, dims=None, shown=None):
        ctx.in_shape, ctx.dims, ctx.shown = x.shape, dims, shown if shown is not None or not dims else dims[0]
        return x.squeeze(axis=dims)


class SqueezeDims(Squeeze):
    """squeeze(x, (dims...)): torch's node shows the dims as given"""
    _grad_fn_name = "SqueezeBackward2"
    _saved_values = SqueezeDim._saved_values

    @staticmethod
    def forward(ctx, x, dims=None, shown=None):
        ctx.in_shape, ctx.dims, ctx.shown = x.shape, dims, dims if shown is None else shown
        return x.squeeze(axis=dims)


def squeeze(input, dim=None):
    if dim is None:
        return _share(Squeeze.apply(input, dims=None), input)
    dims = normalize_dims(dim, input.ndim, "squeeze", ranges_first=False)
    dims = tuple(d for d in dims if input.ndim and input.shape[d] == 1)
    if isinstance(dim, (int, np.integer)):
        return _share(SqueezeDim.apply(input, dims=dims, shown=shown_dim(dim)), input)
    return _share(SqueezeDims.apply(input, dims=dims, shown=shown_dims(dim)), input)


def unsqueezed_array(x, dim):
    """The array x with a size-1 dim inserted at dim, laid out as torch's unsqueeze."""
    shape = x.shape[:dim] + (1,) + x.shape[dim:]
    out = x.reshape(shape)  # (a new size-1 dim never needs a copy; np.expand_dims costs 2 us more)
    # torch's strides: x's (numpy resets those of size-1 dims), and for the new dim the stride of the
    # dim it goes before times that dim's size (matmul's fold-or-copy choice reads them)
    strides = _unsqueezed_strides(x, dim)
    return out if out.strides == tuple(strides) else _strided_view(x, shape, strides)


class Unsqueeze(Op):
    """insert a size-1 dimension; the gradient drops it. `shown`: the dim as given (torch's node shows it so, and
    squeezes the gradient along it), when it differs from dim (a negative one)"""
    _grad_fn_name = "UnsqueezeBackward0"
    _saved_values = {"dim": "shown"}

    @staticmethod
    def forward(ctx, x, dim, shown=None):
        ctx.dim, ctx.shown = dim, dim if shown is None else shown
        return unsqueezed_array(x, dim)

    @staticmethod
    def backward(ctx, grad):
        return _share(SqueezeDim.apply(grad, dims=(ctx.dim,), shown=ctx.shown), grad), None

    @staticmethod
    def jvp(ctx, t):
        return Unsqueeze.apply(t, dim=ctx.dim, shown=ctx.shown)


def unsqueeze(input, dim):
    n = input.ndim + 1
    if not -n <= dim < n:
        raise IndexError(f"unsqueeze: Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    if dim < 0 or type(dim) is not int:
        return _share(Unsqueeze.apply(input, dim=dim % n, shown=shown_dim(dim)), input)
    return _share(Unsqueeze.apply(input, dim=dim), input)


class Permute(Op):
    """reorder dimensions; the gradient is permuted back. `shown`: the dims as given, where they differ"""
    _grad_fn_name = "PermuteBackward0"
    _saved_values = {"dims": "shown"}

    @staticmethod
    def forward(ctx, x, dims, shown=None):
        ctx.dims, ctx.shown = dims, dims if shown is None else shown
        return x.transpose(dims)  # (the method: np.transpose adds a Python call)

    @staticmethod
    def backward(ctx, grad):
        dims = ctx.dims  # (the inverse permutation, of Python ints: torch's node shows them)
        return permute(grad, tuple(sorted(range(len(dims)), key=dims.__getitem__))), None

    @staticmethod
    def jvp(ctx, t):
        return Permute.apply(t, dims=ctx.dims, shown=ctx.shown)


def permute(input, *dims, **kw):
    x, dims = input, _size_arg(_sizes(dims, kw, "dims", "permute"))
    ndim = x._data.ndim
    if len(dims) != ndim:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match "
                           f"the length of the desired ordering of dimensions i.e. input.dim() = {ndim} "
                           f"is not equal to len(dims) = {len(dims)}")
    seen = []
    for d in dims:  # each wrapped, then checked against those before it (torch's order of errors)
        seen.append(one_dim(d, ndim, "permute") if ndim else 0)
        if seen[-1] in seen[:-1]:
            raise RuntimeError(f"permute(): duplicate dims are not allowed (dims {list(dims)}); name each dim once")
    seen = tuple(seen)
    if seen != dims or not all(type(d) is int for d in dims):
        return _share(Permute.apply(x, dims=seen, shown=shown_dims(dims)), x)
    return _share(Permute.apply(x, dims=seen), x)


class Transpose(Op):
    """swap two dimensions; the gradient swaps them back. `shown`: the dims as given (torch's node shows them, and
    swaps the gradient's), where they differ"""
    _grad_fn_name = "TransposeBackward0"
    _saved_values = {"dim0": "dim0", "dim1": "dim1"}

    @staticmethod
    def forward(ctx, x, d0, d1, shown=None):
        ctx.d0, ctx.d1, (ctx.dim0, ctx.dim1) = d0, d1, shown or (d0, d1)
        return x.swapaxes(d0, d1) if x.ndim else x.view()  # (the method: np.swapaxes costs 3 times as much)

    @staticmethod
    def backward(ctx, grad):
        if unrecorded(grad):
            return _swapped(grad, ctx.d0, ctx.d1), None
        return _share(Transpose.apply(grad, d0=ctx.d0, d1=ctx.d1, shown=(ctx.dim0, ctx.dim1)), grad), None

    @staticmethod
    def jvp(ctx, t):
        return Transpose.apply(t, d0=ctx.d0, d1=ctx.d1, shown=(ctx.dim0, ctx.dim1))


class T(Transpose):
    """t(x): torch's node shows nothing"""
    _grad_fn_name = "TBackward0"
    _saved_values = {}

    @staticmethod
    def forward(ctx, x, d0, d1):
        ctx.d0, ctx.d1 = d0, d1
        return x.swapaxes(d0, d1) if x.ndim else x.view()

    @staticmethod
    def backward(ctx, grad):
        return (_swapped(grad, ctx.d0, ctx.d1) if unrecorded(grad) else t(grad)), None

    @staticmethod
    def jvp(ctx, t):
        return Transpose.apply(t, d0=ctx.d0, d1=ctx.d1)


def _swapped(g, d0, d1):
    """transpose(g, d0, d1) in a backward without create_graph: the swapped view alone (see _op.plain)."""
    return _share(plain(g._data.swapaxes(d0, d1) if g._data.ndim else g._data.view()), g)


def transpose(input, dim0, dim1):
    ndim = input._data.ndim
    d0, d1 = one_dim(dim0, ndim, "transpose"), one_dim(dim1, ndim, "transpose")
    if d0 != dim0 or d1 != dim1 or type(dim0) is not int or type(dim1) is not int:
        return _share(Transpose.apply(input, d0=d0, d1=d1, shown=(shown_dim(dim0), shown_dim(dim1))), input)
    return _share(Transpose.apply(input, d0=d0, d1=d1), input)


swapdims = transpose


def swapaxes(input, axis0, axis1):
    """numpy's name for transpose, with numpy's parameter names (as torch)."""
    return transpose(input, axis0, axis1)


def t(input):
    ndim = input._data.ndim
    if ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {ndim}D; use "
                           ".transpose(dim0, dim1) or .mT")
    return _share(T.apply(input, d0=0, d1=1 if ndim == 2 else 0), input)


_ZERO_D = "Tensor.{} is deprecated on 0-D tensors. {}"
_IDENTITY, _CONJ = "This function is the identity in these cases.", "Consider using x.conj()."


def numpy_T(x):
    if x.ndim == 0:
        warn_once("T0", _ZERO_D.format("T", _IDENTITY))
    elif x.ndim != 2:
        warn_once("T", "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated "
                        "and it will throw an error in a future release. Consider `x.mT` to transpose batches of "
                        "matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a "
                        "tensor.")
    return permute(x, tuple(reversed(range(x.ndim))))  # (recorded even when it changes nothing, as torch)


def H(x):
    """x.H: the conjugate transpose of a matrix (a 0-d tensor: its conjugate, deprecated in torch)"""
    if x.ndim == 0:
        warn_once("H0", _ZERO_D.format("H", _CONJ))
    elif x.ndim != 2:
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {x.ndim}-D tensor."
                           + (" For batches of matrices, consider using tensor.mH" if x.ndim > 2 else ""))
    from .elementwise import conj  # (torch's: a transpose of the last two dims; a 0-d x is only conjugated)
    return conj(transpose(x, -2, -1) if x.ndim else x)


def mT(x, name="mT"):
    if x.ndim == 0:  # torch: the identity on a 0-d tensor (deprecated there)
        warn_once(name + "0", _ZERO_D.format(name, _IDENTITY if name == "mT" else _CONJ))
        return x
    if x.ndim < 2:
        raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of matrices. Got {x.ndim}-D "
                           "tensor.")
    return transpose(x, -2, -1)


class Repeat(Op):
    """tile x; the gradient sums the tiles"""
    _grad_fn_name = "RepeatBackward0"
    _saved_values = {"repeats": "reps", "self_sym_sizes": "in_shape"}

    @staticmethod
    def forward(ctx, x, reps):
        ctx.in_shape, ctx.reps = x.shape, reps  # (as given: backward reads them as torch's does)
        sizes = (1,) * (len(reps) - x.ndim) + x.shape
        out = np.tile(x, [r if n else 0 for n, r in zip(sizes, reps)])  # (an empty dim may be repeated -1 times)
        return out if out.flags.writeable else out.copy()  # (numpy's tile of an empty x is a view of it)

    @staticmethod
    def backward(ctx, grad):
        # torch's steps (its double backward graph shows them): zeros if anything was repeated 0 times; else
        # each new leading dim summed away, then one reshape that splits every repeated dim into (repeats,
        # size) and one sum over the repeats (no step at all for what was repeated once)
        from .reduce import sum
        reps, shape = ctx.reps, ctx.in_shape
        if 0 in reps:
            return Tensor._make(np.zeros(shape, grad._data.dtype)), None
        lead = len(reps) - len(shape)
        for _ in range(lead):
            grad = sum(grad, 0)
        split, repeated = [], []
        for r, n in zip(reps[lead:], shape):
            if r != 1:
                repeated.append(len(split))
                split.append(r)
            split.append(n)
        return (sum(reshape(grad, split), tuple(repeated)) if repeated else grad), None

    @staticmethod
    def jvp(ctx, t):
        return Repeat.apply(t, reps=ctx.reps)


def repeat(input, *reps, **kw):
    x, reps = input, _size_arg(_sizes(reps, kw, "repeats", "repeat"))
    if len(reps) < x.ndim:
        raise RuntimeError(f"Number of dimensions of repeat dims ({len(reps)}) can not be smaller than number "
                           f"of dimensions of tensor ({x.ndim})")
    # torch checks the result's sizes, not the counts: an empty dim repeated -1 times is empty
    sizes = (1,) * (len(reps) - x.ndim) + x._data.shape
    check_size([n * r for n, r in zip(sizes, reps)], "repeat")
    return Repeat.apply(x, reps=tuple(reps))


class Cat(Op):
    """join along dim; each input gets its slice of the gradient. `shown`: the dim as given, where it differs"""
    _grad_fn_name = "CatBackward0"
    _saved_values = {"dim": "shown"}

    @staticmethod
    def forward(ctx, *xs, dim=0, shown=None):
        ctx.dim, ctx.shown, ctx.legacy = dim, dim if shown is None else shown, [_legacy_empty(x.shape) for x in xs]
        ctx.kept = [not e for e in ctx.legacy] if not all(ctx.legacy) else [True] * len(xs)
        xs = [x for x, k in zip(xs, ctx.kept) if k]
        ctx.sizes = [x.shape[dim] for x in xs]
        return _joined(xs, dim)

    @staticmethod
    def backward(ctx, grad):
        # as torch's: each input's rows of the gradient, narrowed (a view each, SliceBackward0); a 1-d empty
        # input gets plain zeros (no graph)
        from .index import Slice
        grads, start, sizes = [], 0, iter(ctx.sizes)
        for kept, empty in zip(ctx.kept, ctx.legacy):
            size = next(sizes) if kept else 0
            if empty:
                grads.append(Tensor._make(np.zeros(0, grad._data.dtype)))
            else:
                grads.append(_share(Slice.apply(grad, dim=ctx.dim, start=start, stop=start + size, step=1), grad))
            start += size
        return tuple(grads)

    @staticmethod
    def jvp(ctx, *ts):
        return Cat.apply(*ts, dim=ctx.dim, shown=ctx.shown)


def _joined(xs, dim):
    """np.concatenate(xs, dim) laid out as torch's cat: channels last when every input is (as torch's
    suggest_memory_format reads their strides), else C order."""
    out_shape = list(xs[0].shape)
    out_shape[dim] = sum(x.shape[dim] for x in xs)
    if not all(type(x) is np.ndarray and like_channels_last(x.shape, x.strides) for x in xs):
        return np.ascontiguousarray(np.concatenate(xs, axis=dim))  # (numpy follows the inputs' layout)
    order = [1] + list(range(len(out_shape) - 1, 1, -1)) + [0]  # C, then W (H, D), then N: fastest first
    out_strides, step = [0] * len(out_shape), xs[0].itemsize
    for d in order:
        out_strides[d] = step
        step *= out_shape[d]
    out = np.lib.stride_tricks.as_strided(np.empty(math.prod(out_shape), xs[0].dtype), out_shape, out_strides)
    return np.concatenate(xs, axis=dim, out=out)


def _unsqueezed_strides(x, dim):
    """torch's strides (bytes) of x.unsqueeze(dim), as Unsqueeze lays it out."""
    strides = list(x.strides)
    strides.insert(dim, x.shape[dim] * x.strides[dim] if dim < x.ndim else x.itemsize)
    return strides


def _legacy_empty(shape):
    return shape == (0,)


def _tensor_list(tensors, op):
    """The tensors to join, as a list (torch's TypeError for anything else in it)."""
    tensors = list(tensors)
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__} ({op} joins "
                            "tensors: make it one with microtorch.as_tensor)")
    return tensors


def cat(tensors, dim=0):
    tensors = _tensor_list(tensors, "cat")
    if not tensors:  # torch: a ValueError here
        raise ValueError("cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if t._data.ndim == 0:
            raise RuntimeError(f"cat(): zero-dimensional tensor (at position {i}) cannot be concatenated; use "
                               "stack() to join 0-d tensors, or give it a dimension with t.reshape(1)")
    from ._op import promoted
    tensors = promoted(*tensors)
    shapes = [t._data.shape for t in tensors]
    ref = next((s for s in shapes if not _legacy_empty(s)), None)
    if ref is None:  # only 1-d empty tensors: torch checks no dim against them
        return Cat.apply(*tensors, dim=0, shown=shown_dim(dim))
    d = one_dim(dim, len(ref), "cat")
    for i, s in enumerate(shapes):  # (a 1-D empty tensor joins anything, and stays in the graph, as in torch)
        if _legacy_empty(s):
            continue
        shown = f" (the shapes are {list(ref)} and {list(s)}: only dim {d} may differ)"
        if len(s) != len(ref):
            raise RuntimeError(f"Tensors must have same number of dimensions: got {len(ref)} and {len(s)}{shown}")
        bad = next((k for k in range(len(s)) if k != d and s[k] != ref[k]), None)
        if bad is not None:
            raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size {ref[bad]} but "
                               f"got size {s[bad]} for tensor number {i} in the list.{shown}")
    return Cat.apply(*tensors, dim=d) if d == dim and type(dim) is int else \
        Cat.apply(*tensors, dim=d, shown=shown_dim(dim))


concat = concatenate = cat


class Stack(Op):
    """stack along a new dim; each input gets its slice of the gradient. `shown`: the dim as given, where it
    differs (torch's node shows it, and selects the gradient's slices along it)"""
    _grad_fn_name = "StackBackward0"
    _saved_values = {"dim": "shown"}

    @staticmethod
    def forward(ctx, *xs, dim=0, shown=None):
        ctx.dim, ctx.shown = dim, dim if shown is None else shown
        return np.ascontiguousarray(np.stack(xs, axis=dim))  # (C order, as torch's but in rare 5-d cases)

    @staticmethod
    def backward(ctx, grad):
        from .index import Select  # as torch's: each input's slice of the gradient selected (SelectBackward0)
        return tuple(_share(Select.apply(grad, ctx.dim, i, shown=(ctx.shown, i)), grad)
                     for i in range(grad._data.shape[ctx.dim]))

    @staticmethod
    def jvp(ctx, *ts):
        return Stack.apply(*ts, dim=ctx.dim, shown=ctx.shown)


def stack(tensors, dim=0):
    tensors = _tensor_list(tensors, "stack")
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    first = tensors[0]._data.shape
    for i, x in enumerate(tensors):
        if x._data.shape != first:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(first)} "
                               f"at entry 0 and {list(x.shape)} at entry {i}")
    d = one_dim(dim, len(first) + 1, "stack")  # (a new dim: one more place than the tensors have)
    from ._op import promoted
    if d == dim and type(dim) is int:
        return Stack.apply(*promoted(*tensors), dim=d)
    return Stack.apply(*promoted(*tensors), dim=d, shown=shown_dim(dim))


class SplitWithSizes(Op):
    """views of consecutive pieces along dim; the gradients are concatenated back. `shown`: (the dim, the sizes)
    as given, which torch's node shows"""
    _grad_fn_name = "SplitWithSizesBackward0"
    _saved_values = {"dim": "shown_dim", "self_sym_sizes": "in_shape", "split_sizes": "split"}

    @staticmethod
    def forward(ctx, x, sizes, dim, shown=None):
        ctx.dim, ctx.sizes, ctx.in_shape = dim, sizes, x.shape
        ctx.shown_dim, ctx.split = shown or (dim, tuple(sizes))
        ctx.set_materialize_grads(True)
        lead, pieces, start = (slice(None),) * dim, [], 0
        for n in sizes:  # (slices: np.split's Python layers cost 4 us)
            pieces.append(x[lead + (slice(start, start + n),)])
            start += n
        return tuple(pieces)

    @staticmethod
    def backward(ctx, *grads):
        return cat(grads, ctx.dim), None, None

    @staticmethod
    def jvp(ctx, t, _sizes, _dim):
        return SplitWithSizes.apply(t, ctx.sizes, ctx.dim)


class Split(SplitWithSizes):
    """split by a size: torch's node shows that size"""
    _grad_fn_name = "SplitBackward0"
    _saved_values = {"dim": "shown_dim", "self_sym_sizes": "in_shape", "split_size": "split"}


def split(tensor, split_size_or_sections=None, dim=0, *, split_size=None):
    if split_size_or_sections is None:  # Tensor.split(split_size=...)
        split_size_or_sections = split_size
    if split_size_or_sections is None:
        raise TypeError("split(): missing the split_size_or_sections argument: an int (the size of each piece) "
                        "or a list of sizes")
    by_size, sizes, d, shown = _split_plan(tensor, split_size_or_sections, dim)
    cls = Split if by_size else SplitWithSizes
    return tuple(_share(o, tensor, multi=True) for o in cls.apply(tensor, sizes, d, shown=shown))


def _split_plan(tensor, split_size_or_sections, dim):
    """(split by a size?, the sizes of the pieces, the dim, (dim, size or sizes) as torch's node shows them)"""
    if tensor.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor (got a 0-d tensor); "
                           "unsqueeze it first or do not split a scalar")
    by_size = isinstance(split_size_or_sections, (int, np.integer))
    if by_size and split_size_or_sections < 0:  # (before the dim, as torch)
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={split_size_or_sections}")
    d = one_dim(dim, tensor.ndim, "split")
    n = tensor.shape[d]
    if by_size:
        s = int(split_size_or_sections)
        if s == 0 and n:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
        sizes = ([s] * (n // s) + ([n % s] if n % s else [])) if s else []
        return True, sizes or [0], d, (shown_dim(dim), s)  # (one piece at least, empty when the dim is, as torch)
    sizes = list(split_size_or_sections)
    if any(k < 0 for k in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative entries, but got "
                           f"split_sizes={sizes}")
    if sum(sizes) != n:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size "
                           f"at dimension {d}), but got split_sizes={sizes}")
    return False, sizes, d, (shown_dim(dim), shown_dims(sizes))


class UnsafeSplitWithSizes(SplitWithSizes):
    """split_with_sizes whose pieces autograd does not know as views of the input (torch's unsafe_ variants): they
    share its memory, but not its version counter, and an in-place change of one does not rewrite its history"""
    _grad_fn_name = "UnsafeSplitWithSizesBackward0"


class UnsafeSplit(Split):
    """split by a size, its pieces not known as views (see UnsafeSplitWithSizes)"""
    _grad_fn_name = "UnsafeSplitBackward0"


def unsafe_split(input, split_size, dim=0):
    by_size, sizes, d, shown = _split_plan(input, split_size, dim)
    return (UnsafeSplit if by_size else UnsafeSplitWithSizes).apply(input, sizes, d, shown=shown)


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    _, sizes, d, shown = _split_plan(input, list(split_sizes), dim)
    return UnsafeSplitWithSizes.apply(input, sizes, d, shown=shown)


def unsafe_chunk(input, chunks, dim=0):
    return _chunked(input, chunks, dim, unsafe_split)


def chunk(input, chunks, dim=0):
    return _chunked(input, chunks, dim, split)


def _chunked(input, chunks, dim, split_by):
    """chunk as split_by (split or unsafe_split) splits: by the size that makes at most `chunks` pieces"""
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    if input.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor; give it one with x.reshape(1)")
    d = one_dim(dim, input.ndim, "chunk")
    if input.shape[d] == 0:  # torch: `chunks` empty pieces (split by a size would give one)
        return split_by(input, [0] * chunks, dim)
    return split_by(input, -(-input.shape[d] // chunks), dim)  # (the dim as given: torch's node shows it)


class Unbind(Op):
    """the slices along dim; the gradients are stacked back. `shown`: the dim as given (torch's node shows it, and
    stacks the gradients along it)"""
    _grad_fn_name = "UnbindBackward0"
    _saved_values = {"dim": "shown"}

    @staticmethod
    def forward(ctx, x, dim, shown=None):
        ctx.dim, ctx.shown = dim, dim if shown is None else shown
        m = np.moveaxis(x, dim, 0)
        return tuple(m[i, ...] for i in range(len(m)))  # (`...`: a 0-d view, not a copied scalar, from 1-d x)

    @staticmethod
    def backward(ctx, *grads):
        return Stack.apply(*grads, dim=ctx.dim, shown=ctx.shown), None

    @staticmethod
    def jvp(ctx, t, _dim):
        return Unbind.apply(t, ctx.dim, shown=ctx.shown)


def unbind(input, dim=0):
    need_dims(input, "unbind")
    d = one_dim(dim, input.ndim, "unbind")
    return tuple(_share(o, input, multi=True) for o in Unbind.apply(input, d, shown=shown_dim(dim)))


class Flip(Op):
    """reverse along dims; the gradient is flipped back. `shown`: the dims as given (torch's node shows them, and
    flips the gradient along them)"""
    _grad_fn_name = "FlipBackward0"
    _saved_values = {"dims": "shown"}

    @staticmethod
    def forward(ctx, x, dims, shown=None):
        ctx.dims, ctx.shown = dims, dims if shown is None else shown
        # torch allocates flip's result as empty_like(x): x's order of dims, densely, and a dense x's own strides
        # (size-1 dims' too). A copy even where flip is a no-op view.
        out = like_torch(np.flip(x, dims).copy(order="C"), x)
        return in_layout_of(out, x) if type(x) is np.ndarray and x.flags.c_contiguous else out

    @staticmethod
    def backward(ctx, grad):
        return Flip.apply(grad, dims=ctx.dims, shown=ctx.shown), None

    @staticmethod
    def jvp(ctx, t):
        return Flip.apply(t, dims=ctx.dims, shown=ctx.shown)


def flip(input, dims):
    if dims is None:
        raise TypeError("flip(): argument 'dims' (position 1) must be tuple of ints, not NoneType (name the dims to "
                        "flip, e.g. flip((0,)))")
    normal = normalize_dims(dims, input.ndim, "flip", ranges_first=False)  # (0-d: dims 0 or -1, nothing to flip)
    shown = shown_dims(dims)
    return Flip.apply(input, dims=normal if input.ndim else (), shown=shown)


def narrow(input, dim, start, length):
    if input._data.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor (it has no dim to narrow; reshape it first)")
    if length < 0:  # (before the dim, as torch)
        raise RuntimeError(f"narrow(): length must be non-negative (got {length})")
    d = one_dim(dim, input.ndim, "narrow")
    if not -input.shape[d] <= start <= input.shape[d]:
        raise IndexError(f"narrow(): start out of range (expected to be in range of [{-input.shape[d]}, "
                         f"{input.shape[d]}], but got {start})")
    if start < 0:
        start += input.shape[d]
    if start + length > input.shape[d]:
        raise RuntimeError(f"narrow(): start ({start}) + length ({length}) exceeds dimension size "
                           f"({input.shape[d]}) of dim {d}; pick a start and length that fit in the tensor")
    from .index import Slice  # (torch's node shows the dim as given, the start counted from 0)
    shown = (shown_dim(dim), int(start), int(start + length), 1)
    return _share(Slice.apply(input, dim=d, start=start, stop=start + length, step=1, shown=shown), input)


def _diagonal_view(x, offset, d1, d2):
    """np.diagonal(x, offset, d1, d2), but writable where x is (numpy's own view is read-only)."""
    cut = [slice(None)] * x.ndim
    cut[d2 if offset >= 0 else d1] = slice(abs(offset), None)
    y = x[tuple(cut)]  # the diagonal now starts at y's first element
    d = np.diagonal(y, 0, d1, d2)
    strides = tuple(y.strides[k] for k in range(y.ndim) if k not in (d1, d2)) + (y.strides[d1] + y.strides[d2],)
    return np.lib.stride_tricks.as_strided(y, d.shape, strides) if d.size else d.copy()


def _diagonal_shown(ctx, offset, dim1, dim2, shown):
    """What torch's nodes of diagonal and its backward show: the offset, and the dims as given (`shown`, where the
    caller normalized them)."""
    ctx.args, ctx.offset = (offset, dim1, dim2), shown_dim(offset)
    ctx.dim1, ctx.dim2 = shown or (dim1, dim2)


class Diagonal(Op):
    """the diagonal of dims dim1, dim2 (a view); the gradient is placed back on that diagonal"""
    _grad_fn_name = "DiagonalBackward0"
    _saved_values = {"dim1": "dim1", "dim2": "dim2", "offset": "offset", "self_sym_sizes": "in_shape"}

    @staticmethod
    def forward(ctx, x, offset, dim1, dim2, shown=None):
        ctx.in_shape = x.shape
        _diagonal_shown(ctx, offset, dim1, dim2, shown)
        return _diagonal_view(x, offset, dim1, dim2)

    @staticmethod
    def backward(ctx, grad):
        return DiagonalBackward.apply(grad, ctx.in_shape, *ctx.args, shown=(ctx.dim1, ctx.dim2)), None, None, None

    @staticmethod
    def jvp(ctx, t, *_args):
        return Diagonal.apply(t, *ctx.args, shown=(ctx.dim1, ctx.dim2))


class DiagonalBackward(Op):
    """zeros with g on the diagonal of dims dim1, dim2: the adjoint of diagonal"""
    _grad_fn_name = "DiagonalBackwardBackward0"
    _saved_values = {"dim1": "dim1", "dim2": "dim2", "offset": "offset"}

    @staticmethod
    def forward(ctx, g, shape, offset, dim1, dim2, shown=None):
        _diagonal_shown(ctx, offset, dim1, dim2, shown)
        out = np.zeros(shape, g.dtype)
        _diagonal_view(out, offset, dim1, dim2)[...] = g
        return out

    @staticmethod
    def backward(ctx, grad):
        return Diagonal.apply(grad, *ctx.args, shown=(ctx.dim1, ctx.dim2)), None, None, None, None

    @staticmethod
    def jvp(ctx, t, *_args):
        return DiagonalBackward.apply(t, ctx.inputs[1], *ctx.args, shown=(ctx.dim1, ctx.dim2))


class DiagonalCopy(Diagonal):
    """diag(matrix): the diagonal as a copy (torch's diagonal_copy)"""
    _grad_fn_name = "DiagonalBackward0_copy"

    @staticmethod
    def forward(ctx, x, offset, dim1, dim2, shown=None):
        ctx.in_shape = x.shape
        _diagonal_shown(ctx, offset, dim1, dim2, shown)
        return _diagonal_view(x, offset, dim1, dim2).copy()


def diagonal(input, offset=0, dim1=0, dim2=1):
    d1, d2 = (one_dim(d, input.ndim, "diagonal") for d in (dim1, dim2))  # IndexError below 2-D
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return _share(Diagonal.apply(input, offset, d1, d2, shown=(shown_dim(dim1), shown_dim(dim2))), input)


def sum_to_size(input, *size, **kw):
    """x summed to `size`, which must broadcast to x's shape (torch: a sum with keepdim, then a view)."""
    from .reduce import sum
    x, size = input, _size_arg(_sizes(size, kw, "size", "sum_to_size"))
    try:
        ok = len(size) <= x.ndim and np.broadcast_shapes(size, x.shape) == x.shape
    except ValueError:
        ok = False
    if not ok:
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(x.shape)}}}.")
    if not size:  # torch's sum_to: to no dims is a sum over every element (SumBackward0), of a 0-d x too
        return sum(x)
    if size == x.shape:
        return x
    lead = x.ndim - len(size)
    dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(size) if s == 1 and x.shape[lead + i] != 1)
    out = sum(x, dims, keepdim=True) if dims else x
    return view(out, size) if lead else out


def _dim_list(dims, ndim, op, name):
    """An int or a sequence of dims (argument `name`) -> non-negative dims in the given order (checked against ndim)."""
    if dims is None or isinstance(dims, bool):  # (torch's parser: an int or a tuple of ints, nothing else)
        raise TypeError(f"{op}(): argument '{name}' must be int or tuple of ints, not {type(dims).__name__}; pass a "
                        "dim such as 0, or a tuple of them")
    dims = dims if isinstance(dims, (list, tuple)) else (dims,)
    out = tuple(one_dim(d, ndim, op) for d in dims)
    if len(set(out)) != len(out):
        raise RuntimeError(f"{op}: repeated dim in `{name}` ({list(dims)}); each dim may appear once")
    return out


def movedim(input, source, destination):
    src, dst = _dim_list(source, input.ndim, "movedim", "source"), _dim_list(destination, input.ndim, "movedim",
                                                                             "destination")
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} dims) should contain "
                           f"the same number of dims as destination ({list(dst)} dims); give one destination per "
                           "source dim")
    if input.ndim == 0:
        return _share(Alias.apply(input, input.shape), input)  # torch: AliasBackward0
    order = [d for d in range(input.ndim) if d not in src]
    for s_, d_ in sorted(zip(dst, src)):
        order.insert(s_, d_)
    return permute(input, order)


def atleast_1d(x):
    return reshape(x, 1) if x.ndim == 0 else x
