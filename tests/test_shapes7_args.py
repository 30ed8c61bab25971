"""Arguments beside torch 2.13: as_tensor's dtype and device are keyword-only, and add/sub/rsub's alpha is
the number torch's Scalar holds (a numpy scalar does not change the result's dtype; an int beyond 64 bits
overflows), out of place and in place."""
import numpy as np
import pytest
import torch

import microtorch as mt

LIBS = (torch, mt)


def _outcome(f):
    try:
        r = f()
    except Exception as e:  # noqa: BLE001 (the type is what is compared)
        return type(e).__name__
    node = r.grad_fn
    return tuple(r.shape), str(r.dtype).split(".")[-1], node and node.name(), np.round(r.tolist(), 6).tolist()


AS_TENSOR = {
    "dtype_positional": lambda L: L.as_tensor([1], L.float64),
    "dtype_device_positional": lambda L: L.as_tensor([1], L.float64, "cpu"),
    "none_positional": lambda L: L.as_tensor([1], None),
    "device_positional": lambda L: L.as_tensor([1], "cpu"),
    "keywords": lambda L: L.as_tensor([1], dtype=L.float64, device="cpu"),
    "device_object": lambda L: L.as_tensor([1.5], device=L.device("cpu")),
    "data_keyword": lambda L: L.as_tensor(data=[1.5]),
    "tensor_dtype": lambda L: L.as_tensor(L.tensor([1, 2]), dtype=L.float32),
    "array_dtype": lambda L: L.as_tensor(np.array([1, 2]), dtype=L.float32),
    "dtype_str": lambda L: L.as_tensor([1], dtype="float"),
    "requires_grad": lambda L: L.as_tensor([1], requires_grad=True),
    "no_data": lambda L: L.as_tensor(),
}


@pytest.mark.parametrize("case", sorted(AS_TENSOR))
def test_as_tensor_arguments(case):
    got = {L: _outcome(lambda: AS_TENSOR[case](L)) for L in LIBS}
    assert got[mt] == got[torch]


def test_as_tensor_still_shares_memory():
    a = np.array([1.0, 2.0])
    t = mt.as_tensor(a, device="cpu")
    a[0] = 5.0
    assert t[0].item() == 5.0
    x = mt.tensor([1.0])
    assert mt.as_tensor(x, device="cpu") is x


ALPHAS = {"np_float64": np.float64(2.5), "np_float32": np.float32(2.5), "np_float16": np.float16(1.5),
          "np_int64": np.int64(2), "np_int32": np.int32(3), "int": 2, "float": 2.5, "bool": True, "complex": 1j,
          "np_complex": np.complex128(1j), "tensor_0d": "0-d", "int_2_70": 2 ** 70, "int_minus_2_70": -2 ** 70,
          "int64_max": 2 ** 63 - 1}
CALLS = {
    "add": lambda L, a, b, al: L.add(a, b, alpha=al), "sub": lambda L, a, b, al: L.sub(a, b, alpha=al),
    "rsub": lambda L, a, b, al: L.rsub(a, b, alpha=al), "method": lambda L, a, b, al: a.add(b, alpha=al),
    "add_": lambda L, a, b, al: (a * 1).add_(b, alpha=al), "sub_": lambda L, a, b, al: (a * 1).sub_(b, alpha=al),
    "number": lambda L, a, b, al: L.add(a, 3, alpha=al), "integers": lambda L, a, b, al: L.add(a.long(), b.long(),
                                                                                                 alpha=al),
}


@pytest.mark.parametrize("call", sorted(CALLS))
@pytest.mark.parametrize("alpha", sorted(ALPHAS))
def test_alpha_keeps_torch_dtype(call, alpha):
    got = {}
    for L in LIBS:
        a = L.tensor([1.5, 2.25], requires_grad=True)
        b = L.tensor([0.5, 1.0])
        al = L.tensor(2.0) if ALPHAS[alpha] == "0-d" else ALPHAS[alpha]
        got[L] = _outcome(lambda: CALLS[call](L, a, b, al))
    assert got[mt] == got[torch]


def test_alpha_gradients_are_float32():
    got = {}
    for L in LIBS:
        a = L.tensor([1.5, 2.25], requires_grad=True)
        b = L.tensor([0.5, 1.0], requires_grad=True)
        out = L.sub(a, b, alpha=np.float64(0.1))
        ga, gb = L.autograd.grad(out.sum(), (a, b))
        got[L] = (str(out.dtype)[-7:], str(gb.dtype)[-7:], gb.tolist(), out.grad_fn._saved_alpha)
    assert got[mt] == got[torch]
    assert type(got[mt][3]) is float


def test_alpha_overflow_names_the_op():
    with pytest.raises(OverflowError, match=r"add\(\): int too big to convert"):
        mt.add(mt.ones(2), mt.ones(2), alpha=2 ** 64)
