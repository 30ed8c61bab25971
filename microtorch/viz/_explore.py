"""viz.explore: a model's backward graph, collapsed to its modules first, opened by clicking.

    with viz.record() as tape:
        loss = loss_fn(model(x), y)
        loss.backward()
    viz.explore(loss, module=model, tape=tape)

Each module whose parameters appear in the graph starts as one box (its type, its
parameters' shapes, how many nodes it holds); a run of identical sibling modules (the
blocks of a deep network) folds into one box "×k". Clicking a box opens it as a cluster;
clicking an open cluster's frame closes it again. Clicking any other node shows its tensor
beside the graph: value and gradient (the numbers of a small tensor, a heatmap of a matrix),
shape, dtype, and the tensors its backward saved, with their versions.

Every state is laid out here, ahead of time (a few for a small model; for a big one the
initial view, each module opened alone, and everything open), so opening a module in the
browser only swaps a picture.
"""
import itertools
import json

from . import _format as F
from ._i18n import tr
from ._names import collect
from ._theme import scale_style, style_tag
from ._viewport_js import VIEWPORT
from ._tensorpanel import CSS as _PANEL_CSS, details_map, tensor_html  # noqa: F401  (tensor_html lived here)
from .graph import DAG, EdgeSpec, GraphModel, NodeSpec, _check_roots, _prefix_ids, build

_MAX_COMBOS = 32        # above this many ways to open the modules, only the usual states are laid out


class ModelExplorer:
    """The collapsible graph of a model. `.states` (key -> laid-out SVG), `.modules` (module
    paths that can be opened), `.folds`, `.save("model.html")`."""

    def __init__(self, roots, names, values=None, rankdir="TB", max_nodes=300, renderer="auto", owners=None):
        self.names, self.rankdir, self.renderer = names, rankdir, renderer
        self.model = build(list(roots), names, values=values, max_nodes=max_nodes)
        for spec in self.model.nodes.values():     # the module whose forward created each node
            if owners and spec.kind == "op" and id(spec.obj) in owners:
                spec.cluster = owners[id(spec.obj)]
        self.values = values
        self.prefix = f"mt{next(_prefix_ids)}-"
        paths = {p for s in self.model.nodes.values() if s.cluster for p in _prefixes(s.cluster)}
        self.modules = sorted(paths, key=_path_key)
        self.folds = self._find_folds()
        self.states = {}
        self.details = details_map(self.model, values, names)
        for tokens in self._state_list():
            self._layout(tokens)

    # -- which boxes stand for which nodes -------------------------------------------------------
    def _find_folds(self):
        """Runs of >= 2 consecutive sibling modules of one type with the same parameter shapes
        (layers.1, layers.2, layers.3 of one Block): {fold token: [paths]}."""
        sig = {}
        for spec in self.model.nodes.values():
            if spec.kind == "leaf" and spec.cluster:
                sig.setdefault(spec.cluster, []).append((spec.title.rpartition(".")[2], _shape_of(spec)))
        by_parent = {}
        for p in self.modules:
            by_parent.setdefault(p.rpartition(".")[0], []).append(p)
        folds = {}
        for parent, kids in by_parent.items():
            kids.sort(key=_path_key)
            for _, run in itertools.groupby(kids, key=lambda p: (self.names.module_types.get(p), _signature(p, sig))):
                run = list(run)
                if len(run) >= 2:
                    folds[f"fold:{run[0]}"] = run
        return folds

    def _rep(self, spec, opened):
        """The visible box of a node when the modules in `opened` are open: the node itself, the
        box of its outermost closed module, or the fold that holds that module."""
        if not spec.cluster:
            return spec.name, None
        for p in _prefixes(spec.cluster):
            if p not in opened:
                for token, run in self.folds.items():
                    if p in run and token not in opened:
                        return token, run[0].rpartition(".")[0] or None
                return "mod:" + p, p.rpartition(".")[0] or None
        return spec.name, spec.cluster

    # -- states ----------------------------------------------------------------------------------
    def _state_list(self):
        tokens = self.modules + list(self.folds)
        closed = [frozenset()]
        if len(tokens) <= 5:
            for r in range(1, len(tokens) + 1):
                closed.extend(frozenset(c) for c in itertools.combinations(tokens, r))
        else:
            closed.extend(frozenset([t]) for t in tokens)
            closed.append(frozenset(tokens))
        states = []
        for s in closed:
            full = self._close(s)
            if full not in states:
                states.append(full)
        return states[:_MAX_COMBOS] if len(states) > _MAX_COMBOS else states

    def _close(self, tokens):
        """Opening a module opens its ancestors and unfolds the runs that hold any of them."""
        out = set()
        for t in tokens:
            paths = _prefixes(t[5:] if t.startswith("fold:") else t)
            out.update(paths if not t.startswith("fold:") else paths[:-1])
            if t.startswith("fold:"):
                out.add(t)
        for p in list(out):
            for token, run in self.folds.items():
                if any(q in run for q in _prefixes(p)) and not p.startswith("fold:"):
                    out.add(token)
        return frozenset(out)

    def _layout(self, opened):
        m, boxes, mods, rep_of = GraphModel(), {}, {}, {}
        for name, spec in self.model.nodes.items():
            rep, cluster = self._rep(spec, opened)
            if rep == name:
                m.nodes[name] = NodeSpec(name, spec.kind, spec.title, rows=spec.rows, tooltip=spec.tooltip,
                                         classes=list(spec.classes), cluster=cluster)
            else:
                boxes.setdefault(rep, (cluster, []))[1].append(spec)
        for i, (rep, (cluster, specs)) in enumerate(sorted(boxes.items())):
            name = f"b{i}"
            m.nodes[name] = self._box(name, rep, cluster, specs)
            mods[name] = rep
            for spec in specs:
                rep_of[spec.name] = name
        seen = set()
        for e in self.model.edges:
            src, dst = rep_of.get(e.src, e.src), rep_of.get(e.dst, e.dst)
            if src == dst or (src, dst) in seen or src not in m.nodes or dst not in m.nodes:
                continue
            seen.add((src, dst))
            real = src == e.src and dst == e.dst
            m.edges.append(EdgeSpec(e.name if real else f"{src}_{dst}", src, dst, e.index,
                                    label=e.label if real else "", classes=list(e.classes)))
        dag = DAG(m, rankdir=self.rankdir, renderer=self.renderer, id_prefix=self.prefix,
                  module_types=self.names.module_types)
        key = _key(opened)
        self.states[key] = {"svg": dag.svg(), "boxes": mods,
                            "clusters": {cid[len(self.prefix):]: p for p, cid in dag.cluster_ids.items()}}

    def _box(self, name, rep, cluster, specs):
        if rep.startswith("fold:"):
            run = self.folds[rep]
            kind = self.names.module_types.get(run[0], "")
            title = f"{run[0]} … {run[-1]} · {kind} ×{len(run)}"
            rows = [(tr("{n} identical blocks: click to unfold").format(n=len(run)), "mt-sub")]
            cls = ["mt-fold", "mt-collapsible"]
        else:
            path = rep[4:]
            kind = self.names.module_types.get(path, "")
            title = f"{path} · {kind}" if kind else path
            params = [f"{s.title.rpartition('.')[2]} {F.shape_str(_shape_of(s))}" for s in specs
                      if s.kind == "leaf" and s.cluster == path]
            count = tr("1 node: click to open") if len(specs) == 1 else tr("{n} nodes: click to open").format(n=len(specs))
            rows = ([(", ".join(params), "mt-sub")] if params else []) + [(count, "mt-sub")]
            cls = ["mt-fold", "mt-collapsible", "mt-module"]
        return NodeSpec(name, "op", title, rows=rows, tooltip=title, classes=cls, cluster=cluster)

    # -- output ----------------------------------------------------------------------------------
    def data(self):
        return {"prefix": self.prefix, "states": self.states, "initial": _key(self._close(frozenset())),
                "singles": {t: _key(self._close(frozenset([t]))) for t in self.modules + list(self.folds)},
                "details": self.details, "folds": self.folds}

    def _repr_html_(self):
        uid = f"mtx{id(self) % 10**8}"
        hint = tr("click a module box to open it, an open module's frame to close it, any node to see its tensor")
        return (f"<div class='mtviz mt-explorer' id='{uid}'{scale_style()}>{style_tag()}<style>{_PANEL_CSS}{CSS}</style>"
                f"<div class='mt-hint'>{F.esc(hint)}</div><div class='mt-exbody'><div class='mt-graph mt-static'>"
                f"{self.states[self.data()['initial']]['svg']}</div><div class='mt-tensor'>"
                f"<div class='mt-muted'>{tr('click a node to see its tensor')}</div></div></div>"
                f"<script>{VIEWPORT}{EXPLORER_JS}\nmtExplorer(document.getElementById({json.dumps(uid)}), "
                f"{_js(self.data())});</script></div>")

    def _repr_mimebundle_(self, include=None, exclude=None, **_):
        return {"text/html": self._repr_html_(), "text/plain": repr(self)}

    def __repr__(self):
        return (f"<viz.explore: {len(self.model.nodes)} nodes, {len(self.modules)} modules, "
                f"{len(self.folds)} folded runs, {len(self.states)} layouts>")

    def save(self, path):
        import os
        from .export import page
        p = os.fspath(path)
        with open(p, "w", encoding="utf-8") as f:
            f.write(page(self._repr_html_(), title="microtorch model explorer"))
        return p


def explore(*args, module=None, tape=None, loss_fn=None, names="auto", params=None, rankdir="TB",
            max_nodes=300, renderer="auto"):
    """A model's backward graph with its submodules collapsed to boxes that open on a click
    (runs of identical blocks folded), and each node's tensor on a click.

    viz.explore(model, x, loss_fn=lambda out: out.sum()): runs the forward (and, with loss_fn,
    the backward: it writes .grad) while recording which module created each node, as
    torchview does. viz.explore(loss, module=model, tape=tape): an existing graph, with a
    module's parameters and the nodes reading them in its box; tape (a viz.record() of the
    forward and backward) gives every node's value and gradient."""
    from ..nn import Module
    if args and isinstance(args[0], Module):
        roots, nm, values, owners = _trace(args[0], args[1:], loss_fn, names)
        return ModelExplorer(roots, nm, values=values, rankdir=rankdir, max_nodes=max_nodes, renderer=renderer,
                             owners=owners)
    roots = _check_roots(args, "explore")
    if module is None and params is None:
        raise TypeError("viz.explore needs the model: viz.explore(model, inputs...) or viz.explore(loss, "
                        "module=model); for a plain graph use viz.draw(loss)")
    nm = collect(names, params, module, frame_depth=2)
    values = tape.values() if tape is not None else None
    return ModelExplorer(roots, nm, values=values, rankdir=rankdir, max_nodes=max_nodes, renderer=renderer)


def _trace(model, inputs, loss_fn, names):
    """Run model(*inputs) (and loss_fn(output).backward()) while recording; which module's
    forward was running when each node was created (the innermost one)."""
    from .record import record
    from .._tensor import Tensor
    marks, handles = [], []
    tape_box = []

    def pre(path):
        def hook(m, a):
            marks.append((len(tape_box[0].entries), path))
        hook._microtorch_internal = True
        return hook

    def post(m, a, o):
        marks.append((len(tape_box[0].entries), None))
    post._microtorch_internal = True
    for path, sub in model.named_modules():
        if path:
            handles += [sub.register_forward_pre_hook(pre(path)), sub.register_forward_hook(post)]
    try:
        with record() as tape:
            tape_box.append(tape)
            out = model(*inputs)
            if loss_fn is not None:
                out = loss_fn(out)
                out.backward()
    finally:
        for h in handles:
            h.remove()
    if not isinstance(out, Tensor) or out.grad_fn is None:
        raise ValueError("viz.explore: the model's output has no backward graph; give it parameters or "
                         "inputs that require grad")
    owners, stack, k = {}, [], 0
    for i, e in enumerate(tape.entries):
        while k < len(marks) and marks[k][0] <= i:
            stack.append(marks[k][1]) if marks[k][1] is not None else stack.pop()
            k += 1
        if e.kind == "node_created" and stack:
            owners[id(e.event.node)] = stack[-1]
    nm = collect(names, None, model, frame_depth=3, extra=[("output" if loss_fn is None else "loss", out)])
    return [out], nm, tape.values(), owners


# ---- helpers ---------------------------------------------------------------------------------------
def _prefixes(path):
    parts = path.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


def _path_key(p):
    return [(0, int(x), "") if x.isdigit() else (1, 0, x) for x in p.split(".")]


def _signature(path, sig):
    return tuple(sorted((n, tuple(s)) for n, s in sig.get(path, ())))


def _shape_of(spec):
    t = spec.obj
    return tuple(getattr(t, "shape", ())) if t is not None else ()


def _key(tokens):
    return "|".join(sorted(tokens))


def _js(value):
    return json.dumps(value).replace("</", "<\\/")


CSS = """
.mt-explorer .mt-hint { color: var(--mt-fg2); font-style: italic; margin: 2px 0 6px; }
.mt-explorer .mt-exbody { display: flex; gap: 10px; align-items: flex-start; }
.mt-explorer .mt-graph { flex: 1 1 0; min-width: 0; }
.mt-explorer .mt-tensor { flex: 0 0 calc(300px * var(--mt-scale)); overflow: auto; }
.mt-explorer g.node.mt-collapsible, .mt-explorer g.cluster { cursor: pointer; }
.mt-explorer.mt-wide .mt-exbody { flex-direction: column; align-items: stretch; }
.mt-explorer.mt-wide .mt-graph { flex: none; width: 100%; }
.mt-explorer.mt-wide .mt-tensor { flex: none; }
"""

EXPLORER_JS = r"""
// clicks of one laid-out state: a box opens its module, an open module's frame closes it,
// any other node shows its tensor
function mtWireExplorer(pane, prefix, st, api) {
  for (const g of pane.querySelectorAll("g.node")) {
    const name = g.id.slice(prefix.length), box = st.boxes[name];
    g.addEventListener("click", (e) => {
      e.stopPropagation();
      if (box) api.open(box.startsWith("mod:") ? box.slice(4) : box); else api.select(name);
    });
  }
  for (const [cid, path] of Object.entries(st.clusters)) {
    const c = pane.querySelector(`[id="${prefix}${cid}"]`);
    if (!c) continue;
    c.classList.add("mt-collapsible");
    c.dataset.module = path;
    c.addEventListener("click", (e) => { if (e.target.closest("g.node")) return; e.stopPropagation(); api.close(path); });
  }
}

function mtExplorer(root, data) {
  if (!root || root.dataset.ready) return;
  root.dataset.ready = "1";
  const pane = root.querySelector(".mt-graph"), side = root.querySelector(".mt-tensor");
  let key = data.initial, vp = null, selected = null;
  const opened = () => new Set(key ? key.split("|") : []);
  const byId = (id) => pane.querySelector(`[id="${data.prefix}${id}"]`);
  function show(k) {
    if (!data.states[k]) return;
    key = k; root.dataset.state = k;
    pane.innerHTML = data.states[k].svg;
    pane.classList.remove("mt-static");
    const svg = pane.querySelector("svg");
    if (vp) vp.destroy();
    vp = mtViewport(pane, svg, { onresize: () => layout() });
    layout();
    root.mtViewport = vp;
    mtWireExplorer(pane, data.prefix, data.states[k], { open, close, select });
    if (selected && byId(selected)) byId(selected).classList.add("mt-selected");
  }
  // the tensor panel beside the graph when that costs the graph little, below it otherwise
  function layout() {
    const w = root.querySelector(".mt-exbody").clientWidth;
    const pw = 300 * (parseFloat(getComputedStyle(root).getPropertyValue("--mt-scale")) || 1);
    if (!w || !vp) return;
    root.classList.toggle("mt-wide", mtPanelBelow(vp, w, pw + 10));
    vp.fit();
  }
  function open(token) {      // with the modules open now if that state was laid out, else alone
    const want = new Set(opened()); want.add(token);
    const k = [...want].sort().join("|");
    show(data.states[k] ? k : data.singles[token]);
  }
  function close(path) {
    const keep = [...opened()].filter((t) => t !== path && !t.startsWith(path + ".") && t !== "fold:" + path);
    const k = keep.sort().join("|");
    show(data.states[k] !== undefined ? k : data.initial);
  }
  function select(name) {
    for (const el of pane.querySelectorAll("g.node.mt-selected")) el.classList.remove("mt-selected");
    selected = name;
    const el = byId(name); if (el) el.classList.add("mt-selected");
    side.innerHTML = data.details[name] || "";
    root.dataset.selected = name;
  }
  show(key);
  root.mtExplorer = { show, open, close, select, get key() { return key; } };
}
"""
