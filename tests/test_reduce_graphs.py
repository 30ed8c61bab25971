"""The graphs that reductions' backward builds (seen with create_graph=True) are torch's: one
unsqueeze per reduced dim, mean's division by a number (DivBackward1), no view when nothing was
reduced away; and their values are torch's."""
import numpy as np
import pytest
import torch

import microtorch as mt

CASES = {
    "sum": lambda x: x.sum(),
    "sum dim": lambda x: x.sum(1),
    "sum dims": lambda x: x.sum((0, 2)),
    "mean": lambda x: x.mean(),
    "mean dims": lambda x: x.mean((0, 2)),
    "mean keepdim": lambda x: x.mean(1, keepdim=True),
    "amax dim": lambda x: x.amax(1),
    "amax keepdim": lambda x: x.amax(1, keepdim=True),
    "amin dims": lambda x: x.amin((0, 1)),
    "logsumexp": lambda x: x.logsumexp(1),
    "prod dim": lambda x: x.prod(1),
}


def _names(node):
    """The names of every node reachable from node, sorted."""
    out, stack, seen = [], [node], set()
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        out.append(n.name())
        stack.extend(m for m, _ in n.next_functions)
    return sorted(out)


@pytest.mark.parametrize("name", CASES)
def test_reduction_backward_graph_as_torch(name):
    x = np.random.default_rng(3).normal(size=(2, 3, 4))
    got = {}
    for lib in (torch, mt):
        xs = lib.tensor(x, requires_grad=True)
        y = CASES[name](xs)
        gy = lib.ones(tuple(y.shape), dtype=lib.float64, requires_grad=True)
        g, = lib.autograd.grad(y, xs, gy, create_graph=True)
        got[lib.__name__] = _names(g.grad_fn), g.detach().numpy()
    assert got["microtorch"][0] == got["torch"][0]
    np.testing.assert_allclose(got["microtorch"][1], got["torch"][1], rtol=1e-12, atol=1e-14)
