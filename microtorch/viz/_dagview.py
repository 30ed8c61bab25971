"""A laid-out graph as HTML that fits its output: the SVG in a pane, and a small script.

Without scripts (an untrusted notebook, nbviewer) the SVG still fits by CSS alone (at most
the output's width and 85 % of the window's height, aspect kept). When the script runs
(JupyterLab's own outputs, exported pages) the pane becomes the pan/zoom viewport of
`_viewport_js`, with − / fit / + buttons, and a click on a node opens its tensor below the
graph (value, gradient, saved tensors: `_tensorpanel`). When no layout engine exists on the Python side,
the DOT source is sent instead and the browser lays it out (`mtLayoutDot`, see `graph.
browser_layout_js`).
"""
import itertools
import json

from ._i18n import tr
from ._viewport_js import VIEWPORT

_ids = itertools.count()

_SCRIPT = r"""
(async function () {
  const root = document.getElementById(%(id)s);
  if (!root || root.dataset.ready) return;
  root.dataset.ready = "1";
  const pane = root.querySelector(".mt-graph");
  const dot = %(dot)s;
  if (dot !== null) pane.innerHTML = await mtLayoutDot(dot);
  const svg = pane.querySelector("svg");
  if (!svg) return;
  if (dot !== null) mtFinishSvg(svg, %(classes)s);
  pane.classList.remove("mt-static");
  const bar = root.querySelector(".mt-zoombar");
  bar.hidden = false;
  const vp = mtViewport(pane, svg, { onfit: () => mtClearBar(pane, bar, vp) });
  vp.fit();
  root.mtViewport = vp;
  bar.querySelector(".mt-zin").onclick = () => vp.zoomAt(1.25);
  bar.querySelector(".mt-zout").onclick = () => vp.zoomAt(0.8);
  bar.querySelector(".mt-zfit").onclick = () => vp.fit();
  pane.tabIndex = 0;
  pane.addEventListener("keydown", (e) => { if (vp.key(e)) { e.preventDefault(); e.stopPropagation(); } });
  const details = %(details)s;
  if (details) mtWireTensorBox(root, pane, details, %(prefix)s, %(close)s);
  if (root.mtAfterFit) root.mtAfterFit(vp);
})();

// the zoom buttons float over the pane's top right corner: when a node lies under them (a graph as wide
// as the pane, its top rank reaching the corner), the graph moves down below them and the pane grows
function mtClearBar(pane, bar, vp) {
  const b = bar.getBoundingClientRect();
  let dy = 0;
  for (const g of pane.querySelectorAll("g.node")) {
    const r = g.getBoundingClientRect();
    if (r.left < b.right && b.left < r.right && r.top < b.bottom && b.top < r.bottom) dy = Math.max(dy, b.bottom + 4 - r.top);
  }
  if (dy <= 0) return;
  pane.style.height = (parseFloat(pane.style.height) || pane.offsetHeight) + dy + "px";
  vp.panBy(0, dy);
}

// a click on a node opens its tensor below the graph (a drag is not a click: see mtPointerControls)
function mtWireTensorBox(root, pane, details, prefix, closeLabel) {
  const box = mtTensorBox(root.querySelector(".mt-tensor"), details, closeLabel, root);
  for (const g of pane.querySelectorAll("g.node")) {
    const name = g.id.slice(prefix.length);
    if (!details[name]) continue;
    g.style.cursor = "pointer";
    g.addEventListener("click", () => box.show(name, g));
  }
  root.mtTensor = box;
}
"""

def _js(value):
    """JSON that can sit inside an HTML <script>."""
    return json.dumps(value).replace("</", "<\\/")


CSS = """
.mtviz .mt-graphwrap { position: relative; }
.mtviz .mt-zoombar { position: absolute; top: 4px; right: 4px; display: flex; gap: 2px; z-index: 2; }
.mtviz .mt-dagtensor { margin-top: 8px; max-width: calc(520px * var(--mt-scale)); }
.mtviz .mt-zoombar button { font: inherit; font-size: calc(13px * var(--mt-scale)); padding: 0 8px; cursor: pointer;
  border: 1px solid var(--mt-border); background: var(--mt-bg2); color: var(--mt-fg); border-radius: 4px; }
"""


def graph_pane(svg, dot=None, layout_js=None, extra_html="", classes=None, details=None, prefix=""):
    """HTML for one graph: `svg` (laid out), or `dot` plus `layout_js` (laid out in the
    browser). `extra_html` goes inside the wrapper, after the pane. `details`: {node name:
    tensor panel HTML} (node ids are `prefix` + name): a click on a node shows it below."""
    uid = f"mtg{next(_ids)}-{id(svg) % 100000}"
    body = svg if svg is not None else f"<div class='mt-muted'>{tr('laying out the graph...')}</div>"
    if details:
        from ._tensorpanel import CSS as PANEL_CSS
        extra_html = f"<style>{PANEL_CSS}</style><div class='mt-tensor mt-dagtensor' hidden></div>" + extra_html
    script = VIEWPORT + (layout_js or "") + (_SCRIPT % {
        "id": json.dumps(uid), "dot": _js(dot), "classes": _js(classes or {}), "details": _js(details or None),
        "prefix": json.dumps(prefix), "close": json.dumps(tr("close"))})
    kind = ' type="module"' if dot is not None else ""
    return (f'<div class="mt-graphwrap" id="{uid}">'
            f'<div class="mt-zoombar" hidden><button class="mt-zout" title="{tr("Zoom out (−)")}">−</button>'
            f'<button class="mt-zfit" title="{tr("Show the whole graph (0, or double-click the graph)")}">'
            f'{tr("fit")}</button><button class="mt-zin" title="{tr("Zoom in (+)")}">+</button></div>'
            f'<div class="mt-graph mt-static">{body}</div>{extra_html}</div><script{kind}>{script}</script>')
