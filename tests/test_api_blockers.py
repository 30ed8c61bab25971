"""The torch API that tutorials stopped on (issue 13), checked against torch: model ensembling
with stack_module_state + vmap over a 'meta' base model, creation with size=, the smooth L1 and
Huber losses, numpy's axis=/keepdims= spellings, nn.DataParallel on the CPU."""
import copy
import warnings

import numpy as np
import pytest
import torch

import microtorch as mt
from op_oracle import check_op, close


# ---- ensembling: stack_module_state, functional_call, vmap, a meta base model ---------------------------
def _mlp(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))


def _twin_models(n):
    tmodels = [_mlp(torch).double() for _ in range(n)]
    mmodels = [_mlp(mt).double() for _ in range(n)]
    for t, m in zip(tmodels, mmodels):
        m.load_state_dict({k: mt.tensor(v.detach().numpy().copy()) for k, v in t.state_dict().items()})
    return tmodels, mmodels


def _ensemble(lib, models, data, in_dims):
    params, buffers = lib.func.stack_module_state(models)
    base = copy.deepcopy(models[0]).to("meta")

    def fmodel(p, b, x):
        return lib.func.functional_call(base, (p, b), (x,))
    return params, lib.func.vmap(fmodel, in_dims=in_dims)(params, buffers, data)


@pytest.mark.parametrize("in_dims", [(0, 0, None), (0, 0, 0)])
def test_ensemble_of_models_matches_torch(in_dims):
    tmodels, mmodels = _twin_models(4)
    data = np.random.default_rng(0).standard_normal((4, 5, 6) if in_dims[2] == 0 else (5, 6))
    pt, yt = _ensemble(torch, tmodels, torch.tensor(data), in_dims)
    pm, ym = _ensemble(mt, mmodels, mt.tensor(data), in_dims)
    close(ym, yt, "ensemble output")
    assert list(pm) == list(pt) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    for k in pt:
        assert pm[k].shape == pt[k].shape and pm[k].is_leaf and pm[k].requires_grad
    # the stacked parameters are new leaves an optimizer can train: gradients flow to them
    gt = torch.autograd.grad(yt.sum(), list(pt.values()))
    gm = mt.autograd.grad(ym.sum(), list(pm.values()))
    for a, b in zip(gm, gt):
        close(a, b, "grad of stacked params")


def test_stack_module_state_errors_as_torch():
    for lib in (torch, mt):
        with pytest.raises(RuntimeError, match="Expected at least one model"):
            lib.func.stack_module_state([])
        a, b = lib.nn.Linear(2, 2), lib.nn.Linear(2, 2).eval()
        with pytest.raises(RuntimeError, match="same training/eval mode"):
            lib.func.stack_module_state([a, b])
        with pytest.raises(RuntimeError, match="same class"):
            lib.func.stack_module_state([a, lib.nn.Sequential(lib.nn.Linear(2, 2))])
        c = lib.nn.Linear(2, 2)
        c.bias.requires_grad_(False)
        with pytest.raises(RuntimeError, match="bias from each model to have the same .requires_grad"):
            lib.func.stack_module_state([a, c])


def test_meta_device_as_torch():
    for lib in (torch, mt):
        m = lib.nn.Linear(2, 3).to("meta")
        assert m.weight.device.type == "meta" and m.weight.is_meta and m.weight.requires_grad
        assert isinstance(m.weight, lib.nn.Parameter) and tuple(m.weight.shape) == (3, 2)
        t = lib.zeros(2, 3, device="meta")
        assert str(t.device) == "meta" and t.dtype == lib.float32
        with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor; no data!"):
            t.tolist()
        with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor; no data!"):
            t.to("cpu")
    assert repr(mt.zeros(2, 3, device="meta")) == repr(torch.zeros(2, 3, device="meta"))
    assert repr(mt.nn.Linear(2, 3).to("meta").weight) == repr(torch.nn.Linear(2, 3).to("meta").weight)
    assert repr(mt.ones(4, dtype=mt.float64, device="meta")).replace("micro", "") == \
        repr(torch.ones(4, dtype=torch.float64, device="meta"))


# ---- creation functions take size= ---------------------------------------------------------------
CREATION = ["randn(size=())", "zeros(size=(2, 3))", "ones(size=[2])", "rand(size=(2,))", "empty(size=(2, 1))",
            "full(size=(2,), fill_value=3.)", "randint(0, 5, size=(3,))", "randint(high=5, size=(3,))",
            "randint(5, size=(3,))", "randint(low=2, high=5, size=(3,))", "randperm(n=4)", "arange(end=4)",
            "arange(start=1, end=4)", "linspace(start=0, end=1, steps=3)", "eye(n=2)",
            "zeros((2, 3), dtype=lib.int32)", "zeros_like(input=lib.ones(2))", "randn(2, 3, device='meta')"]
CREATION_ERRORS = ["zeros(2, size=(3,))", "zeros()", "zeros(size=3)", "ones(2, sizes=(3,))"]


@pytest.mark.parametrize("expr", CREATION)
def test_creation_keywords_as_torch(expr):
    t, m = eval("lib." + expr, {"lib": torch}), eval("lib." + expr, {"lib": mt})
    assert tuple(m.shape) == tuple(t.shape) and str(m.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    assert m.device.type == t.device.type


@pytest.mark.parametrize("expr", CREATION_ERRORS)
def test_creation_errors_as_torch(expr):
    with pytest.raises(TypeError):
        eval("lib." + expr, {"lib": torch})
    with pytest.raises(TypeError):
        eval("lib." + expr, {"lib": mt})


# ---- smooth_l1_loss and huber_loss ---------------------------------------------------------------
LOSSES = [("smooth_l1_loss", dict(), "SmoothL1LossBackward0"),
          ("smooth_l1_loss", dict(beta=0.3, reduction="sum"), "SmoothL1LossBackward0"),
          ("smooth_l1_loss", dict(beta=2.0, reduction="none"), "SmoothL1LossBackward0"),
          ("smooth_l1_loss", dict(beta=0.0), "MeanBackward0"),
          ("huber_loss", dict(), "HuberLossBackward0"),
          ("huber_loss", dict(delta=0.4, reduction="sum"), "HuberLossBackward0"),
          ("huber_loss", dict(delta=2.5, reduction="none"), "HuberLossBackward0")]


@pytest.mark.parametrize("name, kw, grad_fn", LOSSES)
def test_robust_losses_as_torch(name, kw, grad_fn):
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((4, 5)) * 2, rng.standard_normal((4, 5))
    check_op(lambda lib, a, b: getattr(lib.nn.functional, name)(a, b, **kw), x, y, grad_fn=grad_fn,
             second_order=kw.get("beta") != 0.0)


def test_weighted_huber_and_modules_as_torch():
    rng = np.random.default_rng(4)
    x, y, w = rng.standard_normal(6), rng.standard_normal(6), rng.random(6)
    check_op(lambda lib, a, b, c: lib.nn.functional.huber_loss(a, b, delta=0.5, weight=c), x, y, w, vmap=False)
    check_op(lambda lib, a, b: lib.nn.SmoothL1Loss(beta=0.5)(a, b), x, y)
    check_op(lambda lib, a, b: lib.nn.HuberLoss(reduction="sum", delta=0.7)(a, b), x, y)
    check_op(lambda lib, a, b: lib.nn.SmoothL1Loss(reduce=False)(a, b), x, y)
    assert repr(mt.nn.HuberLoss(delta=2.0)) == repr(torch.nn.HuberLoss(delta=2.0))


@pytest.mark.parametrize("call, exc, fragment", [
    ("smooth_l1_loss(x, y, beta=-1.)", RuntimeError, "does not support negative values for beta"),
    ("huber_loss(x, y, delta=0.)", RuntimeError, "does not support non-positive values for delta"),
    ("huber_loss(x, y, reduction='bad')", ValueError, "is not a valid value for reduction"),
    ("smooth_l1_loss(x, y3)", RuntimeError, "must match the size"),
    ("huber_loss(x, y, weight=y3)", ValueError, "Weights and input must have the same size"),
])
def test_robust_loss_errors_as_torch(call, exc, fragment):
    for lib in (torch, mt):
        env = {"F": lib.nn.functional, "x": lib.ones(4), "y": lib.zeros(4), "y3": lib.zeros(3)}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(exc, match=fragment):
                eval("F." + call, env)


def test_broadcast_target_warns_as_torch():
    for lib in (torch, mt):
        with pytest.warns(UserWarning, match="different to the input size"):
            lib.nn.functional.huber_loss(lib.ones(4), lib.zeros(1, 4))


# ---- numpy's axis= and keepdims= ---------------------------------------------------------------------
NUMPY_NAMES = ["t.sum(1, keepdims=True)", "t.mean(axis=0)", "lib.sum(t, axis=1, keepdims=True)",
               "t.amax(axis=1, keepdims=True)", "t.std(axis=0, keepdims=True)", "t.max(axis=1).values",
               "lib.cat([t, t], axis=1)", "lib.stack([t, t], axis=1)", "lib.softmax(t, axis=1)",
               "t.logsumexp(axis=1, keepdims=True)", "t.cumsum(axis=1)", "t.unsqueeze(axis=0)",
               "t.argmax(axis=1, keepdims=True)", "lib.var(t, axis=1, keepdims=True)", "t.prod(axis=1)",
               "t.narrow(axis=0, start=0, length=1)", "lib.unflatten(t, axis=1, sizes=(2, 2))", "t.chunk(2, axis=1)[0]"]


@pytest.mark.parametrize("expr", NUMPY_NAMES)
def test_numpy_spellings_as_torch(expr):
    data = np.arange(12.0).reshape(3, 4) / 7
    close(eval(expr, {"lib": mt, "t": mt.tensor(data)}), eval(expr, {"lib": torch, "t": torch.tensor(data)}), expr)


@pytest.mark.parametrize("expr", ["t.norm(dim=1, keepdims=True)", "t.split(2, axis=1)",
                                  "lib.split(t, 2, axis=1)", "t.unflatten(axis=1, sizes=(2, 2))"])
def test_python_functions_of_torch_refuse_numpy_spellings(expr):
    for lib in (torch, mt):
        with pytest.raises(TypeError):
            eval(expr, {"lib": lib, "t": lib.ones(3, 4)})


def test_numpy_spellings_of_every_method_as_torch():
    """Where microtorch has a dim/keepdim parameter, it accepts axis=/keepdims= exactly where torch does."""
    import inspect
    from microtorch._tensor_methods import METHODS
    t = torch.ones(3, 4)
    for name in METHODS:
        params = inspect.signature(getattr(mt.Tensor, name)).parameters
        if "dim" not in params or name in ("gather", "index_select", "select", "topk", "chunk", "narrow"):
            continue
        ours = _accepts(lambda: getattr(mt.ones(3, 4), name)(axis=1))
        assert ours == _accepts(lambda: getattr(t, name)(axis=1)), name


def _accepts(call):
    try:
        call()
    except TypeError as e:
        return "axis" not in str(e) and "unexpected keyword" not in str(e) and "invalid combination" not in str(e)
    return True


# ---- DataParallel on the CPU -------------------------------------------------------------------------
def test_data_parallel_as_torch_without_gpus():
    tm_, mm = torch.nn.DataParallel(torch.nn.Linear(3, 2).double()), mt.nn.DataParallel(mt.nn.Linear(3, 2).double())
    assert list(mm.state_dict()) == list(tm_.state_dict()) == ["module.weight", "module.bias"]
    mm.load_state_dict({k: mt.tensor(v.numpy().copy()) for k, v in tm_.state_dict().items()})
    x = np.random.default_rng(5).standard_normal((4, 3))
    close(mm(mt.tensor(x)), tm_(torch.tensor(x)), "DataParallel forward")
    assert repr(mm) == repr(tm_) and mm.device_ids == tm_.device_ids == []
    assert isinstance(mm.module, mt.nn.Linear)
