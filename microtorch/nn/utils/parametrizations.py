"""parametrizations: orthogonal, weight_norm and spectral_norm written as parametrizations (nn.utils.parametrize):
the tensor stays in module.parametrizations.<name>, the module reads the constrained value as module.<name>."""
from enum import Enum, auto

from ..._creation import eye, randn, zeros_like
from ..._tensor import Tensor
from ..._torch_misc import finfo
from ...autograd.grad_mode import no_grad
from ...linalg import householder_product, solve
from ...ops import add, allclose, cat, mv
from ...ops.linalg_decomp import geqrf
from ...ops.linalg_more import matrix_exp, vdot
from ...ops._op import Op
from ...ops.loss import normalize
from ..modules.conv_more import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..modules.module import Module
from . import parametrize

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _is_orthogonal(q):
    n, k = q.size(-2), q.size(-1)
    identity = eye(k, dtype=q.dtype)
    return allclose(q.mH @ q, identity, atol=10.0 * n * finfo(q.dtype).eps)


def _make_orthogonal(a):
    """the Q of a's QR decomposition, its columns' signs chosen so that R has a positive diagonal"""
    x, tau = geqrf(a)
    q = householder_product(x, tau)
    q *= x.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)
    return q


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    """X -> an orthogonal matrix (of the weight's shape): the matrix exponential or the Cayley map of the
    skew-symmetric matrix X's lower triangle gives, or the product of Householder reflections it holds.
    With use_trivialization the result is multiplied by `base`, which assigning to the weight sets."""

    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:  # (a wide matrix: its transpose is tall)
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:
                X = cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mH
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = matrix_exp(A)
            else:
                identity = eye(n, dtype=A.dtype)
                Q = solve(add(identity, A, alpha=-0.5), add(identity, A, alpha=0.5))
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)  # (the diagonal's signs flip columns)
        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q):
        with no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q):
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        given = Q
        n, k = Q.size(-2), Q.size(-1)
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                raise NotImplementedError("It is not possible to assign to the matrix exponential or the Cayley "
                                          "parametrizations when use_trivialization=False.")
            A, tau = geqrf(Q)
            A.diagonal(dim1=-2, dim2=-1).sign_()
            A.diagonal(dim1=-2, dim2=-1)[tau == 0.0] *= -1
            return A.mT if transpose else A
        if n == k:
            Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
        else:  # completed to a square orthogonal matrix by random columns
            N = randn(*(Q.size()[:-2] + (n, n - k)), dtype=Q.dtype)
            Q = _make_orthogonal(cat([Q, N], dim=-1))
        self.base = Q
        neg_identity = zeros_like(given)  # (forward maps it to -I; base's signs make up for it)
        neg_identity.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_identity


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Make module.<name> (a matrix or batch of matrices) orthogonal, or with orthonormal rows/columns when it is
    not square. orthogonal_map: "matrix_exp" (the default for square or complex), "cayley" or "householder"
    (the default otherwise). Returns module."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        square = weight.size(-2) == weight.size(-1)
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    kind = getattr(_OrthMaps, orthogonal_map, None)
    if kind is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    parametrization = _Orthogonal(weight, kind, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, parametrization, unsafe=True)
    return module


def _norm_except_dim(v, dim):
    """torch.norm_except_dim(v, 2, dim): the 2-norm over every dim but dim, kept as size 1 (dim -1: the whole)"""
    if dim == -1:
        return v.norm(2)
    dims = [d for d in range(v.ndim) if d != dim % v.ndim]
    return v.norm(2, dim=dims, keepdim=True) if dims else v.abs()


class _WeightNormInterface(Op):
    """w = v * (g / ||v||) fused, as torch's CPU kernel does it when dim is the first or the last: one node,
    WeightNormInterfaceBackward0, saving v, g and the norms."""
    _grad_fn_name = "WeightNormInterfaceBackward0"
    _saved_names, _saved_values = ("v", "g", "result1"), {"dim": "dim"}

    @staticmethod
    def forward(ctx, v, g, dim):
        ctx.dim = dim
        with no_grad():  # (the norm as microtorch's norm computes it: the same bits as the composed form)
            norms = _norm_except_dim(Tensor._make(v), dim)._data
        ctx.save_for_backward(v, g, norms)
        return v * (g / norms)

    @staticmethod
    def backward(ctx, grad):
        v, g, norms = ctx.saved_tensors
        others = [d for d in range(v.ndim) if d != ctx.dim]
        grad_g = (grad * v).sum(others, keepdim=True) / norms
        grad_v = (g / norms) * (grad - v * (grad_g / norms))
        return grad_v, grad_g, None

    @staticmethod
    def jvp(ctx, *_):
        raise NotImplementedError(  # (torch has no forward mode for this op: its error)
            "Trying to use forward AD with _weight_norm_interface that does not support it because it has not been "
            "implemented yet.\nPlease file an issue to PyTorch at https://github.com/pytorch/pytorch/issues/new?"
            "template=feature-request.yml so that we can prioritize its implementation or submit a PR adding the "
            "implementation to derivatives.yaml")


def _weight_norm(v, g, dim):
    """torch._weight_norm: the fused node for the first or last dim, the composed ops otherwise (as torch's)"""
    if dim == 0 or dim == v.dim() - 1:
        return _WeightNormInterface.apply(v, g, dim)
    return v * (g / _norm_except_dim(v, dim))


class _WeightNorm(Module):
    """(g, v) -> g * v / ||v||, the norm over every dim but `dim` (dim None or -1: the whole tensor's)."""

    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """module.<name> = g * v / ||v||, g in module.parametrizations.<name>.original0 and v in original1.
    A state dict saved with the old nn.utils.weight_norm (<name>_g, <name>_v) still loads. Returns module."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def old_keys_renamed(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs):
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)
    module._register_load_state_dict_pre_hook(old_keys_renamed)
    return module


class _SpectralNorm(Module):
    """W -> W / sigma, sigma W's largest singular value as power iteration estimates it: u and v (buffers `_u`,
    `_v`) take n_power_iterations steps at each read in training mode (15 at the start). A vector is
    just normalized."""

    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got "
                             f"{dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            u = weight_mat.new_empty(h).normal_(0, 1)  # (drawn as the old nn.utils.spectral_norm draws them)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations):
        with no_grad():
            for _ in range(n_power_iterations):  # (in place: the buffers keep the estimate)
                self._u.copy_(normalize(mv(weight_mat, self._v), dim=0, eps=self.eps))
                self._v.copy_(normalize(mv(weight_mat.H, self._u), dim=0, eps=self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = vdot(u, mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """module.<name> divided by its spectral norm (estimated by power iteration), as a parametrization.
    dim: the output dim (1 for the transposed convolutions, else 0). Returns module."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    parametrization = _SpectralNorm(weight, n_power_iterations, dim, eps)
    parametrize.register_parametrization(module, name, parametrization)
    return module
