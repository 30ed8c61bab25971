"""Checks for exercises a teacher writes: any derivative by hand, any Function's backward.

    check.grad_by_hand(answer, lambda x: x * x.exp(), 2.0)      # d/dx at x = 2
    check.function_backward(MyOp, x, reference=lambda t: ..., gradgrad=True)

The reference is what autograd or gradcheck computes on the function given, so these suit
an exercise whose point is the work by hand, not hiding the answer from autograd."""
import microtorch as mt

from ._gradients import callable_of, check_function
from ._judge import compare, wrong
from ._registry import exercise


def _inputs(values):
    return tuple(mt.tensor(v, dtype=mt.float64, requires_grad=True) if not isinstance(v, mt.Tensor)
                 else v.detach().to(mt.float64).requires_grad_(True) for v in values)


@exercise(0, "Differentiate the function by hand with the chain rule, then evaluate your formula at the "
             "given point.")
def grad_by_hand(answer, f, *at):
    """answer: the gradient of the scalar f(*at) with respect to its inputs (one value, or a
    tuple with one per input); the reference is autograd's."""
    if not callable(f) or not at:
        return wrong("check.grad_by_hand(answer, f, *inputs): give the function and the point(s).")
    xs = _inputs(at)
    out = f(*xs)
    if not isinstance(out, mt.Tensor) or out.numel() != 1:
        return wrong("check.grad_by_hand: f must return a single number (a scalar tensor).")
    grads = mt.autograd.grad(out, xs, allow_unused=True)
    grads = [g if g is not None else mt.zeros_like(x) for g, x in zip(grads, xs)]
    answers = answer if len(xs) > 1 and isinstance(answer, (tuple, list)) else (answer,)
    if len(answers) != len(xs):
        return wrong(f"your answer should hold {len(xs)} gradients, one per input, got {len(answers)}.")
    for i, (a, g) in enumerate(zip(answers, grads)):
        v = compare(a, g, what="your gradient" + (f" for input {i}" if len(xs) > 1 else ""))
        if not v.passed:
            return v
    return v


@exercise(0, "Compare your backward with the derivative of forward by hand, entry by entry, and "
             "multiply the local derivative by grad.")
def function_backward(Op, *inputs, reference=None, gradgrad=False, forward_ad=False):
    """Op: a Function; inputs: the tensors (or numbers) to gradcheck it at (made float64 and
    requiring grad); reference(*inputs): what forward should compute, if given."""
    callable_of(Op, "your Function")
    return check_function(Op, _inputs(inputs), what="your Function", reference=reference, gradgrad=gradgrad,
                          forward_ad=forward_ad)
