"""`out=`: a function's result written into a tensor the caller gives, as torch does it.

torch's functions take `out=` (`torch.matmul(a, b, out=c)`, `torch.rand(2, 2, out=c)`): the result is computed,
then written into `out`, which is returned. torch refuses it when autograd would have to record the call (an
input or `out` requires grad, grad mode on); casts the result only within its category or up (float into
complex, not into an integer tensor); and resizes an `out` of another shape, warning unless it was empty.
Some functions check out's dtype their own way (OUT_RULES): exactly the result's dtype (the matrix products,
sort, gather...), or they compute in out's dtype (sum, mean, cumsum...). A function with several results takes
a tuple of tensors, one per result, and returns them as torch's `return_types.<name>_out`.
"""
import functools
import inspect
import warnings

import numpy as np

from .._dtype import to_dtype
from .._tensor import Tensor
from ..autograd import grad_mode, views
from .inplace import _type_name, can_cast
from .reduce import return_type


def write_out(out, result, op, inputs=(), warn_resize=True, rule=None):
    """Write result (a Tensor) into out and return out (see the module's docstring)."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{op}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if grad_mode.is_grad_enabled() and (out.requires_grad or any(
            isinstance(t, Tensor) and t.requires_grad for t in inputs)):
        raise RuntimeError(f"{op}(): functions with out=... arguments don't support automatic differentiation, but "
                           "one of the arguments requires grad. (Call it under torch.no_grad(), or without out=.)")
    if out.is_meta != result.is_meta:
        raise RuntimeError(f"Attempting to copy from device {result.device} to device {out.device}, but cross-device "
                           f"copies are not allowed! ({op}: give an out on the result's device)")
    src, dst = result._data.dtype, out._data.dtype
    if rule is not None and src != dst:
        rule(op, src, dst, inputs)
    elif not can_cast(src, dst):
        raise RuntimeError(f"result type {_type_name(src)} can't be cast to the desired output type {_type_name(dst)} "
                           f"({op}: give out a dtype the result fits in)")
    if out._data.shape != result._data.shape:
        if out._data.size and warn_resize:
            warnings.warn(f"An output with one or more elements was resized since it had shape {list(out.shape)}, "
                          f"which does not match the required output shape {list(result.shape)}. This behavior is "
                          "deprecated, and in a future PyTorch release outputs will not be resized unless they have "
                          "zero elements. You can explicitly reuse an out tensor t by resizing it, inplace, to zero "
                          "elements with t.resize_(0).", UserWarning, stacklevel=3)
        out._data = np.empty(result._data.shape, dst)
    if not out._data.flags.writeable:  # (an expanded tensor: several elements in one place)
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a single "
                           f"memory location. Please clone() the tensor before performing the operation. ({op})")
    out._data[...] = result._data
    views.bump_version(out)
    return out


def factory_out(make=None, *, by_count=False):
    """A factory taking torch's `out=`: made in out's dtype (a different dtype= is refused, as torch), then written
    into out. by_count (the ranges): an out with as many elements keeps its shape, filled in order."""
    if make is None:
        return functools.partial(factory_out, by_count=by_count)

    @functools.wraps(make)
    def factory(*args, out=None, **kwargs):
        if out is None:
            return make(*args, **kwargs)
        if not isinstance(out, Tensor):
            raise TypeError(f"{make.__name__}(): argument 'out' must be Tensor, not {type(out).__name__}")
        dtype = kwargs.get("dtype")
        if dtype is not None and to_dtype(dtype) != out.dtype:
            raise RuntimeError(f"dtype {_type_name(to_dtype(dtype).np)} does not match dtype of out parameter "
                               f"({_type_name(out._data.dtype)})")
        result = make(*args, **{**kwargs, "dtype": out.dtype})
        if by_count and result.numel() == out.numel():
            result = result.reshape(out.shape)
        elif by_count and make.__name__ == "arange" and out.numel():
            warnings.warn(f"The number of elements in the out tensor of shape {list(out.shape)} is {out.numel()} "
                          f"which does not match the computed number of elements {result.numel()}. Note that this "
                          "may occur as a result of rounding error. The out tensor will be resized to a tensor of "
                          f"shape ({result.numel()},).", UserWarning, stacklevel=2)
        return write_out(out, result, make.__name__, warn_resize=False)  # (torch's factories resize silently)
    return factory


def op_out(fn, name=None):
    """An op taking torch's `out=` (matmul, mul, add, ...): computed, then written into out."""
    name = name or fn.__name__
    rule, in_out_dtype, needs_dim = OUT_RULES.get(name), name in COMPUTED_IN_OUT_DTYPE, name in WITH_A_DIM_ONLY
    if name.startswith("linalg."):
        rule = rule or _exact
    signature = inspect.signature(fn)  # (fn's parameters and out=: what argument checks read, not fn's alone)
    parameters = [p for p in signature.parameters.values() if p.name != "out"]  # (a function that ignored out=)

    @functools.wraps(fn)
    def with_out(*args, out=None, **kwargs):
        if out is not None and needs_dim:
            _needs_dim(out, name, args, kwargs)
        if out is not None and in_out_dtype:
            _computed_in(out, name, args, kwargs)
        try:
            result = fn(*args, **kwargs)
        except TypeError as e:
            if e.__traceback__.tb_next is None:  # Python's own arity or keyword error for fn: the caller's, as before
                raise TypeError(str(e)) from None
            raise
        if out is None:
            return result
        if isinstance(result, tuple):
            return _write_outs(out, result, name, args, rule)
        return write_out(out, result, name, args, rule=rule)
    out = inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None)
    at = next((i for i, p in enumerate(parameters) if p.kind is p.VAR_KEYWORD), len(parameters))
    with_out.__signature__ = signature.replace(parameters=parameters[:at] + [out] + parameters[at:])
    del with_out.__wrapped__
    return with_out


def _write_outs(outs, results, op, inputs, rule):
    """A function with several results (max, sort, ...): one out per result, returned as torch's `<op>_out`."""
    if isinstance(outs, Tensor) or not isinstance(outs, (tuple, list)):
        raise TypeError(f"{op}(): argument 'out' must be a tuple of {len(results)} Tensors, not "
                        f"{type(outs).__name__}")
    if len(outs) != len(results):
        raise TypeError(f"expected tuple of {len(results)} elements but got {len(outs)} ({op}: one out per result)")
    fields = getattr(type(results), "_fields", None)
    if fields is None:  # (where(c) and other tuples of a variable length take no out, as in torch)
        raise TypeError(f"{op}() received an invalid combination of arguments - got out=tuple: this form of {op} "
                        "takes no out=")
    if op in ("median", "nanmedian") and isinstance(outs[1], Tensor) and outs[1]._data.dtype != np.int64:
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have scalar type Long; but got "
                           f"torch.{_type_name(outs[1]._data.dtype)}Tensor instead (while checking arguments for {op})")
    for out, result in zip(outs, results):  # (an index result takes only a long out, as in torch)
        write_out(out, result, op, inputs, rule=_exact if result._data.dtype == np.int64 else rule or _exact)
    return return_type(op.replace(".", "_") + "_out", fields)(*outs)


def _needs_dim(out, op, args, kwargs):
    """sum, prod, median: torch's reduction over every element takes no out (its form with a dim does)."""
    if len(args) < 2 and kwargs.get("dim") is None:
        raise TypeError(f"{op}() received an invalid combination of arguments - got (Tensor, out=Tensor): torch's "
                        f"{op} takes out= only with a dim ({op}(x, dim, out=...))")


def _computed_in(out, op, args, kwargs):
    """sum, mean, cumsum...: torch computes them in out's dtype, as if it were given as dtype=."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{op}(): argument 'out' must be Tensor, not {type(out).__name__}")
    src = args[0]._data.dtype if args and isinstance(args[0], Tensor) else None
    if op.startswith(("mean", "nanmean")) and src is not None and not can_cast(src, out._data.dtype):
        raise RuntimeError(f"{op}.dtype_out(): input types can't be cast to the desired output type "
                           f"{_type_name(out._data.dtype)}")
    kwargs.setdefault("dtype", out.dtype)


_C10 = {"float64": "double", "float32": "float", "float16": "c10::Half", "int64": "long int", "int32": "int",
        "int16": "short int", "int8": "signed char", "uint8": "unsigned char", "bool": "bool",
        "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def _c10(dtype):
    return _C10.get(np.dtype(dtype).name, str(dtype))


def _exact(op, src, dst, inputs):
    raise RuntimeError(f"Expected out tensor to have dtype {_c10(src)}, but got {_c10(dst)} instead ({op}: give out "
                       "the result's dtype)")


def _found(op, src, dst, inputs):
    raise RuntimeError(f"Found dtype {_type_name(dst)} but expected {_type_name(src)} ({op}: give out the result's "
                       "dtype)")


def _saying(template):
    """A rule raising torch's own message for that function: {op}, {out}, {result} and {c10_out}, {c10_result}."""
    def rule(op, src, dst, inputs):
        raise RuntimeError(template.format(op=op, out=_type_name(dst), result=_type_name(src), c10_out=_c10(dst),
                                           c10_result=_c10(src)))
    return rule


def _castable_from(op, src, dst, inputs):
    if not can_cast(src, dst):
        raise RuntimeError(f"{op}: Expected result to be safely castable from {_type_name(src)} dtype, but got result "
                           f"with dtype {_type_name(dst)}")


def _cast_any(op, src, dst, inputs):  # (matrix_rank's count goes into any dtype)
    pass


def _cat_cast(op, src, dst, inputs):
    if not can_cast(src, dst):
        raise TypeError(f"torch.cat(): input types can't be cast to the desired output type {_type_name(dst)}")


def _rules(table):
    return {name: rule for names, rule in table for name in names.split()}


COMPUTED_IN_OUT_DTYPE = frozenset("sum mean nansum nanmean prod cumsum cumprod".split())
WITH_A_DIM_ONLY = frozenset("sum prod median nanmedian".split())
OUT_RULES = _rules([
    ("abs absolute ceil floor round trunc fix frac sign sgn neg negative conj_physical hardshrink lerp bitwise_not",
     _found),
    ("addmm addbmm addmv baddbmm aminmax cross diag mm matmul bmm mv scatter scatter_add slice_scatter "
     "sort msort topk tril triu softmax log_softmax norm frobenius_norm inverse "
     "gather argmax argmin isin take index_add index_copy index_reduce scatter_reduce matrix_power renorm "
     "take_along_dim", _exact),
    ("dot vdot", _saying("result dtype {out} does not match input dtype {result}")),
    ("all any", _saying("{op} only supports bool tensor for result, got: {out}")),
    ("amax amin", _saying("Expected the dtype for input and out to match, but got {result} for input's dtype and "
                          "{out} for out's dtype.")),
    ("nonzero", _saying("nonzero: Expected out tensor to have scalar type Long but got scalar type{out}")),
    ("bucketize searchsorted", _saying("torch.searchsorted(): output tensor's dtype is wrong, it can only be "
                                       "Int(int32) or Long(int64) depending on whether out_int32 flag is True, but we "
                                       "got output tensor's dtype {out} and out_int32 flag is False")),
    ("complex polar", _saying("Expected object of scalar type {result} but got scalar type {out} for argument 'out'")),
    ("float_power", _saying("the output given to float_power has dtype {out} but the operation's result requires "
                            "dtype {result}")),
    ("nuclear_norm", _saying("linalg.matrix_norm expected out tensor dtype {result} but got: {out}")),
    ("quantile nanquantile", _saying("quantile() out tensor must be same dtype as the input tensor")),
    ("signbit isneginf isposinf", _saying("{op} does not support non-boolean outputs.")),
    ("tensordot inner", _saying("tensordot: Expected the output tensor to have dtype {result}, but got an output "
                                "tensor with dtype {out}")),
    ("cummax cummin logcumsumexp", _saying("expected scalar_type {result} but found {out}")),
    ("index_select masked_select", _saying("{op}(): self and result must have the same scalar type")),
    ("kthvalue", _saying("output values must be of same type as input")),
    ("mode", _saying("expected scalar type '{result}' but got '{out}' for values output")),
    ("nan_to_num", _saying("nan_to_num: dtype of out: {out} should be same as input: {result}")),
    ("frexp", _saying("torch.frexp() expects mantissa to have dtype {c10_result} but got {c10_out}")),
    ("histc histogram", _saying("torch.histogram: input tensor and hist tensor should have the same dtype, but got input "
                      "{c10_result} and hist {c10_out}")),
    ("cholesky cholesky_inverse cholesky_solve geqrf linalg.pinv linalg.cond linalg.tensorinv linalg.matrix_power",
     _castable_from),
    ("heaviside", _saying("heaviside is not yet implemented for tensors with different dtypes.")),
    ("linalg.matrix_norm linalg.norm", _saying("{op} expected out tensor dtype {result} but got: {out}")),
    ("linalg.multi_dot", _saying("multi_dot(): expected out tensor to have dtype {c10_result} but got {c10_out}")),
    ("linalg.vecdot", _saying("linalg.vecdot: Expected out of dtype{result} but found {out}")),
    ("linalg.solve_triangular", _saying("expected scalar type {result} but found {out}")),
    ("linalg.matrix_rank", _cast_any),
    ("cat concat concatenate stack hstack vstack dstack column_stack row_stack", _cat_cast),
])
