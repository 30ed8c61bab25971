"""The grad_fn graph as torch 2.13 draws it where torch's node takes its inputs as given: addmv, addr, baddbmm and
addbmm broadcast the added input inside (no ExpandBackward0), linalg.cross its two operands, cumsum and cumprod cast
to dtype= inside (no ToCopyBackward0), and block_diag is one BlockDiagBackward0 node (no tree of CatBackward0).
Beside the graph: values, gradients (their dtypes too), what the node saves, second derivatives, jvp and vmap."""
import warnings

import numpy as np
import pytest
import torch

import microtorch as mt
from microtorch._torch_misc import BlockDiag
from tests.saved_compare import assert_saves_as_torch
from tests.saved_compare import graph_of


def _inputs(T, specs, batch=None):
    """One leaf requiring grad per (shape, dtype name), of distinct values (a batch of them in front for vmap)."""
    out = []
    for k, (shape, dt) in enumerate(specs):
        full = ((batch,) if batch else ()) + shape
        v = np.cos(np.arange(int(np.prod(full))) * 0.7 + k).reshape(full) * 2
        dtype = getattr(T, dt)
        out.append(T.tensor(v, dtype=dtype, requires_grad=dtype.is_floating_point or dtype.is_complex))
    return out


D, F = "float64", "float32"
MASK = [1.0, 0.0, 1.0]
CASES = {
    "addmv_row": (lambda T, x, m, v: T.addmv(x, m, v), [((1,), D), ((2, 3), D), ((3,), D)]),
    "addmv_0d": (lambda T, x, m, v: T.addmv(x, m, v, beta=0.5, alpha=-2), [((), D), ((2, 3), D), ((3,), D)]),
    "addmv_beta0": (lambda T, x, m, v: T.addmv(x, m, v, beta=0), [((1,), D), ((2, 3), D), ((3,), D)]),
    "addmv_slice_of_vec": (lambda T, v, m: T.addmv(v[:2], m, v), [((3,), D), ((2, 3), D)]),
    "addmv_empty": (lambda T, x, m, v: T.addmv(x, m, v), [((0,), D), ((0, 3), D), ((3,), D)]),
    "addmv_no_broadcast": (lambda T, x, m, v: T.addmv(x, m, v), [((2,), D), ((2, 3), D), ((3,), D)]),
    "addr_column": (lambda T, x, u, v: T.addr(x, u, v), [((2, 1), D), ((2,), D), ((3,), D)]),
    "addr_0d": (lambda T, x, u, v: T.addr(x, u, v, alpha=3), [((), D), ((2,), D), ((3,), D)]),
    "addr_row_f32": (lambda T, x, u, v: T.addr(x, u, v), [((3,), F), ((2,), F), ((3,), F)]),
    "baddbmm_row": (lambda T, x, a, b: T.baddbmm(x, a, b), [((1, 1, 2), D), ((2, 2, 3), D), ((2, 3, 2), D)]),
    "baddbmm_2d": (lambda T, x, a, b: T.baddbmm(x, a, b, beta=2), [((2, 2), D), ((2, 2, 3), D), ((2, 3, 2), D)]),
    "addbmm_1d": (lambda T, x, a, b: T.addbmm(x, a, b, alpha=0.5), [((2,), D), ((3, 2, 3), D), ((3, 3, 2), D)]),
    "addbmm_column": (lambda T, x, a, b: T.addbmm(x, a, b), [((2, 1), D), ((1, 2, 3), D), ((1, 3, 2), D)]),
    "cross_rows": (lambda T, a, b: T.linalg.cross(a, b), [((2, 3), D), ((1, 3), D)]),
    "cross_first_operand": (lambda T, a, b: T.linalg.cross(a, b), [((1, 3), D), ((4, 3), D)]),
    "cross_dim0": (lambda T, a, b: T.cross(a, b, dim=0), [((3, 1), D), ((3, 4), D)]),
    "cross_both_broadcast": (lambda T, a, b: T.linalg.cross(a, b, dim=-1), [((2, 1, 3), D), ((1, 4, 3), D)]),
    "cross_same_shape": (lambda T, a, b: T.cross(a, b, dim=1), [((2, 3), D), ((2, 3), D)]),
    "cumsum_to_f32": (lambda T, a: a.cumsum(1, dtype=T.float32), [((2, 3), D)]),
    "cumsum_to_f64": (lambda T, a: T.cumsum(a, -1, dtype=T.float64), [((2, 3), F)]),
    "cumsum_to_f16": (lambda T, a: T.cumsum(a, 0, dtype=T.float16), [((4,), D)]),
    "cumsum_same_dtype": (lambda T, a: a.cumsum(0, dtype=T.float64), [((2, 3), D)]),
    "cumsum_0d": (lambda T, a: a.cumsum(0, dtype=T.float32), [((), D)]),
    "cumsum_empty": (lambda T, a: a.cumsum(0, dtype=T.float32), [((0, 3), D)]),
    "cumsum_to_complex": (lambda T, a: T.cumsum(a, 0, dtype=T.complex128), [((4,), D)]),
    "cumprod_to_f32": (lambda T, a: a.cumprod(1, dtype=T.float32), [((2, 3), D)]),
    "cumprod_to_f64": (lambda T, a: T.cumprod(a, 0, dtype=T.float64), [((2, 3), F)]),
    "cumprod_zeros": (lambda T, a: (a * T.tensor(MASK, dtype=a.dtype)).cumprod(-1, dtype=T.float32),
                      [((2, 3), D)]),
    "cumprod_0d": (lambda T, a: a.cumprod(0, dtype=T.float32), [((), D)]),
    "cumprod_one_row": (lambda T, a: a.cumprod(0, dtype=T.float32), [((1, 3), D)]),
    "block_diag": (lambda T, a, b, c: T.block_diag(a, b, c), [((2, 3), D), ((2,), D), ((), D)]),
    "block_diag_one": (lambda T, a: T.block_diag(a), [((2, 2), D)]),
    "block_diag_constant": (lambda T, a: T.block_diag(a, T.ones(2, 2, dtype=T.float64)), [((2, 2), D)]),
    "block_diag_dtypes": (lambda T, a, b, c: T.block_diag(a, b, c), [((2, 2), F), ((1, 3), D), ((), "int32")]),
    "block_diag_0d_f64": (lambda T, a, b: T.block_diag(a, b), [((2, 2), F), ((), D)]),
    "block_diag_empty_1d": (lambda T, e, a, s: T.block_diag(e, a, s), [((0,), D), ((2, 2), D), ((), D)]),
    "block_diag_empty_2d": (lambda T, a, e, b: T.block_diag(a, e, b), [((2, 2), D), ((0, 2), D), ((1, 0), D)]),
    "block_diag_complex": (lambda T, a, c: T.block_diag(a, c), [((2, 2), D), ((2,), "complex128")]),
}
NAMES = sorted(CASES)
FUSED = ("addmv", "addr", "baddbmm", "addbmm", "cross")  # (cross: numpy's products round a last bit otherwise)
COMPLEX_RESULT = ("block_diag_complex", "cumsum_to_complex")


def _quiet(f, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*args)


def _weight(T, y):
    """A gradient of y's dtype whose values tell each element apart (a float32 one rounds differently from a cast
    float64: where the cast happens shows)."""
    w = np.sin(np.arange(y.numel()) * 1.3 + 0.4).reshape(tuple(y.shape)) * 3
    return T.tensor(w + (1j * w[::-1] if y.dtype.is_complex else 0), dtype=y.dtype)


def _np(t):
    return t.detach().resolve_conj().numpy() if isinstance(t, torch.Tensor) else np.asarray(t.detach())


def _same(m, t, name):
    """exactly torch's values, but for the products (their sums may add in another order)"""
    assert str(m.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert tuple(m.shape) == tuple(t.shape)
    if name.startswith(FUSED):
        np.testing.assert_allclose(_np(m), _np(t), rtol=1e-6 if "float32" in str(t.dtype) else 1e-12, atol=1e-12)
    else:
        np.testing.assert_array_equal(_np(m), _np(t))


def _run(T, name):
    f, specs = CASES[name]
    xs = _inputs(T, specs)
    y = _quiet(f, T, *xs)
    _quiet(y.backward, _weight(T, y))
    return y, xs


@pytest.mark.parametrize("name", NAMES)
def test_graph_values_and_gradients_as_torch(name):
    (t, t_in), (m, m_in) = _run(torch, name), _run(mt, name)
    assert graph_of(m) == graph_of(t)
    _same(m, t, name)
    assert m.stride() == t.stride()
    for a, b in zip(m_in, t_in):
        assert (a.grad is None) == (b.grad is None)
        if b.grad is not None:
            _same(a.grad, b.grad, name)


@pytest.mark.parametrize("name", [n for n in NAMES if n not in COMPLEX_RESULT])  # (y.sum().backward() needs real)
def test_saves_as_torch(name):
    f, specs = CASES[name]
    assert_saves_as_torch(lambda T: f(T, *_inputs(T, specs)))


@pytest.mark.parametrize("name, needs", [("addmv_row", (True, True, False)), ("addmv_row", (False, False, True)),
                                         ("addr_column", (False, True, False)), ("baddbmm_row", (True, False, True)),
                                         ("addbmm_1d", (False, True, False)), ("cross_rows", (True, False)),
                                         ("cross_rows", (False, True))])
def test_saves_only_what_a_gradient_needs_as_torch(name, needs):
    """mat is saved for vec's gradient, vec for mat's (self for other's...): a second backward then succeeds where
    the one saved tensor is not needed, as in torch"""
    f, specs = CASES[name]
    assert_saves_as_torch(lambda T: f(T, *(x.requires_grad_(n) for x, n in zip(
        [x.detach() for x in _inputs(T, specs)], needs))))


@pytest.mark.parametrize("name, attrs", [
    ("addmv_0d", ("_saved_alpha", "_saved_beta")), ("addr_0d", ("_saved_alpha", "_saved_beta")),
    ("baddbmm_2d", ("_saved_alpha", "_saved_beta")),
    ("addbmm_1d", ("_saved_alpha", "_saved_beta", "_saved_batch1_sym_argsize_0", "_saved_batch1_sym_argsize_1",
                   "_saved_batch2_sym_argsize_2"))])
def test_saved_numbers_as_torch(name, attrs):
    (t, _), (m, _) = _run(torch, name), _run(mt, name)
    assert [getattr(m.grad_fn, a) for a in attrs] == [getattr(t.grad_fn, a) for a in attrs]


def _second(T, name):
    """the gradient's own gradient (create_graph), or None where the gradient has no graph (a linear op)"""
    f, specs = CASES[name]
    xs = _inputs(T, specs)
    y = _quiet(f, T, *xs)
    leaves = [x for x in xs if x.requires_grad]
    gs = _quiet(T.autograd.grad, y, leaves, _weight(T, y), True, True, None, True)
    live = [(g, x) for g, x in zip(gs, leaves) if g is not None and g.requires_grad]
    if not live:
        return None
    total = sum(((g * _weight(T, g)).sum() for g, _ in live), 0)
    total = total.real if total.dtype.is_complex else total
    return list(gs) + list(T.autograd.grad(total, leaves, allow_unused=True))


@pytest.mark.parametrize("name", NAMES)
def test_second_derivatives_as_torch(name):
    theirs, mine = _second(torch, name), _second(mt, name)
    assert (mine is None) == (theirs is None)
    for m, t in zip(mine or (), theirs or ()):
        assert (m is None) == (t is None)
        if t is not None:
            assert str(m.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
            np.testing.assert_allclose(_np(m), _np(t), rtol=1e-6 if "float32" in str(t.dtype) else 1e-12,
                                       atol=1e-12)


def _jvp(T, name):
    f, specs = CASES[name]
    xs = _inputs(T, specs)
    fw = T.autograd.forward_ad
    with fw.dual_level():
        duals = [fw.make_dual(x.detach(), _weight(T, x) * 0.5) if x.requires_grad else x for x in xs]
        y = _quiet(f, T, *duals)
        return fw.unpack_dual(y)


@pytest.mark.parametrize("name", NAMES)
def test_jvp_as_torch(name):
    (tp, tt), (mp, mtan) = _jvp(torch, name), _jvp(mt, name)
    _same(mp, tp, name)
    if name.startswith("cumprod_zeros"):  # (cumprod's jvp at a zero rounds its last bit otherwise, with dtype= or not)
        np.testing.assert_allclose(_np(mtan), _np(tt), rtol=1e-6)
        assert mtan.dtype == mt.float32 and tt.dtype == torch.float32
    else:
        _same(mtan, tt, name)


@pytest.mark.parametrize("name", NAMES)
def test_vmap_as_torch(name):
    f, specs = CASES[name]
    outs = []
    for T in (torch, mt):
        xs = [x.detach() for x in _inputs(T, specs, batch=2)]
        outs.append(_quiet(T.vmap(lambda *a: f(T, *a)), *xs))
    _same(outs[1], outs[0], name)


def test_block_diag_batched_layout_is_each_examples():
    """BlockDiag with lead=1 (vmap's layout: a batch in front) is each example's block_diag, gradients too (the
    empty 1-d block's row left out in backward, as per example)"""
    specs = [((0,), D), ((2, 2), D), ((3,), D), ((), D)]
    xs = _inputs(mt, specs, batch=2)
    out = BlockDiag.apply(*xs, dtype=np.dtype(np.float64), lead=1)
    w = _weight(mt, out)
    out.backward(w)
    for i in range(2):
        ex = [x.detach()[i].requires_grad_() for x in xs]
        one = mt.block_diag(*ex)
        one.backward(w[i])
        np.testing.assert_array_equal(_np(out[i]), _np(one))
        for x, e in zip(xs, ex):
            np.testing.assert_array_equal(_np(x.grad[i]), _np(e.grad))


def test_block_diag_jvp_of_an_integer_block():
    """an integer input has no tangent: its block's tangent is zero"""
    outs = []
    for T in (torch, mt):
        fw = T.autograd.forward_ad
        with fw.dual_level():
            a = fw.make_dual(T.ones(2, 2, dtype=T.float64), T.full((2, 2), 3.0, dtype=T.float64))
            outs.append(fw.unpack_dual(T.block_diag(a, T.tensor([4, 5])))[1])
    _same(outs[1], outs[0], "block_diag")


@pytest.mark.parametrize("dtype", ["float16", "complex64"])
def test_cumsum_adds_in_torchs_accumulate_type(dtype):
    """float16 adds in float32, complex64 in complex128, each result rounded (torch's CPU scan)"""
    v = np.cos(np.arange(3000) * 0.37) * 3
    v = v + 1j * v[::-1] if dtype == "complex64" else v
    outs = [T.tensor(v.astype(dtype)).cumsum(0) for T in (torch, mt)]
    outs += [T.tensor(v).cumsum(0, dtype=getattr(T, dtype)) for T in (torch, mt)]
    _same(outs[1], outs[0], dtype)
    _same(outs[3], outs[2], dtype)


ERRORS = {
    "cumsum to bool": lambda T: T.tensor([True, False]).cumsum(0, dtype=T.bool),
    "cumprod to bool": lambda T: T.tensor([1.0, 2.0]).cumprod(0, dtype=T.bool),
    "cumprod to int of a leaf requiring grad": lambda T: T.ones(2, requires_grad=True).cumprod(0, dtype=T.int64),
    "cumsum to int of a leaf requiring grad": lambda T: T.ones(2, requires_grad=True).cumsum(0, dtype=T.int64),
    "cross of a size-1 dim": lambda T: T.linalg.cross(T.ones(2, 1), T.ones(2, 3)),
    "cross without a dim of size 3": lambda T: T.cross(T.ones(2, 1), T.ones(2, 3)),
    "block_diag of 3 dims": lambda T: T.block_diag(T.ones(2), T.ones(1, 1, 1)),
    "block_diag of a number": lambda T: T.block_diag(T.ones(2), 1),
    "block_diag of a list": lambda T: T.block_diag([T.ones(2)]),
    "cumprod to complex of a real input, backward": lambda T: T.cumprod(
        T.tensor([1.5, 2.0], requires_grad=True), 0, dtype=T.complex64).sum().abs().backward(),
    "cumprod to complex at a zero, backward": lambda T: T.cumprod(
        T.tensor([1.5, 0.0, 2.0], requires_grad=True), 0, dtype=T.complex64).sum().abs().backward(),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_as_torch(name):
    raised = []
    for T in (torch, mt):
        with pytest.raises(Exception) as e:
            _quiet(ERRORS[name], T)
        raised.append(e)
    assert raised[1].type is raised[0].type
    if "complex" in name or "bool" in name or "block_diag of" in name and "number" not in name or "cross" in name:
        assert str(raised[1].value).endswith(str(raised[0].value))


def test_cumsum_and_cumprod_keep_the_integer_dtype_asked():
    for f in ("cumsum", "cumprod"):
        outs = [getattr(T.tensor([300, 3, 7], dtype=T.int32), f)(0, dtype=T.uint8) for T in (torch, mt)]
        _same(outs[1], outs[0], f)
        outs = [getattr(T, f)(T.tensor([1.5, 2.7, -3.2]), 0, dtype=T.int32) for T in (torch, mt)]
        _same(outs[1], outs[0], f)


def test_a_wrong_expectation_fails():
    """the comparisons can fail: the graph of an explicitly expanded input is not torch's addmv graph, and its node
    does not save as torch's"""
    f, specs = CASES["addmv_row"]

    def expanded(T):
        x, m, v = _inputs(T, specs)
        return T.addmv(x.expand(2) if T is mt else x, m, v)
    assert graph_of(expanded(mt)) != graph_of(expanded(torch))
    with pytest.raises(AssertionError):  # (a cast before the op saves self in the new dtype)
        assert_saves_as_torch(lambda T: (_inputs(T, [((2, 3), D)])[0].to(T.float32) if T is mt else
                                         _inputs(T, [((2, 3), D)])[0]).cumprod(1, dtype=T.float32))
    with pytest.raises(AssertionError):
        _same(mt.tensor([1.0, 2.0]).cumsum(0, dtype=mt.float32),
              torch.tensor([1.0, 2.0]).cumsum(0, dtype=torch.float64), "cumsum")
