"""Integer ops with no gradient: bitwise and/or/xor/not, shifts, gcd and lcm (numpy's, with
torch's dtype rules and errors)."""
import numpy as np

from .._dtype import result_type
from .._tensor import Tensor
from ._layout import as_input, converted, like_torch_pair
from ._op import as_array, broadcast_error


def _integer(op, *operands):
    """the operands' data in their torch result dtype; a Python int wraps around into it, as in torch
    (x_uint8 & -1 is x & 255); a tensor's data converted as torch converts it (see ops/_layout.py)"""
    dt = result_type(*operands)
    if dt.np.kind not in "biu":
        name = {"f": "Float", "c": "ComplexFloat"}.get(dt.np.kind, dt.np.kind)
        raise NotImplementedError(f'"{op}_cpu" not implemented for \'{name}\': {op} takes integer or bool '
                                  "tensors; convert with .long() or .bool()")
    return [converted(a._data, dt.np) if isinstance(a, Tensor) else np.array(a).astype(dt.np)
            for a in operands]


def _binary(op, np_fn, bool_ok=True, tensor_only=False):
    def fn(input, other):
        if tensor_only and not isinstance(other, Tensor):  # gcd and lcm take tensors only
            raise TypeError(f"{op}(): argument 'other' (position 1) must be Tensor, not {type(other).__name__}")
        if not isinstance(input, Tensor) and not isinstance(other, Tensor):  # (a number first: the other a tensor)
            raise TypeError(f"{op}() received an invalid combination of arguments - got ({type(input).__name__}, "
                            f"{type(other).__name__}): one of them must be a Tensor")
        a, b = _integer(op, input, other)
        if not bool_ok and a.dtype == bool:  # (bool << 1 runs in int64; bool << bool has no kernel)
            raise NotImplementedError(f'"{op}" not implemented for \'Bool\': convert the tensors with .long()')
        try:
            out = np_fn(a, b)
        except ValueError as e:
            raise broadcast_error(op, e, input, other) from None
        out = as_array(out).astype(a.dtype if bool_ok else np.result_type(a, b))
        return Tensor._make(like_torch_pair(out, a, b))  # (laid out as torch's: see ops/_layout.py)
    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = f"{op}(input, other): elementwise, on integer or bool tensors (no gradient)."
    return fn


bitwise_and = _binary("bitwise_and", np.bitwise_and)
bitwise_or = _binary("bitwise_or", np.bitwise_or)
bitwise_xor = _binary("bitwise_xor", np.bitwise_xor)
bitwise_left_shift = _binary("bitwise_left_shift", np.left_shift, bool_ok=False)
bitwise_right_shift = _binary("bitwise_right_shift", np.right_shift, bool_ok=False)
gcd = _binary("gcd", np.gcd, bool_ok=False, tensor_only=True)
lcm = _binary("lcm", np.lcm, bool_ok=False, tensor_only=True)


def bitwise_not(input):
    (a,) = _integer("bitwise_not", input)
    return Tensor._make(as_input(as_array(np.logical_not(a) if a.dtype == bool else np.invert(a)), a))
