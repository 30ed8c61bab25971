"""Adagrad, Adadelta, Adamax against torch: from the same weights, 20 steps land on the same parameters
to 1e-10 in float64 (the helpers of tests/test_optim.py), with their options; errors as torch's."""
import numpy as np
import pytest
import torch

import microtorch as mt
from test_optim import TOL, problem, train  # noqa: F401  (problem is a fixture)

CASES = [
    ("Adagrad", {}), ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "weight_decay": 0.1, "initial_accumulator_value": 0.5}),
    ("Adagrad", {"lr": 0.05, "maximize": True}),
    ("Adadelta", {}), ("Adadelta", {"lr": 0.5, "rho": 0.8, "eps": 1e-4, "weight_decay": 0.05}),
    ("Adamax", {}), ("Adamax", {"lr": 0.01, "betas": (0.8, 0.9), "weight_decay": 0.1}),
    ("NAdam", {}), ("NAdam", {"lr": 0.01, "weight_decay": 0.1, "momentum_decay": 0.01}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("RAdam", {}), ("RAdam", {"lr": 0.01, "betas": (0.8, 0.9), "weight_decay": 0.1}),
    ("RAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True, "maximize": True}),
]


@pytest.mark.parametrize("name, kw", CASES)
def test_trajectory_as_torch(problem, name, kw):
    def make(lib, params):
        return getattr(lib.optim, name)(params, **kw)
    (tm, _, _), (mm, _, _) = train(torch, problem, make), train(mt, problem, make)
    for a, b in zip(mm.parameters(), tm.parameters()):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=0, atol=TOL)


@pytest.mark.parametrize("call", ["Adagrad(ps, lr=-1)", "Adagrad(ps, lr_decay=-1)", "Adadelta(ps, rho=1.5)",
                                  "Adamax(ps, betas=(1.0, 0.9))", "Adamax(ps, eps=-1)"])
def test_errors_as_torch(call):
    for lib in (torch, mt):
        with pytest.raises(ValueError):
            eval("lib.optim." + call, {"lib": lib, "ps": [lib.ones(2, requires_grad=True)]})


def test_state_as_torch():
    for lib in (torch, mt):
        p = lib.ones(2, requires_grad=True)
        opt = lib.optim.Adagrad([p], initial_accumulator_value=0.3)
        assert sorted(opt.state[p]) == ["step", "sum"]
        np.testing.assert_allclose(opt.state[p]["sum"].tolist(), [0.3, 0.3], rtol=1e-7)
        p.grad = lib.ones(2)
        opt.step()
        assert float(opt.state[p]["step"]) == 1.0


@pytest.mark.parametrize("name", ["Adamax", "NAdam", "RAdam"])
@pytest.mark.parametrize("betas", [(0.9, 1.5), (-0.1, 0.9), (0.9, 1.0)])
def test_bad_betas_raise_torchs_error(name, betas):
    with pytest.raises(ValueError) as theirs:
        getattr(torch.optim, name)([torch.ones(1, requires_grad=True)], betas=betas)
    with pytest.raises(ValueError) as ours:
        getattr(mt.optim, name)([mt.ones(1, requires_grad=True)], betas=betas)
    assert str(ours.value) == str(theirs.value)
