"""gradcheck and gradgradcheck: the checks above run in torch's order, with torch's contract
(True, False or GradcheckError) on top of the report."""

import warnings

import numpy as np

from .. import engine
from ..._tensor import Tensor
from .report import GradcheckError, GradcheckReport, _Failure, _Result
from .util import _Call, _as_tuple, _differentiable_outputs, _is_diff
from .analytical import _fast_backward, _no_differentiable_outputs, _slow_backward
from .forward import _batched_forward, _fast_forward, _slow_forward, _undefined_forward
from .checks import _batched_grad, _mul_by_grad_output, _undefined_backward


# ---- inputs -------------------------------------------------------------------------------------
def _check_inputs(inputs, stacklevel):
    """torch's _check_inputs: warn on non-double inputs; an input with a stride-0 dimension
    (e.g. from expand) is refused, since perturbing one element would move others too."""
    any_diff = False
    for idx, inp in enumerate(inputs):
        if not _is_diff(inp):
            continue
        if inp.dtype.name not in ("float64", "complex128"):
            warnings.warn(f"Input #{idx} requires gradient and is not a double precision floating point or "
                          "complex. This check will likely fail if all the inputs are not of double precision "
                          "floating point or complex. ", stacklevel=stacklevel)
        if not all(st != 0 or sz <= 1 for st, sz in zip(inp.stride(), inp.shape)):
            return (f"The {idx}th input has a dimension with stride 0. gradcheck only supports inputs that are "
                    "non-overlapping to be able to compute the numerical gradients correctly. You should call "
                    ".contiguous on the input before passing it to gradcheck.")
        any_diff = True
    if not any_diff:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them have "
                         "requires_grad=True.")
    return None


def _validate_options(check_forward_ad, check_backward_ad, check_batched_grad, check_batched_forward_grad):
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires check_forward_ad to be True")


# ---- the public functions ---------------------------------------------------------------------
def check(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
          check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
          check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True, fast_mode=False,
          masked=None, _stacklevel=3):
    """Run gradcheck and return a `GradcheckReport` instead of a verdict.

    Takes gradcheck's options (`raise_exception` is accepted and ignored: a mismatch never
    raises here). Errors that are not mismatches still raise as in torch: no input requiring
    grad (ValueError), an option that needs a missing transform (NotImplementedError), or an
    exception from `func` or its backward."""
    _validate_options(check_forward_ad, check_backward_ad, check_batched_grad, check_batched_forward_grad)
    res = _Result()
    tupled = _as_tuple(inputs)
    overlap = _check_inputs(tupled, _stacklevel)
    snapshot_inputs = tuple(Tensor._make(t._data.copy()) if isinstance(t, Tensor) else t for t in tupled)
    if overlap is not None:
        res.fail(_Failure(overlap, "no_overlap", RuntimeError))
        return _report(res, snapshot_inputs, (), eps, atol, rtol, fast_mode)
    res.ok("no_overlap")

    call = _Call(func, tupled, eps, atol, rtol, nondet_tol, check_grad_dtypes)
    func_out = call.run()
    outputs = _differentiable_outputs(func_out)
    snapshot_outputs = tuple(Tensor._make(o._data.copy()) for o in outputs)
    fast = fast_mode and not (any(o.is_complex() for o in func_out if isinstance(o, Tensor)) or
                              any(t.is_complex() for t in call.diff_tensors))   # complex: slow mode, as torch
    num = _backward_stages(res, call, func_out, outputs, fast) if check_backward_ad else None
    if check_forward_ad:
        res.stage(_fast_forward, call, res) if fast else res.stage(_slow_forward, call, res, num)
        if check_undefined_grad:
            res.stage(_undefined_forward, call, res)
    if check_batched_forward_grad:
        res.stage(_batched_forward, call, res)
    if check_backward_ad:
        _extra_backward_stages(res, call, outputs, check_batched_grad, check_undefined_grad)
    return _report(res, snapshot_inputs, snapshot_outputs, eps, atol, rtol, fast_mode)


def _backward_stages(res, call, func_out, outputs, fast):
    """Reverse mode: Jacobians from backward against finite differences; the numerical ones
    (slow mode) are returned for the forward-mode check to reuse."""
    out_positions = [k for k, o in enumerate(func_out) if _is_diff(o)]
    if not outputs:
        res.stage(_no_differentiable_outputs, call, func_out, res)
    elif fast:
        res.stage(_fast_backward, call, func_out, outputs, out_positions, res)
    else:
        got = res.stage(_slow_backward, call, outputs, out_positions, res)
        return got[0] if got else None
    return None


def _extra_backward_stages(res, call, outputs, check_batched_grad, check_undefined_grad):
    if check_batched_grad:
        for i, o in enumerate(outputs):
            res.stage(_batched_grad, call, o, i, res)
    res.stage(_mul_by_grad_output, call, outputs, res)
    if check_undefined_grad:
        res.stage(_undefined_backward, call, outputs, res, quiet=bool(res.failures))


def _report(res, inputs, outputs, eps, atol, rtol, fast_mode):
    first = res.failures[0] if res.failures else None
    report = GradcheckReport(passed=first is None, message=first.message if first else "", pairs=res.pairs,
                             checks=res.checks, fast=res.fast, inputs=inputs, outputs=outputs, eps=eps,
                             atol=atol, rtol=rtol, fast_mode=fast_mode)
    report._exc_type = first.exc_type if first else None
    return report


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True, fast_mode=False,
              masked=None):
    """Check gradients computed via small finite differences against analytical gradients wrt
    the tensors in `inputs` that are of floating point or complex type and require grad.

    Returns True if all differences satisfy |a - n| <= atol + rtol * |n|; otherwise raises
    GradcheckError (or returns False with raise_exception=False). `check(...)` returns the
    Jacobians themselves."""
    return _verdict(check(func, inputs, eps=eps, atol=atol, rtol=rtol, nondet_tol=nondet_tol,
                          check_undefined_grad=check_undefined_grad, check_grad_dtypes=check_grad_dtypes,
                          check_batched_grad=check_batched_grad,
                          check_batched_forward_grad=check_batched_forward_grad, check_forward_ad=check_forward_ad,
                          check_backward_ad=check_backward_ad, fast_mode=fast_mode, masked=masked, _stacklevel=4),
                    raise_exception)


def _verdict(report, raise_exception):
    if report.passed:
        return True
    if report._exc_type is not GradcheckError:  # e.g. overlapping inputs: raised whatever raise_exception says
        raise report._exc_type(report.message)
    if raise_exception:
        raise GradcheckError(report.message)
    return False


def _random_grad_outputs(outputs, noncontiguous):
    """torch.testing.make_tensor(low=-1, high=1, requires_grad=True) for each output."""
    from ..._random import generator
    from ..._dtype import float64
    rng = generator()
    gos = []
    for o in outputs:
        dt = o.dtype if (o.dtype.is_floating_point or o.dtype.is_complex) else float64
        shape = o._data.shape
        if dt.is_complex:
            arr = rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape)
        else:
            arr = rng.uniform(-1, 1, shape)
        arr = np.asarray(arr).astype(dt.np)
        if noncontiguous and arr.size > 1:
            arr = np.repeat(arr, 2, axis=-1)[..., ::2]
        gos.append(Tensor._make(arr, requires_grad=True))
    return tuple(gos)


def _gradgrad_function(func, inputs, grad_outputs, gen_non_contig_grad_outputs):
    tupled_inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outputs = _differentiable_outputs(func(*tupled_inputs))
        tupled_grad_outputs = _random_grad_outputs(outputs, gen_non_contig_grad_outputs)
    else:
        tupled_grad_outputs = _as_tuple(grad_outputs)
    num_outputs = len(tupled_grad_outputs)
    diff_input_args_indices = {i for i, x in enumerate(tupled_inputs) if _is_diff(x)}
    diff_grad_output_indices = {i for i, x in enumerate(tupled_grad_outputs) if _is_diff(x)}

    def new_func(*args):
        input_args = tuple(x.requires_grad_() if i in diff_input_args_indices else x
                           for i, x in enumerate(args[:-num_outputs]))
        outputs = _differentiable_outputs(func(*input_args))
        grad_outputs = tuple(x.requires_grad_() if i in diff_grad_output_indices else x
                             for i, x in enumerate(args[-num_outputs:]))
        diff_input_args = tuple(x for i, x in enumerate(input_args) if i in diff_input_args_indices)
        grad_inputs = engine.grad(outputs, diff_input_args, grad_outputs, create_graph=True, allow_unused=True)
        return tuple(g for g in grad_inputs if g is not None)

    return new_func, tupled_inputs + tupled_grad_outputs


def _gradgrad_options(check_fwd_over_rev, check_rev_over_rev, check_undefined_grad, check_batched_grad):
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_undefined_grad=True requires check_rev_over_rev to be True")
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_batched_grad=True requires check_rev_over_rev to be True")


def check_gradgrad(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                   gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                   check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                   check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False, masked=False,
                   _stacklevel=4):
    """gradgradcheck's report: `check` on (inputs, grad_outputs) -> first-order gradients."""
    _gradgrad_options(check_fwd_over_rev, check_rev_over_rev, check_undefined_grad, check_batched_grad)
    new_func, all_inputs = _gradgrad_function(func, inputs, grad_outputs, gen_non_contig_grad_outputs)
    return check(new_func, all_inputs, eps=eps, atol=atol, rtol=rtol, nondet_tol=nondet_tol,
                 check_undefined_grad=check_undefined_grad, check_grad_dtypes=check_grad_dtypes,
                 check_batched_grad=check_batched_grad, fast_mode=fast_mode, check_forward_ad=check_fwd_over_rev,
                 check_backward_ad=check_rev_over_rev, masked=masked, _stacklevel=_stacklevel)


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False, masked=False):
    """Check gradients of gradients: gradcheck of the function (inputs, grad_outputs) ->
    the gradients of func computed with create_graph=True. Random grad_outputs (uniform in
    [-1, 1), non-contiguous if asked) are made when none are given."""
    report = check_gradgrad(func, inputs, grad_outputs, eps=eps, atol=atol, rtol=rtol,
                            gen_non_contig_grad_outputs=gen_non_contig_grad_outputs, nondet_tol=nondet_tol,
                            check_undefined_grad=check_undefined_grad, check_grad_dtypes=check_grad_dtypes,
                            check_batched_grad=check_batched_grad, check_fwd_over_rev=check_fwd_over_rev,
                            check_rev_over_rev=check_rev_over_rev, fast_mode=fast_mode, masked=masked,
                            _stacklevel=5)
    return _verdict(report, raise_exception)
