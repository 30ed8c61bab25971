"""The rest of torch's namespace that microtorch has (issue 13, the linalg row): the decompositions and
solves of ops/linalg_decomp.py and ops/linalg_triangular.py and their Tensor methods, `microtorch.linalg`. `install` puts them into
`microtorch` and onto `Tensor`, with the argument checks and clean errors the rest of the API has."""
import functools
import inspect

from . import linalg  # noqa: F401  (microtorch.linalg, as torch.linalg)
from ._api_errors import clean_errors
from ._user_line import warn_at_user_line
from .ops import linalg_decomp as _ld, linalg_triangular as _lt, reduce_scatter as _rs, spectral_inverse as _si
from .ops._checks import guard, type_error

FUNCTIONS = {
    "triangular_solve": _lt.triangular_solve, "cholesky_solve": _lt.cholesky_solve,
    "cholesky_inverse": _lt.cholesky_inverse, "qr": _ld.qr, "lu": _ld.lu, "lu_unpack": _ld.lu_unpack,
    "lu_solve": _ld.lu_solve, "scatter_reduce": _rs.scatter_reduce, "index_reduce": _rs.index_reduce,
    "istft": _si.istft, "geqrf": _ld.geqrf,
    # torch.orgqr/ormqr name their tensors input, input2, input3 (the linalg forms say A, tau, other)
    "orgqr": lambda input, input2: _ld.householder_product(input, input2),
    "ormqr": lambda input, input2, input3, left=True, transpose=False: _ld.ormqr(input, input2, input3, left,
                                                                                 transpose),
}


def _methods():
    from . import _removed
    return {
        **_removed.METHODS,  # (Tensor.matrix_rank never existed)
        "triangular_solve": lambda self, A, upper=True, transpose=False, unitriangular=False:
            _lt.triangular_solve(self, A, upper, transpose, unitriangular),
        "cholesky_solve": lambda self, input2, upper=False: _lt.cholesky_solve(self, input2, upper),
        "cholesky_inverse": lambda self, upper=False: _lt.cholesky_inverse(self, upper),
        "qr": lambda self, some=True: _ld.qr(self, some),
        "lu": lambda self, pivot=True, get_infos=False: _ld.lu(self, pivot, get_infos),
        "lu_solve": lambda self, LU_data, LU_pivots: _ld.lu_solve(self, LU_data, LU_pivots),
        "scatter_reduce": _rs.scatter_reduce, "index_reduce": _rs.index_reduce, "istft": _si.istft,
        "geqrf": lambda self: _ld.geqrf(self),
        "orgqr": lambda self, input2: _ld.householder_product(self, input2),
        "ormqr": lambda self, input2, input3, left=True, transpose=False: _ld.ormqr(self, input2, input3, left,
                                                                                    transpose),
    }


def _inplace_methods():
    """the in-place forms, with their out-of-place form's parameters (so that a missing argument is a TypeError)"""
    from .ops.pointwise import recorded_heaviside
    from .ops.inplace import apply_inplace

    def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
        return apply_inplace(self, lambda s, o: _rs.scatter_reduce(s, dim, index, o, reduce, include_self=include_self),
                             src, op="scatter_reduce_")

    def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
        return apply_inplace(self, lambda s, o: _rs.index_reduce(s, dim, index, o, reduce, include_self=include_self),
                             source, op="index_reduce_")

    def heaviside_(self, values):
        return apply_inplace(self, lambda s, v: recorded_heaviside(s, v, "heaviside_"), values, op="heaviside_")
    return {"scatter_reduce_": scatter_reduce_, "index_reduce_": index_reduce_, "heaviside_": heaviside_}


def as_subclass(self, cls):
    """self viewed as an instance of cls, a subclass of Tensor: the same data, in the graph (AliasBackward0)."""
    from ._tensor import Tensor
    from .ops.shape import Alias, _share
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError("as_subclass(): Creating a Tensor subclass from a class that does not inherit from Tensor is "
                        "not possible. Make sure your class inherits from Tensor.")
    out = _share(Alias.apply(self, tuple(self.shape)), self)
    out.__class__ = cls
    return out


def _is_pinned(self, device=None):
    """False: microtorch's memory is numpy's, never page-locked for an accelerator. (torch deprecates the device
    argument, and an accelerator's index asks for one there is not.)"""
    if device is not None:
        _device_argument("is_pinned", device)
        warn_at_user_line("The argument 'device' of Tensor.is_pinned() is deprecated. Please do not pass this "
                          "argument.", DeprecationWarning)
        if isinstance(device, int):
            raise RuntimeError("Cannot access accelerator device when none is available.")
    return False


def _pin_memory(self, device=None):
    if device is not None:
        _device_argument("pin_memory", device)
        if not isinstance(device, int) and str(device).split(":")[0] == "cpu":
            raise RuntimeError("CPU device type not an accelerator.")
    raise RuntimeError("Cannot access accelerator device when none is available. (pin_memory() page-locks memory for "
                       "copies to a GPU; on the CPU leave it out, or use DataLoader(pin_memory=True), which warns)")


def _device_argument(op, device):
    """torch's checks of a device argument: its type, a negative index, a name it does not know."""
    from ._tensor import device as device_cls
    if isinstance(device, bool) or not isinstance(device, (int, str, device_cls)):
        raise TypeError(f"{op}(): argument 'device' (position 1) must be torch.device, not {type(device).__name__}")
    if isinstance(device, int) and device < 0:
        raise RuntimeError("Device index must not be negative")
    if isinstance(device, str):
        device_cls(device)  # (torch's error for a name it does not know)


def _leaf_only(t, verb):
    if t.grad_fn is not None:
        raise RuntimeError(f"grad_dtype can only be {verb} on leaf tensors.")


def _get_grad_dtype(self):
    """The dtype .grad is kept in: the tensor's own unless set (None: any)."""
    _leaf_only(self, "accessed")
    return self.__dict__.get("_grad_dtype", self.dtype)


def _set_grad_dtype(self, value):
    from ._dtype import dtype as dtype_cls
    from .autograd.node import leaf_meta
    _leaf_only(self, "set")
    if value is not None and not isinstance(value, dtype_cls):
        raise TypeError(f"grad_dtype must be a dtype or None, not {type(value).__name__}")
    if value is not None and self._grad is not None and self._grad.dtype is not value:
        raise RuntimeError(f"Cannot set grad_dtype to {value} because there is already a gradient with dtype "
                           f"{self._grad.dtype}: clear it first (.grad = None)")
    self.__dict__["_grad_dtype"] = value
    node = self._accumulator() if self._accumulator is not None else None
    if node is not None:   # (an AccumulateGrad already in a graph checks against the new dtype)
        node._out_meta = (leaf_meta(self),)


# argument kinds that differ from what ops/_checks.py guesses from the name (checked before each call here)
_BOOL = "bool"
_LINALG_FLAGS = {"upper": _BOOL, "transpose": _BOOL, "unitriangular": _BOOL, "some": _BOOL, "pivot": _BOOL,
                 "get_infos": _BOOL, "unpack_data": _BOOL, "unpack_pivots": _BOOL, "LU_data": "tensor",
                 "LU_pivots": "tensor", "A": "tensor"}
_WINDOW = {"window_length": "int", "periodic": _BOOL}
_DROPOUT = {"p": "number", "train": _BOOL}
_KINDS = {
    **{n: _LINALG_FLAGS for n in ("triangular_solve", "cholesky_solve", "cholesky_inverse", "qr", "lu_unpack",
                                  "lu_solve")},
    "ormqr": {"tau": "tensor", "other": "tensor", "left": _BOOL, "transpose": _BOOL, "input2": "tensor",
              "input3": "tensor"}, "orgqr": {"tau": "tensor", "input2": "tensor"},
    "index_reduce": {"source": "tensor", "dim": "int", "reduce": "str", "include_self": _BOOL},
    "scatter_reduce": {"dim": "int", "reduce": "str", "include_self": _BOOL},
    "istft": {"n_fft": "int", "hop_length": "int", "win_length": "int", "window": "tensor", "center": _BOOL,
              "normalized": _BOOL, "onesided": _BOOL, "length": "int", "return_complex": _BOOL},
    **{n: _WINDOW for n in ("hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window")},
    **{n: _DROPOUT for n in ("dropout", "dropout_", "alpha_dropout", "alpha_dropout_", "feature_alpha_dropout",
                             "feature_alpha_dropout_", "feature_dropout", "feature_dropout_", "native_dropout")},
    "tril_indices": {"row": "int", "col": "int", "offset": "int"}, "triu_indices": {"row": "int", "col": "int",
                                                                                 "offset": "int"},
    "combinations": {"r": "int", "with_replacement": _BOOL}, "vander": {"N": "int", "increasing": _BOOL},
    "set_anomaly_enabled": {"enabled": _BOOL, "check_nan": _BOOL}, "segment_reduce": {"data": "tensor",
                                                                                       "reduce": "str"},
    "scalar_tensor": {"s": "number"}, "can_cast": {"from_": "dtype", "to": "dtype"},
    "constant_pad_nd": {"pad": "shape_tuple"}, "layer_norm": {"normalized_shape": "shape_tuple"},
    "rms_norm": {"normalized_shape": "shape_tuple"}, "native_layer_norm": {"normalized_shape": "shape_tuple"},
    "binomial": {"count": "tensor", "prob": "tensor"}, "embedding": {"padding_idx": "int"},
    "histogramdd": {"bins": None}, "trapezoid": {"y": "tensor"}, "trapz": {"y": "tensor"},
    "cumulative_trapezoid": {"y": "tensor"}, "group_norm": {"num_groups": "int"}, "tensordot": {"dims": None},
    "polar": {"abs": "tensor", "angle": "tensor"}, "complex": {"real": "tensor", "imag": "tensor"},
    "isin": {"test_elements": "tensor_or_number"}, "frobenius_norm": {"dim": "dims_given"},
    "svd_lowrank": {"q": None, "niter": "int"}, "lu": {**_LINALG_FLAGS, "pivot": None, "get_infos": None},
    "norm_except_dim": {"v": "tensor", "pow": "int", "dim": "int"},
    # ATen's optional tensors without a default (None is passed explicitly)
    "convolution": {"bias": None},
    **{n: {"weight": None, "bias": None, "running_mean": None, "running_var": None}
       for n in ("batch_norm", "instance_norm", "native_batch_norm", "native_layer_norm", "native_group_norm")},
}


_UNGUARDED = {"unravel_index"}  # (its own TypeError for a complex index stands: guard would call it a dtype gap)


def _kinds(op):
    return _KINDS.get(op.rstrip("_"), _KINDS.get(op))


def _checked(fn, op, method=False):
    """fn with its arguments' kinds checked before the call (torch's TypeError for a wrong type), and errors
    that other ops raised inside it re-raised naming this op too"""
    sig_fn = inspect.unwrap(fn)
    try:
        inspect.signature(sig_fn)
    except (TypeError, ValueError):
        return fn
    kinds = _kinds(op)

    @functools.wraps(fn)
    def checked(*args, **kwargs):
        err = type_error(op, sig_fn, args, kwargs, method, kinds)
        if err is not None:
            raise err
        try:
            return fn(*args, **kwargs)
        except (RuntimeError, ValueError, IndexError, NotImplementedError, TypeError) as e:
            if type(e) not in (RuntimeError, ValueError, IndexError, NotImplementedError, TypeError) or op in str(e):
                raise
            raise type(e)(f"{op}(): {e}") from None
    return checked


def _functions():
    from . import _removed, _torch_creation, _torch_misc, _torch_nn
    from .nn import functional as F
    out = dict(FUNCTIONS, **_removed.FUNCTIONS)
    out.update({n: getattr(_torch_misc, n) for n in _torch_misc.FUNCTIONS})
    out.update({n: getattr(_torch_creation, n) for n in _torch_creation.FUNCTIONS})
    out.update({n: _torch_misc.method_as_function(n) for n in _torch_misc.TENSOR_METHODS})
    out.update({n: getattr(_torch_nn, n) for n in _torch_nn.NAMES})
    out.update({n: getattr(F, n) for n in _torch_nn.FROM_FUNCTIONAL})
    return out


def install(namespace, tensor_cls):
    """Add the functions to the torch-shaped namespace (and its __all__) and the methods to Tensor."""
    functions = _functions()
    from . import _torch_creation
    for name, fn in functions.items():
        guarded = fn if name in _UNGUARDED else guard(fn, op=name, overrides=_kinds(name))
        namespace[name] = fn if isinstance(fn, type) else clean_errors(_checked(guarded, name), name)
    for name in _torch_creation.CONSTANTS:
        namespace[name] = getattr(_torch_creation, name)
    namespace["__all__"].extend(n for n in _torch_creation.CONSTANTS if n not in namespace["__all__"])
    namespace["__all__"].extend(n for n in functions if n not in namespace["__all__"])
    for name, fn in dict(_methods(), **_inplace_methods()).items():
        if fn.__name__ == "<lambda>":
            fn.__name__ = name
        guarded = guard(fn, op=name, method=True, overrides=_kinds(name))
        setattr(tensor_cls, name, clean_errors(_checked(guarded, name, method=True), name))
    tensor_cls.as_subclass = as_subclass
    tensor_cls.grad_dtype = property(_get_grad_dtype, _set_grad_dtype)
    tensor_cls.is_pinned, tensor_cls.pin_memory = _is_pinned, _pin_memory
