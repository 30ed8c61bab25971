"""xlogy and float_power with a Python number on either side, beside torch 2.13: values, dtypes, the node
(XlogyBackward0/1/2, PowBackward2 over ToCopyBackward0), its edges, and gradients of first and second order
at the edges of xlogy's domain (x = 0, y <= 0, NaN, inf), where torch's formulas decide the value."""
import warnings

import numpy as np
import pytest
import torch

import microtorch as mt

XS = [0., 0., 0., 0., 1., 2., -1., 0., 3.]
YS = [2., 0., -1., float("nan"), 0., float("inf"), 3., float("inf"), -2.]
WEIGHTS = [1., 1., 1., 1., 1., 1., 1., 0., 0.]  # (a zero incoming gradient stays zero in torch's formula)
FORMS = {
    "tensor, tensor": lambda L, x, y: (L.xlogy(x, y), (x, y)),
    "number, tensor": lambda L, x, y: (L.xlogy(2., y), (y,)),
    "zero, tensor": lambda L, x, y: (L.xlogy(0, y), (y,)),
    "tensor, number": lambda L, x, y: (L.xlogy(x, 2.), (x,)),
    "tensor, zero": lambda L, x, y: (L.xlogy(x, 0.), (x,)),
    "tensor, negative": lambda L, x, y: (L.xlogy(x, -1), (x,)),
    "method": lambda L, x, y: (x.xlogy(3), (x,)),
    "special.xlogy": lambda L, x, y: (_special(L).xlogy(x, y), (x, y)),
}


def _special(lib):
    import importlib
    return importlib.import_module(lib.__name__ + ".special")


def _graph(lib, form):
    x = lib.tensor(XS, dtype=lib.float64, requires_grad=True)
    y = lib.tensor(YS, dtype=lib.float64, requires_grad=True)
    out, inputs = FORMS[form](lib, x, y)
    w = lib.tensor(WEIGHTS, dtype=lib.float64)
    grads = lib.autograd.grad(out, inputs, w, create_graph=True)
    result = {"name": out.grad_fn.name(), "out": out.detach().numpy(),
              "edges": [type(n).__name__ for n, _ in out.grad_fn.next_functions]}
    for k, g in enumerate(grads):
        result[f"grad{k}"] = g.detach().numpy()
        result[f"grad{k} node"] = g.grad_fn and g.grad_fn.name()
        if g.requires_grad:
            second = lib.autograd.grad(g.sum(), inputs, allow_unused=True)
            result[f"grad{k} second"] = [s if s is None else s.numpy() for s in second]
    return result


@pytest.mark.parametrize("form", FORMS)
def test_xlogy_graph_values_and_gradients_as_torch(form):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t, m = _graph(torch, form), _graph(mt, form)
    assert m.keys() == t.keys()
    for key in t:
        if isinstance(t[key], list) and key.endswith("second"):
            assert [s is None for s in m[key]] == [s is None for s in t[key]], key
            for ms, ts in zip(m[key], t[key]):
                if ts is not None:
                    np.testing.assert_allclose(ms, ts, rtol=1e-12, err_msg=key)
        elif isinstance(t[key], np.ndarray):
            np.testing.assert_allclose(m[key], t[key], rtol=1e-12, err_msg=key)
            signed = ~np.isnan(t[key])  # (the sign of a zero; NaN's sign bit is numpy's or the CPU's)
            np.testing.assert_array_equal(np.signbit(m[key][signed]), np.signbit(t[key][signed]), err_msg=key)
        else:
            assert m[key] == t[key], key


CALLS = ["L.xlogy(2, f)", "L.xlogy(2, i)", "L.xlogy(True, i)", "L.xlogy(2, d)", "L.xlogy(2., d)", "L.xlogy(f, 2)",
         "L.xlogy(i, 2.5)", "L.xlogy(h, 2.5)", "L.xlogy(i, 2)", "L.float_power(2, f)", "L.float_power(2, i)",
         "L.float_power(2., d)", "L.float_power(f, 2)", "L.float_power(2j, f)", "f.float_power(2)",
         "L.xlogy(2, 3)", "L.float_power(2, 3.)", "L.xlogy(2j, f)", "L.xlogy(f, 2j)", "L.xlogy(None, f)",
         "L.xlogy('a', f)", "L.float_power(None, f)", "L.float_power(2, None)", "i.clone().xlogy_(2)"]


@pytest.mark.parametrize("call", CALLS)
def test_number_first_as_torch(call):
    def run(L):
        env = {"L": L, "f": L.tensor([3., 0.5], requires_grad=True), "i": L.tensor([1, 2]),
               "d": L.tensor([3., 4.], dtype=L.float64, requires_grad=True), "h": L.tensor([1., 2.], dtype=L.float16)}
        try:
            out = eval(call, env)
        except Exception as e:  # noqa: BLE001 (the type is what is compared)
            return type(e)
        edges = [type(n).__name__ for n, _ in out.grad_fn.next_functions] if out.grad_fn else None
        return (str(out.dtype).split(".")[-1], out.grad_fn and out.grad_fn.name(), edges,
                np.round(out.detach().double().numpy(), 5).tolist())
    t, m = run(torch), run(mt)
    if isinstance(t, type):
        assert isinstance(m, type) and issubclass(m, t), (t, m)
    else:
        assert m == t


MIXED = ["atan2", "hypot", "logaddexp", "logaddexp2", "fmax", "fmin", "xlogy"]


@pytest.mark.parametrize("op", MIXED)
@pytest.mark.parametrize("dtypes", [("float32", "float64"), ("float64", "float16"), ("int64", "float16")])
def test_mixed_dtypes_keep_their_edges_as_torch(op, dtypes):
    """a tensor that requires grad is cast inside the op, as torch's kernel does (no ToCopyBackward0 before it),
    and its gradient comes back in its own dtype"""
    def run(L):
        a = L.tensor([0.5, 2., 3.], dtype=getattr(L, dtypes[0]))
        b = L.tensor([1.5, 0.25, 3.], dtype=getattr(L, dtypes[1]), requires_grad=True)
        if a.dtype.is_floating_point:
            a.requires_grad_()
        out = getattr(L, op)(a, b)
        inputs = [v for v in (a, b) if v.requires_grad]
        grads = L.autograd.grad(out.sum(), inputs)
        return (str(out.dtype).split(".")[-1], [type(n).__name__ for n, _ in out.grad_fn.next_functions],
                out.detach().double().numpy(), [(str(g.dtype).split(".")[-1], g.double().numpy()) for g in grads])
    t, m = run(torch), run(mt)
    assert m[:2] == t[:2]
    np.testing.assert_allclose(m[2], t[2], rtol=2e-3 if "float16" in dtypes else 1e-6)
    assert [g[0] for g in m[3]] == [g[0] for g in t[3]]
    for (_, mg), (_, tg) in zip(m[3], t[3]):
        np.testing.assert_allclose(mg, tg, rtol=2e-3 if "float16" in dtypes else 1e-6)


def test_complex_logaddexp_as_torch():
    """numpy has no complex logaddexp; torch computes it from the operand of larger real part"""
    def run(L):
        a = L.tensor([1 + 1j, -2 + 0.5j, float("inf") + 0j, complex(float("-inf"), 0), complex(float("nan"), 0),
                      700 + 1j, -3j], dtype=L.complex128, requires_grad=True)
        b = L.tensor([0.5 - 1j, 3 + 2j, 1 + 0j, complex(float("-inf"), 0), 1 + 0j, 1 + 0j, 2j], dtype=L.complex128,
                     requires_grad=True)
        y = L.logaddexp(a, b)
        grads = L.autograd.grad(y.real.sum() + y.imag.sum() * 0.5, (a, b))
        mixed = L.logaddexp(L.tensor([1., 2.]), L.tensor([1j, 2]))
        return [y.grad_fn.name(), str(mixed.dtype).split(".")[-1]], [y.detach().numpy(), mixed.numpy()] + [
            g.numpy() for g in grads]
    (t_names, t_values), (m_names, m_values) = run(torch), run(mt)
    assert m_names == t_names
    for m, t in zip(m_values, t_values):
        np.testing.assert_allclose(m, t, rtol=1e-6)
