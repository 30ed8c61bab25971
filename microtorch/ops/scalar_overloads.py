"""torch's Scalar overloads, as its C++ backward formulas record them. In those formulas `t + 1` is add.Scalar
(AddBackward1), `t - 1` sub.Scalar (SubBackward1), `t * 2` mul.Scalar (MulBackward1), and `1 - t` a tensor
filled with 1 minus t (SubBackward0, whose first edge leads nowhere), where Python's `t + 1` records
AddBackward0 and `1 - t` RsubBackward1. A gradient's own graph (create_graph=True) shows these names.
Each helper computes in numpy alone where its tensor records nothing (see _op.plain)."""
import operator

import numpy as np

from .._tensor import Tensor
from . import _zero_tangent
from ._op import plain, unrecorded
from .elementwise import Add, MulScalar, Sub, _by_number


class AddScalar(Add):
    """d(a + s) = 1 for a number s (torch's add.Scalar)"""
    _grad_fn_name = "AddBackward1"
    _edges = None  # (the number is a Scalar to torch: no edge)
    _saved_values = {}

    @staticmethod
    def forward(ctx, a, s):
        return _by_number(operator.add, a, s)

    @staticmethod
    def backward(ctx, grad):
        return grad, None

    @staticmethod
    def jvp(ctx, t, _s):
        return t + 0  # torch's: the tangent cloned (a tangent of its own, not the input's)


class SubScalar(AddScalar):
    """d(a - s) = 1 for a number s (torch's sub.Scalar)"""
    _grad_fn_name = "SubBackward1"

    @staticmethod
    def forward(ctx, a, s):
        return _by_number(operator.sub, a, s)


class MulComplexScalar(MulScalar):
    """d(a*s) = s for a complex number s: the gradient is grad * conj(s), as torch's mul.Scalar (MulScalar's
    backward multiplies by s itself, right for the real numbers it is used with elsewhere)"""
    _grad_fn_name = "MulBackward1"

    @staticmethod
    def backward(ctx, grad):
        return MulComplexScalar.apply(grad, ctx.s.conjugate()), None


def maybe_multiply(t, s):
    """torch's maybe_multiply in a backward formula: t itself for a factor of 1, else t * s (MulBackward1)."""
    return t if s == 1 else mul_scalar(t, s)


def mul_scalar(t, s):
    """t * s in a backward formula: MulBackward1 (see MulScalar)."""
    if unrecorded(t):
        return plain(_by_number(operator.mul, t._data, s))
    out = MulComplexScalar.apply(t, s) if isinstance(s, (complex, np.complexfloating)) else MulScalar.apply(t, s)
    return _zero_tangent.as_zero(out) if type(t) is _zero_tangent.ZeroTangent else out  # (torch's zero tensor
    # times a number is one: the formula after it, as atanh's g * 1 / (1 - x^2), keeps it 0 where x is 1)


def add_scalar(t, s):
    """t + s in a backward formula: AddBackward1."""
    return plain(_by_number(operator.add, t._data, s)) if unrecorded(t) else AddScalar.apply(t, s)


def sub_scalar(t, s):
    """t - s in a backward formula: SubBackward1."""
    return plain(_by_number(operator.sub, t._data, s)) if unrecorded(t) else SubScalar.apply(t, s)


def scalar_minus(s, t):
    """s - t in a backward formula, as torch's C++ computes it: a constant filled with s (no edge) minus t."""
    filled = np.asarray(s, t._data.dtype)
    return plain(filled - t._data) if unrecorded(t) else Sub.apply(Tensor._make(filled), t)
