"""Complex tensors: values and gradients against torch (PyTorch's convention: for a real loss L
of z = x + iy, z.grad = dL/dx + i dL/dy), and gradcheck's Wirtinger checks."""
import warnings

import numpy as np
import pytest

import microtorch as mt
from microtorch.autograd import gradcheck, gradgradcheck
from microtorch.autograd.gradcheck import GradcheckError, check

torch = pytest.importorskip("torch")
from torch.autograd import gradcheck as t_gradcheck, gradgradcheck as t_gradgradcheck  # noqa: E402
from torch.autograd.gradcheck import GradcheckError as T_GradcheckError  # noqa: E402

R = np.random.default_rng(11)


def c(*shape, scale=1.0):
    return (R.standard_normal(shape) + 1j * R.standard_normal(shape)) * scale


def r(*shape):
    return R.standard_normal(shape)


OPS = {
    "add": (lambda lib, a, b: a + b, [c(2, 3), c(3)]),
    "add_real": (lambda lib, a, b: a + b, [c(2, 3), r(2, 3)]),
    "sub": (lambda lib, a, b: a - b, [c(2, 3), c(2, 3)]),
    "rsub": (lambda lib, a: (1 - 2j) - a, [c(2, 3)]),
    "mul": (lambda lib, a, b: a * b, [c(2, 3), c(2, 1)]),
    "mul_real": (lambda lib, a, b: a * b, [r(2, 3), c(2, 3)]),
    "mul_scalar": (lambda lib, a: a * (0.5 + 2j), [c(2, 3)]),
    "div": (lambda lib, a, b: a / b, [c(2, 3), c(2, 3)]),
    "rdiv": (lambda lib, a: 2.0 / a, [c(2, 3)]),
    "neg": (lambda lib, a: -a, [c(2, 3)]),
    "pow2": (lambda lib, a: a ** 2, [c(2, 3)]),
    "pow_complex": (lambda lib, a: a ** (1.5 + 0.5j), [c(2, 3)]),
    "pow_tensor": (lambda lib, a, b: a ** b, [c(2, 3), c(2, 3, scale=0.5)]),
    "rpow": (lambda lib, a: 2.0 ** a, [c(2, 3)]),
    "square": (lambda lib, a: a.square(), [c(2, 3)]),
    "exp": (lambda lib, a: a.exp(), [c(2, 3)]),
    "log": (lambda lib, a: a.log(), [c(2, 3)]),
    "log2": (lambda lib, a: a.log2(), [c(2, 3)]),
    "log10": (lambda lib, a: a.log10(), [c(2, 3)]),
    "log1p": (lambda lib, a: a.log1p(), [c(2, 3)]),
    "expm1": (lambda lib, a: a.expm1(), [c(2, 3)]),
    "sqrt": (lambda lib, a: a.sqrt(), [c(2, 3)]),
    "rsqrt": (lambda lib, a: a.rsqrt(), [c(2, 3)]),
    "reciprocal": (lambda lib, a: a.reciprocal(), [c(2, 3)]),
    "sin": (lambda lib, a: a.sin(), [c(2, 3)]),
    "cos": (lambda lib, a: a.cos(), [c(2, 3)]),
    "tan": (lambda lib, a: a.tan(), [c(2, 3, scale=0.5)]),
    "sinh": (lambda lib, a: a.sinh(), [c(2, 3)]),
    "cosh": (lambda lib, a: a.cosh(), [c(2, 3)]),
    "tanh": (lambda lib, a: a.tanh(), [c(2, 3, scale=0.5)]),
    "sigmoid": (lambda lib, a: a.sigmoid(), [c(2, 3, scale=0.5)]),
    "asin": (lambda lib, a: a.asin(), [c(2, 3, scale=0.5)]),
    "acos": (lambda lib, a: a.acos(), [c(2, 3, scale=0.5)]),
    "atan": (lambda lib, a: a.atan(), [c(2, 3, scale=0.5)]),
    "sgn": (lambda lib, a: a.sgn(), [c(2, 3)]),
    "abs": (lambda lib, a: a.abs(), [c(2, 3)]),
    "angle": (lambda lib, a: a.angle(), [c(2, 3)]),
    "real": (lambda lib, a: a.real, [c(2, 3)]),
    "imag": (lambda lib, a: a.imag, [c(2, 3)]),
    "conj": (lambda lib, a: a.conj() * 1, [c(2, 3)]),
    "abs_squared": (lambda lib, a: (a.conj() * a).real, [c(3)]),
    "real_to_complex": (lambda lib, x: x * (1 + 2j), [r(2, 3)]),
    "mm": (lambda lib, a, b: a @ b, [c(2, 3), c(3, 2)]),
    "mv": (lambda lib, a, b: a @ b, [c(2, 3), c(3)]),
    "dot": (lambda lib, a, b: lib.dot(a, b), [c(3), c(3)]),
    "bmm": (lambda lib, a, b: lib.bmm(a, b), [c(2, 2, 3), c(2, 3, 2)]),
    "matmul_real_complex": (lambda lib, a, b: a.to(b.dtype) @ b, [r(2, 3), c(3, 2)]),
    "sum": (lambda lib, a: a.sum(), [c(2, 3)]),
    "sum_dim": (lambda lib, a: a.sum(1), [c(2, 3)]),
    "mean": (lambda lib, a: a.mean(), [c(2, 3)]),
    "mean_dim": (lambda lib, a: a.mean(0, keepdim=True), [c(2, 3)]),
    "prod": (lambda lib, a: a.prod(1), [c(2, 3)]),
    "shape_ops": (lambda lib, a: a.reshape(3, 2).t()[1:].exp(), [c(2, 3)]),
}


def both(arrays):
    return (tuple(mt.tensor(a).requires_grad_() for a in arrays),
            tuple(torch.tensor(a).requires_grad_() for a in arrays))


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


# ---- values and gradients ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(OPS))
def test_values_and_grads_match_torch(name):
    fn, arrays = OPS[name]
    m_in, t_in = both(arrays)
    m_out, t_out = quiet(fn, mt, *m_in), fn(torch, *t_in)
    t_val = t_out.detach().resolve_conj().numpy()
    assert m_out.dtype.name == str(t_out.dtype).replace("torch.", "")
    np.testing.assert_allclose(m_out.detach().numpy(), t_val, rtol=1e-12, atol=1e-12)
    g = np.asarray(r(*t_val.shape) + (1j * r(*t_val.shape) if np.iscomplexobj(t_val) else 0), dtype=t_val.dtype)
    quiet(m_out.backward, mt.tensor(g))
    t_out.backward(torch.tensor(g))
    for m_x, t_x in zip(m_in, t_in):
        assert m_x.grad.dtype is m_x.dtype
        np.testing.assert_allclose(m_x.grad.numpy(), t_x.grad.resolve_conj().numpy(), rtol=1e-10, atol=1e-12)


def test_complex64_keeps_its_dtype():
    z = c(4).astype(np.complex64)
    m, t = mt.tensor(z).requires_grad_(), torch.tensor(z).requires_grad_()
    for x, lib in ((m, mt), (t, torch)):
        ((x * x).exp().abs().sum()).backward()
    assert m.grad.dtype is mt.complex64
    np.testing.assert_allclose(m.grad.numpy(), t.grad.numpy(), rtol=1e-4)


def test_real_leaf_gets_the_real_part():
    x = r(3)
    w = c(3)
    grads = []
    for lib in (mt, torch):
        xt = lib.tensor(x).requires_grad_()
        (quiet(lambda: xt * lib.tensor(w))).abs().sum().backward()
        assert xt.grad.dtype is lib.float64
        grads.append(xt.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


# ---- gradcheck and gradgradcheck --------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(OPS))
def test_gradcheck_and_gradgradcheck_pass_like_torch(name):
    fn, arrays = OPS[name]
    m_in, t_in = both(arrays)
    assert quiet(t_gradcheck, lambda *a: fn(torch, *a), t_in)
    try:
        assert quiet(gradcheck, lambda *a: fn(mt, *a), m_in)
        assert quiet(gradgradcheck, lambda *a: fn(mt, *a), m_in)
    except GradcheckError as e:
        pytest.fail(f"{name}: {e}")


@pytest.mark.parametrize("name", ["mul", "div", "exp", "abs", "angle", "mm", "sum_dim", "real_to_complex", "sgn"])
def test_gradgradcheck_like_torch(name):
    fn, arrays = OPS[name]
    m_in, t_in = both(arrays)
    assert quiet(t_gradgradcheck, lambda *a: fn(torch, *a), t_in)
    assert quiet(gradgradcheck, lambda *a: fn(mt, *a), m_in)


def _custom(lib, forward, backward):
    def fwd(ctx, z):
        ctx.save_for_backward(z)
        return forward(z)

    def bwd(ctx, g):
        (z,) = ctx.saved_tensors
        return backward(z, g)

    return type("Custom", (lib.autograd.Function,), {"forward": staticmethod(fwd), "backward": staticmethod(bwd)})


def first_lines(forward, backward, arrays, **kw):
    out = []
    for lib, gc, err in ((mt, gradcheck, GradcheckError), (torch, t_gradcheck, T_GradcheckError)):
        inputs = tuple(lib.tensor(a).requires_grad_() for a in arrays)
        try:
            quiet(gc, _custom(lib, forward, backward).apply, inputs, **kw)
            out.append(None)
        except err as e:
            out.append(str(e).splitlines()[0])
    return out


@pytest.mark.parametrize("fast_mode", [False, True])
def test_missing_conj_fails_like_torch(fast_mode):
    # exp's gradient is grad * conj(exp(z)); forgetting the conj is the classic complex bug
    m, t = first_lines(lambda z: z.exp(), lambda z, g: g * z.exp(), [c(3)], fast_mode=fast_mode)
    assert m == t == ("While considering the imaginary part of complex outputs only, Jacobian mismatch for "
                      "output 0 with respect to input 0,")


def test_wrong_real_part_fails_like_torch():
    # z -> z * 2 with a backward that drops the imaginary part of the gradient
    m, t = first_lines(lambda z: z * 2, lambda z, g: (g.real * 2).to(g.dtype), [c(3)])
    assert m == t == ("While considering the imaginary part of complex outputs only, Jacobian mismatch for "
                      "output 0 with respect to input 0,")


def test_complex_to_real_wrong_backward_fails_like_torch():
    # |z| with the conjugated direction: no "part" prefix, the output is real
    m, t = first_lines(lambda z: z.abs(), lambda z, g: g * (z / z.abs()).conj(), [c(3)])
    assert m == t == "Jacobian mismatch for output 0 with respect to input 0,"
    m, t = first_lines(lambda z: z.abs(), lambda z, g: g * z / z.abs(), [c(3)])
    assert m is None and t is None


# ---- the report's complex pairs ----------------------------------------------------------------------
def test_holomorphic_function_has_zero_conjugate_wirtinger():
    z = mt.tensor(c(3)).requires_grad_()
    report = check(lambda z: z * z, z)
    assert report.passed
    kinds = [(p.kind, p.checked) for p in report.pairs]
    assert kinds == [("real_part", True), ("imag_part", True), ("wirtinger", False), ("conj_wirtinger", False)]
    w, cw = report.pair(0, 0, "wirtinger"), report.pair(0, 0, "conj_wirtinger")
    zz = z.detach().numpy()
    # torch's scaling: df/dx - i df/dy = 2 df/dz = 2 * 2z, and df/dx + i df/dy = 2 df/dz* = 0
    np.testing.assert_allclose(w.analytical, np.diag(4 * zz), atol=1e-12)
    np.testing.assert_allclose(w.numerical, np.diag(4 * zz), atol=1e-6)
    np.testing.assert_allclose(cw.analytical, 0, atol=1e-12)
    np.testing.assert_allclose(cw.numerical, 0, atol=1e-6)


def test_conj_has_zero_wirtinger():
    report = check(lambda z: z.conj() * 1, mt.tensor(c(2)).requires_grad_())
    np.testing.assert_allclose(report.pair(0, 0, "wirtinger").analytical, 0, atol=1e-12)
    np.testing.assert_allclose(report.pair(0, 0, "conj_wirtinger").analytical, 2 * np.eye(2), atol=1e-12)


def test_complex_to_real_pair_equals_torch_jacobian():
    arrays = [c(3)]
    fn = lambda lib, z: (z.abs() ** 2 + z.angle()).sin()  # noqa: E731
    m_in, t_in = both(arrays)
    report = check(lambda z: fn(mt, z), m_in)
    assert [(p.kind, p.checked) for p in report.pairs] == [("conj_wirtinger", True), ("wirtinger", False)]
    p = report.pair(0, 0)
    jac = torch.autograd.functional.jacobian(lambda z: fn(torch, z), t_in)[0]
    np.testing.assert_allclose(p.analytical, jac.resolve_conj().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(p.numerical, jac.resolve_conj().numpy(), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(report.pair(0, 0, "wirtinger").analytical, p.analytical.conj())


def test_real_to_complex_pairs_are_real_and_imaginary_parts():
    report = check(lambda x: x * (1 + 2j), mt.tensor(r(3)).requires_grad_())
    assert [p.kind for p in report.pairs] == ["real_part", "imag_part"]
    np.testing.assert_allclose(report.pair(0, 0, "real_part").analytical, np.eye(3))
    np.testing.assert_allclose(report.pair(0, 0, "imag_part").analytical, 2 * np.eye(3))
    assert report.pair(0, 0, "real_part").numerical.dtype == np.float64


def test_fast_mode_falls_back_to_slow_for_complex():
    z = mt.tensor(c(3)).requires_grad_()
    report = check(lambda z: z.exp(), z, fast_mode=True)
    assert report.passed and report.fast is None and len(report.pairs) == 4


def test_complex64_warns_like_torch():
    z = c(3).astype(np.complex64)
    for lib, gc in ((mt, gradcheck), (torch, t_gradcheck)):
        with pytest.warns(UserWarning, match="is not a double precision floating point or complex"):
            gc(lambda a: a * 2, (lib.tensor(z).requires_grad_(),), raise_exception=False)


@pytest.mark.parametrize("name", ["mul", "exp", "abs", "real_to_complex", "mm"])
def test_forward_ad_check_with_complex(name):
    fn, arrays = OPS[name]
    m_in, t_in = both(arrays)
    assert quiet(t_gradcheck, lambda *a: fn(torch, *a), t_in, check_forward_ad=True)
    assert quiet(gradcheck, lambda *a: fn(mt, *a), m_in, check_forward_ad=True)
    report = check(lambda *a: fn(mt, *a), m_in, check_forward_ad=True)
    assert report.checks["forward_ad"] is True
    assert any(p.mode == "forward" for p in report.pairs)
