"""Conv1d and Conv2d (and their base, with the padding modes)."""
import math

from ..._creation import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module


class _ConvNd(Module):
    _n = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        n, name = self._n, type(self).__name__
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {set(_PADDING_MODES)}, but got "
                             f"padding_mode='{padding_mode}'")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
            if padding == "same" and any(s != 1 for s in F._tuple(stride, n, "stride", name)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = F._tuple(kernel_size, n, "kernel_size", name)
        self.stride = F._tuple(stride, n, "stride", name)
        self.padding = padding if isinstance(padding, str) else F._tuple(padding, n, "padding", name)
        self.dilation = F._tuple(dilation, n, "dilation", name)
        self.groups, self.padding_mode = groups, padding_mode
        self._reversed_padding_repeated_twice = _reversed_padding(self.padding, self.kernel_size, self.dilation)
        self.weight = Parameter(empty(self._weight_shape(in_channels, out_channels, groups), dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_channels, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def _weight_shape(self, in_channels, out_channels, groups):
        return (out_channels, in_channels // groups) + self.kernel_size

    def reset_parameters(self):
        # torch's default, as for Linear: U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = in_channels/groups * kernel
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def _conv_forward(self, input, weight, bias):
        """The convolution; another padding_mode than zeros pads first (F.pad), then convolves unpadded, as torch."""
        conv = (F.conv1d, F.conv2d, F.conv3d)[self._n - 1]
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return conv(padded, weight, bias, self.stride, (0,) * self._n, self.dilation, self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)

    def extra_repr(self):
        n = self._n
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * n:
            s += ", padding={padding}"
        if self.dilation != (1,) * n:
            s += ", dilation={dilation}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)


class Conv1d(_ConvNd):
    """out[n, o, l] = bias[o] + sum_c,k weight[o, c, k] * x[n, c, l*stride + k*dilation - padding]"""
    _n = 1


class Conv2d(_ConvNd):
    """out[n, o, i, j] = bias[o] + sum_c,p,q weight[o, c, p, q] * x[n, c, i*s + p*d - pad, j*s + q*d - pad]"""
    _n = 2


_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _reversed_padding(padding, kernel_size, dilation):
    """The padding as F.pad takes it (last dim first, each side given): 'same' splits each dim's
    dilation * (kernel - 1) with the smaller half first, as torch."""
    if not isinstance(padding, str):
        return tuple(p for p in reversed(padding) for _ in range(2))
    out = [0, 0] * len(kernel_size)
    if padding == "same":
        for d, k, i in zip(dilation, kernel_size, range(len(kernel_size) - 1, -1, -1)):
            total = d * (k - 1)
            out[2 * i], out[2 * i + 1] = total // 2, total - total // 2
    return out
