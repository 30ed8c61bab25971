"""Rounding and modulo, differentiated as torch does.

floor, ceil, trunc and round are steps: their nodes exist and pass a zero gradient. fmod and
remainder pass the gradient through to the dividend, and -g * trunc(a / b) (fmod) or
-g * floor(a / b) (remainder) to a tensor divisor. div with a rounding_mode passes zeros;
floor_divide has no derivative (its node refuses, as torch's)."""
import numpy as np

from .._dtype import result_type
from ._layout import converted, laid_out_as_input, like_torch_pair, with_number
from ._op import NoDerivative, Op, as_array, number_as
from .elementwise import zeros_like_


@laid_out_as_input
class Rounded(Op):
    """d floor(x) = 0, and likewise ceil, trunc and round (`np_fn` computes it)"""

    @staticmethod
    def forward(ctx, x, np_fn):
        out = np_fn(x)
        return out if isinstance(out, np.ndarray) else as_array(out)  # (a meta input's array stays meta)

    @staticmethod
    def backward(ctx, grad):
        return zeros_like_(grad), None

    @staticmethod
    def jvp(ctx, t, _np_fn):
        return zeros_like_(t)


def _rounded(name):
    return type(name, (Rounded,), {"_grad_fn_name": name + "Backward0", "__module__": __name__,
                                   "__doc__": Rounded.__doc__})


Floor, Ceil, Trunc, Round = (_rounded(n) for n in ("Floor", "Ceil", "Trunc", "Round"))


@laid_out_as_input
class RoundDecimals(Rounded):
    """d round(x, decimals) = 0"""
    _grad_fn_name = "RoundBackward1"  # (torch's node saves nothing, not even decimals)

    @staticmethod
    def forward(ctx, x, decimals):
        return as_array(np.round(x, decimals))


class Fmod(Op):
    """d fmod(x, s) = 1 for a number s"""
    _grad_fn_name = "FmodBackward0"

    @staticmethod
    def forward(ctx, x, s):
        return with_number(np.fmod(*_in_result_type(x, s)), x)

    @staticmethod
    def backward(ctx, grad):
        return grad, None

    @staticmethod
    def jvp(ctx, t, _s):
        return t + 0


class FmodTensor(Op):
    """d fmod(a, b) = (1, -trunc(a / b))"""
    _grad_fn_name = "FmodBackward1"
    _saved_names = ("self", "other")

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(*_for_other(ctx, a, b))
        a, b = _promoted(a, b)
        return like_torch_pair(np.fmod(a, b), a, b)  # (laid out as torch's: see ops/_layout.py)

    @staticmethod
    def backward(ctx, grad):
        return _mod_backward(ctx, grad, "trunc")

    @staticmethod
    def jvp(ctx, ta, tb):
        a, b = ctx.inputs
        return ta - tb * (a / b).trunc()


def _mod_backward(ctx, grad, mode):
    """(g, -g * div(a, b, rounding_mode=mode)): torch's rounded division, DivBackward2, whose own gradient is 0 (no
    0 / 0 where b = 0). a and b are read back only for b's gradient: without it they were never saved, and a second
    backward through the node passes, as torch's."""
    from .misc import div_rounded
    if not ctx.needs_input_grad[1]:
        return grad, None
    a, b = ctx.saved_tensors
    return grad if ctx.needs_input_grad[0] else None, -grad * div_rounded(a, b, mode)


def _for_other(ctx, a, b):
    """What fmod's and remainder's backward read: a and b, for b's gradient only (a's is the gradient itself), so
    that they may change in place when b needs none, as in torch."""
    return (a, b) if ctx.needs_input_grad[1] else (None, None)


def _in_result_type(x, s):
    """x and the number s as arrays of torch's result dtype: an integer tensor and a float number give the
    default dtype (numpy would give float64), and a number outside an integer dtype wraps (uint8 and -2: 254)."""
    np_dtype = result_type(x, s).np
    return converted(x, np_dtype), number_as(s, np_dtype)


def _promoted(a, b):
    """two arrays in torch's result dtype (float32 and int64 give float32, where numpy gives float64), laid out as
    torch converts them"""
    np_dtype = result_type(a, b).np
    return converted(a, np_dtype), converted(b, np_dtype)


def torch_remainder(a, b):
    """a mod b with the sign of b, computed as torch does (fmod, then b added where the signs
    differ), so that a zero result keeps fmod's sign where numpy's remainder gives b's."""
    r = np.fmod(a, b)
    return as_array(np.where((r != 0) & ((r < 0) != (b < 0)), r + b, r))


class Remainder(Fmod):
    """d remainder(x, s) = 1 for a number s"""
    _grad_fn_name = "RemainderBackward0"

    @staticmethod
    def forward(ctx, x, s):
        return with_number(torch_remainder(*_in_result_type(x, s)), x)


class RemainderTensor(FmodTensor):
    """d remainder(a, b) = (1, -floor(a / b))"""
    _grad_fn_name = "RemainderBackward1"

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(*_for_other(ctx, a, b))
        a, b = _promoted(a, b)
        return like_torch_pair(torch_remainder(a, b), a, b)

    @staticmethod
    def backward(ctx, grad):
        return _mod_backward(ctx, grad, "floor")

    @staticmethod
    def jvp(ctx, ta, tb):
        from .misc import div_rounded
        a, b = ctx.inputs
        return ta - tb * div_rounded(a, b, "floor")


def rounded_quotient(a, b, mode):
    """a / b rounded toward -inf ("floor") or toward 0 ("trunc"), on arrays; integers stay integers."""
    ints = a.dtype.kind in "iu" and b.dtype.kind in "iu"
    with np.errstate(divide="ignore", invalid="ignore"):  # x / 0 is inf or nan, silently (torch)
        if mode == "floor":
            return as_array(np.floor_divide(a, b))  # (floats: fmod first, as torch and Python)
        out = np.trunc(a / b)
        return as_array(out.astype(np.result_type(a, b)) if ints else out)


class DivRounded(Op):
    """d div(a, b, rounding_mode=...) = (0, 0): the result is a step in both"""
    _grad_fn_name = "DivBackward2"
    _edges = (0, 1)  # (a number divisor is a tensor in torch's op: an edge to None)
    _saved_values = {"rounding_mode": "mode"}
    _saved_names = ("self", "other")

    @staticmethod
    def forward(ctx, a, b, mode, np_dtype=None):
        ctx.mode = mode
        a, b = np.asarray(a), np.asarray(b)
        ctx.save_for_backward(a if ctx.needs_input_grad[1] else None, b)  # (what torch's node keeps for the
        # quotient's formula without a mode: changed in place, backward refuses)
        if np_dtype is not None:  # (computed in the result's dtype, the operands converted as torch's)
            a, b = converted(a, np_dtype), converted(b, np_dtype)
        return like_torch_pair(rounded_quotient(a, b, mode), a, b)

    @staticmethod
    def backward(ctx, grad):
        ctx.saved_tensors  # (unpacked, as torch's node does)
        return zeros_like_(grad), zeros_like_(grad), None, None

    @staticmethod
    def jvp(ctx, ta, tb, _mode, _np_dtype=None):
        return zeros_like_(ta)


class FloorDivide(NoDerivative):
    """floor_divide has no derivative: a recorded result's backward raises torch's error"""
    _grad_fn_name = "torch::autograd::NotImplemented"

    @staticmethod
    def forward(ctx, a, b, np_dtype):
        a, b = converted(np.asarray(a), np_dtype), converted(np.asarray(b), np_dtype)  # (torch's: in the result's
        # dtype, the operands converted, then laid out as those)
        return like_torch_pair(rounded_quotient(a, b, "floor"), a, b)

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("derivative for aten::floor_divide is not implemented (it is a step in both "
                           "arguments; use div(a, b) / torch.div(a, b, rounding_mode=...) for a zero gradient)")

    @staticmethod
    def jvp(ctx, ta, tb, _np_dtype):
        raise RuntimeError("derivative for aten::floor_divide is not implemented (forward mode)")


class RemainderOfNumber(Op):
    """remainder(number, x) has no derivative in torch: a recorded result's backward raises"""
    _grad_fn_name = "torch::autograd::NotImplemented"

    @staticmethod
    def forward(ctx, s, x, np_dtype):
        return torch_remainder(number_as(s, np_dtype), converted(x, np_dtype))

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("derivative for aten::remainder is not implemented (of a number by a tensor; "
                           "x - floor(x / y) * y written out has one)")

    @staticmethod
    def jvp(ctx, _ts, tx, _np_dtype):
        raise NotImplementedError("Trying to use forward AD with aten::remainder that does not support it.")
