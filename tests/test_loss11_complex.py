"""torch.complex and torch.polar beside torch 2.13: one node each (ComplexBackward0, PolarBackward0, with an edge
per part), torch's backward formulas (polar's from its result: the gradient in abs is 0 where abs is 0), their
second order, forward mode, vmap without a per-example fallback, and parts that are inf or NaN kept as they are."""
import warnings

import numpy as np
import pytest
import torch

import microtorch as mt
from op_oracle import graph_names

A = np.array([1.0, 2.0, 0.0, 3.0, 0.5])
B = np.array([0.3, -1.2, 0.5, 3.14159, 0.0])
W = np.array([1 + 2j, -0.5j, 2, 1 - 1j, 0.25 + 0.5j])
PART = {"SelectBackward0": "a part", "ViewAsRealBackward0": "a part", "RealBackward0": "a part",
        "ImagBackward0": "a part"}


def _names(t):
    """the node names t's graph reaches, a complex part's nodes under one name (torch's real and imag are views of
    view_as_real; microtorch's RealBackward0, ImagBackward0 until they are, ops/elementwise.py's)"""
    names = graph_names(t, PART)
    return None if names is None else sorted(set(names))


def _run(lib, fn, dtype, which):
    d = getattr(lib, dtype)
    a = lib.tensor(A, dtype=d, requires_grad="a" in which)
    b = lib.tensor(B, dtype=d, requires_grad="b" in which)
    z = getattr(lib, fn)(a, b)
    ins = [t for t in (a, b) if t.requires_grad]
    v = lib.tensor(W, dtype=z.dtype, requires_grad=True)
    grads = lib.autograd.grad(z, ins, v, create_graph=True)
    second = lib.autograd.grad(sum(g.sum() for g in grads), ins + [v], allow_unused=True)
    return {"node": (z.grad_fn.name(), [n is None for n, _ in z.grad_fn.next_functions]),
            "value": z.detach().numpy(), "first": [g.detach().numpy() for g in grads],
            "names": [_names(g) for g in grads],
            "second": [None if s is None else s.numpy(force=True) for s in second]}


@pytest.mark.parametrize("which", ["ab", "a", "b"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("fn", ["complex", "polar"])
def test_one_node_with_torchs_gradients(fn, dtype, which):
    mine, theirs = _run(mt, fn, dtype, which), _run(torch, fn, dtype, which)
    assert mine["node"] == theirs["node"] and mine["names"] == theirs["names"]
    # (polar: float32 cos and sin are an ulp off torch's on some values (its kernel's own), and complex sgn,
    # which torch's formula reads, is an ulp off in float64: ops/elementwise.py divides by |z| as a complex)
    tol = {"float64": 1e-15, "float32": 3e-7}[dtype] if fn == "polar" else 0
    np.testing.assert_allclose(mine["value"], theirs["value"], rtol=tol, atol=0)
    for order, tol in (("first", tol), ("second", tol and max(tol, 1e-13))):
        for p, q in zip(mine[order], theirs[order]):
            assert (p is None) == (q is None)
            if p is not None:
                np.testing.assert_allclose(p, q, rtol=tol, atol=tol / 3)  # (atol: sums that cancel to ~0)


def test_polar_gradient_in_abs_is_zero_where_abs_is_zero():
    out = []
    for lib in (mt, torch):
        a = lib.tensor([0.0, 0.0, 1.0], requires_grad=True)
        b = lib.tensor([0.5, -2.0, 0.5], requires_grad=True)
        lib.view_as_real(lib.polar(a, b)).sum().backward()
        out.append((a.grad.numpy(), b.grad.numpy()))
    np.testing.assert_array_equal(out[0][0], out[1][0])
    np.testing.assert_allclose(out[0][1], out[1][1], rtol=1e-15)
    assert out[0][0][0] == 0 and out[0][0][1] == 0


def test_infinite_and_nan_parts_are_kept():
    re = np.array([np.inf, -np.inf, np.nan, 1.0])
    im = np.array([0.0, np.nan, 1.0, np.inf])
    for fn in ("complex", "polar"):
        mine = getattr(mt, fn)(mt.tensor(re), mt.tensor(im)).numpy()
        theirs = getattr(torch, fn)(torch.tensor(re), torch.tensor(im)).numpy()
        np.testing.assert_array_equal(mine.real, theirs.real)
        np.testing.assert_array_equal(mine.imag, theirs.imag)


@pytest.mark.parametrize("fn", ["complex", "polar"])
def test_forward_mode(fn):
    out = []
    for lib in (mt, torch):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            a = fw.make_dual(lib.tensor(A), lib.tensor(np.linspace(-1, 1, 5)))
            b = fw.make_dual(lib.tensor(B), lib.tensor(np.linspace(2, 0, 5)))
            out.append(fw.unpack_dual(getattr(lib, fn)(a, b)).tangent.numpy())
    np.testing.assert_allclose(out[0], out[1], rtol=1e-15, atol=1e-16)


@pytest.mark.parametrize("fn", ["complex", "polar"])
def test_vmap_batches_without_falling_back(fn):
    out = []
    for lib in (mt, torch):
        a, b = lib.tensor(np.linspace(0.1, 1, 6).reshape(2, 3)), lib.tensor(np.linspace(-1, 1, 6).reshape(2, 3))
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            z = lib.func.vmap(getattr(lib, fn))(a, b)
            g = lib.func.vmap(lib.func.grad(lambda x, y: lib.view_as_real(getattr(lib, fn)(x, y)).sum()))(a, b)
        assert not [w for w in seen if "performance drop" in str(w.message)]
        out.append((z.numpy(), g.numpy()))
    for p, q in zip(*out):
        np.testing.assert_allclose(p, q, rtol=1e-15)
