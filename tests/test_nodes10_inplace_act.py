"""The in-place activations and dropouts on a non-leaf, beside torch 2.13: the node's name, what it saved
(grad_fn._saved_*), the input's version, the gradient, and the error on a leaf or a view of a leaf. Also the
saved attributes of the out-of-place activations."""
import numpy as np
import pytest
import torch

import microtorch as mt

X = [-2.0, -0.5, 0.5, 2.0, 7.0, 1.0]

INPLACE = {
    "relu": lambda L, F, y: F.relu(y, inplace=True),
    "relu_": lambda L, F, y: F.relu_(y),
    "nn.ReLU": lambda L, F, y: L.nn.ReLU(inplace=True)(y),
    "leaky_relu": lambda L, F, y: F.leaky_relu(y, 0.1, inplace=True),
    "leaky_relu_": lambda L, F, y: F.leaky_relu_(y, 0.1),
    "elu": lambda L, F, y: F.elu(y, inplace=True),
    "elu_": lambda L, F, y: F.elu_(y),
    "hardtanh": lambda L, F, y: F.hardtanh(y, inplace=True),
    "hardtanh_": lambda L, F, y: F.hardtanh_(y),
    "nn.Hardtanh": lambda L, F, y: L.nn.Hardtanh(inplace=True)(y),
    "relu6": lambda L, F, y: F.relu6(y, inplace=True),
    "nn.ReLU6": lambda L, F, y: L.nn.ReLU6(inplace=True)(y),
    "threshold": lambda L, F, y: F.threshold(y, 0.3, 9.0, inplace=True),
    "threshold_": lambda L, F, y: F.threshold_(y, 0.3, 9.0),
    "nn.Threshold": lambda L, F, y: L.nn.Threshold(0.1, 20, inplace=True)(y),
    "selu": lambda L, F, y: F.selu(y, inplace=True),
    "celu": lambda L, F, y: F.celu(y, 0.5, inplace=True),
    "silu": lambda L, F, y: F.silu(y, inplace=True),
    "mish": lambda L, F, y: F.mish(y, inplace=True),
    "hardsigmoid": lambda L, F, y: F.hardsigmoid(y, inplace=True),
    "hardswish": lambda L, F, y: F.hardswish(y, inplace=True),
    "rrelu_eval": lambda L, F, y: F.rrelu(y, inplace=True),
    "rrelu_train": lambda L, F, y: F.rrelu(y, training=True, inplace=True),
}
OUT_OF_PLACE = {
    "hardtanh": lambda L, F, y: F.hardtanh(y, -0.5, 1.5), "relu6": lambda L, F, y: F.relu6(y),
    "nn.ReLU6": lambda L, F, y: L.nn.ReLU6()(y), "threshold": lambda L, F, y: F.threshold(y, 0.3, 9.0),
    "softshrink": lambda L, F, y: F.softshrink(y, 0.7), "hardshrink": lambda L, F, y: F.hardshrink(y),
    "selu": lambda L, F, y: F.selu(y), "celu": lambda L, F, y: F.celu(y, 0.5),
    "rrelu_eval": lambda L, F, y: F.rrelu(y), "rrelu_train": lambda L, F, y: F.rrelu(y, training=True),
    "glu": lambda L, F, y: F.glu(y), "glu_dim0": lambda L, F, y: F.glu(y.view(2, 3), 0),
    "prelu": lambda L, F, y: F.prelu(y.view(1, 6), L.tensor([0.2], dtype=L.float64)),
    "silu": lambda L, F, y: F.silu(y), "mish": lambda L, F, y: F.mish(y),
    "hardswish": lambda L, F, y: F.hardswish(y), "hardsigmoid": lambda L, F, y: F.hardsigmoid(y),
    "logsigmoid": lambda L, F, y: F.logsigmoid(y),
}
# torch's in-place ops that read the input in backward save a copy of it (self.clone(): a CloneBackward0 above the
# saved tensor); ops/inplace.py saves the input as it was, with its own history (the value is the same)
CLONED_BY_TORCH = "CloneBackward0"


def _run(lib, f, x=X):
    lib.manual_seed(0)
    leaf = lib.tensor(x, dtype=lib.float64, requires_grad=True)
    y = leaf * 1.0
    return leaf, y, f(lib, lib.nn.functional, y)


def _saved(node):
    """{name: value} of what a node saved, as torch names it (tensors as (values, grad_fn name))."""
    out = {}
    for name in dir(node):
        if not name.startswith("_saved_") or name in ("_saved_names", "_saved_values"):
            continue
        v = getattr(node, name)
        if hasattr(v, "grad_fn"):
            v = (v.detach().numpy().copy(), v.grad_fn.name() if v.grad_fn is not None else None)
        out[name] = v
    return out


def _same_saved(mine, theirs, eval_noise=False):
    assert sorted(mine) == sorted(theirs)
    for name, t in theirs.items():
        m = mine[name]
        if isinstance(t, tuple):
            if not (eval_noise and name == "_saved_noise"):  # (torch leaves it unfilled in eval mode)
                np.testing.assert_array_equal(m[0], t[0], err_msg=name)
            assert m[1] == t[1] or t[1] == CLONED_BY_TORCH, name
        else:
            assert m == t and type(m) is type(t), name


@pytest.mark.parametrize("name", list(INPLACE))
def test_an_inplace_activation_records_torchs_node_and_gradient(name):
    f = INPLACE[name]
    (tx, ty, tz), (mx, my, mz) = _run(torch, f), _run(mt, f)
    assert mz is my and tz is ty
    assert mz.grad_fn.name() == tz.grad_fn.name() and my._version == ty._version == 1
    assert [n.name() for n, _ in mz.grad_fn.next_functions] == [n.name() for n, _ in tz.grad_fn.next_functions]
    _same_saved(_saved(mz.grad_fn), _saved(tz.grad_fn), eval_noise=name == "rrelu_eval")
    (mz * mz).sum().backward()
    (tz * tz).sum().backward()
    np.testing.assert_allclose(mx.grad.numpy(), tx.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("name", list(OUT_OF_PLACE))
def test_an_activation_node_saves_what_torchs_saves(name):
    f = OUT_OF_PLACE[name]
    (_, _, tz), (_, _, mz) = _run(torch, f), _run(mt, f)
    assert mz.grad_fn.name() == tz.grad_fn.name()
    _same_saved(_saved(mz.grad_fn), _saved(tz.grad_fn), eval_noise=name == "rrelu_eval")


@pytest.mark.parametrize("name", list(INPLACE))
def test_an_inplace_activation_on_a_leaf_or_its_view_raises_torchs_error(name):
    f = INPLACE[name]
    for lib in (torch, mt):
        leaf = lib.tensor(X, requires_grad=True)
        with pytest.raises(RuntimeError, match="^a leaf Variable that requires grad is being used in an in-place"):
            f(lib, lib.nn.functional, leaf)
        with pytest.raises(RuntimeError, match="^a view of a leaf Variable that requires grad is being used in an"):
            f(lib, lib.nn.functional, leaf[1:4])
        assert leaf._version == 0


@pytest.mark.parametrize("name", ["relu", "hardtanh", "elu", "silu", "threshold", "rrelu_eval"])
def test_an_inplace_activation_on_a_view_of_a_non_leaf_rewrites_the_base(name):
    f = INPLACE[name]
    out = []
    for lib in (torch, mt):
        leaf = lib.tensor(X, dtype=lib.float64, requires_grad=True)
        y = leaf * 1.0
        v = y[1:4]
        f(lib, lib.nn.functional, v)
        (y * y).sum().backward()
        out.append((v.grad_fn.name(), y.grad_fn.name(), y._version, v._base is y, y.detach().numpy().copy(),
                    leaf.grad.numpy().copy()))
    assert out[0][:4] == out[1][:4]
    np.testing.assert_allclose(out[1][4], out[0][4], rtol=1e-12)
    np.testing.assert_allclose(out[1][5], out[0][5], rtol=1e-12)


def test_threshold_in_place_is_torchs_second_overload():
    for lib in (torch, mt):
        y = lib.tensor(X, requires_grad=True) * 1
        assert lib.nn.functional.threshold(y, 0.0, 1.0, inplace=True).grad_fn.name() == "ThresholdBackward1"
        assert lib.nn.functional.threshold(y * 1, 0.0, 1.0).grad_fn.name() == "ThresholdBackward0"


# ---- dropout in place: torch multiplies into the input (mul_, then add_ for the alpha dropouts) -----------------
DROPOUTS = {
    "dropout": lambda L, F, y: F.dropout(y, 0.5, training=True, inplace=True),
    "nn.Dropout": lambda L, F, y: L.nn.Dropout(0.4, inplace=True)(y),
    "dropout_p1": lambda L, F, y: F.dropout(y, 1.0, training=True, inplace=True),
    "dropout_eval": lambda L, F, y: F.dropout(y, 0.5, training=False, inplace=True),
    "alpha_dropout": lambda L, F, y: F.alpha_dropout(y, 0.5, training=True, inplace=True),
    "alpha_dropout_p1": lambda L, F, y: F.alpha_dropout(y, 1.0, training=True, inplace=True),
    "dropout1d": lambda L, F, y: F.dropout1d(y.view(2, 3, 4), 0.5, training=True, inplace=True),
    "dropout2d": lambda L, F, y: F.dropout2d(y.view(2, 3, 2, 2), 0.5, training=True, inplace=True),
    "feature_alpha_dropout": lambda L, F, y: F.feature_alpha_dropout(y.view(2, 12, 1), 0.5, training=True,
                                                                     inplace=True),
}


@pytest.mark.parametrize("name", list(DROPOUTS))
def test_dropout_in_place_writes_into_the_input_as_torch(name):
    f = DROPOUTS[name]
    out = []
    for lib in (torch, mt):
        lib.manual_seed(3)
        leaf = lib.tensor(X * 4, dtype=lib.float64, requires_grad=True)
        y = leaf * 1.0
        z = f(lib, lib.nn.functional, y)
        z_is_y = z is y or z._base is y
        (y * y).sum().backward()
        out.append((z.grad_fn.name(), y.grad_fn.name(), y._version, z_is_y, y.detach().numpy().copy(),
                    leaf.grad.numpy().copy()))
    assert out[0][:4] == out[1][:4]
    np.testing.assert_allclose(out[1][4], out[0][4], rtol=1e-12)
    np.testing.assert_allclose(out[1][5], out[0][5], rtol=1e-12)


def test_dropout_in_place_draws_as_torch_and_refuses_a_leaf():
    for lib in (torch, mt):
        with pytest.raises(RuntimeError, match="^a leaf Variable that requires grad"):
            lib.nn.functional.dropout(lib.ones(3, requires_grad=True), 0.5, True, True)
    draws = []
    for lib in (torch, mt):
        lib.manual_seed(7)
        x = lib.ones(50)
        lib.nn.functional.dropout(x, 0.3, True, inplace=True)
        draws.append((x.numpy().copy(), lib.rand(2).numpy()))
    np.testing.assert_array_equal(draws[0][0], draws[1][0])
    np.testing.assert_array_equal(draws[0][1], draws[1][1])
