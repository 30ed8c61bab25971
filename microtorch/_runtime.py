"""The process-wide switches torch code sets at its start: threads, deterministic algorithms, float32 matmul
precision, and torch.compile. microtorch's results do not depend on them (its ops are deterministic and compute
in the dtype asked); they keep what is set and check it as torch does, so the code that sets them runs."""
import functools

_threads = {"interop": None}
_deterministic = {"mode": False, "warn_only": False}
_matmul_precision = ["highest"]


def _positive_int(value, op):
    if not isinstance(value, int) or isinstance(value, bool):
        raise RuntimeError(f"{op} expects an int, but got {type(value).__name__}")
    if value <= 0:
        raise RuntimeError(f"{op} expects a positive integer")
    if value >= 2 ** 31:  # (torch keeps it in a C int)
        raise ValueError(f"Overflow when unpacking long ({op}: {value} threads)")
    return value


def set_num_threads(int):
    """Threads for intra-op parallelism. Here numpy's BLAS does the parallel work and picks its own threads
    (set OPENBLAS_NUM_THREADS before Python starts to limit them); the number is kept for get_num_threads, and
    arange cuts its values where torch's threads would (ops/_range_kernels.py)."""
    from .ops._range_kernels import SET_THREADS
    SET_THREADS[0] = _positive_int(int, "set_num_threads")


def get_num_threads():
    """The number set, else torch's default: OMP_NUM_THREADS, or one thread per physical core."""
    from .ops._range_kernels import intraop_threads
    return intraop_threads()


def set_num_interop_threads(int):
    _threads["interop"] = _positive_int(int, "set_num_interop_threads")


def get_num_interop_threads():
    return _threads["interop"] or get_num_threads()


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Ask for deterministic algorithms only: every microtorch op already is one."""
    if not isinstance(mode, bool):
        raise TypeError(f"argument 'mode' (position 1) must be bool, not {type(mode).__name__}")
    _deterministic.update(mode=mode, warn_only=bool(warn_only))


def are_deterministic_algorithms_enabled():
    return _deterministic["mode"]


def is_deterministic_algorithms_warn_only_enabled():
    return _deterministic["warn_only"]


def set_float32_matmul_precision(precision):
    """"highest", "high" or "medium": how far torch may lower float32 products (TF32, bfloat16) on hardware that
    has such units. numpy has none: float32 products stay float32 whatever is set."""
    if not isinstance(precision, str):
        raise RuntimeError(f"set_float32_matmul_precision expects a str, but got {type(precision).__name__}")
    if precision not in ("highest", "high", "medium"):
        import warnings
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      "set_float32_matmul_precision call has no effect.", UserWarning, stacklevel=2)
        return
    _matmul_precision[0] = precision


def get_float32_matmul_precision():
    return _matmul_precision[0]


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None,
            disable=False):
    """torch.compile without a compiler: a module comes back wrapped as torch wraps it (an OptimizedModule whose
    state_dict keys start with `_orig_mod.`), a function as itself behind a wrapper; both compute exactly what the
    original computes, at its speed. Usable as @compile and @compile(mode=...)."""
    if model is None:
        return lambda fn: compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                  options=options, disable=disable)
    from .nn.modules.module import Module
    if isinstance(model, Module):
        from .nn.modules.optimized import OptimizedModule
        return OptimizedModule(model)
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided. (compile: give a "
                             "function or an nn.Module)")

    @functools.wraps(model)
    def compiled(*args, **kwargs):
        return model(*args, **kwargs)
    return compiled
