"""Sparse COO tensors and the torch.sparse namespace: what graph-network teaching code uses.

`sparse_coo_tensor(indices, values, size)` (and the legacy `sparse.FloatTensor(indices, values, size)`) builds a
SparseTensor; `dense.to_sparse()` makes one of a dense tensor. Products with a dense matrix (`sparse.mm`,
`sparse.addmm`, `torch.mm`, `torch.matmul`, `@`, `torch.spmm`) and `sparse.sum` are differentiable ops
(products.py), with torch's nodes. `install()` wires the few entry points into Tensor and the dense matmul.
"""
import warnings

import numpy as np

from .. import _dtype
from .._tensor import Tensor, tensor as as_tensor
from .._user_line import warn_once
from . import _kernels
from ._array import SparseArray, unsupported
from .ops import SparseCooTensor, ToSparse, ToSparseDim, wrap
from .products import SparseAddmm, SparseMm, SparseMv, SparseSum, SumAll, SumDim
from .tensor import SparseTensor, install_refusals

_INVARIANTS = ("Sparse invariant checks are implicitly disabled. Memory errors (e.g. SEGFAULT) will occur when "
               "operating on a sparse tensor which violates the invariants, but checks incur performance overhead. "
               "To silence this warning, explicitly opt in or out. See "
               "`torch.sparse.check_sparse_tensor_invariants.__doc__` for guidance.")


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False, requires_grad=False,
                      check_invariants=None, is_coalesced=None):
    idx = _index_array(indices)
    values = values if isinstance(values, Tensor) else as_tensor(values, dtype=dtype)
    if dtype is not None and values.dtype is not _dtype.to_dtype(dtype):
        values = values.to(dtype)
    if values._data.ndim == 0 or idx.shape[1] != values._data.shape[0]:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: {idx.shape[1]}, nnz "
                           f"from values: {values._data.shape[0] if values._data.ndim else 0} (sparse_coo_tensor: "
                           "one column of indices per row of values)")
    shape = _checked_size(idx, values._data, size)
    coalesced = idx.shape[1] < 2 if is_coalesced is None else bool(is_coalesced)
    if check_invariants is None:  # (after the arguments' checks, as torch's; microtorch checks the invariants always)
        warn_once("sparse_invariants", _INVARIANTS)
    if requires_grad:
        if not values.dtype.is_floating_point and not values.dtype.is_complex:
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        return SparseTensor._make(SparseArray(idx, values._data, shape, coalesced), True)
    return SparseCooTensor.apply(idx, values, shape, coalesced)


def _index_array(indices):
    idx = indices._data if isinstance(indices, Tensor) else np.asarray(indices)
    if idx.ndim != 2:
        raise RuntimeError(f"sparse_coo_tensor: indices must be a 2-D tensor of shape (sparse_dim, nnz), got shape "
                           f"{list(idx.shape)}; give one row per sparse dim (a 1-D index: indices.unsqueeze(0))")
    if idx.dtype.kind not in "iuf" and idx.size:
        raise RuntimeError(f"sparse_coo_tensor: indices must be an integer tensor, got {idx.dtype}")
    return idx if idx.dtype == np.int64 else idx.astype(np.int64)


def _checked_size(idx, values, size):
    sparse_dim, dense_shape = idx.shape[0], values.shape[1:]
    for d in range(sparse_dim):
        if idx.shape[1] and idx[d].min() < 0:
            raise RuntimeError(f"found negative index {idx[d].min()} for dim {d} (sparse_coo_tensor)")
    if size is None:
        most = idx.max(axis=1) + 1 if idx.shape[1] else np.zeros(sparse_dim, np.int64)
        return tuple(int(n) for n in most) + tuple(dense_shape)
    size = tuple(int(n) for n in size)
    if len(size) != sparse_dim + len(dense_shape):
        raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = {len(size)}, "
                           f"sparse_dim = {sparse_dim}, dense_dim = {len(dense_shape)} (sparse_coo_tensor: indices "
                           "have one row per sparse dim, values one dim per dense dim after nnz)")
    if size[sparse_dim:] != tuple(dense_shape):
        raise RuntimeError(f"sparse_coo_tensor: values have dense sizes {list(dense_shape)} but size says "
                           f"{list(size[sparse_dim:])}")
    for d in range(sparse_dim):
        if idx.shape[1] and idx[d].max() >= size[d]:
            raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is {size[d]} but found index "
                               f"{idx[d].max()}")
    return size


def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """dense.to_sparse(): the entries that are not zero (rows of the last dims with sparse_dim)"""
    if layout not in (None, _dtype.sparse_coo) or blocksize is not None or dense_dim is not None:
        raise unsupported(f"to_sparse(layout={layout})")
    n = self._data.ndim
    if sparse_dim is not None and (not isinstance(sparse_dim, (int, np.integer)) or isinstance(sparse_dim, bool)):
        raise TypeError(f"to_sparse(): argument 'sparse_dim' must be int, not {type(sparse_dim).__name__}")
    if n == 0:
        raise unsupported("to_sparse of a 0-d tensor")
    if sparse_dim is None:
        return ToSparse.apply(self, n)
    if n > 0 and sparse_dim == 0:
        raise RuntimeError("dense_to_sparse: sparse_dim argument must be in >0 when self.dim()>0")
    if not 0 <= sparse_dim <= n:
        raise RuntimeError(f"dense_to_sparse: sparse_dim argument must be in [0,{n}] range, but {sparse_dim} is given")
    return ToSparseDim.apply(self, sparse_dim)


def to_dense(self, dtype=None, *, masked_grad=None):
    if dtype is not None and not isinstance(dtype, _dtype.dtype):
        raise TypeError(f"to_dense(): argument 'dtype' (position 1) must be torch.dtype, not {type(dtype).__name__}")
    if getattr(self._data, "__vmap_batched__", False):  # (torch has no batching rule for it: its fallback warns)
        warnings.warn("There is a performance drop because we have not yet implemented the batching rule for "
                      "aten::to_dense: vmap runs it once per example.", UserWarning, stacklevel=2)
    return self if dtype is None else self.to(dtype)


# ---- products ------------------------------------------------------------------------------------
def _check_product(s, d, op):
    if not isinstance(d, Tensor):
        raise TypeError(f"{op}(): argument 'mat2' must be Tensor, not {type(d).__name__}")
    if s.dtype is not d.dtype:
        raise RuntimeError(f"expected scalar type {_name(s)} but found {_name(d)} ({op} of a sparse {s.dtype} and a "
                           f"dense {d.dtype} matrix: convert one, e.g. with .to({s.dtype}))")
    if s._data.ndim != 2 or s._data.sparse_dim != 2:
        raise unsupported(f"{op} of a {s._data.ndim}-d sparse tensor (a sparse matrix with 2 sparse dims is needed)")


def _name(t):
    return _dtype_names.get(t.dtype.name, t.dtype.name)


_dtype_names = {"float32": "Float", "float64": "Double", "int64": "Long", "int32": "Int", "float16": "Half"}


def _inner(s, d, left, op):
    """The inner sizes agree (s is the sparse operand, on the left or not)."""
    k_s, k_d = (s.shape[1], d.shape[0]) if left else (s.shape[0], d.shape[-1])
    if k_s != k_d:
        if left:
            raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {k_s}, got {k_d} ({op}: sparse "
                               f"{list(s.shape)} @ dense {list(d.shape)}; the inner sizes must agree)")
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({d.shape[0]}x{d.shape[1]} and "
                           f"{s.shape[0]}x{s.shape[1]}) ({op}: dense @ sparse)")


def mm_of(a, b, op):
    """a @ b with a sparse operand: torch.mm, matmul, spmm and @ (MmBackward0, MvBackward0 for a vector)."""
    if isinstance(a, SparseTensor) and isinstance(b, SparseTensor):
        raise unsupported(f"{op} of two sparse tensors")
    s, d, left = (a, b, True) if isinstance(a, SparseTensor) else (b, a, False)
    _check_product(s, d, op)
    if d._data.ndim == 1 and left:
        _inner(s, d.reshape(-1, 1), True, op)
        return SparseMv.apply(s, d)
    if d._data.ndim != 2:
        raise unsupported(f"{op} of a sparse matrix and a {d._data.ndim}-d dense tensor")
    _inner(s, d, left, op)
    return SparseMm.apply(a, b)


def matmul(a, b):
    return mm_of(a, b, "matmul")


def spmm(input, mat2):
    if not isinstance(input, Tensor):
        raise TypeError(f"spmm(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return mm_of(input, mat2, "spmm") if isinstance(input, SparseTensor) else input.mm(mat2)


def mm(mat1, mat2, reduce="sum"):
    """torch.sparse.mm: SparseAddmmBackward0 for sparse @ dense; dense @ sparse is (S^T @ D^T)^T, as torch's."""
    if reduce != "sum":
        raise unsupported(f"sparse.mm(reduce={reduce!r})")
    if isinstance(mat1, SparseTensor):
        return addmm(None, mat1, mat2, beta=0)
    if isinstance(mat2, SparseTensor):
        return mm(mat2.t(), mat1.t()).transpose(0, 1)
    return mat1.mm(mat2)


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """beta mat + alpha mat1 @ mat2, mat1 sparse (torch.sparse.addmm); mm passes no mat (a zero one, beta 0)"""
    if not isinstance(mat1, SparseTensor):
        raise RuntimeError("sparse.addmm: mat1 must be a sparse tensor (use torch.addmm for dense ones)")
    _check_product(mat1, mat2, "sparse.addmm" if mat is not None else "sparse.mm")
    if mat2._data.ndim != 2:
        raise RuntimeError(f"sparse.mm: mat2 must be a matrix, got a {mat2._data.ndim}-d tensor")
    _inner(mat1, mat2, True, "sparse.mm")
    if mat is None:
        mat = Tensor._make(np.zeros((), mat2._data.dtype))
    return SparseAddmm.apply(mat, mat1, mat2, beta, alpha)


def sum(input, dim=None, dtype=None, *, _method=False):
    """torch.sparse.sum: of all entries (a dense 0-d tensor), or over dims (sparse while a sparse dim is left)"""
    if not isinstance(input, SparseTensor):
        raise RuntimeError(f"coalesce expected sparse coordinate tensor layout but got Strided (torch.sparse.sum "
                           f"of a dense tensor: use {'input.sum()' if dim is None else 'input.sum(dim)'})")
    if dtype is not None:
        input = input.to(dtype)
    n = input._data.ndim
    dims = range(n) if dim is None else [dim] if isinstance(dim, (int, np.integer)) else list(dim)
    wrapped = []
    for d in dims:
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
        wrapped.append(d % n)
    op = SumAll if dim is None else SumDim if _method else SparseSum
    return op.apply(input, tuple(sorted(set(wrapped))))


# ---- legacy classes: torch.sparse.FloatTensor(indices, values, size) ----------------------------------
class _LegacySparseType(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, SparseTensor) and obj.dtype is cls.dtype

    def __call__(cls, *args, device=None):
        if args and isinstance(args[0], Tensor):
            warn_once("legacy_sparse", "torch.sparse.SparseTensor(indices, values, shape, *, device=) is deprecated."
                      "  Please use torch.sparse_coo_tensor(indices, values, shape, dtype=, device=).")
            return sparse_coo_tensor(*args, check_invariants=False)
        size = tuple(args) if args else (0,)
        empty = np.zeros((len(size), 0), np.int64)
        return SparseTensor._make(SparseArray(empty, np.zeros((0,), cls.dtype.np), size, True))


def _legacy(name, dt):
    return _LegacySparseType(name, (), {"__module__": "microtorch.sparse", "__qualname__": name, "dtype": dt,
                                        "is_sparse": True})


FloatTensor = _legacy("FloatTensor", _dtype.float32)
DoubleTensor = _legacy("DoubleTensor", _dtype.float64)
HalfTensor = _legacy("HalfTensor", _dtype.float16)
LongTensor = _legacy("LongTensor", _dtype.int64)
IntTensor = _legacy("IntTensor", _dtype.int32)


def install(namespace):
    """Tensor's to_sparse and to_dense, the dense matmul's way to sparse operands, and the refusals of every other
    Tensor method on a sparse tensor; then torch's names in the namespace."""
    from ..ops import linalg
    Tensor.to_sparse, Tensor.to_dense = to_sparse, to_dense
    linalg.sparse_product = mm_of
    install_refusals()
    namespace.update(sparse_coo_tensor=sparse_coo_tensor, spmm=spmm)
    for name, method in _ROUTED.items():
        namespace[name] = _routed(namespace[name], method)
    for name, fn in list(namespace.items()):
        if not name.startswith("_") and _takes_layout(fn):
            namespace[name] = _layout_checked(fn, name)


def _takes_layout(fn):
    import inspect
    try:
        return callable(fn) and not isinstance(fn, type) and "layout" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


# the factories whose sparse form torch makes: a sparse tensor of zeros (no entries); the others refuse it
_SPARSE_FACTORIES = {"zeros", "empty", "zeros_like", "empty_like"}


def _layout_checked(fn, name):
    """A factory that reads layout=: strided (the default) as it was, sparse_coo as torch's (zeros and empty give a
    sparse tensor without entries; the others refuse), anything else torch's TypeError."""
    import functools

    @functools.wraps(fn)
    def factory(*args, **kwargs):
        layout = kwargs.get("layout")
        if layout is None or layout is _dtype.strided:
            return fn(*args, **kwargs)
        if not isinstance(layout, _dtype.layout):
            raise TypeError(f"{name}(): argument 'layout' must be torch.layout, not {type(layout).__name__}")
        if name not in _SPARSE_FACTORIES:
            shown = "full" if name in ("ones", "ones_like", "full_like") else name  # (torch's ones is a full)
            raise RuntimeError(f"{shown}(...) is not implemented for sparse layout (microtorch makes sparse tensors of "
                               "zeros with zeros or empty, and others with sparse_coo_tensor or .to_sparse())")
        kwargs.pop("layout")
        requires_grad = kwargs.pop("requires_grad", False)
        dense = fn(*args, **kwargs)
        out = sparse_coo_tensor(np.zeros((dense.ndim, 0), np.int64), np.zeros((0,), dense._data.dtype),
                                tuple(dense.shape), check_invariants=False)
        return out.requires_grad_() if requires_grad else out
    return factory


# torch's functions whose sparse form is a SparseTensor method (torch.t(s) is s.t())
_ROUTED = {"t": "t", "transpose": "transpose", "neg": "neg", "negative": "neg", "add": "add", "sub": "sub",
           "subtract": "sub", "mul": "mul", "multiply": "mul", "div": "div", "divide": "div", "sum": "sum",
           "clone": "clone"}


def _routed(fn, method):
    """fn, sending a sparse first argument to its method (a dense one pays one type check)."""
    import functools

    @functools.wraps(fn)
    def routed(input, *args, **kwargs):
        if type(input) is SparseTensor:
            return getattr(input, method)(*args, **kwargs)
        try:
            return fn(input, *args, **kwargs)
        except TypeError as e:
            if e.__traceback__.tb_next is None:  # (Python's own check of the call's arguments: the caller's error)
                raise TypeError(str(e)) from None
            raise
    return routed


__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "SparseTensor", "addmm", "mm",
           "sparse_coo_tensor", "spmm", "sum", "wrap", "_kernels"]
