"""microtorch.exercises: every check fails, with a message naming the mistake, on typical wrong
answers (a wrong sign, a missing broadcast sum, a forgotten chain-rule factor, and the
exercise's own classic mistakes), never shows the reference value, renders in Jupyter, gives
hints only on request, and raises only with strict=True. (That every check passes on its
reference solution is tests/test_exercises_solutions.py.) References for the secret-leak
test come from PyTorch, the oracle."""
import math
import subprocess
import sys

import numpy as np
import pytest

import microtorch as mt
from microtorch.autograd import Function
from microtorch.exercises import Result, check

torch = pytest.importorskip("torch")


def fn_class(backward, forward=None, jvp=None, save_forward=False):
    """A one-input Function with the given backward(x, grad) (x is the saved input)."""
    def fwd(ctx, x):
        ctx.save_for_backward(x)
        if save_forward:
            ctx.save_for_forward(x)
        return forward(x) if forward else x

    ns = {"forward": staticmethod(fwd),
          "backward": staticmethod(lambda ctx, grad: backward(ctx.saved_tensors[0], grad))}
    if jvp is not None:
        ns["jvp"] = staticmethod(lambda ctx, t: jvp(ctx.saved_tensors[0], t))
    return type("Student", (Function,), ns)


sig = lambda x: x.sigmoid()
swish = lambda x: x * x.sigmoid()
dswish = lambda x: x.sigmoid() * (1 + x * (1 - x.sigmoid()))
cube = lambda x: x ** 3
cumsum = lambda x: x.cumsum(0)
numpy_cube = lambda x, g: g * mt.tensor(3 * x.detach().numpy() ** 2)


def mlp(kind):
    def manual(X, T, W1, b1, W2, b2):
        h = (X @ W1 + b1).tanh()
        out = h @ W2 + b2
        d_out = (2 if kind != "sign" else -2) * (out - T) / (out.numel() if kind != "no_mean" else 1)
        d_h = d_out @ W2.t()
        d_pre = d_h * (1 - h ** 2) if kind != "no_tanh" else d_h
        return {"out": d_out, "W2": h.t() @ d_out, "b2": d_out if kind == "no_sum" else d_out.sum(dim=0),
                "h": d_h, "W1": X.t() @ d_pre, "b1": d_pre.sum(dim=0)}
    return manual


def sgd_hook(kind):
    def make(lr):
        def hook(p):
            with mt.no_grad():
                p.add_(lr * p.grad) if kind == "sign" else p.sub_((1 if kind == "no_lr" else lr) * p.grad)
            if kind != "keep_grad":
                p.grad = None
        return hook
    return make


def sgd_by_hand(kind):
    def step(params, lr):
        if kind == "no_grad_missing":
            for p in params:
                p.sub_(lr * p.grad)
            return
        with mt.no_grad():
            for p in params:
                if kind == "rebind":
                    p = p - lr * p.grad
                else:
                    p += (lr if kind == "sign" else -lr) * p.grad
    return step


class Momentum:
    kind = "plain"

    def __init__(self, params, lr, momentum):
        self.params, self.lr, self.m, self.b = list(params), lr, momentum, {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def step(self):
        with mt.no_grad():
            for i, p in enumerate(self.params):
                g = p.grad
                if self.kind == "plain":
                    b = g
                elif self.kind == "dampened":
                    b = g if i not in self.b else self.m * self.b[i] + (1 - self.m) * g
                else:
                    b = g if i not in self.b else self.m * self.b[i] - g
                self.b[i] = b
                p -= self.lr * b


def scaled(kind):
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        a = 1.0 if kind == "no_alpha" else ctx.alpha
        if kind == "two":
            return grad * a * y, grad * a * x
        if kind == "swapped":
            return grad * a * x, grad * a * y, None
        return grad * a * y, grad * a * x, None

    def forward(ctx, x, y, alpha):
        ctx.save_for_backward(x, y)
        ctx.alpha = alpha
        return alpha * x * y
    return type("ScaledMul", (Function,), {"forward": staticmethod(forward), "backward": staticmethod(backward)})


def momentum(kind):
    return type("M", (Momentum,), {"kind": kind})


def twice_loss(w):
    a = w.tanh()
    b = a * 3
    a += 1
    return (a * b).sum()


def onehot(i, j, shape=(2, 3)):
    v = mt.zeros(*shape)
    v[i, j] = 1.0
    return v


def sum_to(kind):
    def f(g, shape):
        extra = g.dim() - len(shape)
        if extra:
            g = g.sum(dim=tuple(range(extra)))
        if kind == "leading_only":
            return g
        st = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
        return g.sum(dim=st, keepdim=kind != "no_keepdim") if st else (-g if kind == "sign" else g)
    return f


def ce(kind):
    def f(logits, y):
        oh = mt.zeros(*logits.shape, dtype=logits.dtype)
        oh[mt.arange(len(y)), y] = 1.0
        p = logits.softmax(dim=1)
        return {"no_mean": p - oh, "no_onehot": p / len(y), "sign": (oh - p) / len(y)}[kind]
    return f


def jac(kind):
    def f(fn, w):
        J = mt.func.jacrev(fn)(w.detach())
        return {"transpose": J.t(), "sign": -J, "first_row": J[0]}[kind]
    return f


T3 = math.tanh(1.25)
Y = math.tanh(-0.75)
E2 = math.exp(2)

CASES = {
    "sigmoid_local": [((lambda y: -y * (1 - y),), "wrong sign"), ((lambda y: 1 - y ** 2,), "tanh"),
                      ((lambda y: y,), "one of the two factors")],
    "neuron_w_grad": [((-(1 - T3 ** 2) * 2,), "wrong sign"), ((1 - T3 ** 2,), "forgot the chain factor"),
                      ((T3 * 2,), "tanh's derivative")],
    "my_sigmoid": [((lambda t: 1 / (1 + t.exp()),), "forward"), ((...,), "not written yet"),
                   ((lambda t: mt.tensor(1 / (1 + np.exp(-t.detach().numpy()))),), "outside autograd")],
    "h_prime": [((-3 * E2,), "wrong sign"), ((E2,), "one term of the product rule"),
                ((2 * E2,), "one term of the product rule")],
    "b_messages": [((2, 114.0), "count of messages"), ((3, 19.0), "chain factor db/da"),
                   ((3, -114.0), "wrong sign")],
    "chain_by_hand": [
        (({"y": 2 * (1 - Y), "z": 2 * (1 - Y) * (1 - Y ** 2), "w": 2 * (1 - Y) * (1 - Y ** 2) * 0.5},), "wrong sign"),
        (({"y": 2 * (Y - 1), "z": 1 - Y ** 2, "w": (1 - Y ** 2) * 0.5},), "multiply it by the upstream"),
        (({"y": 2 * (Y - 1), "z": 2 * (Y - 1) * (1 - Y ** 2), "w": 2 * (Y - 1) * (1 - Y ** 2)},), "from z to w")],
    "sq_norm_grad": [((lambda X: -2 * X,), "wrong sign"), ((lambda X: X,), "same factor"),
                     ((lambda X: 2 * X.sum(),), "shape")],
    "one_hot_gradient": [((mt.ones(2, 3),), "F.sum()"), ((onehot(0, 1),), "not right"),
                         ((mt.zeros(3),), "F's shape")],
    "is_leaf": [((True, True), "first answer"), ((False, False), "second answer"), (("no", True), "True or False")],
    "jacobian_by_rows": [((jac("transpose"),), "transpose"), ((jac("sign"),), "wrong sign"),
                         ((jac("first_row"),), "shape")],
    "accumulator": [((2, 12.0), "summed before the accumulator"), ((1, 6.0), "one of the two gradients"),
                    ((1, -12.0), "wrong sign")],
    "no_zero_grad": [((0.88,), "third step's own gradient"), ((6.0,), "w of its own step"), ((-4.48,), "wrong sign")],
    "mlp_backward": [((mlp("no_sum"),), "broadcast sum is missing"), ((mlp("no_mean"),), "same factor"),
                     ((mlp("no_tanh"),), "from h to W1"), ((mlp("sign"),), "wrong sign")],
    "broadcast_x_grad": [((mt.tensor([[1.0, 1, 1], [2, 3, 4]]),), "broadcast sum is missing"),
                         ((mt.tensor([3.0, 4, 5]),), "must have shape (1, 3)"),
                         ((mt.tensor([[-3.0, -4, -5]]),), "wrong sign")],
    "linear_W_grad": [((lambda X, W, T: X.t() @ (X @ W - T),), "chain factor 2"),
                      ((lambda X, W, T: 2 * (X @ W - T).t() @ X,), "shape"),
                      ((lambda X, W, T: 2 * X.t() @ (T - X @ W),), "wrong sign")],
    "sum_to": [((sum_to("leading_only"),), "broadcast sum is missing"), ((sum_to("no_keepdim"),), "numbers are right"),
               ((sum_to("sign"),), "wrong sign")],
    "clip_hook": [((1.0, 50.0), "factor 10"), ((50.0, 50.0), "does change"), ((10.0, 5.0), "without the hook")],
    "hook_order": [((3.0,), "other order"), ((2.0,), "both hooks run"), ((-4.0,), "wrong sign")],
    "sgd_in_backward": [((sgd_hook("sign"),), "against the gradient"), ((sgd_hook("no_lr"),), "learning rate"),
                        ((sgd_hook("keep_grad"),), "should be None")],
    "sigmoid_backward": [((fn_class(lambda x, g: -g * sig(x) * (1 - sig(x)), sig),), "wrong sign"),
                         ((fn_class(lambda x, g: sig(x) * (1 - sig(x)), sig),), "ignores the incoming gradient"),
                         ((fn_class(lambda x, g: g * sig(x), sig),), "changes from entry to entry")],
    "fixed_cumsum": [((fn_class(lambda x, g: g.cumsum(0), cumsum),), "finite differences"),
                     ((fn_class(lambda x, g: -g.flip(0).cumsum(0).flip(0), cumsum),), "wrong sign"),
                     ((fn_class(lambda x, g: None, cumsum),), "zero")],
    "relu_at_zero": [((0.0, 0.0), "numerical"), ((1.0, 0.0), "one-sided"), ((0.5, 0.5), "analytical")],
    "cube": [((fn_class(numpy_cube, cube),), "gradgradcheck fails"),
             ((fn_class(lambda x, g: -g * 3 * x ** 2, cube),), "wrong sign"),
             ((fn_class(lambda x, g: g * 3 * x, cube),), "changes from entry to entry")],
    "second_derivative": [
        ((lambda f, x: mt.autograd.grad(mt.autograd.grad(f(x), x)[0], x)[0],), "create_graph=True"),
        ((lambda f, x: mt.autograd.grad(f(x), x)[0],), "first derivative"),
        ((lambda f, x: -mt.func.grad(mt.func.grad(f))(x.detach()),), "wrong sign")],
    "logsumexp_hessian": [((lambda x: mt.diag(x.softmax(0)),), "- p p^T is missing"),
                          ((lambda x: -mt.outer(x.softmax(0), x.softmax(0)),), "diag(p) is missing"),
                          ((lambda x: mt.outer(x.softmax(0), x.softmax(0)) - mt.diag(x.softmax(0)),), "wrong sign")],
    "hvp": [((lambda f, x, v: mt.autograd.grad(f(x), x)[0] * v,), "first derivative"),
            ((lambda f, x, v: -mt.func.hessian(f)(x.detach()) @ v,), "wrong sign"),
            ((lambda f, x, v: mt.autograd.grad(mt.autograd.grad(f(x), x)[0], x, grad_outputs=v)[0],),
             "create_graph=True")],
    "grad_argnums": [((4.0,), "respect to a"), ((6.0,), "factor 2"), ((-12.0,), "wrong sign")],
    "tanh_derivatives": [((lambda xs: xs.tanh(),), "values tanh(x)"), ((lambda xs: 1 - xs ** 2,), "not 1 - x**2"),
                         ((lambda xs: xs.tanh() ** 2 - 1,), "wrong sign")],
    "per_sample_grads": [
        ((lambda f, w, x, t: mt.func.grad(lambda w_: sum(f(w_, a, b) for a, b in zip(x, t)) / len(t))(w),),
         "shape of one gradient"),
        ((lambda f, w, x, t: -mt.func.vmap(mt.func.grad(f), in_dims=(None, 0, 0))(w, x, t),), "wrong sign"),
        ((lambda f, w, x, t: mt.func.vmap(mt.func.grad(f), in_dims=(0, 0, 0))(w, x, t),), "raised")],
    "fixed_inplace": [((twice_loss,), "still raises"), ((lambda w: None,), "should return the loss"),
                      ((lambda w: (w.tanh() * w.tanh() * 3).sum(),), "your loss")],
    "inplace_prediction": [(("error", "error"), "sin"), (("works", "works"), "exp"), (("maybe", "error"), "one of")],
    "view_grad": [(([3.0, 3.0, 1.0],), "factor 2"), (([2.0, 2.0, 2.0],), "in-place mul_"),
                  (([6.0, 6.0, 6.0],), "first two")],
    "swish": [((fn_class(lambda x, g: g * sig(x) * x * (1 - sig(x)), swish),), "changes from entry to entry"),
              ((fn_class(lambda x, g: g * mt.tensor(dswish(x).detach().numpy()), swish),), "gradgradcheck fails"),
              ((fn_class(lambda x, g: -g * dswish(x), swish),), "wrong sign")],
    "swish_jvp": [((fn_class(lambda x, g: g * dswish(x), swish, save_forward=True),), "jvp"),
                  ((fn_class(lambda x, g: g * dswish(x), swish, jvp=lambda x, t: -dswish(x) * t, save_forward=True),),
                   "wrong sign"),
                  ((fn_class(lambda x, g: g * dswish(x), swish, jvp=lambda x, t: dswish(x), save_forward=True),),
                   "ignores the tangent")],
    "scaled_mul": [((scaled("no_alpha"),), "constant factor"), ((scaled("swapped"),), "finite differences"),
                   ((scaled("two"),), "incorrect number of gradients")],
    "grad_by_hand": [((-3 * E2, lambda x: x * x.exp(), 2.0), "wrong sign"),
                     ((mt.ones(3, 2), lambda b: (b + mt.ones(3, 2)).sum(), [0.5, -1.0]), "broadcast sum is missing"),
                     ((math.cos(0.6), lambda x: (2 * x).sin(), 0.3), "not right"),
                     (((1.0, 1.0), lambda a, b: a * b, 1.0, 2.0), "for input 0")],
    "function_backward": [
        ((fn_class(lambda x, g: -g * 2 * x, lambda x: x ** 2), mt.tensor([0.5, -1.0, 2.0])), "wrong sign"),
        ((fn_class(lambda x, g: 2 * x, lambda x: x ** 2), [0.5, -1.0, 2.0]), "ignores the incoming gradient"),
        ((fn_class(lambda x, g: g * (2 * x).cos(), lambda x: (2 * x).sin()), [0.5, -1.0, 2.0]), "constant factor")],
    "sgd_step": [((sgd_by_hand("sign"),), "wrong sign"), ((sgd_by_hand("no_grad_missing"),), "no_grad"),
                 ((sgd_by_hand("rebind"),), "did not change")],
    "momentum_sgd": [((momentum("plain"),), "not right"), ((momentum("dampened"),), "not right"),
                     ((momentum("minus"),), "not right")],
    "ce_grad": [((ce("no_mean"),), "same factor"), ((ce("no_onehot"),), "one-hot term"), ((ce("sign"),), "wrong sign")],
    "grad_fn_names": [((["Sum", "Mul"],), "Backward0"), ((["MulBackward0", "SumBackward0"],), "not right"),
                      (("SumBackward0",), "list of two")],
    "exception_types": [(("ValueError", "IndexError", "IndexError"), "backward twice"),
                        ((RuntimeError, "KeyError", "IndexError"), "zeros(3)[5]"),
                        (("RuntimeError", "IndexError", "RuntimeError"), "sum(dim=4)")],
    "same_on_both": [((lambda torch: None,), "should return a tensor"),
                     ((lambda lib: mt.ones(2, requires_grad=True).exp().sum().backward() or mt.ones(2),), "torch"),
                     ((lambda lib: lib.randn(3) if lib is mt else lib.zeros(3),), "not right")],
}


def test_every_check_has_three_typical_wrong_answers():
    assert sorted(CASES) == sorted(check.list())
    assert all(len(v) >= 3 for v in CASES.values())
    for n in range(1, 14):
        assert len(check.list(n)) >= 3, f"notebook {n} has fewer than 3 checks"
    assert check.list(0) == ["grad_by_hand", "function_backward"]           # for a teacher's own exercises


@pytest.mark.parametrize("name,args,expect", [(n, a, e) for n, cases in CASES.items() for a, e in cases],
                         ids=[f"{n}-{i}" for n, cases in CASES.items() for i in range(len(cases))])
def test_wrong_answer_fails_with_a_message_that_names_the_mistake(name, args, expect):
    result = getattr(check, name)(*args)
    assert isinstance(result, Result) and result.passed is False and not result
    assert expect.lower() in result.reason.lower(), f"{name}: {result.reason!r} should mention {expect!r}"
    assert result.hint is None and "hint" not in repr(result).lower()
    html = result._repr_html_()
    assert "not yet" in html and "mt-ex-fail" in html


def _torch_refs():
    """Reference values of some numeric exercises, from PyTorch."""
    x = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
    (x * x.exp()).backward()
    w = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
    (w * 2 + 0.25).tanh().backward()
    v = torch.tensor([0.0], requires_grad=True)
    v.register_hook(lambda g: g + 1)
    v.register_hook(lambda g: g * 2)
    v.backward(torch.tensor([1.0]))
    return {"h_prime": x.grad.item(), "neuron_w_grad": w.grad.item(), "hook_order": v.grad.item()}


@pytest.mark.parametrize("name", ["h_prime", "neuron_w_grad", "hook_order"])
def test_a_wrong_answer_never_shows_the_reference(name):
    ref = _torch_refs()[name]
    for wrong in (ref * 1.7 + 0.3, -ref, ref / 3):
        result = getattr(check, name)(wrong, hint=True)
        text = repr(result) + result.reason
        for fmt in ("{:.3g}", "{:.4g}", "{:.6g}", "{:.2f}"):
            assert fmt.format(ref) not in text.replace(fmt.format(wrong), ""), (name, fmt.format(ref), text[:300])
    right = getattr(check, name)(ref)
    assert right.passed and right and "mt-ex-pass" in right._repr_html_()


def test_hint_only_on_request_and_strict_raises():
    assert check.h_prime(1.0).hint is None
    assert check.h_prime(1.0, hint=True).hint == check.hint("h_prime").text
    assert "product rule" in check.hint("h_prime").text and "hint" in check.hint("h_prime")._repr_html_()
    with pytest.raises(AssertionError, match="h_prime"):
        check.h_prime(1.0, strict=True)
    assert check.h_prime(3 * math.exp(2), strict=True).passed
    with pytest.raises(AttributeError, match="no check named"):
        check.no_such_exercise
    with pytest.raises(KeyError):
        check.hint("no_such_exercise")


def test_a_check_called_the_wrong_way_says_how_to_call_it():
    result = check.b_messages(3)
    assert not result.passed and "called the wrong way" in result.reason and "dc_da" in result.reason


def test_failing_function_check_draws_heatmap_and_blame():
    from microtorch.viz import BlameReport
    from microtorch.viz.jacobian import GradcheckView
    buggy = fn_class(lambda x, g: g.cumsum(0), cumsum)
    result = check.fixed_cumsum(buggy)
    (blame,) = result.visuals()
    assert isinstance(blame, BlameReport) and isinstance(blame.heatmap, GradcheckView)
    assert blame.first_failing is not None and "Student" in blame.first_failing.title
    (heatmap,) = check.cube(fn_class(lambda x, g: g * 3 * x, cube)).visuals()
    assert isinstance(heatmap, GradcheckView) and not heatmap.passed
    html = result._repr_html_()
    assert "<svg" in html and "blame" in html


def test_chain_check_shows_the_step_where_the_numbers_part_without_its_numbers():
    y = math.tanh(-0.75)
    answers = {"y": 2 * (y - 1), "z": 2 * (y - 1) * (1 - y ** 2), "w": 2 * (y - 1) * (1 - y ** 2)}
    result = check.chain_by_hand(answers)
    (step,) = result.visuals()
    assert "MulBackward0" in step.html_text and "<math" in step.html_text and "z &rarr; w" in step.html_text
    right_w = answers["z"] * 0.5
    assert f"{right_w:.4g}" not in step.html_text and f"{right_w:.4g}" not in result.reason


def test_text_output_outside_a_notebook():
    out = subprocess.run([sys.executable, "-c", "from microtorch.exercises import check\n"
                          "print(check.h_prime(1.0)); print(check.list(2))"], capture_output=True, text=True, check=True)
    assert "[NOT YET] h_prime" in out.stdout and "is not right" in out.stdout and "chain_by_hand" in out.stdout


def test_import_microtorch_does_not_import_exercises():
    out = subprocess.run([sys.executable, "-c", "import sys, microtorch; print('microtorch.exercises' in sys.modules)"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_teaching_guide_names_only_what_exists():
    """docs/teaching.md: every viz.<name>, check.<name>, stepper.<name> and make target it
    mentions exists, and its course plan names every checked exercise exactly once."""
    import re
    from pathlib import Path
    from microtorch import viz
    root = Path(__file__).resolve().parent.parent
    text = (root / "docs" / "teaching.md").read_text()
    for name in set(re.findall(r"\bviz\.(\w+)\(", text)):
        assert hasattr(viz, name), f"docs/teaching.md mentions viz.{name}"
    for name in set(re.findall(r"\bcheck\.(\w+)\(", text)):
        assert name in ("hint", "list") or name in check.list(), f"docs/teaching.md mentions check.{name}"
    for name in set(re.findall(r"\bstepper\.(\w+)\(", text)):
        assert hasattr(viz.Stepper, name), f"docs/teaching.md mentions stepper.{name}"
    makefile = (root / "Makefile").read_text()
    phony = re.search(r"^\.PHONY:(.*)$", makefile, re.M).group(1).split()   # (make lite: deploy's, declared)
    for target in set(re.findall(r"`make (\w[\w-]*)", text)):
        assert re.search(rf"^{target}:", makefile, re.M) or target in phony, f"docs/teaching.md mentions make {target}"
    plan = "\n".join(ln for ln in text.splitlines() if ln.startswith("| ") and "lecture" not in ln)
    named = []
    for nb, a, b in re.findall(r"\b(\d\d)\.(\d)(?:-\d\d\.(\d))?", plan):
        named += [(int(nb), k) for k in range(int(a), int(b or a) + 1)]
    want = sorted((n, k) for n in range(1, 14) for k in range(1, len(check.list(n)) + 1))
    assert sorted(named) == want


def test_result_box_follows_the_presentation_scale():
    from microtorch import viz
    old = viz.set_options(scale=1.5)
    try:
        assert "--mt-ex-scale: 1.5" in check.h_prime(1.0)._repr_html_()
    finally:
        viz.set_options(**old)
    assert "--mt-ex-scale: 1'" in check.h_prime(1.0)._repr_html_()


def test_generic_checks_pass_on_right_answers():
    assert check.grad_by_hand(3 * E2, lambda x: x * x.exp(), 2.0).passed
    assert check.grad_by_hand((2.0, 1.0), lambda a, b: a * b, 1.0, 2.0).passed
    assert check.grad_by_hand(mt.full((2,), 3.0), lambda b: (b + mt.ones(3, 2)).sum(), [0.5, -1.0]).passed
    square = fn_class(lambda x, g: g * 2 * x, lambda x: x ** 2)
    assert check.function_backward(square, [0.5, -1.0, 2.0], reference=lambda t: t ** 2, gradgrad=True).passed
    wrong_forward = check.function_backward(square, [0.5, -1.0], reference=lambda t: t ** 3)
    assert not wrong_forward.passed and "forward" in wrong_forward.reason


def _torch_raises(thunk):
    try:
        thunk()
    except Exception as e:
        return type(e).__name__
    return "nothing"


def test_predictions_checked_against_what_pytorch_does():
    """The checks about behaviour take their reference from microtorch; PyTorch's own answers
    must pass them."""
    x = torch.ones(3, requires_grad=True)
    loss = (x * torch.ones(3)).sum()
    assert check.grad_fn_names([loss.grad_fn.name(), loss.grad_fn.next_functions[0][0].name()]).passed

    def twice():
        y = (x * x).sum()
        y.backward()
        y.backward()
    assert check.exception_types(_torch_raises(twice), _torch_raises(lambda: torch.zeros(3)[5]),
                                 _torch_raises(lambda: torch.ones(2, 3).sum(dim=4))).passed

    def works(make):
        w = torch.tensor([0.5, 1.0, 2.0], requires_grad=True)
        y = make(w)
        y.mul_(2)
        return "works" if _torch_raises(lambda: y.sum().backward()) == "nothing" else "error"
    assert check.inplace_prediction(works(torch.sin), works(torch.exp)).passed

    w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    a = w * 2
    a[:2].mul_(3)
    a.sum().backward()
    assert check.view_grad(w.grad).passed

    def clipped(hook):
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        h = x * 10
        if hook:
            h.register_hook(lambda g: g.clamp(-1, 1))
        (h * 5).sum().backward()
        return x.grad
    assert check.clip_hook(clipped(True), clipped(False)).passed

    x = torch.tensor(3.0, requires_grad=True)
    (x * x * 2.0).backward()
    assert check.accumulator(1, x.grad).passed

    w = torch.tensor(1.0, requires_grad=True)
    opt = torch.optim.SGD([w], lr=0.1)
    for step in range(3):
        (w ** 2).backward()
        if step < 2:
            opt.step()
    assert check.no_zero_grad(w.grad).passed
