"""A list used as a whole index key, as torch 2.13 reads it: a list holding a sequence, a tensor, a slice, None
or `...` is a tuple of indices (torch's legacy rule, with its warning); a list of numbers is one index. Before,
microtorch read every list as one index (a different shape), and `x[[1, [0, 1]]]` let numpy's ValueError out."""
import warnings

import numpy as np
import pytest
import torch

import microtorch as mt

KEYS = {
    "nested": lambda T: [[1, 0]],
    "two_lists": lambda T: [[1, 0], [0, 1]],
    "three_deep": lambda T: [[[1, 0]]],
    "number_and_list": lambda T: [1, [0, 1]],
    "ragged": lambda T: [[1], [0, 2]],
    "slice_first": lambda T: [slice(None), [0, 1]],
    "numbers": lambda T: [0, 1],
    "bools": lambda T: [True, False],
    "tensor_in_list": lambda T: [T.tensor([1, 0])],
    "two_tensors_in_list": lambda T: [T.tensor([1, 0]), T.tensor([0, 1])],
    "none_in_list": lambda T: [None, 0],
    "ellipsis_in_list": lambda T: [Ellipsis, 0],
    "tuple_of_list": lambda T: ([1, 0],),
    "long_list": lambda T: [0] * 40,
}


def _x(T):
    return T.arange(24.0, dtype=T.float64).reshape(2, 3, 4)


def _read(T, name):
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        try:
            y = _x(T)[KEYS[name](T)]
            out = (tuple(y.shape), np.asarray(y).tolist())
        except Exception as e:  # noqa: BLE001 (the type is what is compared)
            out = type(e).__name__
    return out, [(w.category, str(w.message).split(" (Triggered")[0]) for w in ws], [w.filename for w in ws]


def _write(T, name):
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        x = _x(T).requires_grad_()
        y = x * 1
        try:
            y[KEYS[name](T)] = -1.0
            y.sum().backward()
            out = np.asarray(y.detach()).tolist(), np.asarray(x.grad).tolist()
        except Exception as e:  # noqa: BLE001
            out = type(e).__name__
    return out, [(w.category, str(w.message).split(" (Triggered")[0]) for w in ws]


@pytest.mark.parametrize("name", sorted(KEYS))
def test_a_list_key_reads_as_torch(name):
    theirs, mine = _read(torch, name), _read(mt, name)
    assert mine[:2] == theirs[:2]
    assert all(f == __file__ for f in mine[2])


@pytest.mark.parametrize("name", sorted(KEYS))
def test_a_list_key_writes_as_torch(name):
    assert _write(mt, name) == _write(torch, name)
