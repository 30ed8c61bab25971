"""silu and hardswish beside torch 2.13, bit for bit: values and first-order gradients (float32: torch's kernels with
SLEEF's exp and the fused step of silu's backward; hardswish's product before its division, in every dtype); a
double backward still records torch's nodes."""
import numpy as np
import pytest
import torch

import microtorch as mt


@pytest.mark.parametrize("name, dtype", [("silu", "float32"), ("hardswish", "float32"), ("hardswish", "float64")])
@pytest.mark.parametrize("n", [5, 100, 10007, 70001])
def test_values_and_gradients_bits(same_threads, name, dtype, n):
    rng = np.random.default_rng(n)
    x, g = (rng.standard_normal(n) * 4).astype(dtype), rng.standard_normal(n).astype(dtype)
    out = []
    for lib in (torch, mt):
        t = lib.tensor(x, requires_grad=True)
        y = getattr(lib.nn.functional, name)(t)
        y.backward(lib.tensor(g))
        out.append((y.detach().numpy().tobytes(), t.grad.numpy().tobytes()))
    assert out[0] == out[1]


def test_silus_double_backward_keeps_torchs_graph():
    names = []
    for lib in (torch, mt):
        x = lib.tensor([0.5, -1.5, 2.0], requires_grad=True)
        (g,) = lib.autograd.grad(lib.nn.functional.silu(x).sum(), x, create_graph=True)
        names.append([g.grad_fn.name()] + [f.name() for f, _ in g.grad_fn.next_functions if f is not None])
    assert names[0] == names[1]
