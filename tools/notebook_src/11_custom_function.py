# %% [markdown]
# # 11. Writing your own op
#
# Every operation in microtorch is a `Function` with two static methods side by side:
# `forward` computes the result, `backward` turns the gradient of the output into gradients of
# the inputs. You can write your own in exactly the same way, and your op then takes part in
# everything: the graph, the stepper, hooks, gradcheck, higher-order gradients.
#
# Why would you? To compute something in a numerically safer way than the composition of
# built-in ops, to use a cheaper backward formula, or to wrap code autograd cannot see through.
#
# **You will learn**
# - the anatomy of a `Function`: `forward`, `backward`, `ctx.save_for_backward`,
#   `ctx.needs_input_grad`, and `apply`;
# - how to check it: `gradcheck`, `gradgradcheck`, and the heatmap;
# - how to add forward mode (`jvp`), so that `jacfwd` and `forward_ad` work too.

# %%
import microtorch as mt
import microtorch.autograd.forward_ad as fwAD
from microtorch import viz
from microtorch.autograd import Function, gradcheck, gradgradcheck

mt.manual_seed(0);

# %% [markdown]
# ## The op: softplus
#
# $\text{softplus}(x) = \log(1 + e^x)$ is a smooth version of `relu`. The obvious implementation
# overflows: $e^{x}$ is `inf` in `float32` once $x > 88$, and then so is the result, although
# softplus$(100)$ is just about 100.

# %%
x = mt.tensor([-100.0, -1.0, 0.0, 1.0, 100.0])
print("naive:", (1 + x.exp()).log())

# %% [markdown]
# A stable form rewrites it as $\max(x, 0) + \log(1 + e^{-|x|})$, where the exponent is never
# positive. Its derivative is the logistic sigmoid: $\frac{d}{dx}\,\text{softplus}(x) =
# \frac{e^x}{1 + e^x} = \sigma(x)$.
#
# ## The Function
#
# - `forward(ctx, x, beta)` receives the inputs as given to `apply` and returns the output. It
#   runs with autograd switched off: what it computes is not recorded. It stores on `ctx`
#   whatever backward will need: tensors through `ctx.save_for_backward` (so that in-place changes
#   are detected, notebook 10), anything else as plain attributes.
# - `backward(ctx, grad_output)` receives one gradient per output and returns one gradient per
#   input of `forward`, `None` for inputs that are not differentiable (here, the number `beta`).
#   Write it with tensor operations, and it can itself be differentiated (notebook 8).
# - `Softplus.apply(x, beta)` is how you call it. It runs `forward` and, if an input requires
#   grad, records a node named `SoftplusBackward` in the graph.
#
# Here with a sharpness parameter $\beta$: $\text{softplus}_\beta(x) = \frac1\beta\log(1 +
# e^{\beta x})$, derivative $\sigma(\beta x)$.

# %%
class Softplus(Function):
    """softplus_beta(x) = log(1 + exp(beta x)) / beta, computed without overflow."""

    @staticmethod
    def forward(ctx, x, beta=1.0):
        bx = beta * x
        out = (bx.clamp(min=0) + (-bx.abs()).exp().log1p()) / beta
        ctx.save_for_backward(x)
        ctx.beta = beta
        return out

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        grad_x = None
        if ctx.needs_input_grad[0]:                  # skip work nobody asked for
            grad_x = grad_output * (ctx.beta * x).sigmoid()
        return grad_x, None                          # no gradient for beta


def softplus(x, beta=1.0):
    return Softplus.apply(x, beta)


x = mt.tensor([-100.0, -1.0, 0.0, 1.0, 100.0], requires_grad=True)
y = softplus(x)
print("stable:", y)
y.sum().backward()
print("grad:  ", x.grad, " = sigmoid(x)")

# %% [markdown]
# ## It is a node like any other
#
# The graph shows `SoftplusBackward` between the other ops, and the stepper shows it running
# with its gradient in and out.

# %%
w = mt.tensor([0.5, -1.5, 2.0], requires_grad=True)
with viz.record() as tape:
    loss = (softplus(w * 2.0) ** 2).sum()
    loss.backward()
viz.Stepper(tape, rankdir="LR")

# %% [markdown]
# ## Check it
#
# A hand-written backward deserves suspicion. gradcheck compares it with finite differences
# (in `float64`, notebook 7), at a few random points and for two values of $\beta$:

# %%
for beta in (1.0, 3.0):
    x = mt.randn(5, dtype=mt.float64, requires_grad=True)
    print(f"beta={beta}: gradcheck", gradcheck(lambda t: softplus(t, beta), (x,)),
          " gradgradcheck", gradgradcheck(lambda t: softplus(t, beta), (x,)))

# %% [markdown]
# `gradgradcheck` passes too, for free: the backward was written with tensor operations
# (`sigmoid`, `*`), which autograd records when asked to (`create_graph=True`).
#
# The heatmaps show what was compared: a diagonal Jacobian (each output depends on its own
# input only), with the sigmoid's values on the diagonal.

# %%
x = mt.linspace(-3, 3, 7, dtype=mt.float64).requires_grad_()
viz.gradcheck(softplus, (x,))

# %% [markdown]
# ## Forward mode: `jvp`
#
# Reverse mode pulls a gradient back through the op. Forward mode pushes a *tangent* forward:
# given a small change $\dot x$ of the input, how much does the output change? For softplus,
# $\dot y = \sigma(\beta x)\,\dot x$. Add it as a third static method, `jvp(ctx, x_tangent,
# beta_tangent)`; for `jvp`, forward must also save what it needs with `ctx.save_for_forward`.
# Forward mode is what `microtorch.autograd.forward_ad` (dual numbers) and `microtorch.func.jvp`
# and `jacfwd` use.

# %%
class SoftplusFwd(Softplus):
    @staticmethod
    def forward(ctx, x, beta=1.0):
        out = Softplus.forward(ctx, x, beta)
        ctx.save_for_forward(x)
        return out

    @staticmethod
    def jvp(ctx, x_tangent, beta_tangent):
        (x,) = ctx.saved_tensors
        return (ctx.beta * x).sigmoid() * x_tangent


x = mt.tensor([-1.0, 0.0, 2.0])
x_dot = mt.tensor([1.0, 1.0, 0.5])                 # the direction we push
with fwAD.dual_level():
    dual = fwAD.make_dual(x, x_dot)                # x carrying its tangent along
    y = SoftplusFwd.apply(dual, 2.0)
    y_dot = fwAD.unpack_dual(y).tangent
print("tangent of y:      ", y_dot)
print("sigmoid(2x) * x_dot:", (2.0 * x).sigmoid() * x_dot)

# %% [markdown]
# One forward pass gave the output and its directional derivative together, with no backward.
# `check_forward_ad=True` makes gradcheck compare the `jvp` with finite differences as well:

# %%
x = mt.randn(4, dtype=mt.float64, requires_grad=True)
print("forward AD checked:", gradcheck(lambda t: SoftplusFwd.apply(t, 2.0), (x,), check_forward_ad=True))

# %% [markdown]
# ## Checklist for a custom op
#
# 1. `forward` computes; it may use any code, numpy included. Save what backward needs with
#    `ctx.save_for_backward` (tensors) or on `ctx` (everything else).
# 2. `backward` returns exactly one value per `forward` input, `None` for non-tensors and for
#    inputs that need no gradient (`ctx.needs_input_grad`).
# 3. Write `backward` with tensor operations, or mark it `@once_differentiable`.
# 4. `gradcheck` in `float64` at random points, plus `gradgradcheck`; add `jvp` and
#    `check_forward_ad=True` if you need forward mode.

# %% [markdown]
# ## Exercises
#
# Write your answer in the cell under each question, then run the cell after it: `check`
# compares your answer with what autograd computes and, when it is wrong, says why (with a
# picture when one helps). It never shows the solution; `check.hint("name")` gives a hint.

# %%
from microtorch.autograd import Function
from microtorch.exercises import check

# %% [markdown]
# **1. Swish.** Write `Swish`, $y = x\,\sigma(x)$, as a Function. Its derivative is
# $\sigma(x)\,(1 + x\,(1 - \sigma(x)))$. The check runs gradcheck and gradgradcheck.

# %% tags=["solution"]
class Swish(Function):
    @staticmethod
    def forward(ctx, x):
        ### BEGIN SOLUTION
        ctx.save_for_backward(x)
        return x * x.sigmoid()
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad):
        ### BEGIN SOLUTION
        (x,) = ctx.saved_tensors
        s = x.sigmoid()
        return grad * s * (1 + x * (1 - s))
        ### END SOLUTION

# %% tags=["check"]
check.swish(Swish)

# %% [markdown]
# Then break your `Swish` on purpose (say, drop the `1 +`), run the check again and look at
# its heatmap. Which entries of the Jacobian are outlined, and why only those?
#
# <details><summary>Why</summary>
#
# Only diagonal entries: swish is elementwise, so both Jacobians are diagonal, and off the
# diagonal both are exactly 0. The error on entry $i$ is $\sigma(x_i)$, large enough everywhere to
# be outlined.
# </details>
#
# **2. Forward mode.** Write `SwishFwd`: `Swish` with a `jvp` as well, so that
# `gradcheck(..., check_forward_ad=True)` passes. (Save $x$ for the forward pass with
# `ctx.save_for_forward` too.)

# %% tags=["solution"]
class SwishFwd(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)
        return x * x.sigmoid()

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        s = x.sigmoid()
        return grad * s * (1 + x * (1 - s))

    @staticmethod
    def jvp(ctx, x_tangent):
        ### BEGIN SOLUTION
        (x,) = ctx.saved_tensors
        s = x.sigmoid()
        return s * (1 + x * (1 - s)) * x_tangent
        ### END SOLUTION

# %% tags=["check"]
check.swish_jvp(SwishFwd)

# %% [markdown]
# **3. Two tensors and a number.** Write `ScaledMul`, $\alpha\,x\,y$ for tensors `x`, `y` and
# a Python float `alpha`, called as `ScaledMul.apply(x, y, alpha)`. Remember: one return value
# of backward per input of forward.

# %% tags=["solution"]
class ScaledMul(Function):
    @staticmethod
    def forward(ctx, x, y, alpha):
        ### BEGIN SOLUTION
        ctx.save_for_backward(x, y)
        ctx.alpha = alpha
        return alpha * x * y
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad):
        ### BEGIN SOLUTION
        x, y = ctx.saved_tensors
        return grad * ctx.alpha * y, grad * ctx.alpha * x, None
        ### END SOLUTION

# %% tags=["check"]
check.scaled_mul(ScaledMul)
