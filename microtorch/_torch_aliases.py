"""The rest of torch's namespace that microtorch has (issue 13, the linalg row): the decompositions and
solves of ops/linalg_decomp.py and their Tensor methods, `microtorch.linalg`. `install` puts them into
`microtorch` and onto `Tensor`, with the argument checks and clean errors the rest of the API has."""
from . import linalg  # noqa: F401  (microtorch.linalg, as torch.linalg)
from ._api_errors import clean_errors
from .ops import linalg_decomp as _ld, reduce_scatter as _rs, spectral_inverse as _si
from .ops._checks import guard

FUNCTIONS = {
    "triangular_solve": _ld.triangular_solve, "cholesky_solve": _ld.cholesky_solve,
    "cholesky_inverse": _ld.cholesky_inverse, "qr": _ld.qr, "lu": _ld.lu, "lu_unpack": _ld.lu_unpack,
    "lu_solve": _ld.lu_solve, "scatter_reduce": _rs.scatter_reduce, "index_reduce": _rs.index_reduce,
    "istft": _si.istft,
}


def _methods():
    return {
        "triangular_solve": lambda self, A, upper=True, transpose=False, unitriangular=False:
            _ld.triangular_solve(self, A, upper, transpose, unitriangular),
        "cholesky_solve": lambda self, input2, upper=False: _ld.cholesky_solve(self, input2, upper),
        "cholesky_inverse": lambda self, upper=False: _ld.cholesky_inverse(self, upper),
        "qr": lambda self, some=True: _ld.qr(self, some),
        "lu": lambda self, pivot=True, get_infos=False: _ld.lu(self, pivot, get_infos),
        "lu_solve": lambda self, LU_data, LU_pivots: _ld.lu_solve(self, LU_data, LU_pivots),
        "scatter_reduce": _rs.scatter_reduce, "index_reduce": _rs.index_reduce, "istft": _si.istft,
    }


def _inplace_methods():
    from .ops.inplace import _binary
    from .ops.heaviside_inplace import heaviside_of as heaviside
    return {name + "_": _binary(fn, name + "_") for name, fn in
            (("scatter_reduce", _rs.scatter_reduce), ("index_reduce", _rs.index_reduce), ("heaviside", heaviside))}


def as_subclass(self, cls):
    """self viewed as an instance of cls, a subclass of Tensor: the same data, in the graph (AliasBackward0)."""
    from ._tensor import Tensor
    from .ops.shape import Alias, _share
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from Tensor is not possible. "
                        "Make sure your class inherits from Tensor.")
    out = _share(Alias.apply(self, tuple(self.shape)), self)
    out.__class__ = cls
    return out


def _leaf_only(t, verb):
    if t.grad_fn is not None:
        raise RuntimeError(f"grad_dtype can only be {verb} on leaf tensors.")


def _get_grad_dtype(self):
    """The dtype .grad is kept in: the tensor's own unless set (None: any)."""
    _leaf_only(self, "accessed")
    return self.__dict__.get("_grad_dtype", self.dtype)


def _set_grad_dtype(self, value):
    from ._dtype import dtype as dtype_cls
    _leaf_only(self, "set")
    if value is not None and not isinstance(value, dtype_cls):
        raise TypeError(f"grad_dtype must be a dtype or None, not {type(value).__name__}")
    if value not in (None, self.dtype):
        raise NotImplementedError(f"grad_dtype={value}: microtorch's engine keeps .grad in the tensor's own dtype "
                                  f"({self.dtype}); cast it after backward instead (x.grad.to({value}))")
    self.__dict__["_grad_dtype"] = value


# argument kinds that differ from what ops/_checks.py guesses from the name
_KINDS = {"index_reduce": {"source": "tensor", "dim": "int"}, "index_reduce_": {"source": "tensor", "dim": "int"},
          "scatter_reduce": {"dim": "int"}, "scatter_reduce_": {"dim": "int"}}


def _functions():
    from . import _torch_misc, _torch_nn
    from .nn import functional as F
    out = dict(FUNCTIONS)
    out.update({n: getattr(_torch_misc, n) for n in _torch_misc.FUNCTIONS})
    out.update({n: _torch_misc.method_as_function(n) for n in _torch_misc.TENSOR_METHODS})
    out.update({n: getattr(_torch_nn, n) for n in _torch_nn.NAMES})
    out.update({n: getattr(F, n) for n in _torch_nn.FROM_FUNCTIONAL})
    return out


def install(namespace, tensor_cls):
    """Add the functions to the torch-shaped namespace (and its __all__) and the methods to Tensor."""
    functions = _functions()
    from . import _torch_misc
    for name, fn in functions.items():
        wrapped = fn if isinstance(fn, type) else clean_errors(guard(fn, op=name, overrides=_KINDS.get(name)), name)
        namespace[name] = wrapped
    for name in _torch_misc.CONSTANTS:
        namespace[name] = getattr(_torch_misc, name)
    namespace["__all__"].extend(n for n in _torch_misc.CONSTANTS if n not in namespace["__all__"])
    namespace["__all__"].extend(n for n in functions if n not in namespace["__all__"])
    for name, fn in dict(_methods(), **_inplace_methods()).items():
        if fn.__name__ == "<lambda>":
            fn.__name__ = name
        setattr(tensor_cls, name, clean_errors(guard(fn, op=name, method=True, overrides=_KINDS.get(name)), name))
    tensor_cls.as_subclass = as_subclass
    tensor_cls.grad_dtype = property(_get_grad_dtype, _set_grad_dtype)
