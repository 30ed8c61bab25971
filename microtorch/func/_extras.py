"""torch.func's helpers: debug_unwrap, replace_all_batch_norm_modules_, rearrange (einops notation)."""
import math
import re

from .._tensor import Tensor
from . import _batching


def debug_unwrap(tensor, *, recurse=True):
    """The tensor under a transform's wrapper (inside vmap: the whole batch, batch dim first)."""
    if not isinstance(tensor, Tensor):  # (torch asks whether it is a wrapped tensor: only a tensor can say)
        raise TypeError(f"debug_unwrap(): expected a Tensor, got {type(tensor).__name__}; pass the tensor to unwrap")
    t = tensor
    while isinstance(t, Tensor) and type(t._data) is _batching.BatchedArray:
        t = _batching.live_value(t)
        if not recurse:
            break
    return t


def replace_all_batch_norm_modules_(root):
    """In place: every BatchNorm in `root` stops tracking running statistics (so that vmap over it does
    not write one buffer from many examples); it normalizes with each batch's own statistics."""
    from ..nn.modules.normalization import _BatchNorm
    for module in root.modules():
        if isinstance(module, _BatchNorm):
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root


_AXIS = r"\w+|\.\.\.|\(|\)"


def _parse(side):
    """'a (b c) ...' -> [['a'], ['b', 'c'], ['...']]: the groups of one side of a pattern."""
    groups, current = [], None
    for token in re.findall(_AXIS, side):
        if token == "(":
            if current is not None:
                raise ValueError(f"rearrange: nested parentheses in {side!r}")
            current = []
        elif token == ")":
            if current is None:
                raise ValueError(f"rearrange: unbalanced parentheses in {side!r}")
            groups.append(current)
            current = None
        elif current is not None:
            current.append(token)
        else:
            groups.append([token])
    if current is not None:
        raise ValueError(f"rearrange: unbalanced parentheses in {side!r}")
    return groups


def rearrange(tensor, pattern, **axes_lengths):
    """einops.rearrange: e.g. 'b c (h w) -> b h w c' with h=4. Reshapes and permutes only."""
    if isinstance(tensor, (list, tuple)):
        from ..ops import stack
        tensor = stack(list(tensor))
    if "->" not in pattern:
        raise ValueError(f"rearrange: the pattern needs '->' (got {pattern!r})")
    left, right = (_parse(s) for s in pattern.split("->"))
    sizes = _axis_sizes(tensor, left, axes_lengths, pattern)
    names = [a for g in left for a in g]
    if sorted(names) != sorted(a for g in right for a in g if a != "1"):
        raise ValueError(f"rearrange: both sides of {pattern!r} must name the same axes")
    elementary = tensor.reshape([s for a in names for s in sizes[a]])
    order, positions = [], {}
    for a in names:
        positions[a] = list(range(len(order), len(order) + len(sizes[a])))
        order += positions[a]
    perm = [i for g in right for a in g if a != "1" for i in positions[a]]
    out_shape = []
    for g in right:  # '...' stays as the dims it stands for; a group becomes one dim
        out_shape += sizes["..."] if g == ["..."] else [math.prod(s for a in g if a != "1" for s in sizes[a])]
    return elementary.permute(perm).reshape(out_shape)


def _axis_sizes(tensor, left, axes_lengths, pattern):
    """name -> sizes of the elementary dims it stands for ('...' may stand for several)."""
    n_ellipsis = sum(g == ["..."] for g in left)
    if len(left) - n_ellipsis > tensor.ndim or (not n_ellipsis and len(left) != tensor.ndim):
        raise ValueError(f"rearrange: pattern {pattern!r} has {len(left)} groups on the left, the tensor "
                         f"{tensor.ndim} dims {list(tensor.shape)}")
    shape, sizes, dim = list(tensor.shape), {}, 0
    for g in left:
        if g == ["..."]:
            k = tensor.ndim - (len(left) - 1)
            sizes["..."], dim = shape[dim:dim + k], dim + k
            continue
        known = math.prod(axes_lengths[a] for a in g if a in axes_lengths)
        unknown = [a for a in g if a not in axes_lengths]
        if len(unknown) > 1:
            raise ValueError(f"rearrange: give the sizes of all but one of {g} (e.g. {unknown[0]}=...)")
        for a in g:
            sizes[a] = [axes_lengths[a]] if a in axes_lengths else [shape[dim] // known]
        if math.prod(s for a in g for s in sizes[a]) != shape[dim]:
            raise ValueError(f"rearrange: dim {dim} of size {shape[dim]} cannot be split as {g} with "
                             f"{axes_lengths}")
        dim += 1
    return sizes


def functionalize(func, *, remove="mutations"):
    """func with its in-place ops replaced by out-of-place ones. That changes what a tracer records, not
    what eager code computes: microtorch, being eager, runs func itself (inputs it mutates are still
    updated, as torch.func.functionalize guarantees)."""
    import functools
    if remove not in ("mutations", "mutations_and_views"):
        raise AssertionError(f"functionalize: remove must be 'mutations' or 'mutations_and_views', got {remove!r}")

    @functools.wraps(func)
    def functionalized(*args, **kwargs):
        return func(*args, **kwargs)
    return functionalized
