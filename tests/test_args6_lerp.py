"""lerp's dtypes and quantile's weights beside torch 2.13: lerp does not promote (end, and a weight tensor with
dims, must have start's dtype; a 0-d weight may have another, and keeps its own edge), and quantile computes its
interpolation weights in the input's dtype (it passed float64 weights to lerp_, which took them) and refuses
half inputs."""
import numpy as np
import pytest
import torch

import microtorch as mt

CALLS = [
    "L.lerp(f, e, d)", "L.lerp(f, e, h)", "L.lerp(f, e, L.tensor([[0.5]], dtype=L.float64))",
    "L.lerp(f.double(), e.double(), L.tensor([0.5, 0.2]))", "f.clone().lerp_(e, d)", "f.clone().lerp_(e, h)",
    "f.lerp(e, d)", "L.lerp(g, e, d)", "L.lerp(f, e, L.tensor(0.5, dtype=L.float64))",
    "L.lerp(f, e, L.tensor(0.5, dtype=L.float16))", "L.lerp(f, e, L.tensor(1))", "L.lerp(f, e, L.tensor(True))",
    "L.lerp(f, e, L.tensor(0.5, dtype=L.complex64))", "f.clone().lerp_(e, L.tensor(0.5, dtype=L.float64))",
    "L.lerp(f, e.double(), 0.5)", "L.lerp(f, e, i)", "L.lerp(f, e, 0.25)",
    "L.quantile(L.tensor([1., 2., 3., 4.], dtype=L.float16), 0.3)",
    "L.quantile(L.tensor([1., 2., 3., 4.], dtype=L.float64), L.tensor([0.3, 0.6], dtype=L.float64))",
    "L.nanquantile(L.tensor([1., 2., 3., 4.], dtype=L.float16), 0.3)",
]


def same_as_torch(call, names):
    """eval(call) with torch and with microtorch (the names made by names(lib)): the same exception type, or the
    same dtype, grad_fn name and values."""
    def run(L):
        try:
            out = eval(call, {"L": L, **names(L)})
        except Exception as e:  # noqa: BLE001 (the type is what is compared)
            return type(e)
        return str(out.dtype).split(".")[-1], out.grad_fn and out.grad_fn.name(), out.detach().tolist()
    t, m = run(torch), run(mt)
    if isinstance(t, type):
        assert isinstance(m, type) and issubclass(m, t), (t, m)
    else:
        assert m == t


@pytest.mark.parametrize("call", CALLS)
def test_lerp_dtypes_as_torch(call):
    same_as_torch(call, lambda L: {"f": L.tensor([1., 2.]), "e": L.tensor([3., 5.]), "i": L.tensor([1, 2]),
                                   "d": L.tensor([.5, .25], dtype=L.float64), "h": L.tensor([.5, .5], dtype=L.float16),
                                   "g": L.tensor([1., 2.], requires_grad=True)})


def test_a_0d_weight_of_another_dtype_keeps_its_edge_and_gets_its_gradient():
    def run(L):
        s = L.tensor([1., 2.], requires_grad=True)
        w = L.tensor(0.25, dtype=L.float64, requires_grad=True)
        out = L.lerp(s, L.tensor([3., 7.]), w)
        gs, gw = L.autograd.grad(out.sum(), (s, w))
        return ([type(n).__name__ for n, _ in out.grad_fn.next_functions], str(gw.dtype).split(".")[-1],
                gs.tolist(), gw.item())
    assert run(mt) == run(torch)


@pytest.mark.parametrize("interpolation", ["linear", "midpoint", "lower", "higher", "nearest"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_quantile_values_and_gradients_as_torch(interpolation, dtype):
    x = np.random.default_rng(3).normal(size=(3, 7))
    q = [0.1, 0.33, 0.5, 0.9]

    def run(L):
        t = L.tensor(x, dtype=getattr(L, dtype), requires_grad=True)
        out = L.quantile(t, L.tensor(q, dtype=getattr(L, dtype)), dim=1, interpolation=interpolation)
        g, = L.autograd.grad((out * out).sum(), t)
        return out.grad_fn.name(), out.detach().numpy(), g.numpy()
    (tn, tv, tg), (mn, mv, mg) = run(torch), run(mt)
    assert mn == tn
    np.testing.assert_allclose(mv, tv, rtol=2e-7)  # (float32: torch's kernel may fuse a multiply-add)
    np.testing.assert_allclose(mg, tg, rtol=1e-6)
