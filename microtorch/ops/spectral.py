"""The short-time Fourier transform, `stft`, as torch computes it: pad, cut into frames, window, FFT.

Only the FFT is an op of its own (`FftR2C` for real frames, `FftC2C` for complex ones); the rest is
padding, `unfold`, a product and a transpose, so the graph shows each step. The DFT is linear,
y = x @ W with W[n, k] = exp(-2 pi i n k / N), so its backward is the adjoint, g @ conj(W)^T, and
for a real input only the real part of that flows back."""
import math

import numpy as np

from .._tensor import Tensor
from ._op import Op
from .pad import pad
from .._user_line import warn_at_user_line, warn_once


def _dft_matrix(n, bins, dtype):
    """W[n, k] = exp(-2 pi i n k / N) for the first `bins` frequencies."""
    k = np.arange(n)[:, None] * np.arange(bins)[None, :]
    return np.exp(-2j * np.pi * (k % n) / n).astype(dtype)


class FftR2C(Op):
    """y = rfft(x) over the last dim (onesided) or the full fft of a real x; dx = Re(g @ conj(W)^T)"""
    _grad_fn_name = "FftR2CBackward0"

    @staticmethod
    def forward(ctx, x, onesided, scale):
        n = x.shape[-1]
        ctx.n, ctx.scale = n, scale
        out = np.fft.rfft(x, axis=-1) if onesided else np.fft.fft(x, axis=-1)
        ctx.bins = out.shape[-1]
        return (out * scale).astype(np.result_type(x.dtype, np.complex64))

    @staticmethod
    def backward(ctx, grad):
        w = _dft_matrix(ctx.n, ctx.bins, grad._data.dtype)
        return (grad @ Tensor._make(np.conj(w).T * ctx.scale)).real, None, None

    @staticmethod
    def jvp(ctx, t, _onesided, _scale):
        w = _dft_matrix(ctx.n, ctx.bins, ctx.output._data.dtype)
        return t.to(ctx.output.dtype) @ Tensor._make(w * ctx.scale)


class FftC2C(Op):
    """y = fft(x) over the last dim of a complex x; dx = g @ conj(W)^T"""
    _grad_fn_name = "FftC2CBackward0"

    @staticmethod
    def forward(ctx, x, scale):
        ctx.n, ctx.scale = x.shape[-1], scale
        return (np.fft.fft(x, axis=-1) * scale).astype(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        w = _dft_matrix(ctx.n, ctx.n, grad._data.dtype)
        return grad @ Tensor._make(np.conj(w).T * ctx.scale), None

    @staticmethod
    def jvp(ctx, t, _scale):
        return t @ Tensor._make(_dft_matrix(ctx.n, ctx.n, ctx.output._data.dtype) * ctx.scale)


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
    scale = n_fft ** -0.5 if normalized else 1.0
    if input.is_complex():
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        spec = FftC2C.apply(frames, scale)
    else:
        spec = FftR2C.apply(frames, True if onesided is None else onesided, scale)
    spec = spec.transpose_(1, 2)  # in place, and squeeze_ below, as torch: the same grad_fn names
    spec = spec.squeeze_(0) if input.ndim == 1 else spec
    if return_complex is False:
        warn_at_user_line("stft with return_complex=False is deprecated: use return_complex=True and .real/.imag",
                          UserWarning)
        from .shape import stack
        return stack([spec.real, spec.imag], -1)
    return spec
