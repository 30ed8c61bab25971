"""Numerical derivatives: central differences one input element at a time (slow mode), or along
one random direction (fast mode)."""

import numpy as np

from .util import _Writable, _check_same


def _numerical(call, out_positions, eps):
    """Central differences, one input element at a time.

    Returns num[k][j] = (Jx, Jy) for output position out_positions[k] and diff input j:
    d out / dx and (complex inputs only) d out / dy, each (out.numel(), in.numel()), in the
    output's dtype (complex for complex outputs)."""
    result = [[None] * len(call.diff) for _ in out_positions]
    for j, (_, t) in enumerate(call.diff):
        w = _Writable(t)
        try:
            data = t._data
            n = data.size
            cols_x = [None] * len(out_positions)
            cols_y = [None] * len(out_positions)
            directions = (1, 1j) if data.dtype.kind == "c" else (1,)
            for k, idx in enumerate(np.ndindex(data.shape)):
                orig = data[idx].copy()
                for d in directions:
                    data[idx] = orig - eps * d
                    outa = call.evaluate()
                    data[idx] = orig + eps * d
                    outb = call.evaluate()
                    data[idx] = orig
                    for a, b in zip(outa, outb):
                        if a is not None and b is not None:
                            _check_same(a, b, eps, idx)
                    store = cols_x if d == 1 else cols_y
                    for m, pos in enumerate(out_positions):
                        col = ((outb[pos] - outa[pos]) / (2 * eps)).reshape(-1)
                        if store[m] is None:
                            store[m] = np.zeros((col.size, n), dtype=col.dtype)
                        store[m][:, k] = col
        finally:
            w.restore()
        for m, pos in enumerate(out_positions):
            if cols_x[m] is None:  # an input without elements
                out = call.evaluate()[pos]
                cols_x[m] = np.zeros((out.size, 0), dtype=np.result_type(out.dtype, np.float32))
                if len(directions) == 2:
                    cols_y[m] = cols_x[m].copy()
            result[m][j] = (cols_x[m], cols_y[m] if len(directions) == 2 else None)
    return result


# ---- fast mode, reverse ------------------------------------------------------------------------
_FAST_SEED = 67280421310721  # torch's default generator seed; a fixed stream leaves the user's RNG alone


def _unit(rng, n, dtype):
    v = rng.random(n).astype(dtype)
    norm = np.linalg.norm(v)
    return v / norm if norm else v


def _numerical_jvp(call, j, u, eps):
    """(f(x + eps u) - f(x - eps u)) / (2 eps) for diff input j, every output (flat)."""
    t = call.diff_tensors[j]
    w = _Writable(t)
    try:
        data = t._data
        orig = data.copy()
        delta = (u * eps).astype(data.dtype).reshape(data.shape)
        data[...] = orig - delta
        outa = call.evaluate()
        data[...] = orig + delta
        outb = call.evaluate()
        data[...] = orig
    finally:
        w.restore()
    jvps = []
    for a, b in zip(outa, outb):
        if a is None or b is None:
            jvps.append(None)
            continue
        _check_same(a, b, eps, None)
        jvps.append(((b - a) / (2 * eps)).reshape(-1))
    return jvps
