#!/usr/bin/env python3
"""Fetch the browser-side Graphviz that microtorch.viz ships: `@hpcc-js/wasm-graphviz` from the npm
registry, with npm, into microtorch/viz/_vendor/ (with its licence).

The package's dist/index.js is already one ES module with Graphviz's WebAssembly inlined, so
"bundling" is copying that file: no bundler, no node_modules. It is not kept in git (800 kB of
third-party build output); the Makefile and setup.py run this script when the file is missing,
and the sdist and wheel carry it, so installing from them needs no npm.

    python3 tools/fetch_graphviz_js.py           # fetch if missing
    python3 tools/fetch_graphviz_js.py --force   # fetch again
    python3 tools/fetch_graphviz_js.py --optional   # without npm: a note instead of an error
"""
import hashlib
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

PACKAGE = "@hpcc-js/wasm-graphviz"
VERSION = "1.29.2"
ROOT = Path(__file__).resolve().parent.parent
VENDOR = ROOT / "microtorch" / "viz" / "_vendor"
TARGET = VENDOR / "graphviz.js"


def fetch(force=False, optional=False):
    """Write _vendor/graphviz.js, its LICENSE and a small provenance file; return the path.
    optional: without npm, say so and return None (graphs are then laid out by `dot` or wasmtime)."""
    if TARGET.exists() and not force:
        return TARGET
    npm = shutil.which("npm")
    if npm is None and optional:
        print(f"fetch_graphviz_js: npm not found, so {PACKAGE} (the browser-side Graphviz, a fallback "
              "when neither `dot` nor wasmtime is there) is left out; install Node.js and npm to add it")
        return None
    if npm is None:
        sys.exit(f"fetch_graphviz_js: npm is needed to fetch {PACKAGE}@{VERSION} (the browser-side "
                 "Graphviz of microtorch.viz): install Node.js and npm (apt-get install nodejs npm), "
                 "or install microtorch from a wheel or sdist, which carry it")
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run([npm, "pack", f"{PACKAGE}@{VERSION}", "--json", "--pack-destination", tmp],
                              capture_output=True, text=True, timeout=300, cwd=tmp)
        if proc.returncode != 0:
            sys.exit(f"fetch_graphviz_js: npm pack {PACKAGE}@{VERSION} failed:\n{proc.stderr[-2000:]}")
        info = json.loads(proc.stdout)[0]
        with tarfile.open(Path(tmp) / info["filename"]) as tar:
            js = tar.extractfile("package/dist/index.js").read()
            licence = tar.extractfile("package/LICENSE").read()
    VENDOR.mkdir(parents=True, exist_ok=True)
    (VENDOR / "LICENSE-hpcc-js-wasm-graphviz").write_bytes(licence)
    (VENDOR / "SOURCE.json").write_text(json.dumps(
        {"package": PACKAGE, "version": VERSION, "file": "dist/index.js", "npm_integrity": info.get("integrity"),
         "sha256": hashlib.sha256(js).hexdigest()}, indent=1) + "\n")
    TARGET.write_bytes(js)     # last: its presence means the folder is complete
    print(f"fetch_graphviz_js: {PACKAGE}@{VERSION} -> {TARGET.relative_to(ROOT)} ({len(js) // 1024} kB)")
    return TARGET


if __name__ == "__main__":
    fetch(force="--force" in sys.argv[1:], optional="--optional" in sys.argv[1:])
