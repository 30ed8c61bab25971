"""The layout of einsum's result, and which zero a whole tensor's median returns, each beside torch 2.13.

- torch's einsum returns a view of its last product: a permuted `bmm` result (the operands swapped when every output
  dim of the second comes first) or a `mul` laid out by TensorIterator. microtorch's result has the same strides
  (since round 17 because einsum is composed of the same ops, ops/einsum.py), so view(), contiguous() and matmul's
  fold behave as in torch after it.
- median() of a whole tensor is std::nth_element over a copy in memory: among +0.0 and -0.0, which lands in the middle
  is that algorithm's choice (1 / median shows it).
"""
import random

import numpy as np
import pytest
import torch

import microtorch as mt

LIBS = (torch, mt)


def _operands(L, data):
    """each operand from its C-order data and the permutation that gives its shape"""
    return [L.tensor(d).permute(*p) for d, p in data]


def _random_einsum(rng):
    labels = "abcdAB"[:rng.randint(1, 6)]
    sizes = {c: rng.choice([1, 2, 3, 4]) for c in labels}
    terms = ["".join(rng.choice(labels) for _ in range(rng.randint(1, 4))) for _ in range(rng.choice([1, 2, 2, 3]))]
    used = sorted(set("".join(terms)))
    out = "".join(rng.sample(used, rng.randint(0, len(used))))
    data = []
    for t in terms:
        shape = [sizes[c] for c in t]
        perm = list(range(len(shape)))
        rng.shuffle(perm)
        values = np.arange(float(np.prod(shape))).reshape([shape[p] for p in perm]) / 7 - 1
        data.append((values, [int(i) for i in np.argsort(perm)]))
    return ",".join(terms) + "->" + out, data


@pytest.mark.parametrize("seed", range(4))
def test_random_einsums_have_torchs_strides(seed):
    rng, checked, transposed = random.Random(seed), 0, 0
    for _ in range(400):
        eq, data = _random_einsum(rng)
        want = torch.einsum(eq, *_operands(torch, data))
        got = mt.einsum(eq, *_operands(mt, data))
        assert (tuple(got.shape), got.stride()) == (tuple(want.shape), want.stride()), eq
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)
        checked += 1
        transposed += not want.is_contiguous()
    assert checked == 400 and transposed > 20  # (enough results in another order than C's were seen)


CASES = [  # (equation, shapes): a bmm kept in torch's order, one with the operands swapped, a product, three operands
    ("bij,bjk->kib", [(2, 3, 4), (2, 4, 5)]),
    ("ij,jk->ki", [(2, 3), (3, 4)]),
    ("ij,ij->ji", [(2, 3), (2, 3)]),
    ("ij,jk,kl->li", [(2, 3), (3, 4), (4, 5)]),
]


@pytest.mark.parametrize("eq,shapes", CASES)
def test_what_reads_the_layout_after_an_einsum_is_torchs(eq, shapes):
    """view() refuses or works, contiguous() copies or not, reshape is a view or a copy, as in torch"""
    seen = {}
    for L in LIBS:
        ops = [L.arange(float(np.prod(s))).reshape(s).requires_grad_() for s in shapes]
        r = L.einsum(eq, *ops)
        try:
            r.view(-1)
            view = "ok"
        except RuntimeError:
            view = "refused"
        c = r.contiguous()
        seen[L] = (r.stride(), view, c.grad_fn.name() if c is not r else None,
                   r.reshape(-1).grad_fn.name(), r.t().reshape(-1).grad_fn.name() if r.ndim == 2 else None)
    assert seen[mt] == seen[torch]


def test_an_in_place_op_after_contiguous_leaves_the_einsum_result_as_torch():
    """torch's contiguous() of a transposed einsum result is a copy: writing into it leaves the result alone"""
    out = {}
    for L in LIBS:
        a, b = L.arange(6.0).reshape(2, 3), L.arange(12.0).reshape(3, 4)
        r = L.einsum("ij,jk->ik", a, b).t().contiguous().t()  # (C order: contiguous() is r itself in both)
        s = L.einsum("bij,bjk->kib", L.ones(2, 3, 4), L.ones(2, 4, 5))
        s.contiguous().mul_(0)
        out[L] = (r.is_contiguous(), float(s.sum()))
    assert out[mt] == out[torch]


def _zeros_and_ones(rng, n):
    return [rng.choice([0.0, -0.0, 1.0, -1.0]) for _ in range(n)]


@pytest.mark.parametrize("layout", ["c", "t", "sliced"])
def test_the_median_of_a_whole_tensor_is_torchs_zero(layout):
    rng, differs = random.Random(1), 0
    for _ in range(300):
        rows, cols = rng.randint(1, 6), rng.randint(1, 6)
        values = np.array(_zeros_and_ones(rng, rows * cols)).reshape(rows, cols)
        picked = []
        for L in LIBS:
            x = L.tensor(values)
            x = x.t() if layout == "t" else x[:, ::2] if layout == "sliced" else x
            picked.append([(float(m), bool(np.signbit(float(m)))) for m in (L.median(x), L.nanmedian(x))])
        assert picked[1] == picked[0], values.tolist()
        differs += picked[0][0] == (0.0, True)
    assert differs > 10  # (-0.0 was torch's median often enough to tell)


def test_nanmedian_picks_its_zero_among_the_numbers_as_torch():
    for values in ([np.nan, 0.0, -0.0, 0.0, np.nan, -0.0], [-0.0, np.nan, 0.0, 0.0, 1.0]):
        got, want = (float(L.nanmedian(L.tensor(values))) for L in (mt, torch))
        assert np.signbit(got) == np.signbit(want) and got == want
