"""The numpy computations behind sparse COO tensors: coalescing, densifying, gathering at indices, and the
sparse-times-dense product. Each takes and returns SparseArrays or ndarrays."""
import numpy as np

from ._array import SparseArray


def linear_index(indices, sparse_shape):
    """Each entry's position in the sparse dims read in C order (the key coalesce sorts by)."""
    if indices.shape[0] == 0:
        return np.zeros(indices.shape[1], np.int64)
    return np.ravel_multi_index(tuple(indices), sparse_shape) if indices.size else np.zeros(0, np.int64)


def coalesce(sa):
    """Duplicates summed (in the order they were given), indices sorted: torch's coalesce."""
    if sa.coalesced:
        return sa
    sparse_shape = sa.shape[:sa.sparse_dim]
    if sa.nnz == 0:
        return SparseArray(sa.indices, sa.values, sa.shape, True)
    key = linear_index(sa.indices, sparse_shape)
    order = np.argsort(key, kind="stable")
    key = key[order]
    starts = np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1])))
    values = np.add.reduceat(sa.values[order], starts, axis=0).astype(sa.values.dtype, copy=False)
    indices = np.stack(np.unravel_index(key[starts], sparse_shape)).astype(np.int64).reshape(len(sparse_shape), -1)
    return SparseArray(indices, values, sa.shape, True)


def to_dense(sa):
    out = np.zeros(sa.shape, sa.values.dtype)
    if sa.nnz:
        np.add.at(out, tuple(sa.indices), sa.values)
    return out


def gather(dense, indices):
    """dense's entries (rows, for dense dims) at each index column, duplicates each getting theirs."""
    return np.ascontiguousarray(dense[tuple(indices)])


def mask_of(grad, pattern):
    """The gradient (a dense array or a SparseArray) gathered at the index columns of pattern: a SparseArray with
    pattern's indices (torch's sparse_mask: what a sparse input's gradient is)."""
    dense = to_dense(grad) if isinstance(grad, SparseArray) else np.broadcast_to(grad, pattern.shape)
    return SparseArray(pattern.indices, gather(dense, pattern.indices), pattern.shape, False)


def values_at(grad, indices, values_shape):
    """The gradient of a constructor's values: grad's entries at each of the given index columns."""
    if isinstance(grad, SparseArray):
        grad = _sparse_gather(grad, indices)
        return grad.reshape(values_shape)
    return gather(np.broadcast_to(grad, grad.shape), indices).reshape(values_shape)


def _sparse_gather(grad, indices):
    """grad (sparse) read at the index columns, without densifying: coalesce it, then look each column up."""
    g = coalesce(grad)
    sparse_shape = g.shape[:g.sparse_dim]
    out = np.zeros((indices.shape[1],) + g.values.shape[1:], g.values.dtype)
    if g.nnz == 0 or indices.shape[1] == 0:
        return out
    have, want = linear_index(g.indices, sparse_shape), linear_index(indices, sparse_shape)
    at = np.minimum(np.searchsorted(have, want), len(have) - 1)
    found = have[at] == want
    out[found] = g.values[at[found]]
    return out


def spmm(sa, dense):
    """sparse (n, k) @ dense (k, p): each entry's value times its column's row of dense, added into its row."""
    rows, cols = sa.indices
    out = np.zeros((sa.shape[0], dense.shape[1]), np.result_type(sa.values.dtype, dense.dtype))
    if sa.nnz:
        np.add.at(out, rows, sa.values[:, None] * dense[cols])
    return out


def transposed(sa, d0, d1):
    """The sparse array with sparse dims d0 and d1 swapped (its index rows swapped; no longer sorted)."""
    order = list(range(sa.ndim))
    order[d0], order[d1] = d1, d0
    indices = sa.indices[[d1 if i == d0 else d0 if i == d1 else i for i in range(sa.sparse_dim)]]
    return SparseArray(indices, sa.values, tuple(sa.shape[i] for i in order), sa.nnz < 2)


def add(a, b, alpha=1):
    """a + alpha b, both of one shape, as torch adds them: one walk along both lists of entries, taking the smaller
    index first and summing equal ones (coalesced lists give their sorted union; others keep torch's order)."""
    values = (b.values if alpha == 1 else b.values * alpha).astype(a.values.dtype, copy=False)
    if b.nnz == 0 or a.nnz == 0:
        kept = (a.indices, a.values) if b.nnz == 0 else (b.indices, values)
        return SparseArray(kept[0].copy(), kept[1].copy(), a.shape, a.coalesced and b.coalesced)
    from_a, from_b = _merge_walk(linear_index(a.indices, a.shape[:a.sparse_dim]).tolist(),
                                 linear_index(b.indices, b.shape[:b.sparse_dim]).tolist())
    take_a, take_b = from_a >= 0, from_b >= 0
    out_values = np.zeros((len(from_a),) + a.values.shape[1:], a.values.dtype)
    out_values[take_a] += a.values[from_a[take_a]]
    out_values[take_b] += values[from_b[take_b]]
    indices = np.where(take_a, a.indices[:, np.maximum(from_a, 0)], b.indices[:, np.maximum(from_b, 0)])
    return SparseArray(indices, out_values, a.shape, a.coalesced and b.coalesced)


def _merge_walk(ka, kb):
    """For each entry of the sum: the position of its a entry and of its b entry (-1: none)."""
    i = j = 0
    from_a, from_b = [], []
    while i < len(ka) or j < len(kb):
        if j >= len(kb) or i < len(ka) and ka[i] < kb[j]:
            from_a.append(i), from_b.append(-1)
            i += 1
        elif i >= len(ka) or kb[j] < ka[i]:
            from_a.append(-1), from_b.append(j)
            j += 1
        else:
            from_a.append(i), from_b.append(j)
            i, j = i + 1, j + 1
    return np.array(from_a, np.int64), np.array(from_b, np.int64)


def dense_to_sparse(x, sparse_dim):
    """The entries of x (rows of its last ndim - sparse_dim dims) that are not all zero, in C order."""
    sparse_shape = x.shape[:sparse_dim]
    flat = x.reshape((int(np.prod(sparse_shape, dtype=np.int64)),) + x.shape[sparse_dim:])
    keep = np.flatnonzero(flat.reshape(flat.shape[0], -1).any(axis=1)) if flat.size else np.zeros(0, np.int64)
    indices = np.stack(np.unravel_index(keep, sparse_shape)).astype(np.int64).reshape(sparse_dim, -1)
    return SparseArray(indices, np.ascontiguousarray(flat[keep]), x.shape, True)
