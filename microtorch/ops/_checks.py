"""Argument types of the public API, checked the way torch's argument parser checks them.

`torch.abs(None)` raises `TypeError: abs(): argument 'input' (position 1) must be Tensor, not
NoneType`. microtorch gives the same answer from one place instead of a check in every op:
`guard(fn)` wraps a public function and compares the arguments with the parameters' kinds (a
parameter's kind follows from its name: `input` is a Tensor, `dim` an int or a tuple of ints,
`keepdim` a bool...), as torch's argument parser does before the op runs. A wrong type becomes
torch's TypeError naming the op and the argument. The wrapper is written with the function's own
parameters and first runs one cheap test per argument (`isinstance(input, Tensor)`, `keepdim.__class__
is bool`); only when one fails does the full check run, which also reads a 0-d tensor given for a
number as its number (torch's Scalar) and hands a Tensor operator's numpy array operand to numpy
(ops/_ndarray_operands.py), as torch does. Then it refuses a dtype torch has no kernel for
(ops/_kernels.py). When the op itself fails, the same checks explain why: a size too large, shapes
that do not broadcast, a numpy AxisError, or an error raised inside another op, named after this one.
"""
import functools
import inspect
import linecache
import numbers
import os
import re
import traceback
import types

import numpy as np

from . import _kernels
from ._ndarray_operands import handles, ndarray_operand

_TENSOR = {"input", "x", "self", "tensor", "mat1", "mat2", "mat", "vec", "vec1", "vec2", "target", "mask",
           "condition", "probs", "src", "a", "b", "index", "t", "weight", "bias", "gradient", "running_mean",
           "running_var", "indices", "boundaries", "sorted_sequence", "tensor1", "tensor2", "x1", "x2", "input1",
           "input2", "anchor", "positive", "negative", "values"}
_OPTIONAL = {"running_mean", "running_var"}  # tensors torch also takes as None (batch_norm's running stats)
_TENSOR_OR_TENSORS = {"outputs", "inputs", "grad_outputs", "grad_tensors"}  # (func checks primals as torch)
_TENSOR_OR_NUMBER = {"other", "exponent", "min", "max", "value", "mean", "std", "end", "start", "step"}
_TENSORS = {"tensors"}
_DTYPE = {"dtype", "type1", "type2"}
_INT = {"k", "diagonal", "offset", "length", "chunks", "dim0", "dim1", "num_samples", "steps", "num_classes",
        "n", "high", "low", "groups", "padding_idx", "start_dim", "end_dim", "minlength"}
_DIM = {"dim", "dims", "source", "destination"}  # an int, a sequence of ints, or None
_SIZE = {"size", "shape", "sizes", "normalized_shape", "kernel_size", "stride", "dilation",
         "output_size", "split_size_or_sections", "split_size", "repeats", "reps", "indices_or_sections", "shifts"}
_BOOL = {"keepdim", "largest", "sorted", "unbiased", "requires_grad", "descending", "stable", "ceil_mode",
         "count_include_pad", "retain_graph", "create_graph", "allow_unused", "as_tuple",
         "equal_nan", "replacement", "return_indices", "training", "non_blocking", "some", "compute_uv",
         "full_matrices"}
_NUMBER = {"lower", "upper", "min_val", "max_val", "margin", "fill_value", "alpha", "eps", "negative_slope", "beta", "threshold", "rtol", "atol", "lambd", "p", "base",
           "label_smoothing", "ignore_index"}
_CALLABLE = {"func"}
_STR = {"equation", "reduction", "approximate", "rounding_mode", "pattern"}
# where an op gives a parameter a stricter meaning than its name usually has
_OP_KINDS = {"norm": {"p": "norm_order"}, "unsqueeze": {"dim": "int"}, "select": {"dim": "int", "index": "int"},
             "narrow": {"dim": "int", "start": "int"}, "transpose": {"dim0": "int", "dim1": "int"},
             "softmax": {"dim": "int"}, "log_softmax": {"dim": "int"}, "cumsum": {"dim": "int"},
             "index_select": {"dim": "int"}, "gather": {"dim": "int"}, "stack": {"dim": "int"},
             "cat": {"dim": "int"}, "concat": {"dim": "int"}, "concatenate": {"dim": "int"},
             "split": {"dim": "int"}, "chunk": {"dim": "int"}, "unbind": {"dim": "int"},
             "sort": {"dim": "int"}, "arange": {"start": "number", "end": "number", "step": "number"},
             "linspace": {"start": "tensor_or_number", "end": "tensor_or_number"},  # (a 0-d tensor: its number)
             "logspace": {"start": "tensor_or_number", "end": "tensor_or_number"},
             "argsort": {"dim": "int"}, "range": {"start": "number", "end": "number", "step": "number"},
             "tile": {"dims": "shape_tuple"}, "is_same_size": {"other": "tensor"}, "type_as": {"other": "tensor"},
             "histc": {"bins": "int"},  # (apply_/map_ refuse a tensor that requires grad before a non-callable)
             "logsumexp": {"dim": "dims_given"}, "threshold": {"value": "number"},
             "replace_all_batch_norm_modules_": {"root": "module"},
             "argmax": {"dim": "int"}, "argmin": {"dim": "int"}, "prod": {"dim": "int"}, "softmin": {"dim": "int"},
             "size": {"dim": "int"}, "stride": {"dim": "int"}, "rot90": {"dims": "shape_tuple"},
             "new_full": {"size": "shape_tuple"}, "unflatten": {"sizes": "shape_tuple"},
             "pad": {"pad": "shape_tuple"}, "split_with_sizes": {"split_sizes": "shape_tuple"},
             "unsafe_split_with_sizes": {"split_sizes": "shape_tuple"}, "unsafe_split": {"dim": "int", "split_size": "int"},
             "unsafe_chunk": {"dim": "int", "chunks": "int"},
             "equal": {"other": "tensor"}, "full": {"size": "shape_tuple"},
             "stack_module_state": {"models": "modules"}, "logsumexp": {"dim": "dim"}, "promote_types": {"type1": "dtype", "type2": "dtype", "a": "dtype", "b": "dtype"},
             "functional_call": {"module": "module", "parameter_and_buffer_dicts": "mapping", "args": None}, "allclose": {"other": "tensor"}, "isclose": {"other": "tensor"},
             "dot": {"other": "tensor"}, "matmul": {"other": "tensor"}, "mm": {"other": "tensor"},
             "bmm": {"other": "tensor"}, "mv": {"other": "tensor"}, "outer": {"other": "tensor"},
             "ger": {"other": "tensor"}, "expand_as": {"other": "tensor"}, "view_as": {"other": "tensor"},
             "reshape_as": {"other": "tensor"}, "masked_select": {"mask": "tensor"},
             "maximum": {"other": "tensor"}, "minimum": {"other": "tensor"}, "lerp": {"end": "tensor", "weight": "tensor_or_number"},
             "max": {"dim": None}, "min": {"dim": None}, "fmax": {"other": "tensor"}, "fmin": {"other": "tensor"},
             "flip": {"dims": "shape_tuple"}, "fmod": {"b": "tensor_or_number"}, "remainder": {"input": "tensor_or_number", "b": "tensor_or_number"},  # (7 % x)
             "copy_": {"src": "tensor_or_number"},
             "multilabel_soft_margin_loss": {"target": "tensor_or_number", "weight": "tensor_or_number"},
             "normalize": {"p": None}, "randint": {"high": "size"},  # (randint(high, size) too)
             "randint_like": {"low": None, "high": None}, "where": {"input": "tensor_or_number", "other": "tensor_or_number"},
             **{op: {"input": "tensor_or_number"} for op in ("add", "sub", "subtract", "mul", "multiply", "div",
                                                             "divide", "true_divide", "floor_divide", "pow", "xlogy",
                                                             "float_power")},  # (torch.xlogy(2, t): Scalar self)
             "tensor_split": {"indices_or_sections": None},  # (a tensor of indices too)
             "scatter": {"src": "tensor_or_number"}, "index_fill": {"value": "tensor_or_number"},
             "index_add": {"source": "tensor"},
             **{op: {"other": "tensor"} for op in ("atan2", "arctan2", "hypot", "logaddexp", "logaddexp2", "logical_and",
                                                   "logical_or", "logical_xor", "maximum", "minimum", "gcd", "lcm",
                                                   "ldexp", "nextafter")},  # (no numbers)
             **{op: {"b": "tensor_or_number"} for op in ("eq", "ne", "lt", "le", "gt", "ge", "less", "less_equal",
                                                          "greater", "greater_equal", "not_equal")}}  # (max(x, y) is maximum; max checks an int dim itself)
_KIND_NAMES = {"tensor": "Tensor", "tensor_or_tensors": "Tensor or tuple of Tensors", "tensor_or_number": "Tensor", "tensors": "tuple of Tensors", "int": "int",
               "dim": "int or tuple of ints", "size": "tuple of ints", "size_or_dtype": "tuple of ints", "bool": "bool", "dtype": "microtorch.dtype",
               "callable": "a callable", "number": "Number", "str": "str", "norm_order": "Number or str",
               "module": "nn.Module", "mapping": "dict or tuple of dicts",
               "shape_tuple": "tuple of ints", "modules": "list of nn.Modules",
               "dims_given": "int or tuple of ints", "dim_or_unbiased": "int or tuple of ints"}
_FIX = {"Tensor": "wrap the value with microtorch.tensor(...)",
        "Tensor or tuple of Tensors": "pass a tensor or a tuple of tensors",
        "tuple of Tensors": "pass a list or tuple of tensors, e.g. cat([a, b])",
        "int or tuple of ints": "pass an int such as 0 or -1, or a tuple of them",
        "tuple of ints": "pass ints, e.g. (2, 3)", "int": "pass a Python int", "bool": "pass True or False",
        "microtorch.dtype": "pass a dtype such as microtorch.float32", "a callable": "pass a function",
        "Number": "pass a Python number", "str": "pass a string",
        "Number or str": "pass a number such as 2 or float('inf'), or 'fro'",
        "nn.Module": "pass the module whose forward to call", "list of nn.Modules": "pass a list of modules", "dict or tuple of dicts":
        "pass {name: tensor} mappings such as dict(model.named_parameters())"}

# torch's logical ops take a tensor `other` only (the comparisons take a number too)
_OP_KINDS.update({op: {"other": "tensor"} for op in ("logical_and", "logical_or", "logical_xor")})
# the split family's sections=/indices= (torch's names): an int or a list of ints, not a tensor as `indices` usually
_OP_KINDS.update({op: {"sections": "size", "indices": "size"} for op in ("hsplit", "vsplit", "dsplit")})
_OP_KINDS["tensor_split"].update({"sections": None, "indices": "size"})   # (sections may be a tensor of indices)
_OP_KINDS["result_type"] = {"tensor": None, "other": None}   # (either may be a Python number)
_OP_KINDS["cond"] = {"p": None}   # (linalg.cond's p: a number, inf, or a norm's name such as 'fro')
_OP_KINDS["bernoulli_"] = {"p": "tensor_or_number"}   # (a tensor of probabilities too, broadcast to self)
# var(x, True): torch's var, std, var_mean and std_mean also take unbiased as the second argument
_OP_KINDS.update({op: {"dim": "dim_or_unbiased"} for op in ("var", "std", "var_mean", "std_mean")})
_OP_KINDS["type"] = {"dtype": None}   # (Tensor.type: a dtype, a legacy class such as FloatTensor, or its name)
_OP_KINDS.update({"bucketize": {"input": "tensor_or_number"}, "searchsorted": {"input": "tensor_or_number"}})
_OP_KINDS["view"] = {"shape": "size_or_dtype"}  # (x.view(dtype): its errors for another element size are view's)
_OP_KINDS["round"] = {"decimals": "int"}   # (round_ too; not a bool, not None: round(x) leaves it out)
_OP_KINDS.update({op: {"input": "tensor_or_number"} for op in (  # (bitwise_and(1, x): torch's Scalar-first form)
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift")})


def _kind(name, overrides=None):
    if overrides and name in overrides:
        return overrides[name]
    for kind, names in (("tensor", _TENSOR), ("tensor_or_tensors", _TENSOR_OR_TENSORS), ("tensor_or_number", _TENSOR_OR_NUMBER), ("tensors", _TENSORS),
                        ("int", _INT), ("dim", _DIM), ("size", _SIZE), ("bool", _BOOL), ("number", _NUMBER),
                        ("callable", _CALLABLE), ("str", _STR)):
        if name in names:
            return kind
    return "dtype" if name in _DTYPE else None


def _is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _is_int_scalar(v):
    """A 0-d integer tensor, which torch's parser reads as an int in a size (zeros(3, lengths.max()))."""
    return _is_tensor(v) and v.ndim == 0 and v.dtype.is_floating_point is False and v.dtype.is_complex is False \
        and str(v.dtype) != "microtorch.bool"


def _is_tensor(v):
    from .._tensor import Tensor
    return isinstance(v, Tensor) or getattr(v, "__vmap_batched__", False)


def _ok(kind, v):
    """Does value v fit a parameter of this kind? (None is allowed where a default may stand)"""
    if kind == "tensor":
        return _is_tensor(v)
    if kind == "tensor_or_number":  # (a numpy scalar is a number; an ndarray is neither: torch's TypeError)
        return _is_tensor(v) or isinstance(v, (numbers.Number, np.number, np.bool_))
    if kind == "tensor_or_tensors":
        return _is_tensor(v) or (isinstance(v, (list, tuple)) and all(
            t is None or _is_tensor(t) for t in v))
    if kind == "tensors":
        return isinstance(v, (list, tuple)) and all(_is_tensor(t) for t in v)
    if kind == "int":  # (torch's parser takes a 0-d integer tensor for an int)
        return _is_int(v) or _is_tensor(v) and v.ndim == 0 and v._data.dtype.kind in "iu"
    if kind == "dim":
        return v is None or _is_int(v) or (isinstance(v, (list, tuple)) and all(_is_int(d) for d in v))
    if kind == "dim_or_unbiased":
        return _ok("dim", v) or isinstance(v, bool)
    if kind == "dims_given":
        return _is_int(v) or (isinstance(v, (list, tuple)) and all(_is_int(d) for d in v))
    if kind == "shape_tuple":
        return isinstance(v, (list, tuple)) and all(_is_int(d) or _is_int_scalar(d) for d in v)
    if kind == "modules":
        return isinstance(v, (list, tuple)) and all(hasattr(m, "named_parameters") for m in v)
    if kind == "size":
        return _is_int(v) or (isinstance(v, (list, tuple)) and all(_is_int(d) or _is_int_scalar(d) for d in v))
    if kind == "size_or_dtype":
        from .._dtype import dtype
        return _ok("size", v) or isinstance(v, dtype) or isinstance(v, tuple) and len(v) == 1 and isinstance(v[0], dtype)
    if kind == "bool":
        return isinstance(v, (bool, np.bool_))
    if kind == "number":  # (torch's parser takes a 0-d tensor for a number, one that requires no grad, and a numpy
        # bool, which it reads as a float)
        return isinstance(v, (numbers.Number, np.number, np.bool_)) or _is_tensor(v) and v.ndim == 0 and not v.requires_grad
    if kind == "norm_order":
        return v is None or isinstance(v, (numbers.Number, np.number, str))
    if kind == "dtype":
        from .._dtype import dtype
        return v is None or isinstance(v, (dtype, type, np.dtype))
    if kind == "callable":
        return callable(v)
    if kind == "str":
        return isinstance(v, str)
    if kind == "module":
        return hasattr(v, "named_parameters")
    if kind == "mapping":
        return isinstance(v, dict) or isinstance(v, (list, tuple)) and all(isinstance(d, dict) for d in v)
    return True


def _type_name(v):
    return "Tensor" if _is_tensor(v) else type(v).__name__


@functools.lru_cache(maxsize=None)
def _signature(fn):
    return inspect.signature(fn)


def type_error(op, fn, args, kwargs, method, overrides=None, e=None, kinds=None):
    """torch's TypeError for the first argument of the wrong type, or None when the types fit."""
    try:
        bound = _signature(fn).bind(*args, **kwargs)
    except TypeError as bind_error:  # wrong number of arguments, an unknown keyword: Python's own message,
        msg = str(e) if isinstance(e, TypeError) else f"{op}(): {bind_error}"  # naming the op, not the helper
        return TypeError(re.sub(r"^[\w.<>]+\(\)", f"{op}()", msg))  # that implements it (_cmp.<locals>.compare)
    params = _signature(fn).parameters
    overrides = {**_OP_KINDS.get(op, _OP_KINDS.get(op.rstrip("_"), {})), **(overrides or {})}
    for pos, (name, value) in enumerate(bound.arguments.items()):
        p = params[name]
        kind = _kind(name, overrides)
        if method and pos == 0 or kind is None or p.kind is p.VAR_KEYWORD or kinds and kind not in kinds:
            continue
        if p.kind is p.VAR_POSITIONAL:  # f(*size) takes ints, f(*tensors) tensors, or one tuple of them
            if kind not in ("size", "dim", "tensors", "size_or_dtype") or not value:
                continue
            value = value[0] if len(value) == 1 and isinstance(value[0], (list, tuple)) else value
            kind = kind if kind in ("tensors", "size_or_dtype") else "size"
        if value is p.default or _ok(kind, value) or value is None and name in _OPTIONAL:
            continue
        want = _KIND_NAMES[kind]
        shown = {"x": "input", "a": "input", "t": "input", "b": "other"}.get(name, name)  # (torch's names)
        where = f" (position {pos + (0 if method else 1)})" if p.kind is not p.KEYWORD_ONLY else ""
        if want == "tuple of ints" and isinstance(value, (list, tuple)) and value:
            return _element_error(op, shown, where, value)
        return TypeError(f"{op}(): argument '{shown}'{where} must be {want}, not {_type_name(value)}; "
                         f"{_FIX[want]}.")
    return None


def _element_error(op, shown, where, value):
    """torch's TypeError for a tuple of ints holding something else: its parser names the first element's type
    in one form, a later element's in another (counting from 1 there)."""
    i = next((i for i, v in enumerate(value) if not _ok("int", v)), 0)
    got = _type_name(value[i])
    if i == 0:
        text = f"argument '{shown}'{where} must be tuple of ints, but found element of type {got} at pos 0"
    else:
        text = f"argument '{shown}' failed to unpack the object at pos {i + 1} with error \"type must be tuple of " \
               f"ints,but got {got}\""
    return TypeError(f"{op}(): {text}; {_FIX['tuple of ints']}.")


def guard(fn, op=None, method=False, signature_of=None, overrides=None, eager=False, operator=None):
    """fn, whose failures caused by an argument of the wrong type raise torch's TypeError.
    `signature_of`: the function whose parameters describe fn's (an in-place method that takes
    *args describes them by its out-of-place form); `overrides`: {parameter name: kind} where a
    name means something else than usual; `eager`: check the function argument of a transform before
    the call (the transform returns a function that would fail later, far from the mistake); `operator`: the
    Tensor operator fn implements (`__add__`), whose numpy array operand numpy computes with, as in torch."""
    if getattr(fn, "__microtorch_guarded__", False) or not isinstance(fn, types.FunctionType):
        return fn
    op = op or fn.__name__
    sig_fn = inspect.unwrap(signature_of or fn)

    def failed(e, args, kwargs):  # torch's error for a call that raised e, or None to let e through
        return type_error(op, sig_fn, args, kwargs, method, overrides, e) or unusable_view(args, kwargs, e) \
            or size_error(op, sig_fn, args, kwargs, e) \
            or shapes_error(op, args, kwargs, e) or dtype_error(op, args, kwargs, e) or axis_error(op, e) \
            or distribution_error(op, e) or named_error(op, e)

    kernel_op, n = kernel_rule(op)  # a dtype torch has no kernel for: refused at the entry, as torch does
    kernel = functools.partial(_dtype_error, kernel_op, op) if n else None
    refuse = functools.partial(_refuse, op, sig_fn, method, overrides)
    check_types = functools.partial(type_error, op, sig_fn) if signature_of is None else None
    array_op = functools.partial(ndarray_operand, operator) if operator and handles(operator) else None
    kinds = (check_types, method, {**_OP_KINDS.get(op, _OP_KINDS.get(op.rstrip("_"), {})), **(overrides or {})},
             array_op)
    guarded = None if eager else _with_own_parameters(fn, failed, op, (kernel, refuse, n), kinds)
    fast = None if eager or signature_of is not None and not method else _fast_args_test(sig_fn, method, kinds[2])
    reflectable = operator is not None and operator.strip("_") in _REFLECTABLE
    if guarded is None:
        @functools.wraps(fn)
        def guarded(*args, **kwargs):
            if eager:  # the function argument of a transform, checked before the transform returns
                err = type_error(op, sig_fn, args, kwargs, method, overrides, kinds=("callable",))
                if err is not None:
                    raise err
            if fast is not None and not fast(args, kwargs):  # (the cheap tests first, as _with_own_parameters)
                if array_op is not None and len(args) == 2 and isinstance(args[1], np.ndarray):
                    return array_op(*args)
                err = type_error(op, sig_fn, args, kwargs, method, overrides)
                if err is not None:
                    if reflectable:  # (as in the generated wrapper: torch's NotImplemented)
                        return NotImplemented
                    raise err
                args, kwargs = _numbers_given(sig_fn, args, kwargs, method, kinds[2])
            err = kernel and kernel(leading(sig_fn, args, kwargs, n))
            if err is not None:
                refuse(err, args, kwargs)
            try:
                return fn(*args, **kwargs)
            except Exception as e:
                err = failed(e, args, kwargs)
                if err is None:
                    raise
                raise err from None  # the student sees the reason, not numpy's frames

    guarded.__microtorch_guarded__ = True
    return guarded


def unusable_view(args, kwargs, e):
    """torch's error for an argument that is a view whose history was lost to an in-place change (a split()'s
    output after its base changed): torch reads the arguments' histories before the op checks its own arguments,
    so that error comes before an IndexError or ValueError of the op (amin of such a view over an empty dim). (An
    in-place op's own RuntimeError about the view being written comes first in torch too: it is kept.)"""
    if isinstance(e, RuntimeError):
        return None
    from .inplace import _UnusableView
    for a in [*args, *kwargs.values()]:
        if type(a) is _UnusableView:
            return RuntimeError(a._rebase_error)
    return None


def _dtype_error(kernel_op, op, values):
    """torch's error for the dtypes of the leading arguments `values`: of an in-place op (`fmod_`, `__imod__`),
    a result that cannot be written into self (checked first, as torch); then a dtype with no kernel."""
    if kernel_op in ("pow", "ipow") and len(values) > 1 and values[1].__class__ is bool and _is_tensor(values[0]):
        return None  # (torch's pow by a Python bool runs no kernel: True copies, False fills ones)
    if kernel_op in ("max", "min", "amax", "amin") and not (len(values) > 1 and _is_tensor(values[1])):
        return None  # (their reductions check a complex input themselves, after the dims, as torch: ops/reduce.py)
    if kernel_op in _CAST_FIRST and (op.endswith("_") or op in _IN_PLACE_NAMES) and len(values) > 1 \
            and _is_tensor(values[0]):
        from .inplace import cast_error
        err = cast_error(values[0], values[1], _IN_PLACE_NAMES.get(op, op))
        if err is not None:
            return err
    if kernel_op in ("clamp", "clip") and values and _is_tensor(values[0]) and values[0].dtype.is_floating_point:
        bounds = [v for v in values[1:] if v.__class__ is complex]
        if bounds:  # (torch converts a number bound to the tensor's real type first: 1j fails there)
            return _complex_bound_error(op, bounds) or _kernels.kernel_error(kernel_op, values)
    return _kernels.kernel_error(kernel_op, values)


def _complex_bound_error(op, bounds):
    """torch's RuntimeError for a complex number bound of a real tensor's clamp, or None when each is real."""
    for b in bounds:
        if b.imag != 0:
            return RuntimeError(f"{op}(): value cannot be converted to type double without overflow (the bound {b} is "
                                "complex, and a real tensor is clamped between real numbers; pass its .real)")
    return None


# ops with a dtype table whose result has the dtype the arguments promote to, so that in place it must fit self's
# (not the comparisons: lt_ writes a bool into any dtype; pow_ and the bitwise ones check it themselves, after this)
_CAST_FIRST = {"fmod", "remainder", "floor_divide", "hypot", "xlogy", "clamp_min", "clamp_max", "gcd", "lcm",
               "nextafter", "igamma", "igammac"}
_OPERATOR_OPS = {"imod": "remainder", "ifloordiv": "floor_divide"}  # (x %= y is x.remainder_(y))
_IN_PLACE_NAMES = {"imod": "remainder_", "ifloordiv": "floor_divide_"}


def kernel_rule(op):
    """(the op's name in ops/_kernels.py's tables, how many leading arguments its dtype check reads: 0 for none);
    an in-place form (`abs_`) has its op's kernels."""
    op = _OPERATOR_OPS.get(op, op)
    n = _kernels.rule(op)
    if n or not op.endswith("_"):
        return op, n
    return op[:-1], _kernels.rule(op[:-1])


def leading(fn, args, kwargs, n):
    """The values of fn's first n parameters in a call (those given)."""
    if not kwargs and _positional(fn, n):  # the common call: no binding (inspect's bind costs ~3 us)
        return args[:n]
    try:
        bound = _signature(fn).bind(*args, **kwargs).arguments
    except TypeError:
        return ()
    return tuple(bound.values())[:n]


@functools.lru_cache(maxsize=None)
def _positional(fn, n):
    """fn's first n parameters are plain positional ones (a call's first n arguments are their values)."""
    params = list(_signature(fn).parameters.values())[:n]
    return all(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)


def _refuse(op, fn, method, overrides, err, args, kwargs):
    """Raise err, torch's error for a dtype the op has no kernel for, unless an argument has the wrong type or
    a dim is out of range (torch parses the arguments and wraps the dims before it picks a kernel)."""
    dims_first = op.rstrip("_") not in _kernels.DTYPE_BEFORE_DIMS
    raise type_error(op, fn, args, kwargs, method, overrides) or dims_first and dim_error(op, fn, args, kwargs) \
        or op in _RANDOM_FILLS and method and _fill_argument_error(op, args[1:], kwargs) or err


def _fill_argument_error(op, args, kwargs):
    """An in-place random fill (x.normal_(None)) takes numbers (a 0-d tensor too; bernoulli_ any tensor): torch's
    TypeError for another argument, or None."""
    for v in list(args) + [v for k, v in kwargs.items() if k != "generator"]:
        number = isinstance(v, (numbers.Number, np.number)) or _is_tensor(v) and (v.ndim == 0 or op == "bernoulli_")
        if not number:
            return TypeError(f"{op}(): its parameters must be numbers, not {_type_name(v)}")
    return None


def dim_error(op, fn, args, kwargs):
    """torch's IndexError for a `dim` argument out of range for the input's dims, or None."""
    bound = _signature(fn).bind(*args, **kwargs).arguments
    x, dim = next(iter(bound.values())), bound.get("dim")
    if not _is_tensor(x):  # (pow(2, x): the first argument may be a number)
        return None
    dims = dim if isinstance(dim, (list, tuple)) else [dim]
    n = max(x.ndim, 1)
    bad = [d for d in dims if _is_int(d) and not -n <= d < n]
    if not bad:
        return None
    return IndexError(f"{op}(): Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got "
                      f"{bad[0]}); dims count from 0 to ndim - 1, or from -ndim to -1 backwards")


# what an argument of each kind usually is: a call whose arguments all pass these cheap tests skips the
# full check (type_error), which runs before the op when one fails, as torch's argument parser does
_FAST = {"tensor": "isinstance({p}, Tensor)", "tensor_or_number": "isinstance({p}, NUMLIKE)",
         "bool": "{p}.__class__ is bool", "int": "{p}.__class__ is int", "dim": "{p}.__class__ in DIMS",
         "dim_or_unbiased": "({p}.__class__ in DIMS or {p}.__class__ is bool)", "number": "{p}.__class__ in NUMBERS", "size": "{p}.__class__ in DIMS", "tensors": "{p}.__class__ in SEQS",
         "shape_tuple": "{p}.__class__ in SEQS"}
_TYPE_CHECK = """
    if not ({fast}):{operand}
        err = types(({args}), {{{kwargs}}}, method, overrides)
        if err is not None:
            raise err{numbers}"""
_NUMBER_GIVEN = """
        if isinstance({p}, Tensor):  # (a 0-d tensor for a number: its number, as torch's parser reads it)
            {p} = {p}.item()"""
_ARRAY_OPERAND = """
        if isinstance({other}, NDARRAY):
            return array_op({self}, {other})"""
# torch's binary operators answer NotImplemented for an operand they do not take: Python then asks the operand
# (`"ab" * n` repeats the string n times, a class with __radd__ is called), or raises its own TypeError
_FOREIGN_OPERAND = """
        if types(({args}), {{{kwargs}}}, method, overrides) is not None:
            return NotImplemented"""
_KERNEL_CHECK = """
    if {suspect}:
        err = kernel(({first}))
        if err is not None:
            refuse(err, ({args}), {{{kwargs}}})"""
_WRAPPER = """
def {name}({params}):{pre}
    try:
        return fn({call})
    except Exception as e:
        err = failed(e, ({args}), {{{kwargs}}})
        if err is None:
            raise
        raise err from None  # the student sees the reason, not numpy's frames
"""


def _fast_type_test(params, method, overrides):
    """The cheap test (Python source) that the arguments have their parameters' usual types, or ''."""
    tests = []
    for i, p in enumerate(params):
        kind = _kind(p.name, overrides)
        if kind not in _FAST or method and i == 0:
            continue
        test = _FAST[kind].format(p=p.name)
        test = f"({p.name} is None or {test})" if p.name in _OPTIONAL else test
        tests.append(test if p.default is p.empty else f"({p.name} is _default_{p.name} or {test})")
    return " and ".join(tests)


def _number_params(params, method, overrides):
    """The names of the parameters that take a number (torch's Scalar: a 0-d tensor given there is read as its
    number, so that an op's forward never meets a tensor where it computes with a number)."""
    return [p.name for i, p in enumerate(params) if not (method and i == 0) and _kind(p.name, overrides) == "number"]


def _numbers_given(fn, args, kwargs, method, overrides):
    """args and kwargs with each 0-d tensor given for a number parameter replaced by its number."""
    bound = _signature(fn).bind(*args, **kwargs)
    names = _number_params(list(_signature(fn).parameters.values()), method, overrides)
    for name in names:
        if _is_tensor(bound.arguments.get(name)):
            bound.arguments[name] = bound.arguments[name].item()
    return bound.args, bound.kwargs


def _fast_args_test(fn, method, overrides):
    """fast(args, kwargs): the cheap tests of _FAST for a wrapper that takes *args and **kwargs, written out as
    one expression over args[i] (None when fn's parameters have no kind with a cheap test)."""
    env, tests, kw_tests = _type_globals(), [], {}
    params = [p for p in _signature(fn).parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    for i, p in enumerate(params):
        kind = _kind(p.name, overrides)
        if kind not in _FAST or method and i == 0:
            continue
        test = "{p} is None or " + _FAST[kind] if p.name in _OPTIONAL else _FAST[kind]
        if p.default is not p.empty:
            env[f"_default_{p.name}"] = p.default
            test = f"{{p}} is _default_{p.name} or {test}"
        kw_tests[p.name] = eval("lambda v: " + test.format(p="v"), env)  # noqa: S307 (source built from _FAST)
        if p.kind is p.POSITIONAL_OR_KEYWORD:
            tests.append(f"(n <= {i} or {test.format(p=f'args[{i}]')})")
    if not kw_tests:
        return None
    env["kw_tests"] = kw_tests
    source = ("def fast(args, kwargs):\n    n = len(args)\n    return " + " and ".join(tests + ["True"]) +
              " and (not kwargs or all(kw_tests[k](v) for k, v in kwargs.items() if k in kw_tests))\n")
    exec(compile(source, f"<argument tests of {fn.__qualname__}>", "exec"), env)  # noqa: S102
    return env["fast"]


def _type_globals():
    from .._tensor import Size, Tensor
    return {"Tensor": Tensor, "NUMLIKE": (Tensor, int, float, complex, np.generic), "NDARRAY": np.ndarray,
            "DIMS": frozenset({int, tuple, list, Size, type(None)}), "NUMBERS": frozenset({int, float, bool, complex}),
            "SEQS": frozenset({tuple, list})}


def _with_own_parameters(fn, failed, op, dtype_check, kinds=(None, False, None, None)):
    """guard's wrapper written with fn's own parameter list (defaults are fn's objects), or None
    when fn takes *args or **kwargs. The wrapper runs on every op: in CPython 3.11 forwarding
    *args and **kwargs costs twice a plain call, which is most of what a correct call paid.
    Python's own errors for a wrong number of arguments name the op (they name __qualname__)."""
    params = inspect.signature(fn, follow_wrapped=False).parameters.values()
    own = ("fn", "failed", "e", "err", "kernel", "refuse", "NO_DATA", "types", "method", "overrides", "Tensor",
           "NUMLIKE", "DIMS", "NUMBERS", "SEQS", "array_op", "NDARRAY")  # (names the wrapper uses itself)
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.POSITIONAL_ONLY) or p.name in own
           or p.name.startswith("_default_") for p in params):
        return None
    kernel, refuse, n = dtype_check
    names, call, args, kwargs = [], [], [], []
    types, method, overrides, array_op = kinds
    env = {"fn": fn, "failed": failed, "kernel": kernel, "refuse": refuse, "NO_DATA": _kernels.NO_DATA,
           "types": types, "method": method, "overrides": overrides, "array_op": array_op, **_type_globals()}
    for p in params:
        if p.kind is p.KEYWORD_ONLY and "*" not in names:
            names.append("*")
        if p.default is not p.empty:
            env[f"_default_{p.name}"] = p.default
        names.append(p.name if p.default is p.empty else f"{p.name}=_default_{p.name}")
        if p.kind is p.POSITIONAL_OR_KEYWORD:
            call.append(p.name)
            args.append(p.name)
        else:
            call.append(f"{p.name}={p.name}")
            kwargs.append(f"{p.name!r}: {p.name}")
    name = fn.__name__ if fn.__name__.isidentifier() else "guarded"
    call_args, call_kwargs = "".join(a + ", " for a in args), ", ".join(kwargs)
    first = [p.name for p in params][:n]
    pre = _KERNEL_CHECK.format(suspect=_kernels.suspect(kernel.args[0], first), first="".join(f + ", " for f in first),
                               args=call_args, kwargs=call_kwargs) if kernel else ""
    fast = _fast_type_test(list(params), method, overrides) if types else ""
    operand = _ARRAY_OPERAND.format(self=args[0], other=args[1]) if array_op and len(args) >= 2 else ""
    if operand and op.strip("_") in _REFLECTABLE:
        operand += _FOREIGN_OPERAND.format(args=call_args, kwargs=call_kwargs)
    numbers = "".join(_NUMBER_GIVEN.format(p=p) for p in _number_params(list(params), method, overrides))
    pre = (_TYPE_CHECK.format(fast=fast, operand=operand, numbers=numbers, args=call_args, kwargs=call_kwargs)
           if fast else "") + pre
    source = _WRAPPER.format(name=name, params=", ".join(names), call=", ".join(call), pre=pre,
                             args=call_args, kwargs=call_kwargs)
    # a file name inside the package, and the source in linecache, so tracebacks show the wrapper's lines
    kind = " (operator)" if operand else " (method)" if method else ""  # (x.mul and x * y: one file each)
    filename = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"<guard of {op}{kind}: {fn.__qualname__}>")
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), env)
    wrapper = functools.wraps(fn)(env[name])
    wrapper.__qualname__ = op
    return wrapper


def _sizes(fn, args, kwargs):
    """The sizes passed to fn's size parameters (`zeros(2, 3)`, `ones((2, 3))`, `new_zeros(size)`)."""
    try:
        bound = _signature(fn).bind(*args, **kwargs).arguments
    except TypeError:
        return []
    out = []
    for name, value in bound.items():
        if _kind(name) == "size":
            value = value[0] if isinstance(value, tuple) and len(value) == 1 else value
            out.append([value] if _is_int(value) else list(value) if isinstance(value, (list, tuple)) else [])
    return out


def size_error(op, fn, args, kwargs, e):
    """torch's RuntimeError for a tensor too large to exist (its byte count overflows) or to fit in memory."""
    for size in _sizes(fn, args, kwargs):
        if size and all(_is_int(s) and s >= 0 for s in size) and np.prod([float(s) for s in size]) * 8 >= 2.0 ** 63:
            return RuntimeError(f"{op}(): Storage size calculation overflowed with sizes={size}: no tensor can have "
                                f"that many elements; ask for a smaller size.")
    if isinstance(e, ValueError) and "array is too big" in str(e):  # numpy: the byte count overflows
        return RuntimeError(f"{op}(): Storage size calculation overflowed: no tensor can have that many elements "
                            f"(numpy: {e}); ask for a smaller size.")
    if isinstance(e, MemoryError):
        return RuntimeError(f"{op}(): can't allocate memory for the result ({e}). Check the sizes you passed; a "
                            "smaller tensor, or fewer elements at a time, fits.")
    return None


# ops whose tensor arguments broadcast against each other
_BROADCASTING = {"clamp", "clip", "remainder", "fmod", "floordiv", "mod", "allclose", "isclose", "normal", "where",
                 "maximum", "minimum", "pow", "add", "sub", "mul", "div", "and", "or", "xor", "masked_fill", "lerp",
                 "atan2", "arctan2", "hypot", "logaddexp", "logaddexp2", "xlogy", "fmax", "fmin", "addcmul", "addcdiv",
                 "floor_divide", "clamp_min", "clamp_max", "heaviside", "bernoulli", "max", "min"}


def shapes_error(op, args, kwargs, e):
    """torch's RuntimeError naming the shapes when the tensor arguments of an elementwise op do not broadcast."""
    # (the in-place forms too: fmod_; an argument of the wrong type is refused before any shape, as torch's parser)
    if op.rstrip("_") not in _BROADCASTING or isinstance(e, TypeError):
        return None
    tensors = [a for a in list(args) + list(kwargs.values()) if _is_tensor(a)]
    if op == "masked_fill":  # (torch's out-of-place form broadcasts the mask first: it is tensor a)
        tensors = tensors[1:2] + tensors[:1] + tensors[2:]
    try:
        np.broadcast_shapes(*(tuple(t.shape) for t in tensors))
        return None
    except ValueError:
        from ._op import broadcast_error
        err = broadcast_error(op, e, *tensors)
        return err if err is not e else None


def dtype_error(op, args, kwargs, e):
    """torch's NotImplementedError when numpy has no loop for the inputs' dtypes (ceil of a complex tensor, the
    negation of a bool one): the op has no kernel for them."""
    msg = str(e)
    values = list(args) + list(kwargs.values())
    tensors = [a for a in values if _is_tensor(a)]
    if isinstance(e, TypeError) and "complex" in msg and any(isinstance(a, complex) for a in values):
        return TypeError(f"{op}(): a complex number was given where {op} takes a real one ({msg}); pass a real "
                         "number")  # (the argument's type, as torch's parser says, not a kernel the tensor lacks)
    complex_input = "complex" in msg and any(t.dtype.is_complex for t in tensors)
    if not tensors or not isinstance(e, TypeError) or not (
            type(e).__module__.startswith("numpy") or "numpy boolean" in msg or complex_input
            or "not supported for the input types" in msg or "Cannot cast array data" in msg):
        return None
    dtypes = ", ".join(str(t.dtype) for t in tensors)
    return NotImplementedError(f'"{op}" not implemented for {dtypes}; convert the input first, e.g. x.float() '
                               "(or x.real for a complex tensor)")


_RANDOM_FILLS = {"exponential_", "geometric_", "log_normal_", "random_", "cauchy_", "normal_", "uniform_", "bernoulli_",
                 "bernoulli", "multinomial", "normal"}


def distribution_error(op, e):
    """torch's RuntimeError when numpy's random generator refused a parameter (exponential_(-4): a negative
    rate, geometric_(0): p outside (0, 1])."""
    if op not in _RANDOM_FILLS:
        return None
    if isinstance(e, TypeError):
        return TypeError(f"{op}(): the distribution's parameters must be numbers ({e})")
    if isinstance(e, (ValueError, ZeroDivisionError, AttributeError)):  # (AttributeError: a tensor of another
        return RuntimeError(f"{op}(): invalid parameters ({e}); check the signs, ranges and shapes of the "  # shape)
                            "arguments")
    return None


_NAMED = (RuntimeError, ValueError, IndexError, TypeError, NotImplementedError)
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def named_error(op, e):
    """e again, with a message that starts with the op's name when it does not name it: microtorch raised it in
    an op that this op runs (nanmean's sum, `if inplace:` on a tensor); a message that starts with the name of an
    op that this one's name contains (as_tensor's tensor) loses it. Only errors microtorch raised on purpose (a
    numpy error inside is not made to look like one)."""
    msg = str(e)
    if type(e) not in _NAMED or op.strip("_").lower() in msg.lower():
        return None
    frames = traceback.extract_tb(e.__traceback__)
    last = frames[-1] if frames else None
    if last is None or not os.path.abspath(last.filename).startswith(_PACKAGE) or \
            not (last.line or "").lstrip().startswith("raise"):
        return None
    inner = _INNER_OP.match(msg)  # (as_tensor(): not as_tensor(): tensor(): ...; but mod(): remainder(): ...)
    return type(e)(f"{op}(): {msg[inner.end():] if inner and inner.group(1) in op else msg}")


_INNER_OP = re.compile(r"^([\w.]+)\(\): ")  # the name of the op that raised, which the message starts with


def axis_error(op, e):
    """torch's IndexError when numpy found a dim out of range (the dim came from the caller)."""
    if isinstance(e, np.exceptions.AxisError):
        return IndexError(f"{op}(): Dimension out of range ({e}); dims count from 0 to ndim - 1, or from -ndim "
                          "to -1 backwards")
    return None


# Tensor operators guarded besides the public methods (numpy and Python call the others)
_OPERATORS = ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
              "__pow__", "__rpow__", "__matmul__", "__rmatmul__", "__floordiv__", "__mod__", "__and__", "__or__",
              "__xor__", "__getitem__", "__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__",
              "__ipow__", "__imod__", "__ifloordiv__", "__abs__", "__lt__", "__le__", "__gt__", "__ge__",
              "__rfloordiv__", "__rmod__", "__rand__", "__ror__", "__rxor__", "__lshift__", "__rshift__",
              "__rlshift__", "__rrshift__")


# the binary operators whose refusal of an operand is torch's NotImplemented (not the comparisons)
_REFLECTABLE = {"add", "radd", "sub", "rsub", "mul", "rmul", "truediv", "rtruediv", "pow", "rpow", "matmul",
                "rmatmul", "floordiv", "rfloordiv", "mod", "rmod", "and", "rand", "or", "ror", "xor", "rxor", "lshift",
                "rlshift", "rshift", "rrshift", "iadd", "isub", "imul", "itruediv", "ipow", "imod", "ifloordiv"}


def guard_namespace(ns, names=None, overrides=None, eager=False):
    """Guard the public functions of a module's globals() (or the given names)."""
    for name in names if names is not None else [n for n in list(ns) if not n.startswith("_")]:
        if isinstance(ns.get(name), types.FunctionType):
            ns[name] = guard(ns[name], op=name, overrides=overrides, eager=eager)


def guard_class(cls):
    """Guard a class's public methods and its arithmetic and indexing operators."""
    for name, fn in list(vars(cls).items()):
        if isinstance(fn, types.FunctionType) and (not name.startswith("_") or name in _OPERATORS):
            out_of_place = vars(cls).get(name[:-1]) if name.endswith("_") and not name.startswith("_") else None
            setattr(cls, name, guard(fn, op=name[2:-2] if name.startswith("__") else name, method=True,
                                     signature_of=out_of_place if isinstance(out_of_place, types.FunctionType)
                                     else None, operator=name if name in _OPERATORS else None))


def check_size(size, op):
    """torch's RuntimeError for a negative size (numpy's says nothing about the op), and the size as a tuple."""
    for s in size:
        if _is_int(s) and s < 0:
            raise RuntimeError(f"{op}(): Trying to create tensor with negative dimension {s}: {list(size)}; sizes "
                               "are counts of elements, 0 or more")
    return size


def check_einsum(equation, operands):
    """torch's RuntimeError for a malformed einsum equation (numpy's ValueError names neither op nor fix)."""
    lhs, _, rhs = equation.partition("->")
    for i, c in enumerate(equation):
        if c == "." and "..." not in equation:
            raise RuntimeError(f"einsum(): found '.' in {equation!r} that is not part of any ellipsis '...'")
        if not (c.isascii() and c.isalpha()) and c not in ",." and not (c in "->" and equation.find("->") in (i, i - 1)):
            raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the equation string "
                               f"{equation!r}, subscripts must be in [a-zA-Z]")
    terms = lhs.split(",")
    if len(terms) > len(operands):
        raise RuntimeError(f"einsum(): fewer operands were provided than specified in the equation {equation!r} "
                           f"({len(operands)} given for {len(terms)} terms)")
    for c in rhs:
        if c not in lhs and c != ".":
            raise RuntimeError(f"einsum(): output subscript {c} does not appear in the equation {equation!r} for "
                               "any input operand; every output letter must label a dimension of an input")
        if rhs.count(c) > 1 and c != ".":
            raise RuntimeError(f"einsum(): output subscript {c} appears more than once in the output of {equation!r}")


def need_dims(input, op):
    """torch's IndexError for picking along a dim of a 0-d tensor, which has none."""
    if input.ndim == 0:
        raise IndexError(f"{op}(): Dimension specified as 0 but tensor has no dimensions (it is 0-d); give it one "
                         "with x.reshape(1) or x.unsqueeze(0)")


def need_nonempty(input, op):
    """torch's IndexError for argmax/argmin of an empty tensor: there is no element to pick."""
    if input.numel() == 0:
        raise IndexError(f"{op}(): Expected reduction dim to be specified for input.numel() == 0 (input shape "
                         f"{list(input.shape)}); pass dim=, or check for empty input first")


def need_floating(input, op):
    """torch's NotImplementedError for an op with no kernel for integer or bool inputs (softmax of int64 logits)."""
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise NotImplementedError(f'"{op}" not implemented for {input.dtype}: the input must be a floating point '
                                  f"tensor; convert it with .float()")


def need_grad_dtype(input, dtype, op):
    """torch's RuntimeError for a dtype= that no gradient can flow through (x.sum(dtype=int64) of an x that
    requires grad, while grad mode is on)."""
    if dtype is None or not getattr(input, "requires_grad", False):
        return
    from .._dtype import to_dtype
    from ..autograd import grad_mode
    d = to_dtype(dtype)
    if not (d.is_floating_point or d.is_complex) and grad_mode.is_grad_enabled():
        name = _kernels._NAMES.get(d.name, d.name)
        raise RuntimeError(f"{op}(): Autograd not support dtype: {name}; the input requires grad, and no gradient "
                           "flows through integers: reduce in a floating dtype, or detach() first")
