"""Ops added for torch's API (issue 13), each against torch on the same float64 inputs: values,
grad_fn names, gradients, second-order gradients, forward mode (jvp) and vmap; then errors."""
import numpy as np
import pytest
import torch

import microtorch as mt
from op_oracle import check_op

R = np.random.default_rng(7)
X = R.standard_normal((3, 4))
Y = R.standard_normal((3, 4))
P = R.uniform(0.05, 0.95, (3, 4))        # in (0, 1): logit, atanh
BIG = R.uniform(1.2, 3.0, (3, 4))        # > 1: acosh
W = R.uniform(0.1, 0.9, (3, 4))

# (name, f(lib, *inputs), inputs, grad_fn)
POINTWISE = [
    ("asinh", lambda l, x: l.asinh(x), (X,), "AsinhBackward0"),
    ("arcsinh method", lambda l, x: x.arcsinh(), (X,), "AsinhBackward0"),
    ("acosh", lambda l, x: l.acosh(x), (BIG,), "AcoshBackward0"),
    ("atanh", lambda l, x: x.atanh(), (P,), "AtanhBackward0"),
    ("exp2", lambda l, x: l.exp2(x), (X,), "Exp2Backward0"),
    ("erfc", lambda l, x: l.erfc(x), (X,), "ErfcBackward0"),
    ("deg2rad", lambda l, x: l.deg2rad(x), (X,), "Deg2RadBackward0"),
    ("rad2deg", lambda l, x: x.rad2deg(), (X,), "Rad2DegBackward0"),
    ("frac", lambda l, x: l.frac(x * 3), (X,), "FracBackward0"),
    ("sinc", lambda l, x: l.sinc(x), (X,), "SincBackward0"),
    ("logit", lambda l, p: l.logit(p), (P,), "LogitBackward0"),
    ("logit eps", lambda l, p: p.logit(eps=0.2), (P,), "LogitBackward0"),
    ("atan2", lambda l, a, b: l.atan2(a, b), (X, Y), "Atan2Backward0"),
    ("arctan2 broadcast", lambda l, a, b: a.arctan2(b[0]), (X, Y), "Atan2Backward0"),
    ("hypot", lambda l, a, b: l.hypot(a, b), (X, Y), "HypotBackward0"),
    ("logaddexp", lambda l, a, b: l.logaddexp(a, b), (X, Y), "LogaddexpBackward0"),
    ("logaddexp2", lambda l, a, b: a.logaddexp2(b), (X, Y), "Logaddexp2Backward0"),
    ("xlogy", lambda l, a, b: l.xlogy(a, b), (X, P), "XlogyBackward0"),
    ("fmax", lambda l, a, b: l.fmax(a, b), (X, Y), "FmaxBackward0"),
    ("fmin", lambda l, a, b: a.fmin(b), (X, Y), "FminBackward0"),
    ("lerp number", lambda l, a, b: l.lerp(a, b, 0.3), (X, Y), "LerpBackward0"),
    ("lerp tensor", lambda l, a, b, w: a.lerp(b, w), (X, Y, W), "LerpBackward1"),
    ("addcmul", lambda l, a, b, c: l.addcmul(a, b, c, value=0.5), (X, Y, W), "AddcmulBackward0"),
    ("addcdiv", lambda l, a, b, c: a.addcdiv(b, c, value=2), (X, Y, W), "AddcdivBackward0"),
]


@pytest.mark.parametrize("name, f, inputs, grad_fn", POINTWISE, ids=[p[0] for p in POINTWISE])
def test_pointwise_as_torch(name, f, inputs, grad_fn):
    check_op(f, *inputs, grad_fn=grad_fn, second_order=name not in ("frac", "deg2rad", "rad2deg", "lerp number"))


def test_integer_inputs_promote_as_torch():
    for expr in ["lib.atan2(lib.tensor([1, 2]), lib.tensor([3, 4]))", "lib.asinh(lib.tensor([1, 2]))",
                 "lib.exp2(lib.tensor([1, 2]))", "lib.frac(lib.tensor([1.5, -2.25]))",
                 "lib.fmax(lib.tensor([1, 5]), lib.tensor([3, 4]))", "lib.hypot(lib.tensor([3.]), 4)"
                 if False else "lib.logaddexp(lib.tensor([1.]), lib.tensor([2.]))"]:
        t, m = eval(expr, {"lib": torch}), eval(expr, {"lib": mt})
        assert str(m.dtype).split(".")[1] == str(t.dtype).split(".")[1], expr
        np.testing.assert_allclose(m.numpy(), t.numpy(), rtol=1e-6)


def test_nan_handling_as_torch():
    a = [1.0, float("nan"), 3.0]
    b = [float("nan"), 2.0, 1.0]
    for fn in ("fmax", "fmin"):
        t = getattr(torch, fn)(torch.tensor(a), torch.tensor(b))
        m = getattr(mt, fn)(mt.tensor(a), mt.tensor(b))
        np.testing.assert_array_equal(m.numpy(), t.numpy())
    t = torch.xlogy(torch.tensor([0.0, 0.0, 2.0]), torch.tensor([0.0, float("nan"), 3.0]))
    m = mt.xlogy(mt.tensor([0.0, 0.0, 2.0]), mt.tensor([0.0, float("nan"), 3.0]))
    np.testing.assert_array_equal(m.numpy(), t.numpy())


@pytest.mark.parametrize("call", ["lib.atan2(lib.ones(3), lib.ones(4))", "lib.lerp(lib.ones(3), lib.ones(2), 0.5)",
                                  "lib.addcdiv(lib.ones(3), lib.ones(3, dtype=lib.int64), "
                                  "lib.ones(3, dtype=lib.int64))"])
def test_errors_as_torch(call):
    with pytest.raises(RuntimeError):
        eval(call, {"lib": torch})
    with pytest.raises(RuntimeError):
        eval(call, {"lib": mt})


IDX = np.array([[0, 2], [1, 0], [3, 1]])
XN = X.copy()
XN[1, 2] = np.nan
MOVES = [
    ("roll", lambda l, x: l.roll(x, 1, 0), (X,), "RollBackward0"),
    ("roll dims", lambda l, x: x.roll((1, -2), (0, 1)), (X,), "RollBackward0"),
    ("roll flat", lambda l, x: l.roll(x, 5), (X,), "RollBackward0"),
    ("rot90", lambda l, x: l.rot90(x), (X,), "Rot90Backward0"),
    ("rot90 k", lambda l, x: x.rot90(3, (1, 0)), (X,), "Rot90Backward0"),
    ("trace", lambda l, x: l.trace(x), (X,), "TraceBackward0"),
    ("scatter src", lambda l, x, s: x.scatter(1, l.tensor(IDX), s[:, :2]), (X, Y), "ScatterBackward0"),
    ("scatter value", lambda l, x: l.scatter(x, 1, l.tensor(IDX), 0.5), (X,), "ScatterBackward1"),
    ("index_add", lambda l, x, s: x.index_add(0, l.tensor([2, 0, 2]), s, alpha=2), (X, Y), "IndexAddBackward0"),
    ("nansum", lambda l, x: l.nansum(x), (XN,), "NansumBackward0"),
    ("nansum dim", lambda l, x: x.nansum(1, keepdim=True), (XN,), "NansumBackward0"),
    ("nanmean", lambda l, x: l.nanmean(x, 0), (XN,), "DivBackward0"),
    ("diff", lambda l, x: l.diff(x), (X,), "SubBackward0"),
    ("diff n dim prepend", lambda l, x, y: x.diff(2, 0, prepend=y), (X, Y), "SubBackward0"),
    ("tile", lambda l, x: l.tile(x, (2, 1, 2)), (X,), "RepeatBackward0"),
    ("ravel", lambda l, x: x.ravel(), (X,), "ViewBackward0"),
    ("fliplr", lambda l, x: l.fliplr(x), (X,), "FlipBackward0"),
    ("flipud", lambda l, x: x.flipud(), (X,), "FlipBackward0"),
    ("vstack", lambda l, x, y: l.vstack([x, y[0]]), (X, Y), "CatBackward0"),
    ("hstack", lambda l, x, y: l.hstack([x, y]), (X, Y), "CatBackward0"),
    ("dstack", lambda l, x, y: l.dstack([x, y]), (X, Y), "CatBackward0"),
    ("column_stack", lambda l, x, y: l.column_stack([x[0], y[1]]), (X, Y), "CatBackward0"),
    ("tensor_split", lambda l, x: l.tensor_split(x, 3, dim=1)[0], (X,), "SliceBackward0"),
    ("tensor_split indices", lambda l, x: x.tensor_split([1, 3], 1)[1], (X,), "SliceBackward0"),
    ("hsplit", lambda l, x: l.hsplit(x, 2)[1], (X,), "SliceBackward0"),
    ("take_along_dim", lambda l, x: l.take_along_dim(x, l.tensor(IDX), 1), (X,), "GatherBackward0"),
    ("float_power", lambda l, x: l.float_power(x, 3), (X,), "PowBackward0"),
    ("msort", lambda l, x: l.msort(x), (X,), None),  # microtorch's sort values: GatherBackward0 (ops/misc.py)
    ("repeat_interleave", lambda l, x: x.repeat_interleave(2, dim=1), (X,), "ViewBackward0"),
    ("atleast_2d", lambda l, x: l.atleast_2d(x[0]), (X,), "UnsqueezeBackward0"),
]


@pytest.mark.parametrize("name, f, inputs, grad_fn", MOVES, ids=[m[0] for m in MOVES])
def test_moves_and_composites_as_torch(name, f, inputs, grad_fn):
    check_op(f, *inputs, grad_fn=grad_fn, second_order=False, vmap=name not in ("nanmean", "column_stack"))


COUNTING = ["lib.histc(lib.tensor(X), bins=5)", "lib.histc(lib.tensor(X), 4, min=-1, max=1)",
            "tuple(lib.histogram(lib.tensor(X), 3))", "tuple(lib.histogram(lib.tensor(X), lib.tensor([-1., 0., 2.])))",
            "lib.bincount(lib.tensor([0, 3, 3, 1]))", "lib.bincount(lib.tensor([0, 2]), lib.tensor([.5, 2.]))",
            "lib.unique(lib.tensor([3, 1, 3, 2]), return_inverse=True, return_counts=True)",
            "lib.searchsorted(lib.tensor([1., 3., 5.]), lib.tensor([0., 3., 6.]))",
            "lib.bucketize(lib.tensor([0., 3., 6.]), lib.tensor([1., 3., 5.]), right=True)",
            "lib.argsort(lib.tensor(X), 1)", "lib.tensor(X).argsort(0, descending=True)",
            "lib.trace(lib.arange(9).view(3, 3))", "lib.rot90(lib.arange(6).view(2, 3), 2)"]


@pytest.mark.parametrize("expr", COUNTING)
def test_counting_as_torch(expr):
    from autograd_oracle import same
    same(lambda lib: eval(expr, {"lib": lib, "X": X}))


def test_range_is_inclusive_and_warns_as_torch():
    for lib in (torch, mt):
        with pytest.warns(UserWarning, match="torch.range is deprecated"):
            r = lib.range(1, 4, 0.5)
        np.testing.assert_allclose(np.asarray(r.tolist()), np.arange(1, 4.5, 0.5))
        assert str(r.dtype).endswith("float32")


INPLACE = [("atan2_", "y"), ("hypot_", "y"), ("xlogy_", "p"), ("lerp_", "y, 0.25"), ("addcmul_", "y, p"),
           ("sinc_", ""), ("exp2_", ""), ("erf_", ""), ("expm1_", ""), ("tan_", ""), ("log1p_", "")]


@pytest.mark.parametrize("method, args", INPLACE)
def test_inplace_forms_as_torch(method, args):
    def run(lib):
        x = lib.tensor(P, requires_grad=True)
        env = {"t": x * 1, "y": lib.tensor(Y), "p": lib.tensor(P)}
        out = eval(f"t.{method}({args})", env)
        assert out is env["t"] and out._version == 1
        out.sum().backward()
        return out.grad_fn.name(), out.detach().numpy(), x.grad.numpy()
    (nt, vt, gt), (nm, vm, gm) = run(torch), run(mt)
    assert nm == nt
    np.testing.assert_allclose(vm, vt, rtol=1e-12)
    np.testing.assert_allclose(gm, gt, rtol=1e-12)


def test_aliases_and_conversions_as_torch():
    from autograd_oracle import same
    for expr in ["t.short()", "t.byte()", "t.char()", "t.type_as(lib.ones(1, dtype=lib.float64))",
                 "t.greater(1)", "t.less_equal(t)", "t.not_equal(2)", "lib.fix(t - 0.5)", "t.arccos()",
                 "lib.moveaxis(t.view(1, 3), 0, 1)", "t.positive()", "t.is_signed()", "t.is_same_size(t)",
                 "t.tril()", "t.view(1, 3).triu(1)", "t.view(3, 1).tril_(-1)", "t.clone().atanh_()", "t.resolve_conj()", "t.clone().apply_(lambda v: v * 2)",
                 "lib.tensor([2.]).is_nonzero()", "t.output_nr"]:
        same(lambda lib: eval(expr, {"lib": lib, "t": lib.tensor([0.25, 0.5, 2.0])}))


# The same ops in tests/test_forward_ad.py's format (id, f(lib, *args), argument specs: "f" normal,
# "q" in (0.1, 0.9), "p" in (0.5, 2)): that table checks every jvp rule against torch's forward mode.
FORWARD_AD_OPS = [(name, f, [("q" if a is P or a is W else "p" if a is BIG else "f", a.shape) for a in inputs])
                  for name, f, inputs, _ in POINTWISE if name not in ("acosh", "frac")]
FORWARD_AD_OPS += [
    ("acosh", lambda l, x: l.acosh(x + 1.5), [("p", (3, 4))]),
    ("frac", lambda l, x: l.frac(x * 3), [("f", (3, 4))]),
    ("smooth_l1_loss", lambda l, a, b: l.nn.functional.smooth_l1_loss(a, b, beta=0.5), [("f", (3, 4))] * 2),
    ("huber_loss", lambda l, a, b: l.nn.functional.huber_loss(a, b, reduction="none"), [("f", (3, 4))] * 2),
]
FORWARD_AD_OPS += [(name, f, [("f", a.shape) for a in inputs]) for name, f, inputs, _ in MOVES
                   if name.split()[0] in ("roll", "rot90", "trace", "scatter", "index_add", "nansum")]

from test_api_nn import FORWARD_AD_NN  # noqa: E402

FORWARD_AD_OPS += FORWARD_AD_NN

from test_api_nn_spatial import FORWARD_AD_SPATIAL  # noqa: E402  (nn1: the spatial ops)

FORWARD_AD_OPS += FORWARD_AD_SPATIAL


RANDOM = ["normal_()", "normal_(2., 0.5)", "uniform_()", "uniform_(-2, 3)", "random_()", "random_(5)",
          "random_(2, 6)", "exponential_(2.)", "bernoulli_(0.3)", "cauchy_()", "geometric_(0.4)", "log_normal_()"]


@pytest.mark.parametrize("call", RANDOM)
def test_random_fills_as_torch(call):
    """Same support, shape, dtype and (roughly) the same mean/spread as torch; fills in place."""
    samples = []
    torch.manual_seed(0), mt.manual_seed(0)
    for lib in (torch, mt):
        x = lib.empty(20000, dtype=lib.float64)
        out = eval(f"x.{call}", {"x": x})
        assert out is x and x._version > 0
        samples.append(x.numpy())
    t, m = samples
    assert (m.min() >= 0 if "random" in call or "geometric" in call or "exponential" in call else True)
    assert (t == np.round(t)).all() == (m == np.round(m)).all()
    if "random_()" not in call:  # (the median for cauchy and log-normal: heavy tails; the mean for integers)
        centre = np.mean if (t == np.round(t)).all() else np.median
        np.testing.assert_allclose(centre(m), centre(t), rtol=0.1, atol=0.05)
    if "cauchy" not in call and "log_normal" not in call and "random_()" not in call:
        np.testing.assert_allclose(m.std(), t.std(), rtol=0.1)


def test_random_fill_generator_and_leaf_error():
    a = mt.empty(5).normal_(generator=mt.Generator().manual_seed(3))
    b = mt.empty(5).normal_(generator=mt.Generator().manual_seed(3))
    assert a.tolist() == b.tolist()
    for lib in (torch, mt):
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            lib.ones(2, requires_grad=True).uniform_()


@pytest.mark.parametrize("call", ["t_()", "transpose_(0, 1)", "unsqueeze_(1)", "squeeze_()", "squeeze_(0)",
                                  "swapaxes_(0, 1)"])
def test_inplace_views_as_torch(call):
    out = []
    for lib in (torch, mt):
        w = lib.tensor(X[:1] if call == "squeeze_()" else X, requires_grad=True)
        y = w * 2
        z = eval(f"y.{call}", {"y": y})
        assert z is y
        (y * lib.arange(y.numel()).reshape(y.shape)).sum().backward()
        out.append((tuple(y.shape), y.grad_fn.name(), w.grad.numpy()))
    (st, nt, gt), (sm, nm, gm) = out
    assert sm == st and nm == nt
    np.testing.assert_allclose(gm, gt)


CLAMPS = [("clamp_min", lambda l, x: x.clamp_min(0.2), (X,), "ClampMinBackward0"),
          ("clamp_max", lambda l, x: l.clamp_max(x, -0.1), (X,), "ClampMaxBackward0")]


@pytest.mark.parametrize("name, f, inputs, grad_fn", CLAMPS, ids=[c[0] for c in CLAMPS])
def test_one_sided_clamps_as_torch(name, f, inputs, grad_fn):
    check_op(f, *inputs, grad_fn=grad_fn, second_order=False)


FORWARD_AD_OPS += [(name, f, [("f", X.shape)]) for name, f, _, _ in CLAMPS]

MORE_METHODS = ["t.signbit()", "lib.isposinf(lib.tensor([1., float('inf'), -float('inf')]))",
                "lib.isneginf(lib.tensor([1., float('inf'), -float('inf')]))", "lib.isreal(t)",
                "lib.heaviside(t - 0.5, lib.tensor(0.25))", "lib.floor_divide(t * 4, 3)", "(t * 4).floor_divide(3)",
                "lib.argwhere(t > 0.3)", "t.split_with_sizes([1, 2])", "t.clamp_min(0.3)", "t.clone().clamp_max_(0.4)",
                "t.view(3, 1).addmm(t.view(3, 1), t.view(1, 1), beta=2, alpha=0.5)", "t.is_cpu",
                "t.new(2).shape", "t.new([1, 2])", "t.hardshrink(0.3)", "t.prelu(lib.tensor([0.1]))"]


@pytest.mark.parametrize("expr", MORE_METHODS)
def test_more_methods_as_torch(expr):
    from autograd_oracle import same
    same(lambda lib: eval(expr, {"lib": lib, "t": lib.tensor([0.25, 0.5, 2.0])}))

FORWARD_AD_OPS += [("svd", lambda l, a: tuple(l.svd(a)[1:2]) + (l.svd(a)[0] @ l.svd(a)[0].T,), [("f", (4, 3))])]
