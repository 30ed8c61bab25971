"""The curriculum in a real browser: JupyterLab + chromium, driven by Playwright.

- the welcome notebook runs top to bottom and shows its DAG, its stepper and its heatmaps;
- in the step-through notebook, clicking Next moves the highlighted node and the gradient
  shown, in the order the engine ran them (checked against the values we know by hand);
- the gradcheck notebook shows its heatmaps (and the failing one is marked as failing).

Screenshots go to tests/ui/artifacts/ (gitignored); look at them when changing the visualizer.
"""
import re

import pytest

from lab_helpers import open_notebook, run_all

pytestmark = pytest.mark.ui


def _shot(locator, artifacts, name):
    locator.scroll_into_view_if_needed()
    locator.screenshot(path=str(artifacts / name))


def _stepper_view(stepper):
    """What a stepper shows now: its step counter, the highlighted node's title and gradient
    text, and the side panel's text."""
    return stepper.evaluate("""(root) => {
        const cur = root.querySelector('svg g.node.mt-current');
        const texts = cur ? Array.from(cur.querySelectorAll('text')).map(t => t.textContent.trim()) : [];
        const grad = cur ? cur.querySelector('text.mt-grad') : null;
        return {
          step: root.dataset.step,
          counter: root.querySelector('.mt-counter').textContent,
          node: texts.join(' | '),
          grad: grad ? grad.textContent.trim() : null,
          panel: root.querySelector('.mt-panel').innerText,
          current: root.querySelectorAll('svg g.node.mt-current').length,
          done: root.querySelectorAll('svg g.node.mt-done').length,
        };
    }""")


def test_welcome_runs_and_shows_dag_stepper_heatmap(lab, page, artifacts):
    open_notebook(page, lab, "01_welcome.ipynb")
    state = run_all(page)
    assert all(not c["errors"] for c in state["cells"])
    outputs = page.locator(".jp-Cell-outputArea")

    # the DAG: graphviz SVG with one node per box (y, tanh, add, mul, w, b)
    dag = page.locator(".jp-OutputArea-output .mtviz svg").first
    dag.wait_for(state="visible", timeout=30_000)
    titles = dag.evaluate("(svg) => Array.from(svg.querySelectorAll('g.node')).map(g => g.textContent)")
    joined = " ".join(titles)
    for expected in ("TanhBackward0", "AddBackward0", "MulBackward0"):
        assert expected in joined, titles
    _shot(dag, artifacts, "welcome-dag.png")

    # the stepper widget is drawn by its own JavaScript (anywidget), at step 0
    stepper = page.locator(".mt-stepper").first
    stepper.wait_for(state="visible", timeout=30_000)
    view = _stepper_view(stepper)
    assert view["step"] == "0" and view["current"] == 1, view
    _shot(stepper, artifacts, "welcome-stepper.png")

    # the gradcheck heatmaps: numerical | analytical | difference, drawn by matplotlib
    heat = page.locator(".mt-gradcheck").first
    heat.wait_for(state="visible", timeout=30_000)
    assert "passed" in heat.inner_text()
    assert heat.locator("svg").count() >= 1
    box = heat.locator("svg").first.bounding_box()
    assert box and box["width"] > 300 and box["height"] > 120, box
    _shot(heat, artifacts, "welcome-heatmap.png")
    assert outputs.count() > 5
    page.screenshot(path=str(artifacts / "welcome-page.png"))


# f = (x + y) * z with x=-2, y=5, z=-4: the engine's order and the gradient at each step
EXPECTED_STEPS = [
    ("f", "grad 1"),                 # seed
    ("MulBackward0", "grad 1"),
    ("z", "grad 3"),                 # df/dz = x + y
    ("AddBackward0", "grad -4"),     # df/dq = z
    ("x", "grad -4"),
    ("y", "grad -4"),
]


def test_stepper_next_moves_highlight_and_gradient(lab, page, artifacts):
    open_notebook(page, lab, "04_step_through_backward.ipynb")
    run_all(page)
    stepper = page.locator(".mt-stepper").first
    stepper.wait_for(state="visible", timeout=30_000)
    stepper.scroll_into_view_if_needed()
    next_button = stepper.locator("button.mt-next")

    seen = []
    for k, (node, grad) in enumerate(EXPECTED_STEPS):
        if k > 0:
            next_button.click()
            page.wait_for_function("([el, k]) => el.dataset.step === String(k)",
                                   arg=[stepper.element_handle(), k], timeout=5_000)
        view = _stepper_view(stepper)
        seen.append(view)
        assert view["step"] == str(k) and view["counter"].startswith(f"step {k} /"), view
        assert view["current"] == 1, f"exactly one node is highlighted at step {k}: {view}"
        title = view["node"].split(" | ")[0]
        assert title == node, f"step {k}: highlighted {view['node']!r}, expected {node!r}"
        assert view["grad"] == grad, f"step {k}: gradient shown {view['grad']!r}, expected {grad!r}"
        assert view["done"] == k, f"step {k}: the {k} nodes that ran before are greyed out: {view}"
        _shot(stepper, artifacts, f"stepper-step{k}.png")

    # the panel shows the chain rule with numbers at the multiplication ...
    # (MathML: innerText puts each token on its own line, so compare without whitespace)
    panel = re.sub(r"\s+", "", seen[1]["panel"])
    assert re.search(r"1×\(?[−-]4\)?=[−-]4", panel), seen[1]["panel"]
    assert re.search(r"1×3=3", panel), seen[1]["panel"]
    # ... and the accumulation into z's .grad
    assert "z.grad" in seen[2]["panel"] and "3" in seen[2]["panel"], seen[2]["panel"]
    # Next is disabled at the end; Back goes back one step, Reset to the start
    assert next_button.is_disabled()
    stepper.locator("button.mt-back").click()
    page.wait_for_function("(el) => el.dataset.step === '4'", arg=stepper.element_handle(), timeout=5_000)
    stepper.locator("button.mt-reset").click()
    page.wait_for_function("(el) => el.dataset.step === '0'", arg=stepper.element_handle(), timeout=5_000)

    # the browser tells the kernel where it is: stepper.index follows the clicks
    stepper.locator("button.mt-next").click()
    page.wait_for_function("(el) => el.dataset.step === '1'", arg=stepper.element_handle(), timeout=5_000)
    assert _kernel_eval(page, "stepper.index") == "1"


def _kernel_eval(page, expr, timeout=20_000):
    """Evaluate `expr` in the notebook's kernel and return its repr (through the kernel
    connection of the open notebook, as a silent execute request)."""
    return page.evaluate("""async ([expr, timeout]) => {
        const w = window.jupyterapp.shell.currentWidget;
        const kernel = w.sessionContext.session.kernel;
        const future = kernel.requestExecute({code: '', silent: true, store_history: false,
                                              user_expressions: {v: expr}});
        const reply = await future.done;
        const v = reply.content.user_expressions.v;
        if (v.status !== 'ok') return 'error: ' + v.ename + ': ' + v.evalue;
        return v.data['text/plain'];
    }""", [expr, timeout])


def test_gradcheck_notebook_shows_heatmaps(lab, page, artifacts):
    open_notebook(page, lab, "07_gradcheck.ipynb")
    run_all(page)
    views = page.locator(".jp-OutputArea-output .mt-gradcheck")
    views.first.wait_for(state="visible", timeout=30_000)
    # (blame mode embeds the heatmap of its failing node: leave that one out here)
    views = page.locator(".jp-OutputArea-output .mt-gradcheck:not(.mt-blame .mt-gradcheck)")
    summary = []
    for i in range(views.count()):
        view = views.nth(i)
        view.scroll_into_view_if_needed()       # Lab renders cells lazily: measure in view
        summary.append(view.evaluate("""(el) => {
            const svg = el.querySelector('.mt-graphbox svg');
            const r = svg ? svg.getBoundingClientRect() : null;
            return {text: el.textContent.slice(0, 300), failed: el.textContent.includes('FAILED'),
                    svg: !!svg, width: r ? r.width : 0, height: r ? r.height : 0,
                    images: svg ? svg.querySelectorAll('image').length : 0};
        }"""))
    for i in range(views.count()):
        _shot(views.nth(i), artifacts, f"gradcheck-{i}.png")
    page.screenshot(path=str(artifacts / "gradcheck-page.png"))

    # blame mode colours the buggy node red and the others green
    blame = page.locator(".jp-OutputArea-output .mt-blame").first
    blame.wait_for(state="visible", timeout=30_000)
    bad = blame.locator("svg g.node.mt-bad")
    assert bad.count() == 1
    assert "BuggyCumSumBackward" in bad.first.evaluate("(g) => g.textContent")
    assert blame.locator("svg g.node.mt-ok").count() >= 3
    _shot(blame, artifacts, "gradcheck-blame.png")

    # the eps sweep: a log-log plot with its verdict underneath
    sweep = page.locator(".jp-OutputArea-output .mtviz", has_text="smallest error").first
    sweep.wait_for(state="visible", timeout=30_000)
    assert sweep.locator("svg").count() >= 1
    _shot(sweep, artifacts, "gradcheck-eps-sweep.png")
