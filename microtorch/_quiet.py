"""numpy kept quiet: torch computes 1/0, 0*inf, exp(1000) to inf or nan without a warning, and so
does every op. One mechanism for the whole package, through numpy's public `np.errstate`: entered once
per thread, in a `contextvars.Context` of our own that ops and backward run in.
"""
import contextvars
import threading

import numpy as np

_quiet_local = threading.local()
_QUIET = contextvars.ContextVar("microtorch_quiet", default=False)


def quietly(fn, *args, **kwargs):
    """fn(*args) inside `np.errstate(all="ignore")`. Entering np.errstate costs about 1 us, as much as
    a whole small op, so it is entered once per thread in a context of our own (contextvars), and fn
    runs in that context; the caller's own numpy setting is untouched."""
    if _QUIET.get():  # already inside (an op's forward calling another op)
        return fn(*args, **kwargs)
    return (_quiet_local.__dict__.get("context") or _quiet_context()).run(fn, *args, **kwargs)


def _quiet_context():
    """This thread's context in which numpy's errstate is entered once and never left."""
    ctx = _quiet_local.context = contextvars.Context()
    ctx.run(_enter_quiet)
    return ctx


def _enter_quiet():
    np.errstate(all="ignore").__enter__()  # never left: this context exists only for this
    _QUIET.set(True)
