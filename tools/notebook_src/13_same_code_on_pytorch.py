# %% [markdown]
# # 13. Same code on PyTorch
#
# microtorch promises that what you learned here carries over to PyTorch unchanged. This
# notebook checks the promise: every cell below is ordinary PyTorch code, and it runs **twice**,
# once with `torch` bound to microtorch and once with `torch` bound to the real PyTorch. Then
# the results are compared.
#
# If PyTorch is not installed (on Binder, for instance: it is a large download), the cells run on
# microtorch only and say so. To install it on your own machine:
# `pip install torch --index-url https://download.pytorch.org/whl/cpu`.
#
# **You will learn**
# - that gradients, `grad_fn` names, leaf rules, hooks, errors, gradcheck, `torch.func` and a
#   training loop behave the same on both;
# - how to write code that runs on both (and where the visualizer fits: only on microtorch).

# %%
import contextlib
import io

import numpy as np
from IPython.core.magic import register_cell_magic

import microtorch

try:
    import torch as pytorch
except ImportError:
    pytorch = None

if pytorch is None:
    print("PyTorch is not installed: the cells below run on microtorch only, and the comparisons "
          "are skipped.\nInstall it with: pip install torch --index-url https://download.pytorch.org/whl/cpu")
else:
    print("comparing microtorch", microtorch.__version__, "with PyTorch", pytorch.__version__)

# %% [markdown]
# ## How the comparison works
#
# A cell that starts with `%%both name1 name2 ...` is executed twice, in two fresh namespaces
# where `torch` is microtorch and PyTorch respectively (and `np` is numpy). Afterwards each
# listed expression is evaluated in both namespaces and compared: tensors to about single
# precision, everything else exactly. The cell's own printout is shown once per library.
#
# Most inputs come from numpy or are written out. Where a cell draws from the library's own
# generator after `manual_seed`, both libraries give the same numbers (see "Seeded random numbers").

# %%
def _run(cell, library):
    namespace = {"torch": library, "np": np}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(cell, "<%%both cell>", "exec"), namespace)
    return namespace, out.getvalue()


def _as_comparable(value):
    if hasattr(value, "detach") and hasattr(value, "numpy"):
        return np.asarray(value.detach().numpy())
    if isinstance(value, (tuple, list)):
        return type(value)(_as_comparable(v) for v in value)
    if isinstance(value, dict):
        return {k: _as_comparable(v) for k, v in value.items()}
    return value


def _same(a, b, rtol=1e-4, atol=1e-6):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and np.allclose(a, b, rtol=rtol, atol=atol)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, float) or isinstance(b, float):
        return bool(np.isclose(a, b, rtol=rtol, atol=atol))
    return a == b


def _short(value):
    text = repr(value).replace("\n", " ")
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."


results = []          # every comparison made in this notebook: (expression, same?)


@register_cell_magic
def both(line, cell):
    names = line.split()
    ns_mt, printed_mt = _run(cell, microtorch)
    if printed_mt:
        print("── microtorch ──")
        print(printed_mt, end="")
    if pytorch is None:
        print("── PyTorch is not installed: ran on microtorch only, comparison skipped ──")
        for expr in names:
            print(f"{'':9s} {expr:22s} microtorch: {_short(_as_comparable(eval(expr, ns_mt)))}")
        return
    ns_pt, printed_pt = _run(cell, pytorch)
    if printed_pt:
        print("── PyTorch ──")
        print(printed_pt, end="")
    if names:
        print("── compared with PyTorch ──")
    for expr in names:
        a = _as_comparable(eval(expr, ns_mt))
        b = _as_comparable(eval(expr, ns_pt))
        same = _same(a, b)
        results.append((expr, same))
        print(f"{'same' if same else 'DIFFERENT':9s} {expr:22s} microtorch: {_short(a)}")
        if not same:
            print(f"{'':9s} {'':22s} PyTorch:    {_short(b)}")

# %% [markdown]
# ## The chain rule on scalars

# %%
# %%both x.grad f.item()
x = torch.tensor(1.5, requires_grad=True)
f = (x * x).sin()
f.backward()
print("f =", f.item(), " df/dx =", x.grad.item())

# %% [markdown]
# ## Leaves, `grad_fn`, `retain_grad`

# %%
# %%both names leaf y.grad
w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = w * torch.tensor([1.0, 10.0, 100.0])
y.retain_grad()
loss = y.sum()
loss.backward()
names = [loss.grad_fn.name(), y.grad_fn.name(), y.grad_fn.next_functions[0][0].name()]
leaf = [w.is_leaf, y.is_leaf, loss.is_leaf]
print(names, leaf)

# %% [markdown]
# ## The matrix examples: $a^\top X b$ and $A X$

# %%
# %%both X.grad X2.grad f F
a = torch.tensor([[1], [2], [3.], [4]])
X = torch.tensor([[1, 2, 3], [5, 6, 7], [8, 9, 10], [5, 4, 3.]], requires_grad=True)
b = torch.tensor([[2], [3], [4.]])
f = a.view(1, -1).mm(X).mm(b)
f.backward()

A = torch.tensor([[1, 2], [3, 4.]])
X2 = torch.tensor([[1, 2, 3], [4, 5., 6]], requires_grad=True)
F = A.mm(X2)
F.backward(torch.ones_like(F))

# %% [markdown]
# ## Broadcasting

# %%
# %%both W.grad bias.grad
X = torch.tensor(np.linspace(-1, 1, 15).reshape(5, 3), dtype=torch.float32)
W = torch.tensor(np.arange(6.0).reshape(3, 2) / 6, dtype=torch.float32, requires_grad=True)
bias = torch.zeros(2, requires_grad=True)
((X @ W + bias).tanh() ** 2).sum().backward()

# %% [markdown]
# ## Hooks and accumulation

# %%
# %%both v.grad order
v = torch.tensor([0.0, 0.0, 0.0], requires_grad=True)
order = []
h = v.register_hook(lambda grad: grad * 2)
v.register_hook(lambda grad: order.append("second hook sees " + str(grad.tolist())))
v.backward(torch.tensor([1.0, 1.0, 1.0]))
h.remove()
v.backward(torch.tensor([1.0, 1.0, 1.0]))      # accumulates: 2 + 1

# %% [markdown]
# ## Errors: the same type, the same message
#
# Not only the results: the mistakes behave the same. We compare the exception type and the
# beginning of the message.

# %%
# %%both errors
errors = []
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = (x * x).sum()
y.backward()
try:
    y.backward()
except Exception as e:
    errors.append((type(e).__name__, str(e)[:48]))
try:
    x.mul_(2)
except Exception as e:
    errors.append((type(e).__name__, str(e)[:48]))
e = x.exp()
e.add_(1)
try:
    e.sum().backward()
except Exception as err:
    errors.append((type(err).__name__, str(err)[:60]))
for row in errors:
    print(row)

# %% [markdown]
# ## gradcheck on `nn.Linear` (the blog's example)

# %%
# %%both test
inputs = torch.tensor(np.linspace(-2, 2, 50).reshape(10, 5), requires_grad=True, dtype=torch.double)
linear = torch.nn.Linear(5, 3)
linear = linear.double()
test = torch.autograd.gradcheck(lambda x: linear(x), inputs)
print("Are the gradients correct: ", test)

# %% [markdown]
# ## Higher-order gradients and `torch.func`

# %%
# %%both derivatives per_example
x = torch.tensor(2.0, requires_grad=True)
(d1,) = torch.autograd.grad(x ** 3, x, create_graph=True)
(d2,) = torch.autograd.grad(d1, x, create_graph=True)
(d3,) = torch.autograd.grad(d2, x)
derivatives = [d1.item(), d2.item(), d3.item()]

def compute_loss(weights, example, target):
    return ((example.dot(weights).relu() - target) ** 2).mean()

weights = torch.tensor([0.5, -0.2, 0.1, 0.3, 0.4])
examples = torch.tensor(np.linspace(-0.2, 1.2, 15).reshape(3, 5), dtype=torch.float32)   # relu active for all 3
targets = torch.tensor([0.1, -0.3, 0.2])
per_example = torch.func.vmap(torch.func.grad(compute_loss), in_dims=(None, 0, 0))(weights, examples, targets)

# %% [markdown]
# ## A custom Function

# %%
# %%both y x.grad ok
class Softplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0) + (-x.abs()).exp().log1p()

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x.sigmoid()

x = torch.tensor([-100.0, -1.0, 0.0, 1.0, 100.0], requires_grad=True)
y = Softplus.apply(x)
y.sum().backward()
xd = torch.tensor([-1.0, 0.5, 2.0], dtype=torch.double, requires_grad=True)
ok = torch.autograd.gradcheck(Softplus.apply, (xd,)) and torch.autograd.gradgradcheck(Softplus.apply, (xd,))

# %% [markdown]
# ## A few steps of training
#
# The same two-layer network, initialized with the same numbers, trained with Adam on the same
# data for 20 steps. The loss curves agree to about single precision.

# %%
# %%both losses final_weight
rng = np.random.default_rng(0)
data = torch.tensor(rng.normal(size=(32, 2)), dtype=torch.float32)
labels = torch.tensor((data.numpy()[:, 0] * data.numpy()[:, 1] > 0).astype(np.int64))
model = torch.nn.Sequential(torch.nn.Linear(2, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.tensor(np.cos(np.arange(p.numel()) + i).reshape(p.shape) * 0.5, dtype=torch.float32))
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
losses = []
for step in range(20):
    optimizer.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(data), labels)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
final_weight = model[0].weight
print("loss: %.4f -> %.4f" % (losses[0], losses[-1]))

# %% [markdown]
# ## Seeded random numbers
#
# microtorch draws from the same generator as PyTorch (a Mersenne Twister, seeded the same way) and
# turns its draws into numbers as PyTorch does. So after `manual_seed(0)` a freshly made layer has
# PyTorch's initial weights, and `randn` and `randperm` give PyTorch's values.

# %%both weights noise order
torch.manual_seed(0)
layer = torch.nn.Linear(3, 2)           # its initial weights are drawn from the generator
weights = layer.weight.detach()
noise = torch.randn(2, 3)
order = torch.randperm(6)
print(weights, noise, order, sep="\n")

# %% [markdown]
# ## Summary

# %%
if pytorch is None:
    print("PyTorch is not installed: nothing was compared (each cell ran on microtorch only).")
else:
    failed = [expr for expr, same in results if not same]
    print(f"{len(results)} comparisons, {len(results) - len(failed)} the same"
          + (f"; different: {failed}" if failed else "."))
    assert not failed, f"microtorch and PyTorch disagree on {failed}"

# %% [markdown]
# ## Where the two differ
#
# - `microtorch.viz` exists only here. Keep visualizer calls in their own cells, and the rest of
#   your code runs on PyTorch after changing the import.
# - microtorch runs on the CPU with numpy; `device="cuda"` and performance are PyTorch's.
# - After `manual_seed(s)`, `rand`, `randn`, `randint`, `randperm`, `uniform_`, `normal_`,
#   `bernoulli`, dropout, the initial weights of layers and a shuffling `DataLoader` give PyTorch's
#   numbers (`randn` of 16 or more float32 values to within a few units in the last place).
#   `multinomial`, `poisson`, `binomial` and the sampling of `torch.distributions` do too.
#   Without a seed, PyTorch starts from a new seed in each run; microtorch from the same one.

# %% [markdown]
# ## Exercises
#
# Write your answer in the cell under each question, then run the cell after it: `check`
# compares your answer with what autograd computes and, when it is wrong, says why (with a
# picture when one helps). It never shows the solution; `check.hint("name")` gives a hint.

# %%
import microtorch as mt
from microtorch.exercises import check

# %% [markdown]
# **1. Node names.** For `x = torch.ones(3, requires_grad=True)` and
# `loss = (x * torch.ones(3)).sum()`, what are `loss.grad_fn.name()` and the name of the node
# before it, `loss.grad_fn.next_functions[0][0].name()`? They are the same on both libraries.

# %% tags=["solution"]
names = [..., ...]  # two strings
### BEGIN SOLUTION
names = ["SumBackward0", "MulBackward0"]
### END SOLUTION

# %% tags=["check"]
check.grad_fn_names(names)

# %% [markdown]
# **2. The same mistakes.** Which exception type (its name, e.g. `"ValueError"`) does each of
# these raise, on microtorch and on PyTorch alike: calling `backward` twice through the same
# graph; `torch.zeros(3)[5]`; `torch.ones(2, 3).sum(dim=4)`?

# %% tags=["solution"]
twice, index, dim = ..., ..., ...  # exception type names
### BEGIN SOLUTION
twice = "RuntimeError"   # the saved tensors were freed by the first backward
index = "IndexError"     # index 5 is out of bounds for size 3
dim = "IndexError"       # dimension out of range
### END SOLUTION

# %% tags=["check"]
check.exception_types(twice, index, dim)

# %% [markdown]
# **3. Code that runs on both.** Write `experiment(torch)`, which computes a gradient of your
# choice using only the library it is given (`torch.tensor`, tensor methods, ...; no
# `mt.` and no `viz` inside) and returns it. The check runs it on microtorch and on PyTorch
# (when installed) and compares the two results.

# %% tags=["solution"]
def experiment(torch):
    ### BEGIN SOLUTION
    x = torch.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    y = torch.tensor([[1.0, 1.0, 1.0], [2.0, 3.0, 4.0]])
    ((x * y).tanh() ** 2).sum().backward()
    return x.grad
    ### END SOLUTION

# %% tags=["check"]
check.same_on_both(experiment)

# %% [markdown]
# **4. Your own comparison.** Pick any cell from an earlier notebook (without `viz`), paste it
# below under `%%both` with the variables you want to compare, and run it.

# %%
# your turn: a cell starting with the line  %%both x.grad

# %% [markdown]
# <details><summary>Solution (one possibility, from notebook 5)</summary>
#
# ```python
# %%both x.grad
# x = torch.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
# y = torch.tensor([[1.0, 1.0, 1.0], [2.0, 3.0, 4.0]])
# (x * y).sum().backward()
# ```
# </details>
