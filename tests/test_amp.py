"""torch.amp on a machine without a GPU, beside torch: autocast("cuda") and GradScaler("cuda") switch off with
torch's warnings; GradScaler("cpu") scales, unscales, skips a step with an inf gradient and adapts its scale,
step for step as torch; the errors of misuse are torch's."""
import warnings

import numpy as np
import pytest
import torch

import microtorch as mt


def warned(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = ("returns", fn())
        except Exception as e:
            out = ("raises", type(e).__name__, str(e)[:45])
    return out, [(w.category.__name__, str(w.message)[:50]) for w in caught]


def enter(T, *args, **kwargs):
    def run():
        with T.autocast(*args, **kwargs):
            y = T.nn.Linear(2, 2, dtype=T.float32)(T.ones(1, 2))
            return str(y.dtype).split(".")[1], T.is_autocast_enabled()
    return run


@pytest.mark.parametrize("args, kwargs", [(("cuda",), {}), (("cuda",), {"dtype": "float16"}), (("cuda",), {"enabled": False}),
                                          (("cpu",), {"enabled": False}), (("mps",), {}), ((3,), {}), (("gpu",), {})])
def test_autocast_off_like_torch(args, kwargs):
    def call(T):
        kw = {k: getattr(T, v) if k == "dtype" else v for k, v in kwargs.items()}
        return enter(T, *args, **kw)
    got, want = warned(call(mt)), warned(call(torch))
    if want[0][0] == "raises":  # (the messages name each library's own list of devices)
        assert got[0][:2] == want[0][:2]
    else:
        assert got == want


def test_autocast_on_the_cpu_refuses_clearly():
    with pytest.raises(NotImplementedError, match="enabled=False"):
        with mt.autocast("cpu", dtype=mt.float16):
            pass

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")

        @mt.autocast("cuda")
        def f(x):
            return x * 2
        assert f(mt.ones(1)).tolist() == [2.0]


def test_old_spellings_warn_as_torch():
    for make in (lambda T: T.cuda.amp.autocast(), lambda T: T.cuda.amp.GradScaler()):
        got, want = warned(lambda: type(make(mt)).__name__), warned(lambda: type(make(torch)).__name__)
        assert got[1] == want[1] and got[0] == want[0]


def train(T, losses, **scaler_args):
    """A few SGD steps of a linear model under GradScaler("cpu"); an inf loss where `losses` says so."""
    T.manual_seed(0)
    model = T.nn.Linear(3, 1, dtype=T.float64)
    opt = T.optim.SGD(model.parameters(), lr=0.1)
    scaler = T.amp.GradScaler("cpu", **scaler_args)
    seen = []
    for factor in losses:
        opt.zero_grad()
        scaled = scaler.scale(model(T.ones(2, 3, dtype=T.float64)).sum() * factor)
        scaled.backward()
        seen.append((scaled.dtype == T.float64, type(scaled.grad_fn).__name__, model.weight.grad.numpy().tobytes()))
        scaler.step(opt)
        scaler.update()
        seen.append((scaler.get_scale(), model.weight.detach().numpy().tobytes(), sorted(scaler.state_dict().items())))
    return seen


@pytest.mark.parametrize("losses, args", [([1.0, float("inf"), 1.0, 1.0, 1.0], {"init_scale": 4.0, "growth_interval": 2}),
                                          ([1.0] * 3, {}), ([float("nan"), 1.0], {"backoff_factor": 0.25})])
def test_grad_scaler_on_the_cpu_step_for_step(losses, args):
    assert train(mt, losses, **args) == train(torch, losses, **args)


@pytest.mark.parametrize("misuse", ["unscale twice", "step before scale", "closure", "growth", "empty state",
                                    "scale a number", "step twice", "disabled state"])
def test_grad_scaler_misuse_like_torch(misuse):
    def run(T):
        model = T.nn.Linear(2, 1)
        opt = T.optim.SGD(model.parameters(), 0.1)
        s = T.amp.GradScaler("cpu")
        if misuse in ("unscale twice", "step twice"):
            s.scale(model(T.ones(1, 2)).sum()).backward()
            (s.unscale_ if misuse == "unscale twice" else s.step)(opt)
            return (s.unscale_ if misuse == "unscale twice" else s.step)(opt)
        return {"step before scale": lambda: s.step(opt), "closure": lambda: s.step(opt, closure=lambda: 0),
                "growth": lambda: T.amp.GradScaler("cpu", growth_factor=0.5), "empty state": lambda: s.load_state_dict({}),
                "scale a number": lambda: s.scale(3.0),
                "disabled state": lambda: (T.amp.GradScaler(enabled=False).state_dict(),
                                           T.amp.GradScaler(enabled=False).get_scale())}[misuse]()
    got, want = warned(lambda: run(mt)), warned(lambda: run(torch))
    assert got == want


def test_disabled_scaler_passes_through():
    for T in (torch, mt):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = T.amp.GradScaler()  # ("cuda": off here)
        loss = T.tensor(2.0)
        assert s.scale(loss) is loss and not s.is_enabled() and s.get_scale() == 1.0
        assert np.isclose(s.get_scale(), 1.0)


def test_is_autocast_available_as_torch():
    for device in ("cpu", "cuda", "mps", "xpu"):
        assert mt.amp.is_autocast_available(device) == torch.amp.is_autocast_available(device)
