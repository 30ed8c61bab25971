"""Functions torch removed in version 1.9 (torch.symeig, eig, solve, lstsq, matrix_rank) that old textbooks
and courses still call: as in torch, calling one raises a RuntimeError that says what replaces it."""

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

METHODS = ("symeig", "eig", "solve", "lstsq")  # (Tensor.matrix_rank never existed)


def _removed(name):
    def removed(*args, **kwargs):
        raise RuntimeError(_REMOVED + MESSAGES[name])
    removed.__name__ = removed.__qualname__ = name
    return removed


FUNCTIONS = {name: _removed(name) for name in MESSAGES}
