"""torch.set_default_device / get_default_device / `with torch.device(...)`, and layers' `device=`, beside torch:
the device each factory puts its tensor on, the errors, and that a meta tensor draws nothing from the generator."""
import numpy as np
import pytest
import torch

import microtorch as mt


@pytest.fixture(autouse=True)
def reset_default_devices():
    yield
    torch.set_default_device(None)
    mt.set_default_device(None)


def factories(T):
    """name -> call making a tensor with no device given (torch's default device reaches all but the last ones)."""
    return {
        "tensor": lambda: T.tensor([1.0, 2.0]), "tensor number": lambda: T.tensor(1.0),
        "tensor requires_grad": lambda: T.tensor([1.0], requires_grad=True),
        "zeros": lambda: T.zeros(2), "ones": lambda: T.ones(2, 3), "empty": lambda: T.empty(2),
        "full": lambda: T.full((2,), 3.0), "arange": lambda: T.arange(3), "linspace": lambda: T.linspace(0, 1, 3),
        "logspace": lambda: T.logspace(0, 1, 3), "eye": lambda: T.eye(2), "rand": lambda: T.rand(2),
        "randn": lambda: T.randn(2), "randint": lambda: T.randint(0, 5, (2,)), "randperm": lambda: T.randperm(3),
        "as_tensor array": lambda: T.as_tensor(np.ones(2)), "as_tensor list": lambda: T.as_tensor([1, 2]),
        "scalar_tensor": lambda: T.scalar_tensor(2.0), "hann_window": lambda: T.hann_window(4),
        "kaiser_window": lambda: T.kaiser_window(4), "tril_indices": lambda: T.tril_indices(3, 3),
        "Linear weight": lambda: T.nn.Linear(2, 3).weight, "Linear output": lambda: T.nn.Linear(2, 3)(T.ones(4, 2)),
        # not factories of the default device: they follow their input, or are not in torch's list
        "from_numpy": lambda: T.from_numpy(np.ones(2)), "zeros_like": lambda: T.zeros_like(T.ones(2, device="cpu")),
        "rand_like": lambda: T.rand_like(T.ones(2, device="cpu")), "normal": lambda: T.normal(0.0, 1.0, size=(2,)),
        "normal of a tensor": lambda: T.normal(T.zeros(2, device="cpu"), 1.0),
    }


def described(t):
    return str(t.device), tuple(t.shape), str(t.dtype).split(".")[1], t.requires_grad, t.is_leaf


@pytest.mark.parametrize("default", ["meta", "cpu", "cpu:0"])
def test_each_factory_goes_where_torchs_goes(default):
    torch.set_default_device(default)
    mt.set_default_device(default)
    want, got = factories(torch), factories(mt)
    for name in want:
        assert described(got[name]()) == described(want[name]()), name
    assert repr(mt.get_default_device()) == repr(torch.get_default_device())


def test_unset_and_reset():
    assert repr(mt.get_default_device()) == repr(torch.get_default_device()) == "device(type='cpu')"
    mt.set_default_device("meta")
    mt.set_default_device(None)
    assert mt.ones(2).device == mt.device("cpu") and repr(mt.get_default_device()) == "device(type='cpu')"


def test_device_as_context_manager_nests_and_restores():
    for T in (torch, mt):
        with T.device("meta"):
            assert str(T.ones(2).device) == "meta"
            with T.device("cpu"):
                assert str(T.ones(2).device) == "cpu"
            assert str(T.zeros(1).device) == "meta"
        assert str(T.ones(2).device) == "cpu" and str(T.get_default_device()) == "cpu"


def test_bad_devices_raise_runtime_errors():
    for bad in ("gpu", "cpu:x", 3):
        with pytest.raises(RuntimeError):
            torch.set_default_device(bad)
        with pytest.raises(RuntimeError) as e:
            mt.set_default_device(bad)
        assert "set_default_device" in str(e.value) or "accelerator" in str(e.value)
    for T in (torch, mt):
        with pytest.raises(TypeError):
            T.set_default_device(len)
    for T in (torch, mt):  # (a device this machine lacks can be named; its first tensor raises)
        T.set_default_device("cuda")
        for make in (lambda: T.ones(2), T.get_default_device):
            with pytest.raises(AssertionError, match="not compiled with CUDA"):
                make()
        T.set_default_device(None)


@pytest.mark.parametrize("where", ["meta", "cpu"])
def test_layers_honour_device(where):
    def layers(T):
        nn = T.nn
        return [nn.Linear(2, 3, device=where), nn.Conv2d(1, 2, 3, device=where), nn.BatchNorm1d(3, device=where),
                nn.LSTM(2, 3, device=where), nn.Embedding(4, 2, device=where), nn.LayerNorm(4, device=where),
                nn.MultiheadAttention(4, 2, device=where), nn.TransformerEncoderLayer(4, 2, 8, device=where)]
    for want, got in zip(layers(torch), layers(mt)):
        assert [(n, described(t)) for n, t in got.state_dict(keep_vars=True).items()] == \
            [(n, described(t)) for n, t in want.state_dict(keep_vars=True).items()], type(got).__name__


def test_a_layer_built_on_meta_then_given_memory_starts_as_torchs():
    def built(T):
        T.manual_seed(0)
        model = T.nn.Sequential(T.nn.Linear(2, 3, device="meta"), T.nn.Linear(3, 1, device="meta"))
        assert str(model(T.ones(4, 2, device="meta")).device) == "meta"
        model.to_empty(device="cpu")
        for m in model:
            m.reset_parameters()  # (meta drew nothing: these are the seed's first draws)
        return [p.detach().numpy().tobytes() for p in model.parameters()]
    assert built(mt) == built(torch)
    inner = mt.nn.Sequential(mt.nn.Linear(2, 3, device="meta"))
    assert {str(p.device) for p in inner.to_empty(device="cpu", recurse=False).parameters()} == {"meta"}


@pytest.mark.parametrize("make", ["rand", "randn", "randint", "randperm", "rand_like", "normal_", "uniform_",
                                  "bernoulli", "dropout", "fill_"])
def test_meta_draws_nothing(make):
    def call(T):
        calls = {"rand": lambda: T.rand(3, device="meta"), "randn": lambda: T.randn(3, device="meta"),
                 "randint": lambda: T.randint(0, 9, (3,), device="meta"),
                 "randperm": lambda: T.randperm(5, device="meta"),
                 "rand_like": lambda: T.rand_like(T.empty(3, device="meta")),
                 "normal_": lambda: T.empty(3, device="meta").normal_(),
                 "uniform_": lambda: T.empty(3, device="meta").uniform_(),
                 "bernoulli": lambda: T.bernoulli(T.empty(3, device="meta").fill_(0.5)),
                 "dropout": lambda: T.nn.functional.dropout(T.empty(3, device="meta"), 0.5),
                 "fill_": lambda: T.empty(3, device="meta").fill_(2.0)}
        T.manual_seed(0)
        out = calls[make]()
        return str(out.device), tuple(out.shape), T.rand(1).item()
    assert call(mt) == call(torch)


def test_elementwise_functions_of_a_meta_tensor_stay_meta():
    # (their arrays kept numpy's meta subclass through the op)
    for name in ["abs", "exp", "sin", "tanh", "sqrt", "log", "sigmoid", "relu", "expm1", "log1p"]:
        ours = getattr(mt.empty(3, 4, device="meta"), name)()
        theirs = getattr(torch.empty(3, 4, device="meta"), name)()
        assert ours.device.type == theirs.device.type == "meta" and ours.shape == theirs.shape, name
