"""nll_loss's reduction as torch's CPU kernel computes it, so that a classifier's loss prints torch's last digit.

torch sums the picked log-probabilities one by one into the first of eight partial sums, and every 16th position
(16**j-th for the j-th) hands each partial sum up to the next, bottom to top; at the end it adds the eight from the
bottom up, and divides by the total weight for 'mean'. With class weights it subtracts x * w (rounded first) and
sums the weights the same way. (Facts from torch's aten/src/ATen/native/LossNLL.cpp and LossNLL2d.cpp, checked bit
for bit in tests/test_nll_bits.py.)
"""
import math

import numpy as np

LEVELS = 8


def _level_power(n):
    return max(4, math.ceil(math.log2(n)) // LEVELS if n > 1 else 0)


def cascade_nll(picked, kept, weights=None):
    """(loss sum, total weight) over positions in C order: picked[i] is logp at position i's target, kept[i] whether
    its target is not ignore_index, weights[i] its class weight (None: no weights)."""
    dtype = float if picked.dtype == np.float64 else picked.dtype.type  # (Python's float is IEEE double, and quicker)
    n = picked.size
    mask = (1 << _level_power(n)) - 1
    power = _level_power(n)
    loss, wsum = [dtype(0)] * LEVELS, [dtype(0)] * LEVELS
    values, keep = picked.reshape(-1).tolist(), kept.reshape(-1).tolist()
    ws = None if weights is None else weights.reshape(-1).tolist()
    for b in range(n):
        if not keep[b]:
            continue
        if ws is None:
            loss[0] = dtype(loss[0] - dtype(values[b]))
        else:
            loss[0] = dtype(loss[0] - dtype(dtype(values[b]) * dtype(ws[b])))
            wsum[0] = dtype(wsum[0] + dtype(ws[b]))
        for j in range(LEVELS - 1):
            if b & (mask << (j * power)):
                break
            loss[j + 1], loss[j] = dtype(loss[j + 1] + loss[j]), dtype(0)
            wsum[j + 1], wsum[j] = dtype(wsum[j + 1] + wsum[j]), dtype(0)
    total = dtype(sum(keep)) if ws is None else _accumulate(wsum, dtype)
    return picked.dtype.type(_accumulate(loss, dtype)), picked.dtype.type(total)


def _accumulate(parts, dtype):
    """std::accumulate from 0: the parts added bottom up, one after another"""
    acc = dtype(0)
    for p in parts:
        acc = dtype(acc + p)
    return acc
