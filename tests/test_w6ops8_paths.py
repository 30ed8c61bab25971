"""The shorter paths of W6's ops (issue 14), each beside torch 2.13: the case that takes the path gives torch's
values, dtypes, strides and views, and the cases that must not take it (complex, create_graph, an empty input, a
reduction over some dims) still go the general way."""
import numpy as np
import pytest
import torch

import microtorch as mt
from microtorch.ops import linalg, reduce

RNG = np.random.default_rng(8)


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True) and np.array_equal(np.signbit(a.real),
                                                                                          np.signbit(b.real))


def both(program, *args):
    """program(L, *args) run with microtorch and with torch on the same random numbers."""
    state = RNG.bit_generator.state
    ours = program(mt, *args)
    RNG.bit_generator.state = state
    return ours, program(torch, *args)


def counting(monkeypatch, module, name):
    """Count the calls of module.name (a helper that only the general path calls)."""
    calls = []
    real = getattr(module, name)
    monkeypatch.setattr(module, name, lambda *a, **k: calls.append(name) or real(*a, **k))
    return calls


# ---- mm's backward: one numpy product per gradient where nothing records ------------------------
def _matrix(L, shape, column_major, dtype):
    data = RNG.standard_normal(shape[::-1] if column_major else shape)
    if dtype == "complex128":
        data = data + 1j * RNG.standard_normal(data.shape)
    t = L.tensor(data, dtype=getattr(L, dtype))
    return (t.t() if column_major else t).detach().requires_grad_()


def _mm_grads(L, layouts, dtype, n=5):
    a, b = _matrix(L, (n, 3), layouts[0], dtype), _matrix(L, (3, 4), layouts[1], dtype)
    g = _matrix(L, (n, 4), False, dtype).detach()
    return [(r.numpy(), r.stride()) for r in L.autograd.grad(a @ b, (a, b), g)]


@pytest.mark.parametrize("n", [1, 5])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("layouts", [(False, False), (True, False), (False, True), (True, True)])
def test_mm_backward_of_real_matrices_is_one_product_each_with_torchs_layout(layouts, dtype, n, monkeypatch):
    calls = counting(monkeypatch, linalg, "_mm")
    ours, theirs = both(_mm_grads, layouts, dtype, n)
    assert calls == []
    for (o, ostride), (t, tstride) in zip(ours, theirs):
        assert o.dtype == t.dtype and ostride == tstride
        assert np.allclose(o, t, rtol=1e-6 if dtype == "float32" else 1e-13)
    if n == 1:  # b's gradient a^T @ g has an inner size of 1: products only, torch's bits (its gemm multiplies)
        assert same_bits(ours[1][0], theirs[1][0])


def test_mm_backward_of_complex_matrices_keeps_the_general_path(monkeypatch):
    calls = counting(monkeypatch, linalg, "_mm")
    ours, theirs = both(_mm_grads, (True, False), "complex128")
    assert calls == ["_mm", "_mm"]
    for (o, ostride), (t, tstride) in zip(ours, theirs):
        assert np.allclose(o, t, rtol=1e-13) and ostride == tstride


def test_mm_backward_under_create_graph_records_torchs_graph(monkeypatch):
    calls = counting(monkeypatch, linalg, "_mm")
    names = []
    for L in (mt, torch):
        a, b = _matrix(L, (5, 3), False, "float64"), _matrix(L, (3, 4), True, "float64")
        ga, gb = L.autograd.grad((a @ b).sum(), (a, b), create_graph=True)
        names.append([ga.grad_fn.name(), gb.grad_fn.name()])
    assert calls == ["_mm", "_mm"]
    assert names[0] == names[1]


# ---- sum's and mean's backward over every element -------------------------------------------------
SHAPES = [(3, 4), (5, 1), (1, 1), (1,), (), (2, 1, 3), (0, 3)]
DTYPES = ["float64", "float32", "float16"]


def _reduction_grad(L, reduction, shape, dtype):
    """The gradient of a reduction over every element of a non-leaf, as autograd.grad hands it over, and whether
    it is a view, and whether it can be written in place."""
    x = L.tensor(RNG.standard_normal(shape), dtype=getattr(L, dtype), requires_grad=True) * 1
    out = getattr(x, reduction)()
    (g,) = L.autograd.grad(out, x, L.tensor(RNG.standard_normal(()), dtype=getattr(L, dtype)))
    writable = None  # (an empty one: microtorch's add_ on an empty expanded tensor fails, a bug of its own)
    if g.numel():
        try:
            g.add_(0.0)
            writable = True
        except RuntimeError:
            writable = False
    return g.numpy().copy(), g.stride(), g._base is not None, writable


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("reduction", ["sum", "mean"])
def test_the_gradient_of_a_reduction_over_everything_is_torchs(reduction, shape, dtype):
    if reduction == "mean" and 0 in shape:  # (torch lays the empty gradient out densely, microtorch with stride 0)
        pytest.skip("the empty mean's gradient strides differ from torch's (before these paths too)")
    ours, theirs = both(_reduction_grad, reduction, shape, dtype)
    assert same_bits(ours[0], theirs[0])
    assert ours[1:] == theirs[1:]


def test_mean_over_everything_fills_the_gradient_in(monkeypatch):
    calls = counting(monkeypatch, reduce, "expand_to")
    x = mt.tensor(RNG.standard_normal((4, 3)), requires_grad=True)
    x.mean().backward()
    assert calls == []
    assert x.grad.numpy().tolist() == torch.full((4, 3), 1 / 12, dtype=torch.float64).tolist()


@pytest.mark.parametrize("case", ["complex", "empty", "dim", "create_graph"])
def test_mean_takes_the_general_path_where_it_must(case, monkeypatch):
    calls = counting(monkeypatch, reduce, "expand_to")
    results = []
    for L in (mt, torch):
        data = RNG.standard_normal((0, 3) if case == "empty" else (4, 3))
        x = L.tensor(data + 1j * data if case == "complex" else data, requires_grad=True)
        out = x.mean(1) if case == "dim" else x.mean()
        g = L.tensor(2.0 + 1j, dtype=L.complex128) if case == "complex" else L.ones_like(out)
        (gx,) = L.autograd.grad(out, x, g, create_graph=case == "create_graph")
        results.append((gx.detach().numpy().tolist(), None if gx.grad_fn is None else gx.grad_fn.name()))
    assert calls == ["expand_to"]
    assert results[0] == results[1]


# ---- relu's forward: numpy's scalar for a 0-d input becomes an array only then -----------------------
@pytest.mark.parametrize("value", [-0.0, 0.0, -2.5, 3.0, float("nan"), -3, 4])
def test_relu_of_a_0d_tensor_is_torchs_and_saves_its_result(value):
    results = []
    for L in (mt, torch):
        x = L.tensor(value, requires_grad=isinstance(value, float))
        y = x.relu()
        saved = (y.grad_fn._saved_result if y.requires_grad else y).detach().numpy()
        y = y.detach().numpy()
        results.append((y.tobytes(), y.dtype, y.shape, same_bits(saved, y)))
    assert results[0] == results[1]


# ---- broadcasting undone (sum_to): a shape without a size-1 dim has only leading dims to sum ----------
@pytest.mark.parametrize("shapes", [((100, 16), (16,)), ((4, 3), (1, 3)), ((4, 1), (1,)), ((4, 1), (4, 1)),
                                    ((2, 4, 3), (4, 1)), ((2, 1, 3), (1, 3)), ((5, 3), ()), ((0, 3), (3,))])
def test_the_gradient_of_a_broadcast_operand_is_torchs(shapes):
    def program(L):
        a = L.tensor(RNG.standard_normal(shapes[0]), requires_grad=True)
        b = L.tensor(RNG.standard_normal(shapes[1]), requires_grad=True)
        g = L.tensor(RNG.standard_normal(shapes[0]))
        return [(r.numpy(), r.stride(), r._base is not None) for r in L.autograd.grad(a + b * 1, (a, b), g)]
    ours, theirs = both(program)
    for (o, *orest), (t, *trest) in zip(ours, theirs):  # (sums: torch adds in an order of its own)
        assert o.dtype == t.dtype and np.allclose(o, t, rtol=1e-13, atol=1e-13) and orest == trest


# ---- a binary op's layout: two operands in C order answered first (like_torch_pair) ----------------------
LAYOUTS = {
    "C": lambda L, a: a,
    "transposed": lambda L, a: a.t().contiguous().t(),
    "sliced": lambda L, a: L.cat([a, a], 1)[:, ::2],
    "expanded": lambda L, a: a[:1].expand(4, 3),
}


@pytest.mark.parametrize("op", ["add", "sub", "mul"])
@pytest.mark.parametrize("layout_b", list(LAYOUTS))
@pytest.mark.parametrize("layout_a", list(LAYOUTS))
def test_binary_ops_lay_out_results_and_gradients_as_torch(op, layout_a, layout_b):
    def program(L):
        a0 = L.tensor(RNG.standard_normal((4, 3)), requires_grad=True)
        b0 = L.tensor(RNG.standard_normal((4, 3)), requires_grad=True)
        a, b = LAYOUTS[layout_a](L, a0), LAYOUTS[layout_b](L, b0)
        out = getattr(L, op)(a, b)
        g = LAYOUTS[layout_b](L, L.tensor(RNG.standard_normal((4, 3))))
        grads = L.autograd.grad(out, (a0, b0), g)
        return [(r.detach().numpy(), r.stride()) for r in (out,) + grads]
    ours, theirs = both(program)
    for (o, ostride), (t, tstride) in zip(ours, theirs):
        assert same_bits(o, t) and ostride == tstride
