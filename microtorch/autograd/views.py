"""Views and version counters: what lets backward notice in-place changes.

Every tensor has a version counter, a one-element list bumped by each in-place op. A view
shares its base's memory and its counter, so changing either shows in both, and a tensor
saved for backward (SavedTensor) can tell it was changed since. The root base of a view keeps
weak references to its views, so that an in-place op on one of them can rewrite their
histories (ops/inplace.py does the rewriting; it registers with `on_dirty_view`).
"""
import weakref

import numpy as np

from .._tensor import Tensor
from . import grad_mode
from .node import accumulator
from .saved import short_name


def bump_version(t):
    """An in-place change of t's memory: t and its views see a new version."""
    t._version_counter[0] += 1


def aliased_root(t):
    """The tensor with history whose memory t shares through detach() (t's version counter names it; see
    Tensor.detach), when it is not t's own root and has views: an in-place change of t changes them too, and torch
    rebuilds their histories (or refuses a split's outputs) as after a change through the root itself. Else None."""
    counter = t._version_counter
    if len(counter) < 2:
        return None
    root = counter[1]()
    return root if root is not None and root is not t and root is not t._base and root._views else None


def mark_view(out, base, multi=False, replay=None):
    """`out` is a view of `base`: share the version counter, remember the root base, and let
    the root know its views (weakly) so that an in-place op can regenerate their history.
    `replay`: the Op that made out when it changes the dtype (view_as_real, view_as_complex)."""
    if replay is not None or base._view_replay is not None:
        out._view_replay = _replay_steps(out, base, replay)
    root = base._base if base._base is not None else base
    out._version_counter = base._version_counter
    out._base = root
    views = root._views
    if views is None:
        root._views = views = []
    elif len(views) >= root._views_limit:  # drop dead views now and then
        views[:] = [r for r in views if r() is not None]
        root._views_limit = max(16, 2 * len(views))
    views.append(weakref.ref(out))
    nograd = not grad_mode.is_grad_enabled()
    if nograd or base._view_nograd:  # (a view of such a view is one too, as torch's creation meta: it cannot be
        out._view_nograd = True      # changed in place)
    if out._inference or base._inference:  # (a view of an inference tensor is one; of a normal tensor, not)
        out._inference = base._inference
    if nograd and root._requires_grad and out._data.dtype.kind in "fc":  # as torch: it requires grad while its
        out._requires_grad = out._grad_from_base = True                  # base does, and no gradient reaches it
    if multi or base._view_multi:
        out._view_multi = True
    if base._view_custom:
        out._view_custom = True
    return out


def _replay_steps(out, base, op):
    """How torch rebuilds `out` from its root base after an in-place op: as_strided cannot change a dtype, so
    view_as_real / view_as_complex are run again (`op`, an Op class), on the root or on the base's place in its
    memory, and a view of such a view is taken by its place after them. A tuple of those steps: Op classes, and
    places in memory (the arguments of torch's as_strided, found again in the rebuilt tensor: `located`)."""
    steps = base._view_replay
    if op is None:
        return steps + (geometry(out._data),)
    if steps is None:
        steps = () if base._base is None else (geometry(base._data),)
    return steps + (op,)


def located(place, within):
    """The flat positions among the elements at `within` of those at `place` (two geometries), or None."""
    return _positions(place, within)


def reinterpreted(where):
    """The geometry of view_as_real of the complex elements at `where`, or of view_as_complex of real ones."""
    shape, strides, address, dtype = where
    if dtype.kind == "c":
        real = np.dtype(dtype.char.lower())  # (complex128 -> float64: "D" -> "d")
        return shape + (2,), strides + (real.itemsize,), address, real
    return shape[:-1], strides[:-1], address, np.result_type(dtype, np.complex64)


def live_views(root):
    """The views of root that are still alive."""
    if not root._views:
        return []
    alive = [v for v in (r() for r in root._views) if v is not None]
    root._views[:] = [weakref.ref(v) for v in alive]
    return [v for v in alive if v._base is root]


def view_index(view, base):
    """The flat (C-order) positions in `base` of the elements of `view`, an int array of the
    view's shape, found from the two arrays' memory layout; None if view is not inside base.
    A real view of a complex base (z.real) is located among the base's real numbers (the positions
    in `parts(base)`), a complex view of a real base by its real numbers (shape view.shape + (2,))."""
    b, v = base._data, view._data
    if v.dtype != b.dtype and b.dtype.kind == "c" and v.dtype == b.real.dtype:
        b = parts(b)
    elif v.dtype != b.dtype and v.dtype.kind == "c" and b.dtype == v.real.dtype:
        v = parts(v)
    return _positions(geometry(v), geometry(b))


def geometry(a):
    """where an array's elements are: (shape, strides, address of its first element, dtype)"""
    return a.shape, a.strides, a.__array_interface__["data"][0], a.dtype


def _positions(view, base):
    """view_index on geometries (_geometry)"""
    shape, strides, _, dtype = view
    if not all(shape):
        return np.zeros(shape, np.intp)
    if dtype != base[3]:
        return None
    item = dtype.itemsize
    lo, hi = _bounds(*base[:3], item)
    vlo, vhi = _bounds(*view[:3], item)
    if vlo < lo or vhi > hi or any(s % item for s in base[1] + strides):
        return None
    scratch = np.full((hi - lo) // item, -1, np.intp)

    def place(shape, strides, address):
        strides = tuple(s // item * scratch.itemsize for s in strides)
        return np.lib.stride_tricks.as_strided(scratch[(address - lo) // item:], shape, strides)

    place(*base[:3])[...] = np.arange(int(np.prod(base[0]))).reshape(base[0])
    idx = place(*view[:3]).copy()
    if idx.min() < 0:
        return None
    return idx


def parts(a):
    """A complex array's memory as its real numbers, shape a.shape + (2,): real, then imaginary part."""
    r = a.real
    return np.lib.stride_tricks.as_strided(r, a.shape + (2,), r.strides + (r.itemsize,), subok=True)  # (meta stays)


def byte_bounds(a):
    """The first and one-past-last byte of memory an array covers."""
    return _bounds(a.shape, a.strides, a.__array_interface__["data"][0], a.itemsize)


def _bounds(shape, strides, address, itemsize):
    lo = hi = address
    for n, s in zip(shape, strides):
        if s < 0:
            lo += (n - 1) * s
        else:
            hi += (n - 1) * s
    return lo, hi + itemsize


def alias(t):
    """A tensor on t's memory with t's history but a version counter of its own."""
    a = Tensor._make(t._data)
    if t._requires_grad:
        a._requires_grad = True
        if t.grad_fn is not None:
            a.grad_fn, a._output_nr = t.grad_fn, t._output_nr
        else:  # route to t's AccumulateGrad (held here too: the cache is a weak reference)
            a._keep_accumulator = accumulator(t)
            a._accumulator = t._accumulator
    return a


# ---- what Function.apply tells this module ---------------------------------------------------
_dirty_view_handlers = []


def on_dirty_view(fn):
    """Register fn(tensor, op_name): called when a custom Function marked dirty a tensor that is
    a view or has views, so that their histories are rewritten (ops/inplace.py registers)."""
    _dirty_view_handlers.append(fn)


def outputs_recorded(ctx, outs, dirty, op_name, custom):
    """After Function.apply recorded ctx: outputs of a custom Function that are views of its
    inputs may not be changed in place (torch forbids it); dirty views rewrite their history."""
    for i, o in enumerate(outs):
        if custom and getattr(o, "grad_fn", None) is ctx and o._base is not None and not any(o is t for t in dirty):
            o._view_custom, o._view_nograd = True, False
    for t in dirty:
        if t.grad_fn is ctx and (t._base is not None or t._views):
            for fn in _dirty_view_handlers:
                fn(t, op_name)
