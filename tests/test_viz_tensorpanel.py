"""The tensor panel (a click on a node in viz.draw's output, the stepper or viz.explore): value,
gradient, shape, dtype and saved tensors with versions, compared with the tensors themselves."""
import re

import numpy as np

import microtorch as mt
from microtorch import viz
from microtorch.viz import _format as F
from microtorch.viz._tensorpanel import details_map, tensor_html


def _text(html):
    return re.sub(r"<[^>]+>", " ", html)


def _cells(html):
    return re.findall(r"class='mt-cell'[^>]*>([^<]*)<", html)


def test_stepper_panels_keep_saved_tensors_as_they_were_when_the_node_ran():
    w = mt.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
    x = mt.tensor([[1.0, 2.0], [3.0, 4.0]])
    with viz.record() as tape:
        h = w @ x
        y = h.tanh().sum()
        y.backward()                              # frees the saved tensors
    assert y.grad_fn.next_functions[0][0].saved_versions() is None
    s = viz.Stepper(tape, names={"w": w, "x": x, "h": h, "y": y})
    details = s.data["details"]
    tanh = next(d for d in details.values() if d.startswith("<h4>TanhBackward0"))
    t = h.detach().tanh().numpy()
    assert _cells(tanh)[:4] == [F.num(v) for v in t.ravel()]                      # its output
    assert "saved result 2×2 v0" in _text(tanh)                                     # tanh saved its result
    wd = next(d for d in details.values() if d.startswith("<h4>w"))
    assert "shape <b>(2, 2)</b>" in wd and "dtype <b>float32</b>" in wd
    assert _cells(wd) == [F.num(v) for v in w.detach().numpy().ravel()] + [F.num(v) for v in w.grad.numpy().ravel()]


def test_draw_without_a_tape_says_the_saved_tensors_were_freed():
    a = mt.tensor([1.0, 2.0], requires_grad=True)
    y = (a * a).sum()
    y.backward()
    dag = viz.draw(y)
    html = dag._repr_html_()
    assert "freed by backward (retain_graph=False)" in html        # the MulBackward0 panel
    d = details_map(dag.model, dag.values, dag.names)
    leaf = next(v for v in d.values() if v.startswith("<h4>a"))
    assert "[1, 2]" in leaf and "[2, 4]" in leaf                   # value and gradient 2a


def test_tensor_html_shapes():
    assert "mt-numbers" in tensor_html(np.arange(5.0))
    assert tensor_html(np.ones((3, 3))).count("class='mt-cell'") == 9
    assert "…" in tensor_html(np.ones((40, 40)))                   # too big for cells: its range
    assert tensor_html(None) == "<div class='mt-muted'>—</div>"
