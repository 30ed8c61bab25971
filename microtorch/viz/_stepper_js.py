"""The stepper's browser side: one ES module (anywidget `_esm`) and its stylesheet.

The SVG is laid out once (by Python, or in the browser from the DOT source when no server-side
layout exists: `mtLayoutDot`, see `_layout`; for a small graph Python lays out both directions
and the browser shows the one that fits the output's width with legible text,
`pickDirection`); stepping only toggles classes on nodes and edges (found once by id), swaps
the side panel's HTML and the text of gradient cells (clicking a node also opens its tensor
above the panel: value, gradient, saved tensors), so a step costs a few milliseconds and
needs no kernel. The graph sits in a pan/zoom pane (`_viewport_js`) that fits it whole and
keeps the running node in view. The same module drives the static export, where a tiny
stand-in for the widget model replaces the kernel.
"""
from ._viewport_js import VIEWPORT

ESM = VIEWPORT + r"""
const PANEL_W = 360, GAP = 10;

function toolbarHtml(t, last, scale) {
  const scales = [1, 1.25, 1.5, 2].map((s) => `<option value="${s}"${s === scale ? " selected" : ""}>${s}×</option>`).join("");
  return `
    <div class="mt-toolbar">
      <button class="mt-btn mt-reset" title="${t.reset_tip}">&#x21BA; ${t.reset}</button>
      <button class="mt-btn mt-back" title="${t.back_tip}">&#x25C0; ${t.back}</button>
      <button class="mt-btn mt-play" title="${t.play_tip}">&#x25B6; ${t.play}</button>
      <button class="mt-btn mt-next mt-primary" title="${t.next_tip}">${t.next} &#x25B6;</button>
      <input class="mt-slider" type="range" min="0" max="${last}" step="1" value="0" aria-label="${t.step}">
      <span class="mt-counter"></span>
      <span class="mt-zoom">
        <button class="mt-btn mt-zout" title="${t.zoom_out}">&#x2212;</button>
        <button class="mt-btn mt-zfit" title="${t.fit_tip}">${t.fit}</button>
        <button class="mt-btn mt-zin" title="${t.zoom_in}">+</button>
        <label class="mt-scalelbl" title="${t.scale_tip}">${t.text} <select class="mt-scale">${scales}</select></label>
      </span>
    </div>
    <div class="mt-legend">
      <span class="mt-key mt-key-cur">${t.running}</span>
      <span class="mt-key mt-key-ready">${t.ready}</span>
      <span class="mt-key mt-key-done">${t.done}</span>
      <span class="mt-key mt-key-grad">${t.grad_edge}</span>
      <span class="mt-hint">${t.hint}</span>
    </div>
    <div class="mt-body">
      <div class="mt-graph"></div>
      <div class="mt-panel"><div class="mt-tensor" hidden></div><div class="mt-stepinfo" aria-live="polite"></div></div>
    </div>`;
}

// the graph's nodes, edges and gradient cells, found once by id
function indexGraph(svg, data) {
  const byId = (id) => svg ? svg.querySelector(`[id="${data.prefix}${id}"]`) : null;
  const nodes = data.nodes.map((n) => ({ name: n, el: byId(n), exec: data.exec[n], cls: "" }));
  const nodeByName = {};
  for (const n of nodes) nodeByName[n.name] = n;
  const edges = data.edges.map(([id, s]) => ({ el: byId(id), step: s, cls: "" }));
  const gradCells = [];
  for (const [name, texts] of Object.entries(data.grad_text)) {
    const g = byId(name);
    const t = g ? g.querySelector("text.mt-grad") : null;
    if (t) gradCells.push({ el: t, texts, cur: null });
  }
  return { nodes, nodeByName, edges, gradCells };
}

function setCls(item, cls) {
  if (item.cls === cls || !item.el) return;
  if (item.cls) item.el.classList.remove(item.cls);
  if (cls) item.el.classList.add(cls);
  item.cls = cls;
}

// the classes and texts of step k
function paintStep(G, st, k) {
  const current = new Set(st.nodes), ready = new Set(st.ready);
  for (const n of G.nodes) {
    let cls = "";
    if (current.has(n.name)) cls = "mt-current";
    else if (n.exec !== undefined && n.exec < k) cls = "mt-done";
    else if (ready.has(n.name)) cls = "mt-ready";
    setCls(n, cls);
  }
  for (const e of G.edges) setCls(e, e.step > k ? "mt-e-hidden" : (e.step === k ? "mt-e-active" : "mt-e-done"));
  for (const c of G.gradCells) {
    let text = c.texts[0][1];
    for (const [s, t] of c.texts) { if (s <= k) text = t; else break; }
    if (text !== c.cur) { c.el.textContent = text; c.cur = text; }
  }
}

// buttons, slider, keys and the text-size control of one stepper
function wireControls(root, q, slider, api) {
  const { vp } = api;
  q(".mt-next").addEventListener("click", () => api.go(api.cur() + 1));
  q(".mt-back").addEventListener("click", () => api.go(api.cur() - 1));
  q(".mt-reset").addEventListener("click", () => api.go(0));
  q(".mt-play").addEventListener("click", () => api.play());
  slider.addEventListener("input", () => api.go(parseInt(slider.value, 10)));
  q(".mt-zin").addEventListener("click", () => { if (vp) { vp.zoomAt(1.25); api.follow(); } });
  q(".mt-zout").addEventListener("click", () => vp && vp.zoomAt(0.8));
  q(".mt-zfit").addEventListener("click", () => api.layout());
  q(".mt-scale").addEventListener("change", (e) => {
    const s = parseFloat(e.target.value);
    root.style.setProperty("--mt-scale", String(s));
    api.model.set("scale", s); api.model.save_changes();     // the kernel lays the graph out again
  });
  root.addEventListener("keydown", (e) => {
    if (e.target && e.target.tagName === "INPUT" && e.target !== slider) return;
    if (e.target && e.target.tagName === "SELECT") return;
    let handled = true;
    if (e.key === "ArrowRight" || e.key === "ArrowDown") api.go(api.cur() + 1);
    else if (e.key === "ArrowLeft" || e.key === "ArrowUp") api.go(api.cur() - 1);
    else if (e.key === "Home") api.go(0);
    else if (e.key === "End") api.go(api.last);
    else if (e.key === " " || e.key === "Spacebar") api.play();
    else handled = vp ? vp.key(e) : false;
    if (handled) { e.preventDefault(); e.stopPropagation(); }
  });
}

// the width an SVG laid out by Graphviz needs with its smallest text at the legible size
// (12 px, 16 px at scale 1.5; Graphviz writes points, 4/3 px each at zoom 1), pane padding included
function legibleWidth(svg, scale) {
  const vb = /viewBox="[-\d.]+ [-\d.]+ ([\d.]+)/.exec(svg);
  const sizes = [...svg.matchAll(/font-size="([\d.]+)"/g)].map((m) => parseFloat(m[1]));
  if (!vb || !sizes.length) return 0;
  const minPx = scale >= 1 ? 12 + 8 * (scale - 1) : 12 * scale;
  return parseFloat(vb[1]) * minPx / Math.min(...sizes) + 12;
}

// of the two directions Python laid out, the asked one if it fits `width` with legible text,
// else the other if it does, else the narrower: a graph grows downwards before it scrolls sideways
function pickDirection(data, width) {
  const alt = data.alt && data.alt.svg ? data.alt : null;
  const asked = { svg: data.svg, rankdir: data.rankdir };
  if (!alt || !width) return asked;
  const s = data.scale || 1, a = legibleWidth(data.svg, s), b = legibleWidth(alt.svg, s);
  if (a <= width || (b > width && a <= b)) return asked;
  return alt;
}

async function graphSvg(data) {
  if (data.svg) return data.svg;
  if (data.dot && typeof mtLayoutDot === "function") return await mtLayoutDot(data.dot);
  return "<div class='mt-muted'>no layout engine for this graph</div>";
}

// the stepper's element, its toolbar and legend, and the laid-out graph in its pane
async function buildRoot(el, data) {
  const root = document.createElement("div");
  root.className = "mtviz mt-stepper";
  root.style.setProperty("--mt-scale", String(data.scale || 1));
  root.tabIndex = 0;
  root.setAttribute("data-lm-suppress-shortcuts", "true");
  root.setAttribute("data-p-suppress-shortcuts", "true");
  root.innerHTML = toolbarHtml(data.labels, data.steps.length - 1, data.scale || 1);
  el.appendChild(root);
  const graph = root.querySelector(".mt-graph");
  const dir = pickDirection(data, bodyWidth(root));
  graph.innerHTML = data.svg ? dir.svg : await graphSvg(data);
  if (dir.rankdir) root.dataset.rankdir = dir.rankdir;
  const svg = graph.querySelector("svg");
  if (svg && !data.svg) mtFinishSvg(svg, data.text_classes || {});
  return { root, svg, dir };
}

// the width the graph's pane can have: the body's, less the pane's border
function bodyWidth(root) { return Math.max(0, root.querySelector(".mt-body").clientWidth - 2); }

// the panel beside the graph when that costs the graph little, below it otherwise
function placePanel(root, vp, scale) {
  const body = root.querySelector(".mt-body"), graph = root.querySelector(".mt-graph");
  const bodyW = body.clientWidth, pw = PANEL_W * scale;
  if (!vp || !bodyW) return;
  root.classList.toggle("mt-wide", mtPanelBelow(vp, bodyW, pw + GAP));
  vp.fit();
  // a panel of constant height: its changing content then repaints the panel alone, not the page
  const panel = root.querySelector(".mt-panel");
  panel.style.height = root.classList.contains("mt-wide") ? "" : graph.style.height;
  panel.style.minHeight = "";
}

async function mount(model, el, remount) {
  const data = model.get("data");
  const steps = data.steps, last = steps.length - 1, t = data.labels;
  const { root, svg, dir } = await buildRoot(el, data);
  const q = (s) => root.querySelector(s);
  const graph = q(".mt-graph"), panel = q(".mt-panel"), info = q(".mt-stepinfo"), slider = q(".mt-slider");
  const counter = q(".mt-counter"), playBtn = q(".mt-play");
  const G = indexGraph(svg, data);
  let cur = -1, timer = null, live = false;
  const reserve = () => q(".mt-toolbar").offsetHeight + q(".mt-legend").offsetHeight + 16;
  const vp = svg ? mtViewport(graph, svg, { reserve, onresize: () => layout() }) : null;
  function layout() {
    if (live && pickDirection(data, bodyWidth(root)).svg !== dir.svg) { live = false; remount(); return; }   // the other direction fits now
    placePanel(root, vp, data.scale || 1); follow();
  }
  function first() { return cur >= 0 ? G.nodeByName[steps[cur].nodes[0]] : null; }
  function follow() { const f = first(); if (vp && f && f.el) vp.follow(f.el); }
  function apply(k) {
    k = Math.max(0, Math.min(last, k | 0));
    paintStep(G, steps[k], k);
    info.innerHTML = steps[k].panel;
    if (root.classList.contains("mt-wide") && panel.offsetHeight > (parseFloat(panel.style.minHeight) || 0))
      panel.style.minHeight = panel.offsetHeight + "px";      // below the graph: grows, never jumps back
    slider.value = String(k);
    counter.textContent = t.counter.replace("{k}", k).replace("{n}", last);
    q(".mt-back").disabled = k === 0;
    q(".mt-reset").disabled = k === 0;
    q(".mt-next").disabled = k === last;
    cur = k;
    root.dataset.step = String(k);
    follow();
  }
  function go(k, sync = true) {
    k = Math.max(0, Math.min(last, k | 0));
    if (k === cur) return;
    apply(k);
    const f = first();
    if (f && f.el) mtReveal(graph, f.el);         // a step the user asked for: keep its node on screen
    if (sync) { model.set("index", k); model.save_changes(); }
  }
  function stop() {
    if (timer !== null) { clearInterval(timer); timer = null; }
    playBtn.innerHTML = "&#x25B6; " + t.play;
  }
  function play() {
    if (timer !== null) { stop(); return; }
    if (cur >= last) go(0);
    playBtn.innerHTML = "&#x23F8; " + t.pause;
    timer = setInterval(() => { if (cur >= last) stop(); else go(cur + 1); }, data.interval || 900);
  }
  const api = { go: (k) => { stop(); go(k); }, cur: () => cur, last, play, stop, layout, follow, vp, model };
  wireControls(root, q, slider, api);
  const tensor = mtTensorBox(q(".mt-tensor"), data.details || {}, t.close, root);
  for (const n of G.nodes) {
    if (!n.el || (n.exec === undefined && !(data.details || {})[n.name])) continue;
    n.el.style.cursor = "pointer";
    n.el.addEventListener("click", () => {
      if (n.exec !== undefined) api.go(n.exec);
      tensor.show(n.name, n.el);
      root.focus({ preventScroll: true });
    });
  }
  const onChange = () => { const k = model.get("index"); if (k !== cur) apply(k); };
  model.on("change:index", onChange);
  apply(model.get("index") || 0);
  layout();
  requestAnimationFrame(() => layout());
  root.mtStepper = { go, layout, viewport: vp, tensor };
  live = true;
  return () => { stop(); if (vp) vp.destroy(); model.off && model.off("change:index", onChange); root.remove(); };
}

async function render({ model, el }) {
  let cleanup = null;
  const again = async () => { if (cleanup) cleanup(); cleanup = null; cleanup = await mount(model, el, again); };
  await again();
  model.on("change:data", again);
  return () => { if (cleanup) cleanup(); model.off && model.off("change:data", again); };
}
export default { render };
"""

CSS = r"""
.mt-stepper { border: 1px solid var(--mt-border); border-radius: 6px; background: var(--mt-bg);
  padding: 8px 10px; outline: none; box-sizing: border-box; max-width: 100%; }
.mt-stepper:focus-visible { box-shadow: 0 0 0 2px var(--mt-blue); }
.mt-stepper .mt-toolbar { display: flex; align-items: center; gap: 6px; flex-wrap: wrap; }
.mt-stepper .mt-btn { font: inherit; font-size: calc(13px * var(--mt-scale)); line-height: 1.4; padding: 2px 10px;
  border: 1px solid var(--mt-border); background: var(--mt-bg2); color: var(--mt-fg);
  border-radius: 4px; cursor: pointer; }
.mt-stepper .mt-btn:hover:not(:disabled) { border-color: var(--mt-fg3); }
.mt-stepper .mt-btn:disabled { color: var(--mt-fg2); border-color: var(--mt-border2); cursor: default; }
.mt-stepper .mt-btn.mt-primary:not(:disabled) { border-color: var(--mt-orange); color: var(--mt-orange-text); font-weight: 600; }
.mt-stepper .mt-slider { flex: 1 1 140px; min-width: 100px; accent-color: var(--mt-orange); }
.mt-stepper .mt-counter { font-family: var(--mt-mono); font-size: calc(13px * var(--mt-scale)); color: var(--mt-fg2); min-width: 7em; }
.mt-stepper .mt-zoom { display: inline-flex; gap: 2px; align-items: center; }
.mt-stepper .mt-zoom .mt-btn { padding: 2px 8px; }
.mt-stepper .mt-scalelbl { font-size: calc(13px * var(--mt-scale)); color: var(--mt-fg2); margin-left: 6px; }
.mt-stepper .mt-scale { font: inherit; color: var(--mt-fg); background: var(--mt-bg2); border: 1px solid var(--mt-border); border-radius: 4px; }
.mt-stepper .mt-legend { display: flex; flex-wrap: wrap; gap: 4px 14px; margin: 6px 0; font-size: calc(13px * var(--mt-scale));
  color: var(--mt-fg2); align-items: center; }
.mt-stepper .mt-key::before { content: ""; display: inline-block; width: 1.1em; height: .8em; border-radius: 3px;
  margin-right: 4px; vertical-align: -1px; border: 1.5px solid var(--mt-fg3); background: var(--mt-op-fill); }
.mt-stepper .mt-key-cur::before { background: var(--mt-cur-fill); border: 2.5px solid var(--mt-orange); }
.mt-stepper .mt-key-ready::before { border: 1.5px dashed var(--mt-orange); }
.mt-stepper .mt-key-done::before { background: var(--mt-bg); border: 1.5px dotted var(--mt-fg3); }
.mt-stepper .mt-key-grad::before { height: 0; border: none; border-top: 2.5px solid var(--mt-orange); border-radius: 0; vertical-align: 3px; }
.mt-stepper .mt-hint { margin-left: auto; font-style: italic; }
.mt-stepper .mt-body { display: flex; gap: 10px; align-items: flex-start; }
.mt-stepper .mt-graph { flex: 1 1 0; min-width: 0; height: 320px; contain: layout paint; }
.mt-stepper.mt-wide .mt-body { flex-direction: column; align-items: stretch; }
.mt-stepper.mt-wide .mt-graph { flex: none; width: 100%; }
.mt-stepper .mt-panel { flex: 0 0 calc(360px * var(--mt-scale)); overflow: auto; contain: content; }
.mt-stepper .mt-panel .mt-tensor { margin: 0 0 10px; }
.mt-stepper.mt-wide .mt-panel { flex: none; max-width: none; }
.mt-panel .mt-head { display: flex; align-items: baseline; gap: 8px; flex-wrap: wrap; margin-bottom: 6px; }
.mt-panel .mt-head b { font-size: calc(15px * var(--mt-scale)); overflow-wrap: anywhere; }
.mt-panel .mt-sec { margin: 0 0 10px; padding: 6px 8px; border-left: 3px solid var(--mt-border); background: var(--mt-bg2); border-radius: 0 4px 4px 0; }
.mt-panel .mt-sec.mt-sec-chain { border-left-color: var(--mt-orange); }
.mt-panel .mt-sec.mt-sec-acc { border-left-color: var(--mt-blue); }
.mt-panel .mt-sec.mt-sec-hook { border-left-color: var(--mt-purple); }
.mt-panel .mt-sec h4 { margin: 0 0 4px; font-size: calc(12px * var(--mt-scale)); font-weight: 600; text-transform: uppercase;
  letter-spacing: .04em; color: var(--mt-fg2); }
.mt-panel .mt-math { margin: 3px 0; overflow-x: auto; overflow-y: hidden; padding: 1px 0; }
.mt-panel .mt-math math { display: inline math; math-style: normal; }
.mt-panel .mt-line { font-family: var(--mt-mono); font-size: calc(13px * var(--mt-scale)); white-space: pre-wrap; word-break: break-word; }
.mt-panel .mt-chip { display: inline-block; border: 1px solid var(--mt-border); border-radius: 10px;
  padding: 0 7px; margin: 2px 3px 2px 0; font-size: calc(12px * var(--mt-scale)); white-space: nowrap; background: var(--mt-bg); }
.mt-panel .mt-chip.mt-chip-ready { border: 1px dashed var(--mt-orange); }
.mt-panel .mt-chip.mt-chip-next { border: 1.5px solid var(--mt-orange); font-weight: 600; }
.mt-panel .mt-chip b { color: var(--mt-orange-text); }
.mt-panel .mt-changed { color: var(--mt-purple-text); font-weight: 600; }
.mt-panel .mt-src { color: var(--mt-fg2); }
"""
