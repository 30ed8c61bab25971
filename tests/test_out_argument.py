"""`out=` as torch: the result written into the tensor given, which is returned (the tensors tutorial's
`torch.matmul(a, b, out=y)`); torch's refusals and its resize warning. Factories fill `out` in its dtype."""
import warnings

import pytest
import torch

import microtorch as mt


def outcome(T, call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = T.empty(2, 2, dtype=T.float64)
            result = call(T, out)
            value = ("returns", result is out, result.tolist() if result.numel() < 20 else list(result.shape),
                     str(result.dtype).split(".")[1])
        except Exception as e:
            value = ("raises", type(e).__name__, str(e).split(" (")[0].split("(): ")[-1][:50])
    return value, [w.category.__name__ for w in caught]


CALLS = {
    "matmul": lambda T, o: T.matmul(T.ones(2, 3, dtype=T.float64), T.ones(3, 2, dtype=T.float64), out=o),
    "mul": lambda T, o: T.mul(T.full((2, 2), 3.0, dtype=T.float64), 2.0, out=o),
    "mul float32 into float64": lambda T, o: T.mul(T.ones(2, 2), T.ones(2, 2), out=o),
    "add alpha": lambda T, o: T.add(T.ones(2, 2, dtype=T.float64), T.ones(2, 2, dtype=T.float64), alpha=3, out=o),
    "resized": lambda T, o: T.mul(T.ones(3, dtype=T.float64), 2.0, out=o),
    "into an empty one": lambda T, o: T.mul(T.ones(3, dtype=T.float64), 2.0, out=T.empty(0, dtype=T.float64)),
    "into long": lambda T, o: T.mul(T.ones(2, 2), 2.0, out=T.empty(2, 2, dtype=T.long)),
    "an input requires grad": lambda T, o: T.mul(T.ones(2, 2, dtype=T.float64, requires_grad=True), 2.0, out=o),
    "out requires grad": lambda T, o: T.mul(T.ones(2, 2, dtype=T.float64), 2.0, out=o.requires_grad_()),
    "cat": lambda T, o: T.cat([T.ones(1, 2, dtype=T.float64), T.zeros(1, 2, dtype=T.float64)], out=o),
    "where": lambda T, o: T.where(T.tensor([[True, False], [False, True]]), T.ones(2, 2, dtype=T.float64),
                                  T.zeros(2, 2, dtype=T.float64), out=o),
    "rand": lambda T, o: (T.manual_seed(0), T.rand(2, 2, out=o))[1],
    "zeros": lambda T, o: T.zeros(2, 2, out=o),
    "linspace": lambda T, o: T.linspace(0, 1, 4, out=o),
    "linspace resized": lambda T, o: T.linspace(0, 1, 3, out=o),
    "arange into long": lambda T, o: T.arange(4, out=T.empty(4, dtype=T.long)),
    "arange resized": lambda T, o: T.arange(4.0, out=T.empty(3, dtype=T.float64)),
    "zeros with another dtype": lambda T, o: T.zeros(2, 2, dtype=T.float32, out=o),
    "eye": lambda T, o: T.eye(2, out=o),
    "into an expanded one": lambda T, o: T.mul(T.ones(2, 2, dtype=T.float64), 2.0,
                                               out=T.zeros(1, 2, dtype=T.float64).expand(2, 2)),
    "into a meta one": lambda T, o: T.mul(T.ones(2, 2, dtype=T.float64), 2.0,
                                          out=T.empty(2, 2, dtype=T.float64, device="meta")),
}


@pytest.mark.parametrize("name", CALLS)
def test_out_as_torch(name):
    assert outcome(mt, CALLS[name]) == outcome(torch, CALLS[name])


def test_out_under_no_grad_and_the_version():
    a = mt.ones(2, requires_grad=True)
    out = mt.empty(2)
    with mt.no_grad():
        assert mt.mul(a, 3.0, out=out) is out
    assert out.tolist() == [3.0, 3.0] and out._version == 1


def test_methods_and_operators_take_no_out():
    with pytest.raises(TypeError):
        mt.ones(2).mul(2.0, out=mt.empty(2))
