"""microtorch/viz/_i18n_zh.py: the Chinese strings of the visualizer (viz.set_options(lang="zh"))."""
import re
import string

import pytest

from microtorch.viz._i18n_zh import ZH

CJK = re.compile(r"[\u4e00-\u9fff]")


def _fields(text):
    return sorted(f for _, f, _, _ in string.Formatter().parse(text) if f is not None)


# names that stay as they are in Chinese text
SAME = {"microtorch", "retain_grad", "..."}


def test_entries_are_chinese_strings():
    assert ZH, "the dictionary is empty"
    for en, zh in ZH.items():
        assert isinstance(en, str) and isinstance(zh, str) and zh.strip(), en
        if en in SAME:
            assert zh == en
            continue
        assert CJK.search(zh), f"{en!r} -> {zh!r} has no Chinese in it"


def test_placeholders_survive_the_translation():
    """tr(text).format(...) runs on the translation, so it needs the same {fields}."""
    for en, zh in ZH.items():
        assert _fields(zh) == _fields(en), f"{en!r}: placeholders {_fields(en)} vs {_fields(zh)}"


def test_every_tr_key_of_viz_has_a_chinese_entry():
    i18n = pytest.importorskip("microtorch.viz._i18n", reason="viz's tr() has not landed yet")
    keys = i18n.keys()
    assert len(keys) >= 10, f"tr() keys found: {keys}"
    missing = [k for k in keys if k not in ZH]
    assert not missing, f"viz strings without a Chinese entry in _i18n_zh.py: {missing}"


def test_matplotlib_families_draw_chinese_without_missing_glyphs():
    """With a Chinese font installed, the family list renders a Chinese title glyph by glyph."""
    import warnings

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from microtorch.viz._i18n_zh import matplotlib_families
    families = matplotlib_families()
    assert families[0] == "DejaVu Sans"
    if len(families) == 1:
        pytest.skip("no Chinese font installed (apt-get install fonts-wqy-microhei)")

    def missing_glyphs(family):
        with warnings.catch_warnings(record=True) as caught, plt.rc_context({"font.family": family}):
            warnings.simplefilter("always")
            fig, ax = plt.subplots()
            ax.set_title(ZH["numerical (finite differences)"] + " 2.5e-3")
            fig.canvas.draw()
            plt.close(fig)
        return [w for w in caught if "missing from font" in str(w.message)]

    assert missing_glyphs(["DejaVu Sans"]), "DejaVu Sans unexpectedly has Chinese glyphs"
    assert missing_glyphs(families) == []
