#!/usr/bin/env python3
"""Build the JupyterLite site: the notebooks, JupyterLab with the widget extensions, the Pyodide
kernel, and microtorch's wheel with the pure-Python wheels it needs that Pyodide does not ship.

    python tools/lite_build.py [--output-dir _output] [-- --pyodide URL]   (what `make lite` runs)

Which packages Pyodide ships comes from its own `pyodide-lock.json` (in the `pyodide` npm package
of the version the kernel is built for); those (numpy, matplotlib, ipython, ...) are loaded from
Pyodide's distribution at run time and not copied here. Every other requirement of
`microtorch[viz]`, its markers evaluated for Pyodide, must exist as a pure-Python wheel on PyPI:
it is downloaded and served by the site's piplite index, so `%pip install microtorch[viz]` in
the browser finds it. The federated extensions (ipywidgets' manager, anywidget, the Pyodide
kernel) are the ones installed in the environment that runs the build.
"""
import argparse
import email.parser
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "build" / "lite"


def pyodide_info():
    """(pyodide version, its Python 'major.minor') the installed Pyodide kernel is built for."""
    from jupyterlite_pyodide_kernel import constants as c
    return c.PYODIDE_VERSION, c.PYODIDE_PYTHON_VERSION


def pyodide_packages(version):
    """{name: [version]} of the packages in Pyodide's distribution, from the `pyodide` npm package's lock."""
    lock = WORK / f"pyodide-lock-{version}.json"
    if not lock.exists():
        with tempfile.TemporaryDirectory() as tmp:
            proc = subprocess.run(["npm", "pack", f"pyodide@{version}", "--json", "--pack-destination", tmp],
                                  capture_output=True, text=True, timeout=600, cwd=tmp)
            if proc.returncode != 0:
                sys.exit(f"lite_build: npm pack pyodide@{version} failed:\n{proc.stderr[-2000:]}")
            with tarfile.open(Path(tmp) / json.loads(proc.stdout)[0]["filename"]) as tar:
                lock.write_bytes(tar.extractfile("package/pyodide-lock.json").read())
    return {canonicalize_name(n): [p["version"]] for n, p in json.loads(lock.read_text())["packages"].items()}


def kernel_packages():
    """{name: [versions]} of the wheels the Pyodide kernel brings itself (ipykernel and
    widgetsnbextension shims...)."""
    import jupyterlite_pyodide_kernel  # noqa: F401   (the labextension lives in the environment)
    index = Path(sys.prefix) / "share/jupyter/labextensions/@jupyterlite/pyodide-kernel-extension/static/pypi/all.json"
    return {canonicalize_name(n): list(p["releases"]) for n, p in json.loads(index.read_text()).items()}


def pyodide_env(python):
    """The environment markers are evaluated in, inside Pyodide."""
    return dict(default_environment(), sys_platform="emscripten", platform_system="Emscripten",
                platform_machine="wasm32", python_version=python, python_full_version=f"{python}.0",
                implementation_name="cpython", platform_python_implementation="CPython")


def check_installable(wheels, python, available):
    """Every requirement of the bundled wheels (Pyodide's markers; microtorch with [viz]) is met by
    a bundled wheel, Pyodide's distribution or the kernel's own wheels, at a matching version:
    what piplite will find when a notebook installs microtorch[viz]. Returns the problems."""
    have = {n: list(v) for n, v in available.items()}
    for w in wheels:
        have.setdefault(_dist_name(w), []).append(w.name.split("-")[1])
    problems = []
    for w in wheels:
        extras = ("viz",) if _dist_name(w) == "microtorch" else ()
        for req in _requires(w, pyodide_env(python), extras):
            versions = have.get(canonicalize_name(req.name), [])
            if not any(req.specifier.contains(v, prereleases=True) for v in versions):
                problems.append(f"{w.name} needs {req}, and the site offers {versions or 'nothing'}")
    return problems


def build_wheel():
    out = WORK / "wheel"
    shutil.rmtree(out, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(ROOT)],
                   check=True, stdout=subprocess.DEVNULL, timeout=900)
    wheel, = out.glob("microtorch-*.whl")
    return wheel


def _dist_name(wheel):
    return canonicalize_name(wheel.name.split("-")[0])


def _requires(wheel, env, extras=()):
    meta = zipfile.ZipFile(wheel).read(next(n for n in zipfile.ZipFile(wheel).namelist()
                                            if n.endswith(".dist-info/METADATA"))).decode()
    reqs = []
    for line in email.parser.Parser().parsestr(meta).get_all("Requires-Dist") or []:
        req = Requirement(line)
        if req.marker is None or any(req.marker.evaluate(dict(env, extra=e)) for e in (extras or ("",))):
            reqs.append(req)
    return reqs


def _spec(req):
    """The requirement without its marker (already evaluated for Pyodide here)."""
    extras = f"[{','.join(sorted(req.extras))}]" if req.extras else ""
    return f"{req.name}{extras}{req.specifier}"


def pure_wheels(wheel, python, provided):
    """Download the pure-Python wheels `microtorch[viz]` needs in Pyodide (recursively)."""
    env = pyodide_env(python)
    dest = WORK / "wheels"
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    todo, seen = [r for r in _requires(wheel, env, ("viz",)) if r.name != "microtorch"], set()
    while todo:
        batch = [r for r in todo if canonicalize_name(r.name) not in seen | provided]
        seen |= {canonicalize_name(r.name) for r in batch}
        todo = []
        if not batch:
            break
        before = set(dest.glob("*.whl"))
        proc = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                               "--platform", "any", "--implementation", "py", "--abi", "none",
                               "--python-version", python, "-d", str(dest)] + [_spec(r) for r in batch],
                              capture_output=True, text=True, timeout=900)
        if proc.returncode != 0:
            sys.exit("lite_build: these requirements have no pure-Python wheel and Pyodide does not ship "
                     f"them, so they cannot install in JupyterLite: {[str(r) for r in batch]}\n{proc.stderr[-2000:]}")
        for new in set(dest.glob("*.whl")) - before:
            extras = [e for r in batch for e in r.extras if canonicalize_name(r.name) == _dist_name(new)]
            todo += _requires(new, env, tuple(extras))
    return sorted(dest.glob("*.whl"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--output-dir", default=str(ROOT / "_output"))
    ap.add_argument("lite_args", nargs=argparse.REMAINDER,
                    help="after --: more options for `jupyter lite build`, e.g. --pyodide URL")
    args = ap.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    version, python = pyodide_info()
    available = {**pyodide_packages(version), **kernel_packages()}
    wheel = build_wheel()
    deps = pure_wheels(wheel, python, set(available))
    problems = check_installable([wheel, *deps], python, available)
    if problems:
        sys.exit("lite_build: microtorch[viz] would not install in Pyodide:\n  " + "\n  ".join(problems))
    print(f"lite_build: Pyodide {version} (Python {python}); bundling {wheel.name} and "
          f"{', '.join(w.name for w in deps)}")
    # lite/ holds the site's settings; the build runs on a fresh copy so that JupyterLite's caches
    # and task database stay out of the source tree and nothing stale is reused
    lite_dir = WORK / "lite-dir"
    shutil.rmtree(lite_dir, ignore_errors=True)
    shutil.copytree(ROOT / "lite", lite_dir)
    out = Path(args.output_dir).resolve()
    cmd = [sys.executable, "-m", "jupyterlite_core", "build", "--lite-dir", str(lite_dir),
           "--contents", str(ROOT / "notebooks"), "--output-dir", str(out)]
    for w in [wheel, *deps]:
        cmd += ["--piplite-wheels", str(w)]
    cmd += [a for a in args.lite_args if a != "--"]
    subprocess.run(cmd, check=True, cwd=str(lite_dir), timeout=1800)
    print(f"lite_build: the site is in {out}; serve it with "
          f"`python -m http.server -d {out}` and open /lab/index.html")


if __name__ == "__main__":
    main()
