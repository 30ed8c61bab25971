"""Anomaly mode: remember where each node was created; fail on NaN gradients.

As in torch, the mode is one switch for the whole process (torch keeps it in a static flag, not
per thread, unlike grad mode); only the node whose backward is running is kept per thread."""
import os
import threading
import traceback

enabled = False     # read directly on every recorded op
check_nan = True
_state = threading.local()  # current_node: the node whose backward runs in this thread

_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_INTERNAL = (os.path.join(_PKG, "autograd") + os.sep, os.path.join(_PKG, "ops") + os.sep,
             os.path.join(_PKG, "_tensor"), os.path.join(_PKG, "_quiet"))


def user_stack():
    """The current Python stack as torch's anomaly mode prints it, without microtorch's own
    engine, ops and Tensor frames (torch's are C++ and invisible), so the user's line shows."""
    frames = [f for f in traceback.extract_stack()[:-1] if not f.filename.startswith(_INTERNAL)]
    return "".join(traceback.format_list(frames))


def warn_at_user_code(message):
    """A UserWarning attributed to the innermost frame outside microtorch's engine and ops
    (the line that called backward), not to the engine."""
    import sys
    import warnings
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_INTERNAL):
        frame = frame.f_back
    if frame is None:
        warnings.warn(message, UserWarning, stacklevel=2)
        return
    warnings.warn_explicit(message, UserWarning, frame.f_code.co_filename, frame.f_lineno,
                           module=frame.f_globals.get("__name__"),
                           registry=frame.f_globals.setdefault("__warningregistry__", {}))


def is_anomaly_enabled():
    return enabled


def is_anomaly_check_nan_enabled():
    return check_nan


def _set(mode, nan_checks):
    global enabled, check_nan
    enabled, check_nan = bool(mode), nan_checks


class detect_anomaly:
    """Context manager / decorator: record forward stacks, raise on NaN in backward."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan

    def __enter__(self):
        import warnings
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", UserWarning, stacklevel=2)
        self.prev = (is_anomaly_enabled(), is_anomaly_check_nan_enabled())
        _set(True, self.check_nan)

    def __exit__(self, *exc):
        _set(*self.prev)

    def __call__(self, func):
        import functools

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with type(self)(self.check_nan):
                return func(*args, **kwargs)
        return wrapper


class set_detect_anomaly:
    """Turn anomaly mode on or off, as a function call or for a block."""

    def __init__(self, mode, check_nan=True):
        self.prev = (is_anomaly_enabled(), is_anomaly_check_nan_enabled())
        _set(mode, check_nan)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _set(*self.prev)


def note_creation(node):
    """Keep, on a node created while anomaly mode is on, the stack of the forward call that
    created it, and the node whose backward created it (under create_graph=True)."""
    node._anomaly_trace = user_stack()
    parent = _state.__dict__.get("current_node")
    if parent is not None:
        node._anomaly_parent = parent
