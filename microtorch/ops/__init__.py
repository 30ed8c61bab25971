"""The differentiable primitives, grouped by family. Each op is a `Function` subclass with
forward (numpy) and backward (Tensor ops) side by side; the functions here build them.

Tensor sits below the ops, so the ops give it its operators and op methods when they load."""
from .._tensor import Tensor
from .elementwise import (abs, acos, add, angle, asin, atan, clamp, clip, conj, cos, cosh, div, elu, erf, exp, expm1,  # noqa: F401
                          gelu, imag, leaky_relu, log, log1p, log2, log10, maximum, minimum, mul, neg, pow, real,
                          reciprocal, relu, rsqrt, rsub, sgn, sigmoid, sign, sin, sinh, softplus, sqrt, square,
                          sub, tan, tanh, where)
from .index import (gather, getitem, index_select, masked_fill, masked_select, select,  # noqa: F401
                    take)
from .einsum import einsum  # noqa: F401
from .linalg import addmm, bmm, dot, ger, matmul, mm, mv, outer  # noqa: F401
from .misc import (ceil, cumsum, div_rounded, floor, fmod, nonzero, remainder, round_, sort, to_dtype,  # noqa: F401
                   topk, trunc)
from .reduce import (all, allclose, amax, amin, any, argmax, argmin, count_nonzero, eq, equal, ge, gt,  # noqa: F401
                     isclose, isfinite, isinf, isnan, le, logical_and, logical_not, logical_or, logical_xor,
                     logsumexp, lt, max, mean, min, ne, norm, prod, std, sum, var, vector_norm)
from .shape import (atleast_1d, broadcast_to, cat, chunk, clone, concat, concatenate, diagonal, expand,  # noqa: F401
                    expand_as, flatten, flip, movedim, mT, H, narrow, numpy_T, permute, repeat, reshape, split, squeeze,
                    stack, sum_to, sum_to_size, swapaxes, swapdims, t, transpose, unbind, unflatten, unsqueeze, view,
                    unsafe_chunk, unsafe_split, unsafe_split_with_sizes)
from . import inplace
from ._memory_formats import contiguous_format, is_laid_out, preserve_format
from .. import _tensor_methods


def _clone(self, *, memory_format=preserve_format):
    return clone(self, memory_format=memory_format)


def _contiguous(self, *, memory_format=contiguous_format):
    """self when it is laid out in that memory format already (C order by default), else a copy that is (torch's
    CloneBackward0)"""
    return self if is_laid_out(self._data, memory_format) else clone(self, memory_format=memory_format)


def _is_contiguous(self, *, memory_format=contiguous_format):
    return is_laid_out(self._data, memory_format)


def _install(cls):
    _tensor_methods.install(cls)   # +, *, sum, exp, ...: one-line calls into the ops
    inplace.install(cls)           # add_, mul_, x[i] = v, ...
    cls.clone = _clone
    cls.contiguous = _contiguous
    cls.is_contiguous = _is_contiguous
    cls._to_dtype = to_dtype


_install(Tensor)
