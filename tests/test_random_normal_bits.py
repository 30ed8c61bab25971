"""float32 normals beside torch 2.13, bit for bit: `randn`, `normal_`, `normal` and the initialisers that draw them
(16 or more values go through torch's vector Box-Muller, whose log, sine and cosine are microtorch/_cephes_f32.py)."""
import numpy as np
import pytest
import torch

import microtorch as mt
from microtorch import _cephes_f32


def _both(seed, draw):
    torch.manual_seed(seed)
    mt.manual_seed(seed)
    t, m = draw(torch), draw(mt)
    return t.detach().numpy(), m.detach().numpy()


@pytest.mark.parametrize("n", [16, 17, 31, 32, 33, 100, 784, 1000, 4099, 100_000])
@pytest.mark.parametrize("seed", [0, 1, 42, 2 ** 31 + 7])
def test_randn_float32_bits(n, seed):
    t, m = _both(seed, lambda L: L.randn(n))
    assert t.tobytes() == m.tobytes()


@pytest.mark.parametrize("mean, std", [(0.0, 1.0), (2.5, 0.1), (-1.0, 3.0), (0.0, 1e-3)])
def test_normal_with_mean_and_std_bits(mean, std):
    t, m = _both(3, lambda L: L.empty(5, 40).normal_(mean, std))
    assert t.tobytes() == m.tobytes()
    t, m = _both(4, lambda L: L.normal(mean, std, size=(7, 9)))
    assert t.tobytes() == m.tobytes()


@pytest.mark.parametrize("draw", [
    lambda L: L.randn(64, 784), lambda L: L.randn_like(L.zeros(3, 50)),
    lambda L: L.nn.init.xavier_normal_(L.empty(20, 30)), lambda L: L.nn.init.kaiming_normal_(L.empty(64, 32)),
    lambda L: L.nn.init.normal_(L.empty(128), 0.0, 0.02), lambda L: L.nn.init.trunc_normal_(L.empty(40), std=0.02),
    lambda L: (L.randn(2, 8), L.randn(5, 7))[1],  # (and the generator's state after the first)
], ids=["randn 64x784", "randn_like", "xavier_normal_", "kaiming_normal_", "init.normal_", "trunc_normal_", "twice"])
def test_what_draws_float32_normals_bits(draw):
    t, m = _both(0, draw)
    assert t.tobytes() == m.tobytes()


def test_the_polynomials_are_close_to_the_true_functions():
    # a wrong coefficient or a lost step would show here before any bit comparison
    x = np.linspace(1e-7, 1.0, 200_001, dtype=np.float32)
    assert np.max(np.abs(_cephes_f32.log(x) - np.log(x.astype(np.float64)))) < 3e-7 * 16
    theta = np.linspace(0, 2 * np.pi, 200_001, dtype=np.float32)
    sin, cos = _cephes_f32.sincos(theta)
    assert np.max(np.abs(sin - np.sin(theta.astype(np.float64)))) < 3e-7
    assert np.max(np.abs(cos - np.cos(theta.astype(np.float64)))) < 3e-7
