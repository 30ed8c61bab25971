"""Elementwise ops. Each backward returns the gradient at the broadcast output shape;
the engine sums it back to each input's shape (broadcasting is undone in one place)."""
import math
import operator

import numpy as np

from .._dtype import result_type
from .. import _kernel_exp, _kernel_gelu, _kernel_log
from .._fma import fma
from .._tensor import Tensor
from ..autograd.saved import FREED_MESSAGE
from . import _zero_tangent as _zero
from ._checks import need_floating
from ._kernels import kernel_error
from ._layout import as_input, converted, laid_out_as_input, like_torch, like_torch_pair, with_number
from ._op import Op, WrappedNumber, as_array, broadcast_error, number_as, plain, promoted, scalar_path, unrecorded
from ._range_kernels import _thread_chunks


# ---- arithmetic -----------------------------------------------------------------------------
def _operands(a, b, op="binary op", wrapped=False):
    """(a, b, dtype): a binary op's operands in their result dtype, except a tensor taking part in differentiation,
    which keeps its own: torch's kernel casts it inside the op (its graph has no ToCopyBackward0 node) and the
    engine casts its gradient back. dtype: the result's numpy dtype when an operand kept another, else None. op: the
    op's name, for torch's OverflowError (an int beyond 64 bits). wrapped: a Python number stays in the dtype torch
    wraps it in (see _wrapped; mul and div save it, and so keep every tensor in its own dtype too, as torch's
    node saves it: `t.count_nonzero() * s` saves an int64 tensor)."""
    _int64(a, op)
    _int64(b, op)
    dt = result_type(a, b).np
    x, y = ((_wrapped(v, dt) if wrapped else number_as(v, dt)) if not isinstance(v, Tensor) else v
            if v._data.dtype == dt or wrapped or v._requires_grad or v._fw_grads is not None
            else Tensor._make(converted(v._data, dt))  # (laid out as torch converts it: see ops/_layout.py)
            for v in (a, b))
    kept = any((v._data if isinstance(v, Tensor) else v).dtype != dt for v in (x, y))
    return x, y, dt if kept else None


_WRAPPED = {bool: np.dtype(np.bool_), int: np.dtype(np.int64), float: np.dtype(np.float64),
            complex: np.dtype(np.complex128)}


def _wrapped(v, dt):
    """A Python number as torch wraps it, a 0-d array of its own dtype (int64, float64, ...), cast inside the op
    (grad_fn._saved_self of mul(2, t) is int64's 2); another operand (a numpy scalar) in dt."""
    wrapped = _WRAPPED.get(type(v))
    return number_as(v, dt if wrapped is None else wrapped)


def _int64(x, op):
    """torch reads a Python int operand as a 64-bit integer (unsigned from 2**63 on): beyond that range its
    OverflowError, for a float tensor too (numpy would take 2**70 as a float). op: the op named in the message."""
    if x.__class__ is int and not -2 ** 63 <= x < 2 ** 64:
        from .inplace import check_int_range
        check_int_range((x,), None, op)


def _in(dtype, a, b):
    """a and b cast to the op's dtype (when _operands left one in its own), laid out as torch casts them"""
    return converted(a, dtype), converted(np.asarray(b), dtype)


class Add(Op):
    """d(a + alpha*b) = (1, alpha)"""
    _grad_fn_name = "AddBackward0"
    _edges = (0, 1)  # (torch records a number as a tensor: an edge to None)
    _saved_values = {"alpha": "alpha"}

    @staticmethod
    def forward(ctx, a, b, alpha=1, dtype=None):
        ctx.alpha = alpha
        if dtype is not None:  # (checked here: a call less on the common path)
            a, b = _in(dtype, a, b)
        if alpha == 1 and a.dtype.kind != "c":
            if a.ndim == 0 == b.ndim:  # (see scalar_path in _op.py)
                return a[()] + b[()]
            return like_torch_pair(a + b, a, b)
        return like_torch(_with_scaled(np.add, a, b, alpha), a, b)  # (complex: see _with_scaled)

    @staticmethod
    def backward(ctx, grad):
        return grad, (grad if ctx.alpha == 1 else grad * ctx.alpha)

    @staticmethod
    def jvp(ctx, ta, tb):
        return ta + tb if ctx.alpha == 1 else ta + tb * ctx.alpha


class AddNumber(Add):
    """d(a + s) = 1 for a Python number s: like torch, s stays a number and nothing is saved"""
    _grad_fn_name = "AddBackward0"

    @staticmethod
    def forward(ctx, a, s):
        ctx.alpha = 1
        if a.ndim < 2:  # (a 0-d array as a scalar: see scalar_path in _op.py)
            return (a[()] if a.ndim == 0 else a) + s
        return with_number(a + s, a)  # (laid out as torch's)

    @staticmethod
    def backward(ctx, grad):
        return grad, None

    @staticmethod
    def jvp(ctx, ta, _s):  # (SubNumber's too) torch's: a's tangent plus (minus) the number's, an exact zero
        zero = _zero.of_number(ctx.inputs[1])
        return ta - zero if ctx._forward_cls is SubNumber else ta + zero


def _with_scaled(ufunc, a, b, alpha):
    """a + alpha*b (ufunc add) or a - alpha*b, written into the temporary alpha*b when it has the
    result's shape and dtype: one temporary instead of two (an optimizer's p.add_(d, alpha=-lr)
    on a large weight pays a page fault per 4 KiB of each fresh temporary). torch's complex kernel
    multiplies b by alpha even when alpha is 1, so an inf in one part of b makes the other part nan
    (z + inf is inf+nanj): complex results come here whatever alpha is. float32 with alpha != 1: torch's kernel
    is one fused multiply-add with alpha in float32 (see fused_add)."""
    if alpha != 1 and a.dtype == np.float32 == np.result_type(a, b):
        return fused_add(a, b, alpha if ufunc is np.add else -alpha)
    scaled = alpha * b
    if type(scaled) is np.ndarray and scaled.shape == np.shape(a) and scaled.dtype == np.result_type(a, scaled):
        return ufunc(a, scaled, out=scaled)
    return ufunc(a, scaled)


def fused_add(a, b, alpha):
    """a + alpha*b for float32 arrays as torch's kernel computes it: alpha rounded to float32, then one fused
    multiply-add (every optimizer step `p.add_(g, alpha=-lr)`, which two roundings put a last bit off)."""
    return fma(b, np.float32(alpha), a)


def add(input, other, *, alpha=1):
    a, b = input, other
    if type(alpha) is not int and alpha == 1:  # (1.0 or True equal 1, but torch checks their type)
        alpha = _alpha_for(result_type(a, b), alpha, "add")
    try:
        if isinstance(a, Tensor) and isinstance(b, Tensor) and a._data.dtype == b._data.dtype:
            return Add.apply(a, b) if alpha == 1 else Add.apply(a, b, alpha=_alpha_for(a.dtype, alpha, "add"))
        # float tensor + number, the commonest call with mul's: the tensor's dtype, a call less
        if alpha == 1 and type(b) in _NUMBERS and isinstance(a, Tensor) and a._data.dtype.kind == "f":
            if b.__class__ is int and not -2 ** 63 <= b < 2 ** 64:
                _int64(b, "add")
            return AddNumber.apply(a, b)  # (complex: Add, see _with_scaled)
        if alpha != 1:
            alpha = _alpha_for(result_type(a, b), alpha, "add")
        x, y, dt = _operands(a, b, "add")  # (add(2, t): the number first is a 0-d tensor to torch, an edge to None)
        return Add.apply(x, y) if alpha == 1 and dt is None else Add.apply(x, y, alpha=alpha, dtype=dt)
    except ValueError as e:
        raise broadcast_error("add", e, a, b) from None


def _alpha_for(dtype, alpha, op):
    """alpha as torch takes it for tensors of dtype: for integer or bool ones an integer (a bool for bool ones),
    converted with torch's check (a RuntimeError if it does not fit; uint8 takes down to -255, which wraps)."""
    kind = dtype.np.kind
    if isinstance(alpha, np.bool_):  # (torch's parser reads a numpy bool as a float: 1.0 or 0.0)
        alpha = float(alpha)
    _int64(alpha, op)
    if kind != "b" and isinstance(alpha, (bool, np.bool_)):  # (floating results too: add(x, 1, alpha=False))
        raise RuntimeError(f"Boolean alpha only supported for Boolean results. ({op}: give alpha as a number)")
    if kind == "f" and isinstance(alpha, (complex, np.complexfloating)):
        raise RuntimeError(f"For non-complex input tensors, argument alpha must not be a complex number. ({op}: "
                           f"alpha={alpha!r}; give a real alpha, or make an operand complex)")
    if kind not in "iub":
        return _scalar(alpha, op)
    if not isinstance(alpha, (int, np.integer, np.bool_)):  # (bool results too: add(b, True, alpha=0.5))
        raise RuntimeError(f"For integral input tensors, argument alpha must not be a floating point number. ({op}: "
                           f"alpha={alpha!r}; give an int, or make the tensors floating point)")
    from .index import fill_scalar
    return fill_scalar(alpha, dtype, op)


def _scalar(alpha, op):
    """alpha as the number torch's Scalar holds: a numpy scalar's Python value (np.float64(2) must not make a
    float32 result float64), an int only in torch's 64-bit range."""
    if isinstance(alpha, np.generic):
        return alpha.item()
    if type(alpha) is int and not -2 ** 63 <= alpha < 2 ** 64:
        raise OverflowError(f"{op}(): int too big to convert (alpha={alpha}: torch takes a 64-bit integer here, from "
                            "-2**63 to 2**64 - 1)")
    return alpha


class Sub(Op):
    """d(a - alpha*b) = (1, -alpha)"""
    _grad_fn_name = "SubBackward0"
    _edges = (0, 1)  # (torch records a number as a tensor: an edge to None)
    _saved_values = {"alpha": "alpha"}

    @staticmethod
    def forward(ctx, a, b, alpha=1, dtype=None):
        ctx.alpha = alpha
        if dtype is not None:
            a, b = _in(dtype, a, b)
        if alpha == 1 and a.dtype.kind != "c":
            return like_torch_pair(a - b, a, b)
        return like_torch(_with_scaled(np.subtract, a, b, alpha), a, b)

    @staticmethod
    def backward(ctx, grad):
        if not ctx.needs_input_grad[1]:  # (a constant b: no negation to pay for)
            return grad, None
        return grad, _negated(grad) if ctx.alpha == 1 else _negated(grad) * ctx.alpha  # (torch's: -0.0 for alpha 0)

    @staticmethod
    def jvp(ctx, ta, tb):
        return ta - tb if ctx.alpha == 1 else ta - tb * ctx.alpha


def sub(input, other, *, alpha=1):
    a, b = input, other
    if type(alpha) is not int and alpha == 1:  # (1.0 or True equal 1, but torch checks their type)
        alpha = _alpha_for(result_type(a, b), alpha, "sub")
    try:
        if alpha == 1 and type(b) in _NUMBERS and isinstance(a, Tensor) and a._data.dtype.kind == "f":
            if b.__class__ is int and not -2 ** 63 <= b < 2 ** 64:
                _int64(b, "sub")
            return SubNumber.apply(a, b)  # (complex: Sub, see _with_scaled)
        if a.__class__ is bool:  # sub(True, t): the guard's dtype test looks at the tensors and at `other`
            raise kernel_error("sub", (a, b))
        if alpha != 1:
            alpha = _alpha_for(result_type(a, b), alpha, "sub")
        x, y, dt = a, b, None
        if not (isinstance(a, Tensor) and isinstance(b, Tensor) and a._data.dtype == b._data.dtype):
            x, y, dt = _operands(a, b, "sub")  # (sub(2, t): the number first is a 0-d tensor to torch: no edge)
        return Sub.apply(x, y) if alpha == 1 and dt is None else Sub.apply(x, y, alpha=alpha, dtype=dt)
    except ValueError as e:
        raise broadcast_error("sub", e, a, b) from None


class SubNumber(Sub):
    """d(a - s) = 1 for a Python number s: like torch, s stays a number and nothing is saved"""
    _grad_fn_name = "SubBackward0"
    # a's gradient and tangent pass through, as in a + s
    backward, jvp = staticmethod(AddNumber.backward), staticmethod(AddNumber.jvp)

    @staticmethod
    def forward(ctx, a, s):
        ctx.alpha = 1
        if a.ndim < 2:  # (see scalar_path in _op.py)
            return (a[()] if a.ndim == 0 else a) - s
        return with_number(a - s, a)


class Rsub(Sub):
    """d(s - alpha*a) = -alpha: torch's rsub(a, s) for a number s, which `2 - a` calls (s has no edge)"""
    _grad_fn_name = "RsubBackward1"
    _edges = None  # (torch's rsub takes the number as a Scalar: no edge)

    @staticmethod
    def forward(ctx, a, s, alpha=1, dtype=None):
        ctx.alpha = alpha
        if dtype is not None:
            a, s = _in(dtype, a, s)
        return with_number(s - a if alpha == 1 and a.dtype.kind != "c" else _with_scaled(np.subtract, s, a, alpha), a)

    @staticmethod
    def backward(ctx, grad):
        return _negated(grad) if ctx.alpha == 1 else grad * -ctx.alpha, grad

    @staticmethod
    def jvp(ctx, ta, tb):
        ta = ta if ctx.alpha == 1 else ta * ctx.alpha
        if tb is None or ctx._forward_cls is Rsub:  # (torch: -alpha * a's tangent, in its dtype, even when the
            return -ta                                # number made the result complex)
        return -ta + tb


class RsubTensors(Rsub):
    """d(b - alpha*a) = (-alpha, 1): torch's rsub of two tensors"""
    _grad_fn_name = "RsubBackward0"

    @staticmethod
    def forward(ctx, a, b, alpha=1, dtype=None):
        if dtype is not None:  # (converted first, as torch's: the layout is the converted operands')
            a, b = _in(dtype, a, b)
        return like_torch(Rsub.forward(ctx, a, b, alpha), b, a)  # (torch's rsub is sub(b, a): b's strides first)


def rsub(input, other, alpha=1):
    if type(other) in _NUMBERS and alpha.__class__ is int and alpha == 1 and isinstance(input, Tensor) \
            and input._data.dtype.kind in "fc":  # 1 - h (W6's loss, through h.__rsub__): in the tensor's dtype
        if other.__class__ is int and not -2 ** 63 <= other < 2 ** 64:
            _int64(other, "rsub")
        return Rsub.apply(input, other)
    if alpha != 1 or alpha.__class__ is not int:
        alpha = _alpha_for(result_type(input, other), alpha, "rsub")
    x, y, dt = _operands(input, other, "rsub")
    op = RsubTensors if isinstance(other, Tensor) else Rsub
    try:
        return op.apply(x, y) if alpha == 1 and dt is None else op.apply(x, y, alpha=alpha, dtype=dt)
    except ValueError as e:
        raise broadcast_error("rsub", e, input, other) from None


class Mul(Op):
    """d(a*b) = (b, a)"""
    _grad_fn_name = "MulBackward0"
    _edges = (0, 1)  # (torch records a number as a tensor: an edge to None)
    _saved_names = ("self", "other")  # torch: grad_fn._saved_self, _saved_other

    @staticmethod
    def forward(ctx, a, b, dtype=None):
        ctx.save_for_backward(a if ctx.needs_input_grad[1] else None, b if ctx.needs_input_grad[0] else None)
        if dtype is not None:
            a, b = _in(dtype, a, b)
        if a.ndim == 0 == b.ndim:  # (see scalar_path in _op.py)
            return a[()] * b[()]
        return like_torch_pair(a * b, a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        plain_grad = unrecorded(grad)  # (asked once for both products)
        return (_times_conj(grad, b, plain_grad) if ctx.needs_input_grad[0] else None,
                _times_conj(grad, a, plain_grad) if ctx.needs_input_grad[1] else None)

    @staticmethod
    def jvp(ctx, ta, tb):
        a, b = ctx.inputs[:2]  # (then forward's dtype)
        if ta is None or tb is None:  # (an integer operand, kept in its dtype, has no tangent)
            return ta * b if tb is None else tb * a
        return tb * a + ta * b  # (torch's order of the terms)


def _times_conj(grad, x, plain_grad):
    """grad * conj(x): for two real tensors of one dtype that nothing records (plain_grad: unrecorded(grad)), their
    product in numpy (see plain)."""
    dt = grad._data.dtype
    if plain_grad and x._data.dtype == dt and dt.kind != "c" and unrecorded(x):
        return plain(like_torch_pair(grad._data * x._data, grad._data, x._data))
    return grad * conj(x)


def mul(input, other):
    a, b = input, other
    try:
        if not (isinstance(a, Tensor) and isinstance(b, Tensor) and a._data.dtype == b._data.dtype):
            # tensor * number, the commonest call with add's: in the tensor's dtype, no promotion step
            if type(b) in _NUMBERS and isinstance(a, Tensor) and a._data.dtype.kind in "fc":
                if b.__class__ is int and not -2 ** 63 <= b < 2 ** 64:
                    _int64(b, "mul")
                return MulNumber.apply(a, b)
            a, b, dt = _operands(a, b, "mul", wrapped=True)  # (mul(2, t): the number is a 0-d tensor to torch)
            if dt is not None:
                return Mul.apply(a, b, dtype=dt)
        return Mul.apply(a, b)
    except ValueError as e:
        raise broadcast_error("mul", e, a, b) from None


class Div(Op):
    """d(a/b) = (1/b, -a/b^2)"""
    _grad_fn_name = "DivBackward0"
    _edges = (0, 1)  # (torch records a number as a tensor: an edge to None)
    _saved_names = ("self", "other")

    @staticmethod
    def forward(ctx, a, b, dtype=None):
        ctx.save_for_backward(a if ctx.needs_input_grad[1] else None, b)
        if dtype is not None:
            a, b = _in(dtype, a, b)
        return like_torch(a / b, a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        ga = grad / b.conj() if ctx.needs_input_grad[0] else None
        gb = -grad * ((a / b) / b).conj() if ctx.needs_input_grad[1] else None  # torch's order (its inf/nan at b = 0)
        return ga, gb

    @staticmethod
    def jvp(ctx, ta, tb):
        b = ctx.inputs[1]
        if ta is None or tb is None:  # (an integer operand, kept in its dtype, has no tangent)
            return ta / b if tb is None else -tb * ctx.output / b
        return (ta - tb * ctx.output) / b


def _float(t):
    if t._data.dtype.kind in "fc":
        return t
    from .._dtype import get_default_dtype
    return Tensor._make(t._data.astype(get_default_dtype().np))


def div(input, other, *, rounding_mode=None):
    a, b = input, other
    if rounding_mode is not None:
        from .misc import div_rounded
        return div_rounded(a, b, rounding_mode)
    if _keeps_dtype(a, b):
        if b.__class__ is int and not -2 ** 63 <= b < 2 ** 64:
            _int64(b, "div")
        return DivNumber.apply(a, b)
    if result_type(a, b).np.kind in "iub":  # true division of integers: each operand becomes the default
        _int64(a, "div")
        _int64(b, "div")
        a, b = _float_operand(a), _float_operand(b)  # float from its own dtype (uint8 / -1 is -1., not 1 / 255)
        dt = None
    else:
        a, b, dt = _operands(a, b, "div", wrapped=True)  # (div(2, t): the number is a 0-d tensor to torch)
    try:
        return Div.apply(a, b) if dt is None else Div.apply(a, b, dtype=dt)
    except ValueError as e:
        raise broadcast_error("div", e, a, b) from None


def _float_operand(x):
    """An integer or bool operand of true division in the default float dtype (a tensor, or a number's array)."""
    if isinstance(x, Tensor):
        return _float(x)
    from .._dtype import get_default_dtype
    return np.asarray(x, get_default_dtype().np)


class MulScalar(Op):
    """d(a*s) = s for a Python number s (torch's mul.Scalar, used inside composite ops)"""
    _grad_fn_name = "MulBackward1"
    _saved_values = {"other": "s"}  # (torch keeps the number: grad_fn._saved_other is 2)

    @staticmethod
    def forward(ctx, a, s):
        ctx.s = s
        return _by_number(operator.mul, a, s)

    @staticmethod
    def backward(ctx, grad):
        return MulScalar.apply(grad, ctx.s), None

    @staticmethod
    def jvp(ctx, t, _s):
        return MulScalar.apply(t, ctx.s)


_HALF = np.dtype(np.float16)


def _by_number(op, a, s):
    """a * s or a / s (op: operator.mul or truediv, which numpy's scalars compute by their own path) for an array a
    and a number s. A float16 a computes as
    torch's does, in float32 with the number unrounded and rounded once at the end (numpy would round the number
    to float16 first: a third of the products differ); a 0-d a takes numpy's scalar path (see scalar_path)."""
    if a.dtype is _HALF and type(s) in _NUMBERS:
        return with_number(op(a.astype(np.float32), np.float32(s)).astype(np.float16), a)
    if a.ndim < 2:
        return op(a[()] if a.ndim == 0 else a, s)
    return with_number(op(a, s), a)


class DivScalar(Op):
    """d(a/s) = 1/s for a Python number s (torch's div.Scalar, used inside composite ops)"""
    _grad_fn_name = "DivBackward1"
    _saved_values = {"other": "s"}  # (torch keeps the number: grad_fn._saved_other is 2)

    @staticmethod
    def forward(ctx, a, s):
        ctx.s = s
        return _by_number(operator.truediv, a, s)

    @staticmethod
    def backward(ctx, grad):
        return div_scalar(grad, ctx.s), None

    @staticmethod
    def jvp(ctx, t, _s):
        return DivScalar.apply(t, ctx.s)


def number_not_freed(ctx):
    """torch's node saves the number as a tensor (`_saved_other`), freed by backward: a second backward through
    it raises, as through any node that saved a tensor. (The number itself is kept: forward-mode reads it.)"""
    if ctx._saved is None:
        raise RuntimeError(FREED_MESSAGE)


def div_scalar(t, s):
    """t / s for a Python number s in a backward formula: DivScalar (torch's DivBackward1), or only its numpy
    division where t is unrecorded (see _op.plain)."""
    return plain(_by_number(operator.truediv, t._data, s)) if unrecorded(t) else DivScalar.apply(t, s)


class MulNumber(MulScalar):
    """d(a*s) = s for a Python number s: like torch, s stays a number and nothing is saved"""
    _grad_fn_name = "MulBackward0"
    _edges = (0, 1)  # (torch records a number as a tensor: an edge to None)
    _saved_values = {"self": None, "other": WrappedNumber("s")}  # (torch: None and tensor(s))

    @staticmethod
    def backward(ctx, grad):
        number_not_freed(ctx)
        if type(grad) is _zero.ZeroTangent:  # (torch's exact zero times a number stays an exact zero)
            return grad * ctx.s, None
        return plain(_by_number(operator.mul, grad._data, ctx.s)) if unrecorded(grad) else \
            MulNumber.apply(grad, ctx.s), None

    @staticmethod
    def jvp(ctx, t, _s):
        a = ctx.inputs[0]
        if not _zero.recorded(a, t):  # (the zero term and the sum record nothing: their values are t * s's)
            return t * ctx.s
        return _zero.of_number(ctx.s) * a + t * ctx.s  # torch's mul: the number's tangent is an exact zero


class DivNumber(DivScalar):
    """d(a/s) = 1/s for a Python number s: like torch, s stays a number and nothing is saved"""
    _grad_fn_name = "DivBackward0"
    _edges = (0, 1)  # (torch records a number as a tensor: an edge to None)
    _saved_values = {"self": None, "other": WrappedNumber("s")}  # (torch: None and tensor(s))

    @staticmethod
    def backward(ctx, grad):
        number_not_freed(ctx)
        if type(grad) is _zero.ZeroTangent:  # (as MulNumber's)
            return grad / ctx.s, None
        return plain(_by_number(operator.truediv, grad._data, ctx.s)) if unrecorded(grad) else \
            DivNumber.apply(grad, ctx.s), None

    @staticmethod
    def jvp(ctx, t, _s):
        if not _zero.recorded(ctx.output, t):  # (as MulNumber's)
            return t / ctx.s
        return (t - _zero.of_number(ctx.s) * ctx.output) / ctx.s  # torch's div


_NUMBERS = (int, float)


def _keeps_dtype(t, s):
    """t <op> s computes in t's dtype (numpy agrees with torch): a float or complex tensor and an int or float."""
    return type(s) in _NUMBERS and isinstance(t, Tensor) and t._data.dtype.kind in "fc"


@laid_out_as_input
class Neg(Op):
    """d(-x) = -1"""
    _grad_fn_name = "NegBackward0"

    @staticmethod
    def forward(ctx, x):
        return -x

    @staticmethod
    def backward(ctx, grad):
        return -grad

    @staticmethod
    def jvp(ctx, t):
        return -t


def neg(input):
    if isinstance(input, Tensor) and input._data.dtype.kind == "b":
        raise RuntimeError(NO_BOOL_NEGATION)
    return Neg.apply(input)


NO_BOOL_NEGATION = ("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a "
                    "mask, use the `~` or `logical_not()` operator instead.")


def _negated(grad):
    """-grad in a backward formula: Neg, or its values where nothing records (see plain)."""
    return plain(-grad._data) if unrecorded(grad) else Neg.apply(grad)


_POW_SPECIAL = {0.5: np.sqrt, 2: lambda x: x * x, 3: lambda x: x * x * x, -0.5: lambda x: 1 / np.sqrt(x),
                -1: lambda x: 1 / x, -2: lambda x: 1 / (x * x)}


@laid_out_as_input
class PowScalar(Op):
    """d(x^p) = p x^(p-1)"""
    _grad_fn_name = "PowBackward0"
    _saved_names, _saved_values = ("self",), {"exponent": "exponent"}

    @staticmethod
    def forward(ctx, x, exponent):
        ctx.exponent = exponent
        ctx.save_for_backward(x)
        if x.dtype.kind == "b":  # (bool ** True, bool ** False: torch copies, or fills ones)
            return x.copy() if exponent else np.ones_like(x)
        return PowScalar.values(x, exponent)

    @staticmethod
    def values(x, exponent):  # (arrays; also pow's backward where nothing records, see plain)
        if x.dtype.kind == "f" and exponent in _POW_SPECIAL:  # torch's kernels: the sign of -0 carries
            return np.asanyarray(_POW_SPECIAL[exponent](x), dtype=x.dtype)  # (any: a meta array stays meta)
        return np.power(x, np.asarray(exponent, dtype=x.dtype)) if exponent != 2 else x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        p = ctx.exponent
        if p == 0:
            return zeros_like_(x), None  # a constant: no graph behind it (as torch)
        if type(p) in _NUMBERS and x._data.dtype.kind == "f" and unrecorded(grad) and unrecorded(x):
            local = PowScalar.values(x._data, p - 1) * p  # (the ops below: x ** (p - 1), then times p, then grad *)
            return plain(like_torch(grad._data * local, grad._data, local)), None
        return grad * PowScalar._local(x, p).conj(), None

    @staticmethod
    def jvp(ctx, t, _p):
        x, p = ctx.inputs[0], ctx.exponent
        return zeros_like_(t) if p == 0 else t * PowScalar._local(x, p)

    @staticmethod
    def _local(x, p):
        """p x^(p-1) as torch's formula records it: the exponent read as a double, times as mul.Scalar"""
        from .scalar_overloads import mul_scalar
        p = complex(p) if isinstance(p, complex) else float(p)
        return mul_scalar(x.pow(p - 1), p)


class Pow(Op):
    """d(a^b) = (b a^(b-1), a^b log a)"""
    _grad_fn_name = "PowBackward1"
    _saved_names = ("self", "exponent", "result")

    @staticmethod
    def forward(ctx, a, b):
        if a.dtype == np.float32 == b.dtype:  # (torch's float32 pow is nearer the double result rounded than numpy's)
            power = np.power(a, b, dtype=np.float64).astype(np.float32)
        else:
            power = np.power(a, b)
        out = like_torch(np.asarray(power), a, b)  # (an array even when 0-d: it is saved)
        ctx.save_for_backward(a, b, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, b, out = ctx.saved_tensors
        ga = gb = None
        if ctx.needs_input_grad[0]:  # torch: 0 where b == 0 (masked, so nothing flows to b from there)
            from .scalar_overloads import sub_scalar
            ga = where(b == 0, 0.0, grad * (b * a ** sub_scalar(b, 1)).conj())  # (b - 1: torch's sub.Scalar)
        if ctx.needs_input_grad[1]:
            # torch: the log-term is 0 where a == 0 and b >= 0 (the limit of a^b log a)
            zero = (a == 0) & (b.real >= 0) if not b.is_complex() else (a == 0)
            gb = grad * where(zero, 0.0, (out * log(a)).conj())  # grad outside: its second order is 0 * log 0 = nan, as torch
        return ga, gb

    @staticmethod
    def jvp(ctx, ta, tb):
        a, b = ctx.inputs
        zero = (a == 0) & (b.real >= 0) if not b.is_complex() else (a == 0)
        return where(b == 0, 0.0, ta * (b * a ** (b - 1))) + where(zero, 0.0, tb * ctx.output * log(a))


def pow(input, exponent):
    a, b = input, exponent
    if isinstance(a, Tensor) and not isinstance(b, Tensor):
        return _pow_number(a, b)
    if not isinstance(a, Tensor):
        if not isinstance(b, Tensor):
            raise TypeError(f"pow() received an invalid combination of arguments - got ({type(a).__name__}, "
                            f"{type(b).__name__}): the base or the exponent must be a Tensor")
        return _rpow(a, b)
    x, y = promoted(a, b)
    try:
        if x._data.dtype.kind in "iu":  # no gradient: torch's integer power (numpy refuses negative exponents)
            return Tensor._make(_int_power(x._data, y._data))
        return Pow.apply(x, y)
    except ValueError as e:
        raise broadcast_error("pow", e, a, b) from None


def _pow_number(x, p):
    """x ** p for a Python number p, in torch's result dtype (bool ** 2 is int64, int ** 0.5 the default float)."""
    from .._dtype import result_type
    dt = result_type(x, p)
    x = _pow_operand(x, dt)
    p = int(p) if isinstance(p, (bool, np.bool_)) else p
    if dt.np.kind in "iu" and p < 0:
        raise RuntimeError(f"pow(): integers to negative integer powers are not allowed (exponent {p}); convert "
                           "the tensor with .float() first")
    return PowScalar.apply(x, p)


def _rpow(base, x):
    """base ** x for a Python number base and a tensor x."""
    from .._dtype import result_type
    dt = result_type(base, x)
    if dt.np.kind in "iu":  # int ** int tensor stays integral (-1 ** a uint8 tensor: -1 wraps to 255, as torch)
        return Tensor._make(_int_power(np.array(base).astype(dt.np), x._data.astype(dt.np)))
    keeps_real = dt.is_complex and x.dtype.is_floating_point and x.dtype.name != "float16"  # (as torch's x)
    return RPow.apply(x if keeps_real else _pow_operand(x, dt), base)


def _pow_operand(x, dt):
    """x in pow's result dtype dt (differentiably when it carries a gradient)."""
    if dt == x.dtype:
        return x
    if x.dtype.name == "float16" and dt.is_complex:
        raise NotImplementedError("\"pow\" not implemented for 'ComplexHalf': torch has no complex half pow kernel; "
                                  "convert the tensor first, e.g. x.float()")
    return x.to(dt) if x._requires_grad or x._fw_grads else Tensor._make(converted(x._data, dt.np))


def _int_power(a, b):
    """a ** b of integer arrays as torch's kernel: a negative exponent gives 0, 1 for base 1, +-1 for base -1."""
    negative = b < 0
    if not negative.any():
        return np.power(a, b)
    out = np.power(a, np.where(negative, 0, b))  # (a ** 0 = 1: right where a is 1)
    minus_one = np.where(b % 2 == 0, 1, -1).astype(out.dtype)
    return np.where(negative & (a != 1), np.where(a == -1, minus_one, 0), out).astype(out.dtype)


def square(input):
    return pow(input, 2)


class RPow(Op):
    """d(s^x) = s^x log s, for a scalar base s"""
    _grad_fn_name = "PowBackward2"
    _saved_names, _saved_values = ("result", "exponent"), {"self": "base"}  # (the base as given: 2, or 2.0)

    @staticmethod
    def forward(ctx, x, base):
        dt = np.result_type(x.dtype, np.complex64) if isinstance(base, complex) else x.dtype  # (x stays real)
        if dt == np.float32:  # (torch's float32 pow is nearer the double result rounded than numpy's, as Pow's)
            out = np.asarray(np.power(np.asarray(base, dt), x, dtype=np.float64).astype(dt), order="C")
        else:
            out = np.asarray(np.power(np.asarray(base, dtype=dt), x), order="C")  # torch's: contiguous
        ctx.base, ctx.log_base = base, _log_of_base(base, dt.kind == "c")
        ctx.save_for_backward(out, x)  # x too, as torch: modifying the exponent in place is an error
        return out

    @staticmethod
    def backward(ctx, grad):
        out, x = ctx.saved_tensors
        return grad * RPow._local(ctx, out, x).conj(), None

    @staticmethod
    def jvp(ctx, t, _base):
        tangent = t * RPow._local(ctx, ctx.output, ctx.inputs[0])
        if tangent.is_complex() and not t.is_complex():  # torch: a real x's tangent keeps only its real part
            return tangent.real.to(tangent.dtype)
        return tangent

    @staticmethod
    def _local(ctx, out, x):
        from .scalar_overloads import mul_scalar
        local = mul_scalar(out, ctx.log_base)  # (torch's: result times the number log(base), mul.Scalar)
        if ctx.base == 0:  # torch: 0 where x >= 0 (the limit of 0^x log 0), out * (-inf) elsewhere
            return where((x.real >= 0) & (x.imag == 0) if x.is_complex() else x >= 0, 0.0, local)
        return local


def _log_of_base(base, complex_exponent):
    """log(base) as torch's derivative takes it: complex for a complex base or exponent, else real (nan below 0)."""
    if isinstance(base, complex) or complex_exponent:
        return np.log(complex(base))
    return math.log(base) if base > 0 else -math.inf if base == 0 else math.nan


# ---- unary functions --------------------------------------------------------------------------
def _unary(name, np_fn, derivative=None, saves="input", fused=None, over=False, formula=None, in_double=False,
           relaid=True):
    """Build a one-input Op: `derivative(s)` is the local derivative in Tensor ops, of the input
    or the output (`saves`). fused: an Op computing grad * derivative(s) as one node (torch's
    TanhBackward...), for real tensors, whose `values(g, s)` computes it on arrays. over: derivative(s)
    is the derivative's denominator, which torch's formula divides by (grad / x for log: times a reciprocal
    rounds elsewhere). formula(grad, s): instead of derivative, torch's whole formula, term by term, so that
    the gradient's own graph (create_graph) has torch's nodes; the tangent is that formula of the tangent
    (torch's auto_element_wise: conjugated in and out). in_double: float32 computed in double and rounded, as near
    as numpy gets to torch's kernel there (MKL's, correctly rounded but for about 1% of values; numpy's own float32
    functions differ from it in 10-50% of values). relaid: the result laid out as x, as torch's TensorIterator lays
    it out (numpy's loses a broadcast x's layout and a size-1 dim's stride); False for an op whose torch kernel
    returns C order (log_sigmoid)."""

    scalar_ok = isinstance(np_fn, np.ufunc)  # (a ufunc computes a numpy scalar as a 0-d array: see scalar_path)

    def forward(ctx, x):
        if in_double and x.dtype == np.float32:
            out = np.asanyarray(np_fn(x.astype(np.float64))).astype(np.float32)
        else:  # (asanyarray: a meta input's array stays meta)
            out = np.asanyarray(np_fn(x[()] if scalar_ok and x.ndim == 0 else x))
        if relaid:
            out = as_input(out, x)  # (before it is saved)
        ctx.save_for_backward(x if saves == "input" else out)
        return out

    def backward(ctx, grad):
        (s,) = ctx.saved_tensors
        if fused is not None and s._data.dtype.kind == "f":
            return plain(fused.values(grad._data, s._data)) if unrecorded(grad) and unrecorded(s) else \
                fused.apply(grad, s)
        if formula is not None:
            return formula(grad, s)
        return grad / derivative(s).conj() if over else grad * derivative(s).conj()

    def jvp(ctx, t):
        s = ctx.inputs[0] if saves == "input" else ctx.output
        if fused is not None and s._data.dtype.kind == "f":  # (torch's: its backward's op on the tangent)
            return fused.apply(t, s)
        if formula is not None:
            return formula(t.conj(), s).conj()
        return t / derivative(s) if over else t * derivative(s)

    return type(name, (Op,), {"_grad_fn_name": name + "Backward0", "__doc__": (formula or derivative or fused).__doc__,
                              "forward": staticmethod(forward), "backward": staticmethod(backward),
                              "jvp": staticmethod(jvp), "__module__": __name__,
                              "_saved_names": ("self",) if saves == "input" else ("result",)})


# torch's formulas (derivatives.yaml), term by term: g is the output's gradient, x the input, y the result
def _d_exp(g, y):
    """d exp(x) = exp(x)"""
    return g * y.conj()


def _d_log(g, x):
    """d log(x) = 1/x"""
    return g / x.conj()


def _d_log2(g, x):
    """d log2(x) = 1/(x ln 2)"""
    from .scalar_overloads import mul_scalar
    return g / mul_scalar(x.conj(), 0.6931471805599453)


def _d_log10(g, x):
    """d log10(x) = 1/(x ln 10)"""
    from .scalar_overloads import mul_scalar
    return g / mul_scalar(x.conj(), 2.3025850929940456)  # (torch's constant, an ulp below math.log(10))


def _d_log1p(g, x):
    """d log(1+x) = 1/(1+x)"""
    from .scalar_overloads import add_scalar
    return g / add_scalar(x, 1).conj()


def _d_expm1(g, y):
    """d (exp(x)-1) = exp(x)"""
    from .scalar_overloads import add_scalar
    return g * add_scalar(y.conj(), 1)


def _d_sqrt(g, y):
    """d sqrt(x) = 1/(2 sqrt(x))"""
    from .scalar_overloads import mul_scalar
    return g / mul_scalar(y.conj(), 2)


def _d_rsqrt(g, y):
    """d x^(-1/2) = -x^(-3/2)/2"""
    from .scalar_overloads import mul_scalar
    return mul_scalar(g, -0.5) * PowScalar.apply(y, 3).conj()


def _d_sin(g, x):
    """d sin(x) = cos(x)"""
    return g * cos(x).conj()


def _d_cos(g, x):
    """d cos(x) = -sin(x)"""
    return g * -sin(x).conj()


def _d_tan(g, y):
    """d tan(x) = 1 + tan(x)^2"""
    from .scalar_overloads import add_scalar
    return g * add_scalar(PowScalar.apply(y, 2), 1).conj()


def _d_tanh(out):
    """d tanh(x) = 1 - tanh(x)^2"""
    return 1 - out * out


def _d_sigmoid(out):
    """d sigmoid(x) = s(1-s)"""
    return out * (1 - out)


def _d_reciprocal(g, y):
    """d (1/x) = -1/x^2"""
    return -g * (y * y).conj()


def _d_abs(g, x):
    """d |x| = sign(x)  (for complex z, 2 d|z|/dz = conj(z)/|z|: the gradient is grad * z/|z|)"""
    return g * sgn(x)


def _d_asin(g, x):
    """d asin(x) = 1/sqrt(1-x^2)"""
    from .scalar_overloads import add_scalar
    return g * add_scalar(-x * x, 1).rsqrt().conj()


def _d_acos(g, x):
    """d acos(x) = -1/sqrt(1-x^2)"""
    from .scalar_overloads import add_scalar
    return g * -add_scalar(-x * x, 1).rsqrt().conj()


def _d_atan(g, x):
    """d atan(x) = 1/(1+x^2)"""
    from .scalar_overloads import add_scalar
    return g / add_scalar(x * x, 1).conj()


def _d_sinh(g, x):
    """d sinh(x) = cosh(x)"""
    return g * cosh(x).conj()


def _d_cosh(g, x):
    """d cosh(x) = sinh(x)"""
    return g * sinh(x).conj()


def _sigmoid_np(x):
    """1 / (1 + e^-x), float32 with the e^x of torch's vector kernel (SLEEF's): torch's bits"""
    if x.dtype == np.float32 and type(x) is np.ndarray:  # (a meta array keeps numpy's path, and stays meta)
        return np.float32(1) / (np.float32(1) + _kernel_exp.exp(-x, _thread_chunks, layout=x))
    out = np.empty_like(x)
    pos = x >= 0
    out[pos] = 1 / (1 + np.exp(-x[pos]))
    e = np.exp(x[~pos])
    out[~pos] = e / (1 + e)
    return out


class TanhBackward(Op):
    """tanh's backward g (1 - y^2) as one node; d = (1 - y^2, -2 g y)"""
    _grad_fn_name = "TanhBackwardBackward0"
    _saved_names = ("grad_output", "output")

    @staticmethod
    def forward(ctx, g, y):
        ctx.save_for_backward(g if ctx.needs_input_grad[1] else None, y)
        return TanhBackward.values(g, y)

    @staticmethod
    def values(g, y):  # (arrays; also tanh's backward where nothing records, see plain)
        g, y = scalar_path(g, y)
        if y.dtype == np.float32:  # torch's kernel fuses 1 - y*y (one rounding): exact in float64, then rounded
            return g * (1 - np.square(y, dtype=np.float64)).astype(np.float32)
        return g * (1 - y * y)

    @staticmethod
    def backward(ctx, gg):
        g, y = ctx.saved_tensors
        from .scalar_overloads import mul_scalar  # (torch's formula: gg * (-2 y * g), its -2 y a MulBackward1)
        return (TanhBackward.apply(gg, y) if ctx.needs_input_grad[0] else None,
                gg * (mul_scalar(y, -2) * g) if ctx.needs_input_grad[1] else None)

    @staticmethod
    def jvp(ctx, tg, ty):
        g, y = ctx.inputs
        return TanhBackward.apply(tg, y) + g * y * ty * -2


class SigmoidBackward(Op):
    """sigmoid's backward g y (1 - y) as one node; d = (y (1 - y), g (1 - 2y))"""
    _grad_fn_name = "SigmoidBackwardBackward0"
    _saved_names = ("grad_output", "output")

    @staticmethod
    def forward(ctx, g, y):
        ctx.save_for_backward(g if ctx.needs_input_grad[1] else None, y)
        return SigmoidBackward.values(g, y)

    @staticmethod
    def values(g, y):  # (arrays; also sigmoid's backward where nothing records, see plain)
        g, y = scalar_path(g, y)
        return g * (1 - y) * y  # (torch's order of the products: its last bits)

    @staticmethod
    def backward(ctx, gg):
        g, y = ctx.saved_tensors
        from .scalar_overloads import add_scalar, mul_scalar  # (torch's formula: gg * g * (-2 y + 1), Scalar ops)
        return (SigmoidBackward.apply(gg, y) if ctx.needs_input_grad[0] else None,
                gg * g * add_scalar(mul_scalar(y, -2), 1) if ctx.needs_input_grad[1] else None)

    @staticmethod
    def jvp(ctx, tg, ty):
        g, y = ctx.inputs
        return SigmoidBackward.apply(tg, y) + g * (1 - 2 * y) * ty


Exp = _unary("Exp", np.exp, formula=_d_exp, saves="output", in_double=True)


def exp(input):
    return Exp.apply(_float(input))


Log = _unary("Log", np.log, formula=_d_log, in_double=True)


def log(input):
    return Log.apply(_float(input))


Log2 = _unary("Log2", np.log2, formula=_d_log2, in_double=True)


def log2(input):
    return Log2.apply(_float(input))


Log10 = _unary("Log10", np.log10, formula=_d_log10, in_double=True)


def log10(input):
    return Log10.apply(_float(input))


def _log1p_np(x):
    """log(1 + x); float32 as torch's kernel (its vector math library's loop: SLEEF's log1p on every element)"""
    if x.dtype == np.float32 and type(x) is np.ndarray:
        return like_torch(np.asarray(_kernel_log.log1p_vector(x)), x)
    return np.log1p(x)


Log1p = _unary("Log1P", _log1p_np, formula=_d_log1p)


def log1p(input):
    return Log1p.apply(_float(input))


def _expm1_np(x):
    """e^x - 1; float32 as torch's kernel (its vector math library's loop: SLEEF's expm1 on every element)"""
    if x.dtype == np.float32 and type(x) is np.ndarray:
        return like_torch(np.asarray(_kernel_exp.expm1_vector(x)), x)
    return np.expm1(x)


Expm1 = _unary("Expm1", _expm1_np, formula=_d_expm1, saves="output")


def expm1(input):
    return Expm1.apply(_float(input))


Sqrt = _unary("Sqrt", np.sqrt, formula=_d_sqrt, saves="output")


def sqrt(input):
    return Sqrt.apply(_float(input))


Rsqrt = _unary("Rsqrt", lambda x: 1 / np.sqrt(x), formula=_d_rsqrt, saves="output")


def rsqrt(input):
    return Rsqrt.apply(_float(input))


Sin = _unary("Sin", np.sin, formula=_d_sin, in_double=True)


def sin(input):
    return Sin.apply(_float(input))


Cos = _unary("Cos", np.cos, formula=_d_cos, in_double=True)


def cos(input):
    return Cos.apply(_float(input))


Tan = _unary("Tan", np.tan, formula=_d_tan, saves="output", in_double=True)


def tan(input):
    return Tan.apply(_float(input))


Tanh = _unary("Tanh", np.tanh, _d_tanh, saves="output", fused=TanhBackward, in_double=True)


def tanh(input):
    return Tanh.apply(_float(input))


Sigmoid = _unary("Sigmoid", _sigmoid_np, _d_sigmoid, saves="output", fused=SigmoidBackward)


def sigmoid(input):
    return Sigmoid.apply(_float(input))


Reciprocal = _unary("Reciprocal", lambda x: 1 / x, formula=_d_reciprocal, saves="output")


def reciprocal(input):
    return Reciprocal.apply(_float(input))


def _abs_np(x):
    """|x|; a complex x's as C's hypot of its parts, as torch's kernel (numpy's complex abs rounds otherwise in a
    third of values)"""
    return np.hypot(x.real, x.imag) if x.dtype.kind == "c" else np.abs(x)


Abs = _unary("Abs", _abs_np, formula=_d_abs)


def abs(input):
    if not isinstance(input, Tensor) or input._data.dtype == np.bool_:  # (torch has no kernel for bool)
        from .scan import need_tensor
        need_tensor(input, "abs", "input", 1)
        raise NotImplementedError("\"abs_cpu\" not implemented for 'Bool' (abs); a bool is its own absolute value")
    return Abs.apply(input)


Abs.jvp = staticmethod(lambda ctx, t: real(sgn(ctx.inputs[0]).conj() * t))  # |z| is not holomorphic
Asin = _unary("Asin", np.arcsin, formula=_d_asin, in_double=True)


def asin(input):
    return Asin.apply(_float(input))


Acos = _unary("Acos", np.arccos, formula=_d_acos, in_double=True)


def acos(input):
    return Acos.apply(_float(input))


Atan = _unary("Atan", np.arctan, formula=_d_atan, in_double=True)


def atan(input):
    return Atan.apply(_float(input))


Sinh = _unary("Sinh", np.sinh, formula=_d_sinh, in_double=True)


def sinh(input):
    return Sinh.apply(_float(input))


Cosh = _unary("Cosh", np.cosh, formula=_d_cosh, in_double=True)


def cosh(input):
    return Cosh.apply(_float(input))


@laid_out_as_input
class Sgn(Op):
    """sign(x): derivative 0 almost everywhere; for complex s = z/|z|: (g - s^2 conj(g)) / (2|z|), 0 at z = 0"""
    _grad_fn_name = "SgnBackward0"
    _saved_names = ("self", "result")

    @staticmethod
    def forward(ctx, x):
        out = _sign_values(x)
        ctx.save_for_backward(x, out)  # (both, real or complex, as torch: either changed in place makes backward raise)
        return out

    @staticmethod
    def backward(ctx, grad):
        z, s = ctx.saved_tensors  # (read first, as torch: a change in place since is an error even where unused)
        if not grad.is_complex():  # torch's efficient zero tensor: the ops below multiply it into zeros (0 / 0 too)
            return _zero.zeros(grad._data.shape, grad._data.dtype)
        return _sgn_derivative(z, s, grad)

    @staticmethod
    def jvp(ctx, t):
        (z,) = ctx.inputs
        return _sgn_derivative(z, ctx.output, t) if z.is_complex() else zeros_like_(t)


def _sgn_derivative(z, s, g):
    """torch's formula, masked where z = 0 after the division (so a second derivative there is nan, as torch's)"""
    from .index import masked_fill
    from .scalar_overloads import mul_scalar
    a = z.abs()
    return masked_fill((g - s * s * g.conj()) / mul_scalar(a, 2.0), Tensor._make(a._data == 0), 0.0)


def _sign_values(x):
    if type(x) is not np.ndarray and isinstance(x, np.ndarray):  # a meta array (no values): np.sign keeps it meta
        return np.sign(x)
    if np.iscomplexobj(x):
        a = np.abs(x)
        return np.where(a == 0, 0, x / np.where(a == 0, 1, a)).astype(x.dtype)
    if x.dtype.kind == "b":  # (the sign of a bool is itself, as torch's)
        return x.copy()
    return np.sign(x) if x.dtype.kind != "f" else np.where(np.isnan(x), 0, np.sign(x))  # sign(nan) = 0


def sgn(input):
    return Sgn.apply(input)


@laid_out_as_input
class Sign(Sgn):
    _grad_fn_name = "SignBackward0"
    _saved_names = ()

    @staticmethod
    def forward(ctx, x):
        return _sign_values(x)  # (torch's sign saves nothing)

    @staticmethod
    def backward(ctx, grad):
        return zeros_like_(grad)  # (real zeros: torch's sign, unlike sgn, multiplies on into 0 * inf = nan)


def sign(input):
    return Sign.apply(input)


def _erf_np(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x).astype(x.dtype) if x.size else x.copy()


def _d_erf(g, x):
    """d erf(x) = 2/sqrt(pi) exp(-x^2)"""
    from .scalar_overloads import mul_scalar
    return mul_scalar(exp(-PowScalar.apply(x, 2)), 2 / math.sqrt(math.pi)) * g


Erf = _unary("Erf", _erf_np, formula=_d_erf)


def erf(input):
    return Erf.apply(_float(input))


def _maximum_gives_second_on_ties(dtype):
    """Does numpy's maximum(0.0, x) give x itself where x is -0.0 (the second operand on ties), on every path its
    loops take for this dtype (lengths, SIMD tails, strides, scalars)? Checked once, since it varies with the CPU
    (and float16 takes a path that does not)."""
    for n in (1, 3, 8, 17, 64, 1000, 4099):
        x = np.full(n, -0.0, dtype)
        if not np.signbit(np.maximum(0.0, x)).all() or not np.signbit(np.maximum(0.0, x[::2])).all():
            return False
    return bool(np.signbit(np.maximum(0.0, dtype(-0.0))))


_ONE_PASS_RELU = {np.dtype(d) for d in (np.float32, np.float64) if _maximum_gives_second_on_ties(d)}


@laid_out_as_input
class Relu(Op):
    """d relu(x) = [x > 0]"""
    _grad_fn_name = "ReluBackward0"
    _saved_names = ("result",)

    @staticmethod
    def forward(ctx, x):
        floating = x.dtype.kind == "f"
        one_pass = x.dtype in _ONE_PASS_RELU
        if one_pass:  # np.maximum(0.0, -0.0) is -0.0, as relu(-0.0) is in torch (NaN kept too)
            out = np.maximum(0.0, x)
        else:
            out = np.maximum(x, 0.0 if floating else 0)  # (a float zero: numpy resolves an int one more slowly)
        if not isinstance(out, np.ndarray):  # numpy gives a scalar for a 0-d input, and the op must give an array
            out = as_array(out)  # (a call only then; a meta input's array stays meta)
        if floating and not one_pass and not x.all():  # a zero: np.maximum(x, 0.0) made -0.0 into 0.0
            out = _select(~(x < 0), x)  # x where not negative (NaN and -0.0 kept), else +0.0
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        # torch passes the gradient where not out <= 0; out is >= 0 or NaN, so that is out != 0 (NaN passes)
        mask = out._data != 0
        if unrecorded(grad) and unrecorded(out):
            return plain(_select(mask, grad._data))
        return ThresholdBackward.apply(grad, out, mask, shown=0)

    @staticmethod
    def jvp(ctx, t):
        out = ctx.output  # torch's threshold_backward(t, result, 0): a selection (+0.0 where out is 0, not t * 0)
        return ThresholdBackward.apply(t, out, out._data != 0, shown=0)


def relu(input):
    if isinstance(input, Tensor) and input._data.dtype.kind in "bc":
        if input._data.dtype.kind == "c":  # torch's relu is a clamp at 0, which complex numbers do not have
            raise NotImplementedError("clamp is not supported for complex types (relu); use .real or .abs()")
        raise RuntimeError("Boolean inputs not supported for relu; convert with .float() first")
    return Relu.apply(input)


class GradTimesLocal(Op):
    """g * local(x) for a local slope constant in x (relu's mask): d = (local, 0). shown: the number the subclass's
    torch node shows (a threshold, a slope)"""
    _grad_fn_name = "ThresholdBackwardBackward0"
    _saved_names = ("self",)  # (torch's grad_fn._saved_self: x)

    @staticmethod
    def forward(ctx, g, x, local, shown=None):
        ctx.local, ctx.shown = local, shown
        ctx.save_for_backward(x)  # (torch's node keeps x: its own gradient is this op again, with an edge to x)
        return _select(local, g) if local.dtype == bool else g * local.astype(g.dtype)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        gg = ctx._forward_cls.apply(grad, x, ctx.local, shown=ctx.shown) if ctx.needs_input_grad[0] else None
        gx = Tensor._make(np.zeros(*ctx._input_meta(1))) if ctx.needs_input_grad[1] else None
        return gg, gx, None

    @staticmethod
    def jvp(ctx, tg, tx, _local):
        if ctx.local.dtype == bool:  # torch's: zeros_like(x's tangent) + the selection again, as forward's
            zero = tx if type(tx) is _zero.ZeroTangent else zeros_like_(tx)
            return zero + ctx._forward_cls.apply(tg, ctx.inputs[1], ctx.local, shown=ctx.shown)
        return tg * Tensor._make(ctx.local.astype(ctx.output._data.dtype, copy=False))


def _select(mask, g):
    """g where mask, else +0.0, in g's dtype. A mask selects (as in torch): an inf or nan gradient is dropped
    where the mask is 0 and a -0.0 kept where it is 1, which `g * mask` would not do (inf * 0 is nan, -1 * 0
    is -0.0). On large float arrays the selection is done on the bits, as cheaply as `g * mask`: g AND all ones
    is g, g AND 0 is +0.0. (Measured with a mixed mask: np.where is 3-7 times slower than the bits from 8192
    elements on; up to 4096, its one numpy call costs about half of the bits' four.)"""
    if g.size > 4096 and g.dtype.kind == "f" and g.shape == mask.shape:
        out = np.empty_like(g)  # (in g's layout, as g * mask would be)
        bits = out.view(f"u{g.itemsize}")
        np.negative(mask, dtype=bits.dtype, out=bits)  # True -> all ones (-1 as unsigned), False -> 0
        bits &= g.view(bits.dtype)
        return out
    return np.where(mask, g, 0.0)  # (a float or complex g keeps its dtype: numpy takes 0.0 in g's)


class ThresholdBackward(GradTimesLocal):
    """relu's backward (torch's threshold_backward at 0), whose node shows the threshold"""
    _grad_fn_name = "ThresholdBackwardBackward0"
    _saved_values = {"threshold": "shown"}


class LeakyReluBackward(GradTimesLocal):
    """leaky_relu's backward, whose node shows the slope"""
    _grad_fn_name = "LeakyReluBackwardBackward0"
    _saved_values = {"negative_slope": "shown"}


@laid_out_as_input
class LeakyRelu(Op):
    """d leaky_relu(x) = 1 if x > 0 else slope"""
    _grad_fn_name = "LeakyReluBackward0"
    _saved_names, _saved_values = ("self",), {"negative_slope": "slope"}

    @staticmethod
    def forward(ctx, x, negative_slope=0.01):
        ctx.slope = negative_slope
        ctx.save_for_backward(x)
        return np.where(x > 0, x, x * x.dtype.type(negative_slope))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return LeakyReluBackward.apply(grad, x, np.where(x._data > 0, 1.0, ctx.slope), shown=ctx.slope)

    @staticmethod
    def jvp(ctx, t):
        x = ctx.inputs[0]
        return t * Tensor._make(np.where(x._data > 0, 1.0, ctx.slope).astype(x._data.dtype))


def leaky_relu(input, negative_slope=0.01):
    if isinstance(input, Tensor):
        need_floating(input, "leaky_relu")
    return LeakyRelu.apply(input, negative_slope=negative_slope)


@laid_out_as_input
class Elu(Op):
    """d elu(x) = 1 if x > 0 else alpha*exp(x)"""
    _grad_fn_name = "EluBackward0"
    _saved_names = ("self",)
    _saved_values = {"alpha": "alpha", "scale": "scale", "input_scale": "scale"}  # (torch's scales: the int 1)

    @staticmethod
    def forward(ctx, x, alpha=1.0):
        ctx.alpha, ctx.scale = alpha, 1
        ctx.save_for_backward(x)
        lanes = _kernel_exp.lane_mask(x, _thread_chunks)
        below = _kernel_exp.expm1(np.where(x > 0, 0, x), lanes) * x.dtype.type(alpha)
        return np.where(x > 0, x, below).astype(x.dtype)  # (keeps -0.0)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return elu_backward(grad, x, ctx.alpha)

    @staticmethod
    def jvp(ctx, t):
        return elu_backward(t, ctx.inputs[0], ctx.alpha)  # (torch's: its backward on the tangent)


def _exp_as_torch(v, x, *others):
    """e^v for x's kernel (whose other inputs are `others`): float32 as torch's loop (SLEEF's exp on the vector lanes,
    the C library's on the tails)"""
    return _kernel_exp.exp(v, _thread_chunks, x, others) if v.dtype == np.float32 else np.exp(v)


def elu_backward(g, x, alpha, scale=1, input_scale=1, is_result=False):
    """elu's, selu's and celu's backward (is_result: x is their result, for the in-place forms): EluBackward's
    values in numpy where nothing records, else the node."""
    if unrecorded(g) and unrecorded(x):
        return plain(EluBackward.values(g._data, x._data, alpha, scale, input_scale, is_result))
    return EluBackward.apply(g, x, alpha=alpha, scale=scale, input_scale=input_scale, is_result=is_result)


class EluBackward(Op):
    """g * elu'(x) as an op of its own (torch's elu_backward), so that its derivative is torch's: d/dg = elu'(x),
    d/dx = elu_backward(g gg input_scale) * [x < 0] (a product, so an infinite g gives NaN at 0 and above, as torch).
    From the result y (is_result, the in-place forms): g input_scale (y + alpha scale) below 0, d/dy = g gg
    input_scale"""
    _grad_fn_name = "EluBackwardBackward0"
    _saved_names = ("grad_output", "self_or_result")
    _saved_values = {"alpha": "alpha", "scale": "scale", "input_scale": "input_scale", "is_result": "is_result"}

    @staticmethod
    def forward(ctx, g, x, alpha=1.0, scale=1, input_scale=1, is_result=False):  # (torch's defaults are ints)
        ctx.alpha, ctx.scale, ctx.input_scale, ctx.is_result = alpha, scale, input_scale, is_result
        ctx.save_for_backward(g, x)
        return EluBackward.values(g, x, alpha, scale, input_scale, is_result)

    @staticmethod
    def values(g, x, alpha, scale, input_scale, is_result=False):
        """torch's kernel: g input_scale (alpha scale) exp(x input_scale) where x <= 0, else g scale, the
        coefficients in x's dtype; from the result y: g input_scale (y + alpha scale) where y <= 0"""
        c = x.dtype.type
        if is_result:
            neg = g * c(input_scale) * (x + c(alpha) * c(scale))
        else:
            neg = g * c(input_scale) * (c(alpha) * c(scale)) * _exp_as_torch(np.minimum(x, 0) * c(input_scale), x, g)
        below = x <= 0
        if np.isnan(x).any():  # (a NaN x: the vector lanes take the exp side, the scalar tails the other)
            below = np.where(_kernel_exp.lane_mask(x, _thread_chunks, g), ~(x > 0), below)
        return np.where(below, neg, g * c(scale)).astype(g.dtype, copy=False)

    @staticmethod
    def backward(ctx, gg):
        g, x = ctx.saved_tensors
        dg = EluBackward._again(ctx, gg, x) if ctx.needs_input_grad[0] else None
        dx = EluBackward._curvature(ctx, gg * g, x) if ctx.needs_input_grad[1] else None
        return dg, dx

    @staticmethod
    def jvp(ctx, tg, tx, *_params):
        g, x = ctx.inputs[:2]
        return EluBackward._again(ctx, tg, x) + EluBackward._curvature(ctx, tx * g, x)

    @staticmethod
    def _again(ctx, g, x):
        return EluBackward.apply(g, x, alpha=ctx.alpha, scale=ctx.scale, input_scale=ctx.input_scale,
                                 is_result=ctx.is_result)

    @staticmethod
    def _curvature(ctx, h, x):
        """torch's elu_double_backward: elu_backward(h input_scale) * [x < 0], or h input_scale [y < 0]"""
        from .scalar_overloads import mul_scalar
        h = mul_scalar(h, ctx.input_scale)
        return (h if ctx.is_result else EluBackward._again(ctx, h, x)) * (x < 0)


def elu(input, alpha=1.0):
    return Elu.apply(input, alpha=alpha)


@laid_out_as_input
class Gelu(Op):
    """d gelu(x) = Phi(x) + x phi(x)   (or the tanh approximation's derivative)"""
    _grad_fn_name = "GeluBackward0"
    _saved_names, _saved_values = ("self",), {"approximate": "approximate"}

    @staticmethod
    def forward(ctx, x, approximate="none"):
        ctx.approximate = approximate
        ctx.save_for_backward(x)
        if approximate == "tanh":
            if x.dtype == np.float32:  # (torch's kernel, to the bit)
                return _kernel_gelu.gelu_tanh(x, _kernel_exp.lane_mask(x, _thread_chunks))
            k = math.sqrt(2 / math.pi)
            return (0.5 * x * (1 + np.tanh(k * (x + 0.044715 * x ** 3)))).astype(x.dtype)
        if x.dtype == np.float32:  # (torch's kernels, to the bit: oneDNN's where torch calls it, else its own)
            return _kernel_gelu.gelu(x) if _kernel_gelu.applies(x) else \
                _kernel_gelu.gelu_aten(x, _kernel_exp.lane_mask(x, _thread_chunks))
        return (x * 0.5 * (1 + _erf_np(x * _SQRT1_2))).astype(x.dtype)  # (torch's kernel's order and constant)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return GeluBackward.apply(grad, x, approximate=ctx.approximate)

    @staticmethod
    def jvp(ctx, t):
        return t * _gelu_slope(ctx.inputs[0], ctx.approximate)


class GeluBackward(Op):
    """g * gelu'(x) as an op of its own, so that its derivative is torch's: d/dg = gelu'(x), d/dx =
    (gg * g) * gelu''(x), in that order (an infinite g times gelu''(0) > 0 stays infinite)"""
    _grad_fn_name = "GeluBackwardBackward0"
    _saved_names, _saved_values = ("grad_output", "self"), {"approximate": "approximate"}

    @staticmethod
    def forward(ctx, g, x, approximate="none"):
        ctx.approximate = approximate
        ctx.save_for_backward(g, x)
        if g.dtype == np.float32 and x.dtype == np.float32:  # (torch's kernels, to the bit)
            if approximate == "tanh":
                return g * _kernel_gelu.gelu_tanh_slope(x, _kernel_exp.lane_mask(x, _thread_chunks, g))
            if _kernel_gelu.applies(x):
                return _kernel_gelu.gelu_slope(x) * g
            return g * _kernel_gelu.gelu_aten_slope(x, _kernel_exp.lane_mask(x, _thread_chunks, g))
        if g.dtype == np.float64 and x.dtype == np.float64 and approximate == "none":
            return g * _gelu_slope_double(x, _kernel_exp.lane_mask(x, _thread_chunks, g))
        return _gelu_slope(Tensor._make(x), approximate)._data * g

    @staticmethod
    def backward(ctx, gg):
        g, x = ctx.saved_tensors
        dg = GeluBackward.apply(gg, x, approximate=ctx.approximate) if ctx.needs_input_grad[0] else None
        dx = gg * g * _gelu_curvature(x, ctx.approximate) if ctx.needs_input_grad[1] else None
        return dg, dx

    @staticmethod
    def jvp(ctx, tg, tx, *_approximate):
        g, x = ctx.inputs[:2]
        return GeluBackward.apply(tg, x, approximate=ctx.approximate) + g * tx * _gelu_curvature(x, ctx.approximate)


_GELU_K = math.sqrt(2 / math.pi)  # the tanh approximation's scale
_SQRT1_2 = 0.7071067811865476  # C's M_SQRT1_2 (1 / math.sqrt(2) is one bit below it)
_GELU_PDF = 1 / math.sqrt(2 * math.pi)  # phi(0)


def _gelu_slope(x, approximate):
    """gelu'(x) in Tensor ops: Phi(x) + x phi(x), or the tanh approximation's derivative."""
    if approximate == "tanh":
        t = tanh((x + x ** 3 * 0.044715) * _GELU_K)
        return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * _GELU_K * (1 + x * x * (3 * 0.044715))
    return (erf(x * _SQRT1_2) + 1) * 0.5 + x * (exp(x * x * -0.5) * _GELU_PDF)


def _gelu_slope_double(x, lanes):
    """gelu'(x) of a float64 array as torch's kernel: (1 + erf(x / sqrt 2)) / 2 + x phi(x), the last sum fused where
    its vector loop runs (`lanes`). There SLEEF's erf and exp differ from these in a few last bits; elsewhere the C
    library's are called, as there."""
    from .special_fma import libm
    cdf = 0.5 * (1 + _erf_np(x * _SQRT1_2))
    pdf = _GELU_PDF * np.where(lanes, np.exp(x * x * -0.5), libm("exp", x * x * -0.5))
    return np.where(lanes, fma(x, pdf, cdf), cdf + x * pdf)


def _gelu_curvature(x, approximate):
    """gelu''(x) in Tensor ops: 2 phi(x) - x^2 phi(x), or the tanh approximation's second derivative
    (with u = k (x + c x^3), t = tanh u, h = u': h (1 - t^2) + x/2 ((1 - t^2) 6 c k x - 2 t (1 - t^2) h^2))."""
    if approximate == "tanh":
        inner = (x + x ** 3 * 0.044715) * _GELU_K
        t, sech = tanh(inner), 1 / cosh(inner)
        f, g, h = x * 0.5, 1 - t * t, (1 + x * x * (3 * 0.044715)) * _GELU_K
        return g * h * 0.5 + g * h * 0.5 + f * h * (2 * sech * (-sech * t) * h) + f * g * (x * (6 * 0.044715 * _GELU_K))
    x_sq = x * x
    pdf = exp(x_sq * -0.5) * _GELU_PDF
    return 2 * pdf - x_sq * pdf


def gelu(input, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu(): approximate must be 'none' or 'tanh', got {approximate!r}")
    if isinstance(input, Tensor) and not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise NotImplementedError(f"\"GeluKernelImpl\" not implemented for '{input.dtype}' (gelu); convert with .float()")
    return Gelu.apply(input, approximate=approximate)


@laid_out_as_input
class Softplus(Op):
    """d softplus(x) = sigmoid(beta x)  (1 above the threshold)"""
    _grad_fn_name = "SoftplusBackward0"
    _saved_names, _saved_values = ("self",), {"beta": "beta", "threshold": "threshold"}

    @staticmethod
    def forward(ctx, x, beta=1, threshold=20):  # (torch's defaults are ints: its node shows 1 and 20)
        ctx.beta, ctx.threshold = beta, threshold
        ctx.save_for_backward(x)
        bx = x * beta
        if x.dtype == np.float32:  # (torch's kernel: log1p(exp(beta x)) / beta, SLEEF's or the C library's)
            lanes = _kernel_exp.lane_mask(x, _thread_chunks)
            return np.where(bx > threshold, x, _kernel_log.log1p(_exp_as_torch(bx, x), lanes) / np.float32(beta))
        return np.where(bx > threshold, x, np.logaddexp(0, bx) / beta).astype(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        if unrecorded(grad) and unrecorded(x):
            return plain(SoftplusBackward.values(grad._data, x._data, ctx.beta, ctx.threshold))
        return SoftplusBackward.apply(grad, x, beta=ctx.beta, threshold=ctx.threshold)

    @staticmethod
    def jvp(ctx, t):  # (torch's: its backward on the tangent)
        return SoftplusBackward.apply(t, ctx.inputs[0], beta=ctx.beta, threshold=ctx.threshold)


class SoftplusBackward(Op):
    """softplus's backward g sigmoid(beta x) (g above the threshold) as one node (torch's softplus_backward);
    d/dg = the same, d/dx = torch's softplus_double_backward of g gg"""
    _grad_fn_name = "SoftplusBackwardBackward0"
    _saved_names, _saved_values = ("grad_output", "self"), {"beta": "beta", "threshold": "threshold"}

    @staticmethod
    def forward(ctx, g, x, beta=1, threshold=20):
        ctx.beta, ctx.threshold = beta, threshold
        ctx.save_for_backward(g, x)
        return SoftplusBackward.values(g, x, beta, threshold)

    @staticmethod
    def values(g, x, beta, threshold):
        """torch's kernel: z = exp(beta x), g z / (z + 1), or g where beta x > threshold"""
        bx = x * beta
        z = _exp_as_torch(bx, x, g)
        return np.where(bx > threshold, g, g * z / (z + 1)).astype(g.dtype, copy=False)

    @staticmethod
    def backward(ctx, gg):
        g, x = ctx.saved_tensors
        dg = SoftplusBackward.apply(gg, x, beta=ctx.beta, threshold=ctx.threshold) if ctx.needs_input_grad[0] else None
        dx = SoftplusBackward._curvature(gg * g, x, ctx.beta, ctx.threshold) if ctx.needs_input_grad[1] else None
        return dg, dx

    @staticmethod
    def jvp(ctx, tg, tx, *_params):
        g, x = ctx.inputs[:2]
        again = SoftplusBackward.apply(tg, x, beta=ctx.beta, threshold=ctx.threshold)
        return again + SoftplusBackward._curvature(tx * g, x, ctx.beta, ctx.threshold)

    @staticmethod
    def _curvature(h, x, beta, threshold):
        """torch's softplus_double_backward: sigmoid_backward(h, sigmoid(beta x)) * [beta x < threshold] * beta"""
        from .scalar_overloads import mul_scalar
        bx = mul_scalar(x, beta)
        below = Tensor._make((bx._data < threshold).astype(bx._data.dtype))
        return mul_scalar(SigmoidBackward.apply(h, sigmoid(bx)) * below, beta)


def softplus(input, beta=1, threshold=20):
    return Softplus.apply(input, beta=beta, threshold=threshold)


@laid_out_as_input
class Clamp(Op):
    """d clamp(x, lo, hi) = [lo <= x <= hi]; min and max in x's dtype, `given` the bounds as torch's node shows them
    (as the caller gave them: 0 and 1, not 0.0 and 1.0)"""
    _grad_fn_name = "ClampBackward1"
    _saved_names, _saved_values = ("self",), {"min": "min", "max": "max"}

    @staticmethod
    def forward(ctx, x, min=None, max=None, given=(None, None)):
        ctx.save_for_backward(x)
        ctx.lo, ctx.hi = min, max
        ctx.min, ctx.max = given
        if min != min or max != max:  # a NaN bound makes every element NaN, as torch (None == None)
            return np.full_like(x, np.nan)
        out = x
        if min is not None:
            out = np.where(out < np.asarray(min, dtype=x.dtype), np.asarray(min, dtype=x.dtype), out)
        if max is not None:
            out = np.where(out > np.asarray(max, dtype=x.dtype), np.asarray(max, dtype=x.dtype), out)
        return out if out is not x else x.copy()  # (x where it is in range, -0.0 included, as torch)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        mask = np.ones(x.shape, dtype=bool)
        if ctx.lo is not None:
            mask &= x._data >= ctx.lo
        if ctx.hi is not None:
            mask &= x._data <= ctx.hi
        return where(Tensor._make(mask), grad, 0.0), None, None

    @staticmethod
    def jvp(ctx, t):
        x = ctx.inputs[0]._data
        mask = np.ones(x.shape, dtype=bool)
        if ctx.lo is not None:
            mask &= x >= ctx.lo
        if ctx.hi is not None:
            mask &= x <= ctx.hi
        return where(Tensor._make(mask), t, 0.0)  # (torch's: a selection, +0.0 outside, not t * 0)


def clamp(input, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("clamp(): At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) != isinstance(max, Tensor) and min is not None and max is not None:
        got = ", ".join(type(v).__name__ for v in (input, min, max))
        raise TypeError(f"clamp() received an invalid combination of arguments - got ({got}): torch takes both "
                        "bounds as numbers or both as tensors; convert the number, e.g. torch.tensor(0.0)")
    from .._dtype import result_type
    dt = result_type(input, *(v for v in (min, max) if v is not None))
    if dt is not input.dtype:
        input = input.to(dt)
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        lo = min if min is None or isinstance(min, Tensor) else Tensor._make(np.asarray(min, input.dtype.np))
        hi = max if max is None or isinstance(max, Tensor) else Tensor._make(np.asarray(max, input.dtype.np))
        return ClampTensor.apply(input, lo, hi)
    from .index import fill_scalar  # (torch's checked conversion: 1e5 is no float16 bound, 300 no int8 one)
    given = tuple(as_given(v) for v in (min, max))
    min, max = (None if v is None else fill_scalar(v, dt, "clamp") for v in (min, max))
    return Clamp.apply(input, min=min, max=max, given=given)
clip = clamp


def as_given(number):
    """A number as torch's node shows a Scalar argument: a Python number (a numpy scalar's value)"""
    return number.item() if isinstance(number, np.generic) else number


class ClampTensor(Op):
    """d clamp(x, lo, hi) for tensor bounds: the gradient goes to whichever was selected"""
    _grad_fn_name = "ClampBackward0"
    _saved_names = ("self", "min", "max")  # (torch's _saved_<name>; pack hooks see them sorted by name)
    _edges = (0, 1, 2)  # (a bound left out is torch's undefined tensor: an edge to None)

    @staticmethod
    def forward(ctx, x, lo, hi):
        ctx.save_for_backward(x, lo, hi)
        return ClampTensor.values(x, lo, hi)

    @staticmethod
    def values(x, lo, hi):  # (arrays; lo or hi may be None)
        out = x
        if lo is not None:  # x where it is in range (-0.0 included) and a NaN bound wins, as torch
            out = _np_max(out, lo)
        if hi is not None:
            out = _np_max(out, hi, np.greater)
        return like_torch(np.asarray(out, dtype=x.dtype), x, lo, hi)  # (out is np.where's: fresh; laid out by x's
        # strides first, then the bounds', as torch's)

    @staticmethod
    def backward(ctx, grad):
        return ClampTensor.grads(grad, *ctx.saved_tensors)

    @staticmethod
    def grads(grad, x, lo, hi):
        """the gradients of x, lo and hi (lo or hi may be None: then theirs is None)"""
        # torch's masks, each gradient selected, not multiplied (an inf gradient stays on its side): x where
        # lo <= x <= hi (so not at a NaN), lo where x < lo < hi, hi where x > hi or hi < lo
        keep = np.ones(np.broadcast_shapes(*(t.shape for t in (x, lo, hi) if t is not None)), dtype=bool)
        glo = ghi = None
        if lo is not None:
            keep &= x._data >= lo._data
            below = x._data < lo._data
            glo = where(Tensor._make(below & (lo._data < hi._data) if hi is not None else below), grad, 0.0)
        if hi is not None:
            keep &= x._data <= hi._data
            above = x._data > hi._data
            ghi = where(Tensor._make(above | (hi._data < lo._data) if lo is not None else above), grad, 0.0)
        return where(Tensor._make(keep), grad, 0.0), glo, ghi

    @staticmethod
    def jvp(ctx, tx, tlo, thi):
        x, lo, hi = ctx.inputs
        m, tm = x, tx  # max(x, lo), then min(., hi): the tangent of whichever was selected
        if lo is not None:
            m, tm = where(x < lo, lo, x), where(x < lo, tlo, tx)
        if hi is not None:
            tm = where(m > hi, thi, tm)
        return tm


class Maximum(Op):
    """d max(a, b) = ([a > b], [b > a]), ties split evenly"""
    _grad_fn_name = "MaximumBackward0"
    _saved_names = ("self", "other")  # (torch's _saved_<name>; pack hooks see them sorted by name)

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return like_torch(_np_max(a, b), a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return _pick_grads(grad, a._data, b._data)

    @staticmethod
    def jvp(ctx, ta, tb):
        return _tied_half(ctx, ta, tb, np.greater)


def _tied_half(ctx, ta, tb, takes_a):
    """maximum's and minimum's tangent, torch's formula: tb + (1 where a is taken, 0.5 on ties) * (ta - tb)"""
    a, b = (x._data for x in ctx.inputs[:2])
    wa = Tensor._make(np.where(a == b, 0.5, takes_a(a, b)).astype(ctx.output._data.dtype))
    return tb + wa * (ta - tb)


def _np_max(a, b, takes_b=np.less):
    """torch's max of two: a unless a < b, and NaN from either side. Of two zeros of opposite signs its scalar loop
    gives a, its vector loop b (max(0.0, -0.0) is -0.0 in 64-byte steps, 0.0 on each row's tail)."""
    out = np.where(takes_b(a, b), b, a)
    if out.dtype.kind not in "fc":
        return out
    out = np.where(np.isnan(b), b, out)
    if out.dtype.kind == "f" and out.ndim:
        signed_ties = (a == 0) & (b == 0) & (np.signbit(a) != np.signbit(b))
        if signed_ties.any():
            x, y = np.broadcast_to(a, out.shape), np.broadcast_to(b, out.shape)
            out = np.where(signed_ties & _kernel_exp.lane_mask(x, _thread_chunks, y, step_bytes=64), y, out)
    return out


def _pick_grads(grad, a, b):
    """maximum's gradients: to a where a > b, to b where b > a, half each on ties; masked, not
    multiplied, so an inf or nan in the gradient stays on its side (torch's formula, term by term:
    where(a == b, grad / 2, grad) masked_fill'ed on the other's side)."""
    from .index import masked_fill
    half = where(Tensor._make(a == b), div_scalar(grad, 2), grad)
    return masked_fill(half, Tensor._make(a < b), 0.0), masked_fill(half, Tensor._make(a > b), 0.0)


def _need_tensors(input, other, op):
    """torch's TypeError for a binary op that takes two tensors (no number: torch.maximum(x, 0) raises)."""
    if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
        from .scan import need_tensor
        need_tensor(input, op, "input", 1)
        need_tensor(other, op, "other", 2)
    if op in ("maximum", "minimum") and (input.dtype.is_complex or other.dtype.is_complex):
        raise RuntimeError(f"{op} not implemented for complex tensors.; compare .abs() or .real instead")


def maximum(input, other):
    _need_tensors(input, other, "maximum")
    a, b = promoted(input, other)
    try:
        return Maximum.apply(a, b)
    except ValueError as e:
        raise broadcast_error("maximum", e, a, b) from None


class Minimum(Maximum):
    """d min(a, b) = ([a < b], [b < a]), ties split evenly"""
    _grad_fn_name = "MinimumBackward0"

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return like_torch(_np_max(a, b, np.greater), a, b)  # (torch's min of two: b only where b < a)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return _pick_grads(grad, b._data, a._data)

    @staticmethod
    def jvp(ctx, ta, tb):
        return _tied_half(ctx, ta, tb, np.less)


def minimum(input, other):
    _need_tensors(input, other, "minimum")
    a, b = promoted(input, other)
    try:
        return Minimum.apply(a, b)
    except ValueError as e:
        raise broadcast_error("minimum", e, a, b) from None


class Where(Op):
    """d where(c, a, b) = ([c], [not c])"""
    _grad_fn_name = "WhereBackward0"
    _saved_names = ("condition",)
    _edges = (1, 2)  # (not the condition; where(c, x, 0.0): torch records the number as a tensor)

    @staticmethod
    def forward(ctx, cond, a, b):
        ctx.save_for_backward(cond)
        return like_torch(np.where(cond, a, b), cond, a, b)

    @staticmethod
    def backward(ctx, grad):
        (cond,) = ctx.saved_tensors
        zero = zeros_like_(grad)
        return (None,
                where(cond, grad, zero) if ctx.needs_input_grad[1] else None,
                where(cond, zero, grad) if ctx.needs_input_grad[2] else None)

    @staticmethod
    def jvp(ctx, _tc, ta, tb):
        return where(ctx.inputs[0], ta, tb)


def where(condition, input=None, other=None):
    if input is None and other is None:
        from .misc import nonzero
        return nonzero(condition, as_tuple=True)
    if input is None or other is None:
        raise TypeError("where(): takes the condition alone or the condition, input and other; pass both values, "
                        "e.g. where(c, x, 0.0)")
    cond = condition if isinstance(condition, Tensor) else Tensor._make(np.asarray(condition))
    if cond.dtype.name != "bool":
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with "
                           f"dtype {cond.dtype}; use condition.bool() or a comparison")
    a, b = promoted(input, other)
    if not isinstance(a, Tensor):
        a = Tensor._make(a)
    if not isinstance(b, Tensor):
        b = Tensor._make(b)
    try:
        return Where.apply(cond, a, b)
    except ValueError as e:
        raise broadcast_error("where", e, cond, a, b) from None


# ---- complex parts ----------------------------------------------------------------------------
class Conj(Op):
    """conj(x): the gradient is conjugated back"""
    _grad_fn_name = "ConjBackward0"

    @staticmethod
    def forward(ctx, x):
        return np.conj(x)

    @staticmethod
    def backward(ctx, grad):
        return grad.conj()

    @staticmethod
    def jvp(ctx, t):
        return conj(t)


def conj(input):
    return Conj.apply(input) if input._data.dtype.kind == "c" else input  # (a real tensor is its own conjugate)


def _same_view_of(ctx, t):
    """the tangent of view_as_real / view_as_complex: the same view of the input's tangent (they are linear)"""
    return ctx.function_class.apply(t)


class ViewAsReal(Op):
    """view_as_real(z): z's memory as (..., 2) real and imaginary parts; the gradient is view_as_complex of it"""
    _grad_fn_name = "ViewAsRealBackward0"

    @staticmethod
    def forward(ctx, z):
        from ..autograd.views import parts
        return parts(z)

    @staticmethod
    def backward(ctx, grad):
        return ViewAsComplex.apply(grad)

    jvp = staticmethod(_same_view_of)


class ViewAsComplex(Op):
    """view_as_complex(x): x's (..., 2) pairs as complex numbers, on x's memory; the gradient is view_as_real"""
    _grad_fn_name = "ViewAsComplexBackward0"

    @staticmethod
    def forward(ctx, x):
        from .._meta import MetaArray, meta_array
        complex_dtype = np.result_type(x.dtype, np.complex64)
        if isinstance(x, MetaArray):  # (no memory to reinterpret)
            return meta_array(x.shape[:-1], complex_dtype)
        if x.strides[-1] != x.itemsize:  # (a gradient laid out otherwise: torch's backward takes it contiguous)
            x = np.ascontiguousarray(x)
        return x.view(complex_dtype)[..., 0]

    @staticmethod
    def backward(ctx, grad):
        return ViewAsReal.apply(grad)

    jvp = ViewAsReal.jvp




def _dtype_view(out, base, op):
    """out, made by op from base, is a view of base's memory that torch rebuilds by running op again."""
    from .inplace import mark_view
    if isinstance(out._data, np.ndarray) and np.may_share_memory(out._data, base._data):
        mark_view(out, base, replay=op)
    return out


def view_as_real(input):
    if not input.is_complex():
        raise RuntimeError("view_as_real is only supported for complex tensors (view_as_real: make it complex "
                           "first, e.g. x.to(microtorch.complex64), or use view_as_complex for the other way)")
    return _dtype_view(ViewAsReal.apply(input), input, ViewAsReal)


def view_as_complex(input):
    _complex_pairs(input)
    return _dtype_view(ViewAsComplex.apply(input), input, ViewAsComplex)


def _complex_pairs(x):
    """torch's checks of view_as_complex's input: float pairs along a last dim of stride 1, at even offsets"""
    from .inplace import _type_name
    shape, np_dtype = tuple(x.shape), x.dtype.np
    if np_dtype not in (np.float32, np.float64):
        raise RuntimeError("view_as_complex is only supported for half, float and double tensors, but got a tensor "
                           f"of scalar type: {_type_name(np_dtype)} (view_as_complex: microtorch takes float32 and "
                           "float64)")
    if not shape:
        raise RuntimeError("Input tensor must have one or more dimensions (view_as_complex of a 0-d tensor)")
    if shape[-1] != 2:
        raise RuntimeError(f"Tensor must have a last dimension of size 2 (view_as_complex: got shape {list(shape)})")
    if type(x._data) is np.ndarray:  # (a vmap batch is checked per example by its own layout rules)
        _complex_layout(x)


def _complex_layout(x):
    """torch's checks of the memory view_as_complex reads: pairs side by side, starting at even offsets"""
    from ..autograd.views import byte_bounds
    a = x._data
    if a.strides[-1] != a.itemsize:
        raise RuntimeError("Tensor must have a last dimension with stride 1 (view_as_complex: call .contiguous() "
                           "first)")
    root = x._base._data if x._base is not None else a
    offset = (a.__array_interface__["data"][0] - byte_bounds(root)[0]) // a.itemsize
    if any(s // a.itemsize % 2 for s in a.strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension (view_as_complex: "
                           "call .contiguous() first)")
    if offset % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2 (view_as_complex: call .contiguous() "
                           "first)")


def real(input):
    """z.real: torch's select(view_as_real(z), -1, 0), a view of z (a real tensor is its own real part)"""
    if not input.dtype.is_complex:
        return input
    from .index import select
    parts = view_as_real(input)
    return select(parts, parts.ndim - 1, 0)  # (its last dim counted from the front: torch's node shows it so)


def imag(input):
    """z.imag: torch's select(view_as_real(z), -1, 1), a view of z"""
    if not input.dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    from .index import select
    parts = view_as_real(input)
    return select(parts, parts.ndim - 1, 1)


@laid_out_as_input
class Angle(Op):
    """angle(z) = atan2(im, re)"""
    _grad_fn_name = "AngleBackward0"
    _saved_names = ("self",)

    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        if np.iscomplexobj(z):
            return np.angle(z).astype(np.real(z).dtype)
        return np.where(z != z, z, np.where(z < 0, np.pi, 0)).astype(z.dtype)  # (NaN stays NaN, as torch's)

    @staticmethod
    def backward(ctx, grad):
        (z,) = ctx.saved_tensors
        if not z.is_complex():
            return zeros_like_(z)  # torch's: zeros that do not depend on the gradient (no graph, no NaN from it)
        from .scalar_overloads import mul_scalar
        return where(z == 0, 0.0, mul_scalar(grad * z / z.abs().pow(2), 1j))  # (torch's, term by term: 0 at 0)

    @staticmethod
    def jvp(ctx, t):
        (z,) = ctx.inputs
        if not z.is_complex():
            return zeros_like_(t)  # (torch's: zeros, +0.0 and no graph, not t * 0)
        return (z.real * t.imag - z.imag * t.real) / (z.real * z.real + z.imag * z.imag)


def angle(input):
    return Angle.apply(_float(input))  # (an integer's angle is in the default float dtype, as torch's)


def zeros_like_(t):
    return Tensor._make(np.zeros(t._data.shape, t._data.dtype))
