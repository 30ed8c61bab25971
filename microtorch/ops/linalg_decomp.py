"""The QR and LU decompositions (linalg.qr, lu_factor, lu, lu_unpack, lu_solve and torch's older forms) and
LAPACK's Householder form of QR (geqrf, householder_product, ormqr).

Forward works on numpy arrays: Householder QR from numpy, and LU with partial pivoting written out column by
column (as LAPACK's getrf: the largest entry of the column is the pivot, the first of equals). Backward and jvp
are Tensor ops over the triangular solves of ops/linalg_triangular.py, so they differentiate again."""
import numpy as np

from .._tensor import Tensor
from ._op import Op
from .linalg import matmul
from .linalg_triangular import (_broadcast_pair, _deprecated, _eye, _matrices, _mH, _real_diag, _solve,
                                _tri_solve_np, _tril, _triu)
from .shape import cat


# ---- numpy kernels ------------------------------------------------------------------------------
def _lu_np(a):
    """(LU packed in one matrix, 1-based int32 pivots) of P A = L U, by Gaussian elimination with partial
    pivoting; a zero pivot column is left as it is (LAPACK reports it in info)."""
    m, n = a.shape[-2:]
    k = min(m, n)
    if a.size == 0:
        return a.copy(), np.ones(a.shape[:-2] + (k,), np.int32)
    lu = a.reshape((-1, m, n)).astype(a.dtype, copy=True)
    piv = np.zeros((lu.shape[0], k), np.int32)
    rows = np.arange(lu.shape[0])
    for j in range(k):
        p = j + np.argmax(np.abs(lu[:, j:, j]), axis=1)
        piv[:, j] = p + 1
        lu[rows, j], lu[rows, p] = lu[rows, p], lu[rows, j].copy()
        d = lu[:, j, j]
        safe = np.where(d == 0, 1, d)
        lu[:, j + 1:, j] /= safe[:, None]
        lu[:, j + 1:, j + 1:] -= lu[:, j + 1:, j, None] * lu[:, j, None, j + 1:]
    return lu.reshape(a.shape), piv.reshape(a.shape[:-2] + (k,))


def _perm_np(piv, m):
    """The row order perm of P^T A = A[perm], from LAPACK's pivots (row j was swapped with piv[j] - 1)."""
    k = piv.shape[-1]
    flat = np.broadcast_to(np.arange(m), (int(np.prod(piv.shape[:-1], dtype=int)), m)).copy()
    if k == 0 or flat.size == 0:
        return flat.reshape(piv.shape[:-1] + (m,))
    pv = piv.reshape(-1, k).astype(np.int64) - 1
    rows = np.arange(flat.shape[0])
    for j in range(k):
        flat[rows, j], flat[rows, pv[:, j]] = flat[rows, pv[:, j]], flat[rows, j].copy()
    return flat.reshape(piv.shape[:-1] + (m,))


def _p_np(piv, m, dtype):
    """The permutation matrix P of A = P L U: P[perm[i], i] = 1."""
    perm = _perm_np(piv, m)
    p = np.zeros(perm.shape[:-1] + (m, m), dtype=dtype)
    np.put_along_axis(p, perm[..., None, :], 1, axis=-2)
    return p


# ---- QR ---------------------------------------------------------------------------------------------------
def _qr_grad_tall(gq, gr, q, r):
    """gA of A = QR for m >= n: M = R gR^H - gQ^H Q;  gA = (gQ + Q copyltu(M)) R^-H"""
    m = matmul(r, _mH(gr)) - matmul(_mH(gq), q)
    low = _tril(m, -1)
    sym = low + _mH(low) + _real_diag(m)
    return _solve(_mH(r), gq + matmul(q, sym), False, left=False)


def _qr_tangent_tall(ta, q, r):
    """(dQ, dR) for m >= n: C = Q^H dA R^-1, Omega = its skew part from the strict lower triangle;
    dR = (C - Omega) R, dQ = dA R^-1 - Q (C - Omega)"""
    b = _solve(r, ta, True, left=False)
    c = matmul(_mH(q), b)
    low = _tril(c, -1)
    omega = low - _mH(low)
    if c.is_complex():
        d = c.diagonal(0, -2, -1)
        omega = omega + (d - d.real.to(c.dtype)).diag_embed()
    upper = c - omega
    return b - matmul(q, upper), matmul(upper, r)


class Qr(Op):
    """A = Q R;  gA = (gQ + Q copyltu(R gR^H - gQ^H Q)) R^-H (m >= n; a wide A splits as [X Y], X = Q R1)"""
    _grad_fn_name = "LinalgQrBackward0"
    _saved_names = ("Q", "R")
    _saved_values = {"mode": "mode"}

    @staticmethod
    def forward(ctx, a, mode="reduced"):
        ctx.mode = mode
        if mode == "r":
            r = np.linalg.qr(a, mode="r")
            return np.zeros((0,), a.dtype), np.ascontiguousarray(r)
        q, r = np.linalg.qr(a, mode=mode)
        ctx.save_for_backward(q, r)
        return np.ascontiguousarray(q), np.ascontiguousarray(r)

    @staticmethod
    def backward(ctx, gq, gr):
        if ctx.mode == "r":
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                               "Please use linalg.qr(A, mode='reduced') if you are going to differentiate through "
                               "linalg.qr.")
        q, r = ctx.saved_tensors
        m, n = q.shape[-2], r.shape[-1]
        if ctx.mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
        if m >= n:
            return _qr_grad_tall(gq, gr, q, r)
        y = _saved_input_cols(ctx, m)
        gr1, gr2 = gr[..., :m], gr[..., m:]
        gx = _qr_grad_tall(gq + matmul(y, _mH(gr2)), gr1, q, r[..., :m])
        return cat([gx, matmul(q, gr2)], -1)

    @staticmethod
    def jvp(ctx, ta):
        q, r = ctx.output
        m, n = ctx.inputs[0].shape[-2:]
        if ctx.mode == "r" or (ctx.mode == "complete" and m > n):
            raise RuntimeError(f"linalg.qr: forward-mode AD is not defined for mode='{ctx.mode}' with this shape; "
                               "use mode='reduced'")
        if m >= n:
            return _qr_tangent_tall(ta, q, r)
        y = ctx.inputs[0][..., m:]
        dq, dr1 = _qr_tangent_tall(ta[..., :m], q, r[..., :m])
        dr2 = matmul(_mH(dq), y) + matmul(_mH(q), ta[..., m:])
        return dq, cat([dr1, dr2], -1)


def _saved_input_cols(ctx, m):
    """A's columns past the m-th, Y = Q R2 (a wide A), from the saved factors"""
    q, r = ctx.saved_tensors
    return matmul(q, r[..., m:])


def linalg_qr(A, mode="reduced", *, out=None):
    """torch.linalg.qr: (Q, R) with A = Q R; mode 'reduced', 'complete' or 'r' (R only, Q empty)."""
    from .reduce import return_type
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', "
                           "or 'complete'")
    q, r = Qr.apply(_matrices(A, "linalg.qr", square=False), mode=mode)
    return return_type("linalg_qr", ("Q", "R"))(q, r)


def qr(input, some=True):
    """torch.qr (deprecated there): linalg.qr with mode 'reduced' (some=True) or 'complete'."""
    from .reduce import return_type
    _deprecated("qr", "torch.linalg.qr(A, 'reduced' if some else 'complete')")
    return return_type("qr", ("Q", "R"))(*linalg_qr(input, "reduced" if some else "complete"))


# ---- LU -----------------------------------------------------------------------------------------------------
def _parts(lu):
    """(strictly lower m x k, upper k x n) parts of a packed LU (or of its gradient or tangent)"""
    k = min(lu.shape[-2:])
    return _tril(lu[..., :, :k], -1), _triu(lu[..., :k, :])


def _unpack(lu):
    """(L, U) of a packed LU: L unit lower m x k, U upper k x n"""
    low, up = _parts(lu)
    return low + _eye(lu, *low.shape[-2:]), up


def _pack(low, up):
    """the packed LU m x n of L's strict lower part (m x k) and U's upper part (k x n)"""
    m, k, n = low.shape[-2], low.shape[-1], up.shape[-1]
    low, up = _tril(low, -1), _triu(up)
    if m > k:
        return low + cat([up, up[..., :m - k, :] * 0], -2)
    if n > k:
        return cat([low, low[..., :, :n - k] * 0], -1) + up
    return low + up


def _lu_grad(p, low, up, gl, gu):
    """gA of A = P L U (torch's three cases: square, wide m < n, tall m > n)"""
    m, n = low.shape[-2], up.shape[-1]
    gl, gu = _tril(gl, -1), _triu(gu)  # (L's unit diagonal and the zeros are constants)
    if m == n:
        g = _tril(matmul(_mH(low), gl), -1) + _triu(matmul(gu, _mH(up)))
        g = _solve(_mH(low), _solve(_mH(up), g, False, left=False), True, unit=True)
    elif m < n:
        u1, u2 = up[..., :m], up[..., m:]
        g = _tril(matmul(_mH(low), gl) - matmul(_triu(gu), _mH(up)), -1)
        g = _solve(_mH(u1), g, False, left=False)
        g = _solve(_mH(low), cat([g + _triu(gu[..., :m]), gu[..., m:] + u2 * 0], -1), True, unit=True)
    else:
        l1 = low[..., :n, :]
        g = _triu(matmul(gu, _mH(up)) - matmul(_mH(low), gl))
        g = _solve(_mH(l1), g, True, unit=True)
        g = _solve(_mH(up), cat([g + _tril(gl[..., :n, :], -1), gl[..., n:, :]], -2), False, left=False)
    return matmul(p, g)


def _lu_tangent(ta, p, low, up):
    """(dL, dU) of A = P L U: M = L1^-1 P^T dA U1^-1, dL1 = L1 tril(M, -1), dU1 = triu(M) U1, and the rest of
    the wide U or the tall L from the remaining columns or rows"""
    m, n = low.shape[-2], up.shape[-1]
    k = min(m, n)
    pa = matmul(p.mT, ta)
    l1, u1 = low[..., :k, :], up[..., :, :k]
    mm = _solve(l1, _solve(u1, pa[..., :k, :k], True, left=False), False, unit=True)
    dl1, du1 = matmul(l1, _tril(mm, -1)), matmul(_triu(mm), u1)
    if m == n:
        return dl1, du1
    if m < n:
        du2 = _solve(low, pa[..., k:], False, unit=True) - matmul(_tril(mm, -1), up[..., k:])
        return dl1, cat([du1, du2], -1)
    dl2 = _solve(up, pa[..., k:, :], True, left=False) - matmul(low[..., k:, :], _triu(mm))
    return cat([dl1, dl2], -2), du1


def _no_pivoting(pivot):
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")


class LuFactor(Op):
    """(LU, pivots) with P A = L U packed in one matrix;  gA = P L^-H (L^H gL o 1_L + gU U^H o 1_U) U^-H"""
    _grad_fn_name = "LinalgLuFactorExBackward0"
    _saved_names = ("LU", "pivots")
    _saved_values = {"pivot": "pivot"}  # (always True: microtorch, as torch on the CPU, always pivots)

    @staticmethod
    def forward(ctx, a):
        lu, piv = _lu_np(a)
        ctx.p, ctx.pivot = _p_np(piv, a.shape[-2], a.dtype), True
        ctx.mark_non_differentiable(piv)
        ctx.save_for_backward(lu, piv)
        return lu, piv

    @staticmethod
    def backward(ctx, glu, _gpiv):
        lu, _ = ctx.saved_tensors
        low, up = _unpack(lu)
        gl, gu = _parts(glu)
        return _lu_grad(Tensor._make(ctx.p), low, up, gl, gu)

    @staticmethod
    def jvp(ctx, ta):
        lu, piv = ctx.output
        low, up = _unpack(lu)
        return _pack(*_lu_tangent(ta, Tensor._make(ctx.p), low, up)), None


class Lu(Op):
    """(P, L, U) with A = P L U;  gA as for LuFactor, from gL and gU"""
    _grad_fn_name = "LinalgLuBackward0"
    _saved_names = ("L", "P", "U")
    _saved_values = {"pivot": "pivot"}

    @staticmethod
    def forward(ctx, a):
        lu, piv = _lu_np(a)
        ctx.pivot = True
        m, n = a.shape[-2:]
        k = min(m, n)
        low = np.tril(lu[..., :, :k], -1) + np.eye(m, k, dtype=a.dtype)
        up = np.triu(lu[..., :k, :])
        p = _p_np(piv, m, a.dtype)
        ctx.mark_non_differentiable(p)
        ctx.save_for_backward(low, p, up)
        return p, low, up

    @staticmethod
    def backward(ctx, _gp, gl, gu):
        low, p, up = ctx.saved_tensors
        return _lu_grad(p, low, up, gl, gu)

    @staticmethod
    def jvp(ctx, ta):
        p, low, up = ctx.output
        return (None,) + _lu_tangent(ta, p, low, up)


class LuUnpack(Op):
    """(P, L, U) out of a packed LU;  gLU = tril(gL, -1) + triu(gU), packed"""
    _grad_fn_name = "LuUnpackBackward0"

    @staticmethod
    def forward(ctx, lu, pivots=None, unpack_data=True, unpack_pivots=True):
        m, n = lu.shape[-2:]
        k = min(m, n)
        e = np.zeros((0,), lu.dtype)
        p = _p_np(pivots, m, lu.dtype) if unpack_pivots else e
        low = np.tril(lu[..., :, :k], -1) + np.eye(m, k, dtype=lu.dtype) if unpack_data else e
        up = np.triu(lu[..., :k, :]) if unpack_data else e
        ctx.mark_non_differentiable(p)
        return p, low, up

    @staticmethod
    def backward(ctx, _gp, gl, gu):
        return _pack(gl, gu)

    @staticmethod
    def jvp(ctx, tlu):
        return (None,) + _parts(tlu)


class LuSolve(Op):
    """X = op(A)^-1 B (left) or B op(A)^-1, A = P L U, op(A) = A or A^H;  gB = op(A)^-H G, gA as for a solve,
    and gLU = tril(P^T gA U^H, -1) + triu(L^H P^T gA)"""
    _grad_fn_name = "LinalgLuSolveBackward0"
    _saved_names = ("LU", "pivots", "result")
    _saved_values = {"left": "left", "adjoint": "adjoint"}

    @staticmethod
    def forward(ctx, lu, b, pivots=None, left=True, adjoint=False):
        ctx.pivots, ctx.left, ctx.adjoint = pivots, left, adjoint
        ctx.p = _p_np(pivots, lu.shape[-1], lu.dtype)
        out = _lu_solve_np(lu, b, pivots, left, adjoint)
        ctx.save_for_backward(lu, pivots, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        lu, _, x = ctx.saved_tensors
        gb = LuSolve.apply(lu, grad, pivots=ctx.pivots, left=ctx.left, adjoint=not ctx.adjoint)
        if not ctx.needs_input_grad[0]:
            return None, gb
        g_op = -matmul(gb, _mH(x)) if ctx.left else -matmul(_mH(x), gb)
        ga = _mH(g_op) if ctx.adjoint else g_op
        low, up = _unpack(lu)
        pga = matmul(Tensor._make(ctx.p).mT, ga)
        return _tril(matmul(pga, _mH(up)), -1) + _triu(matmul(_mH(low), pga)), gb

    @staticmethod
    def jvp(ctx, tlu, tb):
        lu, x = ctx.inputs[0], ctx.output
        low, up = _unpack(lu)
        dl, du = _parts(tlu)
        da = matmul(Tensor._make(ctx.p), matmul(dl, up) + matmul(low, du))
        d_op = _mH(da) if ctx.adjoint else da
        rhs = tb - (matmul(d_op, x) if ctx.left else matmul(x, d_op))
        return LuSolve.apply(lu, rhs, pivots=ctx.pivots, left=ctx.left, adjoint=ctx.adjoint)


def _lu_solve_np(lu, b, pivots, left, adjoint):
    """op(A)^-1 B by two triangular solves and the row permutation"""
    if not left:  # X op(A) = B  <=>  op(A)^H X^H = B^H
        xh = _lu_solve_np(lu, np.swapaxes(b, -1, -2).conj(), pivots, True, not adjoint)
        return np.ascontiguousarray(np.swapaxes(xh, -1, -2).conj())
    perm = _perm_np(pivots, lu.shape[-1])
    if not adjoint:  # L U X = P^T B
        pb = np.take_along_axis(np.broadcast_to(b, perm.shape[:-1] + b.shape[-2:]), perm[..., None], axis=-2)
        return _tri_solve_np(lu, _tri_solve_np(lu, pb, False, unit=True), True)
    lh = np.swapaxes(lu, -1, -2).conj()  # U^H L^H (P^T X) = B
    y = _tri_solve_np(lh, _tri_solve_np(lh, b, False), True, unit=True)
    out = np.empty_like(y)
    np.put_along_axis(out, np.broadcast_to(perm[..., None], y.shape[:-1] + (1,)), y, axis=-2)
    return out


def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """torch.linalg.lu_factor_ex: (LU, pivots, info); info is the 1-based index of the first zero pivot, or 0."""
    from .reduce import return_type
    _no_pivoting(pivot)
    lu, piv = LuFactor.apply(_matrices(A, "linalg.lu_factor", square=False))
    k = min(lu.shape[-2:])
    diag = np.diagonal(lu._data, 0, -2, -1)[..., :k] == 0
    info = np.where(diag.any(-1), diag.argmax(-1) + 1, 0).astype(np.int32) if k else \
        np.zeros(diag.shape[:-1], np.int32)
    return return_type("linalg_lu_factor_ex", ("LU", "pivots", "info"))(lu, piv, Tensor._make(info))


def lu_factor(A, *, pivot=True, out=None):
    """torch.linalg.lu_factor: (LU, pivots) of P A = L U; refuses a zero pivot, which lu_solve would divide by."""
    from .reduce import return_type
    lu, piv, info = lu_factor_ex(A, pivot=pivot)
    bad = info._data.reshape(-1)
    if bad.any():
        i = int(bad[bad > 0][0]) - 1
        raise RuntimeError(f"torch.linalg.lu_factor: U[{i},{i}] is zero and using it on lu_solve would result in a "
                           "division by zero. If you still want to perform the factorization, consider calling "
                           "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")
    return return_type("linalg_lu_factor", ("LU", "pivots"))(lu, piv)


def lu(A, pivot=True, get_infos=False):
    """torch.lu (deprecated there) and Tensor.lu: (LU, pivots), with infos when get_infos=True."""
    get_infos = bool(get_infos)  # (torch's order: this flag first, then pivot's type, then A)
    _deprecated("lu", "torch.linalg.lu_factor / torch.linalg.lu_factor_ex")
    if not isinstance(pivot, bool):
        raise TypeError(f"lu(): argument 'pivot' must be bool, not {type(pivot).__name__}")
    if isinstance(A, Tensor) and not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise NotImplementedError(f'"lu_cpu" not implemented for \'{A.dtype}\' (lu); convert A with .double()')
    if get_infos:
        return tuple(lu_factor_ex(A, pivot=pivot))
    return tuple(lu_factor(A, pivot=pivot))


def linalg_lu(A, *, pivot=True, out=None):
    """torch.linalg.lu: (P, L, U) with A = P L U."""
    from .reduce import return_type
    _no_pivoting(pivot)
    p, low, up = Lu.apply(_matrices(A, "linalg.lu", square=False))
    return return_type("linalg_lu", ("P", "L", "U"))(p, low, up)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """torch.lu_unpack: (P, L, U) out of lu_factor's packed result (empty where not asked for)."""
    from .reduce import return_type
    lu_ = _matrices(LU_data, "lu_unpack", "LU_data", square=False)
    piv = _pivots(LU_pivots, lu_, "lu_unpack", square=False)
    p, low, up = LuUnpack.apply(lu_, pivots=piv, unpack_data=bool(unpack_data), unpack_pivots=bool(unpack_pivots))
    return return_type("lu_unpack", ("P", "L", "U"))(p, low, up)


def _pivots(pivots, lu_, op, square=True):
    if not isinstance(pivots, Tensor) or pivots._data.dtype != np.int32:
        raise RuntimeError(f"{op}: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype (got "
                           f"{getattr(pivots, 'dtype', type(pivots).__name__)}); pass the pivots lu_factor returned")
    k = min(lu_.shape[-2:])
    if tuple(pivots.shape) != tuple(lu_.shape[:-2]) + (k,):
        raise RuntimeError(f"{op}: the pivots of shape {list(pivots.shape)} do not match LU of shape "
                           f"{list(lu_.shape)} (expected {list(lu_.shape[:-2]) + [k]})")
    return pivots._data


def linalg_lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """torch.linalg.lu_solve: X with op(A) X = B (left) or X op(A) = B, A = P L U given by lu_factor."""
    op = "linalg.lu_solve"
    if LU.ndim >= 2 and LU.shape[-1] != LU.shape[-2]:
        raise RuntimeError(f"torch.linalg.lu_solve: A must be batches of square matrices, but they are "
                           f"{LU.shape[-2]} by {LU.shape[-1]} matrices")
    piv = _pivots(pivots, _matrices(LU, op, "LU"), op)
    a, b = _broadcast_pair(LU, B, op, left)
    piv = np.broadcast_to(piv, tuple(a.shape[:-1]))
    return LuSolve.apply(a, b, pivots=piv, left=bool(left), adjoint=bool(adjoint))


def lu_solve(input, LU_data, LU_pivots):
    """torch.lu_solve (deprecated there): linalg.lu_solve(LU_data, LU_pivots, input)."""
    _deprecated("lu_solve", "torch.linalg.lu_solve (its arguments reversed: LU, pivots, B)")
    return linalg_lu_solve(LU_data, LU_pivots, input)


# ---- LAPACK's Householder form of QR ------------------------------------------------------------------------
class Geqrf(Op):
    """(a, tau): R on and above a's diagonal, the Householder vectors below it (LAPACK's geqrf); no derivative,
    as in torch"""
    _grad_fn_name = "GeqrfBackward0"

    @staticmethod
    def forward(ctx, a):
        h, tau = np.linalg.qr(a, mode="raw")  # (numpy gives LAPACK's column-major array, transposed)
        return np.ascontiguousarray(np.swapaxes(h, -1, -2)), tau

    @staticmethod
    def backward(ctx, ga, gtau):
        raise NotImplementedError("the derivative for 'geqrf' is not implemented (as in torch); differentiate "
                                  "linalg.qr's Q and R instead")

    @staticmethod
    def jvp(ctx, ta):
        raise NotImplementedError("the derivative for 'geqrf' is not implemented (as in torch); use linalg.qr")


def geqrf(input):
    from .reduce import return_type
    if isinstance(input, Tensor) and not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise NotImplementedError(f'"geqrf_cpu" not implemented for \'{input.dtype}\'; convert with .double()')
    a, tau = Geqrf.apply(_matrices(input, "geqrf", "input", square=False))
    return return_type("geqrf", ("a", "tau"))(a, tau)


def _reflectors(A, tau, op):
    """Q = H_1 H_2 ... H_k (m x m), H_i = I - tau_i v_i v_i^H, v_i: column i of A below the diagonal, 1 on it"""
    m, n = A.shape[-2:]
    k = tau.shape[-1]
    if not m >= n >= k:
        raise RuntimeError(f"{op}: expected input.size(-2) >= input.size(-1) >= tau.size(-1), but got "
                           f"{m}, {n} and {k}")
    q = _eye(A, m)
    for i in range(k):
        below = Tensor._make((np.arange(m) > i).astype(A._data.dtype))
        v = A[..., :, i] * below + Tensor._make((np.arange(m) == i).astype(A._data.dtype))
        t = tau[..., i].unsqueeze(-1).unsqueeze(-1)
        q = q - matmul(matmul(q, v.unsqueeze(-1)), v.conj().unsqueeze(-2)) * t
    return q


def householder_product(A, tau, *, out=None):
    """torch.linalg.householder_product (and orgqr): the first n columns of H_1 ... H_k"""
    _matrices(A, "linalg.householder_product", square=False)
    return _reflectors(A, tau, "linalg.householder_product")[..., :, :A.shape[-1]]


def ormqr(input, tau, other, left=True, transpose=False, *, out=None):
    """op(Q) other (left) or other op(Q), Q = H_1 ... H_k from geqrf's form, op(Q) = Q or Q^H (transpose)"""
    q = _reflectors(_matrices(input, "ormqr", square=False), tau, "ormqr")
    q = _mH(q) if transpose else q
    return matmul(q, other) if left else matmul(other, q)
