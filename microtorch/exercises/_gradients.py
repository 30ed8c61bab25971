"""Judging gradients: a student's Function by gradcheck / gradgradcheck (with forward AD when
it has a `jvp`), and a chain of gradients computed by hand, node by node.

On a wrong answer the verdict carries the visualizer's pictures: the heatmaps of the failing
Jacobian entries (viz.gradcheck), blame on the first wrong node of a bigger graph
(viz.blame), or the chain-rule step where the student's numbers part from autograd's.
The viz imports happen only when a picture is drawn."""
import numpy as np

from .._tensor import Tensor
from ._judge import Unusable, as_array, compare, missing, ok, wrong
from ._result import Html


def callable_of(answer, what):
    """`f` for a Function subclass (its .apply) or a plain function; Unusable otherwise."""
    if missing(answer):
        raise Unusable(f"{what} is not written yet: replace the `...` (or the `raise NotImplementedError`) "
                       "and run the cell again.")
    apply = getattr(answer, "apply", None)
    if isinstance(answer, type) and apply is not None:
        return apply
    if callable(answer):
        return answer
    raise Unusable(f"{what} should be a Function class or a function, got {type(answer).__name__}.")


def _call(f, inputs, what):
    try:
        return f(*inputs)
    except NotImplementedError:
        raise Unusable(f"{what} still raises NotImplementedError: write it, then run the cell again.") from None
    except Exception as e:
        extra = ""
        if "does not require grad" in str(e):
            extra = "\n(To differentiate a gradient again, compute it with create_graph=True.)"
        raise Unusable(f"calling {what} raised {type(e).__name__}: {e}{extra}") from None


def _heatmap(report):
    def make():
        from ..viz.jacobian import GradcheckView
        return GradcheckView(report, pairs="failing")
    return make


def _blame(fn, inputs):
    def make():
        from ..viz import blame
        return blame(fn, *inputs)
    return make


def _diagnose(pair, side):
    """Words for the typical mistakes visible in one failing Jacobian pair."""
    a, n = np.real(pair.analytical), np.real(pair.numerical)
    where = f"(output {pair.output_index}, input {pair.input_index})"
    if np.allclose(a, -n, rtol=1e-3, atol=1e-5) and np.any(np.abs(n) > 1e-8):
        return f"your {side} has the wrong sign: its Jacobian {where} is the negative of the finite differences."
    if not np.any(a) and np.any(n):
        return (f"your {side} gives zero for {where} where the finite differences are not zero: does it return "
                "None, or a zero tensor, for that input?")
    diagonal = a.shape[0] == a.shape[1] and a.shape[0] > 1 and np.allclose(n, np.diag(np.diag(n)))
    if side == "jvp" and diagonal and np.allclose(a, a[:, :1], atol=1e-8) and np.any(a - np.diag(np.diag(a))):
        return (f"your jvp ignores the tangent: every column of its Jacobian {where} is the same. Multiply the "
                "local derivative by the tangent argument.")
    offdiag = diagonal
    if offdiag and np.any(np.abs(a - np.diag(np.diag(a))) > 1e-8) and np.allclose(a, a[:1], atol=1e-8):
        return (f"your {side} ignores the incoming gradient: every row of its Jacobian {where} is the same. "
                "Multiply the local derivative by `grad` (the chain rule's upstream factor).")
    nz = np.abs(n) > 1e-8
    if nz.any() and np.allclose(a[~nz], 0, atol=1e-8):
        r = a[nz] / n[nz]
        if np.allclose(r, r.flat[0], rtol=1e-3):
            return (f"your {side} is off by a constant factor ({r.flat[0]:.4g} times the finite differences) "
                    f"for {where}: a factor of the derivative is missing or counted twice.")
        return (f"your {side} disagrees with the finite differences for {where} by a factor that changes from "
                "entry to entry: a chain-rule factor that depends on the input is missing or wrong.")
    return f"your {side} disagrees with the finite differences for {where} (the outlined entries of the heatmap)."


def _failing_pair(report):
    for p in report.pairs:
        if p.checked and not p.passed:
            return p
    return None


def _run_report(check, f, inputs, what, **kw):
    try:
        return check(f, inputs, **kw)
    except NotImplementedError as e:
        if not str(e):
            raise Unusable(f"a method of {what} still raises NotImplementedError: write it, then run the cell "
                           "again.") from None
        raise Unusable(f"{what}: {e}") from None
    except Exception as e:
        raise Unusable(f"gradcheck could not run {what}'s backward: {type(e).__name__}: {e}") from None


def check_function(answer, inputs, *, what, reference=None, gradgrad=False, forward_ad=False, composite=None):
    """gradcheck (and gradgradcheck, forward AD) a student's Function or function on `inputs`,
    after comparing its forward with `reference(*inputs)`. `composite(f)` -> a function of the
    same inputs using f inside a bigger graph, for viz.blame."""
    from ..autograd import gradcheck as gc
    try:
        f = callable_of(answer, what)
        out = _call(f, inputs, what)
        if isinstance(out, Tensor) and not out.requires_grad:
            return wrong(f"the output of {what} does not require grad, so autograd cannot differentiate it: it was "
                         "computed outside autograd (numpy, .detach(), .item(), mt.tensor(...)) or under no_grad. "
                         "Use tensor operations.")
        if reference is not None:
            v = compare(out, reference(*inputs), what=f"the forward of {what}")
            if not v.passed:
                return v
        report = _run_report(gc.check, f, inputs, what, check_forward_ad=forward_ad)
    except Unusable as e:
        return wrong(str(e))
    if not report.passed:
        pair = _failing_pair(report)
        side = "jvp" if pair is not None and pair.mode == "forward" else "backward"
        reason = _diagnose(pair, side) if pair is not None else report.message.strip().splitlines()[0]
        # blame shows the graph and, below it, the heatmap of the first failing node: one of the two
        visuals = [_blame(composite(f), inputs) if composite is not None else _heatmap(report)]
        return wrong(f"gradcheck fails: {reason}", *visuals)
    if gradgrad:
        try:
            report2 = _run_report(gc.check_gradgrad, f, inputs, what)
        except Unusable as e:
            return wrong(str(e))
        if not report2.passed:
            return wrong("gradcheck passes, but gradgradcheck fails: the backward itself is not differentiated "
                         "correctly. Is part of it computed outside autograd (numpy, .detach(), .item(), "
                         "mt.tensor(...))? Write it with tensor operations.", _heatmap(report2))
    return ok()


# ---- a chain of gradients by hand ---------------------------------------------------------------
def _sends_to(node, t):
    """Whether backward node `node` passes a gradient to tensor `t` (its grad_fn or accumulator)."""
    for fn, _ in getattr(node, "next_functions", ()):
        if fn is not None and (fn is t.grad_fn if t.grad_fn is not None else getattr(fn, "variable", None) is t):
            return True
    return False


def _step_picture(build, prev, name, got_prev, got):
    """The chain-rule step from `prev` to `name`: the formula the engine applies, and the
    student's own numbers (upstream, and the local factor they imply)."""
    def make():
        from ..viz._mathml import to_mathml
        from ..viz.stepper import step_backward
        loss, order = build()
        tensors = {e[0]: e[1] for e in order}
        stepper = step_backward(loss, names=tensors)
        target = tensors[name]
        step = next((s for s in stepper.steps if s.node is not None and _sends_to(s.node, target)), None)
        formulas = "".join(f"<div>{to_mathml(t)}</div>" for t in (step.latex if step is not None else []))
        g_prev, g = np.asarray(got_prev, dtype=float), np.asarray(got, dtype=float)
        mine = f"upstream d/d{prev} = {np.array2string(g_prev, precision=4)} (yours, right), " \
               f"downstream d/d{name} = {np.array2string(g, precision=4)} (yours, not right)"
        body = (f"<div class='mt-ex-step'><b>the step where the numbers part: {step.title if step else prev} "
                f"({prev} &rarr; {name})</b>{formulas}<div>{mine}</div></div>")
        return Html(body, f"the chain-rule step {prev} -> {name}: {mine}")
    return make


def check_chain(answers, build, *, loss="L"):
    """Judge hand-computed gradients {name: value} against autograd, in backward order.

    build() -> (loss, [(name, tensor), ...]) with the tensors in the order backward reaches
    them; the first one is the loss itself (its gradient is 1). An entry may name the tensor
    that consumes it, (name, tensor, consumer), when that is not the entry before it. The first
    wrong name is reported with the step that sends its gradient."""
    if missing(answers) or not isinstance(answers, dict):
        return wrong("your answer should be a dict {name: gradient}, e.g. {'u': ..., 'x': ...}; "
                     f"got {type(answers).__name__}.")
    out, order = build()
    consumers = {e[0]: (e[2] if len(e) > 2 else order[i - 1][0]) for i, e in enumerate(order) if i}
    order = [e[:2] for e in order]
    for _, t in order:
        if not t.is_leaf:
            t.retain_grad()
    out.backward()
    ref = {name: (t.grad if t.grad is not None else Tensor._make(np.ones(t.shape))) for name, t in order}
    names = [n for n, _ in order]
    for i, name in enumerate(names[1:], start=1):
        what = f"your d{loss}/d{name}"
        if name not in answers:
            return wrong(f"your answer has no entry for {name!r} (it needs {names[1:]}).")
        v = compare(answers[name], ref[name], what=what)
        if v.passed:
            continue
        prev = consumers[name]
        got_prev = answers.get(prev, 1.0) if prev != names[0] else 1.0
        try:
            g, r, rp = as_array(answers[name], what), as_array(ref[name], ""), as_array(ref[prev], "")
            if g.shape == r.shape and (rp.shape == r.shape or rp.size == 1) and np.all(rp != 0) \
                    and np.allclose(g, r / rp, rtol=1e-5) and not np.allclose(rp, 1):
                v.reason = (f"{what} is only the local derivative d{prev}/d{name}: multiply it by the "
                            f"upstream gradient d{loss}/d{prev} (the chain rule: upstream x local).")
        except Unusable:
            pass
        where = (f"d{loss}/d{prev} is right, d{loss}/d{name} is not: the numbers part at the step from "
                 f"{prev} to {name}.\n") if prev != names[0] else ""
        try:
            visuals = [_step_picture(build, prev, name, as_array(got_prev, ""), as_array(answers[name], ""))]
        except Unusable:
            visuals = []
        return wrong(where + v.reason, *visuals)
    return ok()
