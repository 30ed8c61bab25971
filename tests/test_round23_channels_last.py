"""Channels-last layouts through convolutions, pools, resampling and group_norm, beside torch 2.13: torch's kernels
give their output the layout their input (or a convolution's weight) is in, so strides, is_contiguous() and
whether a later view() works are torch's."""
import numpy as np
import pytest
import torch as real_torch

import microtorch

LIBS = (real_torch, microtorch)

OPS = {
    "conv2d": lambda lib, x: lib.nn.functional.conv2d(x, lib.ones(4, 3, 3, 3, dtype=x.dtype), padding=1),
    "conv2d groups": lambda lib, x: lib.nn.functional.conv2d(x, lib.ones(3, 1, 3, 3, dtype=x.dtype), groups=3),
    "conv_transpose2d": lambda lib, x: lib.nn.functional.conv_transpose2d(x, lib.ones(3, 2, 3, 3, dtype=x.dtype),
                                                                          stride=2),
    "max_pool2d": lambda lib, x: lib.nn.functional.max_pool2d(x, 2),
    "max_pool2d indices": lambda lib, x: lib.nn.functional.max_pool2d(x, 2, return_indices=True)[1],
    "avg_pool2d": lambda lib, x: lib.nn.functional.avg_pool2d(x, 3, stride=2, padding=1),
    "lp_pool2d": lambda lib, x: lib.nn.functional.lp_pool2d(x, 2, 2),
    "adaptive_avg_pool2d 1": lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x, 1),
    "adaptive_avg_pool2d": lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x, (2, 3)),
    "adaptive_max_pool2d": lambda lib, x: lib.nn.functional.adaptive_max_pool2d(x, 2),
    "nearest": lambda lib, x: lib.nn.functional.interpolate(x, scale_factor=2),
    "bilinear": lambda lib, x: lib.nn.functional.interpolate(x, scale_factor=2, mode="bilinear"),
    "bicubic": lambda lib, x: lib.nn.functional.interpolate(x, size=(5, 7), mode="bicubic", align_corners=True),
    "area": lambda lib, x: lib.nn.functional.interpolate(x, scale_factor=0.5, mode="area"),
    "pixel_shuffle": lambda lib, x: lib.nn.functional.pixel_shuffle(x.repeat(1, 3, 1, 1)[:, :4], 2),
    "group_norm": lambda lib, x: lib.nn.functional.group_norm(x, 3),
    "batch_norm": lambda lib, x: lib.nn.BatchNorm2d(3, dtype=x.dtype)(x),
    "relu": lambda lib, x: lib.relu(x),
}


def _strides(lib, name, dtype, layout):
    lib.manual_seed(0)
    x = lib.randn(2, 3, 6, 6, dtype=getattr(lib, dtype))
    x = x.to(memory_format=lib.channels_last) if layout == "channels_last" else x
    out = OPS[name](lib, x)
    return out.stride(), out.is_contiguous(), out.is_contiguous(memory_format=lib.channels_last)


@pytest.mark.parametrize("name", list(OPS))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("layout", ["channels_last", "contiguous"])
def test_output_layout_is_torchs(name, dtype, layout):
    assert _strides(real_torch, name, dtype, layout) == _strides(microtorch, name, dtype, layout)


OPS_3D = {
    "conv3d": lambda lib, x: lib.nn.functional.conv3d(x, lib.ones(2, 3, 3, 3, 3)),
    "max_pool3d": lambda lib, x: lib.nn.functional.max_pool3d(x, 2),
    "avg_pool3d": lambda lib, x: lib.nn.functional.avg_pool3d(x, 2),
    "adaptive_avg_pool3d": lambda lib, x: lib.nn.functional.adaptive_avg_pool3d(x, 2),
    "adaptive_max_pool3d": lambda lib, x: lib.nn.functional.adaptive_max_pool3d(x, 2),
    "trilinear": lambda lib, x: lib.nn.functional.interpolate(x, scale_factor=2, mode="trilinear"),
    "nearest3d": lambda lib, x: lib.nn.functional.interpolate(x, scale_factor=2),
}


@pytest.mark.parametrize("name", list(OPS_3D))
def test_channels_last_3d_is_torchs(name):
    def run(lib):
        x = lib.randn(2, 3, 4, 4, 4).to(memory_format=lib.channels_last_3d)
        return OPS_3D[name](lib, x).stride()
    assert run(real_torch) == run(microtorch)


def test_a_channels_last_weight_gives_a_channels_last_output():
    def run(lib):
        w = lib.ones(4, 3, 3, 3).to(memory_format=lib.channels_last)
        return lib.nn.functional.conv2d(lib.ones(2, 3, 6, 6), w).stride()
    assert run(real_torch) == run(microtorch)


def test_values_and_gradients_do_not_change():
    def run(lib):
        lib.manual_seed(0)
        x = lib.randn(2, 3, 8, 8, dtype=lib.float64).to(memory_format=lib.channels_last).requires_grad_()
        conv = lib.nn.Conv2d(3, 4, 3, padding=1, dtype=lib.float64)
        y = lib.nn.functional.max_pool2d(conv(x).relu(), 2)
        y = lib.nn.functional.adaptive_avg_pool2d(lib.nn.functional.interpolate(y, scale_factor=2), 1).flatten(1)
        y.pow(2).sum().backward()
        return y.detach().numpy(), x.grad.numpy(), conv.weight.grad.numpy(), y.grad_fn.name()
    want, got = (run(lib) for lib in LIBS)
    for a, b in zip(want[:3], got[:3]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    assert want[3] == got[3]


def test_adaptive_mean_restrided_in_place_as_torchs():
    def run(lib):
        x = lib.randn(2, 3, 6, 6).to(memory_format=lib.channels_last).requires_grad_()
        out = lib.nn.functional.adaptive_avg_pool2d(x, 1)
        return out.stride(), out.grad_fn.name(), out.grad_fn.next_functions[0][0].name(), out._version
    assert run(real_torch) == run(microtorch)
