"""float32 activations beside torch 2.13, bit for bit: elu, selu, celu (SLEEF's expm1), softplus and logsigmoid (SLEEF's
exp and log1p), mish and gelu's tanh form (SLEEF's tanh too), on the vector lanes torch's loops run and on the C
library's tails; values, gradients and in-place forms, one and two threads, sizes around the lanes and the thread
cuts, contiguous and transposed inputs."""
import numpy as np
import pytest
import torch

import microtorch as mt
from microtorch import _double_float, _kernel_exp, _kernel_log

ACTIVATIONS = {
    "elu": lambda F, t: F.elu(t), "elu_alpha": lambda F, t: F.elu(t, alpha=0.7), "selu": lambda F, t: F.selu(t),
    "celu": lambda F, t: F.celu(t, alpha=1.3), "softplus": lambda F, t: F.softplus(t),
    "softplus_beta": lambda F, t: F.softplus(t, beta=2.0, threshold=5.0), "logsigmoid": lambda F, t: F.logsigmoid(t),
    "mish": lambda F, t: F.mish(t), "gelu_tanh": lambda F, t: F.gelu(t, approximate="tanh"),
}
SHAPES = [(1,), (7,), (31,), (32,), (33,), (100,), (7, 13), (300, 301), (32769,), (70001,)]


def _run(lib, name, x, view, grad_seed):
    t = lib.tensor(x, requires_grad=True)
    y = ACTIVATIONS[name](lib.nn.functional, view(t))
    g = (np.random.default_rng(grad_seed).standard_normal(tuple(y.shape)) * 2).astype(np.float32)
    y.backward(lib.tensor(g))
    return y.detach().numpy(), t.grad.numpy(), tuple(y.stride())


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_activation_bits(threads, name, shape):
    x = (np.random.default_rng(sum(shape)).standard_normal(shape) * 5).astype(np.float32)
    views = {"contiguous": lambda t: t}
    if len(shape) == 2:
        views["transposed"], views["strided"] = (lambda t: t.t()), (lambda t: t[:, ::2])
        views["rows"] = lambda t: t[:, 1:]  # (each row a contiguous run: torch's vector loop runs row by row)
    for label, view in views.items():
        (ours, our_grad, our_strides), (theirs, their_grad, their_strides) = (_run(lib, name, x, view, 3)
                                                                              for lib in (mt, torch))
        assert ours.tobytes() == theirs.tobytes(), label
        assert our_grad.tobytes() == their_grad.tobytes(), label
        assert our_strides == their_strides, label  # (a transposed input's result is laid out as it)


@pytest.mark.parametrize("name", ["elu", "selu", "celu"])
def test_in_place_forms(name):
    x = (np.random.default_rng(5).standard_normal(1000) * 4).astype(np.float32)
    outs = []
    for lib in (mt, torch):
        t = lib.tensor(x, requires_grad=True)
        y = t * 1
        getattr(lib.nn.functional, name)(y, inplace=True)
        y.sum().backward()
        outs.append((y.detach().numpy(), t.grad.numpy()))
    assert outs[0][0].tobytes() == outs[1][0].tobytes() and outs[0][1].tobytes() == outs[1][1].tobytes()


SPECIAL = np.array([0.0, -0.0, 1e-45, -1e-45, 1e-30, -1e-30, 1e-7, -1e-7, 0.5, -0.5, 8.6, -8.6, 8.7, -8.7, 16.6,
                    -16.6, 16.7, -16.7, 20, 20.5, -20, 60, -60, 88.7, -88.7, 89, -89, 104, -104, 105, -105, 1e30,
                    -1e30, np.inf, -np.inf, np.nan] * 4, np.float32)  # (four times: on the vector lanes)


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_special_values(name):
    with np.errstate(all="ignore"):
        (ours, our_grad, _), (theirs, their_grad, _) = (_run(lib, name, SPECIAL, lambda t: t, 4) for lib in (mt, torch))
    np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_array_equal(our_grad, their_grad)


def test_sleef_functions_are_within_an_ulp_or_two():
    # the vector functions on their own, against double precision: SLEEF's u10 promise, which a slip in a
    # double-float step would break
    x = np.concatenate([np.linspace(-20, 20, 40001), np.geomspace(1e-30, 80, 20001)]).astype(np.float32)
    exact = {"expm1": np.expm1(x.astype(np.float64)), "tanh": np.tanh(x.astype(np.float64)),
             "log1p": np.log1p(np.abs(x).astype(np.float64))}
    ours = {"expm1": _kernel_exp.expm1_vector(x), "tanh": _kernel_exp.tanh_vector(x),
            "log1p": _kernel_log.log1p_vector(np.abs(x))}
    for name in exact:
        ulp = np.spacing(np.abs(exact[name]).astype(np.float32))
        # (SLEEF's tanh of values near 1e-7 is off by up to 2 ulp, and torch's mish shows it: see test_activation_bits)
        assert np.all(np.abs(ours[name] - exact[name]) <= (2 if name == "tanh" else 1) * ulp), name


def test_double_float_sums_are_exact():
    a, b = np.float32(1.0), np.float32(1e-9)
    hi, lo = _double_float.two_sum(a, b)
    assert hi == a and float(hi) + float(lo) == float(a) + float(b)
    rh, rl = _double_float.reciprocal_p(np.float32(3), np.float32(0))
    assert abs(float(rh) + float(rl) - 1 / 3) < 1e-14


@pytest.mark.parametrize("name", ["gelu", "silu", "sigmoid", "logsigmoid", "elu", "mish", "softplus"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_results_are_laid_out_as_torchs(name, dtype):
    # a transposed input: torch's loop writes the result in the input's memory order (logsigmoid's makes it contiguous)
    x = np.random.default_rng(0).standard_normal((40, 30)).astype(dtype)
    fn = {"sigmoid": lambda F, t: t.sigmoid(), "gelu": lambda F, t: F.gelu(t), "silu": lambda F, t: F.silu(t)}.get(
        name, ACTIVATIONS.get(name))
    strides = [fn(lib.nn.functional, lib.tensor(x).t()).stride() for lib in (mt, torch)]
    assert strides[0] == strides[1]


@pytest.mark.parametrize("name", ["expm1", "log1p"])
@pytest.mark.parametrize("shape", [(), (1,), (7,), (33,), (1000,), (70001,), (30, 41)], ids=str)
def test_expm1_and_log1p_bits(threads, name, shape):
    # torch's float32 expm1 and log1p run its vector math library's loop: SLEEF's function on every element, the
    # last partial vector included
    x = (np.random.default_rng(len(shape)).standard_normal(shape) * 3).astype(np.float32)
    x = np.abs(x) if name == "log1p" else x
    views = [lambda t: t] + ([lambda t: t.t(), lambda t: t[:, ::2]] if len(shape) == 2 else [])
    for view in views:
        outs = []
        for lib in (mt, torch):
            t = lib.tensor(x, requires_grad=True)
            y = getattr(view(t), name)()
            y.backward(lib.ones_like(y))
            outs.append((y.detach().numpy(), t.grad.numpy(), tuple(y.stride())))
        assert outs[0][0].tobytes() == outs[1][0].tobytes() and outs[0][1].tobytes() == outs[1][1].tobytes()
        assert outs[0][2] == outs[1][2]


@pytest.mark.parametrize("shape, dim", [((64, 100), -1), ((64, 100), 0), ((4, 6, 50), 1), ((3, 70000), -1),
                                        ((300, 602), -1), ((2, 40000), 0), ((4, 6), -1)], ids=str)
def test_glu_bits(threads, shape, dim):
    # glu's halves are contiguous only within rows: torch's loop runs its vector lanes row by row (row_lane_mask)
    x = (np.random.default_rng(0).standard_normal(shape) * 3).astype(np.float32)
    outs = []
    for lib in (mt, torch):
        t = lib.tensor(x, requires_grad=True)
        y = lib.nn.functional.glu(t, dim)
        y.backward(lib.ones_like(y) * 0.7)
        outs.append((y.detach().numpy(), t.grad.numpy()))
    assert outs[0][0].tobytes() == outs[1][0].tobytes() and outs[0][1].tobytes() == outs[1][1].tobytes()


def test_logsigmoid_of_large_values_is_plus_zero():
    # torch's min(x, 0) - log1p(e^-|x|) is 0 - 0 = +0 where x is large (fuzz seed 548370)
    for dtype in ("float32", "float64"):
        x = np.array([np.inf, 1e30, 60.0], dtype)
        ours, theirs = (lib.nn.functional.logsigmoid(lib.tensor(x)).numpy() for lib in (mt, torch))
        assert ours.tobytes() == theirs.tobytes()
