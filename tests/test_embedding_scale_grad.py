"""F.embedding(scale_grad_by_freq=True) and nn.Embedding's flag, beside torch 2.13: each gradient row is
divided by how often its index occurs in the batch; the double backward is unscaled, as torch's."""
import numpy as np
import pytest
import torch

import microtorch as mt

IDX = [[0, 2, 0], [4, 0, 2]]
RNG = np.random.default_rng(7)
W = RNG.standard_normal((5, 3))
G = RNG.standard_normal((2, 3, 3))
V = RNG.standard_normal((5, 3))


def _grads(lib, padding_idx, scale=True):
    """(output, dW, d(dW . V)/dG and its grad_fn name) of embedding(IDX, W) with the flag."""
    w = lib.tensor(W.copy(), requires_grad=True)
    g = lib.tensor(G.copy(), requires_grad=True)
    out = lib.nn.functional.embedding(lib.tensor(IDX), w, padding_idx=padding_idx, scale_grad_by_freq=scale)
    (dw,) = lib.autograd.grad(out, w, g, create_graph=True)
    (dg,) = lib.autograd.grad(dw, g, lib.tensor(V.copy(), requires_grad=True), create_graph=True)
    return out, dw, dg, dw.grad_fn.name(), dg.grad_fn.name()


@pytest.mark.parametrize("padding_idx", [None, 0, 2, -1])
@pytest.mark.parametrize("scale", [True, False])
def test_embedding_gradients_as_torch(padding_idx, scale):
    t, m = _grads(torch, padding_idx, scale), _grads(mt, padding_idx, scale)
    for a, b in zip(t[:3], m[:3]):
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-12, atol=1e-12)
    assert m[3:] == t[3:]  # EmbeddingDenseBackwardBackward0, then the double backward's last op


def test_the_counts_are_those_of_the_whole_batch():
    # hand-derived: index 0 occurs 3 times, 2 twice, 4 once; rows 1 and 3 get nothing
    w = mt.ones(5, 2, requires_grad=True)
    mt.nn.functional.embedding(mt.tensor(IDX), w, scale_grad_by_freq=True).sum().backward()
    assert w.grad.tolist() == [[1.0, 1.0], [0.0, 0.0], [1.0, 1.0], [0.0, 0.0], [1.0, 1.0]]


def test_the_module_flag_and_forward_mode():
    for lib in (torch, mt):
        lib.manual_seed(0)
    m = mt.nn.Embedding(5, 3, scale_grad_by_freq=True)
    t = torch.nn.Embedding(5, 3, scale_grad_by_freq=True)
    with torch.no_grad():
        t.weight.copy_(torch.tensor(m.weight.detach().numpy()))
    m(mt.tensor(IDX)).pow(2).sum().backward()
    t(torch.tensor(IDX)).pow(2).sum().backward()
    np.testing.assert_allclose(m.weight.grad.numpy(), t.weight.grad.numpy(), rtol=1e-6)
    import microtorch.autograd.forward_ad as fw
    with fw.dual_level():
        out = mt.nn.functional.embedding(mt.tensor(IDX), fw.make_dual(mt.tensor(W), mt.tensor(V)),
                                         scale_grad_by_freq=True)
        np.testing.assert_allclose(fw.unpack_dual(out).tangent.numpy(), V[IDX])


def test_sparse_gradients_say_why_they_are_refused():
    with pytest.raises(NotImplementedError, match="sparse"):
        mt.nn.functional.embedding(mt.tensor([0]), mt.ones(2, 2), sparse=True)


@pytest.mark.parametrize("in_dims", [(None, 0), (0, None), (0, 0)])
def test_vmap_of_grad_counts_per_example_with_a_rule_as_torch(in_dims):
    """The counts are per example, and torch batches this (no per-example fallback, so no warning)."""
    import warnings
    idx = np.array([[0, 0, 1], [2, 1, 1]])  # one batch of indices per example
    weights = np.stack([W, 2 * W])
    results = []
    for lib in (torch, mt):
        f = lambda w, i: lib.nn.functional.embedding(i, w, scale_grad_by_freq=True).pow(2).sum()  # noqa: E731
        w = lib.tensor(W if in_dims[0] is None else weights)
        i = lib.tensor(idx if in_dims[1] == 0 else idx[0])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            results.append(lib.func.vmap(lib.func.grad(f), in_dims=in_dims)(w, i).numpy())
        assert not [c for c in caught if "performance drop" in str(c.message)]
    np.testing.assert_allclose(results[1], results[0], rtol=1e-12)
