# %% [markdown]
# # 6. Hooks
#
# A hook is a function you hand to autograd to be called at a particular moment of backward,
# with the gradient that is passing by. It can look at the gradient (to log it, plot it, check
# it for NaNs) or replace it (to clip it, scale it, zero part of it). Hooks are how you reach
# into backward without rewriting any op.
#
# **You will learn**
# - tensor hooks: `t.register_hook(fn)`, and removing them again;
# - node hooks: before (`register_prehook`) and after (`register_hook`) a `grad_fn` runs;
# - post-accumulate hooks, which run once a leaf's `.grad` is written;
# - module hooks on `nn.Module`s, forward and backward;
# - in which order all of these fire: the hook timeline.

# %%
import microtorch as mt
from microtorch import nn, viz

mt.manual_seed(0);

# %% [markdown]
# ## Tensor hooks
#
# `v.register_hook(fn)` calls `fn(grad)` whenever the gradient with respect to `v` has been
# computed. If `fn` returns a tensor, that tensor is used instead of `grad`, for `v.grad` and
# for everything further down the graph. The classic example doubles the gradient:

# %%
v = mt.tensor([0.0, 0.0, 0.0], requires_grad=True)
h = v.register_hook(lambda grad: grad * 2)  # double the gradient
v.backward(mt.tensor([1.0, 1.0, 1.0]))
print(v.grad)

# %% [markdown]
# `register_hook` returns a *handle*. `h.remove()` unregisters the hook; the next backward is
# unaffected:

# %%
h.remove()
v.grad = None
v.backward(mt.tensor([1.0, 1.0, 1.0]))
print(v.grad)

# %% [markdown]
# A hook should not modify `grad` in place: the same tensor may be used elsewhere. Return a new
# tensor instead. Returning `None` means "no change", which is what an observing hook does:

# %%
seen = {}

def remember(grad):                          # returns None: observes only
    seen["d loss / d h"] = grad

x = mt.tensor([1.0, -2.0, 3.0], requires_grad=True)
h = x * x                                    # an intermediate
h.register_hook(remember)
loss = (h * mt.tensor([1.0, 10.0, 100.0])).sum()
loss.backward()
print(seen)
print("x.grad:", x.grad, " = 2x * [1, 10, 100]")

# %% [markdown]
# A hook on an intermediate tensor is also the cheap way to look at its gradient without
# `retain_grad()`.
#
# ## Node hooks
#
# The node that computes a backward (`h.grad_fn`) can have hooks too. A **pre-hook** gets the
# gradients arriving at the node (one per output of the op) and may replace them; a **hook**
# runs after the node and gets the gradients it computed for its inputs *and* the ones it
# received, and may replace the computed ones.

# %%
x = mt.tensor([1.0, -2.0, 3.0], requires_grad=True)
y = x.exp()

def pre(grad_outputs):
    print("pre-hook  : arriving", grad_outputs)

def post(grad_inputs, grad_outputs):
    print("hook      : leaving ", grad_inputs, "\n            from     ", grad_outputs)

y.grad_fn.register_prehook(pre)
y.grad_fn.register_hook(post)
y.sum().backward()

# %% [markdown]
# ## Post-accumulate hooks
#
# `p.register_post_accumulate_grad_hook(fn)` calls `fn(p)` on a **leaf** after its `.grad` has
# been updated. This is the moment an optimizer could update `p` right away, while backward is
# still running elsewhere in the graph, and free the gradient early: a trick large models use to
# save memory.

# %%
w = mt.tensor([1.0, 2.0], requires_grad=True)

def sgd_now(p):
    with mt.no_grad():
        p -= 0.1 * p.grad
    print("updated in backward:", p.detach(), "from grad", p.grad)
    p.grad = None

w.register_post_accumulate_grad_hook(sgd_now)
(w ** 2).sum().backward()
print("after backward: w =", w.detach(), " w.grad =", w.grad)

# %% [markdown]
# ## Module hooks
#
# `nn.Module` has hooks of its own, at module granularity:
#
# - `register_forward_pre_hook(fn)`: `fn(module, inputs)` before `forward`;
# - `register_forward_hook(fn)`: `fn(module, inputs, output)` after `forward`;
# - `register_full_backward_hook(fn)`: `fn(module, grad_input, grad_output)` once the gradients
#   with respect to the module's inputs are known.
#
# A common use is recording activations and their gradients for inspection:

# %%
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
activations, gradients = {}, {}

def save_activation(module, inputs, output):
    activations[type(module).__name__] = output.detach()

def save_gradient(module, grad_input, grad_output):
    gradients[type(module).__name__] = grad_output[0]

model[1].register_forward_hook(save_activation)
model[1].register_full_backward_hook(save_gradient)

with viz.record() as tape:
    out = model(mt.randn(2, 3)).sum()
    out.backward()
print("tanh output:       ", activations["Tanh"])
print("d out / d tanh out:", gradients["Tanh"])

# %% [markdown]
# The hook timeline (explained in the next section) shows both module hooks: the forward hook
# while the model runs, the backward hook once backward reaches the `Tanh`. With `module=model`
# each card names its module as in `model`: `1 · Tanh` is `model[1]`, a `Tanh`. Hover over a card
# to find the module's box in the graph.

# %%
viz.hook_timeline(tape, module=model)

# %% [markdown]
# ## In which order do they fire? The hook timeline
#
# Record a backward with every kind of hook, and `viz.hook_timeline` lays the firings out in
# swimlanes, one lane per kind of hook, left to right in firing order. Each card shows the
# gradient before and after the hook; cards where the hook changed it are highlighted. The graph
# beside it marks the tensors and nodes that have hooks; hover over a card to find its node.

# %%
x = mt.tensor([1.0, 2.0], requires_grad=True)
w = mt.tensor([0.5, -1.0], requires_grad=True)
with viz.record() as tape:
    h = x * w
    h.register_hook(lambda g: g * 2)                          # tensor hook: doubles
    h.retain_grad()
    y = h.sin()
    y.grad_fn.register_prehook(lambda gs: None)               # node pre-hook: only looks
    w.register_post_accumulate_grad_hook(lambda p: None)      # after w.grad is written
    y.sum().backward()
viz.hook_timeline(tape)

# %% [markdown]
# Read the order from the timeline. Backward starts at `y`: the pre-hook of `SinBackward0` runs
# first, before that node. Then the gradient reaches `h`: its tensor hook doubles it, and
# `retain_grad` stores the doubled value in `h.grad`. Finally the leaves: `w`'s accumulator
# writes `w.grad`, then the post-accumulate hook runs.

# %%
print("h.grad (after the doubling hook):", h.grad)
print("w.grad:", w.grad, "  = 2 cos(x w) x")

# %% [markdown]
# ## Exercises
#
# Write your answer in the cell under each question, then run the cell after it: `check`
# compares your answer with what autograd computes and, when it is wrong, says why (with a
# picture when one helps). It never shows the solution; `check.hint("name")` gives a hint.

# %%
from microtorch.exercises import check

# %% [markdown]
# **1. A clipping hook.** A hook that clips the gradient of an intermediate tensor to
# `[-1, 1]` is `lambda g: g.clamp(-1, 1)`. Register it on `h = x * 10` with
# `x = mt.tensor([1.0, 2.0], requires_grad=True)` and `loss = (h * 5).sum()`. First predict
# `x.grad` with and without the hook (one number per entry), then check. (Why would
# `loss = h.sum()` show nothing?)

# %% tags=["solution"]
with_hook, without_hook = ..., ...  # your predictions
### BEGIN SOLUTION
without_hook = 5 * 10       # the gradient at h is 5, times the 10 of h = x * 10
with_hook = 1 * 10          # the hook clips 5 to 1 at h; the factor 10 still follows
### END SOLUTION

# %% tags=["check"]
check.clip_hook(with_hook, without_hook)

# %% [markdown]
# <details><summary>Why</summary>
#
# The gradient arriving at `h` is 5 per entry; the hook clips it to 1, and `x.grad` is
# $1 \cdot 10 = 10$ instead of $5 \cdot 10 = 50$ without the hook. With `loss = h.sum()` the
# gradient at `h` would be 1, already inside `[-1, 1]`, and the clip would change nothing.
# </details>
#
# **2. Two hooks on one tensor.** `v = mt.tensor([0.0], requires_grad=True)`, then
# `v.register_hook(lambda g: g + 1)`, then `v.register_hook(lambda g: g * 2)`, then
# `v.backward(mt.tensor([1.0]))`. Predict `v.grad`. Does the order of registration matter?

# %% tags=["solution"]
prediction = ...  # your prediction: a number
### BEGIN SOLUTION
prediction = (1 + 1) * 2    # hooks run in registration order, each on the previous result
### END SOLUTION

# %% tags=["check"]
check.hook_order(prediction)

# %% [markdown]
# **3. An optimizer inside backward.** A post-accumulate-grad hook runs right after a
# parameter's `.grad` is written. Write `make_hook(lr)`, which returns such a hook: it updates
# the parameter in place with one SGD step, `p -= lr * p.grad`, and then clears `p.grad`
# (so the gradient's memory is freed during backward, as large models do). The check
# registers your hook on the parameters of a small layer and runs one backward.

# %% tags=["solution"]
def make_hook(lr):
    ### BEGIN SOLUTION
    def hook(p):
        with mt.no_grad():
            p -= lr * p.grad
        p.grad = None
    return hook
    ### END SOLUTION

# %% tags=["check"]
check.sgd_in_backward(make_hook)
