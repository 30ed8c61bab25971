"""vmap against torch.func.vmap: semantics (in_dims, out_dims, errors, randomness), the batching
rules of the common ops (one batched call, no per-example loop), the per-example fallback,
nesting, and per-sample gradients."""
import warnings
import zlib

import numpy as np
import pytest
import torch
import torch.func as tfunc

import microtorch as mt
import microtorch.func as mfunc
from microtorch.autograd.function import intercept, stop_intercepting


def T(a):
    return torch.from_numpy(np.array(a))


def M(a):
    return mt.tensor(np.array(a))


def close(ours, theirs, atol=1e-8):
    if isinstance(theirs, (tuple, list)):
        assert isinstance(ours, (tuple, list)) and len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            close(o, t, atol)
        return
    if isinstance(theirs, dict):
        assert set(ours) == set(theirs)
        for k in theirs:
            close(ours[k], theirs[k], atol)
        return
    if not isinstance(theirs, torch.Tensor):
        assert ours == theirs
        return
    assert tuple(ours.shape) == tuple(theirs.shape), (ours.shape, theirs.shape)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-6, atol=atol)


def nnf(lib):
    return lib.nn.functional


# ---- batching rules: each (f, in_dims, shapes) runs without the per-example fallback --------------
# shapes: a float input of that shape, or ("i", high, shape) for int64 indices, ("b", shape) for a mask
BATCHED = [
    ("add_broadcast", lambda L, x, y: x + y, 0, [(4, 3), (4, 1)]),
    ("mul_unbatched", lambda L, x, y: x * y, (0, None), [(4, 3), (2, 3)]),
    ("scalar_ops", lambda L, x: (2 - x) / 3 + x ** 2 - 1 / (x * x + 1), 0, [(4, 3)]),
    ("unary", lambda L, x: x.exp().sin().tanh().sigmoid() + x.abs().sqrt() + x.relu(), 0, [(4, 3)]),
    ("nn_acts", lambda L, x: nnf(L).gelu(x) + nnf(L).elu(x) + nnf(L).softplus(x) + nnf(L).leaky_relu(x), 0, [(4, 3)]),
    ("clamp_where", lambda L, x, y: L.where(x > y, x.clamp(-0.5, 0.5), L.maximum(x, y)), 0, [(4, 3), (4, 3)]),
    ("compare", lambda L, x: (x > 0).float() + (x == x).float() + (~(x < 0)).float(), 0, [(4, 3)]),
    ("sum", lambda L, x: x.sum() + x.sum(0).sum() + x.sum(-1, keepdim=True).sum(), 0, [(4, 2, 3)]),
    ("mean_var_std", lambda L, x: x.mean(1) + x.var(1) + x.std(0).sum(), 1, [(2, 4, 3)]),
    ("prod_norm", lambda L, x: x.prod() + x.norm() + x.norm(dim=0).sum() + x.prod(1).sum(), 0, [(4, 2, 3)]),
    ("max_min", lambda L, x: x.max() + x.min(1)[0].sum() + x.amax(0).sum() + x.max(0)[1].float().sum()
     + x.argmax().float(), 0, [(4, 2, 3)]),
    ("logsumexp_softmax", lambda L, x: x.logsumexp(1) + x.softmax(1).sum(0) + x.log_softmax(0).sum(1), 0,
     [(4, 3, 3)]),
    ("cumsum_flip", lambda L, x: x.cumsum(1).flip(0), 0, [(4, 2, 3)]),
    ("matmul_vec_mat", lambda L, x, w: x @ w, (0, None), [(4, 3), (3, 5)]),
    ("matmul_mat_vec", lambda L, w, x: w @ x, (None, 0), [(5, 3), (4, 3)]),
    ("matmul_both", lambda L, x, w: x @ w, 0, [(4, 2, 3), (4, 3, 5)]),
    ("matmul_batched_mat", lambda L, x, w: x @ w, (0, None), [(4, 2, 2, 3), (3, 5)]),
    ("matmul_mat_batchedmat", lambda L, w, x: w @ x, (None, 0), [(2, 5, 3), (4, 3, 2)]),
    ("dot_mv_outer", lambda L, x, y: x.dot(y) + L.outer(x, y).sum() + L.mv(L.outer(x, y), y).sum(), (0, None),
     [(4, 3), (3,)]),
    ("linear", lambda L, x, w, b: nnf(L).linear(x, w, b), (0, None, None), [(4, 3), (5, 3), (5,)]),
    ("linear_batched_w", lambda L, x, w, b: nnf(L).linear(x, w, b), (None, 0, 0), [(2, 3), (4, 5, 3), (4, 5)]),
    ("addmm", lambda L, b, x, w: L.addmm(b, x, w), (None, 0, None), [(5,), (4, 2, 3), (3, 5)]),
    ("einsum", lambda L, x, y: L.einsum("ij,jk->ik", x, y), (0, None), [(4, 2, 3), (3, 2)]),
    ("bmm", lambda L, x, y: L.bmm(x, y), 0, [(4, 2, 2, 3), (4, 2, 3, 2)]),
    ("shape_ops", lambda L, x: x.reshape(6, 2).t().unsqueeze(0).permute(2, 0, 1).squeeze(1).transpose(0, 1)
     .flatten().view(3, 4).expand(2, 3, 4).repeat(1, 2, 1), 0, [(4, 3, 4)]),
    ("cat_stack_split", lambda L, x, y: L.cat([x, y], 1) + L.stack([x, y]).sum(0).repeat(1, 2)
     + L.cat(list(x.split(1, 1)) + list(y.unbind(1)[0].unsqueeze(1).chunk(1, 1)) * 2, 1)[:, :4], (0, None),
     [(4, 2, 2), (2, 2)]),
    ("cat_unbatched_first", lambda L, y, x: L.cat([y, x]), (None, 0), [(2, 3), (4, 1, 3)]),
    ("indexing", lambda L, x: x[1] + x[:, 0:2].sum(1) + x[..., -1] + x[0, 1], 0, [(4, 3, 3)]),
    ("index_unbatched_idx", lambda L, x, i: x[i] * 2 + x.index_select(0, i), (0, None), [(4, 5, 2), ("i", 5, (3,))]),
    ("index_batched_idx", lambda L, x, i: x[i], (None, 0), [(5, 2), ("i", 5, (4, 3))]),
    ("index_both_batched", lambda L, x, i: x[i] + x.index_select(0, i) + x.gather(0, i.unsqueeze(1).expand(3, 2)),
     0, [(4, 5, 2), ("i", 5, (4, 3))]),
    ("index_2d_split", lambda L, x, i: x[i, :, i], (0, None), [(4, 3, 2, 3), ("i", 3, (2,))]),
    ("mask_fill", lambda L, x, m: x.masked_fill(m, 0.0) + L.where(m, x, -x), (0, 0), [(4, 3), ("b", (4, 3))]),
    ("mse_bce", lambda L, x, y: nnf(L).mse_loss(x, y) + nnf(L).binary_cross_entropy_with_logits(x, y.sigmoid())
     + nnf(L).mse_loss(x, y, reduction="sum"), 0, [(4, 3), (4, 3)]),
    ("cross_entropy", lambda L, x, t: nnf(L).cross_entropy(x, t), 0, [(4, 2, 5), ("i", 5, (4, 2))]),
    ("cross_entropy_1d", lambda L, x, t: nnf(L).cross_entropy(x, t, label_smoothing=0.1), 0, [(4, 5), ("i", 5, (4,))]),
    ("nll_sum", lambda L, x, t: nnf(L).nll_loss(x.log_softmax(1), t, reduction="sum"), 0,
     [(4, 2, 5), ("i", 5, (4, 2))]),
    ("conv2d", lambda L, x, w: nnf(L).conv2d(x, w, padding=1), (0, None), [(4, 2, 3, 5, 5), (4, 3, 3, 3)]),
    ("conv2d_batched_w", lambda L, x, w, b: nnf(L).conv2d(x, w, b, stride=2), (0, 0, 0),
     [(4, 1, 2, 5, 5), (4, 3, 2, 3, 3), (4, 3)]),
    ("pool", lambda L, x: nnf(L).max_pool2d(x, 2) + nnf(L).avg_pool2d(x, 2), 0, [(4, 1, 2, 4, 4)]),
    ("embedding", lambda L, i, w: nnf(L).embedding(i, w), (0, None), [("i", 6, (4, 3)), (6, 2)]),
    ("to_dtype", lambda L, x: x.float().double() * 2, 0, [(4, 3)]),
]


def _make(shapes, seed):
    rng = np.random.default_rng(seed)
    out = []
    for s in shapes:
        if s and s[0] == "i":
            out.append(rng.integers(0, s[1], s[2]))
        elif s and s[0] == "b":
            out.append(rng.random(s[1]) > 0.5)
        else:
            out.append(rng.standard_normal(s))
    return out


@pytest.mark.parametrize("name,f,in_dims,shapes", BATCHED, ids=[b[0] for b in BATCHED])
def test_batching_rule_matches_torch(name, f, in_dims, shapes):
    arrays = _make(shapes, zlib.crc32(name.encode()))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the per-example fallback warns: the common ops must not need it
        ours = mfunc.vmap(lambda *a: f(mt, *a), in_dims=in_dims)(*map(M, arrays))
    theirs = tfunc.vmap(lambda *a: f(torch, *a), in_dims=in_dims)(*map(T, arrays))
    close(ours, theirs)


def test_vmap_calls_each_op_once_for_the_whole_batch():
    """about one call of f on the stacked batch: the number of ops run does not grow with the batch."""
    def f(x, w):
        return (nnf(mt).linear(x, w).relu() ** 2).sum() + x[0] * x.softmax(0).max()

    def count(batch):
        calls = []
        def record(cls, args, kwargs):
            calls.append(cls)
            return NotImplemented
        intercept(record, first=True)
        try:
            mfunc.vmap(mfunc.grad(f), in_dims=(0, None))(mt.randn(batch, 3), mt.randn(4, 3))
        finally:
            stop_intercepting(record)
        return len(calls)
    assert count(2) == count(32)


# ---- semantics and errors, as torch -------------------------------------------------------------------
def test_in_dims_out_dims_as_torch():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((2, 3)), rng.standard_normal((3, 2))
    for lib, vm in ((mt, mfunc.vmap), (torch, tfunc.vmap)):
        conv = M if lib is mt else T
        res = [vm(lambda a, b: a * b, in_dims=(0, 1))(conv(x), conv(y)),
               vm(lambda a, b: a + b, in_dims=(-1, None), out_dims=1)(conv(x), conv(y[0])),
               vm(lambda p: p[0] * p[1]["k"], in_dims=((0, {"k": 1}),))((conv(x), {"k": conv(y)})),
               vm(lambda a: (a, a.sum()), out_dims=(1, 0))(conv(x)),
               vm(lambda a, k=None: a + k)(conv(x), k=conv(np.ones(3))),  # keyword arguments are not mapped
               vm(lambda a: (a * 2, 7), out_dims=(0, None))(conv(x)),
               vm(lambda a: conv(np.ones(2)))(conv(x)),                    # an unbatched output is expanded
               vm(lambda a: {"s": a.sum(), "t": [a.t() if a.ndim > 1 else a]})(conv(x))]
        if lib is mt:
            ours = res
        else:
            theirs = res
    close(ours, theirs)


ERRORS = [
    ("size mismatch", lambda vm: vm(lambda a, b: a + b)(mt.randn(3), mt.randn(4)) if vm is mfunc.vmap else
     vm(lambda a, b: a + b)(torch.randn(3), torch.randn(4))),
    ("in_dim out of range", lambda vm: vm(lambda a: a, in_dims=1)(_t(vm, 3))),
    ("in_dims structure", lambda vm: vm(lambda a, b: a, in_dims=(0,))(_t(vm, 3), _t(vm, 3))),
    ("in_dims type", lambda vm: vm(lambda a: a, in_dims=[0])(_t(vm, 3))),
    ("in_dims None", lambda vm: vm(lambda a: a, in_dims=None)(_t(vm, 3))),
    ("non-tensor batched", lambda vm: vm(lambda a: a)(1.0)),
    ("nothing batched", lambda vm: vm(lambda a, b: a, in_dims=(None, None))(_t(vm, 3), _t(vm, 3))),
    ("no inputs", lambda vm: vm(lambda: 1)()),
    ("non-tensor output", lambda vm: vm(lambda a: 1.0)(_t(vm, 3))),
    ("batched with out_dim None", lambda vm: vm(lambda a: a, out_dims=None)(_t(vm, 3))),
    ("out_dims structure", lambda vm: vm(lambda a: (a, a), out_dims=(0,))(_t(vm, 3))),
    ("randomness", lambda vm: vm(lambda a: a, randomness="sometimes")(_t(vm, 3))),
    ("random op", lambda vm: vm(lambda a: a + (mt if vm is mfunc.vmap else torch).randn(()))(_t(vm, 3))),
    ("item", lambda vm: vm(lambda a: a.item())(_t(vm, 3))),
    ("control flow", lambda vm: vm(lambda a: a if a > 0 else -a)(_t(vm, 3) * 0 + _t_arange(vm, 3))),
]


def _t(vm, *shape):
    return mt.randn(*shape) if vm is mfunc.vmap else torch.randn(*shape)


def _t_arange(vm, n):
    return (mt if vm is mfunc.vmap else torch).arange(n) - 1.0


@pytest.mark.parametrize("name,call", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_as_torch(name, call):
    with pytest.raises(Exception) as theirs:
        call(tfunc.vmap)
    with pytest.raises(type(theirs.value)) as ours:
        call(mfunc.vmap)
    key = str(theirs.value).split(":")[-1].strip()[:40] if name in ("size mismatch", "randomness", "random op") \
        else None
    if key:
        assert key in str(ours.value), (str(ours.value), str(theirs.value))


def test_error_messages_name_the_function():
    def model(a):
        return 1.0
    with pytest.raises(ValueError, match=r"vmap\(model, \.\.\.\): `model` must only return Tensors, got type "
                                         r"<class 'float'>\. Did you mean to set out_dims= to None for output\?"):
        mfunc.vmap(model)(mt.randn(3))
    with pytest.raises(ValueError, match=r"Got in_dim=2 for some input, but that input is a Tensor of dimensionality "
                                         r"1 so expected in_dim to satisfy -1 <= in_dim < 1"):
        mfunc.vmap(model, in_dims=2)(mt.randn(3))
    with pytest.raises(ValueError, match=r"got sizes \[3, 4\] for the mapped dimension"):
        mfunc.vmap(lambda a, b: a)(mt.randn(3), mt.randn(4))


def test_randomness_same_and_different():
    x = mt.ones(64, 50)
    mt.manual_seed(0)
    same = mt.vmap(lambda a: nnf(mt).dropout(a, 0.5), randomness="same")(x)
    assert all(mt.equal(same[0], row) for row in same)
    different = mt.vmap(lambda a: nnf(mt).dropout(a, 0.5), randomness="different")(x)
    assert not mt.equal(different[0], different[1])
    assert set(np.unique(different.numpy())) <= {0.0, 2.0}


def test_torch_vmap_alias():
    assert mt.vmap is mfunc.vmap
    out = mt.vmap(lambda a: a.sum())(mt.ones(2, 3))
    assert out.tolist() == [3.0, 3.0]


def test_print_inside_vmap(capsys):
    mt.vmap(lambda a: print(a) or a)(mt.tensor([[1.0, 2.0], [3.0, 4.0]]))
    assert capsys.readouterr().out.startswith("BatchedTensor(lvl=")


# ---- the per-example fallback -----------------------------------------------------------------------
def test_fallback_for_ops_without_a_rule_is_correct_and_warns():
    from microtorch.func import _batching
    _batching._warned.clear()  # (the warning comes once per op in a process, as torch's)
    x = mt.randn(5, 3)
    with pytest.warns(UserWarning, match="performance drop.*Take"):  # (torch has no rule for take either)
        out = mt.vmap(lambda a: mt.take(a, mt.tensor([0, 2])).sum())(x)
    np.testing.assert_allclose(out.numpy(), x.numpy()[:, [0, 2]].sum(1), rtol=1e-6)
    # and it is differentiable: per-example gradients through the fallback
    g = mt.vmap(mfunc.grad(lambda a: mt.take(a, mt.tensor([0, 2])).sum()))(x)
    np.testing.assert_allclose(g.numpy(), np.tile([1.0, 0.0, 1.0], (5, 1)))


def test_a_python_function_with_generate_vmap_rule_runs_per_example_without_warning():
    class Cube(mt.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return x ** 3

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x ** 2 * g

    x = mt.randn(5, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (torch batches it by its generated rule: no performance warning)
        out = mt.vmap(lambda a: Cube.apply(a).sum())(x)
    np.testing.assert_allclose(out.numpy(), (x.numpy() ** 3).sum(1), rtol=1e-6)
    g = mt.vmap(mfunc.grad(lambda a: Cube.apply(a).sum()))(x)
    np.testing.assert_allclose(g.numpy(), 3 * x.numpy() ** 2, rtol=1e-5)


# ---- composition --------------------------------------------------------------------------------------
def test_nested_vmap():
    x = np.random.default_rng(1).standard_normal((2, 3, 4))
    w = np.random.default_rng(2).standard_normal((4, 5))

    def f(L, a, w):
        return (a @ w).softmax(0).sum() + a.norm()
    for inner, outer, a in ((0, 0, x), (1, 2, x.transpose(2, 1, 0)), (0, None, x[0])):
        ours = mfunc.vmap(mfunc.vmap(lambda a, w: f(mt, a, w), in_dims=(inner, None)), in_dims=(outer, None))
        theirs = tfunc.vmap(tfunc.vmap(lambda a, w: f(torch, a, w), in_dims=(inner, None)), in_dims=(outer, None))
        if outer is None:  # the outer vmap maps over w's rows instead
            ours = mfunc.vmap(mfunc.vmap(lambda a, w: f(mt, a, w), in_dims=(0, None)), in_dims=(None, 1))
            theirs = tfunc.vmap(tfunc.vmap(lambda a, w: f(torch, a, w), in_dims=(0, None)), in_dims=(None, 1))
            w2 = np.random.default_rng(3).standard_normal((4, 2, 5))
            close(ours(M(a), M(w2)), theirs(T(a), T(w2)))
        else:
            close(ours(M(a), M(w)), theirs(T(a), T(w)))


def test_vmap_of_vmap_of_grad():
    x = np.random.default_rng(3).standard_normal((2, 3, 4))
    ours = mfunc.vmap(mfunc.vmap(mfunc.grad(lambda a: (a.sin() * a).sum())))(M(x))
    theirs = tfunc.vmap(tfunc.vmap(tfunc.grad(lambda a: (a.sin() * a).sum())))(T(x))
    close(ours, theirs)


def test_grad_of_vmap():
    x = np.random.default_rng(4).standard_normal((3, 4))
    ours = mfunc.grad(lambda a: mfunc.vmap(lambda r: (r.exp() * r).sum())(a).prod())(M(x))
    theirs = tfunc.grad(lambda a: tfunc.vmap(lambda r: (r.exp() * r).sum())(a).prod())(T(x))
    close(ours, theirs)
    # regular autograd through vmap
    xm = M(x).requires_grad_()
    mt.vmap(lambda r: r.tanh().sum())(xm).sum().backward()
    np.testing.assert_allclose(xm.grad.numpy(), 1 - np.tanh(x) ** 2, rtol=1e-6)


def test_jvp_inside_vmap_and_vmap_inside_jvp():
    rng = np.random.default_rng(5)
    x, t = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))

    def f(a):
        return a.sin() * a.sum()
    close(mfunc.vmap(lambda a, b: mfunc.jvp(f, (a,), (b,)))(M(x), M(t)),
          tfunc.vmap(lambda a, b: tfunc.jvp(f, (a,), (b,)))(T(x), T(t)))
    close(mfunc.jvp(mfunc.vmap(f), (M(x),), (M(t),)), tfunc.jvp(tfunc.vmap(f), (T(x),), (T(t),)))
    close(mfunc.vmap(lambda a: mfunc.jvp(f, (a,), (M(t[0]),)))(M(x)),     # primal batched, tangent not
          tfunc.vmap(lambda a: tfunc.jvp(f, (a,), (T(t[0]),)))(T(x)))


def test_vmap_of_jacrev_and_hessian():
    x = np.random.default_rng(6).standard_normal((3, 4))

    def f(a):
        return (a.exp() * a).sum() + (a @ a.flip(0)) ** 2
    close(mfunc.vmap(mfunc.jacrev(f))(M(x)), tfunc.vmap(tfunc.jacrev(f))(T(x)))
    close(mfunc.vmap(mfunc.hessian(f))(M(x)), tfunc.vmap(tfunc.hessian(f))(T(x)))
    close(mfunc.vmap(mfunc.jacfwd(mfunc.jacfwd(f)))(M(x)), tfunc.vmap(tfunc.hessian(f))(T(x)))


# ---- per-sample gradients ------------------------------------------------------------------------------
def _mlp(lib, state):
    model = lib.nn.Sequential(lib.nn.Linear(3, 8), lib.nn.Tanh(), lib.nn.Linear(8, 4))
    with lib.no_grad():
        for name, p in model.named_parameters():
            p.copy_(lib.tensor(state[name]))
    return model


def test_per_sample_gradients_equal_a_loop_and_torch():
    rng = np.random.default_rng(7)
    state = {"0.weight": rng.standard_normal((8, 3)), "0.bias": rng.standard_normal(8),
             "2.weight": rng.standard_normal((4, 8)), "2.bias": rng.standard_normal(4)}
    x, y = rng.standard_normal((6, 3)), rng.integers(0, 4, 6)
    results = {}
    for lib, func, conv in ((mt, mfunc, M), (torch, tfunc, T)):
        model = _mlp(lib, {k: v.astype(np.float64) for k, v in state.items()}).double()
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(p, xi, yi, model=model, lib=lib, func=func):
            out = func.functional_call(model, p, (xi.unsqueeze(0),))
            return nnf(lib).cross_entropy(out, yi.unsqueeze(0))
        results[lib.__name__] = func.vmap(func.grad(loss), in_dims=(None, 0, 0))(params, conv(x), conv(y))
        if lib is mt:
            loop = [func.grad(loss)(params, conv(x[i]), conv(y[i])) for i in range(6)]
            for k in params:
                np.testing.assert_allclose(results["microtorch"][k].numpy(),
                                           np.stack([g[k].numpy() for g in loop]), rtol=1e-6, atol=1e-10)
    close(results["microtorch"], results["torch"])


def test_in_place_ops_inside_vmap():
    x = np.arange(6.0).reshape(2, 3)

    def f(L):
        def g(a):
            b = a.clone()
            b.mul_(a)
            b[0] = a[1] * 2
            b.add_(1)
            return b.sum()
        return g
    close(mfunc.vmap(mfunc.grad(f(mt)))(M(x)), tfunc.vmap(tfunc.grad(f(torch)))(T(x)))
    close(mfunc.vmap(f(mt))(M(x)), tfunc.vmap(f(torch))(T(x)))
    xs = M(x)
    mfunc.vmap(lambda a: a.mul_(2))(xs)  # as in torch, the input itself is written
    np.testing.assert_allclose(xs.numpy(), 2 * x)
    with pytest.raises(RuntimeError, match=r"add_\(self, \*extra_args\) is not possible"):
        mfunc.vmap(lambda a: mt.zeros(3).add_(a))(M(x))


def test_random_creation_with_randomness_different():
    out = mfunc.vmap(lambda a: a + mt.randn(3), randomness="different")(mt.zeros(4, 3))
    assert out.shape == (4, 3) and not mt.equal(out[0], out[1])
    out = mfunc.vmap(lambda a: a + mt.randn(3), randomness="same")(mt.zeros(4, 3))
    assert mt.equal(out[0], out[1])
