"""Argument types of the ops added for torch's API (issue 13, round 2), checked before the call.

torch's argument parser refuses `x.kron(3)` or `x.median(None)` with a TypeError even where
numpy would compute something; these ops check their arguments first with ops/_checks.py's
kinds (a parameter's kind follows from its name; OVERRIDES give the names that mean more here)."""
import functools
import inspect

from ._checks import _kernels, dim_error, kernel_rule, leading, type_error

_TENSOR_OTHER = {"other": "tensor"}
_INT_DIM = {"dim": "int"}
OVERRIDES = {
    **{op: _TENSOR_OTHER for op in ("inner", "kron", "ldexp", "dist", "gcd", "lcm", "cross", "vdot", "igamma",
                                    "igammac", "nextafter")},
    **{op: _INT_DIM for op in ("median", "nanmedian", "mode", "kthvalue", "cummax", "cummin", "cumprod",
                               "logcumsumexp", "scatter_add", "index_fill", "slice_scatter",
                               "renorm", "narrow_copy")},
    "index_copy": {"dim": "int", "source": "tensor"}, "masked_scatter": {"source": "tensor"},
    "put": {"source": "tensor", "accumulate": "bool"}, "index_put": {"indices": None, "accumulate": "bool"},
    "addbmm": {"batch1": "tensor", "batch2": "tensor"}, "baddbmm": {"batch1": "tensor", "batch2": "tensor"},
    "addmv": {"mat": "tensor", "vec": "tensor"}, "addr": {"vec1": "tensor", "vec2": "tensor"},
    "unfold": {"dimension": "int", "size": "int", "step": "int"}, "mvlgamma": {"p": "int"},
    "diag_embed": {"offset": "int", "dim1": "int", "dim2": "int"}, "diagonal_scatter": {"dim2": "int"},
    "quantile": {"q": "tensor_or_number", "dim": "int", "interpolation": "str"},
    "nanquantile": {"q": "tensor_or_number", "dim": "int", "interpolation": "str"},
    "select_scatter": {"dim": "int", "index": "int"}, "unique_consecutive": {"dim": "int"},
    "matrix_power": {"n": "int"}, "pinverse": {"rcond": "number"}, "cholesky": {"upper": "bool"}, "polygamma": {"n": "int"}, "aminmax": {"dim": "int"},
    "nonzero_static": {"size": "int", "fill_value": "int"}, "fill_diagonal": {"wrap": "bool"},
}


CHECKS_ITSELF = {"unique_consecutive"}  # a Python function in torch: it tests its flags before the input


def checked(fn, op, method=False, signature_of=None):
    """fn, raising torch's TypeError for an argument of the wrong kind before it runs."""
    if op in CHECKS_ITSELF:
        return fn
    sig_fn = inspect.unwrap(signature_of or fn)
    overrides = OVERRIDES.get(op.rstrip("_"), {})
    kernel_op, n = kernel_rule(op)

    @functools.wraps(fn)
    def with_checked_args(*args, **kwargs):
        err = type_error(op, sig_fn, args, kwargs, method, overrides)
        if err is None and n:  # a dtype with no kernel (after a dim out of range, as torch)
            err = _kernels.kernel_error(kernel_op, leading(sig_fn, args, kwargs, n))
            err = err and (op.rstrip("_") not in _kernels.DTYPE_BEFORE_DIMS and dim_error(op, sig_fn, args, kwargs) or err)
        if err is not None:
            raise err
        return fn(*args, **kwargs)
    with_checked_args.__microtorch_guarded__ = True  # (checked here: ops/_checks.guard need not guess again)
    return with_checked_args
