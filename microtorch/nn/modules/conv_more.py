"""Conv3d and the transposed convolutions ConvTranspose1d/2d/3d."""
from .. import functional as F
from .conv import _ConvNd


class Conv3d(_ConvNd):
    """out[n, o, i, j, k] = bias[o] + sum_c,p,q,r weight[o, c, p, q, r] * x[n, c, i*s + p*d - pad, ...]"""
    _n = 3


class _ConvTransposeNd(_ConvNd):
    """The adjoint of the convolution with the same weight: weight is (in, out/groups, *kernel)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        name = type(self).__name__
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {name}')
        if isinstance(padding, str):
            raise ValueError(f"{name}: padding must be an int or a tuple of ints, got {padding!r}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype)
        self.output_padding = F._tuple(output_padding, self._n, "output_padding", name)

    def _weight_shape(self, in_channels, out_channels, groups):
        return (in_channels, out_channels // groups) + self.kernel_size

    def _output_padding(self, input, output_size):
        if output_size is None:
            return self.output_padding
        n = self._n
        size = list(output_size)[-n:] if len(output_size) in (n + 1, n + 2) else list(output_size)
        if len(size) != n:
            raise ValueError(f"ConvTranspose{n}D: for {input.ndim}D input, output_size must have {n} or {n + 2} "
                             f"elements (got {len(output_size)})")
        lo = [(input.shape[input.ndim - n + d] - 1) * self.stride[d] - 2 * self.padding[d]
              + self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(n)]
        hi = [lo[d] + self.stride[d] - 1 for d in range(n)]
        if any(not lo[d] <= size[d] <= hi[d] for d in range(n)):
            given = list(output_size) if isinstance(output_size, list) else output_size  # (as given, as torch's)
            raise ValueError(f"requested an output size of {given}, but valid sizes range from {lo} to {hi} (for an "
                             f"input of {input.shape[2:]})")
        return tuple(size[d] - lo[d] for d in range(n))

    def forward(self, input, output_size=None):
        fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[self._n - 1]
        return fn(input, self.weight, self.bias, self.stride, self.padding, self._output_padding(input, output_size),
                  self.groups, self.dilation)

    def extra_repr(self):
        n = self._n
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * n:
            s += ", padding={padding}"
        if self.dilation != (1,) * n:
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * n:
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        return s.format(**self.__dict__)


class ConvTranspose1d(_ConvTransposeNd):
    """the adjoint of conv1d: every input element adds weight * x into a window of the output"""
    _n = 1


class ConvTranspose2d(_ConvTransposeNd):
    """the adjoint of conv2d: every input element adds weight * x into a window of the output"""
    _n = 2


class ConvTranspose3d(_ConvTransposeNd):
    """the adjoint of conv3d: every input element adds weight * x into a window of the output"""
    _n = 3
