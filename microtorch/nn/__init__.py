"""microtorch.nn: modules (layers, containers, losses), Parameter, functional, init, utils."""
from . import functional, init, utils  # noqa: F401
from .modules import *  # noqa: F401,F403  (every layer, container and loss; see modules/__init__.py)
from .modules import __all__ as _modules
from .parameter import Parameter, UninitializedBuffer, UninitializedParameter  # noqa: F401

__all__ = sorted(_modules) + ["Parameter", "UninitializedBuffer", "UninitializedParameter", "functional", "init",
                              "utils"]

# nn2: nn.Buffer (a tensor marked to become a buffer when assigned to a Module)
from ._buffer import Buffer  # noqa: E402,F401
__all__ += ["Buffer"]

from . import attention  # noqa: E402,F401  (torch.nn.attention: sdpa_kernel and SDPBackend, reachable as in torch)

from . import parallel  # noqa: E402,F401  (torch.nn.parallel: DataParallel and DistributedDataParallel)
