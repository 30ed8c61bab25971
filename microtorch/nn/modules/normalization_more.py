"""GroupNorm, InstanceNorm1d/2d/3d, RMSNorm, LocalResponseNorm, CrossMapLRN2d and BatchNorm3d."""
import numbers
import warnings

from ..._creation import empty
from ...ops.norm_more import cross_map_lrn2d
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module
from .normalization import _BatchNorm


class BatchNorm3d(_BatchNorm):
    """per-channel normalisation of (N, C, D, H, W) inputs by batch statistics"""
    _dims = (5,)


class _InstanceNorm(_BatchNorm):
    """each (example, channel) normalised by its own statistics; running stats only if asked for"""
    _no_batch_dim = 2

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False, device=None,
                 dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, dtype=dtype, bias=bias)

    def forward(self, input):
        want = (self._no_batch_dim, self._no_batch_dim + 1)
        if input.ndim not in want:
            raise ValueError(f"expected {want[0]}D or {want[1]}D input (got {input.ndim}D input)")
        feature_dim = input.ndim - self._no_batch_dim
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match num_features "
                                 f"({self.num_features}), but got: {input.shape[feature_dim]}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You can silence this "
                          "warning by not passing in num_features, which is not used because affine=False",
                          stacklevel=2)
        unbatched = input.ndim == self._no_batch_dim
        x = input.unsqueeze(0) if unbatched else input
        out = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                              self.training or not self.track_running_stats,
                              self.momentum if self.momentum is not None else 0.0, self.eps)
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    """instance normalisation of (N, C, L) or (C, L) inputs"""
    _no_batch_dim = 2


class InstanceNorm2d(_InstanceNorm):
    """instance normalisation of (N, C, H, W) or (C, H, W) inputs"""
    _no_batch_dim = 3


class InstanceNorm3d(_InstanceNorm):
    """instance normalisation of (N, C, D, H, W) or (C, D, H, W) inputs"""
    _no_batch_dim = 4


class GroupNorm(Module):
    """the channels split into num_groups groups, each normalised per example, then a per-channel affine map"""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        if affine:
            self.weight = Parameter(empty(num_channels, dtype=dtype))
            if bias:
                self.bias = Parameter(empty(num_channels, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, " \
               f"bias={self.bias is not None}"


class RMSNorm(Module):
    """x / sqrt(mean(x^2) + eps) * weight over the last dims (normalized_shape)"""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(empty(self.normalized_shape, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class LocalResponseNorm(Module):
    """x / (k + alpha * mean of x^2 over size neighbouring channels) ** beta"""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class CrossMapLRN2d(LocalResponseNorm):
    """the legacy (Lua torch) local response norm across channels of a 4-d input"""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__(size, alpha, beta, k)

    def forward(self, input):
        return cross_map_lrn2d(input, self.size, self.alpha, self.beta, self.k)
