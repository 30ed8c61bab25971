"""A numpy array where torch's argument parser wants a Tensor or a number, beside torch 2.13.

torch.add(arr, t), t.add(arr) and the other functions and methods refuse an ndarray with TypeError (a numpy
scalar is a number and is taken). The operators answer through numpy: `t + arr` is numpy's result wrapped as a
tensor with no graph (numpy's dtype rules: a 0-d float64 array makes float64), a RuntimeError when t requires
grad, and `arr + t` is refused except `arr / t`; `t += arr` binds a new tensor and leaves t as it was."""
import warnings

import numpy as np
import pytest
import torch

import microtorch as mt

SETUP = ("t = L.tensor([3., 4.]); a = np.array([1., 2.]); z = np.array(2.); i = L.tensor([1, 2]); "
         "ia = np.array([1, 1]); g = L.tensor([3., 4.], requires_grad=True)")
REFUSED = [  # torch raises TypeError
    "L.add(a, t)", "L.add(t, a)", "L.sub(a, t)", "L.mul(t, a)", "L.div(t, a)", "L.pow(t, a)", "L.pow(a, t)",
    "L.true_divide(t, a)", "L.floor_divide(t, a)", "L.remainder(t, a)", "L.remainder(a, t)", "L.fmod(t, a)",
    "L.maximum(t, a)", "L.atan2(t, a)", "L.eq(t, a)", "L.lt(t, a)", "L.where(t > 3, a, t)", "L.where(t > 3, t, a)",
    "L.clamp(t, a)", "L.clamp(t, min=a)", "L.copysign(t, a)", "L.xlogy(t, a)", "L.xlogy(a, t)", "L.lerp(t, t, a)",
    "L.bitwise_and(i, ia)", "t.add(a)", "t.mul(a)", "t.sub(a)", "t.div(a)", "t.pow(a)", "t.eq(a)", "t.add_(a)",
    "t.masked_fill(t > 1, z)", "t.copy_(a)", "L.quantile(t, np.array([0.5]))", "L.isin(i, ia)",
    "a + t", "a - t", "a * t", "a ** t", "a % t", "a // t", "a @ t", "ia & i", "t < a", "t <= a", "t > a", "t >= a",
    "a > t", "L.maximum(t, np.float64(1.))",
]
COMPUTED = [  # torch returns (numpy computes the operators)
    "t + a", "t - a", "t * a", "t / a", "t ** a", "t // a", "t % a", "t @ a", "a / t", "t + z", "t * np.array(2)",
    "t ** z", "i & ia", "i | ia", "i ^ ia", "i << ia", "t == a", "t[None] + a", "t + np.array([[1.], [2.]])",
    "L.tensor([1, 2], dtype=L.int8) * np.array(300)", "L.tensor([True, False]) + np.array([1, 2], dtype=np.int8)",
    "t + np.array([1., 2.], dtype=np.float16)", "t + np.array([1 + 1j, 2])", "L.tensor(3.) + a",
    "L.add(t, np.float64(1.))", "L.add(np.float64(1.), t)", "L.mul(np.float32(2.), t)", "L.add(t, np.int64(2))",
    "L.pow(np.float64(2.), t)", "L.where(t > 3, np.float64(1.), t)", "L.clamp(t, np.float64(1.))",
    "L.remainder(np.float64(7.), t)", "t.masked_fill(t > 1, np.float64(2.))", "t.add(np.float64(1.))",
]
GRAD_REFUSED = ["g + a", "g * z", "g / a", "a / g", "g @ a", "g ** z"]  # torch: RuntimeError (numpy reads g)


def _run(lib, expr):
    env = {"np": np, "L": lib}
    exec(SETUP, env)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch's __array_wrap__ deprecation)
        try:
            return "returns", eval(expr, env), env
        except Exception as e:  # noqa: BLE001 (the type is what is compared)
            return "raises", e, env


@pytest.mark.parametrize("expr", REFUSED)
def test_refused_as_torch(expr):
    kind, t_out, _ = _run(torch, expr)
    assert kind == "raises" and isinstance(t_out, TypeError), t_out
    kind, m_out, _ = _run(mt, expr)
    assert kind == "raises" and isinstance(m_out, TypeError), m_out


@pytest.mark.parametrize("expr", COMPUTED)
def test_computed_as_torch(expr):
    kind, t_out, _ = _run(torch, expr)
    assert kind == "returns", t_out
    kind, m_out, _ = _run(mt, expr)
    assert kind == "returns", m_out
    assert isinstance(m_out, mt.Tensor) and m_out.grad_fn is None and not m_out.requires_grad
    assert str(m_out.dtype).split(".")[-1] == str(t_out.dtype).split(".")[-1]
    assert tuple(m_out.shape) == tuple(t_out.shape)
    np.testing.assert_array_equal(m_out.numpy(), t_out.numpy())


@pytest.mark.parametrize("expr", GRAD_REFUSED)
def test_operator_with_an_array_refuses_a_tensor_that_requires_grad(expr):
    kind, t_out, _ = _run(torch, expr)
    assert kind == "raises" and isinstance(t_out, RuntimeError), t_out
    kind, m_out, _ = _run(mt, expr)
    assert kind == "raises" and isinstance(m_out, RuntimeError), m_out
    assert "numpy" in str(m_out) and "detach" in str(m_out)


@pytest.mark.parametrize("op", ["+=", "-=", "*=", "/=", "**=", "%=", "//="])
def test_in_place_operator_with_an_array_binds_a_new_tensor(op):
    def run(lib):
        t = lib.tensor([3., 4.])
        env = {"t": t, "a": np.array([1., 2.])}
        exec(f"t {op} a", env)
        return t, env["t"]
    (t_before, t_after), (m_before, m_after) = run(torch), run(mt)
    assert m_after is not m_before and t_after is not t_before
    assert m_before.tolist() == t_before.tolist() == [3., 4.]
    assert str(m_after.dtype).split(".")[-1] == str(t_after.dtype).split(".")[-1] == "float64"
    np.testing.assert_array_equal(m_after.numpy(), t_after.numpy())


def test_messages_name_the_operator_and_the_fix():
    t = mt.tensor([1., 2.])
    with pytest.raises(TypeError, match=r"add\(\): argument 'other' \(position 2\) must be Tensor, not ndarray"):
        mt.add(t, np.array([1., 2.]))
    with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for -: 'numpy.ndarray' and 'Tensor'"):
        np.array([1., 2.]) - t
    with pytest.raises(TypeError, match=r"'<' not supported between instances of 'Tensor' and 'numpy.ndarray'"):
        t < np.array([1., 2.])  # noqa: B015
    with pytest.raises(ValueError, match=r"'\+' of a tensor \[2\].*numpy array \[3\]"):  # (numpy's ValueError)
        t + np.array([1., 2., 3.])
