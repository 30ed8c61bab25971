"""The backward formulas of mm, addmm, mul and relu take shorter paths when nothing records them (issue 14):
they must still give torch's values, gradient layouts, graphs under create_graph (grad_fn names and edges, a few
levels down), second derivatives, and work under vmap (jacrev) and forward-over-reverse AD (func.jvp of
func.grad). Every case is run beside torch 2.13."""
import numpy as np
import pytest
import torch

import microtorch as mt

RNG = np.random.default_rng(14)


def close(ours, theirs):
    """Equal up to the rounding of the dtype (float32 sums cancel: scaled by the largest element)."""
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    eps = np.finfo(theirs.dtype).eps
    return ours.dtype == theirs.dtype and np.allclose(ours, theirs, rtol=100 * eps,
                                                      atol=100 * eps * np.abs(theirs).max(initial=1))


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True) and np.array_equal(np.signbit(a.real),
                                                                                          np.signbit(b.real))


def graph(node, depth=4):
    """grad_fn names and edges, depth first, a few levels down."""
    if node is None or depth == 0:
        return None if node is None else node.name()
    return [node.name()] + [(graph(n, depth - 1), nr) for n, nr in node.next_functions]


def matrix(L, shape, column_major, dtype, grad=True):
    """A leaf of the given layout (column_major: the transpose of a row-major array, as `w.t()` is)."""
    data = RNG.standard_normal(shape[::-1] if column_major else shape)
    if dtype == "complex128":
        data = data + 1j * RNG.standard_normal(data.shape)
    t = L.tensor(data, dtype=getattr(L, dtype))
    t = t.t() if column_major else t
    return t.detach().requires_grad_(grad)


def both(program, *args):
    """program run with microtorch and with torch on the same random inputs."""
    state = RNG.bit_generator.state
    ours = program(mt, *args)
    RNG.bit_generator.state = state
    return ours, program(torch, *args)


PRODUCTS = {
    "a @ b": lambda L, a, b, c: a @ b,
    "mm(a, b)": lambda L, a, b, c: L.mm(a, b),
    "addmm(c, a, b)": lambda L, a, b, c: L.addmm(c, a, b),
    "linear": lambda L, a, b, c: L.nn.functional.linear(a, b.t(), c),
}
LAYOUTS = [(False, False), (True, False), (False, True), (True, True)]


def product_program(L, name, layouts, dtype, needs):
    a = matrix(L, (5, 3), layouts[0], dtype, needs[0])
    b = matrix(L, (3, 4), layouts[1], dtype, needs[1])
    c = matrix(L, (4,), False, dtype, False)
    y = PRODUCTS[name](L, a, b, c)
    g = matrix(L, (5, 4), False, dtype, False)
    wanted = [t for t, n in zip((a, b), needs) if n]
    first = L.autograd.grad(y, wanted, g, retain_graph=True)
    out = [y.grad_fn.name()] + [(r.detach().numpy().copy(), r.stride()) for r in first]
    grads = L.autograd.grad((y * y).sum().real if dtype == "complex128" else (y * y).sum(), wanted, create_graph=True)
    out += [graph(r.grad_fn) for r in grads]
    second = L.autograd.grad(sum((r * r).sum().real if dtype == "complex128" else (r * r).sum() for r in grads),
                             wanted)
    return out + [r.numpy() for r in second]


@pytest.mark.parametrize("needs", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128"])
@pytest.mark.parametrize("layouts", LAYOUTS)
@pytest.mark.parametrize("name", list(PRODUCTS))
def test_products_give_torchs_gradients_layouts_and_double_backward_graphs(name, layouts, dtype, needs):
    ours, theirs = both(product_program, name, layouts, dtype, needs)
    assert ours[0] == theirs[0]
    n = sum(needs)
    for (og, ostride), (tg, tstride) in zip(ours[1:1 + n], theirs[1:1 + n]):
        assert close(og, tg)
        assert ostride == tstride
    assert ours[1 + n:1 + 2 * n] == theirs[1 + n:1 + 2 * n]
    for o, t in zip(ours[1 + 2 * n:], theirs[1 + 2 * n:]):
        assert close(o, t)


def test_mm_backward_keeps_torchs_signed_zeros_in_both_layouts():
    def program(L, column_major):
        a = L.tensor([[0.0, -0.0], [-0.0, 2.0]], dtype=L.float64)
        a = (a.t().contiguous().t() if column_major else a).detach().requires_grad_()
        b = L.tensor([[-0.0, 1.0], [0.0, -0.0]], dtype=L.float64, requires_grad=True)
        g = L.tensor([[-0.0, 0.0], [1.0, -0.0]], dtype=L.float64)
        return [r.numpy() for r in L.autograd.grad(a @ b, (a, b), g)]
    for column_major in (False, True):
        ours, theirs = both(program, column_major)
        for o, t in zip(ours, theirs):
            assert same_bits(o, t)


def mlp(L, x, w1, w2):
    return ((x @ w1).relu() @ w2).tanh().sum()


def test_jacrev_of_grad_through_mm_is_torchs():
    """vmap over the backward of mm (jacrev of grad: the hessian, one row per batch element)."""
    def program(L, wrt):
        x = matrix(L, (4, 3), False, "float64", False)
        w1, w2 = matrix(L, (3, 5), False, "float64", False), matrix(L, (5, 2), True, "float64", False)
        args = [x, w1, w2]

        def f(*ws):
            return mlp(L, *ws)
        return L.func.jacrev(L.func.grad(f, argnums=wrt), argnums=wrt)(*args).numpy()
    for wrt in (0, 1, 2):
        ours, theirs = both(program, wrt)
        assert close(ours, theirs)


def test_forward_over_reverse_through_mm_is_torchs():
    """func.jvp of func.grad: the backward of mm meets tensors carrying tangents."""
    def program(L):
        x = matrix(L, (4, 3), False, "float64", False)
        w1, w2 = matrix(L, (3, 5), True, "float64", False), matrix(L, (5, 2), False, "float64", False)
        v = matrix(L, (3, 5), False, "float64", False)
        _, hvp = L.func.jvp(L.func.grad(lambda w: mlp(L, x, w, w2)), (w1,), (v,))
        return hvp.numpy()
    ours, theirs = both(program)
    assert close(ours, theirs)


def test_vmap_of_vjp_through_mm_is_torchs():
    def program(L):
        x = matrix(L, (4, 3), True, "float64", False)
        w = matrix(L, (3, 5), False, "float64", False)
        _, vjp = L.func.vjp(lambda w: x @ w, w)
        cotangents = matrix(L, (6, 4, 5), False, "float64", False)
        return L.vmap(vjp)(cotangents)[0].numpy()
    ours, theirs = both(program)
    assert close(ours, theirs)


@pytest.mark.parametrize("column_major", [False, True])
def test_backward_of_mm_carries_a_dual_operands_tangent_as_torch(column_major):
    """A backward without create_graph under forward AD: the gradient is a dual tensor whose tangent comes from the
    tangent of the other operand (the transposed operand must keep it)."""
    def program(L):
        import importlib
        fwad = importlib.import_module(L.__name__ + ".autograd.forward_ad")
        with fwad.dual_level():
            w = fwad.make_dual(matrix(L, (3, 2), column_major, "float64", False),
                               matrix(L, (3, 2), False, "float64", False))
            x = matrix(L, (4, 3), column_major, "float64")
            gx, = L.autograd.grad((x @ w).sum(), x)
            return gx.numpy().copy(), fwad.unpack_dual(gx).tangent.numpy().copy()
    ours, theirs = both(program)
    for o, t in zip(ours, theirs):
        assert close(o, t)


@pytest.mark.parametrize("layouts", LAYOUTS)
def test_vmap_of_vjp_through_mm_in_every_layout_is_torchs(layouts):
    def program(L):
        x = matrix(L, (4, 3), layouts[0], "float64", False)
        w = matrix(L, (3, 5), layouts[1], "float64", False)
        _, vjp = L.func.vjp(lambda x, w: x @ w, x, w)
        cotangents = matrix(L, (6, 4, 5), False, "float64", False)
        return [g.numpy() for g in L.vmap(vjp)(cotangents)]
    ours, theirs = both(program)
    for o, t in zip(ours, theirs):
        assert close(o, t)


# ---- mul of a tensor by itself: one product, and a copy for the other, when nothing records them ---------------
SQUARES = {"row-major": lambda L: L.tensor(RNG.standard_normal((3, 4)), dtype=L.float64),
           "column-major": lambda L: L.tensor(RNG.standard_normal((4, 3)), dtype=L.float64).t(),
           "0-d": lambda L: L.tensor(-0.0, dtype=L.float64),
           "float32": lambda L: L.tensor(RNG.standard_normal((5,)), dtype=L.float32),
           "complex": lambda L: L.tensor(RNG.standard_normal((2, 3)) + 1j * RNG.standard_normal((2, 3)))}


@pytest.mark.parametrize("name", list(SQUARES))
def test_square_gives_torchs_gradient_bits_and_layout(name):
    def program(L):
        x = SQUARES[name](L).detach().requires_grad_()
        y = x * x
        g = L.tensor(RNG.standard_normal(tuple(y.shape)[::-1]), dtype=y.dtype).T  # (the layout of y, when y's is
        if y.dtype.is_complex:                                                       # column-major)
            g = g + 1j * L.tensor(RNG.standard_normal(tuple(y.shape)[::-1])).T
        gx, = L.autograd.grad(y, x, g)  # (not .grad: AccumulateGrad's layout rule is another matter)
        return gx.numpy().copy(), gx.stride()
    ours, theirs = both(program)
    # (torch's complex product rounds differently from numpy's in the last bit, with or without this path)
    assert close(*ours[0:1], *theirs[0:1]) if name == "complex" else same_bits(ours[0], theirs[0])
    assert ours[1] == theirs[1]


def test_square_hands_its_node_hooks_two_tensors_as_torch():
    """A node hook that changes one gradient in place changes only that one (they are not one tensor)."""
    def program(L):
        x = L.tensor([[1.0, -2.0], [0.5, 3.0]], dtype=L.float64, requires_grad=True)
        y = x * x
        seen = []

        def hook(grad_inputs, grad_outputs):
            seen.append(grad_inputs[0] is grad_inputs[1])
            grad_inputs[0].mul_(10)
        y.grad_fn.register_hook(hook)
        y.sum().backward()
        return x.grad.numpy(), seen
    ours, theirs = both(program)
    assert same_bits(ours[0], theirs[0])
    assert ours[1] == theirs[1] == [False]


def test_square_under_forward_ad_and_vmap_is_torchs():
    def program(L):
        import importlib
        fwad = importlib.import_module(L.__name__ + ".autograd.forward_ad")
        x0, v = RNG.standard_normal((3,)), RNG.standard_normal((3,))
        with fwad.dual_level():
            x = fwad.make_dual(L.tensor(x0), L.tensor(v))
            w = L.tensor(x0 + 1, requires_grad=True)
            gw, = L.autograd.grad((w * w * x).sum(), w)  # (the tangent of x reaches the square's gradient)
            tangent = fwad.unpack_dual(gw).tangent.numpy().copy()
        _, vjp = L.func.vjp(lambda x: x * x, L.tensor(x0))
        batched = L.vmap(vjp)(L.tensor(RNG.standard_normal((4, 3))))[0]
        hessian = L.func.hessian(lambda x: (x * x * x).sum())(L.tensor(x0))
        return [gw.numpy().copy(), tangent, batched.numpy(), hessian.numpy()]
    ours, theirs = both(program)
    for o, t in zip(ours, theirs):
        assert close(o, t)


def test_square_under_create_graph_records_torchs_two_products():
    def program(L):
        x = L.tensor([[1.0, -2.0], [0.5, -0.0]], dtype=L.float64, requires_grad=True)
        g, = L.autograd.grad((x * x * x).sum(), x, create_graph=True)
        gg, = L.autograd.grad((g * g).sum(), x)
        return graph(g.grad_fn, 6), len({id(n) for n, _ in g.grad_fn.next_functions[0][0].next_functions}), gg.numpy()
    ours, theirs = both(program)
    assert ours[:2] == theirs[:2]
    assert same_bits(ours[2], theirs[2])


@pytest.mark.parametrize("layouts", LAYOUTS)
def test_create_graph_saves_the_transposed_operand_as_a_view_with_its_version(layouts):
    """Under create_graph, an operand that needs no gradient is still saved (as mat2.t(), a view) by the product
    that the gradient records: changing it in place before the double backward is torch's error."""
    def program(L):
        x = matrix(L, (4, 3), layouts[0], "float64")
        w = matrix(L, (3, 2), layouts[1], "float64", False)
        g0 = matrix(L, (4, 2), False, "float64")
        gx, = L.autograd.grad(x @ w, x, g0, create_graph=True)
        saved = [getattr(n, name) for n in (gx.grad_fn, *(e for e, _ in gx.grad_fn.next_functions if e))
                 for name in ("_saved_self", "_saved_mat2") if hasattr(n, name)]
        bases = [s._base is not None for s in saved if s is not None]
        with L.no_grad():
            w.mul_(2)
        try:
            L.autograd.grad(gx.sum(), g0)
            return bases, None
        except RuntimeError as e:
            return bases, str(e).split(":")[0]
    ours, theirs = both(program)
    assert ours == theirs
    assert theirs[1] is not None


# ---- backward formulas computed straight in numpy where nothing records (elementwise.plain) -----------------------
def tensors(L, dtype, shape, column_major=False):
    data = RNG.standard_normal(shape[::-1] if column_major else shape)
    if dtype.startswith("complex"):
        data = data + 1j * RNG.standard_normal(data.shape)
    t = L.tensor(data, dtype=getattr(L, dtype))
    return t.T if column_major else t


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex128"])
@pytest.mark.parametrize("shape", [(), (5,), (3, 4)])
def test_product_and_quotient_by_a_number_give_torchs_gradient_bits(dtype, shape):
    def program(L):
        x = tensors(L, dtype, shape, column_major=len(shape) == 2).detach().requires_grad_()
        g = tensors(L, dtype, shape, column_major=len(shape) == 2)
        gx, = L.autograd.grad(x * 2.5, x, g)
        gy, = L.autograd.grad(-0.0 * x, x, g)
        gz, = L.autograd.grad(x / 3, x, g)
        gw, = L.autograd.grad(x / -0.0, x, g)
        return [(r.numpy().copy(), r.stride(), str(r.dtype)) for r in (gx, gy, gz, gw)]
    ours, theirs = both(program)
    for (o, ostride, odtype), (t, tstride, tdtype) in zip(ours, theirs):
        assert close(o, t) if dtype.startswith("complex") else same_bits(o, t)
        assert ostride == tstride and odtype.split(".")[-1] == tdtype.split(".")[-1]


@pytest.mark.parametrize("layouts", LAYOUTS)
def test_product_of_two_tensors_gives_torchs_gradient_bits_and_layouts(layouts):
    def program(L):
        a = tensors(L, "float64", (3, 4), layouts[0]).detach().requires_grad_()
        b = tensors(L, "float64", (3, 4), layouts[1]).detach().requires_grad_()
        c = tensors(L, "float64", (4,)).detach().requires_grad_()  # (broadcast: its gradient is summed back)
        g = tensors(L, "float64", (3, 4), layouts[0])
        grads = L.autograd.grad(a * b * c, (a, b, c), g)
        return [(r.numpy().copy(), r.stride()) for r in grads]
    ours, theirs = both(program)
    for (o, ostride), (t, tstride) in zip(ours, theirs):
        assert same_bits(o, t) and ostride == tstride


def relu_program(L):
    x = L.tensor([[1.5, -2.0, 0.0], [-0.0, 3.0, -1e-3]], dtype=L.float64, requires_grad=True)
    h = (x * x).relu() * 2.5 - x.relu()
    g, = L.autograd.grad(h.sum(), x, create_graph=True)
    gg, = L.autograd.grad((g * g).sum(), x)
    return graph(g.grad_fn, 5), g.detach().numpy(), gg.numpy()


def test_relu_and_number_products_keep_torchs_double_backward():
    ours, theirs = both(relu_program)
    assert ours[0] == theirs[0]
    for o, t in zip(ours[1:], theirs[1:]):
        assert same_bits(o, t)


def test_plain_backward_formulas_under_vmap_and_forward_ad_are_torchs():
    def f(L, w, x):
        return ((x @ w).relu() * 1.5 * x.sum()).sum()

    def program(L):
        import importlib
        fwad = importlib.import_module(L.__name__ + ".autograd.forward_ad")
        w0, x0, v = RNG.standard_normal((3, 2)), RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3))
        hessian = L.func.jacrev(L.func.grad(lambda w: f(L, w, L.tensor(x0))))(L.tensor(w0))
        with fwad.dual_level():
            x = fwad.make_dual(L.tensor(x0), L.tensor(v))
            w = L.tensor(w0, requires_grad=True)
            gw, = L.autograd.grad(f(L, w, x), w)
            tangent = fwad.unpack_dual(gw).tangent.numpy().copy()
        return [hessian.numpy(), gw.numpy().copy(), tangent]
    ours, theirs = both(program)
    for o, t in zip(ours, theirs):
        assert close(o, t)


def test_a_0d_gradient_made_in_numpy_is_a_tensor_that_in_place_ops_change():
    def program(L):
        x = L.tensor(1.5, dtype=L.float64, requires_grad=True)
        (x * 2.5).backward()
        x.grad.add_(1)
        x.grad.mul_(-0.0)
        return x.grad.numpy().copy(), tuple(x.grad.shape)
    ours, theirs = both(program)
    assert same_bits(ours[0], theirs[0]) and ours[1] == theirs[1]


@pytest.mark.parametrize("layouts", LAYOUTS)
def test_mm_backward_with_one_column_keeps_torchs_signed_zeros(layouts):
    """W (k, 1): the gradient of h is grad (n, 1) @ W^T (1, k), a product with k = 1 that torch's gemm computes as
    a multiplication (-0.0 stays -0.0)."""
    def program(L):
        h = L.tensor([[0.0, -0.0, 2.0], [-1.0, 0.0, -0.0]], dtype=L.float64)
        h = (h.t().contiguous().t() if layouts[0] else h).detach().requires_grad_()
        w = L.tensor([[-0.0], [2.0], [0.0]], dtype=L.float64)
        w = (w.t().contiguous().t() if layouts[1] else w).detach().requires_grad_()
        g = L.tensor([[-0.0], [0.0]], dtype=L.float64)
        return [r.numpy() for r in L.autograd.grad(h @ w, (h, w), g)]
    ours, theirs = both(program)
    for o, t in zip(ours, theirs):
        assert same_bits(o, t)


@pytest.mark.parametrize("op", ["tanh", "sigmoid"])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("shape", [(), (3, 4)])
def test_tanh_and_sigmoid_backward_give_torchs_values_and_layout(op, dtype, shape):
    def program(L):
        x = tensors(L, dtype, shape, column_major=len(shape) == 2).detach().requires_grad_()
        g = tensors(L, dtype, shape)
        gx, = L.autograd.grad(getattr(x, op)(), x, g)
        return gx.numpy().copy(), gx.stride()
    ours, theirs = both(program)
    # (torch's vectorized tanh, and its sigmoid, differ from numpy's in the last bit; one tanh goes libm's way)
    assert same_bits(ours[0], theirs[0]) if not shape and op == "tanh" else close(ours[0], theirs[0])
    assert ours[1] == theirs[1]


@pytest.mark.parametrize("op", ["tanh", "sigmoid"])
def test_tanh_and_sigmoid_keep_torchs_double_backward_and_tangents(op):
    def program(L):
        import importlib
        fwad = importlib.import_module(L.__name__ + ".autograd.forward_ad")
        x = L.tensor([[0.5, -2.0], [0.0, 3.0]], dtype=L.float64, requires_grad=True)
        g, = L.autograd.grad(getattr(x * 1.5, op)().sum(), x, create_graph=True)
        gg, = L.autograd.grad((g * g).sum(), x)
        with fwad.dual_level():
            w = L.tensor([0.3, -0.7], dtype=L.float64, requires_grad=True)
            d = fwad.make_dual(L.tensor([1.0, 2.0], dtype=L.float64), L.tensor([0.5, -1.0], dtype=L.float64))
            gw, = L.autograd.grad(getattr(w * d, op)().sum(), w)
            tangent = fwad.unpack_dual(gw).tangent.numpy().copy()
        return graph(g.grad_fn, 5), g.detach().numpy(), gg.numpy(), gw.numpy().copy(), tangent
    ours, theirs = both(program)
    assert ours[0] == theirs[0]
    for o, t in zip(ours[1:], theirs[1:]):
        assert close(o, t)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex128"])
def test_subtractions_give_torchs_gradient_bits(dtype):
    def program(L):
        h = tensors(L, dtype, (3, 2), column_major=True).detach().requires_grad_()
        k = tensors(L, dtype, (3, 2)).detach().requires_grad_()
        g = tensors(L, dtype, (3, 2), column_major=True)
        zeros = g * -0.0  # (+0.0 where g is negative: -(+0.0) is -0.0)
        grads = [*L.autograd.grad(1 - h, h, zeros), *L.autograd.grad(h - k, (h, k), zeros),
                 *L.autograd.grad(L.rsub(h, k), (h, k), g)]
        return [(r.numpy().copy(), r.stride()) for r in grads]
    ours, theirs = both(program)
    for (o, ostride), (t, tstride) in zip(ours, theirs):
        # (complex: torch's g * -0.0, the zeros themselves, carry other signs than numpy's)
        assert (close(o, t) if dtype.startswith("complex") else same_bits(o, t)) and ostride == tstride


POW_SPECIAL = [-0.0, 0.0, -1.5, 2.0, np.inf, -np.inf, np.nan, 0.3, -2.7, 1e-3, 7.0, -0.5]


@pytest.mark.parametrize("layouts", [(True, False), (False, True)])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("p", [2, 3, 0.5, -1, -0.5, 1.5, 1, -2, 2.5, -3, 4])
def test_power_by_a_number_gives_the_gradient_of_its_ops_and_torchs_values(dtype, p, layouts):
    """Where nothing records, pow's backward computes its three ops (x ** (p - 1), times p, grad times) on arrays:
    bit for bit what the ops give under create_graph, and torch's values (torch's pow kernels round some
    fractional powers differently in the last bit, with or without this path)."""
    def program(L, create_graph=False):
        x, g = np.array(POW_SPECIAL).reshape(3, 4), np.linspace(-2, 2, 12).reshape(3, 4)
        x, g = (L.tensor(a.T.copy(), dtype=getattr(L, dtype)).T if column_major else  # (column-major: a
                L.tensor(a, dtype=getattr(L, dtype)) for a, column_major in zip((x, g), layouts))  # transposed copy)
        x.requires_grad_()
        gx, = L.autograd.grad(x ** p, x, g, create_graph=create_graph)
        return gx.detach().numpy().copy(), gx.stride()
    ours, by_ops, theirs = program(mt), program(mt, True), program(torch)
    assert same_bits(ours[0], by_ops[0]) and ours[1] == by_ops[1] == theirs[1]
    if dtype == "float16":  # (torch computes half powers in float32: an overflow here is finite there, as before)
        return
    finite = np.isfinite(theirs[0])
    assert np.array_equal(np.isfinite(ours[0]), finite) and close(ours[0][finite], theirs[0][finite])


@pytest.mark.parametrize("op", ["x ** 3", "x ** 0.5", "x.tanh()", "x.relu() * 2.5", "x * x", "x / 3 * x"])
def test_backward_through_a_dual_tensor_carries_its_tangent_as_torch(op):
    """A backward without create_graph whose saved input is a dual tensor: the gradient gets a tangent."""
    def program(L):
        import importlib
        fwad = importlib.import_module(L.__name__ + ".autograd.forward_ad")
        with fwad.dual_level():
            p = L.tensor([0.5, 2.0, 3.0], dtype=L.float64, requires_grad=True)
            x = fwad.make_dual(p, L.tensor([1.0, -2.0, 0.5], dtype=L.float64))
            gp, = L.autograd.grad(eval(op).sum(), p)
            return gp.numpy().copy(), fwad.unpack_dual(gp).tangent.numpy().copy()
    ours, theirs = both(program)
    for o, t in zip(ours, theirs):
        assert close(o, t)
