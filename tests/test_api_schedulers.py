"""The added learning-rate schedulers against torch: the same lr sequence over 15 epochs (chained with
another scheduler too), ReduceLROnPlateau's reductions for a given metric sequence, and errors."""
import numpy as np
import pytest
import torch

import microtorch as mt

SCHEDULERS = ["MultiplicativeLR(opt, lambda e: 0.9)", "ConstantLR(opt)", "ConstantLR(opt, factor=0.5, total_iters=3)",
              "LinearLR(opt)", "LinearLR(opt, start_factor=0.2, end_factor=0.8, total_iters=7)",
              "PolynomialLR(opt)", "PolynomialLR(opt, total_iters=8, power=2.0)"]


def _lrs(lib, expr, chained=False):
    w = lib.ones(1, requires_grad=True)
    opt = lib.optim.SGD([{"params": [w]}, {"params": [lib.ones(1, requires_grad=True)], "lr": 0.5}], lr=0.1)
    scheds = [eval("S." + expr, {"S": lib.optim.lr_scheduler, "opt": opt})]
    if chained:
        scheds.append(lib.optim.lr_scheduler.ExponentialLR(opt, 0.95))
    out = []
    for _ in range(15):
        opt.step()
        for s in scheds:
            s.step()
        out.append(scheds[0].get_last_lr())
    return out


@pytest.mark.parametrize("expr", SCHEDULERS)
@pytest.mark.parametrize("chained", [False, True])
def test_lr_sequence_as_torch(expr, chained):
    np.testing.assert_allclose(_lrs(mt, expr, chained), _lrs(torch, expr, chained), rtol=1e-12)


@pytest.mark.parametrize("kw", [{}, {"mode": "max", "factor": 0.5, "patience": 1}, {"threshold_mode": "abs",
                                                                                    "threshold": 0.1, "cooldown": 2,
                                                                                    "patience": 0, "min_lr": 0.02}])
def test_reduce_on_plateau_as_torch(kw):
    metrics = [1.0, 0.9, 0.95, 0.95, 0.95, 0.89, 0.89, 0.89, 0.89, 0.5] * 3
    out = []
    for lib in (torch, mt):
        opt = lib.optim.SGD([lib.ones(1, requires_grad=True)], lr=0.1)
        sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **kw)
        lrs = []
        for m in metrics:
            sched.step(m)
            lrs.append((opt.param_groups[0]["lr"], sched.num_bad_epochs, sched.get_last_lr()[0]))
        out.append(lrs)
    np.testing.assert_allclose(out[1], out[0], rtol=1e-12)


@pytest.mark.parametrize("call", ["ConstantLR(opt, factor=2)", "LinearLR(opt, start_factor=0)",
                                  "ReduceLROnPlateau(opt, factor=1.5)", "ReduceLROnPlateau(opt, mode='up')",
                                  "MultiplicativeLR(opt, [lambda e: 1, lambda e: 1])"])
def test_errors_as_torch(call):
    for lib in (torch, mt):
        opt = lib.optim.SGD([lib.ones(1, requires_grad=True)], lr=0.1)
        with pytest.raises(ValueError):
            eval("S." + call, {"S": lib.optim.lr_scheduler, "opt": opt})
