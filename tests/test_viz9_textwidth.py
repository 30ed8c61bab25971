"""The text widths viz sizes graph nodes with (`_textwidth`): Arial's metrics, checked against the
Liberation Sans font file chromium draws with here (the same advance widths), and the node widths
they give in both directions of a graph."""
import math
import os

import pytest

import microtorch as mt
from microtorch import viz
from microtorch.viz import _textwidth as T

FONT = "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf"


@pytest.mark.skipif(not os.path.exists(FONT), reason=f"{FONT} is not installed (fonts-liberation)")
def test_widths_are_the_fonts_advance_widths():
    ttlib = pytest.importorskip("fontTools.ttLib")
    font = ttlib.TTFont(FONT)
    upm, cmap, hmtx = font["head"].unitsPerEm, font.getBestCmap(), font["hmtx"]
    for ch in [chr(c) for c in range(32, 127)] + list("·×−…—→←\u00a0"):
        advance = hmtx[cmap[ord(ch)]][0] * 1000 / upm
        assert T._char(ch) == math.ceil(advance), ch
    assert T._char("梯") == 1000 and T._char("\u0301") == 0


def test_nodes_are_as_wide_as_their_widest_line():
    """A 45-character name at 14 pt needs 3.7 inches with its margins: the DOT source asks for it; in a
    left-to-right graph a leaf's value and gradient cells sit side by side, so their widths add up."""
    q = mt.randn(1, 2, 3, 4, requires_grad=True)
    att = mt.nn.functional.scaled_dot_product_attention(q, q, q)
    assert att.grad_fn.name() == "ScaledDotProductFlashAttentionForCpuBackward0"
    dag = viz.draw(att, names={"q": q, "att": att})
    title = "ScaledDotProductFlashAttentionForCpuBackward0"
    need = (T.text_width(title, 14) + 12) / 72
    assert f'width="{math.ceil(need * 100) / 100:g}"' in dag.source
    x = mt.tensor([0.5, -1.0, 2.0], requires_grad=True)
    (x * 2).sum().backward()
    lr, tb = (viz.draw(x, rankdir=d, names={"x": x}) for d in ("LR", "TB"))
    cells = [T.text_width(t, 14) + 12 for t in ("data [0.5, -1, 2]", "grad [2, 2, 2]")]
    assert f'width="{math.ceil(sum(cells) / 72 * 100) / 100:g}"' in lr.source
    assert f'width="{math.ceil(max(cells) / 72 * 100) / 100:g}"' in tb.source
