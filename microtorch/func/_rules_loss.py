"""Batching rules of the pointwise losses' backward ops (ops/loss_backward.py) and of cosine_similarity's clamped
norms (elementwise). Each backward op is elementwise in its tensors,
but its 'mean' divides by the element count of one example, where run on the whole batch it would divide by the
batch's: the rule runs the op with 'sum' and divides by an example's count after."""
import math

from ..ops import loss as ls, loss_backward as lb
from ..ops.elementwise import DivScalar
from ._batching import register, unwrap, wrap
from ._rules import elementwise, lined_up

register(ls.ClampedClone)(elementwise)  # (cosine_similarity's clamped norms)


@register(lb.MseLossBackward, lb.SmoothL1LossBackward, lb.HuberLossBackward, lb.SoftMarginLossBackward,
          lb.BinaryCrossEntropyBackward)
def loss_backward(cls, args, kwargs, level):
    phys = lined_up(args, level)
    reduction = kwargs.get("reduction", "mean")
    out = cls.apply(*phys, **dict(kwargs, reduction="sum" if reduction == "mean" else reduction))
    if reduction == "mean":
        x, batched = unwrap(args[1], level)  # (the loss's input: its count is torch's)
        out = DivScalar.apply(out, math.prod(x.shape[1:] if batched else x.shape))
    return wrap(out, level)
