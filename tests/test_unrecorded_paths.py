"""Backward formulas of sum, mean and broadcasting (expand, sum_to, mean's division) compute in numpy where
nothing records: torch's gradients, layouts and second-order graphs, and no node made and dropped."""
import numpy as np
import pytest
import torch

import microtorch as mt
from microtorch.autograd import function

_CASES = {
    "sum": lambda x, y: x.sum(),
    "mean": lambda x, y: x.mean(),
    "sum(dim)": lambda x, y: x.sum(1).sum(),
    "mean(dim, keepdim)": lambda x, y: x.mean(0, keepdim=True).sum(),
    "broadcast add": lambda x, y: (x + y).sum(),
    "broadcast mul": lambda x, y: (x * y).pow(2).mean(),
    "expand": lambda x, y: y.expand(4, 2, 3).sum(),
    "transpose": lambda x, y: (x.transpose(0, 1) * x.t()).pow(2).sum() + y.sum(),
    "W6-like loss": lambda x, y: (1 - (x @ y.t()).relu()).relu().mean() + 1e-4 * (y * y).sum(),
}


def _leaves(T):
    r = np.random.default_rng(3)
    x = T.tensor(r.standard_normal((2, 3)), requires_grad=True)
    y = T.tensor(r.standard_normal((1, 3)), requires_grad=True)
    return x, y


@pytest.mark.parametrize("name", list(_CASES))
def test_gradients_and_layouts_are_torchs(name):
    got = []
    for T in (torch, mt):
        x, y = _leaves(T)
        _CASES[name](x, y).backward()
        got.append([(g.numpy().tolist(), g.stride(), str(g.dtype).split(".")[-1]) for g in (x.grad, y.grad)
                    if g is not None])
    assert got[0] == got[1]


@pytest.mark.parametrize("name", list(_CASES))
def test_create_graph_keeps_torchs_second_order_graph(name):
    names = []
    for T in (torch, mt):
        x, y = _leaves(T)
        gx, gy = T.autograd.grad(_CASES[name](x, y), (x, y), create_graph=True, allow_unused=True)
        names.append([None if g is None or g.grad_fn is None else g.grad_fn.name() for g in (gx, gy)])
        total = sum(g.pow(2).sum() for g in (gx, gy) if g is not None and g.requires_grad)
        if isinstance(total, T.Tensor):
            second = T.autograd.grad(total, (x, y), allow_unused=True)
            names.append([None if g is None else np.round(g.numpy(), 12).tolist() for g in second])
    assert names[0] == names[len(names) // 2]
    assert names[1:len(names) // 2] == names[len(names) // 2 + 1:]


@pytest.mark.parametrize("name", list(_CASES))
def test_a_plain_backward_makes_no_node_for_them(name, monkeypatch):
    x, y = _leaves(mt)
    loss = _CASES[name](x, y)
    made = []
    real = function.run
    monkeypatch.setattr(function, "run", lambda cls, *a, **k: made.append(cls.__name__) or real(cls, *a, **k))
    loss.backward()
    assert made == []
