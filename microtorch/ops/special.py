"""Special functions (lgamma, digamma, polygamma, mvlgamma, erfinv, i0, i1, igamma, igammac) in numpy,
with their derivatives beside them; and the pointwise ops on the float format (ldexp, frexp,
copysign, nextafter, nan_to_num). numpy has no scipy.special, so the series are written here."""
import math

import numpy as np

from .._dtype import float16
from .._tensor import Tensor
from ._layout import laid_out_as_input, like_torch, like_torch_pair
from ._memory_formats import laid_out, preserve_format
from ._op import Op, as_array, broadcast_error, promoted
from .elementwise import _erf_np, _float, _in, _unary, where, zeros_like_
from .pointwise import Xlogy, XlogyNumberInput, XlogyNumberOther, by_numbers
from .special_bessel import i0_values, i1_values
from .special_fma import c_lgamma, c_lgammas, c_pow, fma
from .special_igamma import igamma_values, igammac_values
from .special_unary import _special_op

def _huge_order(order, x):
    """n > 170: n! overflows, so the result is +-inf times the first terms of sum (x+k)^-(n+1) in x's dtype
    (NaN where they underflow to 0), as torch computes it."""
    e = np.asarray(order + 1, dtype=x.dtype)
    with np.errstate(all="ignore"):
        k_max = int(np.nanmax(np.clip(np.ceil(-x[np.isfinite(x)]), 0, None), initial=0)) + 2
        terms = sum(np.power(x + np.asarray(k, x.dtype), -e) for k in range(min(k_max, 64)))
        return ((-1.0) ** (order + 1) * np.inf * terms).astype(x.dtype)


_PSI_10 = 2.25175258906672110764  # digamma(10)
_DIGAMMA_A = [8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,
              -4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3,
              8.33333333333333333333E-2]


def _digamma_torch(x):
    """digamma as torch's CPU kernel computes it (calc_digamma), in x's dtype (float or double): reflection below 0
    (its pi / tan(pi r) always in double), the recurrence up to 10, then Cephes' asymptotic series; the C library's
    log and tan, as there (its last bits)."""
    from .special_fma import libm
    neg = x < 0
    y = np.where(neg, 1 - x, x)
    result = np.zeros_like(y)
    while (y < 10).any():
        small = y < 10
        result = np.where(small, result - 1 / y, result)
        y = np.where(small, y + 1, y)
    z = 1 / (y * y)
    series = np.full_like(z, _DIGAMMA_A[0])
    for c in _DIGAMMA_A[1:]:  # (a number meets a float32 array as float32: the float kernel's constants)
        series = series * z + c
    tail = np.where(y < 1e17, z * series, 0)
    out = np.where(y == 10, result + _PSI_10, result + libm("log", y) - 0.5 / y - tail)
    reflected = np.pi / libm("tan", np.pi * (x - np.trunc(x)).astype(np.float64))
    out = np.where(neg, out - reflected.astype(x.dtype), out)
    out = np.where(neg & (x == np.trunc(x)), np.nan, out)
    return np.where(x == 0, np.copysign(np.inf, -x), out)


def _trigamma_torch(x):
    """trigamma as torch's CPU kernel computes it (calc_trigamma), in x's dtype (float or double): reflection below
    1/2, six steps of the recurrence, then a short series in 1/x^2 with fused multiply-adds (torch's last bits; about
    1e-10 from the exact value, which torch has too)."""
    from .special_fma import libm
    k = x.dtype.type  # (the kernel's constants, pi and 1/6 ..., in x's type)
    pi = k(np.pi)
    small = x < 0.5
    s = libm("sin", pi * x)
    result = np.where(small, -(pi * pi) / (s * s), k(0))
    y = np.where(small, 1 - x, x)
    for _ in range(6):
        result = result + 1 / (y * y)
        y = y + 1
    ixx = 1 / (y * y)
    poly = fma(ixx, fma(-ixx, fma(-ixx, k(1) / k(42), k(1) / k(30)), k(1) / k(6)), 1 + 1 / (2 * y))
    out = result + poly / y
    return np.where(small, -out, out)


def _polygamma_np(order, x):
    """psi^(order)(x) as torch computes it: digamma and trigamma by their own kernels, the higher orders as
    (-1)^(n+1) n! zeta(n + 1, x), with n! as exp(lgamma(n + 1)) of the C library."""
    if order > 170:
        return _huge_order(order, np.asarray(x))
    x = np.asarray(x)
    x = x.astype(np.float64 if x.dtype == np.float64 else np.float32)  # (Half's kernel calls float's)
    with np.errstate(all="ignore"):
        if order < 2:
            return _digamma_torch(x) if order == 0 else _trigamma_torch(x)
        t = x.dtype.type  # (float32's lgammaf and expf: nearly always the double's rounded)
        n_factorial = t(math.exp(t(c_lgamma(order + 1))))
        return t((-1) ** (order + 1)) * n_factorial * _zeta_np(order + 1.0, x, x.dtype).astype(x.dtype)


def _lgamma_np(x):
    """lgamma in float64 with the C library's function. torch's kernel uses SLEEF's, which agrees with it to a last
    bit or two (about 60% of values to the bit); Python's math.lgamma is off by up to 1e-9 of the value near 1 and 2"""
    return c_lgammas(x)


@laid_out_as_input
class Polygamma(Op):
    """d psi^(n)(x) = psi^(n+1)(x)"""
    _grad_fn_name = "PolygammaBackward0"
    _saved_names, _saved_values = ("self",), {"n": "n"}

    @staticmethod
    def forward(ctx, x, n=0):
        ctx.n = n
        ctx.save_for_backward(x)
        return _polygamma_np(n, x).astype(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * Polygamma.apply(x, n=ctx.n + 1)

    @staticmethod
    def jvp(ctx, t):
        return t * Polygamma.apply(ctx.inputs[0], n=ctx.n + 1)


class Digamma(Polygamma):
    _grad_fn_name = "DigammaBackward0"
    _saved_values = {}  # (torch's node shows no n)


def _d_lgamma(x):
    """d lgamma(x) = digamma(x)"""
    return Digamma.apply(x, n=0)


def _erfinv_np(y):
    """Winitzki's approximation, then Newton steps on erf(x) = y."""
    y = np.asarray(y, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = 0.147
        ln = np.log1p(-y * y)
        t = 2 / (np.pi * a) + ln / 2
        x = np.sign(y) * np.sqrt(np.sqrt(t * t - ln / a) - t)
        for _ in range(3):
            step = (_erf_np(x) - y) / (2 / np.sqrt(np.pi) * np.exp(-x * x))
            x = np.where(np.isfinite(x), x - np.nan_to_num(step), x)
    return np.where(np.abs(y) > 1, np.nan, np.where(y == 0, y, x))  # (erfinv(-0.0) is -0.0)


def _d_erfinv(g, x):
    """d erfinv(x) = sqrt(pi)/2 exp(erfinv(x)^2), term by term as torch's formula (which computes erfinv(x) again)"""
    from .scalar_overloads import mul_scalar
    return mul_scalar(Erfinv.apply(x).pow(2).exp(), 0.5 * math.sqrt(math.pi)) * g


def _in_float32_if_half(kernel):
    """torch's i0 and i1 kernels compute a half tensor in float32 and round once"""
    return lambda x: kernel(x.astype(np.float32) if x.dtype == np.float16 else x).astype(x.dtype)


def _d_i1(grad, x, result):
    """d I1(x) = I0(x) - I1(x)/x with the saved I1(x) (as torch's node, which keeps self and result), and 1/2
    where |x| <= eps (or NaN)"""
    if x._data.dtype == np.float16:
        raise NotImplementedError("\"i1_backward\" not implemented for 'Half' (special.i1's gradient: compute it "
                                  "in float32, x.float())")
    eps = float(np.finfo(x._data.dtype).eps)
    big = x.abs() > eps
    safe = where(big, x, eps)
    return grad * where(big, I0.apply(safe) - result * safe.reciprocal(), 0.5)


def _d_i0(x):
    """d I0(x) = I1(x)"""
    return I1.apply(x)


Lgamma = _unary("Lgamma", lambda x: _lgamma_np(x).astype(x.dtype), _d_lgamma)
Erfinv = _unary("Erfinv", lambda x: _erfinv_np(x).astype(x.dtype), formula=_d_erfinv)
I0 = _unary("I0", _in_float32_if_half(i0_values), _d_i0)
I1 = _special_op("SpecialI1", lambda x: i1_values(x, special_i1=True), _d_i1)  # (and i0's derivative)


def _real(input, op):
    """a floating input (integers promoted); torch has no complex form of these functions."""
    from .scan import need_tensor
    need_tensor(input, op, "input", 0)
    if input.dtype.is_complex:
        raise NotImplementedError(f'"{op}" not implemented for \'{input.dtype}\': it is defined for real numbers; '
                                  "take .real or .abs() first")
    return _float(input)


def lgamma(input):
    return Lgamma.apply(_real(input, "lgamma"))


def digamma(input):
    return Digamma.apply(_real(input, "digamma"), n=0)


def polygamma(n, input):
    if not isinstance(n, int) or n < 0:
        raise RuntimeError(f"polygamma(n, x) does not support negative n (got n={n}); n is the order of the "
                           "derivative of digamma")
    x = _real(input, "polygamma")
    return Polygamma.apply(x, n=n) if n else Digamma.apply(x, n=0)


def erfinv(input):
    return Erfinv.apply(_real(input, "erfinv"))


def i0(input):
    return I0.apply(_real(input, "i0"))


def i1(input):
    return I1.apply(_real(input, "i1"))



class Mvlgamma(Op):
    """log Gamma_p(x) = p(p-1)/4 log(pi) + sum_i lgamma(x - i/2);  d = sum_i digamma(x - i/2)"""
    _grad_fn_name = "MvlgammaBackward0"
    _saved_names, _saved_values = ("self",), {"p": "p"}

    @staticmethod
    def forward(ctx, x, p=1):
        ctx.p = p
        ctx.save_for_backward(x)
        out = p * (p - 1) / 4 * math.log(math.pi) + sum(_lgamma_np(x - i / 2) for i in range(p))
        return np.asarray(out).astype(x.dtype, order="C")  # (C order whatever x's: torch's is a sum over a new
        # last dim)

    @staticmethod
    def backward(ctx, grad):
        return grad * Mvlgamma._local(ctx.saved_tensors[0], ctx.p)

    @staticmethod
    def jvp(ctx, t):
        return t * Mvlgamma._local(ctx.inputs[0], ctx.p)

    @staticmethod
    def _local(x, p):
        return sum(Digamma.apply(x - i / 2, n=0) for i in range(p))


def mvlgamma(input, p):
    if p < 1:
        raise RuntimeError(f"mvlgamma: p has to be greater than or equal to 1 (got {p})")
    if input.dtype.name == "bool":
        raise RuntimeError("mvlgamma(): The input tensor may not be a boolean tensor.")
    if p > 2 ** 20:
        raise RuntimeError(f"mvlgamma(): p = {p} is too large (the sum has p terms)")
    x = _real(input, "mvlgamma")
    return x.clone() if x.numel() == 0 else Mvlgamma.apply(x, p=p)


class Igamma(Op):
    """P(a, x);  d/dx = x^(a-1) e^-x / Gamma(a) (torch has no derivative in a)"""
    _grad_fn_name = "IgammaBackward0"
    _saved_names = ("self", "other")

    @staticmethod
    def forward(ctx, a, x, sign=1):
        ctx.sign = sign
        ctx.save_for_backward(a, x)
        values = (igamma_values if sign == 1 else igammac_values)(a, x, x.dtype)  # (Q as Q: its tail keeps digits)
        return like_torch_pair(values.astype(x.dtype), a, x)  # (numpy's is in C order; torch lays it out by the
        # operands' strides: see ops/_layout.py)

    @staticmethod
    def backward(ctx, grad):
        a, x = ctx.saved_tensors
        if ctx.needs_input_grad[0]:
            raise NotImplementedError(f"the derivative for '{'igamma' if ctx.sign == 1 else 'igammac'}: input' is "
                                      "not implemented; "
                                      "only the second argument (x) can require grad")
        return None, grad * Igamma._density(a, x) * ctx.sign

    @staticmethod
    def jvp(ctx, ta, tx):  # as torch: no forward-mode formula
        name = "igamma" if ctx.sign == 1 else "igammac"
        raise NotImplementedError(f"Trying to use forward AD with {name} that does not support it because it has "
                                  "not been implemented yet; use reverse mode (backward, grad, jacrev) instead")

    @staticmethod
    def _density(a, x):
        return ((a - 1) * x.log() - x - Lgamma.apply(a)).exp()


class Igammac(Igamma):
    """Q(a, x) = 1 - P(a, x);  d/dx = -x^(a-1) e^-x / Gamma(a)"""
    _grad_fn_name = "IgammacBackward0"


def _igamma(cls, name, input, other, sign):
    from .scan import need_tensor
    need_tensor(other, name)
    if input.dtype.is_complex or other.dtype.is_complex:
        raise NotImplementedError(f'"{name}" not implemented for complex tensors')
    try:
        a, x = promoted(_float(input), _float(other) if isinstance(other, Tensor) else other)
        return cls.apply(a, x, sign=sign)
    except ValueError as e:
        raise broadcast_error(name, e, input, other) from None


def igamma(input, other):
    return _igamma(Igamma, "igamma", input, other, 1)


def igammac(input, other):
    return _igamma(Igammac, "igammac", input, other, -1)


# ---- torch.special's binary functions: xlog1py and the Hurwitz zeta ----------------------------------------
class Xlog1py(Xlogy):
    """x log(1 + y): xlogy's op and formulas with y + 1 (the x part is 0 where x == 0 and y <= -1)"""
    _grad_fn_name, _log = "SpecialXlog1PyBackward0", staticmethod(np.log1p)


class Xlog1pyNumberInput(XlogyNumberInput):
    _grad_fn_name, _log = "SpecialXlog1PyBackward1", staticmethod(np.log1p)


class Xlog1pyNumberOther(XlogyNumberOther):
    _grad_fn_name, _log = "SpecialXlog1PyBackward2", staticmethod(np.log1p)


def xlog1py(input, other):
    return by_numbers((Xlog1py, Xlog1pyNumberInput, Xlog1pyNumberOther), "xlog1py", input, other)


Xlog1py.shifted = Xlog1pyNumberInput.shifted = Xlog1pyNumberOther.shifted = (xlog1py, 1)


# the Euler-Maclaurin correction terms of the Hurwitz zeta (Cephes' zeta, which torch's kernel follows)
_ZETA_A = [12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
           -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15, 1.8152105401943546773e17,
           -7.1661652561756670113e18]
_MACHEP = 1.11022302462515654042e-16


def _zeta_np(x, q, dtype=np.float64):
    """sum over k >= 0 of (k + q)^-x, element by element as Cephes' loop: terms until one no longer counts (at
    least nine, and up to k + q > 9), then the Euler-Maclaurin tail; inf at x == 1 and at the poles q = 0, -1, ...;
    NaN for x < 1, and for q < 0 with a non-integer x. In double, as torch's kernel, whose first term q^-x is in
    the inputs' dtype (float32's pow)."""
    x, q = np.broadcast_arrays(np.asarray(x, np.float64), np.asarray(q, np.float64))
    s, a, b, i = c_pow(q, -x).astype(dtype).astype(np.float64), q.copy(), np.zeros_like(q), 0
    pole, no_value = (q <= 0) & (q == np.floor(q)), (x <= 1) | (q <= 0) & (x != np.floor(x))
    done = pole | no_value  # (decided below; the loop would never lift q = -inf above 9)
    while True:
        live = ~done & ((i < 9) | (a <= 9))
        if not live.any():
            break
        i, a = i + 1, np.where(live, a + 1, a)
        b = np.where(live, c_pow(a, -x), b)
        s = np.where(live, s + b, s)
        done |= live & (-_MACHEP * s < b) & (b < _MACHEP * s)
    w, k, c = a, 0.0, np.ones_like(a)
    s = np.where(done, s, s + b * w / (x - 1) - 0.5 * b)
    for coef in _ZETA_A:
        c, b = c * (x + k), b / w
        t = c * b / coef
        s = np.where(done, s, s + t)
        done |= np.abs(t / s) < _MACHEP
        k += 1
        c, b, k = c * (x + k), b / w, k + 1
    s = np.where((q <= 0) & (x != np.floor(x)), np.nan, s)
    s = np.where(pole, np.inf, s)
    return np.where(x == 1, np.inf, np.where(x < 1, np.nan, s))


class Zeta(Op):
    """d zeta(x, q) / dq = -x zeta(x + 1, q); torch has no derivative in x"""
    _grad_fn_name = "SpecialZetaBackward0"
    _saved_names = ("self", "other")

    @staticmethod
    def forward(ctx, x, q, dtype=None):
        ctx.save_for_backward(x, q)
        return Zeta.values(x, q, dtype)

    @staticmethod
    def values(x, q, dtype):
        dtype = dtype if dtype is not None else np.result_type(x, q)
        out = _zeta_np(x, q, dtype).astype(dtype)
        return like_torch_pair(out, x, q)  # (laid out as torch's, as igamma's)

    @staticmethod
    def backward(ctx, grad):
        x, q = ctx.saved_tensors
        if ctx.needs_input_grad[0]:
            raise NotImplementedError(_NO_ZETA_X)
        return None, Zeta.q_grad(grad, x, q)

    @staticmethod
    def q_grad(grad, x, q):
        return grad * -x * zeta(x + 1, q)

    @staticmethod
    def jvp(ctx, tx, tq):  # as torch: no forward-mode formula
        raise NotImplementedError("Trying to use forward AD with special_zeta that does not support it because it "
                                  "has not been implemented yet; use reverse mode (backward, grad, jacrev) instead")


_NO_ZETA_X = ("the derivative for 'zeta' is not implemented. (torch has no derivative of zeta in its first argument "
              "x; detach x, or differentiate in q only)")


class ZetaNumberInput(Zeta):
    """zeta(2, q): torch's node keeps the number (as the caller gave it: `number`; x is its 0-d array), not a
    tensor of it"""
    _grad_fn_name = "SpecialZetaBackward1"
    _saved_names, _saved_values = ("other",), {"self": "number"}

    @staticmethod
    def forward(ctx, x, q, dtype=None, number=None):
        ctx.x, ctx.number = x, number
        ctx.save_for_backward(q)
        return Zeta.values(x, q, dtype)

    @staticmethod
    def backward(ctx, grad):
        (q,) = ctx.saved_tensors
        return None, Zeta.q_grad(grad, Tensor._make(ctx.x), q)


class ZetaNumberOther(Zeta):
    """zeta(x, 2): no derivative, so torch's node saves nothing"""
    _grad_fn_name = "SpecialZetaBackward2"
    _saved_names = ()

    @staticmethod
    def forward(ctx, x, q, dtype=None, number=None):
        return Zeta.values(x, q, dtype)

    @staticmethod
    def backward(ctx, grad):
        raise NotImplementedError(_NO_ZETA_X)


def zeta(input, other):
    if any(isinstance(v, Tensor) and v.dtype == float16 for v in (input, other)):  # (torch has no half kernel)
        raise NotImplementedError("\"zeta_cpu\" not implemented for 'Half': compute zeta in float32 or float64, "
                                  "e.g. zeta(x.float(), q.float())")
    return by_numbers((Zeta, ZetaNumberInput, ZetaNumberOther), "zeta", input, other)


# ---- the float format ------------------------------------------------------------------------------
class Ldexp(Op):
    """x 2^e;  d = (2^e, x 2^e ln 2) (a floating e has a gradient too, as torch's)"""
    _grad_fn_name = "LdexpBackward0"
    _saved_names = ("other", "result")

    @staticmethod
    def forward(ctx, x, e):  # (a complex exponent makes the result complex, as torch's x * 2**e)
        ctx.scale = np.exp2(e).astype(np.result_type(x.dtype, e.dtype) if e.dtype.kind == "c" else x.dtype)
        out = x * ctx.scale
        # laid out as torch's, before it is saved: by x and e; but torch writes the product by an integer (or
        # complex) exponent into a tensor laid out as x, when x has the result's shape
        alone = e.dtype.kind != "f" and x.shape == out.shape
        out = like_torch(out, x) if alone else like_torch_pair(out, x, e)
        # torch keeps the exponent for x's gradient only, and the result: x may change in place
        ctx.save_for_backward(e if ctx.needs_input_grad[0] else None, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        e, result = ctx.saved_tensors
        if not ctx.needs_input_grad[1]:  # (an exponent with no gradient: a constant scale)
            return grad * Tensor._make(ctx.scale).conj(), None
        from .pointwise import exp2
        return grad * exp2(e) if ctx.needs_input_grad[0] else None, grad * result * math.log(2)

    @staticmethod
    def jvp(ctx, t, _te):
        return t * Tensor._make(ctx.scale)


def ldexp(input, other):
    if isinstance(other, Tensor) and other.dtype.name == "bool" and isinstance(input, Tensor) and \
            input.dtype.is_floating_point:  # (torch's kernel for a real floating input: none for a bool exponent)
        raise NotImplementedError("ldexp(): \"ldexp_cpu_exp\" not implemented for 'Bool': the exponent must be a "
                                  "number tensor; convert it with .long()")
    x = _float(input)
    try:
        e = other._data if isinstance(other, Tensor) else np.asarray(other)
        np.broadcast_shapes(tuple(x.shape), e.shape)
    except ValueError as err:
        raise broadcast_error("ldexp", err, input, other) from None
    keep = isinstance(other, Tensor) and other.dtype.is_floating_point and other._data.dtype == x._data.dtype
    return Ldexp.apply(x, other if keep else Tensor._make(as_array(e)))  # (a floating exponent keeps its edge)


class Copysign(Op):
    """|x| with the sign of y;  d/dx = copysign(1, x) copysign(1, y) (0 at x = 0), none for y"""
    _grad_fn_name = "CopysignBackward0"
    _saved_names = ("self", "result")

    @staticmethod
    def forward(ctx, x, y):
        out = as_array(like_torch_pair(np.copysign(x, y), x, y))  # (0-d: an array, found as this node's output by
        # backward, as hypot's; laid out as torch's before it is saved)
        ctx.save_for_backward(x if ctx.needs_input_grad[0] else None, out)  # (x for its own gradient only, as torch)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        return (grad * Copysign._local(x, out) if x is not None else None), zeros_like_(grad)  # (zeros with no
        # graph, as torch's zeros_like(other))

    @staticmethod
    def jvp(ctx, tx, _ty):
        return Copysign._local(ctx.inputs[0], ctx.output) * tx

    @staticmethod
    def _local(x, out):
        """torch's ratio result / x with 0 written where x = 0 (so its own derivative there is 0 / 0 = nan, as torch's)"""
        from .index import masked_fill
        return masked_fill(out / x, x == 0, 0.0)


class CopysignScalar(Copysign):
    """copysign(x, a number): torch's other overload"""
    _grad_fn_name = "CopysignBackward1"


def _no_complex(op, *operands):
    if any(isinstance(t, Tensor) and t.dtype.is_complex for t in operands):
        raise NotImplementedError(f'"{op}_cpu" not implemented for \'ComplexFloat\': {op} is defined for real '
                                  "numbers; take .real or .abs() first")


def copysign(input, other):
    _no_complex("copysign", input, other)
    try:
        x, y = promoted(_float(input), _float(other) if isinstance(other, Tensor) else other)
        return (Copysign if isinstance(other, Tensor) else CopysignScalar).apply(x, y)
    except ValueError as e:
        raise broadcast_error("copysign", e, input, other) from None


class Nextafter(Op):
    """the next float after x towards y;  d = ([x != y], 0): torch's formula (the step itself counts for nothing)"""
    _grad_fn_name = "NextafterBackward0"
    _saved_names = ("self", "other")

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return like_torch_pair(np.nextafter(x, y), x, y)

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        return (where(x != y, grad, 0) if ctx.needs_input_grad[0] else None,
                zeros_like_(y) if ctx.needs_input_grad[1] else None)  # (zeros with no graph, as torch's zeros_like)

    @staticmethod
    def jvp(ctx, tx, ty):
        x, y = ctx.inputs
        return where(x != y, tx, 0)


def nextafter(input, other):
    from .scan import need_tensor
    need_tensor(other, "nextafter")
    try:
        np.broadcast_shapes(tuple(input.shape), tuple(other.shape))
    except ValueError as e:
        raise broadcast_error("nextafter", e, input, other) from None
    _no_complex("nextafter", input, other)
    try:
        return Nextafter.apply(*promoted(_float(input), _float(other)))
    except ValueError as e:
        raise broadcast_error("nextafter", e, input, other) from None


class NanToNum(Op):
    """NaN and +-inf replaced by numbers;  d = g where x was finite, else 0"""
    _grad_fn_name = "NanToNumBackward0"
    _saved_names = ("self",)

    @staticmethod
    def forward(ctx, x, nan=0.0, posinf=None, neginf=None):
        ctx.save_for_backward(x)  # (as torch: x changed in place afterwards, backward refuses)
        out = laid_out(x, preserve_format)  # (torch's empty_like: x's own strides when it is dense)
        return np.nan_to_num(out, copy=False, nan=nan, posinf=posinf, neginf=neginf)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * Tensor._make(np.isfinite(x._data).astype(grad._data.dtype))

    @staticmethod
    def jvp(ctx, t):
        return t * Tensor._make(np.isfinite(ctx.inputs[0]._data).astype(t._data.dtype))


def check_nan_to_num_args(op, nan, posinf, neginf):
    """The three replacement numbers, after torch's checks: a float, or a 0-d tensor that requires no grad (its
    number; a complex one does not convert)."""
    import numbers
    out = []
    for pos, (name, v) in enumerate((("nan", nan), ("posinf", posinf), ("neginf", neginf)), 1):
        if isinstance(v, Tensor) and v.ndim == 0 and not v.requires_grad:
            if v.dtype.is_complex:
                raise RuntimeError(f"{op}(): value cannot be converted to type double without overflow ({name} is "
                                   f"the complex {v.item()}; pass a real number)")
            v = v.item()
        if v is not None and (isinstance(v, Tensor) or not isinstance(v, numbers.Real)):
            raise TypeError(f"{op}(): argument '{name}' (position {pos}) must be float, not {type(v).__name__}")
        out.append(v)
    return out


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    nan, posinf, neginf = check_nan_to_num_args("nan_to_num", nan, posinf, neginf)
    if input._data.dtype.kind in "biu":
        return input.clone()
    return NanToNum.apply(input, nan=0.0 if nan is None else nan, posinf=posinf, neginf=neginf)


class Frexp(Op):
    """x = mantissa 2^exponent;  d mantissa/dx = 2^-exponent (the node keeps the exponent, as torch's)"""
    _grad_fn_name = "FrexpBackward0"
    _saved_names = ("exponent",)

    @staticmethod
    def forward(ctx, x):
        m, e = np.frexp(x)
        e = e.astype(np.int32)
        ctx.save_for_backward(e)
        return m, e

    @staticmethod
    def backward(ctx, gm, _ge):
        (e,) = ctx.saved_tensors
        return gm * Frexp._scale(e, gm)

    @staticmethod
    def jvp(ctx, t):
        return t * Frexp._scale(ctx.output[1], t), None

    @staticmethod
    def _scale(e, like):
        """2^-e, exactly, in like's dtype"""
        return Tensor._make(np.exp2(-e._data).astype(like._data.dtype))


def frexp(input):
    from .reduce import return_type
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"torch.frexp() only supports floating-point dtypes, got {input.dtype}")
    m, e = Frexp.apply(input)
    return return_type("frexp", ("mantissa", "exponent"))(m, e)
