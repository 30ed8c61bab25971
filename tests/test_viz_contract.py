"""viz.draw's result keeps graphviz.Digraph's contract (graphviz 0.21 signatures), with and
without the Graphviz `dot` program on PATH: render (PNG and PDF with dot, and without it from
WebAssembly Graphviz's SVG drawn by cairosvg), view through
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


def _png_size(data):
    """(width, height) of PNG bytes, after checking that the picture has dark text on white."""
    import io
    from PIL import Image
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    img = Image.open(io.BytesIO(data)).convert("RGBA")
    page = Image.new("RGBA", img.size, "white")        # a transparent background shows the page's white
    img = Image.alpha_composite(page, img).convert("L")
    hist = img.histogram()
    assert sum(hist[:100]) > 200, "no dark pixels: the text was not drawn"
    assert sum(hist[250:]) > 0.5 * img.width * img.height, "not on a white background"
    return img.size


def _svg_size_pt(dag):
    import re
    m = re.search(r'<svg width="([\d.]+)pt" height="([\d.]+)pt"', dag.pipe(format="svg", encoding="utf-8"))
    return float(m.group(1)), float(m.group(2))


def test_render_png_and_pdf(dag, dot_on_path, tmp_path):
    out = dag.render(str(tmp_path / "g"), format="png")
    assert out.endswith("g.png")
    w, h = _png_size(open(out, "rb").read())
    # 96 dpi, as graphviz's own `dot -Tpng`: 4/3 of the SVG's size in points
    pw, ph = _svg_size_pt(dag)
    k = 96 / 72
    assert w == pytest.approx(pw * k, abs=3) and h == pytest.approx(ph * k, abs=3)
    # the DOT source was saved next to it, as graphviz does
    assert open(tmp_path / "g", encoding="utf-8").read() == dag.source
    pdf = dag.render(outfile=str(tmp_path / "g.pdf"))
    assert open(pdf, "rb").read(5) == b"%PDF-"
    out2 = dag.render(outfile=str(tmp_path / "h.svg"))
    assert out2.endswith("h.svg") and 'class="node' in open(out2, encoding="utf-8").read()


def test_without_dot_or_cairosvg_png_names_both_fixes(dag, monkeypatch, tmp_path):
    from microtorch.viz import _raster
    real = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None if name == "dot" else real(name, *a, **k))
    monkeypatch.setattr(_raster, "available", lambda: False)
    with pytest.raises(graphviz.ExecutableNotFound, match="format='svg'.*pip install cairosvg"):
        dag.render(str(tmp_path / "g"), format="png")
    with pytest.raises(graphviz.ExecutableNotFound, match="apt-get install graphviz"):
        dag.pipe(format="jpg")
    assert dag.render(str(tmp_path / "g"), format="svg").endswith("g.svg")


def test_save_png_without_dot_draws_the_wasm_layout(dag, dot_on_path, tmp_path):
    path = dag.save(str(tmp_path / "s.png"))               # 144 dpi on white, with or without dot
    w, h = _png_size(open(path, "rb").read())
    pw, ph = _svg_size_pt(dag)
    assert w == pytest.approx(2 * pw, abs=3) and h == pytest.approx(2 * ph, abs=3)
    assert open(dag.save(str(tmp_path / "s.pdf")), "rb").read(5) == b"%PDF-"


def test_view_opens_the_rendered_file_with_the_viewer(dag, dot_on_path, tmp_path, monkeypatch):
    opened = []
    monkeypatch.setattr(type(dag), "_view", lambda self, path, format, quiet: opened.append((path, format)),
                        raising=False)
    dag.format = "png"
    out = dag.view(str(tmp_path / "v"))
    assert opened == [(out, "png")] and out.endswith("v.png")
    _png_size(open(out, "rb").read())


def test_pipe_returns_bytes_or_text(dag, dot_on_path):
    svg = dag.pipe(format="svg")
    assert isinstance(svg, bytes) and b"<svg" in svg and b"TanhBackward0" in svg
    assert "<svg" in dag.pipe(format="svg", encoding="utf-8")
    _png_size(dag.pipe(format="png"))
    assert dag.pipe(format="pdf")[:5] == b"%PDF-"


def test_save_skip_existing_and_mimebundle(dag, tmp_path):
    path = dag.save(str(tmp_path / "g.gv"), skip_existing=None)
    assert open(path, encoding="utf-8").read() == dag.source
    (tmp_path / "k.svg").write_text("keep")
    assert dag.save(str(tmp_path / "k.svg"), skip_existing=True).endswith("k.svg")
    assert (tmp_path / "k.svg").read_text() == "keep"
    assert dag.save("s.svg", directory=str(tmp_path)) == os.path.join(str(tmp_path), "s.svg")
    bundle = dag._repr_mimebundle_(include=["text/html", "image/svg+xml"])
    assert "<svg" in bundle["text/html"] and bundle["image/svg+xml"].startswith("<?xml")
