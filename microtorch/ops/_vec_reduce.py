"""torch's vec::reduce_all and vec::map2_reduce_all (ATen/cpu/vec/functional_base.h) on 32-byte vectors (its AVX2
kernels: 4 doubles, 8 floats), row by row, bit for bit: the first vector, then one whole vector added at a time,
the partial last vector added into the first lanes, then the lanes folded (doubles in order; floats by AVX2's
shuffles: lane i with i + 4, then i + 2, then i + 1); a row shorter than a vector is added in order. Where the map
is a product, the compiled kernels (layer_norm's and batch_norm's backward, measured against torch 2.13) fuse it
into the partial vector's addition, not into the loop's."""
import numpy as np

from .._fma import fma32_quiet, fma64

_VECTOR_BYTES = 32


def fused(a, b, c):
    """a*b + c rounded once (float32 or float64 arrays; the caller keeps numpy quiet)"""
    return fma32_quiet(a, b, c) if np.result_type(a, b, c) == np.float32 else fma64(a, b, c)


def lane_sum(values, u=None, v=None, factor=None):
    """The reduce_all of each row of the 2-d `values`; when values = u*v (or u*v*factor), the partial last vector
    adds u*v (or (u*v)*factor) with one multiply-add."""
    rows, n = values.shape
    lanes = _VECTOR_BYTES // values.itemsize
    if n < lanes:
        return _in_order(values)
    acc = values[:, :lanes].copy()
    whole = n - n % lanes
    for d in range(lanes, whole, lanes):
        acc = acc + values[:, d:d + lanes]
    if whole < n:
        k = n - whole
        if u is None:
            acc[:, :k] = acc[:, :k] + values[:, whole:]
        elif factor is None:
            acc[:, :k] = fused(u[:, whole:], v[:, whole:], acc[:, :k])
        else:
            acc[:, :k] = fused(u[:, whole:] * v[:, whole:], factor[:, whole:], acc[:, :k])
    return _folded(acc)


def _in_order(values):
    out = values[:, 0]
    for i in range(1, values.shape[1]):
        out = out + values[:, i]
    return out


def _folded(acc):
    if acc.dtype == np.float64:
        return _in_order(acc)
    halves = acc[:, :4] + acc[:, 4:]
    quarters = halves[:, :2] + halves[:, 2:]
    return quarters[:, 0] + quarters[:, 1]
