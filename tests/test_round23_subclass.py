"""Tensor subclasses written by users, beside torch 2.13 (__torch_function__): fastbook's own Parameter made with
Tensor._make_subclass, ops that hand back the subclass (through AliasBackward0), its repr, nn.Parameter whose ops
give plain tensors, a subclass that overrides __torch_function__ to log the ops it sees, and the engine, which never
dispatches. (The classes are made inside the tests' functions, one set per library.)"""
import numpy as np
import pytest
import torch as real_torch

import microtorch

LIBS = (real_torch, microtorch)


def _classes(lib):
    class Parameter(lib.Tensor):  # fastbook chapter 19's
        def __new__(cls, x):
            return lib.Tensor._make_subclass(Parameter, x, True)

        def __init__(self, *args, **kwargs):
            self.requires_grad_()

    class MyT(lib.Tensor):
        pass

    class Logged(lib.Tensor):
        seen = []

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            cls.seen.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs or {})
    return Parameter, MyT, Logged


def _names(value):
    return type(value).__name__ if not isinstance(value, (tuple, list)) else [_names(v) for v in value]


def _fastbook(lib):
    Parameter, MyT, _ = _classes(lib)
    p = Parameter(lib.ones(3))
    q = p * 2
    s = p.sum()
    s.backward()
    return (repr(p), repr(q), _names(q), q.grad_fn.name(), q.grad_fn.next_functions[0][0].name(), _names(s),
            _names(p.grad), p.grad.tolist(), p.is_leaf, p.requires_grad, _names(lib.relu(p)), _names(p[0]),
            _names(p.detach()), _names(p.max(0)), _names(lib.cat([p, p])), _names(p + lib.ones(3)),
            _names(lib.ones(3) + p), type(p.tolist()).__name__, _names(lib.nn.functional.linear(p, lib.ones(2, 3))))


def test_fastbooks_parameter_made_with_make_subclass():
    want, got = (_fastbook(lib) for lib in LIBS)
    assert want == got


def _plain(lib):
    _, MyT, _ = _classes(lib)
    m = lib.ones(2, 2).as_subclass(MyT)
    x = lib.Tensor._make_subclass(MyT, lib.zeros(2), False)
    base = lib.arange(3.0)
    y = lib.Tensor._make_subclass(MyT, base)
    y.add_(1)
    conv = lib.nn.Conv2d(1, 1, 2)
    out = conv(lib.ones(1, 1, 3, 3).as_subclass(MyT))
    loss = lib.nn.functional.cross_entropy(lib.ones(2, 3).as_subclass(MyT), lib.tensor([0, 2]))
    return (repr(m), _names(m @ m), repr(x), x.requires_grad, base.tolist(), _names(out), _names(loss),
            _names(lib.nn.Parameter(lib.ones(2)) * 2), _names(m.split(1)), _names(lib.unbind(m)))


def test_ops_hand_back_the_subclass():
    want, got = (_plain(lib) for lib in LIBS)
    assert want == got


def _logged(lib):
    _, _, Logged = _classes(lib)
    Logged.seen.clear()
    t = lib.arange(4.0).as_subclass(Logged)
    u = (t * 2 + 1).sum()
    lib.nn.functional.relu(t)
    t.exp().mean()
    return list(Logged.seen), _names(u)


def test_an_overridden_torch_function_sees_torchs_functions():
    want, got = (_logged(lib) for lib in LIBS)
    assert want == got


def test_gradients_are_torchs_and_the_engine_does_not_dispatch():
    def run(lib):
        _, MyT, _ = _classes(lib)
        w = lib.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
        x = lib.tensor([1.0, 3.0]).as_subclass(MyT)
        y = (w @ x).tanh().sum()
        g, = lib.autograd.grad(y, w, create_graph=True)
        return _names(y), _names(g), g.detach().numpy(), _names(w.grad)
    want, got = (run(lib) for lib in LIBS)
    assert want[:2] == got[:2] and want[3] == got[3]
    np.testing.assert_allclose(want[2], got[2], rtol=1e-6)


def test_make_subclass_refuses_what_is_not_a_tensor():
    with pytest.raises(TypeError):
        microtorch.Tensor._make_subclass(microtorch.Tensor, [1.0, 2.0])
