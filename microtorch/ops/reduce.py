"""Reductions. Backward expands the gradient back over the reduced dimensions."""
import builtins
import math
import operator
from collections import namedtuple

import numpy as np

from .._tensor import Tensor
from .._user_line import warn_at_user_line
from ..autograd import grad_mode
from ._checks import need_grad_dtype, need_nonempty
from ._layout import as_input, converted, like_torch
from ._op import Op, as_array, broadcast_error, dim_passed_on, plain, reduce_dims, shown_dim, shown_dims, unrecorded
from ._reduce_order import (p_norm_like_torch, prod_like_torch, running_sum_like_torch, var_all_like_torch,
                            var_welford_like_torch)
from ._sum_order import mean_like_torch, sum_like_torch
from ._zero_tangent import ZeroTangent, zeros
from .scalar_overloads import mul_scalar
from .elementwise import MulScalar, _by_number, div_scalar
from .shape import (Clone, _dense_strides, _share, _strided_view, cat, expand_to, one_dim, reshape, unsqueeze,
                    unsqueezed_array)

def return_type(name, fields=("values", "indices")):
    """A namedtuple that prints as torch's `torch.return_types.max(values=..., indices=...)`."""
    base = namedtuple(name, fields)

    def __repr__(self):
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"microtorch.return_types.{name}(\n{body})"
    return type(name, (base,), {"__slots__": (), "__repr__": __repr__, "__module__": "microtorch.return_types"})


return_types_max = return_type("max")
return_types_min = return_type("min")


def c_order(out):
    """A fresh reduction result with torch's strides: C order, a size-1 dim's stride the size of the dims after
    it (numpy follows the input's order, and keeps strides of its own for size-1 dims)."""
    if type(out) is not np.ndarray:  # (a numpy scalar: a 0-d array; vmap's batched arrays: as they are)
        return np.asarray(out) if isinstance(out, np.generic) else out
    if out.ndim == 0:
        return out
    strides = tuple(_dense_strides(out.shape, out.itemsize))
    if out.strides == strides:
        return out
    out = np.ascontiguousarray(out)
    return out if out.strides == strides else _strided_view(out, out.shape, strides)


def _unsqueeze_to(grad, in_shape, dims, keepdim):
    """Give the reduced gradient back its size-1 dims so it broadcasts over the input: one unsqueeze
    per reduced dim, in increasing order, as torch's backward graphs show (none after a reduction over
    every dim, dims None: a 0-d gradient broadcasts as it is)."""
    if keepdim or dims is None or grad.ndim == len(in_shape):
        return grad
    if unrecorded(grad):  # (a backward without create_graph: the arrays alone, see _op.plain)
        data = grad._data
        for d in sorted(dims):
            data = unsqueezed_array(data, d)
        return _share(plain(data), grad)
    for d in sorted(dims):
        grad = unsqueeze(grad, d)
    return grad


class Sum(Op):
    """d sum(x) = 1 for every element"""
    _grad_fn_name = "SumBackward0"
    _saved_values = {"self_sym_sizes": "in_shape"}

    @staticmethod
    def forward(ctx, x, dims=None, keepdim=False, dtype=None):
        ctx.in_shape, ctx.dims, ctx.keepdim = x.shape, dims, keepdim
        out = sum_like_torch(x, dims, keepdim, dtype)  # (torch's order of additions: its last bits)
        return out if dims is None else c_order(out)  # (over every dim, a number)

    @staticmethod
    def backward(ctx, grad):
        g = _unsqueeze_to(grad, ctx.in_shape, ctx.dims, ctx.keepdim)
        return expand_to(g, ctx.in_shape)  # (a 0-d gradient broadcasts as it is)

    @staticmethod
    def jvp(ctx, t):
        return Sum.apply(t, dims=ctx.dims, keepdim=ctx.keepdim, dtype=ctx.output._data.dtype)


class SumDim(Sum):
    """sum over the dims given (None too, which keeps keepdim): torch's node shows them as given"""
    _grad_fn_name = "SumBackward1"
    _saved_values = {"dim": "shown_dims", "keepdim": "keepdim", "self_sym_sizes": "in_shape"}

    @staticmethod
    def forward(ctx, x, dims=None, keepdim=False, dtype=None, given_dim=None):
        ctx.given_dim = given_dim  # (shown as torch's node shows it when read: see show_on_read)
        return Sum.forward(ctx, x, dims, keepdim, dtype)


class _NotGiven:
    """A reduction's argument the caller left out (dim, correction). torch's node tells it from one given as None:
    x.sum() records SumBackward0, x.sum(None) SumBackward1 (which keeps keepdim); x.var() shows correction None,
    x.var(None) shows 1."""

    def __repr__(self):
        return "None"


_NOT_GIVEN = _NotGiven()


def show_on_read(*classes, **values):
    """Properties of these ops' nodes, which their `_saved_values` name: a value torch's node shows, computed from
    the ctx when grad_fn._saved_<name> reads it (timed ops store the argument as given in forward, nothing more)."""
    for cls in classes:
        for name, value in values.items():
            setattr(cls._backward_cls, name, property(value))


show_on_read(SumDim, shown_dims=lambda node: shown_dims(node.given_dim))


def _int_to_sum_dtype(x, dtype):
    if dtype is not None:
        from .._dtype import to_dtype
        return to_dtype(dtype).np
    if x.dtype.name in ("bool", "uint8", "int8", "int16", "int32"):
        return np.int64
    return None


def _dims(dim, ndim, op, ranges_first=True):
    """reduce_dims, with one int dim (the common call) wrapped by one_dim."""
    return (one_dim(dim, ndim, op),) if type(dim) is int and ndim else reduce_dims(dim, ndim, op, ranges_first)


def every_dim_if_none_given(dim, ndim):
    """torch reduces over every dim when dim is an empty list or tuple (x.sum([]) is x.sum((0, 1)))."""
    return tuple(range(ndim)) if isinstance(dim, (list, tuple)) and len(dim) == 0 else dim


def sum(input, dim=_NOT_GIVEN, keepdim=False, *, dtype=None):
    if dim is _NOT_GIVEN and dtype is None and input._data.dtype.kind in "fc":  # the common call: nothing to check
        return Sum.apply(input)  # (forward's defaults: no keywords to pass through)
    need_grad_dtype(input, dtype, "sum")
    dt = _int_to_sum_dtype(input, dtype)
    if dim is _NOT_GIVEN:
        return Sum.apply(input, dims=None, keepdim=False, dtype=dt)
    dims = None if dim is None else _dims(every_dim_if_none_given(dim, input.ndim), input.ndim, "sum")
    return SumDim.apply(input, dims=dims, keepdim=keepdim, dtype=dt, given_dim=dim)


_FLOAT16 = np.dtype(np.float16)


def _count(x, dims):
    """How many elements of x a reduction over dims (None: all) takes in each result."""
    return x.size if dims is None else math.prod([x.shape[d] for d in dims])


class Mean(Op):
    """d mean(x) = 1/n for every element"""
    _grad_fn_name = "MeanBackward0"
    _saved_values = {"self_sym_sizes": "in_shape", "self_sym_numel": "n"}

    @staticmethod
    def forward(ctx, x, dims=None, keepdim=False, dtype=None):
        ctx.in_shape, ctx.dims, ctx.keepdim, ctx.dtype = x.shape, dims, keepdim, dtype
        ctx.n = _count(x, dims)
        # torch's steps, a sum in its order then a division by n (float16 sums in float32), in the dtype asked for
        # (the engine brings the gradient back to x's)
        out = mean_like_torch(x, dims, keepdim, dtype)
        return c_order(out) if dims is not None else out.reshape((1,) * x.ndim) if keepdim else out  # (0-d, or
        # its dims kept: x.mean(None, keepdim=True))

    @staticmethod
    def backward(ctx, grad):
        if ctx.dims is None and ctx.n and grad._data.dtype.kind == "f" and unrecorded(grad):
            # over every element, where nothing records: each gets grad / n (the same bits as the division of the
            # expanded gradient below), divided once and filled in (torch's result is a fresh dense tensor too)
            return plain(np.full(ctx.in_shape, _by_number(operator.truediv, grad._data, ctx.n), grad._data.dtype))
        g = _unsqueeze_to(grad, ctx.in_shape, ctx.dims, ctx.keepdim)
        # torch's order (over an empty dim, nothing is divided by 0) and its div by a number (DivBackward1)
        return div_scalar(expand_to(g, ctx.in_shape), ctx.n)

    @staticmethod
    def jvp(ctx, t):
        return Mean.apply(t, dims=ctx.dims, keepdim=ctx.keepdim, dtype=ctx.dtype)


class MeanDim(Mean):
    """mean over the dims given (None too, which keeps keepdim): torch's node shows them as given, and x's numel"""
    _grad_fn_name = "MeanBackward1"
    _saved_values = {"dim": "shown_dims", "keepdim": "keepdim", "self_sym_numel": "numel",
                     "self_sym_sizes": "in_shape"}

    @staticmethod
    def forward(ctx, x, dims=None, keepdim=False, dtype=None, given_dim=None):
        ctx.given_dim = given_dim  # (shown when read, as the numel: see show_on_read)
        return Mean.forward(ctx, x, dims, keepdim, dtype)


show_on_read(MeanDim, shown_dims=lambda node: shown_dims(node.given_dim), numel=lambda node: math.prod(node.in_shape))


def mean(input, dim=_NOT_GIVEN, keepdim=False, *, dtype=None):
    plain = dtype is None and input._data.dtype.kind in "fc"
    if plain and dim is _NOT_GIVEN:  # the common call: nothing to check
        return Mean.apply(input)  # (forward's defaults: no keywords to pass through)
    np_dtype = None if plain else _mean_dtype(input, dtype)
    if np_dtype is not None and input._data.dtype.kind == "c" and np_dtype.kind != "c":
        input, np_dtype = input.to(dtype), None  # (complex to real: the cast warns, as torch's)
    if dim is _NOT_GIVEN:
        return Mean.apply(input, dtype=np_dtype)
    dims = None if dim is None else _dims(every_dim_if_none_given(dim, input.ndim), input.ndim, "mean")
    return MeanDim.apply(input, dims=dims, keepdim=keepdim, dtype=np_dtype, given_dim=dim)


def _mean_dtype(x, dtype):
    """The numpy dtype mean computes in when one is asked for (None: x's own), after torch's check that the
    result is floating point or complex."""
    from .._dtype import to_dtype
    from ._kernels import _NAMES
    out = (x._data.dtype if dtype is None else to_dtype(dtype).np)
    if out.kind not in "fc":
        which = "Input" if dtype is None else "Optional"
        raise RuntimeError(f"mean(): could not infer output dtype. {which} dtype must be either a floating point or "
                           f"complex dtype. Got: {_NAMES.get(out.name, out.name)}; use x.float().mean()")
    return None if dtype is None else out


class Var(Op):
    """d var(x) = 2 (x - mean) / (n - correction)"""
    _grad_fn_name = "VarBackward0"
    _saved_names = ("self",)
    _saved_values = {"dim": "shown_dims", "correction": "shown_correction", "keepdim": "keepdim"}

    @staticmethod
    def forward(ctx, x, dims=None, correction=1, keepdim=False, given_dim=None, shown_correction=1):
        ctx.in_shape, ctx.dims, ctx.keepdim = x.shape, dims, keepdim
        ctx.shown_dims, ctx.shown_correction = shown_dims(dims if given_dim is None else given_dim), shown_correction
        n = _count(x, dims)
        ctx.denom, ctx.dof = builtins.max(n - correction, 0), n - correction
        ctx.save_for_backward(x)
        return _half_again(_torch_variance(x, dims, correction, keepdim), x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return _var_backward(ctx, x, _unsqueeze_to(grad, ctx.in_shape, ctx.dims, ctx.keepdim))

    @staticmethod
    def jvp(ctx, t):
        x = ctx.inputs[0]
        centered = x - _mean_kept(x, ctx.dims)
        return Sum.apply(centered * t, dims=ctx.dims, keepdim=ctx.keepdim) * (2.0 / ctx.denom)


class Std(Op):
    """d std(x) = (x - mean) / ((n - correction) std)"""
    _grad_fn_name = "StdBackward0"
    _saved_names, _saved_values = ("self", "result"), Var._saved_values

    @staticmethod
    def forward(ctx, x, dims=None, correction=1, keepdim=False, given_dim=None, shown_correction=1):
        ctx.in_shape, ctx.dims, ctx.keepdim = x.shape, dims, keepdim
        ctx.shown_dims, ctx.shown_correction = shown_dims(dims if given_dim is None else given_dim), shown_correction
        n = _count(x, dims)
        ctx.denom, ctx.dof = builtins.max(n - correction, 0), n - correction
        out = _half_again(_torch_variance(x, dims, correction, keepdim, root=True), x)
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        gs = (grad / MulScalar.apply(out, 2)).masked_fill(out == 0, 0.0)  # as torch: 0 where the std is 0
        return _var_backward(ctx, x, _unsqueeze_to(gs, ctx.in_shape, ctx.dims, ctx.keepdim))

    @staticmethod
    def jvp(ctx, t):
        x = ctx.inputs[0]
        centered = x - _mean_kept(x, ctx.dims)
        return Sum.apply(centered * t, dims=ctx.dims, keepdim=ctx.keepdim) / (ctx.output * ctx.denom)


def _torch_variance(x, dims, correction, keepdim, root=False):
    """var (root: std) as torch computes it: float32 and float64 reduced to one number in two passes in torch's
    own order (var_all_like_torch), to several by Welford's updates (var_welford_like_torch), the root taken in
    float64; else (complex, long reductions) by _variance."""
    if x.size and x.size == _count(x, dims) and x.dtype.kind == "f" and x.dtype != _FLOAT16:
        var = var_all_like_torch(x, correction)
        shape = [1 if dims is None or d in dims else s for d, s in enumerate(x.shape)] if keepdim else \
            [s for d, s in enumerate(x.shape) if dims is not None and d not in dims]
        with np.errstate(invalid="ignore"):
            return np.full(shape, np.sqrt(var) if root else var).astype(x.dtype)
    pair = _welford(x, dims, correction, keepdim, root)
    if pair is not None:  # (several results, or float16's one: torch's Welford updates, in float64)
        return pair[0]
    return _variance(x, dims, correction, keepdim, root)


def _welford(x, dims, correction, keepdim, root):
    """(var or std, mean) by torch's Welford pass, in x's dtype (None where it is not taken: see
    var_welford_like_torch)."""
    every = tuple(range(x.ndim)) if dims is None else dims
    pair = var_welford_like_torch(x, every, correction) if x.size and x.dtype.kind == "f" else None
    if pair is None:
        return None
    var, mean = (p.reshape([1 if d in every else s for d, s in enumerate(x.shape)]) if keepdim else p for p in pair)
    with np.errstate(invalid="ignore"):
        return c_order((np.sqrt(var) if root else var).astype(x.dtype)), c_order(mean.astype(x.dtype))


def _variance(x, dims, correction, keepdim, root=False):
    """np.var, with the exact 0 that torch's Welford update gives (to several numbers) for a slice of equal values
    where the two passes can leave 2e-16 (std's gradient is masked only at an exact 0); _torch_variance takes
    torch's own order to one number. Computed in torch's accumulating type: float16 in float32 (the result stays
    float32: the caller rounds it), float32 in float64 (two float32 passes over 5000 elements lose 1e-5); root: the
    standard deviation, its root taken before the rounding."""
    given = x.dtype
    if x.dtype == _FLOAT16:
        x = x.astype(np.float32)
    elif x.dtype == np.float32:
        x = x.astype(np.float64)
    fast = x.dtype.kind == "f"  # (complex: numpy's own steps)
    out, mean = _two_passes(x, dims, correction, keepdim) if fast else \
        (c_order(np.var(x, axis=dims, ddof=correction, keepdims=keepdim)), None)
    if out.size > 1 and x.size > out.size * correction and (mean is None or _maybe_equal(x, out, mean, dims,
                                                                                          correction)):
        top = np.max(x, axis=dims, keepdims=keepdim)  # (0 / 0 above stays nan)
        out[(top == np.min(x, axis=dims, keepdims=keepdim)) & np.isfinite(top)] = 0
    if root:
        with np.errstate(invalid="ignore"):
            np.sqrt(out, out=out)  # (in place: an array, even 0-d)
    return out.astype(np.float32) if given == np.float32 else out


def _half_again(out, x):
    """A float16 x's result, computed in float32 (_variance), rounded to float16 at the end as torch does."""
    return out.astype(_FLOAT16) if x.dtype == _FLOAT16 else out


def _maybe_equal(x, out, mean, dims, correction):
    """Whether some slice may hold equal values: those leave at most the rounding of their mean, squared (a
    cheap test that spares the exact one when no result is that small)."""
    n = _count(x, dims)
    tiny = (4 * (math.log2(n) + 2) * np.finfo(x.dtype).eps) ** 2 * n / (n - correction)
    return bool((out <= mean.reshape(out.shape) ** 2 * tiny).any())


def _two_passes(x, dims, correction, keepdim):
    """np.var of a float32 or float64 x by its own steps (the same numbers), with the array's methods (np.var's
    Python layers cost as much as the arithmetic on a small tensor); and the mean, keeping the reduced dims."""
    n = _count(x, dims)
    mean = x.sum(axis=dims, keepdims=True)
    mean /= n
    centered = x - mean
    centered *= centered
    return c_order(centered.sum(axis=dims, keepdims=keepdim) / builtins.max(n - correction, 0)), mean


def _mean_kept(x, dims):
    """x's mean over dims (None: every dim), to broadcast against x: torch's var_backward takes x.mean() over every
    dim (MeanBackward0), x.mean(dims, keepdim=True) else"""
    return x.mean() if dims is None else x.mean(dims, keepdim=True)


def _var_backward(ctx, x, g):
    """torch's var_backward: 2 (x - mean) / (n - correction) g; over all elements with n <= correction,
    the constant nan where x equals the mean and inf elsewhere (times g)."""
    if type(g) is ZeroTangent and unrecorded(g):  # (torch's exact zero, as sgn's gradient: zeros, even times nan)
        return zeros(x._data.shape, x._data.dtype)
    mean = _mean_kept(x, ctx.dims)
    if ctx.dims is None and ctx.dof <= 0:  # (torch's where of two numbers: the default dtype, which the 0-d
        # gradient takes on, cast back to x's after: ToCopyBackward0 under create_graph)
        from .._dtype import get_default_dtype
        return g * Tensor._make(np.where(x._data == mean._data, np.nan, np.inf).astype(get_default_dtype().np))
    return mul_scalar(g, 2.0 / ctx.dof if ctx.dof else math.inf) * (x - mean)  # (torch's order and nodes)


def _var_args(dim, unbiased, correction, x, op, keepdim=False):
    """var's, std's and their _mean forms' arguments as their op takes them: dims, correction, and for the node the dim
    as given and the correction as torch's node shows it (as given, 1 or 0 for unbiased, 1 where a dim was given: its
    overload with unbiased; None where neither was)."""
    if isinstance(dim, bool):  # var(x, unbiased): torch's third form, which takes nothing else
        if unbiased is not None or correction is not None and correction is not _NOT_GIVEN or keepdim:
            raise TypeError(f"{op}(): {op}(input, unbiased) takes no other argument (got unbiased={dim} in the "
                            f"place of dim); write {op}(input, None, {dim}, keepdim) or {op}(input, dim, "
                            "correction=..., keepdim=...)")
        unbiased, dim = dim, _NOT_GIVEN
    if unbiased is not None and correction is not None and correction is not _NOT_GIVEN:
        raise TypeError(f"{op}(): takes unbiased or correction, not both (got unbiased={unbiased}, correction="
                        f"{correction}); correction=0 is unbiased=False, correction=1 unbiased=True")
    shown = correction if correction is not _NOT_GIVEN else int(unbiased) if unbiased is not None else \
        None if dim is _NOT_GIVEN else 1
    if correction is None or correction is _NOT_GIVEN:
        correction = 1 if unbiased is None or unbiased else 0
    given = None if dim is _NOT_GIVEN else dim
    dim = every_dim_if_none_given(given, x.ndim)
    dims = None if dim is None else _dims(dim, x.ndim, op, ranges_first=False)  # (torch's order for var, std)
    kept = math.prod(n for d, n in enumerate(x.shape) if dims is not None and d not in dims)
    if x.numel() / builtins.max(kept, 1) - correction <= 0:  # (torch's reduction factor: 0 for an empty result)
        warn_at_user_line(f"{op}(): degrees of freedom is <= 0. Correction should be strictly less than the reduction "
                          "factor (input numel divided by output numel).")
    return dict(dims=dims, correction=correction, given_dim=given, shown_correction=shown)


def var(input, dim=_NOT_GIVEN, unbiased=None, keepdim=False, *, correction=_NOT_GIVEN):
    return Var.apply(input, keepdim=keepdim, **_var_args(dim, unbiased, correction, input, "var", keepdim))


def std(input, dim=_NOT_GIVEN, unbiased=None, keepdim=False, *, correction=_NOT_GIVEN):
    return Std.apply(input, keepdim=keepdim, **_var_args(dim, unbiased, correction, input, "std", keepdim))


class VarMean(Op):
    """(var(x), mean(x)) in one node: the gradient is var's plus mean's, of the outputs used"""
    _grad_fn_name = "VarMeanBackward0"
    _saved_names, _saved_values = ("self",), Var._saved_values

    @staticmethod
    def forward(ctx, x, dims=None, correction=1, keepdim=False, given_dim=None, shown_correction=1):
        ctx.set_materialize_grads(False)  # (torch's formula adds only the terms of the outputs used)
        var = Var.forward(ctx, x, dims, correction, keepdim, given_dim, shown_correction)
        mean = Mean.forward(ctx, x, dims, keepdim)
        pair = _welford(x, dims, correction, keepdim, False)
        return (var, _welford_mean(x, dims, keepdim, mean)) if pair is None else pair  # (torch's var_mean: one
        # Welford pass gives both)

    @staticmethod
    def backward(ctx, gvar, gmean):
        if gvar is None:
            ctx.saved_tensors  # (torch unpacks what the node saved in any case: an input changed in place raises)
        return _plus_mean_grad(ctx, None if gvar is None else Var.backward(ctx, gvar), gmean)

    @staticmethod
    def jvp(ctx, t):
        return Var.jvp(ctx, t), Mean.apply(t, dims=ctx.dims, keepdim=ctx.keepdim)


class StdMean(Op):
    """(std(x), mean(x)) in one node: the gradient is std's plus mean's, of the outputs used"""
    _grad_fn_name = "StdMeanBackward0"
    _saved_names, _saved_values = ("self", "result0"), VarMean._saved_values

    @staticmethod
    def forward(ctx, x, dims=None, correction=1, keepdim=False, given_dim=None, shown_correction=1):
        ctx.set_materialize_grads(False)
        std = Std.forward(ctx, x, dims, correction, keepdim, given_dim, shown_correction)
        mean = Mean.forward(ctx, x, dims, keepdim)
        pair = _welford(x, dims, correction, keepdim, True)
        if pair is None:
            return std, _welford_mean(x, dims, keepdim, mean)
        np.copyto(std, pair[0])  # (torch's std_mean: one Welford pass gives both; std's saved result is this array)
        return std, pair[1]

    @staticmethod
    def backward(ctx, gstd, gmean):
        if gstd is None:
            ctx.saved_tensors  # (torch unpacks what the node saved in any case: an input changed in place raises)
        return _plus_mean_grad(ctx, None if gstd is None else Std.backward(ctx, gstd), gmean)

    @staticmethod
    def jvp(ctx, t):
        x, std = ctx.inputs[0], ctx.output[0]
        centered = x - _mean_kept(x, ctx.dims)
        tstd = Sum.apply(centered * t, dims=ctx.dims, keepdim=ctx.keepdim) / (std * ctx.denom)
        return tstd, Mean.apply(t, dims=ctx.dims, keepdim=ctx.keepdim)


def _welford_mean(x, dims, keepdim, mean):
    """var_mean's mean where _welford does not take torch's pass (long reductions): a float32 or float16 x's mean in
    float64, rounded once, as torch's Welford pass accumulates it; else mean as given."""
    if x.dtype not in (np.float32, _FLOAT16) or not x.size:
        return mean
    return c_order(np.asarray(x.mean(axis=dims, dtype=np.float64, keepdims=keepdim)).astype(x.dtype))


def _plus_mean_grad(ctx, grad, gmean):
    """torch's var_mean_backward/std_mean_backward: the first output's gradient, plus mean's if it has one."""
    if gmean is None:
        return grad
    g = Mean.backward(ctx, gmean)
    return g if grad is None else grad + g


def var_mean(input, dim=_NOT_GIVEN, unbiased=None, keepdim=False, *, correction=_NOT_GIVEN):
    """(var, mean) over dim, in one call"""
    _floating(input, "var_mean")
    return VarMean.apply(input, keepdim=keepdim, **_var_args(dim, unbiased, correction, input, "var_mean", keepdim))


def std_mean(input, dim=_NOT_GIVEN, unbiased=None, keepdim=False, *, correction=_NOT_GIVEN):
    """(std, mean) over dim, in one call"""
    _floating(input, "std_mean")
    return StdMean.apply(input, keepdim=keepdim, **_var_args(dim, unbiased, correction, input, "std_mean", keepdim))


def _floating(input, op):
    if not (input.is_floating_point() or input.is_complex()):
        raise RuntimeError(f"{op} only support floating point and complex dtypes (convert the input, e.g. x.double())")


def _exclusive_cumprods(xd, ax):
    """The products of the elements before / after each one along ax (inf * 0 is nan, silently as torch)."""
    with np.errstate(all="ignore"):
        ones = np.ones_like(np.take(xd, [0], axis=ax))
        left = np.cumprod(np.concatenate([ones, np.delete(xd, -1, axis=ax)], axis=ax), axis=ax)
        right = np.flip(np.cumprod(np.concatenate([ones, np.delete(np.flip(xd, ax), -1, axis=ax)], axis=ax),
                                   axis=ax), ax)
        return left, right


def _prod_of_others(x, dim):
    """prod_{j != i} x_j along dim, in Tensor ops so that it has a gradient of its own (second order of
    prod at a zero): torch's exclusive cumulative products both ways, through cumprod, whose own
    gradient places nan and inf where torch's does."""
    flat = x.reshape(-1) if dim is None else x
    d, n = (0 if dim is None else dim), flat.shape[0 if dim is None else dim]
    if n == 1:  # no others: a constant 1, with no graph (as torch's)
        return Tensor._make(np.ones(x.shape, x._data.dtype))
    ones = Tensor._make(np.ones(flat.shape[:d] + (1,) + flat.shape[d + 1:], x._data.dtype))
    left = cat([ones, flat.narrow(d, 0, n - 1)], d).cumprod(d)
    right = cat([ones, flat.narrow(d, 1, n - 1).flip(d)], d).cumprod(d).flip(d)
    return (left * right).reshape(x.shape)


class Prod(Op):
    """d prod(x) / dx_i = product of the other elements"""
    _grad_fn_name = "ProdBackward0"
    _saved_names = ("self", "result")

    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False, dtype=None):
        ctx.in_shape, ctx.dim, ctx.keepdim, ctx.dtype = x.shape, dim, keepdim, dtype
        if dim is None and dtype is None and x.dtype.kind == "f" and x.itemsize > 2 and x.flags.c_contiguous:
            out = np.asarray(prod_like_torch(x.reshape(-1)))  # (torch's order of multiplications)
        else:
            out = c_order(np.prod(x if dtype is None else x.astype(dtype), axis=dim, keepdims=keepdim))
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        if ctx.dtype is None:
            return _prod_backward(ctx, x, out, grad)
        # computed in the dtype asked for, as torch: x cast to it, the gradient cast back to x's dtype
        from .._dtype import from_numpy_dtype
        return _prod_backward(ctx, x.to(from_numpy_dtype(out._data.dtype)), out, grad).to(x.dtype)

    @staticmethod
    def jvp(ctx, t):
        return _prod_jvp(ctx, t)


def _prod_backward(ctx, x, out, grad):
    """prod's gradient: grad times the product of the other elements (out / x where no element is 0)."""
    if x.ndim == 0:  # the product of one number is that number (torch passes grad through)
        return grad
    dims = None if ctx.dim is None else (ctx.dim,)
    g = _unsqueeze_to(grad, ctx.in_shape, dims, ctx.keepdim)
    if not (x._data == 0).any():
        return g * (_unsqueeze_to(out, ctx.in_shape, dims, ctx.keepdim) / x).conj()
    if grad_mode.is_grad_enabled():  # create_graph: the product of the others as a differentiable op
        return g * _prod_of_others(x, ctx.dim).conj()
    if ctx.dim is None and (x._data == 0).sum() > 1:  # every product of others has a zero: torch returns
        return Tensor._make(np.zeros_like(x._data))     # zeros, whatever the gradient (even nan or inf)
    # with zeros: the product of the others, from exclusive cumulative products both ways
    axis = ctx.dim if ctx.dim is not None else None
    xd = x._data.reshape(-1) if axis is None else x._data
    ax = 0 if axis is None else axis
    left, right = _exclusive_cumprods(xd, ax)
    with np.errstate(all="ignore"):
        others = Tensor._make((left * right).reshape(ctx.in_shape))
    return g * others.conj()


def _prod_jvp(ctx, t):
    x, dims = ctx.inputs[0], None if ctx.dim is None else (ctx.dim,)
    if not (x._data == 0).any():
        return Sum.apply(t / x, dims=dims, keepdim=ctx.keepdim) * ctx.output
    # with zeros: sum_i t_i * (product of the others), from exclusive cumulative products both ways
    ax = 0 if ctx.dim is None else ctx.dim
    xd = x._data.reshape(-1) if ctx.dim is None else x._data
    left, right = _exclusive_cumprods(xd, ax)
    with np.errstate(all="ignore"):
        others = Tensor._make((left * right).reshape(x._data.shape))
    return Sum.apply(t * others, dims=dims, keepdim=ctx.keepdim)


class ProdDim(Prod):
    """prod along one dim, which torch's node shows as given (a 0-d x's too, which numpy reduces over as None)"""
    _grad_fn_name = "ProdBackward1"
    _saved_values = {"dim": "shown_dim", "keepdim": "keepdim"}

    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False, dtype=None, given_dim=None):
        ctx.shown_dim = shown_dim(dim if given_dim is None else given_dim)
        return Prod.forward(ctx, x, dim, keepdim, dtype)


def prod(input, dim=None, keepdim=False, *, dtype=None):
    need_grad_dtype(input, dtype, "prod")
    np_dtype = _int_to_sum_dtype(input._data, dtype)  # (bool and integers below 64 bits: int64, as sum)
    if np_dtype is not None and input._data.dtype.kind == "c" and np.dtype(np_dtype).kind != "c":
        input, np_dtype = input.to(dtype), None  # (complex to real: the cast warns, as torch's)
    if np_dtype is not None and np.dtype(np_dtype).kind not in "fc":  # (integers have no gradient)
        input, np_dtype = Tensor._make(input._data.astype(np_dtype)), None
    if dim is None:
        return Prod.apply(input, dim=None, dtype=np_dtype)
    d = one_dim(dim, input.ndim, "prod")
    d = d if input.ndim else None  # (0-d: dim 0 or -1, over nothing)
    return ProdDim.apply(input, dim=d, keepdim=keepdim, dtype=np_dtype, given_dim=dim)


class AmaxOp(Op):
    """d max(x) = 1 at the maximal entries, shared evenly among ties"""
    _grad_fn_name = "AmaxBackward0"
    _saved_names, _saved_values = ("self", "result"), {"dim": "shown_dims", "keepdim": "keepdim"}
    _np = staticmethod(np.maximum.reduce)  # (np.amax is a Python layer over it)

    @classmethod
    def _fwd(cls, ctx, x, dims, keepdim):
        ctx.in_shape, ctx.dims, ctx.keepdim = x.shape, dims, keepdim
        out = c_order(cls._np(x, axis=dims, keepdims=keepdim))
        if out.dtype.kind == "f" and x.ndim and not out.all():  # (an extreme that is 0: which zero, below)
            out = cls._which_zero(x, out, dims)
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def _which_zero(x, out, dims):
        return _first_zero(x, out, dims)

    @staticmethod
    def forward(ctx, x, dims=None, keepdim=False, given_dim=()):
        ctx.shown_dims = shown_dims(given_dim)  # (amax() shows its default, ())
        return AmaxOp._fwd(ctx, x, dims, keepdim)

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        dims = ctx.dims if ctx.dims is not None else tuple(range(len(ctx.in_shape)))
        kept = [1 if i in dims else n for i, n in enumerate(ctx.in_shape)]  # the reduced dims kept, size 1
        mask = Tensor._make((x._data == out._data.reshape(kept)).astype(x._data.dtype))
        count = mask._data.sum(axis=dims, keepdims=True)
        g = grad if ctx.keepdim else reshape(grad, kept)  # (a view, as torch's amax backward)
        return g / Tensor._make(count) * mask

    @staticmethod
    def jvp(ctx, t):
        x, out = ctx.inputs[0]._data, ctx.output._data
        dims = ctx.dims if ctx.dims is not None else tuple(range(len(ctx.in_shape)))
        mask = (x == (out if ctx.keepdim else np.expand_dims(out, dims))).astype(x.dtype)  # ties share evenly
        count = Tensor._make(np.asarray(mask.sum(axis=dims, keepdims=ctx.keepdim)))
        return Sum.apply(t * Tensor._make(mask), dims=dims, keepdim=ctx.keepdim) / count


def _first_zero(x, out, dims):
    """out where the extreme is +0 or -0: the sign of the first zero along the reduced dims. torch's loop keeps
    the first of equal values (numpy's the last); past a few SIMD widths (32 float32, 16 float64 elements)
    torch's own pick depends on its vector lanes, and the first is as good a choice as any."""
    dims = tuple(range(x.ndim)) if dims is None else dims
    kept = tuple(n for i, n in enumerate(x.shape) if i not in dims)
    rows = np.moveaxis(x, dims, tuple(range(x.ndim - len(dims), x.ndim))).reshape(kept + (-1,))
    first = np.take_along_axis(rows, (rows == 0).argmax(-1)[..., None], -1).reshape(out.shape)
    return np.where(out == 0, first, out)


class AminOp(AmaxOp):
    _grad_fn_name = "AminBackward0"
    _np = staticmethod(np.minimum.reduce)

    @staticmethod
    def forward(ctx, x, dims=None, keepdim=False, given_dim=()):
        ctx.shown_dims = shown_dims(given_dim)
        return AminOp._fwd(ctx, x, dims, keepdim)


def _evenly_distribute(grad, x, out):
    """max()/min() over everything: grad / count at the extreme entries (the nan ones if the result
    is nan), exactly 0 elsewhere (masked, as torch on CPU: a nan grad does not spread)."""
    from .elementwise import where
    if out.ndim == 0:  # torch's steps: zeros with grad / count written at the extremes (MaskedFillBackward1)
        mask = isnan(x) if np.isnan(out._data) else x == out
        return Tensor._make(np.zeros(x._data.shape, x._data.dtype)).masked_fill(mask, grad / mask.sum())
    # vmap runs this once on the whole batch: out and grad then carry leading batch dims
    batch = out.ndim
    lead = out.shape + (1,) * (x.ndim - batch)
    out, grad = out.reshape(lead), grad.reshape(lead)
    mask = where(isnan(out), isnan(x), x == out)
    count = mask.sum(dim=tuple(range(batch, x.ndim)), keepdim=True) if x.ndim > batch else mask
    return where(mask, grad / count, 0.0)


# torch's CPU max()/min() over everything: lanes of 4 float64 or 8 float32 (x86's AVX2 vectors), each the extreme
# of every 4th (8th) element; then the lanes are folded, in this order of preference when they tie (x86's max and
# min give their second operand on equal values: float64 folds lane after lane, float32 pairs lanes as a tree)
_LANES = {np.dtype(np.float64): (4, (3, 2, 1, 0)), np.dtype(np.float32): (8, (7, 3, 5, 1, 6, 2, 4, 0))}


def _lane_zero(x, out, dims):
    """max()/min() over everything that is a zero: the zero torch's vectorised loop keeps (its sign shows in 1 / x).
    Fewer elements than lanes are folded one by one, each later equal value winning: the last zero. (float16 and
    the reductions along dims keep the first zero, _first_zero.)"""
    lanes = _LANES.get(x.dtype)
    if lanes is None:
        return _first_zero(x, out, dims)
    width, preference = lanes
    flat = x.reshape(-1)
    zeros = np.flatnonzero(flat == 0)
    if flat.size >= width:
        lane = zeros % width
        present = np.zeros(width, bool)
        present[lane] = True
        zeros = zeros[lane == next(k for k in preference if present[k])]
    return np.asarray(flat[zeros[-1]], out.dtype)


class MaxAll(AmaxOp):
    _grad_fn_name = "MaxBackward1"
    _saved_values = {}
    _which_zero = staticmethod(_lane_zero)

    @staticmethod
    def forward(ctx, x, dims=None, keepdim=False):
        return MaxAll._fwd(ctx, x, dims, keepdim)

    @staticmethod
    def backward(ctx, grad):
        return _evenly_distribute(grad, *ctx.saved_tensors)


class MinAll(AminOp):
    _grad_fn_name = "MinBackward1"
    _saved_values = {}
    _which_zero = staticmethod(_lane_zero)

    @staticmethod
    def forward(ctx, x, dims=None, keepdim=False):
        return MinAll._fwd(ctx, x, dims, keepdim)

    @staticmethod
    def backward(ctx, grad):
        return _evenly_distribute(grad, *ctx.saved_tensors)


def _check_nonempty(x, op):
    if x.numel() == 0:
        raise RuntimeError(f"{op}(): Expected reduction dim to be specified for input.numel() == 0. "
                           "Specify the reduction dim with the 'dim' argument.")


def _extreme_dims(x, dim, op):
    """amax/amin's dims: all of them (then x must not be empty), or given ones that are not empty."""
    if dim is None or isinstance(dim, (list, tuple)) and len(dim) == 0:
        _check_nonempty(x, op)
        return None
    if x.ndim:  # (an empty dim is refused before a repeated one, as torch)
        for d in dim if isinstance(dim, (list, tuple)) else (dim,):
            _check_reduction_size(x, one_dim(d, x.ndim, op), op)
    return _dims(dim, x.ndim, op)


def amax(input, dim=(), keepdim=False):
    dims = _extreme_dims(input, dim, "amax")
    _no_order(input, "max_values_cpu", input._data.size)  # (an empty result needs no kernel)
    return AmaxOp.apply(input, dims=dims, keepdim=keepdim, given_dim=dim)


def amin(input, dim=(), keepdim=False):
    dims = _extreme_dims(input, dim, "amin")
    _no_order(input, "min_values_cpu", input._data.size)
    return AminOp.apply(input, dims=dims, keepdim=keepdim, given_dim=dim)


def _no_order(x, kernel, needed=True):
    """Complex numbers have no order: torch's NotImplementedError from the max or min kernel it would run
    (checked after the dims, as torch; ops/_checks.py lets a complex input through to here)."""
    if needed and x._data.dtype.kind == "c":
        from ._kernels import _NAMES
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_NAMES[x._data.dtype.name]}\': complex '
                                  "numbers have no order; compare their x.abs() or x.real")


class MaxDim(Op):
    """values and indices along dim; the gradient goes to the chosen index. As torch's node, it saves the
    indices it returns (changed in place, backward refuses), and shows the dim as the user gave it (given_dim: dim
    before it was wrapped)."""
    _grad_fn_name = "MaxBackward0"
    _saved_names = ("indices",)
    _saved_values = {"dim": "given_dim", "keepdim": "keepdim", "self_sym_sizes": "in_shape"}
    _arg, _extreme = "argmax", "max"  # (the array's methods: numpy's functions add 0.7 us each)

    @classmethod
    def _fwd(cls, ctx, x, dim, keepdim, given_dim):
        ctx.in_shape, ctx.dim, ctx.keepdim = x.shape, dim, keepdim
        ctx.given_dim = shown_dim(dim if given_dim is None else given_dim)
        ctx.scalar = x.ndim == 0
        if ctx.scalar:  # a 0-d tensor is its own max, at index 0
            return x.copy(), _saved_indices(ctx, np.zeros((), np.int64))
        plain = type(x) is np.ndarray  # (vmap's batched arrays: numpy's functions know them)
        idx = getattr(x, cls._arg)(axis=dim) if plain else getattr(np, cls._arg)(x, axis=dim)
        idx_k = idx.reshape(x.shape[:dim] + (1,) + x.shape[dim + 1:])  # (np.expand_dims costs 2 us more)
        values = getattr(x, cls._extreme)(axis=dim, keepdims=True) if plain else None  # (take_along_axis: 3 us)
        if values is None or values.dtype.kind == "f" and not values.all():  # a zero: the sign of the one at the
            values = np.take_along_axis(x, idx_k, axis=dim)                  # index, as torch
        ctx.idx = idx_k
        if not keepdim:
            values, idx_out = values.reshape(idx.shape), idx
        else:
            idx_out = idx_k
        return c_order(values), _saved_indices(ctx, c_order(np.asarray(idx_out, dtype=np.int64)))

    @staticmethod
    def forward(ctx, x, dim, keepdim=False, given_dim=None):
        return MaxDim._fwd(ctx, x, dim, keepdim, given_dim)

    @staticmethod
    def backward(ctx, grad, _grad_idx):
        from .rearrange import Scatter
        (indices,) = ctx.saved_tensors  # (read first: a freed node raises, a 0-d one too)
        if ctx.scalar:  # (torch's steps too, which a double backward's graph shows)
            return ScatterScalar.apply(grad, index=indices, dim=ctx.given_dim), None, None
        d = dim_passed_on(ctx.dim, ctx.given_dim, len(ctx.in_shape))  # (torch passes the dim on as given)
        g = grad if ctx.keepdim else grad.unsqueeze(d)
        idx = indices._data if ctx.keepdim else np.expand_dims(indices._data, ctx.dim)
        # torch's value_selecting_reduction_backward: zeros with g written at the indices (ScatterBackward0)
        zeros = Tensor._make(np.zeros(ctx.in_shape, g._data.dtype))
        return Scatter.apply(zeros, g, dim=ctx.dim, index=idx, given_dim=d), None, None

    @staticmethod
    def jvp(ctx, t, _dim):
        from .index import Gather
        if ctx.scalar:
            return t, None
        values = Gather.apply(t, ctx.dim, ctx.idx)
        return (values if ctx.keepdim else values.squeeze(ctx.dim)), None


def _saved_indices(ctx, indices):
    """The indices max (min) returns, as the Tensor its node saves: the user's, so an in-place change shows."""
    out = Tensor._make(indices)
    ctx.save_for_backward(out)
    return out


class ScatterScalar(Clone):
    """zeros(()).scatter(dim, index, g) of a 0-d g, index max's tensor(0): g itself; its gradient is gathered back,
    grad itself. As torch's node it keeps the index and shows the dim as max's node does; it has only g's edge
    (torch's has an edge to None first, for the zeros)."""
    _grad_fn_name = "ScatterBackward0"
    _saved_names, _saved_values = ("index",), {"dim": "dim"}

    @staticmethod
    def forward(ctx, g, index, dim):
        ctx.dim = dim
        ctx.save_for_backward(index)
        return g.copy()

    @staticmethod
    def backward(ctx, grad):
        (index,) = ctx.saved_tensors
        return GatherScalar.apply(grad, index=index, dim=ctx.dim)


class ScatterAddScalar(ScatterScalar):
    _grad_fn_name = "ScatterAddBackward0"


class GatherScalar(Clone):
    """gather(g, dim, index) of a 0-d g: g itself; its gradient is scattered back into zeros. As torch's node it
    keeps g (self) and the index."""
    _grad_fn_name = "GatherBackward0"
    _saved_names, _saved_values = ("index", "self"), {"dim": "dim", "sparse_grad": "sparse_grad"}

    @staticmethod
    def forward(ctx, g, index, dim):
        ctx.dim, ctx.sparse_grad = dim, False
        ctx.save_for_backward(index, g)
        return g.copy()

    @staticmethod
    def backward(ctx, grad):
        index, _self = ctx.saved_tensors
        return ScatterAddScalar.apply(grad, index=index, dim=ctx.dim)


class MinDim(MaxDim):
    _grad_fn_name = "MinBackward0"
    _arg, _extreme = "argmin", "min"

    @staticmethod
    def forward(ctx, x, dim, keepdim=False, given_dim=None):
        return MinDim._fwd(ctx, x, dim, keepdim, given_dim)


def max(input, dim=None, keepdim=False, *, other=None):
    if isinstance(dim, Tensor) or other is not None:  # max(input, other): the elementwise maximum
        from .elementwise import maximum
        return maximum(input, dim if other is None else other)
    if dim is None:
        _check_nonempty(input, "max")
        _no_order(input, "max_all")
        return MaxAll.apply(input)
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
        raise TypeError(f"max(): argument 'dim' must be int, not {type(dim).__name__}; pass one dim such as 0 "
                        "or -1 (amax reduces over several)")
    d = int(one_dim(dim, input.ndim, "max"))  # (a numpy integer dim: a Python one for the backward's ops)
    _check_reduction_size(input, d, "max")
    if input._data.dtype.kind == "c":
        raise RuntimeError("max(): does not support complex input (complex numbers have no order; compare their "
                           "x.abs() or x.real)")
    v, i = MaxDim.apply(input, d, keepdim=keepdim, given_dim=dim)
    return return_types_max(v, i)


def min(input, dim=None, keepdim=False, *, other=None):
    if isinstance(dim, Tensor) or other is not None:  # min(input, other): the elementwise minimum
        from .elementwise import minimum
        return minimum(input, dim if other is None else other)
    if dim is None:
        _check_nonempty(input, "min")
        _no_order(input, "min_all")
        return MinAll.apply(input)
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
        raise TypeError(f"min(): argument 'dim' must be int, not {type(dim).__name__}; pass one dim such as 0 "
                        "or -1 (amin reduces over several)")
    d = int(one_dim(dim, input.ndim, "min"))  # (a numpy integer dim: a Python one for the backward's ops)
    _check_reduction_size(input, d, "min")
    if input._data.dtype.kind == "c":
        raise RuntimeError("min(): does not support complex input (complex numbers have no order; compare their "
                           "x.abs() or x.real)")
    v, i = MinDim.apply(input, d, keepdim=keepdim, given_dim=dim)
    return return_types_min(v, i)


def _check_reduction_size(x, d, op):
    if x.ndim and x.shape[d] == 0:
        raise IndexError(f"{op}(): Expected reduction dim {d} to have non-zero size (shape {list(x.shape)}); "
                         f"there is no {op} of nothing: reduce over another dim, or check the tensor is not empty")


class Logsumexp(Op):
    """d logsumexp(x) = softmax(x)"""
    _grad_fn_name = "LogsumexpBackward0"
    _saved_names, _saved_values = ("self", "result"), {"dim": "shown_dims", "keepdim": "keepdim"}

    @staticmethod
    def forward(ctx, x, dims, keepdim=False, given_dim=None):
        ctx.in_shape, ctx.dims, ctx.keepdim = x.shape, dims, keepdim
        ctx.shown_dims = shown_dims(dims if given_dim is None else given_dim)
        m = np.amax(x, axis=dims, keepdims=True, initial=-np.inf)  # (-inf over an empty dim)
        m = np.where(np.isfinite(m), m, 0)
        out = np.log(sum_like_torch(np.exp(x - m), dims, True)) + m  # (torch's steps, its sum)
        out = c_order(out if keepdim else np.squeeze(out, dims))  # (the saved object is the output)
        ctx.save_for_backward(x, out)
        return np.asarray(out)

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        g = _unsqueeze_to(grad, ctx.in_shape, ctx.dims, ctx.keepdim)
        o = _unsqueeze_to(out, ctx.in_shape, ctx.dims, ctx.keepdim)
        return g * (x - o).exp(), None, None

    @staticmethod
    def jvp(ctx, t, _dims):
        o = _unsqueeze_to(ctx.output, ctx.in_shape, ctx.dims, ctx.keepdim)
        return Sum.apply(t * (ctx.inputs[0] - o).exp(), dims=ctx.dims, keepdim=ctx.keepdim)


def logsumexp(input, dim, keepdim=False):
    if dim is None:
        raise TypeError("logsumexp(): argument 'dim' (position 2) must be tuple of ints, not NoneType; pass the "
                        "dims to reduce, e.g. 0 or (0, 1)")
    given = dim
    if isinstance(dim, (list, tuple)) and not dim:  # torch: every dim, but its result keeps them (an error below)
        if not keepdim and input.ndim and input.numel():
            raise RuntimeError(f"logsumexp(): output with shape [] doesn't match the broadcast shape "
                               f"{[1] * input.ndim} (dim=() reduces every dim and keeps them; pass keepdim=True, "
                               f"or the dims themselves: {tuple(range(input.ndim))})")
        dim = tuple(range(input.ndim))
    if not (input.dtype.is_floating_point or input.dtype.is_complex):  # torch: integers in the default float
        from .._dtype import get_default_dtype
        input = input.to(get_default_dtype())
    return Logsumexp.apply(input, _dims(dim, input.ndim, "logsumexp"), keepdim=keepdim, given_dim=given)


_INF = float("inf")


def _magnitude(v):
    """|v| as torch's norms take it: a complex v's by C's hypot (numpy's complex abs rounds otherwise)"""
    return np.hypot(v.real, v.imag) if v.dtype.kind == "c" else np.abs(v)


class Norm(Op):
    """d ||x||_p = x |x|^(p-2) / ||x||^(p-1)"""
    _grad_fn_name = "LinalgVectorNormBackward0"
    _saved_names = ("self", "result")
    _saved_values = {"dim": "shown_dims", "keepdim": "keepdim", "ord": "shown_ord"}

    @staticmethod
    def forward(ctx, x, ord=2, dims=None, keepdim=False, dtype=None, given_dim=None, given_ord=None):
        ctx.in_shape, ctx.dims, ctx.keepdim, ctx.ord = x.shape, dims, keepdim, ord
        # (torch's node shows the dims as given, and the order as given: 2 an int, 2.0 a float)
        ctx.shown_dims = shown_dims(dims if given_dim is None else given_dim)
        ctx.shown_ord = ord if given_ord is None else given_ord
        v = x if dtype is None else x.astype(dtype)  # (in the dtype asked for; backward reads x as it is)
        a = _magnitude(v)
        if ord not in (0, _INF, -_INF) and _count(x, dims) == 1:  # |x| itself, as torch (no x**2 to overflow)
            out = np.sum(a, axis=dims, keepdims=keepdim)
        elif ord == _INF:
            out = np.amax(a, axis=dims, keepdims=keepdim, initial=0)
        elif ord == -_INF:  # (vector_norm refused an empty dim: min has no identity)
            out = np.amin(a, axis=dims, keepdims=keepdim)
        elif ord == 0:
            out = np.sum(a != 0, axis=dims, keepdims=keepdim).astype(a.dtype)
        elif ord == 1 and a.dtype.itemsize > 2:  # (torch's plain loop: |x| added in memory order)
            out = running_sum_like_torch(a, dims, keepdim)
        elif a.dtype.kind == "f" and a.dtype.itemsize > 2:  # (torch's loops and order: its last bits)
            out = p_norm_like_torch(a, ord, dims, keepdim, vector=x.dtype.kind == "f")
        elif ord == 2:
            out = np.sqrt(np.sum(a * a, axis=dims, keepdims=keepdim))
        else:
            out = np.sum(a ** ord, axis=dims, keepdims=keepdim) ** (1.0 / ord)
        out = c_order(out)
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        dims = ctx.dims if ctx.dims is not None else tuple(range(len(ctx.in_shape)))
        g = _unsqueeze_to(grad, ctx.in_shape, ctx.dims, ctx.keepdim)
        n = _unsqueeze_to(out, ctx.in_shape, ctx.dims, ctx.keepdim)
        p = ctx.ord
        if p == 0:  # torch's formula gives no gradient at all: a leaf's .grad stays None, as torch's
            return None
        if p == 1:
            return x.sgn() * g  # (torch's order: the graph's edges show it)
        if p in (_INF, -_INF):  # ties share; a NaN entry counts as an extreme (as torch)
            xa = _magnitude(x._data)
            mask = Tensor._make(((xa == n._data) | np.isnan(xa)).astype(xa.dtype))
            return x.sgn() * (g / Tensor._make(mask._data.sum(axis=dims, keepdims=True)) * mask)
        # torch's formulas, masked where they divide by zero (their second order is NaN there, as torch's)
        if p == 2:
            return g * (x / n).masked_fill(n == 0, 0.0)
        if p < 1:
            return x.sgn() * x.abs().pow(p - 1).masked_fill(x == 0, 0.0) * g * n.pow(1 - p)
        scaled = x.sgn() * x.abs().pow(p - 1) if p < 2 else x * x.abs().pow(p - 2)
        return scaled * (g / n.pow(p - 1)).masked_fill(n == 0, 0.0)

    @staticmethod
    def jvp(ctx, t):
        from .elementwise import real, where
        x, n, p = ctx.inputs[0], ctx.output, ctx.ord
        dims = ctx.dims if ctx.dims is not None else tuple(range(len(ctx.in_shape)))
        along = real(x.sgn().conj() * t)  # d|x_i|

        def total(v):
            return Sum.apply(v, dims=dims, keepdim=ctx.keepdim)
        if p == 0:
            return n * 0
        if p == 1:
            return total(along)
        if p in (_INF, -_INF):
            nn = _unsqueeze_to(n, ctx.in_shape, ctx.dims, ctx.keepdim)
            mask = (_magnitude(x._data) == nn._data).astype(n._data.dtype)
            count = Tensor._make(np.asarray(mask.sum(axis=dims, keepdims=ctx.keepdim)))
            return total(along * Tensor._make(mask)) / count
        safe = where(n == 0, 1.0, n)
        return where(n == 0, 0.0, total(along * x.abs() ** (p - 1)) / safe ** (p - 1))


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    fro = p in ("fro", None)
    if fro:
        p = 2
    if p == "nuc":
        raise NotImplementedError("norm(p='nuc') is not supported by microtorch")
    if isinstance(p, str):
        raise RuntimeError(f"norm(): order {p!r} is not supported; use a number such as 1, 2 or float('inf'), "
                           "or 'fro'")
    if fro and isinstance(dim, (list, tuple)) and len(dim) > 2:  # (torch: Frobenius over more dims is a matrix norm)
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dim))} (the Frobenius "
                           "norm takes one or two dims; p=2 takes more)")
    return vector_norm(input, p, dim, keepdim, dtype=dtype)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    if x._data.dtype.kind not in "fc":
        from ._kernels import _NAMES
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{_NAMES.get(x._data.dtype.name, x._data.dtype.name)} (convert it first, e.g. x.float())")
    given, dim = dim, every_dim_if_none_given(dim, x.ndim)  # (dim=(): every dim, as torch)
    dims = None if dim is None else _dims(dim, x.ndim, "linalg.vector_norm", ranges_first=False)
    if float(ord) in (_INF, -_INF) and x.numel() == 0:
        for d in range(x.ndim) if dims is None else dims or ():
            if x.shape[d] == 0:
                raise RuntimeError(f"linalg.vector_norm cannot compute the {float(ord)} norm on the dimension {d} "
                                   "because this dimension is empty and the operation does not have an identity; "
                                   "reduce over a non-empty dim")
    return Norm.apply(x, ord=float(ord), dims=dims, keepdim=keepdim, dtype=_norm_dtype(x, dtype), given_dim=given,
                      given_ord=ord)


def _norm_dtype(x, dtype):
    """vector_norm's dtype= as numpy's (None: x's own), with torch's checks of it."""
    if dtype is None:
        return None
    from .._dtype import to_dtype
    from ._kernels import _NAMES
    have, want = x._data.dtype, to_dtype(dtype).np
    names = _NAMES.get(have.name, have.name), _NAMES.get(want.name, want.name)
    if want.kind not in "fc":
        raise RuntimeError(f"linalg.vector_norm: dtype should be floating point or complex, but got {names[1]}")
    if have.kind == "f" and want.kind == "c":
        raise RuntimeError(f"linalg.vector_norm: dtype should be real for real inputs, but got {names[1]}")
    if not np.can_cast(have, want, "safe"):
        raise RuntimeError(f"linalg.vector_norm: the dtype of the input ({names[0]}) should be convertible without "
                           f"narrowing to the specified dtype ({names[1]})")
    return None if want == have else want


# ---- non-differentiable reductions and comparisons --------------------------------------------
def _nodiff(arr):
    return Tensor._make(c_order(as_array(arr)))


def argmax(input, dim=None, keepdim=False):
    if dim is None:
        need_nonempty(input, "argmax")
        return _nodiff(as_array(np.argmax(input._data)).astype(np.int64))
    d = one_dim(dim, input.ndim, "argmax")
    _check_reduction_size(input, d, "argmax")
    return _nodiff(np.argmax(input._data, axis=d, keepdims=keepdim).astype(np.int64))


def argmin(input, dim=None, keepdim=False):
    if dim is None:
        need_nonempty(input, "argmin")
        return _nodiff(as_array(np.argmin(input._data)).astype(np.int64))
    d = one_dim(dim, input.ndim, "argmin")
    _check_reduction_size(input, d, "argmin")
    return _nodiff(np.argmin(input._data, axis=d, keepdims=keepdim).astype(np.int64))


def all(input, dim=None, keepdim=False):
    dims = None if dim is None else _dims(dim, input.ndim, "all")
    return _logical_result(np.all(input._data, axis=dims, keepdims=keepdim), input)


def any(input, dim=None, keepdim=False):
    dims = None if dim is None else _dims(dim, input.ndim, "any")
    return _logical_result(np.any(input._data, axis=dims, keepdims=keepdim), input)


def _logical_result(out, x):
    """all/any's result: bool, but uint8 for a uint8 input (torch keeps that older behaviour)."""
    return _nodiff(out.astype(np.uint8) if x._data.dtype == np.uint8 else out)


def count_nonzero(input, dim=None):
    dim = every_dim_if_none_given(dim, input.ndim)
    dims = None if dim is None else _dims(dim, input.ndim, "count_nonzero")
    return _nodiff(as_array(np.count_nonzero(input._data, axis=dims)).astype(np.int64))


def _cmp_operands(a, b):
    """Both operands' data in their torch result dtype: float32 0.1 == 0.1 compares in float32."""
    from .._dtype import result_type
    if not isinstance(a, (Tensor, int, float, complex)):
        a = Tensor._make(np.asarray(a))
    if not isinstance(b, (Tensor, int, float, complex)):
        b = Tensor._make(np.asarray(b))
    dt = result_type(a, b).np
    out = []
    for x in (a, b):
        d = x._data if isinstance(x, Tensor) else np.array(x)
        out.append(converted(d, dt))  # (an int wraps, as in torch: uint8 == 256)
    return out


def _cmp(np_fn):
    def compare(input, other):
        if other is None or isinstance(other, str):
            return NotImplemented  # (so t == None is False and t != None True, as in torch)
        ad, bd = _cmp_operands(input, other)
        try:
            return Tensor._make(like_torch(as_array(np_fn(ad, bd)), ad, bd))  # (laid out as torch's)
        except ValueError as e:
            op = {"equal": "eq", "not_equal": "ne", "less": "lt", "less_equal": "le", "greater": "gt",
                  "greater_equal": "ge"}.get(np_fn.__name__, np_fn.__name__)
            raise broadcast_error(op, e, ad, bd) from None
    return compare


eq = _cmp(np.equal)
ne = _cmp(np.not_equal)
lt = _cmp(np.less)
le = _cmp(np.less_equal)
gt = _cmp(np.greater)
ge = _cmp(np.greater_equal)
logical_and = _cmp(np.logical_and)
logical_or = _cmp(np.logical_or)
logical_xor = _cmp(np.logical_xor)
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


def logical_not(input):
    return Tensor._make(as_input(np.logical_not(input._data), input._data))


def isnan(input):
    return Tensor._make(as_input(np.isnan(input._data), input._data))


def isinf(input):
    return Tensor._make(as_input(np.isinf(input._data), input._data))


def isfinite(input):
    return Tensor._make(as_input(np.isfinite(input._data), input._data))


def equal(input, other):
    a, b = input, other
    return a.shape == b.shape and bool(np.array_equal(a._data, b._data))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    a, b = input, other
    return bool(np.allclose(a._data, b._data if isinstance(b, Tensor) else b, rtol=rtol, atol=atol,
                            equal_nan=equal_nan))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    ad, bd = _cmp_operands(input, other)
    out = as_array(np.isclose(ad, bd, rtol=rtol, atol=atol, equal_nan=equal_nan))
    return Tensor._make(like_torch(out, ad, bd))  # (torch's is laid out as its input == other: see ops/_layout.py)
