"""Colours that work in JupyterLab's light and dark themes, as one stylesheet.

Everything `viz` draws in HTML (DAG SVGs, the stepper, the hook timeline, tables) is
coloured through CSS custom properties declared on `.mtviz`: they take JupyterLab's own
variables (`--jp-ui-font-color1`, `--jp-layout-color1`, ...) and fall back to a light or a
dark palette outside JupyterLab (static export, nbviewer, a saved SVG), following
`prefers-color-scheme`. Accent colours switch with JupyterLab's `data-jp-theme-light`.
The DOT source also carries plain light colours (`DOT`) so that a PNG rendered by `dot`
without any stylesheet still looks right.
"""

# light-theme colours written into DOT (used when no stylesheet applies, e.g. PNG)
DOT = {
    "fg": "#1f2328", "fg2": "#59636e", "fg3": "#818b98", "border": "#d1d9e0",
    "op": "#eff1f3", "leaf": "#ddf4ff", "leaf_line": "#0969da", "out": "#dafbe1",
    "out_line": "#1a7f37", "grad": "#bc4c00", "hl": "#bf3989", "hook": "#8250df",
    "bad": "#cf222e", "bad_fill": "#ffebe9", "ok_fill": "#dafbe1", "more": "#f6f8fa",
    "cluster": "#fbf8ff",
}

_LIGHT = """
  --mt-fg: var(--jp-ui-font-color1, #1f2328);
  --mt-fg2: #4d5661;
  --mt-fg3: #818b98;
  --mt-bg: var(--jp-layout-color1, #ffffff);
  --mt-border: var(--jp-border-color1, #d1d9e0);
  --mt-border2: var(--jp-border-color2, #e5e9ed);
  --mt-blue: #0969da; --mt-green: #1a7f37; --mt-orange: #bc4c00; --mt-red: #cf222e;
  --mt-purple: #8250df; --mt-pink: #bf3989; --mt-yellow: #9a6700;
  --mt-orange-text: #953800; --mt-purple-text: #6639ba; --mt-red-text: #a40e26; --mt-green-text: #116329;
"""

_DARK = """
  --mt-fg: var(--jp-ui-font-color1, #e6edf3);
  --mt-fg2: #a4acb5;
  --mt-fg3: #6e7681;
  --mt-bg: var(--jp-layout-color1, #0d1117);
  --mt-border: var(--jp-border-color1, #3d444d);
  --mt-border2: var(--jp-border-color2, #2f353d);
  --mt-blue: #4493f8; --mt-green: #3fb950; --mt-orange: #f0883e; --mt-red: #f85149;
  --mt-purple: #ab7df8; --mt-pink: #db61a2; --mt-yellow: #d29922;
  --mt-orange-text: #f0883e; --mt-purple-text: #bc8cff; --mt-red-text: #ff7b72; --mt-green-text: #56d364;
"""

_DERIVED = """
  --mt-font: var(--jp-ui-font-family, system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif);
  --mt-mono: var(--jp-code-font-family, ui-monospace, SFMono-Regular, Menlo, Consolas, monospace);
  --mt-bg2: color-mix(in srgb, var(--mt-fg) 4%, var(--mt-bg));
  --mt-op-fill: color-mix(in srgb, var(--mt-fg) 6%, var(--mt-bg));
  --mt-leaf-fill: color-mix(in srgb, var(--mt-blue) 15%, var(--mt-bg));
  --mt-out-fill: color-mix(in srgb, var(--mt-green) 15%, var(--mt-bg));
  --mt-cur-fill: color-mix(in srgb, var(--mt-orange) 16%, var(--mt-bg));
  --mt-ok-fill: color-mix(in srgb, var(--mt-green) 16%, var(--mt-bg));
  --mt-bad-fill: color-mix(in srgb, var(--mt-red) 14%, var(--mt-bg));
  --mt-cluster-fill: color-mix(in srgb, var(--mt-purple) 5%, var(--mt-bg));
  color: var(--mt-fg);
"""

_DARK_SELECTORS = ('body[data-jp-theme-light="false"] .mtviz, body.vscode-dark .mtviz, '
                   '[data-mt-theme="dark"] .mtviz, .mtviz.mt-dark')

BASE_CSS = (
    ".mtviz {" + _LIGHT + _DERIVED + "}\n"
    + _DARK_SELECTORS + " {" + _DARK + "}\n"
    + "@media (prefers-color-scheme: dark) {\n"
    + "  :root:not([data-mt-theme=\"light\"]) body:not([data-jp-theme-light]):not(.vscode-light) "
      ".mtviz:not(.mt-light), svg.mtviz:root:not(.mt-light) {" + _DARK + "}\n}\n"
)

DAG_CSS = """
.mt-dag text { fill: var(--mt-fg); font-family: Arial, "Liberation Sans", Helvetica, sans-serif; }
.mt-dag g.node :is(path, polygon, ellipse) { fill: var(--mt-op-fill); stroke: var(--mt-fg3); }
.mt-dag g.node polyline { stroke: var(--mt-border); }
.mt-dag g.node.mt-leaf :is(path, polygon, ellipse) { fill: var(--mt-leaf-fill); stroke: var(--mt-blue); }
.mt-dag g.node.mt-out :is(path, polygon, ellipse) { fill: var(--mt-out-fill); stroke: var(--mt-green); }
.mt-dag g.node.mt-const :is(path, polygon, ellipse) { fill: var(--mt-bg); stroke: var(--mt-fg3); stroke-dasharray: 3 2; }
.mt-dag g.node.mt-more :is(path, polygon, ellipse) { fill: var(--mt-bg2); stroke: var(--mt-fg3); stroke-dasharray: 5 3; }
.mt-dag g.node.mt-more text { fill: var(--mt-fg2); font-style: italic; }
.mt-dag g.node.mt-alias :is(path, polygon, ellipse) { fill: var(--mt-bg); stroke: var(--mt-fg3); stroke-dasharray: 3 2; }
.mt-dag g.node.mt-alias.mt-alias-leaf :is(path, polygon, ellipse) { stroke: var(--mt-blue); }
.mt-dag g.node.mt-alias text { fill: var(--mt-fg2); }
.mt-dag g.node.mt-hooked :is(path, polygon, ellipse) { stroke: var(--mt-purple); stroke-width: 2px; }
.mt-dag g.node.mt-hl :is(path, polygon, ellipse) { stroke: var(--mt-pink); stroke-width: 3.5px; }
.mt-dag g.node.mt-ok :is(path, polygon, ellipse) { fill: var(--mt-ok-fill); stroke: var(--mt-green); stroke-width: 2px; }
.mt-dag g.node.mt-bad :is(path, polygon, ellipse) { fill: var(--mt-bad-fill); stroke: var(--mt-red); stroke-width: 3px; }
.mt-dag g.node.mt-skip :is(path, polygon, ellipse) { stroke-dasharray: 4 3; }
.mt-dag text.mt-grad { fill: var(--mt-orange-text); }
.mt-dag text.mt-sub { fill: var(--mt-fg2); }
.mt-dag text.mt-stale { fill: var(--mt-red-text); font-weight: bold; }
.mt-dag text.mt-hooktxt { fill: var(--mt-purple-text); }
.mt-dag text.mt-title { letter-spacing: 0; }
.mt-dag g.edge path { stroke: var(--mt-fg3); }
.mt-dag g.edge polygon { fill: var(--mt-fg3); stroke: var(--mt-fg3); }
.mt-dag g.edge text { fill: var(--mt-orange-text); }
.mt-dag g.edge.mt-saved path { stroke-dasharray: 2 3; }
.mt-dag g.edge.mt-more-edge path { stroke-dasharray: 5 3; }
.mt-dag g.cluster :is(path, polygon) { fill: var(--mt-cluster-fill); stroke: var(--mt-fg3); stroke-dasharray: 4 3; }
.mt-dag g.cluster text { fill: var(--mt-fg2); }
/* the stepper's states */
.mt-dag g.node.mt-done :is(path, polygon, ellipse) { fill: var(--mt-bg); stroke: var(--mt-fg3); stroke-dasharray: 2 2; }
.mt-dag g.node.mt-done polyline { stroke: var(--mt-border2); }
.mt-dag g.node.mt-done text { fill: var(--mt-fg2); }
.mt-dag g.node.mt-done text.mt-grad { fill: var(--mt-orange-text); }
.mt-dag g.node.mt-current :is(path, polygon, ellipse) { fill: var(--mt-cur-fill); stroke: var(--mt-orange); stroke-width: 3.5px; }
.mt-dag g.node.mt-ready :is(path, polygon, ellipse) { stroke: var(--mt-orange); stroke-width: 2px; stroke-dasharray: 6 3; }
.mt-dag g.edge.mt-e-hidden text { visibility: hidden; }
.mt-dag g.edge.mt-e-hidden path { stroke: var(--mt-border); }
.mt-dag g.edge.mt-e-hidden polygon { fill: var(--mt-border); stroke: var(--mt-border); }
.mt-dag g.edge.mt-e-active path { stroke: var(--mt-orange); stroke-width: 2.5px; }
.mt-dag g.edge.mt-e-active polygon { fill: var(--mt-orange); stroke: var(--mt-orange); }
.mt-dag g.edge.mt-e-active text { font-weight: bold; }
.mt-dag g.edge.mt-e-done text { fill: var(--mt-fg2); }
.mt-dag g.cluster.mt-collapsible { cursor: pointer; }
.mt-dag g.node.mt-fold :is(path, polygon, ellipse) { fill: var(--mt-cluster-fill); stroke: var(--mt-purple); stroke-width: 1.5px; }
.mt-dag g.node.mt-selected :is(path, polygon, ellipse) { stroke: var(--mt-blue); stroke-width: 3.5px; }
.mt-dag g.node.mt-link :is(path, polygon, ellipse) { stroke: var(--mt-purple); stroke-width: 4px; }
"""

PANEL_CSS = """
.mtviz { --mt-scale: 1; font-family: var(--mt-font); font-size: calc(14px * var(--mt-scale)); line-height: 1.4; }
.mtviz .mt-muted { color: var(--mt-fg2); }
.mtviz .mt-num { font-family: var(--mt-mono); font-size: calc(13px * var(--mt-scale)); }
.mtviz .mt-gradv { color: var(--mt-orange-text); font-family: var(--mt-mono); font-size: calc(13px * var(--mt-scale)); }
.mtviz .mt-badge { display: inline-block; padding: 0 6px; border-radius: 9px; font-size: calc(12px * var(--mt-scale));
  border: 1px solid var(--mt-border); background: var(--mt-bg2); color: var(--mt-fg2); white-space: nowrap; }
.mtviz .mt-badge.mt-pass { color: var(--mt-green-text); border-color: var(--mt-green); }
.mtviz .mt-badge.mt-fail { color: var(--mt-red-text); border-color: var(--mt-red); }
.mtviz .mt-badge.mt-warn { color: var(--mt-yellow); border-color: var(--mt-yellow); }
.mtviz table.mt-table { border-collapse: collapse; font-size: calc(13px * var(--mt-scale)); margin: 4px 0; }
.mtviz table.mt-table th, .mtviz table.mt-table td { border-bottom: 1px solid var(--mt-border2);
  padding: 2px 8px; text-align: right; color: var(--mt-fg); background: transparent; }
.mtviz table.mt-table th { color: var(--mt-fg2); font-weight: 600; }
.mtviz table.mt-table td.mt-l, .mtviz table.mt-table th.mt-l { text-align: left; }
.mtviz table.mt-table tr.mt-failrow td { color: var(--mt-red-text); }
.mtviz .mt-failtext { color: var(--mt-red-text); }
/* 17 px: a subscript (one math level down, x 0.71) is then still 12 px */
.mtviz math { font-size: calc(17px * var(--mt-scale)); color: var(--mt-fg); math-style: normal; }
.mtviz details > summary { cursor: pointer; color: var(--mt-fg2); }
.mtviz code { font-family: var(--mt-mono); font-size: calc(13px * var(--mt-scale)); background: var(--mt-bg2); padding: 0 3px; border-radius: 3px; }
.mtviz .mt-graphbox { max-width: 100%; overflow-x: auto; }
.mtviz .mt-graphbox svg { max-width: 100%; height: auto; }
"""


from ._viewport_js import CSS as _VIEWPORT_CSS  # noqa: E402
from ._dagview import CSS as _DAGVIEW_CSS  # noqa: E402

CSS = BASE_CSS + DAG_CSS + PANEL_CSS + _VIEWPORT_CSS + _DAGVIEW_CSS


def style_tag():
    return "<style>" + CSS + "</style>"


def scale_style(scale=None):
    """The inline style that sets the text scale of one output (viz.set_options(scale=))."""
    from . import _options
    s = _options.scale() if scale is None else scale
    return f' style="--mt-scale: {s:g}"' if s != 1 else ""
