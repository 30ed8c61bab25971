"""The graph the gradients of two-input ops record under create_graph=True, beside torch 2.13 (torch's Scalar
overloads: b - 1 in pow is SubBackward1, log(base) * result MulBackward1, 1 + exp(...) AddBackward1, lerp's
number weight mul.Scalar, 1 - weight a constant minus the weight), and angle's gradient of a real input: zeros
that do not depend on the output gradient (no graph, no NaN from it)."""
import numpy as np
import pytest
import torch

import microtorch as mt

CASES = {
    "pow_tensors": lambda L, x, y: x.abs().pow(y), "rpow": lambda L, x, y: 2.5 ** x,
    "rpow_zero": lambda L, x, y: 0.0 ** x,
    "logaddexp": lambda L, x, y: L.logaddexp(x, y), "logaddexp2": lambda L, x, y: L.logaddexp2(x, y),
    "lerp_number": lambda L, x, y: L.lerp(x, y, 0.3), "lerp_tensor": lambda L, x, y: L.lerp(x, y, x),
    "angle": lambda L, x, y: x.angle(),
    "maximum": lambda L, x, y: L.maximum(x, y), "minimum": lambda L, x, y: L.minimum(x, y),
    "fmax": lambda L, x, y: L.fmax(x, y), "fmin": lambda L, x, y: L.fmin(x, y), "atan2": lambda L, x, y: L.atan2(x, y),
}


def _tree(fn):
    return None if fn is None else [fn.name()] + [_tree(f) for f, _ in fn.next_functions]


def _record(lib, name, dtype):
    x = lib.tensor([0.3, -0.2, 0.45, 1.5], dtype=getattr(lib, dtype), requires_grad=True)
    y = lib.tensor([0.5, 0.1, -0.7, 2.0], dtype=getattr(lib, dtype), requires_grad=True)
    out = CASES[name](lib, x, y)
    v = lib.tensor([1.5, -0.5, 0.25, 2.0], dtype=getattr(lib, dtype), requires_grad=True)
    grads = lib.autograd.grad(out, (x, y, v)[:2], v, create_graph=True, allow_unused=True)
    trees = [_tree(g.grad_fn) if g is not None else "unused" for g in grads]
    values = [g.detach().numpy() for g in grads if g is not None]
    first = grads[0]
    if first.grad_fn is not None:
        second = lib.autograd.grad(first.sum(), (x, y, v), allow_unused=True, materialize_grads=True)
        values += [g.detach().numpy() for g in second]
    return trees, values


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", list(CASES))
def test_gradient_graph_and_values_as_torch(name, dtype):
    trees, values = _record(mt, name, dtype)
    trees_t, values_t = _record(torch, name, dtype)
    assert trees == trees_t
    assert len(values) == len(values_t)
    for a, b in zip(values, values_t):  # (float32 exp, log and pow: numpy's kernels round an ulp apart from torch's)
        if dtype == "float64":
            np.testing.assert_array_max_ulp(a, b, maxulp=2)
        else:
            np.testing.assert_allclose(a, b, rtol=1e-6)


@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
def test_angle_of_complex_as_torch(dtype):
    seen = []
    for lib in (torch, mt):
        z = lib.tensor(np.array([0.3 + 0.1j, -0.2 - 2j, 0.0, 1j]), dtype=getattr(lib, dtype), requires_grad=True)
        real = lib.float64 if dtype == "complex128" else lib.float32
        v = lib.tensor([1.5, -2.0, 3.0, 0.5], dtype=real, requires_grad=True)
        g, = lib.autograd.grad(z.angle(), z, v, create_graph=True)
        seen.append((_tree(g.grad_fn), g.detach().numpy().tobytes()))
    assert seen[0] == seen[1]


def test_angle_of_a_real_tensor_has_a_constant_gradient_as_torch():
    seen = []
    for lib in (torch, mt):
        x = lib.tensor([0.3, -0.2, 0.0], dtype=lib.float64, requires_grad=True)
        v = lib.tensor([float("inf"), float("nan"), 1.0], dtype=lib.float64, requires_grad=True)
        g, = lib.autograd.grad(x.angle(), x, v, create_graph=True)
        seen.append((g.grad_fn, g.requires_grad, g.detach().numpy().tobytes()))
    assert seen[0] == seen[1]


@pytest.mark.parametrize("name", ["maximum", "minimum", "fmax", "fmin", "atan2"])
def test_masked_gradients_at_ties_nan_inf_and_zero_as_torch(name):
    """ties share the gradient, an inf or nan gradient stays on its side (masked, not multiplied), atan2's
    gradient at (0, 0) and where a^2 + b^2 underflows is 0"""
    seen = []
    for lib in (torch, mt):
        x = lib.tensor([0.3, 0.2, 0.2, 0.1, 0.0, 1e-200, 0.5], dtype=lib.float64, requires_grad=True)
        y = lib.tensor([0.3, 0.1, float("nan"), 0.5, 0.0, 0.0, float("nan")], dtype=lib.float64, requires_grad=True)
        g = lib.tensor([1.0, float("inf"), 2.0, float("nan"), 3.0, 1.0, float("inf")], dtype=lib.float64)
        grads = lib.autograd.grad(CASES[name](lib, x, y), (x, y), g)
        seen.append([t.numpy().tobytes() for t in grads])
    assert seen[0] == seen[1]


def test_a_complex_base_to_a_tensor_power_second_order_as_torch():
    """log(base) is a complex number times the result (MulBackward1): its backward multiplies by the conjugate"""
    seen = []
    for lib in (torch, mt):
        x = lib.tensor([0.3, 1.2, -0.5], dtype=lib.float64, requires_grad=True)
        g, = lib.autograd.grad((1.5j ** x).real.sum(), x, create_graph=True)
        gg, = lib.autograd.grad(g.sum(), x)
        seen.append((g.detach().numpy(), gg.numpy()))
    for ours, theirs in zip(seen[1], seen[0]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-14)
