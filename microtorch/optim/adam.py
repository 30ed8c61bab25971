"""Adam and AdamW (Kingma & Ba; Loshchilov & Hutter), with amsgrad.

`_update` writes the step in tensor ops. For the common case (real floating tensors of one dtype and shape, in
memory of their own, that no view, tangent or vmap needs to hear about) `_fused_update` computes the very same
operations, in the same order and dtype, with numpy, block by block: a 64 KiB block of each tensor goes through
all of them while it is in the cache, and no temporary as large as the weight is made (eight of them per step
made the memory fresh at every step, and page faults cost more than the arithmetic). The results are the same
bits (tests/test_funcip6.py).
"""
import math

import numpy as np

from .._quiet import quietly
from ..autograd.grad_mode import no_grad
from ..autograd.views import bump_version, live_views
from ..ops import maximum
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
        if quietly(_fused_update, p, state, group, lr, beta1, beta2, eps, wd, step):  # (numpy quiet, as ops are)
            return
        if wd != 0:
            if group["decoupled_weight_decay"]:
                p.mul_(1 - lr * wd)
            else:
                grad = grad.add(p, alpha=wd)
        m, v = state["exp_avg"], state["exp_avg_sq"]
        m.add_(grad - m, alpha=1 - beta1)                     # m.lerp_(grad, 1 - beta1)
        v.mul_(beta2).add_(grad * grad.conj(), alpha=1 - beta2)
        if group["amsgrad"]:
            v = state["max_exp_avg_sq"].copy_(maximum(state["max_exp_avg_sq"], v))
        denom = v.sqrt() / math.sqrt(1 - beta2 ** step) + eps
        p.add_(m / denom, alpha=-lr / (1 - beta1 ** step))


_BLOCK_BYTES = 1 << 16


def _plain(p, tensors):
    """The arrays of p (a parameter) and of tensors (its gradient and state) when numpy may update them directly:
    real floating, one dtype and shape, C-contiguous, writeable, not batched by vmap, without tangents, p in memory
    no other of them shares and with no live view that would need a new history; else None."""
    arrays = [p._data] + [t._data for t in tensors]
    a = arrays[0]
    if type(a) is not np.ndarray or a.dtype.char not in "fd" or p._base is not None or p._fw_grads \
            or (p._requires_grad and p._views and live_views(p)):
        return None  # (float32 and float64 only: float16 keeps the tensor ops)
    for b in arrays[1:]:
        if type(b) is not np.ndarray or b.dtype != a.dtype or b.shape != a.shape or not b.flags.c_contiguous:
            return None
    if not (a.flags.c_contiguous and a.flags.writeable) or any(t._fw_grads for t in tensors) \
            or any(np.may_share_memory(x, y) for i, x in enumerate(arrays) for y in arrays[i + 1:]):
        return None
    return [x.reshape(-1) for x in arrays]


def _fused_update(p, state, group, lr, beta1, beta2, eps, wd, step):
    """Adam's step on p's memory in numpy, when _plain allows it (True: done). Each line is the tensor op of
    `_update` it stands for; a number meets a float32 block as the op's does (in the block's dtype)."""
    amsgrad, decoupled = group["amsgrad"], group["decoupled_weight_decay"]
    m, v = state["exp_avg"], state["exp_avg_sq"]
    tensors = [p.grad, m, v] + ([state["max_exp_avg_sq"]] if amsgrad else [])
    arrays = _plain(p, tensors)
    if arrays is None:
        return False
    bias2, step_size = math.sqrt(1 - beta2 ** step), -lr / (1 - beta1 ** step)
    n = _BLOCK_BYTES // arrays[0].itemsize
    t, u = np.empty(min(n, arrays[0].size), arrays[0].dtype), np.empty(min(n, arrays[0].size), arrays[0].dtype)
    for i in range(0, arrays[0].size, n):
        pb, gb, mb, vb = (x[i:i + n] for x in arrays[:4])
        k = pb.size
        g = np.negative(gb, out=u[:k]) if group["maximize"] else gb  # grad = -p.grad
        if wd != 0 and decoupled:
            np.multiply(pb, 1 - lr * wd, out=pb)                     # p.mul_(1 - lr * wd)
        elif wd != 0:
            g = np.add(g, np.multiply(pb, wd, out=t[:k]), out=u[:k])  # grad = grad.add(p, alpha=wd)
        d = np.subtract(g, mb, out=t[:k])                            # m.add_(grad - m, alpha=1 - beta1)
        np.add(mb, np.multiply(d, 1 - beta1, out=d), out=mb)
        np.multiply(vb, beta2, out=vb)                               # v.mul_(beta2)
        gg = np.multiply(g, g, out=t[:k])                            # .add_(grad * grad, alpha=1 - beta2)
        np.add(vb, np.multiply(gg, 1 - beta2, out=gg), out=vb)
        if amsgrad:                                                  # v = max_exp_avg_sq.copy_(maximum(...))
            mx = arrays[4][i:i + n]
            np.copyto(mx, vb, where=np.less(mx, vb) | np.isnan(vb))
            vb = mx
        denom = np.add(np.divide(np.sqrt(vb, out=t[:k]), bias2, out=t[:k]), eps, out=t[:k])
        upd = np.divide(mb, denom, out=t[:k])                        # p.add_(m / denom, alpha=step_size)
        np.add(pb, np.multiply(upd, step_size, out=upd), out=pb)
    for x in [p] * (2 if decoupled and wd != 0 else 1) + [m, v, v] + tensors[3:]:
        bump_version(x)  # (as the tensor ops would: torch's Adam bumps p once (AdamW twice), m once, v twice)
    return True


class AdamW(Adam):
    """Adam with decoupled weight decay: p *= 1 - lr * weight_decay before the Adam step."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
