"""microtorch.optim against the torch oracle: from the same weights, 20 steps of every optimizer
(and of the learning-rate schedulers) land on the same parameters to 1e-10 in float64."""
import math

import numpy as np
import pytest
import torch

import microtorch as mt

TOL = 1e-10
STEPS = 20


def make_model(lib, weights):
    n = lib.nn
    model = n.Sequential(n.Linear(3, 5), n.Tanh(), n.Linear(5, 2)).double()
    with lib.no_grad():
        for p, w in zip(model.parameters(), weights):
            p.copy_(lib.tensor(w))
    return model


@pytest.fixture
def problem(rng):
    weights = [rng.normal(size=s) for s in [(5, 3), (5,), (2, 5), (2,)]]
    x, y = rng.normal(size=(8, 3)), rng.normal(size=(8, 2))
    return weights, x, y


def train(lib, problem, make_opt, make_sched=None, steps=STEPS, groups=False):
    weights, x, y = problem
    model = make_model(lib, weights)
    if groups:  # two parameter groups with their own options
        params = [{"params": model[0].parameters()}, {"params": model[2].parameters(), "lr": 0.003}]
    else:
        params = model.parameters()
    opt = make_opt(lib, params)
    sched = make_sched(lib, opt) if make_sched else None
    X, Y = lib.tensor(x), lib.tensor(y)
    lrs = []
    for _ in range(steps):
        opt.zero_grad()
        loss = ((model(X) - Y) ** 2).mean() + 0.1 * (model(X) ** 4).mean()
        loss.backward()
        opt.step()
        if sched is not None:
            sched.step()
        lrs.append([g["lr"] for g in opt.param_groups])
    return model, opt, lrs


OPTIMIZERS = {
    "SGD": lambda lib, p: lib.optim.SGD(p, lr=0.05),
    "SGD momentum": lambda lib, p: lib.optim.SGD(p, lr=0.05, momentum=0.9),
    "SGD momentum dampening weight_decay": lambda lib, p: lib.optim.SGD(p, lr=0.05, momentum=0.8, dampening=0.3,
                                                                        weight_decay=0.1),
    "SGD nesterov": lambda lib, p: lib.optim.SGD(p, lr=0.01, momentum=0.9, nesterov=True),
    "Adam": lambda lib, p: lib.optim.Adam(p, lr=0.01),
    "Adam betas eps weight_decay": lambda lib, p: lib.optim.Adam(p, lr=0.02, betas=(0.8, 0.9), eps=1e-6,
                                                                 weight_decay=0.05),
    "Adam amsgrad": lambda lib, p: lib.optim.Adam(p, lr=0.01, amsgrad=True),
    "AdamW": lambda lib, p: lib.optim.AdamW(p, lr=0.01),
    "AdamW amsgrad weight_decay maximize": lambda lib, p: lib.optim.AdamW(p, lr=0.01, amsgrad=True, weight_decay=0.3,
                                                                          maximize=True),
    "RMSprop": lambda lib, p: lib.optim.RMSprop(p, lr=0.01),
    "RMSprop centered momentum weight_decay": lambda lib, p: lib.optim.RMSprop(p, lr=0.01, alpha=0.9, centered=True,
                                                                               momentum=0.5, weight_decay=0.1),
}


def assert_same_params(m_model, t_model, tol=TOL):
    for (k, mp), (k2, tp) in zip(m_model.named_parameters(), t_model.named_parameters()):
        assert k == k2
        np.testing.assert_allclose(mp.detach().numpy(), tp.detach().numpy(), rtol=0, atol=tol, err_msg=k)


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_twenty_steps_match_torch(name, problem):
    m_model, m_opt, _ = train(mt, problem, OPTIMIZERS[name])
    t_model, t_opt, _ = train(torch, problem, OPTIMIZERS[name])
    assert_same_params(m_model, t_model)
    start = make_model(mt, problem[0])
    moved = max(np.abs(a.detach().numpy() - b.detach().numpy()).max()
                for a, b in zip(m_model.parameters(), start.parameters()))
    assert moved > 1e-3  # the test can fail: the parameters did move
    # the optimizer state (momentum buffers, moving averages, step counts) matches too
    m_sd, t_sd = m_opt.state_dict(), t_opt.state_dict()
    assert m_sd["state"].keys() == t_sd["state"].keys()
    for i in t_sd["state"]:
        assert list(m_sd["state"][i]) == list(t_sd["state"][i])
        for k, v in t_sd["state"][i].items():
            np.testing.assert_allclose(m_sd["state"][i][k].numpy(), v.numpy(), rtol=0, atol=TOL)
    assert m_sd["param_groups"] == t_sd["param_groups"]


@pytest.mark.parametrize("name", ["SGD momentum", "Adam", "RMSprop centered momentum weight_decay"])
def test_param_groups_match_torch(name, problem):
    m_model, m_opt, _ = train(mt, problem, OPTIMIZERS[name], groups=True)
    t_model, t_opt, _ = train(torch, problem, OPTIMIZERS[name], groups=True)
    assert_same_params(m_model, t_model)
    assert [g["lr"] for g in m_opt.param_groups] == [g["lr"] for g in t_opt.param_groups]
    assert m_opt.state_dict()["param_groups"] == t_opt.state_dict()["param_groups"]


SCHEDULERS = {
    "StepLR": lambda lib, o: lib.optim.lr_scheduler.StepLR(o, step_size=4, gamma=0.5),
    "CosineAnnealingLR": lambda lib, o: lib.optim.lr_scheduler.CosineAnnealingLR(o, T_max=7, eta_min=0.001),
    "CosineAnnealingLR past T_max": lambda lib, o: lib.optim.lr_scheduler.CosineAnnealingLR(o, T_max=3),
    "MultiStepLR": lambda lib, o: lib.optim.lr_scheduler.MultiStepLR(o, milestones=[3, 8, 8], gamma=0.3),
    "ExponentialLR": lambda lib, o: lib.optim.lr_scheduler.ExponentialLR(o, gamma=0.9),
    "LambdaLR": lambda lib, o: lib.optim.lr_scheduler.LambdaLR(o, lambda e: 1 / (1 + e)),
}


@pytest.mark.parametrize("sched", SCHEDULERS)
def test_schedulers_match_torch(sched, problem):
    opt_name = "Adam" if sched.startswith(("Cosine", "Exponential")) else "SGD momentum"
    m_model, _, m_lrs = train(mt, problem, OPTIMIZERS[opt_name], SCHEDULERS[sched], groups=True)
    t_model, _, t_lrs = train(torch, problem, OPTIMIZERS[opt_name], SCHEDULERS[sched], groups=True)
    np.testing.assert_allclose(m_lrs, t_lrs, rtol=1e-13, atol=0)
    assert_same_params(m_model, t_model)
    assert len({tuple(lr) for lr in m_lrs}) > 2  # the schedule did change the rate


def test_scheduler_api_and_order_warning(problem):
    p = [mt.nn.Parameter(mt.ones(2))]
    opt = mt.optim.SGD(p, lr=1.0)
    sched = mt.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    assert sched.get_last_lr() == [1.0] and opt.param_groups[0]["initial_lr"] == 1.0
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        sched.step()
    assert sched.get_last_lr() == [0.5]
    state = sched.state_dict()
    assert "optimizer" not in state and state["last_epoch"] == 1
    other = mt.optim.lr_scheduler.StepLR(mt.optim.SGD(p, lr=1.0), step_size=1, gamma=0.5)
    other.load_state_dict(state)
    assert other.last_epoch == 1
    with pytest.raises(KeyError, match="initial_lr"):
        mt.optim.lr_scheduler.StepLR(mt.optim.SGD([mt.nn.Parameter(mt.ones(1))], lr=1.0), 1, last_epoch=3)


@pytest.mark.parametrize("name", ["SGD momentum", "Adam amsgrad", "RMSprop centered momentum weight_decay"])
def test_state_dict_round_trip_resumes_training(name, problem, tmp_path):
    """Train 10 steps, save model and optimizer, load both into fresh objects, train 10 more:
    the result is torch's 20 uninterrupted steps."""
    weights, x, y = problem
    model, opt, _ = train(mt, problem, OPTIMIZERS[name], steps=10)
    mt.save({"model": model.state_dict(), "optim": opt.state_dict()}, tmp_path / "ckpt.pt")
    ckpt = mt.load(tmp_path / "ckpt.pt")
    model2 = make_model(mt, [np.zeros_like(w) for w in weights])
    opt2 = OPTIMIZERS[name](mt, model2.parameters())
    model2.load_state_dict(ckpt["model"])
    opt2.load_state_dict(ckpt["optim"])
    X, Y = mt.tensor(x), mt.tensor(y)
    for _ in range(10):
        opt2.zero_grad()
        (((model2(X) - Y) ** 2).mean() + 0.1 * (model2(X) ** 4).mean()).backward()
        opt2.step()
    t_model, _, _ = train(torch, problem, OPTIMIZERS[name])
    assert_same_params(model2, t_model)


def test_load_state_dict_rejects_mismatches():
    a = [mt.nn.Parameter(mt.ones(2)), mt.nn.Parameter(mt.ones(3))]
    opt = mt.optim.Adam(a)
    for p in a:
        p.grad = mt.ones(p.shape)
    opt.step()
    sd = opt.state_dict()
    with pytest.raises(ValueError, match="different number of parameter groups"):
        mt.optim.Adam([{"params": a[:1]}, {"params": a[1:]}]).load_state_dict(sd)
    with pytest.raises(ValueError, match="doesn't match the size"):
        mt.optim.Adam(a[:1]).load_state_dict(sd)
    swapped = mt.optim.Adam([a[1], a[0]])
    with pytest.raises(ValueError, match="has shape"):
        swapped.load_state_dict(sd)
    assert len(swapped.state) == 0  # nothing was loaded


def test_optimizer_api_and_errors():
    p = mt.nn.Parameter(mt.ones(2))
    for lib_opt in (mt.optim.SGD, mt.optim.Adam, mt.optim.AdamW, mt.optim.RMSprop):
        t_opt = getattr(torch.optim, lib_opt.__name__)([torch.nn.Parameter(torch.ones(2))], lr=0.1)
        assert repr(lib_opt([p], lr=0.1)) == repr(t_opt)
    with pytest.raises(ValueError, match="Invalid learning rate"):
        mt.optim.SGD([p], lr=-1)
    with pytest.raises(ValueError, match="Nesterov momentum requires"):
        mt.optim.SGD([p], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1"):
        mt.optim.Adam([p], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="empty parameter list"):
        mt.optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="iterable of Tensors"):
        mt.optim.SGD(p, lr=0.1)
    with pytest.raises(ValueError, match="non-leaf"):
        mt.optim.SGD([p * 2], lr=0.1)
    with pytest.raises(ValueError, match="more than one parameter group"):
        mt.optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1)
    opt = mt.optim.SGD([p], lr=0.1)
    p.grad = mt.ones(2)
    v = p._version
    opt.step()
    assert p._version > v  # in-place update bumps the version, as torch's does
    np.testing.assert_allclose(p.detach().numpy(), 0.9)
    opt.zero_grad()
    assert p.grad is None
    p.grad = mt.ones(2)
    opt.zero_grad(set_to_none=False)
    assert np.all(p.grad.numpy() == 0)
    calls = []
    opt.register_step_post_hook(lambda o, a, k: calls.append(o))
    assert opt.step(lambda: 3.0) == 3.0 and calls == [opt]
    np.testing.assert_allclose(p.detach().numpy(), 0.9)  # a zero gradient moves nothing
    named = mt.optim.Adam(mt.nn.Linear(2, 1).named_parameters())
    assert named.param_groups[0]["param_names"] == ["weight", "bias"]


def test_step_under_a_recorded_graph_is_detected():
    """Updating a parameter that a graph saved makes a later backward through it fail, as in torch."""
    w = mt.nn.Parameter(mt.ones(2))
    opt = mt.optim.SGD([w], lr=0.1)
    y = (w * w).sum()
    y.backward(retain_graph=True)
    opt.step()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()
    assert math.isclose(w.detach().numpy()[0], 0.8, rel_tol=1e-6)
