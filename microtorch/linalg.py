"""microtorch.linalg: the torch.linalg functions microtorch has (decompositions, triangular and LU solves,
determinants, inverses), each the op that torch.linalg runs, with torch's grad_fn names."""
from .ops.linalg_decomp import (linalg_lu as lu, linalg_lu_solve as lu_solve, linalg_qr as qr,  # noqa: F401
                                lu_factor, lu_factor_ex, solve_triangular)
from .ops.linalg_more import det, inverse as inv, matrix_exp, matrix_power, slogdet  # noqa: F401
from .ops.reduce import vector_norm  # noqa: F401

__all__ = ["det", "inv", "lu", "lu_factor", "lu_factor_ex", "lu_solve", "matrix_exp", "matrix_power", "qr",
           "slogdet", "solve_triangular", "vector_norm"]
