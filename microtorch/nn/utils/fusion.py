"""Folding an eval-mode BatchNorm into the Conv or Linear layer before it (one layer, same outputs)."""
import copy

from ..._creation import ones_like, zeros_like
from ...autograd.grad_mode import no_grad
from ..parameter import Parameter


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    """w' = w * gamma / sqrt(var + eps) (per output channel);  b' = (b - mean) * gamma / sqrt(var + eps) + beta"""
    conv_b = zeros_like(bn_rm) if conv_b is None else conv_b
    bn_w = ones_like(bn_rm) if bn_w is None else bn_w
    bn_b = zeros_like(bn_rm) if bn_b is None else bn_b
    scale = (bn_rv + bn_eps).rsqrt()
    shape = ([1, -1] if transpose else [-1, 1]) + [1] * (conv_w.ndim - 2)
    w = (conv_w * (bn_w * scale).reshape(shape)).to(conv_w.dtype)
    b = ((conv_b - bn_rm) * scale * bn_w + bn_b).to(conv_b.dtype)
    return Parameter(w, conv_w.requires_grad), Parameter(b, conv_b.requires_grad)


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """w' = w * gamma / sqrt(var + eps) (per output);  b' = (b - mean) * gamma / sqrt(var + eps) + beta"""
    linear_b = zeros_like(bn_rm) if linear_b is None else linear_b
    scale = bn_w * (bn_rv + bn_eps).rsqrt()
    w = linear_w * scale.unsqueeze(-1).to(linear_w.dtype)
    b = ((linear_b - bn_rm) * scale + bn_b).to(linear_b.dtype)
    return Parameter(w, linear_w.requires_grad), Parameter(b, linear_b.requires_grad)


def fuse_conv_bn_eval(conv, bn, transpose=False):
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(conv)
    with no_grad():
        fused.weight, fused.bias = fuse_conv_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                        bn.eps, bn.weight, bn.bias, transpose)
    return fused


def fuse_linear_bn_eval(linear, bn):
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError("To fuse, linear.out_features must equal bn.num_features or bn.num_features must be 1")
    fused = copy.deepcopy(linear)
    with no_grad():
        fused.weight, fused.bias = fuse_linear_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                          bn.eps, bn.weight, bn.bias)
    return fused


def skip_init(module_cls, *args, **kwargs):
    """module_cls(*args, **kwargs) whose parameters are left as allocated (torch leaves them uninitialized:
    their values are whatever memory held; here the constructor's are kept, equally meaningless)."""
    if "device" not in __import__("inspect").signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    return module_cls(*args, **kwargs)
