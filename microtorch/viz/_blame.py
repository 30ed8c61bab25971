"""viz.blame: which node of a graph has a wrong backward?

Every node recorded by `viz.record()` remembers its op (the Function behind it) and the
inputs it was called with. `blame` replays each op on those inputs (in float64) and runs
gradcheck on it alone, so a custom Function with a wrong backward fails by itself instead
of making every gradient downstream look wrong. The DAG comes back coloured green (passed),
red (failed) or dashed (not checked, with the reason in its tooltip), and the heatmaps of
the first failing node are shown below.

    with viz.record():
        loss = model(x)
    viz.blame(loss)          # or viz.blame(fn, *inputs), which records the forward itself
"""
import warnings
from dataclasses import dataclass

import numpy as np

from . import _format as F
from ._names import collect
from ._i18n import tr
from ._theme import scale_style, style_tag


@dataclass
class NodeVerdict:
    """The check of one node: status 'passed', 'failed', 'skipped' or 'error'."""
    node: object
    dot: str
    title: str
    status: str
    reason: str = ""
    report: object = None

    def __repr__(self):
        return f"<{self.title}: {self.status}{' (' + self.reason + ')' if self.reason else ''}>"


def _function_of(node):
    return getattr(node, "function_class", None)


def _replay_inputs(creation, double=True):
    """Fresh tensors from the inputs recorded when the node was created (float64 if asked),
    requiring grad where the original did; other arguments as they were."""
    from .._tensor import Tensor
    import microtorch as mt
    args = []
    for raw, snap in zip(creation.event.inputs, creation.values["inputs"]):
        if isinstance(raw, Tensor):
            arr = np.asarray(snap if snap is not None else raw.detach())
            if double and arr.dtype.kind == "f":
                arr = arr.astype(np.float64)
            elif double and arr.dtype.kind == "c":
                arr = arr.astype(np.complex128)
            t = mt.from_numpy(np.array(arr, copy=True))
            if raw.requires_grad and arr.dtype.kind in "fc":
                t.requires_grad_(True)
            args.append(t)
        else:
            args.append(raw)
    return tuple(args)


def check_node(node, creation, *, eps=1e-6, atol=1e-5, rtol=1e-3):
    """gradcheck one recorded node on its own inputs; returns (status, reason, report)."""
    from .._tensor import Tensor
    from ..autograd.gradcheck import check
    cls = _function_of(node)
    if cls is None:
        return "skipped", "not a Function node", None
    if creation is None:
        return "skipped", "created before recording: compute it inside `with viz.record():`", None
    kwargs = getattr(creation.event, "kwargs", None) or {}

    def func(*xs):
        return cls.apply(*xs, **kwargs)

    # 1. replay at the recorded precision: the op must give what it gave
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = func(*_replay_inputs(creation, double=False))
    except Exception as e:
        return "skipped", f"could not replay the op on its recorded inputs ({type(e).__name__}: " \
                          f"{str(e).splitlines()[0][:120] if str(e) else ''})", None
    outs = out if isinstance(out, tuple) else (out,)
    recorded = creation.values["outputs"]
    outs_t = [o for o in outs if isinstance(o, Tensor)]
    if len(outs_t) != len(recorded) or not all(
            o.shape == tuple(r.shape) and np.allclose(np.asarray(o.detach()), r, rtol=1e-4, atol=1e-6, equal_nan=True)
            for o, r in zip(outs_t, recorded)):
        return "skipped", "replaying the op did not reproduce its output (it is random, e.g. dropout)", None
    if not any(isinstance(a, Tensor) and a.requires_grad for a in _replay_inputs(creation)):
        return "skipped", "no input requires grad", None
    # 2. gradcheck it in float64
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            report = check(func, _replay_inputs(creation), eps=eps, atol=atol, rtol=rtol,
                           check_undefined_grad=False)
    except Exception as e:
        msg = str(e).strip().splitlines()[0][:160] if str(e).strip() else type(e).__name__
        return "error", f"{type(e).__name__}: {msg}", None
    pairs = [p for p in report.pairs if p.checked]
    if pairs and all(p.passed for p in pairs):
        return "passed", "", report
    if not pairs:
        if report.passed:
            return "passed", "", report
        return "failed", (report.message.strip().splitlines() or [""])[0][:160], report
    bad = next(p for p in pairs if not p.passed)
    return "failed", f"Jacobian mismatch for output {bad.output_index} with respect to input {bad.input_index}", report


class BlameReport:
    """`.verdicts` (one NodeVerdict per op node, breadth first from the loss), `.failing`,
    `.first_failing`, `.dag` (coloured), `.heatmap` (GradcheckView of the first failing node
    or None), `.save("blame.html")`."""

    def __init__(self, verdicts, dag):
        self.verdicts = verdicts
        self.dag = dag
        self.failing = [v for v in verdicts if v.status in ("failed", "error")]
        self.first_failing = self.failing[0] if self.failing else None
        self._heatmap = None

    @property
    def heatmap(self):
        if self._heatmap is None and self.first_failing is not None and self.first_failing.report is not None:
            from .jacobian import GradcheckView
            self._heatmap = GradcheckView(self.first_failing.report, pairs="all")
        return self._heatmap

    def _repr_html_(self):
        # verdicts: tr("passed"), tr("failed"), tr("skipped"), tr("error")
        esc = F.esc
        n_checked = sum(v.status in ("passed", "failed", "error") for v in self.verdicts)
        if self.failing:
            names = ", ".join(f"<b>{esc(v.title)}</b>" for v in self.failing)
            head = (f"<span class='mt-badge mt-fail'>{tr('{n} wrong').format(n=len(self.failing))}</span> {names}: "
                    + tr("its backward disagrees with finite differences on its own inputs"))
        else:
            head = f"<span class='mt-badge mt-pass'>{tr('all {n} checked nodes pass').format(n=n_checked)}</span>"
        skipped = [v for v in self.verdicts if v.status == "skipped"]
        rows = "".join(
            f"<tr class='{'mt-failrow' if v.status in ('failed', 'error') else ''}'><td class='mt-l'>{esc(v.title)}</td>"
            f"<td class='mt-l'>{esc(tr(v.status))}</td><td class='mt-l mt-muted'>{esc(v.reason)}</td></tr>"
            for v in self.verdicts)
        parts = [f"<div class='mtviz mt-blame'{scale_style()}>{style_tag()}<div><b>blame</b> {head}</div>",
                 "<div class='mt-muted'>" + tr("{n} node(s) gradchecked on their recorded inputs (float64), {k} "
                                               "skipped; green passed, red failed, dashed not checked")
                 .format(n=n_checked, k=len(skipped)) + "</div>",
                 self.dag.pane_html(),
                 f"<details><summary>{tr('every node')}</summary><table class='mt-table'><tr><th class='mt-l'>{tr('node')}</th>"
                 f"<th class='mt-l'>{tr('verdict')}</th><th class='mt-l'>{tr('why')}</th></tr>{rows}</table></details>"]
        if self.heatmap is not None:
            parts.append(f"<div style='margin-top:8px'><b>{tr('first failing node:')} {esc(self.first_failing.title)}</b></div>")
            parts.append(self.heatmap._repr_html_())
        parts.append("</div>")
        return "".join(parts)

    def _repr_mimebundle_(self, include=None, exclude=None, **_):
        return {"text/html": self._repr_html_(), "text/plain": repr(self)}

    def __repr__(self):
        lines = [f"<viz.blame: {len(self.failing)} failing of {len(self.verdicts)} nodes>"]
        lines += [f"  {v.title}: {v.status}{' - ' + v.reason if v.reason else ''}" for v in self.verdicts]
        return "\n".join(lines)

    def save(self, path):
        import os
        p = os.fspath(path)
        if not p.lower().endswith((".html", ".htm")):
            raise ValueError("a blame report saves as .html (its graph: report.dag.save('g.svg'))")
        from .export import page
        with open(p, "w", encoding="utf-8") as f:
            f.write(page(self._repr_html_(), title="microtorch blame"))
        return p


def blame(loss, *inputs, tape=None, eps=1e-6, atol=1e-5, rtol=1e-3, names="auto", params=None,
          module=None, max_nodes=300):
    """gradcheck every node of `loss`'s graph on its own recorded inputs and colour the DAG.

    loss: a tensor computed inside `with viz.record():` (or pass tape=), or a function, in
    which case blame(fn, *inputs) records fn(*inputs) itself."""
    from .._tensor import Tensor
    from .graph import DAG, _check_roots, build
    from .record import find_creation, record
    nm = collect(names, params, module, frame_depth=2)
    if callable(loss) and not isinstance(loss, Tensor):
        with record() as tape:
            loss = loss(*inputs)
        if isinstance(loss, (tuple, list)):
            loss = tuple(t for t in loss if isinstance(t, Tensor))
    elif inputs:
        raise TypeError("viz.blame(loss) takes no inputs; to record a forward pass, give a function: "
                        "viz.blame(fn, *inputs)")
    roots = _check_roots(loss if isinstance(loss, tuple) else (loss,), "blame")
    if not any(r.grad_fn is not None for r in roots):
        raise ValueError("viz.blame: this tensor has no grad_fn (a leaf, or computed without grad): there is "
                         "no node to check")
    model = build(list(roots), nm, values=tape.values() if tape is not None and tape.backwards else None,
                  max_nodes=max_nodes, show_hooks=False, auto_names=True)
    verdicts = []
    found_any = False
    for dot, spec in model.nodes.items():
        if spec.kind != "op":
            continue
        node = spec.obj
        creation = tape.created(node) if tape is not None else find_creation(node)
        found_any = found_any or creation is not None
        status, reason, report = check_node(node, creation, eps=eps, atol=atol, rtol=rtol)
        title = spec.title + (f" ({spec.var})" if spec.var else "")
        verdicts.append(NodeVerdict(node, dot, title, status, reason, report))
        spec.classes.append({"passed": "mt-ok", "failed": "mt-bad", "error": "mt-bad"}.get(status, "mt-skip"))
        spec.tooltip += f"\nblame: {status}" + (f" ({reason})" if reason else "")
    if not found_any:
        raise ValueError("viz.blame needs the forward pass recorded: compute the loss inside "
                         "`with viz.record():` (or call viz.blame(fn, *inputs))")
    return BlameReport(verdicts, DAG(model, rankdir="TB"))
