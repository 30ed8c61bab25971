"""The pictures of a double backward and of the longest node names, exported and opened in chromium:
at 1920x1080, 1366x768 and 1024x768 (light; dark at 1024x768), every node inside its pane and clear of the
others and of the zoom buttons, every text inside its box with room to spare, >= 12 px, AA contrast;
with each layout engine (Graphviz's `dot`, its WebAssembly build in the kernel, the one in the
browser). Screenshots: tests/ui/artifacts/viz9-*.png. Skipped without chromium or playwright."""
import importlib.util
import os
import sys
from pathlib import Path

import pytest

from microtorch import viz

sys.path.insert(0, str(Path(__file__).resolve().parent / "ui"))
import graph_cases as G  # noqa: E402
from viz_checks import (GEOMETRY_JS, TEXT_ROOM_JS, TEXTS_JS, UNDER_BAR_JS, cramped, low_contrast,  # noqa: E402
                        outside, overlapping, too_small)

CHROMIUM = os.environ.get("MICROTORCH_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parent / "ui" / "artifacts"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]
SIZES = [(1920, 1080), (1366, 768), (1024, 768)]

pytestmark = [
    pytest.mark.ui,
    pytest.mark.skipif(not os.access(CHROMIUM, os.X_OK), reason=f"chromium not found at {CHROMIUM}"),
    pytest.mark.skipif(importlib.util.find_spec("playwright") is None, reason="playwright is not installed"),
]

@pytest.fixture(scope="module")
def chromium():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """The cells run in order in one namespace, as in a notebook: x already holds a gradient when the
    steppers run (their leaf cells show it first, then the sum)."""
    d = tmp_path_factory.mktemp("viz9")
    values, _ = G.run(*G.CELLS[1:])
    return {name: value.save(d / f"{name}.html")
            for name, value in zip(("activation", "prelu", "scalar", "longest"), values)}


def _check(page, where, min_room=3.0):
    root = page.query_selector("body")
    for pane in page.evaluate(GEOMETRY_JS, root):
        assert pane["nodes"] and not outside(pane), f"{where}: {outside(pane)}"
        assert not overlapping(pane), f"{where}: {overlapping(pane)}"
    rooms = page.evaluate(TEXT_ROOM_JS, root)
    assert rooms and not cramped(rooms, min_room), f"{where}: {cramped(rooms, min_room)[:4]}"
    assert not page.evaluate(UNDER_BAR_JS, root), f"{where}: nodes under the zoom buttons"
    texts = page.evaluate(TEXTS_JS, root.query_selector(".mtviz") or root)
    assert not too_small(texts, 12), f"{where}: {too_small(texts, 12)[:6]}"
    assert not low_contrast(texts), f"{where}: {low_contrast(texts)[:6]}"


# the dark theme changes colours only: one size of it checks its contrast
@pytest.mark.parametrize("scheme,size", [("light", s) for s in SIZES] + [("dark", SIZES[2])],
                         ids=["1920", "1366", "1024", "1024-dark"])
def test_double_backward_and_long_names_are_legible_at_every_size(chromium, pages, scheme, size):
    for w, h in [size]:
        page = chromium.new_page(viewport={"width": w, "height": h}, color_scheme=scheme)
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        try:
            for name, path in pages.items():
                page.goto(Path(path).as_uri() + f"?theme={scheme}")
                page.wait_for_selector(".mt-graph:not(.mt-static)")
                page.wait_for_timeout(80)
                where = f"{name} at {w}x{h}, {scheme}"
                _check(page, where)
                if page.query_selector(".mt-stepper"):
                    page.focus(".mt-stepper")
                    page.keyboard.press("End")
                    page.wait_for_selector(".mt-stepper .mt-next:disabled")
                    _check(page, where + ", last step")
                page.screenshot(path=str(ARTIFACTS / f"viz9-{name}-{w}-{scheme}.png"), full_page=True)
            assert errors == []
        finally:
            page.close()


def test_at_presentation_scale_on_a_projector(chromium, tmp_path):
    """viz.set_options(scale=1.5) at 1920x1080: every text of the pictures >= 16 px, the texts still
    inside their boxes with room."""
    old = viz.set_options(scale=1.5)
    try:
        values, _ = G.run(*G.CELLS[1:])
    finally:
        viz.set_options(**old)
    page = chromium.new_page(viewport={"width": 1920, "height": 1080})
    try:
        for i, value in enumerate(values):
            page.goto(Path(value.save(tmp_path / f"p{i}.html")).as_uri())
            page.wait_for_selector(".mt-graph:not(.mt-static)")
            body = page.query_selector("body")
            rooms = page.evaluate(TEXT_ROOM_JS, body)
            assert rooms and not cramped(rooms, 4.0), cramped(rooms, 4.0)[:4]
            for pane in page.evaluate(GEOMETRY_JS, body):
                assert not outside(pane) and not overlapping(pane)
            texts = page.evaluate(TEXTS_JS, page.query_selector(".mt-stepper, .mtviz .mt-graphwrap"))
            assert len(texts) > 5 and not too_small(texts, 16), too_small(texts, 16)[:6]
            page.screenshot(path=str(ARTIFACTS / f"viz9-projector-{i}.png"))
    finally:
        page.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_scalar_overload_step_shows_its_number_and_what_it_is(chromium, pages, scheme):
    """A click on MulBackward1 (the `* 2` inside (2x + 1)^2's gradient) opens its step: the chain rule
    multiplies by 2, with no placeholder left, under a legible line saying what the node is."""
    page = chromium.new_page(viewport={"width": 1366, "height": 768}, color_scheme=scheme)
    try:
        page.goto(Path(pages["scalar"]).as_uri() + f"?theme={scheme}")
        page.wait_for_selector(".mt-stepper[data-step='0']")
        page.click(".mt-graph g.node:has-text('MulBackward1')")
        panel = page.inner_text(".mt-panel")
        assert "MulBackward1" in panel and "@" not in panel
        assert "Scalar overload (t * a number" in page.inner_text(".mt-panel .mt-note")
        mathml = page.inner_html(".mt-panel .mt-sec-chain")
        assert "<mn>2</mn>" in mathml, mathml[:400]
        texts = page.evaluate(TEXTS_JS, page.query_selector(".mt-panel"))
        assert any("Scalar overload" in t["text"] for t in texts)
        assert not too_small(texts, 12) and not low_contrast(texts), too_small(texts, 12) + low_contrast(texts)
        page.screenshot(path=str(ARTIFACTS / f"viz9-scalar-step-{scheme}.png"))
    finally:
        page.close()


# the texts of a stepper's side panel (and of the tensor shown in it) that reach past its right side
PANEL_OVERFLOW_JS = """(root) => [...root.querySelectorAll('.mt-panel *')]
  .filter((e) => e.offsetParent && !e.children.length && e.textContent.trim())
  .map((e) => ({text: e.textContent.trim().slice(0, 50), past: e.getBoundingClientRect().right
                - e.closest('.mt-panel').getBoundingClientRect().right, hidden: e.scrollWidth - e.clientWidth}))
  .filter((o) => o.past > 0.5 || o.hidden > 1)"""


@pytest.mark.parametrize("size", [(1920, 1080), (1024, 768)], ids=["1920", "1024"])
def test_the_longest_name_wraps_in_the_stepper_panel(chromium, tmp_path, size):
    """Clicking ScaledDotProductFlashAttentionForCpuBackward0 in a stepper opens its tensor in the side
    panel (360 px): its name and the step's title wrap between words instead of being cut off."""
    _, scope = G.run(G.LONGEST_NAMES)
    path = viz.step_backward(scope["loss"]).save(tmp_path / "attention.html")
    page = chromium.new_page(viewport={"width": size[0], "height": size[1]})
    try:
        page.goto(Path(path).as_uri())
        page.wait_for_selector(".mt-stepper[data-step='0']")
        page.click(".mt-graph g.node:has-text('ScaledDotProduct')")
        page.wait_for_selector(".mt-panel .mt-tensor:not([hidden])")
        assert "ScaledDotProductFlashAttentionForCpuBackward0" in page.inner_text(".mt-panel .mt-tensor h4")
        assert "ScaledDotProductFlashAttentionForCpuBackward0" in page.inner_text(".mt-panel .mt-head b")
        assert page.evaluate(PANEL_OVERFLOW_JS, page.query_selector(".mt-stepper")) == []
        page.screenshot(path=str(ARTIFACTS / f"viz9-attention-panel-{size[0]}.png"))
    finally:
        page.close()


@pytest.mark.parametrize("engine", ["dot", "wasm", "browser"])
def test_long_names_fit_their_boxes_with_every_layout_engine(chromium, tmp_path, monkeypatch, engine):
    """Each engine sizes a box from its own guess of the text's width (the WebAssembly ones have no
    fonts): viz asks for boxes as wide as Arial's text, so no name runs over its box."""
    from microtorch.viz import graph
    _, scope = G.run(G.LONGEST_NAMES)
    if engine == "browser":
        if graph.browser_layout_js() is None:
            pytest.skip("the browser's Graphviz is not installed (make lab fetches it)")
        monkeypatch.setattr(graph, "svg_or_none", lambda dag: None)
        dag = viz.draw(scope["total"])
    else:
        try:
            graph.renderer_name(engine)
        except graph.RendererNotFound as e:
            pytest.skip(str(e))
        dag = viz.draw(scope["total"], renderer=engine)
    path = dag.save(tmp_path / f"{engine}.html")
    page = chromium.new_page(viewport={"width": 1920, "height": 1080})
    try:
        page.goto(Path(path).as_uri())
        page.wait_for_selector(".mt-graph:not(.mt-static)", timeout=20_000)
        rooms = page.evaluate(TEXT_ROOM_JS, page.query_selector("body"))
        assert any(r["text"].startswith("ScaledDotProductFlashAttentionForCpuBackward0") for r in rooms)
        assert not cramped(rooms, 3.0), cramped(rooms, 3.0)[:4]
    finally:
        page.close()
