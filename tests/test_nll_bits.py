"""nll_loss and cross_entropy's values beside torch 2.13, bit for bit: torch's cascade of partial sums
(microtorch/ops/_nll_cascade.py), with and without class weights, ignore_index, 'mean' and 'sum', float32 and
float64, batches past each level of the cascade; a float32 classifier's loss and gradient."""
import numpy as np
import pytest
import torch

import microtorch as mt

SIZES = [(1, 3), (4, 3), (16, 5), (17, 5), (64, 10), (257, 10), (1000, 5), (5000, 3), (70000, 2)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n, c", SIZES, ids=str)
@pytest.mark.parametrize("weighted", [False, True], ids=["", "weighted"])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_nll_loss_value_bits(dtype, n, c, weighted, reduction):
    rng = np.random.default_rng(n * c)
    logp = np.log(rng.dirichlet(np.ones(c), n)).astype(dtype)
    target = rng.integers(0, c, n)
    target[::7] = -100  # (ignored positions: skipped, with no hand-up at their index)
    w = rng.uniform(0.5, 2, c).astype(dtype)
    values = [lib.nn.functional.nll_loss(lib.tensor(logp), lib.tensor(target), reduction=reduction,
                                         weight=lib.tensor(w) if weighted else None).numpy() for lib in (torch, mt)]
    assert values[0].tobytes() == values[1].tobytes()


def test_nll_loss_over_a_map_bits():
    # nll_loss2d: positions in the target's C order (batch, then the map)
    rng = np.random.default_rng(1)
    logp = np.log(rng.dirichlet(np.ones(4), (3, 20, 30))).transpose(0, 3, 1, 2).astype(np.float32).copy()
    target = rng.integers(0, 4, (3, 20, 30))
    values = [lib.nn.functional.nll_loss(lib.tensor(logp), lib.tensor(target)).numpy() for lib in (torch, mt)]
    assert values[0].tobytes() == values[1].tobytes()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_a_float32_classifiers_loss_and_gradient_bits(reduction):
    rng = np.random.default_rng(2)
    logits, target = (rng.standard_normal((256, 10)) * 2).astype(np.float32), rng.integers(0, 10, 256)
    out = []
    for lib in (torch, mt):
        x = lib.tensor(logits, requires_grad=True)
        loss = lib.nn.functional.cross_entropy(x, lib.tensor(target), reduction=reduction)
        (loss.sum() if reduction == "none" else loss).backward()
        out.append((loss.detach().numpy().tobytes(), x.grad.numpy().tobytes()))
    assert out[0] == out[1]
