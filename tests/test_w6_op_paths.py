"""The shorter paths of W6's and W1's ops (issue 14) compute what torch computes: tensor - number and
number - tensor (grad_fn, edges, values, gradients, tangents), relu forward and backward on either side of
the large-array selection (zeros, signed zeros, inf and nan included), the conjugate in mul's backward,
x * x (its two gradient products, as torch's, with and without create_graph), and the k = 1 product of
mm and addmm."""
import warnings

import numpy as np
import pytest
import torch

import microtorch as mt

SPECIAL = [-0.0, 0.0, -1.5, 2.0, np.inf, -np.inf, np.nan]


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True) and np.array_equal(np.signbit(a), np.signbit(b))


def edges(node):
    return [(type(n).__name__ if n is not None else None, nr) for n, nr in node.next_functions]


SUBS = {"h - 2": lambda h: h - 2, "h - 0.5": lambda h: h - 0.5, "2 - h": lambda h: 2 - h,
        "0.5 - h": lambda h: 0.5 - h, "sub(h, 2)": lambda h: h.sub(2), "rsub(h, 2)": lambda h: h.__rsub__(2)}


def sub_program(L, name, dtype):
    h = L.tensor(np.linspace(-1, 1, 6).reshape(2, 3), dtype=getattr(L, dtype), requires_grad=True)
    y = SUBS[name](h)
    g, = L.autograd.grad((y * y).sum(), h, create_graph=True)
    gg, = L.autograd.grad(g.sum(), h)
    return y, y.grad_fn.name(), edges(y.grad_fn), getattr(y.grad_fn, "_saved_alpha", None), g, gg


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("name", list(SUBS))
def test_sub_with_a_number_is_recorded_and_differentiated_as_in_torch(name, dtype):
    ours, theirs = sub_program(mt, name, dtype), sub_program(torch, name, dtype)
    assert str(ours[0].dtype).split(".")[-1] == str(theirs[0].dtype).split(".")[-1]
    assert np.allclose(ours[0].detach().numpy(), theirs[0].detach().numpy())
    assert ours[1:4] == theirs[1:4]
    for a, b in zip(ours[4:], theirs[4:]):
        assert np.allclose(a.detach().numpy(), b.detach().numpy())


@pytest.mark.parametrize("name", list(SUBS))
def test_sub_with_a_number_has_torchs_tangent(name):
    def tangent(L):
        import importlib
        fwad = importlib.import_module(L.__name__ + ".autograd.forward_ad")
        with fwad.dual_level():
            h = fwad.make_dual(L.tensor([0.5, -2.0], dtype=L.float64), L.tensor([1.0, 3.0], dtype=L.float64))
            return fwad.unpack_dual(SUBS[name](h)).tangent.numpy().copy()
    assert np.array_equal(tangent(mt), tangent(torch))


def test_a_number_out_of_float16_range_gives_inf_silently():
    """torch casts the number inside the op: -inf, and no warning (numpy's cast warned before)."""
    for L in (mt, torch):
        h = L.ones(2, dtype=L.float16, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert (h - 1e6).tolist() == [-np.inf, -np.inf]
            assert (1e6 - h).tolist() == [np.inf, np.inf]


def relu_and_grad(L, x, g):
    t = L.tensor(x, requires_grad=True)
    y = L.relu(t)
    y.backward(L.tensor(g))
    return y.detach().numpy(), t.grad.numpy()


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("shape", [(7, 9), (70, 70)])  # below and above the size where the bits are selected
def test_relu_backward_selects_as_torch_at_every_size(dtype, shape):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)
    x.flat[:2 * len(SPECIAL)] = SPECIAL + [-1.0] * len(SPECIAL)
    g.flat[:2 * len(SPECIAL)] = SPECIAL * 2  # where x < 0, an inf or nan gradient becomes +0, not nan
    ours, theirs = relu_and_grad(mt, x, g), relu_and_grad(torch, x, g)
    assert same_bits(ours[0], theirs[0]) and same_bits(ours[1], theirs[1])


def mul_program(L):
    a = L.tensor([1 + 2j, -0.5j, 3.0], requires_grad=True)
    b = L.tensor([2 - 1j, 1 + 1j, -1j], requires_grad=True)
    loss = (a * b * b).abs().sum()
    ga, gb = L.autograd.grad(loss, (a, b))
    return ga.numpy(), gb.numpy()


def test_mul_backward_conjugates_complex_operands():
    for ours, theirs in zip(mul_program(mt), mul_program(torch)):
        assert np.allclose(ours, theirs)


def mm_program(L):
    a = L.tensor([[0.0], [-0.0], [2.0]], dtype=L.float64, requires_grad=True)  # k = 1: a product
    b = L.tensor([[-3.0, 0.0]], dtype=L.float64, requires_grad=True)
    y = a @ b
    ga, gb = L.autograd.grad(y, (a, b), L.tensor([[1.0, -0.0], [-2.0, 0.0], [0.0, 5.0]], dtype=L.float64))
    return y.detach().numpy(), ga.numpy(), gb.numpy(), y.grad_fn.name()


def test_mm_with_k_1_keeps_torchs_signed_zeros():
    ours, theirs = mm_program(mt), mm_program(torch)
    assert ours[3] == theirs[3] == "MmBackward0"
    for a, b in zip(ours[:3], theirs[:3]):
        assert same_bits(a, b)


def graph_names(node, depth=3):
    """The grad_fn names of a graph, depth first, a few levels down."""
    if node is None or depth == 0:
        return []
    return [node.name()] + [graph_names(n, depth - 1) for n, _ in node.next_functions]


def square_program(L, create_graph):
    x = L.tensor([[0.5, -2.0, 0.0], [3.0, -0.0, 1e-3]], dtype=L.float64, requires_grad=True)
    seen = []
    y = x * x
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: seen.append([g.tolist() for g in grad_inputs]))
    x.register_hook(lambda g: seen.append(g.tolist()))
    g, = L.autograd.grad((y * L.tensor([1.0, -3.0, 2.0], dtype=L.float64)).sum(), x, create_graph=create_graph)
    out = [g.detach().numpy().copy(), seen]
    if create_graph:
        out.append(graph_names(g.grad_fn))
        out.append(len({id(n) for n, _ in g.grad_fn.next_functions}))  # torch: two products, not one used twice
        gg, = L.autograd.grad((g * g).sum(), x)
        out.append(gg.numpy())
    return out


@pytest.mark.parametrize("create_graph", [False, True])
def test_mul_of_a_tensor_by_itself_gives_torchs_gradients_hooks_and_graphs(create_graph):
    ours, theirs = square_program(mt, create_graph), square_program(torch, create_graph)
    assert same_bits(ours[0], theirs[0])
    assert ours[1] == theirs[1]
    if create_graph:
        assert ours[2:4] == theirs[2:4]
        assert same_bits(ours[4], theirs[4])


def addmm_program(L):
    bias = L.tensor([-0.0, -0.0], dtype=L.float64)
    x = L.tensor([[0.0], [-0.0], [2.0]], dtype=L.float64)  # k = 1: a product, then the bias added
    w = L.tensor([[-3.0, 0.0]], dtype=L.float64)
    return L.addmm(bias, x, w).numpy(), L.nn.functional.linear(x, w.t(), bias).numpy()


def test_addmm_with_k_1_keeps_torchs_signed_zeros():
    for ours, theirs in zip(addmm_program(mt), addmm_program(torch)):
        assert same_bits(ours, theirs)
