"""The one place where function transforms (microtorch.func: vmap, jacrev, jacfwd) plug into autograd.

autograd sits below func and never imports it. When func is imported it calls `register(obj)`
once; autograd asks `transforms()` for that object where it needs a transform: vmap in
gradcheck and autograd.functional, a batched autograd.grad (is_grads_batched=True), dual
tensors and in-place ops on tensors that vmap batched. While vmap runs, func also sees every
op first, through `intercept` (Function.apply's interceptors, which forward-mode AD uses too).

The registered object has: vmap, jacrev, jacfwd, batched_grad(outputs, inputs, grad_outputs,
retain_graph, create_graph, allow_unused, materialize_grads), make_dual(tensor, tangent, level),
unpack_dual(tensor, level), batched_inplace(tensor, fn, args, op), is_batched(array) and
made_leaf(tensor) (tensor() or a factory made a leaf requiring grad: a running grad/vjp/jvp owns it),
requires_grad_called() (Tensor.requires_grad_ ran: refused inside a transformed function).
"""
from .function import intercept, stop_intercepting  # noqa: F401  (re-exported for func)

_registered = None


def register(obj):
    """func registers its transforms here (once, when it is imported)."""
    global _registered
    _registered = obj


def transforms():
    """The registered transforms; an error that says what to import if there are none."""
    if _registered is None:
        raise RuntimeError("this needs microtorch.func (vmap, jacrev, jacfwd): `import microtorch.func` first")
    return _registered


def registered():
    """The registered transforms, or None (cheap checks on hot paths)."""
    return _registered
