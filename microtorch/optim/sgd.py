"""Stochastic gradient descent, with momentum, dampening, Nesterov momentum and weight decay."""
from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer, _check_common, _grad


class SGD(Optimizer):
    """p -= lr * d, where d = grad + wd * p, or with momentum: buf = momentum * buf + (1 - dampening) * d,
    d = buf (or d + momentum * buf with nesterov)."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *, maximize=False,
                 foreach=None, differentiable=False, fused=None):
        _check_common(lr, weight_decay, differentiable, fused)
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov,
                        maximize=maximize, foreach=foreach, differentiable=differentiable, fused=fused)
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
        momentum, nesterov = group["momentum"], group["nesterov"]
        d = _grad(p, group["maximize"])
        if group["weight_decay"] != 0:
            d = d.add(p, alpha=group["weight_decay"])
        if momentum != 0:
            buf = self.state[p].get("momentum_buffer")
            if buf is None:
                buf = self.state[p]["momentum_buffer"] = d.clone()
            else:
                buf.mul_(momentum).add_(d, alpha=1 - group["dampening"])
            d = d.add(buf, alpha=momentum) if nesterov else buf
        p.add_(d, alpha=-group["lr"])
