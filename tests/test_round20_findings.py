"""The twentieth round's findings, each compared with torch 2.13: the fuzzer's seeds and the lines of teaching code
(textbooks and courses run with the import changed) that differed."""
import itertools

import numpy as np
import pytest
import torch

import microtorch

LIBS = (torch, microtorch)


# ---- suggest_memory_format (fuzz 4,675,070) ------------------------------------------------------------------------
# torch reads a layout as channels last by its strides in the order C, W, (H, D,) N, size-1 dims included (so a
# size-1 W with the channel's stride is C order). pad lays its output out so, and `to(memory_format=)` compares with it.
def _layouts():
    for shape in [(1, 2, 1, 2, 1), (2, 3, 1, 1), (1, 3, 2, 2), (2, 1, 3, 3), (2, 3, 4, 5), (1, 1, 2, 2), (2, 2, 1, 3, 2)]:
        for perm in itertools.permutations(range(len(shape))):
            yield shape, perm


def _made(lib, shape, perm):
    base = lib.arange(float(np.prod(shape))).reshape([shape[d] for d in perm])
    return base.permute(*np.argsort(perm).tolist())


@pytest.mark.parametrize("shape,perm", list(_layouts())[::3])
def test_pad_lays_out_as_torch(shape, perm):
    outs = [lib.nn.functional.pad(_made(lib, shape, perm), (1, 1)) for lib in LIBS]
    assert outs[0].shape == outs[1].shape
    assert outs[0].stride() == outs[1].stride()
    np.testing.assert_array_equal(outs[0].numpy(), outs[1].numpy())


@pytest.mark.parametrize("shape,perm", list(_layouts())[1::3])
def test_to_memory_format_copies_when_torch_does(shape, perm):
    for fmt in ("channels_last", "channels_last_3d", "contiguous_format"):
        if fmt != "contiguous_format" and len(shape) != (4 if fmt == "channels_last" else 5):
            continue
        same = []
        for lib in LIBS:
            x = _made(lib, shape, perm)
            same.append(x.to(lib.float64, memory_format=getattr(lib, fmt)) is x)
        assert same[0] == same[1], fmt


def test_fuzz_4675070_matmul_after_pad_views_as_torch():
    names = []
    for lib in LIBS:
        a0 = lib.tensor([[[1., 2.], [1., 1.]]], dtype=lib.float64, requires_grad=True)
        v1 = lib.clamp(lib.einsum('abc->cab', a0), min=0, max=0).unsqueeze_(0).unsqueeze(-1)
        v7 = lib.matmul(lib.nn.functional.pad(v1, (1, 1)), lib.tensor([0., -1., -0.], dtype=lib.float64))
        node, chain = v7.grad_fn, []
        while node is not None and node.next_functions:
            chain.append(node.name())
            node = node.next_functions[0][0]
        names.append(chain)
    assert names[0] == names[1]
