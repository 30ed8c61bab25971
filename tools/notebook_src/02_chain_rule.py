# %% [markdown]
# # 2. The chain rule on scalars
#
# Automatic differentiation is the chain rule, applied by a program, in a careful order.
# This notebook takes one small function, differentiates it by hand, then lets microtorch do
# it and looks at *how* it did it: which numbers it kept from the forward pass, in which order
# it visited the operations, and why that order matters.
#
# **You will learn**
# - to split a formula into elementary steps and multiply their local derivatives;
# - why gradients from different paths are *added*;
# - why backward must visit the graph in topological order (`b = a + a; c = b + b`).

# %%
import math

import microtorch as mt

# %% [markdown]
# ## A derivative by hand
#
# Take $f(x) = \sin(x^2)$. Written as a chain of two elementary steps:
#
# $$u = x^2, \qquad f = \sin(u).$$
#
# Each step has a *local* derivative that only needs its own input:
# $\frac{du}{dx} = 2x$ and $\frac{df}{du} = \cos(u)$. The chain rule multiplies them:
#
# $$\frac{df}{dx} = \frac{df}{du}\cdot\frac{du}{dx} = \cos(x^2)\cdot 2x.$$
#
# At $x = 1.5$:

# %%
x_value = 1.5
by_hand = math.cos(x_value ** 2) * 2 * x_value
by_hand

# %% [markdown]
# ## The same derivative by autograd
#
# Mark the input with `requires_grad=True`, compute as usual, call `.backward()` on the
# result, and read the derivative from `x.grad`.

# %%
x = mt.tensor(x_value, requires_grad=True)
u = x * x
f = u.sin()
f.backward()
print("autograd:", x.grad.item())
print("by hand: ", by_hand)

# %% [markdown]
# They agree to about seven significant digits. The small difference is precision, not
# approximation: microtorch, like PyTorch, computes in `float32` unless told otherwise, while
# Python's `math` uses `float64`. Autograd is not a finite difference; it evaluates the exact
# derivative formula at the point. (Try `mt.tensor(x_value, dtype=mt.float64, requires_grad=True)`.)
#
# Where did the formula come from? While computing `u` and `f`, microtorch recorded each
# operation in a *graph*. Every non-leaf tensor points at the node that made it:

# %%
print(f.grad_fn)                     # the node that made f: the backward of sin
print(f.grad_fn.next_functions)      # ... which points back at the node that made u
print(u.grad_fn.next_functions)      # ... whose inputs both come from x's accumulator

# %% [markdown]
# `SinBackward0` knows the local derivative of `sin` and kept the value it needs (`u`).
# `MulBackward0` knows the local derivative of a product and kept both factors. Backward starts
# at `f` with $\frac{df}{df} = 1$ and walks this chain, multiplying by one local derivative per
# node, until it reaches `x`.

# %% [markdown]
# ### The picture
#
# `viz.draw` shows the graph with the value and, under it, the gradient in each box, the way
# micrograd draws it. The output is at the top and the input at the bottom: read it from the
# top down, the way backward runs. Click a box to open its tensor below the graph: its value,
# its gradient and the values its backward saved.

# %%
from microtorch import viz

x = mt.tensor(x_value, requires_grad=True)
u = x * x
f = u.sin()
f.backward()
viz.draw(f, names={"x": x, "u": u, "f": f})

# %% [markdown]
# ## Two paths: gradients add up
#
# When a value is used twice, a small change in it reaches the output along two routes, and
# the effects add. Take $g(x, y) = x\,y + \sin(x)$: `x` feeds both the product and the sine,
# so
#
# $$\frac{\partial g}{\partial x} = y + \cos(x), \qquad \frac{\partial g}{\partial y} = x.$$

# %%
x = mt.tensor(0.5, requires_grad=True)
y = mt.tensor(-2.0, requires_grad=True)
g = x * y + x.sin()
g.backward()
print("dg/dx:", x.grad.item(), " by hand:", -2.0 + math.cos(0.5))
print("dg/dy:", y.grad.item(), " by hand:", 0.5)

# %% [markdown]
# ## Why the order matters: `b = a + a; c = b + b`
#
# Here `a` is used twice to make `b`, and `b` twice to make `c`. So $c = 4a$ and
# $\frac{dc}{da} = 4$.
#
# Think of backward as messages: each node receives the gradient of the output with respect
# to its result, multiplies by its local derivatives, and sends the products to its inputs.
# `b` receives *two* messages (one per use in `c`). If `b` passed its gradient on as soon as
# the first message arrived, it would pass on only half of it. A node may run only after
# **every** node that uses its result has run: that is a *topological order* of the graph.
#
# Let us see both orders on a home-made engine of twenty lines. A `Value` holds a number, a
# gradient and the list of `(input, local derivative)` pairs it came from.

# %%
class Value:
    def __init__(self, data, parents=(), name=""):
        self.data, self.grad, self.parents, self.name = data, 0.0, parents, name

    def __add__(self, other):
        return Value(self.data + other.data, ((self, 1.0), (other, 1.0)))

    def __mul__(self, other):
        return Value(self.data * other.data, ((self, other.data), (other, self.data)))


def backward_eager(out):
    """Wrong: a node runs as soon as the first message reaches it, and only once."""
    out.grad = 1.0
    done = set()

    def send(node):
        for parent, local in node.parents:
            parent.grad += node.grad * local
            if id(parent) not in done:    # run the parent right away
                done.add(id(parent))
                send(parent)

    send(out)


def backward_topological(out):
    """Right: sort first (every user before what it uses), then run each node once."""
    order, seen = [], set()

    def visit(node):                      # depth-first post-order
        if id(node) not in seen:
            seen.add(id(node))
            for parent, _ in node.parents:
                visit(parent)
            order.append(node)

    visit(out)
    out.grad = 1.0
    for node in reversed(order):          # from the output back to the inputs
        for parent, local in node.parents:
            parent.grad += node.grad * local


a = Value(3.0); b = a + a; c = b + b
backward_eager(c)
print("eager order:       dc/da =", a.grad)

a = Value(3.0); b = a + a; c = b + b
backward_topological(c)
print("topological order: dc/da =", a.grad)

# %% [markdown]
# The eager version ran `b` after its first message, when `b.grad` was 1 instead of 2, and
# passed on half of what it should have: 2 instead of 4. (Running a node once *per message*
# would give the right sum, but a chain of $n$ such doublings would then run $2^n$ times.)
#
# (`backward_topological` sorts with recursion, which is fine for a toy; microtorch's engine
# has no recursion at all, so that a chain of 100,000 operations works. It counts, for each
# node, how many gradient messages it still waits for, and keeps a queue of nodes whose count
# reached zero.)
#
# ## Watching microtorch's engine
#
# microtorch's engine announces each step to anyone listening (this is how the visualizer
# watches it). Here is a bare listener that prints, for each node it runs, the gradient
# arriving and the gradients leaving. `GraphRoot` is where backward starts: it sends the seed
# $\frac{dc}{dc} = 1$.

# %%
from microtorch.autograd import graph


def show(event):
    if isinstance(event, graph.NodeExecuting):
        incoming = [round(g.item(), 3) for g in event.incoming if g is not None]
        outgoing = [round(g.item(), 3) for g in event.outgoing if g is not None]
        print(f"{event.node.name():32s} in: {str(incoming):10s} out: {outgoing}")


a = mt.tensor(3.0, requires_grad=True)
b = a + a
c = b + b
with graph.add_listener(show):
    c.backward()
print("microtorch: dc/da =", a.grad.item())

# %% [markdown]
# Each `AddBackward0` ran exactly once. The second `AddBackward0` printed (the one that made
# `b`, on the third line after `GraphRoot`) received `2`:
# both of `c`'s messages had been summed before it ran. The accumulator of the leaf `a`
# received `4`.

# %% [markdown]
# ## Stepping through it
#
# `viz.record()` keeps these events on a tape, and `viz.Stepper` replays backward one node at
# a time. Press **Next**: the highlighted node is the one running, and the panel shows the
# gradient arriving and leaving.

# %%
from microtorch import viz

with viz.record() as tape:
    a = mt.tensor(3.0, requires_grad=True)
    b = a + a
    c = b + b
    c.backward()
viz.Stepper(tape, names={"a": a, "b": b, "c": c})

# %% [markdown]
# ## Exercises
#
# Write your answer in the cell under each question, then run the cell after it: `check`
# compares your answer with what autograd computes and, when it is wrong, says why (with a
# picture when one helps). It never shows the solution; `check.hint("name")` gives a hint.

# %%
import math

from microtorch.exercises import check

# %% [markdown]
# **1. A derivative by hand.** Let $h(x) = x\,e^{x}$. Work out $h'(x)$ by hand and evaluate it
# at $x = 2$ (you may use `math.exp` to evaluate your formula). Then check with autograd
# yourself, if you like.

# %% tags=["solution"]
answer = ...  # your answer: a number
### BEGIN SOLUTION
answer = (1 + 2) * math.exp(2)      # product rule: h'(x) = e^x + x e^x = (1 + x) e^x
### END SOLUTION

# %% tags=["check"]
check.h_prime(answer)

# %% [markdown]
# **2. Counting messages.** With `a = 3`, let `b = a * a` and `c = b * b + b`. How many gradient
# messages does `b` receive during backward, and what is $\frac{dc}{da}$? Work it out first;
# you can then confirm it with `Value` and `backward_topological`.

# %% tags=["solution"]
count, dc_da = ..., ...  # your answers
### BEGIN SOLUTION
count = 3                           # twice from b * b, once from + b
dc_da = (2 * 9 + 1) * (2 * 3)       # dc/db = 2b + 1 = 19, db/da = 2a = 6
### END SOLUTION

# %% tags=["check"]
check.b_messages(count, dc_da)

# %% [markdown]
# **3. Backward by hand, one node at a time.** For $z = w x$, $y = \tanh(z)$ and
# $L = (y - 1)^2$ at $x = 0.5$, $w = -1.5$, compute the gradients the way the engine does,
# from the output back: first $\partial L / \partial y$, then $\partial L / \partial z$, then
# $\partial L / \partial w$. If one is wrong, the check shows the step of the chain rule where
# your numbers part from autograd's.

# %% tags=["solution"]
grads = {"y": ..., "z": ..., "w": ...}  # your answers
### BEGIN SOLUTION
y = math.tanh(-1.5 * 0.5)
grads = {"y": 2 * (y - 1)}
grads["z"] = grads["y"] * (1 - y ** 2)
grads["w"] = grads["z"] * 0.5
### END SOLUTION

# %% tags=["check"]
check.chain_by_hand(grads)

# %% [markdown]
# **4.** `Value` knows only `+` and `*`. Why does `backward_eager` happen to give the right
# answer for $g(x, y) = x y + x x$ (written `x * y + x * x`)?
#
# <details><summary>Solution</summary>
#
# In that graph every intermediate result is used only once; only the leaf `x` is used several
# times, and a leaf forwards nothing, it only accumulates. Order matters only when an
# *intermediate* node has several users.
# </details>
