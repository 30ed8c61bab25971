"""The regularized incomplete gamma functions P(a, x) (igamma) and Q(a, x) = 1 - P (igammac), computed as torch's
kernels compute them (SciPy's algorithm, after Cephes), element by element in numpy:

- the edges first: NaN for a negative argument, 1 or 0 at a = 0, x = 0 and infinities;
- P by its power series (DLMF 8.11.4) where x is small or below a; otherwise 1 - Q;
- Q by its own series (DLMF 8.7.3) for small x, or by a continued fraction (DLMF 8.9.2) for x above a, so that a
  tail such as Q(1, 50) = e^-50 keeps its digits (1 - P would give 0);
- the factor x^a e^-x / Gamma(a) with Lanczos's sum where x is near a (there the logarithms would cancel).

torch switches to Temme's uniform asymptotic expansion (DLMF 8.12) for a above 20 with x near a, whose last term
takes pi as a float (about 1e-9 off the exact value). microtorch keeps the series and the fraction there (within
1e-14 of it), and takes the expansion's first terms only where a is beyond the series' reach (above 1e6).
"""
import functools

import numpy as np

from .special_fma import c_lgammas

_MACHEP = 1.11022302462515654042e-16
_MAXLOG = {np.dtype(np.float64): 7.09782712893383996843e2, np.dtype(np.float32): 88.72283905206835}  # (e^-x underflows)
_BIG, _BIGINV = 4.503599627370496e15, 2.22044604925031308085e-16
_MAXITER = 2000  # (the P series runs on to 20,000 terms: a near x needs about 9 sqrt(a))

# Lanczos's approximation (g = 6.0246800407767296): sum_expg_scaled(a) = numerator(a) / denominator(a)
_LANCZOS_G = 6.024680040776729583740234375
_LANCZOS_NUM = [0.006061842346248906525783753964555936883222, 0.5098416655656676188125178644804694509993,
                19.51992788247617482847860966235652136208, 449.9445569063168119446858607650988409623,
                6955.999602515376140356310115515198987526, 75999.29304014542649875303443598909137092,
                601859.6171681098786670226533699352302507, 3481712.15498064590882071018964774556468,
                14605578.08768506808414169982791359218571, 43338889.32467613834773723740590533316085,
                86363131.28813859145546927288977868422342, 103794043.1163445451906271053616070238554,
                56906521.91347156388090791033559122686859]
_LANCZOS_DENOM = [1.0, 66.0, 1925.0, 32670.0, 357423.0, 2637558.0, 13339535.0, 45995730.0, 105258076.0,
                  150917976.0, 120543840.0, 39916800.0, 0.0]


def _ratio_of_polynomials(x, num, denom):
    """num(x) / denom(x), coefficients from the constant up; in 1/x for |x| > 1, as Boost's ratevl"""
    big = np.abs(x) > 1
    y = np.where(big, 1 / x, x)
    top = np.where(big, num[-1], num[0])
    bottom = np.where(big, denom[-1], denom[0])
    for i in range(1, len(num)):
        top = top * y + np.where(big, num[-1 - i], num[i])
        bottom = bottom * y + np.where(big, denom[-1 - i], denom[i])
    return np.where(big, x ** (len(denom) - len(num)) * top / bottom, top / bottom)


def _prefactor(a, x, maxlog):
    """x^a e^-x / Gamma(a): from logarithms where x is far from a, else with Lanczos's sum (no cancellation)"""
    far = np.abs(a - x) > 0.4 * np.abs(a)
    logged = a * np.log(x) - x - c_lgammas(a)
    direct = np.where(logged < -maxlog, 0.0, np.exp(logged))  # (0 below the dtype's range, as torch's)
    fac = a + _LANCZOS_G - 0.5
    res = np.sqrt(fac / np.e) / _ratio_of_polynomials(a, _LANCZOS_NUM, _LANCZOS_DENOM)
    small = (a < 200) & (x < 200)
    numfac = (x - a - _LANCZOS_G + 0.5) / fac
    near = res * np.where(small, np.exp(a - x) * (x / fac) ** a,
                          np.exp(a * (np.log1p(numfac) - numfac) + x * (0.5 - _LANCZOS_G) / fac))
    return np.where(far, direct, near)


def _p_series(a, x, maxlog):
    """P(a, x) by its power series: prefactor / a * (1 + x/(a+1) + x^2/((a+1)(a+2)) + ...)"""
    ax = _prefactor(a, x, maxlog)
    r, c, total = a.copy(), np.ones_like(a), np.ones_like(a)
    live = ax != 0
    for _ in range(10 * _MAXITER):
        if not live.any():
            break
        r = np.where(live, r + 1, r)
        c = np.where(live, c * (x / r), c)
        total = np.where(live, total + c, total)
        live &= ~(c <= _MACHEP * total)
    return np.where(ax == 0, 0.0, total * ax / a)


def _q_series(a, x):
    """Q(a, x) for small x: -expm1(a log x - lgamma(1 + a)) - x^a / Gamma(a) sum (-x)^n / (n! (a + n))"""
    fac, total = np.ones_like(a), np.zeros_like(a)
    live = np.ones(a.shape, bool)
    for n in range(1, _MAXITER):
        if not live.any():
            break
        fac = np.where(live, fac * (-x / n), fac)
        term = fac / (a + n)
        total = np.where(live, total + term, total)
        live &= ~(np.abs(term) <= _MACHEP * np.abs(total))
    logx = np.log(x)
    return -np.expm1(a * logx - c_lgammas(1 + a)) - np.exp(a * logx - c_lgammas(a)) * total


def _q_fraction(a, x, maxlog):
    """Q(a, x) for x above a by its continued fraction, the convergents p/q rescaled when they grow large"""
    ax = _prefactor(a, x, maxlog)
    y, c = 1 - a, np.zeros_like(a)
    z = x + y + 1
    pkm2, qkm2, pkm1, qkm1 = np.ones_like(a), x.copy(), x + 1, z * x
    ans = pkm1 / qkm1
    live = ax != 0
    for _ in range(_MAXITER):
        if not live.any():
            break
        c, y, z = c + 1, y + 1, z + 2
        yc = y * c
        pk, qk = pkm1 * z - pkm2 * yc, qkm1 * z - qkm2 * yc
        r = np.where(qk != 0, pk / np.where(qk != 0, qk, 1), ans)
        t = np.where(qk != 0, np.abs((ans - r) / r), 1.0)
        ans = np.where(live, r, ans)
        pkm2, pkm1 = np.where(live, pkm1, pkm2), np.where(live, pk, pkm1)
        qkm2, qkm1 = np.where(live, qkm1, qkm2), np.where(live, qk, qkm1)
        rescale = live & (np.abs(pk) > _BIG)
        pkm2, pkm1, qkm2, qkm1 = (np.where(rescale, v * _BIGINV, v) for v in (pkm2, pkm1, qkm2, qkm1))
        live &= ~(t <= _MACHEP)
    return np.where(ax == 0, 0.0, ans * ax)


def _edges(a, x, lower):
    """torch's values at the edges, its tests in its order (NaN where there is none), and where to compute: P if
    lower, else Q"""
    one, zero = (1.0, 0.0) if lower else (0.0, 1.0)
    rules = [((x < 0) | (a < 0), np.nan), (a == 0, np.where(x > 0, one, np.nan)), (x == 0, zero),
             (np.isinf(a), np.where(np.isinf(x), np.nan, zero)), (np.isinf(x), one)]
    out, decided = np.full(a.shape, np.nan), np.zeros(a.shape, bool)
    for test, value in rules:
        out = np.where(test & ~decided, value, out)
        decided |= test
    return out, ~decided & ~np.isnan(a) & ~np.isnan(x)


def _huge(a, x, lower):
    """a beyond the series' reach (above 1e6) with x near a: the first terms of Temme's uniform expansion,
    1/2 erfc(-+eta sqrt(a/2)) -+ e^(-a eta^2/2) (-1/3 + eta/12 - 2 eta^2/135) / sqrt(2 pi a), good to about a^-1.5"""
    from .pointwise import _erfc_np
    sigma = (x - a) / a
    eta = np.sign(sigma) * np.sqrt(-2 * (np.log1p(sigma) - sigma))
    sign = -1.0 if lower else 1.0
    c0 = -1 / 3 + eta / 12 - 2 * eta * eta / 135
    return 0.5 * _erfc_np(sign * eta * np.sqrt(a / 2)) + sign * np.exp(-0.5 * a * eta * eta) * c0 / np.sqrt(
        2 * np.pi * a)


def igamma_values(a, x, dtype=np.float64):
    """P(a, x) in float64 (NaN where torch's is), with the limits of torch's kernel for dtype"""
    return _values(a, x, True, _maxlog(dtype))


def igammac_values(a, x, dtype=np.float64):
    """Q(a, x) in float64 (NaN where torch's is), with the limits of torch's kernel for dtype"""
    return _values(a, x, False, _maxlog(dtype))


def _maxlog(dtype):
    """the log of the smallest normal number torch's kernel keeps, by dtype (Half's kernel computes in float)"""
    return _MAXLOG.get(np.dtype(dtype), _MAXLOG[np.dtype(np.float32)])


def _values(a, x, lower, maxlog):
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    out, inside = _edges(a, x, lower)
    huge = inside & (a > 1e6) & (np.abs(x - a) / np.where(a > 0, a, 1) < 4.5 / np.sqrt(np.abs(a)))
    rest = inside & ~huge
    q_upper, p_series = functools.partial(_q_upper, maxlog=maxlog), functools.partial(_p_series, maxlog=maxlog)
    with np.errstate(all="ignore"):
        out[huge] = _huge(a[huge], x[huge], lower)
        ai, xi = a[rest], x[rest]
        if lower:  # (P by its series, or 1 - Q where x is above both 1 and a)
            by_q = (xi > 1) & (xi > ai)
            out[rest] = np.where(by_q, 1 - _where(by_q, q_upper, ai, xi), _where(~by_q, p_series, ai, xi))
        else:
            out[rest] = q_upper(ai, xi)
    return out


def _where(mask, fn, a, x):
    """fn(a, x) computed where mask holds (0 elsewhere): each series runs on its own elements only"""
    out = np.zeros_like(a)
    out[mask] = fn(a[mask], x[mask])
    return out


def _q_upper(a, x, maxlog):
    """Q(a, x) inside the domain: 1 - P where P is the smaller, else Q's own series or fraction (torch's regions)"""
    by_p = np.where(x > 1.1, x < a, np.where(x <= 0.5, -0.4 / np.log(x) < a, x * 1.1 < a))
    fraction = (x > 1.1) & ~by_p
    p_series, q_fraction = functools.partial(_p_series, maxlog=maxlog), functools.partial(_q_fraction, maxlog=maxlog)
    q = 1 - _where(by_p, p_series, a, x)
    return np.where(fraction, _where(fraction, q_fraction, a, x), np.where(by_p, q, _where(~by_p & ~fraction,
                                                                                            _q_series, a, x)))
