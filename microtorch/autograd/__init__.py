"""microtorch.autograd: Function, backward, grad, grad modes, hooks, anomaly mode, gradcheck."""
from . import anomaly_mode, grad_mode, graph  # noqa: F401
from .anomaly_mode import detect_anomaly, set_detect_anomaly  # noqa: F401
from .engine import backward, grad  # noqa: F401
from .function import Function, FunctionCtx, once_differentiable  # noqa: F401
from .grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled  # noqa: F401
from .graph import Node  # noqa: F401
from .variable import Variable  # noqa: F401
from ._settings import NestedIOFunction, enforce_grad_layout_policy, set_multithreading_enabled  # noqa: F401,E501


def __getattr__(name):
    # gradcheck, forward_ad and functional import the rest of the package: load them lazily
    import importlib
    if name in ("gradcheck", "gradgradcheck", "GradcheckError"):
        mod = importlib.import_module(".gradcheck", __name__)
        value = getattr(mod, name)
        globals()[name] = value  # importing the submodule bound `gradcheck` to it; the function wins, as in torch
        return value
    if name in ("forward_ad", "functional"):
        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module 'microtorch.autograd' has no attribute {name!r}")
