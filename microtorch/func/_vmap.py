"""vmap: run a function written for one example on a whole batch, in one call (torch.func.vmap).

The inputs are wrapped as batched tensors (see _batching.py), the function runs once, and the
outputs are unwrapped with their batch dim where `out_dims` says.
"""
import functools

from .._tensor import Tensor
from . import _pytree
from ._batching import BatchedArray, expand_batch, live_value, movedim, pop_level, push_level, wrap


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """vmap(f)(xs) == stack([f(x) for x in xs]), computed with one call of f on the batch.

    in_dims / out_dims: which dim of each input / output is the batch (None: not batched), an
    int for all, or a (nested) tuple matching the arguments / outputs.
    randomness: "error" (random ops raise), "same" (one draw shared by the batch) or
    "different" (one draw per example)."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return _vmap_call(func, in_dims, out_dims, randomness, args, kwargs)
    return wrapped


def _name(func):
    return getattr(func, "__name__", None) or repr(func)


def _batch_inputs(func, in_dims, args):
    """Check in_dims against the arguments; return the flat leaves, their in_dims, the spec, B."""
    name = _name(func)
    where = f"vmap({name}, in_dims={in_dims}, ...)(<inputs>)"
    if not args:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are trying "
                         "to vmap over a function with no inputs. The latter is unsupported.")
    if isinstance(in_dims, bool) or not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"{where}: expected `in_dims` to be int or a (potentially nested) tuple matching the "
                         f"structure of inputs, got: {type(in_dims)}.")
    leaves, spec = _pytree.flatten(args)
    dims = _pytree.broadcast_prefix(in_dims, args)
    if dims is None:
        raise ValueError(f"{where}: in_dims is not compatible with the structure of `inputs`. in_dims has structure "
                         f"{_pytree.flatten(in_dims)[1]} but inputs has structure {spec}.")
    sizes = []
    for leaf, d in zip(leaves, dims):
        if d is None:
            continue
        if isinstance(d, bool) or not isinstance(d, int):
            raise ValueError(f"{where}: in_dims must be made of ints and None, got {d!r} ({type(d)}).")
        if not isinstance(leaf, Tensor):
            raise ValueError(f"{where}: Got in_dim={d} for an input but the input is of type {type(leaf)}. We cannot "
                             "vmap over non-Tensor arguments, please use None as the respective in_dim")
        n = leaf.dim()
        if not -n <= d < n:
            raise ValueError(f"{where}: Got in_dim={d} for some input, but that input is a Tensor of dimensionality "
                             f"{n} so expected in_dim to satisfy -{n} <= in_dim < {n}.")
        sizes.append(leaf.shape[d])
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if len(set(sizes)) > 1:
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    return leaves, dims, spec, sizes[0]


def _vmap_call(func, in_dims, out_dims, randomness, args, kwargs):
    leaves, dims, spec, B = _batch_inputs(func, in_dims, args)
    level = push_level(B)
    restore = _set_randomness(randomness, level, B)
    try:
        batched = [wrap(movedim(x, d, 0), level) if d is not None else x for x, d in zip(leaves, dims)]
        out = func(*_pytree.unflatten(batched, spec), **kwargs)
        return _unbatch_outputs(func, out, out_dims, level, B)
    finally:
        restore()
        pop_level(level)


def _unbatch_outputs(func, out, out_dims, level, B):
    name = _name(func)
    leaves, spec = _pytree.flatten(out)
    dims = _pytree.broadcast_prefix(out_dims, out)
    if dims is None:
        raise ValueError(f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with the "
                         f"structure of `outputs`. out_dims has structure {_pytree.flatten(out_dims)[1]} but outputs "
                         f"has structure {spec}.")
    results = []
    for o, d in zip(leaves, dims):
        if not isinstance(o, Tensor):
            if d is None:
                results.append(o)
                continue
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(o)}. Did you "
                             "mean to set out_dims= to None for output?")
        batched = type(o._data) is BatchedArray and o._data.level == level
        if d is None:
            if batched:
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None")
            results.append(o)
            continue
        v = live_value(o) if batched else expand_batch(o, B)
        n = v.ndim
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
        results.append(movedim(v, 0, d))
    return _pytree.unflatten(results, spec)


# ---- randomness: the global generator is swapped while the function runs ---------------------------
_RANDOM_ERROR = ("vmap: called random operation while in randomness error mode. Please either use the 'same' or "
                 "'different' randomness flags on vmap or perform the randomness operation out of vmap")


class _RandomnessError:
    def __getattr__(self, name):
        raise RuntimeError(_RANDOM_ERROR)


class _PerExampleRandom:
    """randomness="different": each draw gets an extra batch dim, so every example differs."""

    _SIZE_ARG = {"random": 0, "standard_normal": 0, "integers": 2, "normal": 2, "uniform": 2, "torch_uniform": 3,
                 "torch_normal": 3, "torch_integers": 2, "torch_bernoulli": 1}

    def __init__(self, rng, level, batch_size):
        self._rng, self._level, self._B = rng, level, batch_size

    def __getattr__(self, name):
        if name not in self._SIZE_ARG:
            raise RuntimeError(f"vmap(randomness='different'): {name} is not supported; use randomness='same' or "
                               "draw outside of vmap")
        fn, pos = getattr(self._rng, name), self._SIZE_ARG[name]

        def draw(*args, **kwargs):
            args = list(args)
            size = kwargs.pop("size", args.pop(pos) if len(args) > pos else None)
            size = () if size is None else (tuple(size) if isinstance(size, (tuple, list)) else (size,))
            kwargs["size"] = (self._B,) + size
            return BatchedArray(Tensor._make(fn(*args, **kwargs)), self._level)
        return draw


def _set_randomness(randomness, level, B):
    from .. import _random
    if randomness == "same":
        return lambda: None
    before = _random._gen[0]
    proxy = _RandomnessError() if randomness == "error" else _PerExampleRandom(before, level, B)
    _random._gen[0] = proxy

    def restore():
        if _random._gen[0] is proxy:
            _random._gen[0] = before
    return restore

