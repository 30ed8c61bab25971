"""torch.conv2d, torch.max_pool2d, torch.batch_norm, torch.lstm_cell, ...: the nn ops as torch's own
namespace has them, with ATen's argument order and defaults (torch.embedding takes the weight first,
torch.batch_norm the weight before the running statistics, pooling strides default to `[]`, meaning the
kernel size). Each is a call into nn.functional or the recurrent cells, so grad_fn names, errors and
gradients are theirs."""
from .nn import functional as F
from .nn._functional_dropout import _dropout_impl
from .nn.modules import rnn as _rnn


def _stride(stride):
    return None if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) else stride


def adaptive_avg_pool1d(input, output_size):
    return F.adaptive_avg_pool1d(input, output_size)


def adaptive_max_pool1d(input, output_size):
    """(values, indices), as ATen's"""
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


def avg_pool1d(input, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True):
    return F.avg_pool1d(input, kernel_size, _stride(stride), padding, ceil_mode, count_include_pad)


def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode, return_indices=True)


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool2d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool3d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled):
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    if input.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions (group_norm)")
    if num_groups <= 0:
        raise RuntimeError(f"Expected num groups to be greater than 0, got {num_groups}")
    if input.ndim < 2 or input.shape[1] % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={num_groups}")
    return F.group_norm(input, num_groups, weight, bias, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    return F.rms_norm(input, normalized_shape, weight, eps)


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """the convolution of weight's spatial rank (1-3), plain or transposed"""
    k = weight.ndim - 2
    if k not in (1, 2, 3):
        raise RuntimeError(f"convolution: expected a weight with 3, 4 or 5 dimensions (1-3 spatial), got "
                           f"{weight.ndim}: shape {list(weight.shape)}")
    if transposed:
        fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[k - 1]
        return fn(input, weight, bias, stride, padding, output_padding, groups, dilation)
    fn = (F.conv1d, F.conv2d, F.conv3d)[k - 1]
    return fn(input, weight, bias, stride, padding, dilation, groups)


def dropout(input, p, train):
    return F.dropout(input, p, train)


def dropout_(input, p, train):
    """input *= a mask of kept elements scaled by 1 / (1 - p), in place (MulBackward0, as torch)"""
    import numpy as np

    from ._random import bernoulli_mask
    from ._tensor import Tensor
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not train or p == 0:
        return input
    keep = bernoulli_mask(tuple(input.shape), 1 - p, input._data.dtype, input._data) / (1 - p) if p < 1 else \
        np.zeros(tuple(input.shape), input._data.dtype)
    return input.mul_(Tensor._make(keep.astype(input._data.dtype)))


def alpha_dropout(input, p, train):
    return F.alpha_dropout(input, p, train)


def alpha_dropout_(input, p, train):
    return F.alpha_dropout(input, p, train, inplace=True)


def feature_alpha_dropout(input, p, train):
    return F.feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input, p, train):
    return F.feature_alpha_dropout(input, p, train, inplace=True)


def feature_dropout(input, p, train):
    """whole feature maps (dim 1) dropped together, for any input of 2 or more dims"""
    if input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    return _dropout_impl(input, p, train, False, True, False)


def feature_dropout_(input, p, train):
    if input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    return _dropout_impl(input, p, train, True, True, False)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """ATen's order: the table first; padding_idx -1 means none"""
    return F.embedding(indices, weight, None if padding_idx == -1 else padding_idx,
                       scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def constant_pad_nd(input, pad, value=0):
    return F.pad(input, list(pad), value=value)


def affine_grid_generator(theta, size, align_corners):
    return F.affine_grid(theta, list(size), align_corners)


_MODES, _PADDINGS = ("bilinear", "nearest", "bicubic"), ("zeros", "border", "reflection")


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """ATen's integer codes: mode 0 bilinear, 1 nearest, 2 bicubic; padding 0 zeros, 1 border, 2 reflection"""
    for code, names, what in ((interpolation_mode, _MODES, "interpolation"), (padding_mode, _PADDINGS, "padding")):
        if code not in range(len(names)):
            raise RuntimeError(f"grid_sampler(): expected {what} mode to be one of "
                               f"{dict(enumerate(names))}, but got: {code}")
    return F.grid_sample(input, grid, _MODES[interpolation_mode], _PADDINGS[padding_mode], align_corners)


grid_sampler_2d = grid_sampler_3d = grid_sampler


def threshold_(input, threshold, value):
    return F.threshold_(input, threshold, value)


# torch.celu/selu/threshold are ATen's ops: nn.functional's arguments without `inplace` (torch.selu(x, inplace=True)
# is a TypeError there; the in-place forms are celu_/selu_/threshold_)
def celu(input, alpha=1.0):
    return F.celu(input, alpha)


def selu(input):
    return F.selu(input)


def threshold(input, threshold, value):
    return F.threshold(input, threshold, value)


def rrelu_(input, lower=0.125, upper=1.0 / 3, training=False, generator=None):
    return F.rrelu_(input, lower, upper, training, generator)


def rrelu(input, lower=0.125, upper=1.0 / 3, training=False, generator=None):
    from .nn._functional_act import rrelu_with_generator
    return rrelu_with_generator(input, lower, upper, training, False, generator)


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """one LSTM step: (h', c') from hx = (h, c)"""
    return _rnn._lstm_cell(input, hx[0], hx[1], w_ih, w_hh, b_ih, b_hh)


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return _rnn._gru_cell(input, hx, w_ih, w_hh, b_ih, b_hh)


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return _rnn._rnn_cell(input, hx, w_ih, w_hh, b_ih, b_hh, relu=False)


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return _rnn._rnn_cell(input, hx, w_ih, w_hh, b_ih, b_hh, relu=True)


class _Layers:
    """the layer loop of nn.RNNBase run on a flat list of parameters (w_ih, w_hh[, b_ih, b_hh] per layer and
    direction, in torch's order)"""
    _run = _rnn.RNNBase._run
    _direction = _rnn.RNNBase._direction

    def __init__(self, mode, params, has_biases, num_layers, dropout, train, bidirectional):
        self.mode, self.num_layers, self.dropout, self.training = mode, num_layers, dropout, train
        self.bidirectional, self.per = bidirectional, 4 if has_biases else 2
        self.params = list(params)

    def _weights(self, layer, d):
        k = (layer * (2 if self.bidirectional else 1) + d) * self.per
        w = self.params[k:k + self.per]
        return tuple(w) if self.per == 4 else (w[0], w[1], None, None)

    def _projection(self, layer, d):
        return None


def _layers(mode, input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    x = input.transpose(0, 1) if batch_first else input
    out, h, c = _Layers(mode, params, has_biases, num_layers, dropout, train, bidirectional)._run(x, hx)
    return (out.transpose(0, 1) if batch_first else out), h, c


def lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    """(output, h_n, c_n) of a multi-layer LSTM given its flat parameter list; hx = (h_0, c_0)"""
    return _layers("LSTM", input, tuple(hx), params, has_biases, num_layers, dropout, train, bidirectional,
                   batch_first)


def gru(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    out, h, _ = _layers("GRU", input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)
    return out, h


def rnn_tanh(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    out, h, _ = _layers("RNN_TANH", input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
                        batch_first)
    return out, h


def rnn_relu(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    out, h, _ = _layers("RNN_RELU", input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
                        batch_first)
    return out, h


def norm_except_dim(v, pow=2, dim=0):
    """the pow-norm over every dim but `dim`, kept as size 1 (weight_norm's g); dim -1 is the whole tensor"""
    if dim == -1:
        return v.norm(pow)
    if v.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions (norm_except_dim)")
    if not -v.ndim <= dim < v.ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-v.ndim}, {v.ndim - 1}], but got "
                         f"{dim}) (norm_except_dim)")
    dims = [d for d in range(v.ndim) if d != dim % v.ndim]
    return v.norm(pow, dim=dims, keepdim=True) if dims else v.abs()


def native_dropout(input, p, train):
    """(output, mask): the kept elements (True) scaled by 1 / (1 - p)"""
    import numpy as np

    from ._random import bernoulli_mask
    from ._tensor import Tensor
    if not train:
        return input.clone(), Tensor._make(np.ones(tuple(input.shape), bool))
    keep = Tensor._make(bernoulli_mask(tuple(input.shape), 1 - p, bool))
    scale = 0.0 if p == 1 else 1.0 / (1 - p)
    return input * keep * scale, keep


# ---- the native_* norms: (output, statistics), the statistics outside the graph as torch's ------------------
def _stats(x, dims, eps):
    mean = x.detach().mean(dims, keepdim=True)
    var = ((x.detach() - mean) ** 2).mean(dims, keepdim=True)
    return mean, (var + eps).rsqrt()


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    dims = tuple(range(input.ndim - len(normalized_shape), input.ndim))
    mean, rstd = _stats(input, dims, eps)
    return F.layer_norm(input, list(normalized_shape), weight, bias, eps), mean, rstd


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """(output, save_mean, save_invstd): the batch's statistics per channel when training, empty otherwise"""
    out = F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if not training:
        empty = input.new_zeros((0,)).detach()
        return out, empty, empty.clone()
    mean, rstd = _stats(input, tuple(d for d in range(input.ndim) if d != 1), eps)
    return out, mean.reshape(-1), rstd.reshape(-1)


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """(output, mean, rstd) with the statistics per (sample, group): shape (N, group)"""
    mean, rstd = _stats(input.reshape(N, group, -1), (2,), eps)
    return F.group_norm(input, group, weight, bias, eps), mean.reshape(N, group), rstd.reshape(N, group)


def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    """ATen's embedding_bag: (output, offset2bag, bag_size, max_indices), mode 0 sum, 1 mean, 2 max; the three
    bookkeeping tensors as torch's CPU kernel fills them"""
    import numpy as np

    from ._tensor import Tensor
    if mode not in (0, 1, 2):
        raise RuntimeError(f"embedding_bag: mode must be 0 (sum), 1 (mean) or 2 (max), got {mode}")
    out = F.embedding_bag(indices, weight, offsets, mode=("sum", "mean", "max")[mode],
                          scale_grad_by_freq=scale_grad_by_freq, sparse=sparse, per_sample_weights=per_sample_weights,
                          include_last_offset=include_last_offset, padding_idx=padding_idx)
    idx, starts = indices._data.reshape(-1), offsets._data.reshape(-1)
    bags = out.shape[0]
    bag_of = np.searchsorted(starts[:bags], np.arange(idx.size), side="right") - 1
    size = np.bincount(bag_of[idx != padding_idx] if padding_idx is not None else bag_of, minlength=bags)[:bags]
    long = lambda a: Tensor._make(np.asarray(a, np.int64))  # noqa: E731
    if mode == 0:  # (torch's float32 kernel leaves offset2bag empty)
        return out, long(np.zeros(0) if weight._data.dtype == np.float32 else bag_of), long(np.zeros(bags)), \
            long(np.zeros(bags))
    if mode == 1:
        return out, long(bag_of), long(size), long(size)
    rows = weight._data[idx]
    arg = np.zeros((bags, weight.shape[1]), np.int64)
    for b in range(bags):
        members = np.flatnonzero(bag_of == b)
        if members.size:
            arg[b] = idx[members[np.argmax(rows[members], axis=0)]]
    return out, long(bag_of), long(size), long(arg)


# torch.* names that are nn.functional's own functions (the same arguments)
FROM_FUNCTIONAL = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
                   "conv_tbc", "bilinear", "celu_", "selu_", "prelu", "hardshrink",
                   "pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle",
                   "relu_"]
NAMES = [n for n, v in list(globals().items()) if not n.startswith("_") and callable(v) and
         getattr(v, "__module__", None) == __name__]
