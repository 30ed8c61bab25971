"""The dtypes torch 2.13 has no kernel for, op by op, checked where the op is entered.

numpy computes `abs` of a bool array or `x >= y` of complex arrays without complaint; torch refuses
(`NotImplementedError: "abs_cpu" not implemented for 'Bool'`), and a program that runs here must run
on torch. An op's kernel runs in one dtype: its input's, or for the binary ops of `_PROMOTING` the
dtype its first arguments promote to (`ge(int, complex)` runs in complex). The tables name that
dtype by its numpy kind: 'b' bool, 'i' integer (numpy's 'u', uint8, is added below), 'f' floating point,
'c' complex. Each entry was
read off torch 2.13 (`tests/api_sweep.py` finds a new one as a "silent" difference).
`ops/_checks.guard` looks the op up once, when it wraps the public function; an op that is not in
the tables pays nothing.
"""
import numpy as np

# op: the kinds torch has no kernel for (NotImplementedError)
_NO_KERNEL = {
    "abs": "b", "absolute": "b", "softsign": "b", "ceil": "b", "floor": "b", "trunc": "b", "fix": "b",
    "round": "bc", "frac": "bic", "kthvalue": "b", "trace": "b", "inner": "b",
    "amax": "c", "amin": "c", "aminmax": "c", "unique": "c", "logit": "c",
    "softmax": "c", "log_softmax": "c", "softmin": "c", "leaky_relu": "c", "bucketize": "c",
    "celu": "bic", "elu": "bic", "selu": "bic", "rrelu": "bic", "hardshrink": "bic", "hardsigmoid": "bic",
    "hardswish": "bic", "softshrink": "bic", "softplus": "bic", "histc": "bic", "histogram": "bic",
    "avg_pool1d": "bc", "threshold": "bc",
    "gelu": "bi", "mish": "bi", "silu": "bi", "logsigmoid": "bi", "glu": "ic", "nll_loss": "ic",
    "normal_": "bi", "uniform_": "bi", "log_normal_": "bic",
    "random_": "c", "bernoulli": "c", "relu": "c", "relu6": "c", "hardtanh": "c", "max": "c", "min": "c",
    "multilabel_soft_margin_loss": "i", "sign": "c",
    # binary ops (see _PROMOTING)
    "ge": "c", "gt": "c", "le": "c", "lt": "c", "greater": "c", "greater_equal": "c", "less": "c",
    "less_equal": "c", "xlogy": "c", "clamp": "c", "clip": "c", "clamp_min": "c", "clamp_max": "c",
    "floor_divide": "bc", "floordiv": "bc", "fmod": "bc", "remainder": "bc", "mod": "bc",
    "pow": "b", "ipow": "b", "rpow": "b", "gcd": "b", "lcm": "b", "bitwise_left_shift": "b",
    "bitwise_right_shift": "b", "searchsorted": "bc", "hypot": "bic", "nextafter": "bic",
    "logaddexp": "bi", "logaddexp2": "bi", "igamma": "bi", "igammac": "bi", "smooth_l1_loss": "bic",
    "mse_loss": "ic", "huber_loss": "bic", "and": "fc", "or": "fc", "xor": "fc",
}
# op: the number of leading arguments whose promoted dtype picks the kernel
_PROMOTING = {
    "ge": 2, "gt": 2, "le": 2, "lt": 2, "greater": 2, "greater_equal": 2, "less": 2, "less_equal": 2,
    "xlogy": 2, "clamp": 3, "clip": 3, "clamp_min": 2, "clamp_max": 2, "floor_divide": 2, "floordiv": 2,
    "fmod": 2, "remainder": 2, "mod": 2, "pow": 2, "ipow": 2, "rpow": 2, "gcd": 2, "lcm": 2,
    "bitwise_left_shift": 2, "bitwise_right_shift": 2, "searchsorted": 2, "hypot": 2, "nextafter": 2,
    "logaddexp": 2, "logaddexp2": 2, "igamma": 2, "igammac": 2, "smooth_l1_loss": 2, "mse_loss": 2,
    "huber_loss": 2, "and": 2, "or": 2, "xor": 2, "maximum": 2, "minimum": 2, "fmax": 2, "fmin": 2, "max": 2, "min": 2,
}
# op: (kinds, what torch says) where torch refuses with a RuntimeError of its own
_REFUSED = {
    "relu": ("b", "Boolean inputs not supported for relu"),
    "relu6": ("b", "Bool inputs not supported for hardtanh"),
    "hardtanh": ("b", "Bool inputs not supported for hardtanh"),
    "argmax": ("bc", "argmax(): does not support {kind} input"),
    "argmin": ("bc", "argmin(): does not support {kind} input"),
    "std": ("bi", "std and var only support floating point and complex dtypes"),
    "var": ("bi", "std and var only support floating point and complex dtypes"),
    "norm": ("bi", "norm: Expected a floating point or complex tensor as input. Got {dtype}"),
    "normalize": ("bi", "normalize: linalg.vector_norm expected a floating point or complex tensor as input. "
                        "Got {dtype}"),
    "svd": ("bi", "svd: linalg.svd expected a floating point or complex tensor as input. Got {dtype}"),
    "sort": ("c", "sort does not support complex dtypes on CPU"),
    "argsort": ("c", "argsort: sort does not support complex dtypes on CPU"),
    "msort": ("c", "msort: sort does not support complex dtypes on CPU"),
    "topk": ("bc", "topk does not support {kind} dtypes on CPU"),
    "nansum": ("c", "nansum on CPU does not support complex inputs"),
    "nanmean": ("c", "nanmean: nansum on CPU does not support complex inputs"),
    "maximum": ("c", "maximum not implemented for complex tensors."),
    "minimum": ("c", "minimum not implemented for complex tensors."),
    "fmax": ("c", "fmax not implemented for complex tensors."),
    "fmin": ("c", "fmin not implemented for complex tensors."),
    "rad2deg": ("c", "rad2deg is not supported for complex tensors."),
    "deg2rad": ("c", "deg2rad is not supported for complex tensors."),
    "isposinf": ("c", "isposinf does not support complex inputs."),
    "isneginf": ("c", "isneginf does not support complex inputs."),
}
# numpy calls uint8's kind 'u': an op without an integer kernel has none for uint8 either
_NO_KERNEL = {op: kinds + "u" * ("i" in kinds) for op, kinds in _NO_KERNEL.items()}
_REFUSED = {op: (kinds + "u" * ("i" in kinds), msg) for op, (kinds, msg) in _REFUSED.items()}
# ops that refuse a bool tensor among their first n arguments, whatever the others are
_NO_BOOL_OPERAND = {"sub": 2, "subtract": 2, "rsub": 2, "isub": 2, "tanhshrink": 1, "triplet_margin_loss": 3,
                    "triplet_margin_with_distance_loss": 3}
# ops whose first n tensors must have one dtype (torch does not promote them)
_SAME_DTYPE = {"allclose": 2, "isclose": 2, "inner": 2}
# ops whose dtype check comes before their dims are checked (the others wrap the dims first)
DTYPE_BEFORE_DIMS = {"argmax", "argmin", "std", "var", "norm", "normalize", "unique"}
_RANK = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}
_SCALAR = {bool: "b", int: "i", float: "f", complex: "c"}
_WORD = {"b": "bool", "i": "integer", "u": "integer", "f": "floating point", "c": "complex"}
# how torch's C++ type names read in some of its messages ("float != double")
_TYPE_META = {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int", "int32": "int",
              "int16": "short int", "int8": "signed char", "uint8": "unsigned char", "bool": "bool",
              "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}
_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long", "int32": "Int",
          "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool", "complex64": "ComplexFloat",
          "complex128": "ComplexDouble"}


def rule(op):
    """How many leading arguments op's dtype check reads, or 0 when torch has a kernel for every dtype."""
    if op in _NO_BOOL_OPERAND or op in _SAME_DTYPE:
        return _NO_BOOL_OPERAND.get(op) or _SAME_DTYPE[op]
    if op in _NO_KERNEL or op in _REFUSED:
        return _PROMOTING.get(op, 1)
    return 0


class _NoData:
    """What `getattr(x, "_data", NO_DATA)` gives for an argument that is not a tensor: no dtype kind."""
    class dtype:
        kind = "-"


NO_DATA = _NoData()


def suspect(op, names):
    """A cheap Python condition on the arguments `names` (code for ops/_checks.py's wrapper), true whenever
    kernel_error may find an error: a promoted dtype is the dtype of one of the arguments, so only an
    argument of a refused kind can make it refused. kernel_error then decides."""
    bad = "b" if op in _NO_BOOL_OPERAND else _NO_KERNEL.get(op, "") + _REFUSED.get(op, ("",))[0]
    tests = [f'getattr({n}, "_data", NO_DATA).dtype.kind in "{bad}"' for n in names] if bad else []
    # (a number promotes too: ge(x, 1j) runs in complex; sub refuses a Python bool as a bool tensor)
    tests += [f"type({n}) is {t.__name__}" for n in names[1:] for t, k in _SCALAR.items() if k in bad]
    if op in _SAME_DTYPE:  # (builtin numpy dtypes are shared objects: `is not` is exact for them, else cautious)
        a, b = names[:2]
        tests.append(f'getattr({a}, "_data", NO_DATA).dtype is not getattr({b}, "_data", NO_DATA).dtype')
    return " or ".join(tests)


def _kernel_dtype(values):
    """The numpy dtype the kernel runs in: the highest kind among the tensors and numbers given."""
    best, rank = None, -1
    for v in values:
        data = getattr(v, "_data", None)
        if data is not None:
            dt = data.dtype
        elif type(v) in _SCALAR:
            dt = np.dtype(type(v))
        elif isinstance(v, np.generic):  # a numpy scalar: a number of its kind to torch (np.bool_ a float)
            dt = np.dtype(np.float64) if v.dtype.kind == "b" else v.dtype
        else:
            continue
        r = _RANK.get(dt.kind, -1)
        if r > rank:
            best, rank = dt, r
    return best


def kernel_error(op, values):
    """torch's error when op has no kernel for the dtype of `values` (its leading arguments), else None.
    (Runs on every call of the ops in the tables: the common case returns after a few lookups.)"""
    if op in _NO_BOOL_OPERAND:
        return _bool_operand_error(op, values)
    if op in _SAME_DTYPE:
        err = _same_dtype_error(op, values)
        if err is not None:
            return err
    if op in ("max", "min") and len(values) > 1 and hasattr(values[1], "_data"):
        op += "imum"  # max(x, other) is maximum(x, other)
    dt = _kernel_dtype(values)
    if dt is None or dt.kind not in _NO_KERNEL.get(op, "") + _REFUSED.get(op, ("",))[0]:
        return None
    name = _NAMES.get(dt.name, dt.name)
    if dt.kind in _NO_KERNEL.get(op, ""):
        return NotImplementedError(f'"{op}" not implemented for \'{name}\': torch has no {op} kernel for '
                                   f"{_WORD[dt.kind]} tensors; convert the input first, e.g. x.float()")
    msg = _REFUSED[op][1].format(kind=_WORD[dt.kind], dtype=name)
    return RuntimeError(msg if op in msg else f"{op}(): {msg}")


def _bool_operand_error(op, values):
    bools = [v.__class__ is bool or getattr(v, "_data", NO_DATA).dtype.kind == "b" for v in values]
    if all(bools) and len(bools) > 1:  # (a Python bool counts as a bool tensor, as in torch)
        return RuntimeError(f"{op}(): Subtraction, the `-` operator, with two bool tensors is not supported. Use "
                            "the `^` or `logical_xor()` operator instead.")
    if any(bools):
        return RuntimeError(f"{op}(): Subtraction, the `-` operator, with a bool tensor is not supported. If "
                            "you are trying to invert a mask, use the `~` or `logical_not()` operator instead.")
    return None


def _same_dtype_error(op, values):
    dtypes = [v._data.dtype for v in values if hasattr(v, "_data") and v.ndim]  # (a 0-d one is a scalar)
    if all(d == dtypes[0] for d in dtypes):
        return None
    a, b = (_NAMES.get(d.name, d.name) for d in dtypes[:2])
    return RuntimeError(f"{op}(): expected both inputs to have the same dtype, but {a} did not match {b}; "
                        "convert one with .to(other.dtype)")
