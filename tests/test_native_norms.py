"""layer_norm and batch_norm as torch records them, one NativeLayerNormBackward0 or NativeBatchNormBackward0 node:
its edges, its saved tensors, values, gradients and second-order gradients beside torch, and gradchecks."""
import numpy as np
import pytest
import torch

import microtorch as mt


def run(T, shape, affine, dtype="float64"):
    T.manual_seed(0)
    dt = getattr(T, dtype)
    x = T.randn(4, 3, 5, dtype=dt, requires_grad=True)
    w = T.randn(*shape, dtype=dt, requires_grad=True) if affine else None
    b = T.randn(*shape, dtype=dt, requires_grad=True) if affine else None
    y = T.nn.functional.layer_norm(x, shape, w, b)
    node = y.grad_fn
    structure = (node.name(), [None if n is None else n.name() for n, _ in node.next_functions],
                 tuple(node._saved_normalized_shape), tuple(node._saved_result1.shape), tuple(node._saved_result2.shape))
    inputs = [t for t in (x, w, b) if t is not None]
    first = T.autograd.grad(y, inputs, T.ones_like(y) * T.arange(60, dtype=dt).reshape(4, 3, 5), create_graph=True)
    second = T.autograd.grad(sum((g * g).sum() for g in first), inputs, allow_unused=True, materialize_grads=True)
    return structure, [t.detach().numpy() for t in (y, *first, *second)]


@pytest.mark.parametrize("shape, affine", [((5,), True), ((3, 5), True), ((5,), False)])
@pytest.mark.parametrize("dtype, tol", [("float64", 1e-10), ("float32", 2e-4)])
def test_layer_norm_is_torchs_node(shape, affine, dtype, tol):
    (got_structure, got), (want_structure, want) = run(mt, shape, affine, dtype), run(torch, shape, affine, dtype)
    assert got_structure == want_structure
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


def test_module_output_prints_torchs_grad_fn():
    out = mt.nn.LayerNorm(4)(mt.randn(2, 4))
    assert "grad_fn=<NativeLayerNormBackward0>" in repr(out)


def test_gradcheck_and_gradgradcheck():
    x = mt.randn(3, 4, dtype=mt.float64, requires_grad=True)
    w = mt.randn(4, dtype=mt.float64, requires_grad=True)
    b = mt.randn(4, dtype=mt.float64, requires_grad=True)
    f = lambda x, w, b: mt.nn.functional.layer_norm(x, (4,), w, b)
    assert mt.autograd.gradcheck(f, (x, w, b)) and mt.autograd.gradgradcheck(f, (x, w, b))


def test_vmap_and_forward_ad_still_work():
    x = mt.randn(3, 4, dtype=mt.float64)
    per_row = mt.func.vmap(lambda r: mt.nn.functional.layer_norm(r, (4,)))(x)
    np.testing.assert_allclose(per_row.numpy(), mt.nn.functional.layer_norm(x, (4,)).numpy(), atol=1e-12)
    _, tangent = mt.func.jvp(lambda v: mt.nn.functional.layer_norm(v, (4,)), (x,), (mt.ones_like(x),))
    np.testing.assert_allclose(tangent.numpy(), 0, atol=1e-12)  # (a shift along the normalized dim changes nothing)


def run_batch_norm(T, shape, training, dtype="float64"):
    T.manual_seed(0)
    dt = getattr(T, dtype)
    x = T.randn(*shape, dtype=dt, requires_grad=True)
    bn = T.nn.BatchNorm1d(3, dtype=dt)
    with T.no_grad():
        bn.running_mean.fill_(0.3)
        bn.running_var.fill_(1.7)
        bn.weight.mul_(1.5)
        bn.bias.add_(0.25)
    bn.train(training)
    y = bn(x)
    node = y.grad_fn
    structure = (node.name(), [None if n is None else n.name() for n, _ in node.next_functions], node._saved_training,
                 node._saved_eps)
    inputs = [x, bn.weight, bn.bias]
    first = T.autograd.grad(y, inputs, T.arange(float(x.numel()), dtype=dt).reshape(shape), create_graph=True)
    second = T.autograd.grad(sum((g * g).sum() for g in first), inputs, allow_unused=True, materialize_grads=True)
    return structure, [t.detach().numpy() for t in (y, *first, *second, bn.running_mean, bn.running_var)]


@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5)])
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("dtype, tol", [("float64", 1e-9), ("float32", 2e-3)])
def test_batch_norm_is_torchs_node(shape, training, dtype, tol):
    (got_structure, got), (want_structure, want) = (run_batch_norm(T, shape, training, dtype) for T in (mt, torch))
    assert got_structure == want_structure
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


def test_batch_norm_gradchecks_and_keeps_its_saved_running_statistics():
    x = mt.randn(5, 3, dtype=mt.float64, requires_grad=True)
    w = mt.randn(3, dtype=mt.float64, requires_grad=True)
    b = mt.randn(3, dtype=mt.float64, requires_grad=True)
    f = lambda x, w, b: mt.nn.functional.batch_norm(x, None, None, w, b, training=True)
    assert mt.autograd.gradcheck(f, (x, w, b)) and mt.autograd.gradgradcheck(f, (x, w, b))
    bn = mt.nn.BatchNorm1d(3)
    bn(mt.randn(4, 3, requires_grad=True)).sum().backward()  # (saved after the running update: no version error)
    assert "grad_fn=<NativeBatchNormBackward0>" in repr(bn(mt.randn(2, 3)))


@pytest.mark.parametrize("norm", ["layer", "batch train", "batch eval"])
def test_forward_mode_as_torchs(norm):
    def tangent(T):
        T.manual_seed(1)
        x, w, b = T.randn(5, 3, dtype=T.float64), T.randn(3, dtype=T.float64), T.randn(3, dtype=T.float64)
        tx, tw, tb = T.randn(5, 3, dtype=T.float64), T.randn(3, dtype=T.float64), T.randn(3, dtype=T.float64)
        rm, rv = T.full((3,), 0.2, dtype=T.float64), T.full((3,), 1.5, dtype=T.float64)
        f = {"layer": lambda x, w, b: T.nn.functional.layer_norm(x, (3,), w, b),
             "batch train": lambda x, w, b: T.nn.functional.batch_norm(x, None, None, w, b, training=True),
             "batch eval": lambda x, w, b: T.nn.functional.batch_norm(x, rm, rv, w, b, training=False)}[norm]
        return T.func.jvp(f, (x, w, b), (tx, tw, tb))[1].numpy()
    np.testing.assert_allclose(tangent(mt), tangent(torch), rtol=1e-10, atol=1e-12)
