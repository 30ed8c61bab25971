"""The profiler's ranges around public functions and optimizers, beside torch 2.13: `Optimizer.step#SGD.step` and
`Optimizer.zero_grad#...` around a training step's optimizer calls, named by the optimizer's class."""
import pytest
import torch

import microtorch as mt


def _optimizer_ranges(lib, name):
    lib.manual_seed(0)
    model = lib.nn.Linear(3, 2)
    opt = getattr(lib.optim, name)(model.parameters(), lr=0.1)
    with lib.profiler.profile() as prof:
        for _ in range(2):
            opt.zero_grad()
            model(lib.ones(4, 3)).sum().backward()
            opt.step()
    return [e.name for e in prof.events() if e.name.startswith("Optimizer.")]


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop"])
def test_optimizer_ranges_are_torchs(name):
    ours, theirs = (_optimizer_ranges(lib, name) for lib in (mt, torch))
    assert ours == theirs and len(ours) == 4


def test_no_range_while_nobody_profiles():
    from microtorch.autograd import _hooks
    model = mt.nn.Linear(3, 2)
    opt = mt.optim.SGD(model.parameters(), lr=0.1)
    model(mt.ones(4, 3)).sum().backward()
    assert _hooks.range_opener is None
    opt.step()
    with mt.profiler.profile():
        assert _hooks.range_opener is not None
    assert _hooks.range_opener is None
