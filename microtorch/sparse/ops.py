"""The differentiable ops of sparse COO tensors, each a Function as the dense ops are: forward in numpy on the
SparseArrays (and ndarrays) behind its arguments, backward in tensor ops, with torch's node names.

A sparse input's gradient is sparse, at the input's own (coalesced) indices, as torch's sparse_mask gives it;
the values of `sparse_coo_tensor(indices, values)` get the gradient gathered at each index.
"""
import numpy as np

from .._dtype import from_numpy_dtype
from .._tensor import Tensor
from ..ops._op import Op
from . import _kernels as k
from ._array import SparseArray


class SparseOp(Op):
    """An op on sparse tensors: forward mode through them is not built (a clear error rather than a wrong tangent)."""

    @staticmethod
    def jvp(ctx, *tangents):
        raise NotImplementedError(f"{ctx._forward_cls.__name__}: microtorch has no forward-mode AD through sparse "
                                  "tensors; convert with .to_dense() first, or use reverse mode (backward, grad)")


def wrap(sa):
    """A sparse tensor over the SparseArray sa."""
    from .tensor import SparseTensor
    return SparseTensor._make(sa)


def _sparse_grad(grad, pattern):
    """The gradient for a sparse input whose entries are pattern's: grad gathered there (a sparse tensor)."""
    return wrap(k.mask_of(grad._data, k.coalesce(pattern)))


class SparseCooTensor(SparseOp):
    """sparse_coo_tensor(indices, values, size): values' gradient is the gradient at each index"""
    _grad_fn_name = "SparseCooTensorWithDimsAndTensorsBackward0"

    @staticmethod
    def forward(ctx, indices, values, shape, coalesced):
        ctx.indices, ctx.values_shape = indices, values.shape
        return wrap(SparseArray(indices, values, shape, coalesced))

    @staticmethod
    def backward(ctx, grad):
        return None, Tensor._make(k.values_at(grad._data, ctx.indices, ctx.values_shape)), None, None


class ToDense(SparseOp):
    _grad_fn_name = "ToDenseBackward0"

    @staticmethod
    def forward(ctx, sa):
        ctx.sa = sa
        return k.to_dense(sa)

    @staticmethod
    def backward(ctx, grad):
        return _sparse_grad(grad, ctx.sa)


class ToSparse(SparseOp):
    """dense.to_sparse(): the gradient comes back dense (zero where the input was)"""
    _grad_fn_name = "ToSparseBackward1"

    @staticmethod
    def forward(ctx, x, sparse_dim):
        return wrap(k.dense_to_sparse(x, sparse_dim))

    @staticmethod
    def backward(ctx, grad):
        return (grad.to_dense() if grad.is_sparse else grad), None


class ToSparseDim(ToSparse):
    _grad_fn_name = "ToSparseBackward0"


class Coalesce(SparseOp):
    _grad_fn_name = "CoalesceBackward0"

    @staticmethod
    def forward(ctx, sa):
        return wrap(k.coalesce(sa))

    @staticmethod
    def backward(ctx, grad):
        return grad


class Values(SparseOp):
    """s.values() of a coalesced s: the values' gradient goes back at s's indices"""
    _grad_fn_name = "ValuesBackward0"

    @staticmethod
    def forward(ctx, sa):
        ctx.sa = sa
        return sa.values

    @staticmethod
    def backward(ctx, grad):
        return wrap(ctx.sa.with_values(grad._data))


class MulNumber(SparseOp):
    _grad_fn_name = "MulBackward0"

    @staticmethod
    def forward(ctx, sa, c):
        ctx.c = c
        return wrap(sa.with_values(np.asarray(sa.values * c)))

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.c, None


class DivNumber(MulNumber):
    _grad_fn_name = "DivBackward0"

    @staticmethod
    def forward(ctx, sa, c):
        ctx.c = c
        return wrap(sa.with_values(np.asarray(sa.values / c)))

    @staticmethod
    def backward(ctx, grad):
        return grad / ctx.c, None


class Neg(SparseOp):
    _grad_fn_name = "NegBackward0"

    @staticmethod
    def forward(ctx, sa):
        return wrap(sa.with_values(-sa.values))

    @staticmethod
    def backward(ctx, grad):
        return -grad


class Clone(SparseOp):
    _grad_fn_name = "CloneBackward0"

    @staticmethod
    def forward(ctx, sa):
        return wrap(SparseArray(sa.indices.copy(), sa.values.copy(), sa.shape, sa.coalesced))

    @staticmethod
    def backward(ctx, grad):
        return grad


class ToCopy(SparseOp):
    _grad_fn_name = "ToCopyBackward0"

    @staticmethod
    def forward(ctx, sa, np_dtype):
        ctx.src = sa.dtype
        return wrap(sa.with_values(sa.values.astype(np_dtype)))

    @staticmethod
    def backward(ctx, grad):
        return grad.to(from_numpy_dtype(ctx.src)), None


class Add(SparseOp):
    """a + alpha b of two sparse tensors of one size"""
    _grad_fn_name = "AddBackward0"

    @staticmethod
    def forward(ctx, a, b, alpha):
        ctx.alpha = alpha
        return wrap(k.add(a, b, alpha))

    @staticmethod
    def backward(ctx, grad):
        return grad, (grad if ctx.alpha == 1 else grad * ctx.alpha), None


class Sub(Add):
    _grad_fn_name = "SubBackward0"


class Transpose(SparseOp):
    _grad_fn_name = "TransposeBackward0"

    @staticmethod
    def forward(ctx, sa, d0, d1):
        ctx.dims = (d0, d1)
        return wrap(k.transposed(sa, d0, d1))

    @staticmethod
    def backward(ctx, grad):
        return grad.transpose(*ctx.dims), None, None


class T(Transpose):
    _grad_fn_name = "TBackward0"

    @staticmethod
    def backward(ctx, grad):
        return grad.t(), None, None
