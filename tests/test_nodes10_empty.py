"""Empty tensors' strides beside torch 2.13. torch gives a tensor with a dim of size 0 the strides of its layout,
counting each size-0 dim as 1 (empty(0, 3).stride() is (3, 1)); numpy 2 gives every new empty array zero strides,
which Tensor.stride() (_tensor.py) replaces by torch's."""
import pytest
import torch

import microtorch as mt

FRESH = {
    "empty(0, 3)": lambda L: L.empty(0, 3),
    "empty(3, 0)": lambda L: L.empty(3, 0),
    "zeros(2, 0, 4)": lambda L: L.zeros(2, 0, 4),
    "ones(0)": lambda L: L.ones(0),
    "tensor([[], []])": lambda L: L.tensor([[], []]),
    "full((0, 2, 3), 1.0)": lambda L: L.full((0, 2, 3), 1.0),
    "empty(0, 3) + 1": lambda L: L.empty(0, 3) + 1,
    "cat of empties": lambda L: L.cat([L.empty(0, 3), L.empty(0, 3)]),
}
VIEWS = {  # (numpy keeps the strides of a slice: these agree already)
    "ones(4, 3)[2:2]": lambda L: L.ones(4, 3)[2:2],
    "ones(4, 3)[:, 1:1]": lambda L: L.ones(4, 3)[:, 1:1],
    "ones(3, 4).narrow(1, 2, 0)": lambda L: L.ones(3, 4).narrow(1, 2, 0),
    "empty(0, 3).sum(0)": lambda L: L.empty(0, 3).sum(0),
}


@pytest.mark.parametrize("name", list(VIEWS))
def test_an_empty_slice_keeps_torchs_strides(name):
    assert VIEWS[name](mt).stride() == VIEWS[name](torch).stride()


@pytest.mark.parametrize("name", list(FRESH))
def test_a_new_empty_tensor_has_torchs_strides(name):
    assert FRESH[name](mt).stride() == FRESH[name](torch).stride()
