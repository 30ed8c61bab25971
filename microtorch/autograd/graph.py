"""Hook handles, saved-tensor hooks, multi-grad hooks, and the engine's event stream.

The event stream is how the visualizer watches the engine without the engine knowing:
`add_listener(fn)` subscribes, and the engine and `Function.apply` call `emit(event)` only
when `_listeners` is non-empty, so nobody watching costs one `if`.
"""
import itertools
import threading
from dataclasses import dataclass, field
from typing import Any, Optional

_handle_ids = itertools.count()


class RemovableHandle:
    """Returned by every register_*hook; `.remove()` unregisters (twice is harmless)."""

    def __init__(self, hooks_dict):
        self.id = next(_handle_ids)
        self._hooks = hooks_dict

    def remove(self):
        if self._hooks is not None:
            self._hooks.pop(self.id, None)
            self._hooks = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def add_hook(hooks_dict, fn):
    handle = RemovableHandle(hooks_dict)
    hooks_dict[handle.id] = fn
    return handle


# ---- events --------------------------------------------------------------------------
@dataclass
class NodeCreated:
    """Function.apply recorded a node: its op, inputs, outputs and saved tensors."""
    node: Any
    inputs: tuple
    outputs: tuple
    saved: tuple
    kwargs: dict = field(default_factory=dict)  # forward's keyword arguments (e.g. dim=, keepdim=)


@dataclass
class BackwardStarted:
    roots: tuple            # the output tensors backward starts from
    grads: tuple            # the seed gradient of each root
    inputs: Optional[tuple]  # `inputs=` of backward / autograd.grad, else None
    create_graph: bool
    retain_graph: bool


@dataclass
class NodeExecuting:
    """A node ran its backward: gradients in (one per forward output) and out
    (one per next_functions entry, after broadcasting is undone)."""
    node: Any
    incoming: tuple
    outgoing: tuple
    ready: tuple = ()          # nodes still in the ready queue after this one was taken
    # node -> edges still to arrive, for the counts that changed since the previous
    # NodeExecuting of this backward (the first one, GraphRoot's, has every count). A count
    # of 0 means the node stopped waiting. Replaying the changes in order gives the full state
    # (viz.record does); sending only them keeps a long backward linear when someone listens.
    dependencies: dict = field(default_factory=dict)


@dataclass
class HookFired:
    """kind: tensor, retain_grad, node_pre, node_post, post_accumulate, capture, multi_grad,
    or module_* (forward_pre, forward, backward)."""
    kind: str
    target: Any
    hook: Any
    before: Any
    after: Any


@dataclass
class GradAccumulated:
    tensor: Any
    node: Any
    before: Any        # the leaf's .grad before (None if unset)
    contribution: Any
    after: Any


@dataclass
class BackwardFinished:
    roots: tuple


_listeners = []


def add_listener(fn):
    """Call fn(event) for every event from now on; returns a handle with .remove()."""
    handle = _ListenerHandle(fn)
    _listeners.append(handle)
    return handle


class _ListenerHandle:
    def __init__(self, fn):
        self.fn = fn

    def remove(self):
        if self in _listeners:
            _listeners.remove(self)

    def __call__(self, event):
        self.fn(event)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def emit(event):
    for listener in list(_listeners):
        listener(event)


# ---- saved tensor hooks -----------------------------------------------------------------
_saved_hooks = threading.local()


def _saved_hooks_stack():
    stack = getattr(_saved_hooks, "stack", None)
    if stack is None:
        stack = _saved_hooks.stack = []
    return stack


class saved_tensors_hooks:
    """Within the block, every tensor saved for backward goes through pack_hook(tensor) and
    comes back through unpack_hook(packed) when backward reads it. pack_hook runs with grad
    mode off; the innermost block wins."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        disabled = getattr(_saved_hooks, "disabled", None)
        if disabled is not None:
            raise RuntimeError(disabled)
        _saved_hooks_stack().append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc):
        _saved_hooks_stack().pop()


class save_on_cpu(saved_tensors_hooks):
    """torch moves saved tensors to CPU memory; microtorch is CPU-only, so this keeps a copy."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        super().__init__(lambda t: t.detach().clone(), lambda t: t)


class disable_saved_tensors_hooks:
    """Within the block, registering saved-tensor hooks raises RuntimeError(error_message)."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        if _saved_hooks_stack():
            raise RuntimeError(self.error_message)
        self.prev = getattr(_saved_hooks, "disabled", None)
        _saved_hooks.disabled = self.error_message
        return self

    def __exit__(self, *exc):
        _saved_hooks.disabled = self.prev

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with disable_saved_tensors_hooks(self.error_message):
                return fn(*args, **kwargs)
        return wrapper


# ---- multi-grad hooks -------------------------------------------------------------------
def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """mode="all": fn(grads) once per backward, after the gradients of all `tensors` that
    this backward computes (None for the others, as a list). mode="any": fn(grad) on the
    first gradient computed. fn's return value is ignored."""
    from .engine import _current_task
    from .function import _accumulator

    supported = ("all", "any")
    if mode not in supported:
        raise ValueError(f"Expects mode to be one of {supported} but got {mode}")
    tensors = tuple(tensors)
    if mode == "all":
        nodes = [t.grad_fn if t.grad_fn is not None else _accumulator(t) for t in tensors]
        buffers, counts, expected = {}, {}, {}

        def make_hook(i):
            def hook(grad):
                task = _current_task()
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
            key = _current_task().id
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


class Node:  # re-exported for `autograd.graph.Node` (isinstance checks)
    pass


from ._graph_api import (GradientEdge, allow_mutation_on_saved_tensors, get_gradient_edge,  # noqa: E402,F401
                         increment_version, region_activation_memory_budget, set_override_stale_capture_stream,
                         set_warn_on_accumulate_grad_stream_mismatch)
