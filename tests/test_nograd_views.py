"""A view of a tensor that requires grad, made under no_grad (or before its base required grad), beside torch
2.13: it requires grad through its base, is a leaf, and no gradient reaches it or its base (its edge is
(None, 0)); its own requires_grad_(True) makes it a leaf whose .grad fills, its base's flag moves it. And what
numpy and Python make of a tensor that requires grad: numpy() and np.asarray() refused in grad mode only, float()
warning once."""
import numpy as np
import pytest
import torch

import microtorch as mt

X = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.5]])


def outcome(fn):
    try:
        return fn()
    except Exception as e:  # the type and the start of torch's message (microtorch names the op first)
        return type(e).__name__, str(e).split("(): ", 1)[-1][:60]


def both(fn):
    return [outcome(lambda: fn(T)) for T in (torch, mt)]


def grad(t):
    return None if t is None else t.detach().numpy().tolist()


def edges(t):
    return [None if n is None else n.name().rsplit("::", 1)[-1] for n, _ in t.grad_fn.next_functions]


VIEWS = {
    "slice": lambda x: x[0:1],
    "select": lambda x: x[1],
    "view": lambda x: x.view(6),
    "t": lambda x: x.t(),
    "expand": lambda x: x.expand(2, 2, 3),
    "unsqueeze": lambda x: x.unsqueeze(0),
    "narrow": lambda x: x.narrow(1, 0, 2),
    "diagonal": lambda x: x.diagonal(),
    "split": lambda x: x.split(1)[0],
    "reshape": lambda x: x.reshape(3, 2),
}


@pytest.mark.parametrize("how", VIEWS)
def test_no_grad_view_requires_grad_through_its_base(how):
    def run(T):
        x = T.tensor(X, requires_grad=True)
        with T.no_grad():
            v = VIEWS[how](x)
        inner = v.requires_grad, v.is_leaf, v.grad_fn is None, v._is_view()
        y = (v * 2).sum()
        y.backward()
        return inner, y.requires_grad, edges(v * 2), grad(v.grad), grad(x.grad)
    a, b = both(run)
    assert a == b
    assert a[0] == (True, True, True, True) and a[2] == [None, None] and a[3] is None and a[4] is None


def test_a_view_of_a_non_leaf_and_a_view_of_such_a_view():
    def run(T):
        x = T.tensor(X, requires_grad=True)
        y = x * 3
        with T.no_grad():
            v = y[0]
            w = v[1:]
        u = v[0]  # recorded: SelectBackward0, whose edge leads nowhere
        u.backward()
        return (v.requires_grad, w.requires_grad, w.is_leaf, u.grad_fn.name(), edges(u), grad(x.grad),
                outcome(lambda: w.mul_(2)))
    a, b = both(run)
    assert a == b
    assert a[:5] == (True, True, True, "SelectBackward0", [None]) and a[6][0] == "RuntimeError"


def test_own_flag_and_the_base_flag():
    def run(T):
        x = T.tensor(X, requires_grad=True)
        with T.no_grad():
            v = x[0]
            w = x[1]
        v.requires_grad_(False)  # no change: it requires grad through its base
        kept = v.requires_grad
        v.requires_grad_(True)   # its own flag: now a leaf whose .grad fills
        (v * 2).sum().backward()
        x.requires_grad_(False)
        off = w.requires_grad
        x.requires_grad_(True)
        return kept, grad(v.grad), grad(x.grad), off, w.requires_grad
    a, b = both(run)
    assert a == b
    assert a == (True, [2.0, 2.0, 2.0], None, False, True)


def test_a_view_made_before_its_base_required_grad():
    def run(T):
        a = T.tensor(X)
        v = a[0]
        a.requires_grad_()
        (v * 2).sum().backward()
        return v.requires_grad, v.is_leaf, edges(v + 1), grad(a.grad), grad(v.grad), outcome(lambda: v.add_(1))
    a, b = both(run)
    assert a == b
    assert a[:5] == (True, True, [None, None], None, None) and a[5][0] == "RuntimeError"


def test_a_view_that_gets_its_own_flag_keeps_its_accumulator():
    def run(T):
        v = T.tensor(X).reshape(3, 2).requires_grad_()  # the common way to make a leaf of a reshaped tensor
        (v ** 2).sum().backward()
        return v.requires_grad, grad(v.grad)
    a, b = both(run)
    assert a == b and a[1] == (2 * X.reshape(3, 2)).tolist()


def test_autograd_grad_of_such_a_view_is_unused():
    def run(T):
        x = T.tensor(X, requires_grad=True)
        with T.no_grad():
            v = x[0]
        unused = outcome(lambda: T.autograd.grad((v * 2).sum(), v))
        allowed = T.autograd.grad((v * 2).sum(), v, allow_unused=True)
        return unused[0], allowed
    a, b = both(run)
    assert a == b == ("RuntimeError", (None,))


def test_numpy_is_refused_only_in_grad_mode():
    def run(T):
        x = T.tensor(X, requires_grad=True)
        with T.no_grad():
            inside = x.numpy().tolist()
            v = x[0]
        return inside, outcome(lambda: v.numpy())[0], outcome(lambda: x.numpy())[0]
    a, b = both(run)
    assert a == b == (X.tolist(), "RuntimeError", "RuntimeError")


def test_detach_and_data_are_not_such_views():
    def run(T):
        x = T.tensor(X, requires_grad=True)
        with T.no_grad():
            d, e = x.detach(), x.data
        return d.requires_grad, e.requires_grad, d._is_view()
    a, b = both(run)
    assert a == b == (False, False, False)


def test_numpys_protocol_is_refused_as_torchs():
    """np.asarray(y) and plt.plot(y) of a tensor that requires grad fail in torch (detach() it first); under
    no_grad they work, and a detached tensor's array is the tensor's own memory."""
    def run(T):
        y = T.tensor(X, requires_grad=True) * 2
        refused = outcome(lambda: np.asarray(y))[0], outcome(lambda: np.exp(y))[0]
        with T.no_grad():
            inside = np.asarray(y).tolist()
        return refused, inside, np.asarray(y.detach()).tolist(), np.asarray(T.tensor(X)).tolist()
    a, b = both(run)
    assert a == b
    assert a[0] == ("RuntimeError", "RuntimeError") and a[1] == a[2] == (2 * X).tolist() and a[3] == X.tolist()


_SCALAR_SCRIPT = """
import sys, warnings
T = __import__(sys.argv[1])
x = T.ones(1, requires_grad=True)
y = x.sum() * 1.5
seen = []
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    with T.no_grad():
        float(y)
    seen.append(len(w))
    f"{y:.2f}", y.item(), int(y)
    seen.append(len(w))
    float(y), complex(x.sum()), float(x)
    seen.append(len(w))
print(seen, str(w[0].message).splitlines()[0] if w else None)
"""


def test_float_of_a_tensor_that_requires_grad_warns_once_as_torchs():
    """float(loss) in grad mode: torch's UserWarning, once per process (not under no_grad, not for item())"""
    import subprocess
    import sys
    out = [subprocess.run([sys.executable, "-c", _SCALAR_SCRIPT, lib], capture_output=True, text=True, check=True,
                          env={**__import__("os").environ, "PYTHONWARNINGS": "default"}).stdout
           for lib in ("torch", "microtorch")]
    assert out[0] == out[1]
    assert out[0].startswith("[0, 0, 1] Converting a tensor with requires_grad=True to a scalar")
