"""Lazy modules: layers that read their input size from their first input, as Dive into Deep Learning builds its
models (`nn.Sequential(nn.LazyLinear(256), nn.ReLU(), nn.LazyLinear(10))`, then `net(X)`).

A lazy module starts with UninitializedParameters and UninitializedBuffers (nn/parameter.py) and a forward
pre-hook. On the first call the hook runs `initialize_parameters(input)`: the size is read, the parameters are
materialized and initialized by the layer's own `reset_parameters` (so that under manual_seed they get torch's
values), the hook removes itself, and the module becomes its eager class (`cls_to_become`: a LazyLinear becomes a
Linear). `load_state_dict` materializes them too, to the shapes it is given.
"""
import itertools

from ..._dtype import int64
from ..._tensor import Tensor, tensor
from ...autograd.grad_mode import no_grad
from ..parameter import UninitializedBuffer, UninitializedParameter, is_lazy
from .conv import Conv1d, Conv2d
from .conv_more import Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d, _ConvTransposeNd
from .linear import Linear
from .normalization import BatchNorm1d, BatchNorm2d, _BatchNorm
from .normalization_more import BatchNorm3d, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, _InstanceNorm

__all__ = ["LazyModuleMixin"]


class LazyModuleMixin:
    """Mixed in before a layer's class: its parameters get their shapes from the first input (see above)."""

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        # an uninitialized tensor has nothing to detach: it is saved as itself
        for name, value in itertools.chain(self._parameters.items(), self._buffers.items()):
            if value is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = value if keep_vars or is_lazy(value) else value.detach()

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs):
        """load_state_dict's pre-hook: an uninitialized tensor given an initialized one takes its shape."""
        for name, value in itertools.chain(self._parameters.items(), self._buffers.items()):
            given = state_dict.get(prefix + name)
            if is_lazy(value) and isinstance(given, Tensor) and not is_lazy(given):
                with no_grad():
                    value.materialize(given.shape)

    def initialize_parameters(self, *args, **kwargs):
        """Read the sizes from the first input and materialize the parameters (each lazy layer defines it)."""
        raise NotImplementedError(f"initialize_parameters is not implemented for {type(self).__name__}")

    def has_uninitialized_params(self):
        """Whether a parameter or buffer of this module still waits for its shape."""
        return any(is_lazy(v) for v in itertools.chain(self._parameters.values(), self._buffers.values()))

    def _infer_parameters(self, module, args, kwargs=None):
        """The forward pre-hook of the first call: initialize, then stop being lazy."""
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized: its initialize_parameters "
                               "must materialize every UninitializedParameter and UninitializedBuffer")
        module._initialize_hook.remove()
        module._load_hook.remove()
        delattr(module, "_initialize_hook")
        delattr(module, "_load_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with `DataParallel`. Run a dummy "
                           "forward pass to correctly initialize the modules")


def _last_dim(module, input, what):
    """The size of input's last dim, which a LazyLinear reads as its in_features."""
    if input.ndim == 0:  # (torch's IndexError, with the reason)
        raise IndexError(f"{type(module).__name__} reads {what} from the last dim of its first input, and a 0-d "
                         "input has none: give it a batch of shape (..., in_features)")
    return input.shape[-1]


class LazyLinear(LazyModuleMixin, Linear):
    """A Linear whose in_features is the last size of its first input."""

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False)  # (no bias yet: it would be replaced at once)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = _last_dim(self, input, "in_features")
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
        if self.in_features == 0:  # materialized by load_state_dict: the weight knows the size
            if _last_dim(self, input, "in_features") != self.weight.shape[-1]:
                raise AssertionError(f"The in_features inferred from input: {input.shape[-1]} is not equal to "
                                     f"in_features from self.weight: {self.weight.shape[-1]}")
            self.in_features = input.shape[-1]


# ---- convolutions --------------------------------------------------------------------------------
class _LazyConvXdMixin(LazyModuleMixin):
    """in_channels read from the first input: dim 1 of a batch, dim 0 of a single example."""

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if isinstance(self, _ConvTransposeNd):
                shape = (self.in_channels, self.out_channels // self.groups, *self.kernel_size)
            else:
                shape = (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
            self.weight.materialize(shape)
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _get_in_channels(self, input):
        batched = self._n + 2
        if input.ndim not in (batched - 1, batched):
            raise RuntimeError(f"Expected {batched - 1}D (unbatched) or {batched}D (batched) input to "
                               f"{type(self).__name__}, but got input of size: {input.shape}")
        return input.shape[1] if input.ndim == batched else input.shape[0]


def _lazy_conv_init(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                    padding_mode="zeros", device=None, dtype=None):
    """LazyConvNd's __init__: a conv of 0 channels, whose weight (and bias) wait for the first input."""
    LazyModuleMixin.__init__(self, 0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode,
                             device=device, dtype=dtype)  # (no bias yet: it would be replaced at once)
    _uninitialized_weights(self, out_channels, bias, device, dtype)


def _lazy_conv_transpose_init(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                              bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
    """LazyConvTransposeNd's __init__ (ConvTranspose's order of arguments: output_padding, groups, bias, dilation)."""
    LazyModuleMixin.__init__(self, 0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation,
                             padding_mode, device=device, dtype=dtype)
    _uninitialized_weights(self, out_channels, bias, device, dtype)


def _uninitialized_weights(conv, out_channels, bias, device, dtype):
    conv.weight = UninitializedParameter(device=device, dtype=dtype)
    conv.out_channels = out_channels
    if bias:
        conv.bias = UninitializedParameter(device=device, dtype=dtype)


class LazyConv1d(_LazyConvXdMixin, Conv1d):
    """A Conv1d whose in_channels is read from its first input."""
    cls_to_become = Conv1d
    __init__ = _lazy_conv_init


class LazyConv2d(_LazyConvXdMixin, Conv2d):
    """A Conv2d whose in_channels is read from its first input."""
    cls_to_become = Conv2d
    __init__ = _lazy_conv_init


class LazyConv3d(_LazyConvXdMixin, Conv3d):
    """A Conv3d whose in_channels is read from its first input."""
    cls_to_become = Conv3d
    __init__ = _lazy_conv_init


class LazyConvTranspose1d(_LazyConvXdMixin, ConvTranspose1d):
    """A ConvTranspose1d whose in_channels is read from its first input."""
    cls_to_become = ConvTranspose1d
    __init__ = _lazy_conv_transpose_init


class LazyConvTranspose2d(_LazyConvXdMixin, ConvTranspose2d):
    """A ConvTranspose2d whose in_channels is read from its first input."""
    cls_to_become = ConvTranspose2d
    __init__ = _lazy_conv_transpose_init


class LazyConvTranspose3d(_LazyConvXdMixin, ConvTranspose3d):
    """A ConvTranspose3d whose in_channels is read from its first input."""
    cls_to_become = ConvTranspose3d
    __init__ = _lazy_conv_transpose_init


# ---- normalization -------------------------------------------------------------------------------
class _LazyNormBase(LazyModuleMixin, _BatchNorm):
    """num_features read from dim 1 of the first input. Affine and tracking running statistics by default, the
    instance norms too (unlike InstanceNorm1d/2d/3d), as in torch."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None, *,
                 bias=True):
        # a norm of 0 features with nothing to learn or track: what it will have waits for the first input
        super().__init__(0, eps, momentum, False, False, device=device, dtype=dtype, bias=False)
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = tensor(0, dtype=int64)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            if input.ndim < 2:  # (torch's IndexError, with the reason)
                raise IndexError(f"{type(self).__name__} reads num_features from dim 1 of its first input, and this "
                                 f"one has {input.ndim} dim(s): give it a batch of shape (N, C, ...)")
            self.num_features = input.shape[1]
            names = (("weight", "bias") if self.affine else ()) + \
                (("running_mean", "running_var") if self.track_running_stats else ())
            for name in names:
                value = getattr(self, name)
                if value is not None:
                    value.materialize((self.num_features,))
            self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, _BatchNorm):
    """A BatchNorm1d whose num_features is read from its first input."""
    cls_to_become = BatchNorm1d
    _dims = BatchNorm1d._dims


class LazyBatchNorm2d(_LazyNormBase, _BatchNorm):
    """A BatchNorm2d whose num_features is read from its first input."""
    cls_to_become = BatchNorm2d
    _dims = BatchNorm2d._dims


class LazyBatchNorm3d(_LazyNormBase, _BatchNorm):
    """A BatchNorm3d whose num_features is read from its first input."""
    cls_to_become = BatchNorm3d
    _dims = BatchNorm3d._dims


class LazyInstanceNorm1d(_LazyNormBase, _InstanceNorm):
    """An InstanceNorm1d whose num_features is read from dim 1 of its first input (of a batch, as torch)."""
    cls_to_become = InstanceNorm1d
    _no_batch_dim = InstanceNorm1d._no_batch_dim


class LazyInstanceNorm2d(_LazyNormBase, _InstanceNorm):
    """An InstanceNorm2d whose num_features is read from dim 1 of its first input (of a batch, as torch)."""
    cls_to_become = InstanceNorm2d
    _no_batch_dim = InstanceNorm2d._no_batch_dim


class LazyInstanceNorm3d(_LazyNormBase, _InstanceNorm):
    """An InstanceNorm3d whose num_features is read from dim 1 of its first input (of a batch, as torch)."""
    cls_to_become = InstanceNorm3d
    _no_batch_dim = InstanceNorm3d._no_batch_dim
