"""The hooks the engine calls around a node, in torch's order, and torch's checks of what they return.

For a node about to run: tensor hooks (`t.register_hook`) of its outputs, then retain_grad, then
node pre-hooks; after it ran: node post-hooks. For a leaf's AccumulateGrad: the leaf's tensor
hooks before, its post-accumulate hooks after. Each firing is reported as a HookFired event when
somebody listens.
"""
from .._tensor import Tensor
from . import _hooks
from .node import AccumulateGrad


def fire(kind, target, hook, before, after, listening):
    if listening:
        _hooks.emit(_hooks.HookFired(kind, target, hook, before, after))


def call_tensor_hooks(node, grads, listening):
    """Tensor hooks (register_hook), then retain_grad, before the node runs (torch's order)."""
    if type(node) is AccumulateGrad:
        var = node.variable
        for hook in list((var._backward_hooks or {}).values()):
            grads[0] = _call_tensor_hook(hook, grads[0], var, f"a leaf tensor of shape {list(var.shape)}", listening)
        return grads
    if node._tensor_pre_hooks:
        for nr, hook in list(node._tensor_pre_hooks.values()):
            what = f"the tensor that is output {nr} of {node.name()}"
            grads[nr] = _call_tensor_hook(hook, grads[nr], node, what, listening)
    if node._retains_grad:
        for nr, ref in list(node._retains_grad.items()):
            t = ref()
            if t is not None and grads[nr] is not None:
                g, before = grads[nr], t._grad
                t._grad = (g.detach().clone() if not g._requires_grad else g.clone()) if before is None else before + g
                fire("retain_grad", t, None, before, t._grad, listening)
    return grads


def _call_tensor_hook(hook, before, target, what, listening):
    new = hook(before)  # None when no gradient arrived, as in torch
    if new is not None:
        check_hook_value(new, before, hook, what)
    after = before if new is None else new
    fire("tensor", target, hook, before, after, listening)
    return after


def call_pre_hooks(node, grads, listening):
    """Node pre-hooks: fn(grad_outputs) may return new grad_outputs."""
    for hook in list(node._pre_hooks.values()):
        before = tuple(grads)
        new = hook(before)
        if new is not None:
            grads = list(check_hook_values(new, before, hook, f"{node.name()} (a pre-hook)"))
        fire("node_pre", node, hook, before, tuple(grads), listening)
    return grads


def call_post_hooks(node, outgoing, grads, listening):
    """Node post-hooks: fn(grad_inputs, grad_outputs) may return new grad_inputs."""
    for hook in list(node._post_hooks.values()):
        before = tuple(outgoing)
        new = hook(before, tuple(grads))
        if new is not None:
            outgoing = check_hook_values(new, before, hook, f"{node.name()} (a post-hook)")
        fire("node_post", node, hook, before, tuple(outgoing), listening)
    return outgoing


def call_post_accumulate_hooks(var, listening):
    """hook(leaf) after its .grad was written; the event shows a snapshot of .grad."""
    for hook in list(var._post_acc_hooks.values()):
        hook(var)
        if listening:
            g = var._grad if var._grad is None else Tensor._make(var._grad._data.copy())
            fire("post_accumulate", var, hook, g, g, listening)


def _hook_name(hook):
    return getattr(hook, "__name__", type(hook).__name__)


def check_hook_value(new, old, hook, what):
    """torch's check of a gradient a hook returned: a Tensor of the same size and dtype."""
    if not isinstance(new, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(new).__name__}' (hook {_hook_name(hook)!r} "
                        f"registered on {what}; a hook must return a Tensor or None)")
    if old is None:
        raise RuntimeError(f"can't replace a None gradient with a non-None value (hook {_hook_name(hook)!r} "
                           f"registered on {what} was called with None because no gradient reached it)")
    if new.shape != old.shape:
        raise RuntimeError(f"hook {_hook_name(hook)!r} has changed the size of value (hook registered on {what}: "
                           f"the gradient has shape {list(old.shape)} but the hook returned shape "
                           f"{list(new.shape)}; return a gradient of the same shape)")
    if new.dtype is not old.dtype:
        raise RuntimeError(f"hook {_hook_name(hook)!r} has changed the type of value (was {old.type()} got "
                           f"{new.type()}; hook registered on {what}: return a gradient of dtype {old.dtype})")


def check_hook_values(new, old, hook, what):
    """A node hook's result: a sequence with one gradient (or None) per value it was given."""
    new = tuple(new) if isinstance(new, (tuple, list)) else (new,)
    if len(new) != len(old):
        raise RuntimeError(f"hook {_hook_name(hook)!r} has returned an incorrect number of values (got {len(new)}, "
                           f"but expected {len(old)}) (hook registered on {what})")
    for n, o in zip(new, old):
        if n is not None:
            check_hook_value(n, o, hook, what)
    return new
