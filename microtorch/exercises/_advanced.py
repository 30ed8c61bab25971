"""Checks of notebooks 9-13: function transforms, in-place operations, custom Functions,
training by hand, and the same code on PyTorch."""
import numpy as np

import microtorch as mt

from ._gradients import _call as call, callable_of, check_function
from ._judge import Unusable, compare, compare_choice, missing, ok, wrong
from ._registry import exercise

F64 = mt.float64


def _rand(seed, *shape, grad=False):
    rng = np.random.default_rng(seed)
    return mt.tensor(rng.normal(size=shape), dtype=F64, requires_grad=grad)


# ---- 9. function transforms ---------------------------------------------------------------------
@exercise(9, "argnums=1 differentiates with respect to the second argument, b: d(a b^2)/db.")
def grad_argnums(answer):
    """answer: grad(h, argnums=1)(3., 2.) for h(a, b) = a * b**2 (a number or a tensor)."""
    h = lambda a, b: a * b ** 2
    a, b = mt.tensor(3.0, dtype=F64), mt.tensor(2.0, dtype=F64)
    return compare(answer, mt.func.grad(h, argnums=1)(a, b), what="your derivative", wrongs=[
        ("that is the derivative with respect to a (argnums=0).", mt.func.grad(h)(a, b)),
        ("the factor 2 of d(b^2)/db is missing.", a * b)])


@exercise(9, "grad turns a scalar function into the function that computes its derivative; vmap turns a "
             "function of one entry into a function of a whole batch.")
def tanh_derivatives(fn):
    """fn(xs) -> d tanh/dx at every point of xs (a 1-d tensor), computed with vmap and grad."""
    f = callable_of(fn, "your function")
    xs = mt.linspace(-3, 3, 25, dtype=F64)
    x = xs.clone().requires_grad_(True)
    x.tanh().sum().backward()
    got = call(f, (xs,), "your function")
    return compare(got, x.grad, what="your derivatives", wrongs=[
        ("those are the values tanh(x), not its derivative.", xs.tanh()),
        ("the derivative of tanh is 1 - tanh(x)**2, not 1 - x**2.", 1 - xs ** 2)])


def _relu_loss(weights, example, target):
    return ((example.dot(weights).relu() - target) ** 2).mean()


def _tanh_loss(weights, example, target):
    return (example * weights).sum().tanh() * target


@exercise(9, "grad(loss_fn) is the gradient for one example; vmap maps it over the batch. in_dims says "
             "which arguments are split along dimension 0 and which (None) are shared by every example.")
def per_sample_grads(fn):
    """fn(loss_fn, weights, examples, targets) -> the gradient of loss_fn(weights, example_i,
    target_i) with respect to weights, for every i: shape (batch, *weights.shape)."""
    f = callable_of(fn, "your per_sample_grads")
    w = mt.tensor([0.5, -0.2, 0.1, 0.3, 0.4], dtype=F64)
    xs = mt.tensor(np.linspace(-0.2, 1.2, 20).reshape(4, 5), dtype=F64)
    ts = mt.tensor([0.1, -0.3, 0.2, 0.5], dtype=F64)
    for loss_fn in (_relu_loss, _tanh_loss):
        want = mt.stack([mt.func.grad(loss_fn)(w, x, t) for x, t in zip(xs, ts)])
        got = call(f, (loss_fn, w, xs, ts), "your per_sample_grads")
        v = compare(got, want, what="your per-sample gradients")
        if not v.passed:
            if tuple(getattr(got, "shape", ())) == tuple(w.shape):
                v.reason = ("your answer has the shape of one gradient, (5,): that is the gradient of the whole "
                            "batch. Per-sample gradients have one row per example, shape (4, 5).")
            return v
    return ok()


# ---- 10. in-place -------------------------------------------------------------------------------
def _inplace_formula(w):
    a = w.tanh()
    return ((a + 1) * (a * 3)).sum()


@exercise(10, "tanh saves its output a. Compute a + 1 out of place (a new tensor) instead of a += 1.")
def fixed_inplace(fn):
    """fn(w) -> the loss of exercise 1 (the same formula), computed without breaking backward."""
    f = callable_of(fn, "your function")
    w = mt.tensor([0.5, -1.0, 2.0], dtype=F64, requires_grad=True)
    _inplace_formula(w).backward()
    want = w.grad
    w2 = mt.tensor([0.5, -1.0, 2.0], dtype=F64, requires_grad=True)
    loss = call(f, (w2,), "your function")
    try:
        loss.backward()
    except RuntimeError as e:
        return wrong(f"backward still raises RuntimeError: {str(e)[:150]} ...")
    except AttributeError:
        return wrong("your function should return the loss (a tensor), got " + type(loss).__name__)
    v = compare(loss, _inplace_formula(w.detach()), what="your loss")
    return v if not v.passed else compare(w2.grad, want, what="w.grad")


def _works(make):
    w = mt.tensor([0.5, 1.0, 2.0], requires_grad=True)
    y = make(w)
    y.mul_(2)
    try:
        y.sum().backward()
        return "works"
    except RuntimeError:
        return "error"


@exercise(10, "Which tensor does each op save: its input or its output? mul_ changes y, the output.")
def inplace_prediction(sin, exp):
    """"works" or "error" for y = w.sin(); y.mul_(2); y.sum().backward(), and the same with exp."""
    options = ["works", "error"]
    v = compare_choice(sin, _works(lambda w: w.sin()), "your answer for sin", options)
    return v if not v.passed else compare_choice(exp, _works(lambda w: w.exp()), "your answer for exp", options)


@exercise(10, "a = w * 2; the view a[:2] is multiplied by 3 in place. Each entry's gradient is "
              "the product of the factors it went through.")
def view_grad(answer):
    """answer: w.grad for w = [1., 2., 3.]; a = w * 2; a[:2].mul_(3); a.sum().backward()."""
    w = mt.tensor([1.0, 2.0, 3.0], dtype=F64, requires_grad=True)
    a = w * 2
    a[:2].mul_(3)
    a.sum().backward()
    return compare(answer, w.grad, what="your w.grad", wrongs=[
        ("the factor 2 of a = w * 2 is missing.", mt.tensor([3.0, 3.0, 1.0])),
        ("the in-place mul_ through the view changes a, so it changes the gradient too.", mt.full((3,), 2.0)),
        ("only the first two entries went through the view.", mt.full((3,), 6.0))])


# ---- 11. custom Function ------------------------------------------------------------------------
@exercise(11, "The question gives the derivative. Save x in forward (ctx.save_for_backward); backward "
              "returns the derivative at x times grad.")
def swish(Swish):
    """Swish: a Function for x * sigmoid(x); checked with gradcheck and gradgradcheck."""
    return check_function(Swish, (_rand(20, 6, grad=True),), what="your Swish",
                          reference=lambda t: t * t.sigmoid(), gradgrad=True)


@exercise(11, "jvp(ctx, x_dot) returns the derivative times the tangent: save what you need on ctx in "
              "forward (ctx.save_for_forward or plain attributes).")
def swish_jvp(SwishFwd):
    """SwishFwd: Swish with backward and jvp; checked with gradcheck(check_forward_ad=True)."""
    return check_function(SwishFwd, (_rand(21, 6, grad=True),), what="your SwishFwd",
                          reference=lambda t: t * t.sigmoid(), forward_ad=True)


@exercise(11, "backward returns one value per forward input, in order; the number alpha gets None. Each "
              "tensor's gradient is grad times the other factors.")
def scaled_mul(ScaledMul):
    """ScaledMul: a Function of (x, y, alpha) computing alpha * x * y, alpha a Python float."""
    x, y = _rand(22, 3, 1, grad=True), _rand(23, 1, 4, grad=True)
    f = callable_of(ScaledMul, "your ScaledMul")
    return check_function(lambda a, b: f(a, b, 2.5), (x, y), what="your ScaledMul",
                          reference=lambda a, b: 2.5 * a * b)


# ---- 12. training -------------------------------------------------------------------------------
def _model_and_grads(seed):
    mt.manual_seed(seed)
    model = mt.nn.Sequential(mt.nn.Linear(3, 4), mt.nn.Tanh(), mt.nn.Linear(4, 1))
    X = _rand(seed, 8, 3).float()
    ((model(X) - 1.0) ** 2).mean().backward()
    return model


@exercise(12, "An update is not part of the model: make it where autograd does not record, and change "
              "each parameter in place, so that it stays the same leaf.")
def sgd_step(fn):
    """fn(params, lr): one SGD step written by hand, in place (params: a list of leaf tensors with .grad)."""
    f = callable_of(fn, "your sgd_step")
    model = _model_and_grads(30)
    params = list(model.parameters())
    before = [p.detach().clone() for p in params]
    grads = [p.grad.clone() for p in params]
    try:
        call(f, (params, 0.1), "your sgd_step")
    except Unusable as e:
        if "in-place" in str(e) or "leaf" in str(e):
            return wrong(str(e) + "\nAn update of a parameter is not part of the model: run it under mt.no_grad().")
        raise
    for i, (p, p0, g) in enumerate(zip(params, before, grads)):
        if not p.is_leaf:
            return wrong(f"parameter {i} is no longer a leaf: update it in place, under mt.no_grad().")
        v = compare(p.detach(), p0 - 0.1 * g, what=f"parameter {i} after your step", rtol=1e-5, atol=1e-6,
                    wrongs=[("the parameters did not change: assign in place (p -= ..., p.sub_(...)), "
                             "rebinding the loop variable p changes nothing.", p0),
                            ("the learning rate is missing.", p0 - g),
                            ("wrong sign: the step goes against the gradient, p - lr * grad.", p0 + 0.1 * g)])
        if not v.passed:
            return v
    return ok()


@exercise(12, "Keep one velocity buffer per parameter, b = momentum * b + grad (b = grad on the first "
              "step), then p -= lr * b.")
def momentum_sgd(cls):
    """cls(params, lr, momentum) with .step() and .zero_grad(): SGD with momentum by hand,
    compared with optim.SGD(momentum=...) over 5 steps."""
    if missing(cls) or not callable(cls):
        return wrong("your class is not written yet: replace the `...` and run the cell again.")
    runs = []
    for make in (lambda ps: mt.optim.SGD(ps, lr=0.05, momentum=0.9), lambda ps: cls(ps, lr=0.05, momentum=0.9)):
        model = _model_and_grads(31)
        X = _rand(32, 8, 3).float()
        opt = call(make, (list(model.parameters()),), "your class")
        for _ in range(5):
            opt.zero_grad()
            ((model(X) - 1.0) ** 2).mean().backward()
            call(opt.step, (), "your step()")
        runs.append([p.detach().clone() for p in model.parameters()])
    for i, (want, got) in enumerate(zip(*runs)):
        v = compare(got, want, what=f"parameter {i} after 5 steps", rtol=1e-4, atol=1e-6)
        if not v.passed:
            return v
    return ok()


@exercise(12, "Differentiate -log softmax(z)[y] with respect to each z_j (the cases j = y and j != y), "
              "then account for the mean over the N rows.")
def ce_grad(fn):
    """fn(logits, y) -> d cross_entropy(logits, y) / d logits (mean over the batch), by formula."""
    f = callable_of(fn, "your function")
    logits = _rand(33, 5, 3, grad=True)
    y = mt.tensor([0, 2, 1, 1, 0])
    mt.nn.functional.cross_entropy(logits, y).backward()
    got = call(f, (logits.detach(), y), "your function")
    p = logits.detach().softmax(dim=1)
    return compare(got, logits.grad, what="your gradient", wrongs=[
        ("the one-hot term is missing: the right class's probability loses 1.", p / 5)])


# ---- 13. the same code on PyTorch ---------------------------------------------------------------
@exercise(13, "Build the graph and print loss.grad_fn.name() and loss.grad_fn.next_functions[0][0].name().")
def grad_fn_names(answer):
    """answer: [name of loss.grad_fn, name of the node before it] for loss = (x * y).sum()."""
    x = mt.ones(3, requires_grad=True)
    loss = (x * mt.ones(3)).sum()
    want = [loss.grad_fn.name(), loss.grad_fn.next_functions[0][0].name()]
    if missing(answer) or (isinstance(answer, (list, tuple)) and any(missing(a) for a in answer)):
        return compare_choice(..., want, "your list")
    if not isinstance(answer, (list, tuple)) or len(answer) != 2:
        return wrong(f"your answer should be a list of two names, got {answer!r}.")
    for got, w in zip(answer, want):
        v = compare_choice(got, w, f"the name {got!r}")
        if not v.passed:
            if isinstance(got, str) and not got.endswith("0"):
                v.reason += " grad_fn names end in Backward0 (the op's name, then Backward, then a version)."
            return v
    return ok()


def _raised(thunk):
    try:
        thunk()
    except Exception as e:
        return type(e).__name__
    return "nothing"


@exercise(13, "Run each line inside try/except and print type(e).__name__; PyTorch raises the same types.")
def exception_types(twice, index, dim):
    """The exception type names raised by: backward twice through the same graph; mt.zeros(3)[5];
    mt.ones(2, 3).sum(dim=4)."""
    def twice_thunk():
        x = mt.ones(2, requires_grad=True)
        y = (x * x).sum()
        y.backward()
        y.backward()
    for got, thunk, what in ((twice, twice_thunk, "backward twice"), (index, lambda: mt.zeros(3)[5], "zeros(3)[5]"),
                             (dim, lambda: mt.ones(2, 3).sum(dim=4), "sum(dim=4)")):
        v = compare_choice(getattr(got, "__name__", got), _raised(thunk), f"your answer for {what}")
        if not v.passed:
            return v
    return ok()


@exercise(13, "Write everything with the `torch` argument (torch.tensor, ...), never mt., and return "
              "a gradient, e.g. x.grad after a backward.")
def same_on_both(fn):
    """fn(torch) -> a gradient computed with the library it is given: run on microtorch and on
    PyTorch (when installed), the two results must agree."""
    f = callable_of(fn, "your function")
    got = call(f, (mt,), "your function (on microtorch)")
    if not isinstance(got, mt.Tensor):
        return wrong(f"your function should return a tensor (a gradient), got {type(got).__name__}.")
    try:
        import torch
    except ImportError:
        return ok("PyTorch is not installed: it ran on microtorch only.")
    other = call(f, (torch,), "your function (on PyTorch)")
    if not isinstance(other, torch.Tensor):
        return wrong("on PyTorch your function returned a " + type(other).__name__ + ": use the `torch` argument, "
                     "not mt., everywhere inside it.")
    return compare(other.detach().double().numpy(), got.detach().double(), what="PyTorch's result",
                   rtol=1e-4, atol=1e-6)
