"""The stepper's browser side: one ES module (anywidget `_esm`) and its stylesheet.

The SVG is laid out once by Python; stepping only toggles classes on nodes and edges (found
once by id), swaps the side panel's HTML and the text of gradient cells, so a step costs a
few milliseconds and needs no kernel. The same module drives the static export, where a
tiny stand-in for the widget model replaces the kernel.
"""

ESM = r"""
function render({ model, el }) {
  const data = model.get("data");
  const steps = data.steps;
  const last = steps.length - 1;
  const P = data.prefix;
  const root = document.createElement("div");
  root.className = "mtviz mt-stepper";
  root.tabIndex = 0;
  root.setAttribute("data-lm-suppress-shortcuts", "true");
  root.setAttribute("data-p-suppress-shortcuts", "true");
  root.innerHTML = `
    <div class="mt-toolbar">
      <button class="mt-btn mt-reset" title="Reset (Home)">&#x21BA; Reset</button>
      <button class="mt-btn mt-back" title="Back (&#x2190;)">&#x25C0; Back</button>
      <button class="mt-btn mt-play" title="Play / pause (space)">&#x25B6; Play</button>
      <button class="mt-btn mt-next mt-primary" title="Next (&#x2192;)">Next &#x25B6;</button>
      <input class="mt-slider" type="range" min="0" max="${last}" step="1" value="0" aria-label="step">
      <span class="mt-counter"></span>
      <span class="mt-zoom">
        <button class="mt-btn mt-zout" title="Zoom out">&#x2212;</button>
        <button class="mt-btn mt-zfit" title="Fit to width">fit</button>
        <button class="mt-btn mt-zin" title="Zoom in">+</button>
      </span>
    </div>
    <div class="mt-legend">
      <span class="mt-key mt-key-cur">running now</span>
      <span class="mt-key mt-key-ready">in the ready queue</span>
      <span class="mt-key mt-key-done">done</span>
      <span class="mt-key mt-key-grad">gradient on an edge</span>
      <span class="mt-hint">&#x2190; &#x2192; to step, space to play, click a node to jump</span>
    </div>
    <div class="mt-body">
      <div class="mt-graph"></div>
      <div class="mt-panel" aria-live="polite"></div>
    </div>`;
  el.appendChild(root);
  const q = (s) => root.querySelector(s);
  const graph = q(".mt-graph"), panel = q(".mt-panel"), slider = q(".mt-slider");
  const counter = q(".mt-counter"), playBtn = q(".mt-play");
  graph.innerHTML = data.svg;
  const svg = graph.querySelector("svg");
  const natW = svg ? svg.viewBox.baseVal.width : 0;
  const natH = svg ? svg.viewBox.baseVal.height : 0;
  const byId = (id) => svg ? svg.querySelector(`[id="${P}${id}"]`) : null;

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
  function setCls(item, cls) {
    if (item.cls === cls || !item.el) return;
    if (item.cls) item.el.classList.remove(item.cls);
    if (cls) item.el.classList.add(cls);
    item.cls = cls;
  }

  let cur = -1, timer = null, zoom = 1;
  function apply(k) {
    k = Math.max(0, Math.min(last, k | 0));
    const st = steps[k];
    const current = new Set(st.nodes);
    const ready = new Set(st.ready);
    for (const n of nodes) {
      let cls = "";
      if (current.has(n.name)) cls = "mt-current";
      else if (n.exec !== undefined && n.exec < k) cls = "mt-done";
      else if (ready.has(n.name)) cls = "mt-ready";
      setCls(n, cls);
    }
    for (const e of edges) setCls(e, e.step > k ? "mt-e-hidden" : (e.step === k ? "mt-e-active" : "mt-e-done"));
    for (const c of gradCells) {
      let text = c.texts[0][1];
      for (const [s, t] of c.texts) { if (s <= k) text = t; else break; }
      if (text !== c.cur) { c.el.textContent = text; c.cur = text; }
    }
    panel.innerHTML = st.panel;
    slider.value = String(k);
    counter.textContent = `step ${k} / ${last}`;
    q(".mt-back").disabled = k === 0;
    q(".mt-reset").disabled = k === 0;
    q(".mt-next").disabled = k === last;
    cur = k;
    root.dataset.step = String(k);
    if (first() && first().el) reveal(first().el);
  }
  function first() { return cur >= 0 ? nodeByName[steps[cur].nodes[0]] : null; }
  function reveal(target) {
    const box = graph.getBoundingClientRect(), r = target.getBoundingClientRect();
    if (!box.width || !box.height) return;
    if (r.left < box.left || r.right > box.right)
      graph.scrollLeft += (r.left + r.width / 2) - (box.left + box.width / 2);
    if (r.top < box.top || r.bottom > box.bottom)
      graph.scrollTop += (r.top + r.height / 2) - (box.top + box.height / 2);
  }
  function go(k, sync = true) {
    k = Math.max(0, Math.min(last, k | 0));
    if (k === cur) return;
    apply(k);
    if (sync) { model.set("index", k); model.save_changes(); }
  }
  function stop() {
    if (timer !== null) { clearInterval(timer); timer = null; }
    playBtn.innerHTML = "&#x25B6; Play";
  }
  function play() {
    if (timer !== null) { stop(); return; }
    if (cur >= last) go(0);
    playBtn.innerHTML = "&#x23F8; Pause";
    timer = setInterval(() => { if (cur >= last) stop(); else go(cur + 1); }, data.interval || 900);
  }
  function setZoom(z) {
    if (!svg || !natW) return;
    zoom = Math.max(0.2, Math.min(3, z));
    svg.style.width = (natW * zoom * 4 / 3) + "px";
    svg.style.height = (natH * zoom * 4 / 3) + "px";
    svg.style.maxWidth = "none";
  }
  const MIN_FIT = 0.85;     // 9pt labels stay >= 10px; a graph wider than that scrolls sideways
  function fit() {
    if (!svg || !natW) return;
    // a graph too wide for its column beside the panel (a long left-to-right chain) gets the
    // whole row, the panel goes below it; what still does not fit scrolls, it is never clipped
    const beside = q(".mt-body").clientWidth - 330 - 8;
    root.classList.toggle("mt-wide", natW * 4 / 3 * MIN_FIT > beside);
    const w = graph.clientWidth - 8;
    if (w > 0) setZoom(Math.max(MIN_FIT, Math.min(1, w / (natW * 4 / 3))));
    if (first() && first().el) reveal(first().el);
  }
  q(".mt-next").addEventListener("click", () => { stop(); go(cur + 1); });
  q(".mt-back").addEventListener("click", () => { stop(); go(cur - 1); });
  q(".mt-reset").addEventListener("click", () => { stop(); go(0); });
  playBtn.addEventListener("click", () => play());
  slider.addEventListener("input", () => { stop(); go(parseInt(slider.value, 10)); });
  q(".mt-zin").addEventListener("click", () => setZoom(zoom * 1.25));
  q(".mt-zout").addEventListener("click", () => setZoom(zoom / 1.25));
  q(".mt-zfit").addEventListener("click", () => fit());
  root.addEventListener("keydown", (e) => {
    if (e.target && e.target.tagName === "INPUT" && e.target !== slider) return;
    let handled = true;
    if (e.key === "ArrowRight" || e.key === "ArrowDown") { stop(); go(cur + 1); }
    else if (e.key === "ArrowLeft" || e.key === "ArrowUp") { stop(); go(cur - 1); }
    else if (e.key === "Home") { stop(); go(0); }
    else if (e.key === "End") { stop(); go(last); }
    else if (e.key === " " || e.key === "Spacebar") play();
    else handled = false;
    if (handled) { e.preventDefault(); e.stopPropagation(); }
  });
  for (const n of nodes) {
    if (!n.el || n.exec === undefined) continue;
    n.el.style.cursor = "pointer";
    n.el.addEventListener("click", () => { stop(); go(n.exec); root.focus({ preventScroll: true }); });
  }
  const onChange = () => { const k = model.get("index"); if (k !== cur) apply(k); };
  model.on("change:index", onChange);
  apply(model.get("index") || 0);
  requestAnimationFrame(() => fit());
  return () => { stop(); model.off && model.off("change:index", onChange); };
}
export default { render };
"""

CSS = r"""
.mt-stepper { border: 1px solid var(--mt-border); border-radius: 6px; background: var(--mt-bg);
  padding: 8px 10px; outline: none; box-sizing: border-box; max-width: 100%; }
.mt-stepper:focus-visible { box-shadow: 0 0 0 2px var(--mt-blue); }
.mt-stepper .mt-toolbar { display: flex; align-items: center; gap: 6px; flex-wrap: wrap; }
.mt-stepper .mt-btn { font: inherit; font-size: 12px; line-height: 18px; padding: 2px 10px;
  border: 1px solid var(--mt-border); background: var(--mt-bg2); color: var(--mt-fg);
  border-radius: 4px; cursor: pointer; }
.mt-stepper .mt-btn:hover:not(:disabled) { border-color: var(--mt-fg3); }
.mt-stepper .mt-btn:disabled { opacity: .45; cursor: default; }
.mt-stepper .mt-btn.mt-primary { border-color: var(--mt-orange); color: var(--mt-orange); font-weight: 600; }
.mt-stepper .mt-slider { flex: 1 1 140px; min-width: 100px; accent-color: var(--mt-orange); }
.mt-stepper .mt-counter { font-family: var(--mt-mono); font-size: 12px; color: var(--mt-fg2); min-width: 88px; }
.mt-stepper .mt-zoom { display: inline-flex; gap: 2px; }
.mt-stepper .mt-zoom .mt-btn { padding: 2px 7px; }
.mt-stepper .mt-legend { display: flex; flex-wrap: wrap; gap: 12px; margin: 6px 0; font-size: 11px; color: var(--mt-fg2); align-items: center; }
.mt-stepper .mt-key::before { content: ""; display: inline-block; width: 14px; height: 10px; border-radius: 3px;
  margin-right: 4px; vertical-align: -1px; border: 1.5px solid var(--mt-fg3); background: var(--mt-op-fill); }
.mt-stepper .mt-key-cur::before { background: var(--mt-cur-fill); border: 2.5px solid var(--mt-orange); }
.mt-stepper .mt-key-ready::before { border: 1.5px dashed var(--mt-orange); }
.mt-stepper .mt-key-done::before { background: var(--mt-bg); border-color: var(--mt-border); }
.mt-stepper .mt-key-grad::before { height: 0; border: none; border-top: 2.5px solid var(--mt-orange); border-radius: 0; vertical-align: 3px; }
.mt-stepper .mt-hint { margin-left: auto; font-style: italic; }
.mt-stepper .mt-body { display: flex; gap: 10px; align-items: flex-start; flex-wrap: wrap; }
.mt-stepper .mt-graph { flex: 1 1 420px; min-width: 260px; max-height: 560px; overflow: auto;
  border: 1px solid var(--mt-border2); border-radius: 4px; background: var(--mt-bg); padding: 4px; box-sizing: border-box;
  contain: content; }
.mt-stepper .mt-graph svg { display: block; margin: 0 auto; }
.mt-stepper.mt-wide .mt-graph { flex-basis: 100%; }
.mt-stepper.mt-wide .mt-panel { max-width: none; }
.mt-stepper .mt-panel { flex: 1 1 320px; max-width: 460px; min-width: 240px; max-height: 560px; overflow: auto;
  contain: content; }
.mt-panel .mt-head { display: flex; align-items: baseline; gap: 8px; flex-wrap: wrap; margin-bottom: 6px; }
.mt-panel .mt-head b { font-size: 14px; }
.mt-panel .mt-sec { margin: 0 0 10px; padding: 6px 8px; border-left: 3px solid var(--mt-border); background: var(--mt-bg2); border-radius: 0 4px 4px 0; }
.mt-panel .mt-sec.mt-sec-chain { border-left-color: var(--mt-orange); }
.mt-panel .mt-sec.mt-sec-acc { border-left-color: var(--mt-blue); }
.mt-panel .mt-sec.mt-sec-hook { border-left-color: var(--mt-purple); }
.mt-panel .mt-sec h4 { margin: 0 0 4px; font-size: 10.5px; font-weight: 600; text-transform: uppercase;
  letter-spacing: .05em; color: var(--mt-fg2); }
.mt-panel .mt-math { margin: 3px 0; overflow-x: auto; overflow-y: hidden; padding: 1px 0; }
.mt-panel .mt-math math { display: inline math; math-style: normal; }
.mt-panel .mt-line { font-family: var(--mt-mono); font-size: 12px; white-space: pre-wrap; word-break: break-word; }
.mt-panel .mt-chip { display: inline-block; border: 1px solid var(--mt-border); border-radius: 10px;
  padding: 0 7px; margin: 2px 3px 2px 0; font-size: 11px; white-space: nowrap; background: var(--mt-bg); }
.mt-panel .mt-chip.mt-chip-ready { border: 1px dashed var(--mt-orange); }
.mt-panel .mt-chip.mt-chip-next { border: 1.5px solid var(--mt-orange); font-weight: 600; }
.mt-panel .mt-chip b { color: var(--mt-orange); }
.mt-panel .mt-changed { color: var(--mt-purple); font-weight: 600; }
.mt-panel .mt-src { color: var(--mt-fg2); }
"""
