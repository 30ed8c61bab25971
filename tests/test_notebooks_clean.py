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
    import nbformat
    assert strip.problems(nbformat.reads(path.read_text(), as_version=4)) == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_small_and_valid(path):
    import nbformat
    nbformat.validate(nbformat.reads(path.read_text(), as_version=4))
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
    import nbformat
    strip = _load_tool("strip_notebooks")
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("1 + 1")
    cell.outputs = [nbformat.v4.new_output("execute_result", {"text/plain": "2"}, execution_count=1)]
    cell.execution_count = 1
    cell.metadata["execution"] = {"iopub.status.busy": "2024"}
    nb.cells.append(cell)
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    path = tmp_path / "dirty.ipynb"
    nbformat.write(nb, path)
    assert strip.main([str(path), "--check"]) == 1
    assert strip.main([str(path)]) == 0
    clean = nbformat.read(path, as_version=4)
    assert strip.problems(clean) == []
    assert clean.cells[0].source == "1 + 1"
