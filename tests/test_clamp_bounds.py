"""clamp/clip with number bounds convert them as torch does (a bound the dtype cannot hold is a
RuntimeError, never numpy's OverflowError), and a NaN bound makes every element NaN; beside torch."""
import numpy as np
import pytest
import torch

import microtorch as mt

CASES = [
    lambda L: L.clamp(L.tensor([1.0, 2.0], dtype=L.float16), 0, 1e5),
    lambda L: L.clamp(L.tensor([1.0, 2.0], dtype=L.float16), -1e6),
    lambda L: L.clamp(L.tensor([1.0, 2.0], dtype=L.float16), 0, 6e4),
    lambda L: L.clamp(L.tensor([1.0, -2.0]), 0, float("nan")),
    lambda L: L.clamp(L.tensor([1.0, -2.0]), float("nan")),
    lambda L: L.clamp(L.tensor([1, 2]), 0, 1e20),
    lambda L: L.clamp(L.tensor([1, 2], dtype=L.int8), 0, 300),
    lambda L: L.clamp(L.tensor([1, 2], dtype=L.int8), -128, 127),
    lambda L: L.clamp(L.tensor([1, 2], dtype=L.uint8), -1),
    lambda L: L.tensor([1.0, 2.0], dtype=L.float16).clamp_(0, 1e5),
    lambda L: L.clip(L.tensor([1.0, 2.0], dtype=L.float16), max=7e4),
    lambda L: L.clamp(L.tensor([1.0, 2.0]), 0, 1e39),
    lambda L: L.clamp(L.tensor([-0.0, 3.0]), 0.0, 2.0),
]


def outcome(L, case):
    try:
        r = case(L)
    except Exception as e:  # noqa: BLE001  (the exception's type is what is compared)
        return type(e).__name__
    return np.asarray(r.tolist(), dtype=float).tobytes(), str(r.dtype).split(".")[-1]


@pytest.mark.parametrize("i", range(len(CASES)))
def test_clamp_number_bounds_as_torch(i):
    assert outcome(mt, CASES[i]) == outcome(torch, CASES[i])


@pytest.mark.parametrize("bounds", [(float("nan"), None), (None, float("nan")), (-0.5, 0.5), (0.0, float("inf"))])
def test_clamp_gradient_as_torch(bounds):
    grads = []
    for L in (torch, mt):
        x = L.tensor([-1.0, -0.25, 0.0, 0.25, 1.0], dtype=L.float64, requires_grad=True)
        y = L.clamp(x, *bounds)
        (y * L.arange(1.0, 6.0, dtype=L.float64)).sum().backward()
        grads.append((np.asarray(y.tolist()).tobytes(), x.grad.tolist(), y.grad_fn.name()))
    assert grads[0] == grads[1]
