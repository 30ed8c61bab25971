"""Grad modes: whether ops record a graph. Each is a context manager and a decorator."""
import functools
import threading

from .. import _inference

_state = threading.local()
# How many threads have grad mode off. Every op asks whether it is on; while no thread has turned
# it off the answer is known without reading the thread-local state (which costs as much as a call).
threads_off = 0
_switching = threading.Lock()


def is_grad_enabled():
    # __dict__.get, not getattr with a default: a missing attribute costs an AttributeError
    return threads_off == 0 or _state.__dict__.get("enabled", True)


def _set_enabled(mode):
    global threads_off
    mode = bool(mode)
    with _switching:  # (+= on a global is not atomic between threads)
        threads_off += is_grad_enabled() - mode
        _state.enabled = mode


def is_inference_mode_enabled():
    return _state.__dict__.get("inference", False)


def _set_inference(mode):
    with _switching:  # (Tensor._make reads the count: microtorch/_inference.py)
        _inference.threads += bool(mode) - is_inference_mode_enabled()
        _state.inference = bool(mode)


class _DecoratorContextManager:
    """Usable as `with mode():` and as `@mode()` (or bare `@mode` for no_grad/enable_grad)."""

    def __call__(self, func):
        if isinstance(func, type):
            raise TypeError(f"{type(self).__name__} decorates functions, not classes")

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)

        return wrapper

    def clone(self):
        return type(self)()


class no_grad(_DecoratorContextManager):
    """Ops inside do not record a graph; results have requires_grad=False."""

    def __new__(cls, func=None):
        self = super().__new__(cls)
        if callable(func):  # bare @no_grad
            self.__init__()
            return self(func)
        return self

    def __enter__(self):
        self.prev = is_grad_enabled()
        _set_enabled(False)

    def __exit__(self, *exc):
        _set_enabled(self.prev)


class enable_grad(no_grad):
    """Re-enables graph recording inside a no_grad block."""

    def __enter__(self):
        self.prev = is_grad_enabled()
        _set_enabled(True)


class set_grad_enabled(_DecoratorContextManager):
    """Sets grad mode on or off; takes effect at once (as a function) or for a block."""

    def __init__(self, mode):
        if type(mode) is not bool:  # (torch's argument parser: a bool, not 1 or "x")
            raise TypeError(f"set_grad_enabled(): argument 'enabled' (position 1) must be bool, not "
                            f"{type(mode).__name__}")
        self.prev = is_grad_enabled()
        self.mode = mode
        _set_enabled(self.mode)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _set_enabled(self.prev)

    def __call__(self, func):
        _set_enabled(self.prev)  # as a decorator it must not switch the mode at definition time
        return super().__call__(func)

    def clone(self):
        return type(self)(self.mode)


class inference_mode(_DecoratorContextManager):
    """no_grad, and the tensors made inside are inference tensors (`is_inference()`), as torch's: outside the mode
    they may not be saved for backward, changed in place, or made to require grad (clone() one to do that)."""

    def __new__(cls, mode=True):
        self = super().__new__(cls)
        if callable(mode):  # bare @inference_mode
            self.__init__()
            return self(mode)
        return self

    def __init__(self, mode=True):
        self.mode = bool(mode)

    def __enter__(self):
        self.prev = (is_grad_enabled(), is_inference_mode_enabled())
        if self.mode:
            _set_enabled(False)
        _set_inference(self.mode)

    def __exit__(self, *exc):
        _set_enabled(self.prev[0])
        _set_inference(self.prev[1])

    def clone(self):
        return type(self)(self.mode)
