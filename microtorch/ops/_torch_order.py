"""Errors in torch's order for nn2's functions (norm_more, attention, loss_more, nn_more).

torch types the arguments of an op bound in C++ before running anything; its Python-level functions check
in their own order first. `torch_checked` reproduces the first (the kinds given) and makes every error the
function raises name the op, keeping its type."""
import functools

from ._checks import type_error

_NAMED = (RuntimeError, ValueError, IndexError, NotImplementedError)


def torch_checked(fn, op, parsed=None):
    """fn whose arguments in `parsed` ({parameter: kind}, see _checks._KIND_NAMES) are typed first, as torch's
    argument parser does, and whose errors name the op"""
    @functools.wraps(fn)
    def checked(*args, **kwargs):
        if parsed is not None:
            err = type_error(op, fn, args, kwargs, False, parsed)
            if err is not None:
                raise err
        try:
            return fn(*args, **kwargs)
        except _NAMED as e:
            if type(e) not in _NAMED or op in str(e):
                raise
            raise type(e)(f"{op}(): {e}") from None
    return checked
