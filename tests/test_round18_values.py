"""Values beside torch 2.13 found by the fuzzer this round: gelu in double (torch's kernel multiplies by M_SQRT1_2,
one bit above 1 / sqrt(2), and fuses its derivative's last sum on the vector lanes)."""
import numpy as np
import pytest
import torch

import microtorch as mt

LIBS = (torch, mt)


def _gelu_and_grad(L, x, g):
    X = L.tensor(x, requires_grad=True)
    y = L.nn.functional.gelu(X)
    y.backward(L.tensor(g))
    return y.detach().numpy(), X.grad.numpy()


@pytest.mark.parametrize("n", [1, 3, 8, 12])
def test_gelu_in_double_to_the_bit_where_torch_runs_its_scalar_loop(n):
    """fewer than 16 doubles: torch's scalar loop, with the C library's erf and exp, as microtorch"""
    r = np.random.default_rng(n)
    x, g = np.concatenate([[1.0, -1.0, 0.5], r.standard_normal(n) * 3]), r.standard_normal(n + 3)
    (ty, tg), (my, mg) = (_gelu_and_grad(L, x, g) for L in LIBS)
    assert np.array_equal(ty, my) and np.array_equal(tg, mg)


def test_gelu_in_double_nearly_to_the_bit_on_the_vector_lanes():
    """SLEEF's erf and exp on torch's vector lanes differ from the C library's in a few last bits (the old code:
    83% and 73% of the values were torch's)"""
    r = np.random.default_rng(0)
    x, g = r.standard_normal(1000) * 3, r.standard_normal(1000)
    (ty, tg), (my, mg) = (_gelu_and_grad(L, x, g) for L in LIBS)
    assert (ty == my).mean() > 0.95 and (tg == mg).mean() > 0.92
    np.testing.assert_allclose(mg, tg, rtol=1e-14, atol=1e-300)


def test_std_of_equal_gelus_as_torch():
    """the fuzzer's program (seed 3,990,154): gelu(1) three times, whose mean is not exactly gelu(1), so std is
    1.9e-16 and its gradient finite (microtorch's gelu(1) was one bit lower: std 0 and a zero gradient)"""
    seen = []
    for L in LIBS:
        x = L.ones(1, 3, 1, dtype=L.float64, requires_grad=True)
        s = L.std(L.nn.functional.gelu(x), dim=(0, 1, 2), correction=2)
        s.backward()
        seen.append((s.item(), x.grad.flatten().tolist()))
    assert seen[0][0] > 0
    assert seen[1] == seen[0]
