"""float32 GELU (the erf form) beside torch 2.13, bit for bit: torch hands a contiguous float32 gelu of more than one
element to oneDNN, whose kernel microtorch/_kernel_gelu.py follows; values and gradients, special values, shapes,
nn.GELU in a small model, and one and two threads."""
import numpy as np
import pytest
import torch

import microtorch as mt
from microtorch import _kernel_gelu
from _machine import gemm_agrees

SPECIAL = np.array([0.0, -0.0, 1e-45, -1e-45, 1e-38, -1e-38, 1e-20, 1e-7, -1e-7, 0.5, -0.5, 1, -1, 3, -3, 5.5, -5.5,
                    5.54, -5.54, 5.6, -5.6, 9, -9, 10, -10, 87, -87, 89, -89, 1e30, -1e30, 3.4e38, -3.4e38,
                    np.inf, -np.inf, np.nan], np.float32)


def _values(shape, seed, scale):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def _both(x, grad=None):
    """gelu's value and x's gradient (of the sum, or against `grad`) in microtorch and in torch."""
    out = []
    for lib in (mt, torch):
        t = lib.tensor(x, requires_grad=True)
        y = lib.nn.functional.gelu(t)
        y.backward(lib.tensor(grad) if grad is not None else lib.ones_like(y))
        out.append((y.detach().numpy(), t.grad.numpy()))
    return out


@pytest.mark.parametrize("shape", [(2,), (3,), (17,), (32,), (1000,), (64, 128), (8, 3, 5), (40000,)], ids=str)
@pytest.mark.parametrize("scale", [0.01, 1, 4, 30])
def test_gelu_value_and_gradient_bits(threads, shape, scale):
    x = _values(shape, sum(shape), scale)
    g = _values(shape, 7, 1)
    (ours, our_grad), (theirs, their_grad) = _both(x, g)
    assert ours.tobytes() == theirs.tobytes()
    assert our_grad.tobytes() == their_grad.tobytes()


def test_special_values():
    (ours, our_grad), (theirs, their_grad) = _both(SPECIAL)
    np.testing.assert_array_equal(ours.view(np.uint32), theirs.view(np.uint32))
    np.testing.assert_array_equal(our_grad.view(np.uint32), their_grad.view(np.uint32))


def test_every_interval_of_the_polynomials():
    # |x| from 2^-20 to 8 in small steps crosses every interval boundary of the 25 polynomials
    x = np.geomspace(2.0 ** -20, 8, 20000).astype(np.float32)
    x = np.concatenate([x, -x])
    (ours, our_grad), (theirs, their_grad) = _both(x)
    assert ours.tobytes() == theirs.tobytes() and our_grad.tobytes() == their_grad.tobytes()


def test_a_gelu_model_trains_as_torchs(same_threads):
    # two Adam steps of Linear-GELU-Linear: the loss and every gradient are torch's, to the bit (four outputs: a
    # product with one output column is a matrix-vector product in MKL, which adds in an order of its own)
    x, y = _values((32, 10), 1, 1), _values((32, 4), 2, 1)
    w1, w2 = _values((20, 10), 3, 0.3), _values((4, 20), 4, 0.3)
    results = []
    for lib in (mt, torch):
        model = lib.nn.Sequential(lib.nn.Linear(10, 20), lib.nn.GELU(), lib.nn.Linear(20, 4))
        with lib.no_grad():
            model[0].weight.copy_(lib.tensor(w1)), model[2].weight.copy_(lib.tensor(w2))
            model[0].bias.zero_(), model[2].bias.zero_()
        opt = lib.optim.Adam(model.parameters(), lr=0.01)
        losses = []
        for _ in range(2):
            opt.zero_grad()
            loss = ((model(lib.tensor(x)) - lib.tensor(y)) ** 2).mean()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        results.append((losses, [p.grad.numpy().copy() for p in model.parameters()]))
    (our_losses, our_grads), (their_losses, their_grads) = results
    if not gemm_agrees():  # (torch's products are not numpy's bits on this machine, see _machine.py; the gelu's
        # own bits are compared by the other tests of this file)
        assert our_losses == pytest.approx(their_losses, rel=1e-6)
        for a, b in zip(our_grads, their_grads):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
        return
    assert our_losses == their_losses
    for a, b in zip(our_grads, their_grads):
        assert a.tobytes() == b.tobytes()


def test_a_strided_grad_and_torchs_other_kernel(threads):
    x = _values((40, 30), 5, 3)
    g = np.ascontiguousarray(_values((30, 40), 6, 1).T)[:, :]  # (a transposed layout, as a grad may come)
    (ours, our_grad), (theirs, their_grad) = _both(x, g)
    assert ours.tobytes() == theirs.tobytes() and our_grad.tobytes() == their_grad.tobytes()
    # a transposed input, a strided one and a single element go through torch's own kernel (Abramowitz and
    # Stegun's erf on the vector lanes, the C library's erff on the tails): to the bit too
    for view in (lambda t: t.t(), lambda t: t[:, ::2], lambda t: t[:, 1:], lambda t: t[:1, :1], lambda t: t[3, 4]):
        outs = []
        for lib in (mt, torch):
            t = lib.tensor(x, requires_grad=True)
            y = lib.nn.functional.gelu(view(t))
            y.backward(lib.ones_like(y))
            outs.append((y.detach().numpy(), t.grad.numpy()))
        assert outs[0][0].tobytes() == outs[1][0].tobytes() and outs[0][1].tobytes() == outs[1][1].tobytes()


def test_the_kernel_is_only_taken_where_torch_takes_onednn():
    assert _kernel_gelu.applies(np.zeros((3, 4), np.float32))
    assert not _kernel_gelu.applies(np.zeros((4, 3), np.float32).T)
    assert not _kernel_gelu.applies(np.zeros(1, np.float32))
    assert not _kernel_gelu.applies(np.zeros(5, np.float64))


def test_onednn_exp_is_close_to_e_to_the_x():
    # (below about -87 its 2^(n-1) has no normal float and it gives 0, as oneDNN's does)
    x = np.linspace(-80, 88, 10001).astype(np.float32)
    np.testing.assert_allclose(_kernel_gelu.exp(x), np.exp(x.astype(np.float64)), rtol=1e-6)
    assert _kernel_gelu.exp(np.array([-88, -100, -np.inf], np.float32)).tolist() == [0, 0, 0]
