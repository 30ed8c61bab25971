"""What the fuzzer's seeds 400,000-449,999 found, tested directly beside torch 2.13: sgn's gradient is torch's
exact zero tensor, nll_loss's double backward with nothing counted, einsum's saved copies."""
import numpy as np
import pytest
import torch

import microtorch as mt

LIBS = (torch, mt)


def _np(t):
    if t is None:
        return None
    if getattr(t, "_is_zerotensor", lambda: False)():  # (torch's exact zero: numpy() wants force=True)
        return t.detach().numpy(force=True).copy()
    return np.array(t.detach().numpy(), copy=True)


def _same(a, b):
    """equal values, NaN where torch has NaN, the same signs of zeros"""
    if a is None or b is None:
        return a is None and b is None
    return a.shape == b.shape and np.array_equal(a, b, equal_nan=True) and \
        np.array_equal(np.signbit(a) & ~np.isnan(a), np.signbit(b) & ~np.isnan(b))  # (a NaN's sign: no one's business)


def _both(fn):
    out = [fn(L) for L in LIBS]
    return out[0], out[1]


@pytest.mark.parametrize("expr", ["L.sgn(v)", "L.sgn(v) * v", "L.abs(v) * L.sgn(v)", "L.sign(v)", "v.sign() * v",
                                  "L.linalg.vector_norm(v, 1)", "L.norm(v, p=float('inf'))"])
def test_sgn_gradient_divided_by_zero_first_and_second_order(expr):
    """a / b with b = 0 in one place: sgn's gradient (an exact zero in torch) stays 0 through the division,
    sign's (a tensor of zeros in torch) becomes 0 / 0 = nan."""
    def run(L):
        a = L.tensor([1.5], dtype=L.float64, requires_grad=True)
        b = L.tensor([2.0, 0.0, -1.0], dtype=L.float64)
        v = a / b
        y = eval(expr, {"L": L, "v": v})
        g, = L.autograd.grad(y.sum(), a, create_graph=True)
        g2 = L.autograd.grad(g.sum(), a, allow_unused=True)[0] if g.requires_grad else None
        return _np(g), _np(g2)
    (tg, tg2), (mg, mg2) = _both(run)
    assert _same(tg, mg) and _same(tg2, mg2), (tg, mg, tg2, mg2)


def test_sgn_gradient_is_exactly_zero_under_an_infinite_gradient():
    def run(L):
        x = L.tensor([1.0, -2.0, 0.0], dtype=L.float64, requires_grad=True)
        g, = L.autograd.grad(L.sgn(x), x, L.tensor([float("inf"), float("nan"), 1.0], dtype=L.float64))
        return _np(g), _np(g * float("inf")), _np((g + 1) * float("inf"))
    for t, m in zip(*_both(run)):
        assert _same(t, m), (t, m)


@pytest.mark.parametrize("write", ["g.add_(1)", "g.mul_(2)", "g.__setitem__(0, 3.0)", "g.zero_()"])
def test_the_exact_zero_gradient_of_sgn_refuses_to_be_written_into(write):
    """torch's zero tensor is immutable (RuntimeError); writing into a copy works."""
    for L in LIBS:
        x = L.tensor([1.0, -2.0], dtype=L.float64, requires_grad=True)
        g, = L.autograd.grad(L.sgn(x).sum(), x)
        with pytest.raises(RuntimeError, match="(?i)zerotensor"):
            eval(write, {"g": g})
        c = g.clone()
        eval(write, {"g": c})


@pytest.mark.parametrize("red", ["mean", "sum", "none"])
@pytest.mark.parametrize("target", [[], [-100, -100], [0, 2], [1, -100]])
def test_nll_loss_double_backward_in_the_incoming_gradient(red, target):
    """d/ds of the gradient of nll_loss(x) * s: nll_loss of the gradient's gradient, 0 / 0 for 'mean' with
    no counted target (an empty batch, every target ignored)."""
    def run(L):
        x = L.tensor(np.linspace(-1.0, 1.0, 3 * len(target)).reshape(len(target), 3), requires_grad=True)
        s = L.tensor(0.5 if red != "none" else [0.5] * len(target), dtype=L.float64, requires_grad=True)
        t = L.tensor(np.array(target, dtype=np.int64))
        loss = L.nn.functional.nll_loss(L.log_softmax(x, 1), t, reduction=red) * s
        g, = L.autograd.grad(loss.sum(), x, create_graph=True)
        w = L.tensor(np.arange(1.0, 1.0 + g.numel()).reshape(tuple(g.shape)))
        return _np(L.autograd.grad((g * w).sum(), s)[0])
    t, m = _both(run)
    assert t.shape == m.shape and np.allclose(t, m, rtol=1e-12, atol=0, equal_nan=True), (t, m)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", ["max", "min"])
def test_which_zero_max_and_min_over_everything_give(dtype, op):
    """(seeds 401435, 437445) max()/min() of values whose extreme is 0, some +0 and some -0: the sign of the
    zero torch's lanes keep (2.0 / result is +inf or -inf), for sizes below and above the lane width, and for a
    transposed (non-contiguous) input, which torch reads in its logical order."""
    rng = np.random.default_rng(len(dtype) + len(op))
    other = -1.0 if op == "max" else 1.0
    for n in list(range(1, 40)) + [63, 64, 65, 127, 200, 1001]:
        for _ in range(30):
            a = rng.choice(np.array([0.0, -0.0, other]), size=n, p=[0.2, 0.2, 0.6]).astype(dtype)
            if not (a == 0).any():
                continue
            t, m = (getattr(L.tensor(a), op)() for L in LIBS)
            assert np.signbit(t.item()) == np.signbit(m.item()), (n, a)
    a = rng.choice(np.array([0.0, -0.0, other]), size=(6, 5)).astype(dtype)
    t, m = (getattr(L.tensor(a).t(), op)() for L in LIBS)
    assert np.signbit(t.item()) == np.signbit(m.item())


def test_the_negation_of_an_exact_zero_gradient_is_minus_zero():
    """torch's neg of its zero tensor gives an ordinary -0 tensor, so a later product with inf is nan."""
    def run(L):
        x = L.tensor([1.0, -2.0], dtype=L.float64, requires_grad=True)
        g, = L.autograd.grad(L.sgn(x).sum(), x)
        return _np(-g), _np(-g * float("inf"))
    for t, m in zip(*_both(run)):
        assert _same(t, m), (t, m)


TWO_OPERANDS = ["L.atan2({0}, {1})", "L.hypot({0}, {1})", "L.fmod({0}, {1})", "L.remainder({0}, {1})",
                "L.lerp({0}, {1}, 0.3)", "L.xlogy({0}, {1})", "L.copysign({0}, {1})", "L.fmax({0}, {1})",
                "L.logaddexp({0}, {1})", "L.clamp({0}, min={1})", "L.maximum({0}, {1})", "L.mul({0}, {1})",
                "L.div({0}, {1})", "L.pow({0}, {1})", "F.mse_loss({0}, {1})", "F.huber_loss({0}, {1})"]


@pytest.mark.parametrize("expr", TWO_OPERANDS)
@pytest.mark.parametrize("grad_of", [0, 1])
def test_an_operand_not_needed_by_backward_may_change_in_place(expr, grad_of):
    """(seed 500935) only one operand requires grad; the other changes in place before backward: torch raises only
    where the gradient needs the changed operand (fmod, remainder, hypot and copysign saved it always)."""
    def run(L):
        xs = [L.tensor([0.5, 1.5], dtype=L.float64), L.tensor([0.7, 0.2], dtype=L.float64)]
        xs[grad_of].requires_grad_()
        y = eval(expr.format("xs[0]", "xs[1]"), {"L": L, "F": L.nn.functional, "xs": xs})
        xs[1 - grad_of].mul_(2)
        try:
            return _np(L.autograd.grad(y.sum(), xs[grad_of])[0])
        except RuntimeError as e:
            return "modified in place" if "inplace" in str(e) else str(e)
    t, m = _both(run)
    assert (t == m) if isinstance(t, str) or isinstance(m, str) else np.allclose(t, m, rtol=1e-12), (t, m)


@pytest.mark.parametrize("op", ["fmod", "remainder", "hypot", "copysign"])
@pytest.mark.parametrize("grad_of", [0, 1])
def test_what_these_ops_save_is_torchs(op, grad_of):
    """grad_fn._saved_self / _saved_other / _saved_result: a tensor's shape, None, or no such attribute, as torch."""
    def run(L):
        xs = [L.tensor([0.5, 1.5], dtype=L.float64), L.tensor([0.7, 0.2], dtype=L.float64)]
        xs[grad_of].requires_grad_()
        node = getattr(L, op)(*xs).grad_fn
        return [tuple(v.shape) if v is not None else None
                for v in (getattr(node, f"_saved_{k}", "absent") for k in ("self", "other", "result"))
                if not isinstance(v, str)], [hasattr(node, f"_saved_{k}") for k in ("self", "other", "result")]
    t, m = _both(run)
    assert t == m


def _names(t):
    out, stack = [], [t.grad_fn]
    while stack:
        n = stack.pop()
        if n is not None:
            out.append(n.name())
            stack += [f for f, _ in n.next_functions]
    return out


DIM_OPS = ["L.cummax(x, 0).values", "L.cummin(x, -1).values", "L.cumprod(x, 0)", "L.cumsum(x, 0)",
           "L.logcumsumexp(x, 0)", "x.unfold(0, 1, 1)", "L.tile(x, (2,))", "L.tile(x, (2, 1, 1))",
           "F.normalize(x, dim=0)", "F.normalize(x, p=1.0, dim=-1)"]


@pytest.mark.parametrize("expr", DIM_OPS)
@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_dim_ops_record_torchs_nodes_and_gradients(expr, shape):
    """(wider fuzz profile: seeds 500006, 500027, 500092, 500207, 500491) a 0-d input gets the op's own node
    (CummaxBackward0, CumprodBackward0, UnfoldBackward0...), not views or a clone around it; tile of fewer dims is
    one RepeatBackward0; normalize clamps with clamp_min (ClampMinBackward0); values, first and second order."""
    def run(L):
        x = L.tensor(np.linspace(0.5, 2.0, int(np.prod(shape))).reshape(shape), requires_grad=True)
        y = eval(expr, {"L": L, "F": L.nn.functional, "x": x})
        g, = L.autograd.grad((y * y).sum(), x, create_graph=True)
        g2, = L.autograd.grad(g.sum(), x)
        return _names(y), _np(y), _np(g), _np(g2)
    (tn, *tv), (mn, *mv) = _both(run)
    assert tn == mn
    assert all(np.allclose(a, b, rtol=1e-12) for a, b in zip(tv, mv)), (tv, mv)


@pytest.mark.parametrize("dims", [0, -1, (0,)])
def test_roll_of_a_0d_tensor_along_a_dim_is_an_index_error(dims):
    for L in LIBS:
        with pytest.raises(IndexError):
            L.roll(L.tensor(1.0), 1, dims)
        assert L.roll(L.tensor(1.0), 1).item() == 1.0


def test_layer_norm_over_no_dims_is_refused_as_torch():
    """(seed 500026) normalized_shape () (x.shape[-1:] of a 0-d x): torch's RuntimeError."""
    for L in LIBS:
        with pytest.raises(RuntimeError, match="normalized_shape"):
            L.nn.functional.layer_norm(L.tensor(0.5, dtype=L.float64), ())


@pytest.mark.parametrize("n, size, step", [(4, 2, 2), (3, 1, 1), (5, 2, 3), (6, 3, 3)])
def test_unfold_is_a_view_as_torchs(n, size, step):
    """(seed 501726) unfold's windows are a view of the input (they were a copy, and read-only when the windows
    happened to be contiguous): an in-place op on them writes into the input, an in-place op on the input shows
    in them, with torch's graph and gradients."""
    def run(L):
        x = L.tensor(np.arange(1.0, n + 1), requires_grad=True)
        y = x * 1
        u = y.unfold(0, size, step)
        u.mul_(2)
        g, = L.autograd.grad((y * L.arange(1.0, n + 1, dtype=L.float64)).sum(), x)
        z = L.tensor(np.arange(6.0).reshape(2, 3))
        w = z.unfold(1, 2, 1)
        z.mul_(10)
        return _np(y), _np(g), y.grad_fn.name(), u.grad_fn.name(), u._version, _np(w), w.stride(), w._base is z
    t, m = _both(run)
    for a, b in zip(t, m):
        assert (np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b), (t, m)


def test_copysigns_gradient_for_its_sign_operand_has_no_graph():
    """(seeds 500398, 501448, 503461) torch's zeros_like(other): no requires_grad even under create_graph with a
    gradient that requires grad."""
    def run(L):
        x = L.tensor([1.5, -2.0], dtype=L.float64, requires_grad=True)
        y = L.tensor([-1.0, 3.0], dtype=L.float64, requires_grad=True)
        w = L.tensor([2.0, 0.5], dtype=L.float64, requires_grad=True)
        gx, gy = L.autograd.grad((L.copysign(x, y) * w).sum(), (x, y), create_graph=True)
        return gx.requires_grad, gy.requires_grad, _np(gx), _np(gy)
    t, m = _both(run)
    assert t[:2] == m[:2] and all(np.array_equal(a, b) for a, b in zip(t[2:], m[2:])), (t, m)


@pytest.mark.parametrize("op", ["sgn", "sign"])
def test_sgn_keeps_its_input_and_result_sign_nothing(op):
    """(seed 502244) torch's sgn saves self and result (writing into its result makes backward raise), sign saves
    nothing (its result may change in place)."""
    def run(L):
        x = L.tensor([1.5, -2.0], dtype=L.float64, requires_grad=True)
        y = getattr(L, op)(x)
        y[0] = 2.0
        try:
            return _np(L.autograd.grad(y.sum(), x)[0])
        except RuntimeError as e:
            return "modified in place" if "inplace" in str(e) else str(e)
    t, m = _both(run)
    assert (t == m) if isinstance(t, str) or isinstance(m, str) else np.array_equal(t, m), (t, m)


@pytest.mark.parametrize("op", ["hardshrink", "softshrink"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_shrinks_keep_nan_and_the_sign_of_zero(op, dtype):
    """(seeds 500042, 500128, 502607, 503935) torch's shrinks pass a NaN on. (Over fewer elements than a vector,
    torch's scalar loop gives softshrink -0.0 for a negative x inside [-lambd, lambd] and passes the gradient at a
    NaN, its vectorised loop +0.0 and 0: 16 elements here, the vectorised loop's.)"""
    vals = np.array([np.nan, -1.0, -0.5, -0.3, -0.0, 0.0, 0.3, 0.5, 0.7, 5.0, np.inf, -np.inf, np.nan, -0.4, 0.1,
                     2.0], dtype)

    def run(L):
        x = L.tensor(vals, requires_grad=True)
        y = getattr(L.nn.functional, op)(x, 0.5)
        g, = L.autograd.grad(y, x, L.tensor(np.linspace(1.0, 2.0, vals.size).astype(dtype)), create_graph=True)
        return _np(y), _np(g)
    for t, m in zip(*_both(run)):
        assert _same(t, m), (t, m)


@pytest.mark.parametrize("loss, kw", [("smooth_l1_loss", {"beta": 1.0}), ("smooth_l1_loss", {"beta": 0.5}),
                                      ("smooth_l1_loss", {"beta": 3.0}), ("huber_loss", {"delta": 1.0}),
                                      ("huber_loss", {"delta": 0.5})])
@pytest.mark.parametrize("red", ["sum", "mean"])
def test_smooth_l1_and_huber_second_order_at_the_bend(loss, kw, red):
    """(seed 500756) the second derivative is 1 / beta strictly inside (-beta, beta) and 0 at |d| = beta, as
    torch's double backward (clamp's derivative counted the bend)."""
    b = next(iter(kw.values()))

    def run(L):
        x = L.tensor([0.0, b, b / 2, 2 * b, -b, -b / 2, 0.3, float("nan")], dtype=L.float64, requires_grad=True)
        y = getattr(L.nn.functional, loss)(x, L.zeros(8, dtype=L.float64), reduction=red, **kw)
        g, = L.autograd.grad(y, x, create_graph=True)
        g2, = L.autograd.grad((g[:7] * L.arange(1.0, 8.0, dtype=L.float64)).sum(), x)
        return _np(y), _np(g), _np(g2)
    for t, m in zip(*_both(run)):
        assert t.shape == m.shape and np.allclose(t, m, rtol=1e-15, atol=0, equal_nan=True), (t, m)


@pytest.mark.parametrize("shape", [(), (2,)])
def test_copysign_second_order_of_a_0d_tensor(shape):
    """(seed 507770) as hypot's below: copysign's 0-d result was kept as a constant (second order -1.43, not 0)."""
    def run(L):
        a = L.tensor(np.ones(shape), requires_grad=True)
        g, = L.autograd.grad((L.copysign(a, L.tensor(np.zeros(shape))) * 1.3 + a * 0.7).sum(), a, create_graph=True)
        return _np(g), _np(L.autograd.grad((g * 1.1).sum(), a)[0])
    for t, m in zip(*_both(run)):
        assert _same(t, m), (t, m)


@pytest.mark.parametrize("shape", [(), (2,)])
def test_hypot_second_order_through_its_result(shape):
    """(seed 501014) hypot's backward reads its result; of 0-d operands numpy gave a scalar, which backward kept
    as a constant, so the second order missed the path through the result (inf where torch has nan)."""
    def run(L):
        a = L.tensor(np.zeros(shape), requires_grad=False)
        b = L.tensor(np.zeros(shape) if shape == () else np.array([0.0, 0.5]), requires_grad=True)
        g, = L.autograd.grad(L.hypot(a, b).sum(), b, create_graph=True)
        return _np(g), _np(L.autograd.grad(g.sum(), b)[0])
    for t, m in zip(*_both(run)):
        assert _same(t, m), (t, m)


@pytest.mark.parametrize("op", ["fmod", "remainder"])
def test_fmod_and_remainder_second_order_at_a_zero_divisor(op):
    """(seed 500923) the divisor's gradient -g * (a // b) is torch's rounded division (DivBackward2), whose own
    gradient is 0: no 0 / 0 = nan where b = 0 in the second order."""
    def run(L):
        a = L.tensor([1.0, -2.5, 3.0], dtype=L.float64, requires_grad=True)
        b = L.tensor([0.0, 2.0, -0.7], dtype=L.float64, requires_grad=True)
        y = getattr(L, op)(a, b)
        g = L.autograd.grad((y * y).sum(), [a, b], create_graph=True)
        return [_np(x) for x in g] + [_np(x) for x in L.autograd.grad(sum(x.sum() for x in g), [a, b])]
    for t, m in zip(*_both(run)):
        assert np.allclose(t, m, rtol=1e-12, equal_nan=True), (t, m)


@pytest.mark.parametrize("bounds", ["min=lo", "max=hi", "min=lo, max=hi", "min=hi, max=lo", "min=lo, max=lo"])
def test_clamp_with_tensor_bounds_routes_the_gradient_as_torch(bounds):
    """(seed 501747) x's gradient where lo <= x <= hi (none at a NaN x), lo's where x < lo < hi, hi's where x > hi
    or hi < lo: torch's masks, NaN, infinities and equal bounds included."""
    def run(L):
        x = L.tensor([np.inf, -np.inf, np.nan, 0.5, -1.0, -2.0, 1.0, 3.0], dtype=L.float64, requires_grad=True)
        lo = L.tensor(-1.0, dtype=L.float64, requires_grad=True)
        hi = L.tensor(1.0, dtype=L.float64, requires_grad=True)
        y = eval(f"L.clamp(x, {bounds})", {"L": L, "x": x, "lo": lo, "hi": hi})
        gs = L.autograd.grad(y, [x, lo, hi], L.arange(1.0, 9.0, dtype=L.float64), allow_unused=True)
        return [_np(y)] + [_np(g) for g in gs]
    for t, m in zip(*_both(run)):
        assert _same(t, m), (t, m)


@pytest.mark.parametrize("shape, normalized, affine", [((2, 3, 4), (4,), False), ((2, 3, 4), (3, 4), True),
                                                       ((5,), (5,), True), ((0, 3), (3,), True), ((2, 3), (3,), False),
                                                       ((2, 3), (3,), "weight")])
def test_layer_norm_is_one_node_as_torch(shape, normalized, affine):
    """(wider profile: seeds 500247, 500481 and about 1% of its programs) torch's native_layer_norm is one node,
    NativeLayerNormBackward0, with an edge for input, weight and bias (None where absent); values, first and
    second order as torch's."""
    rng = np.random.default_rng(len(shape) + len(normalized))
    xv, wv, bv = rng.standard_normal(shape), rng.standard_normal(normalized), rng.standard_normal(normalized)

    def run(L):
        x = L.tensor(xv, requires_grad=True)
        w = L.tensor(wv, requires_grad=True) if affine else None
        b = L.tensor(bv, requires_grad=True) if affine is True else None
        y = L.nn.functional.layer_norm(x, normalized, w, b)
        ins = [t for t in (x, w, b) if t is not None]
        g = L.autograd.grad((y * y * L.tensor(np.arange(y.numel()).reshape(y.shape) % 3 + 1.0)).sum(), ins,
                            create_graph=True)
        g2 = L.autograd.grad(sum((t * t).sum() for t in g), ins)
        edges = [f.name() if f is not None else None for f, _ in y.grad_fn.next_functions]
        return (y.grad_fn.name(), edges), [_np(t) for t in (y, *g, *g2)]
    (tn, tv), (mn, mv) = _both(run)
    assert tn == mn
    assert all(np.allclose(a, b, rtol=1e-9, atol=1e-12) for a, b in zip(tv, mv))


@pytest.mark.parametrize("scaled", ["v * 2.5", "v / 3", "2.5 * v"])
def test_sgns_exact_zero_through_a_product_with_a_number(scaled):
    """(seed 496868) torch's zero tensor times (or over) a number is still an exact zero: norm's gradient then
    divided by a zero divisor gives 0 in the second order, not nan."""
    def run(L):
        a = L.tensor([[0.5]], dtype=L.float64, requires_grad=True)
        b = L.tensor([[2.0, -1.0, 0.0]], dtype=L.float64)
        v = a / b
        y = L.norm(eval(scaled, {"v": v}), p=float("inf"))
        g, = L.autograd.grad(y, a, create_graph=True)
        return _np(g), _np(L.autograd.grad(g.sum(), a)[0])
    for t, m in zip(*_both(run)):
        assert _same(t, m), (t, m)


def test_copysign_second_order_at_a_zero():
    """(seeds 500398, 501883) torch's gradient is grad * (result / x) with 0 written where x = 0: its own
    derivative there is nan, and the first-order value at x = -0 is +0."""
    def run(L):
        x = L.tensor([0.0, -0.0, 1.0, -2.0], dtype=L.float64, requires_grad=True)
        v = L.copysign(x, L.tensor([1.0, -1.0, -1.0, 2.0], dtype=L.float64))
        g, = L.autograd.grad((v * 1.5).sum(), x, create_graph=True)
        return _np(g), _np(L.autograd.grad((g * g).sum(), x)[0]), [f is not None for f, _ in g.grad_fn.next_functions]
    t, m = _both(run)
    assert _same(t[0], m[0]) and _same(t[1], m[1]) and t[2] == m[2], (t, m)


@pytest.mark.parametrize("shape", [(1, 2), (3, 2), (2, 2), (0, 3)])
def test_trace_gradient_is_zero_off_the_diagonal_even_for_a_nan_gradient(shape):
    """(seed 507206) torch writes the gradient onto the diagonal (index_fill): 0 elsewhere, not 0 * nan."""
    def run(L):
        a = L.tensor(np.ones(shape), requires_grad=True)
        s = L.tensor(float("nan"), dtype=L.float64, requires_grad=True)
        g, = L.autograd.grad(L.trace(a) * s, a, create_graph=True)
        return _np(g), _np(L.autograd.grad((g * 2).sum(), s)[0])
    for t, m in zip(*_both(run)):
        assert _same(t, m), (t, m)


def test_ldexp_differentiates_in_a_floating_exponent_and_saves_it():
    """torch's ldexp(x, e) = x 2^e has a gradient for a floating e (x 2^e ln 2), and keeps e for x's gradient:
    e changed in place afterwards makes backward raise."""
    def run(L):
        a = L.tensor([0.6, 1.5], dtype=L.float64, requires_grad=True)
        b = L.tensor([0.3, 2.0], dtype=L.float64, requires_grad=True)
        y = L.ldexp(a, b)
        g = L.autograd.grad((y * y).sum(), [a, b], create_graph=True)
        g2 = L.autograd.grad(sum((x * x).sum() for x in g), [a, b])
        c = L.tensor([0.3, 2.0], dtype=L.float64)
        z = L.ldexp(a, c)
        c.add_(1)
        try:
            L.autograd.grad(z.sum(), a)
            raised = False
        except RuntimeError:
            raised = True
        return [_np(x) for x in (*g, *g2, L.ldexp(a, L.tensor([1, 2])))], raised
    (t, tr), (m, mr) = _both(run)
    assert tr == mr and all(np.allclose(x, y, rtol=1e-14) for x, y in zip(t, m))
