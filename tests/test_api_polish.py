"""Small gaps between microtorch and torch 2.13 left from earlier rounds, each checked beside torch: legacy
Tensor.new, Tensor.tile's int forms, pow's result dtypes on integer and bool tensors, the node names of sort and
its relatives, bitwise operators under vmap, and the arguments torch refuses in triu_indices and new_zeros."""
import numpy as np
import pytest
import torch

import microtorch as mt
from op_oracle import check_op


def _name(lib):
    return "torch" if lib is torch else "microtorch"


def _outcome(fn, lib):
    """(shape, dtype name, values) of fn(lib), or the type of what it raised."""
    try:
        out = fn(lib)
    except Exception as e:  # noqa: BLE001 (the type is what is compared)
        return type(e)
    return tuple(out.shape), str(out.dtype).split(".")[-1], out.detach().numpy().tolist()


def _same_as_torch(fn):
    t, m = _outcome(fn, torch), _outcome(fn, mt)
    assert m == t, f"torch {t}, microtorch {m}"
    return t


# ---- 1. Tensor.new -----------------------------------------------------------------------------------------
NEW_CASES = {
    "nothing": lambda l: l.tensor([1.0, 2.0]).new(),
    "device only": lambda l: l.tensor([1.0, 2.0]).new(device="cpu"),
    "sizes": lambda l: l.tensor([1.0, 2.0]).new(2, 3).zero_(),
    "one size": lambda l: l.tensor([1, 2]).new(4).zero_(),
    "Size": lambda l: l.tensor([1.0]).new(l.Size([2, 3])).zero_(),
    "empty Size": lambda l: l.tensor([1.0]).new(l.Size([])).zero_(),
    "size=": lambda l: l.tensor([1.0]).new(size=(2,)).zero_(),
    "int tensor as a size": lambda l: l.tensor([1.0]).new(l.tensor(2), 3).zero_(),
    "list data": lambda l: l.tensor([1.0]).new([1, 2]),
    "tuple data": lambda l: l.tensor([1.0]).new((2, 3)),
    "empty tuple": lambda l: l.tensor([1.0]).new(()),
    "data in x's dtype": lambda l: l.tensor([1, 2]).new([1.5, 2.5]),
    "data=": lambda l: l.tensor([True]).new(data=[0, 2]),
    "a number": lambda l: l.tensor([1.0]).new(1.5),
    "None": lambda l: l.tensor([1.0]).new(None),
    "a bool": lambda l: l.tensor([1.0]).new(True),
    "a string": lambda l: l.tensor([1.0]).new("a"),
    "a float among sizes": lambda l: l.tensor([1.0]).new(2.5, 3),
    "negative size": lambda l: l.tensor([1.0]).new(2, -1),
    "size=int": lambda l: l.tensor([1.0]).new(size=5),
    "dtype=": lambda l: l.tensor([1.0]).new(dtype=l.int64),
    "tensor of another dtype": lambda l: l.tensor([1.0]).new(l.tensor([1, 2])),
    "complex with an int tensor": lambda l: l.tensor([1j]).new(l.tensor([1, 2])),
}


@pytest.mark.parametrize("case", NEW_CASES)
def test_new_as_torch(case):
    _same_as_torch(NEW_CASES[case])


def test_new_with_nothing_is_1d_empty():
    out = mt.ones(2, 3, dtype=mt.float64).new()
    assert out.shape == (0,) and out.dtype == mt.float64 and not out.requires_grad


@pytest.mark.parametrize("lib", [torch, mt], ids=_name)
def test_new_of_a_tensor_aliases_it(lib):
    x, y = lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0], requires_grad=True)
    out = x.new(y)
    assert out.requires_grad and out._base is y and out.grad_fn.name() == "AliasBackward0"
    (out * lib.tensor([2.0, 5.0])).sum().backward()
    assert y.grad.tolist() == [2.0, 5.0]
    with lib.no_grad():
        out[0] = 7.0
    assert y.tolist() == [7.0, 4.0] and y._version == out._version == 1


# ---- 2. Tensor.tile ------------------------------------------------------------------------------------------
TILE_CASES = {
    "one int": lambda l, x: x.tile(2),
    "ints": lambda l, x: x.tile(2, 3),
    "more ints than dims": lambda l, x: x.tile(1, 2, 3),
    "tuple": lambda l, x: x.tile((2, 3)),
    "list": lambda l, x: x.tile([3]),
    "dims=": lambda l, x: x.tile(dims=(2, 1)),
    "0-d int tensor": lambda l, x: x.tile(l.tensor(2), 3),
    "nothing to repeat": lambda l, x: x.tile(()),
}


@pytest.mark.parametrize("case", TILE_CASES)
def test_tile_method_as_torch(case):
    check_op(TILE_CASES[case], np.arange(6.0).reshape(2, 3), grad_fn="RepeatBackward0")


def test_tile_of_0d_and_1d():
    _same_as_torch(lambda l: l.tensor(1.5).tile(3))
    _same_as_torch(lambda l: l.tensor([1.0, 2.0]).tile(2, 2))


TILE_ERRORS = {
    "dims=int": lambda l: l.ones(2, 2).tile(dims=2),
    "a float": lambda l: l.ones(2, 2).tile(2.0),
    "nothing": lambda l: l.ones(2, 2).tile(),
    "negative": lambda l: l.ones(2, 2).tile(-1),
    "torch.tile with an int": lambda l: l.tile(l.ones(2, 2), 2),  # (only the method takes ints)
    "torch.tile with ints": lambda l: l.tile(l.ones(2, 2), 2, 3),
}


@pytest.mark.parametrize("case", TILE_ERRORS)
def test_tile_refuses_as_torch(case):
    assert isinstance(_same_as_torch(TILE_ERRORS[case]), type)
    with pytest.raises(Exception, match="tile"):
        TILE_ERRORS[case](mt)
