"""torch.autograd's remaining switches and its legacy NestedIOFunction.

The switches concern what microtorch does not have (threads per device, gradient strides): as on a
CPU-only torch they change nothing observable, and they are kept so that code using them runs.
"""
from .function import Function
from .grad_mode import _DecoratorContextManager

_flags = {"multithreading": True, "grad_layout_policy": True}


class set_multithreading_enabled(_DecoratorContextManager):
    """Multithreaded backward on (mode=True) or off. microtorch's backward always runs on the calling
    thread (torch does too when no accelerator is in use), so the flag is only recorded."""

    def __init__(self, mode):
        self.prev, self.mode = _flags["multithreading"], bool(mode)
        _flags["multithreading"] = self.mode

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _flags["multithreading"] = self.prev

    def clone(self):
        return type(self)(self.mode)


class enforce_grad_layout_policy(_DecoratorContextManager):
    """Whether accumulated gradients must have their parameter's strides. A microtorch gradient is
    always a fresh array of the parameter's shape, so the policy holds either way; the flag is recorded."""

    def __init__(self, enable=True):
        self.prev, self.enable = _flags["grad_layout_policy"], bool(enable)
        _flags["grad_layout_policy"] = self.enable

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _flags["grad_layout_policy"] = self.prev

    def clone(self):
        return type(self)(self.enable)


class NestedIOFunction(Function):
    """Kept for backward compatibility only, as in torch (subclasses define forward_extended and
    backward_extended). torch 2.x cannot run it: calling one fails there, and here, with AttributeError."""

    def __call__(self, *args):
        raise AttributeError("'super' object has no attribute '_do_forward': NestedIOFunction is a legacy API "
                             "that torch no longer runs. Write a Function with @staticmethod forward(ctx, ...) "
                             "and backward(ctx, ...), and call MyFunction.apply(...).")

    def forward_extended(self, *input):
        raise NotImplementedError

    def backward_extended(self, *grad_output):
        raise NotImplementedError
