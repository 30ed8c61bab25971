"""Weight initialisations (in place, outside autograd), drawn from microtorch's global generator
(`microtorch.manual_seed`): after the same seed, the values are torch's (see _random.py)."""
import math
import warnings

import numpy as np

from .._meta import is_meta
from .._random import _rng, drawn_for


def _fill(tensor, values):
    if is_meta(tensor):  # a tensor without data (torch.device("meta")): nothing to fill, as in torch
        return tensor
    tensor._data[...] = np.asarray(values).astype(tensor._data.dtype, copy=False)
    tensor._version_counter[0] += 1
    return tensor


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for an activation: relu sqrt(2), tanh 5/3, leaky_relu sqrt(2/(1+a^2)), ..."""
    linear = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")
    if nonlinearity in linear or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = int(np.prod(tensor.shape[2:])) if tensor.ndim > 2 else 1
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """U(a, b)"""
    if is_meta(tensor):  # (no data, and no draw: the generator stays where it was, as in torch)
        return tensor
    rng = _rng(generator)
    return _fill(tensor, drawn_for(rng, tensor._data, lambda shape: rng.torch_uniform(tensor._data.dtype, a, b, shape)))


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """N(mean, std^2)"""
    if is_meta(tensor):  # (no data, and no draw, as uniform_)
        return tensor
    rng = _rng(generator)
    return _fill(tensor, drawn_for(rng, tensor._data, lambda shape: rng.torch_normal(tensor._data.dtype, mean, std,
                                                                                      shape)))


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """N(mean, std^2) truncated to [a, b], drawn as torch 2.13 draws it (so a seed gives torch's numbers): normal
    draws redrawn where they fall outside when most of the mass is inside, else uniform proposals on [a, b]
    accepted by the density (rejection sampling)."""
    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of values may "
                      "be incorrect.", stacklevel=2)
    if is_meta(tensor):  # (no data, and no draw, as uniform_)
        return tensor
    rng, dtype = _rng(generator), tensor._data.dtype
    return _fill(tensor, drawn_for(rng, tensor._data, lambda shape: _truncated(rng, dtype, shape, mean, std, a, b)))


def _truncated(rng, dtype, shape, mean, std, a, b):
    if _normal_cdf((b - mean) / std) - _normal_cdf((a - mean) / std) > 0.3:
        lo, hi = dtype.type(a), dtype.type(b)  # (torch compares with the bounds in the tensor's dtype)
        out = rng.torch_normal(dtype, mean, std, shape)
        while ((out < lo) | (out > hi)).any():  # (each round draws a whole tensor, as torch's where() does)
            out = np.where((out < lo) | (out > hi), rng.torch_normal(dtype, mean, std, shape), out)
        return out
    return _accepted_uniform(rng, dtype, shape, mean, std, a, b)


def _normal_cdf(x):
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


def _accepted_uniform(rng, dtype, shape, mean, std, a, b):
    """Uniform proposals on [a, b], each kept when log(u) < log(density / its peak), redrawn where not."""
    mode = max(a, min(mean, b))
    log_peak = -0.5 * ((mode - mean) / std) ** 2

    def log_density(x):  # (in the tensor's dtype, one rounding per step, as torch's in-place steps)
        return ((x - dtype.type(mean)) / dtype.type(std)) ** 2 * dtype.type(-0.5) - dtype.type(log_peak)
    out = rng.torch_uniform(dtype, a, b, shape)
    pending = np.log(rng.torch_uniform(dtype, 0.0, 1.0, shape)) > log_density(out)
    while pending.any():
        proposal = rng.torch_uniform(dtype, a, b, shape)
        out = np.where(pending, proposal, out)
        pending = np.where(pending, np.log(rng.torch_uniform(dtype, 0.0, 1.0, shape)) > log_density(proposal), pending)
    return out


def constant_(tensor, val):
    return _fill(tensor, val)


def ones_(tensor):
    return _fill(tensor, 1)


def zeros_(tensor):
    return _fill(tensor, 0)


def eye_(tensor):
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _fill(tensor, np.eye(*tensor.shape))


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out))"""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = gain * math.sqrt(6.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))"""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """U(-b, b) with b = gain * sqrt(3 / fan); nn.Linear uses a=sqrt(5), i.e. b = 1/sqrt(fan_in)"""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op")
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """N(0, std^2) with std = gain / sqrt(fan)"""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op")
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))
    return normal_(tensor, 0.0, std, generator)


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """A 2-D tensor drawn from N(0, std^2), then in each column ceil(sparsity * rows) entries zeroed, the rows chosen by
    a random permutation per column (torch's draws, in its order)."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    from .._creation import randperm
    from ..autograd.grad_mode import no_grad
    rows, cols = tensor.shape
    zeros = int(math.ceil(sparsity * rows))
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        for col in range(cols):
            tensor[randperm(rows, generator=generator)[:zeros], col] = 0
    return tensor


def orthogonal_(tensor, gain=1, generator=None):
    """A (semi-)orthogonal matrix (rows flattened past dim 0), from the QR factors of a normal draw."""
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0 or is_meta(tensor):  # (a meta tensor: no data, and no draw, as uniform_)
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = _rng(generator).torch_normal(tensor._data.dtype, 0.0, 1.0, (rows, cols))  # (torch's draw, in its dtype)
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))  # makes Q uniform over the orthogonal group
    if rows < cols:
        q = q.T
    return _fill(tensor, (q * gain).reshape(tuple(tensor.shape)))


def dirac_(tensor, groups=1):
    """The identity of a convolution: out channel i copies in channel i (per group) at the kernel's centre."""
    if tensor.ndim not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    n = min(out_per_group, sizes[1])
    values = np.zeros(tuple(sizes))
    centre = tuple(s // 2 for s in sizes[2:])
    for g in range(groups):
        for d in range(n):
            values[(g * out_per_group + d, d) + centre] = 1
    return _fill(tensor, values)


def _deprecated(new):
    """torch's old names without the trailing underscore: they warn and call the new one."""
    old = new.__name__[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old}` is now deprecated in favor of `nn.init.{new.__name__}`.", FutureWarning,
                      stacklevel=2)
        return new(*args, **kwargs)
    deprecated_init.__name__ = old
    deprecated_init.__doc__ = f"{old}(...): deprecated, use nn.init.{new.__name__}"
    return deprecated_init


uniform, normal, constant, eye, dirac = (_deprecated(f) for f in (uniform_, normal_, constant_, eye_, dirac_))
xavier_uniform, xavier_normal = _deprecated(xavier_uniform_), _deprecated(xavier_normal_)
kaiming_uniform, kaiming_normal = _deprecated(kaiming_uniform_), _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
