"""microtorch: a readable autograd engine on numpy that behaves like torch.autograd.

`import microtorch as torch` and most torch code for tensors and autograd runs unchanged.
The visualizer lives in `microtorch.viz` and is not imported here.
"""
import numpy as _np

from . import _dtype
from ._dtype import (bool_ as bool, cdouble, cfloat, complex64, complex128, double, dtype, float, float16,  # noqa: F401
                     float32, float64, get_default_dtype, half, int, int8, int16, int32, int64, long,
                     promote_types, result_type, set_default_dtype, short, uint8)
from ._printing import set_printoptions  # noqa: F401
from ._random import Generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state  # noqa: F401
from ._tensor import Size, Tensor, as_tensor, device, from_numpy, tensor  # noqa: F401
from . import autograd  # noqa: F401
from .autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled  # noqa: F401
from .autograd.grad_mode import (enable_grad, inference_mode, is_grad_enabled,  # noqa: F401
                                 is_inference_mode_enabled, no_grad, set_grad_enabled)
from .ops import (abs, acos, add, addmm, all, allclose, amax, amin, angle, any, argmax, argmin, asin,  # noqa: F401
                  atan, atleast_1d, bmm, broadcast_to, cat, ceil, chunk, clamp, clip, clone, concat,
                  concatenate, conj, cos, cosh, count_nonzero, cumsum, diagonal, div, dot, einsum, eq, equal, exp,
                  erf, expm1, flatten, flip, floor, fmod, gather, ge, ger, gt, imag, index_select, isclose, isfinite,
                  isinf, isnan, le, log, log1p, log2, log10, logical_and, logical_not, logical_or,
                  logical_xor, logsumexp, lt, masked_fill, masked_select, matmul, max, maximum, mean, min,
                  minimum, mm, movedim, mul, mv, narrow, ne, neg, nonzero, norm, outer, permute, pow, prod,
                  real, reciprocal, relu, remainder, repeat, reshape, rsqrt, select, sgn, sigmoid, sign,
                  sin, sinh, sort, split, sqrt, square, squeeze, stack, std, sub, sum, swapaxes, swapdims, t,
                  take, tan, tanh, topk, transpose, trunc, unbind, unflatten, unsqueeze, var, where)
from .ops import round_ as round  # noqa: F401
from ._creation import (arange, empty, empty_like, eye, full, full_like, linspace, ones, ones_like,  # noqa: F401
                        rand, rand_like, randint, randint_like, randn, randn_like, randperm, zeros,
                        zeros_like, normal, logspace, meshgrid, tril, triu, diag, bernoulli, multinomial)
from ._serialization import load, save  # noqa: F401
from . import func  # noqa: F401,E402  (registers vmap, jacrev, jacfwd with autograd's extension point)

multiply, subtract, divide, true_divide, negative, absolute = mul, sub, div, div, neg, abs
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne
strided = "strided"
e, pi, inf, nan = _np.e, _np.pi, _np.inf, _np.nan
__version__ = "0.1.0"


def is_tensor(obj):
    return isinstance(obj, Tensor)


def is_floating_point(t):
    return t.dtype.is_floating_point


def is_complex(t):
    return t.dtype.is_complex


def numel(t):
    return t.numel()


def detach(t):
    return t.detach()


def softmax(x, dim, dtype=None):
    from .ops.nn import softmax as _softmax
    return _softmax(x, dim, dtype=dtype)


def log_softmax(x, dim, dtype=None):
    from .ops.nn import log_softmax as _log_softmax
    return _log_softmax(x, dim, dtype=dtype)


def __getattr__(name):
    # subpackages that pull in more code are imported on first use
    import importlib
    if name in ("nn", "optim", "testing", "viz"):
        return importlib.import_module("." + name, __name__)
    if name == "vmap":  # torch.vmap is torch.func.vmap
        return importlib.import_module(".func", __name__).vmap
    raise AttributeError(f"module 'microtorch' has no attribute {name!r}")
