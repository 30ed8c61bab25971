"""Argument types of the public API, checked the way torch's argument parser checks them.

`torch.abs(None)` raises `TypeError: abs(): argument 'input' (position 1) must be Tensor, not
NoneType`. microtorch gives the same answer from one place instead of a check in every op:
`guard(fn)` wraps a public function, and only when the call fails does it compare the arguments
with the parameters' kinds (a parameter's kind follows from its name: `input` is a Tensor, `dim`
an int or a tuple of ints, `keepdim` a bool...). A wrong type then becomes torch's TypeError
naming the op and the argument; any other error passes through untouched. A correct call pays
one Python frame and nothing else: no check runs unless something already went wrong.
"""
import functools
import inspect
import numbers
import types

import numpy as np

_TENSOR = {"input", "x", "self", "tensor", "mat1", "mat2", "mat", "vec", "vec1", "vec2", "target", "mask",
           "condition", "probs", "src", "a", "b", "index", "t"}
_TENSOR_OR_TENSORS = {"outputs", "inputs", "grad_outputs", "grad_tensors", "primals", "tangents", "cotangents"}
_TENSOR_OR_NUMBER = {"other", "exponent", "weight", "bias", "min", "max", "value", "mean", "std",
                     "running_mean", "running_var", "fill_value", "end", "start", "step"}
_TENSORS = {"tensors"}
_INT = {"k", "diagonal", "offset", "length", "chunks", "dim0", "dim1", "num_samples", "steps", "num_classes",
        "n", "high", "low", "groups", "padding_idx"}
_DIM = {"dim", "dims", "source", "destination"}  # an int, a sequence of ints, or None
_SIZE = {"size", "shape", "sizes", "normalized_shape", "kernel_size", "stride", "padding", "dilation",
         "output_size", "split_size_or_sections", "split_size", "repeats"}
_BOOL = {"keepdim", "largest", "sorted", "unbiased", "requires_grad", "descending", "stable", "ceil_mode",
         "count_include_pad", "inplace", "retain_graph", "create_graph", "allow_unused", "as_tuple",
         "equal_nan", "replacement", "return_indices", "training"}
_NUMBER = {"alpha", "eps", "negative_slope", "beta", "threshold", "rtol", "atol", "momentum", "correction",
           "lambd", "p", "base", "approximate", "reduction", "label_smoothing", "ignore_index"}
_CALLABLE = {"func"}
_STR = {"equation", "rounding_mode", "indexing", "mode"}
# where an op gives a parameter a stricter meaning than its name usually has
_OP_KINDS = {"equal": {"other": "tensor"}, "allclose": {"other": "tensor"}, "isclose": {"other": "tensor"},
             "dot": {"other": "tensor"}, "matmul": {"other": "tensor"}, "mm": {"other": "tensor"},
             "bmm": {"other": "tensor"}, "mv": {"other": "tensor"}, "outer": {"other": "tensor"},
             "ger": {"other": "tensor"}, "expand_as": {"other": "tensor"}, "view_as": {"other": "tensor"},
             "reshape_as": {"other": "tensor"}, "masked_select": {"mask": "tensor"},
             "maximum": {"other": "tensor"}, "minimum": {"other": "tensor"}}
_KIND_NAMES = {"tensor": "Tensor", "tensor_or_tensors": "Tensor or tuple of Tensors", "tensor_or_number": "Tensor", "tensors": "tuple of Tensors", "int": "int",
               "dim": "int or tuple of ints", "size": "tuple of ints", "bool": "bool", "dtype": "microtorch.dtype",
               "callable": "a callable", "number": "Number", "str": "str"}
_FIX = {"Tensor": "wrap the value with microtorch.tensor(...)",
        "Tensor or tuple of Tensors": "pass a tensor or a tuple of tensors",
        "tuple of Tensors": "pass a list or tuple of tensors, e.g. cat([a, b])",
        "int or tuple of ints": "pass an int such as 0 or -1, or a tuple of them",
        "tuple of ints": "pass ints, e.g. (2, 3)", "int": "pass a Python int", "bool": "pass True or False",
        "microtorch.dtype": "pass a dtype such as microtorch.float32", "a callable": "pass a function",
        "Number": "pass a Python number", "str": "pass a string"}


def _kind(name, overrides=None):
    if overrides and name in overrides:
        return overrides[name]
    for kind, names in (("tensor", _TENSOR), ("tensor_or_tensors", _TENSOR_OR_TENSORS), ("tensor_or_number", _TENSOR_OR_NUMBER), ("tensors", _TENSORS),
                        ("int", _INT), ("dim", _DIM), ("size", _SIZE), ("bool", _BOOL), ("number", _NUMBER),
                        ("callable", _CALLABLE), ("str", _STR)):
        if name in names:
            return kind
    return "dtype" if name == "dtype" else None


def _is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _is_tensor(v):
    from .._tensor import Tensor
    return isinstance(v, Tensor) or getattr(v, "__vmap_batched__", False)


def _ok(kind, v):
    """Does value v fit a parameter of this kind? (None is allowed where a default may stand)"""
    if kind == "tensor":
        return _is_tensor(v)
    if kind == "tensor_or_number":
        return _is_tensor(v) or isinstance(v, (numbers.Number, np.number, np.bool_))
    if kind == "tensor_or_tensors":
        return v is None or _is_tensor(v) or (isinstance(v, (list, tuple)) and all(
            t is None or _is_tensor(t) for t in v))
    if kind == "tensors":
        return isinstance(v, (list, tuple)) and all(_is_tensor(t) for t in v)
    if kind == "int":
        return _is_int(v)
    if kind == "dim":
        return v is None or _is_int(v) or (isinstance(v, (list, tuple)) and all(_is_int(d) for d in v))
    if kind == "size":
        return v is None or _is_int(v) or (isinstance(v, (list, tuple)) and all(_is_int(d) for d in v))
    if kind == "bool":
        return isinstance(v, (bool, np.bool_))
    if kind == "number":
        return v is None or isinstance(v, (numbers.Number, np.number, str)) or _is_tensor(v)
    if kind == "dtype":
        from .._dtype import dtype
        return v is None or isinstance(v, (dtype, type, np.dtype))
    if kind == "callable":
        return callable(v)
    if kind == "str":
        return isinstance(v, str)
    return True


def _type_name(v):
    return "Tensor" if _is_tensor(v) else type(v).__name__


@functools.lru_cache(maxsize=None)
def _signature(fn):
    return inspect.signature(fn)


def type_error(op, fn, args, kwargs, method, overrides=None):
    """torch's TypeError for the first argument of the wrong type, or None when the types fit."""
    try:
        bound = _signature(fn).bind(*args, **kwargs)
    except TypeError as e:  # wrong number of arguments, an unknown keyword: Python's own message
        return TypeError(f"{op}(): {e}".replace(f"{op}(): {op}()", f"{op}()"))
    params = _signature(fn).parameters
    overrides = {**_OP_KINDS.get(op, {}), **(overrides or {})}
    for pos, (name, value) in enumerate(bound.arguments.items()):
        p = params[name]
        kind = _kind(name, overrides)
        if method and pos == 0 or kind is None or p.kind is p.VAR_KEYWORD:
            continue
        if p.kind is p.VAR_POSITIONAL:  # f(*size) takes ints, or one tuple of them
            if kind not in ("size", "dim") or not value:
                continue
            value = value[0] if len(value) == 1 and isinstance(value[0], (list, tuple)) else value
            kind = "size"
        if value is p.default or _ok(kind, value):
            continue
        want = _KIND_NAMES[kind]
        shown = "input" if name in ("x", "a", "t") else name
        where = f" (position {pos + (0 if method else 1)})" if p.kind is not p.KEYWORD_ONLY else ""
        return TypeError(f"{op}(): argument '{shown}'{where} must be {want}, not {_type_name(value)}; "
                         f"{_FIX[want]}.")
    return None


def guard(fn, op=None, method=False, signature_of=None, overrides=None):
    """fn, whose failures caused by an argument of the wrong type raise torch's TypeError.
    `signature_of`: the function whose parameters describe fn's (an in-place method that takes
    *args describes them by its out-of-place form); `overrides`: {parameter name: kind} where a
    name means something else than usual."""
    if getattr(fn, "__microtorch_guarded__", False) or not isinstance(fn, types.FunctionType):
        return fn
    op = op or fn.__name__
    sig_fn = inspect.unwrap(signature_of or fn)

    @functools.wraps(fn)
    def guarded(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            err = type_error(op, sig_fn, args, kwargs, method, overrides)
            if err is None:
                raise
            raise err from e

    guarded.__microtorch_guarded__ = True
    return guarded


# Tensor operators guarded besides the public methods (numpy and Python call the others)
_OPERATORS = ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
              "__pow__", "__rpow__", "__matmul__", "__rmatmul__", "__floordiv__", "__mod__", "__and__", "__or__",
              "__xor__", "__getitem__", "__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__",
              "__ipow__")


def guard_namespace(ns, names=None, overrides=None):
    """Guard the public functions of a module's globals() (or the given names)."""
    for name in names if names is not None else [n for n in list(ns) if not n.startswith("_")]:
        if isinstance(ns.get(name), types.FunctionType):
            ns[name] = guard(ns[name], op=name, overrides=overrides)


def guard_class(cls):
    """Guard a class's public methods and its arithmetic and indexing operators."""
    for name, fn in list(vars(cls).items()):
        if isinstance(fn, types.FunctionType) and (not name.startswith("_") or name in _OPERATORS):
            out_of_place = vars(cls).get(name[:-1]) if name.endswith("_") and not name.startswith("_") else None
            setattr(cls, name, guard(fn, op=name[2:-2] if name.startswith("__") else name, method=True,
                                     signature_of=out_of_place if isinstance(out_of_place, types.FunctionType)
                                     else None))
