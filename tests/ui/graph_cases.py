"""Notebook cells whose pictures the browser tests measure: the graphs a double backward records
(create_graph=True) and a graph of the longest node names the engine gives. The exported-HTML tests
run them with exec, the JupyterLab tests as the cells of a notebook."""

SETUP = """import microtorch as mt
from microtorch import viz
F = mt.nn.functional
mt.manual_seed(0)
x = mt.tensor([0.5, -1.0, 2.0], requires_grad=True)
w = mt.tensor([0.25], requires_grad=True)"""

# x.grad of an activation, with its own graph: CopyBackwards <- SoftplusBackwardBackward0 <- x
ACTIVATION_GRAD = """F.softplus(x).sum().backward(create_graph=True)
viz.draw(x.grad)"""

# stepping through the gradient's graph: PreluKernelBackwardBackward0 with its three edges
PRELU_STEPPER = """gx, gw = mt.autograd.grad(F.prelu(x, w).sum(), (x, w), create_graph=True)
viz.step_backward(gx.sum())"""

# torch's Scalar overloads in a gradient's graph: AddBackward1 (silu), MulBackward1 ((2x + 1)^2)
SCALAR_STEPPER = """g_silu, = mt.autograd.grad(F.silu(x).sum(), x, create_graph=True)
g_pow, = mt.autograd.grad(((x * 2 + 1) ** 2).sum(), x, create_graph=True)
viz.step_backward(g_silu.sum() + g_pow.sum())"""

# the longest names: fused attention (45 characters) and a loss, NotImplemented (hardsigmoid's double
# backward), Error (a once_differentiable backward), CopySlices (in place on a slice), the BackwardBackward
# and BackwardData nodes
LONGEST_NAMES = """q = mt.randn(1, 2, 3, 4, requires_grad=True)
att = F.scaled_dot_product_attention(q, q, q)
loss = F.binary_cross_entropy_with_logits(att, mt.rand(1, 2, 3, 4))
g1, = mt.autograd.grad(F.hardsigmoid(x).sum(), x, create_graph=True)
g2, = mt.autograd.grad(F.rrelu(x, training=True).sum(), x, create_graph=True)
g3, = mt.autograd.grad(F.log_softmax(x, 0).sum(), x, create_graph=True)

class Square(mt.autograd.Function):
    @staticmethod
    def forward(ctx, t):
        ctx.save_for_backward(t)
        return t * t

    @staticmethod
    @mt.autograd.function.once_differentiable
    def backward(ctx, grad):
        t, = ctx.saved_tensors
        return 2 * t * grad

v = mt.ones(3, requires_grad=True)
g4, = mt.autograd.grad(Square.apply(x), x, grad_outputs=v, create_graph=True)
b = x.detach().clone().requires_grad_()
c = b * 1
c[1:].mul_(2)
total = loss + g1.sum() + g2.sum() + g3.sum() + g4.sum() + c.sum()
viz.draw(total)"""

CELLS = [SETUP, ACTIVATION_GRAD, PRELU_STEPPER, SCALAR_STEPPER, LONGEST_NAMES]


def run(*cells):
    """Run SETUP and `cells` in one namespace, as a notebook runs its cells; returns the value of each
    cell's last line (an expression, else None; SETUP's left out) and the variables."""
    import ast
    scope, values = {}, []
    for cell in (SETUP,) + cells:
        tree = ast.parse(cell)
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        exec(compile(tree, "<cell>", "exec"), scope)
        values.append(eval(compile(ast.Expression(last.value), "<cell>", "eval"), scope) if last else None)
    return values[1:], scope
