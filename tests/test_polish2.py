"""More small gaps between microtorch and torch 2.13, each checked beside torch: a Python bool in a
subtraction, the uint8 dtype in the tables of missing kernels, the errors of a few ops on complex tensors,
diff of bool tensors, the conversion of fill values, clamp's mixed bounds and the graph of mixed-dtype
arithmetic."""
import pytest
import torch

import microtorch as mt


def _outcome(fn, lib):
    """(shape, dtype name, values) of fn(lib), or the type of what it raised."""
    try:
        out = fn(lib)
    except Exception as e:  # noqa: BLE001 (the type is what is compared)
        return type(e).__name__
    return tuple(out.shape), str(out.dtype).split(".")[-1], out.detach().numpy().tolist()


def _same_as_torch(fn):
    t, m = _outcome(fn, torch), _outcome(fn, mt)
    assert m == t, f"torch {t}, microtorch {m}"
    return t


_BOOL_SUBTRACTIONS = [
    lambda T: T.sub(T.tensor([1, 2, 3]), True),
    lambda T: T.tensor([1, 2, 3]) - True,
    lambda T: False - T.tensor([1, 2, 3]),
    lambda T: T.rsub(T.tensor([1, 2, 3]), True),
    lambda T: T.tensor([1.5]) - True,
    lambda T: T.tensor([1.5]).sub_(False),
    lambda T: T.tensor([1, 2]) + True,  # (addition takes it)
    lambda T: T.tensor([1, 2]) - 1,
]


@pytest.mark.parametrize("fn", _BOOL_SUBTRACTIONS)
def test_a_python_bool_in_a_subtraction_is_refused_as_torch(fn):
    _same_as_torch(fn)


def test_a_python_bool_in_a_subtraction_raises_runtime_error():
    with pytest.raises(RuntimeError, match="Subtraction"):
        mt.tensor([1, 2]) - True


_U8 = [
    ("nextafter", lambda T, u: T.nextafter(u, u)), ("hypot", lambda T, u: T.hypot(u, u)),
    ("igamma", lambda T, u: T.igamma(u, u)), ("igammac", lambda T, u: T.igammac(u, u)),
    ("logaddexp", lambda T, u: T.logaddexp(u, u)), ("frac", lambda T, u: T.frac(u)),
    ("celu", lambda T, u: T.nn.functional.celu(u)), ("elu", lambda T, u: T.nn.functional.elu(u)),
    ("softplus", lambda T, u: T.nn.functional.softplus(u)), ("hardswish", lambda T, u: T.nn.functional.hardswish(u)),
    ("silu", lambda T, u: T.nn.functional.silu(u)), ("glu", lambda T, u: T.nn.functional.glu(u)),
    ("mse_loss", lambda T, u: T.nn.functional.mse_loss(u, u)), ("histc", lambda T, u: T.histc(u)),
    ("std", lambda T, u: T.std(u)), ("norm", lambda T, u: T.norm(u)), ("uniform_", lambda T, u: u.uniform_()),
    ("nextafter with float", lambda T, u: T.nextafter(u, T.tensor([1.0]))),
    ("hypot with int8", lambda T, u: T.hypot(u, T.tensor([1], dtype=T.int8))),
    ("copysign (has a kernel)", lambda T, u: T.copysign(u, u)), ("gcd (has a kernel)", lambda T, u: T.gcd(u, u)),
    ("fmax (has a kernel)", lambda T, u: T.fmax(u, u)), ("sign (has a kernel)", lambda T, u: T.sign(u)),
]


@pytest.mark.parametrize("fn", [f for _, f in _U8], ids=[n for n, _ in _U8])
def test_uint8_has_the_kernels_of_the_integer_dtypes(fn):
    _same_as_torch(lambda T: fn(T, T.tensor([[1, 2], [3, 4]], dtype=T.uint8)))


def test_uint8_without_a_kernel_names_byte():
    with pytest.raises(NotImplementedError, match="Byte"):
        mt.nextafter(mt.tensor([1], dtype=mt.uint8), mt.tensor([2], dtype=mt.uint8))


_COMPLEX = [lambda T, c: T.rad2deg(c), lambda T, c: c.deg2rad(), lambda T, c: c.clone().rad2deg_(),
            lambda T, c: T.isposinf(c), lambda T, c: c.isneginf()]


@pytest.mark.parametrize("fn", _COMPLEX)
def test_complex_input_of_real_only_ops_is_a_runtime_error(fn):
    assert _same_as_torch(lambda T: fn(T, T.tensor([1 + 2j, 3j]))) == "RuntimeError"


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int64", "uint8", "bool"])
@pytest.mark.parametrize("op", ["rad2deg", "deg2rad"])
def test_angle_conversions_round_as_torch(op, dtype):
    values = [0.0, 1.0, 3.0, 0.1, -2.5, 100.0, 1e-3] if dtype.startswith("float") else [0, 1, 3]
    _same_as_torch(lambda T: getattr(T, op)(T.tensor(values).to(getattr(T, dtype))))


def test_angle_conversion_gradient():
    x, xt = mt.tensor([0.5, -1.0], requires_grad=True), torch.tensor([0.5, -1.0], requires_grad=True)
    mt.rad2deg(x).sum().backward()
    torch.rad2deg(xt).sum().backward()
    assert x.grad.tolist() == xt.grad.tolist()
    assert mt.deg2rad(x).grad_fn.name() == torch.deg2rad(xt).grad_fn.name()


_BOOL_DIFFS = [
    lambda T, b: T.diff(b), lambda T, b: T.diff(b, n=2), lambda T, b: T.diff(b, dim=0), lambda T, b: b.diff(n=5),
    lambda T, b: T.diff(b, prepend=T.tensor([[True], [False]])),
    lambda T, b: T.diff(b, append=T.tensor([[1], [2]])),  # (promoted to int64 first: a subtraction)
    lambda T, b: T.diff(b.float(), append=T.tensor([[True], [False]])),
]


@pytest.mark.parametrize("fn", _BOOL_DIFFS)
def test_diff_of_a_bool_tensor_is_xor_as_torch(fn):
    _same_as_torch(lambda T: fn(T, T.tensor([[True, False, False, True], [False, False, True, True]])))


_CLAMPS = [
    lambda T, x: T.clamp(x, 0, T.tensor([1.0])), lambda T, x: T.clamp(x, T.tensor([1.0]), 3),
    lambda T, x: x.clamp(0, T.tensor([1.0])), lambda T, x: x.clone().clamp_(0, T.tensor([1.0])),
    lambda T, x: T.clip(x, 0, T.tensor([1.0])), lambda T, x: T.clamp(x, min=0, max=T.tensor([1.0])),
    lambda T, x: T.clamp(x, None, T.tensor([1.0])), lambda T, x: T.clamp(x, T.tensor([1.0]), None),
    lambda T, x: T.clamp(x, 0, 1), lambda T, x: T.clamp(x, T.tensor([0.0]), T.tensor([1.0])),
]


@pytest.mark.parametrize("fn", _CLAMPS)
def test_clamp_takes_both_bounds_of_one_kind(fn):
    _same_as_torch(lambda T: fn(T, T.tensor([1.0, -2.0, 5.0])))


def _names(fn):
    """grad_fn's name and its next functions' names, recursively"""
    if fn is None:
        return None
    return fn.name(), tuple(_names(f) for f, _ in fn.next_functions)


_MIXED = [  # (lhs dtype, lhs requires grad, rhs dtype, rhs requires grad, rhs 0-d)
    ("float32", True, "float64", False, False), ("float32", True, "float64", True, False),
    ("float64", False, "float32", True, False), ("float32", True, "int64", False, False),
    ("float32", True, "float64", True, True), ("float32", True, "complex64", False, False),
    ("float16", True, "float32", True, False), ("float64", True, "complex64", True, True),
]


def _operands(T, case):
    da, ga, db, gb, zero_d = case
    a = T.tensor([1.5, -2.0, 0.25], dtype=getattr(T, da), requires_grad=ga)
    values = (2 + 1j) if db.startswith("complex") else 2 if db == "int64" else 2.5
    b = T.tensor(values if zero_d else [values, 3, -4], dtype=getattr(T, db), requires_grad=gb)
    return a, b


def _run(T, op, case):
    a, b = _operands(T, case)
    y = getattr(T, op)(a, b)
    inputs = [t for t in (a, b) if t.requires_grad]
    loss = (y * y.conj()).real.sum() if y.is_complex() else (y * y).sum()
    grads = T.autograd.grad(loss, inputs, create_graph=True)
    second = T.autograd.grad(sum((g.real if g.is_complex() else g).sum() for g in grads), inputs, allow_unused=True)
    return y, _names(y.grad_fn), grads, second


@pytest.mark.parametrize("case", _MIXED)
@pytest.mark.parametrize("op", ["mul", "add", "sub", "div"])
def test_mixed_dtype_arithmetic_records_torch_graph(op, case):
    (ym, nm, gm, sm), (yt, nt, gt, st) = _run(mt, op, case), _run(torch, op, case)
    assert str(ym.dtype).split(".")[-1] == str(yt.dtype).split(".")[-1]
    assert nm == nt
    assert ym.detach().numpy().tolist() == pytest.approx(yt.detach().numpy().tolist(), rel=1e-3)
    for m, t in zip(gm + sm, gt + st):
        assert (m is None) == (t is None)
        if t is not None:
            assert str(m.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
            assert m.detach().numpy().tolist() == pytest.approx(t.detach().numpy().tolist(), rel=1e-3)


@pytest.mark.parametrize("op", ["mul", "add", "sub", "div"])
def test_mixed_dtype_arithmetic_forward_mode(op):
    results = []
    for T in (torch, mt):
        with T.autograd.forward_ad.dual_level():
            a = T.autograd.forward_ad.make_dual(T.tensor([1.5, -2.0]), T.tensor([1.0, 0.5]))
            b = T.autograd.forward_ad.make_dual(T.tensor([2.5, 3.0], dtype=T.float64), T.tensor([0.25, -1.0],
                                                                                            dtype=T.float64))
            y = getattr(T, op)(a, b)
            tangent = T.autograd.forward_ad.unpack_dual(y).tangent
            results.append((str(tangent.dtype).split(".")[-1], tangent.numpy().tolist()))
    assert results[1][0] == results[0][0]
    assert results[1][1] == pytest.approx(results[0][1])


_FILLS = [(dt, v) for dt in ("uint8", "int8", "int64") for v in (-1, -255, -256, 127, 128, 255, 256, 2.7, -1.5, 1e10, True,
                                                                   2 ** 63, float("nan"))] + \
    [(dt, v) for dt in ("float32", "float16", "bool") for v in (1e300, 1e5, -1, 0.5, float("inf"))] + \
    [("uint8", 1 + 2j), ("complex64", 2 + 3j)]


@pytest.mark.parametrize("dtype,value", _FILLS)
@pytest.mark.parametrize("how", ["index_fill_", "index_fill", "new_full"])
def test_fill_values_are_converted_as_torch(how, dtype, value):
    def fill(T):
        x = T.tensor([0, 1, 2]).to(getattr(T, dtype))
        if how == "new_full":
            return x.new_full((2,), value)
        return getattr(x, how)(0, T.tensor([0, 2]), value)
    _same_as_torch(fill)


@pytest.mark.parametrize("dtype,value", [("float16", 1e5), ("float16", -1e300), ("float32", 1e300), ("uint8", -1),
                                         ("uint8", 300), ("int8", 200)])
@pytest.mark.parametrize("n", [0, 1, 2])
@pytest.mark.parametrize("how", ["full", "full_like", "new_full"])
def test_full_converts_as_torch_one_element_half_unchecked(how, n, dtype, value):
    def fill(T):
        dt = getattr(T, dtype)
        if how == "full":
            return T.full((n,), value, dtype=dt)
        if how == "full_like":
            return T.full_like(T.zeros(n, dtype=dt), value)
        return T.zeros(3, dtype=dt).new_full((n,), value)
    _same_as_torch(fill)


_ALPHAS = [
    lambda T: T.add(T.tensor([1, 2]), 1, alpha=False), lambda T: T.add(T.tensor([1, 2]), T.tensor([1, 2]), alpha=2.5),
    lambda T: T.sub(T.tensor([1, 2]), T.tensor([1, 2]), alpha=-0.5), lambda T: T.add(T.tensor([1.5]), 1, alpha=False),
    lambda T: T.add(T.tensor([1, 2]), T.tensor([1.5, 2.0]), alpha=2.5),  # (a float result takes a float alpha)
    lambda T: T.add(T.tensor([1, 2]), T.tensor([1, 2]), alpha=3), lambda T: T.add(T.tensor([True]), T.tensor([True]),
                                                                                   alpha=False),
]


@pytest.mark.parametrize("fn", _ALPHAS)
def test_alpha_is_checked_as_torch(fn):
    _same_as_torch(fn)


@pytest.mark.parametrize("fn,words", [
    (lambda T: T.tensor([True]) - True, "two bool tensors"), (lambda T: True - T.tensor([True]), "two bool tensors"),
    (lambda T: T.tensor([True]).sub_(T.tensor([False])), "two bool tensors"),
    (lambda T: T.tensor([True]) - 1, "a bool tensor"), (lambda T: T.tensor([1]) - True, "a bool tensor"),
    (lambda T: T.nn.functional.triplet_margin_loss(*[T.tensor([[True, False]])] * 3), "two bool tensors"),
])
def test_bool_subtraction_messages_are_torchs(fn, words):
    for T in (torch, mt):
        with pytest.raises(RuntimeError, match=words):
            fn(T)
