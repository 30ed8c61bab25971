"""The exported stepper steps in a real browser (headless chromium via Python Playwright).

Skipped when chromium or playwright is missing. Screenshots (light and dark) go to
tests/ui/artifacts/ for a human to look at.
"""
import importlib.util
import os
from pathlib import Path

import pytest

import microtorch as mt
from microtorch import viz

CHROMIUM = os.environ.get("MICROTORCH_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parent / "ui" / "artifacts"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]

pytestmark = [
    pytest.mark.ui,
    pytest.mark.skipif(not os.access(CHROMIUM, os.X_OK), reason=f"chromium not found at {CHROMIUM}"),
    pytest.mark.skipif(importlib.util.find_spec("playwright") is None, reason="playwright is not installed"),
]


def _current(page):
    return page.eval_on_selector_all(".mt-graph g.node.mt-current", "els => els.map(e => e.id)")


def test_exported_stepper_steps_in_chromium(tmp_path):
    from playwright.sync_api import sync_playwright

    x = mt.tensor(2.0, requires_grad=True)
    with viz.record() as tape:
        a = x * 3
        b = x.sin()
        y = a * b
        a.register_hook(lambda g: g * 2)
        y.backward()
    s = viz.Stepper(tape, names={"x": x, "a": a, "b": b, "y": y})
    path = s.save(tmp_path / "backward.html")
    prefix = s.data["prefix"]
    expected = [prefix + st.nodes[0] for st in s.steps]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            for scheme in ("light", "dark"):
                page = browser.new_page(viewport={"width": 1180, "height": 720}, color_scheme=scheme)
                errors = []
                page.on("pageerror", lambda e: errors.append(str(e)))
                page.goto(Path(path).as_uri())
                page.wait_for_selector(".mt-stepper[data-step='0']")
                assert _current(page) == [expected[0]]
                page.click(".mt-next")
                page.wait_for_selector(".mt-stepper[data-step='1']")
                assert _current(page) == [expected[1]]
                assert "MulBackward0" in page.inner_text(".mt-panel")
                page.keyboard.press("ArrowRight")                       # keyboard steps too
                page.wait_for_selector(".mt-stepper[data-step='2']")
                assert _current(page) == [expected[2]]
                assert page.eval_on_selector(".mt-panel", "e => e.querySelectorAll('math').length") >= 2
                page.click(".mt-next")
                page.wait_for_selector(".mt-stepper[data-step='3']")
                assert _current(page) == [expected[3]]
                done = page.eval_on_selector_all(".mt-graph g.node.mt-done", "els => els.map(e => e.id)")
                assert set(done) == set(expected[:3])
                # the leaf's grad cell is only filled in once its AccumulateGrad has run
                leaf = f"[id='{expected[4]}'] text.mt-grad"
                assert page.text_content(leaf) == "grad —"
                page.click(".mt-next")
                page.wait_for_selector(".mt-stepper[data-step='4']")
                assert page.text_content(leaf) == "grad 2.959"
                assert page.is_disabled(".mt-next")
                page.screenshot(path=str(ARTIFACTS / f"viz_stepper_{scheme}.png"), full_page=True)
                page.click(".mt-back")
                page.wait_for_selector(".mt-stepper[data-step='3']")
                page.click(f"[id='{expected[1]}']")                      # clicking a node jumps to its step
                page.wait_for_selector(".mt-stepper[data-step='1']")
                page.click(".mt-reset")
                page.wait_for_selector(".mt-stepper[data-step='0']")
                assert errors == []
                page.close()
        finally:
            browser.close()


def test_wide_left_to_right_graph_scrolls_at_a_readable_scale(tmp_path):
    """A long chain drawn left to right is far wider than the notebook: "fit" stops at a
    readable scale, gives the graph the whole row (the panel goes below), and the rest scrolls
    sideways; stepping scrolls the running node into view, and no node is ever clipped."""
    from playwright.sync_api import sync_playwright

    x = mt.tensor(0.5, requires_grad=True)
    with viz.record() as tape:
        h = x
        for f in ("sin", "exp", "tanh", "cos", "sigmoid"):
            h = getattr(h, f)()
        y = h * 2
        y.backward()
    s = viz.Stepper(tape, rankdir="LR")
    path = s.save(tmp_path / "chain.html")
    geometry = """() => {
      const g = document.querySelector('.mt-graph'), svg = g.querySelector('svg'), box = g.getBoundingClientRect();
      const nodes = [...g.querySelectorAll('g.node')].map(n => n.getBoundingClientRect());
      const cur = g.querySelector('g.node.mt-current').getBoundingClientRect();
      return {zoom: parseFloat(svg.style.width) / (svg.viewBox.baseVal.width * 4 / 3),
              wide: document.querySelector('.mt-stepper').classList.contains('mt-wide'),
              clientWidth: g.clientWidth, scrollWidth: g.scrollWidth,
              rightmost: Math.max(...nodes.map(n => n.right)) - box.left + g.scrollLeft,
              leftmost: Math.min(...nodes.map(n => n.left)) - box.left + g.scrollLeft,
              current: [cur.left - box.left, cur.right - box.left]};
    }"""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 900, "height": 700})
            errors = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(Path(path).as_uri())
            page.wait_for_selector(".mt-stepper[data-step='0']")
            page.wait_for_timeout(100)
            geo = page.evaluate(geometry)
            assert geo["zoom"] >= 0.85 - 1e-3                 # was shrunk to 0.7 or less: unreadable
            assert geo["wide"] and geo["clientWidth"] > 800    # the graph has the whole row
            assert geo["scrollWidth"] > geo["clientWidth"]     # and scrolls sideways
            assert geo["leftmost"] >= 0 and geo["rightmost"] <= geo["scrollWidth"]   # nothing clipped
            page.focus(".mt-stepper")
            page.keyboard.press("End")
            page.wait_for_selector(f".mt-stepper[data-step='{len(s.steps) - 1}']")
            geo = page.evaluate(geometry)
            assert 0 <= geo["current"][0] and geo["current"][1] <= geo["clientWidth"] + 4   # in view
            page.screenshot(path=str(ARTIFACTS / "viz_stepper_lr_chain.png"), full_page=True)
            page.click(".mt-zfit")
            assert page.evaluate(geometry)["zoom"] >= 0.85 - 1e-3
            assert errors == []
        finally:
            browser.close()
