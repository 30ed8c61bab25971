#!/usr/bin/env python3
"""Strip outputs, execution counts and widget state from notebooks, in place.

    .venv/bin/python tools/strip_notebooks.py                 # every notebooks/*.ipynb
    .venv/bin/python tools/strip_notebooks.py path/a.ipynb    # only these
    .venv/bin/python tools/strip_notebooks.py --check         # list dirty notebooks, exit 1 if any

What goes: code-cell outputs and execution counts, notebook-level `widgets` metadata (the
widget state nbclient and JupyterLab save), and per-cell execution timings and scroll/collapse
state. What stays: sources, cell ids, tags, the kernelspec.
"""
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CELL_META_DROP = ("execution", "collapsed", "scrolled", "jupyter", "ExecuteTime", "widgets")
NB_META_DROP = ("widgets", "toc", "varInspector", "vscode")


# Notebooks are handled as plain json (the nbformat 4 layout), not through nbformat: importing
# nbformat costs seconds, and this module is also used by the tests.

def problems(nb):
    """What makes a notebook (a dict from json) dirty, as short strings (empty when clean)."""
    found = []
    for key in NB_META_DROP:
        if key in nb.get("metadata", {}):
            found.append(f"notebook metadata '{key}'")
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code":
            if cell.get("outputs"):
                found.append(f"cell {i}: outputs")
            if cell.get("execution_count") is not None:
                found.append(f"cell {i}: execution_count")
        for key in CELL_META_DROP:
            if key in cell.get("metadata", {}):
                found.append(f"cell {i}: metadata '{key}'")
        if cell.get("attachments"):
            found.append(f"cell {i}: attachments")
    return found


def strip(nb):
    for key in NB_META_DROP:
        nb.get("metadata", {}).pop(key, None)
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
        for key in CELL_META_DROP:
            cell.get("metadata", {}).pop(key, None)
        cell.pop("attachments", None)
    return nb


def read(path):
    return json.loads(Path(path).read_text(encoding="utf-8"))


def write(nb, path):
    # the layout nbformat itself writes: sorted keys, one-space indent, a final newline
    Path(path).write_text(json.dumps(nb, sort_keys=True, indent=1, ensure_ascii=False) + "\n",
                          encoding="utf-8")


def main(argv):
    check = "--check" in argv
    paths = [Path(a) for a in argv if not a.startswith("-")]
    if not paths:
        paths = sorted((ROOT / "notebooks").glob("*.ipynb"))
    dirty = []
    for path in paths:
        nb = read(path)
        found = problems(nb)
        if not found:
            continue
        dirty.append(path)
        if check:
            print(f"{path}: " + "; ".join(found[:5]) + (" ..." if len(found) > 5 else ""))
        else:
            write(strip(nb), path)
            print(f"stripped {path}")
    return 1 if (check and dirty) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
