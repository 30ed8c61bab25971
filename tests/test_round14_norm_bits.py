"""layer_norm's and group_norm's forward values, mean and rstd, layer_norm's gradients (float32 and float64) and
batch_norm's training gradients (float32), bit for bit beside torch 2.13.

torch takes each row's moments with RowwiseMoments (Welford's updates in the lanes of a 32-byte vector, chunks of 16
vectors merged in a cascade, a scalar run for the tail: ops/_moments_kernel.py) and applies weight and bias with
multiply-adds. Rows up to 5,000 wide reach three levels of the cascade."""
import numpy as np
import pytest
import torch

import microtorch as mt
from microtorch.ops._moments_kernel import rowwise_moments

WIDTHS = list(range(1, 70)) + [96, 127, 128, 129, 255, 256, 257, 1000, 1025, 4100]


def _rows(width, dtype, seed):
    rng = np.random.default_rng(seed * 10007 + width)
    return (rng.standard_normal((3, width)) * [[1.0], [40.0], [1e-3]] + [[0.0], [5.0], [0.0]]).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_row_moments_are_torchs(dtype):
    for width in WIDTHS:
        x = _rows(width, dtype, 0)
        _, mean, rstd = torch.native_layer_norm(torch.tensor(x), (width,), None, None, 1e-5)
        got_mean, var = rowwise_moments(x)
        np.testing.assert_array_equal(got_mean, mean.numpy().ravel(), err_msg=f"mean, width {width}")
        np.testing.assert_array_equal((1 / np.sqrt(var + dtype(1e-5))).astype(dtype), rstd.numpy().ravel(),
                                      err_msg=f"rstd, width {width}")


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("affine", ["none", "weight", "bias", "both"])
def test_layer_norm_forward_is_torchs_to_the_bit(dtype, affine):
    for width in WIDTHS[::3]:
        x = _rows(width, np.float64, 1).reshape(3, 1, width)
        rng = np.random.default_rng(width)
        w, b = rng.standard_normal(width), rng.standard_normal(width)
        outs = []
        for L in (torch, mt):
            dt = getattr(L, dtype)
            weight = L.tensor(w, dtype=dt) if affine in ("weight", "both") else None
            bias = L.tensor(b, dtype=dt) if affine in ("bias", "both") else None
            outs.append(L.nn.functional.layer_norm(L.tensor(x, dtype=dt), (width,), weight, bias).numpy())
        np.testing.assert_array_equal(outs[1], outs[0], err_msg=f"width {width}")


def test_nn_layer_norm_module_matches_torch_bit_for_bit():
    """the module a transformer tutorial uses: weight and bias both there (one multiply-add per element)"""
    x = _rows(64, np.float32, 2).reshape(3, 64)
    outs = []
    for L in (torch, mt):
        L.manual_seed(0)
        ln = L.nn.LayerNorm(64)
        with L.no_grad():
            ln.weight.copy_(L.tensor(np.linspace(0.5, 1.5, 64, dtype=np.float32)))
            ln.bias.copy_(L.tensor(np.linspace(-0.2, 0.3, 64, dtype=np.float32)))
        outs.append(ln(L.tensor(x)).detach().numpy())
    np.testing.assert_array_equal(outs[1], outs[0])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("shape,groups", [((2, 4, 5), 2), ((3, 6, 7), 3), ((1, 8, 33), 4), ((2, 4, 1), 4),
                                          ((2, 6, 10, 10), 2), ((2, 4, 3), 1)])
def test_group_norm_forward_is_torchs_to_the_bit(dtype, shape, groups):
    rng = np.random.default_rng(sum(shape))
    x = rng.standard_normal(shape) * 3 + 1
    w, b = rng.standard_normal(shape[1]), rng.standard_normal(shape[1])
    for affine in range(4):
        outs = []
        for L in (torch, mt):
            dt = getattr(L, dtype)
            weight = L.tensor(w, dtype=dt) if affine & 1 else None
            bias = L.tensor(b, dtype=dt) if affine & 2 else None
            outs.append(L.nn.functional.group_norm(L.tensor(x, dtype=dt), groups, weight, bias).numpy())
        np.testing.assert_array_equal(outs[1], outs[0], err_msg=f"affine {affine}")


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("affine", ["none", "weight", "bias", "both"])
def test_layer_norm_gradients_are_torchs_to_the_bit(dtype, affine):
    """dx, dweight, dbias by torch's kernel when backward records nothing (rows split between torch's threads)"""
    for width in [1, 3, 4, 5, 7, 8, 9, 17, 64, 100, 257]:
        for rows in (1, 3, 8):
            rng = np.random.default_rng(width * 31 + rows)
            x, gy = rng.standard_normal((rows, width)) * 3 + 1, rng.standard_normal((rows, width))
            w, b = rng.standard_normal(width), rng.standard_normal(width)
            grads = []
            for L in (torch, mt):
                dt = getattr(L, dtype)
                xt = L.tensor(x, dtype=dt, requires_grad=True)
                wt = L.tensor(w, dtype=dt, requires_grad=True) if affine in ("weight", "both") else None
                bt = L.tensor(b, dtype=dt, requires_grad=True) if affine in ("bias", "both") else None
                L.nn.functional.layer_norm(xt, (width,), wt, bt).backward(L.tensor(gy, dtype=dt))
                grads.append([t.grad.numpy() for t in (xt, wt, bt) if t is not None])
            for want, got in zip(*grads):
                np.testing.assert_array_equal(got, want, err_msg=f"width {width}, rows {rows}")


def test_layer_norm_double_backward_still_differentiates_its_formula():
    """with create_graph the gradient is the formula in Tensor ops, so a second derivative exists (as torch's)"""
    out = []
    for L in (torch, mt):
        x = L.tensor(np.linspace(-1.0, 2.0, 12).reshape(3, 4), requires_grad=True)
        (g,) = L.autograd.grad((L.nn.functional.layer_norm(x, (4,)) ** 3).sum(), x, create_graph=True)
        (gg,) = L.autograd.grad(g.sum(), x)
        out.append(gg.numpy())
    np.testing.assert_allclose(out[1], out[0], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("shape", [(4, 3), (32, 16), (5, 33), (2, 3, 4, 4), (16, 8, 3, 3), (3, 2, 7), (2, 1, 17)])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_training_gradients_are_torchs_to_the_bit(shape, affine):
    """float32 training-mode batch_norm: the (N, C, ...) kernel and the (N, C) channels-last one"""
    rng = np.random.default_rng(sum(shape))
    x, gy = (rng.standard_normal(shape) * 2 + 1).astype(np.float32), rng.standard_normal(shape).astype(np.float32)
    grads = []
    for L in (torch, mt):
        xt = L.tensor(x, requires_grad=True)
        w = L.tensor(np.linspace(0.5, 1.5, shape[1], dtype=np.float32), requires_grad=True) if affine else None
        b = L.tensor(np.linspace(-1, 1, shape[1], dtype=np.float32), requires_grad=True) if affine else None
        L.nn.functional.batch_norm(xt, None, None, w, b, training=True).backward(L.tensor(gy))
        grads.append([t.grad.numpy() for t in (xt, w, b) if t is not None])
    for want, got in zip(*grads):
        np.testing.assert_array_equal(got, want)


def test_a_small_normalized_model_has_torchs_gradient_with_the_visualizer_recording_or_not():
    """LayerNorm then BatchNorm1d: the input's gradient is torch's to the bit, and viz.record (a listener on the
    engine's events) does not change a bit of it"""
    from microtorch import viz

    def input_grad(L):
        x = L.tensor(np.linspace(-1, 2, 12, dtype=np.float32).reshape(3, 4), requires_grad=True)
        (L.nn.BatchNorm1d(4)(L.nn.LayerNorm(4)(x)) ** 2).sum().backward()
        return x.grad.numpy().copy()
    plain = input_grad(mt)
    with viz.record() as tape:
        recorded = input_grad(mt)
    assert len(tape) > 0
    np.testing.assert_array_equal(recorded, plain)
    np.testing.assert_array_equal(plain, input_grad(torch))


@pytest.mark.parametrize("shape", [(3, 1, 0, 0), (0, 4), (2, 0, 3)])
def test_empty_layer_norms_backward_as_torch(shape):
    """seed 2,902,680: rows of no elements (or no rows) take the formula, whose gradient is empty, as torch's"""
    grads = []
    for L in (torch, mt):
        x = L.zeros(shape, dtype=L.float64, requires_grad=True)
        w = L.ones(shape[-1:], dtype=L.float64, requires_grad=True)
        L.nn.functional.layer_norm(x, shape[-1:], w).sum().backward()
        grads.append((x.grad.shape, w.grad.numpy().tolist()))
    assert grads[1] == (tuple(grads[0][0]), grads[0][1])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(2, 3), (2, 3, 4)])
def test_batch_norm_of_an_infinity_gives_torchs_nan_without_a_numpy_warning(dtype, shape):
    """the batch statistics are computed before the op runs: numpy is kept quiet there too"""
    import warnings
    x = np.arange(float(np.prod(shape))).reshape(shape)
    x[(1,) * len(shape)] = np.inf
    outs = []
    for L in (torch, mt):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            y = L.nn.functional.batch_norm(L.tensor(x, dtype=getattr(L, dtype)), None, None, training=True)
        outs.append(y.numpy())
    np.testing.assert_array_equal(np.isnan(outs[1]), np.isnan(outs[0]))
