"""An autograd.Function written in Python, inside torch.func's transforms, beside torch.

torch.func asks two things of such a Function: a `setup_context` (forward without ctx) under any transform (vmap,
grad, vjp, jacrev, jvp), and under vmap a `vmap` staticmethod or `generate_vmap_rule = True`. Without them torch
raises, naming the fix; microtorch ran them anyway (per example under vmap), so a student's Function that worked here
failed in torch. Each case runs in both and compares the outcome: the exception's type and words, or the values.
"""
import warnings

import numpy as np
import pytest

import microtorch

torch = pytest.importorskip("torch")


def _classes(lib):
    class CtxStyle(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 2 * x * g

    class WithSetupContext(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x * x

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 2 * x * g

    class GeneratedRule(WithSetupContext):
        generate_vmap_rule = True

    class OwnRule(WithSetupContext):
        @staticmethod
        def vmap(info, in_dims, x):
            return x * x, in_dims[0]

    return {c.__name__: c for c in (CtxStyle, WithSetupContext, GeneratedRule, OwnRule)}


TRANSFORMS = {
    "vmap": lambda lib, f, x: lib.vmap(f)(x),
    "grad": lambda lib, f, x: lib.func.grad(lambda v: f(v).sum())(x[0]),
    "vjp": lambda lib, f, x: lib.func.vjp(f, x)[1](lib.ones_like(x))[0],
    "jacrev": lambda lib, f, x: lib.func.jacrev(f)(x[0]),
    "vmap of grad": lambda lib, f, x: lib.vmap(lib.func.grad(lambda v: f(v).sum()))(x),
    "grad outside, plain autograd": lambda lib, f, x: lib.autograd.grad(f(x.requires_grad_()).sum(), x)[0],
}


def _outcome(lib, cls_name, transform):
    x = lib.tensor(np.arange(1.0, 7.0).reshape(2, 3))
    f = _classes(lib)[cls_name].apply
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (the per-example fallback's performance warning is another test's)
            return ("value", TRANSFORMS[transform](lib, f, x).detach().numpy().tolist())
    except Exception as e:
        return ("raised", type(e).__name__, str(e)[:90])


@pytest.mark.parametrize("transform", TRANSFORMS)
@pytest.mark.parametrize("cls_name", ["CtxStyle", "WithSetupContext", "GeneratedRule", "OwnRule"])
def test_python_function_under_a_transform(cls_name, transform):
    ours, theirs = _outcome(microtorch, cls_name, transform), _outcome(torch, cls_name, transform)
    if theirs[0] == "raised":  # (the same type; torch's words, after the transform's name microtorch puts first)
        assert ours[:2] == theirs[:2] and theirs[2][:60] in ours[2], (ours, theirs)
    else:
        assert ours == theirs


def test_jvp_asks_for_setup_context_before_jvp():
    """torch's first complaint about a ctx-style Function under func.jvp is the missing setup_context."""
    def outcome(lib):
        f = _classes(lib)["CtxStyle"].apply
        try:
            lib.func.jvp(f, (lib.ones(3),), (lib.ones(3),))
        except Exception as e:
            return type(e).__name__, str(e)[:60]
    assert outcome(microtorch) == outcome(torch)


def test_the_vmap_staticmethod_refuses_by_default():
    with pytest.raises(NotImplementedError, match="override the vmap staticmethod or set generate_vmap_rule"):
        microtorch.autograd.Function.vmap(None, (0,), microtorch.ones(2))
    assert microtorch.autograd.Function.generate_vmap_rule is torch.autograd.Function.generate_vmap_rule is False


@pytest.mark.parametrize("transform", ["grad", "vmap", "vmap, then backward"])
def test_a_module_with_a_full_backward_hook_under_a_transform(transform):
    """Its hook is an autograd.Function written in Python: refused under grad, as torch's; under vmap torch's batched
    tensors read as not requiring grad, so the hook is not attached (and never fires)."""
    def outcome(lib):
        lib.manual_seed(0)
        m = lib.nn.Linear(3, 1)
        calls = []
        m.register_full_backward_hook(lambda mod, gi, go: calls.append(1))
        try:
            if transform == "grad":
                lib.func.grad(lambda v: m(v).sum())(lib.ones(3))
            else:
                out = lib.vmap(m)(lib.ones(2, 3))
                if transform == "vmap, then backward":
                    out.sum().backward()
        except Exception as e:
            return "raised", type(e).__name__
        return "ran", len(calls)
    assert outcome(microtorch) == outcome(torch)
