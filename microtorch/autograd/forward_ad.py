"""Forward-mode AD (torch.autograd.forward_ad): a dual tensor carries a tangent beside its value,
and every op pushes the tangent forward, with its `jvp` rule, as it computes.

    with forward_ad.dual_level():
        x = forward_ad.make_dual(primal, tangent)
        y = f(x)
        value, jvp = forward_ad.unpack_dual(y)      # jvp = J_f(primal) @ tangent

A tangent is kept in `tensor._fw_grads[level]`. While a level is open, `_forward_hook` sits in
`Function.apply`: it runs the op as usual, then calls the op's `jvp(ctx, *tangents)` (one
tangent per positional argument: a `ZeroTangent` where a tensor has none, an exact zero in the
rule's arithmetic as torch's zero tensors are) with `ctx.inputs` (forward's arguments; one that
requires grad is read through torch's node for a primal, torch::autograd::Identity, or AliasBackward0
under func.jvp, so that a tangent's graph is torch's) and `ctx.output` set. jvp rules are written in
ordinary ops, so

- levels nest (`func.jvp` inside `func.jvp`): the tangent computed at an inner level carries
  its own tangents at the outer ones, which gives derivatives of derivatives;
- reverse mode composes: tensors saved for backward keep their tangents, so a gradient
  computed from a dual gets a tangent too (forward-over-reverse: Hessian-vector products).
"""
import itertools
from collections import namedtuple

import numpy as np

from .._tensor import Tensor
from ..ops import _zero_tangent as _zero
from ..ops.shape import Alias, View
from . import extension, function, grad_mode
from .node import accumulator

_levels = []                  # the open levels, innermost last
_func_levels = set()          # those of them that func.jvp opened (torch's functorch reads primals otherwise)
_next_level = itertools.count()

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])


# ---- levels ---------------------------------------------------------------------------------
def enter_dual_level():
    """Open a level for dual tensors and return it (prefer `with dual_level():`)."""
    if _levels:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    return _enter()


def exit_dual_level(*, level=None):
    """Close a level: tangents recorded at it are dropped."""
    if not _levels or (level is not None and level != _levels[-1]):
        raise RuntimeError(f"Trying to exit a forward AD level that was not the last one that was created "
                           f"(level {level}, open levels {_levels}). This is not supported.")
    _exit(_levels[-1])


def _enter(functorch=False):
    """A new level, nested inside the open ones (func.jvp nests them: functorch)."""
    level = next(_next_level)
    _levels.append(level)
    if functorch:
        _func_levels.add(level)
    function.intercept(_forward_hook)
    return level


def _exit(level):
    _levels.remove(level)
    _func_levels.discard(level)
    if not _levels:
        function.stop_intercepting(_forward_hook)


class dual_level:
    """Context manager for a forward AD level: `with dual_level(): ...` (returns the level)."""

    def __enter__(self):
        self.level = enter_dual_level()
        return self.level

    def __exit__(self, *exc):
        exit_dual_level(level=self.level)


def _current(level, what):
    if level is None:
        if not _levels:
            return None
        return _levels[-1]
    if level not in _levels:
        raise RuntimeError(f"{what}: forward AD level {level} is not open (open levels: {_levels})")
    return level


# ---- dual tensors ---------------------------------------------------------------------------
def make_dual(tensor, tangent, *, level=None):
    """A view of `tensor` that carries `tangent` at the given (default: innermost) level."""
    lvl = _current(level, "make_dual")
    if lvl is None:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    if not isinstance(tensor, Tensor) or not isinstance(tangent, Tensor):
        raise TypeError(f"make_dual: expected Tensors, got {type(tensor).__name__} and {type(tangent).__name__}")
    if not (tensor.dtype.is_floating_point or tensor.dtype.is_complex):
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not (tangent.dtype.is_floating_point or tangent.dtype.is_complex):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    if tensor.shape != tangent.shape:
        raise RuntimeError(f"Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size {list(tensor.shape)} while the given "
                           f"forward gradient is of size {list(tangent.shape)}.")
    if type(tensor._data) is not np.ndarray or type(tangent._data) is not np.ndarray:
        return extension.transforms().make_dual(tensor, tangent, lvl)  # batched by vmap: duals go onto the batch underneath
    return _make_dual_plain(tensor, tangent, lvl)


def _make_dual_plain(tensor, tangent, lvl):
    if tangent._data.strides != tensor._data.strides and tangent._data.size > 1:  # as torch: the tangent's values
        from ..ops.inplace import _copy                                          # in the primal's layout
        tangent = _copy(Tensor._make(np.empty_like(tensor._data, dtype=tangent._data.dtype)), tangent)
    out = _view(tensor, _Alias if lvl in _func_levels else View)
    grads = dict(out._fw_grads or {})
    grads[lvl] = _strip(tangent, lvl)
    out._fw_grads = grads
    return out


def unpack_dual(tensor, *, level=None):
    """(primal, tangent): the value without its tangent at the level, and the tangent (or None)."""
    lvl = _current(level, "unpack_dual")
    if lvl is None or not isinstance(tensor, Tensor):
        return UnpackedDualTensor(tensor, None)
    if type(tensor._data) is not np.ndarray:
        return extension.transforms().unpack_dual(tensor, lvl)
    return UnpackedDualTensor(_strip(tensor, lvl), tangent_at(tensor, lvl))


def tangent_at(t, level):
    """t's tangent at `level`, or None."""
    grads = t._fw_grads if isinstance(t, Tensor) else None
    return grads.get(level) if grads else None


def _view(t, cls):
    """A new tensor on t's data with t's history and tangents (a view when t requires grad, as torch's make_dual
    returns: ViewBackward0, or AliasBackward0 under func.jvp)."""
    if t._requires_grad:
        return cls.apply(t, t._data.shape)
    out = Tensor._make(t._data)
    out._version_counter = t._version_counter
    if t._fw_grads:
        out._fw_grads = dict(t._fw_grads)
    return out


def _strip(t, level):
    """t as seen below `level`: the same data and autograd history, without its tangents at
    `level` and above. (The alias shares t's node, so gradients still flow to t.)"""
    grads = t._fw_grads if isinstance(t, Tensor) else None
    if not grads or all(lv < level for lv in grads):
        return t
    alias = Tensor._make(t._data, t._requires_grad)
    alias._version_counter = t._version_counter
    alias.grad_fn, alias._output_nr = t.grad_fn, t._output_nr
    if t._requires_grad and t.grad_fn is None:  # a leaf: share its AccumulateGrad node
        alias._keep_accumulator = accumulator(t)
        alias._accumulator = t._accumulator
    kept = {lv: g for lv, g in grads.items() if lv < level}
    if kept:
        alias._fw_grads = kept
    return alias


def _is_diff_array(a):
    """A numpy operand that takes part in a rule as a tensor: a floating one, or a number wrapped as a 0-d array of
    its own dtype (torch's wrapped number, whose tangent is a zero of that dtype: int64 for mul(2, t))."""
    return isinstance(a, np.ndarray) and (a.dtype.kind in "fc" or a.ndim == 0 and a.dtype.kind in "iub")


def _zero_tangent(a, cls):
    """The tangent of an input that has none: for a built-in op's rule an exact zero (ops/_zero_tangent.py), for a
    custom Function's jvp plain zeros (torch materializes them there)."""
    data = a._data if isinstance(a, Tensor) else a
    if getattr(cls, "_numpy_forward", False):
        return _zero.zeros(data.shape, data.dtype)
    return Tensor._make(np.zeros(data.shape, data.dtype))


class _Identity(Alias):
    """The primal as a jvp rule reads it, where it requires grad: torch's _fw_primal, a view whose node is
    torch::autograd::Identity (func.jvp's levels read it through AliasBackward0 instead)."""
    _grad_fn_name = "torch::autograd::Identity"

    @staticmethod
    def forward(ctx, x, shape):
        ctx.in_shape = x.shape
        return x  # (all of x's memory, as it is: no strides to work out)

    @staticmethod
    def backward(ctx, grad):
        return grad, None  # (the gradient itself: an exact zero stays one)


class _Alias(_Identity):
    """func.jvp's view: of its inputs, and of the primals its rules read (torch's functorch records AliasBackward0)"""
    _grad_fn_name = "AliasBackward0"


def _primal(a, level):
    """a as the rule at `level` sees it: without its tangents there and above, through torch's node for that."""
    if not isinstance(a, Tensor):
        return Tensor._make(a) if _is_diff_array(a) else a
    p = _strip(a, level)
    if not (p._requires_grad and grad_mode.is_grad_enabled()):
        return p
    out = (_Alias if level in _func_levels else _Identity).apply(p, tuple(p.shape))
    out._version_counter = p._version_counter
    return out


_UNREAD = object()


class _Primals:
    """ctx.inputs: forward's arguments as the rule at one level reads them (see _primal), each made when the rule
    first reads it, as torch makes a primal only for the formulas that use it."""
    __slots__ = ("_args", "_level", "_made")

    def __init__(self, args, level):
        self._args, self._level, self._made = args, level, [_UNREAD] * len(args)

    def __len__(self):
        return len(self._args)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return tuple(self[j] for j in range(*i.indices(len(self._args))))
        made = self._made[i]
        if made is _UNREAD:
            made = self._made[i] = _primal(self._args[i], self._level)
        return made

    def __iter__(self):
        return (self[i] for i in range(len(self._args)))


# ---- the hook in Function.apply -------------------------------------------------------------
def _forward_hook(cls, args, kwargs):
    levels = None
    for a in args:
        if isinstance(a, Tensor) and a._fw_grads:
            for lv in a._fw_grads:
                if lv in _levels:
                    levels = {lv} if levels is None else levels | {lv}
    if levels is None:
        return NotImplemented
    if cls.jvp is function.Function.jvp:
        if getattr(cls, "_numpy_forward", False):
            raise NotImplementedError(
                f"forward-mode AD: the op {cls.__name__} ({cls._backward_cls.__name__}) has no jvp rule yet; add "
                f"a `jvp(ctx, *tangents)` staticmethod beside its forward and backward")
        raise NotImplementedError(f"You must implement the jvp function for custom autograd.Function to use it "
                                  f"with forward mode AD ({cls.__name__} has none).")
    ctx = cls._backward_cls()
    out = function.run(cls, args, kwargs, ctx)
    outs = out if isinstance(out, tuple) else (out,)
    _saved_outputs_keep_tangents(ctx, outs)
    inputs = _positional(cls, args, kwargs)
    for level in sorted(levels):  # the outer levels first: an inner rule sees their tangents
        ctx.inputs = _Primals(inputs, level)
        ctx.output = out
        tangents = []
        for a in args:
            t = tangent_at(a, level)
            if t is None and (isinstance(a, Tensor) and (a.dtype.is_floating_point or a.dtype.is_complex)
                              or _is_diff_array(a)):
                t = _zero_tangent(a, cls)
            tangents.append(t)
        result = _call_jvp(cls, ctx, tangents)
        results = result if isinstance(result, tuple) else (result,)
        if len(results) != len(outs):
            raise RuntimeError(f"{cls.__name__}.jvp returned {len(results)} tangents for {len(outs)} outputs; "
                               "return one tangent (or None) per output of forward")
        for o, t in zip(outs, results):
            if t is None or not isinstance(o, Tensor) or not (o.dtype.is_floating_point or o.dtype.is_complex):
                continue
            if not isinstance(t, Tensor):
                raise TypeError(f"{cls.__name__}.jvp returned a {type(t).__name__} as a tangent; expected a Tensor")
            if t.shape != o.shape:
                raise RuntimeError(f"{cls.__name__}.jvp returned a tangent of shape {list(t.shape)} for an output of "
                                   f"shape {list(o.shape)}")
            grads = dict(o._fw_grads) if o._fw_grads else {}
            grads[level] = _zero.plain(t)
            o._fw_grads = grads
    ctx.inputs = ctx.output = None
    return out


_signatures = {}


def _positional(cls, args, kwargs):
    """forward's arguments in order, keyword ones included: what jvp rules read as ctx.inputs."""
    if not kwargs:
        return args
    sig = _signatures.get(cls)
    if sig is None:
        import inspect
        sig = _signatures[cls] = inspect.signature(cls.forward)
    with_ctx = cls._numpy_forward or not getattr(cls, "_has_setup_context", False)
    bound = sig.bind(*((None,) if with_ctx else ()), *args, **kwargs)
    bound.apply_defaults()
    return bound.args[1:] if with_ctx else bound.args


def _call_jvp(cls, ctx, tangents):
    """Custom Functions read what forward gave `ctx.save_for_forward` as `ctx.saved_tensors`."""
    if ctx._to_save_forward is None:
        return cls.jvp(ctx, *tangents)
    before = ctx._saved
    ctx._saved = [_Saved(t) for t in ctx._to_save_forward]
    try:
        return cls.jvp(ctx, *tangents)
    finally:
        ctx._saved = before


class _Saved:
    __slots__ = ("t",)

    def __init__(self, t):
        self.t = t

    def unpack(self, node):
        return self.t


def _saved_outputs_keep_tangents(ctx, outs):
    """An output saved for backward is normally rebuilt from its data (to avoid a reference
    cycle); point it at the output itself instead, so that backward sees its tangents."""
    saved = ctx._saved
    if not saved:
        return
    for s in saved:
        if getattr(s, "output_nr", -1) >= 0 and s.tensor is None and getattr(s, "packed", None) is None:
            s.tensor = outs[s.output_nr]
