"""microtorch: a readable autograd engine on numpy that behaves like torch.autograd.

`import microtorch as torch` and most torch code for tensors and autograd runs unchanged.
The visualizer lives in `microtorch.viz` and is not imported here.
"""
import numpy as _np

from . import _dtype
from ._dtype import (bool_ as bool, bfloat16, cdouble, cfloat, complex64, complex128, double, dtype, float,  # noqa: F401
                     float16, float32, float64, get_default_dtype, half, int, int8, int16, int32, int64, long,
                     promote_types, set_default_dtype, short, uint8)
from ._dtype import torch_result_type as result_type  # noqa: F401
from ._printing import set_printoptions  # noqa: F401
from ._random import Generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state  # noqa: F401
from .amp import autocast, is_autocast_enabled  # noqa: F401
from ._runtime import (are_deterministic_algorithms_enabled, compile, get_float32_matmul_precision,  # noqa: F401
                       get_num_interop_threads, get_num_threads, is_deterministic_algorithms_warn_only_enabled,
                       set_float32_matmul_precision, set_num_interop_threads, set_num_threads,
                       use_deterministic_algorithms)
from ._tensor import (Size, Tensor, as_tensor, device, from_numpy, get_default_device,  # noqa: F401
                      set_default_device, tensor)
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
from .ops._memory_formats import (channels_last, channels_last_3d, contiguous_format,  # noqa: F401
                                  memory_format, preserve_format)
from ._creation import (arange, empty, empty_like, eye, full, full_like, linspace, ones, ones_like,  # noqa: F401
                        rand, rand_like, randint, randint_like, randn, randn_like, randperm, zeros,
                        zeros_like, normal, logspace, meshgrid, tril, triu, diag, bernoulli, multinomial)
from ._serialization import load, save  # noqa: F401
from .ops.pointwise import (acosh, addcdiv, addcmul, arccosh, arcsinh, arctan2, arctanh, asinh, atan2,  # noqa: F401
                            atanh, deg2rad, erfc, exp2, fmax, fmin, frac, hypot, lerp, logaddexp, logaddexp2, logit,
                            rad2deg, sinc, xlogy, clamp_min, clamp_max, signbit, isposinf, isneginf, isreal,
                            heaviside, floor_divide)
from .ops.rearrange import index_add, nansum, roll, rot90, scatter, trace  # noqa: F401
from .ops.decomposition import svd  # noqa: F401
from .ops.shape import unsafe_chunk, unsafe_split, unsafe_split_with_sizes  # noqa: F401
from .ops.composite import (argsort, atleast_2d, atleast_3d, bincount, bucketize, column_stack, diff,  # noqa: F401
                            dsplit, dstack, float_power, fliplr, flipud, histc, histogram, hsplit, hstack, msort,
                            nanmean, positive, ravel, repeat_interleave, row_stack, searchsorted, take_along_dim,
                            tensor_split, tile, true_divide, unique, vsplit, vstack)
from .ops.composite import range_ as range  # noqa: F401
from ._tensor_methods import install_more as _install_more
from ._api_errors import clean_errors as _clean_errors

_install_more(Tensor, _clean_errors)
from . import func  # noqa: F401,E402  (registers vmap, jacrev, jacfwd with autograd's extension point)

multiply, subtract, divide, negative, absolute = mul, sub, div, neg, abs
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne
arccos, arcsin, arctan, fix, moveaxis = acos, asin, atan, trunc, movedim




def argwhere(input):
    return nonzero(input)
from ._dtype import layout, sparse_coo, strided  # noqa: F401,E402
e, pi, inf, nan = _np.e, _np.pi, _np.inf, _np.nan
__version__ = "0.1.0"


def is_tensor(obj):
    return isinstance(obj, Tensor)


def is_floating_point(input):
    return input.dtype.is_floating_point


def is_complex(input):
    return input.dtype.is_complex


def numel(input):
    return input.numel()


def detach(input):
    return input.detach()


def softmax(input, dim, dtype=None):
    from .ops.nn import softmax as _softmax
    return _softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, dtype=None):
    from .ops.nn import log_softmax as _log_softmax
    return _log_softmax(input, dim, dtype=dtype)


def _take_out():
    """torch's `out=` for the functions that take it (ops/_out.py); the operators (`a * b`) and methods
    (`a.mul(b)`) keep their own functions, which take none (as torch's methods). The factories take it already."""
    from .ops._out import op_out
    g = globals()
    for name in _OUT_FUNCTIONS.split():
        if name in g:
            g[name] = op_out(g[name], name)


_OUT_FUNCTIONS = """
abs absolute acos acosh add addbmm addcdiv addcmul addmm addmv addr all amax amin aminmax angle any arccos arccosh
arcsin arcsinh arctan arctan2 arctanh argmax argmin asin asinh atan atan2 atanh baddbmm bitwise_and bitwise_left_shift
bitwise_not bitwise_or bitwise_right_shift bitwise_xor bmm bucketize cat ceil chain_matmul cholesky cholesky_inverse
cholesky_solve clamp clamp_max clamp_min clip column_stack complex concat concatenate conj_physical copysign cos cosh
cross cummax cummin cumprod cumsum deg2rad diag diff digamma div divide dot dstack eq erf erfc erfinv exp exp2 expm1
fix float_power floor floor_divide index_add index_copy index_reduce orgqr ormqr scatter_reduce lu_solve lu_unpack fmax fmin fmod frac frexp frobenius_norm gather gcd ge geqrf ger greater
greater_equal gt hardshrink heaviside histc histogram hstack hypot i0 igamma igammac index_select inner inverse isin
isneginf isposinf kron kthvalue lcm ldexp le lerp less less_equal lgamma log log10 log1p log2 log_softmax logaddexp
logaddexp2 logcumsumexp logical_and logical_not logical_or logical_xor logit logsumexp lt masked_select matmul
matrix_power max maximum mean median min minimum mm mode msort mul multiply mv mvlgamma nan_to_num nanmean nanmedian
nanquantile nansum ne neg negative nextafter nonzero norm not_equal nuclear_norm outer polar polygamma pow prod qr
quantile rad2deg reciprocal remainder renorm round row_stack rsqrt scatter scatter_add searchsorted sgn sigmoid sign
signbit sin sinc sinh slice_scatter slogdet softmax sort sqrt square stack std sub subtract sum svd take
take_along_dim tan tanh tensordot threshold topk triangular_solve tril triu true_divide trunc var vdot vstack where
xlogy
"""


def _accept_numpy_names():
    from ._tensor_methods import NO_NUMPY_ALIASES, numpy_aliases
    g = globals()
    for name, fn in list(g.items()):
        if callable(fn) and not name.startswith("_") and not isinstance(fn, type) and name not in NO_NUMPY_ALIASES:
            g[name] = numpy_aliases(fn)


_accept_numpy_names()


def __getattr__(name):
    # subpackages that pull in more code are imported on first use
    import importlib
    if name in ("nn", "optim", "func", "testing", "utils", "viz", "cuda", "backends", "accelerator", "random",
                "distributions", "special", "version", "xpu", "profiler", "multiprocessing", "_dynamo",
                "serialization", "distributed", "onnx", "jit", "fft"):
        return importlib.import_module("." + name, __name__)
    if name == "vmap":  # torch.vmap is torch.func.vmap
        return importlib.import_module(".func", __name__).vmap
    raise AttributeError(f"module 'microtorch' has no attribute {name!r}")


# `from microtorch import *` gives the torch-shaped namespace (the submodules nn, optim, func,
# autograd, viz are imported by name); tests/test_packaging.py keeps this list in step.
__all__ = [
    "Generator", "Size", "Tensor", "abs", "absolute", "acos", "acosh", "add", "addcdiv", "addcmul",
    "addmm", "all", "allclose", "amax", "amin", "angle", "any", "arange", "arccos", "arccosh",
    "arcsin", "arcsinh", "arctan", "arctan2", "arctanh", "argmax", "argmin", "argsort", "argwhere",
    "as_tensor", "asin", "asinh", "atan", "atan2", "atanh", "atleast_1d", "atleast_2d",
    "atleast_3d", "bernoulli", "bfloat16", "bincount", "bmm", "bool", "broadcast_to", "bucketize", "cat",
    "cdouble", "ceil", "cfloat", "channels_last", "channels_last_3d", "chunk", "clamp", "clamp_max", "clamp_min",
    "clip", "clone", "contiguous_format", "memory_format", "preserve_format",
    "column_stack", "complex128", "complex64", "concat", "concatenate", "conj", "cos", "cosh",
    "count_nonzero", "cumsum", "deg2rad", "detach", "device", "diag", "diagonal", "diff", "div",
    "divide", "dot", "double", "dsplit", "dstack", "dtype", "e", "einsum", "empty", "empty_like",
    "enable_grad", "eq", "equal", "erf", "erfc", "exp", "exp2", "expm1", "eye", "fix", "flatten",
    "flip", "fliplr", "flipud", "float", "float16", "float32", "float64", "float_power", "floor",
    "floor_divide", "fmax", "fmin", "fmod", "frac", "from_numpy", "full", "full_like", "gather",
    "ge", "ger", "get_default_device", "get_default_dtype", "get_rng_state", "greater", "greater_equal", "gt", "half",
    "heaviside", "histc", "histogram", "hsplit", "hstack", "hypot", "imag", "index_add",
    "index_select", "inf", "inference_mode", "initial_seed", "int", "int16", "int32", "int64",
    "int8", "is_anomaly_check_nan_enabled", "is_anomaly_enabled", "is_complex", "is_floating_point",
    "is_grad_enabled", "is_inference_mode_enabled", "is_tensor", "isclose", "isfinite", "isinf",
    "isnan", "isneginf", "isposinf", "isreal", "le", "lerp", "less", "less_equal", "linspace",
    "load", "log", "log10", "log1p", "log2", "log_softmax", "logaddexp", "logaddexp2",
    "logical_and", "logical_not", "logical_or", "logical_xor", "logit", "logspace", "logsumexp",
    "long", "lt", "manual_seed", "masked_fill", "masked_select", "matmul", "max", "maximum", "mean",
    "meshgrid", "min", "minimum", "mm", "moveaxis", "movedim", "msort", "mul", "multinomial",
    "multiply", "mv", "nan", "nanmean", "nansum", "narrow", "ne", "neg", "negative", "no_grad",
    "nonzero", "norm", "normal", "not_equal", "numel", "ones", "ones_like", "outer", "permute",
    "pi", "positive", "pow", "prod", "promote_types", "rad2deg", "rand", "rand_like", "randint",
    "randint_like", "randn", "randn_like", "randperm", "range", "ravel", "real", "reciprocal",
    "relu", "remainder", "repeat", "repeat_interleave", "reshape", "result_type", "roll", "rot90",
    "round", "row_stack", "rsqrt", "save", "scatter", "searchsorted", "seed", "select",
    "set_default_device", "set_default_dtype", "set_grad_enabled", "set_printoptions", "set_rng_state", "sgn", "short",
    "sigmoid", "sign", "signbit", "sin", "sinc", "sinh", "softmax", "sort", "split", "sqrt",
    "square", "squeeze", "stack", "std", "strided", "sub", "subtract", "sum", "swapaxes",
    "swapdims", "t", "take", "take_along_dim", "tan", "tanh", "tensor", "tensor_split", "tile",
    "topk", "trace", "transpose", "tril", "triu", "true_divide", "trunc", "uint8", "unbind",
    "unflatten", "unique", "unsqueeze", "var", "vmap", "vsplit", "vstack", "where", "xlogy",
    "zeros", "zeros_like",
    # process-wide switches (_runtime.py, amp.py)
    "autocast", "is_autocast_enabled", "are_deterministic_algorithms_enabled", "compile", "get_float32_matmul_precision", "get_num_interop_threads",
    "get_num_threads", "is_deterministic_algorithms_warn_only_enabled", "set_float32_matmul_precision",
    "set_num_interop_threads", "set_num_threads", "use_deterministic_algorithms",
]
__all__ += [n for n in ("argwhere", "clamp_max", "clamp_min", "floor_divide", "heaviside", "isneginf", "isposinf",
                       "isreal", "signbit", "svd") if n not in __all__]  # (issue 13)
__all__ += ["unsafe_chunk", "unsafe_split", "unsafe_split_with_sizes"]

from ._api_errors import clean_namespace as _clean_namespace  # noqa: E402
_clean_namespace(globals(), [  # the API added for issue 13
    "acosh", "addcdiv", "addcmul", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh",
    "argsort", "asinh", "atan2", "atanh", "atleast_2d", "atleast_3d", "bincount", "bucketize", "column_stack",
    "deg2rad", "diff", "dsplit", "dstack", "erfc", "exp2", "fix", "fliplr", "flipud", "float_power", "fmax", "fmin",
    "frac", "histc", "histogram", "hsplit", "hstack", "hypot", "index_add", "lerp", "logaddexp", "logaddexp2",
    "logit", "moveaxis", "msort", "nanmean", "nansum", "positive", "rad2deg", "range", "ravel", "repeat_interleave",
    "roll", "rot90", "row_stack", "scatter", "searchsorted", "sinc", "take_along_dim", "tensor_split", "tile",
    "trace", "unique", "vsplit", "vstack", "xlogy", "clamp_min", "clamp_max", "signbit", "isposinf", "isneginf",
    "isreal", "heaviside", "floor_divide", "argwhere", "svd"])
# optim (issue 13): the losses and distances of torch's own namespace (ATen's signatures, int reduction)
_LOSSES = ["binary_cross_entropy_with_logits", "cdist", "cosine_embedding_loss", "cosine_similarity",
           "hinge_embedding_loss", "kl_div", "margin_ranking_loss", "pairwise_distance", "poisson_nll_loss",
           "triplet_margin_loss", "pdist", "ctc_loss"]
from .ops.loss_aten import (binary_cross_entropy_with_logits, cdist, cosine_embedding_loss,  # noqa: E402,F401
                            cosine_similarity, hinge_embedding_loss, kl_div, margin_ranking_loss, pairwise_distance,
                            pdist, poisson_nll_loss, triplet_margin_loss, ctc_loss)
__all__ += _LOSSES
_clean_namespace(globals(), _LOSSES)
from ._tensor_methods import with_float_operators as _with_float_operators  # noqa: E402
from .ops._checks import guard_class as _guard_class, guard_namespace as _guard_namespace  # noqa: E402
_guard_namespace(globals())  # an argument of the wrong type raises torch's TypeError (see ops/_checks.py)
_guard_class(Tensor)
_with_float_operators(Tensor)
from ._deprecated_overloads import install as _install_deprecated_overloads  # noqa: E402
_install_deprecated_overloads(Tensor, globals())  # p.add_(-lr, grad): torch's number-first order, with its warning


def _add_new_ops():
    """torch.cumprod, torch.det, ...: the functions of the op modules added for issue 13 (round 2)."""
    from ._tensor_methods import NEW_OPS
    from .ops import bitwise, index_more, linalg_more, misc_more, order, scan, special, spectral, strided
    from .ops._api_args import checked
    mods = {"scan": scan, "order": order, "la": linalg_more, "sp": special, "bitwise": bitwise, "im": index_more,
            "mm": misc_more, "spectral": spectral, "strided": strided}
    names = [n for mod, ns in NEW_OPS.items() for n in ns]
    g = globals()
    for mod, ns in NEW_OPS.items():
        for n in ns:
            g[n] = _numpy_aliases(checked(getattr(mods[mod], n), n))
    g["polygamma"] = checked(special.polygamma, "polygamma")
    g["conj_physical"] = spectral.conj_physical  # (its own node, ConjPhysicalBackward0, as torch's)
    g["empty_strided"] = strided.empty_strided
    names += ["polygamma", "conj_physical", "empty_strided"]
    __all__.extend(n for n in names if n not in __all__)
    _clean_namespace(g, names)
    _guard_namespace(g, [n for n in names if n != "unique_consecutive"])  # (it checks its arguments as torch's)
    return names


from ._tensor_methods import numpy_aliases as _numpy_aliases  # noqa: E402
_NEW_OPS = _add_new_ops()

from ._torch_aliases import install as _install_aliases  # noqa: E402
_install_aliases(globals(), Tensor)  # linalg (issue 13): decompositions, solves, torch.* aliases of nn ops

_take_out()  # (last: outside every wrapper above, which check arguments against the op's own parameters)

# torch's legacy typed-tensor classes (FloatTensor(data), x.type(LongTensor), isinstance(x, FloatTensor))
from ._legacy_tensor_types import (BoolTensor, ByteTensor, CharTensor, DoubleTensor, FloatTensor,  # noqa: E402
                                   HalfTensor, IntTensor, LongTensor, ShortTensor, set_default_tensor_type)
__all__ += ["BoolTensor", "ByteTensor", "CharTensor", "DoubleTensor", "FloatTensor", "HalfTensor", "IntTensor",
            "LongTensor", "ShortTensor", "set_default_tensor_type"]
from ._storage import install as _install_storage; _install_storage(Tensor, globals())  # noqa: E402,E702
from . import sparse  # noqa: E402,F401  (sparse COO tensors: last, once Tensor has all the methods it refuses)
from . import _torch_function  # noqa: E402,F401  (a user's Tensor subclass dispatches as torch's __torch_function__)
sparse.install(globals())
__all__ += ["layout", "sparse_coo", "sparse_coo_tensor", "spmm"]
