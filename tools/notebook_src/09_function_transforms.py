# %% [markdown]
# # 9. Function transforms
#
# So far gradients were attributes: call `backward()` on a result and read `.grad` on a tensor.
# `microtorch.func` (like `torch.func`, which grew out of JAX's design) offers another view:
# a gradient is a **function**. `grad(f)` takes a function and returns a new function that
# computes the derivative of `f`. Functions in, functions out: such *transforms* compose.
# `grad(grad(f))` is the second derivative, `vmap(grad(f))` computes a gradient per example.
#
# **You will learn**
# - `grad` and its options `argnums` and `has_aux`, on the examples of the `torch.func.grad`
#   documentation, run unchanged;
# - per-sample gradients with `vmap`;
# - how `grad` treats `no_grad`, inside and outside the function;
# - `jacrev` versus `jacfwd`: the same Jacobian by reverse and by forward mode.

# %%
import microtorch as mt
from microtorch.func import functional_call, grad, grad_and_value, jacfwd, jacrev, jvp, vmap

mt.manual_seed(0);

# %% [markdown]
# ## The documentation's examples
#
# The next cells are the examples of PyTorch's `torch.func.grad` documentation with one change:
# `torch` is microtorch.

# %%
import microtorch as torch

# %% [markdown]
# **The derivative of sine.** `grad(lambda x: torch.sin(x))` is a function; applied to `x` it
# returns $\cos x$. Applying `grad` twice gives the second derivative, $-\sin x$.

# %%
x = torch.randn([])
cos_x = grad(lambda x: torch.sin(x))(x)
assert torch.allclose(cos_x, x.cos())

# Second-order gradients
neg_sin_x = grad(grad(lambda x: torch.sin(x)))(x)
assert torch.allclose(neg_sin_x, -x.sin())
print(x, cos_x, neg_sin_x)

# %% [markdown]
# **Per-sample gradients.** Training computes the gradient of the loss *averaged* over a batch.
# Sometimes you want one gradient per example (to clip them one by one for differential
# privacy, or to see which examples pull hardest). `grad(compute_loss)` is the gradient for one
# example; `vmap` maps it over the batch, with `in_dims=(None, 0, 0)`: the weights are shared
# (`None`), examples and targets are split along dimension 0.

# %%
batch_size, feature_size = 3, 5

def model(weights, feature_vec):
    # Very simple linear model with activation
    assert feature_vec.dim() == 1
    return feature_vec.dot(weights).relu()

def compute_loss(weights, example, target):
    y = model(weights, example)
    return ((y - target) ** 2).mean()  # MSELoss

weights = torch.randn(feature_size, requires_grad=True)
examples = torch.randn(batch_size, feature_size)
targets = torch.randn(batch_size)
inputs = (weights, examples, targets)
grad_weight_per_example = vmap(grad(compute_loss), in_dims=(None, 0, 0))(*inputs)
print(grad_weight_per_example)

# %% [markdown]
# One row per example. A row of zeros is an example whose `relu` was inactive: no gradient
# flows through it. The rows average to the ordinary batch gradient:

# %%
def batch_loss(weights):
    return sum(compute_loss(weights, e, t) for e, t in zip(examples, targets)) / batch_size

print(grad_weight_per_example.mean(dim=0))
print(grad(batch_loss)(weights))

# %% [markdown]
# `vmap` does not loop over the examples in Python: it runs `compute_loss` once, on tensors that
# carry a hidden batch dimension, and each operation knows how to handle it (an operation without
# such a rule falls back to a loop, with a warning). The `assert feature_vec.dim() == 1` inside
# `model` still holds because the function only ever sees one example's shape.
#
# **`argnums` and `has_aux`.** `argnums` picks which arguments to differentiate (a tuple gives a
# tuple of gradients). `has_aux=True` lets the function return `(loss, anything_else)`; the
# extra value is passed through untouched.

# %%
def my_loss_func(y, y_pred):
    loss_per_sample = (0.5 * y_pred - y) ** 2
    loss = loss_per_sample.mean()
    return loss, (y_pred, loss_per_sample)

fn = grad(my_loss_func, argnums=(0, 1), has_aux=True)
y_true = torch.rand(4)
y_preds = torch.rand(4, requires_grad=True)
out = fn(y_true, y_preds)
# > output is ((grads w.r.t y_true, grads w.r.t y_preds), (y_pred, loss_per_sample))
(grad_y_true, grad_y_preds), (aux_pred, aux_per_sample) = out
print("d loss / d y_true :", grad_y_true)
print("d loss / d y_preds:", grad_y_preds)
print("aux loss per sample:", aux_per_sample)

# %% [markdown]
# By hand: with $r = \tfrac12 \hat y - y$ and $L = \tfrac14\sum r^2$, $\partial L/\partial y = -r/2$
# and $\partial L / \partial \hat y = r/4$. So the second gradient is $-\tfrac12$ times the first:

# %%
print(torch.allclose(grad_y_preds, -0.5 * grad_y_true))

# %% [markdown]
# ## `grad` and `no_grad`
#
# **Case 1: `no_grad` inside the function.** `grad` respects it: `c` is computed without
# recording, so it counts as a constant, and $\frac{d}{dx}(x - c) = 1$.

# %%
def f(x):
    with torch.no_grad():
        c = x ** 2
    return x - c

x = torch.tensor(3.0)
print(grad(f)(x))

# %% [markdown]
# **Case 2: `grad` called inside `no_grad`.** `grad` ignores the *outer* `no_grad`: a transform's
# result should depend only on the function it transforms, not on the context it happens to be
# called in. The inner `no_grad` of case 1 still applies, so the answer is the same:

# %%
with torch.no_grad():
    print(grad(f)(x))

# %% [markdown]
# Compare with the classic API, where an outer `no_grad` switches recording off and backward
# would have nothing to differentiate.
#
# ## Per-sample gradients of a real model
#
# `functional_call(module, params, args)` runs an `nn.Module` with the parameters you pass
# instead of its own, which turns any model into a function of its parameters, ready for
# `grad` and `vmap`:

# %%
net = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
params = {name: p.detach() for name, p in net.named_parameters()}

def example_loss(params, x, y):
    prediction = functional_call(net, params, (x.unsqueeze(0),))
    return ((prediction - y) ** 2).mean()

X, Y = torch.randn(6, 3), torch.randn(6, 1)
per_example = vmap(grad(example_loss), in_dims=(None, 0, 0))(params, X, Y)
for name, g in per_example.items():
    print(f"{name:10s} {tuple(g.shape)}   (batch of 6 x {tuple(params[name].shape)})")

# %% [markdown]
# ## `jacrev` and `jacfwd`
#
# For $f: \mathbb{R}^n \to \mathbb{R}^m$ the Jacobian is $m \times n$. There are two ways to build
# it:
#
# - **reverse mode** (`jacrev`): one vector-Jacobian product $v^\top J$ per output, one per
#   *row*: $m$ of them;
# - **forward mode** (`jacfwd`): one Jacobian-vector product $J u$ per input, one per
#   *column*: $n$ of them.
#
# Neither loops in Python: `jacrev` runs one forward, then hands its `vjp` function to `vmap`
# with the $m$ rows of the identity as a batch of $v$'s, so the $m$ products are computed as one
# batched backward. `jacfwd` does the same with `jvp` and the $n$ columns.
#
# Both give the same matrix:

# %%
def f(x):
    return torch.stack([x[0] * x[1], x[1].sin(), x.exp().sum(), x[2] ** 3])   # R^3 -> R^4

x = torch.tensor([1.0, 2.0, 0.5])
print(jacrev(f)(x))
print(torch.allclose(jacrev(f)(x), jacfwd(f)(x)))

# %% [markdown]
# Which is cheaper depends on the shape. A loss (many inputs, one output) is the extreme case
# for reverse mode: one backward gives the whole gradient, which is why training uses backward.
# A function with few inputs and many outputs (a curve traced by one parameter) favours forward
# mode. `jvp` is forward mode's primitive: the output and its directional derivative along a
# tangent, in a single pass, with no backward at all.

# %%
value, tangent = jvp(f, (x,), (torch.tensor([1.0, 0.0, 0.0]),))
print("J @ e0 =", tangent, "  (the first column of the Jacobian)")

# %% [markdown]
# And transforms compose: `jacfwd(jacrev(f))` is a Hessian (reverse mode for the gradient, forward
# mode over it), the combination `microtorch.func.hessian` uses.

# %%
g = lambda x: (x[0] ** 2 * x[1]).sin()
print(jacfwd(jacrev(g))(torch.tensor([1.0, 2.0])))

# %% [markdown]
# ## Exercises
#
# Write your answer in the cell under each question, then run the cell after it: `check`
# compares your answer with what autograd computes and, when it is wrong, says why (with a
# picture when one helps). It never shows the solution; `check.hint("name")` gives a hint.

# %%
import microtorch as torch
from microtorch.exercises import check
from microtorch.func import grad, vmap

# %% [markdown]
# **1. `argnums`.** Use `grad` with `argnums=1` to get $\partial h / \partial b$ of
# $h(a, b) = a\,b^2$ at $a = 3$, $b = 2$.

# %% tags=["solution"]
answer = ...  # your answer, computed with grad
### BEGIN SOLUTION
h = lambda a, b: a * b ** 2
answer = grad(h, argnums=1)(torch.tensor(3.0), torch.tensor(2.0))    # 2ab = 12
### END SOLUTION

# %% tags=["check"]
check.grad_argnums(answer)

# %% [markdown]
# **2. A derivative at many points at once.** Write `tanh_derivatives(xs)`: $\frac{d}{dx}\tanh(x)$
# at every point of the 1-d tensor `xs`, in one call of `vmap` and `grad` (no Python loop).

# %% tags=["solution"]
def tanh_derivatives(xs):
    ### BEGIN SOLUTION
    return vmap(grad(torch.tanh))(xs)
    ### END SOLUTION

# %% tags=["check"]
check.tanh_derivatives(tanh_derivatives)

# %% [markdown]
# **3. Per-sample gradients.** Write `per_sample_grads(loss_fn, weights, examples, targets)`:
# for every example $i$, the gradient of `loss_fn(weights, examples[i], targets[i])` with
# respect to `weights`, stacked into one tensor of shape `(batch, *weights.shape)`. Use
# `vmap` and `grad` as above, for any `loss_fn` with that signature.

# %% tags=["solution"]
def per_sample_grads(loss_fn, weights, examples, targets):
    ### BEGIN SOLUTION
    return vmap(grad(loss_fn), in_dims=(None, 0, 0))(weights, examples, targets)
    ### END SOLUTION

# %% tags=["check"]
check.per_sample_grads(per_sample_grads)
