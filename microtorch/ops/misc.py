"""Dtype conversion, rounding and the other small ops."""
import numpy as np

from .._dtype import cast, from_numpy_dtype, result_type
from .._dtype import to_dtype as as_dtype
from .._user_line import warn_at_user_line
from .._tensor import Tensor
from ._checks import need_grad_dtype
from ._layout import like_torch
from ._memory_formats import in_layout_of, laid_out, preserve_format, suggested_format
from ._op import Op, as_array, normalize_dims, numbers_as, shown_dim
from .reduce import c_order
from .order import sort, topk  # noqa: F401 (their home is order.py; ops and composite import them from here)
from .rounding import (Ceil, DivRounded, Floor, Fmod, FmodTensor, Remainder, RemainderOfNumber, RemainderTensor, Round,
                       RoundDecimals, Trunc)


class ToCopy(Op):
    """x.to(dtype): the gradient is converted back"""
    _grad_fn_name = "ToCopyBackward0"

    @staticmethod
    def forward(ctx, x, np_dtype, memory_format=None):
        ctx.in_dtype = x.dtype
        if np.iscomplexobj(x) and not np.issubdtype(np_dtype, np.complexfloating):
            import warnings
            warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=6)
            x = x.real
        out = cast(x, np_dtype)  # (numpy's astype keeps a dense layout, as torch's preserve_format)
        if memory_format is not None:
            return laid_out(out, memory_format)
        if type(x) is np.ndarray and not x.flags.c_contiguous:  # (a broadcast x: torch lays its stride-0 dims out
            return like_torch(out, x)  # in C order, numpy's astype makes them the fastest)
        return in_layout_of(out, x)  # (a dense x: its strides, a size-1 dim's too, which astype may not keep)

    @staticmethod
    def backward(ctx, grad):
        if grad.is_complex() and not np.issubdtype(ctx.in_dtype, np.complexfloating):
            grad = grad.real  # a real input gets the real part of a complex gradient (as in torch)
        return grad.to(from_numpy_dtype(ctx.in_dtype)), None

    @staticmethod
    def jvp(ctx, t, _dtype, _format=None):
        return ToCopy.apply(t, ctx.inputs[1])


def to_dtype(x, dtype, memory_format=None):
    """x.to(dtype, memory_format=...): a ToCopy, laid out anew only when the memory format asked differs from the
    one x suggests (torch copies a tensor of the same dtype only then)."""
    if memory_format is not None and memory_format in (preserve_format, suggested_format(x._data)):
        memory_format = None
        if dtype is x.dtype:
            return x
    return ToCopy.apply(x, dtype.np) if memory_format is None else ToCopy.apply(x, dtype.np, memory_format)


def _integer_divisor(op, ad, bd):
    """torch's RuntimeError for an integer division by zero (numpy gives 0 and a warning)."""
    if type(ad) is np.ndarray and type(bd) is np.ndarray and ad.dtype.kind in "iub" and bd.dtype.kind in "iub" \
            and not bd.all():
        raise RuntimeError(f"{op}(): ZeroDivisionError: integer division by zero; divide a float tensor (x.float()) "
                           "to get inf or nan instead")


def div_rounded(a, b, mode):
    ad = a._data if isinstance(a, Tensor) else np.asarray(a)
    bd = b._data if isinstance(b, Tensor) else np.asarray(b)
    if mode not in ("floor", "trunc"):
        raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{mode}'")
    _integer_divisor("div", ad, bd)
    dt = result_type(a, b).np
    a, b = numbers_as((a, b), dt)  # (computed in the result's dtype: uint8 // -1 divides by 255)
    return DivRounded.apply(a, b, mode, dt)


_ALIAS = {"trunc": "trunc, or fix"}  # fix is trunc: its errors name both


def _rounding(np_fn, name, op):
    def f(input):
        kind = input._data.dtype.kind
        if kind == "b" or (kind == "c" and name == "round"):  # torch has no kernel for these
            raise NotImplementedError(f'"{name}_vml_cpu" not implemented for \'{input.dtype}\' ({_ALIAS.get(name, name)}); '
                                      "convert with .double()")
        if kind == "c":
            raise NotImplementedError(f"{_ALIAS.get(name, name)} is not supported for complex inputs; round .real and "
                                      ".imag apart")
        return op.apply(input, np_fn)
    f.__name__ = f.__qualname__ = name
    return f


floor = _rounding(np.floor, "floor", Floor)
ceil = _rounding(np.ceil, "ceil", Ceil)
trunc = _rounding(np.trunc, "trunc", Trunc)
_round = _rounding(np.round, "round", Round)


class _DecimalsNotGiven(int):
    """round's decimals when the caller left it out: 0, but torch picks its overload by whether decimals was
    given at all (once it is, even 0: RoundBackward1, and no kernel for integers)."""

    def __repr__(self):
        return "0"


_NO_DECIMALS = _DecimalsNotGiven(0)


def round_(input, *, decimals=_NO_DECIMALS):
    """Half to even, at `decimals` places (scaled by 10**decimals as torch does; negative rounds tens)."""
    if decimals is _NO_DECIMALS:
        return _round(input)
    dt = input._data.dtype
    if dt.kind not in "f":
        from ._kernels import _NAMES
        raise NotImplementedError(f'"{"round_vml_cpu" if decimals == 0 else "round_cpu"}" not implemented for '
                                  f"'{_NAMES.get(dt.name, dt.name)}' (round with decimals); round a float tensor, "
                                  "e.g. x.double().round(decimals=2)")
    return RoundDecimals.apply(input, decimals)


def fmod(input, other):
    """input - trunc(input / other) * other (the sign of input), differentiable as torch's."""
    bd = other._data if isinstance(other, Tensor) else other
    _integer_divisor("fmod", input._data, as_array(bd))  # (x % 0 of floats is nan, silently, as torch)
    return FmodTensor.apply(input, other) if isinstance(other, Tensor) else Fmod.apply(input, other)


def remainder(input, other):
    """input - floor(input / other) * other (the sign of other), differentiable as torch's."""
    if not isinstance(input, Tensor):  # 7 % x
        if not isinstance(other, Tensor):
            raise TypeError(f"remainder() received an invalid combination of arguments - got ({type(input).__name__}, "
                            f"{type(other).__name__}): one of them must be a Tensor")
        _integer_divisor("remainder", as_array(np.asarray(input)), other._data)
        return RemainderOfNumber.apply(input, other, result_type(input, other).np)
    bd = other._data if isinstance(other, Tensor) else other
    _integer_divisor("remainder", input._data, as_array(bd))
    return RemainderTensor.apply(input, other) if isinstance(other, Tensor) else Remainder.apply(input, other)


def nonzero(input, *, as_tuple=False):
    if input.ndim == 0:  # numpy refuses 0-d input; torch finds one 0-length index per nonzero element
        return nonzero(input.reshape(1), as_tuple=True) if as_tuple else \
            Tensor._make(np.zeros((int(input._data != 0), 0), np.int64))
    idx = np.nonzero(input._data)
    if as_tuple:
        return tuple(Tensor._make(i.astype(np.int64)) for i in idx)
    return Tensor._make(np.stack(idx, axis=1).astype(np.int64) if idx else np.zeros((0, 0), np.int64))


# torch's CPU scan adds in its accumulate type and rounds each result to the output's dtype
_SUM_IN = {np.dtype(np.float16): np.float32, np.dtype(np.float32): np.float64, np.dtype(np.complex64): np.complex128}


class Cumsum(Op):
    """d cumsum: the reversed cumulative sum of the gradient. dtype= casts inside the op, as torch's does (its node
    links to the input itself), and backward casts the gradient back to the input's dtype before summing.
    `given_dim`: the dim as given, which torch's node shows (and its backward's flips)."""
    _grad_fn_name = "CumsumBackward0"
    _saved_values = {"dim": "given_dim"}

    @staticmethod
    def forward(ctx, x, dim, dtype=None, given_dim=None):
        ctx.dim, ctx.dtype, ctx.in_dtype = dim, dtype, x.dtype
        ctx.given_dim = dim if given_dim is None else given_dim
        if dtype is not None:
            x = _cast_in_op(x, dtype)
        if x.ndim == 0:  # (numpy would make it 1-d)
            return x.copy()
        if x.dtype in _SUM_IN:
            out = np.cumsum(x, axis=dim, dtype=_SUM_IN[x.dtype]).astype(x.dtype)
        elif x.dtype.kind in "biu":  # (torch: integers to int64 unless dtype= says; numpy gives uint8 uint64)
            out = np.cumsum(x, axis=dim, dtype=np.int64 if dtype is None else dtype)
        else:
            out = np.cumsum(x, axis=dim)
        if out.dtype.kind in "fc":  # torch's scan starts from +0.0, so a run of -0.0 sums to +0.0
            out += 0.0
        return c_order(out)  # (C order, whatever x's layout)

    @staticmethod
    def backward(ctx, grad):
        if ctx.dtype is not None:  # (torch: grad.to(self's dtype), then the sum)
            grad = grad.to(from_numpy_dtype(ctx.in_dtype))
        if grad.ndim == 0:
            return grad, None
        from .shape import Flip  # (torch's steps, along the dim as given: its double backward's graph shows it)
        dims, shown = (ctx.dim,), (ctx.given_dim,)
        summed = Cumsum.apply(Flip.apply(grad, dims=dims, shown=shown), ctx.dim, given_dim=ctx.given_dim)
        return Flip.apply(summed, dims=dims, shown=shown), None

    @staticmethod
    def jvp(ctx, t, _dim):
        if ctx.dtype is None:
            return Cumsum.apply(t, ctx.dim, given_dim=ctx.given_dim)
        return Cumsum.apply(t, ctx.dim, dtype=ctx.dtype, given_dim=ctx.given_dim)


def _cast_in_op(x, np_dtype):
    """x in the dtype= an op casts it to (torch: a complex x loses its imaginary part, with a warning)"""
    if x.dtype.kind == "c" and np_dtype.kind != "c":
        warn_at_user_line("Casting complex values to real discards the imaginary part")
        x = x.real
    return cast(x, np_dtype)


def cumsum(input, dim, *, dtype=None):
    d = normalize_dims(dim, input.ndim, "cumsum")[0]
    need_grad_dtype(input, dtype, "cumsum")
    if dtype is None:
        return Cumsum.apply(input, d, given_dim=shown_dim(dim))
    dtype = as_dtype(dtype)
    if dtype.name == "bool":
        raise NotImplementedError('"cumsum_out_cpu" not implemented for \'Bool\'')
    return Cumsum.apply(input, d, dtype=dtype.np, given_dim=shown_dim(dim))


def _no_complex(x, op):
    if x._data.dtype.kind == "c":  # complex numbers have no order
        raise RuntimeError(f" {op} does not support complex dtypes on CPU; order by .abs() or .real instead")
