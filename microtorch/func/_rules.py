"""Batching rules: how each op runs once on a whole batch (see _batching.py).

A rule gets the op's arguments as the op got them (batched tensors among them) and returns the
batched result. It unwraps the arguments batched at `level` into their values (the batch in
dim 0), calls the op on those, with dims shifted by one where the op takes dims, and wraps the
result. Ops with no rule here run once per example.
"""
import numpy as np

from .._tensor import Tensor
from ..ops import elementwise as ew, index as ix, linalg as la, misc, nn, reduce as rd, rounding as rn, shape as sh
from ..ops import triangle
from ..ops.trilinear import BILINEAR, Trilinear
from ._batching import (BatchedArray, _batch_size, _NoRule, _shift, expand_batch, movedim, physical_key,
                        register, unwrap, wrap, wrap_outputs)


def _pad(v, k, n):
    """A batch of k-dim examples seen as n-dim ones (size-1 dims in front, as broadcasting does)."""
    if k >= n:
        return v
    shape = (v.shape[0],) + (1,) * (n - k) + tuple(v.shape[1:])
    return sh.View.apply(v, shape) if isinstance(v, Tensor) else v.reshape(shape)


def _ndim(a):
    if isinstance(a, Tensor):
        return a._data.ndim
    if type(a) is BatchedArray:
        return a.ndim
    return np.ndim(a) if a is not None else 0


def _view_of(out, v, multi=False):
    """A view op's batch is a view of its input's batch (so that in-place writes reach the base)."""
    return sh._share(out, v, multi)


def _materialized(a, level, B):
    v, batched = unwrap(a, level)
    return v if batched else expand_batch(v, B)


# ---- elementwise: line the examples up for broadcasting -------------------------------------------
_ELEMENTWISE = [ew.Add, ew.Sub, ew.Rsub, ew.Mul, ew.Div, ew.Neg, ew.PowScalar, ew.Pow, ew.RPow, ew.Sgn, ew.Relu,
                ew.LeakyRelu, ew.Elu, ew.Gelu, ew.Softplus, ew.Clamp, ew.ClampTensor, ew.Maximum, ew.Where,
                ew.Conj, ew.ViewAsReal, ew.ViewAsComplex, ew.Angle, ew.Exp, ew.Log, ew.Log2, ew.Log10, ew.Log1p, ew.Expm1,
                ew.Sqrt, ew.Rsqrt, ew.Sin, ew.Cos, ew.Tan, ew.Tanh, ew.Sigmoid, ew.Reciprocal, ew.Abs, ew.Asin,
                ew.Acos, ew.Atan, ew.Sinh, ew.Cosh, misc.ToCopy, sh.Clone]
_ELEMENTWISE += [getattr(ew, name) for name in ("MulScalar", "DivScalar", "Erf", "GradTimesLocal", "TanhBackward",
                                                 "SigmoidBackward", "LeakyReluBackward", "GeluBackward",
                                                 "EluBackward", "SoftplusBackward")
                 if hasattr(ew, name)]
_ELEMENTWISE += [getattr(nn, name) for name in ("NllLossBackward",) if hasattr(nn, name)]
_ELEMENTWISE += [rn.Floor, rn.Ceil, rn.Trunc, rn.Round, rn.RoundDecimals, rn.Fmod, rn.FmodTensor, rn.Remainder,
                 rn.RemainderTensor, rn.DivRounded, rn.FloorDivide, rn.RemainderOfNumber]
_ELEMENTWISE += [triangle.Tril, triangle.Triu]  # (they work on the last two dims: the batch in front is one more)


@register(*_ELEMENTWISE)
def elementwise(cls, args, kwargs, level):
    return wrap_outputs(cls.apply(*lined_up(args, level), **kwargs), level)


def lined_up(args, level):
    """The arguments' arrays with each batched one padded to the others' rank, so that they broadcast example by
    example"""
    n = max(_ndim(a) for a in args)
    phys = []
    for a in args:
        v, batched = unwrap(a, level)
        phys.append(_pad(v, _ndim(a), n) if batched else v)
    return phys


@register(ix.MaskedFill)
def masked_fill(cls, args, kwargs, level):
    if unwrap(args[2], level)[1]:
        raise _NoRule  # a batched fill value: its gradient would be summed over the batch
    return elementwise(cls, args, kwargs, level)


@register(rd.Sum, rd.Mean, rd.Var, rd.Std, rd.VarMean, rd.StdMean, rd.AmaxOp, rd.Norm, sh.Flip)
def reduce_dims(cls, args, kwargs, level):
    """ops with a `dims` keyword (None: all dims)"""
    v, _ = unwrap(args[0], level)
    out = cls.apply(v, *args[1:], **dict(kwargs, dims=_shift(kwargs.get("dims"), _ndim(args[0]))))
    return wrap_outputs(out, level)  # (var_mean, std_mean: two)


@register(rd.Prod)
def prod(cls, args, kwargs, level):
    v, _ = unwrap(args[0], level)
    if kwargs.get("dim") is None:
        return wrap(rd.ProdDim.apply(sh.View.apply(v, (v.shape[0], -1)), dim=1), level)
    return wrap(cls.apply(v, **dict(kwargs, dim=kwargs["dim"] + 1)), level)


@register(rd.MaxDim, rd.Logsumexp, misc.Cumsum, sh.Unbind)
def dim_arg(cls, args, kwargs, level):
    """ops whose second argument is a dim (or a tuple of dims)"""
    v, _ = unwrap(args[0], level)
    if _ndim(args[0]) == 0 and cls in _SCANS:  # (a 0-d example's scan: along one element, its dim added here)
        return wrap(sh.View.apply(cls.apply(sh.View.apply(v, v.shape + (1,)), 1, *args[2:], **kwargs), v.shape),
                    level)
    out = cls.apply(v, _shift(args[1], _ndim(args[0])), *args[2:], **kwargs)
    if issubclass(cls, sh.Unbind):
        out = tuple(_view_of(o, v, multi=True) for o in out)
    return wrap_outputs(out, level)


_SCANS = {misc.Cumsum}  # (cumprod and logcumsumexp join in _rules_api.py)


@register(nn.Softmax, nn.LogSoftmax)
def softmax(cls, args, kwargs, level):
    """(input, dim=): the dim shifted past the batch"""
    v, _ = unwrap(args[0], level)
    return wrap(cls.apply(v, dim=_shift(kwargs["dim"], _ndim(args[0]))), level)


@register(nn.SoftmaxBackwardData, nn.LogSoftmaxBackwardData)
def softmax_backward_data(cls, args, kwargs, level):
    """(grad, output, dim=): the two lined up on the batch, the dim shifted past it"""
    B = _batch_size(args, level)
    g, y = (_materialized(a, level, B) for a in args)
    return wrap(cls.apply(g, y, dim=_shift(kwargs["dim"], _ndim(args[1]))), level)


@register(sh.SplitWithSizes)
def split(cls, args, kwargs, level):
    v, _ = unwrap(args[0], level)
    return wrap_outputs(tuple(_view_of(o, v, multi=True) for o in cls.apply(v, args[1], args[2] + 1)), level)


@register(ix.Select, ix.Slice)
def select(cls, args, kwargs, level):
    v, _ = unwrap(args[0], level)
    rest, kwargs = list(args[1:]), dict(kwargs)
    if rest:
        rest[0] += 1
    else:  # (narrow passes the dim by keyword)
        kwargs["dim"] += 1
    return wrap(_view_of(cls.apply(v, *rest, **kwargs), v), level)


# ---- shape ops ------------------------------------------------------------------------------------
@register(sh.View)
def view(cls, args, kwargs, level):
    v, _ = unwrap(args[0], level)
    return wrap(_view_of(cls.apply(v, (v.shape[0],) + tuple(args[1])), v), level)


@register(sh.Expand)
def expand(cls, args, kwargs, level):
    v, _ = unwrap(args[0], level)
    shape = tuple(args[1])
    return wrap(_view_of(cls.apply(_pad(v, _ndim(args[0]), len(shape)), (v.shape[0],) + shape), v), level)


@register(sh.Squeeze)
def squeeze(cls, args, kwargs, level):
    v, _ = unwrap(args[0], level)
    dims = kwargs.get("dims")
    if dims is None:
        dims = tuple(i for i, s in enumerate(args[0].shape) if s == 1)
    return wrap(_view_of(cls.apply(v, dims=_shift(dims, _ndim(args[0]))), v), level)


@register(sh.Unsqueeze)
def unsqueeze(cls, args, kwargs, level):
    v, _ = unwrap(args[0], level)
    return wrap(_view_of(cls.apply(v, dim=kwargs["dim"] + 1), v), level)


@register(sh.Permute)
def permute(cls, args, kwargs, level):
    v, _ = unwrap(args[0], level)
    return wrap(_view_of(cls.apply(v, dims=(0,) + tuple(d + 1 for d in kwargs["dims"])), v), level)


@register(sh.Transpose)
def transpose(cls, args, kwargs, level):
    v, _ = unwrap(args[0], level)
    # (Transpose, not t(): t's backward is only for matrices)
    return wrap(_view_of(sh.Transpose.apply(v, d0=kwargs["d0"] + 1, d1=kwargs["d1"] + 1), v), level)


@register(sh.Repeat)
def repeat(cls, args, kwargs, level):
    v, _ = unwrap(args[0], level)
    reps = tuple(kwargs["reps"])
    return wrap(cls.apply(_pad(v, _ndim(args[0]), len(reps)), reps=(1,) + reps), level)


@register(sh.SumTo)
def sum_to(cls, args, kwargs, level):
    v, _ = unwrap(args[0], level)
    shape = tuple(args[1])
    lead = _ndim(args[0]) - len(shape)
    if lead > 0:
        v = rd.Sum.apply(v, dims=tuple(range(1, lead + 1)))
    return wrap(cls.apply(v, (v.shape[0],) + shape), level)


@register(sh.Cat, sh.Stack)
def join(cls, args, kwargs, level):
    B = _batch_size(args, level)
    values = [unwrap(a, level) for a in args]
    empty = [cls is sh.Cat and (tuple(v.shape[1:]) if batched else tuple(v.shape)) == (0,) for v, batched in values]
    if all(empty):  # (only 1-d empty examples: joined as any others, into a batch of empty examples)
        empty = [False] * len(values)
    # an example that is a 1-d empty tensor joins anything (torch's legacy rule): it goes to cat as one, unbatched
    return wrap(cls.apply(*((sh.View.apply(v, (0,)) if batched else v) if e else v if batched else expand_batch(v, B)
                            for (v, batched), e in zip(values, empty)), dim=kwargs["dim"] + 1), level)


# ---- indexing ---------------------------------------------------------------------------------------
def _index_batched_key(x, key, level):
    """x[idx] with a batched integer index: the batch joins the index as arange(B)."""
    k = key[0] if isinstance(key, tuple) and len(key) == 1 else key
    if type(k) is not BatchedArray or type(k.phys) is not np.ndarray or k.dtype.kind not in "iu":
        raise _NoRule
    B = k.batch_size
    idx = k.phys
    xv = _materialized(x, level, B)
    return wrap(ix.Index.apply(xv, (np.arange(B).reshape((B,) + (1,) * (idx.ndim - 1)), idx)), level)


def _arrays_of(key):
    """An index key with the user's index tensors (which Index saves) as their arrays."""
    if isinstance(key, Tensor):
        return key._data
    return tuple(k._data if isinstance(k, Tensor) else k for k in key) if isinstance(key, tuple) else key


@register(ix.Index, ix._BasicIndex)
def index(cls, args, kwargs, level):
    x, key = args[0], _arrays_of(args[1])
    from ._batching import _has_batched
    if _has_batched(key, level):
        if cls is not ix.Index:
            raise _NoRule
        return _index_batched_key(x, key, level)
    v, _ = unwrap(x, level)
    pkey, p = physical_key(key, x.shape)
    out = cls.apply(v, pkey)
    if cls is ix._BasicIndex:
        _view_of(out, v)
    return wrap(movedim(out, p, 0) if p else out, level)


@register(ix.ScatterIntoZeros, ix.SliceScatter)
def scatter(cls, args, kwargs, level):
    from ._batching import _has_batched
    g, shape, key = args
    if _has_batched(key, level) or not unwrap(g, level)[1]:
        raise _NoRule
    v, _ = unwrap(g, level)
    pkey, p = physical_key(key, tuple(shape))
    if p:
        v = movedim(v, 0, p)
    return wrap(cls.apply(v, (v.shape[0] if not p else v.shape[p],) + tuple(shape), pkey), level)


@register(ix.IndexSelect)
def index_select(cls, args, kwargs, level):
    x, dim, index = args
    index = index._data if isinstance(index, Tensor) else index  # (the op is given the index tensor itself)
    if not unwrap(index, level)[1]:
        v, _ = unwrap(x, level)
        return wrap(cls.apply(v, dim + 1, index), level)
    if type(index.phys) is not np.ndarray:
        raise _NoRule
    B = index.batch_size
    xv = _materialized(x, level, B)
    n = _ndim(x)
    shape = (B,) + tuple(x.shape[:dim]) + (index.shape[0],) + tuple(x.shape[dim + 1:])
    idx = np.broadcast_to(index.phys.reshape((B,) + (1,) * dim + (-1,) + (1,) * (n - dim - 1)), shape)
    return wrap(ix.Gather.apply(xv, dim + 1, idx), level)


@register(ix.MaskedSelect)
def masked_select(cls, args, kwargs, level):
    """each example's selected values in a row: the mask (not batched) picks as many from each"""
    x, mask = args
    if unwrap(mask, level)[1]:
        raise RuntimeError("vmap: Attempted to vmap over `mask` in masked_select(self, mask): each example would "
                           "select a different number of values. Batch the input only, or use where(mask, x, 0).")
    v, _ = unwrap(x, level)
    n = max(_ndim(x), mask.ndim)
    return wrap(sh.View.apply(cls.apply(_pad(v, _ndim(x), n), mask), (v.shape[0], -1)), level)


@register(ix.Gather)
def gather(cls, args, kwargs, level):
    x, dim, index = args
    index = index._data if isinstance(index, Tensor) else index  # (as index_select's)
    B = _batch_size(args, level)
    idx = unwrap(index, level)[0] if unwrap(index, level)[1] else np.broadcast_to(index, (B,) + index.shape)
    if type(idx) is not np.ndarray and not isinstance(idx, np.ndarray):
        raise _NoRule
    return wrap(cls.apply(_materialized(x, level, B), dim + 1, idx), level)


# ---- matrix products ----------------------------------------------------------------------------------
@register(la.Matmul)
def matmul(cls, args, kwargs, level):
    (a, ab), (b, bb) = unwrap(args[0], level), unwrap(args[1], level)
    ka, kb = _ndim(args[0]), _ndim(args[1])
    if ab and not bb and kb <= 2:  # (B, ..., k) @ (k, m): numpy treats the batch like any leading dim
        fold = kb == 2 and _distinct(a)  # (see addmm)
        return wrap(_folded(la.Matmul.apply, a, b) if fold else la.Matmul.apply(a, b), level)
    # the general case: examples as (batches of) matrices, batch dims lined up, then squeeze
    if ka == 1:
        a = sh.Unsqueeze.apply(a, dim=1 if ab else 0)
    if kb == 1:
        b = sh.Unsqueeze.apply(b, dim=2 if bb else 1)
    ra, rb = max(ka, 2), max(kb, 2)
    if ab:
        a = _pad(a, ra, max(ra, rb))
    if bb:
        b = _pad(b, rb, max(ra, rb))
    out = la.Matmul.apply(a, b)
    if ka == 1:
        out = sh.SqueezeDim.apply(out, dims=(out.ndim - 2,))
    if kb == 1:
        out = sh.SqueezeDim.apply(out, dims=(out.ndim - 1,))
    return wrap(out, level)


def _distinct(v):
    """v is a batch of examples held apart in memory (a Tensor on an array), not one example expanded."""
    return isinstance(v, Tensor) and type(v._data) is np.ndarray and v._data.ndim > 0 and v._data.strides[0] != 0


def _folded(product, x, w, *before):
    """x @ w for a batch x of (B, ..., k) and one matrix w, with the examples' rows stacked into one matrix:
    the single product that an unbatched call on the whole batch computes (torch's vmap and matmul fold
    them too), so that vmap(f)(x) gives f(x)'s bits. (numpy would multiply each example's rows alone,
    and a one-row product sums in another order.)"""
    if x.ndim <= 2:
        return product(*before, x, w)
    out = product(*before, x.reshape(-1, x.shape[-1]), w)
    return out.view(*x.shape[:-1], out.shape[-1])


@register(la.Addmm)
def addmm(cls, args, kwargs, level):
    bias, x, w = args
    (xv, xb), bb, wb = unwrap(x, level), unwrap(bias, level)[1], unwrap(w, level)[1]
    # (nn.Linear over a batch of examples; not over one example expanded, as jacfwd's primal: its
    # one-row product, which each slice of the batched matmul computes, is the unbatched call's)
    beta, alpha = kwargs.get("given") or (1, 1)
    if beta == 1 == alpha and xb and not bb and not wb and isinstance(w, Tensor) and _ndim(bias) <= 1 and \
            _distinct(xv):
        return wrap(_folded(lambda *a: la.Addmm.apply(*a, **kwargs), xv, w, bias), level)
    product = la.matmul(x, w) if alpha == 1 else la.matmul(x, w) * alpha  # the batched rules do the work (as
    return ew.add(product, bias if beta == 1 else bias * beta)  # torch's vmap, beta * bias even for a beta of 0)


@register(Trilinear)
def trilinear(cls, args, kwargs, level):
    lhs, out = kwargs.get("equation", BILINEAR).split("->")
    letter = next(c for c in "ZYXWVUTSRQPONMLKJIHGFEDCBAzyxwvutsrqponmlkjihgfedcba" if c not in lhs + out)
    terms, phys = [], []
    for term, a in zip(lhs.split(","), args):
        v, batched = unwrap(a, level)
        terms.append(letter + term if batched else term)
        phys.append(v)
    return wrap(cls.apply(*phys, equation=",".join(terms) + "->" + letter + out), level)


# ---- losses: elementwise with reduction="none", then reduced per example ------------------------------
def _per_example_reduce(loss, reduction, level):
    if reduction == "none":
        return loss
    v = unwrap(loss, level)[0]
    dims = tuple(range(1, v.ndim))
    return wrap(rd.Mean.apply(v, dims=dims) if reduction == "mean" else rd.Sum.apply(v, dims=dims), level)


@register(*(getattr(nn, name) for name in ("MseLoss", "BinaryCrossEntropy", "BinaryCrossEntropyWithLogits")
            if hasattr(nn, name)))
def pointwise_loss(cls, args, kwargs, level):
    loss = elementwise(cls, args, dict(kwargs, reduction="none"), level)
    return _per_example_reduce(loss, kwargs.get("reduction", "mean"), level)


@register(nn.NllLoss)
def nll_loss(cls, args, kwargs, level):
    """fold the batch into nll_loss's own batch dim N, then reduce per example"""
    logp, target = args[0], kwargs["target"]
    weight, ignore = kwargs.get("weight"), kwargs.get("ignore_index", -100)
    reduction = kwargs.get("reduction", "mean")
    if type(weight) is BatchedArray:
        raise _NoRule
    B = _batch_size((logp, target), level)
    lp = _materialized(logp, level, B)
    t = unwrap(target, level)[0] if unwrap(target, level)[1] else np.broadcast_to(target, (B,) + np.shape(target))
    if not isinstance(t, np.ndarray) or lp.ndim != _ndim(logp) + 1:
        raise _NoRule
    kw = dict(kwargs, reduction="none")
    if _ndim(logp) == 1:  # (C,) examples: the batch is N
        losses = cls.apply(lp, **dict(kw, target=t))
    else:
        n = lp.shape[1]
        folded = sh.View.apply(lp, (B * n,) + tuple(lp.shape[2:]))
        flat = cls.apply(folded, **dict(kw, target=t.reshape((B * n,) + t.shape[2:])))
        losses = sh.View.apply(flat, (B, n) + tuple(flat.shape[1:]))
    if reduction == "none":
        return wrap(losses, level)
    total = rd.Sum.apply(losses, dims=tuple(range(1, losses.ndim)))
    if reduction == "sum":
        return wrap(total, level)
    valid = t != ignore
    w = np.ones(lp.shape[2 if _ndim(logp) > 1 else 1], lp.dtype.np) if weight is None else weight
    wt = np.where(valid, w[np.where(valid, t, 0)], 0).astype(lp.dtype.np).reshape(B, -1).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return wrap(total / Tensor._make(wt), level)


# ---- convolution, pooling, embedding: the batch joins dim 0 (N), or the groups ------------------------
from ..ops import conv as cv  # noqa: E402


def _fold(v, B):
    """(B, N, ...) -> (B*N, ...)"""
    return sh.View.apply(v, (B * v.shape[1],) + tuple(v.shape[2:]))


def _unfold(out, B):
    """(B*N, ...) -> (B, N, ...)"""
    return sh.View.apply(out, (B, out.shape[0] // B) + tuple(out.shape[1:]))


@register(cv.Im2col, cv.Col2im, cv.MaxPool2d, cv.AvgPool2d)
def fold_into_n(cls, args, kwargs, level):
    v, _ = unwrap(args[0], level)
    if any(unwrap(a, level)[1] for a in args[1:]):
        raise _NoRule
    B = v.shape[0]
    out = cls.apply(_fold(v, B), *args[1:], **kwargs)
    if isinstance(out, tuple):
        return tuple(wrap(_unfold(o, B), level) for o in out)
    return wrap(_unfold(out, B), level)


@register(cv.Convolution)
def convolution(cls, args, kwargs, level):
    x, w, b, stride, pads, dilation, groups = args
    B = _batch_size(args, level)
    wb, bb = unwrap(w, level)[1], b is not None and unwrap(b, level)[1]
    if not wb and not bb:  # the batch joins the images' batch dim N
        return wrap(_unfold(cls.apply(_fold(unwrap(x, level)[0], B), w, b, stride, pads, dilation, groups), B), level)
    # per-example weights: one convolution with B times the groups, the batch folded into the channels
    xv = _materialized(x, level, B)                               # (B, N, C, *spatial)
    n, spatial = xv.shape[1], tuple(xv.shape[3:])
    xv = sh.View.apply(movedim(xv, 0, 1), (n, -1) + spatial)      # (N, B*C, *spatial)
    wv = _materialized(w, level, B)                               # (B, O, C/g, *k)
    o = wv.shape[1]
    wv = sh.View.apply(wv, (B * o,) + tuple(wv.shape[2:]))
    bv = None if b is None else sh.View.apply(_materialized(b, level, B), (B * o,))
    out = cls.apply(xv, wv, bv, stride, pads, dilation, groups * B)  # (N, B*O, *out_spatial)
    out = sh.View.apply(out, (n, B, o) + tuple(out.shape[2:]))
    return wrap(movedim(out, 1, 0), level)


@register(cv.Embedding)
def embedding(cls, args, kwargs, level):
    weight, idx, padding_idx, scale_grad_by_freq = args
    if scale_grad_by_freq:
        return _embedding_counted_per_example(cls, weight, idx, padding_idx, level, _batch_size(args, level))
    if unwrap(weight, level)[1]:
        if padding_idx is not None or not isinstance(unwrap(idx, level)[0], np.ndarray):
            raise _NoRule  # (the padding row's gradient must stay zero for each example)
        return _index_batched_key(weight, idx if type(idx) is BatchedArray else
                                  BatchedArray(Tensor._make(np.broadcast_to(idx, (_batch_size(args, level),) +
                                                                            np.shape(idx))), level), level)
    i, _ = unwrap(idx, level)
    if not isinstance(i, np.ndarray):
        raise _NoRule
    return wrap(cls.apply(weight, i, padding_idx, scale_grad_by_freq), level)


def _embedding_counted_per_example(cls, weight, idx, padding_idx, level, B):
    """scale_grad_by_freq divides by how often an index occurs in one example: the examples' tables stacked
    into one (B*V, D) table, with example b's indices moved by b*V, keep the counts of different examples apart."""
    i, batched = unwrap(idx, level)
    if padding_idx is not None or not isinstance(i, np.ndarray):
        raise _NoRule  # (the padding row's gradient must stay zero for each example)
    i = i if batched else np.broadcast_to(i, (B,) + i.shape)
    w = _materialized(weight, level, B)                   # (B, V, D)
    V = w.shape[1]
    moved = i + (np.arange(B) * V).reshape((B,) + (1,) * (i.ndim - 1))
    return wrap(cls.apply(sh.reshape(w, (B * V,) + tuple(w.shape[2:])), moved, None, True), level)


# ---- the ops of in-place updates -------------------------------------------------------------------------
from ..ops import inplace as ip  # noqa: E402


@register(ip.Zero, ip.Fill)
def fill(cls, args, kwargs, level):
    return elementwise(cls, args, kwargs, level)


@register(ip.FillTensor)
def fill_tensor(cls, args, kwargs, level):
    if unwrap(args[1], level)[1]:
        raise _NoRule  # a batched fill value: its gradient would be summed over the batch
    return elementwise(cls, args, kwargs, level)


@register(ip.Copy)
def copy(cls, args, kwargs, level):
    x, src = args
    B = _batch_size(args, level)
    s, sb = unwrap(src, level)
    return wrap(cls.apply(_materialized(x, level, B), _pad(s, _ndim(src), _ndim(x)) if sb else s), level)


def _flat_batch_index(index, B, size):
    """A flat index into each example of a batch, as a flat index into the batch."""
    return (np.arange(B).reshape((B,) + (1,) * index.ndim) * size + index).astype(index.dtype)


@register(ip.AsStrided)
def as_strided(cls, args, kwargs, level):
    base, index = args
    v, _ = unwrap(base, level)
    return wrap(cls.apply(v, _flat_batch_index(index, v.shape[0], base.numel())), level)


@register(ip.AsStridedScatter)
def as_strided_scatter(cls, args, kwargs, level):
    g, shape, index = args
    v, _ = unwrap(g, level)
    B = v.shape[0]
    return wrap(cls.apply(v, (B,) + tuple(shape), _flat_batch_index(index, B, int(np.prod(shape)))), level)


@register(ip.CopySlices)
def copy_slices(cls, args, kwargs, level):
    base, src, index = args
    B = _batch_size(args, level)
    s, sb = unwrap(src, level)
    s = _pad(s, _ndim(src), index.ndim) if sb else s
    return wrap(cls.apply(_materialized(base, level, B), s, _flat_batch_index(index, B, base.numel())), level)


def _index_put_batched_key(cls, xv, v, key, level):
    """x[key] = v with batched integer indices (and integers, slices), in one op: the batch joins the key's indices
    as arange(B), x's batch dim moved after the key's leading slices to meet them. (A mask: per example.)"""
    keys = key if isinstance(key, tuple) else (key,)
    arrays = [unwrap(k, level)[0] if type(k) is BatchedArray else k for k in keys]
    if not all(isinstance(a, (slice, int, np.integer)) and not isinstance(a, bool)
               or isinstance(a, np.ndarray) and a.dtype.kind in "iu" for a in arrays):
        raise _NoRule
    adv = [d for d, k in enumerate(keys) if not isinstance(k, slice)]
    B, lead, n = xv.shape[0], adv[0], max(np.ndim(keys[d]) for d in adv)
    pkey = keys[:lead] + (np.arange(B).reshape((B,) + (1,) * n),) + tuple(
        a.reshape((B,) + (1,) * (n - k.ndim) + tuple(k.shape)) if type(k) is BatchedArray else a
        for k, a in zip(keys[lead:], arrays[lead:]))
    xt = movedim(xv, 0, lead)
    at = lead if adv == list(range(lead, adv[-1] + 1)) else 0  # (numpy puts separated indices' dims first)
    vv, vb = unwrap(v, level)
    if vb or at:  # (the region has the batch's dim at `at`: the value's batch goes there, repeated if not batched)
        vv = movedim(_pad(_materialized(v, level, B), _ndim(v), np.empty(xt.shape, dtype=bool)[pkey].ndim - 1), 0, at)
    return wrap(movedim(cls.apply(xt, vv, pkey), lead, 0), level)


@register(ip.IndexPut)
def index_put(cls, args, kwargs, level):
    x, v, key = args[0], args[1], _arrays_of(args[2])
    from ._batching import _has_batched
    B = _batch_size(args, level)
    if _has_batched(key, level):
        return _index_put_batched_key(cls, _materialized(x, level, B), v, key, level)
    xv = _materialized(x, level, B)
    pkey, p = physical_key(key, x.shape)
    vv, vb = unwrap(v, level)
    if vb:
        region = np.empty(x.shape, dtype=bool)[key].ndim if not isinstance(key, tuple) or key else 0
        vv = _pad(vv, _ndim(v), region)
        if p:
            vv = movedim(vv, 0, p)
    return wrap(cls.apply(xv, vv, pkey), level)
