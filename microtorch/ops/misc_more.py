"""Sliding windows (unfold), renorm, narrow_copy, and the index helpers unique_consecutive and
nonzero_static."""
import numpy as np

from .._tensor import Tensor
from ._op import Op, normalize_dims, shown_dim
from .shape import _share


def _windows(ctx, dim, size, step, given_dim):
    """What unfold's node and its backward's show: the dim as given (`given_dim`), the size and step."""
    ctx.args, ctx.size, ctx.step = (dim, size, step), size, step
    ctx.given_dim = dim if given_dim is None else given_dim


class Unfold(Op):
    """windows of `size` every `step` along dim, as a new last dim;  d = the windows added back"""
    _grad_fn_name = "UnfoldBackward0"
    _saved_values = {"dimension": "given_dim", "self_sym_sizes": "shape", "size": "size", "step": "step"}

    @staticmethod
    def forward(ctx, x, dim, size, step, given_dim=None):
        ctx.shape = x.shape
        _windows(ctx, dim, size, step, given_dim)
        if not x.ndim:  # (a 0-d tensor is one window of its one number, as torch)
            return x.reshape(1)
        win = np.lib.stride_tricks.sliding_window_view(x, size, axis=dim, writeable=x.flags.writeable)
        return win[(slice(None),) * dim + (slice(None, None, step),)]  # (a view of x, as torch's)

    @staticmethod
    def backward(ctx, grad):
        if not ctx.shape:
            return grad.reshape(()), None, None, None
        return UnfoldBack.apply(grad, ctx.shape, *ctx.args, given_dim=ctx.given_dim), None, None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return Unfold.apply(t, *ctx.args, given_dim=ctx.given_dim)


class UnfoldBack(Op):
    """windows added back into a tensor of `shape` (the adjoint of unfold); d = unfold"""
    _grad_fn_name = "UnfoldBackwardBackward0"
    _saved_values = {"dim": "given_dim", "size": "size", "step": "step"}

    @staticmethod
    def forward(ctx, g, shape, dim, size, step, given_dim=None):
        _windows(ctx, dim, size, step, given_dim)
        out = np.zeros(shape, dtype=g.dtype)
        moved = np.moveaxis(out, dim, -1)  # a view: writes land in out
        windows = np.moveaxis(g, dim, -2)  # (..., count, size)
        for k in range(size):
            moved[..., k:k + step * windows.shape[-2]:step] += windows[..., k]
        return out

    @staticmethod
    def backward(ctx, grad):
        return Unfold.apply(grad, *ctx.args, given_dim=ctx.given_dim), None, None, None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return UnfoldBack.apply(t, ctx.inputs[1], *ctx.args, given_dim=ctx.given_dim)


def unfold(input, dimension, size, step):
    d = normalize_dims(dimension, input.ndim, "unfold")[0]  # (a 0-d tensor: dim 0 or -1, of length 1)
    length = input.shape[d] if input.ndim else 1
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {length} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return _share(Unfold.apply(input, d, size, step, given_dim=shown_dim(dimension)), input)


class Renorm(Op):
    """each slice along dim with p-norm n > maxnorm scaled by f = maxnorm/(n + 1e-7);
    d = g f + [n > maxnorm] f'(n) sum(g x) dn/dx. torch's node shows p and maxnorm as given, and the dim
    (`given_dim`)"""
    _grad_fn_name = "RenormBackward0"
    _saved_names = ("self",)
    _saved_values = {"dim": "given_dim", "maxnorm": "maxnorm", "p": "p"}

    @staticmethod
    def forward(ctx, x, p=2, dim=0, maxnorm=1.0, given_dim=None):
        ctx.p, ctx.maxnorm, ctx.given_dim = p, maxnorm, dim if given_dim is None else given_dim
        ctx.axes = tuple(i for i in range(x.ndim) if i != dim)
        ctx.save_for_backward(x)
        return x * Renorm._factor(Tensor._make(x), ctx)._data

    @staticmethod
    def _norm(x, ctx):
        from .reduce import vector_norm
        return vector_norm(x, ctx.p, ctx.axes, keepdim=True)

    @staticmethod
    def _factor(x, ctx):
        from .elementwise import where
        n = Renorm._norm(x, ctx)
        return where(n > ctx.maxnorm, ctx.maxnorm / (n + 1e-7), n * 0 + 1)

    @staticmethod
    def _vjp(x, g, ctx):
        from .elementwise import where
        n = Renorm._norm(x, ctx)
        f = Renorm._factor(x, ctx)
        safe = where(n == 0, n * 0 + 1, n)
        dn = x * x.abs() ** (ctx.p - 2) / safe ** (ctx.p - 1)
        df = where(n > ctx.maxnorm, -ctx.maxnorm / (n + 1e-7) ** 2, n * 0)
        return g * f + df * dn * (g * x).sum(ctx.axes, keepdim=True), (f, df, dn)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return Renorm._vjp(x, grad, ctx)[0]

    @staticmethod
    def jvp(ctx, t):
        x = ctx.inputs[0]
        _, (f, df, dn) = Renorm._vjp(x, t, ctx)
        return t * f + x * df * (dn * t).sum(ctx.axes, keepdim=True)


def renorm(input, p, dim, maxnorm):
    d = normalize_dims(dim, input.ndim, "renorm")[0]
    if p <= 0:
        raise RuntimeError(f"renorm: non-positive-norm not supported (got p={p})")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if input.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} dimensions")
    return Renorm.apply(input, p=p, dim=d, maxnorm=maxnorm, given_dim=shown_dim(dim))


class NarrowCopy(Op):
    """a copy of x[start:start+length] along dim;  d = g placed back in zeros (torch's slice_backward). `shown`:
    (dim, start, length) as given, which torch's node shows"""
    _grad_fn_name = "NarrowCopyBackward0"
    _saved_values = {"dim": "dim", "length": "length", "self_sym_sizes": "shape", "start": "start"}

    @staticmethod
    def forward(ctx, x, key=None, shown=None):
        ctx.key, ctx.shape = key, x.shape
        ctx.dim, ctx.start, ctx.length = shown or (len(key) - 1, key[-1].start, key[-1].stop - key[-1].start)
        return x[key].copy()

    @staticmethod
    def backward(ctx, grad):
        from .index import SliceBackward
        cut = ctx.key[-1]  # (torch's slice_backward shows the dim as given, the start counted from 0)
        return SliceBackward.apply(grad, ctx.shape, ctx.key, shown=(ctx.dim, cut.start, cut.stop, 1))

    @staticmethod
    def jvp(ctx, t):
        return NarrowCopy.apply(t, key=ctx.key, shown=(ctx.dim, ctx.start, ctx.length))


def narrow_copy(input, dim, start, length):
    d = normalize_dims(dim, input.ndim, "narrow_copy")[0]
    n = input.shape[d]
    if not -n <= start <= n or length < 0 or start % max(n, 1) + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    s = start % n if n and start < 0 else start
    shown = (shown_dim(dim), shown_dim(start), int(length))
    return NarrowCopy.apply(input, key=(slice(None),) * d + (slice(s, s + length),), shown=shown)


class Unique2(Op):
    """unique's values, recorded as torch records them (Unique2Backward0) with no derivative: backward and forward
    mode raise torch's NotImplementedError. forward takes the values unique computed."""
    _grad_fn_name = "Unique2Backward0"
    _edges = (0,)  # (the input's only)
    _aten = "_unique2"

    @staticmethod
    def forward(ctx, x, values):
        return values

    @staticmethod
    def backward(ctx, grad):
        raise NotImplementedError(f"the derivative for '{ctx._forward_cls._aten}' is not implemented.")

    @staticmethod
    def jvp(ctx, tx, _values):
        raise NotImplementedError(f"Trying to use forward AD with {ctx._forward_cls._aten} that does not support it "
                                  "because it has not been implemented yet.")


class UniqueDim(Unique2):
    _grad_fn_name, _aten = "UniqueDimBackward0", "unique_dim"


class UniqueConsecutive(Unique2):
    _grad_fn_name, _aten = "UniqueConsecutiveBackward0", "unique_consecutive"


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None, **unexpected):
    """one element of each run of equal consecutive values (of equal slices along dim)."""
    for name, flag in (("return_inverse", return_inverse), ("return_counts", return_counts)):
        if isinstance(flag, Tensor) and flag.numel() != 1:  # torch's Python function tests the flags first
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous (unique_consecutive's "
                               f"{name}); pass True or False")
    for name, flag in (("return_inverse", return_inverse), ("return_counts", return_counts)):
        if not isinstance(flag, (bool, np.bool_, Tensor)):
            raise TypeError(f"unique_consecutive(): argument '{name}' must be bool, not {type(flag).__name__}")
    if unexpected:
        raise TypeError(f"unique_consecutive() got an unexpected keyword argument '{next(iter(unexpected))}'")
    if not isinstance(input, Tensor):
        raise TypeError(f"unique_consecutive(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    x = input._data
    d = normalize_dims(dim, input.ndim, "unique_consecutive")[0] if dim is not None else None
    moved = x.reshape(-1) if d is None else np.moveaxis(x, d, 0)
    flat = moved.reshape(moved.shape[0], -1)
    change = np.ones(flat.shape[0], dtype=bool)
    if flat.shape[0] > 1:
        change[1:] = (flat[1:] != flat[:-1]).any(axis=1)
    starts = np.flatnonzero(change)
    values = moved[starts]
    out = UniqueConsecutive.apply(input, np.ascontiguousarray(values if d is None else np.moveaxis(values, 0, d)))
    extra = []
    if return_inverse:
        inv = np.cumsum(change) - 1
        extra.append(Tensor._make(inv.reshape(x.shape if d is None else (x.shape[d],)).astype(np.int64)))
    if return_counts:
        extra.append(Tensor._make(np.diff(np.append(starts, flat.shape[0])).astype(np.int64)))
    return (out, *extra) if extra else out


def nonzero_static(input, *, size, fill_value=-1):
    """nonzero's indices, cut or padded with fill_value to exactly `size` rows (whole-array numpy, no dynamic
    shape on the way, so that vmap batches it)."""
    if not input.ndim or not input.numel():
        return Tensor._make(np.full((size, input.ndim), fill_value, np.int64))
    hit = (input._data != 0).reshape(-1)
    order = np.argsort(~hit, kind="stable")  # the nonzero positions first, in order
    order = np.concatenate([order, np.zeros(max(size - hit.shape[0], 0), order.dtype)])[:size]
    idx = np.stack(np.unravel_index(order, tuple(input.shape)), axis=-1).astype(np.int64)
    found = np.arange(size) < hit.sum()
    return Tensor._make(np.where(found[:, None], idx, np.int64(fill_value)))
