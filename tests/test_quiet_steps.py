"""Optimizer steps and the in-place kernels keep numpy quiet, as every op does: an inf or nan in a weight or
its gradient gives torch's values and no RuntimeWarning from numpy."""
import math
import warnings

import numpy as np
import pytest
import torch

import microtorch as mt

OPTIMIZERS = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adamax", "NAdam", "RAdam", "Adadelta", "ASGD", "Rprop"]
WEIGHT = [1.0, math.inf, 0.0, -1e308, 2.0]
GRADS = ([math.inf, 1.0, math.nan, 1e308, 0.5], [0.0, -math.inf, 1.0, 1e308, -0.25])


@pytest.mark.parametrize("name", OPTIMIZERS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_steps_with_inf_and_nan_are_quiet_and_like_torch(name, dtype):
    results = []
    for T in (mt, torch):
        p = T.nn.Parameter(T.tensor(WEIGHT, dtype=getattr(T, dtype)))
        opt = getattr(T.optim, name)([p], lr=0.1)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            for g in GRADS:
                p.grad = T.tensor(g, dtype=getattr(T, dtype))
                opt.step()
        results.append(p.detach().numpy().copy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-6, equal_nan=True)


def test_in_place_kernels_are_quiet_and_like_torch():
    results = []
    for T in (mt, torch):
        x = T.tensor([1.0, math.inf, 0.0])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            x.add_(T.tensor([-math.inf, -math.inf, 1.0]))
            x.sub_(T.tensor([math.inf, 1.0, 1.0]), alpha=0.5)
            results.append(x.numpy().copy())
            x.mul_(0.0)
            x *= 1e308
            x += T.tensor([1e308, 1e308, 1e308])
        results.append(x.numpy().copy())
    np.testing.assert_array_equal(results[0], results[2])
    np.testing.assert_array_equal(results[1], results[3])
