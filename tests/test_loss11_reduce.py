"""var_mean and std_mean over dims that hold inf or NaN, beside torch 2.13: the two results, the gradient of
either or both (their one node, VarMeanBackward0/StdMeanBackward0), and the second order, bit for bit, in float64
and float32, every correction torch takes and keepdim."""
import itertools

import numpy as np
import pytest
import torch

import microtorch as mt

INF, NAN = np.inf, np.nan
A = np.array([[1.0, INF, 2.0, 0.5], [0.5, 0.25, -1.0, 3.0], [NAN, 1.0, 2.0, 0.0], [INF, INF, 1.0, 1.0],
              [-INF, INF, 0.0, 2.0], [1.0, 1.0, 1.0, 1.0]])
CASES = list(itertools.product(["var_mean", "std_mean"], [None, 1, 0, (0, 1)], [1, 0, 2], ["float64", "float32"]))


def _run(lib, fn, dim, correction, dtype, which, keepdim):
    d = getattr(lib, dtype)
    x = lib.tensor(A, dtype=d, requires_grad=True)
    kw = {} if dim is None else {"dim": dim}
    outs = getattr(lib, fn)(x, correction=correction, keepdim=keepdim, **kw)
    total = outs[which].sum() if which < 2 else outs[0].sum() * 1.5 + outs[1].sum() * 2.5
    (g,) = lib.autograd.grad(total, x, create_graph=True)
    if not g.requires_grad:  # (the mean's gradient alone is a constant)
        return [o.detach().numpy() for o in outs] + [g.numpy()], outs[0].grad_fn.name()
    (h,) = lib.autograd.grad((g * lib.tensor(np.tile(np.arange(4.0), (6, 1)), dtype=d)).sum(), x)
    return [o.detach().numpy() for o in outs] + [g.detach().numpy(), h.numpy()], outs[0].grad_fn.name()


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("which", [0, 1, 2])
@pytest.mark.parametrize("fn,dim,correction,dtype", CASES)
def test_values_gradients_and_second_order_as_torch(fn, dim, correction, dtype, which, keepdim):
    (mine, my_node), (theirs, their_node) = (_run(lib, fn, dim, correction, dtype, which, keepdim)
                                             for lib in (mt, torch))
    assert my_node == their_node
    for a, b in zip(mine[:3], theirs[:3]):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(mine[3:], theirs[3:]):  # (the second order sums a float64 gradient back to the mean's shape
        # in numpy's order, not torch's (ops/shape.py's sum_to, kept for speed): an ulp where it sums many)
        np.testing.assert_allclose(a, b, rtol=1e-15 if dtype == "float64" else 0, atol=0)


@pytest.mark.parametrize("fn", ["var", "std", "var_mean", "std_mean"])
@pytest.mark.parametrize("data,correction", [([1.0, 1.0], 2), ([1.0, 2.0], 2), ([1.0, 2.0], 3), ([1.0, 1.0, 1.0], 3)])
def test_no_degrees_of_freedom_over_every_element_as_torch(fn, data, correction):
    # torch's var_backward gives NaN where x is its mean and inf elsewhere, a where of two numbers (the default
    # dtype) that the 0-d gradient takes on: its graph shows the cast back (ToCopyBackward0; fuzz seed 557228)
    seen = []
    for lib in (mt, torch):
        a = lib.tensor(np.array(data), requires_grad=True)
        out = getattr(lib, fn)(a, correction=correction)
        out = out[0] if isinstance(out, tuple) else out
        (g,) = lib.autograd.grad(out, a, lib.tensor(1.5, dtype=lib.float64), create_graph=True)
        h = lib.autograd.grad(g, a, lib.tensor(np.arange(1.0, len(data) + 1)))[0] if g.requires_grad else None
        seen.append((str(out.item()), g.detach().numpy().tolist(), str(g.dtype).split(".")[-1],
                     sorted({n.name() for n in _nodes(g)}) if g.grad_fn else None, h if h is None else h.tolist()))
    assert repr(seen[0]) == repr(seen[1])


def _nodes(t):
    out, todo = [], [t.grad_fn]
    while todo:
        n = todo.pop()
        if n is not None and n not in out:
            out.append(n)
            todo.extend(m for m, _ in n.next_functions)
    return [n for n in out if "AccumulateGrad" not in n.name()]
