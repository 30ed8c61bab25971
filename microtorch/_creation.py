"""Factory functions: zeros, ones, arange, rand, ... and their *_like forms."""
import builtins
import functools
import math
import operator
import types

import numpy as np

from . import _dtype
from ._random import _rng, drawn_for
from ._meta import meta_array
from ._tensor import Tensor, _filled, _made_leaf, _size_arg, device_type, placement
from .ops._checks import check_size
from .ops import _range_kernels
from .ops._out import factory_out
from .ops._memory_formats import contiguous_format, empty_like_layout, preserve_format
from .ops.index import fill_scalar
from .ops.triangle import tril, triu  # noqa: F401 (their home is ops/triangle.py; microtorch imports them from here)


def _finish(arr, dtype, requires_grad, device=None):
    if dtype is not None:
        arr = arr.astype(_dtype.to_dtype(dtype).np, copy=False)
    if not getattr(arr, "__vmap_batched__", False):  # (vmap(randomness="different") draws a batch)
        arr = np.ascontiguousarray(arr).reshape(np.shape(arr))  # (ascontiguousarray makes 0-d 1-d)
    return _placed(Tensor._make(arr), device, requires_grad)


def _placed(t, device, requires_grad=False):
    """t on `device` ('cpu' or 'meta': a shape without data; None: the default device), a leaf requiring grad if
    asked. (The *_like factories pass their input's device.)"""
    device = placement(device)
    if device is not None and device_type(device) != "cpu":
        t = t.to(device)
    if requires_grad:
        t.requires_grad = True
        _made_leaf(t)
    return t


def _on_meta(device):
    """Does a factory given `device` (None: the default device) make a meta tensor? (Random factories then draw
    nothing, as in torch: there is no data, and the generator stays where it was.) A device microtorch lacks is
    refused here, before a random factory draws, as torch refuses it before its generator moves."""
    device = placement(device)
    if device is not None and device_type(device) not in ("cpu", "meta"):
        _placed(Tensor._make(np.zeros(0)), device)  # (placing raises its error for such a device)
    return device is not None and device_type(device) == "meta"


def _default(dtype):
    return _dtype.to_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()


def _sizes(size, kw, op):
    """The size given as *size or as size=(...), as torch's factories take it."""
    size_kw = kw.pop("size", None)
    if kw:
        raise TypeError(f"{op}() got an unexpected keyword argument '{next(iter(kw))}'")
    if size_kw is not None:
        if size:
            raise TypeError(f"{op}() got multiple values for argument 'size'")
        if not isinstance(size_kw, (tuple, list)):
            raise TypeError(f"{op}(): argument 'size' must be tuple of ints, not {type(size_kw).__name__}")
        return _size_arg((size_kw,))
    if not size:
        raise TypeError(f"{op}() missing 1 required positional arguments: \"size\"")
    return _size_arg(size)


def _filled_on(size, value, dtype, device, requires_grad):
    if _on_meta(device):  # (a shape and a dtype, no data: nothing is allocated, however large, as torch's)
        _filled((0,) * len(size) if all(isinstance(s, (int, np.integer)) and s >= 0 for s in size) else size, value,
                dtype, False)  # (its checks of the sizes, the value and the dtype)
        return _placed(Tensor._make(meta_array(tuple(size), _default(dtype).np)), device, requires_grad)
    return _placed(_filled(size, value, dtype, False), device, requires_grad)


def _fill_value(value, dtype, op, size):
    """value converted into dtype as torch's fill_ converts it (ops/index.py's fill_scalar): full, full_like and
    new_full fill. (torch fills a one-element half tensor unchecked: a value beyond its range is inf there.)"""
    if not isinstance(value, (int, float, complex)):
        return value
    dt = _dtype.to_dtype(dtype)
    return _scalar_to(value, dt, op, float_range=dt.name != "float16" or math.prod(size) != 1)


_C_TYPES = {"int64": "int64_t", "int32": "int", "int16": "int16_t", "int8": "int8_t", "uint8": "uint8_t"}


def _check_fits(value, dt):
    """torch's RuntimeError for a fill value an integer dtype cannot hold (NaN, inf, out of its range)"""
    number = isinstance(value, (builtins.int, builtins.float)) and not isinstance(value, builtins.bool)
    if dt.name not in _C_TYPES or not number:
        return
    info = np.iinfo(dt.np)
    if not (np.isfinite(value) and info.min <= value <= info.max):
        raise RuntimeError(f"value cannot be converted to type {_C_TYPES[dt.name]} without overflow ({value} into "
                           f"{dt}: its range is {info.min} to {info.max})")


@factory_out
def zeros(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, **kw):
    return _filled_on(_sizes(size, kw, "zeros"), 0, dtype, device, requires_grad)


@factory_out
def ones(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, **kw):
    return _filled_on(_sizes(size, kw, "ones"), 1, dtype, device, requires_grad)


@factory_out
def empty(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
          memory_format=None, **kw):
    t = _filled_on(_sizes(size, kw, "empty"), 0, dtype, device, requires_grad)
    if memory_format is preserve_format:
        raise RuntimeError("unsupported memory format Preserve (empty makes a new layout: give contiguous_format "
                           "or channels_last)")
    return t if memory_format is None else _relaid(t, t._data, memory_format, "empty")


def _relaid(t, like, fmt, op):
    """t, made in C order, laid out as torch lays out a new tensor in memory format fmt: preserve_format (the *_like
    factories' default) copies the dense layout of the array `like`."""
    if fmt is contiguous_format or type(t._data) is not np.ndarray or type(like) is not np.ndarray \
            or fmt is preserve_format and like.flags.c_contiguous and 1 not in like.shape:  # (vmap's and meta
        # arrays keep their own layout; a size-1 dim of `like` keeps its stride, as in torch)
        return t
    data = empty_like_layout(like, t._data.dtype, fmt, op)
    data[...] = t._data
    t._data = data
    return t


def _laid_out_like_input(make):
    """A *_like factory whose result is laid out as torch's: as `input` when it is dense (preserve_format), or in
    the memory_format asked."""
    @functools.wraps(make)
    def like(input, *args, memory_format=None, **kwargs):
        fmt = preserve_format if memory_format is None else memory_format
        return _relaid(make(input, *args, **kwargs), input._data, fmt, make.__name__)
    return like


def _drawn_like_input(make):
    """A random *_like factory, laid out as _laid_out_like_input lays one out, whose values are drawn as torch fills
    that layout: in the order of its memory, one at a time where it is not contiguous (_random.drawn_for)."""
    laid_out = _laid_out_like_input(make)

    @functools.wraps(make)
    def like(input, *args, memory_format=None, **kwargs):
        fmt = preserve_format if memory_format is None else memory_format
        if fmt is contiguous_format or type(input._data) is not np.ndarray or input.is_meta:
            return laid_out(input, *args, memory_format=memory_format, **kwargs)
        layout = empty_like_layout(input._data, np.int8, fmt, make.__name__)  # (only its strides are read)
        if layout.flags.c_contiguous:
            return laid_out(input, *args, memory_format=memory_format, **kwargs)
        made = []

        def draw(shape):  # (the factory's draws for a tensor of input's kind in memory order)
            made.append(make(types.SimpleNamespace(shape=shape, dtype=input.dtype, device=input.device), *args,
                             **kwargs))
            return made[0]._data
        values = drawn_for(_rng(kwargs.get("generator")), layout, draw)
        made[0]._data = _with_size_one_strides(values, layout)  # (the draws seen in input's order, without a copy)
        return made[0]
    return like


def _with_size_one_strides(values, layout):
    """values with layout's strides at its size-1 dims too (torch's *_like keep them; no element moves)"""
    strides = tuple(v if n > 1 else w // layout.itemsize * values.itemsize
                    for n, v, w in zip(values.shape, values.strides, layout.strides))
    return values if strides == values.strides else np.lib.stride_tricks.as_strided(values, strides=strides)


def new_full(self, size, fill_value, dtype=None, requires_grad=False):
    """Tensor.new_full: a tensor of self's dtype (or dtype) filled with fill_value, converted as full's"""
    dtype = dtype or self.dtype
    return _filled(tuple(size), _fill_value(fill_value, dtype, "new_full", tuple(size)), dtype, requires_grad)


@factory_out
def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    if dtype is None:
        dtype = _dtype.result_type(fill_value) if not isinstance(fill_value, builtins.float) else _default(None)
    size = _size_arg((size,))
    return _filled_on(size, _fill_value(fill_value, dtype, "full", size), dtype, device, requires_grad)


def _like(t, dtype):
    return dtype if dtype is not None else t.dtype


@_laid_out_like_input
def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    return _filled_on(tuple(input.shape), 0, _like(input, dtype), device or input.device, requires_grad)


@_laid_out_like_input
def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    return _filled_on(tuple(input.shape), 1, _like(input, dtype), device or input.device, requires_grad)


@_laid_out_like_input
def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    return _filled_on(tuple(input.shape), 0, _like(input, dtype), device or input.device, requires_grad)


@_laid_out_like_input
def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    dt = _like(input, dtype)
    return _filled_on(tuple(input.shape), _fill_value(fill_value, dt, "full_like", input.shape), dt, device or input.device,
                      requires_grad)


_NOT_GIVEN = object()  # (arange(5) gives no end; arange(5, None) gives None, which torch refuses)


@factory_out(by_count=True)
def arange(start=_NOT_GIVEN, end=_NOT_GIVEN, step=1, *, out=None, dtype=None, layout=None, device=None,
           requires_grad=False):
    if end is _NOT_GIVEN:
        if start is _NOT_GIVEN:
            raise TypeError('arange() missing 1 required positional arguments: "end"; give arange(end) or '
                            "arange(start, end, step)")
        start, end = 0, start
    elif start is _NOT_GIVEN:  # (arange(end=3))
        start = 0
    if end is None:
        raise TypeError("arange() received an invalid combination of arguments: end is None; give arange(end) or "
                        "arange(start, end, step) numbers")
    vals = [_number(v, name) for v, name in ((start, "start"), (end, "end"), (step, "step"))]
    if vals[2] == 0:
        raise RuntimeError("arange: step must be nonzero")
    if not builtins.all(np.isfinite(v) for v in vals):
        raise RuntimeError(f"arange: unsupported range: {start} -> {end} with step {step}; all three must be finite")
    is_float = builtins.any(isinstance(v, builtins.float) for v in vals)
    dt = _dtype.to_dtype(dtype) if dtype is not None else (_dtype.get_default_dtype() if is_float else _dtype.int64)
    if dt == _dtype.bool_:
        raise NotImplementedError('"arange_cpu" not implemented for \'Bool\': count in an integer dtype, then '
                                  "compare")
    if (vals[1] - vals[0]) * vals[2] < 0:
        raise RuntimeError(f"arange: upper bound and lower bound inconsistent with step sign (from {vals[0]} to "
                           f"{vals[1]} with step {vals[2]}); give a step of the other sign")
    if dt.is_complex:
        raise NotImplementedError(f'"arange_cpu" not implemented for \'{_C_COMPLEX[dt.name]}\': count in a real '
                                  "dtype, then convert")
    if dt.is_floating_point:  # (torch's count: ceil((end - start) / step) in double)
        if dt.name == "float16":  # (its kernel steps in float: start and step must fit there)
            for v in (vals[0], vals[2]):
                fill_scalar(v, _dtype.float32, "arange")
        size = builtins.int(math.ceil((builtins.float(vals[1]) - vals[0]) / vals[2]))
        return _finish(_range_kernels.arange(vals[0], vals[2], size, dt.np), dt, requires_grad, device)
    if is_float:
        return _finish(_integer_range(*vals, dt), dt, requires_grad, device)
    if dt == _dtype.int64:  # (int64 from int64 bounds: counted and stepped in int64, which wraps)
        start, _, step = (np.int64(v) for v in vals)
        return _finish(start + step * np.arange(_int64_count(*vals), dtype=np.int64), dt, requires_grad, device)
    return _finish(np.arange(*vals), dt, requires_grad, device)


def _int64_count(start, end, step):
    """torch's count for int64 bounds: (end - start + step - sign(step)) / step in int64 arithmetic, which wraps,
    divided toward zero; a negative count (bounds near the ends of int64) is its RuntimeError"""
    total = (end - start + step - (1 if step > 0 else -1) + 2 ** 63) % 2 ** 64 - 2 ** 63
    count = builtins.abs(total) // builtins.abs(step) * (1 if (total < 0) == (step < 0) else -1)
    if count < 0:
        raise RuntimeError(f"invalid size, possible overflow? (arange from {start} to {end} by {step}: the count "
                           "overflows int64; use bounds nearer zero)")
    return count


_C_COMPLEX = {"complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def _integer_range(start, end, step, dt):
    """arange of non-integer bounds into an integer dtype, as torch counts it: int64 takes all three bounds as
    integers first; the narrower types count ceil((end - start) / step) values from int(start) by int(step).
    (torch holds the three in int64 first: one beyond it is its RuntimeError.)"""
    for v in (start, end, step):
        fill_scalar(v, _dtype.int64, "arange")
    if dt == _dtype.int64:
        if builtins.int(step) == 0:
            raise ValueError(f"arange: step must be nonzero (step {step} is 0 as an integer)")
        return np.arange(builtins.int(start), builtins.int(end), builtins.int(step))
    count = builtins.max(builtins.int(np.ceil((end - start) / step)), 0)
    return builtins.int(start) + np.arange(count) * builtins.int(step)


def _number(v, name):
    """a bound of arange as a Python number: a tensor that requires grad is refused, as torch's parser does, and
    so is an int beyond int64"""
    if isinstance(v, Tensor):
        if v.requires_grad:
            raise TypeError(f"arange(): argument '{name}' must be Number, not Tensor (it requires grad: pass "
                            f"{name}.item())")
        return v.item()
    if isinstance(v, np.generic):  # (np.float32(2.5), np.int64(3): the Python number torch's parser reads them as)
        v = v.item()
    if isinstance(v, builtins.int) and not -2 ** 63 <= v < 2 ** 63:
        raise OverflowError(f"int too big to convert (arange's {name} {v} is beyond int64; pass a float)")
    return v


@factory_out(by_count=True)
def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    start, end, steps, dt = _space_bounds(start, end, steps, dtype, "linspace")
    if steps == 0:  # (torch converts no bound for no step, and only start for one)
        return _finish(np.empty(0, dt.np), dt, requires_grad, device)
    start = _scalar_to(start, dt, "linspace", float_range=steps > 1 or dt.name != "float16")  # (fill_ of one element)
    end = _scalar_to(end, dt, "linspace") if steps > 1 else start
    if dt.is_complex:  # (torch's complex arithmetic here is its real arithmetic on each part)
        arr = np.empty(steps, dt.np)
        parts = ((start.real, end.real), (start.imag, end.imag))
        arr.real, arr.imag = (_range_kernels.linspace(a, b, steps, arr.real.dtype) for a, b in parts)
    else:
        arr = _range_kernels.linspace(start, end, steps, dt.np)
    return _finish(arr, dt, requires_grad, device)


@factory_out(by_count=True)
def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    start, end, steps, dt = _space_bounds(start, end, steps, dtype, "logspace")
    if steps == 0:
        return _finish(np.empty(0, dt.np), dt, requires_grad, device)
    if steps == 1:  # (torch fills base ** start, computed in double, converted as fill_ converts)
        first = _range_kernels.pow_real_complex(base, complex(start)) if dt.is_complex else \
            _range_kernels.c_pow(base, float(start))
        value = _scalar_to(first, dt, "logspace", float_range=dt.name != "float16")  # (as full's one element)
        return _finish(np.array([value]), dt, requires_grad, device)
    start, end = (_scalar_to(v, dt, "logspace") for v in (start, end))
    kernel = _range_kernels.complex_logspace if dt.is_complex else _range_kernels.logspace
    return _finish(kernel(start, end, steps, base, dt.np), dt, requires_grad, device)


def _scalar_to(value, dt, op, float_range=True):
    """a number in dt as torch's Scalar.to converts it (a bound of linspace, a fill value): checked (an overflow is
    torch's RuntimeError; see fill_scalar for float_range), into float16 through float, an int into float32 rounded
    once, into an integer type as a Python int"""
    number = fill_scalar(value, dt, op, float_range)
    if dt.np.kind in "fc" and isinstance(value, builtins.int) and dt.to_real().name == "float32":
        return dt.np.type(_range_kernels.int_to_float32(value))
    if dt.name == "float16":
        with np.errstate(over="ignore"):
            return np.float16(np.float32(value.real if isinstance(value, complex) else value))
    return builtins.int(number) if dt.np.kind in "iu" else number


def _space_bounds(start, end, steps, dtype, op):
    """(start, end, steps, dtype) of linspace/logspace as torch reads them: a bound may be a 0-d tensor (its
    number), and a complex bound makes the default dtype complex"""
    for v, name in ((start, "start"), (end, "end")):
        if isinstance(v, Tensor) and v.ndim:
            raise RuntimeError(f"{op} only supports 0-dimensional start and end tensors, but got {name} with {v.ndim} "
                               "dimension(s).")
    start, end = (v.item() if isinstance(v, Tensor) else v for v in (start, end))
    steps = operator.index(steps)  # (a 0-d integer tensor too)
    if steps < 0:
        raise RuntimeError(f"number of steps must be non-negative ({op}: got steps={steps})")
    if dtype is not None and _default(dtype) == _dtype.bool_:
        raise NotImplementedError(f'"{op}_cpu" not implemented for \'Bool\': make the range in an integer or '
                                  "floating dtype, then compare")
    if not builtins.any(isinstance(v, builtins.complex) for v in (start, end)):
        return start, end, steps, _default(dtype)
    inferred = _default(None).to_complex()
    if dtype is not None and not _default(dtype).is_complex:
        raise RuntimeError(f"torch.{op}(): inferred dtype c10::complex<float> can't be safely cast to passed dtype "
                           f"{_default(dtype)} (a complex bound needs a complex dtype)")
    return start, end, steps, _default(dtype) if dtype is not None else inferred


@factory_out
def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    check_size((n,) if m is None else (n, m), "eye")
    return _finish(np.eye(n, m), _default(dtype), requires_grad, device)


@factory_out
def rand(*size, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False, **kw):
    rng, size, dt = _rng(generator), check_size(_sizes(size, kw, "rand"), "rand"), _default(dtype)
    _need_floating(dt, "check_uniform_bounds")
    if _on_meta(device):
        return empty(size, dtype=dt, device="meta", requires_grad=requires_grad)
    if dt.is_complex:  # as torch: real and imaginary parts each uniform on [0, 1), drawn in turn
        return _finish(_as_complex(rng.torch_uniform(dt.to_real().np, 0.0, 1.0, size + (2,))), dt, requires_grad, device)
    return _finish(rng.torch_uniform(dt.np, 0.0, 1.0, size), dt, requires_grad, device)


def _as_complex(parts):
    """(..., 2) real and imaginary parts as complex numbers (torch draws a complex tensor through view_as_real)."""
    return parts.view(np.complex64 if parts.dtype == np.float32 else np.complex128)[..., 0]


@factory_out
def randn(*size, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, **kw):
    rng, size, dt = _rng(generator), check_size(_sizes(size, kw, "randn"), "randn"), _default(dtype)
    if np.prod(size, dtype=np.float64):  # (an empty result runs no kernel: torch accepts any dtype then)
        _need_floating(dt, "normal_kernel_cpu")
    if _on_meta(device):
        return empty(size, dtype=dt, device="meta", requires_grad=requires_grad)
    if dt.is_complex:  # as torch: variance 1 in all, so each part has variance 1/2
        return _finish(_as_complex(rng.torch_normal(dt.to_real().np, 0.0, 1 / math.sqrt(2), size + (2,))), dt,
                       requires_grad, device)
    return _finish(rng.torch_normal(dt.np, 0.0, 1.0, size), dt, requires_grad, device)


@factory_out
def randint(low=0, high=None, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
            requires_grad=False):
    if high is None or size is None and isinstance(high, (tuple, list)):  # randint(high, size)
        low, high, size = 0, low, size if high is None else high
    if size is None:
        raise TypeError("randint() missing required argument 'size' (a tuple)")
    for name, v in (("low", low), ("high", high)):
        if not isinstance(v, (int, np.integer)) and not (hasattr(v, "ndim") and v.ndim == 0):
            raise TypeError(f"randint(): argument '{name}' must be int, not {type(v).__name__}; pass a Python int")
    low, high = int(low), int(high)
    if high <= low:
        raise RuntimeError(f"randint: expects 'low' to be less than 'high', but got low={low} >= high={high}")
    if _on_meta(device):
        return empty(check_size(tuple(size), "randint"), dtype=dtype or _dtype.int64, device="meta",
                     requires_grad=requires_grad)
    draws = _rng(generator).torch_integers(low, high, check_size(tuple(size), "randint"))
    return _finish(draws, dtype or _dtype.int64, requires_grad, device)


@factory_out
def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    dt = _dtype.to_dtype(dtype) if dtype is not None else _dtype.int64
    check_size((n,), "randperm")
    if dt == _dtype.bool_:
        raise NotImplementedError('"randperm" not implemented for \'Bool\': a permutation needs integer or '
                                  "floating values")
    _check_fits(n - 1, dt)  # (its largest value)
    if _on_meta(device):
        return empty(n, dtype=dt, device="meta", requires_grad=requires_grad)
    return _finish(_rng(generator).torch_permutation(n), dt, requires_grad, device)


@_drawn_like_input
def rand_like(input, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    return rand(size=tuple(input.shape), generator=generator, dtype=_like(input, dtype),
                device=device or input.device, requires_grad=requires_grad)  # (size=: a 0-d input has no sizes)


@_drawn_like_input
def randn_like(input, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    return randn(size=tuple(input.shape), generator=generator, dtype=_like(input, dtype),
                 device=device or input.device, requires_grad=requires_grad)


def _need_floating(dt, kernel):
    """torch draws uniform and normal numbers into floating (and complex) tensors only"""
    if not (dt.is_floating_point or dt.is_complex):
        from .ops._kernels import _NAMES
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_NAMES.get(dt.name, dt.name)}\': draw '
                                  "into a floating point dtype, then convert")


@_drawn_like_input
def randint_like(input, low=0, high=None, *, generator=None, dtype=None, layout=None, device=None,
                 requires_grad=False, memory_format=None):
    if high is None:  # (randint_like(x, high))
        low, high = 0, low
    if high is None:
        raise TypeError("randint_like() received an invalid combination of arguments - got (Tensor, NoneType): give "
                        "high (an int), or low and high")
    low, high = (_one_number(v, name) for v, name in ((low, "low"), (high, "high")))
    return randint(low, high, tuple(input.shape), generator=generator, dtype=_like(input, dtype),
                   device=device or input.device, requires_grad=requires_grad)


def _one_number(v, name):
    """a bound of randint_like given as a tensor of one element: its number (torch's RuntimeError for more)"""
    if not isinstance(v, Tensor):
        return v
    if v.numel() != 1:
        raise RuntimeError(f"{name} must be a scalar tensor and on CPU (randint_like: got shape {list(v.shape)})")
    return int(v.item())


def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, requires_grad=False):
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        if size is not None or dtype is not None:
            raise TypeError("normal(): size= and dtype= go with a number for both mean and std; with a tensor, "
                            "its shape and dtype are the result's")
        m = mean._data if isinstance(mean, Tensor) else mean
        s = std._data if isinstance(std, Tensor) else std
        like = mean if isinstance(mean, Tensor) else std  # (the result's dtype and device)
        dt, where = like.dtype, like.device
        _need_floating(dt, "normal_kernel_cpu")
        rng, shape = _rng(generator), np.broadcast_shapes(np.shape(m), np.shape(s))
        if like.is_meta:  # no values to check or draw: the generator stays where it was, as torch's
            return empty(shape, dtype=dt, device="meta", requires_grad=requires_grad)
        _check_std(std)
        if dt.is_complex:  # (as randn: each part with variance 1/2)
            noise = _as_complex(rng.torch_normal(dt.to_real().np, 0.0, 1 / math.sqrt(2), shape + (2,)))
            return _finish(np.asarray(m + s * noise), dt, requires_grad, where)
        noise = rng.torch_normal(dt.np, 0.0, 1.0, shape)  # (torch: normal_(0, 1), then * std + mean)
        return _finish(np.asarray(m + s * noise), dt, requires_grad, where)
    if size is None:
        raise TypeError("normal(): with a number for both mean and std, pass the size too, e.g. normal(0.0, 1.0, "
                        "size=(2, 3)); or pass mean or std as a tensor")
    _check_std(std)
    dt = _default(dtype)
    return _finish(_rng(generator).torch_normal(dt.np, mean, std, tuple(size)), dt, requires_grad, "cpu")  # (not
    # one of the factories torch's default device reaches)


def _check_std(std):
    if isinstance(std, Tensor):
        if not (std._data >= 0).all():
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif not std >= 0:  # (NaN too)
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")


def bernoulli(input, p=None, *, generator=None):
    """0/1 draws: with probability input (elementwise), or p for every element of input's shape and dtype."""
    if p is None and not input.dtype.is_floating_point:
        raise NotImplementedError(f"bernoulli: the probabilities must be a floating point tensor, not {input.dtype}; "
                                  "use input.float()")
    if p is None and not ((input._data >= 0) & (input._data <= 1)).all():  # (NaN too)
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false. (bernoulli: the input holds "
                           "probabilities, each in [0, 1])")
    if isinstance(p, Tensor):  # (the argument checks let a 0-d tensor stand for a number, as torch's parser)
        p = p.item()
    if p is not None and not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    if input.is_meta:  # no data, and no draw, as rand's
        return empty_like(input)
    probs = input._data if p is None else p
    return Tensor._make(_rng(generator).torch_bernoulli(probs, tuple(input.shape)).astype(input._data.dtype))


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """num_samples category indices per row of probabilities, drawn as torch's CPU kernel draws them: with
    replacement and several samples, a double u per sample found in the row's normalized running sum; without
    replacement, or for one sample, the top num_samples of p / q for exponential draws q (the Gumbel trick), so a
    seed gives torch's samples (makemore's names, one character at a time)."""
    rng = _rng(generator)
    _check_multinomial(input, num_samples, replacement)
    if input.is_meta:  # (no values: nothing drawn, as torch's)
        return empty(tuple(input.shape[:-1]) + (num_samples,), dtype=_dtype.int64, device="meta")
    p = input._data
    rows = p.reshape(-1, p.shape[-1])
    if replacement and num_samples > 1:
        out = np.array([np.searchsorted(_normalized_cumsum(r), rng.torch_uniform(np.float64, 0.0, 1.0, (num_samples,)),
                                        side="left") for r in rows], dtype=np.int64).reshape(len(rows), num_samples)
    else:
        ratio = rows / rng.torch_exponential(rows.dtype, 1.0, rows.shape)
        out = np.argsort(-ratio, axis=-1, kind="stable")[:, :num_samples]
    return Tensor._make(out.reshape(p.shape[:-1] + (num_samples,)).astype(np.int64))


def _normalized_cumsum(row):
    total = np.cumsum(row)
    return total / total[-1] if total.size and total[-1] > 0 else total


def _check_multinomial(probs, n, replacement):
    if not probs.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {probs.dtype}")
    if probs.ndim not in (1, 2):
        raise RuntimeError(f"multinomial: prob_dist must be 1 or 2 dim, got shape {list(probs.shape)}")
    if n <= 0:
        raise RuntimeError(f"multinomial: cannot sample n_sample <= 0 samples (got {n})")
    if not replacement and n > probs.shape[-1]:
        raise RuntimeError(f"multinomial: cannot sample n_sample > prob_dist.size(-1) samples without replacement "
                           f"({n} > {probs.shape[-1]}); pass replacement=True")
    if probs.is_meta:
        return
    if not np.all(np.isfinite(probs._data)) or np.any(probs._data < 0):
        raise RuntimeError("multinomial: probability tensor contains either `inf`, `nan` or element < 0")
    if probs.numel() and np.any(probs._data.sum(-1) <= 0):
        raise RuntimeError("multinomial: invalid multinomial distribution (sum of probabilities <= 0): a row of "
                           "zeros has nothing to draw")


_MESHGRID_WARNED = []


def meshgrid(*tensors, indexing=None):
    if indexing is None:  # torch's default: 'ij', with a warning once per process
        if not _MESHGRID_WARNED:
            import warnings
            warnings.warn("microtorch.meshgrid: in an upcoming release, it will be required to pass the indexing "
                          "argument.", UserWarning, stacklevel=2)  # (torch's words; the grid is 'ij' meanwhile)
            _MESHGRID_WARNED.append(True)
        indexing = "ij"
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    _check_meshgrid(tensors)
    from .ops.shape import expand, reshape
    n = len(tensors)
    shape = [t.numel() for t in tensors]
    if indexing == "xy" and n >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, t in enumerate(tensors):
        pos = i if not (indexing == "xy" and i < 2 and n >= 2) else 1 - i
        view = [1] * n
        view[pos] = t.numel()
        out.append(expand(reshape(t, view), *shape))
    return tuple(out)


def _check_meshgrid(tensors):
    """torch's checks, in its order: some tensors, one dtype, each 0-d or 1-d"""
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    if builtins.any(t.dtype != tensors[0].dtype for t in tensors):
        raise RuntimeError("meshgrid expects all tensors to have the same dtype (got "
                           f"{', '.join(str(t.dtype) for t in tensors)}); convert them with .to(dtype)")
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got shape "
                               f"{list(t.shape)}; flatten it first")


def diag(input, diagonal=0):
    if input.ndim not in (1, 2):
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D (shape {list(input.shape)})")
    if input.ndim == 1:  # (torch's diag of a vector is its diag_embed: one DiagEmbedBackward0 node)
        from .ops.linalg_more import DiagEmbed
        return DiagEmbed.apply(input, int(diagonal), -2, -1)
    from .ops.shape import DiagonalCopy
    return DiagonalCopy.apply(input, diagonal, 0, 1)
