"""relu's two ways of computing (np.maximum / a product, and np.where when the input or the
gradient holds a zero, inf or nan) give torch's values bit for bit, signed zeros included."""
import numpy as np
import pytest
import torch

import microtorch as mt

SPECIAL = [-0.0, 0.0, -1.5, 2.0, np.inf, -np.inf, np.nan]


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True) and np.array_equal(np.signbit(a), np.signbit(b))


def relu_and_grad(L, x, g):
    t = L.tensor(x, requires_grad=True)
    y = L.relu(t)
    y.backward(L.tensor(g))
    return y.detach().numpy(), t.grad.numpy()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", ["plain", "special input", "special gradient"])
def test_relu_matches_torch_bit_for_bit(dtype, case):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 7)).astype(dtype)
    g = rng.standard_normal((6, 7)).astype(dtype)
    if case == "special input":
        x.flat[:len(SPECIAL)] = SPECIAL
    if case == "special gradient":  # where x < 0 an inf or nan gradient must become 0, not nan
        x.flat[:len(SPECIAL)] = -1.0
        g.flat[:len(SPECIAL)] = SPECIAL
        g.flat[-len(SPECIAL):] = SPECIAL
    ours, theirs = relu_and_grad(mt, x, g), relu_and_grad(torch, x, g)
    assert same_bits(ours[0], theirs[0]) and same_bits(ours[1], theirs[1])


def _relu_inplace_of_0d_then_view_inplace(L):
    """relu_ of a 0-d result saves that result; an in-place op on a view of it must make backward refuse."""
    a = L.tensor(0.5, dtype=L.float64, requires_grad=True)
    v = (a * 2).relu_()
    v.reshape(1).exp_()
    try:
        v.sum().backward()
    except RuntimeError:
        return "refused"
    return "ran"


def test_relu_of_a_0d_tensor_is_an_array_that_in_place_ops_track():
    assert _relu_inplace_of_0d_then_view_inplace(mt) == _relu_inplace_of_0d_then_view_inplace(torch) == "refused"
