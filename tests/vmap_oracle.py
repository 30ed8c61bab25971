"""Helpers of the vmap tests against torch.vmap: inputs batched at any dim, made example by example from small
specs, close() for nested outputs, torch's own per-example loop (what vmap means), and whether a call fell back
to running an op once per example (the "performance drop" warning, microtorch's and torch's)."""
import warnings

import numpy as np
import torch

B = 3


def close(ours, theirs, rtol=1e-7, atol=1e-12):
    if isinstance(theirs, (tuple, list)):
        assert len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            close(o, t, rtol, atol)
        return
    assert tuple(ours.shape) == tuple(theirs.shape), (ours.shape, theirs.shape)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], (ours.dtype, theirs.dtype)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=rtol, atol=atol)


# specs: ("f", shape) float64, ("p", shape) positive float64, ("t", shape) float64 with ties, ("nan", shape)
# float64 with NaNs, ("i", high, shape) int64 in [0, high), ("perm", n, k) k distinct int64 in [0, n),
# ("b", shape) bool, ("sorted", shape) float64 sorted along the last dim, ("spd", (n, n)) symmetric positive definite
def _array(spec, rng):
    kind = spec[0]
    if kind == "spd":
        a = rng.standard_normal(spec[1])
        return a @ a.T + spec[1][0] * np.eye(spec[1][0])
    if kind == "f":
        return rng.standard_normal(spec[1])
    if kind == "p":
        return rng.random(spec[1]) + 0.5
    if kind == "t":
        return rng.integers(0, 3, spec[1]).astype(np.float64)
    if kind == "nan":
        return np.where(rng.random(spec[1]) < 0.25, np.nan, rng.standard_normal(spec[1]))
    if kind == "b":
        return rng.random(spec[1]) < 0.5
    if kind == "sorted":
        return np.sort(rng.standard_normal(spec[1]), axis=-1)
    if kind == "i":
        return rng.integers(0, spec[1], spec[2])
    return rng.permutation(spec[1])[:spec[2]]


def inputs(specs, in_dims, seed):
    """one array per spec, with a batch of B at its in_dim (made example by example)"""
    rng = np.random.default_rng(seed)
    out = []
    for spec, d in zip(specs, in_dims):
        if d is None:
            out.append(_array(spec, rng))
        else:
            out.append(np.moveaxis(np.stack([_array(spec, rng) for _ in range(B)]), 0, d))
    return out


def torch_loop(f, arrays, in_dims, out_dims=0):
    """torch op by op on each example, stacked: what vmap means"""
    outs = [f(torch, *(torch.tensor(a if d is None else np.take(a, b, axis=d)) for a, d in zip(arrays, in_dims)))
            for b in range(B)]

    def stack(parts):
        if isinstance(parts[0], tuple):
            return tuple(stack([p[k] for p in parts]) for k in range(len(parts[0])))
        return torch.stack(parts, out_dims)
    return stack(outs)


def warned(call):
    """(call's result or the exception it raised, whether vmap fell back to running an op per example)"""
    from microtorch.func import _batching
    _batching._warned.clear()  # (microtorch warns once per op otherwise)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = call()
        except Exception as e:  # noqa: BLE001  (the caller compares it with torch's)
            out = e
    return out, any("performance drop" in str(w.message) for w in caught)
