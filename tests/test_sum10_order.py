"""Sums and means give torch 2.13's bits (ops/_sum_order.py adds in the order of torch's CPU kernel), beside the
real torch: every size class of the kernel's loops, each dim, transposed and sliced inputs, float16 to complex128,
the thread cuts above 32768 elements, the tutorials' loss lines, and gradients; and var, std, var_mean, prod,
logsumexp and the 1-norm in their own orders (ops/_reduce_order.py)."""
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import microtorch as mt
from microtorch.ops import _range_kernels
from microtorch.ops._sum_order import nansum_like_torch, torch_sum
from _machine import libm_agrees, within_ulps


@pytest.fixture(autouse=True)
def same_threads(monkeypatch):
    """microtorch cuts a long sum between as many threads as torch has now (another test may have set torch's)."""
    monkeypatch.setattr(_range_kernels, "SET_THREADS", [torch.get_num_threads()])

DTYPES = ["float16", "float32", "float64", "complex64", "complex128"]


def same(ours, theirs):
    a, b = ours.detach().numpy(), theirs.detach().numpy()
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def data(shape, dtype, seed=0):
    r = np.random.default_rng(seed)
    v = r.standard_normal(shape) * 10
    if dtype.startswith("complex"):
        v = v + 1j * r.standard_normal(shape)
    return np.asarray(v, dtype=dtype)


def both(base, layout):
    """(ours, torch's) tensor of base, contiguous, with its dims reversed, or every other element of each dim."""
    out = []
    for lib in (mt, torch):
        x = lib.tensor(base)
        if layout == "transposed" and x.ndim:
            x = x.permute(*reversed(range(x.ndim)))
        elif layout == "sliced":
            x = x[(slice(None, None, 2),) * x.ndim]
        out.append(x)
    return out


SIZES = [0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 1000, 2000,
         4095, 4097, 32767, 32768, 32769, 10**5]


@pytest.mark.parametrize("dtype", DTYPES)
def test_full_sums_and_means_of_every_size_class(dtype):
    for n in SIZES:
        for seed in range(2):
            ours, theirs = both(data(n, dtype, seed), "contiguous")
            assert same(ours.sum(), theirs.sum()), (n, seed)
            assert same(ours.mean(), theirs.mean()), (n, seed)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_every_short_length_and_a_million(dtype):
    # short contiguous sums take a path of their own (_flat): each length up to 600, beside torch
    for n in range(600):
        ours, theirs = both(data(n, dtype, n), "contiguous")
        assert same(ours.sum(), theirs.sum()), n
    ours, theirs = both(data(10**6, dtype), "contiguous")
    assert same(ours.sum(), theirs.sum()) and same(ours.mean(), theirs.mean())


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_each_dim_of_a_matrix(dtype, layout):
    for shape in [(7, 9), (16, 16), (17, 33), (50, 101), (64, 130), (1000, 3), (3, 1000), (300, 300), (2, 40000)]:
        ours, theirs = both(data(shape, dtype), layout)
        for dim in (0, 1, (0, 1), -1):
            for keep in (False, True):
                assert same(ours.sum(dim, keepdim=keep), theirs.sum(dim, keepdim=keep)), (shape, dim, keep)
                assert same(ours.mean(dim, keepdim=keep), theirs.mean(dim, keepdim=keep)), (shape, dim, keep)


def test_a_random_sweep_of_shapes_dims_and_layouts():
    r = np.random.default_rng(10)
    for case in range(300):
        ndim = int(r.integers(1, 5))
        shape = tuple(int(s) for s in r.choice([1, 2, 3, 5, 8, 9, 16, 17, 33, 64, 65], ndim))
        dtype = str(r.choice(DTYPES))
        layout = ["contiguous", "transposed", "sliced"][case % 3]
        ours, theirs = both(data(shape, dtype, case), layout)
        k = int(r.integers(0, ndim + 1))
        dims = tuple(sorted(int(d) for d in r.choice(ndim, k, replace=False)))
        keep = bool(r.integers(0, 2))
        for op in ("sum", "mean"):
            a = getattr(ours, op)(dims, keepdim=keep) if dims else getattr(ours, op)()
            b = getattr(theirs, op)(dims, keepdim=keep) if dims else getattr(theirs, op)()
            assert same(a, b), (case, op, shape, dtype, layout, dims, keep)


def test_the_dtype_argument_sums_a_converted_copy():
    base = data((33, 65), "float32")
    for layout in ("contiguous", "transposed", "sliced"):
        ours, theirs = both(base, layout)
        assert same(ours.sum(dtype=mt.float64), theirs.sum(dtype=torch.float64))
        assert same(ours.mean(1, dtype=mt.float64), theirs.mean(1, dtype=torch.float64))
        ours, theirs = both(base.astype(np.float16), layout)
        assert same(ours.sum(0, dtype=mt.float32), theirs.sum(0, dtype=torch.float32))
        ours, theirs = both((base * 100).astype(np.int32), layout)
        assert same(ours.sum(dtype=mt.float32), theirs.sum(dtype=torch.float32))
        assert same(ours.sum(), theirs.sum())


def test_one_thread_cuts_nothing():
    # above 32768 elements torch gives each thread a part; with one thread the order is the serial one
    before = (mt.get_num_threads(), torch.get_num_threads())
    try:
        mt.set_num_threads(1)
        torch.set_num_threads(1)
        for shape, dim in [((10**5,), None), ((300, 300), 0), ((300, 300), None), ((40000, 3), 0)]:
            ours, theirs = both(data(shape, "float32", 3), "sliced" if len(shape) == 2 else "contiguous")
            assert same(ours.sum(dim), theirs.sum(dim)) if dim is not None else same(ours.sum(), theirs.sum())
    finally:
        mt.set_num_threads(before[0])
        torch.set_num_threads(before[1])


def test_zero_sums_are_positive_zero():
    for v in ([-0.0], [-0.0, -0.0], [1.5, -1.5], [-0.0] * 40):
        for dtype in ("float32", "float64"):
            ours, theirs = both(np.array(v, dtype), "contiguous")
            assert same(ours.sum(), theirs.sum()) and same(ours.mean(), theirs.mean())
            assert same(ours.sum(0), theirs.sum(0))


def polynomial_fit(lib):
    """polynomial_tensor / polynomial_autograd's model and its sum-of-squares loss, backward done"""
    x = lib.linspace(-np.pi, np.pi, 2000)
    y = lib.sin(x)
    a, b, c, d = (lib.tensor(v, requires_grad=True) for v in (0.1, -0.4, 0.02, 0.05))
    y_pred = a + b * x + c * x ** 2 + d * x ** 3
    loss = (y_pred - y).pow(2).sum()
    loss.backward()
    return y_pred, y, loss, a


def test_polynomial_fit_loss_lines():
    # loss = (y_pred - y).pow(2).sum(); print(t, loss.item()); the mean of the same squares
    results = []
    for lib in (mt, torch):
        y_pred, y, loss, a = polynomial_fit(lib)
        results.append([loss.item(), (y_pred - y).pow(2).mean().item()])
    assert results[0] == results[1]


@pytest.mark.xfail(reason="mse_loss and the gradient of a broadcast float32 number add in torch's order now; what "
                   "still differs is sin's values (torch's is MKL's: 92 of the 2000 differ in the last bit), which the "
                   "gradient carries", strict=False)
def test_polynomial_fit_mse_loss_and_gradient():
    results = []
    for lib in (mt, torch):
        y_pred, y, _, a = polynomial_fit(lib)
        results.append([lib.nn.functional.mse_loss(y_pred, y).item(),
                        lib.nn.functional.mse_loss(y_pred, y, reduction="sum").item(), a.grad.item()])
    assert results[0] == results[1]


def test_gradients_are_unchanged():
    base = data((17, 33), "float64")
    for layout in ("contiguous", "transposed", "sliced"):
        grads = []
        for x in both(base, layout):
            x.requires_grad_(True)
            (g,) = (mt if isinstance(x, mt.Tensor) else torch).autograd.grad(
                (x.sum(0) * x.mean(1, keepdim=True).sum()).sum() + x.mean(), x, create_graph=True)
            (gg,) = (mt if isinstance(x, mt.Tensor) else torch).autograd.grad(g.sum(), x)
            grads.append((g, gg))
        assert np.allclose(grads[0][0].detach().numpy(), grads[1][0].detach().numpy(), rtol=1e-13, atol=0)
        assert np.allclose(grads[0][1].numpy(), grads[1][1].numpy(), rtol=1e-13, atol=0)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_nansum_in_torch_order(dtype):
    # nansum's kernel is sum's reading NaN as 0 (without sum's float buffer for float16); nansum_like_torch is there
    # for Nansum to call (ops/rearrange.py)
    r = np.random.default_rng(4)
    for case in range(150):
        ndim = int(r.integers(0, 4))
        shape = tuple(int(s) for s in r.choice([1, 2, 3, 8, 9, 17, 33, 65], ndim))
        base = np.array(r.standard_normal(shape) * 10, dtype=dtype)
        base[r.random(shape) < 0.2] = np.nan
        x = base if case % 3 == 0 or not ndim else base.T if case % 3 == 1 else base[(slice(None, None, 2),) * ndim]
        k = int(r.integers(0, ndim + 1))
        dims = None if k == 0 else tuple(sorted(int(d) for d in r.choice(ndim, k, replace=False)))
        t = torch.from_numpy(x)
        want = (torch.nansum(t) if dims is None else torch.nansum(t, dims)).numpy()
        assert np.asarray(nansum_like_torch(x, dims)).tobytes() == want.tobytes(), (case, x.shape, dims)


def test_the_register_width_holds_on_other_cpus():
    # torch's sum kernel adds in 32-byte registers on AVX-512, AVX2 and plain builds alike: ask the real torch on its
    # default (no AVX) kernels in a fresh process
    script = ("import numpy as np, torch, sys\n"
              "r = np.random.default_rng(5)\n"
              "for n in (7, 100, 5000):\n"
              "    for dt in (np.float32, np.float64):\n"
              "        v = r.standard_normal((n, 3)).astype(dt)\n"
              "        t = torch.from_numpy(v)\n"
              "        for s in (t.sum(), t.sum(0)):\n"
              "            sys.stdout.write(s.numpy().tobytes().hex() + ' ')\n"
              "print(torch.backends.cpu.get_cpu_capability())\n")
    env = dict(os.environ, ATEN_CPU_CAPABILITY="default")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True).stdout
    *theirs, capability = out.split()
    assert capability == "DEFAULT"
    r, ours = np.random.default_rng(5), []
    for n in (7, 100, 5000):
        for dt in (np.float32, np.float64):
            v = r.standard_normal((n, 3)).astype(dt)
            ours += [np.asarray(torch_sum(v)).tobytes().hex(), torch_sum(v, (0,)).tobytes().hex()]
    assert ours == theirs


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_var_and_std_to_one_number(dtype):
    # std_var_all_cpu: the mean in torch's order, the squares in float64 added in memory order, per thread
    for shape in [(), (1,), (2,), (7,), (100,), (2000,), (40000,), (30, 40), (300, 300), (5, 6, 7), (1, 50)]:
        for layout in ("contiguous", "transposed", "sliced"):
            ours, theirs = both(data(shape, dtype, 1) + 3, layout)
            for correction in (0, 1):
                assert same(ours.var(correction=correction), theirs.var(correction=correction)), (shape, layout)
                assert same(ours.std(correction=correction), theirs.std(correction=correction)), (shape, layout)
            dims = tuple(range(ours.ndim))
            if dims:  # (over every dim by name, and keepdim)
                assert same(ours.var(dims, keepdim=True), theirs.var(dims, keepdim=True))
                assert same(ours.std(dims), theirs.std(dims))
    ours, theirs = both(data((1, 50), dtype), "contiguous")  # (one result, reduced over one dim: the same kernel)
    assert same(ours.std(1, keepdim=True), theirs.std(1, keepdim=True))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_prod_of_a_contiguous_tensor(dtype):
    # binary_kernel_reduce_vec: running products in four registers, then their lanes, then the rest; and gradients
    for n in [0, 1, 2, 7, 31, 32, 33, 64, 65, 1000, 5000, 32768, 40000, 10**5]:
        base = 1 + data(n, dtype, n) / (30 * np.sqrt(n + 1))
        ours, theirs = both(base, "contiguous")
        assert same(ours.prod(), theirs.prod()), n
        ours, theirs = both(base.reshape(-1, 1) if n else base, "contiguous")
        assert same(ours.prod(), theirs.prod()), n
    grads = []
    for lib in (mt, torch):
        x = lib.tensor(1 + data(40, dtype) / 100, requires_grad=True)
        x.prod().backward()
        grads.append(x.grad)
    assert same(*grads)


def test_logsumexp_sums_in_torch_order():
    # torch: amax, then sum((x - max).exp()) with sum's kernel, log, + max (float64: numpy's exp is torch's there)
    for shape, dim in [((7,), 0), ((2000,), 0), ((50000,), 0), ((30, 40), 1), ((30, 40), 0), ((30, 40), (0, 1)),
                       ((5, 6, 7), (0, 2))]:
        for layout in ("contiguous", "transposed"):
            ours, theirs = both(data(shape, "float64", 2) / 3, layout)
            a, b = mt.logsumexp(ours, dim), torch.logsumexp(theirs, dim)
            assert same(a, b) if libm_agrees() else within_ulps(a.numpy(), b.numpy(), 2), (shape, dim, layout)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_var_and_std_over_dims_by_welford(dtype):
    # several results (and float16's one): WelfordOps in float64, each result's elements in memory order
    r = np.random.default_rng(6)
    cases = [((5, 7), 0), ((5, 7), 1), ((33, 9), 0), ((9, 33), 1), ((4, 5, 6), (0, 2)), ((4, 5, 6), 1), ((200,), 0),
             ((6, 1), 0), ((3, 4), (0, 1))]
    for shape, dims in cases:
        base = np.asarray(r.standard_normal(shape) * 3 + 1, dtype=dtype)
        base[0] = 2.5  # (a slice of equal values: exactly 0)
        for layout in ("contiguous", "transposed", "sliced"):
            ours, theirs = both(base, layout)
            d = dims
            if layout == "transposed":  # (the same dims of the data)
                d = tuple(base.ndim - 1 - i for i in dims) if isinstance(dims, tuple) else base.ndim - 1 - dims
            for correction in (0, 1):
                for keep in (False, True):
                    for op in ("var", "std"):
                        a = getattr(ours, op)(d, correction=correction, keepdim=keep)
                        b = getattr(theirs, op)(d, correction=correction, keepdim=keep)
                        assert same(a, b), (shape, dims, layout, correction, keep, op)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_one_norm_adds_in_memory_order(dtype):
    # ord=1: torch's plain reduction loop, each result's |x| added in memory order (per thread past 32768)
    for shape, dim in [((7,), None), ((1000,), None), ((40000,), None), ((30, 40), 0), ((30, 40), 1),
                       ((30, 40), None), ((5, 6, 7), (0, 2)), ((300, 300), None)]:
        for layout in ("contiguous", "transposed", "sliced"):
            ours, theirs = both(data(shape, dtype, 4), layout)
            for keep in (False, True):
                assert same(mt.linalg.vector_norm(ours, 1, dim, keep), torch.linalg.vector_norm(theirs, 1, dim, keep))
            assert same(ours.norm(p=1), theirs.norm(p=1)), (shape, layout)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_var_mean_and_std_mean_by_one_welford_pass(dtype):
    # torch's var_mean / std_mean take both results from one Welford pass (to one number too); gradients follow
    r = np.random.default_rng(7)
    for shape, dim in [((50, 7), 0), ((7, 50), 1), ((100,), None), ((30, 40), None), ((4, 5, 6), (0, 2))]:
        base = np.asarray(r.standard_normal(shape) * 3 + 1, dtype=dtype)
        results = []
        for lib in (mt, torch):
            x = lib.tensor(base, requires_grad=dtype != "float16")
            for f in (lib.var_mean, lib.std_mean):
                for keep in (False, True):
                    v, m = f(x, dim, keepdim=keep) if dim is not None else f(x)
                    results.append([v, m] + (list(lib.autograd.grad((v * 2 + m * 3).sum(), x)) if x.requires_grad
                                             else []))
        for ours, theirs in zip(results[:4], results[4:]):
            assert all(same(a, b) for a, b in zip(ours, theirs)), (shape, dim)


def test_one_norm_of_nothing_is_zero():
    # fuzz seeds 267 and 7345: an empty tensor's 1-norm, over every dim and over an empty dim, with keepdim
    for shape, dim, keep in [((0, 1, 1, 1), None, False), ((0, 3), 0, True), ((0, 3), 1, False), ((0,), None, True)]:
        ours, theirs = (lib.linalg.vector_norm(lib.zeros(shape, dtype=lib.float64), 1, dim, keep) for lib in (mt, torch))
        assert same(ours, theirs), (shape, dim, keep)


def test_mse_loss_and_a_broadcast_numbers_gradient_add_in_torchs_order():
    # the same lines from inputs both libraries hold to the bit (torch's own sin values given to both)
    x = torch.linspace(-np.pi, np.pi, 2000)
    y_values = torch.sin(x).numpy()
    results = []
    for lib in (mt, torch):
        xs, y = lib.tensor(x.numpy()), lib.tensor(y_values)
        a, b = lib.tensor(0.1, requires_grad=True), lib.tensor(-0.4, requires_grad=True)
        y_pred = a + b * xs
        loss = lib.nn.functional.mse_loss(y_pred, y, reduction="sum") + lib.nn.functional.mse_loss(y_pred, y)
        loss.backward()
        results.append([loss.item(), a.grad.item(), b.grad.item()])
    assert results[0] == results[1]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(7,), (100,), (2000,), (33, 17), (5, 300)], ids=str)
def test_nansum_and_cumsum_bits(dtype, shape):
    x = np.random.default_rng(sum(shape)).standard_normal(shape).astype(dtype)
    x[::5] = np.nan
    for dims in (None, 0, -1):
        ours = (mt.nansum(mt.tensor(x)) if dims is None else mt.nansum(mt.tensor(x), dims)).numpy()
        theirs = (torch.nansum(torch.tensor(x)) if dims is None else torch.nansum(torch.tensor(x), dims)).numpy()
        assert ours.tobytes() == theirs.tobytes(), dims
    x[::5] = 1.5  # (cumsum: float32 runs in double, as torch's)
    assert mt.cumsum(mt.tensor(x), -1).numpy().tobytes() == torch.cumsum(torch.tensor(x), -1).numpy().tobytes()
