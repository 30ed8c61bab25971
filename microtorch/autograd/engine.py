"""The backward engine: a short loop over a ready queue, no recursion.

`run_backward` is the whole algorithm:

1. Count, for every node reachable from the roots, how many edges lead into it.
2. With `inputs`, keep only the nodes on a path to them.
3. Start from a root node that hands out the seed gradients.
4. Repeatedly take the ready node created last (torch's order) and run it on the gradients
   buffered for it: hooks, its backward (or, for a leaf's AccumulateGrad, the write into
   `.grad`), hooks. Add what it returns into the buffers of its `next_functions`, and mark a
   node ready once all its incoming edges have delivered.

Saved tensors are freed as nodes finish unless `retain_graph=True`. Hooks, checks and anomaly
mode live beside this file (engine_hooks.py, engine_checks.py); events for viz are built only
when somebody listens.
"""
import heapq
import itertools
import sys
import threading

import numpy as np

from .._tensor import Tensor
from ..ops.inplace import _copy
from . import _hooks, anomaly_mode, engine_checks, engine_hooks, grad_mode, views
from .extension import transforms
from .._quiet import quietly
from .node import AccumulateGrad, Node, edge

_local = threading.local()


def current_task():
    """The GraphTask of the backward running in this thread (None outside backward)."""
    return _local.__dict__.get("task")


class GraphRoot(Node):
    """Feeds the seed gradients into the roots' nodes."""

    _seq = 2 ** 64

    def __init__(self, roots, grads):
        self.next_functions = tuple(edge(t) for t in roots)
        self.grads = tuple(grads)

    def name(self):
        return "GraphRoot"


class GraphTask:
    """The state of one call of backward / autograd.grad, shared by the loop and the hooks."""

    _ids = itertools.count()

    def __init__(self, roots, grads, retain_graph, create_graph, inputs, accumulate):
        self.id = next(self._ids)
        self.root = GraphRoot(roots, grads)
        self.retain_graph, self.create_graph, self.accumulate = retain_graph, create_graph, accumulate
        self.deps = _count_dependencies(self.root)
        self.needed, self.captures = _restrict_to(inputs, accumulate, self.root, self.deps)
        self.results = [None] * (len(inputs) if inputs is not None else 0)
        self.buffers = {}       # node -> [gradient per output of its op], summed as they arrive
        self.ready = []         # heap of (-creation order, tie, node)
        self._tie = itertools.count()
        self.anomaly = anomaly_mode.is_anomaly_enabled()
        self.check_nan = self.anomaly and anomaly_mode.is_anomaly_check_nan_enabled()
        self.listening = bool(_hooks._listeners)
        self.watched = self.listening or self.check_nan or bool(self.captures) or self.needed is not None
        self.changed = dict(self.deps) if self.listening else None  # counts changed since the last event

    def should_run(self, node):
        return self.needed is None or node in self.needed or node in self.captures

    def will_execute(self, node):
        """torch._C._will_engine_execute_node: will this backward run (or capture at) node?"""
        if not self.accumulate and type(node) is AccumulateGrad:
            raise RuntimeError("A leaf node was passed to _will_engine_execute_node but we are currently running "
                               "autograd.grad(). This is currently not supported.")
        return node in self.deps and self.should_run(node)


def run_backward(roots, grads, retain_graph, create_graph, inputs=None, accumulate=True):
    """Run backward from `roots` seeded with `grads` (steps 1-4 above).

    accumulate=True (Tensor.backward): write `.grad` of leaves (only of `inputs` if given).
    accumulate=False (autograd.grad): return the gradients of `inputs`, touch no `.grad`.
    Called through `quietly`, so numpy is made quiet once per backward rather than per op.
    """
    task = GraphTask(roots, grads, retain_graph, create_graph, inputs, accumulate)  # steps 1, 2
    if task.listening:
        _emit_started(roots, grads, inputs, create_graph, retain_graph)
    ready = task.ready
    previous, _local.task = current_task(), task
    try:
        with grad_mode.set_grad_enabled(create_graph):
            if task.listening:                                                  # step 3
                _emit_executing(task, task.root, (), task.root.grads)
            _pass_on(task, task.root, validate_outputs(task.root, task.root.grads))  # (cast as torch: a float32
            # gradient for a float64 output becomes float64 before backward starts)
            while ready:                                                        # step 4
                node = _heappop(ready)[2]
                _pass_on(task, node, _run_node(task, node) if not task.anomaly else
                         engine_checks.run_with_anomaly(node, _run_node, task, node))
    finally:
        _local.task = previous
    if task.listening:
        _hooks.emit(_hooks.BackwardFinished(tuple(roots)))
    return task.results


def _pass_on(task, node, outgoing):
    """Add each gradient that node returned into the buffer of the node its edge leads to, and
    queue that node once all its incoming edges have delivered. (No local of the loop above
    keeps a gradient alive, so AccumulateGrad can tell when nobody else holds one.)"""
    deps, buffers, changed, needed = task.deps, task.buffers, task.changed, task.needed
    for (nxt, nr), g in zip(node.next_functions, outgoing or _NOTHING):
        if nxt is None:
            continue
        if g is not None:
            buf = buffers.get(nxt)
            if buf is None:
                buf = buffers[nxt] = [None] * nxt._num_outputs
            buf[nr] = g if buf[nr] is None else _sum(buf[nr], g)
        left = deps[nxt] = deps[nxt] - 1
        if changed is not None:
            changed[nxt] = left
        if left == 0 and (needed is None or task.should_run(nxt)):
            _heappush(task.ready, (-nxt._seq, next(task._tie), nxt))


_heappush, _heappop = heapq.heappush, heapq.heappop


def _sum(a, b):
    """Two gradients for the same input (same shape and dtype: both were checked against the node
    they flow into). Plain gradients outside create_graph: their arrays are added directly, as
    torch's input buffer does. Else (the sum is recorded, or carries tangents or a vmap batch) `+`."""
    if (grad_mode._state.__dict__.get("enabled", True) or type(a) is not Tensor or type(b) is not Tensor
            or a._fw_grads or b._fw_grads or type(a._data) is not np.ndarray or type(b._data) is not np.ndarray):
        return a + b if not (a._sparse or b._sparse) else _sparse_sum(a, b)
    return Tensor._make(np.asarray(a._data + b._data))  # (numpy gives a scalar for 0-d arrays)


def _sparse_sum(a, b):
    """Two gradients of which one is sparse (a sparse tensor adds dense ones to its dense form)."""
    return a._sum_with(b) if a._sparse else b._sum_with(a)


_NOTHING = itertools.repeat(None)  # the gradients of a node that did not run


def _run_node(task, node):
    """One step of the loop: the node's backward on its buffered gradients, then its saved
    tensors freed. Returns the gradients for next_functions. (A node with hooks, a leaf's
    AccumulateGrad, and any node while somebody watches go through _run_watched.)"""
    if node._hooked or task.watched or type(node) is AccumulateGrad:
        return _run_watched(task, node)
    outgoing = _backward_of(node, task.buffers.pop(node, None) or [None] * node._num_outputs)
    if not task.retain_graph:
        _free(node)
    return outgoing


def _run_watched(task, node):
    """_run_node with everything around the backward: the tensor hooks of its outputs, the
    capture autograd.grad asked for, the node's own hooks, the NaN check and the event.
    Returns None if the node does not need to run."""
    grads = task.buffers.pop(node, None) or [None] * node._num_outputs
    runs, captured = task.needed is None or node in task.needed, task.captures and node in task.captures
    if captured and runs:  # as torch: a node that runs on is captured at before its tensor hooks, ...
        _capture(task, node, grads)
    if node._tensor_pre_hooks or node._retains_grad or type(node) is AccumulateGrad and node.variable._backward_hooks:
        grads = engine_hooks.call_tensor_hooks(node, grads, task.listening)
    if not runs:
        if captured:  # ... one that does not, after them
            _capture(task, node, grads)
        return None
    if node._pre_hooks:
        grads = engine_hooks.call_pre_hooks(node, grads, task.listening)
    if type(node) is AccumulateGrad:
        outgoing = _accumulate(task, node, grads)
    else:
        outgoing = _backward_of(node, grads) if task.needed is None else _backward_for_inputs(task, node, grads)
        if task.check_nan:
            engine_checks.check_nan(node, outgoing)
        if task.listening:
            _emit_executing(task, node, grads, outgoing)
    if node._post_hooks:
        outgoing = engine_hooks.call_post_hooks(node, outgoing, grads, task.listening)
    if not task.retain_graph:
        _free(node)
    return outgoing


def _backward_of(node, grads):
    """The node's backward, checked, if any gradient reached it (else None for every edge)."""
    if grads[0] is None if len(grads) == 1 else all(g is None for g in grads):
        return (None,) * len(node.next_functions)
    return validate_outputs(node, node._backward(grads))


def _backward_for_inputs(task, node, grads):
    """_backward_of when this backward wants some inputs only (autograd.grad(y, x), backward(inputs=)): a built-in
    op's backward is told, through needs_input_grad, which of its inputs lead there (torch's
    task_should_compute_output), so it neither computes nor fails on the others' gradients (igamma's first
    argument has none). A custom Function's needs_input_grad stays what forward saw, as in torch."""
    static = node.needs_input_grad
    cls = getattr(node, "_forward_cls", None)
    if cls is None or not cls._numpy_forward:
        return _backward_of(node, grads)
    wanted = list(static)
    for (nxt, _), i in zip(node.next_functions, node.edge_inputs()):
        if nxt is None or not task.should_run(nxt):
            wanted[i] = False
    if wanted == list(static):
        return _backward_of(node, grads)
    node.needs_input_grad = tuple(wanted)
    try:
        return _backward_of(node, grads)
    finally:
        node.needs_input_grad = static


def _free(node):
    """What the node saved for backward, freed (most nodes of scalar code save nothing)."""
    if node._saved:
        node._release()
    else:
        node._saved = None


validate_outputs = engine_checks.validate_outputs


def _capture(task, node, grads):
    """autograd.grad(inputs=...): keep the gradient arriving for each input at its node."""
    for nr, k in task.captures[node]:
        task.results[k] = grads[nr]
        engine_hooks.fire("capture", node, None, grads[nr], grads[nr], task.listening)


def _accumulate(task, node, grads):
    """AccumulateGrad: add the gradient into the leaf's .grad, then its post-accumulate hooks."""
    if task.listening:
        _emit_executing(task, node, grads, ())
    var = node.variable
    if grads[0] is not None:
        accumulate_into(var, grads[0], task.create_graph, node, task.listening)
    if var._post_acc_hooks:
        engine_hooks.call_post_accumulate_hooks(var, task.listening)
    return ()


def accumulate_into(var, grad, create_graph, node, listening):
    """Add `grad` into `var.grad` (a copy on first write, so no two leaves share storage)."""
    before = before_value = var._grad
    if before is None:
        if create_graph:  # torch copies with copy_, so .grad has its own storage and a CopyBackwards node
            var._grad = _copy(Tensor._make(np.empty_like(grad._data)), grad)
        elif grad._sparse or var._sparse:  # (a sparse gradient is kept as made; a dense one copied)
            var._grad = grad.detach() if grad._sparse else Tensor._make(grad._data.copy())
        elif _nobody_else_holds(grad) and _obeys_layout(grad._data, var._data):
            var._grad = Tensor._make(grad._data)  # torch keeps it too (no copy) when laid out like var
        else:
            var._grad = Tensor._make(_copy_in_layout(grad._data, var._data))
    elif before._sparse or grad._sparse:
        var._grad = _sparse_sum(before, grad)
    elif create_graph or grad_mode.is_grad_enabled():
        var._grad = before + grad
    else:  # in place, as torch does outside create_graph
        if listening:
            before_value = Tensor._make(before._data.copy())
        before._data += grad._data.astype(before._data.dtype, copy=False)
        views.bump_version(before)
    if listening:  # snapshots: .grad may later change in place, the event must not
        _hooks.emit(_hooks.GradAccumulated(var, node, before_value, grad, Tensor._make(var._grad._data.copy())))


def _obeys_layout(g, v):
    """torch's layout contract for .grad: a dense leaf's own strides (size-1 dims aside, unless broadcast), else
    C order. (A transposed leaf gets a transposed .grad, as in torch.)"""
    if g.strides == v.strides and g.flags.c_contiguous:  # (the common case: both in C order)
        return True
    if not _dense(v):
        return g.flags.c_contiguous
    return all(gs == vs if n != 1 else gs != 0 for gs, vs, n in zip(g.strides, v.strides, v.shape))


def _copy_in_layout(g, v):
    """A copy of g laid out as torch lays out a new .grad: like the leaf v when v is dense, else in C order."""
    if not _dense(v) or g.itemsize != v.itemsize:
        return g.copy()
    out = np.lib.stride_tricks.as_strided(np.empty(v.size, g.dtype), v.shape, v.strides)  # (torch's empty_strided:
    out[...] = g                                                                          # v's very strides)
    return out


def _dense(a):
    """a's elements fill its memory with neither gaps nor overlaps, in some order of its dims."""
    if a.flags.c_contiguous or a.flags.f_contiguous:
        return True
    step = a.itemsize
    for stride, n in sorted((s, n) for s, n in zip(a.strides, a.shape) if n != 1):
        if stride != step:
            return False
        step *= n
    return True


# References to a gradient that only the engine holds, counted in _nobody_else_holds: the list of
# the node's gradients, the arguments of accumulate_into, of _nobody_else_holds, of getrefcount.
# Counted on CPython 3.11 (3.14 borrows references, PyPy has no getrefcount): elsewhere .grad is
# always a copy, as it was before.
_ENGINE_REFS = 4
_COUNTED = sys.implementation.name == "cpython" and sys.version_info[:2] == (3, 11)


def _nobody_else_holds(grad):
    """Nothing outside the engine refers to this gradient (a hook that kept it, another node's
    buffer, a saved tensor) or to its memory: its array owns its memory, or is a view of the
    whole of an array that only it and the tensor it was made from see (the transposed product
    that mm's backward returns for `weight.t()`)."""
    data = grad._data
    if not _COUNTED or type(data) is not np.ndarray or not data.flags.writeable:
        return False
    if sys.getrefcount(grad) != _ENGINE_REFS or sys.getrefcount(data) != 3:  # (grad._data, data, argument)
        return False
    owner, parent = data.base, grad._base
    if owner is None:
        return True
    if type(owner) is not np.ndarray or owner.base is not None or owner.size != data.size:
        return False
    via_parent = (parent is not None and sys.getrefcount(parent) == 3 and type(parent._data) is np.ndarray
                  and (parent._data is owner or parent._data.base is owner and sys.getrefcount(parent._data) == 2))
    return sys.getrefcount(owner) == 3 + via_parent  # (data.base, owner, argument, [the parent's array])


# ---- the graph before the loop: steps 1 and 2 ------------------------------------------------
def _count_dependencies(root):
    """node -> how many edges point into it, for every node reachable from root."""
    deps, stack = {}, [root]
    while stack:
        for nxt, _ in stack.pop().next_functions:
            if nxt is None:
                continue
            if nxt in deps:
                deps[nxt] += 1
            else:
                deps[nxt] = 1
                stack.append(nxt)
    return deps


def _restrict_to(inputs, accumulate, root, deps):
    """(needed, captures). Without `inputs` every node runs (needed None). backward(inputs=)
    runs the inputs' own nodes (a non-leaf input gets retain_grad, as in torch); autograd.grad
    captures the gradient arriving at each input's node instead (captures: node -> [(nr, k)])."""
    if inputs is None:
        return None, {}
    targets, captures = set(), {}
    for k, t in enumerate(inputs):
        node, nr = edge(t)
        if accumulate:
            if t.grad_fn is not None:
                t.retain_grad()
            targets.add(node)
        else:
            captures.setdefault(node, []).append((nr, k))
    return _needed_nodes(root, deps, targets, captures), captures


def _needed_nodes(root, deps, targets, captures):
    """Nodes that must run: the targets and every node from which a target or a captured
    node is reachable. A captured node runs only if it leads further to another."""
    order, indeg, frontier = [], dict(deps), [root]
    while frontier:  # Kahn's algorithm gives a topological order without recursion
        node = frontier.pop()
        order.append(node)
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            indeg[nxt] -= 1
            if indeg[nxt] == 0:
                frontier.append(nxt)
    needed = {root}
    for node in reversed(order):
        if node in targets or any(n is not None and (n in needed or n in captures) for n, _ in node.next_functions):
            needed.add(node)
    return needed


# ---- events (built only when somebody listens) ------------------------------------------------
def _emit_started(roots, grads, inputs, create_graph, retain_graph):
    _hooks.emit(_hooks.BackwardStarted(tuple(roots), tuple(grads), tuple(inputs) if inputs is not None else None,
                                       create_graph, retain_graph))


def _emit_executing(task, node, incoming, outgoing):
    """NodeExecuting: what went in and out, the ready queue, and the dependency counts changed
    since the previous event (then forgotten: replaying the changes gives the full state)."""
    queued = tuple(n for _, _, n in sorted(task.ready, key=lambda e: e[:2]))
    changed = dict(task.changed)
    task.changed.clear()
    _hooks.emit(_hooks.NodeExecuting(node, tuple(incoming), tuple(outgoing), queued, changed))


# ---- public entry points ------------------------------------------------------------------
def _tensor_backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate d(self)/d(leaf) into every leaf's .grad (see autograd.backward)."""
    backward(self, gradient, retain_graph, create_graph, inputs=inputs)


_tensor_backward.__name__ = _tensor_backward.__qualname__ = "backward"
Tensor.backward = _tensor_backward  # Tensor sits below the engine: the engine adds this method


def _as_tuple(x):
    if x is None:
        return None
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _make_grads(outputs, grad_outputs, is_grads_batched=False):
    grads = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if g is None:
            if out._requires_grad:
                if out.numel() != 1:
                    raise RuntimeError(
                        f"grad can be implicitly created only for scalar outputs: output {i} has shape "
                        f"{list(out.shape)}; pass gradient= (e.g. microtorch.ones_like(output)) or "
                        "reduce it to a scalar first (output.sum())")
                if not out.dtype.is_floating_point:  # (a complex output too: its gradient is no derivative)
                    raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got {out.dtype}")
                g = Tensor._make(np.ones(out._data.shape, out.dtype.np))
        else:
            if not isinstance(g, Tensor):
                g = Tensor._make(np.asarray(g, dtype=out.dtype.np))
            if g.shape != out.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] has "
                    f"a shape of {out.shape}; the gradient must have the output's shape")
            if g.dtype.is_complex != out.dtype.is_complex:
                raise RuntimeError(
                    f"For complex Tensors, both grad_output and output are required to have the same "
                    f"dtype. Mismatch in dtype: grad_output[{i}] has a dtype of {g.dtype} and output[{i}] "
                    f"has a dtype of {out.dtype}.")
        grads.append(g)
    return grads


def _check_outputs(outputs):
    for i, out in enumerate(outputs):
        if not isinstance(out, Tensor):
            raise TypeError(f"backward: output {i} is a {type(out).__name__}, expected a Tensor")
        if not out._requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn. The output "
                "was computed from tensors that do not require grad (or under no_grad); call "
                "x.requires_grad_() on the inputs before computing it.")


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None,
             inputs=None):
    """Accumulate into `.grad` of the leaves (or of `inputs`) the gradient of `tensors`."""
    if grad_variables is not None:
        grad_tensors = grad_variables
    tensors = _as_tuple(tensors)
    if grad_tensors is None:
        grad_tensors = (None,) * len(tensors)
    else:
        grad_tensors = _as_tuple(grad_tensors)
    if len(grad_tensors) != len(tensors):
        raise RuntimeError(f"got {len(grad_tensors)} gradients for {len(tensors)} tensors; pass one "
                           "gradient (or None) per tensor")
    if retain_graph is None:
        retain_graph = create_graph
    inputs = _as_tuple(inputs)
    if inputs is not None:
        if len(inputs) == 0:
            raise RuntimeError("backward: 'inputs' argument to backward() cannot be empty.")
        for t in inputs:
            if not t._requires_grad:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
    _check_outputs(tensors)
    grads = _make_grads(tensors, grad_tensors)
    quietly(run_backward, tensors, grads, retain_graph, create_graph, inputs, True)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Return the gradients of `outputs` with respect to `inputs`, without touching `.grad`."""
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    single_input = isinstance(inputs, Tensor)
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    else:
        grad_outputs = _as_tuple(grad_outputs)
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(f"grad_outputs has {len(grad_outputs)} tensors but outputs has {len(outputs)}; "
                           "pass one grad_output per output")
    for t in inputs:
        if not isinstance(t, Tensor):
            raise TypeError(f"grad: inputs must be Tensors, got {type(t).__name__}")
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    if retain_graph is None:
        retain_graph = create_graph
    _check_outputs(outputs)
    if is_grads_batched:
        return transforms().batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                             materialize_grads)
    grads = _make_grads(outputs, grad_outputs)
    results = quietly(run_backward, outputs, grads, retain_graph, create_graph, inputs, False)
    for k, r in enumerate(results):
        if r is None:
            if materialize_grads:
                results[k] = Tensor._make(np.zeros(inputs[k]._data.shape, inputs[k].dtype.np))
            elif not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {k} appears to not have been used in the graph. "
                    "Set allow_unused=True if this is the desired behavior.")
        elif not create_graph and r._requires_grad:
            results[k] = r.detach()
    return tuple(results)
