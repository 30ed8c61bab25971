"""microtorch.autograd.functional against torch.autograd.functional: jacobian, hessian, vjp, jvp,
hvp, vhp with their options (tuples, create_graph, strict, vectorize, strategy)."""
import numpy as np
import pytest
import torch
import torch.autograd.functional as TF

import microtorch as mt
import microtorch.autograd.functional as MF


def T(a):
    return torch.from_numpy(np.array(a))


def M(a):
    return mt.tensor(np.array(a))


def close(ours, theirs):
    if isinstance(theirs, (tuple, list)):
        assert isinstance(ours, (tuple, list)) and len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            close(o, t)
    else:
        assert tuple(ours.shape) == tuple(theirs.shape)
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-6, atol=1e-9)


rng = np.random.default_rng(0)
X, Y, V, W = (rng.standard_normal(3) for _ in range(4))


def f(a, b):
    return (a.exp() * b).sin(), (a * b).sum()


def g(a):
    return (a.exp() * a).sin()


def s(a, b):
    return (a.exp() * b).sin().sum() + (a * b * b).sum()


def s1(a):
    return (a.exp() * a.sin()).sum()


def both(call):
    return call(MF, M), call(TF, T)


@pytest.mark.parametrize("vectorize", [False, True])
def test_jacobian(vectorize):
    close(*both(lambda F, c: F.jacobian(f, (c(X), c(Y)), vectorize=vectorize)))
    close(*both(lambda F, c: F.jacobian(g, c(X), vectorize=vectorize)))
    close(*both(lambda F, c: F.jacobian(lambda a: (a * 2, a.sum()), c(X), vectorize=vectorize)))


def test_jacobian_forward_mode():
    close(*both(lambda F, c: F.jacobian(f, (c(X), c(Y)), vectorize=True, strategy="forward-mode")))
    with pytest.raises(NotImplementedError, match="only implemented for `vectorize=True`"):
        MF.jacobian(g, M(X), strategy="forward-mode")


@pytest.mark.parametrize("vectorize", [False, True])
def test_hessian(vectorize):
    close(*both(lambda F, c: F.hessian(s, (c(X), c(Y)), vectorize=vectorize)))
    close(*both(lambda F, c: F.hessian(s1, c(X), vectorize=vectorize)))
    close(*both(lambda F, c: F.hessian(s1, c(X), vectorize=True, outer_jacobian_strategy="forward-mode")))


def test_products():
    close(*both(lambda F, c: F.vjp(f, (c(X), c(Y)), (c(V), c(np.float64(2.0))))))
    close(*both(lambda F, c: F.jvp(f, (c(X), c(Y)), (c(V), c(W)))))
    close(*both(lambda F, c: F.hvp(s, (c(X), c(Y)), (c(V), c(W)))))
    close(*both(lambda F, c: F.vhp(s, (c(X), c(Y)), (c(V), c(W)))))
    close(*both(lambda F, c: F.vjp(lambda a: a.sum(), c(X))))                 # v may be None for a scalar
    close(*both(lambda F, c: F.jvp(lambda a: a * 3, c(np.array([2.0])))))


def test_create_graph():
    x = M(X).requires_grad_()
    out, h = MF.hvp(s1, x, M(V), create_graph=True)
    assert h.requires_grad
    (h.sum()).backward()
    xt = T(X).requires_grad_()
    _, ht = TF.hvp(s1, xt, T(V), create_graph=True)
    ht.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-6)
    _, j = MF.vjp(g, M(X), M(V))
    assert not j.requires_grad


def test_errors_as_torch():
    cases = [
        (lambda F, c: F.jacobian(lambda a: c(np.ones(2)), c(X), strict=True),
         "Output 0 of the user-provided function does not require gradients"),
        (lambda F, c: F.jacobian(lambda a, b: a * 2, (c(X), c(Y)), strict=True),
         "Output 0 of the user-provided function is independent of input 1"),
        (lambda F, c: F.vjp(g, c(X)), "The vector v can only be None if the user-provided function returns"),
        (lambda F, c: F.vjp(g, c(X), c(np.ones(2))), "v has invalid size: should be"),
        (lambda F, c: F.hvp(lambda a: (a.sum(), a.sum()), c(X), c(V)), "should return a single Tensor"),
        (lambda F, c: F.hvp(g, c(X), c(V)), "should contain a single element"),
        (lambda F, c: F.hessian(lambda a: a * 2, c(X)), "should contain a single element"),
        (lambda F, c: F.jacobian(g, c(X), strict=True, vectorize=True), "`strict=True` and `vectorized=True`"),
    ]
    for call, message in cases:
        for F, c in ((TF, T), (MF, M)):
            with pytest.raises(RuntimeError, match=message.replace("(", r"\(").replace(")", r"\)")):
                call(F, c)
    with pytest.raises(TypeError, match="must be either a Tensor or a tuple of Tensors"):
        MF.jacobian(g, [M(X)])
