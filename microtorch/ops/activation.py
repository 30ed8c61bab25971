"""Activation functions beyond relu/sigmoid/tanh: hard and shrink families, selu/celu, mish, silu,
logsigmoid, glu, prelu, rrelu. Each is one Function with its derivative beside it."""
import numpy as np

from .._tensor import Tensor
from ._op import Op, plain, unrecorded
from .elementwise import _select, _unary, where


def _mask(cond, like):
    """A 0/1 tensor of like's dtype (a constant: no gradient flows through a comparison)."""
    return Tensor._make(np.asarray(cond, dtype=like._data.dtype))


def _kept(g, cond):
    """g where cond, else +0.0, as torch's hardtanh and threshold backward select (g * mask would make an inf
    gradient nan and a negative one -0.0 where cond is False): in numpy where nothing records, else `where`."""
    if unrecorded(g):
        return plain(_select(cond, g._data))
    return where(Tensor._make(np.asarray(cond)), g, 0.0)


def _d_hardsigmoid(x):
    """d relu6(x + 3)/6 = 1/6 on (-3, 3), else 0"""
    return _mask((x._data > -3) & (x._data < 3), x) * _ONE_SIXTH


_ONE_SIXTH = float(np.float32(1 / 6))  # torch's hardsigmoid backward uses 1/6 rounded to float32


def _d_hardswish(x):
    """d x relu6(x + 3)/6 = 0 below -3, 1 above 3, (2x + 3)/6 between"""
    inside = _mask((x._data > -3) & (x._data < 3), x)
    return inside * (x * 2 + 3) / 6 + _mask(x._data >= 3, x)


def _d_mish(x):
    """d x tanh(softplus(x)) = tanh(sp) + x sigmoid(x) (1 - tanh(sp)^2)"""
    t = _softplus_t(x).tanh()
    return t + x * x.sigmoid() * (1 - t * t)


def _softplus_t(x):
    return where(x > 20, x, (x.exp() + 1).log())


def _d_silu(x):
    """d x sigmoid(x) = s (1 + x (1 - s))"""
    s = x.sigmoid()
    return s * (1 + x * (1 - s))


def _d_logsigmoid(x):
    """d log sigmoid(x) = 1 - sigmoid(x) = sigmoid(-x)"""
    return (-x).sigmoid()


def _hardsigmoid_np(x):
    return np.clip(x + 3, 0, 6) / 6


def _logsigmoid_np(x):
    return -np.logaddexp(0, -x)


Hardsigmoid = _unary("Hardsigmoid", _hardsigmoid_np, _d_hardsigmoid)
Hardswish = _unary("Hardswish", lambda x: x * _hardsigmoid_np(x), _d_hardswish)
Mish = _unary("Mish", lambda x: x * np.tanh(np.logaddexp(0, x)), _d_mish)
Silu = _unary("Silu", lambda x: x / (1 + np.exp(-x)), _d_silu)
LogSigmoid = _unary("LogSigmoid", _logsigmoid_np, _d_logsigmoid)


class Hardtanh(Op):
    """clamp(x, lo, hi);  d = 1 on (lo, hi), else 0"""
    _grad_fn_name = "HardtanhBackward0"

    @staticmethod
    def forward(ctx, x, min_val=-1.0, max_val=1.0):
        ctx.lo, ctx.hi = min_val, max_val
        ctx.save_for_backward(x)
        return np.clip(x, min_val, max_val).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return _kept(grad, (x._data > ctx.lo) & (x._data < ctx.hi))

    @staticmethod
    def jvp(ctx, t):
        x = ctx.inputs[0]
        return _kept(t, (x._data > ctx.lo) & (x._data < ctx.hi))


class Threshold(Op):
    """x where x > threshold, else value;  d = 1 where x > threshold"""
    _grad_fn_name = "ThresholdBackward0"

    @staticmethod
    def forward(ctx, x, threshold=0.0, value=0.0):
        ctx.threshold = threshold
        ctx.save_for_backward(x)
        return np.where(x > threshold, x, np.asarray(value, x.dtype))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return _kept(grad, x._data > ctx.threshold)

    @staticmethod
    def jvp(ctx, t):
        return _kept(t, ctx.inputs[0]._data > ctx.threshold)


class Softshrink(Op):
    """x - lambd sign(x) where |x| > lambd, else 0;  d = 1 where |x| > lambd"""
    _grad_fn_name = "SoftshrinkBackward0"

    @staticmethod
    def forward(ctx, x, lambd=0.5):
        ctx.lambd = lambd
        ctx.save_for_backward(x)
        return np.where(np.abs(x) > lambd, x - np.sign(x) * lambd, 0).astype(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return _kept(grad, np.abs(x._data) > ctx.lambd)

    @staticmethod
    def jvp(ctx, t):
        return _kept(t, np.abs(ctx.inputs[0]._data) > ctx.lambd)


class Hardshrink(Softshrink):
    """x where |x| > lambd, else 0;  d = 1 where |x| > lambd"""
    _grad_fn_name = "HardshrinkBackward0"

    @staticmethod
    def forward(ctx, x, lambd=0.5):
        ctx.lambd = lambd
        ctx.save_for_backward(x)
        return np.where(np.abs(x) > lambd, x, 0).astype(x.dtype)


class ScaledElu(Op):
    """scale (x if x > 0 else alpha (exp(input_scale x) - 1));  d = scale, or scale alpha input_scale exp(input_scale x)"""
    _grad_fn_name = "EluBackward0"

    @staticmethod
    def forward(ctx, x, alpha=1.0, scale=1.0, input_scale=1.0):
        ctx.alpha, ctx.scale, ctx.input_scale = alpha, scale, input_scale
        ctx.save_for_backward(x)
        neg = alpha * np.expm1(np.minimum(x, 0) * input_scale)
        return (scale * np.where(x > 0, x, neg)).astype(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * ScaledElu._local(ctx, x)

    @staticmethod
    def jvp(ctx, t):
        return t * ScaledElu._local(ctx, ctx.inputs[0])

    @staticmethod
    def _local(ctx, x):
        neg = (x * ctx.input_scale).exp() * (ctx.scale * ctx.alpha * ctx.input_scale)
        return where(x > 0, x * 0 + ctx.scale, neg)


class Celu(ScaledElu):
    """max(0, x) + min(0, alpha (exp(x/alpha) - 1));  d = 1, or exp(x/alpha)"""
    _grad_fn_name = "CeluBackward0"


class Glu(Op):
    """a sigmoid(b) for the halves a, b of x along dim;  d = (sigmoid(b), a sigmoid(b)(1 - sigmoid(b)))"""
    _grad_fn_name = "GluBackward0"

    @staticmethod
    def forward(ctx, x, dim=-1):
        ctx.dim = dim
        ctx.save_for_backward(x)
        a, b = np.split(x, 2, axis=dim)
        return a / (1 + np.exp(-b))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return Glu._local(x, grad, ctx.dim)

    @staticmethod
    def jvp(ctx, t):
        from .shape import chunk
        a, b = chunk(ctx.inputs[0], 2, ctx.dim)
        ta, tb = chunk(t, 2, ctx.dim)
        s = b.sigmoid()
        return ta * s + a * s * (1 - s) * tb

    @staticmethod
    def _local(x, grad, dim):
        from .shape import cat, chunk
        a, b = chunk(x, 2, dim)
        s = b.sigmoid()
        return cat([grad * s, grad * a * s * (1 - s)], dim)


class Prelu(Op):
    """x if x > 0 else w x (w per channel, dim 1);  d = (1 or w, x where x <= 0)"""
    _grad_fn_name = "PreluKernelBackward0"

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return np.where(x > 0, x, w * x)

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        pos = _mask(x._data > 0, x)
        return grad * (pos + (1 - pos) * w), grad * (1 - pos) * x

    @staticmethod
    def jvp(ctx, tx, tw):
        x, w = ctx.inputs
        pos = _mask(x._data > 0, x)
        return tx * (pos + (1 - pos) * w) + tw * (1 - pos) * x


class RreluWithNoise(Op):
    """x if x >= 0 else a x, a drawn per element from U(lower, upper) in training, (lower+upper)/2 in eval"""
    _grad_fn_name = "RreluWithNoiseBackward0"

    @staticmethod
    def forward(ctx, x, slopes=None):
        ctx.slopes = slopes  # 1 where x >= 0, the negative slope elsewhere
        return (x * slopes).astype(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        return grad * Tensor._make(ctx.slopes.astype(grad._data.dtype))

    @staticmethod
    def jvp(ctx, t):
        return t * Tensor._make(ctx.slopes.astype(t._data.dtype))


def prelu(input, weight):
    if weight.numel() != 1 and (input.ndim < 2 or weight.numel() != input.shape[1]):
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                           f"{weight.numel()} and channel size = {input.shape[1] if input.ndim > 1 else 1}.")
    w = weight.reshape([-1] + [1] * (input.ndim - 2)) if weight.numel() != 1 and input.ndim > 2 else weight
    return Prelu.apply(input, w)
