"""Attention: torch's fused CPU kernel, or the reference ("math") path composed of matmul, softmax and dropout.

scaled_dot_product_attention: softmax(q k^T * scale + mask) v. Which of the two runs is torch's choice on a CPU:
the fused kernel when it is enabled and the inputs suit it, else the math path when that is enabled, else an error
after warnings saying why the fused kernel could not run. The switches live in ops/_sdp_backends.py (set by
torch.backends.cuda and torch.nn.attention.sdpa_kernel). multi_head_attention_forward: the projections, head split
and output projection of nn.MultiheadAttention around it.
"""
import math

import numpy as np

from .._tensor import Tensor
from .._user_line import warn_at_user_line
from . import _sdp_backends
from ._memory_formats import in_layout_of
from ._op import Op
from ._out import _c10
from ._sdp_backends import SDPBackend
from .nn import dropout
from .scalar_overloads import mul_scalar


def _check_inputs(query, key, value, attn_mask):
    """what torch checks before it picks a kernel: tensors, one dtype, at least 2 dims, the mask's dtype"""
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, Tensor):
            raise TypeError(f"scaled_dot_product_attention(): argument '{name}' must be Tensor, not "
                            f"{type(t).__name__}")
    if not query.dtype is key.dtype is value.dtype:
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got query.dtype: "
                           f"{_c10(query.dtype.np)} key.dtype: {_c10(key.dtype.np)} and value.dtype: "
                           f"{_c10(value.dtype.np)} instead.")
    if min(query.ndim, key.ndim, value.ndim) < 2:
        raise RuntimeError(f"Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
                           f"{query.ndim} key.dim: {key.ndim} and value.dim: {value.ndim} instead.")
    if attn_mask is not None and attn_mask.dtype.np not in (np.bool_, np.float32, query.dtype.np):
        raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                           f"attn_mask.dtype: {_c10(attn_mask.dtype.np)} and  query.dtype: "
                           f"{_c10(query.dtype.np)} instead.")


def _check_flash_fit(key, value):
    """torch's fused kernel reads S rows of value whatever value's length (past its end when shorter): microtorch
    refuses keys and values of different lengths there instead"""
    if key.shape[-2] != value.shape[-2]:
        raise RuntimeError(f"scaled_dot_product_attention: key {list(key.shape)} and value {list(value.shape)} need "
                           "the same sequence length (S)")


_SCALAR_TYPE = {"float64": "Double", "float32": "Float", "float16": "Half", "int64": "Long", "int32": "Int",
                "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def _matmul_misfit(a, b):
    """torch's error for a @ b (shapes) whose inner sizes differ, or None: mm's for a matrix on the right (the
    left's batch folded into rows), bmm's for batches on both sides; None too where microtorch's matmul says it"""
    if a[-1] == b[-2] or len(a) < 2:
        return None
    if len(b) == 2:
        return f"mat1 and mat2 shapes cannot be multiplied ({int(np.prod(a[:-1]))}x{a[-1]} and {b[0]}x{b[1]})"
    if len(a) < 3:
        return None
    try:
        batch = int(np.prod(np.broadcast_shapes(a[:-2], b[:-2])))
    except ValueError:
        return None
    return (f"Expected size for first two dimensions of batch2 tensor to be: [{batch}, {a[-1]}] but got: [{batch}, "
            f"{b[-2]}].")


def _matmul(a, b):
    """a @ b with torch's words when the sizes do not fit"""
    misfit = _matmul_misfit(tuple(a.shape), tuple(b.shape))
    if misfit:
        raise RuntimeError(misfit)
    return a @ b


def _check_math_dtype(query, value):
    """the math path's scaled scores are floating point (the default dtype for an integer query): torch's error
    comes when they meet an integer value"""
    if query.dtype.is_floating_point or query.dtype.is_complex:
        return
    from .._dtype import get_default_dtype
    scores = get_default_dtype().np
    if value.ndim == 2:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_c10(scores)} != "
                           f"{_c10(value.dtype.np)}")
    raise RuntimeError(f"expected scalar type {_SCALAR_TYPE[scores.name]} but found "
                       f"{_SCALAR_TYPE.get(value.dtype.np.name, value.dtype.np.name)}")


def _nothing_to_attend(query, value):
    """torch answers before choosing a kernel when there is no query row or no value to mix"""
    return query.shape[-2] == 0 or value.numel() == 0


def _empty_attention(query, key, value):
    """that answer: zeros of the output's shape, tied to the inputs by a product with 0 (as torch ties them), so
    that their gradients are zeros rather than missing"""
    from .._creation import zeros
    tie = mul_scalar(query.sum() + key.sum() + value.sum(), 0)
    return zeros(tuple(query.shape[:-1]) + (value.shape[-1],), dtype=query.dtype) + tie


# ---- which kernel: torch's checks of its fused CPU kernel, in its order, and its choice -------------------
# Each check returns None when the inputs pass it, else the warning torch gives when it has to say why ("" where
# torch fails the check silently).
def _sizes(t):
    return str(list(t.shape))


def _flash_dropout(q, k, v, mask, dropout_p, gqa):
    return "Both fused kernels do not support non-zero dropout." if dropout_p > 0 else None


def _flash_four_dims(q, k, v, mask, dropout_p, gqa):
    if q.ndim == k.ndim == v.ndim == 4:
        return None
    return (f"All fused kernels requires query, key and value to be 4 dimensional, but got Query dim: {q.ndim}, "
            f"Key dim: {k.ndim}, Value dim: {v.ndim} instead.")


def _flash_batch_and_heads(q, k, v, mask, dropout_p, gqa):
    if not q.shape[0] == k.shape[0] == v.shape[0]:
        return ("For dense inputs, both fused kernels require query, key and value to have the same batch_size. "
                f"Query.sizes(): {_sizes(q)}, Key.sizes(): {_sizes(k)}, Value.sizes(): {_sizes(v)} instead. To "
                "broadcast dense inputs, try using unsqueeze and expand_to before passing them into the kernel.")
    if gqa:
        return _flash_head_groups(q, k, v)
    if q.shape[1] == k.shape[1] == v.shape[1]:
        return None
    return ("For dense input, both fused kernels require query, key and value to have the same num_heads. "
            f"Query.sizes(): {_sizes(q)}, Key sizes(): {_sizes(k)}, Value sizes(): {_sizes(v)} instead. To "
            "broadcast dense inputs, try using unsqueeze and expand_to before passing them into the kernel.")


def _flash_head_groups(q, k, v):
    """enable_gqa: the fused kernel takes fewer key/value heads than query heads if they divide them"""
    hq, hk, hv = q.shape[1], k.shape[1], v.shape[1]
    if hk != hv:
        return ("Both fused kernels require key and value to have the same num_heads and batch_size but got: "
                f"Key sizes: {_sizes(k)}, Value sizes: {_sizes(v)}, Query sizes: {_sizes(q)} instead.")
    if hk == 0 or hq % hk:
        return ("The number of heads in key/value must divide number of heads in query.Got input Key sizes(): "
                f"{hk}, Value sizes(): {hv}, Query sizes(): {hq} instead.")
    return None


def _size_at(t, dim):
    """t.size(dim), with torch's IndexError for a tensor with too few dims (its check reads the mask so)"""
    if t.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if dim < -t.ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-t.ndim}, {t.ndim - 1}], but got "
                         f"{dim})")
    return t.shape[dim]


def _flash_mask(q, k, v, mask, dropout_p, gqa):
    """the fused kernel takes a constant mask of (L or 1, S or 1), alone or behind (B or 1, H or 1)"""
    if mask is None:
        return None
    if mask.requires_grad:
        return ""
    if _size_at(mask, -2) not in (q.shape[2], 1) or _size_at(mask, -1) not in (k.shape[2], 1):
        return ""
    if mask.ndim == 2 or mask.ndim == 4 and mask.shape[0] in (1, q.shape[0]) and mask.shape[1] in (1, q.shape[1]):
        return None
    return ("Please use the following attn mask shapes: 2d - ({Q_seq_len, 1}  x {KV_seq_len, 1}); 4d - ({Batch, 1} "
            "x {Num_heads, 1} x {Q_seq_len, 1}  x {KV_seq_len, 1})")


def _flash_head_size(q, k, v, mask, dropout_p, gqa):
    if q.shape[-1] == k.shape[-1] == v.shape[-1]:
        return None
    return (f"Flash attention requires q,k,v to have the same last dimension. Got Query.size(-1): {q.shape[-1]}, "
            f"Key.size(-1): {k.shape[-1]}, Value.size(-1): {v.shape[-1]} instead.")


def _flash_last_stride(q, k, v, mask, dropout_p, gqa):
    if q.stride(-1) == k.stride(-1) == v.stride(-1) == 1:
        return None
    why = (f"All fused kernels require the last dimension of the input to have stride 1. Got Query.stride(-1): "
           f"{q.stride(-1)}, Key.stride(-1): {k.stride(-1)}, Value.stride(-1): {v.stride(-1)}")
    if mask is not None:  # (the mask's own stride does not matter on a CPU)
        why += (f", Attn_mask.stride(-1): {mask.stride(-1)} (GPU backends require attn_mask's last dimension to "
                "have stride 1 while the CPU does not).")
    return why


def _flash_dtype(q, k, v, mask, dropout_p, gqa):
    if q.dtype.is_floating_point:
        return None
    return ("Expected query, key and value to all be of dtype: {Float, Double, BFloat16, Half}. Got Query dtype: "
            f"{_c10(q.dtype.np)}, Key dtype: {_c10(k.dtype.np)}, and Value dtype: {_c10(v.dtype.np)} instead.")


_FLASH_CHECKS = (_flash_dropout, _flash_four_dims, _flash_batch_and_heads, _flash_mask, _flash_head_size,
                 _flash_last_stride, _flash_dtype)


def _why_not_flash(*args):
    """None if torch's fused CPU kernel takes these inputs, else why not (see the checks above)"""
    for check in _FLASH_CHECKS:
        why = check(*args)
        if why is not None:
            return why
    return None


NO_VIABLE_BACKEND = ("No viable backend for scaled_dot_product_attention was found. This is likely due to turning "
                     "off both the math kernel and the fused kernels.")


def _pick_kernel(query, key, value, attn_mask, dropout_p, enable_gqa):
    """'flash' or 'math' as torch picks on a CPU: the fused kernel if it is enabled and takes the inputs, else the
    math path if it is enabled. Failing both, torch warns why the fused kernel did not run and raises."""
    flash_on = _sdp_backends.is_enabled(SDPBackend.FLASH_ATTENTION)
    math_on = _sdp_backends.is_enabled(SDPBackend.MATH)
    if not (flash_on or math_on):
        raise RuntimeError(NO_VIABLE_BACKEND)
    why = _why_not_flash(query, key, value, attn_mask, dropout_p, enable_gqa) if flash_on else ""
    if why is None:
        return "flash"
    if math_on:
        return "math"
    warn_at_user_line("Flash attention kernel not used because:")
    if why:
        warn_at_user_line(why)
    raise RuntimeError("No available kernel.  Aborting execution.")


# ---- the kernels --------------------------------------------------------------------------------------------
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
    """grouped-query attention: each key (value) head serves query.size(-3) // key.size(-3) query heads"""
    if not enable_gqa:
        return key, value
    hq, hk, hv = (_size_at(t, -3) for t in (query, key, value))
    if hk == 0 or hv == 0 or hq % hk or hq % hv:
        raise RuntimeError("Number of heads in key and value must divide the number of heads in ")  # (torch's, cut)
    return (key if hk == hq else key.repeat_interleave(hq // hk, -3),
            value if hv == hq else value.repeat_interleave(hq // hv, -3))


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


_KV_BLOCK = 512  # torch's fused CPU kernel walks the keys in blocks of 512, rescaling as the running max grows


def _np_flash_half(q, k, v, bias, scale):
    """torch's fused kernel on float16 inputs: scores, maxima and sums in float32, each block's unnormalised
    probabilities rounded to float16 for their product with v (summed in float32), the result cast back"""
    f32 = np.float32
    scores = (q.astype(f32) @ np.swapaxes(k, -1, -2).astype(f32)) * f32(scale)
    scores = scores if bias is None else scores + bias.astype(f32)
    v = v.astype(f32)
    out, total, top = 0, 0, np.full(scores.shape[:-1] + (1,), -np.inf, f32)
    for j in range(0, scores.shape[-1], _KV_BLOCK):
        block = scores[..., j:j + _KV_BLOCK]
        new_top = np.maximum(top, block.max(-1, keepdims=True))
        finite_top = np.where(np.isneginf(new_top), 0, new_top)  # (a row masked so far gets exp(-inf) = 0)
        e = np.exp(block - finite_top)
        shrink = np.exp(np.where(np.isneginf(top), -np.inf, top - finite_top))
        out = out * shrink + e.astype(np.float16).astype(f32) @ v[..., j:j + _KV_BLOCK, :]
        total, top = total * shrink + e.sum(-1, keepdims=True), new_top
    return (out / np.where(total == 0, 1, total)).astype(np.float16)


class ScaledDotProductFlashAttentionForCpu(Op):
    """o = P v, P = softmax(q k^T s + bias):  dv = P^T g, dS = P (g v^T - rowsum(P g v^T)), dq = dS k s, dk = dS^T q s"""
    _grad_fn_name = "ScaledDotProductFlashAttentionForCpuBackward0"

    @staticmethod
    def forward(ctx, q, k, v, bias, scale):
        ctx.scale, ctx.bias = scale, bias
        ctx.save_for_backward(q, k, v)
        if q.dtype == np.float16:
            out = _np_flash_half(q, k, v, bias, scale)
        else:
            scores = q @ np.swapaxes(k, -1, -2) * scale
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


def _flash(query, key, value, bias, scale):
    """torch's fused CPU kernel (one op, its own grad_fn name); it takes the mask broadcast to the scores' shape"""
    b = None if bias is None else np.broadcast_to(bias._data, query.shape[:-1] + (key.shape[-2],))
    return ScaledDotProductFlashAttentionForCpu.apply(query, key, value, b, scale)


def _math(query, key, value, bias, dropout_p, scale, enable_gqa):
    """torch's reference path, op by op as torch composes it: q and k^T each scaled by sqrt(scale) before their
    product (q by -sqrt(-scale) for a negative scale). Half-precision inputs are computed in float32 and the result
    cast back (unless torch.backends.cuda.allow_fp16_bf16_reduction_math_sdp(True))."""
    _check_math_dtype(query, value)
    low = query.dtype.np.itemsize == 2 and not _sdp_backends.math_reduced_precision_allowed()
    if low:
        given, (query, key, value) = query.dtype, (t.float() for t in (query, key, value))
    root = math.sqrt(abs(scale))
    query = mul_scalar(query, -root if scale < 0 else root)
    key, value = _repeat_kv(query, key, value, enable_gqa)
    scores = _matmul(query, mul_scalar(key.transpose(-2, -1), root))
    if bias is not None:
        _check_mask_fits(bias, scores.shape)
        scores = scores + bias
    weights = _safe_softmax(scores)  # (torch records one node, SafeSoftmaxBackward0, where this composes softmax)
    if dropout_p > 0:
        weights = dropout(weights, dropout_p)
    out = _matmul(weights, value)
    return out.to(given) if low else out


def _check_mask_fits(bias, shape):
    """the math path adds the mask into the scores in place: torch's errors when it does not broadcast to them"""
    a, b = tuple(shape), tuple(bias.shape)
    n = max(len(a), len(b))
    for dim in range(n - 1, -1, -1):  # (torch names the first misfit from the right, as a dim of the result)
        x, y = (t[dim - n + len(t)] if dim - n + len(t) >= 0 else 1 for t in (a, b))
        if x != y and 1 not in (x, y):
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) at non-singleton "
                               f"dimension {dim}")
    if np.broadcast_shapes(a, b) != a:
        raise RuntimeError(f"output with shape {list(a)} doesn't match the broadcast shape "
                           f"{list(np.broadcast_shapes(a, b))}")


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """softmax(query @ key^T * scale + mask) @ value, scale = 1/sqrt(E) unless given; a bool mask says where
    to look (True), a float mask is added to the scores. The kernel is torch's choice (_pick_kernel)."""
    _check_inputs(query, key, value, attn_mask)
    if _nothing_to_attend(query, value):
        return _empty_attention(query, key, value)
    kernel = _pick_kernel(query, key, value, attn_mask, dropout_p, enable_gqa)
    L, S, E = query.shape[-2], key.shape[-2], query.shape[-1]
    scale = (1 / math.sqrt(E) if E else math.inf) if scale is None else scale
    bias = _attn_bias(attn_mask, is_causal, L, S, query.dtype, kernel == "flash")
    if kernel == "flash":
        _check_flash_fit(key, value)
        key, value = _repeat_kv(query, key, value, enable_gqa)
        return _flash(query, key, value, bias, scale)
    return _math(query, key, value, bias, dropout_p, scale, enable_gqa)


# ---- multi-head attention: nn.MultiheadAttention's computation as a function ----------------------
def _canonical_mask(mask, name, dtype, other=None, other_name=None):
    """a bool mask (True: do not attend) becomes an additive float mask of -inf; a float mask is kept. other: the
    mask given with it, whose other dtype torch warns about"""
    if mask is None:
        return None
    if other is not None and other.dtype is not mask.dtype:
        warn_at_user_line(f"Support for mismatched {name} and {other_name} is deprecated. Use same type for both "
                          "instead.", UserWarning)
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


def _check_mha_shapes(query, key, value, E, num_heads, embed_dim_to_check, attn_mask, key_padding_mask, separate):
    if query.ndim not in (2, 3) or key.ndim != query.ndim or value.ndim != query.ndim:
        raise AssertionError(f"query, key and value should be 2-D (unbatched) or 3-D (batched) tensors of the same "
                             f"rank, got shapes {list(query.shape)}, {list(key.shape)}, {list(value.shape)}")
    if E != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {E}")
    if E % num_heads:
        raise AssertionError(f"embed_dim {E} not divisible by num_heads {num_heads}")
    if key.shape != value.shape and (not separate or key.shape[:2] != value.shape[:2]):  # (kdim, vdim may differ
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")  # with their own
        # projections only)
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
    _check_mha_shapes(query, key, value, E, num_heads, embed_dim_to_check, attn_mask, key_padding_mask,
                      use_separate_proj_weight)
    unbatched = query.ndim == 2
    if unbatched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        key_padding_mask = None if key_padding_mask is None else key_padding_mask.unsqueeze(0)
    L, bsz = query.shape[:2]
    H, hd = num_heads, E // num_heads
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", query.dtype, attn_mask, "attn_mask")
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
