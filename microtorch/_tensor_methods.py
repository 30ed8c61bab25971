"""Tensor's operators and methods, each a one-line call into ops."""
import functools
import inspect
import re

import numpy as np

from . import ops
from ._tensor import Tensor
from .ops import bitwise


def _r(fn):
    """The reflected operator: other <op> self."""
    return lambda self, other: fn(other, self)


def _rdiv(self, other):
    """2 / t, which torch computes as t.reciprocal() * 2 (not torch.div(2, t): another graph)"""
    return ops.mul(ops.reciprocal(self), other)


def _rpow(self, other):
    return ops.pow(other, self)


def _rmatmul(self, other):
    return ops.matmul(other, self)


def _subtract(self, other, *scalar_alpha, alpha=1):
    """Tensor.subtract: sub. torch's Scalar overload `subtract(Scalar other, Scalar alpha=1)` also takes alpha by
    position when other is a number (y.subtract(2, 3) is y - 3 * 2, recorded as SubBackward1); after a tensor,
    alpha is keyword-only."""
    if not scalar_alpha:
        return ops.sub(self, other, alpha=alpha)
    given = scalar_alpha[0]
    if isinstance(given, Tensor) and given.ndim == 0:
        given = given.item()  # (a 0-d tensor stands for a number, as torch's Scalar)
    if len(scalar_alpha) > 1 or isinstance(other, Tensor) or alpha != 1 or not isinstance(given, (int, float, complex)):
        raise TypeError("subtract() received an invalid combination of arguments: alpha is given by position only "
                        "as a number after a number (t.subtract(2, 3)); after a tensor write alpha=")
    if not self.dtype.is_floating_point or isinstance(given, bool):
        return ops.sub(self, other, alpha=given)  # (its checks: a bool alpha, integer results)
    from .ops.scalar_overloads import SubScalar
    return SubScalar.apply(self, given * other)


def _setitem(self, key, value):
    from .ops.inplace import setitem
    setitem(self, key, value)


def _invert(self):
    if self._data.dtype.kind not in "biu":
        raise TypeError(f"~ (invert) is only implemented on integer and Boolean-type tensors, not {self.dtype}")
    return bitwise.bitwise_not(self)


def _stable_method(fn):
    """x.sort / x.argsort: the function's own check of `stable`'s form, in the method's words"""
    from .ops.order import stable_by_name
    return stable_by_name(fn.__wrapped__, method=True)


def _dims_as_ints(fn, one_as_tuple=False):
    """x.flip(0, 1) for x.flip((0, 1)): torch's methods also take a list of dims as separate ints (an integer
    tensor of one element counting as its int, as in torch); with one_as_tuple a single int too (x.tile(2) for
    x.tile((2,)), where fn takes only a sequence).
    (Not functools.wraps: the argument checks read this method's parameters, not fn's.)"""
    signature = inspect.signature(fn)

    def method(self, *dims, **kwargs):
        if len(dims) > 1 or one_as_tuple and dims and not isinstance(dims[0], (tuple, list)):
            dims = (tuple(_int_like(d) for d in dims),)
        args = (self,) + dims
        try:
            return fn(*args, **kwargs)
        except TypeError as e:
            try:
                signature.bind(*args, **kwargs)
            except TypeError:  # (a missing or unknown argument: Python's message, naming the op)
                raise TypeError(f"{fn.__name__}(): {e}") from None
            raise
    method.__name__, method.__doc__ = fn.__name__, fn.__doc__
    method._dims_of = fn  # (whose parameters say which numpy spellings it takes: numpy_aliases)
    return method


def _floordiv(self, other):
    from .ops.pointwise import floor_divide  # (in the operands' result dtype, as torch)
    return floor_divide(self, other)


def _mod(self, other):
    return ops.remainder(self, other)


def _rmod(self, other):  # 7 % x
    return ops.remainder(other, self)


METHODS = {
    # operators
    # (2 + t, 2 * t and 2 - t are torch's t.add(2), t.mul(2) and torch.rsub(t, 2): the number's edge second)
    "__add__": ops.add, "__radd__": ops.add, "__sub__": ops.sub, "__rsub__": ops.rsub,
    "__mul__": ops.mul, "__rmul__": ops.mul, "__truediv__": ops.div, "__rtruediv__": _rdiv,
    "__pow__": ops.pow, "__rpow__": _rpow, "__matmul__": ops.matmul, "__rmatmul__": _rmatmul,
    "__neg__": ops.neg, "__pos__": lambda self: self, "__abs__": ops.abs,
    "__floordiv__": _floordiv, "__rfloordiv__": _r(_floordiv), "__mod__": _mod, "__rmod__": _rmod, "__invert__": _invert,
    # (&, |, ^ are torch's bitwise ops in the operands' result dtype: bool & bool a mask, bool & 1 int64)
    "__and__": bitwise.bitwise_and, "__or__": bitwise.bitwise_or, "__xor__": bitwise.bitwise_xor,
    "__rand__": bitwise.bitwise_and, "__ror__": bitwise.bitwise_or, "__rxor__": bitwise.bitwise_xor,
    "__lshift__": bitwise.bitwise_left_shift, "__rshift__": bitwise.bitwise_right_shift,
    "__rlshift__": _r(bitwise.bitwise_left_shift), "__rrshift__": _r(bitwise.bitwise_right_shift),
    "__eq__": ops.eq, "__ne__": ops.ne, "__lt__": ops.lt, "__le__": ops.le, "__gt__": ops.gt, "__ge__": ops.ge,
    "__getitem__": ops.getitem, "__setitem__": _setitem,
    # elementwise
    "add": lambda self, other, *, alpha=1: ops.add(self, other, alpha=alpha),
    "sub": lambda self, other, *, alpha=1: ops.sub(self, other, alpha=alpha),
    "subtract": _subtract,
    "mul": ops.mul, "multiply": ops.mul,
    "div": lambda self, other, *, rounding_mode=None: ops.div(self, other, rounding_mode=rounding_mode),
    "divide": lambda self, other, *, rounding_mode=None: ops.div(self, other, rounding_mode=rounding_mode),
    "neg": ops.neg, "negative": ops.neg, "pow": ops.pow, "abs": ops.abs,
    "absolute": ops.abs, "exp": ops.exp, "log": ops.log, "log2": ops.log2, "log10": ops.log10,
    "log1p": ops.log1p, "expm1": ops.expm1, "erf": ops.erf, "sqrt": ops.sqrt, "rsqrt": ops.rsqrt, "sin": ops.sin,
    "cos": ops.cos, "tan": ops.tan, "asin": ops.asin, "acos": ops.acos, "atan": ops.atan, "sinh": ops.sinh,
    "cosh": ops.cosh, "tanh": ops.tanh, "sigmoid": ops.sigmoid, "relu": ops.relu, "reciprocal": ops.reciprocal,
    "square": ops.square, "sign": ops.sign, "sgn": ops.sgn, "clamp": ops.clamp, "clip": ops.clamp,
    "maximum": ops.maximum, "minimum": ops.minimum, "where": lambda self, condition, other: ops.where(condition, self, other),
    "conj": ops.conj, "angle": ops.angle, "floor": ops.floor, "ceil": ops.ceil, "round": ops.round_,
    "trunc": ops.trunc, "fmod": ops.fmod, "remainder": ops.remainder,
    # reductions
    "sum": ops.sum, "mean": ops.mean, "var": ops.var, "std": ops.std, "prod": ops.prod, "max": ops.max,
    "min": ops.min, "amax": ops.amax, "amin": ops.amin, "logsumexp": ops.logsumexp, "norm": ops.norm,
    "argmax": ops.argmax, "argmin": ops.argmin, "all": ops.all, "any": ops.any, "cumsum": ops.cumsum,
    "count_nonzero": _dims_as_ints(ops.count_nonzero), "sort": _stable_method(ops.sort), "topk": ops.topk,
    "nonzero": ops.nonzero,
    "eq": ops.eq, "ne": ops.ne, "lt": ops.lt, "le": ops.le, "gt": ops.gt, "ge": ops.ge,
    "logical_and": ops.logical_and, "logical_or": ops.logical_or, "logical_not": ops.logical_not,
    "logical_xor": ops.logical_xor, "isnan": ops.isnan, "isinf": ops.isinf, "isfinite": ops.isfinite,
    "equal": ops.equal, "allclose": ops.allclose, "isclose": ops.isclose,
    # shape
    "reshape": ops.reshape, "view": ops.view, "flatten": ops.flatten, "unflatten": ops.unflatten,
    "squeeze": _dims_as_ints(ops.squeeze), "unsqueeze": ops.unsqueeze, "transpose": ops.transpose, "swapaxes": ops.swapaxes,
    "swapdims": ops.transpose, "permute": ops.permute, "t": ops.t, "expand": ops.expand,
    "expand_as": ops.expand_as, "broadcast_to": ops.broadcast_to, "repeat": ops.repeat, "split": ops.split,
    "chunk": ops.chunk, "unsafe_chunk": ops.unsafe_chunk, "unsafe_split": ops.unsafe_split,
    "unsafe_split_with_sizes": ops.unsafe_split_with_sizes, "unbind": ops.unbind, "flip": _dims_as_ints(ops.flip), "narrow": ops.narrow, "movedim": ops.movedim,
    "diagonal": ops.diagonal, "diag": lambda self, diagonal=0: _creation().diag(self, diagonal),
    "sum_to_size": ops.sum_to_size,
    "view_as": lambda self, other: ops.view(self, other.shape),
    "reshape_as": lambda self, other: ops.reshape(self, other.shape),
    "select": ops.select, "index_select": ops.index_select, "gather": ops.gather, "take": ops.take,
    "masked_fill": ops.masked_fill, "masked_select": ops.masked_select,
    # linear algebra
    "matmul": ops.matmul, "mm": ops.mm, "bmm": ops.bmm, "mv": ops.mv, "dot": ops.dot, "outer": ops.outer,
    "ger": ops.outer,
    # nn
    "softmax": lambda self, dim, dtype=None: _nn().softmax(self, dim, dtype=dtype),
    "log_softmax": lambda self, dim, dtype=None: _nn().log_softmax(self, dim, dtype=dtype),
}

def _more_methods():
    """Methods added for torch's API (issue 13): new ops, aliases, conversions, in-place forms."""
    m = _aliases_and_conversions()
    m.update(_new_op_methods())
    _add_inplace_forms(m, dict(METHODS, **m))
    return m


def _aliases_and_conversions():
    from . import _dtype
    from .ops import composite as cp, pointwise as pw, rearrange as ra, resize as rs
    from .ops._checks import guard  # (tile's dims are checked as a tuple once the method has made them one)
    return {
        "asinh": pw.asinh, "arcsinh": pw.asinh, "acosh": pw.acosh, "arccosh": pw.acosh, "atanh": pw.atanh,
        "arctanh": pw.atanh, "exp2": pw.exp2, "erfc": pw.erfc, "deg2rad": pw.deg2rad, "rad2deg": pw.rad2deg,
        "frac": pw.frac, "sinc": pw.sinc, "logit": pw.logit, "atan2": pw.atan2, "arctan2": pw.arctan2,
        "hypot": pw.hypot, "logaddexp": pw.logaddexp, "logaddexp2": pw.logaddexp2, "xlogy": pw.xlogy,
        "fmax": pw.fmax, "fmin": pw.fmin, "lerp": pw.lerp, "addcmul": pw.addcmul, "addcdiv": pw.addcdiv,
        "arccos": ops.acos, "arcsin": ops.asin, "arctan": ops.atan, "fix": ops.trunc, "moveaxis": ops.movedim,
        "greater": ops.gt, "greater_equal": ops.ge, "less": ops.lt, "less_equal": ops.le, "not_equal": ops.ne,
        "roll": ra.roll, "rot90": ra.rot90, "trace": ra.trace, "scatter": ra.scatter, "index_add": ra.index_add,
        "nansum": ra.nansum, "nanmean": cp.nanmean, "diff": cp.diff, "ravel": cp.ravel,
        "tile": _dims_as_ints(guard(cp.tile, "tile", method=True), one_as_tuple=True),
        "fliplr": cp.fliplr, "flipud": cp.flipud, "positive": cp.positive, "tensor_split": cp.tensor_split,
        "true_divide": cp.true_divide,
        "vsplit": cp.vsplit, "hsplit": cp.hsplit, "dsplit": cp.dsplit, "take_along_dim": cp.take_along_dim,
        "float_power": cp.float_power, "argsort": _stable_method(cp.argsort), "msort": cp.msort,
        "repeat_interleave": cp.repeat_interleave, "histc": cp.histc, "histogram": cp.histogram,
        "bincount": cp.bincount, "unique": cp.unique,
        "tril": lambda self, diagonal=0: _creation().tril(self, diagonal),
        "triu": lambda self, diagonal=0: _creation().triu(self, diagonal),
        "short": lambda self, *, memory_format=None: self.to(_dtype.int16),
        "byte": lambda self, *, memory_format=None: self.to(_dtype.uint8),
        "char": lambda self, *, memory_format=None: self.to(_dtype.int8),
        "type_as": lambda self, other: self.to(other.dtype),
        "is_same_size": lambda self, other: tuple(self.shape) == tuple(other.shape),
        "is_signed": lambda self: self.dtype.name not in ("uint8", "bool"),
        "is_conj": lambda self: False, "is_neg": lambda self: False,
        "resolve_conj": lambda self: self, "resolve_neg": lambda self: self,
        "is_inference": lambda self: self._inference,
        "_is_zerotensor": lambda self: False,  # (sgn's exact-zero gradient answers True: ops/_zero_tangent.py)
        "_is_view": lambda self: self._base is not None,
        "is_nonzero": _is_nonzero,
        "apply_": _apply_python, "map_": _map_python, "map2_": _map2_python,
        "clamp_min": pw.clamp_min, "clamp_max": pw.clamp_max, "signbit": pw.signbit, "isposinf": pw.isposinf,
        "isneginf": pw.isneginf, "isreal": pw.isreal, "heaviside": pw.heaviside,
        "floor_divide": pw.floor_divide,
        "argwhere": lambda self: ops.nonzero(self),
        "split_with_sizes": lambda self, split_sizes, dim=0: ops.split(self, list(split_sizes), dim),
        "addmm": lambda self, mat1, mat2, *, beta=1, alpha=1: ops.addmm(self, mat1, mat2, beta=beta, alpha=alpha),
        "multinomial": lambda self, num_samples, replacement=False, *, generator=None:
            _creation().multinomial(self, num_samples, replacement, generator=generator),
        "bernoulli": lambda self, p=None, *, generator=None: _creation().bernoulli(self, p, generator=generator),
        "new_full": lambda self, size, fill_value, *, dtype=None, requires_grad=False:
            _creation().new_full(self, size, fill_value, dtype, requires_grad),
        "prelu": _act().prelu,
        "hardshrink": lambda self, lambd=0.5: _act().Hardshrink.apply(self, lambd=lambd),
        "new": _legacy_new,
        "svd": _svd,
        "resize_": rs.resize_, "resize_as_": rs.resize_as_, "resize": rs.resize, "resize_as": rs.resize_as,
        "storage_offset": rs.storage_offset,
    }


def _new_op_methods():
    """The ops of scan, order, linalg_more, special, bitwise, index_more and misc_more, as methods."""
    from .ops import bitwise, index_more as im, linalg_more as la, misc_more as mm, order, scan, special as sp, spectral
    from .ops import strided
    from .ops._api_args import checked
    mods = {"scan": scan, "order": order, "la": la, "sp": sp, "bitwise": bitwise, "im": im, "mm": mm,
            "spectral": spectral, "strided": strided}
    m = {name: checked(getattr(mods[mod], name), name, method=True) for mod, names in NEW_OPS.items()
         for name in names}
    m.update({
        "polygamma": checked(lambda self, n: sp.polygamma(n, self), "polygamma", method=True),
        "conj_physical": spectral.conj_physical,
        "dim_order": _dim_order,
        "new_empty_strided": strided.new_empty_strided,
    })
    return m


# new op modules (by their local name in _new_op_methods) -> the names they add to Tensor and torch
NEW_OPS = {
    "scan": ("cumprod", "cummax", "cummin", "logcumsumexp"),
    "order": ("median", "nanmedian", "quantile", "nanquantile", "mode", "kthvalue", "aminmax"),
    "la": ("det", "logdet", "slogdet", "inverse", "cross", "vdot", "dist", "diag_embed", "diagflat", "kron",
           "inner", "matrix_power", "adjoint", "addmv", "addr", "addbmm", "baddbmm", "cov", "corrcoef",
           "matrix_exp", "pinverse", "cholesky"),
    "sp": ("lgamma", "digamma", "mvlgamma", "erfinv", "i0", "igamma", "igammac", "ldexp", "copysign",
           "nextafter", "nan_to_num", "frexp"),
    "bitwise": ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift",
                "bitwise_right_shift", "gcd", "lcm"),
    "im": ("scatter_add", "index_copy", "index_fill", "index_put", "masked_scatter", "put", "diagonal_scatter",
           "select_scatter", "slice_scatter"),
    "mm": ("unfold", "renorm", "narrow_copy", "unique_consecutive", "nonzero_static"),
    "spectral": ("stft",),
    "strided": ("as_strided",),
}

INPLACE_UNARY = ["acos", "asin", "atan", "arccos", "arcsin", "arctan", "cosh", "sinh", "tan", "erf", "expm1",
                 "log10", "log1p", "log2", "rsqrt", "ceil", "floor", "round", "trunc", "fix", "sign", "sgn",
                 "asinh", "acosh", "atanh", "arcsinh", "arccosh", "arctanh", "exp2", "erfc", "deg2rad",
                 "rad2deg", "frac", "sinc", "logit", "negative", "absolute", "logical_not", "cumsum",
                 "tril", "triu", "cumprod", "lgamma", "digamma", "erfinv", "i0", "nan_to_num", "bitwise_not",
                 "polygamma", "mvlgamma", "renorm", "conj_physical"]
INPLACE_BINARY = ["multiply", "subtract", "divide", "true_divide", "fmod", "remainder", "atan2", "arctan2",
                  "hypot", "xlogy", "lerp", "addcmul", "addcdiv", "eq", "ne", "lt", "le", "gt", "ge",
                  "greater", "greater_equal", "less", "less_equal", "not_equal", "logical_and",
                  "logical_or", "logical_xor", "float_power", "scatter", "index_add", "clamp_min", "clamp_max",
                  "floor_divide", "addmm", "addmv", "addr", "addbmm", "baddbmm", "igamma", "igammac",
                  "ldexp", "copysign", "nextafter", "bitwise_and", "bitwise_or", "bitwise_xor",
                  "bitwise_left_shift", "bitwise_right_shift", "gcd", "lcm", "scatter_add", "index_copy",
                  "index_fill", "index_put", "masked_scatter", "put"]


NEW_INPLACE = [n for n in INPLACE_UNARY + INPLACE_BINARY if any(n in names for names in NEW_OPS.values())]


def _add_inplace_forms(m, table):
    """x.op_(...) for the ops above: the op's result written into x (ops.inplace keeps the history)."""
    from .ops._api_args import checked
    from .ops.index_more import fill_diagonal
    from .ops.inplace import _binary, _unary, cast_checked, real_abs
    for name in INPLACE_UNARY:
        m[name + "_"] = _unary(table[name], name + "_")
    for name, draw in RANDOM_FILLS.items():
        m[name] = _random_fill(name, draw)
    for name in ("t", "transpose", "squeeze", "unsqueeze", "swapaxes", "swapdims", "as_strided"):
        m[name + "_"] = _inplace_view(name + "_", table[name])
    for name, op in (("asinh", "asinh"), ("acosh", "acosh"), ("atanh", "atanh"), ("arcsinh", "asinh"),
                     ("arccosh", "acosh"), ("arctanh", "atanh")):
        m[name + "_"] = _no_inplace_derivative(m[name + "_"], op)
    for name in INPLACE_BINARY:
        m[name + "_"] = _binary(table[name], name + "_")
    for name in NEW_INPLACE:  # their arguments checked before the in-place machinery runs
        m[name + "_"] = checked(m[name + "_"], name + "_", method=True, signature_of=table[name])
    for op, name in BITWISE_INPLACE.items():
        m[name + "_"] = m[f"__i{op}__"] = cast_checked(m[name + "_"])  # (x &= y writes into x, as torch's)
    for name in CAST_FIRST:
        m[name + "_"] = cast_checked(m[name + "_"])
    m["__imod__"] = _binary(table["remainder"], "__imod__")  # (x %= y writes into x, as torch's)
    m["__ifloordiv__"] = _binary(table["floor_divide"], "__ifloordiv__")
    m["absolute_"] = real_abs(m["absolute_"])
    m["float_power_"] = _double_base(m["float_power_"])
    m["nan_to_num_"] = _nan_to_num_inplace(m["nan_to_num_"])
    m["cumprod_"] = _refuse_bool(m["cumprod_"], "cumprod_out_cpu")
    m["fill_diagonal_"] = checked(_unary(fill_diagonal, "fill_diagonal_"), "fill_diagonal_", True, fill_diagonal)


BITWISE_INPLACE = {"and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor", "lshift": "bitwise_left_shift",
                   "rshift": "bitwise_right_shift"}
# in-place ops with a float result for integers (ops/_checks.py checks the others' casts with their kernels)
CAST_FIRST = ("atan2", "arctan2", "copysign", "ldexp", "gcd", "lcm")


def _double_base(method):
    """float_power_ computes in double (complex double with a complex operand) and writes only into a tensor of
    that dtype, as torch's"""
    def float_power_(self, exponent):
        from ._tensor import Tensor
        from .ops._kernels import _NAMES
        complex_ = self.dtype.is_complex or (exponent.dtype.is_complex if isinstance(exponent, Tensor)
                                             else isinstance(exponent, complex))
        needed = "complex128" if complex_ else "float64"
        if self.dtype.name != needed:
            raise RuntimeError(f"the base given to float_power_ has dtype {_NAMES.get(self.dtype.name)} but the "
                               f"operation's result requires dtype {_NAMES[needed]} (convert the tensor with .double() "
                               "first, or use float_power out of place)")
        return method(self, exponent)
    return float_power_


def _nan_to_num_inplace(method):
    def nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
        from .ops.special import check_nan_to_num_args
        check_nan_to_num_args("nan_to_num_", nan, posinf, neginf)
        return method(self, nan, posinf, neginf)
    return nan_to_num_


def _refuse_bool(method, kernel):
    """torch has no in-place kernel for bool tensors here (the result would be an integer); it checks the dim
    (the first argument) before."""
    def checked(self, *args, **kwargs):
        if self.dtype.name == "bool":
            from .ops._op import normalize_dims
            dim = args[0] if args else kwargs.get("dim")
            if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
                raise TypeError(f"{method.__name__}(): argument 'dim' (position 1) must be int, not "
                                f"{type(dim).__name__}")
            normalize_dims(dim, self.ndim, method.__name__)
            raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\' ({method.__name__}); convert the '
                                      "tensor with .long() first")
        return method(self, *args, **kwargs)
    checked.__name__ = method.__name__
    return checked


def _random_fill(name, draw):
    """An in-place fill with random values drawn by draw(rng, shape, *args) (a generator= may be given)."""
    def method(self, *args, generator=None, **kwargs):
        from ._random import _rng, drawn_for
        from ._tensor import Tensor
        from .autograd.grad_mode import is_grad_enabled
        from .ops.inplace import apply_inplace
        args, kwargs = _check_fill_args(name, self, args, kwargs)
        if self.is_meta:  # no data to fill and, as in torch, no draw: the generator stays where it was
            return self
        rng = _rng(generator)  # (filled in torch's order: a transposed tensor as it lies in memory)
        values = drawn_for(rng, self._data, lambda shape: draw(rng, shape, self._data.dtype, *args, **kwargs))
        values = values.astype(self._data.dtype)
        sample = Tensor._make(values)
        if self.requires_grad and is_grad_enabled():  # as torch: nothing flows back through random values
            return apply_inplace(self, lambda s: s * 0 + sample, op=name)
        self._data[...] = values
        self._version_counter[0] += 1
        return self
    method.__name__ = name
    return method


# the random fills' parameters with their defaults, and torch's check of their values (True, or what it says)
FILL_PARAMS = {"normal_": {"mean": 0.0, "std": 1.0}, "uniform_": {"from": 0.0, "to": 1.0},
               "exponential_": {"lambd": 1.0}, "bernoulli_": {"p": 0.5}, "cauchy_": {"median": 0.0, "sigma": 1.0},
               "geometric_": {"p": None}, "log_normal_": {"mean": 1.0, "std": 2.0}, "random_": {"from": 0, "to": None}}
FILL_RULES = {
    "normal_": lambda v: v["std"] >= 0 or f"normal expects std >= 0.0, but found std {v['std']}",
    "uniform_": lambda v: v["from"] <= v["to"] or
    f"uniform_ expects to return a [from, to) range, but found from={v['from']:g} > to={v['to']:g}",
    "exponential_": lambda v: v["lambd"] > 0 or f"exponential_ expects lambda > 0.0, but found lambda={v['lambd']}",
    "bernoulli_": lambda v: not 0 <= v["p"] <= 1 and f"bernoulli_ expects p to be in [0, 1], but got p={v['p']}",
    "cauchy_": lambda v: v["sigma"] > 0 or f"cauchy_ expects sigma > 0.0, but found sigma={v['sigma']}",
    "geometric_": lambda v: 0 < v["p"] < 1 or f"geometric_ expects p to be in (0, 1), but got p={v['p']}",
    "log_normal_": lambda v: v["std"] > 0 or f"log_normal_ expects std > 0.0, but found std={v['std']}",
}


def _check_fill_args(name, self, args, kwargs):
    """(args, kwargs) with 0-d tensors as numbers, after torch's TypeError for a parameter that is not a number
    (random_: an int; bernoulli_ also takes a tensor p), its refusal of self's dtype, and its RuntimeError for a
    value out of range."""
    from ._tensor import Tensor
    args = tuple(a.item() if isinstance(a, Tensor) and a.ndim == 0 else a for a in args)
    kwargs = {k: v.item() if isinstance(v, Tensor) and v.ndim == 0 else v for k, v in kwargs.items()}
    params = FILL_PARAMS[name]
    if len(args) > len(params) or set(kwargs) - set(params) - {"from_"}:
        extra = next(iter(set(kwargs) - set(params) - {"from_"}), None)
        raise TypeError(f"{name}() got an unexpected keyword argument '{extra}'" if extra else
                        f"{name}() takes {len(params)} positional arguments but {len(args)} were given")
    given = dict(zip(params, args), **{("from" if k == "from_" else k): v for k, v in kwargs.items()})
    missing = [p for p, default in params.items() if default is None and p not in given and name != "random_"]
    if missing:
        raise TypeError(f'{name}() missing 1 required positional arguments: "{missing[0]}"')
    kinds = (int, np.integer) if name == "random_" else (int, float, np.integer, np.floating)
    for i, (param, v) in enumerate(given.items()):
        if isinstance(v, Tensor) and name == "bernoulli_":
            _check_probabilities(self, v)
            continue
        if param not in params:
            continue
        if not isinstance(v, kinds) or name == "random_" and isinstance(v, bool):
            raise TypeError(f"{name}(): argument '{param}' (position {i + 1}) must be "
                            f"{'int' if name == 'random_' else 'float'}, not {type(v).__name__}")
    _check_fill_dtype(name, self)
    if name == "random_":
        low, high = (given.get("from", 0), given["to"]) if "to" in given else (0, given.get("from"))
        if high is not None and low >= high:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
        if high is not None and self.dtype.name == "bool" and high - 1 > 1:
            raise RuntimeError(f"to - 1 is out of bounds for bool (random_ to={high}); a bool holds 0 or 1")
        return args, kwargs
    values = {**params, **given}
    verdict = FILL_RULES[name](values) if not isinstance(values.get("p"), Tensor) else True
    if isinstance(verdict, str):  # (a rule answers True, or numpy's True for numpy numbers, or the refusal)
        raise RuntimeError(verdict)
    return args, kwargs


def _check_probabilities(self, p):
    """torch's refusals of a tensor of probabilities for bernoulli_, in its order: one that does not broadcast to
    self's shape, one that is not floating point, a value outside [0, 1] (NaN too)."""
    try:
        fits = np.broadcast_shapes(tuple(p.shape), tuple(self.shape)) == tuple(self.shape)
    except ValueError:
        fits = False
    if not fits:
        raise RuntimeError(f"The expanded size of the tensor must match: bernoulli_ cannot broadcast the probabilities "
                           f"{list(p.shape)} to the tensor's shape {list(self.shape)}")
    if not p.dtype.is_floating_point:
        from .ops._kernels import _NAMES
        raise NotImplementedError(f'"bernoulli_tensor_cpu_p_" not implemented for \'{_NAMES.get(p.dtype.name)}\': '
                                  "the probabilities must be a floating point tensor; convert them with p.float()")
    if not ((p._data >= 0) & (p._data <= 1)).all():
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false. (bernoulli_: each "
                           "probability must be in [0, 1])")


def _check_fill_dtype(name, self):
    """torch draws from continuous distributions into floating tensors only, and geometric_ into real numbers"""
    continuous = {"cauchy_": "Cauchy", "exponential_": "Exponential"}.get(name)
    if continuous and not self.dtype.is_floating_point:
        raise RuntimeError(f"{continuous} distribution is a continuous probability distribution. dtype must be a "
                           f"floating point but you specified {self.dtype} ({name})")
    if name == "geometric_" and self._data.dtype.kind in "bc":
        raise NotImplementedError(f'"geometric_cpu" not implemented for {self.dtype}: draw into an integer or '
                                  "floating point tensor")


def _random_ints(rng, shape, np_dtype, from_=0, to=None, **kw):
    """random_(): integers in [0, 2^mantissa] for a floating dtype, [0, max] for an integer one (0 or 1 for bool);
    random_(to): [0, to); random_(from, to): [from, to)."""
    if "to" in kw:
        to = kw.pop("to")
    if "from" in kw:
        from_ = kw.pop("from")
    if to is None and from_ != 0:
        from_, to = 0, from_
    return rng.torch_integers(from_, to if to is not None else _largest_draw(np.dtype(np_dtype)) + 1, shape)


def _largest_draw(np_dtype):
    if np_dtype.kind == "f":
        return 2 ** (np.finfo(np_dtype).nmant + 1)
    return 1 if np_dtype.kind == "b" else int(np.iinfo(np_dtype).max)


RANDOM_FILLS = {
    "normal_": lambda rng, shape, dt, mean=0.0, std=1.0: rng.torch_normal(dt, mean, std, shape),
    "uniform_": lambda rng, shape, dt, from_=0.0, to=1.0, **kw: rng.torch_uniform(dt, kw.get("from", from_), to, shape),
    "random_": _random_ints,
    "exponential_": lambda rng, shape, dt, lambd=1.0: rng.torch_exponential(dt, lambd, shape),
    "bernoulli_": lambda rng, shape, _dt, p=0.5: rng.torch_bernoulli(p._data if hasattr(p, "_data") else p, shape),
    "cauchy_": lambda rng, shape, dt, median=0.0, sigma=1.0: rng.torch_from_uniform(
        dt, lambda u: median + sigma * np.tan(np.pi * (u - 0.5)), shape),
    "geometric_": lambda rng, shape, dt, p: rng.torch_from_uniform(dt, lambda u: np.ceil(np.log(u) / np.log1p(-p)),
                                                                   shape),
    "log_normal_": lambda rng, shape, dt, mean=1.0, std=2.0: rng.torch_log_normal(dt, mean, std, shape),
}


def _inplace_view(name, fn):
    """t_, transpose_, squeeze_...: self takes the view's shape (and its place in the graph), as torch's."""
    def method(self, *args, **kwargs):
        from .autograd.views import bump_version
        from .ops.inplace import regenerate_after_view_op
        if any(a is None for a in (*args, *kwargs.values())):  # (fn would read None as "every dim")
            raise TypeError(f"{name}(): a dim is None; pass an int dim (or a tuple of ints)")
        checked = all(_dims_like(a) for a in (*args, *kwargs.values()))
        if checked:  # (torch refuses a leaf or a view after the arguments' types, before the dims)
            _check_inplace_view(self, name)
        try:
            out = fn(self, *args, **kwargs)
        except (RuntimeError, IndexError) as e:  # (a dim out of range...: named as the op called, as torch's)
            raise _named(e, name) from None
        if not checked:
            _check_inplace_view(self, name)
        self._data = out._data
        bump_version(self)  # (a new shape is a change: a graph that saved self refuses it, as torch's)
        if out._fw_grads:  # forward mode: the tangent takes the new shape too
            self._fw_grads = out._fw_grads
        recorded = out.grad_fn is not None
        if recorded:
            self.grad_fn, self._output_nr = _as_inplace_node(out.grad_fn), out._output_nr
        del out  # (the op's own result is no view to rebuild: gone before the views of self's base are)
        regenerate_after_view_op(self, recorded)
        return self
    method.__name__ = name
    return method


_OP_NAMES = re.compile(r"^(?:\w+(?:\(\):?|:) )+")  # "t() ", "transpose(): ", "unsqueeze: " leading a message


def _named(e, name):
    """e, its message naming the in-place op called instead of the op that raised (t_() expects..., as torch)"""
    msg = str(e)
    lead = _OP_NAMES.match(msg)
    sentence = lead is not None and lead.group(0).endswith("() ")  # ("t() expects a tensor...")
    return type(e)(f"{name}{'() ' if sentence else '(): '}{msg[lead.end() if lead else 0:]}")


def _check_inplace_view(self, name):
    """torch's check_inplace: a leaf that requires grad, or a view it forbids changing (of a leaf, one of
    split()'s outputs, made under no_grad), is refused while grad mode records."""
    from .autograd.grad_mode import is_grad_enabled
    from .ops.inplace import _check_leaf, check_view_rebase
    base = self._base
    if base is not None and is_grad_enabled() and (self._requires_grad or base._requires_grad):
        check_view_rebase(self, base, name)
    _check_leaf(self, name)


def _dims_like(a):
    """an int or a sequence of ints (what the in-place view ops take)"""
    ints = (int, np.integer)
    return isinstance(a, ints) or isinstance(a, (tuple, list)) and all(isinstance(d, ints) for d in a)


_INPLACE_NODES = {}


def _as_inplace_node(node):
    """torch names the node of an in-place view op ...Backward1 (t_: TBackward1): the same node, renamed."""
    cls = type(node)
    base, _, number = cls.__name__.rpartition("Backward")
    if not number.isdigit():
        return node
    shift = 3 if base == "Squeeze" else 1  # squeeze has three out-of-place overloads (0-2), then 3-5 in place
    renamed = _INPLACE_NODES.get(cls)
    if renamed is None:
        name = f"{base}Backward{int(number) + shift}"
        renamed = _INPLACE_NODES[cls] = type(name, (cls,), {"__slots__": ()})
    node.__class__ = renamed
    return node


def _no_inplace_derivative(method, op):
    """torch has no derivative for these in-place forms: it refuses them on tensors that require grad."""
    def checked(self, *args, **kwargs):
        from .autograd.grad_mode import is_grad_enabled
        if self.requires_grad and is_grad_enabled():
            raise NotImplementedError(f"the derivative for 'inplace version of {op}' is not implemented. Use the "
                                      f"out-of-place x.{op}() (it has one), or call {op}_ under no_grad().")
        return method(self, *args, **kwargs)
    checked.__name__ = method.__name__
    return checked


def _act():
    from .ops import activation
    return activation


def _decomposition():
    from .ops import decomposition
    return decomposition


def _legacy_new(self, *args, size=None, data=None, device=None):
    """torch's legacy x.new(...), in x's dtype: with nothing, a 1-d empty tensor; with sizes (ints or a Size), an
    uninitialized tensor (zeros here); with a tensor of x's dtype, an alias of it; else a copy of the data."""
    from ._tensor import Size, Tensor
    from .ops._checks import _is_int, check_size
    if size is not None or data is not None:
        if args or size is not None and data is not None:
            raise TypeError("new(): pass the sizes or the data once: as positional arguments, size= or data=")
        if data is not None:
            return _placed_on(_new_data(self, data), device)
        if not isinstance(size, (tuple, list)):
            raise TypeError(f"new(): argument 'size' must be tuple of ints, not {type(size).__name__}")
        args = (Size(size),)
    if not args:
        return _placed_on(Tensor._make(np.zeros(0, dtype=self._data.dtype)), device)
    if len(args) == 1 and isinstance(args[0], Size):
        args = tuple(args[0])
    elif len(args) == 1 and not _is_int(args[0]):
        return _placed_on(_new_data(self, args[0]), device)
    sizes = tuple(_int_like(a) for a in args)
    if not all(_is_int(s) for s in sizes):
        raise TypeError(f"new() received an invalid combination of arguments: got "
                        f"({', '.join(type(a).__name__ for a in args)}); pass sizes as ints, or one sequence of data")
    return _placed_on(Tensor._make(np.zeros(check_size(sizes, "new"), dtype=self._data.dtype)), device)


def _int_like(v):
    """v as an int where torch's argument parser takes it as one (an integer tensor of one element), else v"""
    from ._tensor import Tensor
    if isinstance(v, Tensor) and v.numel() == 1 and v._data.dtype.kind in "iu":
        return int(v.item())
    return v


def _new_data(self, data):
    """x.new(data): an alias of a tensor of x's dtype, or a copy of a sequence in x's dtype."""
    from ._tensor import Tensor, tensor
    if isinstance(data, Tensor):
        if data.dtype != self.dtype:
            raise TypeError("new(): x.new(t) aliases t, so t must have x's dtype; for a copy in x's dtype use "
                            "t.to(x.dtype)")  # (no dtype names: the guard reads 'complex' as a missing kernel)
        from .ops.shape import Alias, _share
        return _share(Alias.apply(data, data.shape), data)  # torch: AliasBackward0, t's memory and version
    if isinstance(data, str):
        raise TypeError("new(): invalid data type 'str'")
    if not isinstance(data, (list, tuple, np.ndarray)):
        raise TypeError(f"new(): data must be a sequence (got {type(data).__name__}); pass a list, e.g. x.new([1, 2])")
    return tensor(data, dtype=self.dtype)


def _placed_on(t, device):
    return t if device is None else t.to(device)


def _svd(self, some=True, compute_uv=True):
    for i, (name, flag) in enumerate((("some", some), ("compute_uv", compute_uv))):
        if not isinstance(flag, bool):  # (torch's parser: a bool, not something truthy)
            raise TypeError(f"svd(): argument '{name}' (position {i + 1}) must be bool, not {type(flag).__name__}")
    return _decomposition().svd(self, some, compute_uv)


def _is_nonzero(self):
    if self.numel() != 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous" if self.numel() else
                           "Boolean value of Tensor with no values is ambiguous")
    return bool(self.item())


def _apply_python(self, callable):
    """Each element replaced by callable(element), in place (a slow Python loop, as torch's)."""
    return _python_fill(self, "apply_", callable)


def _dim_order(self, *, ambiguity_check=False):
    """the dims from outermost to innermost in memory (by their strides)."""
    strides = self._data.strides if self._data.ndim else ()
    return tuple(sorted(range(len(strides)), key=lambda d: -strides[d]))


def _map2_python(self, x, y, callable):
    """Each element replaced by callable(self_i, x_i, y_i), in place (a Python loop, as torch's)."""
    return _python_fill(self, "map2_", callable, x, y)


def _map_python(self, other, callable):
    return _python_fill(self, "map_", callable, other)


def _python_fill(self, op, fn, *others):
    """self's elements replaced by fn(self_i, other_i, ...), the others broadcast to self's shape, in place; as
    torch: not on a tensor that requires grad (autograd cannot see a Python loop), the others in self's dtype."""
    if self.requires_grad:
        raise RuntimeError(f"Can't call {op}() on Variable that requires grad. Use var.detach().{op}() instead.")
    if self._data.size and not callable(fn):  # (torch finds out when it first calls it: never for no element)
        raise TypeError(f"'{type(fn).__name__}' object is not callable ({op}: pass a function of the elements)")
    for other in others:
        if other.dtype != self.dtype:
            raise TypeError(f"{op}: expected {self.dtype} for the other tensors (got {other.dtype}); convert them "
                            "with .to(x.dtype)")
    try:
        columns = [self._data.reshape(-1).tolist()] + \
                  [np.broadcast_to(o._data, self._data.shape).reshape(-1).tolist() for o in others]
    except ValueError:
        raise RuntimeError(f"{op}(): the other tensors' shapes {[list(o.shape) for o in others]} do not expand to "
                           f"self's {list(self.shape)}") from None
    values = np.asarray([fn(*row) for row in zip(*columns)])
    if values.size and values.dtype.kind not in "biufc":
        raise TypeError(f"{op}(): the function must return numbers, not {type(values.flat[0]).__name__}")
    self._data[...] = values.reshape(self._data.shape)  # (a view's elements too: written through, not copied)
    self._version_counter[0] += 1
    return self


PROPERTIES = {
    "T": ops.numpy_T, "mT": ops.mT, "H": ops.H,
    "mH": lambda self: ops.conj(ops.mT(self, "mH")), "real": ops.real, "imag": ops.imag,
}


def _part_setter(part):
    """z.real = v writes v into z's real part (a view), as torch's setter: in place, recorded like copy_"""
    def setter(self, value):
        view = part(self)
        view.copy_(value) if isinstance(value, Tensor) else view.fill_(value)
    return setter


SETTERS = {"real": _part_setter(ops.real), "imag": _part_setter(ops.imag)}


def _nn():
    from .ops import nn
    return nn


def _creation():
    from . import _creation
    return _creation


# torch's native ops also take numpy's spellings axis= (for dim=) and keepdims= (for keepdim=);
# these are Python functions in torch and do not (Tensor.unflatten does not, torch.unflatten does)
NO_NUMPY_ALIASES = {"norm", "split"}


def numpy_aliases(fn):
    """fn, also accepting axis= for dim= and keepdims= for keepdim= (as torch's argument parser)."""
    try:
        params = inspect.signature(getattr(fn, "_dims_of", fn)).parameters
    except (TypeError, ValueError):
        return fn
    aliases = [(a, d) for a, d in (("axis", "dim"), ("keepdims", "keepdim")) if d in params]
    if not aliases:
        return fn

    @functools.wraps(fn)
    def accepting_numpy_names(*args, **kwargs):
        if not kwargs:  # the common call, x.sum() or x.sum(1)
            return fn(*args)
        for alias, name in aliases:
            if alias in kwargs:
                if name in kwargs:
                    raise TypeError(f"{fn.__name__.lstrip('_')}() got multiple values for argument '{name}' "
                                    f"(given as {name}= and as numpy's {alias}=); pass one")
                kwargs[name] = kwargs.pop(alias)
        return fn(*args, **kwargs)
    return accepting_numpy_names


def install(cls):
    for name, fn in METHODS.items():
        setattr(cls, name, fn if name in NO_NUMPY_ALIASES or name == "unflatten" else numpy_aliases(fn))
    cls.__new__ = staticmethod(_legacy_constructor(cls))


def _legacy_constructor(tensor_cls):
    """Tensor.__new__: Tensor(t), torch's legacy constructor given a tensor, is an alias of t (its memory, dtype,
    strides and version), recorded as AliasBackward0 when t requires grad. Tensor(sizes...) and Tensor(data) make a
    new tensor (Tensor.__init__), as do subclasses."""
    def __new__(cls, *args, **kwargs):
        if cls is tensor_cls and len(args) == 1 and not kwargs and isinstance(args[0], cls):
            from .ops.shape import Alias, _share
            return _share(Alias.apply(args[0], args[0].shape), args[0])
        return object.__new__(cls)
    return __new__


def install_more(cls, clean_errors=None):
    """The methods of _more_methods (they need ops.inplace, installed after the core methods); clean_errors
    (from the namespace above) keeps internal errors from reaching users."""
    for name, fn in _more_methods().items():
        fn = clean_errors(fn, name) if clean_errors is not None else fn
        setattr(cls, name, fn if name in NO_NUMPY_ALIASES else numpy_aliases(fn))
    cls.output_nr = property(lambda self: self._output_nr)
    cls.is_cpu = property(lambda self: not self.is_meta)
    cls.volatile = property(_volatile)
    for name, fn in PROPERTIES.items():
        setattr(cls, name, property(fn, SETTERS.get(name)))


def _volatile(self):
    import warnings
    warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=2)
    return False


def with_float_operators(cls):
    """`t * 0.5`, `0.5 * t`, `t + 0.5`, `0.5 + t`, `t - 0.5` for a floating tensor t go straight to their op.
    Scalar autograd does little else, and a Python float passes every check of the guard (ops/_checks.py) and of
    ops.mul/add/sub, which then choose these very ops (two Python calls a step). Other operands take that path."""
    from .ops.elementwise import AddNumber, MulNumber, SubNumber
    guarded = {name: getattr(cls, name) for name in ("__mul__", "__rmul__", "__add__", "__radd__", "__sub__")}

    def times(op, by_guard, kinds):
        def operator(self, other):
            if other.__class__ is float and self._data.dtype.kind in kinds:
                return op.apply(self, other)
            return by_guard(self, other)
        return operator

    def plus(op, by_guard, kinds):  # (torch's t.__add__(2, alpha=3) takes alpha too)
        def operator(self, other, *, alpha=None):
            if other.__class__ is float and alpha is None and self._data.dtype.kind in kinds:
                return op.apply(self, other)
            return by_guard(self, other) if alpha is None else by_guard(self, other, alpha=alpha)
        return operator
    for name, make, op, kinds in (("__mul__", times, MulNumber, "fc"), ("__rmul__", times, MulNumber, "fc"),
                                  ("__add__", plus, AddNumber, "f"), ("__radd__", plus, AddNumber, "f"),
                                  ("__sub__", plus, SubNumber, "f")):
        operator = make(op, guarded[name], kinds)
        operator.__name__ = operator.__qualname__ = guarded[name].__name__
        setattr(cls, name, operator)
