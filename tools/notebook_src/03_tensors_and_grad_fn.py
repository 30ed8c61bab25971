# %% [markdown]
# # 3. Tensors and the `grad_fn` graph
#
# The previous notebook worked with single numbers. Real models work with tensors, and the
# graph autograd records is made of tensor operations. This notebook looks at the attributes
# that make up that graph and at what changes when the output is not a single number.
#
# **You will learn**
# - what `requires_grad`, `is_leaf`, `grad_fn` and `next_functions` tell you;
# - why only leaves get a `.grad`, and how `retain_grad()` changes that;
# - how to call `backward` on a non-scalar output with `gradient=`, and what it computes
#   (a vector-Jacobian product), checked against closed-form matrix derivatives.

# %%
import microtorch as mt

mt.manual_seed(0);

# %% [markdown]
# ## Leaves and non-leaves
#
# A tensor you create yourself is a **leaf**. If it has `requires_grad=True`, autograd will
# record every operation that uses it. A tensor computed from such a tensor is a
# **non-leaf**: it carries a `grad_fn`, the node that will compute the backward of the
# operation that made it.

# %%
w = mt.randn(3, requires_grad=True)      # a leaf we want gradients for (a "parameter")
x = mt.tensor([1.0, 2.0, 3.0])           # a leaf we do not differentiate (data)
y = w * x                                # non-leaf
loss = y.sum()                           # non-leaf, a scalar

for name, t in [("w", w), ("x", x), ("y", y), ("loss", loss)]:
    print(f"{name:5s} requires_grad={t.requires_grad!s:5s} is_leaf={t.is_leaf!s:5s} grad_fn={t.grad_fn}")

# %% [markdown]
# `x` does not require grad, so `w * x` only needs the gradient for `w`. Data tensors are
# leaves too: every tensor with `requires_grad=False` counts as a leaf, whoever made it.
#
# ## Walking the graph
#
# Each node lists where its inputs came from in `next_functions`: pairs of (node, which output
# of that node). A leaf that requires grad is represented by an `AccumulateGrad` node, whose
# `.variable` is the leaf itself; an input that needs no gradient shows up as `None`.
# Here is a small walker that prints the graph as an indented tree.

# %%
def print_graph(t):
    stack = [(t.grad_fn, 0)]
    while stack:
        node, depth = stack.pop()
        if node is None:
            print("    " * depth + "None  (no gradient needed)")
            continue
        label = node.name()
        if hasattr(node, "variable"):
            label += f"  -> leaf of shape {tuple(node.variable.shape)}"
        print("    " * depth + label)
        for nxt, _ in reversed(node.next_functions):
            stack.append((nxt, depth + 1))


print_graph(loss)
print(loss.grad_fn.next_functions[0][0].next_functions[0][0].variable is w)

# %% [markdown]
# `viz.draw` draws the same walk as a picture: the output at the top, a box per node, the leaf
# `w` at the bottom. Boxes show shapes and values; there are no gradients yet, because we have
# not called backward. `x` does not appear at all: nothing needs to flow into it.

# %%
from microtorch import viz

viz.draw(loss, names={"w": w, "x": x, "y": y, "loss": loss})

# %% [markdown]
# ## Only leaves get `.grad`
#
# After `backward`, gradients are written into the `.grad` of leaves that require grad. The
# intermediate `y` gets none: keeping every intermediate gradient would cost memory that
# training rarely needs. Reading `y.grad` returns `None` and warns you about it.

# %%
import warnings

loss.backward()
print("w.grad:", w.grad, " (equals x, since loss = sum(w * x))")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    print("y.grad:", y.grad)
print("warning:", str(caught[0].message)[:120], "...")

# %% [markdown]
# If you do want an intermediate gradient, ask for it **before** backward with
# `retain_grad()`:

# %%
w = mt.randn(3, requires_grad=True)
y = w * x
y.retain_grad()
loss = y.sum()
loss.backward()
print("y.grad:", y.grad, " (d loss / d y = 1 for every entry of a sum)")

# %% [markdown]
# ## Non-scalar outputs need `gradient=`
#
# `backward()` without arguments means "differentiate this *number*". For a tensor with several
# entries there is no single derivative to start from, so microtorch (like PyTorch) refuses:

# %%
w = mt.randn(3, requires_grad=True)
y = w * x
try:
    y.backward()
except RuntimeError as e:
    print("RuntimeError:", e)

# %% [markdown]
# Passing `gradient=v` (a tensor of the output's shape) computes the gradient of
# $\sum_i v_i\, y_i$. In terms of the Jacobian $J = \partial y / \partial w$, that is the
# **vector-Jacobian product** $v^\top J$. Backward never builds $J$; every node knows how to
# multiply an incoming vector by its own local Jacobian, which is far cheaper.

# %%
v = mt.tensor([1.0, 10.0, 100.0])
y.backward(gradient=v)
print("w.grad =", w.grad, " = v * x, since J is diag(x)")

# %% [markdown]
# ## Closed forms to compare with
#
# Two classic results from matrix calculus, checked numerically.
#
# **A scalar from a matrix.** With column vectors $a \in \mathbb{R}^4$, $b \in \mathbb{R}^3$
# and a matrix $X \in \mathbb{R}^{4\times 3}$, the scalar $f = a^\top X b = \sum_{ij} a_i X_{ij}
# b_j$ has $\frac{\partial f}{\partial X_{ij}} = a_i b_j$, that is
#
# $$\frac{\partial f}{\partial X} = a\, b^\top.$$

# %%
a = mt.tensor([[1.0], [2.0], [3.0], [4.0]])                                    # 4 x 1
X = mt.tensor([[1.0, 2, 3], [5, 6, 7], [8, 9, 10], [5, 4, 3]], requires_grad=True)  # 4 x 3
b = mt.tensor([[2.0], [3.0], [4.0]])                                           # 3 x 1

f = a.view(1, -1).mm(X).mm(b)      # a^T X b, a 1 x 1 matrix
f.backward()
print(X.grad)
print("closed form a b^T:")
print(a.mm(b.view(1, -1)))
print("a.grad, b.grad:", a.grad, b.grad, " (they never required grad)")

# %% [markdown]
# **A matrix from a matrix.** $F = A X$ with $A \in \mathbb{R}^{2\times 2}$ and
# $X \in \mathbb{R}^{2\times 3}$ is a matrix, so we pass `gradient=ones_like(F)`: that
# differentiates $\sum_{ij} F_{ij}$. Since $\sum_{ij} (AX)_{ij} = \mathbf{1}^\top A X \mathbf{1}$,
# the result is $A^\top \mathbf{1}\mathbf{1}^\top$: every column equals the column sums of $A$.

# %%
A = mt.tensor([[1.0, 2.0], [3.0, 4.0]])
X = mt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
F = A.mm(X)
print(F)
F.backward(mt.ones_like(F))
print(X.grad)
print("closed form A^T 1 1^T:")
print(A.t().mm(mt.ones(2, 3)))

# %% [markdown]
# ## The Jacobian, one row at a time
#
# A vector-Jacobian product with $v = e_i$ (a one-hot vector) picks out row $i$ of the
# Jacobian. `mt.autograd.grad` returns the gradient instead of writing `.grad`;
# `retain_graph=True` keeps the graph alive so that we can run backward once per row.

# %%
w = mt.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = mt.stack([w[0] * w[1], w[1] * w[2], w.sum()])
rows = []
for i in range(3):
    e = mt.zeros(3)
    e[i] = 1.0
    (row,) = mt.autograd.grad(y, w, grad_outputs=e, retain_graph=True)
    rows.append(row)
print(mt.stack(rows))

# %% [markdown]
# ## Exercises
#
# Write your answer in the cell under each question, then run the cell after it: `check`
# compares your answer with what autograd computes and, when it is wrong, says why (with a
# picture when one helps). It never shows the solution; `check.hint("name")` gives a hint.

# %%
from microtorch.exercises import check

# %% [markdown]
# **1. A matrix derivative by hand.** For $g = \lVert X \rVert_F^2 = \sum_{ij} X_{ij}^2$, what is
# $\partial g / \partial X$? Write it as a function of `X`.

# %% tags=["solution"]
def sq_norm_grad(X):
    ### BEGIN SOLUTION
    return 2 * X
    ### END SOLUTION

# %% tags=["check"]
check.sq_norm_grad(sq_norm_grad)

# %% [markdown]
# **2. Picking one entry.** For $F = A X$ as above, which `gradient=` makes `X.grad` equal to
# $\partial F_{00} / \partial X$, the row of $F$'s Jacobian that belongs to the entry (0, 0)
# (reshaped to the shape of $X$)? Predict `X.grad` too, then try it.

# %% tags=["solution"]
v = ...  # your gradient: a tensor of F's shape
### BEGIN SOLUTION
v = mt.zeros(2, 3)
v[0, 0] = 1.0                       # sum(v * F) is then F[0, 0]
### END SOLUTION

# %% tags=["check"]
check.one_hot_gradient(v)

# %% [markdown]
# <details><summary>Why</summary>
#
# `F.backward(v)` differentiates $\sum_{ij} v_{ij} F_{ij}$; a one-hot $v$ keeps $F_{00}$ only.
# Since $F_{00} = A_{00} X_{00} + A_{01} X_{10}$, `X.grad` is `[[1, 0, 0], [2, 0, 0]]`.
# </details>
#
# **3. Leaves.** Is `(w * 2).is_leaf` true or false when `w` requires grad? And when it does
# not?

# %% tags=["solution"]
when_w_requires_grad, when_w_does_not = ..., ...  # True or False
### BEGIN SOLUTION
when_w_requires_grad = False        # the product has a grad_fn
when_w_does_not = True              # nothing recorded: a plain tensor counts as a leaf
### END SOLUTION

# %% tags=["check"]
check.is_leaf(when_w_requires_grad, when_w_does_not)

# %% [markdown]
# **4. The whole Jacobian.** Write `jacobian(f, w)`: the Jacobian of a function `f` from a
# 1-d tensor to a 1-d tensor, at `w`, built one row at a time as above (a vector-Jacobian
# product with each one-hot vector). `w` requires grad.

# %% tags=["solution"]
def jacobian(f, w):
    ### BEGIN SOLUTION
    y = f(w)
    rows = []
    for i in range(y.numel()):
        e = mt.zeros(y.numel(), dtype=y.dtype)
        e[i] = 1.0
        (row,) = mt.autograd.grad(y, w, grad_outputs=e, retain_graph=True)
        rows.append(row)
    return mt.stack(rows)
    ### END SOLUTION

# %% tags=["check"]
check.jacobian_by_rows(jacobian)
