"""ASGD, Rprop, Adafactor, Muon and LBFGS against torch 2.13: from the same weights and data, 20 steps
land on the same parameters to 1e-10 in float64 (the helpers of tests/test_optim.py) with their
options and parameter groups; the state (and a state_dict round trip) as torch's; bad arguments raise
torch's exception type and text; swap_in_optimizer_params_and_state as torch's."""
import numpy as np
import pytest
import torch

import microtorch as mt
from test_optim import TOL, assert_same_params, make_model, problem, train  # noqa: F401  (problem is a fixture)


def _muon(**kw):
    return lambda lib, ps: lib.optim.Muon([p for p in ps if p.ndim == 2], **kw)


CASES = {
    "ASGD": lambda lib, ps: lib.optim.ASGD(ps),
    "ASGD t0 lambd alpha weight_decay": lambda lib, ps: lib.optim.ASGD(ps, lr=0.05, lambd=0.01, alpha=0.5, t0=5,
                                                                         weight_decay=0.1),
    "ASGD maximize": lambda lib, ps: lib.optim.ASGD(ps, lr=0.001, t0=3, maximize=True),
    "Rprop": lambda lib, ps: lib.optim.Rprop(ps),
    "Rprop etas step_sizes": lambda lib, ps: lib.optim.Rprop(ps, lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2)),
    "Rprop maximize": lambda lib, ps: lib.optim.Rprop(ps, lr=0.001, maximize=True),
    "Adafactor": lambda lib, ps: lib.optim.Adafactor(ps),
    "Adafactor options": lambda lib, ps: lib.optim.Adafactor(ps, lr=0.05, beta2_decay=-0.5, eps=(1e-20, 1e-2), d=2.0,
                                                             weight_decay=0.1),
    "Adafactor maximize": lambda lib, ps: lib.optim.Adafactor(ps, lr=0.001, maximize=True),
    "Muon": _muon(lr=0.02),
    "Muon no nesterov": _muon(lr=0.02, nesterov=False, momentum=0.8, weight_decay=0.0),
    "Muon match_rms_adamw": _muon(lr=0.01, adjust_lr_fn="match_rms_adamw", ns_steps=3),
}


def _same_state(m_opt, t_opt, tol=TOL):
    m_sd, t_sd = m_opt.state_dict(), t_opt.state_dict()
    assert m_sd["state"].keys() == t_sd["state"].keys()
    for i in t_sd["state"]:
        assert list(m_sd["state"][i]) == list(t_sd["state"][i])
        for k, v in t_sd["state"][i].items():
            np.testing.assert_allclose(np.asarray(m_sd["state"][i][k].tolist()), np.asarray(v.tolist()),
                                       rtol=0, atol=tol, err_msg=k)
            assert str(m_sd["state"][i][k].dtype).split(".")[-1] == str(v.dtype).split(".")[-1]
    assert m_sd["param_groups"] == t_sd["param_groups"]


@pytest.mark.parametrize("name", CASES)
def test_twenty_steps_as_torch(name, problem):
    (mm, mopt, _), (tm, topt, _) = train(mt, problem, CASES[name]), train(torch, problem, CASES[name])
    assert_same_params(mm, tm)
    start = make_model(mt, problem[0])
    moved = max(np.abs(a.detach().numpy() - b.detach().numpy()).max() for a, b in zip(mm.parameters(),
                                                                                      start.parameters()))
    assert 1e-3 < moved < 1e3  # the test can fail: the parameters did move, and stayed finite
    _same_state(mopt, topt)


@pytest.mark.parametrize("name", ["ASGD t0 lambd alpha weight_decay", "Rprop etas step_sizes", "Adafactor options",
                                  "Muon"])
def test_param_groups_as_torch(name, problem):
    make = CASES[name]
    if name == "Muon":
        def make(lib, groups):
            return lib.optim.Muon([{"params": [p for p in g["params"] if p.ndim == 2], **{k: v for k, v in g.items()
                                    if k != "params"}} for g in groups], lr=0.02)
    (mm, mopt, _), (tm, topt, _) = train(mt, problem, make, groups=True), train(torch, problem, make, groups=True)
    assert_same_params(mm, tm)
    _same_state(mopt, topt)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (8, 8), (16, 4), (40, 70)])
def test_muon_orthogonalizes_in_bfloat16_as_torch(shape):
    """The Newton-Schulz iterations in bfloat16 precision (emulated: float32 rounded to 8 bits after each op)
    give torch's bfloat16 numbers."""
    from torch.optim._muon import _zeropower_via_newtonschulz as theirs

    from microtorch.optim.muon import _zeropower_via_newtonschulz as ours
    g = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    want = theirs(torch.tensor(g), (3.4445, -4.7750, 2.0315), 5, 1e-7).float().numpy()
    got = ours(mt.tensor(g), (3.4445, -4.7750, 2.0315), 5, 1e-7).numpy()
    if max(shape) <= 16:
        np.testing.assert_array_equal(got, want)   # bit for bit
    else:   # longer sums in another order than torch's kernel, whose bfloat16 path depends on the CPU
        # (one with native bfloat16 instructions rounds differently): entries a few bfloat16 steps apart
        np.testing.assert_allclose(got, want, rtol=2 ** -5, atol=2 ** -8)
    s = np.linalg.svd(got, compute_uv=False)
    assert 0.3 < s.min() and s.max() < 1.5   # what Newton-Schulz is for: singular values pushed towards 1


def _round_trip(lib, problem, make):
    """10 steps, the state_dict into a fresh optimizer, 10 more steps."""
    weights, x, y = problem
    model = make_model(lib, weights)
    opt = make(lib, model.parameters())
    X, Y = lib.tensor(x), lib.tensor(y)
    for i in range(20):
        if i == 10:
            sd = opt.state_dict()
            opt = make(lib, model.parameters())
            opt.load_state_dict(sd)
        opt.zero_grad()
        loss = ((model(X) - Y) ** 2).mean() + 0.1 * (model(X) ** 4).mean()
        loss.backward()
        opt.step()
    return model, opt


@pytest.mark.parametrize("name", ["ASGD t0 lambd alpha weight_decay", "Rprop", "Adafactor", "Muon"])
def test_state_dict_round_trip_as_torch(name, problem):
    """(torch casts the loaded floating state to the parameter's dtype: ASGD's eta becomes float64, so the
    trajectory after a round trip differs from an uninterrupted one by ~1e-10; microtorch does the same.)"""
    (mm, mopt), (tm, topt) = _round_trip(mt, problem, CASES[name]), _round_trip(torch, problem, CASES[name])
    assert_same_params(mm, tm)
    _same_state(mopt, topt)


# ---- LBFGS: steps with a closure ------------------------------------------------------------------
LBFGS_CASES = [{}, {"line_search_fn": "strong_wolfe"}, {"lr": 0.5, "max_iter": 7, "history_size": 3},
               {"line_search_fn": "strong_wolfe", "history_size": 2, "max_iter": 30, "max_eval": 12},
               {"lr": 0.1, "tolerance_change": 1e-3}]


def _lbfgs(lib, problem, kw, steps=4, dtype="float64"):
    weights, x, y = problem
    model = make_model(lib, weights).to(getattr(lib, dtype))
    opt = lib.optim.LBFGS(model.parameters(), **kw)
    X, Y = lib.tensor(x, dtype=getattr(lib, dtype)), lib.tensor(y, dtype=getattr(lib, dtype))
    calls, losses = [0], []

    def closure():
        calls[0] += 1
        opt.zero_grad()
        loss = ((model(X) - Y) ** 2).mean() + 0.1 * (model(X) ** 4).mean()
        loss.backward()
        return loss
    for _ in range(steps):
        losses.append(opt.step(closure).item())
    return model, opt, calls[0], losses


@pytest.mark.parametrize("kw", LBFGS_CASES)
def test_lbfgs_as_torch(problem, kw):
    (mm, mopt, mcalls, mloss), (tm, topt, tcalls, tloss) = _lbfgs(mt, problem, kw), _lbfgs(torch, problem, kw)
    assert mcalls == tcalls   # the closure ran as many times (the line search took the same path)
    np.testing.assert_allclose(mloss, tloss, rtol=1e-10)
    assert tloss[-1] < 0.5 * tloss[0]   # the test can fail: it did optimize
    assert_same_params(mm, tm, tol=1e-9)
    ms, ts = mopt.state_dict()["state"][0], topt.state_dict()["state"][0]
    assert list(ms) == list(ts)
    assert (ms["func_evals"], ms["n_iter"]) == (ts["func_evals"], ts["n_iter"])
    np.testing.assert_allclose(float(ms["t"]), float(ts["t"]), rtol=1e-9)
    # d comes out of ~80 dot products and two-loop recursions: summation order (numpy vs torch) shows at ~1e-8
    np.testing.assert_allclose(ms["d"].numpy(), ts["d"].numpy(), rtol=1e-6, atol=1e-10)
    assert len(ms["old_dirs"]) == len(ts["old_dirs"])


def test_lbfgs_float32_as_torch(problem):
    kw = {"line_search_fn": "strong_wolfe", "max_iter": 10}
    (mm, _, mcalls, mloss), (tm, _, tcalls, tloss) = (_lbfgs(mt, problem, kw, 2, "float32"),
                                                      _lbfgs(torch, problem, kw, 2, "float32"))
    assert mcalls == tcalls
    np.testing.assert_allclose(mloss, tloss, rtol=1e-5)
    assert_same_params(mm, tm, tol=1e-4)


def test_lbfgs_stops_at_a_stationary_point():
    for lib in (torch, mt):
        p = lib.zeros(3, dtype=lib.float64, requires_grad=True)
        opt = lib.optim.LBFGS([p])
        calls = []

        def closure():
            calls.append(1)
            opt.zero_grad()
            loss = (p ** 2).sum()
            loss.backward()
            return loss
        assert float(opt.step(closure)) == 0.0
        assert len(calls) == 1 and opt.state[p]["n_iter"] == 0


def test_lbfgs_errors_as_torch():
    for call, exc in [("LBFGS(ps, lr=-1)", ValueError),
                      ("LBFGS([{'params': ps}, {'params': [lib.ones(1, requires_grad=True)]}])", ValueError)]:
        texts = []
        for lib in (torch, mt):
            with pytest.raises(exc) as info:
                eval("lib.optim." + call, {"lib": lib, "ps": [lib.ones(2, requires_grad=True)]})
            texts.append(str(info.value))
        assert texts[0] == texts[1]
    for lib in (torch, mt):
        p = lib.ones(2, requires_grad=True)
        opt = lib.optim.LBFGS([p], line_search_fn="armijo")

        def closure():
            opt.zero_grad()
            loss = (p ** 2).sum()
            loss.backward()
            return loss
        with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
            opt.step(closure)


# ---- bad arguments: torch's type and text ---------------------------------------------------------
BAD = ["ASGD(ps, lr=-0.1)", "ASGD(ps, weight_decay=-1)", "Rprop(ps, lr=-1)", "Rprop(ps, etas=(1.5, 1.2))",
       "Rprop(ps, etas=(0.5, 0.9))", "Adafactor(ps, lr=-1)", "Adafactor(ps, beta2_decay=0.5)",
       "Adafactor(ps, eps=(-1, 1e-3))", "Adafactor(ps, eps=(None, -1))", "Adafactor(ps, d=0.5)",
       "Adafactor(ps, weight_decay=-1)", "Muon(ps2, lr=-1)", "Muon(ps2, momentum=-1)", "Muon(ps2, weight_decay=-1)",
       "Muon(ps2, adjust_lr_fn='fast')"]


@pytest.mark.parametrize("call", ["ASGD(ps, lr='a')", "Rprop(ps, lr=None)", "Adam(ps, lr='0.1')", "LBFGS(ps).step(None)",
                                  "LBFGS(ps).step()", "ASGD(ps, foo=1)"])
def test_bad_types_raise_typeerror_as_torch(call):
    for lib in (torch, mt):
        with pytest.raises(TypeError):
            eval("lib.optim." + call, {"lib": lib, "ps": [lib.ones(2, requires_grad=True)]})


@pytest.mark.parametrize("call", BAD)
def test_bad_arguments_raise_torchs_error(call):
    texts = []
    for lib in (torch, mt):
        env = {"lib": lib, "ps": [lib.ones(2, requires_grad=True)], "ps2": [lib.ones(2, 2, requires_grad=True)]}
        with pytest.raises(ValueError) as info:
            eval("lib.optim." + call, env)
        texts.append(str(info.value))
    assert texts[1] == texts[0]


def test_muon_refuses_a_vector_like_torch():
    for lib in (torch, mt):
        with pytest.raises(ValueError, match="Muon only supports 2D parameters whereas we found a parameter with "
                                             r"size: (torch|microtorch)\.Size\(\[3\]\)"):
            lib.optim.Muon([lib.ones(3, requires_grad=True)])


def test_new_optimizer_state_as_torch():
    """What the state holds after one step, per optimizer (names, dtypes, shapes)."""
    for make in ["ASGD(ps)", "Rprop(ps)", "Adafactor(ps)", "Muon(ps[:1])"]:
        seen = []
        for lib in (torch, mt):
            ps = [lib.ones(4, 3, dtype=lib.float64, requires_grad=True), lib.ones(3, dtype=lib.float64,
                                                                                  requires_grad=True)]
            opt = eval("lib.optim." + make, {"lib": lib, "ps": ps})
            for p in ps:
                p.grad = lib.full_like(p, 0.5)
            opt.step()
            seen.append([(k, str(v.dtype).split(".")[1], tuple(v.shape)) for k, v in opt.state[ps[0]].items()])
        assert seen[0] == seen[1], make


# ---- swap_in_optimizer_params_and_state ----------------------------------------------------------
def _swap(lib):
    w, b = lib.ones(2, 3, dtype=lib.float64, requires_grad=True), lib.zeros(3, dtype=lib.float64, requires_grad=True)
    opt = lib.optim.Adam([{"params": [w]}, {"params": [b], "lr": 0.5}], lr=0.1)
    for p in (w, b):
        p.grad = lib.full_like(p, 0.25)
    opt.step()
    sd = opt.state_dict()
    sd["state"] = {k: {n: v.clone() for n, v in s.items()} for k, s in sd["state"].items()}
    sd["param_groups"][1]["lr"] = 0.01
    fake = {"w": w.detach().clone(), "b": b.detach().clone()}
    for p in fake.values():
        p.grad = lib.full_like(p, -1.0)
    with lib.optim.swap_in_optimizer_params_and_state(opt, fake, sd):
        inside = (opt.param_groups[1]["params"][0] is fake["b"], opt.param_groups[1]["lr"])
        opt.step()
    numbers = [w.tolist(), b.tolist(), fake["w"].tolist(), fake["b"].tolist(), sd["state"][1]["exp_avg"].tolist()]
    return numbers, (inside, opt.param_groups[1]["lr"], opt.param_groups[0]["params"][0] is w,
                     float(opt.state[w]["step"]), float(sd["state"][0]["step"]))


def test_swap_in_as_torch():
    """Inside: the fake tensors and the swapped hyperparameters; the state tensors updated in place; after:
    the live parameters untouched, the live state and lr back."""
    (m_num, m_flags), (t_num, t_flags) = _swap(mt), _swap(torch)
    assert m_flags == t_flags == ((True, 0.01), 0.5, True, 1.0, 2.0)
    for a, b in zip(m_num, t_num):
        np.testing.assert_allclose(a, b, rtol=1e-12)


@pytest.mark.parametrize("how", ["empty", "not a dict", "groups", "extra", "keys", "count"])
def test_swap_in_errors_as_torch(how):
    texts = []
    for lib in (torch, mt):
        p = lib.ones(2, requires_grad=True)
        opt = lib.optim.SGD([p], lr=0.1, momentum=0.9)
        if how != "empty":
            p.grad = lib.ones(2)
            opt.step()
        sd = opt.state_dict()
        if how == "not a dict":
            sd = [sd]
        elif how == "groups":
            sd["param_groups"] = sd["param_groups"] * 2
        elif how == "extra":
            sd["state"][7] = {}
        elif how == "keys":
            sd["param_groups"][0]["betas"] = (0.9, 0.9)
        elif how == "count":
            sd["param_groups"][0]["params"] = [0, 1]
        with pytest.raises(RuntimeError) as info:
            with lib.optim.swap_in_optimizer_params_and_state(opt, {"p": p.detach().clone()}, sd):
                pass
        texts.append(str(info.value))
    assert texts[1] == texts[0]


def test_lbfgs_state_dict_round_trip_as_torch(problem):
    """Two steps, the state (history lists, directions) into a fresh LBFGS, two more steps."""
    kw = {"line_search_fn": "strong_wolfe", "history_size": 4, "max_iter": 5}
    out = []
    for lib in (torch, mt):
        weights, x, y = problem
        model = make_model(lib, weights)
        X, Y = lib.tensor(x), lib.tensor(y)
        opt = lib.optim.LBFGS(model.parameters(), **kw)
        losses = []
        for i in range(4):
            if i == 2:
                sd = opt.state_dict()
                opt = lib.optim.LBFGS(model.parameters(), **kw)
                opt.load_state_dict(sd)

            def closure():
                opt.zero_grad()
                loss = ((model(X) - Y) ** 2).mean() + 0.1 * (model(X) ** 4).mean()
                loss.backward()
                return loss
            losses.append(opt.step(closure).item())
        out.append((model, losses, opt.state_dict()["state"][0]))
    (tm, tl, ts), (mm, ml, ms) = out
    np.testing.assert_allclose(ml, tl, rtol=1e-10)
    assert_same_params(mm, tm, tol=1e-9)
    assert (ms["func_evals"], ms["n_iter"], len(ms["old_dirs"])) == (ts["func_evals"], ts["n_iter"],
                                                                    len(ts["old_dirs"]))


@pytest.mark.parametrize("make", ["Adafactor(ps, lr=0.05)", "Adafactor(ps, weight_decay=0.1, maximize=True)",
                                  "ASGD(ps, lr=0.05, t0=2)", "Rprop(ps, lr=0.05)", "LBFGS(ps[:2])"])
def test_odd_shapes_and_missing_grads_as_torch(make):
    """3-d (Adafactor factors the last two dims), 0-d and 1-d parameters; one parameter never gets a
    gradient (it stays as it was, and has no state, as in torch)."""
    rng = np.random.default_rng(3)
    inits = [rng.standard_normal(s) for s in [(2, 3, 4), (), (5,), (2,)]]
    grads = [[rng.standard_normal(np.shape(a)) for a in inits[:3]] for _ in range(10)]
    out = []
    for lib in (torch, mt):
        ps = [lib.tensor(a, requires_grad=True) for a in inits]
        opt = eval("lib.optim." + make, {"lib": lib, "ps": ps})
        for gs in grads:
            def closure():
                for p, g in zip(ps, gs):
                    p.grad = lib.tensor(g) + p.detach() * 0.5   # a gradient that depends on where p is
                return sum(((p.detach() ** 2).sum() * 0.25 for p in ps[:3]), lib.tensor(0.0, dtype=lib.float64))
            closure()
            opt.step(closure)
        out.append(([p.detach().numpy().copy() for p in ps], sorted(len(opt.state[p]) for p in ps)))
    tol = 1e-8 if make.startswith("LBFGS") else 1e-10   # LBFGS: 20 iterations of dot products (summation order)
    for a, b in zip(out[1][0], out[0][0]):
        np.testing.assert_allclose(a, b, rtol=tol, atol=1e-12)
    assert out[1][1] == out[0][1]
    np.testing.assert_array_equal(out[1][0][3], inits[3])


@pytest.mark.parametrize("kw, steps", [({"line_search_fn": "strong_wolfe"}, 6), ({"lr": 0.1, "history_size": 5}, 2)])
def test_lbfgs_on_rosenbrock_as_torch(kw, steps):
    """The classroom example: Rosenbrock's valley from (-1.5, 2); strong Wolfe reaches (1, 1). (Fixed steps
    of lr 0.1 zigzag chaotically: torch's dot products round 1 ulp apart from numpy's from iteration ~18 on,
    and the gap grows to 0.2 within 100 iterations; after two steps (40 iterations) it is still below 1e-9.)"""
    out = []
    for lib in (torch, mt):
        xy = lib.tensor([-1.5, 2.0], dtype=lib.float64, requires_grad=True)
        opt = lib.optim.LBFGS([xy], **kw)

        def closure():
            opt.zero_grad()
            loss = (1 - xy[0]) ** 2 + 100 * (xy[1] - xy[0] ** 2) ** 2
            loss.backward()
            return loss
        path = [xy.detach().numpy().copy()]
        for _ in range(steps):
            opt.step(closure)
            path.append(xy.detach().numpy().copy())
        out.append((np.array(path), opt.state[xy]["func_evals"]))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-9, atol=1e-12)
    assert out[1][1] == out[0][1]
    if "line_search_fn" in kw:
        np.testing.assert_allclose(out[1][0][-1], [1.0, 1.0], atol=1e-5)
