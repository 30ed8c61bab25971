# %% [markdown]
# # 10. In-place operations and version counters
#
# `x.add_(1)` changes `x` where it lives instead of making a new tensor. It saves memory, and
# optimizers rely on it to update weights. It also collides with autograd: backward needs
# values from the forward pass, and an in-place operation may have overwritten them.
# microtorch (like PyTorch) refuses to compute a gradient from a value that has changed; this
# notebook shows how it notices, what it allows, and the one trick that defeats the check.
#
# **You will learn**
# - which values an operation saves for backward, and why that decides whether an in-place
#   change is harmless;
# - what a tensor's *version counter* is and how backward uses it;
# - why a leaf that requires grad cannot be modified in place, and how optimizers do it anyway;
# - why `.data` is dangerous.

# %%
import microtorch as mt

# %% [markdown]
# ## Every tensor counts its in-place changes
#
# `t._version` starts at 0 and goes up by one for every in-place operation on `t` (methods
# ending in `_`, indexed assignment, augmented assignment like `+=` on a tensor).

# %%
t = mt.zeros(3)
print(t._version)
t.add_(1)
t[0] = 5.0
t *= 2
print(t, t._version)

# %% [markdown]
# ## What an operation saves decides what may change
#
# The backward of `exp` needs `exp(x)` itself ($\frac{d}{dx} e^x = e^x$), so `ExpBackward0` keeps
# its output. The backward of `+` needs nothing but the incoming gradient. When a node saves a
# tensor it also notes the tensor's version; when backward unpacks it, the versions must match.

# %%
w = mt.tensor([0.0, 1.0, 2.0], requires_grad=True)

h = w * 1           # a non-leaf copy of w, so that we may change it in place
z = h + 5           # + saves nothing
h.mul_(10)          # change h after it was used
z.sum().backward()
print("after h.mul_: the sum still differentiates fine, w.grad =", w.grad)

# %%
w.grad = None
y = w.exp()         # exp saves its output y (at version 0)
y.add_(1)           # y is now at version 1
try:
    y.sum().backward()
except RuntimeError as e:
    print("RuntimeError:", e)

# %% [markdown]
# Read the message: it names the tensor (`output 0 of Exp`), the version it has (1)
# and the version the node saved (0), and suggests the fix. Without this check, backward would
# have multiplied by $e^x + 1$ instead of $e^x$ and you would never know.
#
# Which values does each op save? A few common ones:
#
# | op | saves | in-place change to its input afterwards | ... to its output afterwards |
# |---|---|---|---|
# | `a + b`, `a - b` | nothing | fine | fine |
# | `a * b` | `a` if `b` requires grad, `b` if `a` does | error, if the other factor requires grad | fine |
# | `exp(x)`, `sigmoid(x)`, `tanh(x)` | the output | fine | error |
# | `relu(x)` | the output | fine | error |
# | `x ** 2`, `sin(x)`, `log(x)` | the input | error | fine |
#
# A product saves each factor only for the *other* factor's gradient: $\partial (ab) / \partial a
# = b$. So `h * data`, with a `data` that does not require grad, does not save `h` at all, and
# `h.add_(1)` afterwards is harmless; `h * h` saves `h` and fails.
#
# You can check any of them the same way:

# %%
def survives(make, change):
    """Build y = make(h) from a fresh h, apply change(h or y) in place, then backward."""
    w = mt.tensor([0.5, 1.0, 2.0], requires_grad=True)
    h = w * 1
    y = make(h)
    change(h, y)
    try:
        (y * 1).sum().backward()
        return "fine"
    except RuntimeError:
        return "error"


for name, make in [("h * h", lambda h: h * h), ("h.sin()", lambda h: h.sin()),
                   ("h.sigmoid()", lambda h: h.sigmoid()), ("h + 1", lambda h: h + 1)]:
    on_input = survives(make, lambda h, y: h.add_(1))
    on_output = survives(make, lambda h, y: y.add_(1))
    print(f"{name:12s} change input: {on_input:5s}  change output: {on_output}")

# %% [markdown]
# ## Leaves that require grad are protected
#
# A leaf with `requires_grad=True` is what you want gradients for. Changing it in place would
# change the value that the whole graph was computed from, so it is refused while autograd is
# recording:

# %%
w = mt.tensor([1.0, 2.0, 3.0], requires_grad=True)
try:
    w.mul_(2)
except RuntimeError as e:
    print("RuntimeError:", e)

# %% [markdown]
# The message gives the way out: an optimizer's update is not part of the model, so it runs
# under `no_grad`, where nothing is recorded. This is exactly what `optim.SGD.step()` does.

# %%
w = mt.tensor([1.0, 2.0, 3.0], requires_grad=True)
loss = (w ** 2).sum()
loss.backward()
with mt.no_grad():
    w -= 0.1 * w.grad          # in place: still the same leaf, same identity
print(w, "is_leaf:", w.is_leaf, "version:", w._version)
w.grad.zero_();                # gradients accumulate: clear them before the next backward

# %% [markdown]
# ## Tensors that share memory share a version counter
#
# `detach()` returns a tensor without history that shares the same storage. An in-place change
# through it is a change to the original, and the version counter is shared too, so the check
# still catches it:

# %%
w = mt.tensor([0.0, 1.0, 2.0], requires_grad=True)
y = w.exp()
y.detach().zero_()             # looks harmless, but it wipes y itself
print("y:", y, "version:", y._version)
try:
    y.sum().backward()
except RuntimeError as e:
    print("RuntimeError:", str(e)[:110], "...")

# %% [markdown]
# ## Views: in place through a window
#
# Indexing with slices returns a *view*: a window onto the same memory, not a copy. An in-place
# change through the view changes the tensor it looks into (its *base*), so they share the
# version counter as well. Autograd handles it by rewriting the base's history. Below, `tail` is
# a view of `a`, and after `tail.mul_(10)` the `grad_fn` of `a` becomes `CopySlices`: it applies
# the backward of the in-place op (here `mul_`, so a factor 10) to the part of the gradient that
# belongs to the slice, and passes the rest through unchanged. (`w`, the leaf that `a` was
# computed from, keeps no `grad_fn`.)

# %%
w = mt.tensor([1.0, 2.0, 3.0], requires_grad=True)
a = w * 1                       # the base of the view below
tail = a[1:]                    # a view of the last two entries
tail.mul_(10)                   # changes a as well
print("a:", a, " versions:", a._version, tail._version)
print("a.grad_fn:", a.grad_fn.name())
a.sum().backward()
print("w.grad:", w.grad, " (1 for the untouched entry, 10 for the scaled ones)")

# %% [markdown]
# ## Finding the culprit: anomaly mode
#
# The error names the node whose saved value changed, but not *where* in your code that node
# was created, which in a long model is the real question. Anomaly mode records a traceback for
# every node as it is created, and when backward fails it prints that traceback as a warning.
# Skip to its last lines: they point at `y = w.exp()`, the forward line whose node failed. It
# slows everything down: switch it on only to debug.

# %%
w = mt.tensor([0.0, 1.0, 2.0], requires_grad=True)
with mt.autograd.detect_anomaly():
    y = w.exp()
    y.add_(1)
    try:
        y.sum().backward()
    except RuntimeError as e:
        print("RuntimeError:", str(e)[:100], "...")

# %% [markdown]
# ## The one hole: `.data`
#
# `.data` also shares storage, but by design it does **not** share the version counter: it is
# the old escape hatch for changing values behind autograd's back. The check cannot see the
# change, and the gradient is silently wrong:

# %%
w = mt.tensor([0.0, 1.0, 2.0], requires_grad=True)
y = w.exp()
y.data.mul_(0)                  # autograd does not notice
y.sum().backward()
print("w.grad:", w.grad, " but d/dw sum(exp(w)) =", w.detach().exp())

# %% [markdown]
# Use `detach()` or `with mt.no_grad():` instead; reach for `.data` only if you know that no
# saved value depends on it.

# %% [markdown]
# ## Seeing saved tensors
#
# `viz.draw(..., show_saved=True)` lists in each node the tensors it saved, with the version
# they had when saved and the version they have now, under the name PyTorch gives them: the row
# `saved result` of `ExpBackward0` is the tensor `y.grad_fn._saved_result` reads. A stale one is
# flagged, before you even call backward:

# %%
from microtorch import viz

w = mt.tensor([0.0, 1.0, 2.0], requires_grad=True)
y = w.exp()
loss = (y * 2).sum()
y.add_(1)
viz.draw(loss, show_saved=True)

# %% [markdown]
# ## Exercises
#
# Write your answer in the cell under each question, then run the cell after it: `check`
# compares your answer with what autograd computes and, when it is wrong, says why (with a
# picture when one helps). It never shows the solution; `check.hint("name")` gives a hint.

# %%
from microtorch.exercises import check

# %% [markdown]
# **1. Fix the code.** The code below raises. Find the in-place operation that breaks it.

# %%
w = mt.tensor([0.5, -1.0, 2.0], requires_grad=True)
a = w.tanh()
b = a * 3
a += 1                         # <- the culprit?
loss = (a * b).sum()
try:
    loss.backward()
    print("no error; w.grad =", w.grad)
except RuntimeError as e:
    print("RuntimeError:", str(e)[:120], "...")

# %% [markdown]
# Now write `fixed_loss(w)`, which computes the loss of the same formula (with `a` changed as
# above) so that backward works and gives the right gradient.

# %% tags=["solution"]
def fixed_loss(w):
    ### BEGIN SOLUTION
    a = w.tanh()
    b = a * 3
    a = a + 1                  # out of place: a new tensor; the one tanh saved stays intact
    return (a * b).sum()
    ### END SOLUTION

# %% tags=["check"]
check.fixed_inplace(fixed_loss)

# %% [markdown]
# **2. Predict.** Without running: does `y = w.sin(); y.mul_(2); y.sum().backward()` work for a
# leaf `w` that requires grad? And `y = w.exp(); y.mul_(2); y.sum().backward()`? Answer
# `"works"` or `"error"`.

# %% tags=["solution"]
sin_answer, exp_answer = ..., ...  # "works" or "error"
### BEGIN SOLUTION
sin_answer = "works"     # sin saves its input w; mul_ changes its output
exp_answer = "error"     # exp saves its output, which mul_ changes
### END SOLUTION

# %% tags=["check"]
check.inplace_prediction(sin_answer, exp_answer)

# %% [markdown]
# <details><summary>Why</summary>
#
# `sin` saves its *input* `w`, and the in-place change is on its output: it works (and the
# `mul_` itself is recorded, so `w.grad` is `2 cos(w)`). `exp` saves its *output*, which
# `mul_` changes: backward raises.
# </details>
#
# **3. In place through a view.** Predict `w.grad` for
# `w = mt.tensor([1.0, 2.0, 3.0], requires_grad=True); a = w * 2; a[:2].mul_(3); a.sum().backward()`.

# %% tags=["solution"]
prediction = ...  # your prediction: a tensor (or a list) of 3 numbers
### BEGIN SOLUTION
prediction = [2 * 3, 2 * 3, 2]   # the first two entries went through * 2 and * 3, the last through * 2
### END SOLUTION

# %% tags=["check"]
check.view_grad(prediction)
