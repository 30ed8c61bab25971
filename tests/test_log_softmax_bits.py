"""log_softmax beside torch 2.13, float32 bit for bit: values and gradients over every dim, one and two threads
(torch's kernels with SLEEF's exp and log: microtorch/ops/_softmax_kernels.py, microtorch/_kernel_log.py);
cross_entropy's gradient, which goes through them."""
import numpy as np
import pytest
import torch

import microtorch as mt
from microtorch import _kernel_log

CASES = [((5,), 0), ((200, 10), 1), ((64, 1000), -1), ((10, 17), 0), ((4, 5, 33), 1), ((3, 7, 2), 0),
         ((50, 40, 3), 1), ((300, 301), 0), ((2, 3000, 40), 1), ((5, 4, 5000), 1), ((7, 1), 1)]


def _run(lib, x, g, dim):
    t = lib.tensor(x, requires_grad=True)
    y = lib.log_softmax(t, dim)
    y.backward(lib.tensor(g))
    return y.detach().numpy(), t.grad.numpy()


@pytest.mark.parametrize("dtype", ["float32"])
@pytest.mark.parametrize("shape, dim", CASES, ids=str)
def test_log_softmax_values_and_gradients_bits(threads, dtype, shape, dim):
    rng = np.random.default_rng(sum(shape) + dim)
    x, g = (rng.standard_normal(shape) * 3).astype(dtype), rng.standard_normal(shape).astype(dtype)
    ours, theirs = _run(mt, x, g, dim), _run(torch, x, g, dim)
    assert ours[0].tobytes() == theirs[0].tobytes(), "values"
    assert ours[1].tobytes() == theirs[1].tobytes(), "gradients"


@pytest.mark.parametrize("dtype", ["float32"])
def test_cross_entropys_gradient_bits(dtype):
    rng = np.random.default_rng(1)
    x, target = (rng.standard_normal((64, 10)) * 2).astype(dtype), rng.integers(0, 10, 64)
    grads = []
    for lib in (torch, mt):
        t = lib.tensor(x, requires_grad=True)
        lib.nn.functional.cross_entropy(t, lib.tensor(target)).backward()
        grads.append(t.grad.numpy())
    assert grads[0].tobytes() == grads[1].tobytes()


@pytest.mark.parametrize("dtype", [np.float32])
def test_the_vector_log_is_accurate_and_handles_the_edges(dtype):
    x = np.abs(np.random.default_rng(2).standard_normal(100_000) * 10).astype(dtype) + dtype(1e-3)
    x = np.concatenate([x, np.array([1, 0.75, 1.5, np.finfo(dtype).tiny, np.finfo(dtype).max], dtype)])
    ref = np.log(x.astype(np.float64))
    ulps = np.abs(_kernel_log.log(x).astype(np.float64) - ref) / np.spacing(np.abs(ref).astype(dtype))
    assert np.nanmax(ulps[ref != 0]) <= 1.0
    edges = _kernel_log.log(np.array([0, -1, np.inf, np.nan], dtype))
    assert edges[0] == -np.inf and np.isnan(edges[1]) and edges[2] == np.inf and np.isnan(edges[3])
