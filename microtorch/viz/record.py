"""viz.record: a tape of what the engine did, from its event stream.

    with viz.record() as tape:
        loss = f(x)
        loss.backward()

The tape subscribes to `microtorch.autograd.graph.add_listener` for the duration of the
block and keeps every event in order (node created, backward started, node executing, hook
fired, gradient accumulated, backward finished), each with numpy snapshots of the values it
carried at that moment (the engine may later change a `.grad` in place). `tape` is a list
of entries; `tape.backwards` splits it per backward call; the stepper, the hook timeline,
`draw(..., tape=tape)` and `blame` all read it. The last four tapes are also kept by the
module, so that `viz.blame(loss)` finds the forward pass of a loss computed inside
`with viz.record():` without `as tape`.
"""
import collections
import itertools
from dataclasses import dataclass, field

from . import _format as F

_tape_ids = itertools.count()
_recent_tapes = collections.deque(maxlen=4)   # the last tapes: blame finds a forward pass here

_KINDS = {
    "NodeCreated": "node_created",
    "BackwardStarted": "backward_started",
    "NodeExecuting": "node_executing",
    "HookFired": "hook_fired",
    "GradAccumulated": "grad_accumulated",
    "BackwardFinished": "backward_finished",
}


def _snap(value):
    """Snapshot a tensor, or a tuple/list of them (node hooks carry tuples)."""
    if isinstance(value, (tuple, list)):
        return tuple(_snap(v) for v in value)
    return F.snapshot(value)


def _snap_saved(node):
    """[(value, version saved, version now)] of a node's saved tensors (copies), or None."""
    sv = getattr(node, "saved_versions", None)
    saved = sv() if sv is not None else None
    if not saved:
        return saved
    return [None if e is None else (F.snapshot(e[0]), e[1], e[2]) for e in saved]


def _is_tensor(x):
    from .._tensor import Tensor
    return isinstance(x, Tensor)


@dataclass
class Entry:
    """One event on the tape: `kind`, the engine's `event`, `values` snapshotted when it
    arrived, and `backward` (the index of the backward call it happened in, or None)."""
    index: int
    kind: str
    event: object
    values: dict = field(default_factory=dict)
    backward: int = None

    @property
    def node(self):
        return getattr(self.event, "node", None)

    def describe(self):
        ev, v = self.event, self.values
        if self.kind == "node_created":
            return f"created {F.node_title(ev.node)} -> {', '.join(F.summary(o) for o in v['outputs'])}"
        if self.kind == "backward_started":
            return f"backward from {len(ev.roots)} root(s), seed {', '.join(F.summary(g) for g in v['grads'])}"
        if self.kind == "node_executing":
            inc = ", ".join(F.summary(g) for g in v["incoming"]) or "—"
            out = ", ".join(F.summary(g) for g in v["outgoing"]) or "—"
            return f"ran {F.node_title(ev.node)}: in {inc} -> out {out}"
        if self.kind == "hook_fired":
            return f"{ev.kind} hook {getattr(ev.hook, '__name__', '') or ''} on {_target_title(ev.target)}: " \
                   f"{_summ(v['before'])} -> {_summ(v['after'])}"
        if self.kind == "grad_accumulated":
            return f"{_target_title(ev.tensor)}.grad: {F.summary(v['before'])} + {F.summary(v['contribution'])} " \
                   f"= {F.summary(v['after'])}"
        if self.kind == "backward_finished":
            return "backward finished"
        return type(ev).__name__

    def __repr__(self):
        return f"<{self.index}: {self.describe()}>"


def _summ(v):
    if isinstance(v, tuple):
        return "(" + ", ".join(F.summary(x) for x in v) + ")"
    return F.summary(v)


def _target_title(t):
    if _is_tensor(t):
        return f"tensor[{F.shape_str(t.shape)}]"
    if hasattr(t, "name"):
        return F.node_title(t)
    return type(t).__name__


def node_key(node):
    """Identity of a backward node; a leaf's AccumulateGrad is keyed by its tensor."""
    if F.is_accumulate(node):
        return ("t", id(node.variable))
    return ("n", id(node))


def target_key(target):
    """The node_key a hook's or accumulation's target belongs to (None for modules)."""
    if _is_tensor(target):
        if target.grad_fn is None:
            return ("t", id(target))
        return ("n", id(target.grad_fn))
    if hasattr(target, "next_functions") or F.is_accumulate(target):
        return node_key(target)
    return None


class NodeRun:
    """A node that ran in one backward: its node_executing entry, the hooks that fired for it
    and the accumulations into its leaf. `outgoing` is what really flowed on its edges: the
    node's result after its post-hooks (a node hook may replace it)."""

    def __init__(self, entry):
        self.entry = entry
        self.node = entry.event.node
        self.hooks = []
        self.accumulations = []

    def add(self, e):
        (self.hooks if e.kind == "hook_fired" else self.accumulations).append(e)

    @property
    def incoming(self):
        return self.entry.values["incoming"]

    @property
    def outgoing(self):
        out = self.entry.values["outgoing"]
        for h in self.hooks:
            if h.event.kind == "node_post" and isinstance(h.values["after"], tuple) \
                    and len(h.values["after"]) == len(out):
                out = h.values["after"]
        return out


class Backward:
    """The entries of one backward call, from BackwardStarted to BackwardFinished."""

    def __init__(self, index, start):
        self.index = index
        self.start = start              # the backward_started Entry
        self.entries = [start]
        self.finished = False
        self._runs = None

    @property
    def roots(self):
        return self.start.event.roots

    @property
    def seeds(self):
        return self.start.values["grads"]

    @property
    def steps(self):
        """The node_executing entries, in the order the engine ran the nodes."""
        return [e for e in self.entries if e.kind == "node_executing"]

    def waiting(self):
        """The engine's dependency counts as each node ran: yields (entry, counts) for every
        node_executing entry, in order, counts being {node: edges still to arrive} of the nodes
        still waiting. Rebuilt from the changes each event carries, in one dict updated in place
        (copy it to keep it), so that replaying a long backward stays linear."""
        counts = {}
        for e in self.steps:
            for n, c in e.values["dependencies"].items():
                if c:
                    counts[n] = c
                else:
                    counts.pop(n, None)
            yield e, counts

    def runs(self):
        """One NodeRun per node that ran, in order, with the hooks and accumulations that
        concern it: matched by their target (not by position, so that it does not matter
        whether the engine reports a hook before or after the node's event)."""
        if self._runs is not None:
            return self._runs
        runs, index = [], {}
        for e in self.entries:
            if e.kind == "node_executing":
                run = NodeRun(e)
                index.setdefault(node_key(e.event.node), len(runs))
                runs.append(run)
        pending = []
        for e in self.entries:
            if e.kind == "node_executing":
                pos = index.get(node_key(e.event.node))
                if pos is not None and pending:
                    for p in pending:
                        runs[pos].add(p)
                pending = []
            elif e.kind in ("hook_fired", "grad_accumulated"):
                target = e.event.target if e.kind == "hook_fired" else e.event.tensor
                k = target_key(target)
                if k is not None and k in index:
                    runs[index[k]].add(e)
                else:
                    pending.append(e)
        if pending and runs:
            for p in pending:
                runs[-1].add(p)
        self._runs = runs
        return runs

    def __repr__(self):
        return f"<backward {self.index}: {len(self.steps)} nodes ran{'' if self.finished else ', unfinished'}>"


class Tape:
    """What the engine did while recording: a list of Entry, in order."""

    def __init__(self, copy_values=True):
        self.entries = []
        self.backwards = []
        self.copy_values = copy_values
        self._stack = []
        self._created = {}      # id(node) -> node_created Entry
        self._handle = None
        self.id = next(_tape_ids)

    # -- recording -----------------------------------------------------------------------
    def __enter__(self):
        from ..autograd import graph
        if self._handle is not None:
            raise RuntimeError("this tape is already recording; use a new viz.record()")
        self._handle = graph.add_listener(self._on_event)
        if self not in _recent_tapes:
            _recent_tapes.append(self)
        return self

    def __exit__(self, *exc):
        if self._handle is not None:
            self._handle.remove()
            self._handle = None

    @property
    def recording(self):
        return self._handle is not None

    def _on_event(self, event):
        kind = _KINDS.get(type(event).__name__, type(event).__name__)
        snap = _snap if self.copy_values else (lambda v: v)
        values = {}
        if kind == "node_created":
            values["inputs"] = tuple(snap(a) if _is_tensor(a) else a for a in event.inputs)
            values["outputs"] = tuple(snap(o) for o in event.outputs)
        elif kind == "backward_started":
            values["grads"] = tuple(snap(g) for g in event.grads)
        elif kind == "node_executing":
            values["incoming"] = tuple(snap(g) for g in event.incoming)
            values["outgoing"] = tuple(snap(g) for g in event.outgoing)
            values["ready"] = tuple(event.ready)
            values["dependencies"] = event.dependencies     # the counts changed at this step: see Backward.waiting
            values["saved"] = _snap_saved(event.node)       # backward frees them after this node ran
        elif kind == "hook_fired":
            values["before"] = snap(event.before)
            values["after"] = snap(event.after)
        elif kind == "grad_accumulated":
            values["before"] = snap(event.before)
            values["contribution"] = snap(event.contribution)
            values["after"] = snap(event.after)
        entry = Entry(len(self.entries), kind, event, values)
        if kind == "backward_started":
            bw = Backward(len(self.backwards), entry)
            self.backwards.append(bw)
            self._stack.append(bw)
            entry.backward = bw.index
        elif self._stack:
            bw = self._stack[-1]
            entry.backward = bw.index
            bw.entries.append(entry)
            if kind == "backward_finished":
                bw.finished = True
                self._stack.pop()
        if kind == "node_created":
            self._created[id(event.node)] = entry
        self.entries.append(entry)

    # -- reading -------------------------------------------------------------------------
    def __len__(self):
        return len(self.entries)

    def __getitem__(self, i):
        return self.entries[i]

    def __iter__(self):
        return iter(self.entries)

    @property
    def events(self):
        """The engine's event objects, in order."""
        return [e.event for e in self.entries]

    def kinds(self):
        """The kind of every entry, in order (handy in tests and for a quick look)."""
        return [e.kind for e in self.entries]

    def created(self, node):
        """The node_created Entry of a backward node (None if it was made before recording)."""
        return self._created.get(id(node))

    def backward(self, which=-1):
        """One recorded backward (the last by default); a clear error if there is none."""
        if not self.backwards:
            raise ValueError("this tape recorded no backward: call loss.backward() (or autograd.grad) "
                             "inside `with viz.record() as tape:`")
        try:
            return self.backwards[which]
        except IndexError:
            raise IndexError(f"the tape recorded {len(self.backwards)} backward call(s); "
                             f"backward={which} does not exist") from None

    def values(self, which=-1):
        """Values of one backward for viz.draw(..., tape=tape)."""
        return TapeValues(self, self.backward(which) if self.backwards else None)

    def hooks(self):
        """The hook_fired entries, in firing order."""
        return [e for e in self.entries if e.kind == "hook_fired"]

    def draw(self, backward=-1, **kwargs):
        """viz.draw of the roots of a recorded backward, edges labelled with its gradients."""
        from .graph import draw
        bw = self.backward(backward)
        kwargs.setdefault("names", "auto")
        return draw(*bw.roots, tape=self, **kwargs)

    def __repr__(self):
        head = f"<viz tape: {len(self.entries)} events, {len(self.backwards)} backward call(s)>"
        lines = [head] + [f"  {e.index:3d} {e.kind:17s} {e.describe()}" for e in self.entries[:60]]
        if len(self.entries) > 60:
            lines.append(f"  ... {len(self.entries) - 60} more")
        return "\n".join(lines)

    def _repr_html_(self):
        from ._theme import style_tag
        rows = "".join(
            f"<tr><td>{e.index}</td><td class='mt-l'>{e.kind}</td><td class='mt-l'>"
            f"{'' if e.backward is None else e.backward}</td><td class='mt-l mt-num'>{F.esc(e.describe())}</td></tr>"
            for e in self.entries[:200])
        more = f"<div class='mt-muted'>... {len(self.entries) - 200} more</div>" if len(self.entries) > 200 else ""
        return (f"<div class='mtviz'>{style_tag()}<div><b>viz tape</b> <span class='mt-muted'>"
                f"{len(self.entries)} events, {len(self.backwards)} backward call(s)</span></div>"
                f"<table class='mt-table'><tr><th>#</th><th class='mt-l'>kind</th><th class='mt-l'>backward</th>"
                f"<th class='mt-l'>what</th></tr>{rows}</table>{more}</div>")


class TapeValues:
    """Values of one backward, in the form viz.draw asks for them."""

    def __init__(self, tape, bw):
        self.tape = tape
        self.bw = bw
        self._exec = {}
        self._acc = {}
        if bw is not None:
            for run in bw.runs():
                self._exec.setdefault(id(run.node), run)
            for e in bw.entries:
                if e.kind == "grad_accumulated":
                    self._acc.setdefault(id(e.event.tensor), []).append(e)

    def output_value(self, node, nr=0):
        e = self.tape.created(node)
        if e is None:
            return None
        outs = e.values["outputs"]
        return outs[nr] if nr < len(outs) else None

    def incoming(self, node):
        run = self._exec.get(id(node))
        return run.incoming if run is not None else None

    def saved(self, node):
        """The node's saved tensors with versions as they were when it ran (None: not recorded)."""
        run = self._exec.get(id(node))
        return run.entry.values.get("saved") if run is not None else None

    def edge_grad(self, node, i):
        run = self._exec.get(id(node))
        if run is None:
            return None
        out = run.outgoing
        return out[i] if i < len(out) else None

    def seed(self, t):
        if self.bw is None:
            return None
        for r, g in zip(self.bw.roots, self.bw.seeds):
            if r is t:
                return g
        return None

    def leaf_grad(self, t):
        acc = self._acc.get(id(t))
        if acc:
            return acc[-1].values["after"]
        return F.snapshot(t.grad) if t.grad_fn is None else None

    def leaf_grad_before(self, t):
        acc = self._acc.get(id(t))
        if acc:
            return acc[0].values["before"]
        return F.snapshot(t.grad) if t.grad_fn is None else None


def record(copy_values=True):
    """`with viz.record() as tape:` keeps the engine's events (see the module docstring).
    copy_values=False keeps references instead of numpy copies (less memory, but a value
    changed in place later shows its new value)."""
    return Tape(copy_values=copy_values)


def find_creation(node):
    """The node_created Entry of `node` in any live tape (newest first), or None."""
    for tape in reversed(list(_recent_tapes)):
        e = tape.created(node)
        if e is not None:
            return e
    return None
