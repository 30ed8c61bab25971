"""The exact-zero tangent of forward-mode AD: what torch's jvp rules see for an input that has no tangent (an
efficient zero tensor), here in the ops' layer so that their `jvp` rules can make one too (the tangent of the number
in `x * 2` is such a zero: torch wraps the number as a 0-d tensor, whose tangent is a zero of its dtype).

In a rule's arithmetic it is an exact zero that takes no part: `ta * b + a * tb` has the bits of `a * tb` (not NaN
where b is inf, and keeping a -0.0 that adding +0.0 would lose). Where an operand requires grad the op is recorded as
torch records it (MulBackward0 of the zero, AddBackward0 over it), with those values. Any other op sees a tensor of
zeros."""
import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ..autograd import grad_mode


class ZeroTangent(Tensor):
    """A tensor of zeros that multiplies into zeros and adds as nothing (see the module's docstring)."""
    __slots__ = ()

    def __mul__(self, other):
        return _zero_result(Tensor.__mul__, self, other)

    def __rmul__(self, other):
        return _zero_result(lambda z, o: Tensor.__mul__(o, z) if isinstance(o, Tensor) else Tensor.__rmul__(z, o),
                            self, other)

    def __truediv__(self, other):
        return _zero_result(Tensor.__truediv__, self, other)

    def __add__(self, other):
        return _kept_result(Tensor.__add__, self, other, False)

    def __radd__(self, other):
        return _kept_result(lambda z, o: Tensor.__add__(o, z) if isinstance(o, Tensor) else Tensor.__radd__(z, o),
                            self, other, False)

    def __sub__(self, other):
        return _kept_result(Tensor.__sub__, self, other, True)

    def __rsub__(self, other):
        return _kept_result(lambda z, o: Tensor.__sub__(o, z) if isinstance(o, Tensor) else Tensor.__rsub__(z, o),
                            self, other, False)

    def _is_zerotensor(self):
        """True, as torch's efficient zero tensor answers (a gradient autograd.grad returns can be one)"""
        return True

    def numpy(self, *, force=False):
        """torch's zero tensor has no memory to share: numpy() refuses it, numpy(force=True) gives the zeros"""
        if not force:
            raise RuntimeError("Cannot convert a ZeroTensor to numpy. Set force=True if you need the zero array. "
                               "(This gradient is an exact zero that torch does not store, as sgn's gradient; or "
                               "take g.clone().numpy().)")
        return Tensor.numpy(self, force=True)


ZeroTangent.__name__ = ZeroTangent.__qualname__ = "Tensor"  # (what a user handed one sees: type, repr, pickle)
ZeroTangent.__module__ = Tensor.__module__


_NUMBER_DTYPES = {bool: np.bool_, int: np.int64, float: np.float64, complex: np.complex128}


def zeros(shape, dtype):
    """An exact-zero tangent of this shape and numpy dtype."""
    return ZeroTangent._make(np.zeros(shape, dtype))


def of_number(s):
    """The tangent of a Python number operand: a 0-d zero of the dtype torch wraps the number in (int64 for an int,
    float64 for a float), so that the rule's result has the dtype it has in torch."""
    return zeros((), _NUMBER_DTYPES.get(type(s), np.float64))


def recorded(*tensors):
    """Whether an op on these tensors records a node, on plain arrays (not a vmap batch): then a zero's terms show."""
    return grad_mode.is_grad_enabled() and any(x._requires_grad for x in tensors) \
        and all(type(x._data) is np.ndarray for x in tensors)


def _recorded(op, zero, other):
    """op(zero, other) as the tensors' own op when it records a node and computes on plain arrays, else None."""
    return op(zero, other) if recorded(*((zero, other) if isinstance(other, Tensor) else (zero,))) else None


def _zero_result(op, zero, other):
    """zero <op> other, where torch's zero tensor gives zeros (of the result's shape and dtype)."""
    dtype = _dtype.result_type(zero, other).np if other is not None else zero._data.dtype
    if zero._data.dtype != dtype:  # (a zero in the result's dtype: a recorded op keeps it, and its backward the zero)
        zero = zeros(zero._data.shape, dtype)
    out = _recorded(op, zero, other)
    if out is None:
        data = other._data if isinstance(other, Tensor) else other
        return zeros(np.broadcast_shapes(zero._data.shape, np.shape(data)), dtype)
    return as_zero(out)


def as_zero(out):
    """The result of a recorded op on an exact zero (its node kept) made an exact zero again, as torch's op on a zero
    tensor gives one (0 * inf too). (A vmap batch is left as it is.)"""
    if type(out._data) is np.ndarray:
        out._data = np.zeros(out._data.shape, out._data.dtype)
        out.__class__ = ZeroTangent
    return out


def _kept_result(op, zero, other, negated):
    """zero + other (or zero - other: negated; other - zero otherwise), where torch's zero tensor gives other's
    values themselves, in a new tensor (as torch's). An operand of another shape or dtype, or a number, takes the
    tensors' own op."""
    if not isinstance(other, Tensor):
        return op(zero, other)
    if type(other) is ZeroTangent:  # (two zeros: a zero)
        return as_zero(op(zero, other))
    out = _recorded(op, zero, other)
    if out is None:
        if other.shape != np.broadcast_shapes(zero._data.shape, other._data.shape) \
                or other.dtype != _dtype.result_type(zero, other):
            return op(zero, other)
        if negated or other._requires_grad:  # (unrecorded here: grad mode is off, or a vmap batch)
            return -other if negated else other
        return other.clone()  # (an op, not an array copy: other's tangents at outer levels follow)
    value = np.negative(other._data) if negated else other._data
    out._data = np.broadcast_to(value, out._data.shape).astype(out._data.dtype)
    return out


def plain(t):
    """A tangent as it is kept on a tensor: a ZeroTangent a rule returned becomes an ordinary tensor."""
    if type(t) is ZeroTangent:
        t.__class__ = Tensor
    return t
