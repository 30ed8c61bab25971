"""RMSprop (Hinton), optionally centered and with momentum."""
from ..autograd.grad_mode import no_grad
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
        with no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        self._update(p, group)
        return loss

    def _update(self, p, group):
        lr, alpha, eps, momentum = group["lr"], group["alpha"], group["eps"], group["momentum"]
        grad = _grad(p, group["maximize"])
        state = self.state[p]
        if not state:
            state["step"] = _zero_step()
            state["square_avg"] = _buffer(p)
            if momentum > 0:
                state["momentum_buffer"] = _buffer(p)
            if group["centered"]:
                state["grad_avg"] = _buffer(p)
        _step_tensor(state)
        if group["weight_decay"] != 0:
            grad = grad.add(p, alpha=group["weight_decay"])
        # torch's operations in torch's order (addcmul, lerp, addcdiv each round once where a product
        # written out would round twice), so that a step gives torch's bits
        s = state["square_avg"].mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
        if group["centered"]:
            ga = state["grad_avg"].lerp_(grad, 1 - alpha)
            avg = s.addcmul(ga, ga, value=-1).sqrt_().add_(eps)
        else:
            avg = s.sqrt().add_(eps)
        if momentum > 0:
            buf = state["momentum_buffer"].mul_(momentum).addcdiv_(grad, avg)
            p.add_(buf, alpha=-lr)
        else:
            p.addcdiv_(grad, avg, value=-lr)
