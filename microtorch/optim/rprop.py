"""Rprop: resilient backpropagation (Riedmiller & Braun, 1993), full-batch learning by gradient signs."""
from .adaptive import _PerParameter
from .optimizer import _buffer, _check_common, _grad, _step_tensor, _zero_step


class Rprop(_PerParameter):
    """Each coordinate has its own step size: times etaplus while the gradient keeps its sign, times
    etaminus when it flips (and that coordinate then skips one move); p -= sign(g) * step_size."""

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        _check_common(lr, 0, differentiable, None)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")  # torch's text
        super().__init__(params, dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, capturable=capturable))

    def _update(self, p, group):
        (etaminus, etaplus), (step_min, step_max) = group["etas"], group["step_sizes"]
        state = self.state[p]
        if not state:
            state.update(step=_zero_step(), prev=_buffer(p), step_size=_buffer(p).fill_(group["lr"]))
        _step_tensor(state)
        grad = _grad(p, group["maximize"])
        sign = grad.mul(state["prev"]).sign()     # +1: same sign as last step, -1: flipped, 0: one was zero
        factor = sign.clone()
        factor[sign.gt(0)] = etaplus
        factor[sign.lt(0)] = etaminus
        factor[sign.eq(0)] = 1
        state["step_size"].mul_(factor).clamp_(step_min, step_max)
        grad = grad.clone()
        grad[sign.lt(0)] = 0                      # after a flip: no move, and no sign to compare next time
        p.addcmul_(grad.sign(), state["step_size"], value=-1)
        state["prev"].copy_(grad)
