"""What the visualizer says about the nodes a double backward records (create_graph=True): torch's
Scalar overloads (MulBackward1, AddBackward1, SubBackward1), the `...BackwardBackward0` nodes of
activations, and the `torch::autograd::` nodes. Names are checked against torch 2.13's graphs."""
import re
import sys
from pathlib import Path

import pytest
import torch

import microtorch as mt
from microtorch import viz

sys.path.insert(0, str(Path(__file__).resolve().parent / "ui"))
import graph_cases as G  # noqa: E402


def _names(fn):
    seen, out, stack = set(), [], [fn]
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        out.append(n.name())
        stack.extend(f for f, _ in n.next_functions)
    return sorted(out)


def _double_backward(lib, f):
    x = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
    g, = lib.autograd.grad(f(lib, x).sum(), x, create_graph=True)
    return x, g


SCALAR_TWICE = lambda lib, x: (x * 2 + 1) ** 2          # noqa: E731  (its gradient records MulBackward1)
SILU = lambda lib, x: lib.nn.functional.silu(x)         # noqa: E731  (AddBackward1)
SOFTPLUS = lambda lib, x: lib.nn.functional.softplus(x)  # noqa: E731  (SoftplusBackwardBackward0)


@pytest.mark.parametrize("f", [SCALAR_TWICE, SILU, SOFTPLUS], ids=["scalar", "silu", "softplus"])
def test_every_step_of_a_double_backward_has_a_filled_chain_rule(f):
    """Each rule's placeholders are filled (a Scalar overload has one edge: its number was left as
    '@B'), on the graph torch records for the same gradient."""
    _, g = _double_backward(mt, f)
    _, tg = _double_backward(torch, f)
    assert _names(g.grad_fn) == _names(tg.grad_fn)
    s = viz.step_backward(g.sum())
    assert [st.title for st in s.steps[1:-1]] and all(st.latex for st in s.steps[1:])
    for st in s.steps:
        assert not any("@" in tex for tex in st.latex + st.numbers), (st.title, st.latex)


def test_mul_scalar_overload_multiplies_by_its_number():
    """g = d/dx sum((2x + 1)^2) = 2 (2x + 1) * 2: the inner `* 2` is torch's mul.Scalar, MulBackward1,
    whose rule is dL/dv = dL/dy * 2 (the number the node keeps after backward, as torch's `_saved_other`)."""
    _, g = _double_backward(mt, SCALAR_TWICE)
    s = viz.step_backward(g.sum())
    (mul1,) = [st for st in s.steps if st.title == "MulBackward1"]
    assert len(mul1.latex) == 1 and mul1.latex[0].endswith(r"\odot {2}"), mul1.latex
    assert "MulBackward1" in mul1.panel and "<math" in mul1.panel


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_torch_autograd_nodes_are_labelled_by_their_class_name():
    """x.grad of backward(create_graph=True) is torch::autograd::CopyBackwards (as in torch) and an in-place
    op on a slice records torch::autograd::CopySlices: the boxes, the stepper and the tensor panel say
    CopyBackwards / CopySlices, as torch's repr of a grad_fn does; the tooltip keeps the full name()."""
    x = mt.tensor([0.5, -1.0, 2.0], requires_grad=True)
    mt.nn.functional.softplus(x).sum().backward(create_graph=True)
    tx = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    torch.nn.functional.softplus(tx).sum().backward(create_graph=True)
    assert x.grad.grad_fn.name() == tx.grad.grad_fn.name() == "torch::autograd::CopyBackwards"
    assert type(tx.grad.grad_fn).__name__ == "CopyBackwards"
    b = x.grad.clone()
    b[1:].mul_(2)
    assert b.grad_fn.name() == "torch::autograd::CopySlices"
    dag = viz.draw(b, names={"x": x, "b": b})
    titles = {spec.title for spec in dag.model.nodes.values()}
    assert {"CopyBackwards", "CopySlices", "SoftplusBackwardBackward0"} <= titles, titles
    assert not any("::" in t for t in titles)
    (copy,) = [s for s in dag.model.nodes.values() if s.title == "CopyBackwards"]
    assert copy.tooltip.startswith("torch::autograd::CopyBackwards")
    labels = re.findall(r'label="((?:[^"\\]|\\.)*)"', dag.source)
    assert any("CopySlices" in lb for lb in labels) and not any("torch::" in lb for lb in labels), labels
    s = viz.step_backward(x.grad.sum())
    assert [st.title for st in s.steps] == ["seed", "SumBackward0", "CopyBackwards", "SoftplusBackwardBackward0",
                                           "AccumulateGrad"]
    assert "torch::autograd" not in s.steps[1].panel      # the engine's queue names CopyBackwards


def test_the_stepper_says_what_a_double_backward_node_is():
    """SoftplusBackwardBackward0 differentiates softplus_backward's formula; MulBackward1 is the Scalar
    overload. The panel says so under the name, in English and in Chinese."""
    _, g = _double_backward(mt, SOFTPLUS)
    s = viz.step_backward(g.sum())
    (st,) = [st for st in s.steps if st.title == "SoftplusBackwardBackward0"]
    assert "the derivative of SoftplusBackward, the formula that computed a first gradient" in st.panel
    assert "create_graph=True" in st.panel
    assert not any("derivative of" in other.panel for other in s.steps if other is not st)
    old = viz.set_options(lang="zh")
    try:
        _, g = _double_backward(mt, SCALAR_TWICE)
        s = viz.step_backward(g.sum())
    finally:
        viz.set_options(**old)
    (st,) = [st for st in s.steps if st.title == "MulBackward1"]
    assert "Scalar 重载" in st.panel and "t * 一个数" in st.panel


def test_nodes_that_raise_say_so_in_their_tooltip():
    """hardsigmoid's gradient has torch::autograd::NotImplemented for grad_fn, a once_differentiable
    backward's (with a gradient that requires grad) torch::autograd::Error: both raise when a backward
    reaches them, and the graph's tooltip says it (graph_cases.LONGEST_NAMES makes both)."""
    _, scope = G.run(G.LONGEST_NAMES)
    g1, g4 = scope["g1"], scope["g4"]
    tx = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    t1, = torch.autograd.grad(torch.nn.functional.hardsigmoid(tx).sum(), tx, create_graph=True)
    assert g1.grad_fn.name() == t1.grad_fn.name() == "torch::autograd::NotImplemented"
    assert g4.grad_fn.name() == "torch::autograd::Error"
    dag = viz.draw(g1.sum() + g4.sum())
    tips = {s.title: s.tooltip for s in dag.model.nodes.values()}
    assert tips["NotImplemented"].endswith("torch has no derivative formula here: a backward that reaches this "
                                           "node raises")
    assert tips["Error"].startswith("torch::autograd::Error") and "raises" in tips["Error"].splitlines()[-1]
    with pytest.raises(RuntimeError):
        g1.sum().backward()
