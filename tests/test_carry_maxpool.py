"""max_pool1d/2d/3d beside torch 2.13 where the window meets the padding: padding with dilation and
ceil_mode, windows whose elements are all -inf, NaN in a window (torch keeps the last NaN), windows lying
wholly in the padding (torch answers -inf and an index past the plane), and the padding limit (torch
compares with kernel_size // 2, whatever the dilation). Values, indices and gradients are compared."""
import itertools

import numpy as np
import pytest
import torch

import microtorch as mt


def _inputs(shape, seed):
    r = np.random.default_rng(seed)
    ints = r.integers(-3, 3, shape).astype(float)  # ties
    neg = -np.abs(r.standard_normal(shape)) - 1     # every value below the padding's would-be 0
    nans, ninf = r.standard_normal(shape), r.standard_normal(shape)
    nans[r.random(shape) < 0.3] = np.nan
    ninf[r.random(shape) < 0.5] = -np.inf
    return ints, neg, nans, ninf


def _pool(lib, dims, x, kw, with_grad):
    t = lib.tensor(x, requires_grad=True)
    try:
        out, idx = getattr(lib.nn.functional, f"max_pool{dims}d")(t, return_indices=True, **kw)
    except RuntimeError:
        return "RuntimeError"
    res = [out.detach().numpy(), idx.numpy()]
    if with_grad:  # (torch writes out of bounds for a window wholly in the padding: not asked there)
        weights = lib.tensor(np.arange(1.0, out.numel() + 1).reshape(tuple(out.shape)))
        res.append(lib.autograd.grad((out * weights).sum(), t)[0].numpy())
    return res


def _in_range(idx, x):
    return idx.size == 0 or (idx.min() >= 0 and idx.max() < np.prod(x.shape[2:]))


SETTINGS = [dict(kernel_size=k, stride=s, padding=p, dilation=d, ceil_mode=c)
            for k, s, p, d, c in itertools.product([1, 2, 3], [1, 3], [0, 1, 2], [1, 2], [False, True])]


@pytest.mark.parametrize("dims,size", [(1, 1), (1, 4), (1, 7), (2, 1), (2, 3), (2, 5), (3, 1), (3, 4)])
def test_max_pool_matches_torch_at_the_padding(dims, size):
    shape = (2, 2) + (size,) * dims
    for kw, x in itertools.product(SETTINGS, _inputs(shape, size * dims)):
        t = _pool(torch, dims, x, kw, with_grad=False)
        m = _pool(mt, dims, x, kw, with_grad=False)
        assert (t == "RuntimeError") == (m == "RuntimeError"), kw
        if t == "RuntimeError":
            continue
        for a, b in zip(t, m):
            np.testing.assert_array_equal(b, a, err_msg=str(kw))
        if _in_range(t[1], x):
            np.testing.assert_array_equal(_pool(mt, dims, x, kw, True)[2], _pool(torch, dims, x, kw, True)[2],
                                          err_msg=str(kw))


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_a_window_wholly_in_the_padding_is_minus_inf_with_torchs_index_and_passes_no_gradient(dims):
    x = np.full((1, 2) + (1,) * dims, 5.0)
    kw = dict(kernel_size=2, stride=1, padding=1, dilation=2)  # windows at -1 and 1: the input is skipped
    t_out, t_idx = getattr(torch.nn.functional, f"max_pool{dims}d")(torch.tensor(x), return_indices=True, **kw)
    t = mt.tensor(x, requires_grad=True)
    out, idx = getattr(mt.nn.functional, f"max_pool{dims}d")(t, return_indices=True, **kw)
    np.testing.assert_array_equal(out.detach().numpy(), t_out.numpy())   # -inf
    np.testing.assert_array_equal(idx.numpy(), t_idx.numpy())            # past the 1-element plane
    out.sum().backward()
    np.testing.assert_array_equal(t.grad.numpy(), np.zeros_like(x))      # the -inf depends on no input
    (tangent,) = mt.func.jvp(lambda a: getattr(mt.nn.functional, f"max_pool{dims}d")(a, **kw), (mt.tensor(x),),
                             (mt.ones_like(mt.tensor(x)),))[1:]
    np.testing.assert_array_equal(tangent.numpy(), np.zeros(tuple(out.shape)))


def test_nan_window_picks_the_last_nan_like_torch():
    x = [[[1.0, float("nan"), 2.0, float("nan")]]]
    for lib in (torch, mt):
        t = lib.tensor(x, requires_grad=True)
        out, idx = lib.nn.functional.max_pool1d(t, 4, return_indices=True)
        out.sum().backward()
        assert idx.tolist() == [[[3]]] and t.grad.tolist() == [[[0.0, 0.0, 0.0, 1.0]]], lib.__name__


def test_module_with_ceil_mode_and_padding_matches_torch():
    x = np.random.default_rng(3).standard_normal((1, 1, 5, 6))
    x[0, 0, :2] = -np.inf
    res = []
    for lib in (torch, mt):
        t = lib.tensor(x, requires_grad=True)
        out, idx = lib.nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True, return_indices=True)(t)
        out.sum().backward()
        res.append((out.detach().numpy(), idx.numpy(), t.grad.numpy()))
    for a, b in zip(*res):
        np.testing.assert_array_equal(b, a)


def test_padding_limit_ignores_dilation_like_torch():
    x = np.ones((1, 1, 6))
    with pytest.raises(RuntimeError):
        torch.nn.functional.max_pool1d(torch.tensor(x), 3, 1, 2, 2)
    with pytest.raises(RuntimeError, match="pad should be at most half of kernel size"):
        mt.nn.functional.max_pool1d(mt.tensor(x), 3, 1, 2, 2)


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_an_empty_batch_pools_and_backpropagates_like_torch(dims):
    shapes = []
    for lib in (torch, mt):
        x = lib.zeros((0, 2) + (4,) * dims, requires_grad=True)
        out, idx = getattr(lib.nn.functional, f"max_pool{dims}d")(x, 2, return_indices=True)
        out.sum().backward()
        shapes.append((tuple(out.shape), tuple(idx.shape), tuple(x.grad.shape)))
    assert shapes[1] == shapes[0]
