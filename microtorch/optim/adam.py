"""Adam and AdamW (Kingma & Ba; Loshchilov & Hutter), with amsgrad."""
import math

import numpy as np

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
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure(closure)
        for group in self.param_groups:
            lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
            wd, amsgrad = group["weight_decay"], group["amsgrad"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = _grad(p, group["maximize"])
                state = self.state[p]
                if not state:
                    state["step"] = _zero_step()
                    state["exp_avg"] = _buffer(p)
                    state["exp_avg_sq"] = _buffer(p)
                    if amsgrad:
                        state["max_exp_avg_sq"] = _buffer(p)
                step = _step_tensor(state)
                if wd != 0:
                    if group["decoupled_weight_decay"]:
                        p._data *= 1 - lr * wd
                    else:
                        grad = grad + wd * p._data
                m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
                m += (1 - beta1) * (grad - m)                 # m.lerp_(grad, 1 - beta1)
                v *= beta2
                v += (1 - beta2) * grad * grad
                step_size = lr / (1 - beta1 ** step)
                bias_correction2_sqrt = math.sqrt(1 - beta2 ** step)
                if amsgrad:
                    vmax = state["max_exp_avg_sq"]._data
                    np.maximum(vmax, v, out=vmax)
                    denom = np.sqrt(vmax) / bias_correction2_sqrt + eps
                else:
                    denom = np.sqrt(v) / bias_correction2_sqrt + eps
                p._data -= step_size * (m / denom)
                p._version_counter[0] += 1
        return loss


class AdamW(Adam):
    """Adam with decoupled weight decay: p *= 1 - lr * weight_decay before the Adam step."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
