"""torch.nn.attention: which kernel scaled_dot_product_attention may run.

    with sdpa_kernel(SDPBackend.MATH): ...                  # only the composed (math) path
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH], set_priority=True): ...

sdpa_kernel enables the backends named and disables the others, restoring the switches on exit (the switches:
ops/_sdp_backends.py; torch.backends.cuda reads and sets them one by one). On a CPU, as in torch, FLASH_ATTENTION
(torch's fused CPU kernel) and MATH are the ones that choose anything; with neither usable the call raises.
"""
import contextlib

from ...backends.cuda import SDPAParams, can_use_efficient_attention, can_use_flash_attention  # noqa: F401
from ...ops import _sdp_backends
from ...ops._sdp_backends import SDPBackend

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

# torch's switch for warnings about unfused kernels behind its attention-bias subclasses (which microtorch
# does not have): kept so that code setting it runs
WARN_FOR_UNFUSED_KERNELS = False

# the switches in the order torch lists the enabled ones
_SWITCHES = (SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION,
             SDPBackend.MATH, SDPBackend.OVERRIDEABLE)


def _cur_sdpa_kernel_backends(with_priority=False):
    """the enabled backends, in torch's listing order or, with_priority, most preferred first"""
    enabled = [b for b in _SWITCHES if _sdp_backends.is_enabled(b)]
    if with_priority:
        order = _sdp_backends.priority_order()
        enabled.sort(key=lambda b: order.index(int(b)))
    return enabled


def _sdpa_kernel(backends, set_priority=False):
    """enable exactly `backends`; with set_priority, put them first in the priority order, in the order given"""
    for backend in _SWITCHES:
        _sdp_backends.set_enabled(backend, backend in backends)
    if set_priority:
        order = [int(b) for b in backends]
        order += [b for b in _sdp_backends.priority_order() if b not in order]
        _sdp_backends.set_priority_order(order)


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Within the block, scaled_dot_product_attention may use only `backends` (one SDPBackend or a list);
    with set_priority=True the list's order is also their priority (which a CPU, like torch's, does not consult).
    On exit the switches (and the priority order) are as before, whatever happened inside."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError(f"Backend must be an instance of SDPBackend or a list of SDPBackend instances, got "
                             f"{type(backends).__name__}")
    backends = list(dict.fromkeys([backends] if isinstance(backends, SDPBackend) else backends))
    previous = _cur_sdpa_kernel_backends(with_priority=set_priority)
    try:
        _sdpa_kernel(backends, set_priority)
        yield {}
    finally:
        _sdpa_kernel(previous, set_priority)
