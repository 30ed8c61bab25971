"""Checks of notebooks 1-4: derivatives by hand, the chain rule, the graph, backward's loop.

Each reference is computed here with autograd when the check runs; nothing below stores an
answer."""
import math

import numpy as np

import microtorch as mt

from ._gradients import _call as call, callable_of, check_chain, check_function
from ._judge import as_array, compare, compare_choice, ok, wrong
from ._registry import exercise

F64 = mt.float64


def _points(*values, grad=True):
    return mt.tensor(list(values), dtype=F64, requires_grad=grad)


# ---- 1. welcome ---------------------------------------------------------------------------------
@exercise(1, "Differentiate sigmoid(x) = 1 / (1 + e^-x) with the quotient rule, then write "
             "e^-x / (1 + e^-x)^2 as a product of sigmoid(x) and something else.")
def sigmoid_local(fn):
    """fn(y) -> the derivative of sigmoid at x, written with its output y = sigmoid(x) only."""
    f = callable_of(fn, "your function")
    x = _points(-3.0, -1.0, 0.0, 0.5, 2.0)
    y = x.sigmoid()
    y.sum().backward()
    Y = y.detach()
    got = call(f, (Y,), "your function")
    return compare(got, x.grad, what="your derivative", wrongs=[
        ("that is tanh's local derivative, 1 - y**2; sigmoid's is another one.", 1 - Y ** 2),
        ("that is only one of the two factors of sigmoid's derivative.", Y),
        ("that is only one of the two factors of sigmoid's derivative.", 1 - Y)])


@exercise(1, "y = tanh(z) with z = w*x + b. The chain rule gives dy/dw = dy/dz * dz/dw: "
             "what is the derivative of tanh, and what is dz/dw?")
def neuron_w_grad(answer):
    """answer: dy/dw, as a number, for y = tanh(w*x + b) at x = 2.0, w = 0.5, b = 0.25."""
    w = mt.tensor(0.5, dtype=F64, requires_grad=True)
    y = (w * 2.0 + 0.25).tanh()
    y.backward()
    local = 1 - y.detach() ** 2
    return compare(answer, w.grad, what="your dy/dw", wrongs=[
        ("you forgot the chain factor dz/dw = x: that number is only dy/dz.", local),
        ("tanh's derivative is 1 - tanh(z)**2, not tanh(z).", y.detach() * 2.0)])


@exercise(1, "sigmoid(t) = 1 / (1 + exp(-t)). Use t.exp(), +, / (or 1 / ...) only.")
def my_sigmoid(fn):
    """fn(t) -> sigmoid(t) built from exp, + and /; its values and its gradient are checked."""
    return check_function(fn, (_points(-2.0, -0.5, 0.0, 1.0, 3.0),), what="your sigmoid",
                          reference=lambda t: t.sigmoid())


# ---- 2. the chain rule --------------------------------------------------------------------------
@exercise(2, "h(x) = x * e^x is a product: the product rule gives two terms, (x)' e^x + x (e^x)'.")
def h_prime(answer):
    """answer: h'(2) for h(x) = x e^x, worked out by hand (a number)."""
    x = mt.tensor(2.0, dtype=F64, requires_grad=True)
    (x * x.exp()).backward()
    return compare(answer, x.grad, what="your h'(2)", wrongs=[
        ("you kept only one term of the product rule (e^x).", math.exp(2.0)),
        ("you kept only one term of the product rule (x e^x), which is h itself.", 2 * math.exp(2.0))])


def _uses_of(root, target):
    """How many edges of root's graph point at the node `target` (its number of messages)."""
    seen, stack, count = set(), [root], 0
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        for fn, _ in node.next_functions:
            count += fn is target
            stack.append(fn)
    return count


@exercise(2, "Count the places where b appears on the right-hand side of c = b * b + b. "
             "Then dc/db = (sum of its messages), and dc/da = dc/db * db/da.")
def b_messages(count, dc_da):
    """count: how many gradient messages b receives; dc_da: dc/da, for a = 3, b = a*a, c = b*b + b."""
    a = mt.tensor(3.0, dtype=F64, requires_grad=True)
    b = a * a
    c = b * b + b
    c.backward()
    v = compare_choice(count, _uses_of(c.grad_fn, b.grad_fn), "your count of messages")
    if not v.passed:
        return v
    db = (2 * b + 1).detach()
    return compare(dc_da, a.grad, what="your dc/da", wrongs=[
        ("that is dc/db: multiply by the chain factor db/da = 2a.", db),
        ("b's message from `+ b` is missing: b receives three messages, not two.", (2 * b * 2 * a).detach()),
        ("one message of b * b is missing.", ((b + 1) * 2 * a).detach())])


def _tanh_chain():
    w = mt.tensor(-1.5, dtype=F64, requires_grad=True)
    z = w * 0.5
    y = z.tanh()
    L = (y - 1.0) ** 2
    return L, [("L", L), ("y", y), ("z", z), ("w", w)]


@exercise(2, "Go backward one node at a time: dL/dy from the square, then dL/dz from dL/dy and tanh's "
             "local derivative, then dL/dw. Each step is upstream times local.")
def chain_by_hand(answers):
    """answers: {"y": dL/dy, "z": dL/dz, "w": dL/dw} for z = w*x, y = tanh(z), L = (y - 1)**2
    at x = 0.5, w = -1.5, computed by hand one step at a time."""
    return check_chain(answers, _tanh_chain)


# ---- 3. tensors and grad_fn ---------------------------------------------------------------------
@exercise(3, "g is a sum of squares, one term per entry; differentiate one term X_ij**2 with respect "
             "to X_ij. The gradient has the shape of X.")
def sq_norm_grad(fn):
    """fn(X) -> dg/dX for g = sum of X_ij**2 (a tensor the shape of X)."""
    f = callable_of(fn, "your function")
    mt.manual_seed(3)
    X = mt.randn(2, 3, dtype=F64, requires_grad=True)
    (X ** 2).sum().backward()
    got = call(f, (X.detach(),), "your function")
    return compare(got, X.grad, what="your dg/dX", wrongs=[
        ("that is X**2, the terms themselves, not their derivative.", X.detach() ** 2)])


@exercise(3, "F.backward(v) computes the gradient of sum(v * F). Which v makes sum(v * F) = F[0, 0]?")
def one_hot_gradient(v):
    """v: the `gradient=` for F = A @ X that makes X.grad equal to dF[0,0]/dX."""
    A = mt.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=F64)
    X = mt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=F64, requires_grad=True)
    A.mm(X)[0, 0].backward()
    want = X.grad
    X.grad = None
    F = A.mm(X)
    vv = as_array(v, "your gradient")
    if vv.shape != tuple(F.shape):
        return wrong(f"your gradient has shape {vv.shape}; it must have F's shape {tuple(F.shape)}: one weight "
                     "per entry of F.")
    F.backward(mt.tensor(vv, dtype=F64))
    return compare(X.grad, want, what="X.grad from your gradient", wrongs=[
        ("that is the gradient of F.sum(): a gradient of ones weighs every entry of F.",
         A.t().mm(mt.ones(2, 3, dtype=F64)))])


@exercise(3, "is_leaf is True for a tensor without grad_fn. Does w * 2 get a grad_fn when w requires "
             "grad? And when it does not?")
def is_leaf(when_w_requires_grad, when_w_does_not):
    """Two bools: (w * 2).is_leaf when w requires grad, and when it does not."""
    w = mt.ones(2, requires_grad=True)
    v = compare_choice(when_w_requires_grad, (w * 2).is_leaf, "your first answer")
    return v if not v.passed else compare_choice(when_w_does_not, (mt.ones(2) * 2).is_leaf, "your second answer")


@exercise(3, "Row i of the Jacobian is the vector-Jacobian product with a one-hot v = e_i: "
             "mt.autograd.grad(y, w, grad_outputs=e_i, retain_graph=True). Stack the rows.")
def jacobian_by_rows(fn):
    """fn(f, w) -> the Jacobian of f at w (shape (f(w).numel(), w.numel())), one row per VJP."""
    jac = callable_of(fn, "your jacobian")
    cases = [(lambda w: mt.stack([w[0] * w[1], w[1] * w[2], w.sum()]), _points(1.0, 2.0, 3.0)),
             (lambda w: (w * w.sin())[:2] * 3, _points(0.3, -1.2, 2.0))]
    for f, w in cases:
        want = mt.func.jacrev(f)(w.detach())
        got = call(jac, (f, w), "your jacobian")
        v = compare(got, want, what="your Jacobian", wrongs=[
            ("that is the transpose: row i must be the gradient of output i.", want.t())])
        if not v.passed:
            return v
    return ok()


# ---- 4. step-through backward -------------------------------------------------------------------
@exercise(4, "The engine sums the gradients that arrive at a node before running it. How many "
             "times does x's accumulator run?")
def accumulator(received, x_grad):
    """received: how many gradients x's AccumulateGrad receives; x_grad: x.grad, for g = x * x * y
    at x = 3, y = 2."""
    from ..autograd import graph
    x = mt.tensor(3.0, dtype=F64, requires_grad=True)
    g = x * x * 2.0
    runs = []

    def listen(event):
        if isinstance(event, graph.NodeExecuting) and getattr(event.node, "variable", None) is x:
            runs.append(len([t for t in event.incoming if t is not None]))

    with graph.add_listener(listen):
        g.backward()
    v = compare_choice(received, sum(runs), "your count")
    if not v.passed:
        v.reason += " The two gradients from x * x are summed before the accumulator runs." \
            if received == 2 else ""
        return v
    return compare(x_grad, x.grad, what="your x.grad", wrongs=[
        ("that is one of the two gradients x * x sends to x; they add up.", (x * 2.0).detach())])


@exercise(4, "Write down w, the gradient 2w and w.grad after each of the three steps. "
             "backward adds into .grad; step() subtracts lr * w.grad.")
def no_zero_grad(answer):
    """answer: w.grad after the third backward, for loss = w**2, w = 1.0, SGD(lr=0.1), no zero_grad."""
    w = mt.tensor(1.0, dtype=F64, requires_grad=True)
    opt = mt.optim.SGD([w], lr=0.1)
    current = None
    for step in range(3):
        loss = w ** 2
        current = 2 * w.detach()
        loss.backward()
        if step < 2:
            opt.step()
    return compare(answer, w.grad, what="your w.grad", wrongs=[
        ("that is only the third step's own gradient: .grad still holds the first two.", current),
        ("each gradient is computed at the w of its own step, and w moves after each step.", 6.0)])


def _mlp_data():
    rng = np.random.default_rng(4)
    t = lambda *s: mt.tensor(rng.normal(size=s), dtype=F64)
    return t(4, 3), t(4, 1), t(3, 5), t(5), t(5, 1), t(1)


def _mlp_chain():
    X, T, W1, b1, W2, b2 = _mlp_data()
    for p in (W1, b1, W2, b2):
        p.requires_grad_(True)
    h = (X @ W1 + b1).tanh()
    out = h @ W2 + b2
    loss = ((out - T) ** 2).mean()
    return loss, [("loss", loss), ("out", out), ("W2", W2, "out"), ("b2", b2, "out"), ("h", h, "out"),
                  ("W1", W1, "h"), ("b1", b1, "h")]


@exercise(4, "Go backward one layer at a time. The mean brings a 1/N. For out = h @ W2 + b2 use the two "
             "rules of notebook 5, and sum the bias's gradient over the batch. Through tanh, multiply by its "
             "local derivative.")
def mlp_backward(fn):
    """fn(X, T, W1, b1, W2, b2) -> {"out", "W2", "b2", "h", "W1", "b1"}: the gradients of
    loss = ((tanh(X @ W1 + b1) @ W2 + b2 - T)**2).mean(), computed by hand with matrix formulas."""
    f = callable_of(fn, "your manual backward")
    answers = call(f, _mlp_data(), "your manual backward")
    return check_chain(answers, _mlp_chain, loss="loss")
