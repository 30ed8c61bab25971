"""torch's _trilinear, the one op bilinear records: out[n, o] = sum_ij x1[n, i] W[o, i, j] x2[n, j].

Written as an einsum of three operands in one node (TrilinearBackward0, as torch's); each operand's gradient is an
einsum of the gradient with the other two. Under vmap the batch is one more label of the equation (func/_rules.py).
"""
import numpy as np

from ._op import Op
from .einsum import einsum
from .reduce import c_order

BILINEAR = "ni,oij,nj->no"


class Trilinear(Op):
    """d/dx1 = einsum(g, W, x2), d/dW = einsum(g, x1, x2), d/dx2 = einsum(g, x1, W); each input is saved only for
    another's gradient, as torch's node saves it"""
    _grad_fn_name = "TrilinearBackward0"
    _saved_names = ("i1", "i2", "i3")
    _saved_values = {"expand1": "expand1", "expand2": "expand2", "expand3": "expand3", "sumdim": "sumdim"}

    @staticmethod
    def forward(ctx, *ops, equation=BILINEAR):
        ctx.equation, ctx.shapes = equation, [o.shape for o in ops]
        ctx.expand1, ctx.expand2, ctx.expand3, ctx.sumdim = (1, 3), (0,), (1, 2), (2, 3)  # (bilinear's arguments)
        need = ctx.needs_input_grad
        ctx.save_for_backward(*(x if any(need[j] for j in range(3) if j != i) else None for i, x in enumerate(ops)))
        return c_order(np.asarray(np.einsum(equation, *ops)))

    @staticmethod
    def backward(ctx, grad):
        ops = ctx.saved_tensors
        lhs, out = ctx.equation.split("->")
        terms = lhs.split(",")
        grads = []
        for i, term in enumerate(terms):
            if not ctx.needs_input_grad[i]:
                grads.append(None)
                continue
            others = [(t, o.conj()) for j, (t, o) in enumerate(zip(terms, ops)) if j != i]
            equation = ",".join([out] + [t for t, _ in others]) + "->" + term
            grads.append(einsum(equation, grad, *(o for _, o in others)))
        return tuple(grads)

    @staticmethod
    def jvp(ctx, *ts):
        ops, out = ctx.inputs, None
        for i, t in enumerate(ts):  # product rule: one term per operand
            if t is None:
                continue
            term = Trilinear.apply(*(t if j == i else o for j, o in enumerate(ops)), equation=ctx.equation)
            out = term if out is None else out + term
        return out
