"""Indexing: select, slice, advanced (integer / boolean) indexing, gather, index_select,
masked_fill. Each backward scatters the gradient into zeros of the input's shape, adding up
repeated indices (np.add.at), and that scatter is itself differentiable."""
import numpy as np

from .._tensor import Tensor
from .._user_line import warn_at_user_line
from ..autograd import _hooks, grad_mode
from ._checks import need_dims
from ._index_layout import index_like_torch
from ._op import Op, SavedList, broadcast_error, dim_passed_on, normalize_dims, shown_dim, zeros_for
from .reduce import c_order


class ScatterIntoZeros(Op):
    """zeros(shape)[index] += g: the adjoint of indexing; its own gradient is g'[index]"""
    _grad_fn_name = "IndexPutBackward0"

    @staticmethod
    def forward(ctx, g, shape, index):
        ctx.index = index
        out = np.zeros(shape, dtype=g.dtype)
        np.add.at(out, index, g)
        return out

    @staticmethod
    def backward(ctx, grad):
        return Index.apply(grad, ctx.index), None, None

    @staticmethod
    def jvp(ctx, t, _shape, _index):
        return ScatterIntoZeros.apply(t, *ctx.inputs[1:])


class Index(Op):
    """x[index] with integer / boolean arrays (numpy's advanced indexing)"""
    _grad_fn_name = "IndexBackward0"
    _edges = (0,)  # (not a tensor index)
    _saved_values = {"indices": SavedList("slots"), "self_sym_sizes": "in_shape"}

    @staticmethod
    def forward(ctx, x, index):
        index = save_index_arrays(ctx, index)
        ctx.in_shape, ctx.index = x.shape, index
        return index_like_torch(np.asarray(x[index], order="C"), x, index)  # (torch's layout: _index_layout.py)

    @staticmethod
    def backward(ctx, grad):
        """torch's: zeros with the gradient added in by _index_put_impl_ (accumulate), which saves the indices"""
        from .index_more import IndexPutImpl
        key, indices = saved_index(ctx, ctx.index), ctx.saved_tensors
        return IndexPutImpl.apply(zeros_for(ctx.in_shape, grad), grad, key=key, indices=indices, slots=ctx.slots), None

    @staticmethod
    def jvp(ctx, t, _index):
        return Index.apply(t, ctx.index)


class Select(Op):
    """x.select(dim, i): the gradient goes back into row i. `shown`: (dim, i) as given, which torch's node shows
    (and its backward's), where they differ (a negative one)"""
    _grad_fn_name = "SelectBackward0"
    _saved_values = {"dim": "dim", "index": "index", "self_sym_sizes": "in_shape"}

    @staticmethod
    def forward(ctx, x, dim, index, shown=None):
        ctx.in_shape, ctx.key, (ctx.dim, ctx.index) = x.shape, (slice(None),) * dim + (index,), shown or (dim, index)
        return x[ctx.key + (Ellipsis,)]  # with the Ellipsis numpy returns a view, even when 0-d

    @staticmethod
    def backward(ctx, grad):
        return SelectBackward.apply(grad, ctx.in_shape, ctx.key, shown=(ctx.dim, ctx.index)), None, None

    @staticmethod
    def jvp(ctx, t, _dim, _index):
        return Select.apply(t, *ctx.inputs[1:])


_NO_END = 2 ** 63 - 1  # (the end torch's slice shows when none was given)


def slice_shown(dim, k):
    """(dim, start, end, step) of x[k] along dim as torch's SliceBackward0 shows them: as written (shown_dim), a
    start or step left out as 0 or 1, an end left out as the largest int64."""
    return (dim, 0 if k.start is None else shown_dim(k.start), _NO_END if k.stop is None else shown_dim(k.stop),
            1 if k.step is None else int(k.step))


class Slice(Op):
    """x[start:stop:step] along dim: the gradient goes back into those rows. `shown`: (dim, start, end, step) as
    torch's node shows them (and its backward's), where they differ from the ones computed with"""
    _grad_fn_name = "SliceBackward0"
    _saved_values = {"dim": "dim", "end": "end", "self_sym_sizes": "in_shape", "start": "start", "step": "step"}

    @staticmethod
    def forward(ctx, x, dim, start, stop, step, shown=None):
        ctx.in_shape, ctx.key = x.shape, (slice(None),) * dim + (slice(start, stop, step),)
        ctx.dim, ctx.start, ctx.end, ctx.step = shown or (dim, start, stop, step)
        return x[ctx.key]

    @staticmethod
    def backward(ctx, grad):
        shown = (ctx.dim, ctx.start, ctx.end, ctx.step)
        return SliceBackward.apply(grad, ctx.in_shape, ctx.key, shown=shown), None, None, None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return Slice.apply(t, *ctx.inputs[1:])


class SliceScatter(Op):
    """zeros(shape)[key] = g for a basic (non-repeating) key; its gradient is g'[key]"""
    _grad_fn_name = "SliceScatterBackward0"

    @staticmethod
    def forward(ctx, g, shape, key):
        ctx.key = key
        out = np.zeros(shape, dtype=g.dtype)
        out[key] = g
        return out

    @staticmethod
    def backward(ctx, grad):
        return _BasicIndex.apply(grad, ctx.key), None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return ctx.function_class.apply(t, *ctx.inputs[1:])  # (SliceBackward's and SelectBackward's take `shown`)


class SliceBackward(SliceScatter):
    """zeros with g placed at x[start:stop:step] along a dim (torch's slice_backward); its gradient is the slice.
    `shown`: the slice's (dim, start, end, step) as torch's node shows them"""
    _grad_fn_name = "SliceBackwardBackward0"
    _saved_values = {"dim": "dim", "end": "end", "start": "start", "step": "step"}

    @staticmethod
    def forward(ctx, g, shape, key, shown=None):
        cut = key[-1]
        ctx.dim, ctx.start, ctx.end, ctx.step = shown or (len(key) - 1, cut.start, cut.stop, cut.step)
        return SliceScatter.forward(ctx, g, shape, key)

    @staticmethod
    def backward(ctx, grad):
        from .shape import _share
        cut, shown = ctx.key[-1], (ctx.dim, ctx.start, ctx.end, ctx.step)
        out = Slice.apply(grad, len(ctx.key) - 1, cut.start, cut.stop, cut.step, shown=shown)
        return _share(out, grad), None, None


class SelectBackward(SliceScatter):
    """zeros with g placed at one index along a dim (torch's select_backward); its gradient is that row. `shown`:
    the select's (dim, index) as torch's node shows them"""
    _grad_fn_name = "SelectBackwardBackward0"
    _saved_values = {"dim": "dim", "index": "index"}

    @staticmethod
    def forward(ctx, g, shape, key, shown=None):
        ctx.dim, ctx.index = shown or (len(key) - 1, key[-1])
        return SliceScatter.forward(ctx, g, shape, key)

    @staticmethod
    def backward(ctx, grad):
        from .shape import _share
        shown = (ctx.dim, ctx.index)
        return _share(Select.apply(grad, len(ctx.key) - 1, ctx.key[-1], shown=shown), grad), None, None


class _BasicIndex(Op):
    _grad_fn_name = "AsStridedBackward0"

    @staticmethod
    def forward(ctx, x, key):
        ctx.in_shape, ctx.key = x.shape, key
        return np.asarray(x[key])

    @staticmethod
    def backward(ctx, grad):
        return SliceScatter.apply(grad, ctx.in_shape, ctx.key), None

    @staticmethod
    def jvp(ctx, t, _key):
        return _BasicIndex.apply(t, ctx.key)


def save_index_arrays(ctx, index):
    """torch's IndexBackward0 saves its tensor indices (`_saved_indices`: None for a whole dim): freed by backward,
    seen by pack hooks, and checked for in-place changes (the user's index tensors, where the key holds them, are
    saved themselves). ctx.slots: per dim, None or the position among the saved tensors. Returns index with
    numpy arrays for those tensors."""
    key = index if isinstance(index, tuple) else (index,)
    saved = [k for k in key if isinstance(k, (np.ndarray, Tensor))]
    slots, n = [], 0
    for k in key:
        slots.append(n if isinstance(k, (np.ndarray, Tensor)) else None)
        n += slots[-1] is not None
    ctx.slots = tuple(slots)
    ctx.save_for_backward(*saved)
    key = tuple(k._data if isinstance(k, Tensor) else k for k in key)
    return key if isinstance(index, tuple) else key[0]


def saved_index(ctx, index):
    """index with its arrays read back from the saved tensors (raises once backward freed them)."""
    saved = iter([t._data for t in ctx.saved_tensors])
    if not isinstance(index, tuple):
        return next(saved) if isinstance(index, np.ndarray) else index
    return tuple(next(saved) if isinstance(k, np.ndarray) else k for k in index)


def _is_advanced(k):
    return isinstance(k, (Tensor, np.ndarray, list, range)) or (isinstance(k, tuple))


def warn_byte_mask(k):
    """torch's deprecation warning for a uint8 tensor used as a mask (not for a 0-d one), at the user's line."""
    if isinstance(k, Tensor) and k.dtype.name == "uint8" and k.ndim:
        warn_at_user_line("indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool "
                          "instead.")


def refuse_byte_mask(op, mask, name):
    """torch's masked_fill_ and masked_scatter_ take a bool mask only, an old uint8 one included."""
    if mask.dtype.name != "bool":
        raise RuntimeError(f"{op} only supports boolean masks, but got mask with dtype {name}; convert the mask "
                           "with mask.bool()")


def refuse_byte_fill(indices, value):
    """torch writes x[mask] = v (index_put_) through masked_fill_ when the key holds one tensor index and it is a
    mask, and v has one element; masked_fill_ then refuses an old uint8 mask (a bool one gives the same values
    either way). indices: the key's tensor indices."""
    if len(indices) == 1 and isinstance(indices[0], Tensor) and indices[0].dtype.name == "uint8":
        if (value._data.size if isinstance(value, Tensor) else np.size(value)) == 1:
            from ._out import _c10
            refuse_byte_mask("masked_fill_", indices[0], _c10(np.uint8))


def _to_np_index(k, warn=True):
    """k as numpy indexes with it (warn: of a uint8 mask, as torch does)."""
    if isinstance(k, Tensor):
        if k.dtype.is_floating_point or k.dtype.is_complex:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        a = k._data
        if type(a) is np.ndarray and a.ndim == 0 and a.dtype.kind in "iu" and a.dtype != np.uint8:
            return int(a)  # torch reads a 0-d integer tensor as its number: x[i] is a select (a view), as x[1]
        if a.dtype == np.uint8:  # torch's old masks: a uint8 index is a mask, not positions (deprecated, but
            if warn:             # a 0-d one silently: it reads it as a bool)
                warn_byte_mask(k)
            return np.asarray(a != 0)
        return a
    if isinstance(k, bool):  # (a bool is a 0-d mask, as torch reads it: x[True] is x[None], not x[1])
        return np.asarray(k)
    if type(k) is np.ndarray and k.ndim == 0 and k.dtype.kind in "iu" and k.dtype != np.uint8:
        return int(k)  # (as a 0-d integer tensor: a select)
    if isinstance(k, range):  # (torch reads a range as the list of its numbers: x[range(n), target])
        return np.arange(k.start, k.stop, k.step, dtype=np.int64)
    if isinstance(k, list):
        arr = np.asarray([x._data if isinstance(x, Tensor) else x for x in k])
        if not arr.size:  # (x[[]]: no index, of torch's long type; numpy's empty array is float)
            return arr.astype(np.int64)
        if arr.dtype.kind == "f":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return arr
    return k


def _check_broadcast(key):
    """torch's IndexError when the index tensors do not broadcast together (checked before their bounds, as torch;
    a mask counts as the index tensors of its nonzero elements)."""
    shapes = []
    for k in key:
        if isinstance(k, np.ndarray):
            shapes += [(int(k.sum()),)] * k.ndim if k.dtype == bool else [k.shape]
    if len(shapes) > 1:
        try:
            np.broadcast_shapes(*shapes)
        except ValueError:
            raise IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes "
                             + ", ".join(str(list(s)) for s in shapes)) from None


def _check_zero_dim_key(x, key):
    """torch's errors for x[i] and x[a:b] on a 0-d x (not in a tuple: those are "too many indices")."""
    if x.ndim or isinstance(key, bool):
        return
    if isinstance(key, (int, np.integer)) and key == 0:
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in "
                         "C++ to convert a 0-dim tensor to a number")
    if isinstance(key, (int, np.integer)):
        raise IndexError(f"index {key} is out of bounds for dimension 0 with size 0")
    if isinstance(key, slice):
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")


def _check_bounds(x, key):
    """Turn numpy's IndexError into torch's message, naming the dimension and size."""
    real = sum(k.ndim if isinstance(k, np.ndarray) and k.dtype == bool else 1
               for k in key if k is not None and k is not Ellipsis)
    if real > x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim} (got {real} indices)")
    _check_broadcast(key)
    dim = 0
    for k in key:
        if k is None:
            continue
        if k is Ellipsis:
            dim += x.ndim - real  # the dims the ellipsis stands for
            continue
        if isinstance(k, (int, np.integer)):
            if dim >= x.ndim:
                raise IndexError(f"too many indices for tensor of dimension {x.ndim}")
            size = x.shape[dim]
            if not -size <= k < size:
                raise IndexError(f"index {k} is out of bounds for dimension {dim} with size {size} "
                                 f"(valid indices are {-size}..{size - 1})")
        elif isinstance(k, np.ndarray) and k.dtype != bool and k.size:
            if dim >= x.ndim:
                raise IndexError(f"too many indices for tensor of dimension {x.ndim}")
            size = x.shape[dim]
            if k.max() >= size or k.min() < -size:
                bad = k.max() if k.max() >= size else k.min()
                raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size {size} "
                                 f"(valid indices are {-size}..{size - 1})")
        elif isinstance(k, np.ndarray) and k.dtype == bool:
            _check_mask(x, k, dim)
            dim += k.ndim
            continue
        dim += 1
    if dim > x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim}")


def _check_mask(x, mask, dim):
    """torch's IndexError for a boolean mask whose shape is not that of the dims it indexes."""
    for i, s in enumerate(mask.shape):
        if dim + i < x.ndim and s != x.shape[dim + i]:
            raise IndexError(f"The shape of the mask {list(mask.shape)} at index {i} does not match the shape of "
                             f"the indexed tensor {list(x.shape)} at index {dim + i}; a mask has the shape of "
                             "the dims it indexes, e.g. x[x > 0]")


_SEQUENCE_AS_TUPLE = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed in pytorch 2.9; use "
    "x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be interpreted as tensor index, x[torch.tensor(seq)], "
    "which will result either in an error or a different result")


def legacy_tuple(key):
    """torch's old rule (numpy's once): a list of fewer than 32 items holding a tensor, a sequence, a slice, None or
    `...` is read as a tuple of indices, with torch's warning (x[[[1, 0]]] is x[[1, 0]]; x[[0, 1]] stays a list)."""
    if type(key) is not list or len(key) >= 32:
        return key
    for k in key:
        if isinstance(k, (Tensor, np.ndarray, list, tuple, range, slice)) or k is None or k is Ellipsis:
            warn_at_user_line(_SEQUENCE_AS_TUPLE)
            return tuple(key)
    return key


def plain_element_view(x, key):
    """x[i, j, ...] for Python ints within bounds where no op records anything (x needs no gradient here, carries
    no tangent, nobody listens to events): the view numpy gives, marked as x's view, without the Select nodes that
    would be made and dropped (a loop over elements, as fastbook's matmul from scratch, spends its time there).
    None where the general path is needed."""
    a = x._data
    if type(x) is not Tensor or type(a) is not np.ndarray or len(key) > a.ndim or x._fw_grads or \
            x._requires_grad and grad_mode._state.__dict__.get("enabled", True) or _hooks._listeners:
        return None
    for k, n in zip(key, a.shape):
        if type(k) is not int or not -n <= k < n:
            return None
    from .shape import _share
    return _share(Tensor._make(a[key + (Ellipsis,)]), x)


def getitem(x, key):
    from .shape import _share, unsqueeze
    if type(key) is tuple or type(key) is int:
        out = plain_element_view(x, key if type(key) is tuple else (key,))
        if out is not None:
            return out
    key = legacy_tuple(key)
    single_slice = isinstance(key, slice)  # x[a:b] always records a slice; x[a:b, ...] skips full ones
    if not isinstance(key, tuple):
        _check_zero_dim_key(x, key)
        key = (key,)
    given, key = key, tuple(_to_np_index(k) for k in key)
    _check_bounds(x, key)
    if any(getattr(k, "__vmap_batched__", False) for k in key):  # (vmap: batched)
        return Index.apply(x, key)
    # basic indexing first, one view op per index as torch records it; then the tensor indices
    n_real = sum(k.ndim if isinstance(k, np.ndarray) and k.dtype == bool else 1
                 for k in key if k is not None and k is not Ellipsis)
    out, dim, advanced, tensors = x, 0, {}, {}
    for k, g in zip(key, given):
        if k is Ellipsis:
            dim += x.ndim - n_real
        elif isinstance(k, np.ndarray) and k.ndim == 0 and k.dtype == bool:
            out, advanced[dim] = unsqueeze(out, dim), bool_as_index(k)  # (torch's form of x[True]: a view, then
            dim += 1                                                       # an index of one or no position)
        elif isinstance(k, np.ndarray):
            advanced[dim] = k
            if isinstance(g, Tensor) and g._data is k:  # (the user's tensor is saved: torch checks its version)
                tensors[dim] = g
            dim += k.ndim if k.dtype == bool else 1
        elif k is None:
            out = unsqueeze(out, dim)
            dim += 1
        elif isinstance(k, (int, np.integer, bool)):
            i = int(k) % out.shape[dim]  # (torch's node shows the index as given: -1 as shown_dim shows it)
            out = _share(Select.apply(out, dim, i) if i == k else Select.apply(out, dim, i, shown=(dim, shown_dim(k))),
                         x)
        elif isinstance(k, slice):
            start, stop, step = k.indices(out.shape[dim])
            if step <= 0:
                raise ValueError("step must be greater than zero")
            if not _is_full_slice(k, out.shape[dim]) or single_slice:
                out = _share(Slice.apply(out, dim, start, max(stop, start), step, shown=slice_shown(dim, k)), x)
            dim += 1
        else:
            raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                             f"Variables are valid indices (got {type(k).__name__})")
    if advanced:
        return _advanced_index(out, advanced, tensors)
    if out is x:  # x[...] or x[:, :] is an alias of x, as a view
        from .shape import Alias
        out = _share(Alias.apply(x, x.shape), x)
    return out


def bool_as_index(k):
    """A 0-d bool in a key as torch indexes with it, after an unsqueeze at its dim: the positions [0] (True) or
    none (False), int64 (IndexBackward0 saves that tensor)."""
    return np.zeros(1 if k else 0, dtype=np.int64)


def _is_full_slice(k, n):
    """torch skips a slice written as the whole dim: start 0 (or none), step 1, stop >= n (or none)."""
    return k.start in (None, 0) and k.step in (None, 1) and (k.stop is None or k.stop >= n)


def _advanced_index(x, advanced, tensors):
    """x[..., idx, ...] with the index arrays at their dims (after the basic indices were applied); tensors: the
    user's tensors for some of them, which Index saves."""
    key, dim = [], 0
    for d in sorted(advanced):
        key += [slice(None)] * (d - dim) + [tensors.get(d, advanced[d])]
        dim = d + (advanced[d].ndim if advanced[d].dtype == bool else 1)
    if len(key) == 1 and advanced[0].dtype != bool:
        return Index.apply(x, key[0])
    return Index.apply(x, tuple(key))


def select(input, dim, index):
    from .shape import _share
    need_dims(input, "select")
    d = normalize_dims(dim, input.ndim, "select")[0]
    size = input.shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input.shape)} at "
                         f"dimension {d}")
    if d == dim and 0 <= index and type(dim) is int and type(index) is int:
        return _share(Select.apply(input, d, index), input)
    return _share(Select.apply(input, d, index % size, shown=(shown_dim(dim), shown_dim(index))), input)


class IndexSelect(Op):
    """x.index_select(dim, idx): rows may repeat; their gradients add up. `shown`: the dim as given (torch's node
    shows it), where it differs"""
    _grad_fn_name = "IndexSelectBackward0"
    _edges = (0,)  # (not the index)
    _saved_names, _saved_values = ("index",), {"dim": "shown", "self_sym_sizes": "in_shape"}

    @staticmethod
    def forward(ctx, x, dim, index, shown=None):
        ctx.in_shape, ctx.dim, ctx.shown = x.shape, dim, dim if shown is None else shown
        ctx.save_for_backward(index)  # (the index tensor itself: torch checks its version in backward)
        if x.ndim == 0:  # (its one element, checked to be at index 0: torch keeps the 0-d shape)
            return x.copy()
        return np.take(x, index.reshape(-1), axis=dim)

    @staticmethod
    def backward(ctx, grad):
        from .rearrange import index_add
        (index,) = ctx.saved_tensors
        # (torch's formula: zeros with the gradient index_add'ed in, IndexAddBackward0)
        dim = dim_passed_on(ctx.dim, ctx.shown, grad.ndim)
        return index_add(zeros_for(ctx.in_shape, grad), dim, index, grad), None, None

    @staticmethod
    def jvp(ctx, t, _dim, _index):
        return IndexSelect.apply(t, *ctx.inputs[1:])


def index_select(input, dim, index):
    d = normalize_dims(dim, max(input.ndim, 1), "index_select")[0]  # (torch's order: dim, shape, dtype, values)
    idx = index._data if isinstance(index, Tensor) else np.asarray(index)
    if idx.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if isinstance(index, Tensor) and index.dtype.name not in ("int64", "int32"):
        raise RuntimeError(f"index_select(): Expected dtype int32 or int64 for index (got {index.dtype}); convert it "
                           "with index.long()")
    if input.ndim == 0:  # torch treats a 0-d tensor as one element here, at index 0 (not -1)
        if type(idx) is np.ndarray and idx.size != 1:
            raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {idx.size} value(s)")
        if type(idx) is np.ndarray and idx.item() != 0:
            raise IndexError(f"index_select(): index out of range in self (index {idx.item()} of a 0-d tensor, "
                             "whose one element is at 0)")
        return IndexSelect.apply(input, 0, index if isinstance(index, Tensor) else idx, shown=shown_dim(dim))
    if idx.size and (idx.max() >= input.shape[d] or idx.min() < 0):  # (torch takes no negative index here)
        bad = idx.max() if idx.max() >= input.shape[d] else idx.min()
        if d == 1:  # (torch's kernel along dim 1 says it its own way)
            raise RuntimeError(f"index_select(): INDICES element is out of DATA bounds, id={bad} axis_dim="
                               f"{input.shape[d]} (indices go from 0 to {input.shape[d] - 1})")
        raise IndexError(f"index_select(): index out of range in self (index {bad}; dimension {d} has size "
                         f"{input.shape[d]}: indices go from 0, not from the end)")
    return IndexSelect.apply(input, d, index if isinstance(index, Tensor) else idx, shown=shown_dim(dim))


class Gather(Op):
    """out[i][j] = x[i][index[i][j]] (dim=1); the gradient scatter-adds back. `shown`: the dim as given (torch's
    node shows it, and scatters along it), where it differs"""
    _grad_fn_name = "GatherBackward0"
    _edges = (0,)  # (not the index)
    _saved_names, _saved_values = ("self", "index"), {"dim": "shown", "sparse_grad": "sparse_grad"}

    @staticmethod
    def forward(ctx, x, dim, index, shown=None, sparse_grad=False):
        ctx.in_shape, ctx.dim, ctx.shown, ctx.sparse_grad = x.shape, dim, dim if shown is None else shown, sparse_grad
        ctx.save_for_backward(x, index)  # torch saves self (for its size) and index: in-place changes fail backward
        if x.ndim == 0:  # (its one element, the index checked to be 0)
            return x.copy()
        key = tuple(slice(0, n) if i != dim else slice(None) for i, n in enumerate(index.shape))
        return np.take_along_axis(x[key], index, axis=dim)  # (the index may be smaller than x off dim)

    @staticmethod
    def backward(ctx, grad):
        from .index_more import scatter_add
        index = ctx.saved_tensors[1]
        # (torch's formula: zeros with the gradient scatter_add'ed in, ScatterAddBackward0)
        dim = dim_passed_on(ctx.dim, ctx.shown, grad.ndim)
        return scatter_add(zeros_for(ctx.in_shape, grad), dim, index, grad), None, None

    @staticmethod
    def jvp(ctx, t, _dim, _index):
        return Gather.apply(t, *ctx.inputs[1:])


def one_element(a):
    """a itself, or a 0-d a as a 1-d view of its one element: torch writes into a 0-d tensor as into one of shape
    [1], at index 0 or -1."""
    return a.reshape(1) if a.ndim == 0 else a


def _along_axis_key(index, dim):
    """numpy's key for the places index names along dim (the others counted up); a 0-d index (into a 0-d tensor, as
    one element) a key of one place."""
    if index.ndim == 0:
        return (index.reshape(1),)
    grids = list(np.indices(index.shape, sparse=True))
    grids[dim] = index
    return tuple(grids)


def gather(input, dim, index, *, sparse_grad=False):
    from .rearrange import one_element_index
    if isinstance(index, Tensor) and index.ndim == 0 and input.ndim == 1:  # (one element, a 0-d result: torch's)
        return gather(input, dim, one_element_index(input, index)[0], sparse_grad=sparse_grad).reshape(())
    d = normalize_dims(dim, max(input.ndim, 1), "gather")[0]  # (0-d: one element, dim 0 or -1)
    idx = index._data
    if idx.dtype not in (np.int32, np.int64):
        raise RuntimeError(f"gather(): Expected dtype int32/int64 for index, got {index.dtype}")
    if idx.ndim != input.ndim:
        raise RuntimeError("gather(): Index tensor must have the same number of dimensions as input tensor")
    n = input.shape[d] if input.ndim else 1
    if idx.size and (idx.max() >= n or idx.min() < 0):
        bad = idx.max() if idx.max() >= n else idx.min()
        raise RuntimeError(f"gather(): index {bad} is out of bounds for dimension {d} with size {n} (gather takes no "
                           "negative index)")
    if any(idx.shape[i] > input.shape[i] for i in range(input.ndim) if i != d):
        raise RuntimeError(f"gather(): Size does not match at dimension {d} expected index {list(idx.shape)} to be "
                           f"no larger than self {list(input.shape)} apart from dimension {d}")
    return Gather.apply(input, d, index, shown=shown_dim(dim), sparse_grad=sparse_grad)


class MaskedFill(Op):
    """x with mask positions set to value: the gradient is zero there"""
    _grad_fn_name = "MaskedFillBackward0"
    _edges = (0,)  # (not the mask, as torch)
    _saved_names = ("mask",)

    @staticmethod
    def forward(ctx, x, mask, value):
        ctx.save_for_backward(mask)
        return c_order(np.where(mask, np.asarray(value, dtype=x.dtype), x))  # (torch fills a C-ordered clone)

    @staticmethod
    def backward(ctx, grad):
        (mask,) = ctx.saved_tensors  # torch's steps (a double backward's graph shows them)
        gv = grad.masked_select(mask).sum() if ctx.needs_input_grad[2] else None
        return (grad.masked_fill(mask, 0.0) if ctx.needs_input_grad[0] else None), None, gv

    @staticmethod
    def jvp(ctx, tx, _mask, tv):
        from .elementwise import where
        mask = ctx.inputs[1]
        return where(mask, tv, tx) if tv is not None else MaskedFill.apply(tx, mask, 0.0)


class MaskedFillTensor(MaskedFill):
    _grad_fn_name = "MaskedFillBackward1"
    _edges = (0, 2)


_C_NAMES = {"int64": "int64_t", "int32": "int", "int16": "int16_t", "int8": "int8_t", "uint8": "uint8_t",
            "float16": "c10::Half", "float32": "float", "float64": "double", "complex64": "c10::complex<float>",
            "complex128": "c10::complex<double>"}


def fill_scalar(value, dtype, op, float_range=True):
    """The number `value` in `dtype` as torch converts a fill value (c10's checked conversion): an integer dtype
    takes a finite number in its range (uint8 also an integer down to -255, which wraps), a floating dtype one
    below its largest value (unless not float_range: then a larger one is inf), a real dtype no imaginary part; a
    bool dtype takes anything (nonzero is True). index_fill takes no complex number into a real or bool dtype,
    not even one with no imaginary part (torch checks the number's type there, not its value)."""
    if isinstance(value, int) and not -2 ** 63 <= value < 2 ** 64:
        raise OverflowError(f"{op}(): int too big to convert ({value}: torch takes a 64-bit integer here)")
    np_dtype = dtype.np
    kind = np_dtype.kind
    if op == "index_fill" and isinstance(value, complex) and kind != "c":
        raise RuntimeError(f"index_fill_(): Converting complex Scalar to non-complex type is not supported (the "
                           f"tensor is {dtype}; pass value.real, or fill a complex tensor)")
    if kind == "b":
        return np.bool_(value != 0)
    fits = not (isinstance(value, complex) and value.imag and kind != "c")
    number = value.real if isinstance(value, complex) and kind != "c" else value
    if fits and kind in "iu":
        info = np.iinfo(np_dtype)
        low = -int(info.max) if kind == "u" and not isinstance(number, float) else info.min
        fits = bool(np.isfinite(number)) and low <= number <= info.max
        number = np.asarray(int(number) if fits else 0).astype(np_dtype)  # (uint8: -1 wraps to 255)
    elif fits and float_range:
        big = float(np.finfo(np_dtype).max)
        fits = all(not np.isfinite(p) or abs(p) <= big for p in (np.real(number), np.imag(number)))
    if not fits:
        raise RuntimeError(f"value cannot be converted to type {_C_NAMES[np_dtype.name]} without overflow ({op}: "
                           f"{value} does not fit in {dtype})")
    with np.errstate(over="ignore"):  # (without float_range a larger value is inf, silently, as in torch)
        return np.asarray(number, np_dtype)[()]


def masked_fill(input, mask, value):
    from ._out import _c10
    refuse_byte_mask("masked_fill_", mask, _c10(mask._data.dtype))
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value.ndim} dimension(s).")
        if value._data.dtype != input._data.dtype:
            value = value.to(input.dtype)
    else:
        value = fill_scalar(value, input.dtype, "masked_fill")
    try:  # (as torch's, the tensor broadcasts to the mask's shape too; masked_fill_ then refuses the larger result)
        return (MaskedFillTensor if isinstance(value, Tensor) else MaskedFill).apply(input, mask, value)
    except ValueError:
        raise RuntimeError(f"masked_fill: the mask {list(mask.shape)} and the tensor {list(input.shape)} do not "
                           "broadcast; give the mask the tensor's shape (or one that broadcasts to it)") from None


class MaskedSelect(Op):
    """x[mask], x and mask broadcast together, in one row: the gradient goes back to the selected places (and is
    summed over the dims x was broadcast along, centrally)"""
    _grad_fn_name = "MaskedSelectBackward0"
    _edges = (0,)  # (not the mask)
    _saved_names = ("self", "mask")

    @staticmethod
    def forward(ctx, x, mask):
        ctx.save_for_backward(x, mask)
        ctx.shape = np.broadcast_shapes(x.shape, mask.shape) or (1,)  # (0-d: as one element, torch's 1-d result)
        ctx.where = np.nonzero(np.broadcast_to(mask, ctx.shape))
        return np.broadcast_to(x, ctx.shape)[ctx.where]

    @staticmethod
    def backward(ctx, grad):
        from .index_more import masked_scatter
        mask = ctx.saved_tensors[1]  # (unpacking checks the versions and raises once freed, as torch's does)
        return masked_scatter(zeros_for(ctx.shape, grad), mask, grad), None  # (torch's MaskedScatterBackward0)

    @staticmethod
    def jvp(ctx, t, _mask):
        return MaskedSelect.apply(t, ctx.inputs[1])


def masked_select(input, mask):
    if mask.dtype.name != "bool":
        raise RuntimeError(f"masked_select: expected BoolTensor for mask (got {mask.dtype}); compare to get one, "
                           "e.g. x > 0")
    try:
        np.broadcast_shapes(input.shape, mask.shape)
    except ValueError as e:
        raise broadcast_error("masked_select", e, input, mask) from None
    return MaskedSelect.apply(input, mask)


class Take(Op):
    """x.take(index) = x.flatten()[index], in index's shape: the gradient adds g at those flat positions"""
    _grad_fn_name = "TakeBackward0"
    _edges = (0,)  # (not the index)
    _saved_names = ("self", "index")

    @staticmethod
    def forward(ctx, x, index):
        ctx.save_for_backward(x, index)
        ctx.in_shape, ctx.flat = x.shape, index % max(x.size, 1)  # (-1 is the last element)
        return np.asarray(x.reshape(-1)[ctx.flat])

    @staticmethod
    def backward(ctx, grad):
        from .index_more import put
        index = ctx.saved_tensors[1]  # (as MaskedSelect's)
        return put(zeros_for(ctx.in_shape, grad), index, grad, accumulate=True), None  # (torch's PutBackward0)

    @staticmethod
    def jvp(ctx, t, _index):
        return Take.apply(t, ctx.inputs[1])


def take(input, index):
    if index.dtype.name != "int64":
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {_dtype_name(index)}; convert it with "
                           "index.long()")
    n = input.numel()
    if index.numel() and n == 0:
        raise IndexError("take(): tried to take from an empty tensor")
    bad = index._data[(index._data >= n) | (index._data < -n)] if index.numel() else ()
    if len(bad):
        raise IndexError(f"out of range: tried to access index {bad.flat[0]} on a tensor of {n} elements (take "
                         f"counts the elements of {list(input.shape)} in a row: -{n}..{n - 1})")
    return Take.apply(input, index)


def _dtype_name(t):
    from ._kernels import _NAMES
    return _NAMES.get(t.dtype.name, t.dtype.name)
