"""Forward-mode tangents beside torch 2.13, graph and bits: the tangent of an op whose input requires grad is recorded
as torch records it (the primal read through torch::autograd::Identity under forward_ad, AliasBackward0 under
func.jvp; the number of `x * 2` taking part as an exact-zero tangent; Mul's and Div's terms in torch's order), and
its values keep torch's signed zeros (x + 2, x - 2, relu, clamp, angle)."""
import math

import pytest
import torch

import microtorch as mt


def _tree(node):
    """The whole graph under a node, by names, in edge order."""
    if node is None:
        return "None"
    return node.name() + "(" + ", ".join(_tree(n) for n, _ in node.next_functions) + ")"


def _bits(t):
    if getattr(t, "_is_zerotensor", lambda: False)():  # (torch's efficient zero tensor has no storage to list)
        return ["+0.0"] * t.numel()
    return [("-" if math.copysign(1.0, v) < 0 else "+") + repr(abs(v)) for v in t.detach().reshape(-1).tolist()]


OPS = {
    "x * 2": lambda T, x, y: x * 2, "2 * x": lambda T, x, y: 2 * x, "x * 2.5": lambda T, x, y: x * 2.5,
    "mul(2, x)": lambda T, x, y: T.mul(2, x), "x.mul(2)": lambda T, x, y: x.mul(2),
    "x + 2": lambda T, x, y: x + 2, "2 + x": lambda T, x, y: 2 + x, "x + 2.5": lambda T, x, y: x + 2.5,
    "add(2, x)": lambda T, x, y: T.add(2, x), "add(x, 2, alpha=3)": lambda T, x, y: T.add(x, 2, alpha=3),
    "x - 2": lambda T, x, y: x - 2, "2 - x": lambda T, x, y: 2 - x, "sub(2, x)": lambda T, x, y: T.sub(2, x),
    "rsub(x, 2)": lambda T, x, y: T.rsub(x, 2), "rsub(x, y)": lambda T, x, y: T.rsub(x, y),
    "x / 2": lambda T, x, y: x / 2, "2 / x": lambda T, x, y: 2 / x, "div(2, x)": lambda T, x, y: T.div(2, x),
    "x * y": lambda T, x, y: x * y, "y * x": lambda T, x, y: y * x, "x * x": lambda T, x, y: x * x,
    "x * y.double()": lambda T, x, y: x * y.double(),
    "x + y": lambda T, x, y: x + y, "x - y": lambda T, x, y: x - y, "y - x": lambda T, x, y: y - x,
    "add(x, y, alpha=2)": lambda T, x, y: T.add(x, y, alpha=2), "sub(x, y, alpha=2)": lambda T, x, y: T.sub(x, y, alpha=2),
    "x / y": lambda T, x, y: x / y, "y / x": lambda T, x, y: y / x, "-x": lambda T, x, y: -x,
    "reciprocal": lambda T, x, y: x.reciprocal(), "relu": lambda T, x, y: T.relu(x),
    "clamp": lambda T, x, y: x.clamp(-0.3, 0.3), "angle": lambda T, x, y: T.angle(x),
    "relu of relu's gradient": lambda T, x, y: T.autograd.grad(T.relu(x * y).sum(), y, create_graph=True)[0],
}
# (every combination of: x requires grad, its tangent requires grad, y requires grad)
CONFIGS = [(xg, vg, yg) for xg in (True, False) for vg in (False, True) for yg in (True, False)]


def _tangent(T, mode, op, xg, vg, yg):
    x = T.tensor([1.0, -2.0, 0.5], requires_grad=xg)
    v = T.tensor([0.5, -0.0, -0.25], requires_grad=vg)
    y = T.tensor([3.0, -0.0, 4.0], requires_grad=yg)
    f = OPS[op]
    if mode == "func.jvp":
        t = T.func.jvp(lambda a: f(T, a, y), (x,), (v,))[1]
    else:
        with T.autograd.forward_ad.dual_level():
            dual = T.autograd.forward_ad.make_dual(x, v)
            t = T.autograd.forward_ad.unpack_dual(f(T, dual, y)).tangent
    grads = None
    if t.requires_grad:  # (second order: the tangent's gradient with respect to what it was made from)
        wrt = [a for a in (x, v, y) if a.requires_grad]
        grads = [g if g is None else _bits(g) for g in T.autograd.grad(t.sum(), wrt, allow_unused=True)]
    return str(t.dtype).split(".")[-1], _bits(t), _tree(t.grad_fn), grads


@pytest.mark.parametrize("mode", ["forward_ad", "func.jvp"])
@pytest.mark.parametrize("op", list(OPS))
def test_tangents_have_torchs_graph_and_bits(op, mode):
    if op == "relu of relu's gradient" and mode == "func.jvp":
        pytest.skip("torch's autograd.grad refuses inside func.jvp (element 0 ... does not require grad); ours runs")
    for config in CONFIGS:
        if op == "relu of relu's gradient" and not config[2]:
            continue  # (y must require grad to be differentiated)
        assert _tangent(mt, mode, op, *config) == _tangent(torch, mode, op, *config), config


def test_the_graph_comparison_can_fail():
    theirs = _tangent(torch, "forward_ad", "x * 2", True, False, True)
    assert theirs[2] == ("AddBackward0(MulBackward0(None, torch::autograd::Identity(ViewBackward0("
                         "torch::autograd::AccumulateGrad()))), None)")
    assert _tangent(torch, "func.jvp", "x * 2", True, False, True)[2].count("AliasBackward0") == 2
    assert _tangent(torch, "forward_ad", "x + 2", True, False, True)[1] == ["+0.5", "-0.0", "-0.25"]


@pytest.mark.parametrize("T", [torch, mt], ids=["torch", "microtorch"])
def test_a_tangent_passed_through_is_a_new_tensor(T):
    v = T.tensor([0.5, -0.0])
    with T.autograd.forward_ad.dual_level():
        dual = T.autograd.forward_ad.make_dual(T.tensor([1.0, 2.0]), v)
        t = T.autograd.forward_ad.unpack_dual(dual + 2).tangent
        u = T.autograd.forward_ad.unpack_dual(dual + T.zeros(2)).tangent
    assert t is not v and u is not v
    t.add_(1)
    assert v.tolist() == [0.5, 0.0] and _bits(v) == ["+0.5", "-0.0"]


@pytest.mark.parametrize("T", [torch, mt], ids=["torch", "microtorch"])
def test_hessian_vector_products_through_the_new_nodes(T):
    x = T.tensor([0.5, -1.5, 2.0], dtype=T.float64)
    v = T.tensor([1.0, -0.5, 0.25], dtype=T.float64)

    def f(a):
        return (a * 2 + a / 3 - 1).mul(a.sin()).pow(2).sum()
    hvp = T.func.jvp(T.func.grad(f), (x,), (v,))[1]
    expected = T.func.hessian(f)(x) @ v
    assert [round(h, 10) for h in hvp.tolist()] == [round(e, 10) for e in expected.tolist()]
