"""Round 21: affine_grid and grid_sample give torch 2.13's bits, found running the spatial transformer tutorial.

Its training drifted from torch from the second step on: affine_grid's base grid was a float64 linspace cast
to float32 (1 ulp off torch's float32 linspace in about a third of the entries), and grid_sample
unnormalized in float64 ((g + 1) * W/2 - 0.5), so that sampling points on pixel centres were not whole
numbers and the bilinear weights took the other neighbour (the gradient of theta changed sign and size).
These tests compare values and gradients (input, grid, theta) with torch bit for bit, over shapes, modes,
padding modes, align_corners and dtypes; where microtorch only gets torch's values to rounding they say so
and use a tight tolerance.
"""
import itertools
import warnings

import numpy as np
import pytest
import torch

import microtorch as mt


def _bits(a):
    return np.ascontiguousarray(a).view(np.uint8)


def _assert_bits(got, want, what=""):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (what, got.shape, want.shape, got.dtype, want.dtype)
    if not np.array_equal(_bits(got), _bits(want)):
        differ = got != want
        raise AssertionError(f"{what}: {int(differ.sum())} of {got.size} differ from torch's bits, by up to "
                             f"{np.nanmax(np.abs(got.astype(float) - want.astype(float)))}")


def _assert_bits_nan(got, want, what=""):
    """torch's bits, NaN where torch has NaN (a NaN's sign and payload not compared)"""
    got, want = np.asarray(got), np.asarray(want)
    assert np.array_equal(np.isnan(got), np.isnan(want)), what
    _assert_bits(np.where(np.isnan(got), 0, got).astype(got.dtype), np.where(np.isnan(want), 0, want).astype(
        want.dtype), what)


def _dt(lib, np_dtype):
    return getattr(lib, np.dtype(np_dtype).name)


# ---- linspace and the base grid ------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("steps", [0, 1, 2, 3, 7, 28, 29, 64, 100, 255, 1000, 4097])
def test_linspace_is_torchs_bitwise(dtype, steps):
    # (affine_grid builds its base grid with torch's linspace: microtorch.linspace already gives its bits)
    for start, end in ((-1, 1), (0, 1), (-3.7, 2.2), (1, -1)):
        got = mt.linspace(start, end, steps, dtype=_dt(mt, dtype)).numpy()
        want = torch.linspace(start, end, steps, dtype=_dt(torch, dtype)).numpy()
        _assert_bits(got, want, f"linspace({start}, {end}, {steps})")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("hw", [(28, 28), (7, 7), (5, 9), (1, 6), (64, 33)])
def test_identity_grid_is_torchs_linspace(dtype, align_corners, hw):
    h, w = hw
    out = {}
    for lib in (torch, mt):
        theta = lib.tensor([[[1.0, 0, 0], [0, 1, 0]]], dtype=_dt(lib, dtype))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (torch warns about unit sizes with align_corners)
            grid = lib.nn.functional.affine_grid(theta, (1, 1, h, w), align_corners=align_corners)
        xs = lib.linspace(-1, 1, w, dtype=_dt(lib, dtype))
        ref = xs if align_corners or w == 1 else xs * (w - 1) / w
        out[lib] = grid.numpy(), (ref.numpy() if w > 1 else np.zeros(1, dtype))
    _assert_bits(out[mt][0], out[torch][0], "grid")
    _assert_bits(out[mt][0][0, 0, :, 0], out[torch][1], "grid x: torch's linspace(-1, 1, W) [* (W-1) / W]")


# ---- affine_grid ---------------------------------------------------------------------------------------------
_SPATIAL = {2: [(28, 28), (5, 7), (1, 9), (40, 33)], 3: [(4, 5, 6), (1, 7, 3), (8, 8, 8), (16, 10, 12)]}


def _affine(lib, theta, size, align_corners, grad_grid):
    t = lib.tensor(theta, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grid = lib.nn.functional.affine_grid(t, size, align_corners=align_corners)
    g, = lib.autograd.grad(grid, t, lib.tensor(grad_grid))
    return grid.detach().numpy(), g.numpy(), g.stride()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("nd,shape", [(nd, i) for nd in (2, 3) for i in range(4)])
def test_affine_grid_values_and_theta_gradient(dtype, align_corners, nd, shape):
    rs = np.random.RandomState(shape)
    spatial = _SPATIAL[nd][shape]
    n = (1, 4, 3, 2)[shape]
    theta = (np.eye(nd, nd + 1)[None] + rs.randn(n, nd, nd + 1) * 0.2).astype(dtype)
    grad_grid = rs.randn(n, *spatial, nd).astype(dtype)
    got = _affine(mt, theta, (n, 3) + spatial, align_corners, grad_grid)
    want = _affine(torch, theta, (n, 3) + spatial, align_corners, grad_grid)
    _assert_bits(got[0], want[0], "grid")
    assert got[2] == want[2], "d theta is the transpose of a contiguous (N, n+1, n), as torch's"
    if dtype == np.float64 and nd == 3:
        # MKL's dgemm adds the first column of this (4, P) @ (P, 3) product in an order not found: to rounding
        np.testing.assert_allclose(got[1], want[1], rtol=0, atol=64 * np.finfo(dtype).eps * np.abs(want[1]).max())
    else:
        _assert_bits(got[1], want[1], "d theta")


def test_affine_grid_double_backward_is_torchs_graph():
    rs = np.random.RandomState(0)
    theta, weights = rs.randn(2, 2, 3).astype(np.float32), rs.randn(2, 5, 6, 2).astype(np.float32)
    out = {}
    for lib in (torch, mt):
        t, w = lib.tensor(theta, requires_grad=True), lib.tensor(weights, requires_grad=True)
        grid = lib.nn.functional.affine_grid(t, (2, 1, 5, 6), align_corners=False)
        gt, = lib.autograd.grad((grid * w).sum(), t, create_graph=True)
        bmm = gt.grad_fn.next_functions[0][0]
        names = (gt.grad_fn.name(), bmm.name(), [f[0] and f[0].name() for f in bmm.next_functions])
        gw, = lib.autograd.grad((gt ** 2).sum(), w)
        out[lib] = names, gt.detach().numpy(), gw.numpy()
    assert out[mt][0] == out[torch][0] == ("TransposeBackward0", "BmmBackward0", [None, "ViewBackward0"])
    _assert_bits(out[mt][1], out[torch][1], "d theta")
    _assert_bits(out[mt][2], out[torch][2], "d weights through d theta")


# ---- grid_sample ---------------------------------------------------------------------------------------------
def _grid(rs, kind, nd, n, c, insz, outsz, dtype, align_corners):
    if kind == "affine":  # (affine_grid's own grid: sampling points on and near pixel centres)
        theta = np.eye(nd, nd + 1)[None].repeat(n, 0) + rs.randn(n, nd, nd + 1) * 0.05 * (rs.rand() < 0.5)
        size = (n, c) + insz
        return torch.nn.functional.affine_grid(torch.tensor(theta.astype(dtype)), size,
                                               align_corners=align_corners).numpy()
    spread = 1.1 if kind == "rand" else 3.5
    return rs.uniform(-spread, spread, (n,) + outsz + (nd,)).astype(dtype)


def _sample(lib, x, grid, grad_out, mode, padding_mode, align_corners, input_grad=True):
    xt, gt = lib.tensor(x, requires_grad=input_grad), lib.tensor(grid, requires_grad=True)
    y = lib.nn.functional.grid_sample(xt, gt, mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    grads = lib.autograd.grad(y, (xt, gt) if input_grad else (gt,), lib.tensor(grad_out))
    return [y.detach().numpy()] + [g.numpy() for g in grads]


_CASES = [(nd, mode, pad) for nd in (2, 3) for mode in ("bilinear", "nearest", "bicubic")
          for pad in ("zeros", "border", "reflection") if not (nd == 3 and mode == "bicubic")]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("kind", ["affine", "rand", "wide"])
@pytest.mark.parametrize("nd,mode,padding_mode", _CASES)
def test_grid_sample_values_and_gradients_bitwise(dtype, align_corners, kind, nd, mode, padding_mode):
    rs = np.random.RandomState(hash((nd, mode, padding_mode, kind)) % 2 ** 31)
    n, c = 2, 3
    insz, outsz = ((5, 7), (9, 11)) if nd == 2 else ((4, 5, 6), (3, 4, 5))
    grid = _grid(rs, kind, nd, n, c, insz, outsz, dtype, align_corners)
    x = rs.randn(n, c, *insz).astype(dtype)
    grad_out = rs.randn(n, c, *grid.shape[1:-1]).astype(dtype)
    for input_grad in (True, False):  # (torch's backward kernel differs when the input needs no gradient)
        got = _sample(mt, x, grid, grad_out, mode, padding_mode, align_corners, input_grad)
        want = _sample(torch, x, grid, grad_out, mode, padding_mode, align_corners, input_grad)
        names = ["value", "d input", "d grid"] if input_grad else ["value", "d grid"]
        for g, w, what in zip(got, want, names):
            _assert_bits(g, w, f"{what} (input needs grad: {input_grad})")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_pixel_centres_read_exact_pixels(dtype, mode):
    # the identity grid of affine_grid (align_corners=False) falls on the pixel centres: in float32 torch reads
    # the pixels exactly there (but in rows 0 and 1, whose coordinates land a hair off the centre)
    w = 7
    img = (np.arange(w * w, dtype=dtype).reshape(1, 1, w, w)) ** 2
    grid = torch.nn.functional.affine_grid(torch.tensor([[[1.0, 0, 0], [0, 1, 0]]], dtype=_dt(torch, dtype)),
                                           (1, 1, w, w), align_corners=False).numpy()
    got = _sample(mt, img, grid, np.ones_like(img), mode, "zeros", False)
    want = _sample(torch, img, grid, np.ones_like(img), mode, "zeros", False)
    if mode == "bilinear" and dtype == np.float32:
        _assert_bits(got[0][:, :, 2:], img[:, :, 2:], "the pixels themselves")
    for g, wnt, what in zip(got, want, ["value", "d input", "d grid"]):
        _assert_bits(g, wnt, what)


def test_spatial_transformer_tutorial_steps_bitwise():
    # the tutorial's case: batch 4, 1x28x28, theta the identity plus noise, through affine_grid and grid_sample;
    # five SGD steps on theta stay torch's bits (loss, grid, output, d theta, d input)
    rs = np.random.RandomState(0)
    n = 4
    x = rs.rand(n, 1, 28, 28).astype(np.float32)
    theta0 = (np.eye(2, 3)[None].repeat(n, 0) + rs.randn(n, 2, 3) * 0.01).astype(np.float32)
    weights = rs.randn(n, 1, 28, 28).astype(np.float32)
    runs = {}
    for lib in (torch, mt):
        functional = lib.nn.functional
        theta, xt = lib.tensor(theta0, requires_grad=True), lib.tensor(x, requires_grad=True)
        steps = []
        for _ in range(5):
            grid = functional.affine_grid(theta, (n, 1, 28, 28), align_corners=False)
            y = functional.grid_sample(xt, grid, align_corners=False)
            loss = (y * lib.tensor(weights)).sum()
            d_theta, d_x = lib.autograd.grad(loss, (theta, xt))
            steps.append([np.float32(loss.item()), grid.detach().numpy(), y.detach().numpy(), d_theta.numpy(),
                          d_x.numpy()])
            with lib.no_grad():
                theta -= 0.001 * d_theta
        runs[lib] = steps
    for k, (got, want) in enumerate(zip(runs[mt], runs[torch])):
        for g, w, what in zip(got, want, ["loss", "grid", "output", "d theta", "d input"]):
            _assert_bits(g, w, f"step {k + 1}: {what}")


def _laid_out(lib, grid, layout):
    """(leaf, the grid passed on): a grid stored in another layout, seen as (N, H, W, 2)"""
    if layout == "planes":  # (as a conv's (N, 2, H, W) output permuted)
        leaf = lib.tensor(np.ascontiguousarray(grid.transpose(0, 3, 1, 2)), requires_grad=True)
        return leaf, leaf.permute(0, 2, 3, 1)
    if layout == "transposed":
        leaf = lib.tensor(np.ascontiguousarray(grid.transpose(0, 2, 1, 3)), requires_grad=True)
        return leaf, leaf.transpose(1, 2)
    leaf = lib.tensor(np.concatenate([grid, grid], 2), requires_grad=True)
    return leaf, leaf[:, :, ::2]


@pytest.mark.parametrize("layout", ["planes", "transposed", "strided"])
@pytest.mark.parametrize("mode,padding_mode", list(itertools.product(("bilinear", "nearest", "bicubic"),
                                                                     ("zeros", "reflection"))))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_grid_layouts(layout, mode, padding_mode, dtype):
    # the input's gradient adds up in torch's walk over the grid's layout (groups of lanes, or row by row)
    rs = np.random.RandomState(1)
    x = rs.randn(2, 2, 4, 5).astype(dtype)
    grid = rs.uniform(-1.2, 1.2, (2, 13, 11, 2)).astype(dtype)
    grad_out = rs.randn(2, 2, 13, 11).astype(dtype)
    out = {}
    for lib in (torch, mt):
        xt = lib.tensor(x, requires_grad=True)
        leaf, passed = _laid_out(lib, grid, layout)
        y = lib.nn.functional.grid_sample(xt, passed, mode=mode, padding_mode=padding_mode, align_corners=False)
        out[lib] = [y.detach().numpy()] + [g.numpy() for g in lib.autograd.grad(y, (xt, leaf), lib.tensor(grad_out))]
    if mode == "bicubic":  # (torch's other copies of its loop fuse other steps: the values to rounding)
        eps = np.finfo(dtype).eps
        np.testing.assert_allclose(out[mt][0], out[torch][0], rtol=4 * eps, atol=4 * eps)
    else:
        _assert_bits(out[mt][0], out[torch][0], "value")
    _assert_bits(out[mt][1], out[torch][1], "d input")
    _assert_bits(out[mt][2], out[torch][2], "d grid")


_SPECIALS = np.array([np.nan, np.inf, -np.inf, 1e30, -1e30, 1e6, -1e6, 1.0, -1.0, 0.0, -0.0, 3.0, -3.0,
                      1 - 1e-7, -1 + 1e-7])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("nd,mode,padding_mode", _CASES)
def test_special_grid_values_and_unit_sizes(dtype, align_corners, nd, mode, padding_mode):
    rs = np.random.RandomState(7)
    pool = _SPECIALS
    if nd == 2 and mode == "bilinear" and padding_mode != "zeros":
        pool = _SPECIALS[np.isfinite(_SPECIALS)]  # (torch's backward reads out of bounds at a NaN coordinate)
    for insz in ([(1, 1), (1, 6), (5, 1), (3, 4)] if nd == 2 else [(1, 1, 1), (2, 1, 3), (3, 4, 2)]):
        x = rs.randn(1, 2, *insz).astype(dtype)
        grid = rs.choice(pool, size=(1,) + (3, 5, 4)[3 - nd:] + (nd,)).astype(dtype)
        grad_out = rs.randn(1, 2, *grid.shape[1:-1]).astype(dtype)
        got = _sample(mt, x, grid, grad_out, mode, padding_mode, align_corners)
        want = _sample(torch, x, grid, grad_out, mode, padding_mode, align_corners)
        for g, w, what in zip(got, want, ["value", "d input", "d grid"]):
            _assert_bits_nan(g, w, f"{what} ({insz})")


@pytest.mark.parametrize("nd,mode,padding_mode", _CASES)
def test_create_graph_path_close_to_torch(nd, mode, padding_mode):
    # with create_graph the backward is Tensor ops (it differentiates again): torch's values to rounding
    rs = np.random.RandomState(3)
    insz = (4, 5) if nd == 2 else (3, 4, 5)
    x, grid = rs.randn(2, 2, *insz), rs.uniform(-1.1, 1.1, (2,) + insz + (nd,))
    out = {}
    for lib in (torch, mt):
        xt, gt = lib.tensor(x, requires_grad=True), lib.tensor(grid, requires_grad=True)
        y = lib.nn.functional.grid_sample(xt, gt, mode=mode, padding_mode=padding_mode, align_corners=False)
        dx, dg = lib.autograd.grad((y ** 2).sum(), (xt, gt), create_graph=True)
        second = lib.autograd.grad((dx ** 2).sum() + (dg ** 2).sum(), (xt, gt))
        out[lib] = [dx.detach().numpy(), dg.detach().numpy()] + [s.numpy() for s in second]
    for g, w in zip(out[mt], out[torch]):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12 * max(1.0, np.abs(w).max()))


def test_batch_and_channels_bitwise():
    # many channels and lane groups that end part-way (the d grid sum runs over channels, d input over lanes)
    rs = np.random.RandomState(5)
    x = rs.randn(3, 16, 9, 10).astype(np.float32)
    grid = rs.uniform(-1.05, 1.05, (3, 17, 13, 2)).astype(np.float32)
    grad_out = rs.randn(3, 16, 17, 13).astype(np.float32)
    for mode in ("bilinear", "bicubic"):
        got = _sample(mt, x, grid, grad_out, mode, "border", True)
        want = _sample(torch, x, grid, grad_out, mode, "border", True)
        for g, w, what in zip(got, want, ["value", "d input", "d grid"]):
            _assert_bits(g, w, f"{mode} {what}")


@pytest.mark.parametrize("x_shape,grid_shape", [((1, 2, 4, 5), (1, 0, 5, 2)), ((0, 2, 4, 5), (0, 3, 5, 2)),
                                                ((1, 0, 4, 5), (1, 3, 5, 2)), ((0, 2, 4, 5, 3), (0, 1, 2, 2, 3))])
def test_empty_shapes(x_shape, grid_shape):
    out = {}
    for lib in (torch, mt):
        xt, gt = lib.zeros(*x_shape, requires_grad=True), lib.zeros(*grid_shape, requires_grad=True)
        y = lib.nn.functional.grid_sample(xt, gt, align_corners=False)
        out[lib] = [y.detach().numpy()] + [g.numpy() for g in lib.autograd.grad(y.sum(), (xt, gt))]
    for g, w in zip(out[mt], out[torch]):
        _assert_bits(g, w)
