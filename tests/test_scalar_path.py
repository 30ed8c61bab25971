"""0-d tensors compute through numpy's scalar path (ops/_op.py scalar_path). Its results are the bits
the array path gives (the same op on a one-element vector), special values included, for every
floating and complex dtype, forward and backward; and they agree with torch as the array path does."""
import itertools
import math

import numpy as np
import pytest
import torch

import microtorch as mt

SPECIAL = [0.0, -0.0, 1.5, -2.25, 1e-40, -3e38, 7e4, math.inf, -math.inf, math.nan, 1e300, 0.3 + 2j, -1e30 - 0j]
NUMBERS = [2, -3, 0.5, 1.0001, 0.0, -0.0, math.inf, math.nan, 1e-30, 1e-8]
DTYPES = ["float16", "float32", "float64", "complex64", "complex128"]
BINARY = {"mul": lambda x, s: x * s, "add": lambda x, s: x + s, "sub": lambda x, s: x - s,
          "div": lambda x, s: x / s, "rmul": lambda x, s: s * x, "radd": lambda x, s: s + x}
UNARY = ["tanh", "sigmoid", "exp", "log", "sqrt", "sin", "cos", "abs", "reciprocal", "neg", "log1p", "expm1"]
# numpy's complex log1p computes log(1 + z), which loses a tiny z (1e-40 gives 0; torch gives 1e-40)
NUMPY_LOSES = {("log1p", "complex64"), ("log1p", "complex128")}


def bits(a):
    """(real, imag) with NaN payloads erased, as comparable bytes."""
    a = np.asarray(a)
    parts = (np.real(a), np.imag(a)) if a.dtype.kind == "c" else (a,)
    return [(np.isnan(p).tolist(), np.where(np.isnan(p), 0, p).tobytes()) for p in parts]


def values(dtype):
    return [v for v in SPECIAL if dtype.startswith("complex") or not isinstance(v, complex)]


def both_paths(fn, value, dtype, requires_grad=False):
    """fn on a 0-d tensor (the scalar path) and on a one-element vector (numpy's array path)."""
    dt = getattr(mt, dtype)
    x0 = mt.tensor(value, dtype=dt, requires_grad=requires_grad)
    x1 = mt.tensor([value], dtype=dt, requires_grad=requires_grad)
    return x0, fn(x0), x1, fn(x1)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", list(BINARY))
def test_tensor_and_number_same_bits_as_array_path(dtype, op):
    for value, s in itertools.product(values(dtype), NUMBERS):
        _, y0, _, y1 = both_paths(lambda x: BINARY[op](x, s), value, dtype)
        assert y0.dtype == y1.dtype and y0.shape == () and bits(y0.detach().numpy()) == bits(y1.detach().numpy()[0])
        t = BINARY[op](torch.tensor(value, dtype=getattr(torch, dtype)), s)
        assert bits(y0.numpy()) == bits(t.numpy()), (value, s)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["mul", "add"])
def test_two_tensors_same_bits_as_array_path(dtype, op):
    """x * y and x + y of two 0-d tensors (the second also of another dtype, promoted as torch does)."""
    fn = BINARY[op]
    for value, other in itertools.product(values(dtype), NUMBERS):
        for other_dtype in (dtype, "float64", "int64"):
            if other_dtype == "int64" and not math.isfinite(other):
                continue
            x, y = mt.tensor(value, dtype=getattr(mt, dtype)), mt.tensor(other, dtype=getattr(mt, other_dtype))
            z0, z1 = fn(x, y), fn(x.reshape(1), y.reshape(1))
            assert z0.dtype == z1.dtype and z0.shape == () and bits(z0.numpy()) == bits(z1.numpy()[0])
            t = fn(torch.tensor(value, dtype=getattr(torch, dtype)), torch.tensor(other, dtype=getattr(torch, other_dtype)))
            assert str(t.dtype)[6:] == str(z0.dtype)[11:] and bits(z0.numpy()) == bits(t.numpy()), (value, other)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", UNARY)
def test_unary_same_bits_as_array_path(dtype, op):
    for value in values(dtype):
        _, y0, _, y1 = both_paths(lambda x: getattr(x, op)(), value, dtype)
        assert y0.dtype == y1.dtype and bits(y0.numpy()) == bits(y1.numpy()[0]), value
        if (op, dtype) in NUMPY_LOSES:
            continue
        t = getattr(torch.tensor(value, dtype=getattr(torch, dtype)), op)()
        tol = 2e-3 if dtype == "float16" else 1e-5 if dtype in ("float32", "complex64") else 1e-12
        np.testing.assert_allclose(y0.numpy(), t.numpy(), rtol=tol, atol=0, equal_nan=True)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("op", ["tanh", "sigmoid", "exp"])
def test_backward_same_bits_as_array_path(dtype, op):
    """Their backward (tanh's and sigmoid's one fused node) on 0-d gradients, first and second order."""
    for value in values(dtype):
        x0, y0, x1, y1 = both_paths(lambda x: getattr(x, op)() * 3, value, dtype, requires_grad=True)
        g0, = mt.autograd.grad(y0, x0, create_graph=True)
        g1, = mt.autograd.grad(y1.sum(), x1, create_graph=True)
        assert bits(g0.detach().numpy()) == bits(g1.detach().numpy()[0]), value
        gg0, = mt.autograd.grad(g0, x0)
        gg1, = mt.autograd.grad(g1.sum(), x1)
        assert bits(gg0.numpy()) == bits(gg1.numpy()[0]), value
        assert g0.grad_fn.name() == g1.grad_fn.name()


def test_chain_gradient_like_torch():
    """The W1 chain itself: *1.0001, +0.0001, tanh every 10th, on a 0-d float64."""
    def chain(x):
        for i in range(200):
            x = x.tanh() if i % 10 == 9 else x * 1.0001 if i % 2 == 0 else x + 0.0001
        return x
    m = mt.tensor(0.5, dtype=mt.float64, requires_grad=True)
    t = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
    chain(m).backward()
    chain(t).backward()
    assert math.isclose(m.grad.item(), t.grad.item(), rel_tol=1e-13)


def test_results_are_tensors_of_0d_arrays():
    """The scalar path's numpy scalars are wrapped back into 0-d arrays: views and in-place work."""
    x = mt.tensor(2.0)
    for y in (x * 3, x + 1, x - 1, x / 2, x.tanh(), x.exp()):
        assert type(y._data) is np.ndarray and y._data.shape == ()
        y.add_(1)
        assert y.view(1).shape == (1,)


@pytest.mark.parametrize("op", ["mul", "div", "rdiv", "add", "sub", "rsub"])
def test_float16_times_a_number_rounds_once_like_torch(op):
    """torch multiplies (divides) a float16 tensor by a Python number in float32, the number unrounded, and
    rounds the result once; rounding the number to float16 first changes a third of the products."""
    fn = {"mul": lambda x, s: x * s, "div": lambda x, s: x / s, "rdiv": lambda x, s: s / x,
          "add": lambda x, s: x + s, "sub": lambda x, s: x - s, "rsub": lambda x, s: s - x}[op]
    x = (np.random.default_rng(0).standard_normal(4000) * 300).astype(np.float16)
    for s in (0.1, 3.3, 1e-4, 1.0001, 7, 1e5):
        m, t = fn(mt.tensor(x), s), fn(torch.tensor(x), s)
        assert m.dtype == mt.float16
        np.testing.assert_array_equal(m.numpy().view(np.uint16), t.numpy().view(np.uint16))
    upstream = (np.random.default_rng(1).standard_normal(4000) * 3).astype(np.float16)  # (not ones: 1 * s is exact)
    xs = mt.tensor(x, requires_grad=True)
    fn(xs, 0.1).backward(mt.tensor(upstream))
    xt = torch.tensor(x, requires_grad=True)
    fn(xt, 0.1).backward(torch.tensor(upstream))
    np.testing.assert_array_equal(xs.grad.numpy().view(np.uint16), xt.grad.numpy().view(np.uint16))
