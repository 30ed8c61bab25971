"""Writing one tensor into another at positions: scatter_add, index_copy, index_fill, index_put,
masked_scatter, put, select/slice/diagonal_scatter, fill_diagonal_.

Most are one op: out = x with out[key] = src (Place) or out[key] += src (AddAt), where key is a
numpy index; x's gradient is g with the written places zeroed (or g), src's is g[key].

What torch's node saves, these save too (seen by pack hooks, freed by backward, checked for in-place changes): the
index (or mask) tensor as the user gave it, passed beside the key, and the source where torch keeps it."""
import numpy as np

from .._tensor import Tensor
from .._user_line import warn_at_user_line
from ._op import Op, SavedList, given_dim, normalize_dims, shown_dim, zeros_for
from .elementwise import where, zeros_like_
from .index import one_element
from .rearrange import as_given


def _key_tensors(key):
    return tuple(Tensor._make(k) if isinstance(k, np.ndarray) else k for k in key)


def _take(g, key, shape):
    from .index import getitem
    return getitem(g, _key_tensors(key)).reshape(shape)


def _keep_index(ctx, src, index, dim):
    """Save what torch's node of this class saves (its `_saved_names`): the index tensor the user gave, and the
    source when it needs a gradient; none given (fill_diagonal_, vmap's write, a tangent's op): nothing. The dim is
    shown as given (torch's `_saved_dim`: a negative one as an unsigned 64-bit int)."""
    names = ctx._saved_names
    ctx.saves = index is not None and bool(names) and (ctx.needs_input_grad[1] or not ctx._forward_cls._source_only)
    if ctx.saves:
        ctx.save_for_backward(*(index, src if ctx.needs_input_grad[1] else None)[:len(names)])
    elif names:  # (torch's node leaves them undefined: None, freed or not)
        ctx.save_for_backward(*(None,) * len(names))
    ctx.given_dim = None if dim is None else shown_dim(dim)
    ctx.source_dim = src.ndim


def _unpack(ctx):
    """Unpacked, as torch's node does: raises once backward freed them, or if the index changed in place."""
    if ctx.saves:
        ctx.saved_tensors  # noqa: B018


def _writable(x):
    """A copy of x to write into, and the array a key indexes (one_element: a 0-d x as one of shape [1])."""
    out = x.copy()
    return out, one_element(out)


class Place(Op):
    """out = x with out[key] = src;  d = (g zeroed at key, g[key])"""
    _grad_fn_name = "IndexCopyBackward0"
    _source_only = False  # (torch saves the index only for the source's gradient: scatter_add's node)

    @staticmethod
    def forward(ctx, x, src, key=None, index=None, dim=None):
        ctx.key, ctx.src_shape, ctx.accumulate = key, src.shape, False
        out, target = _writable(x)
        target[key] = src.reshape(np.shape(target[key]))
        written = np.zeros(target.shape, dtype=bool)
        written[key] = True
        ctx.written = written.reshape(x.shape)
        _keep_index(ctx, src, index, dim)
        return out

    @staticmethod
    def backward(ctx, grad):
        _unpack(ctx)
        cls = ctx._forward_cls
        gx = cls.self_grad(ctx, grad) if ctx.needs_input_grad[0] else None
        return gx, cls.source_grad(ctx, grad) if ctx.needs_input_grad[1] else None

    @staticmethod
    def self_grad(ctx, grad):
        """g, zeroed where forward wrote (an op of torch's formula where a subclass knows it)"""
        return _zero_at(grad, ctx.written)

    @staticmethod
    def source_grad(ctx, grad):
        """g at the places forward wrote, in the source's shape (an op of torch's formula where a subclass knows it)"""
        return _take(grad, ctx.key, ctx.src_shape)

    @staticmethod
    def jvp(ctx, tx, tsrc):
        return ctx._forward_cls.apply(tx, tsrc, key=ctx.key)  # (index_fill's 0-d value: broadcast by its forward)


def _zero_at(grad, written):
    """grad with exact zeros where forward wrote, as torch's fill gives them (a product with 0 would keep a NaN or
    inf gradient there as NaN, and a negative one as -0.0)"""
    return grad.masked_fill(Tensor._make(written), 0)


def _placed(name, saved=(), values=None):
    return type(name, (Place,), {"_grad_fn_name": name + "Backward0", "__module__": __name__, "__doc__": Place.__doc__,
                                 "_saved_names": saved, "_saved_values": values or {}})


IndexCopy = _placed("IndexCopy", ("index", "source"), {"dim": "given_dim", "source_dim": "source_dim"})
Put = _placed("Put", ("index", "source"), {"accumulate": "accumulate"})
IndexFill = _placed("IndexFill", ("index",), {"dim": "given_dim"})


# The gradients as torch's formulas write them, with the index tensor the user gave (saved first): under
# create_graph these ops are the nodes torch records. Without that index (an op made by another's backward or by
# vmap), Place's own.
def _given_index(ctx):
    return ctx.saved_tensors[0] if ctx.saves else None


def _filled_along_dim(ctx, grad):
    index = _given_index(ctx)
    return Place.self_grad(ctx, grad) if index is None else index_fill(grad, given_dim(ctx.given_dim), index, 0)


def _selected_along_dim(ctx, grad):
    index = _given_index(ctx)
    if index is None:
        return Place.source_grad(ctx, grad)
    return grad.index_select(given_dim(ctx.given_dim), index).expand(ctx.src_shape)


def _taken(ctx, grad):
    index = _given_index(ctx)
    return Place.source_grad(ctx, grad) if index is None else grad.take(index).reshape(ctx.src_shape)


def _put_zeros(ctx, grad):
    index = _given_index(ctx)
    if index is None:
        return Place.self_grad(ctx, grad)
    return put(grad, index, zeros_for(ctx.src_shape, grad))


IndexCopy.self_grad, IndexCopy.source_grad = staticmethod(_filled_along_dim), staticmethod(_selected_along_dim)
IndexFill.self_grad = staticmethod(_filled_along_dim)
Put.self_grad, Put.source_grad = staticmethod(_put_zeros), staticmethod(_taken)


class SelectScatter(Place):
    """out = x with out.select(dim, index) = src. `shown`: (dim, index) as given, which torch's node shows"""
    _grad_fn_name = "SelectScatterBackward0"
    _saved_values = {"dim": "dim", "index": "index"}

    @staticmethod
    def forward(ctx, x, src, key=None, shown=(None, None)):
        ctx.dim, ctx.index = shown
        return Place.forward(ctx, x, src, key)


class SliceScatter(Place):
    """out = x with out[start:end:step] along dim = src. `shown`: (dim, start, end, step) as given (None where left
    out), which torch's node shows"""
    _grad_fn_name = "SliceScatterBackward0"
    _saved_values = {"dim": "dim", "end": "end", "start": "start", "step": "step"}

    @staticmethod
    def forward(ctx, x, src, key=None, shown=(None,) * 4):
        ctx.dim, ctx.start, ctx.end, ctx.step = shown
        return Place.forward(ctx, x, src, key)


def _select_scatter_self(ctx, grad):
    """torch's: grad.select_scatter(zeros_like(src), dim, index); without its arguments (vmap's write), Place's"""
    if ctx.dim is None:
        return Place.self_grad(ctx, grad)
    return select_scatter(grad, zeros_for(ctx.src_shape, grad), given_dim(ctx.dim), given_dim(ctx.index))


def _select_scatter_source(ctx, grad):
    """torch's: grad.select(dim, index)"""
    if ctx.dim is None:
        return Place.source_grad(ctx, grad)
    return grad.select(given_dim(ctx.dim), given_dim(ctx.index))


def _slice_args(ctx):
    return given_dim(ctx.dim), *(None if v is None else given_dim(v) for v in (ctx.start, ctx.end)), ctx.step


def _slice_scatter_self(ctx, grad):
    """torch's: grad.slice_scatter(zeros_like(src), dim, start, end, step)"""
    if ctx.dim is None:
        return Place.self_grad(ctx, grad)
    return slice_scatter(grad, zeros_for(ctx.src_shape, grad), *_slice_args(ctx))


def _slice_scatter_source(ctx, grad):
    """torch's: grad.slice(dim, start, end, step), whose node shows a start or end left out as None"""
    from .index import Slice
    from .shape import _share
    if ctx.dim is None:
        return Place.source_grad(ctx, grad)
    dim, start, end, step = _slice_args(ctx)
    k = slice(start, end, step).indices(grad.shape[dim % grad.ndim])
    shown = (ctx.dim, ctx.start, ctx.end, ctx.step)
    return _share(Slice.apply(grad, dim % grad.ndim, k[0], max(k[1], k[0]), k[2], shown=shown), grad)


SelectScatter.self_grad, SelectScatter.source_grad = (staticmethod(_select_scatter_self),
                                                      staticmethod(_select_scatter_source))
SliceScatter.self_grad, SliceScatter.source_grad = (staticmethod(_slice_scatter_self),
                                                    staticmethod(_slice_scatter_source))


def _summed_to(g, shape):
    """g (the gradient at the places a broadcast value was written) summed back to the value's shape; a
    one-element value may have more dims than the places (torch fills through masked_fill_ there)."""
    from .shape import sum_to
    if len(shape) > g.ndim:
        return g.sum().reshape(shape)
    return sum_to(g, shape)


IndexFill._edges = (0,)  # (the number filled in is made a tensor here; torch's op has no edge for it)


class IndexFillTensor(IndexFill):
    """index_fill with a 0-d tensor value, written into the places inside the op (torch's graph has no expand);
    d = (g zeroed at the places, g summed over them, a place the index repeats counted once)"""
    _grad_fn_name = "IndexFillBackward1"  # (torch's name when the value is a tensor)
    _edges = (0, 1)

    @staticmethod
    def forward(ctx, x, value, key=None, index=None, dim=None, fill=None):
        """fill: the value converted to x's dtype (as value.to would), where the dtypes differ"""
        places = np.arange(x.size).reshape(x.shape)[key]  # (where the op writes: vmap's key may batch them)
        out = Place.forward(ctx, x, np.broadcast_to(value if fill is None else fill, places.shape), key, index, dim)
        ctx.v_shape = value.shape
        if ctx.needs_input_grad[1]:
            ctx.first = _first_time(places)
        return out

    @staticmethod
    def backward(ctx, grad):
        from .shape import sum_to
        gx, g = Place.backward(ctx, grad)
        if g is None:
            return gx, None
        return gx, sum_to(where(Tensor._make(ctx.first), g, zeros_like_(g)), ctx.v_shape)


class AddAt(Op):
    """out = x with out[key] += src (repeated positions add up);  d = (g, g[key])"""
    _grad_fn_name = "ScatterAddBackward0"
    _saved_names, _saved_values, _source_only = ("index",), {"dim": "given_dim"}, True

    @staticmethod
    def forward(ctx, x, src, key=None, index=None, dim=None, src_key=None):
        """src_key: the part of src that is written (scatter_add's src may be larger than its index)"""
        ctx.key, ctx.src_shape, ctx.accumulate = key, src.shape, True
        out, target = _writable(x)
        np.add.at(target, key, (src if src_key is None else src[src_key]).reshape(np.shape(target[key])))
        _keep_index(ctx, src, index, dim)
        return out

    @staticmethod
    def backward(ctx, grad):
        _unpack(ctx)
        return grad, ctx._forward_cls.source_grad(ctx, grad) if ctx.needs_input_grad[1] else None

    @staticmethod
    def source_grad(ctx, grad):
        """scatter_add's: g gathered along dim at the index (torch's formula)"""
        index = _given_index(ctx)
        if index is None:
            return Place.source_grad(ctx, grad)
        g = grad.gather(given_dim(ctx.given_dim), index)  # (index's shape: a larger src makes the engine raise, as
        if tuple(g.shape) == ctx.src_shape or g.numel() != int(np.prod(ctx.src_shape)):  # torch's)
            return g
        return g.reshape(ctx.src_shape)  # (a 0-d index and source: one element)

    @staticmethod
    def jvp(ctx, tx, tsrc):
        return AddAt.apply(tx, tsrc, key=ctx.key)


class PutAccumulate(AddAt):
    """put with accumulate=True: out = x with out[key] += src"""
    _grad_fn_name = "PutBackward0"
    _saved_names, _saved_values, _source_only = Put._saved_names, Put._saved_values, False
    source_grad = staticmethod(_taken)


def _taking_broadcast_values(name, base, doc):
    """index_put's op on top of `base` (Place: out[key] = v, AddAt: out[key] += v): the value is broadcast to
    out[key]'s shape inside the op (one element: any shape, as torch fills through masked_fill_), so the graph has no
    ExpandBackward0, and its gradient is summed back to the value's shape."""
    def forward(ctx, x, src, key=None, indices=(), slots=None):
        out = base.forward(ctx, x, np.broadcast_to(src.reshape(()) if src.size == 1 else src, np.shape(x[key])), key)
        ctx.v_shape = src.shape
        # torch's node saves the index tensors as given (`_saved_indices`: their places among the saved tensors, None
        # for a whole dim)
        ctx.slots, ctx.saves = tuple(range(len(indices))) if slots is None else slots, bool(indices)
        ctx.save_for_backward(*indices)
        return out

    def backward(ctx, grad):
        gx, g = base.backward(ctx, grad)
        return gx, None if g is None else _summed_to(g, ctx.v_shape)

    def jvp(ctx, tx, tsrc):
        return op.apply(tx, tsrc, key=ctx.key)
    hooks = {"source_grad": staticmethod(_indexed)}
    if base is Place:
        hooks["self_grad"] = staticmethod(_index_put_zeros)
    op = type(name, (base,),
              {"_grad_fn_name": "IndexPutBackward0", "__module__": __name__, "__doc__": doc, "_saved_names": (),
               "_saved_values": {"indices": SavedList("slots"), "accumulate": "accumulate"}, "_source_only": False,
               "forward": staticmethod(forward), "backward": staticmethod(backward), "jvp": staticmethod(jvp), **hooks})
    return op


def _saved_indices(ctx):
    """index_put's indices as torch's node keeps them (None for a whole dim), or None if none were given."""
    if not ctx.saves:
        return None
    saved = ctx.saved_tensors
    return tuple(None if k is None else saved[k] for k in ctx.slots)


def _indexed(ctx, grad):
    """index_put's values: g at the indices (torch's formula, IndexBackward0); summed to their shape after"""
    indices = _saved_indices(ctx)
    if indices is None:
        return _take(grad, ctx.key, np.shape(grad._data[ctx.key]))
    return grad[tuple(slice(None) if i is None else i for i in indices)]


def _index_put_zeros(ctx, grad):
    """index_put's input: g with zeros put at the indices (torch's formula, IndexPutBackward0)"""
    indices = _saved_indices(ctx)
    if indices is None:
        return Place.self_grad(ctx, grad)
    return index_put(grad, indices, zeros_for(ctx.v_shape, grad))


IndexPut = _taking_broadcast_values(
    "IndexPut", Place, "out = x with out[key] = v, v broadcast to out[key]'s shape;  d = (g zeroed at key, g[key] "
    "summed to v's)")
IndexPutAccumulate = _taking_broadcast_values(
    "IndexPutAccumulate", AddAt, "out = x with out[key] += v, v broadcast to out[key]'s shape;  d = (g, g[key] "
    "summed to v's shape)")


class IndexPutImpl(IndexPutAccumulate):
    """_index_put_impl_ with accumulate, the op torch's indexing backward records: zeros with the gradient added at
    the indices (its `_saved_indices` hold None for a whole dim, as the indexing node's)"""
    _grad_fn_name = "IndexPutImplBackward0"


def _index(index, op, vector=True):
    idx = index._data if isinstance(index, Tensor) else np.asarray(index)
    if idx.dtype.kind not in "iu":
        raise IndexError(f"{op}(): Expected a long tensor for index, but got {idx.dtype}")
    if vector and idx.ndim > 1:
        raise IndexError(f"{op}(): Index should have dimension 1 or 0 (got {idx.ndim})")
    return idx.astype(np.int64)


def _dim_key(input, dim, index, op):
    d = normalize_dims(dim, input.ndim, op)[0] if input.ndim else 0
    n = input.shape[d] if input.ndim else 1
    if index.size and (index.min() < -n or index.max() >= n):
        raise IndexError(f"{op}(): index {int(index.max() if index.max() >= n else index.min())} is out of bounds "
                         f"for dimension {d} with size {n}")
    return d, (slice(None),) * d + (index.reshape(-1) % max(n, 1),)


def _same_dtype(input, src, op):
    if input.dtype != src.dtype:
        raise RuntimeError(f"{op}(): self and source expected to have the same dtype, but got (self) {input.dtype} "
                           f"and (source) {src.dtype}; convert one with .to()")


def scatter_add(input, dim, index, src):
    from .index import _along_axis_key
    from .rearrange import _index_array, one_element_index
    d = normalize_dims(dim, input.ndim, "scatter_add")[0] if input.ndim else 0
    given = as_given(index)
    index, src = one_element_index(input, index, src)
    idx = _index_array(index, input, d, "scatter_add")
    _same_dtype(input, src, "scatter_add")
    if any(i > s for i, s in zip(idx.shape, src.shape)):
        raise RuntimeError(f"scatter_add(): Expected index {list(idx.shape)} to be smaller than src "
                           f"{list(src.shape)} apart from dimension {d}")
    src_key = None if tuple(src.shape) == idx.shape else tuple(slice(0, n) for n in idx.shape)
    key = (idx.reshape(-1) % 1,) if input.ndim == 0 else _along_axis_key(idx, d)  # (0-d: its one element)
    return AddAt.apply(input, src, key=key, index=given, dim=dim, src_key=src_key)


def index_copy(input, dim, index, source):
    idx = _index(index, "index_copy")
    d, key = _dim_key(input, dim, idx, "index_copy")
    _same_dtype(input, source, "index_copy")
    if source.ndim == input.ndim and source.ndim and source.shape[d] != idx.size:
        raise IndexError(f"index_copy_(): Number of indices ({idx.size}) should be equal to source.size(dim) "
                         f"({source.shape[d]})")
    want = tuple(input.shape[:d]) + (idx.size,) + tuple(input.shape[d + 1:])
    if tuple(source.shape) != want and source.numel() != int(np.prod(want)):
        raise RuntimeError(f"index_copy_(): Source/destination tensor must have same slice shapes. Destination "
                           f"slice shape: {list(want)}, source shape: {list(source.shape)}")
    return IndexCopy.apply(input, source, key=key, index=as_given(index), dim=dim)


def _first_time(places):
    """for each of the places an op writes (positions in x), whether it is the first write there (in C order): a
    repeated index fills its place once, and the value's gradient counts it once"""
    first = np.zeros(places.size, dtype=bool)
    first[np.unique(places.reshape(-1), return_index=True)[1]] = True
    return first.reshape(places.shape)


def index_fill(input, dim, index, value):
    idx = _index(index, "index_fill")
    d, key = _dim_key(input, dim, idx, "index_fill")
    shape = tuple(input.shape[:d]) + (idx.size,) + tuple(input.shape[d + 1:])  # (not x[key]: idx may be batched)
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value.ndim} dimension(s).")
        fill = None if value.dtype == input.dtype else value.detach().to(input.dtype)._data
        return IndexFillTensor.apply(input, value, key=key, index=as_given(index), dim=dim, fill=fill)
    from .index import fill_scalar  # (torch's checked conversion: uint8 takes -1 as 255, 256 raises)
    src = Tensor._make(np.full(shape, fill_scalar(value, input.dtype, "index_fill"), dtype=input._data.dtype))
    return IndexFill.apply(input, src, key=key, index=as_given(index), dim=dim)


def _indexed_shape(input, key):
    """the shape of input[key]; from the shapes alone for integer indices (which vmap may batch)"""
    if not key or len(key) > input.ndim or any(getattr(k, "dtype", None) is None or k.dtype.kind not in "iu"
                                               for k in key):
        return np.shape(input._data[key])
    for axis, k in enumerate(key):
        n = input.shape[axis]
        if k.size and (k.max() >= n or k.min() < -n):
            raise IndexError(f"index {int(k.max() if k.max() >= n else k.min())} is out of bounds for axis {axis} "
                             f"with size {n}")
    try:
        return np.broadcast_shapes(*(k.shape for k in key)) + tuple(input.shape[len(key):])
    except ValueError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes "
                         + ", ".join(str(list(k.shape)) for k in key)) from None


def index_put(input, indices, values, accumulate=False):
    """x with x[indices] = values (or += with accumulate), values broadcast to x[indices]'s shape inside the op, as
    torch's IndexPutBackward0 takes them. Checked in torch's order: a one-element fill through a single mask (as
    masked_fill_), a uint8 mask's warning, the shapes, then the dtypes, which torch does not convert here."""
    from .index import _check_bounds, _to_np_index, refuse_byte_fill, warn_byte_mask
    from .inplace import _type_name
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"index_put(): argument 'indices' must be tuple of Tensors, not {type(indices).__name__}")
    for k, i in enumerate(indices):
        if not isinstance(i, Tensor):
            raise TypeError(f"index_put(): expected Tensor as element {k} in argument 'indices', but got "
                            f"{type(i).__name__} (give each index as a tensor, e.g. torch.tensor([0, 2]))")
    key = tuple(_to_np_index(i, warn=False) if i.ndim else i._data for i in indices)
    _check_bounds(input, key)
    if not accumulate:
        refuse_byte_fill(indices, values)
    for i in indices:
        warn_byte_mask(i)
    shape = _indexed_shape(input, key)
    fill = not accumulate and len(key) == 1 and key[0].dtype == bool and values._data.size == 1  # (masked_fill_)
    if not fill and not _broadcasts(tuple(values.shape), shape):
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(values.shape)} cannot be broadcast to "
                           f"indexing result of shape {list(shape)} (index_put)")
    if values.dtype != input.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{_type_name(input._data.dtype)} for the destination and {_type_name(values._data.dtype)} "
                           "for the source. (index_put: convert the values with .to(x.dtype))")
    given = tuple(indices) if all(as_given(i) is not None for i in indices) else ()
    return (IndexPutAccumulate if accumulate else IndexPut).apply(input, values, key=key, indices=given)


def _broadcasts(shape, to):
    try:
        return np.broadcast_shapes(shape, to) == to
    except ValueError:
        return False


def put(input, index, source, accumulate=False):
    _same_dtype(input, source, "put")
    idx = _index(index, "put", vector=False)
    n = input.numel()
    if idx.size and (idx.min() < -n or idx.max() >= n):
        raise IndexError(f"put_(): index {int(idx.max())} out of range for tensor of size {list(input.shape)}")
    if idx.size != source.numel():
        raise RuntimeError(f"put_(): Expected source and index to have the same number of elements, but got "
                           f"source.numel() = {source.numel()}, index.numel() = {idx.size}")
    flat = idx.reshape(-1) % max(n, 1)
    key = (flat,) if input.ndim == 0 else np.unravel_index(flat, tuple(input.shape))  # (0-d: its one element)
    return (PutAccumulate if accumulate else Put).apply(input, source, key=key, index=as_given(index))


def select_scatter(input, src, dim, index):
    d = normalize_dims(dim, input.ndim, "select_scatter")[0]
    n = input.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select_scatter(): index {index} out of range for tensor of size {list(input.shape)} at "
                         f"dimension {d}")
    want = tuple(input.shape[:d]) + tuple(input.shape[d + 1:])
    if tuple(src.shape) != want:
        raise RuntimeError(f"select_scatter(): expected src to have a size equal to the slice of self. "
                           f"src size = {list(src.shape)}, "
                           f"slice size = {list(want)}")
    return SelectScatter.apply(input, src, key=(slice(None),) * d + (index % n,),
                               shown=(shown_dim(dim), shown_dim(index)))


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    if input.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor. (slice_scatter)")
    d = normalize_dims(dim, input.ndim, "slice_scatter")[0]
    key = (slice(None),) * d + (slice(start, end, step),)
    want = np.shape(input._data[key])
    if tuple(src.shape) != want:
        raise RuntimeError(f"slice_scatter(): expected src to have a size equal to the slice of self. "
                           f"src size = {list(src.shape)}, "
                           f"slice size = {list(want)}")
    shown = (shown_dim(dim), *(None if v is None else shown_dim(v) for v in (start, end)), int(step))
    return SliceScatter.apply(input, src, key=key, shown=shown)


def _diagonal_key(shape, offset, d1, d2):
    n = min(shape[d1], shape[d2] - offset) if offset >= 0 else min(shape[d1] + offset, shape[d2])
    k = np.arange(max(n, 0))
    key = [slice(None)] * len(shape)
    key[d1], key[d2] = (k, k + offset) if offset >= 0 else (k - offset, k)
    return tuple(key)


class DiagonalScatter(Op):
    """out = x with its diagonal replaced by src;  d = (g with the diagonal zeroed, diagonal of g). `shown`: the
    dims as given, which torch's node (and its backward's) shows"""
    _grad_fn_name = "DiagonalScatterBackward0"
    _saved_values = {"dim1": "dim1", "dim2": "dim2", "offset": "offset"}

    @staticmethod
    def forward(ctx, x, src, offset=0, dim1=0, dim2=1, shown=None):
        ctx.args, ctx.offset = (offset, dim1, dim2), shown_dim(offset)
        ctx.dim1, ctx.dim2 = shown or (dim1, dim2)
        out = x.copy()
        view = np.moveaxis(out, (dim1, dim2), (-2, -1))
        key = _diagonal_key(view.shape, offset, view.ndim - 2, view.ndim - 1)
        view[(Ellipsis,) + key[-2:]] = src
        return out

    @staticmethod
    def backward(ctx, grad):
        from .shape import Diagonal, _share
        shown = (ctx.dim1, ctx.dim2)
        from .._creation import zeros_like
        zero = zeros_like(grad.diagonal(*ctx.args))  # (exact zeros: a NaN gradient there must not stay NaN)
        diagonal = _share(Diagonal.apply(grad, *ctx.args, shown=shown), grad)  # (grad.diagonal, shown as torch's)
        return DiagonalScatter.apply(grad, zero, *ctx.args, shown=shown), diagonal, None, None, None

    @staticmethod
    def jvp(ctx, tx, tsrc, *_):
        return DiagonalScatter.apply(tx, tsrc, *ctx.args, shown=(ctx.dim1, ctx.dim2))


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    d1, d2 = (normalize_dims(d, input.ndim, "diagonal_scatter")[0] for d in (dim1, dim2))
    want = tuple(input.diagonal(offset, d1, d2).shape)
    if tuple(src.shape) != want:
        raise RuntimeError(f"diagonal_scatter(): expected src to have a size equal to the diagonal of self. "
                           "src size = "
                           f"{list(src.shape)}, diagonal size = {list(want)}")
    return DiagonalScatter.apply(input, src, offset, d1, d2, shown=(shown_dim(dim1), shown_dim(dim2)))


class MaskedScatter(Op):
    """out = x with the masked places filled by src's first elements in order;
    d = (g where not masked, g's masked values in src's first places)"""
    _grad_fn_name = "MaskedScatterBackward0"
    _saved_names, _saved_values = ("mask",), {"source_sym_sizes": "src_shape"}

    @staticmethod
    def forward(ctx, x, src, mask=None, given_mask=None):
        ctx.mask, ctx.src_shape = mask, src.shape
        ctx.save_for_backward(mask if given_mask is None else given_mask)
        out = x.copy()
        out[mask] = src.reshape(-1)[:int(mask.sum())]
        return out

    @staticmethod
    def backward(ctx, grad):
        (mask,) = ctx.saved_tensors  # (unpacked as torch's node does: raises once freed, or if the mask changed)
        gx = _zero_at(grad, ctx.mask) if ctx.needs_input_grad[0] else None
        return gx, MaskedScatterBackward.apply(grad, mask, ctx.src_shape) if ctx.needs_input_grad[1] else None

    @staticmethod
    def jvp(ctx, tx, tsrc):
        return MaskedScatter.apply(tx, tsrc, mask=ctx.mask)


class MaskedScatterBackward(Op):
    """masked_scatter's source gradient, an op of its own in torch: g's masked values in the source's first places,
    zeros after, in its shape;  d = zeros with the gradient's first values written at the mask"""
    _grad_fn_name = "MaskedScatterBackwardBackward0"
    _saved_names, _edges = ("mask",), (0,)

    @staticmethod
    def forward(ctx, grad, mask, sizes):
        ctx.grad_shape = grad.shape
        ctx.save_for_backward(mask)
        picked = grad[np.broadcast_to(mask, grad.shape)]
        out = np.zeros(int(np.prod(sizes)), grad.dtype)
        out[:picked.size] = picked
        return out.reshape(sizes)

    @staticmethod
    def backward(ctx, grad):
        (mask,) = ctx.saved_tensors
        return masked_scatter(zeros_for(ctx.grad_shape, grad), mask, grad), None, None

    @staticmethod
    def jvp(ctx, t, _mask, _sizes):
        return MaskedScatterBackward.apply(t, *ctx.inputs[1:])


def masked_scatter(input, mask, source):
    from .index import refuse_byte_mask
    from .inplace import _type_name
    if mask.dtype.name == "uint8":
        warn_at_user_line("masked_scatter_ received a mask with dtype torch.uint8, this behavior is now deprecated,"
                          "please use a mask with dtype torch.bool instead.")
    refuse_byte_mask("masked_scatter_", mask, _type_name(mask._data.dtype))
    _same_dtype(input, source, "masked_scatter")
    try:
        m = np.broadcast_to(mask._data, tuple(input.shape))
    except ValueError:
        raise RuntimeError(f"masked_scatter: the mask of shape {list(mask.shape)} does not broadcast to "
                           f"{list(input.shape)}") from None
    if m.sum() > source.numel():  # (not int(m.sum()): under vmap the examples' counts may differ)
        raise RuntimeError(f"masked_scatter: expected source to have at least {int(m.sum())} elements (one per True "
                           f"in the mask), got {source.numel()}")
    # (m: a C-ordered copy, of vmap's batch too; the node saves the mask as given)
    return MaskedScatter.apply(input, source, mask=m.copy(), given_mask=as_given(mask))


def fill_diagonal(input, fill_value, wrap=False):
    """input with its main diagonal (all dims equal for > 2 dims) set to fill_value."""
    import numbers
    if isinstance(fill_value, Tensor) or not isinstance(fill_value, numbers.Number):
        raise TypeError(f"fill_diagonal_(): argument 'fill_value' (position 1) must be Number, not "
                        f"{type(fill_value).__name__}")
    shape = tuple(input.shape)
    if input.ndim < 2 or (input.ndim > 2 and len(set(shape)) != 1):
        raise RuntimeError("all dimensions of input must be of equal length" if input.ndim > 2 else
                           f"dimensions must larger than 1 (fill_diagonal_ got a {input.ndim}-D tensor)")
    strides = np.cumprod((1,) + shape[:0:-1])[::-1]
    step = int(strides.sum())
    end = input.numel() if input.ndim > 2 or wrap else min(shape[0], shape[1]) * shape[1]
    flat = np.arange(0, end, step)
    if input.ndim == 2 and not wrap:
        flat = flat[:min(shape)]
    key = np.unravel_index(flat, shape)
    src = Tensor._make(np.full(flat.shape, fill_value, dtype=input._data.dtype))
    return Put.apply(input, src, key=key)
