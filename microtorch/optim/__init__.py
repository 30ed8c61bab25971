"""microtorch.optim: SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Adamax and learning-rate schedulers
(optim.lr_scheduler)."""
from . import lr_scheduler  # noqa: F401
from .adam import Adam, AdamW  # noqa: F401
from .adaptive import Adadelta, Adagrad, Adamax, NAdam, RAdam  # noqa: F401
from .optimizer import Optimizer  # noqa: F401
from .rmsprop import RMSprop  # noqa: F401
from .sgd import SGD  # noqa: F401
