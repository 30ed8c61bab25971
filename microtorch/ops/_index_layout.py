"""The memory layout torch gives x[indices] (advanced indexing: integer or boolean tensors among the indices).

torch's index kernel is a TensorIterator over two kinds of operands: x restrided (the indexed dims replaced by the
indices' broadcast shape, with stride 0) and each index reshaped to the result's rank. The result is laid out by
their strides (ops/_layout.py): where it keeps x's dims it follows x's order, so `x.t()[:, idx]` is transposed as
torch's is; over the index's dims it follows the index's. numpy's result is in C order. Indices that are not next
to each other move to the front, with their dims, as in both libraries; a boolean mask over k dims stands for the
k columns of its nonzero() (each a vector of stride k).
"""
import numpy as np

from ._layout import sorted_by


def index_like_torch(out, x, key):
    """out (numpy's x[key], key the tensor indices at their dims with full slices between) laid out as torch's."""
    if type(out) is not np.ndarray or out.ndim < 2 or out.size < 2 or type(x) is not np.ndarray:
        return out
    per_dim = _indices_by_dim(key if isinstance(key, tuple) else (key,), x.ndim)
    if per_dim is None:
        return out
    dims = list(range(x.ndim))
    indexed = [d for d in dims if per_dim[d] is not None]
    if indexed[-1] - indexed[0] + 1 != len(indexed):  # not adjacent: torch transposes them to the front
        dims = indexed + [d for d in dims if per_dim[d] is None]
    shape = np.broadcast_shapes(*(per_dim[d].shape for d in indexed))
    before = dims.index(indexed[0])
    after = x.ndim - before - len(indexed)
    steps = [s // x.itemsize for s in x.strides]
    src = [steps[d] for d in dims[:before]] + [0] * len(shape) + [steps[d] for d in dims[before + len(indexed):]]
    operands = [src]
    for d in indexed:
        idx_shape, idx_strides = _expanded(per_dim[d], shape)
        view = (1,) * before + shape + (1,) * after
        strides = _view_strides(idx_shape, idx_strides, view)
        operands.append([0 if n == 1 and m != 1 else s for n, m, s in zip(view, out.shape, strides)])
    kept = [x.shape[d] for d in dims]
    if tuple(kept[:before]) + shape + tuple(kept[before + len(indexed):]) != out.shape:
        return out
    return sorted_by(out, operands)


def _indices_by_dim(key, ndim):
    """x's dims -> the integer index array at that dim, or None for a full slice (a mask: its nonzero columns)."""
    per_dim = []
    for k in key:
        if isinstance(k, slice):
            per_dim.append(None)
        elif type(k) is np.ndarray and k.dtype == bool:
            if k.ndim == 0:
                return None  # (x[True]: a new dim, as numpy's)
            nonzero = np.stack(np.nonzero(k), axis=1)
            per_dim += [nonzero[:, j] for j in range(k.ndim)]
        elif type(k) is np.ndarray:
            per_dim.append(k)
        else:
            return None  # (vmap's batched indices: as numpy lays them out)
    per_dim += [None] * (ndim - len(per_dim))
    return per_dim if len(per_dim) == ndim and any(a is not None for a in per_dim) else None


def _expanded(a, shape):
    """torch's expand of the index a to the indices' broadcast shape: (shape, strides in elements). A new leading
    dim of size 1 gets the stride it would have in C order, a broadcast one 0."""
    sizes, strides = list(a.shape), [s // a.itemsize for s in a.strides]
    if tuple(sizes) == tuple(shape):
        return sizes, strides
    out_sizes, out_strides = [0] * len(shape), [0] * len(shape)
    for i in range(len(shape) - 1, -1, -1):
        d = i - (len(shape) - len(sizes))
        size = sizes[d] if d >= 0 else 1
        stride = strides[d] if d >= 0 else out_sizes[i + 1] * out_strides[i + 1] if i + 1 < len(shape) else 1
        if size != shape[i]:
            size, stride = shape[i], 0
        out_sizes[i], out_strides[i] = size, stride
    return out_sizes, out_strides


def _view_strides(sizes, strides, new_shape):
    """torch's view of (sizes, strides) as new_shape (only size-1 dims added), by its computeStride: the strides
    of the dims it keeps, and for each size-1 dim the extent of the chunk of memory it follows."""
    if not sizes:
        return [1] * len(new_shape)
    out, view_d = [0] * len(new_shape), len(new_shape) - 1
    base, numel, view_numel = strides[-1], 1, 1
    for d in range(len(sizes) - 1, -1, -1):
        numel *= sizes[d]
        if d == 0 or sizes[d - 1] != 1 and strides[d - 1] != numel * base:
            while view_d >= 0 and (view_numel < numel or new_shape[view_d] == 1):
                out[view_d] = view_numel * base
                view_numel *= new_shape[view_d]
                view_d -= 1
            if d > 0:
                base, numel, view_numel = strides[d - 1], 1, 1
    return out
