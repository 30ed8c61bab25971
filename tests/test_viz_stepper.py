"""The stepper's per-step state: which node is highlighted, which gradient it shows, the chain
rule and the engine's queue, compared with values derived by hand."""
import json
import re

import numpy as np
import pytest

import microtorch as mt
from microtorch import viz


@pytest.fixture
def diamond():
    """x = 2; a = 3x; b = sin x; y = a b, with a tensor hook doubling dL/da."""
    x = mt.tensor(2.0, requires_grad=True)
    with viz.record() as tape:
        a = x * 3
        b = x.sin()
        y = a * b
        a.register_hook(lambda g: g * 2)
        y.backward()
    stepper = viz.Stepper(tape, names={"x": x, "a": a, "b": b, "y": y})
    return stepper, x, a, b, y


def test_each_step_highlights_the_node_that_runs(diamond):
    s, x, a, b, y = diamond
    m = s.dag.model
    expected = [m.name_of(y), m.name_of(y.grad_fn), m.name_of(b.grad_fn), m.name_of(a.grad_fn), m.name_of(x)]
    assert [st.nodes for st in s.steps] == [[n] for n in expected]
    assert [st.title for st in s.steps] == ["seed", "MulBackward0", "SinBackward0", "MulBackward0", "AccumulateGrad"]
    assert len(set(expected)) == 5


def test_gradients_match_the_chain_rule_by_hand(diamond):
    s, x, a, b, y = diamond
    sin2, cos2 = np.sin(2.0), np.cos(2.0)
    seed, mul_y, sin_b, mul_a, acc = s.steps
    np.testing.assert_allclose(seed.gradient, 1.0)
    # y = a b: dL/da = b = sin 2, dL/db = a = 6
    np.testing.assert_allclose(mul_y.gradient, 1.0)
    np.testing.assert_allclose(mul_y.outgoing, [sin2, 6.0], rtol=1e-6)
    # b = sin x: dL/dx = dL/db cos x = 6 cos 2
    np.testing.assert_allclose(sin_b.gradient, 6.0)
    np.testing.assert_allclose(sin_b.outgoing, [6 * cos2], rtol=1e-6)
    # a = 3x, after the hook doubled dL/da: dL/dx = 3 * 2 sin 2
    np.testing.assert_allclose(mul_a.gradient, 2 * sin2, rtol=1e-6)
    assert [h["kind"] for h in mul_a.hooks] == ["tensor"] and mul_a.hooks[0]["changed"]
    np.testing.assert_allclose(mul_a.hooks[0]["before"], sin2, rtol=1e-6)
    np.testing.assert_allclose(mul_a.outgoing[0], 6 * sin2, rtol=1e-6)
    # x is reached twice: two contributions, summed, then accumulated into x.grad
    contributions = sorted(float(g) for _, _, _, g in acc.contributions)
    np.testing.assert_allclose(contributions, sorted([6 * cos2, 6 * sin2]), rtol=1e-6)
    before, contribution, after = acc.accumulation
    assert before is None
    np.testing.assert_allclose(after, 6 * cos2 + 6 * sin2, rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), after)


def test_chain_rule_formula_then_numbers(diamond):
    s, *_ = diamond
    sin_b = s.steps[2]
    assert sin_b.latex == [r"\frac{\partial y}{\partial x} = \frac{\partial y}{\partial b} \cdot \cos({x})"]
    assert sin_b.numbers == [r"\frac{\partial y}{\partial x} = 6\times(-0.4161) = -2.497"]
    mul_a = s.steps[3]
    assert mul_a.latex == [r"\frac{\partial y}{\partial x} = \frac{\partial y}{\partial a} \cdot {3}"]
    assert "<math" in sin_b.panel and "<mfrac>" in sin_b.panel
    acc = s.steps[4]
    assert "x.grad = None + " in acc.panel and "2.959" in acc.panel


def test_ready_queue_and_dependency_counts(diamond):
    s, x, a, b, y = diamond
    m = s.dag.model
    mul_y, mul_a, sin_b, leaf = (m.name_of(y.grad_fn), m.name_of(a.grad_fn), m.name_of(b.grad_fn), m.name_of(x))
    # after the seed: y's node is ready; a's and b's wait for one edge each, x for two
    assert s.steps[0].ready == [mul_y]
    assert s.steps[0].waiting == {mul_a: 1, sin_b: 1, leaf: 2}
    # after y's node: both a's and b's nodes are ready, b's first (created last)
    assert s.steps[1].ready == [sin_b, mul_a] and s.steps[1].waiting == {leaf: 2}
    assert s.steps[2].ready == [mul_a] and s.steps[2].waiting == {leaf: 1}
    assert s.steps[3].ready == [leaf] and s.steps[3].waiting == {}
    assert s.steps[4].ready == [] and s.steps[4].waiting == {}


def test_reused_tensor_shows_both_contributions():
    x = mt.tensor(1.5, requires_grad=True)
    with viz.record() as tape:
        a = x * x
        b = a + a
        b.backward()
    s = viz.Stepper(tape)
    mul = next(st for st in s.steps if st.node is a.grad_fn)
    assert len(mul.contributions) == 2
    assert [float(g) for _, _, _, g in mul.contributions] == [1.0, 1.0]
    np.testing.assert_allclose(mul.gradient, 2.0)
    assert "sum of 2 contributions" in mul.panel
    add = next(st for st in s.steps if st.node is b.grad_fn)
    assert all("(input" in t for t in add.latex) and len(add.latex) == 2


def test_browser_data_and_python_side_stepping(diamond):
    s, x, a, b, y = diamond
    data = s.data
    json.dumps(data)                                  # everything is JSON for the browser
    assert len(data["steps"]) == 5 == len(s.steps)
    svg = data["svg"].replace("&#45;", "-")
    for name in data["nodes"]:
        assert f'id="{data["prefix"]}{name}"' in svg
    for edge_id, step in data["edges"]:
        assert f'id="{data["prefix"]}{edge_id}"' in svg
    leaf = s.dag.model.name_of(x)
    assert data["exec"][leaf] == 4
    assert data["grad_text"][leaf] == [[-1, "grad —"], [4, "grad 2.959"]]
    assert s.index == 0
    assert s.next().index == 1 and s.index == 1
    assert s.go(-1).index == 4 and s.back().index == 3 and s.reset().index == 0
    with pytest.raises(IndexError, match="out of range"):
        s.go(9)
    assert s.state(2)["highlighted"] == [s.dag.model.name_of(b.grad_fn)]


def test_step_backward_runs_backward_and_records():
    w = mt.tensor([1.0, -2.0, 3.0], requires_grad=True)
    loss = (w * w).sum()
    s = viz.step_backward(loss)
    np.testing.assert_allclose(w.grad.numpy(), [2.0, -4.0, 6.0])
    assert s.steps[-1].title == "AccumulateGrad"
    np.testing.assert_allclose(s.steps[-1].accumulation[2], [2.0, -4.0, 6.0])
    titles = {spec.title for spec in s.dag.model.nodes.values()}
    assert {"w", "loss"} <= titles                                  # names from the caller
    with pytest.raises(TypeError, match="expects a Tensor"):
        viz.step_backward(3.0)
    with pytest.raises(ValueError, match="does not require grad"):
        viz.step_backward(mt.ones(2).sum())


def test_large_graph_collapses_and_still_steps():
    x = mt.tensor(1.0, requires_grad=True)
    with viz.record() as tape:
        y = x
        for _ in range(40):
            y = y * 1.01
        y.backward()
    s = viz.Stepper(tape, max_nodes=10)
    assert s.dag.model.more == "more"
    assert len(s.steps) == 42
    assert s.steps[-1].nodes == ["more"]
    assert s.data["exec"]["more"] == 41


def test_aliases_light_up_with_their_node():
    W = mt.randn(3, 3, requires_grad=True)
    with viz.record() as tape:
        h = mt.zeros(3)
        for _ in range(20):
            h = (W @ h + 1.0).tanh()
        h.sum().backward()
    s = viz.Stepper(tape, names={"W": W})
    w = s.dag.model.name_of(W)
    aliases = s.dag.model.aliases[w]
    last = s.data["steps"][-1]
    assert s.steps[-1].nodes == [w] and set(aliases) <= set(last["nodes"])
    assert all(s.data["exec"][a] == s.data["exec"][w] == len(s.steps) - 1 for a in aliases)


def test_broadcast_input_shows_its_sum_in_the_formula_and_the_numbers():
    """A broadcast bias: its gradient is the upstream gradient summed over the broadcast rows,
    and the panel says so (sum_to in the LaTeX and in the numbers), with labelled shapes."""
    import re
    import numpy as np
    from microtorch.viz import _format as Fmt
    x = mt.tensor(np.arange(12.0, dtype=np.float32).reshape(4, 3), requires_grad=True)
    b = mt.tensor([1.0, -2.0, 0.5], requires_grad=True)
    with viz.record() as tape:
        v = x + b
        loss = (v * v).sum()
        loss.backward()
    s = viz.Stepper(tape, names={"x": x, "b": b, "v": v, "loss": loss})
    add = next(st for st in s.steps if st.title == "AddBackward0")
    assert add.broadcast == {1: ((4, 3), (3,))}
    assert "sum\\_to" in add.latex[1] and "sum\\_to" not in add.latex[0]
    expected_b = (2 * (x.detach().numpy() + b.detach().numpy())).sum(0)
    np.testing.assert_allclose(add.outgoing[1], expected_b, rtol=1e-6)
    text = re.sub(r"<[^>]+>", "", add.panel)
    assert f"to input 1 (b): sum_to(…, (3,)) = {Fmt.summary(expected_b, 6)} shape (3,)" in text
    assert "to input 0 (x): " in text and "shape (4, 3)" in text
    mul = next(st for st in s.steps if st.title == "MulBackward0")
    assert mul.broadcast == {}                       # same shapes: no sum


def test_text_size_control_lays_the_graph_out_again():
    """The widget's text-size control sets `scale`; the kernel lays the graph out with larger
    fonts and the same node ids, and set_options(scale=) does the same for new outputs."""
    import re
    x = mt.tensor(2.0, requires_grad=True)
    with viz.record() as tape:
        (x * x).sin().backward()
    s = viz.Stepper(tape)
    sizes = lambda svg: {float(v) for v in re.findall(r'font-size="([\d.]+)"', svg)}   # noqa: E731
    before, ids = sizes(s.data["svg"]), re.findall(r'<g id="([^"]+)" class="node', s.data["svg"])
    s.scale = 1.5
    assert s.data["scale"] == 1.5 and max(sizes(s.data["svg"])) == pytest.approx(1.5 * max(before))
    assert re.findall(r'<g id="([^"]+)" class="node', s.data["svg"]) == ids
    old = viz.set_options(scale=2)
    try:
        assert max(sizes(viz.draw((x * x).sin()).svg())) == pytest.approx(2 * 14)
    finally:
        viz.set_options(**old)
