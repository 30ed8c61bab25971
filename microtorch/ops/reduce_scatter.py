"""scatter_reduce and index_reduce: src's values reduced (sum, prod, mean, amax, amin) into the places of x that
an index names, together with x's own value there (include_self=True) or instead of it.

Forward is numpy's unbuffered `ufunc.at`. Backward follows torch's formulas: prod divides the result by each
factor, with zeros handled apart (a single zero's gradient is the product of the others); amax and amin share
the gradient evenly among the values equal to the result; mean divides by how many were averaged. jvp is
torch's, except for prod, where torch 2.13's tangent is zero: here it is the derivative (backward's partials
with a gradient of ones)."""
import numpy as np

from .._tensor import Tensor
from .._user_line import warn_once
from ._op import Op, normalize_dims, shown_dim
from .elementwise import where
from .rearrange import as_given

_UFUNC = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum}


def _places(index, dim):
    """the advanced index into x of every index entry: its own position, with index's value along dim"""
    grid = list(np.indices(index.shape, sparse=True))
    grid[dim] = index
    return tuple(grid)


def _identity(reduce, dtype):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    big = np.inf if dtype.kind in "fc" else np.iinfo(dtype).max
    return -big if reduce == "amax" else big


def _counts(shape, index, dim, include_self):
    """how many values each place of x averages over (1 where there are none, to divide by)"""
    n = np.full(shape, 1 if include_self else 0, dtype=np.int64)
    np.add.at(n, _places(index, dim), 1)
    return np.maximum(n, 1)


def _scatter_reduce_np(x, src, dim, index, reduce, include_self):
    out = x.copy()
    places = _places(index, dim)
    src = src[tuple(slice(0, n) for n in index.shape)]
    if not include_self:
        out[places] = _identity(reduce, x.dtype)
    _UFUNC[reduce].at(out, places, src)
    if reduce == "mean":
        n = _counts(x.shape, index, dim, include_self)
        out = out // n if out.dtype.kind in "iub" else (out / n).astype(out.dtype)
    return out


def _partials(grad, x, src, out, ctx):
    """(gx, gsrc) of torch's scatter_reduce_backward for a gradient `grad` of the result"""
    from .index import gather
    dim, index, reduce = ctx.dim, ctx.index, ctx.reduce
    idx = Tensor._make(index)
    if reduce == "sum":
        return grad, gather(grad, dim, idx)
    if reduce == "mean":
        n = Tensor._make(_counts(x.shape, index, dim, ctx.include_self).astype(x._data.dtype))
        return grad / n, gather(grad / n, dim, idx)
    if reduce == "prod":
        return _prod_partials(grad, x, src, out, ctx, idx)
    value = gather(out, dim, idx)
    self_hit = Tensor._make((x._data == out._data).astype(x._data.dtype))
    src_hit = Tensor._make((src._data == value._data).astype(x._data.dtype))
    share = grad / Tensor._make(_scatter_add_np(self_hit._data, src_hit._data, dim, index))
    return self_hit * share, src_hit * gather(share, dim, idx)


def _scatter_add_np(x, src, dim, index):
    out = x.copy()
    np.add.at(out, _places(index, dim), src)
    return out


def _prod_partials(grad, x, src, out, ctx, idx):
    """the product's partials: result / factor, except where a factor is 0 (then the product of the others)"""
    from .index import gather
    dim, index = ctx.dim, ctx.index
    self_zero = Tensor._make(x._data == 0)
    masked_self = x.masked_fill(self_zero, 1)
    kw = dict(dim=dim, index=index, reduce="prod", include_self=ctx.include_self)
    gx = grad * ScatterReduce.apply(masked_self, src, **kw) / masked_self
    src_zero = src._data == 0
    zeros_there = _scatter_add_np(np.zeros(x.shape), src_zero.astype(float), dim, index)
    single = Tensor._make(src_zero & (np.take_along_axis(zeros_there, index, dim) == 1))
    others = ScatterReduce.apply(x, src.masked_fill(single, 1), **kw)
    gsrc = where(single, gather(grad * others, dim, idx),
                 gather(grad * out, dim, idx) / src.masked_fill(Tensor._make(src_zero), 1))
    if (zeros_there > 1).any():  # this formula's own derivative would be wrong there: refused, as torch does
        gsrc = NoDoubleBackward.apply(gsrc)
    return gx, gsrc


class NoDoubleBackward(Op):
    """the gradient as it is; differentiating it again raises torch's error"""
    _grad_fn_name = "Error"

    @staticmethod
    def forward(ctx, g):
        return g.copy()

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("scatter_reduce(): Double backward is unsupported for src when >1 zeros in src are "
                           "scattered to the same position in self")

    @staticmethod
    def jvp(ctx, t):
        return t


class ScatterReduce(Op):
    """out = x with src reduced into out[.., index, ..] along dim;  the partials of the reduction"""
    _grad_fn_name = "ScatterReduceBackward0"
    _saved_names = ("self", "src", "index", "result")
    _saved_values = {"dim": "given_dim", "reduce": "reduce", "include_self": "include_self"}

    @staticmethod
    def forward(ctx, x, src, dim=0, index=None, reduce="sum", include_self=True, given_index=None, given_dim=None,
                given_src=None):
        """given_*: the index, dim and (0-d, made one element) src as the user gave them, which torch's node keeps"""
        ctx.dim, ctx.index, ctx.reduce, ctx.include_self = dim, index, reduce, include_self
        ctx.given_dim = shown_dim(dim if given_dim is None else given_dim)
        out = _scatter_reduce_np(x, src, dim, index, reduce, include_self)
        ctx.save_for_backward(x, src if given_src is None else given_src, index if given_index is None else given_index,
                              out)
        return out

    @staticmethod
    def backward(ctx, grad):
        from .rearrange import ScatterValue
        x, src, _, out = ctx.saved_tensors
        if src._data.shape != ctx.index.shape:  # (the 0-d src the user gave, one element here)
            src = src.reshape(ctx.index.shape)
        gx, gsrc = _partials(grad, x, src, out, ctx)
        if not ctx.include_self:  # x's values there were replaced
            gx = ScatterValue.apply(gx, dim=ctx.dim, index=ctx.index, value=0)
        return gx, gsrc

    @staticmethod
    def jvp(ctx, tx, tsrc):
        kw = dict(dim=ctx.dim, index=ctx.index, include_self=ctx.include_self)
        if ctx.reduce in ("sum", "mean"):  # linear
            return ScatterReduce.apply(tx, tsrc, reduce=ctx.reduce, **kw)
        x, src = ctx.inputs[:2]
        if ctx.reduce == "prod":
            return _prod_tangent(tx, tsrc, x, src, ctx)
        # torch's rule: the tangents of the values equal to the result, averaged
        out = ctx.output._data
        self_hit = Tensor._make((x._data == out).astype(out.dtype))
        src_hit = Tensor._make((src._data == np.take_along_axis(out, ctx.index, ctx.dim)).astype(out.dtype))
        share = ScatterReduce.apply(self_hit, src_hit, reduce="sum", **kw)
        return ScatterReduce.apply(tx * self_hit, tsrc * src_hit, reduce="sum", **kw) / share


def _prod_tangent(tx, tsrc, x, src, ctx):
    """d prod = sum over the factors of (the factor's tangent x the product of the others), from backward's
    partials. (torch 2.13 gives a zero tangent here, which is not the derivative: this differs on purpose.)"""
    from .index_more import scatter_add
    from .rearrange import ScatterValue
    ones = ctx.output * 0 + 1
    dx, dsrc = _partials(ones, x, src, ctx.output, ctx)
    if not ctx.include_self:
        dx = ScatterValue.apply(dx, dim=ctx.dim, index=ctx.index, value=0)
    return tx * dx + scatter_add(ctx.output * 0, ctx.dim, Tensor._make(ctx.index), tsrc * dsrc)


class IndexReduce(ScatterReduce):
    """index_reduce: scatter_reduce with the index of each slice of source along dim"""
    _grad_fn_name = "IndexReduceBackward0"
    _saved_names = ("self", "source", "index", "result")

    @staticmethod
    def jvp(ctx, tx, tsrc):
        raise NotImplementedError("Trying to use forward AD with index_reduce that does not support it because it "
                                  "has not been implemented yet (as in torch); use reverse mode, or scatter_reduce")


_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """torch.scatter_reduce: src[i][j] reduced into out[index[i][j]][j] (dim 0), and so on for other dims."""
    from .rearrange import _index_array, one_element_index
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)  # (torch takes scatter's older names too)
    if reduce not in _REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    d = normalize_dims(dim, input.ndim, "scatter_reduce")[0] if input.ndim else 0
    given = dict(given_index=as_given(index), given_dim=dim, given_src=as_given(src) if getattr(src, "ndim", 1) == 0
                 else None)
    index, src = one_element_index(input, index, src)
    idx = _index_array(index, input, d, "scatter_reduce")
    _check_src(input, src, idx, d, "scatter_reduce")
    if tuple(src.shape) != idx.shape:
        src = src[tuple(slice(0, n) for n in idx.shape)]
    return ScatterReduce.apply(input, src, dim=d, index=idx, reduce=reduce, include_self=bool(include_self), **given)


def _check_src(input, src, idx, d, op):
    if not isinstance(src, Tensor):
        raise TypeError(f"{op}(): argument 'src' must be Tensor, not {type(src).__name__}")
    if src.dtype != input.dtype:
        raise RuntimeError(f"{op}(): Expected self.dtype to be equal to src.dtype ({input.dtype} and {src.dtype}); "
                           "convert src with .to(input.dtype)")
    if src.ndim != idx.ndim or any(i > s for i, s in zip(idx.shape, src.shape)) or \
            any(i > s for k, (i, s) in enumerate(zip(idx.shape, input.shape)) if k != d):
        raise RuntimeError(f"{op}(): Expected index {list(idx.shape)} to be smaller than self {list(input.shape)} "
                           f"apart from dimension {d} and to be smaller size than src {list(src.shape)}")


def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """torch.index_reduce: source's slice i along dim reduced into out's slice index[i] (prod, mean, amax, amin)."""
    warn_once("index_reduce", "index_reduce() is in beta and the API may change at any time (as torch warns).")
    if reduce not in _REDUCTIONS[1:]:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    d = normalize_dims(dim, input.ndim, "index_reduce")[0] if input.ndim else 0
    idx = index._data if isinstance(index, Tensor) else np.asarray(index)
    if idx.ndim > 1 or idx.dtype.kind not in "iu":
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector of integers (got shape "
                         f"{list(idx.shape)}, dtype {idx.dtype})")
    if not isinstance(source, Tensor):
        raise TypeError(f"index_reduce(): argument 'source' must be Tensor, not {type(source).__name__}")
    if source.ndim != max(input.ndim, 1) or (source.shape[d] if source.ndim else 1) != idx.size:
        raise RuntimeError(f"index_reduce_(): Number of indices ({idx.size}) should be equal to source.size(dim) "
                           f"({source.shape[d] if source.ndim > d else '?'}), for dim: {d}, and source should have "
                           "self's number of dimensions")
    if source.dtype != input.dtype:
        raise RuntimeError(f"index_reduce_(): self ({input.dtype}) and source ({source.dtype}) must have the same "
                           "scalar type")
    n = input.shape[d] if input.ndim else 1
    if idx.size and (idx.min() < -n or idx.max() >= n):
        raise IndexError(f"index_reduce(): index out of range in self: an index is outside [{-n}, {n - 1}]")
    shape = [1] * source.ndim
    shape[d] = idx.size
    full = np.ascontiguousarray(np.broadcast_to((idx % n).reshape(shape), tuple(source.shape)).astype(np.int64))
    return IndexReduce.apply(input, source, dim=d, index=full, reduce=reduce, include_self=bool(include_self),
                             given_index=idx if as_given(index) is None else index, given_dim=dim)
