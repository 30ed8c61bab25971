"""LBFGS beside torch 2.13, run for many steps. Its algorithm is torch's: given the same gradients (an
exact numpy oracle) and add(alpha=) and dot rounded as torch rounds them, the iterates are bit-identical for
150 iterations, with and without the strong Wolfe line search. Without that, they drift apart by rounding
only: torch's add(other, alpha=a) is one fused multiply-add (numpy rounds twice) and its dot is MKL's,
summed in another order. With real closures the evaluation and iteration counts agree, and the iterates
within rounding."""
from fractions import Fraction

import numpy as np
import pytest
import torch

import microtorch as mt


def _rosenbrock_np(x):
    f = np.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
    g = np.zeros_like(x)
    g[:-1] += -400 * x[:-1] * (x[1:] - x[:-1] ** 2) - 2 * (1 - x[:-1])
    g[1:] += 200 * (x[1:] - x[:-1] ** 2)
    return f, g


def _oracle_run(lib, x0, steps, **kw):
    """one L-BFGS iteration per step, the gradient set from numpy: only the optimizer's arithmetic differs"""
    x = lib.tensor(x0, requires_grad=True)
    opt = lib.optim.LBFGS([x], max_iter=1, max_eval=25, **kw)  # (max_eval 1 would leave no line search)

    def closure():
        f, g = _rosenbrock_np(x.detach().numpy().copy())
        x.grad = lib.tensor(g)
        return lib.tensor(f)

    out = []
    for _ in range(steps):
        opt.step(closure)
        out.append(x.detach().numpy().copy())
    return np.array(out)


def _torch_rounding(monkeypatch):
    """microtorch's add_(alpha=) and dot rounded as torch's are on 2-vectors: one rounding of x + a y (a
    fused multiply-add), and x0 y0 + x1 y1 without one (numpy's dot fuses it)"""
    plain_add = mt.Tensor.add_

    def fused_add_(self, other, *, alpha=1):
        if alpha == 1:
            return plain_add(self, other)
        a, b = self.detach().numpy(), other.detach().numpy()
        exact = [float(Fraction(float(x)) + Fraction(float(alpha)) * Fraction(float(y))) for x, y in zip(a, b)]
        return self.copy_(mt.tensor(exact, dtype=self.dtype))

    def two_term_dot(self, other):
        a, b = self.detach().numpy(), other.detach().numpy()
        return mt.tensor(float(a[0] * b[0] + a[1] * b[1]), dtype=self.dtype)

    monkeypatch.setattr(mt.Tensor, "add_", fused_add_)
    monkeypatch.setattr(mt.Tensor, "dot", two_term_dot)


@pytest.mark.parametrize("kw", [dict(line_search_fn="strong_wolfe"), dict(line_search_fn="strong_wolfe", history_size=3),
                                dict(), dict(history_size=3)], ids=["wolfe", "wolfe_h3", "plain", "plain_h3"])
def test_the_algorithm_is_torchs_iterates_bit_identical_once_two_primitives_round_alike(kw, monkeypatch):
    """150 iterations on the 2-D Rosenbrock: the order of every operation, the tolerances and the first
    step are torch's; the drift seen otherwise comes from add(alpha=) and dot rounding only"""
    _torch_rounding(monkeypatch)
    t = _oracle_run(torch, np.array([-1.5, 2.0]), 150, **kw)
    m = _oracle_run(mt, np.array([-1.5, 2.0]), 150, **kw)
    np.testing.assert_array_equal(m, t)
    assert np.abs(m[-1] - 1).max() < 1e-4  # and it did reach the minimum (1, 1)


def test_without_that_rounding_the_drift_stays_small_over_150_iterations():
    kw = dict(line_search_fn="strong_wolfe")
    t = _oracle_run(torch, np.array([-1.5, 2.0]), 150, **kw)
    m = _oracle_run(mt, np.array([-1.5, 2.0]), 150, **kw)
    np.testing.assert_allclose(m, t, rtol=0, atol=1e-9)


def _closure_run(lib, f, x0, steps, **kw):
    x = lib.tensor(x0, requires_grad=True)
    opt = lib.optim.LBFGS([x], **kw)

    def closure():
        opt.zero_grad()
        loss = f(lib, x)
        loss.backward()
        return loss

    losses = [float(opt.step(closure).detach()) for _ in range(steps)]
    state = opt.state[opt._params[0]]
    return x.detach().numpy(), np.array(losses), state["func_evals"], state["n_iter"]


_A = np.random.default_rng(0).standard_normal((20, 5))
_B = np.random.default_rng(1).standard_normal(20)


def _least_squares(lib, x):
    r = lib.tensor(_A) @ x - lib.tensor(_B)
    return (r * r).sum()


def _rosenbrock(lib, x):
    return (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()


CASES = [(_least_squares, np.zeros(5), {}, 1e-14), (_least_squares, np.zeros(5), dict(history_size=3), 1e-14),
         (_least_squares, np.zeros(5), dict(line_search_fn="strong_wolfe", history_size=3), 1e-14),
         (_rosenbrock, np.array([-1.2, 1.0, -0.5, 0.3, 1.5, -1.0]), dict(line_search_fn="strong_wolfe"), 1e-9),
         (_rosenbrock, np.array([-1.2, 1.0, -0.5, 0.3, 1.5, -1.0]), dict(lr=0.1, max_iter=5, history_size=2), 1e-9)]


@pytest.mark.parametrize("f,x0,kw,tol", CASES)
def test_closure_runs_agree_with_torch_in_counts_and_within_rounding(f, x0, kw, tol):
    tx, tl, t_evals, t_iters = _closure_run(torch, f, x0, 30, **kw)
    mx, ml, m_evals, m_iters = _closure_run(mt, f, x0, 30, **kw)
    assert (m_evals, m_iters) == (t_evals, t_iters)
    np.testing.assert_allclose(mx, tx, rtol=0, atol=tol)
    np.testing.assert_allclose(ml, tl, rtol=1e-9, atol=1e-12)


def test_several_parameters_one_without_gradient_and_the_stopping_rules_match_torch():
    def run(lib, **kw):
        a = lib.tensor([1.0, -2.0], dtype=lib.float64, requires_grad=True)
        b = lib.tensor([[0.5]], dtype=lib.float64, requires_grad=True)
        c = lib.tensor([3.0], dtype=lib.float64, requires_grad=True)  # never gets a gradient
        opt = lib.optim.LBFGS([a, b, c], **kw)

        def closure():
            opt.zero_grad()
            loss = ((a - 1.5) ** 4).sum() + (b * a[0]).sum() ** 2 + 0.1 * (b ** 2).sum()
            loss.backward()
            return loss

        losses = [float(opt.step(closure).detach()) for _ in range(5)]
        state = opt.state[opt._params[0]]
        return losses, state["func_evals"], state["n_iter"], c.detach().numpy().tolist()

    for kw in [dict(), dict(line_search_fn="strong_wolfe", history_size=2), dict(max_iter=3, max_eval=4),
               dict(tolerance_grad=1e-2), dict(lr=0.5, line_search_fn="strong_wolfe", max_eval=7)]:
        t, m = run(torch, **kw), run(mt, **kw)
        assert m[1:] == t[1:], kw
        np.testing.assert_allclose(m[0], t[0], rtol=1e-12, err_msg=str(kw))
