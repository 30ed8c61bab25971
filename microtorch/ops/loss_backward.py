"""The backward of the pointwise losses as one op each, as torch computes it (mse_loss_backward,
smooth_l1_loss_backward, huber_loss_backward, soft_margin_loss_backward, binary_cross_entropy_backward): a
gradient taken with create_graph=True shows torch's node (MseLossBackwardBackward0...) with edges to the incoming
gradient, the input and the target, and that node's own derivatives are torch's double-backward formulas, composed
of ops as torch's C++ composes them (its Scalar overloads: DivBackward1 for a division by the element count)."""
import numpy as np

from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ._loop_lanes import scalar_lanes
from ._op import Op, plain, unrecorded
from .elementwise import div_scalar
from .scalar_overloads import add_scalar, mul_scalar, scalar_minus


_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
REDUCTION_CODES = {"none": 0, "mean": 1, "sum": 2}  # (torch's Reduction enum: what grad_fn._saved_reduction shows)


def _norm(x, reduction, scale=1.0):
    """torch's factor in x's dtype: scale/numel for 'mean' (inf for an empty x, as torch's double division), else
    scale"""
    return x.dtype.type((scale / x.size if x.size else np.inf) if reduction == "mean" else scale)


def _sign(d):
    """+1 above 0, else -1 (torch's vectorised kernels choose so: an exact 0 gets -1, never reached there)"""
    return np.where(d > 0, d.dtype.type(1), d.dtype.type(-1))


class _LossBackward(Op):
    """g * slope(x, y) * norm as one node. Its derivatives: in g, the same op of the incoming gradient (summed to
    g's shape by the engine); in x, torch's double backward `curvature(gg * g, x, y)`; in y, minus that (the loss
    depends on x - y: the target's gradient is this op with x and y swapped). Subclasses give `values` (numpy, torch's
    vectorised kernel) and `curvature` (Tensor ops)."""
    _saved_names = ("grad_output", "self", "target")
    _saved_values = {"reduction": "reduction_code"}
    _ones_times_gg = False

    @staticmethod
    def forward(ctx, g, x, y, reduction="mean", bound=1.0):
        ctx.reduction, ctx.bound, ctx.reduction_code = reduction, bound, REDUCTION_CODES[reduction]
        ctx.save_for_backward(g, x, y)
        return _torch_values(ctx._forward_cls, g, x, y, reduction, bound)

    @staticmethod
    def backward(ctx, gg):
        g, x, y = ctx.saved_tensors
        cls, need = ctx._forward_cls, ctx.needs_input_grad
        dg = cls.of_grad_output(gg, g, x, y, ctx.reduction, ctx.bound) if need[0] else None
        dx = cls.curvature(gg * g, x, y, ctx.reduction, ctx.bound) if need[1] or need[2] else None
        return dg, dx if need[1] else None, -dx if need[2] else None

    @classmethod
    def of_grad_output(cls, gg, g, x, y, reduction, bound):
        """d/dg: the same op of gg (summed to g's shape by the engine); for huber's and soft_margin's 'mean' and
        'sum' (their *_double_backward_grad_output) the op of ones, times gg, summed"""
        if not cls._ones_times_gg or reduction == "none":
            return cls.apply(gg, x, y, reduction=reduction, bound=bound)
        ones = Tensor._make(np.ones(g._data.shape, g._data.dtype))
        return (cls.apply(ones, x, y, reduction=reduction, bound=bound) * gg).sum()

    @staticmethod
    def jvp(ctx, tg, tx, ty):  # (torch's: the curvature of each tangent, their difference, plus the op of tg)
        g, x, y = ctx.inputs[:3]
        cls, r, b = ctx._forward_cls, ctx.reduction, ctx.bound
        return cls.curvature(tx * g, x, y, r, b) - cls.curvature(ty * g, x, y, r, b) + \
            cls.apply(tg, x, y, reduction=r, bound=b)


def loss_grads(cls, ctx, grad, x, y, bound=1.0):
    """(d/dx, d/dy) of a pointwise loss whose backward op is cls, each where needed: torch's
    loss_backward(grad, self, target) and loss_backward(grad, target, self)"""
    need = ctx.needs_input_grad
    return (_one(cls, grad, x, y, ctx.reduction, bound) if need[0] else None,
            _one(cls, grad, y, x, ctx.reduction, bound) if need[1] else None)


def loss_jvp(cls, ctx, tx, ty, bound=1.0):
    """torch's forward-mode rule of a pointwise loss whose backward op is cls: that op of each tangent (an input
    without one gives zeros to it: 0 * inf is NaN there, as torch's), added, then reduced"""
    x, y = ctx.inputs[:2]
    d = _one(cls, tx, x, y, "none", bound) + _one(cls, ty, y, x, "none", bound)
    return d.mean() if ctx.reduction == "mean" else d.sum() if ctx.reduction == "sum" else d


def _one(cls, g, a, b, reduction, bound):
    if unrecorded(g) and unrecorded(a) and unrecorded(b):  # (no node to make: the values alone)
        return plain(_torch_values(cls, g._data, a._data, b._data, reduction, bound))
    return cls.apply(g, a, b, reduction=reduction, bound=bound)


def _torch_values(cls, g, x, y, reduction, bound):
    """cls's values as torch's loop computes them: the vector formula (`values`), and where the class has a scalar
    one that rounds differently (`scalar_values`), that one on the elements torch's loop leaves to it (each row's
    tail, and strided operands: _loop_lanes.py)"""
    out = cls.values(g, x, y, reduction, bound).astype(x.dtype, copy=False)
    if not hasattr(cls, "scalar_values") or out.dtype not in (_F32, _F64) or not out.size:
        return out
    at = scalar_lanes(out.shape, out.itemsize, (g, x, y))
    if at is None or not at.size:
        return out
    out = np.ascontiguousarray(out)

    def picked(a):
        return np.broadcast_to(a, out.shape).reshape(-1)[at]
    out.reshape(-1)[at] = cls.scalar_values(picked(g), picked(x), picked(y), _norm(x, reduction), bound)
    return out


def _inside(x, y, bound):
    """1 where |x - y| < bound, else 0, in x's dtype (a constant)"""
    return Tensor._make((np.abs(x._data - y._data) < bound).astype(x._data.dtype))


def _per_element(h, x, reduction):
    return div_scalar(h, x.numel()) if reduction == "mean" else h  # (torch's `/= numel`: DivBackward1)


class MseLossBackward(_LossBackward):
    """g * 2 (x - y) * norm;  d/dx = 2 g norm (torch's mse_loss_double_backward)"""
    _grad_fn_name = "MseLossBackwardBackward0"

    @staticmethod
    def values(g, x, y, reduction, _bound):
        return _norm(x, reduction, 2.0) * (x - y) * g  # (torch's factor, then its order)

    @staticmethod
    def curvature(h, x, y, reduction, _bound):
        return _per_element(mul_scalar(h, 2), x, reduction)


class SmoothL1LossBackward(_LossBackward):
    """g * clamp((x - y) / beta, -1, 1) * norm;  d/dx = g / beta inside (-beta, beta), else 0"""
    _grad_fn_name = "SmoothL1LossBackwardBackward0"
    _saved_values = {"beta": "bound", "reduction": "reduction_code"}

    @staticmethod
    def values(g, x, y, reduction, beta):
        d = x - y
        slope = np.where(np.abs(d) >= x.dtype.type(beta), _sign(d), d / x.dtype.type(beta))
        return _norm(x, reduction) * slope * g

    @staticmethod
    def scalar_values(g, x, y, norm, beta):
        """torch's scalar loop: -norm g, norm g, or norm d g / beta, the division and comparisons in double"""
        d = x - y
        inside = (norm * d * g).astype(np.float64) / beta
        return np.where(d <= -beta, -norm * g, np.where(d >= beta, norm * g, inside.astype(d.dtype)))

    @staticmethod
    def curvature(h, x, y, reduction, beta):  # (torch's smooth_l1_loss_double_backward)
        return _per_element(div_scalar(h * _inside(x, y, beta), beta), x, reduction)


class HuberLossBackward(_LossBackward):
    """g * clamp(x - y, -delta, delta) * norm;  d/dx = g inside (-delta, delta), else 0"""
    _grad_fn_name = "HuberLossBackwardBackward0"
    _saved_values = {"delta": "bound", "reduction": "reduction_code"}
    _ones_times_gg = True

    @staticmethod
    def values(g, x, y, reduction, delta):
        d = x - y
        c = x.dtype.type(delta)
        return _norm(x, reduction) * np.where(np.abs(d) >= c, _sign(d) * c, d) * g

    @staticmethod
    def scalar_values(g, x, y, norm, delta):
        """torch's scalar loop: -norm g delta, norm g delta (times delta in double), or norm d g"""
        d = x - y
        outer = ((norm * g).astype(np.float64) * delta).astype(d.dtype)
        return np.where(d <= -delta, -outer, np.where(d >= delta, outer, norm * d * g))

    @staticmethod
    def curvature(h, x, y, reduction, delta):  # (torch's huber_loss_double_backward)
        return _per_element(h * _inside(x, y, delta), x, reduction)


class SoftMarginLossBackward(_LossBackward):
    """-g y z / (1 + z) * norm, z = exp(-y x);  d/dx = g y^2 z / (1 + z)^2 (torch's soft_margin_loss_double_backward);
    the target is not differentiable (no edge)"""
    _grad_fn_name = "SoftMarginLossBackwardBackward0"
    _edges = (0, 1)
    _ones_times_gg = True

    @staticmethod
    def values(g, x, y, reduction, _bound):
        z = -y * x  # (float32: e^z correctly rounded, computed in float64: torch's exp op is MKL's, nearly always so)
        z = np.exp(z.astype(np.float64)).astype(_F32) if z.dtype == _F32 else np.exp(z)
        return y * z * -_norm(x, reduction) / (z + 1) * g

    @staticmethod
    def curvature(h, x, y, reduction, _bound):
        z = (x * -y).exp()
        zplus1 = z + 1
        return _per_element(h * (y * y) * z / (zplus1 * zplus1), x, reduction)

    @staticmethod
    def jvp(ctx, *tangents):  # (torch has no forward-mode formula for it: forward over reverse raises there)
        raise NotImplementedError("Trying to use forward AD with soft_margin_loss_backward that does not support it "
                                  "because it has not been implemented yet. (torch 2.13 has no forward-mode formula "
                                  "for it either: take this second derivative with reverse mode, "
                                  "autograd.grad(..., create_graph=True))")


_BCE_EPS = 1e-12  # (the shift and clamp of torch's double-backward formulas)
_BCE_KERNEL_EPS = float(np.float32(1e-12))  # (its first-order kernel's floor of p (1 - p): a float constant there)


class BinaryCrossEntropyBackward(Op):
    """g (p - y) / max(p (1 - p), eps) * w * norm as one node (torch's binary_cross_entropy_backward); its
    derivatives are torch's three double-backward formulas, composed as torch composes them (below). The weight
    has no edge: torch differentiates neither loss in it."""
    _grad_fn_name = "BinaryCrossEntropyBackwardBackward0"
    _saved_names = ("grad_output", "self", "target", "weight")
    _saved_values = {"reduction": "reduction_code"}
    _edges = (0, 1, 2)

    @staticmethod
    def forward(ctx, g, p, y, w=None, reduction="mean"):
        ctx.reduction, ctx.reduction_code = reduction, REDUCTION_CODES[reduction]
        ctx.save_for_backward(g, p, y, w)
        return BinaryCrossEntropyBackward.values(g, p, y, w, reduction)

    @staticmethod
    def values(g, p, y, w, reduction):
        """torch's kernel: g (p - y) / max((1 - p) p, eps), then times w, then divided by the count"""
        one = p.dtype.type(1)
        out = g * (p - y) / np.maximum((one - p) * p, p.dtype.type(_BCE_KERNEL_EPS))
        out = out if w is None else out * w
        return (out / p.size if reduction == "mean" else out).astype(p.dtype, copy=False)

    @staticmethod
    def backward(ctx, gg):
        g, p, y, w = ctx.saved_tensors
        need, r = ctx.needs_input_grad, ctx.reduction
        return (_bce_grad_output_part(gg, p, y, w, r) if need[0] else None,
                _bce_input_part(g, gg, p, y, w, r) if need[1] else None,
                _bce_target_part(gg, g, p, w, r) if need[2] else None, None)

    @staticmethod
    def jvp(ctx, tg, tp, ty, _tw):
        g, p, y, w = ctx.inputs[:4]
        r = ctx.reduction
        return _bce_input_part(g, tp, p, y, w, r) + _bce_target_part(ty, g, p, w, r) + \
            _bce_grad_output_part(tg, p, y, w, r)


def bce_input_grad(g, p, y, w, reduction):
    """d bce / d p: torch's one op, or its values alone where nothing records"""
    if unrecorded(g) and unrecorded(p) and unrecorded(y):
        return plain(BinaryCrossEntropyBackward.values(g._data, p._data, y._data, None if w is None else w._data,
                                                       reduction))
    return BinaryCrossEntropyBackward.apply(g, p, y, w, reduction=reduction)


def bce_target_grad(g, p, w, reduction):
    """d bce / d y = -logit(p) g w norm (torch's binary_cross_entropy_target_backward, composed)"""
    out = -p.logit() * g
    return _bce_scaled(out, w, reduction, p)


def _bce_scaled(out, w, reduction, p):
    """out times the weight, then divided by the element count for 'mean' (torch's in-place mul_ and div_)"""
    out = out if w is None else out * w
    return div_scalar(out, p.numel()) if reduction == "mean" else out


def _bce_input_part(g, gg, p, y, w, reduction):
    """torch's binary_cross_entropy_double_backward: gg g (p^2 - 2 p y + y) / ((p + eps)^2 (1 - p + eps)^2)"""
    top = p * p - mul_scalar(p, 2) * y + y
    bottom = add_scalar(p, _BCE_EPS).pow(2) * add_scalar(scalar_minus(1, p), _BCE_EPS).pow(2)
    return _bce_scaled(top / bottom * (gg * g), w, reduction, p)


def _bce_target_part(gg, g, p, w, reduction):
    """torch's binary_cross_entropy_double_backward_target: -gg g / (p (1 - p)), the denominator clamped at eps
    outside the graph (torch clamps it in place under no_grad: its derivative is the unclamped one)"""
    out = -gg * g
    out = out if w is None else out * w
    denom = scalar_minus(1, p) * p
    with no_grad():
        denom.clamp_min_(_BCE_EPS)
    out = out / denom
    return div_scalar(out, p.numel()) if reduction == "mean" else out


def _bce_grad_output_part(gg, p, y, w, reduction):
    """torch's binary_cross_entropy_double_backward_grad_output: gg (p - y) / ((p + eps) (1 - p + eps))"""
    out = (p - y) / (add_scalar(p, _BCE_EPS) * add_scalar(scalar_minus(1, p), _BCE_EPS)) * gg
    return _bce_scaled(out, w, reduction, p)
