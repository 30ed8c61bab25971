"""Adagrad, Adadelta and Adamax: per-coordinate step sizes from the history of gradients."""
from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer, _buffer, _check_common, _grad, _step_tensor, _zero_step


class _PerParameter(Optimizer):
    """step() calls self._update(p, group) for every parameter that has a gradient."""

    def step(self, closure=None):
        loss = self._closure(closure)
        with no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        self._update(p, group)
        return loss


def _check(name, value, low=0.0, high=None):
    if not low <= value or (high is not None and not value <= high):
        raise ValueError(f"Invalid {name} value: {value}")


def _check_betas(betas):
    for i, beta in enumerate(betas):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {beta}")  # torch's text


class Adagrad(_PerParameter):
    """s += g^2;  p -= lr / (1 + (t-1) lr_decay) * g / (sqrt(s) + eps)"""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check_common(lr, weight_decay, differentiable, fused)
        _check("lr_decay", lr_decay)
        _check("initial_accumulator_value", initial_accumulator_value)
        _check("epsilon", eps)
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, fused=fused))
        for group in self.param_groups:  # torch fills the state at construction
            for p in group["params"]:
                self.state[p] = {"step": _zero_step(),
                                 "sum": _buffer(p).fill_(group["initial_accumulator_value"])}

    def _update(self, p, group):
        state = self.state[p]
        step = _step_tensor(state)
        grad = _grad(p, group["maximize"])
        if group["weight_decay"] != 0:
            grad = grad.add(p, alpha=group["weight_decay"])
        clr = group["lr"] / (1 + (step - 1) * group["lr_decay"])
        state["sum"].addcmul_(grad, grad, value=1)
        p.addcdiv_(grad, state["sum"].sqrt() + group["eps"], value=-clr)


class Adadelta(_PerParameter):
    """s = rho s + (1-rho) g^2;  d = sqrt(a + eps) / sqrt(s + eps) g;  a = rho a + (1-rho) d^2;  p -= lr d"""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        _check_common(lr, weight_decay, differentiable, None)
        _check("rho", rho, 0.0, 1.0)
        _check("epsilon", eps)
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                      capturable=capturable, foreach=foreach, differentiable=differentiable))

    def _update(self, p, group):
        state = self.state[p]
        if not state:
            state.update(step=_zero_step(), square_avg=_buffer(p), acc_delta=_buffer(p))
        _step_tensor(state)
        rho, eps = group["rho"], group["eps"]
        grad = _grad(p, group["maximize"])
        if group["weight_decay"] != 0:
            grad = grad.add(p, alpha=group["weight_decay"])
        square_avg = state["square_avg"].mul_(rho).addcmul_(grad, grad, value=1 - rho)
        delta = (state["acc_delta"] + eps).sqrt() / (square_avg + eps).sqrt() * grad
        state["acc_delta"].mul_(rho).addcmul_(delta, delta, value=1 - rho)
        p.add_(delta, alpha=-group["lr"])


class Adamax(_PerParameter):
    """m = b1 m + (1-b1) g;  u = max(b2 u, |g| + eps);  p -= lr / (1 - b1^t) * m / u"""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        _check_common(lr, weight_decay, differentiable, None)
        _check("epsilon", eps)
        _check_betas(betas)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, capturable=capturable))

    def _update(self, p, group):
        from ..ops import maximum
        state = self.state[p]
        if not state:
            state.update(step=_zero_step(), exp_avg=_buffer(p), exp_inf=_buffer(p))
        step = _step_tensor(state)
        (beta1, beta2), eps = group["betas"], group["eps"]
        grad = _grad(p, group["maximize"])
        if group["weight_decay"] != 0:
            grad = grad.add(p, alpha=group["weight_decay"])
        exp_avg = state["exp_avg"].lerp_(grad, 1 - beta1)
        exp_inf = state["exp_inf"].copy_(maximum(state["exp_inf"] * beta2, grad.abs() + eps))
        p.addcdiv_(exp_avg, exp_inf, value=-group["lr"] / (1 - beta1 ** step))


class NAdam(_PerParameter):
    """Adam with Nesterov momentum: a momentum schedule mu_t = b1 (1 - 0.96^(t psi) / 2) on the first moment"""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False, differentiable=False):
        _check_common(lr, weight_decay, differentiable, None)
        _check("epsilon", eps)
        _check_betas(betas)
        _check("momentum_decay", momentum_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable))

    def _update(self, p, group):
        from .._tensor import tensor
        state = self.state[p]
        if not state:  # torch keeps mu_product as a float32 scalar, like step
            state.update(step=_zero_step(), mu_product=tensor(1.0, dtype=_zero_step().dtype), exp_avg=_buffer(p),
                         exp_avg_sq=_buffer(p))
        step = _step_tensor(state)
        (beta1, beta2), lr, wd = group["betas"], group["lr"], group["weight_decay"]
        grad = _grad(p, group["maximize"])
        if wd != 0:
            if group["decoupled_weight_decay"]:
                p.mul_(1 - lr * wd)
            else:
                grad = grad.add(p, alpha=wd)
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * group["momentum_decay"]))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * group["momentum_decay"]))
        mu_product = state["mu_product"].mul_(mu).item()
        exp_avg = state["exp_avg"].lerp_(grad, 1 - beta1)
        exp_avg_sq = state["exp_avg_sq"].mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        denom = (exp_avg_sq / (1 - beta2 ** step)).sqrt() + group["eps"]
        p.addcdiv_(grad, denom, value=-lr * (1.0 - mu) / (1.0 - mu_product))
        p.addcdiv_(exp_avg, denom, value=-lr * mu_next / (1.0 - mu_product * mu_next))


class RAdam(_PerParameter):
    """Adam with the variance of the adaptive step rectified: plain momentum SGD while rho_t <= 5"""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        _check_common(lr, weight_decay, differentiable, None)
        _check("epsilon", eps)
        _check_betas(betas)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                      foreach=foreach, capturable=capturable,
                                      decoupled_weight_decay=decoupled_weight_decay, differentiable=differentiable))

    def _update(self, p, group):
        state = self.state[p]
        if not state:
            state.update(step=_zero_step(), exp_avg=_buffer(p), exp_avg_sq=_buffer(p))
        step = _step_tensor(state)
        (beta1, beta2), lr, wd = group["betas"], group["lr"], group["weight_decay"]
        grad = _grad(p, group["maximize"])
        if wd != 0:
            if group["decoupled_weight_decay"]:
                p.mul_(1 - lr * wd)
            else:
                grad = grad.add(p, alpha=wd)
        exp_avg = state["exp_avg"].lerp_(grad, 1 - beta1)
        exp_avg_sq = state["exp_avg_sq"].mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        bias_correction2 = 1 - beta2 ** step
        corrected = exp_avg / (1 - beta1 ** step)
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * beta2 ** step / bias_correction2
        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            adaptive = bias_correction2 ** 0.5 / (exp_avg_sq.sqrt() + group["eps"])
            p.add_(corrected * lr * adaptive * rect, alpha=-1.0)
        else:
            p.add_(corrected * lr, alpha=-1.0)
