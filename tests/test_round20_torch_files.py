"""microtorch.load reads the zip files torch.save writes (weights that courses ship): what torch 2.13's own
torch.load(weights_only=True) accepts, compared with what torch.load gives for the same bytes: values, dtypes,
shapes, strides, offsets, which tensors share memory, requires_grad, Parameters, containers. Anything else (a whole
pickled model, a class of the user's) is refused with pickle.UnpicklingError, and nothing in the file runs."""
import collections
import io
import pickle
import zipfile

import numpy as np
import pytest
import torch
from _machine import gemm_agrees

import microtorch
import microtorch.nn as nn


def torch_bytes(obj, **kwargs):
    buf = io.BytesIO()
    torch.save(obj, buf, **kwargs)
    return buf.getvalue()


def both(data, **kwargs):
    """torch.load and microtorch.load of the same bytes."""
    return torch.load(io.BytesIO(data), **kwargs), microtorch.load(io.BytesIO(data), **kwargs)


def assert_tensor_like(theirs, ours):
    assert isinstance(ours, microtorch.Tensor), type(ours)
    assert isinstance(ours, nn.Parameter) == isinstance(theirs, torch.nn.Parameter)
    assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.stride() == theirs.stride()
    assert ours.storage_offset() == theirs.storage_offset()
    assert ours.requires_grad == theirs.requires_grad and ours.is_leaf == theirs.is_leaf
    assert ours._version == theirs._version
    np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())


def assert_same(theirs, ours):
    """ours is what microtorch made of the object torch loaded as theirs: the same types, structure and values."""
    if isinstance(theirs, torch.Tensor):
        return assert_tensor_like(theirs, ours)
    if isinstance(theirs, torch.dtype):
        assert ours is getattr(microtorch, str(theirs).split(".")[1])
    elif isinstance(theirs, torch.Size):
        assert isinstance(ours, microtorch.Size) and tuple(ours) == tuple(theirs)
    elif isinstance(theirs, torch.device):
        assert isinstance(ours, microtorch.device) and str(ours) == str(theirs)
    elif isinstance(theirs, dict):
        assert type(ours) is type(theirs) and list(ours) == list(theirs)
        for k in theirs:
            assert_same(theirs[k], ours[k])
    elif isinstance(theirs, (list, tuple)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs)
        for a, b in zip(theirs, ours):
            assert_same(a, b)
    else:
        assert type(ours) is type(theirs) and ours == theirs


def assert_outputs_as_torchs(ours, theirs, same_weights):
    """A model's outputs: torch's, to the bit where this machine's torch multiplies matrices as numpy does (see
    _machine.py), else within float32's rounding; and always the bits of a microtorch model given the same
    weights directly (same_weights), so that a weight loaded wrong cannot hide in the tolerance."""
    np.testing.assert_array_equal(ours, same_weights)
    if gemm_agrees():
        np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-7)


def copied_from(torch_model, model):
    """model (microtorch) with torch_model's weights and buffers, copied value by value."""
    with microtorch.no_grad():
        for (name, theirs), (_, ours) in zip(torch_model.state_dict().items(), model.state_dict().items()):
            ours.copy_(microtorch.tensor(theirs.numpy()))
    return model


def shared_groups(tensors):
    """Which tensors share memory, and each one's first element's distance in bytes from its storage's start."""
    ptrs = [t.untyped_storage().data_ptr() for t in tensors]
    return [[ptrs.index(p) for p in ptrs], [t.data_ptr() - p for t, p in zip(tensors, ptrs)]]


# ---- tensors ---------------------------------------------------------------------------------------------------------
DTYPES = ["float32", "float64", "int64", "bool", "complex64", "float16", "int32", "int16", "int8", "uint8",
          "complex128"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_tensor_of_each_dtype(dtype):
    t = (torch.arange(-5, 7) * 7 % 5).reshape(3, 4).to(getattr(torch, dtype))
    if t.is_complex():
        t = t + 1j * torch.arange(12).reshape(3, 4)
    theirs, ours = both(torch_bytes(t))
    assert_same(theirs, ours)
    assert type(ours) is microtorch.Tensor


@pytest.mark.parametrize("case", ["0-d", "empty", "transposed", "sliced", "stepped", "expanded", "permuted 3-d",
                                  "narrowed column"])
def test_shapes_strides_and_offsets(case):
    x = torch.arange(24.0).reshape(4, 6)
    t = {"0-d": torch.tensor(3.5), "empty": torch.empty(0, 3), "transposed": x.t(), "sliced": x[1:, 2:],
         "stepped": x[::2, 1::3], "expanded": torch.arange(3.0).expand(4, 3),
         "permuted 3-d": x.reshape(2, 3, 4).permute(2, 0, 1), "narrowed column": x[:, 3]}[case]
    theirs, ours = both(torch_bytes(t))
    assert_same(theirs, ours)


def test_views_of_one_storage_share_memory_after_loading_as_in_torch():
    x = torch.arange(12.0).reshape(3, 4)
    obj = {"x": x, "row": x[1], "t": x.t()[1:], "other": torch.ones(2), "again": x}
    theirs, ours = both(torch_bytes(obj))
    assert_same(theirs, ours)
    assert ours["x"] is ours["again"]  # (pickle's memo: one object, as in torch)
    assert shared_groups(list(ours.values())) == shared_groups(list(theirs.values()))
    for d in (theirs, ours):
        d["x"][1, 2] = -1.0  # a write through one is seen through the others, in both
    assert_same(theirs, ours)
    assert ours["row"].tolist() == [4.0, 5.0, -1.0, 7.0]


@pytest.mark.filterwarnings("ignore:TypedStorage is deprecated")
def test_a_storage_saved_with_a_view_of_it():
    x = torch.arange(6.0)
    theirs, ours = both(torch_bytes([x.storage(), x[2:]]))
    assert isinstance(ours[0], microtorch.TypedStorage) and ours[0].dtype is microtorch.float32
    assert ours[0].tolist() == theirs[0].tolist()
    assert_same(theirs[1], ours[1])
    assert ours[1].untyped_storage().data_ptr() == ours[0].data_ptr()


def test_requires_grad_and_parameters():
    obj = {"leaf": torch.ones(3, requires_grad=True), "p": torch.nn.Parameter(torch.randn(2, 2)),
           "frozen": torch.nn.Parameter(torch.randn(2), requires_grad=False),
           "made": torch.ones(2, requires_grad=True) * 2}
    theirs, ours = both(torch_bytes(obj))
    assert_same(theirs, ours)
    assert isinstance(ours["p"], nn.Parameter) and ours["p"].requires_grad and ours["p"].grad is None
    assert not ours["frozen"].requires_grad and ours["made"].is_leaf and ours["made"].requires_grad
    (ours["p"] * 2).sum().backward()  # a leaf that learns
    assert ours["p"].grad.tolist() == [[2.0, 2.0], [2.0, 2.0]]


def test_tensors_with_attributes_of_their_own():
    p, t = torch.nn.Parameter(torch.ones(2)), torch.arange(3.0)
    p.tag, t.note = "encoder", [1, 2]
    theirs, ours = both(torch_bytes({"p": p, "t": t}))
    assert_same(theirs, ours)
    assert ours["p"].tag == theirs["p"].tag == "encoder" and ours["t"].note == theirs["t"].note == [1, 2]


def test_a_conjugated_tensor_loads_its_values():
    z = torch.tensor([1 + 2j, 3 - 1j])
    theirs, ours = both(torch_bytes({"conj": z.conj(), "z": z}))
    assert theirs["conj"].is_conj()
    np.testing.assert_array_equal(ours["conj"].numpy(), theirs["conj"].resolve_conj().numpy())
    np.testing.assert_array_equal(ours["z"].numpy(), theirs["z"].numpy())


# ---- containers ------------------------------------------------------------------------------------------------------
def test_nested_containers_and_plain_values():
    obj = {"epoch": 7, "loss": 0.25, "best": float("inf"), "name": "run 1", "flags": (True, None, False),
           "history": [1.5, [2, {"deep": torch.tensor([1, 2])}]], 3: "int key", "size": torch.Size([2, 3]),
           "dtype": torch.float64, "dtypes": [torch.int64, torch.bool, torch.complex64], "set": {1, 2},
           "complex": 1 + 2j, "bytes": b"\x00\xffabc", "counter": collections.Counter("aab"),
           "device": torch.device("cpu"), "od": collections.OrderedDict(b=torch.zeros(1), a=1)}
    theirs, ours = both(torch_bytes(obj))
    assert_same(theirs, ours)


@pytest.mark.parametrize("top", ["tensor", "list", "tuple", "int", "str", "None"])
def test_whatever_is_at_the_top(top):
    obj = {"tensor": torch.eye(2), "list": [torch.ones(1), 2], "tuple": (torch.zeros(2), "a"), "int": 5,
           "str": "hello", "None": None}[top]
    assert_same(*both(torch_bytes(obj)))


def test_other_pickle_protocols():
    obj = {"w": torch.arange(4.0).reshape(2, 2).t(), "n": [1, "two", 3.0], "b": b"xyz"}
    for protocol in (2, 3, 4, 5):  # (torch's weights_only unpickler refuses protocol 3's bytes opcode; its full
        data = torch_bytes(obj, pickle_protocol=protocol)  # one is the oracle here)
        assert_same(torch.load(io.BytesIO(data), weights_only=False), microtorch.load(io.BytesIO(data)))


# ---- models ----------------------------------------------------------------------------------------------------------
def _models(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.ReLU(), lib.nn.Linear(4, 2))


def test_a_state_dict_loads_into_a_microtorch_model_that_then_computes_as_torchs():
    net = _models(torch)
    net(torch.randn(8, 3))  # BatchNorm's running statistics and num_batches_tracked move
    theirs, ours = both(torch_bytes(net.state_dict()))
    assert_same(theirs, ours)
    assert type(ours) is collections.OrderedDict and ours._metadata == theirs._metadata
    assert ours["1.num_batches_tracked"].dtype is microtorch.int64 and ours["1.num_batches_tracked"].dim() == 0
    model = nn.Sequential(nn.Linear(3, 5), nn.BatchNorm1d(5), nn.ReLU(), nn.Linear(5, 2))
    with pytest.raises(RuntimeError, match="size mismatch"):
        model.load_state_dict(ours)
    model = _models(microtorch)
    model.load_state_dict(ours)
    reference = copied_from(net, _models(microtorch))
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    net.eval(), model.eval(), reference.eval()
    assert_outputs_as_torchs(model(microtorch.tensor(x)).detach().numpy(), net(torch.tensor(x)).detach().numpy(),
                             reference(microtorch.tensor(x)).detach().numpy())


def test_linear_state_dict_from_a_path_with_map_location_and_weights_only(tmp_path):
    lin = torch.nn.Linear(4, 3)
    path = tmp_path / "linear.pt"
    torch.save(lin.state_dict(), path)
    with open(path, "rb") as handle:
        for f in (path, str(path), handle):
            sd = microtorch.load(f, map_location="cpu", weights_only=True)
            assert_same(torch.load(path, map_location="cpu", weights_only=True), sd)
    ours = nn.Linear(4, 3)
    ours.load_state_dict(sd)
    x = torch.randn(2, 4)
    assert_outputs_as_torchs(ours(microtorch.tensor(x.numpy())).detach().numpy(), lin(x).detach().numpy(),
                             copied_from(lin, nn.Linear(4, 3))(microtorch.tensor(x.numpy())).detach().numpy())


@pytest.mark.parametrize("map_location", ["cpu", "device", "dict", "callable", "None"])
def test_map_location_puts_everything_on_the_cpu(map_location):
    data = torch_bytes({"w": torch.ones(2, 2)})
    ml = {"cpu": "cpu", "device": microtorch.device("cpu"), "dict": {"cuda:0": "cpu"},
          "callable": lambda storage, location: storage, "None": None}[map_location]
    ours = microtorch.load(io.BytesIO(data), map_location=ml)
    assert ours["w"].device == microtorch.device("cpu") and ours["w"].tolist() == [[1.0, 1.0], [1.0, 1.0]]


def test_a_checkpoint_resumes_training_as_in_torch():
    """PyTorch's "Saving and loading a general checkpoint": the model's and the optimizer's state dicts, then one
    more step in each library from what was loaded."""
    def mlp(lib):
        lib.manual_seed(0)
        return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
    net = mlp(torch)
    opt = torch.optim.Adam(net.parameters(), lr=0.01)
    x = torch.randn(4, 3)
    net(x).sum().backward()
    opt.step()
    theirs, ours = both(torch_bytes({"model": net.state_dict(), "optim": opt.state_dict(), "epoch": 3}))
    assert_same(theirs, ours)
    model = mlp(microtorch)
    model.load_state_dict(ours["model"])
    optim = microtorch.optim.Adam(model.parameters(), lr=0.5)
    optim.load_state_dict(ours["optim"])
    assert optim.param_groups[0]["lr"] == 0.01
    for lib, m, o in ((torch, net, opt), (microtorch, model, optim)):
        o.zero_grad()
        m.train()
        m(lib.tensor(x.numpy())).sum().backward()
        o.step()
    for a, b in zip(net.parameters(), model.parameters()):  # (Adam's step is lr * m / sqrt(v): a gradient's last
        if gemm_agrees():  # bit can move it by 1e-6; a moment loaded wrong, by lr)
            np.testing.assert_array_equal(b.detach().numpy(), a.detach().numpy())
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-5, atol=1e-5)


# ---- files of other shapes -------------------------------------------------------------------------------------------
def rewrite(data, change):
    """The zip in data with each member (name, bytes) passed through change, which may drop it (None)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            changed = change(info.filename, src.read(info.filename))
            if changed is not None:
                dst.writestr(changed[0], changed[1])
    return out.getvalue()


def test_an_archive_named_after_the_file_as_older_torch_wrote_it():
    data = torch_bytes({"w": torch.arange(3.0)})
    old = rewrite(data, lambda name, raw: (name.replace("archive/", "weights/", 1), raw))
    assert_same(*both(old))


def test_a_big_endian_file_is_swapped():
    obj = {"f": torch.tensor([1.5, -2.25]), "i": torch.tensor([1, 256, -3]), "z": torch.tensor([1 + 2j]),
           "b": torch.tensor([True, False])}
    data = torch_bytes(obj)
    theirs = torch.load(io.BytesIO(data))
    dtypes = {"0": np.float32, "1": np.int64, "2": np.complex64, "3": np.bool_}

    def big(name, raw):
        if name.endswith("byteorder"):
            return name, b"big"
        if "/data/" in name:
            return name, np.frombuffer(raw, dtypes[name.rsplit("/", 1)[1]]).byteswap().tobytes()
        return name, raw
    swapped = rewrite(data, big)
    assert swapped != data
    for k, v in torch.load(io.BytesIO(swapped)).items():  # the file is right: torch reads the values back
        np.testing.assert_array_equal(v.numpy(), theirs[k].numpy())
    assert_same(theirs, microtorch.load(io.BytesIO(swapped)))


def test_storages_saved_on_a_gpu_need_map_location_as_in_torch():
    data = torch_bytes({"w": torch.ones(2)})
    on_gpu = rewrite(data, lambda name, raw: (name, raw.replace(b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0")
                                              if name.endswith("data.pkl") else raw))
    with pytest.raises(RuntimeError, match="CUDA device") as theirs:
        torch.load(io.BytesIO(on_gpu))
    with pytest.raises(type(theirs.value), match="map_location=torch.device\\('cpu'\\)"):
        microtorch.load(io.BytesIO(on_gpu))
    with pytest.raises(RuntimeError, match="CUDA device"):
        microtorch.load(io.BytesIO(data), map_location="cuda")
    for ml in ("cpu", {"cuda:0": "cpu"}, lambda s, loc: s):
        theirs, ours = both(on_gpu, map_location=ml)
        assert_same(theirs, ours)


def test_a_dtype_microtorch_lacks_is_named():
    for dtype in ("bfloat16", "uint16"):
        data = torch_bytes({"w": torch.ones(2, dtype=getattr(torch, dtype))})
        assert torch.load(io.BytesIO(data))["w"].dtype is getattr(torch, dtype)
        with pytest.raises(RuntimeError, match="microtorch does not have") as info:
            microtorch.load(io.BytesIO(data))
        assert dtype in str(info.value).lower()


@pytest.mark.parametrize("damage", ["missing storage", "short storage", "truncated pickle", "tensor past its end",
                                    "bad byteorder"])
def test_a_damaged_torch_file_says_it_is_corrupt(damage):
    data = torch_bytes({"w": torch.arange(6.0)})

    def damaged(name, raw):
        if damage == "missing storage" and name.endswith("/data/0"):
            return None
        if damage == "short storage" and name.endswith("/data/0"):
            return name, raw[:8]
        if damage == "truncated pickle" and name.endswith("data.pkl"):
            return name, raw[: len(raw) // 2]
        if damage == "tensor past its end" and name.endswith("data.pkl"):
            return name, raw.replace(b"K\x06\x85", b"K\x09\x85")  # the size (6,) becomes (9,)
        if damage == "bad byteorder" and name.endswith("byteorder"):
            return name, b"middle"
        return name, raw
    bad = rewrite(data, damaged)
    assert bad != data
    with pytest.raises(Exception):
        torch.load(io.BytesIO(bad))
    with pytest.raises(RuntimeError, match="is corrupt"):
        microtorch.load(io.BytesIO(bad))


def test_a_truncated_zip_and_a_legacy_pickle_are_refused_clearly(tmp_path):
    data = torch_bytes({"w": torch.ones(3)})
    (tmp_path / "cut.pt").write_bytes(data[: len(data) // 2])
    with pytest.raises(RuntimeError, match="not a microtorch file or is corrupt"):
        microtorch.load(tmp_path / "cut.pt")
    torch.save({"w": torch.ones(3)}, tmp_path / "legacy.pt", _use_new_zipfile_serialization=False)
    with pytest.raises(RuntimeError, match="before torch 1.6"):
        microtorch.load(tmp_path / "legacy.pt")


def test_microtorchs_own_files_still_load(tmp_path):
    sd = nn.Linear(2, 3).state_dict()
    microtorch.save(sd, tmp_path / "m.pt")
    back = microtorch.load(tmp_path / "m.pt")
    assert list(back) == list(sd) and all(microtorch.equal(back[k], sd[k]) for k in sd)
    microtorch.save({"x": [microtorch.ones(2)], "e": 3}, tmp_path / "c.pt")
    assert microtorch.load(tmp_path / "c.pt")["e"] == 3


# ---- refusals: nothing but tensors and containers --------------------------------------------------------------------
CALLED = []


def record_call(*args):
    CALLED.append(args)
    return "ran"


class Point:
    def __init__(self, x):
        self.x = x


class Evil:
    def __reduce__(self):
        return (record_call, ("the file ran code",))


@pytest.mark.parametrize("what", ["model", "model in a checkpoint", "custom class", "code"])
@pytest.mark.parametrize("weights_only", [True, False])
def test_anything_else_is_refused_naming_the_global(what, weights_only):
    obj, name = {"model": (torch.nn.Linear(2, 2), "torch.nn.modules.linear.Linear"),
                 "model in a checkpoint": ({"epoch": 1, "model": torch.nn.Sequential(torch.nn.ReLU())},
                                           "torch.nn.modules.container.Sequential"),
                 "custom class": ({"p": Point(1)}, f"{__name__}.Point"),
                 "code": ([Evil()], f"{__name__}.record_call")}[what]
    data = torch_bytes(obj)
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        torch.load(io.BytesIO(data))
    CALLED.clear()
    with pytest.raises(pickle.UnpicklingError) as info:
        microtorch.load(io.BytesIO(data), weights_only=weights_only)
    message = str(info.value)
    assert name in message and "state_dict()" in message and "tensors, Parameters and containers" in message
    assert ("Weights only load failed" in message) == weights_only
    assert ("cannot rebuild" in message) == (not weights_only)
    assert CALLED == []


def test_weights_only_none_is_torchs_default():
    data = torch_bytes(torch.nn.Linear(2, 2))
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        torch.load(io.BytesIO(data), weights_only=None)
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        microtorch.load(io.BytesIO(data), weights_only=None)


def test_a_saved_attribute_cannot_replace_what_a_tensor_has():
    t = torch.ones(2)
    t.__dict__["dtype"] = "not a dtype"  # (torch pickles a tensor's __dict__ as its state)
    data = torch_bytes(t)
    with pytest.raises(pickle.UnpicklingError, match="attribute 'dtype'"):
        microtorch.load(io.BytesIO(data))


def test_a_refused_file_does_not_import_torch():
    import subprocess
    import sys
    script = ("import io, sys, pickle, microtorch\n"
              f"data = {torch_bytes(torch.nn.Linear(2, 2))!r}\n"
              "for w in (True, False):\n"
              "    try: microtorch.load(io.BytesIO(data), weights_only=w)\n"
              "    except pickle.UnpicklingError: pass\n"
              "print('torch' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def torch_zip_with(pickled):
    """A torch.save zip whose data.pkl is `pickled` (a crafted file)."""
    return rewrite(torch_bytes(torch.ones(1)), lambda name, raw: (name, pickled if name.endswith("data.pkl") else raw))


def test_a_crafted_build_cannot_change_a_shared_dtype():
    # float32, then BUILD with the state (None, {'name': 'evil'}): the C unpickler would set float32.name
    crafted = b"\x80\x02ctorch\nfloat32\nN}X\x04\x00\x00\x00nameX\x04\x00\x00\x00evils\x86b."
    with pytest.raises(pickle.UnpicklingError):
        torch.load(io.BytesIO(torch_zip_with(crafted)))
    with pytest.raises(pickle.UnpicklingError, match="sets the state of a dtype"):
        microtorch.load(io.BytesIO(torch_zip_with(crafted)))
    assert microtorch.float32.name == "float32"


@pytest.mark.parametrize("crafted", [b"\x80\x02ctorch\nFloatStorage\nJ\x00\x00\x00\x10\x85R.",
                                     b"\x80\x02c__builtin__\nbytearray\nJ\x00\x00\x00\x10\x85R."])
def test_a_crafted_file_cannot_allocate_what_it_likes(crafted):
    # torch.FloatStorage(2**28), bytearray(2**28): a storage class is only a marker here, not something a file can
    # call, and a bytearray is made of bytes, not of a size
    with pytest.raises(RuntimeError, match="is corrupt"):
        microtorch.load(io.BytesIO(torch_zip_with(crafted)))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_torchscript_archives_are_refused_clearly(tmp_path):
    scripted = torch.jit.script(torch.nn.Linear(2, 2))
    torch.jit.save(scripted, tmp_path / "scripted.pt")
    with pytest.raises(RuntimeError, match="TorchScript"):
        microtorch.load(tmp_path / "scripted.pt")
