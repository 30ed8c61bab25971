# %% [markdown]
# # 8. Higher-order gradients
#
# A gradient computed by autograd is a tensor like any other. If backward itself is recorded
# as a graph, that gradient can be differentiated again: second derivatives, Hessians,
# gradient penalties, Newton steps and meta-learning all rest on this.
#
# **You will learn**
# - what `create_graph=True` does, and what the graph of a gradient looks like;
# - how to get second and third derivatives, Hessian-vector products and full Hessians;
# - how `gradgradcheck` verifies second derivatives, and the kind of bug only it can catch.

# %%
import microtorch as mt
from microtorch import viz
from microtorch.autograd import Function, gradcheck, gradgradcheck

mt.manual_seed(0);

# %% [markdown]
# ## `create_graph=True`
#
# Normally backward runs *without* recording: its results are plain numbers, and the graph is
# freed. With `create_graph=True`, backward runs its nodes' formulas with autograd switched on,
# so the gradient comes with a `grad_fn` of its own. (In microtorch every backward formula is
# written with tensor operations, so this works for every built-in op.)
#
# For $y = x^3$ at $x = 2$: $y' = 3x^2 = 12$, $y'' = 6x = 12$, $y''' = 6$.

# %%
x = mt.tensor(2.0, requires_grad=True)
y = x ** 3
(dy,) = mt.autograd.grad(y, x, create_graph=True)
print("dy/dx     =", dy)
(d2y,) = mt.autograd.grad(dy, x, create_graph=True)
print("d2y/dx2   =", d2y)
(d3y,) = mt.autograd.grad(d2y, x)
print("d3y/dx3   =", d3y)

# %% [markdown]
# Here is the graph that `dy` carries: the backward of `x ** 3` written out as operations,
# $3 \cdot x^{2} \cdot \bar y$, ending at the same leaf `x`. Differentiating `dy` walks this graph.

# %%
viz.draw(dy)

# %% [markdown]
# ## Using a gradient inside a loss
#
# Because `dy` is part of a graph, it can appear in a loss. A *gradient penalty* adds
# $\lVert \nabla_x f \rVert^2$ to the loss to keep a function smooth; minimizing it needs the
# gradient of a gradient. Here, for $f(x) = \sum_i w_i x_i^2$ at fixed $x$, the penalty
# $\lVert \nabla_x f \rVert^2 = \sum_i (2 w_i x_i)^2$ has gradient $8 w_i x_i^2$ with respect to
# $w_i$:

# %%
w = mt.tensor([1.0, -2.0, 0.5], requires_grad=True)
x = mt.tensor([1.0, 2.0, 3.0], requires_grad=True)
f = (w * x ** 2).sum()
(grad_x,) = mt.autograd.grad(f, x, create_graph=True)
penalty = (grad_x ** 2).sum()
penalty.backward()
print("w.grad  =", w.grad)
print("8 w x^2 =", 8 * w.detach() * x.detach() ** 2)

# %% [markdown]
# ## Newton's method
#
# Second derivatives tell you how curved a function is, which gives much better steps than the
# gradient alone. Newton's method for minimizing $g(x)$ in one dimension jumps to
# $x - g'(x)/g''(x)$. For $g(x) = x^4 - 3x^2 + x$, from $x = 2$:

# %%
x = mt.tensor(2.0, requires_grad=True)
for step in range(6):
    g = x ** 4 - 3 * x ** 2 + x
    (d1,) = mt.autograd.grad(g, x, create_graph=True)
    (d2,) = mt.autograd.grad(d1, x)
    with mt.no_grad():
        x -= d1 / d2
    print(f"step {step}: x = {x.item():.8f}   g'(x) before the step = {d1.item():+.2e}")

# %% [markdown]
# The derivative shrinks quadratically: the number of correct digits roughly doubles each step.
#
# ## Hessians
#
# For a function $f: \mathbb{R}^n \to \mathbb{R}$, the Hessian $H_{ij} = \partial^2 f /
# \partial x_i \partial x_j$ is the Jacobian of the gradient. Two ways to get it:
#
# - row by row: differentiate each entry of the gradient (kept as a graph) again;
# - `mt.func.hessian(f)(x)` or `mt.autograd.functional.hessian(f, x)`, which do that for you.
#
# For $f(x) = x_0^2 x_1 + \sin(x_2)\,x_0$:

# %%
def f(x):
    return x[0] ** 2 * x[1] + x[2].sin() * x[0]


x = mt.tensor([1.0, 2.0, 0.5], dtype=mt.float64, requires_grad=True)
(gradient,) = mt.autograd.grad(f(x), x, create_graph=True)
rows = [mt.autograd.grad(gradient[i], x, retain_graph=True)[0] for i in range(3)]
H = mt.stack(rows)
print(H)
print(mt.allclose(H, mt.func.hessian(f)(x)), mt.allclose(H, mt.autograd.functional.hessian(f, x)))

# %% [markdown]
# By hand: $\partial_0 f = 2 x_0 x_1 + \sin x_2$, $\partial_1 f = x_0^2$, $\partial_2 f = x_0 \cos
# x_2$, so $H = \begin{pmatrix} 2x_1 & 2x_0 & \cos x_2 \\ 2x_0 & 0 & 0 \\ \cos x_2 & 0 & -x_0\sin x_2
# \end{pmatrix}$, symmetric as a Hessian of a smooth function must be.
#
# The full Hessian costs $n$ backward passes. Often you only need $Hv$ for some vector $v$, a
# **Hessian-vector product**, and that costs a single extra backward: differentiate
# $\nabla f \cdot v$.

# %%
v = mt.tensor([1.0, 0.0, -1.0], dtype=mt.float64)
(Hv,) = mt.autograd.grad(gradient, x, grad_outputs=v, retain_graph=True)
print("Hv via double backward:", Hv)
print("H @ v                 :", H @ v)

# %% [markdown]
# ## gradgradcheck
#
# `gradcheck` verifies first derivatives. `gradgradcheck` verifies that the *backward* is itself
# differentiated correctly: it runs gradcheck on the function
# $(x, \bar y) \mapsto \text{backward}(x, \bar y)$, with a random $\bar y$.

# %%
x = mt.randn(4, dtype=mt.float64, requires_grad=True)
print("sin:", gradgradcheck(lambda t: t.sin(), (x,)))
print("x^3:", gradgradcheck(lambda t: t ** 3, (x,)))

# %% [markdown]
# ### A bug only gradgradcheck sees
#
# Here is $x^3$ as a custom `Function` whose backward computes $3x^2$ with numpy, outside
# autograd. The first derivative is right, so gradcheck passes. But autograd cannot see through
# numpy: to it, the backward's result is a constant times $\bar y$, with no path back to $x$.

# %%
class CubeViaNumpy(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        local = mt.tensor(3 * x.detach().numpy() ** 2)     # numpy: invisible to autograd
        return grad * local


print("gradcheck:    ", gradcheck(CubeViaNumpy.apply, (x,)))
print("gradgradcheck:", gradgradcheck(CubeViaNumpy.apply, (x,), raise_exception=False))

# %% [markdown]
# What happens to a student who differentiates twice by hand depends on the rest of the graph.
# Alone, the first gradient does not require grad at all, and a second `grad` raises the error
# below (PyTorch raises the same). But when the first gradient *also* depends on $x$ through
# another path, nothing fails, and the numpy part is silently missing: for
# $x^3 + x^2$ the second derivative should be $6x + 2 = 14$ at $x = 2$, and comes out as $2$.
# gradgradcheck is in that second situation (its $\bar y$ requires grad), which is why it
# catches the bug.

# %%
t = mt.tensor(2.0, dtype=mt.float64, requires_grad=True)
(g,) = mt.autograd.grad(CubeViaNumpy.apply(t), t, create_graph=True)
try:
    mt.autograd.grad(g, t)
except RuntimeError as e:
    print("RuntimeError:", str(e).split(".")[0])
(g,) = mt.autograd.grad(CubeViaNumpy.apply(t) + t ** 2, t, create_graph=True)
print("second derivative of x^3 + x^2 at 2:", mt.autograd.grad(g, t)[0].item(), "(should be 14)")

# %% [markdown]
# To see it, draw what gradgradcheck checks: the backward as a function of the input $x$ and of
# the incoming gradient $\bar y$ (here `v`, which must require grad too). Its Jacobian with
# respect to $x$ is $\text{diag}(6 x \bar y)$ numerically, and all zeros analytically. Its
# Jacobian with respect to $\bar y$, $\text{diag}(3x^2)$, is right.

# %%
def backward_of_cube(t, v):
    (g,) = mt.autograd.grad(CubeViaNumpy.apply(t), t, grad_outputs=v, create_graph=True)
    return g


v = mt.randn(4, dtype=mt.float64, requires_grad=True)
viz.gradcheck(backward_of_cube, (x, v))

# %% [markdown]
# If a backward really cannot be differentiated, say so: decorate it with
# `@once_differentiable` (from `microtorch.autograd`), and a second differentiation raises an
# error instead of returning zeros.

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
# **1. Fix `CubeViaNumpy`.** Write `Cube`, $x^3$, with a backward made of tensor operations, so
# that `gradgradcheck` passes.

# %% tags=["solution"]
class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad):
        ### BEGIN SOLUTION
        (x,) = ctx.saved_tensors
        return grad * 3 * x ** 2          # tensor ops: recorded when create_graph=True
        ### END SOLUTION

# %% tags=["check"]
check.cube(Cube)

# %% [markdown]
# **2. A second derivative.** Write `second_derivative(f, x)`: $f''(x)$ for a scalar function
# `f` at a scalar `x` that requires grad, with `mt.autograd.grad` twice.

# %% tags=["solution"]
def second_derivative(f, x):
    ### BEGIN SOLUTION
    (d1,) = mt.autograd.grad(f(x), x, create_graph=True)
    (d2,) = mt.autograd.grad(d1, x)
    return d2
    ### END SOLUTION

# %% tags=["check"]
check.second_derivative(second_derivative)

# %% [markdown]
# **3. A Hessian by formula.** The Hessian of $f(x) = \log \sum_i e^{x_i}$ (`x.logsumexp(0)`)
# can be written with $p = \text{softmax}(x)$ alone. Derive it and write it as a function of
# `x` (you may check it against `mt.func.hessian`). Why must each of its rows sum to 0?

# %% tags=["solution"]
def logsumexp_hessian(x):
    ### BEGIN SOLUTION
    p = x.softmax(0)
    return mt.diag(p) - mt.outer(p, p)
    ### END SOLUTION

# %% tags=["check"]
check.logsumexp_hessian(logsumexp_hessian)

# %% [markdown]
# <details><summary>Why the rows sum to 0</summary>
#
# Adding the same constant $c$ to every $x_i$ adds $c$ to $f$, so the gradient $p$ does not
# change along the direction $(1, \ldots, 1)$: $H\,\mathbf{1} = 0$.
# </details>
#
# **4. A Hessian-vector product.** Write `hvp(f, x, v)`: $H(x)\,v$ for a scalar function `f`,
# with one extra backward and without building $H$.

# %% tags=["solution"]
def hvp(f, x, v):
    ### BEGIN SOLUTION
    (g,) = mt.autograd.grad(f(x), x, create_graph=True)
    (Hv,) = mt.autograd.grad(g, x, grad_outputs=v)
    return Hv
    ### END SOLUTION

# %% tags=["check"]
check.hvp(hvp)
