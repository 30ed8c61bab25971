"""slogdet (and logdet, det) of a tensor with fewer than 2 dims or of half precision, clamp with a complex bound
of a real tensor, nan_to_num with 0-d tensors for its numbers and ldexp with a complex or bool exponent, beside
torch 2.13: exception types and torch's words, dtypes and values."""
import pytest
import torch
from test_args6_lerp import same_as_torch

import microtorch as mt

CASES = [  # (call, a phrase torch's message and ours share, the op ours names)
    ("L.slogdet(L.tensor([1., 2.]))", "must have at least 2 dimensions", "slogdet"),
    ("L.linalg.slogdet(L.tensor([1., 2.]))", "must have at least 2 dimensions", "slogdet"),
    ("L.tensor([1., 2.]).slogdet()", "must have at least 2 dimensions", "slogdet"),
    ("L.slogdet(L.tensor(1.))", "must have at least 2 dimensions", "slogdet"),
    ("L.logdet(L.tensor([1., 2.]))", "must have at least 2 dimensions", "logdet"),
    ("L.det(L.tensor([1., 2.]))", "must have at least 2 dimensions", "det"),
    ("L.slogdet(L.ones(2, 3))", "2 by 3 matrices", "slogdet"),
    ("L.slogdet(L.eye(2, dtype=L.float16))", "Low precision dtypes not supported. Got Half", "slogdet"),
    ("L.logdet(L.eye(2, dtype=L.float16))", "Low precision dtypes not supported. Got Half", "logdet"),
    ("L.clamp(L.ones(2), 1j)", "value cannot be converted to type double without overflow", "clamp"),
    ("L.clamp(L.ones(2), max=1j)", "value cannot be converted to type double without overflow", "clamp"),
    ("L.clamp(L.ones(2, dtype=L.float16), 1j, 2)", "value cannot be converted to type double without overflow",
     "clamp"),
    ("L.clip(L.ones(2, dtype=L.float64), None, 2j)", "value cannot be converted to type double without overflow",
     "clip"),
    ("L.ones(2).clamp(1j)", "value cannot be converted to type double without overflow", "clamp"),
    ("L.ones(2).clamp_(1j)", "value cannot be converted to type double without overflow", "clamp_"),
    ("L.ones(2).clip_(1j)", "value cannot be converted to type double without overflow", "clip_"),
    ("L.clamp(L.ones(2), L.tensor(1.), 1j)", "value cannot be converted to type double without overflow", "clamp"),
    ("L.clamp(L.tensor([1, 2]), 1j)", "clamp", "clamp"),
    ("L.clamp_min(L.ones(2), 1j)", "clamp", "clamp_min"),
]


@pytest.mark.parametrize("call, phrase, op", CASES)
def test_error_as_torch(call, phrase, op):
    errors = []
    for lib in (torch, mt):
        with pytest.raises(Exception) as info:
            eval(call, {"L": lib})
        errors.append(info.value)
    t, m = errors
    assert isinstance(m, type(t)), (t, m)
    assert phrase in str(t) and phrase in str(m), (str(t), str(m))
    assert f"{op}()" in str(m) or f"\"{op}\"" in str(m), m


CALLS = ["f.nan_to_num(L.tensor(2.))", "f.nan_to_num(L.tensor(2.), L.tensor(3))", "f.clone().nan_to_num_(L.tensor(2.))",
         "L.nan_to_num(f, posinf=L.tensor(5.))", "f.nan_to_num(L.tensor(True))",
         "f.nan_to_num(L.tensor(2., requires_grad=True))", "f.nan_to_num(L.tensor([2.]))", "f.nan_to_num(L.tensor(2j))",
         "L.ldexp(g, L.tensor([1j, 2]))", "L.ldexp(g, L.tensor([True, False]))", "L.ldexp(g, L.tensor([1, 3]))",
         "g.detach().clone().ldexp_(L.tensor([True, False]))", "L.ldexp(L.tensor([1, 2]), L.tensor([True, False]))",
         "L.ldexp(L.tensor([1j, 2]), L.tensor([True, False]))"]


@pytest.mark.parametrize("call", CALLS)
def test_nan_to_num_and_ldexp_as_torch(call):
    same_as_torch(call, lambda L: {"f": L.tensor([float("nan"), float("inf"), 1.]),
                                   "g": L.tensor([1.5, -2.], requires_grad=True)})
