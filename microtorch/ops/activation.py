"""Activation functions beyond relu/sigmoid/tanh: hard and shrink families, selu/celu, mish, silu,
logsigmoid, glu, prelu, rrelu. Each is one Function with its derivative beside it; where torch's backward is an
op of its own (HardswishBackwardBackward0...), so is ours, so that a gradient's graph has torch's nodes."""
import numpy as np

from .. import _kernel_exp, _kernel_log, _libm_f32
from .._fma import fma32
from .._tensor import Tensor
from ._op import Op, plain, shown_dim, unrecorded
from ._kernels import _NAMES
from ._layout import laid_out_as_input
from ._range_kernels import _thread_chunks
from .elementwise import (GradTimesLocal, LeakyReluBackward, ThresholdBackward, _exp_as_torch, _select, _unary,
                          div_scalar, elu_backward, where, zeros_like_)
from ._memory_formats import in_layout_of
from .reduce import c_order
from .scalar_overloads import add_scalar, scalar_minus, sub_scalar


def _mask(cond, like):
    """A 0/1 tensor of like's dtype (a constant: no gradient flows through a comparison)."""
    return Tensor._make(np.asarray(cond, dtype=like._data.dtype))


def _kept(g, cond):
    """g where cond, else +0.0, as torch's hardtanh and threshold backward select (g * mask would make an inf
    gradient nan and a negative one -0.0 where cond is False): in numpy where nothing records, else `where`."""
    if unrecorded(g):
        return plain(_select(cond, g._data))
    return where(Tensor._make(np.asarray(cond)), g, 0.0)


def _tails_pass_nan(cond, g, x):
    """cond (where the gradient g passes) of a backward whose vector formula drops a NaN x (a mask of comparisons
    that a NaN fails), with NaN passed where torch's loop runs its scalar formula instead (`(x <= lo || x >= hi) ?
    0 : g`, which a NaN passes): each row's tail, and all of a layout the vector loop does not take (hardtanh's and
    the shrinks' kernels, in 64-byte steps)."""
    nan = np.isnan(x)
    if not nan.any():
        return cond
    return cond | (nan & ~_kernel_exp.lane_mask(x, _thread_chunks, np.asarray(g), step_bytes=64))


def _kept_as(node, g, x, cond, shown):
    """backward's _kept(g, cond), recorded as torch's node (HardtanhBackwardBackward0...: a selection with
    edges to g and x, whose own gradient is the same selection), which shows the activation's arguments"""
    if unrecorded(g):
        return plain(_select(cond, g._data))
    return node.apply(g, x, np.asarray(cond), shown=shown)


class HardtanhBackward(GradTimesLocal):
    """hardtanh's backward, whose node shows min_val and max_val (shown: the pair)"""
    _grad_fn_name = "HardtanhBackwardBackward0"
    _saved_values = {"min_val": "lo", "max_val": "hi"}

    @staticmethod
    def forward(ctx, g, x, local, shown):
        ctx.lo, ctx.hi = shown
        return GradTimesLocal.forward(ctx, g, x, local, shown)


class ShrinkBackward(GradTimesLocal):
    """softshrink's backward, whose node shows lambd"""
    _grad_fn_name = "SoftshrinkBackwardBackward0"
    _saved_values = {"lambd": "shown"}


class HardshrinkBackward(ShrinkBackward):
    _grad_fn_name = "HardshrinkBackwardBackward0"


class HardsigmoidBackward(Op):
    """hardsigmoid's backward g/6 on (-3, 3), else 0, as one node: torch has no derivative for it (its node is
    NotImplemented, which raises when it runs, with an edge to each input that requires grad)"""
    _grad_fn_name = "torch::autograd::NotImplemented"

    @classmethod
    def apply(cls, g, x):
        return super().apply(*(t if t._requires_grad else t._data for t in (g, x)))

    @staticmethod
    def forward(ctx, g, x):
        return HardsigmoidBackward.values(g, x)

    @staticmethod
    def values(g, x):  # (torch's kernel: g times 1/6 rounded to float32, selected on (-3, 3))
        return np.where((x > -3) & (x < 3), g * g.dtype.type(_ONE_SIXTH), 0).astype(g.dtype, copy=False)

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("derivative for aten::hardsigmoid_backward is not implemented")

    @staticmethod
    def jvp(ctx, *tangents):
        raise NotImplementedError("Trying to use forward AD with aten::hardsigmoid_backward that does not support it.")


_ONE_SIXTH = float(np.float32(1 / 6))  # torch's hardsigmoid backward uses 1/6 rounded to float32


class _BackwardOp(Op):
    """An activation's backward g f'(x) as one op of its own (torch's hardswish_backward...): its derivative in g
    is the same op, in x torch's double-backward formula `_curvature(g gg, x)`; a tangent takes both. `kept`: more
    tensors torch's op takes and its node keeps (logsigmoid's buffer), passed on, with no gradient"""
    _saved_names = ("grad_output", "self")

    @staticmethod
    def forward(ctx, g, x, *kept):
        ctx.save_for_backward(g, x, *kept)
        return ctx._forward_cls.values(g, x)

    @staticmethod
    def backward(ctx, gg):
        g, x, *kept = ctx.saved_tensors
        op = ctx._forward_cls
        return (op.apply(gg, x, *kept) if ctx.needs_input_grad[0] else None,
                op._curvature(gg * g, x) if ctx.needs_input_grad[1] else None, *(None for _ in kept))

    @staticmethod
    def jvp(ctx, tg, tx, *_):
        g, x, *kept = ctx.inputs
        op = ctx._forward_cls
        return op.apply(tg, x, *kept) + op._curvature(tx * g, x)


class HardswishBackward(_BackwardOp):
    """hardswish's backward: g (x/3 + 1/2) on (-3, 3), g from 3 on, 0 below; d/dx = g gg / 3 on (-3, 3)"""
    _grad_fn_name = "HardswishBackwardBackward0"

    @staticmethod
    def values(g, x):  # (torch's kernel: its scalar formula; its vector one gives NaN at a NaN x, in 128-byte steps)
        out = np.where(x <= -3, 0, np.where(x < 3, g * (x / 3 + 0.5), g)).astype(g.dtype, copy=False)
        nan = np.isnan(x)
        if nan.any():
            out = np.where(nan & _kernel_exp.lane_mask(x, _thread_chunks, g), np.asarray(np.nan, out.dtype), out)
        return out

    @staticmethod
    def _curvature(h, x):  # (torch's: where(-3 < x < 3, h / 3, 0))
        inside = Tensor._make((x._data > -3) & (x._data < 3))
        return where(inside, div_scalar(h, 3.0), 0.0)


class LogSigmoidBackward(_BackwardOp):
    """logsigmoid's backward g (1 - sigmoid(x)); d/dx = g gg (sigmoid(x) - 1) sigmoid(x). Its node keeps the
    forward's buffer too, as torch's (values computes from x again)"""
    _grad_fn_name = "LogSigmoidBackwardBackward0"
    _saved_names = ("grad_output", "self", "buffer")
    _edges = (0, 1)  # (the buffer has none, as in torch)

    @staticmethod
    def values(g, x):
        """torch's kernel, from z = exp(-|x|) (its forward's buffer): (1 - z/(1+z)) g below 0, z/(1+z) g above"""
        z = _logsigmoid_buffer(x)
        below = x < 0
        one = x.dtype.type(1)
        return ((below * one) - np.where(below, one, -one) * (z / (one + z))) * g

    @staticmethod
    def _curvature(h, x):  # (torch's log_sigmoid_double_backward)
        z = x.sigmoid()
        return h * sub_scalar(z, 1) * z


def _mish_np(x):
    """x tanh(log1p(exp(x))); float32 as torch's kernel (SLEEF's exp, log1p and tanh on the vector lanes)"""
    if x.dtype == np.float32:
        return x * _softplus_tanh(x)
    return x * np.tanh(np.logaddexp(0, x))


def _softplus_tanh(x, *others):
    """tanh(log1p(exp(x))) of a float32 array as torch's mish kernels compute it (others: the kernel's other inputs)"""
    lanes = _kernel_exp.lane_mask(x, _thread_chunks, *others)
    return _kernel_exp.tanh(_kernel_log.log1p(_exp_as_torch(x, x, *others), lanes), lanes)


def _d_mish(g, x):
    """d x tanh(softplus(x)) = tanh(sp) + x sigmoid(x) (1 - tanh(sp)^2)  (torch's, term by term; outside
    create_graph, float32 as torch's kernel computes it, with its two fused steps)"""
    if x._data.dtype == np.float32 and g._data.dtype == np.float32 and unrecorded(g) and unrecorded(x):
        xd, gd, one = x._data, g._data, np.float32(1)
        s, t = one / (one + _exp_as_torch(-xd, xd, gd)), _softplus_tanh(xd, gd)
        return plain(gd * fma32(xd * s, fma32(-t, t, one), t))
    s, t = x.sigmoid(), x.exp().log1p().tanh()
    return g * (t + x * s * scalar_minus(1.0, t * t))


def _d_silu(g, x):
    """d x sigmoid(x) = s (1 + x (1 - s))  (torch's, term by term; outside create_graph, float32 as torch's kernel
    computes it, 1 + x (1 - s) fused)"""
    if x._data.dtype == np.float32 and g._data.dtype == np.float32 and unrecorded(g) and unrecorded(x):
        xd, one = x._data, np.float32(1)
        s = one / (one + _exp_as_torch(-xd, xd, g._data))
        return plain(g._data * s * fma32(xd, one - s, one))
    s = x.sigmoid()
    return g * s * add_scalar(x * scalar_minus(1.0, s), 1.0)


def _hardsigmoid_np(x):
    return np.clip(x + 3, 0, 6) / 6


def _logsigmoid_np(x):
    """min(x, 0) - log1p(exp(-|x|)); float32 as torch's kernel, SLEEF's exp and log1p on every element (its loop
    takes each thread's tail as a partial vector)"""
    if x.dtype == np.float32:
        return np.asarray(np.minimum(x, np.float32(0)) - _kernel_log.log1p_vector(_logsigmoid_buffer(x)), order="C")
    # (torch's kernel works on x made contiguous; + 0.0: its 0 - log1p(0) is +0 where -logaddexp gives -0)
    return np.asarray(-np.logaddexp(0, -x) + 0.0, order="C")


def _logsigmoid_buffer(x):
    """torch's buffer exp(-|x|), which its backward reads (float32: SLEEF's exp)"""
    return _kernel_exp.expf(-np.abs(x)) if x.dtype == np.float32 else np.exp(-np.abs(x))


Hardsigmoid = _unary("Hardsigmoid", _hardsigmoid_np, fused=HardsigmoidBackward)
Hardswish = _unary("Hardswish", lambda x: x * np.clip(x + 3, 0, 6) / 6, fused=HardswishBackward)  # (torch's order)
Mish = _unary("Mish", _mish_np, formula=_d_mish)
Silu = _unary("Silu", lambda x: x / (1 + _exp_as_torch(-x, x)), formula=_d_silu)
_LogSigmoidOp = _unary("LogSigmoid", _logsigmoid_np, fused=LogSigmoidBackward, relaid=False)  # (C order)


class LogSigmoid(_LogSigmoidOp):
    """log sigmoid(x); its node also saves torch's buffer, exp(-|x|), from which torch's backward computes (ours
    computes it again there, from x)"""
    _grad_fn_name = "LogSigmoidBackward0"
    _saved_names = ("self", "buffer")

    @staticmethod
    def forward(ctx, x):
        out = _LogSigmoidOp.forward(ctx, x)
        ctx.save_for_backward(x, np.asarray(_logsigmoid_buffer(x)))
        return out

    @staticmethod
    def backward(ctx, grad):
        x, buffer = ctx.saved_tensors
        return plain(LogSigmoidBackward.values(grad._data, x._data)) if unrecorded(grad) and unrecorded(x) else \
            LogSigmoidBackward.apply(grad, x, buffer)


LogSigmoid._pack_order = (0, 1)  # (torch's buffer is a result of its op: packed after self, not by name)


class Hardtanh(Op):
    """clamp(x, lo, hi);  d = 1 on (lo, hi), else 0"""
    _grad_fn_name = "HardtanhBackward0"
    _saved_names, _saved_values = ("self",), {"min_val": "lo", "max_val": "hi"}

    @staticmethod
    def forward(ctx, x, min_val=-1.0, max_val=1.0):
        ctx.lo, ctx.hi = min_val, max_val
        ctx.save_for_backward(x)
        return in_layout_of(np.clip(x, min_val, max_val).astype(x.dtype, copy=False), x)  # (torch's: empty_like(x))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return _kept_as(HardtanhBackward, grad, x,
                        _tails_pass_nan((x._data > ctx.lo) & (x._data < ctx.hi), grad._data, x._data), (ctx.lo, ctx.hi))

    @staticmethod
    def jvp(ctx, t):
        x = ctx.inputs[0]
        return _kept(t, _tails_pass_nan((x._data > ctx.lo) & (x._data < ctx.hi), t._data, x._data))


@laid_out_as_input
class Threshold(Op):
    """value where x <= threshold, else x;  d = 0 where x <= threshold, else 1 (a NaN x passes, as in torch)"""
    _grad_fn_name = "ThresholdBackward0"
    _saved_names, _saved_values = ("self",), {"threshold": "threshold"}

    @staticmethod
    def forward(ctx, x, threshold=0.0, value=0.0):
        ctx.threshold = threshold
        ctx.save_for_backward(x)
        return np.where(x <= threshold, np.asarray(value, x.dtype), x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        passes = ~(x._data <= ctx.threshold)  # (a NaN x passes)
        return _kept_as(ThresholdBackward, grad, x, passes, ctx.threshold)  # (as relu's)

    @staticmethod
    def jvp(ctx, t):
        return _kept(t, ~(ctx.inputs[0]._data <= ctx.threshold))


class ThresholdInPlace(Threshold):
    """threshold_ (in place): torch's node of the in-place form, which keeps the input as it was"""
    _grad_fn_name = "ThresholdBackward1"


@laid_out_as_input
class Softshrink(Op):
    """x - lambd sign(x) where |x| > lambd, else 0;  d = 1 where |x| > lambd"""
    _grad_fn_name = "SoftshrinkBackward0"
    _backward_node = ShrinkBackward
    _saved_names, _saved_values = ("self",), {"lambd": "lambd"}

    @staticmethod
    def forward(ctx, x, lambd=0.5):
        ctx.lambd = lambd
        ctx.save_for_backward(x)  # (NaN stays NaN, as torch's)
        outside = _outside(x, lambd)
        out = np.where(outside, np.where(x > lambd, x - lambd, x + lambd), 0).astype(x.dtype)
        return _scalar_tails_signed(out, x, outside)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return _kept_as(ctx._forward_cls._backward_node, grad, x,
                        _tails_pass_nan(np.abs(x._data) > ctx.lambd, grad._data, x._data), ctx.lambd)

    @staticmethod
    def jvp(ctx, t):
        x = ctx.inputs[0]
        return _kept(t, _tails_pass_nan(np.abs(x._data) > ctx.lambd, t._data, x._data))


def _scalar_tails_signed(out, x, outside):
    """softshrink's zeros as torch's loop makes them: +0.0 where its vector formula runs (a mask), x * 0 on each
    row's tail, where its scalar formula runs (-0.0 for a negative x; 64-byte steps, as its NaN gradient)."""
    negative_inside = ~outside & np.signbit(x)
    if not negative_inside.any():
        return out
    tails = negative_inside & ~_kernel_exp.lane_mask(x, _thread_chunks, step_bytes=64)
    return np.where(tails, x * 0, out) if tails.any() else out


def _outside(x, lambd):
    """where the shrinks pass x on: not in [-lambd, lambd], so NaN too, as torch's kernels"""
    return ~((x >= -lambd) & (x <= lambd))


@laid_out_as_input
class Hardshrink(Softshrink):
    """x where |x| > lambd, else 0;  d = 1 where |x| > lambd"""
    _grad_fn_name = "HardshrinkBackward0"
    _backward_node = HardshrinkBackward

    @staticmethod
    def forward(ctx, x, lambd=0.5):
        ctx.lambd = lambd
        ctx.save_for_backward(x)
        return np.where(_outside(x, lambd), x, 0).astype(x.dtype)


def _elu_np(x, alpha, scale, input_scale):
    """torch's kernel: x scale, or expm1(x input_scale) (alpha scale) where x <= 0, the coefficients in x's dtype
    (so -0.0 stays -0.0, and float32 rounds as torch's)"""
    c = x.dtype.type
    lanes = _kernel_exp.lane_mask(x, _thread_chunks)
    neg = _kernel_exp.expm1(np.where(x > 0, 0, x) * c(input_scale), lanes) * (c(alpha) * c(scale))
    return np.where(x > 0, x * c(scale), neg).astype(x.dtype, copy=False)


@laid_out_as_input
class ScaledElu(Op):
    """scale (x if x > 0 else alpha (exp(input_scale x) - 1));  d = scale, or scale alpha input_scale exp(input_scale x)"""
    _grad_fn_name = "EluBackward0"
    _saved_names, _saved_values = ("self",), {"alpha": "alpha", "scale": "scale", "input_scale": "input_scale"}

    @staticmethod
    def forward(ctx, x, alpha=1.0, scale=1, input_scale=1):  # (torch's defaults are ints)
        ctx.alpha, ctx.scale, ctx.input_scale = alpha, scale, input_scale
        ctx.save_for_backward(x)
        return _elu_np(x, alpha, scale, input_scale)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return elu_backward(grad, x, ctx.alpha, ctx.scale, ctx.input_scale)  # (EluBackwardBackward0 when recorded)

    @staticmethod
    def jvp(ctx, t):
        return elu_backward(t, ctx.inputs[0], ctx.alpha, ctx.scale, ctx.input_scale)


class Celu(ScaledElu):
    """max(0, x) + min(0, alpha (exp(x/alpha) - 1));  d = 1, or exp(x/alpha)"""
    _grad_fn_name = "CeluBackward0"
    _saved_values = {"alpha": "alpha"}

    @staticmethod
    def forward(ctx, x, alpha=1.0, scale=1, input_scale=1):
        out = ScaledElu.forward(ctx, x, alpha, scale, input_scale)
        ctx.input_scale = 1.0 / float(np.float32(alpha))  # (torch's backward reads alpha as a float here, as celu_'s)
        return out


class EluResult(Op):
    """elu_, selu_ and celu_ (in place): scale (x if x > 0 else alpha (exp(input_scale x) - 1)), whose node keeps
    the result, as torch's, and differentiates from it: d = scale, or input_scale (y + alpha scale)"""
    _grad_fn_name = "EluBackward1"
    _saved_names, _saved_values = ("result",), {"alpha": "alpha", "scale": "scale", "input_scale": "input_scale"}

    @staticmethod
    def forward(ctx, x, alpha=1.0, scale=1, input_scale=1):  # (torch's defaults are ints)
        ctx.alpha, ctx.scale, ctx.input_scale = alpha, scale, input_scale
        out = _elu_np(x, alpha, scale, input_scale)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return elu_backward(grad, y, ctx.alpha, ctx.scale, ctx.input_scale, is_result=True)

    @staticmethod
    def jvp(ctx, t):
        return elu_backward(t, ctx.output, ctx.alpha, ctx.scale, ctx.input_scale, is_result=True)


class CeluResult(EluResult):
    """celu_ (in place): elu with input_scale 1/alpha, from the result"""
    _grad_fn_name = "CeluBackward1"
    _saved_values = {"alpha": "alpha"}

    @staticmethod
    def forward(ctx, x, alpha=1.0):
        out = EluResult.forward(ctx, x, alpha, 1.0, 1.0 / alpha)
        ctx.input_scale = 1.0 / float(np.float32(alpha))  # (torch's backward reads alpha as a float here)
        return out


class LeakyReluResult(Op):
    """leaky_relu_ (in place): x if x > 0 else slope x, whose node keeps the result, as torch's (which refuses a
    negative slope there, in backward: the result's sign no longer tells the side)"""
    _grad_fn_name = "LeakyReluBackward1"
    _saved_names, _saved_values = ("result",), {"negative_slope": "slope"}

    @staticmethod
    def forward(ctx, x, negative_slope=0.01):
        ctx.slope = negative_slope
        out = np.where(x > 0, x, x * x.dtype.type(negative_slope))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        if ctx.slope < 0:
            raise RuntimeError(
                "In-place leakyReLu backward calculation is triggered with a negative slope which is not supported. "
                "This is caused by calling in-place forward function with a negative slope, please call "
                "out-of-place version instead. File an issue at https://github.com/pytorch/pytorch if you do "
                "require supporting in-place leakRelu backward calculation with negative slope")
        return LeakyReluBackward.apply(grad, y, np.where(y._data > 0, 1.0, ctx.slope), shown=ctx.slope)

    @staticmethod
    def jvp(ctx, t):
        y = ctx.output
        return t * Tensor._make(np.where(y._data > 0, 1.0, ctx.slope).astype(y._data.dtype))


def _glu_halves(x, dim):
    """(a, sigmoid(b)) for the halves a, b of x along dim; float32 as torch's kernels compute the sigmoid: 1 / (1 +
    e^-b), SLEEF's exp on the vector lanes of each row the halves leave contiguous, the C library's on its tail"""
    a, b = np.split(x, 2, axis=dim)
    if x.dtype != np.float32 or type(x) is not np.ndarray:
        return a, 1 / (1 + np.exp(-b))
    lanes = _kernel_exp.row_lane_mask(a.shape, dim % x.ndim, _thread_chunks)
    e = _kernel_exp.by_lanes(-b, lanes, _kernel_exp.expf, _libm_f32.expf)
    return a, np.float32(1) / (np.float32(1) + e)


class Glu(Op):
    """a sigmoid(b) for the halves a, b of x along dim;  d = (sigmoid(b), a sigmoid(b)(1 - sigmoid(b)))"""
    _grad_fn_name = "GluBackward0"
    _saved_names, _saved_values = ("self",), {"dim": "given_dim"}

    @staticmethod
    def forward(ctx, x, dim=-1, given_dim=-1):
        ctx.dim, ctx.given_dim = dim, shown_dim(given_dim)
        ctx.save_for_backward(x)
        a, s = _glu_halves(x, dim)
        return a * s

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        if unrecorded(grad) and unrecorded(x):
            return plain(GluBackward.values(grad._data, x._data, ctx.dim))
        return GluBackward.apply(grad, x, dim=ctx.dim)

    @staticmethod
    def jvp(ctx, t):
        from .shape import chunk
        a, b = chunk(ctx.inputs[0], 2, ctx.dim)
        ta, tb = chunk(t, 2, ctx.dim)
        s = b.sigmoid()
        return ta * s + a * s * (1 - s) * tb


class GluBackward(Op):
    """glu's backward as one node (torch's glu_backward): [g s, g a s (1 - s)] for the halves a, b of x and
    s = sigmoid(b); its derivatives are torch's glu_double_backward formulas"""
    _grad_fn_name = "GluBackwardBackward0"
    _saved_names, _saved_values = ("grad_output", "self"), {"dim": "dim"}

    @staticmethod
    def forward(ctx, g, x, dim=-1):
        ctx.dim = dim
        ctx.save_for_backward(g, x)
        return GluBackward.values(g, x, dim)

    @staticmethod
    def values(g, x, dim):  # (torch's kernel: s g, and (1 - s) s a g)
        a, s = _glu_halves(x, dim)
        return np.concatenate([s * g, (1 - s) * s * a * g], axis=dim)

    @staticmethod
    def backward(ctx, gg):
        g, x = ctx.saved_tensors
        dg = GluBackward._in_grad(gg, x, ctx.dim) if ctx.needs_input_grad[0] else None
        dx = GluBackward._in_input(gg, g, x, ctx.dim) if ctx.needs_input_grad[1] else None
        return dg, dx

    @staticmethod
    def jvp(ctx, tg, tx, *_dim):
        from .shape import cat
        g, x = ctx.inputs[:2]
        a, b, s, s_ds = GluBackward._halves(x, ctx.dim)
        n = a.shape[ctx.dim]
        ta, tb = tx.narrow(ctx.dim, 0, n), tx.narrow(ctx.dim, n, n)
        curvature = s_ds * scalar_minus(1, s) - s * s_ds  # d(s (1 - s))/db
        moved = cat([g * s_ds * tb, g * (ta * s_ds + a * tb * curvature)], ctx.dim)
        return GluBackward.apply(tg, x, dim=ctx.dim) + moved

    @staticmethod
    def _halves(x, dim):
        """a, b, s = sigmoid(b) and s (1 - s), as torch's double backward makes them"""
        n = x.shape[dim] // 2
        a, b = x.narrow(dim, 0, n), x.narrow(dim, n, n)
        s = b.sigmoid()
        return a, b, s, s * scalar_minus(1, s)

    @staticmethod
    def _in_grad(gg, x, dim):
        """torch's glu_double_backward_grad_output: (gg * glu_backward(ones, x)), its two halves added"""
        n = x.shape[dim] // 2
        shape = list(x.shape)
        shape[dim] = n
        ones = Tensor._make(np.ones(shape, x._data.dtype))
        tmp = gg * GluBackward.apply(ones, x, dim=dim)
        return tmp.narrow(dim, 0, n) + tmp.narrow(dim, n, n)

    @staticmethod
    def _in_input(gg, g, x, dim):
        """torch's glu_double_backward, term by term"""
        from .shape import cat
        a, b, s, s_ds = GluBackward._halves(x, dim)
        n = a.shape[dim]
        gg_a, gg_b = gg.narrow(dim, 0, n), gg.narrow(dim, n, n)
        gi_a = gg_b * g * s_ds
        second_order = s_ds * scalar_minus(1, s) - s * s_ds
        gi_b = gg_b * a * g * second_order + gg_a * g * s_ds
        return cat([gi_a, gi_b], dim)


class Prelu(Op):
    """x if x > 0 else w x (w per channel, dim 1);  d = (1 or w, x where x <= 0)"""
    _grad_fn_name = "PreluKernelBackward0"
    _saved_names = ("self", "weight")

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return in_layout_of(np.where(x > 0, x, w * x), x)  # (torch's: empty_like(x))

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        if unrecorded(grad) and unrecorded(x) and unrecorded(w):
            return tuple(plain(v) for v in PreluBackward.values(grad._data, x._data, w._data))
        return PreluBackward.apply(grad, x, w)

    @staticmethod
    def jvp(ctx, tx, tw):
        x, w = ctx.inputs
        pos = _mask(x._data > 0, x)
        return tx * (pos + (1 - pos) * w) + tw * (1 - pos) * x


class PreluBackward(Op):
    """prelu's backward as one node of two results (torch's _prelu_kernel_backward): (g, 0) where x > 0, else
    (w g, x g); its derivatives are torch's formulas, from the gradients of the results that are used (which
    take x >= 0 as the positive side, as torch's do)"""
    _grad_fn_name = "PreluKernelBackwardBackward0"
    _saved_names = ("grad_output", "self", "weight")

    @staticmethod
    def forward(ctx, g, x, w):
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(g, x, w)
        return PreluBackward.values(g, x, w)

    @staticmethod
    def values(g, x, w):  # (torch's kernel; the weight's gradient at x's shape, summed to w's by the engine)
        pos = x > 0
        return np.where(pos, g, w * g), np.where(pos, 0, x * g).astype(g.dtype, copy=False)

    @staticmethod
    def backward(ctx, gi, gw):
        g, x, w = ctx.saved_tensors
        pos = Tensor._make(x._data >= 0)
        dg = dx = dw = None
        if ctx.needs_input_grad[0]:
            if gi is None:
                dg = where(pos, 0.0, gw * x)
            else:
                dg = where(pos, gi, gi * w + gw * x if gw is not None else gi * w)
        if ctx.needs_input_grad[1]:
            dx = where(pos, 0.0, g * gw) if gw is not None else zeros_like_(x)
        if ctx.needs_input_grad[2]:
            dw = where(pos, 0.0, g * gi) if gi is not None else zeros_like_(x)
        return dg, dx, dw

    @staticmethod
    def jvp(ctx, tg, tx, tw):
        g, x, w = ctx.inputs
        pos = Tensor._make(x._data >= 0)
        return where(pos, tg, tg * w + g * tw), where(pos, 0.0, g * tx + tg * x)


class RreluBackward(GradTimesLocal):
    """rrelu's backward g * slopes, whose node keeps x (the in-place form's result) and the noise, and shows lower,
    upper and training, as torch's (shown: (noise, lower, upper, training))"""
    _grad_fn_name = "RreluWithNoiseBackwardBackward0"
    _saved_names = ("self", "noise")
    _saved_values = {"lower": "lower", "upper": "upper", "training": "training"}

    @staticmethod
    def forward(ctx, g, x, slopes, shown):
        noise, ctx.lower, ctx.upper, ctx.training = shown
        out = GradTimesLocal.forward(ctx, g, x, slopes, shown)
        ctx.save_for_backward(x, noise)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, _noise = ctx.saved_tensors  # (GradTimesLocal's, with the noise saved too)
        gg = RreluBackward.apply(grad, x, ctx.local, shown=ctx.shown) if ctx.needs_input_grad[0] else None
        gx = Tensor._make(np.zeros(*ctx._input_meta(1))) if ctx.needs_input_grad[1] else None
        return gg, gx, None


class RreluWithNoise(Op):
    """x if x > 0 else a x, a drawn per element from U(lower, upper) in training, (lower+upper)/2 in eval"""
    _grad_fn_name = "RreluWithNoiseBackward0"
    _saved_names = ("self", "noise")
    _saved_values = {"lower": "lower", "upper": "upper", "training": "training"}

    @staticmethod
    def forward(ctx, x, slopes=None, lower=1 / 8, upper=1 / 3, training=False):
        noise = RreluWithNoise._keep(ctx, x, slopes, lower, upper, training)
        ctx.save_for_backward(x, noise)  # (x: for the edge of its backward's node to x, as torch's)
        return c_order((x * slopes).astype(x.dtype))  # (torch's is allocated in C order, whatever x's layout)

    @staticmethod
    def _keep(ctx, x, slopes, lower, upper, training):
        """slopes: 1 where x > 0, the negative slope elsewhere. Returns torch's noise, which its node saves: the
        slopes in training, in eval mode left unfilled (zeros here)"""
        ctx.slopes, ctx.lower, ctx.upper, ctx.training = slopes, lower, upper, training
        return c_order(slopes.astype(x.dtype)) if training else np.zeros(x.shape, x.dtype)

    @staticmethod
    def backward(ctx, grad):
        x, noise = ctx.saved_tensors  # (the slopes, which ctx keeps, in the gradient's dtype)
        slopes = ctx.slopes.astype(grad._data.dtype)
        if unrecorded(grad):
            return plain(grad._data * slopes)
        return RreluBackward.apply(grad, x, slopes, shown=(noise._data, ctx.lower, ctx.upper, ctx.training))

    @staticmethod
    def jvp(ctx, t):
        return t * Tensor._make(ctx.slopes.astype(t._data.dtype))


class RreluResult(RreluWithNoise):
    """rrelu_ (in place): its node keeps the result, as torch's (the same slopes apply)"""
    _grad_fn_name = "RreluWithNoiseBackward1"
    _saved_names = ("result", "noise")

    @staticmethod
    def forward(ctx, x, slopes=None, lower=1 / 8, upper=1 / 3, training=False):
        noise = RreluWithNoise._keep(ctx, x, slopes, lower, upper, training)
        out = (x * slopes).astype(x.dtype)
        ctx.save_for_backward(out, noise)
        return out


def prelu(input, weight):
    if input.dtype is not weight.dtype:  # (torch's kernel computes in one dtype)
        raise RuntimeError(f"prelu: Type promoting not supported. Got {_NAMES[input._data.dtype.name]} and "
                           f"{_NAMES[weight._data.dtype.name]} (convert the input or the weight, e.g. x.to(w.dtype))")
    if weight.numel() != 1 and (input.ndim < 2 or weight.numel() != input.shape[1]):
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                           f"{weight.numel()} and channel size = {input.shape[1] if input.ndim > 1 else 1}.")
    # torch views the weight as (1, C, 1, ...) for an input of 2 dims or more (a ViewBackward0 in the graph)
    w = weight.reshape([1, weight.numel()] + [1] * (input.ndim - 2)) if input.ndim >= 2 else weight
    return Prelu.apply(input, w)
