"""Batch and instance normalization beside torch 2.13: the running statistics' versions (torch's kernel updates
them in training without counting a version; instance_norm copies into them, which counts one), in train and
eval mode, with momentum None, tracking on or off, under no_grad and inference_mode; and torch's checks of the
input and parameters (dtypes, sizes, eps, the statistics eval needs), a float16 input with float32 parameters,
an empty batch, and vmap."""
import contextlib

import numpy as np
import pytest
import torch

import microtorch as mt

X = np.random.default_rng(0).standard_normal((4, 3, 2, 2))
MODULES = {
    "bn2d": lambda L: L.nn.BatchNorm2d(3),
    "bn2d_momentum_none": lambda L: L.nn.BatchNorm2d(3, momentum=None),
    "bn2d_momentum_0": lambda L: L.nn.BatchNorm2d(3, momentum=0.0),
    "bn2d_no_tracking": lambda L: L.nn.BatchNorm2d(3, track_running_stats=False),
    "bn2d_no_affine": lambda L: L.nn.BatchNorm2d(3, affine=False),
    "bn2d_float64": lambda L: L.nn.BatchNorm2d(3, dtype=L.float64),
    "bn1d": lambda L: L.nn.BatchNorm1d(3),
    "instance_tracking": lambda L: L.nn.InstanceNorm2d(3, affine=True, track_running_stats=True),
}
CONTEXTS = {"grad": lambda L: contextlib.nullcontext(), "no_grad": lambda L: L.no_grad(),
            "inference_mode": lambda L: L.inference_mode()}


def _versions(m):
    return tuple(None if getattr(m, n, None) is None else getattr(m, n)._version
                 for n in ("running_mean", "running_var", "num_batches_tracked"))


def _steps(lib, name, mode, context):
    m = MODULES[name](lib)
    m.train(mode == "train")
    dtype = lib.float64 if name.endswith("float64") else lib.float32
    x = lib.tensor(X[:, :, :, 0] if name == "bn1d" else X, dtype=dtype, requires_grad=context == "grad")
    seen = [_versions(m)]
    for _ in range(2):
        with CONTEXTS[context](lib):
            y = m(x)
        seen.append((_versions(m), y.grad_fn.name() if y.grad_fn is not None else None))
    stats = [None if getattr(m, n, None) is None else getattr(m, n).double().numpy().copy()
             for n in ("running_mean", "running_var")]
    return seen, stats


@pytest.mark.parametrize("context", list(CONTEXTS))
@pytest.mark.parametrize("mode", ["train", "eval"])
@pytest.mark.parametrize("name", list(MODULES))
def test_the_running_statistics_versions_follow_torch(name, mode, context):
    (mine, my_stats), (theirs, their_stats) = _steps(mt, name, mode, context), _steps(torch, name, mode, context)
    assert mine == theirs
    for a, b in zip(my_stats, their_stats):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


def _call(lib, case):
    F = lib.nn.functional
    x = lib.tensor(X, dtype=lib.float32)
    z, o = lib.zeros(3), lib.ones(3)
    return {
        "stats_of_float64": lambda: F.batch_norm(x, z.double(), o.double(), training=True),
        "weight_of_float64": lambda: F.batch_norm(x, z, o, o.double(), z.double(), training=True),
        "input_of_float64": lambda: F.batch_norm(x.double(), z, o, training=True),
        "input_of_float64_eval": lambda: F.batch_norm(x.double(), z, o, training=False),
        "input_of_float64_weight": lambda: F.batch_norm(x.double(), None, None, o, z, training=True),
        "stats_of_float16": lambda: F.batch_norm(x, z.half(), o.half(), training=True),
        "half_input_weight_float64": lambda: F.batch_norm(x.half(), None, None, o.double(), training=True),
        "integer_input": lambda: F.batch_norm(lib.ones(4, 3, dtype=lib.int64), z, o, training=True),
        "complex_input": lambda: F.batch_norm(lib.ones(4, 3, dtype=lib.complex64), None, None, training=True),
        "mean_without_var": lambda: F.batch_norm(x, z, None, training=True),
        "var_without_mean": lambda: F.batch_norm(x, None, o, training=True),
        "eval_without_mean": lambda: F.batch_norm(x, None, o, training=False),
        "eval_without_var": lambda: F.batch_norm(x, z, None, training=False),
        "wrong_mean_size": lambda: F.batch_norm(x, lib.zeros(4), o, training=True),
        "wrong_weight_size": lambda: F.batch_norm(x, z, o, lib.ones(4), training=False),
        "one_value_per_channel": lambda: F.batch_norm(x[:1, :, :1, :1], z, o, training=True),
        "eps_0_training": lambda: F.batch_norm(x, z, o, training=True, eps=0.0),
        "eps_negative_eval": lambda: F.batch_norm(x, z, o, training=False, eps=-1e-5),
        "layer_norm_float64_weight_float32": lambda: F.layer_norm(x.double(), (2,), lib.ones(2)),
        "layer_norm_integer": lambda: F.layer_norm(lib.ones(4, 3, dtype=lib.int64), (3,)),
        "instance_norm_float64_weight_float32": lambda: F.instance_norm(x.double(), z, o, o, z),
    }[case]()


CASES = ["stats_of_float64", "weight_of_float64", "input_of_float64", "input_of_float64_eval",
         "input_of_float64_weight", "stats_of_float16", "half_input_weight_float64", "integer_input", "complex_input",
         "mean_without_var", "var_without_mean", "eval_without_mean", "eval_without_var", "wrong_mean_size",
         "wrong_weight_size", "one_value_per_channel", "eps_0_training", "eps_negative_eval",
         "layer_norm_float64_weight_float32", "layer_norm_integer", "instance_norm_float64_weight_float32"]


@pytest.mark.parametrize("case", CASES)
def test_a_wrong_call_raises_torchs_error(case):
    with pytest.raises(Exception) as theirs:
        _call(torch, case)
    with pytest.raises(type(theirs.value)) as mine:
        _call(mt, case)
    expected = str(theirs.value).replace("torch.Size", "microtorch.Size")
    assert str(mine.value).startswith(expected), (str(mine.value), expected)


@pytest.mark.parametrize("training", [True, False])
def test_a_float16_input_with_float32_parameters_gives_float16_as_torch(training):
    x16 = np.random.default_rng(1).standard_normal((4, 3, 2)).astype(np.float16)
    out = []
    for lib in (mt, torch):
        x = lib.tensor(x16, requires_grad=True)
        w, b = lib.tensor([1.0, 2.0, 0.5], requires_grad=True), lib.zeros(3, requires_grad=True)
        rm, rv = lib.zeros(3), lib.ones(3)
        y = lib.nn.functional.batch_norm(x, rm, rv, w, b, training=training)
        (y.float() ** 2).sum().backward()
        out.append((str(y.dtype).split(".")[1], str(x.grad.dtype).split(".")[1], str(w.grad.dtype).split(".")[1],
                    y.float().detach().numpy(), x.grad.float().numpy(), w.grad.numpy(), rm.numpy()))
    assert out[0][:3] == out[1][:3] == ("float16", "float16", "float32")
    for a, b in zip(out[0][3:], out[1][3:]):
        np.testing.assert_allclose(a, b, rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("use_input_stats", [True, False])
@pytest.mark.parametrize("dtypes", [("float64", "float32"), ("float32", "float64"), ("float16", "float32")])
def test_instance_norm_takes_statistics_of_another_dtype_as_torch(dtypes, use_input_stats):
    out = []
    for lib in (mt, torch):
        rm, rv = lib.zeros(3, dtype=getattr(lib, dtypes[1])), lib.ones(3, dtype=getattr(lib, dtypes[1]))
        y = lib.nn.functional.instance_norm(lib.tensor(X, dtype=getattr(lib, dtypes[0])), rm, rv,
                                            use_input_stats=use_input_stats)
        out.append((str(y.dtype).split(".")[1], rm._version, rm.double().numpy(), y.double().numpy()))
    assert out[0][:2] == out[1][:2]
    np.testing.assert_allclose(out[0][2], out[1][2], rtol=1e-3, atol=1e-6)
    np.testing.assert_allclose(out[0][3], out[1][3], rtol=1e-2, atol=1e-3)


def test_an_empty_batch_takes_torchs_shortcut():
    for lib in (mt, torch):
        x = lib.zeros(0, 3, requires_grad=True)
        w, b = lib.tensor([2.0, 3.0, 4.0], requires_grad=True), lib.ones(3, requires_grad=True)
        rm, rv = lib.zeros(3), lib.ones(3)
        y = lib.nn.functional.batch_norm(x * 1, rm, rv, w, b, training=True)
        assert tuple(y.shape) == (0, 3) and y.grad_fn.name() == "AddBackward0"
        assert [n.name() for n, _ in y.grad_fn.next_functions] == ["MulBackward0", "SelectBackward0"]
        assert rm._version == 0 and rm.tolist() == [0.0, 0.0, 0.0]
        y.sum().backward()
        assert w.grad.tolist() == b.grad.tolist() == [0.0, 0.0, 0.0]


def test_vmap_refuses_to_update_unbatched_statistics_as_torch():
    x = np.random.default_rng(2).standard_normal((5, 4, 3))
    for lib in (mt, torch):
        rm, rv = lib.zeros(3, dtype=lib.float64), lib.ones(3, dtype=lib.float64)
        f = lib.func.vmap(lambda a: lib.nn.functional.batch_norm(a, rm, rv, training=True))
        with pytest.raises(RuntimeError, match="Batch norm got a batched tensor as input while the running_mean or "
                                               "running_var, which will be updated in place, were not batched"):
            f(lib.tensor(x))
        y = lib.func.vmap(lambda a: lib.nn.functional.batch_norm(a, rm, rv, training=False))(lib.tensor(x))
        assert tuple(y.shape) == (5, 4, 3) and rm._version == rv._version == 0
