"""saved_tensors_hooks see an op's saved tensors in torch's order (the saved-tensor-hooks tutorial prints it):
inputs by torch's names (other before self), then results."""
import numpy as np
import pytest
import torch

import microtorch as mt

OPS = {
    "mul": (lambda T, a, b: a * b, (3,), (3,)), "div": (lambda T, a, b: a / b, (3,), (3,)),
    "pow": (lambda T, a, b: a.abs() ** b, (3,), (3,)), "outer": (lambda T, a, b: T.outer(a, b), (3,), (4,)),
    "mm": (lambda T, a, b: a @ b, (2, 3), (3, 4)), "bmm": (lambda T, a, b: T.bmm(a, b), (2, 2, 3), (2, 3, 2)),
    "fmod": (lambda T, a, b: T.fmod(a, b), (3,), (3,)), "remainder": (lambda T, a, b: T.remainder(a, b), (3,), (3,)),
    "addcmul": (lambda T, a, b, c: T.addcmul(a, b, c), (3,), (3,), (3,)), "exp": (lambda T, a: a.exp(), (3,)),
    "linear": (lambda T, a, w, b: T.nn.functional.linear(a, w, b), (2, 3), (4, 3), (4,)),
    "sigmoid then mul": (lambda T, a, b: a.sigmoid() * b, (3,), (3,)),
    "atan2": (lambda T, a, b: T.atan2(a, b), (3,), (3,)), "maximum": (lambda T, a, b: T.maximum(a, b), (3,), (3,)),
    "minimum": (lambda T, a, b: T.minimum(a, b), (3,), (3,)), "fmax": (lambda T, a, b: T.fmax(a, b), (3,), (3,)),
    "xlogy": (lambda T, a, b: T.xlogy(a, b.abs()), (3,), (3,)),
    "logaddexp": (lambda T, a, b: T.logaddexp(a, b), (3,), (3,)),
    "lerp": (lambda T, a, b, c: T.lerp(a, b, c), (3,), (3,), (3,)),
    "clamp with tensors": (lambda T, a, b, c: T.clamp(a, b, c), (3,), (3,), (3,)),
}


def packed(T, name):
    f, *shapes = OPS[name]
    T.manual_seed(0)
    xs = [T.randn(*s).requires_grad_() for s in shapes]
    seen = []

    def pack(t):
        seen.append(next((f"input {i}" for i, x in enumerate(xs) if t.shape == x.shape and T.equal(t, x)), "other"))
        return t
    with T.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = f(T, *xs)
    out.sum().backward()  # (the unpacked tensors still give the gradients)
    return seen, [x.grad.numpy() for x in xs]


@pytest.mark.parametrize("name", OPS)
def test_pack_hooks_see_torchs_order(name):
    (order, grads), (want_order, want_grads) = packed(mt, name), packed(torch, name)
    assert order == want_order
    for g, w in zip(grads, want_grads):  # (float32: a transcendental's or a product's last bits may differ)
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_without_hooks_the_saved_tensors_keep_their_places():
    a, b = mt.randn(3, requires_grad=True), mt.randn(3, requires_grad=True)
    node = (a * b).grad_fn
    assert node._saved_self is a and node._saved_other is b
