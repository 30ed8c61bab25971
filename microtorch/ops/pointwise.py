"""More pointwise maths: inverse hyperbolics, exp2, erfc, logit, atan2, hypot, logaddexp, xlogy,
lerp, addcmul/addcdiv, fmax/fmin. Each is one Function with its derivative beside it."""
import math

import numpy as np

from .. import _kernel_exp
from .._tensor import Tensor
from . import _zero_tangent as _zero
from ._op import NoDerivative, Op, as_array, broadcast_error, numbers_as, promoted, unrecorded
from ._range_kernels import _thread_chunks
from .._dtype import float16, float32, result_type
from .elementwise import (ClampTensor, MulScalar, PowScalar, _float, _in, _need_tensors, _operands, _unary, as_given,
                          where)
from ._kernels import _NAMES
from ._layout import as_input, laid_out_as_input, like_torch, like_torch_pair, with_number
from .index import fill_scalar
from .scalar_overloads import add_scalar, mul_scalar, scalar_minus, sub_scalar


# torch's formulas (derivatives.yaml), term by term: g is the output's gradient, x the input, y the result
def _d_asinh(g, x):
    """d asinh(x) = 1/sqrt(x^2 + 1)"""
    return g * add_scalar(PowScalar.apply(x, 2), 1).rsqrt().conj()


def _d_acosh(g, x):
    """d acosh(x) = 1/sqrt(x^2 - 1), for complex x 1/(sqrt(x + 1) sqrt(x - 1)) (sqrt(ab) is not sqrt(a) sqrt(b))"""
    if x.is_complex():
        return g * (add_scalar(x, 1).rsqrt() * sub_scalar(x, 1).rsqrt()).conj()
    return g * sub_scalar(x * x, 1).rsqrt()


def _d_exp2(g, y):
    """d 2^x = 2^x ln 2"""
    return mul_scalar(g * y.conj(), 0.6931471805599453)


def _d_erfc(g, x):
    """d erfc(x) = -2/sqrt(pi) exp(-x^2)"""
    return mul_scalar((-PowScalar.apply(x, 2)).exp(), -2 / math.sqrt(math.pi)) * g


def _erfc_np(x):
    """erfc in double, then x's dtype (1 - erf(x) loses every digit where erf(x) nears 1: erfc(3) was 0.1% off in
    float32, erfc(10) was 0)"""
    return np.vectorize(math.erfc, otypes=[np.float64])(x).astype(x.dtype) if x.size else x.copy()


Asinh = _unary("Asinh", np.arcsinh, formula=_d_asinh)
Acosh = _unary("Acosh", np.arccosh, formula=_d_acosh)
Exp2 = _unary("Exp2", np.exp2, formula=_d_exp2, saves="output", in_double=True)
Erfc = _unary("Erfc", _erfc_np, formula=_d_erfc)


class Deg2Rad(Op):
    """d (x pi/180) = pi/180. torch's gradient is grad times the constant (MulBackward1): it does not depend on x,
    so with a constant grad it is a constant, whose own gradient torch refuses to compute"""
    _grad_fn_name = "Deg2RadBackward0"
    scale = math.pi / 180

    @staticmethod
    def forward(ctx, x):  # x * scale as torch: scale rounded to x's dtype (numpy's rad2deg rounds its constant
        # otherwise), half precision in float32 then rounded
        wide = np.promote_types(x.dtype, np.float32)
        out = np.asarray(np.multiply(x, ctx._forward_cls.scale, dtype=wide).astype(x.dtype, copy=False))
        return with_number(out, x)  # (torch's is a product with a number: laid out as one)

    @staticmethod
    def backward(ctx, grad):
        return mul_scalar(grad, ctx._forward_cls.scale)

    @staticmethod
    def jvp(ctx, t):
        return mul_scalar(t, ctx._forward_cls.scale)


class Rad2Deg(Deg2Rad):
    """d (x 180/pi) = 180/pi (see Deg2Rad)"""
    _grad_fn_name = "Rad2DegBackward0"
    scale = 180 / math.pi


@laid_out_as_input
class Frac(Op):
    """d (x - trunc(x)) = 1: torch passes the gradient (and the tangent) on as it is"""
    _grad_fn_name = "FracBackward0"

    @staticmethod
    def forward(ctx, x):
        return np.asarray(x - np.trunc(x))

    @staticmethod
    def backward(ctx, grad):
        return grad

    @staticmethod
    def jvp(ctx, t):
        return t


@laid_out_as_input
class Atanh(Op):
    """d atanh(x) = 1/(1 - x^2), as torch's formula: a division (times a reciprocal rounds elsewhere)"""
    _grad_fn_name = "AtanhBackward0"
    _saved_names = ("self",)

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.asarray(np.arctanh(x[()] if x.ndim == 0 else x))  # (a 0-d array as a scalar: see scalar_path)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return Atanh._formula(grad, x)

    @staticmethod
    def jvp(ctx, t):
        return Atanh._formula(t.conj(), ctx.inputs[0]).conj()

    @staticmethod
    def _formula(g, x):  # torch's, term by term: grad * 1 / (1 - x^2)
        return mul_scalar(g, 1) / scalar_minus(1, PowScalar.apply(x, 2)).conj()


@laid_out_as_input
class Sinc(Op):
    """d sin(pi x)/(pi x) = (pi x cos(pi x) - sin(pi x)) / (pi x^2), 0 where pi x^2 is (torch's formula, term by
    term: the gradient selected there, not multiplied by 0)"""
    _grad_fn_name = "SincBackward0"
    _saved_names = ("self",)

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.asarray(np.sinc(x))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return Sinc._times_slope(grad, x, conj=True)

    @staticmethod
    def jvp(ctx, t):
        return Sinc._times_slope(t, ctx.inputs[0], conj=False)

    @staticmethod
    def _times_slope(g, x, conj):
        """torch's sinc_backward. Its nodes are made in the order torch's compiled formula makes them (the sin before
        the cos and the product), so that a second backward adds the three gradients of pi x in torch's order: at a
        tiny x, where they cancel, the result is torch's 0."""
        px, pxx = mul_scalar(x, math.pi), mul_scalar(x * x, math.pi)
        sin = px.sin()
        slope = (px * px.cos() - sin) / pxx
        return where(pxx == 0, 0.0, g * (slope.conj() if conj else slope))


UNARY = {"asinh": Asinh, "acosh": Acosh, "atanh": Atanh, "exp2": Exp2, "erfc": Erfc, "deg2rad": Deg2Rad,
         "rad2deg": Rad2Deg, "frac": Frac, "sinc": Sinc}


def _unary_fn(name, cls):
    floating = name != "frac"

    def fn(input):
        if not floating:  # frac: a float tensor only
            from .scan import need_tensor
            if not need_tensor(input, name, "input", 1).dtype.is_floating_point:
                raise NotImplementedError(f'"{name}_cpu" not implemented for \'{input.dtype}\'; convert with .double()')
        return cls.apply(_float(input) if floating else input)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = cls.__doc__
    return fn


asinh, acosh, atanh, exp2, erfc, deg2rad, rad2deg, frac, sinc = (_unary_fn(n, c) for n, c in UNARY.items())
arcsinh, arccosh, arctanh = asinh, acosh, atanh


@laid_out_as_input
class Logit(Op):
    """d log(p/(1-p)) = 1/(p(1-p)); with eps, p is clamped to [eps, 1-eps] (derivative 0 outside)"""
    _grad_fn_name = "LogitBackward0"
    _saved_names, _saved_values = ("self",), {"eps": "eps"}

    @staticmethod
    def forward(ctx, p, eps=None):
        ctx.eps = eps
        ctx.save_for_backward(p)
        # torch's order, not np.clip's: below eps first (with eps > 1/2 the bounds cross; a NaN eps clamps nothing)
        q = p if eps is None else np.where(p < eps, p.dtype.type(eps), np.where(p > 1 - eps, p.dtype.type(1 - eps), p))
        return np.log(q / (1 - q))

    @staticmethod
    def backward(ctx, grad):
        (p,) = ctx.saved_tensors
        if unrecorded(grad) and unrecorded(p):  # torch's kernel: grad * inf at 0 and 1 (-0.0 too, where the formula
            return Logit._masked(_ends_times_inf(grad, p), p, ctx.eps)  # below divides by -0.0), grad / (p (1 - p))
        return Logit._masked(grad / (p * scalar_minus(1.0, p)), p, ctx.eps)  # (torch's: a division, not times a
        # reciprocal)

    @staticmethod
    def jvp(ctx, t):
        p = ctx.inputs[0]
        return Logit._masked(t / (p * scalar_minus(1.0, p)), p, ctx.eps)

    @staticmethod
    def _masked(d, p, eps):
        """d (grad / (p (1 - p)): inf at 0 and 1, as torch) where torch's logit_backward keeps it"""
        x = p._data
        if eps is None:  # torch: NaN outside [0, 1]
            return where(Tensor._make((x >= 0) & (x <= 1)), d, float("nan"))
        # with eps, d only where p was not clamped (selected, not d * 0: d may be inf), and not where p or eps is NaN
        return where(Tensor._make((x >= eps) & (x <= 1 - eps)), d, 0.0)


def _ends_times_inf(grad, p):
    """logit's gradient as torch's kernel computes it where nothing records: grad / (p (1 - p)), but grad * inf
    where p is 0 or 1 on each row's tail, where its scalar formula runs (so +inf at -0.0 there, -inf in its vector
    lanes: 128-byte steps)"""
    g, x = grad._data, p._data
    d = g / (x * (1 - x))
    ends = (x == 0) | (x == 1)
    if ends.any():
        ends &= ~_kernel_exp.lane_mask(np.broadcast_to(x, d.shape), _thread_chunks, np.broadcast_to(g, d.shape))
    return Tensor._make(np.where(ends, g * np.inf, d) if ends.any() else np.asarray(d))


def logit(input, eps=None):
    return Logit.apply(_float(input), eps=eps)


# ---- two inputs ------------------------------------------------------------------------------------
def _pairwise(np_fn, dtype, a, b):
    """np_fn(a, b), in `dtype` when _operands left an operand in its own, laid out as torch's result: by the
    operands' strides, a first, as torch converts them (numpy's would be in C order; see ops/_layout.py)"""
    if dtype is not None:
        a, b = _in(dtype, a, b)
    return like_torch_pair(np_fn(a, b), a, b)


class Atan2(Op):
    """d atan2(a, b) = (b, -a)/(a^2 + b^2)"""
    _grad_fn_name = "Atan2Backward0"
    _saved_names = ("self", "other")  # (torch's _saved_<name>; pack hooks see them sorted by name)

    @staticmethod
    def forward(ctx, a, b, dtype=None):
        ctx.save_for_backward(a, b)
        return _pairwise(np.arctan2, dtype, a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors  # (torch's atan2_backward, term by term: 0 where a^2 + b^2 is 0, at (0, 0))
        recip = (a * a + b * b).reciprocal()
        recip = recip.masked_fill(Tensor._make(np.isinf(recip._data)), 0.0)
        return grad * b * recip, grad * -a * recip

    @staticmethod
    def jvp(ctx, ta, tb):
        a, b = ctx.inputs  # (torch's formula, term by term)
        return (-a * tb + b * ta) / (a.pow(2) + b.pow(2))


class Hypot(Op):
    """d sqrt(a^2 + b^2) = (a, b)/hypot(a, b)"""
    _grad_fn_name = "HypotBackward0"
    _saved_names = ("self", "other", "result")

    @staticmethod
    def forward(ctx, a, b, dtype=None):
        out = as_array(_pairwise(np.hypot, dtype, a, b))  # (0-d: an array, so that backward finds it as this
        # node's output, with its history; laid out before it is saved: the saved array is the result itself)
        needs = ctx.needs_input_grad  # (each operand kept for its own gradient only, as torch)
        ctx.save_for_backward(a if needs[0] else None, b if needs[1] else None, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, b, out = ctx.saved_tensors
        return (grad * a / out if a is not None else None), (grad * b / out if b is not None else None)

    @staticmethod
    def jvp(ctx, ta, tb):
        a, b = ctx.inputs
        return ta * a / ctx.output + tb * b / ctx.output  # (torch's formula, term by term)


def _logaddexp_np(a, b):
    """log(e^a + e^b); for complex numbers (numpy has no such loop) torch's way: from the one of larger real part,
    log1p(e^(min - max)) + max, -inf where both are -inf, NaN where either is NaN"""
    if a.dtype.kind != "c" and b.dtype.kind != "c":
        return np.logaddexp(a, b)
    a, b = np.broadcast_arrays(*(np.asarray(v, np.result_type(a, b)) for v in (a, b)))
    first = a.real >= b.real
    mx, mn = np.where(first, a, b), np.where(first, b, a)
    out = np.where(np.isneginf(mn.real) & (mn.real == mx.real), mn, np.log1p(np.exp(mn - mx)) + mx)
    nan = np.isnan(a.real) | np.isnan(a.imag) | np.isnan(b.real) | np.isnan(b.imag)
    return np.where(nan, complex(np.nan, np.nan), out)


class Logaddexp(Op):
    """d log(e^a + e^b) = (1/(1 + e^(b-a)), 1/(1 + e^(a-b))), conjugated for complex numbers"""
    _grad_fn_name = "LogaddexpBackward0"
    _saved_names = ("self", "other")  # (torch's _saved_<name>; pack hooks see them sorted by name)

    @staticmethod
    def forward(ctx, a, b, dtype=None):
        ctx.save_for_backward(a, b)
        return _pairwise(_logaddexp_np, dtype, a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors  # (torch's formula, term by term)
        return grad / add_scalar((b - a).exp(), 1).conj(), grad / add_scalar((a - b).exp(), 1).conj()

    @staticmethod
    def jvp(ctx, ta, tb):
        a, b = ctx.inputs  # (torch's formula, term by term)
        return ta / add_scalar((b - a).exp(), 1) + tb / add_scalar((a - b).exp(), 1)


class Logaddexp2(Op):
    """d log2(2^a + 2^b) = (1/(1 + 2^(b-a)), 1/(1 + 2^(a-b)))"""
    _grad_fn_name = "Logaddexp2Backward0"
    _saved_names = ("self", "other")  # (torch's _saved_<name>; pack hooks see them sorted by name)

    @staticmethod
    def forward(ctx, a, b, dtype=None):
        ctx.save_for_backward(a, b)
        return _pairwise(np.logaddexp2, dtype, a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors  # (torch's formula, term by term)
        return grad / add_scalar(2 ** (b - a), 1), grad / add_scalar(2 ** (a - b), 1)

    @staticmethod
    def jvp(ctx, ta, tb):
        a, b = ctx.inputs  # (torch's formula, term by term)
        return ta / add_scalar(2 ** (b - a), 1) + tb / add_scalar(2 ** (a - b), 1)


class Xlogy(Op):
    """d x log(y) = (log(y), x / y), torch's way: the x part is xlogy(grad, y) (a zero gradient stays zero), 0
    where x == 0 and y <= 0 (0 log 0 = 0); forward mode the same with the tangents. special.xlog1py's classes
    are these with y + 1: `shifted` gives the op and the shift, `_log` numpy's log."""
    _grad_fn_name = "XlogyBackward0"
    _saved_names = ("self", "other")  # (torch's _saved_<name>; pack hooks see them sorted by name)
    _log = staticmethod(np.log)

    @staticmethod
    def forward(ctx, x, y, dtype=None):
        ctx.save_for_backward(x, y)
        return _pairwise(ctx.function_class._values, dtype, x, y)

    @classmethod
    def _values(cls, x, y):
        """x log(y), 0 where x == 0 and y is not NaN (log is numpy's log, or log1p for xlog1py)"""
        return np.where((x == 0) & ~np.isnan(y), np.zeros_like(x * y), x * cls._log(y))

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        op, shift = ctx.function_class.shifted
        y1 = y + shift if shift else y
        gx = op(grad, y).masked_fill((x == 0) & (y1 <= 0), 0) if ctx.needs_input_grad[0] else None
        return gx, grad * x / y1 if ctx.needs_input_grad[1] else None

    @staticmethod
    def jvp(ctx, tx, ty):
        x, y = ctx.inputs[:2]
        op, shift = ctx.function_class.shifted
        y1 = y + shift if shift else y
        out = None if tx is None else op(tx, y).masked_fill((x == 0) & (y1 <= 0), 0)
        dy = None if ty is None else ty * x / y1
        return dy if out is None else out if dy is None else out + dy


class XlogyNumberInput(Xlogy):
    """xlogy(2, y): torch's node for a number x, with no edge for it. It keeps the number, not a tensor of it:
    `number` as the caller gave it (torch's node shows it so), x its 0-d array in the op's dtype"""
    _grad_fn_name = "XlogyBackward1"
    _saved_names, _saved_values = ("other",), {"self": "number"}

    @staticmethod
    def forward(ctx, x, y, dtype=None, number=None):
        ctx.x, ctx.number = x, number
        ctx.save_for_backward(y)
        return _pairwise(ctx.function_class._values, dtype, x, y)

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        shift = ctx.function_class.shifted[1]
        return None, grad * Tensor._make(ctx.x) / (y + shift if shift else y)


class XlogyNumberOther(Xlogy):
    """xlogy(x, 2): torch's node for a number y, with no edge for it; it keeps the number (see XlogyNumberInput)"""
    _grad_fn_name = "XlogyBackward2"
    _saved_names, _saved_values = ("self",), {"other": "number"}

    @staticmethod
    def forward(ctx, x, y, dtype=None, number=None):
        ctx.y, ctx.number = y, number
        ctx.save_for_backward(x)
        return _pairwise(ctx.function_class._values, dtype, x, y)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        y = Tensor._make(ctx.y)
        op, shift = ctx.function_class.shifted
        gx = op(grad, y)
        return (gx if y.item() + shift > 0 else gx.masked_fill((x == 0) & (y + shift <= 0), 0)), None


def _picked(ctx, ta, tb, takes_a):
    """fmax's and fmin's tangent, torch's formula: tb + [a taken, b not NaN] * (ta - tb) (ties: fmax b's, fmin a's)"""
    a, b = (x._data for x in ctx.inputs[:2])
    return tb + Tensor._make(takes_a(a, b) | np.isnan(b)) * (ta - tb)


def _split(grad, a, b, takes_a):
    """fmax's and fmin's gradients, torch's: grad masked_fill'ed with 0 where the other was taken (a is taken
    where takes_a(a, b) or b is NaN). Masked, not multiplied: an inf or nan gradient stays on its side."""
    from .index import masked_fill
    picked = takes_a(a._data, b._data) | np.isnan(b._data)
    return masked_fill(grad, Tensor._make(~picked), 0.0), masked_fill(grad, Tensor._make(picked), 0.0)


def _zeros_tied_to_first(out, a, b):
    """torch's fmax and fmin give their first operand where the two are equal (fmax(0.0, -0.0) is 0.0, in every
    lane), numpy's the second"""
    if out.dtype.kind != "f":
        return out
    tied = (a == 0) & (b == 0)
    return np.where(tied, a, out) if tied.any() else out


def _fmax(a, b):
    return _zeros_tied_to_first(np.fmax(a, b), a, b)


def _fmin(a, b):
    return _zeros_tied_to_first(np.fmin(a, b), a, b)


class Fmax(Op):
    """d fmax(a, b) = ([a picked], [b picked]): the gradient goes to the larger, NaN losing"""
    _grad_fn_name = "FmaxBackward0"
    _saved_names = ("self", "other")  # (torch's _saved_<name>; pack hooks see them sorted by name)

    @staticmethod
    def forward(ctx, a, b, dtype=None):
        ctx.save_for_backward(a, b)
        return _pairwise(_fmax, dtype, a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return _split(grad, a, b, np.greater_equal)

    @staticmethod
    def jvp(ctx, ta, tb):
        return _picked(ctx, ta, tb, np.greater)


class Fmin(Op):
    """d fmin(a, b) = ([a picked], [b picked]): the gradient goes to the smaller, NaN losing"""
    _grad_fn_name = "FminBackward0"
    _saved_names = ("self", "other")  # (torch's _saved_<name>; pack hooks see them sorted by name)

    @staticmethod
    def forward(ctx, a, b, dtype=None):
        ctx.save_for_backward(a, b)
        return _pairwise(_fmin, dtype, a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return _split(grad, a, b, np.less_equal)

    @staticmethod
    def jvp(ctx, ta, tb):
        return _picked(ctx, ta, tb, np.less_equal)


# ---- three inputs ---------------------------------------------------------------------------------
def _fused(dtype):
    """Whether torch's kernels for this numpy dtype multiply and add in one rounding that _fma reproduces."""
    return dtype == np.float32 or dtype == np.float16


def _fma(a, b, c):
    """a * b + c rounded once to float32, as torch's fused multiply-adds (float32 operands; half computes in float
    too): the product is exact in float64, so computing there and rounding once more gives torch's bits (but where
    the float64 sum lands on a float32 halfway point: a double rounding, very rarely)."""
    prod = np.multiply(a, b, dtype=np.float64)  # (the operands cast inside the loop: no float64 copies of them)
    into = prod if type(prod) is np.ndarray and prod.shape == np.broadcast_shapes(prod.shape, np.shape(c)) else None
    return np.add(prod, c, out=into, dtype=np.float64).astype(np.float32)  # (into: one fresh temporary, not two)


def _lerp(s, e, w):
    """torch's lerp: from the nearer end (so an infinite start or end stays infinite where the other is finite),
    half computed in float, float32 as torch's fused multiply-adds (float64 keeps numpy's two roundings)"""
    dtype = np.result_type(s, e)
    one_weight = np.ndim(w) == 0  # (one weight: one of the two formulas for all, not both)
    if _fused(dtype):
        s, e = s.astype(np.float32, copy=False), e.astype(np.float32, copy=False)  # (copies cost 4x here)
        w = np.asarray(w).astype(np.float32, copy=False)
        d = e - s
        if one_weight:
            return (_fma(w, d, s) if abs(w) < 0.5 else _fma(-d, 1 - w, e)).astype(dtype, copy=False)
        return np.where(np.abs(w) < 0.5, _fma(w, d, s), _fma(-d, 1 - w, e)).astype(dtype, copy=False)
    d = e - s
    if one_weight:
        return (s + w * d if abs(w) < 0.5 else e - d * (1 - w)).astype(dtype, copy=False)
    return np.where(np.abs(w) < 0.5, s + w * d, e - d * (1 - w)).astype(dtype, copy=False)


class Lerp(Op):
    """d (s + w (e - s)) = (1 - w, w) for a number w, in the op's dtype; given: w as the caller gave it (torch's node
    shows it so: 0.1, not the float32 nearest it)"""
    _grad_fn_name = "LerpBackward0"
    _saved_values = {"weight": "given"}

    @staticmethod
    def forward(ctx, start, end, weight=0.5, given=None):
        ctx.weight, ctx.given = weight, given
        return like_torch_pair(_lerp(start, end, weight), start, end)  # (laid out as torch's: see ops/_layout.py)

    @staticmethod
    def backward(ctx, grad):
        return mul_scalar(grad, 1 - ctx.weight), mul_scalar(grad, ctx.weight)  # (torch's mul.Scalar)

    @staticmethod
    def jvp(ctx, ts, te):
        return Lerp.apply(ts, te, weight=ctx.weight, given=ctx.given)  # (torch's: lerp of the tangents)


class LerpTensor(Op):
    """d (s + w (e - s)) = (1 - w, w, e - s)"""
    _grad_fn_name = "LerpBackward1"
    _saved_names = ("self", "end", "weight")  # (torch's _saved_<name>; pack hooks see them sorted by name)

    @staticmethod
    def forward(ctx, start, end, weight):
        weighted = ctx.needs_input_grad[2]  # (start and end only for the weight's gradient, as torch keeps them)
        ctx.save_for_backward(start if weighted else None, end if weighted else None, weight)
        return like_torch(_lerp(start, end, weight.astype(start.dtype, copy=False)), start, end, weight)

    @staticmethod
    def backward(ctx, grad):
        s, e, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        return (grad * scalar_minus(1, w).conj() if need[0] else None, grad * w.conj() if need[1] else None,
                grad * (e - s).conj() if need[2] else None)

    @staticmethod
    def jvp(ctx, ts, te, tw):
        s, e, w = ctx.inputs  # torch's: lerp of the tangents, plus the weight's (a zero: a NaN in e - s stays out)
        return LerpTensor.apply(ts, te, w) + tw * (e - s)


class Addcmul(Op):
    """d (x + v a b) = (1, v b, v a)"""
    _grad_fn_name = "AddcmulBackward0"
    _saved_names, _saved_values = ("tensor1", "tensor2"), {"value": "value"}

    @staticmethod
    def forward(ctx, x, a, b, value=1):
        ctx.value = value
        need = ctx.needs_input_grad
        ctx.save_for_backward(a if need[2] else None, b if need[1] else None)  # (each only for the other's
        # gradient, as torch: a tensor whose partner needs none may change in place afterwards)
        dtype = np.result_type(x, a, b)
        if _fused(dtype) and not isinstance(value, complex):  # torch's: (value a) b + x, one rounding
            out = _fma(np.float32(value) * a.astype(np.float32, copy=False), b, x).astype(dtype, copy=False)
        else:
            out = x + value * a * b
        return like_torch(out, x, a, b)  # (laid out by x's strides first, then a's and b's, as torch's)

    @staticmethod
    def backward(ctx, grad):
        need = ctx.needs_input_grad
        if not (need[1] or need[2]):  # (nothing was saved: a second backward passes, as torch's)
            return grad, None, None
        a, b = ctx.saved_tensors  # (torch's formula, term by term: the tensor scaled first)
        return (grad, grad * MulScalar.apply(b, ctx.value).conj() if need[1] else None,
                grad * MulScalar.apply(a, ctx.value).conj() if need[2] else None)

    @staticmethod
    def jvp(ctx, tx, ta, tb):
        _, a, b = ctx.inputs[:3]  # (torch's formula, term by term)
        return tx + _times(ta * b, ctx.value) + _times(tb * a, ctx.value)


class Addcdiv(Op):
    """d (x + v a / b) = (1, v / b, -v a / b^2)"""
    _grad_fn_name = "AddcdivBackward0"
    _saved_names, _saved_values = ("tensor1", "tensor2"), {"value": "value"}

    @staticmethod
    def forward(ctx, x, a, b, value=1):
        ctx.value = value
        need = ctx.needs_input_grad
        ctx.save_for_backward(a if need[2] else None, b)  # (what torch keeps: tensor1 for tensor2's gradient)
        return like_torch(x + value * a / b, x, a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors  # (torch's formula, term by term: value / b is a true division, as C++'s)
        need = ctx.needs_input_grad
        over_b = Tensor._make(np.asarray(ctx.value, b._data.dtype)) / b if need[1] else None
        return (grad, grad * over_b.conj() if need[1] else None,
                -grad * (MulScalar.apply(a, ctx.value) / (b * b)).conj() if need[2] else None)

    @staticmethod
    def jvp(ctx, tx, ta, tb):
        _, a, b = ctx.inputs[:3]  # (torch's formula, term by term)
        return tx + _times(ta / b, ctx.value) - _times(tb * (a / b) / b, ctx.value)


def _times(t, value):
    """t * value as torch's formulas scale by a number: t itself for 1, else mul by a number (MulBackward1), an exact
    zero staying one"""
    if value == 1:
        return t
    out = MulScalar.apply(t, value)
    return _zero.as_zero(out) if type(t) is _zero.ZeroTangent else out


def _lerp_dtypes(start, end, weight):
    """torch's lerp does not promote: end, and a weight tensor with dims, in start's dtype, a floating one (a 0-d
    weight may have another dtype, as a number; not a 0-d example of a vmap batch, which has dims for the kernel)."""
    for name, t in (("end", end), ("weight", weight)):
        if isinstance(t, Tensor) and t.dtype != start.dtype and (name == "end" or t.ndim
                                                                 or type(t._data) is not np.ndarray):
            raise RuntimeError(f"lerp: expected dtype {start.dtype} for `{name}` but got dtype {t.dtype}; lerp does "
                               f"not promote: convert it, e.g. {name}.to({start.dtype})")
    if not (start.dtype.is_floating_point or start.dtype.is_complex):
        kernel = "lerp_kernel_tensor" if isinstance(weight, Tensor) else "lerp_kernel_scalar"
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_NAMES[start.dtype.name]}\': lerp needs '
                                  "floating point tensors; convert them first, e.g. start.float()")


def lerp(input, end, weight):
    given = as_given(weight)
    if isinstance(input, Tensor) and isinstance(end, Tensor):
        _lerp_dtypes(input, end, weight)
        if isinstance(weight, (int, float, complex)):  # checked in torch's compute dtype (float for half)
            weight = fill_scalar(weight, float32 if input.dtype == float16 else input.dtype, "lerp").item()
    try:
        if isinstance(weight, Tensor):
            if weight.dtype == input.dtype or result_type(input, end, weight) != input.dtype:
                start, end, weight = promoted(input, end, weight)  # (a complex 0-d weight makes lerp complex)
            else:  # a 0-d weight of another dtype: cast in forward, so its edge is its own (no ToCopyBackward0)
                start, end = promoted(input, end)
            return LerpTensor.apply(start, end, weight)
        start, end = promoted(input, end)
        return Lerp.apply(start, end, weight=weight, given=given)
    except ValueError as e:
        raise broadcast_error("lerp", e, input, end) from None


def addcmul(input, tensor1, tensor2, *, value=1):
    try:
        return Addcmul.apply(*promoted(input, tensor1, tensor2), value=value)
    except ValueError as e:
        raise broadcast_error("addcmul", e, input, tensor1, tensor2) from None


def addcdiv(input, tensor1, tensor2, *, value=1):
    if not (tensor1.dtype.is_floating_point or tensor1.dtype.is_complex) and \
            not (tensor2.dtype.is_floating_point or tensor2.dtype.is_complex):
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a future  release addcdiv "
                           "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
                           "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for "
                           "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
                           "addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), "
                           "for all dtypes.")  # (torch's words, its double space too)
    try:
        return Addcdiv.apply(*promoted(input, tensor1, tensor2), value=value)
    except ValueError as e:
        raise broadcast_error("addcdiv", e, input, tensor1, tensor2) from None


def _binary(cls, name, a, b, floating=True, numbers=False, ints=True, complex_=False, **kept):
    """cls's op of a and b after torch's checks, in their result dtype; kept: more keywords for cls.apply"""
    if not numbers:  # torch takes two tensors here (xlogy also takes a number)
        _need_tensors(a, b, name)
    _need_kernel(a, b, name, ints, complex_)
    try:
        a, b, dt = _operands(a, b)  # (a tensor that requires grad keeps its dtype: no ToCopyBackward0, as torch)
        if floating:
            a, b, dt = _operands(*(_float(v) if isinstance(v, Tensor) else v for v in (a, b)))
        return cls.apply(a, b, dtype=dt, **kept) if dt is not None else cls.apply(a, b, **kept)
    except ValueError as e:
        raise broadcast_error(name, e, a, b) from None


def _need_kernel(a, b, name, ints, complex_):
    """torch's error where it has no kernel for the operands' dtypes (hypot of int64, atan2 of complex)."""
    kinds = {v.dtype.is_complex and "c" or (v.dtype.is_floating_point and "f") or "i" for v in (a, b)
             if isinstance(v, Tensor)}
    if "c" in kinds and not complex_:
        if name in ("fmax", "fmin"):
            raise RuntimeError(f"{name} not implemented for complex tensors.; compare .abs() or .real instead")
        raise NotImplementedError(f'"{name}_cpu" not implemented for \'ComplexDouble\'; use real tensors')
    if kinds == {"i"} and not ints:
        raise NotImplementedError(f'"{name}_cpu" not implemented for integer or bool tensors; convert with .double()')


def atan2(input, other):
    return _binary(Atan2, "atan2", input, other)


def hypot(input, other):
    return _binary(Hypot, "hypot", input, other, ints=False)


def logaddexp(input, other):
    return _binary(Logaddexp, "logaddexp", input, other, ints=False, complex_=True)


def logaddexp2(input, other):
    return _binary(Logaddexp2, "logaddexp2", input, other, ints=False)


def by_numbers(classes, name, input, other):
    """The op of `classes` (tensor and tensor, number and tensor, tensor and number: torch's three nodes, whose
    number gets no edge; they keep it, as given) that fits the arguments, computed in their floating result dtype."""
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):  # (torch: one of them must be a tensor)
        raise TypeError(f"{name}(): got two numbers ({type(input).__name__}, {type(other).__name__}); one of input "
                        "and other must be a Tensor")
    if isinstance(input, Tensor) and isinstance(other, Tensor):
        return _binary(classes[0], name, input, other, numbers=True)
    number = as_given(other if isinstance(input, Tensor) else input)
    return _binary(classes[1 if isinstance(other, Tensor) else 2], name, input, other, numbers=True, number=number)


def xlogy(input, other):
    return by_numbers((Xlogy, XlogyNumberInput, XlogyNumberOther), "xlogy", input, other)


Xlogy.shifted = (xlogy, 0)  # (x log(y + 0); the number forms inherit it)


def fmax(input, other):
    return _binary(Fmax, "fmax", input, other, floating=False)


def fmin(input, other):
    return _binary(Fmin, "fmin", input, other, floating=False)


def arctan2(input, other):
    return _binary(Atan2, "arctan2", input, other)


# ---- one-sided clamps and tests of the sign bit ---------------------------------------------------------
@laid_out_as_input
class ClampMin(Op):
    """max(x, min);  d = 1 where x >= min, else 0. min is in x's dtype, given as the caller gave it (torch's node
    shows it so)"""
    _grad_fn_name = "ClampMinBackward0"
    _saved_names, _saved_values = ("self",), {"min": "given"}

    @staticmethod
    def forward(ctx, x, min=0.0, given=None):
        ctx.bound, ctx.given = min, given
        ctx.save_for_backward(x)
        out = np.where(x < min, np.asarray(min, x.dtype), x)  # (x in range, -0.0 too, as torch)
        return out if min == min else np.full_like(x, min)  # (a NaN bound wins, as torch)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return where(Tensor._make(x._data >= ctx.bound), grad, 0.0)  # selected, not multiplied: an inf stays out

    @staticmethod
    def jvp(ctx, t):
        return where(Tensor._make(ctx.inputs[0]._data >= ctx.bound), t, 0.0)  # (a selection: +0.0, not t * 0)


class ClampMax(Op):
    """min(x, max);  d = 1 where x <= max, else 0 (max: see ClampMin's min)"""
    _grad_fn_name = "ClampMaxBackward0"
    _saved_names, _saved_values = ("self",), {"max": "given"}

    @staticmethod
    def forward(ctx, x, max=0.0, given=None):
        ctx.bound, ctx.given = max, given
        ctx.save_for_backward(x)
        out = np.where(x > max, np.asarray(max, x.dtype), x)
        return out if max == max else np.full_like(x, max)  # (a NaN bound wins, as torch)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return where(Tensor._make(x._data <= ctx.bound), grad, 0.0)  # selected, not multiplied: an inf stays out

    @staticmethod
    def jvp(ctx, t):
        return where(Tensor._make(ctx.inputs[0]._data <= ctx.bound), t, 0.0)  # (a selection: +0.0, not t * 0)


def _bounded(input, bound, op):
    """input in the dtype torch clamps it in (its promotion with the number: clamp_min(int8, 1.5) is float32), and
    the bound converted into that dtype as torch converts it (checked: 1e5 does not fit in float16)."""
    if not isinstance(bound, (int, float)) or not isinstance(input, Tensor):
        return input, bound  # (a complex bound or a bad argument: the op's own checks refuse it)
    dt = result_type(input, bound)
    if dt.name == "bool":
        raise NotImplementedError(f'"{op}_scalar_cpu" not implemented for \'Bool\': torch has no {op} kernel for '
                                  f"bool tensors; convert first, e.g. x.int().{op}(...)")
    if dt is not input.dtype:
        input = input.to(dt)
    return input, fill_scalar(bound, dt, op)


class ClampMinTensor(ClampTensor):
    """clamp_min(x, t): torch's node of clamp_min.Tensor, with two edges and two saved tensors; clamp's values,
    gradients and tangent with no max (applied to (x, min, None))"""
    _grad_fn_name = "ClampMinBackward1"
    _saved_names = ("self", "min")
    _edges = (0, 1)

    @staticmethod
    def forward(ctx, x, lo, hi=None):
        ctx.save_for_backward(x, lo)
        return ClampTensor.values(x, lo, None)

    @staticmethod
    def backward(ctx, grad):
        return ClampTensor.grads(grad, *ctx.saved_tensors, None)


class ClampMaxTensor(ClampTensor):
    """clamp_max(x, t): torch's node of clamp_max.Tensor (see ClampMinTensor; applied to (x, None, max))"""
    _grad_fn_name = "ClampMaxBackward1"
    _saved_names = ("self", "max")
    _edges = (0, 2)

    @staticmethod
    def forward(ctx, x, lo, hi):
        ctx.save_for_backward(x, hi)
        return ClampTensor.values(x, None, hi)

    @staticmethod
    def backward(ctx, grad):
        x, hi = ctx.saved_tensors
        return ClampTensor.grads(grad, x, None, hi)


def _by_tensor(cls, input, lo, hi):
    """clamp_min or clamp_max by a tensor bound, input first in the dtype clamp computes in (as clamp's)"""
    dt = result_type(input, lo if hi is None else hi)
    return cls.apply(input if dt is input.dtype else input.to(dt), lo, hi)


def clamp_min(input, min):
    if isinstance(min, Tensor):
        return _by_tensor(ClampMinTensor, input, min, None)
    given = as_given(min)
    input, min = _bounded(input, min, "clamp_min")
    return ClampMin.apply(input, min=min, given=given)


def clamp_max(input, max):
    if isinstance(max, Tensor):
        return _by_tensor(ClampMaxTensor, input, None, max)
    given = as_given(max)
    input, max = _bounded(input, max, "clamp_max")
    return ClampMax.apply(input, max=max, given=given)


def _no_grad(values):
    return Tensor._make(as_array(values))


def signbit(input):
    return _no_grad(as_input(np.signbit(input._data), input._data))


def isposinf(input):
    return _no_grad(as_input(np.isposinf(input._data), input._data))


def isneginf(input):
    return _no_grad(as_input(np.isneginf(input._data), input._data))


def isreal(input):
    return _no_grad(np.isreal(input._data) if input.dtype.is_complex else np.ones(input.shape, bool))


class Heaviside(NoDerivative):
    """heaviside has no derivative: a recorded result's backward raises torch's error, naming the op"""
    _grad_fn_name = "torch::autograd::NotImplemented"

    @staticmethod
    def forward(ctx, x, values, op_name):
        ctx.op_name = op_name  # (not ctx.name: that is the node's name())
        return _step(x, values)

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError(f"derivative for aten::{ctx.op_name} is not implemented (the step function has no useful "
                           "gradient; use a smooth surrogate such as sigmoid(k * x) to train through it)")

    @staticmethod
    def jvp(ctx, tx, tv, _op_name):
        raise RuntimeError(f"derivative for aten::{ctx.op_name} is not implemented (forward mode)")


def _step(x, values):
    """values where x == 0, else 1 where x > 0 and 0 elsewhere (NaN too, as torch), laid out as torch's"""
    return like_torch_pair(np.where(x == 0, values, x > 0).astype(x.dtype), x, values)


def heaviside(input, values):
    """0 where input < 0, values where input == 0, 1 where input > 0 (no derivative, as torch)."""
    return recorded_heaviside(input, values, "heaviside")


def recorded_heaviside(input, values, name):
    """heaviside with torch's checks; recorded (with a backward that refuses) when an input requires grad"""
    if input.dtype.is_complex or values.dtype.is_complex:
        raise RuntimeError(f"heaviside is not yet implemented for complex tensors. ({name}: the step function needs "
                           "an order; apply it to z.real or z.abs())")
    if input.dtype != values.dtype:
        raise RuntimeError(f"heaviside is not yet implemented for tensors with different dtypes ({input.dtype} and "
                           f"{values.dtype}); convert one, e.g. values.to(input.dtype)")
    if not (input.requires_grad or values.requires_grad):
        return _no_grad(_step(input._data, values._data))
    return Heaviside.apply(input, values, name)


def floor_divide(input, other):
    """input // other, rounded toward -inf, in the operands' result dtype (torch gives it no gradient)."""
    from .._dtype import float16, float32, result_type
    from ._op import as_array
    from .misc import _integer_divisor
    from .rounding import FloorDivide
    _integer_divisor("div", *(as_array(t._data if isinstance(t, Tensor) else t) for t in (input, other)))
    dt = result_type(input, other).np
    return FloorDivide.apply(*numbers_as((input, other), dt), dt)  # (computed in dt: uint8 // -1 divides by 255)
