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


# ---- in-place ops: torch's aten::add_, the out-of-place op doing the work folded into it ----------------------------
_UNMODELLED = ("aten::to", "aten::_to_copy", "aten::empty_strided", "aten::detach", "detach", "aten::clamp_min_")


def _ranges(lib, prepare):
    """(name, [names of its children]) of each range outside any other or inside the optimizer's step, while the
    function prepare(lib) returns runs (ranges microtorch does not model are left out: torch's conversions of a
    Python number, aten::to and below, detach, relu_'s clamp_min_)"""
    run = prepare(lib)
    with lib.profiler.profile() as prof:
        run()
    out = []
    for e in prof.events():
        parent = e.cpu_parent
        if e.name not in _UNMODELLED and (parent is None or parent.name.startswith("Optimizer.step")):
            out.append((e.name, [c.name for c in e.cpu_children if c.name not in _UNMODELLED]))
    return out


def _no_grad_updates(lib):
    x, y = lib.ones(3, 4), lib.full((3, 4), 0.5)

    def run():
        with lib.no_grad():
            x.add_(1), x.mul_(2), x.sub_(y), x.clamp_(min=0), x.zero_(), x.fill_(2.0), x.copy_(y), x.exp_()
            x.add_(y, alpha=2), x.div_(3)
    return run


def _recorded_updates(lib):
    y = lib.ones(3, 4, requires_grad=True) * 1
    d = lib.full((3, 4), 2.0)
    return lambda: (y.add_(1), y.relu_(), y.mul_(d))


def _sgd_step(lib):
    lib.manual_seed(0)
    model = lib.nn.Linear(3, 2)
    opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(lib.ones(4, 3)).sum().backward()
    return opt.step


@pytest.mark.parametrize("prepare", [_no_grad_updates, _recorded_updates])
def test_inplace_ops_are_named_as_torchs(prepare):
    ours, theirs = (_ranges(lib, prepare) for lib in (mt, torch))
    assert ours == theirs
    assert all(name.endswith("_") and not children for name, children in ours)


def test_an_optimizer_step_shows_its_add_():
    ours, theirs = (_ranges(lib, _sgd_step) for lib in (mt, torch))
    assert [name for name, _ in ours] == [name for name, _ in theirs]  # (torch's clone holds its empty_like, copy_)
    assert [children for name, children in ours if name == "aten::add_"] == [[], []]


def test_a_recorded_inplace_op_carries_its_nodes_sequence_number():
    y = mt.ones(3, requires_grad=True) * 1
    with mt.profiler.profile() as prof:
        y.mul_(2)
    (event,) = [e for e in prof.events() if e.name == "aten::mul_"]
    assert event.sequence_nr == y.grad_fn._seq and not event.cpu_children
