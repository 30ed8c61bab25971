"""torch's special-function kernels' arithmetic in numpy, so that their last bits come out the same.

- The fused multiply-add, a*b + c rounded once: the kernels are compiled with contraction on, so `a * b - c` and
  `a * b + c` are one fused instruction, which rounds once where numpy's two operations round twice. A recurrence of
  hundreds of steps (the polynomials of degree n) or a Chebyshev series that cancels (Clenshaw's) magnifies that
  last bit; computing the same fused steps gives torch's bits.
- The C library's exp, log, sin, cos and acos, which the kernels call element by element: numpy's own vectorized
  versions differ from them in the last place for some arguments.
"""
import math

import numpy as np

from .._fma import fma, halves  # noqa: F401  (the fused multiply-add; its home is the base layer, for _random.py)

def _c_call(fn, v):
    """fn(v) with the C function's answers where Python's math raises instead"""
    try:
        return fn(v)
    except OverflowError:
        return math.inf
    except ValueError:  # log(0) is -inf; log of a negative, cos(inf), acos(2) are NaN
        return -math.inf if v == 0 else math.nan


def libm(name, a):
    """math.<name> (the C library's function) element by element, in a's dtype (float32: the double result
    rounded, as the C library's float functions nearly always round)"""
    fn = getattr(math, name)
    values = np.frompyfunc(lambda v: _c_call(fn, v), 1, 1)(a.astype(np.float64))
    return np.asarray(values, dtype=np.float64).astype(a.dtype) if a.size else a.copy()
