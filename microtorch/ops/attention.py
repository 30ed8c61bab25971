"""Attention, composed of matmul, softmax and dropout as torch's reference ("math") path composes it.

scaled_dot_product_attention: softmax(q k^T * scale + mask) v.  multi_head_attention_forward: the
projections, head split and output projection of nn.MultiheadAttention around it.
"""
import math

import numpy as np

from .._tensor import Tensor
from ._checks import need_floating
from ._memory_formats import in_layout_of
from ._op import Op


def _check_qkv(query, key, value):
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, Tensor):
            raise TypeError(f"scaled_dot_product_attention(): argument '{name}' must be Tensor, not "
                            f"{type(t).__name__}")
        if t.ndim < 2:
            raise RuntimeError(f"scaled_dot_product_attention: {name} must have at least 2 dimensions (..., L, E), "
                               f"got {list(t.shape)}")
    if not query.dtype is key.dtype is value.dtype:
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got query.dtype: "
                           f"{query.dtype} key.dtype: {key.dtype} and value.dtype: {value.dtype} instead.")
    need_floating(query, "scaled_dot_product_attention")
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise RuntimeError(f"scaled_dot_product_attention: query {list(query.shape)}, key {list(key.shape)} and "
                           f"value {list(value.shape)} do not fit: query and key need the same last size (E), key "
                           "and value the same sequence length (S)")


def _attn_bias(attn_mask, is_causal, L, S, dtype, fused):
    """the additive mask: -inf where a query may not look; None when every position is allowed. torch's fused
    kernel (fused) applies a mask and the causal one together; its reference path refuses both."""
    causal = Tensor._make(np.tril(np.ones((L, S), bool))) if is_causal else None
    if causal is not None and attn_mask is not None and not fused:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                           "is_causal=True")
    if attn_mask is None:
        attn_mask, causal = causal, None
    if attn_mask is None:
        return None
    if attn_mask.dtype.np == np.bool_:
        attn_mask = Tensor._make(np.where(attn_mask._data, 0.0, -np.inf).astype(dtype.np))
    return attn_mask if causal is None else attn_mask + _attn_bias(causal, False, L, S, dtype, fused)


def _repeat_kv(query, key, value, enable_gqa):
    """grouped-query attention: each key/value head serves query.size(-3) // key.size(-3) query heads"""
    if not enable_gqa or query.ndim < 3 or key.shape[-3] == query.shape[-3]:
        return key, value
    hq, hk = query.shape[-3], key.shape[-3]
    if hq % hk:
        raise RuntimeError(f"scaled_dot_product_attention: with enable_gqa=True the number of query heads ({hq}) "
                           f"must be a multiple of the number of key/value heads ({hk})")
    return key.repeat_interleave(hq // hk, -3), value.repeat_interleave(hq // hk, -3)


def _safe_softmax(scores):
    """softmax over the last dim; a row whose every score is -inf (nothing to attend to) gives zeros"""
    from .nn import softmax
    dead = np.isneginf(scores._data).all(-1, keepdims=True)
    if not dead.any():
        return softmax(scores, -1)
    dead = Tensor._make(dead)  # (scores of 0 there first, so that no NaN reaches the gradients)
    return softmax(scores.masked_fill(dead, 0.0), -1).masked_fill(dead, 0.0)


def _np_softmax(scores):
    """numpy softmax over the last dim, with rows of only -inf giving zeros"""
    top = scores.max(-1, keepdims=True)
    e = np.exp(scores - np.where(np.isneginf(top), 0, top))
    total = e.sum(-1, keepdims=True)
    return e / np.where(total == 0, 1, total)


class ScaledDotProductFlashAttentionForCpu(Op):
    """o = P v, P = softmax(q k^T s + bias):  dv = P^T g, dS = P (g v^T - rowsum(P g v^T)), dq = dS k s, dk = dS^T q s"""
    _grad_fn_name = "ScaledDotProductFlashAttentionForCpuBackward0"

    @staticmethod
    def forward(ctx, q, k, v, bias, scale):
        ctx.scale, ctx.bias = scale, bias
        scores = q @ np.swapaxes(k, -1, -2) * scale
        ctx.save_for_backward(q, k, v)
        out = _np_softmax(scores if bias is None else scores + bias) @ v
        return in_layout_of(out, q) if q.strides[-1] == q.itemsize else out  # (torch's kernel: empty_like(q))

    @staticmethod
    def _probs(ctx, q, k):
        scores = (q @ k.transpose(-2, -1)) * ctx.scale
        return _safe_softmax(scores if ctx.bias is None else scores + Tensor._make(ctx.bias))

    @staticmethod
    def backward(ctx, grad):
        q, k, v = ctx.saved_tensors
        p = ScaledDotProductFlashAttentionForCpu._probs(ctx, q, k)
        dp = grad @ v.transpose(-2, -1)
        ds = p * (dp - (dp * p).sum(-1, keepdim=True)) * ctx.scale
        return ds @ k, ds.transpose(-2, -1) @ q, p.transpose(-2, -1) @ grad, None, None

    @staticmethod
    def jvp(ctx, tq, tk, tv, _tbias, _tscale):
        q, k, v = ctx.inputs[:3]
        p = ScaledDotProductFlashAttentionForCpu._probs(ctx, q, k)
        ds = 0
        if tq is not None:
            ds = tq @ k.transpose(-2, -1) * ctx.scale
        if tk is not None:
            ds = ds + q @ tk.transpose(-2, -1) * ctx.scale
        out = (p * (ds - (ds * p).sum(-1, keepdim=True))) @ v
        return out if tv is None else out + p @ tv


def _flash_fits(query, key, value, dropout_p):
    """torch runs 4-d attention of one head size without dropout as one fused op (its own grad_fn name), on
    inputs whose last dim is contiguous"""
    return query.ndim == key.ndim == value.ndim == 4 and dropout_p == 0 and \
        query.shape[-1] == key.shape[-1] == value.shape[-1] and \
        query.stride(-1) == key.stride(-1) == value.stride(-1) == 1


def _flash(query, key, value, bias, dropout_p, scale):
    """the fused op where it fits, else None (the reference path composes the ops)"""
    if not _flash_fits(query, key, value, dropout_p):
        return None
    if bias is not None and bias.requires_grad:
        return None
    b = None if bias is None else np.broadcast_to(bias._data, query.shape[:-1] + (key.shape[-2],))
    return ScaledDotProductFlashAttentionForCpu.apply(query, key, value, b, scale)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """softmax(query @ key^T * scale + mask) @ value, scale = 1/sqrt(E) unless given; a bool mask says where
    to look (True), a float mask is added to the scores."""
    _check_qkv(query, key, value)
    L, S = query.shape[-2], key.shape[-2]
    scale = 1 / math.sqrt(query.shape[-1]) if scale is None else scale
    key, value = _repeat_kv(query, key, value, enable_gqa)
    bias = _attn_bias(attn_mask, is_causal, L, S, query.dtype, _flash_fits(query, key, value, dropout_p))
    if bias is not None:
        try:
            np.broadcast_shapes(bias.shape, query.shape[:-1] + (S,))
        except ValueError:
            raise RuntimeError(f"scaled_dot_product_attention: attn_mask of shape {list(bias.shape)} does not "
                               f"broadcast to the scores' shape {list(query.shape[:-1] + (S,))} (..., L, S)") from None
    fused = _flash(query, key, value, bias, dropout_p, scale)
    if fused is not None:
        return fused
    scores = (query @ key.transpose(-2, -1)) * scale
    if bias is not None:
        scores = scores + bias
    weights = _safe_softmax(scores)
    if dropout_p > 0:
        from .nn import dropout
        weights = dropout(weights, dropout_p)
    return weights @ value


# ---- multi-head attention: nn.MultiheadAttention's computation as a function ----------------------
def _canonical_mask(mask, name, dtype):
    """a bool mask (True: do not attend) becomes an additive float mask of -inf; a float mask is kept"""
    if mask is None:
        return None
    if mask.dtype.np == np.bool_:
        return Tensor._make(np.where(mask._data, -np.inf, 0.0).astype(dtype.np))
    if not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {name} are supported")
    return mask


def _in_projection(query, key, value, E, in_w, in_b, separate, qkv_w):
    """q, k, v = the three linear projections (one packed weight (3E, E), or three separate ones)"""
    from .nn import linear
    bs = (None,) * 3 if in_b is None else in_b.split(E)
    if not separate:
        if in_w is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        qkv_w = in_w.split(E)
    elif any(w is None for w in qkv_w):
        raise AssertionError("use_separate_proj_weight is True but q_proj_weight, k_proj_weight or v_proj_weight "
                             "is None")
    return [linear(x, w, b) for x, w, b in zip((query, key, value), qkv_w, bs)]


def _check_mha_shapes(query, key, value, E, num_heads, embed_dim_to_check, attn_mask, key_padding_mask):
    if query.ndim not in (2, 3) or key.ndim != query.ndim or value.ndim != query.ndim:
        raise AssertionError(f"query, key and value should be 2-D (unbatched) or 3-D (batched) tensors of the same "
                             f"rank, got shapes {list(query.shape)}, {list(key.shape)}, {list(value.shape)}")
    if E != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {E}")
    if E % num_heads:
        raise AssertionError(f"embed_dim {E} not divisible by num_heads {num_heads}")
    if key.shape[:-1] != value.shape[:-1]:
        raise AssertionError(f"key shape {tuple(key.shape)} does not match value shape {tuple(value.shape)}")
    if key_padding_mask is not None and key_padding_mask.ndim != query.ndim - 1:
        raise AssertionError(f"key_padding_mask should be {query.ndim - 1}-D (batch, S) for "
                             f"{query.ndim}-D inputs, got shape {list(key_padding_mask.shape)}")
    if attn_mask is not None and attn_mask.ndim not in (2, 3):
        raise AssertionError(f"attn_mask's dimension {attn_mask.ndim} is not supported; use (L, S) or "
                             "(N * num_heads, L, S)")


def _extend_keys(k, v, attn_mask, kpm, bias_k, bias_v, add_zero_attn, static_k, static_v, bsz, H, hd):
    """bias_k/bias_v or add_zero_attn: one more key position (the masks get a column of zeros for it)"""
    from .._creation import zeros
    from .pad import pad
    from .shape import cat
    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key or value.")
        k, v = cat([k, bias_k.repeat(1, bsz, 1)]), cat([v, bias_v.repeat(1, bsz, 1)])
        attn_mask = None if attn_mask is None else pad(attn_mask, (0, 1))
        kpm = None if kpm is None else pad(kpm, (0, 1))
    elif (bias_k is None) != (bias_v is None):
        raise AssertionError("bias_k and bias_v must both be given or both be None")
    k = k.view(k.shape[0], bsz * H, hd).transpose(0, 1) if static_k is None else static_k
    v = v.view(v.shape[0], bsz * H, hd).transpose(0, 1) if static_v is None else static_v
    if add_zero_attn:
        k = cat([k, zeros((bsz * H, 1, hd), dtype=k.dtype)], dim=1)
        v = cat([v, zeros((bsz * H, 1, hd), dtype=v.dtype)], dim=1)
        attn_mask = None if attn_mask is None else pad(attn_mask, (0, 1))
        kpm = None if kpm is None else pad(kpm, (0, 1))
    return k, v, attn_mask, kpm


def _merged_mask(attn_mask, kpm, bsz, H, L, S):
    """attn_mask (L, S) or (N*H, L, S) plus key_padding_mask (N, S), as one additive mask"""
    if attn_mask is not None and attn_mask.ndim == 2:
        if tuple(attn_mask.shape) != (L, S):
            raise RuntimeError(f"The shape of the 2D attn_mask is {tuple(attn_mask.shape)}, but should be {(L, S)}.")
        attn_mask = attn_mask.unsqueeze(0)
    elif attn_mask is not None and tuple(attn_mask.shape) != (bsz * H, L, S):
        raise RuntimeError(f"The shape of the 3D attn_mask is {tuple(attn_mask.shape)}, but should be "
                           f"{(bsz * H, L, S)}.")
    if kpm is not None:
        if tuple(kpm.shape) != (bsz, S):
            raise AssertionError(f"expecting key_padding_mask shape of {(bsz, S)}, but got {tuple(kpm.shape)}")
        kpm = kpm.view(bsz, 1, 1, S).expand(-1, H, -1, -1).reshape(bsz * H, 1, S)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    return attn_mask


def _attend_with_weights(q, k, v, attn_mask, dropout_p, bsz, H, L, average):
    """the explicit path: the attention weights are computed, kept and returned"""
    from .linalg import bmm
    from .nn import dropout, softmax
    scores = bmm(q * math.sqrt(1.0 / q.shape[-1]), k.transpose(-2, -1))
    weights = softmax(scores if attn_mask is None else attn_mask + scores, -1)
    if dropout_p > 0:  # (the weights returned are those dropped out, as torch's)
        weights = dropout(weights, dropout_p)
    out = bmm(weights, v)
    weights = weights.view(bsz, H, L, k.shape[1])
    return out.transpose(0, 1).contiguous(), weights.mean(dim=1) if average else weights


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """Inputs are (L, N, E) (or (L, E) unbatched); returns the output and the attention weights (or None)."""
    from .nn import linear
    E = query.shape[-1]
    _check_mha_shapes(query, key, value, E, num_heads, embed_dim_to_check, attn_mask, key_padding_mask)
    unbatched = query.ndim == 2
    if unbatched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        key_padding_mask = None if key_padding_mask is None else key_padding_mask.unsqueeze(0)
    L, bsz = query.shape[:2]
    H, hd = num_heads, E // num_heads
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # sdpa builds the causal mask itself
    else:
        attn_mask, is_causal = _canonical_mask(attn_mask, "attn_mask", query.dtype), False
    q, k, v = _in_projection(query, key, value, E, in_proj_weight, in_proj_bias, use_separate_proj_weight,
                             (q_proj_weight, k_proj_weight, v_proj_weight))
    q = q.view(L, bsz * H, hd).transpose(0, 1)
    k, v, attn_mask, key_padding_mask = _extend_keys(k, v, attn_mask, key_padding_mask, bias_k, bias_v,
                                                     add_zero_attn, static_k, static_v, bsz, H, hd)
    S = k.shape[1]
    attn_mask = _merged_mask(attn_mask, key_padding_mask, bsz, H, L, S)
    p = dropout_p if training else 0.0
    if need_weights:
        out, weights = _attend_with_weights(q, k, v, attn_mask, p, bsz, H, L, average_attn_weights)
    else:
        if attn_mask is not None:
            attn_mask = attn_mask.view(bsz, H, -1, S) if attn_mask.shape[0] != 1 else attn_mask.unsqueeze(0)
        out = scaled_dot_product_attention(q.view(bsz, H, L, hd), k.view(bsz, H, S, hd), v.view(bsz, H, S, hd),
                                           attn_mask, p, is_causal)
        out, weights = out.permute(2, 0, 1, 3).contiguous(), None
    out = linear(out.view(bsz * L, E), out_proj_weight, out_proj_bias).view(L, bsz, E)
    if unbatched:
        out = out.squeeze(1)
        weights = None if weights is None else weights.squeeze(0)
    return out, weights
