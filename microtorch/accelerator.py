"""torch.accelerator: the current accelerator, if any. microtorch runs on the CPU, so there is none, and what
needs one raises torch's error for a machine without one (code that asks `is_available()` first runs as is)."""
import warnings

_NONE = ("Cannot access accelerator device when none is available. (microtorch runs on the CPU: guard the call "
         "with torch.accelerator.is_available())")


def is_available():
    return False


def current_accelerator(check_available=False):
    return None


def device_count():
    return 0


def _needs_one():
    raise RuntimeError(_NONE)


def synchronize(device=None, /):
    _needs_one()


def current_device_index():
    _needs_one()


def set_device_index(device, /):
    if device is None:
        raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:{device}")
    _needs_one()


def current_device_idx():
    warnings.warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    return current_device_index()


def set_device_idx(device, /):
    warnings.warn("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    return set_device_index(device)


def current_stream(device=None, /):
    _needs_one()


def empty_cache():
    _needs_one()


def empty_host_cache():
    _needs_one()


def _memory_query(name):
    """torch.accelerator.<name>(device_index=None): a memory figure of an accelerator, which there is not."""
    def query(device_index=None, /):
        _needs_one()
    query.__name__ = query.__qualname__ = name
    return query


memory_allocated, max_memory_allocated, memory_reserved, max_memory_reserved, memory_stats, get_memory_info, \
    reset_peak_memory_stats, reset_accumulated_memory_stats = map(_memory_query, (
        "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved", "memory_stats",
        "get_memory_info", "reset_peak_memory_stats", "reset_accumulated_memory_stats"))


def get_device_capability(device=None, /):
    _needs_one()


class device_index:
    """`with torch.accelerator.device_index(i):` runs its block on accelerator i; None: on whatever is current."""

    def __init__(self, device, /):
        self.idx = device

    def __enter__(self):
        if self.idx is not None:
            _needs_one()

    def __exit__(self, *exc):
        return False
