"""as_strided, empty_strided and new_empty_strided beside torch 2.13: values, views of the storage, strides,
gradients (through the storage, overlapping reads summed, overlapping inputs sharing), in-place writes through a
strided view, and torch's errors."""
import numpy as np
import pytest
import torch as real_torch

import microtorch
from tests.torch_errors import error_of

LIBS = (real_torch, microtorch)


def _both(fn):
    return [fn(lib) for lib in LIBS]


# (a source of the input: a base, then a view of it) and (size, stride, offset) read from its storage
SOURCES = {
    "contiguous": lambda t: t,
    "row slice": lambda t: t.view(4, 6)[1:3],
    "transposed": lambda t: t.view(4, 6).t(),
    "column slice": lambda t: t.view(4, 6)[:, 2:5],
    "expanded": lambda t: t[:6].expand(3, 6),
}
GEOMETRIES = [((3, 3), (1, 1), None), ((2, 2), (4, 1), 1), ((2, 3, 2), (6, 2, 1), 0), ((5,), (2,), 3),
              ((4, 2), (0, 1), 2), ((3,), (7,), None), ((0, 2), (1, 1), None), ((), (), 5)]


def _grads(lib, source, size, stride, offset):
    base = lib.arange(24.0, dtype=lib.float64).requires_grad_()
    x = SOURCES[source](base * 1)
    y = x.as_strided(size, stride, offset) if offset is not None else lib.as_strided(x, size, stride)
    w = lib.arange(1.0, 1.0 + y.numel(), dtype=lib.float64).reshape(y.shape)
    (y * w).sum().backward()
    return y.detach().numpy().copy(), y.stride(), y.storage_offset(), y.grad_fn.name(), base.grad.numpy().copy()


@pytest.mark.parametrize("source", list(SOURCES))
@pytest.mark.parametrize("size,stride,offset", GEOMETRIES)
def test_values_strides_and_gradients_are_torchs(source, size, stride, offset):
    want, got = (error_of(lambda lib=lib: _grads(lib, source, size, stride, offset)) for lib in LIBS)
    assert want == got  # both fit in the storage, or both raise the same
    if want == (None, None):
        want, got = _both(lambda lib: _grads(lib, source, size, stride, offset))
        np.testing.assert_array_equal(want[0], got[0])
        assert want[1:4] == got[1:4]
        np.testing.assert_array_equal(want[4], got[4])


def test_the_result_is_a_view_of_the_storage():
    def run(lib):
        x = lib.zeros(3, 4)
        y = x[1].as_strided((2, 2), (4, 1), 0)  # reaches outside x[1], inside x's storage
        y.fill_(7.0)
        return x.tolist(), y._base is x, x._version == y._version
    assert run(real_torch) == run(microtorch)


def test_an_in_place_op_through_a_strided_view_rebases_its_base():
    def run(lib):
        w = lib.arange(1.0, 5.0, requires_grad=True)
        b = w.clone()
        v = b.as_strided((2,), (2,))
        v.mul_(3)
        b.sum().backward()
        return b.tolist(), type(b.grad_fn).__name__, v.grad_fn.name(), w.grad.tolist()
    assert run(real_torch) == run(microtorch)


def test_sliding_windows_for_a_convolution_by_hand():
    def run(lib):
        lib.manual_seed(0)
        img = lib.randn(2, 3, 5, 5, dtype=lib.float64, requires_grad=True)
        k = lib.randn(4, 3, 3, 3, dtype=lib.float64, requires_grad=True)
        n, c, h, w = img.stride()
        cols = img.as_strided((2, 3, 3, 3, 3, 3), (n, c, h, w, h, w))  # (N, C, out_h, out_w, kh, kw)
        out = lib.einsum("ncijkl,ockl->noij", cols, k)
        (out ** 2).sum().backward()
        ref = lib.nn.functional.conv2d(img.detach(), k.detach())
        return out.detach().numpy(), img.grad.numpy(), k.grad.numpy(), ref.numpy()
    want, got = _both(run)
    for a, b in zip(want, got):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got[0], got[3], rtol=1e-12)


def test_gradcheck_and_gradgradcheck():
    x = microtorch.randn(12, dtype=microtorch.float64, requires_grad=True)
    assert microtorch.autograd.gradcheck(lambda v: v.as_strided((3, 3), (2, 1), 1), (x,))
    assert microtorch.autograd.gradgradcheck(lambda v: v.as_strided((3, 3), (1, 1), 2) ** 3, (x,))
    bad = microtorch.randn(4, dtype=microtorch.float64, requires_grad=True)
    overlapping = lambda v: v.expand(3, 4).as_strided((2, 2), (1, 1)).sin()  # noqa: E731
    assert microtorch.autograd.gradcheck(overlapping, (bad,))


@pytest.mark.parametrize("args", [((20,), (1,)), ((2,), (-1,)), ((2, 2), (1,)), ((2,), (1,), -1), ((-1,), (1,)),
                                  ((2,), (1.5,)), ((2,), (1,), 1.5), (2, 1), ((-1,), (-1,))])
def test_errors_are_torchs(args):
    (want_type, want), (got_type, got) = (error_of(lambda lib=lib: lib.as_strided(lib.arange(12.0)[4:], *args))
                                          for lib in LIBS)
    assert got_type == want_type and want in got, (want, got)


def test_empty_strided():
    def run(lib):
        e = lib.empty_strided((2, 3), (1, 2))
        f = lib.empty_strided((2, 3), (3, 1), dtype=lib.float64, requires_grad=True)
        g = lib.ones(2, dtype=lib.int32).new_empty_strided((2, 2), (1, 2))
        return (e.shape, e.stride(), e.is_contiguous(), e.untyped_storage().nbytes(), str(e.dtype),
                f.stride(), f.requires_grad, f.is_leaf, str(f.dtype), g.stride(), str(g.dtype))
    want, got = _both(run)
    assert repr(want).replace("torch", "") == repr(got).replace("microtorch", "").replace("torch", "")
    (wt, w), (gt, g) = (error_of(lambda lib=lib: lib.empty_strided((2, 3), (1,))) for lib in LIBS)
    assert gt == wt == "RuntimeError" and w in g
    for args in (((-1, 2), (1, 1)), ((2,), (-1,)), ((2,), (1.5,))):
        (wt, w), (gt, g) = (error_of(lambda lib=lib: lib.empty_strided(*args)) for lib in LIBS)
        assert gt == wt and w in g, (w, g)


def test_on_the_meta_device():
    def run(lib):
        x = lib.ones(3, 4, device="meta", requires_grad=True)
        y = x.as_strided((2, 5), (5, 1), 1)
        e = lib.empty_strided((2, 3), (1, 2), device="meta")
        return (tuple(y.shape), y.is_meta, y.grad_fn.name(), tuple(e.shape), e.is_meta,
                error_of(lambda: x.as_strided((20,), (1,))))
    assert run(real_torch) == run(microtorch)
