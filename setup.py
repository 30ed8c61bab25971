"""The two build steps pyproject.toml cannot say (everything else is in pyproject.toml).

1. The browser-side Graphviz (microtorch/viz/_vendor/graphviz.js, an npm package) is fetched by
   tools/fetch_graphviz_js.py when a git checkout lacks it; an sdist already carries it. Without
   npm that is an error, except with MICROTORCH_GRAPHVIZ_JS=optional (`make lab` sets it for its
   editable install: there `dot` or wasmtime lays graphs out, the browser engine is a fallback).
2. PyPI shows README.md without the repository around it: its relative links and images are made
   absolute (to github.com/microtorch/microtorch) for the package's long description.
"""
import os
import re
import runpy
from pathlib import Path

from setuptools import setup

ROOT = Path(__file__).resolve().parent
REPO = "https://github.com/microtorch/microtorch"
RAW = "https://raw.githubusercontent.com/microtorch/microtorch/main"


def ensure_graphviz_js():
    if not (ROOT / "microtorch" / "viz" / "_vendor" / "graphviz.js").exists():
        fetch = runpy.run_path(str(ROOT / "tools" / "fetch_graphviz_js.py"), run_name="setup")["fetch"]
        fetch(optional=os.environ.get("MICROTORCH_GRAPHVIZ_JS") == "optional")


def _absolute(target, image):
    if re.match(r"^[a-z][a-z0-9+.-]*:|^#", target, re.I):
        return target                      # already absolute (https:, mailto:) or an anchor
    if target.startswith("../"):
        raise ValueError(f"README.md links outside the repository: {target}")
    path = target.removeprefix("./")
    if image:
        return f"{RAW}/{path}"
    kind = "tree" if path.endswith("/") or "." not in path.rsplit("/", 1)[-1] else "blob"
    return f"{REPO}/{kind}/main/{path}"


def pypi_readme(text):
    """README.md with every relative link and image made absolute."""
    text = re.sub(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)",
                  lambda m: f"{m[1]}[{m[2]}]({_absolute(m[3], bool(m[1]))})", text)
    return re.sub(r'(<img[^>]*\bsrc=")([^"]+)"', lambda m: f'{m[1]}{_absolute(m[2], True)}"', text)


if __name__ == "__main__":
    ensure_graphviz_js()
    setup(long_description=pypi_readme((ROOT / "README.md").read_text(encoding="utf-8")),
          long_description_content_type="text/markdown")
