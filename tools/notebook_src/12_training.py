# %% [markdown]
# # 12. Training a network
#
# Everything so far was about computing one gradient. Training repeats it a few hundred times:
# compute a loss on the data, backpropagate, nudge every parameter against its gradient, and
# start again. This notebook trains a small multilayer perceptron to separate two interleaved
# half-moons, watches the loss fall live, draws the decision boundary it learned, and compares
# two optimizers.
#
# **You will learn**
# - the four lines of a training step, and what each one is for;
# - what `optimizer.zero_grad()` prevents;
# - how SGD and Adam differ, on the same model and the same data.
#
# (This is the longest notebook to run: about half a minute.)

# %%
import time

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import display

import microtorch as mt
from microtorch import nn, optim

# %% [markdown]
# ## The data: two moons
#
# Two noisy half circles, one upside down and shifted into the other. No straight line
# separates them, so a linear model cannot do it; a network with a hidden layer can.

# %%
def two_moons(n, noise=0.12, seed=0):
    rng = np.random.default_rng(seed)
    half = n // 2
    t = rng.uniform(0, np.pi, n)
    points = np.empty((n, 2))
    points[:half] = np.c_[np.cos(t[:half]), np.sin(t[:half])]                # upper moon
    points[half:] = np.c_[1 - np.cos(t[half:]), 0.5 - np.sin(t[half:])]     # lower moon
    points += rng.normal(0.0, noise, points.shape)
    labels = np.r_[np.zeros(half), np.ones(n - half)].astype(np.int64)
    return points, labels


points, labels = two_moons(200)
X = mt.tensor(points, dtype=mt.float32)
y = mt.tensor(labels)

fig, ax = plt.subplots(figsize=(5, 3.5))
ax.scatter(points[:, 0], points[:, 1], c=labels, cmap="coolwarm", s=14, edgecolors="k", linewidths=0.3)
ax.set_title("two moons: 200 points, 2 classes")
ax.set_aspect("equal")
plt.show()

# %% [markdown]
# ## The model
#
# Two inputs (the coordinates), two hidden layers of 16 units with `tanh`, and two outputs:
# one score (a *logit*) per class. `nn.CrossEntropyLoss` turns the scores into probabilities
# with a softmax and measures how much probability the right class got.

# %%
def make_model(seed=0):
    mt.manual_seed(seed)                # same initial weights every time
    return nn.Sequential(
        nn.Linear(2, 16), nn.Tanh(),
        nn.Linear(16, 16), nn.Tanh(),
        nn.Linear(16, 2),
    )


model = make_model()
print(model)
print("parameters:", sum(p.numel() for p in model.parameters()))

# %% [markdown]
# ## One training step, line by line
#
# ```python
# optimizer.zero_grad()        # 1. forget the previous step's gradients (they accumulate!)
# loss = loss_fn(model(X), y)  # 2. forward: predictions and how wrong they are
# loss.backward()              # 3. backward: d loss / d parameter, into every p.grad
# optimizer.step()             # 4. update every parameter from its .grad
# ```
#
# Step 1 matters because `backward` *adds* into `.grad` (notebook 4). Forget it, and every step
# uses the sum of all gradients so far.
#
# Below, Adam trains the model for 300 steps while a plot of the loss updates every 30 steps.

# %%
def accuracy(model, X, y):
    with mt.no_grad():
        return (model(X).argmax(dim=1) == y).float().mean().item()


def train(model, optimizer, steps=300, live=None, every=30):
    loss_fn = nn.CrossEntropyLoss()
    history = []
    for step in range(steps):
        optimizer.zero_grad()
        loss = loss_fn(model(X), y)
        loss.backward()
        optimizer.step()
        history.append(loss.item())
        if live is not None and (step % every == 0 or step == steps - 1):
            live(history)
    return history


fig, ax = plt.subplots(figsize=(6, 3))
handle = display(fig, display_id=True)


def live_plot(history):
    ax.clear()
    ax.plot(history, color="tab:orange")
    ax.set(xlabel="step", ylabel="cross-entropy loss", yscale="log",
           title=f"Adam, step {len(history)}: loss {history[-1]:.4f}")
    handle.update(fig)


model = make_model()
start = time.perf_counter()
adam_history = train(model, optim.Adam(model.parameters(), lr=0.01), live=live_plot)
plt.close(fig)
print(f"300 steps in {time.perf_counter() - start:.1f} s; training accuracy {accuracy(model, X, y):.1%}")

# %% [markdown]
# ## What did it learn?
#
# Evaluate the trained model on a grid of points covering the plane and colour each point by
# the probability of class 1. The boundary is where that probability crosses one half.

# %%
def plot_boundary(model, ax, title):
    xs, ys = np.meshgrid(np.linspace(-1.6, 2.6, 120), np.linspace(-1.1, 1.6, 90))
    grid = mt.tensor(np.c_[xs.ravel(), ys.ravel()], dtype=mt.float32)
    with mt.no_grad():                                  # no graph needed to just look
        prob = model(grid).softmax(dim=1)[:, 1].numpy().reshape(xs.shape)
    ax.contourf(xs, ys, prob, levels=20, cmap="coolwarm", alpha=0.6)
    ax.contour(xs, ys, prob, levels=[0.5], colors="k", linewidths=1.2)
    ax.scatter(points[:, 0], points[:, 1], c=labels, cmap="coolwarm", s=10, edgecolors="k", linewidths=0.3)
    ax.set_title(title)
    ax.set_aspect("equal")


fig, ax = plt.subplots(figsize=(5.5, 3.8))
plot_boundary(model, ax, f"Adam: accuracy {accuracy(model, X, y):.0%}")
plt.show()

# %% [markdown]
# ## SGD against Adam
#
# **SGD** moves each parameter by `lr * grad`: simple, but one learning rate for every
# parameter, whatever the scale of its gradient. **Adam** keeps, per parameter, a running
# mean of the gradient and of its square, and divides one by the square root of the other:
# every parameter takes steps of roughly the size `lr`, whether its gradient is tiny or huge.
#
# Same model, same initial weights, same data, 300 steps each:

# %%
runs = {}
for name, make_opt in [("SGD lr=0.1", lambda p: optim.SGD(p, lr=0.1)),
                       ("SGD lr=0.1, momentum=0.9", lambda p: optim.SGD(p, lr=0.1, momentum=0.9)),
                       ("Adam lr=0.01", lambda p: optim.Adam(p, lr=0.01))]:
    m = make_model()
    runs[name] = (m, train(m, make_opt(m.parameters())))

with plt.rc_context({"font.size": 13}):        # legible when projected
    fig, axes = plt.subplots(2, 2, figsize=(11, 8.5))
    axes = axes.ravel()
    for name, (m, history) in runs.items():
        axes[0].plot(history, label=name, linewidth=2)
    axes[0].set(xlabel="step", ylabel="loss", yscale="log", title="training loss")
    axes[0].legend(loc="lower left")
    for ax, (name, (m, history)) in zip(axes[1:], runs.items()):
        plot_boundary(m, ax, f"{name}: accuracy {accuracy(m, X, y):.0%}")
    plt.tight_layout()
    plt.show()

for name, (m, history) in runs.items():
    firsts = [next((i for i, v in enumerate(history) if v < t), None) for t in (0.3, 0.1, 0.05)]
    print(f"{name:26s} first step below 0.3, 0.1, 0.05: {firsts};  final loss {history[-1]:.4f}")

# %% [markdown]
# Plain SGD creeps: after 300 steps it has not yet bent its boundary around the tips of the
# moons (`None`: it never got below that loss). Momentum (a running average of past gradients)
# speeds it up a lot: here SGD with momentum keeps pace with Adam, reaching the loss 0.3 at the
# same step and 0.1 and 0.05 only a few steps after it, while Adam ends lower. Neither is "the best optimizer": this is one small
# problem, and the ranking changes from problem to problem and with the learning rates. The point is that the optimizer is a choice, separate from
# the gradient: all three used exactly the same `loss.backward()`.

# %% [markdown]
# ## The graph of one step
#
# Everything above came from one kind of graph, rebuilt at every step. Here it is for a batch of
# four points, with one box per module and parameters named by their place in the model:

# %%
from microtorch import viz

model = make_model()
loss = nn.CrossEntropyLoss()(model(X[:4]), y[:4])
viz.draw(loss, module=model, show_values=False)

# %% [markdown]
# The same model folded to its modules, with this batch's values: `viz.explore` runs the forward
# and the backward, and each box opens on a click (a node shows its tensor).

# %%
viz.explore(make_model(), X[:4], loss_fn=lambda out: nn.CrossEntropyLoss()(out, y[:4]))

# %% [markdown]
# ## Where a step's time goes
#
# `torch.profiler` (here `microtorch.profiler`, the same names) times every op of a few training
# steps. `record_function` marks the three phases; each forward op is listed under torch's name
# (`aten::linear` holds a linear layer's `aten::t` and `aten::addmm`, its product plus bias), and
# each node of the backward as
# `autograd::engine::evaluate_function: ...`, with the ops its formula ran inside it. The times
# are microtorch's own, but the rows are the ones torch prints for the same code.

# %%
from microtorch.profiler import profile, record_function

model = make_model()
optimizer = optim.Adam(model.parameters(), lr=0.01)
with profile() as prof:
    for _ in range(5):
        with record_function("forward"):
            loss = nn.functional.cross_entropy(model(X), y)
        with record_function("backward"):
            optimizer.zero_grad()
            loss.backward()
        with record_function("step"):
            optimizer.step()
print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=12))

# %% [markdown]
# ## Exercises
#
# Write your answer in the cell under each question, then run the cell after it: `check`
# compares your answer with what autograd computes and, when it is wrong, says why (with a
# picture when one helps). It never shows the solution; `check.hint("name")` gives a hint.

# %%
from microtorch.exercises import check

# %% [markdown]
# **1. The gradient of the loss, by formula.** For `nn.functional.cross_entropy(logits, y)`
# (the mean over a batch of $N$ rows), write its gradient with respect to `logits` as a
# formula, with `softmax` and a one-hot matrix of the labels.

# %% tags=["solution"]
def ce_grad(logits, y):
    ### BEGIN SOLUTION
    onehot = mt.zeros(*logits.shape, dtype=logits.dtype)
    onehot[mt.arange(len(y)), y] = 1.0
    return (logits.softmax(dim=1) - onehot) / len(y)
    ### END SOLUTION

# %% tags=["check"]
check.ce_grad(ce_grad)

# %% [markdown]
# **2. An optimizer step by hand.** Write `sgd_step(params, lr)`: what `optim.SGD(params,
# lr).step()` does, for a list of parameters whose `.grad` is filled. The parameters must stay
# the same leaf tensors (update them in place).

# %% tags=["solution"]
def sgd_step(params, lr):
    ### BEGIN SOLUTION
    with mt.no_grad():
        for p in params:
            p -= lr * p.grad
    ### END SOLUTION

# %% tags=["check"]
check.sgd_step(sgd_step)

# %% [markdown]
# **3. Momentum by hand.** Write a class `MomentumSGD(params, lr, momentum)` with `step()` and
# `zero_grad()` that does what `optim.SGD(params, lr=lr, momentum=momentum)` does: keep one
# buffer $b$ per parameter, $b \leftarrow \mu b + g$ (just $g$ on the first step), then
# $p \leftarrow p - \text{lr}\, b$. The check trains a small network for 5 steps with yours and
# with `optim.SGD` and compares the parameters.

# %% tags=["solution"]
class MomentumSGD:
    def __init__(self, params, lr, momentum):
        ### BEGIN SOLUTION
        self.params, self.lr, self.momentum = list(params), lr, momentum
        self.buffers = [None] * len(self.params)
        ### END SOLUTION

    def zero_grad(self):
        ### BEGIN SOLUTION
        for p in self.params:
            p.grad = None
        ### END SOLUTION

    def step(self):
        ### BEGIN SOLUTION
        with mt.no_grad():
            for i, p in enumerate(self.params):
                b = self.buffers[i]
                b = p.grad.clone() if b is None else self.momentum * b + p.grad
                self.buffers[i] = b
                p -= self.lr * b
        ### END SOLUTION

# %% tags=["check"]
check.momentum_sgd(MomentumSGD)

# %% [markdown]
# **4.** Remove `optimizer.zero_grad()` from `train` (make a copy called `train_no_zero`) and
# train with Adam. What happens to the loss, and why?

# %%
# your turn

# %% [markdown]
# <details><summary>Solution</summary>
#
# Each `backward` adds to the gradients of all previous steps, so the optimizer follows the
# *sum* of every gradient seen so far, a direction that mostly reflects where the parameters
# were long ago. With Adam the loss first falls, then climbs back up and oscillates (around 1
# to 2 here, worse than at the start). With plain SGD the running sum acts like a momentum
# that never forgets; on this problem it happens to converge, but it is not the algorithm you
# meant to run, and with a larger learning rate it overshoots.
#
# ```python
# def train_no_zero(model, optimizer, steps=300):
#     loss_fn, history = nn.CrossEntropyLoss(), []
#     for _ in range(steps):
#         loss = loss_fn(model(X), y)
#         loss.backward()
#         optimizer.step()
#         history.append(loss.item())
#     return history
#
# m = make_model()
# h = train_no_zero(m, optim.Adam(m.parameters(), lr=0.01))
# plt.semilogy(adam_history, label="with zero_grad"); plt.semilogy(h, label="without")
# plt.legend(); plt.show()
# ```
# </details>
#
# **5.** Try a network with one hidden layer of only 2 units. Can it separate the moons? What
# about 4 units?

# %%
# your turn

# %% [markdown]
# <details><summary>Solution</summary>
#
# ```python
# for width in (2, 4):
#     mt.manual_seed(0)
#     m = nn.Sequential(nn.Linear(2, width), nn.Tanh(), nn.Linear(width, 2))
#     train(m, optim.Adam(m.parameters(), lr=0.02), steps=600)
#     fig, ax = plt.subplots(figsize=(4, 3)); plot_boundary(m, ax, f"{width} hidden units"); plt.show()
# ```
#
# With 2 units the boundary can bend only a little: typically around 85-90% accuracy. With 4
# it can follow the moons much more closely. Width buys flexibility.
# </details>
