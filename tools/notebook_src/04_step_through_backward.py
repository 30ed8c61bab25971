# %% [markdown]
# # 4. Step-through backward
#
# `loss.backward()` is one line, and it hides a loop. This notebook opens the loop: we replay
# backward one node at a time, first on a four-operation expression, then on a small neural
# network. Then we look at what happens *between* backward calls: gradients accumulate, the
# graph is freed, and it is your job to zero the gradients.
#
# **You will learn**
# - how the engine decides which node runs next (a ready queue and dependency counts);
# - what each node computes: upstream gradient × local derivative = downstream gradients;
# - why calling `backward` twice adds up, fails, or needs `retain_graph=True`.

# %%
import microtorch as mt
from microtorch import nn, viz

mt.manual_seed(0);

# %% [markdown]
# ## A small expression
#
# The classic first example: $f = (x + y)\,z$ with $x = -2$, $y = 5$, $z = -4$. Call the sum
# $q = x + y = 3$; then $f = q z = -12$. By hand:
#
# - $\frac{\partial f}{\partial z} = q = 3$ and $\frac{\partial f}{\partial q} = z = -4$;
# - $\frac{\partial f}{\partial x} = \frac{\partial f}{\partial q}\cdot\frac{\partial q}{\partial x}
#   = -4 \cdot 1 = -4$, and the same for $y$.
#
# Record the forward pass *and* backward with `viz.record()`, so that the stepper can show the
# forward values too, and open the stepper on the tape.
#
# Press **Next** and follow along:
#
# 1. *seed*: backward starts at `f` with $\frac{\partial f}{\partial f} = 1$;
# 2. `MulBackward0` receives 1 and sends $1 \cdot z = -4$ towards `q` and $1 \cdot q = 3$
#    towards `z`;
# 3. `z`'s accumulator writes `z.grad = 3`;
# 4. `AddBackward0` receives $-4$ and passes it unchanged to both inputs (the local derivative of
#    a sum is 1);
# 5. and 6. `x.grad` and `y.grad` become $-4$.
#
# The panel's lower box shows the engine's bookkeeping after each step: the **ready queue**
# (nodes whose every incoming gradient has arrived) and, for the others, how many gradients they
# are still **waiting for**.

# %%
with viz.record() as tape:
    x = mt.tensor(-2.0, requires_grad=True)
    y = mt.tensor(5.0, requires_grad=True)
    z = mt.tensor(-4.0, requires_grad=True)
    q = x + y
    f = q * z
    f.backward()

stepper = viz.Stepper(tape, rankdir="LR")
stepper

# %% [markdown]
# The widget and Python share the current step: `stepper.index` follows your clicks, and
# `stepper.go(i)` moves the widget from Python. `stepper.state(i)` is what step `i` shows, as
# plain data. Step 1, the multiplication:

# %%
stepper.state(1)

# %% [markdown]
# The order was seed, `MulBackward0`, **`z`**, `AddBackward0`, `x`, `y`. Why `z` before
# `AddBackward0`? Both became ready at the same moment, after `MulBackward0` ran. microtorch,
# like PyTorch, runs leaf accumulators as soon as they are ready, and otherwise picks the node
# created most recently in the forward pass. Any order that respects the dependencies gives
# the same gradients; this particular one matches PyTorch's.

# %%
print("x.grad", x.grad.item(), " y.grad", y.grad.item(), " z.grad", z.grad.item())

# %% [markdown]
# ## A small network
#
# The same loop runs on tensors. Here is a two-layer perceptron on a batch of four examples.
# Each `Linear` layer is a matrix product plus a broadcast bias; the gradients on the edges are
# now tensors, and the stepper shows their shape with a short summary (hover over a box for
# the full value). `module=model` names the parameters after their place in the model
# (`0.weight`, `2.bias`, ...).

# %%
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
inputs = mt.randn(4, 3)
targets = mt.randn(4, 1)

with viz.record() as tape:
    loss = ((model(inputs) - targets) ** 2).mean()
    loss.backward()

viz.Stepper(tape, module=model)

# %% [markdown]
# A model with more layers is easier to read folded. `viz.explore` draws each module as one box
# (its parameters' shapes, how many nodes it holds): click a box to open it, the frame of an open
# module to close it, and any node to see its tensor: value, gradient, and what its backward
# saved.

# %%
viz.explore(loss, module=model, tape=tape)

# %% [markdown]
# ## Gradients accumulate
#
# Backward never *overwrites* a leaf's `.grad`: it *adds* to it. Run backward twice on the same
# graph and you get twice the gradient. (The graph's saved values are normally freed after the
# first backward, so we pass `retain_graph=True` to keep them.)

# %%
w = mt.tensor(3.0, requires_grad=True)
loss = w ** 2                        # d loss / dw = 2w = 6
loss.backward(retain_graph=True)
print("after one backward: ", w.grad)
loss.backward(retain_graph=True)
print("after two backwards:", w.grad)

# %% [markdown]
# This is deliberate. It lets gradients from several losses, or several mini-batches, add up
# before one optimizer step (*gradient accumulation*). The price is that you must clear the
# gradients yourself between steps, which is what `optimizer.zero_grad()` does: it sets every
# parameter's `.grad` to `None` (or to zeros with `set_to_none=False`).
#
# The stepper shows the accumulation: on the second backward, the accumulator's panel reads
# *before + contribution = after*.

# %%
with viz.record() as tape:
    loss.backward(retain_graph=True)
second = viz.Stepper(tape)
second.go(len(second.steps) - 1)
second

# %%
w.grad = None                         # what zero_grad() does
loss.backward(retain_graph=True)
print("after clearing:", w.grad)

# %% [markdown]
# ## Backward twice without `retain_graph`
#
# Each node keeps the values its backward needs (here `PowBackward0` keeps `w`). To save memory,
# backward frees them as soon as the node has run. A second backward through the same nodes
# then has nothing to work with, and says so:

# %%
w = mt.tensor(3.0, requires_grad=True)
loss = w ** 2
loss.backward()
try:
    loss.backward()
except RuntimeError as e:
    print("RuntimeError:", e)

# %% [markdown]
# You rarely need `retain_graph=True`. In a training loop, every step builds a new graph from
# a new forward pass, so every graph is used once. Keep it for the cases where you really
# backpropagate twice through the same graph, such as several losses sharing a trunk when you
# call `backward` on each of them (summing them into one loss and calling `backward` once needs
# no `retain_graph`), or the demo above.

# %% [markdown]
# ## Exercises
#
# Write your answer in the cell under each question, then run the cell after it: `check`
# compares your answer with what autograd computes and, when it is wrong, says why (with a
# picture when one helps). It never shows the solution; `check.hint("name")` gives a hint.

# %%
from microtorch.exercises import check

# %% [markdown]
# **1. Predict, then step.** For $g = x \cdot x \cdot y$ (written `x * x * y`) with $x = 3$,
# $y = 2$: how many gradients does `x`'s accumulator receive when it runs, and what is
# `x.grad`? Predict, then record `g.backward()` and open a stepper to see it.

# %% tags=["solution"]
received, x_grad = ..., ...  # your predictions
### BEGIN SOLUTION
received = 1        # x * x sends two gradients to x; the engine sums them before the accumulator runs
x_grad = 12.0       # 2 * (x * y) = 2xy
### END SOLUTION

# %% tags=["check"]
check.accumulator(received, x_grad)

# %% [markdown]
# **2. A training loop without `zero_grad()`.** Take `w = 1.0`, `loss = w ** 2` and plain SGD
# with `lr = 0.1`, and run three steps (forward, backward, step) without ever clearing
# `w.grad`. What is in `w.grad` after the third backward? Work it out by hand.

# %% tags=["solution"]
answer = ...  # your answer: a number
### BEGIN SOLUTION
# step 1: w = 1,    gradient 2,    w.grad = 2,          w -> 1 - 0.1 * 2 = 0.8
# step 2: w = 0.8,  gradient 1.6,  w.grad = 3.6,        w -> 0.8 - 0.1 * 3.6 = 0.44
# step 3: w = 0.44, gradient 0.88, w.grad = 3.6 + 0.88
answer = 3.6 + 0.88
### END SOLUTION

# %% tags=["check"]
check.no_zero_grad(answer)

# %% [markdown]
# <details><summary>Why it matters</summary>
#
# `.grad` holds the sum of every gradient so far, each computed at the parameters of its own
# step, and every update after the first uses such a running sum instead of the current
# gradient.
# </details>
#
# **3. Backward by hand for the perceptron.** For one hidden layer,
# $h = \tanh(X W_1 + b_1)$, $\text{out} = h W_2 + b_2$ and
# $L = \text{mean}\big((\text{out} - T)^2\big)$, with $X$ of shape `(4, 3)`, $W_1$ `(3, 5)`,
# $b_1$ `(5,)`, $W_2$ `(5, 1)`, $b_2$ `(1,)`, $T$ `(4, 1)`: write the backward pass yourself,
# with matrix products only (no `.backward()`). Return the gradient of $L$ with respect to
# `out`, `W2`, `b2`, `h`, `W1` and `b1`. Each must have the shape of its tensor.

# %% tags=["solution"]
def manual_backward(X, T, W1, b1, W2, b2):
    ### BEGIN SOLUTION
    h = (X @ W1 + b1).tanh()
    out = h @ W2 + b2
    d_out = 2 * (out - T) / out.numel()       # the mean divides by N = 4
    d_h = d_out @ W2.t()
    d_pre = d_h * (1 - h ** 2)                # through tanh
    return {"out": d_out, "W2": h.t() @ d_out, "b2": d_out.sum(dim=0),
            "h": d_h, "W1": X.t() @ d_pre, "b1": d_pre.sum(dim=0)}
    ### END SOLUTION

# %% tags=["check"]
check.mlp_backward(manual_backward)
