"""instance_norm: batch_norm applied to each (example, channel) on its own, and local_response_norm: an average
pool of squares over neighbouring channels, each composed as torch composes it."""
import numpy as np

from ..ops.normalization import check_dtypes
from .functional import batch_norm


def _instance_stats(x):
    """per-instance mean and unbiased variance, averaged over the batch (what the running stats get)"""
    flat = x.reshape(x.shape[0], x.shape[1], -1)
    n = flat.shape[-1]
    var = flat.var(-1) * (n / (n - 1)) if n > 1 else np.full(flat.shape[:2], np.nan, x.dtype)
    return flat.mean(-1).mean(0), var.mean(0)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """batch_norm of each (example, channel) on its own: the input is seen as one example with N*C channels."""
    if input.ndim < 3:
        raise ValueError(f"instance_norm: expected an input of 3 or more dimensions (N, C, *), got {input.ndim}D; "
                         "add a batch dimension with unsqueeze(0)")
    check_dtypes("instance_norm", "batch_norm", input, weight, bias)  # (torch takes statistics of any dtype)
    n, c = input.shape[:2]
    if int(np.prod(input.shape[2:])) <= 1 and use_input_stats:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {list(input.shape)}")
    rep = lambda v: None if v is None else v.repeat(n)  # noqa: E731
    x = input.reshape(1, n * c, *input.shape[2:])
    if use_input_stats:
        out = batch_norm(x, None, None, rep(weight), rep(bias), True, momentum, eps)
        if running_mean is not None:
            mean, var = _instance_stats(input._data)
            for buf, stat in ((running_mean, mean), (running_var, var)):
                buf._data[...] = (1 - momentum) * buf._data + momentum * stat
                buf._version_counter[0] += 1
    else:
        stats = [None if v is None else rep(v).to(input.dtype) for v in (running_mean, running_var)]
        out = batch_norm(x, *stats, rep(weight), rep(bias), False, momentum, eps)
    return out.view(input.shape)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """x / (k + alpha * mean of x^2 over `size` neighbouring channels) ** beta, composed as torch composes it (the
    squares padded along the channels and averaged by an avg_pool2d, or an avg_pool3d beyond 3 dims), so that the
    graph and its last bits are torch's."""
    from .functional import avg_pool2d, avg_pool3d, pad
    if input.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.ndim} dimensions)")
    if input.numel() == 0:
        return input
    if size < 1:
        raise RuntimeError(f"local_response_norm: size must be at least 1, got {size}")
    div = input.mul(input)
    if input.ndim == 3:
        div = pad(div.unsqueeze(1), (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.shape
        div = div.view(sizes[0], 1, sizes[1], sizes[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1).view(sizes)
    return input / div.mul(alpha).add(k).pow(beta)
