"""viz.gradcheck and viz.eps_sweep: gradcheck's Jacobians as heatmaps.

`viz.gradcheck(func, inputs, **gradcheck_kwargs)` runs
`microtorch.autograd.gradcheck.check` and draws, for each (output, input) pair, a
triptych numerical | analytical | |analytical - numerical| on one shared colour scale,
with the entries outside atol + rtol*|numerical| outlined, titled with the pair, the
verdict and the worst entry; a table lists the worst entries with their indices. In fast
mode it also shows the random vectors u (per input) and v (per output) and the two scalars
v^T J u that were compared. `viz.eps_sweep(func, inputs)` plots the finite-difference error
against eps (log-log): truncation error falls as eps^2, round-off grows as 1/eps.

Figures are matplotlib `Figure`s (no pyplot state). In a notebook they show as inline SVG
whose text follows the light/dark theme; `.save()` writes PNG, SVG or HTML.
"""
import io
import json
import math
import re

import numpy as np

from . import _format as F
from ._i18n import tr
from ._theme import scale_style, style_tag

_FG = "#010203"          # a sentinel text colour, replaced by the theme's in HTML output
_THEME_FG = {"light": "#1f2328", "dark": "#e6edf3"}
_FAIL_SENTINEL = "#010204"  # the failing colour, replaced by the theme's red text in HTML output
_THEME_FAIL = {"#1f2328": "#cf222e", "#e6edf3": "#ff7b72"}


def _fail(fg):
    """The colour of failing entries for a figure drawn with text colour fg."""
    return _FAIL_SENTINEL if fg == _FG else _THEME_FAIL.get(fg, "#cf222e")


def _check_inputs(func, inputs, what):
    from .._tensor import Tensor
    if not callable(func):
        raise TypeError(f"viz.{what}: the first argument must be a function of tensors, got "
                        f"{type(func).__name__}")
    tupled = inputs if isinstance(inputs, (tuple, list)) else (inputs,)
    if not any(isinstance(t, Tensor) and t.requires_grad for t in tupled):
        raise ValueError(f"viz.{what}: no input requires grad, so there is no Jacobian to draw; pass "
                         "inputs created with requires_grad=True (float64 recommended), e.g. "
                         "(microtorch.randn(3, dtype=microtorch.float64, requires_grad=True),)")
    return tuple(tupled)


def _run_check(func, inputs, what, **kwargs):
    from ..autograd.gradcheck import check
    kwargs.pop("raise_exception", None)
    try:
        return check(func, inputs, **kwargs)
    except TypeError as e:
        raise TypeError(f"viz.{what}: {e}") from None
    except ValueError as e:
        raise ValueError(f"viz.{what}: {e}") from None


# ---- data ------------------------------------------------------------------------------------
def _unravel(i, shape):
    shape = tuple(shape)
    if not shape:
        return ()
    return tuple(int(x) for x in np.unravel_index(int(i), shape))


def _idx(t):
    return "[" + ", ".join(str(x) for x in t) + "]" if t else "[]"


def heatmap_data(report, pairs="all", diff_scale="shared"):
    """What the heatmaps show, one dict per pair: numerical, analytical, diff (|a - n|), mask,
    tol (atol + rtol*|n|), vmax (the shared scale), diff_vmax, worst and a title; `parts`, the
    rows drawn: one (label None) for a real Jacobian, its real and imaginary parts for a
    complex one, each {label, numerical, analytical, diff, title}."""
    out = []
    chosen = [p for p in report.pairs if p.checked]
    if pairs == "failing":
        chosen = [p for p in chosen if not p.passed]
    elif pairs != "all":
        chosen = list(pairs)
    for p in chosen:
        num = np.asarray(p.numerical)
        ana = np.asarray(p.analytical)
        is_complex = np.iscomplexobj(num) or np.iscomplexobj(ana)
        diff = np.abs(ana - num)
        tol = report.atol + report.rtol * np.abs(num)
        if is_complex:       # two rows: real parts, imaginary parts (one colour scale for both)
            parts = [{"label": "real part", "tag": "Re", "numerical": num.real, "analytical": ana.real},
                     {"label": "imaginary part", "tag": "Im", "numerical": num.imag, "analytical": ana.imag}]
        else:
            parts = [{"label": None, "tag": "", "numerical": num, "analytical": ana}]
        finite = [np.zeros(0)]
        for part in parts:
            part["diff"] = np.abs(part["analytical"] - part["numerical"])
            for a in (part["numerical"], part["analytical"]):
                finite.append(np.abs(a[np.isfinite(a)]).ravel())
        finite = np.concatenate(finite)
        vmax = float(finite.max()) if finite.size else 1.0
        vmax = vmax if vmax > 0 else 1.0
        dfin = diff[np.isfinite(diff)]
        dmax = float(dfin.max()) if dfin.size else 0.0
        drawn = np.concatenate([np.zeros(0)] + [p_["diff"][np.isfinite(p_["diff"])].ravel() for p_ in parts])
        dmax_drawn = float(drawn.max()) if drawn.size else 0.0
        diff_vmax = vmax if diff_scale == "shared" else (dmax_drawn if dmax_drawn > 0 else 1.0)
        mask = np.asarray(p.mask, dtype=bool)
        worst, title = _worst_and_titles(p, num, ana, diff, mask, parts, is_complex)
        out.append({
            "pair": p, "output_index": p.output_index, "input_index": p.input_index, "parts": parts,
            "numerical": num, "analytical": ana, "diff": diff, "mask": mask, "tol": tol,
            "vmax": vmax, "diff_vmax": diff_vmax, "max_abs_error": dmax, "passed": bool(p.passed),
            "worst": worst, "title": title, "complex": is_complex,
            "output_shape": tuple(p.output_shape), "input_shape": tuple(p.input_shape),
        })
    return out


def _worst_and_titles(p, num, ana, diff, mask, parts, is_complex):
    """The worst entry of a pair and the titles of its rows (one per part drawn)."""
    r, c = (int(p.worst[0]), int(p.worst[1])) if p.worst is not None and len(p.worst) == 2 else (0, 0)
    has = num.size > 0
    worst = {
        "row": r, "col": c,
        "output_element": _unravel(r, p.output_shape) if has else (),
        "input_element": _unravel(c, p.input_shape) if has else (),
        "numerical": num[r, c].item() if has else None,
        "analytical": ana[r, c].item() if has else None,
        "abs_error": float(diff[r, c]) if has else 0.0,
    }
    verdict = tr("passed") if p.passed else tr("FAILED ({n} of {m} entries)").format(n=int(mask.sum()), m=mask.size)
    kind = "" if p.kind == "real" else f" [{p.kind}]"
    mode = "" if getattr(p, "mode", "backward") == "backward" else f" ({p.mode} AD)"
    where = dict(o=p.output_index, i=p.input_index, kind=kind, mode=mode, oe=_idx(worst["output_element"]),
                 ie=_idx(worst["input_element"]))
    title = tr("output {o} w.r.t. input {i}{kind}{mode}: {verdict}; worst out{oe}/in{ie}: numerical {n} vs "
               "analytical {a}").format(verdict=verdict, n=F.num(worst["numerical"]) if has else "—",
                                        a=F.num(worst["analytical"]) if has else "—", **where)
    for k, part in enumerate(parts):
        part["title"] = title
        if is_complex and k > 0:       # each row's title gives the worst entry's part drawn in it
            part["title"] = tr("output {o} w.r.t. input {i}{kind}{mode}: imaginary part of the same Jacobian; "
                               "at out{oe}/in{ie}: numerical {n} vs analytical {a}").format(
                n=F.num(part["numerical"][r, c].item()) if has else "—",
                a=F.num(part["analytical"][r, c].item()) if has else "—", **where)
    return worst, title


def worst_entries(item, k=10):
    """The k entries with the largest |a - n| (failing first) of one heatmap_data item."""
    diff = item["diff"]
    if diff.size == 0:
        return []
    flat = np.where(np.isfinite(diff), diff, np.inf).ravel()
    order = np.lexsort((-flat, ~item["mask"].ravel()))[:k]
    rows = []
    for f in order:
        r, c = divmod(int(f), diff.shape[1])
        rows.append({"row": r, "col": c,
                     "output_element": _unravel(r, item["output_shape"]),
                     "input_element": _unravel(c, item["input_shape"]),
                     "numerical": item["numerical"][r, c].item(),
                     "analytical": item["analytical"][r, c].item(),
                     "abs_error": float(diff[r, c]), "tol": float(item["tol"][r, c]),
                     "failing": bool(item["mask"][r, c])})
    return rows


# ---- drawing ---------------------------------------------------------------------------------
def _outline_segments(mask, inset=0.06):
    """Line segments of a square just inside each True cell (cell (i, j) spans [j-.5, j+.5] x
    [i-.5, i+.5]): only failing cells are boxed, never a passing neighbour's border."""
    ii, jj = np.nonzero(np.asarray(mask, dtype=bool))
    if not ii.size:
        return np.zeros((0, 2, 2))
    lo, hi = -0.5 + inset, 0.5 - inset
    corners = [(lo, lo), (hi, lo), (hi, hi), (lo, hi)]
    segs = []
    for k in range(4):
        (x0, y0), (x1, y1) = corners[k], corners[(k + 1) % 4]
        segs.append(np.stack([np.stack([jj + x0, ii + y0], 1), np.stack([jj + x1, ii + y1], 1)], 1))
    return np.concatenate(segs)


def _outline_path(segs):
    """The outline segments as one matplotlib Path (move-to, line-to per segment)."""
    from matplotlib.path import Path
    verts = segs.reshape(-1, 2)
    codes = np.tile([Path.MOVETO, Path.LINETO], len(segs)).astype(np.uint8)
    return Path(verts, codes)


def _rc(fg, scale=None):
    from . import _options
    k = _options.scale() if scale is None else scale
    rc = {"text.color": fg, "axes.labelcolor": fg, "xtick.color": fg, "ytick.color": fg,
          "axes.edgecolor": fg, "axes.titlecolor": fg, "figure.facecolor": "none",
          "axes.facecolor": "none", "savefig.facecolor": "none", "font.size": 10 * k,
          "axes.titlesize": 10.5 * k, "xtick.labelsize": 9.5 * k, "ytick.labelsize": 9.5 * k,
          "legend.fontsize": 9.5 * k, "svg.fonttype": "path", "axes.linewidth": 0.6}
    if _options.lang() == "zh":     # DejaVu Sans has no Chinese glyphs: fall back to a font that has
        from ._i18n_zh import matplotlib_families
        rc["font.family"] = matplotlib_families()
    return rc


# the heatmap figure's layout in inches (at scale 1; text and margins grow with the scale)
_W, _LEFT, _GAP, _CBW, _CBGAP, _GAP2, _RIGHT = 10.5, 0.7, 0.35, 0.12, 0.08, 0.75, 0.6


def _fit_title(title, width_in, fontsize):
    """The title on one line if it fits the figure's width (an estimate: 0.58 em per character
    of bold sans-serif), else broken after its first "; " (and again if need be)."""
    per_line = max(20, int(width_in * 72 / (0.58 * fontsize)))
    if len(title) <= per_line:
        return title
    head, sep, rest = title.partition("; ")
    if not sep or len(head) > per_line:
        import textwrap
        return "\n".join(textwrap.wrap(title, per_line))
    return head + ";\n" + _fit_title(rest, width_in, fontsize)


def _panel_height(item):
    """Heatmaps as tall as their rows need (0.3 in per row), between 1.2 and 2.3 inches."""
    return min(2.3, max(1.2, 0.3 * item["diff"].shape[0] + 0.3))


def _heatmap_figure(items, fg, diff_scale):
    """One row per pair (two for a complex Jacobian). The layout is computed by hand (no
    constrained layout, no tight bbox): a 200x200 triptych draws in a fraction of a second,
    and each heatmap's place in the figure is known exactly (`fig.mt_hits`, for hovering)."""
    import matplotlib
    from matplotlib.figure import Figure
    from . import _options
    k = _options.scale()
    rows = [(i, p, item, part) for i, item in enumerate(items) for p, part in enumerate(item["parts"])]
    W = _W * max(1.0, k ** 0.5)
    for _, _, _, part in rows:
        part["title_lines"] = _fit_title(part["title"], W - _LEFT * k, 11 * k)
    heights = [(0.62 + 0.15 * (k - 1)) * k + 0.19 * k * (part["title_lines"].count("\n"))
               + _panel_height(item) + 0.5 * k for _, _, item, part in rows]
    H = sum(heights) + 0.05
    with matplotlib.rc_context(_rc(fg)):
        fig = Figure(figsize=(W, H))
        fig.mt_hits = []
        top = H
        for (i, p, item, part), row_h in zip(rows, heights):
            top -= row_h
            _heatmap_row(fig, W, H, top + 0.5 * k, _panel_height(item), item, part, fg, diff_scale, (i, p), k)
    return fig


def _heatmap_row(fig, W, H, y0, ph, item, part, fg, diff_scale, key, k):
    """numerical | analytical (+ colour bar) | |difference| (+ colour bar), failing cells boxed."""
    left, gap2, right = _LEFT * k, _GAP2 * k, _RIGHT * k
    w = (W - left - _GAP - _CBGAP - _CBW - gap2 - _CBGAP - _CBW - right) / 3
    xs = [left, left + w + _GAP, left + 2 * w + _GAP + _CBGAP + _CBW + gap2]

    def box(x, bw):
        return [x / W, y0 / H, bw / W, ph / H]
    ax_n, ax_a, ax_d = (fig.add_axes(box(x, w)) for x in xs)
    cax, cax_d = fig.add_axes(box(xs[1] + w + _CBGAP, _CBW)), fig.add_axes(box(xs[2] + w + _CBGAP, _CBW))
    v = item["vmax"]
    kw = dict(cmap="PuOr_r", vmin=-v, vmax=v, interpolation="nearest", aspect="auto")
    im = ax_n.imshow(part["numerical"], **kw)
    ax_a.imshow(part["analytical"], **kw)
    imd = ax_d.imshow(part["diff"], cmap="viridis", vmin=0, vmax=item["diff_vmax"], interpolation="nearest",
                      aspect="auto")
    _mark_failing(item, (ax_n, ax_a, ax_d), _fail(fg))
    tag = part["tag"] + " " if part["tag"] else ""      # "Re " / "Im " for a complex Jacobian
    ax_n.set_title(tag + tr("numerical (finite differences)"), pad=4)
    ax_a.set_title(tag + tr("analytical (backward)"), pad=4)
    ax_d.set_title(f"|{tag}{tr('analytical')} − {tag}{tr('numerical')}|"
                   + (" " + tr("(own scale)") if diff_scale != "shared" else ""), pad=4)
    label = tr("output element")
    ax_n.set_ylabel(label + (f" ({tr(part['label'])})" if part["label"] else ""), labelpad=2)
    for c, source in ((cax, im), (cax_d, imd)):
        cb = fig.colorbar(source, cax=c)
        cb.ax.tick_params(length=2)
        cb.outline.set_edgecolor(fg)
        cb.outline.set_linewidth(0.5)
    color = fg if item["passed"] else _fail(fg)
    fig.text(left / W, (y0 + ph + 0.32 * k) / H, part.get("title_lines", part["title"]), ha="left", va="bottom",
             fontsize=11 * k, fontweight="bold", color=color)
    for name, x in zip(("numerical", "analytical", "diff"), xs):
        fig.mt_hits.append({"item": key[0], "part": key[1], "panel": name, "box": box(x, w)})


def _mark_failing(item, axes, red):
    """A box inside each failing cell (all three panels), a ring around the worst entry."""
    from matplotlib.patches import PathPatch
    import matplotlib.patheffects as pe
    segs = _outline_segments(item["mask"])
    nr, nc = item["diff"].shape
    outline = _outline_path(segs) if len(segs) else None
    many = len(segs) > 2000        # then only the difference panel, and no halo: keeps files small
    for ax in axes:
        if outline is not None and (ax is axes[2] or not many):
            # one compound path per panel (not one artist per cell): fast in SVG and PNG
            patch = PathPatch(outline, fill=False, edgecolor=red, linewidth=0.9 if many else 1.6,
                              capstyle="projecting")
            if not many:
                patch.set_path_effects([pe.Stroke(linewidth=3.2, foreground="white"), pe.Normal()])
            ax.add_artist(patch)           # add_patch would walk every segment for the data limits
        ax.set_xlim(-0.5, nc - 0.5)
        ax.set_ylim(nr - 0.5, -0.5)
        _ticks(ax, nr, nc)
        ax.set_xlabel(tr("input element"), labelpad=2)
    w_ = item["worst"]
    if item["diff"].size:
        axes[2].plot([w_["col"]], [w_["row"]], marker="o", markersize=9, markerfacecolor="none",
                     markeredgecolor=red if not item["passed"] else "white", markeredgewidth=1.6)


def _ticks(ax, nr, nc):
    from matplotlib.ticker import MaxNLocator
    ax.xaxis.set_major_locator(MaxNLocator(nbins=min(nc, 8), integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(nbins=min(nr, 8), integer=True))
    ax.tick_params(length=2.5)


def _fast_figure(fast, fg):
    import matplotlib
    from matplotlib.figure import Figure
    vecs = [(f"u (input {j})", np.asarray(u)) for j, u in enumerate(fast.u)] + \
           [(f"v (output {i})", np.asarray(v)) for i, v in enumerate(fast.v)]
    n = len(vecs)
    with matplotlib.rc_context(_rc(fg)):
        fig = Figure(figsize=(min(10.5, 2.6 * n + 0.5), 1.9), layout="constrained")
        axes = fig.subplots(1, n, squeeze=False)[0]
        for ax, (name, vec) in zip(axes, vecs):
            vec = vec.real if np.iscomplexobj(vec) else vec
            ax.bar(np.arange(vec.size), vec, color="#3b82c4" if name.startswith("u") else "#d9822b", width=0.8)
            ax.axhline(0, color=fg, linewidth=0.5)
            ax.set_title(name)
            from matplotlib.ticker import MaxNLocator
            ax.xaxis.set_major_locator(MaxNLocator(nbins=min(vec.size, 8), integer=True))
            for side in ("top", "right"):
                ax.spines[side].set_visible(False)
    return fig


def _svg_of(fig):
    """The figure as inline SVG whose root says how narrow it may be shown: `data-min-font-pt`
    (its smallest text, in the SVG's units: matplotlib writes points) and a CSS min-width at
    which that text is still 12 CSS px (16 px at scale 1.5). A narrower output scrolls
    sideways rather than shrink the picture's text under the legible size."""
    from matplotlib.text import Text
    from . import _options
    buf = io.StringIO()
    tight = fig.get_layout_engine() is not None
    fig.savefig(buf, format="svg", bbox_inches="tight" if tight else None, pad_inches=0.05, transparent=True)
    svg = buf.getvalue()
    start = svg.find("<svg")
    svg = svg[start:]
    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    width = re.search(r'viewBox="[-\d.]+ [-\d.]+ ([\d.]+)', svg)
    if sizes and width:
        k = _options.scale()
        floor_px = 12 + 8 * (k - 1) if k >= 1 else 12 * k
        min_w = float(width.group(1)) * floor_px / min(sizes)
        svg = svg.replace("<svg", f'<svg data-min-font-pt="{min(sizes):g}" style="min-width: {min_w:.0f}px"', 1)
    return svg.replace(_FG, "var(--mt-fg, #1f2328)").replace(_FAIL_SENTINEL, "var(--mt-red-text, #a40e26)")


def _save_fig(fig_factory, path, theme):
    import os
    p = os.fspath(path)
    ext = os.path.splitext(p)[1].lower()
    if ext not in (".png", ".svg", ".pdf"):
        raise ValueError(f"cannot save a heatmap as {ext or 'a file without extension'}: use .png, .svg, .pdf or .html")
    if theme not in _THEME_FG:
        raise ValueError(f"theme must be 'light' or 'dark', got {theme!r}")
    fig = fig_factory(_THEME_FG[theme])
    bg = "#ffffff" if theme == "light" else "#0d1117"
    fig.savefig(p, format=ext[1:], dpi=144, facecolor=bg, pad_inches=0.1,
                bbox_inches="tight" if fig.get_layout_engine() is not None else None)
    return p


def _table(rows):
    head = (f"<table class='mt-table'><tr><th class='mt-l'>{tr('output element')}</th><th class='mt-l'>"
            f"{tr('input element')}</th><th>(row, col)</th><th>{tr('numerical')}</th><th>{tr('analytical')}</th>"
            "<th>|a − n|</th><th>atol + rtol·|n|</th><th class='mt-l'></th></tr>")
    body = []
    for r in rows:
        cls = " class='mt-failrow'" if r["failing"] else ""
        body.append(f"<tr{cls}><td class='mt-l mt-num'>out{_idx(r['output_element'])}</td>"
                    f"<td class='mt-l mt-num'>in{_idx(r['input_element'])}</td>"
                    f"<td class='mt-num'>({r['row']}, {r['col']})</td>"
                    f"<td class='mt-num'>{F.num(r['numerical'])}</td><td class='mt-num'>{F.num(r['analytical'])}</td>"
                    f"<td class='mt-num'>{F.num(r['abs_error'])}</td><td class='mt-num'>{F.num(r['tol'])}</td>"
                    f"<td class='mt-l'>{tr('fails') if r['failing'] else ''}</td></tr>")
    return head + "".join(body) + "</table>"


def _headline(message):
    """The first line of gradcheck's message, without the comma that joined it to the next."""
    return message.strip().splitlines()[0].rstrip(" ,;:")


def _merged_worst(items, k):
    """The k worst entries over the items of one (output, input) pair (a complex output is
    checked as its real and imaginary parts); identical rows are listed once."""
    rows, seen = [], set()
    for item in items:
        for r in worst_entries(item, k):
            key = (r["row"], r["col"], r["numerical"], r["analytical"])
            if key not in seen:
                seen.add(key)
                rows.append(r)
    rows.sort(key=lambda r: (not r["failing"], -r["abs_error"] if r["abs_error"] == r["abs_error"] else 0))
    return rows[:k]


_HOVER_CELLS = 10_000      # above this many entries (100x100), a pair's cells are not readable by pointing


def _hover_data(items):
    out = {}
    for i, item in enumerate(items):
        if item["diff"].size > _HOVER_CELLS:
            continue
        for p, part in enumerate(item["parts"]):
            out[f"{i}-{p}"] = {
                "num": _short(part["numerical"]), "ana": _short(part["analytical"]),
                "diff": _short(part["diff"]), "tol": _short(item["tol"]),
                "mask": item["mask"].astype(int).tolist(),
                "oshape": list(item["output_shape"]), "ishape": list(item["input_shape"]),
                "tag": part["tag"]}
    return out


def _short(a):
    """Nested lists of 6-significant-digit floats (the tooltip shows 4): a smaller page."""
    a = np.asarray(a, dtype=float)
    return [[float(f"{v:.6g}") for v in row] for row in a.reshape(a.shape[0], -1).tolist()]


def _js(value):
    """JSON that can sit inside an HTML <script> (NaN and inf as null)."""
    return json.dumps(value, allow_nan=True).replace("NaN", "null").replace("-Infinity", "null") \
        .replace("Infinity", "null").replace("</", "<\\/")


_HEAT_CSS = """
.mt-heatscroll { max-width: 100%; overflow-x: auto; }
.mt-heatwrap { position: relative; width: fit-content; max-width: 100%; }
.mt-heatwrap > svg { display: block; max-width: 100%; height: auto; }
.mt-heatwrap .mt-hit { position: absolute; cursor: crosshair; }
.mt-heatwrap .mt-heattip { position: absolute; z-index: 3; pointer-events: none; background: var(--mt-bg);
  color: var(--mt-fg); border: 1px solid var(--mt-fg3); border-radius: 4px; padding: 4px 8px;
  font-family: var(--mt-mono); font-size: calc(13px * var(--mt-scale)); white-space: pre; box-shadow: 0 2px 6px rgba(0,0,0,.25); }
.mt-heatwrap .mt-heattip.mt-pinned { border-color: var(--mt-blue); }
.mt-heatwrap .mt-heattip .mt-fails { color: var(--mt-red-text); font-weight: 600; }
"""

_HOVER_JS = r"""
(function () {
  const root = document.getElementById(%(id)s);
  if (!root || root.dataset.ready) return;
  root.dataset.ready = "1";
  const data = %(data)s, L = %(labels)s, tip = root.querySelector(".mt-heattip");
  let pinned = false;
  const num = (x) => x === null ? "nan" : (x === 0 ? "0" : String(Number(x.toPrecision(4))));
  function idx(i, shape) {
    const out = [];
    for (let k = shape.length - 1; k >= 0; k--) { out.unshift(i %% shape[k]); i = Math.floor(i / shape[k]); }
    return "[" + out.join(", ") + "]";
  }
  function show(hit, e) {
    const d = data[hit.dataset.k];
    if (!d) return;
    const r = hit.getBoundingClientRect(), nr = d.num.length, nc = nr ? d.num[0].length : 0;
    const row = Math.max(0, Math.min(nr - 1, Math.floor((e.clientY - r.top) / r.height * nr)));
    const col = Math.max(0, Math.min(nc - 1, Math.floor((e.clientX - r.left) / r.width * nc)));
    const fail = d.mask[row][col] === 1, t = d.tag ? d.tag + " " : "";
    tip.innerHTML = `out${idx(row, d.oshape)} / in${idx(col, d.ishape)}  (${row}, ${col})
` +
      `${t}${L.numerical}  ${num(d.num[row][col])}
${t}${L.analytical} ${num(d.ana[row][col])}
` +
      `${L.diff}      ${num(d.diff[row][col])}
${L.tol} ${num(d.tol[row][col])}  ` +
      `<span class="${fail ? "mt-fails" : ""}">${fail ? L.fails : L.passes}</span>`;
    const b = root.getBoundingClientRect();
    tip.hidden = false;
    let x = e.clientX - b.left + 14, y = e.clientY - b.top + 14;
    if (x + tip.offsetWidth > b.width) x = e.clientX - b.left - tip.offsetWidth - 14;
    if (y + tip.offsetHeight > b.height) y = Math.max(0, e.clientY - b.top - tip.offsetHeight - 14);
    tip.style.left = Math.max(0, x) + "px"; tip.style.top = y + "px";
    root.dataset.cell = `${hit.dataset.k}:${row},${col}`;
  }
  for (const hit of root.querySelectorAll(".mt-hit")) {
    hit.title = L.pin;
    hit.addEventListener("mousemove", (e) => { if (!pinned) show(hit, e); });
    hit.addEventListener("mouseleave", () => { if (!pinned) tip.hidden = true; });
    hit.addEventListener("click", (e) => { pinned = !pinned; tip.classList.toggle("mt-pinned", pinned); show(hit, e); });
  }
})();
"""


class GradcheckView:
    """The heatmaps of a GradcheckReport. `.report`, `.data` (heatmap_data), `.figure`
    (matplotlib, light theme), `.save("jac.png" | ".svg" | ".html", theme="light")`.

    Size: the figure is drawn at its content's size, 10.5 in wide and, per pair (two rows
    for a complex Jacobian), about 1.1 in of titles and labels plus heatmaps 0.3 in per
    Jacobian row (1.2 to 2.3 in); in a notebook it scales down to the output's width and
    never scrolls inside the output. At most `max_pairs` pairs (8) are drawn, failing first.
    Point at a cell to read its numerical, analytical and difference values (pairs of up to
    10,000 entries); click to pin."""

    def __init__(self, report, pairs="all", diff_scale="shared", max_pairs=8):
        if diff_scale not in ("shared", "own"):
            raise ValueError(f"diff_scale must be 'shared' or 'own', got {diff_scale!r}")
        self.report = report
        self.diff_scale = diff_scale
        data = heatmap_data(report, pairs, diff_scale)
        data.sort(key=lambda d: d["passed"])           # failing pairs first
        self.hidden_pairs = max(0, len(data) - max_pairs)
        self.data = data[:max_pairs]
        self._svg = None
        self._hits = []

    @property
    def passed(self):
        return self.report.passed

    def figure_for(self, fg=_THEME_FG["light"]):
        if not self.data:
            return None
        return _heatmap_figure(self.data, fg, self.diff_scale)

    @property
    def figure(self):
        return self.figure_for()

    def svg(self):
        if self._svg is None:
            fig = self.figure_for(_FG)
            self._svg = _svg_of(fig) if fig is not None else ""
            self._hits = getattr(fig, "mt_hits", [])
        return self._svg

    def _repr_html_(self):
        r = self.report
        badge = f"<span class='mt-badge mt-pass'>{tr('passed')}</span>" if r.passed else \
            f"<span class='mt-badge mt-fail'>{tr('FAILED')}</span>"
        checks = " ".join(
            f"<span class='mt-badge {'mt-pass' if v else 'mt-fail'}'>{F.esc(k)}</span>"
            for k, v in r.checks.items() if v is not None)
        fast = ", " + tr("fast mode") if getattr(r, "fast_mode", False) else ""
        parts = [f"<div class='mtviz mt-gradcheck'{scale_style()}>{style_tag()}<style>{_HEAT_CSS}</style>",
                 f"<div><b>gradcheck</b> {badge} <span class='mt-muted'>eps={F.num(r.eps)}, atol={F.num(r.atol)}, "
                 f"rtol={F.num(r.rtol)}{fast}</span></div>",
                 f"<div style='margin:4px 0'>{checks}</div>"]
        if not r.passed and r.message:
            parts.append(f"<div class='mt-num mt-failtext'>{F.esc(_headline(r.message))}</div>")
        if self.data:
            parts.append(self._heatmaps_html())
        else:
            parts.append(f"<div class='mt-muted'>{tr('no Jacobian pair to show')}</div>")
        if self.hidden_pairs:
            parts.append(f"<div class='mt-muted'>{tr('{n} more passing pair(s) not shown (pass max_pairs= to see them)').format(n=self.hidden_pairs)}</div>")
        parts.extend(self._tables_html())
        if r.fast is not None:
            parts.append(self._fast_html())
        parts.append("</div>")
        return "".join(parts)

    def _tables_html(self):
        """One worst-entries table per (output, input) pair, whatever parts were checked."""
        groups = {}
        for item in self.data:
            groups.setdefault((item["output_index"], item["input_index"]), []).append(item)
        out = []
        for (o, i), items in groups.items():
            rows = _merged_worst(items, 8)
            if rows:
                open_ = " open" if not all(it["passed"] for it in items) else ""
                title = tr("worst entries of output {o} / input {i}").format(o=o, i=i)
                out.append(f"<details{open_}><summary>{title}</summary>{_table(rows)}</details>")
        return out

    def _heatmaps_html(self):
        """The figure, and over each heatmap an invisible grid that reads out the cell under
        the pointer (numerical, analytical, difference, tolerance); a click pins it."""
        svg = self.svg()
        uid = f"mth{id(self) % 10**8}-{len(svg) % 9973}"
        hits = []
        for h in self._hits:
            x, y, w, hh = h["box"]
            hits.append(f"<div class='mt-hit' data-k='{h['item']}-{h['part']}' data-panel='{h['panel']}' "
                        f"style='left:{x * 100:.3f}%;bottom:{y * 100:.3f}%;width:{w * 100:.3f}%;height:{hh * 100:.3f}%'></div>")
        data = _hover_data(self.data)
        labels = {"numerical": tr("numerical"), "analytical": tr("analytical"), "diff": "|a − n|",
                  "tol": "atol + rtol·|n|", "fails": tr("fails"), "passes": tr("passes"),
                  "pin": tr("click to pin, click again to release")}
        script = _HOVER_JS % {"id": json.dumps(uid), "data": _js(data), "labels": _js(labels)}
        floor = re.search(r'style="min-width: (\d+)px"', svg)       # the hit grid follows the picture
        wrap_style = f" style='min-width: {floor.group(1)}px'" if floor else ""
        return (f"<div class='mt-heatscroll'><div class='mt-heatwrap' id='{uid}'{wrap_style}>{svg}{''.join(hits)}"
                f"<div class='mt-heattip' hidden></div></div></div><script>{script}</script>")

    def _fast_html(self):
        fast = self.report.fast
        rows = []
        for fp in getattr(fast, "pairs", []):
            cls = "" if fp.passed else " class='mt-failrow'"
            rows.append(f"<tr{cls}><td class='mt-l'>output {fp.output_index} / input {fp.input_index}</td>"
                        f"<td class='mt-num'>{F.num(fp.numerical)}</td><td class='mt-num'>{F.num(fp.analytical)}</td>"
                        f"<td class='mt-num'>{F.num(abs(fp.analytical - fp.numerical))}</td>"
                        f"<td class='mt-num'>{F.num(fp.atol)}</td><td class='mt-l'>{'passed' if fp.passed else 'FAILED'}</td></tr>")
        fig = _fast_figure(fast, _FG) if (fast.u or fast.v) else None
        svg = _svg_of(fig) if fig is not None else ""
        return ("<div style='margin-top:8px'><b>fast mode</b> <span class='mt-muted'>compares one number per pair: "
                "vᵀ J u with random unit vectors u (per input) and v (per output)</span></div>"
                f"<div class='mt-graphbox'>{svg}</div>"
                "<table class='mt-table'><tr><th class='mt-l'>pair</th><th>numerical vᵀJu</th><th>analytical vᵀJu</th>"
                "<th>|difference|</th><th>atol used</th><th class='mt-l'></th></tr>" + "".join(rows) + "</table>")

    def _repr_mimebundle_(self, include=None, exclude=None, **_):
        return {"text/html": self._repr_html_(), "text/plain": repr(self)}

    def __repr__(self):
        return f"<viz.gradcheck: {'passed' if self.report.passed else 'FAILED'}, {len(self.data)} pair(s) drawn>"

    def save(self, path, theme="light"):
        """.png / .svg / .pdf of the heatmaps (theme 'light' or 'dark'), or .html of the whole view."""
        import os
        p = os.fspath(path)
        if p.lower().endswith((".html", ".htm")):
            from .export import page
            with open(p, "w", encoding="utf-8") as f:
                f.write(page(self._repr_html_(), title="microtorch gradcheck"))
            return p
        if not self.data:
            raise ValueError("nothing to save: the report has no Jacobian pair")
        return _save_fig(self.figure_for, p, theme)


def gradcheck(func, inputs, *, pairs="all", diff_scale="shared", max_pairs=8, **gradcheck_kwargs):
    """Run gradcheck (microtorch.autograd.gradcheck.check, same keyword arguments) and show
    its Jacobians as heatmaps. pairs: "all" or "failing"; diff_scale: "shared" (the
    difference on the Jacobians' scale) or "own" (zoomed in). Returns a GradcheckView."""
    inputs = _check_inputs(func, inputs, "gradcheck")
    report = _run_check(func, inputs, "gradcheck", **gradcheck_kwargs)
    return GradcheckView(report, pairs=pairs, diff_scale=diff_scale, max_pairs=max_pairs)


# ---- eps sweep -------------------------------------------------------------------------------
class EpsSweep:
    """Error of the finite-difference Jacobian against eps. `.eps`, `.errors` (max |a - n|
    over all pairs), `.best_eps`, `.figure`, `.save("sweep.png" | ".svg" | ".html")`."""

    def __init__(self, eps, errors, dtype, default_eps=1e-6):
        self.eps = np.asarray(eps, dtype=float)
        self.errors = np.asarray(errors, dtype=float)
        self.dtype = dtype
        self.default_eps = default_eps
        finite = np.where(np.isfinite(self.errors), self.errors, np.inf)
        self.best_eps = float(self.eps[int(np.argmin(finite))])
        self._svg = None

    def figure_for(self, fg=_THEME_FG["light"]):
        import matplotlib
        from matplotlib.figure import Figure
        floor = 1e-18
        err = np.maximum(self.errors, floor)
        with matplotlib.rc_context(_rc(fg)):
            fig = Figure(figsize=(6.4, 3.9), layout="constrained")
            ax = fig.subplots()
            ax.loglog(self.eps, err, marker="o", markersize=4, color="#3b82c4", label="max |analytical − numerical|")
            ok = np.isfinite(err)
            if ok.sum() >= 2:
                hi = np.argmax(self.eps * ok)
                lo = np.argmin(np.where(ok, self.eps, np.inf))
                e_hi, r_hi = self.eps[hi], err[hi]
                e_lo, r_lo = self.eps[lo], err[lo]
                xs = self.eps
                ax.loglog(xs, r_hi * (xs / e_hi) ** 2, "--", color="#d9822b", linewidth=1,
                          label="truncation ∝ eps²")
                ax.loglog(xs, r_lo * (e_lo / xs), ":", color="#b04fc4", linewidth=1.2,
                          label="round-off ∝ 1/eps")
            ax.axvline(self.default_eps, color=fg, linewidth=0.8, alpha=0.6)
            ax.annotate("gradcheck's eps", xy=(self.default_eps, 1), xycoords=("data", "axes fraction"),
                        xytext=(3, -12), textcoords="offset points")
            ax.plot([self.best_eps], [max(self.errors.min(), floor)], marker="*", markersize=12,
                    color="#2da44e", linestyle="none", label=f"best eps ≈ {F.num(self.best_eps)}")
            lo_y = max(np.nanmin(err[np.isfinite(err)]) / 10 if np.isfinite(err).any() else floor, floor)
            hi_y = np.nanmax(err[np.isfinite(err)]) * 10 if np.isfinite(err).any() else 1
            ax.set_ylim(lo_y, hi_y)
            ax.set_xlabel("eps (finite-difference step)")
            ax.set_ylabel("max |analytical − numerical|")
            ax.set_title(f"finite differences in {self.dtype}: truncation vs round-off")
            leg = ax.legend(frameon=False, loc="best")
            for t in leg.get_texts():
                t.set_color(fg)
            for side in ("top", "right"):
                ax.spines[side].set_visible(False)
        return fig

    @property
    def figure(self):
        return self.figure_for()

    def svg(self):
        if self._svg is None:
            self._svg = _svg_of(self.figure_for(_FG))
        return self._svg

    def _repr_html_(self):
        return (f"<div class='mtviz'>{style_tag()}<div class='mt-graphbox'>{self.svg()}</div>"
                f"<div class='mt-muted'>smallest error {F.num(np.nanmin(self.errors))} at eps = "
                f"{F.num(self.best_eps)}; gradcheck uses eps = {F.num(self.default_eps)}</div></div>")

    def _repr_mimebundle_(self, include=None, exclude=None, **_):
        return {"text/html": self._repr_html_(), "text/plain": repr(self)}

    def __repr__(self):
        return f"<viz.eps_sweep: {len(self.eps)} eps values, best {F.num(self.best_eps)}>"

    def save(self, path, theme="light"):
        import os
        p = os.fspath(path)
        if p.lower().endswith((".html", ".htm")):
            from .export import page
            with open(p, "w", encoding="utf-8") as f:
                f.write(page(self._repr_html_(), title="microtorch eps sweep"))
            return p
        return _save_fig(self.figure_for, p, theme)


def eps_sweep(func, inputs, eps=None, **gradcheck_kwargs):
    """The finite-difference error (max over pairs of |analytical - numerical|) for each eps
    (default: 25 values from 1e-13 to 1e-1) on a log-log plot. Returns an EpsSweep."""
    inputs = _check_inputs(func, inputs, "eps_sweep")
    if eps is None:
        eps = np.logspace(-13, -1, 25)
    eps = np.asarray(eps, dtype=float).ravel()
    if eps.size < 2 or not np.all(eps > 0):
        raise ValueError("viz.eps_sweep: eps must be at least two positive numbers, e.g. numpy.logspace(-12, -1, 23)")
    eps = np.sort(eps)
    kw = dict(check_undefined_grad=False)
    kw.update(gradcheck_kwargs)
    kw.pop("fast_mode", None)
    errors = []
    import warnings
    for e in eps:
        with warnings.catch_warnings():     # float32 inputs warn at every eps; the plot says the dtype
            warnings.simplefilter("ignore", UserWarning)
            report = _run_check(func, inputs, "eps_sweep", eps=float(e), **kw)
        errs = [p.max_abs_error for p in report.pairs if p.checked]
        errors.append(max(errs) if errs else math.nan)
    from .._tensor import Tensor
    dtype = next((str(t.dtype).replace("microtorch.", "") for t in inputs if isinstance(t, Tensor) and t.requires_grad),
                 "float64")
    return EpsSweep(eps, errors, dtype)
