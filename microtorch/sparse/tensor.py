"""SparseTensor: a Tensor whose `_data` is a SparseArray (COO indices and values) instead of an ndarray.

It is a Tensor (isinstance, autograd, requires_grad, .grad, hooks and metadata are the Tensor's own) with the
few methods sparse code calls redefined; every other Tensor method refuses, naming itself, as torch refuses
the ops it has no sparse kernel for (install_refusals, run once the Tensor class is complete).
"""
import inspect

import numpy as np

from .. import _dtype
from .._tensor import Tensor, _TYPE_NAMES
from . import _kernels as k
from . import ops
from ._array import SparseArray, unsupported

_NUMBERS = (int, float, np.integer, np.floating)


class SparseTensor(Tensor):
    __slots__ = ()
    __module__ = "microtorch"
    is_sparse = True
    _sparse = True

    @property
    def layout(self):
        return _dtype.sparse_coo

    # ---- structure -------------------------------------------------------------------------
    def _nnz(self):
        return self._data.nnz

    def sparse_dim(self):
        return self._data.sparse_dim

    def dense_dim(self):
        return self._data.ndim - self._data.sparse_dim

    def is_coalesced(self):
        return self._data.coalesced

    def is_contiguous(self, memory_format=None):
        return False

    def _indices(self):
        return Tensor._make(self._data.indices)

    def _values(self):
        return Tensor._make(self._data.values)

    def indices(self):
        _need_coalesced(self, "indices")
        return Tensor._make(self._data.indices)

    def values(self):
        _need_coalesced(self, "values")
        return ops.Values.apply(self)

    def coalesce(self):
        return self if self._data.coalesced else ops.Coalesce.apply(self)

    def to_dense(self, dtype=None, *, masked_grad=None):
        out = ops.ToDense.apply(self)
        return out if dtype is None else out.to(dtype)

    def to_sparse(self, sparse_dim=None):
        if sparse_dim is not None and sparse_dim != self._data.sparse_dim:
            raise RuntimeError("to_sparse: conversion from Sparse to Sparse with sparse_dim argument "
                               "!=self.sparse_dim() is not supported")
        return self

    # ---- values, one to one --------------------------------------------------------------------
    def _to_dtype(self, dtype, memory_format=None):
        return ops.ToCopy.apply(self, dtype.np)

    def type(self, dtype=None, non_blocking=False, **kwargs):
        if dtype is None:
            return f"microtorch.sparse.{_TYPE_NAMES.get(self.dtype.name, self.dtype.name)}"
        return super().type(dtype, non_blocking, **kwargs)

    def cpu(self):
        return self

    def clone(self, *, memory_format=None):
        return ops.Clone.apply(self)

    def detach(self):
        t = SparseTensor._make(self._data)
        t._version_counter = self._version_counter
        return t

    @property
    def data(self):
        return SparseTensor._make(self._data)

    def numpy(self, *, force=False):
        raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() first.")

    def __neg__(self):
        return ops.Neg.apply(self)

    neg = __neg__

    def __mul__(self, other):
        if isinstance(other, Tensor) and other._data.ndim == 0 and not other.is_sparse:
            other = other.item()
        if isinstance(other, _NUMBERS) and not isinstance(other, bool):
            return ops.MulNumber.apply(self, other)
        raise unsupported("mul")  # (sparse * sparse and sparse * dense: torch has them, microtorch not yet)

    __rmul__ = mul = __mul__

    def __truediv__(self, other):
        if isinstance(other, Tensor) and other._data.ndim == 0 and not other.is_sparse:
            other = other.item()
        if isinstance(other, _NUMBERS) and not isinstance(other, bool):
            return ops.DivNumber.apply(self, other)
        raise unsupported("div")

    div = __truediv__

    def __add__(self, other, *, alpha=1):
        return _add(self, other, alpha, ops.Add, "add")

    add = __add__

    def __sub__(self, other, *, alpha=1):
        return _add(self, other, -alpha, ops.Sub, "sub")

    sub = __sub__

    def __radd__(self, other):
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead. (microtorch: the "
                           "dense operand first is not supported either; add s.to_dense())")

    def _sum_with(self, other):
        """The engine's sum of two gradients for one input, one of them this sparse one (dense + sparse: dense)."""
        if other.is_sparse:
            return self + other
        return other + self.to_dense()

    # ---- shape -------------------------------------------------------------------------------
    def t(self):
        if self._data.ndim < 2:
            return self
        _two_sparse_dims(self, "t")
        return ops.T.apply(self, 0, 1)

    def transpose(self, dim0, dim1):
        n = self._data.ndim
        d0, d1 = (_wrap_dim(d, n, "transpose") for d in (dim0, dim1))
        if d0 == d1:
            return self
        if max(d0, d1) >= self._data.sparse_dim:
            raise unsupported("transpose of a dense dim")
        return ops.Transpose.apply(self, d0, d1)

    @property
    def T(self):
        return self.t()

    mT = T

    # ---- reductions and products ------------------------------------------------------------------
    def sum(self, dim=None, keepdim=False, dtype=None):
        from . import sum as sparse_sum
        if keepdim:
            raise unsupported("sum with keepdim=True")
        return sparse_sum(self, dim, dtype=dtype, _method=True)

    def __matmul__(self, other):
        from . import matmul
        return matmul(self, other)

    def __rmatmul__(self, other):
        from . import matmul
        return matmul(other, self)

    matmul = __matmul__

    def mm(self, mat2):
        from . import mm_of
        return mm_of(self, mat2, "mm")

    # ---- printing --------------------------------------------------------------------------
    def __repr__(self):
        from .printing import sparse_repr
        return sparse_repr(self)

    __str__ = __repr__

    def __format__(self, spec):
        return object.__format__(self, spec)

    def __reduce_ex__(self, protocol):
        raise NotImplementedError("microtorch cannot save or pickle sparse tensors yet; save s.to_dense(), or "
                                  "s.coalesce().indices() and .values() and rebuild with sparse_coo_tensor")

    def __deepcopy__(self, memo):
        if self.grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                               "protocol at the moment")
        sa = self._data
        return SparseTensor._make(SparseArray(sa.indices.copy(), sa.values.copy(), sa.shape, sa.coalesced),
                                  self._requires_grad)


SparseTensor.__name__ = SparseTensor.__qualname__ = "Tensor"  # (type(s) prints <class 'microtorch.Tensor'>, as
# torch's sparse tensors are Tensors)


def _wrap_dim(d, n, op):
    if not -n <= d < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d}) "
                         f"({op} of a {n}-d sparse tensor)")
    return d % n


def _need_coalesced(s, what):
    if not s._data.coalesced:
        raise RuntimeError(f"Cannot get {what} on an uncoalesced tensor, please call .coalesce() first")


def _two_sparse_dims(s, op):
    if s._data.sparse_dim != 2 or s._data.ndim != 2:
        raise RuntimeError(f"{op}() expects a tensor with <= 2 sparse and 0 dense dimensions, but got "
                           f"{s._data.sparse_dim} sparse and {s.dense_dim()} dense dimensions")


def _add(s, other, alpha, op, name):
    if not isinstance(other, SparseTensor):
        raise RuntimeError(f"{name}(sparse, dense) is not supported. Use {name}(dense, sparse) instead. (microtorch:"
                           f" that is not supported either; compute with s.to_dense())")
    if tuple(s.shape) != tuple(other.shape):
        raise RuntimeError(f"{name}: expected 'self' and 'other' to have same size, but self has size "
                           f"{list(s.shape)} while other has size {list(other.shape)} (operands of {name} "
                           "should have same dimensionality and size)")
    if s._data.sparse_dim != other._data.sparse_dim:
        raise unsupported(f"{name} of sparse tensors with different sparse dims")
    if s.dtype is not other.dtype:
        other = other.to(s.dtype)
    return op.apply(s, other, alpha)


# Tensor's methods that hold for a sparse tensor as they are (metadata and autograd), or that it defines
_KEPT = frozenset("""dtype shape size dim ndim ndimension numel nelement device is_meta is_cuda requires_grad
requires_grad_ is_leaf grad grad_fn backward register_hook retain_grad retains_grad element_size itemsize
is_floating_point is_complex output_nr to float double half long int bool cfloat cdouble is_signed
register_post_accumulate_grad_hook detach_ is_inference""".split())
_DUNDERS = ("__getitem__", "__setitem__", "__iter__", "__bool__", "__float__", "__int__", "__index__", "__eq__",
            "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__pow__", "__rpow__", "__rsub__", "__rtruediv__",
            "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__abs__", "__invert__", "__and__", "__or__",
            "__xor__", "__iadd__", "__isub__", "__imul__", "__itruediv__", "__array__", "__pos__", "__complex__",
            "__contains__", "__reversed__", "__lshift__", "__rshift__", "__rand__", "__ror__", "__rxor__")
_RUNTIME = {"reshape": "reshape is not implemented for sparse tensors",
            "data_ptr": "Cannot access data pointer of Tensor that doesn't have storage",
            "tolist": "Cannot access data pointer of Tensor that doesn't have storage",
            "nbytes": "nbytes is not defined for sparse tensors.  If you want the size of the constituent tensors, "
                      "add the nbytes of the indices and values.  If you want the size of the  equivalent dense "
                      "tensor, multiply numel() by element_size()"}


def _refusal(name):
    def refused(self, *args, **kwargs):
        if name in _RUNTIME:
            raise RuntimeError(_RUNTIME[name] + f" ({name} of a sparse tensor: convert with .to_dense() first)")
        if name == "__array__":
            raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() first.")
        raise unsupported(name.strip("_"))
    refused.__name__ = name
    return refused


def install_refusals():
    """Every Tensor method and property a sparse tensor does not define or keep refuses (run after all of
    Tensor's methods are installed: the ops' and the namespace's)."""
    own = set(SparseTensor.__dict__)
    for name in [n for n in dir(Tensor) if not n.startswith("_")] + list(_DUNDERS):
        if name in own or name in _KEPT or not hasattr(Tensor, name):
            continue
        attr = inspect.getattr_static(Tensor, name)
        if isinstance(attr, property):
            setattr(SparseTensor, name, property(_refusal(name)))
        elif callable(attr) or isinstance(attr, (staticmethod, classmethod)):
            setattr(SparseTensor, name, _refusal(name))
    SparseTensor.__hash__ = Tensor.__hash__  # (defining __eq__ would drop it: tensors hash by identity)
