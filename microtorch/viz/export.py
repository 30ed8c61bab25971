"""Static export: pictures and the stepper as files that need no kernel.

`stepper.save("backward.html")` writes one self-contained page (no network: the SVG, the
steps, the script and the stylesheet are inline) that replays the step-through in any
browser, for slides, LMS pages and nbviewer. DAGs save as standalone SVG (themed for light
and dark) or PNG/PDF (with the `dot` program, else drawn from the SVG by cairosvg); heatmaps as PNG or SVG; any viz object with
HTML output as an HTML page. `viz.save(obj, path)` picks the right one.
"""
import json
import os

from ._theme import CSS, scale_style

_PAGE = """<!DOCTYPE html>
<html lang="{lang}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
html, body {{ margin: 0; }}
body {{ background: var(--mt-page-bg, #ffffff); padding: 16px 20px; }}
[data-mt-theme="dark"] body {{ --mt-page-bg: #0d1117; }}
@media (prefers-color-scheme: dark) {{ :root:not([data-mt-theme="light"]) body {{ --mt-page-bg: #0d1117; }} }}
.mt-pagehead {{ display: flex; align-items: baseline; gap: 12px; margin: 0 0 10px; }}
.mt-pagehead h1 {{ font-size: calc(18px * var(--mt-scale)); margin: 0; font-weight: 600; }}
.mt-pagehead .mt-themebtn {{ margin-left: auto; font: inherit; font-size: calc(13px * var(--mt-scale)); padding: 2px 10px; cursor: pointer;
  border: 1px solid var(--mt-border); background: var(--mt-bg2); color: var(--mt-fg); border-radius: 4px; }}
{css}
</style></head>
<body>
<div class="mtviz mt-page"{scale}>
<div class="mt-pagehead"><h1>{title}</h1><span class="mt-muted">{subtitle}</span>
<button class="mt-themebtn" type="button" title="{theme_tip}">{theme}</button></div>
<div id="mt-root">{body}</div>
</div>
<script>
(function () {{
  var root = document.documentElement, btn = document.querySelector(".mt-themebtn");
  var dark = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
  var param = (location.search.match(/[?&]theme=(light|dark)/) || [])[1];
  root.setAttribute("data-mt-theme", param || (dark ? "dark" : "light"));
  btn.addEventListener("click", function () {{
    root.setAttribute("data-mt-theme", root.getAttribute("data-mt-theme") === "dark" ? "light" : "dark");
  }});
}})();
</script>
{scripts}
</body></html>
"""


def _esc(s):
    import html
    return html.escape(str(s), quote=True)


# page titles, translated in page(): tr("microtorch"), tr("microtorch backward, step by step"),
# tr("microtorch graph"), tr("microtorch hook timeline"), tr("microtorch gradcheck"),
# tr("microtorch eps sweep"), tr("microtorch blame"), tr("microtorch model explorer")
def page(body, title="microtorch", subtitle="", css="", scripts=""):
    """A standalone HTML page around some viz HTML, light/dark aware."""
    from ._i18n import tr
    from ._options import lang
    return _PAGE.format(title=_esc(tr(title)), subtitle=_esc(subtitle), css=CSS + css, body=body, scripts=scripts,
                        theme=_esc(tr("light / dark")), theme_tip=_esc(tr("Switch between light and dark")),
                        lang="zh-Hans" if lang() == "zh" else "en", scale=scale_style())


def _json_for_script(obj):
    """JSON that is safe inside a <script> element."""
    text = json.dumps(obj, separators=(",", ":"))
    return text.replace("</", "<\\/").replace("<!--", "<\\!--")


def stepper_html(stepper, title="microtorch backward, step by step"):
    """The stepper as one page: its data as JSON, its module (with the browser's layout
    engine when the graph still has to be laid out), and a stand-in for the widget model
    (get / set / on / save_changes) so nothing needs a kernel."""
    from ._stepper_js import CSS as STEPPER_CSS
    from ._tensorpanel import CSS as PANEL_CSS
    from ._i18n import tr
    script_body = stepper._esm.replace("export default { render };", "window.__mtStepperRender = render;")
    state = {"data": stepper.data, "index": 0, "scale": stepper.data.get("scale", 1)}
    n = len(stepper.steps)
    scripts = (
        f'<script type="application/json" id="mt-state">{_json_for_script(state)}</script>\n'
        f'<script type="module">\n{script_body}\n</script>\n'
        '<script type="module">\n' + _MODEL_STANDIN + "</script>")
    subtitle = tr("{n} steps · ← → to step, space to play").format(n=n)
    return page("", title=title, subtitle=subtitle, css=PANEL_CSS + STEPPER_CSS, scripts=scripts)


# the widget model's part the stepper uses, without a kernel
_MODEL_STANDIN = """
  const state = JSON.parse(document.getElementById('mt-state').textContent);
  const handlers = {};
  const model = {
    get: (k) => state[k],
    set: (k, v) => { const old = state[k]; state[k] = v;
      if (old !== v) (handlers['change:' + k] || []).forEach((f) => f()); },
    save_changes: () => {},
    on: (ev, f) => { (handlers[ev] = handlers[ev] || []).push(f); },
    off: (ev, f) => { handlers[ev] = (handlers[ev] || []).filter((g) => g !== f); },
  };
  const el = document.getElementById('mt-root');
  await window.__mtStepperRender({ model, el });
  const s = el.querySelector('.mt-stepper'); if (s) s.focus({ preventScroll: true });
"""


def save_stepper(stepper, path):
    text = stepper_html(stepper)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return os.fspath(path)


def save_dag(dag, path):
    """.svg: standalone themed SVG (any renderer); .png/.pdf: via `dot`, else cairosvg; .html: a page."""
    from .graph import renderer_name
    p = os.fspath(path)
    ext = os.path.splitext(p)[1].lower()
    if ext == ".svg":
        with open(p, "w", encoding="utf-8") as f:
            f.write(dag.svg(standalone=True))
    elif ext in (".html", ".htm"):
        with open(p, "w", encoding="utf-8") as f:
            f.write(page(dag._repr_html_(), title="microtorch graph"))
    elif ext in (".png", ".pdf"):
        data = _dot_image(dag, ext[1:]) if renderer_name(dag.render_with) == "dot" else _cairo_image(dag, ext[1:])
        with open(p, "wb") as f:
            f.write(data)
    else:
        raise ValueError(f"cannot save a graph as {ext or 'a file without extension'}: use .svg, .png, .pdf or .html")
    return p


def _dot_image(dag, fmt):
    import subprocess
    source = dag.source.replace("bgcolor=transparent", 'bgcolor="white"', 1)
    proc = subprocess.run(["dot", f"-T{fmt}", "-Gdpi=144" if fmt == "png" else "-Gdpi=72"],
                          input=source.encode(), capture_output=True, timeout=120)
    if proc.returncode != 0:
        from .graph import GraphvizError
        raise GraphvizError("Graphviz `dot` failed: " + proc.stderr.decode(errors="replace").strip()[:200])
    return proc.stdout


def _cairo_image(dag, fmt):
    """Without `dot`: the SVG laid out by WebAssembly Graphviz, drawn by cairosvg."""
    from . import _raster
    if not _raster.available():
        raise ValueError(f"saving a graph as .{fmt} without the Graphviz `dot` program needs cairosvg "
                         "(pip install cairosvg; Debian: apt-get install libcairo2); .svg works everywhere")
    dag.svg()
    return _raster.rasterize(dag._svg, fmt, dpi=144 if fmt == "png" else 72, background="white")


def save(obj, path):
    """Save any viz object: a Stepper (.html), a DAG (.svg/.png/.pdf/.html), a heatmap or
    timeline (.png/.svg/.html)."""
    saver = getattr(obj, "save", None)
    if saver is None:
        raise TypeError(f"viz.save: cannot save a {type(obj).__name__}; pass a Stepper, a DAG (viz.draw), "
                        "a gradcheck view or a hook timeline")
    return saver(path)
