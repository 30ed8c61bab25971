"""nn.functional and nn modules added for torch's API (issue 13), against torch: values, grad_fn names,
gradients, second order, jvp and vmap (tests/op_oracle.py), module reprs and parameters, errors."""
import warnings

import numpy as np
import pytest
import torch

import microtorch as mt
from op_oracle import check_op, close

R = np.random.default_rng(11)
X = R.standard_normal((2, 4, 3)) * 3
W4 = R.uniform(0.1, 0.5, 4)


def F(lib):
    return lib.nn.functional


ACTIVATIONS = [
    ("relu6", lambda l, x: F(l).relu6(x), "HardtanhBackward0"),
    ("hardtanh", lambda l, x: F(l).hardtanh(x, -2.0, 2.5), "HardtanhBackward0"),
    ("hardsigmoid", lambda l, x: F(l).hardsigmoid(x), "HardsigmoidBackward0"),
    ("hardswish", lambda l, x: F(l).hardswish(x), "HardswishBackward0"),
    ("selu", lambda l, x: F(l).selu(x), "EluBackward0"),
    ("celu", lambda l, x: F(l).celu(x, 0.7), "CeluBackward0"),
    ("mish", lambda l, x: F(l).mish(x), "MishBackward0"),
    ("silu", lambda l, x: F(l).silu(x), "SiluBackward0"),
    ("logsigmoid", lambda l, x: F(l).logsigmoid(x), "LogSigmoidBackward0"),
    ("softshrink", lambda l, x: F(l).softshrink(x, 1.5), "SoftshrinkBackward0"),
    ("hardshrink", lambda l, x: F(l).hardshrink(x, 1.5), "HardshrinkBackward0"),
    ("threshold", lambda l, x: F(l).threshold(x, 0.5, -2.0), "ThresholdBackward0"),
    ("softsign", lambda l, x: F(l).softsign(x), "DivBackward0"),
    ("tanhshrink", lambda l, x: F(l).tanhshrink(x), "SubBackward0"),
    ("softmin", lambda l, x: F(l).softmin(x, 1), "SoftmaxBackward0"),
    ("glu", lambda l, x: F(l).glu(x, 1), "GluBackward0"),
    ("glu last", lambda l, x: F(l).glu(x[..., :2]), "GluBackward0"),
    ("rrelu eval", lambda l, x: F(l).rrelu(x, 0.1, 0.3), "RreluWithNoiseBackward0"),
]


@pytest.mark.parametrize("name, f, grad_fn", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_activations_as_torch(name, f, grad_fn):
    # (torch has no second derivative of hardsigmoid: it raises)
    piecewise_linear = name in ("relu6", "hardtanh", "softshrink", "hardshrink", "threshold", "rrelu eval",
                                "hardsigmoid")
    # torch's celu backward rounds its constants to float32 (relative differences ~1e-8)
    check_op(f, X, grad_fn=grad_fn, second_order=not piecewise_linear, vmap=name != "rrelu eval",
             grad_tol=1e-7 if name == "celu" else 1e-10)


def test_prelu_as_torch():
    check_op(lambda l, x, w: F(l).prelu(x, w), X, W4, grad_fn="PreluKernelBackward0", second_order=False,
             vmap=False)
    check_op(lambda l, x, w: F(l).prelu(x, w[:1]), X, W4, grad_fn="PreluKernelBackward0", second_order=False,
             vmap=False)


MODULES = ["ReLU6()", "ReLU6(inplace=True)", "Hardtanh(-2.0, 3.0)", "Hardsigmoid()", "Hardswish()", "SELU()",
           "CELU(alpha=0.5)", "Mish()", "LogSigmoid()", "Softshrink(0.3)", "Hardshrink()", "Threshold(0.1, 20.0)",
           "Softsign()", "Tanhshrink()", "Softmin(dim=1)", "Softmax2d()", "GLU(dim=1)", "PReLU()",
           "PReLU(num_parameters=4, init=0.1)", "SiLU()", "RReLU(0.1, 0.3)"]


@pytest.mark.parametrize("expr", MODULES)
def test_activation_modules_as_torch(expr):
    tm, mm = eval("nn." + expr, {"nn": torch.nn}), eval("nn." + expr, {"nn": mt.nn})
    assert repr(mm) == repr(tm)
    assert [n for n, _ in mm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    mm.load_state_dict({k: mt.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    tm.double().eval(), mm.double().eval()
    x = X.reshape(2, 4, 3, 1) if "2d" in expr else X
    yt = tm(torch.tensor(x.copy(), requires_grad=True) * 1)  # * 1: inplace modules need a non-leaf
    ym = mm(mt.tensor(x.copy(), requires_grad=True) * 1)
    close(ym, yt, expr)
    assert ym.grad_fn.name() == yt.grad_fn.name()


def test_rrelu_training_draws_slopes_in_range():
    mt.manual_seed(0)
    x = mt.tensor(-np.ones(1000), requires_grad=True)
    y = mt.nn.functional.rrelu(x, 0.1, 0.3, training=True)
    slopes = -y.detach().numpy()
    assert 0.1 <= slopes.min() and slopes.max() <= 0.3 and slopes.std() > 0.03
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), slopes)  # the gradient is the slope each element drew


@pytest.mark.parametrize("call, exc", [("F.glu(lib.ones(3))", RuntimeError), ("F.softshrink(lib.ones(3), -1.)",
                                                                                RuntimeError),
                                       ("F.prelu(lib.ones(2, 3), lib.ones(2))", RuntimeError),
                                       ("lib.nn.Hardtanh(2., 1.)", AssertionError)])
def test_activation_errors_as_torch(call, exc):
    for lib in (torch, mt):
        with pytest.raises(exc):
            eval(call, {"F": lib.nn.functional, "lib": lib})


# for tests/test_forward_ad.py's table (through test_api_ops.FORWARD_AD_OPS): every new jvp rule runs there
FORWARD_AD_NN = [(name, f, [("f", X.shape)]) for name, f, _ in ACTIVATIONS if name != "rrelu eval"]
FORWARD_AD_NN += [("prelu", lambda l, x, w: F(l).prelu(x, w), [("f", X.shape), ("q", W4.shape)]),
                  ("rrelu eval", lambda l, x: F(l).rrelu(x, 0.1, 0.3), [("f", X.shape)])]


A = R.standard_normal((5, 4))
B = R.standard_normal((5, 4))
SIGN = np.where(R.random((5, 4)) > 0.5, 1.0, -1.0)
SIGN5 = np.where(R.random(5) > 0.5, 1.0, -1.0)
POS = R.uniform(0.2, 2.0, (5, 4))
PROB = R.dirichlet(np.ones(4), 5)
LOSSES = [
    ("kl_div batchmean", lambda l, x, t: F(l).kl_div(x.log_softmax(1), t, reduction="batchmean"), (A, PROB),
     "DivBackward0"),
    ("kl_div sum log_target", lambda l, x, t: F(l).kl_div(x, t.log(), reduction="sum", log_target=True), (A, PROB),
     "SumBackward0"),
    ("poisson_nll", lambda l, x, t: F(l).poisson_nll_loss(x, t), (A, POS), "MeanBackward0"),
    ("poisson_nll full", lambda l, x, t: F(l).poisson_nll_loss(x, t * 3, log_input=False, full=True), (POS, POS),
     "MeanBackward0"),
    ("gaussian_nll", lambda l, x, t, v: F(l).gaussian_nll_loss(x, t, v), (A, B, POS), "MeanBackward0"),
    ("gaussian_nll full var dims", lambda l, x, t, v: F(l).gaussian_nll_loss(x, t, v[:, 0], full=True,
                                                                             reduction="sum"), (A, B, POS),
     "SumBackward0"),
    ("soft_margin", lambda l, x: F(l).soft_margin_loss(x, l.tensor(SIGN)), (A,), "SoftMarginLossBackward0"),
    ("margin_ranking", lambda l, a, b: F(l).margin_ranking_loss(a[:, 0], b[:, 0], l.tensor(SIGN5), margin=0.3),
     (A, B), "MeanBackward0"),
    ("hinge_embedding", lambda l, x: F(l).hinge_embedding_loss(x, l.tensor(SIGN), margin=0.5), (A,), "MeanBackward0"),
    ("cosine_embedding", lambda l, a, b: F(l).cosine_embedding_loss(a, b, l.tensor(SIGN5), margin=0.1), (A, B),
     "MeanBackward0"),
    ("triplet_margin", lambda l, a, b, c: F(l).triplet_margin_loss(a, b, c, margin=2.0), (A, B, POS), "MeanBackward0"),
    ("triplet_margin swap p1", lambda l, a, b, c: F(l).triplet_margin_loss(a, b, c, p=1, swap=True), (A, B, POS),
     "MeanBackward0"),
    ("multilabel_soft_margin", lambda l, x: F(l).multilabel_soft_margin_loss(x, l.tensor((SIGN > 0) * 1.0)), (A,),
     "MeanBackward0"),
    ("pairwise_distance", lambda l, a, b: F(l).pairwise_distance(a, b), (A, B), "NormBackward1"),
    ("cosine_similarity", lambda l, a, b: F(l).cosine_similarity(a, b), (A, B), "SumBackward1"),
    ("normalize", lambda l, x: F(l).normalize(x, dim=0), (A,), "DivBackward0"),
]


@pytest.mark.parametrize("name, f, inputs, grad_fn", LOSSES, ids=[x[0] for x in LOSSES])
def test_composite_losses_as_torch(name, f, inputs, grad_fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_op(f, *inputs, grad_fn=grad_fn, vmap=False, second_order=name != "hinge_embedding")


LOSS_MODULES = ["KLDivLoss(reduction='batchmean')", "PoissonNLLLoss()", "SoftMarginLoss()", "MarginRankingLoss(0.5)",
                "HingeEmbeddingLoss()", "CosineEmbeddingLoss()", "TripletMarginLoss()", "MultiLabelSoftMarginLoss()",
                "GaussianNLLLoss()", "PairwiseDistance()", "CosineSimilarity(dim=0)",
                "TripletMarginWithDistanceLoss(margin=0.5)"]


@pytest.mark.parametrize("expr", LOSS_MODULES)
def test_loss_modules_as_torch(expr):
    tm, mm = eval("nn." + expr, {"nn": torch.nn}), eval("nn." + expr, {"nn": mt.nn})
    assert repr(mm) == repr(tm)
    n_inputs = {"MarginRankingLoss": 3, "CosineEmbeddingLoss": 3, "TripletMarginLoss": 3, "GaussianNLLLoss": 3,
                "PairwiseDistance": 2, "CosineSimilarity": 2, "TripletMarginWithDistanceLoss": 3}
    name = expr.split("(")[0]
    args = {2: (A, B), 3: (A[:, 0], B[:, 0], SIGN5) if name in ("MarginRankingLoss",) else
            (A, B, SIGN5) if name == "CosineEmbeddingLoss" else (A, B, POS)}.get(n_inputs.get(name), (A, PROB))
    if name in ("SoftMarginLoss", "HingeEmbeddingLoss"):
        args = (A, SIGN)
    if name == "MultiLabelSoftMarginLoss":
        args = (A, (SIGN > 0) * 1.0)
    close(mm(*[mt.tensor(a) for a in args]), tm(*[torch.tensor(a) for a in args]), expr)


@pytest.mark.parametrize("call, exc", [
    ("F.gaussian_nll_loss(lib.ones(2, 3), lib.ones(2, 3), lib.ones(4))", ValueError),
    ("F.gaussian_nll_loss(lib.ones(2), lib.ones(2), -lib.ones(2))", ValueError),
    ("F.margin_ranking_loss(lib.ones(2), lib.ones(2), lib.ones(1, 2))", RuntimeError),
    ("F.triplet_margin_loss(lib.ones(2, 3), lib.ones(2, 3), lib.ones(3))", RuntimeError),
    ("F.soft_margin_loss(lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)).backward()",
     RuntimeError),
    ("lib.nn.TripletMarginLoss(margin=0.)(lib.ones(2), lib.ones(2), lib.ones(2))", ValueError),
])
def test_loss_errors_as_torch(call, exc):
    for lib in (torch, mt):
        with pytest.raises(exc):
            eval(call, {"F": lib.nn.functional, "lib": lib})
FORWARD_AD_NN += [("soft_margin", lambda l, x: F(l).soft_margin_loss(x, l.tensor(SIGN)), [("f", A.shape)])]


IMG = R.standard_normal((2, 3, 4, 5))
PADS = [("constant", lambda l, x: F(l).pad(x, (1, 2)), "ConstantPadNdBackward0"),
        ("constant value 2d", lambda l, x: F(l).pad(x, (1, 0, 2, 1), value=0.5), "ConstantPadNdBackward0"),
        ("constant crop", lambda l, x: F(l).pad(x, (-1, 2, 0, -2)), "ConstantPadNdBackward0"),
        ("reflect 1d", lambda l, x: F(l).pad(x[0], (2, 3), mode="reflect"), "ReflectionPad1DBackward0"),
        ("reflect 2d", lambda l, x: F(l).pad(x, (1, 2, 3, 1), mode="reflect"), "ReflectionPad2DBackward0"),
        ("replicate 2d", lambda l, x: F(l).pad(x, (2, 1, 1, 3), mode="replicate"), "ReplicationPad2DBackward0"),
        ("replicate 3d", lambda l, x: F(l).pad(x, (1, 1, 1, 1, 1, 1), mode="replicate"),
         "ReplicationPad3DBackward0"),
        ("circular 2d", lambda l, x: F(l).pad(x, (1, 2, 2, 1), mode="circular"), "torch::autograd::CopySlices")]


@pytest.mark.parametrize("name, f, grad_fn", PADS, ids=[p[0] for p in PADS])
def test_pad_as_torch(name, f, grad_fn):
    check_op(f, IMG, grad_fn=grad_fn, second_order=False)


PAD_MODULES = ["ZeroPad2d(1)", "ZeroPad1d((1, 2))", "ConstantPad1d(2, 3.5)", "ConstantPad2d((1, 0, 2, 1), -1.)",
               "ConstantPad3d(1, 0.5)", "ReflectionPad1d((1, 2))", "ReflectionPad2d(2)", "ReplicationPad1d(3)",
               "ReplicationPad2d((1, 2, 0, 1))", "ReplicationPad3d(1)", "CircularPad1d(2)", "CircularPad2d(1)",
               "CircularPad3d((1, 0, 1, 0, 0, 1))", "ZeroPad3d(1)", "ReflectionPad3d(1)"]


@pytest.mark.parametrize("expr", PAD_MODULES)
def test_padding_modules_as_torch(expr):
    tm, mm = eval("nn." + expr, {"nn": torch.nn}), eval("nn." + expr, {"nn": mt.nn})
    assert repr(mm) == repr(tm)
    x = IMG[0] if "1d" in expr else IMG  # 1-d padding layers take (C, L) or (N, C, L)
    close(mm(mt.tensor(x)), tm(torch.tensor(x)), expr)


@pytest.mark.parametrize("call, exc", [("F.pad(x, (1, 2, 3))", RuntimeError), ("F.pad(x, (5, 5), mode='reflect')",
                                                                               RuntimeError),
                                       ("F.pad(x, (1, 1), mode='bogus')", NotImplementedError),
                                       ("F.pad(x, (1, 1), mode='replicate')", NotImplementedError),
                                       ("F.pad(x[0, 0, 0], (1, 1, 1, 1), mode='replicate')", RuntimeError)])
def test_pad_errors_as_torch(call, exc):
    for lib in (torch, mt):
        with pytest.raises(exc):
            eval(call, {"F": lib.nn.functional, "x": lib.tensor(IMG)})


FORWARD_AD_NN += [(name, f, [("f", IMG.shape)]) for name, f, _ in PADS]


DROPOUTS = [("dropout1d", (4, 6, 50), True), ("dropout1d", (6, 50), True), ("dropout2d", (4, 6, 5, 10), True),
            ("dropout3d", (2, 6, 3, 4, 5), True), ("alpha_dropout", (40, 50), False),
            ("feature_alpha_dropout", (8, 6, 50), True)]


@pytest.mark.parametrize("name, shape, per_channel", DROPOUTS)
def test_dropout_variants_as_torch(name, shape, per_channel):
    """Same structure as torch (whole channels dropped, kept values scaled alike), the grad_fn, eval = identity, and
    for the same seed the same values."""
    mt.manual_seed(0), torch.manual_seed(0)
    x = np.random.default_rng(0).uniform(1, 2, shape)
    outs = {}
    for lib in (torch, mt):
        xin = lib.tensor(x, requires_grad=True)
        y = getattr(lib.nn.functional, name)(xin, 0.3, True)
        outs[lib] = y
        np.testing.assert_array_equal(getattr(lib.nn.functional, name)(xin, 0.3, False).detach().numpy(), x)
    t, m = outs[torch], outs[mt]
    assert m.grad_fn.name() == t.grad_fn.name() and m.shape == t.shape
    ratio_t, ratio_m = t.detach().numpy() / x, m.detach().numpy() / x
    if "alpha" not in name:
        np.testing.assert_allclose(np.unique(np.round(ratio_m, 10)), np.unique(np.round(ratio_t, 10)))
    dropped = (m.detach().numpy() == m.detach().numpy().min()) if "alpha" in name else (ratio_m == 0)
    if per_channel:  # a channel is dropped as a whole
        flat = dropped.reshape(dropped.shape[:2] + (-1,)) if len(shape) > 2 else dropped.reshape(1, shape[0], -1)
        assert (flat.all(-1) | ~flat.any(-1)).all()
    # the same seed drops the same units as torch's (its bernoulli_ draws; tests/test_torch_random.py)
    np.testing.assert_allclose(m.detach().numpy(), t.detach().numpy(), rtol=1e-6, atol=0)


def test_alpha_dropout_keeps_mean_and_variance_as_torch():
    x = np.random.default_rng(1).standard_normal(200000)
    for lib in (torch, mt):
        y = lib.nn.functional.alpha_dropout(lib.tensor(x), 0.2, True).numpy()
        assert abs(y.mean()) < 0.02 and abs(y.std() - 1) < 0.02


@pytest.mark.parametrize("expr", ["Dropout1d()", "Dropout2d(0.2)", "Dropout3d(inplace=True)", "AlphaDropout(0.2)",
                                  "FeatureAlphaDropout()"])
def test_dropout_modules_as_torch(expr):
    assert repr(eval("nn." + expr, {"nn": mt.nn})) == repr(eval("nn." + expr, {"nn": torch.nn}))


@pytest.mark.parametrize("call", ["F.dropout1d(lib.ones(3), 0.5)", "F.dropout2d(lib.ones(3), 0.5)",
                                  "F.alpha_dropout(lib.ones(3), 1.5)"])
def test_dropout_errors_as_torch(call):
    for lib in (torch, mt):
        with pytest.raises((RuntimeError, ValueError)) as info:
            eval(call, {"F": lib.nn.functional, "lib": lib})
        if lib is torch:
            expected = info.type
    assert info.type is expected


def test_parameter_list_as_torch():
    shapes = [(2,), (3, 2)]
    out = []
    for lib in (torch, mt):
        pl = lib.nn.ParameterList([lib.nn.Parameter(lib.ones(*s)) for s in shapes])
        pl.append(lib.zeros(4))  # a tensor becomes a Parameter
        module = lib.nn.Module()
        module.params = pl
        out.append((list(module.state_dict()), [tuple(p.shape) for p in module.parameters()], len(pl),
                    type(pl[2]).__name__, tuple(pl[-1].shape), [tuple(p.shape) for p in pl[1:]],
                    repr(lib.nn.ParameterList([lib.nn.Parameter(lib.ones(2))])).replace("micro", ""),
                    repr(pl).replace("micro", ""),
                    repr(lib.nn.ParameterDict({"a": lib.nn.Parameter(lib.ones(2))})).replace("micro", "")))
        with pytest.raises(RuntimeError, match="should not be called"):
            pl(1)
    assert out[1] == out[0]


def test_parameter_dict_as_torch():
    out = []
    for lib in (torch, mt):
        pd = lib.nn.ParameterDict({"w": lib.nn.Parameter(lib.ones(2)), "b": lib.zeros(3)})
        pd["c"] = lib.ones(1)
        del pd["w"]
        module = lib.nn.Module()
        module.p = pd
        out.append((list(module.state_dict()), list(pd.keys()), "b" in pd, len(pd), type(pd["c"]).__name__,
                    [tuple(v.shape) for v in pd.values()], pd.get("zz")))
    assert out[1] == out[0]


@pytest.mark.parametrize("expr, shape", [("Unfold(2, padding=1)", (2, 3, 4, 5)), ("Unfold((2, 3), stride=2)", (1, 2, 5, 6)),
                                         ("Fold((4, 5), 2)", (2, 12, 12))])
def test_fold_modules_as_torch(expr, shape):
    tm, mm = eval("nn." + expr, {"nn": torch.nn}), eval("nn." + expr, {"nn": mt.nn})
    assert repr(mm) == repr(tm)
    x = np.random.default_rng(9).standard_normal(shape)
    close(mm(mt.tensor(x)), tm(torch.tensor(x)), expr)
