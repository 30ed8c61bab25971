"""gradcheck heatmaps: report -> heatmap data, the figure, fast mode, eps sweep, bad input."""
from types import SimpleNamespace

import numpy as np
import pytest

import microtorch as mt
from microtorch import viz
from microtorch.viz import _format as F
from microtorch.viz import jacobian as J


class HalfSquare(mt.autograd.Function):
    """x^2 with a backward that forgets the factor 2."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x


def _stand_in_report():
    """A hand-made report: 2x3 Jacobian, one entry wrong."""
    num = np.array([[1.0, 0.0, -2.0], [0.5, 4.0, 0.0]])
    ana = num.copy()
    ana[1, 1] = 3.0
    pair = SimpleNamespace(output_index=0, input_index=1, numerical=num, analytical=ana,
                           mask=np.abs(ana - num) > 1e-5 + 1e-3 * np.abs(num), max_abs_error=1.0,
                           max_rel_error=0.25, worst=(1, 1), passed=False, output_shape=(2,), input_shape=(3,),
                           kind="real", checked=True, mode="backward")
    return SimpleNamespace(passed=False, message="Jacobian mismatch for output 0 with respect to input 1,",
                           pairs=[pair], checks={"backward_ad": False}, fast=None, inputs=(), outputs=(),
                           eps=1e-6, atol=1e-5, rtol=1e-3, fast_mode=False)


def test_heatmap_data_from_a_report():
    (item,) = J.heatmap_data(_stand_in_report())
    np.testing.assert_array_equal(item["diff"], [[0, 0, 0], [0, 1.0, 0]])
    assert item["mask"].sum() == 1 and item["mask"][1, 1]
    assert item["vmax"] == 4.0 and item["diff_vmax"] == 4.0         # one scale for all three panels
    assert item["worst"]["output_element"] == (1,) and item["worst"]["input_element"] == (1,)
    assert item["worst"]["numerical"] == 4.0 and item["worst"]["analytical"] == 3.0
    assert "FAILED (1 of 6 entries)" in item["title"] and "output 0 w.r.t. input 1" in item["title"]
    (own,) = J.heatmap_data(_stand_in_report(), diff_scale="own")
    assert own["diff_vmax"] == 1.0
    rows = J.worst_entries(item, 3)
    assert rows[0]["failing"] and (rows[0]["row"], rows[0]["col"]) == (1, 1)
    np.testing.assert_allclose(rows[0]["tol"], 1e-5 + 1e-3 * 4.0)


def test_only_failing_cells_are_boxed():
    mask = np.zeros((3, 3), bool)
    mask[1, 1] = True
    segs = J._outline_segments(mask)
    assert segs.shape == (4, 2, 2)
    xs, ys = segs[..., 0], segs[..., 1]
    # inside cell (1, 1), which spans [0.5, 1.5]: a neighbour's border is never drawn
    assert 0.5 < xs.min() < 0.6 and 1.4 < xs.max() < 1.5 and 0.5 < ys.min() < 0.6 and 1.4 < ys.max() < 1.5
    mask[1, 2] = True                                       # two adjacent cells: two boxes
    assert J._outline_segments(mask).shape[0] == 8
    assert J._outline_segments(np.zeros((2, 2), bool)).shape[0] == 0


def test_gradcheck_view_of_a_wrong_backward(tmp_path):
    x = mt.tensor([0.5, -1.0, 2.0], dtype=mt.float64, requires_grad=True)
    view = viz.gradcheck(HalfSquare.apply, (x,))
    assert not view.passed
    (item,) = view.data
    # numerical: diag(2x); analytical: diag(x); the mask is the diagonal
    np.testing.assert_allclose(np.diag(item["numerical"]), 2 * np.array([0.5, -1.0, 2.0]), atol=1e-6)
    np.testing.assert_allclose(np.diag(item["analytical"]), [0.5, -1.0, 2.0])
    np.testing.assert_array_equal(item["mask"], np.eye(3, dtype=bool))
    assert item["worst"]["row"] == 2 and item["worst"]["col"] == 2
    html = view._repr_html_()
    assert "FAILED" in html and "<svg" in html and "var(--mt-fg" in html and "out[2]" in html
    fig = view.figure
    assert len(fig.axes) == 5                               # three panels and two colour bars
    view.save(tmp_path / "jac.png")
    view.save(tmp_path / "jac.svg", theme="dark")
    assert (tmp_path / "jac.png").read_bytes()[:4] == b"\x89PNG"
    assert "<svg" in (tmp_path / "jac.svg").read_text()
    with pytest.raises(ValueError, match="use .png"):
        view.save(tmp_path / "jac.bmp")


def test_passing_check_and_fast_mode():
    x = mt.randn(4, dtype=mt.float64, requires_grad=True)
    w = mt.randn(3, 4, dtype=mt.float64, requires_grad=True)
    view = viz.gradcheck(lambda a, b: (b @ a).tanh(), (x, w))
    assert view.passed and len(view.data) == 2 and all(d["passed"] for d in view.data)
    fast = viz.gradcheck(lambda a: HalfSquare.apply(a).sum() * a, (x,), fast_mode=True)
    assert fast.report.fast is not None and not fast.passed
    html = fast._repr_html_()
    assert "fast mode" in html and "vᵀ J u" in html
    fast_table = html.split("numerical vᵀJu")[1]
    assert fast_table.count("<tr") == len(fast.report.fast.pairs) >= 1 and "FAILED" in fast_table


def test_bad_input_is_one_line():
    with pytest.raises(ValueError, match="no input requires grad"):
        viz.gradcheck(lambda a: a * 2, (mt.ones(3),))
    with pytest.raises(TypeError, match="must be a function"):
        viz.gradcheck("not a function", (mt.ones(3, requires_grad=True),))
    with pytest.raises(ValueError, match="diff_scale"):
        J.GradcheckView(_stand_in_report(), diff_scale="log")


def test_eps_sweep_shows_truncation_and_round_off():
    x = mt.tensor([0.3, 1.1], dtype=mt.float64, requires_grad=True)
    sweep = viz.eps_sweep(lambda a: a.exp().sin(), (x,), eps=np.logspace(-12, -1, 12))
    assert sweep.errors.shape == (12,)
    best = int(np.argmin(sweep.errors))
    assert 0 < best < 11                                 # a V: large at both ends
    assert sweep.errors[-1] > 100 * sweep.errors[best] and sweep.errors[0] > 100 * sweep.errors[best]
    assert 1e-9 < sweep.best_eps < 1e-3
    assert "<svg" in sweep._repr_html_()
    with pytest.raises(ValueError, match="at least two positive"):
        viz.eps_sweep(lambda a: a, (x,), eps=[1e-3])


def test_complex_jacobians_draw_their_real_and_imaginary_parts():
    """f(z) = z^2: each pair's Jacobian is complex; both parts are drawn (one row each, one
    colour scale), and each row's title gives the worst entry's part that the row shows."""
    z = mt.tensor([1 + 2j, -0.5 + 1j, 3 - 1j], dtype=mt.complex128, requires_grad=True)
    view = viz.gradcheck(lambda z: z * z, (z,))
    assert view.passed and len(view.data) == 2
    for item in view.data:
        num, ana = np.asarray(item["pair"].numerical), np.asarray(item["pair"].analytical)
        re, im = item["parts"]
        assert (re["label"], im["label"]) == ("real part", "imaginary part")
        np.testing.assert_array_equal(re["analytical"], ana.real)
        np.testing.assert_array_equal(im["analytical"], ana.imag)
        np.testing.assert_array_equal(im["numerical"], num.imag)
        assert np.abs(im["analytical"]).max() >= 2                     # not blank
        assert item["vmax"] == pytest.approx(6.0)                      # |Re| and |Im| on one scale
        r, c = item["worst"]["row"], item["worst"]["col"]
        assert complex(item["worst"]["numerical"]) == complex(re["numerical"][r, c], im["numerical"][r, c])
        assert f"numerical {F.num(item['worst']['numerical'])}" in re["title"]
        assert f"numerical {F.num(im['numerical'][r, c])} vs analytical {F.num(im['analytical'][r, c])}" \
            in im["title"] and "imaginary part" in im["title"]
    fig = view.figure
    assert len(fig.axes) == 2 * 2 * 5                                  # two rows per pair
    drawn = {ax.get_title(): ax.images[0].get_array() for ax in fig.axes[:10] if ax.images and ax.get_title()}
    np.testing.assert_array_equal(drawn["Im analytical (backward)"], view.data[0]["parts"][1]["analytical"])
    np.testing.assert_array_equal(drawn["Re numerical (finite differences)"], view.data[0]["parts"][0]["numerical"])


def test_long_titles_break_inside_the_figure():
    title = ("output 0 w.r.t. input 0 [real_part]: imaginary part of the same Jacobian; at out[2]/in[2]: "
             "numerical -0.5114 vs analytical -0.5114")
    lines = J._fit_title(title, 9.8, 11).split("\n")
    assert len(lines) == 2 and lines[0].endswith("Jacobian;") and "".join(lines).replace(";", "; ") != ""
    assert all(len(line) <= int(9.8 * 72 / (0.58 * 11)) for line in lines)
    assert J._fit_title("short", 9.8, 11) == "short"


def test_heatmaps_never_shrink_their_text_under_12_px():
    """The figure's SVG says its smallest text (9.5 pt tick labels, in the SVG's point units) and
    the narrowest width it may be shown at: 9.4 in = 676.8 pt wide, 676.8 x 12 / 9.5 = 855 px;
    at scale 1.5 (16 px text) the figure is 9.4 x sqrt(1.5) in = 828.9 pt and the ticks 14.25 pt:
    828.9 x 16 / 14.25 = 931 px. The hover grid's box keeps the same width."""
    import re
    x = mt.tensor([0.5, -1.0, 2.0], dtype=mt.float64, requires_grad=True)
    html = viz.gradcheck(HalfSquare.apply, (x,))._repr_html_()
    svg = re.search(r"<svg[^>]*>", html).group(0)
    assert 'data-min-font-pt="9.5"' in svg and 'style="min-width: 855px"' in svg
    assert "<div class='mt-heatwrap'" in html and "style='min-width: 855px'" in html
    # the narrow variant for outputs under 855 px: 5.3 in = 381.6 pt, 381.6 x 12 / 9.5 = 482 px
    assert "style='min-width: 482px'" in html and "@container (max-width: 854px)" in html
    old = viz.set_options(scale=1.5)
    try:
        svg = re.search(r"<svg[^>]*>", viz.gradcheck(HalfSquare.apply, (x,))._repr_html_()).group(0)
    finally:
        viz.set_options(**old)
    assert 'data-min-font-pt="14.25"' in svg and 'style="min-width: 931px"' in svg
