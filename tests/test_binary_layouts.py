"""The layout of elementwise results whose operands are laid out differently, op by op, against torch.

torch's TensorIterator lays a result out by its operands' strides (the first operand that tells two dims apart
decides; see microtorch/ops/_layout.py), numpy's ufuncs in C order. What a student sees of it: .stride(),
is_contiguous(), whether a later .view(-1) raises, and whether .reshape(-1) is a view (ViewBackward0) or a copy
(UnsafeViewBackward0). Each case is computed by both libraries and compared, and the values bit for bit (a relayout
only copies; the few ops whose last bits differ from torch's whatever the layout are named in LAST_BITS). An operand
of a narrower dtype is converted by torch before the layout is chosen: those cases too."""
import warnings

import numpy as np
import pytest
import torch

import microtorch as mt


def _get(L, name):
    for part in name.split("."):
        L = getattr(L, part)
    return L


def _two(name):
    return lambda L, x, y: _get(L, name)(x, y)


def _method(name):
    return lambda L, x, y: getattr(x, name)(y)


def _whole(y):
    """y's values as whole numbers, NaN made 0 (a degree or an exponent: NaN has no integer, each library
    converts it its own way)"""
    return y if isinstance(y, (int, float)) else y.nan_to_num(0.0).floor()


def _no_nan(x):
    """x with NaN made 0.5 (torch's special polynomials give a NaN x a value that depends on the layout)"""
    return x if isinstance(x, (int, float)) else x.nan_to_num(0.5)


# name: (call, kind of the operands, whether it is differentiable)
OPS = {n: (_two(n), "f", True) for n in (
    "atan2", "arctan2", "hypot", "copysign", "fmod", "remainder", "xlogy", "logaddexp", "logaddexp2", "fmin", "fmax",
    "special.xlog1py", "special.xlogy", "true_divide", "float_power", "rsub", "maximum", "minimum", "add", "sub",
    "mul", "div", "pow", "polar", "complex")}
OPS.update({n: (_two(n), "f", False) for n in (
    "nextafter", "floor_divide", "heaviside", "isclose", "eq", "lt", "ge", "logical_and", "logical_xor")})
OPS.update({n: (_two(n), "f", "y") for n in ("igamma", "igammac", "special.zeta", "special.gammainc")})  # (no
# derivative in x)
for n in ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift", "gcd", "lcm",
          "remainder", "fmod", "floor_divide"):
    OPS[n + " (int)"] = (_two(n), "i", False)
for n in ("__and__", "__or__", "__xor__", "__lshift__", "__rshift__", "__mod__", "__floordiv__"):
    OPS[n + " (int)"] = (_method(n), "i", False)
for n in ("bitwise_and", "bitwise_xor", "logical_or"):
    OPS[n + " (bool)"] = (_two(n), "b", False)
for n in ("chebyshev_polynomial_t", "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_u",
          "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p"):
    OPS["special." + n] = ((lambda n: lambda L, x, y: _get(L, "special." + n)(_no_nan(x), _whole(y)))(n), "f", False)
OPS.update({
    "ldexp": (lambda L, x, y: L.ldexp(x, y if isinstance(y, (int, float)) else _whole(y).long()), "f", True),
    "lerp": (lambda L, x, y: L.lerp(x, y * 1 if isinstance(y, (int, float)) else y, 0.3), "f", True),
    "lerp (tensor weight)": (lambda L, x, y: L.lerp(x, x.detach() * 2, y), "f", True),
    "lerp (weight first)": (lambda L, x, y: L.lerp(y * 1 if isinstance(y, (int, float)) else y.detach(),
                                                   y * 2, x.detach() / 4), "f", True),
    "div (floor)": (lambda L, x, y: L.div(x, y, rounding_mode="floor"), "f", True),
    "div (trunc)": (lambda L, x, y: L.div(x, y, rounding_mode="trunc"), "f", True),
    "clamp (tensor bounds)": (lambda L, x, y: L.clamp(x, min=y * 0.5, max=y * 2), "f", True),
    "clamp (bounds first)": (lambda L, x, y: L.clamp(y * 1, min=x * 0.5, max=x * 2), "f", True),
    "clamp_min (tensor)": (lambda L, x, y: L.clamp_min(x, y), "f", True),
    "clamp_max (tensor)": (lambda L, x, y: L.clamp_max(x, y), "f", True),
    "addcmul": (lambda L, x, y: L.addcmul(x, y, y, value=0.5), "f", True),
    "addcmul (self last)": (lambda L, x, y: L.addcmul(y * 1, x, y), "f", True),
    "addcdiv": (lambda L, x, y: L.addcdiv(x, y, y, value=0.5), "f", True),
    "addcdiv (self last)": (lambda L, x, y: L.addcdiv(y * 1, x, y), "f", True),
    "where": (lambda L, x, y: L.where(x > 1, x, y), "f", True),
    "rsub (alpha)": (lambda L, x, y: L.rsub(x, y, alpha=2), "f", True),
    "isclose (equal_nan)": (lambda L, x, y: L.isclose(x, y, equal_nan=True), "f", False),
})


def _data(rng, kind, shape):
    """values of the kind, each op's awkward ones among them (0, a negative, NaN for floats)"""
    if kind == "i":
        return rng.integers(1, 6, shape)
    if kind == "b":
        return rng.random(shape) > 0.5
    v = rng.uniform(0.25, 2.5, shape)
    flat = v.reshape(-1)
    flat[0], flat[-1] = 0.0, np.nan
    flat[len(flat) // 2] = -1.5
    return v


def _numpy_case(case, kind):
    """(x, y) as numpy arrays and the permutation each gets as a tensor (the same for both libraries)"""
    rng = np.random.default_rng(7)
    p, c, t, row, small, big = (_data(rng, kind, shape) for shape in ((2, 3, 4), (4, 2, 3), (4, 3), (4,), (2, 1, 3),
                                                                      (3, 3, 2)))
    col, col2, lone = (_data(rng, kind, shape) for shape in ((1, 2, 1, 1), (1, 2, 1, 1), (1, 3, 1)))
    zero_d = np.asarray(_data(rng, kind, (1,))[0] + (kind == "f"))
    narrow = row.astype({"f": np.float32, "i": np.int32, "b": bool}[kind])  # (torch converts it to the other's
    # dtype before it lays the result out: a broadcast operand converted is one in C order)
    return {"permuted, contiguous": ((p, (2, 0, 1)), (c, None)),
            "contiguous, permuted": ((c, None), (p, (2, 0, 1))),
            "transposed, row": ((t, (1, 0)), (row, None)),
            "row, transposed": ((row, None), (t, (1, 0))),
            "broadcast permuted, contiguous": ((small, (1, 2, 0)), (big, None)),
            "contiguous, broadcast permuted": ((big, None), (small, (1, 2, 0))),
            "transposed, 0-d": ((t, (1, 0)), (zero_d, None)),
            "0-d, transposed": ((zero_d, None), (t, (1, 0))),
            "transposed, number": ((t, (1, 0)), (2 if kind == "i" else True if kind == "b" else 1.25, "number")),
            "expanded narrower, transposed": ((narrow, "expand"), (t, (1, 0))),
            "transposed, expanded narrower": ((t, (1, 0)), (narrow, "expand")),
            "expanded, transposed": ((row, "expand"), (t, (1, 0))),
            # size-1 dims whose strides carry torch's sort past the dims no operand tells apart: a column made a
            # row by a permute is numpy-contiguous, and torch's result is transposed (view(-1) refuses it)
            "size-1 permuted, column": ((col, (1, 2, 0, 3)), (col2, None)),
            "column, size-1 permuted": ((col2, None), (col, (1, 2, 0, 3))),
            "size-1 permuted, number": ((lone, (0, 2, 1)), (2 if kind == "i" else True if kind == "b" else 1.25,
                                                           "number")),
            }[case]


CASES = ["permuted, contiguous", "contiguous, permuted", "transposed, row", "row, transposed",
         "broadcast permuted, contiguous", "contiguous, broadcast permuted", "transposed, 0-d", "0-d, transposed",
         "transposed, number", "expanded narrower, transposed", "transposed, expanded narrower", "expanded, transposed",
         "size-1 permuted, column", "column, size-1 permuted", "size-1 permuted, number"]


def _operands(L, case, kind, grad, contiguous=False):
    """the case's two operands as L's tensors (or a number), laid out as the case says, or in C order"""
    out = []
    for values, how in _numpy_case(case, kind):
        if how == "number":
            out.append(values)
            continue
        t = L.tensor(values)
        if grad and t.dtype.is_floating_point:
            t.requires_grad_()
        if how == "expand":  # (a row broadcast by hand: its dim 0 has stride 0)
            out.append(t.expand(3, 4).contiguous() if contiguous else t.expand(3, 4))
        else:
            out.append(t.permute(*how).contiguous() if how and contiguous else t.permute(*how) if how else t)
    return out


def _values(L, op, case):
    """op's values on the case's operands copied into C order first"""
    call, kind, _ = OPS[op]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call(L, *_operands(L, case, kind, grad=False, contiguous=True)).detach().numpy().copy()


def _seen(L, op, case):
    """what a student sees of op's result in this case: its strides, contiguity, values, whether view(-1) raises,
    reshape(-1)'s node; or the error the op raised"""
    call, kind, diff = OPS[op]
    x, y = _operands(L, case, kind, grad=diff is True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = call(L, x, y)
    except Exception as e:  # (torch refuses some cases: microtorch must as well)
        return type(e).__name__
    try:
        out.view(-1)
        views = True
    except RuntimeError:
        views = False
    node = out.reshape(-1).grad_fn
    return (tuple(out.shape), out.stride(), out.is_contiguous(), views, node and type(node).__name__,
            str(out.dtype).split(".")[-1], out.detach().numpy().copy())


# ops whose float64 kernels round otherwise than torch's, whatever the layout: a few ulps apart (torch's own bits
# depend on the layout there: its vectorized loop takes contiguous operands only)
LAST_BITS = {"atan2", "arctan2", "logaddexp2", "special.xlog1py", "pow", "float_power", "igamma", "igammac",
             "special.gammainc", "special.zeta", "lerp", "addcmul"}


def _bits_equal(a, b):
    """the same values bit for bit (the sign of 0 included), NaN in the same places (of any sign or payload)"""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind not in "fc":
        return np.array_equal(a, b)
    a, b = np.array(a, order="C"), np.array(b, order="C")
    nan = np.isnan(a)
    if not np.array_equal(nan, np.isnan(b)):
        return False
    a[nan] = b[nan] = 0
    return np.array_equal(a.view(np.uint8), b.view(np.uint8))


PENDING = {}  # (op, case) -> why a case still differs from torch (none now: promoted() and _cmp_operands() convert
# an operand as torch does too, through _layout.converted)


def _cases():
    for op in OPS:
        for case in CASES:
            why = PENDING.get((op, case))
            yield pytest.param(op, case, marks=pytest.mark.xfail(reason=why, strict=True) if why else ())


@pytest.mark.parametrize("op, case", list(_cases()))
def test_result_layout_like_torch(op, case):
    ours, theirs = _seen(mt, op, case), _seen(torch, op, case)
    if isinstance(theirs, str):
        assert isinstance(ours, str), f"torch raised {theirs}, microtorch returned a result"
        return
    assert not isinstance(ours, str), f"microtorch raised {ours}"
    assert ours[:6] == theirs[:6]  # shape, strides, contiguity, view(-1), reshape's node, dtype
    if op.split(" ")[0] not in LAST_BITS:
        assert _bits_equal(ours[6], theirs[6])
        return
    # (a relayout only copies: the values are those of the operands copied into C order, bit for bit, and torch's
    # to the last bits)
    assert _bits_equal(ours[6], _values(mt, op, case))
    np.testing.assert_allclose(ours[6], theirs[6], rtol=1e-13, atol=0, equal_nan=True)
    assert np.array_equal(np.isnan(ours[6]), np.isnan(theirs[6]))


GRAD_OPS = {
    "atan2": lambda L, x, y: L.atan2(x, y),
    "atan2 (other)": lambda L, x, y: L.atan2(y, x),
    "hypot": lambda L, x, y: L.hypot(x, y),
    "xlogy": lambda L, x, y: L.xlogy(x, y),
    "xlogy (other)": lambda L, x, y: L.xlogy(y, x),
    "fmin": lambda L, x, y: L.fmin(x, y),
    "lerp": lambda L, x, y: L.lerp(x, y, 0.3),
    "lerp (tensor weight)": lambda L, x, y: L.lerp(y, y * 2, x),
    "copysign": lambda L, x, y: L.copysign(x, y),
}


@pytest.mark.parametrize("op", list(GRAD_OPS))
def test_gradient_of_permuted_operand_like_torch(op):
    """the permuted operand (a leaf laid out so) requires grad; its gradient, the contiguous operand's and the
    result's layout equal torch's, bit for bit"""
    seen = []
    for L in (mt, torch):
        x = L.tensor(np.arange(1.0, 25.0).reshape(2, 3, 4) / 7).permute(2, 0, 1).detach().requires_grad_()
        y = L.tensor(np.linspace(-2.0, 2.0, 24).reshape(4, 2, 3)).requires_grad_()
        out = GRAD_OPS[op](L, x, y)
        weights = L.tensor(np.arange(24.0).reshape(4, 2, 3))
        (out * weights).sum().backward()
        seen.append((out.stride(), x.grad.stride(), y.grad.stride(), x.grad.numpy().copy(), y.grad.numpy().copy()))
    ours, theirs = seen
    assert ours[:3] == theirs[:3]
    assert _bits_equal(ours[3], theirs[3]) and _bits_equal(ours[4], theirs[4])


SAVES_RESULT = {"hypot": lambda L, x, y: L.hypot(x, y), "copysign": lambda L, x, y: L.copysign(x, y),
                "ldexp": lambda L, x, y: L.ldexp(x, y), "polar": lambda L, x, y: L.polar(x, y)}


@pytest.mark.parametrize("op", list(SAVES_RESULT))
def test_saved_result_is_the_result(op):
    """ops that save their result for backward save the relaid result itself: the very array the caller holds"""
    seen = []
    for L in (mt, torch):
        x = L.tensor(np.arange(1.0, 13.0).reshape(3, 4)).t().detach().requires_grad_()
        y = L.tensor(np.linspace(-1.0, 1.0, 12).reshape(4, 3)).requires_grad_()
        out = SAVES_RESULT[op](L, x, y)
        saved = out.grad_fn._saved_result
        seen.append((out.stride(), saved.stride()))
        if L is mt:
            assert saved._data is out._data
    assert seen[0] == seen[1]


# ---- what the binary ops rest on: a conversion, and the one-input ops ---------------------------------------
LAYOUTS = {
    "expanded row": lambda L: L.tensor(np.linspace(0.5, 2.0, 4)).expand(3, 4),
    "expanded column": lambda L: L.tensor(np.linspace(0.5, 2.0, 3)).unsqueeze(1).expand(3, 4),
    "expanded, permuted": lambda L: (L.tensor(np.linspace(0.5, 2.0, 6).reshape(2, 1, 3)).expand(2, 4, 3)
                                     .permute(2, 1, 0)),
    "permuted": lambda L: L.tensor(np.linspace(0.5, 2.0, 24).reshape(2, 3, 4)).permute(2, 0, 1),
    "transposed, with gaps": lambda L: L.tensor(np.linspace(0.5, 2.0, 24).reshape(4, 6)).t()[::2],
    "one element expanded": lambda L: L.tensor(np.asarray(1.5)).expand(3, 4),
}


def _looks(t):
    """what a student sees of t's layout, and its values"""
    try:
        t.view(-1)
        views = True
    except RuntimeError:
        views = False
    return t.stride(), t.is_contiguous(), views, str(t.dtype).split(".")[-1], t.detach().numpy().tolist()


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("dtype", ["float32", "int64", "int32", "complex128"])
def test_conversion_laid_out_like_torch(layout, dtype):
    """x.to(dtype) keeps a dense x's strides and lays a broadcast x out with its stride-0 dims in C order (so
    expand(...).float() is contiguous, as torch's)"""
    assert _looks(LAYOUTS[layout](mt).to(getattr(mt, dtype))) == _looks(LAYOUTS[layout](torch).to(getattr(torch,
                                                                                                            dtype)))


UNARY = ["erf", "erfc", "sigmoid", "lgamma", "i0", "nan_to_num", "exp", "exp2", "asinh", "special.i0e", "special.i1e",
         "special.ndtri", "special.erfcx", "special.log_ndtr", "special.entr", "special.expit", "mvlgamma"]
def _unary_cases():  # (since round 17 every one-input op is laid out as torch's, broadcast and permuted inputs too)
    for op in UNARY:
        for layout in LAYOUTS:
            yield pytest.param(op, layout)


@pytest.mark.parametrize("op, layout", list(_unary_cases()))
def test_one_input_op_laid_out_like_torch(op, layout):
    """one-input ops keep their input's layout as torch's (a broadcast input: C order), computed by numpy functions
    that are not all one ufunc; mvlgamma's is in C order whatever its input's (torch sums over a new last dim)"""
    seen = []
    for L in (mt, torch):
        x = LAYOUTS[layout](L)
        out = L.special.multigammaln(x + 2, 2) if op == "mvlgamma" else _get(L, op)(x)
        seen.append(_looks(out))
    assert seen[0][:4] == seen[1][:4]
    np.testing.assert_allclose(seen[0][4], seen[1][4], rtol=1e-12)
