"""torch's deprecated overloads that older tutorials and hand-written optimizers still call, with the
number first: `p.data.add_(-lr, p.grad)`, `torch.add(x, 2, y)`, `v.addcmul_(1 - beta, g, g)`. torch 2.13
still runs them and warns once per process, at the first such call (a UserWarning naming the signature to
use instead); microtorch does the same, so pasted code runs and the student learns the current spelling.
"""
import functools
import warnings

import numpy as np

from ._tensor import Tensor

# op: (the name of the number, the names of the tensors after it), as torch's deprecated signatures
_OVERLOADS = {"add": ("alpha", ("other",)), "sub": ("alpha", ("other",)),
              "addcmul": ("value", ("tensor1", "tensor2")), "addcdiv": ("value", ("tensor1", "tensor2"))}
_warned = []  # (torch's warning is one for all these overloads: its first call in the process warns)


def install(cls, namespace):
    """Wrap Tensor.add/add_/sub/sub_/addcmul(_)/addcdiv(_) and torch.add/sub/addcmul/addcdiv."""
    for op in _OVERLOADS:
        for name in (op, op + "_"):
            setattr(cls, name, accepting_number_first(getattr(cls, name), op, name, method=True))
        namespace[op] = accepting_number_first(namespace[op], op, op, method=False)


def accepting_number_first(fn, op, name, method):
    """fn, also taking torch's deprecated order: (self or input, number, tensors...)."""
    number, tensors = _OVERLOADS[op]

    @functools.wraps(fn)
    def number_first(*args, **kwargs):
        if len(args) >= 2 and _is_number(args[1]) and number not in kwargs \
                and len(args) - 2 + sum(t in kwargs for t in tensors) == len(tensors) \
                and (op in ("add", "sub") or all(isinstance(t, Tensor) for t in args[2:])):  # (add's other may be
            # a number, which torch makes a tensor)
            _warn_once(name, number, tensors, method)
            return fn(args[0], *args[2:], **kwargs, **{number: args[1]})
        try:
            return fn(*args, **kwargs)
        except TypeError as e:
            if e.__traceback__.tb_next is not None:  # raised inside fn: its own message, where it was raised
                raise
            raise TypeError(str(e)) from None  # Python's own error for the arguments, as the user's call gets it
    return number_first


def _is_number(x):
    return isinstance(x, (int, float, complex, np.number, np.bool_))


def _warn_once(name, number, tensors, method):
    if _warned:
        return
    _warned.append(name)
    first, out = ("", "") if method else ("Tensor input, ", ", *, Tensor out = None")
    names = ", ".join(f"Tensor {t}" for t in tensors)
    old = f"{name}({first}Number {number}, {names}{out})"
    new = f"{name}({first}{names}, *, Number {number} = 1{', Tensor out = None' if not method else ''})"
    warnings.warn(f"This overload of {name} is deprecated:\n\t{old}\nConsider using one of the following signatures "
                  f"instead:\n\t{new}", UserWarning, stacklevel=3)
