"""linalg.matrix_norm's dtype= and input checks, beside torch: a narrowing dtype, a complex dtype for a real
input (and the reverse), an integer dtype, and an integer input raise torch's RuntimeError; the widening dtypes
give torch's values and dtypes."""
import pytest
import torch

import microtorch as mt

A = [[1.0, 2.0], [3.0, 4.0]]
RAISING = [
    ("float64", {}, "float32"), ("float64", {"ord": 1}, "float32"), ("float64", {"ord": "nuc"}, "float32"),
    ("float64", {"ord": 2}, "float32"), ("float64", {}, "complex128"), ("float64", {}, "int64"),
    ("complex64", {}, "float64"), ("int64", {}, None), ("int64", {"ord": "nuc"}, None), ("int32", {"ord": 1}, None),
    ("int32", {}, "float64"),
]
WIDENING = [("float32", {}, "float64"), ("float32", {"ord": "nuc"}, "float64"), ("float32", {"ord": -2}, "float64"),
            ("complex64", {}, "complex128"), ("float64", {"ord": float("inf")}, "float64")]


def _call(lib, dtype, kwargs, want):
    a = lib.tensor(A, dtype=getattr(lib, dtype))
    return lib.linalg.matrix_norm(a, **kwargs, **({} if want is None else {"dtype": getattr(lib, want)}))


@pytest.mark.parametrize("dtype, kwargs, want", RAISING)
def test_refuses_as_torch(dtype, kwargs, want):
    with pytest.raises(RuntimeError) as theirs:
        _call(torch, dtype, kwargs, want)
    with pytest.raises(RuntimeError) as mine:
        _call(mt, dtype, kwargs, want)
    assert str(mine.value).startswith(str(theirs.value))


@pytest.mark.parametrize("dtype, kwargs, want", WIDENING)
def test_widening_dtypes_give_torchs_values(dtype, kwargs, want):
    theirs, mine = _call(torch, dtype, kwargs, want), _call(mt, dtype, kwargs, want)
    assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert mine.item() == pytest.approx(theirs.item(), rel=1e-6)


def test_linalg_norm_with_a_matrix_order_checks_the_same_way():
    a64 = [lib.tensor(A, dtype=lib.float64) for lib in (torch, mt)]
    for lib, a in zip((torch, mt), a64):
        with pytest.raises(RuntimeError, match="convertible without narrowing"):
            lib.linalg.norm(a, 2, dtype=lib.float32)
