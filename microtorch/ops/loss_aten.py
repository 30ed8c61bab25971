"""The losses and distances of the top-level torch namespace (torch.kl_div, torch.cosine_embedding_loss...).

They are the functions nn.functional calls underneath, with ATen's signatures: `reduction` is an int
(0 none, 1 mean, 2 sum; another int means none, as in torch), the legacy size_average/reduce are gone,
and poisson_nll_loss takes all its options positionally. The math is nn.functional's (ops/loss.py)."""
import warnings

import numpy as np

from .._dtype import result_type
from .._tensor import Tensor
from . import loss
from ._checks import _is_int, guard
from ._op import broadcast_error
from .inplace import _type_name
from .distance import cdist  # noqa: F401  (torch.cdist)
from .nn import BinaryCrossEntropyWithLogits

_NAMES = {1: "mean", 2: "sum"}


def _reduction(reduction, op):
    if not _is_int(reduction):
        raise TypeError(f"{op}(): argument 'reduction' must be int, not {type(reduction).__name__}; 0 (none), "
                        "1 (mean) or 2 (sum)")
    return _NAMES.get(int(reduction), "none")


def _tensors(op, names, *tensors, real=False, no_bool=False):
    """torch's checks before the math: Tensors (not numbers or lists), shapes that broadcast, and dtypes the
    op has a kernel for."""
    for i, (name, t) in enumerate(zip(names, tensors)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}(): argument '{name}' (position {i + 1}) must be Tensor, not {type(t).__name__}")
    try:
        np.broadcast_shapes(*[tuple(t.shape) for t in tensors])
    except ValueError as e:
        raise broadcast_error(op, e, *tensors) from None
    for t in tensors:
        if real and t.dtype.is_complex:
            raise RuntimeError(f"{op}: Complex inputs not supported.")
        if no_bool and t.dtype.name == "bool":
            raise RuntimeError(f"{op}(): Subtraction, the `-` operator, with a bool tensor is not supported; "
                               "convert it with .float()")


# torch's Python bindings of these ATen ops default to reduction 0 (none), whatever ATen's schema says (Mean)
def kl_div(input, target, reduction=0, *, log_target=False):
    """sum target (log target - input), input holding log-probabilities"""
    how = _reduction(reduction, "kl_div")
    _tensors("kl_div", ("input", "target"), input, target, real=True)
    if not (input.dtype.is_floating_point and target.dtype.is_floating_point):
        raise RuntimeError("kl_div: Integral inputs not supported.")
    with warnings.catch_warnings():   # nn.functional's warning about 'mean' is nn.functional's, not ATen's
        warnings.simplefilter("ignore")
        return loss.kl_div(input, target, reduction=how, log_target=log_target)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=0):
    """-(pos_weight y log sigmoid(x) + (1 - y) log(1 - sigmoid(x))) weight"""
    op = "binary_cross_entropy_with_logits"
    how = _reduction(reduction, op)
    if isinstance(input, Tensor) and input.dtype.is_complex:   # torch looks for a kernel first
        raise NotImplementedError(f'"{op}" not implemented for {input.dtype}: the logits must be real')
    _tensors(op, ("input", "target"), input, target, no_bool=True)
    if not target.dtype.is_floating_point:
        raise RuntimeError(f"{op}(): result type Float can't be cast to the desired output type {target.dtype}; "
                           "the target holds probabilities: convert it with .float()")
    return BinaryCrossEntropyWithLogits.apply(input, target, weight, pos_weight, reduction=how)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    """1 - cos(x1, x2) where target == 1, max(0, cos(x1, x2) - margin) where target == -1"""
    how = _reduction(reduction, "cosine_embedding_loss")
    return loss.cosine_embedding_loss(input1, input2, target, margin, reduction=how)


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    """input where target == 1, max(0, margin - input) where target == -1"""
    how = _reduction(reduction, "hinge_embedding_loss")
    _tensors("hinge_embedding_loss", ("input", "target"), input, target, no_bool=True)
    return loss.hinge_embedding_loss(input, target, margin, reduction=how)


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    """max(0, -target (input1 - input2) + margin)"""
    how = _reduction(reduction, "margin_ranking_loss")   # (ATen broadcasts: no check of the dims, unlike F's)
    return loss._reduced_loss((-target * (input1 - input2) + margin).clamp(min=0), how, "margin_ranking_loss")


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, reduction=0):
    """max(0, margin + d(a, p) - d(a, n)), d the p-norm distance"""
    how = _reduction(reduction, "triplet_margin_loss")
    return loss.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction=how)


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    """exp(input) - target input (log_input), or input - target log(input + eps)"""
    how = _reduction(reduction, "poisson_nll_loss")
    return loss.poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=how)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p over the last dim"""
    _tensors("pairwise_distance", ("x1", "x2"), x1, x2, no_bool=True)
    return loss.pairwise_distance(x1, x2, p, eps, keepdim)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum(x1 x2) / (max(||x1||, eps) max(||x2||, eps)) along dim, after broadcasting x1 with x2"""
    _tensors("cosine_similarity", ("x1", "x2"), x1, x2)
    common = result_type(x1, x2)
    if not common.is_floating_point:
        raise RuntimeError(f"cosine_similarity(): expected common dtype to be floating point, yet common dtype is "
                           f"{_type_name(np.dtype(common.np))}; convert the inputs with .float()")
    shape = np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
    nd = max(len(shape), 1)
    if not -nd <= dim < nd:
        raise IndexError(f"cosine_similarity(): Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], "
                         f"but got {dim})")
    return loss.cosine_similarity(x1.to(common).expand(*shape), x2.to(common).expand(*shape), dim, eps)


for _name in ("kl_div", "binary_cross_entropy_with_logits", "cosine_embedding_loss", "hinge_embedding_loss",
              "margin_ranking_loss", "triplet_margin_loss", "poisson_nll_loss", "pairwise_distance",
              "cosine_similarity"):   # a wrong type: torch's TypeError
    globals()[_name] = guard(globals()[_name], op=_name, overrides={"reduction": "int"})
