"""microtorch.save / microtorch.load: .npz files, never pickle; damaged or mismatched files give a
clear error and leave the model unchanged."""
import io
import pickle
import zipfile

import numpy as np
import pytest
import torch

import microtorch as mt
import microtorch.nn as nn


def make_net():
    return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 2))


def snapshot(model):
    return {k: v.numpy().copy() for k, v in model.state_dict().items()}


def assert_unchanged(model, before):
    after = snapshot(model)
    assert after.keys() == before.keys()
    for k in before:
        np.testing.assert_array_equal(after[k], before[k], err_msg=f"{k} changed")


@pytest.mark.parametrize("target", ["str", "path", "bytesio"])
def test_state_dict_round_trip(target, tmp_path):
    a, b = make_net(), make_net()
    a(mt.randn(5, 3))  # updates BatchNorm's running statistics and num_batches_tracked
    f = {"str": str(tmp_path / "model.pt"), "path": tmp_path / "model.pt", "bytesio": io.BytesIO()}[target]
    mt.save(a.state_dict(), f)
    if target == "bytesio":
        f.seek(0)
    sd = mt.load(f)
    assert list(sd) == list(a.state_dict())
    assert sd["1.num_batches_tracked"].dtype == mt.int64 and sd["0.weight"].dtype == mt.float32
    b.load_state_dict(sd)
    x = mt.randn(2, 3)
    a.eval(), b.eval()
    np.testing.assert_array_equal(a(x).detach().numpy(), b(x).detach().numpy())
    if target != "bytesio":  # exactly the name given: no ".npz" appended
        assert (tmp_path / "model.pt").exists() and not (tmp_path / "model.pt.npz").exists()


def test_file_is_a_plain_npz_without_pickle(tmp_path):
    net = make_net()
    mt.save(net.state_dict(), tmp_path / "m.npz")
    with np.load(tmp_path / "m.npz", allow_pickle=False) as data:
        assert sorted(data.files) == sorted(net.state_dict())
        np.testing.assert_array_equal(data["0.weight"], net[0].weight.detach().numpy())
    with zipfile.ZipFile(tmp_path / "m.npz") as z:
        assert all(name.endswith(".npy") for name in z.namelist())


def test_tensor_and_nested_checkpoint_round_trip(tmp_path):
    t = mt.arange(6.0).reshape(2, 3)
    mt.save(t, tmp_path / "t.pt")
    back = mt.load(tmp_path / "t.pt")
    assert isinstance(back, mt.Tensor) and back.shape == (2, 3)
    np.testing.assert_array_equal(back.numpy(), t.numpy())

    net = make_net()
    opt = mt.optim.Adam(net.parameters(), lr=0.01)
    net(mt.randn(4, 3)).sum().backward()
    opt.step()
    ckpt = {"model": net.state_dict(), "optim": opt.state_dict(), "epoch": 7, "loss": 0.25, "best": float("inf"),
            "note": "run 1", "flags": (True, None), "history": [1.5, 2.5], 3: "int key",
            "param": nn.Parameter(mt.ones(2)), "mask": mt.tensor([True, False])}
    mt.save(ckpt, tmp_path / "ckpt.pt")
    back = mt.load(tmp_path / "ckpt.pt")
    assert back["epoch"] == 7 and back["loss"] == 0.25 and back["best"] == float("inf")
    assert back["note"] == "run 1" and back["flags"] == (True, None) and back["history"] == [1.5, 2.5]
    assert back[3] == "int key"
    assert isinstance(back["param"], nn.Parameter) and back["param"].requires_grad
    assert back["mask"].dtype == mt.bool
    assert back["optim"]["param_groups"][0]["betas"] == (0.9, 0.999)
    assert back["optim"]["param_groups"][0]["params"] == list(range(6))
    assert list(back["optim"]["state"][0]) == ["step", "exp_avg", "exp_avg_sq"]
    opt2 = mt.optim.Adam(make_net().parameters())
    opt2.load_state_dict(back["optim"])
    assert float(opt2.state_dict()["state"][0]["step"]) == 1.0


def test_what_pickle_cannot_store_raises_pickles_error_as_torch():
    errors = []
    for lib in (torch, mt):
        with pytest.raises((pickle.PicklingError, AttributeError), match="Can't pickle") as info:
            lib.save({"fn": lambda x: x}, io.BytesIO())
        errors.append(info.type)
    assert errors[0] is errors[1]


@pytest.mark.parametrize("what", ["model", "checkpoint with a model", "object array"])
def test_a_whole_model_is_pickled_and_loaded_only_on_request_as_torch(what, tmp_path):
    """PyTorch's "Save and Load the Model" tutorial: save(model, f), then load(f, weights_only=False); the default
    load refuses it with torch's UnpicklingError (unpickling can run code)"""
    results = []
    for lib in (torch, mt):
        lib.manual_seed(0)
        net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
        obj = {"model": net, "model_state": net.state_dict(), "epoch": 3} if what == "checkpoint with a model" else \
            {"a": np.array([1, "x"], dtype=object)} if what == "object array" else net
        path = tmp_path / f"{lib.__name__}.pth"
        lib.save(obj, path)
        with pytest.raises(pickle.UnpicklingError, match="weights_only"):
            lib.load(path)
        back = lib.load(path, weights_only=False)
        if what == "object array":
            results.append(back["a"].tolist())
            continue
        model = back["model"] if what != "model" else back
        results.append((type(model).__name__, str(model), model(lib.ones(2, 3)).tolist(),
                        back["epoch"] if what != "model" else None))
    assert results[0] == results[1]


@pytest.mark.parametrize("damage", ["truncated", "garbage", "pickle", "empty", "bad structure", "object array"])
def test_damaged_file_gives_clear_error_and_model_unchanged(damage, tmp_path):
    net = make_net()
    before = snapshot(net)
    good = io.BytesIO()
    mt.save(make_net().state_dict(), good)
    path = tmp_path / "bad.pt"
    if damage == "truncated":
        path.write_bytes(good.getvalue()[: len(good.getvalue()) // 2])
    elif damage == "garbage":
        path.write_bytes(b"this is not a model" * 10)
    elif damage == "pickle":
        path.write_bytes(pickle.dumps({"0.weight": np.zeros((4, 3))}))
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "bad structure":
        np.savez(path.open("wb"), __microtorch_structure__=np.frombuffer(b"{not json", dtype=np.uint8))
    else:
        with path.open("wb") as fh:
            np.savez(fh, w=np.array([{"x": 1}], dtype=object))
    with pytest.raises(RuntimeError, match="corrupt|pickled|never loads") as info:
        net.load_state_dict(mt.load(path))
    assert "bad.pt" in str(info.value)
    assert_unchanged(net, before)


def test_mismatched_file_gives_clear_error_after_loading_what_fits(tmp_path):
    """As torch's load_state_dict: the entries whose shapes fit are copied, then the errors raised together."""
    net = make_net()
    before = snapshot(net)
    other = nn.Sequential(nn.Linear(3, 5), nn.BatchNorm1d(5), nn.ReLU(), nn.Linear(5, 2))
    mt.save(other.state_dict(), tmp_path / "other.pt")
    with pytest.raises(RuntimeError, match="size mismatch for 0.weight"):
        net.load_state_dict(mt.load(tmp_path / "other.pt"))
    loaded = net.state_dict()
    np.testing.assert_array_equal(loaded["0.weight"].numpy(), before["0.weight"])  # (its shape did not fit)
    np.testing.assert_array_equal(loaded["3.bias"].numpy(), other.state_dict()["3.bias"].numpy())  # (it did)
    mt.save(nn.Linear(3, 4).state_dict(), tmp_path / "linear.pt")
    with pytest.raises(RuntimeError, match="Missing key"):
        net.load_state_dict(mt.load(tmp_path / "linear.pt"))


def test_missing_file():
    with pytest.raises(FileNotFoundError):
        mt.load("/nonexistent/model.pt")


def test_load_never_unpickles(tmp_path, monkeypatch):
    """Even a file crafted to run code when unpickled is only ever read with allow_pickle=False."""
    ran = []

    class Evil:
        def __reduce__(self):
            return (ran.append, ("pwned",))

    path = tmp_path / "evil.pt"
    with path.open("wb") as fh:
        np.savez(fh, w=np.array([Evil()], dtype=object))
    monkeypatch.setattr(pickle, "loads", lambda *a, **k: pytest.fail("pickle.loads was called"))
    with pytest.raises(RuntimeError):
        mt.load(path)
    assert ran == []
