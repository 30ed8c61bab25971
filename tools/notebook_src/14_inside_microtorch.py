# %% [markdown]
# # 14. Inside microtorch: the engine in one afternoon
#
# Every notebook so far used microtorch from the outside. This one opens it. The whole of
# reverse-mode autograd is in five pieces of code, each a screen or less, and you can read
# them all in an afternoon:
#
# 1. `Tensor`, a numpy array with a few fields beside it;
# 2. one op, `Mul`, a class with `forward` and `backward` side by side;
# 3. `Function.apply`, which runs an op and records a node of the graph, in five lettered steps;
# 4. the engine loop, which walks the graph backwards;
# 5. `AccumulateGrad`, the node that writes `.grad` on a leaf.
#
# The code shown here is not a copy: each cell asks Python for the source that is running
# (`inspect.getsource`), so what you read is what computes your gradients. A map of the
# files and their layers is in `docs/ARCHITECTURE.md`.
#
# **You will learn**
# - what a Tensor stores for autograd, and what a node stores;
# - how `y = a * b` becomes a node with edges to the nodes of `a` and `b`;
# - why backward needs no recursion: dependency counts and a ready queue;
# - where `.grad` is written, and why it is added to rather than overwritten.

# %%
import inspect

import numpy as np

import microtorch as mt
from microtorch.autograd import engine, function, node
from microtorch.ops import elementwise


def show(obj):
    """Print the source of a function or class that microtorch is running right now."""
    print(inspect.getsource(obj))

# %% [markdown]
# ## 1. Tensor
#
# A Tensor wraps a numpy array (`_data`) and keeps four fields for autograd: whether it
# `requires_grad`, the node that made it (`grad_fn`), which output of that node it is
# (`_output_nr`), and a version counter that every in-place change bumps. `Tensor._make` is
# how the ops build their results: no copy, no checks.

# %%
show(mt.Tensor._make)

# %%
a = mt.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = mt.tensor([4.0, 5.0, 6.0], requires_grad=True)
y = a * b
print("data:", y._data, " grad_fn:", y.grad_fn, " output number:", y._output_nr, " version:", y._version)

# %% [markdown]
# `a` is a *leaf*: nobody computed it, so its `grad_fn` is `None`. `y` was computed, and its
# `grad_fn` is the node that will send gradients back to `a` and `b`.

# %% [markdown]
# ## 2. One op: `Mul`
#
# Every differentiable operation is a `Function` subclass with two static methods.
# `forward` computes with numpy on the arrays behind the tensors; `backward` receives the
# gradient of the output and returns one gradient per input, written with Tensor operations
# (so that a backward can itself be differentiated). `ctx` is the notebook in which forward
# leaves what backward will need.

# %%
show(elementwise.Mul)

# %% [markdown]
# Two details are worth a second look. `ctx.needs_input_grad` lets forward save only what
# a gradient will need: $\partial(ab)/\partial a = b$, so `b` is kept only if `a` needs a
# gradient. And the gradients are not reshaped here: if `a` was broadcast, the engine sums
# the gradient back to `a`'s shape in one place for every op.
#
# Two lines are there for speed only. Two 0-d arrays are multiplied as numpy scalars
# (`a[()]`): numpy is about ten times faster on those. And `_times_conj(grad, b)` is
# `grad * b.conj()`; when nothing will differentiate this backward (a plain `.backward()`),
# it multiplies the arrays directly instead of recording a node nobody would use.
#
# The node remembers what was saved under torch's names:

# %%
print(y.grad_fn._saved_self is a, y.grad_fn._saved_other is b)

# %% [markdown]
# ## 3. `Function.apply`, step by step
#
# `Mul.apply(a, b)` (which is what `a * b` calls) runs these steps. Read the docstring first:
# it is the whole story; the body calls one short function per step.

# %%
show(function.run)

# %% [markdown]
# Step (c), linking the edges, is where the graph is made. Each tensor input contributes one edge
# `(node, output_nr)`: the node its gradient must flow into. A leaf that requires grad has no
# `grad_fn`, so it gets an `AccumulateGrad` node of its own. An argument that is not a tensor (a
# dim, a shape) gets no edge, as in torch, unless the op's `_edges` says torch takes a tensor
# there (the number in `x * 2`); `_keep_edges` drops the others.

# %%
show(function._link_edges)

# %%
for next_node, output_nr in y.grad_fn.next_functions:
    print(next_node.name(), "-> the leaf", next_node.variable)

# %% [markdown]
# ## 4. The engine loop
#
# Backward must call a node only after *every* gradient for it has arrived (a tensor used
# twice receives two contributions). The engine first counts, for each node, how many edges
# lead into it. Then it keeps a queue of nodes whose count has dropped to zero, runs one,
# adds its outputs into the buffers of the nodes it points to, and decrements their counts.
# No recursion, so a graph 100,000 nodes deep is fine.

# %%
show(engine.run_backward)

# %% [markdown]
# The counting is a plain walk over `next_functions`:

# %%
show(engine._count_dependencies)

# %% [markdown]
# ## 5. `AccumulateGrad`
#
# The last node on every path is a leaf's `AccumulateGrad`. It is tiny: it only knows its
# leaf. The engine gives it the gradient, and `accumulate_into` adds it to `.grad`. *Adds*:
# calling backward twice without zeroing accumulates, which is why training loops call
# `zero_grad()`.

# %%
show(node.AccumulateGrad)
show(engine.accumulate_into)

# %%
(y.sum()).backward()
print(a.grad, b.grad)   # d(sum(a*b))/da = b, d/db = a

# %% [markdown]
# ## Exercises
#
# Each exercise has an answer cell (write yours in place of `...`) and a cell that checks it
# with a plain `assert` against a value worked out by hand.

# %% [markdown]
# **1. Dependency counts.** For `c = x * x` followed by `d = c + c` (with `x` a leaf), how
# many edges lead into the `AccumulateGrad` node of `x`, and how many into `c`'s node
# (`MulBackward0`)? Answer as a dict `{"x": ..., "c": ...}`. Then let the engine count.

# %% tags=["solution"]
answer_1 = ...  # your answer: {"x": number, "c": number}
### BEGIN SOLUTION
answer_1 = {"x": 2, "c": 2}      # x is used twice by Mul, c twice by Add
### END SOLUTION

# %%
x = mt.tensor(3.0, requires_grad=True)
c = x * x
d = c + c
counts = engine._count_dependencies(engine.GraphRoot([d], [mt.tensor(1.0)]))
acc_x = c.grad_fn.next_functions[0][0]
assert answer_1 == {"x": counts[acc_x], "c": counts[c.grad_fn]}, "count the edges that point into each node"
print("correct:", answer_1)

# %% [markdown]
# **2. What a node saves.** `tanh` saves its *output*, not its input, because
# $\tanh'(u) = 1 - \tanh(u)^2$. For `t = tanh(u)` at $u = 0.5$, compute by hand (with `np.tanh`)
# the value `t.grad_fn._saved_result` holds and the gradient `u.grad` after `t.backward()`.

# %% tags=["solution"]
saved_2, grad_2 = ..., ...  # your answers: two numbers
### BEGIN SOLUTION
saved_2 = np.tanh(0.5)
grad_2 = 1 - np.tanh(0.5) ** 2
### END SOLUTION

# %%
u = mt.tensor(0.5, dtype=mt.float64, requires_grad=True)
t = u.tanh()
assert abs(t.grad_fn._saved_result.item() - saved_2) < 1e-12, "the saved tensor is tanh(u), the output"
t.backward()
assert abs(u.grad.item() - grad_2) < 1e-12, "d tanh(u)/du = 1 - tanh(u)^2"
print("correct:", saved_2, grad_2)

# %% [markdown]
# **3. Accumulation.** `w` is a leaf with value 2. We compute `(w * w).backward()` three
# times without zeroing the gradient. What is `w.grad` then?

# %% tags=["solution"]
answer_3 = ...  # your answer: a number
### BEGIN SOLUTION
answer_3 = 3 * (2 * 2.0)     # each backward adds d(w^2)/dw = 2w = 4
### END SOLUTION

# %%
w = mt.tensor(2.0, requires_grad=True)
for _ in range(3):
    (w * w).backward()
assert w.grad.item() == answer_3, "AccumulateGrad adds into .grad; it never overwrites it"
print("correct:", answer_3)

# %% [markdown]
# **4. Saved tensors and versions.** Saving `x` for backward records its version. Changing
# `x` in place afterwards makes backward refuse (it would compute with the wrong value). At
# which version is `x` after two in-place operations, and which version did `Mul` save?
# Answer `(now, saved)`.

# %% tags=["solution"]
answer_4 = ...  # your answer: (number, number)
### BEGIN SOLUTION
answer_4 = (2, 0)
### END SOLUTION

# %%
leaf = mt.tensor([1.0, 2.0], requires_grad=True)
x = leaf * 1
y = x * x
with mt.no_grad():
    x.add_(1)
    x.mul_(2)
(value, saved_version, now_version), _ = y.grad_fn.saved_versions()
assert answer_4 == (now_version, saved_version), "every in-place op adds one to the version counter"
try:
    y.sum().backward()
except RuntimeError as e:
    print("backward refused, as it should:", str(e)[:120], "...")

# %% [markdown]
# ## Where to read next
#
# - `microtorch/autograd/saved.py`: how a saved tensor checks its version, and pack/unpack hooks;
# - `microtorch/autograd/views.py` and `microtorch/ops/inplace.py`: views, and how an in-place
#   op rewrites history (torch's `CopySlices`);
# - `microtorch/autograd/engine_hooks.py`: the order in which hooks run around a node;
# - `microtorch/autograd/gradcheck/`: how gradients are checked against finite differences.
