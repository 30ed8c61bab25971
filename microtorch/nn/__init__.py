"""microtorch.nn: modules (layers, containers, losses), Parameter, functional, init, utils."""
from . import functional, init, utils  # noqa: F401
from .modules import (AvgPool1d, AvgPool2d, BatchNorm1d, BatchNorm2d, BCELoss, BCEWithLogitsLoss, Conv1d,  # noqa: F401
                      Conv2d, CrossEntropyLoss, DataParallel, Dropout, ELU, Embedding, Flatten, GELU, Identity, L1Loss, LayerNorm,
                      HuberLoss, LeakyReLU, Linear, LogSoftmax, MaxPool1d, MaxPool2d, Module, ModuleDict, ModuleList, MSELoss,
                      NLLLoss, ReLU, Sequential, SiLU, Sigmoid, SmoothL1Loss, Softmax, Softplus, Tanh, Unflatten)
from .parameter import Parameter  # noqa: F401
