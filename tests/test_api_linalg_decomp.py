"""The decompositions and solves of ops/linalg_decomp.py and ops/linalg_triangular.py against torch 2.13:
values, gradients, second order, forward mode and vmap (op_oracle.check_op), grad_fn names, the Tensor methods
and the errors."""
import warnings

import numpy as np
import pytest
import torch

import microtorch as mt
from op_oracle import check_op, close

rng = np.random.default_rng(0)


def well(n, *batch):
    return rng.standard_normal(batch + (n, n)) + 3 * np.eye(n)


def factor(n):
    a = rng.standard_normal((n, n))
    return np.linalg.cholesky(a @ a.T + n * np.eye(n))


def total(outs):
    return sum(o.sin().sum() for o in outs)


A, B = well(4), rng.standard_normal((4, 2))
CASES = {
    "solve_triangular": (lambda L, a, b: L.linalg.solve_triangular(a, b, upper=True), A, B),
    "solve_triangular right unit": (lambda L, a, b: L.linalg.solve_triangular(a, b.T, upper=False, left=False,
                                                                             unitriangular=True), A, B),
    "triangular_solve": (lambda L, b, a: total(L.triangular_solve(b, a)), B, A),
    "triangular_solve transposed": (lambda L, b, a: total(L.triangular_solve(b, a, False, True, True)), B, A),
    "cholesky_solve": (lambda L, b, c: L.cholesky_solve(b, c), B, factor(4)),
    "cholesky_solve upper": (lambda L, b, c: L.cholesky_solve(b, c, upper=True), B, factor(4).T.copy()),
    "cholesky_inverse": (lambda L, c: L.cholesky_inverse(c), factor(4)),
    "cholesky_inverse upper": (lambda L, c: L.cholesky_inverse(c, True), factor(4).T.copy()),
    "qr square": (lambda L, a: total(L.linalg.qr(a)), rng.standard_normal((4, 4))),
    "qr tall": (lambda L, a: total(L.linalg.qr(a)), rng.standard_normal((5, 3))),
    "qr wide": (lambda L, a: total(L.linalg.qr(a)), rng.standard_normal((3, 5))),
    "qr complete wide": (lambda L, a: total(L.linalg.qr(a, "complete")), rng.standard_normal((3, 5))),
    "qr batched": (lambda L, a: total(L.linalg.qr(a)), rng.standard_normal((2, 4, 3))),
    "lu_factor": (lambda L, a: L.linalg.lu_factor(a)[0].sin(), rng.standard_normal((4, 4))),
    "lu_factor wide": (lambda L, a: L.linalg.lu_factor(a)[0].sin(), rng.standard_normal((3, 5))),
    "lu_factor tall": (lambda L, a: L.linalg.lu_factor(a)[0].sin(), rng.standard_normal((5, 3))),
    "linalg.lu": (lambda L, a: total(L.linalg.lu(a)), rng.standard_normal((4, 4))),
    "linalg.lu wide": (lambda L, a: total(L.linalg.lu(a)), rng.standard_normal((3, 5))),
    "linalg.lu tall": (lambda L, a: total(L.linalg.lu(a)), rng.standard_normal((5, 3))),
    "lu_unpack": (lambda L, a: total(L.lu_unpack(*L.linalg.lu_factor(a))), rng.standard_normal((4, 4))),
    "lu_unpack tall": (lambda L, a: total(L.lu_unpack(*L.linalg.lu_factor(a))), rng.standard_normal((5, 3))),
    "lu_solve": (lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b), well(4), B),
    "lu_solve adjoint": (lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b, adjoint=True), well(4), B),
    "lu_solve right": (lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b.T, left=False), well(4), B),
    "lu_solve right adjoint": (lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b.T, left=False,
                                                                 adjoint=True), well(4), B),
    "lu_solve of a given LU": (lambda L, lu, b: L.linalg.lu_solve(lu, L.linalg.lu_factor(lu.detach())[1], b),
                               well(4), B),
    "torch.lu_solve": (lambda L, b, a: L.lu_solve(b, *L.lu(a)), B, well(4)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_values_gradients_jvp_and_vmap_as_torch(name):
    f, *arrays = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's deprecation warnings of triangular_solve, qr, lu, lu_solve
        check_op(f, *arrays, grad_tol=1e-8)


def _names(lib):
    a = lib.tensor(well(4), requires_grad=True)
    b = lib.tensor(B, requires_grad=True)
    c = lib.tensor(factor(4), requires_grad=True)
    lu, piv = lib.linalg.lu_factor(a)
    outs = [lib.linalg.solve_triangular(a, b, upper=True), *lib.triangular_solve(b, a), lib.cholesky_solve(b, c),
            lib.cholesky_inverse(c), *lib.linalg.qr(a), a.qr().R, lu, *lib.linalg.lu(a)[1:],
            *lib.lu_unpack(lu, piv)[1:], lib.linalg.lu_solve(lu, piv, b), b.lu_solve(lu, piv),
            b.triangular_solve(a).solution, b.cholesky_solve(c), c.cholesky_inverse(), a.lu()[0]]
    return [o.grad_fn.name() for o in outs], [piv.dtype, lib.linalg.lu(a).P.grad_fn, lib.lu_unpack(lu, piv).P.grad_fn]


def test_grad_fn_names_methods_and_pivots_as_torch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (nt, rest_t), (nm, rest_m) = _names(torch), _names(mt)
    assert nm == nt
    assert str(rest_m[0]).split(".")[1] == str(rest_t[0]).split(".")[1] == "int32"
    assert rest_m[1:] == rest_t[1:] == [None, None]


def test_qr_modes_and_lu_factor_ex_as_torch():
    a = rng.standard_normal((5, 3))
    for mode in ("reduced", "complete", "r"):
        qt, rt = torch.linalg.qr(torch.tensor(a), mode)
        qm, rm = mt.linalg.qr(mt.tensor(a), mode)
        close(qm, qt, f"Q {mode}")
        close(rm, rt, f"R {mode}")
    singular = np.zeros((3, 3))
    singular[0, 0] = 1
    res = [lib.linalg.lu_factor_ex(lib.tensor(singular)) for lib in (torch, mt)]
    for x, y in zip(res[1], res[0]):
        close(x, y, "lu_factor_ex")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = [lib.lu(lib.tensor(singular), get_infos=True) for lib in (torch, mt)]
    for x, y in zip(res[1], res[0]):
        close(x, y, "lu(get_infos=True)")


def test_batch_broadcasting_as_torch():
    a, b = well(3, 2), rng.standard_normal((4, 1, 3, 2))
    res = [lib.linalg.solve_triangular(lib.tensor(a), lib.tensor(b), upper=False) for lib in (torch, mt)]
    close(res[1], res[0], "solve_triangular broadcast")
    res = [lib.linalg.lu_solve(*lib.linalg.lu_factor(lib.tensor(a)), lib.tensor(b)) for lib in (torch, mt)]
    close(res[1], res[0], "lu_solve broadcast")


ERRORS = [
    lambda L: L.linalg.solve_triangular(L.ones(3, 4), L.ones(3, 2), upper=True),
    lambda L: L.linalg.solve_triangular(L.eye(3), L.ones(4, 2), upper=True),
    lambda L: L.linalg.solve_triangular(L.eye(3), L.ones(3), upper=True),
    lambda L: L.cholesky_solve(L.ones(3, 2), L.eye(4)),
    lambda L: L.cholesky_inverse(L.ones(4, 3)),
    lambda L: L.linalg.qr(L.ones(3)),
    lambda L: L.linalg.qr(L.ones(3, 2), mode="bad"),
    lambda L: L.linalg.qr(L.ones(3, 2, dtype=L.int32)),
    lambda L: L.linalg.lu_factor(L.zeros(3, 3)),
    lambda L: L.linalg.lu_factor(L.eye(3), pivot=False),
    lambda L: L.linalg.lu_solve(*L.linalg.lu_factor(L.ones(4, 3) + L.eye(4, 3)), L.ones(4, 2)),
    lambda L: L.linalg.lu_solve(*L.linalg.lu_factor(L.eye(3)), L.ones(4, 2)),
    lambda L: L.linalg.qr(L.ones(3, 2, requires_grad=True), mode="r")[1].sum().backward(),
    lambda L: L.linalg.qr(L.randn(3, 2, requires_grad=True), mode="complete")[1].sum().backward(),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_errors_as_torch(k):
    kinds = []
    for lib in (torch, mt):
        try:
            ERRORS[k](lib)
            kinds.append(None)
        except Exception as e:  # noqa: BLE001 (the kind is what is compared)
            kinds.append(type(e))
    assert kinds[0] is not None and kinds[1] is kinds[0]


def test_vmap_rules_as_torch():
    """torch batches these without a warning (linalg.lu loops with one there, and here)."""
    a, b = well(4, 3), rng.standard_normal((3, 4, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for lib in (torch, mt):
            lu, piv = lib.linalg.lu_factor(lib.tensor(a))
            out = [lib.func.vmap(lib.linalg.lu_solve, in_dims=(0, 0, None))(lu, piv, lib.tensor(b[0])),
                   lib.func.vmap(lambda x: lib.linalg.solve_triangular(x, lib.tensor(b[0]), upper=True))(
                       lib.tensor(a)),
                   lib.func.vmap(lib.lu_unpack)(lu, piv)[1], lib.func.vmap(lib.linalg.qr)(lib.tensor(a))[0]]
            if lib is torch:
                expected = out
        for x, y in zip(out, expected):
            close(x, y, "vmap")
    from microtorch.func._batching import _rule_for
    from microtorch.ops.linalg_decomp import Lu
    assert _rule_for(Lu) is None  # (the per-example fallback warns once per op and process, as torch's)


SAVED_DATA = well(3), rng.standard_normal((3, 2)), factor(3)


def _saved(lib):
    a, b, c = (lib.tensor(x, requires_grad=True) for x in SAVED_DATA)
    lu, piv = lib.linalg.lu_factor(a)
    nodes = {"solve_triangular": (lib.linalg.solve_triangular(a, b, upper=True, left=True), ["self", "result", "upper",
                                                                                         "left", "unitriangular"]),
             "triangular_solve": (lib.triangular_solve(b, a, False, True)[0], ["self", "A", "solution", "upper",
                                                                               "transpose", "unitriangular"]),
             "cholesky_solve": (lib.cholesky_solve(b, c), ["self", "input2", "result", "upper"]),
             "cholesky_inverse": (lib.cholesky_inverse(c, True), ["self", "result", "upper"]),
             "qr": (lib.linalg.qr(a, "complete")[0], ["Q", "R", "mode"]),
             "lu_factor": (lu, ["LU", "pivots", "pivot"]), "lu": (lib.linalg.lu(a).L, ["L", "P", "U", "pivot"]),
             "lu_solve": (lib.linalg.lu_solve(lu, piv, b, adjoint=True), ["LU", "pivots", "result", "left",
                                                                          "adjoint"]),
             "scatter_reduce": (a.scatter_reduce(0, lib.tensor([[0, 1, 0]]), b.T[:1] * 1, "amax", include_self=False),
                                ["self", "src", "index", "result", "dim", "reduce", "include_self"]),
             "index_reduce": (a.index_reduce(0, lib.tensor([0, 2]), b.T * 1, "mean"),
                              ["self", "source", "index", "result", "dim", "reduce", "include_self"])}
    return {k: [getattr(y.grad_fn, "_saved_" + n) for n in names] for k, (y, names) in nodes.items()}


def test_saved_attributes_as_torch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t, m = _saved(torch), _saved(mt)
    for k in t:
        for x, y in zip(m[k], t[k]):
            if isinstance(y, torch.Tensor):
                close(x, y, f"{k} saved")
            else:
                assert x == y, k


def test_householder_form_as_torch():
    """geqrf's (a, tau), and Q from them: householder_product / orgqr, ormqr (values, gradients, jvp)"""
    a, other = rng.standard_normal((5, 3)), rng.standard_normal((5, 2))
    res = []
    for lib in (torch, mt):
        h, tau = lib.geqrf(lib.tensor(a))
        h2, t2 = h.detach().clone().requires_grad_(), tau.detach().clone().requires_grad_()
        q = lib.linalg.householder_product(h2, t2)
        o = lib.ormqr(h2, t2, lib.tensor(other), True, True)
        grads = lib.autograd.grad(q.sin().sum() + o.sum(), (h2, t2))
        tangent = lib.func.jvp(lambda x: lib.linalg.householder_product(x, tau), (h,), (lib.tensor(a),))[1]
        res.append([h, tau, q, o, *grads, tangent, h.orgqr(tau), h.ormqr(tau, lib.tensor(other.T), False),
                    lib.func.vmap(lib.geqrf)(lib.tensor(np.stack([a, a])))[0]])
    for x, y in zip(res[1], res[0]):
        close(x, y, "householder", 1e-10)
    for lib in (torch, mt):
        h, _ = lib.geqrf(lib.tensor(a, requires_grad=True))
        with pytest.raises(NotImplementedError, match="geqrf"):
            h.sum().backward()
        with pytest.raises(RuntimeError):
            lib.linalg.householder_product(lib.ones(2, 3), lib.ones(1))
