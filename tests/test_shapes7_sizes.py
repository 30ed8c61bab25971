"""Shape ops called with no sizes beside torch 2.13: expand(), repeat(), permute(), view(), reshape() and
sum_to_size() are TypeErrors of a 0-d tensor too (its sizes are given as an empty tuple); the ops that build
shapes inside (x.T, einsum's backward, tensordot) still work on 0-d tensors."""
import numpy as np
import pytest
import torch

import microtorch as mt

LIBS = (torch, mt)
CALLS = {
    "expand": lambda L, x: x.expand(), "expand_empty": lambda L, x: x.expand(()),
    "expand_kw": lambda L, x: x.expand(size=()), "repeat": lambda L, x: x.repeat(),
    "repeat_empty": lambda L, x: x.repeat(()), "repeat_kw": lambda L, x: x.repeat(repeats=()),
    "permute": lambda L, x: x.permute(), "permute_fn": lambda L, x: L.permute(x),
    "permute_empty": lambda L, x: x.permute(()), "permute_fn_empty": lambda L, x: L.permute(x, ()),
    "view": lambda L, x: x.view(), "view_empty": lambda L, x: x.view(()),
    "reshape": lambda L, x: x.reshape(), "reshape_fn": lambda L, x: L.reshape(x),
    "reshape_empty": lambda L, x: x.reshape(()), "sum_to_size": lambda L, x: x.sum_to_size(),
    "sum_to_size_empty": lambda L, x: x.sum_to_size(()), "T": lambda L, x: x.T if x.ndim != 2 else x,
}


def _outcome(f):
    try:
        r = f()
    except Exception as e:  # noqa: BLE001 (the type is what is compared)
        return type(e).__name__
    return tuple(r.shape), r.grad_fn and r.grad_fn.name(), r.tolist()


@pytest.mark.filterwarnings("ignore:Tensor.T is deprecated")
@pytest.mark.parametrize("call", sorted(CALLS))
@pytest.mark.parametrize("shape", [(), (3,), (2, 3)], ids=str)
def test_no_sizes(call, shape):
    data = np.arange(float(np.prod(shape))).reshape(shape)
    got = {L: _outcome(lambda: CALLS[call](L, L.tensor(data, requires_grad=True))) for L in LIBS}
    assert got[mt] == got[torch]


def test_message_names_the_op_and_the_0d_form():
    with pytest.raises(TypeError, match=r'reshape\(\) missing 1 required positional arguments: "shape".*x.reshape\(\(\)\)'):
        mt.tensor(1.0).reshape()


def test_0d_shapes_built_inside_ops():
    got = {}
    for L in LIBS:
        z = L.tensor(2.0, requires_grad=True)
        x = L.ones(3, requires_grad=True)
        gx, gz = L.autograd.grad(L.einsum("i,->i", x, z).sum(), (x, z), create_graph=True)
        gzz, = L.autograd.grad(L.einsum(",->", z, z), z)
        got[L] = (gx.tolist(), gz.item(), gzz.item(), L.tensordot(L.ones(2, 3), L.ones(2, 3), 2).item(),
                  tuple(L.tensordot(z, L.ones(2), 0).shape), L.linalg.tensorsolve(L.tensor([[2.0]]),
                                                                                   L.tensor([4.0])).tolist())
    assert got[mt] == got[torch]
