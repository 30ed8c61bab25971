"""Module.register_backward_hook (torch's deprecated kind, still in old tutorials): the hook sees the gradients
of the node that made the module's output, as torch's does, with torch's FutureWarnings where that node is not
the whole module, and torch's error when both kinds are mixed."""
import warnings

import numpy as np
import pytest
import torch

import microtorch as mt


def _d(g):
    return None if g is None else (tuple(g.shape), round(float(g.double().sum()), 9))


def _linear(T):
    lin = T.nn.Linear(3, 2).double()
    with T.no_grad():
        lin.weight.copy_(T.arange(6.0, dtype=T.float64).reshape(2, 3) / 5)
        lin.bias.copy_(T.tensor([0.5, -1.0], dtype=T.float64))
    return lin


def _x(T):
    return (T.arange(12.0, dtype=T.float64).reshape(4, 3) / 7).requires_grad_()


class _Two:
    """A module of two outputs, made per library."""
    @staticmethod
    def make(T):
        class Two(T.nn.Module):
            def forward(self, a):
                return a * 2, a + 1
        return Two()


CASES = {
    "linear": (lambda T: _linear(T), lambda T: _x(T), None),
    "linear_input_without_grad": (lambda T: _linear(T), lambda T: _x(T).detach(), None),
    "linear_3d": (lambda T: _linear(T), lambda T: _x(T).reshape(2, 2, 3), None),
    "relu": (lambda T: T.nn.ReLU(), lambda T: _x(T) - 0.5, None),
    "tanh": (lambda T: T.nn.Tanh(), lambda T: _x(T), None),
    "sequential": (lambda T: T.nn.Sequential(_linear(T), T.nn.Tanh()), lambda T: _x(T), None),
    "two_outputs": (_Two.make, lambda T: _x(T), lambda y: y[0].sum() + 2 * y[1].sum()),
}


def _observe(T, name):
    make, data, loss = CASES[name]
    module, seen = make(T), []
    module.register_backward_hook(lambda m, gi, go: seen.append(
        (type(m).__name__, [_d(g) for g in gi], [_d(g) for g in go])))
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        y = module(data(T))
    (loss or (lambda t: t.sum()))(y).backward()
    return seen, [(w.category, str(w.message)) for w in ws], [w.filename for w in ws]


@pytest.mark.parametrize("name", sorted(CASES))
def test_legacy_backward_hook_as_torch(name):
    theirs, mine = _observe(torch, name), _observe(mt, name)
    assert mine[:2] == theirs[:2]
    assert theirs[0], "the hook ran"
    assert all(f == __file__ for f in mine[2])  # (at the user's line; torch's points into its module.py)


@pytest.mark.parametrize("first", ["full", "legacy"])
def test_both_kinds_on_one_module_raise_as_torch(first):
    for T in (torch, mt):
        m = T.nn.Linear(3, 2)
        one, other = m.register_full_backward_hook, m.register_backward_hook
        if first == "legacy":
            one, other = other, one
        one(lambda *a: None)
        with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full backward hooks"):
            other(lambda *a: None)


def test_a_legacy_hook_replaces_the_nodes_grad_input():
    grads = []
    for T in (torch, mt):
        lin, x = _linear(T), _x(T)
        lin.register_backward_hook(lambda m, gi, go: tuple(None if g is None else g * 3 for g in gi))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lin(x).sum().backward()
        grads.append([np.asarray(t.grad.detach()) for t in (x, lin.weight, lin.bias)])
    for a, b in zip(*grads):
        np.testing.assert_allclose(b, a, rtol=1e-12)


def test_a_removed_legacy_hook_stops():
    for T in (torch, mt):
        lin, seen = _linear(T), []
        handle = lin.register_backward_hook(lambda *a: seen.append(1))
        handle.remove()
        lin(_x(T)).sum().backward()
        assert seen == []
