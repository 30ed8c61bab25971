"""Calls checked beside torch 2.13 in the seventh round: a dtype is keyword-only in torch's reductions and scans
(`x.sum(0, False, torch.float64)` is a TypeError there), while the keyword forms and numpy's names still work."""
import pytest
import torch

import microtorch as mt

POSITIONAL_DTYPE = [
    ("sum method", lambda lib, x: x.sum(0, False, lib.float64)),
    ("mean method", lambda lib, x: x.mean(0, False, lib.float64)),
    ("cumsum method", lambda lib, x: x.cumsum(0, lib.float64)),
    ("cumsum function", lambda lib, x: lib.cumsum(x, 0, lib.float64)),
    ("sum function", lambda lib, x: lib.sum(x, 0, False, lib.float64)),
]


@pytest.mark.parametrize("name,call", POSITIONAL_DTYPE, ids=[n for n, _ in POSITIONAL_DTYPE])
def test_a_positional_dtype_is_refused_as_torch_refuses_it(name, call):
    with pytest.raises(TypeError):
        call(torch, torch.ones(3))
    with pytest.raises(TypeError, match=name.split()[0]):
        call(mt, mt.ones(3))


KEYWORD_FORMS = [
    lambda lib, x: x.sum(0, False, dtype=lib.float64),
    lambda lib, x: x.sum(dim=0, keepdim=True),
    lambda lib, x: x.mean(dtype=lib.float64),
    lambda lib, x: x.mean(0, True),
    lambda lib, x: x.cumsum(0, dtype=lib.float64),
    lambda lib, x: lib.cumsum(x, dim=0, dtype=lib.float64),
]


@pytest.mark.parametrize("call", KEYWORD_FORMS)
def test_the_keyword_forms_give_torch_values_dtypes_and_nodes(call):
    t = call(torch, torch.tensor([[1.0, 2.0], [3.0, 4.5]], requires_grad=True))
    m = call(mt, mt.tensor([[1.0, 2.0], [3.0, 4.5]], requires_grad=True))
    assert str(m.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert m.tolist() == t.tolist()
    assert m.grad_fn.name() == t.grad_fn.name()


def test_numpy_names_still_reach_sum_and_mean():
    x = mt.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert x.sum(axis=0, keepdims=True).tolist() == [[4.0, 6.0]]
    assert x.mean(axis=1).tolist() == [1.5, 3.5]
