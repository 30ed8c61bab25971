"""Functions torch removed in version 1.9 (torch.symeig, eig, solve, lstsq, matrix_rank) that old textbooks
and courses still call: as in torch, calling one raises a RuntimeError that says what replaces it."""

import inspect

_REMOVED = "This function was deprecated since version 1.9 and is now removed. "

MESSAGES = {
    "symeig": "Use torch.linalg.eigh (eigenvalues and eigenvectors) or torch.linalg.eigvalsh (eigenvalues only). "
              "They read the lower triangle by default, where symeig read the upper one: pass UPLO='U' for the "
              "old behaviour.",
    "eig": "Use torch.linalg.eig (or torch.linalg.eigvals for the eigenvalues only). It returns complex tensors, "
           "where eig returned real ones holding the real and imaginary parts side by side.",
    "solve": "Use torch.linalg.solve: X = torch.solve(B, A).solution becomes X = torch.linalg.solve(A, B) (the "
             "arguments swap, and no LU factorization is returned; torch.linalg.lu_factor gives it).",
    "lstsq": "Use torch.linalg.lstsq: X = torch.lstsq(B, A).solution[:A.size(1)] becomes "
             "X = torch.linalg.lstsq(A, B).solution (the arguments swap; the residuals are in its field 'residuals').",
    "matrix_rank": "Use torch.linalg.matrix_rank (its parameter 'symmetric' is now called 'hermitian').",
}


# torch's signatures (functions, then Tensor methods), so that wrong arguments are a TypeError there as here
def _symeig(input, eigenvectors=False, upper=True, *, out=None): pass  # noqa: E704
def _eig(self, eigenvectors=False, *, e=None, v=None): pass  # noqa: E704
def _solve(input, A, *, out=None): pass  # noqa: E704
def _matrix_rank(input, tol=None, symmetric=False, *, out=None): pass  # noqa: E704
def _method(self, eigenvectors=False): pass  # noqa: E704
def _method_of_two(self, other): pass  # noqa: E704


_SIGNATURES = {"symeig": _symeig, "eig": _eig, "solve": _solve, "lstsq": _solve, "matrix_rank": _matrix_rank}
_METHOD_SIGNATURES = {"symeig": _method, "eig": _method, "solve": _method_of_two, "lstsq": _method_of_two}


def _removed(name, signature):
    """torch's stand-in: arguments bound as its signature binds them (Python's TypeError), then the error."""
    def removed(*args, **kwargs):
        try:
            inspect.signature(signature).bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{name}(): {e}") from None
        raise RuntimeError(_REMOVED + MESSAGES[name])
    removed.__name__ = removed.__qualname__ = name
    return removed


FUNCTIONS = {name: _removed(name, sig) for name, sig in _SIGNATURES.items()}
METHODS = {name: _removed(name, sig) for name, sig in _METHOD_SIGNATURES.items()}
