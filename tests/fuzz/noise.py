"""Is a numeric difference rounding that the computation amplifies? Ask torch itself.

Where a value is ill-conditioned (cos of 1e11, a second-order gradient that is mathematically 0 and
computed as the cancellation of terms of 1e7), microtorch's last-bit differences from torch (another
summation order, another kernel) grow past the tolerance. The fuzzer accepts such a difference as
`known:rounding` only when torch disagrees with itself as much: rerun on torch with every float leaf
moved by a few ulps (zeros stay zero), and require, element by element, that microtorch's difference
is small (at most 1e-4 of the value, so the O(1) jump of a wrong gradient at a tie or a boundary is
never accepted) and within four times the movement of torch's own result. NaN and infinities must sit
in the same places.
"""
import copy

import numpy as np

from .run import run_program

_ULPS = (1, 2, 4)  # three reruns, each leaf element scaled by 1 + k*eps*(-1, 0 or +1)
_EPS = np.finfo(np.float64).eps


def _perturbed(prog, k):
    p = copy.deepcopy(prog)
    rng = np.random.default_rng(prog.seed * 31 + k)
    for leaf in p.leaves:
        if leaf.values.dtype.kind == "f":
            leaf.values = leaf.values * (1 + k * _EPS * rng.integers(-1, 2, leaf.values.shape))
    return p


def _arrays(trace, category):
    """The arrays a category compares, as a list (None where there is no array)."""
    if category.startswith("value:"):
        return [s.values for s in trace.steps]
    if category == "final_value":
        return list(trace.final.values())
    return list(getattr(trace, {"grad": "grads", "grad2": "grads2", "backward": "backward"}[category]) or [])


def _explained(t, m, moved):
    """t (torch), m (microtorch) and torch's reruns: every difference is within torch's own smooth movement."""
    if t is None or m is None or t.shape != m.shape or t.dtype.kind != "f" or any(x is None or x.shape != t.shape
                                                                                  for x in moved):
        return t is None and m is None
    with np.errstate(all="ignore"):
        same_special = np.array_equal(np.isnan(t), np.isnan(m)) and np.array_equal(np.isposinf(t), np.isposinf(m)) \
            and np.array_equal(np.isneginf(t), np.isneginf(m))
        fin = np.isfinite(t)
        dev = np.max([np.where(fin, np.abs(x - t), 0) for x in moved], axis=0)
        diff = np.abs(m - t)
        small = diff <= 1e-4 * np.maximum(1.0, np.abs(t))
        ok = ~fin | (diff <= 1e-9 * max(1.0, float(np.max(np.abs(np.where(fin, t, 0)), initial=0)))) | \
            (small & (diff <= 4 * dev))
    return same_special and bool(np.all(ok))


def rounding_only(torch, prog, tt, mm, category):
    """True when every array of `category` that differs is explained by torch's own sensitivity to the
    last bits of the leaves (see the module docstring)."""
    if not (category.startswith("value:") or category in ("final_value", "grad", "grad2", "backward")):
        return False
    reruns = []
    for k in _ULPS:
        with np.errstate(all="ignore"):
            r = run_program(torch, _perturbed(prog, k))
        if r.error != tt.error or r.grad_errors != tt.grad_errors:
            return False
        reruns.append(_arrays(r, category))
    ts, ms = _arrays(tt, category), _arrays(mm, category)
    if len(ts) != len(ms) or any(len(r) != len(ts) for r in reruns):
        return False
    return all(_explained(t, m, [r[i] for r in reruns]) for i, (t, m) in enumerate(zip(ts, ms)))
