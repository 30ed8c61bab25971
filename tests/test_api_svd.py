"""svd against torch: singular values, the reconstruction and sign-independent functions of U and V, their
gradients (reverse mode), jvp (forward mode) and vmap, for square, tall, wide and batched matrices.
(U and V are fixed only up to the signs of their columns, so those are compared through such functions.)"""
import numpy as np
import pytest
import torch

import microtorch as mt
from op_oracle import close

SHAPES = [(4, 4), (5, 3), (3, 5), (2, 4, 3)]


def invariants(lib, a):
    U, S, V = lib.svd(a)
    rec = U @ (S.unsqueeze(-1) * V.transpose(-2, -1))
    return S, rec, U @ U.transpose(-2, -1), V @ V.transpose(-2, -1)


@pytest.mark.parametrize("shape", SHAPES)
def test_svd_values_and_gradients_as_torch(shape):
    rng = np.random.default_rng(0)
    A = rng.standard_normal(shape)
    weights = [rng.standard_normal(o.shape) for o in invariants(torch, torch.tensor(A))]
    out = []
    for lib in (torch, mt):
        a = lib.tensor(A, requires_grad=True)
        vals = invariants(lib, a)
        assert vals[0].grad_fn.name() == "LinalgSvdBackward0"
        loss = sum(((v * lib.tensor(w)).sin()).sum() for v, w in zip(vals, weights))
        g, = lib.autograd.grad(loss, a)
        out.append(list(vals) + [g])
    for a, b in zip(out[1], out[0]):
        close(a, b, f"svd {shape}", 1e-8)


@pytest.mark.parametrize("shape", SHAPES)
def test_svd_jvp_and_vmap_as_torch(shape):
    rng = np.random.default_rng(1)
    A, T = rng.standard_normal(shape), rng.standard_normal(shape)
    res = [lib.func.jvp(lambda a: invariants(lib, a), (lib.tensor(A),), (lib.tensor(T),))[1] for lib in (torch, mt)]
    for a, b in zip(res[1], res[0]):
        close(a, b, f"svd jvp {shape}", 1e-8)
    B = rng.standard_normal((3,) + shape)
    res = [lib.func.vmap(lambda a: invariants(lib, a)[0])(lib.tensor(B)) for lib in (torch, mt)]
    close(res[1], res[0], "svd vmap")


def test_svd_method_and_errors_as_torch():
    A = np.random.default_rng(2).standard_normal((3, 2))
    close(mt.tensor(A).svd().S, torch.tensor(A).svd().S, "Tensor.svd")
    for lib in (torch, mt):
        with pytest.raises(RuntimeError):
            lib.svd(lib.ones(3))
