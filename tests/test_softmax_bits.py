"""softmax beside torch 2.13: float32 bit for bit (values and gradients, over the last dim and over others, one and
two threads: microtorch/ops/_softmax_kernels.py follows torch's CPU kernels), float64 to within an ulp or two."""
import numpy as np
import pytest
import torch

import microtorch as mt

CASES = [((5,), 0), ((200, 10), 1), ((200, 10), -1), ((7, 33), 1), ((3, 4, 100), 2), ((64, 1000), 1), ((1, 1), 1),
         ((10, 17), 0), ((4, 5, 33), 1), ((3, 7, 2), 0), ((50, 40, 3), 1), ((300, 301), 0), ((5, 40), 0)]


# torch's own gradient over a long last dim changes with its thread count (a row whose sum cancels: 100 of 64,000
# values of (64, 1000) float32 differ between 1 and 2 threads); microtorch's is torch's with 2 threads.
THREAD_DEPENDENT = {((3, 4, 100), 2, "float32"), ((64, 1000), 1, "float32")}


def _run(lib, x, g, dim, transpose):
    t = lib.tensor(x, requires_grad=True)
    v = t.t() if transpose else t
    y = lib.nn.functional.softmax(v, dim=dim)
    y.backward(lib.tensor(g).t() if transpose else lib.tensor(g))
    return y.detach().numpy(), t.grad.numpy()


@pytest.mark.parametrize("dtype", ["float32"])
@pytest.mark.parametrize("shape, dim", CASES, ids=str)
def test_softmax_values_and_gradients_bits(threads, dtype, shape, dim):
    rng = np.random.default_rng(sum(shape) + dim)
    x, g = (rng.standard_normal(shape) * 3).astype(dtype), rng.standard_normal(shape).astype(dtype)
    for transpose in ([False, True] if len(shape) == 2 else [False]):
        ours, theirs = _run(mt, x, g, dim, transpose), _run(torch, x, g, dim, transpose)
        assert ours[0].tobytes() == theirs[0].tobytes(), "values"
        if threads == 1 and (shape, dim, dtype) in THREAD_DEPENDENT:
            continue
        assert ours[1].tobytes() == theirs[1].tobytes(), "gradients"


def test_a_classifier_step_prints_torchs_probabilities():
    # softmax of a linear layer's output, the way a tutorial prints class probabilities
    x = np.random.default_rng(0).standard_normal((4, 20)).astype(np.float32)
    out = []
    for lib in (torch, mt):
        lib.manual_seed(0)
        layer = lib.nn.Linear(20, 10)
        out.append(lib.nn.Softmax(dim=1)(layer(lib.tensor(x))).detach().numpy())
    np.testing.assert_allclose(out[0], out[1], rtol=2e-6)  # (the matrix product's own last bits: BLAS)


def test_torchs_own_gradient_depends_on_its_threads_here():
    # (why THREAD_DEPENDENT exists: if this starts failing, torch no longer differs and the exemption can go)
    rng = np.random.default_rng(0)
    x, g = (rng.standard_normal((64, 1000)) * 3).astype(np.float32), rng.standard_normal((64, 1000)).astype(np.float32)
    before, grads = torch.get_num_threads(), []
    for n in (1, 2):
        torch.set_num_threads(n)
        grads.append(_run(torch, x, g, 1, False)[1])
    torch.set_num_threads(before)
    assert not np.array_equal(grads[0], grads[1])


def test_float64_is_within_a_few_ulps():
    x = np.random.default_rng(3).standard_normal((64, 10)) * 3
    ours, theirs = mt.softmax(mt.tensor(x), 1).numpy(), torch.softmax(torch.tensor(x), 1).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=3e-15, atol=0)
