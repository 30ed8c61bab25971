"""Each class of difference the fuzzer found, as a small hand-written program compared with torch.

A case is a fuzz Program (tests/fuzz/program.py) run on both libraries by the fuzzer's own runner,
so everything it compares is compared here too: values, grad_fn names and graph nodes, flags,
exception types, first-order grads and their requires_grad, second-order grads, and .grad after
backward() (seed 1 makes the runner do all three).
"""
import numpy as np
import pytest

from .check import check_program
from .compare import real
from .program import Leaf, Program, Step


def _program(leaves, steps):
    """leaves: {name: (array, requires_grad)}; steps: [(op, expr over L/F and names)], bound to v0, v1..."""
    prog = Program(1, [Leaf(k, np.asarray(a, dtype=np.float64), rg) for k, (a, rg) in leaves.items()], [])
    for i, (op, expr) in enumerate(steps):
        prog.steps.append(Step(f"v{i}", op, expr, inplace=op == "inplace"))
    return prog


def assert_like_torch(leaves, steps):
    diffs = real(check_program(_program(leaves, steps)))
    assert not diffs, diffs


X0 = {"x": ([[1.5, 0.0, -2.0], [0.5, 3.0, 0.0]], True)}  # a zero in each row
X00 = {"x": ([[0.0, 0.0, 2.0], [0.0, 1.0, -1.0]], True)}  # two zeros in a row


@pytest.mark.parametrize("leaves", [X0, X00], ids=["one-zero", "two-zeros"])
@pytest.mark.parametrize("expr", ["L.prod(x)", "L.prod(x, dim=1)", "L.prod(x, dim=0, keepdim=True)",
                                  "x.prod(-1) * 2.0"])
def test_prod_at_zero_has_a_second_order(leaves, expr):
    """torch's product-of-the-others is differentiable (it has a graph with create_graph=True)."""
    assert_like_torch(leaves, [("prod", expr)])


@pytest.mark.parametrize("base", [[0.0, 0.0, 1.5], [[0.0], [2.0]]])
def test_pow_tensor_exponent_at_zero_base(base):
    """d/db 0^b is 0 for b >= 0, and its own derivative is 0 * log 0 = NaN in torch."""
    leaves = {"a": (base, False), "b": ([2.0, 0.0, 0.5], True)}
    assert_like_torch(leaves, [("pow", "L.pow(a, b)")])


@pytest.mark.parametrize("p", [2, 3, 1.5, 0.5, 1, float("inf")])
def test_norm_at_a_zero(p):
    """a zero entry and a zero norm: torch masks the division, so its second order is NaN there."""
    leaves = {"x": ([[-2.0, 0.0, 1.0], [0.0, 0.0, 0.0]], True)}
    assert_like_torch(leaves, [("norm", f"L.norm(x, p={p!r}, dim=1)")])
