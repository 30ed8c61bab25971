"""viz.explore: a model's graph collapsed to its modules (repeated blocks folded), each state
laid out ahead of time, and a tensor panel per node checked against the tensors themselves."""
import re

import numpy as np
import pytest

import microtorch as mt
from microtorch import nn, viz


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return self.lin(x).tanh()


@pytest.fixture
def deep():
    mt.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), Block(), Block(), Block(), nn.Linear(4, 1))
    x, y = mt.randn(5, 3), mt.randn(5, 1)
    ex = viz.explore(model, x, loss_fn=lambda out: ((out - y) ** 2).mean())
    return model, ex


def _text(html):
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_nodes_belong_to_the_module_that_created_them(deep):
    model, ex = deep
    clusters = {spec.title: spec.cluster for spec in ex.model.nodes.values() if spec.kind == "op"}
    by_cluster = {}
    for spec in ex.model.nodes.values():
        by_cluster.setdefault(spec.cluster, []).append(spec.title)
    assert sorted(by_cluster["1"]) == ["TanhBackward0"]                  # Block.forward's tanh
    assert sorted(by_cluster["1.lin"]) == ["1.lin.bias", "1.lin.weight", "AddmmBackward0", "TBackward0"]
    assert clusters["MeanBackward0"] is None and clusters["SubBackward0"] is None   # the loss: outside
    assert ex.modules == ["0", "1", "1.lin", "2", "2.lin", "3", "3.lin", "4"]


def test_identical_blocks_fold_and_states_are_laid_out(deep):
    model, ex = deep
    assert ex.folds == {"fold:1": ["1", "2", "3"]}        # Linear(3,4) and Linear(4,1) differ: not folded
    data = ex.data()
    first = data["states"][data["initial"]]
    boxes = sorted(first["boxes"].values())
    assert boxes == ["fold:1", "mod:0", "mod:4"]
    assert "1 … 3 · Block ×3" in first["svg"] and "AddmmBackward0" not in first["svg"]
    # opening module 2 unfolds the run and shows 2 as a cluster holding 2.lin, closed
    two = data["states"][data["singles"]["2"]]
    assert data["singles"]["2"] == "2|fold:1"
    assert sorted(two["boxes"].values()) == ["mod:0", "mod:1", "mod:2.lin", "mod:3", "mod:4"]
    assert "2" in two["clusters"].values() and "TanhBackward0" in two["svg"]
    everything = data["states"][data["singles"]["3.lin"]]
    assert "mod:3.lin" not in everything["boxes"].values()
    for st in data["states"].values():        # every state keeps the same ids for the same nodes
        for m in re.finditer(r'<g id="(mt\d+-n\d+)"', st["svg"]):
            assert m.group(1).startswith(data["prefix"])


def test_tensor_panel_shows_value_gradient_shape_dtype_and_saved_versions(deep):
    model, ex = deep
    name = next(n for n, s in ex.model.nodes.items() if s.title == "0.bias")
    text = _text(ex.details[name])
    bias = model[0].bias
    assert "shape (4,) · dtype float32" in text
    assert viz._format.summary(bias.detach().numpy(), 16) in text
    assert viz._format.summary(bias.grad.numpy(), 16) in text
    w = next(n for n, s in ex.model.nodes.items() if s.title == "0.weight")
    assert ex.details[w].count("class='mt-cell'") == 2 * 12       # value and gradient: 4x3 heatmaps
    addmm = next(n for n, s in ex.model.nodes.items() if s.title == "AddmmBackward0" and s.cluster == "0")
    assert "saved tensors (with versions)" in ex.details[addmm]


def test_explore_of_an_existing_graph_and_bad_input():
    model = nn.Sequential(nn.Linear(3, 2))
    with viz.record() as tape:
        loss = model(mt.randn(4, 3)).sum()
        loss.backward()
    ex = viz.explore(loss, module=model, tape=tape)
    assert ex.modules == ["0"] and "mod:0" in ex.data()["states"][""]["boxes"].values()
    with pytest.raises(TypeError, match="viz.explore needs the model"):
        viz.explore(loss)
    html = ex._repr_html_()
    assert "mtExplorer(" in html and "<svg" in html


def test_tensor_html_small_matrix_and_big():
    from microtorch.viz._explore import tensor_html
    assert "[1, 2, 3]" in tensor_html(np.array([1.0, 2.0, 3.0]))
    assert tensor_html(np.ones((30, 30))).count("mt-cell") == 0     # too big: its range
    assert tensor_html(np.ones((8, 8))).count("class='mt-cell'") == 64


class Residual(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(4, 4), nn.Linear(4, 4)

    def forward(self, x):
        return self.b(self.a(x).tanh()) + x


def test_residual_blocks_collapsed_lay_out():
    """A run of residual blocks folded into one box: the box and the sum around it point at each
    other (x feeds the block and the sum), and the collapsed graph still lays out; the edge that
    leaves the first Linear's cluster of an opened block spans the ranks below its AddmmBackward0
    (bias and TBackward0 -> weight: minlen 3)."""
    mt.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), Residual(), Residual(), nn.Linear(4, 1))
    ex = viz.explore(model, mt.randn(5, 3), loss_fn=lambda out: out.pow(2).mean())
    data = ex.data()
    assert ex.folds["fold:1"] == ["1", "2"]
    assert len(data["states"]) >= 3 and all(st["svg"].startswith("<svg") for st in data["states"].values())
    from microtorch.viz import graph as G
    exits = G._cluster_exits(ex.model)
    addmm_a = [n for n, s in ex.model.nodes.items() if s.cluster == "1.a" and s.title.startswith("AddmmBackward0")]
    assert addmm_a and {exits[e.name] for e in ex.model.edges if e.src == addmm_a[0] and e.name in exits} == {3}
