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
    dependencies: dict = field(default_factory=dict)  # node -> edges still to arrive


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
    comes back through unpack_hook(packed) when backward reads it."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        _saved_hooks_stack().append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc):
        _saved_hooks_stack().pop()


class save_on_cpu(saved_tensors_hooks):
    """torch moves saved tensors to CPU memory; microtorch is CPU-only, so this keeps a copy."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        super().__init__(lambda t: t.detach().clone(), lambda t: t)


class disable_saved_tensors_hooks:
    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        def refuse(*_):
            raise RuntimeError(self.error_message)
        _saved_hooks_stack().append((refuse, refuse))

    def __exit__(self, *exc):
        _saved_hooks_stack().pop()


# ---- multi-grad hooks -------------------------------------------------------------------
def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """mode="all": fn(grads) once per backward, after the gradients of all `tensors` that
    take part are computed (None for those that do not). mode="any": fn(grad) on the first."""
    from .engine import _current_task

    if mode not in ("all", "any"):
        raise ValueError(f"register_multi_grad_hook: mode must be 'all' or 'any', got {mode!r}")
    tensors = tuple(tensors)
    handles = []
    state = {}

    def make_hook(i):
        def hook(grad):
            task = _current_task()
            key = id(task)
            if state.get("task") != key:
                state.clear()
                state.update(task=key, grads=[None] * len(tensors), count=0, fired=False,
                             expected=sum(1 for t in tensors if task is not None and task.will_reach(t)))
            if mode == "any":
                if not state["fired"]:
                    state["fired"] = True
                    fn(grad)
                return None
            state["grads"][i] = grad
            state["count"] += 1
            if state["count"] == state["expected"]:
                fn(tuple(state["grads"]))
            return None
        return hook

    for i, t in enumerate(tensors):
        handles.append(t.register_hook(make_hook(i)))
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
