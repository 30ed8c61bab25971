"""float32 GELU (the exact form, with erf) and its derivative as torch computes them on this CPU, so that a
float32 model with GELU layers gives torch's bits.

torch hands a contiguous float32 gelu of more than one element to oneDNN, whose JIT kernel for AVX-512 evaluates
erf(x / sqrt 2) as a degree-5 polynomial in |x| picked from 25 by the bits of |x| (a minimax fit per interval),
and the derivative with Abramowitz and Stegun's formula 7.1.26 and oneDNN's own exp (a degree-5 polynomial times
2^n). Every multiply-add in them is one fused instruction. (Facts from oneDNN's jit_uni_eltwise_injector, checked
bit for bit against torch 2.13 in tests/test_kernel_gelu_bits.py.) Other inputs (strided, one element, other
dtypes) go through torch's own kernel, which microtorch approximates to within a few ulps.

The tanh form torch computes with its own kernel: SLEEF's tanh on the vector lanes, the C library's on the tails,
with the compiler's fused multiply-adds where the tests found them (gelu_tanh, gelu_tanh_slope).
"""
import numpy as np

from . import _kernel_exp, _libm_f32
from ._fma import fma32, horner32

F32 = np.float32


def _floats(*bits):
    return np.array(bits, np.uint32).view(F32)


# The 25 polynomials' coefficients, by degree (0 to 5); polynomial i serves |x| whose bits + 0xc21fffff, shifted
# right by 21, are i (clamped to [1, 24]); 23 is the constant 1 (|x| beyond _RBOUND), 24 zero (inf and NaN).
_ERF_POLYNOMIALS = [
    _floats(0xa6f2cb94, 0x32827792, 0x3381cc0c, 0x34523d4a, 0x351ac44d, 0x35f36d88, 0x36ee8229, 0x37b8a3bb, 0x3867a213,
            0x3940033b, 0x3a2a5a1d, 0x3ae35863, 0x3b7828f2, 0x3c08b14b, 0x3c515ed3, 0xbb503236, 0xbd8d8e5e, 0xbe8abcd9,
            0xbf0c19a2, 0xbeccb328, 0x3e176ced, 0x3f470d99, 0x3f7abb28, 0x3f800000, 0),
    _floats(0x3f4c422a, 0x3f4c421f, 0x3f4c4207, 0x3f4c41cb, 0x3f4c413b, 0x3f4c3fad, 0x3f4c3a2f, 0x3f4c2d40, 0x3f4c146a,
            0x3f4bc341, 0x3f4ad08c, 0x3f48f8cf, 0x3f45fac7, 0x3f404e07, 0x3f3b980f, 0x3f48dff3, 0x3f78b21b, 0x3fbb0704,
            0x40019c32, 0x3fe536d6, 0x3f81331e, 0x3e6c8684, 0x3c98f936, 0, 0x3f800000),
    _floats(0xb62173f4, 0x3735e4cf, 0x37f2ff89, 0x388c23be, 0x3917535c, 0x39ab2ab0, 0x3a60fadb, 0x3af9b960, 0x3b6e5491,
            0x3c0a4ec5, 0x3ca5aa8c, 0x3d2138d9, 0x3d8737d4, 0x3ddfb660, 0x3e0f27ab, 0x3d94004b, 0xbe0efdeb, 0xbf1d96c3,
            0xbf89db58, 0xbf6d9897, 0xbef69fb8, 0xbdc4f8a8, 0xbbde6422, 0, 0),
    _floats(0xbe081a19, 0xbe084570, 0xbe08639b, 0xbe089837, 0xbe08f409, 0xbe09ab95, 0xbe0b66d0, 0xbe0e400a, 0xbe124df8,
            0xbe1bde02, 0xbe2f19c9, 0xbe4931bf, 0xbe685fbc, 0xbe89c95f, 0xbe96cbca, 0xbe8044aa, 0xbe0550f2, 0x3dcfd6a1,
            0x3e94c826, 0x3e79345f, 0x3decec91, 0x3ca46568, 0x3aa1e00a, 0, 0),
    _floats(0xba3d61db, 0x39f097a3, 0x3a5845dc, 0x3ab1fa35, 0x3b0cefb8, 0x3b653ab6, 0x3bcae527, 0x3c221712, 0x3c6c5840,
            0x3cc0a703, 0x3d1dcc19, 0x3d63656d, 0x3d955907, 0x3dbf9910, 0x3dd53f69, 0x3db7dcef, 0x3d639ebe, 0xba6ede48,
            0xbd22be69, 0xbd041cf1, 0xbc64f5ab, 0xbb097a32, 0xb8ebf380, 0, 0),
    _floats(0x3cb7d80c, 0x3c9b6050, 0x3c978d11, 0x3c92e850, 0x3c8d058b, 0x3c848454, 0x3c6cd623, 0x3c4c824b, 0x3c2a7935,
            0x3be0b390, 0x3b0651ac, 0xbb232f53, 0xbbd42fa0, 0xbc2c5366, 0xbc492c9e, 0xbc2a7aa6, 0xbbd55d04, 0xba823a76,
            0x3b102aa8, 0x3ae25a7e, 0x3a31f792, 0x38b84375, 0x3689bb5a, 0, 0)]
_RBOUND = _floats(0x40b15cee)[0]  # about 5.54: beyond it erf(x / sqrt 2) is 1 in float32
_INDEX_BIAS = np.uint32(0xc21fffff)

# Abramowitz and Stegun 7.1.26: erf(v) = 1 - t (p1 + t (p2 + ...)) e^(-v^2), t = 1 / (1 + p |v|)
_AS_P = _floats(0x3ea7ba05)[0]
_AS_POLY = _floats(0x3f87dc22, 0xbfba00e3, 0x3fb5f0e3, 0xbe91a98e, 0x3e827906)  # p5 down to p1
_ONE_OVER_SQRT_TWO, _ONE_OVER_SQRT_PI = _floats(0x3f3504f3, 0x3f106eba)

# oneDNN's exp: e^x = 2 * 2^(n-1) * e^r, n = floor(x log2 e + 1/2), e^r by a degree-5 polynomial
_LN_FLT_MIN, _LN_FLT_MAX, _LOG2_E, _LN_2 = _floats(0xc2aeac50, 0x42b17218, 0x3fb8aa3b, 0x3f317218)
_EXP_POLY = _floats(0x3c07cfce, 0x3d2b9d0d, 0x3e2aad40, 0x3efffee3, 0x3f7ffffb, 0x3f800000)


def applies(x):
    """torch sends this gelu to oneDNN: a contiguous float32 array of more than one element."""
    return x.dtype == F32 and x.size > 1 and x.flags.c_contiguous


def gelu(x):
    """x (1 + erf(x / sqrt 2)) / 2, erf by the interval's polynomial in |x| (its sign put back)."""
    a = np.abs(x)
    index = np.clip((a.view(np.uint32) + _INDEX_BIAS).view(np.int32) >> 21, 1, 24)
    index[_RBOUND < a] = 23
    erf = horner32([c[index] for c in _ERF_POLYNOMIALS[::-1]], a)
    erf = np.where(np.signbit(x), -erf, erf)
    return (x * (erf + F32(1))) * F32(0.5)


def gelu_slope(x):
    """d gelu / dx = 1/2 + v e^(-v^2) / sqrt(pi) + erf(v) / 2 with v = x / sqrt 2, erf by Abramowitz and Stegun."""
    v = x * _ONE_OVER_SQRT_TWO
    e = exp(-(v * v))
    density = (v * _ONE_OVER_SQRT_PI) * e
    t = F32(1) / fma32(_AS_P, np.abs(v), F32(1))
    erf = fma32(-e * t, horner32(_AS_POLY, t), F32(1))
    erf = np.where(np.signbit(v), -erf, erf)
    slope = fma32(erf, F32(0.5), density + F32(0.5))
    nan = np.isnan(x)  # (the instructions carry x's NaN through, where numpy's steps may flip its sign)
    slope[nan] = x[nan]
    return slope


def exp(x):
    """oneDNN's float32 e^x (0 below ln FLT_MIN)."""
    underflow = x < _LN_FLT_MIN
    x = np.maximum(np.minimum(x, _LN_FLT_MAX), _LN_FLT_MIN)
    n = np.floor(x * _LOG2_E + F32(0.5))
    r = fma32(-n, _LN_2, x)
    half_power = ((n - F32(1)).astype(np.int32) + 127) << 23
    half_power[underflow] = 0
    return horner32(_EXP_POLY, r) * half_power.view(F32) * F32(2)


_BETA, _KAPPA = F32(2 ** 0.5 * 2 / np.pi ** 0.5 * 0.5), F32(0.044715)  # sqrt(2/pi) and the cubic's weight


def gelu_tanh(x, lanes):
    """x (1 + tanh(beta (x + kappa x^3))) / 2, the inner sum fused"""
    t = _kernel_exp.tanh(_BETA * fma32(_KAPPA, x * x * x, x), lanes)
    return F32(0.5) * x * (F32(1) + t)


def gelu_tanh_slope(x, lanes):
    """(1 + t) / 2 + (x / 2) (1 - t^2) beta (1 + 3 kappa x^2), t = tanh(beta (x + kappa x^3)), term by term as
    torch's kernel, with its three fused steps"""
    t = _kernel_exp.tanh(_BETA * fma32(_KAPPA, x * x * x, x), lanes)
    inner_slope = _BETA * fma32(F32(3) * _KAPPA, x * x, F32(1))
    return F32(0.5) * (F32(1) + t) + (F32(0.5) * x) * fma32(-t, t, F32(1)) * inner_slope


# torch's own kernel for the exact form (a strided input, or one element): erf by Abramowitz and Stegun 7.1.26 on
# the vector lanes (torch's Vectorized erf), the C library's erff on the tails
def gelu_aten(x, lanes):
    """x / 2 (1 + erf(x / sqrt 2))"""
    return x * F32(0.5) * (F32(1) + _erf_aten(x * _ONE_OVER_SQRT_TWO, lanes))


def gelu_aten_slope(x, lanes):
    """(1 + erf(x / sqrt 2)) / 2 + x e^(-x^2/2) / sqrt(2 pi), the last sum fused on the vector lanes (not on the
    tails: measured)"""
    cdf = F32(0.5) * (F32(1) + _erf_aten(x * _ONE_OVER_SQRT_TWO, lanes))
    pdf = _PDF_SCALE * _kernel_exp.by_lanes(x * x * F32(-0.5), lanes, _kernel_exp.expf, _libm_f32.expf)
    return np.where(lanes, fma32(x, pdf, cdf), cdf + x * pdf)


_PDF_SCALE = F32(2 / np.pi ** 0.5 * 0.5 ** 0.5 * 0.5)


def _erf_aten(v, lanes):
    return _kernel_exp.by_lanes(v, lanes, _erf_vector, _libm_f32.erff)


def _erf_vector(v):
    """torch's Vectorized erf: 1 - t P(t) e^(-v^2) with t = 1 / (1 + p |v|), fused, its sign put back"""
    t = F32(1) / fma32(_AS_P, np.abs(v), F32(1))
    erf = fma32(-_kernel_exp.expf(-(v * v)) * t, horner32(_AS_POLY, t), F32(1))
    return np.where(np.signbit(v), -erf, erf)
