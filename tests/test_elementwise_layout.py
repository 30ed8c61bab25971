"""The layout (strides) torch gives an elementwise result whose operands are laid out differently
(ops/_layout.py): transposed operands, broadcast ones, and operands broadcast from one element,
which tell nothing (all their strides are 0). Checked against torch."""
import numpy as np
import pytest
import torch

import microtorch as mt


def operands(L, case):
    a = L.tensor(np.arange(12.0).reshape(3, 4))
    t = L.tensor(np.arange(12.0).reshape(4, 3)).t()     # 3x4, column-major
    one = L.tensor(2.0).expand(3, 4)                    # every stride 0
    row = L.tensor(np.arange(4.0)).expand(3, 4)         # stride 0 along dim 0
    col = L.tensor(np.arange(3.0)).unsqueeze(1).expand(3, 4)
    return {"C and scalar": (a, one), "scalar and C": (one, a), "transposed and scalar": (t, one),
            "scalar and transposed": (one, t), "transposed and row": (t, row), "row and transposed": (row, t),
            "col and C": (col, a), "transposed and C": (t, a), "two scalars": (one, one * 1)}[case]


@pytest.mark.parametrize("case", ["C and scalar", "scalar and C", "transposed and scalar", "scalar and transposed",
                                  "transposed and row", "row and transposed", "col and C", "transposed and C",
                                  "two scalars"])
@pytest.mark.parametrize("op", ["add", "mul", "sub"])
def test_elementwise_result_strides_match_torch(case, op):
    def strides(L):
        x, y = operands(L, case)
        out = getattr(L, op)(x, y)
        return out.stride(), out.tolist()
    assert strides(mt) == strides(torch)
