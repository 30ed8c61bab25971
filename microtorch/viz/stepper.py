"""viz.step_backward / viz.Stepper: step through a recorded backward pass in the browser.

Python turns one recorded backward (a `viz.record()` tape) into a list of `Step`s: which
node runs, the gradients that arrive on its edges (a re-used tensor shows each
contribution), the hooks that change them, the chain rule applied (a LaTeX formula, shown
as MathML, then the numbers), what accumulates into a leaf's `.grad` (before +
contribution = after), and the engine's ready queue and dependency counts afterwards. The
widget (an anywidget) receives the laid-out SVG and all steps once; Back / Next / Play /
Reset, the slider, the arrow keys and clicks on nodes then step in the browser alone.
"""
import numbers
from dataclasses import dataclass, field

import numpy as np

import anywidget
import traitlets

from . import _chain as C
from . import _format as F
from ._mathml import to_mathml
from ._names import Names, collect
from ._nodenotes import note
from ._stepper_js import CSS as _STEPPER_CSS, ESM as _ESM
from ._tensorpanel import CSS as _PANEL_CSS, details_map
from ._theme import CSS as _THEME_CSS
from ._i18n import tr
from .graph import DAG, DEFAULT_MAX_NODES, browser_layout_js, build, svg_or_none
from .hooks import is_internal


@dataclass
class Step:
    """The state shown at one step. `nodes`: the DOT names highlighted as running;
    `incoming`: gradient(s) arriving (after hooks); `outgoing`: one per next_functions edge;
    `contributions`: [(output_nr, source title, value)] that summed into `incoming`;
    `accumulation`: (before, contribution, after) of a leaf's .grad; `ready` and `waiting`:
    the engine's queue and dependency counts after the step (DOT names)."""
    index: int
    kind: str                       # "seed" or "node"
    title: str
    nodes: list
    node: object = None
    incoming: tuple = ()
    outgoing: tuple = ()
    contributions: list = field(default_factory=list)
    hooks: list = field(default_factory=list)
    accumulation: tuple = None
    ready: list = field(default_factory=list)
    waiting: dict = field(default_factory=dict)
    waiting_more: int = 0
    latex: list = field(default_factory=list)
    numbers: list = field(default_factory=list)
    broadcast: dict = field(default_factory=dict)    # input -> (gradient's shape, input's shape)
    panel: str = ""

    @property
    def gradient(self):
        """The gradient this step is about: the seed, or what arrived at the node."""
        if self.kind == "seed":
            return self.outgoing[0] if self.outgoing else None
        return self.incoming[0] if self.incoming else None

    def __repr__(self):
        g = F.summary(self.gradient)
        return f"<Step {self.index}: {self.title} at {','.join(self.nodes)}, gradient {g}>"


# hook kinds, translated where shown: tr("tensor hook"), tr("retain_grad"), tr("node pre-hook"),
# tr("node hook"), tr("post-accumulate hook"), tr("module backward hook"), tr("module backward pre-hook"),
# tr("captured for autograd.grad"), tr("multi-grad hook"), tr("module forward pre-hook"), tr("module forward hook")
_HOOK_KIND = {"tensor": "tensor hook", "retain_grad": "retain_grad", "node_pre": "node pre-hook",
              "node_post": "node hook", "post_accumulate": "post-accumulate hook",
              "module_backward": "module backward hook", "module_backward_pre": "module backward pre-hook",
              "capture": "captured for autograd.grad", "multi_grad": "multi-grad hook", "module_forward_pre": "module forward pre-hook",
              "module_forward": "module forward hook"}


def _lnum(x):
    """A number for LaTeX: 1e-08 -> 1\\times10^{-8}."""
    s = F.num(x)
    if "e" in s and "j" not in s:
        mant, exp = s.split("e")
        return (mant + r"\times" if mant not in ("1", "-1") else ("-" if mant == "-1" else "")) + "10^{" + exp + "}"
    return s


def _paren(s):
    return f"({s})" if s.startswith("-") else s


def _is_scalar(*arrays):
    return all(a is None or a.size == 1 for a in arrays)


def _scalar_operand(node):
    """[the number] of a Scalar overload (MulBackward1: t * 2 inside a backward formula), which has an
    edge for its tensor only and keeps the number (torch's `_saved_other`, kept after backward); ["c"]
    when it cannot be read; [] for a node without one."""
    try:
        other = getattr(node, "_saved_other", None)
    except RuntimeError:
        return ["c"]
    return [_lnum(other)] if isinstance(other, numbers.Real) and not isinstance(other, bool) else []


def _val(a):
    return a.reshape(()).item() if a is not None else None


_OTHER_DIRECTION_MAX_NODES = 60     # a lesson's graph; a bigger one is far from fitting either way


class _Builder:
    """Turns one recorded backward into Steps and the widget's data."""

    def __init__(self, tape, backward, names, max_nodes, rankdir, renderer, show_values):
        self.tape = tape
        self.bw = tape.backward(backward)
        self.values = tape.values(backward)
        self.names = names
        roots = list(self.bw.roots)
        model = build(roots, names, values=self.values, max_nodes=max_nodes, show_values=show_values,
                      show_hooks=True, auto_names=True)
        self.model = model
        self._auto_names()
        self.dag = DAG(model, rankdir=rankdir, renderer=renderer, module_types=names.module_types)
        self._dot_memo = {}
        self._details = None
        self._keep = []
        self.loss_sym = self._loss_symbol(roots)

    # -- names -----------------------------------------------------------------------------
    def _auto_names(self):
        """Every tensor in the formulas needs a symbol: a variable name, else x7 / v3."""
        self.var = {name: spec.var for name, spec in self.model.nodes.items()}

    def _loss_symbol(self, roots):
        if len(roots) == 1:
            n = self.model.name_of(roots[0])
            v = self.var.get(n) if n else None
            return C.symbol(v) if v else "L"
        return "L"

    def dot_name(self, node):
        """DOT name of a backward node, or of the "more" node when it was collapsed (memoized:
        the dependency counts of a long backward name every waiting node at every step)."""
        key = id(node)
        n = self._dot_memo.get(key, self)
        if n is not self:
            return n
        n = self.model.name_of(node)
        if n is None and self.model.more is not None and F.node_title(node) != "GraphRoot":
            n = self.model.more
        self._dot_memo[key] = n
        return n

    def sym(self, dot_name, fallback="x"):
        v = self.var.get(dot_name) if dot_name else None
        return C.symbol(v, fallback)

    def out_sym(self, node):
        """Symbol of the tensor a node produced: its name, or the root's name for the loss."""
        n = self.dot_name(node)
        for r in self.bw.roots:
            if r.grad_fn is node:
                rn = self.model.name_of(r)
                if rn and self.var.get(rn):
                    return C.symbol(self.var[rn])
        return self.sym(n, "y")

    # -- steps ----------------------------------------------------------------------------
    def steps(self, max_steps):
        runs = self.bw.runs()
        steps = []
        arrivals = {}          # id(node) -> [(output_nr, source title, source dot, value, edge index)]
        for run in runs[:max_steps]:
            st = self._step(len(steps), run, arrivals)
            steps.append(st)
            src_title = "seed" if st.kind == "seed" else F.node_title(run.node)
            src_dot = st.nodes[0] if st.nodes else None
            out = run.outgoing
            for i, (nxt, nr) in enumerate(getattr(run.node, "next_functions", ()) or ()):
                if nxt is None or i >= len(out) or out[i] is None:
                    continue
                arrivals.setdefault(id(nxt), []).append((nr, src_title, src_dot, out[i], i))
        if not steps:
            raise ValueError("the recorded backward ran no node; record a backward of a tensor that "
                             "requires grad (loss.backward() inside `with viz.record() as tape:`)")
        replay = self.bw.waiting()     # the dependency counts as each node ran, in order
        for k, st in enumerate(steps):
            if k + 1 < len(runs):
                nxt_entry = runs[k + 1].entry
                ready_nodes = [nxt_entry.event.node] + list(nxt_entry.values["ready"])
                st.ready = self._dedupe(self.dot_name(n) for n in ready_nodes)
                st.waiting = {}
                deps = next(d for e, d in replay if e is nxt_entry)
                seen = 0
                for n, c in deps.items():      # the panel shows a dozen: stop early on big graphs
                    seen += 1
                    d = self.dot_name(n)
                    if d is not None and c:
                        st.waiting[d] = st.waiting.get(d, 0) + c
                        if len(st.waiting) >= 30:
                            break
                st.waiting_more = len(deps) - seen
            st.panel = self._panel(st, len(steps))
        if len(runs) > len(steps):
            steps[-1].panel += (f"<div class='mt-sec mt-sec-hook'><h4>{tr('Not shown')}</h4>"
                                + tr("backward ran {n} more node(s) after this one (max_steps={m}); viz.draw shows "
                                     "the whole graph").format(n=len(runs) - len(steps), m=max_steps) + "</div>")
        return steps

    @staticmethod
    def _dedupe(items):
        seen, out = set(), []
        for x in items:
            if x is not None and x not in seen:
                seen.add(x)
                out.append(x)
        return out

    def _step(self, index, run, arrivals):
        node = run.node
        v = run.entry.values
        if index == 0 and F.node_title(node) == "GraphRoot":
            nodes = self._dedupe(self.model.name_of(r) for r in self.bw.roots)
            return Step(index, "seed", "seed", nodes, node=None, incoming=(), outgoing=tuple(run.outgoing))
        dot = self.dot_name(node)
        st = Step(index, "node", F.shown_name(F.node_title(node)), [dot] if dot else [], node=node,
                  incoming=tuple(v["incoming"]), outgoing=tuple(run.outgoing))
        st.contributions = [(nr, t, d, g) for nr, t, d, g, _ in arrivals.get(id(node), [])]
        for h in run.hooks:
            ev = h.event
            if is_internal(ev.hook):
                continue
            st.hooks.append({"kind": ev.kind, "name": getattr(ev.hook, "__name__", "") or "",
                             "before": h.values["before"], "after": h.values["after"],
                             "changed": not F.same_values(h.values["before"], h.values["after"])})
        if run.accumulations:
            a = run.accumulations[-1].values
            st.accumulation = (a["before"], a["contribution"], a["after"])
        self._chain(st, node, dot)
        return st

    def _chain(self, st, node, dot):
        """The chain rule of one node as LaTeX (st.latex), with numbers for scalars (st.numbers);
        a broadcast input's gradient is summed back to its shape (sum_to) in both."""
        if st.kind != "node":
            return
        L = self.loss_sym
        if F.is_accumulate(node):
            x = self.sym(dot)
            st.latex.append(x + r"\mathrm{.grad} \leftarrow " + x + r"\mathrm{.grad} + " + C.partial(L, x))
            return
        nexts = list(getattr(node, "next_functions", ()) or ())
        created = self.tape.created(node)
        inputs = created.values["inputs"] if created is not None else ()
        in_syms = self._input_symbols(node, nexts, created, inputs)
        inc = st.incoming[0] if st.incoming else None
        scalar = _is_scalar(inc, *st.outgoing)
        op = F.short_op(F.node_title(node))
        rule, N = self._rule(node, op, inputs, len(nexts))
        y = self.out_sym(node)
        G = C.partial(L, y)
        OP = r"\cdot" if scalar else r"\odot"
        for i, (nxt, _) in enumerate(nexts):
            if nxt is None or i >= len(st.outgoing) or st.outgoing[i] is None:
                continue
            xi, out = in_syms[i], st.outgoing[i]
            rhs = C.fill(rule[i], G, in_syms, OP, N) if rule else C.generic(G, y, xi, scalar)
            if op in C.BROADCASTING and inc is not None and np.shape(out) != np.shape(inc):
                rhs = C.sum_to(rhs, np.shape(out))          # the adjoint of broadcasting is a sum
                st.broadcast[i] = (tuple(np.shape(inc)), tuple(np.shape(out)))
            edge_note = r"\quad\text{(input " + str(i) + ")}" if in_syms.count(xi) > 1 else ""
            st.latex.append(C.partial(L, xi) + " = " + rhs + edge_note)
            if scalar and inc is not None:
                st.numbers.append(self._numbers(C.partial(L, xi), inc, out) + edge_note)

    def _input_symbols(self, node, nexts, created, inputs):
        """A LaTeX symbol per edge: its input's variable name, a number for a scalar constant, else c.
        (An op's edges stand for some of its arguments: `edge_inputs` says which.)"""
        syms = []
        raw_inputs = created.event.inputs if created is not None else ()
        for (nxt, _), i in zip(nexts, node.edge_inputs()):
            if nxt is not None:
                syms.append(self.sym(self.dot_name(nxt)))
            elif i < len(raw_inputs) and self.names.tensor(raw_inputs[i]):
                syms.append(C.symbol(self.names.tensor(raw_inputs[i])))
            else:
                c = inputs[i] if i < len(inputs) else None
                try:
                    is_num = c is not None and getattr(c, "size", 1) == 1 and not isinstance(c, str)
                    syms.append(_lnum(_val(c) if hasattr(c, "reshape") else c) if is_num else "c")
                except Exception:
                    syms.append("c")
        if len(syms) == 1:
            syms.extend(_scalar_operand(node))
        return syms

    @staticmethod
    def _rule(node, op, inputs, n_inputs):
        """The local rule's templates for this node (or None: the generic VJP) and its @N."""
        title = F.node_title(node)
        digits = title[len(op) + len("Backward"):] if "Backward" in title else ""
        key = op + ("1" if op == "Pow" and digits == "1" else "")
        N = None
        if op == "Pow" and len(inputs) > 1 and not hasattr(inputs[1], "shape"):
            N = _lnum(inputs[1])
        elif op == "Pow" and len(inputs) > 1 and getattr(inputs[1], "size", 2) == 1 and digits == "0":
            N = _lnum(_val(inputs[1]))
        elif op == "Mean" and inputs and hasattr(inputs[0], "size"):
            N = str(inputs[0].size)
        rule = C.local_rule(key, n_inputs)
        if (op == "Pow" and N is None and key == "Pow") or (op == "Mean" and N is None):
            rule = None
        if op == "Add" and getattr(node, "alpha", 1) not in (1, None):
            rule = ["@G", _lnum(node.alpha) + r"\,@G"]
        return rule, N

    @staticmethod
    def _numbers(lhs, inc, out):
        g, o = _val(inc), _val(out)
        if g == 0:
            return lhs + " = 0" + r"\times(\ldots) = " + _lnum(o)
        return lhs + " = " + _paren(_lnum(g)) + r"\times" + _paren(_lnum(o / g)) + " = " + _lnum(o)

    # -- the side panel ---------------------------------------------------------------------
    def _title_of(self, dot):
        spec = self.model.nodes.get(dot)
        if spec is None:
            return dot
        var = self.var.get(dot)
        if spec.kind == "op":
            return f"{spec.title} ({var})" if var else spec.title
        return spec.title

    def _panel(self, st, n_steps):
        h = []
        esc = F.esc
        if st.kind == "seed":
            roots = ", ".join(F.esc_name(self._title_of(d)) for d in st.nodes)
            h.append(f"<div class='mt-head'><span class='mt-badge'>{tr('step {k} / {n}').format(k=0, n=n_steps - 1)}</span>"
                     f"<b>{tr('backward starts')}</b><span class='mt-muted'>{tr('at {roots}').format(roots=roots)}</span></div>")
            L = self.loss_sym
            seeds = st.outgoing
            h.append(f"<div class='mt-sec mt-sec-chain'><h4>{tr('Seed')}</h4>")
            h.append(_math(C.partial(L, L) + " = " + (_lnum(_val(seeds[0])) if seeds and seeds[0] is not None
                                                          and seeds[0].size == 1 else r"\mathbf{1}")))
            for d, g in zip(st.nodes, seeds):
                h.append(f"<div class='mt-line'>{F.esc_name(self._title_of(d))}: {tr('gradient')} "
                         f"<span class='mt-gradv'>{esc(F.summary(g))}</span></div>")
            h.append("<div class='mt-muted'>" + tr("The gradient of the output with respect to itself starts the "
                                                   "chain rule; it flows down the edges.") + "</div></div>")
        else:
            dot = st.nodes[0] if st.nodes else None
            h.append(f"<div class='mt-head'><span class='mt-badge'>{tr('step {k} / {n}').format(k=st.index, n=n_steps - 1)}</span>"
                     f"<b>{F.esc_name(st.title)}</b><span class='mt-muted'>{esc(self._var_note(dot))}</span></div>")
            if note(st.title):
                h.append(f"<div class='mt-muted mt-note'>{esc(note(st.title))}</div>")
            self._arrivals_html(st, h)
            if st.hooks:
                h.append(f"<div class='mt-sec mt-sec-hook'><h4>{tr('Hooks')}</h4>")
                for hk in st.hooks:
                    changed = " mt-changed" if hk["changed"] else ""
                    h.append(f"<div class='mt-line{changed}'>{esc(tr(_HOOK_KIND.get(hk['kind'], hk['kind'])))} "
                             f"<code>{esc(hk['name'] or '')}</code>: {esc(F.summary_values(hk['before']))} → "
                             f"{esc(F.summary_values(hk['after']))}{' ' + tr('(changed)') if hk['changed'] else ''}</div>")
                h.append("</div>")
            if F.is_accumulate(st.node):
                self._accum_html(st, h, dot)
            else:
                self._chain_html(st, h)
        h.append(self._engine_html(st))
        return "".join(h)

    def _var_note(self, dot):
        spec = self.model.nodes.get(dot)
        if spec is None:
            return ""
        if spec.kind == "more":
            return tr("(a node not drawn)")
        if spec.kind in ("leaf", "const"):
            return tr("writes {x}.grad").format(x=self.var.get(dot))
        var = self.var.get(dot)
        return tr("output {v}").format(v=var) if var else ""

    def _arrivals_html(self, st, h):
        esc = F.esc
        L = self.loss_sym
        dot = st.nodes[0] if st.nodes else None
        y = self.out_sym(st.node) if not F.is_accumulate(st.node) else self.sym(dot)
        h.append(f"<div class='mt-sec'><h4>{tr('Gradient arriving')}</h4>")
        h.append(to_mathml(C.partial(L, y), display=False) + " ")
        if not st.contributions:
            h.append(f"<span class='mt-gradv'>{esc(F.summary(st.gradient))}</span>")
        elif len(st.contributions) == 1:
            nr, t, d, g = st.contributions[0]
            h.append(f"<span class='mt-gradv'>{esc(F.summary(g))}</span> "
                     f"<span class='mt-src'>{tr('from {src}').format(src=F.esc_name(self._title_of(d) if d else t))}</span>")
        else:
            h.append(tr("= sum of {n} contributions (the tensor is used {n} times):").format(n=len(st.contributions)))
            for nr, t, d, g in st.contributions:
                h.append(f"<div class='mt-line'>+ <span class='mt-gradv'>{esc(F.summary(g))}</span> "
                         f"<span class='mt-src'>{tr('from {src}').format(src=F.esc_name(self._title_of(d) if d else t))}</span></div>")
            total = None
            try:
                total = sum(F.values(g) for _, _, _, g in st.contributions if g is not None)
            except Exception:
                pass
            h.append(f"<div class='mt-line'>= <span class='mt-gradv'>{esc(F.summary(total))}</span></div>")
        if st.hooks and any(hk["changed"] for hk in st.hooks if hk["kind"] in ("tensor", "node_pre")):
            h.append(f"<div class='mt-line mt-changed'>{tr('after hooks:')} {esc(F.summary(st.gradient))}</div>")
        h.append("</div>")

    def _chain_html(self, st, h):
        h.append(f"<div class='mt-sec mt-sec-chain'><h4>{tr('Chain rule: upstream × local = downstream')}</h4>")
        if not st.latex:
            h.append(f"<div class='mt-muted'>{tr('no input needs a gradient from this node')}</div>")
        for tex in st.latex:
            h.append(_math(tex))
        for tex in st.numbers:
            h.append(_math(tex))
        if not st.numbers:
            self._tensor_numbers(st, h)
        h.append("</div>")

    def _tensor_numbers(self, st, h):
        """What each input receives, with its shape; a broadcast input shows the sum."""
        esc = F.esc
        nexts = list(getattr(st.node, "next_functions", ()) or ())
        for i, g in enumerate(st.outgoing):
            if g is None:
                continue
            nxt = nexts[i][0] if i < len(nexts) else None
            name = self.var.get(self.dot_name(nxt)) if nxt is not None else None
            who = tr("to input {i}").format(i=i) + (f" ({esc(name)})" if name else "")
            value = f"<span class='mt-gradv'>{esc(F.summary(g, 6))}</span>"
            shape = f"<span class='mt-muted'>{esc(tr('shape'))} {esc(_shape_tuple(np.shape(g)))}</span>"
            if i in st.broadcast:
                src, dst = st.broadcast[i]
                h.append(f"<div class='mt-line mt-bcast'>{who}: sum_to(…, {esc(_shape_tuple(dst))}) = {value} {shape} "
                         f"<span class='mt-muted'>{esc(tr('summed from shape {src}: the adjoint of broadcasting is a sum').format(src=_shape_tuple(src)))}</span></div>")
            else:
                h.append(f"<div class='mt-line'>{who}: {value} {shape}</div>")

    def _accum_html(self, st, h, dot):
        x = self.var.get(dot) or "x"
        h.append(f"<div class='mt-sec mt-sec-acc'><h4>{tr('Accumulate into the leaf')}</h4>")
        for tex in st.latex:
            h.append(_math(tex))
        if st.accumulation is not None:
            before, contrib, after = st.accumulation
            b = "None" if before is None else F.summary(before)
            h.append(f"<div class='mt-line'>{F.esc(x)}.grad = {F.esc(b)} + "
                     f"<span class='mt-gradv'>{F.esc(F.summary(contrib))}</span> = "
                     f"<b>{F.esc(F.summary(after))}</b></div>")
            if before is None:
                h.append(f"<div class='mt-muted'>{tr('.grad was None: the first gradient is stored (a copy).')}</div>")
            else:
                h.append("<div class='mt-muted'>" + tr(".grad already held a value: gradients accumulate "
                                                       "(call .grad = None or zero_grad() between steps).") + "</div>")
        else:
            h.append("<div class='mt-muted'>" + tr("nothing accumulated (no gradient arrived, or autograd.grad "
                                                   "returned it instead of writing .grad)") + "</div>")
        h.append("</div>")

    def _engine_html(self, st):
        esc = F.esc
        parts = [f"<div class='mt-sec'><h4>{tr('Engine: ready queue and dependencies')}</h4>"]
        if st.ready:
            chips = []
            for j, d in enumerate(st.ready[:12]):
                cls = "mt-chip mt-chip-next" if j == 0 else "mt-chip mt-chip-ready"
                chips.append(f"<span class='{cls}'>{F.esc_name(self._title_of(d))}</span>")
            more = f" <span class='mt-muted'>+{len(st.ready) - 12}</span>" if len(st.ready) > 12 else ""
            parts.append("<div>" + tr("ready (next first):") + " " + "".join(chips) + more + "</div>")
        else:
            parts.append(f"<div class='mt-muted'>{tr('ready queue empty: backward is done')}</div>"
                         if st.index > 0 and not st.waiting else f"<div class='mt-muted'>{tr('ready queue empty')}</div>")
        waiting = [(d, c) for d, c in st.waiting.items() if d not in st.ready]
        if waiting:
            chips = "".join(f"<span class='mt-chip'>{F.esc_name(self._title_of(d))} <b>{c}</b></span>"
                            for d, c in waiting[:12])
            extra = max(0, len(waiting) - 12) + st.waiting_more
            more = f" <span class='mt-muted'>{tr('+{n} more nodes').format(n=extra)}</span>" if extra else ""
            parts.append(f"<div>{tr('waiting for edges:')} {chips}{more}</div>")
        parts.append("</div>")
        return "".join(parts)

    # -- browser data ---------------------------------------------------------------------
    def details(self):
        """Each node's tensor panel (value, gradient after this backward, saved tensors as they
        were when the node ran), built once."""
        if self._details is None:
            self._details = details_map(self.model, self.values, self.names)
        return self._details

    def layout(self):
        """{"svg": laid out here, "alt": the other direction} or, when only the browser can lay
        it out, {"dot": source}."""
        svg = svg_or_none(self.dag)
        if svg is not None:
            return {"svg": svg, "rankdir": self.dag.rankdir, "alt": self._other_direction()}
        return {"svg": None, "dot": self.dag.source, "text_classes": self.dag.text_classes()}

    def _other_direction(self):
        """The graph laid out in the other direction (TB <-> LR, the same ids) when it is small
        enough to lay out twice: the browser shows the asked direction if it fits the output's
        width with legible text, else this one if it does (a wide left-to-right graph in a
        narrow output then grows downwards instead of scrolling sideways)."""
        if len(self.model.nodes) > _OTHER_DIRECTION_MAX_NODES:
            return None
        other = {"TB": "LR", "LR": "TB", "BT": "RL", "RL": "BT"}[self.dag.rankdir]
        dag = DAG(self.model, rankdir=other, renderer=self.dag.render_with, id_prefix=self.dag.prefix,
                  module_types=self.dag.module_types, scale=self.dag.scale)
        svg = svg_or_none(dag)
        return {"rankdir": other, "svg": svg} if svg is not None else None

    def _grad_texts(self, steps, exec_step):
        """For each node with a gradient cell, [(from step, text)]: what the cell shows as the stepper
        steps (a dash, or a leaf's .grad before this backward, until the node has run)."""
        model = self.model
        grad_text = {}
        for name, spec in model.nodes.items():
            has_grad = any(isinstance(r, list) and any(c == "mt-grad" for _, c in r) for r in spec.rows)
            if not has_grad:
                continue
            texts = [[-1, f"{tr('grad')} —"]]
            if spec.kind == "leaf":
                before = self.values.leaf_grad_before(spec.obj)
                texts = [[-1, f"{tr('grad')} {F.summary(before)}"]]
            k = exec_step.get(name)
            if k is not None:
                st = steps[k]
                if spec.kind == "out":
                    i = st.nodes.index(name) if name in st.nodes else 0
                    g = st.outgoing[i] if i < len(st.outgoing) else None
                elif spec.kind == "leaf":
                    g = st.accumulation[2] if st.accumulation is not None else None
                else:
                    g = st.incoming[0] if st.incoming else None
                if g is not None:
                    texts.append([k, f"{tr('grad')} {F.summary(g)}"])
            grad_text[name] = texts
        return grad_text

    def data(self, steps, interval):
        model = self.model
        exec_step = {}
        for st in steps:
            for d in st.nodes:
                if st.kind == "seed" or d not in exec_step or d == model.more:
                    exec_step[d] = st.index
        for primary, aliases in model.aliases.items():
            if primary in exec_step:
                for a in aliases:
                    exec_step[a] = exec_step[primary]

        def expand(names):
            return list(names) + [a for n in names for a in model.aliases.get(n, ())]
        edges = []
        for e in model.edges:
            s = exec_step.get(e.src)
            edges.append([e.name, s if s is not None else len(steps) + 1])
        grad_text = self._grad_texts(steps, exec_step)
        for name, texts in grad_text.items():
            model.nodes[name].grad_texts = [t for _, t in texts]
        # emitted again, now that the boxes know every text their gradient cell will show
        self.dag = DAG(model, rankdir=self.dag.rankdir, renderer=self.dag.render_with, id_prefix=self.dag.prefix,
                       module_types=self.dag.module_types, scale=self.dag.scale)
        return {
            "prefix": self.dag.prefix,
            "scale": self.dag.scale,
            "labels": _labels(),
            **self.layout(),
            "nodes": list(model.nodes),
            "exec": exec_step,
            "edges": edges,
            "grad_text": grad_text,
            "details": self.details(),
            "steps": [{"nodes": expand(st.nodes), "ready": expand(st.ready), "panel": st.panel, "title": st.title}
                      for st in steps],
            "interval": int(interval),
        }


def _shape_tuple(shape):
    """(3,) -> '(3,)', (4, 3) -> '(4, 3)', () -> '()': a shape as Python writes it."""
    return str(tuple(int(d) for d in shape))


def _labels():
    """The widget's own words (toolbar, legend, hints), in the current language."""
    return {
        "reset": tr("Reset"), "reset_tip": tr("Reset (Home)"), "back": tr("Back"), "back_tip": tr("Back (←)"),
        "play": tr("Play"), "pause": tr("Pause"), "play_tip": tr("Play / pause (space)"), "next": tr("Next"),
        "next_tip": tr("Next (→)"), "step": tr("step"), "counter": tr("step {k} / {n}"),
        "zoom_in": tr("Zoom in (+)"), "zoom_out": tr("Zoom out (−)"), "fit": tr("fit"),
        "fit_tip": tr("Show the whole graph (0, or double-click the graph)"), "text": tr("text"),
        "scale_tip": tr("Text size (viz.set_options(scale=...) sets it for every picture)"),
        "running": tr("running now"), "ready": tr("in the ready queue"), "done": tr("done"),
        "grad_edge": tr("gradient on an edge"), "close": tr("close"),
        "hint": tr("← → step, space plays, click a node to jump and see its tensor; drag to pan, ctrl+wheel or +/− to zoom"),
    }


def _math(tex):
    return "<div class='mt-math'>" + to_mathml(tex) + "</div>"






class Stepper(anywidget.AnyWidget):
    """Step through one recorded backward. `Stepper(tape)` (the last backward on the tape)
    or `viz.step_backward(loss)`. `.steps[i]` is the Python state of step i; `.index` is
    the step shown (kept in sync with the browser); `.save("backward.html")` exports a page
    that replays without a kernel. Big graphs: at most `max_nodes` are drawn (the rest is one
    "... N more nodes" node) and the first `max_steps` nodes that ran are stepped through.
    `rankdir` ("TB" or "LR") is the direction asked for: a graph of up to 60 nodes is also laid
    out in the other one, which the browser shows when only that one fits the output's width
    with legible text."""

    _esm = _ESM
    _css = _THEME_CSS + _PANEL_CSS + _STEPPER_CSS
    data = traitlets.Dict().tag(sync=True)
    index = traitlets.Int(0).tag(sync=True)
    scale = traitlets.Float(1.0).tag(sync=True)

    def __init__(self, tape, backward=-1, *, names="auto", params=None, module=None, rankdir="TB",
                 max_nodes=DEFAULT_MAX_NODES, max_steps=1000, show_values=True, interval=900, renderer="auto",
                 **kwargs):
        from .record import Tape
        if not isinstance(tape, Tape):
            raise TypeError(f"viz.Stepper expects a tape from `with viz.record() as tape:`, got "
                            f"{type(tape).__name__}; for a tensor use viz.step_backward(loss)")
        if not isinstance(names, Names):
            names = collect(names, params, module, frame_depth=2)
        b = _Builder(tape, backward, names, max_nodes, rankdir, renderer, show_values)
        if not isinstance(max_steps, int) or max_steps < 1:
            raise ValueError(f"max_steps must be a positive int, got {max_steps!r}")
        steps = b.steps(max_steps)
        data = b.data(steps, interval)
        super().__init__(data=data, index=0, scale=b.dag.scale, **kwargs)
        if data["svg"] is None:         # laid out in the browser: ship the layout engine too
            self._esm = browser_layout_js() + "\n" + _ESM
        self._builder, self._interval = b, interval
        self.steps = steps
        self.dag = b.dag
        self.tape = tape
        self.observe(self._rescale, names="scale")

    def _rescale(self, change):
        """The widget's text-size control: lay the graph out again with the new font sizes."""
        b = self._builder
        b.dag = DAG(b.model, rankdir=b.dag.rankdir, renderer=b.dag.render_with, id_prefix=b.dag.prefix,
                    module_types=b.dag.module_types, scale=change["new"])
        self.dag = b.dag
        self.data = b.data(self.steps, self._interval)

    @property
    def step(self):
        """The Step shown now."""
        return self.steps[self.index]

    def go(self, i):
        n = len(self.steps)
        if not -n <= i < n:
            raise IndexError(f"step {i} out of range: this backward has {n} steps (0..{n - 1})")
        self.index = i % n
        return self.step

    def next(self):
        return self.go(min(self.index + 1, len(self.steps) - 1))

    def back(self):
        return self.go(max(self.index - 1, 0))

    def reset(self):
        return self.go(0)

    def state(self, i=None):
        """What step i shows, as plain data: highlighted DOT names, node title, gradients."""
        st = self.steps[self.index if i is None else i]
        return {"index": st.index, "highlighted": list(st.nodes), "title": st.title,
                "gradient": st.gradient, "incoming": st.incoming, "outgoing": st.outgoing,
                "ready": list(st.ready), "waiting": dict(st.waiting), "latex": list(st.latex)}

    def save(self, path):
        """Write a self-contained HTML page that replays the steps without a kernel."""
        from .export import save_stepper
        return save_stepper(self, path)

    def to_html(self, title="microtorch backward, step by step"):
        from .export import stepper_html
        return stepper_html(self, title)

    def __repr__(self):
        return f"<viz.Stepper: {len(self.steps)} steps, at step {self.index}>"


def step_backward(tensor, gradient=None, retain_graph=None, inputs=None, *, names="auto", params=None,
                  module=None, **kwargs):
    """Run `tensor.backward(...)` while recording and return a Stepper for it.

    This writes `.grad` as backward always does. To also show forward values, record the
    forward too: `with viz.record() as tape: loss = f(x); loss.backward()`, then
    `viz.Stepper(tape)`."""
    from .._tensor import Tensor
    from .record import record
    if not isinstance(tensor, Tensor):
        raise TypeError(f"viz.step_backward expects a Tensor (e.g. the loss), got {type(tensor).__name__}")
    if not tensor.requires_grad:
        raise ValueError("viz.step_backward: this tensor does not require grad, so backward has nothing to "
                         "do; compute it from tensors created with requires_grad=True")
    nm = collect(names, params, module, frame_depth=2)
    with record() as tape:
        tensor.backward(gradient=gradient, retain_graph=retain_graph, inputs=inputs)
    return Stepper(tape, names=nm, **kwargs)
