"""The spatial part of nn.functional and nn (issue 13) against torch 2.13: 3-d and transposed
convolution, pooling of every kind, unpooling, interpolate, grid_sample/affine_grid, shuffles.

Each op: values, grad_fn name, gradients, second order, forward mode and vmap (tests/op_oracle.py);
gradgradcheck on small sizes; modules (repr, parameters, state_dict, outputs); errors of torch's type.
"""
import warnings

import numpy as np
import pytest
import torch

import microtorch as mt
from op_oracle import check_op, close

R = np.random.default_rng(13)


def F(lib):
    return lib.nn.functional


def r(*shape):
    return R.standard_normal(shape)


X1, X2, X3 = r(2, 4, 7), r(2, 4, 6, 5), r(1, 2, 5, 4, 6)
XE = {1: r(2, 3, 8), 2: r(2, 4, 6, 4), 3: r(1, 2, 4, 4, 6)}  # even sizes: a 2-window pool's indices fit the unpool
W3, WT = r(3, 2, 2, 2, 2), r(4, 3, 2, 2)
SAMPLES2, SAMPLES3 = R.random((2, 4, 2)), R.random((1, 2, 3))
GRID2 = R.uniform(-1.3, 1.3, (2, 3, 4, 2))
GRID3 = R.uniform(-1.3, 1.3, (1, 2, 3, 2, 3))


# a max pool's gradient does not depend on the input, nor a linear op's: torch's second order is zeros
# (its backward is marked as depending on the input), ours is unused; gradgradcheck covers the rest
PIECEWISE = LINEAR = {"second_order": False}


def _unpool(n, **kw):
    def f(l, x):
        out, idx = getattr(F(l), f"max_pool{n}d")(x, 2, return_indices=True)
        return getattr(F(l), f"max_unpool{n}d")(out, idx, 2, **kw)
    return f


# (id, f(lib, *tensors), inputs, grad_fn, options for check_op)
OPS = [
    ("conv3d", lambda l, x, w, b: F(l).conv3d(x, w, b, stride=(1, 2, 1), padding=1, dilation=(1, 1, 2)),
     (X3, r(3, 2, 2, 3, 2), r(3)), "ConvolutionBackward0", {}),
    ("conv3d groups same", lambda l, x, w: F(l).conv3d(x, w, padding="same", groups=2), (X3, r(4, 1, 3, 1, 2)),
     "ConvolutionBackward0", {}),
    ("conv_transpose1d", lambda l, x, w, b: F(l).conv_transpose1d(x, w, b, stride=2, padding=1, output_padding=1),
     (X1, r(4, 3, 3), r(3)), "ConvolutionBackward0", {}),
    ("conv_transpose2d groups dilation", lambda l, x, w, b: F(l).conv_transpose2d(
        x, w, b, stride=(2, 3), padding=(1, 0), output_padding=(1, 2), groups=2, dilation=(1, 2)),
     (X2, r(4, 3, 3, 2), r(6)), "ConvolutionBackward0", {}),
    ("conv_transpose3d", lambda l, x, w: F(l).conv_transpose3d(x, w, stride=2, padding=1), (X3, r(2, 3, 2, 3, 2)),
     "ConvolutionBackward0", {}),
    ("max_pool3d", lambda l, x: F(l).max_pool3d(x, (2, 3, 2), (1, 2, 2), 1, (1, 1, 2), ceil_mode=True), (X3,),
     "MaxPool3DWithIndicesBackward0", PIECEWISE),
    ("avg_pool3d", lambda l, x: F(l).avg_pool3d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False), (X3,),
     "AvgPool3DBackward0", LINEAR),
    ("avg_pool3d divisor", lambda l, x: F(l).avg_pool3d(x, 2, divisor_override=3), (X3,), "AvgPool3DBackward0", LINEAR),
    ("adaptive_avg_pool1d", lambda l, x: F(l).adaptive_avg_pool1d(x, 3), (X1,), "SqueezeBackward1", LINEAR),
    ("adaptive_avg_pool2d", lambda l, x: F(l).adaptive_avg_pool2d(x, (4, None)), (X2,),
     "AdaptiveAvgPool2DBackward0", LINEAR),
    ("adaptive_avg_pool2d 1", lambda l, x: F(l).adaptive_avg_pool2d(x, 1), (X2,), "MeanBackward1", {}),
    ("adaptive_avg_pool3d", lambda l, x: F(l).adaptive_avg_pool3d(x, (2, 3, 4)), (X3,),
     "AdaptiveAvgPool3DBackward0", LINEAR),
    ("adaptive_max_pool1d", lambda l, x: F(l).adaptive_max_pool1d(x, 3), (X1,), "SqueezeBackward1", PIECEWISE),
    ("adaptive_max_pool2d", lambda l, x: F(l).adaptive_max_pool2d(x, (4, 3)), (X2,),
     "AdaptiveMaxPool2DBackward0", PIECEWISE),
    ("adaptive_max_pool3d", lambda l, x: F(l).adaptive_max_pool3d(x, (2, 1, 4)), (X3,),
     "AdaptiveMaxPool3DBackward0", PIECEWISE),
    ("lp_pool1d", lambda l, x: F(l).lp_pool1d(x, 2, 3, 2), (X1,), "PowBackward0", {}),
    ("lp_pool2d", lambda l, x: F(l).lp_pool2d(x.abs() + 0.1, 3, (2, 3)), (X2,), "PowBackward0", {}),
    ("lp_pool3d", lambda l, x: F(l).lp_pool3d(x.abs() + 0.1, 1.5, 2, ceil_mode=True), (X3,), "PowBackward0", {}),
    ("lp_pool2d inf", lambda l, x: F(l).lp_pool2d(x, float("inf"), 2), (X2,), "MaxPool2DWithIndicesBackward0",
     PIECEWISE),
    ("lp_pool1d -inf", lambda l, x: F(l).lp_pool1d(x, -float("inf"), 3, 2), (X1,), "NegBackward0", PIECEWISE),
    ("fractional_max_pool2d", lambda l, x: F(l).fractional_max_pool2d(
        x, (2, 3), output_size=(4, 3), _random_samples=l.tensor(SAMPLES2)), (X2,),
     "FractionalMaxPool2DBackward0", dict(PIECEWISE, vmap=False)),
    ("fractional_max_pool3d", lambda l, x: F(l).fractional_max_pool3d(
        x, 2, output_ratio=0.5, _random_samples=l.tensor(SAMPLES3)), (X3,),
     "FractionalMaxPool3DBackward0", dict(PIECEWISE, vmap=False)),
    ("max_unpool1d", _unpool(1), (XE[1],), "SqueezeBackward1", dict(PIECEWISE, vmap=False)),
    ("max_unpool2d", _unpool(2, output_size=(7, 5)), (X2,), "MaxUnpool2DBackward0", dict(PIECEWISE, vmap=False)),
    ("max_unpool3d", _unpool(3), (XE[3],), "MaxUnpool3DBackward0", dict(PIECEWISE, vmap=False)),
    ("pixel_shuffle", lambda l, x: F(l).pixel_shuffle(x, 2), (r(2, 3, 8, 2, 3),), "PixelShuffleBackward0", {}),
    ("pixel_unshuffle", lambda l, x: F(l).pixel_unshuffle(x, 2), (r(2, 3, 4, 6),), "PixelUnshuffleBackward0", {}),
    ("channel_shuffle", lambda l, x: F(l).channel_shuffle(x, 2), (X2,), "ChannelShuffleBackward0", {}),
    ("affine_grid 2d", lambda l, t: F(l).affine_grid(t, (2, 3, 4, 5), align_corners=False), (r(2, 2, 3),),
     "AffineGridGeneratorBackward0", {}),
    ("affine_grid 3d", lambda l, t: F(l).affine_grid(t, (1, 3, 2, 4, 3), align_corners=True), (r(1, 3, 4),),
     "AffineGridGeneratorBackward0", {}),
]
_INTERP = [("nearest", X1, "UpsampleNearest1DBackward0"), ("nearest", X2, "UpsampleNearest2DBackward0"),
           ("nearest", X3, "UpsampleNearest3DBackward0"), ("nearest-exact", X2, "UpsampleNearestExact2DBackward0"),
           ("linear", X1, "UpsampleLinear1DBackward0"), ("bilinear", X2, "UpsampleBilinear2DBackward0"),
           ("bicubic", X2, "UpsampleBicubic2DBackward0"), ("trilinear", X3, "UpsampleTrilinear3DBackward0"),
           ("area", X2, "AdaptiveAvgPool2DBackward0"), ("area", X3, "AdaptiveAvgPool3DBackward0")]
for _mode, _x, _name in _INTERP:
    for _kw in ({"scale_factor": 1.7}, {"scale_factor": 0.6}, {"size": 3}, {"scale_factor": 2.5,
                                                                             "recompute_scale_factor": True}):
        for _ac in ([None] if _mode in ("nearest", "nearest-exact", "area") else [False, True]):
            OPS.append((f"interpolate {_mode} {_x.ndim - 2}d {_kw} align_corners={_ac}",
                        lambda l, x, m=_mode, kw=_kw, ac=_ac: F(l).interpolate(x, mode=m, align_corners=ac, **kw),
                        (_x,), _name, LINEAR if _mode == "area" else {}))
for _mode in ("bilinear", "nearest"):
    for _pad in ("zeros", "border", "reflection"):
        for _ac in (False, True):
            for _x, _g, _name in ((X2, GRID2, "GridSampler2DBackward0"), (X3, GRID3, "GridSampler3DBackward0")):
                OPS.append((f"grid_sample {_x.ndim - 2}d {_mode} {_pad} align_corners={_ac}",
                            lambda l, x, g, m=_mode, p=_pad, ac=_ac: F(l).grid_sample(x, g, m, p, ac), (_x, _g),
                            _name, {"jvp": False, "second_order": _mode != "nearest"}))  # torch has no forward mode here: see below


@pytest.mark.parametrize("name, f, inputs, grad_fn, opts", OPS, ids=[o[0] for o in OPS])
def test_spatial_ops_as_torch(name, f, inputs, grad_fn, opts):
    check_op(f, *inputs, grad_fn=grad_fn, **opts)


def _torch_bilinear_sample(x, g):
    """torch's forward mode has no grid_sample: the same sampling (bilinear, zeros, align_corners=True, 2-d)
    in torch ops it can differentiate, for the forward-mode tables (checked against F.grid_sample below)."""
    n, c, h, w = x.shape
    ix, iy = (g[..., 0] + 1) / 2 * (w - 1), (g[..., 1] + 1) / 2 * (h - 1)
    out = 0
    for dx in (0, 1):
        for dy in (0, 1):
            xi, yi = ix.detach().floor() + dx, iy.detach().floor() + dy
            weight = (1 - (ix - xi).abs()) * (1 - (iy - yi).abs()) * ((xi >= 0) & (xi < w) & (yi >= 0) & (yi < h))
            idx = (yi.clamp(0, h - 1) * w + xi.clamp(0, w - 1)).long().reshape(n, 1, -1).expand(n, c, -1)
            out = out + x.reshape(n, c, -1).gather(2, idx).reshape((n, c) + tuple(g.shape[1:3])) * weight.unsqueeze(1)
    return out


def _grid_sample_fw(l, x, g):
    if l is torch:
        return _torch_bilinear_sample(x, g)
    return F(l).grid_sample(x, g, align_corners=True)


def test_torch_side_of_the_forward_mode_table_is_grid_sample():
    x, g = torch.tensor(X2), torch.tensor(GRID2)
    close(_torch_bilinear_sample(x, g), F(torch).grid_sample(x, g, align_corners=True), "bilinear sample")


# for tests/test_forward_ad.py (through test_api_ops.FORWARD_AD_OPS): forward mode against torch's
FORWARD_AD_SPATIAL = [(name, f, [("f", np.shape(a)) for a in inputs]) for name, f, inputs, _, _ in OPS
                      if not name.startswith(("interpolate", "grid_sample")) or "align_corners=True" in name
                      and not name.startswith("grid_sample")]
FORWARD_AD_SPATIAL += [("grid_sample", _grid_sample_fw, [("f", X2.shape), ("f", GRID2.shape)])]
# and forward over reverse (jvp of grad), which runs the jvp rules of the ops that only backward uses
FWD_OVER_REV_SPATIAL = [
    (name, lambda L, *a, f=f: (f(L, *a) ** 2).sum(), [("f", np.shape(x)) for x in inputs])
    for name, f, inputs, _, _ in OPS
    if name in ("conv3d", "conv_transpose2d groups dilation", "max_pool3d", "avg_pool3d", "adaptive_max_pool2d",
                "fractional_max_pool2d", "max_unpool2d", "pixel_shuffle", "channel_shuffle",
                "interpolate bicubic 2d {'size': 3} align_corners=False")]
FWD_OVER_REV_SPATIAL += [("grid_sample", lambda L, x, g: (_grid_sample_fw(L, x, g) ** 2).sum(),
                          [("f", X2.shape), ("f", GRID2.shape)])]


GRADGRAD = [
    ("conv_transpose2d", lambda x, w: mt.nn.functional.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1),
     ((1, 2, 3, 3), (2, 2, 3, 3))),
    ("conv3d", lambda x, w: mt.nn.functional.conv3d(x, w, padding=1), ((1, 2, 3, 3, 2), (2, 2, 2, 2, 2))),
    ("interpolate bicubic", lambda x: mt.nn.functional.interpolate(x, size=(4, 3), mode="bicubic"), ((1, 1, 3, 3),)),
    ("grid_sample", lambda x, g: mt.nn.functional.grid_sample(x, g, padding_mode="reflection", align_corners=False),
     ((1, 2, 3, 3), (1, 2, 2, 2))),
    ("affine_grid", lambda t: mt.nn.functional.affine_grid(t, (1, 1, 2, 3), align_corners=False), ((1, 2, 3),)),
    ("lp_pool2d", lambda x: mt.nn.functional.lp_pool2d(x.abs() + 0.5, 2, 2), ((1, 1, 4, 4),)),
]


@pytest.mark.parametrize("name, f, shapes", GRADGRAD, ids=[g[0] for g in GRADGRAD])
def test_spatial_gradgradcheck(name, f, shapes):
    inputs = [mt.tensor(R.uniform(-0.9, 0.9, s), requires_grad=True) for s in shapes]
    assert mt.autograd.gradcheck(f, inputs)
    assert mt.autograd.gradgradcheck(f, inputs)


def test_grid_sample_forward_mode_is_the_jacobian_times_the_tangent():
    """torch has no forward mode for grid_sample: compare our jvp with torch's reverse-mode Jacobian."""
    for x, g in ((X2[:1, :2, :3, :3], GRID2[:1, :2, :2]), (X3[:, :1, :3, :2, :2], GRID3[:, :1, :2, :2])):
        tx, tg = R.standard_normal(x.shape), R.standard_normal(g.shape)
        for pad in ("zeros", "border", "reflection"):
            f = lambda lib: lambda a, b: F(lib).grid_sample(a, b, padding_mode=pad, align_corners=False)  # noqa: E731
            jx, jg = torch.autograd.functional.jacobian(f(torch), (torch.tensor(x), torch.tensor(g)))
            want = (jx.reshape(-1, x.size) @ torch.tensor(tx).reshape(-1) +
                    jg.reshape(-1, g.size) @ torch.tensor(tg).reshape(-1))
            _, got = mt.func.jvp(f(mt), (mt.tensor(x), mt.tensor(g)), (mt.tensor(tx), mt.tensor(tg)))
            close(got.reshape(-1), want, f"grid_sample jvp {pad}")


def test_pool_indices_as_torch():
    for name, x, kw in (("max_pool3d", X3, dict(kernel_size=2, padding=1)), ("max_pool1d_with_indices", X1,
                        dict(kernel_size=3)), ("max_pool2d_with_indices", X2, dict(kernel_size=2)),
                        ("max_pool3d_with_indices", X3, dict(kernel_size=(1, 2, 3))),
                        ("adaptive_max_pool1d_with_indices", X1, dict(output_size=4)),
                        ("adaptive_max_pool2d_with_indices", X2, dict(output_size=(3, 4))),
                        ("adaptive_max_pool3d_with_indices", X3, dict(output_size=2))):
        kw = dict(kw, return_indices=True) if name == "max_pool3d" else kw
        (ot, it), (om, im) = (getattr(F(lib), name)(lib.tensor(x), **kw) for lib in (torch, mt))
        close(om, ot, name)
        assert im.dtype == mt.int64 and np.array_equal(im.numpy(), it.numpy()), name
    for n, x, s in ((2, X2, SAMPLES2), (3, X3, SAMPLES3)):
        (ot, it), (om, im) = (getattr(F(lib), f"fractional_max_pool{n}d_with_indices")(
            lib.tensor(x), 2, output_size=2, _random_samples=lib.tensor(s)) for lib in (torch, mt))
        close(om, ot, "fractional")
        assert np.array_equal(im.numpy(), it.numpy())


def test_unbatched_inputs_as_torch():
    calls = ["F.conv3d(x3[0], w3)", "F.conv_transpose2d(x2[0], wt)", "F.max_pool3d(x3[0], 2)", "F.avg_pool3d(x3[0], 2)",
             "F.adaptive_avg_pool2d(x2[0], 3)", "F.adaptive_max_pool3d(x3[0], 2)", "F.lp_pool2d(x2[0].abs(), 2, 2)",
             "F.fractional_max_pool2d(x2[0], 2, output_size=3, _random_samples=lib.tensor(SAMPLES2[:1]))",
             "F.pixel_shuffle(x2[0, :4], 2)", "F.max_unpool2d(*F.max_pool2d(x2[0, :, :, :4], 2, return_indices=True), 2)"]
    for call in calls:
        out = [eval(call, {"F": F(lib), "lib": lib, "SAMPLES2": SAMPLES2, "x3": lib.tensor(X3, requires_grad=True),
                           "x2": lib.tensor(X2, requires_grad=True), "w3": lib.tensor(W3), "wt": lib.tensor(WT)})
               for lib in (torch, mt)]
        close(out[1], out[0], call)
        assert out[1].grad_fn.name() == out[0].grad_fn.name(), call  # torch's kernels take unbatched inputs as such


def test_fractional_max_pool_draws_its_own_samples():
    x = mt.tensor(X2)
    out, idx = F(mt).fractional_max_pool2d(x, 2, output_ratio=0.5, return_indices=True)
    assert tuple(out.shape) == (2, 4, 3, 2)
    # every output is the maximum of some 2x2 window of its plane, at the index returned
    flat = X2.reshape(2, 4, -1)
    np.testing.assert_array_equal(np.take_along_axis(flat, idx.numpy().reshape(2, 4, -1), 2).ravel(),
                                  out.numpy().ravel())


# ---- modules -------------------------------------------------------------------------------------------
MODULES = [("Conv3d(2, 4, 3, stride=2, padding=1, bias=False)", X3),
           ("Conv3d(2, 4, (2, 1, 3), groups=2, dilation=(1, 1, 2))", X3),
           ("ConvTranspose1d(4, 2, 3, stride=2, output_padding=1)", X1),
           ("ConvTranspose2d(4, 6, (3, 2), stride=2, padding=1, groups=2, dilation=2)", X2),
           ("ConvTranspose3d(2, 3, 2, bias=False)", X3), ("MaxPool3d(2, stride=1, padding=1)", X3),
           ("AvgPool3d(2, ceil_mode=True)", X3), ("AdaptiveAvgPool1d(3)", X1), ("AdaptiveAvgPool2d((3, None))", X2),
           ("AdaptiveAvgPool3d(2)", X3), ("AdaptiveMaxPool1d(3)", X1), ("AdaptiveMaxPool2d(3, return_indices=True)", X2),
           ("AdaptiveMaxPool3d((2, 1, 3))", X3), ("LPPool1d(2, 3)", X1), ("LPPool2d(2, 3, stride=2)", X2),
           ("LPPool3d(1, 2)", X3), ("FractionalMaxPool2d(2, output_size=3, _random_samples=S2)", X2),
           ("FractionalMaxPool3d(2, output_ratio=0.5, _random_samples=S3)", X3), ("PixelShuffle(2)", r(2, 8, 3, 3)),
           ("PixelUnshuffle(2)", r(2, 2, 4, 6)), ("ChannelShuffle(2)", X2), ("Upsample(scale_factor=2, mode='bilinear')",
                                                                            X2),
           ("Upsample(size=(4, 5))", X2), ("Upsample(scale_factor=(1.5, 2.0, 1.0), mode='trilinear')", X3),
           ("UpsamplingNearest2d(scale_factor=2)", X2), ("UpsamplingBilinear2d(size=5)", X2)]


@pytest.mark.parametrize("expr, x", MODULES, ids=[m[0] for m in MODULES])
def test_spatial_modules_as_torch(expr, x):
    tm, mm = (eval("nn." + expr, {"nn": lib.nn, "S2": lib.tensor(SAMPLES2), "S3": lib.tensor(SAMPLES3)})
              for lib in (torch, mt))
    assert repr(mm) == repr(tm)
    assert [(n, tuple(p.shape)) for n, p in mm.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in tm.named_parameters()]
    assert list(mm.state_dict()) == list(tm.state_dict())
    mm.load_state_dict({k: mt.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    tm.double(), mm.double()
    xt, xm = torch.tensor(x, requires_grad=True), mt.tensor(x, requires_grad=True)
    yt, ym = tm(xt), mm(xm)
    yt, ym = (yt[0], ym[0]) if isinstance(yt, tuple) else (yt, ym)
    close(ym, yt, expr)
    yt.pow(2).sum().backward()
    ym.pow(2).sum().backward()
    close(xm.grad, xt.grad, expr + " grad")
    for (n, p), (_, q) in zip(mm.named_parameters(), tm.named_parameters()):
        close(p.grad, q.grad, f"{expr} {n}.grad")


def test_conv_transpose_output_size_and_default_init_as_torch():
    for lib in (torch, mt):
        m = lib.nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1)
        assert tuple(m(lib.zeros(1, 2, 4, 4), output_size=(8, 8)).shape) == (1, 3, 8, 8)
        assert tuple(m(lib.zeros(1, 2, 4, 4), output_size=[1, 3, 7, 7]).shape) == (1, 3, 7, 7)
        with pytest.raises(ValueError):
            m(lib.zeros(1, 2, 4, 4), output_size=(9, 9))
    m = mt.nn.ConvTranspose3d(4, 6, 3, groups=2)  # U(-b, b) with b = 1/sqrt(fan_in), fan_in = 6/2 * 27
    bound = 1 / np.sqrt(3 * 27)
    assert tuple(m.weight.shape) == (4, 3, 3, 3, 3) and np.abs(m.weight.detach().numpy()).max() <= bound
    assert np.abs(m.bias.detach().numpy()).max() <= bound


def test_max_unpool_modules_as_torch():
    for n, x in XE.items():
        outs = []
        for lib in (torch, mt):
            pool = getattr(lib.nn, f"MaxPool{n}d")(2, return_indices=True)
            unpool = getattr(lib.nn, f"MaxUnpool{n}d")(2)
            assert repr(unpool) == repr(getattr(torch.nn, f"MaxUnpool{n}d")(2))
            outs.append(unpool(*pool(lib.tensor(x)), output_size=None))
        close(outs[1], outs[0], f"MaxUnpool{n}d")


def test_deprecated_upsample_names_warn_and_agree_with_torch():
    for name, kw in (("upsample", dict(scale_factor=2, mode="bilinear", align_corners=False)),
                     ("upsample_nearest", dict(size=(3, 4))), ("upsample_bilinear", dict(scale_factor=1.5))):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ym = getattr(F(mt), name)(mt.tensor(X2), **kw)
        assert any("deprecated" in str(w.message) for w in caught)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yt = getattr(F(torch), name)(torch.tensor(X2), **kw)
        close(ym, yt, name)


def test_native_channel_shuffle_values_as_torch():
    close(F(mt).native_channel_shuffle(mt.tensor(X2), 2), F(torch).native_channel_shuffle(torch.tensor(X2), 2), "ncs")


# ---- errors ----------------------------------------------------------------------------------------------
ERRORS = [
    ("F.conv3d(x2, lib.ones(3, 4, 2, 2, 2))", RuntimeError),
    ("F.conv_transpose2d(x2, lib.ones(3, 2, 2, 2))", RuntimeError),
    ("F.conv_transpose2d(x2, lib.ones(4, 2, 2, 2), stride=2, output_padding=2)", RuntimeError),
    ("F.max_pool3d(x2[0, 0], 2)", RuntimeError), ("F.avg_pool3d(x3, 2, padding=2)", RuntimeError),
    ("F.adaptive_avg_pool2d(x2, (1, 2, 3))", RuntimeError), ("F.adaptive_max_pool2d(x2, -1)", RuntimeError),
    ("F.adaptive_avg_pool1d(x2, 2)", RuntimeError),
    ("F.fractional_max_pool2d(x2, 2)", ValueError), ("F.fractional_max_pool2d(x2, 4, output_size=5)", RuntimeError),
    ("F.max_unpool2d(x2, lib.zeros(2, 4, 6, 5, dtype=lib.int64), 2, output_size=(30, 30))", ValueError),
    ("F.interpolate(x2, size=3, scale_factor=2)", ValueError), ("F.interpolate(x2)", ValueError),
    ("F.interpolate(x2, size=3, mode='linear')", NotImplementedError),
    ("F.interpolate(x2, size=3, mode='nearest', align_corners=True)", ValueError),
    ("F.interpolate(x2, size=(3, 4, 5))", ValueError), ("F.interpolate(x2, size=3, mode='cubic')", NotImplementedError),
    ("F.pixel_shuffle(x2, 3)", RuntimeError), ("F.pixel_unshuffle(x2, 2)", RuntimeError),
    ("F.pixel_shuffle(lib.ones(4, 4), 2)", RuntimeError),
    ("F.channel_shuffle(x2, 3)", RuntimeError), ("F.channel_shuffle(x2, 0)", RuntimeError),
    ("F.affine_grid(lib.ones(2, 3, 3), (2, 1, 4, 4), align_corners=False)", ValueError),
    ("F.affine_grid(lib.ones(2, 2, 3), (2, 1, 4), align_corners=False)", NotImplementedError),
    ("F.grid_sample(x2, lib.zeros(2, 3, 3, 3), align_corners=False)", RuntimeError),
    ("F.grid_sample(x2, lib.zeros(1, 3, 3, 2), align_corners=False)", RuntimeError),
    ("F.grid_sample(x2, lib.zeros(2, 3, 3, 2), mode='cubic', align_corners=False)", ValueError),
    ("F.grid_sample(x2, lib.zeros(2, 3, 3, 2), padding_mode='wrap', align_corners=False)", ValueError),
    ("lib.nn.FractionalMaxPool2d(2)", ValueError), ("lib.nn.FractionalMaxPool2d(2, 3, 0.5)", ValueError),
    ("lib.nn.FractionalMaxPool2d(2, output_ratio=1.5)", ValueError),
    ("lib.nn.ConvTranspose2d(2, 2, 3, padding_mode='reflect')", ValueError),
]


@pytest.mark.parametrize("call, exc", ERRORS, ids=[e[0] for e in ERRORS])
def test_spatial_errors_as_torch(call, exc):
    for lib in (torch, mt):
        with pytest.raises(exc):
            eval(call, {"F": lib.nn.functional, "lib": lib, "x2": lib.tensor(X2), "x3": lib.tensor(X3)})


def test_errors_name_the_op_and_the_fix():
    with pytest.raises(RuntimeError, match="pixel_shuffle.*divisible"):
        F(mt).pixel_shuffle(mt.tensor(X2), 3)
    with pytest.raises(RuntimeError, match="output padding must be smaller"):
        F(mt).conv_transpose2d(mt.tensor(X2), mt.ones(4, 2, 2, 2, dtype=mt.float64), stride=2, output_padding=2)
    with pytest.raises(RuntimeError, match="bicubic interpolation only supports 4D input.*bilinear"):
        F(mt).grid_sample(mt.tensor(X3), mt.zeros(1, 2, 3, 3, 3, dtype=mt.float64), mode="bicubic", align_corners=False)


def test_ceil_mode_window_that_hangs_over_a_tiny_input_as_torch():
    x = R.standard_normal((1, 1, 1, 3))
    for name in ("max_pool2d",):  # torch keeps the window that starts inside and hangs over the end
        out = [getattr(F(lib), name)(lib.tensor(x), 2, ceil_mode=True, return_indices=True) for lib in (torch, mt)]
        close(out[1][0], out[0][0], name)
        assert np.array_equal(out[1][1].numpy(), out[0][1].numpy())
    x3 = R.standard_normal((1, 1, 1, 2, 3))
    close(F(mt).max_pool3d(mt.tensor(x3), 2, ceil_mode=True), F(torch).max_pool3d(torch.tensor(x3), 2, ceil_mode=True),
          "max_pool3d")
    for lib in (torch, mt):  # an average pool refuses a kernel larger than the input
        with pytest.raises(RuntimeError):
            F(lib).avg_pool3d(lib.tensor(x3), (1, 3, 3))
