"""nn.Conv1d/2d/3d with padding_mode 'reflect', 'replicate' and 'circular' (microtorch refused them before): F.pad
then the convolution without padding, as torch's modules do; values, gradients and the graph beside torch."""
import numpy as np
import pytest
import torch

import microtorch as mt
from tests.saved_compare import graph_of

SHAPES = {1: (2, 2, 7), 2: (1, 2, 5, 6), 3: (1, 1, 4, 4, 4)}


def _run(T, n, mode, padding, dilation):
    conv = getattr(T.nn, f"Conv{n}d")(SHAPES[n][1], 2, 3, padding=padding, padding_mode=mode,
                                       dilation=dilation).double()
    with T.no_grad():
        for p in conv.parameters():
            p.copy_(T.tensor(np.sin(np.arange(p.numel())).reshape(tuple(p.shape))))
    x = T.tensor(np.cos(np.arange(np.prod(SHAPES[n]))).reshape(SHAPES[n]), requires_grad=True)
    y = conv(x)
    (y * T.arange(y.numel(), dtype=T.float64).reshape(tuple(y.shape))).sum().backward()
    return graph_of(y), [np.asarray(t.detach()) for t in (y, x.grad, conv.weight.grad, conv.bias.grad)]


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular", "zeros"])
@pytest.mark.parametrize("padding", [1, "same", "valid"])
def test_padding_modes_as_torch(n, mode, padding):
    theirs, mine = _run(torch, n, mode, padding, 1), _run(mt, n, mode, padding, 1)
    assert mine[0] == theirs[0]
    for m, t in zip(mine[1], theirs[1]):
        np.testing.assert_allclose(m, t, rtol=1e-12, atol=1e-12)


def test_same_padding_with_dilation_splits_as_torch():
    theirs, mine = _run(torch, 1, "reflect", "same", 2), _run(mt, 1, "reflect", "same", 2)
    assert mine[0] == theirs[0]
    for m, t in zip(mine[1], theirs[1]):
        np.testing.assert_allclose(m, t, rtol=1e-12, atol=1e-12)


def test_padding_mode_repr_and_errors_as_torch():
    for T in (torch, mt):
        with pytest.raises(ValueError, match="padding_mode must be one of"):
            T.nn.Conv2d(1, 1, 3, padding_mode="bogus")
        with pytest.raises(ValueError, match='Only "zeros" padding mode is supported for ConvTranspose2d'):
            T.nn.ConvTranspose2d(1, 1, 3, padding_mode="reflect")
    assert repr(mt.nn.Conv2d(1, 2, 3, padding=1, padding_mode="reflect")) == \
        repr(torch.nn.Conv2d(1, 2, 3, padding=1, padding_mode="reflect"))
    assert mt.nn.Conv2d(1, 2, (3, 5), padding=(1, 2), padding_mode="circular")._reversed_padding_repeated_twice == \
        torch.nn.Conv2d(1, 2, (3, 5), padding=(1, 2), padding_mode="circular")._reversed_padding_repeated_twice
