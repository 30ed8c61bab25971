"""torch.special's Bessel family that torch does not differentiate: bessel_j0, bessel_j1, bessel_y0, bessel_y1,
modified_bessel_i0/i1/k0/k1, scaled_modified_bessel_k0/k1, spherical_bessel_j0 and airy_ai. As in torch, their
results never require grad (no node is recorded, forward mode gives no tangent). Each is computed as torch's kernel
computes it, in the input's dtype: Cephes' rational and Chebyshev approximations (the coefficients are Cephes'),
a power series, or an asymptotic expansion, chosen per element, with the kernel's fused multiply-adds and C library
calls (special_fma.py), which gives torch's bits in float64."""
import math

import numpy as np

from ._layout import like_torch
from ._op import Op
from .special_fma import fma, libm
from .special_unary import I0E_A, I0E_B, I1E_A, I1E_B, chbevl, piecewise, polevl, real_input

_SQ2OPI = 0.797884560802865355879892119868763737  # sqrt(2/pi)
_TWO_OPI = 0.636619772367581343075535053490057448  # 2/pi

# J0 and Y0: a rational function of x^2 up to 5, beyond it a modulus and a phase in 25/x^2 (Cephes j0.c)
_J0_PP = [7.96936729297347051624e-04, 8.28352392107440799803e-02, 1.23953371646414299388e+00,
          5.44725003058768775090e+00, 8.74716500199817011941e+00, 5.30324038235394892183e+00,
          9.99999999999999997821e-01]
_J0_PQ = [9.24408810558863637013e-04, 8.56288474354474431428e-02, 1.25352743901058953537e+00,
          5.47097740330417105182e+00, 8.76190883237069594232e+00, 5.30605288235394617618e+00,
          1.00000000000000000218e+00]
_J0_QP = [-1.13663838898469149931e-02, -1.28252718670509318512e+00, -1.95539544257735972385e+01,
          -9.32060152123768231369e+01, -1.77681167980488050595e+02, -1.47077505154951170175e+02,
          -5.14105326766599330220e+01, -6.05014350600728481186e+00]
_J0_QQ = [6.43178256118178023184e+01, 8.56430025976980587198e+02, 3.88240183605401609683e+03,
          7.24046774195652478189e+03, 5.93072701187316984827e+03, 2.06209331660327847417e+03,
          2.42005740240291393179e+02]
_J0_RP = [-4.79443220978201773821e+09, 1.95617491946556577543e+12, -2.49248344360967716204e+14,
          9.70862251047306323952e+15]
_J0_RQ = [4.99563147152651017219e+02, 1.73785401676374683123e+05, 4.84409658339962045305e+07,
          1.11855537045356834862e+10, 2.11277520115489217587e+12, 3.10518229857422583814e+14,
          3.18121955943204943306e+16, 1.71086294081043136091e+18]
_Y0_YP = [1.55924367855235737965e+04, -1.46639295903971606143e+07, 5.43526477051876500413e+09,
          -9.82136065717911466409e+11, 8.75906394395366999549e+13, -3.46628303384729719441e+15,
          4.42733268572569800351e+16, -1.84950800436986690637e+16]
_Y0_YQ = [1.04128353664259848412e+03, 6.26107330137134956842e+05, 2.68919633393814121987e+08,
          8.64002487103935000337e+10, 2.02979612750105546709e+13, 3.17157752842975028269e+15,
          2.50596256172653059228e+17]
# J1 and Y1 (Cephes j1.c)
_J1_PP = [7.62125616208173112003e-04, 7.31397056940917570436e-02, 1.12719608129684925192e+00,
          5.11207951146807644818e+00, 8.42404590141772420927e+00, 5.21451598682361504063e+00,
          1.00000000000000000254e+00]
_J1_PQ = [5.71323128072548699714e-04, 6.88455908754495404082e-02, 1.10514232634061696926e+00,
          5.07386386128601488557e+00, 8.39985554327604159757e+00, 5.20982848682361821619e+00,
          9.99999999999999997461e-01]
_J1_QP = [5.10862594750176621635e-02, 4.98213872951233449420e+00, 7.58238284132545283818e+01,
          3.66779609360150777800e+02, 7.10856304998926107277e+02, 5.97489612400613639965e+02,
          2.11688757100572135698e+02, 2.52070205858023719784e+01]
_J1_QQ = [7.42373277035675149943e+01, 1.05644886038262816351e+03, 4.98641058337653607651e+03,
          9.56231892404756170795e+03, 7.99704160447350683650e+03, 2.82619278517639096600e+03,
          3.36093607810698293419e+02]
_J1_RP = [-8.99971225705559398224e+08, 4.52228297998194034323e+11, -7.27494245221818276015e+13,
          3.68295732863852883286e+15]
_J1_RQ = [6.20836478118054335476e+02, 2.56987256757748830383e+05, 8.35146791431949253037e+07,
          2.21511595479792499675e+10, 4.74914122079991414898e+12, 7.84369607876235854894e+14,
          8.95222336184627338078e+16, 5.32278620332680085395e+18]
_Y1_YP = [1.26320474790178026440e+09, -6.47355876379160291031e+11, 1.14509511541823727583e+14,
          -8.12770255501325109621e+15, 2.02439475713594898196e+17, -7.78877196265950026825e+17]
_Y1_YQ = [5.94301592346128195359e+02, 2.35564092943068577943e+05, 7.34811944459721705660e+07,
          1.87601316108706159478e+10, 3.88231277496238566008e+12, 6.20557727146953693363e+14,
          6.87141087355300489866e+16, 3.97270608116560655612e+18]
# K0 and K1: Chebyshev series in x^2 - 2 up to 2 (beside log(x/2) I(x)), in 8/x - 2 beyond (Cephes k0.c, k1.c)
_K0_A = [1.37446543561352307156e-16, 4.25981614279661018399e-14, 1.03496952576338420167e-11,
         1.90451637722020886025e-09, 2.53479107902614945675e-07, 2.28621210311945178607e-05,
         1.26461541144692592338e-03, 3.59799365153615016266e-02, 3.44289899924628486886e-01,
         -5.35327393233902768720e-01]
_K0_B = [5.30043377268626276149e-18, -1.64758043015242134646e-17, 5.21039150503902756861e-17,
         -1.67823109680541210385e-16, 5.51205597852431940784e-16, -1.84859337734377901440e-15,
         6.34007647740507060557e-15, -2.22751332699166985548e-14, 8.03289077536357521100e-14,
         -2.98009692317273043925e-13, 1.14034058820847496303e-12, -4.51459788337394416547e-12,
         1.85594911495471785253e-11, -7.95748924447710747776e-11, 3.57739728140030116597e-10,
         -1.69753450938905987466e-09, 8.57403401741422608519e-09, -4.66048989768794782956e-08,
         2.76681363944501510342e-07, -1.83175552271911948767e-06, 1.39498137188764993662e-05,
         -1.28495495816278026384e-04, 1.56988388573005337491e-03, -3.14481013119645005427e-02,
         2.44030308206595545468e+00]
_K1_A = [-7.02386347938628759343e-18, -2.42744985051936593393e-15, -6.66690169419932900609e-13,
         -1.41148839263352776110e-10, -2.21338763073472585583e-08, -2.43340614156596823496e-06,
         -1.73028895751305206302e-04, -6.97572385963986435018e-03, -1.22611180822657148235e-01,
         -3.53155960776544875667e-01, 1.52530022733894777053e+00]
_K1_B = [-5.75674448366501715755e-18, 1.79405087314755922667e-17, -5.68946255844285935196e-17,
         1.83809354436663880070e-16, -6.05704724837331885336e-16, 2.03870316562433424052e-15,
         -7.01983709041831346144e-15, 2.47715442448130437068e-14, -8.97670518232499435011e-14,
         3.34841966607842919884e-13, -1.28917396095102890680e-12, 5.13963967348173025100e-12,
         -2.12996783842756842877e-11, 9.21831518760500529508e-11, -4.19035475934189648750e-10,
         2.01504975519703286596e-09, -1.03457624656780970260e-08, 5.74108412545004946722e-08,
         -3.50196060308781257119e-07, 2.40648494783721712015e-06, -1.93619797416608296024e-05,
         1.95215518471351631108e-04, -2.85781685962277938680e-03, 1.03923736576817238437e-01,
         2.72062619048444266945e+00]
# Ai: rational functions of 1/zeta for x >= 2.09 and of 1/zeta^2 below -2.09 (Cephes airy.c)
_AI_AN = [3.46538101525629032477e-01, 1.20075952739645805542e+01, 7.62796053615234516538e+01,
          1.68089224934630576269e+02, 1.59756391350164413639e+02, 7.05360906840444183113e+01,
          1.40264691163389668864e+01, 9.99999999999999995305e-01]
_AI_AD = [5.67594532638770212846e-01, 1.47562562584847203173e+01, 8.45138970141474626562e+01,
          1.77318088145400459522e+02, 1.64234692871529701831e+02, 7.14778400825575695274e+01,
          1.40959135607834029598e+01, 1.00000000000000000470e+00]
_AI_AFN = [-1.31696323418331795333e-01, -6.26456544431912369773e-01, -6.93158036036933542233e-01,
           -2.79779981545119124951e-01, -4.91900132609500318020e-02, -4.06265923594885404393e-03,
           -1.59276496239262096340e-04, -2.77649108155232920844e-06, -1.67787698489114633780e-08]
_AI_AFD = [1.33560420706553243746e+01, 3.26825032795224613948e+01, 2.67367040941499554804e+01,
           9.18707402907259625840e+00, 1.47529146771666414581e+00, 1.15687173795188044134e-01,
           4.40291641615211203805e-03, 7.54720348287414296618e-05, 4.51850092970580378464e-07]
_AI_AGN = [1.97339932091685679179e-02, 3.91103029615688277255e-01, 1.06579897599595591108e+00,
           9.39169229816650230044e-01, 3.51465656105547619242e-01, 6.33888919628925490927e-02,
           5.85804113048388458567e-03, 2.82851600836737019778e-04, 6.98793669997260967291e-06,
           8.11789239554389293311e-08, 3.41551784765923618484e-10]
_AI_AGD = [9.30892908077441974853e+00, 1.98352928718312140417e+01, 1.55646628932864612953e+01,
           5.47686069422975497931e+00, 9.54293611618961883998e-01, 8.64580826352392193095e-02,
           4.12656523824222607191e-03, 1.01259085116509135510e-04, 1.17166733214413521882e-06,
           4.91834570062930015649e-09]


def _oscillating(x, pp, pq, qp, qq, w, phase, sine):
    """sqrt(2/(pi x)) (P cos(x - phase) - 5/x Q sin(x - phase)) for J, (P sin + 5/x Q cos) for Y: the Hankel
    asymptotic form beyond 5, with P and Q rational functions of w"""
    p = polevl(w, pp) / polevl(w, pq)
    q = polevl(w, qp) / polevl(w, qq)
    c, s = libm("cos", x - phase), libm("sin", x - phase)
    main = fma(p, s, 5 / x * q * c) if sine else fma(p, c, -(5 / x * q * s))  # (fused as torch's kernel)
    return main * x.dtype.type(_SQ2OPI) / np.sqrt(x)


_PI_4, _3PI_4 = 0.785398163397448309615660845819875721, 2.356194490192344928846982537459627163


def _j0_near(x):
    """J0 up to 5 (x >= 0): a rational function of x^2 with J0's first two zeros factored out"""
    x2 = x * x
    out = (x2 - 5.78318596294678452118e+00) * (x2 - 3.04712623436620863991e+01) * polevl(x2, _J0_RP) / \
        polevl(x2, _J0_RQ)
    return np.where(x < 0.00001, 1 - x2 / 4, out)


def _j0(x):
    return piecewise(np.abs(x) <= 5, np.abs(x), _j0_near,
                     lambda a: _oscillating(a, _J0_PP, _J0_PQ, _J0_QP, _J0_QQ, 25 / (a * a), _PI_4, False))


def _j1_near(x):
    """J1 up to 5, odd: torch's kernel computes -J1(-x) below 0, the same as this series in x itself"""
    x2 = x * x
    return polevl(x2, _J1_RP) / polevl(x2, _J1_RQ) * x * (x2 - 1.46819706421238932572e+01) * \
        (x2 - 4.92184563216946036703e+01)


def _j1_far(x):
    a = np.abs(x)
    out = _oscillating(a, _J1_PP, _J1_PQ, _J1_QP, _J1_QQ, 5 / a * (5 / a), _3PI_4, False)
    return np.where(x < 0, -out, out)


def _j1(x):
    return piecewise(np.abs(x) <= 5, x, _j1_near, _j1_far)


def _y0_near(x):
    """Y0 in (0, 5]: a rational function of x^2 plus 2/pi log(x) J0(x) (0 and below are set by _y0)"""
    x = np.where(x > 0, x, x.dtype.type(1))
    x2 = x * x
    return fma(x.dtype.type(_TWO_OPI) * libm("log", x), _j0(x), polevl(x2, _Y0_YP) / polevl(x2, _Y0_YQ))


def _y1_near(x):
    """Y1 in (0, 5]: x times a rational function of x^2 plus 2/pi (J1(x) log(x) - 1/x)"""
    x = np.where(x > 0, x, x.dtype.type(1))
    x2 = x * x
    return fma(x, polevl(x2, _Y1_YP) / polevl(x2, _Y1_YQ),
               x.dtype.type(_TWO_OPI) * fma(_j1(x), libm("log", x), -(1 / x)))


def _y0(x):
    out = piecewise(x <= 5, x, _y0_near,
                    lambda a: _oscillating(a, _J0_PP, _J0_PQ, _J0_QP, _J0_QQ, 25 / (a * a), _PI_4, True))
    return np.where(x == 0, -np.inf, np.where(x < 0, np.nan, out))


def _y1(x):
    out = piecewise(x <= 5, x, _y1_near,
                    lambda a: _oscillating(a, _J1_PP, _J1_PQ, _J1_QP, _J1_QQ, 5 / a * (5 / a), _3PI_4, True))
    return np.where(x == 0, -np.inf, np.where(x < 0, np.nan, out))


def i0_values(x):
    """I0(x) = exp(|x|) i0e(x), torch's kernel (of i0 and of modified_bessel_i0): one product on each side of 8
    (inf gives NaN, as torch's)"""
    return piecewise(np.abs(x) <= 8, np.abs(x), lambda a: libm("exp", a) * chbevl(a / 2 - 2, I0E_A),
                     lambda a: libm("exp", a) * chbevl(32 / a - 2, I0E_B) / np.sqrt(a))


def i1_values(x, special_i1=False):
    """I1(x), odd: modified_bessel_i1's kernel, or special.i1's (special_i1: its float32 series is shorter, and it
    multiplies in another order)"""
    short = special_i1 and x.dtype == np.float32

    def near(a):
        series = chbevl(a / 2 - 2, I1E_A[12:] if short else I1E_A)
        return libm("exp", a) * a * series if special_i1 else series * a * libm("exp", a)

    out = piecewise(np.abs(x) <= 8, np.abs(x), near,
                    lambda a: libm("exp", a) * chbevl(32 / a - 2, I1E_B[18:] if short else I1E_B) / np.sqrt(a))
    return np.where(x < 0, -out, out)


def _k_near(x, order, scaled):
    """K0 or K1 up to 2: a Chebyshev series in x^2 - 2 beside log(x/2) I(x); times exp(x) when scaled (each
    a*b + c fused, as torch's compiled kernel)"""
    near = np.where((x > 0) & (x <= 2), x, x.dtype.type(1))
    half, y = x.dtype.type(0.5), fma(near, near, -2)
    if order == 1:
        out = fma(libm("log", half * near), i1_values(near), chbevl(y, _K1_A) / near)
    elif scaled:
        out = fma(-libm("log", half * near), i0_values(near), chbevl(y, _K0_A))
    else:  # (torch's unscaled K0 takes the log of a double, whatever the dtype)
        log = libm("log", 0.5 * near.astype(np.float64))
        out = fma(-log, i0_values(near).astype(np.float64), chbevl(y, _K0_A).astype(np.float64)).astype(x.dtype)
    return out * libm("exp", near) if scaled else out


def _k(x, order, scaled):
    """K0 or K1 (times exp(x) when scaled): inf at 0, NaN below; beyond 2 a Chebyshev series in 8/x - 2"""
    def far(v):
        series = chbevl(8 / v - 2, _K0_B if order == 0 else _K1_B)
        return series / np.sqrt(v) if scaled else libm("exp", -v) * series / np.sqrt(v)

    out = piecewise(x <= 2, x, lambda v: _k_near(v, order, scaled), far)
    return np.where(x == 0, np.inf, np.where(x < 0, np.nan, out))


def _spherical_j0(x):
    """sin(x)/x, by its Taylor series below 0.5 (where the quotient loses digits), 0 at +-inf"""
    t = x.dtype.type
    x2 = x * x
    series = t(1.0) / t(6227020800.0)
    for c in (-39916800.0, 362880.0, -5040.0, 120.0, -6.0):  # (1 - x^2/3! + x^4/5! ...: each step fused)
        series = fma(x2, series, t(np.sign(c)) / t(abs(c)))
    series = fma(x2, series, t(1.0))
    out = np.where(np.abs(x) < 0.5, series, libm("sin", x) / x)
    return np.where(np.isinf(x), 0, out)


def _airy_series(x):
    """Ai(x) = c1 f(x) - c2 g(x) by the Maclaurin series f, g in x^3, each element summed until its next term no
    longer counts (as torch's loop: a term below eps of the sum)"""
    eps = np.finfo(x.dtype).eps
    f, g, k, m, n = np.ones_like(x), x.copy(), np.ones_like(x), np.ones_like(x), x.copy()
    z = x * x * x
    live = np.ones(x.shape, bool)
    while live.any():
        m2, k2 = m * z / (k + 1), k + 2
        n2 = n * z / k2
        m2 = m2 / k2
        f2, n2 = f + m2, n2 / (k2 + 1)
        g2 = g + n2
        m, n, f, g, k = (np.where(live, new, old) for new, old in ((m2, m), (n2, n), (f2, f), (g2, g), (k2 + 1, k)))
        live &= np.abs(m / f) > eps
    return fma(x.dtype.type(0.355028053887817239260), f, -(x.dtype.type(0.258819403792806798405) * g))


def _airy_left(x):
    """Ai(x) below -2.09: the oscillating asymptotic form in zeta = 2/3 (-x)^(3/2)"""
    t = x.dtype.type
    zeta = t(-2.0) * x * np.sqrt(-x) / t(3.0)
    z = 1 / zeta
    zz = z * z
    f = 1 + zz * polevl(zz, _AI_AFN) / polevl(zz, _AI_AFD)
    g = z * polevl(zz, _AI_AGN) / polevl(zz, _AI_AGD)
    phase = zeta + t(0.25) * t(math.pi)
    return t(5.64189583547756286948e-01) / np.sqrt(np.sqrt(-x)) * fma(libm("sin", phase), f, -(libm("cos", phase) * g))


def _airy_right(x):
    """Ai(x) from 2.09: exp(-zeta) / (2 sqrt(pi) x^(1/4)) times a rational function of 1/zeta"""
    t = x.dtype.type
    zeta = t(2.0) * x * np.sqrt(x) / t(3.0)
    ratio = polevl(1 / zeta, _AI_AN) / polevl(1 / zeta, _AI_AD)
    return t(5.64189583547756286948e-01) * ratio / (t(2.0) * np.sqrt(np.sqrt(x)) * libm("exp", zeta))


def _airy_ai(x):
    """Ai(x): the oscillating form below -2.09, the decaying one from 2.09, the series between; 0 beyond 103.892
    and NaN at +-inf, as torch's kernel"""
    out = piecewise(x < -2.09, x, _airy_left, lambda v: piecewise(v >= 2.09, v, _airy_right, _airy_series))
    return np.where(np.isinf(x), np.nan, np.where(x > 103.892, 0, out))


def _no_grad(name, kernel):
    """torch.special.<name>: an Op computing the kernel on a real floating tensor (integers promoted) whose result
    is marked non-differentiable, as torch's: it never requires grad, and forward mode gives it no tangent"""
    def forward(ctx, x):
        out = like_torch(np.asarray(kernel(x), dtype=x.dtype), x)  # (laid out as x, as torch's)
        ctx.mark_non_differentiable(out)
        return out

    op = type("Special" + name.title().replace("_", ""), (Op,), {
        "_grad_fn_name": "Special" + name.title().replace("_", "") + "Backward0", "__module__": __name__,
        "forward": staticmethod(forward), "jvp": staticmethod(lambda ctx, t: None)})

    def fn(input):
        return op.apply(real_input(input, name))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.special.{name} (torch has no derivative for it: the result does not require grad)"
    fn.op = op  # (for the vmap rules, func/_rules_api.py)
    return fn


bessel_j0, bessel_j1 = _no_grad("bessel_j0", _j0), _no_grad("bessel_j1", _j1)
bessel_y0, bessel_y1 = _no_grad("bessel_y0", _y0), _no_grad("bessel_y1", _y1)
modified_bessel_i0 = _no_grad("modified_bessel_i0", i0_values)
modified_bessel_i1 = _no_grad("modified_bessel_i1", i1_values)
modified_bessel_k0 = _no_grad("modified_bessel_k0", lambda x: _k(x, 0, False))
modified_bessel_k1 = _no_grad("modified_bessel_k1", lambda x: _k(x, 1, False))
scaled_modified_bessel_k0 = _no_grad("scaled_modified_bessel_k0", lambda x: _k(x, 0, True))
scaled_modified_bessel_k1 = _no_grad("scaled_modified_bessel_k1", lambda x: _k(x, 1, True))
spherical_bessel_j0 = _no_grad("spherical_bessel_j0", _spherical_j0)
airy_ai = _no_grad("airy_ai", _airy_ai)

__all__ = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
           "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
           "spherical_bessel_j0"]
