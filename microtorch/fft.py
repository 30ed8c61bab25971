"""torch.fft: discrete Fourier transforms (fft, rfft, hfft and their inverses, in 1, 2 and n dims), the sample
frequencies (fftfreq, rfftfreq) and the spectrum's recentring (fftshift, ifftshift).

Every transform is one of three ops (ops/spectral.py, ops/spectral_inverse.py), chosen as torch chooses: FftR2C
for a real input, FftC2C for a complex one, FftC2R for a Hermitian spectrum back to real values. Around them are
the steps torch's graph shows too: a real input made complex (`to`), the signal cut (`narrow`) or padded with
zeros (`pad`) to the requested length, and a conjugate where an inverse is computed as a conjugated forward
transform (ifft and ihfft of a real input, hfft). `norm` picks the scale: "backward" (the default) divides the
inverse by n, "forward" the forward transform, "ortho" both by sqrt(n)."""
import functools
import inspect

import numpy as np

import microtorch as _mt

from .ops._checks import _element_error, guard as _guard
from .ops._out import write_out as _write_out
from .ops.elementwise import conj as _conj
from .ops.inplace import _type_name
from .ops.rearrange import roll as _roll
from .ops.pad import pad as _pad
from .ops.spectral import FftC2C, FftR2C, conj_physical as _conj_physical
from .ops.spectral_inverse import FftC2R

Tensor = _mt.Tensor  # (torch.fft names it too)
_ONE_DIM = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2",
           "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]


# ---- the arguments, checked as torch checks them ----
def _dtype_name(x):
    return {_mt.float16: "Half", _mt.bfloat16: "BFloat16"}.get(x.dtype) or _type_name(x._data.dtype)


def _promote(x, require_complex):
    """integers and bools become the default float dtype (as torch, which has no FFT of them), half precision is
    refused, and a real x becomes complex where the transform wants a complex input"""
    if x.dtype in (_mt.float16, _mt.bfloat16):
        raise RuntimeError(f"Unsupported dtype {_dtype_name(x)}")
    if not (x.is_floating_point() or x.is_complex()):
        x = x.to(_mt.get_default_dtype())
    if require_complex and not x.is_complex():
        x = x.to(_mt.complex128 if x.dtype == _mt.float64 else _mt.complex64)
    return x


def _wrap(dim, ndim):
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {dim})")
    return dim % ndim


def _points(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return n


def _norm(norm, forward):
    """torch's normalization code for a direction: 0 none, 1 by sqrt(n), 2 by n"""
    if norm is None or norm == "backward":
        return 0 if forward else 2
    if norm == "forward":
        return 2 if forward else 0
    if norm == "ortho":
        return 1
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _resize(x, dims, sizes):
    """x cut (one narrow per dim, in the dims' order) or padded with zeros (one pad for all) to sizes"""
    padded = {}
    for d, n in zip(dims, sizes):
        if x.shape[d] > n:
            x = x.narrow(d, 0, n)
        elif x.shape[d] < n:
            padded[d] = n - x.shape[d]
    if padded:
        widths = [0] * (2 * x.ndim)
        for d, missing in padded.items():
            widths[2 * (x.ndim - 1 - d) + 1] = missing
        x = _pad(x, tuple(widths))
    return x


def _nonempty(x):
    """torch's FFT library refuses an empty batch of signals (each signal has at least one point by now)"""
    if x.numel() == 0:
        raise RuntimeError("MKL FFT error: Intel oneMKL DFTI ERROR: Inconsistent configuration parameters "
                           "(microtorch: an FFT of a tensor with no elements; give every dim at least one element)")
    return x


def _shape_and_dims(x, s, dim):
    """the dims transformed and the signal size along each (torch's rules: s alone means its last len(s) dims,
    neither means all dims, -1 in s keeps that dim's size)"""
    ndim = x.ndim
    dims = None
    if dim is not None:
        dims = [_wrap(d, ndim) for d in ((dim,) if isinstance(dim, int) else dim)]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = (s,) if isinstance(s, int) else tuple(s)
        if dims is not None and len(dims) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {ndim} dimensions.")
        dims = list(range(ndim - len(s), ndim)) if dims is None else dims
        shape = [x.shape[d] if n == -1 else n for d, n in zip(dims, s)]
    else:
        dims = list(range(ndim)) if dims is None else dims
        shape = [x.shape[d] for d in dims]
    for n in shape:
        _points(n)
    return dims, shape


def _c2r_shape_and_dims(fname, x, s, dim):
    """as _shape_and_dims, and the output's length along the last dim: the input holds its n // 2 + 1 bins"""
    dims, shape = _shape_and_dims(x, s, dim)
    if not dims:
        raise RuntimeError(f"{fname} must transform at least one axis")
    last = 2 * (x.shape[dims[-1]] - 1) if s is None or (s if isinstance(s, int) else s[-1]) == -1 else shape[-1]
    shape[-1] = _points(last) // 2 + 1
    return dims, shape, last


def _out(fname, result, out, inputs):
    """out=: a complex out for a complex result, a floating one for a real result"""
    if out is None:
        return result
    if result.is_complex() and not out.is_complex():
        raise RuntimeError(f"{fname} expects a complex output tensor, but got {_dtype_name(out)}")
    if not result.is_complex() and not out.is_floating_point():
        raise RuntimeError(f"{fname} expects a floating point output tensor, but got {_dtype_name(out)}")
    if result.grad_fn is not None:  # (torch's refusal to record names the kernel that would write into out)
        fname = _KERNELS.get(result.grad_fn.name(), fname)
    return _write_out(out, result, fname, inputs)


_KERNELS = {"FftR2CBackward0": "_fft_r2c", "FftC2CBackward0": "_fft_c2c", "FftC2RBackward0": "_fft_c2r",
            "ConjBackward0": "conj_physical"}


# ---- one dim ----
def _c2c(x, n, dim, norm, forward):
    dim = _wrap(dim, x.ndim)
    x = _resize(x, (dim,), (_points(n),)) if n is not None else x
    _points(x.shape[dim])
    return FftC2C.apply(_nonempty(x), (dim,), _norm(norm, forward), forward)


def _r2c(fname, x, n, dim, norm, forward, onesided):
    """a real x's transform (the conjugate of the forward one for an inverse)"""
    if x.is_complex():
        raise RuntimeError(f"{fname} expects a real input tensor, but got {_dtype_name(x)}")
    x = _promote(x, False)
    dim = _wrap(dim, x.ndim)
    x = x if n is None else _resize(x, (dim,), (_points(n),))
    _points(x.shape[dim])
    y = FftR2C.apply(_nonempty(x), (dim,), _norm(norm, forward), onesided)
    return y if forward else _conj(y)


def _c2r(x, n, dim, norm, forward):
    """a Hermitian spectrum's real signal of n points (hfft: of the conjugate spectrum, scaled as a forward one)"""
    x = _promote(x, True)
    dim = _wrap(dim, x.ndim)
    given, n = n is not None, _points(2 * (x.shape[dim] - 1) if n is None else n)
    x = _resize(x, (dim,), (n // 2 + 1,)) if given else x
    normalization = _norm(norm, forward)
    return FftC2R.apply(_nonempty(_conj(x) if forward else x), (dim,), normalization, n)


def fft(input, n=None, dim=-1, norm=None, *, out=None):
    """the discrete Fourier transform along dim: y[k] = sum_j x[j] exp(-2 pi i j k / n)"""
    y = _c2c(input, n, dim, norm, True) if input.is_complex() else _r2c("fft", input, n, dim, norm, True, False)
    return _out("fft", y, out, (input,))


def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    """the inverse transform along dim: x[j] = (1/n) sum_k y[k] exp(2 pi i j k / n)"""
    y = _c2c(input, n, dim, norm, False) if input.is_complex() else _r2c("ifft", input, n, dim, norm, False, False)
    return _out("ifft", y, out, (input,))


def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    """the transform of a real signal, its n // 2 + 1 non-negative frequencies (the rest are their conjugates)"""
    return _out("rfft", _r2c("rfft", input, n, dim, norm, True, True), out, (input,))


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """the real signal of n points (2 (bins - 1) by default) whose rfft is input"""
    return _out("irfft", _c2r(input, n, dim, norm, False), out, (input,))


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """the transform of a signal with Hermitian symmetry given by its first half: real, n points"""
    return _out("hfft", _c2r(input, n, dim, norm, True), out, (input,))


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    """the inverse of hfft: a real signal's inverse transform, its n // 2 + 1 non-negative frequencies"""
    return _out("ihfft", _r2c("ihfft", input, n, dim, norm, False, True), out, (input,))


# ---- several dims ----
def _fftn_c2c(fname, x, s, dim, norm, forward, out):
    dims, shape = _shape_and_dims(x, s, dim)
    y = FftC2C.apply(_nonempty(_resize(_promote(x, True), dims, shape)), dims, _norm(norm, forward), forward)
    return _out(fname, y, out, (x,))


def _rfftn(x, s, dim, norm, out):
    if x.is_complex():
        raise RuntimeError(f"rfftn expects a real-valued input tensor, but got {_dtype_name(x)}")
    dims, shape = _shape_and_dims(x, s, dim)
    if not dims:
        raise RuntimeError("rfftn must transform at least one axis")
    y = FftR2C.apply(_nonempty(_resize(_promote(x, False), dims, shape)), dims, _norm(norm, True), True)
    return _out("rfftn", y, out, (x,))


def _irfftn(x, s, dim, norm, out):
    dims, shape, last = _c2r_shape_and_dims("irfftn", x, s, dim)
    y = FftC2R.apply(_nonempty(_resize(_promote(x, True), dims, shape)), dims, _norm(norm, False), last)
    return _out("irfftn", y, out, (x,))


def _hfftn(x, s, dim, norm, out):
    """the other dims transformed forward, then the conjugate's real inverse along the last"""
    dims, shape, last = _c2r_shape_and_dims("hfftn", x, s, dim)
    y = _nonempty(_resize(_promote(x, True), dims, shape))
    normalization = _norm(norm, True)
    if len(dims) > 1:
        y = FftC2C.apply(y, dims[:-1], normalization, True)
    return _out("hfftn", FftC2R.apply(_conj(y), dims[-1:], normalization, last), out, (x,))


def _ihfftn(x, s, dim, norm, out):
    """the last dim's onesided transform conjugated, then the other dims' inverse transform"""
    dims, shape = _shape_and_dims(x, s, dim)
    if not dims:
        raise RuntimeError("ihfftn must transform at least one axis")
    if x.is_complex():
        raise RuntimeError(f"Only supports floating-point dtypes, but found: {_dtype_name(x)}")
    normalization = _norm(norm, False)
    y = FftR2C.apply(_nonempty(_resize(_promote(x, False), dims, shape)), dims[-1:], normalization, True)
    if len(dims) == 1:
        return _out("ihfftn", _conj(y), out, (x,))
    y = FftC2C.apply(_conj_physical(y), dims[:-1], normalization, False)
    return _out("ihfftn", y, out, (x,))


def fftn(input, s=None, dim=None, norm=None, *, out=None):
    """the transform over dims (all of them by default, or the last len(s)), s the signal size along each"""
    return _fftn_c2c("fftn", input, s, dim, norm, True, out)


def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    return _fftn_c2c("ifftn", input, s, dim, norm, False, out)


def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    """a real input's transform over dims, the last dim's n // 2 + 1 non-negative frequencies"""
    return _rfftn(input, s, dim, norm, out)


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    """the real signal whose rfftn is input (the last dim's length 2 (bins - 1) unless s gives it)"""
    return _irfftn(input, s, dim, norm, out)


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    return _hfftn(input, s, dim, norm, out)


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    return _ihfftn(input, s, dim, norm, out)


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _fftn_c2c("fftn", input, s, dim, norm, True, out)


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _fftn_c2c("ifftn", input, s, dim, norm, False, out)


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _rfftn(input, s, dim, norm, out)


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _irfftn(input, s, dim, norm, out)


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _hfftn(input, s, dim, norm, out)


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _ihfftn(input, s, dim, norm, out)


# ---- frequencies and shifts ----
def _frequencies(fname, k, n, d, out, dtype, device, requires_grad):
    """k / (n d), computed as torch: k in the dtype times the one factor 1 / (n d) rounded to it"""
    dtype = (out.dtype if out is not None else _mt.get_default_dtype()) if dtype is None else dtype
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"{fname} requires a floating point or complex dtype")
    if dtype.is_complex:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{_type_name(dtype.np)}'")
    if not isinstance(d, (int, float, _mt.Tensor)):
        raise TypeError(f"fft_{fname}(): argument 'd' must be float, not {type(d).__name__}")
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    factor = np.float64(1.0) / np.float64(n * float(d))  # (n d = 0: inf, as in torch)
    compute = np.float64 if dtype == _mt.float64 else np.float32  # (half precision: computed in float)
    values = (k.astype(compute) * compute(factor.astype(dtype.np))).astype(dtype.np)
    result = _mt.tensor(values, dtype=dtype, device=device)
    if out is not None:
        return _write_out(out, result, fname)
    return result.requires_grad_() if requires_grad else result


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """the frequencies of fft's bins for n samples d apart: 0, 1, ..., then the negative ones, over n d"""
    k = np.concatenate([np.arange((n + 1) // 2), np.arange(-(n // 2), 0)]) if n >= 0 else np.arange(0)
    return _frequencies("fftfreq", k, n, d, out, dtype, device, requires_grad)


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """the frequencies of rfft's n // 2 + 1 bins: 0, 1, ..., n // 2 over n d"""
    return _frequencies("rfftfreq", np.arange(n // 2 + 1 if n >= 0 else 0), n, d, out, dtype, device,
                        requires_grad)


def _rolled(input, dim, shift):
    dims = list(range(input.ndim)) if dim is None else [
        _wrap(d, input.ndim) for d in ((dim,) if isinstance(dim, int) else dim)]
    if not dims:
        raise RuntimeError("`shifts` required")
    return _roll(input, tuple(shift(input.shape[d]) for d in dims), tuple(dims))


def fftshift(input, dim=None):
    """the zero frequency moved to the centre: each dim rolled by half its length"""
    return _rolled(input, dim, lambda n: n // 2)


def ifftshift(input, dim=None):
    """fftshift undone: each dim rolled by (n + 1) // 2"""
    return _rolled(input, dim, lambda n: (n + 1) // 2)


# ---- torch's TypeError for an argument of the wrong type (its position named only when given by position) ----
def _is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _type_error(op, name, where, kind, v):
    if kind == "ints" and isinstance(v, (list, tuple)) and (not v or _is_int(v[0])):  # (a bad first element: the
        return None if all(_is_int(e) for e in v) else _element_error(op, name, where, v)  # list's type is named)
    fits = {"int": _is_int(v), "ints": _is_int(v), "str": isinstance(v, str),
            "float": isinstance(v, (int, float, _mt.Tensor))}[kind]
    want = {"int": "int", "ints": "tuple of ints", "str": "str", "float": "float"}[kind]
    return None if fits else TypeError(f"{op}(): argument '{name}'{where} must be {want}, not {type(v).__name__}")


def _checked(fn, kinds):
    """fn with its number, dims, sizes and norm arguments checked first (the tensor by guard)"""
    op, params = "fft_" + fn.__name__, list(inspect.signature(fn).parameters)
    guarded = _guard(fn, op=op, overrides={name: None for name in kinds})

    @functools.wraps(fn)
    def checked(*args, **kwargs):
        given = [(n, v, f" (position {i + 1})") for i, (n, v) in enumerate(zip(params, args))]
        for name, v, where in given + [(n, v, "") for n, v in kwargs.items()]:
            kind = kinds.get(name)
            err = kind and (v is not None or name == "dim" and kind == "int") and _type_error(op, name, where, kind, v)
            if err:
                raise err
        return guarded(*args, **kwargs)
    return checked


for _name in __all__:
    globals()[_name] = _checked(globals()[_name], {"n": "int", "dim": "int", "norm": "str"} if _name in _ONE_DIM
                                else {"d": "float"} if _name.endswith("freq") else {"s": "ints", "dim": "ints",
                                                                                       "norm": "str"})
