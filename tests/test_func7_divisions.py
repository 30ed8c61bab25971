"""Unary backward formulas that divide as torch's do (grad / x for log, grad / (2 sqrt(x)) for sqrt, ...), rather
than multiply by a reciprocal, which rounds elsewhere: the same bits as torch's gradients, second order and
tangents where the forward values agree."""
import numpy as np
import pytest
import torch

import microtorch as mt

OPS = {"log": (0.1, 5.0), "log2": (0.1, 5.0), "log10": (0.1, 5.0), "log1p": (0.1, 5.0), "atan": (-3.0, 3.0),
       "sqrt": (0.1, 5.0)}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", list(OPS))
def test_unary_divisions_have_torchs_bits(op, dtype):
    rng = np.random.default_rng(1)
    a, g = rng.uniform(*OPS[op], 1000).astype(dtype), rng.standard_normal(1000).astype(dtype)
    results = []
    for T in (torch, mt):
        x = T.tensor(a, requires_grad=True)
        y = getattr(x, op)()
        (gx,) = T.autograd.grad(y, x, T.tensor(g), create_graph=True)
        (ggx,) = T.autograd.grad(gx.sum(), x)
        with T.autograd.forward_ad.dual_level():
            dual = T.autograd.forward_ad.make_dual(T.tensor(a), T.tensor(g))
            tangent = T.autograd.forward_ad.unpack_dual(getattr(dual, op)()).tangent
        results.append([v.detach().numpy() for v in (y, gx, ggx, tangent)])
    forward_same = results[0][0] == results[1][0]  # (sqrt's result: numpy and torch differ by an ulp here and there)
    for theirs, ours in zip(results[0][1:], results[1][1:]):
        assert (theirs == ours)[forward_same].all()
