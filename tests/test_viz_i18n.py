"""The hook for translations: every user-visible viz string goes through tr(); the list of
keys is what the Chinese edition must cover, and lang="zh" changes what the widgets say."""
import re

import pytest

import microtorch as mt
from microtorch import viz
from microtorch.viz import _i18n


@pytest.fixture
def zh():
    old = viz.set_options(lang="zh")
    yield
    viz.set_options(**old)


def test_keys_lists_every_tr_string():
    keys = _i18n.keys()
    print("\n".join(keys))         # pytest -s shows the list: what _i18n_zh.ZH should cover
    for expected in ("Next", "step {k} / {n}", "Chain rule: upstream × local = downstream", "numerical",
                     "grad", "tensor hook", "microtorch gradcheck", "click a node to see its tensor"):
        assert expected in keys, expected
    assert len(keys) > 80 and all(isinstance(k, str) and k for k in keys)


def test_translations_keep_placeholders():
    from microtorch.viz._i18n_zh import ZH
    for en, zh in ZH.items():
        assert sorted(re.findall(r"\{\w*\}", en)) == sorted(re.findall(r"\{\w*\}", zh)), en


def test_tr_falls_back_to_english_and_set_options_checks(zh):
    from microtorch.viz._i18n_zh import ZH
    assert _i18n.tr("a string nobody translated") == "a string nobody translated"
    if "Next" in ZH:
        assert _i18n.tr("Next") == ZH["Next"]
    with pytest.raises(ValueError, match="lang must be one of"):
        viz.set_options(lang="fr")
    with pytest.raises(ValueError, match="scale must be a number"):
        viz.set_options(scale=0)


def test_stepper_speaks_the_chosen_language(zh):
    from microtorch.viz._i18n_zh import ZH
    x = mt.tensor(2.0, requires_grad=True)
    with viz.record() as tape:
        (x * x).backward()
    s = viz.Stepper(tape)
    labels = s.data["labels"]
    assert labels["next"] == ZH.get("Next", "Next") and labels["counter"] == ZH.get("step {k} / {n}", "step {k} / {n}")
