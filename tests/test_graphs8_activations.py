"""The graph an activation's gradient records under create_graph=True, beside torch 2.13: torch's backward ops of
their own (SoftplusBackwardBackward0, EluBackwardBackward0, HardtanhBackwardBackward0, ...) with their edges, the
terms of silu's and mish's formulas, hardsigmoid's NotImplemented node; values of the first, second and third
derivatives; the backward ops' saved values; forward over reverse; vmap over a hessian."""
import warnings

import numpy as np
import pytest
import torch

import microtorch as mt

X = [0.3, -0.2, 0.45, 2.5, -3.5, 3.0, -1.0]
ACTS = {  # name: (call, the values are computed with exp/log, whose numpy and torch kernels round apart by an ulp)
    "softplus": (lambda F, x: F.softplus(x), True), "softplus_beta": (lambda F, x: F.softplus(x, 2.0, 0.5), True),
    "elu": (lambda F, x: F.elu(x, 0.7), True), "selu": (lambda F, x: F.selu(x), True),
    "celu": (lambda F, x: F.celu(x, 0.5), True), "silu": (lambda F, x: F.silu(x), True),
    "mish": (lambda F, x: F.mish(x), True), "logsigmoid": (lambda F, x: F.logsigmoid(x), True),
    "hardswish": (lambda F, x: F.hardswish(x), False), "hardtanh": (lambda F, x: F.hardtanh(x, -0.25, 0.4), False),
    "relu6": (lambda F, x: F.relu6(x * 3), False), "hardshrink": (lambda F, x: F.hardshrink(x, 0.25), False),
    "softshrink": (lambda F, x: F.softshrink(x, 0.25), False),
    "threshold": (lambda F, x: F.threshold(x, 0.1, 0.5), False),
    "relu": (lambda F, x: F.relu(x), False), "leaky_relu": (lambda F, x: F.leaky_relu(x, 0.25), False),
}
# where the gradient's gradient records another tree than torch's (may only shrink): silu's and mish's add the
# two gradients that reach sigmoid(x) in the other order (the engine's order, not the formula's)
SECOND_ORDER_TREE_DIFFERS = {"silu", "mish"}


def _tree(fn):
    return None if fn is None else [fn.name()] + [_tree(f) for f, _ in fn.next_functions]


def _record(lib, name, dtype, grad_requires_grad):
    x = lib.tensor(X, dtype=getattr(lib, dtype), requires_grad=True)
    v = lib.tensor(np.linspace(-1.5, 2.0, len(X)), dtype=getattr(lib, dtype), requires_grad=grad_requires_grad)
    g, = lib.autograd.grad(ACTS[name][0](lib.nn.functional, x), x, v, create_graph=True)
    trees, values = [_tree(g.grad_fn)], [g]
    w = lib.tensor(np.linspace(0.5, -1.0, len(X)), dtype=getattr(lib, dtype))
    gg = lib.autograd.grad(g, (x, v) if grad_requires_grad else (x,), w, create_graph=True)
    trees += [_tree(t.grad_fn) for t in gg]
    values += gg
    if gg[0].grad_fn is not None:
        values += lib.autograd.grad(gg[0], x, w, allow_unused=True, materialize_grads=True)
    return trees, [t.detach().numpy(force=True) for t in values]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("grad_requires_grad", [False, True])
@pytest.mark.parametrize("name", list(ACTS))
def test_gradient_graph_and_values_as_torch(name, grad_requires_grad, dtype):
    trees, values = _record(mt, name, dtype, grad_requires_grad)
    trees_t, values_t = _record(torch, name, dtype, grad_requires_grad)
    skipped = {1} if name in SECOND_ORDER_TREE_DIFFERS else set()  # (1: the tree of the gradient's gradient in x)
    kept = [i for i in range(len(trees_t)) if i not in skipped]
    assert [trees[i] for i in kept] == [trees_t[i] for i in kept]
    assert len(values) == len(values_t)
    for a, b in zip(values, values_t):
        if ACTS[name][1]:  # (a few roundings apart, more where a higher derivative nears 0 by cancellation)
            tol = dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else dict(rtol=1e-13, atol=1e-16)
            np.testing.assert_allclose(a, b, **tol)
        else:
            assert a.tobytes() == b.tobytes(), (a, b)


@pytest.mark.parametrize("name", ["softplus_beta", "selu", "celu", "hardswish", "logsigmoid"])
def test_the_backward_nodes_save_what_torch_saves(name):
    seen = []
    for lib in (torch, mt):
        x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
        g, = lib.autograd.grad(ACTS[name][0](lib.nn.functional, x).sum(), x, create_graph=True)
        node = g.grad_fn
        names = sorted(a for a in dir(node) if a.startswith("_saved_")
                       and a not in ("_saved_buffer", "_saved_names", "_saved_values"))  # (ours: the declarations)
        seen.append((node.name(), names, [_plain(getattr(node, a)) for a in names]))
    assert seen[0] == seen[1]


def _plain(v):
    return v.detach().numpy().tobytes() if hasattr(v, "detach") else float(v)


def test_hardsigmoid_gradient_is_torch_not_implemented_node():
    for lib in (torch, mt):
        x = lib.tensor([0.3, -0.2, 4.0], dtype=lib.float64, requires_grad=True)
        g, = lib.autograd.grad(lib.nn.functional.hardsigmoid(x).sum(), x, create_graph=True)
        assert g.grad_fn.name() == "torch::autograd::NotImplemented" and len(g.grad_fn.next_functions) == 1
        with pytest.raises(RuntimeError, match="derivative for aten::hardsigmoid_backward is not implemented"):
            lib.autograd.grad(g.sum(), x)
        v = lib.ones(3, dtype=lib.float64, requires_grad=True)
        g, = lib.autograd.grad(lib.nn.functional.hardsigmoid(x), x, v, create_graph=True)
        assert len(g.grad_fn.next_functions) == 2
        with pytest.raises(RuntimeError, match="derivative for aten::hardsigmoid_backward is not implemented"):
            lib.autograd.grad(g.sum(), v)


def test_hardsigmoid_forward_over_reverse_raises_as_torch():
    for lib in (torch, mt):
        x = lib.tensor([0.3, -0.2, 4.0], dtype=lib.float64)
        f = lib.func.grad(lambda y: lib.nn.functional.hardsigmoid(y).sum())
        with pytest.raises(NotImplementedError, match="forward AD with aten::hardsigmoid_backward"):
            lib.func.jvp(f, (x,), (lib.ones(3, dtype=lib.float64),))


@pytest.mark.parametrize("name", list(ACTS))
def test_vmap_over_a_hessian_as_torch_without_a_warning(name):
    x = np.array([X[:4], X[3:]])
    got = []
    for lib in (torch, mt):
        f = ACTS[name][0]
        with warnings.catch_warnings():
            warnings.simplefilter("error" if lib is mt else "ignore")
            got.append(lib.func.vmap(lib.func.hessian(lambda z: f(lib.nn.functional, z).sum()))(lib.tensor(x)).numpy())
    np.testing.assert_allclose(got[1], got[0], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name", list(ACTS))
def test_first_order_without_create_graph_as_torch(name):
    got = []
    for lib in (torch, mt):
        x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
        ACTS[name][0](lib.nn.functional, x).backward(lib.tensor(np.linspace(-1.5, 2.0, len(X))))
        assert x.grad.grad_fn is None
        got.append(x.grad.numpy())
    if ACTS[name][1]:
        np.testing.assert_array_max_ulp(got[1], got[0], maxulp=4)
    else:
        assert got[1].tobytes() == got[0].tobytes()


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_glu_backward_node_to_the_third_order_as_torch(dim, dtype):
    rng = np.random.default_rng(1)
    x0 = rng.standard_normal((4, 6))
    shape = list(x0.shape)
    shape[dim] //= 2
    v0, w0 = rng.standard_normal(shape), rng.standard_normal(x0.shape)
    seen = []
    for lib in (torch, mt):
        x = lib.tensor(x0, dtype=getattr(lib, dtype), requires_grad=True)
        v = lib.tensor(v0, dtype=getattr(lib, dtype), requires_grad=True)
        w = lib.tensor(w0, dtype=getattr(lib, dtype))
        g, = lib.autograd.grad(lib.nn.functional.glu(x, dim), x, v, create_graph=True)
        gx, gv = lib.autograd.grad(g, (x, v), w, create_graph=True)
        third = lib.autograd.grad(gx, (x, v), w)
        seen.append(([_tree(t.grad_fn) for t in (g, gx, gv)], [t.detach().numpy() for t in (g, gx, gv) + third]))
    assert seen[0][0] == seen[1][0]
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else dict(rtol=1e-13, atol=1e-15)
    for a, b in zip(seen[1][1], seen[0][1]):  # (torch's vectorized exp rounds apart from numpy's: a few roundings)
        np.testing.assert_allclose(a, b, **tol)


def test_glu_vmap_over_a_hessian_and_forward_over_reverse_as_torch():
    x = np.random.default_rng(2).standard_normal((3, 6))
    got = []
    for lib in (torch, mt):
        f = lambda z: lib.nn.functional.glu(z, 0).sin().sum()  # noqa: E731
        with warnings.catch_warnings():
            warnings.simplefilter("error" if lib is mt else "ignore")
            got.append(lib.func.vmap(lib.func.hessian(f))(lib.tensor(x)).numpy())
            got.append(lib.func.jacfwd(lib.func.jacrev(f))(lib.tensor(x[0])).numpy())
    np.testing.assert_allclose(got[2], got[0], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(got[3], got[1], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("shape, channels", [((5,), 1), ((2, 3), 3), ((2, 3, 2, 2), 3), ((2, 3, 2, 2), 1)])
def test_prelu_backward_node_to_the_third_order_as_torch(shape, channels):
    rng = np.random.default_rng(3)
    x0 = rng.standard_normal(shape)
    x0.flat[0] = 0.0  # (the kernel's x > 0 and the double backward's x >= 0 differ there, as in torch)
    w0, v0, u0 = rng.standard_normal(channels), rng.standard_normal(shape), rng.standard_normal(shape)
    seen = []
    for lib in (torch, mt):
        x = lib.tensor(x0, requires_grad=True)
        w = lib.tensor(w0, requires_grad=True)
        v = lib.tensor(v0, requires_grad=True)
        gx, gw = lib.autograd.grad(lib.nn.functional.prelu(x, w), (x, w), v, create_graph=True)
        second = lib.autograd.grad((gx * lib.tensor(u0)).sum() + gw.sum(), (x, w, v), create_graph=True)
        third = lib.autograd.grad(sum((t * t).sum() for t in second), (x, w, v), allow_unused=True,
                                  materialize_grads=True)
        seen.append(([_tree(t.grad_fn) for t in (gx, gw)],
                     [t.detach().numpy() for t in (gx, gw) + second + third]))
    assert seen[1][0] == seen[0][0]
    for ours, theirs in zip(seen[1][1], seen[0][1]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-14, atol=1e-15)


def test_rrelu_backward_node_as_torch():
    seen = []
    for lib in (torch, mt):
        x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
        v = lib.tensor(np.linspace(-1.5, 2.0, len(X)), dtype=lib.float64, requires_grad=True)
        g, = lib.autograd.grad(lib.nn.functional.rrelu(x, 0.1, 0.3), x, v, create_graph=True)  # (eval: no noise)
        gx, gv = lib.autograd.grad(g.sum(), (x, v), create_graph=True, allow_unused=True, materialize_grads=True)
        seen.append((_tree(g.grad_fn), _tree(gv.grad_fn), [t.detach().numpy().tobytes() for t in (g, gx, gv)]))
    assert seen[1] == seen[0]


def test_prelu_vmap_over_a_hessian_without_a_warning():
    """(torch's own vmap of prelu's hessian fails in forward AD: compared with torch's per-example hessians)"""
    x = np.random.default_rng(0).standard_normal((3, 4, 2))
    w = np.array([0.25, -0.5])
    want = np.stack([torch.func.hessian(lambda z: (torch.nn.functional.prelu(z, torch.tensor(w)) ** 3).sum())(
        torch.tensor(e)).numpy() for e in x])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = mt.func.vmap(mt.func.hessian(lambda z: (mt.nn.functional.prelu(z, mt.tensor(w)) ** 3).sum()))(
            mt.tensor(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12)


INPLACE = {"elu": lambda F, x: F.elu(x, 0.5, inplace=True), "elu_": lambda F, x: F.elu_(x, 0.7),
           "selu": lambda F, x: F.selu(x, inplace=True), "celu": lambda F, x: F.celu(x, 0.3, inplace=True),
           "leaky_relu": lambda F, x: F.leaky_relu(x, 0.2, inplace=True), "leaky_relu_": lambda F, x: F.leaky_relu_(x),
           "rrelu": lambda F, x: F.rrelu(x, 0.1, 0.3, inplace=True)}  # (rrelu out of training: no noise)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace_elu_family_and_leaky_relu_keep_the_result_as_torch(name, dtype):
    """torch's in-place forms keep the result and differentiate from it (EluBackward1, CeluBackward1,
    LeakyReluBackward1, RreluWithNoiseBackward1; elu's gradient g input_scale (y + alpha scale)); F.elu(x,
    inplace=True) used to write the result over the input that its node had saved, so backward raised a version
    error"""
    seen = []
    for lib in (torch, mt):
        x = lib.tensor([0.3, -0.2, 0.45, -1.5, 0.0], dtype=getattr(lib, dtype), requires_grad=True)
        v = lib.tensor([0.5, 1.5, -2.0, 1.0, 3.0], dtype=getattr(lib, dtype), requires_grad=True)
        y = INPLACE[name](lib.nn.functional, x * 1)
        g, = lib.autograd.grad(y, x, v, create_graph=True)
        gg = lib.autograd.grad(g.sum(), (x, v))
        node = y.grad_fn
        saved = sorted(a for a in dir(node) if a.startswith("_saved_") and a not in ("_saved_names", "_saved_values"))
        saved = saved if name != "rrelu" else None  # (rrelu's node shows none of torch's noise, lower, upper...)
        seen.append((node.name(), saved, _tree(g.grad_fn), [t.detach().numpy().tobytes() for t in (y, g) + gg]))
    assert seen[1] == seen[0]


def test_inplace_leaky_relu_with_a_negative_slope_refuses_backward_as_torch():
    for lib in (torch, mt):
        x = lib.tensor([0.3, -0.2], requires_grad=True)
        y = lib.nn.functional.leaky_relu_(x * 1, -0.2)
        with pytest.raises(RuntimeError, match="In-place leakyReLu backward calculation is triggered with a negative"):
            y.sum().backward()


@pytest.mark.parametrize("name", ["relu", "leaky_relu", "hardtanh", "hardshrink", "softshrink", "threshold"])
def test_the_selection_nodes_save_self_as_torch(name):
    seen = []
    for lib in (torch, mt):
        x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
        g, = lib.autograd.grad(ACTS[name][0](lib.nn.functional, x).sum(), x, create_graph=True)
        seen.append((g.grad_fn.name(), g.grad_fn._saved_self.detach().numpy().tobytes()))
    assert seen[1] == seen[0]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", ["selu", "celu", "elu"])
def test_elu_family_values_to_the_bit_as_torch(name, dtype):
    """torch's kernel: expm1(x input_scale) times alpha scale in x's dtype (-0.0 kept). (float32: torch's expf and
    numpy's round an ulp apart at some points, and its vectorized expm1, from 8 elements on, at others)"""
    x0 = np.array([-0.2, -1.5, -0.0, 0.0, 0.7, -3.1])
    seen = []
    for lib in (torch, mt):
        x = lib.tensor(x0, dtype=getattr(lib, dtype))
        seen.append(ACTS[name][0](lib.nn.functional, x).numpy())
    assert np.signbit(seen[1]).tolist() == np.signbit(seen[0]).tolist()
    if dtype == "float64":
        assert seen[1].tobytes() == seen[0].tobytes()
    else:
        np.testing.assert_array_max_ulp(seen[1], seen[0], maxulp=1)


def test_rrelu_at_zero_takes_the_negative_slope_as_torch():
    seen = []
    for lib in (torch, mt):
        x = lib.tensor([0.0, -0.0, 1.0, -1.0], dtype=lib.float64, requires_grad=True)
        y = lib.nn.functional.rrelu(x, 0.1, 0.3)
        g, = lib.autograd.grad(y.sum(), x)
        seen.append((y.detach().numpy().tobytes(), g.numpy().tobytes()))
    assert seen[1] == seen[0]
