"""torch.cuda as torch reports it on a machine without GPUs: nothing is available, seeding is a no-op.

Tutorials start with `device = "cuda" if torch.cuda.is_available() else "cpu"`; here that picks "cpu".
"""
from collections import OrderedDict

_NO_CUDA = ("Torch not compiled with CUDA enabled (microtorch runs on numpy, on the CPU: use "
            "device='cpu', or the `\"cuda\" if torch.cuda.is_available() else \"cpu\"` pattern)")


def is_available():
    return False


def device_count():
    return 0


def is_initialized():
    return False


def manual_seed(seed):
    """Ignored without GPUs, as in torch (seed the CPU with microtorch.manual_seed)."""


def manual_seed_all(seed):
    """Ignored without GPUs, as in torch."""


def synchronize(device=None):
    raise AssertionError(_NO_CUDA)


def current_device():
    raise AssertionError(_NO_CUDA)


def get_device_name(device=None):
    raise AssertionError(_NO_CUDA)


def is_bf16_supported(including_emulation=True):
    return False


def get_device_capability(device=None):
    raise AssertionError(_NO_CUDA)


def get_device_properties(device=None):
    raise AssertionError(_NO_CUDA)


def mem_get_info(device=None):
    raise AssertionError(_NO_CUDA)


def ipc_collect():
    raise AssertionError(_NO_CUDA)


def seed():
    """Ignored without GPUs, as in torch."""


def seed_all():
    """Ignored without GPUs, as in torch."""


# The memory counters of a CPU-only torch: nothing allocated, nothing to free (course code prints them)
def empty_cache():
    """Nothing cached to free."""


def memory_allocated(device=None):
    return 0


def max_memory_allocated(device=None):
    return 0


def memory_reserved(device=None):
    return 0


def max_memory_reserved(device=None):
    return 0


def memory_stats(device=None):
    return OrderedDict()


def _no_device_functions(name):
    """What torch's CPU build raises for the calls that reach its missing CUDA bindings: an AttributeError."""
    def refuse(*args, **kwargs):
        raise AttributeError(f"torch.cuda.{name}: this build has no CUDA (microtorch runs on numpy, on the CPU)")
    refuse.__name__ = name
    return refuse


set_device = _no_device_functions("set_device")
reset_peak_memory_stats = _no_device_functions("reset_peak_memory_stats")


class Event:
    """torch.cuda.Event (timing on the GPU): without CUDA, torch's class cannot be made, and neither can this."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        raise RuntimeError("Tried to instantiate dummy base class Event (microtorch has no GPU: time on the CPU with "
                           "time.perf_counter())")


class Stream:
    """torch.cuda.Stream: requires CUDA, as in torch."""

    def __init__(self, device=None, priority=0, **kwargs):
        raise RuntimeError("torch.cuda.Stream requires CUDA support (microtorch runs on numpy, on the CPU)")


from . import amp  # noqa: E402,F401  (torch.cuda.amp, the old spelling of torch.amp)
