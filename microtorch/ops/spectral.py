"""The short-time Fourier transform, `stft`, as torch computes it: pad, cut into frames, window, FFT; and the
FFT ops themselves, which torch.fft (`microtorch/fft.py`) is built from.

The FFTs are ops of their own, with torch's arguments: `FftR2C` (a real x, over a list of dims, the last one halved
when onesided), `FftC2C` (a complex x, forward or inverse) and `FftC2R` (in spectral_inverse.py). `normalization`
is torch's code: 0 none, 1 times 1/sqrt(n), 2 times 1/n, n the number of points transformed. The DFT is linear, so
each backward is the adjoint transform with the same normalization: C2C's is C2C the other way; for a real x only
the real part of the inverse flows back. In stft the rest is padding, `unfold`, a product and a transpose, so the
graph shows each step."""
import math

import numpy as np

from .._tensor import Tensor
from ._op import Op
from .pad import pad
from .._user_line import warn_at_user_line, warn_once

# numpy's norm= for each normalization code: a forward transform scales by 1, 1/sqrt(n), 1/n under "backward",
# "ortho", "forward"; an inverse one by 1/n, 1/sqrt(n), 1 (pocketfft applies the factor, as in torch)
_NUMPY_NORM = {True: ("backward", "ortho", "forward"), False: ("forward", "ortho", "backward")}


def complex_dtype(dtype):
    """the complex dtype of a real or complex numpy dtype's precision"""
    return np.result_type(dtype, np.complex64)


def pad_dim(t, dim, missing):
    """t with `missing` zeros after the end of dim (torch's constant_pad_nd with a pad for every dim)"""
    widths = [0] * (2 * t.ndim)
    widths[2 * (t.ndim - 1 - dim) + 1] = missing
    return pad(t, tuple(widths))


class FftR2C(Op):
    """y = the FFT of a real x over dims (the last one's first n // 2 + 1 bins when onesided);
    dx = Re(the inverse transform of g, the missing bins zero)"""
    _grad_fn_name = "FftR2CBackward0"
    _saved_names = ("self",)
    _saved_values = {"dim": "dim", "normalization": "normalization", "onesided": "onesided"}

    @staticmethod
    def forward(ctx, x, dim, normalization, onesided):
        ctx.dim, ctx.normalization, ctx.onesided = tuple(dim), normalization, onesided
        ctx.save_for_backward(x)
        norm = _NUMPY_NORM[True][normalization]
        out = np.fft.rfftn(x, axes=ctx.dim, norm=norm) if onesided else np.fft.fftn(x, axes=ctx.dim, norm=norm)
        return out.astype(complex_dtype(x.dtype), copy=False)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        last = ctx.dim[-1]
        missing = x.shape[last] - grad.shape[last]
        full = pad_dim(grad, last, missing) if ctx.onesided and missing > 0 else grad
        return FftC2C.apply(full, ctx.dim, ctx.normalization, False).real, None, None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return FftR2C.apply(t, ctx.dim, ctx.normalization, ctx.onesided)


class FftC2C(Op):
    """y = the FFT (forward) or inverse FFT of a complex x over dims; dx = the transform the other way of g"""
    _grad_fn_name = "FftC2CBackward0"
    _saved_values = {"dim": "dim", "forward": "forward", "normalization": "normalization"}

    @staticmethod
    def forward(ctx, x, dim, normalization, forward):
        ctx.dim, ctx.normalization, ctx.forward = tuple(dim), normalization, forward
        if not ctx.dim:  # (no dim transformed: a copy, as torch's)
            return x.copy()
        transform = np.fft.fftn if forward else np.fft.ifftn
        return transform(x, axes=ctx.dim, norm=_NUMPY_NORM[forward][normalization]).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        return FftC2C.apply(grad, ctx.dim, ctx.normalization, not ctx.forward), None, None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return FftC2C.apply(t, ctx.dim, ctx.normalization, ctx.forward)


class ConjPhysical(Op):
    """y = conj(x) in new memory (not conj's lazy view); dx = conj(g)"""
    _grad_fn_name = "ConjPhysicalBackward0"

    @staticmethod
    def forward(ctx, x):
        return np.conj(x)

    @staticmethod
    def backward(ctx, grad):
        return ConjPhysical.apply(grad)

    @staticmethod
    def jvp(ctx, t):
        return ConjPhysical.apply(t)


def conj_physical(input):
    """torch.conj_physical: the conjugate, computed (a real tensor is returned as it is)"""
    return ConjPhysical.apply(input) if input.is_complex() else input


def _window(window, win_length, n_fft, like):
    """The window, padded with zeros on both sides to n_fft, as torch centres a shorter window."""
    if window is None:
        warn_once("stft window", "A window was not provided. A rectangular window will be applied, which is known "
                  "to cause spectral leakage; pass e.g. window=torch.hann_window(n_fft) (or torch.ones(n_fft) to "
                  "keep it rectangular and silence this warning).")
        return None if win_length == n_fft else Tensor._make(np.ones(win_length, dtype=like._data.real.dtype))
    if window.ndim != 1 or window.shape[0] != win_length:
        raise RuntimeError(f"stft: expected a 1D window tensor of size equal to win_length={win_length}, but got "
                           f"window with size {list(window.shape)}")
    return window


def _as_int(value, name):
    """n_fft, hop_length and win_length are ints; an n_fft tensor of one element passes through int()."""
    if value is None or isinstance(value, (int, np.integer)):
        return value
    if not isinstance(value, Tensor) or name != "n_fft":
        raise TypeError(f"stft(): argument '{name}' must be int, not {type(value).__name__}")
    try:
        return int(value)
    except ValueError as e:
        raise ValueError(f"stft(): {name} must be an int: {e}") from None


def _centre(input, p, mode):
    """Pad p samples on both sides of the last dim, as torch does first (viewed as (batch, 1, length))."""
    if input.ndim not in (1, 2):
        return input  # (refused by _check, as torch refuses it after padding)
    if input._data.dtype == np.bool_ and mode == "reflect":
        raise NotImplementedError("stft: reflection padding is not implemented for bool inputs; use .double()")
    if input.numel() == 0 or p < 0:
        raise RuntimeError(f"stft: cannot centre a signal of shape {list(input.shape)} by {p} samples a side: "
                           "pass a non-empty signal and n_fft > 0")
    shaped = input.reshape((1, 1) + tuple(input.shape)) if input.ndim == 1 else input.unsqueeze(1)
    try:
        padded = pad(shaped, (p, p), mode=mode)
    except (RuntimeError, NotImplementedError) as e:
        raise type(e)(f"stft: centring the signal (center=True) failed: {e}") from None
    return padded.reshape(padded.shape[-1:]) if input.ndim == 1 else padded.squeeze(1)


def _check(input, n_fft, hop_length, win_length, return_complex):
    if not (input.is_floating_point() or input.is_complex()):
        raise RuntimeError(f"stft: expected a floating point or complex input, but got {input.dtype}; "
                           "convert it with .double()")
    if return_complex is None and not input.is_complex():
        raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will further "
                           "require that return_complex=True in a future PyTorch release.")
    if input.ndim not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got a {input.ndim}D tensor of shape "
                           f"{list(input.shape)}")
    length = input.shape[-1]
    if not 0 < n_fft <= length:
        raise RuntimeError(f"stft: expected 0 < n_fft <= {length}, but got n_fft={n_fft}")
    if hop_length <= 0:
        raise RuntimeError(f"stft: expected hop_length > 0, but got hop_length={hop_length}")
    if not 0 < win_length <= n_fft:
        raise RuntimeError(f"stft: expected 0 < win_length <= n_fft, but got win_length={win_length}")


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None, align_to_window=None):
    """Frames of n_fft samples every hop_length, windowed and Fourier-transformed: (freq, frames)."""
    if align_to_window:
        raise NotImplementedError("stft: align_to_window=True is not supported by microtorch; leave it None")
    if center and not isinstance(pad_mode, str):  # (torch's pad() sees it first)
        raise TypeError(f"stft(): pad(): argument 'mode' must be str, not {type(pad_mode).__name__}")
    n_fft_tensor = isinstance(n_fft, Tensor)
    if n_fft_tensor:  # torch's first step is int(n_fft // 2); its kernel then refuses a tensor
        if n_fft.dtype.is_complex:
            raise NotImplementedError("stft(): \"div_floor_cpu\" not implemented for complex n_fft; pass an int")
        n_fft = _as_int(n_fft, "n_fft")
    if isinstance(n_fft, float) and not math.isfinite(n_fft):  # (torch's int(n_fft // 2): inf // 2 is nan too)
        raise ValueError(f"stft(): cannot convert float NaN to integer (n_fft={n_fft} // 2): n_fft must be an int")
    x = _centre(input, int(n_fft // 2), pad_mode) if center else input
    if n_fft_tensor:
        raise TypeError("stft(): argument 'n_fft' must be int, not Tensor; pass n_fft as a Python int")
    n_fft, hop_length, win_length = (_as_int(v, k) for v, k in ((n_fft, "n_fft"), (hop_length, "hop_length"),
                                                                 (win_length, "win_length")))
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    _check(x, n_fft, hop_length, win_length, return_complex)
    x = x.unsqueeze(0) if input.ndim == 1 else x
    w = _window(window, win_length, n_fft, input)
    frames = x.unfold(-1, n_fft, hop_length)  # (batch, frames, n_fft)
    if w is not None:
        left = (n_fft - win_length) // 2
        frames = frames * (w if win_length == n_fft else pad(w, (left, n_fft - win_length - left)))
    normalization = 1 if normalized else 0  # (times 1/sqrt(n_fft), or none)
    if input.is_complex():
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        spec = FftC2C.apply(frames, (2,), normalization, True)
    else:
        spec = FftR2C.apply(frames, (2,), normalization, True if onesided is None else onesided)
    spec = spec.transpose_(1, 2)  # in place, and squeeze_ below, as torch: the same grad_fn names
    spec = spec.squeeze_(0) if input.ndim == 1 else spec
    if return_complex is False:
        warn_at_user_line("stft with return_complex=False is deprecated: use return_complex=True and .real/.imag",
                          UserWarning)
        from .shape import stack
        return stack([spec.real, spec.imag], -1)
    return spec
