"""Tensor's operators and methods, each a one-line call into ops."""
import numpy as np

from . import ops


def _r(fn):
    """The reflected operator: other <op> self."""
    return lambda self, other: fn(other, self)


def _rsub(self, other):
    return ops.sub(other, self)


def _rdiv(self, other):
    return ops.div(other, self)


def _rpow(self, other):
    return ops.pow(other, self)


def _rmatmul(self, other):
    return ops.matmul(other, self)


def _sum(self, dim=None, keepdim=False, dtype=None):
    return ops.sum(self, dim, keepdim, dtype=dtype)


def _mean(self, dim=None, keepdim=False, dtype=None):
    return ops.mean(self, dim, keepdim, dtype=dtype)


def _setitem(self, key, value):
    from .ops.inplace import setitem
    setitem(self, key, value)


def _neg_bool_check(self):
    if self.dtype.name == "bool":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
                           "invert a mask, use the `~` or `logical_not()` operator instead.")
    return ops.neg(self)


def _invert(self):
    if self.dtype.name == "bool":
        return ops.logical_not(self)
    from ._tensor import Tensor
    return Tensor._make(np.invert(self._data))


def _and(self, other):
    return ops.logical_and(self, other) if self.dtype.name == "bool" else _bitwise(np.bitwise_and, self, other)


def _or(self, other):
    return ops.logical_or(self, other) if self.dtype.name == "bool" else _bitwise(np.bitwise_or, self, other)


def _xor(self, other):
    return ops.logical_xor(self, other) if self.dtype.name == "bool" else _bitwise(np.bitwise_xor, self, other)


def _bitwise(fn, a, b):
    from ._tensor import Tensor
    return Tensor._make(np.asarray(fn(a._data, b._data if isinstance(b, Tensor) else b)))


def _floordiv(self, other):
    return ops.div_rounded(self, other, "floor")


def _mod(self, other):
    return ops.remainder(self, other)


METHODS = {
    # operators
    "__add__": ops.add, "__radd__": _r(ops.add), "__sub__": ops.sub, "__rsub__": _rsub,
    "__mul__": ops.mul, "__rmul__": _r(ops.mul), "__truediv__": ops.div, "__rtruediv__": _rdiv,
    "__pow__": ops.pow, "__rpow__": _rpow, "__matmul__": ops.matmul, "__rmatmul__": _rmatmul,
    "__neg__": _neg_bool_check, "__pos__": lambda self: self, "__abs__": ops.abs,
    "__floordiv__": _floordiv, "__mod__": _mod, "__invert__": _invert,
    "__and__": _and, "__or__": _or, "__xor__": _xor, "__rand__": _and, "__ror__": _or,
    "__eq__": ops.eq, "__ne__": ops.ne, "__lt__": ops.lt, "__le__": ops.le, "__gt__": ops.gt, "__ge__": ops.ge,
    "__getitem__": ops.getitem, "__setitem__": _setitem,
    # elementwise
    "add": lambda self, other, alpha=1: ops.add(self, other, alpha=alpha),
    "sub": lambda self, other, alpha=1: ops.sub(self, other, alpha=alpha),
    "subtract": lambda self, other, alpha=1: ops.sub(self, other, alpha=alpha),
    "mul": ops.mul, "multiply": ops.mul,
    "div": lambda self, other, rounding_mode=None: ops.div(self, other, rounding_mode=rounding_mode),
    "divide": lambda self, other, rounding_mode=None: ops.div(self, other, rounding_mode=rounding_mode),
    "true_divide": ops.div, "neg": ops.neg, "negative": ops.neg, "pow": ops.pow, "abs": ops.abs,
    "absolute": ops.abs, "exp": ops.exp, "log": ops.log, "log2": ops.log2, "log10": ops.log10,
    "log1p": ops.log1p, "expm1": ops.expm1, "erf": ops.erf, "sqrt": ops.sqrt, "rsqrt": ops.rsqrt, "sin": ops.sin,
    "cos": ops.cos, "tan": ops.tan, "asin": ops.asin, "acos": ops.acos, "atan": ops.atan, "sinh": ops.sinh,
    "cosh": ops.cosh, "tanh": ops.tanh, "sigmoid": ops.sigmoid, "relu": ops.relu, "reciprocal": ops.reciprocal,
    "square": ops.square, "sign": ops.sign, "sgn": ops.sgn, "clamp": ops.clamp, "clip": ops.clamp,
    "maximum": ops.maximum, "minimum": ops.minimum, "where": lambda self, cond, other: ops.where(cond, self, other),
    "conj": ops.conj, "angle": ops.angle, "floor": ops.floor, "ceil": ops.ceil, "round": ops.round_,
    "trunc": ops.trunc, "fmod": ops.fmod, "remainder": ops.remainder,
    # reductions
    "sum": _sum, "mean": _mean, "var": ops.var, "std": ops.std, "prod": ops.prod, "max": ops.max,
    "min": ops.min, "amax": ops.amax, "amin": ops.amin, "logsumexp": ops.logsumexp, "norm": ops.norm,
    "argmax": ops.argmax, "argmin": ops.argmin, "all": ops.all, "any": ops.any, "cumsum": ops.cumsum,
    "count_nonzero": ops.count_nonzero, "sort": ops.sort, "topk": ops.topk, "nonzero": ops.nonzero,
    "eq": ops.eq, "ne": ops.ne, "lt": ops.lt, "le": ops.le, "gt": ops.gt, "ge": ops.ge,
    "logical_and": ops.logical_and, "logical_or": ops.logical_or, "logical_not": ops.logical_not,
    "logical_xor": ops.logical_xor, "isnan": ops.isnan, "isinf": ops.isinf, "isfinite": ops.isfinite,
    "equal": ops.equal, "allclose": ops.allclose, "isclose": ops.isclose,
    # shape
    "reshape": ops.reshape, "view": ops.view, "flatten": ops.flatten, "unflatten": ops.unflatten,
    "squeeze": ops.squeeze, "unsqueeze": ops.unsqueeze, "transpose": ops.transpose, "swapaxes": ops.transpose,
    "swapdims": ops.transpose, "permute": ops.permute, "t": ops.t, "expand": ops.expand,
    "expand_as": ops.expand_as, "broadcast_to": ops.broadcast_to, "repeat": ops.repeat, "split": ops.split,
    "chunk": ops.chunk, "unbind": ops.unbind, "flip": ops.flip, "narrow": ops.narrow, "movedim": ops.movedim,
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

PROPERTIES = {
    "T": ops.numpy_T, "mT": ops.mT, "H": lambda self: ops.conj(ops.numpy_T(self)),
    "mH": lambda self: ops.conj(ops.mT(self)), "real": ops.real, "imag": ops.imag,
}


def _nn():
    from .ops import nn
    return nn


def _creation():
    from . import _creation
    return _creation


def install(cls):
    for name, fn in METHODS.items():
        setattr(cls, name, fn)
    for name, fn in PROPERTIES.items():
        setattr(cls, name, property(fn))
