"""The inverse short-time Fourier transform, `istft`, as torch computes it: an inverse FFT of each frame,
the window, overlap-add of the frames, and a division by the overlap-added squared window.

The inverse real FFT is an op of its own (`FftC2R`, which torch.fft's irfft and hfft use too); the overlap-add is
an index_add, so the graph shows each step. irfft is linear in the real and imaginary parts of its input; its
adjoint is the forward real FFT, with the bins that stand for two (a frequency and its mirror image) counted twice,
as torch's backward."""
import numpy as np

from .._tensor import Tensor
from ._op import Op
from .pad import pad
from .spectral import _NUMPY_NORM, FftC2C, FftR2C
from .._user_line import warn_at_user_line


class FftC2R(Op):
    """y = the inverse FFT over dims of a Hermitian spectrum x, real, with last_dim_size points along the last dim
    (x holds last_dim_size // 2 + 1 bins there);  dx = rfft(g) over dims, the mirrored bins doubled"""
    _grad_fn_name = "FftC2RBackward0"
    _saved_values = {"dim": "dim", "normalization": "normalization"}

    @staticmethod
    def forward(ctx, x, dim, normalization, last_dim_size):
        ctx.dim, ctx.normalization, ctx.last_dim_size = tuple(dim), normalization, last_dim_size
        sizes = [x.shape[d] for d in ctx.dim[:-1]] + [last_dim_size]
        out = np.fft.irfftn(x, s=sizes, axes=ctx.dim, norm=_NUMPY_NORM[False][normalization])
        return out.astype(x.real.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        g = FftR2C.apply(grad, ctx.dim, ctx.normalization, True)
        last = ctx.dim[-1]
        twice = grad.shape[last] - g.shape[last]  # bins 1..twice have a mirror image in the full spectrum
        if twice > 0:
            weight = np.ones(g.shape[last], dtype=grad._data.dtype)
            weight[1:1 + twice] = 2
            g = g * Tensor._make(weight.reshape((-1,) + (1,) * (g.ndim - 1 - last)))
        return g, None, None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return FftC2R.apply(t, ctx.dim, ctx.normalization, ctx.last_dim_size)


def _overlap_add(frames, hop):
    """(batch, frames, n) -> (batch, n + hop (frames - 1)): frame t added in at t * hop"""
    b, count, n = frames.shape
    where = (np.arange(count)[:, None] * hop + np.arange(n)[None, :]).reshape(-1)
    out = frames.new_zeros((b, n + hop * (count - 1)))
    return out.index_add(1, Tensor._make(where), frames.reshape(b, count * n))


def _istft_check(input, n_fft, hop, win, window, onesided, return_complex):
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from stft with "
                           "return_complex=True.")
    if input.ndim not in (2, 3):
        raise RuntimeError(f"istft: expected a tensor with 2 or 3 dimensions of complex values, got {input.ndim}")
    if return_complex and onesided:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    bins = input.shape[-2]
    if (bins != n_fft // 2 + 1) if onesided else (bins != n_fft):
        raise RuntimeError(f"istft: expected the frequency dimension (3rd to the last) of the input to equal "
                           f"{'n_fft / 2 + 1' if onesided else 'n_fft'} ({n_fft // 2 + 1 if onesided else n_fft}) "
                           f"when onesided={bool(onesided)}, but got {bins}")
    if not 0 < hop <= win:
        raise RuntimeError(f"istft: expected 0 < hop_length <= win_length, but got hop_length={hop}, "
                           f"win_length={win}")
    if not 0 < win <= n_fft:
        raise RuntimeError(f"istft: expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.ndim != 1 or window.shape[0] != win):
        raise RuntimeError(f"istft: Invalid window shape. window has to be 1D and length of `win_length` ({win}), "
                           f"got shape {list(window.shape)}")


def _full_window(window, win, n_fft, like):
    """the window (ones if none) padded with zeros on both sides to n_fft, as torch centres it"""
    if window is None:
        warn_at_user_line("A window was not provided. A rectangular window will be applied; pass the window stft used "
                          "to make the inversion lossless (window=torch.ones(n_fft) keeps it rectangular and silences "
                          "this warning).", UserWarning)
        window = Tensor._make(np.ones(win, dtype=like._data.real.dtype))
    left = (n_fft - win) // 2
    return window if win == n_fft else pad(window, (left, n_fft - win - left))


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False):
    """The signal whose stft (with the same arguments) is input: frames inverted, windowed, overlap-added, and
    divided by the overlap-added squared window."""
    win = n_fft if win_length is None else win_length
    hop = win // 4 if hop_length is None else hop_length
    if not input.is_complex() or input.ndim not in (2, 3):
        _istft_check(input, n_fft, hop, win, window, False, return_complex)
    if onesided is None:
        onesided = not return_complex and input.shape[-2] != n_fft
    _istft_check(input, n_fft, hop, win, window, onesided, return_complex)
    x = (input.unsqueeze(0) if input.ndim == 2 else input).transpose(1, 2)  # (batch, frames, bins)
    normalization = 1 if normalized else 2  # (times 1/sqrt(n_fft), or 1/n_fft)
    if return_complex:
        frames = FftC2C.apply(x, (2,), normalization, False)
    else:
        frames = FftC2R.apply(x if onesided else x[..., :n_fft // 2 + 1], (2,), normalization, n_fft)
    w = _full_window(window, win, n_fft, input)
    y = _overlap_add(frames * w, hop)
    count = x.shape[1]
    envelope = _overlap_add((w * w).detach().reshape(1, 1, n_fft).expand(1, count, n_fft).contiguous(), hop)
    expected = n_fft + hop * (count - 1)
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else (expected - n_fft // 2 if center else expected)
    y, envelope = y[:, start:min(end, expected)], envelope[:, start:min(end, expected)]
    if envelope.numel() and float(envelope.abs().min()) < 1e-11:
        raise RuntimeError(f"istft: window overlap add min: {float(envelope.abs().min()):g}; the window must not "
                           "vanish where frames overlap (with center=False the window's ends must be nonzero, or "
                           "use center=True as stft did)")
    y = y / envelope
    y = y.squeeze(0) if input.ndim == 2 else y
    if end > expected:
        y = pad(y, (0, end - expected))
    return y
