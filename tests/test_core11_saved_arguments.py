"""An op given x and x.detach() (one array, two tensors) saves each argument in its own place, as torch: the
detached one carries no history into a double backward (function._find's `place`)."""
import numpy as np
import pytest
import torch

import microtorch as mt

PROGRAMS = {
    "x * x.detach()": lambda lib, x: x * x.detach(), "x.detach() * x": lambda lib, x: x.detach() * x,
    "pow(x, x.detach())": lambda lib, x: lib.pow(x, x.detach()), "pow(x.detach(), x)": lambda lib, x: lib.pow(x.detach(), x),
    "x / x.detach()": lambda lib, x: x / x.detach(), "x.detach() / x": lambda lib, x: x.detach() / x,
    "atan2(x, x.detach())": lambda lib, x: lib.atan2(x, x.detach()), "x * x": lambda lib, x: x * x,
    "hypot(x.detach(), x)": lambda lib, x: lib.hypot(x.detach(), x),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_first_and_second_order_as_torch(name):
    results = []
    for lib in (mt, torch):
        x = lib.tensor([1.5, 0.7, -2.0], dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(PROGRAMS[name](lib, x).sum(), x, create_graph=True)
        second = lib.autograd.grad(g.sum(), x)[0].tolist() if g.requires_grad else None
        results.append((g.detach().tolist(), g.requires_grad, second))
    (ours, our_flag, our_second), (theirs, their_flag, their_second) = results
    assert our_flag == their_flag and (our_second is None) == (their_second is None)
    np.testing.assert_allclose(ours, theirs, rtol=1e-13)
    if our_second is not None:  # (a second order through log: the last bit may differ, as float64's log does)
        np.testing.assert_allclose(our_second, their_second, rtol=1e-13)


def test_complex_abs_is_hypot_of_the_parts():
    # torch's |z| is C's hypot of z's parts; numpy's complex abs rounds otherwise in about a third of values
    rng = np.random.default_rng(0)
    z = ((rng.standard_normal(2000) + 1j * rng.standard_normal(2000)) * 3).astype(np.complex64)
    ours, theirs = (lib.tensor(z).abs().numpy() for lib in (mt, torch))
    assert ours.tobytes() == theirs.tobytes()


@pytest.mark.parametrize("batched", [False, True])
def test_an_unused_input_is_named_by_its_index(batched):
    messages = []
    for lib in (mt, torch):
        x, y = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
        extra = dict(grad_outputs=lib.ones(3), is_grads_batched=True) if batched else {}
        with pytest.raises(RuntimeError) as err:
            lib.autograd.grad((x * 2).sum(), [x, y], **extra)
        messages.append(str(err.value))
    assert messages[0].endswith(messages[1])  # (microtorch's messages start with the function's name)
