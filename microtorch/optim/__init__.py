"""microtorch.optim: SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Adamax, NAdam, RAdam, ASGD, Rprop,
LBFGS, Adafactor, Muon and learning-rate schedulers (optim.lr_scheduler)."""
from . import lr_scheduler  # noqa: F401
from . import swa_utils  # noqa: F401
from .adam import Adam, AdamW  # noqa: F401
from .adaptive import Adadelta, Adagrad, Adamax, NAdam, RAdam  # noqa: F401
from .optimizer import Optimizer  # noqa: F401
from .rmsprop import RMSprop  # noqa: F401
from .sgd import SGD  # noqa: F401
# optim (issue 13): the rest of torch.optim
from ._stateless import swap_in_optimizer_params_and_state  # noqa: F401
from .adafactor import Adafactor  # noqa: F401
from .asgd import ASGD  # noqa: F401
from .lbfgs import LBFGS  # noqa: F401
from .muon import Muon  # noqa: F401
from .rprop import Rprop  # noqa: F401

# torch's list, in its order, without SparseAdam (sparse gradients are out of scope)
__all__ = ["Adafactor", "Adadelta", "Adagrad", "Adam", "Adamax", "AdamW", "ASGD", "LBFGS", "lr_scheduler", "Muon",
           "NAdam", "Optimizer", "RAdam", "RMSprop", "Rprop", "SGD", "swap_in_optimizer_params_and_state", "swa_utils"]
