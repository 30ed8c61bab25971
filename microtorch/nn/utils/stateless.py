"""torch.nn.utils.stateless: the module's call with other parameters, before torch.func had it. torch 2 keeps the
name with a FutureWarning; it is `microtorch.func.functional_call`."""
from ..._user_line import warn_at_user_line

__all__ = ["functional_call"]


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """module(*args, **kwargs) with these parameters and buffers in place of its own (func.functional_call)."""
    warn_at_user_line("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be "
                      "removed in a future version of PyTorch. Please use `torch.func.functional_call` instead which "
                      "is a drop-in replacement.", FutureWarning)
    from ...func import functional_call as call
    return call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)
