"""How vmap batches: a batched tensor is a Tensor whose `_data` is a `BatchedArray`.

`vmap(f)(xs)` calls f once, with a tensor that looks like one example (the shape without the
batch dim) but holds the whole batch: its `_data` is a BatchedArray, a stand-in with the
per-example shape and dtype whose values live in `.value`, an ordinary Tensor with the batch in
dim 0. While a vmap runs, `batch_hook` sits in `Function.apply`: an op that receives a batched
tensor runs once on the `.value`s, rewritten by its batching rule (`sum(dim=d)` becomes
`sum(dim=d + 1)`, `x @ W` stays `x @ W`, ...), and its result is wrapped again. An op without a
rule runs once per example (correct, slower, with a warning).

Autograd and forward-mode AD only ever see the ordinary tensors underneath, so the graph that
`vmap(grad(f))` differentiates is the batched computation itself: per-example gradients cost
about one backward pass.

Levels: every vmap call has a level. In `vmap(vmap(f))` the inner level wraps the outer one;
an op is batched at the highest level among its arguments first, and the rule's own ops meet
the lower levels in turn. Code that reads `_data` directly (shape checks, masks, comparisons)
gets the BatchedArray, which answers numpy's protocols with the same batching.
"""
import math
import warnings

import numpy as np
import numpy.lib.mixins

from ..autograd import extension
from ..autograd.function import Function
from ..autograd.node import Node
from .._tensor import Tensor

# ---- the vmap levels that are running ----------------------------------------------------------
_levels = []   # [(level, batch_size)], innermost last
_next = iter(range(1, 2 ** 62))


def push_level(batch_size):
    level = next(_next)
    _levels.append((level, batch_size))
    extension.intercept(batch_hook, first=True)  # before forward AD: duals live below the batching
    return level


def pop_level(level):
    _levels.remove(next(e for e in _levels if e[0] == level))
    if not _levels:
        extension.stop_intercepting(batch_hook)


def active_levels():
    """[(level, batch_size)] of the running vmaps, outermost first."""
    return list(_levels)


# ---- BatchedArray -------------------------------------------------------------------------------
_DATA_ERROR = ("vmap: this operation needs the values of a batched tensor as one numpy array ({what}), "
               "which vmap cannot batch. Write it with microtorch ops, or move it out of the vmapped function.")
_ITEM_ERROR = ("vmap: It looks like you're either (1) calling .item() on a Tensor or (2) attempting to use a Tensor "
               "in some data-dependent control flow (`if x > 0:`, int(x), float(x)). For (1): we don't support vmap "
               "over calling .item() on a Tensor, please try to rewrite what you're doing with other operations. "
               "For (2): compute both branches and select with microtorch.where instead.")
ALLCLOSE_ERROR = ("vmap over torch.allclose isn't supported yet: allclose makes one bool of the whole batch. Compare "
                  "outside of vmap, or per example with isclose(...).all(), which vmap batches.")
_CONTROL_FLOW_ERROR = ("vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow. "
                       "We don't support that yet (the examples of the batch disagree here); compute both branches "
                       "and select with microtorch.where instead.")


class _Flags:
    writeable = True

    def __getitem__(self, name):
        return True


class BatchedArray(numpy.lib.mixins.NDArrayOperatorsMixin):
    """What vmap puts in a Tensor's `_data`: the shape and dtype of one example, with the
    whole batch in `value` (a Tensor whose dim 0 is the batch)."""

    __slots__ = ("value", "level", "shape", "dtype")
    __vmap_batched__ = True
    flags = _Flags()

    def __init__(self, value, level):
        self.value = value
        self.level = level
        shape = value._data.shape
        self.shape = tuple(shape[1:])
        self.dtype = value._data.dtype

    @property
    def phys(self):
        """The batch as an array (an ndarray, or a BatchedArray of an outer vmap)."""
        return self.value._data

    @property
    def batch_size(self):
        return self.value._data.shape[0]

    ndim = property(lambda self: len(self.shape))
    strides = property(lambda self: tuple(self.phys.strides[1:]))
    size = property(lambda self: math.prod(self.shape))
    itemsize = property(lambda self: self.dtype.itemsize)
    nbytes = property(lambda self: self.size * self.dtype.itemsize)
    T = property(lambda self: self.transpose())
    real = property(lambda self: np.real(self))
    imag = property(lambda self: np.imag(self))

    def __repr__(self):
        return f"BatchedArray(level={self.level}, batch_size={self.batch_size}, shape={self.shape}, " \
               f"dtype={self.dtype})"

    def batched_repr(self):
        inner = repr(self.value).replace("\n", "\n    ")
        return f"BatchedTensor(lvl={self.level}, bdim=0, value=\n    {inner}\n)"

    def __array__(self, dtype=None, copy=None):
        raise RuntimeError(_DATA_ERROR.format(what="numpy.asarray"))

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    # Python scalars: what every example agrees on (validation code like `if bad.any(): raise`
    # works); a disagreement is data-dependent control flow, which vmap cannot batch.
    def _consensus(self, convert):
        if self.size != 1:
            raise RuntimeError(f"only a single element can be converted to a Python scalar (shape {self.shape})")
        phys = self.phys
        while type(phys) is BatchedArray:
            phys = phys.phys
        values = {convert(v) for v in phys.reshape(-1).tolist()}
        if len(values) != 1:
            raise RuntimeError(_CONTROL_FLOW_ERROR)
        return values.pop()

    def __bool__(self):
        return self._consensus(bool)

    def __int__(self):
        return self._consensus(int)

    def __index__(self):
        return self._consensus(int)

    def __float__(self):
        return self._consensus(float)

    def __complex__(self):
        return self._consensus(complex)

    def item(self, *args):
        raise RuntimeError(_ITEM_ERROR)

    def tolist(self):
        raise RuntimeError(_ITEM_ERROR.replace(".item()", ".tolist()", 2))

    # ---- numpy's protocols: ufuncs elementwise, array functions by rule or per example ----
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        level = _top_level(inputs, kwargs)
        if method == "__call__" and "out" not in kwargs:
            return _np_elementwise(ufunc, inputs, kwargs, level)
        if method in ("at",) or "out" in kwargs:
            raise RuntimeError(_DATA_ERROR.format(what=f"numpy.{ufunc.__name__}.{method} writing into an array"))
        return _np_per_example(getattr(ufunc, method), inputs, kwargs, level)

    def __array_function__(self, func, types, args, kwargs):
        rule = _NP_RULES.get(func)
        level = _top_level(args, kwargs)
        if rule is not None:
            return rule(level, *args, **kwargs)
        if func in _NP_WRITERS:
            raise RuntimeError(_DATA_ERROR.format(what=f"numpy.{func.__name__} writing into an array"))
        return _np_per_example(func, args, kwargs, level)

    # ---- the ndarray methods that code in microtorch uses on `_data` ----
    def astype(self, dtype, copy=True, **kwargs):
        return self._new(self.phys.astype(dtype))

    def copy(self, order="C"):
        return self._new(self.phys.copy())

    def reshape(self, *shape, **kwargs):
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        shape = tuple(int(s) for s in shape)
        if -1 in shape:
            known = math.prod(s for s in shape if s != -1)
            shape = tuple(self.size // known if s == -1 else s for s in shape)
        return self._new(self.phys.reshape((self.batch_size,) + shape))

    def ravel(self):
        return self.reshape(-1)

    def transpose(self, *axes):
        axes = axes[0] if len(axes) == 1 and isinstance(axes[0], (tuple, list)) else axes
        axes = tuple(axes) or tuple(reversed(range(self.ndim)))
        return self._new(self.phys.transpose((0,) + tuple(a % self.ndim + 1 for a in axes)))

    def squeeze(self, axis=None):
        return np.squeeze(self, axis)

    def sum(self, axis=None, dtype=None, keepdims=False, **kw):
        return self._reduce(np.sum, axis, keepdims, dtype=dtype)

    def mean(self, axis=None, dtype=None, keepdims=False, **kw):
        return self._reduce(np.mean, axis, keepdims, dtype=dtype)

    def prod(self, axis=None, dtype=None, keepdims=False, **kw):
        return self._reduce(np.prod, axis, keepdims, dtype=dtype)

    def any(self, axis=None, keepdims=False, **kw):
        return self._reduce(np.any, axis, keepdims)

    def all(self, axis=None, keepdims=False, **kw):
        return self._reduce(np.all, axis, keepdims)

    def max(self, axis=None, keepdims=False, **kw):
        return self._reduce(np.amax, axis, keepdims)

    def min(self, axis=None, keepdims=False, **kw):
        return self._reduce(np.amin, axis, keepdims)

    def argmax(self, axis=None, **kw):
        return np.argmax(self, axis)

    def argmin(self, axis=None, **kw):
        return np.argmin(self, axis)

    def nonzero(self):
        return np.nonzero(self)

    def conj(self):
        return np.conj(self)

    def diagonal(self, offset=0, axis1=0, axis2=1):
        return np.diagonal(self, offset, axis1, axis2)

    def _reduce(self, fn, axis, keepdims, **kw):
        kw = {k: v for k, v in kw.items() if v is not None}
        return self._new(fn(self.phys, axis=_shift(axis, self.ndim), keepdims=keepdims, **kw))

    def _new(self, phys):
        return BatchedArray(Tensor._make(phys), self.level)

    def __getitem__(self, key):
        if _has_batched(key, self.level):
            return _np_per_example(lambda a, k: a[k], (self, key), {}, self.level)
        pkey, p = physical_key(key, self.shape)
        out = self.phys[pkey]
        if p:
            out = np.moveaxis(out, p, 0)
        return self._new(out)

    def __setitem__(self, key, value):
        if self.value._requires_grad:
            raise RuntimeError("vmap: an in-place write into a batched tensor that requires grad is not supported; "
                               "use the out-of-place op instead")
        if _has_batched(key, self.level):
            raise RuntimeError(_DATA_ERROR.format(what="an in-place write at batched indices"))
        pkey, p = physical_key(key, self.shape)
        region = self.phys[pkey]
        if type(value) is BatchedArray and value.level == self.level:
            v = value.phys
            n = len(region.shape) - 1
            v = v.reshape((v.shape[0],) + (1,) * (n - value.ndim) + tuple(value.shape))
            if p:
                v = np.moveaxis(v, 0, p)
            value = v
        self.phys[pkey] = value


# ---- helpers ------------------------------------------------------------------------------------
def _shift(axis, ndim):
    """A logical axis (or axes, or None for all) as physical axes (the batch is axis 0)."""
    if axis is None:
        return tuple(range(1, ndim + 1))
    if isinstance(axis, (tuple, list)):
        return tuple(a % max(ndim, 1) + 1 for a in axis)
    return axis % max(ndim, 1) + 1


def _level_of(a):
    d = a._data if isinstance(a, Tensor) else a
    return d.level if type(d) is BatchedArray else -1


def _top_level(args, kwargs=None):
    level = -1
    for a in args:
        d = a._data if isinstance(a, Tensor) else a
        if type(d) is BatchedArray:
            if d.level > level:
                level = d.level
        elif type(d) in (tuple, list):
            level = max(level, _top_level(d))
    if kwargs:
        level = max(level, _top_level(tuple(kwargs.values())))
    return level


def _has_batched(obj, level):
    if type(obj) is BatchedArray:
        return obj.level == level
    if isinstance(obj, Tensor):
        return _has_batched(obj._data, level)
    if type(obj) in (tuple, list):
        return any(_has_batched(o, level) for o in obj)
    return False


def _batch_size(args, level):
    for a in args:
        d = a._data if isinstance(a, Tensor) else a
        if type(d) is BatchedArray and d.level == level:
            return d.batch_size
        if type(d) in (tuple, list):
            b = _batch_size(d, level)
            if b is not None:
                return b
    return None


def _ndim(a):
    if isinstance(a, Tensor):
        return a._data.ndim
    return np.ndim(a) if type(a) is not BatchedArray else a.ndim


def physical_key(key, shape):
    """The key for the batch array: `(:, *key)`, and where numpy puts the batch dim (p > 0 when
    advanced indices are separated by slices, and numpy moves their dims first)."""
    key = key if isinstance(key, tuple) else (key,)
    pkey = (slice(None),) + key
    arrays = [k for k in key if isinstance(k, (np.ndarray, list))]
    if not arrays:
        return pkey, 0
    adv = [i for i, k in enumerate(key) if isinstance(k, (np.ndarray, list, int, np.integer, bool))]
    if adv == list(range(adv[0], adv[-1] + 1)):
        return pkey, 0
    shapes = []
    for i in adv:
        k = np.asarray(key[i])
        shapes.append((int(np.count_nonzero(k)),) if k.dtype == bool else k.shape)
    return pkey, len(np.broadcast_shapes(*shapes))


# ---- numpy-level batching (code that reads `_data`) --------------------------------------------
def _np_unwrap(a, level):
    if type(a) is BatchedArray and a.level == level:
        return a.phys, True
    return a, False


def _np_elementwise(fn, inputs, kwargs, level):
    n = max((_ndim(a) for a in inputs), default=0)
    args = []
    for a in inputs:
        v, batched = _np_unwrap(a, level)
        if batched and a.ndim < n:
            v = v.reshape((v.shape[0],) + (1,) * (n - a.ndim) + tuple(a.shape))
        args.append(v)
    out = fn(*args, **kwargs)
    if isinstance(out, tuple):
        return tuple(BatchedArray(Tensor._make(np.asarray(o) if np.isscalar(o) else o), level) for o in out)
    return BatchedArray(Tensor._make(out), level)


def _example(obj, level, i):
    """Example i of an argument: batched tensors and arrays at `level` are indexed, the rest kept."""
    if isinstance(obj, Tensor):
        d = obj._data
        if type(d) is BatchedArray and d.level == level:
            from ..ops.index import Select
            return Select.apply(live_value(obj), 0, i)
        return obj
    if type(obj) is BatchedArray:
        return obj.phys[i] if obj.level == level else obj
    if type(obj) in (tuple, list):
        return type(obj)(_example(o, level, i) for o in obj)
    if type(obj) is dict:
        return {k: _example(v, level, i) for k, v in obj.items()}
    return obj


def _np_per_example(fn, args, kwargs, level):
    B = _batch_size(list(args) + list(kwargs.values()), level)
    results = [fn(*_example(args, level, i), **_example(kwargs, level, i)) for i in range(B)]
    return _np_combine(results, level)


def _np_combine(results, level):
    first = results[0]
    if isinstance(first, tuple):
        return tuple(_np_combine([r[k] for r in results], level) for k in range(len(first)))
    if isinstance(first, (np.ndarray, BatchedArray, np.generic)):
        shapes = {np.shape(r) for r in results}
        if len(shapes) != 1:
            raise RuntimeError("vmap: the examples of the batch gave results of different shapes "
                               f"({sorted(shapes)}); vmap cannot batch data-dependent shapes")
        return BatchedArray(Tensor._make(np.stack(results)), level)
    if all(r == first for r in results):
        return first
    raise RuntimeError(_CONTROL_FLOW_ERROR)


def _np_reduction(fn):
    def rule(level, a, axis=None, *args, keepdims=False, **kw):
        if type(a) is not BatchedArray or a.level != level:
            return _np_per_example(fn, (a, axis) + args, dict(kw, keepdims=keepdims), level)
        return a._new(fn(a.phys, _shift(axis, a.ndim), *args, keepdims=keepdims, **kw))
    return rule


def _np_arg(fn):
    def rule(level, a, axis=None, *args, keepdims=False, **kw):
        if axis is None:
            flat = a.phys.reshape(a.batch_size, -1)
            out = fn(flat, 1, *args, **kw)
            return a._new(out.reshape((-1,) + (1,) * a.ndim) if keepdims else out)
        return a._new(fn(a.phys, _shift(axis, a.ndim), *args, keepdims=keepdims, **kw))
    return rule


def _np_materialize(a, level, B):
    if type(a) is BatchedArray and a.level == level:
        return a.phys
    a = a if isinstance(a, BatchedArray) else np.asarray(a)
    return np.broadcast_to(a.reshape((1,) + tuple(a.shape)), (B,) + tuple(a.shape))


def _np_joined(fn):
    def rule(level, arrays, axis=0, **kw):
        B = _batch_size(arrays, level)
        n = _ndim(arrays[0])
        phys = [_np_materialize(a, level, B) for a in arrays]
        ax = axis % (n + 1 if fn is np.stack else max(n, 1)) + 1
        return BatchedArray(Tensor._make(fn(phys, ax, **kw)), level)
    return rule


def _np_take_along_axis(level, a, indices, axis):
    B = _batch_size((a, indices), level)
    return BatchedArray(Tensor._make(np.take_along_axis(_np_materialize(a, level, B),
                                                        _np_materialize(indices, level, B),
                                                        _shift(axis, _ndim(a)))), level)


def _np_take(level, a, indices, axis=None, **kw):
    if type(a) is not BatchedArray or a.level != level or _has_batched(indices, level) or axis is None:
        return _np_per_example(np.take, (a, indices), dict(kw, axis=axis), level)
    return a._new(np.take(a.phys, indices, _shift(axis, a.ndim), **kw))


def _np_broadcast_to(level, a, shape, **kw):
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    v = a.phys.reshape((a.batch_size,) + (1,) * (len(shape) - a.ndim) + a.shape)
    return a._new(np.broadcast_to(v, (a.batch_size,) + shape))


def _np_expand_dims(level, a, axis):
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    n = a.ndim + len(axes)
    return a._new(np.expand_dims(a.phys, tuple(x % n + 1 for x in axes)))


def _np_squeeze(level, a, axis=None):
    if axis is None:
        axis = tuple(i for i, s in enumerate(a.shape) if s == 1)
    return a._new(np.squeeze(a.phys, _shift(axis, a.ndim)))


def _np_moveaxis(level, a, source, destination):
    return a._new(np.moveaxis(a.phys, _shift(source, a.ndim), _shift(destination, a.ndim)))


def _np_diagonal(level, a, offset=0, axis1=0, axis2=1):
    if type(a) is not BatchedArray or a.level != level:
        return _np_per_example(np.diagonal, (a,), dict(offset=offset, axis1=axis1, axis2=axis2), level)
    return a._new(np.diagonal(a.phys, offset, _shift(axis1, a.ndim), _shift(axis2, a.ndim)))


def _np_allclose(level, *args, **kwargs):
    raise RuntimeError(ALLCLOSE_ERROR)


def _np_array_equal(level, *args, **kwargs):
    raise RuntimeError("Batching rule not implemented for aten::equal. We could not generate a fallback. (equal makes "
                       "one bool of the whole batch: compare outside of vmap, or per example with eq(...).all())")


def _np_nonzero(level, a):
    raise RuntimeError("vmap: We do not support batching operators that can output dynamic shape (nonzero, "
                       "boolean-mask indexing, ...). Compute with a mask (microtorch.where) instead.")


def _np_like(fn):
    def rule(level, a, *args, **kw):
        return a._new(fn(a.phys, *args, **kw)) if type(a) is BatchedArray else fn(a, *args, **kw)
    return rule


def _np_shape_of(level, a):
    return a.shape


_NP_RULES = {
    np.shares_memory: lambda level, *a, **k: False,
    np.may_share_memory: lambda level, *a, **k: False,
    np.iscomplexobj: lambda level, a: a.dtype.kind == "c",
    np.isrealobj: lambda level, a: a.dtype.kind != "c",
    np.ndim: lambda level, a: a.ndim,
    np.shape: _np_shape_of,
    np.size: lambda level, a, axis=None: a.size if axis is None else a.shape[axis],
    np.result_type: lambda level, *a: np.result_type(*(x.dtype if type(x) is BatchedArray else x for x in a)),
    np.reshape: lambda level, a, shape=None, *args, **kw: a.reshape(shape),
    np.ravel: lambda level, a, *args: a.reshape(-1),
    np.transpose: lambda level, a, axes=None: a.transpose(axes or ()),
    np.copy: lambda level, a, *args, **kw: a.copy(),
    np.broadcast_to: _np_broadcast_to,
    np.expand_dims: _np_expand_dims,
    np.squeeze: _np_squeeze,
    np.moveaxis: _np_moveaxis,
    np.swapaxes: lambda level, a, x, y: a._new(np.swapaxes(a.phys, _shift(x, a.ndim), _shift(y, a.ndim))),
    np.where: lambda level, c, *xy: (_np_elementwise(np.where, (c,) + xy, {}, level) if xy else
                                     _np_nonzero(level, c)),
    np.clip: lambda level, *a, **kw: _np_elementwise(np.clip, a, kw, level),
    np.isclose: lambda level, *a, **kw: _np_elementwise(np.isclose, a, kw, level),
    np.real: lambda level, a: _np_elementwise(np.real, (a,), {}, level),
    np.imag: lambda level, a: _np_elementwise(np.imag, (a,), {}, level),
    np.angle: lambda level, a, deg=False: _np_elementwise(np.angle, (a,), dict(deg=deg), level),
    np.sum: _np_reduction(np.sum),
    np.mean: _np_reduction(np.mean),
    np.prod: _np_reduction(np.prod),
    np.any: _np_reduction(np.any),
    np.all: _np_reduction(np.all),
    np.amax: _np_reduction(np.amax),
    np.amin: _np_reduction(np.amin),
    np.max: _np_reduction(np.amax),
    np.min: _np_reduction(np.amin),
    np.count_nonzero: _np_reduction(np.count_nonzero),
    np.argmax: _np_arg(np.argmax),
    np.argmin: _np_arg(np.argmin),
    np.argsort: lambda level, a, axis=-1, **kw: a._new(np.argsort(a.phys, _shift(axis, a.ndim), **kw)),
    np.cumsum: lambda level, a, axis=None, **kw: a._new(np.cumsum(a.phys, _shift(axis, a.ndim), **kw)),
    np.flip: lambda level, a, axis=None: a._new(np.flip(a.phys, _shift(axis, a.ndim))),
    np.take: _np_take,
    np.take_along_axis: _np_take_along_axis,
    np.concatenate: _np_joined(np.concatenate),
    np.stack: _np_joined(np.stack),
    np.diagonal: _np_diagonal,
    np.allclose: _np_allclose,
    np.array_equal: _np_array_equal,
    np.nonzero: _np_nonzero,
    np.argwhere: _np_nonzero,
    np.flatnonzero: _np_nonzero,
    np.zeros_like: _np_like(np.zeros_like),
    np.ones_like: _np_like(np.ones_like),
    np.empty_like: _np_like(np.zeros_like),
    np.full_like: _np_like(np.full_like),
    np.array2string: lambda level, a, *args, **kw: repr(a),
}
_NP_WRITERS = {np.copyto, np.put, np.put_along_axis, np.place, np.putmask, np.fill_diagonal}


# ---- wrapping and unwrapping tensors ------------------------------------------------------------
def wrap(value, level):
    """The batched tensor whose examples are value[0], value[1], ... (value's dim 0 is the batch).
    It is "live": ops on it use `value` itself, with its autograd history and tangents."""
    t = Tensor._make(BatchedArray(value, level))
    if value._requires_grad:
        t._requires_grad = True
        t.grad_fn = _BATCHED_NODE  # the history is value's: backward through t itself would be lost
    if value._fw_grads:
        t._fw_grads = value._fw_grads
    t._vmap_live = True
    return t


def live_value(t):
    """The batch behind a batched tensor. A batched tensor made some other way than `wrap`
    (`x.detach()`, `x.data`, a mask built from `x._data`) shares the BatchedArray but not the
    history: it gets a detached batch of its own (a leaf that requires grad if it was made to)."""
    d = t._data
    v = d.value
    live = t.__dict__.get("_vmap_live")
    if live and (v._requires_grad or not t._requires_grad):
        return v
    leaf = Tensor._make(v._data)
    if live and v._fw_grads:
        leaf._fw_grads = v._fw_grads
    leaf._requires_grad = t._requires_grad
    t._data = BatchedArray(leaf, d.level)
    t._vmap_live = True
    if leaf._requires_grad:
        t.grad_fn = _BATCHED_NODE
    return leaf


class _BatchedNode(Node):
    """grad_fn of a batched tensor whose batch requires grad. Autograd runs on the batch
    underneath (func.grad and func.vjp do that); backward cannot start from the batched tensor."""
    _seq = 0
    next_functions = ()

    def name(self):
        return "BatchedTensorBackward"

    def _backward(self, grads):
        raise RuntimeError("vmap: backward() or autograd.grad() on a tensor batched by vmap is not supported; "
                           "differentiate inside the vmapped function with microtorch.func.grad / vjp instead "
                           "(vmap(grad(f)))")


_BATCHED_NODE = _BatchedNode()


def unwrap(a, level):
    """(value, True) for an argument batched at `level`; (a, False) for anything else."""
    if isinstance(a, Tensor):
        d = a._data
        if type(d) is BatchedArray and d.level == level:
            return live_value(a), True
        return a, False
    if type(a) is BatchedArray and a.level == level:
        return a.phys, True
    return a, False


def movedim(t, src, dst):
    from ..ops.shape import Permute
    n = t.ndim
    src, dst = src % n, dst % n
    if src == dst:
        return t
    order = [d for d in range(n) if d != src]
    order.insert(dst, src)
    return Permute.apply(t, dims=tuple(order))


def expand_batch(t, B):
    """t repeated along a new dim 0 of size B (a broadcast view)."""
    from ..ops.shape import Expand, Unsqueeze
    if isinstance(t, Tensor):
        return Expand.apply(Unsqueeze.apply(t, dim=0), (B,) + tuple(t.shape))
    return _np_materialize(t, -2, B)


def add_batch(t, level):
    """The tensor batched at `level` whose batch is t's dim 0. Wrappers stay ordered (an outer
    level never wraps an inner one): if t is already batched at a higher level, `level` goes
    underneath it."""
    d = t._data
    if type(d) is BatchedArray and d.level > level:
        inner = movedim(live_value(t), 1, 0)
        return wrap(add_batch(inner, level), d.level)
    return wrap(t, level)


def remove_batch(t, level, B):
    """The inverse of add_batch: t seen below `level`, with that level's batch as dim 0
    (broadcast to size B if t does not vary along it)."""
    d = t._data
    if type(d) is BatchedArray:
        if d.level == level:
            return live_value(t)
        if d.level > level:
            inner = remove_batch(live_value(t), level, B)
            return wrap(movedim(inner, 0, 1), d.level)
    return expand_batch(t, B)


def to_physical(t, levels):
    """t with the batch dims of `levels` [(level, size)] made explicit (the outermost first)."""
    for level, B in reversed(levels):
        t = remove_batch(t, level, B)
    return t


def from_physical(t, levels):
    for level, _ in levels:
        t = add_batch(t, level)
    return t


# ---- the hook in Function.apply ------------------------------------------------------------------
_EXTENDING = "For more details, please see https://pytorch.org/docs/main/notes/extending.func.html"


def check_python_function(cls, under_vmap):
    """torch.func's requirements of an autograd.Function written in Python (its forward on tensors), raised as
    torch raises them: a setup_context (forward without ctx) under any transform; under vmap, a vmap staticmethod
    or generate_vmap_rule = True."""
    if cls._numpy_forward or not cls._transform_checked:
        return
    if not cls._has_setup_context:
        raise RuntimeError("In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, "
                           f"...), it must override the setup_context staticmethod. {_EXTENDING}")
    if under_vmap and not cls.generate_vmap_rule and cls.vmap is Function.vmap:
        raise RuntimeError(f"You tried to vmap over {cls.__name__}, but it does not have vmap support. Please override "
                           f"and implement the vmap staticmethod or set generate_vmap_rule=True. {_EXTENDING}")


def batch_hook(cls, args, kwargs):
    level = _top_level(args, kwargs)
    if level < 0:
        return NotImplemented
    check_python_function(cls, True)
    rule = _rule_for(cls)
    if rule is not None:
        try:
            return rule(cls, args, kwargs, level)
        except _NoRule:
            pass
    return per_example(cls, args, kwargs, level)


class _NoRule(Exception):
    """A rule that cannot batch these particular arguments: fall back to per example."""


_RULES = {}
_rule_cache = {}


def _rule_for(cls):
    try:
        return _rule_cache[cls]
    except KeyError:
        rule = next((_RULES[k] for k in cls.__mro__ if k in _RULES), None)
        _rule_cache[cls] = rule
        return rule


def register(*classes):
    def deco(rule):
        for c in classes:
            _RULES[c] = rule
        _rule_cache.clear()
        return rule
    return deco


_warned = set()


def per_example(cls, args, kwargs, level):
    """The fallback: apply the op to each example and stack the results. (A Function written in Python with its
    own vmap rule, or generate_vmap_rule, runs so too: the same values, and no warning, as torch batches it.)"""
    from ..ops.shape import Stack
    own_rule = not cls._numpy_forward and (cls.generate_vmap_rule or cls.vmap is not Function.vmap)
    if cls not in _warned and not own_rule:
        _warned.add(cls)
        warnings.warn(f"There is a performance drop because we have not yet implemented the batching rule for "
                      f"{cls.__name__}: vmap runs it once per example.", UserWarning, stacklevel=4)
    B = _batch_size(list(args) + list(kwargs.values()), level)
    results = [cls.apply(*_example(args, level, i), **_example(kwargs, level, i)) for i in range(B)]

    def stacked(outs):
        if not isinstance(outs[0], Tensor):
            return outs[0]
        shapes = {tuple(o.shape) for o in outs}
        if len(shapes) != 1:
            raise RuntimeError(f"vmap: {cls.__name__} gave outputs of different shapes for different examples "
                               f"({sorted(shapes)}); vmap cannot batch data-dependent shapes")
        return wrap(Stack.apply(*outs, dim=0), level)
    if isinstance(results[0], tuple):
        return tuple(stacked([r[k] for r in results]) for k in range(len(results[0])))
    return stacked(results)


def wrap_outputs(out, level):
    if isinstance(out, tuple):
        return tuple(wrap(o, level) if isinstance(o, Tensor) else o for o in out)
    return wrap(out, level)


# ---- in-place ops (installed into ops/inplace.py's apply_inplace) -----------------------------------------
_INPLACE_UNBATCHED_SELF = (
    "vmap: {op}(self, *extra_args) is not possible because there exists a Tensor `other` in extra_args that has "
    "more elements than `self`. This happened due to `other` being vmapped over but `self` not being vmapped over "
    "in a vmap. Please try to use out-of-place operators instead of {op}.")


def _lerp_weight_per_example(self, args):
    """torch has no batching rule for lerp_: it runs per example, where a 0-d weight of another real (complex) dtype
    is taken as a number (lerp's rule refuses the batch of them). The weight cast to self's dtype, or None."""
    w, dt = args[1] if len(args) > 1 else None, self.dtype
    if isinstance(w, Tensor) and type(w._data) is BatchedArray and w.ndim == 0 and w.dtype != dt \
            and (w.dtype.is_complex, w.dtype.is_floating_point) == (dt.is_complex, dt.is_floating_point):
        return w.to(dt)
    return None


def batched_inplace(self, fn, args, op):
    """An in-place op on a batched tensor. Without autograd or tangents the batch's data is simply
    written (NotImplemented: the usual path); otherwise the op runs out of place and its result is
    copied into the batch in place, which autograd and forward AD record (through views too)."""
    from ..autograd.grad_mode import is_grad_enabled
    weight = _lerp_weight_per_example(self, args) if op == "lerp_" else None
    if weight is not None:
        from ..ops.inplace import apply_inplace
        return apply_inplace(self, fn, args[0], weight, *args[2:], op=op)
    level = _top_level((self,) + tuple(args))
    if _level_of(self) != level:
        raise RuntimeError(_INPLACE_UNBATCHED_SELF.format(op=op))
    tracked = (is_grad_enabled() and (self._requires_grad or any(isinstance(a, Tensor) and a._requires_grad
                                                                 for a in args)))
    if not (tracked or self._fw_grads or any(isinstance(a, Tensor) and a._fw_grads for a in args)):
        return NotImplemented
    from ..ops.inplace import _copy, _snapshot
    target = live_value(self)
    before = _snapshot(target) if target._requires_grad else Tensor._make(target._data.copy())
    if target._fw_grads:
        before._fw_grads = dict(target._fw_grads)
    out = fn(wrap(before, level), *args)
    if tuple(out.shape) != tuple(self.shape):
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                           f"{list(out.shape)} ({op} cannot change the shape of the tensor it writes to)")
    # the write happens on the batch underneath, where autograd handles in-place ops (and views)
    _copy(target, remove_batch(out, level, self._data.batch_size))
    self._requires_grad = target._requires_grad
    self.grad_fn = _BATCHED_NODE if target._requires_grad else None
    self._fw_grads = target._fw_grads
    self._version_counter[0] += 1
    return self
