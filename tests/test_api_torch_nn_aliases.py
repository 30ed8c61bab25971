"""torch.conv2d, torch.batch_norm, torch.lstm, ... (microtorch/_torch_nn.py): ATen's argument order and defaults
routed to nn.functional; values, gradients and grad_fn names against torch 2.13."""
import numpy as np
import pytest
import torch

import microtorch as mt
from op_oracle import close

rng = np.random.default_rng(0)


def r(*shape):
    return rng.standard_normal(shape)


X1, X2, X3 = r(2, 3, 9), r(2, 3, 7, 6), r(1, 2, 5, 4, 4)
W, B = r(4, 3), r(4)
CASES = {
    "conv1d": (lambda L, x, w: L.conv1d(x, w, None, 2, 1), X1, r(4, 3, 3)),
    "conv2d": (lambda L, x, w, b: L.conv2d(x, w, b, 1, 1, 1, 1), X2, r(4, 3, 3, 3), B),
    "conv3d": (lambda L, x, w: L.conv3d(x, w), X3, r(3, 2, 2, 2, 2)),
    "conv_transpose1d": (lambda L, x, w: L.conv_transpose1d(x, w, None, 2), X1, r(3, 2, 3)),
    "conv_transpose2d": (lambda L, x, w: L.conv_transpose2d(x, w, None, 2, 1, 1), X2, r(3, 2, 3, 3)),
    "conv_transpose3d": (lambda L, x, w: L.conv_transpose3d(x, w), X3, r(2, 2, 2, 2, 2)),
    "convolution": (lambda L, x, w: L.convolution(x, w, None, [1, 1], [1, 0], [1, 1], False, [0, 0], 1),
                    X2, r(4, 3, 3, 3)),
    "convolution transposed": (lambda L, x, w: L.convolution(x, w, None, [2], [0], [1], True, [1], 1), X1,
                               r(3, 2, 3)),
    "conv_tbc": (lambda L, x, w, b: L.conv_tbc(x, w, b, 1), r(7, 2, 3), r(3, 3, 4), B),
    "avg_pool1d": (lambda L, x: L.avg_pool1d(x, 3), X1),
    "max_pool1d": (lambda L, x: L.max_pool1d(x, 3, [], 1), X1),
    "max_pool1d_with_indices": (lambda L, x: L.max_pool1d_with_indices(x, 2)[0], X1),
    "max_pool2d": (lambda L, x: L.max_pool2d(x, 2), X2),
    "max_pool3d": (lambda L, x: L.max_pool3d(x, 2, 1), X3),
    "adaptive_avg_pool1d": (lambda L, x: L.adaptive_avg_pool1d(x, 4), X1),
    "adaptive_max_pool1d": (lambda L, x: L.adaptive_max_pool1d(x, 4)[0], X1),
    "batch_norm": (lambda L, x, w, b: L.batch_norm(x, w, b, None, None, True, 0.1, 1e-5, False), X2, r(3), r(3)),
    "instance_norm": (lambda L, x, w, b: L.instance_norm(x, w, b, None, None, True, 0.1, 1e-5, False), X2, r(3),
                      r(3)),
    "group_norm": (lambda L, x, w: L.group_norm(x, 3, w), X2, r(3)),
    "layer_norm": (lambda L, x, w: L.layer_norm(x, [6], w), X2, r(6)),
    "rms_norm": (lambda L, x: L.rms_norm(x, [7, 6]), X2),
    "embedding": (lambda L, w, i: L.embedding(w, i, 1), r(5, 3), np.array([[0, 1], [4, 1]])),
    "bilinear": (lambda L, a, b, w: L.bilinear(a, b, w), r(2, 3), r(2, 4), r(5, 3, 4)),
    "celu": (lambda L, x: L.celu(x, 0.5), X1),
    "selu": (lambda L, x: L.selu(x), X1),
    "prelu": (lambda L, x, w: L.prelu(x, w), X1, r(3)),
    "hardshrink": (lambda L, x: L.hardshrink(x, 0.3), X1),
    "threshold": (lambda L, x: L.threshold(x, 0.1, -2.0), X1),
    "rrelu (eval)": (lambda L, x: L.rrelu(x), X1),
    "pixel_shuffle": (lambda L, x: L.pixel_shuffle(x, 2), r(1, 8, 2, 3)),
    "pixel_unshuffle": (lambda L, x: L.pixel_unshuffle(x, 2), r(1, 2, 4, 6)),
    "channel_shuffle": (lambda L, x: L.channel_shuffle(x, 3), r(1, 6, 2, 2)),
    "native_channel_shuffle": (lambda L, x: L.native_channel_shuffle(x, 2), r(1, 6, 2, 2)),
    "constant_pad_nd": (lambda L, x: L.constant_pad_nd(x, [1, 2], 0.5), X1),
    "affine_grid_generator": (lambda L, t: L.affine_grid_generator(t, [2, 3, 4, 5], False), r(2, 2, 3)),
    "grid_sampler": (lambda L, x, g: L.grid_sampler(x, g, 0, 1, False), X2, r(2, 3, 4, 2) * 0.8),
    "grid_sampler_2d nearest": (lambda L, x, g: L.grid_sampler_2d(x, g, 1, 0, True), X2, r(2, 3, 4, 2) * 0.8),
    "lstm_cell": (lambda L, x, h, c, wi, wh: sum(L.lstm_cell(x, (h, c), wi, wh)), r(2, 3), r(2, 4), r(2, 4),
                  r(16, 3), r(16, 4)),
    "gru_cell": (lambda L, x, h, wi, wh, b: L.gru_cell(x, h, wi, wh, b, b), r(2, 3), r(2, 4), r(12, 3), r(12, 4),
                 r(12)),
    "rnn_tanh_cell": (lambda L, x, h, wi, wh: L.rnn_tanh_cell(x, h, wi, wh), r(2, 3), r(2, 4), r(4, 3), r(4, 4)),
    "rnn_relu_cell": (lambda L, x, h, wi, wh: L.rnn_relu_cell(x, h, wi, wh), r(2, 3), r(2, 4), r(4, 3), r(4, 4)),
    "norm_except_dim": (lambda L, v: L.norm_except_dim(v, 2, 1), r(3, 4, 2)),
    "dropout (eval)": (lambda L, x: L.dropout(x, 0.5, False), X1),
    "feature_dropout p=0": (lambda L, x: L.feature_dropout(x, 0.0, True), X1),
    "alpha_dropout (eval)": (lambda L, x: L.alpha_dropout(x, 0.5, False), X1),
}


def _params(layers, dirs, gate, inp, hid, bias):
    out = []
    for layer in range(layers):
        for _ in range(dirs):
            size = inp if layer == 0 else hid * dirs
            out += [r(gate * hid, size), r(gate * hid, hid)] + ([r(gate * hid), r(gate * hid)] if bias else [])
    return out


LSTM_P = _params(2, 2, 4, 3, 4, True)
GRU_P = _params(1, 1, 3, 3, 4, False)
CASES["lstm"] = (lambda L, x, h, c, *p: sum(o.sum() for o in L.lstm(x, (h, c), p, True, 2, 0.0, False, True, True)),
                 r(2, 5, 3), r(4, 2, 4), r(4, 2, 4), *LSTM_P)
CASES["gru"] = (lambda L, x, h, *p: sum(o.sum() for o in L.gru(x, h, p, False, 1, 0.0, False, False, False)),
                r(5, 2, 3), r(1, 2, 4), *GRU_P)
CASES["rnn_tanh"] = (lambda L, x, h, *p: L.rnn_tanh(x, h, p, False, 1, 0.0, False, False, False)[0],
                     r(5, 2, 3), r(1, 2, 4), *_params(1, 1, 1, 3, 4, False))
CASES["rnn_relu"] = (lambda L, x, h, *p: L.rnn_relu(x, h, p, False, 1, 0.0, False, False, False)[1],
                     r(5, 2, 3), r(1, 2, 4), *_params(1, 1, 1, 3, 4, False))


@pytest.mark.parametrize("name", list(CASES))
def test_alias_as_torch(name):
    f, *arrays = CASES[name]
    outs, grads, names = [], [], []
    for lib in (torch, mt):
        args = [lib.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
        y = f(lib, *args)
        names.append(y.grad_fn.name() if y.grad_fn is not None else None)
        diff = [a for a in args if a.requires_grad]
        seed = lib.tensor(np.random.default_rng(1).standard_normal(tuple(y.shape)))
        if name != "native_channel_shuffle":  # (torch has no derivative for it)
            grads.append(lib.autograd.grad(y, diff, seed, allow_unused=True))
        outs.append(y)
    close(outs[1], outs[0], f"{name} value")
    for a, b in zip(*(grads[::-1] or [(), ()])):
        if a is not None or b is not None:
            close(a, b, f"{name} gradient")
    # composites whose last node differs from torch's (the recurrent layers are loops of cells, norm_except_dim a
    # norm); batch_norm and layer_norm are nn.functional's, which ends in Add/Mul where torch has one fused node
    if not name.startswith(("lstm", "gru", "rnn", "bilinear", "feature_dropout", "norm_except_dim", "batch_norm",
                            "layer_norm", "native_channel_shuffle")):
        assert names[1] == names[0]


def test_dropout_functions_as_torch():
    """random masks differ between libraries; what is compared: the shape, the scale of kept values, the in-place
    forms, native_dropout's mask, and that a whole feature map is dropped together"""
    x = np.abs(r(4, 6, 5)) + 1
    for lib in (torch, mt):
        t = lib.tensor(x)
        y = lib.dropout(t, 0.5, True)
        kept = y[y != 0] / t[y != 0]
        close(kept, np.full(tuple(kept.shape), 2.0), "dropout scale")
        out, mask = lib.native_dropout(t, 0.25, True)
        close(out, (t * mask / 0.75), "native_dropout")
        assert str(mask.dtype).endswith("bool")
        f = lib.feature_dropout(t, 0.5, True)
        per_map = (f == 0).all(-1) | (f != 0).all(-1)
        assert bool(per_map.all())
        u = t.clone()
        assert lib.dropout_(u, 0.5, True) is u
        v = t.clone()
        assert lib.relu_(v - 10) is not None and lib.feature_dropout_(v, 0.0, True) is v


def test_errors_as_torch():
    for lib in (torch, mt):
        with pytest.raises(RuntimeError):
            lib.feature_dropout(lib.ones(3), 0.5, True)
    with pytest.raises(RuntimeError, match="interpolation mode"):  # (torch computes garbage for a bad code)
        mt.grid_sampler(mt.ones(1, 1, 2, 2), mt.zeros(1, 1, 1, 2), 5, 0, False)


def test_native_norms_return_torch_statistics():
    x = r(2, 4, 5)
    for f in (lambda L, t: L.native_layer_norm(t, [5], None, None, 1e-5),
              lambda L, t: L.native_batch_norm(t, None, None, L.zeros(4, dtype=L.float64),
                                               L.ones(4, dtype=L.float64), True, 0.1, 1e-5),
              lambda L, t: L.native_batch_norm(t, None, None, L.zeros(4, dtype=L.float64),
                                               L.ones(4, dtype=L.float64), False, 0.1, 1e-5),
              lambda L, t: L.native_group_norm(t, None, None, 2, 4, 5, 2, 1e-5)):
        res = []
        for lib in (torch, mt):
            t = lib.tensor(x, requires_grad=True)
            out = f(lib, t)
            g, = lib.autograd.grad(out[0].sin().sum(), t)
            res.append(list(out) + [g])
        for a, b in zip(res[1], res[0]):
            close(a, b, "native norm")


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("last", [False, True])
def test_embedding_bag_as_torch(mode, last):
    w = r(10, 3)
    idx, offsets = np.array([1, 2, 4, 5, 4, 3]), np.array([0, 2, 3] + ([6] if last else []))
    res = []
    for lib in (torch, mt):
        t = lib.tensor(w, requires_grad=True)
        out = lib.embedding_bag(t, lib.tensor(idx), lib.tensor(offsets), False, mode, False, None, last)
        g, = lib.autograd.grad(out[0].sin().sum(), t)
        res.append(list(out) + [g])
    for a, b in zip(res[1], res[0]):
        close(a, b, f"embedding_bag mode {mode}")
    sizes = [len(lib.embedding_bag(lib.tensor(w).float(), lib.tensor(idx), lib.tensor(offsets), False, 0)[1])
             for lib in (torch, mt)]
    assert sizes[1] == sizes[0] == 0  # (float32's kernel leaves offset2bag empty)
