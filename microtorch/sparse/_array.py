"""SparseArray: what a sparse COO tensor's `_data` holds in place of a numpy array.

It answers what every tensor is asked about its data (shape, ndim, size, dtype, itemsize), so that a
sparse tensor's metadata and autograd's checks work unchanged. Anything that would compute on it as on a
dense array (a numpy function, a ufunc, an ndarray method, indexing, arithmetic) raises torch's kind of
error instead of numpy's: an op microtorch has no sparse kernel for stops there, naming itself.
"""
import numpy as np

_NDARRAY_NAMES = frozenset(n for n in dir(np.ndarray) if not n.startswith("_"))
SUPPORTED = ("construction, coalesce, to_dense, t/transpose, to(dtype), + and - of sparse tensors, * and / by a "
             "number, neg, sum, and products with a dense matrix (mm, matmul, sparse.mm, sparse.addmm)")


def unsupported(op):
    """torch's error for an op with no sparse kernel, saying what microtorch's sparse tensors do support."""
    return NotImplementedError(
        f"Could not run '{op}' with arguments from the 'SparseCPU' backend: microtorch's sparse COO tensors "
        f"support {SUPPORTED}; convert with .to_dense() first")


class SparseArray:
    """COO storage: indices (sparse_dim, nnz) int64, values (nnz, *dense_shape), and the tensor's shape."""
    __slots__ = ("indices", "values", "shape", "coalesced")

    def __init__(self, indices, values, shape, coalesced=False):
        self.indices, self.values, self.shape, self.coalesced = indices, values, tuple(shape), coalesced

    @property
    def dtype(self):
        return self.values.dtype

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def itemsize(self):
        return self.values.itemsize

    @property
    def sparse_dim(self):
        return self.indices.shape[0]

    @property
    def nnz(self):
        return self.indices.shape[1]

    def with_values(self, values, coalesced=None):
        """The same indices with other values (the result of an op that maps values one to one)."""
        return SparseArray(self.indices, values, self.shape, self.coalesced if coalesced is None else coalesced)

    # ---- what dense code would do with it: refused as torch refuses ----------------------------
    def __getattr__(self, name):
        if name in _NDARRAY_NAMES:  # (an ndarray method or attribute: an op computing densely)
            raise unsupported(name)
        raise AttributeError(name)

    def __array__(self, *args, **kwargs):
        raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() first.")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        raise unsupported(ufunc.__name__)

    def __array_function__(self, func, types, args, kwargs):
        raise unsupported(func.__name__)

    def __getitem__(self, key):
        raise unsupported("index")


def _refuse(name):
    def refused(self, *args, **kwargs):
        raise unsupported(name.strip("_"))
    return refused


for _name in ("add", "radd", "sub", "rsub", "mul", "rmul", "truediv", "rtruediv", "floordiv", "pow", "matmul",
              "rmatmul", "neg", "abs", "lt", "le", "gt", "ge", "and", "or", "xor", "invert", "len", "iter",
              "float", "int", "index", "bool", "setitem"):
    setattr(SparseArray, f"__{_name}__", _refuse(_name))
