"""Activations at NaN beside torch 2.13. threshold: torch's kernel writes `value` where x <= threshold, so a NaN
passes through, and so does its gradient (microtorch wrote `value` over it, hiding the NaN of a diverging run). The
backward of hardtanh, relu6, the shrinks, hardswish and the elu family: torch's loop computes most elements with its
vector formula and each row's tail with its scalar one, which treat a NaN x differently (ops/_loop_lanes.py and
_kernel_exp.lane_mask model which is which)."""
import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfw

import microtorch as mt
import microtorch.autograd.forward_ad as mfw

X = np.array([np.nan, 1.0, -2.0, 0.5, 0.3, np.inf, -np.inf, 0.0] * 5)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("inplace", [False, True])
def test_threshold_passes_nan_on_as_torch(dtype, inplace):
    def run(lib):
        x = lib.tensor(X, dtype=getattr(lib, dtype), requires_grad=True)
        y = lib.nn.functional.threshold(x * 1 if inplace else x, 0.5, -1.0, inplace=inplace)
        g, = lib.autograd.grad(y, x, lib.linspace(1, 2, len(X), dtype=getattr(lib, dtype)))
        return y.detach().numpy(), g.numpy(), y.grad_fn.name()
    (ty, tg, tn), (my, mg, mn) = run(torch), run(mt)
    np.testing.assert_array_equal(my, ty)
    np.testing.assert_array_equal(mg, tg)
    assert mn == tn and np.isnan(my[::8]).all()


def test_threshold_tangent_at_nan_as_torch():
    def run(lib, fw):
        with fw.dual_level():
            x = fw.make_dual(lib.tensor(X), lib.ones(len(X), dtype=lib.float64))
            return fw.unpack_dual(lib.nn.functional.threshold(x, 0.5, -1.0)).tangent.numpy()
    np.testing.assert_array_equal(run(mt, mfw), run(torch, tfw))


ACTIVATIONS = {
    "hardtanh": lambda F, x: F.hardtanh(x), "relu6": lambda F, x: F.relu6(x),
    "softshrink": lambda F, x: F.softshrink(x), "hardshrink": lambda F, x: F.hardshrink(x),
    "hardswish": lambda F, x: F.hardswish(x), "elu": lambda F, x: F.elu(x), "selu": lambda F, x: F.selu(x),
    "celu": lambda F, x: F.celu(x, 0.7),
}


def _values(n, layout):
    x = np.resize(np.array([np.nan, 1.0, -2.0, 0.5, -0.3, 4.0, -np.inf, 0.0, -np.nan, 2.5, -5.0]), n)
    return x.reshape(-1, 5).T if layout == "transposed" else x


@pytest.mark.parametrize("name", ACTIVATIONS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n, layout", [(7, "contiguous"), (40, "contiguous"), (75, "contiguous"), (128, "contiguous"),
                                       (70000, "contiguous"), (75, "transposed")])
def test_gradient_at_nan_as_torch(name, dtype, n, layout):
    """the gradient and the tangent at every element, NaN where torch has NaN"""
    def run(lib, fw):
        F = lib.nn.functional
        x = lib.tensor(_values(n, layout), dtype=getattr(lib, dtype), requires_grad=True)
        g, = lib.autograd.grad(ACTIVATIONS[name](F, x).sum(), x)
        with fw.dual_level():
            dual = fw.make_dual(x.detach(), lib.ones(x.shape, dtype=x.dtype))
            tangent = fw.unpack_dual(ACTIVATIONS[name](F, dual)).tangent
        return g.numpy(), tangent.numpy()
    (tg, tt), (mg, mt_) = run(torch, tfw), run(mt, mfw)
    np.testing.assert_array_equal(mg, tg)
    np.testing.assert_array_equal(mt_, tt)
