"""Rounding and modulo differentiated as torch (ops/rounding.py): floor/ceil/trunc/round pass a zero
gradient through a node of their own, fmod/remainder pass the gradient to the dividend and
-g * trunc/floor(a / b) to a tensor divisor, div with a rounding_mode passes zeros, floor_divide's
node refuses. Values, grad_fn names, edges, first and second order gradients beside torch."""
import pytest

from autograd_oracle import same

OPS = {
    "floor": lambda T, x, y: x.floor(), "ceil": lambda T, x, y: T.ceil(x), "trunc": lambda T, x, y: x.trunc(),
    "fix": lambda T, x, y: x.fix(), "round": lambda T, x, y: x.round(), "round(decimals=1)": lambda T, x, y: x.round(decimals=1),
    "fmod(number)": lambda T, x, y: x.fmod(0.75), "fmod(tensor)": lambda T, x, y: T.fmod(x, y),
    "remainder(number)": lambda T, x, y: x.remainder(-0.75), "x % y": lambda T, x, y: x % y,
    "x % y[0]": lambda T, x, y: x % y[0], "remainder(x, y row)": lambda T, x, y: T.remainder(x, y[:1]),
    "div(floor)": lambda T, x, y: x.div(y, rounding_mode="floor"), "div(trunc, number)": lambda T, x, y: x.div(2, rounding_mode="trunc"),
}


def _inputs(T):
    x = T.tensor([[5.5, -3.25, 7.0], [0.5, -1.75, 2.5]], dtype=T.float64, requires_grad=True)
    y = T.tensor([[2.0, 1.5, -3.0], [-0.75, 0.5, 1.25]], dtype=T.float64, requires_grad=True)
    return x, y


@pytest.mark.parametrize("op", OPS)
def test_gradients_as_torch(op):
    def prog(T):
        x, y = _inputs(T)
        z = OPS[op](T, x * 1, y * 1)
        edges = [n.name() if n is not None else None for n, _ in z.grad_fn.next_functions]
        w = T.tensor([[1.0, -2.0, 0.5], [3.0, 1.0, -1.0]], dtype=T.float64)
        g = T.autograd.grad((z * w * x).sum(), (x, y), create_graph=True, allow_unused=True)
        gg = [t for t in g if t is not None and t.requires_grad]
        g2 = T.autograd.grad(sum(t.sum() for t in gg), (x, y), allow_unused=True) if gg else None
        return z, z.grad_fn.name(), edges, g, g2
    same(prog)


@pytest.mark.parametrize("op", ["x // y", "x // 2", "floor_divide"])
def test_floor_divide_has_no_derivative(op):
    def prog(T):
        x, y = _inputs(T)
        z = {"x // y": lambda: x // y, "x // 2": lambda: x // 2, "floor_divide": lambda: T.floor_divide(x, y)}[op]()
        try:
            z.sum().backward()
        except RuntimeError as e:
            return z, z.grad_fn.name(), "derivative for aten::floor_divide is not implemented" in str(e)
        return "no error"
    same(prog)


def test_integers_and_division_by_zero_as_torch():
    def prog(T):
        i = T.tensor([7, -7, 5])
        f = T.tensor([1.0, -1.0, 0.0], requires_grad=True)
        return (i % 3, T.fmod(i, 3), i // 2, i.div(2, rounding_mode="trunc"), f % 0.0, f.fmod(0.0),
                (f % 0.0).requires_grad, T.tensor([1.5, -1.5]).round(), T.tensor([1.5]).floor().requires_grad)
    same(prog)


@pytest.mark.parametrize("op", ["fmod(tensor)", "x % y", "round(decimals=1)", "div(floor)", "floor"])
def test_vmap_of_grad_as_torch(op):
    """Batched by vmap (an elementwise batching rule, no per-example loop), gradients included."""
    def prog(T):
        x, y = _inputs(T)
        f = OPS[op]

        def loss(a, b):
            return (f(T, a, b) * a).sum()
        return T.func.vmap(T.func.grad(loss, argnums=(0, 1)))(x.detach(), y.detach())
    same(prog)


def test_a_number_modulo_a_tensor_as_torch():
    """7 % x: values, torch's refusing node (no derivative of remainder(number, tensor)), its repr."""
    def prog(T):
        x, _ = _inputs(T)
        y = 7 % x
        try:
            y.sum().backward()
            refused = False
        except RuntimeError as e:
            refused = "derivative for aten::remainder is not implemented" in str(e)
        return (y, T.remainder(7.0, x), 7 % T.tensor([2, 3]), 7.5 % T.tensor([2, 3]), y.grad_fn.name(), refused,
                repr(y).split("grad_fn=")[1])
    same(prog)


def test_a_written_view_prints_as_torch():
    """A tensor whose grad_fn is one of torch's C++ nodes prints the class, <CopySlices>, as torch."""
    def prog(T):
        x = T.ones(3, requires_grad=True)
        a = x * 1
        a[0] = 2.0
        return repr(a), repr(x // 2)
    same(prog)
