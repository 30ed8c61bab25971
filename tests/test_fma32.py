"""The float32 fused multiply-add (microtorch/_fma.py) rounds once: checked against round-to-odd in double, which
rounds to float32 exactly as the exact sum would, on random operands and on sums built to land near float32 ties."""
import numpy as np

from microtorch._fma import _odd_sum, fma, fma32


def _reference(a, b, c):
    p, c = a.astype(np.float64) * b, np.broadcast_to(c, a.shape).astype(np.float64)
    return np.where(p == -c, p + c, _odd_sum(p, c)).astype(np.float32)


def test_random_operands():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(200_000).astype(np.float32), rng.standard_normal(200_000).astype(np.float32)
    c = (rng.standard_normal(200_000) * rng.choice([1e-8, 1, 1e8], 200_000)).astype(np.float32)
    assert fma(a, b, c).tobytes() == _reference(a, b, c).tobytes()


def test_sums_near_a_tie():
    # a product with bits far below c's last place: the double sum is inexact and can sit on a float32 midpoint
    rng = np.random.default_rng(1)
    c = rng.uniform(1, 2, 50_000).astype(np.float32)
    half_ulp = np.spacing(c).astype(np.float64) / 2
    a = (half_ulp * (1 + rng.choice([-1, 1], 50_000) * 2.0 ** -rng.integers(20, 40, 50_000))).astype(np.float32)
    b = np.float32(1 + 2 ** -23)
    ours, ref = fma32(a, b, c), _reference(a, np.full_like(a, b), c)
    assert ours.tobytes() == ref.tobytes()
    assert np.any(ours != (a * b + c))  # the fused and the twice-rounded results differ on these inputs
