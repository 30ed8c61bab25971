"""What the nodes of the order ops save, as torch 2.13's: max/min along a dim, topk, kthvalue, median, nanmedian,
mode, sort (stable, descending), msort, cummax and cummin keep the int64 indices they return (pack hooks see them,
a second backward raises, `_saved_indices` is the returned tensor and raises once freed), and show `_saved_dim`
(as given: -1 reads 18446744073709551615), `_saved_keepdim` and `_saved_self_sym_sizes` where torch's do."""
import pytest
import torch

import microtorch
from tests.saved_compare import assert_saves_as_torch, observe, saved_names

_VALUES = [0.5, 1.5, -2.0, 2.5, -1.0, 0.25, 3.0, 0.5, -0.5, 1.0, 2.0, 0.1]


def _x(T, shape=(2, 3), dtype="float64"):
    n = 1
    for s in shape:
        n *= s
    data = T.tensor(_VALUES[:n], dtype=getattr(T, dtype)).reshape(shape)
    return data.requires_grad_()


def _nan(T):
    x = _x(T).detach()
    x[0, 1] = float("nan")
    return x.requires_grad_()


CASES = {
    "max dim": lambda T: _x(T).max(1),
    "max -1": lambda T: _x(T).max(-1),
    "max keepdim": lambda T: _x(T).max(0, keepdim=True),
    "max 0-d": lambda T: _x(T, ()).max(0),
    "max empty rows": lambda T: _x(T, (0, 3)).max(1),
    "min dim": lambda T: _x(T).min(0),
    "min -2 keepdim float32": lambda T: _x(T, (2, 3), "float32").min(-2, True),
    "min 0-d -1": lambda T: _x(T, ()).min(-1),
    "topk": lambda T: _x(T).topk(2),
    "topk dim 0 smallest": lambda T: _x(T).topk(1, 0, largest=False),
    "topk -2": lambda T: _x(T, (3, 4)).topk(2, -2),
    "topk unsorted": lambda T: _x(T, (3, 4)).topk(3, sorted=False),
    "topk k=0": lambda T: _x(T).topk(0),
    "topk 0-d": lambda T: _x(T, ()).topk(1),
    "topk empty": lambda T: _x(T, (0, 3)).topk(0, 1),
    "kthvalue": lambda T: _x(T).kthvalue(2, 1),
    "kthvalue -1 keepdim": lambda T: _x(T, (3, 4)).kthvalue(3, -1, True),
    "kthvalue 0-d": lambda T: _x(T, ()).kthvalue(1),
    "median dim": lambda T: _x(T).median(1),
    "median -2 keepdim float32": lambda T: _x(T, (3, 4), "float32").median(-2, keepdim=True),
    "median 0-d": lambda T: _x(T, ()).median(0),
    "nanmedian dim": lambda T: _nan(T).nanmedian(1),
    "nanmedian -1 keepdim": lambda T: _nan(T).nanmedian(-1, True),
    "mode": lambda T: _x(T).mode(),
    "mode dim 0 keepdim": lambda T: _x(T, (4, 3)).mode(0, True),
    "mode 0-d": lambda T: _x(T, ()).mode(),
    "sort": lambda T: _x(T).sort(),
    "sort dim 0 descending": lambda T: _x(T).sort(0, True),
    "sort -2 float32": lambda T: _x(T, (3, 4), "float32").sort(-2),
    "sort stable": lambda T: _x(T).sort(stable=True),
    "sort stable descending": lambda T: _x(T, (3, 4)).sort(stable=True, dim=0, descending=True),
    "sort 0-d": lambda T: _x(T, ()).sort(),
    "sort empty": lambda T: _x(T, (0, 3)).sort(0),
    "sort transposed": lambda T: _x(T, (3, 4)).t().sort(1),
    "msort": lambda T: _x(T, (3, 4)).msort(),
    "cummax": lambda T: _x(T).cummax(1),
    "cummax -1": lambda T: _x(T, (3, 4)).cummax(-1),
    "cummax 0-d": lambda T: _x(T, ()).cummax(0),
    "cummax empty": lambda T: _x(T, (0, 3)).cummax(1),
    "cummin": lambda T: _x(T).cummin(0),
    "cummin -2 float32": lambda T: _x(T, (3, 4), "float32").cummin(-2),
    "cummin 0-d -1": lambda T: _x(T, ()).cummin(-1),
    "cummin empty -1": lambda T: _x(T, (2, 0)).cummin(-1),
}

def _node(T, f):
    y = f(T)
    return (y[0] if isinstance(y, tuple) else y).grad_fn


@pytest.mark.parametrize("case", CASES)
def test_saves_packs_and_frees_indices_as_torch(case):
    assert_saves_as_torch(CASES[case])


@pytest.mark.parametrize("case", CASES)
def test_dim_keepdim_and_sizes_as_torch(case):
    f = CASES[case]
    names = [n for n in saved_names(_node(torch, f), skip=()) if n != "_saved_indices"]
    assert names and set(names) <= {"_saved_dim", "_saved_keepdim", "_saved_self_sym_sizes", "_saved_self"}
    assert observe(microtorch, f, names) == observe(torch, f, names)


@pytest.mark.parametrize("case", CASES)
def test_saved_indices_are_the_returned_ones(case):
    """As torch: `_saved_indices` is the indices tensor the op returned, so an in-place change makes backward raise
    torch's version error."""
    def run(T):
        y = CASES[case](T)
        if not isinstance(y, tuple):  # (msort: its indices are sort's, not returned)
            return None
        values, indices = y
        same = values.grad_fn._saved_indices is indices
        indices.add_(0)
        try:
            values.sum().backward()
            return same, "ok"
        except RuntimeError as e:
            return same, str(e).split(": [")[0], str(e).split("] ")[1].split(". ")[0]
    assert run(microtorch) == run(torch)


@pytest.mark.parametrize("case", [c for c in CASES if "empty" not in c])
def test_gradients_and_double_backward_as_torch(case):
    """Backward reads the saved indices back: first and second order gradients (create_graph) as torch's."""
    def run(T):
        y = CASES[case](T)
        values = y[0] if isinstance(y, tuple) else y
        x = _leaf(values.grad_fn)
        g, = T.autograd.grad((values * values).sum(), x, create_graph=True)
        gg, = T.autograd.grad(g.sum(), x)
        return g.tolist(), gg.tolist()
    assert run(microtorch) == run(torch)


def _leaf(node):
    """The leaf x the graph of node starts from (x itself, or x.t())."""
    while type(node).__name__ != "AccumulateGrad":
        node = node.next_functions[0][0]
    return node.variable


def test_cummax_packs_self_before_indices():
    """torch's CummaxBackward0 packs its input, then its indices (a result): hooks see them in that order."""
    def packs(T):
        seen = []
        with T.autograd.graph.saved_tensors_hooks(lambda t: seen.append(t.dtype) or t, lambda t: t):
            _x(T).cummax(1)
        return [str(d).split(".")[-1] for d in seen]
    assert packs(microtorch) == packs(torch) == ["float64", "int64"]


def test_forward_ad_and_vmap_still_read_the_indices():
    """jvp and vmap (which batches these ops through their own rules) are unchanged by the saving."""
    def run(T):
        import torch.func as tf
        from microtorch import func as mf
        func = tf if T is torch else mf
        x, t = _x(T, (3, 4)).detach(), _x(T, (3, 4)).detach().flip(0)
        outs = []
        for f in (lambda a: a.sort(-1)[0], lambda a: a.cummax(0)[0], lambda a: a.max(-1)[0], lambda a: a.median(0)[0],
                  lambda a: a.topk(2)[0], lambda a: a.kthvalue(2)[0], lambda a: a.mode()[0], lambda a: a.cummin(-1)[0]):
            outs.append(func.jvp(f, (x,), (t,))[1].tolist())
            outs.append(func.vmap(func.grad(lambda a: f(a).sum()))(x).tolist())
        return outs
    assert run(microtorch) == run(torch)


def test_a_wrong_expectation_fails():
    """The comparison can fail: a deliberately different op's node (topk's indices have another shape than max's),
    and a freed `_saved_indices` read as if it were still there."""
    with pytest.raises(AssertionError):
        assert_saves_as_torch(lambda T: CASES["topk"](T) if T is microtorch else CASES["max dim"](T))
    y = CASES["sort"](microtorch)
    y.values.sum().backward()
    with pytest.raises(RuntimeError, match="second time"):
        y.values.grad_fn._saved_indices
