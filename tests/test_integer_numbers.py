"""A Python integer in an op on an integer tensor is cast to the tensor's dtype as torch casts it:
it wraps (uint8 + -1 adds 255), where numpy refuses an integer out of the dtype's range with its
own OverflowError. True division casts each operand to the default float from its own dtype, and
alpha is converted with torch's check. Every expression runs in torch and in microtorch."""
import numpy as np
import pytest
import torch

import microtorch as mt

EXPRESSIONS = [
    "u + (-1)", "u - (-1)", "u * (-1)", "(-1) * u", "300 - u", "u + 300", "u * 1000", "u - 300",
    "i8 + 200", "i8 * 1000", "i8 - 1000", "T.mul(i8, 1000)", "T.add(u, -1)",
    "u + 2**63 - 1", "u + 2**63", "u + (-2**63)", "i64 + 2**63", "u + 2**64",
    "u / (-1)", "T.true_divide(u, -1)", "(-1) / u", "u / T.tensor(-1)", "T.tensor(-1) / u",
    "u / T.tensor([-1, 300], dtype=T.int16)", "u / True", "T.tensor([True]) / 2",
    "u // -1", "T.floor_divide(u, -1)", "i8 // 300", "u // 2.5",
    "T.div(u, -1, rounding_mode='floor')", "T.div(u, -1, rounding_mode='trunc')",
    "T.div(i8, 300, rounding_mode='floor')", "T.div(i8, 300, rounding_mode='trunc')",
    "T.div(u, 2.5, rounding_mode='floor')",
    "T.remainder(-1, u)", "u % 300", "T.remainder(u, -1)", "T.fmod(i8, 300)", "u % 2**70", "T.fmod(u, 2**70)",
    "u.sub(300, alpha=2)", "u.add(3, alpha=-1)", "u.sub(3, alpha=-1)", "u.add(3, alpha=300)",
    "u.add(T.tensor([3, 4], dtype=T.uint8), alpha=300)", "i64.add(3, alpha=2**70)",
    "i64.add(i64, alpha=0.5)", "i64.sub(i64, alpha=2.0)", "i64.add(1, alpha=0.5)", "i64.clone().add_(i64, alpha=0.5)",
    "T.tensor([True]).add(T.tensor([True]), alpha=2)", "T.tensor([True]).add(T.tensor([True]), alpha=True)",
    "i64.add(i64, alpha=True)", "i64.add(i64, alpha=1.0)", "i64.sub(i64, alpha=1.0)", "i64.sub(1, alpha=True)",
    "T.add(i64, 2, alpha=1.0)", "T.ones(3).add(T.ones(3), alpha=True)", "T.ones(3).add(T.ones(3), alpha=1.0)",
    "T.ones(3).sub(2, alpha=1.0)",
    "u.clone().add_(-1)", "u.clone().mul_(300)", "i8.clone().sub_(1000)",
    "5 // u", "(-1) // u", "5.5 // T.tensor([2, 3])", "5 // T.tensor([1.5, -2.0])",
]


def _run(T, expression):
    env = {"T": T, "u": T.tensor([1, 200], dtype=T.uint8), "i8": T.tensor([7, -100], dtype=T.int8),
           "i64": T.tensor([1, -100])}
    try:
        out = eval(expression, env)
    except Exception as e:  # (compared by type with torch's)
        return type(e).__name__
    return out.tolist(), str(out.dtype).split(".")[-1]


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_integer_numbers_wrap_as_torch(expression):
    want, got = _run(torch, expression), _run(mt, expression)
    if isinstance(want, str):
        assert got == want
        return
    assert got[1] == want[1]
    np.testing.assert_allclose(np.asarray(got[0], float), np.asarray(want[0], float), rtol=1e-6)


def test_an_integer_beyond_64_bits_says_so_in_torchs_words():
    with pytest.raises(OverflowError, match="int too big to convert"):
        mt.tensor([1], dtype=mt.uint8) % 2 ** 70


def test_alpha_out_of_range_names_the_op_and_the_dtype():
    with pytest.raises(RuntimeError, match=r"uint8_t without overflow \(add: 300 does not fit in microtorch.uint8\)"):
        mt.tensor([1], dtype=mt.uint8).add(1, alpha=300)
