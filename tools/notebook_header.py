"""The cells that open every notebook: badges that open it in Binder, Colab and JupyterLite, and
a cell that installs microtorch where it is not installed yet (Colab, JupyterLite's Pyodide) and
does nothing anywhere else (make lab, Binder, VS Code, a class server).

tools/build_notebooks.py calls `header_cells(stem, lang)` for every notebook it builds.
The links assume the repository `github.com/microtorch/microtorch` (branch main) and its
JupyterLite site on GitHub Pages (docs/deploy.md); change REPO and LITE if it lives elsewhere.
"""
from urllib.parse import quote

REPO = "microtorch/microtorch"
BRANCH = "main"
LITE = "https://microtorch.github.io/microtorch"
TAG = "microtorch-setup"

_BADGES = {
    "en": ("Open in Binder", "Open in Colab", "Run in the browser (JupyterLite)",
           "Binder and JupyterLite need nothing installed; in Colab the first code cell installs microtorch."),
    "zh": ("在 Binder 中打开", "在 Colab 中打开", "在浏览器中运行（JupyterLite）",
           "Binder 和 JupyterLite 无需安装；在 Colab 中，第一个代码单元会安装 microtorch。"),
}

_COMMENT = {
    "en": "# Colab and JupyterLite install microtorch here (about a minute); elsewhere this cell does nothing.",
    "zh": "# 在 Colab 和 JupyterLite 中，这里会安装 microtorch（约一分钟）；在其他环境中本单元什么也不做。",
}

_INSTALL = '''import sys
if "google.colab" in sys.modules or sys.platform == "emscripten":
    try:
        import microtorch
    except ImportError:
        if sys.platform == "emscripten":      # JupyterLite: Pyodide's own numpy and matplotlib
            import piplite
            await piplite.install("microtorch[viz]")
        else:
            %pip install --quiet "microtorch[viz]"
    if "google.colab" in sys.modules:
        from google.colab import output
        output.enable_custom_widget_manager()   # Colab's switch for ipywidgets 8 and anywidget'''


def notebook_path(stem, lang="en"):
    """The notebook's path in the repository."""
    return f"notebooks/{stem}.ipynb" if lang == "en" else f"notebooks/{lang}/{stem}.ipynb"


def links(stem, lang="en"):
    """{'binder': url, 'colab': url, 'lite': url} for one notebook."""
    path = notebook_path(stem, lang)
    return {
        "binder": f"https://mybinder.org/v2/gh/{REPO}/HEAD?labpath={quote(path, safe='')}",
        "colab": f"https://colab.research.google.com/github/{REPO}/blob/{BRANCH}/{path}",
        "lite": f"{LITE}/lab/index.html?path={quote(path.removeprefix('notebooks/'))}",
    }


def header_cells(stem: str, lang: str = "en") -> "list[tuple[str, str, list]]":
    """(cell_type, source, tags) cells to put first in notebooks/<stem>.ipynb (or notebooks/<lang>/)."""
    if lang not in _BADGES:
        raise ValueError(f"header_cells: no badges for language {lang!r}; known: {sorted(_BADGES)}")
    binder, colab, lite, note = _BADGES[lang]
    url = links(stem, lang)
    badges = (f"[![{binder}](https://mybinder.org/badge_logo.svg)]({url['binder']})\n"
              f"[![{colab}](https://colab.research.google.com/assets/colab-badge.svg)]({url['colab']})\n"
              f"[![{lite}](https://jupyterlite.rtfd.io/en/latest/_static/badge.svg)]({url['lite']})\n"
              f"<sub>{note}</sub>")
    return [("markdown", badges, [TAG]),
            ("code", _COMMENT[lang] + "\n" + _INSTALL, [TAG])]
