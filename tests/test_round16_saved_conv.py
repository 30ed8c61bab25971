"""Every value the nodes of convolution, unfold/fold, pooling, embedding, embedding_bag, conv_tbc, upsampling, the
shuffles, affine_grid and the activations' backward ops show, beside torch 2.13 (`grad_fn._saved_stride`,
`_saved_padding`, `_saved_groups`, `_saved_bias_sym_sizes_opt`, `_saved_padding_idx`, `_saved_output_size`,
`_saved_min_val`, ...), with its Python type, before and after backward, and the tensors the nodes keep
(`_saved_input`, `_saved_weight`, conv_tbc's `_saved_bias`, logsigmoid's backward's `_saved_buffer`, rrelu's
backward's `_saved_noise`), seen by pack hooks and freed by backward.

What torch's nodes show of the arguments as the user gave them (a pool's stride left out or kernel given as a
1-tuple, ceil_mode, count_include_pad, divisor_override, interpolate's scale_factor and align_corners) nn.functional
passes to the ops as `shown` (ops/conv.py's show_max_pool and show_avg_pool, ops/upsample.py's Resample); for
padding='same' with an even kernel it pads the input itself first, as torch does. padding='valid' shows (0,) in any
dimension, as torch's node does."""
import numpy as np
import pytest
import torch

from tests.saved_compare import STRIDES, assert_saves_as_torch


def _a(T, dtype=None):
    return T.tensor([[0.5, 1.5, -2.0], [2.5, -1.0, 0.25]], dtype=dtype or T.float64, requires_grad=True)


def _v(T):
    return T.tensor([0.3, -1.2, 2.0], dtype=T.float64, requires_grad=True)


def _x4(T, dtype=None):
    return T.tensor(np.sin(np.arange(32.0)).reshape(1, 2, 4, 4), dtype=dtype or T.float64, requires_grad=True)


def _x4_dyadic(T):
    """values whose means and quarter-weighted sums are exact, where torch's kernels and ours sum in other orders"""
    return T.tensor(np.arange(32.0).reshape(1, 2, 4, 4) / 8, dtype=T.float64, requires_grad=True)


def _x5(T):
    return T.tensor(np.sin(np.arange(64.0)).reshape(1, 2, 2, 4, 4), dtype=T.float64, requires_grad=True)


def _w(T, *shape, dtype=None):
    n = int(np.prod(shape))
    return T.tensor(np.cos(np.arange(float(n))).reshape(shape), dtype=dtype or T.float64, requires_grad=True)


def _i(T, values, dtype=None):
    return T.tensor(values, dtype=dtype or T.int64)


def F(T):
    return T.nn.functional


def _cases(table):
    return [pytest.param(f, id=name) for name, f in sorted(table.items())]


CONVOLUTION = {
    "conv1d": lambda T: F(T).conv1d(_a(T)[None], _w(T, 2, 2, 2)),
    "conv1d_bias": lambda T: F(T).conv1d(_a(T)[None], _w(T, 2, 2, 2), _v(T)[:2]),
    "conv1d_strided": lambda T: F(T).conv1d(_a(T)[None], _w(T, 2, 2, 2), padding=1, stride=2, dilation=1),
    "conv1d_lists": lambda T: F(T).conv1d(_a(T)[None], _w(T, 2, 2, 2), padding=(1,), stride=[2], dilation=(2,)),
    "conv1d_groups": lambda T: F(T).conv1d(_a(T)[None], _w(T, 2, 1, 2), groups=2),
    "conv1d_same": lambda T: F(T).conv1d(_a(T)[None], _w(T, 2, 2, 3), padding="same"),
    "conv1d_valid": lambda T: F(T).conv1d(_a(T)[None], _w(T, 2, 2, 2), padding="valid"),
    "conv1d_constant_input": lambda T: F(T).conv1d(_a(T).detach()[None], _w(T, 2, 2, 2)),
    "conv2d": lambda T: F(T).conv2d(_x4(T), _w(T, 2, 2, 3, 3)),
    "conv2d_positional": lambda T: F(T).conv2d(_x4(T), _w(T, 2, 2, 3, 3), None, 1, 0, 1, 1),
    "conv2d_bias_strided": lambda T: F(T).conv2d(_x4(T), _w(T, 2, 2, 3, 3), _v(T)[:2], padding=1, stride=2),
    "conv2d_per_dim": lambda T: F(T).conv2d(_x4(T), _w(T, 3, 2, 2, 2), padding=(1, 0), stride=(2, 1),
                                            dilation=(1, 2)),
    "conv2d_groups": lambda T: F(T).conv2d(_x4(T), _w(T, 4, 1, 3, 3), groups=2),
    "conv2d_same": lambda T: F(T).conv2d(_x4(T), _w(T, 2, 2, 3, 3), padding="same"),
    "conv2d_same_dilated": lambda T: F(T).conv2d(_x4(T), _w(T, 2, 2, 3, 3), padding="same", dilation=2),
    "conv2d_float32": lambda T: F(T).conv2d(_x4(T, T.float32), _w(T, 2, 2, 3, 3, dtype=T.float32)),
    "conv2d_empty_batch": lambda T: F(T).conv2d(_x4(T)[:0], _w(T, 2, 2, 3, 3)),
    "conv1d_empty_batch": lambda T: F(T).conv1d(_a(T)[None][:0], _w(T, 4, 1, 2), groups=2),
    "conv3d_empty_batch": lambda T: F(T).conv3d(_x5(T)[:0], _w(T, 2, 2, 1, 3, 3)),
    "conv_transpose2d_empty_batch": lambda T: F(T).conv_transpose2d(_x4(T)[:0], _w(T, 2, 2, 3, 3)),
    "conv3d": lambda T: F(T).conv3d(_x5(T), _w(T, 2, 2, 1, 3, 3)),
    "conv3d_bias_strided": lambda T: F(T).conv3d(_x5(T), _w(T, 2, 2, 1, 3, 3), _v(T)[:2], padding=1,
                                                 stride=(1, 2, 2)),
    "conv3d_same": lambda T: F(T).conv3d(_x5(T), _w(T, 2, 2, 1, 3, 3), padding="same"),
    "conv3d_groups": lambda T: F(T).conv3d(_x5(T), _w(T, 2, 1, 1, 3, 3), groups=2),
    "conv_transpose1d": lambda T: F(T).conv_transpose1d(_a(T)[None], _w(T, 2, 2, 2)),
    "conv_transpose1d_output_padding": lambda T: F(T).conv_transpose1d(_a(T)[None], _w(T, 2, 2, 2), _v(T)[:2],
                                                                       stride=2, padding=1, output_padding=1),
    "conv_transpose2d": lambda T: F(T).conv_transpose2d(_x4(T), _w(T, 2, 2, 3, 3)),
    "conv_transpose2d_per_dim": lambda T: F(T).conv_transpose2d(_x4(T), _w(T, 2, 2, 3, 3), _v(T)[:2], stride=(2, 1),
                                                                padding=(1, 0), output_padding=(1, 0),
                                                                dilation=(1, 2)),
    "conv_transpose2d_groups": lambda T: F(T).conv_transpose2d(_x4(T), _w(T, 2, 1, 3, 3), groups=2),
    "conv_transpose3d": lambda T: F(T).conv_transpose3d(_x5(T), _w(T, 2, 2, 1, 3, 3), _v(T)[:2], stride=2,
                                                        padding=1, output_padding=1),
    "module_reflect": lambda T: _module(T, T.nn.Conv2d(2, 2, 3, padding=1, padding_mode="reflect"), _x4(T)),
    "module_circular_no_bias": lambda T: _module(T, T.nn.Conv2d(2, 2, 3, padding=1, padding_mode="circular",
                                                                bias=False), _x4(T)),
    "module_replicate_1d": lambda T: _module(T, T.nn.Conv1d(2, 2, 2, padding=1, padding_mode="replicate"),
                                             _a(T)[None]),
    "module_same_reflect": lambda T: _module(T, T.nn.Conv2d(2, 2, 3, padding="same", padding_mode="reflect"),
                                             _x4(T)),
    "module_groups": lambda T: _module(T, T.nn.Conv2d(2, 4, 3, groups=2, padding=(1, 2)), _x4(T)),
    "module_transposed": lambda T: _module(T, T.nn.ConvTranspose2d(2, 2, 3, stride=2, output_padding=1), _x4(T)),
    # torch pads the input itself (a ConstantPadNd node) where 'same' pads one side more, and shows 'valid' as (0,)
    "conv2d_same_even": lambda T: F(T).conv2d(_x4(T), _w(T, 2, 2, 2, 2), padding="same"),
    "conv1d_same_even": lambda T: F(T).conv1d(_a(T)[None], _w(T, 2, 2, 2), padding="same"),
    "conv2d_valid": lambda T: F(T).conv2d(_x4(T), _w(T, 2, 2, 3, 3), padding="valid"),
    "conv3d_valid": lambda T: F(T).conv3d(_x5(T), _w(T, 2, 2, 1, 2, 2), padding="valid"),
}


def _module(T, m, x):
    """a conv module with fixed float64 parameters, applied to x"""
    m = m.double()
    with T.no_grad():
        m.weight.copy_(_w(T, *m.weight.shape))
        if m.bias is not None:
            m.bias.copy_(_w(T, *m.bias.shape) * 0.5)
    return m(x)


@pytest.mark.parametrize("f", _cases(CONVOLUTION))
def test_convolution_shows_its_arguments_as_torch(f):
    assert_saves_as_torch(f, skip=STRIDES)


WINDOWS = {
    "unfold": lambda T: F(T).unfold(_x4(T), 2),
    "unfold_per_dim": lambda T: F(T).unfold(_x4(T), (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)),
    "fold": lambda T: F(T).fold(_x4(T).reshape(1, 8, 4), (3, 3), 2),
    "fold_per_dim": lambda T: F(T).fold(_x4(T).reshape(1, 4, 8), (3, 4), (2, 1), padding=(1, 0), stride=(2, 1)),
    "conv_tbc": lambda T: F(T).conv_tbc(_a(T)[:, None], _w(T, 2, 3, 2), _v(T)[:2]),
    "conv_tbc_pad": lambda T: F(T).conv_tbc(_a(T)[:, None], _w(T, 2, 3, 2), _v(T)[:2], 1),
    "conv_tbc_constant_bias": lambda T: F(T).conv_tbc(_a(T)[:, None], _w(T, 2, 3, 2), _v(T).detach()[:2], 1),
}


@pytest.mark.parametrize("f", _cases(WINDOWS))
def test_unfold_fold_and_conv_tbc_show_their_arguments_as_torch(f):
    assert_saves_as_torch(f, skip=STRIDES)


_SAMPLES = [[[0.3, 0.6], [0.2, 0.1]]]

POOLS = {
    "max_pool2d": lambda T: F(T).max_pool2d(_x4(T), 2, 2),
    "max_pool2d_indices": lambda T: F(T).max_pool2d(_x4(T), 2, stride=(2, 2), return_indices=True),
    "max_pool2d_per_dim": lambda T: F(T).max_pool2d(_x4(T), (3, 2), stride=(1, 2), padding=1, dilation=(1, 2)),
    "max_pool2d_unbatched": lambda T: F(T).max_pool2d(_x4(T)[0], 2, 1),
    "max_pool2d_empty_batch": lambda T: F(T).max_pool2d(_x4(T)[:0], 2, 2),
    "max_pool3d": lambda T: F(T).max_pool3d(_x5(T), 2, 2),
    "max_pool3d_per_dim": lambda T: F(T).max_pool3d(_x5(T), (1, 2, 2), stride=1, padding=(0, 1, 1), dilation=1),
    "max_pool3d_unbatched": lambda T: F(T).max_pool3d(_x5(T)[0], 2, 1),
    "avg_pool2d": lambda T: F(T).avg_pool2d(_x4(T), 2, 2),
    "avg_pool2d_per_dim": lambda T: F(T).avg_pool2d(_x4(T), (3, 2), (1, 2), (1, 0)),
    "avg_pool2d_unbatched": lambda T: F(T).avg_pool2d(_x4(T)[0], 2, 1),
    "avg_pool3d": lambda T: F(T).avg_pool3d(_x5(T), (1, 2, 2), (1, 2, 1), (0, 1, 0)),
    "fractional_max_pool2d": lambda T: F(T).fractional_max_pool2d(
        _x4(T), 2, output_size=2, _random_samples=T.tensor(_SAMPLES, dtype=T.float64)),
    "fractional_max_pool2d_per_dim": lambda T: F(T).fractional_max_pool2d(
        _x4(T), (2, 1), output_size=(3, 2), _random_samples=T.tensor(_SAMPLES, dtype=T.float64)),
    "fractional_max_pool3d": lambda T: F(T).fractional_max_pool3d(
        _x5(T), (1, 2, 2), output_size=(1, 2, 2),
        _random_samples=T.tensor([[[0.3, 0.6, 0.5], [0.2, 0.1, 0.9]]], dtype=T.float64)),
    # what only the arguments as given tell: torch's node shows a stride left out as ()
    "max_pool2d_default_stride": lambda T: F(T).max_pool2d(_x4(T), 2),
    "max_pool2d_ceil_mode": lambda T: F(T).max_pool2d(_x4(T), 3, 2, 1, 1, True),
    "max_pool2d_short_kernel": lambda T: F(T).max_pool2d(_x4(T), (2,), (2,)),
    "max_pool3d_default_stride": lambda T: F(T).max_pool3d(_x5(T), 2),
    "avg_pool2d_default_stride": lambda T: F(T).avg_pool2d(_x4(T), 2),
    "avg_pool2d_flags": lambda T: F(T).avg_pool2d(_x4(T), 3, 2, 1, ceil_mode=True, count_include_pad=False,
                                                   divisor_override=2),
    "avg_pool3d_flags": lambda T: F(T).avg_pool3d(_x5(T), (1, 3, 3), 2, (0, 1, 1), True, False, 3),
}


@pytest.mark.parametrize("f", _cases(POOLS))
def test_pools_show_their_arguments_as_torch(f):
    assert_saves_as_torch(f, skip=STRIDES)


def _bag(T, input, offsets=None, **kw):
    return F(T).embedding_bag(input, _a(T), offsets, **kw)


def _embedding_grad(T, **kw):
    """the gradient of an embedding, with its graph: torch's EmbeddingDenseBackwardBackward0"""
    a = _a(T)
    return T.autograd.grad(F(T).embedding(_i(T, [1, 0, 1]), a, **kw).pow(2).sum(), a, create_graph=True)[0]


EMBEDDING = {
    "embedding": lambda T: F(T).embedding(_i(T, [1, 0]), _a(T)),
    "embedding_padding": lambda T: F(T).embedding(_i(T, [1, 0]), _a(T), padding_idx=0),
    "embedding_negative_padding": lambda T: F(T).embedding(_i(T, [1, 0]), _a(T), padding_idx=-1),
    "embedding_max_norm": lambda T: F(T).embedding(_i(T, [1, 0]), _a(T), max_norm=1.0),
    "embedding_freq": lambda T: F(T).embedding(_i(T, [[1, 0], [1, 1]]), _a(T), scale_grad_by_freq=True),
    "embedding_int32": lambda T: F(T).embedding(_i(T, [1, 0], T.int32), _a(T)),
    "embedding_module": lambda T: T.nn.Embedding.from_pretrained(_a(T).detach(), freeze=False,
                                                                  padding_idx=1)(_i(T, [1, 0])),
    "embedding_grad": lambda T: _embedding_grad(T),
    "embedding_grad_padding": lambda T: _embedding_grad(T, padding_idx=1),
    "embedding_grad_freq": lambda T: _embedding_grad(T, scale_grad_by_freq=True),
    "bag_mean": lambda T: _bag(T, _i(T, [0, 1, 1]), _i(T, [0, 1])),
    "bag_sum_padding": lambda T: _bag(T, _i(T, [0, 1, 1]), _i(T, [0, 1]), mode="sum", padding_idx=1),
    "bag_negative_padding": lambda T: _bag(T, _i(T, [0, 1, 1]), _i(T, [0, 1]), padding_idx=-1),
    "bag_max": lambda T: _bag(T, _i(T, [0, 1, 1]), _i(T, [0, 1]), mode="max"),
    "bag_freq": lambda T: _bag(T, _i(T, [0, 1, 1]), _i(T, [0, 1]), mode="sum", scale_grad_by_freq=True),
    "bag_weights": lambda T: _bag(T, _i(T, [0, 1, 1]), _i(T, [0, 1]), mode="sum", per_sample_weights=_v(T)),
    "bag_2d": lambda T: _bag(T, _i(T, [[0, 1], [1, 0]])),
    "bag_last_offset": lambda T: _bag(T, _i(T, [0, 1, 1]), _i(T, [0, 1, 3]), include_last_offset=True),
}


@pytest.mark.parametrize("f", _cases(EMBEDDING))
def test_embeddings_show_their_arguments_as_torch(f):
    assert_saves_as_torch(f, skip=STRIDES)


def _twice(T, f, x):
    """the gradient of f(x) with its graph: the node of f's backward (UpsampleBilinear2DBackwardBackward0...)"""
    return T.autograd.grad(f(x).pow(2).sum(), x, create_graph=True)[0]


UPSAMPLING = {
    "nearest_size": lambda T: F(T).interpolate(_x4(T), size=(3, 5)),
    "nearest_int_size": lambda T: F(T).interpolate(_x4(T), size=6),
    "nearest_recomputed": lambda T: F(T).interpolate(_x4(T), scale_factor=2, recompute_scale_factor=True),
    "nearest_exact_size": lambda T: F(T).interpolate(_x4(T), size=(3, 5), mode="nearest-exact"),
    "nearest_1d": lambda T: F(T).interpolate(_a(T)[None], size=5),
    "nearest_3d": lambda T: F(T).interpolate(_x5(T), size=(2, 3, 5)),
    "linear": lambda T: F(T).interpolate(_a(T)[None], size=5, mode="linear"),
    "bilinear": lambda T: F(T).interpolate(_x4(T), size=(3, 5), mode="bilinear", align_corners=False),
    "bilinear_antialias": lambda T: F(T).interpolate(_x4(T), size=(3, 2), mode="bilinear", antialias=True),
    "bicubic": lambda T: F(T).interpolate(_x4(T), size=(3, 5), mode="bicubic"),
    "trilinear": lambda T: F(T).interpolate(_x5(T), size=(2, 3, 5), mode="trilinear"),
    "upsample_nearest": lambda T: F(T).upsample_nearest(_x4(T), size=5),
    "bilinear_backward": lambda T: _twice(T, lambda x: F(T).interpolate(x, size=(8, 8), mode="bilinear"),
                                          _x4_dyadic(T)),
    "nearest_backward": lambda T: _twice(T, lambda x: F(T).interpolate(x, size=(8, 8)), _x4(T)),
    "adaptive_avg_pool2d_backward": lambda T: _twice(T, lambda x: F(T).adaptive_avg_pool2d(x, 3), _x4_dyadic(T)),
    "adaptive_avg_pool3d_backward": lambda T: _twice(T, lambda x: F(T).adaptive_avg_pool3d(x, (1, 2, 2)),
                                                     _x4_dyadic(T)[None]),
    "pixel_shuffle": lambda T: F(T).pixel_shuffle(_x4(T).reshape(1, 8, 2, 2), 2),
    "pixel_shuffle_unbatched": lambda T: F(T).pixel_shuffle(_x4(T).reshape(8, 2, 2), 2),
    "pixel_unshuffle": lambda T: F(T).pixel_unshuffle(_x4(T), 2),
    "channel_shuffle": lambda T: F(T).channel_shuffle(_x4(T).reshape(1, 4, 2, 4), 2),
    "channel_shuffle_module": lambda T: T.nn.ChannelShuffle(2)(_x4(T).reshape(1, 4, 2, 4)),
    "affine_grid": lambda T: F(T).affine_grid(_a(T)[None], (1, 1, 2, 2), align_corners=False),
    "affine_grid_list": lambda T: F(T).affine_grid(_a(T)[None], [1, 1, 2, 3], align_corners=True),
    "affine_grid_3d": lambda T: F(T).affine_grid(_w(T, 1, 3, 4), (1, 1, 2, 2, 2), align_corners=False),
    "grid_sample": lambda T: F(T).grid_sample(_x4(T), _w(T, 1, 2, 2, 2) * 0.5, mode="bicubic",
                                              padding_mode="reflection", align_corners=True),
    # torch's node shows interpolate's scale_factor (as floats) and align_corners, which the op is not given
    "nearest_scale": lambda T: F(T).interpolate(_x4(T), scale_factor=(2, 1.5)),
    "bilinear_align_corners": lambda T: F(T).interpolate(_x4(T), size=(3, 5), mode="bilinear", align_corners=True),
    "linear_scale": lambda T: F(T).interpolate(_a(T)[None], scale_factor=2, mode="linear"),
}


@pytest.mark.parametrize("f", _cases(UPSAMPLING))
def test_upsampling_and_shuffles_show_their_arguments_as_torch(f):
    assert_saves_as_torch(f, skip=STRIDES)


ACTIVATION_BACKWARDS = {
    "hardtanh": lambda T: _twice(T, F(T).hardtanh, _a(T)),
    "hardtanh_floats": lambda T: _twice(T, lambda x: F(T).hardtanh(x, -0.5, 0.5), _a(T)),
    "hardtanh_ints": lambda T: _twice(T, lambda x: F(T).hardtanh(x, -1, 1), _a(T)),
    "relu6": lambda T: _twice(T, F(T).relu6, _a(T)),
    "threshold": lambda T: _twice(T, lambda x: F(T).threshold(x, 0.5, 2.0), _a(T)),
    "threshold_ints": lambda T: _twice(T, lambda x: F(T).threshold(x, 1, 2), _a(T)),
    "softshrink": lambda T: _twice(T, F(T).softshrink, _a(T)),
    "softshrink_int": lambda T: _twice(T, lambda x: F(T).softshrink(x, 1), _a(T)),
    "hardshrink": lambda T: _twice(T, lambda x: F(T).hardshrink(x, 1.0), _a(T)),
    "logsigmoid": lambda T: _twice(T, F(T).logsigmoid, _a(T)),
    "logsigmoid_float32": lambda T: _twice(T, F(T).logsigmoid, _a(T, T.float32)),
}


@pytest.mark.parametrize("f", _cases(ACTIVATION_BACKWARDS))
def test_activation_backward_nodes_show_their_arguments_as_torch(f):
    assert_saves_as_torch(f, skip=STRIDES)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("in_place", [False, True])
def test_rrelu_backward_keeps_the_noise(training, in_place):
    """rrelu's backward's node keeps x (the in-place form's result) and the noise, and shows lower, upper and
    training; the noise is random in training, and torch leaves it unfilled in eval mode: each node keeps its own"""
    import microtorch as mt
    shown = []
    for T in (torch, mt):
        a = _a(T)
        rrelu = F(T).rrelu_ if in_place else F(T).rrelu
        g = _twice(T, lambda x: rrelu(x * 1 if in_place else x, 0.1, 0.2, training=training), a)
        node = g.grad_fn.next_functions[0][0] if in_place else g.grad_fn  # (x * 1's gradient, times 1, above it)
        self = node._saved_self
        shown.append((node.name(), node._saved_lower, node._saved_upper, node._saved_training,
                      tuple(node._saved_noise.shape), self.shape == a.shape))
        g.sum().backward()
        with pytest.raises(RuntimeError, match="freed"):
            node._saved_noise
    assert shown[0] == shown[1] == ("RreluWithNoiseBackwardBackward0", 0.1, 0.2, training, (2, 3), True)


def test_a_wrong_expectation_fails():
    """the comparison tells a value torch shows as an int from a float (hardtanh(x, -1, 1): min_val -1)"""
    with pytest.raises(AssertionError):
        assert_saves_as_torch(lambda T: F(T).hardtanh(_a(T), -1 if T is torch else -1.0, 1), skip=STRIDES)
    with pytest.raises(AssertionError):  # (and a stride torch shows as (1, 1) from (2, 2), the shapes alike)
        assert_saves_as_torch(lambda T: F(T).conv2d(_x4(T), _w(T, 2, 2, 3, 3), stride=1 if T is torch else 2,
                                                     padding=0 if T is torch else 1), skip=STRIDES)
