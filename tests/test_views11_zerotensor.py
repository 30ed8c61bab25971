"""torch's efficient zero tensor as a student meets it, beside torch 2.13: `_is_zerotensor()` of an ordinary tensor
is False; sgn's gradient from autograd.grad is one (True), stays one through a product and a view, refuses numpy()
and in-place writes."""
import pytest
import torch

import microtorch as mt


def outcome(fn):
    try:
        return fn()
    except Exception as e:
        return type(e).__name__, str(e).strip()[:58]


def both(fn):
    return [outcome(lambda: fn(T)) for T in (torch, mt)]


def sgn_grad(T):
    x = T.tensor([1.0, -2.0, 0.0], dtype=T.float64, requires_grad=True)
    return T.autograd.grad(x.sgn().sum(), x)[0]


@pytest.mark.parametrize("make", ["ones", "leaf", "grad", "view"])
def test_an_ordinary_tensor_is_not_a_zero_tensor(make):
    def run(T):
        x = T.ones(2, 3, requires_grad=make != "ones")
        if make == "grad":
            (x * 3).sum().backward()
            x = x.grad
        return (x[0] if make == "view" else x)._is_zerotensor()
    t, m = both(run)
    assert t is False and m is False


@pytest.mark.parametrize("then", ["itself", "times 2", "a view", "reshaped", "plus 1", "cloned", "negated"])
def test_sgns_gradient_is_one_and_stays_one_as_in_torch(then):
    def run(T):
        g = sgn_grad(T)
        g = {"itself": lambda: g, "times 2": lambda: g * 2, "a view": lambda: g[1:], "reshaped": lambda: g.view(3, 1),
             "plus 1": lambda: g + 1, "cloned": lambda: g.clone(), "negated": lambda: -g}[then]()
        return g._is_zerotensor(), g.tolist() if not g._is_zerotensor() else None
    t, m = both(run)
    assert m == t


def test_numpy_of_a_zero_tensor_is_refused_unless_forced():
    t, m = both(lambda T: sgn_grad(T).numpy())
    assert t == m[:1] + (t[1],) and m[1].startswith(t[1])
    t, m = both(lambda T: sgn_grad(T).numpy(force=True).tolist())
    assert t == m == [0.0, 0.0, 0.0]


def test_writing_into_a_zero_tensor_is_refused():
    t, m = both(lambda T: sgn_grad(T).add_(1))
    assert t[0] == m[0] == "RuntimeError" and t[1].startswith("ZeroTensors are immutable") and \
        m[1].startswith("ZeroTensors are immutable")


def test_is_view_as_torch():
    def run(T):
        a = T.ones(2, 3)
        return a._is_view(), a[0]._is_view(), a.view(6)._is_view(), a.t()._is_view(), (a * 1)._is_view(), \
            a[0].clone()._is_view(), a.split(1)[0]._is_view(), a.detach()._is_view()
    t, m = both(run)
    assert m == t
