"""microtorch.func against torch.func: the seed's examples, grad / vjp / jvp / jacrev / jacfwd /
hessian / linearize / functional_call, nesting, errors, and autograd.grad(is_grads_batched)."""
import numpy as np
import pytest
import torch
import torch.func as tfunc

import microtorch as mt
import microtorch.func as mfunc


def T(a):
    return torch.from_numpy(np.array(a))


def M(a):
    return mt.tensor(np.array(a))


def close(ours, theirs, atol=1e-8):
    if isinstance(theirs, (tuple, list)):
        assert isinstance(ours, (tuple, list)) and len(ours) == len(theirs), (ours, theirs)
        for o, t in zip(ours, theirs):
            close(o, t, atol)
    elif isinstance(theirs, dict):
        assert set(ours) == set(theirs)
        for k in theirs:
            close(ours[k], theirs[k], atol)
    else:
        assert tuple(ours.shape) == tuple(theirs.shape), (ours.shape, theirs.shape)
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-6, atol=atol)


# ---- the seed (torch.func.grad's page), verbatim but for the import -------------------------------------
def test_seed_examples():
    import microtorch as torch  # noqa: F811  (the only change)
    from microtorch.func import grad, vmap

    x = torch.randn([])
    cos_x = grad(lambda x: torch.sin(x))(x)
    assert torch.allclose(cos_x, x.cos())

    # Second-order gradients
    neg_sin_x = grad(grad(lambda x: torch.sin(x)))(x)
    assert torch.allclose(neg_sin_x, -x.sin())

    batch_size, feature_size = 3, 5

    def model(weights, feature_vec):
        # Very simple linear model with activation
        assert feature_vec.dim() == 1
        return feature_vec.dot(weights).relu()

    def compute_loss(weights, example, target):
        y = model(weights, example)
        return ((y - target) ** 2).mean()  # MSELoss

    weights = torch.randn(feature_size, requires_grad=True)
    examples = torch.randn(batch_size, feature_size)
    targets = torch.randn(batch_size)
    inputs = (weights, examples, targets)
    grad_weight_per_example = vmap(grad(compute_loss), in_dims=(None, 0, 0))(*inputs)

    loop = torch.stack([grad(compute_loss)(weights, examples[i], targets[i]) for i in range(batch_size)])
    assert grad_weight_per_example.shape == (batch_size, feature_size)
    assert torch.allclose(grad_weight_per_example, loop)

    def my_loss_func(y, y_pred):
        loss_per_sample = (0.5 * y_pred - y) ** 2
        loss = loss_per_sample.mean()
        return loss, (y_pred, loss_per_sample)

    fn = grad(my_loss_func, argnums=(0, 1), has_aux=True)
    y_true = torch.rand(4)
    y_preds = torch.rand(4, requires_grad=True)
    out = fn(y_true, y_preds)
    # > output is ((grads w.r.t y_true, grads w.r.t y_preds), (y_pred, loss_per_sample))
    (g_true, g_pred), (aux_pred, aux_per_sample) = out
    assert torch.allclose(g_true, -(0.5 * y_preds - y_true) * 2 / 4)
    assert torch.allclose(g_pred, (0.5 * y_preds - y_true) * 0.5 * 2 / 4)
    assert torch.allclose(aux_pred, y_preds) and torch.allclose(aux_per_sample, (0.5 * y_preds - y_true) ** 2)

    def f(x):
        with torch.no_grad():
            c = x ** 2
        return x - c

    assert torch.allclose(grad(f)(x), torch.tensor(1.0))   # case 1: the inner no_grad is respected
    with torch.no_grad():
        assert torch.allclose(grad(f)(x), torch.tensor(1.0))   # case 2: the outer one is not


def test_seed_per_sample_matches_torch():
    rng = np.random.default_rng(0)
    w, ex, tg = rng.standard_normal(5), rng.standard_normal((3, 5)), rng.standard_normal(3)

    def compute_loss(L):
        return lambda weights, example, target: ((example.dot(weights).relu() - target) ** 2).mean()
    close(mfunc.vmap(mfunc.grad(compute_loss(mt)), in_dims=(None, 0, 0))(M(w), M(ex), M(tg)),
          tfunc.vmap(tfunc.grad(compute_loss(torch)), in_dims=(None, 0, 0))(T(w), T(ex), T(tg)))


# ---- grad ------------------------------------------------------------------------------------------
def test_grad_argnums_has_aux_pytrees():
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal(3), rng.standard_normal((2, 3))

    def f(x, y):
        return (x * y).sin().sum() + (y ** 2).mean()

    def g(d, s):
        return (d["w"] @ d["v"][0]).tanh().sum() * s, {"mid": d["w"].sum()}
    for argnums in (0, 1, (0, 1), (1, 0), -1):
        close(mfunc.grad(f, argnums=argnums)(M(a), M(b)), tfunc.grad(f, argnums=argnums)(T(a), T(b)))
    ours = mfunc.grad(g, has_aux=True)({"w": M(b), "v": [M(a)]}, 2.0)
    theirs = tfunc.grad(g, has_aux=True)({"w": T(b), "v": [T(a)]}, 2.0)
    close(ours[0]["w"], theirs[0]["w"])
    close(ours[0]["v"], theirs[0]["v"])
    close(ours[1]["mid"], theirs[1]["mid"])
    gv = mfunc.grad_and_value(f, argnums=(0, 1))(M(a), M(b))
    tv = tfunc.grad_and_value(f, argnums=(0, 1))(T(a), T(b))
    close(gv[0], tv[0])
    close(gv[1], tv[1])


def test_grad_has_aux_returns_inputs_unchanged():
    """The seed's my_loss_func: an input returned as aux comes back as the caller's tensor itself."""
    def my_loss_func(y, y_pred):
        loss_per_sample = (0.5 * y_pred - y) ** 2
        return loss_per_sample.mean(), (y_pred, loss_per_sample)

    def other_arg(x, y):
        return (x * 2).sum(), y
    rng = np.random.default_rng(2)
    a, b = rng.random(4), rng.random(4)
    for L, F in ((mt, mfunc), (torch, tfunc)):
        y_true, y_preds = L.tensor(a), L.tensor(b, requires_grad=True)
        (g_true, g_pred), (aux_pred, per_sample) = F.grad(my_loss_func, argnums=(0, 1), has_aux=True)(y_true, y_preds)
        assert aux_pred is y_preds and aux_pred.grad_fn is None
        assert per_sample.requires_grad and per_sample.grad_fn.name() == "PowBackward0"
        assert F.grad(other_arg, has_aux=True)(y_true, y_preds)[1] is y_preds
        with L.no_grad():
            assert F.grad(other_arg, has_aux=True)(y_true, y_preds)[1] is y_preds
    ours = mfunc.grad(my_loss_func, argnums=(0, 1), has_aux=True)(M(a), M(b))
    theirs = tfunc.grad(my_loss_func, argnums=(0, 1), has_aux=True)(T(a), T(b))
    close(ours[0], theirs[0])
    close(ours[1], theirs[1])


def test_grad_of_output_that_does_not_depend_on_input_is_zero():
    x = mt.randn(3)
    assert mt.equal(mfunc.grad(lambda x: mt.tensor(1.0))(x), mt.zeros(3))
    assert mt.equal(mfunc.grad(lambda x, y: (y * 2).sum())(x, mt.randn(2)), mt.zeros(3))


def test_grad_results_and_outer_autograd():
    x = mt.randn(3)
    assert not mfunc.grad(lambda x: (x ** 3).sum())(x).requires_grad  # as torch: plain inputs, plain result
    w = mt.randn(3, requires_grad=True)
    g = mfunc.grad(lambda x: (x ** 3 * w).sum())(x)  # depends on w: differentiable by ordinary autograd
    assert g.requires_grad
    g.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), 3 * x.numpy() ** 2, rtol=1e-6)
    with mt.no_grad():
        assert not mfunc.grad(lambda x: (x ** 3 * w).sum())(x).requires_grad


GRAD_ERRORS = [
    (lambda g: g(lambda x: x * 2)(_t(g, 3)), "Expected f(*args) to return a scalar Tensor, got tensor with 1 dims"),
    (lambda g: g(lambda x: 1.0)(_t(g, 3)), "Expected f(*args) to return a Tensor, got <class 'float'>"),
    (lambda g: g(lambda x: x.sum(), argnums=1)(_t(g, 3)), "Got argnum=1, but only 1 positional inputs"),
    (lambda g: g(lambda x: x.sum(), argnums=(0, 0))(_t(g, 3)), "argnums elements must be unique"),
    (lambda g: g(lambda x: x.sum(), argnums=0.5)(_t(g, 3)), "argnums must be int or Tuple[int, ...]"),
    (lambda g: g(lambda x: x.sum(), has_aux=True)(_t(g, 3)), "should be a tuple: (output, aux) if has_aux is True"),
]


def _t(g, *shape):
    return torch.randn(*shape) if g is tfunc.grad else mt.randn(*shape)


@pytest.mark.parametrize("call,message", GRAD_ERRORS)
def test_grad_errors_as_torch(call, message):
    with pytest.raises(RuntimeError) as theirs:
        call(tfunc.grad)
    assert message in str(theirs.value)
    with pytest.raises(RuntimeError) as ours:
        call(mfunc.grad)
    assert message in str(ours.value)


# ---- nesting ------------------------------------------------------------------------------------------
def test_nested_transforms():
    x = np.random.default_rng(2).standard_normal(4)
    xs = np.float64(0.7)

    def f(L):
        return lambda a: (a.sin() * a.exp()).sum()
    close(mfunc.grad(mfunc.grad(mfunc.grad(lambda a: a.sin() * a.exp())))(M(xs)),
          tfunc.grad(tfunc.grad(tfunc.grad(lambda a: a.sin() * a.exp())))(T(xs)))
    close(mfunc.jacrev(mfunc.jacrev(f(mt)))(M(x)), tfunc.jacrev(tfunc.jacrev(f(torch)))(T(x)))
    close(mfunc.jacfwd(mfunc.jacrev(f(mt)))(M(x)), tfunc.hessian(f(torch))(T(x)))
    close(mfunc.jacrev(mfunc.jacfwd(f(mt)))(M(x)), tfunc.hessian(f(torch))(T(x)))
    close(mfunc.jacfwd(mfunc.jacfwd(f(mt)))(M(x)), tfunc.hessian(f(torch))(T(x)))
    close(mfunc.jacrev(mfunc.jacrev(mfunc.jacrev(f(mt))))(M(x)),
          tfunc.jacrev(tfunc.jacrev(tfunc.jacrev(f(torch))))(T(x)))
    close(mfunc.grad(lambda a: mfunc.grad(f(mt))(a).pow(2).sum())(M(x)),
          tfunc.grad(lambda a: tfunc.grad(f(torch))(a).pow(2).sum())(T(x)))


def test_no_perturbation_confusion():
    # d/dx [x * d/dy (x + y)] at y = x is 1: the inner derivative must not see the outer x
    for func, conv in ((mfunc, M), (tfunc, T)):
        out = func.grad(lambda x: x * func.grad(lambda y: x + y)(x))(conv(np.float64(3.0)))
        assert float(out) == 1.0
        out = func.jvp(lambda x: x * func.jvp(lambda y: x * y, (x,), (conv(np.float64(1.0)),))[1],
                       (conv(np.float64(3.0)),), (conv(np.float64(1.0)),))[1]
        assert float(out) == 6.0  # d/dx [x * x] = 2x, with the inner tangent kept apart


# ---- jacobians ------------------------------------------------------------------------------------------
JAC_FUNCS = [
    ("elementwise", lambda L, x: x.sin() * x.exp(), [(4,)]),
    ("matrix", lambda L, x: (x @ x.t()).tanh(), [(3, 2)]),
    ("reduce", lambda L, x: L.stack([x.sum(), x.prod(), x.norm(), x.max(), x.logsumexp(0)]), [(4,)]),
    ("softmax_ce", lambda L, x: L.nn.functional.cross_entropy(x.unsqueeze(0), L.tensor([1])).reshape(1)
     + x.softmax(0)[2], [(4,)]),
    ("two_inputs", lambda L, x, y: (x.unsqueeze(1) * y).relu().sum(0) + y.sum(0), [(3,), (3, 2)]),
    ("indexing", lambda L, x: L.cat([x[1:3], x[L.tensor([0, 0, 2])] ** 2, x.flip(0)]), [(4,)]),
    ("scalar_in", lambda L, x: L.stack([x, x ** 2, x.exp()]), [()]),
]


@pytest.mark.parametrize("name,f,shapes", JAC_FUNCS, ids=[j[0] for j in JAC_FUNCS])
def test_jacrev_equals_jacfwd_equals_torch(name, f, shapes):
    rng = np.random.default_rng(3)
    xs = [rng.standard_normal(s) for s in shapes]
    argnums = tuple(range(len(xs))) if len(xs) > 1 else 0
    theirs = tfunc.jacrev(lambda *a: f(torch, *a), argnums=argnums)(*map(T, xs))
    close(mfunc.jacrev(lambda *a: f(mt, *a), argnums=argnums)(*map(M, xs)), theirs)
    close(mfunc.jacfwd(lambda *a: f(mt, *a), argnums=argnums)(*map(M, xs)), theirs)


def test_jacobian_pytrees_and_has_aux():
    x = np.random.default_rng(4).standard_normal(3)

    def f(L):
        return lambda d: ({"a": d["p"] * 2, "b": d["p"].sum()}, d["p"].mean())
    for jac in ("jacrev", "jacfwd"):
        ours = getattr(mfunc, jac)(f(mt), has_aux=True)({"p": M(x)})
        theirs = getattr(tfunc, jac)(f(torch), has_aux=True)({"p": T(x)})
        close(ours[0]["a"]["p"], theirs[0]["a"]["p"])
        close(ours[0]["b"]["p"], theirs[0]["b"]["p"])
        close(ours[1], theirs[1])


def test_hessian_of_a_quadratic_form_is_a_plus_a_transpose():
    rng = np.random.default_rng(5)
    A, x = rng.standard_normal((4, 4)), rng.standard_normal(4)
    H = mfunc.hessian(lambda v: v @ M(A) @ v)(M(x))
    np.testing.assert_allclose(H.numpy(), A + A.T, rtol=1e-10, atol=1e-12)
    close(mfunc.hessian(lambda v, w: (v * w.exp()).sum() ** 2, argnums=(0, 1))(M(x), M(x[::-1])),
          tfunc.hessian(lambda v, w: (v * w.exp()).sum() ** 2, argnums=(0, 1))(T(x), T(x[::-1])))


# ---- vjp, jvp, linearize ----------------------------------------------------------------------------
def test_vjp_and_jvp_as_torch():
    rng = np.random.default_rng(6)
    x, y, u, v = (rng.standard_normal(3) for _ in range(4))

    def f(a, b):
        return (a * b).exp(), (a - b).sum()
    out, fn = mfunc.vjp(f, M(x), M(y))
    tout, tfn = tfunc.vjp(f, T(x), T(y))
    close(out, tout)
    close(fn((M(u), M(np.float64(2.0)))), tfn((T(u), T(np.float64(2.0)))))
    close(fn((M(v), M(np.float64(-1.0)))), tfn((T(v), T(np.float64(-1.0)))))  # called twice
    close(mfunc.jvp(f, (M(x), M(y)), (M(u), M(v))), tfunc.jvp(f, (T(x), T(y)), (T(u), T(v))))
    out, jfn = mfunc.linearize(lambda a: a.sin() * a, M(x))
    tout, tjfn = tfunc.linearize(lambda a: a.sin() * a, T(x))
    close(out, tout)
    close(jfn(M(u)), tjfn(T(u)))
    a = mfunc.vjp(lambda a: (a.sum(), a * 2), M(x), has_aux=False)
    with pytest.raises(RuntimeError, match="Expected pytree structure of cotangents"):
        a[1](M(u))
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        mfunc.vjp(lambda a: a * 2, M(x))[1](mt.ones(4))


def test_jvp_errors_as_torch():
    x = mt.randn(3)
    with pytest.raises(RuntimeError, match="Expected primals to be a tuple"):
        mfunc.jvp(lambda a: a, x, x)
    with pytest.raises(RuntimeError, match="Expected primals and tangents to have the same python structure"):
        mfunc.jvp(lambda a: a, (x,), (x, x))
    with pytest.raises(RuntimeError, match="Expected primals to only contain Tensors"):
        mfunc.jvp(lambda a: a, (1.0,), (1.0,))
    with pytest.raises(RuntimeError, match="different size"):
        mfunc.jvp(lambda a: a, (x,), (mt.randn(2),))
    p, t = mfunc.jvp(lambda a: mt.ones(2), (x,), (x,))
    assert mt.equal(t, mt.zeros(2))


def test_forward_over_reverse_hvp():
    rng = np.random.default_rng(7)
    x, v = rng.standard_normal(4), rng.standard_normal(4)

    def f(a):
        return (a.exp() * a.sin()).sum() + a.norm() ** 3
    ours = mfunc.jvp(mfunc.grad(f), (M(x),), (M(v),))
    theirs = tfunc.jvp(tfunc.grad(f), (T(x),), (T(v),))
    close(ours, theirs)


# ---- functional_call --------------------------------------------------------------------------------
def test_functional_call():
    lin = mt.nn.Linear(3, 2)
    x = mt.randn(4, 3)
    w, b = mt.randn(2, 3), mt.randn(2)
    out = mfunc.functional_call(lin, {"weight": w, "bias": b}, (x,))
    np.testing.assert_allclose(out.numpy(), x.numpy() @ w.numpy().T + b.numpy(), rtol=1e-6)
    assert lin.weight is not w and isinstance(lin.weight, mt.nn.Parameter)  # restored
    out = mfunc.functional_call(lin, ({"weight": w}, {"bias": b}), x)
    np.testing.assert_allclose(out.numpy(), x.numpy() @ w.numpy().T + b.numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
        mfunc.functional_call(lin, ({"weight": w}, {"weight": w}), x)
    with pytest.raises(RuntimeError, match="Missing key"):
        mfunc.functional_call(lin, {"weight": w}, x, strict=True)
    seq = mt.nn.Sequential(mt.nn.Linear(3, 3), mt.nn.Tanh(), mt.nn.Linear(3, 1))
    params = {k: v.detach() for k, v in seq.named_parameters()}
    grads = mfunc.grad(lambda p: mfunc.functional_call(seq, p, (x,)).sum())(params)
    seq.zero_grad()
    seq(x).sum().backward()
    for k, p in seq.named_parameters():
        np.testing.assert_allclose(grads[k].numpy(), p.grad.numpy(), rtol=1e-5, atol=1e-6)


# ---- autograd.grad(..., is_grads_batched=True) --------------------------------------------------------
def test_is_grads_batched_as_torch():
    rng = np.random.default_rng(8)
    x, gos = rng.standard_normal(3), rng.standard_normal((5, 3))
    results = []
    for lib, conv in ((mt, M), (torch, T)):
        xt = conv(x).requires_grad_()
        y = xt.sin() * xt
        results.append(lib.autograd.grad(y, xt, conv(gos), is_grads_batched=True))
    close(results[0], results[1])
    xt = M(x).requires_grad_()
    z = M(x).requires_grad_()
    with pytest.raises(RuntimeError, match="If `is_grads_batched=True`, we interpret the first dimension"):
        mt.autograd.grad(xt * 2, xt, M(gos[:, :2]), is_grads_batched=True)
    out = mt.autograd.grad(xt * 2, (xt, z), M(gos), is_grads_batched=True, allow_unused=True)
    assert out[1] is None and out[0].shape == (5, 3)


# ---- deeper compositions, against torch ------------------------------------------------------------------
_R = np.random.default_rng(9)
_X, _V = _R.standard_normal((3, 4)), _R.standard_normal((3, 4))


def _f(a):
    return (a.sin() * a.exp()).sum() + (a @ a.flip(0)) ** 2


def _g(a):
    return a.tanh() * a.sum()


COMPOSITIONS = [
    ("vmap(jacfwd)", lambda F, c: F.vmap(F.jacfwd(_g))(c(_X))),
    ("jacrev(vmap)", lambda F, c: F.jacrev(F.vmap(_g))(c(_X))),
    ("jacfwd(vmap)", lambda F, c: F.jacfwd(F.vmap(_g))(c(_X))),
    ("grad(jvp)", lambda F, c: F.grad(lambda a: F.jvp(_f, (a,), (c(_V[0]),))[1])(c(_X[0]))),
    ("jvp(jvp)", lambda F, c: F.jvp(lambda a: F.jvp(_f, (a,), (c(_V[0]),))[1], (c(_X[0]),), (c(_V[1]),))),
    ("vmap(vjp)", lambda F, c: F.vmap(lambda a, v: F.vjp(_g, a)[1](v))(c(_X), c(_V))),
    ("vmap(hessian)", lambda F, c: F.vmap(F.hessian(_f))(c(_X))),
    ("jacfwd(jacfwd(jacrev))", lambda F, c: F.jacfwd(F.jacfwd(F.jacrev(lambda a: (a.sin() * a).sum())))(c(_X[0]))),
    ("vmap(vmap(jacrev))", lambda F, c: F.vmap(F.vmap(F.jacrev(lambda a: a.sin() * a)))(c(_X))),
    ("grad(vmap(grad))", lambda F, c: F.grad(lambda a: F.vmap(F.grad(lambda r: (r.sin() * r).sum()))(a).sum())(c(_X))),
    ("vmap(grad(vmap))", lambda F, c: F.vmap(F.grad(lambda a: F.vmap(lambda r: (r.exp() * r).sum())(a).sum()))(
        c(np.stack([_X, 2 * _X])))),
    ("jacrev(jacfwd(vmap))", lambda F, c: F.jacrev(F.jacfwd(F.vmap(lambda r: (r.sin() * r).sum())))(c(_X[:2, :2]))),
]


@pytest.mark.parametrize("name,call", COMPOSITIONS, ids=[c[0] for c in COMPOSITIONS])
def test_compositions_as_torch(name, call):
    close(call(mfunc, M), call(tfunc, T))


def test_backward_from_a_batched_tensor_is_refused():
    w = mt.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="on a tensor batched by vmap is not supported"):
        mt.vmap(lambda a: (a * w).sum().backward())(mt.randn(2, 3))


def _in_place(L):
    def g(a):
        b = a * 1
        b[1:3] = a[0:2] ** 2                   # through a view (CopySlices)
        b[L.tensor([0, 3])] = a[2] * 3         # index_put
        c = a.clone()
        c.fill_(2.0)
        c.mul_(a).add_(b)
        return (b * c).sum()
    return g


@pytest.mark.parametrize("name,call", [
    ("jacrev", lambda F, c, g: F.jacrev(g)(c(_X[0]))),
    ("hessian", lambda F, c, g: F.jacfwd(F.jacrev(g))(c(_X[0]))),
    ("jacrev(jacrev)", lambda F, c, g: F.jacrev(F.jacrev(g))(c(_X[0]))),
    ("vmap(grad)", lambda F, c, g: F.vmap(F.grad(g))(c(_X))),
    ("vmap(jvp)", lambda F, c, g: F.vmap(lambda x, v: F.jvp(g, (x,), (v,)))(c(_X), c(_V))),
], ids=lambda x: x if isinstance(x, str) else "")
def test_in_place_ops_under_transforms(name, call):
    close(call(mfunc, M, _in_place(mt)), call(tfunc, T, _in_place(torch)))
