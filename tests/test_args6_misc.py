"""slogdet (and logdet, det) of a tensor with fewer than 2 dims or of half precision, and clamp with a complex
bound of a real tensor, beside torch 2.13: exception types and torch's words."""
import pytest
import torch

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
