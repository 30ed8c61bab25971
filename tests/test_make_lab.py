"""`make lab`: the command it runs works as root and as a normal user, opens on notebooks/, and
starts JupyterLab with the "Jupyter news" toast off (settings overrides inside the venv).

The real `make lab` is run, with the venv pointed at a temporary folder (so nothing is installed)
and the Jupyter of the running interpreter; the server is started on a free port, asked for
/api/status and for the notification settings it serves, then stopped.
"""
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
pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _make_lab_args(venv, extra=""):
    """`make lab` with the venv in `venv` (its install stamp taken as done) and this Jupyter."""
    jupyter = f"{sys.executable} -m jupyter"
    return ["make", "--no-print-directory", "-C", str(ROOT), "-o", f"{venv}/.lab-installed", "lab",
            f"VENV={venv}", f"JUPYTER={jupyter}", f"LAB_FLAGS={extra}"]


def test_make_lab_dry_run_as_root_and_as_a_user(tmp_path):
    venv = tmp_path / "venv"
    out = subprocess.run(_make_lab_args(venv) + ["-n"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    lab_line = [ln for ln in out.stdout.splitlines() if " -m jupyter lab" in ln]
    assert len(lab_line) == 1, out.stdout
    cmd = lab_line[0]
    assert f"--ServerApp.root_dir={ROOT / 'notebooks'}" in cmd
    assert f"--LabApp.app_settings_dir={venv}/share/jupyter/lab/settings" in cmd
    assert ("--allow-root" in cmd) == (os.geteuid() == 0)
    if os.geteuid() != 0:
        return
    nobody = shutil.which("setpriv")
    if nobody is None:
        pytest.skip("setpriv is missing: cannot run make as a normal user")
    as_user = subprocess.run([nobody, "--reuid=65534", "--regid=65534", "--clear-groups"] +
                             _make_lab_args(venv) + ["-n"], capture_output=True, text=True, timeout=60,
                             env=dict(os.environ, HOME=str(tmp_path)))
    assert as_user.returncode == 0, as_user.stderr
    user_cmd = [ln for ln in as_user.stdout.splitlines() if " -m jupyter lab" in ln][0]
    assert "--allow-root" not in user_cmd
    assert user_cmd.replace(" ", "") == cmd.replace("--allow-root", "").replace(" ", "")


def _wait_for_status(url, proc, log, deadline=90):
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if proc.poll() is not None:
            pytest.fail(f"make lab exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return json.load(r)
        except OSError:
            time.sleep(0.3)
    pytest.fail(f"JupyterLab did not answer {url} in {deadline} s:\n{log.read_text()[-3000:]}")


@pytest.mark.slow
def test_make_lab_serves_notebooks_without_the_news_toast(tmp_path):
    pytest.importorskip("jupyterlab")
    venv = tmp_path / "venv"
    for d in ("config", "runtime", "user-settings", "workspaces"):
        (tmp_path / d).mkdir()
    port, token = _free_port(), secrets.token_hex(16)
    flags = (f"--no-browser --ip=127.0.0.1 --port={port} --ServerApp.port_retries=0 "
             f"--IdentityProvider.token={token} --LabApp.user_settings_dir={tmp_path / 'user-settings'} "
             f"--LabApp.workspaces_dir={tmp_path / 'workspaces'}")
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(tmp_path / "config"),
               JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"))
    log = tmp_path / "lab.log"
    with open(log, "w") as fh:
        proc = subprocess.Popen(_make_lab_args(venv, flags), stdout=fh, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True)
    try:
        base = f"http://127.0.0.1:{port}"
        status = _wait_for_status(f"{base}/api/status?token={token}", proc, log)
        assert "started" in status
        # make lab wrote the overrides inside the venv, as binder/postBuild does on Binder
        overrides = json.loads((venv / "share/jupyter/lab/settings/overrides.json").read_text())
        assert overrides["@jupyterlab/apputils-extension:notification"]["fetchNews"] == "false"
        # ... and the running Lab serves them as the defaults of the notification plugin
        with urllib.request.urlopen(f"{base}/lab/api/settings/@jupyterlab/apputils-extension:notification"
                                    f"?token={token}", timeout=10) as r:
            schema = json.load(r)["schema"]["properties"]
        assert schema["fetchNews"]["default"] == "false"
        assert schema["checkForUpdates"]["default"] is False
        # it serves notebooks/ (the root of the file browser), and prints the URL with the token
        with urllib.request.urlopen(f"{base}/api/contents?token={token}", timeout=10) as r:
            names = {item["name"] for item in json.load(r)["content"]}
        assert "01_welcome.ipynb" in names
        text = log.read_text()
        assert "make lab: JupyterLab on notebooks/" in text
        assert f"http://127.0.0.1:{port}/lab?token=" in text   # Jupyter masks a token it was given
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)
