# %% [markdown]
# # 7. gradcheck: trust, but verify
#
# Every backward formula in an autograd engine was written by a person, and people make
# mistakes. `gradcheck` compares the gradients autograd computes with the ones you get the slow,
# dumb, reliable way: wiggle each input a little and measure how the output moves.
#
# **You will learn**
# - how finite differences give a *numerical Jacobian*, and how gradcheck compares it with the
#   *analytical* one from backward;
# - why gradcheck wants `float64` inputs, and how to choose `eps` (the eps sweep);
# - how to find a wrong backward: in the heatmaps of one operation, and with *blame mode* in a
#   whole graph;
# - what `fast_mode=True` checks instead, and how complex inputs are handled.

# %%
import microtorch as mt
from microtorch import viz
from microtorch.autograd import Function, gradcheck

mt.manual_seed(0);

# %% [markdown]
# ## The idea
#
# For a function $f:\mathbb{R}^n \to \mathbb{R}^m$, entry $(i, j)$ of the Jacobian is
# $\partial f_i / \partial x_j$. The **central difference**
#
# $$\frac{\partial f_i}{\partial x_j} \approx \frac{f_i(x + \varepsilon e_j) - f_i(x - \varepsilon e_j)}{2\varepsilon}$$
#
# estimates a whole column $j$ from two evaluations of $f$. Doing it for every $j$ gives the
# **numerical** Jacobian. Running backward once per output entry $i$ (with a one-hot
# `grad_output`) gives row $i$ of the **analytical** Jacobian. gradcheck passes when every entry
# satisfies
#
# $$|\text{analytical} - \text{numerical}| \le \text{atol} + \text{rtol}\cdot|\text{numerical}|$$
#
# (defaults: `eps=1e-6`, `atol=1e-5`, `rtol=1e-3`). Here is the numerical half, by hand, for
# $f(x) = \sin(x)\,x$ elementwise:

# %%
def numerical_jacobian(f, x, eps=1e-6):
    x = x.detach()
    columns = []
    for j in range(x.numel()):
        step = mt.zeros_like(x)
        step.view(-1)[j] = eps
        columns.append(((f(x + step) - f(x - step)) / (2 * eps)).reshape(-1))
    return mt.stack(columns, dim=1)


x = mt.randn(4, dtype=mt.float64, requires_grad=True)
f = lambda t: t.sin() * t
print(numerical_jacobian(f, x))
print("diagonal by hand, cos(x) x + sin(x):", (x.cos() * x + x.sin()).detach())

# %% [markdown]
# The Jacobian is diagonal (entry $i$ of the output depends only on entry $i$ of the input) and
# its diagonal is the derivative. `gradcheck` does both halves and compares:

# %%
print(gradcheck(f, (x,)))

# %% [markdown]
# ## Use `float64`
#
# A finite difference subtracts two nearly equal numbers and divides by a tiny one. In
# `float32` (about 7 significant digits) with `eps=1e-6`, the subtraction keeps only a digit or
# two, and the check fails even though nothing is wrong:

# %%
x32 = x.detach().float().requires_grad_()
print("float32:", gradcheck(f, (x32,), raise_exception=False))
print("float64:", gradcheck(f, (x,), raise_exception=False))

# %% [markdown]
# (microtorch also warns you when the inputs are not double precision.) How small should `eps`
# be? Too large, and the difference quotient is a poor approximation of the derivative: its
# error shrinks like $\varepsilon^2$ (*truncation error*). Too small, and rounding dominates:
# about $10^{-16}/\varepsilon$ in `float64` (*round-off error*). `viz.eps_sweep` runs gradcheck's
# comparison for a range of `eps` and plots the worst error: a V whose bottom is the best `eps`.

# %%
viz.eps_sweep(f, (x,))

# %% [markdown]
# ## The blog's examples, unchanged
#
# A widely shared blog post checks an `nn.Linear` layer and a small network with `gradcheck`.
# Here is its code with exactly one change: the import. `torch` below *is* microtorch.

# %%
import microtorch as torch
import microtorch.nn as nn
from microtorch.autograd import gradcheck

torch.manual_seed(0)
inputs = torch.randn((10, 5), requires_grad=True, dtype=torch.double)
linear = nn.Linear(5, 3)
linear = linear.double()
test = gradcheck(lambda x: linear(x), inputs)
print("Are the gradients correct: ", test)

# %%
class Net(nn.Module):

    def __init__(self):
        super(Net, self).__init__()
        self.net = nn.Sequential(
            nn.Linear(15, 30),
            nn.ReLU(),
            nn.Linear(30, 15),
            nn.ReLU(),
            nn.Linear(15, 1),
            nn.Sigmoid()
        )

    def forward(self, x):
        y = self.net(x)
        return y


net = Net()
net = net.double()
inputs = torch.randn((10, 15), requires_grad=True, dtype=torch.double)
test = gradcheck(net, inputs)
print("Are the gradients correct: ", test)

# %% [markdown]
# `True` is reassuring but not very informative. `viz.gradcheck` takes the same arguments and
# shows the Jacobians it compared. For the linear layer: 30 outputs (10 rows × 3 features)
# against 50 inputs (10 rows × 5 features). Each output row depends only on the same input row,
# hence the block-diagonal pattern; within a block you see the weight matrix. Point at any cell
# to read its numerical and analytical values and their difference.

# %%
inputs = torch.randn((10, 5), requires_grad=True, dtype=torch.double)
viz.gradcheck(lambda x: linear(x), inputs)

# %% [markdown]
# ## A bug, found by the heatmap
#
# Now an operation with a mistake. A cumulative sum, $y_i = \sum_{k \le i} x_k$, written as a
# custom `Function` (notebook 11 explains custom Functions in detail). Its Jacobian is lower
# triangular: $y_i$ depends on $x_k$ for $k \le i$. The backward must therefore send each
# $\bar y_i$ to every $x_k$ with $k \le i$, so $\bar x_k = \sum_{i \ge k} \bar y_i$: a cumulative
# sum **from the end**. Our version sums from the start, a very easy slip:

# %%
class BuggyCumSum(Function):
    @staticmethod
    def forward(ctx, x):
        return x.cumsum(0)

    @staticmethod
    def backward(ctx, grad):
        return grad.cumsum(0)          # the bug is here (exercise 2 fixes it)


x = mt.randn(6, dtype=mt.float64, requires_grad=True)
print(gradcheck(BuggyCumSum.apply, (x,), raise_exception=False))

# %%
viz.gradcheck(BuggyCumSum.apply, (x,))

# %% [markdown]
# The two triangles are mirror images: the analytical Jacobian is the *transpose* of the right
# one, which is exactly what summing in the wrong direction does. The outlined cells of the
# difference are the entries outside the tolerance. With `raise_exception=True` (the default)
# the same finding arrives as an error message with both matrices:

# %%
try:
    gradcheck(BuggyCumSum.apply, (x,))
except mt.autograd.GradcheckError as e:
    print(str(e)[:420], "...")

# %% [markdown]
# ## A bug in a bigger graph: blame mode
#
# In a real model the buggy op is one node among many, and a failing gradcheck of the whole model
# does not say which. `viz.blame(loss)` checks **every node of the graph separately**, each on
# the inputs it actually received in the forward pass (so the forward must be recorded), and
# colours the graph: green passed, red failed. It then shows the heatmap of the first failure.

# %%
w = mt.randn(6, dtype=mt.float64, requires_grad=True)
with viz.record():
    loss = (BuggyCumSum.apply(x * w).sin() ** 2).sum()
report = viz.blame(loss)
report

# %% [markdown]
# The report is also data: `report.verdicts` lists each node with its status.

# %%
for verdict in report.verdicts:
    print(f"{verdict.title:28s} {verdict.status}")

# %% [markdown]
# ## Fast mode
#
# The full check costs one backward per output entry and two forward passes per input entry:
# fine for small tests, slow for big ones. `fast_mode=True` compares a single number per
# (output, input) pair instead: $v^\top J u$ for random unit vectors $u$ (input-sized) and $v$
# (output-sized). The numerical side is one directional finite difference along $u$; the
# analytical side is one backward with `grad_output` $= v$. A wrong Jacobian almost surely changes
# that number, at a fraction of the cost.

# %%
print("correct op, fast mode:", gradcheck(f, (x,), fast_mode=True))
print("buggy op, fast mode:  ", gradcheck(BuggyCumSum.apply, (x,), fast_mode=True, raise_exception=False))
viz.gradcheck(BuggyCumSum.apply, (x,), fast_mode=True)

# %% [markdown]
# ## Complex inputs
#
# For complex numbers "the derivative" needs a convention. PyTorch (and microtorch) treat a
# function of a complex $z = a + ib$ as a function of the two real numbers $a$ and $b$, and the
# gradient of a real loss is $\frac{\partial L}{\partial a} + i\,\frac{\partial L}{\partial b}$,
# the direction of steepest ascent in the complex plane. PyTorch's documentation states the same
# convention with *Wirtinger derivatives*: the conjugate Wirtinger derivative is
# $\frac{\partial L}{\partial \bar z} = \frac12\left(\frac{\partial L}{\partial a} +
# i\,\frac{\partial L}{\partial b}\right)$, so the gradient above is twice it. (For
# $L = |z|^2 = z \bar z$, $\frac{\partial L}{\partial \bar z} = z$ and `z.grad` is $2z$.)
# gradcheck checks exactly that, perturbing
# the real and the imaginary part separately. A complex *output* is checked as two real
# functions, its real part and its imaginary part.
#
# Each of those Jacobians is itself complex, so the heatmaps draw it in two rows: the real parts
# (Re) and below them the imaginary parts (Im), on one colour scale. The worst entry in the
# title is a complex number; its real part is in the first row, its imaginary part in the second.

# %%
z = mt.randn(3, dtype=mt.complex128, requires_grad=True)
print("|z|^2 :", gradcheck(lambda z: (z * z.conj()).real, (z,)))
print("z^2   :", gradcheck(lambda z: z * z, (z,)))
viz.gradcheck(lambda z: z * z, (z,))

# %% [markdown]
# ## Exercises
#
# Write your answer in the cell under each question, then run the cell after it: `check`
# compares your answer with what autograd computes and, when it is wrong, says why (with a
# picture when one helps). It never shows the solution; `check.hint("name")` gives a hint.

# %%
from microtorch.autograd import Function
from microtorch.exercises import check

# %% [markdown]
# **1. Sigmoid's backward.** Write the backward of `MySigmoid`. Save what you need in
# `forward`. The check compares its forward with `sigmoid`, runs gradcheck, and on a mistake
# shows the heatmap of the wrong Jacobian entries and blames the node in a bigger graph.

# %% tags=["solution"]
class MySigmoid(Function):
    @staticmethod
    def forward(ctx, x):
        y = x.sigmoid()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        ### BEGIN SOLUTION
        (y,) = ctx.saved_tensors
        return grad * y * (1 - y)
        ### END SOLUTION

# %% tags=["check"]
check.sigmoid_backward(MySigmoid)

# %% [markdown]
# **2. Fix a broken backward.** Write `CumSum`, a copy of `BuggyCumSum` with a correct
# backward. (Which inputs does $y_i = x_0 + \dots + x_i$ depend on? Which outputs does $x_j$
# reach?) The check runs gradcheck on it, and blame mode on the graph of
# `(CumSum.apply(x * w).sin() ** 2).sum()`.

# %% tags=["solution"]
class CumSum(Function):
    @staticmethod
    def forward(ctx, x):
        return x.cumsum(0)

    @staticmethod
    def backward(ctx, grad):
        ### BEGIN SOLUTION
        return grad.flip(0).cumsum(0).flip(0)     # x_j reaches every y_i with i >= j: sum from the end
        ### END SOLUTION

# %% tags=["check"]
check.fixed_cumsum(CumSum)

# %% [markdown]
# **3. A kink.** `relu` has no derivative at 0. Predict the diagonal entries of the numerical
# and of the analytical Jacobian that gradcheck finds for `lambda t: t.relu()` at
# `t = mt.zeros(3, dtype=mt.float64, requires_grad=True)`. Then run `viz.gradcheck` on it.
# Why is that failure not a bug in `relu`?

# %% tags=["solution"]
numerical, analytical = ..., ...  # your predictions
### BEGIN SOLUTION
numerical = 0.5     # central difference (eps - 0) / (2 eps): the average of the two one-sided slopes
analytical = 0.0    # autograd's convention relu'(0) = 0
### END SOLUTION

# %% tags=["check"]
check.relu_at_zero(numerical, analytical)

# %% [markdown]
# <details><summary>Why it is not a bug</summary>
#
# Neither number is wrong: relu is not differentiable at 0, and gradcheck is only meaningful
# at points where the function is. Test at random points instead, where a tie with 0 has
# probability zero.
# </details>
