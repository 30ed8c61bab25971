"""The pan/zoom pane every graph in `viz` is shown in (browser side, plain JavaScript).

`mtViewport(pane, svg, opts)` fits the laid-out SVG in both dimensions into the space the
page has (the pane grows up to the height of the notebook's scrolling area or the window),
but never shrinks text under 12 CSS px (16 px at scale 1.5): a graph too tall for that makes
the pane taller than the page, which then scrolls; one too wide widens the pane, and the
output around it scrolls sideways. It re-fits when the pane's width or the window changes (ResizeObserver), and
lets the user drag to pan, ctrl+wheel / pinch / -/+ to zoom (a plain wheel zooms once the
graph was clicked) and double-click to fit. `follow(el)` pans the smallest amount that
brings an element (the running node) back into the pane when zoomed in. The SVG is moved
with one CSS transform, so a zoom or a pan costs one style write.
"""

VIEWPORT = r"""
// an SVG laid out in the browser gets what Python's finish_svg gives a server-side one:
// the theme's class, text classes by content, no <title> of raw node names
function mtFinishSvg(svg, classes) {
  svg.classList.add("mt-dag");
  svg.removeAttribute("id");
  for (const t of svg.querySelectorAll("title")) t.remove();
  for (const t of svg.querySelectorAll("text")) {
    const c = classes[t.textContent.replace(/\u00a0/g, " ").trim()] || classes[t.textContent.trim()];
    if (c) t.classList.add(c);
  }
  return svg;
}

function mtViewport(pane, svg, opts) {
  opts = opts || {};
  const PAD = 6, MIN_H = opts.minHeight || 160;
  const natW = svg.viewBox.baseVal.width * 4 / 3, natH = svg.viewBox.baseVal.height * 4 / 3;
  svg.style.position = "absolute"; svg.style.left = "0"; svg.style.top = "0";
  svg.style.transformOrigin = "0 0"; svg.style.maxWidth = "none"; svg.style.maxHeight = "none";
  svg.style.willChange = "transform";     // its own layer: a pan or a zoom repaints nothing else
  svg.style.width = natW + "px"; svg.style.height = natH + "px";
  let z = 1, tx = 0, ty = 0, fitZ = 1, manual = false;
  function apply() { svg.style.transform = `translate(${tx}px, ${ty}px) scale(${z})`; pane.dataset.zoom = z.toFixed(4); }
  function available() { return Math.max(MIN_H, mtPageHeight(pane) - (opts.reserve ? opts.reserve() : 0) - 24); }
  // the smallest zoom at which every text is still legible (12 px, 16 px at scale 1.5)
  const floorZ = mtTextFloorZoom(svg, pane, opts.minTextPx);
  // the zoom that fits the whole graph into a pane `w` wide (height: what the page has); never
  // below the text floor: the pane then grows taller than the page (which scrolls) instead;
  // `fits`: the width still holds the graph at that zoom
  function fitFor(w) {
    const maxZ = Math.max(opts.maxZoom || 1, floorZ);
    const zw = Math.min(maxZ, (w - 2 * PAD) / natW);
    let h = Math.min(available(), Math.max(MIN_H, natH * zw + 2 * PAD));
    let z = Math.max(0.02, Math.min(zw, (h - 2 * PAD) / natH));
    if (z < floorZ) { z = floorZ; h = Math.max(MIN_H, natH * z + 2 * PAD); }
    return { z, h, fits: natW * z + 2 * PAD <= w + 0.5 };
  }
  // a graph too wide for the output at the text floor widens the pane, and the output scrolls
  // sideways (as a too-tall one makes the page scroll): nothing clipped, nothing illegible
  function fit() {
    if (pane.style.minWidth) pane.style.minWidth = "";
    if (!natW || !pane.clientWidth) return;
    const f = fitFor(pane.clientWidth);
    if (!f.fits) pane.style.minWidth = Math.ceil(natW * f.z + 2 * PAD) + "px";
    pane.style.height = Math.round(f.h) + "px";
    z = fitZ = f.z; manual = false;
    tx = (pane.clientWidth - natW * z) / 2; ty = (pane.clientHeight - natH * z) / 2;
    apply();
    if (opts.onfit) opts.onfit(z);
  }
  function zoomAt(factor, cx, cy) {
    const nz = Math.max(fitZ * 0.5, Math.min(Math.max(4, fitZ * 4), z * factor));
    if (cx === undefined) { cx = pane.clientWidth / 2; cy = pane.clientHeight / 2; }
    tx = cx - (cx - tx) * nz / z; ty = cy - (cy - ty) * nz / z; z = nz; manual = true;
    apply();
  }
  function panBy(dx, dy) { tx += dx; ty += dy; manual = true; apply(); }
  // bring `el` into the pane (centre it) if any part of it is outside
  function follow(el) {
    if (!el) return;
    const b = pane.getBoundingClientRect(), r = el.getBoundingClientRect();
    if (!b.width || !b.height) return;
    const m = 4;
    if (r.left >= b.left + m && r.right <= b.right - m && r.top >= b.top + m && r.bottom <= b.bottom - m) return;
    if (r.width > b.width - 2 * m || r.height > b.height - 2 * m) { fit(); return; }
    tx += (b.left + b.width / 2) - (r.left + r.width / 2);
    ty += (b.top + b.height / 2) - (r.top + r.height / 2);
    apply();
  }
  const vp = { fit, fitFor, zoomAt, panBy, follow, natW, natH, floorZ,
    get zoom() { return z; }, get fitZoom() { return fitZ; }, get manual() { return manual; } };
  mtPointerControls(pane, vp);
  const unwatch = mtWatchSize(pane, () => (opts.onresize || fit)());
  vp.key = (e) => {
    if (e.key === "+" || e.key === "=") zoomAt(1.25);
    else if (e.key === "-" || e.key === "_") zoomAt(0.8);
    else if (e.key === "0") fit();
    else return false;
    return true;
  };
  vp.destroy = unwatch;
  return vp;
}

// the zoom below which the SVG's smallest text would be under `minPx` CSS px (default: 12 px
// at scale 1, 16 px at scale 1.5, read from the --mt-scale the outputs carry); Graphviz's SVG
// counts in points, shown at 4/3 px each at zoom 1
function mtTextFloorZoom(svg, pane, minPx) {
  let pt = Infinity;
  for (const t of svg.querySelectorAll("text")) {
    const f = parseFloat(t.getAttribute("font-size"));
    if (f > 0 && f < pt && t.textContent.trim()) pt = f;
  }
  if (!isFinite(pt)) return 0;
  if (!minPx) {
    const scale = parseFloat(getComputedStyle(pane).getPropertyValue("--mt-scale")) || 1;
    minPx = scale >= 1 ? 12 + 8 * (scale - 1) : 12 * scale;
  }
  return minPx / (pt * 4 / 3);
}

// a side panel `side` px wide goes below the graph when beside it the graph would not fit
// the width at a legible zoom, or would shrink to under 0.8 of the zoom it has alone
function mtPanelBelow(vp, bodyW, side) {
  if (bodyW - side <= 240) return true;
  const wide = vp.fitFor(bodyW), beside = vp.fitFor(bodyW - side);
  return !beside.fits || beside.z < 0.8 * wide.z;
}

// the tensor panel of clicked nodes: `box` shows details[name] (HTML built in Python), with a
// close button; clicking the same node again closes it
function mtTensorBox(box, details, closeLabel, root) {
  let shown = null, marked = null;
  function hide() {
    box.hidden = true; box.innerHTML = ""; shown = null;
    if (marked) marked.classList.remove("mt-selected");
    marked = null;
    if (root) delete root.dataset.selected;
  }
  function show(name, el) {
    if (!details[name] || name === shown) { hide(); return; }
    if (marked) marked.classList.remove("mt-selected");
    box.innerHTML = `<button class="mt-close" type="button">${closeLabel || "×"}</button>` + details[name];
    box.querySelector(".mt-close").addEventListener("click", (e) => { e.stopPropagation(); hide(); });
    box.hidden = false; shown = name; marked = el || null;
    if (marked) marked.classList.add("mt-selected");
    if (root) root.dataset.selected = name;
  }
  return { show, hide, get shown() { return shown; } };
}

// a pane taller than the page (the text floor) can hold the running node below the fold:
// scroll the page (the notebook, or the window) by the least that shows it, but only while the
// pane is on screen (a player left running elsewhere does not pull the page back)
function mtReveal(pane, el) {
  let sc = null;
  for (let p = pane.parentElement; p; p = p.parentElement) {
    if (p.closest(".jp-OutputArea, .output_area, .cell-output")) continue;
    const s = getComputedStyle(p).overflowY;
    if ((s === "auto" || s === "scroll") && p.scrollHeight > p.clientHeight) { sc = p; break; }
  }
  const view = sc ? sc.getBoundingClientRect() : { top: 0, bottom: window.innerHeight };
  const b = pane.getBoundingClientRect(), r = el.getBoundingClientRect(), m = 8;
  if (b.bottom <= view.top || b.top >= view.bottom) return;
  let dy = 0;
  if (r.bottom > view.bottom - m) dy = r.bottom - view.bottom + m;
  if (r.top - dy < view.top + m) dy = r.top - view.top - m;
  if (dy) (sc || window).scrollBy(0, dy);
}

// the height of the area the page scrolls in (JupyterLab's notebook panel, else the window);
// an output area that scrolls sideways is not it (its height is ours)
function mtPageHeight(pane) {
  for (let p = pane.parentElement; p; p = p.parentElement) {
    if (p.closest(".jp-OutputArea, .output_area, .cell-output")) continue;
    const s = getComputedStyle(p).overflowY;
    if ((s === "auto" || s === "scroll") && p.clientHeight > 200) return Math.min(p.clientHeight, window.innerHeight);
  }
  return window.innerHeight;
}

// calls back when the pane's container changes width (ResizeObserver) or the window resizes
function mtWatchSize(pane, callback) {
  let lastW = -1;
  const ro = typeof ResizeObserver !== "undefined" ? new ResizeObserver(() => {
    const w = pane.parentElement ? pane.parentElement.clientWidth : pane.clientWidth;
    if (w !== lastW) { lastW = w; callback(); }
  }) : null;
  if (ro) ro.observe(pane.parentElement || pane);
  window.addEventListener("resize", callback);
  return () => { if (ro) ro.disconnect(); window.removeEventListener("resize", callback); };
}

// drag to pan (a click that did not move still reaches the node), pinch or ctrl+wheel to zoom
// (a plain wheel too once the graph was clicked), double-click to fit
function mtPointerControls(pane, vp) {
  let active = false;
  const pts = new Map();
  let moved = false, pinch = 0;
  pane.addEventListener("pointerdown", (e) => {
    if (e.button !== 0) return;
    active = true;
    pts.set(e.pointerId, [e.clientX, e.clientY]); moved = false;
    if (pts.size === 2) { const [a, c] = [...pts.values()]; pinch = Math.hypot(a[0] - c[0], a[1] - c[1]); }
  });
  pane.addEventListener("pointermove", (e) => {
    const p = pts.get(e.pointerId);
    if (!p) return;
    const dx = e.clientX - p[0], dy = e.clientY - p[1];
    if (!moved && Math.hypot(dx, dy) < 4) return;
    if (!moved) { moved = true; try { pane.setPointerCapture(e.pointerId); } catch (_) {} pane.classList.add("mt-dragging"); }
    pts.set(e.pointerId, [e.clientX, e.clientY]);
    if (pts.size === 2) {
      const [a, c] = [...pts.values()], d = Math.hypot(a[0] - c[0], a[1] - c[1]);
      const b = pane.getBoundingClientRect();
      if (pinch) vp.zoomAt(d / pinch, (a[0] + c[0]) / 2 - b.left, (a[1] + c[1]) / 2 - b.top);
      pinch = d;
    } else vp.panBy(dx, dy);
  });
  const up = (e) => { pts.delete(e.pointerId); pinch = 0; pane.classList.remove("mt-dragging"); };
  pane.addEventListener("pointerup", up);
  pane.addEventListener("pointercancel", up);
  pane.addEventListener("pointerleave", () => { if (!pts.size) active = false; });
  // a click that ended a drag is not a click on a node
  pane.addEventListener("click", (e) => { if (moved) { e.stopPropagation(); e.preventDefault(); moved = false; } }, true);
  pane.addEventListener("wheel", (e) => {
    if (!e.ctrlKey && !e.metaKey && !active) return;      // the page keeps scrolling
    e.preventDefault();
    const b = pane.getBoundingClientRect();
    vp.zoomAt(Math.exp(-Math.max(-60, Math.min(60, e.deltaY)) * 0.004), e.clientX - b.left, e.clientY - b.top);
  }, { passive: false });
  pane.addEventListener("dblclick", (e) => { e.preventDefault(); vp.fit(); });
}
"""

CSS = r"""
.mtviz .mt-graph { position: relative; overflow: hidden; touch-action: none; cursor: grab;
  border: 1px solid var(--mt-border2); border-radius: 4px; background: var(--mt-bg); box-sizing: border-box; }
.mtviz .mt-graph.mt-dragging { cursor: grabbing; }
.mtviz .mt-body, .mtviz .mt-exbody, .mtviz .mt-graphwrap { overflow-x: auto; }
.mtviz .mt-graph.mt-static { overflow: visible; cursor: auto; touch-action: auto; }
.mtviz .mt-graph.mt-static svg { display: block; margin: 0 auto; max-width: 100%; max-height: 85vh;
  width: auto; height: auto; }
"""
