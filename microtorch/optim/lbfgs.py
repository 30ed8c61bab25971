"""L-BFGS (Nocedal, 1980; minFunc's layout, as torch): a quasi-Newton method that keeps the last
`history_size` steps s and gradient changes y, and turns the gradient into a direction with the
two-loop recursion; optionally with a line search satisfying the strong Wolfe conditions.

`step(closure)` needs the closure (it re-evaluates the loss several times per step); there is only
one parameter group. The line search is in _line_search.py.
"""
from .._creation import zeros
from ..autograd.grad_mode import enable_grad, no_grad
from ..ops import cat
from ._line_search import strong_wolfe
from .optimizer import Optimizer

_HISTORY = ("d", "t", "old_dirs", "old_stps", "ro", "H_diag", "prev_flat_grad", "prev_loss")


class LBFGS(Optimizer):
    """d = -H g with H the L-BFGS approximation of the inverse Hessian;  p += t d  (t = lr, or from the
    strong Wolfe line search);  up to max_iter such iterations per step()."""
    _state_like_params = False   # its state holds flat vectors over all the parameters


    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change, history_size=history_size,
                                      line_search_fn=line_search_fn))
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    # ---- the parameters seen as one flat vector --------------------------------------------------
    def _gather_flat_grad(self):
        return cat([zeros(p.numel(), dtype=p.dtype) if p.grad is None else p.grad.reshape(-1)
                    for p in self._params], 0)

    def _add_grad(self, step_size, update):
        offset = 0
        for p in self._params:
            p.add_(update[offset:offset + p.numel()].view_as(p), alpha=float(step_size))
            offset += p.numel()

    def _directional_evaluate(self, closure, x, t, d):
        """Loss and flat gradient at x + t d; the parameters are put back to x."""
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        for p, data in zip(self._params, x):
            p.copy_(data)
        return loss, flat_grad

    def step(self, closure):
        """One L-BFGS step (up to max_iter iterations); returns the loss at the starting point."""
        if not callable(closure):   # torch calls it: a TypeError
            raise TypeError("LBFGS.step() needs a closure that clears the gradients, computes the loss, calls "
                            "loss.backward() and returns the loss: optimizer.step(closure)")
        with no_grad():
            return self._step(enable_grad()(closure))

    def _step(self, closure):
        group = self.param_groups[0]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        orig_loss = closure()
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if flat_grad.abs().max() <= group["tolerance_grad"]:   # already at a stationary point
            return orig_loss
        h = {k: state.get(k) for k in _HISTORY}
        loss, evals, n_iter = float(orig_loss), 1, 0
        while n_iter < group["max_iter"]:
            n_iter += 1
            state["n_iter"] += 1
            _update_direction(state, h, flat_grad, group["history_size"])
            if h["prev_flat_grad"] is None:
                h["prev_flat_grad"] = flat_grad.clone()
            else:
                h["prev_flat_grad"].copy_(flat_grad)
            h["prev_loss"] = loss
            gtd = flat_grad.dot(h["d"])                      # directional derivative
            h["t"] = _first_step(flat_grad, group["lr"]) if state["n_iter"] == 1 else group["lr"]
            if gtd > -group["tolerance_change"]:            # not a descent direction any more
                break
            loss, flat_grad, ls_evals = self._move(closure, group, h, loss, flat_grad, gtd, evals, n_iter)
            evals += ls_evals
            state["func_evals"] += ls_evals
            if n_iter == group["max_iter"] or evals >= group["max_eval"] or \
                    _converged(group, h, loss, flat_grad):
                break
        state.update(h)
        return orig_loss

    def _move(self, closure, group, h, loss, flat_grad, gtd, evals, n_iter):
        """Take the step along h['d'] (with the line search, or of length h['t']); returns the new loss,
        flat gradient and how many times the closure ran."""
        fn = group["line_search_fn"]
        if fn is not None:
            if fn != "strong_wolfe":
                raise RuntimeError("only 'strong_wolfe' is supported")
            x_init = [p.clone() for p in self._params]
            loss, flat_grad, h["t"], ls_evals = strong_wolfe(
                lambda x, t, d: self._directional_evaluate(closure, x, t, d), x_init, h["t"], h["d"], loss,
                flat_grad, gtd, max_ls=group["max_eval"] - evals)
            self._add_grad(h["t"], h["d"])
            return loss, flat_grad, ls_evals
        self._add_grad(h["t"], h["d"])
        if n_iter == group["max_iter"]:   # the last iteration: no need to evaluate again
            return loss, flat_grad, 0
        loss = float(closure())
        return loss, self._gather_flat_grad(), 1


def _first_step(flat_grad, lr):
    """The first iteration has no curvature yet: a step of length at most 1 in the l1 norm of g."""
    return min(1.0, 1.0 / flat_grad.abs().sum()) * lr


def _converged(group, h, loss, flat_grad):
    return bool(flat_grad.abs().max() <= group["tolerance_grad"]
                or h["d"].mul(h["t"]).abs().max() <= group["tolerance_change"]
                or abs(loss - h["prev_loss"]) < group["tolerance_change"])


def _update_direction(state, h, flat_grad, history_size):
    """h['d'] = -H g by the two-loop recursion, after adding the last (s, y) pair to the memory."""
    if state["n_iter"] == 1:
        h.update(d=flat_grad.neg(), old_dirs=[], old_stps=[], ro=[], H_diag=1)
        return
    y = flat_grad.sub(h["prev_flat_grad"])
    s = h["d"].mul(h["t"])
    ys = y.dot(s)
    if ys > 1e-10:   # keep the pair only if the curvature is positive
        if len(h["old_dirs"]) == history_size:
            for k in ("old_dirs", "old_stps", "ro"):
                h[k].pop(0)
        h["old_dirs"].append(y)
        h["old_stps"].append(s)
        h["ro"].append(1.0 / ys)
        h["H_diag"] = ys / y.dot(y)   # scale of the initial inverse Hessian
    old_dirs, old_stps, ro = h["old_dirs"], h["old_stps"], h["ro"]
    if "al" not in state:
        state["al"] = [None] * history_size
    al = state["al"]
    q = flat_grad.neg()
    for i in range(len(old_dirs) - 1, -1, -1):
        al[i] = old_stps[i].dot(q) * ro[i]
        q.add_(old_dirs[i], alpha=-float(al[i]))
    h["d"] = r = q.mul(h["H_diag"])
    for i in range(len(old_dirs)):
        be_i = old_dirs[i].dot(r) * ro[i]
        r.add_(old_stps[i], alpha=float(al[i] - be_i))
