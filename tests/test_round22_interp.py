"""Round 22: interpolate's linear, bilinear, bicubic and trilinear modes give torch 2.13's bits, found with a textbook's
resize check.

microtorch multiplied each spatial dim by an (out, in) matrix built in float64: the source coordinates and weights
were not torch's float32 ones, and the matrix product added the taps (zero weights too) in another order, so most
elements differed in the last bits (float32 by up to 1e-5 on unit data, float64 by a few ulp). Now ops/upsample.py's
Taps computes the indices and weights in the input's compute type with torch's fused multiply-adds, sums each output's
taps as torch's kernels do (the generic nested sum, or the channels-last kernel's corner sum where torch picks it),
and its backward adds each output's share into the input in the order of torch's backward kernels. These tests
compare values, gradients, second-order gradients and forward-mode tangents with torch bit for bit, over the modes,
align_corners, sizes and scale factors (up and down, odd sizes), dtypes, channel counts and layouts; and the nodes'
names and saved values, and gradcheck.
"""
import warnings

import numpy as np
import pytest
import torch

import microtorch as mt
from tests.saved_compare import STRIDES, assert_saves_as_torch, gradient_graphs

LIBS = (torch, mt)


from test_round21_grid import _assert_bits  # noqa: E402  (the bitwise comparison grid_sample's tests use)


def _dt(lib, np_dtype):
    return getattr(lib, np.dtype(np_dtype).name)


# (mode, input shape, a larger size, a smaller size): odd sizes; bilinear's first output is small enough (H + W <= 128)
# for torch's channels-last kernel, its second large enough for the generic one
CASES = [
    ("linear", (2, 3, 50), (77,), (23,)),
    ("linear", (1, 2, 7), (140,), (3,)),
    ("bilinear", (2, 3, 13, 17), (40, 29), (6, 9)),
    ("bilinear", (1, 2, 29, 31), (131, 70), (11, 4)),
    ("bicubic", (2, 3, 13, 17), (40, 29), (6, 9)),
    ("bicubic", (1, 2, 9, 30), (131, 70), (4, 11)),
    ("trilinear", (1, 2, 5, 6, 7), (9, 11, 4), (3, 4, 2)),
    ("trilinear", (2, 1, 7, 3, 9), (8, 13, 10), (2, 2, 5)),
]
# how the output size is asked for: a size up or down, a scale factor up or down, the same size
HOW = ["up", "down", "scale 1.7", "scale 0.6", "same"]


def _kwargs(how, shape, up, down):
    if how.startswith("scale"):
        return {"scale_factor": float(how.split()[1])}
    return {"size": {"up": up, "down": down, "same": tuple(shape[2:])}[how]}


def _run(lib, x, go, mode, kw, align_corners, layout=None, gg=None):
    """(output, input gradient[, second-order gradient along gg]) of interpolate on x with grad_output go"""
    t = lib.tensor(x, requires_grad=True)
    u = t.contiguous(memory_format=getattr(lib, layout)) if layout else t
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = lib.nn.functional.interpolate(u, mode=mode, align_corners=align_corners, **kw)
    if go is None:
        return (y.detach().numpy(),)
    g_out = lib.tensor(go, requires_grad=gg is not None)
    g, = lib.autograd.grad(y, t, g_out, create_graph=gg is not None)
    if gg is None:
        return y.detach().numpy(), g.detach().numpy()
    second, = lib.autograd.grad(g, g_out, lib.tensor(gg))
    return y.detach().numpy(), g.detach().numpy(), second.numpy()


def _compare(mode, shape, kw, align_corners, dtype, grads=True, layout=None, seed=0, special=False):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(dtype)
    if special:  # an infinity and a NaN among the inputs: torch adds 0 * inf (NaN) where a weight is 0
        x.flat[[3, 11]] = np.inf, np.nan
    out = _run(torch, x, None, mode, kw, align_corners, layout)[0].shape
    go = rng.standard_normal(out).astype(dtype) if grads else None
    want, got = (_run(lib, x, go, mode, kw, align_corners, layout) for lib in LIBS)
    for w, g, what in zip(want, got, ("values", "input gradient")):
        if special:
            assert np.array_equal(np.isnan(g), np.isnan(w)), what
            w, g = np.nan_to_num(w, nan=0.0), np.nan_to_num(g, nan=0.0)
        _assert_bits(g, w, f"{mode} {shape} {kw} align_corners={align_corners} {np.dtype(dtype).name}: {what}")


# ---- values and input gradients, bit for bit -----------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("how", HOW)
@pytest.mark.parametrize("mode,shape,up,down", CASES)
def test_values_and_gradients_are_torchs_bits(mode, shape, up, down, how, align_corners, dtype):
    _compare(mode, shape, _kwargs(how, shape, up, down), align_corners, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mode,kw", [("linear", {"size": (1,)}), ("linear", {"scale_factor": 3.0}),
                                     ("bilinear", {"size": (1, 1)}), ("bilinear", {"size": (1, 7)}),
                                     ("bicubic", {"size": (1, 1)}), ("bicubic", {"size": (9, 1)}),
                                     ("trilinear", {"size": (1, 1, 1)}), ("trilinear", {"scale_factor": 2.5})])
@pytest.mark.parametrize("align_corners", [False, True])
def test_single_elements_and_whole_scale_factors(mode, kw, align_corners, dtype):
    # (align_corners with one output element: scale 0; an input of one element: every tap on it)
    shape = {"linear": (2, 3, 5), "bilinear": (2, 3, 5, 6), "bicubic": (2, 3, 5, 6), "trilinear": (1, 2, 3, 4, 5)}[mode]
    _compare(mode, shape, kw, align_corners, dtype)
    _compare(mode, shape[:2] + (1,) * (len(shape) - 2), {"size": (4,) * (len(shape) - 2)}, align_corners, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("channels", [4, 5, 8, 9, 17])
@pytest.mark.parametrize("mode,shape,size", [("bilinear", (2, 0, 7, 9), (13, 5)), ("bilinear", (1, 0, 9, 8), (90, 70)),
                                             ("trilinear", (1, 0, 4, 5, 3), (7, 3, 6))])
def test_channels_last_inputs_take_torchs_corner_kernel(mode, shape, size, channels, dtype):
    # torch's channels-last kernel sums the corners in order, and from the last back in its vector loop (8 floats
    # or 4 doubles of channels at a time): the channel counts straddle those
    shape = (shape[0], channels) + shape[2:]
    for align_corners in (False, True):
        _compare(mode, shape, {"size": size}, align_corners, dtype,
                 layout="channels_last" if mode == "bilinear" else "channels_last_3d")
        _compare(mode, shape, {"size": size}, align_corners, dtype)  # (contiguous: by output size)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_one_thread_and_three_channels_take_the_corner_kernel(dtype):
    # torch picks its channels-last kernel for 3 channels when it runs on one thread (images, whatever their size)
    threads = torch.get_num_threads(), mt.get_num_threads()
    try:
        for lib in LIBS:
            lib.set_num_threads(1)
        _compare("bilinear", (2, 3, 70, 90), {"size": (140, 170)}, False, dtype, grads=False)
    finally:
        torch.set_num_threads(threads[0])
        mt.set_num_threads(threads[1])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mode,shape,size", [("linear", (1, 2, 9), (9,)), ("linear", (1, 2, 9), (14,)),
                                             ("bilinear", (1, 2, 6, 7), (6, 7)), ("bilinear", (1, 2, 6, 7), (60, 90)),
                                             ("bicubic", (1, 2, 6, 7), (6, 7)), ("bicubic", (1, 2, 6, 7), (11, 5)),
                                             ("trilinear", (1, 2, 3, 4, 5), (3, 6, 5))])
def test_infinities_and_nans_go_where_torchs_do(mode, shape, size, dtype):
    # a dim whose size stays is still summed with weights 1 and 0 (inf * 0 is NaN), as torch's kernels do
    _compare(mode, shape, {"size": size}, False, dtype, special=True)


@pytest.mark.parametrize("mode,shape,size", [("linear", (1, 2, 50), (77,)), ("linear", (1, 2, 50), (23,)),
                                             ("bilinear", (1, 2, 13, 17), (140, 129)),
                                             ("bicubic", (1, 2, 13, 17), (40, 29)),
                                             ("trilinear", (1, 2, 5, 6, 7), (9, 11, 4))])
@pytest.mark.parametrize("align_corners", [False, True])
def test_half_inputs_of_the_generic_kernel_are_torchs_bits(mode, shape, size, align_corners):
    # float16 computes in float32, but the generic kernel keeps its weights in float16 (lambda0 = 1 - lambda1 of the
    # rounded lambda1); the backward keeps float32 weights and sums
    _compare(mode, shape, {"size": size}, align_corners, np.float16)


@pytest.mark.parametrize("mode,shape,size", [("linear", (0, 2, 5), (7,)), ("bilinear", (0, 3, 4, 5), (7, 3)),
                                             ("bicubic", (0, 2, 4, 5), (7, 3)),
                                             ("trilinear", (0, 2, 5, 2, 3), (7, 3, 3))])
def test_an_empty_batch_resamples_and_no_channels_raise_as_torch(mode, shape, size):
    _compare(mode, shape, {"size": size}, False, np.float32)
    empty = (2, 0) + shape[2:]
    for lib in LIBS:
        with pytest.raises(RuntimeError, match=rf"Non-empty {len(shape)}D data tensor expected but got a tensor with "
                                               rf"sizes \[2, 0, "):
            lib.nn.functional.interpolate(lib.zeros(empty), size=size, mode=mode, align_corners=False)


# ---- second-order gradients and tangents ---------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mode,shape,size", [("linear", (2, 3, 11), (17,)), ("bilinear", (1, 3, 7, 9), (13, 5)),
                                             ("bicubic", (1, 2, 7, 9), (13, 5)),
                                             ("trilinear", (1, 2, 4, 5, 3), (7, 3, 6))])
def test_second_order_gradients_are_torchs_bits(mode, shape, size, dtype):
    # the gradient of the backward along grad_output is the forward kernel again, in torch as here
    rng = np.random.default_rng(5)
    x = rng.standard_normal(shape).astype(dtype)
    out = shape[:2] + size
    go, gg = rng.standard_normal(out).astype(dtype), rng.standard_normal(shape).astype(dtype)
    want, got = (_run(lib, x, go, mode, {"size": size}, False, gg=gg) for lib in LIBS)
    for w, g, what in zip(want, got, ("values", "gradient", "second-order gradient")):
        _assert_bits(g, w, what)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mode,shape,size", [("linear", (2, 3, 11), (17,)), ("bilinear", (2, 3, 7, 9), (13, 5)),
                                             ("bicubic", (2, 2, 7, 9), (13, 5)),
                                             ("trilinear", (2, 2, 4, 5, 3), (7, 3, 6))])
def test_tangents_and_batched_jacobians_are_torchs_bits(mode, shape, size, dtype):
    rng = np.random.default_rng(6)
    x, v = rng.standard_normal(shape).astype(dtype), rng.standard_normal(shape).astype(dtype)
    results = []
    for lib in LIBS:
        def f(t):
            return lib.nn.functional.interpolate(t, size=size, mode=mode, align_corners=True)
        _, tangent = lib.func.jvp(f, (lib.tensor(x),), (lib.tensor(v),))
        jacobians = lib.func.vmap(lib.func.jacrev(f))(lib.tensor(x[:, None]))
        results.append((tangent.numpy(), jacobians.numpy()))
    for w, g, what in zip(*results, ("jvp", "vmap(jacrev)")):
        _assert_bits(g, w, what)


# ---- nodes ---------------------------------------------------------------------------------------------------
NODES = {
    "linear_size": ("linear", (1, 2, 7), {"size": 12, "align_corners": False}),
    "linear_scale": ("linear", (1, 2, 7), {"scale_factor": 1.7, "align_corners": True}),
    "bilinear_size": ("bilinear", (1, 2, 5, 6), {"size": (9, 4), "align_corners": False}),
    "bilinear_scale": ("bilinear", (1, 2, 5, 6), {"scale_factor": (0.6, 1.7), "align_corners": True}),
    "bicubic_size": ("bicubic", (1, 2, 5, 6), {"size": (9, 4), "align_corners": True}),
    "bicubic_scale": ("bicubic", (1, 2, 5, 6), {"scale_factor": 1.7, "align_corners": False}),
    "trilinear_size": ("trilinear", (1, 1, 3, 4, 5), {"size": (5, 3, 7), "align_corners": False}),
    "trilinear_scale": ("trilinear", (1, 1, 3, 4, 5), {"scale_factor": 0.6, "align_corners": False}),
}


def _leaf(L, shape):
    return L.tensor(np.random.default_rng(2).standard_normal(shape), dtype=L.float32, requires_grad=True)


@pytest.mark.parametrize("case", NODES.values(), ids=NODES.keys())
def test_nodes_show_torchs_names_and_values(case):
    mode, shape, kw = case
    assert_saves_as_torch(lambda T: T.nn.functional.interpolate(_leaf(T, shape), mode=mode, **kw), skip=STRIDES)


@pytest.mark.parametrize("case", NODES.values(), ids=NODES.keys())
def test_gradient_graphs_and_second_order_gradients_are_torchs(case):
    # create_graph: the gradient's node is torch's Upsample...BackwardBackward0 showing torch's values, and the
    # gradients and second-order gradients have torch's bits
    mode, shape, kw = case

    def f(L, x):
        return L.nn.functional.interpolate(x, mode=mode, **kw)
    want, got = (gradient_graphs(f, [_leaf(L, shape)], L) for L in LIBS)
    assert got[0] == want[0]
    for w, g in zip(want[1] + want[2], got[1] + got[2]):
        _assert_bits(g, w)


def test_node_names_name_the_mode():
    for mode, shape, kw in NODES.values():
        x = _leaf(mt, shape)
        y = mt.nn.functional.interpolate(x, mode=mode, **kw)
        g, = mt.autograd.grad((y * y).sum(), x, create_graph=True)
        name = {"linear": "UpsampleLinear1D", "bilinear": "UpsampleBilinear2D", "bicubic": "UpsampleBicubic2D",
                "trilinear": "UpsampleTrilinear3D"}[mode]
        assert (y.grad_fn.name(), g.grad_fn.name()) == (name + "Backward0", name + "BackwardBackward0")


# ---- gradcheck -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode,shape,kw", [("linear", (1, 2, 5), {"size": 8}),
                                           ("bilinear", (1, 2, 4, 5), {"size": (7, 3)}),
                                           ("bicubic", (1, 1, 4, 5), {"scale_factor": 1.7}),
                                           ("trilinear", (1, 1, 3, 2, 4), {"size": (4, 3, 2)})])
@pytest.mark.parametrize("align_corners", [False, True])
def test_gradcheck_and_gradgradcheck_in_float64(mode, shape, kw, align_corners):
    x = mt.tensor(np.random.default_rng(4).standard_normal(shape), dtype=mt.float64, requires_grad=True)

    def f(t):
        return mt.nn.functional.interpolate(t, mode=mode, align_corners=align_corners, **kw)
    assert mt.autograd.gradcheck(f, (x,))
    assert mt.autograd.gradgradcheck(f, (x,))
