"""Products of a sparse COO matrix with a dense one, and sums of a sparse tensor, as differentiable ops.

torch names a product by the function that made it: `torch.sparse.mm` and `torch.sparse.addmm` record
SparseAddmmBackward0 (with an edge for the added matrix), `torch.mm`, `torch.matmul`, `@` and `torch.spmm`
MmBackward0 (MvBackward0 for a vector). The dense operand's gradient is S^T @ grad either way; the sparse
operand's is sparse at its indices under SparseAddmm, dense under Mm (as torch's).
"""
import numpy as np

from . import _kernels as k
from ._array import SparseArray
from .ops import SparseOp, wrap


def _st(sa):
    """S^T as a sparse tensor (for the dense operand's gradient, itself a recorded product under create_graph)."""
    return wrap(k.transposed(sa, 0, 1))


class SparseAddmm(SparseOp):
    """beta bias + alpha S @ D"""
    _grad_fn_name = "SparseAddmmBackward0"

    @staticmethod
    def forward(ctx, bias, sa, d, beta, alpha):
        ctx.sa, ctx.beta, ctx.alpha = sa, beta, alpha
        ctx.save_for_backward(d if ctx.needs_input_grad[1] else None)
        out = k.spmm(sa, d)
        if alpha != 1:
            out *= alpha
        return out if beta == 0 else out + beta * bias

    @staticmethod
    def backward(ctx, grad):
        d, = ctx.saved_tensors
        need_bias, need_s, need_d = ctx.needs_input_grad[:3]
        gs = gd = None
        if need_s:  # alpha (grad @ D^T) at S's entries only
            pattern = k.coalesce(ctx.sa)
            rows, cols = pattern.indices
            vals = (grad._data[rows] * d._data[cols]).sum(axis=1) * ctx.alpha
            gs = wrap(SparseArray(pattern.indices, vals.astype(grad._data.dtype), pattern.shape, False))
        if need_d:
            gd = SparseMm.apply(_st(ctx.sa), grad)
            gd = gd if ctx.alpha == 1 else gd * ctx.alpha
        gb = (grad if ctx.beta == 1 else grad * ctx.beta) if need_bias else None
        return gb, gs, gd, None, None


class SparseMm(SparseOp):
    """a @ b with one of them sparse (torch.mm, matmul, spmm): MmBackward0; the sparse one's gradient is dense"""
    _grad_fn_name = "MmBackward0"

    @staticmethod
    def forward(ctx, a, b):
        ctx.sparse_left = isinstance(a, SparseArray)
        ctx.sa = a if ctx.sparse_left else b
        dense = b if ctx.sparse_left else a
        ctx.save_for_backward(dense if ctx.needs_input_grad[0 if ctx.sparse_left else 1] else None)
        if ctx.sparse_left:
            return k.spmm(a, b)
        return np.ascontiguousarray(k.spmm(k.transposed(b, 0, 1), a.T).T)  # (a @ S = (S^T a^T)^T)

    @staticmethod
    def backward(ctx, grad):
        dense, = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        if ctx.sparse_left:  # grad @ D^T for S (dense), S^T @ grad for D
            return (grad.mm(dense.t()) if need_a else None,
                    SparseMm.apply(_st(ctx.sa), grad) if need_b else None)
        return (SparseMm.apply(grad, _st(ctx.sa)) if need_a else None,
                dense.t().mm(grad) if need_b else None)


class SparseMv(SparseOp):
    """S @ v: MvBackward0"""
    _grad_fn_name = "MvBackward0"

    @staticmethod
    def forward(ctx, sa, v):
        ctx.sa = sa
        ctx.save_for_backward(v if ctx.needs_input_grad[0] else None)
        return k.spmm(sa, v[:, None])[:, 0]

    @staticmethod
    def backward(ctx, grad):
        v, = ctx.saved_tensors
        need_s, need_v = ctx.needs_input_grad
        return (grad.reshape(-1, 1) * v if need_s else None,
                SparseMv.apply(_st(ctx.sa), grad) if need_v else None)


class SparseSum(SparseOp):
    """torch.sparse.sum(S, dim): sparse while a sparse dim is left, dense once all are summed"""
    _grad_fn_name = "SparseSumBackward0"

    @staticmethod
    def forward(ctx, sa, dims):
        ctx.sa, ctx.dims = sa, dims
        sd = sa.sparse_dim
        values = sa.values
        dense_axes = tuple(d - sd + 1 for d in dims if d >= sd)
        if dense_axes:
            values = values.sum(axis=dense_axes)
        kept = [d for d in range(sd) if d not in dims]
        if not kept:
            return np.asarray(values.sum(axis=0))
        shape = tuple(n for i, n in enumerate(sa.shape) if i not in dims)
        return wrap(k.coalesce(SparseArray(sa.indices[kept], values, shape, False)))

    @staticmethod
    def backward(ctx, grad):
        sa, dims = k.coalesce(ctx.sa), ctx.dims  # (at each position once: a gradient's duplicates would add up)
        g = grad._data
        g = k.to_dense(g) if isinstance(g, SparseArray) else np.asarray(g)
        g = g.reshape(tuple(1 if i in dims else n for i, n in enumerate(sa.shape)))
        at = tuple(np.zeros(sa.nnz, np.int64) if d in dims else sa.indices[d] for d in range(sa.sparse_dim))
        vals = np.broadcast_to(g[at], sa.values.shape).astype(g.dtype, copy=True)
        return wrap(SparseArray(sa.indices, vals, sa.shape, False)), None


class SumAll(SparseSum):
    _grad_fn_name = "SumBackward0"


class SumDim(SparseSum):
    _grad_fn_name = "SumBackward1"

