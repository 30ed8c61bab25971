"""cumsum of a 0-d tensor and of small integer dtypes, beside torch 2.13."""
import pytest
import torch

import microtorch as mt


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64", "bool", "float32", "float64"])
def test_cumsum_dtypes_like_torch(dtype):
    seen = []
    for T in (mt, torch):
        values = [True, False, True] if dtype == "bool" else [1, 2, 250] if dtype == "uint8" else [1, -2, 120]
        y = T.tensor(values, dtype=getattr(T, dtype)).cumsum(0)
        seen.append((str(y.dtype).split(".")[1], y.tolist()))
    assert seen[0] == seen[1]


def test_cumsum_of_a_0d_tensor_like_torch():
    seen = []
    for T in (mt, torch):
        x = T.tensor(2.0, dtype=T.float64, requires_grad=True)
        y = x.cumsum(0)
        g, = T.autograd.grad(y * y, x, create_graph=True)
        gg, = T.autograd.grad(g, x)
        seen.append((tuple(y.shape), y.grad_fn.name(), y.item(), g.item(), gg.item(), tuple(x.cumsum(-1).shape)))
    assert seen[0] == seen[1]
