"""microtorch.nn against the torch oracle: with the same weights, every layer's outputs and
gradients agree to 1e-10 in float64; every layer passes gradcheck (and gradgradcheck); the
Module API (names, repr, state_dict, hooks, conversions) behaves as torch's."""
import math

import numpy as np
import pytest
import torch

import microtorch as mt
import microtorch.nn as nn
import microtorch.nn.functional as F
from microtorch.autograd import gradcheck, gradgradcheck
from microtorch.autograd import graph

TOL = 1e-10


def to_mt(t, requires_grad=None):
    rg = t.requires_grad if requires_grad is None else requires_grad
    return mt.tensor(t.detach().numpy().copy(), requires_grad=rg)


def copy_weights(tmod, mmod):
    """Load torch's parameters and buffers into the microtorch module (tests load_state_dict too)."""
    sd = {k: mt.tensor(v.detach().numpy().copy()) for k, v in tmod.state_dict().items()}
    result = mmod.load_state_dict(sd)
    assert result.missing_keys == [] and result.unexpected_keys == []


def assert_close(a, b, tol=TOL, what=""):
    a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    assert a.shape == b.shape, f"{what}: shape {a.shape} != {b.shape}"
    np.testing.assert_allclose(a, b, rtol=0, atol=tol, err_msg=what)


def build(name, lib):
    n = lib.nn
    return {
        "Linear": lambda: n.Linear(5, 3),
        "Linear(bias=False)": lambda: n.Linear(5, 3, bias=False),
        "Conv1d": lambda: n.Conv1d(4, 6, 3, stride=2, padding=1),
        "Conv1d(groups, dilation)": lambda: n.Conv1d(4, 6, 2, dilation=2, groups=2, bias=False),
        "Conv2d": lambda: n.Conv2d(3, 4, 3, padding=1),
        "Conv2d(stride, groups, dilation)": lambda: n.Conv2d(4, 6, (3, 2), stride=(2, 1), padding=(1, 0),
                                                             dilation=(1, 2), groups=2),
        "Conv2d(same)": lambda: n.Conv2d(3, 2, 3, padding="same"),
        "MaxPool2d": lambda: n.MaxPool2d(2),
        "MaxPool2d(stride, pad, ceil)": lambda: n.MaxPool2d(3, stride=2, padding=1, ceil_mode=True),
        "AvgPool2d": lambda: n.AvgPool2d(2),
        "AvgPool2d(pad, no count)": lambda: n.AvgPool2d(3, stride=2, padding=1, count_include_pad=False),
        "LayerNorm": lambda: n.LayerNorm(6),
        "LayerNorm(2d, no affine)": lambda: n.LayerNorm((5, 6), elementwise_affine=False),
        "BatchNorm1d": lambda: n.BatchNorm1d(4),
        "BatchNorm1d(3d)": lambda: n.BatchNorm1d(3),
        "BatchNorm2d": lambda: n.BatchNorm2d(3),
        "Flatten": lambda: n.Flatten(),
        "Identity": lambda: n.Identity(),
        "ReLU": lambda: n.ReLU(),
        "LeakyReLU": lambda: n.LeakyReLU(0.2),
        "Sigmoid": lambda: n.Sigmoid(),
        "Tanh": lambda: n.Tanh(),
        "GELU": lambda: n.GELU(),
        "GELU(tanh)": lambda: n.GELU("tanh"),
        "ELU": lambda: n.ELU(0.7),
        "Softplus": lambda: n.Softplus(2.0),
        "Softmax": lambda: n.Softmax(dim=1),
        "LogSoftmax": lambda: n.LogSoftmax(dim=-1),
        "Dropout(eval)": lambda: n.Dropout(0.3).eval(),
        "Sequential MLP": lambda: n.Sequential(n.Linear(4, 8), n.Tanh(), n.Linear(8, 8), n.ReLU(), n.Linear(8, 2)),
        "Sequential CNN": lambda: n.Sequential(n.Conv2d(2, 3, 3, padding=1), n.ReLU(), n.MaxPool2d(2),
                                               n.Flatten(), n.Linear(3 * 2 * 2, 2)),
    }[name]()


INPUT_SHAPES = {
    "Linear": (4, 5), "Linear(bias=False)": (2, 3, 5), "Conv1d": (2, 4, 7), "Conv1d(groups, dilation)": (2, 4, 6),
    "Conv2d": (2, 3, 5, 4), "Conv2d(stride, groups, dilation)": (2, 4, 6, 5), "Conv2d(same)": (1, 3, 4, 4),
    "MaxPool2d": (2, 3, 4, 6), "MaxPool2d(stride, pad, ceil)": (2, 2, 6, 5), "AvgPool2d": (2, 3, 4, 6),
    "AvgPool2d(pad, no count)": (2, 2, 5, 6), "LayerNorm": (3, 4, 6), "LayerNorm(2d, no affine)": (2, 5, 6),
    "BatchNorm1d": (5, 4), "BatchNorm1d(3d)": (4, 3, 5), "BatchNorm2d": (2, 3, 4, 4), "Flatten": (2, 3, 4),
    "Identity": (3, 4), "ReLU": (4, 5), "LeakyReLU": (4, 5), "Sigmoid": (4, 5), "Tanh": (4, 5), "GELU": (4, 5),
    "GELU(tanh)": (4, 5), "ELU": (4, 5), "Softplus": (4, 5), "Softmax": (3, 4, 2), "LogSoftmax": (3, 4),
    "Dropout(eval)": (3, 4), "Sequential MLP": (6, 4), "Sequential CNN": (2, 2, 4, 4),
}
LAYERS = list(INPUT_SHAPES)


@pytest.mark.parametrize("name", LAYERS)
def test_layer_matches_torch(name, rng):
    """Forward, input gradient and every parameter gradient, with torch's weights copied in."""
    torch.manual_seed(0)
    tmod = build(name, torch).double()
    mmod = build(name, mt).double()
    copy_weights(tmod, mmod)
    x = rng.normal(size=INPUT_SHAPES[name])
    tx = torch.tensor(x, requires_grad=True)
    mx = mt.tensor(x, requires_grad=True)
    tout, mout = tmod(tx), mmod(mx)
    assert_close(mout, tout, what=f"{name} forward")
    g = rng.normal(size=tuple(tout.shape))
    tout.backward(torch.tensor(g))
    mout.backward(mt.tensor(g))
    assert_close(mx.grad, tx.grad, what=f"{name} input grad")
    tparams, mparams = dict(tmod.named_parameters()), dict(mmod.named_parameters())
    assert list(tparams) == list(mparams)
    for k in tparams:
        assert_close(mparams[k].grad, tparams[k].grad, what=f"{name} grad of {k}")
    for (k, tb), (k2, mb) in zip(tmod.named_buffers(), mmod.named_buffers()):
        assert k == k2
        assert_close(mb, tb, what=f"{name} buffer {k}")
    if name.startswith(("Conv", "MaxPool", "AvgPool", "Sigmoid", "Tanh", "ReLU", "GELU", "ELU", "Softplus",
                         "Softmax", "LogSoftmax", "LeakyReLU")):
        assert mout.grad_fn.name() == tout.grad_fn.name()


def build_small(name, lib):
    """The same layers with fewer weights: gradcheck perturbs every element, one at a time."""
    n = lib.nn
    small = {
        "Linear": lambda: n.Linear(3, 2),
        "Conv1d": lambda: n.Conv1d(2, 2, 3, stride=2, padding=1),
        "Conv1d(groups, dilation)": lambda: n.Conv1d(2, 2, 2, dilation=2, groups=2, bias=False),
        "Conv2d": lambda: n.Conv2d(2, 2, 2, padding=1),
        "Conv2d(stride, groups, dilation)": lambda: n.Conv2d(2, 2, (2, 2), stride=(2, 1), padding=(1, 0),
                                                             dilation=(1, 2), groups=2),
        "Conv2d(same)": lambda: n.Conv2d(1, 2, 3, padding="same"),
        "LayerNorm(2d, no affine)": lambda: n.LayerNorm((2, 3), elementwise_affine=False),
        "BatchNorm1d(3d)": lambda: n.BatchNorm1d(2),
        "Sequential MLP": lambda: n.Sequential(n.Linear(3, 4), n.Tanh(), n.Linear(4, 2)),
        "Sequential CNN": lambda: n.Sequential(n.Conv2d(1, 2, 2, padding=1), n.ReLU(), n.MaxPool2d(2),
                                               n.Flatten(), n.Linear(2 * 2 * 2, 2)),
    }
    return small[name]() if name in small else build(name, lib)


GRADCHECK_SHAPES = dict(INPUT_SHAPES)
GRADCHECK_SHAPES.update({
    "Linear": (2, 3), "Linear(bias=False)": (1, 2, 5), "Conv1d": (1, 2, 5), "Conv1d(groups, dilation)": (1, 2, 4),
    "Conv2d": (1, 2, 3, 3), "Conv2d(stride, groups, dilation)": (1, 2, 4, 4), "Conv2d(same)": (1, 1, 3, 3),
    "MaxPool2d": (1, 2, 4, 4), "MaxPool2d(stride, pad, ceil)": (1, 1, 5, 4), "AvgPool2d": (1, 2, 4, 4),
    "AvgPool2d(pad, no count)": (1, 1, 5, 4), "LayerNorm": (2, 6), "LayerNorm(2d, no affine)": (2, 2, 3),
    "BatchNorm1d": (3, 4), "BatchNorm1d(3d)": (3, 2, 2), "BatchNorm2d": (2, 3, 2, 2), "Sequential MLP": (3, 3),
    "Sequential CNN": (1, 1, 3, 3), "Softmax": (2, 3, 2), "Flatten": (2, 2, 3),
})


@pytest.mark.parametrize("name", LAYERS)
def test_layer_gradcheck(name, rng):
    """gradcheck with respect to the input and every parameter, and gradgradcheck, in float64."""
    mt.manual_seed(0)
    mod = build_small(name, mt).double()
    x = mt.tensor(rng.normal(size=GRADCHECK_SHAPES[name]), requires_grad=True)
    params = list(mod.parameters())
    if name.startswith("MaxPool"):  # keep entries apart so that eps never changes which one is the max
        x = mt.tensor(rng.permutation(x.numel()).reshape(x.shape) * 0.1, requires_grad=True)

    def f(x, *params):  # gradcheck perturbs the parameters in place, as torch's does
        return mod(x)

    inputs = (x, *params)
    assert gradcheck(f, inputs, eps=1e-6, atol=1e-5)
    if not name.startswith(("MaxPool", "ReLU", "Sequential")):
        assert gradgradcheck(f, inputs, eps=1e-6, atol=1e-5)


def test_embedding_matches_torch(rng):
    torch.manual_seed(0)
    t, m = torch.nn.Embedding(6, 3, padding_idx=1).double(), nn.Embedding(6, 3, padding_idx=1).double()
    assert m.weight.grad is None and np.all(m.weight.detach().numpy()[1] == 0)
    copy_weights(t, m)
    idx = rng.integers(0, 6, size=(4, 5))
    tout, mout = t(torch.tensor(idx)), m(mt.tensor(idx))
    assert_close(mout, tout)
    g = rng.normal(size=(4, 5, 3))
    tout.backward(torch.tensor(g))
    mout.backward(mt.tensor(g))
    assert_close(m.weight.grad, t.weight.grad)
    assert mout.grad_fn.name() == tout.grad_fn.name() == "EmbeddingBackward0"
    w = mt.tensor(rng.normal(size=(6, 3)), requires_grad=True)
    assert gradcheck(lambda w: F.embedding(mt.tensor(idx), w), (w,))
    with pytest.raises(IndexError, match="index out of range"):
        m(mt.tensor([[6]]))
    with pytest.raises(RuntimeError, match="indices"):
        m(mt.tensor([[1.0]]))


def test_batchnorm_running_stats_and_eval_match_torch(rng):
    torch.manual_seed(0)
    for momentum in (0.1, None):
        t, m = torch.nn.BatchNorm1d(3, momentum=momentum).double(), nn.BatchNorm1d(3, momentum=momentum).double()
        for _ in range(3):
            x = rng.normal(size=(6, 3)) * 2 + 1
            assert_close(m(mt.tensor(x)), t(torch.tensor(x)))
        for k in ("running_mean", "running_var", "num_batches_tracked"):
            assert_close(getattr(m, k), getattr(t, k), what=k)
        t.eval(), m.eval()
        x = rng.normal(size=(2, 3))
        assert_close(m(mt.tensor(x)), t(torch.tensor(x)))
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        nn.BatchNorm1d(3)(mt.randn(1, 3))


def test_dropout_train_mode():
    mt.manual_seed(0)
    d = nn.Dropout(0.25)
    x = mt.ones(200, 200)
    y = d(x).numpy()
    kept = y != 0
    assert abs(kept.mean() - 0.75) < 0.02
    np.testing.assert_allclose(y[kept], 1 / 0.75)
    d.train()
    xd = mt.randn(4, 5, dtype=mt.float64, requires_grad=True)
    assert gradcheck(lambda x: (mt.manual_seed(3), d(x))[1], (xd,))  # the same mask at every evaluation
    assert d.eval()(x) is x


@pytest.mark.parametrize("loss", ["MSELoss", "L1Loss", "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_losses_match_torch(loss, reduction, rng):
    x = rng.normal(size=(5, 4))
    if loss in ("CrossEntropyLoss", "NLLLoss"):
        y = rng.integers(0, 4, size=5)
        if loss == "NLLLoss":
            x = x - np.log(np.exp(x).sum(1, keepdims=True))
    elif loss == "BCELoss":
        x = 1 / (1 + np.exp(-x))
        y = rng.uniform(size=(5, 4))
    else:
        y = rng.normal(size=(5, 4)) if loss != "BCEWithLogitsLoss" else rng.uniform(size=(5, 4))
    tx, mx = torch.tensor(x, requires_grad=True), mt.tensor(x, requires_grad=True)
    tl = getattr(torch.nn, loss)(reduction=reduction)(tx, torch.tensor(y))
    ml = getattr(nn, loss)(reduction=reduction)(mx, mt.tensor(y))
    assert_close(ml, tl)
    g = rng.normal(size=tuple(tl.shape))
    tl.backward(torch.tensor(g))
    ml.backward(mt.tensor(g))
    assert_close(mx.grad, tx.grad)
    assert gradcheck(lambda x: getattr(nn, loss)(reduction=reduction)(x, mt.tensor(y)),
                     (mt.tensor(x, requires_grad=True),))


def test_weighted_losses_match_torch(rng):
    x, y, w = rng.normal(size=(6, 3)), rng.integers(0, 3, size=6), rng.uniform(size=3)
    t = torch.nn.CrossEntropyLoss(weight=torch.tensor(w), label_smoothing=0.1)(torch.tensor(x), torch.tensor(y))
    m = nn.CrossEntropyLoss(weight=mt.tensor(w), label_smoothing=0.1)(mt.tensor(x), mt.tensor(y))
    assert_close(m, t)
    pw = rng.uniform(size=3)
    yb = rng.uniform(size=(6, 3))
    t = torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor(pw))(torch.tensor(x), torch.tensor(yb))
    m = nn.BCEWithLogitsLoss(pos_weight=mt.tensor(pw))(mt.tensor(x), mt.tensor(yb))
    assert_close(m, t)


def test_nll_loss_gradient_bits_as_torch(rng):
    """torch divides the incoming gradient by the total weight, then multiplies by -w[y] (a weighted 'mean'
    with a gradient other than 1 shows the order in the last bit; the weights here sum exactly in any
    order), and leaves the gradient 0 when every target is ignored (the loss is nan, 0/0)."""
    x, y, w = rng.normal(size=(5, 4)), np.array([0, 3, 1, 1, 2]), np.array([0.5, 1.25, 2.0, 0.75])
    results = {}
    for lib in (torch, mt):
        for name, kw, t in (("weighted", dict(weight=lib.tensor(w)), y), ("ignored", {}, np.full(5, -100))):
            xs = lib.tensor(x, requires_grad=True)
            loss = lib.nn.functional.nll_loss(xs, lib.tensor(t), **kw)
            loss.backward(lib.tensor(0.7369))
            results[lib.__name__, name] = (loss.detach().numpy(), xs.grad.numpy())
    for name in ("weighted", "ignored"):
        np.testing.assert_array_equal(results["microtorch", name][1], results["torch", name][1], err_msg=name)
    assert np.isnan(results["microtorch", "ignored"][0])


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_double_backward_as_torch(fn, rng):
    """The gradient of softmax / log_softmax made with create_graph is one torch node
    (SoftmaxBackwardDataBackward0 ...) whose own gradients, and the third order, are torch's."""
    x, g, gg = (rng.normal(size=(3, 4)) for _ in range(3))
    out = {}
    for lib in (torch, mt):
        xs, gs = lib.tensor(x, requires_grad=True), lib.tensor(g, requires_grad=True)
        gx, = lib.autograd.grad(getattr(lib, fn)(xs, 1), xs, gs, create_graph=True)
        dx, dg = lib.autograd.grad((gx * lib.tensor(gg)).sum(), (xs, gs), create_graph=True)
        third, = lib.autograd.grad((dx * dx).sum() + (dg * dg).sum(), xs)
        names = [gx.grad_fn.name()] + [n.name() for n, _ in gx.grad_fn.next_functions]
        out[lib.__name__] = names, [t.detach().numpy() for t in (gx, dx, dg, third)]
    assert out["microtorch"][0] == out["torch"][0]
    for a, b in zip(out["microtorch"][1], out["torch"][1]):
        assert_close(a, b)
    y = getattr(mt, fn)(mt.tensor(x, requires_grad=True), 1)
    assert len(y.grad_fn.next_functions) == 1  # the dim is no edge (torch's node has one, for the input)
    assert y.grad_fn._saved_result is not None and np.array_equal(y.grad_fn._saved_result.detach().numpy(), y.detach().numpy())


@pytest.mark.parametrize("shapes", [((), ()), ((2, 3), ()), ((2, 3), (3,)), ((2, 3, 4), (2, 5))])
def test_nll_loss_target_shape_errors_as_torch(shapes):
    x, t = shapes
    kinds = []
    for lib in (torch, mt):
        with pytest.raises((ValueError, RuntimeError)) as e:
            lib.nn.functional.nll_loss(lib.zeros(x, dtype=lib.float64), lib.zeros(t, dtype=lib.int64))
        kinds.append(e.type)
    assert kinds[0] is kinds[1]


def test_nll_loss_saved_tensors_as_torch():
    x = np.random.default_rng(0).normal(size=(3, 4))
    for lib in (torch, mt):
        node = lib.nn.functional.nll_loss(lib.tensor(x, requires_grad=True), lib.tensor([0, 2, 3])).grad_fn
        assert len(node.next_functions) == 1  # the target is no edge
        assert node._saved_self.shape == (3, 4) and node._saved_weight is None
        assert node._saved_target.tolist() == [0, 2, 3] and float(node._saved_total_weight) == 3.0


@pytest.mark.parametrize("needs", [(False, True), (True, False), (True, True)])
def test_linear_saves_what_torch_saves(needs):
    """AddmmBackward0 keeps an operand only for the other one's gradient (_saved_mat1 / _saved_mat2 None
    otherwise), as torch; the gradients are torch's."""
    x, w, b = (np.random.default_rng(1).normal(size=s) for s in ((4, 3), (5, 3), (5,)))
    seen = []
    for lib in (torch, mt):
        xs, ws = lib.tensor(x, requires_grad=needs[0]), lib.tensor(w, requires_grad=needs[1])
        out = lib.nn.functional.linear(xs, ws, lib.tensor(b, requires_grad=True))
        node = out.grad_fn
        seen.append((node.name(), node._saved_mat1 is None, node._saved_mat2 is None))
        out.sum().backward()
        seen.append(tuple(t.grad.numpy().round(12).tolist() if t.grad is not None else None for t in (xs, ws)))
    assert seen[0] == seen[2] and seen[1] == seen[3]


def test_functional_conv_pool_match_torch(rng):
    """Options the module tests don't reach: unbatched input, return_indices, fold/unfold, 1-d pooling."""
    import torch.nn.functional as TF
    x = rng.normal(size=(3, 5, 6))
    w = rng.normal(size=(2, 3, 2, 2))
    assert_close(F.conv2d(mt.tensor(x), mt.tensor(w), stride=2), TF.conv2d(torch.tensor(x), torch.tensor(w), stride=2))
    mo, mi = F.max_pool2d(mt.tensor(x[None]), 2, return_indices=True)
    to, ti = TF.max_pool2d(torch.tensor(x[None]), 2, return_indices=True)
    assert_close(mo, to)
    assert np.array_equal(mi.numpy(), ti.numpy()) and mi.dtype == mt.int64
    x1 = rng.normal(size=(2, 3, 9))
    assert_close(F.max_pool1d(mt.tensor(x1), 3, 2, 1), TF.max_pool1d(torch.tensor(x1), 3, 2, 1))
    assert_close(F.avg_pool1d(mt.tensor(x1), 3, 2, 1), TF.avg_pool1d(torch.tensor(x1), 3, 2, 1))
    xu = rng.normal(size=(2, 3, 5, 6))
    cols = F.unfold(mt.tensor(xu), (2, 3), padding=1, stride=2)
    assert_close(cols, TF.unfold(torch.tensor(xu), (2, 3), padding=1, stride=2))
    c = rng.normal(size=tuple(cols.shape))
    assert_close(F.fold(mt.tensor(c), (5, 6), (2, 3), padding=1, stride=2),
                 TF.fold(torch.tensor(c), (5, 6), (2, 3), padding=1, stride=2))
    assert gradcheck(lambda x: F.unfold(x, 2, stride=1), (mt.tensor(xu[:1, :1], requires_grad=True),))
    with pytest.raises(RuntimeError, match="expected input"):
        F.conv2d(mt.randn(1, 4, 5, 5), mt.randn(2, 3, 3, 3))
    with pytest.raises(RuntimeError, match="Kernel size can't be greater"):
        F.conv2d(mt.randn(1, 3, 2, 2), mt.randn(2, 3, 3, 3))
    with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):  # (torch's words)
        F.conv2d(mt.randn(1, 3, 4, 4), mt.randn(2, 3, 3, 3, dtype=mt.float64))


def test_conv_is_twice_differentiable(rng):
    x = mt.tensor(rng.normal(size=(1, 2, 4, 4)), requires_grad=True)
    w = mt.tensor(rng.normal(size=(2, 1, 2, 2)), requires_grad=True)
    b = mt.tensor(rng.normal(size=2), requires_grad=True)
    f = lambda x, w, b: F.conv2d(x, w, b, padding=1, stride=2, groups=2)  # noqa: E731
    assert gradcheck(f, (x, w, b))
    assert gradgradcheck(f, (x, w, b))


# ---- the seed examples (blog post 002) ---------------------------------------------------------
def test_seed_linear_double_gradcheck():
    inputs = mt.randn((10, 5), requires_grad=True, dtype=mt.double)
    linear = nn.Linear(5, 3)
    linear = linear.double()
    assert gradcheck(lambda x: linear(x), inputs) is True


def test_seed_forgetting_double_is_an_error_as_in_torch():
    with pytest.raises(RuntimeError, match="mat1 and mat2 must have the same dtype, but got Double and Float"):
        nn.Linear(5, 3)(mt.randn((10, 5), requires_grad=True, dtype=mt.double))
    with pytest.raises(RuntimeError, match=r"Input type \(double\) and bias type \(float\) should be the same"):
        nn.Conv1d(1, 1, 2)(mt.randn(1, 1, 4, dtype=mt.double))


def test_seed_net_sequential_gradcheck():
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
    assert [k for k, _ in net.named_parameters()] == ["net.0.weight", "net.0.bias", "net.2.weight", "net.2.bias",
                                                      "net.4.weight", "net.4.bias"]


# ---- Module API --------------------------------------------------------------------------------
def _zoo(lib):
    n = lib.nn
    return n.Sequential(
        n.Linear(2, 3), n.Conv2d(1, 2, 3, padding=1), n.BatchNorm1d(3), n.MaxPool2d(2), n.AvgPool2d(2),
        n.Embedding(3, 4, padding_idx=0), n.LayerNorm(4), n.Dropout(), n.Flatten(), n.Identity(), n.LeakyReLU(),
        n.GELU(), n.Softmax(dim=1), n.LogSoftmax(1), n.ELU(), n.Softplus(), n.MSELoss(), n.CrossEntropyLoss(),
        n.ModuleList([n.ReLU(), n.Linear(2, 2), n.Linear(2, 2), n.Linear(2, 2)]), n.ModuleDict({"a": n.Tanh()}),
        n.Conv1d(2, 3, 3, stride=2, bias=False), n.BCEWithLogitsLoss(), n.Sigmoid(), n.Linear(2, 2, bias=False),
        n.BatchNorm2d(2, affine=False, track_running_stats=False), n.Conv2d(2, 4, (2, 3), dilation=2, groups=2))


def test_repr_and_names_match_torch():
    assert repr(_zoo(mt)) == repr(_zoo(torch))
    tz, mz = _zoo(torch), _zoo(mt)
    assert list(mz.state_dict()) == list(tz.state_dict())
    assert [k for k, _ in mz.named_parameters()] == [k for k, _ in tz.named_parameters()]
    assert [k for k, _ in mz.named_buffers()] == [k for k, _ in tz.named_buffers()]
    assert [k for k, _ in mz.named_modules()] == [k for k, _ in tz.named_modules()]
    assert [type(m).__name__ for m in mz.children()] == [type(m).__name__ for m in tz.children()]
    p = nn.Parameter(mt.ones(2, dtype=mt.float64))
    assert repr(p) == repr(torch.nn.Parameter(torch.ones(2, dtype=torch.float64))).replace("torch.", "microtorch.")
    assert str(p).startswith("Parameter containing:\ntensor(")


def test_parameter_is_a_leaf_tensor():
    p = nn.Parameter(mt.randn(3))
    assert isinstance(p, mt.Tensor) and isinstance(p, nn.Parameter)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    assert not nn.Parameter(mt.randn(3), requires_grad=False).requires_grad
    y = (p * 2).sum()
    y.backward()
    assert type(p * 2) is mt.Tensor
    np.testing.assert_allclose(p.grad.numpy(), 2)
    with pytest.raises(RuntimeError, match="floating point"):
        nn.Parameter(mt.tensor([1, 2]))


def test_default_initialisation_bounds():
    mt.manual_seed(0)
    lin = nn.Linear(50, 40)
    bound = 1 / math.sqrt(50)
    for t in (lin.weight, lin.bias):
        a = t.detach().numpy()
        assert a.min() >= -bound and a.max() <= bound and a.max() > 0.8 * bound and a.min() < -0.8 * bound
    conv = nn.Conv2d(3, 8, 5)
    cb = 1 / math.sqrt(3 * 25)
    assert np.abs(conv.weight.detach().numpy()).max() <= cb and np.abs(conv.bias.detach().numpy()).max() <= cb
    emb = nn.Embedding(1000, 20)
    assert abs(emb.weight.detach().numpy().std() - 1) < 0.05
    ln, bn = nn.LayerNorm(3), nn.BatchNorm1d(3)
    assert np.all(ln.weight.numpy(force=True) == 1) and np.all(bn.bias.numpy(force=True) == 0)
    assert lin.weight.dtype == mt.float32


def test_init_functions():
    mt.manual_seed(0)
    w = mt.empty(300, 200)
    for gain in ("linear", "relu", "tanh", "sigmoid", "selu"):
        assert nn.init.calculate_gain(gain) == torch.nn.init.calculate_gain(gain)
    assert nn.init.calculate_gain("leaky_relu", 0.2) == torch.nn.init.calculate_gain("leaky_relu", 0.2)
    a = nn.init.xavier_uniform_(w, gain=2.0).numpy()
    bound = 2.0 * math.sqrt(6 / 500)
    assert np.abs(a).max() <= bound and np.abs(a).max() > 0.95 * bound
    assert abs(nn.init.xavier_normal_(w).numpy().std() - math.sqrt(2 / 500)) < 0.002
    assert abs(nn.init.kaiming_normal_(w, nonlinearity="relu").numpy().std() - math.sqrt(2 / 200)) < 0.002
    a = nn.init.kaiming_uniform_(w, mode="fan_out", nonlinearity="relu").numpy()
    assert np.abs(a).max() <= math.sqrt(6 / 300)
    assert abs(nn.init.normal_(w, 3, 0.5).numpy().mean() - 3) < 0.01
    a = nn.init.uniform_(w, -1, 2).numpy()
    assert a.min() >= -1 and a.max() <= 2
    assert np.all(nn.init.constant_(w, 0.5).numpy() == 0.5)
    assert np.all(nn.init.zeros_(w).numpy() == 0) and np.all(nn.init.ones_(w).numpy() == 1)
    p = nn.Parameter(mt.zeros(3, 3))
    nn.init.normal_(p)  # in place on a parameter that requires grad: no autograd error, still a leaf
    assert p.is_leaf and p.requires_grad


def test_train_eval_zero_grad_requires_grad_apply():
    net = nn.Sequential(nn.Linear(2, 2), nn.Dropout(), nn.Sequential(nn.BatchNorm1d(2)))
    assert all(m.training for m in net.modules())
    net.eval()
    assert not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    net(mt.randn(4, 2)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    assert all(np.all(p.grad.numpy() == 0) for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())
    seen = []
    assert net.apply(lambda m: seen.append(type(m).__name__)) is net
    assert seen == ["Linear", "Dropout", "BatchNorm1d", "Sequential", "Sequential"]


def test_to_double_keeps_parameter_objects():
    net = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    params = list(net.parameters())
    opt = mt.optim.SGD(net.parameters(), lr=0.1)
    net(mt.randn(4, 2)).sum().backward()
    assert net.double() is net
    assert [id(p) for p in net.parameters()] == [id(p) for p in params]
    assert all(p.dtype == mt.float64 and isinstance(p, nn.Parameter) for p in net.parameters())
    assert all(p.grad.dtype == mt.float64 for p in net.parameters())
    assert net[1].running_mean.dtype == mt.float64 and net[1].num_batches_tracked.dtype == mt.int64
    opt.step()  # the optimizer still holds the same (now float64) parameters
    net.to(mt.float32)
    assert all(p.dtype == mt.float32 for p in net.parameters())
    assert net.float() is net and net.to("cpu") is net
    with pytest.raises(AssertionError, match="not compiled with CUDA"):  # (torch's error without a GPU)
        net.cuda()


def test_setattr_registration_and_errors():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(mt.ones(2))
            self.sub = nn.Linear(2, 2)
            self.register_buffer("buf", mt.zeros(2))
            self.register_buffer("tmp", mt.zeros(1), persistent=False)
            self.plain = mt.ones(1)

    m = M()
    assert [k for k, _ in m.named_parameters()] == ["w", "sub.weight", "sub.bias"]
    assert list(m.state_dict()) == ["w", "buf", "sub.weight", "sub.bias"]
    assert [k for k, _ in m.named_buffers()] == ["buf", "tmp"]
    with pytest.raises(TypeError, match="cannot assign"):
        m.w = mt.ones(2)
    m.w = None
    assert [k for k, _ in m.named_parameters()] == ["sub.weight", "sub.bias"]
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        m.nope
    del m.sub
    assert not hasattr(m, "sub")

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(mt.ones(1))

    with pytest.raises(AttributeError, match="super\\(\\).__init__\\(\\)"):
        Early()
    with pytest.raises(NotImplementedError, match="forward"):
        nn.Module()(1)


def test_containers():
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert len(seq) == 3 and isinstance(seq[0], nn.Linear) and isinstance(seq[-1], nn.Linear)
    assert isinstance(seq[1:], nn.Sequential) and len(seq[1:]) == 2
    assert [k for k, _ in seq[1:].named_parameters()] == ["2.weight", "2.bias"]
    seq.append(nn.Sigmoid())
    assert list(seq._modules) == ["0", "1", "2", "3"]
    del seq[1]
    assert list(seq._modules) == ["0", "1", "2"]
    from collections import OrderedDict
    named = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 2)), ("act", nn.Tanh())]))
    assert [k for k, _ in named.named_parameters()] == ["fc.weight", "fc.bias"] and named.act is named[1]
    ml = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    ml.append(nn.ReLU())
    assert len(ml) == 4 and len(list(ml.parameters())) == 6 and isinstance(ml[-1], nn.ReLU)
    md = nn.ModuleDict({"a": nn.Linear(1, 1)})
    md["b"] = nn.Tanh()
    assert list(md.keys()) == ["a", "b"] and "a" in md and len(md) == 2
    with pytest.raises(IndexError):
        seq[10]


def test_state_dict_round_trip_and_strictness(rng):
    torch.manual_seed(0)
    a, b = _net(mt), _net(mt)
    b.load_state_dict(a.state_dict())
    x = mt.tensor(rng.normal(size=(3, 4)), dtype=mt.float32)
    assert_close(a(x), b(x), tol=0)
    sd = a.state_dict()
    assert all(not v.requires_grad for v in sd.values())
    assert np.shares_memory(sd["0.weight"].numpy(), a[0].weight.detach().numpy())  # torch: views, not copies
    assert a.state_dict(keep_vars=True)["0.weight"] is a[0].weight

    partial = {k: v for k, v in sd.items() if k != "2.bias"}
    partial["extra"] = mt.zeros(1)
    result = b.load_state_dict(partial, strict=False)
    assert result.missing_keys == ["2.bias"] and result.unexpected_keys == ["extra"]
    assert repr(b.load_state_dict(sd)) == "<All keys matched successfully>"


def _net(lib):
    n = lib.nn
    return n.Sequential(n.Linear(4, 5), n.ReLU(), n.Linear(5, 2), n.BatchNorm1d(2))


def _damaged_state_dict(lib, damage):
    """every value differs from a fresh net's; then one kind of damage"""
    lib.manual_seed(1)
    sd = {k: v + 1 for k, v in _net(lib).state_dict().items()}
    if damage == "missing":
        del sd["2.bias"]
    elif damage == "unexpected":
        sd["3.extra"] = lib.zeros(1)
    elif damage == "shape":
        sd["2.weight"] = lib.zeros(3, 5)
    else:
        sd["0.bias"] = [0.0] * 5
    return sd


@pytest.mark.parametrize("damage", ["missing", "unexpected", "shape", "not a tensor"])
def test_bad_state_dict_raises_after_loading_what_fits_as_torch(damage):
    """torch copies every entry that fits, then raises all the errors together."""
    got = []
    for lib in (torch, mt):
        lib.manual_seed(0)
        net = _net(lib)
        with pytest.raises(RuntimeError) as info:
            net.load_state_dict(_damaged_state_dict(lib, damage))
        got.append((str(info.value).replace("microtorch", "torch"),
                    {k: v.numpy().tolist() for k, v in net.state_dict().items()}))
    assert "Error(s) in loading state_dict for Sequential" in got[1][0]
    assert got[1] == got[0]


# ---- hooks ---------------------------------------------------------------------------------------
def test_forward_hooks_and_handles():
    lin = nn.Linear(2, 2)
    calls = []
    h1 = lin.register_forward_pre_hook(lambda m, args: calls.append(("pre", args[0].shape)) or (args[0] * 0,))
    h2 = lin.register_forward_hook(lambda m, args, out: calls.append(("fwd", out.shape)) or out + 1)
    out = lin(mt.ones(3, 2))
    np.testing.assert_allclose(out.detach().numpy(), np.broadcast_to(lin.bias.detach().numpy() + 1, (3, 2)), rtol=1e-6)
    assert calls == [("pre", mt.Size([3, 2])), ("fwd", mt.Size([3, 2]))]
    h1.remove()
    h2.remove()
    h2.remove()  # twice is harmless
    calls.clear()
    lin(mt.ones(3, 2))
    assert calls == []
    kw = lin.register_forward_hook(lambda m, args, kwargs, out: calls.append(sorted(kwargs)), with_kwargs=True)
    lin(input=mt.ones(1, 2))
    assert calls == [["input"]]
    kw.remove()
    order = []
    lin.register_forward_hook(lambda *a: order.append(1))
    lin.register_forward_hook(lambda *a: order.append(0), prepend=True)
    lin(mt.ones(1, 2))
    assert order == [0, 1]


def test_full_backward_hook_matches_torch(rng):
    torch.manual_seed(0)
    x = rng.normal(size=(3, 4))
    got = {}
    for lib in (torch, mt):
        lin = lib.nn.Linear(4, 2).double()
        if lib is mt:
            copy_weights(tlin, lin)
        else:
            tlin = lin
        seen = got.setdefault(lib.__name__, [])
        h = lin.register_full_backward_hook(
            lambda m, gi, go, seen=seen: seen.append((m, [g.detach().numpy().copy() if g is not None else None
                                                          for g in gi], [g.detach().numpy().copy() for g in go]))
            or tuple(g * 2 for g in gi))
        pre = lin.register_full_backward_pre_hook(lambda m, go, seen=seen: seen.append("pre"))
        xi = lib.tensor(x, requires_grad=True)
        (lin(xi) ** 2).sum().backward()
        seen.append(xi.grad.numpy().copy())
        h.remove()
        pre.remove()
        xi.grad = None
        (lin(xi) ** 2).sum().backward()
        seen.append(xi.grad.numpy().copy())
    t, m = got["torch"], got["microtorch"]
    assert t[0] == "pre" and m[0] == "pre"
    for a, b in zip(t[1][1] + t[1][2], m[1][1] + m[1][2]):
        np.testing.assert_allclose(b, a, atol=TOL)
    np.testing.assert_allclose(m[2], t[2], atol=TOL)  # the hook doubled grad_input
    np.testing.assert_allclose(m[3], t[3], atol=TOL)  # removed: plain gradient again
    np.testing.assert_allclose(m[2], 2 * m[3], atol=TOL)


def test_full_backward_hook_without_input_grad():
    lin = nn.Linear(3, 1)
    seen = []
    lin.register_full_backward_hook(lambda m, gi, go: seen.append((gi, go[0].shape)))
    lin(mt.ones(2, 3)).sum().backward()
    assert seen == [((None,), mt.Size([2, 1]))]
    assert lin.weight.grad is not None


def test_module_hooks_emit_events_only_when_watched():
    lin = nn.Linear(2, 1)
    pre = lambda m, a: None  # noqa: E731
    fwd = lambda m, a, o: o * 2  # noqa: E731
    bwd = lambda m, gi, go: None  # noqa: E731
    lin.register_forward_pre_hook(pre)
    lin.register_forward_hook(fwd)
    lin.register_full_backward_hook(bwd)
    events = []
    x = mt.ones(1, 2, requires_grad=True)
    lin(x).sum().backward()  # nobody listening: nothing recorded anywhere
    with graph.add_listener(events.append):
        lin(x).sum().backward()
    fired = [e for e in events if isinstance(e, graph.HookFired)]
    kinds = [(e.kind, e.hook) for e in fired if e.kind.startswith("module")]
    assert kinds == [("module_forward_pre", pre), ("module_forward", fwd), ("module_backward", bwd)]
    assert all(e.target is lin for e in fired if e.kind.startswith("module"))
    f = next(e for e in fired if e.kind == "module_forward")
    np.testing.assert_allclose(f.after.detach().numpy(), 2 * f.before.detach().numpy())


# ---- utils -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf")])
def test_clip_grad_norm_matches_torch(norm_type, rng):
    grads = [rng.normal(size=(3, 4)), rng.normal(size=5)]
    out = []
    for lib, mod in ((torch, torch.nn.utils), (mt, nn.utils)):
        ps = [lib.tensor(g * 0, requires_grad=True) for g in grads]
        for p, g in zip(ps, grads):
            p.grad = lib.tensor(g)
        total = mod.clip_grad_norm_(ps, 1.5, norm_type=norm_type)
        out.append((float(total), [p.grad.numpy().copy() for p in ps]))
    assert abs(out[0][0] - out[1][0]) < TOL
    for a, b in zip(out[0][1], out[1][1]):
        np.testing.assert_allclose(b, a, atol=TOL)
    p = mt.zeros(2, requires_grad=True)
    p.grad = mt.tensor([float("nan"), 1.0])
    with pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)


def test_clip_grad_value_and_vector_conversion(rng):
    g = rng.normal(size=(4, 4)) * 3
    p = mt.zeros(4, 4, requires_grad=True, dtype=mt.float64)
    p.grad = mt.tensor(g)
    nn.utils.clip_grad_value_([p], 1.0)
    np.testing.assert_allclose(p.grad.numpy(), np.clip(g, -1, 1))
    net = nn.Linear(3, 2)
    v = nn.utils.parameters_to_vector(net.parameters())
    assert v.shape == (8,)
    nn.utils.vector_to_parameters(v * 0 + 1, net.parameters())
    assert np.all(net.weight.detach().numpy() == 1)


# ---- a model that trains ------------------------------------------------------------------------
def two_moons(n, noise, rng):
    a = np.linspace(0, np.pi, n // 2)
    b = np.linspace(0, np.pi, n - n // 2)
    x = np.concatenate([np.stack([np.cos(a), np.sin(a)], 1), np.stack([1 - np.cos(b), 0.5 - np.sin(b)], 1)])
    y = np.concatenate([np.zeros(n // 2), np.ones(n - n // 2)])
    return x + rng.normal(scale=noise, size=x.shape), y


def test_mlp_learns_two_moons(rng):
    mt.manual_seed(0)
    x, y = two_moons(100, 0.1, rng)
    X, Y = mt.tensor(x, dtype=mt.float32), mt.tensor(y[:, None], dtype=mt.float32)
    model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 1))
    opt = mt.optim.Adam(model.parameters(), lr=0.05)
    sched = mt.optim.lr_scheduler.StepLR(opt, step_size=100, gamma=0.5)
    loss_fn = nn.BCEWithLogitsLoss()
    for _ in range(200):
        opt.zero_grad()
        loss = loss_fn(model(X), Y)
        loss.backward()
        opt.step()
        sched.step()
    with mt.no_grad():
        acc = ((model(X) > 0).float() == Y).float().mean().item()
    assert loss.item() < 0.1 and acc > 0.97
