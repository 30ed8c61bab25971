"""threshold at NaN beside torch 2.13: torch's kernel writes `value` where x <= threshold, so a NaN passes through,
and so does its gradient (microtorch wrote `value` over it, hiding the NaN of a diverging run)."""
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
