"""The curriculum notebooks are stored clean: no outputs, no execution counts, no widget
state, and in step with their sources in tools/notebook_src/ (tools/build_notebooks.py)."""
import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _load_tool(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_stored_without_outputs(path):
    nb = json.loads(path.read_text())
    assert "widgets" not in nb.get("metadata", {}), f"{path.name} stores widget state"
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        assert cell.get("outputs") == [], (
            f"{path.name} cell {i} has outputs; run tools/strip_notebooks.py")
        assert cell.get("execution_count") is None, (
            f"{path.name} cell {i} has an execution count; run tools/strip_notebooks.py")
    strip = _load_tool("strip_notebooks")
    assert strip.problems(nb) == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_small_and_well_formed(path):
    # (full nbformat validation is left to nbmake, which reads every notebook anyway:
    # importing nbformat here would cost seconds)
    nb = json.loads(path.read_text())
    assert (nb["nbformat"], nb["nbformat_minor"]) >= (4, 5)
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    ids = [c["id"] for c in nb["cells"]]
    assert len(set(ids)) == len(ids), "cell ids must be unique"
    assert path.stat().st_size < 100_000, f"{path.name} is {path.stat().st_size} bytes"


def test_notebooks_match_their_sources():
    build = _load_tool("build_notebooks")
    srcs = {p.stem for p in build.sources()}
    nbs = {p.stem for p in NOTEBOOKS}
    assert nbs <= srcs, f"notebooks without a source in tools/notebook_src/: {sorted(nbs - srcs)}"
    stale = [s.name for s in build.sources()
             if not (ROOT / "notebooks" / f"{s.stem}.ipynb").exists()
             or (ROOT / "notebooks" / f"{s.stem}.ipynb").read_text() != build.build(s)]
    assert not stale, (f"notebooks out of step with tools/notebook_src/{stale}: edit the source "
                       "and run .venv/bin/python tools/build_notebooks.py")


def test_strip_tool_cleans_a_dirty_notebook(tmp_path):
    strip = _load_tool("strip_notebooks")
    cell = {"cell_type": "code", "id": "a1", "source": ["1 + 1"], "execution_count": 1,
            "metadata": {"execution": {"iopub.status.busy": "2024"}, "tags": ["keep"]},
            "outputs": [{"output_type": "execute_result", "execution_count": 1,
                         "data": {"text/plain": "2"}, "metadata": {}}]}
    nb = {"cells": [cell], "nbformat": 4, "nbformat_minor": 5,
          "metadata": {"widgets": {"application/vnd.jupyter.widget-state+json": {"state": {}}}}}
    path = tmp_path / "dirty.ipynb"
    path.write_text(json.dumps(nb))
    assert strip.main([str(path), "--check"]) == 1
    assert strip.main([str(path)]) == 0
    clean = json.loads(path.read_text())
    assert strip.problems(clean) == []
    assert clean["cells"][0]["source"] == ["1 + 1"]
    assert clean["cells"][0]["metadata"] == {"tags": ["keep"]}
    assert strip.main([str(path), "--check"]) == 0
