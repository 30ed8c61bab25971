"""Every op of issue 2, side by side with torch: forward values and dtypes, `grad_fn.name()`,
first derivatives (vector-Jacobian products with a random cotangent, on float64 inputs that
broadcast wherever the op broadcasts) and second derivatives (autograd.grad twice with
create_graph=True) wherever torch has them.

A case is `fn(m, F, *tensors)` written once for both libraries: `m` is `microtorch` or
`torch`, `F` is `microtorch.ops.nn` (plus the activations) or `torch.nn.functional`.
"""
import types

import numpy as np
import pytest
import torch

import microtorch as mt
from microtorch.ops import nn as mt_nn
import microtorch.ops as mt_ops

import torch.nn.functional as torch_F

# microtorch's functional namespace: ops.nn plus the activations that live in ops.elementwise
mt_F = types.SimpleNamespace(**{k: getattr(mt_nn, k) for k in dir(mt_nn) if not k.startswith("_")})
for _name in ("relu", "leaky_relu", "elu", "gelu", "softplus", "sigmoid", "tanh"):
    setattr(mt_F, _name, getattr(mt_ops, _name))

LIBS = {"mt": (mt, mt_F), "torch": (torch, torch_F)}


# ---- inputs --------------------------------------------------------------------------------
class Arg:
    """An input: a float64 tensor that requires grad, or a constant (indices, masks...)."""

    def __init__(self, make, requires_grad=True):
        self.make, self.requires_grad = make, requires_grad


def X(*shape):
    """standard normal, requires grad"""
    return Arg(lambda r: r.standard_normal(shape))


def P(*shape):
    """positive (0.5 .. 2), requires grad"""
    return Arg(lambda r: r.uniform(0.5, 2.0, shape))


def U(*shape):
    """in (0.05, 0.95): probabilities, requires grad"""
    return Arg(lambda r: r.uniform(0.05, 0.95, shape))


def AWAY(*shape):
    """normal values kept at least 0.1 away from 0 (kinks of abs, relu, clamp...)"""
    return Arg(lambda r: np.where(r.random(shape) < 0.5, -1, 1) * r.uniform(0.1, 2.0, shape))


def C(value):
    """a constant array (not requiring grad)"""
    return Arg(lambda r: np.array(value), requires_grad=False)


def CR(make):
    """a random constant, make(rng) -> array"""
    return Arg(make, requires_grad=False)


class Case:
    def __init__(self, id, fn, args, grad2=True, rtol=1e-7, atol=1e-9):
        self.id, self.fn, self.args, self.grad2, self.rtol, self.atol = id, fn, args, grad2, rtol, atol


def case(id, fn, *args, **kw):
    return pytest.param(Case(id, fn, list(args), **kw), id=id)


# ---- the table -----------------------------------------------------------------------------
ELEMENTWISE = [
    case("add", lambda m, F, a, b: a + b, X(3, 4), X(4)),
    case("add_fn_alpha", lambda m, F, a, b: m.add(a, b, alpha=2.5), X(3, 1), X(1, 4)),
    case("add_scalar", lambda m, F, a: a + 2.5, X(3, 4)),
    case("radd_scalar", lambda m, F, a: 2.5 + a, X(3, 4)),
    case("sub", lambda m, F, a, b: a - b, X(2, 3, 4), X(3, 1)),
    case("sub_alpha", lambda m, F, a, b: m.sub(a, b, alpha=3), X(3, 4), X(4)),
    case("sub_scalar", lambda m, F, a: a - 1.5, X(3, 4)),
    case("rsub_scalar", lambda m, F, a: 1.5 - a, X(3, 4)),
    case("mul", lambda m, F, a, b: a * b, X(3, 4), X(3, 1)),
    case("mul_scalar", lambda m, F, a: a * 3.0, X(3, 4)),
    case("rmul_scalar", lambda m, F, a: 3.0 * a, X(3, 4)),
    case("mul_same", lambda m, F, a: a * a, X(5)),
    case("div", lambda m, F, a, b: a / b, X(3, 4), AWAY(4)),
    case("div_scalar", lambda m, F, a: a / 4.0, X(3, 4)),
    case("rdiv_scalar", lambda m, F, a: 2.0 / a, AWAY(3, 4)),
    case("div_int_const", lambda m, F, a: a / m.tensor([1, 2, 3, 4]), X(2, 4)),
    case("neg", lambda m, F, a: -a, X(3, 4)),
    case("neg_fn", lambda m, F, a: m.neg(a), X(3, 4)),
    case("pow_scalar", lambda m, F, a: a ** 3, X(3, 4)),
    case("pow_scalar_2", lambda m, F, a: a ** 2, X(3, 4)),
    case("pow_scalar_float", lambda m, F, a: a ** 2.5, P(3, 4)),
    case("pow_scalar_neg", lambda m, F, a: a ** -1.5, P(3, 4)),
    case("pow_scalar_0", lambda m, F, a: a ** 0, X(3, 4)),
    case("pow_tensor", lambda m, F, a, b: a ** b, P(3, 4), X(4)),
    case("pow_fn", lambda m, F, a, b: m.pow(a, b), P(2, 3), X(2, 1)),
    case("rpow", lambda m, F, a: 2.0 ** a, X(3, 4)),
    case("rpow_int", lambda m, F, a: 3 ** a, X(3, 4)),
    case("abs", lambda m, F, a: a.abs(), AWAY(3, 4)),
    case("abs_fn", lambda m, F, a: m.abs(a), AWAY(3, 4)),
    case("exp", lambda m, F, a: a.exp(), X(3, 4)),
    case("log", lambda m, F, a: a.log(), P(3, 4)),
    case("log1p", lambda m, F, a: a.log1p(), P(3, 4)),
    case("expm1", lambda m, F, a: a.expm1(), X(3, 4)),
    case("sqrt", lambda m, F, a: a.sqrt(), P(3, 4)),
    case("rsqrt", lambda m, F, a: a.rsqrt(), P(3, 4)),
    case("sin", lambda m, F, a: a.sin(), X(3, 4)),
    case("cos", lambda m, F, a: a.cos(), X(3, 4)),
    case("tan", lambda m, F, a: a.tan(), U(3, 4)),
    case("tanh", lambda m, F, a: a.tanh(), X(3, 4)),
    case("tanh_fn", lambda m, F, a: m.tanh(a), X(3, 4)),
    case("sigmoid", lambda m, F, a: a.sigmoid(), X(3, 4)),
    case("sigmoid_fn", lambda m, F, a: m.sigmoid(a), X(3, 4)),
    case("sigmoid_large", lambda m, F, a: (a * 40).sigmoid(), X(3, 4)),
    case("relu", lambda m, F, a: a.relu(), AWAY(3, 4)),
    case("relu_F", lambda m, F, a: F.relu(a), AWAY(3, 4)),
    case("leaky_relu", lambda m, F, a: F.leaky_relu(a), AWAY(3, 4)),
    case("leaky_relu_slope", lambda m, F, a: F.leaky_relu(a, 0.2), AWAY(3, 4)),
    case("elu", lambda m, F, a: F.elu(a), AWAY(3, 4)),
    case("elu_alpha", lambda m, F, a: F.elu(a, alpha=0.5), AWAY(3, 4)),
    case("gelu", lambda m, F, a: F.gelu(a), X(3, 4)),
    case("gelu_tanh", lambda m, F, a: F.gelu(a, approximate="tanh"), X(3, 4)),
    case("softplus", lambda m, F, a: F.softplus(a), X(3, 4)),
    case("softplus_beta", lambda m, F, a: F.softplus(a * 10, beta=2, threshold=5), X(3, 4)),
    case("clamp", lambda m, F, a: a.clamp(-0.5, 0.5), AWAY(3, 4)),
    case("clamp_min", lambda m, F, a: a.clamp(min=0.05), AWAY(3, 4)),
    case("clamp_max", lambda m, F, a: a.clamp(max=0.05), AWAY(3, 4)),
    case("clamp_fn", lambda m, F, a: m.clamp(a, -0.5, 0.5), AWAY(3, 4)),
    case("clip", lambda m, F, a: a.clip(-0.5, 0.5), AWAY(3, 4)),
    case("clamp_tensor", lambda m, F, a, lo, hi: m.clamp(a, lo, hi), X(3, 4), X(4), C([2.0, 2.0, 2.0, 2.0])),
    case("maximum", lambda m, F, a, b: m.maximum(a, b), X(3, 4), X(4)),
    case("minimum", lambda m, F, a, b: m.minimum(a, b), X(3, 4), X(3, 1)),
    case("where", lambda m, F, c, a, b: m.where(c, a, b), CR(lambda r: r.random((3, 4)) < 0.5), X(3, 4), X(4)),
    case("where_scalar", lambda m, F, c, a: m.where(c, a, 0.0), CR(lambda r: r.random((3, 4)) < 0.5), X(3, 4)),
    case("where_method", lambda m, F, c, a, b: a.where(c, b), CR(lambda r: r.random((3, 4)) < 0.5), X(3, 4), X(1)),
    case("erf", lambda m, F, a: m.erf(a), X(3, 4)),
    case("reciprocal", lambda m, F, a: a.reciprocal(), AWAY(3, 4)),
    case("square", lambda m, F, a: a.square(), X(3, 4)),
    case("square_fn", lambda m, F, a: m.square(a), X(3, 4)),
    case("mixed_dtype_mul", lambda m, F, a: a * m.ones(4, dtype=m.float32), X(3, 4)),
]

REDUCTIONS = [
    case("sum", lambda m, F, a: a.sum(), X(3, 4)),
    case("sum_dim", lambda m, F, a: a.sum(1), X(3, 4, 5)),
    case("sum_dim_neg", lambda m, F, a: a.sum(-1), X(3, 4, 5)),
    case("sum_dim_keepdim", lambda m, F, a: a.sum(dim=1, keepdim=True), X(3, 4, 5)),
    case("sum_dims", lambda m, F, a: a.sum(dim=(0, 2)), X(3, 4, 5)),
    case("sum_dims_keepdim", lambda m, F, a: m.sum(a, (0, -1), keepdim=True), X(3, 4, 5)),
    case("mean", lambda m, F, a: a.mean(), X(3, 4)),
    case("mean_dim", lambda m, F, a: a.mean(0), X(3, 4)),
    case("mean_dims_keepdim", lambda m, F, a: a.mean((1, 2), keepdim=True), X(2, 3, 4)),
    case("var", lambda m, F, a: a.var(), X(3, 4)),
    case("var_dim", lambda m, F, a: a.var(1), X(3, 4)),
    case("var_unbiased_false", lambda m, F, a: a.var(1, unbiased=False), X(3, 4)),
    case("var_correction0", lambda m, F, a: a.var(dim=0, correction=0), X(3, 4)),
    case("var_correction2_keepdim", lambda m, F, a: m.var(a, dim=(0, 1), correction=2, keepdim=True), X(3, 4, 2)),
    case("std", lambda m, F, a: a.std(), X(3, 4)),
    case("std_dim", lambda m, F, a: a.std(0), X(3, 4)),
    case("std_correction0_keepdim", lambda m, F, a: m.std(a, dim=1, correction=0, keepdim=True), X(3, 4)),
    case("std_dims", lambda m, F, a: a.std(dim=(0, 2)), X(3, 4, 2)),
    case("prod", lambda m, F, a: a.prod(), P(3, 4)),
    case("prod_dim", lambda m, F, a: a.prod(1), X(3, 4)),
    case("prod_dim_keepdim", lambda m, F, a: m.prod(a, 0, keepdim=True), X(3, 4)),
    case("max", lambda m, F, a: a.max(), X(3, 4)),
    case("min", lambda m, F, a: a.min(), X(3, 4)),
    case("max_dim", lambda m, F, a: tuple(a.max(1)), X(3, 4)),
    case("max_dim_keepdim", lambda m, F, a: tuple(m.max(a, 0, keepdim=True)), X(3, 4)),
    case("min_dim", lambda m, F, a: tuple(a.min(dim=-1)), X(3, 4)),
    case("max_dim_values", lambda m, F, a: a.max(dim=1).values, X(2, 3, 4)),
    case("min_dim_indices", lambda m, F, a: a.min(dim=1).indices, X(2, 3, 4)),
    case("amax", lambda m, F, a: a.amax(), X(3, 4)),
    case("amax_dim", lambda m, F, a: a.amax(1), X(3, 4)),
    case("amax_dims_keepdim", lambda m, F, a: m.amax(a, (0, 2), keepdim=True), X(3, 4, 2)),
    case("amin_dim", lambda m, F, a: a.amin(-1), X(3, 4)),
    case("logsumexp", lambda m, F, a: a.logsumexp(1), X(3, 4)),
    case("logsumexp_dims_keepdim", lambda m, F, a: m.logsumexp(a, (0, 1), keepdim=True), X(3, 4, 2)),
    case("norm", lambda m, F, a: a.norm(), X(3, 4)),
    case("norm_fn", lambda m, F, a: m.norm(a), X(3, 4)),
    case("norm_p1", lambda m, F, a: a.norm(p=1), AWAY(3, 4)),
    case("norm_p3_dim", lambda m, F, a: a.norm(p=3, dim=1), X(3, 4)),
    case("norm_inf", lambda m, F, a: a.norm(p=float("inf")), X(3, 4)),
    case("norm_dim_keepdim", lambda m, F, a: a.norm(dim=0, keepdim=True), X(3, 4)),
    case("argmax", lambda m, F, a: a.argmax(), X(3, 4)),
    case("argmax_dim", lambda m, F, a: a.argmax(1), X(3, 4)),
    case("argmin_dim_keepdim", lambda m, F, a: m.argmin(a, 0, keepdim=True), X(3, 4)),
    case("eq", lambda m, F, a: a == a[0], X(3, 4)),
    case("ne", lambda m, F, a, b: a != b, X(3, 4), X(4)),
    case("lt", lambda m, F, a, b: a < b, X(3, 4), X(4)),
    case("le", lambda m, F, a: a <= 0.0, X(3, 4)),
    case("gt", lambda m, F, a, b: m.gt(a, b), X(3, 4), X(3, 1)),
    case("ge", lambda m, F, a, b: a.ge(b), X(3, 4), X(4)),
    case("eq_fn", lambda m, F, a, b: m.eq(a, b), X(3, 4), X(4)),
]

SHAPE = [
    case("reshape", lambda m, F, a: a.reshape(4, 3), X(3, 4)),
    case("reshape_infer", lambda m, F, a: a.reshape(-1), X(3, 4)),
    case("reshape_fn", lambda m, F, a: m.reshape(a, (2, -1)), X(3, 4)),
    case("reshape_noncontig", lambda m, F, a: a.t().reshape(12), X(3, 4)),
    case("view", lambda m, F, a: a.view(2, 6), X(3, 4)),
    case("view_tuple", lambda m, F, a: a.view((12,)), X(3, 4)),
    case("flatten", lambda m, F, a: a.flatten(), X(2, 3, 4)),
    case("flatten_range", lambda m, F, a: m.flatten(a, 1), X(2, 3, 4)),
    case("squeeze", lambda m, F, a: a.squeeze(), X(3, 1, 4, 1)),
    case("squeeze_dim", lambda m, F, a: a.squeeze(1), X(3, 1, 4)),
    case("squeeze_dims", lambda m, F, a: a.squeeze((1, 3)), X(3, 1, 4, 1)),
    case("unsqueeze", lambda m, F, a: a.unsqueeze(1), X(3, 4)),
    case("unsqueeze_neg", lambda m, F, a: m.unsqueeze(a, -1), X(3, 4)),
    case("transpose", lambda m, F, a: a.transpose(0, 2), X(2, 3, 4)),
    case("transpose_fn", lambda m, F, a: m.transpose(a, -1, 0), X(2, 3, 4)),
    case("permute", lambda m, F, a: a.permute(2, 0, 1), X(2, 3, 4)),
    case("permute_tuple", lambda m, F, a: m.permute(a, (1, 2, 0)), X(2, 3, 4)),
    case("t", lambda m, F, a: a.t(), X(3, 4)),
    case("T", lambda m, F, a: a.T, X(3, 4)),
    case("mT", lambda m, F, a: a.mT, X(2, 3, 4)),
    case("expand", lambda m, F, a: a.expand(2, 3, 4), X(3, 1)),
    case("expand_neg1", lambda m, F, a: a.expand(-1, 4), X(3, 1)),
    case("expand_as", lambda m, F, a, b: a.expand_as(b), X(1, 4), C(np.zeros((3, 4)))),
    case("broadcast_to", lambda m, F, a: m.broadcast_to(a, (2, 3, 4)), X(4)),
    case("repeat", lambda m, F, a: a.repeat(2, 3), X(3, 4)),
    case("repeat_newdims", lambda m, F, a: a.repeat(2, 1, 3), X(3, 4)),
    case("cat", lambda m, F, a, b: m.cat([a, b]), X(2, 4), X(3, 4)),
    case("cat_dim1", lambda m, F, a, b, c: m.cat((a, b, c), dim=1), X(2, 4), X(2, 1), X(2, 2)),
    case("cat_const", lambda m, F, a, b: m.cat([a, b], -1), X(2, 4), C(np.ones((2, 2)))),
    case("stack", lambda m, F, a, b: m.stack([a, b]), X(3, 4), X(3, 4)),
    case("stack_dim", lambda m, F, a, b: m.stack([a, b], dim=2), X(3, 4), X(3, 4)),
    case("split", lambda m, F, a: a.split(2), X(5, 3)),
    case("split_sizes", lambda m, F, a: m.split(a, [1, 3], dim=1), X(2, 4)),
    case("split_one_used", lambda m, F, a: a.split(2)[1], X(5, 3)),
    case("chunk", lambda m, F, a: a.chunk(3), X(7, 2)),
    case("chunk_dim", lambda m, F, a: m.chunk(a, 2, dim=1), X(2, 4)),
    case("flip", lambda m, F, a: a.flip(0), X(3, 4)),
    case("flip_dims", lambda m, F, a: m.flip(a, (0, 1)), X(3, 4)),
    case("narrow", lambda m, F, a: a.narrow(1, 1, 2), X(3, 4)),
    case("narrow_fn", lambda m, F, a: m.narrow(a, 0, 0, 2), X(3, 4)),
]

INDEXING = [
    case("index_int", lambda m, F, a: a[1], X(3, 4)),
    case("index_neg_int", lambda m, F, a: a[-1], X(3, 4)),
    case("index_int_int", lambda m, F, a: a[1, 2], X(3, 4)),
    case("index_slice", lambda m, F, a: a[1:], X(3, 4)),
    case("index_slice_step", lambda m, F, a: a[::2], X(5, 4)),
    case("index_slice_2d", lambda m, F, a: a[:, 1:3], X(3, 4)),
    case("index_slice_neg", lambda m, F, a: a[:-1, -2:], X(3, 4)),
    case("index_none", lambda m, F, a: a[None], X(3, 4)),
    case("index_none_mid", lambda m, F, a: a[:, None], X(3, 4)),
    case("index_ellipsis", lambda m, F, a: a[..., 1], X(2, 3, 4)),
    case("index_ellipsis_none", lambda m, F, a: a[..., None, 0], X(2, 3, 4)),
    case("index_mixed", lambda m, F, a: a[1, :, None, 1:3], X(2, 3, 4)),
    case("index_full", lambda m, F, a: a[:], X(3, 4)),
    case("index_list", lambda m, F, a: a[[0, 2]], X(3, 4)),
    case("index_list_repeated", lambda m, F, a: a[[0, 2, 0, 0]], X(3, 4)),
    case("index_tensor_repeated", lambda m, F, a, i: a[i], X(3, 4), C([1, 1, 2, 1])),
    case("index_tensor_2d", lambda m, F, a, i: a[i], X(3, 4), C([[0, 1], [1, 1]])),
    case("index_two_tensors", lambda m, F, a, i, j: a[i, j], X(3, 4), C([0, 2, 0]), C([1, 1, 1])),
    case("index_slice_then_tensor", lambda m, F, a, i: a[:, i], X(3, 4), C([3, 0, 3])),
    case("index_neg_tensor", lambda m, F, a, i: a[i], X(3, 4), C([-1, 0, -1])),
    case("index_bool_mask", lambda m, F, a, mask: a[mask], X(3, 4), CR(lambda r: r.random((3, 4)) < 0.5)),
    case("index_bool_rows", lambda m, F, a, mask: a[mask], X(3, 4), C([True, False, True])),
    case("index_bool_cmp", lambda m, F, a: a[a > 0], X(3, 4)),
    case("index_select", lambda m, F, a, i: a.index_select(0, i), X(3, 4), C([2, 0, 2])),
    case("index_select_dim1", lambda m, F, a, i: m.index_select(a, 1, i), X(3, 4), C([3, 3, 1])),
    case("gather", lambda m, F, a, i: a.gather(1, i), X(3, 4), C([[0, 0], [1, 3], [2, 2]])),
    case("gather_dim0", lambda m, F, a, i: m.gather(a, 0, i), X(3, 4), C([[0, 1, 2, 0], [2, 2, 2, 2]])),
    case("masked_fill", lambda m, F, a, mask: a.masked_fill(mask, 0.5), X(3, 4),
         CR(lambda r: r.random((3, 4)) < 0.5)),
    case("masked_fill_broadcast", lambda m, F, a, mask: m.masked_fill(a, mask, -1.0), X(3, 4),
         C([True, False, False, True])),
    case("masked_fill_tensor_value", lambda m, F, a, v, mask: a.masked_fill(mask, v), X(3, 4), X(),
         C([True, False, False, True])),
]

LINALG = [
    case("matmul_2d", lambda m, F, a, b: a @ b, X(3, 4), X(4, 5)),
    case("matmul_1d_1d", lambda m, F, a, b: a @ b, X(4), X(4)),
    case("matmul_1d_2d", lambda m, F, a, b: a @ b, X(4), X(4, 5)),
    case("matmul_2d_1d", lambda m, F, a, b: a @ b, X(3, 4), X(4)),
    case("matmul_batched", lambda m, F, a, b: a @ b, X(2, 3, 4), X(2, 4, 5)),
    case("matmul_broadcast", lambda m, F, a, b: m.matmul(a, b), X(2, 3, 4), X(4, 5)),
    case("matmul_broadcast_left", lambda m, F, a, b: m.matmul(a, b), X(3, 4), X(2, 4, 5)),
    case("matmul_broadcast_batch", lambda m, F, a, b: m.matmul(a, b), X(2, 1, 3, 4), X(5, 4, 2)),
    case("matmul_1d_batched", lambda m, F, a, b: a @ b, X(4), X(2, 4, 5)),
    case("matmul_batched_1d", lambda m, F, a, b: a @ b, X(2, 3, 4), X(4)),
    case("matmul_2d_3d_const", lambda m, F, a, b: a @ b, X(3, 4), CR(lambda r: r.standard_normal((2, 4, 5)))),
    case("matmul_3d_const_2d", lambda m, F, a, b: a @ b, CR(lambda r: r.standard_normal((2, 3, 4))), X(4, 5)),
    case("matmul_1d_3d_const", lambda m, F, a, b: a @ b, X(4), CR(lambda r: r.standard_normal((2, 4, 5)))),
    case("matmul_noncontig_batch", lambda m, F, a, b: a.transpose(0, 1) @ b, X(3, 2, 4), X(4, 5)),
    case("matmul_4d_4d", lambda m, F, a, b: a @ b, X(2, 2, 3, 4), X(2, 1, 4, 2)),
    case("mm", lambda m, F, a, b: a.mm(b), X(3, 4), X(4, 5)),
    case("mm_fn", lambda m, F, a, b: m.mm(a, b), X(3, 4), X(4, 5)),
    case("bmm", lambda m, F, a, b: m.bmm(a, b), X(2, 3, 4), X(2, 4, 5)),
    case("mv", lambda m, F, a, b: m.mv(a, b), X(3, 4), X(4)),
    case("dot", lambda m, F, a, b: m.dot(a, b), X(4), X(4)),
    case("outer", lambda m, F, a, b: m.outer(a, b), X(3), X(4)),
    case("einsum_mm", lambda m, F, a, b: m.einsum("ij,jk->ik", a, b), X(3, 4), X(4, 5)),
    case("einsum_bmm", lambda m, F, a, b: m.einsum("bij,bjk->bik", a, b), X(2, 3, 4), X(2, 4, 5)),
    case("einsum_trace", lambda m, F, a: m.einsum("ii->", a), X(3, 3)),
    case("einsum_diag", lambda m, F, a: m.einsum("ii->i", a), X(3, 3)),
    case("einsum_sum", lambda m, F, a: m.einsum("ij->", a), X(3, 4)),
    case("einsum_implicit", lambda m, F, a, b: m.einsum("ij,jk", a, b), X(3, 4), X(4, 5)),
    case("einsum_outer", lambda m, F, a, b: m.einsum("i,j->ij", a, b), X(3), X(4)),
    case("einsum_three", lambda m, F, a, b, c: m.einsum("ij,jk,kl->il", a, b, c), X(2, 3), X(3, 4), X(4, 2)),
    case("einsum_transpose", lambda m, F, a: m.einsum("ijk->kji", a), X(2, 3, 4)),
    case("einsum_reduce_one", lambda m, F, a, b: m.einsum("ij,k->i", a, b), X(2, 3), X(4)),
    case("einsum_list", lambda m, F, a, b: m.einsum("i,i->", [a, b]), X(4), X(4)),
]


def _targets(n, c):
    return CR(lambda r: r.integers(0, c, n))


def _probs(*shape):
    """probabilities along dim 1 (for _probs(C, 1): a 1-D distribution over C classes)"""
    def make(r):
        p = r.random(shape) + 0.1
        p = p / p.sum(axis=1 if shape[-1] != 1 or len(shape) != 2 else 0, keepdims=True)
        return p[:, 0] if len(shape) == 2 and shape[-1] == 1 else p
    return CR(make)


NN = [
    case("softmax", lambda m, F, a: F.softmax(a, dim=1), X(3, 4)),
    case("softmax_dim0", lambda m, F, a: F.softmax(a, 0), X(3, 4, 2)),
    case("softmax_method", lambda m, F, a: a.softmax(-1), X(3, 4)),
    case("softmax_top", lambda m, F, a: m.softmax(a, -1), X(3, 4)),
    case("log_softmax", lambda m, F, a: F.log_softmax(a, dim=1), X(3, 4)),
    case("log_softmax_method", lambda m, F, a: a.log_softmax(0), X(3, 4)),
    case("log_softmax_large", lambda m, F, a: F.log_softmax(a * 100, dim=-1), X(3, 4)),
    case("linear", lambda m, F, x, w, b: F.linear(x, w, b), X(5, 4), X(3, 4), X(3)),
    case("linear_nobias", lambda m, F, x, w: F.linear(x, w), X(5, 4), X(3, 4)),
    case("linear_1d", lambda m, F, x, w, b: F.linear(x, w, b), X(4), X(3, 4), X(3)),
    case("linear_3d", lambda m, F, x, w, b: F.linear(x, w, b), X(2, 5, 4), X(3, 4), X(3)),
    case("mse_loss", lambda m, F, x, y: F.mse_loss(x, y), X(3, 4), X(3, 4)),
    case("mse_loss_sum", lambda m, F, x, y: F.mse_loss(x, y, reduction="sum"), X(3, 4), X(3, 4)),
    case("mse_loss_none", lambda m, F, x, y: F.mse_loss(x, y, reduction="none"), X(3, 4), X(3, 4)),
    case("mse_loss_const_target", lambda m, F, x, y: F.mse_loss(x, y), X(3, 4), CR(lambda r: r.random((3, 4)))),
    case("l1_loss", lambda m, F, x, y: F.l1_loss(x, y), X(3, 4), X(3, 4), grad2=True),
    case("l1_loss_sum", lambda m, F, x, y: F.l1_loss(x, y, reduction="sum"), X(3, 4), X(3, 4)),
    case("l1_loss_none", lambda m, F, x, y: F.l1_loss(x, y, reduction="none"), X(3, 4), X(3, 4)),
    case("nll_loss", lambda m, F, x, t: F.nll_loss(x, t), X(5, 4), _targets(5, 4)),
    case("nll_loss_sum", lambda m, F, x, t: F.nll_loss(x, t, reduction="sum"), X(5, 4), _targets(5, 4)),
    case("nll_loss_none", lambda m, F, x, t: F.nll_loss(x, t, reduction="none"), X(5, 4), _targets(5, 4)),
    case("nll_loss_weight", lambda m, F, x, t, w: F.nll_loss(x, t, weight=w), X(5, 4), _targets(5, 4),
         C([0.1, 0.2, 0.3, 0.4])),
    case("nll_loss_ignore", lambda m, F, x, t: F.nll_loss(x, t, ignore_index=1), X(5, 4), C([1, 0, 1, 3, 2])),
    case("nll_loss_1d", lambda m, F, x, t: F.nll_loss(x, t), X(4), C(2)),
    case("nll_loss_kdim", lambda m, F, x, t: F.nll_loss(x, t), X(2, 4, 3), CR(lambda r: r.integers(0, 4, (2, 3)))),
    case("cross_entropy", lambda m, F, x, t: F.cross_entropy(x, t), X(5, 4), _targets(5, 4)),
    case("cross_entropy_sum", lambda m, F, x, t: F.cross_entropy(x, t, reduction="sum"), X(5, 4), _targets(5, 4)),
    case("cross_entropy_none", lambda m, F, x, t: F.cross_entropy(x, t, reduction="none"), X(5, 4),
         _targets(5, 4)),
    case("cross_entropy_weight", lambda m, F, x, t, w: F.cross_entropy(x, t, weight=w), X(5, 4), _targets(5, 4),
         C([0.1, 0.2, 0.3, 0.4])),
    case("cross_entropy_ignore", lambda m, F, x, t: F.cross_entropy(x, t, ignore_index=0), X(5, 4),
         C([1, 0, 0, 3, 2])),
    case("cross_entropy_smoothing", lambda m, F, x, t: F.cross_entropy(x, t, label_smoothing=0.1), X(5, 4),
         _targets(5, 4)),
    case("cross_entropy_smoothing_weight_ignore",
         lambda m, F, x, t, w: F.cross_entropy(x, t, weight=w, ignore_index=1, label_smoothing=0.2),
         X(5, 4), C([1, 0, 2, 3, 1]), C([0.1, 0.2, 0.3, 0.4])),
    case("cross_entropy_smoothing_none",
         lambda m, F, x, t: F.cross_entropy(x, t, label_smoothing=0.2, reduction="none"), X(5, 4), _targets(5, 4)),
    case("cross_entropy_smoothing_sum",
         lambda m, F, x, t, w: F.cross_entropy(x, t, weight=w, label_smoothing=0.2, reduction="sum"), X(5, 4),
         _targets(5, 4), C([0.1, 0.2, 0.3, 0.4])),
    case("cross_entropy_1d", lambda m, F, x, t: F.cross_entropy(x, t), X(4), C(3)),
    case("cross_entropy_kdim", lambda m, F, x, t: F.cross_entropy(x, t), X(2, 4, 3),
         CR(lambda r: r.integers(0, 4, (2, 3)))),
    case("cross_entropy_probs", lambda m, F, x, p: F.cross_entropy(x, p), X(5, 4), _probs(5, 4)),
    case("cross_entropy_probs_kdim", lambda m, F, x, p: F.cross_entropy(x, p), X(2, 4, 3), _probs(2, 4, 3)),
    case("cross_entropy_probs_kdim_weight", lambda m, F, x, p, w: F.cross_entropy(x, p, weight=w), X(2, 4, 3),
         _probs(2, 4, 3), C([0.1, 0.2, 0.3, 0.4])),
    case("cross_entropy_probs_1d", lambda m, F, x, p: F.cross_entropy(x, p), X(4), _probs(4, 1)),
    case("cross_entropy_kdim_smoothing_weight",
         lambda m, F, x, t, w: F.cross_entropy(x, t, weight=w, label_smoothing=0.3), X(2, 4, 3),
         CR(lambda r: r.integers(0, 4, (2, 3))), C([0.1, 0.2, 0.3, 0.4])),
    case("cross_entropy_4d", lambda m, F, x, t: F.cross_entropy(x, t, reduction="none"), X(2, 3, 2, 2),
         CR(lambda r: r.integers(0, 3, (2, 2, 2)))),
    case("nll_loss_5d", lambda m, F, x, t: F.nll_loss(x, t, reduction="none"), X(2, 3, 2, 1, 2),
         CR(lambda r: r.integers(0, 3, (2, 2, 1, 2)))),
    case("nll_loss_4d_weight_ignore", lambda m, F, x, t, w: F.nll_loss(x, t, weight=w, ignore_index=2),
         X(2, 3, 2, 2), CR(lambda r: r.integers(0, 3, (2, 2, 2))), C([0.5, 1.0, 2.0])),
    case("cross_entropy_probs_grad", lambda m, F, x, p: F.cross_entropy(x, p.softmax(1)), X(5, 4), X(5, 4)),
    case("cross_entropy_probs_sum", lambda m, F, x, p: F.cross_entropy(x, p, reduction="sum"), X(5, 4),
         _probs(5, 4)),
    case("cross_entropy_probs_none", lambda m, F, x, p: F.cross_entropy(x, p, reduction="none"), X(5, 4),
         _probs(5, 4)),
    case("cross_entropy_probs_weight_smoothing",
         lambda m, F, x, p, w: F.cross_entropy(x, p, weight=w, label_smoothing=0.1), X(5, 4), _probs(5, 4),
         C([0.1, 0.2, 0.3, 0.4])),
    case("binary_cross_entropy", lambda m, F, p, y: F.binary_cross_entropy(p, y), U(3, 4),
         CR(lambda r: (r.random((3, 4)) < 0.5).astype(float))),
    case("binary_cross_entropy_soft_target", lambda m, F, p, y: F.binary_cross_entropy(p, y), U(3, 4), U(3, 4)),
    case("binary_cross_entropy_weight_sum",
         lambda m, F, p, y, w: F.binary_cross_entropy(p, y, weight=w, reduction="sum"), U(3, 4), U(3, 4),
         CR(lambda r: r.random((3, 4)))),
    case("binary_cross_entropy_none", lambda m, F, p, y: F.binary_cross_entropy(p, y, reduction="none"), U(3, 4),
         U(3, 4)),
    case("bce_with_logits", lambda m, F, x, y: F.binary_cross_entropy_with_logits(x, y), X(3, 4), U(3, 4)),
    case("bce_with_logits_sum", lambda m, F, x, y: F.binary_cross_entropy_with_logits(x, y, reduction="sum"),
         X(3, 4), U(3, 4)),
    case("bce_with_logits_none", lambda m, F, x, y: F.binary_cross_entropy_with_logits(x, y, reduction="none"),
         X(3, 4), U(3, 4)),
    case("bce_with_logits_weights",
         lambda m, F, x, y, w, pw: F.binary_cross_entropy_with_logits(x, y, weight=w, pos_weight=pw),
         X(3, 4), U(3, 4), CR(lambda r: r.random((3, 4))), CR(lambda r: r.random(4) + 0.5)),
    case("bce_with_logits_large", lambda m, F, x, y: F.binary_cross_entropy_with_logits(x * 50, y), X(3, 4),
         U(3, 4)),
    case("dropout_p0", lambda m, F, x: F.dropout(x, p=0.0) * 2, X(3, 4)),
    case("dropout_eval", lambda m, F, x: F.dropout(x, p=0.5, training=False) * 2, X(3, 4)),
]

# 0-d tensors and other corners (numpy has no axis 0 on a 0-d array; torch accepts dim 0 and -1)
CORNERS = [
    case("0d_sum_dim", lambda m, F, s: s.sum(0), X()),
    case("0d_mean_dim_keepdim", lambda m, F, s: s.mean(-1, keepdim=True), X()),
    case("0d_amax_dim", lambda m, F, s: s.amax(0), X()),
    case("0d_logsumexp", lambda m, F, s: s.logsumexp(0), X()),
    case("0d_softmax", lambda m, F, s: s.softmax(0), X()),
    case("0d_log_softmax", lambda m, F, s: F.log_softmax(s, -1), X()),
    case("0d_flip", lambda m, F, s: s.flip(0), X()),
    case("0d_t", lambda m, F, s: s.t(), X()),
    case("0d_T", lambda m, F, s: s.T, X()),
    case("0d_unsqueeze", lambda m, F, s: s.unsqueeze(0), X()),
    case("0d_expand", lambda m, F, s: s.expand(3), X()),
    case("0d_index_none", lambda m, F, s: s[None, ..., None], X()),
    case("0d_mul_vector", lambda m, F, s, a: s * a, X(), X(3)),
    case("0d_pow", lambda m, F, s, t: s.abs() ** t, AWAY(), X()),
    case("1d_T", lambda m, F, a: a.T, X(4)),
    case("1d_t", lambda m, F, a: a.t(), X(4)),
    case("var_one_element", lambda m, F, a: a.var(), X(1), grad2=False),
    case("std_dim_one_element", lambda m, F, a: a.std(0), X(1, 3), grad2=False),
    case("sum_empty_dims_tuple", lambda m, F, a: a.sum(dim=(-1, 0)), X(2, 3)),
    case("cat_single", lambda m, F, a: m.cat([a]), X(2, 3)),
    case("stack_neg_dim", lambda m, F, a, b: m.stack([a, b], -1), X(2, 3), X(2, 3)),
    case("narrow_neg_start", lambda m, F, a: a.narrow(1, -2, 2), X(2, 4)),
    case("select_neg", lambda m, F, a: a.select(1, -1), X(2, 4)),
    case("split_zero_size", lambda m, F, a: a.split([0, 4], 1), X(2, 4)),
]

ALL_CASES = ELEMENTWISE + REDUCTIONS + SHAPE + INDEXING + LINALG + NN + CORNERS



# ---- running a case in both libraries -------------------------------------------------------
def _build(lib, c, arrays):
    m, F = LIBS[lib]
    ts = [m.tensor(a, requires_grad=arg.requires_grad) for arg, a in zip(c.args, arrays)]
    out = c.fn(m, F, *ts)
    outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    return ts, outs


def _np(t):
    if isinstance(t, torch.Tensor):
        return t.detach().numpy(force=True)  # force: torch's efficient ZeroTensor
    return t.detach().numpy()


def _close(a, b, c, what):
    if a is None or b is None:
        # an unused input: torch may say None where microtorch has zeros (or the reverse)
        other = b if a is None else a
        assert other is None or not np.any(_np(other)), f"{what}: one side is None, the other is {other}"
        return
    assert tuple(a.shape) == tuple(b.shape), f"{what}: shape {tuple(a.shape)} != torch {tuple(b.shape)}"
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1], f"{what}: dtype {a.dtype} != {b.dtype}"
    np.testing.assert_allclose(_np(a), _np(b), rtol=c.rtol, atol=c.atol, err_msg=what)


def _diff_outputs(outs):
    return [i for i, o in enumerate(outs) if o.requires_grad]


def _grads(lib, inputs, outs, idx, cotangents, create_graph):
    m, _ = LIBS[lib]
    wrt = [t for t in inputs if t.requires_grad]
    v = [m.tensor(cotangents[i]) for i in idx]
    return wrt, m.autograd.grad([outs[i] for i in idx], wrt, v, create_graph=create_graph, allow_unused=True)


@pytest.mark.parametrize("c", ALL_CASES)
def test_forward_and_grad_fn(c):
    rng = np.random.default_rng(0)
    arrays = [arg.make(rng) for arg in c.args]
    _, mo = _build("mt", c, arrays)
    _, to = _build("torch", c, arrays)
    assert len(mo) == len(to)
    for k, (a, b) in enumerate(zip(mo, to)):
        _close(a, b, c, f"{c.id}: output {k}")
        assert a.requires_grad == b.requires_grad, f"{c.id}: output {k} requires_grad"
        assert a.is_leaf == b.is_leaf, f"{c.id}: output {k} is_leaf"
        tname = b.grad_fn.name() if b.grad_fn is not None else None
        mname = a.grad_fn.name() if a.grad_fn is not None else None
        assert mname == tname, f"{c.id}: output {k} grad_fn {mname} != torch's {tname}"


@pytest.mark.parametrize("c", ALL_CASES)
def test_gradients(c):
    rng = np.random.default_rng(1)
    arrays = [arg.make(rng) for arg in c.args]
    mi, mo = _build("mt", c, arrays)
    ti, to = _build("torch", c, arrays)
    idx = _diff_outputs(to)
    assert _diff_outputs(mo) == idx
    if not idx:
        pytest.skip("no differentiable output")
    cot = {i: rng.standard_normal(tuple(to[i].shape)) for i in idx}
    _, mg = _grads("mt", mi, mo, idx, cot, create_graph=False)
    _, tg = _grads("torch", ti, to, idx, cot, create_graph=False)
    for k, (a, b) in enumerate(zip(mg, tg)):
        _close(a, b, c, f"{c.id}: gradient of input {k}")
        if a is not None:
            assert not a.requires_grad, "without create_graph the gradient must not require grad"


@pytest.mark.parametrize("c", [p for p in ALL_CASES if p.values[0].grad2])
def test_second_derivatives(c):
    rng = np.random.default_rng(2)
    arrays = [arg.make(rng) for arg in c.args]
    results = {}
    cot = w = None
    for lib in ("torch", "mt"):
        m, _ = LIBS[lib]
        inputs, outs = _build(lib, c, arrays)
        idx = _diff_outputs(outs)
        if not idx:
            pytest.skip("no differentiable output")
        if cot is None:
            cot = {i: rng.standard_normal(tuple(outs[i].shape)) for i in idx}
        wrt, g = _grads(lib, inputs, outs, idx, cot, create_graph=True)
        if w is None:
            w = [rng.standard_normal(tuple(t.shape)) for t in wrt]
        terms = [(gi * m.tensor(wi)).sum() for gi, wi in zip(g, w) if gi is not None and gi.requires_grad]
        if not terms:
            results[lib] = None
            continue
        s = terms[0]
        for t in terms[1:]:
            s = s + t
        try:
            results[lib] = m.autograd.grad(s, wrt, allow_unused=True)
        except RuntimeError as e:
            if lib == "torch":
                pytest.skip(f"torch has no second derivative here: {e}")
            raise
    if results["torch"] is None:
        assert results["mt"] is None or all(r is None or not np.any(_np(r)) for r in results["mt"])
        return
    assert results["mt"] is not None, f"{c.id}: microtorch's gradient does not require grad"
    for k, (a, b) in enumerate(zip(results["mt"], results["torch"])):
        _close(a, b, c, f"{c.id}: second derivative wrt input {k}")


# ---- things the table cannot express --------------------------------------------------------
def test_max_ties_share_the_gradient_like_torch():
    data = [[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]]
    for f in (lambda x: x.max(), lambda x: x.amax(), lambda x: x.amax(1).sum(), lambda x: x.min(),
              lambda x: x.max(1).values.sum(), lambda x: x.norm(p=float("inf"))):
        a = mt.tensor(data, dtype=mt.float64, requires_grad=True)
        b = torch.tensor(data, dtype=torch.float64, requires_grad=True)
        f(a).backward()
        f(b).backward()
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy())


def test_maximum_ties_split_like_torch():
    a = mt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = mt.tensor([1.0, 1.0, 4.0], requires_grad=True)
    ta = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    tb = torch.tensor([1.0, 1.0, 4.0], requires_grad=True)
    mt.maximum(a, b).sum().backward()
    torch.maximum(ta, tb).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy())
    np.testing.assert_allclose(b.grad.numpy(), tb.grad.numpy())


def test_relu_abs_clamp_at_the_kink_like_torch():
    data = [-1.0, 0.0, 0.5, 1.0]
    for name, f in [("relu", lambda x: x.relu()), ("abs", lambda x: x.abs()),
                    ("clamp", lambda x: x.clamp(0.0, 1.0)), ("clamp_min", lambda x: x.clamp(min=0.0)),
                    ("sqrt", lambda x: x.clamp(min=0.0).sqrt() * 0 + x)]:
        a = mt.tensor(data, requires_grad=True)
        b = torch.tensor(data, requires_grad=True)
        f(a).sum().backward()
        f(b).sum().backward()
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), err_msg=name)


def test_prod_with_zeros_like_torch():
    data = [[1.0, 0.0, 3.0], [0.0, 0.0, 2.0], [1.0, 2.0, 3.0]]
    for f in (lambda x: x.prod(), lambda x: x.prod(1).sum(), lambda x: x.prod(0).sum()):
        a = mt.tensor(data, dtype=mt.float64, requires_grad=True)
        b = torch.tensor(data, dtype=torch.float64, requires_grad=True)
        f(a).backward()
        f(b).backward()
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy())


def test_dropout_training_scales_and_masks():
    mt.manual_seed(0)
    x = mt.ones(1000, dtype=mt.float64, requires_grad=True)
    y = mt_F.dropout(x, p=0.25)
    kept = y.detach().numpy() != 0
    np.testing.assert_allclose(y.detach().numpy()[kept], 1 / 0.75)
    assert 0.65 < kept.mean() < 0.85
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.where(kept, 1 / 0.75, 0.0))
    assert y.grad_fn.name() == torch_F.dropout(torch.ones(3, requires_grad=True), 0.25).grad_fn.name()
    assert (mt_F.dropout(x, p=1.0).detach().numpy() == 0).all()


def test_integer_tensors_in_elementwise_ops_like_torch():
    for f in (lambda m, a: a / 2, lambda m, a: a * 2.5, lambda m, a: a + True, lambda m, a: a.sum(),
              lambda m, a: a.exp(), lambda m, a: a.sqrt(), lambda m, a: a.sigmoid(), lambda m, a: 2 ** a,
              lambda m, a: a ** 2, lambda m, a: a.abs(), lambda m, a: -a, lambda m, a: a.prod(),
              lambda m, a: a.max(), lambda m, a: a.float().mean(), lambda m, a: a.relu(),
              lambda m, a: m.maximum(a, m.tensor(2.5)), lambda m, a: m.where(a > 1, a, 0.5)):
        ra = f(mt, mt.tensor([1, 2, 3]))
        rb = f(torch, torch.tensor([1, 2, 3]))
        assert str(ra.dtype).split(".")[-1] == str(rb.dtype).split(".")[-1]
        np.testing.assert_allclose(ra.numpy(), rb.numpy(), rtol=1e-6)


def test_float32_stays_float32_like_torch():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    for f in (lambda m, F, a: a * 2.5, lambda m, F, a: a + m.tensor(1.0, dtype=m.float64),
              lambda m, F, a: a.exp().sum(1), lambda m, F, a: F.softmax(a, 1), lambda m, F, a: a @ a.t(),
              lambda m, F, a: a.var(0), lambda m, F, a: F.cross_entropy(a, m.tensor([0, 1, 2]))):
        a = mt.tensor(x, requires_grad=True)
        b = torch.tensor(x, requires_grad=True)
        ra, rb = f(mt, mt_F, a), f(torch, torch_F, b)
        assert str(ra.dtype).split(".")[-1] == str(rb.dtype).split(".")[-1]
        ra.sum().backward()
        rb.sum().backward()
        assert a.grad.dtype is mt.float32
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-5)


# ---- keyword arguments: torch's parameter names -------------------------------------------------
KEYWORD_CALLS = {
    "sum_kw": lambda m, F, x: x.sum(dim=1, keepdim=True),
    "mean_kw": lambda m, F, x: m.mean(input=x, dim=0),
    "std_kw": lambda m, F, x: x.std(dim=1, unbiased=False),
    "var_kw": lambda m, F, x: m.var(x, dim=1, correction=0),
    "max_kw": lambda m, F, x: x.max(dim=1, keepdim=True).values,
    "min_kw": lambda m, F, x: m.min(x, dim=0).indices,
    "amax_kw": lambda m, F, x: x.amax(dim=(0, 1)),
    "argmax_kw": lambda m, F, x: x.argmax(dim=1, keepdim=True),
    "logsumexp_kw": lambda m, F, x: m.logsumexp(x, dim=1),
    "norm_kw": lambda m, F, x: x.norm(p=1, dim=1, keepdim=True),
    "prod_kw": lambda m, F, x: x.prod(dim=1),
    "cat_kw": lambda m, F, x: m.cat(tensors=[x, x], dim=1),
    "stack_kw": lambda m, F, x: m.stack(tensors=[x, x], dim=0),
    "transpose_kw": lambda m, F, x: x.transpose(dim0=0, dim1=1),
    "reshape_kw": lambda m, F, x: x.reshape(shape=(4, 3)),
    "torch_reshape_kw": lambda m, F, x: m.reshape(x, shape=(-1,)),
    "view_neg": lambda m, F, x: x.view(-1),
    "expand_kw": lambda m, F, x: x[:1].expand(size=(3, 4)),
    "masked_fill_kw": lambda m, F, x: x.masked_fill(mask=x > 0, value=0.0),
    "where_kw": lambda m, F, x: m.where(condition=x > 0, input=x, other=x * 2),
    "clamp_kw": lambda m, F, x: x.clamp(min=-0.5, max=0.5),
    "pow_kw": lambda m, F, x: x.pow(exponent=2),
    "matmul_kw": lambda m, F, x: m.matmul(input=x, other=x.T),
    "softmax_kw": lambda m, F, x: x.softmax(dim=1),
    "F_softmax_kw": lambda m, F, x: F.softmax(input=x, dim=1),
    "F_log_softmax_kw": lambda m, F, x: F.log_softmax(input=x, dim=0),
    "gather_kw": lambda m, F, x: x.gather(dim=1, index=m.tensor([[0], [1], [2]])),
    "index_select_kw": lambda m, F, x: x.index_select(dim=0, index=m.tensor([0, 2])),
    "unsqueeze_kw": lambda m, F, x: x.unsqueeze(dim=0),
    "squeeze_kw": lambda m, F, x: x[None].squeeze(dim=0),
    "permute_kw": lambda m, F, x: x.permute(dims=(1, 0)),
    "flip_kw": lambda m, F, x: x.flip(dims=(0,)),
    "split_kw": lambda m, F, x: x.split(split_size=2, dim=1)[0],
    "chunk_kw": lambda m, F, x: x.chunk(chunks=2, dim=1)[1],
    "narrow_kw": lambda m, F, x: x.narrow(dim=1, start=1, length=2),
    "add_kw": lambda m, F, x: x.add(other=x, alpha=2),
    "torch_add_kw": lambda m, F, x: m.add(input=x, other=1.5),
    "mul_kw": lambda m, F, x: x.mul(other=3),
    "sub_kw": lambda m, F, x: m.sub(x, other=x, alpha=0.5),
    "div_kw": lambda m, F, x: x.div(other=2.0),
    "div_mode": lambda m, F, x: m.div(x, 0.3, rounding_mode="floor"),
    "repeat_tuple": lambda m, F, x: x.repeat((2, 1)),
    "flatten_kw": lambda m, F, x: x.flatten(start_dim=0, end_dim=1),
    "exp_fn": lambda m, F, x: m.exp(input=x),
    "tanh_fn": lambda m, F, x: m.tanh(x),
    "linear_kw": lambda m, F, x: F.linear(input=x, weight=x, bias=None),
    "mse_kw": lambda m, F, x: F.mse_loss(input=x, target=x * 0, reduction="sum"),
    "ce_kw": lambda m, F, x: F.cross_entropy(input=x, target=m.tensor([0, 1, 2]), reduction="mean"),
    "nll_kw": lambda m, F, x: F.nll_loss(input=x, target=m.tensor([0, 1, 2])),
    "relu_F": lambda m, F, x: F.relu(input=x),
    "leaky_F": lambda m, F, x: F.leaky_relu(x, negative_slope=0.1),
    "gelu_F": lambda m, F, x: F.gelu(x, approximate="tanh"),
    "elu_F": lambda m, F, x: F.elu(x, alpha=0.5),
    "softplus_F": lambda m, F, x: F.softplus(x, beta=2.0, threshold=10.0),
    "dropout_F": lambda m, F, x: F.dropout(x, p=0.0, training=True),
    "bce_F": lambda m, F, x: F.binary_cross_entropy(input=x.sigmoid(), target=x.sigmoid().detach()),
    "bcel_F": lambda m, F, x: F.binary_cross_entropy_with_logits(input=x, target=x.sigmoid().detach(),
                                                                 pos_weight=m.ones(4)),
    "einsum_kw": lambda m, F, x: m.einsum("ij,kj->ik", x, x),
    "outer_kw": lambda m, F, x: m.outer(x[0], vec2=x[1]),
    "dot_kw": lambda m, F, x: m.dot(x[0], x[1]),
    "mv_kw": lambda m, F, x: m.mv(x, vec=x[0]),
    "mm_kw": lambda m, F, x: m.mm(x, mat2=x.T),
    "bmm_kw": lambda m, F, x: m.bmm(x[None], mat2=x.T[None]),
    "topk": lambda m, F, x: x.topk(2, dim=1).values,
    "sort": lambda m, F, x: x.sort(dim=1, descending=True).values,
    "cumsum": lambda m, F, x: x.cumsum(dim=1),
    "abs_": lambda m, F, x: abs(x),
    "round": lambda m, F, x: x.round(),
    "item": lambda m, F, x: m.tensor(x[0, 0].item()),
    "rsqrt": lambda m, F, x: (x * x + 1).rsqrt(),
    "square": lambda m, F, x: m.square(x),
    "minimum_kw": lambda m, F, x: m.minimum(x, other=x * 0),
    "maximum_kw": lambda m, F, x: m.maximum(input=x, other=x * 0),
    "clip_kw": lambda m, F, x: m.clip(x, min=0.0),
    "broadcast_to": lambda m, F, x: m.broadcast_to(x[0], size=(2, 4)),
    "expand_as": lambda m, F, x: x[:1].expand_as(other=x),
    "T_prop": lambda m, F, x: x.mT,
}


@pytest.mark.parametrize("name", list(KEYWORD_CALLS))
def test_keyword_arguments_like_torch(name):
    """A call written with torch's keyword names (input=, other=, dim=, mat2=...) runs unchanged."""
    outs = []
    for m, F in LIBS.values():
        x = m.tensor(np.arange(12.0).reshape(3, 4) / 7 - 0.8, requires_grad=True)
        outs.append(KEYWORD_CALLS[name](m, F, x))
    assert tuple(outs[0].shape) == tuple(outs[1].shape)
    np.testing.assert_allclose(outs[0].detach().numpy().astype(float), outs[1].detach().numpy().astype(float),
                               rtol=1e-6, atol=1e-7)


# ---- comparisons promote as torch; new ops; numpy's floating-point warnings stay silent ------
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_comparisons_with_a_number_use_the_promoted_dtype(dtype):
    def run(m):
        a = m.tensor([0.1, 0.2, 1.0, 0.3], dtype=getattr(m, dtype))
        out = [a == 0.1, a != 0.1, a < 0.1, a <= 0.1, a > 0.1, a >= 0.1, 0.1 == a, 0.3 > a, a.eq(0.2), m.gt(a, 0.2),
               m.isclose(a, m.tensor(0.1, dtype=getattr(m, dtype))), m.tensor([1, 2]) == 1.5,
               m.tensor([16777217]) == 16777217.0, m.tensor([0], dtype=m.uint8) == 256, m.tensor([True]) == 1.0,
               m.tensor([1, 2]) > m.tensor(1.5, dtype=m.float64)]
        return [o.tolist() for o in out] + [a == None, a != None]  # noqa: E711
    assert run(mt) == run(torch)


NEW_OPS = {
    "diagonal": lambda m, x: x.diagonal(), "diagonal_offset": lambda m, x: x.diagonal(1, 0, 2),
    "diagonal_neg": lambda m, x: m.diagonal(x, offset=-1, dim1=-1, dim2=1), "diagonal_far": lambda m, x: x.diagonal(7),
    "diag": lambda m, x: x[0].diag(), "diag_offset": lambda m, x: x[1].diag(-1),
    "diag_fn": lambda m, x: m.diag(x[0], 2),
    "sum_to_size": lambda m, x: x.sum_to_size(3, 1), "sum_to_size_tuple": lambda m, x: x.sum_to_size((1, 4)),
    "sum_to_size_keep": lambda m, x: x.sum_to_size(2, 1, 4),
    "sum_to_size_same": lambda m, x: x.sum_to_size(2, 3, 4) * 1,
    "erf": lambda m, x: x.erf(), "erf_fn": lambda m, x: m.erf(x),
}


@pytest.mark.parametrize("name", NEW_OPS)
def test_diagonal_diag_sum_to_size_erf_as_torch(name):
    x0 = np.random.default_rng(0).standard_normal((2, 3, 4))
    res = {}
    for m in (mt, torch):
        x = m.tensor(x0, requires_grad=True)
        y = NEW_OPS[name](m, x)
        ct = m.tensor(np.random.default_rng(1).standard_normal(tuple(y.shape)))
        g, = m.autograd.grad(y, x, ct, create_graph=True)
        h = (g * g * x).sum()  # (times x: a linear op's gradient alone does not depend on x)
        g2, = m.autograd.grad(h, x)
        res[m.__name__] = (y.grad_fn.name(), tuple(y.shape), y.detach().numpy(), g.detach().numpy(), g2.numpy())
    a, b = res["microtorch"], res["torch"]
    assert a[:2] == b[:2]
    for u, v in zip(a[2:], b[2:]):
        np.testing.assert_allclose(u, v, rtol=1e-10, atol=1e-12)


def test_diagonal_is_a_view_as_in_torch():
    for m in (mt, torch):
        x = m.zeros(3, 4)
        d = x.diagonal(1)
        assert d._base is x
        d.add_(1)
        assert x.tolist() == [[0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]
    res = []
    for m in (mt, torch):
        a = m.ones(3, 3, requires_grad=True)
        b = a * 2
        b.diagonal().mul_(5)
        (b * b).sum().backward()
        res.append((b.tolist(), a.grad.tolist()))
    assert res[0] == res[1]
    with pytest.raises(RuntimeError, match="cannot be identical"):
        mt.zeros(2, 2).diagonal(0, 1, 1)
    with pytest.raises(RuntimeError, match="not expandable"):
        mt.zeros(2, 3).sum_to_size(4, 3)


SPECIAL = [0.0, -0.0, 1.0, -1.0, float("inf"), float("-inf"), float("nan"), 1e30]
WARNING_OPS = {
    "mul_zero": lambda m, x: x * 0, "mul": lambda m, x: x * x, "sub": lambda m, x: x - x,
    "add": lambda m, x: x + x.flip(0),
    "div_zero": lambda m, x: x / 0, "div": lambda m, x: x / x, "rdiv": lambda m, x: 1 / x, "pow": lambda m, x: x ** x,
    "pow_half": lambda m, x: x ** 0.5, "rpow": lambda m, x: 0.0 ** x, "log": lambda m, x: x.log(),
    "sqrt": lambda m, x: x.sqrt(), "sin": lambda m, x: x.sin(), "cos": lambda m, x: x.cos(),
    "softmax": lambda m, x: x.softmax(0), "log_softmax": lambda m, x: x.log_softmax(0), "norm": lambda m, x: x.norm(),
    "var": lambda m, x: x.var(), "logsumexp": lambda m, x: x.logsumexp(0), "prod": lambda m, x: x.prod(),
    "matmul": lambda m, x: x @ x, "gelu": lambda m, x: m.nn.functional.gelu(x),
    "softplus": lambda m, x: m.nn.functional.softplus(x), "float": lambda m, x: (x.double() * 1e300).float(),
    "bce_logits": lambda m, x: m.nn.functional.binary_cross_entropy_with_logits(x, m.ones_like(x)),
    "cross_entropy": lambda m, x: m.nn.functional.cross_entropy(x.reshape(1, -1), m.tensor([0])),
    "fmod": lambda m, x: x.fmod(0.0), "remainder": lambda m, x: x.remainder(0.0),
}


@pytest.mark.parametrize("name", WARNING_OPS)
def test_no_numpy_runtime_warnings_where_torch_is_silent(name):
    import warnings
    out = {}
    for m in (mt, torch):
        x = m.tensor(SPECIAL, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            y = WARNING_OPS[name](m, x)
            if y.requires_grad:
                g, = m.autograd.grad(y.sum(), x, create_graph=True)
                if g.requires_grad:
                    m.autograd.grad(g.sum(), x, allow_unused=True)
        out[m.__name__] = y.detach().numpy()
    if name != "gelu":  # (torch's gelu(inf) is nan)
        np.testing.assert_allclose(out["microtorch"], out["torch"], rtol=1e-5, equal_nan=True)
