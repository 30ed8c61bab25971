"""microtorch.nn.functional: the layers as functions (`import microtorch.nn.functional as F`).

The differentiable primitives live in microtorch/ops (nn.py: softmax, losses, dropout;
conv.py: convolution, pooling, embedding); this module checks arguments the way torch does
and builds layer_norm and batch_norm out of ordinary tensor ops.
"""
import numpy as np

from .._tensor import Tensor
from .._user_line import warn_once
from ..ops import conv as _convops
from ..ops import elementwise as _ew
from ..ops._kernels import _NAMES, _TYPE_META
from ..ops.pad import pad  # noqa: F401
from ._functional_dropout import (alpha_dropout, dropout, dropout1d, dropout2d, dropout3d,  # noqa: F401
                                  feature_alpha_dropout)
from ..ops.loss import (cosine_embedding_loss, cosine_similarity, gaussian_nll_loss, hinge_embedding_loss,  # noqa: F401
                        huber_loss, kl_div, margin_ranking_loss, multilabel_soft_margin_loss, normalize,
                        pairwise_distance, poisson_nll_loss, smooth_l1_loss, soft_margin_loss, triplet_margin_loss,
                        triplet_margin_with_distance_loss)
from ._functional_act import (celu, celu_, elu_, glu, hardshrink, hardsigmoid, hardswish, hardtanh,  # noqa: F401
                              hardtanh_, leaky_relu_, logsigmoid, mish, prelu, relu6, relu_, rrelu, rrelu_, selu,
                              selu_, silu, softmin, softshrink, softsign, tanhshrink, threshold, threshold_)
from ..ops.nn import (binary_cross_entropy, binary_cross_entropy_with_logits, cross_entropy,  # noqa: F401
                      l1_loss, linear, log_softmax, mse_loss, nll_loss, softmax)
from ..autograd._hooks import composite

# torch's profiler shows these two around the ops they run (aten::linear holding aten::t and aten::addmm)
linear = composite("aten::linear")(linear)
cross_entropy = composite("aten::cross_entropy_loss")(cross_entropy)


# ---- activations --------------------------------------------------------------------------
def relu(input, inplace=False):
    return input.relu_() if inplace else _ew.relu(input)


def leaky_relu(input, negative_slope=0.01, inplace=False):  # (in place as leaky_relu_: input.copy_(out) would
    # overwrite the input that out's node saved, and its backward would refuse to run)
    return leaky_relu_(input, negative_slope) if inplace else _ew.leaky_relu(input, negative_slope)


def elu(input, alpha=1.0, inplace=False):  # (in place as elu_, see leaky_relu)
    return elu_(input, alpha) if inplace else _ew.elu(input, alpha)


def gelu(input, approximate="none"):
    return _ew.gelu(input, approximate)


def softplus(input, beta=1, threshold=20):
    return _ew.softplus(input, beta, threshold)


def sigmoid(input):
    return _ew.sigmoid(input)


def tanh(input):
    return _ew.tanh(input)


def one_hot(tensor, num_classes=-1):
    """int64 tensor of shape tensor.shape + (num_classes,) with a 1 at each class index."""
    idx = tensor._data
    if idx.dtype.kind not in "iu":
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        num_classes = int(idx.max()) + 1 if idx.size else 0
    if idx.size and (idx.min() < 0 or idx.max() >= num_classes):
        raise RuntimeError("Class values must be smaller than num_classes." if idx.min() >= 0
                           else "Class values must be non-negative.")
    return Tensor._make((idx[..., None] == np.arange(num_classes)).astype(np.int64))


# ---- argument helpers -----------------------------------------------------------------------
def _tuple(v, n, name, op):
    if isinstance(v, (tuple, list)):
        if len(v) == 1:
            v = tuple(v) * n
        if len(v) != n:
            raise RuntimeError(f"{op}: {name} must be an int or a tuple of {n} ints, got {v}")
        return tuple(int(x) for x in v)
    return (int(v),) * n


def _given(v, n):
    """an int, or a sequence of ints, as torch's nodes show the argument: the int n times, the sequence as given"""
    return tuple(int(x) for x in v) if isinstance(v, (tuple, list)) else (int(v),) * n


def _check_dims(input, spatial, op):
    """(C, *spatial) or (N, C, *spatial), else torch's RuntimeError"""
    if input.ndim not in (spatial + 1, spatial + 2):
        raise RuntimeError(f"{op}: Expected {spatial + 1}D (unbatched) or {spatial + 2}D (batched) input to {op}, but "
                           f"got input of size: {list(input.shape)}")


def _batched(input, spatial, op):
    """(C, *spatial) is treated as a batch of one, as torch does for unbatched inputs."""
    _check_dims(input, spatial, op)
    return (input, False) if input.ndim == spatial + 2 else (input.unsqueeze(0), True)


# ---- convolution ----------------------------------------------------------------------------
def _check_conv_dtypes(x, weight, bias, op):
    """torch's errors for a convolution whose input, weight and bias differ in dtype: the bias is checked first."""
    fix = (f"(the input is {x.dtype}, the weight {weight.dtype}: convert the input, e.g. x.to(w.dtype), or the module, "
           "e.g. .double())")
    if bias is not None and bias.dtype is not x.dtype:
        names = [_TYPE_META.get(t._data.dtype.name, _NAMES[t._data.dtype.name]) for t in (x, bias)]
        raise RuntimeError(f"{op}: Input type ({names[0]}) and bias type ({names[1]}) should be the same {fix}")
    if weight.dtype is not x.dtype:
        raise RuntimeError(f"{op}: expected scalar type {_NAMES[x._data.dtype.name]} but found "
                           f"{_NAMES[weight._data.dtype.name]} {fix}")



def _conv(input, weight, bias, stride, padding, dilation, groups, n, op):
    x, unbatched = _batched(input, n, op)
    if weight.ndim != n + 2:
        raise RuntimeError(f"{op}: expected a weight of {n + 2} dimensions (out_channels, in_channels/groups, "
                           f"kernel...), got size {list(weight.shape)}")
    _check_conv_dtypes(x, weight, bias, op)
    stride, dilation = _tuple(stride, n, "stride", op), _tuple(dilation, n, "dilation", op)
    if groups < 1 or weight.shape[0] % groups:
        raise RuntimeError(f"{op}: out_channels ({weight.shape[0]}) must be divisible by groups ({groups})")
    if x.shape[1] != weight.shape[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
                           f"{list(x.shape)} to have {weight.shape[1] * groups} channels, but got {x.shape[1]} "
                           "channels instead")
    k = weight.shape[2:]
    if isinstance(padding, str):
        if padding == "valid":
            pads = ((0, 0),) * n
        elif padding == "same":
            if any(s != 1 for s in stride):
                # (torch's modules raise a ValueError here, its functional form a RuntimeError)
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            total = [d * (kk - 1) for d, kk in zip(dilation, k)]
            pads = tuple((t // 2, t - t // 2) for t in total)
        else:
            raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
    else:
        pads = tuple((p, p) for p in _tuple(padding, n, "padding", op))
    padded = [size + lo + hi for size, (lo, hi) in zip(x.shape[2:], pads)]
    spans = [d * (kk - 1) + 1 for d, kk in zip(dilation, k)]
    if any(n < span for n, span in zip(padded, spans)):
        raise RuntimeError(f"{op}: Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel "
                           f"size: ({' x '.join(map(str, spans))}). Kernel size can't be greater than actual input size")
    if any(lo != hi for lo, hi in pads):  # (padding='same' with an even span: torch pads the far sides first)
        warn_once("conv same padding", "Using padding='same' with even kernel lengths and odd dilation may require a "
                  "zero-padded copy of the input be created")
        x = pad(x, [v for lo, hi in reversed(pads) for v in (0, hi - lo)])
        pads = tuple((lo, lo) for lo, _ in pads)
    if n == 1:  # the op runs a 1-d convolution as a 2-d one of height 1
        stride, dilation, pads = (1,) + stride, (1,) + dilation, ((0, 0),) + pads
    conv = _convops.Convolution if n < 3 else _conv_nd  # nn1: conv3d runs on ops/conv_more.py
    shown = ((0,), (0,)) if padding == "valid" else None  # (torch's node shows 'valid' so, in any dimension)
    out = conv.apply(x, weight, bias, stride, pads, dilation, groups, *((False,) if n == 3 else ()), shown=shown)
    return out.squeeze(0) if unbatched else out


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """(N, C, H, W) -> (N, C*kh*kw, L), or unbatched (C, H, W) -> (C*kh*kw, L): every sliding window as a column
    (im2col)."""
    if input.ndim == 2:  # (torch's own error for a 2-d input)
        raise IndexError("Dimension out of range (expected to be in range of [-2, 1], but got 2) (unfold takes "
                         "(C, H, W) or (N, C, H, W))")
    _check_blocks(input, 3, "3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions")
    k, d, p, s = (_pair(v, name) for v, name in ((kernel_size, "kernel_size"), (dilation, "dilation"),
                                                 (padding, "padding"), (stride, "stride")))
    return _convops.Im2col.apply(input, k, d, ((p[0], p[0]), (p[1], p[1])), s)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """(N, C*kh*kw, L) -> (N, C, H, W), or unbatched (C*kh*kw, L) -> (C, H, W): the columns added back into their
    windows (col2im)."""
    _check_blocks(input, 2, "2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                            "dimensions")
    named = ((output_size, "output_size"), (kernel_size, "kernel_size"), (dilation, "dilation"),
             (padding, "padding"), (stride, "stride"))
    size, k, d, p, s = (_pair(v, name) for v, name in named)
    if input.shape[-2] % (k[0] * k[1]):
        raise RuntimeError(f"fold: Expected size of input's dimension 1 to be divisible by the product of "
                           f"kernel_size, but got input.size(1)={input.shape[-2]} and kernel_size={k}")
    blocks = [(size[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(2)]
    if blocks[0] * blocks[1] != input.shape[-1]:
        raise RuntimeError(f"Given output_size={size}, kernel_size={k}, dilation={d}, padding={p}, stride={s}, "
                           f"expected size of input's dimension 2 to match the calculated number of sliding blocks "
                           f"{blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but got input.size(2)="
                           f"{input.shape[-1]}.")
    return _convops.Col2im.apply(input, size, k, d, ((p[0], p[0]), (p[1], p[1])), s)


def _check_blocks(input, unbatched, expected):
    """unfold's and fold's input: `unbatched` dims or one more for a batch, none of them empty but the batch"""
    dims = input.shape[input.ndim - unbatched:] if input.ndim in (unbatched, unbatched + 1) else ()
    if not dims or 0 in dims:
        raise RuntimeError(f"Expected {expected} for input, but got: {list(input.shape)}")


def _pair(v, name):
    """an int or a pair of ints, with torch's error for another length (unfold's and fold's arguments)"""
    if isinstance(v, (tuple, list)):
        if len(v) != 2:
            raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(v)}")
        return tuple(int(x) for x in v)
    return (int(v),) * 2


# ---- pooling --------------------------------------------------------------------------------
def _pool_pads(sizes, kernel, stride, padding, dilation, ceil_mode, op, shape_check=None, channels=None):
    """((lo, hi), ...) per spatial dim: hi grows in ceil_mode so that the last window fits. The arguments are checked
    first, then shape_check() if given (torch checks the input's shape there), then the output's size (channels: the
    input's, which torch's error names)."""
    for k, s, p in zip(kernel, stride, padding):
        if k <= 0 or s <= 0:
            raise RuntimeError(f"{op}: kernel_size and stride should be greater than zero, but got kernel_size={k} "
                               f"and stride={s}")
        if p < 0:
            raise RuntimeError(f"{op}: pad must be non-negative, but got pad: {p}")
        if p > k // 2:  # torch compares with the kernel size, dilation or not
            raise RuntimeError(f"{op}: pad should be at most half of kernel size, but got pad={p} and "
                               f"kernel_size={k}; lower the padding or widen the kernel")
    if shape_check is not None:
        shape_check()
    pads, outs, small = [], [], False
    for size, k, s, p, d in zip(sizes, kernel, stride, padding, dilation):
        span = size + 2 * p - d * (k - 1) - 1
        out = (span + (s - 1 if ceil_mode else 0)) // s + 1
        if ceil_mode and (out - 1) * s >= size + p:
            out -= 1
        small = small or out <= 0 or span < 0 and not op.startswith("max")  # (a max pool's ceil_mode window may
        outs.append(out)                                                   # hang over)
        pads.append((p, p + max(0, (out - 1) * s + d * (k - 1) + 1 - (size + 2 * p))))
    if small:
        raise _output_too_small(op, tuple(sizes), tuple(kernel), outs, channels)
    return tuple(pads)


def _output_too_small(op, sizes, kernel, outs, channels):
    """torch's error for a pool whose window does not fit its (padded) input, in each kernel's words"""
    if op == "max_pool1d":
        return RuntimeError(f"max_pool1d() Invalid computed output size: {outs[-1]}")
    if op == "avg_pool3d":
        return RuntimeError(f"input image (T: {sizes[0]} H: {sizes[1]} W: {sizes[2]}) smaller than kernel size (kT: "
                            f"{kernel[0]} kH: {kernel[1]} kW: {kernel[2]})")
    given = "x".join(str(n) for n in (channels,) + sizes)
    return RuntimeError(f"Given input size: ({given}). Calculated output size: ({'x'.join(map(str, [channels] + outs))}"
                        f"). Output size is too small ({op}: widen the input or pad it, or shrink the kernel)")


def _max_pool_input(input, spatial, op):
    """_check_dims, refusing what torch's max pools refuse: an empty dim other than the batch"""
    _check_dims(input, spatial, op)
    if 0 in tuple(input.shape)[-spatial - 1:]:
        raise RuntimeError(f"{op}: Expected input's non-batch dimensions to have positive length, but input has a "
                           f"shape of {list(input.shape)}; only the batch dim (of a batched input) may be empty")


def _no_max_pool_kernel(x, op, kernel=None, kinds="bc"):
    """torch's NotImplementedError for a dtype its max pool kernels lack (numpy kinds: b bool, c complex, i/u
    integer), raised after the shape checks as torch's. kernel: the name torch's message gives, when not op's."""
    kind = x._data.dtype.kind
    if kind in kinds:
        word = {"b": "bool", "c": "complex"}.get(kind, "integer")
        raise NotImplementedError(f'"{kernel or op}" not implemented for \'{_NAMES[x._data.dtype.name]}\': torch\'s '
                                  f"{op} has no kernel for {word} tensors; convert the input first, e.g. x.float()")


def _max_pool2d_planes(x, k, s, padding, d, ceil_mode, op="max_pool2d", kernel=None, kinds="bc", shown=None):
    """(max, indices) of x, (N, C, H, W) or (C, H, W): the shapes checked first, then the dtype, as torch. shown: the
    arguments as torch's node shows them, when not as the op takes them (see ops/conv.py's show_max_pool)"""
    pads = _pool_pads(x.shape[-2:], k, s, padding, d, ceil_mode, op, channels=x.shape[-3])
    _no_max_pool_kernel(x, op, kernel, kinds)
    return _convops.MaxPool2d.apply(x, k, s, pads, d, shown or (k, s, tuple(padding), d, bool(ceil_mode)))


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    _max_pool_input(input, 2, "max_pool2d")  # (an unbatched input goes to the op as is: torch's node takes it)
    k = _tuple(kernel_size, 2, "kernel_size", "max_pool2d")
    s = _tuple(stride if stride not in (None, []) else k, 2, "stride", "max_pool2d")
    d = _tuple(dilation, 2, "dilation", "max_pool2d")
    shown = (_given(kernel_size, 2), () if stride in (None, []) else _given(stride, 2), _given(padding, 2),
             _given(dilation, 2), bool(ceil_mode))
    out, idx = _max_pool2d_planes(input, k, s, _tuple(padding, 2, "padding", "max_pool2d"), d, ceil_mode, shown=shown)
    return (out, idx) if return_indices else out


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    _max_pool_input(input, 1, "max_pool1d")
    one = lambda v: (1,) + _tuple(v, 1, "argument", "max_pool1d")  # noqa: E731
    # torch pools with indices through max_pool2d's kernel; without, through one that has no integer version
    kernel, kinds = ("max_pool2d", "bc") if return_indices else ("max_pool1d_impl", "bciu")
    out, idx = _max_pool2d_planes(input.unsqueeze(-2), one(kernel_size), one(stride if stride not in (None, []) else
                                  kernel_size), (0,) + _tuple(padding, 1, "padding", "max_pool1d"), one(dilation),
                                  ceil_mode, "max_pool1d", kernel, kinds)
    out, idx = out.squeeze(-2), idx.squeeze(-2)
    return (out, idx) if return_indices else out


def _avg_pool2d_checks(x, k, s, p, ceil_mode, divisor_override, op):
    """torch's checks of avg_pool2d in its order: the divisor, the arguments, the input's shape (a dim other than the
    batch empty), the output's, then the dtype. Returns the pads."""
    if divisor_override == 0:
        raise RuntimeError(f"{op}: divisor must be not zero")

    def nonempty():
        if 0 in tuple(x.shape)[-3:]:
            raise RuntimeError(f"{op}: Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for "
                               f"input, but got:{list(x.shape)}")
    pads = _pool_pads(x.shape[-2:], k, s, p, (1, 1), ceil_mode, op, nonempty, x.shape[-3])
    dt = x._data.dtype
    if dt.kind in "bc" or dt.kind in "iu" and dt != np.int64:  # (torch's kernels: floating point and int64)
        raise NotImplementedError(f'{op}: "avg_pool2d" not implemented for \'{_NAMES[dt.name]}\': convert the '
                                  "input first, e.g. x.float()")
    return pads


def _avg_pool2d(input, k, s, p, ceil_mode, count_include_pad, divisor_override, op, shown=None):
    """avg_pool2d of (N, C, H, W) or, unbatched, (C, H, W), which goes to the op as is (torch's node takes it).
    shown: the arguments as torch's node shows them, when not as the op takes them (see ops/conv.py's show_avg_pool)"""
    pads = _avg_pool2d_checks(input, k, s, p, ceil_mode, divisor_override, op)
    h, w = input.shape[-2:]
    if divisor_override:
        divisor = np.asarray(divisor_override, dtype=input.dtype.np)
    else:  # how many elements each window covers (padding counted or not, never the ceil_mode overhang)
        if count_include_pad:
            ones = np.ones((1, 1, h + 2 * p[0], w + 2 * p[1]), dtype=input.dtype.np)
            extra = ((0, pads[0][1] - p[0]), (0, pads[1][1] - p[1]))
        else:
            ones, extra = np.ones((1, 1, h, w), dtype=input.dtype.np), pads
        divisor = _convops._im2col(ones, k, (1, 1), extra, s).sum(axis=1)[0]
    return _convops.AvgPool2d.apply(input, k, s, pads, divisor, shown or (k, s, p, bool(ceil_mode),
                                                                          bool(count_include_pad), divisor_override))


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    _check_dims(input, 2, "avg_pool2d")
    k = _tuple(kernel_size, 2, "kernel_size", "avg_pool2d")
    s = _tuple(stride if stride not in (None, []) else k, 2, "stride", "avg_pool2d")
    p = _tuple(padding, 2, "padding", "avg_pool2d")
    shown = (_given(kernel_size, 2), () if stride in (None, []) else _given(stride, 2), _given(padding, 2),
             bool(ceil_mode), bool(count_include_pad), divisor_override)
    return _avg_pool2d(input, k, s, p, ceil_mode, count_include_pad, divisor_override, "avg_pool2d", shown)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """avg_pool2d of height 1, as torch's (whose checks name the (N, C, 1, L) or (C, 1, L) input)"""
    _check_dims(input, 1, "avg_pool1d")
    k = _tuple(kernel_size, 1, "kernel_size", "avg_pool1d")
    s = _tuple(stride if stride not in (None, []) else k, 1, "stride", "avg_pool1d")
    p = _tuple(padding, 1, "padding", "avg_pool1d")
    out = _avg_pool2d(input.unsqueeze(-2), (1,) + k, (1,) + s, (0,) + p, ceil_mode, count_include_pad, None,
                      "avg_pool1d")
    return out.squeeze(-2)


# ---- embedding and normalisation ------------------------------------------------------------
def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    """weight[input]: row i of weight for every index i in input."""
    idx = input._data if isinstance(input, Tensor) else np.asarray(input)
    if idx.dtype != np.int64 and idx.dtype != np.int32:  # (kept as they are: torch's node saves int32 indices)
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {input.type()} instead (while checking arguments for embedding); "
                           "convert the indices with .long()")
    if weight.ndim != 2:
        raise RuntimeError(f"embedding: 'weight' must be 2-D (num_embeddings, embedding_dim), got {weight.ndim}-D")
    n = weight.shape[0]
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise IndexError(f"index out of range in self (embedding has {n} rows, got index "
                         f"{int(idx.max()) if idx.max() >= n else int(idx.min())})")
    if padding_idx is not None:
        if not -n <= padding_idx < n:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx %= n
    if sparse:
        raise NotImplementedError("embedding: sparse gradients are not supported by microtorch (it has no sparse "
                                  "tensors); leave sparse=False for a dense gradient")
    if max_norm is not None:  # torch renormalises the looked-up rows of weight in place
        rows = np.unique(idx)
        w = weight._data
        norms = np.linalg.norm(w[rows], ord=norm_type, axis=1) if norm_type != 2 else \
            np.sqrt((w[rows] ** 2).sum(axis=1))
        scale = np.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        w[rows] *= scale[:, None].astype(w.dtype)
        weight._version_counter[0] += 1
    return _convops.Embedding.apply(weight, idx, padding_idx, bool(scale_grad_by_freq))


_BATCHED_STATS = (  # (torch's words, under vmap)
    "Batch norm got a batched tensor as input while the running_mean or running_var, which will be updated in place, "
    "were not batched.\nIf you are using a module and do not need eval mode, please set `track_running_stats` to be "
    "False.If you are using a prebuilt module and do not need eval mode, please see the functorch website for "
    "resources on how to patch your module to work with vmap")


def _check_batch_norm(input, running_mean, running_var, weight, bias, training, eps):
    """torch's checks in its order: F.batch_norm's (the batch, eps), then ATen's (sizes, the statistics eval
    needs, the input's dtype, both statistics or neither, the parameters' dtypes)"""
    if input.ndim < 2:
        raise ValueError(f"batch_norm: expected 2D or more input (N, C, ...), got {input.ndim}D")
    c = input.shape[1]
    if training and input.numel() // c == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {input.shape} "
                         "(batch_norm takes each channel's statistics over the batch: give it more examples)")
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    named = (("running_mean", running_mean), ("running_var", running_var), ("weight", weight), ("bias", bias))
    for name, t in named:
        if isinstance(t, Tensor) and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()} (batch_norm: one per channel, "
                               "dim 1)")
        if t is None and not training and name.startswith("running"):
            raise RuntimeError(f"{name} must be defined in evaluation mode (batch_norm with training=False uses the "
                               "running statistics)")
    from ..ops.normalization import check_dtypes
    check_dtypes("batch_norm", "batch_norm", input)
    if (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be None or neither be None (batch_norm)")
    check_dtypes("batch_norm", "batch_norm", input, weight, bias, running_mean, running_var)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """(x - mean) / sqrt(var + eps) * weight + bias over the last len(normalized_shape) dims."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if not shape:
        raise RuntimeError("layer_norm: Expected normalized_shape to be at least 1-dimensional, i.e., containing at "
                           "least one element, but got normalized_shape = []; give the sizes of the last dims to "
                           "normalize over, e.g. x.shape[-1:]")
    if tuple(input.shape[input.ndim - len(shape):]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape [*, "
                           f"{', '.join(map(str, shape))}], but got input of size{list(input.shape)}")
    from ..ops.normalization import check_dtypes, native_layer_norm  # one node, as torch (vmap: func/_rules_nn.py)
    check_dtypes("layer_norm", "LayerNormKernelImpl", input, weight, bias)
    return native_layer_norm(input, shape, weight, bias, eps)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """Normalise each channel (dim 1) by the batch's statistics (training) or the running ones (eval);
    in training the running statistics are updated in place."""
    _check_batch_norm(input, running_mean, running_var, weight, bias, training, eps)
    c = input.shape[1]
    if input.numel() == 0:  # (torch's shortcut: no statistics to take or update)
        out = input.clone()
        out = out * weight[0] if weight is not None else out
        return out + bias[0] if bias is not None else out
    dims = (0,) + tuple(range(2, input.ndim))
    bshape = (1, c) + (1,) * (input.ndim - 2)
    if all(t is None or type(t._data) is np.ndarray for t in (input, weight, bias)):
        from ..ops.normalization import native_batch_norm  # one node, as torch (vmap's batches: below)
        return native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)
    if training:
        count = input.numel() // c
        mean = input.mean(dims, keepdim=True)
        centered = input - mean
        var = (centered * centered).mean(dims, keepdim=True)
        out = centered * (var + eps).rsqrt()
        if running_mean is not None:
            if type(running_mean._data) is np.ndarray or type(running_var._data) is np.ndarray:
                raise RuntimeError(_BATCHED_STATS)
            m = 0.1 if momentum is None else momentum
            rm, rv = running_mean._data, running_var._data
            rm[...] = (1 - m) * rm + m * mean._data.reshape(c)
            rv[...] = (1 - m) * rv + m * var._data.reshape(c) * (count / (count - 1))
    else:
        rm = Tensor._make(running_mean._data.reshape(bshape).astype(input.dtype.np, copy=False))
        rv = Tensor._make(running_var._data.reshape(bshape).astype(input.dtype.np, copy=False))
        out = (input - rm) * (rv + eps).rsqrt()
    if weight is not None:
        out = out * weight.reshape(bshape)
    if bias is not None:
        out = out + bias.reshape(bshape)
    return out


from ..ops._checks import guard_namespace as _guard_namespace  # noqa: E402
_guard_namespace(globals())  # an argument of the wrong type raises torch's TypeError (see ops/_checks.py)

from .._api_errors import clean_namespace as _clean_namespace  # noqa: E402
_clean_namespace(globals(), [  # the API added for issue 13 (internal errors become torch's kind, naming the op)
    "celu", "celu_", "elu_", "glu", "hardshrink", "hardsigmoid", "hardswish", "hardtanh", "hardtanh_", "leaky_relu_",
    "logsigmoid", "mish", "prelu", "relu6", "relu_", "rrelu", "rrelu_", "selu", "selu_", "silu", "softmin",
    "softshrink", "softsign", "tanhshrink", "threshold", "threshold_", "cosine_embedding_loss", "cosine_similarity",
    "gaussian_nll_loss", "hinge_embedding_loss", "huber_loss", "kl_div", "margin_ranking_loss",
    "multilabel_soft_margin_loss", "normalize", "pairwise_distance", "poisson_nll_loss", "smooth_l1_loss",
    "soft_margin_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss", "pad", "alpha_dropout",
    "dropout1d", "dropout2d", "dropout3d", "feature_alpha_dropout"])

# nn2: normalisations and attention (ops/norm_more.py, ops/attention.py)
from ..ops.norm_more import group_norm, rms_norm  # noqa: E402,F401
from ._functional_norm import instance_norm, local_response_norm  # noqa: E402,F401
from ..ops.attention import multi_head_attention_forward, scaled_dot_product_attention  # noqa: E402,F401
from ..ops.loss_more import (ctc_loss, linear_cross_entropy, multi_margin_loss,  # noqa: E402,F401
                             multilabel_margin_loss)
from ..ops.nn_more import (assert_int_or_pair, bilinear, conv_tbc, embedding_bag, gumbel_softmax,  # noqa: E402,F401
                           pdist)
_NN2 = ["group_norm", "instance_norm", "local_response_norm", "rms_norm", "multi_head_attention_forward",
        "scaled_dot_product_attention", "ctc_loss", "multi_margin_loss", "multilabel_margin_loss", "bilinear",
        "embedding_bag", "gumbel_softmax", "pdist", "linear_cross_entropy", "conv_tbc"]
from ..ops._torch_order import torch_checked as _torch_checked  # noqa: E402
_PARSED = {  # the arguments torch's C++ parser types before the op runs (the others are checked in torch's order)
    "scaled_dot_product_attention": dict(query="tensor", key="tensor", value="tensor", attn_mask="tensor",
                                         dropout_p="number", is_causal="bool", scale="number", enable_gqa="bool"),
    "bilinear": dict(input1="tensor", input2="tensor", weight="tensor", bias="tensor"),
    "pdist": dict(input="tensor", p=None),
    "conv_tbc": dict(input="tensor", weight="tensor", bias="tensor", pad="int"),
    "rms_norm": dict(input="tensor", normalized_shape="shape_tuple", weight="tensor", eps="number"),
}
for _name in _NN2:  # (not guard_namespace: these check their arguments in torch's order themselves)
    globals()[_name] = _torch_checked(globals()[_name], _name, _PARSED.get(_name))
_clean_namespace(globals(), _NN2)
# nn1: the spatial part of issue 13 (3-d and transposed conv, pooling, unpooling, interpolate, shuffles, grids)
from ..ops.conv_more import ConvolutionNd as _conv_nd  # noqa: E402
from ._functional_spatial import *  # noqa: E402,F401,F403
from ._functional_resample import *  # noqa: E402,F401,F403
from ._functional_interp import *  # noqa: E402,F401,F403



def _method_like(fn, method):
    """torch's F.softmax(x) is x.softmax(...): what is not a tensor has no such method (torch's AttributeError, not a
    TypeError naming the argument). The parameters are the function's own, so a wrong call is Python's error at the
    user's line."""
    def call(input, dim=None, _stacklevel=3, dtype=None):
        if not isinstance(input, Tensor) and not hasattr(input, method):
            raise AttributeError(f"'{type(input).__name__}' object has no attribute '{method}'")
        return fn(input, dim, _stacklevel, dtype)
    call.__name__, call.__qualname__, call.__doc__, call.__wrapped__ = fn.__name__, fn.__qualname__, fn.__doc__, fn
    return call


softmax, log_softmax, softmin = (_method_like(softmax, "softmax"), _method_like(log_softmax, "log_softmax"),
                                 _method_like(softmin, "softmax"))
