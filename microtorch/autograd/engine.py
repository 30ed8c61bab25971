"""The backward engine: a short loop over a ready queue, no recursion.

1. Count, for every node reachable from the roots, how many edges lead into it.
2. Start with the roots' seed gradients in their nodes' buffers.
3. Repeatedly take the ready node created last (torch's order), run its hooks and backward,
   undo broadcasting on what it returns, add the results into the buffers of
   `next_functions`, and mark a node ready once all its incoming edges have delivered.
`AccumulateGrad` nodes write `.grad` on leaves. Saved tensors are freed as nodes finish
unless `retain_graph=True`.
"""
import heapq
import itertools
import threading

import numpy as np

from .._tensor import Tensor
from . import _hooks, anomaly_mode, grad_mode
from .node import AccumulateGrad, Node, accumulator as _accumulator

_local = threading.local()


def current_task():
    return _local.__dict__.get("task")


class _GraphRoot(Node):
    """Feeds the seed gradients into the roots' nodes."""

    _seq = 2 ** 64

    def __init__(self, edges, grads):
        self.next_functions = tuple(edges)
        self.grads = grads

    def name(self):
        return "GraphRoot"


class _Task:
    """One call of backward / autograd.grad: the state the loop shares with hooks."""

    _ids = itertools.count()

    def __init__(self, deps, needed, captures, accumulate):
        self.id = next(self._ids)
        self.deps = deps
        self.needed = needed
        self.captures = captures
        self.accumulate = accumulate

    def will_execute(self, node):
        """torch._C._will_engine_execute_node: will this backward run (or capture at) node?"""
        if not self.accumulate and type(node) is AccumulateGrad:
            raise RuntimeError("A leaf node was passed to _will_engine_execute_node but we are currently running "
                               "autograd.grad(). This is currently not supported.")
        return node in self.deps and (self.needed is None or node in self.needed or node in self.captures)


def _edge_of(t):
    if t.grad_fn is not None:
        return (t.grad_fn, t._output_nr)
    return (_accumulator(t), 0)


def run_backward(roots, grads, retain_graph, create_graph, inputs=None, accumulate=True):
    """Run backward from `roots` seeded with `grads`.

    accumulate=True (Tensor.backward): write `.grad` of leaves (only of `inputs` if given).
    accumulate=False (autograd.grad): return the gradients of `inputs`, touch no `.grad`.
    """
    root = _GraphRoot([_edge_of(t) for t in roots], list(grads))

    # 1. dependencies: how many edges point into each reachable node
    deps = {}
    stack = [root]
    while stack:
        node = stack.pop()
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            if nxt in deps:
                deps[nxt] += 1
            else:
                deps[nxt] = 1
                stack.append(nxt)

    # 2. with `inputs`, run only the nodes on a path to them. backward(inputs=) runs the
    #    inputs' own nodes (a non-leaf input gets retain_grad, as in torch); autograd.grad
    #    captures the gradient arriving at each input's node instead.
    needed = None
    captures = {}     # node -> [(output_nr, index into results)]
    if inputs is not None:
        targets = set()
        for k, t in enumerate(inputs):
            node, nr = _edge_of(t)
            if accumulate:
                if t.grad_fn is not None:
                    t.retain_grad()
                targets.add(node)
            else:
                captures.setdefault(node, []).append((nr, k))
        needed = _needed_nodes(root, deps, targets, captures)
    results = [None] * (len(inputs) if inputs is not None else 0)

    listening = bool(_hooks._listeners)
    if listening:
        _hooks.emit(_hooks.BackwardStarted(tuple(roots), tuple(grads),
                                         tuple(inputs) if inputs is not None else None,
                                         create_graph, retain_graph))

    task = _Task(deps, needed, captures, accumulate)
    prev_task = getattr(_local, "task", None)
    _local.task = task
    anomaly = anomaly_mode.is_anomaly_enabled()
    check_nan = anomaly and anomaly_mode.is_anomaly_check_nan_enabled()
    buffers = {}
    ready = [(-root._seq, 0, root)]
    changed = dict(deps) if listening else None   # counts for the next NodeExecuting: all, then what changed
    tie = 1
    try:
        with grad_mode.set_grad_enabled(create_graph):
            while ready:
                node = heapq.heappop(ready)[2]
                if node is root:
                    outgoing = root.grads
                    if listening:
                        _hooks.emit(_hooks.NodeExecuting(root, (), tuple(outgoing), _queued(ready), _changes(changed)))
                else:
                    incoming = buffers.pop(node, None) or [None] * node._num_outputs
                    if anomaly:
                        outgoing = _run_node_anomaly(node, incoming, task, create_graph, retain_graph, check_nan,
                                                     listening, ready, changed, results)
                    else:
                        outgoing = _run_node(node, incoming, task, create_graph, retain_graph, False,
                                             listening, ready, changed, results)
                for i, (nxt, nr) in enumerate(node.next_functions):
                    if nxt is None:
                        continue
                    if outgoing is not None:
                        g = outgoing[i]
                        if g is not None:
                            buf = buffers.get(nxt)
                            if buf is None:
                                buf = buffers[nxt] = [None] * nxt._num_outputs
                            buf[nr] = g if buf[nr] is None else buf[nr] + g
                    deps[nxt] -= 1
                    if listening:
                        changed[nxt] = deps[nxt]
                    if deps[nxt] == 0 and (needed is None or nxt in needed or nxt in captures):
                        heapq.heappush(ready, (-nxt._seq, tie, nxt))
                        tie += 1
    finally:
        _local.task = prev_task
    if listening:
        _hooks.emit(_hooks.BackwardFinished(tuple(roots)))
    return results


def _queued(ready):
    return tuple(n for _, _, n in sorted(ready))


def _changes(changed):
    """The dependency counts changed since the last NodeExecuting (then forgets them)."""
    if not changed:
        return {}
    out = dict(changed)
    changed.clear()
    return out


def _run_node(node, incoming, task, create_graph, retain_graph, check_nan, listening, ready, changed, results):
    """One step of the loop: tensor hooks, capture (autograd.grad), then the node itself.
    Returns the gradients for next_functions, or None if the node does not run."""
    incoming = _call_tensor_pre_hooks(node, incoming, listening)
    caps = task.captures.get(node) if task.captures else None
    if caps:
        for nr, k in caps:
            results[k] = incoming[nr]
            if listening:
                _hooks.emit(_hooks.HookFired("capture", node, None, incoming[nr], incoming[nr]))
    if task.needed is not None and node not in task.needed:
        return None
    return _execute(node, incoming, create_graph, retain_graph, check_nan, listening, ready, changed)


def _run_node_anomaly(node, incoming, task, *args):
    """_run_node, and on any error warn with the forward stack that created the node (and the
    node whose backward created it), as torch's anomaly mode does."""
    prev = getattr(anomaly_mode._state, "current_node", None)
    anomaly_mode._state.current_node = node
    try:
        return _run_node(node, incoming, task, *args)
    except Exception:
        _warn_anomaly(node)
        raise
    finally:
        anomaly_mode._state.current_node = prev


def _warn_anomaly(node):
    trace = node._anomaly_trace
    if trace is None:
        return
    anomaly_mode.warn_at_user_code(
        f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n{trace}")
    parent = node._anomaly_parent
    while parent is not None:
        ptrace = parent._anomaly_trace
        if ptrace is None:
            break
        anomaly_mode.warn_at_user_code(f"\n\nPrevious calculation was induced by {parent.name()}. Traceback of "
                                       f"forward call that induced the previous calculation:\n{ptrace}")
        parent = parent._anomaly_parent


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
    needed = set()
    for node in reversed(order):
        if node in targets or any(n is not None and (n in needed or n in captures)
                                  for n, _ in node.next_functions):
            needed.add(node)
    needed.add(root)
    return needed


def _fire(kind, target, hook, before, after, listening):
    if listening:
        _hooks.emit(_hooks.HookFired(kind, target, hook, before, after))


def _hook_name(hook):
    return getattr(hook, "__name__", type(hook).__name__)


def _check_hook_value(new, old, hook, what):
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


def _check_hook_values(new, old, hook, what):
    """A node hook's result: a sequence with one gradient (or None) per value it was given."""
    new = tuple(new) if isinstance(new, (tuple, list)) else (new,)
    if len(new) != len(old):
        raise RuntimeError(f"hook {_hook_name(hook)!r} has returned an incorrect number of values (got {len(new)}, "
                           f"but expected {len(old)}) (hook registered on {what})")
    for n, o in zip(new, old):
        if n is not None:
            _check_hook_value(n, o, hook, what)
    return new


def _call_tensor_pre_hooks(node, grads, listening):
    """Tensor hooks (register_hook), then retain_grad, before the node runs (torch's order)."""
    if type(node) is AccumulateGrad:
        var = node.variable
        hooks = var._backward_hooks
        if hooks:
            for hook in list(hooks.values()):
                before = grads[0]
                new = hook(before)  # None when no gradient arrived, as in torch
                if new is not None:
                    _check_hook_value(new, before, hook, f"a leaf tensor of shape {list(var.shape)}")
                    grads[0] = new
                _fire("tensor", var, hook, before, grads[0], listening)
        return grads
    hooks = node._tensor_pre_hooks
    if hooks:
        for nr, hook in list(hooks.values()):
            before = grads[nr]
            new = hook(before)  # None when no gradient arrived for this output, as in torch
            if new is not None:
                _check_hook_value(new, before, hook, f"the tensor that is output {nr} of {node.name()}")
                grads[nr] = new
            _fire("tensor", node, hook, before, grads[nr], listening)
    retains = node._retains_grad
    if retains:
        for nr, ref in list(retains.items()):
            t = ref()
            if t is None or grads[nr] is None:
                continue
            g = grads[nr]
            before = t._grad
            t._grad = (g.detach().clone() if not g._requires_grad else g.clone()) if before is None else before + g
            _fire("retain_grad", t, None, before, t._grad, listening)
    return grads


def _execute(node, grads, create_graph, retain_graph, check_nan, listening, ready=(), changed=None):
    """Node pre-hooks, the node's backward (or the accumulation into .grad), node post-hooks.
    The NodeExecuting event is emitted right after the backward, before the post-hooks."""
    pre = node._pre_hooks
    if pre:
        for hook in list(pre.values()):
            before = tuple(grads)
            new = hook(before)
            if new is not None:
                grads = list(_check_hook_values(new, before, hook, f"{node.name()} (a pre-hook)"))
            _fire("node_pre", node, hook, before, tuple(grads), listening)

    if type(node) is AccumulateGrad:
        if listening:
            _hooks.emit(_hooks.NodeExecuting(node, tuple(grads), (), _queued(ready), _changes(changed)))
        var = node.variable
        if grads[0] is not None:
            _accumulate_into(var, grads[0], create_graph, node, listening)
        hooks = var._post_acc_hooks
        if hooks:
            for hook in list(hooks.values()):
                hook(var)
                if listening:
                    g = var._grad if var._grad is None else Tensor._make(var._grad._data.copy())
                    _fire("post_accumulate", var, hook, g, g, listening)
        outgoing = ()
    else:
        if all(g is None for g in grads):
            outgoing = (None,) * len(node.next_functions)
        else:
            outgoing = _validate(node, node._backward(grads))
        if check_nan:
            _check_nan(node, outgoing)
        if listening:
            _hooks.emit(_hooks.NodeExecuting(node, tuple(grads), tuple(outgoing), _queued(ready), _changes(changed)))

    post = node._post_hooks
    if post:
        for hook in list(post.values()):
            before = tuple(outgoing)
            new = hook(before, tuple(grads))
            if new is not None:
                outgoing = _check_hook_values(new, before, hook, f"{node.name()} (a post-hook)")
            _fire("node_post", node, hook, before, tuple(outgoing), listening)
    if not retain_graph:
        node._release()
    return outgoing


def _validate(node, outs):
    """torch's validate_outputs: the right number of gradients, each summed back to its
    input's shape when broadcasting widened it (the one place broadcasting is undone)."""
    edges = node.next_functions
    n = len(edges)
    if len(outs) != n:
        if len(outs) > n and all(o is None for o in outs[n:]):
            outs = outs[:n]
        else:
            raise RuntimeError(f"function {node.name()} returned an incorrect number of gradients "
                               f"(expected {n}, got {len(outs)}): return one gradient (or None) per "
                               "input of forward")
    result = list(outs)
    meta = node._in_meta
    for i, g in enumerate(result):
        if g is None or edges[i][0] is None:
            if g is not None and meta[i] is None and not getattr(getattr(node, "_forward_cls", None), "_numpy_forward", True):
                raise RuntimeError(f"function {node.name()} returned a gradient different than None at position "
                                   f"{i + 1}, but the corresponding forward input was not a Variable")
            result[i] = None
            continue
        if not isinstance(g, Tensor):
            raise RuntimeError(f"expected Variable or None (got {type(g).__name__}): function {node.name()} "
                               f"returned it as gradient {i}; return a Tensor or None per input")
        shape, dtype = meta[i]
        if g._data.shape != shape:
            try:
                np.broadcast_shapes(shape, g._data.shape)
                ok = len(g._data.shape) >= len(shape) and np.broadcast_shapes(shape, g._data.shape) == g._data.shape
            except ValueError:
                ok = False
            if not ok:
                raise RuntimeError(f"Function {node.name()} returned an invalid gradient at index {i} - "
                                   f"got {list(g.shape)} but expected shape compatible with {list(shape)}")
            from ..ops.shape import sum_to
            g = sum_to(g, shape)
        if g._data.dtype is not dtype.np and g.dtype is not dtype:  # (the identity test is the fast path)
            if g.dtype.is_complex and not dtype.is_complex:
                g = g.real
            g = g.to(dtype)
        result[i] = g
    return tuple(result)


def _accumulate_into(var, grad, create_graph, node, listening):
    """Add `grad` into `var.grad` (a copy on first write, so no two leaves share storage)."""
    before = var._grad
    before_value = before
    if before is None:
        if create_graph:  # torch copies with copy_, so .grad has its own storage and a CopyBackwards node
            from ..ops.inplace import _copy
            var._grad = _copy(Tensor._make(np.empty_like(grad._data)), grad)
        else:
            var._grad = Tensor._make(grad._data.copy())
    elif create_graph or grad_mode.is_grad_enabled():
        var._grad = before + grad
    else:  # in place, as torch does outside create_graph
        if listening:
            before_value = Tensor._make(before._data.copy())
        before._data += grad._data.astype(before._data.dtype, copy=False)
        before._version_counter[0] += 1
    if listening:  # snapshots: .grad may later change in place, the event must not
        _hooks.emit(_hooks.GradAccumulated(var, node, before_value, grad, Tensor._make(var._grad._data.copy())))


def _check_nan(node, outgoing):
    for i, g in enumerate(outgoing):
        if g is not None and np.isnan(g._data).any():
            trace = node._anomaly_trace
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output."
                               + (f"\nThe forward call that created {node.name()} (recorded by anomaly mode):\n"
                                  f"{trace}" if trace else ""))


# ---- public entry points ------------------------------------------------------------------
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
                if not (out.dtype.is_floating_point or out.dtype.is_complex):
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
    run_backward(tensors, grads, retain_graph, create_graph, inputs=inputs, accumulate=True)


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
        from ..func import _batched_grad
        return _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                             materialize_grads)
    grads = _make_grads(outputs, grad_outputs)
    results = run_backward(outputs, grads, retain_graph, create_graph, inputs=inputs, accumulate=False)
    for k, r in enumerate(results):
        if r is None:
            if materialize_grads:
                results[k] = Tensor._make(np.zeros(inputs[k]._data.shape, inputs[k].dtype.np))
            elif not allow_unused:
                raise RuntimeError(
                    "One of the differentiated Tensors appears to not have been used in the graph. "
                    "Set allow_unused=True if this is the desired behavior.")
        elif not create_graph and r._requires_grad:
            results[k] = r.detach()
    return tuple(results)
