"""The LDL^T factorization of a symmetric matrix with Bunch-Kaufman pivoting (torch.linalg.ldl_factor,
LAPACK's sytrf on the lower triangle) and the solve with it (ldl_solve, LAPACK's sytrs).

D is block diagonal with 1x1 and 2x2 blocks; LD holds L below the diagonal and D on it (a 2x2 block's
off-diagonal entry just below it), and the pivots are LAPACK's: k for a 1x1 block whose row was swapped with
row k, -k on both rows of a 2x2 block (1-based). torch has no derivative for either: the ops record a node that
refuses backward, as torch's NotImplemented does."""
import numpy as np

from .._tensor import Tensor
from ._op import Op

_ALPHA = (1 + 17 ** 0.5) / 8  # Bunch-Kaufman's threshold: it bounds the growth of the entries


def _choose_pivot(a, k):
    """(kp, kstep): the row to swap in and whether the block is 1x1 or 2x2 (LAPACK's dsytf2 test)"""
    n = a.shape[0]
    absakk = abs(a[k, k])
    imax = k + 1 + int(np.argmax(np.abs(a[k + 1:, k]))) if k < n - 1 else k
    colmax = abs(a[imax, k]) if k < n - 1 else 0.0
    if max(absakk, colmax) == 0 or absakk >= _ALPHA * colmax:
        return k, 1
    rowmax = np.abs(a[imax, k:imax]).max()
    if imax < n - 1:
        rowmax = max(rowmax, np.abs(a[imax + 1:, imax]).max())
    if absakk >= _ALPHA * colmax * (colmax / rowmax):
        return k, 1
    if abs(a[imax, imax]) >= _ALPHA * rowmax:
        return imax, 1
    return imax, 2


def _swap_symmetric(a, kk, kp):
    """interchange rows and columns kk < kp of the trailing lower triangle"""
    a[kp + 1:, [kk, kp]] = a[kp + 1:, [kp, kk]]
    a[kk + 1:kp, kk], a[kp, kk + 1:kp] = a[kp, kk + 1:kp].copy(), a[kk + 1:kp, kk].copy()
    a[kk, kk], a[kp, kp] = a[kp, kp], a[kk, kk]


def _eliminate(a, k, kstep):
    """the Schur complement update after the block at k (lower triangle, as dsytf2)"""
    n = a.shape[0]
    if kstep == 1:
        if k < n - 1 and a[k, k] != 0:
            x = a[k + 1:, k].copy()
            a[k + 1:, k + 1:] -= np.tril(np.outer(x, x)) / a[k, k]
            a[k + 1:, k] = x / a[k, k]
        return
    if k < n - 2:
        d21 = a[k + 1, k]
        d11, d22 = a[k + 1, k + 1] / d21, a[k, k] / d21
        t = 1 / (d11 * d22 - 1) / d21
        wk = t * (d11 * a[k + 2:, k] - a[k + 2:, k + 1])
        wkp1 = t * (d22 * a[k + 2:, k + 1] - a[k + 2:, k])
        a[k + 2:, k + 2:] -= np.tril(np.outer(a[k + 2:, k], wk) + np.outer(a[k + 2:, k + 1], wkp1))
        a[k + 2:, k], a[k + 2:, k + 1] = wk, wkp1


def _ldl_np(a):
    """(LD, pivots, info) of one matrix"""
    a = np.tril(a).astype(a.dtype, copy=True)
    n = a.shape[0]
    piv, info, k = np.zeros(n, np.int32), 0, 0
    while k < n:
        kp, kstep = _choose_pivot(a, k)
        if a[k, k] == 0 and kp == k and (k == n - 1 or not a[k + 1:, k].any()):
            info = info or k + 1
        kk = k + kstep - 1
        if kp != kk:
            _swap_symmetric(a, kk, kp)
            if kstep == 2:
                a[k + 1, k], a[kp, k] = a[kp, k], a[k + 1, k]
        _eliminate(a, k, kstep)
        piv[k:k + kstep] = kp + 1 if kstep == 1 else -(kp + 1)
        k += kstep
    return np.tril(a), piv, info


def _ldl_solve_np(ld, piv, b):
    """X with A X = B for one A = P L D L^T P^T given by _ldl_np (LAPACK's dsytrs, lower)"""
    n, x = ld.shape[0], b.astype(np.result_type(ld, b), copy=True)
    k = 0
    while k < n:  # L D y = P^T b
        if piv[k] > 0:
            kp = piv[k] - 1
            x[[k, kp]] = x[[kp, k]]
            x[k + 1:] -= np.outer(ld[k + 1:, k], x[k])
            x[k] /= ld[k, k]
            k += 1
            continue
        kp = -piv[k] - 1
        x[[k + 1, kp]] = x[[kp, k + 1]]
        x[k + 2:] -= np.outer(ld[k + 2:, k], x[k]) + np.outer(ld[k + 2:, k + 1], x[k + 1])
        off = ld[k + 1, k]
        a1, a2 = ld[k, k] / off, ld[k + 1, k + 1] / off
        b1, b2 = x[k] / off, x[k + 1] / off
        x[k], x[k + 1] = (a2 * b1 - b2) / (a1 * a2 - 1), (a1 * b2 - b1) / (a1 * a2 - 1)
        k += 2
    k = n - 1
    while k >= 0:  # L^T (P^T x) = y
        step = 1 if piv[k] > 0 else 2
        for j in range(k, k - step, -1):
            x[j] -= ld[k + 1:, j] @ x[k + 1:]
        kp = abs(piv[k]) - 1
        x[[k, kp]] = x[[kp, k]]
        k -= step
    return x


def _per_matrix(fn, *arrays):
    """fn applied to each matrix of a stack (LAPACK's routines work on one matrix at a time)"""
    batch = arrays[0].shape[:-2]
    flat = [a.reshape((-1,) + a.shape[len(batch):]) for a in arrays]
    outs = [fn(*parts) for parts in zip(*flat)]
    return outs, batch


class LdlFactor(Op):
    """(LD, pivots, info) of A = P L D L^T P^T; no derivative (torch has none)"""
    _grad_fn_name = "NotImplemented"

    @staticmethod
    def forward(ctx, a):
        outs, batch = _per_matrix(_ldl_np, a)
        ld = np.stack([o[0] for o in outs]).reshape(a.shape) if outs else a.copy()
        piv = np.stack([o[1] for o in outs]).reshape(batch + a.shape[-1:]) if outs else \
            np.zeros(a.shape[:-1], np.int32)
        info = np.array([o[2] for o in outs], np.int32).reshape(batch)
        ctx.mark_non_differentiable(piv, info)
        return ld, piv, info

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("derivative for aten::linalg_ldl_factor_ex is not implemented (as in torch); for a "
                           "gradient use linalg.cholesky or linalg.solve")

    @staticmethod
    def jvp(ctx, ta):
        raise RuntimeError("derivative for aten::linalg_ldl_factor_ex is not implemented (forward mode, as in torch)")


class LdlSolve(Op):
    """X with A X = B from ldl_factor's (LD, pivots); no derivative (torch has none)"""
    _grad_fn_name = "NotImplemented"

    @staticmethod
    def forward(ctx, ld, b, pivots=None):
        outs, _ = _per_matrix(lambda m, p, rhs: _ldl_solve_np(m, p[:, 0], rhs), ld, pivots[..., None], b)
        return np.stack(outs).reshape(b.shape) if outs else b.copy()

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("derivative for aten::linalg_ldl_solve is not implemented (as in torch)")

    @staticmethod
    def jvp(ctx, tld, tb):
        raise RuntimeError("derivative for aten::linalg_ldl_solve is not implemented (forward mode, as in torch)")


def _real_only(A, op):
    from .linalg_triangular import _matrices
    _matrices(A, op)
    if A.is_complex():
        raise NotImplementedError(f"{op}: complex matrices are not supported by microtorch's LDL; use a real one")
    return A


def ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    """(LD, pivots, info) of a symmetric A (its lower triangle is read); info > 0: D is singular there"""
    from .reduce import return_type
    ld, piv, info = LdlFactor.apply(_real_only(A, "linalg.ldl_factor_ex"))
    if check_errors and info._data.any():
        k = int(info._data.max()) - 1
        raise RuntimeError(f"linalg.ldl_factor_ex: The factorization could not be completed: D[{k}] is exactly zero")
    return return_type("linalg_ldl_factor_ex", ("LD", "pivots", "info"))(ld, piv, info)


def ldl_factor(A, *, hermitian=False, out=None):
    from .reduce import return_type
    ld, piv, _ = ldl_factor_ex(A, hermitian=hermitian, check_errors=True)
    return return_type("linalg_ldl_factor", ("LD", "pivots"))(ld, piv)


def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    """X with A X = B for A given by ldl_factor's (LD, pivots)"""
    from .linalg_triangular import _broadcast_pair
    ld, b = _broadcast_pair(_real_only(LD, "linalg.ldl_solve"), B, "linalg.ldl_solve")
    piv = np.broadcast_to(pivots._data, tuple(ld.shape[:-1]))
    return LdlSolve.apply(ld, b, pivots=piv)
