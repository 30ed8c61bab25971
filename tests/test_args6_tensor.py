"""tensor() beside torch 2.13: numpy scalars that are not Python ints or floats into an integer dtype (torch
reads an integer with __index__: np.float32 and np.bool_ are refused), tensors inside the data (each stands for
one number: a tensor of several is torch's ValueError, not a stack), Python complex numbers into a real dtype,
and the cheap path for Python numbers and flat lists (the same values, dtypes and errors as the general one).
as_tensor's messages name as_tensor once."""
import warnings

import numpy as np
import pytest
import torch

import microtorch as mt

CALLS = [
    "L.tensor(np.float32(1.0), dtype=L.int8)", "L.tensor(np.float32(300.0), dtype=L.int8)",
    "L.tensor(np.float32(1.0), dtype=L.int64)", "L.tensor(np.float16(1.0), dtype=L.int16)",
    "L.tensor(np.float32(1.0), dtype=L.uint8)", "L.tensor(np.bool_(True), dtype=L.int8)",
    "L.tensor(np.float32(1.5), dtype=L.bool)", "L.tensor([np.float32(1.0)], dtype=L.int8)",
    "L.tensor(np.longdouble(1), dtype=L.int64)", "L.as_tensor(np.float32(1.0), dtype=L.int8)",
    "L.tensor([np.bool_(True), 1], dtype=L.int64)", "L.tensor([np.int64(3), 1], dtype=L.int64)",
    "L.tensor([[[1, 2]], [[3, 400]]], dtype=L.int8)", "L.tensor([[[1, 2]], [[3, 4]]], dtype=L.int8)",
    "L.tensor(np.float64(1.5), dtype=L.int8)", "L.tensor(np.int64(3), dtype=L.int8)",
    "L.tensor(np.int64(300), dtype=L.int8)", "L.tensor(np.bool_(True), dtype=L.bool)",
    "L.tensor(np.bool_(True), dtype=L.float32)", "L.tensor(np.float32(2.5), dtype=L.complex64)",
    "L.tensor(np.uint64(2), dtype=L.int8)", "L.tensor([np.float64(1.0), 2], dtype=L.int8)",
    "L.tensor(np.array([1.5, 300.]), dtype=L.int8)", "L.tensor(np.array(1.5, dtype=np.float32), dtype=L.int8)",
    # tensors in the data
    "L.tensor([t1, t2])", "L.tensor((t1, t2))", "L.tensor([t1])", "L.as_tensor([t1, t2])",
    "L.tensor([L.tensor([]), L.tensor([])])", "L.tensor([s1, s2])", "L.tensor([[s1], [s2]])",
    "L.tensor([L.tensor([1])])", "L.tensor([L.tensor([1.]), 2.])", "L.tensor([[1., 2.], t2])",
    "L.tensor([L.tensor(1.5)], dtype=L.int8)", "L.tensor([L.tensor(True)], dtype=L.int8)",
    "L.tensor([L.tensor(300)], dtype=L.int8)", "L.tensor([L.tensor(1), L.tensor(2.)])",
    # Python complex into a real dtype
    "L.tensor(1j, dtype=L.float32)", "L.tensor([1, 2j], dtype=L.float64)", "L.tensor([1j], dtype=L.int32)",
    # the cheap path and its edges
    "L.tensor(2.)", "L.tensor(3)", "L.tensor(True)", "L.tensor(1j)", "L.tensor(2., dtype=L.float64)",
    "L.tensor(3, dtype=L.complex64)", "L.tensor(-1, dtype=L.uint8)", "L.tensor(-256, dtype=L.uint8)",
    "L.tensor(2.5, dtype=L.int8)", "L.tensor(200.5, dtype=L.int8)", "L.tensor(1e300)",
    "L.tensor(1e300, dtype=L.float16)", "L.tensor(70000.)", "L.tensor(2 ** 70, dtype=L.float32)", "L.tensor(2 ** 70)",
    "L.tensor(2 ** 63)", "L.tensor(True, dtype=L.int8)", "L.tensor(3, dtype=L.bool)", "L.tensor(2.5, dtype=L.bool)",
    "L.tensor(float('nan'))", "L.tensor(float('nan'), dtype=L.int32)", "L.tensor([])", "L.tensor([[]])",
    "L.tensor([1, 2.5, True])", "L.tensor([1, 2, 3], dtype=L.int8)", "L.tensor([1, 300], dtype=L.int8)",
    "L.tensor([-1, 255], dtype=L.uint8)", "L.tensor([-256, 255], dtype=L.uint8)", "L.tensor([2 ** 63, 1])",
    "L.tensor([2 ** 63, 1], dtype=L.float32)", "L.tensor([1, 2], dtype=L.bool)", "L.tensor([0.5, 0.], dtype=L.bool)",
    "L.tensor([1.5, 2], dtype=L.int64)", "L.tensor([1e300, float('nan')], dtype=L.float16)",
    "L.tensor([float('nan'), 1e300], dtype=L.float32)", "L.tensor([[1., 2.], [3., 4.]])",
    "L.tensor([[1, 2], [3, 4.5]])", "L.tensor([[1, 2], (3, 4)], dtype=L.int8)",
    "L.tensor([[1, 2], [3, 400]], dtype=L.int8)",
    "L.tensor([[1, 2], [3]])", "L.tensor([[], []])", "L.tensor([[[1]], [[2]]])", "L.tensor([[True, False]])",
    "L.tensor([[1j, 2]])", "L.tensor((1., 2.), requires_grad=True)", "L.tensor([1, 2], requires_grad=True)",
    "L.tensor(3, requires_grad=True)", "L.tensor([True, 2], dtype=L.bool)", "L.tensor([1, None], dtype=L.float32)",
    "L.tensor([None])", "L.tensor('a')",
]


def _outcome(lib, call):
    env = {"L": lib, "np": np, "t1": lib.tensor([1., 2.]), "t2": lib.tensor([3., 4.]), "s1": lib.tensor(1.),
           "s2": lib.tensor([2.])}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = eval(call, env)
        except Exception as e:  # noqa: BLE001 (the type is what is compared)
            return type(e)
    return str(out.dtype).split(".")[-1], tuple(out.shape), out.requires_grad, out.detach().numpy()


@pytest.mark.parametrize("call", CALLS)
def test_tensor_as_torch(call):
    t, m = _outcome(torch, call), _outcome(mt, call)
    if isinstance(t, type):
        assert isinstance(m, type) and issubclass(m, t), (t, m)
        return
    assert not isinstance(m, type), m
    assert m[:3] == t[:3]
    np.testing.assert_array_equal(m[3], t[3])


def test_messages():
    with pytest.raises(ValueError, match=r"^tensor\(\): only one element tensors can be converted to Python "
                                         r"scalars .*shape \[2\].*stack"):
        mt.tensor([mt.ones(2), mt.ones(2)])
    with pytest.raises(TypeError, match=r"'numpy.float32' object cannot be interpreted as an integer"):
        mt.tensor(np.float32(1.0), dtype=mt.int8)
    for call, pattern in ((lambda: mt.as_tensor("a"), r"^as_tensor\(\): invalid data type 'str'"),
                          (lambda: mt.as_tensor([None]), r"^as_tensor\(\): Could not infer dtype of NoneType"),
                          (lambda: mt.as_tensor([mt.ones(2)]), r"^as_tensor\(\): only one element tensors")):
        with pytest.raises(Exception, match=pattern):
            call()


RAGGED = [  # (data, the phrase torch's message and ours share)
    ([[1, 2], [3]], "expected sequence of length 2 at dim 1 (got 1)"),
    ([[1, 2], [3, 4, 5]], "expected sequence of length 2 at dim 1 (got 3)"),
    ([[[1], [2]], [[3], [4, 5]]], "expected sequence of length 1 at dim 2 (got 2)"),
    ([[1], []], "expected sequence of length 1 at dim 1 (got 0)"),
    ([[1, 2], 3], "not a sequence"),
    ([1, [2]], "object cannot be interpreted as"),
]


@pytest.mark.parametrize("data, phrase", RAGGED)
def test_ragged_data_as_torch(data, phrase):
    errors = []
    for lib in (torch, mt):
        with pytest.raises(Exception) as info:
            lib.tensor(data)
        errors.append(info.value)
    assert type(errors[1]) is type(errors[0]), errors
    assert phrase in str(errors[0]) and phrase in str(errors[1]), errors
    assert str(errors[1]).startswith("tensor(): ")
