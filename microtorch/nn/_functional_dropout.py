"""Dropout variants (re-exported by nn.functional): whole channels (dropout1d/2d/3d) and the alpha dropouts
that keep a SELU network's mean and variance. Composed as torch composes them: input * noise (+ b)."""
import math

import numpy as np

from .._random import bernoulli_mask
from .._tensor import Tensor
from ..ops import nn as _nn
from ..ops.inplace import apply_inplace
from .._user_line import warn_at_user_line

_SELU_ALPHA_PRIME = 1.7580993408473766  # -scale * alpha of SELU: where a dropped unit goes


def _check_p(p):
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _noise(input, p, per_channel):
    """1 with probability 1 - p, else 0; one draw per (N, C) channel if per_channel (input (N, C, ...)).
    A meta tensor draws nothing (the generator stays where it was, as in torch)."""
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2) if per_channel else tuple(input.shape)
    if input.is_meta:
        return Tensor._make(np.ones(shape, input._data.dtype))
    like = None if per_channel else input._data  # (torch's noise: empty_like(input), drawn in its memory order)
    return Tensor._make(bernoulli_mask(shape, 1 - p, input._data.dtype, like))


def _dropout_impl(input, p, training, inplace, per_channel, alpha):
    """torch's dropout kernel: in place it multiplies (and for alpha adds) into input itself (mul_, add_: the
    input's version counts them and its grad_fn is MulBackward0/AddBackward0), as torch's dropout_ does."""
    _check_p(p)
    if not training or p == 0 or input.numel() == 0:
        return input
    if p == 1:  # (torch multiplies by a 0-d zero)
        return _times(input, Tensor._make(np.zeros((), input._data.dtype)), inplace, alpha)
    noise = _noise(input, p, per_channel)
    if not alpha:
        return _times(input, noise / (1 - p), inplace, alpha)
    a = 1.0 / math.sqrt((_SELU_ALPHA_PRIME ** 2 * p + 1) * (1 - p))
    b = (noise - 1) * (_SELU_ALPHA_PRIME * a) + _SELU_ALPHA_PRIME * a * p
    out = _times(input, noise * a, inplace, alpha)
    return apply_inplace(out, lambda x: x + b, op="alpha_dropout_") if inplace else out + b


def _times(input, noise, inplace, alpha):
    """input * noise, or input.mul_(noise) in the dropout's name"""
    if not inplace:
        return input * noise
    return apply_inplace(input, lambda x: x * noise, op="alpha_dropout_" if alpha else "dropout_")


def dropout(input, p=0.5, training=True, inplace=False):
    if inplace:
        return _dropout_impl(input, p, training, True, False, False)
    return _nn.dropout(input, p, training)


def _channels(input, k, name):
    """(N, C, *k dims) as is; (C, *k dims) as a batch of one (then squeezed back)."""
    if input.ndim not in (k + 1, k + 2):
        raise RuntimeError(f"{name}: Expected {k + 1}D or {k + 2}D input, but received a {input.ndim}D input. Note "
                           f"that {name} exists to provide channel-wise dropout on inputs with {k} spatial "
                           "dimension(s), a channel dimension, and an optional batch dimension")
    return input.ndim == k + 1


def dropout1d(input, p=0.5, training=True, inplace=False):
    unbatched = _channels(input, 1, "dropout1d")
    x = input.unsqueeze(0) if unbatched else input
    out = _dropout_impl(x, p, training, inplace and not unbatched, True, False)
    return out.squeeze(0) if unbatched else out


def dropout2d(input, p=0.5, training=True, inplace=False):
    if input.ndim not in (3, 4):  # (torch warns, then drops whole slices of dim 1 as it does for 3-D inputs)
        warn_at_user_line(f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is deprecated and will "
                          "result in an error in a future release. To retain the behavior and silence this warning, "
                          "please use dropout instead. Note that dropout2d exists to provide channel-wise dropout on "
                          "inputs with 2 spatial dimensions, a channel dimension, and an optional batch dimension "
                          "(i.e. 3D or 4D inputs).", UserWarning)
    if input.ndim == 3:
        warn_at_user_line("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
                          "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel dim. "
                          "This behavior will change in a future release to interpret the input as one without a "
                          "batch dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout behavior, "
                          "please switch to using dropout1d instead.", UserWarning)
    if input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    return _dropout_impl(input, p, training, inplace, True, False)


def dropout3d(input, p=0.5, training=True, inplace=False):
    if input.ndim not in (4, 5):  # torch: a deprecation warning, then each leading slice is a "channel"
        warn_at_user_line(f"dropout3d: Received a {input.ndim}-D input to dropout3d, which is deprecated and will "
                          "result in an error in a future release. To retain the behavior and silence this warning, "
                          "please use dropout instead. Note that dropout3d exists to provide channel-wise dropout on "
                          "inputs with 3 spatial dimensions, a channel dimension, and an optional batch dimension "
                          "(i.e. 4D or 5D inputs).", UserWarning)
    unbatched = input.ndim != 5
    x = input.unsqueeze(0) if unbatched else input
    out = _dropout_impl(x, p, training, inplace and not unbatched, True, False)
    return out.squeeze(0) if unbatched else out


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    return _dropout_impl(input, p, training, inplace, False, True)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    if input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    return _dropout_impl(input, p, training, inplace, True, True)
