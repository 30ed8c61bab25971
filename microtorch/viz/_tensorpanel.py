"""The tensor panel: what clicking a node shows, in viz.explore, the stepper and viz.draw.

A node's tensor: its value and its gradient (the numbers of a small tensor, a heatmap of a
matrix, the range of a bigger one), shape and dtype, and for an op node the tensors its
backward saved, with the version each was saved at and the version now (a stale one in red).
The HTML of every node is built once in Python; the browser only swaps it in on a click.
"""
import numpy as np

from . import _format as F
from ._i18n import tr

MAX_DETAILS = 400        # above this many nodes, only the first ones get a panel (a 500-node draw stays fast)


def details_map(model, values=None, names=None, limit=MAX_DETAILS):
    """{DOT name: panel HTML} for the nodes of a graph model (see graph.build)."""
    out = {}
    for name, spec in model.nodes.items():
        if len(out) >= limit:
            break
        if spec.kind in ("leaf", "const", "out", "op"):
            out[name] = node_details(spec, values, names)
    return out


def node_details(spec, values=None, names=None):
    esc = F.esc
    h = [f"<h4>{F.esc_name(spec.title)}</h4>"]
    if spec.obj is None:
        return "".join(h + [f"<div class='mt-muted'>{tr('nothing to show for this node')}</div>"])
    data, grad, what = _arrays(spec, values, names)
    arr = data if data is not None else grad
    if arr is not None:
        h.append(f"<div class='mt-kv'>{tr('shape')} <b>{esc(tuple(int(d) for d in arr.shape))}</b> · "
                 f"dtype <b>{esc(arr.dtype)}</b></div>")
    h.append(f"<div class='mt-sub4'>{esc(what)}</div>{tensor_html(data)}")
    h.append(f"<div class='mt-sub4'>{tr('gradient')}</div>{tensor_html(grad)}")
    if spec.kind == "op":
        h.extend(_saved_html(spec.obj, values))
    return "".join(h)


def _arrays(spec, values, names):
    from .graph import _grad_of
    v = values
    if spec.kind in ("leaf", "const", "out"):
        t = spec.obj
        grad = (v.leaf_grad(t) if spec.kind == "leaf" else v.seed(t)) if v is not None else _grad_of(t)
        return F.snapshot(t), grad, tr("value")
    data = v.output_value(spec.obj, 0) if v is not None else None
    if data is None and names is not None:
        t = names.output_tensor(spec.obj, 0)
        data = F.snapshot(t) if t is not None else None
    inc = v.incoming(spec.obj) if v is not None else None
    return data, (inc[0] if inc else None), tr("output value")


def _saved_html(node, values):
    """The saved tensors, as the tape saw them when the node ran (else as the node holds them now)."""
    saved = values.saved(node) if values is not None and hasattr(values, "saved") else None
    if saved is None:
        saved = node.saved_versions() if hasattr(node, "saved_versions") else []
    if saved is None:
        return [f"<div class='mt-sub4'>{tr('saved tensors (with versions)')}</div>",
                f"<div class='mt-muted'>{tr('freed by backward (retain_graph=False)')}</div>"]
    rows = []
    for j, entry in enumerate(saved):
        if entry is None:
            continue
        value, version, now = entry
        arr = F.snapshot(value) if value is not None else None
        what = F.summary(arr) if arr is not None else "?"
        shape = F.shape_str(arr.shape) if arr is not None else "?"
        label = F.esc(F.saved_label(node, j))
        if version == now:
            rows.append(f"<div class='mt-line'>{label} {F.esc(shape)} v{version}: {F.esc(what)}</div>")
        else:
            rows.append(f"<div class='mt-line mt-failtext'>{label} {F.esc(shape)} v{version} ≠ now v{now}: "
                        f"{F.esc(tr('stale'))}</div>")
    if not rows:
        return []
    return [f"<div class='mt-sub4'>{tr('saved tensors (with versions)')}</div>"] + rows


def tensor_html(arr, max_numbers=16, max_cells=24):
    """A tensor for the side panel: its numbers when small, a heatmap (with numbers in the
    cells up to 6x6) for a matrix, else its range."""
    if arr is None:
        return "<div class='mt-muted'>—</div>"
    a = F.values(arr)
    if np.iscomplexobj(a) or a.dtype == bool or a.ndim > 2 or (a.ndim == 2 and max(a.shape) > max_cells):
        return f"<div class='mt-line'>{F.esc(F.summary(a))}</div>"
    if a.ndim < 2 and a.size <= max_numbers:
        return f"<div class='mt-line mt-numbers'>{F.esc(F.summary(a, max_numbers))}</div>"
    if a.ndim < 2:
        a = a.reshape(1, -1) if a.size <= max_cells else None
        if a is None:
            return f"<div class='mt-line'>{F.esc(F.summary(arr))}</div>"
    return _heatmap(a)


def _heatmap(a):
    vmax = float(np.nanmax(np.abs(a))) if a.size else 0.0
    vmax = vmax or 1.0
    show = a.shape[0] <= 6 and a.shape[1] <= 6
    cells = []
    for i, row in enumerate(a.tolist()):
        for j, v in enumerate(row):
            pct = int(round(min(1.0, abs(v) / vmax) * 55)) if v == v else 0
            col = "var(--mt-orange)" if v > 0 else "var(--mt-blue)"
            text = F.esc(F.num(v)) if show else ""
            cells.append(f"<div class='mt-cell' title='[{i}, {j}] = {F.esc(F.num(v))}' "
                         f"style='background: color-mix(in srgb, {col} {pct}%, var(--mt-bg))'>{text}</div>")
    return (f"<div class='mt-heat{' mt-heat-num' if show else ''}' style='grid-template-columns: "
            f"repeat({a.shape[1]}, {'auto' if show else '14px'})'>{''.join(cells)}</div>")


CSS = """
.mtviz .mt-tensor { border-left: 3px solid var(--mt-blue); background: var(--mt-bg2); padding: 6px 10px;
  border-radius: 0 4px 4px 0; box-sizing: border-box; }
.mtviz .mt-tensor h4 { margin: 0 0 4px; font-size: calc(15px * var(--mt-scale)); overflow-wrap: anywhere; }
.mtviz .mt-tensor .mt-sub4 { margin-top: 8px; color: var(--mt-fg2); font-weight: 600; font-size: calc(13px * var(--mt-scale)); }
.mtviz .mt-tensor .mt-line { font-family: var(--mt-mono); font-size: calc(13px * var(--mt-scale)); white-space: pre-wrap; word-break: break-word; }
.mtviz .mt-tensor .mt-kv { font-size: calc(13px * var(--mt-scale)); }
.mtviz .mt-heat { display: inline-grid; gap: 1px; margin-top: 2px; }
.mtviz .mt-heat .mt-cell { min-height: 14px; font-family: var(--mt-mono); font-size: calc(12px * var(--mt-scale));
  padding: 0 4px; text-align: right; color: var(--mt-fg); }
.mtviz .mt-tensor .mt-close { float: right; font: inherit; font-size: calc(13px * var(--mt-scale)); cursor: pointer;
  border: 1px solid var(--mt-border); background: var(--mt-bg); color: var(--mt-fg); border-radius: 4px; padding: 0 8px; }
"""
