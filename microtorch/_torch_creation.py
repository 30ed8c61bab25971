"""torch's creation functions that microtorch lacked: the window functions (hann, hamming, blackman, bartlett,
kaiser), scalar_tensor, asarray, empty_permuted, tril/triu_indices, the binomial and Poisson samplers, and
torch.default_generator with the namespace's constants."""
import math

import numpy as np

from . import _random
from ._dtype import get_default_dtype
from ._fma import fma
from ._tensor import Tensor, _made_leaf, placement, tensor
from .ops.special_bessel import i0_values


def _default(dtype):
    return dtype if dtype is not None else get_default_dtype()


def _finish(values, dtype, requires_grad, device=None):
    out = Tensor._make(np.ascontiguousarray(values).astype(_default(dtype).np))
    device = placement(device)  # (None: the default device, which is the CPU unless set otherwise)
    if device is not None:
        out = out.to(device)
    if requires_grad:  # (the attribute: requires_grad_() is refused inside a torch.func transform)
        out.requires_grad = True
        _made_leaf(out)
    return out


# ---- windows: torch's steps, each rounded to the window's dtype (float16 computes in float, then rounds): arange
# of N = length + 1 (periodic) or length values, scaled by a double constant, then cos etc.; the first length kept.
# A number in an in-place step (mul_, add_) is first rounded to the dtype (float16: to half), in an out-of-place one
# to the dtype it is computed in.
def _window(name, window_length, periodic, fn, dtype, requires_grad, device):
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    if not _default(dtype).is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")
    if window_length <= 1:
        return _finish(np.ones(window_length), dtype, requires_grad, device)
    n = window_length + 1 if periodic else window_length
    kept = np.dtype(_default(dtype).np)
    computed = np.float32 if kept == np.float16 else kept.type

    def rounded(v):  # (one step's result in the dtype, back in the type it is computed in)
        return np.asarray(v).astype(kept).astype(computed)

    def in_place(number):
        return computed(kept.type(number))
    return _finish(fn(rounded(np.arange(n)), n, rounded, in_place)[:window_length], dtype, requires_grad, device)


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                requires_grad=False):
    return _window("hann_window", window_length, periodic, _cosine_sum(0.5, 0.5), dtype, requires_grad, device)


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   pin_memory=False, requires_grad=False):
    return _window("hamming_window", window_length, periodic, _cosine_sum(alpha, beta), dtype, requires_grad, device)


def _cosine_sum(alpha, beta):
    def fn(x, n, rounded, in_place):  # alpha - beta cos(2 pi k / (n - 1)), as cos(...) * -beta + alpha
        angle = rounded(x * in_place(math.pi * 2.0 / (n - 1)))
        return rounded(rounded(rounded(np.cos(angle)) * in_place(-beta)) + in_place(alpha))
    return fn


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    def fn(x, n, rounded, in_place):  # x = k pi / (n - 1); cos(4x) 0.08 - cos(2x) 0.5 + 0.42
        t, x = x.dtype.type, rounded(x * in_place(math.pi / (n - 1)))
        cos4, cos2 = (rounded(np.cos(rounded(x * t(k)))) for k in (4, 2))
        return rounded(rounded(rounded(cos4 * in_place(0.08)) - rounded(cos2 * in_place(0.5))) + t(0.42))
    return _window("blackman_window", window_length, periodic, fn, dtype, requires_grad, device)


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    def fn(x, n, rounded, in_place):  # 2k / (n - 1) rising, then 2 - 2k / (n - 1) from the middle on
        x = rounded(x * in_place(2.0 / (n - 1)))
        middle = ((n - 1) >> 1) + 1
        x[middle:] = rounded(rounded(-x[middle:]) + in_place(2))
        return x
    return _window("bartlett_window", window_length, periodic, fn, dtype, requires_grad, device)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  pin_memory=False, requires_grad=False):
    def fn(x, n, rounded, in_place):  # I0(beta sqrt(|1 - ((k - a) / a)^2|)) / I0(beta), a = (n - 1) / 2, one step
        t = x.dtype.type
        alpha, b = t((n - 1) / 2.0), t(beta)
        ratio = (x - alpha) / alpha
        inside = fma(-ratio, ratio, np.ones_like(ratio))  # (1 - ratio^2 in one fused instruction, as torch's)
        return rounded(i0_values(b * np.sqrt(np.abs(inside))) / i0_values(np.asarray(b)))
    return _window("kaiser_window", window_length, periodic, fn, dtype, requires_grad, device)


# ---- creation and sampling -------------------------------------------------------------------------------------
def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
    if isinstance(s, Tensor) and s.requires_grad:  # (torch reads s as a Number: a graph cannot be cut silently)
        raise TypeError("scalar_tensor(): argument 's' (position 1) must be Number, not Tensor (it requires grad: "
                        "pass s.item())")
    return tensor(s, dtype=_default(dtype), requires_grad=requires_grad)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=None):
    """obj as a tensor, sharing its data when no copy or cast is needed (copy=True forces one)"""
    from ._tensor import as_tensor
    if obj is None or callable(obj) and not isinstance(obj, (Tensor, np.ndarray)):
        raise RuntimeError(f"asarray(): Could not infer dtype of {type(obj).__name__}")
    if isinstance(obj, (list, tuple)) and any(isinstance(t, str) for t in obj):
        raise TypeError("asarray(): new(): invalid data type 'str'")
    if isinstance(obj, (list, tuple)) and any(isinstance(t, Tensor) and t.numel() != 1 for t in obj):
        raise ValueError("asarray(): only one element tensors can be converted to Python scalars")
    if isinstance(obj, Tensor):
        if obj.requires_grad and dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise RuntimeError(f"asarray(): Only Tensors of floating point and complex dtype can require gradients "
                               f"(obj requires grad, dtype={dtype}); pass obj.detach()")
        out = obj if dtype is None or dtype == obj.dtype else obj.to(dtype)
        out = out.clone() if copy and out is obj else out
    elif copy is False and not isinstance(obj, np.ndarray):
        raise ValueError("asarray(): can't alias a Python sequence (copy=False); pass copy=None or True")
    else:
        out = as_tensor(np.array(obj, copy=True) if copy else obj, dtype=dtype)
    if requires_grad:  # (the attribute: requires_grad_() is refused inside a torch.func transform)
        out.requires_grad = True
        _made_leaf(out)
    return out


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None, requires_grad=False,
                   pin_memory=False):
    """an uninitialized tensor of `size` (the physical order of dims is a memory layout numpy keeps to itself)"""
    if sorted(physical_layout) != list(range(len(size))):
        raise RuntimeError(f"empty_permuted: physical_layout {list(physical_layout)} must be a permutation of the "
                           f"dims 0..{len(size) - 1}")
    return _finish(np.zeros(tuple(size)), dtype, requires_grad, device)


def _indices(op, fn, row, col, offset, dtype, device, requires_grad):
    from . import _dtype
    from ._creation import _placed
    from .ops._kernels import _NAMES
    dt = _dtype.to_dtype(dtype) if dtype is not None else _dtype.int64
    if dt not in (_dtype.int32, _dtype.int64):  # torch has kernels for these two only
        raise NotImplementedError(f'"{op}" not implemented for \'{_NAMES.get(dt.name, dt.name)}\': indices are '
                                  "int64 (the default) or int32")
    for name, n in (("row", row), ("col", col)):
        if n < 0:
            raise RuntimeError(f"{op}(): {name} must be non-negative, got {n}")
    r, c = fn(row, offset, col)
    out = Tensor._make(np.stack([r, c]).astype(dt.np))
    return _placed(out, device, requires_grad)  # (requires_grad: an integer tensor refuses, as in torch)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None, pin_memory=False,
                 requires_grad=False):
    """the (row, column) indices of the lower triangle of a row x col matrix, as a 2 x N tensor"""
    return _indices("tril_indices", np.tril_indices, row, col, offset, dtype, device, requires_grad)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None, pin_memory=False,
                 requires_grad=False):
    return _indices("triu_indices", np.triu_indices, row, col, offset, dtype, device, requires_grad)


def binomial(count, prob, generator=None):
    """draws of Binomial(count, prob), elementwise, in count's dtype"""
    from .ops._op import broadcast_error
    _check_generator("binomial", generator, 3)
    for name, t in (("count", count), ("prob", prob)):
        if not t.is_floating_point():
            raise ValueError(f"binomial only supports floating-point dtypes for {name}, got: {t.dtype}")
    if prob.dtype != count.dtype:
        raise RuntimeError(f"binomial(): Found dtype {prob.dtype} but expected {count.dtype} (prob must have "
                           "count's dtype)")
    try:
        c, p = np.broadcast_arrays(count._data, prob._data)
    except ValueError as e:
        raise broadcast_error("binomial", e, count, prob) from None
    # torch's rules before sampling: 0 for a count or a probability <= 0, the count for a probability >= 1, NaN for
    # a NaN probability; the sampler draws only for the rest. (An infinite count between: NaN here, where torch's
    # sampler gives inf or NaN as its draws fall; a NaN count: NaN, where torch's loops forever.)
    sampled = ~np.isnan(c) & (p > 0) & (p < 1)  # (an infinite count is sampled, as torch: inf or NaN)
    fixed = np.where(np.isnan(p), np.nan, np.where((c <= 0) | (p <= 0), 0.0, np.where(p >= 1, c, np.nan)))
    draws = _random._rng(generator).torch_binomial(np.where(sampled, c, 0), np.where(sampled, p, 0))
    return Tensor._make(np.where(sampled & (c > 0), draws, fixed).astype(count._data.dtype))


def poisson(input, generator=None):
    """draws of Poisson(rate = input), elementwise"""
    _check_generator("poisson", generator, 2)
    if not input.is_floating_point():
        raise NotImplementedError(f'"poisson_cpu" not implemented for \'{input.dtype}\'; convert the rates with '
                                  ".float()")
    rate = input._data
    if (rate < 0).any():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative (poisson)")
    ok = np.isfinite(rate) & (rate >= 0)
    draws = _random._rng(generator).torch_poisson(np.where(ok, rate, 0))  # (torch's draws, in order)
    return Tensor._make(np.where(ok, draws, np.nan).astype(input._data.dtype))


def _check_generator(op, generator, position):
    if generator is not None and not isinstance(generator, _random.Generator):
        raise TypeError(f"{op}(): argument 'generator' (position {position}) must be Generator, not "
                        f"{type(generator).__name__}")


class _DefaultGenerator(_random.Generator):
    """torch.default_generator: the global stream that manual_seed reseeds, as a Generator object"""

    def __init__(self):
        self.device = "cpu"

    rng = property(lambda self: _random._gen[0])
    manual_seed = staticmethod(lambda seed: (_random.manual_seed(seed), default_generator)[1])
    initial_seed = staticmethod(_random.initial_seed)
    seed = staticmethod(_random.seed)


default_generator = _DefaultGenerator()


newaxis = None
has_lapack, has_spectral, has_mkl = True, True, False  # (numpy's LAPACK and FFT; no MKL build of torch's here)


FUNCTIONS = ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window", "scalar_tensor",
             "asarray", "empty_permuted", "tril_indices", "triu_indices", "binomial", "poisson"]
CONSTANTS = ["default_generator", "newaxis", "has_lapack", "has_spectral", "has_mkl"]
