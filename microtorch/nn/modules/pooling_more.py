"""3-d, adaptive, power-average and fractional pooling, and max unpooling."""
from .. import functional as F
from .module import Module
from .pooling import _AvgPoolNd, _MaxPoolNd


class MaxPool3d(_MaxPoolNd):
    """the maximum of each 3-d window"""

    def forward(self, input):
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class AvgPool3d(_AvgPoolNd):
    """the mean of each 3-d window"""

    def forward(self, input):
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class _AdaptivePool(Module):
    _fn = None

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def extra_repr(self):
        return f"output_size={self.output_size}"


class _AdaptiveAvgPool(_AdaptivePool):
    def __init__(self, output_size):
        super().__init__(output_size)
        del self.return_indices

    def forward(self, input):
        return type(self)._fn(input, self.output_size)


class _AdaptiveMaxPool(_AdaptivePool):
    def forward(self, input):
        return type(self)._fn(input, self.output_size, self.return_indices)


class AdaptiveAvgPool1d(_AdaptiveAvgPool):
    """the mean of output_size windows that tile the input"""
    _fn = F.adaptive_avg_pool1d


class AdaptiveAvgPool2d(_AdaptiveAvgPool):
    """the mean of output_size windows that tile the input"""
    _fn = F.adaptive_avg_pool2d


class AdaptiveAvgPool3d(_AdaptiveAvgPool):
    """the mean of output_size windows that tile the input"""
    _fn = F.adaptive_avg_pool3d


class AdaptiveMaxPool1d(_AdaptiveMaxPool):
    """the maximum of output_size windows that tile the input"""
    _fn = F.adaptive_max_pool1d


class AdaptiveMaxPool2d(_AdaptiveMaxPool):
    """the maximum of output_size windows that tile the input"""
    _fn = F.adaptive_max_pool2d


class AdaptiveMaxPool3d(_AdaptiveMaxPool):
    """the maximum of output_size windows that tile the input"""
    _fn = F.adaptive_max_pool3d


class _LPPool(Module):
    _fn = None

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type, self.kernel_size, self.stride, self.ceil_mode = norm_type, kernel_size, stride, ceil_mode

    def forward(self, input):
        return type(self)._fn(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self):
        return "norm_type={norm_type}, kernel_size={kernel_size}, stride={stride}, ceil_mode={ceil_mode}".format(
            **self.__dict__)


class LPPool1d(_LPPool):
    """(sum of x^p over each window)^(1/p)"""
    _fn = F.lp_pool1d


class LPPool2d(_LPPool):
    """(sum of x^p over each window)^(1/p)"""
    _fn = F.lp_pool2d


class LPPool3d(_LPPool):
    """(sum of x^p over each window)^(1/p)"""
    _fn = F.lp_pool3d


class _FractionalMaxPool(Module):
    _n, _fn = 2, None

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None):
        super().__init__()
        name, n = type(self).__name__, self._n
        self.kernel_size = F._tuple(kernel_size, n, "kernel_size", name)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = F._tuple(output_size, n, "output_size", name) if output_size is not None else None
        self.output_ratio = None
        if output_ratio is not None:
            ratio = output_ratio if isinstance(output_ratio, (tuple, list)) else (output_ratio,) * n
            self.output_ratio = tuple(float(r) for r in ratio)
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        return type(self)._fn(input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                              _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPool):
    """the maximum of pseudo-random overlapping windows that shrink the input to output_size"""
    _n, _fn = 2, F.fractional_max_pool2d


class FractionalMaxPool3d(_FractionalMaxPool):
    """the maximum of pseudo-random overlapping windows that shrink the input to output_size"""
    _n, _fn = 3, F.fractional_max_pool3d


class _MaxUnpool(Module):
    _n, _fn = 2, None

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        name, n = type(self).__name__, self._n
        self.kernel_size = F._tuple(kernel_size, n, "kernel_size", name)
        self.stride = F._tuple(stride if stride is not None else kernel_size, n, "stride", name)
        self.padding = F._tuple(padding, n, "padding", name)

    def forward(self, input, indices, output_size=None):
        return type(self)._fn(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpool):
    """puts each value back where max_pool1d found it, zeros elsewhere"""
    _n, _fn = 1, F.max_unpool1d


class MaxUnpool2d(_MaxUnpool):
    """puts each value back where max_pool2d found it, zeros elsewhere"""
    _n, _fn = 2, F.max_unpool2d


class MaxUnpool3d(_MaxUnpool):
    """puts each value back where max_pool3d found it, zeros elsewhere"""
    _n, _fn = 3, F.max_unpool3d
