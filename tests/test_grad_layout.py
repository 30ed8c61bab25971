"""The layout of .grad: torch's contract (a dense leaf's own strides, else C order), whether the engine keeps
the gradient it computed or copies it, compared with torch for leaves in several layouts."""
import numpy as np
import pytest
import torch

import microtorch as mt

LEAVES = {
    "C": lambda T: T.arange(12.0).reshape(3, 4),
    "transposed": lambda T: T.arange(12.0).reshape(4, 3).t(),
    "permuted 3-d": lambda T: T.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1),
    "with gaps": lambda T: T.arange(24.0).reshape(3, 8)[:, ::2],
    "size-1 dim": lambda T: T.arange(12.0).reshape(3, 1, 4).permute(1, 2, 0),
    "0-d": lambda T: T.tensor(2.0),
}
LOSSES = {
    "sum": lambda x: x.sum(),
    "x * x": lambda x: (x * x).sum(),
    "exp": lambda x: x.exp().sum(),
    "weighted": lambda x: (x * (x.detach() + 1)).sum(),
}


@pytest.mark.parametrize("leaf", list(LEAVES))
@pytest.mark.parametrize("loss", list(LOSSES))
def test_grad_strides_like_torch(leaf, loss):
    seen = []
    for T in (mt, torch):
        x = LEAVES[leaf](T).detach().requires_grad_()
        LOSSES[loss](x).backward()
        LOSSES[loss](x).backward()  # (the second one accumulates in place: the layout stays)
        strides = tuple(s for s, n in zip(x.grad.stride(), x.grad.shape) if n != 1)  # (see below)
        seen.append((strides, x.grad.is_contiguous(), x.grad.detach().numpy().copy()))
    assert seen[0][:2] == seen[1][:2]
    np.testing.assert_allclose(seen[0][2], seen[1][2], rtol=1e-6)  # (float32 exp differs in the last bit)
    # The stride of a size-1 dim is compared only where .grad is a copy (test_copied_grad_keeps_every_stride):
    # a gradient that is kept has the stride its op gave that dim, and microtorch's elementwise ops choose
    # another one than torch's there (nothing can step along a size-1 dim).


@pytest.mark.parametrize("leaf", list(LEAVES))
def test_copied_grad_keeps_every_stride_like_torch(leaf):
    """x.sum()'s gradient is a broadcast view, never kept: .grad is a copy laid out as the leaf, size-1 dims
    included (torch's empty_strided with the leaf's strides)."""
    seen = []
    for T in (mt, torch):
        x = LEAVES[leaf](T).detach().requires_grad_()
        x.sum().backward()
        seen.append(x.grad.stride())
    assert seen[0] == seen[1]
