"""`Op`: a Function whose forward receives the numpy arrays behind its tensor arguments.

Built-in ops are ordinary `Function`s with this one convenience: forward computes with numpy
directly, and `ctx.save_for_backward(x, out)` may name those arrays; backward then gets them
back as Tensors (with their history), so that backward is written in Tensor ops and can
itself be differentiated. `jvp(ctx, *tangents)` (forward mode) is written in Tensor ops too: it
reads forward's arguments as `ctx.inputs` and its result as `ctx.output` (see forward_ad.py).
"""
import numpy as np

from .._dtype import result_type
from ._layout import converted
from .._tensor import Tensor
from ..autograd import _hooks, grad_mode
from ..autograd.function import Function, SavedList, WrappedNumber, _interceptors  # noqa: F401  (for the ops'
# _saved_values)


class Op(Function):
    _numpy_forward = True


class NoDerivative(Op):
    """An op torch records without a derivative: its node is NotImplemented, raises when backward reaches it, and
    has an edge only to each input that requires grad (an input that does not is passed on as its array). Each
    subclass names its node `_grad_fn_name = "torch::autograd::NotImplemented"` (a name is not inherited)."""

    @classmethod
    def apply(cls, *args, **kwargs):
        if not _interceptors:  # (under vmap or forward AD every tensor goes to the interceptor as it is)
            args = tuple(a._data if isinstance(a, Tensor) and not a._requires_grad else a for a in args)
        return super().apply(*args, **kwargs)


_PY_NUMBERS = (int, float)


def shown_dim(dim):
    """An int a node saves as torch's node shows it (`grad_fn._saved_dim`): as given, a negative one read as an
    unsigned 64-bit int (-1 is 18446744073709551615)."""
    return int(dim) % 2 ** 64


def given_dim(shown):
    """The dim as the user gave it (a negative one back from its unsigned form): what a node's backward passes on to
    the ops it records, as torch's passes its saved dim."""
    return shown - 2 ** 64 if shown >= 2 ** 63 else shown


def dim_passed_on(dim, shown, ndim):
    """The dim a node's backward passes on to the ops it records: as the user gave it (torch's saved dim), unless
    that no longer names the op's own dim (vmap moved the dims): then the op's."""
    given = given_dim(shown)
    return given if given % max(ndim, 1) == dim else dim


def shown_dims(dims):
    """Dims (or sizes, shifts) as torch's node shows a list of ints: a tuple, each as shown_dim shows it (an int given
    alone is a tuple of one: x.sum(-1) shows (18446744073709551615,)); None stays None."""
    if dims is None:
        return None
    return (shown_dim(dims),) if isinstance(dims, (int, np.integer)) else tuple([shown_dim(d) for d in dims])


def scalar_path(*arrays):
    """The arrays, each 0-d one as its numpy scalar. numpy computes on scalars by a path of its own,
    about ten times faster than its ufunc machinery on a 0-d array (0.05 us against 0.5 for a product),
    with the same result. Scalar autograd (the chain rule on single numbers, as students start) lives
    there; the ops it uses most read their 0-d operands this way (`a[()] if a.ndim == 0`, inline where
    a call would cost more than it saves)."""
    return [a[()] if a.ndim == 0 else a for a in arrays]


def promoted(*operands):
    """Bring operands to their torch result dtype: scalars become arrays of it, constant
    tensors are cast for free, and a tensor that requires grad is cast differentiably."""
    if len(operands) == 2:  # the hot case: a floating tensor and a Python number keep its dtype
        a, b = operands
        if type(b) in _PY_NUMBERS and isinstance(a, Tensor) and a._data.dtype.kind == "f":
            return [a, np.asarray(b, a._data.dtype)]
        if type(a) in _PY_NUMBERS and isinstance(b, Tensor) and b._data.dtype.kind == "f":
            return [np.asarray(a, b._data.dtype), b]
    dt = result_type(*operands)
    out = []
    for x in operands:
        if isinstance(x, Tensor):
            if x._data.dtype != dt.np:
                x = x.to(dt) if x._requires_grad or x._fw_grads else Tensor._make(converted(x._data, dt.np))
        elif x is not None:
            x = number_as(x, dt.np)
        out.append(x)
    return out


def numbers_as(operands, np_dtype):
    """The operands with each Python number made a 0-d array of np_dtype (see number_as)."""
    return [number_as(x, np_dtype) if isinstance(x, (bool, int, float, complex)) else x for x in operands]


def number_as(x, np_dtype):
    """A Python number as a 0-d array of the op's dtype. An integer wraps into an integer dtype, as
    torch casts it (uint8 + -1 adds 255; numpy refuses an integer out of the dtype's range); torch
    takes integers in [-2**63, 2**64) there."""
    if type(x) is int and np_dtype.kind in "iu":
        if not -2 ** 63 <= x < 2 ** 64:
            raise OverflowError(f"int too big to convert ({x}: torch takes a 64-bit integer here)")
        return np.asarray(x & (2 ** 64 - 1), np.uint64).astype(np_dtype)
    return np.asarray(x, dtype=np_dtype)


def as_array(x):
    """np.asarray(x) (numpy gives scalars for 0-d results), except that vmap's batched stand-in
    for an array is passed through as it is."""
    return x if getattr(x, "__vmap_batched__", False) else np.asarray(x)


def as_tensor_arg(x, op):
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (int, float, bool, complex, np.number, np.ndarray, list, tuple)):
        from .._tensor import tensor
        return tensor(x) if not isinstance(x, np.ndarray) else Tensor._make(x)
    raise TypeError(f"{op}(): expected a Tensor, got {type(x).__name__}")


def normalize_dims(dim, ndim, op, ranges_first=True):
    """dim as None, an int or a tuple -> a sorted tuple of non-negative axes. torch checks a list of dims
    in two orders: sum's family wraps every dim before it looks for a repeat (ranges_first), var's, flip's
    and squeeze's check each dim in turn, so there a repeat before an out-of-range dim is the error."""
    if dim is None:
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim) if isinstance(dim, (tuple, list)) else None
    if dims is None or not all(isinstance(d, (int, np.integer)) for d in dims):
        raise TypeError(f"{op}(): argument 'dim' must be an int or a tuple of ints, not {dim!r}")
    n = max(ndim, 1)
    for d in dims if ranges_first else ():
        _wrap(d, n, op)
    out = []
    for d in dims:
        out.append(_wrap(d, n, op))  # (a 0-d tensor takes dim 0 or -1, both 0)
        if out[-1] in out[:-1]:
            raise RuntimeError(f"{op}(): dim {out[-1]} appears multiple times in the list of dims {list(dims)}; "
                               "name each dim once")
    return tuple(sorted(out))


def _wrap(d, n, op):
    if not -n <= d < n:
        raise IndexError(f"{op}(): Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
    return d % n


def reduce_dims(dim, ndim, op, ranges_first=True):
    """normalize_dims for a reduction: a 0-d tensor accepts dim 0 or -1 and reduces over nothing
    (numpy has no axis 0 there), given as None."""
    dims = normalize_dims(dim, ndim, op, ranges_first)
    return dims if ndim else None


def as_np_index(x):
    return x._data if isinstance(x, Tensor) else x


def broadcast_error(op, err, *operands):
    """torch's RuntimeError for operands whose shapes do not broadcast (numpy raised `err`)."""
    shapes = [tuple(np.shape(x._data if isinstance(x, Tensor) else x)) for x in operands if x is not None]
    for i in range(len(shapes)):
        for j in range(i + 1, len(shapes)):
            a, b = shapes[i], shapes[j]
            for k in range(1, min(len(a), len(b)) + 1):
                if a[-k] != b[-k] and a[-k] != 1 and b[-k] != 1:
                    d = max(len(a), len(b)) - k
                    return RuntimeError(
                        f"{op}(): The size of tensor a ({a[-k]}) must match the size of tensor b ({b[-k]}) at "
                        f"non-singleton dimension {d}: shapes {list(a)} and {list(b)} do not broadcast. Sizes "
                        "must be equal or 1 when aligned from the right; reshape or unsqueeze one operand, "
                        "e.g. b.unsqueeze(-1), or index it to the right size.")
    return err


def zeros_for(shape, like):
    """Zeros of shape in like's dtype, with no graph: what torch's backward formulas write a gradient into
    (index_select's index_add, gather's scatter_add, sort's scatter, ...), so that the write records torch's node."""
    return Tensor._make(np.zeros(shape, like._data.dtype))


def plain(values):
    """A backward formula's op computed straight in numpy where its operands are unrecorded: the tensor that the
    op's Function.apply would give, without the node it would make and drop (about 1.3 us a call, more than the
    arithmetic on small tensors). (asarray: numpy gives 0-d results as scalars.)"""
    return Tensor._make(np.asarray(values))


def unrecorded(t):
    """Grad mode is off (a backward without create_graph) and t carries no tangent and no vmap batch: no op on t
    records or saves anything, only its values matter. (Backward formulas skip ops nobody would see. With grad
    mode on, a tensor that needs no gradient may still be saved by an op that records, as torch's view with its
    base's version counter. A subclass with arithmetic of its own, as forward mode's exact zero, takes its ops.
    While someone listens to events (the profiler, the visualizer), every op goes through Function.apply, where
    they see it.)"""
    return ((type(t) is Tensor or type(t).__mul__ is Tensor.__mul__) and type(t._data) is np.ndarray
            and not t._fw_grads and grad_mode.threads_off and not grad_mode._state.__dict__.get("enabled", True)
            and not _hooks._listeners)
    # (grad_mode.is_grad_enabled() spelled out: backward formulas ask this of most tensors they touch)
