"""microtorch.func: function transforms (torch.func).

grad, grad_and_value, vjp (reverse mode), jvp, linearize (forward mode), jacrev, jacfwd,
hessian (Jacobians as a vmap over a basis), vmap (batching), functional_call (a Module as a
function of its parameters). They compose to any depth: grad(grad(f)), vmap(grad(f)),
jacfwd(jacrev(f)).
"""
from ..autograd import extension, forward_ad
from . import _rules, _rules_api, _rules_distance  # noqa: F401  (register the batching rules)
from . import _rules_nn  # noqa: F401  (batching rules of ops/norm_more.py)
from . import _rules_linalg_more  # noqa: F401  (batching rules of ops/linalg_more.py)
from . import _rules_sampling  # noqa: F401  (the backward ops of pooling, upsampling, grid_sample)
from . import _rules_spatial  # noqa: F401  (batching rules of the spatial ops)
from . import _rules_index  # noqa: F401  (batching rules of index_more, order, scan, misc_more)
from . import _rules_linalg  # noqa: F401  (batching rules of the decompositions and solves)
from . import _rules_loss  # noqa: F401  (batching rules of the losses' backward ops)
from . import _rules_complex  # noqa: F401  (batching rules of complex and polar)
from . import _batching, _transforms
from ._transforms import (_batched_grad, functional_call, grad, grad_and_value, hessian, jacfwd, jacrev,  # noqa: F401
                          jvp, linearize, vjp)
from ._vmap import vmap  # noqa: F401
from ._stack import stack_module_state  # noqa: F401
from ._extras import debug_unwrap, functionalize, rearrange, replace_all_batch_norm_modules_  # noqa: F401


class _Transforms:
    """What func gives autograd through its extension point (autograd/extension.py)."""

    vmap = staticmethod(vmap)
    jacrev = staticmethod(jacrev)
    jacfwd = staticmethod(jacfwd)
    batched_grad = staticmethod(_batched_grad)
    batched_inplace = staticmethod(_batching.batched_inplace)
    made_leaf = staticmethod(_transforms.made_leaf)
    requires_grad_called = staticmethod(_transforms.requires_grad_called)

    @staticmethod
    def make_dual(tensor, tangent, level):
        """forward_ad.make_dual for tensors batched by vmap. A dual always lives below the
        batching, on the tensors that hold the batch: ops on a batched dual are batched first,
        and their jvp rules then see ordinary tensors."""
        top = max(_batching._level_of(tensor), _batching._level_of(tangent))
        B = _batching._batch_size((tensor, tangent), top)
        inner = forward_ad.make_dual(_batching.remove_batch(tensor, top, B), _batching.remove_batch(tangent, top, B),
                                     level=level)
        return _batching.wrap(inner, top)

    @staticmethod
    def unpack_dual(tensor, level):
        d = tensor._data
        primal, tangent = forward_ad.unpack_dual(_batching.live_value(tensor), level=level)
        return forward_ad.UnpackedDualTensor(_batching.wrap(primal, d.level),
                                             None if tangent is None else _batching.wrap(tangent, d.level))


extension.register(_Transforms())

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "linearize", "jacrev", "jacfwd", "hessian", "vmap",
           "functional_call", "stack_module_state", "debug_unwrap", "functionalize", "rearrange",
           "replace_all_batch_norm_modules_"]


from ..ops._checks import guard_namespace as _guard_namespace  # noqa: E402
_guard_namespace(globals(), __all__, eager=True)  # torch's TypeError for a bad argument (ops/_checks.py)

from .._api_errors import clean_namespace as _clean_namespace  # noqa: E402
_clean_namespace(globals(), ["debug_unwrap", "rearrange", "replace_all_batch_norm_modules_", "functionalize"])
