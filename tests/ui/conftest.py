"""Fixtures for the browser tests: a JupyterLab server on a temporary copy of notebooks/ and
Debian's chromium driven by Python Playwright.

Everything the server writes (checkpoints, autosaves, settings, workspaces, runtime files)
goes to a temporary directory; screenshots and the server log go to tests/ui/artifacts/.
The whole folder is skipped, with the reason, when chromium or playwright is missing.
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

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
CHROMIUM = os.environ.get("MICROTORCH_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-dev-shm-usage"]
LAB_OVERRIDES = {"@jupyterlab/apputils-extension:notification":
                 {"fetchNews": "false", "checkForUpdates": False}}


def pytest_collection_modifyitems(config, items):
    reason = None
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        reason = (f"chromium not found at {CHROMIUM}: install it with "
                  "`apt-get install chromium fonts-liberation fonts-dejavu-core` (make sysdeps does)")
    # find_spec, not import: importing jupyterlab costs seconds (jsonschema's format checkers)
    elif importlib.util.find_spec("playwright") is None:
        reason = "playwright (Python) is not installed: pip install -e '.[test]'"
    elif importlib.util.find_spec("jupyterlab") is None:
        reason = "jupyterlab is not installed: pip install -e '.[lab]'"
    for item in items:
        item.add_marker(pytest.mark.ui)
        if reason:
            item.add_marker(pytest.mark.skip(reason=reason))


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    """A running JupyterLab: `url(path)` gives an address with the token."""

    def __init__(self, port, token, root_dir, proc, log_path):
        self.port, self.token, self.root_dir, self.proc, self.log_path = port, token, root_dir, proc, log_path

    @property
    def base(self):
        return f"http://127.0.0.1:{self.port}"

    def url(self, path):
        sep = "&" if "?" in path else "?"
        return f"{self.base}/{path.lstrip('/')}{sep}token={self.token}"

    def log_tail(self, n=3000):
        try:
            return self.log_path.read_text(errors="replace")[-n:]
        except OSError:
            return ""


@pytest.fixture(scope="session")
def artifacts():
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def lab(tmp_path_factory, artifacts):
    tmp = tmp_path_factory.mktemp("lab")
    root_dir = tmp / "notebooks"
    shutil.copytree(ROOT / "notebooks", root_dir, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    app_settings = tmp / "app-settings"
    app_settings.mkdir()
    (app_settings / "overrides.json").write_text(json.dumps(LAB_OVERRIDES, indent=2))
    for d in ("user-settings", "workspaces", "config", "runtime", "ipython"):
        (tmp / d).mkdir()

    port, token = _free_port(), secrets.token_hex(16)
    env = dict(os.environ,
               JUPYTER_CONFIG_DIR=str(tmp / "config"), JUPYTER_RUNTIME_DIR=str(tmp / "runtime"),
               IPYTHONDIR=str(tmp / "ipython"), MPLBACKEND="module://matplotlib_inline.backend_inline",
               PYTHONHASHSEED="0",
               # the kernels import the microtorch of this checkout, not the one installed in
               # the environment (an editable install of another worktree)
               PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p))
    cmd = [sys.executable, "-m", "jupyterlab",
           "--no-browser", "--allow-root", "--ip=127.0.0.1", f"--port={port}",
           "--ServerApp.port_retries=0",
           f"--IdentityProvider.token={token}",
           f"--ServerApp.root_dir={root_dir}",
           f"--LabApp.app_settings_dir={app_settings}",
           f"--LabApp.user_settings_dir={tmp / 'user-settings'}",
           f"--LabApp.workspaces_dir={tmp / 'workspaces'}",
           "--LabApp.expose_app_in_browser=True"]
    log_path = artifacts / "jupyterlab.log"
    log = open(log_path, "w")
    proc = subprocess.Popen(cmd, cwd=str(root_dir), env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    server = Lab(port, token, root_dir, proc, log_path)
    try:
        deadline = time.monotonic() + 90
        while True:
            if proc.poll() is not None:
                pytest.fail(f"JupyterLab exited with code {proc.returncode}:\n{server.log_tail()}")
            try:
                with urllib.request.urlopen(server.url("api/status"), timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"JupyterLab did not answer /api/status within 90 s:\n{server.log_tail()}")
            time.sleep(0.25)
        yield server
    finally:
        # end the server we started (its own process group: the server and its kernels)
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=15)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait(timeout=5)
        log.close()


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser, request, artifacts):
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, device_scale_factor=1)
    pg = context.new_page()
    messages = []
    pg.on("console", lambda m: messages.append(f"{m.type}: {m.text}"))
    pg.on("pageerror", lambda e: messages.append(f"pageerror: {e}"))
    pg.console_messages = messages
    yield pg
    from lab_helpers import shutdown_kernel
    failed = getattr(request.node, "rep_call", None)
    if failed is not None and failed.failed:
        name = request.node.name.replace("/", "_")
        try:
            pg.screenshot(path=str(artifacts / f"FAILED-{name}.png"), full_page=False)
        except Exception:
            pass
        (artifacts / f"FAILED-{name}.console.txt").write_text("\n".join(messages))
    shutdown_kernel(pg)
    context.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    setattr(item, "rep_" + rep.when, rep)
