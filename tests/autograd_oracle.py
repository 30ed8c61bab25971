"""Run the same program on torch (the oracle) and on microtorch and compare what came out.

A program is a function of the library module (`T`), written once: `prog(torch)` and
`prog(microtorch)` must give equal results (tensors compared by shape, dtype and values) or
raise the same exception type.
"""
import numpy as np
import torch

import microtorch

LIBS = (torch, microtorch)


class Approx:
    """A tensor's shape, dtype and values; equal to another within float32 round-off."""

    def __init__(self, t):
        t = t.detach()
        self.shape = tuple(t.shape)
        self.dtype = str(t.dtype).split(".")[-1]
        self.values = np.asarray(t.tolist())

    def __eq__(self, other):
        return (isinstance(other, Approx) and self.shape == other.shape and self.dtype == other.dtype
                and np.allclose(self.values, other.values, rtol=1e-5, atol=1e-6, equal_nan=True))

    def __repr__(self):
        return f"T{self.values.tolist()}:{self.dtype}"


def norm(v):
    """Tensors -> Approx, containers recursively, everything else as it is."""
    if isinstance(v, (torch.Tensor, microtorch.Tensor)):
        return Approx(v)
    if isinstance(v, (list, tuple)):
        return type(v)(norm(x) for x in v)
    if isinstance(v, dict):
        return {k: norm(x) for k, x in v.items()}
    if isinstance(v, (torch.dtype, microtorch.dtype)):
        return str(v).split(".")[-1]
    return v


def run(prog, lib):
    """("ok", result) or ("raises", exception type name)."""
    try:
        return ("ok", norm(prog(lib)))
    except Exception as e:  # noqa: BLE001 - the point is to compare them
        return ("raises", type(e).__name__)


def same(prog):
    """Assert that prog behaves the same on both libraries; return torch's outcome."""
    theirs, ours = run(prog, torch), run(prog, microtorch)
    assert ours == theirs, f"microtorch: {ours}\ntorch:      {theirs}"
    return theirs


def error(prog, lib):
    """The exception prog raises with lib (fails if it raises none)."""
    try:
        prog(lib)
    except Exception as e:  # noqa: BLE001
        return e
    raise AssertionError(f"{lib.__name__}: no exception")


def same_error(prog, *fragments):
    """Both raise the same exception type; microtorch's message contains each fragment
    (torch's wording, with 'torch' spelled 'microtorch')."""
    theirs, ours = error(prog, torch), error(prog, microtorch)
    assert type(ours).__name__ == type(theirs).__name__, f"{type(ours)} vs {type(theirs)}: {ours}"
    for f in fragments:
        assert f in str(theirs), f"oracle check: {f!r} not in torch's message {str(theirs)!r}"
        assert f.replace("torch.", "microtorch.") in str(ours), f"{f!r} not in {str(ours)!r}"
    return ours, theirs
