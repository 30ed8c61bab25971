"""The visualizer in JupyterLab at projector and laptop sizes, light and dark.

Notebook 04's steppers (left to right, and the top-to-bottom MLP): after load and at the last
step every node's box lies inside the pane that clips it; zoomed in, the running node stays
in the pane while stepping. One notebook run serves every size and theme (the viewport and
the theme change under the same page, which also exercises the re-fit on resize).
Screenshots go to tests/ui/artifacts/lab-04-*.png.
"""
import pytest

from lab_helpers import open_notebook, run_all
from viz_checks import (GEOMETRY_JS, TEXT_ROOM_JS, TEXTS_JS, UNDER_BAR_JS, cramped, inside, low_contrast,
                        outside, overlapping, too_small)

pytestmark = pytest.mark.ui

SIZES = [(1920, 1080), (1366, 768), (1024, 768)]
THEMES = {"light": "JupyterLab Light", "dark": "JupyterLab Dark"}


def _set_theme(page, name):
    page.evaluate("(t) => window.jupyterapp.commands.execute('apputils:change-theme', {theme: t})", THEMES[name])
    want = "true" if name == "light" else "false"
    page.wait_for_function("(w) => document.body.dataset.jpThemeLight === w", arg=want, timeout=20_000)
    page.wait_for_timeout(300)


def _geo(stepper):
    return stepper.evaluate(GEOMETRY_JS)[0]


def _check_stepper(page, stepper, label, artifacts):
    stepper.scroll_into_view_if_needed()
    page.wait_for_timeout(120)
    pane = _geo(stepper)
    assert pane["nodes"], label
    assert not outside(pane), f"{label}, after load: {outside(pane)} (pane {pane['width']}x{pane['height']})"
    stepper.focus()
    page.keyboard.press("End")
    stepper.locator(".mt-next:disabled").wait_for(timeout=5_000)
    stepper.scroll_into_view_if_needed()
    pane = _geo(stepper)
    assert not outside(pane), f"{label}, last step: {outside(pane)}"
    stepper.screenshot(path=str(artifacts / f"lab-04-{label}.png"))
    stepper.locator(".mt-reset").click()
    for _ in range(4):
        stepper.locator(".mt-zin").click()
    for k in (1, 2):
        stepper.locator(".mt-next").click()
        page.wait_for_function("([el, k]) => el.dataset.step === String(k)", arg=[stepper.element_handle(), k])
        now = _geo(stepper)
        assert inside(now["current"], now), f"{label}, zoomed in, step {k}: {now['current']}"
    stepper.locator(".mt-zfit").click()
    stepper.locator(".mt-reset").click()


def test_notebook_04_steppers_fit_at_every_size_and_theme(lab, page, artifacts):
    """...and at every size every text of both steppers is legible (12 px, AA contrast) in both
    themes: a graph too tall for the window at 12 px makes the pane taller, never smaller text."""
    open_notebook(page, lab, "04_step_through_backward.ipynb")
    run_all(page)
    steppers = page.locator(".jp-OutputArea-output .mt-stepper")
    steppers.first.wait_for(state="visible", timeout=30_000)
    assert steppers.count() >= 2
    for theme in ("light", "dark"):
        _set_theme(page, theme)
        for w, h in SIZES:
            page.set_viewport_size({"width": w, "height": h})
            page.wait_for_timeout(250)
            for i in range(2):
                _check_stepper(page, steppers.nth(i), f"{i}-{w}x{h}-{theme}", artifacts)
                _check_legible(page, steppers.nth(i))
    _set_theme(page, "light")


def _check_legible(page, stepper):
    """Default scale: every visible text of a stepper >= 12 px with AA contrast, at the last
    step (done nodes included)."""
    stepper.scroll_into_view_if_needed()
    stepper.focus()
    page.keyboard.press("End")
    stepper.locator(".mt-next:disabled").wait_for(timeout=5_000)
    texts = stepper.evaluate(TEXTS_JS)
    assert len(texts) > 20
    assert not too_small(texts, 12), too_small(texts, 12)[:8]
    assert not low_contrast(texts), low_contrast(texts)[:8]
    stepper.locator(".mt-reset").click()


_INTERACTIVE = [
    "import microtorch as mt\nfrom microtorch import viz, nn\nmt.manual_seed(0)",
    "w = mt.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)\nx = mt.tensor([1.0, 2.0])\n"
    "y = (w @ x).tanh().sum()\nviz.draw(y)",
    "model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 1))\n"
    "viz.explore(model, mt.randn(5, 3), loss_fn=lambda out: out.pow(2).mean())",
    "class Half(mt.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
    "        ctx.save_for_backward(x)\n        return x * x\n    @staticmethod\n    def backward(ctx, g):\n"
    "        (x,) = ctx.saved_tensors\n        return g * x\n"
    "viz.gradcheck(Half.apply, (mt.tensor([0.5, -1.0, 2.0], dtype=mt.float64, requires_grad=True),))",
    "s = viz.step_backward((w @ x).tanh().sum())\ns",
]


def test_interactive_outputs_work_inside_lab(lab, page, artifacts):
    """The scripts of viz's HTML outputs run in JupyterLab (trusted outputs): the DAG becomes a
    fitted pan/zoom pane, the explorer opens a module and shows a tensor, a heatmap cell reads
    out under the pointer."""
    import nbformat
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in _INTERACTIVE])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(lab.root_dir / "viz_interactive.ipynb"))
    page.set_viewport_size({"width": 1366, "height": 768})
    open_notebook(page, lab, "viz_interactive.ipynb")
    run_all(page)
    dag = page.locator(".jp-OutputArea-output .mt-graphwrap").first
    dag.scroll_into_view_if_needed()
    page.wait_for_function("(el) => !el.querySelector('.mt-graph').classList.contains('mt-static')",
                           arg=dag.element_handle(), timeout=10_000)
    geo = dag.evaluate(GEOMETRY_JS)[0]
    assert geo["nodes"] and not outside(geo)
    dag.locator(".mt-zin").click()
    assert dag.evaluate(GEOMETRY_JS)[0]["zoom"] > geo["zoom"] * 1.2
    dag.locator(".mt-zfit").click()
    dag.locator("g.node", has_text="TanhBackward0").click()          # its tensor opens below the graph
    panel = dag.locator(".mt-tensor").inner_text()
    assert "TanhBackward0" in panel and "saved tensors (with versions)" in panel and "saved result 2 v0" in panel
    dag.locator("g.node.mt-leaf").first.click()                          # the leaf w: its value
    panel = dag.locator(".mt-tensor").inner_text()
    assert "shape (2, 2)" in panel and "-2" in panel and "0.5" in panel

    ex = page.locator(".jp-OutputArea-output .mt-explorer").first
    ex.scroll_into_view_if_needed()
    page.wait_for_function("(el) => el.dataset.state !== undefined", arg=ex.element_handle(), timeout=10_000)
    ex.locator("g.node.mt-module", has_text="2 · Linear").click()
    assert ex.evaluate("el => el.dataset.state") == "2"
    ex.locator("g.node", has_text="2.weight").click()
    panel = ex.locator(".mt-tensor").inner_text()
    assert "shape (4, 4)" in panel and "gradient" in panel
    ex.screenshot(path=str(artifacts / "lab-explore.png"))
    ex.locator("g.cluster.mt-collapsible[data-module='2']").first.click(position={"x": 8, "y": 8})
    assert ex.evaluate("el => el.dataset.state") == ""

    heat = page.locator(".jp-OutputArea-output .mt-heatwrap:visible").first
    heat.scroll_into_view_if_needed()
    box = heat.locator(".mt-hit[data-panel='numerical']").bounding_box()
    page.mouse.move(box["x"] + box["width"] * 5 / 6, box["y"] + box["height"] * 5 / 6)
    tip = heat.locator(".mt-heattip")
    tip.wait_for(state="visible", timeout=5_000)
    assert "out[2] / in[2]" in tip.inner_text() and "fails" in tip.inner_text()

    # the stepper: a click on a node jumps to its step and opens its tensor
    st = page.locator(".jp-OutputArea-output .mt-stepper").first
    st.scroll_into_view_if_needed()
    st.locator("g.node", has_text="TanhBackward0").click()
    assert st.evaluate("el => el.dataset.step") == "2"
    panel = st.locator(".mt-tensor").inner_text()
    assert "TanhBackward0" in panel and "shape (2,)" in panel and "gradient" in panel
    # the stepper's text-size control: the kernel lays the graph out again, larger
    size = "(el) => Math.max(...[...el.querySelectorAll('svg text')].map(t => parseFloat(t.getAttribute('font-size'))))"
    before = st.evaluate(size)
    st.locator("select.mt-scale").select_option("1.5")
    page.wait_for_function(f"() => ({size})(document.querySelector('.jp-OutputArea-output .mt-stepper')) > {before * 1.4}",
                           timeout=20_000)
    st = page.locator(".jp-OutputArea-output .mt-stepper").first
    assert not outside(st.evaluate(GEOMETRY_JS)[0])
    assert _kernel_scale(page) == "1.5"


def _kernel_scale(page):
    return page.evaluate("""async () => {
        const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
        const reply = await kernel.requestExecute({code: '', silent: true, store_history: false,
                                                   user_expressions: {v: 's.scale'}}).done;
        return reply.content.user_expressions.v.data['text/plain'];
    }""")


# every notebook with viz output (04 has its own test above)
VIZ_NOTEBOOKS = ["01_welcome.ipynb", "02_chain_rule.ipynb", "03_tensors_and_grad_fn.ipynb", "05_broadcasting.ipynb",
                 "06_hooks.ipynb", "07_gradcheck.ipynb", "08_higher_order.ipynb", "10_inplace.ipynb",
                 "11_custom_function.ipynb", "12_training.ipynb"]

# each matplotlib figure of a viz output (heatmaps, eps sweep): its smallest text on screen, from
# the figure's own numbers (its SVG is in points, and so are its font sizes) and the width the
# page gives it, since its text is drawn as paths a browser cannot measure
FIGURES_JS = """(root) => [...root.querySelectorAll('svg[data-min-font-pt]')].filter((s) => s.getBoundingClientRect().width)
  .map((s) => ({px: parseFloat(s.dataset.minFontPt) * s.getBoundingClientRect().width / s.viewBox.baseVal.width,
                text: 'figure ' + s.viewBox.baseVal.width + 'pt wide', where: 'figure'}))"""


def _scroll_to(page, el, height):
    for _ in range(5):                 # Lab may scroll the notebook again (active cell): retry
        el.evaluate("e => e.scrollIntoView({block: 'start'})")
        page.wait_for_timeout(200)
        if 0 <= el.bounding_box()["y"] < height:
            return


@pytest.mark.parametrize("notebook", VIZ_NOTEBOOKS)
def test_notebook_viz_outputs_are_legible_at_laptop_sizes(lab, page, artifacts, notebook):
    """Every viz output of a notebook (graphs, steppers, explorers, timelines, heatmaps, tables),
    at 1366x768 and 1024x768 in the light theme and 1024x768 in the dark one: no node outside
    its pane; every text >= 12 px with AA contrast; each figure's smallest text >= 12 px on
    screen (its font size times the scale it is shown at)."""
    page.set_viewport_size({"width": 1366, "height": 768})
    open_notebook(page, lab, notebook)
    run_all(page, timeout=300)
    outputs = page.locator(".jp-OutputArea-output .mtviz")
    outputs.first.wait_for(state="visible", timeout=30_000)
    n = outputs.count()
    assert n >= 1
    for theme, w in (("light", 1366), ("light", 1024), ("dark", 1024)):
        if theme == "dark":
            _set_theme(page, "dark")
        page.set_viewport_size({"width": w, "height": 768})
        page.wait_for_timeout(300)
        for i in range(n):
            out = outputs.nth(i)
            if out.evaluate("e => !!e.parentElement.closest('.mtviz')"):
                continue                        # measured with the output it is part of
            _scroll_to(page, out, 768)
            where = f"{notebook} output {i} at {w}, {theme}"
            for pane in out.evaluate(GEOMETRY_JS):
                assert pane["nodes"] and not outside(pane), f"{where}: {outside(pane)}"
                assert not overlapping(pane), f"{where}: {overlapping(pane)}"
            assert not out.evaluate(UNDER_BAR_JS), f"{where}: nodes under the zoom buttons"
            rooms = out.evaluate(TEXT_ROOM_JS)
            assert not cramped(rooms, 3.0), f"{where}: {cramped(rooms, 3.0)[:4]}"
            texts = out.evaluate(TEXTS_JS)
            assert not too_small(texts, 12), f"{where}: {too_small(texts, 12)[:6]}"
            assert not low_contrast(texts), f"{where}: {low_contrast(texts)[:6]}"
            figures = out.evaluate(FIGURES_JS)
            assert not too_small(figures, 12), f"{where}: {too_small(figures, 12)}"
            out.screenshot(path=str(artifacts / f"lab-{notebook[:2]}-out{i}-{w}-{theme}.png"))
    _set_theme(page, "light")


def test_notebook_04_mlp_fits_1024_with_the_file_browser_open(lab, page, artifacts):
    """At 1024x768 with Lab's file browser open (a 568 px output), every stepper of notebook 04,
    the MLP among them, fits its output at >= 12 px text: its modules stack downwards, and the
    output does not scroll sideways."""
    page.set_viewport_size({"width": 1024, "height": 768})
    open_notebook(page, lab, "04_step_through_backward.ipynb")
    run_all(page)
    page.evaluate("() => window.jupyterapp.commands.execute('filebrowser:activate')")
    page.wait_for_function("() => document.querySelector('.jp-FileBrowser') && "
                           "document.querySelector('.jp-FileBrowser').getBoundingClientRect().width > 100")
    page.wait_for_timeout(500)
    steppers = page.locator(".jp-OutputArea-output .mt-stepper")
    assert steppers.count() >= 2
    for i in range(steppers.count()):
        st = steppers.nth(i)
        st.scroll_into_view_if_needed()
        page.wait_for_timeout(150)
        body = st.evaluate("(el) => { const b = el.querySelector('.mt-body'); return [b.clientWidth, b.scrollWidth]; }")
        assert body[1] <= body[0] + 1, f"stepper {i} scrolls sideways: {body}"
        pane = st.evaluate(GEOMETRY_JS)[0]
        assert not outside(pane), f"stepper {i}: {outside(pane)}"
        texts = [t for t in st.evaluate(TEXTS_JS) if t["where"] == "svg"]
        assert texts and not too_small(texts, 12), too_small(texts, 12)[:6]
        st.screenshot(path=str(artifacts / f"lab-04-filebrowser-{i}.png"))


def test_double_backward_and_long_names_are_legible_in_lab(lab, page, artifacts):
    """The graphs a double backward records (x.grad of an activation drawn, steppers through
    PreluKernelBackwardBackward0 and torch's Scalar overloads) and the longest node names, in Lab at
    1920x1080, 1366x768 and 1024x768 in the light theme and 1024x768 in the dark one (steppers at
    their first and last step): every node inside its pane and clear of the others, every text inside
    its box with room to spare, >= 12 px, AA contrast."""
    import nbformat
    from graph_cases import CELLS
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(lab.root_dir / "viz_double_backward.ipynb"))
    open_notebook(page, lab, "viz_double_backward.ipynb")
    run_all(page)
    outputs = page.locator(".jp-OutputArea-output > .mtviz, .jp-OutputArea-output .mt-stepper")
    outputs.first.wait_for(state="visible", timeout=30_000)
    assert outputs.count() == 4
    for theme, (w, h) in (("light", SIZES[0]), ("light", SIZES[1]), ("light", SIZES[2]), ("dark", SIZES[2])):
        if theme == "dark":
            _set_theme(page, "dark")
        page.set_viewport_size({"width": w, "height": h})
        page.wait_for_timeout(250)
        for i in range(4):
            out = outputs.nth(i)
            _scroll_to(page, out, h)
            _check_double_backward_output(out, f"output {i} at {w}x{h}, {theme}")
            out.screenshot(path=str(artifacts / f"lab-viz9-out{i}-{w}-{theme}.png"))
            if out.evaluate("e => e.classList.contains('mt-stepper')"):
                out.focus()
                page.keyboard.press("End")
                out.locator(".mt-next:disabled").wait_for(timeout=5_000)
                _check_double_backward_output(out, f"output {i} at {w}x{h}, {theme}, last step")
                out.locator(".mt-reset").click()
    _set_theme(page, "light")


def _check_double_backward_output(out, where):
    for pane in out.evaluate(GEOMETRY_JS):
        assert pane["nodes"] and not outside(pane), f"{where}: {outside(pane)}"
        assert not overlapping(pane), f"{where}: {overlapping(pane)}"
    assert not out.evaluate(UNDER_BAR_JS), f"{where}: nodes under the zoom buttons"
    rooms = out.evaluate(TEXT_ROOM_JS)
    assert rooms and not cramped(rooms, 3.0), f"{where}: {cramped(rooms, 3.0)[:4]}"
    texts = out.evaluate(TEXTS_JS)
    assert not too_small(texts, 12), f"{where}: {too_small(texts, 12)[:6]}"
    assert not low_contrast(texts), f"{where}: {low_contrast(texts)[:6]}"
