"""Adafactor (Shazeer & Stern, 2018): Adam-like steps whose second moment of a matrix is kept as a row
factor and a column factor, so the memory grows as rows + columns instead of rows * columns."""
import numpy as np

from .adaptive import _PerParameter
from .optimizer import _grad, _step_tensor, _zero_step


class Adafactor(_PerParameter):
    """beta2_t = 1 - t^beta2_decay;  R, C = running means of g^2 over the last / second-to-last dim;
    V = R C / mean(R);  u = g / sqrt(V);  p -= max(eps2, rms(p)) min(lr, 1/sqrt(t)) u / max(1, rms(u) / d)"""

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        _check_adafactor(lr, beta2_decay, eps, d, weight_decay)
        super().__init__(params, dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize))

    def _update(self, p, group):
        if p.is_complex():
            raise RuntimeError("Adafactor does not support complex parameters")
        state = self.state[p]
        if not state:
            state["step"] = _zero_step()
            if p.grad.dim() > 1:  # factored: one value per row and one per column of the last two dims
                state["row_var"] = p.grad.new_zeros(list(p.grad.shape[:-1]) + [1])
                state["col_var"] = p.grad.new_zeros(list(p.grad.shape[:-2]) + [1, p.grad.shape[-1]])
            else:
                state["variance"] = p.grad.new_zeros(list(p.grad.shape))
        step = _step_tensor(state)
        lr, (eps1, eps2) = group["lr"], group["eps"]
        if eps1 is None:
            eps1 = float(np.finfo(p.detach().numpy().dtype).eps)
        grad = _grad(p, group["maximize"])
        one_minus_beta2 = step ** group["beta2_decay"]
        rho = min(lr, 1 / step ** 0.5)
        alpha = max(eps2, p.norm(2).item() / p.numel() ** 0.5) * rho   # relative step size
        if group["weight_decay"] != 0:
            p.mul_(1 - lr * group["weight_decay"])
        var = _variance(state, grad, one_minus_beta2, eps1)
        update = var.clamp_(min=eps1 * eps1).rsqrt_().mul_(grad)
        denom = max(1.0, update.norm(2).item() / (update.numel() ** 0.5 * group["d"]))  # clip the update's RMS
        p.add_(update, alpha=-alpha / denom)


def _variance(state, grad, weight, eps1):
    """The estimate of E[g^2]: the running average itself for a vector, the outer product of the row and
    column averages divided by their mean for a matrix."""
    if "variance" in state:
        return state["variance"].lerp_(grad * grad, weight).clone()
    row_mean = grad.norm(dim=-1, keepdim=True).square_().div_(grad.size(-1))   # mean of g^2 along a row
    col_mean = grad.norm(dim=-2, keepdim=True).square_().div_(grad.size(-2))
    row, col = state["row_var"].lerp_(row_mean, weight), state["col_var"].lerp_(col_mean, weight)
    return (row @ col).div_(row.mean(dim=-2, keepdim=True).clamp_(min=eps1))


def _check_adafactor(lr, beta2_decay, eps, d, weight_decay):
    """torch's checks and texts."""
    if not 0.0 <= lr:
        raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
    if not 0.0 >= beta2_decay:
        raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
    if eps[0] is not None and not 0.0 <= eps[0]:
        raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
    if not 0.0 <= eps[1]:
        raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
    if not 1.0 <= d:
        raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
