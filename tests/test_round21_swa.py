"""optim.swa_utils against torch 2.13: the same code runs with both libraries, seeded alike, and must give the same
learning rates (exactly), averaged weights and n_averaged (SWA and EMA, with and without buffers), BatchNorm
statistics after update_bn, reprs and state-dict keys, and torch's exception types and messages.

Whole training loops run in float64: in float32 the two libraries' matmuls round differently and SGD with momentum
lets that grow past 1e-6 over the run, which says nothing about the averaging. The averaging itself is checked in
float32 by replaying the same sequence of weights (recorded from torch's training) into both libraries."""
import warnings

import numpy as np
import pytest
import torch as real_torch

import microtorch

LIBS = pytest.mark.parametrize("lib", [microtorch, real_torch], ids=["microtorch", "torch"])


def _np(t):
    return t.detach().numpy().copy()  # (a copy: numpy() shares the tensor's memory, which later steps change)


def _model(lib):
    return lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.BatchNorm1d(8), lib.nn.ReLU(), lib.nn.Linear(8, 2))


def _data(lib, n=24):
    x = lib.randn(n, 4)
    return x, x[:, :2] * 2 - x[:, 2:] + 0.1 * lib.randn(n, 2)


TIGHT = 1e-10  # float64 loops


def _state(module):
    return {k: _np(v) for k, v in module.state_dict().items()}


def _assert_same_state(ours, theirs, atol=1e-6, rtol=0):
    assert list(ours) == list(theirs)
    for key in theirs:
        assert ours[key].dtype == theirs[key].dtype, key
        np.testing.assert_allclose(ours[key], theirs[key], rtol=rtol, atol=atol, err_msg=key)


def _optimizer(lib, model, two_groups):
    if not two_groups:
        return lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    first, rest = list(model[0].parameters()), [p for m in list(model)[1:] for p in m.parameters()]
    return lib.optim.SGD([{"params": first}, {"params": rest, "lr": 0.05}], lr=0.1, momentum=0.9)


def _swa_run(lib, strategy="cos", anneal_epochs=3, swa_lr=0.02, two_groups=False, epochs=8, swa_start=3, **avg_kw):
    """SGD with a cosine schedule, then SWALR; the average is updated every batch from epoch swa_start on."""
    lib.manual_seed(0)
    model, (x, y) = _model(lib).double(), _data(lib)
    x, y = x.double(), y.double()
    opt = _optimizer(lib, model, two_groups)
    averaged = lib.optim.swa_utils.AveragedModel(model, **avg_kw)
    before = lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)
    swa = lib.optim.swa_utils.SWALR(opt, swa_lr=swa_lr, anneal_epochs=anneal_epochs, anneal_strategy=strategy)
    lrs, n_averaged = [], []
    for epoch in range(epochs):
        for i in range(0, len(x), 6):
            opt.zero_grad()
            lib.nn.functional.mse_loss(model(x[i:i + 6]), y[i:i + 6]).backward()
            opt.step()
            lrs.append([group["lr"] for group in opt.param_groups])
            if epoch >= swa_start:
                averaged.update_parameters(model)
                n_averaged.append(int(averaged.n_averaged))
        (swa if epoch >= swa_start else before).step()
        lrs.append(swa.get_last_lr() if epoch >= swa_start else before.get_last_lr())
    return dict(lrs=lrs, n_averaged=n_averaged, averaged=_state(averaged), model=_state(model),
                out=_np(averaged(x)))


def _assert_same_run(ours, theirs, atol=TIGHT):
    assert ours["lrs"] == theirs["lrs"]  # exactly: the same float arithmetic in the same order
    assert ours["n_averaged"] == theirs["n_averaged"]
    _assert_same_state(ours["averaged"], theirs["averaged"], atol)
    _assert_same_state(ours["model"], theirs["model"], atol)
    np.testing.assert_allclose(ours["out"], theirs["out"], rtol=0, atol=10 * atol)


def _averaging_did_something(run):
    """The average is not just the last weights (so a test of it can fail)."""
    return np.abs(run["averaged"]["module.0.weight"] - run["model"]["0.weight"]).max() > 1e-4


@pytest.mark.parametrize("strategy", ["cos", "linear"])
@pytest.mark.parametrize("anneal_epochs", [0, 1, 3, 10])
def test_swa_training_loop_as_torch(strategy, anneal_epochs):
    ours, theirs = _swa_run(microtorch, strategy, anneal_epochs), _swa_run(real_torch, strategy, anneal_epochs)
    _assert_same_run(ours, theirs)
    assert _averaging_did_something(theirs)
    assert len({lr[0] for lr in theirs["lrs"]}) > 3  # the lr moved


@pytest.mark.parametrize("swa_lr", [[0.02, 0.3], (0.01, 0.01), 0.5])
def test_swa_lr_per_group_as_torch(swa_lr):
    ours = _swa_run(microtorch, "linear", 4, swa_lr, two_groups=True)
    theirs = _swa_run(real_torch, "linear", 4, swa_lr, two_groups=True)
    _assert_same_run(ours, theirs)


@pytest.mark.parametrize("decay", [0.5, 0.9, 0.999])
@pytest.mark.parametrize("use_buffers", [False, True])
def test_ema_as_torch(decay, use_buffers):
    for kind in ("multi_avg_fn", "avg_fn"):
        make = {"multi_avg_fn": "get_ema_multi_avg_fn", "avg_fn": "get_ema_avg_fn"}[kind]
        runs = [_swa_run(lib, use_buffers=use_buffers, **{kind: getattr(lib.optim.swa_utils, make)(decay)})
                for lib in (microtorch, real_torch)]
        _assert_same_run(*runs)
        assert _averaging_did_something(runs[1])


@pytest.mark.parametrize("kind", ["default", "multi_avg_fn", "avg_fn"])
def test_swa_averaging_functions_as_torch(kind):
    def run(lib):
        fns = {"default": {}, "multi_avg_fn": {"multi_avg_fn": lib.optim.swa_utils.get_swa_multi_avg_fn()},
               "avg_fn": {"avg_fn": lib.optim.swa_utils.get_swa_avg_fn()}}
        return _swa_run(lib, **fns[kind])
    _assert_same_run(run(microtorch), run(real_torch))


def _torch_weights(steps=12):
    """The float32 weights (and buffers) after each SGD step of torch's training: the sequence both replay."""
    real_torch.manual_seed(0)
    model, (x, y) = _model(real_torch), _data(real_torch)
    opt = real_torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    snapshots = []
    for step in range(steps):
        i = 6 * (step % 4)
        opt.zero_grad()
        real_torch.nn.functional.mse_loss(model(x[i:i + 6]), y[i:i + 6]).backward()
        opt.step()
        snapshots.append(_state(model))
    return snapshots


FLOAT32_AVERAGES = {
    "default": lambda swa_utils: {},
    "swa multi_avg_fn": lambda swa_utils: {"multi_avg_fn": swa_utils.get_swa_multi_avg_fn()},
    "swa avg_fn": lambda swa_utils: {"avg_fn": swa_utils.get_swa_avg_fn()},
    "ema multi_avg_fn": lambda swa_utils: {"multi_avg_fn": swa_utils.get_ema_multi_avg_fn(0.9)},
    "ema multi_avg_fn 0.3": lambda swa_utils: {"multi_avg_fn": swa_utils.get_ema_multi_avg_fn(0.3)},
    "ema avg_fn": lambda swa_utils: {"avg_fn": swa_utils.get_ema_avg_fn(0.9)},
}


def _replay(lib, snapshots, kind, use_buffers):
    model = _model(lib)
    averaged = lib.optim.swa_utils.AveragedModel(model, use_buffers=use_buffers,
                                                 **FLOAT32_AVERAGES[kind](lib.optim.swa_utils))
    states = []
    for snapshot in snapshots:
        model.load_state_dict({k: lib.tensor(v) for k, v in snapshot.items()})
        averaged.update_parameters(model)
        states.append(_state(averaged))
    return states


# (swa multi_avg_fn with buffers stops at the int64 num_batches_tracked, in torch too: tested with the errors)
@pytest.mark.parametrize("kind, use_buffers", [(kind, use_buffers) for kind in FLOAT32_AVERAGES
                                               for use_buffers in (False, True)
                                               if (kind, use_buffers) != ("swa multi_avg_fn", True)])
def test_float32_averaging_is_torch_bit_for_bit(kind, use_buffers):
    snapshots = _torch_weights()
    ours, theirs = _replay(microtorch, snapshots, kind, use_buffers), _replay(real_torch, snapshots, kind, use_buffers)
    for our_state, their_state in zip(ours, theirs):
        _assert_same_state(our_state, their_state, atol=0)
    last = theirs[-1]
    assert np.abs(last["module.0.weight"] - snapshots[-1]["0.weight"]).max() > 1e-4  # it did average
    assert int(last["n_averaged"]) == len(snapshots)


@pytest.mark.parametrize("kind", ["default", "avg_fn", "ema_multi", "ema"])
def test_use_buffers_averages_the_buffers_as_torch(kind):
    """With use_buffers the running statistics (and the int64 num_batches_tracked) are averaged too."""
    def run(lib):
        swa_utils = lib.optim.swa_utils
        fns = {"default": {}, "avg_fn": {"avg_fn": swa_utils.get_swa_avg_fn()},
               "ema_multi": {"multi_avg_fn": swa_utils.get_ema_multi_avg_fn(0.7)},
               "ema": {"avg_fn": swa_utils.get_ema_avg_fn(0.7)}}
        return _swa_run(lib, use_buffers=True, **fns[kind])
    ours, theirs = run(microtorch), run(real_torch)
    _assert_same_run(ours, theirs)
    averaged, model = theirs["averaged"], theirs["model"]
    assert np.abs(averaged["module.1.running_mean"] - model["1.running_mean"]).max() > 1e-4
    assert averaged["module.1.num_batches_tracked"] != model["1.num_batches_tracked"]


def test_without_use_buffers_the_buffers_follow_the_model():
    for lib in (microtorch, real_torch):
        run = _swa_run(lib)
        for key in ("running_mean", "running_var", "num_batches_tracked"):
            np.testing.assert_array_equal(run["averaged"][f"module.1.{key}"], run["model"][f"1.{key}"])
    _assert_same_run(_swa_run(microtorch), _swa_run(real_torch))


def test_multi_avg_fn_receives_lists_and_the_count_as_torch():
    def run(lib):
        calls = []

        def record(averaged, current, n_averaged):
            calls.append((type(averaged).__name__, len(averaged), len(current), str(n_averaged.dtype).split(".")[-1],
                          int(n_averaged), averaged[0].requires_grad, current[0].requires_grad))
            for avg, cur in zip(averaged, current):
                avg.copy_(cur * 0.5)
        lib.manual_seed(0)
        model = _model(lib)
        avg = lib.optim.swa_utils.AveragedModel(model, multi_avg_fn=record)
        for _ in range(3):
            avg.update_parameters(model)
        return calls, _state(avg)
    (ours, ours_state), (theirs, theirs_state) = run(microtorch), run(real_torch)
    assert ours == theirs and len(theirs) == 2
    _assert_same_state(ours_state, theirs_state, atol=0)


def _loader_run(lib, tuples, momentum=0.3, training=False, device=None):
    lib.manual_seed(1)
    model = lib.nn.Sequential(_model(lib), lib.nn.BatchNorm1d(2, momentum=momentum))
    x, y = _data(lib, 20)
    x = x * 3 + 1
    data = lib.utils.data.TensorDataset(x, y) if tuples else x
    loader = lib.utils.data.DataLoader(data, batch_size=6)
    model.train(training)
    for bn in (model[0][1], model[1]):  # statistics to be thrown away
        bn.running_mean.fill_(5.0)
        bn.num_batches_tracked.fill_(7)
    lib.optim.swa_utils.update_bn(loader, model, device=device)
    return dict(state=_state(model), momenta=[model[0][1].momentum, model[1].momentum],
                training=[m.training for m in model.modules()])


@pytest.mark.parametrize("tuples", [False, True], ids=["tensors", "input-label tuples"])
@pytest.mark.parametrize("training", [False, True])
def test_update_bn_as_torch(tuples, training):
    ours, theirs = _loader_run(microtorch, tuples, training=training), _loader_run(real_torch, tuples,
                                                                                   training=training)
    _assert_same_state(ours["state"], theirs["state"])
    assert ours["momenta"] == theirs["momenta"] == [0.1, 0.3]
    assert ours["training"] == theirs["training"] == [training] * len(theirs["training"])
    assert theirs["state"]["0.1.num_batches_tracked"] == 4  # 20 samples in batches of 6


def test_update_bn_with_a_device_and_momentum_none_as_torch():
    ours, theirs = _loader_run(microtorch, True, None, device="cpu"), _loader_run(real_torch, True, None, device="cpu")
    _assert_same_state(ours["state"], theirs["state"])
    assert ours["momenta"] == theirs["momenta"] == [0.1, None]


def _instance_norm_run(lib):
    lib.manual_seed(2)
    model = lib.nn.Sequential(lib.nn.InstanceNorm1d(3, track_running_stats=True), lib.nn.Flatten(),
                              lib.nn.BatchNorm1d(12))
    model(lib.randn(5, 3, 4))
    batches, seen = [lib.randn(5, 3, 4) for _ in range(3)], []
    lib.optim.swa_utils.update_bn(batches, model)
    seen = [model[0].momentum, model[2].momentum]
    return _state(model), seen


def test_update_bn_leaves_instance_norm_alone_as_torch():
    (ours, ours_momenta), (theirs, theirs_momenta) = _instance_norm_run(microtorch), _instance_norm_run(real_torch)
    _assert_same_state(ours, theirs)
    assert ours_momenta == theirs_momenta == [0.1, 0.1]
    assert np.abs(theirs["0.running_mean"]).max() > 1e-3  # the InstanceNorm's statistics were not reset


def test_update_bn_without_batch_norm_does_not_read_the_loader():
    class Loader:
        def __iter__(self):
            raise AssertionError("read")
    for lib in (microtorch, real_torch):
        model = lib.nn.Linear(2, 2).eval()
        assert lib.optim.swa_utils.update_bn(Loader(), model) is None
        assert model.training is False


def test_update_bn_on_an_averaged_model_as_torch():
    def run(lib):
        result = _swa_run(lib)
        lib.manual_seed(3)
        swa_model = lib.optim.swa_utils.AveragedModel(_model(lib))
        swa_model.load_state_dict({k: lib.tensor(v) for k, v in result["averaged"].items()})
        lib.optim.swa_utils.update_bn([(lib.randn(8, 4), 0) for _ in range(3)], swa_model)
        return _state(swa_model)
    # float32 variances near 50: a relative tolerance (the libraries sum in different orders)
    _assert_same_state(run(microtorch), run(real_torch), atol=1e-6, rtol=1e-6)


def _describe(lib):
    lib.manual_seed(0)
    model = _model(lib)
    averaged = lib.optim.swa_utils.AveragedModel(model, use_buffers=True)
    swa_utils = lib.optim.swa_utils
    return dict(repr=repr(averaged), keys=list(averaged.state_dict()), n=repr(averaged.n_averaged),
                buffers=[name for name, _ in averaged.named_buffers()],
                params=[name for name, _ in averaged.named_parameters()],
                all=sorted(swa_utils.__all__), attr=lib.optim.swa_utils is getattr(lib.optim, "swa_utils"),
                fns=[f.__qualname__ for f in (swa_utils.get_ema_multi_avg_fn(), swa_utils.get_swa_multi_avg_fn(),
                                              swa_utils.get_ema_avg_fn(), swa_utils.get_swa_avg_fn())],
                copy=averaged.module is not model and averaged.module[0].weight is not model[0].weight,
                flags=(averaged.avg_fn, averaged.multi_avg_fn, averaged.use_buffers, averaged.training))


def test_repr_state_dict_keys_and_names_as_torch():
    assert _describe(microtorch) == _describe(real_torch)


def test_forward_and_a_state_dict_round_trip_as_torch():
    def run(lib):
        lib.manual_seed(0)
        model = _model(lib).eval()
        averaged = lib.optim.swa_utils.AveragedModel(model, device="cpu")
        averaged.update_parameters(model)
        copy = lib.optim.swa_utils.AveragedModel(_model(lib))
        copy.load_state_dict(averaged.state_dict())
        x = lib.randn(3, 4)
        return _np(averaged(x)), _np(copy.eval()(x)), int(copy.n_averaged), _np(model(x))
    ours, theirs = run(microtorch), run(real_torch)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)
    np.testing.assert_array_equal(theirs[0], theirs[3])


def _swalr_state(lib):
    lib.manual_seed(0)
    opt = lib.optim.SGD(_model(lib).parameters(), lr=0.1)
    scheduler = lib.optim.swa_utils.SWALR(opt, swa_lr=0.01, anneal_epochs=4, anneal_strategy="linear")
    for _ in range(2):
        opt.step()
        scheduler.step()
    state = scheduler.state_dict()
    other = lib.optim.swa_utils.SWALR(opt, swa_lr=0.5)
    other.load_state_dict(state)
    lrs = []
    for _ in range(4):
        opt.step()
        other.step()
        lrs.append(other.get_last_lr())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        by_hand = other.get_lr()
    return dict(keys=sorted(state), strategy=state["_anneal_strategy"], lrs=lrs, by_hand=by_hand,
                warned=[str(w.message) for w in caught], func=other.anneal_func.__name__,
                group=sorted(opt.param_groups[0]))


def test_swalr_state_dict_and_get_lr_warning_as_torch():
    assert _swalr_state(microtorch) == _swalr_state(real_torch)


def _tensor_swa_lr(lib):
    opt = lib.optim.SGD([lib.nn.Parameter(lib.ones(2))], lr=0.1)
    swa_lr = lib.tensor(0.05)
    scheduler = lib.optim.swa_utils.SWALR(opt, swa_lr=swa_lr, anneal_epochs=2)
    for _ in range(3):
        opt.step()
        scheduler.step()
    swa_lr.fill_(9.0)  # the group keeps its own copy
    return repr(scheduler.get_last_lr()), repr(opt.param_groups[0]["swa_lr"]), repr(opt.param_groups[0]["lr"])


def test_a_tensor_swa_lr_is_copied_as_torch():
    assert _tensor_swa_lr(microtorch) == _tensor_swa_lr(real_torch)


def _error(make):
    try:
        make()
    except Exception as e:  # noqa: BLE001  (the type and the text are what is compared)
        return type(e).__name__, str(e)
    return None


def _opt(lib, groups=1):
    params = [lib.nn.Parameter(lib.ones(2)) for _ in range(groups)]
    return lib.optim.SGD([{"params": [p]} for p in params], lr=0.1)


BAD = {
    "negative anneal_epochs": lambda lib: lib.optim.swa_utils.SWALR(_opt(lib), 0.05, anneal_epochs=-1),
    "float anneal_epochs": lambda lib: lib.optim.swa_utils.SWALR(_opt(lib), 0.05, anneal_epochs=2.0),
    "bad anneal_strategy": lambda lib: lib.optim.swa_utils.SWALR(_opt(lib), 0.05, anneal_strategy="exp"),
    "strategy checked before epochs": lambda lib: lib.optim.swa_utils.SWALR(_opt(lib), 0.05, -1, "step"),
    "swa_lr list too long": lambda lib: lib.optim.swa_utils.SWALR(_opt(lib, 2), [0.1, 0.2, 0.3]),
    "swa_lr list too short": lambda lib: lib.optim.swa_utils.SWALR(_opt(lib, 2), (0.1,)),
    "not an optimizer": lambda lib: lib.optim.swa_utils.SWALR(object(), 0.05),
    "resuming without initial_lr": lambda lib: lib.optim.swa_utils.SWALR(_opt(lib), 0.05, last_epoch=3),
    "avg_fn and multi_avg_fn": lambda lib: lib.optim.swa_utils.AveragedModel(
        lib.nn.Linear(2, 2), avg_fn=lib.optim.swa_utils.get_swa_avg_fn(),
        multi_avg_fn=lib.optim.swa_utils.get_swa_multi_avg_fn()),
    "ema decay above 1": lambda lib: lib.optim.swa_utils.get_ema_avg_fn(1.5),
    "ema multi decay below 0": lambda lib: lib.optim.swa_utils.get_ema_multi_avg_fn(-0.1),
    "no decay error at the edges": lambda lib: (lib.optim.swa_utils.get_ema_avg_fn(0.0),
                                                lib.optim.swa_utils.get_ema_multi_avg_fn(1.0)) and None,
    "buffers of another model": lambda lib: lib.optim.swa_utils.AveragedModel(lib.nn.Linear(2, 2)).update_parameters(
        lib.nn.BatchNorm1d(2)),
}


@pytest.mark.parametrize("name", BAD)
def test_errors_as_torch(name):
    ours, theirs = _error(lambda: BAD[name](microtorch)), _error(lambda: BAD[name](real_torch))
    assert ours == theirs
    assert (theirs is None) == (name == "no decay error at the edges")


def _integer_swa_multi(lib):
    lib.manual_seed(0)
    model = lib.nn.BatchNorm1d(3)
    averaged = lib.optim.swa_utils.AveragedModel(model, use_buffers=True,
                                                 multi_avg_fn=lib.optim.swa_utils.get_swa_multi_avg_fn())
    averaged.update_parameters(model)
    averaged.update_parameters(model)


def test_swa_multi_avg_fn_refuses_integer_buffers_as_torch():
    """torch's swa multi_avg_fn sends int64 buffers to addcdiv_, which refuses integer division."""
    ours, theirs = _error(lambda: _integer_swa_multi(microtorch)), _error(lambda: _integer_swa_multi(real_torch))
    assert theirs is not None and ours == theirs


@LIBS
def test_swalr_anneals_to_swa_lr(lib):
    """After anneal_epochs steps the lr is swa_lr (each library, and the two agree: see the tests above)."""
    opt = _opt(lib)
    scheduler = lib.optim.swa_utils.SWALR(opt, swa_lr=0.01, anneal_epochs=5)
    for _ in range(6):
        opt.step()
        scheduler.step()
    assert scheduler.get_last_lr() == [pytest.approx(0.01, abs=1e-15)]
