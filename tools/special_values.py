"""Functions of one and two tensors over special values, beside torch: where microtorch differs.

    python tools/special_values.py                    # every function in UNARY and BINARY, float64 and float32
    python tools/special_values.py lgamma atan2       # some of them

The values are those where libraries part ways: 0 and -0.0, 1 +- 1e-7, tiny, denormal and huge numbers, poles,
infinities and NaN (every pair of them for the binary functions). A finding is a place where the two differ in NaN,
in an infinity's or a zero's sign, in a value by more than 1e-9 of it (1e-4 in float32), or in the exception's type.
Last bits are not findings: the bit-for-bit tests cover those. tests/test_round18_sweep.py runs it and expects no
findings but the known ones (KNOWN).
"""
import itertools
import signal
import sys
import warnings

import numpy as np

UNARY = ["abs", "acos", "acosh", "angle", "asin", "asinh", "atan", "atanh", "ceil", "cos", "cosh", "deg2rad",
         "digamma", "erf", "erfc", "erfinv", "exp", "exp2", "expm1", "floor", "frac", "i0", "lgamma", "log", "log10",
         "log1p", "log2", "logit", "nan_to_num", "neg", "rad2deg", "reciprocal", "round", "rsqrt", "sgn", "sigmoid",
         "sign", "sin", "sinc", "sinh", "sqrt", "square", "tan", "tanh", "trunc", "relu", "special.entr",
         "special.erfcx", "special.i0e", "special.i1", "special.i1e", "special.log_ndtr", "special.ndtr",
         "special.ndtri", "special.bessel_j0", "special.bessel_j1", "special.bessel_y0", "special.bessel_y1",
         "special.modified_bessel_i0", "special.modified_bessel_i1", "special.modified_bessel_k0",
         "special.modified_bessel_k1", "special.spherical_bessel_j0", "special.airy_ai", "nn.functional.gelu",
         "nn.functional.silu", "nn.functional.mish", "nn.functional.softplus", "nn.functional.elu",
         "nn.functional.selu", "nn.functional.hardswish", "nn.functional.hardsigmoid", "nn.functional.logsigmoid",
         "nn.functional.softsign", "nn.functional.tanhshrink"]
BINARY = ["atan2", "pow", "float_power", "fmod", "remainder", "hypot", "copysign", "xlogy", "special.xlog1py",
          "igamma", "igammac", "nextafter", "logaddexp", "logaddexp2", "div", "floor_divide", "maximum", "minimum",
          "fmax", "fmin", "special.zeta", "heaviside"]

# (function, dtype): why torch and microtorch part ways there, left as it is
KNOWN = {
    ("cosh", "float64"): "torch's SLEEF cosh overflows at 710 on its vector lanes (1.1e308 is finite)",
    ("sinh", "float64"): "the same for sinh",
    ("cosh", "float32"): "the same at 89 in float32",
    ("sinh", "float32"): "the same at 89 in float32",
    ("fmod", "float64"): "torch's vector lanes compute a - b trunc(a / b): NaN where a / b overflows (b denormal)",
    ("remainder", "float64"): "the same for remainder",
    ("logaddexp2", "float64"): "torch's log2(1 + 2^0) is 1 - 5e-17 on its vector lanes",
    ("logaddexp2", "float32"): "the same in float32",
}
SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, -3.0, 1e-300, -1e-300, 5e-324, 1e-8, -1e-8, 0.9999999, 1.0000001,
           -0.9999999, 20.0, -20.0, 88.7, 89.0, 709.0, 710.0, -745.0, -746.0, 1e10, -1e10, 1e300, -1e300, np.inf,
           -np.inf, np.nan, 3.14159, 1.5707963267948966, 100.5, -100.5, 1e5 + 0.5, -7.5, 0.1, 30.0, 171.5, 172.0]
PAIRS = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, -3.0, 1e-300, 5e-324, 1e300, -1e300, np.inf, -np.inf, np.nan, 7.0, 2.0,
         0.3, 50.0]


def _function(library, name):
    f = library
    for part in name.split("."):
        f = getattr(f, part)
    return f


def _timeout(*_):
    raise TimeoutError("no answer in 30 s")


def _outcome(library, name, dtype, arrays):
    """(result as float64 numpy, or the exception's type and message)"""
    signal.signal(signal.SIGALRM, _timeout)
    signal.alarm(30)
    try:
        out = _function(library, name)(*(library.tensor(a, dtype=getattr(library, dtype)) for a in arrays))
        return out.double().numpy()
    except Exception as e:  # (an exception is an outcome to compare, not a failure of the sweep)
        return f"{type(e).__name__}: {str(e)[:60]}"
    finally:
        signal.alarm(0)


def findings(name, dtype, torch, microtorch):
    """What differs for one function and dtype: a list of short descriptions (empty: nothing)"""
    arrays = [np.array(SPECIAL)] if name in UNARY else [np.array(v) for v in zip(*itertools.product(PAIRS, PAIRS))]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        t, m = (_outcome(L, name, dtype, arrays) for L in (torch, microtorch))
    if isinstance(t, str) or isinstance(m, str):
        same = isinstance(t, str) and isinstance(m, str) and t.split(":")[0] == m.split(":")[0]
        return [] if same else [f"torch {t if isinstance(t, str) else 'computes'}, microtorch "
                                f"{m if isinstance(m, str) else 'computes'}"]
    bad = _differ(t, m, 1e-9 if dtype == "float64" else 1e-4)
    at = [tuple(float(a[i]) for a in arrays) for i in np.flatnonzero(bad)[:4]]
    return [f"{int(bad.sum())} values differ, e.g. at {at}: torch {t[bad][:4].tolist()}, microtorch "
            f"{m[bad][:4].tolist()}"] if bad.any() else []


def _differ(t, m, tolerance):
    """where NaN, an infinity, a zero's sign or a value (by more than tolerance of it) differs"""
    finite = np.isfinite(t) & np.isfinite(m)
    with np.errstate(invalid="ignore"):
        gap = np.where(finite, np.abs(t - m), 0.0)
    return (np.isnan(t) != np.isnan(m)) | np.isinf(t) & (t != m) | np.isinf(m) & (t != m) \
        | finite & (gap > tolerance * np.abs(t)) & (gap > 1e-300) \
        | finite & (t == 0) & (m == 0) & (np.signbit(t) != np.signbit(m))


def main(names):
    import torch

    import microtorch
    for name in names or UNARY + BINARY:
        for dtype in ("float64", "float32"):
            for finding in findings(name, dtype, torch, microtorch):
                known = KNOWN.get((name, dtype))
                print(f"{name} {dtype}: {finding}" + (f" (known: {known})" if known else ""))


if __name__ == "__main__":
    main(sys.argv[1:])
