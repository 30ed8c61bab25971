"""microtorch.special beside torch.special 2.13: xlog1py and the Hurwitz zeta (values, dtypes, the three nodes of
each, edges, gradients of first and second order, zeta's missing derivative in x), and the functions that are
microtorch's ops under torch.special's names (the node is the op's, as in torch)."""
import warnings

import numpy as np
import pytest
import torch
import torch.special

import microtorch as mt
import microtorch.special as mts

XS = [0., 0., 0., 0., 1., 2., -1., 0., 3.]
YS = [2., -1., -2., float("nan"), 0., float("inf"), 3., float("inf"), -3.]
WEIGHTS = [1., 1., 1., 1., 1., 1., 1., 0., 0.]


def _special(lib):
    return torch.special if lib is torch else mts


FORMS = {
    "tensor, tensor": lambda S, x, y: (S.xlog1py(x, y), (x, y)),
    "number, tensor": lambda S, x, y: (S.xlog1py(2., y), (y,)),
    "tensor, number": lambda S, x, y: (S.xlog1py(x, 2.), (x,)),
    "tensor, -1": lambda S, x, y: (S.xlog1py(x, -1), (x,)),
    "tensor, -3": lambda S, x, y: (S.xlog1py(x, -3.), (x,)),
}


def _graph(lib, form):
    x = lib.tensor(XS, dtype=lib.float64, requires_grad=True)
    y = lib.tensor(YS, dtype=lib.float64, requires_grad=True)
    out, inputs = FORMS[form](_special(lib), x, y)
    grads = lib.autograd.grad(out, inputs, lib.tensor(WEIGHTS, dtype=lib.float64), create_graph=True)
    result = {"name": out.grad_fn.name(), "out": out.detach().numpy(),
              "edges": [type(n).__name__ for n, _ in out.grad_fn.next_functions]}
    for k, g in enumerate(grads):
        result[f"grad{k}"] = g.detach().numpy()
        if g.requires_grad:
            second = lib.autograd.grad(g.sum(), inputs, allow_unused=True)
            result[f"grad{k} second"] = [np.zeros(0) if s is None else s.numpy() for s in second]
    return result


@pytest.mark.parametrize("form", FORMS)
def test_xlog1py_as_torch(form):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t, m = _graph(torch, form), _graph(mt, form)
    assert m.keys() == t.keys()
    for key in t:
        if key.endswith("second"):
            for ms, ts in zip(m[key], t[key]):
                np.testing.assert_allclose(ms, ts, rtol=1e-12, err_msg=key)
        elif isinstance(t[key], np.ndarray):
            np.testing.assert_allclose(m[key], t[key], rtol=1e-12, err_msg=key)
        else:
            assert m[key] == t[key], key


def test_zeta_values_as_torch():
    rng = np.random.default_rng(5)
    x = np.concatenate([[1.5, 2., 3., 4.5, 1., 0.5, 2., 2., -1., 3., 20., 2.5, 4.], rng.uniform(1, 30, 400)])
    q = np.concatenate([[1., 0.5, 2., 1e-3, 1., 1., -1., -1.5, 1., 100., 0.1, -2.5, -2.5], rng.uniform(-5, 50, 400)])
    for dtype, rtol, atol in ((np.float64, 4e-15, 0), (np.float32, 1e-6, 1e-37)):  # (float32: denormals)
        t = torch.special.zeta(torch.tensor(x.astype(dtype)), torch.tensor(q.astype(dtype))).numpy()
        m = mts.zeta(mt.tensor(x.astype(dtype)), mt.tensor(q.astype(dtype))).numpy()
        assert m.dtype == t.dtype
        np.testing.assert_allclose(m, t, rtol=rtol, atol=atol)  # (inf and NaN where torch has them)


def test_zeta_gradients_as_torch():
    def run(lib):
        S = _special(lib)
        q = lib.tensor([0.5, 2., 7.], dtype=lib.float64, requires_grad=True)
        x = lib.tensor([2., 3., 4.5], dtype=lib.float64)
        out = S.zeta(3., q)
        g, = lib.autograd.grad(out.sum(), q, create_graph=True)
        g2, = lib.autograd.grad(g.sum(), q)
        g_t, = lib.autograd.grad(S.zeta(x, q).sum(), q)
        return out.grad_fn.name(), S.zeta(x, q).grad_fn.name(), S.zeta(q, 2).grad_fn.name(), g.detach().numpy(), \
            g2.numpy(), g_t.numpy()
    t, m = run(torch), run(mt)
    assert m[:3] == t[:3] == ("SpecialZetaBackward1", "SpecialZetaBackward0", "SpecialZetaBackward2")
    for a, b in zip(m[3:], t[3:]):
        np.testing.assert_allclose(a, b, rtol=1e-13)


@pytest.mark.parametrize("call", ["S.zeta(q, q)", "S.zeta(q, 2.)"])
def test_zeta_has_no_derivative_in_x(call):
    for lib in (torch, mt):
        q = lib.tensor([2., 3.], requires_grad=True)
        out = eval(call, {"S": _special(lib), "q": q})
        with pytest.raises(NotImplementedError, match="derivative for 'zeta' is not implemented"):
            lib.autograd.grad(out.sum(), q)


CALLS = ["S.xlog1py(2, 3)", "S.xlog1py(L.tensor([1j]), 2)", "S.xlog1py(None, f)", "S.xlog1py(i, i)",
         "S.xlog1py(f, d)", "S.xlog1py(h, 2)", "S.zeta(2, 3)", "S.zeta(L.tensor([1j]), 2)", "S.zeta(i, i)",
         "S.zeta(L.tensor([True]), L.tensor([True]))", "S.zeta(h, 2)", "S.zeta(2, h)", "S.zeta(f, L.ones(2, 2))",
         "S.zeta(f, L.ones(3))", "S.zeta(f, None)", "S.expit(f)", "S.gammaln(f)", "S.psi(f)", "S.digamma(f)",
         "S.multigammaln(f + 2, 2)", "S.gammainc(f, f)", "S.gammaincc(f, f)", "S.expit(None)", "S.softmax(f, 0)",
         "S.log_softmax(f, 0)", "S.logit(f / 4)", "S.exp2(f)", "S.expm1(f)", "S.log1p(f)", "S.erf(f)", "S.erfc(f)",
         "S.erfinv(f / 4)", "S.erfc(L.tensor([3., 10., 27., -2., 0.], dtype=L.float64))", "S.i0(f)", "S.sinc(f)",
         "S.logsumexp(f, 0)", "S.polygamma(1, f)", "S.xlogy(2, f)"]


@pytest.mark.parametrize("call", CALLS)
def test_special_calls_as_torch(call):
    def run(L):
        env = {"L": L, "S": _special(L), "f": L.tensor([3., 0.5], requires_grad=True), "i": L.tensor([1, 2]),
               "d": L.tensor([2., 3.], dtype=L.float64), "h": L.tensor([1.5, 2.], dtype=L.float16)}
        try:
            out = eval(call, env)
        except Exception as e:  # noqa: BLE001 (the type is what is compared)
            return type(e)
        return (str(out.dtype).split(".")[-1], out.grad_fn and out.grad_fn.name(), tuple(out.shape),
                out.detach().double().numpy())
    t, m = run(torch), run(mt)
    if isinstance(t, type):
        assert isinstance(m, type) and issubclass(m, t), (t, m)
        return
    assert not isinstance(m, type), m
    assert m[:3] == t[:3]
    np.testing.assert_allclose(m[3], t[3], rtol=2e-3 if m[0] == "float16" else 1e-6)


FORWARD = {
    "xlogy": lambda L, S, x, y: L.xlogy(x, y), "xlog1py": lambda L, S, x, y: S.xlog1py(x, y),
    "xlogy(2, y)": lambda L, S, x, y: L.xlogy(2., y), "xlog1py(x, 3)": lambda L, S, x, y: S.xlog1py(x, 3.),
    "xlogy(x, -1)": lambda L, S, x, y: L.xlogy(x, -1.),
    "xlog1py(x, float32 y)": lambda L, S, x, y: S.xlog1py(x, y.float()),
}


@pytest.mark.parametrize("form", FORWARD)
def test_forward_mode_as_torch(form):
    def run(lib):
        import importlib
        fw = importlib.import_module(lib.__name__ + ".autograd.forward_ad")
        x = lib.tensor([0., 2., 3., 0., 0.], dtype=lib.float64)
        y = lib.tensor([2., 0.5, -0.5, -1., 0.], dtype=lib.float64)
        with fw.dual_level():
            out = FORWARD[form](lib, _special(lib), fw.make_dual(x, lib.ones(5, dtype=lib.float64)),
                                fw.make_dual(y, lib.full((5,), 0.5, dtype=lib.float64)))
            return fw.unpack_dual(out).tangent.numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_allclose(run(mt), run(torch), rtol=1e-12)


def test_zeta_has_no_forward_mode():
    for lib in (torch, mt):
        import importlib
        fw = importlib.import_module(lib.__name__ + ".autograd.forward_ad")
        with fw.dual_level(), pytest.raises(NotImplementedError, match="forward AD with special_zeta"):
            _special(lib).zeta(3., fw.make_dual(lib.tensor([2.]), lib.ones(1)))


def test_i1_and_i0s_second_order_as_torch():
    def run(lib):
        S = _special(lib)
        x = lib.tensor([0., 1e-20, 0.5, 2., -1., float("nan"), float("inf"), float("-inf"), 30., -7.5],
                       dtype=lib.float64, requires_grad=True)
        y = S.i1(x)
        g, = lib.autograd.grad(y.sum(), x, create_graph=True)
        g2, = lib.autograd.grad(g.sum(), x)
        h, = lib.autograd.grad(lib.i0(x).sum(), x, create_graph=True)
        return (y.grad_fn.name(), h.grad_fn.next_functions[1][0].name(), y.detach().numpy(), g.detach().numpy(),
                g2.numpy(), str(S.i1(lib.tensor([1, 2])).dtype).split(".")[-1])
    t, m = run(torch), run(mt)
    assert (m[0], m[1], m[5]) == (t[0], t[1], t[5]) == ("SpecialI1Backward0", "SpecialI1Backward0", "float32")
    for a, b in zip(m[2:5], t[2:5]):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    with pytest.raises(NotImplementedError):
        mts.i1(mt.tensor([1j]))


def test_special_is_reachable_from_the_package_alone():
    """`import microtorch as torch; torch.special.xlogy(...)`, as tutorials write it (a fresh interpreter: no other
    test has imported the module yet)."""
    import subprocess
    import sys
    code = "import microtorch as torch; print(torch.special.xlogy(torch.tensor(2.), torch.tensor(3.)).item())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert abs(float(out) - 2 * __import__("math").log(3)) < 1e-6
