"""In-place ops (`x.mul_(2)`, `x[idx] = v`, ...) and views.

An in-place op is computed out of place, written back into the tensor's memory, and the
tensor takes the new node as its grad_fn: torch "rebases" its history the same way. The
version counter is bumped, so a node that saved the old value raises at backward time
instead of using a wrong value.

A view shares its base's memory and version counter. An in-place op on a view also changes
the base, so the base's history is rewritten as torch's CopySlices does: the base's new
grad_fn is a `CopySlices` node (old base with the view's elements replaced by the op's
result), and every view of that base is regenerated from the new base (`AsStridedBackward0`).
Where a view sits in its base is recorded as the flat positions of its elements.
"""

import functools
import warnings
import weakref

import numpy as np

from .. import _dtype
from .._dtype import cast
from .._tensor import Tensor
from ..autograd import _hooks, extension, grad_mode, views
from ..autograd.function import BackwardFunction
from ..autograd.saved import FREED_MESSAGE, SavedTensor
from ..autograd.views import alias as _alias, live_views as _live_views, mark_view, view_index as _view_index  # noqa: F401
from ._op import Op, SavedList
from ._zero_tangent import ZeroTangent
from .inplace_kernels import scaled_in_place, straight_into_self
from .resize import writable_alias



class AsStrided(Op):
    """a view regenerated from its base: out = base.flat[positions]"""
    _grad_fn_name = "AsStridedBackward0"

    @staticmethod
    def forward(ctx, base, index):
        ctx.base_shape, ctx.index = base.shape, index
        return np.ravel(base)[index]

    @staticmethod
    def backward(ctx, grad):
        return AsStridedScatter.apply(grad, ctx.base_shape, ctx.index), None

    @staticmethod
    def jvp(ctx, t, _index):
        return AsStrided.apply(t, ctx.index)


class RegeneratedView(AsStrided):
    """a view's new history after an in-place op on its base: torch's as_strided_backward, which for an
    empty view returns plain zeros (no graph). (The in-place op's own AsStrided keeps the graph: torch's
    CopySlices copies that op's gradient into the base's, even into an empty slice.)"""
    _grad_fn_name = "AsStridedBackward0"

    @staticmethod
    def backward(ctx, grad):
        if not grad.numel():
            return Tensor._make(np.zeros(ctx.base_shape, grad._data.dtype)), None
        return AsStridedScatter.apply(grad, ctx.base_shape, ctx.index), None


class AsStridedScatter(Op):
    """zeros(shape) with g added at the view's positions: the adjoint of AsStrided"""
    _grad_fn_name = "AsStridedScatterBackward0"

    @staticmethod
    def forward(ctx, g, shape, index):
        ctx.index = index
        out = np.zeros(int(np.prod(shape)), dtype=g.dtype)
        np.add.at(out, index.ravel(), np.ravel(g))
        return out.reshape(shape)

    @staticmethod
    def backward(ctx, grad):
        return AsStrided.apply(grad, ctx.index), None, None

    @staticmethod
    def jvp(ctx, t, _shape, _index):
        return AsStridedScatter.apply(t, *ctx.inputs[1:])


class CopySlices(Op):
    """base with the view's elements replaced by src: base's gradient is zero there, src's is
    the gradient at the view's positions. After an in-place op on a view, the node keeps that
    op's own node inside (`ctx.op`, see fold_op), as torch's CopySlices does."""
    _grad_fn_name = "torch::autograd::CopySlices"

    @staticmethod
    def forward(ctx, base, src, index):
        ctx.index, ctx.op = index, None
        ctx.kind = _kind(src, base)  # (z.real written: index counts z's real numbers; or a complex view of reals)
        out = np.array(base, copy=True)
        into = views.parts(out) if ctx.kind == "real" else out
        src = views.parts(src) if ctx.kind == "complex" else src
        into.flat[index] = np.broadcast_to(src, np.shape(index))  # (.flat: C-order positions in any layout)
        return out

    @staticmethod
    def backward(ctx, grad):
        if ctx.op is not None:
            if ctx._saved is None:  # (let go after a backward without retain_graph, as torch's)
                raise RuntimeError(FREED_MESSAGE)
            return _through_op(ctx, grad)
        gb = gs = None
        if ctx.needs_input_grad[0]:
            gb = _without_view(grad, ctx.index, ctx.kind)
        if ctx.needs_input_grad[1]:
            gs = _view_at(grad, ctx.index, ctx.kind)
        return gb, gs, None

    @staticmethod
    def jvp(ctx, tbase, tsrc, _index):
        return CopySlices.apply(tbase, tsrc, ctx.index)


def _without_view(grad, index, kind=None):
    """grad with the view's positions zeroed (kind "real": index counts grad's real numbers)."""
    from .elementwise import ViewAsComplex, ViewAsReal
    from .index import masked_fill
    if kind == "real":
        return ViewAsComplex.apply(_without_view(ViewAsReal.apply(grad), index))
    return masked_fill(grad, Tensor._make(_view_mask(grad.shape, index)), 0.0)


def _view_at(base, index, kind=None):
    """base's elements at `index`, as a tensor: through base's real numbers (kind "real": a real view of a
    complex base, torch's view_as_real first) or as complex numbers (kind "complex": view_as_complex after)."""
    from .elementwise import ViewAsComplex, ViewAsReal
    if kind == "real":
        return AsStrided.apply(ViewAsReal.apply(base), index)
    out = AsStrided.apply(base, index)
    return ViewAsComplex.apply(out) if kind == "complex" else out


def _kind(view, base):
    """how the positions of the array `view` count in the array `base` (views.view_index): "real" for a real view
    of a complex base (among its real numbers), "complex" for a complex view of real numbers, None for one dtype"""
    v, b = view.dtype.kind, base.dtype.kind
    return None if v == b or "c" not in (v, b) else "real" if b == "c" else "complex"


def _view_mask(shape, index):
    """True at the view's positions; torch copies the view's gradient back into the view's layout,
    which it refuses for an expanded view (several elements at one position)."""
    mask = np.zeros(shape, dtype=bool)
    mask.reshape(-1)[index] = True
    if np.count_nonzero(mask) < np.size(index):
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to a single memory "
            "location. Please clone() the tensor before performing the operation. (The backward of CopySlices: "
            "an in-place op wrote into an expanded view; write into a clone instead.)")
    return mask


def fold_op(node, out, view_old):
    """Make the CopySlices `node` keep the in-place op that computed `out` from `view_old` inside
    itself, as torch does: its edges become the base's old history and that op's other inputs.
    Only when out's node is that op applied to view_old itself (not a composite ending elsewhere)."""
    op = out.grad_fn
    first = view_old.grad_fn if view_old._requires_grad else None
    if node is None or not isinstance(op, BackwardFunction) or op._num_outputs != 1 or out._output_nr \
            or not op.next_functions or op.next_functions[0][0] is not first:
        return
    node.op, node._edge_args = op, None  # (its backward returns one gradient per edge itself)
    node.next_functions = node.next_functions[:1] + op.next_functions[1:]
    node.needs_input_grad = node.needs_input_grad[:1] + op.needs_input_grad[1:]
    node._saved = op._saved  # (shown as its own, as torch shows fn's; the engine lets go of it: _let_go)


def _let_go(node):
    """The engine's release of a CopySlices node, as torch's: it drops what it keeps (a second backward through it
    raises) but leaves the saved tensors of the op inside it to that op's own node, which a double backward may still
    reach through the op's saved result (fuzz seed 438580)."""
    node._saved = None


CopySlices._backward_cls._release = _let_go


def _through_op(ctx, grad):
    """torch's CopySlices backward: the op's backward on the view's part of the gradient; what it
    gives for the view's old value goes into the base's gradient at the view's positions, the rest
    to the op's other inputs."""
    op, index = ctx.op, ctx.index
    n = len(op.next_functions)
    res = (*op._backward([_view_at(grad, index, ctx.kind)])[:n], *(None,) * n)[:n]  # (the engine checks them)
    gb = None
    if ctx.needs_input_grad[0]:
        if res[0] is None:
            gb = _without_view(grad, index, ctx.kind)
        else:
            _view_mask(grad.shape + (2,) * (ctx.kind == "real"), index)  # (raises for an expanded view, as torch)
            gb = CopySlices.apply(grad, res[0], index)
    return (gb, *res[1:])


class _UnusableView(Tensor):
    """A view that torch can no longer give a history once its base (or another view of it) changed in place: an
    output of split()/unbind()/chunk(), a view made under no_grad, one a custom Function returned. Reading its
    grad_fn raises torch's error (kept in `_rebase_error`), and with it any op that records the view."""
    __slots__ = ()

    @property
    def grad_fn(self):
        raise RuntimeError(self._rebase_error)

    @grad_fn.setter
    def grad_fn(self, node):
        Tensor.grad_fn.__set__(self, node)

    def __repr__(self):
        shown = Tensor._make(self._data, True)  # (torch prints such a view with grad_fn=<Invalid>)
        shown.grad_fn = _Invalid
        return repr(shown)

    __str__ = __repr__


class _Invalid:
    """What torch prints as the grad_fn of a view it cannot rebuild."""
    @staticmethod
    def name():
        return "Invalid"


_UnusableView.__name__ = _UnusableView.__qualname__ = "Tensor"  # prints and pickles as what it is


def _unusable(v, root):
    """torch's error for reading the history of the view v after an in-place change, or None if it has one."""
    node = Tensor.grad_fn.__get__(v)
    if not (v._view_multi or v._view_nograd or v._view_custom) or node is None and not root._requires_grad:
        return None
    if v._view_custom:
        return (f"{_output_of(v)} is a view and its base or another view of its base has been modified inplace. "
                "This view was created inside a custom Function (or because an input was returned as-is) and the "
                "autograd logic to handle view+inplace would override the custom backward associated with the "
                "custom Function, leading to incorrect gradients. This behavior is forbidden. You can fix this by "
                "cloning the output of the custom Function.")
    if v._view_nograd:
        return _nograd_view(v, "its base or another view of its base has been modified inplace")
    return ((f"{_output_of(v)} is a view" if node is not None else
             "A view was created in no_grad mode") + " and its base or another view of its base has been modified "
            "inplace. This view is the output of a function that returns multiple views. Such functions do not allow "
            "the output views to be modified inplace. You should replace the inplace operation by an out-of-place "
            "one (or .clone() the outputs of the split).")


def _regenerate_views(root, skip=None):
    """After an in-place op on `root` or one of its views, give each live view of root (but `skip`) the
    history "this region of the new root" (torch regenerates views the same way)."""
    for v in _live_views(root):
        if v is skip or type(v) is _UnusableView:
            continue
        error = _unusable(v, root)
        if error is not None:  # (in grad mode or not: torch raises when the view's history is next read)
            v.__class__, v._requires_grad = _UnusableView, True
            v._rebase_error = error
            continue
        if v._view_multi or v._view_nograd or v._view_custom or not root._requires_grad:
            continue
        r = _rebuilt(v, root)
        if r is None:
            continue
        old, old_nr = v.grad_fn, v._output_nr
        v.grad_fn, v._output_nr, v._requires_grad = r.grad_fn, 0, True
        _move_retain(v, old, old_nr)  # (torch moves retain_grad to the new grad_fn, the modified view's too)


def _rebuilt(v, root):
    """The view v rebuilt from the new root, as torch does: as_strided of it (v's positions in it), or through
    view_as_real / view_as_complex run again, each view after them found again by its place in memory (views.py's
    replay steps); None if v is not found in it."""
    steps = v._view_replay
    with grad_mode.enable_grad():
        if steps is None:  # (a view of the same dtype: its positions in the root)
            idx = _view_index(v, root)
            return None if idx is None else RegeneratedView.apply(_alias(root), idx)
        r, where = _alias(root), views.geometry(root._data)
        for step in steps:
            if isinstance(step, type):  # (view_as_real, view_as_complex)
                r, where = step.apply(r), views.reinterpreted(where)
                continue
            idx = views.located(step, where)
            if idx is None:
                return None
            r, where = RegeneratedView.apply(r, idx), step
    return r


def _move_retain(t, old, old_nr):
    if t._retains_grad and old is not None and old is not t.grad_fn:
        retains = old._retains_grad
        ref = retains.pop(old_nr, None) if retains else None
        if ref is not None and ref() is not None:
            t.grad_fn._retain_grad(ref())


# ---- the in-place machinery -----------------------------------------------------------------
def _check_leaf(t, op):
    if t._requires_grad and grad_mode.is_grad_enabled() and Tensor.grad_fn.__get__(t) is None \
            and not (t._view_nograd or t._grad_from_base):  # (its own node, not a rebuilt one; a no_grad view,
        # or one that requires grad through its base: the view's own error, later)
        what = "a view of a leaf Variable" if t._base is not None else "a leaf Variable"  # (a view made a leaf)
        raise RuntimeError(
            f"{what} that requires grad is being used in an in-place operation. ({op}: do the update "
            "under `with microtorch.no_grad():` as optimizers do, or work on x.clone().)")


def _check_view_of_leaf(t, op):
    """torch's refusal of an in-place op on a view of a leaf that requires grad (grad mode on)."""
    base = t._base
    if base is not None and base._requires_grad and base.grad_fn is None and grad_mode.is_grad_enabled():
        raise RuntimeError(
            f"a view of a leaf Variable that requires grad is being used in an in-place operation. ({op}: do "
            "the update under `with microtorch.no_grad():`, or work on a clone of the leaf.)")


def _check_mutable(t, op):
    """A gradient that is torch's efficient zero tensor (sgn's, say) may not be written into, nor an inference tensor
    outside inference_mode, as in torch."""
    if t._inference and not grad_mode.is_inference_mode_enabled():
        raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
                           "clone to get a normal tensor before doing inplace update.See "
                           "https://github.com/pytorch/rfcs/pull/17 for more details.")
    if type(t) is ZeroTangent:
        raise RuntimeError(f"ZeroTensors are immutable ({op} on a gradient that is an exact zero, as sgn's "
                           "backward gives): write into a copy, g = g.clone().")


def _snapshot(t):
    """A copy of t's value with t's history, that the in-place write will not touch."""
    s = Tensor._make(t._data.copy(), t._requires_grad)
    s.grad_fn, s._output_nr = t.grad_fn, t._output_nr
    return s


def apply_inplace(self, fn, *args, op="in-place op"):
    """Make `self` hold fn(self, *args), in place, with the history autograd needs. (A recording profiler shows it
    as torch does, `aten::add_`, with the out-of-place op that does the work folded into it.)"""
    opener = _hooks.range_opener
    if opener is None or not op.isidentifier():
        return _apply_inplace(self, fn, args, op)
    close = opener("aten::" + op, (self, *args), folds="aten::" + op.rstrip("_"))
    try:
        return _apply_inplace(self, fn, args, op)
    finally:
        close()


def _apply_inplace(self, fn, args, op):
    if type(self._data) is not np.ndarray or any(isinstance(a, Tensor) and type(a._data) is not np.ndarray
                                                 for a in args):
        out = extension.transforms().batched_inplace(self, fn, args, op)  # vmap: done on the batch underneath
        if out is not NotImplemented:
            return out
    if (self._fw_grads or any(isinstance(a, Tensor) and a._fw_grads for a in args)) \
            and not getattr(fn, "_keeps_tangents", False):
        return _keeping_tangents(self, fn, args, op)
    _check_mutable(self, op)
    _check_leaf(self, op)
    for a in args:
        if isinstance(a, Tensor) and a is not self and np.may_share_memory(a._data, self._data):
            _check_overlap(self, a, op)
    base = self._base
    tracking = grad_mode.is_grad_enabled() and (
        self._requires_grad or any(isinstance(a, Tensor) and a._requires_grad for a in args)
        or (base is not None and base._requires_grad))
    if not tracking:
        with grad_mode.no_grad():
            out = fn(Tensor._make(self._data), *args)
        _write(self, _checked(self, out._data, op))
        root = base if base is not None else self
        if root._requires_grad and root._views:
            _regenerate_views(root)
        _regenerate_aliased(self)
        return self
    if base is not None:
        return _inplace_on_view(self, base, fn, args, op)
    out = fn(_snapshot(self) if self._requires_grad else Tensor._make(self._data.copy()), *args)
    _write(self, _checked(self, out._data, op))
    _rebase(self, out)
    if self._views:
        _regenerate_views(self)
    _regenerate_aliased(self)
    return self


def _regenerate_aliased(t):
    """After an in-place change through t, a detach()ed alias: the views of the tensor it was detached from (see
    views.aliased_root)."""
    root = views.aliased_root(t)
    if root is not None:
        _regenerate_views(root)


def _keeping_tangents(self, fn, args, op):
    """Forward-mode AD: the op reads self with its tangents, and self takes the result's tangents."""
    result = []

    def traced(s, *a):
        if self._fw_grads:
            s._fw_grads = dict(self._fw_grads)
        out = fn(s, *a)
        result.append(out)
        return out
    traced._keeps_tangents = True
    apply_inplace(self, traced, *args, op=op)
    self._fw_grads = result[0]._fw_grads if result else None
    base = self._base
    idx = _view_index(self, base) if base is not None and self._fw_grads else None
    if idx is not None:  # a view was written to: so was its base, at the view's positions
        grads = dict(base._fw_grads or {})
        for level, t in self._fw_grads.items():
            bt = grads.get(level)
            if bt is None:  # (a zero of the base's dtype when the view's is another: z.real)
                bt = Tensor._make(np.zeros(base._data.shape, base._data.dtype if _kind(t._data, base._data) else
                                           t._data.dtype))
            grads[level] = CopySlices.apply(bt, t, idx)
        base._fw_grads = grads
    return self


def _check_overlap(self, other, op):
    """torch refuses an input that partly overlaps the tensor written to (all of it is fine)."""
    a, b = self._data, other._data
    same = (a.__array_interface__["data"][0] == b.__array_interface__["data"][0] and a.shape == b.shape
            and a.strides == b.strides)
    if not same and np.shares_memory(a, b):
        raise RuntimeError("unsupported operation: some elements of the input tensor and the written-to tensor "
                           "refer to a single memory location. Please clone() the tensor before performing the "
                           f"operation. ({op})")


def _inplace_on_view(self, base, fn, args, op):
    idx = _check_view_inplace(self, base, op)
    base_alias = _alias(base)
    if base._requires_grad:
        view_old = _view_at(base_alias, idx, _kind(self._data, base._data))
    else:
        view_old = Tensor._make(self._data.copy())
    out = fn(view_old, *args)
    _write(self, _checked(self, out._data, op))
    _redirect_saved(out, self)
    _copy_slices(base, base_alias, out, idx, view_old)
    if self.grad_fn is not None:
        _saved_with_view_history(out.grad_fn, self)
    _regenerate_aliased(base)
    return self


def _check_view_inplace(self, base, op):
    """torch's refusals for an in-place op on a view; the view's positions in its base."""
    check_view_rebase(self, base, op)
    idx = _view_index(self, base)
    if idx is None:
        raise RuntimeError(
            f"{op} on a view whose elements cannot be located in its base (a view with another dtype, or a "
            "base whose .data was replaced) is not supported while autograd records the graph; apply the op "
            "out of place, or do it on x.clone().")
    return idx


def check_view_rebase(self, base, op):
    """torch's refusals of an in-place op on the view `self` of `base` (its handle_view_on_rebase, then its check
    of a view of a leaf), for any in-place op, the in-place view ops (t_, squeeze_...) included."""
    if self._view_custom:
        raise RuntimeError(
            f"{_output_of(self)} is a view and is being modified inplace. This view was created inside a custom "
            "Function (or because an input was returned as-is) and the autograd logic to handle view+inplace would "
            "override the custom backward associated with the custom Function, leading to incorrect gradients. "
            "This behavior is forbidden. You can fix this by cloning the output of the custom Function.")
    if self._view_multi:
        if self._view_nograd or not base._requires_grad:
            raise RuntimeError(
                "A view was created in no_grad mode and is being modified inplace with grad mode enabled. This "
                "view is the output of a function that returns multiple views. Such functions do not allow the "
                "output views to be modified inplace. You should replace the inplace operation by an "
                "out-of-place one.")
        raise RuntimeError(
            f"{_output_of(self)} is a view and is being modified inplace. This view is the output of a function that "
            "returns multiple views. Such functions do not allow the output views to be modified inplace. You should "
            "replace the inplace operation by an out-of-place one.")
    if self._view_nograd:
        raise RuntimeError(_nograd_view(self, "is being modified inplace"))
    _check_view_of_leaf(self, op)


def _output_of(v):
    """"Output 0 of Split": which output of which op the view v is, as torch's errors name it"""
    return f"Output {v._output_nr} of {_short_name(Tensor.grad_fn.__get__(v))}"


def _nograd_view(v, what):
    """torch's error for the view v (made under no_grad, or a view of such a view) that `what` (is being modified
    inplace, or its base was)"""
    made = f"{_output_of(v)} is a view of a view which was created in" if Tensor.grad_fn.__get__(v) is not None \
        else "A view was created in"
    return (f"{made} no_grad mode and {what} with grad mode enabled. Given that this use case is ambiguous and "
            "error-prone, it is forbidden. You can clarify your code by moving both the view and the inplace either "
            "both inside the no_grad block (if you don't want the inplace to be tracked) or both outside (if you want "
            "the inplace to be tracked).")


def regenerate_after_view_op(t, recorded):
    """After an in-place view op (t_, squeeze_...) on t: t's root and every view of it see a new version, so
    torch regenerates their histories (as it does when it next reads their grad_fn); t itself keeps the node
    the op gave it when one was recorded (torch sets it, it does not rebase it)."""
    root = t._base if t._base is not None else t
    if root._views and root._requires_grad:
        _regenerate_views(root, skip=t if recorded else None)
    _regenerate_aliased(t)


def _copy_slices(base, base_alias, out, idx, view_old=None):
    """The base's new history: its old one with the view's elements replaced by `out` (computed
    from view_old, the view's old value, by an in-place op that CopySlices then keeps inside)."""
    new_base = CopySlices.apply(base_alias, out, idx)
    if view_old is not None:
        fold_op(new_base.grad_fn, out, view_old)
    old, old_nr = base.grad_fn, base._output_nr
    base.grad_fn, base._output_nr, base._requires_grad = new_base.grad_fn, 0, True
    _move_retain(base, old, old_nr)
    _regenerate_views(base)


def rebase_dirty(t, name):
    """A custom Function modified t in place (ctx.mark_dirty) and t has its node as grad_fn:
    rewrite the history of t's base (t is a view) or regenerate t's views."""
    base = t._base
    if base is None:
        _regenerate_views(t)
        return
    idx = _check_view_inplace(t, base, name)
    node, nr = t.grad_fn, t._output_nr
    out = Tensor._make(t._data)
    out.grad_fn, out._output_nr, out._requires_grad = node, nr, True
    _copy_slices(base, _alias(base), out, idx)


views.on_dirty_view(rebase_dirty)


def _short_name(node):
    import re
    return re.sub(r"Backward\d*$", "", node.name()) if node is not None else "a function"


def _checked(self, values, op):
    """values broadcast and cast to self's shape and dtype, or torch's error."""
    if values.shape != self._data.shape:
        try:
            ok = np.broadcast_shapes(values.shape, self._data.shape) == self._data.shape
        except ValueError:
            ok = False
        if not ok:
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                               f"{list(values.shape)} ({op} cannot change the shape of the tensor it writes to)")
        values = np.broadcast_to(values, self._data.shape)
    if not self._data.flags.writeable and op not in ("fill_", "zero_") and self._data.size and any(
            st == 0 and n > 1 for st, n in zip(self._data.strides, self._data.shape)):  # torch's "internal overlap"
        if op in ("masked_fill_", "index_fill_"):  # (torch still allows these two, with a warning)
            warnings.warn(f"Use of {op} on expanded tensors is deprecated. Please clone() the tensor before "
                          "performing this operation. This also applies to advanced indexing e.g. tensor[mask] = "
                          "scalar", UserWarning, stacklevel=4)
        else:
            raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                               f"single memory location. Please clone() the tensor before performing the operation. "
                               f"({op} on an expanded tensor)")
    if values.dtype != self._data.dtype:
        if can_cast(values.dtype, self._data.dtype):
            values = cast(values, self._data.dtype)
        else:
            raise RuntimeError(f"result type {_type_name(values.dtype)} can't be cast to the desired output type "
                               f"{_type_name(self._data.dtype)} ({op})")
    return values


_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def can_cast(src, dst):
    """torch's rule for writing a result of numpy dtype src into a tensor of dtype dst: within the same category
    or up (int64 into uint8 wraps, float64 into float16 rounds), never down (a float into an integer tensor, an
    integer into a bool one)."""
    return _CATEGORY[src.kind] <= _CATEGORY[dst.kind]


def _type_name(np_dtype):
    names = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long", "int32": "Int",
             "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool", "complex64": "ComplexFloat",
             "complex128": "ComplexDouble"}
    return names.get(_dtype.from_numpy_dtype(np_dtype).name, str(np_dtype))


def _alias_to_write(a):
    """A writable array over the read-only array a's memory, where no element of a shares its memory with another
    (no zero stride over a dim of more than one); else None."""
    if type(a) is not np.ndarray or any(st == 0 and n > 1 for st, n in zip(a.strides, a.shape)):
        return None
    return writable_alias(a)


def _write(self, values):
    if self.is_meta:  # no data to write (torch's meta fill_ only counts a version)
        pass
    elif self._data.flags.writeable:
        self._data[...] = values
    elif (alias := _alias_to_write(self._data)) is not None:  # a view of an expand() with no element twice
        alias[...] = values
    else:  # an expand(): into the base's memory, at the view's positions (fill_: repeats get the same value)
        root = self._base if self._base is not None else self
        idx = _view_index(self, root)
        if idx is None or not root._data.flags.writeable:
            raise RuntimeError(f"fill_ of a read-only tensor of shape {list(self.shape)}: clone() it first")
        values = np.broadcast_to(values, idx.shape)
        if root._data.ndim:  # (only the positions that change: a masked fill leaves the others, which may share
            changed = values != self._data  # memory with a filled one, alone)
            root._data[np.unravel_index(idx[changed], root._data.shape)] = values[changed]
        elif idx.size:  # a 0-d base (a norm, expanded): every position is its one element, the last write stays
            root._data[()] = values.flat[-1]
    self._version_counter[0] += 1


def _rebase(self, out):
    """self takes out's place in the graph; saved copies of out now track self's version."""
    old, old_nr = self.grad_fn, self._output_nr
    self.grad_fn, self._output_nr, self._requires_grad = out.grad_fn, out._output_nr, out._requires_grad
    _redirect_saved(out, self)
    _move_retain(self, old, old_nr)


def _redirect_saved(out, self):
    node = out.grad_fn
    saved = getattr(node, "_saved", None) if node is not None else None
    if saved:
        for s in saved:
            if getattr(s, "counter", None) is out._version_counter:
                s.data = self._data
                s.counter = self._version_counter
                s.version = self._version_counter[0]


class _SavedOnView(SavedTensor):
    """The result an in-place op on a view saved: torch unpacks it with the view's history (the grad_fn the view
    was given after the op, over the base's CopySlices), not with the op's own node, so that a double backward
    reaches that op once, through CopySlices (fuzz seed 438580). Kept weakly, as torch's: if it is gone, the op's
    node, as for any other saved result."""
    __slots__ = ("view_node",)

    def unpack(self, node):
        t = SavedTensor.unpack(self, node)
        view_node = self.view_node()
        if view_node is not None and t.grad_fn is node:
            t.grad_fn, t._output_nr = view_node, 0
        return t


def _saved_with_view_history(node, view):
    saved = getattr(node, "_saved", None) if node is not None else None
    for i, s in enumerate(saved or ()):
        if type(s) is SavedTensor and s.output_nr >= 0 and s.counter is view._version_counter:
            on_view = saved[i] = _SavedOnView.__new__(_SavedOnView)  # (the list CopySlices shares: see fold_op)
            for name in SavedTensor.__slots__:
                setattr(on_view, name, getattr(s, name))
            on_view.view_node = weakref.ref(view.grad_fn)


# ---- the ops that only exist in place ----------------------------------------------------------
class Zero(Op):
    """x.zero_(): the gradient is zero"""
    _grad_fn_name = "ZeroBackward0"

    @staticmethod
    def forward(ctx, x):
        return np.zeros_like(x)

    @staticmethod
    def backward(ctx, grad):
        return _zeros(grad)

    @staticmethod
    def jvp(ctx, t):
        return _zeros(t)


def _zeros(grad):
    return Tensor._make(np.zeros_like(grad._data))


class Fill(Op):
    """x.fill_(value): the gradient is zero"""
    _grad_fn_name = "FillBackward2"

    @staticmethod
    def forward(ctx, x, value):
        return np.full_like(x, value)

    @staticmethod
    def backward(ctx, grad):
        return _zeros(grad), None

    @staticmethod
    def jvp(ctx, t, _value):
        return _zeros(t)


class FillTensor(Op):
    """x.fill_(value) with a 0-dim tensor: x's gradient is zero, value's is the sum"""
    _grad_fn_name = "FillBackward3"

    @staticmethod
    def forward(ctx, x, value):
        return np.full_like(x, value)

    @staticmethod
    def backward(ctx, grad):
        return _zeros(grad), grad.sum() if ctx.needs_input_grad[1] else None

    @staticmethod
    def jvp(ctx, t, tvalue):
        return FillTensor.apply(t, tvalue)


class Copy(Op):
    """x.copy_(src): x's gradient is zero, src's is the gradient (summed back if broadcast)"""
    _grad_fn_name = "torch::autograd::CopyBackwards"

    @staticmethod
    def forward(ctx, x, src):
        return cast(np.broadcast_to(src, x.shape), x.dtype)  # (a copy, converted as torch converts)

    @staticmethod
    def backward(ctx, grad):
        return _zeros(grad), grad if ctx.needs_input_grad[1] else None

    @staticmethod
    def jvp(ctx, t, tsrc):
        return Copy.apply(t, tsrc)


class IndexPut(Op):
    """x with x[index] = v: x's gradient is zero at index, v's is the gradient there. As torch's node it saves the
    key's index tensors (`_saved_indices`; the user's own where the key holds them: see setitem)."""
    _grad_fn_name = "IndexPutBackward0"
    _saved_values = {"indices": SavedList("slots"), "accumulate": "accumulate"}

    @staticmethod
    def forward(ctx, x, v, key):
        from .index import save_index_arrays
        key = save_index_arrays(ctx, key)
        ctx.key, ctx.v_shape, ctx.accumulate = key, v.shape, False
        out = x.copy()
        out[key] = v
        return out

    @staticmethod
    def backward(ctx, grad):
        from .index import getitem, masked_fill, saved_index
        from .shape import sum_to
        key = saved_index(ctx, ctx.key)  # (a freed node raises; an index changed in place too)
        gx = gv = None
        if ctx.needs_input_grad[0]:
            mask = np.zeros(grad.shape, dtype=bool)
            mask[key] = True
            gx = masked_fill(grad, Tensor._make(mask), 0.0)
        if ctx.needs_input_grad[1]:
            keys = key if isinstance(key, tuple) else (key,)  # (x[idx] = v keeps a bare array)
            sub = getitem(grad, tuple(Tensor._make(k) if isinstance(k, np.ndarray) else k for k in keys))
            gv = sum_to(sub, ctx.v_shape) if sub.shape != tuple(ctx.v_shape) else sub
        return gx, gv, None

    @staticmethod
    def jvp(ctx, t, tv, _key):
        return IndexPut.apply(t, tv, ctx.key)


def _as_value(self, value):
    if isinstance(value, (bool, int, float, complex)):
        from .index import fill_scalar
        if isinstance(value, int) and not -2 ** 63 <= value < 2 ** 63:
            raise ValueError(f"Overflow when unpacking long long (x[idx] = v: {value} does not fit in 64 bits)")
        # (torch converts x[idx] = v into float16 without the range check of its other fills: 70000 is inf)
        return Tensor._make(np.asarray(fill_scalar(value, self.dtype, "x[idx] = v", self.dtype.name != "float16")))
    if not isinstance(value, Tensor):
        return Tensor._make(np.asarray(value, dtype=self._data.dtype))
    if value._data.dtype != self._data.dtype:
        return value.to(self.dtype) if value._requires_grad else Tensor._make(cast(value._data, self._data.dtype))
    return value


def setitem(self, key, value):
    """x[key] = value, as torch does it: basic indexing writes through a view of x (CopySlices),
    advanced indexing is index_put_ on x."""
    from .index import (_check_bounds, _check_zero_dim_key, _to_np_index, getitem, legacy_tuple, refuse_byte_fill,
                        warn_byte_mask)
    if key is False:  # (torch writes nothing and records nothing: only the value's type is checked)
        if not isinstance(value, Tensor):
            _as_value(self, value)
        return
    _check_mutable(self, "x[idx] = v")
    if type(key) is tuple and _plain_element_write(self, key, value):
        return
    key = legacy_tuple(key)
    if not isinstance(key, tuple):
        _check_zero_dim_key(self, key)
    given = key if isinstance(key, tuple) else (key,)
    key = tuple(_to_np_index(k, warn=False) for k in given)
    _check_bounds(self, key)  # (torch checks a mask's shape first, then warns of a uint8 one)
    refuse_byte_fill([k for k in given if isinstance(k, Tensor) and k.ndim or isinstance(k, (list, np.ndarray))], value)
    for k in given:
        warn_byte_mask(k)
    if any(isinstance(k, np.ndarray) or getattr(k, "__vmap_batched__", False) for k in key):  # (vmap: batched)
        value = _without_leading_ones(_as_value(self, value), self._data[key].ndim)
        try:
            np.broadcast_to(value._data, self._data[key].shape)
        except ValueError:
            raise RuntimeError(f"shape mismatch: value tensor of shape {list(value.shape)} cannot be broadcast "
                               f"to indexing result of shape {list(self._data[key].shape)}") from None
        basic = _takes_a_view(key, self.shape)
        # the user's index tensors themselves go in the key: IndexPut saves them (torch checks their version)
        key = tuple(g if isinstance(g, Tensor) and g._data is k else k for k, g in zip(key, given))
        np_key = key if basic else _torch_indices(key, self.ndim)
        np_key = np_key[0] if len(np_key) == 1 else np_key
        target = getitem(self, (Ellipsis,)) if basic else self
        apply_inplace(target, lambda s, v: IndexPut.apply(s, v, np_key), value, op="index assignment (x[idx] = v)")
        return
    full = all(k is Ellipsis or (isinstance(k, slice) and k == slice(None)) for k in key)
    target = self if full else getitem(self, key)
    value = _without_leading_ones(value, target.ndim)
    if not isinstance(value, Tensor) or value.ndim == 0:  # (a copy in torch: refused where elements repeat)
        _fill_as(target, _as_value(self, value), "x[idx] = v")
    else:
        if value._data.shape != target._data.shape:  # (torch expands the value to the slice: expand's errors)
            from .shape import expanded_shape
            expanded_shape(value, target._data.shape)
        _copy(target, value)


def _plain_element_write(self, key, value):
    """x[i, j] = v for Python ints and a number (or a 0-d tensor of x's dtype) where nothing records: written
    straight into x's memory, one version counted, as the general path does through a view and fill_. False
    where the general path is needed (a gradient to track, views to rebuild, a tangent, an alias)."""
    from .index import plain_element_view
    if isinstance(value, Tensor):
        if type(value) is not Tensor or value._data.ndim or value._requires_grad or value._fw_grads or \
                value._data.dtype != self._data.dtype:
            return False
        value = value._data
    elif type(value) is not float and not (type(value) is int and -2 ** 63 <= value < 2 ** 63):
        return False
    base = self._base if self._base is not None else self
    if base._requires_grad or self._requires_grad or len(self._version_counter) > 1 or \
            not self._data.flags.writeable or plain_element_view(self, key) is None:
        return False
    from .index import fill_scalar
    self._data[key] = value if isinstance(value, np.ndarray) else \
        fill_scalar(value, self.dtype, "x[idx] = v", self.dtype.name != "float16")
    self._version_counter[0] += 1
    return True


def _without_leading_ones(value, ndim):
    """value viewed without its leading size-1 dims where it has more dims than the target (torch's setitem views
    the value so, slicePrefix1sSize): x[i] = v takes a v of shape (1, 1) for a 0-d x[i]."""
    if not isinstance(value, Tensor) or value.ndim <= ndim or value.shape[0] != 1:
        return value
    ones = next((d for d, n in enumerate(value.shape) if n != 1), value.ndim)
    return value.view(value.shape[ones:])


def _takes_a_view(key, shape):
    """Whether torch applies a basic part of this key (numpy's) as a view of x before index_put_, so that x's node is
    CopySlices: an integer, None, a bool (torch's unsqueeze), or a slice not spanning its dim (torch skips `0:`, `::1`
    or `:5` of 3)."""
    from .index import _is_full_slice
    if any(k is None or isinstance(k, (int, np.integer)) or getattr(k, "shape", None) == () and k.dtype == bool
           for k in key):
        return True
    dim = 0
    for k in key:
        if k is Ellipsis:
            dim += len(shape) - _dims_indexed(key)
        elif isinstance(k, slice):
            if not _is_full_slice(k, shape[dim]):
                return True
            dim += 1
        else:
            dim += _dims_indexed((k,))
    return False


def _dims_indexed(key):
    """how many dims of x a key of slices, index arrays (or tensors) and an ellipsis names: a mask names its dims"""
    data = [k._data if isinstance(k, Tensor) else k for k in key if k is not Ellipsis]
    return sum(len(a.shape) if getattr(a, "dtype", None) == bool else 1 for a in data)


def _torch_indices(key, ndim):
    """A key of index tensors, full slices and an ellipsis as torch's list of indices (IndexPutBackward0's
    `_saved_indices`, None for a slice): the ellipsis spelled out as full slices, nothing after the last index.
    numpy reads both keys alike."""
    out = []
    for k in key:
        out += [slice(None)] * (ndim - _dims_indexed(key)) if k is Ellipsis else [k]
    while isinstance(out[-1], slice):
        out.pop()
    return tuple(out)


def _copy(self, other, non_blocking=False):
    src = other if isinstance(other, Tensor) else Tensor._make(np.asarray(other))
    if src._data.shape != self._data.shape:
        _check_copy_shapes(self._data.shape, src._data.shape)
    return apply_inplace(self, Copy.apply, src, op="copy_")


def _check_copy_shapes(out, src):
    """torch's errors for copy_ of a src that does not broadcast to self's shape (its TensorIterator's: the last
    dim that does not match, or a broadcast shape other than self's)."""
    n = max(len(out), len(src))
    a, b = (1,) * (n - len(out)) + tuple(out), (1,) * (n - len(src)) + tuple(src)
    for d in reversed(range(n)):
        if a[d] != b[d] and a[d] != 1 and b[d] != 1:
            raise RuntimeError(f"The size of tensor a ({a[d]}) must match the size of tensor b ({b[d]}) at "
                               f"non-singleton dimension {d} (copy_ broadcasts the source to {list(out)})")
    wide = [x if y == 1 else y for x, y in zip(a, b)]  # (a size 0 broadcasts with 1 to 0)
    if tuple(wide) != tuple(out):
        raise RuntimeError(f"output with shape {list(out)} doesn't match the broadcast shape {wide}")


def _zero(self):
    return apply_inplace(self, Zero.apply, op="zero_")


def _fill(self, value):
    return _fill_as(self, value, "fill_")


def _fill_as(self, value, op):
    check_int_range((value,), None, op)
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} "
                               "dimensions.")
        return apply_inplace(self, FillTensor.apply, value, op=op)
    if isinstance(value, (bool, int, float, complex)):  # (torch's checked conversion: fill_(nan) of ints raises)
        from .index import fill_scalar
        # (torch fills a one-element half tensor unchecked: a value beyond its range is inf there)
        value = fill_scalar(value, self.dtype, op, float_range=self.dtype.name != "float16" or self.numel() != 1)
    return apply_inplace(self, lambda s: Fill.apply(s, value), op=op)


def check_int_range(args, kwargs, op):
    """torch reads an integer argument as a 64-bit one (unsigned from 2**63 on): a larger one is its OverflowError,
    before anything else about the call is looked at (t.add_(2**70) on a float tensor too)."""
    for x in (*args, *kwargs.values()) if kwargs else args:
        if type(x) is int and not -2 ** 63 <= x < 2 ** 64:
            words = "int too big to convert" if x > 0 else "can't convert negative int to unsigned"
            raise OverflowError(f"{op}(): {words} ({x}: torch takes a 64-bit integer here, from -2**63 to 2**64 - 1)")


def _binary(fn, name):
    """x.op_(...) taking the out-of-place op's own parameter names (torch's), by position or keyword."""
    if name.startswith("__"):  # x += y: one operand, which torch names other
        def method(self, other):
            if type(other) is int:
                check_int_range((other,), None, name)
            return apply_inplace(self, fn, other, op=name)
        method.__name__ = name
        return method

    def method(self, *args, **kwargs):
        check_int_range(args, kwargs, name)
        if kwargs and any(isinstance(v, Tensor) for v in kwargs.values()):
            return _with_tensor_keywords(self, fn, args, kwargs, name)
        return apply_inplace(self, lambda s, *a: fn(s, *a, **kwargs), *args, op=name)
    method.__name__ = name
    return method


def _with_tensor_keywords(self, fn, args, kwargs, name):
    # tensors passed by keyword go through apply_inplace too: it tracks, checks overlap and tangents per input
    names = [k for k, v in kwargs.items() if isinstance(v, Tensor)]
    rest = {k: v for k, v in kwargs.items() if k not in names}

    def call(s, *a):
        return fn(s, *a[:len(args)], **rest, **dict(zip(names, a[len(args):])))
    return apply_inplace(self, call, *args, *(kwargs[k] for k in names), op=name)


# ops whose result is a float even for integer operands (x_int.atan2_(y_int) is refused for the cast)
_FLOAT_RESULT = {"atan2", "arctan2", "xlogy", "copysign", "ldexp", "igamma", "igammac"}
_TENSOR_OTHER = {"atan2", "arctan2", "gcd", "lcm", "ldexp", "hypot", "nextafter", "igamma", "igammac"}  # (no numbers)


def cast_error(self, other, op):
    """torch's RuntimeError when the result of the in-place op `op` of self and other cannot be written into self
    (x_int.fmod_(1j), x_bool.hypot_(y_int)), or None. torch checks this before it looks for a kernel."""
    name = op.strip("_")
    if not isinstance(other, Tensor if name in _TENSOR_OTHER else (Tensor, bool, int, float, complex)) \
            or name in ("clamp_min", "clamp_max") and isinstance(other, complex):
        return None  # (torch's TypeError for the argument, or clamp's refusal of a complex bound, comes first)
    dt = _dtype.result_type(self, other)
    if name in _FLOAT_RESULT and not (dt.is_floating_point or dt.is_complex):
        dt = _dtype.get_default_dtype()
    if can_cast(dt.np, self._data.dtype):
        return None
    return RuntimeError(f"result type {_type_name(dt.np)} can't be cast to the desired output type "
                        f"{_type_name(self._data.dtype)} ({op}); write into a tensor of that dtype, or convert the "
                        "other operand first")


def cast_checked(method):
    """method, an in-place op, checking first that its result dtype can be written into self (cast_error)."""
    @functools.wraps(method)  # (the argument checks read method's parameters)
    def inplace(self, *args, **kwargs):
        check_int_range(args, kwargs, method.__name__)
        named = kwargs.keys() <= {"other", "exponent"}  # (torch's names; any other call: method's TypeError)
        if named and len(args) + len(kwargs) == 1:
            err = cast_error(self, args[0] if args else next(iter(kwargs.values())), method.__name__)
            if err is not None:
                raise err
        return method(self, *args, **kwargs)
    return inplace


def _unary(fn, name):
    def method(self, *args, **kwargs):
        check_int_range(args, kwargs, name)
        return apply_inplace(self, lambda s: fn(s, *args, **kwargs), op=name)
    method.__name__ = name
    return method


def real_abs(method):
    """abs_ refuses a complex tensor, as torch's (|z| is real: it cannot be written back into z's dtype's place)"""
    @functools.wraps(method)
    def abs_(self, *args, **kwargs):
        if self._data.dtype.kind == "c":
            raise RuntimeError(f"In-place abs is not supported for complex tensors. ({method.__name__}: use "
                               "z.abs(), out of place)")
        return method(self, *args, **kwargs)
    return abs_


def install(cls):
    from . import elementwise as ew
    from .index import masked_fill
    methods = {
        "add_": _binary(lambda s, other, alpha=1: ew.add(s, other, alpha=alpha), "add_"),
        "sub_": _binary(lambda s, other, alpha=1: ew.sub(s, other, alpha=alpha), "sub_"),
        "mul_": _binary(ew.mul, "mul_"), "div_": _binary(ew.div, "div_"),
        "pow_": cast_checked(_binary(ew.pow, "pow_")),
        "__iadd__": _binary(ew.add, "__iadd__"), "__isub__": _binary(ew.sub, "__isub__"),
        "__imul__": _binary(ew.mul, "__imul__"), "__itruediv__": _binary(ew.div, "__itruediv__"),
        "__ipow__": cast_checked(_binary(ew.pow, "__ipow__")),  # (x **= 1j: the cast is refused first)
        "clamp_": _unary(ew.clamp, "clamp_"), "clip_": _unary(ew.clamp, "clip_"),
        "relu_": _unary(ew.relu, "relu_"), "sigmoid_": _unary(ew.sigmoid, "sigmoid_"),
        "tanh_": _unary(ew.tanh, "tanh_"), "exp_": _unary(ew.exp, "exp_"), "neg_": _unary(ew.neg, "neg_"),
        "abs_": real_abs(_unary(ew.abs, "abs_")),
        "sqrt_": _unary(ew.sqrt, "sqrt_"), "log_": _unary(ew.log, "log_"),
        "sin_": _unary(ew.sin, "sin_"), "cos_": _unary(ew.cos, "cos_"), "square_": _unary(ew.square, "square_"),
        "reciprocal_": _unary(ew.reciprocal, "reciprocal_"),
        "masked_fill_": _binary(masked_fill, "masked_fill_"),
        "zero_": _zero, "fill_": _fill, "copy_": _copy,
    }
    for name, ufunc in (("add_", np.add), ("sub_", np.subtract), ("__iadd__", np.add), ("__isub__", np.subtract)):
        methods[name] = straight_into_self(ufunc, methods[name])  # (when nothing records them: ops/inplace_kernels.py)
    for name in ("mul_", "__imul__"):
        methods[name] = scaled_in_place(methods[name])
    for name, fn in methods.items():
        setattr(cls, name, fn)
