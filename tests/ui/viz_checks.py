"""Measurements of viz outputs in a real browser, shared by the exported-HTML tests and the
JupyterLab tests: node boxes against the pane that clips them, against each other and against the
zoom buttons, the room
between a node's texts and its box, on-screen font sizes of every visible text, and WCAG contrast
from computed colours."""

# every g.node's box against its clipping pane (.mt-graph), for each pane under `root`
GEOMETRY_JS = """(root) => {
  const out = [];
  for (const pane of root.querySelectorAll('.mt-graph')) {
    const b = pane.getBoundingClientRect();
    const nodes = [...pane.querySelectorAll('g.node')].map((n) => {
      const r = n.getBoundingClientRect();
      return {id: n.id, left: r.left - b.left, top: r.top - b.top, right: r.right - b.left, bottom: r.bottom - b.top};
    });
    const cur = pane.querySelector('g.node.mt-current');
    const c = cur ? cur.getBoundingClientRect() : null;
    out.push({width: b.width, height: b.height, zoom: parseFloat(pane.dataset.zoom || '1'), nodes,
              current: c ? {id: cur.id, left: c.left - b.left, top: c.top - b.top, right: c.right - b.left,
                            bottom: c.bottom - b.top} : null});
  }
  return out;
}"""

# on-screen size and contrast of every visible text under `root`
TEXTS_JS = """(root) => {
  const cv = document.createElement('canvas'); cv.width = cv.height = 1;
  const ctx = cv.getContext('2d', {willReadFrequently: true});
  function rgba(c) {
    ctx.clearRect(0, 0, 1, 1); ctx.fillStyle = '#000'; ctx.fillStyle = c; ctx.fillRect(0, 0, 1, 1);
    const d = ctx.getImageData(0, 0, 1, 1).data; return [d[0], d[1], d[2], d[3] / 255];
  }
  function over(top, bottom) {      // top (rgba) composited on an opaque bottom
    const a = top[3]; return [0, 1, 2].map((i) => top[i] * a + bottom[i] * (1 - a)).concat([1]);
  }
  function pageBg() {
    for (const el of [document.body, document.documentElement]) {
      const c = rgba(getComputedStyle(el).backgroundColor); if (c[3] > 0) return over(c, [255, 255, 255]);
    }
    return [255, 255, 255, 1];
  }
  function htmlBg(el) {           // the stack of backgrounds behind an element, composited
    const layers = [];
    for (let p = el; p && p.nodeType === 1; p = p.parentElement) {
      const c = rgba(getComputedStyle(p).backgroundColor);
      if (c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
    }
    let bg = layers.length && layers[layers.length - 1][3] >= 1 ? layers.pop() : pageBg();
    while (layers.length) bg = over(layers.pop(), bg);
    return bg;
  }
  function svgBg(t) {
    const g = t.closest('g.node');
    const shape = g ? g.querySelector('path, polygon, ellipse') : null;
    const svg = t.closest('svg');
    let bg = htmlBg(svg.parentElement);
    const cl = t.closest('g.cluster');
    if (!g && cl) { const s = cl.querySelector('path, polygon'); if (s) bg = over(rgba(getComputedStyle(s).fill), bg); }
    if (shape) { const f = getComputedStyle(shape).fill; if (f && f !== 'none') bg = over(rgba(f), bg); }
    return bg;
  }
  function lum(c) {
    const [r, g, b] = c.slice(0, 3).map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  }
  function contrast(fg, bg) { const a = lum(fg) + 0.05, b = lum(bg) + 0.05; return a > b ? a / b : b / a; }
  function clipped(el) {
    const r = el.getBoundingClientRect();
    if (!r.width || !r.height) return true;
    for (let p = el.parentElement; p; p = p.parentElement) {
      if (p.nodeType !== 1) continue;
      const s = getComputedStyle(p);
      if (s.overflow !== 'visible' || p.classList.contains('mt-graph')) {
        const b = p.getBoundingClientRect();
        if (!b.width || !b.height) continue;
        if (r.right <= b.left || r.left >= b.right || r.bottom <= b.top || r.top >= b.bottom) return true;
      }
    }
    return false;
  }
  const out = [];
  for (const t of root.querySelectorAll('svg text')) {
    if (!t.textContent.trim() || getComputedStyle(t).visibility === 'hidden' || clipped(t)) continue;
    const svg = t.ownerSVGElement, k = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    const cs = getComputedStyle(t);
    const fg = over(rgba(cs.fill), svgBg(t));
    out.push({text: t.textContent.trim().slice(0, 40), px: parseFloat(cs.fontSize) * k,
              contrast: contrast(fg, svgBg(t)), where: 'svg'});
  }
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!n.textContent.trim() || !el || el.closest('svg, style, script, option, annotation, [hidden]')) continue;
    const cs = getComputedStyle(el);
    if (cs.visibility === 'hidden' || cs.display === 'none' || clipped(el)) continue;
    const bg = htmlBg(el), fg = over(rgba(cs.color), bg);
    out.push({text: n.textContent.trim().slice(0, 40), px: parseFloat(cs.fontSize), contrast: contrast(fg, bg),
              where: el.className || el.tagName});
  }
  return out;
}"""

# the room (CSS px on screen) between each text of a graph node and its box, left and right: a
# label the layout measured too narrow runs over its box (negative) or touches it
TEXT_ROOM_JS = """(root) => [...root.querySelectorAll('.mt-graph g.node')].flatMap((g) => {
  const shape = g.querySelector('path, polygon, ellipse');
  if (!shape || getComputedStyle(g).display === 'none') return [];
  const b = shape.getBoundingClientRect();
  return [...g.querySelectorAll('text')].filter((t) => t.textContent.trim()).map((t) => {
    const r = t.getBoundingClientRect();
    return {node: g.id, text: t.textContent.trim(), left: r.left - b.left, right: b.right - r.right};
  });
})"""

# the nodes under the zoom buttons that float over a graph's pane (viz.draw's outputs)
UNDER_BAR_JS = """(root) => [...root.querySelectorAll('.mt-graphwrap')].flatMap((wrap) => {
  const bar = wrap.querySelector('.mt-zoombar');
  if (!bar || bar.hidden) return [];
  const b = bar.getBoundingClientRect();
  return [...wrap.querySelectorAll('g.node')].filter((g) => {
    const r = g.getBoundingClientRect();
    return r.left < b.right && b.left < r.right && r.top < b.bottom && b.top < r.bottom;
  }).map((g) => g.id);
})"""


def cramped(rooms, min_px=2.0):
    """The texts (from TEXT_ROOM_JS) with less than `min_px` between them and their box's side."""
    return [r for r in rooms if min(r["left"], r["right"]) < min_px]


def overlapping(pane, slack=0.5):
    """Pairs of node boxes of one pane (from GEOMETRY_JS) that overlap."""
    nodes = pane["nodes"]
    return [(a["id"], b["id"]) for i, a in enumerate(nodes) for b in nodes[i + 1:]
            if a["left"] < b["right"] - slack and b["left"] < a["right"] - slack
            and a["top"] < b["bottom"] - slack and b["top"] < a["bottom"] - slack]


def outside(pane, slack=1.0):
    """The nodes of one pane (from GEOMETRY_JS) whose box is not inside it."""
    return [n for n in pane["nodes"] if n["left"] < -slack or n["top"] < -slack
            or n["right"] > pane["width"] + slack or n["bottom"] > pane["height"] + slack]


def inside(box, pane, slack=1.0):
    return (box is not None and box["left"] >= -slack and box["top"] >= -slack
            and box["right"] <= pane["width"] + slack and box["bottom"] <= pane["height"] + slack)


def too_small(texts, min_px):
    return [t for t in texts if t["px"] < min_px - 0.05]


def low_contrast(texts, ratio=4.5):
    return [t for t in texts if t["contrast"] < ratio - 0.01]
