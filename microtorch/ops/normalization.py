"""Layer and batch normalization as one op each, as torch records them (NativeLayerNormBackward0,
NativeBatchNormBackward0), whose backward is the formula below (written in Tensor ops, so that a double backward
differentiates it); and the checks torch's CPU kernels make of the input's and parameters' dtypes."""
import math

import numpy as np

from .._tensor import Tensor
from ..autograd.grad_mode import is_grad_enabled
from .._fma import fma
from .._quiet import quietly
from . import _batch_norm_kernels as _bn, _moments_kernel as moments_kernel
from . import _layer_norm_backward as ln_backward
from ._op import Op, plain
from .reduce import c_order
from .inplace import _type_name

_REDUCED = (np.dtype(np.float16),)  # (torch's Half and BFloat16: parameters may be float32 for them)


def check_dtypes(op, kernel, input, *params):
    """torch's CPU normalization kernels: a floating input, and each parameter (weight, bias, statistics) of the
    input's dtype, or float32 for a float16 input (then the result is float16, computed in float32)."""
    dt = input._data.dtype
    if dt.kind != "f":
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_type_name(dt)}\' ({op} needs a floating '
                                  "input: convert it with .float())")
    for p in params:
        if p is None or p._data.dtype == dt or dt in _REDUCED and p._data.dtype == np.float32:
            continue
        if p._data.dtype == np.float32:
            raise RuntimeError(f"mixed dtype (CPU): all inputs must share same datatype. ({op}: the input is "
                               f"{_type_name(dt)}, a parameter Float: convert one of them, e.g. input.float())")
        raise RuntimeError(f"mixed dtype (CPU): expect parameter to have scalar type of Float ({op}: a parameter is "
                           f"{_type_name(p._data.dtype)} where the input is {_type_name(dt)}: give weight, bias and "
                           "the running statistics the input's dtype)")


class NativeLayerNorm(Op):
    """y = (x - mean) * rstd * weight + bias over the last dims, rstd = 1 / sqrt(var + eps) (var biased);
    dx = rstd (g - mean(g) - x^ mean(g x^)), g = dy * weight, x^ = (x - mean) rstd; dweight = sum(dy x^), dbias = sum(dy)"""
    _grad_fn_name = "NativeLayerNormBackward0"
    _edges = (0, 1, 2)  # (torch's node has an edge for weight and bias, None where there is none)
    _saved_names = ("input", "weight", "bias", "result1", "result2")  # (result1: the mean, result2: rstd)
    _saved_values = {"normalized_shape": "normalized_shape"}

    @staticmethod
    def forward(ctx, x, weight, bias, normalized_shape, eps):
        ctx.normalized_shape, ctx.eps = normalized_shape, eps
        mean, var = _row_moments(x, len(normalized_shape))
        rstd = (1 / np.sqrt(var + eps)).astype(x.dtype, copy=False)
        centered = x - mean
        if bias is not None:  # (torch's kernels add the bias in one multiply-add)
            out = fma(centered * rstd, weight, bias) if weight is not None else fma(centered, rstd, bias)
            out = out.astype(x.dtype, copy=False)
        else:  # (a missing bias is added as 0: -0.0 becomes 0.0)
            out = (centered * rstd * weight if weight is not None else centered * rstd) + 0.0
        ctx.save_for_backward(x, weight, bias, mean, rstd)
        return c_order(out)  # (torch normalizes a C-ordered copy)

    @staticmethod
    def backward(ctx, grad):
        x, weight, bias, mean, rstd = ctx.saved_tensors
        if _by_kernel(grad) and ln_backward.applies(grad._data, x._data, weight._data if weight is not None else None):
            return _layer_norm_grads_like_torch(ctx, grad, x, weight, bias, mean, rstd)
        n = len(ctx.normalized_shape)
        dims, batch = tuple(range(x.ndim - n, x.ndim)), tuple(range(x.ndim - n))
        if x.requires_grad and is_grad_enabled():  # a double backward: mean and rstd as the functions of x they are
            mean = x.mean(dims, keepdim=True)
            rstd = (((x - mean) * (x - mean)).mean(dims, keepdim=True) + ctx.eps).rsqrt()
        x_hat = (x - mean) * rstd
        gx = gw = gb = None
        if ctx.needs_input_grad[0]:
            gx = _layer_norm_dx(grad * weight if weight is not None else grad, x, mean, rstd, dims)
        if ctx.needs_input_grad[1]:
            gw = (grad * x_hat).sum(batch) if batch else grad * x_hat
        if ctx.needs_input_grad[2]:
            gb = grad.sum(batch) if batch else grad
        return gx, gw, gb, None, None

    @staticmethod
    def jvp(ctx, tx, tw, tb, _shape, _eps):
        """(tx - mean(tx) - x^ mean(tx x^)) rstd weight + x^ tw + tb (torch's layer_norm_jvp)"""
        x, weight = ctx.inputs[0], ctx.inputs[1]
        dims = tuple(range(x.ndim - len(ctx.normalized_shape), x.ndim))
        centered = x - x.mean(dims, keepdim=True)
        rstd = ((centered * centered).mean(dims, keepdim=True) + ctx.eps).rsqrt()
        x_hat = centered * rstd
        out = (tx - tx.mean(dims, keepdim=True) - x_hat * (tx * x_hat).mean(dims, keepdim=True)) * rstd
        out = out * weight if weight is not None else out
        out = out + x_hat * tw if tw is not None else out
        return out + tb if tb is not None else out


def _by_kernel(grad):
    """The gradients may come from torch's kernel (numpy, no graph): backward records nothing (no create_graph), and
    grad carries no tangent and no vmap batch. Listeners (the visualizer) do not change that, so the numbers a student
    sees are the same with it and without."""
    return not is_grad_enabled() and type(grad) is Tensor and type(grad._data) is np.ndarray and not grad._fw_grads


def _layer_norm_grads_like_torch(ctx, grad, x, weight, bias, mean, rstd):
    """NativeLayerNorm's gradients by torch's kernel (_layer_norm_backward.py), when nothing records them."""
    width = math.prod(ctx.normalized_shape)
    rows = lambda t: np.ascontiguousarray(t._data).reshape(-1, width)  # noqa: E731
    need = ctx.needs_input_grad[:3]
    dx, dgamma, dbeta = ln_backward.layer_norm_backward(
        rows(grad), rows(x), mean._data.reshape(-1), rstd._data.reshape(-1),
        weight._data.reshape(-1) if weight is not None else None, need)
    return (plain(dx.reshape(x.shape)) if dx is not None else None,
            plain(dgamma.reshape(weight.shape)) if dgamma is not None else None,
            plain(dbeta.reshape(bias.shape)) if dbeta is not None else None, None, None)


def _row_moments(x, k):
    """The mean and biased variance over x's last k dims (kept as size 1), torch's to the bit for float32 and float64
    (_moments_kernel.py: its Welford lanes)."""
    dims = tuple(range(x.ndim - k, x.ndim))
    keep = x.shape[:x.ndim - k] + (1,) * k
    if type(x) is np.ndarray and moments_kernel.applies(x):
        width = int(np.prod(x.shape[x.ndim - k:]))
        mean, var = moments_kernel.rowwise_moments(np.ascontiguousarray(x).reshape(-1, width))
        return mean.reshape(keep), var.reshape(keep)
    mean = x.mean(axis=dims, keepdims=True)
    centered = x - mean
    return mean, (centered * centered).mean(axis=dims, keepdims=True)


def _layer_norm_dx(g, x, mean, rstd, dims):
    """dx = rstd (g - mean(g) - x^ mean(g x^)), in torch's kernel's terms: a g + b x + c per row, a = rstd,
    b = (sum(g) mean - sum(g x)) rstd^3 / N, c = -b mean - sum(g) rstd / N (an inf in g makes the whole row NaN,
    as torch's; the centred form left some of it inf)"""
    n = math.prod(x.shape[d] for d in dims)
    ds, db = (g * x).sum(dims, keepdim=True), g.sum(dims, keepdim=True)
    b = (db * mean - ds) * rstd * rstd * rstd / n
    c = -b * mean - db * rstd / n
    return rstd * g + b * x + c


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """The normalized input (one NativeLayerNormBackward0 node); shapes already checked by the caller."""
    return NativeLayerNorm.apply(input, weight, bias, tuple(normalized_shape), float(eps))


class NativeBatchNorm(Op):
    """y = (x - mean) * invstd * weight + bias per channel (dim 1); in training mean and invstd are the batch's
    (then dx = invstd (g - mean(g) - x^ mean(g x^)), g = dy * weight), in eval the running statistics' (dx = g invstd);
    dweight = sum(dy x^), dbias = sum(dy) over every dim but the channel's"""
    _grad_fn_name = "NativeBatchNormBackward0"
    _edges = (0, 1, 2)  # (the running statistics and the batch's get no edge: nothing flows into them)
    _saved_names = ("input", "weight", "running_mean", "running_var", "result1", "result2")
    _saved_values = {"training": "training", "eps": "eps"}

    @staticmethod
    def forward(ctx, x, weight, bias, running_mean, running_var, mean, invstd, training, eps):
        ctx.training, ctx.eps = training, eps
        if training:
            ctx.save_for_backward(x, weight, running_mean, running_var, mean, invstd)
        else:  # torch's node keeps empty statistics in eval: the running ones (backward's) are kept here
            ctx.stats, empty = (mean, invstd), np.empty(0, mean.dtype)
            ctx.save_for_backward(x, weight, running_mean, running_var, empty, empty)
        if _bn.applies(x) and all(a is None or a.dtype == np.float32 for a in (weight, bias)):
            return _bn.normalized(x, mean, invstd, weight, bias)  # (torch's kernel, to the bit)
        shape = _channel_shape(x)
        out = (x - mean.reshape(shape)) * invstd.reshape(shape)
        if weight is not None:
            out = out * weight.reshape(shape)
        if bias is not None:
            out = out + bias.reshape(shape)
        return out.astype(x.dtype, copy=False)  # (a float16 input with float32 parameters: a float16 result)

    @staticmethod
    def backward(ctx, grad):
        x, weight, _rm, _rv, mean, invstd = ctx.saved_tensors
        if not ctx.training:
            mean, invstd = (Tensor._make(s) for s in ctx.stats)
        if ctx.training and _by_kernel(grad) and _bn.applies(x._data) and grad._data.dtype == np.float32 and \
                (weight is None or weight._data.dtype == np.float32):  # (torch's kernel, to the bit)
            dx, dw, db = _bn.training_backward(x._data, np.ascontiguousarray(grad._data), mean._data, invstd._data,
                                               weight._data if weight is not None else None, ctx.needs_input_grad[:3])
            return tuple(plain(g) if g is not None else None for g in (dx, dw, db)) + (None,) * 6
        shape, dims = _channel_shape(x), _reduced_dims(x)
        if ctx.training and x.requires_grad and is_grad_enabled():  # a double backward: the batch statistics as
            mean = x.mean(dims)                                      # the functions of x they are
            invstd = (((x - mean.reshape(shape)) ** 2).mean(dims) + ctx.eps).rsqrt()
        mean, invstd = mean.reshape(shape), invstd.reshape(shape)
        x_hat = (x - mean) * invstd
        gx = gw = gb = None
        if ctx.needs_input_grad[0]:
            g = grad * weight.reshape(shape) if weight is not None else grad
            gx = invstd * (g - g.mean(dims, keepdim=True) - x_hat * (g * x_hat).mean(dims, keepdim=True)) \
                if ctx.training else g * invstd
        if ctx.needs_input_grad[1]:
            gw = (grad * x_hat).sum(dims)
        if ctx.needs_input_grad[2]:
            gb = grad.sum(dims)
        return gx, gw, gb, None, None, None, None, None, None

    @staticmethod
    def jvp(ctx, tx, tw, tb, *_):
        x, weight = ctx.inputs[0], ctx.inputs[1]
        shape, dims = _channel_shape(x), _reduced_dims(x)
        mean, invstd = ctx.inputs[5].reshape(shape), ctx.inputs[6].reshape(shape)
        x_hat = (x - mean) * invstd
        out = (tx - tx.mean(dims, keepdim=True) - x_hat * (tx * x_hat).mean(dims, keepdim=True)) * invstd \
            if ctx.training else tx * invstd
        out = out * weight.reshape(shape) if weight is not None else out
        out = out + x_hat * tw.reshape(shape) if tw is not None else out
        return out + tb.reshape(shape) if tb is not None else out


def _channel_shape(x):
    return (1, -1) + (1,) * (x.ndim - 2)


def _reduced_dims(x):
    return (0,) + tuple(range(2, x.ndim))


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """Batch normalization as one NativeBatchNormBackward0 node. In training the running statistics are updated
    in place (with the unbiased variance) once the node has saved them, as torch's autograd saves its inputs before
    its kernel updates them (pack hooks see the values before the update), and as there their version stays: a graph
    that saved them is not invalidated by the next step's update (gradcheck calls forward many times). numpy is kept
    quiet for the statistics too (an inf in the batch: nan, without a warning)."""
    return quietly(_native_batch_norm, input, weight, bias, running_mean, running_var, training, momentum, eps)


def _native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    x, dims = input._data, _reduced_dims(input)
    if x.dtype in _REDUCED:  # (torch computes a float16 input's statistics in float32, and keeps them so)
        x = x.astype(np.float32)
    if training and _bn.applies(x):
        return _batch_norm_f32(input, weight, bias, running_mean, running_var, momentum, eps)
    if training:
        mean = x.mean(axis=dims)
        var = ((x - mean.reshape(_channel_shape(input))) ** 2).mean(axis=dims)
    else:
        mean, var = running_mean._data.astype(x.dtype, copy=False), running_var._data.astype(x.dtype, copy=False)
    invstd = (1 / np.sqrt(var + eps)).astype(x.dtype, copy=False)
    out = NativeBatchNorm.apply(input, weight, bias, running_mean, running_var, mean, invstd, bool(training),
                                float(eps))
    if training and running_mean is not None:
        m, count = 0.1 if momentum is None else momentum, x.size // x.shape[1]
        running_mean._data[...] = (1 - m) * running_mean._data + m * mean  # (no new version: torch's kernel
        running_var._data[...] = (1 - m) * running_var._data + m * var * (count / (count - 1))  # writes them so)
    return out


def _batch_norm_f32(input, weight, bias, running_mean, running_var, momentum, eps):
    """native_batch_norm in training for a contiguous float32 input, as torch's kernel computes its statistics"""
    x = input._data
    mean, var_sum = _bn.batch_statistics(x)
    count = x.size // x.shape[1]
    invstd = _bn.inverse_std(var_sum, count, eps)
    out = NativeBatchNorm.apply(input, weight, bias, running_mean, running_var, mean, invstd, True, float(eps))
    if running_mean is not None:  # (no new version: torch's kernel writes them so)
        _bn.update_running(running_mean._data, running_var._data, mean, var_sum, count, 0.1 if momentum is None else momentum)
    return out
