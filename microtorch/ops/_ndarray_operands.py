"""A Tensor operator given a numpy array, as torch answers it.

torch's argument parser takes no ndarray where it wants a Tensor: `torch.add(t, arr)` and `t.add(arr)`
raise TypeError (ops/_checks.py refuses the array there). Its operators answer differently, because
Python asks numpy next when a Tensor operator gives up: `t + arr` is computed by numpy on the tensor's
array and the result wrapped as a new tensor (numpy's dtype rules; no graph, and a tensor that requires
grad cannot be read by numpy, a RuntimeError), while `arr + t` is refused (numpy defers to the Tensor,
which has given up) except `arr / t`, which torch computes as `t.reciprocal() * arr`. An in-place
operator (`t += arr`) falls back the same way: the name is bound to a new tensor and t is unchanged.
The guard of each operator (ops/_checks.py) calls `ndarray_operand` only after its cheap type test
failed, so a correct call pays nothing for this.
"""
import numpy as np

from .._tensor import from_numpy

# the operators that numpy computes (the in-place forms too: Python falls back to them)
_NUMPY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.true_divide,
          "floordiv": np.floor_divide, "mod": np.remainder, "pow": np.power, "matmul": np.matmul,
          "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor, "lshift": np.left_shift,
          "rshift": np.right_shift}
_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%", "pow": "**",
            "matmul": "@", "and": "&", "or": "|", "xor": "^", "lshift": "<<", "rshift": ">>",
            "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


def handles(operator):
    """Does ndarray_operand answer this operator (a dunder name such as `__radd__`)?"""
    name = operator.strip("_")
    return name in _SYMBOLS or name[1:] in _SYMBOLS and name[0] in "ri"


def ndarray_operand(operator, tensor, array):
    """`tensor <operator> array` (or the reflected form) as torch gives it: numpy's result as a new tensor,
    or the TypeError that Python raises when neither side computes."""
    name = operator.strip("_")
    if name in ("lt", "le", "gt", "ge"):
        raise TypeError(f"'{_SYMBOLS[name]}' not supported between instances of 'Tensor' and 'numpy.ndarray' "
                        f"(wrap the array with microtorch.tensor(...) to compare elementwise)")
    reflected = name[0] == "r" and name not in _SYMBOLS
    base = name[1:] if reflected or name[0] == "i" and name not in _SYMBOLS else name
    if reflected and base != "truediv":
        raise TypeError(f"unsupported operand type(s) for {_SYMBOLS[base]}: 'numpy.ndarray' and 'Tensor' "
                        f"(wrap the array with microtorch.tensor(...) to compute with tensors)")
    if tensor.requires_grad:
        raise RuntimeError(f"Can't call numpy() on Tensor that requires grad: '{_SYMBOLS[base]}' with a numpy "
                           "array is computed by numpy, which records no gradient. Wrap the array with "
                           "microtorch.tensor(...), or use tensor.detach() if no gradient should flow.")
    fn, data = (np.multiply, tensor.reciprocal()._data) if reflected else (_NUMPY[base], tensor._data)
    try:  # (arr / t: torch's t.reciprocal() * arr, the reciprocal by the tensor's own dtype rules)
        return from_numpy(np.asarray(fn(data, array)))
    except (TypeError, ValueError) as e:  # numpy's error, as torch lets it through, with the operator named
        error = TypeError if isinstance(e, TypeError) else ValueError
        raise error(f"'{_SYMBOLS[base]}' of a tensor {list(tensor.shape)} ({tensor.dtype}) and a numpy array "
                    f"{list(np.shape(array))} ({np.asarray(array).dtype}), computed by numpy: {e}") from None
