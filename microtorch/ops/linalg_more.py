"""More linear algebra: det, slogdet, inverse, cross, vdot, dist, diag_embed and the fused
products addmv, addr, addbmm, baddbmm; composites (logdet, kron, inner, matrix_power, adjoint)
are written in these and the ops of linalg.py, with torch's grad_fn names."""
import numpy as np

from .._tensor import Tensor
from ..autograd import grad_mode
from ._op import Op, normalize_dims, promoted, shown_dim
from .elementwise import where
from .linalg import _check, bmm, matmul, mm, mv, no_out_dtype
from .linalg_decomp import _lu_np, _lu_solve_np
from .scalar_overloads import maybe_multiply
from .shape import broadcasts_to


def _square(a, op):
    if not isinstance(a, Tensor):
        raise TypeError(f"{op}(): argument 'A' must be Tensor, not {type(a).__name__}")
    if a.ndim < 2:  # (torch's words; "1-D matrices" was ours)
        raise RuntimeError(f"{op}(): The input tensor A must have at least 2 dimensions (its shape is "
                           f"{list(a.shape)}); give a matrix, or a batch of them")
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"{op}(): A must be batches of square matrices, but they are "
                           f"{' by '.join(map(str, a.shape[-2:]))} matrices")
    if not (a.dtype.is_floating_point or a.dtype.is_complex):
        raise RuntimeError(f"{op}(): Expected a floating point or complex tensor as input. Got {a.dtype}")
    return a


class Inverse(Op):
    """d A^-1 = -A^-1 dA A^-1"""
    _grad_fn_name = "LinalgInvExBackward0"
    _saved_names = ("inverse",)

    @staticmethod
    def forward(ctx, a):
        try:
            out = np.linalg.inv(a)
        except np.linalg.LinAlgError:
            raise RuntimeError("linalg.inv: The diagonal element 2 is zero, the inversion could not be completed "
                               "because the input matrix is singular.") from None
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (inv,) = ctx.saved_tensors
        ih = inv.mT.conj()
        return -matmul(matmul(ih, grad), ih)

    @staticmethod
    def jvp(ctx, t):
        return -matmul(matmul(ctx.output, t), ctx.output)


class Det(Op):
    """d det(A) = det(A) tr(A^-1 dA), i.e. the cofactor matrix, computed as torch computes it (its
    values at singular matrices depend on that: see _det_grad_*). The node keeps A's LU factors, as torch's (its
    backward solves on them; this one computes as below)."""
    _grad_fn_name = "LinalgDetBackward0"
    _saved_names = ("A", "result", "LU", "pivots")

    @staticmethod
    def forward(ctx, a):
        out = np.asarray(np.linalg.det(_as_torch_factors(a)))
        ctx.save_for_backward(a, out, *_torch_lu(a))
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out, _, _ = ctx.saved_tensors
        if a._data.size == 0:  # no entries: torch's gradient is an empty constant
            return Tensor._make(np.zeros_like(a._data))
        if a.shape[-1] == 1:  # det of a 1x1 matrix is its entry: torch passes grad through, with no graph of A
            return grad.unsqueeze(-1).unsqueeze(-1)
        d = grad * out.conj()
        if not grad_mode.is_grad_enabled():
            return _det_grad_solved(a, out, d)
        # create_graph: torch switches to the SVD formula where |det| < 100 eps, so that the second
        # order exists at singular matrices (the first order there is then the adjugate, not 0)
        near = np.abs(out._data) < 100 * np.finfo(out._data.dtype).eps
        if not near.any():
            return _det_grad_solve_op(a, d)
        if near.all():
            return _det_grad_svd(a, grad)
        from .index_more import index_put
        mask = Tensor._make(near)
        both = Tensor._make(np.empty_like(a._data))
        both = index_put(both, (mask,), _det_grad_svd(a[mask], grad[mask]))
        return index_put(both, (~mask,), _det_grad_solve_op(a[~mask], d[~mask]))

    @staticmethod
    def jvp(ctx, t):
        # torch solves on A's LU factors with a zero pivot nudged to eps: finite, and times det = 0
        a, singular = ctx.inputs[0], Tensor._make((ctx.output._data == 0)[..., None, None])
        safe = where(singular, Tensor._make(np.eye(a.shape[-1], dtype=a._data.dtype)), a)
        return ctx.output * matmul(Inverse.apply(safe), t).diagonal(0, -2, -1).sum(-1)


def _lu_solve(a, rhs, adjoint):
    """X with A^H X = rhs (adjoint) or A X = rhs on A's LU factors, as torch solves it when A is singular:
    inf and nan where a zero pivot puts them (torch factors A^T for a real C-contiguous A)."""
    use_t = a.flags.c_contiguous and not np.iscomplexobj(a)
    lu, piv = _lu_np(np.swapaxes(a, -1, -2) if use_t else a)
    with np.errstate(all="ignore"):
        return _lu_solve_np(lu, rhs, piv, True, adjoint != use_t)


def _torch_lu(a):
    """(LU, pivots) as torch's det and slogdet keep them: of A^T for a real C-contiguous A (det A^T = det A, and A^T
    is the layout LAPACK reads without a copy), else of A"""
    return _lu_np(np.swapaxes(a, -1, -2) if a.flags.c_contiguous and not np.iscomplexobj(a) else a)


def _diag_of(v, n):
    """matrices with v on the diagonal"""
    return v[..., None, None] * np.eye(n, dtype=v.dtype)


def _as_torch_factors(a):
    """The matrices to hand numpy's LAPACK so that it factors what torch's det factors: LAPACK reads a
    C-ordered matrix transposed, and torch factors A^T for a real matrix but A for a complex one. Near a
    singular matrix det and the gradient are rounding noise, and this makes it torch's noise."""
    return a if not np.iscomplexobj(a) else np.ascontiguousarray(np.swapaxes(a, -1, -2))


def _inv_h_times(a, d, singular):
    """d A^-H, with A^-H taken as I where A is singular (torch's nudged LU solve gives d A^-H there too,
    and d is 0 there), from the LU factors torch uses."""
    eye = np.broadcast_to(np.eye(a.shape[-1], dtype=a._data.dtype), a.shape)
    inv = np.linalg.inv(_as_torch_factors(np.where(singular[..., None, None], eye, a._data)))
    inv_h = inv.conj() if np.iscomplexobj(inv) else np.swapaxes(inv, -1, -2)  # (a complex inv is of A^T)
    return Tensor._make(d._data[..., None, None] * inv_h)


def _det_grad_solved(a, det, d):
    """Without create_graph torch solves A^H X = d I on A's LU factors, a zero pivot nudged to eps:
    where det is exactly 0, d is 0 and so is the gradient (not the adjugate)."""
    return _inv_h_times(a, d, det._data == 0)


def _det_grad_solve_op(a, d):
    """X with A^H X = d I, as a differentiable solve (torch's grad_fn LinalgSolveExBackward0)."""
    from .linalg_factor import solve
    return solve(a.mH, diag_embed(d.unsqueeze(-1).expand(*a.shape[:-1])))


def _det_grad_svd(a, grad):
    """torch's singular-matrix formula: A = U S V^H, so d det = det(U) det(V^H) d prod(S); the product of
    the other singular values stays finite where S has zeros (rank n-1: the adjugate)."""
    from .decomposition import Svd
    from .reduce import _prod_of_others
    u, s, vh = Svd.apply(a)
    alpha = (Det.apply(u) * Det.apply(vh)).conj()
    dprod = (grad * alpha).unsqueeze(-1) * _prod_of_others(s, s.ndim - 1).conj()
    return matmul(u * dprod.unsqueeze(-2), vh)


class Slogdet(Op):
    """(sign, log|det A|);  d log|det A| = Re tr(A^-1 dA), d sign = sign i Im tr(A^-1 dA): both outputs are
    differentiable, as torch's, but a real sign's gradient is zero (torch's leaves A's undefined when only the sign
    is used). At a singular A torch neither nudges nor switches formula: its LU solve gives inf and nan, and with
    create_graph its linalg.solve raises."""
    _grad_fn_name = "LinalgSlogdetBackward0"
    _saved_names = ("A", "sign", "LU", "pivots")  # (A's LU factors too, as torch's: see Det)

    @staticmethod
    def forward(ctx, a):
        sign, logabs = (np.asarray(v) for v in np.linalg.slogdet(a))
        ctx.set_materialize_grads(False)  # (torch's formula keeps the terms of the outputs used)
        ctx.save_for_backward(a, sign, *_torch_lu(a))
        ctx.singular = sign == 0
        return sign, logabs

    @staticmethod
    def backward(ctx, gsign, glog):
        a, sign, _, _ = ctx.saved_tensors
        if a.is_complex() and gsign is not None:  # torch's: g = g_logabs - i Im(conj(g_sign) sign)
            turn = (gsign.conj() * sign).imag * -1j
            glog = turn if glog is None else glog + turn
        if glog is None:
            return None
        if grad_mode.is_grad_enabled():
            return _det_grad_solve_op(a, glog)
        if ctx.singular.any():
            return Tensor._make(_lu_solve(a._data, _diag_of(glog._data, a.shape[-1]), adjoint=True))
        return _inv_h_times(a, glog, ctx.singular)

    @staticmethod
    def jvp(ctx, t):
        a = ctx.inputs[0]
        if ctx.singular.any():
            with np.errstate(all="ignore"):  # inf - inf on the diagonal: nan, as torch's
                dlog = Tensor._make(np.trace(_lu_solve(a._data, t._data, adjoint=False), 0, -2, -1))
        else:
            dlog = matmul(Inverse.apply(a), t).diagonal(0, -2, -1).sum(-1)
        return dlog * 0, dlog


def inverse(input):
    return Inverse.apply(_square(input, "inverse"))


def det(input):
    return Det.apply(_square(input, "det"))


def slogdet(input):
    from .reduce import return_type
    sign, logabs = _slogdet(input, "slogdet")
    return return_type("slogdet", ("sign", "logabsdet"))(sign, logabs)


def _slogdet(input, op):
    if _square(input, op).dtype.name == "float16":
        raise RuntimeError(f"{op}(): Low precision dtypes not supported. Got Half; convert the input with .float()")
    return Slogdet.apply(input)


def logdet(input):
    """log det A: NaN for a negative determinant, -inf for a singular matrix (torch's where)."""
    sign, logabs = _slogdet(input, "logdet")
    return where(sign < 0, logabs * 0 + float("nan"), logabs)


def _each_for_the_other(ctx, i, j, a, b):
    """What torch's product-like nodes keep: a (input i) only for b's gradient, b (input j) only for a's, so that
    an operand whose partner needs no gradient may change in place afterwards."""
    need = ctx.needs_input_grad
    return (a if need[j] else None, b if need[i] else None)


class Cross(Op):
    """d (a x b) = (b x g, g x a); a and b broadcast inside (torch's node links to them as given, the engine sums
    each gradient back). dim as the caller gave it (-1 too: torch's node shows it so)"""
    _grad_fn_name = "LinalgCrossBackward0"
    _saved_names, _saved_values = ("self", "other"), {"dim": "shown"}

    @staticmethod
    def forward(ctx, a, b, dim):
        ctx.dim, ctx.shown = dim, shown_dim(dim)
        ctx.save_for_backward(*_each_for_the_other(ctx, 0, 1, a, b))
        return np.ascontiguousarray(np.cross(a, b, axis=dim))  # (torch's result is contiguous, whatever the dim)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        return (Cross.apply(b, grad, ctx.dim) if need[0] else None, Cross.apply(grad, a, ctx.dim) if need[1] else None,
                None)

    @staticmethod
    def jvp(ctx, ta, tb, _dim):
        a, b = ctx.inputs[:2]
        return Cross.apply(ta, b, ctx.dim) + Cross.apply(a, tb, ctx.dim)


def cross(input, other, dim=None):
    from .scan import need_tensor
    need_tensor(other, "cross")
    if input.dtype != other.dtype:
        raise RuntimeError(f"cross(): expected scalar type {input.dtype} but found {other.dtype}; convert one "
                           "operand with .to()")
    a, b = promoted(input, other)
    if a.ndim != b.ndim:
        raise RuntimeError(f"linalg.cross: inputs must have the same number of dimensions (got {a.ndim} and "
                           f"{b.ndim}); unsqueeze the smaller one")
    try:
        shape = np.broadcast_shapes(tuple(a.shape), tuple(b.shape))
    except ValueError:
        raise RuntimeError(f"linalg.cross: shapes {list(a.shape)} and {list(b.shape)} do not broadcast") from None
    if dim is None:  # torch.cross's old default: the input's first dim of size 3
        dim = next((i for i, n in enumerate(a.shape) if n == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    d = normalize_dims(dim, len(shape), "cross")[0]
    if a.shape[d] != 3 or b.shape[d] != 3:  # (both: torch does not broadcast the dim of the product)
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {a.shape[d]} and "
                           f"{b.shape[d]}")
    return Cross.apply(a, b, int(dim))  # (as given: a and b have one number of dims, so -1 is the same dim in both)


class Vdot(Op):
    """vdot(a, b) = sum conj(a) b;  d = (conj(g) b, g a)"""
    _grad_fn_name = "VdotBackward0"
    _saved_names = ("self", "other")

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return np.asarray(np.vdot(a, b))

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad.conj() * b, grad * a

    @staticmethod
    def jvp(ctx, ta, tb):
        a, b = ctx.inputs
        return Vdot.apply(ta, b) + Vdot.apply(a, tb)


def vdot(input, other):
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors (vdot)")
    if input.shape[0] != other.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{input.shape[0]}] and src [{other.shape[0]}] "
                           "to have the same number of elements (vdot)")
    if input.dtype != other.dtype:
        raise RuntimeError(f"vdot: expected both vectors to have same dtype, but found {input.dtype} and "
                           f"{other.dtype}")
    return Vdot.apply(input, other)


def _p_norm_grad(x, n, g, p):
    """g d||x||_p / dx in Tensor ops (0 where the norm is 0)."""
    if p == 0:
        return x * 0
    if p == 1:
        return g * x.sign()
    if p == float("inf"):
        hit = (x.abs() == n).to(x.dtype)
        return g * x.sign() * hit / hit.sum()
    safe = where(n == 0, n * 0 + 1, n)
    return where(n == 0, x * 0, g * x * x.abs() ** (p - 2) / safe ** (p - 1))


class Dist(Op):
    """||a - b||_p;  d = +-(a - b)|a - b|^(p-2) / ||a - b||^(p-1)"""
    _grad_fn_name = "DistBackward0"
    _saved_names, _saved_values = ("self", "other", "result"), {"p": "p"}

    @staticmethod
    def forward(ctx, a, b, p=2):
        ctx.p = p
        d = np.abs(a - b)
        if p == float("inf"):
            out = d.max(initial=0)
        elif p == 0:
            out = (d != 0).sum().astype(d.dtype)
        else:
            out = (d ** p).sum() ** (1.0 / p)
        out = np.asarray(out, dtype=d.dtype)
        ctx.save_for_backward(a, b, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        from types import SimpleNamespace

        from .reduce import Norm
        a, b, out = ctx.saved_tensors
        if ctx.p == 0:  # torch's norm backward gives no gradient at all for p = 0, and negating it for b fails
            if ctx.needs_input_grad[1]:
                raise RuntimeError("Expected a proper Tensor but got None (or an undefined Tensor in C++) for argument "
                                   "#0 'self' (dist with p=0 is a count, with no gradient: torch's backward fails "
                                   "on the second operand's; detach it, or use another p)")
            return None, None
        d = a - b  # torch's dist backward is norm's, of a - b: the same formulas (and second order: NaN at a 0)
        norm_ctx = SimpleNamespace(saved_tensors=(d, out), dims=None, keepdim=False, ord=ctx.p, in_shape=d.shape)
        g = Norm.backward(norm_ctx, grad)
        return g, -g

    @staticmethod
    def jvp(ctx, ta, tb):
        a, b = ctx.inputs[:2]
        return (_p_norm_grad(a - b, ctx.output, ctx.output * 0 + 1, ctx.p) * (ta - tb)).sum()


def dist(input, other, p=2):
    from .scan import need_tensor
    need_tensor(other, "dist")
    if "bool" in (input.dtype.name, other.dtype.name):
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported (dist); convert the "
                           "tensors with .float()")
    a, b = promoted(input, other)
    return Dist.apply(a, b, p=p)


class DiagEmbed(Op):
    """x on a diagonal of new (dim1, dim2) planes;  d = the diagonal of g. The arguments as the caller gave them
    (torch's node shows them so, -1 as 18446744073709551615), checked already"""
    _grad_fn_name = "DiagEmbedBackward0"
    _saved_values = {"offset": "offset", "dim1": "dim1", "dim2": "dim2"}

    @staticmethod
    def forward(ctx, x, offset=0, dim1=-2, dim2=-1):
        ctx.args = (offset, dim1, dim2)
        ctx.offset, ctx.dim1, ctx.dim2 = (shown_dim(v) for v in ctx.args)
        dim1, dim2 = dim1 % (x.ndim + 1), dim2 % (x.ndim + 1)
        n = x.shape[-1] + abs(offset) if x.ndim else abs(offset) + 1
        out = np.zeros(x.shape[:-1] + (n, n), dtype=x.dtype)
        k = np.arange(x.shape[-1])
        r, c = (k, k + offset) if offset >= 0 else (k - offset, k)
        out[..., r, c] = x
        return np.moveaxis(out, (-2, -1), (dim1, dim2)) if (dim1, dim2) != (out.ndim - 2, out.ndim - 1) else out

    @staticmethod
    def backward(ctx, grad):
        offset, dim1, dim2 = ctx.args
        return grad.diagonal(offset, dim1, dim2), None, None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return DiagEmbed.apply(t, *ctx.args)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    n = input.ndim + 1
    d1, d2 = (normalize_dims(d, n, "diag_embed")[0] for d in (dim1, dim2))
    if d1 == d2:
        raise RuntimeError(f"diag_embed: diagonal dimensions cannot be identical {dim1}, {dim2}")
    return DiagEmbed.apply(input, int(offset), int(dim1), int(dim2))


def diagflat(input, offset=0):
    return DiagEmbed.apply(input.reshape(-1), int(offset), -2, -1)  # (torch's diag_embed of the flattened input)


def kron(input, other):
    """the Kronecker product: every a_ij times the whole of b, tiled (torch's UnsafeView at the end)."""
    from .shape import UnsafeView
    a, b = promoted(input, other)
    n = max(a.ndim, b.ndim)
    sa, sb = (1,) * (n - a.ndim) + tuple(a.shape), (1,) * (n - b.ndim) + tuple(b.shape)
    # torch's _unsafe_view of each operand (not a view for autograd: they may change in place afterwards)
    prod = UnsafeView.apply(a, tuple(s for k in sa for s in (k, 1))) * UnsafeView.apply(b, tuple(s for k in sb for s in (1, k)))
    return UnsafeView.apply(prod, tuple(i * j for i, j in zip(sa, sb)))


def inner(input, other):
    """sum over the last dims: out[i.., j..] = sum_k a[i.., k] b[j.., k]"""
    a, b = input, other
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    if a.shape[-1] != b.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(a.shape)} and {list(b.shape)}")
    if a.dtype != b.dtype:
        raise RuntimeError(f"inner(): expected both inputs to have the same dtype, but got {a.dtype} and {b.dtype}; "
                           "convert one with .to()")
    k = a.shape[-1]
    out = mm(a.reshape(-1, k), b.reshape(-1, k).t())
    return out.view(tuple(a.shape[:-1]) + tuple(b.shape[:-1]))


def matrix_power(input, n):
    from .scan import need_int, need_tensor
    need_tensor(input, "matrix_power", "input", 0)
    need_int(n, "matrix_power", "n")
    if input.ndim < 2 or input.shape[-1] != input.shape[-2]:
        raise RuntimeError(f"matrix_power(): A must be batches of square matrices, but got shape {list(input.shape)}")
    a = input
    if n == 0:
        from .._creation import eye
        # (torch's: A's clone overwritten by I, a CopyBackwards node whose gradient to A is 0, and an inf in A
        # leaves no NaN)
        return a.clone().copy_(eye(a.shape[-1], dtype=a.dtype).expand_as(a)) if a.requires_grad else \
            Tensor._make(np.broadcast_to(np.eye(a.shape[-1], dtype=a._data.dtype), a.shape).copy())
    if abs(n) > 2 ** 20:
        raise RuntimeError(f"matrix_power(): n = {n} is too large for repeated products; use matrix_exp or "
                           "eigenvalues instead")
    try:
        base = inverse(a) if n < 0 else a
    except RuntimeError as e:
        raise RuntimeError(f"matrix_power(): {e}") from None
    out = base
    for _ in range(abs(n) - 1):
        out = matmul(out, base)
    return out


def adjoint(input):
    if input.ndim < 2:
        raise RuntimeError(f"adjoint() is only supported for matrices or batches of matrices. Got {input.ndim}-D "
                           "tensor.")
    return input.transpose(-2, -1).conj()


class Addmv(Op):
    """beta x + alpha A v, x broadcast inside (torch's node takes it as given; the engine sums its gradient
    back);  d = (beta g, alpha g v^T, alpha A^T g)"""
    _grad_fn_name = "AddmvBackward0"
    _saved_names = ("mat", "vec")
    _saved_values = {"beta": "beta", "alpha": "alpha"}

    @staticmethod
    def forward(ctx, x, a, v, beta=1, alpha=1):
        ctx.beta, ctx.alpha = beta, alpha
        ctx.save_for_backward(*_each_for_the_other(ctx, 1, 2, a, v))
        return (beta * x if beta != 0 else np.zeros_like(x)) + alpha * (a @ v)

    @staticmethod
    def backward(ctx, grad):
        a, v = ctx.saved_tensors  # (torch's formulas: grad.ger(vec), mat.t().mv(grad), each times alpha unless 1)
        need, alpha = ctx.needs_input_grad, ctx.alpha
        return (maybe_multiply(grad, ctx.beta),
                maybe_multiply(grad.reshape(grad.shape[0], 1) * v.conj(), alpha) if need[1] else None,
                maybe_multiply(mv(a.t().conj(), grad), alpha) if need[2] else None)

    @staticmethod
    def jvp(ctx, tx, ta, tv):
        _, a, v = ctx.inputs[:3]
        return tx * ctx.beta + (mv(ta, v) + mv(a, tv)) * ctx.alpha


class Addr(Op):
    """beta x + alpha u v^T, x broadcast inside;  d = (beta g, alpha g v, alpha g^T u)"""
    _grad_fn_name = "AddrBackward0"
    _saved_names = ("vec1", "vec2")
    _saved_values = {"beta": "beta", "alpha": "alpha"}

    @staticmethod
    def forward(ctx, x, u, v, beta=1, alpha=1):
        ctx.beta, ctx.alpha = beta, alpha
        ctx.save_for_backward(*_each_for_the_other(ctx, 1, 2, u, v))
        return (beta * x if beta != 0 else np.zeros_like(x)) + alpha * np.outer(u, v)

    @staticmethod
    def backward(ctx, grad):
        u, v = ctx.saved_tensors  # (torch's formulas: grad.mv(vec2), grad.t().mv(vec1), each times alpha unless 1)
        need, alpha = ctx.needs_input_grad, ctx.alpha
        return (maybe_multiply(grad, ctx.beta), maybe_multiply(mv(grad, v.conj()), alpha) if need[1] else None,
                maybe_multiply(mv(grad.t(), u.conj()), alpha) if need[2] else None)

    @staticmethod
    def jvp(ctx, tx, tu, tv):
        _, u, v = ctx.inputs[:3]
        return tx * ctx.beta + (tu.unsqueeze(1) * v + u.unsqueeze(1) * tv) * ctx.alpha


class Baddbmm(Op):
    """beta x + alpha A @ B (batched), x broadcast inside;  d = (beta g, alpha g B^T, alpha A^T g)"""
    _grad_fn_name = "BaddbmmBackward0"
    _saved_names = ("batch1", "batch2")
    _saved_values = {"beta": "beta", "alpha": "alpha"}

    @staticmethod
    def forward(ctx, x, a, b, beta=1, alpha=1):
        ctx.beta, ctx.alpha = beta, alpha
        ctx.save_for_backward(*_each_for_the_other(ctx, 1, 2, a, b))
        return (beta * x if beta != 0 else np.zeros_like(x)) + alpha * np.matmul(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors  # (torch's: grad.bmm(batch2.transpose(1, 2)), batch1.transpose(1, 2).bmm(grad))
        need, alpha = ctx.needs_input_grad, ctx.alpha
        return (maybe_multiply(grad, ctx.beta),
                maybe_multiply(bmm(grad, b.transpose(1, 2).conj()), alpha) if need[1] else None,
                maybe_multiply(bmm(a.transpose(1, 2).conj(), grad), alpha) if need[2] else None)

    @staticmethod
    def jvp(ctx, tx, ta, tb):
        _, a, b = ctx.inputs[:3]
        return tx * ctx.beta + (bmm(ta, b) + bmm(a, tb)) * ctx.alpha


class Addbmm(Baddbmm):
    """beta x + alpha sum_i A_i @ B_i, x broadcast inside;  d = (beta g, alpha g B_i^T, alpha A_i^T g)"""
    _grad_fn_name = "AddbmmBackward0"
    _saved_values = {"beta": "beta", "alpha": "alpha", "batch1_sym_argsize_0": "batch",
                     "batch1_sym_argsize_1": "rows", "batch2_sym_argsize_2": "cols"}

    @staticmethod
    def forward(ctx, x, a, b, beta=1, alpha=1):
        ctx.beta, ctx.alpha, (ctx.batch, ctx.rows), ctx.cols = beta, alpha, a.shape[:2], b.shape[2]
        ctx.save_for_backward(*_each_for_the_other(ctx, 1, 2, a, b))
        return (beta * x if beta != 0 else np.zeros_like(x)) + alpha * np.matmul(a, b).sum(0)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors  # (torch's formulas: the gradient expanded over the batch, once for each input)
        need, alpha = ctx.needs_input_grad, ctx.alpha
        g1 = bmm(grad.unsqueeze(0).expand(ctx.batch, ctx.rows, ctx.cols), b.transpose(1, 2).conj()) \
            if need[1] else None
        g2 = bmm(a.transpose(1, 2).conj(), grad.unsqueeze(0).expand(ctx.batch, ctx.rows, ctx.cols)) \
            if need[2] else None
        return (maybe_multiply(grad, ctx.beta), None if g1 is None else maybe_multiply(g1, alpha),
                None if g2 is None else maybe_multiply(g2, alpha))

    @staticmethod
    def jvp(ctx, tx, ta, tb):
        _, a, b = ctx.inputs[:3]
        return tx * ctx.beta + (bmm(ta, b) + bmm(a, tb)).sum(0) * ctx.alpha


def _fused(cls, op, x, a, b, beta, alpha, shape):
    """x is passed as given, not expanded: torch's node has an edge to x itself (no ExpandBackward0)"""
    x, a, b = promoted(x, a, b)
    if not broadcasts_to(tuple(x.shape), shape):
        raise RuntimeError(f"{op}: the added tensor of shape {list(x.shape)} does not broadcast to the product's "
                           f"shape {list(shape)}")
    return cls.apply(x, a, b, beta=beta, alpha=alpha)


def _mv_checks(mat, vec):
    """mv's checks and errors, without computing a product (whose node would save mat and vec once more)"""
    if mat.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {mat.ndim}, {vec.ndim}")
    _check(mat, vec, "mv")


def _bmm_checks(batch1, batch2):
    """bmm's checks and errors, without computing a product"""
    if batch1.ndim != 3 or batch2.ndim != 3:
        raise RuntimeError(f"bmm: batch1 must be a 3D tensor and batch2 a 3D tensor (got {batch1.ndim}D and "
                           f"{batch2.ndim}D)")
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError(f"bmm: batch1 and batch2 must have same number of batches, got {batch1.shape[0]} and "
                           f"{batch2.shape[0]}")
    _check(batch1, batch2, "bmm")


def addmv(input, mat, vec, *, beta=1, alpha=1):
    _mv_checks(mat, vec)
    return _fused(Addmv, "addmv", input, mat, vec, beta, alpha, (mat.shape[0],))


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    if vec1.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1 and vec2, but got {vec1.ndim}-D and {vec2.ndim}-D")
    return _fused(Addr, "addr", input, vec1, vec2, beta, alpha, (vec1.shape[0], vec2.shape[0]))


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out_dtype=None):
    if out_dtype is not None:
        no_out_dtype("baddbmm")
    _bmm_checks(batch1, batch2)
    return _fused(Baddbmm, "baddbmm", input, batch1, batch2, beta, alpha,
                  (batch1.shape[0], batch1.shape[1], batch2.shape[2]))


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    _bmm_checks(batch1, batch2)
    return _fused(Addbmm, "addbmm", input, batch1, batch2, beta, alpha, (batch1.shape[1], batch2.shape[2]))


def cov(input, *, correction=1, fweights=None, aweights=None):
    """the covariance of the rows (variables) over the columns (observations), optionally weighted."""
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.ndim} dimensions")
    if input.dtype.name == "bool":
        raise RuntimeError("cov(): bool dtype is not supported for input; convert it with .float()")
    x = input.reshape(1, -1) if input.ndim < 2 else input
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        x = x.to(_default_float())
    w = fweights
    if aweights is not None:
        w = aweights if w is None else w * aweights
    if w is not None:
        w_sum = w.sum()
        avg = (x * w).sum(1) / w_sum
        norm = w_sum - (correction * (w * aweights).sum() / w_sum if aweights is not None else correction)
    else:
        avg = x.mean(1)
        norm = x.shape[1] - correction
    norm = norm.clamp(min=0) if isinstance(norm, Tensor) else max(norm, 0)
    xm = x - avg.unsqueeze(1)
    c = mm(xm, (xm * w if w is not None else xm).t().conj())
    return (c / norm).squeeze()


def _default_float():
    from .._dtype import get_default_dtype
    return get_default_dtype()


def corrcoef(input):
    """Pearson's correlation coefficients of the rows: cov / (std_i std_j), clipped to [-1, 1]."""
    if input.dtype.name == "bool":
        raise RuntimeError("corrcoef(): bool dtype is not supported for input (cov); convert it with .float()")
    c = cov(input)
    if c.ndim == 0:
        return c / c
    std = c.diagonal().sqrt()
    c = c / std.reshape(-1, 1)
    c = c / std.reshape(1, -1)
    if c.is_complex():  # (clamp has no complex kernel: torch clips the real and imaginary parts)
        return c.real.clamp(-1, 1) + 1j * c.imag.clamp(-1, 1)
    return c.clamp(-1, 1)


def _expm_np(a):
    """e^A by scaling and squaring: a Taylor series of A / 2^s (norm <= 1/2), squared s times."""
    norm = np.abs(a).sum(-2).max() if a.size else 0.0
    s = max(0, int(np.ceil(np.log2(norm))) + 1) if norm > 0 else 0
    x = a / 2.0 ** s
    term = np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape).copy()
    out = term.copy()
    for k in range(1, 30):
        term = term @ x / k
        out = out + term
    for _ in range(s):
        out = out @ out
    return out


def _block_exp(a, t):
    """the Frechet derivative of exp at A in direction T: the top-right block of exp([[A, T], [0, A]])."""
    from .shape import cat
    n = a.shape[-1]
    top = cat([a, t], -1)
    bottom = cat([a * 0, a], -1)
    return MatrixExp.apply(cat([top, bottom], -2))[..., :n, n:]


class MatrixExp(Op):
    """d e^A = the Frechet derivative L(A, dA);  grad = L(A^H, G)"""
    _grad_fn_name = "LinalgMatrixExpBackward0"
    _saved_names = ("self",)

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _expm_np(a)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return _block_exp(a.mT.conj(), grad)

    @staticmethod
    def jvp(ctx, t):
        return _block_exp(ctx.inputs[0], t)


def matrix_exp(input):
    return MatrixExp.apply(_square(input, "matrix_exp"))


class Pinverse(Op):
    """X = A^+;  dX = -X dA X + X X^H dA^H (I - A X) + (I - X A) dA^H X^H X"""
    _grad_fn_name = "LinalgPinvBackward0"
    _saved_names = ("self", "result")

    @staticmethod
    def forward(ctx, a, rcond=1e-15):
        out = np.linalg.pinv(a, rcond=rcond)
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, x = ctx.saved_tensors
        xh, gh = x.mT.conj(), grad.mT.conj()
        left = _eye(a, a.shape[-2]) - matmul(a, x)    # I - A X  (m x m)
        right = _eye(a, a.shape[-1]) - matmul(x, a)   # I - X A  (n x n)
        return (-matmul(matmul(xh, grad), xh) + matmul(matmul(left, gh), matmul(x, xh))
                + matmul(matmul(xh, x), matmul(gh, right)))

    @staticmethod
    def jvp(ctx, t):
        a, x = ctx.inputs[0], ctx.output
        th = t.mT.conj()
        xh = x.mT.conj()
        left = _eye(a, a.shape[-2]) - matmul(a, x)
        right = _eye(a, a.shape[-1]) - matmul(x, a)
        return (-matmul(matmul(x, t), x) + matmul(matmul(x, xh), matmul(th, left))
                + matmul(matmul(right, th), matmul(xh, x)))


def _eye(like, n):
    return Tensor._make(np.eye(n, dtype=like._data.dtype))


def pinverse(input, rcond=1e-15):
    if input.ndim < 2:
        raise RuntimeError(f"pinverse(): expected a tensor with 2 or more dimensions, got {input.ndim}")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"pinverse(): Expected a floating point or complex tensor as input. Got {input.dtype}")
    return Pinverse.apply(input, rcond=rcond)


def _phi(x):
    """the lower triangle with its diagonal halved"""
    from .._creation import tril
    n = x.shape[-1]
    return tril(x) * Tensor._make(np.where(np.eye(n, dtype=bool), 0.5, 1.0).astype(x._data.dtype))


class Cholesky(Op):
    """A = L L^H;  grad_A = sym(L^-H phi(L^H gL) L^-1)"""
    _grad_fn_name = "CholeskyBackward0"
    _saved_names, _saved_values = ("result",), {"upper": "upper"}

    @staticmethod
    def forward(ctx, a, upper=False):
        try:
            low = np.linalg.cholesky(a)
        except np.linalg.LinAlgError:
            raise RuntimeError("cholesky: The factorization could not be completed because the input is not "
                               "positive-definite; check that A is symmetric with positive eigenvalues") from None
        ctx.upper = upper
        out = np.swapaxes(low, -1, -2).conj() if upper else low
        ctx.save_for_backward(out)  # (the output itself, so that backward can be differentiated again)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        low, g = (out.mT.conj(), grad.mT.conj()) if ctx.upper else (out, grad)
        inv = Inverse.apply(low)
        s = matmul(matmul(inv.mT.conj(), _phi(matmul(low.mT.conj(), g))), inv)
        return (s + s.mT.conj()) * 0.5

    @staticmethod
    def jvp(ctx, t):  # torch's (deprecated) cholesky has no forward-mode formula: refused as there
        raise NotImplementedError("Trying to use forward AD with cholesky that does not support it because it has "
                                  "not been implemented yet; use reverse mode, or linalg.cholesky on torch")


def cholesky(input, upper=False):
    from .linalg_triangular import _deprecated
    _deprecated("cholesky", "torch.linalg.cholesky")  # (upper=True: torch.linalg.cholesky(A).mH)
    return Cholesky.apply(_square(input, "cholesky"), upper=upper)
