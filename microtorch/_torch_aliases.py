"""The rest of torch's namespace that microtorch has (issue 13, the linalg row): the decompositions and
solves of ops/linalg_decomp.py and their Tensor methods, `microtorch.linalg`. `install` puts them into
`microtorch` and onto `Tensor`, with the argument checks and clean errors the rest of the API has."""
from . import linalg  # noqa: F401  (microtorch.linalg, as torch.linalg)
from ._api_errors import clean_errors
from .ops import linalg_decomp as _ld, reduce_scatter as _rs
from .ops._checks import guard

FUNCTIONS = {
    "triangular_solve": _ld.triangular_solve, "cholesky_solve": _ld.cholesky_solve,
    "cholesky_inverse": _ld.cholesky_inverse, "qr": _ld.qr, "lu": _ld.lu, "lu_unpack": _ld.lu_unpack,
    "lu_solve": _ld.lu_solve, "scatter_reduce": _rs.scatter_reduce, "index_reduce": _rs.index_reduce,
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
        "scatter_reduce": _rs.scatter_reduce, "index_reduce": _rs.index_reduce,
    }


def _inplace_methods():
    from .ops.inplace import _binary
    return {name + "_": _binary(fn, name + "_") for name, fn in
            (("scatter_reduce", _rs.scatter_reduce), ("index_reduce", _rs.index_reduce))}


# argument kinds that differ from what ops/_checks.py guesses from the name
_KINDS = {"index_reduce": {"source": "tensor", "dim": "int"}, "index_reduce_": {"source": "tensor", "dim": "int"},
          "scatter_reduce": {"dim": "int"}, "scatter_reduce_": {"dim": "int"}}


def install(namespace, tensor_cls):
    """Add the functions to the torch-shaped namespace (and its __all__) and the methods to Tensor."""
    for name, fn in FUNCTIONS.items():
        namespace[name] = clean_errors(guard(fn, op=name, overrides=_KINDS.get(name)), name)
    namespace["__all__"].extend(n for n in FUNCTIONS if n not in namespace["__all__"])
    for name, fn in dict(_methods(), **_inplace_methods()).items():
        if fn.__name__ == "<lambda>":
            fn.__name__ = name
        setattr(tensor_cls, name, clean_errors(guard(fn, op=name, method=True, overrides=_KINDS.get(name)), name))
