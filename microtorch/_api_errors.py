"""One place that keeps numpy's and Python's internal errors away from users of the API added for
issue 13: an error that microtorch did not raise on purpose becomes torch's kind of error (RuntimeError
for values and shapes, TypeError for types) with a message naming the op and the fix."""
import functools
import os
import traceback

import numpy as np

_PACKAGE = os.path.dirname(os.path.abspath(__file__))
_INTERNAL = (ValueError, IndexError, TypeError, AttributeError, KeyError, ZeroDivisionError, OverflowError)


def _raised_on_purpose(e):
    """True for an error a microtorch `raise` statement made (it already teaches)."""
    if type(e).__module__.startswith("numpy"):
        return False
    frames = traceback.extract_tb(e.__traceback__)
    if not frames:
        return True
    last = frames[-1]
    inside = os.path.abspath(last.filename).startswith(_PACKAGE)
    return inside and ((last.line or "").strip().startswith("raise") or " raise " in f" {last.line} ")


def clean_errors(fn, op=None):
    """fn, whose internal errors are re-raised as torch's kind of error naming the op."""
    name = op or fn.__name__.strip("_")

    @functools.wraps(fn)
    def checked(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except _INTERNAL as e:
            if _raised_on_purpose(e) or _is_users(e):
                raise
            if _called_wrongly(e):  # Python's own arity or keyword error for fn: in the op's name
                raise TypeError(f"{name}(){str(e).split(')', 1)[1]}") from None
            kind = TypeError if isinstance(e, (TypeError, AttributeError)) else RuntimeError
            raise kind(f"{name}(): the arguments do not fit ({type(e).__name__}: {e}); check their types, dtypes "
                       f"and shapes against torch.{name}'s documentation") from None
    return checked


def _called_wrongly(e):
    """A TypeError Python raised for the call of the wrapped function itself (too many positional arguments, an
    unknown keyword), whose message names that function, a lambda perhaps, rather than the op."""
    tb = e.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    return type(e) is TypeError and tb.tb_frame.f_code.co_name in _WRAPPERS and "()" in str(e)


_WRAPPERS = ("checked", "accepting_numpy_names")  # (this file's and _tensor_methods.numpy_aliases's)


def _is_users(e):
    """An error inside a function the user passed in (a collate_fn, a distance function...) is theirs."""
    frames = traceback.extract_tb(e.__traceback__)
    return bool(frames) and not os.path.abspath(frames[-1].filename).startswith(_PACKAGE) and \
        "numpy" not in frames[-1].filename and "site-packages" not in frames[-1].filename


def clean_namespace(namespace, names):
    for n in names:
        if callable(namespace.get(n)) and not isinstance(namespace[n], type):
            namespace[n] = clean_errors(namespace[n], n)


_ = np  # (numpy's error types are recognised by their module)
