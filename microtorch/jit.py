"""torch.jit as eager code meets it. microtorch has no TorchScript compiler: it runs Python.

The helpers that TorchScript-ready code calls do in microtorch what they do in torch's eager mode: `is_scripting()`
and `is_tracing()` are False, `annotate(type, value)` is the value, `ignore`, `unused` and `export` mark a function
and return it, `fork(fn, ...)` runs fn and `wait` gives its result, `Final` is typing's. `script(fn)` of a function
gives a ScriptFunction that runs fn as Python, with the same results; what only a compiled program has (its graph,
code, and a file to save) is refused with NotImplementedError. Scripting a module, tracing (which records one path
through the program, so it can compute something else than the eager code) and TorchScript files are refused too.
"""
import functools
import typing
import warnings

__all__ = ["Final", "Future", "ScriptFunction", "annotate", "export", "fork", "freeze", "ignore", "is_scripting",
           "is_tracing", "load", "optimize_for_inference", "save", "script", "script_if_tracing", "trace",
           "trace_module", "unused", "wait"]

Final = typing.Final

_NO_COMPILER = ("microtorch has no TorchScript compiler: it runs your Python code as it is. Call the function or "
                "module directly, and save a model with microtorch.save(model.state_dict(), path)")


def is_scripting():
    """False: microtorch's code is never being compiled."""
    return False


def is_tracing():
    """False: microtorch never traces."""
    return False


def annotate(the_type, the_value):
    """The value (a type hint for the TorchScript compiler, which eager code ignores)."""
    return the_value


def _marked(fn, modifier):
    fn._torchscript_modifier = modifier
    return fn


def _deprecated(op, instead="torch.compile` or `torch.export"):
    """torch 2.13's DeprecationWarning of a TorchScript entry point (attributed to this module, as torch's to its own,
    so a script shows it only with warnings enabled)."""
    warnings.warn(f"`torch.jit.{op}` is deprecated. Please switch to `{instead}`.", DeprecationWarning, stacklevel=1)


def ignore(drop=False, **kwargs):
    """@ignore, @ignore(drop=...): leave a function to Python (it is, here)."""
    if drop is True:
        warnings.warn("ignore(True) has been deprecated. TorchScript will now drop the function call on compilation. "
                      "Use torch.jit.unused now. {}", FutureWarning, stacklevel=2)
    if callable(drop):
        return _marked(drop, "ignore (leave as a call to Python, cannot be torch.jit.save'd)")
    return lambda fn: _marked(fn, "ignore (leave as a call to Python, cannot be torch.jit.save'd)")


def unused(fn):
    """@unused: a method the compiler would replace by a raise; in eager code it runs."""
    return _marked(fn, "unused (ignored and replaced with raising of an exception)")


def export(fn):
    """@export: a method the compiler would compile even if forward does not call it."""
    return _marked(fn, "export (compile this function even if nothing calls it)")


class Future:
    """The result of fork: already computed (fork runs the function at once)."""

    def __init__(self, value):
        self._value = value

    def wait(self):
        return self._value

    def done(self):
        return True

    def value(self):
        return self._value


def fork(func, *args, **kwargs):
    """Run func(*args, **kwargs) (torch may run it on another thread; the result is the same) as a Future."""
    warnings.warn("`torch.jit.fork` is deprecated. Please use `torch.compile` instead.", DeprecationWarning,
                  stacklevel=1)
    return Future(func(*args, **kwargs))


def wait(future):
    warnings.warn("`torch.jit.wait` is deprecated. Please use `torch.compile` instead.", DeprecationWarning,
                  stacklevel=1)
    return future.wait()


class ScriptFunction:
    """script(fn): fn run as Python. Calls give fn's results; the compiled program's views are refused."""

    def __init__(self, fn):
        functools.update_wrapper(self, fn)
        self.name = fn.__name__

    def __call__(self, *args, **kwargs):
        return self.__wrapped__(*args, **kwargs)

    def _refused(self, what):
        raise NotImplementedError(f"ScriptFunction {self.name!r}: {what} needs a compiled TorchScript program. "
                                  f"{_NO_COMPILER}.")

    graph = property(lambda self: self._refused(".graph"))
    code = property(lambda self: self._refused(".code"))
    inlined_graph = property(lambda self: self._refused(".inlined_graph"))

    def graph_for(self, *args, **kwargs):
        self._refused("graph_for()")

    def save(self, *args, **kwargs):
        self._refused("save()")


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """A function scripted: a ScriptFunction that runs it (see the module's docstring). A module is refused."""
    _deprecated("script")
    if isinstance(obj, ScriptFunction):
        return obj
    if isinstance(obj, type) or not callable(obj) or hasattr(obj, "parameters"):
        raise NotImplementedError(f"torch.jit.script of {type(obj).__name__ if not isinstance(obj, type) else obj}: "
                                  f"{_NO_COMPILER}.")
    return ScriptFunction(obj)


def script_if_tracing(fn):
    """fn itself: nothing is traced here, so it is never scripted."""
    return fn


def _refuse(op):
    def refused(*args, **kwargs):
        _deprecated(op, "torch.export" if op in ("save", "load") else "torch.compile` or `torch.export")
        raise NotImplementedError(f"torch.jit.{op}: {_NO_COMPILER}.")
    refused.__name__ = op
    return refused


trace = _refuse("trace")
trace_module = _refuse("trace_module")
save = _refuse("save")
load = _refuse("load")
freeze = _refuse("freeze")
optimize_for_inference = _refuse("optimize_for_inference")
