"""The losses and distances of the top-level torch namespace (torch.kl_div, torch.cosine_embedding_loss...).

They are the functions nn.functional calls underneath, with ATen's signatures: `reduction` is an int
(0 none, 1 mean, 2 sum; another int means none, as in torch; torch's Python bindings default to 0),
the legacy size_average/reduce are gone, and poisson_nll_loss takes all its options positionally.
The math is nn.functional's (ops/loss.py); the checks are ATen's, done first."""
import numbers
import warnings

import numpy as np

from .._dtype import result_type
from .._creation import zeros_like
from .._tensor import Tensor
from . import loss
from ._checks import _is_int, guard
from ._op import broadcast_error
from .distance import cdist  # noqa: F401  (torch.cdist)
from .inplace import _type_name
from .elementwise import where
from .nn import BinaryCrossEntropyWithLogits
from .nn_more import pdist as _pdist

_NAMES = {1: "mean", 2: "sum"}


def _check(op, tensors, numbers_=(), bools=(), no_bool=(), broadcast=True):
    """torch's checks before the math: `tensors` {name: value} in position order are Tensors (not numbers
    or lists) whose shapes broadcast, `numbers_` {name: value} real numbers, `bools` {name: value} bools,
    and the tensors named in no_bool are not bool (the op subtracts them)."""
    for i, (name, t) in enumerate(tensors.items()):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}(): argument '{name}' (position {i + 1}) must be Tensor, not {type(t).__name__}")
    for name, v in dict(numbers_).items():
        if not isinstance(v, numbers.Real) or isinstance(v, bool):
            raise TypeError(f"{op}(): argument '{name}' must be float, not {type(v).__name__}")
    for name, v in dict(bools).items():
        if not isinstance(v, (bool, np.bool_)):
            raise TypeError(f"{op}(): argument '{name}' must be bool, not {type(v).__name__}")
    ts = list(tensors.values())
    if broadcast:
        try:
            np.broadcast_shapes(*[tuple(t.shape) for t in ts])
        except ValueError as e:
            raise broadcast_error(op, e, *ts) from None
    for name in no_bool:
        if tensors[name].dtype.name == "bool":
            raise RuntimeError(f"{op}(): Subtraction, the `-` operator, with a bool tensor is not supported; "
                               f"convert {name} with .float()")


def _reduction(reduction, op):
    if not _is_int(reduction):
        raise TypeError(f"{op}(): argument 'reduction' must be int, not {type(reduction).__name__}; 0 (none), "
                        "1 (mean) or 2 (sum)")
    return _NAMES.get(int(reduction), "none")


def kl_div(input, target, reduction=0, *, log_target=False):
    """sum target (log target - input), input holding log-probabilities"""
    how = _reduction(reduction, "kl_div")
    _check("kl_div", {"input": input, "target": target}, bools={"log_target": log_target})
    if input.dtype.is_complex or target.dtype.is_complex:
        raise RuntimeError("kl_div: Complex inputs not supported.")
    if not (input.dtype.is_floating_point and target.dtype.is_floating_point):
        raise RuntimeError("kl_div: Integral inputs not supported.")
    with warnings.catch_warnings():   # nn.functional's warning about 'mean' is nn.functional's, not ATen's
        warnings.simplefilter("ignore")
        return loss.kl_div(input, target, reduction=how, log_target=log_target)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=0):
    """-(pos_weight y log sigmoid(x) + (1 - y) log(1 - sigmoid(x))) weight"""
    op = "binary_cross_entropy_with_logits"
    how = _reduction(reduction, op)
    if isinstance(input, Tensor) and not input.dtype.is_floating_point:   # torch looks for a kernel first
        raise NotImplementedError(f'"{op}" not implemented for {_type_name(input._data.dtype)}: the logits must be '
                                  'real floating point numbers (.float())')
    extra = {k: v for k, v in (("weight", weight), ("pos_weight", pos_weight)) if v is not None}
    _check(op, {"input": input, "target": target, **extra}, no_bool=("input",))
    shape = np.broadcast_shapes(*[tuple(t.shape) for t in (input, target, *extra.values())])
    if shape != tuple(target.shape):   # torch writes the loss into a tensor shaped like the target
        raise RuntimeError(f"{op}(): output with shape {list(target.shape)} doesn't match the broadcast shape "
                           f"{list(shape)}; give the target the input's shape")
    if not (target.dtype.is_floating_point or target.dtype.is_complex):
        raise RuntimeError(f"{op}(): result type Float can't be cast to the desired output type "
                           f"{_type_name(target._data.dtype)}; the target holds probabilities: use .float()")
    if target.dtype.is_complex:   # torch computes the formula in complex numbers then
        return _complex_bce_with_logits(input, target, weight, pos_weight, how)
    return BinaryCrossEntropyWithLogits.apply(input, target, weight, pos_weight, reduction=how)


def _complex_bce_with_logits(x, y, weight, pos_weight, how):
    """(1 - y) x + (1 + (pos_weight - 1) y) softplus(-x), times weight, for a complex target y."""
    if x.requires_grad:
        raise RuntimeError("binary_cross_entropy_with_logits does not support automatic differentiation for outputs "
                           "with complex dtype; give it a real target")
    top = (-x).clamp(min=0)   # softplus(-x) = top + log(exp(-top) + exp(-x - top)), as torch writes it
    softplus = top + ((-top).exp() + (-x - top).exp()).log()
    out = (1 - y) * x + (softplus if pos_weight is None else ((pos_weight - 1) * y + 1) * softplus)
    return loss._reduced_loss(out if weight is None else out * weight, how, "binary_cross_entropy_with_logits")


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    """1 - cos(x1, x2) where target == 1, max(0, cos(x1, x2) - margin) where target == -1"""
    op = "cosine_embedding_loss"
    how = _reduction(reduction, op)
    _check(op, {"input1": input1, "input2": input2, "target": target}, {"margin": margin}, broadcast=False)
    if target.ndim > 1:
        raise RuntimeError(f"{op}(): 0D or 1D target tensor expected, multi-target not supported (target shape "
                           f"{list(target.shape)})")
    _check(op, {"input1": input1, "input2": input2})
    return loss.cosine_embedding_loss(input1, input2, target, margin, reduction=how)


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    """input where target == 1, max(0, margin - input) where target == -1"""
    how = _reduction(reduction, "hinge_embedding_loss")
    if isinstance(input, Tensor) and input.dtype.is_complex:
        raise NotImplementedError("hinge_embedding_loss(): clamp is not supported for complex types")
    _check("hinge_embedding_loss", {"input": input, "target": target}, {"margin": margin}, no_bool=("input",))
    x = input if input.dtype.is_floating_point else input.double()   # (an integer input: an integer loss, below)
    zeros = zeros_like(x)   # (not x * 0: an infinite input must give inf, not nan)
    out = where(target != 1, (margin - x).clamp(min=0), zeros) + where(target != -1, x, zeros)
    out = loss._reduced_loss(out, how, "hinge_embedding_loss")
    return out if x is input else out.to(input.dtype)


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    """max(0, -target (input1 - input2) + margin)"""
    op = "margin_ranking_loss"
    how = _reduction(reduction, op)   # (ATen broadcasts: no check of the dims, unlike F's)
    _check(op, {"input1": input1, "input2": input2, "target": target}, {"margin": margin},
           no_bool=("input1", "input2"))
    if any(t.dtype.is_complex for t in (input1, input2, target)):
        raise NotImplementedError(f"{op}(): clamp is not supported for complex types")
    return loss._reduced_loss((-target * (input1 - input2) + margin).clamp(min=0), how, op)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, reduction=0):
    """max(0, margin + d(a, p) - d(a, n)), d the p-norm distance"""
    op = "triplet_margin_loss"
    how = _reduction(reduction, op)
    tensors = {"anchor": anchor, "positive": positive, "negative": negative}
    _check(op, tensors, {"margin": margin, "p": p, "eps": eps}, {"swap": swap}, broadcast=False)
    if not (anchor.ndim == positive.ndim == negative.ndim):
        raise RuntimeError(f"{op}(): The anchor, positive, and negative tensors are expected to have the same "
                           f"number of dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, "
                           f"and negative {negative.ndim}D inputs")
    _check(op, tensors, no_bool=("anchor", "positive", "negative"))
    return loss.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction=how)


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    """exp(input) - target input (log_input), or input - target log(input + eps)"""
    op = "poisson_nll_loss"
    how = _reduction(reduction, op)
    _check(op, {"input": input, "target": target}, {"eps": eps}, {"log_input": log_input, "full": full})
    return loss.poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=how)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p over the last dim"""
    _check("pairwise_distance", {"x1": x1, "x2": x2}, {"p": p, "eps": eps}, {"keepdim": keepdim},
           no_bool=("x1", "x2"))
    return loss.pairwise_distance(x1, x2, p, eps, keepdim)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum(x1 x2) / (max(||x1||, eps) max(||x2||, eps)) along dim, after broadcasting x1 with x2"""
    _check("cosine_similarity", {"x1": x1, "x2": x2}, {"eps": eps})
    common = result_type(x1, x2)
    if not common.is_floating_point:
        raise RuntimeError(f"cosine_similarity(): expected common dtype to be floating point, yet common dtype is "
                           f"{_type_name(np.dtype(common.np))}; convert the inputs with .float()")
    shape = np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
    nd = max(len(shape), 1)
    if not _is_int(dim) or not -nd <= dim < nd:
        raise IndexError(f"cosine_similarity(): Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], "
                         f"but got {dim})")
    return loss.cosine_similarity(x1.to(common).expand(shape), x2.to(common).expand(shape), dim, eps)


for _name in ("kl_div", "binary_cross_entropy_with_logits", "cosine_embedding_loss", "hinge_embedding_loss",
              "margin_ranking_loss", "triplet_margin_loss", "poisson_nll_loss", "pairwise_distance",
              "cosine_similarity"):   # a wrong type: torch's TypeError
    globals()[_name] = guard(globals()[_name], op=_name, overrides={"reduction": "int"})
pdist = guard(_pdist, op="pdist", overrides={"p": "tensor_or_number"})   # torch.pdist is F.pdist (nn_more.py)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0, zero_infinity=False):
    """-log P(target | log_probs) summed over alignments (nn.functional's, loss_more.py), an int reduction"""
    from .loss_more import ctc_loss as _ctc_loss
    how = _reduction(reduction, "ctc_loss")
    _check("ctc_loss", {"log_probs": log_probs, "targets": targets}, {}, {"zero_infinity": zero_infinity},
           broadcast=False)
    for name, v in (("input_lengths", input_lengths), ("target_lengths", target_lengths)):
        if not (isinstance(v, Tensor) or isinstance(v, (list, tuple)) and all(_is_int(n) for n in v)):
            raise TypeError(f"ctc_loss(): argument '{name}' must be Tensor or tuple of ints, not {type(v).__name__}")
    if not _is_int(blank):
        raise TypeError(f"ctc_loss(): argument 'blank' must be int, not {type(blank).__name__}")
    return _ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, how, zero_infinity)


ctc_loss = guard(ctc_loss, op="ctc_loss", overrides={"reduction": "int"})
