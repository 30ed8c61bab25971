"""layer_norm's gradients as torch's CPU kernel computes them (layer_norm_backward_frame), bit for bit, for float32
and float64 when nothing records them (a backward without create_graph).

Per row, with a = rstd: ds = sum(dy x gamma) and db = sum(dy gamma) over the lanes of a 32-byte vector (the first
vector's products, then one vector added at a time, the last partial vector with one multiply-add, the lanes folded as
torch's vec_reduce_all folds them); b = (db mean - ds) a^3 / N and c = -b mean - db a / N; dx = b x + a dy gamma + c.
dgamma and dbeta are summed row by row into one buffer per thread (at::parallel_for's split of the rows), the buffers
added last. Which steps are fused multiply-adds is the compiled code's (measured against torch 2.13: the loop's sums
are not, the partial vector's is)."""
import numpy as np

from .._fma import fma32_quiet, fma64
from ._range_kernels import _thread_chunks

_VECTOR_BYTES = 32


def applies(*arrays):
    return all(a is None or type(a) is np.ndarray and a.dtype in (np.float32, np.float64) for a in arrays)


def layer_norm_backward(dy, x, mean, rstd, gamma, need):
    """(dx, dgamma, dbeta) for the (M, N) arrays dy and x, the (M,) mean and rstd and the (N,) gamma (or None);
    need: which of the three to compute (None for the others)."""
    with np.errstate(all="ignore"):
        dx = _dx(dy, x, mean, rstd, gamma) if need[0] else None
        dgamma, dbeta = _dgamma_dbeta(dy, x, mean, rstd, need[1], need[2])
    return dx, dgamma, dbeta


def _fma(a, b, c):
    return fma32_quiet(a, b, c) if np.result_type(a, b, c) == np.float32 else fma64(a, b, c)


def _dx(dy, x, mean, rstd, gamma):
    dt = x.dtype.type
    g = np.broadcast_to(gamma, dy.shape) if gamma is not None else None
    ds = _lane_sum(dy * x, g, dy, x)
    db = _lane_sum(dy * g, None, dy, g) if g is not None else _lane_sum(dy, None, None, None)
    scale = dt(1) / dt(x.shape[1])
    a = rstd
    b = _fma(db, mean, -ds) * a * a * a * scale
    c = _fma(-b, mean, -(db * a * scale))
    a_dy = a[:, None] * dy if g is None else (a[:, None] * dy) * g
    return _fma(b[:, None], x, a_dy) + c[:, None]


def _lane_sum(mapped, factor, u, v):
    """map-reduce of each row of `mapped` (u*v, or u*v*factor when factor is given) as vec::map*_reduce_all: the
    first vector, then + each whole vector, the partial last one fused (u*v*factor or u*v as one multiply-add
    into the lanes); then the lanes folded. A row shorter than a vector is added in order."""
    values = mapped * factor if factor is not None else mapped
    rows, n = values.shape
    lanes = _VECTOR_BYTES // values.itemsize
    if n < lanes:
        return _fold_in_order(values)
    acc = values[:, :lanes].copy()
    whole = n - n % lanes
    for d in range(lanes, whole, lanes):
        acc = acc + values[:, d:d + lanes]
    if whole < n:
        k = n - whole
        if u is None:  # (a plain sum: nothing to fuse)
            acc[:, :k] = acc[:, :k] + values[:, whole:]
        elif factor is None:
            acc[:, :k] = _fma(u[:, whole:], v[:, whole:], acc[:, :k])
        else:
            acc[:, :k] = _fma(mapped[:, whole:], factor[:, whole:], acc[:, :k])
    return _fold_lanes(acc)


def _fold_in_order(values):
    out = values[:, 0]
    for i in range(1, values.shape[1]):
        out = out + values[:, i]
    return out


def _fold_lanes(acc):
    """vec_reduce_all: doubles lane by lane in order; floats (AVX2's shuffles) lane i with i + 4, then with i + 2,
    then with i + 1"""
    if acc.dtype == np.float64:
        return _fold_in_order(acc)
    halves = acc[:, :4] + acc[:, 4:]
    quarters = halves[:, :2] + halves[:, 2:]
    return quarters[:, 0] + quarters[:, 1]


def _dgamma_dbeta(dy, x, mean, rstd, need_gamma, need_beta):
    """sums over the rows of dy (a x - a mean) (one multiply-add a row, after a x - a mean's own) and of dy"""
    dgamma = dbeta = None
    if need_gamma:
        inner = _fma(rstd[:, None], x, (-rstd * mean)[:, None])
        dgamma = _by_threads(lambda acc, rows: _fma(rows[0], rows[1], acc), dy, inner)
    if need_beta:
        dbeta = _by_threads(lambda acc, rows: acc + rows[0], dy)
    return dgamma, dbeta


def _by_threads(step, *arrays):
    """torch's two passes: each thread's rows (at::parallel_for's split) added into its own zeroed buffer one row at
    a time, then the buffers added from 0. The threads run in lockstep here, one numpy call for all of them (a short
    last share is padded with zero rows, which change no sum: a buffer never holds -0.0)."""
    rows, n = arrays[0].shape
    chunks = _thread_chunks(rows, 1)
    length = chunks[0][1] - chunks[0][0]
    padded = [np.concatenate([a, np.zeros((len(chunks) * length - rows, n), a.dtype)]).reshape(len(chunks), length, n)
              for a in arrays]
    acc = np.zeros((len(chunks), n), arrays[0].dtype)
    for j in range(length):
        acc = step(acc, [a[:, j] for a in padded])
    total = np.zeros(n, acc.dtype)
    for part in acc:
        total = total + part
    return total
