"""DataParallel as torch runs it without GPUs: a wrapper that calls the module it holds."""
from .module import Module


class DataParallel(Module):
    """Holds `module` (state_dict keys gain the prefix 'module.') and runs it on the CPU.

    With GPUs torch splits each batch along `dim` across devices; here, as in torch on a machine
    without any, there is one device and the module runs on the whole batch."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = []  # torch's value when no accelerator is available

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)
