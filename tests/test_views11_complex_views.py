"""z.real, z.imag, view_as_real and view_as_complex as views, beside torch 2.13: their base, their nodes
(`SelectBackward0` over `ViewAsRealBackward0`), writes through them (CopySlices on the base, the other views
rebuilt as torch rebuilds them), gradients and second order, and view_as_complex's refusals."""
import numpy as np
import pytest
import torch

import microtorch as mt
from microtorch.ops import elementwise as ew

Z = np.array([[1 + 2j, 3 - 1j, -0.5 + 0.25j], [2 - 2j, 0.5j, -1.5]])
X = np.array([[[1.0, 2.0], [3.0, -4.0]], [[0.5, -1.5], [2.5, 0.25]]])


def lib(T):
    """the namespace a case runs on (view_as_real/view_as_complex: microtorch's views, see the module's docstring)"""
    if T is torch:
        return torch.view_as_real, torch.view_as_complex
    return ew.view_as_real, ew.view_as_complex


def chain(t):
    """grad_fn names down the first edges"""
    names, node = [], t.grad_fn
    while node is not None and not node.name().endswith("AccumulateGrad"):
        names.append(node.name())
        node = node.next_functions[0][0] if node.next_functions else None
    return names


def outcome(fn):
    try:
        return fn()
    except Exception as e:
        return type(e).__name__, str(e)[:48]


def both(fn):
    return [outcome(lambda: fn(T)) for T in (torch, mt)]


def arr(t):
    return None if t is None else np.asarray(t.detach().numpy()).round(12).tolist()


@pytest.mark.parametrize("part", ["real", "imag", "view_as_real", "view_as_complex", "real of a slice",
                                  "imag of view_as_complex"])
def test_the_parts_are_views_with_torchs_nodes(part):
    def run(T):
        var, vac = lib(T)
        z0 = T.tensor(Z, requires_grad=True)
        x0 = T.tensor(X, requires_grad=True)
        z, x = z0 * 1, x0 * 1
        base, v = {"real": lambda: (z, z.real), "imag": lambda: (z, z.imag), "view_as_real": lambda: (z, var(z)),
                   "view_as_complex": lambda: (x, vac(x)), "real of a slice": lambda: (z, z[:, 1:].real),
                   "imag of view_as_complex": lambda: (x, vac(x).imag)}[part]()
        return chain(v), v._base is base, v._is_view(), v.is_leaf, v._version, tuple(v.shape), v.stride(), arr(v)
    t, m = both(run)
    assert m == t


@pytest.mark.parametrize("write", ["z.real.mul_(2)", "z.imag.add_(w)", "var(z)[0, 1].mul_(3)", "z[1].real.zero_()",
                                   "vac(x).mul_(1j)", "vac(x)[1].imag.add_(2)", "var(z)[1:].sin_()"])
def test_writing_through_a_part_changes_the_base_and_its_graph(write):
    def run(T):
        var, vac = lib(T)
        z0 = T.tensor(Z, requires_grad=True)
        x0 = T.tensor(X, requires_grad=True)
        w = T.tensor([0.5, -2.0, 1.0], dtype=T.float64, requires_grad=True)
        z, x = z0 * 1, x0 * 1
        others = [z.real, z.imag, var(z), z[0], vac(x), vac(x).real, x[0]]
        eval(write, {"z": z, "x": x, "w": w, "var": var, "vac": vac})
        names = [chain(z), chain(x)] + [chain(o) for o in others]
        loss = (z * z.conj()).real.sum() + (z.imag ** 3).sum() + (x ** 2).sum() + (vac(x).abs() ** 2).sum() \
            + sum((o.abs() ** 2).sum() for o in others)
        leaves = (z0, x0, w)
        grads = T.autograd.grad(loss, leaves, create_graph=True, allow_unused=True)
        used = [g for g in grads if g is not None]
        second = T.autograd.grad(sum((g.abs() ** 2).sum() for g in used), leaves, allow_unused=True)
        return names, arr(z), arr(x), [arr(g) for g in grads], [arr(g) for g in second]
    t, m = both(run)
    assert m == t


def test_a_base_that_needs_no_gradient_takes_a_written_part_that_does():
    def run(T):
        z = T.tensor(Z)
        w = T.tensor([5.0, 6.0, -1.0], dtype=T.float64, requires_grad=True)
        r = z.real
        r.mul_(w)
        z.abs().sum().backward()
        return chain(z), [n is None for n, _ in z.grad_fn.next_functions], arr(w.grad), arr(z)
    t, m = both(run)
    assert m == t


def test_a_part_of_a_leaf_is_refused_in_place_and_backward_reaches_the_leaf():
    def run(T):
        z0 = T.tensor(Z, requires_grad=True)
        refused = outcome(lambda: z0.real.mul_(2))
        (z0.real * 3 + z0.imag ** 2).sum().backward()
        return refused, arr(z0.grad)
    t, m = both(run)
    assert t[0][0] == m[0][0] == "RuntimeError" and m[1] == t[1]


@pytest.mark.parametrize("make", ["ones(3, 3)", "ones(2, 4).t()", "ones(())", "ones(4, 4)[:, 1:3]", "ones(4, 2)[1:]",
                                  "ones(3, 4)[:, ::2].contiguous()", "ones(2, dtype=T.int64)", "ones(3, 2)[::1]"])
def test_view_as_complex_checks_as_torch(make):
    def run(T):
        x = eval("T." + make, {"T": T})
        if x.dtype.is_floating_point:
            x = x.double()
        out = lib(T)[1](x)
        return tuple(out.shape), str(out.dtype).split(".")[-1]
    t, m = both(run)
    assert m[0] == t[0] and (m[1] == t[1] if t[0] != "RuntimeError" else m[1].startswith(t[1][:40]))


def test_view_as_real_of_a_real_tensor_is_refused():
    t, m = both(lambda T: lib(T)[0](T.ones(2)))
    assert t[0] == m[0] == "RuntimeError" and m[1].startswith(t[1])


def test_forward_mode_through_the_views():
    def run(T):
        fw = T.autograd.forward_ad
        var, vac = lib(T)
        with fw.dual_level():
            x = fw.make_dual(T.tensor(X), T.tensor(X[::-1].copy()))
            c = vac(x) * (1 + 2j)
            out = var(c).sin() + c.imag[..., None]
            return arr(fw.unpack_dual(out).tangent)
    t, m = both(run)
    assert m == t


def test_vmap_and_grad_through_the_parts(recwarn):
    """batched by a rule (no per-example fallback warning), with torch's values"""
    def run(T):
        var, vac = lib(T)
        z = T.tensor(Z)
        x = T.tensor(X)
        parts = T.func.vmap(lambda t: t.real * 2 + t.imag)(z)
        pairs = T.func.vmap(lambda t: var(t * 1j))(z)
        back = T.func.vmap(lambda t: vac(t).imag)(x)
        g = T.func.grad(lambda t: (t.real ** 2 + t.imag).sum())(T.tensor(Z))
        return arr(parts), arr(pairs), arr(back), arr(g)
    t, m = both(run)
    assert m == t
    assert not [w for w in recwarn if "batching rule" in str(w.message)]


@pytest.mark.parametrize("assign", ["z.real = w * 2", "z.imag = w", "z.imag = 7.0", "z.real = 0.5", "x.real = w[:2] * 3"])
def test_assigning_a_part_writes_into_the_tensor(assign):
    """torch's real/imag setters copy into the part (a view): CopySlices on a tensor with a history"""
    def run(T):
        z0 = T.tensor(Z[0], requires_grad=True)
        w = T.tensor([5.0, 6.0, -1.0], dtype=T.float64, requires_grad=True)
        z, x = z0 * 1, T.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=T.float64, requires_grad=True) * 1
        exec(assign, {"z": z, "x": x, "w": w})
        (z.abs().sum() + (x * x).sum()).backward()
        return chain(z), chain(x), arr(z), arr(x), arr(z0.grad), arr(w.grad)
    t, m = both(run)
    assert m == t


def test_imag_of_a_real_tensor_cannot_be_assigned():
    t, m = both(lambda T: setattr(T.ones(2), "imag", T.zeros(2)))
    assert t[0] == m[0] == "RuntimeError" and m[1].startswith(t[1])


@pytest.mark.parametrize("part", ["z.real", "z.t().real", "z[0].imag", "var(z)[1:]", "var(z.t())", "vac(var(z)).real",
                                  "z[:, 1:].real"])
@pytest.mark.parametrize("change", ["z.t_()", "z.unsqueeze_(0)", "z.mul_(2)", "z[1].exp_()"])
def test_a_part_is_rebuilt_from_its_place_in_memory(part, change):
    """torch rebuilds a part by as_strided, which reads memory: after z.t_() it still reads the same numbers (a
    rebuild by positions in the old layout would read others), with torch's nodes, gradients and second order"""
    def run(T):
        var, vac = lib(T)
        z0 = T.tensor(Z, requires_grad=True)
        w = T.tensor([0.3, 0.7], dtype=T.float64, requires_grad=True)
        z = z0 * (w.sum() + 0j)
        v = eval(part, {"z": z, "var": var, "vac": vac})
        eval(change, {"z": z})
        loss = (z.abs() ** 2).sum() + (v.abs() ** 2 * 3).sum()
        g = T.autograd.grad(loss, (z0, w), create_graph=True)
        g2 = T.autograd.grad(sum((x.abs() ** 2).sum() for x in g), (z0, w))
        return chain(v), [x.detach().numpy() for x in g + g2]
    (t_chain, t_grads), (m_chain, m_grads) = both(run)
    assert m_chain == t_chain
    for a, b in zip(m_grads, t_grads):  # (the sums of large squares differ in their last bit)
        np.testing.assert_allclose(a, b, rtol=1e-13)


@pytest.mark.parametrize("write", ["z.real.mul_(w)", "z.imag.add_(w)", "vac(x).mul_(c)", "var(z)[:, 1].sub_(w)"])
@pytest.mark.parametrize("base_tangent", [True, False])
def test_forward_mode_through_a_write_into_a_part(write, base_tangent):
    """the base's tangent takes the part's, as torch's (a base without one gets zeros of its own dtype)"""
    def run(T):
        fw = T.autograd.forward_ad
        var, vac = lib(T)
        with fw.dual_level():
            z, x = T.tensor(Z[0]), T.tensor(X[0])
            if base_tangent:
                z, x = fw.make_dual(z, T.tensor(Z[1])) * 1, fw.make_dual(x, T.tensor(X[1])) * 1
            w = fw.make_dual(T.tensor([1.0, 2.0, 3.0], dtype=T.float64), T.tensor([0.1, 0.2, 0.3], dtype=T.float64))
            c = fw.make_dual(T.tensor([1j, 2.0]), T.tensor([1.0, 1j]))
            eval(write, {"z": z, "x": x, "w": w, "c": c, "var": var, "vac": vac})
            return [arr(fw.unpack_dual(t).primal) for t in (z, x)], [arr(fw.unpack_dual(t).tangent) for t in (z, x)]
    t, m = both(run)
    assert m == t


@pytest.mark.parametrize("part", ["z.split(1)[1].real", "var(z.unbind(0)[0])", "var(z).unbind(-1)[1]"])
def test_a_part_of_an_output_of_split_is_one_too(part):
    """(torch: Output 0 of Select is a view and is being modified inplace. This view is the output of a function
    that returns multiple views...) microtorch changed it"""
    def run(T):
        var, _ = lib(T)
        z = T.tensor(Z, requires_grad=True) * 1
        v = eval(part, {"z": z, "var": var})
        return outcome(lambda: v.mul_(2)), v._version
    t, m = both(run)
    assert t[0][0] == m[0][0] == "RuntimeError" and m[0][1].startswith(t[0][1][:40]) and m[1] == t[1]


@pytest.mark.parametrize("part", ["z.real", "z.imag", "var(z)", "vac(x)", "vac(x * 1).imag", "(z * 2).real.sum()"])
def test_the_parts_of_a_meta_tensor_stay_meta(part):
    def run(T):
        var, vac = lib(T)
        z = T.empty(2, 3, dtype=T.complex64, device="meta", requires_grad=True)
        x = T.empty(2, 3, 2, device="meta", requires_grad=True)
        v = eval(part, {"z": z, "x": x, "var": var, "vac": vac})
        return tuple(v.shape), str(v.dtype).split(".")[-1], str(v.device), v.grad_fn.name()
    t, m = both(run)
    assert m == t
