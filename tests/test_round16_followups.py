"""Nodes torch records that microtorch recorded differently, beside torch: the unsafe_ splits (their own nodes,
pieces that share memory but not a version counter), `x.to(same dtype, copy=True)` (ToCopyBackward0, not a
clone), and `torch.diag` of a vector (DiagEmbedBackward0)."""
import numpy as np
import pytest
import torch

import microtorch as mt
from tests.saved_compare import STRIDES, assert_saves_as_torch, graph_of

SPLITS = ["b.unsafe_split(1, 1)", "b.unsafe_chunk(2, 1)", "b.unsafe_split_with_sizes([1, 2], 1)",
          "T.unsafe_split(b, 2, -1)", "T.unsafe_chunk(b, 3, -1)", "T.unsafe_split_with_sizes(b, [2, 1], dim=-1)",
          "b.unsafe_chunk(2, 0)", "T.unsafe_split(b, 1)"]


def _pieces(T, expr):
    a = T.arange(6.0, dtype=T.float64).reshape(2, 3).requires_grad_()
    b = a.clone()
    return a, b, eval(expr, {"T": T, "b": b})


@pytest.mark.parametrize("expr", SPLITS)
def test_unsafe_splits_record_torchs_nodes_and_values(expr):
    for i in range(len(_pieces(torch, expr)[2])):
        assert graph_of(_pieces(mt, expr)[2][i]) == graph_of(_pieces(torch, expr)[2][i])
        assert_saves_as_torch(lambda T: _pieces(T, expr)[2][i], skip=STRIDES)


@pytest.mark.parametrize("expr", SPLITS)
def test_unsafe_pieces_share_memory_but_not_versions(expr):
    """An in-place change of a piece shows in the input (one memory), bumps no version of the input and is not a
    view's rewrite of history: backward gives torch's gradients."""
    out = []
    for T in (torch, mt):
        a, b, p = _pieces(T, expr)
        with T.no_grad():
            p[0].mul_(2)
        p[-1].add_(1)
        sum(x.sum() for x in p).backward()
        out.append((b.tolist(), b._version, p[0]._version, p[0]._is_view(), a.grad.tolist()))
    assert out[0] == out[1]


@pytest.mark.parametrize("expr", ["a.to(T.float64, copy=True)", "a.to(dtype=T.float64, copy=True)",
                                  "a.t().to(T.float64, copy=True)", "a.to(a, copy=True)", "a.to('cpu', copy=True)"])
def test_a_copy_to_the_same_dtype_is_a_to_copy(expr):
    def make(T):
        a = T.arange(6.0, dtype=T.float64).reshape(2, 3).requires_grad_()
        return a, eval(expr, {"T": T, "a": a})
    (ta, theirs), (ma, mine) = make(torch), make(mt)
    assert graph_of(mine) == graph_of(theirs) and mine.stride() == theirs.stride()
    assert mine.data_ptr() != ma.data_ptr()


@pytest.mark.parametrize("k", [0, 1, -2])
def test_diag_of_a_vector_is_a_diag_embed(k):
    def make(T):
        return T.tensor([1.0, 2.0, -3.0], dtype=T.float64, requires_grad=True).diag(k)
    assert graph_of(make(mt)) == graph_of(make(torch)) and make(mt).tolist() == make(torch).tolist()
    assert_saves_as_torch(make, skip=STRIDES)
    weights = [torch.arange(float(make(torch).numel())), mt.arange(float(make(mt).numel()))]
    grads = []
    for T, w in zip((torch, mt), weights):
        v = T.tensor([1.0, 2.0, -3.0], dtype=T.float64, requires_grad=True)
        (v.diag(k) * w.reshape(v.diag(k).shape).double()).sum().backward()
        grads.append(v.grad.tolist())
    assert grads[0] == grads[1]


@pytest.mark.parametrize("expr", ["F.softmin(a, -1)", "F.softmin(a, 0)", "F.softmin(a)", "T.linalg.norm(a)",
                                  "T.linalg.norm(a, dim=1)", "T.linalg.norm(v)", "T.linalg.norm(a, dim=(1,))",
                                  "T.linalg.norm(a, 3, dim=1)"])
def test_softmin_and_linalg_norm_show_their_arguments_as_torch(expr):
    """softmin's node shows the dim as given (-1 as 2**64 - 1); linalg.norm's default order is the float 2.0."""
    def f(T):
        a = T.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]], dtype=T.float64, requires_grad=True)
        v = T.tensor([3.0, 4.0], dtype=T.float64, requires_grad=True)
        return eval(expr, {"T": T, "F": T.nn.functional, "a": a, "v": v})
    assert_saves_as_torch(f, skip=STRIDES)


MULTI_DOT_SHAPES = [[(2, 3), (3, 2), (2, 3)], [(2, 3), (3, 2), (2, 1)], [(5, 1), (1, 4), (4, 2), (2, 6)],
                    [(3, 4), (4, 5), (5, 2), (2, 7), (7, 1)], [(1, 6), (6, 2), (2, 8), (8, 3), (3, 3), (3, 2)],
                    [(4, 4)] * 4, [(3,), (3, 4), (4, 2), (2, 5), (5,)], [(2, 3), (3, 2)], [(3,), (3, 2), (2, 4)],
                    [(2, 3), (3,)]]


@pytest.mark.parametrize("shapes", MULTI_DOT_SHAPES, ids=str)
def test_multi_dot_multiplies_in_torchs_order_and_ends_in_a_view(shapes):
    """torch multiplies the chain in its cheapest order and views the product as the result's shape; small
    whole numbers make every order's products exact, so the values and saved tensors compare bit for bit."""
    rng = np.random.default_rng(len(shapes))
    arrays = [rng.integers(-3, 4, s).astype(float) for s in shapes]

    def f(T):
        return T.linalg.multi_dot([T.tensor(a, requires_grad=True) for a in arrays])
    assert graph_of(f(mt)) == graph_of(f(torch)) and f(mt).tolist() == f(torch).tolist()
    assert_saves_as_torch(f, skip=STRIDES)


@pytest.mark.parametrize("expr", ["T.complex(a, a).real", "T.complex(a, a).imag", "T.complex(a, a)[0].real",
                                  "T.float_power(a, 2)", "T.float_power(2, a)", "T.float_power(a.abs(), 0.5)",
                                  "F.softplus(a)", "F.softplus(a, 2)",
                                  "T.autograd.grad(F.leaky_relu(a * 1, 0.2, inplace=True).sum(), a,"
                                  " create_graph=True)[0]"])
def test_more_nodes_show_their_arguments_as_torch(expr):
    """z.real's select shows its dim counted from the front; float_power takes a number as a double (2.0);
    softplus's defaults are the ints 1 and 20; in-place leaky_relu's backward node shows its slope."""
    def f(T):
        a = T.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]], dtype=T.float64, requires_grad=True)
        return eval(expr, {"T": T, "F": T.nn.functional, "a": a})
    assert_saves_as_torch(f, skip=STRIDES)


FOLDS = ["F.unfold(x(2, 4, 4), 2)", "F.unfold(x(1, 2, 4, 4), 2)", "F.fold(F.unfold(x(2, 4, 4), 2), (4, 4), 2)",
         "F.fold(x(8, 9), (4, 4), 2)", "F.unfold(x(0, 2, 4, 4), 2)", "F.fold(x(0, 8, 9), (4, 4), 2)",
         "F.unfold(x(2, 5, 5), 3, 2, 1, 2)", "F.fold(x(18, 4), (5, 5), 3, 2, 1, 2)"]
BAD_FOLDS = ["F.unfold(x(2, 4, 4), (2,))", "F.unfold(x(4, 4), 2)", "F.fold(x(8, 9), (4, 4), (2,))",
             "F.unfold(x(1, 1, 1, 4, 4), 2)", "F.fold(x(4), (2, 2), 1)", "F.fold(x(1, 1, 4, 1), (2, 2), 1)",
             "F.unfold(x(2, 0, 4), 2)", "F.fold(x(4, 0), (2, 2), 2)", "F.unfold(x(2, 4, 4), 2, dilation=(1,))",
             "F.fold(x(8, 9), (4,), 2)"]


def _folded(T, expr):
    def x(*shape):
        return T.arange(float(np.prod(shape)), dtype=T.float64).reshape(*shape).sin().requires_grad_()
    return eval(expr, {"F": T.nn.functional, "x": x})


@pytest.mark.parametrize("expr", FOLDS)
def test_unfold_and_fold_take_unbatched_inputs_as_torch(expr):
    """(C, H, W) for unfold and (C*kh*kw, L) for fold, one node each, as torch's; the same values and gradients"""
    theirs, mine = _folded(torch, expr), _folded(mt, expr)
    assert graph_of(mine) == graph_of(theirs) and mine.tolist() == theirs.tolist()
    assert_saves_as_torch(lambda T: _folded(T, expr), skip=STRIDES)


@pytest.mark.parametrize("expr", BAD_FOLDS)
def test_unfold_and_fold_refuse_as_torch(expr):
    with pytest.raises(Exception) as theirs:
        _folded(torch, expr)
    with pytest.raises(type(theirs.value)) as mine:
        _folded(mt, expr)
    assert str(theirs.value) in str(mine.value)


def test_same_padding_with_an_even_span_warns_once_as_torch():
    """torch warns once a process that padding='same' with an even kernel span copies the input (it pads it)."""
    from tests.test_round15_warnings import _run
    cases = ["T.nn.functional.conv2d(T.ones(1, 2, 4, 4), T.ones(2, 2, 2, 2), padding='same')",
             "T.nn.functional.conv2d(T.ones(1, 2, 4, 4), T.ones(2, 2, 2, 2), padding='same')",
             "T.nn.functional.conv1d(T.ones(1, 2, 4), T.ones(2, 2, 2), padding='same', dilation=2)"]
    assert _run("microtorch", cases) == _run("torch", cases)
    assert _run("microtorch", cases[2:] + cases[:1])[1][0]  # (an odd span does not spend the warning)


WRITES = ["x.select_scatter(T.zeros(3, dtype=T.float64), 0, 0)",
          "x.slice_scatter(T.zeros(2, 1, dtype=T.float64), 1, 0, 1)",
          "x.index_copy(0, T.tensor([1]), T.zeros(1, 3, dtype=T.float64))", "x.index_fill(1, T.tensor([0, 2]), 5.)",
          "x.put(T.tensor([0, 4]), T.tensor([1., 2.], dtype=T.float64))", "x.clone().fill_diagonal_(3.)",
          "x.masked_fill(x > 0, 1.)", "x.masked_scatter(x > 0, T.ones(6, dtype=T.float64))",
          "x.diagonal_scatter(T.ones(2, dtype=T.float64))"]


@pytest.mark.parametrize("expr", WRITES)
def test_a_write_zeroes_the_gradient_where_it_wrote_exactly(expr):
    """Where an op wrote, the input's gradient is an exact +0.0, even where the gradient arriving is NaN, inf or
    negative (a product with 0 gave NaN and -0.0 there)."""
    out = []
    for T in (torch, mt):
        x = T.tensor([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]], dtype=T.float64, requires_grad=True)
        eval(expr, {"T": T, "x": x}).backward(T.tensor([[float("nan"), -1.0, float("inf")], [-2.0, float("nan"), -3.0]],
                                                       dtype=T.float64))
        out.append([[repr(v) for v in row] for row in x.grad.tolist()])
        out[-1].append([np.copysign(1.0, v) for v in x.grad.reshape(-1).tolist()])
    assert out[0] == out[1]


NAN_GRADS = ["F.max_pool1d(x[None], 2)", "F.max_pool2d(x[None, None], 2, 1)", "F.max_pool2d(x[None, None], 2, 1, 1)",
             "F.max_pool3d(x[None, None, None], (1, 2, 2), 1)", "F.adaptive_max_pool2d(x[None, None], (1, 2))",
             "F.embedding(T.tensor([0, 1, 0]), x, padding_idx=0)",
             "F.embedding(T.tensor([[0, 1], [1, 1]]), x, padding_idx=1)",
             "F.embedding_bag(T.tensor([0, 1, 1]), x, T.tensor([0, 1]), padding_idx=1)", "x.relu()",
             "x.clamp(-1, 2)", "x.amax(1)", "x.max(1)[0]", "T.where(x > 0, x, 0.)", "x[:, [0, 2]]", "x.sort(1)[0]"]


@pytest.mark.parametrize("expr", NAN_GRADS)
def test_a_nan_gradient_reaches_only_what_it_should(expr):
    """A NaN arriving for one output element stays out of the inputs that element does not depend on: a max pool's
    other window elements and an embedding's padding row get exact zeros, as in torch (a product with a 0/1 mask
    spread it)."""
    out = []
    for T in (torch, mt):
        x = T.tensor([[1.0, -2.0, 3.0], [-0.5, 0.0, 2.5]], dtype=T.float64, requires_grad=True)
        y = eval(expr, {"T": T, "F": T.nn.functional, "x": x})
        g = T.full(y.shape, float("nan"), dtype=T.float64)
        g.view(-1)[::2] = -1.0
        y.backward(g)
        out.append([repr(v) for v in x.grad.reshape(-1).tolist()])
    assert out[0] == out[1]


ONLY_X = ["T.igamma(a, x)", "T.igammac(a, x)", "T.special.zeta(a + 1, x)", "T.polygamma(1, x) * a", "a * x",
          "(a.unsqueeze(1) @ x.unsqueeze(0)).sum(0)", "T.fmod(a, x)"]


@pytest.mark.parametrize("expr", ONLY_X)
def test_a_backward_for_some_inputs_computes_only_theirs(expr):
    """autograd.grad(y, x) and backward(inputs=[x]) ask a built-in node only for x's gradient, as torch's engine
    does: an input whose derivative does not exist (igamma's first) no longer fails them, and what a
    create_graph=True gradient records and saves (pack hooks) is torch's."""
    out = []
    for T in (torch, mt):
        a = T.tensor([1.5, 2.0], dtype=T.float64, requires_grad=True)
        x = T.tensor([0.5, 1.0], dtype=T.float64, requires_grad=True)
        packs = []
        with T.autograd.graph.saved_tensors_hooks(lambda t: packs.append(tuple(t.shape)) or t, lambda t: t):
            y = eval(expr, {"T": T, "a": a, "x": x}).sum()
            (g,) = T.autograd.grad(y, x, create_graph=True)
        y2 = eval(expr, {"T": T, "a": a, "x": x}).sum()
        y2.backward(inputs=[x])
        out.append((np.round(g.tolist(), 12).tolist(), packs, a.grad, np.round(x.grad.tolist(), 12).tolist()))
    assert out[0] == out[1]


@pytest.mark.parametrize("shape", [(2, 3), (3, 2), (3, 3), (2, 2, 4), (4, 2)])
@pytest.mark.parametrize("full", [True, False])
def test_svd_with_full_matrices_is_one_node_as_torch(shape, full):
    """linalg.svd(A) (full_matrices=True, the default) is one LinalgSvdBackward0 that keeps the full U and Vh and
    shows full_matrices; the completed columns get no gradient and a zero tangent. Singular vectors are defined up
    to sign, so gradients and tangents are compared through |U| and |Vh|."""
    rng = np.random.default_rng(sum(shape))
    a, t = rng.standard_normal(shape), rng.standard_normal(shape)
    out = []
    for T in (torch, mt):
        x = T.tensor(a, requires_grad=True)
        U, S, Vh = T.linalg.svd(x, full_matrices=full)
        k = S.shape[-1]
        ((U[..., :k].abs() * S.unsqueeze(-2)).sum() + Vh[..., :k, :].abs().sum() + S.sum()).backward()
        _, tangents = T.func.jvp(lambda v: tuple(p.abs() for p in T.linalg.svd(v, full_matrices=full)),
                                 (T.tensor(a),), (T.tensor(t),))
        node = U.grad_fn
        out.append((graph_of(U), node._saved_full_matrices, x.grad.numpy(), [p.numpy() for p in tangents]))
    (graph_t, flag_t, grad_t, tan_t), (graph_m, flag_m, grad_m, tan_m) = out
    assert graph_m == graph_t and flag_m == flag_t
    assert np.allclose(grad_m, grad_t) and all(np.allclose(p, q, atol=1e-10) for p, q in zip(tan_m, tan_t))


ADDMM_SCALES = [dict(beta=0.5, alpha=2.0), dict(beta=1, alpha=2), dict(beta=0.5), dict(beta=0), dict(alpha=0.5),
                dict(beta=1.0, alpha=1.0), dict()]


@pytest.mark.parametrize("scales", ADDMM_SCALES, ids=str)
def test_addmm_with_scales_is_one_node_that_ignores_input_for_beta_0(scales):
    """addmm(input, a, b, beta=, alpha=) is one AddmmBackward0 showing beta and alpha, as torch's; beta=0 does not read
    input, so its NaNs stay out (torch documents it); small whole numbers make the values exact."""
    rng = np.random.default_rng(3)
    m, a, b = (rng.integers(-3, 4, s).astype(float) for s in ((3, 4), (3, 5), (5, 4)))
    m[0, 0] = np.nan

    def f(T):
        return T.addmm(*(T.tensor(v, requires_grad=True) for v in (m, a, b)), **scales)
    theirs, mine = f(torch), f(mt)
    assert graph_of(mine) == graph_of(theirs)
    np.testing.assert_array_equal(mine.detach().numpy(), theirs.detach().numpy())
    assert_saves_as_torch(lambda T: T.addmm(*(T.tensor(v, requires_grad=True) for v in (np.nan_to_num(m), a, b)),
                                            **scales), skip=STRIDES)
    grads = []
    for T in (torch, mt):
        ts = [T.tensor(v, requires_grad=True) for v in (m, a, b)]
        T.addmm(*ts, **scales).backward(T.ones(3, 4, dtype=T.float64))
        grads.append([t.grad.numpy() for t in ts])
    assert all(np.array_equal(p, q, equal_nan=True) for p, q in zip(*grads))


@pytest.mark.parametrize("scales", ADDMM_SCALES, ids=str)
def test_addmm_with_scales_under_vmap_as_torch(scales):
    """torch's vmap of addmm adds beta * input even for beta=0 (its NaNs come through there): so does microtorch's"""
    rng = np.random.default_rng(4)
    m, a, b = rng.standard_normal((4, 3, 2)), rng.standard_normal((4, 3, 5)), rng.standard_normal((5, 2))
    m[0, 0, 0] = np.nan
    out = []
    for T in (torch, mt):
        batched = T.func.vmap(lambda i, x: T.addmm(i, x, T.tensor(b), **scales))(T.tensor(m), T.tensor(a))
        one_input = T.func.vmap(lambda x: T.addmm(T.tensor(m[0, 0]), x, T.tensor(b), **scales))(T.tensor(a))
        out.append([batched.numpy(), one_input.numpy()])
    assert all(np.allclose(p, q, equal_nan=True) for p, q in zip(*out))


def test_sub_with_alpha_0_gives_torchs_negative_zero():
    out = []
    for T in (torch, mt):
        a, b = T.tensor([1.0, 2.0], requires_grad=True), T.tensor([3.0, 4.0], requires_grad=True)
        a.sub(b, alpha=0).backward(T.tensor([1.0, -2.0]))
        out.append([np.copysign(1.0, v) for v in b.grad.tolist()])
    assert out[0] == out[1]


@pytest.mark.parametrize("shape, size", [((1, 2, 3), 2), ((2, 4, 3, 3), 3), ((1, 3, 2, 2, 2), 5), ((2, 5, 7), 1),
                                         ((1, 6, 4), 4)])
def test_local_response_norm_is_composed_as_torchs(shape, size):
    """squares padded along the channels and averaged by avg_pool2d (avg_pool3d beyond 3 dims): torch's graph, what
    its nodes save, and its values to a few units in the last place"""
    x = np.random.default_rng(size).standard_normal(shape)

    def f(T):
        return T.nn.functional.local_response_norm(T.tensor(x, requires_grad=True), size, alpha=0.1)
    assert graph_of(f(mt)) == graph_of(f(torch))
    np.testing.assert_allclose(f(mt).detach().numpy(), f(torch).detach().numpy(), rtol=1e-15, atol=0)
    packs = []
    for T in (torch, mt):
        seen = []
        with T.autograd.graph.saved_tensors_hooks(lambda t: seen.append(tuple(t.shape)) or t, lambda t: t):
            f(T)
        packs.append(seen)
    assert packs[0] == packs[1]


@pytest.mark.parametrize("expr", ["a.heaviside(c)", "a.heaviside(b)", "c.heaviside(b)", "T.floor_divide(a, c)",
                                  "T.floor_divide(a, b)", "T.floor_divide(c, b)", "a // c", "a.heaviside(c) * a"])
def test_a_node_without_a_derivative_has_edges_to_grad_inputs_only(expr):
    """torch's NotImplemented node (heaviside, floor_divide) links only the inputs that require grad, and raises
    when backward reaches it"""
    out = []
    for T in (torch, mt):
        a, b = T.tensor([1.0, -2.0], requires_grad=True), T.tensor([0.5, 1.0], requires_grad=True)
        y = eval(expr, {"T": T, "a": a, "b": b, "c": T.tensor([0.5, 1.0])})
        with pytest.raises(RuntimeError, match="not implemented"):
            y.sum().backward()
        out.append((graph_of(y), y.tolist()))
    assert out[0] == out[1]
