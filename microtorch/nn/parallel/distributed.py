"""DistributedDataParallel for a process group of one process (see microtorch.distributed).

torch's DDP runs a copy of the model in every process and averages the gradients over them during backward.
With one process the average is the process's own gradient, so the wrapped module trains exactly as it would
unwrapped; what DDP adds is what a student meets: `.module`, the 'module.' prefix of state_dict keys,
`no_sync()` and `require_backward_grad_sync` for gradient accumulation, and torch's errors (no process group,
device_ids on a CPU module, a module with nothing to train, a parameter that got no gradient)."""
import warnings
from contextlib import contextmanager

from ...autograd import grad_mode
from ..modules.module import Module
from ..parameter import UninitializedParameter
from ._reducer import Reducer


def _default_group():
    from ...distributed._group import resolve
    return resolve(None)  # (before init_process_group: torch's ValueError)


def _check_devices(params, device_ids, output_device):
    if device_ids is not None and len(device_ids) > 1:
        raise ValueError("device_ids can only be None or contain a single element. (DistributedDataParallel: "
                         "for a CPU module leave device_ids out)")
    if device_ids or output_device:
        devices = {p.device for p in params}
        raise ValueError(f"DistributedDataParallel device_ids and output_device arguments only work with "
                         f"single-device/multiple-device GPU modules or CPU modules, but got device_ids {device_ids}, "
                         f"output_device {output_device}, and module parameters {devices}. (microtorch runs on the "
                         "CPU: leave device_ids and output_device out)")


def _trainable(module, ignored):
    named = [(n, p) for n, p in module.named_parameters() if n not in ignored]
    if not any(p.requires_grad for _, p in named):
        raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter that "
                           "requires a gradient. (Use the module unwrapped, or unfreeze a parameter first.)")
    for _, p in named:
        if isinstance(p, UninitializedParameter):
            raise RuntimeError("Modules with uninitialized parameters can't be used with `DistributedDataParallel`. "
                               "Run a dummy forward pass to correctly initialize the modules")
    return named


def _warn_deprecated(broadcast_buffers, forward_sync_buffers, check_reduction):
    """torch 2.13's FutureWarnings for the arguments it is retiring (with one process buffers need no syncing)."""
    if broadcast_buffers is not None and forward_sync_buffers is not None:
        warnings.warn("Both `broadcast_buffers` and `forward_sync_buffers` were specified. `broadcast_buffers` is "
                      "deprecated and its value is ignored when `forward_sync_buffers` is provided.", FutureWarning,
                      stacklevel=3)
    elif broadcast_buffers is not None:
        warnings.warn("`broadcast_buffers` is deprecated. Use `forward_sync_buffers` instead.", FutureWarning,
                      stacklevel=3)
    if check_reduction:
        warnings.warn("The `check_reduction` argument in `DistributedDataParallel` module is deprecated. Please "
                      "avoid using it.", FutureWarning, stacklevel=3)


class DistributedDataParallel(Module):
    """Wraps `module` for data-parallel training over the default process group (one process here).

    forward calls the module. Each forward that will sync (grad enabled, require_backward_grad_sync True) opens
    an iteration that the backward pass closes once every trainable parameter got its gradient; the gradients
    themselves are the module's own, as the average over one process is."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=None, init_sync=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, delay_all_reduce_named_params=None,
                 param_to_hook_all_reduce=None, mixed_precision=None, device_mesh=None,
                 skip_all_reduce_unused_params=False, bucket_cap_mb_list=None, batched_grad_copy=False,
                 forward_sync_buffers=None):
        super().__init__()
        self.process_group = _default_group() if process_group is None else process_group
        self.parameters_to_ignore = set(getattr(module, "_ddp_params_and_buffers_to_ignore", ()))
        named = _trainable(module, self.parameters_to_ignore)
        _check_devices([p for _, p in named], device_ids, output_device)
        self.device_ids = self.output_device = None  # (torch's values for a CPU module)
        self.device_type, self.device, self.is_multi_device_module = "cpu", named[0][1].device, False
        self.dim, self.module, self.mixed_precision = dim, module, mixed_precision
        _warn_deprecated(broadcast_buffers, forward_sync_buffers, check_reduction)
        self.forward_sync_buffers = forward_sync_buffers if forward_sync_buffers is not None else \
            broadcast_buffers if broadcast_buffers is not None else True
        self.find_unused_parameters, self.gradient_as_bucket_view = find_unused_parameters, gradient_as_bucket_view
        self.require_backward_grad_sync = self.require_forward_param_sync = True
        self.static_graph = static_graph
        self.broadcast_bucket_size, self.bucket_bytes_cap = 250 * 1024 * 1024, 25 * 1024 * 1024
        # (a static graph lets torch learn the unused parameters in the first iteration: it counts them as found)
        self._reducer = Reducer([(n, p) for n, p in named if p.requires_grad], find_unused_parameters or static_graph)

    def forward(self, *inputs, **kwargs):
        sync = grad_mode.is_grad_enabled()
        if sync:  # torch checks that the last iteration finished before any forward that records a graph
            self._reducer.ensure_prior_reduction_finished()
        output = self.module(*inputs, **kwargs)
        self.require_forward_param_sync = sync and self.require_backward_grad_sync
        if self.require_forward_param_sync:
            self._reducer.prepare_for_backward()
        return output

    @contextmanager
    def no_sync(self):
        """Inside, forward passes do not sync: their backward passes only accumulate gradients (the next pass
        outside syncs the sum). With one process the gradients are the same either way."""
        before = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = before

    def _set_static_graph(self):
        self.static_graph = self._reducer.find_unused_parameters = True
