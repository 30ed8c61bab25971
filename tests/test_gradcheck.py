"""gradcheck / gradgradcheck against the torch oracle: the same function passes or fails in both.

torch is the oracle only (see conftest). Every test builds the same function for both
libraries from one definition taking the library module as `lib`.
"""
import inspect
import warnings

import numpy as np
import pytest

import microtorch as mt
from microtorch.autograd import gradcheck, gradgradcheck
from microtorch.autograd.gradcheck import GradcheckError, check, check_gradgrad

torch = pytest.importorskip("torch")
from torch.autograd import gradcheck as t_gradcheck, gradgradcheck as t_gradgradcheck  # noqa: E402
from torch.autograd.gradcheck import GradcheckError as T_GradcheckError  # noqa: E402


def make(lib, arr, requires_grad=True):
    t = lib.tensor(np.array(arr))
    return t.requires_grad_(requires_grad) if requires_grad else t


def both(arrays, requires_grad=True):
    """The same inputs as microtorch and torch tensors."""
    rg = requires_grad if isinstance(requires_grad, (list, tuple)) else [requires_grad] * len(arrays)
    return (tuple(make(mt, a, r) for a, r in zip(arrays, rg)),
            tuple(make(torch, a, r) for a, r in zip(arrays, rg)))


def verdicts(fn, arrays, requires_grad=True, **kw):
    """(microtorch's, torch's) gradcheck verdict, with raise_exception=False."""
    m_in, t_in = both(arrays, requires_grad)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = gradcheck(lambda *a: fn(mt, *a), m_in, raise_exception=False, **kw)
        t = t_gradcheck(lambda *a: fn(torch, *a), t_in, raise_exception=False, **kw)
    return m, t


def messages(fn, arrays, requires_grad=True, gg=False, **kw):
    """The GradcheckError messages of microtorch and torch (None if it passed)."""
    m_in, t_in = both(arrays, requires_grad)
    out = []
    for lib, inp, gc in ((mt, m_in, gradgradcheck if gg else gradcheck),
                         (torch, t_in, t_gradgradcheck if gg else t_gradcheck)):
        err = GradcheckError if lib is mt else T_GradcheckError
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                gc(lambda *a: fn(lib, *a), inp, **kw)
            out.append(None)
        except err as e:
            out.append(str(e))
    return out


# ---- imports and signatures ---------------------------------------------------------------------
def test_public_names():
    import microtorch.autograd as ag
    from microtorch.autograd.gradcheck import gradcheck as g2, GradcheckError as E2
    assert inspect.isfunction(gradcheck) and g2 is gradcheck and ag.gradcheck is gradcheck
    assert ag.GradcheckError is E2 is GradcheckError and issubclass(GradcheckError, RuntimeError)
    assert ag.gradgradcheck is gradgradcheck
    assert mt.autograd.gradcheck.check is check


@pytest.mark.parametrize("name", ["gradcheck", "gradgradcheck"])
def test_signature_is_torchs(name):
    import sys
    tg, mg = sys.modules["torch.autograd.gradcheck"], sys.modules["microtorch.autograd.gradcheck"]
    ours = inspect.signature(getattr(mg, name)).parameters
    theirs = inspect.signature(getattr(tg, name)).parameters
    assert list(ours) == list(theirs)
    for k in theirs:
        assert ours[k].default == theirs[k].default, k
        assert ours[k].kind == theirs[k].kind, k


# ---- every built-in op, float64 ----------------------------------------------------------------
R = np.random.default_rng(7)


def normal(*shape):
    return R.standard_normal(shape)


def positive(*shape):
    return R.uniform(0.5, 2.0, shape)


def unit(*shape):
    return R.uniform(-0.8, 0.8, shape)


def away(*shape):
    """Normal, but away from 0 (kinks of abs, relu, ...) and without ties."""
    x = R.uniform(0.2, 1.5, shape) * R.choice([-1, 1], shape)
    return x + np.arange(x.size).reshape(shape) * 1e-3


def F(lib):
    return lib.nn.functional


def idx(lib, values):
    return lib.tensor(values)


OPS = {
    # arithmetic
    "add": (lambda lib, a, b: a + b, [normal(2, 3), normal(3)]),
    "add_alpha": (lambda lib, a, b: lib.add(a, b, alpha=2.5), [normal(2, 3), normal(2, 3)]),
    "add_scalar": (lambda lib, a: 1.5 + a, [normal(2, 3)]),
    "sub": (lambda lib, a, b: a - b, [normal(2, 3), normal(2, 1)]),
    "rsub": (lambda lib, a: 2.0 - a, [normal(2, 3)]),
    "mul": (lambda lib, a, b: a * b, [normal(2, 3), normal(1, 3)]),
    "mul_scalar": (lambda lib, a: a * 3.0, [normal(2, 3)]),
    "div": (lambda lib, a, b: a / b, [normal(2, 3), positive(2, 3)]),
    "div_scalar": (lambda lib, a: a / 4.0, [normal(2, 3)]),
    "rdiv": (lambda lib, a: 2.0 / a, [positive(2, 3)]),
    "neg": (lambda lib, a: -a, [normal(2, 3)]),
    "pow_scalar": (lambda lib, a: a ** 3, [normal(2, 3)]),
    "pow_frac": (lambda lib, a: a ** 1.5, [positive(2, 3)]),
    "pow_tensor": (lambda lib, a, b: a ** b, [positive(2, 3), normal(2, 3)]),
    "rpow": (lambda lib, a: 2.0 ** a, [normal(2, 3)]),
    "square": (lambda lib, a: lib.square(a), [normal(2, 3)]),
    # unary
    "exp": (lambda lib, a: a.exp(), [normal(2, 3)]),
    "log": (lambda lib, a: a.log(), [positive(2, 3)]),
    "log2": (lambda lib, a: a.log2(), [positive(2, 3)]),
    "log10": (lambda lib, a: a.log10(), [positive(2, 3)]),
    "log1p": (lambda lib, a: a.log1p(), [positive(2, 3)]),
    "expm1": (lambda lib, a: a.expm1(), [normal(2, 3)]),
    "sqrt": (lambda lib, a: a.sqrt(), [positive(2, 3)]),
    "rsqrt": (lambda lib, a: a.rsqrt(), [positive(2, 3)]),
    "sin": (lambda lib, a: a.sin(), [normal(2, 3)]),
    "cos": (lambda lib, a: a.cos(), [normal(2, 3)]),
    "tan": (lambda lib, a: a.tan(), [unit(2, 3)]),
    "tanh": (lambda lib, a: a.tanh(), [normal(2, 3)]),
    "sigmoid": (lambda lib, a: a.sigmoid(), [normal(2, 3)]),
    "reciprocal": (lambda lib, a: a.reciprocal(), [positive(2, 3)]),
    "abs": (lambda lib, a: a.abs(), [away(2, 3)]),
    "asin": (lambda lib, a: a.asin(), [unit(2, 3)]),
    "acos": (lambda lib, a: a.acos(), [unit(2, 3)]),
    "atan": (lambda lib, a: a.atan(), [normal(2, 3)]),
    "sinh": (lambda lib, a: a.sinh(), [normal(2, 3)]),
    "cosh": (lambda lib, a: a.cosh(), [normal(2, 3)]),
    "sign": (lambda lib, a: a.sign() * a, [away(2, 3)]),
    "sgn": (lambda lib, a: a.sgn() * a, [away(2, 3)]),
    "relu": (lambda lib, a: a.relu(), [away(2, 3)]),
    "leaky_relu": (lambda lib, a: F(lib).leaky_relu(a, 0.2), [away(2, 3)]),
    "elu": (lambda lib, a: F(lib).elu(a), [away(2, 3)]),
    "gelu": (lambda lib, a: F(lib).gelu(a), [normal(2, 3)]),
    "gelu_tanh": (lambda lib, a: F(lib).gelu(a, approximate="tanh"), [normal(2, 3)]),
    "softplus": (lambda lib, a: F(lib).softplus(a, beta=2.0), [normal(2, 3)]),
    "clamp": (lambda lib, a: a.clamp(-0.5, 0.5), [away(2, 3)]),
    "clamp_tensor": (lambda lib, a, lo, hi: lib.clamp(a, lo, hi),
                     [away(2, 3), away(2, 3) - 1.7, away(2, 3) + 1.7]),
    "maximum": (lambda lib, a, b: lib.maximum(a, b), [away(2, 3), away(2, 3) + 0.05]),
    "minimum": (lambda lib, a, b: lib.minimum(a, b), [away(2, 3), away(2, 3) + 0.05]),
    "where": (lambda lib, a, b: lib.where(a > 0, a, b), [away(2, 3), normal(2, 3)]),
    # reductions
    "sum": (lambda lib, a: a.sum(), [normal(2, 3)]),
    "sum_dim": (lambda lib, a: a.sum(1), [normal(2, 3)]),
    "sum_keepdim": (lambda lib, a: a.sum((0, 2), keepdim=True), [normal(2, 3, 2)]),
    "mean": (lambda lib, a: a.mean(), [normal(2, 3)]),
    "mean_dim": (lambda lib, a: a.mean(0), [normal(2, 3)]),
    "var": (lambda lib, a: a.var(1), [normal(2, 3)]),
    "std": (lambda lib, a: a.std(), [normal(2, 3)]),
    "prod": (lambda lib, a: a.prod(), [normal(2, 3)]),
    "prod_dim": (lambda lib, a: a.prod(1), [normal(2, 3)]),
    "amax": (lambda lib, a: a.amax(1), [away(2, 3)]),
    "amin": (lambda lib, a: a.amin(), [away(2, 3)]),
    "max": (lambda lib, a: a.max(), [away(2, 3)]),
    "max_dim": (lambda lib, a: a.max(1), [away(2, 3)]),
    "min_dim": (lambda lib, a: a.min(0, keepdim=True), [away(2, 3)]),
    "logsumexp": (lambda lib, a: a.logsumexp(1), [normal(2, 3)]),
    "norm": (lambda lib, a: a.norm(), [normal(2, 3)]),
    "norm_1": (lambda lib, a: lib.norm(a, p=1, dim=1), [away(2, 3)]),
    "norm_3": (lambda lib, a: lib.norm(a, p=3), [away(2, 3)]),
    "norm_inf": (lambda lib, a: lib.norm(a, p=float("inf")), [away(2, 3)]),
    "cumsum": (lambda lib, a: a.cumsum(1), [normal(2, 3)]),
    # linear algebra
    "mm": (lambda lib, a, b: a @ b, [normal(2, 3), normal(3, 2)]),
    "mv": (lambda lib, a, b: lib.mv(a, b), [normal(2, 3), normal(3)]),
    "dot": (lambda lib, a, b: lib.dot(a, b), [normal(3), normal(3)]),
    "vecmat": (lambda lib, a, b: a @ b, [normal(3), normal(3, 2)]),
    "bmm": (lambda lib, a, b: lib.bmm(a, b), [normal(2, 2, 3), normal(2, 3, 2)]),
    "matmul_broadcast": (lambda lib, a, b: a @ b, [normal(2, 2, 3), normal(3, 2)]),
    "addmm": (lambda lib, c, a, b: lib.addmm(c, a, b), [normal(2), normal(2, 3), normal(3, 2)]),
    "outer": (lambda lib, a, b: lib.outer(a, b), [normal(3), normal(2)]),
    "einsum": (lambda lib, a, b: lib.einsum("ij,jk->ik", a, b), [normal(2, 3), normal(3, 2)]),
    "einsum_trace_sum": (lambda lib, a, b: lib.einsum("ij,kj->i", a, b), [normal(2, 3), normal(2, 3)]),
    # shapes
    "reshape": (lambda lib, a: a.reshape(3, 2), [normal(2, 3)]),
    "view": (lambda lib, a: a.view(-1), [normal(2, 3)]),
    "flatten": (lambda lib, a: a.flatten(), [normal(2, 1, 3)]),
    "unflatten": (lambda lib, a: a.unflatten(1, (3, 1)), [normal(2, 3)]),
    "squeeze": (lambda lib, a: a.squeeze(1), [normal(2, 1, 3)]),
    "unsqueeze": (lambda lib, a: a.unsqueeze(0), [normal(2, 3)]),
    "transpose": (lambda lib, a: a.transpose(0, 2), [normal(2, 3, 2)]),
    "permute": (lambda lib, a: a.permute(2, 0, 1), [normal(2, 3, 2)]),
    "t": (lambda lib, a: a.t(), [normal(2, 3)]),
    "mT": (lambda lib, a: a.mT, [normal(2, 3)]),
    "expand": (lambda lib, a: a.expand(2, 3, 3), [normal(3, 1)]),
    "broadcast_to": (lambda lib, a: lib.broadcast_to(a, (2, 3)), [normal(3)]),
    "repeat": (lambda lib, a: a.repeat(2, 1, 2), [normal(2, 3)]),
    "cat": (lambda lib, a, b: lib.cat([a, b], 1), [normal(2, 3), normal(2, 2)]),
    "stack": (lambda lib, a, b: lib.stack([a, b], 1), [normal(2, 3), normal(2, 3)]),
    "split": (lambda lib, a: a.split([1, 2], 1), [normal(2, 3)]),
    "chunk": (lambda lib, a: a.chunk(2, 0), [normal(3, 2)]),
    "unbind": (lambda lib, a: a.unbind(1), [normal(2, 3)]),
    "flip": (lambda lib, a: a.flip(1), [normal(2, 3)]),
    "narrow": (lambda lib, a: a.narrow(1, 1, 2), [normal(2, 3)]),
    "movedim": (lambda lib, a: lib.movedim(a, 0, 2), [normal(2, 3, 2)]),
    "clone": (lambda lib, a: a.clone(), [normal(2, 3)]),
    "to_float32_and_back": (lambda lib, a: a.to(lib.float32).to(lib.float64) * 0 + a, [normal(2, 3)]),
    # indexing
    "getitem_basic": (lambda lib, a: a[1:, ::2], [normal(3, 4)]),
    "getitem_int": (lambda lib, a: a[1], [normal(3, 4)]),
    "getitem_advanced": (lambda lib, a: a[idx(lib, [0, 2, 0])], [normal(3, 2)]),
    "getitem_mask": (lambda lib, a: a[a > 0], [away(3, 2)]),
    "select": (lambda lib, a: a.select(1, 2), [normal(2, 3)]),
    "index_select": (lambda lib, a: a.index_select(1, idx(lib, [2, 0, 2])), [normal(2, 3)]),
    "gather": (lambda lib, a: a.gather(1, idx(lib, [[0, 0], [2, 1]])), [normal(2, 3)]),
    "take": (lambda lib, a: lib.take(a, idx(lib, [5, 0, 3])), [normal(2, 3)]),
    "masked_fill": (lambda lib, a: a.masked_fill(a > 0, 2.0), [away(2, 3)]),
    "masked_select": (lambda lib, a: lib.masked_select(a, a < 0), [away(2, 3)]),
    "sort": (lambda lib, a: lib.sort(a, 1).values, [away(2, 3)]),
    "topk": (lambda lib, a: lib.topk(a, 2).values, [away(2, 3)]),
    # nn
    "softmax": (lambda lib, a: lib.softmax(a, 1), [normal(2, 3)]),
    "log_softmax": (lambda lib, a: lib.log_softmax(a, 0), [normal(2, 3)]),
    "linear": (lambda lib, x, w, b: F(lib).linear(x, w, b), [normal(2, 3), normal(2, 3), normal(2)]),
    "mse_loss": (lambda lib, a, b: F(lib).mse_loss(a, b), [normal(2, 3), normal(2, 3)]),
    "l1_loss": (lambda lib, a, b: F(lib).l1_loss(a, b, reduction="sum"), [normal(2, 3), normal(2, 3) + 3]),
    "nll_loss": (lambda lib, a: F(lib).nll_loss(a, idx(lib, [2, 0])), [normal(2, 3)]),
    "cross_entropy": (lambda lib, a: F(lib).cross_entropy(a, idx(lib, [1, 2])), [normal(2, 3)]),
    "cross_entropy_probs": (lambda lib, a, p: F(lib).cross_entropy(a, p.softmax(1)), [normal(2, 3), normal(2, 3)]),
    "binary_cross_entropy": (lambda lib, a, y: F(lib).binary_cross_entropy(a.sigmoid(), y),
                             [normal(2, 3), R.uniform(0, 1, (2, 3))]),
    "bce_with_logits": (lambda lib, a, y: F(lib).binary_cross_entropy_with_logits(a, y),
                        [normal(2, 3), R.uniform(0, 1, (2, 3))]),
}

# ops where microtorch fails and torch passes: bugs in the op, not in gradcheck (none at the moment)
KNOWN_GRADGRAD_BUGS = {}
KNOWN_GRAD_BUGS = {}
# torch takes ~7 s to warm up its double backward of sgn; it passes (checked by hand), so the
# oracle is skipped there to keep this file fast
SLOW_ORACLE = {"sgn"}


@pytest.mark.parametrize("name", sorted(OPS))
def test_every_op_passes_gradcheck_like_torch(name):
    fn, arrays = OPS[name]
    m, t = verdicts(fn, arrays)
    assert t is True, f"torch's gradcheck fails on {name}: fix the test inputs"
    if name in KNOWN_GRAD_BUGS:
        pytest.xfail(KNOWN_GRAD_BUGS[name])
    assert m is True, messages(fn, arrays)[0]


@pytest.mark.parametrize("name", sorted(OPS))
def test_every_op_passes_gradgradcheck_like_torch(name):
    fn, arrays = OPS[name]
    m_in, t_in = both(arrays)
    if name not in SLOW_ORACLE:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = t_gradgradcheck(lambda *a: fn(torch, *a), t_in, raise_exception=False)
        assert t is True, f"torch's gradgradcheck fails on {name}: fix the test inputs"
    if name in KNOWN_GRADGRAD_BUGS:
        pytest.xfail(KNOWN_GRADGRAD_BUGS[name])
    try:
        m = gradgradcheck(lambda *a: fn(mt, *a), m_in)
    except GradcheckError as e:
        pytest.fail(f"{name}: {e}")
    assert m is True


# ---- functions that must fail, as they do in torch -----------------------------------------------
def _function(lib, forward, backward, **extra):
    """A custom autograd.Function of `lib` from two plain functions."""
    def fwd(ctx, *args):
        ctx.save_for_backward(*args)
        if "jvp" in extra:
            ctx.save_for_forward(*args)
        return forward(lib, *args)

    def bwd(ctx, *grads):
        return backward(lib, ctx, *ctx.saved_tensors, *grads)

    body = {"forward": staticmethod(fwd), "backward": staticmethod(bwd)}
    body.update(extra)
    return type("Custom", (lib.autograd.Function,), body)


def test_wrong_backward_names_output_and_input():
    # out0 = a * b, out1 = sin(a) + b; the backward gets d out1 / d b wrong
    def fwd(lib, a, b):
        return a * b, a.sin() + b

    def bwd(lib, ctx, a, b, g0, g1):
        return g0 * b + g1 * a.cos(), g0 * a + g1 * 2

    arrays = [normal(2, 3), normal(2, 3)]
    m, t = messages(lambda lib, a, b: _function(lib, fwd, bwd).apply(a, b), arrays)
    assert t is not None and m is not None
    assert t.startswith("Jacobian mismatch for output 1 with respect to input 1,\nnumerical:")
    assert m.startswith("Jacobian mismatch for output 1 with respect to input 1,\nnumerical:")
    assert "\nanalytical:" in m


def test_input_index_counts_inputs_that_require_grad():
    # the first argument is a constant: the wrong gradient is for argument 2, "input 1" in torch
    def fwd(lib, c, a, b):
        return c * a * b

    def bwd(lib, ctx, c, a, b, g):
        return None, g * c * b, g * c * a * 1.5

    arrays = [normal(3), normal(3), normal(3)]
    m, t = messages(lambda lib, c, a, b: _function(lib, fwd, bwd).apply(c, a, b), arrays,
                    requires_grad=[False, True, True])
    assert t.splitlines()[0] == m.splitlines()[0] == "Jacobian mismatch for output 0 with respect to input 1,"


def test_message_layout_and_numbers_match_torch():
    def bwd(lib, ctx, a, g):
        return g * a.cos() * 2

    arrays = [np.array([0.5, -1.0])]
    m, t = messages(lambda lib, a: _function(lib, lambda lib, a: a.sin(), bwd).apply(a), arrays)
    assert m.replace("microtorch", "torch") == t


def test_backward_ignoring_its_gradient_fails():
    # scalar output: the Jacobian matches, only the grad_output check can see it
    def bwd(lib, ctx, a, g):
        return a.cos()

    fn = lambda lib, a: _function(lib, lambda lib, a: a.sin().sum(), bwd).apply(a)  # noqa: E731
    m, t = messages(fn, [normal(3)])
    assert m == t == "backward not multiplied by grad_output"
    report = check(lambda a: fn(mt, a), make(mt, normal(3)))
    assert report.checks["backward_ad"] is True and report.checks["mul_by_grad_output"] is False
    # vector output: the Jacobian itself is wrong
    fn = lambda lib, a: _function(lib, lambda lib, a: a.sin(), bwd).apply(a)  # noqa: E731
    m, t = messages(fn, [normal(3)])
    assert m.splitlines()[0] == t.splitlines()[0] == "Jacobian mismatch for output 0 with respect to input 0,"


def _noisy_backward(scale):
    rng = np.random.default_rng(0)

    def bwd(lib, ctx, a, g):
        noise = lib.tensor(rng.standard_normal(tuple(a.shape)) * scale)
        return g * (a.cos() + noise)
    return bwd


@pytest.mark.parametrize("nondet_tol, fails", [(0.0, True), (1e-6, False)])
def test_nondeterministic_backward(nondet_tol, fails):
    fn = lambda lib, a: _function(lib, lambda lib, a: a.sin(), _noisy_backward(1e-9)).apply(a)  # noqa: E731
    m, t = messages(fn, [normal(2, 3)], nondet_tol=nondet_tol)
    if fails:
        assert t.startswith("Backward is not reentrant") and m.startswith("Backward is not reentrant")
        assert f"The tolerance for nondeterminism was {nondet_tol}." in m
    else:
        assert m is None and t is None
    report = check(lambda a: fn(mt, a), make(mt, normal(2, 3)), nondet_tol=nondet_tol)
    assert report.checks["nondet"] is (not fails)


def test_nondeterminism_in_fast_mode():
    fn = lambda lib, a: _function(lib, lambda lib, a: a.sin(), _noisy_backward(1e-9)).apply(a)  # noqa: E731
    m, t = messages(fn, [normal(4)], fast_mode=True)
    assert m.startswith("Backward is not reentrant") and t.startswith("Backward is not reentrant")
    assert verdicts(fn, [normal(4)], fast_mode=True, nondet_tol=1e-6) == (True, True)


def test_fast_mode_catches_a_wrong_backward():
    def bwd(lib, ctx, a, b, g):
        return g @ b.mT, a.mT @ g * 1.01

    fn = lambda lib, a, b: _function(lib, lambda lib, a, b: a @ b, bwd).apply(a, b)  # noqa: E731
    arrays = [normal(3, 4), normal(4, 2)]
    m, t = messages(fn, arrays, fast_mode=True)
    assert m is not None and t is not None
    assert m.splitlines()[0] == t.splitlines()[0] == "Jacobian mismatch for output 0 with respect to input 1,"
    assert "we recompute numerical and analytical jacobians in slow mode" in m
    report = check(lambda a, b: fn(mt, a, b), both(arrays)[0], fast_mode=True)
    assert not report.passed and report.fast is not None
    assert [(p.input_index, p.passed) for p in report.fast.pairs] == [(0, True), (1, False)]
    # on failure the report carries what the slow mode finds
    assert [p.passed for p in report.pairs] == [True, False]
    slow = report.pair(0, 1)
    assert slow.mask.any() and not slow.passed
    np.testing.assert_allclose(slow.analytical, 1.01 * slow.numerical, rtol=1e-6)


def test_fast_mode_passes_correct_functions_and_keeps_u_v():
    fn = lambda lib, a, b: (a @ b).tanh()  # noqa: E731
    arrays = [normal(3, 4), normal(4)]
    assert verdicts(fn, arrays, fast_mode=True) == (True, True)
    report = check(lambda a, b: fn(mt, a, b), both(arrays)[0], fast_mode=True)
    assert report.passed and report.pairs == []
    assert [u.shape for u in report.fast.u] == [(12,), (4,)] and [v.shape for v in report.fast.v] == [(3,)]
    for u in report.fast.u:
        assert np.isclose(np.linalg.norm(u), 1.0)
    # the scalars are v^T J u with the slow-mode Jacobians
    full = check(lambda a, b: fn(mt, a, b), both(arrays)[0])
    for fp in report.fast.pairs:
        J = full.pair(fp.output_index, fp.input_index).analytical
        u, v = report.fast.u[fp.input_index], report.fast.v[fp.output_index]
        assert np.isclose(v @ J @ u, fp.analytical) and np.isclose(fp.numerical, fp.analytical, atol=1e-7)


# ---- the report -----------------------------------------------------------------------------------
def test_report_jacobians_equal_torch_functional_jacobian():
    def fn(lib, a, b, c):
        return (a @ b).sin() * c.sum(), (a * 2).exp().mean(0)

    arrays = [normal(2, 3), normal(3, 4), normal(2)]
    m_in, t_in = both(arrays)
    report = check(lambda *a: fn(mt, *a), m_in)
    assert report.passed and report.message == ""
    jac = torch.autograd.functional.jacobian(lambda *a: fn(torch, *a), t_in)
    assert len(report.pairs) == 6
    for p in report.pairs:
        expected = jac[p.output_index][p.input_index]
        expected = expected.reshape(p.analytical.shape).numpy()
        np.testing.assert_allclose(p.analytical, expected, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(p.numerical, expected, rtol=1e-6, atol=1e-7)
        assert p.kind == "real" and p.checked and p.passed and not p.mask.any()
        assert p.output_shape == tuple(report.outputs[p.output_index].shape)
        assert p.input_shape == tuple(report.inputs[p.input_index].shape)


def test_report_of_a_failure_marks_the_wrong_entries():
    def bwd(lib, ctx, a, g):
        wrong = lib.tensor(np.array([1.0, 1.0, 3.0, 1.0]))
        return g * 2 * wrong

    fn = lambda lib, a: _function(lib, lambda lib, a: a * 2, bwd).apply(a)  # noqa: E731
    x = make(mt, normal(4))
    report = check(lambda a: fn(mt, a), x)
    assert not report.passed and report.message.startswith("Jacobian mismatch for output 0 with respect to input 0")
    (p,) = report.pairs
    assert p.mask.tolist() == [[i == j == 2 for j in range(4)] for i in range(4)]
    assert p.worst == (2, 2) and np.isclose(p.max_abs_error, 4.0) and np.isclose(p.max_rel_error, 2.0)
    assert not p.passed and report.checks["backward_ad"] is False
    assert gradcheck(lambda a: fn(mt, a), x, raise_exception=False) is False
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"):
        gradcheck(lambda a: fn(mt, a), x)


def test_report_checks_and_inputs_are_snapshots():
    x = make(mt, normal(3))
    report = check(lambda a: a.exp(), x)
    assert report.checks == {"no_overlap": True, "backward_ad": True, "nondet": True, "grad_dtypes": None,
                             "forward_ad": None, "batched_forward_grad": None, "batched_grad": None,
                             "mul_by_grad_output": True, "undefined_grad": True}
    assert not report.inputs[0].requires_grad and np.array_equal(report.inputs[0].numpy(), x.detach().numpy())
    assert report.eps == 1e-6 and report.atol == 1e-5 and report.rtol == 1e-3
    assert check(lambda a: a.exp(), x, check_undefined_grad=False).checks["undefined_grad"] is None
    assert check(lambda a: a.exp(), x, check_grad_dtypes=True).checks["grad_dtypes"] is True


# ---- inputs ---------------------------------------------------------------------------------------
def test_float32_warns_and_agrees_with_torch():
    arr = normal(3).astype(np.float32)
    for lib, gc in ((mt, gradcheck), (torch, t_gradcheck)):
        x = lib.tensor(arr).requires_grad_()
        with pytest.warns(UserWarning, match="Input #0 requires gradient and is not a double precision"):
            gc(lambda a: a * 2, (x,), raise_exception=False)
    assert verdicts(lambda lib, a: a.exp(), [arr]) == verdicts(lambda lib, a: a.exp(), [arr])
    m, t = verdicts(lambda lib, a: a.exp() * 100, [arr])
    assert m == t


def test_expanded_input_is_refused_as_in_torch():
    msgs = []
    for lib, gc in ((mt, gradcheck), (torch, t_gradcheck)):
        x = lib.tensor(normal(3)).requires_grad_()
        with pytest.raises(RuntimeError) as e:
            gc(lambda a: a * 2, (x.expand(2, 3),), raise_exception=False)
        assert "stride 0" in str(e.value)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]
    report = check(lambda a: a * 2, (make(mt, normal(3)).expand(2, 3),))
    assert report.checks["no_overlap"] is False and not report.passed


def test_no_input_requiring_grad():
    for lib, gc in ((mt, gradcheck), (torch, t_gradcheck)):
        with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
            gc(lambda a: a * 2, (lib.tensor(normal(3)),))


def test_outputs_that_do_not_require_grad():
    assert verdicts(lambda lib, a: lib.zeros(3, dtype=lib.float64), [normal(3)]) == (True, True)
    assert verdicts(lambda lib, a: a.detach() * 2, [normal(3)]) == (False, False)
    m, t = messages(lambda lib, a: a.detach() * 2, [normal(3)])
    assert m == t == "Numerical gradient for function expected to be zero"
    assert verdicts(lambda lib, a: a.detach() * 2, [normal(3)], fast_mode=True) == (False, False)


def test_non_differentiable_outputs_are_skipped():
    # max(dim) returns (values, indices): only the values are checked
    fn = lambda lib, a: lib.max(a, 1)  # noqa: E731
    assert verdicts(fn, [away(2, 3)]) == (True, True)
    report = check(lambda a: fn(mt, a), make(mt, away(2, 3)))
    assert len(report.pairs) == 1 and report.pairs[0].output_shape == (2,)


def test_options_validation_like_torch():
    x = (make(mt, normal(2)),)
    with pytest.raises(AssertionError, match="at least one of check_forward_ad or check_backward_ad"):
        gradcheck(lambda a: a, x, check_backward_ad=False)
    with pytest.raises(AssertionError, match="check_batched_grad=True requires check_backward_ad"):
        gradcheck(lambda a: a, x, check_backward_ad=False, check_forward_ad=True, check_batched_grad=True)
    with pytest.raises(AssertionError, match="at least one of check_fwd_over_rev or check_rev_over_rev"):
        gradgradcheck(lambda a: a, x, check_rev_over_rev=False)
    assert gradcheck(lambda a: a * 2, x, masked=True) and gradcheck(lambda a: a * 2, x, masked=False)


def test_eps_and_tolerances_are_used():
    # a slightly wrong backward passes only with a loose rtol, in both libraries
    def bwd(lib, ctx, a, g):
        return g * a.cos() * 1.002

    fn = lambda lib, a: _function(lib, lambda lib, a: a.sin(), bwd).apply(a)  # noqa: E731
    arrays = [np.array([0.3, -0.4, 0.5])]
    assert verdicts(fn, arrays) == (False, False)
    assert verdicts(fn, arrays, rtol=1e-2) == (True, True)
    assert verdicts(fn, arrays, atol=1e-2) == (True, True)
    # a huge eps makes the numerical derivative of a curved function wrong
    assert verdicts(lambda lib, a: a.exp(), arrays, eps=0.5) == (False, False)


def _unmaterialized(lib, backward, n_out=1):
    """A Function with `set_materialize_grads(False)`: its backward may receive None."""
    def fwd(ctx, a):
        ctx.set_materialize_grads(False)
        return (a * 2, a * 3)[:n_out] if n_out > 1 else a * 2

    return type("Unmaterialized", (lib.autograd.Function,),
                {"forward": staticmethod(fwd), "backward": staticmethod(backward)})


def test_undefined_output_grads():
    # backward raises a RuntimeError on an undefined gradient: a GradcheckError in both
    def raises(ctx, g):
        if g is None:
            raise RuntimeError("no gradient")
        return g * 2

    fn = lambda lib, a: _unmaterialized(lib, raises).apply(a)  # noqa: E731
    m, t = messages(fn, [normal(3)])
    assert t.startswith("Expected backward function to handle undefined output grads")
    assert m.startswith("Expected backward function to handle undefined output grads")
    assert verdicts(fn, [normal(3)], check_undefined_grad=False) == (True, True)
    with pytest.warns(UserWarning, match="Backwards compatibility: New undefined gradient support checking"):
        report = check(lambda a: fn(mt, a), make(mt, normal(3)))
    assert report.checks["undefined_grad"] is False and report.checks["backward_ad"] is True

    # backward invents a gradient when it gets none
    def invents(ctx, g):
        return g * 2 if g is not None else ctx_ones(ctx)

    def ctx_ones(ctx):
        lib = mt if isinstance(ctx, mt.autograd.function.BackwardFunction) else torch
        return lib.ones(3, dtype=lib.float64)

    fn = lambda lib, a: _unmaterialized(lib, invents).apply(a)  # noqa: E731
    m, t = messages(fn, [normal(3)])
    assert m == t == ("Expected all input grads to be undefined or zero when all output grads are undefined or "
                      'zero. Please look at "Notes about undefined output gradients" in '
                      '"tools/autograd/derivatives.yaml"')

    # other exception types propagate from both (here a TypeError: None * 2)
    fn = lambda lib, a: _unmaterialized(lib, lambda ctx, g: g * 2).apply(a)  # noqa: E731
    for lib, gc in ((mt, gradcheck), (torch, t_gradcheck)):
        with pytest.raises(TypeError):
            gc(lambda a: fn(lib, a), (make(lib, normal(3)),), raise_exception=False)

    # two outputs, the backward handles a missing gradient: passes in both
    def handles(ctx, g0, g1):
        out = 0
        if g0 is not None:
            out = out + g0 * 2
        if g1 is not None:
            out = out + g1 * 3
        return out if not isinstance(out, int) else None

    fn = lambda lib, a: _unmaterialized(lib, handles, n_out=2).apply(a)  # noqa: E731
    assert verdicts(fn, [normal(3)]) == (True, True)


def test_non_contiguous_and_transposed_inputs():
    for arrays in ([normal(3, 4)],):
        m_in, t_in = both(arrays)
        assert gradcheck(lambda a: (a * 2).sin(), (m_in[0].t(),))
        assert t_gradcheck(lambda a: (a * 2).sin(), (t_in[0].t(),))
        assert gradcheck(lambda a: a.exp(), (m_in[0][:, ::2],))


# ---- gradgradcheck ----------------------------------------------------------------------------------
def test_gradgradcheck_catches_a_non_differentiable_backward():
    # first order right, but backward reads cos(a) off detached data: the second order is wrong
    def bwd(lib, ctx, a, g):
        return g * lib.tensor(np.cos(a.detach().numpy()))

    fn = lambda lib, a: _function(lib, lambda lib, a: a.sin(), bwd).apply(a)  # noqa: E731
    assert verdicts(fn, [normal(3)]) == (True, True)
    m, t = messages(fn, [normal(3)], gg=True)
    assert m is not None and t is not None
    assert m.splitlines()[0] == t.splitlines()[0] == "Jacobian mismatch for output 0 with respect to input 0,"


def test_gradgradcheck_options():
    x = make(mt, normal(2, 3))
    go = mt.tensor(normal(2, 3)).requires_grad_()
    assert gradgradcheck(lambda a: a.tanh(), x, go)
    assert gradgradcheck(lambda a: a.tanh(), (x,), (go,), fast_mode=True)
    assert gradgradcheck(lambda a: (a * a).sum(1), x, gen_non_contig_grad_outputs=True)
    report = check_gradgrad(lambda a: a.sin(), x)
    assert report.passed
    # the checked function maps (input, grad_output) to the gradient: two inputs, one output
    assert {(p.output_index, p.input_index) for p in report.pairs} == {(0, 0), (0, 1)}
    # d/dx (go * cos x) = -go * sin x on the diagonal
    p = report.pair(0, 0)
    np.testing.assert_allclose(np.diag(p.analytical), -np.sin(x.detach().numpy().ravel()) *
                               report.inputs[1].numpy().ravel(), rtol=1e-12)


# ---- forward mode and vmap in gradcheck ---------------------------------------------------------
@pytest.mark.parametrize("name", ["mul", "tanh", "mm", "sum_dim", "softmax", "cat", "getitem_basic"])
@pytest.mark.parametrize("fast", [False, True])
def test_forward_ad_check(name, fast):
    fn, arrays = OPS[name]
    m, t = verdicts(fn, arrays, check_forward_ad=True, fast_mode=fast)
    assert m == t


def test_forward_ad_check_catches_a_wrong_jvp():
    def jvp(ctx, t):
        a, = ctx.saved_tensors
        return t * a.cos() * 2

    fn = lambda lib, a: _function(lib, lambda lib, a: a.sin(), lambda lib, ctx, a, g: g * a.cos(),  # noqa: E731
                                  jvp=staticmethod(jvp)).apply(a)
    m, t = messages(fn, [normal(3)], check_forward_ad=True)
    assert m.startswith("Jacobian computed with forward mode mismatch for output 0 with respect to input 0")
    assert m.replace("microtorch", "torch") == t
    report = check(lambda a: fn(mt, a), make(mt, normal(3)), check_forward_ad=True)
    assert report.checks["backward_ad"] is True and report.checks["forward_ad"] is False
    (fwd,) = [p for p in report.pairs if p.mode == "forward"]
    np.testing.assert_allclose(fwd.analytical, 2 * fwd.numerical, rtol=1e-6, atol=1e-9)
    m, t = messages(fn, [normal(3)], check_forward_ad=True, fast_mode=True)
    assert m.splitlines()[0] == t.splitlines()[0]
    assert "we recompute numerical and analytical jacobians in slow mode" in m


def test_batched_grad_check_fails_when_backward_cannot_be_vmapped():
    # the backward leaves autograd for numpy: fine in a loop, not under vmap
    def bwd(lib, ctx, a, g):
        return lib.tensor(g.detach().numpy() * 2)

    fn = lambda lib, a: _function(lib, lambda lib, a: a * 2, bwd).apply(a)  # noqa: E731
    assert verdicts(fn, [normal(3)]) == (True, True)
    m, t = messages(fn, [normal(3)], check_batched_grad=True)
    assert m.startswith("While computing batched gradients, got: ") and t.startswith("While computing batched")
    report = check(lambda a: fn(mt, a), make(mt, normal(3)), check_batched_grad=True)
    assert report.checks["batched_grad"] is False and report.checks["backward_ad"] is True


@pytest.mark.parametrize("name", ["mul", "tanh", "mm", "sum_dim", "softmax"])
def test_batched_grad_check(name):
    fn, arrays = OPS[name]
    m, t = verdicts(fn, arrays, check_batched_grad=True)
    assert m == t


# ---- the seed examples (blog post): nn.Linear and a small Sequential net --------------------------
def test_seed_linear():
    nn = mt.nn
    inputs = mt.randn((10, 5), requires_grad=True, dtype=mt.double)
    linear = nn.Linear(5, 3)
    linear = linear.double()
    assert gradcheck(lambda x: linear(x), inputs) is True


def test_seed_sequential_net():
    nn = pytest.importorskip("microtorch.nn")
    if not all(hasattr(nn, n) for n in ("Module", "Sequential", "Linear", "ReLU", "Sigmoid")):
        pytest.skip("microtorch.nn does not have Module/Sequential/Linear/ReLU/Sigmoid yet")

    class Net(nn.Module):
        def __init__(self):
            super(Net, self).__init__()
            self.net = nn.Sequential(
                nn.Linear(15, 30),
                nn.ReLU(),
                nn.Linear(30, 15),
                nn.ReLU(),
                nn.Linear(15, 1),
                nn.Sigmoid()
            )

        def forward(self, x):
            y = self.net(x)
            return y

    net = Net()
    net = net.double()
    inputs = mt.randn((10, 15), requires_grad=True, dtype=mt.double)
    assert gradcheck(net, inputs) is True
    assert gradcheck(net, inputs, fast_mode=True) is True
