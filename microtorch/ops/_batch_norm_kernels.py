"""float32 batch normalization as torch's CPU kernel computes it for a contiguous input, so that a CNN's activations,
saved statistics and running statistics are torch's to the bit.

Per channel, torch adds the inputs one after another in double (its accumulate type) and rounds the mean to float32;
then the squares of x - mean (each rounded to float32) the same way, rounded to float32 as var_sum (an (N, C) input:
each thread's rows in float32 registers, the threads' sums in double); the saved invstd is 1 / sqrt(var_sum / n +
eps), the division in float32, the rest in double; the running statistics move in float32. The output is x * alpha + beta with alpha = invstd * weight and beta = bias
- mean * alpha per channel, both multiply-adds fused. (Facts from ATen's batch_norm_kernel.cpp, checked against torch
2.13 in tests/test_batch_norm_bits.py.)

In training, backward (when nothing records it) is the kernel's too: per channel the sum of dy and of (x - mean) dy,
each image plane's reduced in float32 vector lanes (_vec_reduce.py), the planes added in double; then dx, dweight and
dbias from them (training_backward; tests/test_round14_norm_bits.py).
"""
import numpy as np

from .._fma import fma32
from ._range_kernels import _thread_chunks
from ._vec_reduce import lane_sum

F32 = np.float32


def applies(x):
    """torch's contiguous float32 kernel: an (N, C, ...) float32 array in C order."""
    return x.dtype == F32 and x.ndim >= 2 and x.flags.c_contiguous and x.size > 0


def batch_statistics(x):
    """(mean, var_sum) per channel, float32, summed in torch's order (see the module's docstring)"""
    if x.size == x.shape[0] * x.shape[1]:  # (N, C): torch's channels-last kernel
        return _row_statistics(x.reshape(x.shape[0], x.shape[1]))
    by_channel = np.moveaxis(x, 1, 0).reshape(x.shape[1], -1)  # (each channel's values in memory order)
    n = by_channel.shape[1]
    mean = (_running_sum(by_channel) / n).astype(F32)
    deviation = by_channel - mean[:, None]
    return mean, _running_sum(deviation * deviation).astype(F32)


def _running_sum(rows):
    """each row added one term after another in double (np.cumsum is sequential), the last partial sum"""
    return np.cumsum(rows, axis=1, dtype=np.float64)[:, -1]


def _row_statistics(x):
    """(mean, var_sum) of an (N, C) input as torch's channels-last kernel adds them: each thread's rows into float32
    registers one row after another (the squares fused), the threads' registers then added in double"""
    shares = [x[begin:end] for begin, end in _thread_chunks(x.shape[0], 1)]
    total = sum(np.cumsum(part, axis=0)[-1].astype(np.float64) for part in shares)
    mean = (total / x.shape[0]).astype(F32)
    var_sum = np.float64(0)
    for part in shares:
        acc = np.zeros(x.shape[1], F32)
        for row in part - mean:
            acc = fma32(row, row, acc)
        var_sum = var_sum + acc.astype(np.float64)
    return mean, np.asarray(var_sum, np.float64).astype(F32)


def inverse_std(var_sum, n, eps):
    """torch's saved invstd: the variance var_sum / n in float32, then 1 / sqrt(variance + eps) in double, rounded"""
    return (1 / np.sqrt((var_sum / F32(n)).astype(np.float64) + eps)).astype(F32)


def update_running(running_mean, running_var, mean, var_sum, count, momentum):
    """momentum * batch + (1 - momentum) * running in float32, the variance's unbiased (var_sum / (count - 1)) and
    its multiply-add fused (as measured beside torch), in place"""
    m = F32(momentum)
    rest = F32(1) - m  # (1 - momentum in float32, as torch: 1/3 gives another rest than F32(2/3))
    running_mean[...] = m * mean + rest * running_mean
    running_var[...] = fma32(m, var_sum / F32(count - 1), rest * running_var)


def normalized(x, mean, invstd, weight, bias):
    """x * alpha + beta per channel: alpha = invstd * weight, beta = bias - mean * alpha, both multiply-adds fused"""
    alpha = invstd * weight if weight is not None else invstd
    beta = fma32(-mean, alpha, bias if bias is not None else F32(0))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return fma32(x, alpha.reshape(shape), beta.reshape(shape))


def training_backward(x, dy, mean, invstd, weight, need):
    """(dx, dweight, dbias) of a training-mode batch_norm of the float32 (N, C, ...) array x, as torch's kernel
    computes them: per channel sum(dy) and dotp = sum((x - mean) dy), each image plane's by vec::reduce_all in float32
    and the planes added in double; k = dotp invstd^2 / n and grad_mean = sum / n; dx = (dy - grad_mean - (x - mean) k)
    invstd w, the subtraction of the product fused; dweight = dotp invstd, dbias = sum. An (N, C) input takes the
    channels-last kernel (_training_backward_rows)."""
    n_batch, c = x.shape[:2]
    if x.size == n_batch * c:  # (N, C) or (N, C, 1, ...): the rows kernel, dx given back in x's shape
        dx, dw, db = _training_backward_rows(x.reshape(n_batch, c), dy.reshape(n_batch, c), mean, invstd, weight, need)
        return (None if dx is None else dx.reshape(x.shape)), dw, db
    planes, centered = dy.reshape(n_batch * c, -1), (x - mean.reshape((1, -1) + (1,) * (x.ndim - 2)))
    cx = centered.reshape(n_batch * c, -1)
    with np.errstate(all="ignore"):
        total = _planes_added(lane_sum(planes).reshape(n_batch, c))
        dotp = _planes_added(lane_sum(cx * planes, cx, planes).reshape(n_batch, c))
    count = x.size // c
    dx = None
    if need[0]:
        k = dotp.astype(F32) * invstd * invstd / F32(count)
        grad_mean = (total / count).astype(F32)
        shape = (1, -1) + (1,) * (x.ndim - 2)
        w = weight if weight is not None else np.ones(c, F32)
        dx = fma32(-centered, np.broadcast_to(k.reshape(shape), x.shape), dy - grad_mean.reshape(shape))
        dx = dx * invstd.reshape(shape) * w.reshape(shape)
    return dx, (dotp * invstd).astype(F32) if need[1] else None, total.astype(F32) if need[2] else None


def _planes_added(sums):
    """(N, C) float32 plane sums added over N in double, one after another from 0 (cumsum is sequential; + 0.0:
    torch's 0 + -0.0 is +0.0)"""
    return np.cumsum(sums, axis=0, dtype=np.float64)[-1] + 0.0


def _training_backward_rows(x, dy, mean, invstd, weight, need):
    """The channels-last kernel on (N, C): each thread's rows into float32 buffers (sum += dy, dotp += (x - mean) dy
    fused), the buffers added in double and kept in float32; then per element, in float32, k = dotp invstd^2 / N,
    grad_mean = sum / N, dx = (dy - grad_mean - (x - mean) k) invstd w, the product's subtraction fused in the whole
    vectors of 8 channels and not in the partial last one (as measured); dweight = dotp invstd."""
    rows, c = x.shape
    sums, dotps = np.float64(0), np.float64(0)
    with np.errstate(all="ignore"):
        for begin, end in _thread_chunks(rows, 1):
            s, d = np.zeros(c, F32), np.zeros(c, F32)
            for i in range(begin, end):
                s = s + dy[i]
                d = fma32(x[i] - mean, dy[i], d)
            sums, dotps = sums + s.astype(np.float64), dotps + d.astype(np.float64)
    total, dotp = np.asarray(sums, F32), np.asarray(dotps, F32)
    dx = None
    if need[0]:
        k = dotp * invstd * invstd / F32(rows)
        w = weight if weight is not None else np.ones(c, F32)
        grad_mean, centered = total / F32(rows), x - mean
        dx = ((dy - grad_mean) - centered * k) * invstd * w  # (the partial vector's: two roundings)
        whole = c - c % 8
        dx[:, :whole] = fma32(-centered[:, :whole], np.broadcast_to(k[:whole], (rows, whole)),
                              dy[:, :whole] - grad_mean[:whole]) * invstd[:whole] * w[:whole]
    return dx, dotp * invstd if need[1] else None, total if need[2] else None
