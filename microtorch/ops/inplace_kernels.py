"""x.add_(y, alpha=a), x.sub_(y, alpha=a), x += y, x -= y, and x.mul_(s), x *= s for a Python number s, computed
straight into x's memory when nothing records them.

The general in-place path (ops/inplace.py) computes x + a*y out of place and copies the result into x,
so that autograd can record the op and torch's checks of shapes, dtypes and overlaps apply. When
nothing records the update (grad mode off, or nothing involved requires grad; no tangents, no vmap)
and y is a tensor of x's dtype and shape in memory of its own, numpy computes the same values into x
directly, as torch's kernel does. That is an optimizer's step, `p.add_(g, alpha=-lr)` under no_grad,
or a student's `p -= lr * p.grad`: each weight is then read and written once instead of twice.
"""
import functools

import numpy as np

from .._quiet import quietly
from .._tensor import Tensor
from ..autograd import _hooks, grad_mode
from ..autograd.views import aliased_root, bump_version, live_views
from ._zero_tangent import ZeroTangent
from .elementwise import fused_add


def straight_into_self(ufunc, general):
    """The in-place method for the numpy ufunc of the op (np.add for add_): `general` (the method that
    records and checks), unless the update can be written straight into self."""
    def method(self, *args, **kwargs):
        if len(args) == 1 and kwargs.keys() <= {"alpha"} and _unrecorded(self, args[0]):
            alpha = kwargs.get("alpha", 1)
            if type(alpha) is float or type(alpha) is int and -2 ** 63 <= alpha < 2 ** 64:  # (the general path
                # casts, refuses or overflows the others)
                quietly(_update, ufunc, self._data, args[0]._data, alpha)  # (numpy quiet, as in every op)
                bump_version(self)
                return self
        return general(self, *args, **kwargs)
    return functools.wraps(general)(method)  # (general's parameters: the type checks of guard read them)


def scaled_in_place(general):
    """x.mul_(s) and x *= s: `general`, unless s is a Python number and nothing records the update: then numpy
    multiplies x's memory by s (the values MulNumber computes, in x's dtype) without a result as large as x."""
    def method(self, *args, **kwargs):
        if len(args) == 1 and not kwargs and type(args[0]) in (int, float) and _unrecorded_self(self) \
                and self._data.dtype.kind in "fc" and -2 ** 63 <= args[0] < 2 ** 64:
            quietly(np.multiply, self._data, args[0], out=self._data)
            bump_version(self)
            return self
        return general(self, *args, **kwargs)
    return functools.wraps(general)(method)


_BLOCK_BYTES = 1 << 16


def _update(ufunc, x, y, alpha):
    """x = ufunc(x, alpha * y), in x's memory. alpha * y (computed as Add does) goes through a temporary of
    64 KiB, block after block, when x is larger. A temporary as large as x makes the memory of an
    optimizer's step fresh at every step (once it and the weight's old gradient are both free, malloc gives
    them back to the system), and page faults cost more than the arithmetic: W2 paid 392 of them for its
    first weight, about 330 us of a 1.5 ms step."""
    if alpha == 1 and x.dtype.kind != "c":
        ufunc(x, y, out=x)
        return
    if x.dtype == np.float32:  # (torch's fused kernel: one rounding, see elementwise.fused_add)
        x[...] = fused_add(x, y, alpha if ufunc is np.add else -alpha)
        return
    # (torch's complex kernel multiplies y by alpha even when it is 1: z + (inf+0j) is inf+nanj, as Add computes)
    n = _BLOCK_BYTES // x.itemsize
    if x.size <= n or x.strides != y.strides:
        ufunc(x, alpha * y, out=x)
        return
    xs, ys = x.ravel(order="K"), y.ravel(order="K")  # (views, in the same order: both contiguous, same strides)
    tmp = np.empty(n, x.dtype)
    for i in range(0, xs.size, n):
        t = tmp[:min(n, xs.size - i)]
        np.multiply(ys[i:i + n], alpha, out=t)
        ufunc(xs[i:i + n], t, out=xs[i:i + n])


def _unrecorded(x, y):
    """x.op_(y) gives in x's memory what x.op(y) would give, and no graph, tangent or view must know."""
    if not isinstance(y, Tensor):
        return False
    a, b = x._data, y._data
    return (type(b) is np.ndarray and a.dtype == b.dtype and a.dtype.kind in "fc" and a.shape == b.shape
            and not (grad_mode.is_grad_enabled() and y._requires_grad) and not y._fw_grads
            and _unrecorded_self(x) and not np.may_share_memory(a, b))


def _unrecorded_self(x):
    """Nothing records an in-place update of x with operands that need no grad (and nothing but x must know; a
    recording profiler shows the op, through the general path)."""
    a = x._data
    return (_hooks.range_opener is None and type(a) is np.ndarray and not x._inference and type(x) is not ZeroTangent  # (not a vmap batch; an exact zero refuses it)
            and a.flags.writeable and a.flags.forc  # (contiguous: no two elements share memory)
            and not (grad_mode.is_grad_enabled() and x._requires_grad)
            and x._base is None and not x._fw_grads
            and (len(x._version_counter) == 1 or aliased_root(x) is None)  # (not a detach()ed alias of a tensor
            # with views: they would get a new history)
            and not (x._requires_grad and x._views and live_views(x)))  # (its views would get a new history)
