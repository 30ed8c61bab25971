"""A 0-d tensor given where torch's parser wants a number (softplus's beta, celu's alpha, hardshrink's lambd,
logit's eps, add's alpha...) is read as its number, as torch does: the op computes as with the number (no
gradient flows into it), beside torch 2.13."""
import numpy as np
import pytest
import torch

import microtorch as mt

CALLS = [
    "F.softplus(x, L.tensor(2.))", "F.softplus(x, beta=L.tensor(2.), threshold=L.tensor(1.))",
    "F.celu(x, L.tensor(2.))", "F.hardshrink(x, L.tensor(0.5))", "F.softshrink(x, L.tensor(0.5))",
    "x.logit(L.tensor(0.2))", "L.logit(x, eps=L.tensor(0.2))", "F.leaky_relu(x, L.tensor(0.3))",
    "F.elu(x, L.tensor(0.7))", "L.add(x, x, alpha=L.tensor(2.))", "x.add(x, alpha=L.tensor(3))",
    "F.hardtanh(x, L.tensor(-0.5), L.tensor(0.5))", "L.full((2,), L.tensor(3.))",
]


@pytest.mark.parametrize("call", CALLS)
def test_a_0d_tensor_for_a_number_as_torch(call):
    def run(L):
        x = L.tensor([[-1., 0.2, 0.6, 3.]], requires_grad=True)
        env = {"L": L, "F": L.nn.functional, "x": x}
        out = eval(call, env)
        grads = L.autograd.grad(out.sum(), x, allow_unused=True)[0] if out.requires_grad else None
        return (str(out.dtype).split(".")[-1], out.grad_fn and out.grad_fn.name(), out.detach().numpy(),
                None if grads is None else grads.numpy())
    t, m = run(torch), run(mt)
    assert m[:2] == t[:2]
    np.testing.assert_allclose(m[2], t[2], rtol=1e-6)
    if t[3] is not None:
        np.testing.assert_allclose(m[3], t[3], rtol=1e-6)


@pytest.mark.parametrize("call", ["F.softplus(x, g)", "L.add(x, x, alpha=g)", "F.leaky_relu(x, g)", "x.logit(g)",
                                  "L.full((2,), g)", "F.hardtanh(x, g)"])
def test_a_0d_tensor_that_requires_grad_is_no_number(call):
    for lib in (torch, mt):
        env = {"L": lib, "F": lib.nn.functional, "x": lib.tensor([0.5, 1.]), "g": lib.tensor(0.2, requires_grad=True)}
        with pytest.raises(TypeError, match="must be (Number|float), not Tensor"):
            eval(call, env)
