"""tools/notebook_header.py: every notebook opens with Binder / Colab / JupyterLite badges for
itself and a first code cell that installs microtorch in Colab and in Pyodide, and does nothing
anywhere else. The install cell is run by IPython here, as it is, in three simulated places."""
import importlib.util
import json
import sys
import types
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlparse

import pytest

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("notebook_header", ROOT / "tools" / "notebook_header.py")
header = importlib.util.module_from_spec(spec)
spec.loader.exec_module(header)


def _notebooks():
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        yield path, "en"
    for path in sorted((ROOT / "notebooks" / "zh").glob("*.ipynb")):
        yield path, "zh"


@pytest.mark.parametrize("path,lang", list(_notebooks()), ids=lambda v: str(v)[-40:] if isinstance(v, Path) else v)
def test_every_notebook_opens_with_the_header(path, lang):
    cells = json.loads(path.read_text())["cells"]
    want = header.header_cells(path.stem, lang)
    for cell, (kind, source, tags) in zip(cells, want):
        assert cell["cell_type"] == kind and "".join(cell["source"]) == source
        assert cell["metadata"].get("tags") == tags
    badges = want[0][1]
    rel = path.relative_to(ROOT).as_posix()
    binder = next(u for u in _urls(badges) if "mybinder.org/v2" in u)
    assert parse_qs(urlparse(binder).query)["labpath"] == [rel]
    assert binder.startswith("https://mybinder.org/v2/gh/microtorch/microtorch/HEAD?")
    assert f"https://colab.research.google.com/github/microtorch/microtorch/blob/main/{rel}" in _urls(badges)
    lite = next(u for u in _urls(badges) if "/lab/index.html" in u)
    assert unquote(parse_qs(urlparse(lite).query)["path"][0]) == rel.removeprefix("notebooks/")


def _urls(markdown):
    import re
    return re.findall(r"\]\((https://[^)\s]+)\)", markdown)


def test_unknown_language_is_refused():
    with pytest.raises(ValueError, match="no badges for language 'fr'"):
        header.header_cells("01_welcome", "fr")


@pytest.fixture
def shell():
    from IPython.core.interactiveshell import InteractiveShell
    sh = InteractiveShell.instance()
    yield sh
    InteractiveShell.clear_instance()


def _run_install_cell(shell, monkeypatch, calls):
    monkeypatch.setitem(sys.modules, "microtorch", None)        # "not installed": import raises
    shell.register_magic_function(lambda line: calls.append(("pip", line)), "line", "pip")
    source = header.header_cells("01_welcome")[1][1]
    result = shell.run_cell(source)
    if result.error_in_exec or result.error_before_exec:
        raise result.error_in_exec or result.error_before_exec


def test_install_cell_does_nothing_on_a_plain_kernel(shell, monkeypatch):
    calls = []
    monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    _run_install_cell(shell, monkeypatch, calls)
    assert calls == []


def test_install_cell_pip_installs_viz_in_colab(shell, monkeypatch):
    calls = []
    colab = types.ModuleType("google.colab")
    colab.output = types.SimpleNamespace(enable_custom_widget_manager=lambda: calls.append(("widgets",)))
    monkeypatch.setitem(sys.modules, "google", types.ModuleType("google"))
    monkeypatch.setitem(sys.modules, "google.colab", colab)
    _run_install_cell(shell, monkeypatch, calls)
    assert calls == [("pip", 'install --quiet "microtorch[viz]"'), ("widgets",)]


def test_install_cell_uses_piplite_in_pyodide(shell, monkeypatch):
    calls = []

    async def install(spec):
        calls.append(("piplite", spec))

    monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    monkeypatch.setitem(sys.modules, "piplite", types.SimpleNamespace(install=install))
    monkeypatch.setattr(sys, "platform", "emscripten")
    _run_install_cell(shell, monkeypatch, calls)
    assert calls == [("piplite", "microtorch[viz]")]
