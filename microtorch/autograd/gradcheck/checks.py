"""The extra reverse-mode checks: batched gradients (vmap), grad_outputs multiplied through, and
undefined (None) output gradients."""

import warnings

import numpy as np

from .. import engine
from ..function import BackwardFunction
from ..grad_mode import no_grad
from ..._tensor import Tensor
from .report import FAILED_BATCHED_GRAD_MSG, _Failure, _batched_msg
from .util import _allclose_mask, _as_tuple, _differentiable_outputs
from .numerical import _FAST_SEED
from .forward import _vmap


# ---- the remaining reverse-mode checks ----------------------------------------------------------
def _batched_grad(call, output, output_idx, res):
    """vmap over the vjp agrees with a loop over two random grad_outputs."""
    vmap = _vmap("check_batched_grad")
    from ...ops.shape import stack

    def vjp(v):
        grads = engine.grad(output, call.diff_tensors, v, retain_graph=True, allow_unused=True)
        return tuple(g if g is not None else Tensor._make(np.zeros(t._data.shape, t.dtype.np))
                     for g, t in zip(grads, call.diff_tensors))

    rng = np.random.default_rng(_FAST_SEED + 2 + output_idx)
    grad_outputs = []
    for _ in range(2):
        g = rng.standard_normal(output._data.shape)
        if output.is_complex():
            g = g + 1j * rng.standard_normal(output._data.shape)
        grad_outputs.append(Tensor._make(g.astype(output.dtype.np)))
    expected = [vjp(g) for g in grad_outputs]
    expected = [stack(list(shards)) for shards in zip(*expected)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = vmap(vjp)(stack(grad_outputs))
        except Exception as ex:  # noqa: BLE001 - torch catches RuntimeError; microtorch's vmap may raise others
            return res.fail(_Failure(f"While computing batched gradients, got: {ex}\n\n{FAILED_BATCHED_GRAD_MSG}",
                                     "batched_grad"))
    for input_idx, (r, e) in enumerate(zip(_as_tuple(result), expected)):
        if _allclose_mask(r._data, e._data, 1e-5, 1e-8).any():
            return res.fail(_Failure(_batched_msg(output_idx, input_idx, r, e), "batched_grad"))
    res.ok("batched_grad")


def _mul_by_grad_output(call, outputs, res):
    """With zero grad_outputs every input gradient must be zero (backward uses its grad)."""
    if not call.diff_tensors:
        return res.fail(_Failure("no Tensors requiring grad found in input", "mul_by_grad_output"))
    if outputs:
        zeros = tuple(Tensor._make(np.zeros(o._data.shape, o.dtype.np)) for o in outputs)
        grads = engine.grad(outputs, call.diff_tensors, zeros, allow_unused=True, retain_graph=True)
    else:
        grads = (None,) * len(call.diff_tensors)
    for gi, di in zip(grads, call.diff_tensors):
        if gi is None:
            continue
        if not np.all(gi._data == 0):
            return res.fail(_Failure("backward not multiplied by grad_output", "mul_by_grad_output"))
        if gi.dtype is not di.dtype:
            return res.fail(_Failure("grad is incorrect type", "mul_by_grad_output"))
        if gi.shape != di.shape:
            return res.fail(_Failure("grad is incorrect size", "mul_by_grad_output"))
    res.ok("mul_by_grad_output")


def _undefined_grad_cls():
    from ..function import Function

    class UndefinedGrad(Function):
        """The identity, whose backward passes on an undefined (None) gradient."""

        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad):
            return None

    return UndefinedGrad


_UNDEFINED = []

_UNDEFINED_MSG = ('Expected backward function to handle undefined output grads. Please look at "Notes about '
                  'undefined output gradients" in "tools/autograd/derivatives.yaml"')
_BC_WARNING = ("Backwards compatibility: New undefined gradient support checking feature is enabled by default, "
               "but it may break existing callers of this function. If this is true for you, you can call this "
               'function with "check_undefined_grad=False" to disable the feature')


def _undefined_backward(call, outputs, res, quiet=False):
    """Backward copes with output gradients that are undefined (None): all of them, then one
    at a time. (microtorch's engine never runs a node whose incoming gradients are all
    undefined, so the first case can only fail through the nodes it does run.)"""
    if not _UNDEFINED:
        _UNDEFINED.append(_undefined_grad_cls())
    undefined = _UNDEFINED[0]
    if not call.diff_tensors:
        return res.fail(_Failure("no Tensors requiring grad found in input", "undefined_grad"))
    try:
        outs = _differentiable_outputs(call.run())
        _undefined_at_nodes(outs, quiet)
        _undefined_through_engine(call, [undefined.apply(o) for o in outs], quiet)
        if len(outputs) > 1:
            for k in range(len(outputs)):
                outs = _differentiable_outputs(call.run())
                _undefined_through_engine(call, [undefined.apply(o) if m == k else o for m, o in enumerate(outs)],
                                          quiet)
    except _Failure as f:
        return res.fail(f)
    res.ok("undefined_grad")


_ZERO_GRADS_MSG = ("Expected all input grads to be undefined or zero when all output grads are undefined or zero. "
                   'Please look at "Notes about undefined output gradients" in "tools/autograd/derivatives.yaml"')


def _undefined_failure(e, quiet):
    if not quiet:
        warnings.warn(_BC_WARNING, stacklevel=6)
    if e is None:
        return _Failure(_ZERO_GRADS_MSG, "undefined_grad")
    return _Failure(_UNDEFINED_MSG + f"\n(backward raised {type(e).__name__}: {e})", "undefined_grad")


def _undefined_through_engine(call, outs, quiet):
    """Backward from outputs whose gradients are undefined gives undefined or zero input grads."""
    zeros = tuple(Tensor._make(np.zeros(o._data.shape, o.dtype.np)) for o in outs)
    try:
        grads = engine.grad(outs, call.diff_tensors, zeros, allow_unused=True) if outs else ()
    except RuntimeError as e:  # other exception types propagate, as in torch
        raise _undefined_failure(e, quiet) from e
    if any(gi is not None and not np.all(gi._data == 0) for gi in grads):
        raise _undefined_failure(None, quiet)


def _undefined_at_nodes(outs, quiet):
    """torch still calls a Function's backward when all its output gradients are undefined
    (None, or zeros if it materializes them); microtorch's engine skips such a node, so the
    nodes that made the outputs are called directly, as torch's engine would."""
    seen = set()
    for o in outs:
        node = o.grad_fn
        if not isinstance(node, BackwardFunction) or id(node) in seen:
            continue
        seen.add(id(node))
        try:
            with no_grad():
                grads = node._backward([None] * node._num_outputs)
        except RuntimeError as e:  # other exception types propagate, as in torch
            raise _undefined_failure(e, quiet) from e
        if any(isinstance(gi, Tensor) and not np.all(gi._data == 0) for gi in grads):
            raise _undefined_failure(None, quiet)
