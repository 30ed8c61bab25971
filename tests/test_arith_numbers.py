"""A Python number as the FIRST argument of add/sub/mul/div (and two numbers), and torch.rsub, beside torch 2.13.

torch's parser takes the number for the `input` tensor: `torch.sub(2, t)` records SubBackward0 with an edge
to None for the number, while the operator `2 - t` is `torch.rsub(t, 2)` (RsubBackward1, one edge) and `2 * t`
is `t.mul(2)` (the number's edge second). Every expression runs in torch and in microtorch: values, dtypes,
grad_fn names, next_functions, saved attributes, exception types, gradients (first and second order),
forward mode and vmap."""
import numpy as np
import pytest
import torch

import microtorch as mt

EXPRESSIONS = [
    # a number first, a tensor that requires grad second
    "T.add(2, t)", "T.add(2, t, alpha=3)", "T.add(2, t, alpha=2.5)", "T.add(1j, t)", "T.add(True, t)",
    "T.add(2.5, d)", "T.add(2, h)", "T.add(np.float64(2), t)",
    "T.sub(2, t)", "T.sub(2, t, alpha=3)", "T.sub(2, t, alpha=0.5)", "T.sub(2j, t)", "T.subtract(2, t)",
    "T.sub(2, d, alpha=-1.5)", "T.mul(2, t)", "T.mul(2.5, d)", "T.mul(2j, t)", "T.mul(True, t)", "T.multiply(2, t)",
    "T.div(2, t)", "T.div(2j, t)", "T.div(2.5, d)", "T.divide(2, t)", "T.true_divide(3, t)",
    # two numbers, and a number with an integer tensor
    "T.add(2, 3)", "T.add(2, 3.5)", "T.add(2.5, 3)", "T.add(2, 1j)", "T.add(True, False)", "T.add(True, True, alpha=True)",
    "T.add(2., 3, alpha=2.5)", "T.sub(2, 3)", "T.sub(2, 3, alpha=2)", "T.sub(2.5, 3)", "T.mul(2, 3)", "T.mul(2, 3.5)",
    "T.div(2, 3)", "T.div(6, 3)", "T.div(True, 2)", "T.add(0.1, 0.2)",
    "T.add(2, i)", "T.sub(2, i)", "T.sub(2, i, alpha=2)", "T.add(2.5, i)", "T.add(2., i, alpha=2.5)", "T.mul(2.5, i)",
    "T.div(2, i)", "T.add(300, u)", "T.sub(300, u)", "T.sub(2, u, alpha=3)",
    # the operators record other graphs than the functions
    "2 + t", "2 * t", "2 - t", "2 / t", "2j / t", "2 / i", "2.5 - i", "t + 2", "t * 2", "t - 2", "t / 2",
    "t.__radd__(2, alpha=3)",
    # rsub
    "T.rsub(t, s)", "T.rsub(t, s, alpha=2)", "T.rsub(t, 2)", "T.rsub(t, 2, alpha=2)", "T.rsub(t, 2, 2)",
    "T.rsub(t, 2.5, alpha=0.5)", "T.rsub(i, 2)", "T.rsub(i, 2, alpha=3)", "T.rsub(i, i)", "T.rsub(t, 1j)",
    "T.rsub(d, t)", "T.rsub(t, s[:1])", "T.rsub(t, i)", "T.rsub(i, t)", "T.rsub(h, 1)", "T.rsub(t, T.tensor(2.))",
    # numpy and 0-d numbers, casts and views
    "np.float64(2) - t", "np.float64(2) / t", "np.float64(2) * t", "T.tensor(2.) - t", "T.sub(i, t)", "T.div(i, t)",
    "T.sub(2, t.double())", "T.add(2, t[None].expand(3, 2))", "T.add(2, t, alpha=0)", "T.div(2, h)", "T.mul(3, h)",
    # bool tensors and numbers
    "2 / b", "True / t", "2 * b", "True + b", "2.5 * b", "T.mul(2, b)", "T.add(True, b)", "T.div(2, b)", "T.sub(2, b)",
    "(-1) / u", "2.5 / u", "T.add(b, True, alpha=0.5)", "T.add(True, b, alpha=1.0)", "T.add(True, b, alpha=False)",
    "T.add(b, b, alpha=2)", "T.add(b, 2, alpha=True)",
    # errors
    "T.add(2, t, alpha=True)", "T.sub(True, t)", "T.sub(True, False)", "T.sub(t, True)", "True - t",
    "T.add(2, i, alpha=2.5)", "T.add(2, 3, alpha=2.5)", "T.sub(2, t, alpha=2j)", "T.add(2, 3, alpha=1j)",
    "T.add(t, s, alpha=1j)", "T.add(t, 2, alpha=2j)", "T.rsub(2, t)", "T.rsub(t, True)",
    "T.add('a', t)", "T.add(None, t)", "T.add(2, None)", "T.atan2(2, t)", "T.maximum(2, t)", "T.rsub(t, s[:0])",
]


def _env(T):
    return {"T": T, "np": np, "t": T.tensor([1., 2.], requires_grad=True), "s": T.tensor([3., 5.], requires_grad=True),
            "d": T.tensor([1., -2.], dtype=T.float64, requires_grad=True),
            "h": T.tensor([1., 3.], dtype=T.float16, requires_grad=True),
            "i": T.tensor([1, 2]), "u": T.tensor([1, 200], dtype=T.uint8), "b": T.tensor([True, False])}


def _names(node):
    return None if node is None else [None if f is None else f.name() for f, _ in node.next_functions]


def _run(T, expression):
    try:
        out = eval(expression, _env(T))
    except Exception as e:  # (compared by type with torch's)
        return type(e).__name__
    node = out.grad_fn
    return (out.tolist(), str(out.dtype).split(".")[-1], node and node.name(), _names(node),
            getattr(node, "_saved_alpha", "-"))


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_numbers_first_as_torch(expression):
    want, got = _run(torch, expression), _run(mt, expression)
    if isinstance(want, str):
        assert got == want
        return
    assert got[1:] == want[1:]
    np.testing.assert_allclose(np.asarray(got[0], complex), np.asarray(want[0], complex), rtol=1e-6)


def test_error_messages_say_what_torch_says():
    t = mt.tensor([1., 2.], requires_grad=True)
    for call, words in [(lambda: mt.add(2, t, alpha=True), "Boolean alpha only supported for Boolean results."),
                        (lambda: mt.sub(True, t), "Subtraction, the `-` operator, with a bool tensor is not supported"),
                        (lambda: mt.sub(True, False), "with two bool tensors is not supported"),
                        (lambda: mt.sub(2, t, alpha=2j), "argument alpha must not be a complex number"),
                        (lambda: mt.add(2, 3, alpha=2.5), "argument alpha must not be a floating point number"),
                        (lambda: mt.add("a", t), "add(): argument 'input' (position 1) must be Tensor, not str"),
                        (lambda: mt.atan2(2, t), "atan2(): argument 'input' (position 1) must be Tensor, not int"),
                        (lambda: mt.rsub(2, t), "rsub(): argument 'input' (position 1) must be Tensor, not int")]:
        with pytest.raises((RuntimeError, TypeError)) as info:
            call()
        assert words in str(info.value)


def test_saved_attributes_as_torch():
    for T in (torch, mt):
        t = T.tensor([1., 2.], requires_grad=True)
        assert T.div(2, t).grad_fn._saved_other is t
        assert T.mul(2, t).grad_fn._saved_other is None  # (the number needs no gradient: t is not saved)
        assert T.mul(2, t).grad_fn._saved_self.item() == 2  # (torch keeps it int64, microtorch in t's dtype)
        assert T.div(3, t).grad_fn._saved_self.item() == 3
        assert T.rsub(t, 2, alpha=0.5).grad_fn._saved_alpha == 0.5
        assert T.sub(2, t, alpha=3).grad_fn._saved_alpha == 3


# functions of two float64 tensors x and y, differentiated twice beside torch
FUNCTIONS = {
    "add(2, x, alpha=3)": lambda T, x, y: T.add(2, x, alpha=3) * x,
    "sub(2, x, alpha=0.5)": lambda T, x, y: T.sub(2, x, alpha=0.5) * y,
    "sub(2.5, x)": lambda T, x, y: T.sub(2.5, x) ** 2,
    "mul(3, x)": lambda T, x, y: T.mul(3, x) * x,
    "div(2, x)": lambda T, x, y: T.div(2, x),
    "div(2, x) * y": lambda T, x, y: T.div(2, x) * y,
    "add(1j, x)": lambda T, x, y: T.add(1j, x).abs() ** 2,
    "sub(2j, x) * y": lambda T, x, y: (T.sub(2j, x) * y).abs(),
    "div(1j, x)": lambda T, x, y: T.div(1j, x).abs(),
    "rsub(x, y)": lambda T, x, y: T.rsub(x, y) * x,
    "rsub(x, y, alpha=2)": lambda T, x, y: T.rsub(x, y, alpha=2) ** 2,
    "rsub(x, 2, alpha=3)": lambda T, x, y: T.rsub(x, 2, alpha=3) * y * x,
    "2 / x": lambda T, x, y: 2 / x,
    "2 - x * y": lambda T, x, y: (2 - x * y) ** 2,
}


@pytest.mark.parametrize("name", FUNCTIONS)
def test_gradients_first_and_second_order_as_torch(name):
    fn, results = FUNCTIONS[name], []
    for T in (torch, mt):
        x = T.tensor([0.5, -1.5, 2.0], dtype=T.float64, requires_grad=True)
        y = T.tensor([1.5, 0.25, -3.0], dtype=T.float64, requires_grad=True)
        gx, gy = T.autograd.grad(fn(T, x, y).sum(), (x, y), create_graph=True, allow_unused=True)
        gx = gx if gx is not None else T.zeros_like(x)
        gy = gy if gy is not None else T.zeros_like(y)
        hx, hy = T.autograd.grad((gx * gx).sum() + gy.sum(), (x, y), allow_unused=True)
        results.append([g.detach().numpy() if g is not None else np.zeros(3) for g in (gx, gy, hx, hy)])
    for want, got in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["add(2, x, alpha=3)", "sub(2, x, alpha=0.5)", "mul(3, x)", "div(2, x)",
                                  "rsub(x, y)", "rsub(x, 2, alpha=3)", "add(1j, x)"])
def test_forward_mode_vmap_and_func_grad_as_torch(name):
    fn, results = FUNCTIONS[name], []
    for T in (torch, mt):
        x = T.tensor([0.5, -1.5, 2.0], dtype=T.float64)
        y = T.tensor([1.5, 0.25, -3.0], dtype=T.float64)
        out, tangent = T.func.jvp(lambda a, b: fn(T, a, b), (x, y), (T.ones_like(x), 2 * T.ones_like(y)))
        batch = T.func.vmap(lambda a: fn(T, a, y))(T.stack([x, 2 * x]))
        grad = T.func.grad(lambda a: fn(T, a, y).abs().sum())(x)
        results.append([v.numpy() for v in (out, tangent, batch, grad)])
    for want, got in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_gradient_dtype_follows_the_tensor_as_torch():
    for number in (2, 2.5, 1j, True):
        grads = []
        for T in (torch, mt):
            t = T.tensor([1., 2.], requires_grad=True)
            T.add(number, t, alpha=2).abs().sum().backward()
            grads.append((t.grad.tolist(), str(t.grad.dtype).split(".")[-1]))
        assert grads[0] == grads[1], number


COMPLEX_EDGES = ["c + inf", "c - inf", "inf - c", "inf + c", "c + c2", "c - c2", "T.rsub(c, c2)", "T.rsub(c2, c)",
                 "c + nan", "c + complex(0, inf)", "c + r", "r + c", "c - r", "r - c", "T.add(inf, c)", "T.sub(inf, c)",
                 "1 - c2", "c.add(c2, alpha=2)", "c.sub(inf, alpha=2)", "c.clone().add_(inf)",
                 "c2 * 1", "c + 2.0"]


@pytest.mark.parametrize("expression", COMPLEX_EDGES)
def test_complex_sums_scale_the_other_operand_as_torch(expression):
    """torch's complex add/sub computes a + alpha*b with alpha = 1 too: an inf in one part of b makes a nan in
    the other (z + inf is inf+nanj); the operand that is not scaled (rsub's other) keeps its parts."""
    inf = float("inf")
    out = []
    for T in (torch, mt):
        env = {"T": T, "inf": inf, "nan": float("nan"), "c": T.tensor([1 + 2j, 3 - 1j]),
               "c2": T.tensor([complex(inf, 0), complex(1, inf)]), "r": T.tensor([inf, float("nan")])}
        out.append(np.asarray(eval(expression, env).tolist(), complex))
    np.testing.assert_array_equal(out[1], out[0])  # (nan equals nan here, in each part)


# the grids below: each op with and without alpha (rsub takes its number second only)
GRID_OPS = [("add", {}), ("add", {"alpha": 2}), ("add", {"alpha": 0.5}), ("sub", {}), ("sub", {"alpha": 3}),
            ("sub", {"alpha": -1.5}), ("mul", {}), ("div", {}), ("rsub", {}), ("rsub", {"alpha": 2})]


def _grid_result(T, op, kw, number, dtype, first):
    x = T.tensor([1, 0, 1] if dtype == "bool" else [1, 2, 5], dtype=getattr(T, dtype))
    try:
        out = getattr(T, op)(*((number, x) if first else (x, number)), **kw)
    except Exception as e:  # (compared by type with torch's)
        return type(e).__name__
    return str(out.dtype).split(".")[-1], np.asarray(out.tolist(), complex)


def test_every_dtype_with_a_number_on_either_side_as_torch():
    """add/sub/mul/div/rsub of each dtype's tensor and a bool, int, float or complex number, first or second:
    the same dtype and values as torch, or the same exception type. (float16 with a complex number is left out:
    torch gives complex32, a dtype microtorch does not have.)"""
    dtypes = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64", "complex64", "complex128"]
    differ = []
    for op, kw in GRID_OPS:
        for number in (True, 0, 3, -2, 300, 2.5, -0.0, float("inf"), 1j, 2 ** 40):
            for dtype in dtypes:
                for first in ((False,) if op == "rsub" else (True, False)):
                    if dtype == "float16" and isinstance(number, complex):
                        continue
                    want, got = (_grid_result(T, op, kw, number, dtype, first) for T in (torch, mt))
                    same = want == got if isinstance(want, str) or isinstance(got, str) else \
                        want[0] == got[0] and np.allclose(got[1], want[1], rtol=1e-3, equal_nan=True)
                    if not same:
                        differ.append((op, kw, number, dtype, first, want, got))
    assert not differ, differ[:10]


_OPERATORS = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b}


def _graph_and_gradients(T, op, kw, number, dtype, first, operator):
    x = T.tensor([0.5, 2.0, -3.0], dtype=getattr(T, dtype), requires_grad=True)
    try:
        out = (_OPERATORS[op] if operator else getattr(T, op))(*((number, x) if first else (x, number)), **kw)
    except RuntimeError as e:  # (True - x: compared by type with torch's)
        return type(e).__name__, []
    g, = T.autograd.grad(out.abs().sum() if out.is_complex() else (out * out).sum(), x, create_graph=True)
    h, = T.autograd.grad((g.abs() if g.is_complex() else g * g).sum(), x, allow_unused=True)
    node = out.grad_fn
    return ((node.name(), _names(node), str(g.dtype).split(".")[-1]),
            [np.asarray(v.tolist(), complex) if v is not None else None for v in (g, h)])


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex64", "complex128"])
def test_graphs_and_gradients_of_every_floating_dtype_as_torch(dtype):
    """The functions and the operators with a number on either side: grad_fn, next_functions, the gradient's dtype,
    and the gradient and the gradient of its square (second order) beside torch."""
    tol = 1e-2 if dtype == "float16" else 1e-5
    for (op, kw), number in ((o, n) for o in GRID_OPS for n in (True, 3, 2.5, -0.1, 1j)):
        for first, operator in ((True, False), (False, False), (True, True), (False, True)):
            if op == "rsub" and (first or operator) or operator and kw or dtype == "float16" and number == 1j:
                continue
            (want, want_grads), (got, got_grads) = (_graph_and_gradients(T, op, kw, number, dtype, first, operator)
                                                    for T in (torch, mt))
            assert got == want, (op, kw, number, first, operator)
            for w, g in zip(want_grads, got_grads):
                assert (w is None) == (g is None)
                if w is not None:
                    np.testing.assert_allclose(g, w, rtol=tol, atol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_forward_mode_and_vmap_with_a_number_on_either_side_as_torch(dtype):
    """func.jvp's output and tangent (values and dtype: torch's rsub of a number gives a's tangent in a's dtype even
    when a complex number made the output complex) and vmap's batch, beside torch."""
    for (op, kw), number, first in ((o, n, f) for o in GRID_OPS for n in (3, 2.5, 1j) for f in (True, False)):
        if op == "rsub" and first:
            continue
        results = []
        for T in (torch, mt):
            x = T.tensor([0.5, 2.0, -3.0], dtype=getattr(T, dtype))

            def f(a):
                return getattr(T, op)(*((number, a) if first else (a, number)), **kw)
            out, tangent = T.func.jvp(f, (x,), (0.5 * T.ones_like(x),))
            batch = T.func.vmap(f)(T.stack([x, 2 * x]))
            results.append((str(tangent.dtype).split(".")[-1], [np.asarray(v.tolist(), complex) for v in (out, tangent, batch)]))
        (want_dtype, want), (got_dtype, got) = results
        assert got_dtype == want_dtype, (op, kw, number, first)
        for w, g in zip(want, got):
            np.testing.assert_allclose(g, w, rtol=1e-6)
