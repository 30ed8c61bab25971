"""float32 log, sine and cosine as torch's CPU kernel for `normal_` computes them, so that `randn` of 16 or more
float32 values gives torch's bits.

torch turns uniforms into normals 16 at a time with Box-Muller, and for float32 it takes the logarithm, sine and
cosine from avx_mathfun (Cephes's single-precision polynomials), not from the C library; its build fuses each
multiplication that feeds an addition into one fused multiply-add. Each function below is that polynomial, step by
step in float32, with `fma` where the compiled kernel has one. (Facts about torch's kernel from its source,
aten/src/ATen/native/cpu/avx_mathfun.h, checked bit for bit against torch in tests/test_random_normal_bits.py.)
"""
import numpy as np

from ._fma import fma32, horner32

F32 = np.float32
_LOG_POLY = [7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
             -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1]
_SMALLEST_NORMAL = np.array(0x00800000, np.uint32).view(F32)


def log(x):
    """ln x for x > 0: x = m * 2^e with m in [sqrt(1/2), sqrt(2)), then ln(m) by a degree-9 polynomial in m - 1,
    and e ln 2 added in two parts (0.693359375 exact, -2.12194440e-4 the rest)."""
    bits = np.maximum(np.asarray(x, F32), _SMALLEST_NORMAL).view(np.uint32)
    e = ((bits >> 23).astype(np.int32) - 0x7F).astype(F32) + F32(1)
    m = ((bits & np.uint32(0x807FFFFF)) | np.uint32(0x3F000000)).view(F32)  # (the mantissa, in [0.5, 1))
    small = m < F32(0.707106781186547524)
    e = np.where(small, e - F32(1), e)
    m = (m - F32(1)) + np.where(small, m, F32(0))
    z = m * m
    y = horner32([F32(c) for c in _LOG_POLY], m)
    y = fma32(y * m, z, e * F32(-2.12194440e-4))
    y = fma32(z, F32(-0.5), y)
    return fma32(e, F32(0.693359375), m + y)


def sincos(x):
    """(sin x, cos x): x reduced by multiples of pi/4 (pi/4 subtracted in three parts), then Cephes's sine and
    cosine polynomials on [-pi/4, pi/4], each picked and signed by the octant."""
    x = np.asarray(x, F32)
    sign_sin = x.view(np.uint32) & np.uint32(0x80000000)
    x = np.abs(x)
    octant = (x * F32(1.27323954473516)).astype(np.int32)  # (x * 4/pi, truncated)
    octant = (octant + 1) & ~np.int32(1)
    y = octant.astype(F32)
    sign_sin = sign_sin ^ ((octant & 4).astype(np.uint32) << np.uint32(29))
    sign_cos = ((~(octant - 2)) & 4).astype(np.uint32) << np.uint32(29)
    sine_first = (octant & 2) == 0
    for part in (-0.78515625, -2.4187564849853515625e-4, -3.77489497744594108e-8):
        x = fma32(y, F32(part), x)
    z = x * x
    cos_poly = fma32(F32(2.443315711809948e-5), z, F32(-1.388731625493765e-3))
    cos_poly = fma32(cos_poly, z, F32(4.166664568298827e-2)) * z
    cos_poly = fma32(cos_poly, z, -(z * F32(0.5))) + F32(1)
    sin_poly = fma32(F32(-1.9515295891e-4), z, F32(8.3321608736e-3))
    sin_poly = fma32(sin_poly, z, F32(-1.6666654611e-1)) * z
    sin_poly = fma32(sin_poly, x, x)
    sin = np.where(sine_first, sin_poly, cos_poly)
    cos = np.where(sine_first, cos_poly, sin_poly)
    return (sin.view(np.uint32) ^ sign_sin).view(F32), (cos.view(np.uint32) ^ sign_cos).view(F32)
