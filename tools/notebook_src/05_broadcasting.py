# %% [markdown]
# # 5. Broadcasting and matrix calculus
#
# Adding a bias vector to every row of a matrix is one line of code, `X @ W + b`, and it hides
# a copy: `b` is *broadcast* to the shape of `X @ W`. Whatever is copied in the forward pass
# must be summed in the backward pass. This notebook shows why, and then derives the gradients
# of a linear layer by hand.
#
# **You will learn**
# - the rule "a gradient always has the shape of its tensor", and how summation enforces it;
# - that the adjoint of broadcasting is a sum over the broadcast dimensions;
# - the two formulas behind every linear layer: $\bar X = \bar Y W^\top$ and
#   $\bar W = X^\top \bar Y$.

# %%
import microtorch as mt

mt.manual_seed(0);

# %% [markdown]
# ## Broadcasting in the forward pass
#
# Shapes are aligned from the right; a dimension of size 1 (or a missing one) is stretched to
# match the other operand. A `(3, 1)` column plus a `(1, 4)` row gives a `(3, 4)` table:

# %%
col = mt.tensor([[0.0], [10.0], [20.0]], requires_grad=True)   # (3, 1)
row = mt.tensor([[1.0, 2.0, 3.0, 4.0]], requires_grad=True)    # (1, 4)
table = col + row
print(table)

# %% [markdown]
# ## ... and the sum in the backward pass
#
# Each entry of `col` was used **four** times (once per column of the table), and each entry of
# `row` **three** times. A value used several times collects one gradient per use, and they
# add (notebook 2). So with an upstream gradient $G$ of shape `(3, 4)`:
#
# - `col.grad` is $G$ summed over the columns, shape `(3, 1)`;
# - `row.grad` is $G$ summed over the rows, shape `(1, 4)`.

# %%
G = mt.arange(12.0).reshape(3, 4)
table.backward(G)
print("G =\n", G)
print("col.grad =", col.grad.flatten(), "  G.sum(dim=1) =", G.sum(dim=1))
print("row.grad =", row.grad.flatten(), "  G.sum(dim=0) =", G.sum(dim=0))
print("shapes:", tuple(col.grad.shape), tuple(row.grad.shape))

# %% [markdown]
# In one sentence: **the adjoint of broadcasting is summation**. Broadcasting is a linear map.
# Copying a vector $v$ of length $d$ into the $N$ rows of an $N \times d$ table (flattened row
# by row) is $B v$ with $B = \mathbf{1}_N \otimes I_d$: $N$ identity matrices stacked on top
# of each other, each copying every entry of $v$ to its place in one row. (Only for a scalar,
# $d = 1$, is $B$ a plain column of ones.) The backward of a linear map is its transpose, and
# $B^\top = [I_d \; I_d \; \cdots \; I_d]$ adds up the $N$ copies: $B^\top g = \sum_n g_n$.
#
# microtorch does this in exactly one place: a function `sum_to(grad, shape)` that sums a
# gradient back to the shape of the input it belongs to. Every op's backward computes its
# gradient as if nothing had been broadcast, and the engine calls `sum_to`. Here is a
# version in a few lines of numpy, to see that there is nothing more to it:

# %%
def sum_to(grad, shape):
    """Sum `grad` (a numpy array) down to `shape`, undoing numpy broadcasting."""
    extra = grad.ndim - len(shape)
    grad = grad.sum(axis=tuple(range(extra)))           # dimensions broadcasting prepended
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    return grad.sum(axis=stretched, keepdims=True)       # dimensions stretched from size 1


print(sum_to(G.numpy(), (3, 1)).ravel(), sum_to(G.numpy(), (4,)), sum_to(G.numpy(), ()))

# %% [markdown]
# ## The bias of a linear layer
#
# A batch of $N = 5$ inputs with 3 features goes through $Y = X W + b$, with $W$ of shape
# `(3, 2)` and $b$ of shape `(2,)`. The bias is broadcast over the batch, so its gradient is
# the upstream gradient summed over the batch dimension.

# %%
X = mt.randn(5, 3)
W = mt.randn(3, 2, requires_grad=True)
b = mt.zeros(2, requires_grad=True)
Y = X @ W + b
Ybar = mt.randn(5, 2)          # some upstream gradient dL/dY
Y.backward(Ybar)
print("b.grad        =", b.grad)
print("Ybar.sum(0)   =", Ybar.sum(dim=0))

# %% [markdown]
# ## Matrix calculus for $Y = X W$
#
# Write $\bar Y = \partial L / \partial Y$ for the upstream gradient. Since
# $Y_{nk} = \sum_j X_{nj} W_{jk}$,
#
# $$\bar W_{jk} = \sum_n X_{nj}\, \bar Y_{nk} \quad\Longrightarrow\quad \bar W = X^\top \bar Y,
# \qquad\qquad \bar X_{nj} = \sum_k \bar Y_{nk}\, W_{jk} \quad\Longrightarrow\quad
# \bar X = \bar Y W^\top.$$
#
# A quick way to remember them: they are the only products of $\bar Y$ with the other factor
# whose shapes fit. $\bar W$ must be `(3, 2)` like $W$: `(3, 5) @ (5, 2)`. $\bar X$ must be
# `(5, 3)` like $X$: `(5, 2) @ (2, 3)`.

# %%
X = mt.randn(5, 3, requires_grad=True)
W = mt.randn(3, 2, requires_grad=True)
Y = X @ W
Ybar = mt.randn(5, 2)
Y.backward(Ybar)
print("W.grad matches X^T Ybar:", mt.allclose(W.grad, X.detach().t() @ Ybar))
print("X.grad matches Ybar W^T:", mt.allclose(X.grad, Ybar @ W.detach().t()))

# %% [markdown]
# Notice that $\bar W = X^\top \bar Y = \sum_n x_n^\top \bar y_n$, where $x_n$ and
# $\bar y_n$ are the $n$-th rows of $X$ and $\bar Y$ (row vectors, so each term is an outer
# product of shape `(3, 2)`), is *also* a sum over the batch: the same weights were used for every example, so their gradient collects one
# contribution per example. Broadcasting and weight sharing are the same story.

# %% [markdown]
# ### Watching the sum happen
#
# Step through a linear layer with a `relu`. At the `AddBackward0` step (step 3), the node
# receives a `5×2` gradient and sends out two: a `5×2` one towards the matrix product, and a
# length-2 one towards `b`, already summed over the batch. The chain-rule panel writes that sum
# out: the formula for `b` is `sum_to(∂loss/∂v3, (2,))`, and the line under it reads
# `to input 1 (b): sum_to(…, (2,)) = [...]`, "summed from shape (5, 2)".

# %%
from microtorch import viz

X = mt.randn(5, 3)
W = mt.randn(3, 2, requires_grad=True)
b = mt.zeros(2, requires_grad=True)
with viz.record() as tape:
    loss = (X @ W + b).relu().sum()
    loss.backward()
stepper = viz.Stepper(tape)
stepper.go(3)
stepper

# %% [markdown]
# ## Exercises
#
# Write your answer in the cell under each question, then run the cell after it: `check`
# compares your answer with what autograd computes and, when it is wrong, says why (with a
# picture when one helps). It never shows the solution; `check.hint("name")` gives a hint.

# %%
from microtorch.exercises import check

# %% [markdown]
# **1. Predict a broadcast gradient.** `x` has shape `(1, 3)` and `y` has shape `(2, 3)`.
# Predict `x.grad` for `(x * y).sum()` without running anything.

# %%
x = mt.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
y = mt.tensor([[1.0, 1.0, 1.0], [2.0, 3.0, 4.0]])

# %% tags=["solution"]
prediction = ...  # your prediction: a tensor
### BEGIN SOLUTION
prediction = mt.tensor([[3.0, 4.0, 5.0]])   # y summed over the broadcast rows, shape (1, 3)
### END SOLUTION

# %% tags=["check"]
check.broadcast_x_grad(prediction)

# %% [markdown]
# **2. A linear least-squares gradient.** For $L = \lVert X W - T \rVert^2$ (the sum of
# squares), derive $\partial L / \partial W$ with the two rules above and write it with
# matrix products. `X` is `(4, 3)`, `W` is `(3, 2)`, `T` is `(4, 2)`.

# %% tags=["solution"]
def dL_dW(X, W, T):
    ### BEGIN SOLUTION
    return 2 * X.t() @ (X @ W - T)           # R = XW - T, R-bar = 2R, W-bar = X^T R-bar
    ### END SOLUTION

# %% tags=["check"]
check.linear_W_grad(dL_dW)

# %% [markdown]
# **3. `sum_to` with tensors.** Write `sum_to(grad, shape)` for a microtorch tensor `grad`
# (use `grad.sum(dim=..., keepdim=...)`), so that it undoes any broadcasting of a tensor of
# shape `shape` to `grad.shape`. The check compares it with the gradient of a broadcast, as
# autograd computes it, for five pairs of shapes.

# %% tags=["solution"]
def sum_to(grad, shape):
    ### BEGIN SOLUTION
    extra = grad.dim() - len(shape)
    if extra:
        grad = grad.sum(dim=tuple(range(extra)))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    if stretched:
        grad = grad.sum(dim=stretched, keepdim=True)
    return grad
    ### END SOLUTION

# %% tags=["check"]
check.sum_to(sum_to)

# %% [markdown]
# **4.** Why does `sum_to` above need `keepdims=True` in its second sum but not in its first?
#
# <details><summary>Solution</summary>
#
# The first sum removes dimensions that broadcasting *added* on the left, which the input never
# had. The second sums dimensions the input *has*, with size 1; they must stay, with size 1,
# so that the result has the input's shape.
# </details>
