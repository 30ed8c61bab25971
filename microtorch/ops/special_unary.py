"""torch.special's one-input functions that have a derivative and no other microtorch op computes: the normal
distribution's (ndtr, log_ndtr, ndtri), the scaled complementary error function erfcx, the exponentially scaled
Bessel functions i0e and i1e, and entr. Forward computes in numpy from published series and rational
approximations (Cephes' coefficients, which torch's kernels use too), in the input's dtype and with the fused
steps and C library calls of torch's kernels (special_fma.py); backward and jvp are torch's formulas in Tensor
ops, so that they differentiate again."""
import math

import numpy as np

from ._kernels import _NAMES
from ._layout import like_torch
from ._op import Op
from .elementwise import MulScalar, _float, div_scalar, erf, where
from .pointwise import _erfc_np
from .scalar_overloads import AddScalar, add_scalar, mul_scalar, sub_scalar
from .special_fma import fma, halves, libm

_SQRT_2PI = math.sqrt(2 * math.pi)
_EXP_M2 = 0.13533528323661269189  # exp(-2): where ndtri's central approximation ends


def real_input(input, op, half=False):
    """input as a floating tensor (integers and bools promoted), after torch's refusals: no complex kernel, and
    no half one unless `half`."""
    from .scan import need_tensor
    need_tensor(input, op, "input", 0)
    if input.dtype.is_complex or (input._data.dtype == np.float16 and not half):
        name = _NAMES[input._data.dtype.name]
        raise NotImplementedError(f'"{op}_cpu" not implemented for \'{name}\': special.{op} is computed for real '
                                  "float32 and float64 tensors; convert with .double() (or take .real)")
    return _float(input)


def chbevl(y, coeffs):
    """sum_i c_i T_i(y/2) by Clenshaw's recurrence, the coefficients listed from the highest order down (Cephes);
    each step's y b0 - b1 fused as in torch's compiled kernels (which gives their bits: special_fma.py)."""
    b0, b1, b2 = np.full_like(y, coeffs[0]), np.zeros_like(y), np.zeros_like(y)
    y_halves = halves(y) if y.dtype == np.float64 else None
    for c in coeffs[1:]:
        b0, b1, b2 = fma(y, b0, -b1, y_halves) + c, b0, b1
    return 0.5 * (b0 - b2)


def piecewise(cond, x, near, far):
    """near(x) where cond, far(x) elsewhere (NaN too), each computed on its own elements only: an approximation's
    dozens of fused steps are not spent on elements the other one takes"""
    out = np.empty(x.shape, x.dtype)
    if cond.any():
        out[cond] = near(x[cond])
    if not cond.all():
        out[~cond] = far(x[~cond])
    return out


def polevl(x, coeffs):
    """the polynomial with these coefficients (highest degree first) at x, by Horner's rule (each step fused)."""
    out = np.zeros_like(x)
    for c in coeffs:
        out = fma(out, x, c)
    return out


def _special_op(name, values, local, saves=("self", "result")):
    """A one-input Op: forward = values(x), computed in x's dtype as torch's kernel computes (float64 where its
    kernel does), returned in x's dtype; backward = local(grad, x, result), written as torch's formula (with grad
    first); jvp the same formula on the tangent (torch's auto_element_wise). saves: what torch's node keeps (its
    _saved_self, _saved_result)."""
    def forward(ctx, x):  # (half computes in float32, as torch's kernels upcast it)
        out = np.asarray(values(x.astype(np.float32) if x.dtype == np.float16 else x)).astype(x.dtype)
        if type(x) is np.ndarray and not x.flags.c_contiguous:  # (laid out as torch's, before it is saved: the
            # series give C order)
            out = like_torch(out, x)
        ctx.save_for_backward(*[x if s == "self" else out for s in saves])
        return out

    def backward(ctx, grad):
        saved = dict(zip(saves, ctx.saved_tensors))
        return local(grad, saved.get("self"), saved.get("result"))

    def jvp(ctx, t):
        return local(t, ctx.inputs[0], ctx.output)

    return type(name, (Op,), {"_grad_fn_name": name + "Backward0", "__doc__": local.__doc__,
                              "forward": staticmethod(forward), "backward": staticmethod(backward),
                              "jvp": staticmethod(jvp), "__module__": __name__, "_saved_names": saves})


# ---- erfcx ---------------------------------------------------------------------------------------------
def _square_split(a):
    """a*a as hi + lo exactly (Dekker's product): exp(a^2) then loses no digits to the rounding of a^2."""
    ah, al = halves(a)
    hi = a * a
    return hi, ((ah * ah - hi) + 2 * ah * al) + al * al


def _erfcx_positive(a):
    """erfcx(a) for a >= 0 (or NaN), in float64: exp(a^2) erfc(a) below 26 (erfc still a normal float there),
    else the asymptotic series 1/(a sqrt(pi)) sum_k (-1)^k (2k-1)!! / (2a^2)^k, whose terms fall fast there."""
    near = np.where(a < 26, a, 0.0)
    hi, lo = _square_split(near)
    scaled = np.exp(hi) * _erfc_np(near)
    inv = 1 / np.where(a < 26, 1.0, a)
    u = 0.5 * inv * inv
    series = np.ones_like(a)
    for k in range(12, 0, -1):
        series = 1 - (2 * k - 1) * u * series
    return np.where(a < 26, scaled + scaled * lo, series * inv / math.sqrt(math.pi))


def _erfcx_np(x):
    """exp(x^2) erfc(x). For x < 0, 2 exp(x^2) - erfcx(-x) as torch's kernel computes it, in x's dtype (exp of the
    rounded x*x, inf below -26.7, the second term dropped below -6.1), so that the two agree to the last digits."""
    pos = _erfcx_positive(np.abs(x).astype(np.float64)).astype(x.dtype)
    twice = (2 * np.exp((x * x).astype(np.float64))).astype(x.dtype)
    neg = np.where(x < -6.1, twice, twice - pos)
    return np.where(x < 0, np.where(x < -26.7, np.inf, neg), pos)


def _d_erfcx(grad, x, result):
    """d erfcx(x) = 2 x erfcx(x) - 2/sqrt(pi)"""
    return sub_scalar(mul_scalar(x, 2.0) * result, 2.0 / math.sqrt(math.pi)) * grad  # (torch's Scalars: MulBackward1,
    # SubBackward1)


SpecialErfcx = _special_op("SpecialErfcx", _erfcx_np, _d_erfcx)


# ---- the normal distribution ---------------------------------------------------------------------------
def _log_ndtr_np(x):
    """log Phi(x): log(erfcx(-t)/2) - t^2 below x = -1 (where Phi underflows), else log1p(-erfc(t)/2), t = x/sqrt 2,
    in x's dtype as torch's kernel"""
    t = x * x.dtype.type(math.sqrt(0.5))
    low = libm("log", _erfcx_np(-t) / 2) - t * t
    return np.where(x < -1, low, libm("log1p", -_erfc_np(t.astype(np.float64)).astype(x.dtype) / 2))


def _d_log_ndtr(grad, x, result):
    """d log Phi(x) = exp(-x^2/2 - log Phi(x)) / sqrt(2 pi)"""
    return div_scalar(grad, _SQRT_2PI) * (result + div_scalar(x.pow(2), 2)).neg().exp()  # (Scalars: DivBackward1)


# Cephes' ndtri: a rational function of y - 1/2 in the center, of 1/sqrt(-2 log y) in the tails
_NDTRI_P0 = [-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
             1.39312609387279679503E1, -1.23916583867381258016E0]
_NDTRI_Q0 = [1.0, 1.95448858338141759834E0, 4.67627912898881538453E0, 8.63602421390890590575E1,
             -2.25462687854119370527E2, 2.00260212380060660359E2, -8.20372256168333339912E1,
             1.59056225126211695515E1, -1.18331621121330003142E0]
_NDTRI_P1 = [4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
             4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
             -1.40256079171354495875E-1, -3.50424626827848203418E-2, -8.57456785154685413611E-4]
_NDTRI_Q1 = [1.0, 1.57799883256466749731E1, 4.53907635128879210584E1, 4.13172038254672030440E1,
             1.50425385692907503408E1, 2.50464946208309415979E0, -1.42182922854787788574E-1,
             -3.80806407691578277194E-2, -9.33259480895457427372E-4]
_NDTRI_P2 = [3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
             1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2,
             3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9]
_NDTRI_Q2 = [1.0, 6.02427039364742014255E0, 3.67983563856160859403E0, 1.37702099489081330271E0,
             2.16236993594496635890E-1, 1.34204006088543189037E-2, 3.28014464682127739104E-4,
             2.89247864745380683936E-6, 6.79019408009981274425E-9]


def _ndtri_central(y):
    """Phi^-1(y) for exp(-2) < y < 1 - exp(-2): y - 1/2 times a rational function of (y - 1/2)^2"""
    c = y - 0.5
    c2 = c * c
    return fma(c, c2 * polevl(c2, _NDTRI_P0) / polevl(c2, _NDTRI_Q0), c) * 2.50662827463100050242


def _ndtri_tail(y):
    """-Phi^-1(y) for y <= exp(-2): s - log(s)/s less a rational function of 1/s, s = sqrt(-2 log y), one for s
    below 8 and one beyond"""
    s = np.sqrt(-2 * libm("log", np.where(y > 0, y, 1.0)))
    s = np.where(s > 0, s, 1.0)  # (y = 0 or NaN: set by the caller)
    return (s - libm("log", s) / s) - piecewise(s < 8, s, lambda v: _in_inverse(v, _NDTRI_P1, _NDTRI_Q1),
                                                lambda v: _in_inverse(v, _NDTRI_P2, _NDTRI_Q2))


def _in_inverse(s, p, q):
    """z p(z) / q(z) at z = 1/s"""
    z = 1 / s
    return z * polevl(z, p) / polevl(z, q)


def _ndtri_np(y0):
    """Phi^-1(y): the central approximation for exp(-2) < y < 1 - exp(-2), else the tail one on min(y, 1 - y)"""
    upper = y0 > 1 - _EXP_M2
    y = np.where(upper, 1 - y0, y0)
    out = piecewise(y > _EXP_M2, y, _ndtri_central, _ndtri_tail)
    out = np.where(y > _EXP_M2, out, np.where(upper, out, -out))
    out = np.where(y0 == 0, -np.inf, np.where(y0 == 1, np.inf, out))
    return np.where((y0 < 0) | (y0 > 1) | np.isnan(y0), np.nan, out)


def _d_ndtri(grad, x, result):
    """d Phi^-1(y) = sqrt(2 pi) exp(Phi^-1(y)^2 / 2)"""
    return mul_scalar(grad, _SQRT_2PI) * div_scalar(result.square(), 2).exp()  # (torch's Scalars)


SpecialLogNdtr = _special_op("SpecialLogNdtr", _log_ndtr_np, _d_log_ndtr)
SpecialNdtri = _special_op("SpecialNdtri", _ndtri_np, _d_ndtri, saves=("result",))


# ---- exponentially scaled modified Bessel functions of the first kind ------------------------------------
# Cephes' Chebyshev coefficients of exp(-x) I0(x) on [0, 8] and of exp(-x) sqrt(x) I0(x) on [8, inf)
I0E_A = [-4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16,
         1.71539128555513303061E-15, -1.16853328779934516808E-14, 7.67618549860493561688E-14,
         -4.85644678311192946090E-13, 2.95505266312963983461E-12, -1.72682629144155570723E-11,
         9.67580903537323691224E-11, -5.18979560163526290666E-10, 2.65982372468238665035E-9,
         -1.30002500998624804212E-8, 6.04699502254191894932E-8, -2.67079385394061173391E-7,
         1.11738753912010371815E-6, -4.41673835845875056359E-6, 1.64484480707288970893E-5,
         -5.75419501008210370398E-5, 1.88502885095841655729E-4, -5.76375574538582365885E-4,
         1.63947561694133579842E-3, -4.32430999505057594430E-3, 1.05464603945949983183E-2,
         -2.37374148058994688156E-2, 4.93052842396707084878E-2, -9.49010970480476444210E-2,
         1.71620901522208775349E-1, -3.04682672343198398683E-1, 6.76795274409476084995E-1]
I0E_B = [-7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
         3.46122286769746109310E-17, -2.82762398051658348494E-16, -3.42548561967721913462E-16,
         1.77256013305652638360E-15, 3.81168066935262242075E-15, -9.55484669882830764870E-15,
         -4.15056934728722208663E-14, 1.54008621752140982691E-14, 3.85277838274214270114E-13,
         7.18012445138366623367E-13, -1.79417853150680611778E-12, -1.32158118404477131188E-11,
         -3.14991652796324136454E-11, 1.18891471078464383424E-11, 4.94060238822496958910E-10,
         3.39623202570838634515E-9, 2.26666899049817806459E-8, 2.04891858946906374183E-7,
         2.89137052083475648297E-6, 6.88975834691682398426E-5, 3.36911647825569408990E-3,
         8.04490411014108831608E-1]
# the same for I1: exp(-x) I1(x) / x on [0, 8], exp(-x) sqrt(x) I1(x) on [8, inf)
I1E_A = [2.77791411276104639959E-18, -2.11142121435816608115E-17, 1.55363195773620046921E-16,
         -1.10559694773538630805E-15, 7.60068429473540693410E-15, -5.04218550472791168711E-14,
         3.22379336594557470981E-13, -1.98397439776494371520E-12, 1.17361862988909016308E-11,
         -6.66348972350202774223E-11, 3.62559028155211703701E-10, -1.88724975172282928790E-9,
         9.38153738649577178388E-9, -4.44505912879632808065E-8, 2.00329475355213526229E-7,
         -8.56872026469545474066E-7, 3.47025130813767847674E-6, -1.32731636560394358279E-5,
         4.78156510755005422638E-5, -1.61760815825896745588E-4, 5.12285956168575772895E-4,
         -1.51357245063125314899E-3, 4.15642294431288815669E-3, -1.05640848946261981558E-2,
         2.47264490306265168283E-2, -5.29459812080949914269E-2, 1.02643658689847095384E-1,
         -1.76416518357834055153E-1, 2.52587186443633654823E-1]
I1E_B = [7.51729631084210481353E-18, 4.41434832307170791151E-18, -4.65030536848935832153E-17,
         -3.20952592199342395980E-17, 2.96262899764595013876E-16, 3.30820231092092828324E-16,
         -1.88035477551078244854E-15, -3.81440307243700780478E-15, 1.04202769841288027642E-14,
         4.27244001671195135429E-14, -2.10154184277266431302E-14, -4.08355111109219731823E-13,
         -7.19855177624590851209E-13, 2.03562854414708950722E-12, 1.41258074366137813316E-11,
         3.25260358301548823856E-11, -1.89749581235054123450E-11, -5.58974346219658380687E-10,
         -3.83538038596423702205E-9, -2.63146884688951950684E-8, -2.51223623787020892529E-7,
         -3.88256480887769039346E-6, -1.10588938762623716291E-4, -9.76109749136146840777E-3,
         7.78576235018280120474E-1]


def i0e_np(x):
    """exp(-|x|) I0(x): two Chebyshev expansions, on [0, 8] and in 32/|x| beyond"""
    return piecewise(np.abs(x) <= 8, np.abs(x), lambda a: chbevl(a / 2 - 2, I0E_A),
                     lambda a: chbevl(32 / a - 2, I0E_B) / np.sqrt(a))


def i1e_np(x):
    """exp(-|x|) I1(x), odd in x (torch's float32 kernel sums only the coefficients that count in float32)"""
    short = x.dtype == np.float32
    out = piecewise(np.abs(x) <= 8, np.abs(x), lambda a: chbevl(a / 2 - 2, I1E_A[12:] if short else I1E_A) * a,
                    lambda a: chbevl(32 / a - 2, I1E_B[18:] if short else I1E_B) / np.sqrt(a))
    return np.where(x < 0, -out, out)


def _d_i0e(grad, x, result):
    """d i0e(x) = i1e(x) - sgn(x) i0e(x)"""
    return grad * (SpecialI1E.apply(x) - x.sgn() * result)


def _d_i1e(grad, x, result):
    """d i1e(x) = i0e(x) - i1e(x) (sgn(x) + 1/x), and 1/2 where |x| <= eps (or NaN), as torch's"""
    eps = float(np.finfo(x._data.dtype).eps)
    big = x.abs() > eps
    safe = where(big, x, eps)
    return grad * where(big, SpecialI0E.apply(safe) - result * (safe.sgn() + safe.reciprocal()), 0.5)


SpecialI0E = _special_op("SpecialI0E", i0e_np, _d_i0e)
SpecialI1E = _special_op("SpecialI1E", i1e_np, _d_i1e)


# ---- entr ----------------------------------------------------------------------------------------------
def _entr_np(x):
    """-x log x for x > 0, 0 at 0, -inf below (NaN stays NaN)"""
    out = -x * libm("log", np.where(x > 0, x, 1.0))
    return np.where(x > 0, out, np.where(x == 0, 0.0, np.where(np.isnan(x), x, -np.inf)))


def _d_entr(grad, x, result):
    """d entr(x) = -(1 + log x)"""
    return grad * (-add_scalar(x.log(), 1))  # (torch's 1 + log(x): AddBackward1)


SpecialEntr = _special_op("SpecialEntr", _entr_np, _d_entr, saves=("self",))


# ---- the public functions --------------------------------------------------------------------------------
def ndtr(input):
    """Phi(x) = (1 + erf(x / sqrt 2)) / 2, composed as torch's C++ composes it: the numbers are Scalars there, so
    the graph is MulBackward1, AddBackward1, ErfBackward0, MulBackward1"""
    x = real_input(input, "ndtr", half=True)
    return MulScalar.apply(AddScalar.apply(erf(MulScalar.apply(x, math.sqrt(0.5))), 1), 0.5)


def log_ndtr(input):
    return SpecialLogNdtr.apply(real_input(input, "log_ndtr"))


def ndtri(input):
    return SpecialNdtri.apply(real_input(input, "ndtri"))


def erfcx(input):
    return SpecialErfcx.apply(real_input(input, "erfcx"))


def i0e(input):
    return SpecialI0E.apply(real_input(input, "i0e", half=True))


def i1e(input):
    return SpecialI1E.apply(real_input(input, "i1e", half=True))


def entr(input):
    return SpecialEntr.apply(real_input(input, "entr", half=True))


__all__ = ["entr", "erfcx", "i0e", "i1e", "log_ndtr", "ndtr", "ndtri"]
