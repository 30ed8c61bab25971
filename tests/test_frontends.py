"""The front-ends a class uses, in headless chromium (JupyterLab 4 has its own tests in tests/ui/):

- Notebook 7 runs the welcome notebook and shows its DAG, stepper widget and heatmap;
- Notebook 7 with a kernel that has neither `dot` nor wasmtime (as in JupyterLite, or a pip
  install without wasmtime): the welcome notebook runs, and its DAG and stepper are laid out in
  the browser by the bundled WebAssembly Graphviz, with the node ids the stepper needs;
- an executed notebook exported to HTML by nbconvert shows its graph, laid out by `dot` or, without
  it, in the page.
"""
import importlib.util
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = os.environ.get("MICROTORCH_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]
pytestmark = [
    pytest.mark.ui, pytest.mark.slow,
    pytest.mark.skipif(not os.access(CHROMIUM, os.X_OK), reason=f"chromium not found at {CHROMIUM}"),
    pytest.mark.skipif(importlib.util.find_spec("playwright") is None, reason="playwright is not installed"),
]
sys.path.insert(0, str(ROOT / "tests" / "ui"))
ARTIFACTS = ROOT / "tests" / "ui" / "artifacts"     # screenshots for a human (gitignored)

SMALL = [  # a notebook of our own for the fallback: a DAG and a stepper
    "import microtorch as mt\nfrom microtorch import viz",
    "x = mt.tensor([1.0, 2.0], requires_grad=True)\nw = mt.tensor([0.5, -1.0], requires_grad=True)\n"
    "loss = (x * w).tanh().sum()\nviz.draw(loss, names={'x': x, 'w': w, 'loss': loss})",
    "viz.step_backward(loss, names={'x': x, 'w': w, 'loss': loss})",
]


def _notebook(cells):
    return {"cells": [{"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {},
                       "outputs": [], "source": src} for i, src in enumerate(cells)],
            "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
            "nbformat": 4, "nbformat_minor": 5}


# Notebook 7.6's keyboard-shortcut settings plugin throws this on page load whatever the notebook
# (pluginChanged for a plugin it has no schema for); it is not ours, every other error is.
NOTEBOOK7_OWN = "Cannot read properties of undefined (reading 'schema')"


def _errors(page):
    errors = []
    page.on("pageerror", lambda e: None if str(e) == NOTEBOOK7_OWN else errors.append(str(e)))
    return errors


def _hide_layout_engines(tmp):
    """An environment for a kernel with no `dot` on PATH and no importable wasmtime."""
    shadow = tmp / "shadow"
    (shadow / "wasmtime").mkdir(parents=True)
    (shadow / "wasmtime" / "__init__.py").write_text("raise ImportError('hidden by the test')\n")
    bindir = tmp / "bin"
    bindir.mkdir()
    os.symlink(sys.executable, bindir / "python")
    return {"PATH": str(bindir), "PYTHONPATH": os.pathsep.join([str(shadow), os.environ.get("PYTHONPATH", "")])}


def _kernel_without_layout_engines(tmp):
    """A python3 kernelspec (first on JUPYTER_PATH) whose kernel has neither `dot` nor wasmtime."""
    spec = tmp / "data" / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (no dot, no wasmtime)", "language": "python",
        "env": _hide_layout_engines(tmp)}))
    return {"JUPYTER_PATH": str(tmp / "data")}


class Server:
    def __init__(self, tmp, extra_env=None):
        self.root = tmp / "root"
        shutil.copytree(ROOT / "notebooks", self.root, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
        for d in ("config", "runtime"):
            (tmp / d).mkdir()
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.token = secrets.token_hex(16)
        env = dict(os.environ, JUPYTER_CONFIG_DIR=str(tmp / "config"), JUPYTER_RUNTIME_DIR=str(tmp / "runtime"),
                   MPLBACKEND="module://matplotlib_inline.backend_inline", **(extra_env or {}))
        self.log = tmp / "notebook.log"
        cmd = [sys.executable, "-m", "notebook", "--no-browser", "--ip=127.0.0.1", f"--port={self.port}",
               "--ServerApp.port_retries=0", f"--IdentityProvider.token={self.token}",
               f"--ServerApp.root_dir={self.root}", "--JupyterNotebookApp.expose_app_in_browser=True"]
        if os.geteuid() == 0:
            cmd.append("--allow-root")
        with open(self.log, "w") as fh:
            self.proc = subprocess.Popen(cmd, env=env, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.log.read_text()[-3000:]
            try:
                with urllib.request.urlopen(self.url("api/status"), timeout=2):
                    return
            except OSError:
                time.sleep(0.3)
        raise AssertionError(f"Notebook 7 did not start:\n{self.log.read_text()[-3000:]}")

    def url(self, path):
        return f"http://127.0.0.1:{self.port}/{path}?token={self.token}"

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=5)


@pytest.fixture
def browser():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield b
        finally:
            b.close()


def _open_and_run(page, server, name):
    from lab_helpers import run_all
    page.goto(server.url(f"notebooks/{name}"))
    page.wait_for_function("""(name) => {
        const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
        const s = w && w.sessionContext && w.sessionContext.session;
        return !!(w && w.context && w.context.path.endsWith(name) && s && s.kernel &&
                  s.kernel.status === 'idle' && s.kernel.connectionStatus === 'connected');
    }""", arg=name, timeout=90_000)
    return run_all(page, timeout=240)


def _node_ids(page, selector):
    loc = page.locator(selector).first
    loc.wait_for(state="visible", timeout=60_000)
    return loc.evaluate("(svg) => Array.from(svg.querySelectorAll('g.node')).map(g => g.id)")


@pytest.mark.skipif(importlib.util.find_spec("notebook") is None, reason="Notebook 7 is not installed")
def test_notebook7_runs_the_welcome_notebook(tmp_path, browser):
    server = Server(tmp_path)
    try:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        errors = _errors(page)
        state = _open_and_run(page, server, "01_welcome.ipynb")
        assert all(not c["errors"] for c in state["cells"]), state
        assert len(_node_ids(page, ".jp-OutputArea-output .mtviz svg")) >= 5
        page.locator(".mt-stepper svg g.node.mt-current").first.wait_for(timeout=30_000)
        page.locator(".mt-gradcheck svg").first.wait_for(timeout=30_000)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "notebook7-welcome.png"))
        assert not errors, errors
    finally:
        server.stop()


@pytest.mark.skipif(importlib.util.find_spec("notebook") is None, reason="Notebook 7 is not installed")
def test_notebook7_lays_out_in_the_browser_without_dot_or_wasmtime(tmp_path, browser):
    server = Server(tmp_path, _kernel_without_layout_engines(tmp_path))
    # the welcome notebook, as in JupyterLite: first a cell that proves the kernel has no engine
    welcome = json.loads((server.root / "01_welcome.ipynb").read_text())
    check = _notebook(["import shutil, importlib.util\nassert shutil.which('dot') is None\n"
                       "assert importlib.util.find_spec('wasmtime').origin.startswith(" + repr(str(tmp_path)) + ")"])
    welcome["cells"].insert(0, check["cells"][0])
    (server.root / "no_engines.ipynb").write_text(json.dumps(welcome))
    try:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        errors = _errors(page)
        state = _open_and_run(page, server, "no_engines.ipynb")
        assert all(not c["errors"] for c in state["cells"]), state
        assert page.locator(".jp-OutputArea-output", has_text="graph renderer: browser").count() == 1
        dag_ids = _node_ids(page, ".jp-OutputArea-output .mtviz .mt-graph svg")
        assert len(dag_ids) >= 5 and all(i.startswith("mt") and "-n" in i for i in dag_ids), dag_ids
        stepper = page.locator(".mt-stepper").first
        stepper.locator("svg g.node.mt-current").wait_for(timeout=60_000)
        before = stepper.locator("svg g.node.mt-current").first.get_attribute("id")
        stepper.locator(".mt-next").click()
        page.wait_for_function("(id) => { const c = document.querySelector('.mt-stepper svg g.node.mt-current');"
                               " return c && c.id !== id; }", arg=before, timeout=10_000)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        stepper.screenshot(path=str(ARTIFACTS / "notebook7-browser-layout-stepper.png"))
        assert not errors, errors
    finally:
        server.stop()


@pytest.mark.parametrize("hide", [False, True], ids=["dot", "browser-layout"])
def test_exported_html_shows_the_graph(tmp_path, browser, hide):
    if not hide and shutil.which("dot") is None:
        pytest.skip("dot is not installed")
    nb = tmp_path / "small.ipynb"
    nb.write_text(json.dumps(_notebook(SMALL[:2])))
    env = dict(os.environ, **(_hide_layout_engines(tmp_path) if hide else {}))
    proc = subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", "--execute", str(nb)],
                          capture_output=True, text=True, timeout=300, env=env, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    html = (tmp_path / "small.html").read_text()
    assert ("__mtGraphvizModule" in html) == hide     # the browser engine is inlined only when needed
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto((tmp_path / "small.html").as_uri())
    ids = _node_ids(page, ".mtviz svg")
    assert len(ids) == 6, ids
    assert not errors, errors
