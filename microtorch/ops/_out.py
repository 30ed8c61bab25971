"""`out=`: a function's result written into a tensor the caller gives, as torch does it.

torch's functions take `out=` (`torch.matmul(a, b, out=c)`, `torch.rand(2, 2, out=c)`): the result is computed,
then written into `out`, which is returned. torch refuses it when autograd would have to record the call (an
input or `out` requires grad, grad mode on); casts the result only within its category or up (float into
complex, not into an integer tensor); and resizes an `out` of another shape, warning unless it was empty.
"""
import functools
import inspect
import warnings

import numpy as np

from .._dtype import to_dtype
from .._tensor import Tensor
from ..autograd import grad_mode, views
from .inplace import _type_name, can_cast


def write_out(out, result, op, inputs=(), warn_resize=True):
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
    if not can_cast(src, dst):
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
        return write_out(out, result, make.__name__, warn_resize=not by_count)
    return factory


def op_out(fn):
    """An op taking torch's `out=` (matmul, mul, add, ...): computed, then written into out."""
    @functools.wraps(fn)
    def with_out(*args, out=None, **kwargs):
        try:
            result = fn(*args, **kwargs)
        except TypeError as e:
            if e.__traceback__.tb_next is None:  # Python's own arity or keyword error for fn: the caller's, as before
                raise TypeError(str(e)) from None
            raise
        return result if out is None else write_out(out, result, fn.__name__, args)
    signature = inspect.signature(fn)  # (fn's parameters and out=: what argument checks read, not fn's alone)
    out = inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None)
    parameters = list(signature.parameters.values())
    at = next((i for i, p in enumerate(parameters) if p.kind is p.VAR_KEYWORD), len(parameters))
    with_out.__signature__ = signature.replace(parameters=parameters[:at] + [out] + parameters[at:])
    del with_out.__wrapped__
    return with_out
