"""The event stream (what the visualizer replays): the exact sequence for a diamond graph with
hooks, the values the events carry (checked against torch's gradients seen by node hooks),
and no cost but one `if` when nobody listens."""
import numpy as np
import pytest
import torch

import microtorch
from microtorch.autograd import graph


def describe(e):
    """An event as a short tuple: its type and what identifies it."""
    name = type(e).__name__
    if name == "NodeCreated":
        return (name, e.node.name(), len(e.inputs), len(e.outputs), len(e.saved))
    if name == "BackwardStarted":
        return (name, len(e.roots), e.inputs is None, e.create_graph, e.retain_graph)
    if name == "NodeExecuting":
        return (name, e.node.name(), tuple(n.name() for n in e.ready))
    if name == "HookFired":
        target = e.target.name() if hasattr(e.target, "next_functions") else "tensor"
        return (name, e.kind, target)
    if name == "GradAccumulated":
        return (name, e.before is None)
    return (name,)


def diamond(T, hooks=True, log=None):
    """x -> a = 2x -> (exp, sin) -> add -> sum, with a hook of each kind."""
    log = [] if log is None else log
    x = T.tensor([1.0, 2.0], requires_grad=True)
    a = x * 2
    b, c = a.exp(), a.sin()
    d = b + c
    loss = d.sum()
    if hooks:
        x.register_hook(lambda g: log.append(("tensor x", g)) or g * 1)
        a.register_hook(lambda g: log.append(("tensor a", g)))
        a.retain_grad()
        d.grad_fn.register_prehook(lambda go: log.append(("pre Add", go)))
        b.grad_fn.register_hook(lambda gi, go: log.append(("post Exp", gi)))
        x.register_post_accumulate_grad_hook(lambda t: log.append(("post acc", t.grad)))
    return x, a, b, c, d, loss


EXPECTED = [
    ("NodeCreated", "MulBackward0", 2, 1, 0),  # x * 2 keeps the 2 as a number (torch)
    ("NodeCreated", "ExpBackward0", 1, 1, 1),
    ("NodeCreated", "SinBackward0", 1, 1, 1),
    ("NodeCreated", "AddBackward0", 2, 1, 0),
    ("NodeCreated", "SumBackward0", 1, 1, 0),
    ("BackwardStarted", 1, True, False, False),
    ("NodeExecuting", "GraphRoot", ()),
    ("NodeExecuting", "SumBackward0", ()),
    ("HookFired", "node_pre", "AddBackward0"),
    ("NodeExecuting", "AddBackward0", ()),
    ("NodeExecuting", "SinBackward0", ("ExpBackward0",)),    # created last, runs first (torch's order)
    ("NodeExecuting", "ExpBackward0", ()),
    ("HookFired", "node_post", "ExpBackward0"),
    ("HookFired", "tensor", "MulBackward0"),                  # a's hook, once, with the summed gradient
    ("HookFired", "retain_grad", "tensor"),                   # retain_grad after the tensor hooks
    ("NodeExecuting", "MulBackward0", ()),
    ("HookFired", "tensor", "tensor"),                        # x's hook
    ("NodeExecuting", "torch::autograd::AccumulateGrad", ()),
    ("GradAccumulated", True),
    ("HookFired", "post_accumulate", "tensor"),
    ("BackwardFinished",),
]


def record(fn):
    events = []
    with graph.add_listener(events.append):
        result = fn()
    return events, result


def test_exact_event_sequence_for_a_diamond_with_hooks():
    events, _ = record(lambda: diamond(microtorch)[-1].backward())
    assert [describe(e) for e in events] == EXPECTED


def test_the_sequence_follows_the_order_torch_runs_nodes_and_hooks():
    # torch has no event stream, but node pre-hooks that log show the order its engine works in
    def torch_order():
        log = []
        x, a, b, c, d, loss = diamond(torch, log=log)
        for n in [loss.grad_fn, d.grad_fn, b.grad_fn, c.grad_fn, a.grad_fn, a.grad_fn.next_functions[0][0]]:
            n.register_prehook(lambda go, n=n: log.append(("run " + n.name(), None)))
        loss.backward()
        return [k for k, _ in log]

    events, _ = record(lambda: diamond(microtorch)[-1].backward())
    ours = []
    for e in events:
        if isinstance(e, graph.NodeExecuting) and e.node.name() != "GraphRoot":
            ours.append("run " + e.node.name())
        elif isinstance(e, graph.HookFired) and e.kind != "retain_grad":
            ours.append({"node_pre": "pre Add", "node_post": "post Exp", "post_accumulate": "post acc"}.get(e.kind)
                        or ("tensor x" if isinstance(e.target, microtorch.Tensor) else "tensor a"))
    assert ours == torch_order()


def _close(a, b):
    return np.allclose(np.asarray(a.detach().tolist()), np.asarray(b.detach().tolist()), rtol=1e-5)


def test_node_executing_carries_the_gradients_torch_computes():
    # torch's node hooks see each node's incoming (grad_outputs) and outgoing (grad_inputs)
    seen = {}
    x, a, b, c, d, loss = diamond(torch, hooks=False)
    for n in [loss.grad_fn, d.grad_fn, b.grad_fn, c.grad_fn, a.grad_fn]:
        n.register_hook(lambda gi, go, n=n: seen.__setitem__(n.name(), (go, gi)))
    loss.backward()

    events, _ = record(lambda: diamond(microtorch, hooks=False)[-1].backward())
    runs = {e.node.name(): e for e in events if isinstance(e, graph.NodeExecuting)}
    assert set(seen) <= set(runs)
    for name, (incoming, outgoing) in seen.items():
        e = runs[name]
        assert len(e.incoming) == len(incoming) and len(e.outgoing) == len(outgoing), name
        for ours, theirs in zip(e.incoming + e.outgoing, incoming + outgoing):
            assert (ours is None) == (theirs is None), name
            assert ours is None or _close(ours, theirs), name
    root = runs["GraphRoot"]
    assert root.incoming == () and root.outgoing[0].tolist() == 1.0


def test_outgoing_is_after_sum_to_and_hook_events_carry_before_and_after():
    def prog():
        x = microtorch.tensor([1.0, 2.0], requires_grad=True)
        y = (x * microtorch.ones(3, 2)).sum()   # x is broadcast: its gradient is summed back
        x.register_hook(lambda g: g * 10)
        y.backward()
        return x
    events, x = record(prog)
    mul = next(e for e in events if isinstance(e, graph.NodeExecuting) and e.node.name() == "MulBackward0")
    assert mul.incoming[0].shape == (3, 2) and mul.outgoing[0].shape == (2,)
    hook = next(e for e in events if isinstance(e, graph.HookFired))
    assert hook.kind == "tensor" and hook.target is x
    assert hook.before.tolist() == [3.0, 3.0] and hook.after.tolist() == [30.0, 30.0]


def test_grad_accumulated_before_and_after_across_backwards():
    x = microtorch.tensor([1.0, 2.0], requires_grad=True)
    events = []
    with graph.add_listener(events.append):
        (x * 2).sum().backward()
        (x * 3).sum().backward()
    acc = [e for e in events if isinstance(e, graph.GradAccumulated)]
    assert len(acc) == 2 and all(e.tensor is x for e in acc)
    assert acc[0].before is None and acc[0].contribution.tolist() == [2.0, 2.0] and acc[0].after.tolist() == [2.0, 2.0]
    assert acc[1].before.tolist() == [2.0, 2.0] and acc[1].contribution.tolist() == [3.0, 3.0]
    assert acc[1].after.tolist() == [5.0, 5.0] == x.grad.tolist()  # snapshots: .grad changed in place since


def test_backward_started_and_autograd_grad_capture():
    x = microtorch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    loss = (y * y).sum()
    events = []
    with graph.add_listener(events.append):
        (g,) = microtorch.autograd.grad(loss, y, create_graph=True)
    start = events[0]
    assert isinstance(start, graph.BackwardStarted) and start.inputs[0] is y
    assert start.create_graph and start.retain_graph and start.grads[0].tolist() == 1.0
    kinds = [describe(e) for e in events]
    assert ("HookFired", "capture", "MulBackward0") in kinds
    # the input's own node (y = x * 3) is captured, not run
    assert sum(1 for k in kinds if k[:2] == ("NodeExecuting", "MulBackward0")) == 1
    capture = next(e for e in events if isinstance(e, graph.HookFired) and e.kind == "capture")
    assert capture.after is not None and capture.after.tolist() == g.tolist()
    assert isinstance(events[-1], graph.BackwardFinished)


def test_node_created_carries_inputs_outputs_and_saved_tensors():
    def prog():
        x = microtorch.tensor([1.0, 2.0], requires_grad=True)
        w = microtorch.tensor([3.0, 4.0])
        y = x * w
        z = y.exp()
        with microtorch.no_grad():
            x * 2          # no graph, no event
        return x, w, y, z
    events, (x, w, y, z) = record(prog)
    assert [describe(e) for e in events] == [("NodeCreated", "MulBackward0", 2, 1, 2),
                                              ("NodeCreated", "ExpBackward0", 1, 1, 1)]
    mul, exp = events
    assert mul.node is y.grad_fn and mul.inputs[0] is x and mul.inputs[1] is w and mul.outputs[0] is y
    assert mul.saved[0] is None and mul.saved[1].tolist() == [3.0, 4.0]  # w needs no grad: x is not saved
    assert exp.saved[0].tolist() == z.tolist()   # exp saves its output


def test_listeners_are_removable_and_see_events_in_order():
    a, b = [], []
    ha = graph.add_listener(a.append)
    hb = graph.add_listener(b.append)
    x = microtorch.tensor([1.0], requires_grad=True)
    (x * 2).sum().backward()
    ha.remove()
    ha.remove()
    (x * 2).sum().backward()
    hb.remove()
    assert len(b) == 2 * len(a) and [type(e) for e in a] == [type(e) for e in b[:len(a)]]
    assert not graph._listeners


def test_nobody_listening_costs_one_if(monkeypatch):
    assert not graph._listeners

    def boom(event):
        raise AssertionError("emit called with nobody listening")
    monkeypatch.setattr(graph, "emit", boom)
    for cls in (graph.NodeCreated, graph.NodeExecuting, graph.HookFired, graph.GradAccumulated,
                graph.BackwardStarted, graph.BackwardFinished):
        monkeypatch.setattr(graph, cls.__name__, boom)   # no event object is even built
    x, a, b, c, d, loss = diamond(microtorch)
    loss.backward()
    a2 = microtorch.tensor([1.0, 2.0], requires_grad=True) * 1
    a2[0] = 5.0
    microtorch.autograd.grad(a2.sum(), a2)
    assert x.grad is not None


@pytest.mark.parametrize("T", [torch, microtorch], ids=["torch", "microtorch"])
def test_the_diamond_gradients_themselves(T):
    x, a, b, c, d, loss = diamond(T)
    loss.backward()
    expected = 2 * (np.exp([2.0, 4.0]) + np.cos([2.0, 4.0]))
    assert np.allclose(x.grad.tolist(), expected, rtol=1e-5)


def test_node_executing_carries_only_the_dependency_counts_that_changed():
    """The first NodeExecuting has every count; each later one only those changed since (0: the
    node stopped waiting), so a long chain costs a listener O(n), not O(n^2). Replayed in
    order (as viz.record does) they give the engine's full state as each node ran."""
    x = microtorch.tensor([1.0, 2.0], requires_grad=True)
    y = x
    for _ in range(2000):
        y = y * 1.0
    events = []
    with graph.add_listener(events.append):
        y.sum().backward()
    runs = [e for e in events if isinstance(e, graph.NodeExecuting)]
    assert len(runs) == 2003
    assert sum(len(e.dependencies) for e in runs) <= 2 * len(runs)     # was ~2,000,000

    x, a, b, c, d, loss = diamond(microtorch, hooks=False)
    events = []
    with graph.add_listener(events.append):
        loss.backward()
    state, seen = {}, []
    for e in (e for e in events if isinstance(e, graph.NodeExecuting)):
        for n, k in e.dependencies.items():
            if k:
                state[n] = k
            else:
                state.pop(n)
        seen.append((e.node.name(), {n.name(): k for n, k in state.items()}))
    acc = "torch::autograd::AccumulateGrad"
    assert seen == [
        ("GraphRoot", {"SumBackward0": 1, "AddBackward0": 1, "ExpBackward0": 1, "SinBackward0": 1,
                       "MulBackward0": 2, acc: 1}),
        ("SumBackward0", {"AddBackward0": 1, "ExpBackward0": 1, "SinBackward0": 1, "MulBackward0": 2, acc: 1}),
        ("AddBackward0", {"ExpBackward0": 1, "SinBackward0": 1, "MulBackward0": 2, acc: 1}),
        ("SinBackward0", {"MulBackward0": 2, acc: 1}),
        ("ExpBackward0", {"MulBackward0": 1, acc: 1}),
        ("MulBackward0", {acc: 1}),
        (acc, {}),
    ]
