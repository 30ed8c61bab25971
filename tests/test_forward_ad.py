"""Forward-mode AD (microtorch.autograd.forward_ad) against torch's: the jvp of every op, its
composition with reverse mode, nesting, custom Functions, and torch's errors."""
import zlib

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfwad

import microtorch as mt
import microtorch.autograd.forward_ad as fwad
from microtorch.autograd.function import Function, intercept, stop_intercepting


# ---- inputs: a spec per argument ---------------------------------------------------------------------
def F(*shape):                 # a float64 input, random normal
    return ("f", shape)


def P(*shape):                 # positive
    return ("p", shape)


def U(*shape):                 # in (-0.9, 0.9)
    return ("u", shape)


def C(*shape):                 # complex128
    return ("c", shape)


def K(*shape):                 # positive, and a constant: no tangent
    return ("k", shape)


def Q(*shape):                 # a probability in (0.1, 0.9)
    return ("q", shape)


def I(high, *shape):           # int64 indices in [0, high)
    return ("i", shape, high)


def B(*shape):                 # a bool mask
    return ("b", shape)


def make(spec, rng):
    if not isinstance(spec, tuple) or spec[0] not in "fpucibkq":
        return spec
    kind, shape = spec[0], spec[1]
    if kind == "f":
        return rng.standard_normal(shape)
    if kind in "pk":
        return rng.uniform(0.5, 2.0, shape)
    if kind == "q":
        return rng.uniform(0.1, 0.9, shape)
    if kind == "u":
        return rng.uniform(-0.9, 0.9, shape)
    if kind == "c":
        return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    if kind == "i":
        return rng.integers(0, spec[2], shape)
    return rng.random(shape) > 0.5


def nnf(lib):
    return lib.nn.functional


# (id, f(lib, *args), argument specs): f is written once, for torch and microtorch alike
OPS = [
    ("add", lambda L, a, b: a + b, [F(2, 3), F(3)]),
    ("add_alpha", lambda L, a, b: L.add(a, b, alpha=2.5), [F(2, 3), F(2, 3)]),
    ("add_scalar", lambda L, a: a + 1.5, [F(3)]),
    ("sub", lambda L, a, b: a - b, [F(2, 3), F(2, 1)]),
    ("sub_alpha", lambda L, a, b: L.sub(a, b, alpha=0.5), [F(3), F(3)]),
    ("rsub", lambda L, a: 2.0 - a, [F(3)]),
    ("mul", lambda L, a, b: a * b, [F(2, 3), F(3)]),
    ("mul_scalar", lambda L, a: a * 3.0, [F(3)]),
    ("div", lambda L, a, b: a / b, [F(2, 3), P(3)]),
    ("rdiv", lambda L, a: 2.0 / a, [P(3)]),
    ("pow_scalar", lambda L, a: a ** 3, [F(4)]),
    ("pow_half", lambda L, a: a ** 0.5, [P(4)]),
    ("pow_tensor", lambda L, a, b: a ** b, [P(4), F(4)]),
    ("rpow", lambda L, a: 2.0 ** a, [F(4)]),
    ("neg", lambda L, a: -a, [F(3)]),
    ("exp", lambda L, a: a.exp(), [F(3)]),
    ("log", lambda L, a: a.log(), [P(3)]),
    ("log2", lambda L, a: L.log2(a), [P(3)]),
    ("log10", lambda L, a: L.log10(a), [P(3)]),
    ("log1p", lambda L, a: L.log1p(a), [P(3)]),
    ("expm1", lambda L, a: L.expm1(a), [F(3)]),
    ("sqrt", lambda L, a: a.sqrt(), [P(3)]),
    ("rsqrt", lambda L, a: a.rsqrt(), [P(3)]),
    ("sin", lambda L, a: a.sin(), [F(3)]),
    ("cos", lambda L, a: a.cos(), [F(3)]),
    ("tan", lambda L, a: a.tan(), [U(3)]),
    ("tanh", lambda L, a: a.tanh(), [F(3)]),
    ("sigmoid", lambda L, a: a.sigmoid(), [F(3)]),
    ("reciprocal", lambda L, a: a.reciprocal(), [P(3)]),
    ("abs", lambda L, a: a.abs(), [F(5)]),
    ("asin", lambda L, a: a.asin(), [U(3)]),
    ("acos", lambda L, a: a.acos(), [U(3)]),
    ("atan", lambda L, a: a.atan(), [F(3)]),
    ("sinh", lambda L, a: a.sinh(), [F(3)]),
    ("cosh", lambda L, a: a.cosh(), [F(3)]),
    ("erf", lambda L, a: L.erf(a) if L is torch else mt.ops.erf(a), [F(3)]),
    ("square", lambda L, a: L.square(a), [F(3)]),
    ("sign", lambda L, a: a.sign() * a, [F(3)]),
    ("relu", lambda L, a: a.relu(), [F(6)]),
    ("leaky_relu", lambda L, a: nnf(L).leaky_relu(a, 0.2), [F(6)]),
    ("elu", lambda L, a: nnf(L).elu(a), [F(6)]),
    ("gelu", lambda L, a: nnf(L).gelu(a), [F(6)]),
    ("gelu_tanh", lambda L, a: nnf(L).gelu(a, approximate="tanh"), [F(6)]),
    ("softplus", lambda L, a: nnf(L).softplus(a, beta=2.0), [F(6)]),
    ("clamp", lambda L, a: a.clamp(-0.5, 0.5), [F(6)]),
    ("clamp_tensor", lambda L, a, lo, hi: L.clamp(a, lo, hi), [F(6), F(6), F(6)]),
    ("maximum", lambda L, a, b: L.maximum(a, b), [F(6), F(6)]),
    ("minimum", lambda L, a, b: L.minimum(a, b), [F(6), F(6)]),
    ("where", lambda L, c, a, b: L.where(c, a, b), [B(2, 3), F(2, 3), F(3)]),
    ("where_scalar", lambda L, a: L.where(a > 0, a, 0.0), [F(6)]),
    ("conj_real", lambda L, z: (z * z.conj()).real + z.imag, [C(3)]),
    ("complex_mul", lambda L, z, w: (z * w).exp(), [C(3), C(3)]),
    ("complex_abs", lambda L, z: z.abs(), [C(3)]),
    ("angle", lambda L, z: z.angle(), [C(3)]),
    ("sum", lambda L, a: a.sum(), [F(2, 3)]),
    ("sum_dim", lambda L, a: a.sum(1, keepdim=True), [F(2, 3)]),
    ("mean", lambda L, a: a.mean(), [F(2, 3)]),
    ("mean_dim", lambda L, a: a.mean((0, 2)), [F(2, 3, 2)]),
    ("var", lambda L, a: a.var(), [F(2, 3)]),
    ("var_dim", lambda L, a: a.var(1, keepdim=True), [F(2, 3)]),
    ("std", lambda L, a: a.std(0), [F(3, 2)]),
    ("var_mean", lambda L, a: L.var_mean(a, 1), [F(2, 3)]),
    ("std_mean", lambda L, a: L.std_mean(a, (0, 1), keepdim=True, correction=0), [F(3, 2)]),
    ("prod", lambda L, a: a.prod(), [F(4)]),
    ("prod_dim", lambda L, a: a.prod(1), [F(2, 3)]),
    ("prod_zero", lambda L, a: (a * L.tensor([1.0, 0.0, 1.0], dtype=L.float64)).prod(), [F(3)]),
    ("amax", lambda L, a: a.amax(1), [F(2, 4)]),
    ("amin", lambda L, a: a.amin(), [F(2, 4)]),
    ("max", lambda L, a: a.max(), [F(5)]),
    ("min", lambda L, a: a.min(), [F(5)]),
    ("max_dim", lambda L, a: a.max(1)[0], [F(3, 4)]),
    ("min_dim", lambda L, a: a.min(0, keepdim=True)[0], [F(3, 4)]),
    ("logsumexp", lambda L, a: a.logsumexp(1), [F(3, 4)]),
    ("norm", lambda L, a: a.norm(), [F(5)]),
    ("norm_dim", lambda L, a: a.norm(dim=1), [F(2, 3)]),
    ("norm_1", lambda L, a: a.norm(p=1), [F(5)]),
    ("norm_3", lambda L, a: a.norm(p=3), [F(5)]),
    ("norm_inf", lambda L, a: a.norm(p=float("inf")), [F(5)]),
    ("cumsum", lambda L, a: a.cumsum(1), [F(2, 3)]),
    ("cumsum_dtype", lambda L, a: a.cumsum(1, dtype=L.float32), [F(2, 3)]),
    ("block_diag", lambda L, a, b, c: L.block_diag(a, b, c), [F(2, 3), F(2), F()]),
    ("reshape", lambda L, a: a.reshape(3, 2), [F(2, 3)]),
    ("view", lambda L, a: a.view(-1), [F(2, 3)]),
    ("flatten", lambda L, a: a.flatten(), [F(2, 3, 2)]),
    ("expand", lambda L, a: a.expand(4, 3), [F(1, 3)]),
    ("broadcast_to", lambda L, a: L.broadcast_to(a, (2, 3)), [F(3)]),
    ("clone", lambda L, a: a.clone(), [F(3)]),
    ("squeeze", lambda L, a: a.squeeze(), [F(1, 3, 1)]),
    ("squeeze_dim", lambda L, a: a.squeeze(0), [F(1, 3)]),
    ("unsqueeze", lambda L, a: a.unsqueeze(1), [F(3)]),
    ("permute", lambda L, a: a.permute(2, 0, 1), [F(2, 3, 4)]),
    ("transpose", lambda L, a: a.transpose(0, 2), [F(2, 3, 4)]),
    ("t", lambda L, a: a.t(), [F(2, 3)]),
    ("mT", lambda L, a: a.mT, [F(2, 3, 4)]),
    ("repeat", lambda L, a: a.repeat(2, 1, 2), [F(2, 3)]),
    ("cat", lambda L, a, b: L.cat([a, b], 1), [F(2, 3), F(2, 2)]),
    ("stack", lambda L, a, b: L.stack([a, b], 1), [F(2, 3), F(2, 3)]),
    ("split", lambda L, a: a.split([1, 2], 1)[1], [F(2, 3)]),
    ("chunk", lambda L, a: a.chunk(2)[0], [F(4, 2)]),
    ("unbind", lambda L, a: a.unbind(1)[2], [F(2, 3)]),
    ("flip", lambda L, a: a.flip(0), [F(3, 2)]),
    ("narrow", lambda L, a: a.narrow(1, 1, 2), [F(2, 4)]),
    ("diagonal", lambda L, a: a.diagonal(1, 0, 2), [F(2, 3, 4)]),
    ("diag", lambda L, a: a.diag(-1), [F(3, 4)]),
    ("tril", lambda L, a: L.tril(a, 1), [F(2, 3, 4)]),
    ("triu", lambda L, a: a.triu(-1), [F(3, 4)]),
    ("masked_select", lambda L, a: a.masked_select(L.tensor([True, False, True])), [F(2, 3)]),
    ("div_number", lambda L, a: a / 4.0, [F(3)]),
    ("movedim", lambda L, a: a.movedim(0, 2), [F(2, 3, 4)]),
    ("select", lambda L, a: a[1], [F(3, 2)]),
    ("slice", lambda L, a: a[:, 1:3], [F(2, 4)]),
    ("slice_step", lambda L, a: a[::2], [F(5)]),
    ("index", lambda L, a, i: a[i], [F(5, 2), I(5, 3)]),
    ("index_2d", lambda L, a, i, j: a[i, j], [F(4, 3), I(4, 2), I(3, 2)]),
    ("index_mask", lambda L, a, m: a[m], [F(2, 3), B(2, 3)]),
    ("index_select", lambda L, a, i: a.index_select(1, i), [F(2, 5), I(5, 4)]),
    ("gather", lambda L, a, i: a.gather(1, i), [F(3, 4), I(4, 3, 2)]),
    ("take", lambda L, a, i: L.take(a, i), [F(3, 4), I(12, 5)]),
    ("masked_fill", lambda L, a, m: a.masked_fill(m, 2.0), [F(2, 3), B(2, 3)]),
    ("matmul_mm", lambda L, a, b: a @ b, [F(2, 3), F(3, 4)]),
    ("matmul_mv", lambda L, a, b: a @ b, [F(2, 3), F(3)]),
    ("matmul_vm", lambda L, a, b: a @ b, [F(3), F(3, 4)]),
    ("matmul_dot", lambda L, a, b: a.dot(b), [F(3), F(3)]),
    ("matmul_batched", lambda L, a, b: a @ b, [F(2, 2, 3), F(3, 4)]),
    ("matmul_broadcast", lambda L, a, b: a @ b, [F(2, 1, 2, 3), F(3, 3, 2)]),
    ("bmm", lambda L, a, b: L.bmm(a, b), [F(2, 2, 3), F(2, 3, 2)]),
    ("addmm", lambda L, c, a, b: L.addmm(c, a, b), [F(4), F(2, 3), F(3, 4)]),
    ("outer", lambda L, a, b: L.outer(a, b), [F(3), F(2)]),
    ("einsum", lambda L, a, b: L.einsum("ij,jk->ik", a, b), [F(2, 3), F(3, 2)]),
    ("einsum_trace", lambda L, a, b: L.einsum("ii,j->j", a, b), [F(3, 3), F(2)]),
    ("einsum_three", lambda L, a, b, c: L.einsum("ij,jk,kl->il", a, b, c), [F(2, 3), F(3, 2), F(2, 4)]),
    ("bilinear", lambda L, a, b, w: nnf(L).bilinear(a, b, w), [F(2, 3), F(2, 4), F(5, 3, 4)]),
    ("softmax", lambda L, a: a.softmax(1), [F(2, 4)]),
    ("log_softmax", lambda L, a: a.log_softmax(0), [F(2, 4)]),
    ("linear", lambda L, x, w, b: nnf(L).linear(x, w, b), [F(2, 3), F(4, 3), F(4)]),
    ("linear_3d", lambda L, x, w, b: nnf(L).linear(x, w, b), [F(2, 2, 3), F(4, 3), F(4)]),
    ("mse_loss", lambda L, a, b: nnf(L).mse_loss(a, b), [F(2, 3), F(2, 3)]),
    ("mse_loss_none", lambda L, a, b: nnf(L).mse_loss(a, b, reduction="none"), [F(2, 3), F(2, 3)]),
    ("l1_loss", lambda L, a, b: nnf(L).l1_loss(a, b, reduction="sum"), [F(2, 3), F(2, 3)]),
    ("nll_loss", lambda L, a, t: nnf(L).nll_loss(a, t), [F(3, 4), I(4, 3)]),
    ("nll_loss_none", lambda L, a, t: nnf(L).nll_loss(a, t, reduction="none"), [F(3, 4), I(4, 3)]),
    ("cross_entropy", lambda L, a, t: nnf(L).cross_entropy(a, t), [F(3, 4), I(4, 3)]),
    ("cross_entropy_w", lambda L, a, t, w: nnf(L).cross_entropy(a, t, weight=w, label_smoothing=0.1),
     [F(3, 4), I(4, 3), K(4)]),
    ("cross_entropy_probs", lambda L, a, p: nnf(L).cross_entropy(a, p.softmax(1)), [F(3, 4), F(3, 4)]),
    ("cross_entropy_2d", lambda L, a, t: nnf(L).cross_entropy(a, t), [F(2, 3, 2, 2), I(3, 2, 2, 2)]),
    ("bce", lambda L, p, y: nnf(L).binary_cross_entropy(p, y), [Q(2, 3), Q(2, 3)]),
    ("complex", lambda L, a, b: L.view_as_real(L.complex(a, b)), [F(3), F(3)]),
    ("polar", lambda L, a, b: L.view_as_real(L.polar(a, b)), [P(3), F(3)]),
    ("cosine_similarity", lambda L, a, b: nnf(L).cosine_similarity(a, b), [F(3, 4), F(3, 4)]),
    ("bce_logits", lambda L, x, y, pw: nnf(L).binary_cross_entropy_with_logits(x, y, pos_weight=pw),
     [F(2, 3), Q(2, 3), K(3)]),
    ("bce_logits_w", lambda L, x, y, w: nnf(L).binary_cross_entropy_with_logits(x, y, weight=w, reduction="sum"),
     [F(2, 3), Q(2, 3), K(3)]),
    ("conv1d", lambda L, x, w, b: nnf(L).conv1d(x, w, b, padding=1), [F(2, 2, 5), F(3, 2, 3), F(3)]),
    ("conv2d", lambda L, x, w, b: nnf(L).conv2d(x, w, b, stride=2, padding=1), [F(1, 2, 5, 5), F(3, 2, 3, 3), F(3)]),
    ("conv2d_groups", lambda L, x, w: nnf(L).conv2d(x, w, groups=2, dilation=2), [F(1, 4, 6, 6), F(2, 2, 2, 2)]),
    ("max_pool2d", lambda L, x: nnf(L).max_pool2d(x, 2), [F(1, 2, 4, 4)]),
    ("avg_pool2d", lambda L, x: nnf(L).avg_pool2d(x, 2, padding=1), [F(1, 2, 4, 4)]),
    ("embedding", lambda L, i, w: nnf(L).embedding(i, w), [I(5, 2, 3), F(5, 4)]),
    ("unfold", lambda L, x: nnf(L).unfold(x, 2), [F(1, 2, 3, 3)]),
    ("as_strided", lambda L, x: x.as_strided((3, 3), (2, 1), 1), [F(12)]),
    ("as_strided_overlap", lambda L, x: x.expand(3, 4).as_strided((2, 3), (1, 1)), [F(4)]),
    ("fold", lambda L, x: nnf(L).fold(x, (3, 3), 2), [F(1, 8, 4)]),
    ("layer_norm", lambda L, x, w, b: nnf(L).layer_norm(x, (3,), w, b), [F(2, 3), F(3), F(3)]),
    ("batch_norm_train", lambda L, x, w, b: nnf(L).batch_norm(x, None, None, w, b, training=True),
     [F(4, 3), F(3), F(3)]),
    ("batch_norm_eval", lambda L, x, w, b: nnf(L).batch_norm(x, L.full((3,), 0.2, dtype=x.dtype),
                                                             L.full((3,), 1.5, dtype=x.dtype), w, b), [F(4, 3), F(3), F(3)]),
    ("to_float32", lambda L, a: a.float().double(), [F(3)]),
    ("zero_", lambda L, a: a.clone().zero_() + a, [F(3)]),
    ("fill_", lambda L, a, v: a.clone().fill_(v) * a, [F(3), F()]),
    ("fill_scalar", lambda L, a: a.clone().fill_(2.0) * a, [F(3)]),
    # two internal ops that only backward passes create, called directly
    ("basic_index", lambda L, a: a[1:3] if L is torch else mt.ops.index._BasicIndex.apply(a, (slice(1, 3),)),
     [F(4)]),
    ("as_strided_scatter", lambda L, g: (torch.zeros(6, dtype=g.dtype).index_add(0, torch.tensor([4, 1]), g)
                                         .reshape(2, 3) if L is torch else
                                         mt.ops.inplace.AsStridedScatter.apply(g, (2, 3), np.array([4, 1]))), [F(2)]),
    ("copy_", lambda L, a, b: a.clone().copy_(b), [F(2, 3), F(3)]),
    ("mul_", lambda L, a, b: a.clone().mul_(b), [F(3), F(3)]),
    ("setitem_index", lambda L, a, v, i: _setitem(a, i, v), [F(4), F(2), I(4, 2)]),
    ("setitem_slice", lambda L, a, v: _setitem(a, slice(1, 3), v), [F(4), F(2)]),
]
from test_api_ops import FORWARD_AD_OPS  # noqa: E402  (ops added for torch's API: tests/test_api_ops.py)

OPS += FORWARD_AD_OPS
OPS += [  # nn2's ops that torch differentiates forward too, and stft's FFTs
    ("stft_r2c", lambda L, x: L.stft(x, 8, hop_length=3, window=L.ones(8, dtype=x.dtype), return_complex=True),
     [F(20)]),
    ("stft_c2c", lambda L, x: L.stft(x, 8, hop_length=3, window=L.ones(8, dtype=x.dtype), return_complex=True),
     [("c", (20,))]),
    ("group_norm", lambda L, x, w, b: nnf(L).group_norm(x, 3, w, b), [F(2, 6, 3), F(6), F(6)]),
]


def _setitem(a, key, v):
    out = a * 1
    out[key] = v
    return out


def _inputs(specs, seed):
    rng = np.random.default_rng(seed)
    values = [make(s, rng) for s in specs]
    tangents = [rng.standard_normal(np.shape(v)) + (1j * rng.standard_normal(np.shape(v)) if np.iscomplexobj(v)
                                                     else 0) if isinstance(v, np.ndarray) and v.dtype.kind in "fc"
                and s[0] != "k" else None for s, v in zip(specs, values)]
    return values, tangents


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [out]


def _run(lib, fw, f, values, tangents):
    conv = (lambda a: torch.from_numpy(np.array(a))) if lib is torch else mt.tensor
    with fw.dual_level():
        args = []
        for v, t in zip(values, tangents):
            if not isinstance(v, np.ndarray):
                args.append(v)
            elif t is None:
                args.append(conv(v))
            else:
                args.append(fw.make_dual(conv(v), conv(t)))
        outs = _flat(f(lib, *args))
        result = []
        for o in outs:
            p, t = fw.unpack_dual(o)
            result.append((p.detach().numpy(), None if t is None else t.detach().numpy()))
    return result


def _spd(L, a):  # a positive-definite matrix made from a (its tangent flows through)
    return a @ a.mT + 3 * L.eye(a.shape[-1], dtype=L.float64)


def _tri(L, a):  # a well-conditioned matrix (for the triangular and LU solves)
    return a + 3 * L.eye(a.shape[-1], dtype=L.float64)


OPS += [  # linalg row (issue 13): decompositions, solves, scatter_reduce, istft
    ("solve_triangular", lambda L, a, b: L.linalg.solve_triangular(_tri(L, a), b, upper=True), [F(3, 3), F(3, 2)]),
    ("triangular_solve", lambda L, b, a: L.triangular_solve(b, _tri(L, a), False), [F(3, 2), F(3, 3)]),
    ("cholesky_solve", lambda L, b, a: L.cholesky_solve(b, L.linalg.cholesky(_spd(L, a))), [F(3, 2), F(3, 3)]),
    ("cholesky_inverse", lambda L, a: L.cholesky_inverse(L.linalg.cholesky(_spd(L, a))), [F(3, 3)]),
    ("linalg_qr", lambda L, a: L.linalg.qr(a), [F(4, 3)]),
    ("linalg_lu_factor", lambda L, a: L.linalg.lu_factor(a)[0], [F(3, 4)]),
    ("linalg_lu", lambda L, a: L.linalg.lu(a)[1:], [F(4, 3)]),
    ("lu_unpack", lambda L, a: L.lu_unpack(*L.linalg.lu_factor(a))[1:], [F(3, 3)]),
    ("linalg_lu_solve", lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(_tri(L, a)), b, adjoint=True),
     [F(3, 3), F(3, 2)]),
    ("linalg_solve", lambda L, a, b: L.linalg.solve(_tri(L, a), b), [F(3, 3), F(3, 2)]),
    ("linalg_inv_ex", lambda L, a: L.linalg.inv_ex(_tri(L, a))[0], [F(3, 3)]),
    ("linalg_eigh", lambda L, a: L.linalg.eigvalsh(_spd(L, a)), [F(3, 3)]),
    ("linalg_eigvals", lambda L, a: L.view_as_real(L.linalg.eigvals(a)), [F(3, 3)]),
    ("scatter_reduce_amax", lambda L, a, b: a.scatter_reduce(0, _targets(L, [0, 2, 0], [2, 2, 1]), b, "amax"),
     [F(3, 3), F(2, 3)]),
    ("istft", lambda L, x: L.istft(L.stft(x, 8, 2, window=L.ones(8, dtype=L.float64), return_complex=True), 8, 2,
                                   window=L.ones(8, dtype=L.float64)), [F(24)]),
]
OPS += [  # torch.fft (microtorch/fft.py): its three FFT ops over several dims, and conj_physical
    ("fft_rfft2", lambda L, x: L.fft.rfft2(x, s=(3, 6)), [F(4, 5)]),
    ("fft_ihfft2", lambda L, x: L.fft.ihfft2(x, norm="ortho"), [F(4, 5)]),
    ("fft_irfftn", lambda L, z: L.fft.irfftn(z, s=(4, 7)), [C(4, 5)]),
    ("fft_hfft2", lambda L, z: L.fft.hfft2(z, norm="forward"), [C(3, 4)]),
    ("conj_physical", lambda L, z: L.conj_physical(z), [C(3)]),
]
from test_special8_forward import FORWARD_AD_SPECIAL  # noqa: E402  (torch.special's new ops: special8's row)

OPS += FORWARD_AD_SPECIAL
OPS += [  # rounding and modulo (ops/rounding.py): steps have a zero tangent, fmod/remainder pass it through
    ("floor", lambda L, a: a.floor(), [F(3, 2)]),
    ("ceil", lambda L, a: a.ceil(), [F(3, 2)]),
    ("trunc", lambda L, a: a.trunc(), [F(3, 2)]),
    ("round", lambda L, a: a.round(), [F(3, 2)]),
    ("round_decimals", lambda L, a: a.round(decimals=1), [F(3, 2)]),
    ("fmod_number", lambda L, a: a.fmod(0.7), [F(3, 2)]),
    ("fmod_tensor", lambda L, a, b: a.fmod(b), [F(3, 2), F(3, 2)]),
    ("remainder_number", lambda L, a: a % 0.7, [F(3, 2)]),
    ("remainder_tensor", lambda L, a, b: a.remainder(b), [F(3, 2), F(2)]),
    ("div_floor", lambda L, a, b: a.div(b, rounding_mode="floor"), [F(3, 2), F(3, 2)]),
]




@pytest.mark.parametrize("name,f,specs", OPS, ids=[o[0] for o in OPS])
def test_jvp_equals_torch(name, f, specs):
    values, tangents = _inputs(specs, seed=zlib.crc32(name.encode()))
    ours = _run(mt, fwad, f, values, tangents)
    theirs = _run(torch, tfwad, f, values, tangents)
    assert len(ours) == len(theirs)
    for (p, t), (tp, tt) in zip(ours, theirs):
        np.testing.assert_allclose(p, tp, rtol=1e-6, atol=1e-8, err_msg=f"{name}: primal")
        if tt is None:
            assert t is None or np.allclose(t, 0), f"{name}: torch has no tangent, microtorch has {t}"
        else:
            assert t is not None, f"{name}: no tangent"
            np.testing.assert_allclose(t, tt, rtol=1e-6, atol=1e-8, err_msg=f"{name}: tangent")


# ---- forward over reverse: the jvp of a gradient runs the jvp rules of the backward ops ------------------
FWD_OVER_REV = [
    ("relu_mlp", lambda L, x, w: (nnf(L).linear(x, w).relu() ** 2).sum(), [F(2, 3), F(4, 3)]),
    ("leaky", lambda L, x: nnf(L).leaky_relu(x, 0.1).pow(3).sum(), [F(5)]),
    ("elu", lambda L, x: nnf(L).elu(x, 0.7).pow(3).sum(), [F(5)]),  # EluBackward has a jvp of its own
    ("gelu", lambda L, x: nnf(L).gelu(x).pow(3).sum(), [F(5)]),  # so has GeluBackward
    ("gelu_tanh", lambda L, x: nnf(L).gelu(x, approximate="tanh").pow(3).sum(), [F(5)]),
    ("tanh_sigmoid", lambda L, x: (x.tanh() * x.sigmoid() ** 2).sum(), [F(5)]),
    ("scalar_overloads", lambda L, x: (x.tan() + (x * x + 2).acosh()).sum(), [F(5)]),  # AddBackward1, SubBackward1
    ("backward_nodes", lambda L, x: (nnf(L).softplus(x, 2.0, 1.0) * nnf(L).hardswish(x * 3)  # (their backward
                                     + nnf(L).logsigmoid(x) ** 2).sum(), [F(5)]),  # ops' own jvps)
    ("glu_backward", lambda L, x: nnf(L).glu(x, 0).sin().sum(), [F(6, 2)]),  # (GluBackward's jvp)
    ("prelu_backward", lambda L, x, w: (nnf(L).prelu(x, w) ** 3).sum(), [F(2, 3, 2), F(3)]),  # (PreluBackward's)
    ("inplace_activations", lambda L, x: ((nnf(L).elu(x * 1, 0.5, inplace=True) + nnf(L).celu(x * 1, 0.3, inplace=True)
                                           + nnf(L).leaky_relu(x * 1, 0.2, inplace=True)) ** 2).sum(), [F(5)]),
    ("cross_entropy", lambda L, x, t: nnf(L).cross_entropy(x, t), [F(3, 4), I(4, 3)]),
    ("cross_entropy_2d", lambda L, x, t: nnf(L).cross_entropy(x, t, reduction="sum"), [F(2, 3, 2, 2), I(3, 2, 2, 2)]),
    ("indexing", lambda L, x, i: (x[i] ** 2).sum() + (x[1:3] ** 3).sum() + x[0, 1] ** 2, [F(4, 3), I(4, 3)]),
    ("gather", lambda L, x, i: (x.gather(1, i) ** 2).sum() + x.max(1)[0].exp().sum(), [F(3, 4), I(4, 3, 2)]),
    ("broadcast", lambda L, x, y: ((x + y) ** 2 * y).sum(), [F(2, 3), F(3)]),
    ("conv_pool", lambda L, x, w: (nnf(L).max_pool2d(nnf(L).conv2d(x, w, padding=1), 2) ** 2).sum(),
     [F(1, 2, 4, 4), F(2, 2, 3, 3)]),
    ("avg_pool", lambda L, x: (nnf(L).avg_pool2d(x, 2) ** 2).sum(), [F(1, 1, 4, 4)]),
    ("embedding", lambda L, w, i: (nnf(L).embedding(i, w) ** 2).sum(), [F(5, 3), I(5, 4)]),
    ("bce_logits", lambda L, x, y: nnf(L).binary_cross_entropy_with_logits(x, y), [F(4), Q(4)]),
    ("smooth_l1", lambda L, x, y: nnf(L).smooth_l1_loss(x, y, beta=1.5), [F(5), F(5)]),  # (its backward op's jvp)
    ("bce", lambda L, x, y: nnf(L).binary_cross_entropy(x.sigmoid(), y.sigmoid()), [F(5), F(5)]),  # (ditto)
    ("softmax_prod", lambda L, x: (x.softmax(0) * x.prod()).sum() + x.norm() + x.logsumexp(0), [F(4)]),
    ("diagonal", lambda L, x: (x.diagonal(1) ** 3).sum() + (x.diag() ** 2).sum(), [F(3, 4)]),
    ("view_write", lambda L, x: (_setitem(x, slice(0, 2), x[2:4] ** 2) ** 2).sum(), [F(5)]),
    ("index_writes", lambda L, x, s: (x.index_select(0, L.tensor([1, 1])) ** 2).sum() + (x.take(L.tensor([0, 3]))
                                       ** 2).sum() + (x.masked_select(x > 0) ** 3).sum() + (x.index_add(
                                       0, L.tensor([0]), s) ** 2).sum() + (x.masked_scatter(x > 0, s.expand(2, 3))
                                       ** 2).sum() + (x.put(L.tensor([1]), s[0, :1]) ** 2).sum(), [F(2, 3), F(1, 3)]),
    ("sort_cummax_reflect", lambda L, x: (x.sort(1)[0] ** 2 * x).sum() + (x.cummax(1)[0] ** 2).sum()
     + (nnf(L).pad(x[None], (2, 1), mode="reflect") ** 2).sum(), [F(2, 4)]),
]
from test_api_nn_spatial import FWD_OVER_REV_SPATIAL  # noqa: E402  (nn1: the spatial ops)

FWD_OVER_REV += FWD_OVER_REV_SPATIAL
FWD_OVER_REV += [  # backward-only ops of issue 13's Tensor methods: i0' = i1, unfold's adjoint
    ("i0", lambda L, x: (x.i0() * x).sum(), [F(5)]),
    ("unfold", lambda L, x: (x.unfold(0, 3, 2) ** 2).sum(), [F(7)]),
]


def _jvp_of_grad(lib, func, conv, f, values, tangents):
    diff = [k for k, v in enumerate(values) if isinstance(v, np.ndarray) and v.dtype.kind == "f"]
    args = [conv(v) if isinstance(v, np.ndarray) else v for v in values]

    def g(*d):
        full = list(args)
        for k, x in zip(diff, d):
            full[k] = x
        return f(lib, *full)
    return func.jvp(func.grad(g, argnums=tuple(range(len(diff)))), tuple(args[k] for k in diff),
                    tuple(conv(tangents[k]) for k in diff))


@pytest.mark.parametrize("name,f,specs", FWD_OVER_REV, ids=[o[0] for o in FWD_OVER_REV])
def test_jvp_of_grad_equals_torch(name, f, specs):
    import microtorch.func as mfunc
    import torch.func as tfunc
    values, tangents = _inputs(specs, seed=zlib.crc32(name.encode()))
    ours = _jvp_of_grad(mt, mfunc, mt.tensor, f, values, tangents)
    theirs = _jvp_of_grad(torch, tfunc, lambda a: torch.from_numpy(np.array(a)), f, values, tangents)
    for a, b in zip(_flat(ours), _flat(theirs)):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-8, err_msg=name)


# ---- ops whose forward mode torch has not implemented: our jvp against central differences ---------------
def _targets(L, *rows):
    return L.tensor(rows)


JVP_NOT_IN_TORCH = [
    ("cdist_p1", lambda L, a, b: L.cdist(a, b, p=1.0), [F(3, 2), F(4, 2)]),
    ("cdist_p2", lambda L, a, b: L.cdist(a, b), [F(3, 2), F(4, 2)]),
    ("cdist_mm", lambda L, a, b: L.cdist(a, b), [F(30, 2), F(4, 2)]),  # over 25 rows: torch's matmul form
    ("pdist", lambda L, a: nnf(L).pdist(a), [F(4, 3)]),
    ("conv_tbc", lambda L, x, w, b: nnf(L).conv_tbc(x, w, b, 1), [F(5, 2, 3), F(3, 3, 4), F(4)]),
    ("multi_margin", lambda L, x: nnf(L).multi_margin_loss(x, _targets(L, 0, 2, 1)), [F(3, 4)]),
    ("multilabel_margin", lambda L, x: nnf(L).multilabel_margin_loss(x, _targets(L, [0, 2, -1], [1, -1, 0])),
     [F(2, 3)]),
    ("embedding_bag", lambda L, w: nnf(L).embedding_bag(_targets(L, 0, 2, 1, 1), w, _targets(L, 0, 2)), [F(3, 4)]),
    ("ctc", lambda L, x: nnf(L).ctc_loss(x.log_softmax(2), _targets(L, [1, 2]), _targets(L, 4), _targets(L, 2)),
     [F(4, 1, 3)]),
    ("sdpa_4d", lambda L, q, k, v: nnf(L).scaled_dot_product_attention(q, k, v), [F(1, 2, 3, 4), F(1, 2, 5, 4),
                                                                                   F(1, 2, 5, 4)]),
    ("cross_map_lrn", lambda L, x: L.nn.CrossMapLRN2d(3)(x), [P(1, 4, 2, 2)]),
]


JVP_NOT_IN_TORCH += [  # linalg row: torch 2.13's tangent of scatter_reduce's prod is zero, not the derivative
    ("scatter_reduce_prod", lambda L, a, b: a.scatter_reduce(0, _targets(L, [0, 2, 0], [2, 2, 1]), b, "prod"),
     [F(3, 3), F(2, 3)]),
]


@pytest.mark.parametrize("name,f,specs", JVP_NOT_IN_TORCH, ids=[o[0] for o in JVP_NOT_IN_TORCH])
def test_jvp_where_torch_has_none_equals_central_differences(name, f, specs):
    values, tangents = _inputs(specs, seed=zlib.crc32(name.encode()))
    ours = _run(mt, fwad, f, values, tangents)
    eps = 1e-6

    def at(sign):
        moved = [v + sign * eps * t if t is not None else v for v, t in zip(values, tangents)]
        return [o.detach().numpy() for o in _flat(f(mt, *[mt.tensor(v) if isinstance(v, np.ndarray) else v
                                                           for v in moved]))]
    for (p, t), hi, lo in zip(ours, at(1), at(-1)):
        np.testing.assert_allclose(t, (hi - lo) / (2 * eps), rtol=1e-5, atol=1e-7, err_msg=name)


# ---- every op has a jvp rule, and the tests above run it -------------------------------------------------
def _op_classes():
    import microtorch.nn.functional  # noqa: F401  (loads every op module)
    from microtorch.ops._op import Op
    seen, stack = set(), [Op]
    while stack:
        for sub in stack.pop().__subclasses__():
            if sub not in seen:
                seen.add(sub)
                stack.append(sub)
    return seen


NO_JVP_NEEDED = {"ViewAsComplexNoop",  # has no forward at all
                 "FirstOrderOnly", "HardsigmoidBackward",  # backward-only ops whose jvp raises, as torch's
                 "Cholesky", "Igamma", "Igammac", "Nextafter",  # torch has no forward mode for them: theirs raise
                 "Zeta", "ZetaNumberInput", "ZetaNumberOther"}  # (special.zeta: tests/test_args6_special.py)
NO_JVP_NEEDED |= {"IndexReduce", "Heaviside", "Geqrf", "LdlFactor", "LdlSolve",  # linalg row: torch
                  # has no forward mode for them either
                  "ScatterLegacyReduce",  # (scatter's reduce=: torch's node is NotImplemented)
                  "NoDoubleBackward",  # (scatter_reduce prod's gradient passed on as it is; its jvp is the identity)
                  "FloorDivide", "RemainderOfNumber"}  # no derivative in torch either (their jvp raises torch's error)
NO_JVP_NEEDED |= {"NoDerivative"}  # (the base class of Heaviside and FloorDivide: not an op of its own)
NO_JVP_NEEDED |= {"NativeChannelShuffle"}  # no derivative in torch either (its jvp raises torch's error)
NO_JVP_NEEDED |= {"SoftMarginLossBackward"}  # torch has no forward mode for it either: forward over reverse raises
# its NotImplementedError (tests/test_nodes10_losses.py)
NO_JVP_NEEDED |= {"Unique2", "UniqueDim", "UniqueConsecutive"}  # no derivative in torch: their jvp raises torch's
# NotImplementedError (tests/test_round15_graphs.py)
def _sparse(cls):
    """The ops of sparse tensors: their one jvp raises (no forward mode through sparse tensors; tested in
    tests/test_round23_sparse.py)."""
    return cls.__module__.startswith("microtorch.sparse")


NO_JVP_NEEDED |= {"_WeightNormInterface"}  # torch has no forward mode for _weight_norm_interface: its jvp raises
NO_JVP_NEEDED |= {"PackPaddedSequence"}  # torch has no forward mode for packing: its jvp raises torch's
# NotImplementedError (tests/test_round20_packed_rnn.py)


def test_every_op_has_a_jvp_rule():
    missing = sorted(c.__name__ for c in _op_classes() if c.jvp is Function.jvp and c.__name__ not in NO_JVP_NEEDED
                     and not _sparse(c))
    assert not missing, f"ops without a jvp rule (add one beside forward and backward): {missing}"


from test_api_tensor_ops import SPECS as TENSOR_OP_SPECS  # noqa: E402  (the Tensor methods of issue 13)


def _mt_jvp(f, arrays):
    """microtorch's half of op_oracle's forward-mode comparison: runs the ops' jvp rules."""
    import microtorch.func as mfunc
    floats = [i for i, a in enumerate(arrays) if a.dtype.kind == "f"]

    def g(*fl):
        args = [mt.tensor(a.copy()) for a in arrays]
        for i, v in zip(floats, fl):
            args[i] = v
        return f(mt, *args)
    mfunc.jvp(g, tuple(mt.tensor(arrays[i]) for i in floats), tuple(mt.tensor(np.ones_like(arrays[i]))
                                                                  for i in floats))


def test_the_table_runs_every_jvp_rule():
    import microtorch.func as mfunc
    ran = set()

    def record(cls, args, kwargs):
        if any(isinstance(a, mt.Tensor) and a._fw_grads for a in args):
            ran.add(cls)
        return NotImplemented
    intercept(record, first=True)
    try:
        for name, f, specs in OPS:
            _run(mt, fwad, f, *_inputs(specs, seed=0))
        for name, f, specs in FWD_OVER_REV:  # forward over reverse runs the backward-only ops
            _jvp_of_grad(mt, mfunc, mt.tensor, f, *_inputs(specs, seed=0))
        for name, f, specs in JVP_NOT_IN_TORCH:
            _run(mt, fwad, f, *_inputs(specs, seed=0))
        for name, f, arrays, _, opts in TENSOR_OP_SPECS:  # compared with torch in tests/test_api_tensor_ops.py
            if opts.get("jvp", True):
                _mt_jvp(f, arrays)
    finally:
        stop_intercepting(record)
    # subclasses that only rename the grad_fn (SumDim, MinDim, ...) share their base class's rule
    ran_rules = {c.jvp for c in ran}
    untested = sorted(c.__name__ for c in _op_classes() if c.jvp is not Function.jvp and c.jvp not in ran_rules
                      and c.__name__ not in NO_JVP_NEEDED and not _sparse(c))
    assert not untested, f"jvp rules that no test runs: {untested}"


# ---- the API --------------------------------------------------------------------------------------------
def test_dual_level_make_unpack():
    x = mt.randn(3, dtype=mt.float64)
    with fwad.dual_level() as level:
        assert isinstance(level, int)
        d = fwad.make_dual(x, mt.ones(3, dtype=mt.float64))
        u = fwad.unpack_dual(d)
        assert type(u).__name__ == "UnpackedDualTensor" and u._fields == ("primal", "tangent")
        assert mt.equal(u.primal, x) and mt.equal(u.tangent, mt.ones(3, dtype=mt.float64))
        assert fwad.unpack_dual(x).tangent is None
        assert fwad.unpack_dual(d.argmax()).tangent is None and fwad.unpack_dual(d > 0).tangent is None
        assert fwad.unpack_dual(d.detach()).tangent is None
    assert fwad.unpack_dual(d).tangent is None  # the level is closed


def test_make_dual_keeps_reverse_mode_history():
    x = mt.randn(3, dtype=mt.float64, requires_grad=True)
    with fwad.dual_level():
        d = fwad.make_dual(x, mt.ones(3, dtype=mt.float64))
        assert d.grad_fn.name() == "ViewBackward0"
        (d * d).sum().backward()
    assert mt.allclose(x.grad, 2 * x.detach())


def test_forward_ad_ignores_no_grad():
    with fwad.dual_level():
        d = fwad.make_dual(mt.tensor([1.0, 2.0]), mt.tensor([1.0, 1.0]))
        with mt.no_grad():
            y = d * 3
        assert mt.equal(fwad.unpack_dual(y).tangent, mt.tensor([3.0, 3.0]))


def test_errors_as_torch():
    with pytest.raises(RuntimeError, match="no level exists"):
        fwad.make_dual(mt.randn(3), mt.randn(3))
    with fwad.dual_level():
        with pytest.raises(RuntimeError, match="different size"):
            fwad.make_dual(mt.randn(3), mt.randn(2))
        with pytest.raises(ValueError, match="floating point or complex"):
            fwad.make_dual(mt.arange(3), mt.randn(3))
        with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported"):
            fwad.enter_dual_level()


def test_custom_function_jvp_and_save_for_forward():
    class Scale(mt.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_forward(a, b)
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g, g

        @staticmethod
        def jvp(ctx, ta, tb):
            a, b = ctx.saved_tensors
            assert mt.equal(tb, mt.zeros(2))  # an input without a tangent gets zeros, as in torch
            return ta * b + a * tb

    with fwad.dual_level():
        a = fwad.make_dual(mt.tensor([1.0, 2.0]), mt.tensor([1.0, 1.0]))
        out = Scale.apply(a, mt.tensor([3.0, 4.0]))
        assert mt.equal(fwad.unpack_dual(out).tangent, mt.tensor([3.0, 4.0]))


def test_function_without_jvp_raises_naming_it():
    class NoJvp(mt.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g

    from microtorch.ops._op import Op

    class MyOp(Op):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    with fwad.dual_level():
        a = fwad.make_dual(mt.ones(2), mt.ones(2))
        with pytest.raises(NotImplementedError, match="You must implement the jvp function.*NoJvp"):
            NoJvp.apply(a)
        with pytest.raises(NotImplementedError, match="MyOp.*no jvp rule"):
            MyOp.apply(a)


def test_in_place_ops_carry_the_tangent():
    x = np.array([0.5, -1.0, 2.0])
    outs = []
    for lib, fw in ((torch, tfwad), (mt, fwad)):
        with fw.dual_level():
            d = fw.make_dual(lib.tensor(x), lib.ones(3, dtype=lib.float64))
            y = d * 2
            y.mul_(d)
            y[0] = d[1] * 3
            y.add_(1)
            outs.append(fw.unpack_dual(y).tangent.numpy())
    np.testing.assert_allclose(outs[1], outs[0])


@pytest.mark.parametrize("op", ["t_", "transpose_", "swapaxes_", "unsqueeze_", "squeeze_"])
def test_inplace_view_ops_carry_the_tangent_as_torch(op):
    args = {"transpose_": (0, 1), "swapaxes_": (0, 1), "unsqueeze_": (0,), "squeeze_": ()}.get(op, ())
    value = np.arange(6.0).reshape(2, 3) if op != "squeeze_" else np.arange(3.0).reshape(1, 3)
    outs = []
    for lib, fw in ((torch, tfwad), (mt, fwad)):
        with fw.dual_level():
            d = fw.make_dual(lib.tensor(value), lib.tensor(value * 2 + 1))
            y = getattr(d * 1, op)(*args)
            outs.append(fw.unpack_dual(y).tangent.numpy())
    np.testing.assert_array_equal(outs[1], outs[0])
