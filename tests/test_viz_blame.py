"""viz.blame finds the one node whose backward is wrong among correct ones."""
import numpy as np
import pytest

import microtorch as mt
from microtorch import viz


class Square(mt.autograd.Function):
    """x^2, with a backward that forgets the factor 2 (the bug blame must find)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x


class Cube(mt.autograd.Function):
    """x^3, correct."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * g * x * x


class Scale(mt.autograd.Function):
    """a * b, correct, two inputs."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return g * b, g * a


def test_blame_finds_the_wrong_node():
    x = mt.randn(4, requires_grad=True)
    w = mt.randn(4, requires_grad=True)
    with viz.record():
        a = Cube.apply(Scale.apply(x, w))
        b = Square.apply(a.sin())
        loss = (b + a).mean()
    report = viz.blame(loss)
    statuses = {v.node: v.status for v in report.verdicts}
    assert statuses[b.grad_fn] == "failed"
    assert statuses[a.grad_fn] == "passed"
    assert statuses[a.grad_fn.next_functions[0][0]] == "passed"        # Scale
    assert [v.node for v in report.failing] == [b.grad_fn]
    assert report.first_failing.node is b.grad_fn
    # the DAG is coloured and the heatmap of the failing node is there
    dot = report.dag.model.name_of(b.grad_fn)
    assert "mt-bad" in report.dag.model.nodes[dot].classes
    ok = [n for n, s in report.dag.model.nodes.items() if "mt-ok" in s.classes]
    assert len(ok) == len([v for v in report.verdicts if v.status == "passed"]) >= 4
    item = report.heatmap.data[0]
    np.testing.assert_allclose(np.diag(item["numerical"]), 2 * np.diag(item["analytical"]), rtol=1e-5)
    html = report._repr_html_()
    assert "1 wrong" in html and "SquareBackward" in html and html.count("<svg") >= 2


def test_blame_with_a_function_records_the_forward():
    x = mt.randn(3, requires_grad=True)
    report = viz.blame(lambda t: Square.apply(Cube.apply(t)).sum(), x)
    names = {v.title.split(" ")[0]: v.status for v in report.verdicts}
    assert names["SquareBackward"] == "failed" and names["CubeBackward"] == "passed"


def test_all_correct_passes():
    x = mt.randn(3, requires_grad=True)
    report = viz.blame(lambda t: Cube.apply(t).sum(), x)
    assert report.failing == [] and "pass" in report._repr_html_()


def test_blame_needs_a_recording():
    x = mt.randn(3, requires_grad=True)
    loss = Cube.apply(x * 1.0).sum() * 1.0
    with pytest.raises(ValueError, match="needs the forward pass recorded"):
        viz.blame(loss)
    with pytest.raises(ValueError, match="no grad_fn"):
        viz.blame(mt.ones(2, requires_grad=True))
    with pytest.raises(TypeError, match="takes no inputs"):
        viz.blame(loss, x)


def test_blame_replays_ops_called_with_keyword_arguments():
    """sum(dim=, keepdim=) and mean(dim=) are built with keyword arguments: the NodeCreated
    event carries them, so blame checks those nodes instead of skipping them."""
    import microtorch as mt
    from microtorch import viz
    mt.manual_seed(0)
    x = mt.randn(4, 3, dtype=mt.float64, requires_grad=True)
    with viz.record():
        loss = (x.tanh().sum(dim=1, keepdim=True) * x).mean(dim=0).sum()
    report = viz.blame(loss)
    verdicts = {repr(v).split(" ")[0].lstrip("<"): repr(v) for v in report.verdicts}
    assert "passed" in verdicts["SumBackward1"] and "passed" in verdicts["MeanBackward1"], verdicts
    assert not report.failing
