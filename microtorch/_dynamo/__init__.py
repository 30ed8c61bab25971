"""torch._dynamo, the tracer behind torch.compile, as far as course code reaches into it: its config switches
(`torch._dynamo.config.suppress_errors = True` before compiling), reset(), disable(), is_compiling() and the
marks a tensor may carry for the tracer. microtorch traces nothing (`compile` runs the model as it is), so the
switches keep the values given and change nothing else."""
import warnings

from ..nn.modules.optimized import OptimizedModule  # noqa: F401  (what torch.compile(module) returns)

__all__ = ["config", "reset", "disable", "is_compiling", "mark_dynamic", "mark_static", "maybe_mark_dynamic",
           "allow_in_graph", "graph_break", "OptimizedModule"]

# torch 2.13's defaults of the switches course code sets
_DEFAULTS = {"suppress_errors": False, "cache_size_limit": 8, "recompile_limit": 8, "accumulated_cache_size_limit": 256,
             "verbose": False, "capture_scalar_outputs": False, "capture_dynamic_output_shape_ops": False,
             "optimize_ddp": True, "automatic_dynamic_shapes": True, "assume_static_by_default": True}


class _Config:
    """torch._dynamo.config: known switches only; a misspelt one is an AttributeError, read or written."""

    def __init__(self):
        object.__setattr__(self, "_values", dict(_DEFAULTS))

    def __getattr__(self, name):
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"torch._dynamo.config.{name} does not exist") from None

    def __setattr__(self, name, value):
        if name in _DEPRECATED:  # (torch 2.13 keeps these names, warns, and ignores them)
            warnings.warn(_DEPRECATED[name], FutureWarning, stacklevel=2)
            self._values[name] = value
            return
        if name not in self._values:
            raise AttributeError(f"torch._dynamo.config.{name} does not exist")
        self._values[name] = value


_DEPRECATED = {"inline_inbuilt_nn_modules": "torch._dynamo.config.inline_inbuilt_nn_modules is deprecated and does "
               "not do anything, inline_inbuilt_nn_modules is always True. It will be removed in a future version "
               "of PyTorch."}
_DEFAULTS["inline_inbuilt_nn_modules"] = True


config = _Config()


def reset():
    """Forget compiled code (there is none)."""


def disable(fn=None, recursive=True, *, reason=None):
    """Run fn without the tracer: here, fn itself (usable as @disable and @disable())."""
    return fn if fn is not None else (lambda f: f)


def is_compiling():
    return False


def mark_dynamic(t, index, *, min=None, max=None, specialize_on=None):
    """A hint for the tracer that a dim's size varies (nothing to do without one)."""


def maybe_mark_dynamic(t, index):
    """As mark_dynamic."""


def mark_static(t, index=None):
    """A hint for the tracer that a dim's size is fixed (nothing to do without one)."""


def allow_in_graph(fn):
    return fn


def graph_break():
    """Where the tracer would cut its graph: nothing to cut here."""
