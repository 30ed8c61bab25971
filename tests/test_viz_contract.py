"""viz.draw's result keeps graphviz.Digraph's contract (graphviz 0.21 signatures), with and
without the Graphviz `dot` program on PATH: render (PNG with dot, SVG without), view through
a stub viewer, pipe, save (graphviz's render calls save(..., skip_existing=None)), source and
_repr_mimebundle_."""
import inspect
import os
import shutil

import graphviz
import pytest

import microtorch as mt
from microtorch import viz

HAS_DOT = shutil.which("dot") is not None


@pytest.fixture
def dag():
    w = mt.tensor(2.0, requires_grad=True)
    x = mt.tensor(3.0)
    y = (w * x).tanh()
    return viz.draw(y)


@pytest.fixture(params=["with dot", "without dot"])
def dot_on_path(request, monkeypatch):
    if request.param == "with dot":
        if not HAS_DOT:
            pytest.skip("the Graphviz `dot` program is not installed")
        return True
    real = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None if name == "dot" else real(name, *a, **k))
    monkeypatch.setenv("PATH", "/nonexistent")
    return False


def test_signatures_match_graphviz():
    for name in ("render", "view", "pipe", "save"):
        ours = inspect.signature(getattr(viz.DAG, name))
        theirs = inspect.signature(getattr(graphviz.Digraph, name))
        assert list(ours.parameters) == list(theirs.parameters), name
        for p in theirs.parameters.values():
            assert ours.parameters[p.name].kind == p.kind, (name, p.name)


def test_render_png_or_svg(dag, dot_on_path, tmp_path):
    if dot_on_path:
        out = dag.render(str(tmp_path / "g"), format="png")
        assert out.endswith("g.png")
        with open(out, "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    else:
        with pytest.raises(graphviz.ExecutableNotFound, match="format='svg'"):
            dag.render(str(tmp_path / "g"), format="png")
        out = dag.render(str(tmp_path / "g"), format="svg")
        assert out.endswith("g.svg") and "<svg" in open(out, encoding="utf-8").read()
    # the DOT source was saved next to it, as graphviz does
    assert open(tmp_path / "g", encoding="utf-8").read() == dag.source
    out2 = dag.render(outfile=str(tmp_path / "h.svg"))
    assert out2.endswith("h.svg") and 'class="node' in open(out2, encoding="utf-8").read()


def test_view_opens_the_rendered_file_with_the_viewer(dag, dot_on_path, tmp_path, monkeypatch):
    opened = []
    monkeypatch.setattr(type(dag), "_view", lambda self, path, format, quiet: opened.append((path, format)),
                        raising=False)
    fmt = "png" if dot_on_path else "svg"
    dag.format = fmt
    out = dag.view(str(tmp_path / "v"))
    assert opened == [(out, fmt)] and os.path.exists(out)


def test_pipe_returns_bytes_or_text(dag, dot_on_path):
    svg = dag.pipe(format="svg")
    assert isinstance(svg, bytes) and b"<svg" in svg and b"TanhBackward0" in svg
    assert "<svg" in dag.pipe(format="svg", encoding="utf-8")
    if dot_on_path:
        assert dag.pipe(format="png")[:4] == b"\x89PNG"
    else:
        with pytest.raises(graphviz.ExecutableNotFound):
            dag.pipe(format="png")


def test_save_skip_existing_and_mimebundle(dag, tmp_path):
    path = dag.save(str(tmp_path / "g.gv"), skip_existing=None)
    assert open(path, encoding="utf-8").read() == dag.source
    (tmp_path / "k.svg").write_text("keep")
    assert dag.save(str(tmp_path / "k.svg"), skip_existing=True).endswith("k.svg")
    assert (tmp_path / "k.svg").read_text() == "keep"
    assert dag.save("s.svg", directory=str(tmp_path)) == os.path.join(str(tmp_path), "s.svg")
    bundle = dag._repr_mimebundle_(include=["text/html", "image/svg+xml"])
    assert "<svg" in bundle["text/html"] and bundle["image/svg+xml"].startswith("<?xml")
