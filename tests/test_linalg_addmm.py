"""addmm's input (the bias nn.Linear adds) checked as torch checks it, and the product computed with the
bias added in place: values, dtype and layout beside torch."""
import numpy as np
import pytest
import torch

import microtorch as mt


def run(L, bias_shape, bias_dtype="float64"):
    r = np.random.default_rng(0)
    x, w = r.standard_normal((2, 4)), r.standard_normal((4, 3))
    b = r.standard_normal(bias_shape).astype(bias_dtype)
    try:
        out = L.addmm(L.tensor(b, requires_grad=bias_dtype == "float64"), L.tensor(x), L.tensor(w, requires_grad=True))
    except Exception as e:  # noqa: BLE001 (the type is compared with torch's)
        return type(e).__name__
    out.sum().backward()
    return out.detach().numpy(), str(out.dtype).split(".")[-1], out.stride(), type(out.grad_fn).__name__


@pytest.mark.parametrize("shape, dtype", [((3,), "float64"), ((2, 3), "float64"), ((2, 1), "float64"), ((1,), "float64"),
                                          ((), "float64"), ((5,), "float64"), ((3, 2), "float64"),
                                          ((1, 2, 3), "float64"), ((3,), "float32"), ((3,), "int64")])
def test_addmm_input_as_torch(shape, dtype):
    ours, theirs = run(mt, shape, dtype), run(torch, shape, dtype)
    if isinstance(theirs, str):
        assert ours == theirs
        return
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-14, atol=1e-15)
    assert ours[1:] == theirs[1:]


def test_linear_refuses_a_bias_of_another_dtype_as_torch():
    for L in (torch, mt):
        x, w, b = L.ones(2, 4, dtype=L.float64), L.ones(3, 4, dtype=L.float64), L.zeros(3, dtype=L.float32)
        with pytest.raises(RuntimeError, match="same dtype"):
            L.nn.functional.linear(x, w, b)
