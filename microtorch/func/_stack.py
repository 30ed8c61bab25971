"""stack_module_state: the parameters and buffers of M same-class models, stacked along a new dim 0.

The result feeds `vmap(lambda p, b, x: functional_call(base, (p, b), (x,)))` to run an ensemble
as one batched model. Stacked parameters are new leaves, ready for an optimizer.
"""


def _stacked_leaf(tensors, name):
    from ..ops import stack
    grads = {t.requires_grad for t in tensors}
    if len(grads) > 1:
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    out = stack(tensors)
    return out.detach().requires_grad_() if grads == {True} else out


def stack_module_state(models):
    """stack_module_state(models) -> params, buffers: dicts name -> tensor of shape (M, *shape)."""
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({m.training for m in models}) > 1:
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    if any(type(m) is not type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(named):
        per_model = [dict(named(m)) for m in models]
        return {k: _stacked_leaf(tuple(d[k] for d in per_model), k) for k in per_model[0]}

    return stacked(lambda m: m.named_parameters()), stacked(lambda m: m.named_buffers())
