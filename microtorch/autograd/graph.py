"""torch.autograd.graph: Node, hook handles, saved-tensor hooks, multi-grad hooks, and the
engine's event stream (defined in `_hooks`, the bottom layer, and re-exported here).
"""
from ._hooks import (BackwardFinished, BackwardStarted, GradAccumulated, HookFired, NodeCreated,  # noqa: F401
                     NodeExecuting, RemovableHandle, _listeners, _saved_hooks, _saved_hooks_stack, add_hook,
                     add_listener, disable_saved_tensors_hooks, emit, save_on_cpu, saved_tensors_hooks)
from .engine import current_task
from .node import Node, edge  # noqa: F401


# ---- multi-grad hooks -------------------------------------------------------------------
def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """mode="all": fn(grads) once per backward, after the gradients of all `tensors` that
    this backward computes (None for the others, as a list). mode="any": fn(grad) on the
    first gradient computed. fn's return value is ignored."""
    supported = ("all", "any")
    if mode not in supported:
        raise ValueError(f"Expects mode to be one of {supported} but got {mode}")
    tensors = tuple(tensors)
    if mode == "all":
        nodes = [edge(t)[0] for t in tensors]
        buffers, counts, expected = {}, {}, {}

        def make_hook(i):
            def hook(grad):
                task = current_task()
                key = task.id
                if key not in counts:
                    counts[key] = 0
                    buffers[key] = [None] * len(tensors)
                    expected[key] = sum(1 for n in nodes if task.will_execute(n))
                buffers[key][i] = grad
                counts[key] += 1
                if counts[key] == expected[key]:
                    grads = buffers.pop(key)
                    del counts[key], expected[key]
                    fn(grads)
            hook._microtorch_internal = True      # plumbing: viz.hook_timeline hides it
            return hook
        handles = [t.register_hook(make_hook(i)) for i, t in enumerate(tensors)]
    else:
        ran = set()

        def hook(grad):
            key = current_task().id
            if key in ran:
                return
            ran.add(key)
            fn(grad)
        hook._microtorch_internal = True
        handles = [t.register_hook(hook) for t in tensors if t.requires_grad]
    return _MultiHandle(handles)


class _MultiHandle:
    def __init__(self, handles):
        self.handles = handles

    def remove(self):
        for h in self.handles:
            h.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


from ._graph_api import (GradientEdge, allow_mutation_on_saved_tensors, get_gradient_edge,  # noqa: E402,F401
                         increment_version, region_activation_memory_budget, set_override_stale_capture_stream,
                         set_warn_on_accumulate_grad_stream_mismatch)
