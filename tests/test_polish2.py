"""More small gaps between microtorch and torch 2.13, each checked beside torch: a Python bool in a
subtraction, the uint8 dtype in the tables of missing kernels, the errors of a few ops on complex tensors,
diff of bool tensors, the conversion of fill values, clamp's mixed bounds and the graph of mixed-dtype
arithmetic."""
import pytest
import torch

import microtorch as mt


def _outcome(fn, lib):
    """(shape, dtype name, values) of fn(lib), or the type of what it raised."""
    try:
        out = fn(lib)
    except Exception as e:  # noqa: BLE001 (the type is what is compared)
        return type(e).__name__
    return tuple(out.shape), str(out.dtype).split(".")[-1], out.detach().numpy().tolist()


def _same_as_torch(fn):
    t, m = _outcome(fn, torch), _outcome(fn, mt)
    assert m == t, f"torch {t}, microtorch {m}"
    return t


_BOOL_SUBTRACTIONS = [
    lambda T: T.sub(T.tensor([1, 2, 3]), True),
    lambda T: T.tensor([1, 2, 3]) - True,
    lambda T: False - T.tensor([1, 2, 3]),
    lambda T: T.rsub(T.tensor([1, 2, 3]), True),
    lambda T: T.tensor([1.5]) - True,
    lambda T: T.tensor([1.5]).sub_(False),
    lambda T: T.tensor([1, 2]) + True,  # (addition takes it)
    lambda T: T.tensor([1, 2]) - 1,
]


@pytest.mark.parametrize("fn", _BOOL_SUBTRACTIONS)
def test_a_python_bool_in_a_subtraction_is_refused_as_torch(fn):
    _same_as_torch(fn)


def test_a_python_bool_in_a_subtraction_raises_runtime_error():
    with pytest.raises(RuntimeError, match="Subtraction"):
        mt.tensor([1, 2]) - True


_U8 = [
    ("nextafter", lambda T, u: T.nextafter(u, u)), ("hypot", lambda T, u: T.hypot(u, u)),
    ("igamma", lambda T, u: T.igamma(u, u)), ("igammac", lambda T, u: T.igammac(u, u)),
    ("logaddexp", lambda T, u: T.logaddexp(u, u)), ("frac", lambda T, u: T.frac(u)),
    ("celu", lambda T, u: T.nn.functional.celu(u)), ("elu", lambda T, u: T.nn.functional.elu(u)),
    ("softplus", lambda T, u: T.nn.functional.softplus(u)), ("hardswish", lambda T, u: T.nn.functional.hardswish(u)),
    ("silu", lambda T, u: T.nn.functional.silu(u)), ("glu", lambda T, u: T.nn.functional.glu(u)),
    ("mse_loss", lambda T, u: T.nn.functional.mse_loss(u, u)), ("histc", lambda T, u: T.histc(u)),
    ("std", lambda T, u: T.std(u)), ("norm", lambda T, u: T.norm(u)), ("uniform_", lambda T, u: u.uniform_()),
    ("nextafter with float", lambda T, u: T.nextafter(u, T.tensor([1.0]))),
    ("hypot with int8", lambda T, u: T.hypot(u, T.tensor([1], dtype=T.int8))),
    ("copysign (has a kernel)", lambda T, u: T.copysign(u, u)), ("gcd (has a kernel)", lambda T, u: T.gcd(u, u)),
    ("fmax (has a kernel)", lambda T, u: T.fmax(u, u)), ("sign (has a kernel)", lambda T, u: T.sign(u)),
]


@pytest.mark.parametrize("fn", [f for _, f in _U8], ids=[n for n, _ in _U8])
def test_uint8_has_the_kernels_of_the_integer_dtypes(fn):
    _same_as_torch(lambda T: fn(T, T.tensor([[1, 2], [3, 4]], dtype=T.uint8)))


def test_uint8_without_a_kernel_names_byte():
    with pytest.raises(NotImplementedError, match="Byte"):
        mt.nextafter(mt.tensor([1], dtype=mt.uint8), mt.tensor([2], dtype=mt.uint8))
