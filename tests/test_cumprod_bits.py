"""cumprod beside torch 2.13, bit for bit: torch's CPU scan multiplies in its accumulate type (double for float16,
float32 and complex64), rounding each running product to the tensor's dtype; values, and real gradients."""
import numpy as np
import pytest
import torch

import microtorch as mt


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex64"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cumprod_bits(dtype, dim):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((20, 60)) * 0.1 + 1
    if dtype == "complex64":
        x = x + 0.05j * rng.standard_normal((20, 60))
    x = x.astype(dtype)
    outs = []
    for lib in (mt, torch):
        t = lib.tensor(x, requires_grad=dtype in ("float32", "float64"))  # (complex64's gradient: a few ulp)
        y = t.cumprod(dim)
        if t.requires_grad:
            y.backward(lib.ones_like(y))
        outs.append((y.detach().numpy(), None if t.grad is None else t.grad.numpy()))
    assert outs[0][0].tobytes() == outs[1][0].tobytes()
    if outs[1][1] is not None:
        assert outs[0][1].tobytes() == outs[1][1].tobytes()
