"""nn.functional's activations beyond relu/elu/gelu/softplus (re-exported by nn.functional)."""
import numpy as np

from .._random import _rng
from ..ops import activation as act
from ..ops.activation import prelu  # noqa: F401


def _run(input, fn, inplace, name):
    """fn(input), or written into input in place (with fn's grad_fn, as torch's in-place activations)."""
    if not inplace:
        return fn(input)
    from ..ops.inplace import apply_inplace
    return apply_inplace(input, fn, op=name + "_")


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val ({min_val}) cannot be greater than max_val ({max_val})")
    if input.dtype.name == "uint8" and (min_val < 0 or max_val < 0):
        raise RuntimeError(f"cannot do hardtanh on an unsigned type with negative limits (min_val={min_val}, "
                           f"max_val={max_val}); give limits of 0 or more, or convert the input, e.g. x.int()")
    return _run(input, lambda x: act.Hardtanh.apply(x, min_val=min_val, max_val=max_val), inplace, "hardtanh")


def hardtanh_(input, min_val=-1, max_val=1):
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input, inplace=False):  # (torch's relu6 is hardtanh from 0 to 6, as ints: its node shows them so)
    return _run(input, lambda x: act.Hardtanh.apply(x, min_val=0, max_val=6), inplace, "relu6")


def hardsigmoid(input, inplace=False):
    return _run(input, lambda x: act.Hardsigmoid.apply(x), inplace, "hardsigmoid")


def hardswish(input, inplace=False):
    return _run(input, lambda x: act.Hardswish.apply(x), inplace, "hardswish")


def silu(input, inplace=False):
    return _run(input, lambda x: act.Silu.apply(x), inplace, "silu")


def mish(input, inplace=False):
    return _run(input, lambda x: act.Mish.apply(x), inplace, "mish")


def logsigmoid(input):
    return act.LogSigmoid.apply(input)


_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def selu(input, inplace=False):  # (in place: torch's node keeps the result, EluBackward1)
    op = act.EluResult if inplace else act.ScaledElu
    return _run(input, lambda x: op.apply(x, alpha=_SELU_ALPHA, scale=_SELU_SCALE), inplace, "selu")


def selu_(input):
    return selu(input, inplace=True)


def celu(input, alpha=1.0, inplace=False):
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: celu's alpha cannot be 0 (it divides x)")
    if inplace:  # (torch's node keeps the result, CeluBackward1)
        return _run(input, lambda x: act.CeluResult.apply(x, alpha=alpha), True, "celu")
    return act.Celu.apply(input, alpha=alpha, input_scale=1.0 / alpha)


def celu_(input, alpha=1.0):
    return celu(input, alpha, inplace=True)


def threshold(input, threshold, value, inplace=False):
    return _threshold(input, threshold, value, inplace)


def threshold_(input, threshold, value):
    return _threshold(input, threshold, value, True)


def _threshold(input, limit, value, inplace):
    op = act.ThresholdInPlace if inplace else act.Threshold  # (torch's in-place node: ThresholdBackward1)
    return _run(input, lambda x: op.apply(x, threshold=limit, value=value), inplace, "threshold")


def softshrink(input, lambd=0.5):
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    return act.Softshrink.apply(input, lambd=lambd)


def hardshrink(input, lambd=0.5):
    return act.Hardshrink.apply(input, lambd=lambd)


def softsign(input):
    if input.dtype.name == "bool":  # torch's abs has no bool kernel
        raise NotImplementedError("\"abs_cpu\" not implemented for 'Bool' (softsign); convert with .float() first")
    return input / (input.abs() + 1)


def tanhshrink(input):
    return input - input.tanh()


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    from ..ops.nn import _softmax_dim, softmax
    d = _softmax_dim(input, dim, "softmin")  # (its dim is checked first, in softmin's name)
    return softmax(-input, d if dim is None else dim, dtype=dtype)  # (the dim as given: torch's node shows it so)


def glu(input, dim=-1):
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    from ..ops._op import normalize_dims
    axis = normalize_dims(dim, input.ndim, "glu")[0]
    if input.shape[axis] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {axis} is size {input.shape[axis]}")
    return act.Glu.apply(input, dim=axis, given_dim=dim)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    return rrelu_with_generator(input, lower, upper, training, inplace, None)


def rrelu_with_generator(input, lower, upper, training, inplace, generator):
    """rrelu drawing its slopes from `generator` (torch.rrelu and rrelu_ take one; F.rrelu does not)"""
    x = input._data
    slopes = np.where(x > 0, 1.0, (lower + upper) / 2)  # (torch: 0 takes the negative side's slope)
    if training:  # torch's kernel draws a double on [lower, upper) (the bounds in x's dtype) for each element at
        negative = x <= 0  # most 0 (not nan), in order, rounds it to x's dtype and multiplies x by it there
        low, high = float(x.dtype.type(lower)), float(x.dtype.type(upper))
        slopes = np.where(negative, 0.0, 1.0)
        slopes[negative] = _rng(generator).torch_uniform(np.float64, low, high, (int(negative.sum()),), fused=False)
    slopes = slopes.astype(x.dtype)
    op = act.RreluResult if inplace else act.RreluWithNoise  # (in place: torch's node keeps the result)
    return _run(input, lambda x: op.apply(x, slopes=slopes, lower=lower, upper=upper, training=training), inplace,
                "rrelu")


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    return rrelu_with_generator(input, lower, upper, training, True, generator)


def relu_(input):
    return input.relu_()


def elu_(input, alpha=1):  # (torch's node keeps the result, EluBackward1; its default alpha is an int)
    return _run(input, lambda x: act.EluResult.apply(x, alpha=alpha), True, "elu")


def leaky_relu_(input, negative_slope=0.01):  # (torch's node keeps the result, LeakyReluBackward1)
    from ..ops._checks import need_floating
    need_floating(input, "leaky_relu")
    return _run(input, lambda x: act.LeakyReluResult.apply(x, negative_slope=negative_slope), True, "leaky_relu")
