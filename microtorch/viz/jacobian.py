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
import math

import numpy as np

from . import _format as F
from ._theme import style_tag

_FG = "#010203"          # a sentinel text colour, replaced by the theme's in HTML output
_THEME_FG = {"light": "#1f2328", "dark": "#e6edf3"}
_FAIL = "#ff1f5a"


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
        verdict = "passed" if p.passed else f"FAILED ({int(mask.sum())} of {mask.size} entries)"
        kind = "" if p.kind == "real" else f" [{p.kind}]"
        mode = "" if getattr(p, "mode", "backward") == "backward" else f" ({p.mode} AD)"
        title = (f"output {p.output_index} w.r.t. input {p.input_index}{kind}{mode}: {verdict}; worst "
                 f"out{_idx(worst['output_element'])}/in{_idx(worst['input_element'])}: numerical "
                 f"{F.num(worst['numerical']) if has else '—'} vs analytical "
                 f"{F.num(worst['analytical']) if has else '—'}")
        for k, part in enumerate(parts):
            part["title"] = title
            if is_complex:       # each row's title gives the worst entry's part drawn in it
                part["title"] = (title if k == 0 else
                                 f"output {p.output_index} w.r.t. input {p.input_index}{kind}{mode}: imaginary part "
                                 f"of the same Jacobian; at out{_idx(worst['output_element'])}/"
                                 f"in{_idx(worst['input_element'])}: numerical "
                                 f"{F.num(part['numerical'][r, c].item()) if has else '—'} vs analytical "
                                 f"{F.num(part['analytical'][r, c].item()) if has else '—'}")
        out.append({
            "pair": p, "output_index": p.output_index, "input_index": p.input_index, "parts": parts,
            "numerical": num, "analytical": ana, "diff": diff, "mask": mask, "tol": tol,
            "vmax": vmax, "diff_vmax": diff_vmax, "max_abs_error": dmax, "passed": bool(p.passed),
            "worst": worst, "title": title, "complex": is_complex,
            "output_shape": tuple(p.output_shape), "input_shape": tuple(p.input_shape),
        })
    return out


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
def _outline_segments(mask):
    """Line segments around the True cells of a mask (cell (i, j) spans [j-.5, j+.5] x [i-.5, i+.5])."""
    m = np.pad(mask.astype(bool), 1)
    segs = []
    vert = m[1:-1, 1:] != m[1:-1, :-1]        # boundary left of column j (j = 0..ncols)
    ii, jj = np.nonzero(vert)
    if ii.size:
        x = jj - 0.5
        segs.append(np.stack([np.stack([x, ii - 0.5], 1), np.stack([x, ii + 0.5], 1)], 1))
    horiz = m[1:, 1:-1] != m[:-1, 1:-1]
    ii, jj = np.nonzero(horiz)
    if ii.size:
        y = ii - 0.5
        segs.append(np.stack([np.stack([jj - 0.5, y], 1), np.stack([jj + 0.5, y], 1)], 1))
    return np.concatenate(segs) if segs else np.zeros((0, 2, 2))


def _outline_path(segs):
    """The outline segments as one matplotlib Path (move-to, line-to per segment)."""
    from matplotlib.path import Path
    verts = segs.reshape(-1, 2)
    codes = np.tile([Path.MOVETO, Path.LINETO], len(segs)).astype(np.uint8)
    return Path(verts, codes)


def _rc(fg):
    return {"text.color": fg, "axes.labelcolor": fg, "xtick.color": fg, "ytick.color": fg,
            "axes.edgecolor": fg, "axes.titlecolor": fg, "figure.facecolor": "none",
            "axes.facecolor": "none", "savefig.facecolor": "none", "font.size": 9,
            "axes.titlesize": 9.5, "svg.fonttype": "path", "axes.linewidth": 0.6}


def _heatmap_figure(items, fg, diff_scale):
    """One row per pair. The layout is computed by hand (no constrained layout, no tight
    bbox): a 200x200 triptych draws in a fraction of a second."""
    import matplotlib
    from matplotlib.figure import Figure
    from matplotlib.patches import PathPatch
    import matplotlib.patheffects as pe

    rows = [(item, part) for item in items for part in item["parts"]]
    n = len(rows)
    W, left, gap, cbw, cbgap, gap2, right = 10.5, 0.6, 0.3, 0.12, 0.08, 0.62, 0.52
    w = (W - left - gap - cbgap - cbw - gap2 - cbgap - cbw - right) / 3
    top_pad, ph, bottom_pad = 0.62, 2.05, 0.45
    row_h = top_pad + ph + bottom_pad
    H = row_h * n + 0.05
    with matplotlib.rc_context(_rc(fg)):
        fig = Figure(figsize=(W, H))

        def box(x, y, bw, bh):
            return [x / W, y / H, bw / W, bh / H]

        for row, (item, part) in enumerate(rows):
            y0 = H - (row + 1) * row_h + bottom_pad
            xs = [left, left + w + gap, left + 2 * w + gap + cbgap + cbw + gap2]
            ax_n = fig.add_axes(box(xs[0], y0, w, ph))
            ax_a = fig.add_axes(box(xs[1], y0, w, ph))
            cax = fig.add_axes(box(xs[1] + w + cbgap, y0, cbw, ph))
            ax_d = fig.add_axes(box(xs[2], y0, w, ph))
            cax_d = fig.add_axes(box(xs[2] + w + cbgap, y0, cbw, ph))
            v = item["vmax"]
            kw = dict(cmap="PuOr_r", vmin=-v, vmax=v, interpolation="nearest", aspect="auto")
            im = ax_n.imshow(part["numerical"], **kw)
            ax_a.imshow(part["analytical"], **kw)
            dk = dict(cmap="viridis", vmin=0, vmax=item["diff_vmax"], interpolation="nearest", aspect="auto")
            imd = ax_d.imshow(part["diff"], **dk)
            segs = _outline_segments(item["mask"])
            nr, nc = item["diff"].shape
            outline = _outline_path(segs) if len(segs) else None
            many = len(segs) > 2000        # then only the difference panel, and no halo: keeps files small
            for ax in (ax_n, ax_a, ax_d):
                if outline is not None and (ax is ax_d or not many):
                    # one compound path per panel (not one artist per segment): fast in SVG and PNG
                    patch = PathPatch(outline, fill=False, edgecolor=_FAIL, linewidth=0.9 if many else 1.6,
                                      capstyle="projecting")
                    if not many:
                        patch.set_path_effects([pe.Stroke(linewidth=3.2, foreground="white"), pe.Normal()])
                    ax.add_artist(patch)           # add_patch would walk every segment for the data limits
                ax.set_xlim(-0.5, nc - 0.5)
                ax.set_ylim(nr - 0.5, -0.5)
                _ticks(ax, nr, nc)
                ax.set_xlabel("input element", labelpad=2)
            w_ = item["worst"]
            if item["diff"].size:
                ax_d.plot([w_["col"]], [w_["row"]], marker="o", markersize=9, markerfacecolor="none",
                          markeredgecolor=_FAIL if not item["passed"] else "white", markeredgewidth=1.6)
            tag = part["tag"] + " " if part["tag"] else ""      # "Re " / "Im " for a complex Jacobian
            ax_n.set_title(tag + "numerical (finite differences)", pad=4)
            ax_a.set_title(tag + "analytical (backward)", pad=4)
            ax_d.set_title(f"|{tag}analytical − {tag}numerical|" + (" (own scale)" if diff_scale != "shared" else ""),
                           pad=4)
            ax_n.set_ylabel(f"output element{' (' + part['label'] + ')' if part['label'] else ''}", labelpad=2)
            for c, source in ((cax, im), (cax_d, imd)):
                cb = fig.colorbar(source, cax=c)
                cb.ax.tick_params(labelsize=7.5, length=2)
                cb.outline.set_edgecolor(fg)
                cb.outline.set_linewidth(0.5)
            color = fg if item["passed"] else _FAIL
            fig.text(left / W, (y0 + ph + 0.3) / H, part["title"], ha="left", va="bottom", fontsize=10,
                     fontweight="bold", color=color)
    return fig


def _ticks(ax, nr, nc):
    from matplotlib.ticker import MaxNLocator
    ax.xaxis.set_major_locator(MaxNLocator(nbins=min(nc, 8), integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(nbins=min(nr, 8), integer=True))
    ax.tick_params(labelsize=7.5, length=2.5)


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
            ax.tick_params(labelsize=7)
            for side in ("top", "right"):
                ax.spines[side].set_visible(False)
    return fig


def _svg_of(fig):
    buf = io.StringIO()
    tight = fig.get_layout_engine() is not None
    fig.savefig(buf, format="svg", bbox_inches="tight" if tight else None, pad_inches=0.05, transparent=True)
    svg = buf.getvalue()
    start = svg.find("<svg")
    svg = svg[start:]
    return svg.replace(_FG, "var(--mt-fg, #1f2328)")


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
    head = ("<table class='mt-table'><tr><th class='mt-l'>output element</th><th class='mt-l'>input element</th>"
            "<th>(row, col)</th><th>numerical</th><th>analytical</th><th>|a − n|</th><th>atol + rtol·|n|</th>"
            "<th class='mt-l'></th></tr>")
    body = []
    for r in rows:
        cls = " class='mt-failrow'" if r["failing"] else ""
        body.append(f"<tr{cls}><td class='mt-l mt-num'>out{_idx(r['output_element'])}</td>"
                    f"<td class='mt-l mt-num'>in{_idx(r['input_element'])}</td>"
                    f"<td class='mt-num'>({r['row']}, {r['col']})</td>"
                    f"<td class='mt-num'>{F.num(r['numerical'])}</td><td class='mt-num'>{F.num(r['analytical'])}</td>"
                    f"<td class='mt-num'>{F.num(r['abs_error'])}</td><td class='mt-num'>{F.num(r['tol'])}</td>"
                    f"<td class='mt-l'>{'fails' if r['failing'] else ''}</td></tr>")
    return head + "".join(body) + "</table>"


class GradcheckView:
    """The heatmaps of a GradcheckReport. `.report`, `.data` (heatmap_data), `.figure`
    (matplotlib, light theme), `.save("jac.png" | ".svg" | ".html", theme="light")`."""

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
        return self._svg

    def _repr_html_(self):
        r = self.report
        badge = "<span class='mt-badge mt-pass'>passed</span>" if r.passed else \
            "<span class='mt-badge mt-fail'>FAILED</span>"
        checks = " ".join(
            f"<span class='mt-badge {'mt-pass' if v else 'mt-fail'}'>{F.esc(k)}</span>"
            for k, v in r.checks.items() if v is not None)
        parts = [f"<div class='mtviz mt-gradcheck'>{style_tag()}",
                 f"<div><b>gradcheck</b> {badge} <span class='mt-muted'>eps={F.num(r.eps)}, atol={F.num(r.atol)}, "
                 f"rtol={F.num(r.rtol)}{', fast mode' if getattr(r, 'fast_mode', False) else ''}</span></div>",
                 f"<div style='margin:4px 0'>{checks}</div>"]
        if not r.passed and r.message:
            first = r.message.strip().splitlines()[0]
            parts.append(f"<div class='mt-num' style='color:var(--mt-red)'>{F.esc(first)}</div>")
        if self.data:
            parts.append(f"<div class='mt-graphbox'>{self.svg()}</div>")
        else:
            parts.append("<div class='mt-muted'>no Jacobian pair to show</div>")
        if self.hidden_pairs:
            parts.append(f"<div class='mt-muted'>{self.hidden_pairs} more passing pair(s) not shown "
                         "(pass max_pairs= to see them)</div>")
        for item in self.data:
            rows = worst_entries(item, 8)
            if rows:
                open_ = " open" if not item["passed"] else ""
                parts.append(f"<details{open_}><summary>worst entries of output {item['output_index']} / input "
                             f"{item['input_index']}</summary>{_table(rows)}</details>")
        if r.fast is not None:
            parts.append(self._fast_html())
        parts.append("</div>")
        return "".join(parts)

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
                        xytext=(3, -12), textcoords="offset points", fontsize=8)
            ax.plot([self.best_eps], [max(self.errors.min(), floor)], marker="*", markersize=12,
                    color="#2da44e", linestyle="none", label=f"best eps ≈ {F.num(self.best_eps)}")
            lo_y = max(np.nanmin(err[np.isfinite(err)]) / 10 if np.isfinite(err).any() else floor, floor)
            hi_y = np.nanmax(err[np.isfinite(err)]) * 10 if np.isfinite(err).any() else 1
            ax.set_ylim(lo_y, hi_y)
            ax.set_xlabel("eps (finite-difference step)")
            ax.set_ylabel("max |analytical − numerical|")
            ax.set_title(f"finite differences in {self.dtype}: truncation vs round-off")
            leg = ax.legend(fontsize=7.5, frameon=False, loc="best")
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
