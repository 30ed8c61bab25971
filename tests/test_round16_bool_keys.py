"""A Python bool (or a 0-d bool tensor) in an index key, beside torch: it is a 0-d mask, which adds a dim of
size 1 (True) or 0 (False), as torch reads it; it is not the integer 1 or 0 (bool is an int to Python). Reading
gives torch's values, graph (an unsqueeze, then an index of [0] or of nothing) and saved indices; writing gives
torch's values and gradients."""
import numpy as np
import pytest
import torch

import microtorch as mt
from tests.saved_compare import graph_of, observe

KEYS = ["True", "False", "(0, True)", "(True, 1)", "(slice(None), True, 1)", "(None, True)", "(Ellipsis, True)",
        "(True, False)", "(1, 2, True)", "(T.tensor([0, 1]), True)", "(True, T.tensor([0, 1]))", "T.tensor(True)",
        "(0, T.tensor(False))"]


def _read(T, key):
    return T.arange(6.0, dtype=T.float64).reshape(2, 3).requires_grad_()[eval(key, {"T": T})]


@pytest.mark.parametrize("key", KEYS)
def test_reading_with_a_bool_is_torchs_mask(key):
    theirs, mine = _read(torch, key), _read(mt, key)
    assert tuple(mine.shape) == tuple(theirs.shape) and mine.tolist() == theirs.tolist()
    assert graph_of(mine) == graph_of(theirs)
    assert observe(mt, lambda T: _read(T, key)) == observe(torch, lambda T: _read(T, key))


def _write(T, key):
    a = T.arange(6.0, dtype=T.float64).reshape(2, 3).requires_grad_()
    v = T.tensor(7.0, dtype=T.float64, requires_grad=True)
    b = a.clone()
    b[eval(key, {"T": T})] = v
    b.sum().backward()
    return b.tolist(), a.grad.tolist(), v.grad.item()


@pytest.mark.parametrize("key", [k for k in KEYS if k not in ("False", "(True, False)", "(0, T.tensor(False))")])
def test_writing_with_a_bool_changes_what_torch_changes(key):
    assert _write(mt, key) == _write(torch, key)


def test_a_bool_was_read_as_an_integer_before():
    """The bug this file guards against: x[True] was x[1]."""
    x = mt.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert x[True].shape == (1, 2, 2) and x[True].tolist() == [[[1.0, 2.0], [3.0, 4.0]]]
    assert x[0, False].shape == (0, 2)


NUMPY_KEYS = ["np.int64(1)", "np.int32(-1)", "np.array([0, 1])", "np.array(True)", "np.array([True, False])",
              "(np.int64(0), np.array([2, 0]))", "np.array(1)", "[np.int64(1), 0]",
              "(slice(np.int64(0), np.int64(2)),)",
              "(Ellipsis, np.int64(1))", "np.array([[True, False, True], [False, True, False]])",
              "(np.array([0, 1]), slice(None), None)", "np.uint8(1)", "np.bool_(True)", "1.0"]


def _numpy_key(T, key):
    a = T.arange(6.0, dtype=T.float64).reshape(2, 3).requires_grad_()
    b = T.zeros(2, 3, dtype=T.float64)
    try:
        y = a[eval(key, {"np": np})]
        y.backward(T.ones_like(y))
        read = (tuple(y.shape), y.tolist(), graph_of(y), a.grad.tolist())
    except IndexError:
        read = "IndexError"
    try:
        b[eval(key, {"np": np})] = 7.0
    except IndexError:
        return read, "IndexError"
    return read, b.tolist()


@pytest.mark.parametrize("key", NUMPY_KEYS)
def test_numpy_scalars_and_arrays_in_a_key_are_read_as_torch_reads_them(key):
    """a 0-d numpy integer array is an integer (a select), np.bool_ is refused, numpy arrays are index tensors"""
    assert _numpy_key(mt, key) == _numpy_key(torch, key)
