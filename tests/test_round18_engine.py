"""autograd.grad's captured gradients and a tensor's hooks, in torch 2.13's order: a node the backward runs on is
captured at before its tensor hooks run; a node it only captures at, after them (torch's evaluate_function)."""
import warnings

import pytest
import torch

import microtorch as mt

LIBS = (torch, mt)


def _grads(L, case):
    b = L.tensor([2.0], dtype=L.float64, requires_grad=True)
    c = b * 1
    d = c * 5
    c.register_hook(lambda g: g * 2)
    if case in ("grad, retained", "backward(inputs=c)"):
        c.retain_grad()
    loss = (c * 3).sum() + d.sum()
    if case == "grad of c and b":
        return L.autograd.grad(loss, (c, b))
    if case == "grad of c alone":
        return L.autograd.grad(loss, (c,))
    if case == "grad, retained":
        return L.autograd.grad(loss, (c, b)) + (c.grad,)
    if case == "backward(inputs=c, b)":
        loss.backward(inputs=[c, b])
        return c.grad, b.grad
    if case == "backward(inputs=c)":
        loss.backward(inputs=[c])
        return c.grad, b.grad
    if case == "grad of d and c":
        return L.autograd.grad(loss, (d, c))
    return L.autograd.grad(loss, (b, c, d))


CASES = ["grad of c and b", "grad of c alone", "grad, retained", "backward(inputs=c, b)", "backward(inputs=c)",
         "grad of d and c", "grad of b, c and d"]


@pytest.mark.parametrize("case", CASES)
def test_captured_gradients_and_hooks_as_torch(case):
    seen = []
    for L in LIBS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (.grad of a non-leaf)
            seen.append([None if g is None else g.tolist() for g in _grads(L, case)])
    assert seen[1] == seen[0]


def test_the_output_of_an_in_place_op_asked_for_beside_a_leaf():
    """the fuzzer's program (seed 4,042,267), shortened: a1 -= 2 a2 in place, a hook on the result"""
    seen = []
    for L in LIBS:
        a1 = L.tensor([2.0], dtype=L.float64)
        a2 = L.tensor([0.5], dtype=L.float64, requires_grad=True)
        v0 = a1.sub_(a2, alpha=2)
        v0.register_hook(lambda g: g * 2)
        loss = (v0 * 0.671).sum() + (a2 * 0.51).sum()
        g = L.autograd.grad(loss, (a1, a2), create_graph=True)
        seen.append([x.tolist() for x in g])
    assert seen[0] == [[0.671], [-2.684 + 0.51]]  # (by hand: the hook doubles only what flows on to a2)
    assert seen[1] == seen[0]


def test_a_view_lost_to_an_in_place_change_is_refused_before_the_ops_own_checks():
    """the fuzzer's program (seed 4,083,299): amin over an empty dim of a split()'s output whose base changed in
    place raises torch's view error, not amin's IndexError (torch reads the arguments' histories first)"""
    for L in LIBS:
        base = L.zeros(1, 2, 0, dtype=L.float64, requires_grad=True) * 1
        part = base.split([0, 2], dim=-2)[0]
        base.abs_()
        with pytest.raises(RuntimeError, match="is a view and its base or another view of its base has been modified"):
            L.amin(part, dim=-1)
        with pytest.raises(TypeError):  # (the argument parser's errors still come first)
            L.amin(part, dim="a")
