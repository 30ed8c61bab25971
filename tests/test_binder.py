"""binder/ is a configuration repo2docker accepts, and it builds the environment we want.

`repo2docker --no-build --no-run --debug <repo>` reads binder/, picks a build pack and prints
the Dockerfile it would build, without Docker. We check that Dockerfile and run postBuild
against a temporary prefix to see the JupyterLab settings it writes.
"""
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BINDER = ROOT / "binder"


def _repo2docker_dockerfile():
    pytest.importorskip("repo2docker", reason="jupyter-repo2docker is not installed (it is in the test extra)")
    # With a local path and --no-build, repo2docker only reads the tree: nothing is written.
    return subprocess.run(
        [sys.executable, "-m", "repo2docker", "--no-build", "--no-run", "--debug", str(ROOT)],
        capture_output=True, text=True, timeout=180, cwd=str(ROOT),
    )


@pytest.fixture(scope="module")
def dockerfile():
    proc = _repo2docker_dockerfile()
    assert proc.returncode == 0, f"repo2docker rejected binder/:\n{proc.stderr[-3000:]}"
    return proc.stdout, proc.stderr


def _requirements():
    return [ln.strip() for ln in (BINDER / "requirements.txt").read_text().splitlines()
            if ln.strip() and not ln.strip().startswith("#")]


def test_binder_files_present():
    assert (BINDER / "runtime.txt").read_text().strip() == "python-3.11"
    assert "graphviz" in (BINDER / "apt.txt").read_text().split()
    # environment.yml would take precedence over requirements.txt and silently change the build
    assert not (BINDER / "environment.yml").exists()
    mode = (BINDER / "postBuild").stat().st_mode
    assert mode & stat.S_IXUSR, "binder/postBuild must be executable"


def test_binder_installs_the_packages_own_extras():
    """No hand-copied list: microtorch with its `lab` extra, and torch's CPU build for notebook 13."""
    tomllib = pytest.importorskip("tomllib")
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert "microtorch[viz]" in extras["lab"] and "jupyterlab" in " ".join(extras["lab"])
    reqs = _requirements()
    assert reqs[-1] == "-e .[lab]", "requirements.txt must end by installing microtorch with its lab extra"
    packages = [r for r in reqs if not r.startswith("-")]
    assert packages == ["torch==2.13.0"], f"only torch may be listed by hand, got {packages}"
    # the version notebook 13 and the tests compare against, from PyTorch's CPU-only index
    assert "torch==2.13.0" in extras["test"]
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in reqs


def test_binder_build_has_npm_for_the_browser_graphviz():
    """`-e .` runs setup.py, which fetches the browser Graphviz with npm when the checkout lacks it:
    repo2docker's Python 3.11 environment brings nodejs (with npm) from conda-forge."""
    r2d = pytest.importorskip("repo2docker")
    lock = Path(r2d.__file__).parent / "buildpacks" / "conda" / "environment.py-3.11-linux-64.lock"
    assert "/nodejs-" in lock.read_text()


def test_repo2docker_accepts_binder(dockerfile):
    dockerfile, log = dockerfile
    assert "python=3.11" in log, f"runtime.txt's python-3.11 was not picked up:\n{log}"
    assert "graphviz" in dockerfile, "apt.txt's graphviz is not installed"
    assert 'pip install --no-cache-dir -r "binder/requirements.txt"' in dockerfile
    assert "./binder/postBuild" in dockerfile
    # the conda environment with nodejs (test above) is the one this build uses
    assert "environment-2epy-2d3-2e11-2dlinux-2d64-2elock" in dockerfile
    # `-e .` needs the whole repository: repo2docker must copy it before installing
    copy_at = dockerfile.index("COPY --chown=0:0 src/ ${REPO_DIR}/")
    assert copy_at < dockerfile.index('-r "binder/requirements.txt"')


@pytest.mark.skipif(shutil.which("bash") is None, reason="postBuild is a bash script")
def test_postbuild_writes_lab_overrides(tmp_path):
    env = dict(os.environ, NB_PYTHON_PREFIX=str(tmp_path))
    proc = subprocess.run([str(BINDER / "postBuild")], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    overrides = tmp_path / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    data = json.loads(overrides.read_text())
    notification = data["@jupyterlab/apputils-extension:notification"]
    assert notification["fetchNews"] == "false"
    assert notification["checkForUpdates"] is False
