"""The public view of a node that tools (viz) read: hooks(), saved_versions(), function_class;
and Function.apply's steps, each checked on a hand-made graph."""
import numpy as np
import pytest

import microtorch as mt
from microtorch import _quiet
from microtorch.autograd import function
from microtorch.autograd.node import AccumulateGrad


def test_hooks_lists_every_kind_in_engine_order():
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    node = y.grad_fn

    def th(g):
        return g

    def pre(gs):
        return gs

    def post(gi, go):
        return gi
    y.register_hook(th)
    y.retain_grad()
    node.register_prehook(pre)
    node.register_hook(post)
    assert node.hooks() == [("tensor", th), ("retain_grad", None), ("node_pre", pre), ("node_post", post)]
    assert x.grad_fn is None and (x * 1).grad_fn.hooks() == []


def test_saved_versions_show_stale_values_and_freeing():
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    a = x * 1
    y = a * a
    (value, saved, now), _ = y.grad_fn.saved_versions()
    assert np.array_equal(value, [1.0, 2.0]) and saved == now == 0
    with mt.no_grad():
        a.add_(1)
    assert [(v[1], v[2]) for v in y.grad_fn.saved_versions()] == [(0, 1), (0, 1)]
    z = x.exp()
    z.sum().backward()
    assert z.grad_fn.saved_versions() is None        # freed by backward
    only_other = (mt.tensor(1.0, requires_grad=True) * mt.tensor(2.0)).grad_fn.saved_versions()
    assert only_other[0] is None and only_other[1][0] == 2.0


def test_function_class_names_the_op():
    class Double(mt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2
    x = mt.tensor([1.0], requires_grad=True)
    assert Double.apply(x).grad_fn.function_class is Double
    assert type((x * x).grad_fn).function_class.fget is not None
    assert (x * x).grad_fn.function_class.__name__ == "Mul"
    assert AccumulateGrad(x).function_class is None


def test_node_fields_are_declared_on_the_class():
    x = mt.tensor([1.0], requires_grad=True)
    node = (x * x).grad_fn
    declared = set(type(node).__mro__[1].__slots__)
    assert {"next_functions", "needs_input_grad", "_saved", "_out_meta"} <= declared
    assert "_saved" not in vars(node) and "next_functions" not in vars(node)


def test_apply_steps_record_edges_outputs_and_saved():
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    c = mt.tensor([3.0, 4.0])
    y = x * c
    node = y.grad_fn
    assert node.needs_input_grad == (True, False)
    assert node.next_functions[0][0].variable is x and node.next_functions[1] == (None, 0)
    assert y.requires_grad and y.grad_fn is node and y._output_nr == 0
    assert node._saved_self is None and node._saved_other is c
    with mt.no_grad():
        z = x * c
    assert z.grad_fn is None and not z.requires_grad


def test_numpy_warnings_are_silenced_only_inside_forward():
    x = mt.tensor([0.0, 1e308], dtype=mt.float64)
    with np.errstate(all="raise"):
        y = (x * 10) / x      # inf and nan, silently, as torch
        assert np.isnan(y[0].item()) and np.isinf(y[1].item())
        with pytest.raises(FloatingPointError):
            np.array([1e308]) * 10      # the caller's own numpy setting is untouched
    assert _quiet._QUIET.get() is False


def _chain(x, n):
    for i in range(n):
        x = x.tanh() if i % 10 == 9 else x * 1.0001 if i % 2 == 0 else x + 0.0001
    return x


def test_nodes_share_their_equal_tuples():
    """needs_input_grad and an output's (shape, dtype) are one tuple for all the nodes that hold
    them equal (fewer objects for Python's garbage collector), and the table stays small."""
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    a, b = (x * 2).grad_fn, (x + 3).grad_fn
    assert a.needs_input_grad == (True, False) and a.needs_input_grad is b.needs_input_grad
    assert a._out_meta == (((2,), np.dtype("float32")),) and a._out_meta is b._out_meta
    assert (x * x).grad_fn.needs_input_grad == (True, True)
    for n in range(5000):  # more shapes than the table keeps: it is emptied, the nodes keep theirs
        node = (mt.ones(n + 1, requires_grad=True) * 2).grad_fn
        assert node._out_meta == (((n + 1,), np.dtype("float32")),)
    assert len(function._shared) <= 4097


def test_a_recorded_op_makes_few_objects_for_the_garbage_collector():
    """Each op of a long chain leaves the collector about 3 new containers (the node, its edges),
    not 7: the collector runs after every 700, and a full collection of a large heap, which a long
    graph used to trigger, cost a fifth of the forward pass."""
    import gc
    x = mt.tensor(np.full(100, 0.5), requires_grad=True)
    _chain(x, 100)
    gc.disable()
    try:
        gc.collect()
        before = gc.get_count()[0]
        y = _chain(x, 1000)
        per_op = (gc.get_count()[0] - before) / 1000
    finally:
        gc.enable()
    assert y.grad_fn is not None and per_op <= 3.5, per_op
