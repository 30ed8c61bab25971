"""viz.record: the tape keeps the engine's events in order, with snapshots of their values."""
import numpy as np
import pytest

import microtorch as mt
from microtorch import viz


def _diamond_with_hooks():
    x = mt.tensor(2.0, requires_grad=True)
    with viz.record() as tape:
        a = x * 3
        b = x.sin()
        y = a * b
        a.register_hook(lambda g: g * 2)                       # tensor hook on a: doubles dL/da

        def post(grad_inputs, grad_outputs):                   # node hook on b's node: observes only
            return None
        b.grad_fn.register_hook(post)
        x.register_post_accumulate_grad_hook(lambda t: None)
        y.backward()
    return tape, x, a, b, y


def _title(node):
    return node.name().split("::")[-1]


def test_diamond_event_order():
    tape, x, a, b, y = _diamond_with_hooks()
    kinds = tape.kinds()
    assert kinds[:3] == ["node_created"] * 3
    assert [_title(e.event.node) for e in tape.entries[:3]] == ["MulBackward0", "SinBackward0", "MulBackward0"]
    assert tape.entries[0].event.node is a.grad_fn and tape.entries[2].event.node is y.grad_fn
    assert kinds[3] == "backward_started" and kinds[-1] == "backward_finished"
    ran = [e for e in tape if e.kind == "node_executing"]
    # torch's order: the root, y's node, then the node created last among the ready ones (b's), then a's
    assert [_title(e.event.node) for e in ran] == ["GraphRoot", "MulBackward0", "SinBackward0", "MulBackward0",
                                                   "AccumulateGrad"]
    assert ran[1].event.node is y.grad_fn and ran[3].event.node is a.grad_fn
    pos = {id(e): e.index for e in tape}
    hooks = tape.hooks()
    tensor_hook = next(h for h in hooks if h.event.kind == "tensor")
    node_hook = next(h for h in hooks if h.event.kind == "node_post")
    post_acc = next(h for h in hooks if h.event.kind == "post_accumulate")
    acc = next(e for e in tape if e.kind == "grad_accumulated")
    # the tensor hook on a runs after b's node and before a's node
    assert pos[id(ran[2])] < tensor_hook.index < pos[id(ran[3])]
    # b's node hook runs while b's node is the one running: after y's node, before a's
    assert pos[id(ran[1])] < node_hook.index < pos[id(ran[3])]
    # accumulation into x after every op node, its post-accumulate hook after it
    assert pos[id(ran[3])] < acc.index < post_acc.index < len(tape) - 1
    assert acc.event.tensor is x and post_acc.event.target is x


def test_snapshots_and_values():
    tape, x, a, b, y = _diamond_with_hooks()
    hook = next(h for h in tape.hooks() if h.event.kind == "tensor")
    np.testing.assert_allclose(hook.values["before"], np.sin(2.0), rtol=1e-6)
    np.testing.assert_allclose(hook.values["after"], 2 * np.sin(2.0), rtol=1e-6)
    acc = next(e for e in tape if e.kind == "grad_accumulated")
    assert acc.values["before"] is None
    expected = 6 * np.cos(2.0) + 3 * 2 * np.sin(2.0)
    np.testing.assert_allclose(acc.values["after"], expected, rtol=1e-5)
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-5)
    # snapshots are copies: changing .grad in place later does not change the tape
    with mt.no_grad():
        x.grad.mul_(0)
    np.testing.assert_allclose(acc.values["after"], expected, rtol=1e-5)
    assert tape.created(y.grad_fn).values["outputs"][0] == pytest.approx(6 * np.sin(2.0), rel=1e-6)


def test_runs_attribute_hooks_to_their_node():
    tape, x, a, b, y = _diamond_with_hooks()
    bw = tape.backward()
    runs = bw.runs()
    by_node = {id(r.node): r for r in runs}
    assert [h.event.kind for h in by_node[id(a.grad_fn)].hooks] == ["tensor"]
    assert [h.event.kind for h in by_node[id(b.grad_fn)].hooks] == ["node_post"]
    leaf_run = runs[-1]
    assert [h.event.kind for h in leaf_run.hooks] == ["post_accumulate"]
    assert len(leaf_run.accumulations) == 1


def test_node_hook_that_changes_gradients_is_what_flows():
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    with viz.record() as tape:
        b = x.sin()
        y = (b * 3).sum()
        b.grad_fn.register_hook(lambda gi, go: tuple(g.clamp(-1, 1) for g in gi))
        y.backward()
    run = next(r for r in tape.backward().runs() if r.node is b.grad_fn)
    np.testing.assert_allclose(run.outgoing[0], [1.0, -1.0])
    np.testing.assert_allclose(x.grad.numpy(), [1.0, -1.0])
    np.testing.assert_allclose(tape.values().edge_grad(b.grad_fn, 0), [1.0, -1.0])


def test_recording_stops_and_tapes_are_inspectable():
    x = mt.tensor(1.0, requires_grad=True)
    with viz.record() as tape:
        y = x * 2
    n = len(tape)
    (y * 3).backward()
    assert len(tape) == n == 1 and not tape.recording
    assert "node_created" in repr(tape) and "<table" in tape._repr_html_()
    with pytest.raises(ValueError, match="recorded no backward"):
        tape.backward()
    with pytest.raises(ValueError, match="recorded no backward"):
        viz.Stepper(tape)
    with pytest.raises(TypeError, match="expects a tape"):
        viz.Stepper(y)


def test_two_backwards_are_separated():
    x = mt.tensor(3.0, requires_grad=True)
    with viz.record() as tape:
        y = x * x
        y.backward(retain_graph=True)
        y.backward()
    assert len(tape.backwards) == 2
    assert all(bw.finished for bw in tape.backwards)
    acc = [e for e in tape if e.kind == "grad_accumulated"]
    assert [e.backward for e in acc] == [0, 1]
    np.testing.assert_allclose(acc[1].values["before"], 6.0)
    np.testing.assert_allclose(acc[1].values["after"], 12.0)


def test_numpy_conversion_honours_copy_so_snapshots_are_private():
    """Tensor.__array__ follows numpy's copy= protocol (viz's snapshots rely on copy=True)."""
    t = mt.tensor([1.0, 2.0])
    a = np.array(t, copy=True)
    a[0] = 5.0
    assert t.tolist() == [1.0, 2.0]                         # used to write through
    np.asarray(t)[1] = 7.0                                  # no copy asked: shares memory, as torch
    assert t.tolist() == [1.0, 7.0]
    assert np.shares_memory(np.array(t, copy=False), t.numpy())
    assert np.array(t, dtype=np.float64).dtype == np.float64
    with pytest.raises(ValueError, match="copy"):
        np.array(t, dtype=np.float64, copy=False)
    g = mt.tensor([3.0], requires_grad=True)
    snap = viz._format.snapshot(g)
    snap[0] = 0.0
    assert g.item() == 3.0
