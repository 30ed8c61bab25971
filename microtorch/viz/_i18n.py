"""tr(text): every user-visible viz string goes through here, so that a Chinese edition can
translate them (the dictionary `ZH` in `_i18n_zh.py`, keyed by the English text).

The English text is the key, so code stays readable. Strings with values in them are
formatted after translation: `tr("step {k} / {n}").format(k=1, n=5)`. A missing entry falls
back to English. `KEYS` collects every key used (filled when a module calls `tr` at import
or `keys()` scans the sources), so that translators can check coverage.
"""
import re

from . import _options


def tr(text):
    """`text` in the current language (viz.set_options(lang=...)), English if untranslated."""
    if _options.lang() == "zh":
        from ._i18n_zh import ZH
        return ZH.get(text, text)
    return text


_COMMENT_RE = re.compile(r'\btr\("((?:[^"\\]|\\.)*)"\)')


def keys():
    """Every string literal passed to tr(...) in microtorch.viz, sorted (for coverage checks);
    strings translated through a variable are listed in comments as `# tr("...")`."""
    import ast
    from pathlib import Path
    found = set()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        if path.name == "_i18n_zh.py":
            continue
        text = path.read_text(encoding="utf-8")
        for line in text.splitlines():
            if "#" in line:
                found.update(_COMMENT_RE.findall(line[line.index("#"):]))
        tree = ast.parse(text)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "tr" and node.args
                    and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                found.add(node.args[0].value)
    return sorted(found)
