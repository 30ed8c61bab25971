"""Stochastic gradient descent, with momentum, dampening, Nesterov momentum and weight decay."""
from .._tensor import Tensor
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
        for group in self.param_groups:
            lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
            wd, nesterov = group["weight_decay"], group["nesterov"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                d = _grad(p, group["maximize"])
                if wd != 0:
                    d = d + wd * p._data
                if momentum != 0:
                    state = self.state[p]
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        buf = state["momentum_buffer"] = Tensor._make(d.copy())
                    else:
                        buf._data *= momentum
                        buf._data += (1 - dampening) * d
                    d = d + momentum * buf._data if nesterov else buf._data
                p._data -= lr * d
                p._version_counter[0] += 1
        return loss
