"""microtorch.linalg: the torch.linalg functions microtorch has. Decompositions and solves are ops with
torch's grad_fn names (ops/linalg_decomp.py, linalg_triangular.py, linalg_factor.py, linalg_more.py); the rest (norms,
vecdot, multi_dot, cond, matrix_rank...) are composed of them as torch composes them."""
import numpy as np

from .ops import diagonal as _diagonal, matmul  # noqa: F401
from .ops.decomposition import Svd as _Svd
from .ops.linalg_decomp import (householder_product, linalg_lu as lu, linalg_lu_solve as lu_solve,  # noqa: F401
                                linalg_qr as qr, lu_factor, lu_factor_ex)
from .ops.linalg_ldl import ldl_factor, ldl_factor_ex, ldl_solve  # noqa: F401
from .ops.linalg_triangular import solve_triangular  # noqa: F401
from .ops.linalg_factor import (LinAlgError, cholesky, cholesky_ex, eig, eigh, eigvals, eigvalsh, inv_ex,  # noqa
                                solve, solve_ex)
from .ops import linalg_more as _more
from .ops.reduce import vector_norm  # noqa: F401


def det(A, *, out=None):
    return _more.det(A)


def slogdet(A, *, out=None):
    from .ops.reduce import return_type
    return return_type("linalg_slogdet", ("sign", "logabsdet"))(*_more.slogdet(A))


def inv(A, *, out=None):
    return _more.inverse(A)


def matrix_exp(A):
    return _more.matrix_exp(A)


def matrix_power(A, n, *, out=None):
    return _more.matrix_power(A, n)


def svd(A, full_matrices=True, *, driver=None, out=None):
    """(U, S, Vh) with A = U diag(S) Vh; with full_matrices the columns of U (rows of Vh) beyond min(m, n)
    complete the bases and get no gradient, as in torch"""
    from .ops.reduce import return_type
    if A.ndim < 2:
        raise RuntimeError(f"linalg.svd: The input tensor A must have at least 2 dimensions. (got {A.ndim})")
    return return_type("linalg_svd", ("U", "S", "Vh"))(*_Svd.apply(A, full_matrices=bool(full_matrices)))


def svdvals(A, *, driver=None, out=None):
    if A.ndim < 2:
        raise RuntimeError(f"linalg.svd: The input tensor A must have at least 2 dimensions. (got {A.ndim})")
    return _Svd.apply(A)[1]


def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """the pseudo-inverse; singular values below max(atol, rtol * the largest) count as zero"""
    if atol is not None and atol != 0:
        raise NotImplementedError("linalg.pinv(atol=...) is not implemented in microtorch; pass rtol instead")
    eps = np.finfo(A._data.dtype).eps
    r = rtol if rtol is not None else (0.0 if atol is not None else max(A.shape[-2:]) * eps)
    return _more.Pinverse.apply(A, rcond=float(r))


def vecdot(x, y, *, dim=-1, out=None):
    """sum over dim of conj(x) y (broadcasting)"""
    return (x.conj() * y).sum(dim)


def cross(input, other, *, dim=-1, out=None):
    return _more.cross(input, other, dim)


def multi_dot(tensors, *, out=None):
    """the product of the matrices left to right (a first 1-d operand is a row, a last one a column)"""
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    first, last = tensors[0], tensors[-1]
    mats = [first.unsqueeze(0) if first.ndim == 1 else first] + list(tensors[1:-1]) + \
        [last.unsqueeze(1) if last.ndim == 1 else last]
    out = _chain_product(mats)
    shape = [n for n, keep in zip(out.shape, (first.ndim == 2, last.ndim == 2)) if keep]
    return out.view(shape)  # (torch's last node: a ViewBackward0 to the result's shape)


def _chain_product(mats):
    """The product of the matrices in torch's order, the one with the fewest multiplications: for three, (AB)C
    unless A(BC) is cheaper; for more, the classic dynamic programme over where to split each run."""
    if len(mats) == 3:
        a, b, c, d = mats[0].shape[0], mats[1].shape[0], mats[2].shape[0], mats[2].shape[1]
        return mats[0].mm(mats[1].mm(mats[2])) if a * c * (b + d) > b * d * (a + c) else mats[0].mm(mats[1]).mm(mats[2])
    dims = [mats[0].shape[0]] + [m.shape[1] for m in mats]
    n = len(mats)
    cost, split = {(i, i): 0 for i in range(n)}, {}
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i, j] = None
            for k in range(i, j):  # (the first cheapest split wins, as in torch)
                q = cost[i, k] + cost[k + 1, j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i, j] is None or q < cost[i, j]:
                    cost[i, j], split[i, j] = q, k
    products, todo = {(i, i): mats[i] for i in range(n)}, [(0, n - 1)]
    while todo:  # (each run once both its halves are multiplied)
        i, j = todo[-1]
        halves = (i, split[i, j]), (split[i, j] + 1, j)
        missing = [h for h in halves if h not in products]
        if missing:
            todo.extend(missing)
            continue
        products[todo.pop()] = products[halves[0]].mm(products[halves[1]])
    return products[0, n - 1]


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """'fro', 'nuc', 1, -1, 2, -2, inf, -inf over the matrices in dims"""
    if A._data.dtype.kind not in "fc":
        from .ops._kernels import _NAMES
        raise RuntimeError("linalg.matrix_norm: Expected a floating point or complex tensor as input. Got "
                           f"{_NAMES.get(A._data.dtype.name, A._data.dtype.name)} (convert it first, e.g. A.double())")
    a = A if dtype is None else A.to(_checked_dtype(A, dtype))
    d = tuple(x % a.ndim for x in dim)
    if ord == "fro":
        return vector_norm(a, 2, d, keepdim)
    if ord in ("nuc", 2, -2):
        rest = [x for x in range(a.ndim) if x not in d]
        s = svdvals(a.permute(*rest, *d))
        out = s.sum(-1) if ord == "nuc" else s.amax(-1) if ord == 2 else s.amin(-1)
        for x in sorted(d) if keepdim else ():
            out = out.unsqueeze(x)
        return out
    if ord in (1, -1, float("inf"), float("-inf")):
        over, across = (d[0], d[1]) if ord in (1, -1) else (d[1], d[0])
        sums = a.abs().sum(over, keepdim=True)
        out = sums.amax(across, keepdim=True) if ord > 0 else sums.amin(across, keepdim=True)
        return out if keepdim else out.squeeze(d).reshape([n for i, n in enumerate(a.shape) if i not in d])
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


def _checked_dtype(A, dtype):
    """matrix_norm's dtype=, with torch's checks: floating or complex as A is, and no narrower than A's."""
    from ._dtype import to_dtype
    from .ops._kernels import _NAMES
    have, want = A._data.dtype, to_dtype(dtype).np
    name, given = _NAMES.get(have.name, have.name), _NAMES.get(want.name, want.name)
    if want.kind not in "fc":
        problem = f"dtype should be floating point or complex, but got {given}"
    elif (want.kind == "c") != (have.kind == "c"):
        kind = "complex" if have.kind == "c" else "real"
        problem = f"dtype should be {kind} for {kind} inputs, but got {given}"
    elif not np.can_cast(have, want, "safe"):
        problem = (f"the dtype of the input ({name}) should be convertible without narrowing to the specified "
                   f"dtype ({given})")
    else:
        return dtype
    raise RuntimeError(f"linalg.matrix_norm: {problem}")


def norm(input, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    """a vector norm (1-d, or dim an int) or a matrix norm (2-d, or dim a pair); ord None: 2 / 'fro'"""
    A = input
    if isinstance(dim, int) or (dim is None and ord is not None and A.ndim == 1):
        return vector_norm(A, 2.0 if ord is None else ord, dim, keepdim, dtype=dtype)
    if dim is None and ord is None:  # (2.0: torch's node shows the order it defaults to as a float)
        return vector_norm(A, 2.0, None, keepdim, dtype=dtype)
    if dim is None and A.ndim != 2:
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
                           f"{A.ndim}D.")
    d = (-2, -1) if dim is None else tuple(dim)
    if len(d) == 1:
        return vector_norm(A, 2.0 if ord is None else ord, d, keepdim, dtype=dtype)
    return matrix_norm(A, "fro" if ord is None else ord, d, keepdim, dtype=dtype)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    return _diagonal(A, offset, dim1, dim2)


def vander(x, *, N=None):
    """columns x^0, x^1, ..., x^(N-1) (increasing powers, over the last dim)"""
    from ._torch_misc import vander as _vander
    return _vander(x.reshape(-1), N, True).reshape(*x.shape, -1 if N is None else N) if x.ndim != 1 else \
        _vander(x, N, True)


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """how many singular values exceed max(atol, rtol * the largest) (rtol defaults to eps * max(m, n))"""
    from ._tensor import Tensor
    s = np.linalg.svd(A._data, compute_uv=False)
    eps = np.finfo(A._data.dtype).eps
    r = rtol if rtol is not None else (0.0 if atol is not None and atol > 0 else max(A.shape[-2:]) * eps)
    tol = np.maximum(atol or 0.0, r * (s.max(-1, keepdims=True) if s.size else 0))
    return Tensor._make((s > tol).sum(-1).astype(np.int64))


def cond(A, p=None):
    """the condition number: ||A|| ||A^-1|| in the norm p (None: 2, the ratio of extreme singular values)"""
    if p is None or p in (2, -2):
        s = svdvals(A)
        return s[..., 0] / s[..., -1] if p != -2 else s[..., -1] / s[..., 0]
    return matrix_norm(A, p) * matrix_norm(inv(A), p)


__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals",
           "eigvalsh", "householder_product", "inv", "inv_ex", "ldl_factor", "ldl_factor_ex", "ldl_solve", "lstsq",
           "lu", "lu_factor", "lu_factor_ex", "lu_solve", "matmul", "matrix_exp", "matrix_norm", "matrix_power",
           "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "solve_ex", "solve_triangular",
           "svd", "svdvals", "tensorinv", "tensorsolve", "vander", "vecdot", "vector_norm"]


def lstsq(A, B, rcond=None, *, driver=None):
    """(solution, residuals, rank, singular_values) of min ||A X - B||: the solution through the pseudo-inverse;
    residuals and singular values as torch's drivers fill them (gelsy, the default, leaves both empty)"""
    from ._tensor import Tensor
    from .ops.reduce import return_type
    if driver not in (None, "gelsy", "gelsd", "gelss", "gels"):
        raise RuntimeError(f"torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss), "
                           f"got {driver}")
    eps = np.finfo(A._data.dtype).eps
    rc = rcond if rcond is not None else eps * max(A.shape[-2:])
    vector = B.ndim == A.ndim - 1
    b = B.unsqueeze(-1) if vector else B
    x = matmul(_more.Pinverse.apply(A, rcond=float(rc)), b)
    s = np.linalg.svd(A._data, compute_uv=False)
    rank = (s > rc * s.max(-1, keepdims=True)).sum(-1).astype(np.int64)
    empty = Tensor._make(np.zeros(0, A._data.dtype))
    m, n = A.shape[-2:]
    residuals = ((matmul(A, x) - b).abs() ** 2).sum(-2) if driver not in (None, "gelsy") and m > n and \
        (rank == n).all() else empty
    sv = Tensor._make(s) if driver in ("gelsd", "gelss") else empty
    return return_type("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))(
        x.squeeze(-1) if vector else x, residuals, Tensor._make(rank), sv)


def tensorinv(A, ind=2, *, out=None):
    """the tensor X with tensordot(X, A, ind) the identity: A reshaped to a square matrix, inverted, reshaped"""
    outer, inner = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    if int(np.prod(outer)) != int(np.prod(inner)):
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {int(np.prod(inner))} != {int(np.prod(outer))}")
    return inv(A.reshape(int(np.prod(outer)), -1)).reshape(*inner, *outer)


def tensorsolve(A, B, dims=None, *, out=None):
    """X with tensordot(A, X, X.ndim) = B (A's dims in `dims` moved to the end first)"""
    if dims is not None:
        moved = [d % A.ndim for d in dims]
        A = A.permute(*[d for d in range(A.ndim) if d not in moved], *moved)
    rest = tuple(A.shape[B.ndim:])
    n = int(np.prod(tuple(B.shape)))
    return solve(A.reshape(n, -1), B.reshape(n)).reshape(rest)


from ._api_errors import clean_namespace as _clean_namespace  # noqa: E402
from .ops._checks import guard_namespace as _guard_namespace  # noqa: E402
_guard_namespace(globals(), [n for n in __all__ if n != "LinAlgError"])  # torch's TypeError for a wrong type
_clean_namespace(globals(), __all__)  # and no internal error reaching a user


def _take_out():
    """torch.linalg's `out=` (ops/_out.py): the functions that take it write their results there."""
    from .ops._out import op_out
    g = globals()
    for name in ("cholesky cholesky_ex cond cross det eig eigh eigvals eigvalsh householder_product inv inv_ex "
                 "ldl_factor ldl_factor_ex ldl_solve lstsq lu lu_factor lu_factor_ex lu_solve matmul matrix_norm "
                 "matrix_power matrix_rank multi_dot norm pinv qr slogdet solve solve_ex solve_triangular svd svdvals "
                 "tensorinv tensorsolve vecdot vector_norm").split():
        if name in g:
            g[name] = op_out(g[name], "linalg." + name)


_take_out()  # (last: outside the guards above, which check arguments against each function's own parameters)
