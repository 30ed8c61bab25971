"""In-place ops (`x.mul_(2)`, `x[idx] = v`, ...).

An in-place op on a tensor in a graph is computed out of place on a snapshot of the tensor's
history, then written back into the tensor's memory, and the tensor takes the new node as its
grad_fn (torch "rebases" its history the same way). The version counter is bumped, so a
node that saved the old value raises at backward time instead of using a wrong value.
"""
import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ..autograd import grad_mode
from ._op import Op


def _check_leaf(t, op):
    if t._requires_grad and t.grad_fn is None and grad_mode.is_grad_enabled():
        raise RuntimeError(
            f"a leaf Variable that requires grad is being used in an in-place operation ({op}). Do the "
            "update under `with microtorch.no_grad():` (as optimizers do), or work on x.clone().")


def _snapshot(t):
    """A tensor with t's current value and history, that the in-place write will not touch."""
    s = Tensor._make(t._data.copy(), t._requires_grad)
    s.grad_fn, s._output_nr = t.grad_fn, t._output_nr
    if t.grad_fn is None and t._requires_grad:
        s._accumulator = t._accumulator
    return s


def apply_inplace(self, fn, *args, op="in-place op"):
    """Make `self` hold fn(self, *args), in place, with the history autograd needs."""
    _check_leaf(self, op)
    tracking = grad_mode.is_grad_enabled() and (
        self._requires_grad or any(isinstance(a, Tensor) and a._requires_grad for a in args))
    if not tracking:
        with grad_mode.no_grad():
            out = fn(Tensor._make(self._data), *args)
        _write(self, out._data, op)
        return self
    if self._base is not None and (self._base._requires_grad or self._requires_grad):
        raise RuntimeError(
            f"{op} on a view of another tensor while autograd records the graph is not supported by "
            "microtorch yet (torch rewrites the base's history with CopySlices). Apply the op out of place "
            "and rebuild the tensor (e.g. with microtorch.cat), or do it on x.clone().")
    if self.grad_fn is None and self._requires_grad:
        _check_leaf(self, op)
    out = fn(_snapshot(self) if self._requires_grad else Tensor._make(self._data.copy()), *args)
    _write(self, out._data, op)
    _rebase(self, out)
    return self


def _write(self, values, op):
    if values.shape != self._data.shape:
        try:
            values = np.broadcast_to(values, self._data.shape)
        except ValueError:
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                               f"{list(values.shape)} ({op} must keep the tensor's shape)") from None
    if not self._data.flags.writeable:
        raise RuntimeError(f"unsupported operation: {op} on an expanded tensor (more than one element refers "
                           "to the same memory location); call .clone() first")
    if values.dtype != self._data.dtype:
        if np.can_cast(values.dtype, self._data.dtype, "same_kind") or values.dtype.kind == "b":
            values = values.astype(self._data.dtype)
        else:
            raise RuntimeError(f"result type {_dtype.from_numpy_dtype(values.dtype)} can't be cast to the "
                               f"desired output type {self.dtype} ({op})")
    self._data[...] = values
    self._version_counter[0] += 1


def _rebase(self, out):
    """self takes out's place in the graph; saved copies of out now track self's version."""
    node = out.grad_fn
    self.grad_fn, self._output_nr, self._requires_grad = node, out._output_nr, out._requires_grad
    saved = node.__dict__.get("_saved") if node is not None else None
    if saved:
        for s in saved:
            if getattr(s, "counter", None) is out._version_counter:
                s.data = self._data
                s.counter = self._version_counter
                s.version = self._version_counter[0]


def _binary(fn, name):
    def method(self, other, *args, **kwargs):
        return apply_inplace(self, lambda s, o: fn(s, o, *args, **kwargs), other, op=name)
    method.__name__ = name
    return method


def _unary(fn, name):
    def method(self, *args, **kwargs):
        return apply_inplace(self, lambda s: fn(s, *args, **kwargs), op=name)
    method.__name__ = name
    return method


class CopySlices(Op):
    """x with x[key] = v: the gradient is zero at key for x and grad[key] (summed) for v"""
    _grad_fn_name = "CopySlices"

    @staticmethod
    def forward(ctx, x, v, key):
        ctx.key, ctx.v_shape = key, v.shape
        out = x.copy()
        out[key] = v
        return out

    @staticmethod
    def backward(ctx, grad):
        from .index import getitem
        from .shape import sum_to
        key = ctx.key
        gx = grad.masked_fill(_mask(grad.shape, key), 0.0) if ctx.needs_input_grad[0] else None
        gv = None
        if ctx.needs_input_grad[1]:
            sub = getitem(grad, tuple(Tensor._make(k) if isinstance(k, np.ndarray) else k for k in key))
            gv = sum_to(sub, ctx.v_shape) if sub.shape != tuple(ctx.v_shape) else sub
        return gx, gv, None


def _mask(shape, key):
    m = np.zeros(shape, dtype=bool)
    m[key] = True
    return Tensor._make(m)


def setitem(self, key, value):
    from .index import _check_bounds, _to_np_index
    key = key if isinstance(key, tuple) else (key,)
    key = tuple(_to_np_index(k) for k in key)
    _check_bounds(self, key)
    if not isinstance(value, Tensor):
        value = Tensor._make(np.asarray(value, dtype=self._data.dtype))
    elif value._data.dtype != self._data.dtype:
        value = value.to(self.dtype) if value._requires_grad else Tensor._make(value._data.astype(self._data.dtype))
    try:
        np.broadcast_to(value._data, self._data[key].shape)
    except ValueError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(value.shape)} cannot be broadcast to "
                           f"indexing result of shape {list(self._data[key].shape)}") from None
    apply_inplace(self, lambda s, v: CopySlices.apply(s, v, key), value, op="index assignment (x[idx] = v)")


def _copy(self, src, non_blocking=False):
    src = src if isinstance(src, Tensor) else Tensor._make(np.asarray(src))

    def fn(s, v):
        from .shape import broadcast_to
        out = broadcast_to(v.to(s.dtype), s.shape)
        return out + s * 0 if s._requires_grad else out.clone()
    return apply_inplace(self, fn, src, op="copy_")


def _zero(self):
    return apply_inplace(self, lambda s: s * 0, op="zero_")


def _fill(self, value):
    return apply_inplace(self, lambda s: s * 0 + value, op="fill_")


def install(cls):
    from . import elementwise as ew
    from .index import masked_fill
    methods = {
        "add_": _binary(lambda s, o, alpha=1: ew.add(s, o, alpha=alpha), "add_"),
        "sub_": _binary(lambda s, o, alpha=1: ew.sub(s, o, alpha=alpha), "sub_"),
        "mul_": _binary(ew.mul, "mul_"), "div_": _binary(ew.div, "div_"), "pow_": _binary(ew.pow, "pow_"),
        "__iadd__": _binary(ew.add, "__iadd__"), "__isub__": _binary(ew.sub, "__isub__"),
        "__imul__": _binary(ew.mul, "__imul__"), "__itruediv__": _binary(ew.div, "__itruediv__"),
        "__ipow__": _binary(ew.pow, "__ipow__"),
        "clamp_": _unary(ew.clamp, "clamp_"), "clip_": _unary(ew.clamp, "clip_"),
        "relu_": _unary(ew.relu, "relu_"), "sigmoid_": _unary(ew.sigmoid, "sigmoid_"),
        "tanh_": _unary(ew.tanh, "tanh_"), "exp_": _unary(ew.exp, "exp_"), "neg_": _unary(ew.neg, "neg_"),
        "abs_": _unary(ew.abs, "abs_"), "sqrt_": _unary(ew.sqrt, "sqrt_"), "log_": _unary(ew.log, "log_"),
        "sin_": _unary(ew.sin, "sin_"), "cos_": _unary(ew.cos, "cos_"), "square_": _unary(ew.square, "square_"),
        "reciprocal_": _unary(ew.reciprocal, "reciprocal_"),
        "masked_fill_": _binary(lambda s, m, v: masked_fill(s, m, v), "masked_fill_"),
        "zero_": _zero, "fill_": _fill, "copy_": _copy,
    }
    for name, fn in methods.items():
        setattr(cls, name, fn)
