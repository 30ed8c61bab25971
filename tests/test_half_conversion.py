"""float64 -> float16 conversions round as torch's: through float32 (c10's Half is made from a float), so twice.
numpy converts in one rounding, and about 4 in 100,000 values came out one step apart."""
import numpy as np
import pytest
import torch

import microtorch as mt

_RNG = np.random.default_rng(7)
# values across float16's range, including the ones near a tie that the two roundings split
_VALUES = _RNG.standard_normal(100_000) * 10.0 ** _RNG.integers(-7, 5, 100_000)

_CONVERSIONS = {
    "to": lambda T, a: T.tensor(a).to(T.float16),
    "half": lambda T, a: T.tensor(a).half(),
    "type": lambda T, a: T.tensor(a).type(T.float16),
    "tensor(array, dtype)": lambda T, a: T.tensor(a, dtype=T.float16),
    "as_tensor(array, dtype)": lambda T, a: T.as_tensor(a, dtype=T.float16),
    "tensor(list, dtype)": lambda T, a: T.tensor(a[:20_000].tolist(), dtype=T.float16),
    "complex128 to complex64, real, half": lambda T, a: T.tensor(a + 1j * a[::-1]).to(T.complex64).real.half(),
    "copy_": lambda T, a: T.zeros(len(a), dtype=T.float16).copy_(T.tensor(a)),
    "x[:] = double tensor": lambda T, a: _assigned(T, a),
    "add_ of a double tensor": lambda T, a: T.zeros(len(a), dtype=T.float16).add_(T.tensor(a)),
}


def _assigned(T, a):
    t = T.zeros(len(a), dtype=T.float16)
    t[:] = T.tensor(a)
    return t


def _bits(t):
    return t.detach().numpy().view(np.uint16)


@pytest.mark.parametrize("name", list(_CONVERSIONS))
def test_double_to_half_has_torchs_bits(name):
    ours, theirs = _bits(_CONVERSIONS[name](mt, _VALUES)), _bits(_CONVERSIONS[name](torch, _VALUES))
    assert (ours == theirs).all(), f"{int((ours != theirs).sum())} values differ"


def test_the_values_do_hold_cases_that_one_rounding_gets_otherwise():
    direct = _VALUES.astype(np.float16).view(np.uint16)  # (so the test above can fail)
    assert (direct != _bits(torch.tensor(_VALUES).half())).sum() >= 2


def test_to_half_keeps_its_gradient_and_node():
    for T in (torch, mt):
        x = T.tensor(_VALUES[:1000], requires_grad=True)
        y = x.to(T.float16)
        y.float().sum().backward()
        assert y.grad_fn.name() == "ToCopyBackward0" and x.grad.dtype == T.float64
        assert (x.grad.numpy() == 1.0).all()
