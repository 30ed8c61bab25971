"""Static export (the stepper page holds every step, runs without a kernel) and the hook timeline."""
import json
import re

import pytest

import microtorch as mt
from microtorch import viz


def _stepper():
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    with viz.record() as tape:
        a = x * 3
        b = x.sin()
        y = (a * b).sum()
        a.register_hook(lambda g: g * 2)
        y.backward()
    return viz.Stepper(tape), tape


def test_stepper_page_holds_every_step(tmp_path):
    s, _ = _stepper()
    path = s.save(tmp_path / "backward.html")
    text = open(path, encoding="utf-8").read()
    state = json.loads(re.search(r'<script type="application/json" id="mt-state">(.*?)</script>', text, re.S)
                       .group(1).replace("<\\/", "</"))
    steps = state["data"]["steps"]
    assert len(steps) == len(s.steps) == 6
    for st, py in zip(steps, s.steps):
        assert st["panel"] == py.panel and st["nodes"] == py.nodes
    assert f"step {len(s.steps) - 1} / {len(s.steps) - 1}" in steps[-1]["panel"]
    # self-contained: the module inline, no network, no kernel
    assert "window.__mtStepperRender = render;" in text and "export default" not in text
    assert not re.search(r"""(src|href)=["']https?://""", text)
    assert "<svg" in state["data"]["svg"] and "data-mt-theme" in text


def test_dag_saves_as_standalone_svg_and_png(tmp_path):
    x = mt.tensor(2.0, requires_grad=True)
    y = x.exp()
    dag = viz.draw(y)
    svg = open(dag.save(tmp_path / "g.svg"), encoding="utf-8").read()
    assert svg.startswith("<?xml") and 'class="mtviz mt-dag"' in svg and "<style>" in svg
    assert "prefers-color-scheme: dark" in svg
    html = open(dag.save(tmp_path / "g.html"), encoding="utf-8").read()
    assert "<svg" in html
    if viz.graph.shutil.which("dot"):
        png = dag.save(tmp_path / "g.png")
        assert open(png, "rb").read(4) == b"\x89PNG"
    # any other name is graphviz's own save: the DOT source
    assert open(dag.save(tmp_path / "g.bmp"), encoding="utf-8").read() == dag.source
    assert dag.save(tmp_path / "g.gv").endswith("g.gv")            # graphviz's own save: the source
    with pytest.raises(TypeError, match="cannot save a int"):
        viz.save(3, tmp_path / "x.html")


def test_hook_timeline_lanes_and_links(tmp_path):
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    with viz.record() as tape:
        a = x * 3
        b = x.sin()
        y = (a * b).sum()
        a.register_hook(lambda g: g * 2)
        a.retain_grad()

        def clip(grad_inputs, grad_outputs):
            return tuple(g.clamp(-1, 1) for g in grad_inputs)
        b.grad_fn.register_hook(clip)
        x.register_post_accumulate_grad_hook(lambda t: None)
        y.backward()
    tl = viz.hook_timeline(tape)
    kinds = [f["kind"] for f in tl.firings]
    assert sorted(kinds) == sorted(["tensor", "retain_grad", "node_post", "post_accumulate"])
    assert [k for k, _ in tl.lanes()] == ["tensor", "retain_grad", "node_post", "post_accumulate"]
    by_kind = {f["kind"]: f for f in tl.firings}
    assert by_kind["tensor"]["changed"] and by_kind["node_post"]["changed"]
    assert not by_kind["post_accumulate"]["changed"]
    assert by_kind["node_post"]["hook"] == "clip" and by_kind["node_post"]["target"] == "SinBackward0 (b)"
    assert by_kind["tensor"]["dot"] == tl.dag.model.name_of(a.grad_fn)
    assert by_kind["post_accumulate"]["dot"] == tl.dag.model.name_of(x)
    html = tl._repr_html_()
    assert html.count("class='mt-card") == 4 and "(changed)" in html
    assert f"data-t='{by_kind['tensor']['dot']}'" in html and ":has(" in html
    assert open(tl.save(tmp_path / "hooks.html"), encoding="utf-8").read().count("mt-card") >= 4
    with pytest.raises(TypeError, match="expects a tape"):
        viz.hook_timeline(y)


def test_hook_timeline_without_hooks_says_so():
    x = mt.tensor(1.0, requires_grad=True)
    with viz.record() as tape:
        (x * 2).backward()
    assert "no hook fired" in viz.hook_timeline(tape)._repr_html_()


def test_module_hooks_are_named_and_linked_to_their_cluster():
    nn = pytest.importorskip("microtorch.nn")
    model = nn.Sequential(nn.Linear(3, 2), nn.Tanh())
    model[0].register_forward_hook(lambda mod, inp, out: out * 2)
    model[0].register_full_backward_hook(lambda mod, gi, go: None)
    with viz.record() as tape:
        model(mt.randn(4, 3)).sum().backward()
    tl = viz.hook_timeline(tape, module=model)
    kinds = [f["kind"] for f in tl.firings]
    assert kinds == ["module_forward", "module_backward"]           # microtorch's own plumbing hidden
    assert all(f["target"] == "0 · Linear" for f in tl.firings)
    assert tl.firings[0]["changed"] and tl.firings[0]["phase"] == "forward"
    assert tl.firings[1]["phase"] == "backward 0"
    cluster = tl.dag.cluster_ids["0"]
    assert all(tl.dag.prefix + f["dot"] == cluster for f in tl.firings)
    assert len(viz.hook_timeline(tape, module=model, show_internal=True).firings) > 2


def test_internal_hooks_are_marked_not_guessed_from_their_module():
    """microtorch marks its own hooks (_microtorch_internal); a user's hook that happens to be a
    microtorch function (h.register_hook(mt.neg)) is still shown, in the timeline and the DAG."""
    nn = pytest.importorskip("microtorch.nn")
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    for m in model:
        m.register_full_backward_hook(lambda mod, gi, go: None)
    with viz.record() as tape:
        h = model(mt.randn(2, 3, requires_grad=True))
        h.register_hook(mt.neg)
        h.sum().backward()
    tl = viz.hook_timeline(tape, module=model)
    assert [(f["kind"], f["hook"]) for f in tl.firings] == [("tensor", "neg")] + [("module_backward", "<lambda>")] * 3
    assert [f["target"] for f in tl.firings[1:]] == ["2 · Linear", "1 · Tanh", "0 · Linear"]
    assert tl.firings[0]["changed"]
    src = tl.dag.source
    assert "neg" in src and "_on_grad" not in src
    everything = viz.hook_timeline(tape, module=model, show_internal=True)
    plumbing = [f["hook"] for f in everything.firings if f["kind"] == "node_pre"]
    assert len(everything.firings) == 10 and sorted(set(plumbing)) == ["_on_grad_input", "_on_grad_output"]
