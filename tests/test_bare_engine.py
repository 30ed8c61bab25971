"""benchmarks/bare_engine.py, the floor W6 is measured against, computes W6's gradients as torch does (a
floor that skipped work would flatter nobody but itself), and its step runs in overhead_bench."""
import os

import numpy as np
import torch

from benchmarks import bare_engine


def w6_gradients(T):
    r = np.random.default_rng(3)
    x = r.standard_normal((100, 2))
    ps = [r.uniform(-1, 1, (2, 16)), r.uniform(-1, 1, 16), r.uniform(-1, 1, (16, 16)), r.uniform(-1, 1, 16),
          r.uniform(-1, 1, (16, 1)), r.uniform(-1, 1, 1)]
    X = T.tensor(x, dtype=T.float64)
    Y = T.tensor(np.where(x[:, 0] * x[:, 1] > 0, 1.0, -1.0)[:, None], dtype=T.float64)
    P = [T.tensor(p, dtype=T.float64, requires_grad=True) for p in ps]
    h = X
    for i in (0, 2, 4):
        h = h @ P[i] + P[i + 1]
        h = h.relu() if i < 4 else h
    loss = (1 - Y * h).relu().mean() + 1e-4 * sum((p * p).sum() for p in P)
    loss.backward()
    return float(np.asarray(loss.data if T is bare_engine else loss.detach())), [np.asarray(p.grad) for p in P]


def test_bare_engine_gives_torchs_w6_gradients():
    loss, grads = w6_gradients(bare_engine)
    want_loss, want = w6_gradients(torch)
    np.testing.assert_allclose(loss, want_loss, rtol=1e-12)
    for g, w in zip(grads, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-15)
        assert np.abs(w).max() > 0  # (every parameter gets a gradient: the check compares something)


def test_overhead_bench_runs_the_step_on_it():
    before = dict(os.environ)
    try:
        from benchmarks import overhead_bench  # (it limits BLAS threads in the environment as it is imported)
    finally:
        os.environ.clear()
        os.environ.update(before)
    step = overhead_bench.mlp_step(bare_engine)
    step()
    assert overhead_bench.best_step(step, 2)[0] > 0
