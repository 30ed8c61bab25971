"""jacrev and jacfwd agree to float32 rounding where tanh saturates (issue 13), as in torch.

PyTorch's jacobians tutorial asserts `allclose(jacrev(f)(x), jacfwd(f)(x))` for f = tanh of a
linear map; forward-mode rules use the same formulas as the reverse ones (the saved output for
tanh, sigmoid, exp, sqrt), so the two modes agree here too. Both are checked against torch.
"""
import numpy as np
import pytest
import torch
from torch.func import jacrev as t_jacrev

import microtorch as mt
from microtorch.func import jacfwd, jacrev


def _linear_map(seed, scale):
    rng = np.random.default_rng(seed)
    w = (rng.standard_normal((16, 16)) * scale).astype(np.float32)
    b = rng.standard_normal(16).astype(np.float32)
    x = rng.standard_normal(16).astype(np.float32)
    return w, b, x


@pytest.mark.parametrize("op", ["tanh", "sigmoid", "exp", "sqrt"])
@pytest.mark.parametrize("argnums", [0, 1, 2])
def test_jacrev_equals_jacfwd_float32_saturated(op, argnums):
    w, b, x = _linear_map(3, 6.0)  # large weights: many tanh/sigmoid entries saturate in float32
    assert (np.abs(w @ x + b) > 9).sum() >= 3

    def predict(L):
        def f(weight, bias, x):
            z = L.nn.functional.linear(x, weight, bias)
            return getattr(L, op)(z.abs() if op == "sqrt" else z / 8 if op == "exp" else z)
        return f
    args = [mt.tensor(a) for a in (w, b, x)]
    rev = jacrev(predict(mt), argnums=argnums)(*args)
    fwd = jacfwd(predict(mt), argnums=argnums)(*args)
    assert rev.dtype == fwd.dtype == mt.float32
    assert mt.allclose(rev, fwd)  # torch's default tolerances, as the tutorial asserts
    oracle = t_jacrev(predict(torch), argnums=argnums)(*[torch.tensor(a) for a in (w, b, x)])
    # torch and numpy round float32 tanh differently where 1 - y*y is tiny: compare to that rounding
    np.testing.assert_allclose(rev.numpy(), oracle.numpy(), rtol=1e-4, atol=1e-5)
