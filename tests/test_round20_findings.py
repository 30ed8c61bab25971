"""The twentieth round's findings, each compared with torch 2.13: the fuzzer's seeds and the lines of teaching code
(textbooks and courses run with the import changed) that differed."""
import itertools

import numpy as np
import pytest
import torch

import microtorch

LIBS = (torch, microtorch)


# ---- suggest_memory_format (fuzz 4,675,070) ------------------------------------------------------------------------
# torch reads a layout as channels last by its strides in the order C, W, (H, D,) N, size-1 dims included (so a
# size-1 W with the channel's stride is C order). pad lays its output out so, and `to(memory_format=)` compares with it.
def _layouts():
    for shape in [(1, 2, 1, 2, 1), (2, 3, 1, 1), (1, 3, 2, 2), (2, 1, 3, 3), (2, 3, 4, 5), (1, 1, 2, 2),
                  (2, 2, 1, 3, 2)]:
        for perm in itertools.permutations(range(len(shape))):
            yield shape, perm


def _made(lib, shape, perm):
    base = lib.arange(float(np.prod(shape))).reshape([shape[d] for d in perm])
    return base.permute(*np.argsort(perm).tolist())


@pytest.mark.parametrize("shape,perm", list(_layouts())[::3])
def test_pad_lays_out_as_torch(shape, perm):
    outs = [lib.nn.functional.pad(_made(lib, shape, perm), (1, 1)) for lib in LIBS]
    assert outs[0].shape == outs[1].shape
    assert outs[0].stride() == outs[1].stride()
    np.testing.assert_array_equal(outs[0].numpy(), outs[1].numpy())


@pytest.mark.parametrize("shape,perm", list(_layouts())[1::3])
def test_to_memory_format_copies_when_torch_does(shape, perm):
    for fmt in ("channels_last", "channels_last_3d", "contiguous_format"):
        if fmt != "contiguous_format" and len(shape) != (4 if fmt == "channels_last" else 5):
            continue
        same = []
        for lib in LIBS:
            x = _made(lib, shape, perm)
            same.append(x.to(lib.float64, memory_format=getattr(lib, fmt)) is x)
        assert same[0] == same[1], fmt


def test_fuzz_4675070_matmul_after_pad_views_as_torch():
    names = []
    for lib in LIBS:
        a0 = lib.tensor([[[1., 2.], [1., 1.]]], dtype=lib.float64, requires_grad=True)
        v1 = lib.clamp(lib.einsum('abc->cab', a0), min=0, max=0).unsqueeze_(0).unsqueeze(-1)
        v7 = lib.matmul(lib.nn.functional.pad(v1, (1, 1)), lib.tensor([0., -1., -0.], dtype=lib.float64))
        node, chain = v7.grad_fn, []
        while node is not None and node.next_functions:
            chain.append(node.name())
            node = node.next_functions[0][0]
        names.append(chain)
    assert names[0] == names[1]


# ---- warnings torch gives when memory cannot be shared (Raschka ch13, ch15) ----------------------------------------
_WARNINGS = """
import sys, warnings
import numpy as np
import {lib} as torch
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as seen:
    {code}
print([(w.category.__name__, str(w.message).split(".")[0].split(":")[0].split(",")[0], w.filename == "<string>")
       for w in seen])
"""


@pytest.mark.parametrize("code", [
    "a = np.arange(3.); a.flags.writeable = False; torch.from_numpy(a); torch.from_numpy(a); torch.as_tensor(a)",
    "a = np.arange(3.); torch.from_numpy(a); torch.tensor(a); a.flags.writeable = False; torch.tensor(a)",
    "torch.tensor([np.ones(2), np.ones(2)]); torch.tensor([[1., 2.], np.ones(2)])",
    "torch.tensor((np.ones(2),), dtype=torch.float32)",
    "torch.tensor([1.0, np.ones(())])",
    "torch.tensor([np.float64(1.0), np.float32(2.0)]); torch.tensor([[1, 2]]); torch.tensor(np.ones((2, 2)))",
])
def test_warnings_as_torchs(code):
    import subprocess
    import sys
    outs = [subprocess.run([sys.executable, "-c", _WARNINGS.format(lib=lib.__name__, code=code)], capture_output=True,
                           text=True, check=True).stdout for lib in LIBS]
    assert outs[0] == outs[1]


# ---- torch.multiprocessing (fast.ai part 2's 04_minibatch_training) ---------------------------------------------
def test_multiprocessing_has_torchs_names():
    import torch.multiprocessing as theirs

    import microtorch.multiprocessing as ours
    wanted = {n for n in dir(theirs) if not n.startswith("_")} & (set(theirs.__all__) | {"spawn", "Pool"})
    missing = {n for n in wanted if not hasattr(ours, n)} - {"ENV_VAR_PARALLEL_START", "reductions", "init_reductions"}
    assert not missing
    assert microtorch.multiprocessing.get_all_sharing_strategies() == theirs.get_all_sharing_strategies()


def test_sharing_strategies_as_torchs():
    import torch.multiprocessing as theirs

    import microtorch.multiprocessing as ours
    for mp in (theirs, ours):
        assert mp.get_sharing_strategy() == "file_descriptor"
        mp.set_sharing_strategy("file_system")
        assert mp.get_sharing_strategy() == "file_system"
        mp.set_sharing_strategy("file_descriptor")
        with pytest.raises(AssertionError):
            mp.set_sharing_strategy("shared_memory")


def _square_sum(x):
    return float((microtorch.tensor(x) ** 2).sum())


def _put_sum(i, queue):
    queue.put((i, float(microtorch.ones(3).sum() * i)))


def _fail(i):
    raise ValueError(f"worker {i} fails")


def test_a_pool_maps_tensors():
    import microtorch.multiprocessing as mp
    with mp.get_context("fork").Pool(2) as pool:  # (fork: a spawned worker would import microtorch anew, slowly)
        assert pool.map(_square_sum, [[1.0, 2.0], [3.0]]) == [5.0, 9.0]


def test_start_processes_runs_and_reports_a_failure():
    import microtorch.multiprocessing as mp
    queue = mp.get_context("fork").SimpleQueue()
    mp.start_processes(_put_sum, args=(queue,), nprocs=2, start_method="fork")
    assert sorted([queue.get(), queue.get()]) == [(0, 0.0), (1, 3.0)]
    with pytest.raises(mp.ProcessRaisedException, match="ValueError: worker . fails"):
        mp.start_processes(_fail, nprocs=2, start_method="fork")


# ---- to(device=...) (Deep Learning with PyTorch, ch3: the keyword was ignored) ------------------------------------
_TO_CALLS = [dict(device="cuda"), dict(device="cuda:0"), dict(device="cpu"), dict(device="cpu", dtype="float64"),
             dict(dtype="float64", device="cuda"), dict(device="meta"), dict(device=None),
             dict(device="cpu", copy=True)]


@pytest.mark.parametrize("kwargs", _TO_CALLS)
@pytest.mark.parametrize("first", [None, "float64", "tensor"])
def test_to_reads_device_by_keyword(kwargs, first):
    results = []
    for lib in LIBS:
        p = lib.ones(2)
        args = () if first is None else (getattr(lib, first) if first != "tensor" else lib.zeros(1, dtype=lib.int64),)
        named = {k: getattr(lib, v) if k == "dtype" else v for k, v in kwargs.items()}
        try:
            r = p.to(*args, **named)
            results.append((str(r.dtype).split(".")[1], r.device.type, r is p))
        except (TypeError, AssertionError) as e:
            results.append((type(e).__name__, str(e).split(" - ")[0].split(" (")[0]))
    assert results[0] == results[1]


# ---- var and std over a dim of many elements (Deep Learning with PyTorch, ch4's wine table) ------------------------
# torch's Welford pass accumulates float32 in float64; two float32 passes over 5000 rows lost about 1e-5.
@pytest.mark.parametrize("rows", [5000, 20000])
@pytest.mark.parametrize("op", ["var", "std", "var_mean", "std_mean"])
@pytest.mark.parametrize("shift", [0.0, 100.0])
def test_long_variances_are_torchs(rows, op, shift):
    outs = []
    for lib in LIBS:
        lib.manual_seed(0)
        x = lib.randn(rows, 3) * 0.84 + shift
        r = getattr(lib, op)(x, dim=0)
        r = r if isinstance(r, tuple) else (r,)
        outs.append([t.numpy() for t in r] + [getattr(lib, op)(x.t(), dim=1, keepdim=True)[0].numpy()])
    for a, b in zip(*outs):
        np.testing.assert_array_equal(a, b)


# ---- load of a file torch.save wrote (Deep Learning with PyTorch's data/ files): numpy's bytes reached the user --
# (tests/test_round20_torch_files.py checks the reader itself)
@pytest.mark.parametrize("obj", ["tensor", "dict", "state_dict"])
def test_load_reads_torchs_zip_files(obj, tmp_path):
    made = {"tensor": lambda: torch.arange(6.0).reshape(2, 3).t(), "dict": lambda: {"a": torch.ones(2), "n": 3},
            "state_dict": lambda: torch.nn.Linear(2, 2).state_dict()}[obj]()
    path = tmp_path / "model.pt"
    torch.save(made, path)
    got = microtorch.load(path)
    flat = (lambda d: {k: v for k, v in d.items()}) if isinstance(made, dict) else (lambda t: {"": t})
    for (k, want), (k2, have) in zip(flat(made).items(), flat(got).items(), strict=True):
        assert k == k2
        if isinstance(want, torch.Tensor):
            assert have.stride() == want.stride() and str(have.dtype)[11:] == str(want.dtype)[6:]
            np.testing.assert_array_equal(have.numpy(), want.numpy())
        else:
            assert have == want


def test_load_refuses_a_zip_that_is_not_an_npz(tmp_path):
    import zipfile
    with zipfile.ZipFile(tmp_path / "notes.zip", "w") as z:
        z.writestr("notes.txt", "hello")
    with pytest.raises(RuntimeError, match="not a microtorch file"):
        microtorch.load(tmp_path / "notes.zip")


# ---- batch_first recurrent layers (Raschka ch15): torch's RNN and GRU turn their output in place -----------------
@pytest.mark.parametrize("module", ["RNN", "GRU", "LSTM"])
def test_batch_first_output_node_is_torchs(module):
    seen = []
    for lib in LIBS:
        lib.manual_seed(0)
        out = getattr(lib.nn, module)(5, 2, batch_first=True)(lib.randn(3, 4, 5))[0]
        seen.append((out.grad_fn.name(), out.stride(), out._version, out.shape))
    assert seen[0] == seen[1]


# ---- iter(DataLoader) and Dataset[T] (Udacity's intro to PyTorch, Deep Learning with PyTorch ch7) ---------------
def _loader_story(lib):
    data = lib.utils.data

    class Numbers(data.Dataset[int]):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return lib.tensor([i])

    class Stream(data.IterableDataset):
        def __iter__(self):
            return iter(range(3))

    lib.manual_seed(0)
    it = iter(data.DataLoader(Numbers(), batch_size=2, shuffle=True))
    told = [type(it).__name__, len(it), next(it).tolist(), [b.tolist() for b in it], iter(it) is it]
    try:
        it.next()  # (old tutorials' spelling: an AttributeError in both, naming the iterator's class)
    except AttributeError as e:
        told.append(str(e))
    stream = iter(data.DataLoader(Stream(), batch_size=2))
    return told + [type(stream).__name__, [b.tolist() for b in stream], [c.__name__ for c in Numbers.__mro__]]


def test_dataloader_iterator_and_generic_dataset_are_torchs():
    assert _loader_story(torch) == _loader_story(microtorch)


# ---- arange of numpy scalars (UvA's tutorial 4 plots a loss surface from np.absolute(pts).max()) ------------------
@pytest.mark.parametrize("args", [
    ("float32", 0, "float32", 1, "float32", 0.25), (None, 0, "float32", 2.5), ("int64", 3), ("int32", 3),
    ("int64", 1, "int64", 7, "int64", 2), ("float64", -1.5, None, 2), ("float32", -0.3, "float32", 0.3, None, 0.1),
    ("float16", 0, None, 1, None, 0.25), ("uint8", 2, "int16", 9),
])
def test_arange_of_numpy_scalars_is_torchs(args):
    values = [getattr(np, kind)(v) if kind else v for kind, v in zip(args[::2], args[1::2])]
    outs = [lib.arange(*values) for lib in LIBS]
    assert str(outs[0].dtype).split(".")[1] == str(outs[1].dtype).split(".")[1]
    np.testing.assert_array_equal(outs[0].numpy(), outs[1].numpy())


# ---- torch.cuda.Event (UvA's tutorial 2 times a GPU step): torch's RuntimeError without CUDA ----------------------
@pytest.mark.parametrize("name,kwargs", [("Event", {"enable_timing": True}), ("Stream", {})])
def test_cuda_timing_classes_refuse_as_torchs(name, kwargs):
    seen = []
    for lib in LIBS:
        with pytest.raises(RuntimeError) as caught:
            getattr(lib.cuda, name)(**kwargs)
        seen.append(str(caught.value).split(" (")[0])
    assert seen[0] == seen[1]


def test_pin_memory_warns_as_torchs():
    import warnings
    seen = []
    for lib in LIBS:
        data = lib.utils.data
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            [b for b in data.DataLoader(data.TensorDataset(lib.ones(4, 1)), batch_size=2, pin_memory=True)]
            [b for b in data.DataLoader(lib.ones(2))]
        seen.append([(w.category, str(w.message)) for w in caught])
    assert seen[0] == seen[1] and len(seen[0]) == 1


# ---- dot of a strided vector (fast.ai part 2's 01_matmul: a[i] . b[:, j]) -----------------------------------------
# MKL walks a strided pair in order: float32 one product after another, float64 in two running sums (even, odd).
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [1, 2, 3, 7, 100, 783, 784])
def test_strided_dot_adds_as_torchs(dtype, n):
    r = np.random.RandomState(n)
    a, w = r.random_sample((4, n)).astype(dtype), r.standard_normal((n, 3)).astype(dtype)
    outs = []
    for lib in LIBS:
        A, W = lib.tensor(a), lib.tensor(w)
        assert lib.dot(A[0], W[:, 0]).shape == () and (A[0] @ W[:, 0]).shape == ()
        outs.append([lib.dot(A[i], W[:, j]).item() for i in range(4) for j in range(3)]
                    + [lib.dot(W[:, 1], A[0]).item(), (A[1] @ W[:, 2]).item(), lib.dot(W[:, 0], W[:, 1]).item(),
                       lib.dot(A[2, ::3], W[::3, 0]).item()])
    assert outs[0] == outs[1]


def test_the_course_dot_matmul_is_close_to_the_loop():
    r = np.random.RandomState(42)
    a, w = microtorch.tensor(r.random_sample((5, 784)).astype(np.float32)), microtorch.randn(784, 10)
    loop = microtorch.zeros(5, 10)
    for k in range(784):
        loop += a[:, k:k + 1] * w[k]
    by_dot = microtorch.stack([microtorch.stack([microtorch.dot(a[i], w[:, j]) for j in range(10)]) for i in range(5)])
    assert microtorch.equal(by_dot, loop)  # (both add the products in order, as torch's do)


# ---- a distribution's repr (found while building MultivariateNormal) ---------------------------------------------
def test_distribution_reprs_are_torchs():
    shown = []
    for lib in LIBS:
        d = lib.distributions
        shown.append([repr(x).replace(lib.__name__ + ".", "") for x in (
            d.Normal(lib.tensor([0.]), lib.tensor([1.])), d.Normal(lib.tensor(0.), lib.tensor(1.)), d.Normal(0., 1.),
            d.Bernoulli(lib.tensor([0.3, 0.5])), d.Categorical(lib.tensor([0.2, 0.8])),
            d.Normal(lib.tensor([0.5], requires_grad=True), 1.0))])
    assert shown[0] == shown[1]


@pytest.mark.parametrize("make", ["ones(2, 3)", "zeros(4, dtype={lib}.float64)", "arange(6).reshape(2, 3).t()",
                                  "ones(3).expand(4, 3)", "tensor(True)", "zeros(0, 5)"])
def test_nbytes_and_itemsize_are_torchs(make):
    made = [eval(f"lib.{make}".replace("{lib}", "lib"), {"lib": lib}) for lib in LIBS]
    assert [(t.nbytes, t.itemsize) for t in made][0] == [(t.nbytes, t.itemsize) for t in made][1]


@pytest.mark.parametrize("make", ["Categorical(logits=w)", "Bernoulli(logits=w)", "Categorical(probs=w.softmax(0))",
                                  "Bernoulli(probs=w.sigmoid())"])
def test_derived_parameters_keep_their_history_under_no_grad(make):
    seen = []
    for lib in LIBS:
        w = lib.tensor([0.1, 0.5], requires_grad=True)
        d = eval(make, {"w": w, **vars(lib.distributions)})
        with lib.no_grad():
            derived = d.logits if "probs=" in make else d.probs
        seen.append((derived.requires_grad, derived.grad_fn.name() if derived.grad_fn else None))
    assert seen[0] == seen[1]


# ---- a distribution's checks of a value to score: torch's ValueErrors (a list leaked an AttributeError) ------------
_SCORED = ["Bernoulli(lib.tensor([0.3, 0.5])).log_prob(lib.tensor([0.5, 1.0]))",
           "Categorical(lib.tensor([0.2, 0.8])).log_prob(lib.tensor([3]))",
           "Normal(lib.zeros(2), lib.ones(2)).log_prob(lib.zeros(3))",
           "Bernoulli(lib.tensor([0.3, 0.5])).log_prob([1.0])",
           "MultivariateNormal(lib.zeros(2), lib.eye(2)).log_prob(lib.zeros(3))",
           "Categorical(lib.tensor([0.2, 0.8])).log_prob([1])", "Normal(0.0, 1.0).log_prob(lib.ones(2, 3))"]


@pytest.mark.parametrize("call", _SCORED)
def test_scored_values_are_checked_as_torch(call):
    seen = []
    for lib in LIBS:
        try:
            seen.append(eval(call, {"lib": lib, **vars(lib.distributions)}).shape)
        except ValueError as e:
            seen.append(str(e).replace(lib.__name__ + ".", ""))
    assert seen[0] == seen[1]
