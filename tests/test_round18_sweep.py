"""tools/special_values.py, the sweep of functions over special values beside torch (0, -0.0, poles, tiny and
huge numbers, infinities, NaN): it finds nothing but its KNOWN differences, and every KNOWN one is still there."""
import importlib.util
import pathlib

import pytest
import torch

import microtorch as mt

_SPEC = importlib.util.spec_from_file_location(
    "special_values", pathlib.Path(__file__).resolve().parent.parent / "tools" / "special_values.py")
sweep = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(sweep)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sweep.UNARY + sweep.BINARY)
def test_special_values_as_torch(name, dtype):
    found = sweep.findings(name, dtype, torch, mt)
    if (name, dtype) in sweep.KNOWN:
        assert found, f"{name} {dtype} is listed as known but no longer differs: take it out of KNOWN"
    else:
        assert not found, found
