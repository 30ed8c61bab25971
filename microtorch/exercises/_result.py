"""What a check returns: a verdict that renders itself (green pass, red fail with the reason).

A `Result` is true when the answer passed. In Jupyter it shows as a coloured box with the
reason and, on a wrong answer, the visualizer's explanation (heatmaps of the wrong Jacobian
entries, blame on the first wrong node, the chain-rule step where the numbers part). Outside
a notebook, or when the visualizer's dependencies are missing, it prints as plain text.
The pictures are built only when the result is displayed.
"""
import html


def _esc(text):
    return html.escape(str(text), quote=True)


def _scale():
    """viz's presentation scale (viz.set_options(scale=1.5)), 1 when viz is not loaded."""
    import sys
    options = sys.modules.get("microtorch.viz._options")
    return options.scale() if options is not None else 1.0


_CSS = """
.mt-ex { border-left: 6px solid var(--mt-ex-c); padding: 8px 12px; margin: 4px 0;
  background: color-mix(in srgb, var(--mt-ex-c) 10%, transparent); font-size: calc(14px * var(--mt-ex-scale, 1));
  line-height: 1.45;
  color: var(--jp-ui-font-color1, inherit); font-family: var(--jp-ui-font-family, system-ui, sans-serif); }
.mt-ex.mt-ex-pass { --mt-ex-c: #1a7f37; }
.mt-ex.mt-ex-fail { --mt-ex-c: #cf222e; }
.mt-ex.mt-ex-hint { --mt-ex-c: #9a6700; }
body[data-jp-theme-light="false"] .mt-ex.mt-ex-pass { --mt-ex-c: #3fb950; }
body[data-jp-theme-light="false"] .mt-ex.mt-ex-fail { --mt-ex-c: #f85149; }
body[data-jp-theme-light="false"] .mt-ex.mt-ex-hint { --mt-ex-c: #d29922; }
.mt-ex .mt-ex-badge { display: inline-block; padding: 1px 8px; border-radius: 10px; color: #fff;
  background: var(--mt-ex-c); font-weight: 600; margin-right: 6px; }
body[data-jp-theme-light="false"] .mt-ex .mt-ex-badge { color: #0d1117; }
.mt-ex .mt-ex-why { margin-top: 6px; white-space: pre-wrap; }
.mt-ex .mt-ex-more { margin-top: 8px; }
"""


class Result:
    """The verdict of one check. `passed` (bool; also the truth value), `name`, `reason`
    (why it failed, or a note when it passed), `hint` (None unless asked for), and
    `visuals()`: the viz objects that explain a failure (built on demand)."""

    def __init__(self, name, passed, reason="", *, hint=None, visuals=()):
        self.name = name
        self.passed = bool(passed)
        self.reason = reason
        self.hint = hint
        self._makers = list(visuals)
        self._built = None

    def __bool__(self):
        return self.passed

    def visuals(self):
        """The pictures that explain a wrong answer (viz objects), built once."""
        if self._built is None:
            self._built = []
            for make in self._makers:
                try:
                    self._built.append(make())
                except Exception as e:       # a picture must never hide the verdict
                    self._built.append(_Note(f"(the picture could not be drawn: {type(e).__name__}: {e})"))
        return self._built

    def __repr__(self):
        head = f"[PASS] {self.name}" if self.passed else f"[NOT YET] {self.name}"
        lines = [head]
        if self.reason:
            lines += ["  " + ln for ln in str(self.reason).splitlines()]
        if self.hint:
            lines += ["  hint: " + ln for ln in str(self.hint).splitlines()]
        if not self.passed and self._makers:
            lines.append("  (display this result in a notebook to see the picture)")
        return "\n".join(lines)

    def _repr_html_(self):
        kind = "pass" if self.passed else "fail"
        badge = "passed" if self.passed else "not yet"
        parts = [f"<div class='mt-ex mt-ex-{kind}' style='--mt-ex-scale: {_scale():g}'><style>{_CSS}</style>",
                 f"<span class='mt-ex-badge'>{badge}</span><b>{_esc(self.name)}</b>"]
        if self.reason:
            parts.append(f"<div class='mt-ex-why'>{_esc(self.reason)}</div>")
        if self.hint:
            parts.append(f"<div class='mt-ex-why'><b>Hint:</b> {_esc(self.hint)}</div>")
        for v in (self.visuals() if not self.passed else ()):
            html_of = getattr(v, "_repr_html_", None)
            if html_of is not None:
                parts.append(f"<div class='mt-ex-more'>{html_of()}</div>")
        parts.append("</div>")
        return "".join(parts)

    def _repr_mimebundle_(self, include=None, exclude=None, **_):
        try:
            body = self._repr_html_()
        except Exception:                    # no viz dependencies: the text still says why
            body = f"<pre>{_esc(repr(self))}</pre>"
        return {"text/html": body, "text/plain": repr(self)}


class Hint:
    """A hint, shown on request (check.hint("name"))."""

    def __init__(self, name, text):
        self.name, self.text = name, text

    def __repr__(self):
        return f"hint for {self.name}: {self.text}"

    def __str__(self):
        return self.text

    def _repr_html_(self):
        return (f"<div class='mt-ex mt-ex-hint'><style>{_CSS}</style><span class='mt-ex-badge'>hint</span>"
                f"<b>{_esc(self.name)}</b><div class='mt-ex-why'>{_esc(self.text)}</div></div>")


class _Note:
    """A line of text among the pictures."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text

    def _repr_html_(self):
        return f"<div>{_esc(self.text)}</div>"


class Html:
    """A ready piece of HTML among the pictures (e.g. the chain-rule step)."""

    def __init__(self, html_text, text):
        self.html_text, self.text = html_text, text

    def __repr__(self):
        return self.text

    def _repr_html_(self):
        return self.html_text
