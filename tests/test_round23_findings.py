"""The twenty-third round's findings (teaching code run beside torch: the Annotated Transformer, yunjey's
tutorial, Stanford's CS231n and CS224n, fastbook, PINNs, labml), each checked against torch 2.13."""
import numpy as np
import pytest
import torch as real_torch

import microtorch

LIBS = (real_torch, microtorch)


def _error(fn):
    """(exception type name, message) of fn(), microtorch's name read as torch's."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 (the type is what is compared)
        return type(e).__name__, str(e).replace("microtorch", "torch")
    return None, None


def _same_error(make):
    """torch's type, and torch's text inside microtorch's message (microtorch may add a hint after it)."""
    (want_type, want), (got_type, got) = (_error(lambda lib=lib: make(lib)) for lib in LIBS)
    assert want_type is not None and got_type == want_type, (want, got)
    assert want in got, (want, got)


# ---- a tuple of ints holding something else: torch's parser names the element and where it is ----
@pytest.mark.parametrize("make", [
    lambda lib: lib.zeros((1.5, 2)), lambda lib: lib.zeros((2, 1.5)), lambda lib: lib.zeros((2, None)),
    lambda lib: lib.flip(lib.ones(2, 2), (1.5,)), lambda lib: lib.flip(lib.ones(2, 2), (0, 1.5)),
    lambda lib: lib.ones(2, 2).new_full((2, 1.5), 1), lambda lib: lib.ones(2, 2).permute((0, 1.5)),
    lambda lib: lib.tile(lib.ones(2), (1, 1.5)), lambda lib: lib.full((2, 1.5), 1.0),
    lambda lib: lib.as_strided(lib.ones(4), (1.5, 2), (1, 1)), lambda lib: lib.as_strided(lib.ones(4), (2, 2.5), (1, 1)),
])
def test_a_tuple_of_ints_holding_a_float(make):
    _same_error(make)
