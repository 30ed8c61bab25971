#!/usr/bin/env python3
"""Build notebooks/*.ipynb from their plain-text sources in tools/notebook_src/.

Each source is a Python file in the "percent" format (the one jupytext and VS Code use):

    # %% [markdown]
    # # A title
    # Some prose, each line behind "# ".

    # %%
    x = 1 + 1

A `# %%` line starts a code cell, `# %% [markdown]` a markdown cell. Tags go after it:
`# %% tags=["raises-exception"]`. A header ending in ` pending` (`# %% pending`) keeps a cell
in the source but out of the notebook: for cells written against an API that has not landed yet.
IPython magics are written commented out (`# %%timeit`, `# %matplotlib inline`) and come out
as magics in the notebook.
Notebooks are written without outputs, with stable cell
ids, so a rebuild of an unchanged source gives a byte-identical file.

    .venv/bin/python tools/build_notebooks.py            # build every notebook
    .venv/bin/python tools/build_notebooks.py 04 07      # build the ones whose name starts so
    .venv/bin/python tools/build_notebooks.py --check    # exit 1 if a notebook is out of date

Edit the source, not the .ipynb: tests/test_notebooks_clean.py checks that they agree.
"""
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "tools" / "notebook_src"
OUT = ROOT / "notebooks"

_CELL = re.compile(r"^# %%(?P<md> \[markdown\])?(?:\s+tags=(?P<tags>\[.*\]))?(?P<pending>\s+pending)?\s*$")

_MAGIC = re.compile(r"^# (%{1,2}[A-Za-z]\w*.*)$")

KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
LANGUAGE_INFO = {"name": "python", "pygments_lexer": "ipython3"}


def parse(text):
    """Split a percent-format source into (cell_type, source, tags) triples."""
    cells, kind, tags, lines, pending = [], None, [], [], False

    def flush():
        if kind is None:
            return
        body = list(lines)
        while body and not body[-1].strip():
            body.pop()
        while body and not body[0].strip():
            body.pop(0)
        if pending:
            return
        if kind == "markdown":
            body = [re.sub(r"^# ?", "", ln) if ln.startswith("#") else ln for ln in body]
        else:   # IPython magics are commented out in the source, as jupytext does: "# %%both x"
            body = [_MAGIC.sub(r"\1", ln) for ln in body]
        cells.append((kind, "\n".join(body), tags))

    for line in text.splitlines():
        m = _CELL.match(line)
        if m:
            flush()
            kind = "markdown" if m.group("md") else "code"
            tags = json.loads(m.group("tags")) if m.group("tags") else []
            pending = bool(m.group("pending"))
            lines = []
        elif kind is not None:
            lines.append(line)
    flush()
    return cells


def build(src):
    """The notebook for one source, as the text nbformat would write (nbformat 4.5).

    Plain json rather than nbformat: importing nbformat costs seconds (its jsonschema
    formats), and the unit tests call this for every notebook.
    """
    cells = []
    for i, (kind, body, tags) in enumerate(parse(src.read_text())):
        cell = {"cell_type": kind, "id": f"c{i:03d}", "metadata": {"tags": tags} if tags else {},
                "source": body.splitlines(keepends=True)}
        if kind == "code":
            cell.update(execution_count=None, outputs=[])
        cells.append(cell)
    nb = {"cells": cells,
          "metadata": {"kernelspec": dict(KERNELSPEC), "language_info": dict(LANGUAGE_INFO)},
          "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(nb, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


def sources(prefixes=()):
    found = sorted(SRC.glob("*.py"))
    if prefixes:
        found = [p for p in found if any(p.stem.startswith(x) for x in prefixes)]
    return found


def main(argv):
    check = "--check" in argv
    prefixes = [a for a in argv if not a.startswith("-")]
    stale = []
    for src in sources(prefixes):
        target = OUT / (src.stem + ".ipynb")
        text = build(src)
        current = target.read_text() if target.exists() else None
        if current == text:
            continue
        if check:
            stale.append(target.name)
        else:
            target.write_text(text)
            print(f"wrote notebooks/{target.name}")
    if stale:
        print("out of date (run tools/build_notebooks.py): " + ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
