"""viz.hook_timeline: the hooks that fired during a recording, as swimlanes.

One lane per kind of hook (module forward pre-hooks and hooks, tensor hooks, retain_grad,
node pre-hooks and hooks, post-accumulate hooks, module backward hooks), one column per
firing in the order they fired, each card with the gradient before and after the hook
(changed values highlighted). Next to it the DAG, with the hooks' tensors and nodes marked;
hovering a card outlines its node in the DAG and hovering a node outlines its cards (pure
CSS, so it also works in a static page).
"""
from . import _format as F
from ._names import Names, collect
from ._i18n import tr
from ._theme import scale_style, style_tag

# labels go through tr() when drawn; listed here for the translators: tr("tensor hook"),
# tr("retain_grad"), tr("node pre-hook"), tr("node hook"), tr("post-accumulate hook"),
# tr("module forward pre-hook"), tr("module forward hook"), tr("module backward pre-hook"),
# tr("module backward hook"), tr("autograd.grad capture"), tr("forward"), tr("after backward")
LANES = [
    ("module_forward_pre", "module forward pre-hook"),
    ("module_forward", "module forward hook"),
    ("tensor", "tensor hook"),
    ("retain_grad", "retain_grad"),
    ("node_pre", "node pre-hook"),
    ("node_post", "node hook"),
    ("post_accumulate", "post-accumulate hook"),
    ("module_backward_pre", "module backward pre-hook"),
    ("module_backward", "module backward hook"),
    ("capture", "autograd.grad capture"),
]


def is_internal(hook):
    """A hook microtorch registered for itself (the plumbing of module backward hooks and
    multi-grad hooks), marked `_microtorch_internal`; a user's hook is shown even when it is
    a microtorch function (t.register_hook(mt.neg))."""
    return getattr(hook, "_microtorch_internal", False) is True

_CSS = """
.mt-timeline { display: flex; flex-direction: column; gap: 10px; }
.mt-timeline .mt-lanes { display: grid; gap: 4px 6px; overflow-x: auto; padding-bottom: 4px; align-items: stretch; }
.mt-timeline .mt-lane-name { font-size: calc(13px * var(--mt-scale)); color: var(--mt-fg2); font-weight: 600; align-self: center;
  position: sticky; left: 0; background: var(--mt-bg); padding-right: 6px; z-index: 1; white-space: nowrap; }
.mt-timeline .mt-lane-bg { background: var(--mt-bg2); border-radius: 4px; }
.mt-timeline .mt-colhead { font-size: calc(12px * var(--mt-scale)); color: var(--mt-fg2); text-align: center; white-space: nowrap; }
.mt-timeline .mt-phase { font-size: calc(12px * var(--mt-scale)); color: var(--mt-fg2); border-bottom: 2px solid var(--mt-border);
  text-align: left; padding: 0 4px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.mt-timeline .mt-phase.mt-bw { border-bottom-color: var(--mt-orange); }
.mt-timeline .mt-card { border: 1px solid var(--mt-border); border-left: 3px solid var(--mt-purple); border-radius: 4px;
  background: var(--mt-bg); padding: 3px 6px; font-size: calc(13px * var(--mt-scale)); min-width: calc(140px * var(--mt-scale)); z-index: 0; cursor: default; }
.mt-timeline .mt-card:hover { box-shadow: 0 0 0 2px var(--mt-purple); }
.mt-timeline .mt-card .mt-cn { font-weight: 600; }
.mt-timeline .mt-card .mt-ct { color: var(--mt-fg2); overflow: hidden; text-overflow: ellipsis; white-space: nowrap; max-width: calc(230px * var(--mt-scale)); }
.mt-timeline .mt-card .mt-cv { font-family: var(--mt-mono); font-size: calc(13px * var(--mt-scale)); }
.mt-timeline .mt-card.mt-chg { border-left-color: var(--mt-orange); }
.mt-timeline .mt-card.mt-chg .mt-after { color: var(--mt-orange-text); font-weight: 600; }
.mt-timeline .mt-card.mt-link { box-shadow: 0 0 0 2px var(--mt-purple); }
"""


class HookTimeline:
    """The hook firings of a tape. `.firings` (list of dicts, in order), `.dag` (or None),
    `.save("hooks.html")`."""

    def __init__(self, tape, names=None, show_dag=True, max_nodes=300, show_internal=False):
        from .graph import DAG, build
        self.tape = tape
        names = names or Names()
        self.dag = None
        model = None
        if show_dag and tape.backwards:
            bw = tape.backwards[-1]
            model = build(list(bw.roots), names, values=tape.values(-1), max_nodes=max_nodes,
                          show_hooks=True)
            self.dag = DAG(model, rankdir="TB", module_types=names.module_types)
        self.firings = []
        phase = "forward"
        for e in tape.entries:
            if e.kind == "backward_started":
                phase = f"backward {e.backward}"
            elif e.kind == "backward_finished":
                phase = "after backward"
            elif e.kind == "hook_fired":
                ev = e.event
                if not show_internal and is_internal(ev.hook):
                    continue
                target = ev.target
                dot = model.name_of(target) if model is not None and _is_graph_obj(target) else None
                if dot is None and self.dag is not None and id(target) in names.module_paths:
                    cid = self.dag.cluster_ids.get(names.module_paths[id(target)])
                    dot = cid[len(self.dag.prefix):] if cid else None      # a module: its cluster
                self.firings.append({
                    "index": len(self.firings) + 1, "entry": e.index, "kind": ev.kind,
                    "hook": getattr(ev.hook, "__name__", None) or ("retain_grad" if ev.kind == "retain_grad" else ""),
                    "target": _target_label(target, names, model, dot), "dot": dot,
                    "before": e.values["before"], "after": e.values["after"],
                    "changed": not F.same_values(e.values["before"], e.values["after"]), "phase": phase,
                })

    def lanes(self):
        kinds = [k for k, _ in LANES]
        extra = [f["kind"] for f in self.firings if f["kind"] not in kinds]
        present = {f["kind"] for f in self.firings}
        out = [(k, label) for k, label in LANES if k in present]
        for k in dict.fromkeys(extra):
            out.append((k, k.replace("_", " ")))
        return out

    def _repr_html_(self):
        esc = F.esc
        if not self.firings:
            return (f"<div class='mtviz'>{style_tag()}<div class='mt-muted'>"
                    + tr("no hook fired while recording; register one (t.register_hook(fn), "
                         "node.register_prehook(fn), ...) and run backward inside `with viz.record() as tape:`")
                    + "</div></div>")
        lanes = self.lanes()
        row_of = {k: i + 3 for i, (k, _) in enumerate(lanes)}
        n = len(self.firings)
        cells = []
        cols = f"grid-template-columns: max-content repeat({n}, minmax(calc(150px * var(--mt-scale)), max-content));"
        # phase bands (row 1) and firing numbers (row 2)
        start = 0
        while start < n:
            ph = self.firings[start]["phase"]
            end = start
            while end + 1 < n and self.firings[end + 1]["phase"] == ph:
                end += 1
            cls = "mt-phase mt-bw" if ph.startswith("backward") else "mt-phase"
            cells.append(f"<div class='{cls}' style='grid-row:1;grid-column:{start + 2} / {end + 3}'>{esc(_phase(ph))}</div>")
            start = end + 1
        for f in self.firings:
            cells.append(f"<div class='mt-colhead' style='grid-row:2;grid-column:{f['index'] + 1}'>#{f['index']}</div>")
        for k, label in lanes:
            r = row_of[k]
            cells.append(f"<div class='mt-lane-name' style='grid-row:{r};grid-column:1'>{esc(tr(label))}</div>")
            cells.append(f"<div class='mt-lane-bg' style='grid-row:{r};grid-column:2 / {n + 2}'></div>")
        for f in self.firings:
            chg = " mt-chg" if f["changed"] else ""
            tip = f"before: {F.full_values(f['before'])}\nafter: {F.full_values(f['after'])}"
            data = f" data-t='{esc(f['dot'])}'" if f["dot"] else ""
            cells.append(
                f"<div class='mt-card{chg}'{data} title='{esc(tip)}' style='grid-row:{row_of[f['kind']]};"
                f"grid-column:{f['index'] + 1}'><div class='mt-cn'>#{f['index']} {esc(f['hook'] or f['kind'])}</div>"
                f"<div class='mt-ct'>{tr('on {target}').format(target=esc(f['target']))}</div>"
                f"<div class='mt-cv'>{esc(F.summary_values(f['before']))} → <span class='mt-after'>{esc(F.summary_values(f['after']))}</span>"
                f"{' ' + tr('(changed)') if f['changed'] else ''}</div></div>")
        link_css = []
        if self.dag is not None:
            pre = self.dag.prefix
            for d in sorted({f["dot"] for f in self.firings if f["dot"]}):
                gid = f'g[id="{pre}{d}"]'
                link_css.append(f".mt-timeline:has(.mt-card[data-t='{d}']:hover) {gid} > :is(path, polygon, ellipse), "
                                f".mt-timeline:has(.mt-card[data-t='{d}']:hover) {gid} > g > a > :is(path, polygon, ellipse)"
                                " { stroke: var(--mt-purple); stroke-width: 4px; stroke-dasharray: none; }")
                link_css.append(f".mt-timeline:has({gid}:hover) .mt-card[data-t='{d}']"
                                " { box-shadow: 0 0 0 2px var(--mt-purple); }")
        dag_html = self.dag.pane_html() if self.dag is not None else ""
        summary = (f"<div><b>{tr('hook timeline')}</b> <span class='mt-muted'>"
                   + tr("{n} firing(s), {k} changed a gradient; hover a card to find its node").format(
                       n=n, k=sum(f['changed'] for f in self.firings)) + "</span></div>")
        return (f"<div class='mtviz'{scale_style()}>{style_tag()}<style>{_CSS}{''.join(link_css)}</style>"
                f"<div class='mt-timeline'>{summary}<div class='mt-lanes' style='{cols}'>{''.join(cells)}</div>"
                f"{dag_html}</div></div>")

    def _repr_mimebundle_(self, include=None, exclude=None, **_):
        return {"text/html": self._repr_html_(), "text/plain": repr(self)}

    def __repr__(self):
        lines = [f"<viz.hook_timeline: {len(self.firings)} firing(s)>"]
        for f in self.firings[:40]:
            lines.append(f"  #{f['index']} {f['kind']:16s} {f['hook'] or '':14s} on {f['target']}: "
                         f"{F.summary_values(f['before'])} -> {F.summary_values(f['after'])}{'  (changed)' if f['changed'] else ''}")
        return "\n".join(lines)

    def save(self, path):
        import os
        p = os.fspath(path)
        if not p.lower().endswith((".html", ".htm")):
            raise ValueError("a hook timeline saves as .html")
        from .export import page
        with open(p, "w", encoding="utf-8") as f:
            f.write(page(self._repr_html_(), title="microtorch hook timeline"))
        return p


def _phase(ph):
    """'forward', 'backward 0', 'after backward' in the current language."""
    if ph.startswith("backward "):
        return tr("backward {i}").format(i=ph.split()[1])
    return tr(ph)


def _is_graph_obj(x):
    from .._tensor import Tensor
    return isinstance(x, Tensor) or hasattr(x, "next_functions") or F.is_accumulate(x)


def _target_label(target, names, model, dot):
    from .._tensor import Tensor
    if isinstance(target, Tensor):
        n = names.tensor(target)
        if n:
            return n
        if target.grad_fn is not None:
            return f"output of {F.node_title(target.grad_fn)}"
        return f"leaf {F.shape_str(target.shape)}"
    if hasattr(target, "next_functions") or F.is_accumulate(target):
        title = F.shown_name(F.node_title(target))
        if model is not None and dot in model.nodes and model.nodes[dot].var:
            return f"{title} ({model.nodes[dot].var})"
        return title
    path = names.module_paths.get(id(target)) if names is not None else None
    return f"{path} · {type(target).__name__}" if path else type(target).__name__








def hook_timeline(tape, *, names="auto", params=None, module=None, show_dag=True, show_internal=False):
    """Swimlanes of the hooks that fired in a `viz.record()` tape, linked to its DAG.
    module=model names module hooks by their path; show_internal=True also shows the hooks
    microtorch registers for itself (the plumbing of module backward hooks)."""
    from .record import Tape
    if not isinstance(tape, Tape):
        raise TypeError(f"viz.hook_timeline expects a tape from `with viz.record() as tape:`, got "
                        f"{type(tape).__name__}")
    nm = collect(names, params, module, frame_depth=2)
    return HookTimeline(tape, nm, show_dag=show_dag, show_internal=show_internal)
