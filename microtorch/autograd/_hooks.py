"""Hook handles, the engine's event stream, and saved-tensor hooks: the bottom of autograd.

The event stream is how the visualizer watches the engine without the engine knowing:
`add_listener(fn)` subscribes, and the engine and `Function.apply` call `emit(event)` only
when `_listeners` is non-empty, so nobody watching costs one `if`. Everything here imports
nothing from microtorch, so every layer may use it.
"""
import functools
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
# How many saved_tensors_hooks blocks are open, in all threads: while none is, saving a tensor
# skips the thread-local read of the stack (as costly as a call, and done for every saved tensor).
saved_hooks_open = 0
_counting = threading.Lock()


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
        _count_open(+1)
        return self

    def __exit__(self, *exc):
        _saved_hooks_stack().pop()
        _count_open(-1)


def _count_open(change):
    global saved_hooks_open
    with _counting:  # (+= on a global is not atomic between threads)
        saved_hooks_open += change


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
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with disable_saved_tensors_hooks(self.error_message):
                return fn(*args, **kwargs)
        return wrapper


# -- named ranges around public functions (the profiler's) -------------------------------------------------------
range_opener = None  # set by a recording profiler: range_opener(name, args) opens a range and returns its closer


def composite(name):
    """Decorate a public function that picks the op doing its work (matmul picks mm, mv or bmm) so that a recording
    profiler shows torch's range around it (`aten::matmul` holding `aten::mm`). Nobody profiling: one check."""
    def decorate(fn):
        @functools.wraps(fn)
        def ranged(*args, **kwargs):
            opener = range_opener
            if opener is None:
                return fn(*args, **kwargs)
            close = opener(name, args)
            try:
                return fn(*args, **kwargs)
            finally:
                close()
        return ranged
    return decorate
