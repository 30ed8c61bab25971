"""Reductions beside torch 2.13: the order in which a list of dims is checked (range or repeat first),
var_mean/std_mean as one node of two outputs, var/std's positional unbiased through the public guard, and
max/min/amax/amin of complex tensors."""
import numpy as np
import pytest
import torch

import microtorch as mt

LIBS = (torch, mt)
X = np.linspace(-2.0, 3.0, 24).reshape(2, 3, 4) ** 3


def _error(f):
    """(type name, the dim the message names) of what f raises, or None if it returns."""
    try:
        f()
    except (IndexError, RuntimeError) as e:
        named = "appears multiple times" in str(e) and str(e).split("dim ")[1].split(" ")[0]
        return type(e).__name__, named
    return None


DIM_OPS = {
    "sum": lambda L, x, d: x.sum(d), "mean": lambda L, x, d: x.mean(d), "amax": lambda L, x, d: x.amax(d),
    "amin": lambda L, x, d: x.amin(d), "logsumexp": lambda L, x, d: x.logsumexp(d),
    "count_nonzero": lambda L, x, d: x.count_nonzero(d), "all": lambda L, x, d: x.all(d),
    "any": lambda L, x, d: x.any(d), "nanmean": lambda L, x, d: x.nanmean(d),
    "std": lambda L, x, d: x.std(d), "var": lambda L, x, d: x.var(d), "var_mean": lambda L, x, d: L.var_mean(x, d),
    "std_mean": lambda L, x, d: L.std_mean(x, d), "vector_norm": lambda L, x, d: L.linalg.vector_norm(x, dim=d),
    "flip": lambda L, x, d: x.flip(d), "squeeze": lambda L, x, d: x.squeeze(d),
    "nansum": lambda L, x, d: x.nansum(d),
}


@pytest.mark.parametrize("op", sorted(DIM_OPS))
@pytest.mark.parametrize("dims", [(0, 0, 5), (5, 0, 0), (0, -3), (0, 1, 0, 7), (1, 2, -2), (0, 3)])
def test_repeated_or_out_of_range_dims(op, dims):
    got = {L: _error(lambda: DIM_OPS[op](L, L.tensor(X), dims)) for L in LIBS}
    assert got[mt] == got[torch]


def test_repeated_dim_message_names_the_op_and_the_wrapped_dim():
    with pytest.raises(RuntimeError, match=r"var\(\): dim 0 appears multiple times in the list of dims \[0, -3, 5\]"):
        mt.tensor(X).var((0, -3, 5))
    with pytest.raises(IndexError, match=r"sum\(\): Dimension out of range .* but got 5"):
        mt.tensor(X).sum((0, -3, 5))


def _graph(L, name, args, kwargs, w=2.0):
    x = L.tensor(X, requires_grad=True)
    v, m = getattr(L, name)(x, *args, **kwargs)
    node = v.grad_fn
    saved = [node._saved_correction, node._saved_keepdim, np.round(node._saved_self.detach().numpy(), 12).tolist()]
    if name == "std_mean":
        saved.append(np.round(node._saved_result0.detach().numpy(), 12).tolist())
    g, = L.autograd.grad((v * w + m).sum(), x, create_graph=True)
    gg, = L.autograd.grad(g.pow(2).sum(), x, retain_graph=True)
    gv, = L.autograd.grad(v.sum(), x, create_graph=True, retain_graph=True)
    gm, = L.autograd.grad(m.sum(), x, retain_graph=True)
    r = lambda t: np.round(t.detach().numpy(), 9).tolist()  # noqa: E731
    names = lambda n: [type(f).__name__ if f is not None else None for f, _ in n.next_functions]  # noqa: E731
    return (node.name(), m.grad_fn is node, v.output_nr if L is torch else v._output_nr, names(node), saved,
            r(v), r(m), g.grad_fn.name(), names(g.grad_fn), names(gv.grad_fn), r(g), r(gg), r(gv), r(gm))


@pytest.mark.parametrize("name", ["var_mean", "std_mean"])
@pytest.mark.parametrize("args, kwargs", [((), {}), ((1,), {}), (((0, 2),), {"correction": 0}),
                                          ((2,), {"keepdim": True}), ((True,), {}), ((1, False), {}),
                                          ((), {"dim": (0, 1), "unbiased": False, "keepdim": True})])
def test_var_mean_is_one_node(name, args, kwargs):
    t, m = _graph(torch, name, args, kwargs), _graph(mt, name, args, kwargs)
    assert m == t


@pytest.mark.parametrize("name", ["var_mean", "std_mean"])
def test_var_mean_forward_mode(name):
    tangent = np.cos(X)
    got = {}
    for L in LIBS:
        fa = L.autograd.forward_ad
        with fa.dual_level():
            v, m = getattr(L, name)(fa.make_dual(L.tensor(X), L.tensor(tangent)), 1)
            got[L] = [np.round(fa.unpack_dual(o).tangent.numpy(), 9).tolist() for o in (v, m)]
    assert got[mt] == got[torch]


@pytest.mark.parametrize("name", ["var_mean", "std_mean"])
def test_var_mean_of_integers_is_refused(name):
    for L in LIBS:
        with pytest.raises(RuntimeError, match=f"{name} only support floating point and complex dtypes"):
            getattr(L, name)(L.tensor([1, 2, 3]))


def _value(f):
    try:
        r = f()
    except TypeError:
        return "TypeError"
    r = r if isinstance(r, tuple) else (r,)
    return [(tuple(o.shape), o.grad_fn.name(), round(o.item(), 10) if o.numel() == 1 else None) for o in r]


@pytest.mark.parametrize("op", ["var", "std", "var_mean", "std_mean"])
@pytest.mark.parametrize("args, kwargs", [((True,), {}), ((False,), {}), ((True,), {"keepdim": True}),
                                          ((False,), {"correction": 0}), ((1, True), {}), ((None, False, True), {}),
                                          ((1.5,), {}), (("a",), {})])
def test_positional_unbiased_through_the_public_function(op, args, kwargs):
    got = {L: _value(lambda: getattr(L, op)(L.tensor(X, requires_grad=True), *args, **kwargs)) for L in LIBS}
    assert got[mt] == got[torch]
    if op in ("var", "std"):
        method = {L: _value(lambda: getattr(L.tensor(X, requires_grad=True), op)(*args, **kwargs)) for L in LIBS}
        assert method[mt] == method[torch]


C = np.array([[1 + 2j, 3 - 1j], [0.5j, 2]])
COMPLEX_CASES = {
    "max": lambda L, c: c.max(), "min": lambda L, c: c.min(), "max_dim": lambda L, c: c.max(0),
    "min_dim": lambda L, c: L.min(c, 1, keepdim=True), "max_dim_kw": lambda L, c: L.max(c, dim=-1),
    "amax": lambda L, c: c.amax(), "amin_dim": lambda L, c: c.amin(1), "amax_dims": lambda L, c: L.amax(c, (0, 1)),
    "max_0d": lambda L, c: c[0, 0].max(), "max_dim_0d": lambda L, c: c[0, 0].max(0),
    "max_empty": lambda L, c: c[:0].max(), "max_dim_empty": lambda L, c: c[:0].max(0),
    "max_dim_empty_other": lambda L, c: c[:0].max(1), "amax_empty_result": lambda L, c: c[:0].amax(1),
    "amin_empty_dim": lambda L, c: c[:0].amin(0), "amax_out_of_range": lambda L, c: c.amax(5),
    "max_out_of_range": lambda L, c: c.max(5), "maximum": lambda L, c: L.max(c, c),
    "max_other": lambda L, c: c.max(other=c), "min_c128": lambda L, c: c.to(L.complex128).min(),
}


@pytest.mark.parametrize("case", sorted(COMPLEX_CASES))
def test_max_min_of_complex(case):
    got = {}
    for L in LIBS:
        try:
            out = COMPLEX_CASES[case](L, L.tensor(C, dtype=L.complex64))
            got[L] = ("returned", tuple(out.shape), str(out.dtype).split(".")[-1])
        except Exception as e:  # noqa: BLE001 (the type is what is compared)
            got[L] = type(e).__name__
            assert L is torch or "max" in str(e) or "min" in str(e)  # (ours names the op)
    assert got[mt] == got[torch]


def test_max_of_complex_messages():
    c = mt.tensor(C)
    with pytest.raises(RuntimeError, match=r"max\(\): does not support complex input"):
        c.max(0)
    with pytest.raises(NotImplementedError, match="\"max_all\" not implemented for 'ComplexDouble'"):
        c.max()
    with pytest.raises(NotImplementedError, match="\"min_values_cpu\" not implemented for 'ComplexDouble'"):
        c.amin(0)
