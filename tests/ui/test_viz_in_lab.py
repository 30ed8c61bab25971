"""The visualizer in JupyterLab at projector and laptop sizes, light and dark.

Notebook 04's steppers (left to right, and the top-to-bottom MLP): after load and at the last
step every node's box lies inside the pane that clips it; zoomed in, the running node stays
in the pane while stepping. One notebook run serves every size and theme (the viewport and
the theme change under the same page, which also exercises the re-fit on resize).
Screenshots go to tests/ui/artifacts/lab-04-*.png.
"""
import pytest

from lab_helpers import open_notebook, run_all
from viz_checks import GEOMETRY_JS, TEXTS_JS, inside, low_contrast, outside, too_small

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
    _set_theme(page, "light")


def test_notebook_04_stepper_text_is_legible_on_a_projector(lab, page, artifacts):
    """1920x1080, default scale: every visible text of the MLP stepper >= 12 px with AA contrast,
    in both themes, at the last step (done nodes included)."""
    page.set_viewport_size({"width": 1920, "height": 1080})
    open_notebook(page, lab, "04_step_through_backward.ipynb")
    run_all(page)
    stepper = page.locator(".jp-OutputArea-output .mt-stepper").nth(1)
    stepper.wait_for(state="visible", timeout=30_000)
    for theme in ("light", "dark"):
        _set_theme(page, theme)
        stepper.scroll_into_view_if_needed()
        stepper.focus()
        page.keyboard.press("End")
        stepper.locator(".mt-next:disabled").wait_for(timeout=5_000)
        texts = stepper.evaluate(TEXTS_JS)
        assert len(texts) > 30
        assert not too_small(texts, 12), too_small(texts, 12)[:8]
        assert not low_contrast(texts), low_contrast(texts)[:8]
    _set_theme(page, "light")
