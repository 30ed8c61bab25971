"""The Chinese edition, notebooks/zh/: built from the English sources by tools/build_notebooks.py,
code cells identical to the English ones, every markdown cell translated (or visibly pending),
and the translation files keyed to the exact English text they translate."""
import importlib.util
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CJK = re.compile(r"[\u4e00-\u9fff]")


def _load_build():
    spec = importlib.util.spec_from_file_location("build_notebooks", ROOT / "tools" / "build_notebooks.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


build = _load_build()
STEMS = [s.stem for s in build.sources()]


def _cells(path):
    return json.loads(path.read_text())["cells"]


def _body(cells):
    """The cells built from the source, without the header cells (ids h00, h01...)."""
    return [c for c in cells if not c["id"].startswith("h")]


def test_every_english_notebook_has_a_chinese_one_and_no_other():
    zh = {p.stem for p in (ROOT / "notebooks" / "zh").glob("*.ipynb")}
    assert zh == set(STEMS)


@pytest.mark.parametrize("stem", STEMS)
def test_zh_notebook_is_built_from_the_sources(stem):
    src = build.SRC / f"{stem}.py"
    stored = (ROOT / "notebooks" / "zh" / f"{stem}.ipynb").read_text()
    assert stored == build.build_zh(src), (
        f"notebooks/zh/{stem}.ipynb is out of step: run tools/build_notebooks.py {stem}")


@pytest.mark.parametrize("stem", STEMS)
def test_code_cells_identical_to_the_english_ones(stem):
    en = _body(_cells(ROOT / "notebooks" / f"{stem}.ipynb"))
    zh = _body(_cells(ROOT / "notebooks" / "zh" / f"{stem}.ipynb"))
    assert [(c["id"], c["cell_type"], c["metadata"]) for c in zh] == \
           [(c["id"], c["cell_type"], c["metadata"]) for c in en]
    for a, b in zip(en, zh):
        if a["cell_type"] == "code":
            assert b["source"] == a["source"], f"{stem} cell {a['id']}: code differs from English"


@pytest.mark.parametrize("stem", STEMS)
def test_zh_notebook_switches_the_visualizer_to_chinese(stem):
    head = [c for c in _cells(ROOT / "notebooks" / "zh" / f"{stem}.ipynb") if c["id"].startswith("h")]
    assert 'viz.set_options(lang="zh")' in "".join(head[-1]["source"])
    assert head[-1]["cell_type"] == "code"


def _structure(md):
    """What a translation must keep: heading levels, display math, link targets, code fences."""
    return (re.findall(r"^(#+) ", md, re.M), re.findall(r"\$\$.*?\$\$", md, re.S),
            re.findall(r"\]\(([^)]*)\)", md), md.count("```"), md.count("<details>"))


@pytest.mark.parametrize("stem", STEMS)
def test_translations_keep_structure_and_are_chinese(stem):
    src = build.SRC / f"{stem}.py"
    en = [t for k, t, _ in build.parse(src.read_text()) if k == "markdown"]
    zh_cells, missing, pending, _ = build.translate(src)
    zh = [t for k, t, _ in zh_cells if k == "markdown"]
    untranslated = {i for i, _, _ in missing + pending}
    md_index = [i for i, (k, _, _) in enumerate(build.parse(src.read_text())) if k == "markdown"]
    chinese = 0
    for i, a, b in zip(md_index, en, zh):
        if i in untranslated:
            continue
        assert _structure(b) == _structure(a), f"{stem} cell {i}: translation changed its structure"
        chinese += bool(CJK.search(b))
    translated = len(en) - len(untranslated)
    # a few cells are the same in both languages (a heading like "## gradgradcheck")
    assert chinese >= 0.8 * translated, f"{stem}: only {chinese} of {translated} cells in Chinese"


def test_check_passes_on_the_repository(capsys):
    """--check: every notebook (en and zh) up to date, every markdown cell translated or pending."""
    assert build.main(["--check"]) == 0, capsys.readouterr().out


# ---- the key mechanism, on a throwaway source --------------------------------------------------

SOURCE = """# %% [markdown]
# # Title
# Some prose.

# %%
x = 1  # code stays

# %% [markdown]
# ## Second
"""


@pytest.fixture
def tree(tmp_path, monkeypatch):
    src_dir, out = tmp_path / "src", tmp_path / "notebooks"
    (src_dir / "zh").mkdir(parents=True)
    out.mkdir()
    monkeypatch.setattr(build, "SRC", src_dir)
    monkeypatch.setattr(build, "ZH_SRC", src_dir / "zh")
    monkeypatch.setattr(build, "OUT", out)
    monkeypatch.setattr(build, "ZH_OUT", out / "zh")
    monkeypatch.setattr(build, "HEADER", tmp_path / "no_header.py")
    (src_dir / "01_demo.py").write_text(SOURCE)
    return tmp_path


def _write_zh(tree, blocks):
    (tree / "src" / "zh" / "01_demo.md").write_text(
        "\n\n".join(f"<!-- {k} · note -->\n{t}" for k, t in blocks) + "\n")


def test_translation_replaces_markdown_by_key(tree):
    k1, k2 = build.key("# Title\nSome prose."), build.key("## Second")
    _write_zh(tree, [(k1, "# 标题\n一些文字。"), (k2, "## 第二")])
    assert build.main([]) == 0 and build.main(["--check"]) == 0
    cells = json.loads((tree / "notebooks" / "zh" / "01_demo.ipynb").read_text())["cells"]
    assert [("".join(c["source"]), c["id"]) for c in cells[1:]] == [
        ("# 标题\n一些文字。", "c000"), ("x = 1  # code stays", "c001"), ("## 第二", "c002")]


def test_changed_english_text_makes_check_fail_and_falls_back(tree, capsys):
    k1 = build.key("# Title\nSome prose.")
    _write_zh(tree, [(k1, "# 标题\n一些文字。"), (build.key("## Second"), "## 第二")])
    (tree / "src" / "01_demo.py").write_text(SOURCE.replace("## Second", "## Second, edited"))
    assert build.main([]) == 0            # a build still writes the notebook...
    zh = (tree / "notebooks" / "zh" / "01_demo.ipynb").read_text()
    assert build.ZH_UNTRANSLATED.split("*")[0].strip() in zh and "## Second, edited" in zh
    capsys.readouterr()
    assert build.main(["--check"]) == 1   # ...but --check names the cell
    out = capsys.readouterr().out
    assert "no translation for markdown cell 2" in out and build.key("## Second, edited") in out
    assert "stale" in out and build.key("## Second") in out


def test_pending_marks_let_check_pass_with_the_english_shown(tree, capsys):
    _write_zh(tree, [(build.key("# Title\nSome prose."), "# 标题")])
    assert build.main(["--zh-pending"]) == 0
    text = (tree / "src" / "zh" / "01_demo.md").read_text()
    assert f"<!-- pending {build.key('## Second')} · ## Second -->" in text
    assert build.main([]) == 0
    capsys.readouterr()
    assert build.main(["--check"]) == 0
    assert "pending (English shown) cell 2" in capsys.readouterr().out
    zh = json.loads((tree / "notebooks" / "zh" / "01_demo.ipynb").read_text())["cells"]
    assert "".join(zh[-1]["source"]) == build.ZH_UNTRANSLATED + "## Second"


def test_header_cells_come_first_and_leave_body_ids_alone(tree):
    (tree / "no_header.py").write_text(
        "def header_cells(stem, lang='en'):\n"
        "    return [('markdown', f'badge {stem} {lang}', []), ('code', '%pip install x', ['skip'])]\n")
    _write_zh(tree, [])
    en = json.loads(build.build(build.SRC / "01_demo.py"))["cells"]
    zh = json.loads(build.build_zh(build.SRC / "01_demo.py"))["cells"]
    assert [c["id"] for c in en] == ["h00", "h01", "c000", "c001", "c002"]
    assert "".join(en[0]["source"]) == "badge 01_demo en" and en[1]["metadata"] == {"tags": ["skip"]}
    assert [c["id"] for c in zh] == ["h00", "h01", "h02", "c000", "c001", "c002"]
    assert "".join(zh[0]["source"]) == "badge 01_demo zh"
    assert "set_options" in "".join(zh[2]["source"])



def test_readme_chinese_section_lists_every_zh_notebook():
    readme = (ROOT / "README.md").read_text()
    assert "## 简体中文" in readme
    section = readme.split("## 简体中文", 1)[1].split("\n## ", 1)[0]
    linked = re.findall(r"\]\(notebooks/zh/([^)]+)\.ipynb\)", section)
    assert linked == STEMS
    assert "make lab" in section and "make test" in section


def test_prune_drops_only_translations_of_old_text(tree):
    k1, old = build.key("# Title\nSome prose."), build.key("## Old heading")
    _write_zh(tree, [(k1, "# 标题"), (old, "## 旧标题"), (build.key("## Second"), "## 第二")])
    assert build.translate(build.SRC / "01_demo.py")[3] == [old]
    assert build.main(["--zh-prune"]) == 0
    done, pending = build.read_translations(tree / "src" / "zh" / "01_demo.md")
    assert set(done) == {k1, build.key("## Second")} and not pending
