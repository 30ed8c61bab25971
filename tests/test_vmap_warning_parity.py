"""Under vmap, microtorch falls back to running an op once per example, with torch's warning "There is a
performance drop because we have not yet implemented the batching rule for ...", exactly where torch 2.13 does
(it has no batching rule there), for a broad table of ops: every function of microtorch's torch namespace,
torch.nn.functional and the Tensor methods that run on generic float inputs alone (found by trying them on torch
at test time), and a table of the ops that need more arguments. Where both run, the values agree too.

The few differences are listed below with their reason; a test checks each one still differs, so the lists
stay current."""
import zlib

import pytest
import torch

import microtorch as mt
from vmap_oracle import close, inputs, warned

F = "F."  # (a name in torch.nn.functional)


def nnf(L):
    return L.nn.functional


def op(name, f, *specs, in_dims=None):
    return name, f, list(specs), tuple(in_dims if in_dims is not None else (0,) * len(specs))


X, Y, P = ("f", (3, 4)), ("f", (3, 4)), ("p", (3, 4))
SQ, V, IMG = ("f", (3, 3)), ("f", (4,)), ("f", (2, 3, 5, 5))
SPD = ("spd", (3, 3))

# ---- the ops that need more than generic float tensors -----------------------------------------------------
TABLE = [
    # index_more
    op("index_copy", lambda L, x, s: L.index_copy(x, 1, L.tensor([2, 0]), s), X, ("f", (3, 2))),
    op("index_copy_batched_index", lambda L, x, i: L.index_copy(x, 1, i, x[:, :2]), X, ("perm", 4, 2)),
    op("index_fill", lambda L, x: L.index_fill(x, 0, L.tensor([2, 0]), 1.5), X),
    op("index_fill_batched_index", lambda L, x, i: x.index_fill(1, i, -1.0), X, ("i", 4, (2,))),
    op("index_put", lambda L, x, v: L.index_put(x, (L.tensor([2, 0]),), v), X, ("f", (2, 4))),
    op("index_put_accumulate", lambda L, x, i, v: x.index_put((i,), v, accumulate=True), X, ("i", 3, (5,)),
       ("f", (5, 4))),
    op("put", lambda L, x, s: L.put(x, L.tensor([1, 7]), s), X, ("f", (2,))),
    op("put_accumulate", lambda L, x, s: x.put(L.tensor([1, 1]), s, accumulate=True), X, ("f", (2,))),
    op("masked_scatter", lambda L, x, m, s: L.masked_scatter(x, m, s), X, ("b", (3, 4)), ("f", (12,)),
       in_dims=(0, None, 0)),
    op("select_scatter", lambda L, x, s: L.select_scatter(x, s, 0, 1), X, V),
    op("slice_scatter", lambda L, x, s: L.slice_scatter(x, s, 1, 0, 4, 2), X, ("f", (3, 2))),
    op("diagonal_scatter", lambda L, x, s: L.diagonal_scatter(x, s, -1), X, ("f", (2,))),
    op("scatter_add", lambda L, x, i, s: L.scatter_add(x, 0, i, s), X, ("i", 3, (2, 4)), ("f", (2, 4))),
    op("fill_diagonal_", lambda L, x: x.clone().fill_diagonal_(3.0), X),
    op("masked_scatter_batched_mask", lambda L, x, s: L.masked_scatter(x, x > 0, s), X, ("f", (12,))),
    # in-place variants
    op("index_copy_", lambda L, x, s: x.clone().index_copy_(1, L.tensor([2, 0]), s), X, ("f", (3, 2))),
    op("index_fill_", lambda L, x: x.clone().index_fill_(1, L.tensor([2, 0]), 1.5), X),
    op("index_put_", lambda L, x, v: x.clone().index_put_((L.tensor([2, 0]),), v, accumulate=True), X, ("f", (4,))),
    op("scatter_add_", lambda L, x, i, s: x.clone().scatter_add_(0, i, s), X, ("i", 3, (2, 4)), ("f", (2, 4))),
    op("scatter_", lambda L, x, i, s: x.clone().scatter_(0, i, s), X, ("i", 3, (1, 4)), ("f", (1, 4))),
    op("index_add_", lambda L, x, s: x.clone().index_add_(1, L.tensor([2, 2]), s), X, ("f", (3, 2))),
    op("masked_scatter_", lambda L, x, s: x.clone().masked_scatter_(x > 0, s), X, ("f", (12,))),
    op("put_", lambda L, x, s: x.clone().put_(L.tensor([1, 5]), s), X, ("f", (2,))),
    op("renorm_", lambda L, x: x.clone().renorm_(2, 0, 1.0), X),
    op("masked_fill_", lambda L, x: x.clone().masked_fill_(x > 0, 2.0), X),
    op("clamp_", lambda L, x: x.clone().clamp_(-0.1, 0.1), X),
    op("setitem", lambda L, x, s: (lambda c: (c.__setitem__((slice(None), slice(0, 2)), s), c)[1])(x.clone()), X,
       ("f", (3, 2))),
    # rearrange and index
    op("scatter", lambda L, x, i, s: L.scatter(x, 0, i, s), X, ("i", 3, (1, 4)), ("f", (1, 4)),
       in_dims=(0, None, 0)),
    op("scatter_batched_index", lambda L, x, i, s: L.scatter(x, 0, i, s), X, ("i", 3, (1, 4)), ("f", (1, 4))),
    op("scatter_value", lambda L, x, i: x.scatter(0, i, 2.0), X, ("i", 3, (1, 4)), in_dims=(0, None)),
    op("index_add", lambda L, x, s: L.index_add(x, 1, L.tensor([0, 0, 3]), s, alpha=2), X, ("f", (3, 3))),
    op("index_select", lambda L, x, i: L.index_select(x, 1, i), X, ("i", 4, (5,))),
    op("gather", lambda L, x, i: L.gather(x, 1, i), X, ("i", 4, (3, 6))),
    op("take", lambda L, x, i: L.take(x, i), X, ("i", 12, (5,))),
    op("take_along_dim", lambda L, x, i: L.take_along_dim(x, i, 0), X, ("i", 3, (2, 4))),
    op("masked_fill", lambda L, x, m: x.masked_fill(m, -2.0), X, ("b", (3, 4))),
    op("where", lambda L, c, x, y: L.where(c, x, y), ("b", (3, 4)), X, Y),
    op("getitem_batched_index", lambda L, x, i: x[i], X, ("i", 3, (2,))),
    # order
    op("median", lambda L, x: L.median(x), X),
    op("median_dim", lambda L, x: L.median(x, 0), X),
    op("nanmedian", lambda L, x: (L.nanmedian(x), L.nanmedian(x, 1)), ("nan", (3, 4))),
    op("kthvalue", lambda L, x: L.kthvalue(x, 2, 0), X),
    op("mode", lambda L, x: L.mode(x, 1), ("t", (3, 4))),
    op("quantile", lambda L, x: L.quantile(x, 0.25, 1), X),
    op("nanquantile", lambda L, x: L.nanquantile(x, 0.5), ("nan", (3, 4))),
    op("aminmax", lambda L, x: L.aminmax(x, dim=0), X),
    op("topk", lambda L, x: L.topk(x, 2, 1), X),
    op("sort", lambda L, x: L.sort(x, 0, descending=True), X),
    op("argsort", lambda L, x: L.argsort(x, 1), X),
    # scan
    op("cumsum", lambda L, x: L.cumsum(x, 1), X),
    op("cumprod", lambda L, x: L.cumprod(x, 0), X),
    op("cummax", lambda L, x: L.cummax(x, 1), X),
    op("cummin", lambda L, x: L.cummin(x, 0), X),
    op("logcumsumexp", lambda L, x: L.logcumsumexp(x, 1), X),
    # misc_more
    op("unfold", lambda L, x: x.unfold(1, 3, 1), X),
    op("renorm", lambda L, x: L.renorm(x, 2, 0, 1.0), X),
    op("narrow_copy", lambda L, x: L.narrow_copy(x, 0, 1, 2), X),
    op("nonzero_static", lambda L, x: L.nonzero_static(x, size=3), ("b", (3, 4))),
    op("unique_consecutive", lambda L, x: L.unique_consecutive(x), ("t", (3, 4))),
    # reductions along dims
    op("sum_dim", lambda L, x: x.sum(1) + x.mean(0).sum() + x.prod(1) + x.nansum(0).sum(), X),
    op("var_std", lambda L, x: (x.var(0), x.std(1, correction=0), L.var(x, 1), L.std(x, 0)), X),
    op("softmax", lambda L, x: (L.softmax(x, 0), L.log_softmax(x, 1), L.logsumexp(x, 1)), X),
    op("max_dim", lambda L, x: (L.max(x, 1), L.min(x, 0), L.amax(x, 1), L.amin(x, 0), L.argmax(x, 1)), X),
    op("norm_dim", lambda L, x: (L.norm(x, dim=1), L.norm(x, p=1, dim=0)), X),
    op("count_nonzero", lambda L, x: L.count_nonzero(x, 1), ("b", (3, 4))),
    op("all_any_dim", lambda L, x: (L.all(x, 1), L.any(x, 0)), ("b", (3, 4))),
    op("nanmean", lambda L, x: L.nanmean(x, 1), ("nan", (3, 4))),
    # shape
    op("reshape_view", lambda L, x: (x.reshape(2, 6), x.view(4, 3), x.flatten(), x.unflatten(1, (2, 2))), X),
    op("permute", lambda L, x: (x.permute(1, 0), x.transpose(0, 1), L.movedim(x, 0, 1), x.swapaxes(0, 1), x.t()), X),
    op("moveaxis", lambda L, x: (L.moveaxis(x, 0, 1), x.moveaxis(1, 0)), X),
    op("flip_roll", lambda L, x: (L.flip(x, [0]), L.roll(x, 1, 1), L.roll(x, 2), L.rot90(x, 1, (0, 1))), X),
    op("repeat_tile", lambda L, x: (x.repeat(2, 1), L.tile(x, (2,)), L.repeat_interleave(x, 2, 0)), X),
    op("expand", lambda L, x: (x[None].expand(2, 3, 4), L.broadcast_to(x, (2, 3, 4)), x.unsqueeze(1), x[:1].squeeze(0)),
       X),
    op("narrow_select", lambda L, x: (x.narrow(1, 1, 2), x.select(0, 1), L.select(x, 1, -1)), X),
    op("split", lambda L, x: (x.chunk(2, 1), x.split(1, 0), L.tensor_split(x, 3, 1), L.hsplit(x, 2), L.vsplit(x, 3)),
       X),
    op("cat_stack", lambda L, x, y: (L.cat([x, y]), L.stack([x, y], 1), L.hstack([x, y]), L.vstack([x, y]),
                                     L.dstack([x, y])), X, Y, in_dims=(0, None)),
    op("column_stack", lambda L, x, y: L.column_stack([x, y]), X, Y, in_dims=(0, None)),
    op("diagonal", lambda L, x: (L.diagonal(x, 1), L.diag(x), L.tril(x), L.triu(x, 1), L.trace(x)), X),
    op("diag_embed", lambda L, v: (L.diag_embed(v), L.diag(v, 1)), V),
    # pointwise with more arguments
    op("clamp", lambda L, x, lo: (x.clamp(-0.5, 0.5), L.clamp(x, min=lo), x.clip(max=lo)), X, Y),
    op("lerp_addcmul", lambda L, x, y, z: (L.lerp(x, y, 0.3), L.lerp(x, y, z), L.addcmul(x, y, z, value=2),
                                           L.addcdiv(x, y, z.abs() + 1)), X, Y, P),
    op("powers", lambda L, x, p: (x ** 2, p ** x, L.pow(p, 0.5), L.float_power(p, 2)), X, P),
    op("special_args", lambda L, p: (L.polygamma(1, p), L.mvlgamma(p + 1, 2), L.xlogy(p, p)), P),
    *[op("special_" + name, (lambda name: lambda L, p: getattr(L.special, name)(p))(name), P) for name in (
        "entr", "erfcx", "i0e", "i1e", "ndtr", "log_ndtr", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1",
        "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
        "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0", "airy_ai")],
    op("special_ndtri", lambda L, p: L.special.ndtri(p / (p + 1)), P),
    op("special_zeta", lambda L, p: L.special.zeta(p + 1, p), P),
    op("special_polynomial", lambda L, x: (L.special.chebyshev_polynomial_t(x, 3), L.special.hermite_polynomial_h(x, 2),
                                           L.special.legendre_polynomial_p(x, 4)), X),
    op("binary", lambda L, x, y: (L.atan2(x, y), L.hypot(x, y), L.fmod(x, y), L.remainder(x, y), L.copysign(x, y),
                                  L.nextafter(x, y), L.floor_divide(x, y)), X, Y),
    op("integer_ops", lambda L, a, b: (L.gcd(a, b), L.lcm(a, b), L.bitwise_and(a, b), L.bitwise_or(a, b),
                                       L.bitwise_xor(a, 3), ~a, L.bitwise_left_shift(a, b)),
       ("i", 9, (3, 4)), ("i", 9, (3, 4))),
    op("bitwise_operators", lambda L, a, b: (a & b, a | b, a ^ b, ~a, 3 ^ a, a << 2, b >> 1), ("i", 9, (3, 4)),
       ("i", 9, (3, 4))),
    op("isclose", lambda L, x, y: L.isclose(x, y, atol=0.5), X, Y),
    op("heaviside", lambda L, x, y: L.heaviside(x, y), X, Y),
    op("ldexp", lambda L, x, e: L.ldexp(x, e), X, ("i", 4, (3, 4))),
    op("searchsorted", lambda L, s, v: (L.searchsorted(s, v), L.bucketize(v, s[0])), ("sorted", (3, 5)), X),
    op("bincount_histc", lambda L, x: L.histc(x, 4, -1, 1), X),
    # linear algebra
    op("matmul", lambda L, x, y: (x @ y.t(), L.mm(x, y.t()), L.mv(x, y[0]), L.dot(x[0], y[0]), L.outer(x[0], y[1]),
                                  L.inner(x, y), L.einsum("ij,kj->ik", x, y)), X, Y),
    op("bmm", lambda L, x, y: L.bmm(x, y), ("f", (2, 3, 4)), ("f", (2, 4, 5))),
    op("addmm", lambda L, b, x, y: L.addmm(b, x, y), ("f", (3, 5)), X, ("f", (4, 5))),
    op("addmv_addr", lambda L, b, x, v: (L.addmv(b, x, v), L.addr(x, b, v)), ("f", (3,)), X, V),
    op("baddbmm_addbmm", lambda L, b, x, y: (L.baddbmm(b, x, y), L.addbmm(b[0], x, y)), ("f", (2, 3, 5)),
       ("f", (2, 3, 4)), ("f", (2, 4, 5))),
    op("kron_cdist", lambda L, x, y: (L.kron(x, y), L.cdist(x, y)), X, Y),
    op("vdot", lambda L, x, y: L.vdot(x[0], y[0]), X, Y),
    op("cross_dist", lambda L, x, y: (L.cross(x[:, :3], y[:, :3], dim=1), L.dist(x, y)), X, Y),
    op("matrix_ops", lambda L, a: (L.det(a), L.logdet(a), L.slogdet(a), L.inverse(a), L.matrix_power(a, 3),
                                   L.matrix_exp(a), L.pinverse(a)), SPD),
    op("cholesky", lambda L, a: L.cholesky(a), SPD),
    op("svd", lambda L, a: L.svd(a).S, SQ),
    # nn.functional
    op(F + "linear", lambda L, x, w, b: nnf(L).linear(x, w, b), X, ("f", (5, 4)), ("f", (5,)), in_dims=(0, None, 0)),
    op(F + "bilinear", lambda L, x, y, w: nnf(L).bilinear(x, y, w), X, Y, ("f", (2, 4, 4)), in_dims=(0, 0, None)),
    op(F + "conv1d", lambda L, x, w: nnf(L).conv1d(x, w, padding=1), ("f", (2, 3, 6)), ("f", (4, 3, 3))),
    op(F + "conv2d", lambda L, x, w: nnf(L).conv2d(x, w, stride=2), IMG, ("f", (4, 3, 3, 3)), in_dims=(0, None)),
    op(F + "conv3d", lambda L, x, w: nnf(L).conv3d(x, w), ("f", (1, 2, 4, 4, 4)), ("f", (3, 2, 2, 2, 2))),
    op(F + "conv_transpose2d", lambda L, x, w: nnf(L).conv_transpose2d(x, w), IMG, ("f", (3, 2, 3, 3)),
       in_dims=(0, None)),
    op(F + "conv_transpose1d", lambda L, x, w: nnf(L).conv_transpose1d(x, w, stride=2), ("f", (2, 3, 6)),
       ("f", (3, 2, 3))),
    op(F + "max_pool", lambda L, x: (nnf(L).max_pool2d(x, 2), nnf(L).max_pool1d(x[0], 2),
                                     nnf(L).max_pool2d(x, 3, return_indices=True)), IMG),
    op(F + "max_pool3d", lambda L, x: nnf(L).max_pool3d(x, 2), ("f", (1, 2, 4, 4, 4))),
    op(F + "avg_pool", lambda L, x: (nnf(L).avg_pool2d(x, 2), nnf(L).avg_pool1d(x[0], 2),
                                     nnf(L).avg_pool3d(x[None], 2)), IMG),
    op(F + "adaptive_avg_pool", lambda L, x: (nnf(L).adaptive_avg_pool2d(x, 2), nnf(L).adaptive_avg_pool1d(x[0], 3)),
       IMG),
    op(F + "adaptive_max_pool", lambda L, x: (nnf(L).adaptive_max_pool2d(x, 2), nnf(L).adaptive_max_pool1d(x[0], 3)),
       IMG),
    op(F + "lp_pool2d", lambda L, x: nnf(L).lp_pool2d(x, 2, 2), ("p", (2, 3, 4, 4))),
    op(F + "interpolate_nearest", lambda L, x: nnf(L).interpolate(x, scale_factor=2), IMG),
    op(F + "interpolate_bilinear", lambda L, x: nnf(L).interpolate(x, size=(7, 3), mode="bilinear"), IMG),
    op(F + "interpolate_bicubic", lambda L, x: nnf(L).interpolate(x, size=(7, 3), mode="bicubic"), IMG),
    op(F + "interpolate_linear", lambda L, x: nnf(L).interpolate(x[0], size=7, mode="linear"), IMG),
    op(F + "pad", lambda L, x: (nnf(L).pad(x, (1, 2)), nnf(L).pad(x, (1, 1, 2, 0), mode="reflect"),
                                nnf(L).pad(x, (1, 1, 0, 1), mode="replicate"),
                                nnf(L).pad(x, (1, 1, 2, 2), mode="circular")), IMG),
    op(F + "embedding", lambda L, i, w: nnf(L).embedding(i, w), ("i", 6, (3, 2)), ("f", (6, 4)), in_dims=(0, None)),
    op(F + "embedding_bag", lambda L, i, w: nnf(L).embedding_bag(i, w), ("i", 6, (3, 2)), ("f", (6, 4)),
       in_dims=(0, None)),
    op(F + "one_hot", lambda L, i: nnf(L).one_hot(i, 5), ("i", 5, (3,))),
    op(F + "nll_cross_entropy", lambda L, x, t: (nnf(L).nll_loss(x.log_softmax(1), t), nnf(L).cross_entropy(x, t)),
       X, ("i", 4, (3,))),
    op(F + "binary_cross_entropy", lambda L, x, y: nnf(L).binary_cross_entropy(x.sigmoid(), y.sigmoid()), X, Y),
    op(F + "norms", lambda L, x: (nnf(L).layer_norm(x, (5,)), nnf(L).group_norm(x, 3), nnf(L).instance_norm(x),
                                  nnf(L).normalize(x, dim=1), nnf(L).rms_norm(x, (5,))), IMG),
    op(F + "batch_norm", lambda L, x, m, v: nnf(L).batch_norm(x, m, v), ("f", (2, 3)), ("f", (3,)), ("p", (3,)),
       in_dims=(0, None, None)),
    op(F + "local_response_norm", lambda L, x: nnf(L).local_response_norm(x, 2), IMG),
    op(F + "prelu", lambda L, x, w: nnf(L).prelu(x, w), X, ("p", (4,)), in_dims=(0, None)),
    op(F + "threshold_glu", lambda L, x: (nnf(L).threshold(x, 0.1, 20.0), nnf(L).glu(x, 1)), X),
    op(F + "pixel_shuffle", lambda L, x: (nnf(L).pixel_shuffle(x, 2), nnf(L).pixel_unshuffle(x, 2),
                                          nnf(L).channel_shuffle(x, 2)), ("f", (1, 4, 4, 4))),
    op(F + "unfold_fold", lambda L, x: nnf(L).fold(nnf(L).unfold(x, 2), (5, 5), 2), IMG),
    op(F + "grid_sample", lambda L, x, g: nnf(L).grid_sample(x, g, align_corners=False), IMG, ("f", (2, 4, 4, 2))),
    op(F + "affine_grid", lambda L, t: nnf(L).affine_grid(t, (2, 3, 4, 4), align_corners=False), ("f", (2, 2, 3))),
    op(F + "distances", lambda L, x, y: (nnf(L).cosine_similarity(x, y), nnf(L).pairwise_distance(x, y)), X, Y),
    op(F + "pdist", lambda L, x: nnf(L).pdist(x), X),
    op(F + "kl_div", lambda L, x, y: nnf(L).kl_div(x.log_softmax(1), y.softmax(1), reduction="batchmean"), X, Y),
    op(F + "margin_ranking_loss", lambda L, x, y, t: nnf(L).margin_ranking_loss(x, y, t.sign()), X, Y, Y),
    op(F + "hinge_embedding_loss", lambda L, x, t: nnf(L).hinge_embedding_loss(x, t.sign()), X, Y),
    op(F + "soft_margin_loss", lambda L, x, t: nnf(L).soft_margin_loss(x, t.sign()), X, Y),
    op(F + "multi_margin_loss", lambda L, x, t: nnf(L).multi_margin_loss(x, t), X, ("i", 4, (3,))),
    op(F + "multilabel_margin_loss", lambda L, x, t: nnf(L).multilabel_margin_loss(x, t), X, ("i", 4, (3, 4))),
    op(F + "triplet_margin_loss", lambda L, a, p, n: nnf(L).triplet_margin_loss(a, p, n), X, Y, ("f", (3, 4))),
    op(F + "cosine_embedding_loss", lambda L, x, y, t: nnf(L).cosine_embedding_loss(x, y, t.sign()), X, Y,
       ("f", (3,))),
    op(F + "regression_losses", lambda L, x, y: (nnf(L).l1_loss(x, y), nnf(L).smooth_l1_loss(x, y),
                                                    nnf(L).huber_loss(x, y), nnf(L).poisson_nll_loss(x, y)), X, Y),
    op(F + "gaussian_nll_loss", lambda L, x, y, v: nnf(L).gaussian_nll_loss(x, y, v), X, Y, P),
    op(F + "ctc_loss", lambda L, lp, t: nnf(L).ctc_loss(lp.log_softmax(2), t + 1, [6, 6], [2, 3]), ("f", (6, 2, 4)),
       ("i", 3, (2, 3)), in_dims=(0, None)),
    op(F + "scaled_dot_product_attention", lambda L, q, k, v: nnf(L).scaled_dot_product_attention(q, k, v),
       ("f", (2, 3, 4)), ("f", (2, 5, 4)), ("f", (2, 5, 4))),
    op(F + "sdpa_4d", lambda L, q, k, v: nnf(L).scaled_dot_product_attention(q, k, v, is_causal=True),
       ("f", (1, 2, 3, 4)), ("f", (1, 2, 3, 4)), ("f", (1, 2, 3, 4))),
]


# ---- the differences, each with its reason (a test checks they still differ) ---------------------------------
_COMPOSITE = ("torch runs it as one aten op without a batching rule; microtorch builds it from ops that have one, "
              "so nothing runs per example and there is no performance drop to warn about")
KNOWN = {
    "quantile": _COMPOSITE, "nanquantile": _COMPOSITE, "isclose": _COMPOSITE,
    "bincount_histc": _COMPOSITE, F + "bilinear": _COMPOSITE, F + "kl_div": _COMPOSITE, "kl_div": _COMPOSITE,
    F + "triplet_margin_loss": _COMPOSITE, "diagflat": _COMPOSITE, F + "margin_ranking_loss": _COMPOSITE,
    "margin_ranking_loss": _COMPOSITE, "triplet_margin_loss": _COMPOSITE,
    F + "adaptive_avg_pool2d": "torch's shortcut for output size 1 (a mean) takes a 2-d input that its kernel "
                               "refuses otherwise; microtorch refuses it (outside vmap too)",
    "moveaxis": "torch raises 'Batching rule not implemented for aten::moveaxis.int'; microtorch's is movedim",
    "index_copy_": "torch has no rule for the in-place variant; microtorch's in-place ops run the out-of-place "
                   "op (which has one) and copy the result in",
    "scatter_": "(the same as index_copy_)", "clamp_": "(the same as index_copy_)",
    "column_stack": "torch raises 'Batching rule not implemented for aten::column_stack. We could not generate a "
                    "fallback'; microtorch's column_stack is a cat, which has a rule",
    F + "gaussian_nll_loss": "torch raises: its check of var is data-dependent control flow under vmap; microtorch's "
                             "check passes when every example agrees",
    F + "rrelu": "torch raises 'we do not yet support aten::rrelu'; microtorch runs it per example",
    "nonzero_static": "torch runs it per example; microtorch's is whole-array numpy (no op, no gradient), which "
                      "vmap batches",
    "argwhere": "torch runs it per example (the counts happen to agree); microtorch refuses the dynamic shape",
    "histc": "torch runs it per example; microtorch's is numpy (no op, no gradient), which vmap batches",
    "histogram": "(the same as histc)",
    F + "rrelu_": "(the same as rrelu)", "rrelu": "(the same as F.rrelu)", "rrelu_": "(the same as F.rrelu)",
    # names of the torch namespace that the linalg row of issue 13 adds
    **{name: "(the same as index_copy_)" for name in ("clip_", "conj_physical_", "fix_", "ldexp_", "negative_",
                                                      "square_", "xlogy_")},
    "isin": _COMPOSITE, "norm_except_dim": _COMPOSITE,
    "fill": "torch has no rule for the out-of-place fill (its fill_ has one); microtorch's is a fill_ of a copy",
    "chain_matmul": "torch raises 'Batching rule not implemented for aten::chain_matmul'; microtorch's is matmuls",
    "detach_": "torch raises: vmap's batched input is a view, which it cannot detach in place; microtorch can",
    "svd_lowrank": "torch's draws random numbers (vmap's randomness error); microtorch's is exact",
    "pca_lowrank": "(the same as svd_lowrank)",
    "resize_as_": "torch runs it per example, resizing each example's slice, and leaves the batched tensor as it "
                  "was; microtorch refuses to resize a batched tensor in place",
}
# same warning, different values
KNOWN_VALUES = {}
# values that are not defined: uninitialized memory, a search in boundaries that are not sorted
NO_VALUES = {"empty_like", "Tensor.new_empty", "Tensor.new", "searchsorted"}


def _outcome(lib, name, f, specs, in_dims):
    arrays = inputs(specs, in_dims, zlib.crc32(name.encode()))
    return warned(lambda: lib.func.vmap(lambda *a: f(lib, *a), in_dims=in_dims)(*map(lib.tensor, arrays)))


def _describe(result, warns):
    return "raises " + type(result).__name__ if isinstance(result, Exception) else "warns" if warns else "rule"


def _compare(name, ours, theirs):
    """None where microtorch behaves as torch (the same warning, and the same values where both run; or both
    raise), else what differs"""
    (ro, wo), (rt, wt) = ours, theirs
    do, dt = _describe(ro, wo), _describe(rt, wt)
    if do.startswith("raises") and dt.startswith("raises"):
        return None
    differences = [] if do == dt else [f"torch {dt}, microtorch {do}" + (f" ({ro})" if do.startswith("raises")
                                                                          else "")]
    if not (do.startswith("raises") or dt.startswith("raises") or name in NO_VALUES):
        try:
            close(ro, rt, rtol=1e-6, atol=1e-9)
        except AssertionError as e:
            differences.append(f"values differ: {str(e).strip().splitlines()[0]}")
    return f"{name}: " + "; ".join(differences) if differences else None


def _check(name, ours, theirs):
    diff = _compare(name, ours, theirs)
    key = name if name in KNOWN or name in KNOWN_VALUES else name.removeprefix("Tensor.")  # (a method as its function)
    if key in KNOWN or key in KNOWN_VALUES:
        assert diff is not None, f"{name} now behaves as torch: remove it from KNOWN"
        assert ("values differ" in diff) == (key in KNOWN_VALUES), diff
    else:
        assert diff is None, diff


@pytest.mark.parametrize("name,f,specs,in_dims", TABLE, ids=[t[0] for t in TABLE])
def test_warns_exactly_where_torch_warns(name, f, specs, in_dims):
    _check(name, _outcome(mt, name, f, specs, in_dims), _outcome(torch, name, f, specs, in_dims))


# ---- every function that runs on generic float tensors alone -------------------------------------------------
def _functions(namespace):
    if namespace == "Tensor":
        names = [n for n in dir(mt.Tensor) if not n.startswith("_") and not n.endswith("_") and
                 callable(getattr(torch.Tensor, n, None))]
        return [("Tensor." + n, lambda L, *a, n=n: getattr(a[0], n)(*a[1:])) for n in sorted(names)]
    mod = {"torch": (mt, torch), "F": (mt.nn.functional, torch.nn.functional)}[namespace]
    names = [n for n in (mt.__all__ if namespace == "torch" else dir(mod[0])) if not n.startswith(("_", "set_")) and
             callable(getattr(mod[1], n, None)) and not isinstance(getattr(mod[1], n), type)]  # (set_: global state)
    prefix = "" if namespace == "torch" else F
    return [(prefix + n, lambda L, *a, n=n: getattr(L if namespace == "torch" else nnf(L), n)(*a))
            for n in sorted(names)]


def _runs_on_one_example(f, arity):
    x = torch.tensor(inputs([X] * arity, (None,) * arity, 0)[0])
    try:
        f(torch, *[x] * arity)
        return True
    except Exception:  # noqa: BLE001  (a function that needs other arguments: the table above has it)
        return False


@pytest.mark.parametrize("namespace", ["torch", "F", "Tensor"])
def test_every_function_on_generic_inputs_warns_where_torch_warns(namespace):
    differences, checked = [], 0
    for name, f in _functions(namespace):
        arity = next((k for k in (1, 2) if _runs_on_one_example(f, k)), None)
        if arity is None:
            continue
        checked += 1
        specs = [X, Y][:arity]
        ours, theirs = (_outcome(lib, name, f, specs, (0,) * arity) for lib in (mt, torch))
        try:
            _check(name, ours, theirs)
        except AssertionError as e:
            differences.append(str(e))
    assert checked > {"torch": 150, "F": 40, "Tensor": 120}[namespace], checked
    assert not differences, "\n".join(differences)


# ---- and every function that runs with one of a few simple extra arguments --------------------------------------
SIMPLE_ARGUMENTS = [(1,), (0,), (-1,), (0, 1), (1, 2), ((1,),), (2, 0), ("x", 1), ("x", "x"), (0.5,), ("x.t()",), (2,)]


def _with_arguments(f, extra):
    """f(x, *extra), where "x" stands for x itself and "x.t()" for its transpose"""
    def call(L, x):
        return f(L, x, *(x if a == "x" else x.t() if a == "x.t()" else a for a in extra))
    return call


@pytest.mark.parametrize("namespace", ["torch", "F", "Tensor"])
def test_every_function_with_simple_arguments_warns_where_torch_warns(namespace):
    differences, checked = [], 0
    for name, f in _functions(namespace):
        if any(_runs_on_one_example(f, k) for k in (1, 2)):
            continue  # (the test above has it)
        call = next((c for c in (_with_arguments(f, e) for e in SIMPLE_ARGUMENTS) if _runs_on_one_example(c, 1)),
                    None)
        if call is None:
            continue
        checked += 1
        ours, theirs = (_outcome(lib, name, call, [X], (0,)) for lib in (mt, torch))
        try:
            _check(name, ours, theirs)
        except AssertionError as e:
            differences.append(str(e))
    assert checked > {"torch": 30, "F": 10, "Tensor": 35}[namespace], checked
    assert not differences, "\n".join(differences)
