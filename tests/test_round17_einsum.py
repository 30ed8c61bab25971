"""einsum composed of the ops torch composes it of (ops/einsum.py), beside torch 2.13.

Before this round einsum was one EinsumBackward0 node in microtorch, where torch records its lined-up operands
(`diagonal`, `unsqueeze`, `permute`), the sums of labels one operand has, and its products (`mul`, or `permute`,
`reshape`, `bmm`, `view`, `permute`). Now the graph is torch's node for node and edge for edge, and so are what the
nodes save, the result's strides, its values and the gradients. Matrix products of bool tensors now raise torch's
NotImplementedError (numpy answered with `or` and `and`).
"""
import random

import numpy as np
import pytest
import torch

import microtorch as mt
from test_round14_einsum_median import _operands, _random_einsum
from tests.saved_compare import STRIDES, describe, graph_of, nodes_of, saved_names

LIBS = (torch, mt)


def _run(L, eq, data, grad_seed):
    """The einsum of leaves that require grad (permuted after: the operands are views), its graph, strides, values,
    and each leaf's gradient from a fixed random output gradient."""
    leaves = [L.tensor(d, requires_grad=True) for d, _ in data]
    ops = [x.permute(*p) for x, (_, p) in zip(leaves, data)]
    y = L.einsum(eq, *ops)
    g = np.random.default_rng(grad_seed).standard_normal(tuple(y.shape))
    y.backward(L.tensor(g))
    return graph_of(y), y.stride(), y.detach().numpy(), [x.grad.numpy() for x in leaves]


@pytest.mark.parametrize("seed", range(4))
def test_random_einsums_record_torchs_graph_values_and_gradients(seed):
    rng, nodes = random.Random(100 + seed), set()
    for k in range(250):
        eq, data = _random_einsum(rng)
        (tg, ts, tv, tgrads), (mg, ms, mv, mgrads) = (_run(L, eq, data, k) for L in LIBS)
        assert mg == tg, eq
        assert ms == ts, eq
        np.testing.assert_array_equal(mv, tv, err_msg=eq)
        for want, got in zip(tgrads, mgrads):
            np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13, err_msg=eq)
        nodes.update(name for name, _ in tg)
    assert {"BmmBackward0", "MulBackward0", "SumBackward1", "DiagonalBackward0", "UnsqueezeBackward0"} <= nodes


CASES = [  # (equation, shapes)
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk->ki", [(2, 3), (3, 4)]),  # the operands swapped for bmm
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ij,ik->", [(2, 3), (2, 4)]),  # a label each operand alone has: summed first
    ("ii,i->i", [(3, 3), (3,)]),  # a diagonal, then a product
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),  # three operands: a reshape that copies
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),
    ("ijk->ki", [(2, 3, 4)]),  # one operand: a sum
]


def _saved_in_graph(L, eq, shapes, names=None):
    """What the pack hooks saw, in order, and each node's `_saved_*` values (breadth first; names: torch's, per
    node, so that a value microtorch's node lacks raises)."""
    packs = []

    def pack(t):
        packs.append(describe(t))
        return t
    with L.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        ops = [L.arange(1.0, 1 + np.prod(s)).reshape(s).requires_grad_() for s in shapes]
        y = L.einsum(eq, *ops)
    nodes = nodes_of(y)
    names = names or [saved_names(n, STRIDES) for n in nodes]
    return packs, [{k: describe(getattr(n, k), typed=True) for k in ks} for n, ks in zip(nodes, names)], names


@pytest.mark.parametrize("eq,shapes", CASES)
def test_each_node_saves_what_torchs_saves(eq, shapes):
    packs, values, names = _saved_in_graph(torch, eq, shapes)
    assert _saved_in_graph(mt, eq, shapes, names)[:2] == (packs, values)


@pytest.mark.parametrize("eq,shapes,changed", [
    ("ij,jk->ik", [(2, 3), (3, 4)], 0),  # bmm saves a view of the operand: backward raises
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)], 1),  # its reshape copied: backward works
    ("ij,ik->", [(2, 3), (2, 4)], 0),  # the operand was summed first: backward keeps the sum
])
def test_an_operand_changed_in_place_after_the_einsum_as_torch(eq, shapes, changed):
    seen = []
    for L in LIBS:
        leaves = [L.ones(s, requires_grad=True) for s in shapes]
        ops = [x * 1 for x in leaves]
        y = L.einsum(eq, *ops)
        ops[changed].mul_(2)
        try:
            y.sum().backward()
            seen.append(("ok", [x.grad.sum().item() for x in leaves]))
        except RuntimeError as e:
            seen.append(("raises", "modified by an inplace operation" in str(e)))
    assert seen[1] == seen[0]


def _outcome(f):
    try:
        y = f()
        return "ok", str(y.dtype).split(".")[-1], tuple(y.shape)
    except Exception as e:  # noqa: BLE001  (the type is what is compared)
        return type(e).__name__


EINSUM_CALLS = {
    "sublists": lambda L: L.einsum(L.ones(2, 3), [0, 1], L.ones(3, 4), [1, 2], [0, 2]),
    "sublists, implicit output": lambda L: L.einsum(L.ones(2, 3), [0, 1], L.ones(3, 4), [1, 2]),
    "sublists with an ellipsis": lambda L: L.einsum(L.ones(5, 2, 3), [Ellipsis, 0, 1], L.ones(3, 4), [1, 2],
                                                   [Ellipsis, 2]),
    "sublist label out of range": lambda L: L.einsum(L.ones(2, 3), [0, 52]),
    "a list of operands": lambda L: L.einsum("ij,jk", [L.ones(2, 3), L.ones(3, 4)]),
    "no operand": lambda L: L.einsum("ij"),
    "an equation that is not a string": lambda L: L.einsum(5, L.ones(2)),
    "float and double": lambda L: L.einsum("ij,jk->ik", L.ones(2, 3), L.ones(3, 4, dtype=L.float64)),
    "float and double, no sum": lambda L: L.einsum("ij,ij->ij", L.ones(2, 3), L.ones(2, 3, dtype=L.float64)),
    "bool": lambda L: L.einsum("i,i->", L.ones(2, dtype=L.bool), L.ones(2, dtype=L.bool)),
    "int32 sum": lambda L: L.einsum("ij->", L.ones(2, 3, dtype=L.int32)),
    "ellipses that do not broadcast": lambda L: L.einsum("...ij,...jk", L.ones(2, 3, 4), L.ones(3, 4, 5)),
    "repeated label of two sizes": lambda L: L.einsum("ii", L.ones(2, 3)),
    "label sizes that do not broadcast": lambda L: L.einsum("ij,jk", L.ones(2, 3), L.ones(4, 5)),
    "more operands than terms": lambda L: L.einsum("ij->ij", L.ones(2, 3), L.ones(2, 3)),
    "empty contraction": lambda L: L.einsum("ij,jk->ik", L.ones(3, 0), L.ones(0, 5)),
    "a numpy operand": lambda L: L.einsum("i->", np.ones(2)),
    "a list operand": lambda L: L.einsum("i,i", [1.0, 2.0], L.ones(2)),
    "a number operand": lambda L: L.einsum("ij,jk", L.ones(2, 3), 3.0),
    "None as operand": lambda L: L.einsum("i", None),
}


@pytest.mark.parametrize("name", EINSUM_CALLS)
def test_einsum_calls_end_as_torchs(name):
    assert _outcome(lambda: EINSUM_CALLS[name](mt)) == _outcome(lambda: EINSUM_CALLS[name](torch))


def test_the_ellipsis_message_names_the_dim_and_both_sizes():
    with pytest.raises(RuntimeError, match=r"dimension 0 covered by ellipsis in operand 1 has size 3 .* size 2"):
        mt.einsum("...ij,...jk", mt.ones(2, 3, 4), mt.ones(3, 4, 5))


PRODUCTS = {
    "dot": lambda L, d: L.dot(L.ones(3, dtype=d), L.ones(3, dtype=d)),
    "mv": lambda L, d: L.mv(L.ones(2, 3, dtype=d), L.ones(3, dtype=d)),
    "mm": lambda L, d: L.mm(L.ones(2, 3, dtype=d), L.ones(3, 2, dtype=d)),
    "bmm": lambda L, d: L.bmm(L.ones(1, 2, 3, dtype=d), L.ones(1, 3, 2, dtype=d)),
    "matmul 1d": lambda L, d: L.matmul(L.ones(3, dtype=d), L.ones(3, dtype=d)),
    "matmul 3d": lambda L, d: L.matmul(L.ones(2, 2, 3, dtype=d), L.ones(2, 3, 2, dtype=d)),
    "matmul 3d by 2d": lambda L, d: L.matmul(L.ones(2, 2, 3, dtype=d), L.ones(3, 2, dtype=d)),
    "addmm": lambda L, d: L.addmm(L.ones(2, 2, dtype=d), L.ones(2, 3, dtype=d), L.ones(3, 2, dtype=d)),
    "baddbmm": lambda L, d: L.baddbmm(L.ones(1, 2, 2, dtype=d), L.ones(1, 2, 3, dtype=d), L.ones(1, 3, 2, dtype=d)),
}


@pytest.mark.parametrize("name", PRODUCTS)
@pytest.mark.parametrize("dtype", ["bool", "int8", "int64", "float16"])
def test_matrix_products_take_the_dtypes_torchs_take(name, dtype):
    got = _outcome(lambda: PRODUCTS[name](mt, getattr(mt, dtype)))
    assert got == _outcome(lambda: PRODUCTS[name](torch, getattr(torch, dtype)))


def test_vmap_and_forward_ad_through_einsum_as_torch():
    a, b = np.random.default_rng(0).standard_normal((2, 4, 3, 5))
    out = []
    for L in LIBS:
        x, y = L.tensor(a), L.tensor(b)
        batched = L.func.vmap(lambda u, v: L.einsum("ij,kj->ik", u, v))(x, y)
        _, tangent = L.func.jvp(lambda u: L.einsum("bij,bkj->bik", u, y), (x,), (L.ones_like(x),))
        out.append((batched.numpy(), tangent.numpy()))
    for want, got in zip(*out):
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)
