"""MultivariateNormal(loc, covariance_matrix | precision_matrix | scale_tril): the Gaussian over vectors.

Whichever matrix is given, the class works from one lower-triangular factor L of the covariance
(Sigma = L L^T), kept with the batch shape the user gave it (`_unbroadcasted_scale_tril`):

- rsample is loc + L eps, eps standard normal drawn as Normal draws it, so a seed gives torch's numbers;
- log_prob needs the Mahalanobis distance |L^-1 (x - loc)|^2, a triangular solve, and log det Sigma,
  which is twice the sum of log diag(L);
- the other two matrices are derived from L on first use (lazy_parameter), as torch's lazy properties.
"""
import math

import microtorch as _mt

from .. import _creation
from .distribution import Distribution, lazy_parameter

_MATRICES = ("covariance_matrix", "precision_matrix", "scale_tril")
_TOO_FEW_DIMS = {"covariance_matrix": "covariance_matrix", "precision_matrix": "precision_matrix",
                 "scale_tril": "scale_tril matrix"}


# ---- torch's constraints, as predicates (each returns a bool tensor, True where the value is valid) -----------
def real_vector(v):
    """IndependentConstraint(Real(), 1): no NaN in the last dim (inf is real to torch)."""
    return (v == v).all(-1)


def positive_definite(m):
    """PositiveDefinite(): square, symmetric within torch's isclose(atol=1e-6), and with a Cholesky factor."""
    m = m.detach()   # (a check, not a computation: it records no graph)
    if m.shape[-2] != m.shape[-1]:
        return _mt.tensor(False)
    symmetric = _mt.isclose(m, m.mT, atol=1e-6).all(-2).all(-1)
    if not bool(symmetric.all()):   # (torch stops here: a non-symmetric matrix never reaches cholesky)
        return symmetric
    return _mt.linalg.cholesky_ex(m).info == 0


def lower_cholesky(m):
    """LowerCholesky(): zero above the diagonal and positive on it."""
    lower = (m.tril() == m).flatten(-2).all(-1)
    return lower & (m.diagonal(dim1=-2, dim2=-1) > 0).all(-1)


# ---- the factor L and what is computed from it ---------------------------------------------------------------
def precision_to_scale_tril(P):
    """L with L L^T = P^-1, without inverting P.

    With J the flip of rows (and of columns), the Cholesky factor F of J P J gives P = U U^T for the upper
    triangular U = J F J; then P^-1 = U^-T U^-1, so L = (U^T)^-1, one triangular solve against I.
    """
    flipped = _mt.linalg.cholesky(_mt.flip(P, (-2, -1)))
    u_t = _mt.flip(flipped, (-2, -1)).mT   # (U^T: lower triangular)
    eye = _mt.eye(P.shape[-1], dtype=P.dtype)
    return _mt.linalg.solve_triangular(u_t, eye, upper=False)


def mahalanobis(L, x):
    """x^T (L L^T)^-1 x for each vector x, L's batch broadcast against x's leading dims.

    (torch folds the sample dims into the columns of one solve so as not to repeat L; broadcasting L is
    simpler to read, and equal up to rounding.)
    """
    z = _mt.linalg.solve_triangular(L, x.unsqueeze(-1), upper=False).squeeze(-1)
    return z.pow(2).sum(-1)


def _factor(name, matrix):
    """The lower Cholesky factor of the covariance, from the matrix the user gave."""
    if name == "scale_tril":
        return matrix
    if name == "covariance_matrix":
        return _mt.linalg.cholesky(matrix)
    return precision_to_scale_tril(matrix)


class MultivariateNormal(Distribution):
    """N(loc, Sigma) over vectors of size n: log_prob(x) = -(n log(2 pi) + M(x)) / 2 - log det(L),
    M(x) = (x - loc)^T Sigma^-1 (x - loc); exactly one of the three matrices describes Sigma."""
    has_rsample = True
    _arg_checks = {"loc": (real_vector, "IndependentConstraint(Real(), 1)"),
                   "covariance_matrix": (positive_definite, "PositiveDefinite()"),
                   "precision_matrix": (positive_definite, "PositiveDefinite()"),
                   "scale_tril": (lower_cholesky, "LowerCholesky()")}

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [(name, m) for name, m in zip(_MATRICES, (covariance_matrix, precision_matrix, scale_tril))
                 if m is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        (name, matrix), = given
        if matrix.dim() < 2:
            raise ValueError(f"{_TOO_FEW_DIMS[name]} must be at least two-dimensional, "
                             "with optional leading batch dimensions")
        batch_shape = tuple(_mt.broadcast_shapes(matrix.shape[:-2], loc.shape[:-1]))
        setattr(self, name, matrix.expand(batch_shape + (-1, -1)))   # (the instance's value hides the lazy one)
        self.loc = loc.expand(batch_shape + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        # factored after the checks, so that a matrix that is not positive-definite gets the ValueError
        self._unbroadcasted_scale_tril = _factor(name, matrix)

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    # the two matrices not given are derived on first read; with grad on, as torch's lazy properties,
    # so that one first read under no_grad still gives a matrix with a history
    @lazy_parameter
    def scale_tril(self):
        with _mt.enable_grad():
            return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_parameter
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        with _mt.enable_grad():
            return _mt.matmul(L, L.mT).expand(self._matrix_shape())

    @lazy_parameter
    def precision_matrix(self):
        with _mt.enable_grad():
            return _mt.cholesky_inverse(self._unbroadcasted_scale_tril).expand(self._matrix_shape())

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        # the diagonal of L L^T: each row of L squared and summed
        shape = tuple(self._batch_shape) + tuple(self._event_shape)
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(shape)

    def rsample(self, sample_shape=()):
        eps = _creation.randn(tuple(self._extended_shape(sample_shape)), dtype=self.loc.dtype)
        return self.loc + _mt.matmul(self._unbroadcasted_scale_tril, eps.unsqueeze(-1)).squeeze(-1)

    def _half_log_det(self):
        """log det(L) = log sqrt(det Sigma), L being triangular."""
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        self._validate_sample(value, real_vector, "IndependentConstraint(Real(), 1)")
        m = mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + m) - self._half_log_det()

    def entropy(self):
        h = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return h if len(self._batch_shape) == 0 else h.expand(self._batch_shape)

    def expand(self, batch_shape, _instance=None):
        """The same distribution repeated over a larger batch: views of the parameters, the same factor L."""
        if _instance is None and type(self).__init__ != MultivariateNormal.__init__:
            raise NotImplementedError(f"Subclass {type(self).__name__} of MultivariateNormal that defines a custom "
                                      "__init__ method must also define a custom .expand() method.")
        new = type(self).__new__(type(self)) if _instance is None else _instance
        batch, event = tuple(_mt.Size(batch_shape)), tuple(self._event_shape)
        new.loc = self.loc.expand(batch + event)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in _MATRICES:
            if name in self.__dict__:   # (only those given or already derived; the rest stay lazy)
                setattr(new, name, self.__dict__[name].expand(batch + event * 2))
        Distribution.__init__(new, batch, event, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def __repr__(self):
        # as torch's: a one-element parameter shows its value (here never 0-dim, so as a tensor), others a size
        shown = [f"{name}: {value if value.numel() == 1 else value.size()}"
                 for name, value in ((n, self.__dict__[n]) for n in self._arg_checks if n in self.__dict__)]
        return f"{type(self).__name__}({', '.join(shown)})"
