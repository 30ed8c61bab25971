"""What the fuzzer's wide profile (seeds 500,000-545,999) found, tested directly beside torch 2.13: aminmax's
gradient at a NaN extreme and its saved results, torch's floor division (div's 'floor' mode, floor_divide,
remainder's gradient), the median of all elements (saved result, masked_fill gradient), repeat's backward of an
empty tensor, logcumsumexp's log-space gradient and first value, rot90's copies, what nodes save (nan_to_num, div
with a rounding mode, ldexp, special.i1), einsum's diagonal before a sum, sgn's exact zero and its views, dist's
backward, and fills of an expanded tensor. (Sort, topk, kthvalue and mode: tests/test_fuzz10_order.py.)"""
import warnings

import numpy as np
import pytest
import torch

import microtorch as mt
from _machine import libm_agrees, within_ulps

LIBS = (torch, mt)


def _same(a, b):
    """equal values and dtypes, NaN where torch has NaN, the same signs of zeros and infinities"""
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=True) and \
        np.array_equal(np.signbit(a) & ~np.isnan(a), np.signbit(b) & ~np.isnan(b))


def _same_libm(a, b, ulps, cancelling=False):
    """_same, or within `ulps` where this machine's exp, log and pow are not numpy's (_machine.py)"""
    return _same(a, b) if libm_agrees() else within_ulps(a, b, ulps, cancelling)


def _both(fn):
    return [fn(L) for L in LIBS]


def _grads(L, make, wrt, out, weight=None):
    x = L.tensor(wrt, requires_grad=True)
    y = make(L, x)
    w = L.tensor(np.ones(tuple(y.shape)) if weight is None else weight)
    g, = L.autograd.grad((y * w).sum(), x)
    return g.numpy()


X_NAN = np.array([[1.0, 2.0, -1.0], [1.0, np.nan, 3.0], [0.5, 2.0, 3.0]])


@pytest.mark.parametrize("dim", [0, 1, -1, None])
@pytest.mark.parametrize("which", ["max", "min", "both"])
@pytest.mark.parametrize("keepdim", [False, True])
def test_aminmax_gradient_at_a_nan_and_at_ties(dim, which, keepdim):
    """torch divides by the count of the extreme (0 where it is NaN) and then masks: NaN over that slice; ties share
    the gradient with torch's rounding (g / count, not g * (1 / count))."""
    def make(L, x):
        r = L.aminmax(x * 1.0, dim=dim, keepdim=keepdim)
        return {"max": r.max, "min": r.min, "both": r.max * 0.7 + r.min * 1.3}[which]
    shape = () if dim is None else (1, 3) if keepdim and dim == 0 else (3, 1) if keepdim else (3,)
    weight = np.random.default_rng(3).uniform(0.5, 1.5, shape)
    for x in (X_NAN, np.where(np.isnan(X_NAN), 2.0, X_NAN)):
        t, m = _both(lambda L: _grads(L, make, x, None, weight))
        assert _same(t, m), (t, m)


SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 3.0, -3.0, 0.5, 7.5, 1e308, -1e-308, 5e-324])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("n", [1, 7, 300])
def test_floor_division_is_torchs(dtype, n):
    """div(rounding_mode='floor') and floor_divide take fmod first (as torch and Python): -3 // inf is -1 where
    floor(-3 / inf) is -0, inf // 1 is NaN where floor(inf / 1) is inf; every pair of special values, and random
    ones, in the scalar (1 element) and the vectorised (300) loops of torch."""
    rng = np.random.default_rng(n)
    a, b = np.repeat(SPECIAL, len(SPECIAL)), np.tile(SPECIAL, len(SPECIAL))
    with np.errstate(over="ignore"):  # (1e308 is inf in float32)
        a = np.concatenate([a, rng.normal(size=n) * 10.0 ** rng.integers(-3, 4, n)]).astype(dtype)
        b = np.concatenate([b, rng.normal(size=n) * 10.0 ** rng.integers(-3, 4, n)]).astype(dtype)
    pairs = [(a[i:i + 1], b[i:i + 1]) for i in range(len(a))] if n == 1 else [(a, b)]
    for x, y in pairs:
        for call in (lambda L: L.div(L.tensor(x), L.tensor(y), rounding_mode="floor"),
                     lambda L: L.floor_divide(L.tensor(x), L.tensor(y)), lambda L: L.tensor(x) // L.tensor(y)):
            t, m = _both(lambda L: call(L).numpy())
            assert _same(t, m), (x, y, t, m)


@pytest.mark.parametrize("a, b", [(-np.inf, 1.0), (np.inf, 2.0), (-3.0, np.inf), (7.5, -np.inf), (5.0, 2.0),
                                  (1e308, 1e-308), (np.nan, 1.0)])
def test_remainder_divisor_gradient_first_and_forward_mode(a, b):
    """d remainder(a, b) / db = -(a // b) with torch's floor division, in backward and in forward mode."""
    def run(L):
        x, y = L.tensor([a], requires_grad=True), L.tensor([b], requires_grad=True)
        ga, gb = L.autograd.grad(L.remainder(x, y).sum(), (x, y))
        fa = L.autograd.forward_ad
        with fa.dual_level():
            out = L.remainder(fa.make_dual(L.tensor([a]), L.tensor([1.0])), fa.make_dual(L.tensor([b]), L.tensor([2.0])))
            tangent = fa.unpack_dual(out).tangent
        return ga.numpy(), gb.numpy(), tangent.numpy()
    with np.errstate(all="ignore"):
        t, m = _both(run)
    for u, v in zip(t, m):
        assert _same(u, v), (t, m)


@pytest.mark.parametrize("fn", ["median", "nanmedian"])
def test_median_of_all_saves_self_and_result(fn):
    """MedianBackward0 / NanmedianBackward0 save self and the result (torch's _saved_self, _saved_result): the result
    changed in place makes backward raise torch's RuntimeError."""
    def run(L):
        x = L.tensor([[0.5, -1.0], [2.0, 0.5]], dtype=L.float64, requires_grad=True)
        m = getattr(L, fn)(x * 2)
        saved = (m.grad_fn._saved_self.detach().numpy().copy(), m.grad_fn._saved_result.detach().numpy().copy())
        m.sub_(0.5)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            m.backward()
        return saved
    t, m = _both(run)
    assert all(_same(u, v) for u, v in zip(t, m))


@pytest.mark.parametrize("x", [[[0.5, -1.0], [2.0, 0.5]], [[np.nan, 1.0, np.nan]], [[3.0, 1.0, 1.0, 3.0, 1.0]]])
@pytest.mark.parametrize("g", [0.7, np.inf, np.nan])
def test_median_of_all_gradient_is_a_masked_fill(x, g):
    """torch's CPU backward: zeros with grad / count written where x equals the median (NaN where it is NaN), so
    an infinite or NaN gradient leaves the other places 0; under create_graph its node is MaskedFillBackward1."""
    def run(L):
        t = L.tensor(x, dtype=L.float64, requires_grad=True)
        w = L.tensor(g, dtype=L.float64, requires_grad=True)
        out, = L.autograd.grad(L.median(t) * w, t, create_graph=True)
        return out.detach().numpy().copy(), out.grad_fn.name(), [n is None for n, _ in out.grad_fn.next_functions]
    with np.errstate(all="ignore"):
        (tv, tn, te), (mv, mn, me) = _both(run)
    assert _same(tv, mv) and tn == mn and te == me, (tv, mv, tn, mn)


@pytest.mark.parametrize("reps", [(2, 1), (2, 3), (1, 1), (3, 0), (1, 2, 1), (2, -1), (2, 2, -3)])
def test_repeat_backward_of_an_empty_tensor(reps):
    """torch's repeat backward returns zeros only for a count of 0; an empty dim repeated otherwise is reshaped and
    summed (SumBackward1 under create_graph), and a negative count (allowed on an empty dim) makes that reshape
    raise in backward"""
    def run(L):
        x = L.tensor(np.zeros((1, 0)), requires_grad=True)
        y = x.repeat(*reps)
        w = L.ones(tuple(y.shape), dtype=L.float64, requires_grad=True)
        try:
            g, = L.autograd.grad(y, x, w, create_graph=True)
        except RuntimeError:
            return "RuntimeError", tuple(y.shape)
        return (g.grad_fn.name() if g.grad_fn is not None else None), tuple(g.shape), tuple(y.shape)
    t, m = _both(run)
    assert t == m


@pytest.mark.parametrize("dim", [0, None])
@pytest.mark.parametrize("shape", [(1,), (2, 2)])
def test_aminmax_saves_self_min_max_and_refuses_a_changed_result(dim, shape):
    """torch's AminmaxBackward0 shows _saved_self, _saved_min, _saved_max, _saved_dim, _saved_keepdim; a result
    changed in place makes backward raise (a 0-d result too)"""
    def run(L):
        x = L.tensor(np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape), requires_grad=True)
        r = L.aminmax(x * 1, dim=dim)
        node = r.max.grad_fn
        seen = (node._saved_dim, node._saved_keepdim, node._saved_min.detach().numpy().copy(),
                node._saved_max.detach().numpy().copy())
        r.max.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            r.min.sum().backward()
        return seen
    t, m = _both(run)
    assert t[:2] == m[:2] and _same(t[2], m[2]) and _same(t[3], m[3])


@pytest.mark.parametrize("seed", range(12))
def test_logcumsumexp_gradient_first_and_second_order_as_torch(seed):
    """values of torch's log-space backward and of its own derivative (NaN, inf and 0 gradients; -inf and inf
    inputs), bit for bit, and the graph it leaves under create_graph"""
    rng = np.random.default_rng(seed)
    shape = tuple(rng.integers(1, 5, 3))
    x, g = rng.normal(size=shape) * 3, rng.normal(size=shape)
    x[rng.random(shape) < 0.15] = [-np.inf, np.inf][seed % 2]
    g[rng.random(shape) < 0.2] = [np.nan, np.inf, 0.0][seed % 3]
    d = seed % 3

    def run(L):
        xx, gg = L.tensor(x, requires_grad=True), L.tensor(g, requires_grad=True)
        gx, = L.autograd.grad(L.logcumsumexp(xx, d), xx, gg, create_graph=True)
        second = L.autograd.grad((gx * 0.7).sum(), (xx, gg))
        return [gx.detach().numpy().copy()] + [s.numpy() for s in second] + [gx.grad_fn.name()]
    with np.errstate(all="ignore"):
        t, m = _both(run)
    assert all(_same_libm(a, b, 4, cancelling=k == 1) for k, (a, b) in enumerate(zip(t[:3], m[:3]))) and t[3] == m[3]


@pytest.mark.parametrize("k", range(-1, 5))
@pytest.mark.parametrize("shape, transposed", [((1, 1), False), ((2, 3), False), ((3, 2), True), ((2, 3, 4), False)])
def test_rot90_layout_and_independence(k, shape, transposed):
    """torch's rot90 is a contiguous clone (k = 0), a flip (k = 2), or a flip then a transposed view of it (k = 1,
    3): the same strides, and writing into the result leaves the input alone"""
    def run(L):
        base = L.tensor(np.arange(float(np.prod(shape))).reshape(shape))
        r = L.rot90(base.transpose(0, -1) if transposed else base, k)
        seen = r.numpy().copy(), r.stride(), r.is_contiguous()
        r.add_(100.0)
        return seen + (base.numpy().copy(),)
    t, m = _both(run)
    assert _same(t[0], m[0]) and t[1:3] == m[1:3] and _same(t[3], m[3])


def test_saved_tensors_of_ldexp_div_rounded_nan_to_num_special_i1():
    """what torch's nodes keep: ldexp the exponent and the result (its input may change), div with a rounding
    mode self (when other needs a gradient) and other, nan_to_num self, special.i1 self and result; the
    gradient of ldexp's exponent is grad * result * ln 2, bit for bit"""
    def run(L):
        a = L.tensor([0.3, -1.6], dtype=L.float64, requires_grad=True)
        b = L.tensor([3.0, -2.0], dtype=L.float64, requires_grad=True)  # (2 ** e exact: torch's pow is not numpy's)
        x, e = a * 1, b * 1
        names = []
        for y in (L.ldexp(x, e), L.div(x, e, rounding_mode="floor"), L.nan_to_num(x), L.special.i1(x)):
            names.append(sorted(n for n in ("_saved_self", "_saved_other", "_saved_result")
                                if getattr(y.grad_fn, n, None) is not None))
        ge, = L.autograd.grad(L.ldexp(x, e), e, L.tensor([1.3, -0.7]))
        return names, ge.numpy()
    (tn, tg), (mn, mg) = _both(run)
    assert tn == mn and _same(tg, mg)


@pytest.mark.parametrize("equation, sa, sb", [("aa,ca->c", (3, 3), (1, 1)), ("aab,b->", (2, 2, 3), (3,)),
                                              ("aba,c->c", (2, 3, 2), (4,)), ("aa,a->", (3, 3), (3,)),
                                              ("aaa,->", (2, 2, 2), ()), ("abb,ab->a", (2, 3, 3), (2, 3))])
def test_einsum_with_a_diagonal_keeps_what_torch_keeps(equation, sa, sb):
    """a repeated label's diagonal, then the sum of a label only that operand has: torch's product keeps the sum,
    so the operand may change in place afterwards (where it keeps a view of the operand, backward raises in both)"""
    def run(L):
        x = L.tensor(np.arange(float(np.prod(sa))).reshape(sa) - 2, requires_grad=True)
        y = L.tensor(np.arange(1.0, 1 + np.prod(sb)).reshape(sb) * 0.5, requires_grad=True)  # (exact sums)
        v = x * 1.5
        out = L.einsum(equation, v, y)
        v.add_(1.0)
        try:
            return out.detach().numpy().copy(), [g.numpy() for g in L.autograd.grad(out.sum(), (x, y))]
        except RuntimeError:
            return out.detach().numpy().copy(), "RuntimeError"
    (tv, tg), (mv, mg) = _both(run)
    assert _same(tv, mv) and (tg == mg if isinstance(tg, str) or isinstance(mg, str)
                              else all(_same(a, b) for a, b in zip(tg, mg)))


@pytest.mark.parametrize("seed", range(4))
def test_logcumsumexp_of_special_values_bit_for_bit(seed):
    """-0, infinities and NaN along every dim: torch's first value is x + 0 (a -0 is +0), the rest its log-add"""
    rng = np.random.default_rng(seed)
    for _ in range(40):
        shape = tuple(rng.integers(1, 5, rng.integers(1, 3)))
        x = rng.choice([-0.0, 0.0, 1.0, -np.inf, np.inf, np.nan, -2.5, 3.0], size=shape)
        d = int(rng.integers(0, len(shape)))
        t, m = _both(lambda L: L.logcumsumexp(L.tensor(x), d).numpy())
        assert _same(t, m), (x, d)


VIEWS = {"getitem": lambda g: g[0], "slice": lambda g: g[::2], "view": lambda g: g.view(-1), "t": lambda g: g.t(),
         "reshape": lambda g: g.reshape(4), "unsqueeze": lambda g: g.unsqueeze(0), "diagonal": lambda g: g.diagonal(),
         "expand": lambda g: g[0:1].expand(3, 2), "select": lambda g: g.select(1, 0), "split": lambda g: g.split(1)[0],
         "permute": lambda g: g.permute(1, 0), "mT": lambda g: g.mT, "narrow": lambda g: g.narrow(0, 0, 1)}


@pytest.mark.parametrize("view", VIEWS)
def test_sgns_exact_zero_gradient_and_its_views(view):
    """autograd.grad of sgn is torch's efficient zero tensor: its class prints as a Tensor, _is_zerotensor() is
    True, and a view of it is one too (torch's views of a zero tensor), immutable as the original"""
    def run(L):
        x = L.tensor([[1.0, -2.0], [3.0, 4.0]], requires_grad=True)
        g, = L.autograd.grad(L.sgn(x).sum(), x)
        v = VIEWS[view](g)
        with pytest.raises(RuntimeError, match="ZeroTensors are immutable"):
            v.add_(1.0)
        return g._is_zerotensor(), v._is_zerotensor(), type(g).__name__, tuple(v.shape)
    t, m = _both(run)
    assert t == m


@pytest.mark.parametrize("p", [2, 1, 3, 0.5, 1.5, float("inf"), 0])
@pytest.mark.parametrize("b", [[[0.0, 1.0]], [[1.0, 3.0]]])
def test_dist_first_and_second_order_as_torch(p, b):
    """norm's backward of a - b (NaN second order at a zero distance for p = 2); p = 0: no gradient for a, and
    torch's RuntimeError when b needs one"""
    def run(L):
        x, y = L.tensor([[0.0, 1.0]], requires_grad=True), L.tensor(b, requires_grad=True)
        try:
            g = L.autograd.grad(L.dist(x, y, p) * 1.3, (x, y), create_graph=True)
        except RuntimeError:
            return "RuntimeError"
        g2 = L.autograd.grad(sum((v * 0.7).sum() for v in g), (x, y), allow_unused=True)
        second = [None if v is None else np.abs(v.numpy(force=True)) for v in g2]  # (a zero's sign: not compared)
        return [v.detach().numpy().copy() for v in g] + second
    with np.errstate(all="ignore"):
        t, m = _both(run)
    assert t == m if isinstance(t, str) or isinstance(m, str) else all(_same_libm(u, v, 4) for u, v in zip(t, m))


@pytest.mark.parametrize("op", ["masked_fill_", "masked_fill_mixed", "index_fill_", "fill_", "add_"])
def test_fills_of_an_expanded_tensor(op):
    """masked_fill_ and index_fill_ on an expanded tensor: torch's deprecation warning and a write into the shared
    memory (a mixed mask fills the element every masked position shares); add_ is refused, fill_ silent"""
    calls = {"masked_fill_": lambda L, v: v.masked_fill_(v > 0, 1.5),
             "masked_fill_mixed": lambda L, v: v.masked_fill_(L.tensor([[[True, False], [False, False]]]), 7.0),
             "index_fill_": lambda L, v: v.index_fill_(2, L.tensor([0]), 5.0), "fill_": lambda L, v: v.fill_(2.0),
             "add_": lambda L, v: v.add_(1.0)}

    def run(L):
        base = L.tensor([[1.0]])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                calls[op](L, base.expand((1, 2, 2)))
            except RuntimeError:
                return "RuntimeError"
        return base.numpy().copy(), [str(w.message).split(".")[0] for w in caught]
    t, m = _both(run)
    assert t == m if isinstance(t, str) or isinstance(m, str) else (_same(t[0], m[0]) and t[1] == m[1])


@pytest.mark.parametrize("op", ["addcmul", "addcdiv"])
def test_addcmul_addcdiv_saved_tensors_by_who_needs_a_gradient(op):
    """for every choice of operands that need a gradient and of the operand changed in place afterwards: backward
    raises exactly where torch's does (addcmul: each tensor kept for the other's gradient; addcdiv: tensor2 always)"""
    def run(L):
        seen = []
        for rg in ("x", "1", "2", "12", "x12"):
            for changed in (1, 2):
                leaves = [L.tensor(v, requires_grad=k in rg) for k, v in (("x", [1.0, -1.0]), ("1", [0.5, 2.0]),
                                                                          ("2", [1.5, 3.0]))]
                ins = [t * 1 for t in leaves]
                y = getattr(L, op)(*ins, value=0.5)
                ins[changed].mul_(2)
                try:
                    y.sum().backward()
                    seen.append("ok")
                except RuntimeError:
                    seen.append("raise")
        return seen
    t, m = _both(run)
    assert t == m


PRODUCTS = {"cross": lambda L, a, b: L.linalg.cross(a[:3], b[:3]), "addmv": lambda L, a, b: L.addmv(a[:2], a.reshape(2, 2), b[:2]),
            "addr": lambda L, a, b: L.addr(a.reshape(2, 2), a[:2], b[:2]), "ldexp": lambda L, a, b: L.ldexp(a, b),
            "baddbmm": lambda L, a, b: L.baddbmm(a.reshape(1, 2, 2), a.reshape(1, 2, 2), b.reshape(1, 2, 2)),
            "addbmm": lambda L, a, b: L.addbmm(a.reshape(2, 2), a.reshape(1, 2, 2), b.reshape(1, 2, 2)),
            "lerp_weight": lambda L, a, b: L.lerp(a, a * 0 + 1, b), "lerp_self_weight": lambda L, a, b: L.lerp(a, b, a),
            "index_add": lambda L, a, b: a.index_add(0, L.tensor([0, 1]), b[:2], alpha=2)}


@pytest.mark.parametrize("op", PRODUCTS)
def test_products_keep_each_operand_for_the_others_gradient(op):
    """cross, addmv, addr, baddbmm, addbmm keep an operand only for the other's gradient, ldexp its exponent only
    for x's (and its result), lerp with a tensor weight start and end only for the weight's (the weight always),
    index_add its source for the source's: which in-place change afterwards makes backward raise is torch's"""
    def run(L):
        seen = []
        for needs in ("a", "b"):
            for changed in ("a", "b", "out"):
                a0 = L.tensor([0.3, 0.6, 0.2, 0.8], requires_grad=needs == "a")
                b0 = L.tensor([0.7, 0.4, 0.9, 0.1], requires_grad=needs == "b")
                a, b = a0 * 1, b0 * 1
                y = PRODUCTS[op](L, a, b)
                {"a": a, "b": b, "out": y}[changed].mul_(1.5)
                try:
                    y.sum().backward()
                    seen.append("ok")
                except RuntimeError:
                    seen.append("raise")
        return seen
    t, m = _both(run)
    assert t == m
