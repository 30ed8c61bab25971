"""Muon (Keller Jordan, 2024): momentum SGD for 2-D weights whose update is orthogonalized (its singular
values pushed towards 1) by a few Newton-Schulz iterations.

torch runs the Newton-Schulz iterations in bfloat16 (fast on GPUs, and precise enough: only the direction
matters). numpy has no bfloat16, so here they run in float32 with every result rounded to bfloat16's 8
significant bits, as torch's kernels do (they accumulate in float32 and round once per op): the same
numbers as torch's.
"""
import math

import numpy as np

from .._tensor import Tensor, tensor
from .adaptive import _PerParameter
from .optimizer import _buffer

EPS = 1e-7
DEFAULT_A, DEFAULT_B, DEFAULT_C = 3.4445, -4.7750, 2.0315
DEFAULT_NS_STEPS = 5


class Muon(_PerParameter):
    """buf = momentum buf + (1-momentum) g;  u = NS(g + momentum (buf - g)) (Nesterov) or NS(buf);
    p *= 1 - lr wd;  p -= lr * sqrt(max(1, rows/cols)) * u  (adjust_lr_fn='match_rms_adamw': 0.2 sqrt(max dim))"""

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps=EPS, ns_steps=DEFAULT_NS_STEPS,
                 adjust_lr_fn=None):
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                                      ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps,
                                      adjust_lr_fn=adjust_lr_fn))
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a parameter with size: "
                                     f"{p.size()}; optimize biases and embeddings with e.g. AdamW")

    def _update(self, p, group):
        if p.is_complex():
            raise RuntimeError("Muon does not support complex parameters")
        grad, momentum, lr = p.grad, group["momentum"], group["lr"]
        state = self.state[p]
        if "momentum_buffer" not in state:
            state["momentum_buffer"] = _buffer(grad)
        buf = state["momentum_buffer"].lerp_(grad, 1 - momentum)
        update = grad.lerp(buf, momentum) if group["nesterov"] else buf
        update = _zeropower_via_newtonschulz(update, group["ns_coefficients"], group["ns_steps"], group["eps"])
        p.mul_(1 - lr * group["weight_decay"])
        p.add_(update, alpha=-_adjust_lr(lr, group["adjust_lr_fn"], p.shape))


def _zeropower_via_newtonschulz(grad: Tensor, ns_coefficients, ns_steps, eps):
    """X = G / |G|;  ns_steps times: A = X X^T, X = a X + (b A + c A A) X  (on the wide orientation)."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(grad.shape) != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    tall = grad.size(0) > grad.size(1)
    x = _bfloat16(grad.T if tall else grad)
    x = _bfloat16(x / _bfloat16(x.norm()).clamp(min=eps))
    for _ in range(ns_steps):
        gram = _bfloat16(x @ x.T)
        x = _bfloat16(a * x + _bfloat16(b * gram + c * (gram @ gram)) @ x)
    return x.T if tall else x


def _bfloat16(t):
    """t rounded to bfloat16 (float32's top 16 bits, to nearest even), kept in a float32 tensor."""
    bits = t.detach().numpy().astype(np.float32).view(np.uint32).astype(np.uint64)
    bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return tensor(bits.astype(np.uint32).view(np.float32))


def _adjust_lr(lr, adjust_lr_fn, shape):
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return lr * math.sqrt(max(1, rows / cols))
    if adjust_lr_fn == "match_rms_adamw":
        return lr * 0.2 * math.sqrt(max(rows, cols))
    return lr
