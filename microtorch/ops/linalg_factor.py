"""torch.linalg's solve, cholesky and eigh as ops of their own, with torch's formulas and grad_fn names
(LinalgSolveExBackward0, LinalgCholeskyExBackward0, LinalgEighBackward0).

solve factors A by LU with partial pivoting (ops/linalg_decomp.py's kernel); its backward solves with A^H
through the op itself, so it differentiates again. cholesky's backward and jvp are torch's (Murray 2016),
eigh's the classic ones: the eigenvalues' gradient on the diagonal, the eigenvectors' through
1 / (lambda_j - lambda_i) off it."""
import numpy as np

from .._tensor import Tensor
from ._op import Op
from .linalg import matmul
from .linalg_decomp import _lu_np, _lu_solve_np
from .linalg_triangular import _mH, _solve, _tril


class LinalgSolveEx(Op):
    """X = A^-1 B (left) or B A^-1;  gB = A^-H G (or G A^-H), gA = -gB X^H (or -X^H gB). The node keeps A's LU
    factors too, as torch's (whose backward solves on them; this one solves again, through the op)"""
    _grad_fn_name = "LinalgSolveExBackward0"
    _saved_names = ("A", "result", "LU", "pivots")
    _saved_values = {"left": "left"}

    @staticmethod
    def forward(ctx, a, b, left=True):
        # as torch, inside the op (nothing recorded): a vector B is a column, and the batches broadcast
        ctx.left, ctx.vector = left, left and _matrix_vector(a, b)
        b = b[..., None] if ctx.vector else b
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        lu, piv = _lu_np(a)  # (A's own factors and info, as torch's keep: not those of A broadcast to B's batch)
        info = _first_zero_pivot(lu)
        lu_b, piv_b = (lu, piv) if batch == a.shape[:-2] else _lu_np(np.broadcast_to(a, batch + a.shape[-2:]))
        out = _lu_solve_np(lu_b, np.broadcast_to(b, batch + b.shape[-2:]), piv_b, left, False)
        out = out[..., 0] if ctx.vector else out
        ctx.save_for_backward(a, out, lu, piv)
        ctx.mark_non_differentiable(info)
        return out, info

    @staticmethod
    def backward(ctx, grad, _ginfo):
        a, x, _, _ = ctx.saved_tensors
        gb = LinalgSolveEx.apply(_mH(a), grad, left=ctx.left)[0]
        if not ctx.needs_input_grad[0]:
            return None, gb
        gm, xm = (gb.unsqueeze(-1), x.unsqueeze(-1)) if ctx.vector else (gb, x)
        return (-matmul(gm, _mH(xm)) if ctx.left else -matmul(_mH(xm), gm)), gb

    @staticmethod
    def jvp(ctx, ta, tb):
        a, (x, _) = ctx.inputs[0], ctx.output
        rhs = tb - (matmul(ta, x) if ctx.left else matmul(x, ta))
        return LinalgSolveEx.apply(a, rhs, left=ctx.left)[0], None


class LinalgInvEx(Op):
    """(A^-1, info);  d A^-1 = -A^-1 dA A^-1"""
    _grad_fn_name = "LinalgInvExBackward0"
    _saved_names = ("inverse",)

    @staticmethod
    def forward(ctx, a):
        lu, piv = _lu_np(a)
        info = _first_zero_pivot(lu)
        eye = np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape)
        out = _lu_solve_np(lu, eye, piv, True, False)
        ctx.save_for_backward(out)
        ctx.mark_non_differentiable(info)
        return out, info

    @staticmethod
    def backward(ctx, grad, _ginfo):
        (inv,) = ctx.saved_tensors
        return -matmul(matmul(_mH(inv), grad), _mH(inv))

    @staticmethod
    def jvp(ctx, ta):
        inv = ctx.output[0]
        return -matmul(matmul(inv, ta), inv), None


def _first_zero_pivot(lu):
    """LAPACK's info: the 1-based index of the first zero on U's diagonal, per matrix (0: none)"""
    d = np.diagonal(lu, 0, -2, -1) == 0
    if d.shape[-1] == 0:
        return np.zeros(d.shape[:-1], np.int32)
    return np.where(d.any(-1), d.argmax(-1) + 1, 0).astype(np.int32)


def _phi_half(x):
    """the lower triangle with its diagonal halved"""
    d = x.diagonal(0, -2, -1)
    return _tril(x) - (d * 0.5).diag_embed()


class LinalgCholeskyEx(Op):
    """A = L L^H;  gA = L^-H (1/2)(tril(L^H gL) + tril(L^H gL, -1)^H) L^-1 (torch's, not symmetrized)"""
    _grad_fn_name = "LinalgCholeskyExBackward0"
    _saved_names = ("L",)
    _saved_values = {"upper": "upper"}

    @staticmethod
    def forward(ctx, a, upper=False):
        ctx.upper = upper
        try:
            low, info = np.linalg.cholesky(a), np.zeros(a.shape[:-2], np.int32)
        except np.linalg.LinAlgError:
            low, info = _partial_cholesky(a)
        out = np.ascontiguousarray(np.swapaxes(low, -1, -2).conj()) if upper else low
        ctx.save_for_backward(out)
        ctx.mark_non_differentiable(info)
        return out, info

    @staticmethod
    def backward(ctx, grad, _ginfo):
        (out,) = ctx.saved_tensors
        low, g = (_mH(out), _mH(grad)) if ctx.upper else (out, grad)
        x = _tril(matmul(_mH(low), g))
        x = (x + _mH(_tril(x, -1))) * 0.5
        return _solve(low, _solve(_mH(low), x, True), False, left=False)

    @staticmethod
    def jvp(ctx, ta):
        out = ctx.output[0]
        low = _mH(out) if ctx.upper else out
        d = _solve(_mH(low), _solve(low, ta, False), True, left=False)  # L^-1 dA L^-H
        d = matmul(low, _phi_half(d))
        return (_mH(d) if ctx.upper else d), None


def _partial_cholesky(a):
    """for a batch with a matrix that is not positive-definite: each matrix's factor (NaN where it fails)
    and info, the order of the first minor that is not positive-definite"""
    flat = a.reshape((-1,) + a.shape[-2:])
    outs, infos = [], []
    for m in flat:
        try:
            outs.append(np.linalg.cholesky(m))
            infos.append(0)
        except np.linalg.LinAlgError:
            outs.append(np.full_like(m, np.nan))
            k = next((k for k in range(1, m.shape[-1] + 1) if np.linalg.eigvalsh(m[:k, :k]).min() <= 0),
                     m.shape[-1])
            infos.append(k)
    return np.stack(outs).reshape(a.shape), np.array(infos, np.int32).reshape(a.shape[:-2])


class LinalgEigh(Op):
    """A = V diag(w) V^H;  gA = V (diag(gw) + skew(V^H gV) / (w_j - w_i)) V^H"""
    _grad_fn_name = "LinalgEighBackward0"
    _saved_names = ("eigenvalues", "eigenvectors")

    @staticmethod
    def forward(ctx, a, UPLO="L"):
        w, v = np.linalg.eigh(a, UPLO=UPLO)
        ctx.save_for_backward(w, v)
        return w, v

    @staticmethod
    def backward(ctx, gw, gv):
        w, v = ctx.saved_tensors
        vhgv = matmul(_mH(v), gv)
        inner = (vhgv - _mH(vhgv)) * 0.5 / _gaps(w)
        inner = inner + (gw.to(inner.dtype) - inner.diagonal(0, -2, -1)).diag_embed()
        return matmul(matmul(v, inner), _mH(v))

    @staticmethod
    def jvp(ctx, ta):
        w, v = ctx.output
        p = matmul(matmul(_mH(v), ta), v)
        dw = p.diagonal(0, -2, -1).real if p.is_complex() else p.diagonal(0, -2, -1)
        off = p / _gaps(w)
        off = off - off.diagonal(0, -2, -1).diag_embed()
        return dw, matmul(v, off)


def _gaps(w):
    """E_ij = w_j - w_i, with ones on the diagonal (whose terms are replaced)"""
    e = w.unsqueeze(-2) - w.unsqueeze(-1)
    n = w.shape[-1]
    return e + Tensor._make(np.eye(n, dtype=e._data.dtype))


class LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError: a matrix the operation cannot work with (singular, not positive-definite)"""


def _matrix_vector(a, b):
    """torch's rule: B is a (batch of) vector(s) when it is 1-d, or has one dim fewer than A with A's batch"""
    return b.ndim == 1 or (b.ndim == a.ndim - 1 and tuple(b.shape) == tuple(a.shape[:-1]))


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """(X, info) with A X = B (left) or X A = B; info > 0 where A is singular (X then has inf or nan)"""
    from ._op import promoted
    from .linalg_triangular import _broadcast_pair, _matrices
    from .reduce import return_type
    op = "linalg.solve"
    a = _matrices(A, op)
    vector = left and _matrix_vector(a, B)
    _broadcast_pair(a, B.detach()[..., None] if vector else B, op, left, expand=False)  # (torch's checks)
    x, info = LinalgSolveEx.apply(*promoted(a, B), left=bool(left))  # (a vector B stays one: see forward)
    if check_errors and info._data.any():
        raise LinAlgError(f"{op}: The solver failed because the input matrix is singular.")
    return return_type("linalg_solve_ex", ("result", "info"))(x, info)


def solve(A, B, *, left=True, out=None):
    """X with A X = B (left) or X A = B; a singular A raises LinAlgError"""
    x, info = solve_ex(A, B, left=left)
    if info._data.any():
        raise LinAlgError("torch.linalg.solve: The solver failed because the input matrix is singular.")
    return x


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """(L, info): L L^H = A (or U^H U), info > 0 (the order of the failing minor) where A is not positive-definite"""
    from .linalg_triangular import _matrices
    from .reduce import return_type
    low, info = LinalgCholeskyEx.apply(_matrices(A, "linalg.cholesky"), upper=bool(upper))
    if check_errors and info._data.any():
        raise LinAlgError(_not_pd_message(info))
    return return_type("linalg_cholesky_ex", ("L", "info"))(low, info)


def _not_pd_message(info):
    flat = np.asarray(info._data).reshape(-1)
    k = int(flat[flat > 0][0])
    return (f"linalg.cholesky: The factorization could not be completed because the input is not positive-definite "
            f"(the leading minor of order {k} is not positive-definite).")


def inv_ex(A, *, check_errors=False, out=None):
    """(A^-1, info): info > 0 where A is singular (the inverse then holds inf or nan)"""
    from .linalg_triangular import _matrices
    from .reduce import return_type
    inv, info = LinalgInvEx.apply(_matrices(A, "linalg.inv"))
    if check_errors and info._data.any():
        raise LinAlgError("linalg.inv: The diagonal element is zero, the inversion could not be completed because "
                          "the input matrix is singular.")
    return return_type("linalg_inv_ex", ("inverse", "info"))(inv, info)


def cholesky(A, *, upper=False, out=None):
    """L with L L^H = A (or U with U^H U = A, upper=True); A must be Hermitian positive-definite"""
    low, info = cholesky_ex(A, upper=upper)
    if info._data.any():
        raise LinAlgError(_not_pd_message(info))
    return low


def eigh(A, UPLO="L", *, out=None):
    """(eigenvalues ascending, eigenvectors as columns) of a Hermitian A, read from its lower (or upper) triangle"""
    from .linalg_triangular import _matrices
    from .reduce import return_type
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    w, v = LinalgEigh.apply(_matrices(A, "linalg.eigh"), UPLO=UPLO)
    return return_type("linalg_eigh", ("eigenvalues", "eigenvectors"))(w, v)


def eigvalsh(A, UPLO="L", *, out=None):
    return eigh(A, UPLO).eigenvalues


class LinalgEig(Op):
    """A V = V diag(w), complex;  gA = V^-H (diag(gw) + P / conj(w_j - w_i)) V^H, P = V^H gV projected so that
    the columns keep unit norm (torch's formula); a real A gets the real part"""
    _grad_fn_name = "LinalgEigBackward0"
    _saved_names = ("eigenvalues", "eigenvectors")

    @staticmethod
    def forward(ctx, a):
        ctx.real_input = a.dtype.kind != "c"
        w, v = np.linalg.eig(a)
        ctype = np.result_type(a.dtype, np.complex64)
        w, v = w.astype(ctype), np.ascontiguousarray(v.astype(ctype))
        ctx.save_for_backward(w, v)
        return w, v

    @staticmethod
    def backward(ctx, gw, gv):
        w, v = ctx.saved_tensors
        vh = _mH(v)
        vhgv = matmul(vh, gv)
        vhgv = vhgv - matmul(vh, v * vhgv.diagonal(0, -2, -1).real.to(v.dtype).unsqueeze(-2))
        e = w.conj().unsqueeze(-2) - w.conj().unsqueeze(-1)
        eye = Tensor._make(np.eye(w.shape[-1], dtype=e._data.dtype))
        inner = vhgv / (e + eye) * (1 - eye) + gw.to(v.dtype).diag_embed()
        ga = LinalgSolveEx.apply(vh, matmul(inner, vh))[0]
        return ga.real if ctx.real_input else ga

    @staticmethod
    def jvp(ctx, ta):
        w, v = ctx.output
        t = ta.to(v.dtype)
        p = LinalgSolveEx.apply(v, matmul(t, v))[0]  # V^-1 dA V
        dw = p.diagonal(0, -2, -1)
        e = w.unsqueeze(-2) - w.unsqueeze(-1)
        eye = Tensor._make(np.eye(w.shape[-1], dtype=e._data.dtype))
        dv = matmul(v, p / (e + eye) * (1 - eye))
        dv = dv - v * (v.conj() * dv).sum(-2, keepdim=True).real.to(v.dtype)  # keep the columns at unit norm
        return dw, dv


def eig(A, *, out=None):
    """(eigenvalues, eigenvectors) of a square A, complex (columns of unit norm, as LAPACK's geev)"""
    from .linalg_triangular import _matrices
    from .reduce import return_type
    w, v = LinalgEig.apply(_matrices(A, "linalg.eig"))
    return return_type("linalg_eig", ("eigenvalues", "eigenvectors"))(w, v)


def eigvals(A, *, out=None):
    return eig(A).eigenvalues
