"""clone's memory formats beside torch 2.13: by default (preserve_format) the copy of a dense tensor keeps its
strides (a transposed tensor's clone is transposed, so view() refuses it as it refuses the original), any other
layout becomes dense in the same order; contiguous_format and contiguous() give C order; channels_last."""
import numpy as np
import pytest
import torch

import microtorch as mt

LIBS = (torch, mt)
A = np.arange(120.0).reshape(2, 3, 4, 5)

LAYOUTS = {
    "transposed": lambda L: L.tensor(A[0]).t(),
    "permuted": lambda L: L.tensor(A[0]).permute(2, 0, 1),
    "sliced": lambda L: L.tensor(A[0, 0])[:, ::2],
    "sliced_transposed": lambda L: L.tensor(A[0, 0])[::2].t(),
    "expanded": lambda L: L.tensor(A[0, 0, :1]).expand(3, 5),
    "expanded_transposed": lambda L: L.tensor(A[0, 0, 0]).unsqueeze(1).expand(5, 3).t(),
    "unsqueezed_transposed": lambda L: L.tensor(A[0]).t().unsqueeze(1),
    "size_one_transposed": lambda L: L.tensor(A[0, :1, 0]).unsqueeze(0).t(),
    "channels_last_like": lambda L: L.tensor(A).permute(0, 2, 3, 1),
    "diagonal": lambda L: L.tensor(A[0, 0, :4, :4]).diagonal(),
    "column": lambda L: L.tensor(A[0, 0])[:, 1],
    "contiguous": lambda L: L.tensor(A),
    "zero_d": lambda L: L.tensor(2.5),
}
CLONES = {
    "method": lambda L, x: x.clone(),
    "function": lambda L, x: L.clone(x),
    "preserve": lambda L, x: x.clone(memory_format=L.preserve_format),
    "none": lambda L, x: L.clone(x, memory_format=None),
    "contiguous_format": lambda L, x: L.clone(x, memory_format=L.contiguous_format),
    "contiguous": lambda L, x: x.contiguous(),
    "channels_last": lambda L, x: x.clone(memory_format=L.channels_last),
    "channels_last_3d": lambda L, x: x.clone(memory_format=L.channels_last_3d),
}


def _layout(f):
    try:
        c = f()
    except Exception as e:  # noqa: BLE001 (the type is what is compared)
        return type(e).__name__
    try:
        viewed = tuple(c.view(-1).shape)
    except RuntimeError:
        viewed = "view refused"
    return tuple(c.shape), c.stride(), c.is_contiguous(), viewed, c.tolist()


@pytest.mark.parametrize("clone", sorted(CLONES))
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_clone_layout(layout, clone):
    got = {L: _layout(lambda: CLONES[clone](L, LAYOUTS[layout](L))) for L in LIBS}
    assert got[mt] == got[torch]


def test_clone_graph_and_gradient():
    got = {}
    for L in LIBS:
        x = L.tensor(A[0, 0], requires_grad=True)
        c = x.t().clone()
        r = c.reshape(-1)  # (a copy: the clone is transposed, as its input)
        g, = L.autograd.grad((r * r).sum(), x, create_graph=True)
        got[L] = (c.grad_fn.name(), type(c.grad_fn.next_functions[0][0]).__name__, r.grad_fn.name(),
                  g.stride(), g.tolist())
    assert got[mt] == got[torch]


@pytest.mark.parametrize("bad", [3, "contiguous", True])
def test_clone_memory_format_is_a_memory_format(bad):
    for L in LIBS:
        with pytest.raises(TypeError):
            L.tensor(A).clone(memory_format=bad)
        with pytest.raises(TypeError):
            L.clone(L.tensor(A), bad)


def test_memory_formats_print_as_torch():
    assert repr(mt.preserve_format) == "microtorch.preserve_format"
    assert isinstance(mt.channels_last, mt.memory_format)
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        mt.ones(2, 3).clone(memory_format=mt.channels_last)
