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

The Chinese edition, notebooks/zh/<stem>.ipynb, is built from the same source: its code cells
are the English ones verbatim, and each markdown cell is replaced by its translation from
tools/notebook_src/zh/<stem>.md. There a translation is a block under a marker line that
carries the short hash of the English cell it translates (the words after the hash are only
a reminder for the translator):

    <!-- 3f2a9c1e · # Welcome to microtorch -->
    # 欢迎使用 microtorch

When the English cell changes, its hash changes, the translation no longer matches and
`--check` fails, naming the cell. A marker written `<!-- pending 3f2a9c1e · ... -->` records a
translation still to do: the notebook then shows the English cell under a visible note, and
`--check` lists it without failing.

    .venv/bin/python tools/build_notebooks.py --zh-missing   # print the cells without a translation
    .venv/bin/python tools/build_notebooks.py --zh-pending   # mark them pending (English shown)
    .venv/bin/python tools/build_notebooks.py --zh-prune     # drop translations of old English text

When tools/notebook_header.py exists, the cells its header_cells(stem, lang) returns (badges,
an install cell) open every notebook; a Chinese notebook then also switches the visualizer
to Chinese.
"""
import hashlib
import importlib.util
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "tools" / "notebook_src"
OUT = ROOT / "notebooks"
ZH_SRC = SRC / "zh"
ZH_OUT = OUT / "zh"
HEADER = ROOT / "tools" / "notebook_header.py"

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


def _header_cells(stem, lang):
    """The cells tools/notebook_header.py puts first (badges, install cell); none without it."""
    if not HEADER.exists():
        return []
    spec = importlib.util.spec_from_file_location("notebook_header", HEADER)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return list(mod.header_cells(stem, lang))


def _notebook(header, body):
    """Notebook text: header cells get ids h00, h01...; body cells keep c000... whatever the header."""
    cells = []
    for ids, triples in (("h{:02d}", header), ("c{:03d}", body)):
        for i, (kind, text, tags) in enumerate(triples):
            cell = {"cell_type": kind, "id": ids.format(i), "metadata": {"tags": tags} if tags else {},
                    "source": text.splitlines(keepends=True)}
            if kind == "code":
                cell.update(execution_count=None, outputs=[])
            cells.append(cell)
    nb = {"cells": cells,
          "metadata": {"kernelspec": dict(KERNELSPEC), "language_info": dict(LANGUAGE_INFO)},
          "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(nb, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


def build(src):
    """The notebook for one source, as the text nbformat would write (nbformat 4.5).

    Plain json rather than nbformat: importing nbformat costs seconds (its jsonschema
    formats), and the unit tests call this for every notebook.
    """
    return _notebook(_header_cells(src.stem, "en"), parse(src.read_text()))


# ---- the Chinese edition -------------------------------------------------------------------

ZH_VIZ_CELL = ("code", '# 让可视化工具（viz）用中文显示标签和说明\n'
               'from microtorch import viz\n'
               'viz.set_options(lang="zh")', [])

ZH_UNTRANSLATED = ("> **【尚未翻译】** 本单元还没有中文译文，下面暂时显示英文原文。"
                   "*(not yet translated: the English text follows)*\n\n")

_ZH_MARK = re.compile(r"^<!-- (?P<pending>pending )?(?P<key>[0-9a-f]{8})\b.*-->\s*$")


def key(markdown):
    """The short hash that ties a translation to the exact English cell it translates."""
    return hashlib.sha1(markdown.encode("utf-8")).hexdigest()[:8]


def zh_source(src):
    return ZH_SRC / (src.stem + ".md")


def read_translations(path):
    """{key: translated markdown}, and the set of keys marked pending, from one zh/<stem>.md."""
    found, pending, current, lines = {}, set(), None, []

    def flush():
        if current is not None:
            found[current] = "\n".join(lines).strip("\n")

    if path.exists():
        for line in path.read_text().splitlines():
            m = _ZH_MARK.match(line)
            if m:
                flush()
                current, lines = m.group("key"), []
                if m.group("pending"):
                    pending.add(current)
            elif current is not None:
                lines.append(line)
        flush()
    return {k: v for k, v in found.items() if k not in pending}, pending


def translate(src):
    """(zh cells, missing, pending, unused) for one source.

    missing and pending are lists of (cell index, key, English text); an untranslated cell
    shows the English text under a visible note. unused lists the keys of zh/<stem>.md that
    no longer match any English cell (usually the old text of a cell that changed).
    """
    done, pending_keys = read_translations(zh_source(src))
    cells, missing, pending, used = [], [], [], set()
    for i, (kind, text, tags) in enumerate(parse(src.read_text())):
        if kind != "markdown":
            cells.append((kind, text, tags))
            continue
        k = key(text)
        used.add(k)
        if k in done:
            cells.append((kind, done[k], tags))
            continue
        (pending if k in pending_keys else missing).append((i, k, text))
        cells.append((kind, ZH_UNTRANSLATED + text, tags))
    unused = sorted((set(done) | pending_keys) - used)
    return cells, missing, pending, unused


def build_zh(src):
    """The Chinese notebook for one source: header cells, the viz language cell, the body."""
    cells, _, _, _ = translate(src)
    return _notebook(_header_cells(src.stem, "zh") + [ZH_VIZ_CELL], cells)


def _first_line(text):
    line = next((ln for ln in text.splitlines() if ln.strip()), "")
    return line[:60].replace("-->", "")


def zh_prune(srcs):
    """Remove from zh/<stem>.md the blocks whose key matches no English cell any more."""
    for src in srcs:
        path = zh_source(src)
        _, _, _, unused = translate(src)
        if not unused:
            continue
        kept, drop = [], False
        for line in path.read_text().splitlines():
            m = _ZH_MARK.match(line)
            if m:
                drop = m.group("key") in unused
            if not drop:
                kept.append(line)
        path.write_text("\n".join(kept).rstrip("\n") + "\n")
        print(f"tools/notebook_src/zh/{src.stem}.md: dropped {', '.join(unused)}")


def zh_report(srcs, mark_pending=False, show_text=False, show_unused=True):
    """Print the untranslated cells; with mark_pending, record them as pending in zh/<stem>.md.

    Returns the number of missing (not pending) translations.
    """
    total = 0
    for src in srcs:
        _, missing, pending, unused = translate(src)
        rel = f"tools/notebook_src/zh/{src.stem}.md"
        for i, k, text in missing:
            print(f"{rel}: no translation for markdown cell {i} [{k}] {_first_line(text)!r}")
            if show_text:
                print(f"<!-- {k} · {_first_line(text)} -->\n{text}\n")
        for i, k, text in pending:
            print(f"{rel}: pending (English shown) cell {i} [{k}] {_first_line(text)!r}")
        if unused and show_unused:
            print(f"{rel}: translations matching no English cell (stale?): {', '.join(unused)}")
        if mark_pending and missing:
            path = zh_source(src)
            path.parent.mkdir(parents=True, exist_ok=True)
            old = path.read_text().rstrip("\n") + "\n\n" if path.exists() else ""
            blocks = "\n\n".join(f"<!-- pending {k} · {_first_line(t)} -->" for _, k, t in missing)
            path.write_text(old + blocks + "\n")
            print(f"marked {len(missing)} cell(s) pending in {rel}")
        else:
            total += len(missing)
    return total


def sources(prefixes=()):
    found = sorted(SRC.glob("*.py"))
    if prefixes:
        found = [p for p in found if any(p.stem.startswith(x) for x in prefixes)]
    return found


def main(argv):
    check = "--check" in argv
    prefixes = [a for a in argv if not a.startswith("-")]
    srcs = sources(prefixes)
    if "--zh-prune" in argv:
        zh_prune(srcs)
        return 0
    if "--zh-missing" in argv or "--zh-pending" in argv:
        zh_report(srcs, mark_pending="--zh-pending" in argv, show_text="--zh-missing" in argv)
        return 0
    stale = []
    for src in srcs:
        for target, text in ((OUT / (src.stem + ".ipynb"), build(src)),
                             (ZH_OUT / (src.stem + ".ipynb"), build_zh(src))):
            current = target.read_text() if target.exists() else None
            if current == text:
                continue
            name = target.relative_to(OUT).as_posix()
            if check:
                stale.append(name)
            else:
                target.parent.mkdir(exist_ok=True)
                target.write_text(text)
                print(f"wrote notebooks/{name}")
    missing = zh_report(srcs, show_unused=check)
    if stale:
        print("out of date (run tools/build_notebooks.py): " + ", ".join(stale))
    if missing and check:
        print(f"{missing} markdown cell(s) without a Chinese translation: translate them in "
              "tools/notebook_src/zh/ (or mark them: tools/build_notebooks.py --zh-pending)")
    return 1 if stale or (check and missing) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
