"""Ops that move or place elements: roll, rot90, trace, scatter, index_add, nansum."""
import numpy as np

from .._dtype import from_numpy_dtype, to_dtype
from .._tensor import Tensor
from .._user_line import warn_once
from ._checks import need_grad_dtype
from ._kernels import _NAMES
from ._layout import like_torch
from ._op import NoDerivative, Op, dim_passed_on, normalize_dims, shown_dim, shown_dims, zeros_for
from .index import _along_axis_key, one_element
from ._sum_order import nansum_like_torch


def _dims(dims, ndim, op):
    return normalize_dims(dims, ndim, op) if dims is not None else None


class Roll(Op):
    """roll moves elements; d roll(x, s) = roll(g, -s). torch's node shows the shifts and (`given_dims`) the dims as
    given, () for none"""
    _grad_fn_name = "RollBackward0"
    _saved_values = {"dims": "shown_dims", "shifts": "shown_shifts"}

    @staticmethod
    def forward(ctx, x, shifts=(), dims=None, given_dims=None):
        ctx.shifts, ctx.dims = shifts, dims
        ctx.shown_shifts, ctx.shown_dims = shown_dims(shifts), shown_dims(dims or () if given_dims is None else given_dims)
        if dims is None:  # the flattened tensor is rolled, then takes x's shape again
            return np.roll(x.reshape(-1), shifts).reshape(x.shape)
        return np.ascontiguousarray(np.roll(x, shifts, axis=dims))  # (torch's result is laid out in C order)

    @staticmethod
    def backward(ctx, grad):
        return Roll.apply(grad, shifts=tuple(-s for s in ctx.shifts), dims=ctx.dims, given_dims=ctx.shown_dims)

    @staticmethod
    def jvp(ctx, t):
        return Roll.apply(t, shifts=ctx.shifts, dims=ctx.dims, given_dims=ctx.shown_dims)


def roll(input, shifts, dims=None):
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)  # (as given: torch's node shows them)
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"roll(): with dims=None, shifts must be one number (got {list(shifts)}); pass dims "
                               "to roll several dimensions")
        return Roll.apply(input, shifts=shifts, dims=None)
    dims = given = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"roll(): shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    for d in dims:
        normalize_dims(d, input.ndim, "roll")
        if not input.ndim:  # (torch refuses any dim of a 0-d tensor here, unlike most ops)
            raise IndexError(f"roll(): Dimension specified as {d} but tensor has no dimensions; roll a 0-d tensor "
                             "with dims=None")
    dims = tuple(d % max(input.ndim, 1) for d in dims)
    return Roll.apply(input, shifts=shifts, dims=dims, given_dims=given)


class Rot90(Op):
    """rot90 is a permutation of the elements; d rot90(x, k) = rot90(g, -k). `given`: (k, dims) as given, which
    torch's node shows (its backward's with -k)"""
    _grad_fn_name = "Rot90Backward0"
    _saved_values = {"dims": "shown_dims", "k": "shown_k"}

    @staticmethod
    def forward(ctx, x, k=1, dims=(0, 1), given=None):
        ctx.k, ctx.dims, ctx.given = k, dims, given or (k, dims)
        ctx.shown_k, ctx.shown_dims = shown_dim(ctx.given[0]), shown_dims(ctx.given[1])
        k, (a, b) = k % 4, dims
        if k == 0:  # torch's steps, for its layout: a contiguous clone; else a flip (a copy, laid out as x), then
            return np.array(x, order="C")  # for k = 1 or 3 that copy transposed (a view of it)
        flipped = like_torch(np.flip(x, (a, b) if k == 2 else b if k == 1 else a).copy(order="C"), x)
        return flipped if k == 2 else np.swapaxes(flipped, a, b)

    @staticmethod
    def backward(ctx, grad):
        k, dims = ctx.given
        return Rot90.apply(grad, k=-ctx.k, dims=ctx.dims, given=(-k, dims))

    @staticmethod
    def jvp(ctx, t):
        return Rot90.apply(t, k=ctx.k, dims=ctx.dims, given=ctx.given)


def rot90(input, k=1, dims=(0, 1)):
    dims = tuple(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    a, b = (d % input.ndim for d in dims)
    if a == b:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}")
    return Rot90.apply(input, k=k % 4, dims=(a, b), given=(k, dims))


class Trace(Op):
    """tr(X) = sum_i X_ii;  d tr(X) = I"""
    _grad_fn_name = "TraceBackward0"
    _saved_values = {"self_sym_sizes": "shape"}

    @staticmethod
    def forward(ctx, x):
        ctx.shape = x.shape
        return np.asarray(np.trace(x))

    @staticmethod
    def backward(ctx, grad):
        """torch's trace_backward: zeros in a row with grad index_fill'ed at the diagonal's places (every (cols + 1)-th,
        min(rows, cols) of them), viewed as X (0 off the diagonal even for a NaN grad)"""
        from .index_more import index_fill
        rows, cols = ctx.shape
        places = Tensor._make(np.arange(min(rows, cols), dtype=np.int64) * (cols + 1))
        return index_fill(zeros_for(rows * cols, grad), 0, places, grad).view(rows, cols)

    @staticmethod
    def jvp(ctx, t):
        return Trace.apply(t)


def trace(input):
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim} (shape "
                           f"{list(input.shape)}); use torch.diagonal(x, dim1=-2, dim2=-1).sum(-1) for batches")
    if input._data.dtype == np.bool_:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'; convert with .long() first")
    return Trace.apply(input)


# ---- writing at indices -----------------------------------------------------------------------------
def as_given(t):
    """t, the index (or mask) tensor the user gave, for the op's node to save as torch's does; None for a list or
    vmap's batched tensor (the op saves the array it computes with then)."""
    return t if isinstance(t, Tensor) and type(t._data) is np.ndarray else None


def keep_index(ctx, index, given_index, dim, given_dim):
    """Save the index as torch's node does (the tensor the user gave; else, in vmap's batch or a backward formula's
    op, the array the op computes with), and show the dim as given (torch's `_saved_dim`: a negative one as an
    unsigned 64-bit int)."""
    ctx.given_dim = shown_dim(dim if given_dim is None else given_dim)
    ctx.save_for_backward(index if given_index is None else given_index)


class Scatter(Op):
    """out = x with out[.., index, ..] = src along dim;  d/dx = g with the written places zeroed, d/dsrc = gather(g)"""
    _grad_fn_name = "ScatterBackward0"
    _saved_names, _saved_values = ("index",), {"dim": "given_dim"}

    @staticmethod
    def forward(ctx, x, src, dim=0, index=None, given_index=None, given_dim=None):
        ctx.dim, ctx.index, ctx.src_shape = dim, index, src.shape
        keep_index(ctx, index, given_index, dim, given_dim)
        out = x.copy()
        part = src[tuple(slice(0, s) for s in index.shape)]  # (only index's extent)
        one_element(out)[_along_axis_key(index, dim)] = part
        return out

    @staticmethod
    def backward(ctx, grad):
        ctx.saved_tensors  # noqa: B018  (unpacked as torch's node does: raises once freed, or if the index changed)
        gx = ScatterValue.apply(grad, dim=ctx.dim, index=ctx.index, value=0) if ctx.needs_input_grad[0] else None
        gsrc = None
        if ctx.needs_input_grad[1]:
            from .index import gather
            gsrc = gather(grad, ctx.dim, Tensor._make(ctx.index))
            if tuple(gsrc.shape) != ctx.src_shape:  # as torch: src's gradient must have src's shape
                raise RuntimeError(f"Function ScatterBackward0 returned an invalid gradient at index 1 - got "
                                   f"{list(gsrc.shape)} but expected shape compatible with {list(ctx.src_shape)} "
                                   "(scatter's src must have the index's shape to be differentiated)")
        return gx, gsrc

    @staticmethod
    def jvp(ctx, tx, tsrc):
        return Scatter.apply(tx, tsrc, dim=ctx.dim, index=ctx.index)


class ScatterValue(Op):
    """out = x with out[.., index, ..] = value along dim;  d/dx = g with the written places zeroed"""
    _grad_fn_name = "ScatterBackward1"
    _saved_names, _saved_values = ("index",), {"dim": "given_dim"}

    @staticmethod
    def forward(ctx, x, dim=0, index=None, value=0, given_index=None, given_dim=None):
        ctx.dim, ctx.index = dim, index
        keep_index(ctx, index, given_index, dim, given_dim)
        out = x.copy()
        one_element(out)[_along_axis_key(index, dim)] = np.asarray(value, dtype=x.dtype)
        return out

    @staticmethod
    def backward(ctx, grad):
        ctx.saved_tensors  # noqa: B018
        return ScatterValue.apply(grad, dim=ctx.dim, index=ctx.index, value=0)

    @staticmethod
    def jvp(ctx, t):
        return ScatterValue.apply(t, dim=ctx.dim, index=ctx.index, value=0)


def one_element_index(input, index, src=None):
    """(index, src) with a 0-d index along a 1-d input as one element (and a 0-d src with it), as torch counts
    dims for scatter and gather: the transforms tutorial's one-hot `zeros(10).scatter_(0, tensor(y), value=1)`."""
    if isinstance(index, Tensor) and index.ndim == 0 and isinstance(input, Tensor) and input.ndim == 1:
        index = index.reshape(1)
        if isinstance(src, Tensor) and src.ndim == 0:
            src = src.reshape(1)
    return index, src


def _index_array(index, input, dim, op):
    idx = index._data if isinstance(index, Tensor) else np.asarray(index)
    if idx.dtype not in (np.int32, np.int64):
        raise RuntimeError(f"{op}(): Expected dtype int32/int64 for index (got {idx.dtype}); pass a LongTensor of "
                           "positions")
    if idx.ndim != input.ndim and not (idx.ndim == 1 and input.ndim == 0):
        raise RuntimeError(f"{op}(): Index tensor must have the same number of dimensions as self tensor (index "
                           f"{list(idx.shape)}, self {list(input.shape)})")
    n = input.shape[dim] if input.ndim else 1
    outside = (idx < -n) | (idx >= n)
    if outside.any():  # (torch names the first, in order)
        raise RuntimeError(f"{op}(): index {int(idx.reshape(-1)[outside.reshape(-1).argmax()])} is out of bounds for "
                           f"dimension {dim} with size {n}")
    return (idx % n if idx.size else idx).astype(np.int64, copy=False)  # (int32 taken: gather wants int64)


def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    d = normalize_dims(dim, input.ndim, "scatter")[0]  # (0-d: dim 0 or -1)
    given = dict(given_index=as_given(index), given_dim=dim)
    index, src = one_element_index(input, index, src)
    idx = _index_array(index, input, d, "scatter")
    if reduce is not None:
        return _scatter_legacy_reduce(input, d, idx, value if value is not None else src, reduce)
    if isinstance(src, Tensor):
        if src.dtype != input.dtype:
            raise RuntimeError(f"scatter(): Expected self.dtype to be equal to src.dtype (got {input.dtype} and "
                               f"{src.dtype}); convert src with .to({input.dtype})")
        return Scatter.apply(input, src, dim=d, index=idx, **given)
    fill = value if value is not None else src
    return ScatterValue.apply(input, dim=d, index=idx, value=fill, **given)


class ScatterLegacyReduce(NoDerivative):
    """scatter(..., reduce='add' | 'multiply'), torch's older form of scatter_reduce: src (or a number) added into or
    multiplied onto the places index names, in order. It has no derivative (its node is NotImplemented)."""
    _grad_fn_name = "torch::autograd::NotImplemented"

    @staticmethod
    def forward(ctx, x, src, dim=0, index=None, reduce="add"):
        out = x.copy()
        part = np.broadcast_to(src, index.shape) if np.ndim(src) == 0 else src[tuple(slice(0, s) for s in index.shape)]
        (np.add if reduce == "add" else np.multiply).at(one_element(out), _along_axis_key(index, dim), part)
        return out

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("derivative for aten::scatter_ is not implemented (scatter's reduce= has none; "
                           "scatter_reduce's 'sum' and 'prod' do)")


def _scatter_legacy_reduce(input, dim, idx, src, reduce):
    if reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    if isinstance(src, Tensor):
        if src.dtype != input.dtype:
            raise RuntimeError(f"scatter(): Expected self.dtype to be equal to src.dtype (got {input.dtype} and "
                               f"{src.dtype}); convert src with .to({input.dtype})")
        warn_once("scatter reduce", "The reduce argument of torch.scatter with Tensor src is deprecated and will be "
                  "removed in a future PyTorch release. Use torch.scatter_reduce instead for more reduction options.")
    else:
        src = np.asarray(src, input._data.dtype)
    return ScatterLegacyReduce.apply(input, src, dim=dim, index=idx, reduce=reduce)


class IndexAdd(Op):
    """out = x; out[.., index[i], ..] += alpha src[.., i, ..];  d/dx = g, d/dsrc = alpha index_select(g)"""
    _grad_fn_name = "IndexAddBackward0"
    _saved_names = ("index", "source")
    _saved_values = {"alpha": "alpha", "dim": "given_dim", "source_dim": "source_dim"}

    @staticmethod
    def forward(ctx, x, src, dim=0, index=None, alpha=1, given_index=None, given_dim=None):
        ctx.dim, ctx.index, ctx.alpha, ctx.source_dim, ctx.src_shape = dim, index, alpha, src.ndim, src.shape
        ctx.given_dim = shown_dim(dim if given_dim is None else given_dim)
        # (torch keeps both for the source's gradient only, else leaves them undefined)
        ctx.save_for_backward(*(index if given_index is None else given_index, src) if ctx.needs_input_grad[1] else
                              (None, None))
        out = np.moveaxis(x.copy().reshape(x.shape or (1,)), dim, 0)  # (a 0-d x and source: as one element each)
        np.add.at(out, np.reshape(index, -1), np.moveaxis(src.reshape(src.shape or (1,)), dim, 0) * alpha)
        return np.ascontiguousarray(np.moveaxis(out, 0, dim)).reshape(x.shape)

    @staticmethod
    def backward(ctx, grad):
        from .index import index_select
        from .scalar_overloads import mul_scalar
        gsrc = None
        if ctx.needs_input_grad[1]:  # (torch's formula: g.index_select(dim, index).expand_as(source), times alpha)
            index = ctx.saved_tensors[0]  # (unpacked as torch's node does: an index or source changed in place raises)
            gsrc = index_select(grad, dim_passed_on(ctx.dim, ctx.given_dim, grad.ndim), index)
            gsrc = gsrc.expand(ctx.src_shape) if gsrc.ndim == ctx.source_dim else gsrc.reshape(ctx.src_shape)
            gsrc = gsrc if ctx.alpha == 1 else mul_scalar(gsrc, ctx.alpha)
        return grad, gsrc

    @staticmethod
    def jvp(ctx, tx, tsrc):
        return IndexAdd.apply(tx, tsrc, dim=ctx.dim, index=ctx.index, alpha=ctx.alpha)


def index_add(input, dim, index, source, *, alpha=1):
    if input.dtype != source.dtype:
        raise RuntimeError(f"index_add_(): self ({_NAMES[input._data.dtype.name]}) and source "
                           f"({_NAMES[source._data.dtype.name]}) must have the same scalar type (convert one with "
                           ".to())")
    given = dict(given_index=as_given(index), given_dim=dim)
    dim = normalize_dims(dim, input.ndim, "index_add")[0]  # (0-d: dim 0 or -1)
    idx = index._data if isinstance(index, Tensor) else np.asarray(index)
    if (idx.ndim != 1 and not idx.ndim == input.ndim == 0) or idx.dtype.kind not in "iu":  # (0-d: one place)
        raise IndexError(f"index_add_(): Index is supposed to be a vector of integers (got shape {list(idx.shape)}, "
                         f"dtype {idx.dtype})")
    if input.ndim == 0 and source.ndim:
        raise RuntimeError(f"index_add_(): source tensor shape must match self tensor shape, excluding the specified "
                           f"dimension. Got self.shape = [] source.shape = {list(source.shape)}: give a 0-d source")
    if source.ndim and source.shape[dim] != idx.shape[0]:
        raise RuntimeError(f"index_add_(): Number of indices ({idx.shape[0]}) should be equal to source.size(dim) "
                           f"({source.shape[dim]})")
    size = input.shape[dim] if input.ndim else 1
    outside = (idx < 0) | (idx >= size)  # (torch takes no negative index here)
    if outside.any() and input.ndim <= 1:  # (torch's kernel for one dim, and its kernel for more, say it apart)
        raise IndexError(f"index out of range in self (index_add_: dimension {dim} has size {size}; indices go from "
                         "0, not from the end)")
    if outside.any():
        raise RuntimeError(f"index {idx.reshape(-1)[outside.reshape(-1).argmax()]} is out of bounds for dimension {dim} "
                           f"with size {size} (index_add_ counts indices from 0, not from the end)")
    return IndexAdd.apply(input, source, dim=dim, index=idx, alpha=alpha, **given)


class Nansum(Op):
    """sum ignoring NaNs;  d = 1 where x is not NaN, else 0. dtype= casts inside the op, as torch's (its node
    links to the input itself and saves it uncast); backward casts the gradient back first. `given_dim`: the dims
    as given (None, or a tuple, as torch's node shows them)"""
    _grad_fn_name = "NansumBackward0"
    _saved_names, _saved_values = ("self",), {"dim": "given_dim", "keepdim": "keepdim"}

    @staticmethod
    def forward(ctx, x, dims=None, keepdim=False, dtype=None, given_dim=None):
        ctx.dims, ctx.keepdim, ctx.shape, ctx.dtype, ctx.given_dim = dims, keepdim, x.shape, dtype, given_dim
        ctx.save_for_backward(x)
        if dtype is not None:
            from .misc import _cast_in_op
            x = _cast_in_op(x, dtype)
        return np.asarray(nansum_like_torch(x, dims, keepdim))  # (torch's order of additions)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        if ctx.dtype is not None:  # (torch: grad.to(self's dtype) first)
            grad = grad.to(x.dtype)
        if ctx.dims is not None and not ctx.keepdim:
            grad = grad.reshape([1 if i in ctx.dims else s for i, s in enumerate(ctx.shape)])
        return grad.expand(ctx.shape) * ~x.isnan()  # (a bool mask, as torch's product saves it)

    @staticmethod
    def jvp(ctx, t):
        x = ctx.inputs[0]
        from .reduce import sum as sum_
        out = sum_(t * (~x.isnan()).to(t.dtype), ctx.dims, ctx.keepdim)
        return out if ctx.dtype is None else out.to(from_numpy_dtype(ctx.dtype))


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    need_grad_dtype(input, dtype, "nansum")
    x = input
    every = dim is None or isinstance(dim, (tuple, list)) and len(dim) == 0
    dims = None if every else normalize_dims(dim, x.ndim, "nansum", ranges_first=False)  # (torch's order, as var's)
    given = None if dim is None else shown_dims(dim) if isinstance(dim, (tuple, list)) else (shown_dim(dim),)
    if dtype is None or to_dtype(dtype).np == x._data.dtype:
        return Nansum.apply(x, dims=dims if x.ndim else None, keepdim=keepdim, given_dim=given)
    return Nansum.apply(x, dims=dims if x.ndim else None, keepdim=keepdim, dtype=to_dtype(dtype).np, given_dim=given)
