"""torch.special's orthogonal polynomials of x of degree n: Chebyshev's four kinds (T, U, V, W) on [-1, 1] and
shifted to [0, 1], Hermite's two (physicists' H, probabilists' He), Laguerre's L and Legendre's P. x and n are
tensors or numbers, broadcast together; both are brought to their common floating dtype and n is then cut to an
integer (towards 0; NaN, inf and huge n count as negative, whose polynomial is 0), as torch's kernels do. Each is
computed as torch's kernel computes it, element by element: the closed forms at the ends of the interval, the
trigonometric form inside it for large n (the four Chebyshev kinds), else the three-term recurrence. torch does not
differentiate them: the result never requires grad."""
import numpy as np

from .._dtype import get_default_dtype, result_type
from .._tensor import Tensor
from ._kernels import _NAMES
from ._layout import converted, like_torch_pair
from ._op import Op, broadcast_error
from .special_fma import fma, libm

_HERMITE_LIMIT = {np.dtype(np.float32): 128, np.dtype(np.float64): 512}  # (torch: NaN beyond these degrees)


def _recurrence(p, q, n, step, stop_at_nan=True):
    """q_{j+1} = step(j, q_{j-1}, q_j) for j = 1 .. n - 1, element by element; an element stops early where q is
    NaN when stop_at_nan (torch's loops test it before each step). Elements with n < 2 keep q."""
    live = n >= 2
    j = 1
    while True:
        if stop_at_nan:
            live &= ~np.isnan(q)
        live &= j <= n - 1
        if not live.any():
            return q
        r = step(j, p, q)
        p, q = np.where(live, q, p), np.where(live, r, q)
        j += 1


def _parity(n, even, odd):
    return np.where(n % 2 == 0, even, odd)


def _chebyshev(x, n, kind):
    """T, U, V or W at x: the values at +-1, cos/sin of n acos(x) inside (-1, 1) from degree 7 (T) or 9, else the
    recurrence r = 2x q - p from the first two"""
    t, one = x.dtype.type, np.abs(x) == 1
    trig = (n > (6 if kind == "t" else 8)) & (np.abs(x) < 1)
    theta = libm("acos", np.where(trig, x, 0))
    m, m1 = n.astype(x.dtype), (n + 1).astype(x.dtype)  # (C++ converts the integer degree to x's type)
    if kind == "t":
        ends, inside, first = _parity(n, 1, -1), libm("cos", m * theta), x
    elif kind == "u":
        ends, first = _parity(n, n + 1, -(n + 1)), x + x
        s = libm("sin", theta)
        inside = np.where(s != 0, libm("sin", m1 * theta) / s, m1 * libm("cos", m1 * theta) / x)
    elif kind == "v":
        ends, first = _parity(n, n + n + 1, -(n + n + 1)), x + x - 1
        half = theta / t(2.0)
        inside = np.where(libm("sin", half) != 1, libm("cos", (m + t(0.5)) * theta) / libm("cos", half),
                          _parity(n, n + n + 1, -(n + n + 1)))
    else:
        ends, first = _parity(n, 1, -1), x + x + 1
        half = theta / t(2.0)
        inside = np.where(libm("cos", half) != 1, libm("sin", (m + t(0.5)) * theta) / libm("sin", half),
                          np.where(x > 0, n + n + 1, _parity(n, 1, -1)))
    ends = np.where(x > 0, {"t": 1, "u": n + 1, "v": 1, "w": n + n + 1}[kind], ends)  # (x = 1, else x = -1)
    rec = _recurrence(np.ones_like(x), first, np.where(one | trig, 0, n), lambda j, p, q: fma(x + x, q, -p))
    out = np.where(n == 0, 1, np.where(n == 1, first, rec))
    return np.where(n < 0, 0, np.where(one, ends, np.where(trig, inside, out)))


def _shifted_chebyshev(x, n, kind):
    """T*, U*, V*, W* at x: the kind's polynomial at y = 2x - 1, with torch's own cases at x = 1 and x = 0 and its
    own degree for the trigonometric form (from 5 for W*, 7 for the others)"""
    t, y = x.dtype.type, x + x - 1
    trig = (n > (4 if kind == "w" else 6)) & (np.abs(y) < 1)
    theta = libm("acos", np.where(trig, y, 0))
    m, m1 = n.astype(x.dtype), (n + 1).astype(x.dtype)
    at_one = {"t": 1, "u": n + 1, "v": 1, "w": n + n + 1}[kind]
    at_zero = {"t": _parity(n, 1, -1), "u": _parity(n, n + 1, -(n + 1)), "v": _parity(n, n + n + 1, -(n + n + 1)),
               "w": _parity(n, 1, -1)}[kind]
    if kind == "t":
        inside, first = libm("cos", m * theta), y
    elif kind == "u":
        s, first = libm("sin", theta), y + y
        inside = np.where(s != 0, libm("sin", m1 * theta) / s, m1 * libm("cos", m1 * theta) / y)
    elif kind == "v":
        first = y + y - 1
        half = theta / t(2.0)
        inside = np.where(libm("sin", half) != 1, libm("cos", (m + t(0.5)) * theta) / libm("cos", half), at_zero)
    else:
        first = y + y + 1
        half = theta / t(2.0)
        inside = np.where(libm("cos", half) != 1, libm("sin", (m + t(0.5)) * theta) / libm("sin", half), at_zero)
    special = (x == 1) | (x == 0)
    rec = _recurrence(np.ones_like(x), first, np.where(special | trig, 0, n), lambda j, p, q: fma(y + y, q, -p))
    out = np.where(n == 0, 1, np.where(n == 1, first, rec))
    out = np.where(x == 1, at_one, np.where(x == 0, at_zero, np.where(trig, inside, out)))
    return np.where(n < 0, 0, out)


def _hermite(x, n, physicists):
    """H (2x q - 2j p) or He (x q - j p) by the recurrence, no NaN test; NaN beyond torch's degree limit"""
    first = x + x if physicists else x
    beyond = n > _HERMITE_LIMIT[x.dtype]
    if physicists:
        step = lambda j, p, q: fma(x + x, q, -((j + j) * p))  # noqa: E731
    else:
        step = lambda j, p, q: fma(x, q, -(j * p))  # noqa: E731
    rec = _recurrence(np.ones_like(x), first, np.where(beyond, 0, n), step, stop_at_nan=False)
    out = np.where(beyond, np.nan, np.where(n == 1, first, rec))
    return np.where(n < 0, 0, np.where(n == 0, 1, out))


def _laguerre(x, n):
    """L: 1 at x = 0, else ((2j + 1 - x) q - j p) / (j + 1)"""
    first = 1 - x
    rec = _recurrence(np.ones_like(x), first, np.where(x == 0, 0, n),
                      lambda j, p, q: fma((j + j) + (1 - x), q, -(j * p)) / (j + 1))
    out = np.where(n == 0, 1, np.where(n == 1, first, rec))
    return np.where(n < 0, 0, np.where(x == 0, 1, out))


def _legendre(x, n):
    """P: +-1 at x = +-1, else ((2j + 1) x q - j p) / (j + 1)"""
    one = np.abs(x) == 1
    rec = _recurrence(np.ones_like(x), x, np.where(one, 0, n),
                      lambda j, p, q: fma((j + j + 1) * x, q, -(j * p)) / (j + 1))
    out = np.where(n == 0, 1, np.where(n == 1, x, rec))
    return np.where(n < 0, 0, np.where(one, np.where((x > 0) | (n % 2 == 0), 1, -1), out))


def _degree(n):
    """n (already in the common floating dtype) cut towards 0 to an int64, as C++'s cast; NaN, inf and what does
    not fit become int64's least value (x86's answer), a negative degree"""
    fits = np.isfinite(n) & (np.abs(n) < 2.0 ** 63)
    return np.where(fits, np.trunc(np.where(fits, n, 0)), 0).astype(np.int64) | np.where(fits, 0, -2 ** 63)


def _polynomial_op(name, kernel):
    """an Op computing kernel(x, degree) on x and n of one floating dtype, its result marked non-differentiable"""
    def forward(ctx, x, n):
        xb, nb = np.broadcast_arrays(x, n)
        out = like_torch_pair(np.asarray(kernel(xb, _degree(nb)), dtype=xb.dtype), x, n)  # (laid out by the
        # operands' own strides, as torch's: see ops/_layout.py)
        ctx.mark_non_differentiable(out)
        return out

    title = "Special" + name.title().replace("_", "")
    return type(title, (Op,), {"_grad_fn_name": title + "Backward0", "__module__": __name__,
                               "forward": staticmethod(forward), "jvp": staticmethod(lambda ctx, tx, tn: None)})


def _operand(v, dtype):
    """a tensor in the common dtype (cast without history: the op is not differentiated), or a number's array"""
    if isinstance(v, Tensor):
        return v if v._data.dtype == dtype else Tensor._make(converted(v._data, dtype))  # (laid out as torch's)
    return np.asarray(v, dtype)


def _polynomial(name, kernel):
    op = _polynomial_op(name, kernel)

    def fn(x, n):  # (torch's keyword is x, though its docs say input)
        from .scan import need_tensor
        if not isinstance(x, Tensor):
            need_tensor(n, name, "n", 1)
        if any(type(v) is int and not -2 ** 63 <= v < 2 ** 63 for v in (x, n)):
            raise OverflowError(f"{name}(): int too big to convert (a number argument must fit in int64)")
        dt = result_type(x, n)
        dtype = dt.np if dt.is_floating_point or dt.is_complex else get_default_dtype().np
        if dtype.kind == "c" or dtype == np.float16:
            raise NotImplementedError(f'"{name}_cpu" not implemented for \'{_NAMES[dtype.name]}\': special.{name} '
                                      "is computed for real float32 and float64 values; convert with .double()")
        try:
            np.broadcast_shapes(*[tuple(v.shape) if isinstance(v, Tensor) else () for v in (x, n)])
        except ValueError as e:
            raise broadcast_error(name, e, x, n) from None
        return op.apply(_operand(x, dtype), _operand(n, dtype))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.special.{name}(x, n): x and n are tensors or numbers (torch has no derivative for it)"
    return fn


chebyshev_polynomial_t = _polynomial("chebyshev_polynomial_t", lambda x, n: _chebyshev(x, n, "t"))
chebyshev_polynomial_u = _polynomial("chebyshev_polynomial_u", lambda x, n: _chebyshev(x, n, "u"))
chebyshev_polynomial_v = _polynomial("chebyshev_polynomial_v", lambda x, n: _chebyshev(x, n, "v"))
chebyshev_polynomial_w = _polynomial("chebyshev_polynomial_w", lambda x, n: _chebyshev(x, n, "w"))
shifted_chebyshev_polynomial_t = _polynomial("shifted_chebyshev_polynomial_t",
                                             lambda x, n: _shifted_chebyshev(x, n, "t"))
shifted_chebyshev_polynomial_u = _polynomial("shifted_chebyshev_polynomial_u",
                                             lambda x, n: _shifted_chebyshev(x, n, "u"))
shifted_chebyshev_polynomial_v = _polynomial("shifted_chebyshev_polynomial_v",
                                             lambda x, n: _shifted_chebyshev(x, n, "v"))
shifted_chebyshev_polynomial_w = _polynomial("shifted_chebyshev_polynomial_w",
                                             lambda x, n: _shifted_chebyshev(x, n, "w"))
hermite_polynomial_h = _polynomial("hermite_polynomial_h", lambda x, n: _hermite(x, n, True))
hermite_polynomial_he = _polynomial("hermite_polynomial_he", lambda x, n: _hermite(x, n, False))
laguerre_polynomial_l = _polynomial("laguerre_polynomial_l", _laguerre)
legendre_polynomial_p = _polynomial("legendre_polynomial_p", _legendre)

__all__ = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
           "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p",
           "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
           "shifted_chebyshev_polynomial_w"]
