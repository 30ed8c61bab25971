"""The torch.func tutorial "Jacobians, Hessians, hvp, vhp, and more" (docs.pytorch.org, intermediate),
shortened, run beside torch 2.13: its asserts hold here too, and its numbers are torch's."""
import re

import numpy as np
import pytest
import torch

import microtorch as mt
import microtorch.nn.functional as F
from microtorch.func import hessian, jacfwd, jacrev, vmap
from _machine import gemm_agrees


def _predict(lib):
    def predict(weight, bias, x):
        return lib.nn.functional.linear(x, weight, bias).tanh()
    return predict


def _data(dout, din, batch=None, seed=0):
    mt.manual_seed(seed)
    w, b = mt.randn(dout, din), mt.randn(dout)
    x = mt.randn(din) if batch is None else mt.randn(batch, din)
    return (w, b, x), tuple(torch.tensor(a.numpy()) for a in (w, b, x))


def test_batch_jacobian_by_vmap_equals_the_summed_trick():
    # the tutorial's `assert torch.allclose(batch_jacobian0, batch_jacobian1)` (it failed here: vmap multiplied
    # each example's row alone, whose bits differ from the batch's product, and tanh's 1 - y^2 magnifies them)
    ours, theirs = _data(33, 31, batch=64)
    p = _predict(mt)
    jac0 = vmap(jacrev(p, argnums=2), in_dims=(None, None, 0))(*ours)
    jac1 = jacrev(lambda w, b, x: p(w, b, x).sum(0), argnums=2)(*ours).movedim(1, 0)
    assert mt.allclose(jac0, jac1)
    assert mt.equal(jac0, jac1)  # (as torch's: the two compute the same products)
    t = torch.func.vmap(torch.func.jacrev(_predict(torch), argnums=2), in_dims=(None, None, 0))(*theirs)
    np.testing.assert_allclose(jac0.numpy(), t.numpy(), rtol=1e-4, atol=1e-6)


def test_vmap_of_linear_gives_the_batched_calls_bits():
    ours, theirs = _data(33, 31, batch=64)
    w, b, x = ours
    per_example = vmap(lambda xi: F.linear(xi, w, b))(x)
    assert np.array_equal(per_example.numpy(), F.linear(x, w, b).numpy())
    assert np.array_equal(vmap(lambda xi: xi @ w.T)(x).numpy(), (x @ w.T).numpy())
    tw, tb, tx = theirs
    batched = torch.func.vmap(lambda xi: torch.nn.functional.linear(xi, tw, tb))(tx).numpy()
    if gemm_agrees():
        assert np.array_equal(per_example.numpy(), batched)
    else:  # (torch's products are not numpy's bits on this machine: see _machine.py)
        np.testing.assert_allclose(per_example.numpy(), batched, rtol=1e-5, atol=1e-5)


def test_jacfwd_and_jacrev_agree_as_in_torch():
    # (jacfwd's primal is one example expanded: it keeps the unbatched one-row product)
    for dout, din in ((2048, 32), (32, 256)):
        ours, theirs = _data(dout, din, seed=1)
        p = _predict(mt)
        fwd, rev = jacfwd(p, argnums=2)(*ours), jacrev(p, argnums=2)(*ours)
        assert mt.equal(fwd, rev)
        tfwd = torch.func.jacfwd(_predict(torch), argnums=2)(*theirs)
        assert torch.equal(tfwd, torch.func.jacrev(_predict(torch), argnums=2)(*theirs))
        np.testing.assert_allclose(fwd.numpy(), tfwd.numpy(), rtol=1e-4, atol=1e-6)


def test_hessians_and_batch_hessians():
    ours, theirs = _data(8, 16, seed=2)
    p = _predict(mt)
    h = hessian(p, argnums=2)(*ours)
    assert mt.allclose(h, jacfwd(jacfwd(p, argnums=2), argnums=2)(*ours))
    th = torch.func.hessian(_predict(torch), argnums=2)(*theirs)
    np.testing.assert_allclose(h.numpy(), th.numpy(), rtol=1e-4, atol=1e-6)
    ours, _ = _data(5, 4, batch=3, seed=3)
    assert vmap(hessian(p, argnums=2), in_dims=(None, None, 0))(*ours).shape == (3, 5, 4, 4)


# ---- torch.utils.benchmark.Timer, which the tutorial times jacrev with ----------------------------------
def _shape_of(text):
    """A printed Measurement with its address and numbers blanked (they differ from run to run)."""
    text = re.sub(r"at 0x[0-9a-f]+", "at 0x", text)
    return re.sub(r"\d+(\.\d+)?( (ns|us|ms|s)\b)?", "N", text.replace("microtorch.", "torch."))


def test_timer_timeit_prints_like_torchs():
    from torch.utils.benchmark import Timer as TorchTimer

    from microtorch.utils.benchmark import Timer
    x = mt.ones(3)
    m = Timer(stmt="x * 2", globals={"x": x}).timeit(50)
    tm = TorchTimer(stmt="x * 2", globals={"x": torch.ones(3)}).timeit(50)
    assert (m.number_per_run, len(m.times), m.title, m.stmt, m.num_threads) == (50, 1, "x * 2", "x * 2", 1)
    assert m.median == m.mean == m.times[0] == m.raw_times[0] / 50 > 0
    assert _shape_of(repr(m)).splitlines()[1:] == _shape_of(repr(tm)).splitlines()[1:]
    labelled = dict(stmt="torch.ones(2) + y", setup="y = 1", label="L", sub_label="S", description="D")
    assert _shape_of(str(Timer(**labelled).timeit(10))).splitlines()[1:] == \
        _shape_of(str(TorchTimer(**labelled).timeit(10))).splitlines()[1:]


def test_timer_autorange_and_torchs_refusals():
    from microtorch.utils.benchmark import Timer
    m = Timer("y = 1 + 1").blocked_autorange(min_run_time=0.01)
    assert len(m.times) >= 1 and m.number_per_run >= 1 and sum(m.raw_times) >= 0.01
    assert "Median: " in repr(m) or len(m.times) == 1
    a = Timer("y = 1 + 1").adaptive_autorange(min_run_time=0.01, max_run_time=0.05)
    assert len(a.times) >= 1
    for call in (lambda: Timer("pass").repeat(), lambda: Timer("pass").autorange()):
        with pytest.raises(NotImplementedError, match="blocked_autorange"):
            call()
    with pytest.raises(ValueError, match="str"):
        Timer(stmt=lambda: None)
