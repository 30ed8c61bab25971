"""microtorch.autograd: Function, backward, grad, grad modes, hooks, anomaly mode, gradcheck.

The core (Function, ctx, Node, SavedTensor, views) is imported first: the ops, which the
engine needs, are built on it and load while the engine is imported.
"""
from . import anomaly_mode, grad_mode  # noqa: F401
from .function import Function, FunctionCtx, once_differentiable  # noqa: F401
from .node import Node  # noqa: F401
from . import engine, graph  # noqa: F401  (after the core: importing the engine loads the ops)
from .anomaly_mode import detect_anomaly, set_detect_anomaly  # noqa: F401
from .engine import backward, grad  # noqa: F401
from .grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled  # noqa: F401
from .variable import Variable  # noqa: F401
from . import forward_ad, functional  # noqa: F401
from .gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: F401
from ..ops._checks import guard_namespace as _guard_namespace  # noqa: E402
_guard_namespace(globals(), ["backward", "grad", "gradcheck", "gradgradcheck"], {"tensors": "tensor_or_tensors"},
                 eager=True)  # torch's TypeError for an argument of the wrong type (ops/_checks.py)
import sys as _sys  # noqa: E402
# the checked gradcheck is the one everywhere, as torch has one object under both names
_sys.modules[__name__ + ".gradcheck"].gradcheck = gradcheck
_sys.modules[__name__ + ".gradcheck"].gradgradcheck = gradgradcheck
from ._settings import NestedIOFunction, enforce_grad_layout_policy, set_multithreading_enabled  # noqa: F401,E501
from . import profiler  # noqa: F401,E402  (torch.autograd.profiler: records only inside its `with` block)
