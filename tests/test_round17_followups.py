"""Smaller differences found beside torch 2.13 this round: a bare False as an index key, native_channel_shuffle."""
import pytest
import torch

import microtorch as mt
from tests.saved_compare import graph_of

LIBS = (torch, mt)


@pytest.mark.parametrize("key", [False, True, (0, False), (slice(None), False)])
def test_writing_at_a_bool_key_as_torch(key):
    """a bare False writes nothing and records nothing (v gets no gradient); a False inside a tuple is an empty
    mask, recorded (v gets a zero gradient)"""
    seen = []
    for L in LIBS:
        x, v = L.ones(2, 3, requires_grad=True), L.tensor(5.0, requires_grad=True)
        b = x * 1
        version = b._version
        b[key] = v
        b.sum().backward()
        seen.append((graph_of(b), b._version - version, None if v.grad is None else v.grad.item(), x.grad.tolist()))
    assert seen[1] == seen[0]


def test_a_bare_false_key_still_checks_the_value_type():
    for L in LIBS:
        with pytest.raises(TypeError):
            L.ones(2)[False] = "a"


def test_native_channel_shuffle_has_no_derivative_as_torch():
    seen = []
    for L in LIBS:
        x = L.arange(16.0).reshape(1, 4, 2, 2).requires_grad_()
        y = L.native_channel_shuffle(x, 2)
        with pytest.raises(RuntimeError, match="derivative for aten::native_channel_shuffle is not implemented"):
            y.sum().backward()
        seen.append((y.tolist(), graph_of(y), L.channel_shuffle(x, 2).grad_fn.name()))
    assert seen[1] == seen[0]
