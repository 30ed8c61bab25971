"""layer_norm's gradients as torch's CPU kernel computes them (layer_norm_backward_frame), bit for bit, for float32
and float64 when nothing records them (a backward without create_graph).

Per row, with a = rstd: ds = sum(dy x gamma) and db = sum(dy gamma) as vec::map2_reduce_all adds them
(_vec_reduce.py); b = (db mean - ds) a^3 / N and c = -b mean - db a / N; dx = b x + a dy gamma + c.
dgamma and dbeta are summed row by row into one buffer per thread (at::parallel_for's split of the rows), the buffers
added last. Which steps are fused multiply-adds is the compiled code's (measured against torch 2.13: the loop's sums
are not, the partial vector's is)."""
import numpy as np

from ._range_kernels import _thread_chunks
from ._vec_reduce import fused, lane_sum


def applies(dy, x, gamma):
    """float32 or float64 numpy arrays, not empty (an empty row takes the formula: nothing to sum)"""
    return x.size > 0 and all(a is None or type(a) is np.ndarray and a.dtype in (np.float32, np.float64)
                              for a in (dy, x, gamma))


def layer_norm_backward(dy, x, mean, rstd, gamma, need):
    """(dx, dgamma, dbeta) for the (M, N) arrays dy and x, the (M,) mean and rstd and the (N,) gamma (or None);
    need: which of the three to compute (None for the others)."""
    with np.errstate(all="ignore"):
        dx = _dx(dy, x, mean, rstd, gamma) if need[0] else None
        dgamma, dbeta = _dgamma_dbeta(dy, x, mean, rstd, need[1], need[2])
    return dx, dgamma, dbeta


def _dx(dy, x, mean, rstd, gamma):
    dt = x.dtype.type
    g = np.broadcast_to(gamma, dy.shape) if gamma is not None else None
    ds = lane_sum(dy * x * g, dy, x, g) if g is not None else lane_sum(dy * x, dy, x)
    db = lane_sum(dy * g, dy, g) if g is not None else lane_sum(dy)
    scale = dt(1) / dt(x.shape[1])
    a = rstd
    b = fused(db, mean, -ds) * a * a * a * scale
    c = fused(-b, mean, -(db * a * scale))
    a_dy = a[:, None] * dy if g is None else (a[:, None] * dy) * g
    return fused(b[:, None], x, a_dy) + c[:, None]


def _dgamma_dbeta(dy, x, mean, rstd, need_gamma, need_beta):
    """sums over the rows of dy (a x - a mean) (one multiply-add a row, after a x - a mean's own) and of dy"""
    dgamma = dbeta = None
    if need_gamma:
        inner = fused(rstd[:, None], x, (-rstd * mean)[:, None])
        dgamma = _by_threads(lambda acc, rows: fused(rows[0], rows[1], acc), dy, inner)
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
