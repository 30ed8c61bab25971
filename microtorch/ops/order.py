"""Order statistics: sort, topk, median, nanmedian, kthvalue, mode, quantile, nanquantile, aminmax.

A statistic picked from the input (median along a dim, kthvalue, mode) sends its gradient back
to the position it came from; the median of the whole tensor shares it evenly between the
equal values (as torch); quantile interpolates between two sorted values."""
import functools

import numpy as np

from .._tensor import Tensor
from . import _std_order as std_order
from ._memory_formats import in_layout_of
from ._op import Op, dim_passed_on, normalize_dims, shown_dim, zeros_for
from .reduce import _first_zero, _lane_zero, c_order, return_type


class Picked(Op):
    """values taken along dim at indices;  d = g scattered back to the indices. A 0-d x (indices found on it
    as on one element; under vmap, a batch of 0-d examples) is its own pick. As torch's node, it saves the
    indices the caller returns (`returned`, so that changing them in place makes backward refuse) and shows
    the dim as the caller gave it (`given_dim`)."""
    _grad_fn_name = "MedianBackward1"
    _like_input = False  # (sort's values, all of x's: laid out as x, as torch's)
    _saved_names = ("indices",)
    _saved_values = {"dim": "given_dim", "keepdim": "keepdim", "self_sym_sizes": "shape"}

    @staticmethod
    def forward(ctx, x, dim, indices, keepdim=False, returned=None, given_dim=None):
        ctx.dim, ctx.indices, ctx.shape, ctx.keepdim = dim, indices, x.shape, keepdim
        ctx.given_dim = shown_dim(dim if given_dim is None else given_dim)
        ctx.save_for_backward(indices if returned is None else returned)
        ctx.itself = x.ndim < indices.ndim
        if ctx.itself:
            return x.copy()
        out = np.take_along_axis(x, indices, axis=dim)
        if ctx._forward_cls._like_input:
            return in_layout_of(out, x)
        return out if keepdim else out.squeeze(dim)

    @staticmethod
    def backward(ctx, grad):
        """torch's value_selecting_reduction_backward: zeros with the gradient scattered at the indices"""
        from .rearrange import scatter
        (indices,) = ctx.saved_tensors  # (read first: a freed node raises, a 0-d one too)
        if ctx.itself:
            return grad, None, None
        d = dim_passed_on(ctx.dim, ctx.given_dim, len(ctx.shape))  # (torch passes the dim on as given)
        g = grad if grad.ndim == len(ctx.shape) else grad.unsqueeze(d)  # (the dim the reduction dropped, put back
        index = indices if indices._data.ndim == len(ctx.shape) else indices.unsqueeze(d)  # in both)
        return scatter(zeros_for(ctx.shape, grad), d, index, g), None, None

    @staticmethod
    def jvp(ctx, t, *_):
        from .index import Gather
        if ctx.itself:
            return t
        out = Gather.apply(t, ctx.dim, ctx.indices)
        return out if ctx.keepdim else out.squeeze(ctx.dim)




def savable(indices):
    """indices, the tensor the caller returns, for the node to save; None under vmap, where they are batched (the
    batching hook would take them for an input to batch; the node that sees the whole batch saves its array)."""
    return indices if type(indices._data) is np.ndarray else None


def _picked(name, overload=0, like_input=False, shows_keepdim=True):
    """A Picked op that records torch's node name, <name>Backward<overload> (and shows keepdim where torch's does)."""
    values = {k: v for k, v in Picked._saved_values.items() if shows_keepdim or k != "keepdim"}
    return type(name, (Picked,), {"_grad_fn_name": f"{name}Backward{overload}", "__module__": __name__,
                                  "_like_input": like_input, "_saved_values": values})


MedianDim, NanmedianDim = _picked("Median", 1), _picked("Nanmedian", 1)
Kthvalue, Mode = (_picked(n) for n in ("Kthvalue", "Mode"))
Topk = _picked("Topk", shows_keepdim=False)
Sort, SortStable = _picked("Sort", 0, True, False), _picked("Sort", 1, True, False)  # (SortBackward1: torch's
# overload of sort that takes stable=)


class EvenlyShared(Op):
    """one value of x (a median; one per leading index where value has dims, as vmap batches it);
    d = g shared evenly between the elements equal to it"""
    _grad_fn_name = "MedianBackward0"
    _saved_names = ("self", "result")

    @staticmethod
    def forward(ctx, x, value=None):
        out = np.asarray(value, dtype=x.dtype)
        ctx.save_for_backward(x, out)  # (the result too, as torch: changed in place, backward refuses)
        ctx.value = value
        return out

    @staticmethod
    def backward(ctx, grad):
        from .index import MaskedFillTensor
        x, result = ctx.saved_tensors
        hit, count = EvenlyShared._hits(x, result._data)
        if grad.ndim:  # (vmap: one value per leading index)
            grad = grad.reshape(tuple(grad.shape) + (1,) * (x.ndim - grad.ndim))
        share, hit = grad / Tensor._make(count.astype(x._data.dtype)), Tensor._make(hit)
        if type(grad._data) is not np.ndarray:  # (a vmap batch: torch's form for tensor subclasses, a product)
            return hit * share
        # torch's form on the CPU: zeros, with the share written at the hits (an infinite grad leaves 0 elsewhere)
        return MaskedFillTensor.apply(Tensor._make(np.zeros(x.shape, x._data.dtype)), hit, share)

    @staticmethod
    def jvp(ctx, t):
        x, lead = ctx.inputs[0], np.ndim(ctx.value)
        shared = t * EvenlyShared._weights(x, ctx.value)
        return shared.sum(tuple(range(lead, x.ndim))) if lead else shared.sum()

    @staticmethod
    def _hits(x, value):
        """where x equals value (NaN where it is NaN), and how many (a number, or one per leading index)"""
        v = np.asarray(value)
        v = v.reshape(v.shape + (1,) * (x.ndim - v.ndim))
        hit = (x._data == v) | (np.isnan(x._data) & np.isnan(v))
        lead = np.ndim(value)
        return hit, hit.sum(axis=tuple(range(lead, x.ndim)), keepdims=bool(lead))

    @staticmethod
    def _weights(x, value):
        hit, count = EvenlyShared._hits(x, value)
        return Tensor._make((hit / np.maximum(count, 1)).astype(x._data.dtype))


class NanmedianAll(EvenlyShared):
    _grad_fn_name = "NanmedianBackward0"


def _lower_median_index(x, d, ignore_nan):
    """the index (along d) of the lower median; NaN first unless ignore_nan."""
    order = np.argsort(x, axis=d, kind="stable")
    n = x.shape[d]
    valid = (~np.isnan(x)).sum(axis=d, keepdims=True)
    rank = (valid - 1) // 2 if ignore_nan else np.full(valid.shape, (n - 1) // 2)
    rank = np.clip(rank, 0, max(n - 1, 0))
    idx = np.take_along_axis(order, rank, axis=d)
    if not ignore_nan:  # a NaN anywhere makes the median NaN (the first NaN's index)
        nan_any = valid < n
        first_nan = np.expand_dims(np.argmax(np.isnan(x), axis=d), d)
        idx = np.where(nan_any, first_nan, idx)
    return idx.astype(np.int64)


_ALL = None.__class__  # dim's default: over all elements (an explicit dim=None is refused, as torch)


def _no_complex(input, name, dim=None):
    """torch's refusal of complex (and for medians bool) tensors, after its check of the dim."""
    if dim is not None and dim is not _ALL:
        normalize_dims(dim, max(input.ndim, 1), name)
    if input.dtype.is_complex or (input.dtype.name == "bool" and "median" in name):
        raise NotImplementedError(f'"{name}" not implemented for \'{input.dtype}\': complex numbers (and bools) '
                                  "have no order here; use .abs() or .real (or .float())")


def _median(input, dim, keepdim, ignore_nan):
    name = "nanmedian" if ignore_nan else "median"
    _no_complex(input, name, dim)
    if dim is _ALL:
        flat = input._data.reshape(-1)
        if not flat.size:
            return EvenlyShared.apply(input, value=np.nan)
        value = flat[_lower_median_index(flat, 0, ignore_nan)[0]]
        if type(flat) is np.ndarray and value == 0 and np.signbit(flat).any() and \
                (flat == 0).sum() > np.signbit(flat[flat == 0]).sum():  # (+0.0 and -0.0 both there; not under vmap)
            value = _tied_zero(input._data, ignore_nan)
        return (NanmedianAll if ignore_nan else EvenlyShared).apply(input, value=value)
    x = _rows(input)
    d = normalize_dims(dim, x.ndim, name)[0]
    if x.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    idx = _lower_median_index(x, d, ignore_nan)
    return _picked_result(name, NanmedianDim if ignore_nan else MedianDim, input, (d, dim), idx, keepdim)


def _tied_zero(x, ignore_nan):
    """The zero, +0.0 or -0.0, that torch's median of a whole tensor returns when the median is zero: torch runs
    std::nth_element over a copy of x in memory, and which of the equal zeros lands in the middle (1 / median and
    copysign tell them apart) is that algorithm's."""
    flat = x.ravel(order="K")
    n = flat.size - int(np.isnan(flat).sum()) if ignore_nan else flat.size
    return flat[std_order.nth_element(std_order.ranks(flat), (n - 1) // 2)]


def _rows(input):
    """input's data, at least 1-d (the indices of a 0-d input's pick are found as for one element)"""
    return input._data if input.ndim else np.expand_dims(input._data, 0)


def _picked_result(name, op, input, dims, idx, keepdim):
    """op's values of input at idx along d, and the indices, as torch's named tuple (0-d for a 0-d input);
    dims: (d, the dim as the caller gave it)."""
    d, given = dims
    out = idx.reshape(()) if not input.ndim else idx if keepdim else idx.squeeze(d)
    indices = Tensor._make(c_order(out))  # (torch's indices: C order)
    values = op.apply(input, d, idx, keepdim=keepdim, returned=savable(indices), given_dim=given)
    return return_type(name)(values, indices)


def median(input, dim=_ALL, keepdim=False):
    return _median(input, dim, keepdim, False)


def nanmedian(input, dim=_ALL, keepdim=False):
    return _median(input, dim, keepdim, True)


def kthvalue(input, k, dim=-1, keepdim=False):
    _no_complex(input, "kthvalue", dim)
    x = _rows(input)
    d = normalize_dims(dim, x.ndim, "kthvalue")[0]
    n = x.shape[d]
    if n == 0:
        raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size.")
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}: k={k}, size {n}")
    idx = np.take(_replayed(x, d, False, lambda keys: np.full(n, std_order.quick_select(keys, k))), [k - 1],
                  axis=d).astype(np.int64)  # (torch's quickselect picks among equal values)
    return _picked_result("kthvalue", Kthvalue, input, (d, dim), idx, keepdim)


def _mode_indices(rows):
    """per row (the last dim): the last index holding its smallest most frequent value (a NaN: the first NaN),
    with numpy's whole-array ops, so that vmap batches it."""
    n = rows.shape[-1]
    s = np.sort(rows, axis=-1)
    pos = np.arange(n)
    starts = np.concatenate([np.ones(s.shape[:-1] + (1,), bool), s[..., 1:] != s[..., :-1]], axis=-1)
    run = pos - np.maximum.accumulate(np.where(starts, pos, 0), axis=-1) + 1  # each run's length so far
    best = np.take_along_axis(s, np.argmax(run, axis=-1)[..., None], axis=-1)  # the first to reach the longest
    last = n - 1 - np.argmax((rows == best)[..., ::-1], axis=-1)
    nan = np.isnan(rows)
    return np.where(nan.any(-1), np.argmax(nan, axis=-1), last)[..., None].astype(np.int64)


def mode(input, dim=-1, keepdim=False):
    _no_complex(input, "mode", dim)
    x = _rows(input)
    d = normalize_dims(dim, x.ndim, "mode")[0]
    if x.shape[d] == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    rows = np.moveaxis(x, d, -1)
    idx = _mode_indices(rows)
    if type(x) is np.ndarray and x.dtype.kind != "c":  # torch's index among the equal values: std::sort's
        flat, out = rows.reshape(-1, rows.shape[-1]), idx.reshape(-1)
        nan = np.isnan(flat).any(-1) if flat.dtype.kind == "f" else np.zeros(len(flat), bool)
        tied = std_order.tied_rows(std_order.ranks(flat)) if flat.shape[-1] > std_order.RUN else np.zeros(0, int)
        for r in np.union1d(tied, np.flatnonzero(nan)):
            out[r] = std_order.std_mode(flat[r])
    return _picked_result("mode", Mode, input, (d, dim), np.moveaxis(idx, -1, d), keepdim)


class _NotGiven:
    """sort's stable= when the caller left it out: False, but torch records SortBackward1 once it is given."""

    def __bool__(self):
        return False

    def __repr__(self):
        return "False"


_NOT_GIVEN = _NotGiven()


def stable_by_name(fn, method=False):
    """torch's sort and argsort take `stable` in a form of their own, (input, *, stable, dim=-1, descending=False):
    given stable, dim and descending go by name, and by position they are torch's TypeError (which, for the Tensor
    method, lists the arguments after self, as torch's does)."""
    op = fn.__name__
    first = "" if method else "Tensor input, "

    @functools.wraps(fn)
    def by_name(input, *args, **kwargs):
        if args and "stable" in kwargs:
            given = args if method else (input,) + args
            got = [type(a).__name__ for a in given] + [f"{k}={type(v).__name__}" for k, v in kwargs.items()]
            raise TypeError(f"{op}() received an invalid combination of arguments - got ({', '.join(got)}), but "
                            f"expected one of:\n * ({first}*, bool stable, int dim = -1, bool descending = False)\n"
                            f" * ({first}int dim = -1, bool descending = False)\nWith stable, give dim and "
                            f"descending by name: {'x.' if method else ''}{op}({'' if method else 'x, '}"
                            f"dim={args[0]!r}, stable=...)")
        return fn(input, *args, **kwargs)
    return by_name


@stable_by_name
def sort(input, dim=-1, descending=False, *, stable=_NOT_GIVEN):
    d = normalize_dims(dim, input.ndim, "sort")[0]
    _unordered(input, "sort")
    x = _rows(input)
    short = x.ndim == 0 or x.shape[d] <= std_order.RUN  # (std::sort of so few is an insertion sort: stable)
    idx = _order(x, d, descending) if stable or short else _replayed(x, d, descending, std_order.std_sort)
    node = Sort if stable is _NOT_GIVEN else SortStable
    indices = Tensor._make(in_layout_of(idx.reshape(input.shape), input._data))
    values = node.apply(input, d, idx, keepdim=True, returned=savable(indices), given_dim=dim)
    return return_type("sort")(values, indices)


def topk(input, k, dim=-1, largest=True, sorted=True):
    d = normalize_dims(dim, input.ndim, "topk")[0]
    _unordered(input, "topk")
    x = _rows(input)
    if not 0 <= k <= x.shape[d]:
        raise RuntimeError(f"topk(): selected index k out of range: k={k} but dimension {d} has size {x.shape[d]} "
                           f"(shape {list(input.shape)}); k must be between 0 and {x.shape[d]}")
    k = k if input.ndim else 1  # (0-d: itself, as torch)
    n = x.shape[d]
    replay = (lambda keys: std_order.std_topk(keys, k, sorted)) if k else None
    everywhere = not sorted and 1 < k and k * 64 > n  # (nth_element leaves the first k unsorted, ties or not)
    idx = np.take(_replayed(x, d, largest, replay, everywhere), np.arange(k), axis=d)
    indices = Tensor._make(idx if input.ndim else idx.reshape(()))
    values = Topk.apply(input, d, idx, keepdim=True, returned=savable(indices), given_dim=dim)
    return return_type("topk")(values, indices)


def _replayed(x, d, descending, replay, everywhere=False):
    """the indices along d of torch's order of x (descending: largest first), where replay(keys of a row) gives
    the first indices of the row as torch's C++ algorithm leaves them (_std_order.py); numpy's stable order for
    rows without equal values (their one order), unless everywhere."""
    order = _order(x, d, descending)
    n = x.shape[d] if x.ndim else 1
    if type(x) is not np.ndarray or replay is None or n < 2:  # (vmap's batched data: numpy's order)
        return order
    rows_x = np.moveaxis(x, d, -1).reshape(-1, n)
    rows = np.moveaxis(order, d, -1).reshape(-1, n).copy()
    ordered = np.take_along_axis(rows_x, rows, -1)
    nan = ordered != ordered
    same = (ordered[:, 1:] == ordered[:, :-1]) | nan[:, 1:] & nan[:, :-1]
    for r in range(len(rows)) if everywhere else np.flatnonzero(same.any(-1)):
        got = replay(std_order.ranks(rows_x[r], descending))
        rows[r, :len(got)] = got
    return np.moveaxis(rows.reshape(np.moveaxis(order, d, -1).shape), -1, d)


def _order(x, d, descending):
    """the indices that sort x along d, stably, NaN as the largest value (as torch's order)"""
    if not descending:  # (descending: the ascending order of the reversed x, reversed; ties keep their order)
        return np.argsort(x, axis=d, kind="stable").astype(np.int64)
    return (x.shape[d] - 1 - np.flip(np.argsort(np.flip(x, d), axis=d, kind="stable"), d)).astype(np.int64)


def _unordered(input, op):
    if input.dtype.is_complex:
        raise RuntimeError(f"{op} does not support complex dtypes on CPU; order by .abs() or .real instead")


def _quantile_ranks(q, sorted_x, ignore_nan, interpolation):
    """each quantile's position in the sorted last dim (..., len(q)), as torch counts it: over the values that
    are not NaN (nanquantile, 0 when there are none), else at the last place when a NaN is there."""
    nan = np.isnan(sorted_x)
    if ignore_nan:
        ranks = q * ((~nan).sum(-1, keepdims=True) - 1).astype(q.dtype)
        ranks = np.where(ranks < 0, 0, ranks)
    else:
        last = sorted_x.shape[-1] - 1
        ranks = np.where(nan.any(-1, keepdims=True), last, q * last).astype(q.dtype)
    rounding = {"lower": np.floor, "higher": np.ceil, "nearest": np.round}.get(interpolation)
    return rounding(ranks) if rounding else ranks


def _quantile_qs(name, input, q, interpolation):
    """q as a 1-d array, after torch's checks of the arguments before the dim, in torch's order"""
    if interpolation not in ("linear", "lower", "higher", "midpoint", "nearest"):
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest, but "
                           f"got {interpolation}")
    if not isinstance(q, Tensor) and not 0 <= q <= 1:  # (NaN too)
        raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
    if input.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if isinstance(q, Tensor) and q.ndim > 1:
        raise RuntimeError(f"{name}() q must be a scalar or 1D tensor (got {q.ndim} dims)")
    if input.dtype.name not in ("float32", "float64"):  # (half too)
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype (got {input.dtype})")
    if isinstance(q, Tensor) and q.dtype != input.dtype:
        raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor (q is {q.dtype}, the input "
                           f"{input.dtype}); convert q with .to(input.dtype)")
    return np.atleast_1d(q._data if isinstance(q, Tensor) else np.asarray(q, dtype=np.float64))


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan):
    """torch's composition: sort along the dim (moved last), gather the values at the ranks below (and above:
    lerp_ between them in place), then squeeze_ (or move the quantiles first), so the graph has torch's nodes."""
    name = "nanquantile" if ignore_nan else "quantile"
    qs = _quantile_qs(name, input, q, interpolation).astype(input._data.dtype)  # (torch: q in x's dtype)
    d = normalize_dims(dim, max(input.ndim, 1), name)[0] if dim is not None else None
    if not ((qs >= 0) & (qs <= 1)).all():  # (a tensor's values, after the dim: torch's order)
        raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    if d is None:
        ordered = input.flatten().sort().values
    elif d == input.ndim - 1:
        ordered = input.sort().values
    else:
        ordered = input.unsqueeze(-1).transpose(d, -1).sort().values
    ordered = ordered.view(_reduced_shape(input, d, keepdim) + (ordered.shape[-1],))
    ranks = _quantile_ranks(qs, ordered._data, ignore_nan, interpolation)
    below = ranks.astype(np.int64)
    values = ordered.gather(-1, Tensor._make(below))
    if interpolation in ("linear", "midpoint"):
        # (in x's dtype, as torch's ranks - ranks_below: lerp_ takes no weight of another dtype)
        weights = np.full_like(ranks, 0.5) if interpolation == "midpoint" else (ranks - below).astype(ranks.dtype)
        values.lerp_(ordered.gather(-1, Tensor._make(np.ceil(ranks).astype(np.int64))), Tensor._make(weights))
    if isinstance(q, Tensor) and q.ndim == 1:
        return values.unsqueeze_(0).transpose_(0, -1).squeeze_(-1)  # (the quantiles first)
    return values.squeeze_(-1)


def _reduced_shape(input, d, keepdim):
    """input's shape without dim d (1 there with keepdim); all 1s (keepdim) or () when reducing over all"""
    if d is not None and input.ndim:
        return tuple(1 if i == d else n for i, n in enumerate(input.shape) if keepdim or i != d)
    return (1,) * input.ndim if keepdim else ()


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    return _quantile(input, q, dim, keepdim, interpolation, False)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    return _quantile(input, q, dim, keepdim, interpolation, True)


class Aminmax(Op):
    """(min, max) along dims;  d = each gradient shared evenly between the elements equal to it"""
    _grad_fn_name = "AminmaxBackward0"
    _saved_names = ("self", "min", "max")
    _saved_values = {"dim": "dim", "keepdim": "keepdim"}

    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False):
        ctx.dim, ctx.keepdim = dim, keepdim
        lo, hi = c_order(np.amin(x, axis=dim, keepdims=keepdim)), c_order(np.amax(x, axis=dim, keepdims=keepdim))
        if x.dtype.kind == "f" and x.ndim:
            lo, hi = _zero_as_torch(x, lo, dim), _zero_as_torch(x, hi, dim)
        ctx.save_for_backward(x, lo, hi)  # (the results as arrays: changed in place, backward refuses, as torch)
        return lo, hi

    @staticmethod
    def backward(ctx, glo, ghi):
        x, lo, hi = ctx.saved_tensors
        return Aminmax._share(x, lo, glo, ctx) + Aminmax._share(x, hi, ghi, ctx)

    @staticmethod
    def jvp(ctx, t):
        x = ctx.inputs[0]
        lo, hi = ctx.output
        return tuple((t * Aminmax._hits(x, v, ctx)).sum(ctx.dim, keepdim=ctx.keepdim) if ctx.dim is not None else
                     (t * Aminmax._hits(x, v, ctx)).sum() for v in (lo, hi))

    @staticmethod
    def _hits(x, v, ctx):
        hit, count = Aminmax._mask(x, v, ctx)
        return Tensor._make((hit / np.maximum(count, 1)).astype(x._data.dtype))

    @staticmethod
    def _mask(x, v, ctx):
        """where x equals v along the reduced dims (as x's dtype), and how many times (kept dims)"""
        vv = v._data if ctx.keepdim or ctx.dim is None else np.expand_dims(v._data, ctx.dim)
        hit = (x._data == vv).astype(x._data.dtype)
        return hit, (hit.sum(axis=ctx.dim, keepdims=True) if ctx.dim is not None else hit.sum())

    @staticmethod
    def _share(x, v, g, ctx):
        if ctx.dim is not None and not ctx.keepdim:
            g = g.unsqueeze(ctx.dim)
        hit, count = Aminmax._mask(x, v, ctx)
        # torch divides by the count, then masks: a NaN extreme (count 0) spreads NaN over its slice
        return g / Tensor._make(np.asarray(count)) * Tensor._make(hit)


def _zero_as_torch(x, out, dim):
    """out with an extreme of 0 given the sign torch's gives it: over everything, that of max() and min() (their
    vector lanes); along a dim, that of the first zero, as amax's (numpy keeps the last)."""
    if out.all():
        return out
    return _lane_zero(x, out, None).reshape(out.shape) if dim is None else _first_zero(x, out, (dim,))


def aminmax(input, *, dim=None, keepdim=False):
    d = normalize_dims(dim, input.ndim, "aminmax")[0] if dim is not None else None
    d = d if input.ndim else None  # (a 0-d input reduces over nothing)
    if d is not None and input.shape[d] == 0:
        raise IndexError(f"aminmax: Expected reduction dim {d} to have non-zero size.")
    if d is None and input.numel() == 0:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                           "identity; give a dim of non-zero size")
    lo, hi = Aminmax.apply(input, dim=d, keepdim=keepdim)
    return return_type("aminmax", ("min", "max"))(lo, hi)
