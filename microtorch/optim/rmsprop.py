"""RMSprop (Hinton), optionally centered and with momentum."""
import numpy as np

from .optimizer import Optimizer, _buffer, _check_common, _grad, _step_tensor, _zero_step


class RMSprop(Optimizer):
    """s = alpha s + (1-alpha) g^2;  p -= lr * g / (sqrt(s) + eps)  (centered: s - mean(g)^2 under the root;
    with momentum: buf = momentum buf + g / (sqrt(s) + eps), p -= lr * buf)."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check_common(lr, weight_decay, differentiable, None)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered, weight_decay=weight_decay,
                        capturable=capturable, foreach=foreach, maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure(closure)
        for group in self.param_groups:
            lr, alpha, eps, wd = group["lr"], group["alpha"], group["eps"], group["weight_decay"]
            momentum, centered = group["momentum"], group["centered"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = _grad(p, group["maximize"])
                state = self.state[p]
                if not state:
                    state["step"] = _zero_step()
                    state["square_avg"] = _buffer(p)
                    if momentum > 0:
                        state["momentum_buffer"] = _buffer(p)
                    if centered:
                        state["grad_avg"] = _buffer(p)
                _step_tensor(state)
                if wd != 0:
                    grad = grad + wd * p._data
                s = state["square_avg"]._data
                s *= alpha
                s += (1 - alpha) * grad * grad
                if centered:
                    ga = state["grad_avg"]._data
                    ga += (1 - alpha) * (grad - ga)             # grad_avg.lerp_(grad, 1 - alpha)
                    avg = np.sqrt(s + -1 * ga * ga) + eps
                else:
                    avg = np.sqrt(s) + eps
                if momentum > 0:
                    buf = state["momentum_buffer"]._data
                    buf *= momentum
                    buf += grad / avg
                    p._data -= lr * buf
                else:
                    p._data -= lr * (grad / avg)
                p._version_counter[0] += 1
        return loss
