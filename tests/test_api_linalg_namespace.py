"""microtorch.linalg beyond the decompositions: solve, cholesky, eigh (ops of ops/linalg_factor.py), svd,
norms, vecdot, multi_dot, cond, matrix_rank... against torch.linalg 2.13: values, gradients, second order,
forward mode, vmap, grad_fn names and errors."""
import numpy as np
import pytest
import torch

import microtorch as mt
from op_oracle import check_op, close

rng = np.random.default_rng(0)


def spd(n, *batch):
    a = rng.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def well(n, *batch):
    return rng.standard_normal(batch + (n, n)) + 3 * np.eye(n)


def sym_part(L, a):
    return (a + a.mT) / 2


CASES = {
    "solve": (lambda L, a, b: L.linalg.solve(a, b), well(4), rng.standard_normal((4, 2))),
    "solve vector": (lambda L, a, b: L.linalg.solve(a, b), well(3), rng.standard_normal(3)),
    "solve right": (lambda L, a, b: L.linalg.solve(a, b, left=False), well(3), rng.standard_normal((2, 3))),
    "solve batched": (lambda L, a, b: L.linalg.solve(a, b), well(3, 2), rng.standard_normal((2, 3, 2))),
    "cholesky": (lambda L, a: L.linalg.cholesky(sym_part(L, a)), spd(4)),
    "cholesky upper": (lambda L, a: L.linalg.cholesky(sym_part(L, a), upper=True), spd(3)),
    "cholesky not symmetrized": (lambda L, a: L.linalg.cholesky(a), spd(3)),
    "eigh values": (lambda L, a: L.linalg.eigvalsh(sym_part(L, a)), spd(4)),
    "eigh vectors (sign-free)": (lambda L, a: (lambda w, v: (v * v) * w.unsqueeze(-2))(*L.linalg.eigh(sym_part(L, a))),
                                 spd(4)),
    "svdvals": (lambda L, a: L.linalg.svdvals(a), rng.standard_normal((4, 3))),
    "svd product": (lambda L, a: (lambda u, s, vh: (u * s.unsqueeze(-2)) @ vh)(*L.linalg.svd(a, False)),
                    rng.standard_normal((3, 4))),
    "pinv": (lambda L, a: L.linalg.pinv(a), rng.standard_normal((4, 3))),
    "vecdot": (lambda L, x, y: L.linalg.vecdot(x, y, dim=0), rng.standard_normal((3, 2)), rng.standard_normal((3, 1))),
    "multi_dot": (lambda L, a, b, c: L.linalg.multi_dot([a, b, c]), rng.standard_normal(3),
                  rng.standard_normal((3, 4)), rng.standard_normal((4, 2))),
    "matrix_norm fro": (lambda L, a: L.linalg.matrix_norm(a), rng.standard_normal((2, 3, 4))),
    "matrix_norm nuc": (lambda L, a: L.linalg.matrix_norm(a, "nuc"), rng.standard_normal((3, 4))),
    "matrix_norm 2": (lambda L, a: L.linalg.matrix_norm(a, 2, keepdim=True), rng.standard_normal((3, 4))),
    "matrix_norm 1": (lambda L, a: L.linalg.matrix_norm(a, 1), rng.standard_normal((2, 3, 4))),
    "matrix_norm -inf": (lambda L, a: L.linalg.matrix_norm(a, -float("inf"), dim=(0, 2)),
                         rng.standard_normal((3, 2, 4))),
    "norm": (lambda L, a: L.linalg.norm(a), rng.standard_normal((3, 4))),
    "norm vector ord": (lambda L, a: L.linalg.norm(a, 3, dim=1), rng.standard_normal((3, 4))),
    "norm matrix ord": (lambda L, a: L.linalg.norm(a, "nuc"), rng.standard_normal((3, 4))),
    "cond": (lambda L, a: L.linalg.cond(a), well(3)),
    "cross": (lambda L, a, b: L.linalg.cross(a, b), rng.standard_normal((2, 3)), rng.standard_normal((2, 3))),
    "inv_ex": (lambda L, a: L.linalg.inv_ex(a).inverse, well(3)),
    "vander": (lambda L, x: L.linalg.vander(x, N=4), rng.standard_normal(3)),
}
NO_VMAP = {"multi_dot", "cholesky", "cholesky upper", "cholesky not symmetrized"}  # (a batch of random matrices:
# not positive-definite; cholesky's vmap is tested below)


@pytest.mark.parametrize("name", list(CASES))
def test_values_gradients_jvp_vmap_as_torch(name):
    f, *arrays = CASES[name]
    # (torch's own second backward of inv_ex fails: it modifies its saved output in place)
    check_op(f, *arrays, grad_tol=1e-7, vmap=name not in NO_VMAP, second_order=name != "inv_ex")


def test_cond_in_other_norms_as_torch():
    """values as torch's; torch 2.13 cannot differentiate cond(A, 'fro') (its inv_ex output is modified in place),
    so the gradient is checked numerically"""
    a = well(3)
    for p in ("fro", "nuc", 1, float("inf")):
        close(mt.linalg.cond(mt.tensor(a), p), torch.linalg.cond(torch.tensor(a), p), f"cond {p}")
    assert mt.autograd.gradcheck(lambda t: mt.linalg.cond(t, "fro"), (mt.tensor(a, requires_grad=True),))


def test_vmap_of_the_factorizations_as_torch():
    a, b = spd(3, 4), rng.standard_normal((4, 3, 2))
    out = []
    for lib in (torch, mt):
        A, Bm = lib.tensor(a), lib.tensor(b)
        out.append([lib.func.vmap(lib.linalg.cholesky)(A), lib.func.vmap(lib.linalg.eigvalsh)(A),
                    lib.func.vmap(lib.linalg.solve)(A, Bm), lib.func.vmap(lambda x: lib.linalg.inv_ex(x)[0])(A),
                    lib.func.vmap(lib.func.grad(lambda x: lib.linalg.cholesky(x).sum()))(A)])
    for x, y in zip(out[1], out[0]):
        close(x, y, "vmap", 1e-8)


def test_grad_fn_names_as_torch():
    def names(L):
        a = L.tensor(spd(3), requires_grad=True)
        b = L.tensor(rng.standard_normal((3, 2)), requires_grad=True)
        return [o.grad_fn.name() for o in (L.linalg.solve(a, b), L.linalg.solve_ex(a, b)[0], L.linalg.cholesky(a),
                                           L.linalg.cholesky_ex(a)[0], *L.linalg.eigh(a), L.linalg.eigvalsh(a),
                                           L.linalg.svdvals(a), L.linalg.inv_ex(a)[0], L.linalg.pinv(a),
                                           L.linalg.matrix_norm(a), L.linalg.norm(b), L.linalg.diagonal(a))]
    state = rng.bit_generator.state
    t = names(torch)
    rng.bit_generator.state = state
    assert names(mt) == t


def test_infos_ranks_and_errors_as_torch():
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    for f in (lambda L: L.linalg.solve_ex(L.tensor(singular), L.ones(2, dtype=L.float64)).info,
              lambda L: L.linalg.inv_ex(L.tensor(singular)).info,
              lambda L: L.linalg.cholesky_ex(L.tensor([[1.0, 0.0], [0.0, -1.0]])).info,
              lambda L: L.linalg.matrix_rank(L.tensor(singular)),
              lambda L: L.linalg.matrix_rank(L.tensor(rng.standard_normal((2, 4, 3)) if L is torch else RANK_DATA)),
              lambda L: L.linalg.matrix_rank(L.tensor(singular), atol=10.0)):
        close(f(mt), f(torch), "info")
    for lib in (torch, mt):
        with pytest.raises(lib.linalg.LinAlgError):
            lib.linalg.solve(lib.tensor(singular), lib.ones(2, dtype=lib.float64))
        with pytest.raises(RuntimeError):
            lib.linalg.cholesky(-lib.eye(2))
        with pytest.raises(RuntimeError):
            lib.linalg.eigh(lib.eye(2), UPLO="X")
        with pytest.raises(RuntimeError):
            lib.linalg.solve(lib.eye(3), lib.ones(2, 2))
    assert issubclass(mt.linalg.LinAlgError, RuntimeError)


RANK_DATA = None


@pytest.fixture(autouse=True)
def _rank_data():
    global RANK_DATA
    RANK_DATA = rng.standard_normal((2, 4, 3))
    yield


def test_svd_full_matrices_as_torch():
    a = rng.standard_normal((4, 2))
    (ut, st, vt), (um, sm, vm) = torch.linalg.svd(torch.tensor(a)), mt.linalg.svd(mt.tensor(a))
    assert tuple(um.shape) == tuple(ut.shape) == (4, 4)
    close(um @ um.mT, np.eye(4), "U orthogonal")
    close(abs(um[:, :2]), abs(ut[:, :2]), "U", 1e-8)
    close(sm, st, "S")


def _eig_invariants(L, a):
    """eigenvalues, and what does not depend on each eigenvector's phase: |V|^2"""
    w, v = L.linalg.eig(a)
    return L.stack([w.real, w.imag]), v.abs() ** 2


def test_eig_as_torch():
    a, t, batch = rng.standard_normal((4, 4)), rng.standard_normal((4, 4)), rng.standard_normal((3, 4, 4))
    weights = rng.standard_normal((4, 4))
    res = []
    for lib in (torch, mt):
        x = lib.tensor(a, requires_grad=True)
        w, v2 = _eig_invariants(lib, x)
        g, = lib.autograd.grad(w.sin().sum() + (v2 * lib.tensor(weights)).sum(), x)
        tangents = lib.func.jvp(lambda y: _eig_invariants(lib, y), (lib.tensor(a),), (lib.tensor(t),))[1]
        batched = lib.func.vmap(lib.linalg.eigvals)(lib.tensor(batch))
        res.append([w, v2, g, *tangents, lib.view_as_real(batched), lib.linalg.eig(x)[0].grad_fn.name()])
    for x, y in zip(res[1][:-1], res[0][:-1]):
        close(x, y, "eig", 1e-8)
    assert res[1][-1] == res[0][-1]


@pytest.mark.parametrize("driver", [None, "gelsd"])
def test_lstsq_tensorinv_tensorsolve_as_torch(driver):
    a, b, t = rng.standard_normal((5, 3)), rng.standard_normal((5, 2)), rng.standard_normal((4, 2, 2))
    res = []
    for lib in (torch, mt):
        x = lib.tensor(a, requires_grad=True)
        out = lib.linalg.lstsq(x, lib.tensor(b), driver=driver)
        g, = lib.autograd.grad(out.solution.sin().sum(), x)
        s = lib.tensor(np.eye(6).reshape(2, 3, 6) + 0.1)
        res.append([out.solution, out.residuals, out.rank, out.singular_values, g,
                    lib.linalg.tensorinv(lib.tensor(t), ind=1),
                    lib.linalg.tensorsolve(s, lib.tensor(np.arange(6.0).reshape(2, 3)))])
    for x, y in zip(res[1], res[0]):
        close(x, y, f"lstsq {driver}", 1e-8)


def test_ldl_factor_and_solve_as_torch():
    """LAPACK's Bunch-Kaufman pivots and factors, on matrices that need 1x1 and 2x2 blocks and interchanges
    (a zero or small diagonal, integer entries with ties), and the solves; no derivative in either library"""
    for trial in range(40):
        n = 1 + trial % 6
        a = rng.standard_normal((n, n))
        a = a + a.T
        a[0, 0] = 0 if trial % 3 == 0 else a[0, 0]
        a = np.round(a) + 0.5 * np.eye(n) if trial % 4 == 0 else a
        b = rng.standard_normal((n, 2))
        res = []
        for lib in (torch, mt):
            ld, piv, info = lib.linalg.ldl_factor_ex(lib.tensor(a))
            res.append([ld, piv, info, lib.linalg.ldl_solve(ld, piv, lib.tensor(b))])
        for x, y in zip(res[1], res[0]):
            close(x, y, f"ldl {trial}", 1e-8)
    batch = np.stack([spd(3), -spd(3)])
    ld, piv = mt.linalg.ldl_factor(mt.tensor(batch))
    close(mt.linalg.ldl_solve(ld, piv, mt.tensor(np.eye(3))), np.linalg.inv(batch), "batched ldl", 1e-8)
    for lib in (torch, mt):
        ld, _ = lib.linalg.ldl_factor(lib.tensor(spd(3), requires_grad=True))
        assert ld.grad_fn.name().endswith("NotImplemented")
        with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_factor_ex is not implemented"):
            ld.sum().backward()
