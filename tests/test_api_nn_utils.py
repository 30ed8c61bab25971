"""nn.utils additions against torch: total norms and clipping, weight_norm (parameters, outputs, gradients,
removal), BatchNorm fusion into Conv/Linear (weights as torch's, outputs unchanged), skip_init."""
import warnings

import numpy as np
import pytest
import torch

import microtorch as mt
from op_oracle import close

R = np.random.default_rng(5)


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, float("inf")])
def test_total_norm_and_clipping_as_torch(norm_type):
    grads = [R.standard_normal((3, 4)), R.standard_normal(5)]
    out = []
    for lib in (torch, mt):
        ps = [lib.zeros(g.shape, dtype=lib.float64, requires_grad=True) for g in grads]
        for p, g in zip(ps, grads):
            p.grad = lib.tensor(g)
        total = lib.nn.utils.get_total_norm([p.grad for p in ps], norm_type)
        lib.nn.utils.clip_grads_with_norm_(ps, 0.5, total)
        with pytest.warns(FutureWarning, match="clip_grad_norm` is now deprecated"):
            again = lib.nn.utils.clip_grad_norm(ps, 0.25, norm_type)
        out.append([total, again] + [p.grad for p in ps])
    for a, b in zip(out[1], out[0]):
        close(a, b, "norms and clipped grads")


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_as_torch(dim):
    x = R.standard_normal((4, 3))
    out = []
    for lib in (torch, mt):
        lin = lib.nn.Linear(3, 2).double()
        with lib.no_grad():
            lin.weight.copy_(lib.tensor(np.arange(6.0).reshape(2, 3) / 5 - 0.4))
            lin.bias.zero_()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lib.nn.utils.weight_norm(lin, dim=dim)
        names = [(n, tuple(p.shape)) for n, p in lin.named_parameters()]
        y = lin(lib.tensor(x))
        grads = lib.autograd.grad((y * y).sum(), [lin.weight_g, lin.weight_v])
        lib.nn.utils.remove_weight_norm(lin)
        out.append((names, [y, *grads, lin.weight], sorted(n for n, _ in lin.named_parameters())))
    assert out[1][0] == out[0][0] and out[1][2] == out[0][2]
    for a, b in zip(out[1][1], out[0][1]):
        close(a, b, "weight_norm")


@pytest.mark.parametrize("kind", ["conv", "linear"])
def test_fusion_as_torch(kind):
    rng = np.random.default_rng(6)
    state = {"weight": rng.standard_normal((4, 3, 3, 3) if kind == "conv" else (4, 3)), "bias": rng.standard_normal(4)}
    bn_state = {"weight": rng.uniform(0.5, 2, 4), "bias": rng.standard_normal(4), "running_mean": rng.standard_normal(4),
                "running_var": rng.uniform(0.5, 2, 4), "num_batches_tracked": np.array(3)}
    x = rng.standard_normal((2, 3, 5, 5) if kind == "conv" else (5, 3))
    out = []
    for lib in (torch, mt):
        layer = (lib.nn.Conv2d(3, 4, 3) if kind == "conv" else lib.nn.Linear(3, 4)).double()
        bn = (lib.nn.BatchNorm2d(4) if kind == "conv" else lib.nn.BatchNorm1d(4)).double()
        layer.load_state_dict({k: lib.tensor(v) for k, v in state.items()})
        bn.load_state_dict({k: lib.tensor(v) for k, v in bn_state.items()})
        layer.eval(), bn.eval()
        fused = (lib.nn.utils.fuse_conv_bn_eval(layer, bn) if kind == "conv" else
                 lib.nn.utils.fuse_linear_bn_eval(layer, bn))
        xin = lib.tensor(x)
        close(fused(xin), bn(layer(xin)), "fused layer = layer then BatchNorm", tol=1e-9)
        assert isinstance(fused.weight, lib.nn.Parameter) and fused is not layer
        out.append([fused.weight, fused.bias])
    for a, b in zip(out[1], out[0]):
        close(a, b, "fused weights")
    with pytest.raises(AssertionError, match="Fusion only for eval"):
        mt.nn.utils.fuse_linear_bn_eval(mt.nn.Linear(3, 4), mt.nn.BatchNorm1d(4))


def test_skip_init_as_torch():
    for lib in (torch, mt):
        lin = lib.nn.utils.skip_init(lib.nn.Linear, 3, 4)
        assert isinstance(lin, lib.nn.Linear) and tuple(lin.weight.shape) == (4, 3)
        with pytest.raises(RuntimeError, match="Module must support a 'device' arg"):
            lib.nn.utils.skip_init(lib.nn.Flatten)
