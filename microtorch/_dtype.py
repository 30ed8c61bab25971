"""dtypes as torch names them, the default dtype, and torch's type-promotion rules."""
import numpy as np


class dtype:
    """A tensor element type: a torch-style name over a numpy dtype."""
    __module__ = "microtorch"  # (as torch prints the class: <class 'torch.dtype'>)

    __slots__ = ("name", "np", "is_floating_point", "is_complex", "is_signed", "itemsize")

    def __init__(self, name, np_dtype):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.is_floating_point = self.np.kind == "f"
        self.is_complex = self.np.kind == "c"
        self.is_signed = self.np.kind in "ifc"
        self.itemsize = self.np.itemsize

    def __repr__(self):
        return f"microtorch.{self.name}"

    def __reduce__(self):
        return (_by_name, (self.name,))

    def to_real(self):
        return {"complex64": float32, "complex128": float64}.get(self.name, self)

    def to_complex(self):
        return {"float32": complex64, "float64": complex128, "float16": complex64}.get(self.name, self)


float16 = dtype("float16", np.float16)
float32 = dtype("float32", np.float32)
float64 = dtype("float64", np.float64)
complex64 = dtype("complex64", np.complex64)
complex128 = dtype("complex128", np.complex128)
uint8 = dtype("uint8", np.uint8)
int8 = dtype("int8", np.int8)
int16 = dtype("int16", np.int16)
int32 = dtype("int32", np.int32)
int64 = dtype("int64", np.int64)
bool_ = dtype("bool", np.bool_)

class layout:
    """How a tensor keeps its elements: strided (a dense array) or sparse_coo (indices and values)."""
    __module__ = "microtorch"  # (as torch prints the class: <class 'torch.layout'>)
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"microtorch.{self.name}"

    def __reduce__(self):
        return (_layout_by_name, (self.name,))


strided = layout("strided")
sparse_coo = layout("sparse_coo")


def _layout_by_name(name):
    return {"strided": strided, "sparse_coo": sparse_coo}[name]


class _AbsentDtype(dtype):
    """A torch dtype numpy has no type for (bfloat16). Its name exists, so code that lists it in a table or compares
    with it runs (nanoGPT's {'float32': torch.float32, 'bfloat16': torch.bfloat16, ...}); anything that needs its
    values (a tensor of it, a conversion, finfo) raises a TypeError that says so."""
    __slots__ = ()

    def __init__(self, name, itemsize):
        for slot, value in (("name", name), ("is_floating_point", True), ("is_complex", False), ("is_signed", True),
                            ("itemsize", itemsize)):
            object.__setattr__(self, slot, value)

    @property
    def np(self):
        raise TypeError(f"microtorch has no {self.name}: numpy has no such type, so no tensor can hold it. Use "
                        "float32 (microtorch.float32), or float16 where half precision is the point.")


bfloat16 = _AbsentDtype("bfloat16", 2)

half, float, double = float16, float32, float64
cfloat, cdouble = complex64, complex128
short, int, long = int16, int32, int64

ALL = (float16, float32, float64, complex64, complex128, uint8, int8, int16, int32, int64, bool_)
_FROM_NP = {d.np: d for d in ALL}
_BY_NAME = {d.name: d for d in ALL}


def _by_name(name):
    return _BY_NAME[name]


def from_numpy_dtype(np_dtype):
    """The microtorch dtype for a numpy dtype (TypeError for ones torch lacks)."""
    try:
        return _FROM_NP[np.dtype(np_dtype)]
    except KeyError:
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np.dtype(np_dtype).type.__name__}. The only supported types are: "
            "float64, float32, float16, complex64, complex128, int64, int32, int16, int8, uint8, and bool."
        ) from None


_HALF, _DOUBLE = np.dtype(np.float16), np.dtype(np.float64)


def cast(array, np_dtype):
    """array (an ndarray) converted to np_dtype as torch converts: a double becomes a half through
    float (c10's Half is made from a float), so it rounds twice, which numpy's direct conversion
    does not (about 4 values in 100,000 come out one step apart)."""
    if np_dtype == _HALF and array.dtype == _DOUBLE:
        array = array.astype(np.float32)
    return array.astype(np_dtype)


def to_dtype(d):
    """Accept a microtorch dtype, a numpy dtype or a Python type."""
    if isinstance(d, dtype):
        return d
    if d is builtins_float:
        return get_default_dtype()
    if d is builtins_int:
        return int64
    if d is builtins_bool:
        return bool_
    if d is builtins_complex:
        return get_default_dtype().to_complex()
    return from_numpy_dtype(d)


import builtins as _b  # noqa: E402  (the module shadows float/int/bool above)

builtins_float, builtins_int, builtins_bool, builtins_complex = _b.float, _b.int, _b.bool, _b.complex

_default = [float32]


def get_default_dtype():
    return _default[0]


def set_default_dtype(d):
    d = to_dtype(d)
    if not d.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    d.np  # noqa: B018  (a dtype microtorch lacks, bfloat16, raises its TypeError here)
    _default[0] = d


# ---- promotion -------------------------------------------------------------------------
def _category(d):
    if d is bool_:
        return 0
    if d.is_complex:
        return 3
    if d.is_floating_point:
        return 2
    return 1


def promote_types(type1, type2):
    """torch.promote_types: the smallest dtype both type1 and type2 convert to safely."""
    a, b = type1, type2
    if a is b:
        return a
    ca, cb = _category(a), _category(b)
    if ca != cb:
        hi, lo = (a, b) if ca > cb else (b, a)
        if hi.is_complex and lo.is_floating_point and lo.itemsize * 2 > hi.itemsize:
            return lo.to_complex()
        return hi
    return _FROM_NP[np.promote_types(a.np, b.np)]


def _scalar_dtype(x):
    if isinstance(x, _b.bool):
        return bool_
    if isinstance(x, _b.int):
        return int64
    if isinstance(x, _b.complex):
        return get_default_dtype().to_complex()
    return get_default_dtype()


def _numpy_scalar_dtype(x):
    """The dtype torch gives a numpy scalar operand: it reads it as a Python number of its kind (np.float32(2) as
    2.0, np.int8(2) as 2), and np.bool_ as a float (True as 1.0, unlike Python's True)."""
    if isinstance(x, np.integer):
        return int64
    if isinstance(x, np.complexfloating):
        return get_default_dtype().to_complex()
    return get_default_dtype()


def _combine(higher, lower):
    if higher is None:
        return lower
    if lower is None:
        return higher
    ch, cl = _category(higher), _category(lower)
    if ch == 3:
        return higher
    if cl == 3:
        return higher.to_complex() if ch == 2 else lower
    if ch == 2:
        return higher
    if higher is bool_ or cl == 2:
        return promote_types(higher, lower)
    return higher


def result_type(*operands):
    """torch.result_type over tensors and Python scalars.

    Dimensioned tensors outrank zero-dim tensors, which outrank Python scalars; a lower
    group only matters when it brings a higher category (bool < int < float < complex).
    """
    dim = zero = wrapped = None
    for x in operands:
        d = getattr(x, "dtype", None)
        if d is not None and not isinstance(d, dtype):  # a numpy array (promoted() makes scalars into them)
            if isinstance(x, np.generic):  # a numpy scalar: a Python number to torch
                s = _numpy_scalar_dtype(x)
                wrapped = s if wrapped is None else promote_types(wrapped, s)
                continue
            d = from_numpy_dtype(d)
        if d is None:
            if x is None:
                continue
            s = _scalar_dtype(x)
            wrapped = s if wrapped is None else promote_types(wrapped, s)
        elif x.ndim:
            dim = d if dim is None else promote_types(dim, d)
        else:
            zero = d if zero is None else promote_types(zero, d)
    return _combine(dim, _combine(zero, wrapped))


def torch_result_type(tensor=None, other=None, *, scalar=None, scalar1=None, scalar2=None):
    """torch.result_type of two operands, by position or by the keywords of torch's overloads:
    (tensor, other), (scalar, tensor) and (scalar1, scalar2)."""
    if scalar1 is not None or scalar2 is not None:
        operands = (scalar1, scalar2)
    elif scalar is not None:
        operands = (scalar, tensor)
    else:
        operands = (tensor, other)
    if any(o is None for o in operands):
        raise TypeError("result_type() takes two operands, a tensor or a number each, e.g. result_type(x, 1.0)")
    return result_type(*operands)
