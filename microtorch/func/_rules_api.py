"""Batching rules for the ops in microtorch/ops/loss.py (and other ops added for torch's API)."""
from ..ops import loss
from ._batching import register
from ._rules import pointwise_loss

register(loss.SmoothL1Loss, loss.HuberLoss)(pointwise_loss)
