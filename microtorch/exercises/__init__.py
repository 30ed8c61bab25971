"""microtorch.exercises: checks a student calls on an answer, in the notebooks' exercises.

    from microtorch.exercises import check

    check.sigmoid_backward(MySigmoid)          # a Function: forward compared, then gradcheck
    check.h_prime(answer)                      # a number worked out by hand
    check.hint("sigmoid_backward")             # a hint, only when asked
    check.sigmoid_backward(MySigmoid, hint=True)
    check.sigmoid_backward(MySigmoid, strict=True)   # AssertionError when wrong (nbgrader)
    check.list(7)                              # the checks of notebook 7
    check.grad_by_hand(answer, f, 2.0)         # for your own exercises: any derivative by hand
    check.function_backward(MyOp, x)           # ... any Function's backward (gradcheck)

A check compares the answer with a reference it computes (never shown), or runs gradcheck
/ gradgradcheck on it. It returns a `Result`: `.passed`, `.reason`, and in Jupyter a green or
red box; on a wrong answer it names the typical mistake it recognises (a wrong sign, a
missing broadcast sum, a forgotten chain-rule factor...) and shows why with the visualizer.
It raises nothing on a wrong answer unless `strict=True`.

Not imported by `import microtorch`; the visualizer is imported only to draw a picture.
"""
import inspect

from ._judge import Unusable, wrong
from ._registry import REGISTRY
from ._result import Hint, Result
from . import _basics, _tensors, _advanced, _generic  # noqa: F401  (they register the checks)

__all__ = ["check", "Result", "Hint"]


class _Checks:
    """`check.<name>(answer, ..., hint=False, strict=False)` for every exercise; see `check.list()`."""

    def __getattr__(self, name):
        if name.startswith("_") or name not in REGISTRY:
            raise AttributeError(f"no check named {name!r}; the checks are: {', '.join(sorted(REGISTRY))}")
        return _bound(name)

    def __dir__(self):
        return sorted(REGISTRY) + ["hint", "list"]

    def hint(self, name):
        """The hint for one exercise."""
        if name not in REGISTRY:
            raise KeyError(f"no exercise named {name!r}; the checks are: {', '.join(sorted(REGISTRY))}")
        return Hint(name, REGISTRY[name].hint)

    def list(self, notebook=None):
        """Names of the checks, of one notebook if given (1..13; 0: the generic ones)."""
        return [n for n, e in REGISTRY.items() if notebook is None or e.notebook == notebook]

    def __repr__(self):
        return f"<microtorch.exercises.check: {len(REGISTRY)} checks; check.list(), check.hint(name)>"


def _bound(name):
    entry = REGISTRY[name]

    def run(*args, hint=False, strict=False, **kwargs):
        result = run_check(name, *args, hint=hint, **kwargs)
        if strict and not result.passed:
            _show(result)                  # the red box and its picture, above the traceback
            raise AssertionError(repr(result))
        return result

    run.__name__ = name
    run.__doc__ = entry.doc
    run.__signature__ = inspect.signature(entry.func)
    return run


def _show(result):
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:
        return
    if get_ipython() is not None:
        display(result)


def run_check(name, *args, hint=False, **kwargs):
    entry = REGISTRY[name]
    try:
        inspect.signature(entry.func).bind(*args, **kwargs)
    except TypeError as e:
        verdict = wrong(f"check.{name} was called the wrong way ({e}); it takes {inspect.signature(entry.func)}.")
    else:
        try:
            verdict = entry.func(*args, **kwargs)
        except Unusable as e:
            verdict = wrong(str(e))
    return Result(name, verdict.passed, verdict.reason, hint=entry.hint if hint else None, visuals=verdict.visuals)


check = _Checks()
