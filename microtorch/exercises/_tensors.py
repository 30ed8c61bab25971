"""Checks of notebooks 5-8: broadcasting, hooks, gradcheck, higher-order gradients."""
import numpy as np

import microtorch as mt
from microtorch.autograd import Function

from ._gradients import _call as call, callable_of, check_function
from ._judge import as_array, compare, compare_choice, ok, wrong
from ._registry import exercise

F64 = mt.float64


def _rand(seed, *shape, grad=False):
    rng = np.random.default_rng(seed)
    return mt.tensor(rng.normal(size=shape), dtype=F64, requires_grad=grad)


# ---- 5. broadcasting ----------------------------------------------------------------------------
@exercise(5, "x (1, 3) is copied to both rows of y. The gradient of each copy is y's row; what "
             "happens to gradients of copies, and what shape must x.grad have?")
def broadcast_x_grad(answer):
    """answer: x.grad for (x * y).sum(), x = [[1., 2., 3.]] (1, 3), y = [[1., 1., 1.], [2., 3., 4.]]."""
    x = mt.tensor([[1.0, 2.0, 3.0]], dtype=F64, requires_grad=True)
    y = mt.tensor([[1.0, 1.0, 1.0], [2.0, 3.0, 4.0]], dtype=F64)
    (x * y).sum().backward()
    return compare(answer, x.grad, what="your x.grad")


@exercise(5, "With R = X W - T and L = sum(R**2): dL/dR = 2R, and for R = X W the rule is "
             "W-bar = X^T R-bar (the shapes must fit: (3, 4) @ (4, 2)).")
def linear_W_grad(fn):
    """fn(X, W, T) -> dL/dW for L = ((X @ W - T)**2).sum(), written with matrix products."""
    f = callable_of(fn, "your function")
    X, W, T = _rand(50, 4, 3), _rand(51, 3, 2, grad=True), _rand(52, 4, 2)
    ((X @ W - T) ** 2).sum().backward()
    got = call(f, (X, W.detach(), T), "your function")
    R = X @ W.detach() - T
    return compare(got, W.grad, what="your dL/dW", wrongs=[
        ("the chain factor 2 (from the square) is missing.", X.t() @ R)])


def _sum_to_reference(g, shape):
    """The gradient of broadcasting a tensor of `shape` to g.shape, by autograd."""
    x = mt.zeros(*shape, dtype=F64, requires_grad=True) if shape else mt.tensor(0.0, dtype=F64, requires_grad=True)
    (x + mt.zeros(*g.shape, dtype=F64)).backward(g)
    return x.grad


@exercise(5, "First sum over the leading dimensions broadcasting added (grad.ndim - len(shape) of "
             "them), then over every dimension where shape has a 1 and grad does not, keeping it.")
def sum_to(fn):
    """fn(grad, shape) -> grad summed down to `shape` (grad a tensor, shape a tuple)."""
    f = callable_of(fn, "your sum_to")
    for i, (gshape, shape) in enumerate([((2, 3), (2, 3)), ((5, 2), (2,)), ((3, 4), (3, 1)),
                                         ((4, 5, 3), (5, 1)), ((3, 4), ())]):
        g = _rand(60 + i, *gshape)
        got = call(f, (g, shape), "your sum_to")
        v = compare(got, _sum_to_reference(g, shape), what=f"your sum_to(grad of shape {gshape}, {shape})")
        if not v.passed:
            return v
    return ok()


# ---- 6. hooks -----------------------------------------------------------------------------------
def _clip_run(hook):
    x = mt.tensor([1.0, 2.0], dtype=F64, requires_grad=True)
    h = x * 10
    if hook:
        h.register_hook(lambda g: g.clamp(-1, 1))
    (h * 5).sum().backward()
    return x.grad


def _per_entry(answer, like):
    """A number stands for every entry (the predictions here are the same in each entry)."""
    arr = as_array(answer, "your prediction")
    return np.broadcast_to(arr, tuple(like.shape)) if arr.size == 1 else arr


@exercise(6, "The hook sees the gradient arriving at h (from the * 5) and returns the clipped one; "
             "then that gradient goes through h = x * 10 on its way to x.")
def clip_hook(with_hook, without_hook):
    """Your predictions of x.grad (a number per entry) for h = x * 10, loss = (h * 5).sum(),
    with the clipping hook on h and without it."""
    want = _clip_run(False)
    v = compare(_per_entry(without_hook, want), want, what="your x.grad without the hook")
    if not v.passed:
        return v
    want = _clip_run(True)
    return compare(_per_entry(with_hook, want), want, what="your x.grad with the hook", wrongs=[
        ("the clip acts at h; the factor 10 of h = x * 10 still applies on the way to x.", mt.ones(2)),
        ("the hook does change the gradient here: 5 is outside [-1, 1].", mt.full((2,), 50.0))])


@exercise(6, "Hooks on one tensor run in the order they were registered, each on the previous one's result.")
def hook_order(answer):
    """answer: v.grad for v.register_hook(lambda g: g + 1); v.register_hook(lambda g: g * 2);
    v.backward(mt.tensor([1.0]))."""
    v = mt.tensor([0.0], dtype=F64, requires_grad=True)
    v.register_hook(lambda g: g + 1)
    v.register_hook(lambda g: g * 2)
    v.backward(mt.tensor([1.0], dtype=F64))
    return compare(_per_entry(answer, v.grad), v.grad, what="your v.grad", wrongs=[
        ("that is the other order (double, then add 1).", mt.tensor([3.0])),
        ("both hooks run, the second on the first one's result.", mt.tensor([2.0]))])


@exercise(6, "The hook receives the parameter p itself. Update it in place, against its gradient and "
             "without recording, then clear its .grad. make_hook(lr) returns that hook.")
def sgd_in_backward(make_hook):
    """make_hook(lr) -> a post-accumulate-grad hook that does p -= lr * p.grad in place and
    clears p.grad: the optimizer step happens during backward."""
    f = callable_of(make_hook, "your make_hook")
    W, b, X = _rand(70, 3, 2, grad=True), _rand(71, 2, grad=True), _rand(72, 4, 3)
    W0, b0 = W.detach().clone(), b.detach().clone()
    gW, gb = mt.autograd.grad((X @ W + b).tanh().sum(), (W, b))
    for p in (W, b):
        p.register_post_accumulate_grad_hook(call(f, (0.1,), "your make_hook"))
    try:
        (X @ W + b).tanh().sum().backward()
    except RuntimeError as e:
        return wrong(f"backward raised RuntimeError: {str(e)[:160]} ... (an in-place update of a leaf must "
                     "run under mt.no_grad())")
    for name, p, p0, g in (("W", W, W0, gW), ("b", b, b0, gb)):
        v = compare(p.detach(), p0 - 0.1 * g, what=f"{name} after backward", wrongs=[
            ("the parameter did not change: update it in place (p -= ..., or p.sub_(...)).", p0),
            ("wrong sign: the step goes against the gradient, p - lr * grad.", p0 + 0.1 * g),
            ("the learning rate is missing.", p0 - g)])
        if not v.passed:
            return v
        if p.grad is not None:
            return wrong(f"{name}.grad should be None after the hook: the gradient was used, clear it "
                         "(p.grad = None), or the next backward adds to it.")
    return ok()


# ---- 7. gradcheck -------------------------------------------------------------------------------
@exercise(7, "Write sigmoid's derivative with its output y (notebook 1, exercise 1), and apply the chain "
             "rule: multiply by the incoming grad.")
def sigmoid_backward(MySigmoid):
    """MySigmoid: a Function whose forward is sigmoid and whose backward you write."""
    x = _rand(7, 6, grad=True)
    return check_function(MySigmoid, (x,), what="your MySigmoid", reference=lambda t: t.sigmoid(),
                          composite=lambda f: (lambda t: (f(t * 2).exp() * t).sum()))


@exercise(7, "y_i = x_0 + ... + x_i, so x_j contributes to every y_i with i >= j, and its gradient sums "
             "grad_i over those i. How do you make cumsum add from the end?")
def fixed_cumsum(CumSum):
    """CumSum: a Function with forward x.cumsum(0) and a correct backward."""
    x = _rand(8, 6, grad=True)
    w = _rand(9, 6)
    return check_function(CumSum, (x,), what="your CumSum", reference=lambda t: t.cumsum(0),
                          composite=lambda f: (lambda t: (f(t * w).sin() ** 2).sum()))


@exercise(7, "gradcheck's numerical derivative is a central difference, (f(eps) - f(-eps)) / (2 eps). "
             "Autograd uses the convention relu'(0) = 0.")
def relu_at_zero(numerical, analytical):
    """The diagonal entries of the numerical and the analytical Jacobian gradcheck finds for
    relu at t = 0."""
    from ..autograd.gradcheck import check
    report = check(lambda t: t.relu(), (mt.zeros(3, dtype=F64, requires_grad=True),))
    pair = report.pair(0, 0)
    v = compare(numerical, float(np.diag(pair.numerical)[0]), what="your numerical derivative", wrongs=[
        ("that is a one-sided slope; the central difference averages the two sides.", 1.0)])
    if not v.passed:
        return v
    return compare(analytical, float(np.diag(pair.analytical)[0]), what="your analytical derivative")


# ---- 8. higher order ----------------------------------------------------------------------------
@exercise(8, "Compute the derivative from the saved x with tensor operations (no numpy, no .detach()), "
             "and multiply by grad: tensor operations are recorded when create_graph=True.")
def cube(Cube):
    """Cube: a Function for x**3 whose backward can itself be differentiated (gradgradcheck)."""
    return check_function(Cube, (_rand(10, 4, grad=True),), what="your Cube", reference=lambda t: t ** 3,
                          gradgrad=True)


@exercise(8, "(g,) = mt.autograd.grad(f(x), x, create_graph=True) keeps the graph of the first "
             "derivative; then differentiate g again.")
def second_derivative(fn):
    """fn(f, x) -> f''(x) for a scalar function f and a scalar x that requires grad."""
    sd = callable_of(fn, "your second_derivative")
    cases = [(lambda t: t ** 3 + t ** 2, 2.0), (lambda t: t.sin() * t, 0.7), (lambda t: (2 * t).exp(), -0.3)]
    for f, at in cases:
        want = mt.func.grad(mt.func.grad(f))(mt.tensor(at, dtype=F64))
        x = mt.tensor(at, dtype=F64, requires_grad=True)
        got = call(sd, (f, x), "your second_derivative")
        first = mt.func.grad(f)(mt.tensor(at, dtype=F64))
        v = compare(got, want, what=f"your second derivative at {at}", wrongs=[
            ("that is the first derivative: differentiate it once more.", first)])
        if not v.passed:
            return v
    return ok()


@exercise(8, "The gradient of logsumexp is p = softmax(x). Differentiate p_i with respect to x_j, for "
             "i = j and for i != j, then write the matrix with mt.diag and mt.outer.")
def logsumexp_hessian(fn):
    """fn(x) -> the Hessian of x.logsumexp(0) as a formula in p = x.softmax(0) (a (4, 4) tensor)."""
    f = callable_of(fn, "your formula")
    x = _rand(11, 4)
    want = mt.func.hessian(lambda t: t.logsumexp(0))(x)
    p = x.softmax(0)
    got = call(f, (x,), "your formula")
    return compare(got, want, what="your Hessian", wrongs=[
        ("the term - p p^T is missing.", mt.diag(p)),
        ("the diagonal term diag(p) is missing.", -mt.outer(p, p))])


@exercise(8, "Differentiate the gradient once more, weighted by v: a vector-Jacobian product of the "
             "gradient, which must itself be computed with create_graph=True.")
def hvp(fn):
    """fn(f, x, v) -> the Hessian-vector product H(x) v, with one extra backward (no Hessian)."""
    h = callable_of(fn, "your hvp")
    f = lambda t: t[0] ** 2 * t[1] + t[2].sin() * t[0]
    x0, v = _rand(12, 3), _rand(13, 3)
    H = mt.func.hessian(f)(x0)
    got = call(h, (f, x0.clone().requires_grad_(True), v), "your hvp")
    return compare(got, H @ v, what="your H v", wrongs=[
        ("that is the gradient times v, a first derivative, not H v.", mt.func.grad(f)(x0) * v)])
