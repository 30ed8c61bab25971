"""Adam and AdamW (Kingma & Ba; Loshchilov & Hutter), with amsgrad.

`_update` writes the step in tensor ops under no_grad, as a student would: the in-place ones (`add_`, `mul_`)
bump the versions torch's do, and numpy stays quiet on inf and nan because every op keeps it quiet.
"""
import math

from ..autograd.grad_mode import no_grad
from ..ops import maximum
from ..ops.elementwise import view_as_real
from .optimizer import Optimizer, _buffer, _check_common, _grad, _step_tensor, _zero_step


class Adam(Optimizer):
    """m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;  p -= lr/(1-b1^t) * m / (sqrt(v/(1-b2^t)) + eps).
    weight_decay adds wd * p to g (Adam) or shrinks p by (1 - lr * wd) first (AdamW, decoupled)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        _check_common(lr, weight_decay, differentiable, fused)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        for i in range(2):
            if not 0.0 <= betas[i] < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure(closure)
        with no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        self._update(p, group)
        return loss

    def _update(self, p, group):
        lr, (beta1, beta2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
        grad = _grad(p, group["maximize"])
        state = self.state[p]
        if not state:
            state["step"] = _zero_step()
            state["exp_avg"], state["exp_avg_sq"] = _buffer(p), _buffer(p)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = _buffer(p)
        step = _step_tensor(state)
        m, v = state["exp_avg"], state["exp_avg_sq"]
        if p.is_complex():  # (torch steps a complex parameter as pairs of reals: each part has its own moments)
            p, grad, m, v = (view_as_real(t) for t in (p, grad, m, v))
            if group["amsgrad"]:
                state = dict(state, max_exp_avg_sq=view_as_real(state["max_exp_avg_sq"]))
        if wd != 0:
            if group["decoupled_weight_decay"]:
                p.mul_(1 - lr * wd)
            else:
                grad = grad.add(p, alpha=wd)
        m.lerp_(grad, 1 - beta1)
        v.mul_(beta2).addcmul_(grad, grad.conj(), value=1 - beta2)
        if group["amsgrad"]:
            v = state["max_exp_avg_sq"].copy_(maximum(state["max_exp_avg_sq"], v))
        denom = (v.sqrt() / math.sqrt(1 - beta2 ** step)).add_(eps)
        p.addcdiv_(m, denom, value=-lr / (1 - beta1 ** step))


class AdamW(Adam):
    """Adam with decoupled weight decay: p *= 1 - lr * weight_decay before the Adam step."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
