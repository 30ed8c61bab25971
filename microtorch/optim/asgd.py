"""ASGD: stochastic gradient descent with Polyak-Ruppert averaging (Polyak & Juditsky, 1992)."""
from .._dtype import float32
from .._tensor import as_tensor, tensor
from .adaptive import _PerParameter
from .optimizer import _buffer, _check_common, _grad, _step_tensor, _zero_step


class ASGD(_PerParameter):
    """p *= 1 - lambd eta;  p -= eta g;  ax += mu (p - ax);  then eta = lr / (1 + lambd lr t)^alpha and
    mu = 1 / max(1, t - t0): ax, the running average of the iterates from step t0 on, is the answer."""

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        _check_common(lr, weight_decay, differentiable, None)
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    def _update(self, p, group):
        lr, lambd = group["lr"], group["lambd"]
        state = self.state[p]
        if not state:  # eta and mu are float32 scalars in the state, as step is
            state.update(step=_zero_step(), eta=tensor(float(lr), dtype=float32),
                         mu=tensor(1.0, dtype=float32), ax=_buffer(p))
        step = _step_tensor(state)
        grad = _grad(p, group["maximize"])
        if group["weight_decay"] != 0:
            grad = grad.add(p, alpha=group["weight_decay"])
        eta, mu, ax = state["eta"].item(), state["mu"].item(), state["ax"]
        p.mul_(1 - lambd * eta)          # decay
        p.add_(grad, alpha=-eta)         # gradient step
        if mu != 1:
            ax.add_(p.sub(ax).mul_(mu))  # running average of the iterates
        else:
            ax.copy_(p)
        # as torch: the new values pass through a tensor of the default dtype (float32 unless changed)
        state["eta"].copy_(as_tensor(lr / ((1 + lambd * lr * step) ** group["alpha"])))
        state["mu"].copy_(as_tensor(1 / max(1, step - group["t0"])))
