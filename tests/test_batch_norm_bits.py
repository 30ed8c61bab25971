"""float32 batch norm's forward beside torch 2.13, bit for bit (ops/_batch_norm_kernels.py): the output, the saved
mean and invstd and the running statistics, in training and in eval, with and without the affine parameters, for
BatchNorm1d's (N, C) and BatchNorm2d's (N, C, H, W) inputs."""
import numpy as np
import pytest
import torch

import microtorch as mt


def _data(shape, seed):
    rng = np.random.default_rng(seed)
    c = shape[1]
    return ((rng.standard_normal(shape) * 2 + 0.3).astype(np.float32), rng.standard_normal(c).astype(np.float32),
            rng.standard_normal(c).astype(np.float32), rng.standard_normal(c).astype(np.float32),
            np.abs(rng.standard_normal(c)).astype(np.float32) + 0.1)


@pytest.mark.parametrize("shape", [(64, 10), (37, 5), (8, 3, 16, 16), (5, 7, 3, 11), (2, 4, 5)], ids=str)
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("momentum", [0.1, 0.01])
def test_batch_norm_forward_bits(threads, shape, training, affine, momentum):
    x, w, b, rm, rv = _data(shape, sum(shape))
    outs = []
    for lib in (mt, torch):
        running_mean, running_var = lib.tensor(rm), lib.tensor(rv)
        y = lib.nn.functional.batch_norm(lib.tensor(x), running_mean, running_var, lib.tensor(w) if affine else None,
                                         lib.tensor(b) if affine else None, training=training, momentum=momentum)
        outs.append([y.numpy(), running_mean.numpy(), running_var.numpy()])
    for ours, theirs in zip(*outs):
        assert ours.tobytes() == theirs.tobytes()


def test_saved_statistics_and_a_module_over_steps(same_threads):
    x, *_ = _data((16, 4, 6, 6), 1)
    results = []
    for lib in (mt, torch):
        lib.manual_seed(0)
        bn = lib.nn.BatchNorm2d(4)
        t = lib.tensor(x, requires_grad=True)
        y = bn(t)
        saved = (y.grad_fn._saved_result1.numpy().copy(), y.grad_fn._saved_result2.numpy().copy())
        for _ in range(3):
            y = bn(lib.tensor(x * 1.5))
        results.append([y.detach().numpy(), *saved, bn.running_mean.numpy(), bn.running_var.numpy()])
    for ours, theirs in zip(*results):
        assert ours.tobytes() == theirs.tobytes()
