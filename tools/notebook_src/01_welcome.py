# %% [markdown]
# # Welcome to microtorch
#
# microtorch is a workbench for learning how **automatic differentiation** works, the machinery
# behind `loss.backward()` in every deep-learning framework. It has three parts:
#
# 1. **A small autograd engine** on top of numpy that behaves like `torch.autograd`: same names,
#    same rules, same error messages. It is short enough to read in an afternoon, and what you
#    learn here carries over to PyTorch unchanged (notebook 13 runs the same code on both).
# 2. **A visualizer**, `microtorch.viz`, that shows what the engine does: the graph it records,
#    backward one step at a time, hooks as they fire, and gradient checks as pictures.
# 3. **This curriculum**: thirteen short notebooks, each about one idea, with exercises.
#
# This first notebook is a five-minute tour: one graph, one step-through, one gradient check.
# Run the cells in order with **Shift + Enter** (or *Run > Run All Cells*).

# %%
import microtorch as mt
from microtorch import viz

print("microtorch", mt.__version__, "| graph renderer:", viz.renderer_name())

# %% [markdown]
# ## 1. A graph
#
# One artificial neuron: an input `x`, a weight `w`, a bias `b`, and $y = \tanh(w x + b)$.
# Computing `y` from tensors that have `requires_grad=True` makes microtorch record each
# operation. `viz.draw` shows that record: the output at the top, one box per operation, the
# leaves that require grad (`w` and `b`) at the bottom. `x` does not require grad, so it is not
# drawn: autograd records only what a gradient can flow to. Each box shows its value, and after
# backward, its gradient.

# %%
x = mt.tensor(0.5)
w = mt.tensor(-1.2, requires_grad=True)
b = mt.tensor(0.8, requires_grad=True)
y = (w * x + b).tanh()
y.backward()
viz.draw(y)

# %% [markdown]
# `w.grad` is $\frac{\partial y}{\partial w} = (1 - y^2)\, x$ and `b.grad` is $1 - y^2$. `x` has
# no gradient: it did not ask for one.

# %%
print("w.grad =", w.grad.item(), "  (1 - y^2) x =", ((1 - y**2) * x).item())
print("b.grad =", b.grad.item(), "  (1 - y^2)   =", (1 - y**2).item())

# %% [markdown]
# ## 2. Backward, one step at a time
#
# `viz.step_backward(loss)` runs backward while recording, and gives you a player. Press
# **Next** (or the arrow keys after clicking the widget): the node that runs is highlighted, the
# panel on the right shows the chain rule it applies, first as a formula, then with numbers,
# and the gradient appears on the edges it flows along. Stepping happens in your browser, so it
# is instant. Click a box to jump to its step and open its tensor. On a projector, make every
# picture larger with `viz.set_options(scale=1.5)` at the top of the notebook (or the **text**
# control of the player).

# %%
x = mt.tensor(0.5)
w = mt.tensor(-1.2, requires_grad=True)
b = mt.tensor(0.8, requires_grad=True)
z = w * x + b
y = z.tanh()
loss = (y - 1.0) ** 2
stepper = viz.step_backward(loss)
stepper

# %% [markdown]
# The stepper is also a Python object. `stepper.steps` lists what each step shows, and
# `stepper.save("backward.html")` writes a page that replays it without Python: handy for
# slides.

# %%
for step in stepper.steps:
    print(step)

# %% [markdown]
# ## 3. Checking a gradient
#
# How do we know the engine's gradients are right? Compare them with the slow, obvious method:
# nudge each input by a tiny `eps` and watch the output move (a *finite difference*).
# `gradcheck` does this for every input entry and every output entry, which gives two
# *Jacobian* matrices, one numerical and one from autograd. `viz.gradcheck` draws them side by
# side with their difference. Here, for the softmax of five numbers:

# %%
mt.manual_seed(0)
scores = mt.randn(5, dtype=mt.float64, requires_grad=True)
viz.gradcheck(lambda s: s.softmax(dim=0), (scores,))

# %% [markdown]
# The two matrices match: their difference is tiny (about 1e-10, the rounding error of the finite
# difference), far below gradcheck's tolerance, so the check passes. In
# notebook 7 you will write an operation with a deliberate mistake in its backward and watch
# the difference light up exactly where it is wrong.
#
# ## The curriculum
#
# | | notebook | the idea |
# |---|---|---|
# | 1 | [Welcome](01_welcome.ipynb) | this tour |
# | 2 | [The chain rule on scalars](02_chain_rule.ipynb) | derivatives by hand and by autograd; why backward needs a topological order |
# | 3 | [Tensors and the `grad_fn` graph](03_tensors_and_grad_fn.ipynb) | leaves, `grad_fn`, `retain_grad`, `backward(gradient=...)`, matrix derivatives |
# | 4 | [Step-through backward](04_step_through_backward.ipynb) | the engine step by step; accumulation, `retain_graph`, zeroing gradients |
# | 5 | [Broadcasting and matrix calculus](05_broadcasting.ipynb) | why gradients are summed over broadcast dimensions |
# | 6 | [Hooks](06_hooks.ipynb) | tensor, node, post-accumulate and module hooks, on a timeline |
# | 7 | [gradcheck](07_gradcheck.ipynb) | finite differences against autograd; finding a wrong backward |
# | 8 | [Higher-order gradients](08_higher_order.ipynb) | `create_graph`, `gradgradcheck`, Hessians |
# | 9 | [Function transforms](09_function_transforms.ipynb) | `func.grad`, `vmap`, per-sample gradients, `jacrev` and `jacfwd` |
# | 10 | [In-place operations](10_inplace.ipynb) | version counters: what breaks and why |
# | 11 | [Writing your own op](11_custom_function.ipynb) | a custom `Function` end to end |
# | 12 | [Training a network](12_training.ipynb) | an MLP on two moons; SGD against Adam |
# | 13 | [Same code on PyTorch](13_same_code_on_pytorch.ipynb) | the same cells on both, the same gradients |
#
# Each notebook ends with exercises, from a derivative by hand to a custom op with forward-mode
# AD. Each one has a cell for your answer and a cell that checks it (`microtorch.exercises`):
# green when it is right, red with the reason when it is not.
#
# ## Running it yourself
#
# On **Binder** everything is already installed. On your own machine, from a clone of the
# repository:
#
# ```
# make lab     # creates .venv, installs microtorch with its notebook extras, opens JupyterLab
# ```
#
# microtorch itself needs only numpy; the visualizer adds graphviz, ipywidgets, anywidget and
# matplotlib. Graphs are laid out by the Graphviz `dot` program when it is installed, and
# otherwise by a WebAssembly build of Graphviz that comes with `pip`.

# %% [markdown]
# ## Exercises
#
# Write your answer in the cell under each question, then run the cell after it: `check`
# compares your answer with what autograd computes and, when it is wrong, says why (with a
# picture when one helps). It never shows the solution; `check.hint("name")` gives a hint.

# %%
from microtorch.exercises import check

# %% [markdown]
# **1. A derivative by hand.** Change the neuron above to use `sigmoid` instead of `tanh` and
# draw it again. `b.grad` is now the derivative of the sigmoid at $w x + b$. Write that
# derivative as a function of the sigmoid's *output* $y$ only.

# %% tags=["solution"]
def sigmoid_local(y):
    ### BEGIN SOLUTION
    return y * (1 - y)
    ### END SOLUTION

# %% tags=["check"]
check.sigmoid_local(sigmoid_local)

# %% [markdown]
# **2. The chain rule, once.** For the tanh neuron $y = \tanh(w x + b)$ with $x = 2$,
# $w = 0.5$ and $b = 0.25$, work out $\partial y / \partial w$ by hand (you may use `math`
# to evaluate your formula).

# %% tags=["solution"]
import math

answer = ...  # your answer: a number
### BEGIN SOLUTION
answer = (1 - math.tanh(0.5 * 2 + 0.25) ** 2) * 2
### END SOLUTION

# %% tags=["check"]
check.neuron_w_grad(answer)

# %% [markdown]
# **3. Your own sigmoid.** Write $\sigma(t) = 1 / (1 + e^{-t})$ with `exp`, `+` and `/` only.
# The check compares its values with `t.sigmoid()` and runs `gradcheck` on it: autograd
# differentiates your formula, whatever it is.

# %% tags=["solution"]
def my_sigmoid(t):
    ### BEGIN SOLUTION
    return 1 / (1 + (-t).exp())
    ### END SOLUTION

# %% tags=["check"]
check.my_sigmoid(my_sigmoid)
