"""viz.set_options: settings every viz output reads when it is built.

    viz.set_options(scale=1.5)     # every text of every picture 1.5 times larger (projector)
    viz.set_options(lang="zh")     # labels, panels and hints in Chinese (falls back to English)

`scale` multiplies the font sizes of the DAG (the layout grows with them), of the widget and
panel text, of the timeline and of matplotlib figures. It applies to outputs built after
the call; the stepper also has its own text-size control.
"""

LANGS = ("en", "zh")
_OPTIONS = {"scale": 1.0, "lang": "en"}


def set_options(*, scale=None, lang=None):
    """Set viz-wide options; returns the previous values as a dict (pass it back to restore)."""
    old = dict(_OPTIONS)
    if scale is not None:
        if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not 0.5 <= scale <= 4:
            raise ValueError(f"viz.set_options: scale must be a number from 0.5 to 4 (1 is the default, "
                             f"1.5 suits a projector), got {scale!r}")
        _OPTIONS["scale"] = float(scale)
    if lang is not None:
        if lang not in LANGS:
            raise ValueError(f"viz.set_options: lang must be one of {', '.join(map(repr, LANGS))}, got {lang!r}")
        _OPTIONS["lang"] = lang
    return old


def get_options():
    """The current options, as a new dict."""
    return dict(_OPTIONS)


def scale():
    return _OPTIONS["scale"]


def lang():
    return _OPTIONS["lang"]
