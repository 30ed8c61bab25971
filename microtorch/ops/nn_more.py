"""embedding_bag and pdist (ops of their own in torch), bilinear and gumbel_softmax (composed as torch does)."""
import numpy as np

from .._tensor import Tensor
from .._user_line import warn_at_user_line
from ._op import Op, normalize_dims
from .conv import shown_padding_idx
from .trilinear import Trilinear


def _zeros(shape, like):
    return Tensor._make(np.zeros(shape, like.dtype.np if isinstance(like, Tensor) else like.dtype))


def _const(a):
    return Tensor._make(np.ascontiguousarray(a))


# ---- embedding_bag --------------------------------------------------------------------------------------
def _bags(idx, offsets, n_bags, padding_idx):
    """bag number of every index, and which indices count (not padding_idx, not past the last offset)"""
    bag = np.searchsorted(offsets, np.arange(len(idx)), side="right") - 1
    keep = (bag < n_bags) & (bag >= 0)
    if padding_idx is not None:
        keep &= idx != padding_idx
    return bag, keep


def _freq_scale(idx):
    """scale_grad_by_freq: 1 / (how often an index occurs) per index, as torch 2.13's CPU kernel computes it:
    the k-th smallest distinct index is divided by the count of the k-th element of the sorted indices
    (the same count when indices do not repeat, another one after a repeated index)"""
    values, counts = np.unique(idx, return_counts=True)
    kth_sorted = np.sort(idx)[:len(values)]
    per_value = 1.0 / counts[np.searchsorted(values, kth_sorted)]
    return per_value[np.searchsorted(values, idx)]


class EmbeddingBag(Op):
    """out[b] = reduce over k in bag b of w_k * W[idx_k] (sum, mean or max): dW[idx_k] += g[b] * scale_k
    (scale_k also divided by idx_k's count with scale_grad_by_freq)"""
    _grad_fn_name = "EmbeddingBagBackward0"
    _edges = (0, 1)  # (as torch's: the weight's and the per-sample weights', None when there are none)
    # torch's: the indices and offsets as given, and its kernel's offset2bag, bag_size and max_indices (results)
    _saved_names = ("indices", "offsets", "per_sample_weights", "weight", "result1", "result2", "result3")
    _saved_values = {"mode": "mode_code", "padding_idx": "shown_padding_idx", "scale_grad_by_freq": "scale_by_freq",
                     "sparse": "sparse", "weight_sym_argsize_0": "n_rows"}

    @staticmethod
    def forward(ctx, weight, psw, indices, offsets, n_bags, mode, padding_idx, scale_grad_by_freq):
        ctx.shown_padding_idx, ctx.scale_by_freq, ctx.sparse = shown_padding_idx(padding_idx), scale_grad_by_freq, False
        ctx.n_rows = weight.shape[0]
        freq = _freq_scale(indices) if scale_grad_by_freq else None
        offset2bag, keep = _bags(indices, offsets[:n_bags], n_bags, padding_idx)
        idx, bag = indices[keep], offset2bag[keep]
        D = weight.shape[1]
        ctx.idx, ctx.bag, ctx.mode, ctx.shape = idx, bag, mode, (n_bags, D)
        ctx.mode_code = ("sum", "mean", "max").index(mode)  # (torch's number for it)
        ctx.weight_shape, ctx.psw_pos, ctx.n_idx = weight.shape, np.nonzero(keep)[0], len(keep)
        if mode == "max":
            out, rows = np.zeros((n_bags, D), weight.dtype), np.full((n_bags, D), -1)
            for b in np.unique(bag):
                sel = idx[bag == b]
                rows[b] = sel[np.argmax(weight[sel], axis=0)]
                out[b] = weight[rows[b], np.arange(D)]
            ctx.rows = rows
        else:
            scale = np.ones(len(idx), weight.dtype) if psw is None else psw[keep]
            if mode == "mean":
                scale = scale / np.maximum(np.bincount(bag, minlength=n_bags), 1)[bag]
            ctx.scale = scale.astype(weight.dtype)
            ctx.grad_scale = ctx.scale if freq is None else (ctx.scale * freq[keep]).astype(weight.dtype)
            out = np.zeros((n_bags, D), weight.dtype)
            np.add.at(out, bag, weight[idx] * ctx.scale[:, None])
        if _fast_sum(weight, psw, mode, padding_idx):  # (torch's kernel then leaves offset2bag empty)
            offset2bag = offset2bag[:0]
        ctx.save_for_backward(indices, offsets, psw, weight if ctx.needs_input_grad[1] else None,
                              *_bag_results(ctx, offset2bag, np.result_type(indices, offsets)))
        return out

    @staticmethod
    def _apply_linear(ctx, w_like):
        """the op's (linear) map of a weight-shaped tensor, used for the tangent"""
        if ctx.mode == "max":
            flat = np.where(ctx.rows >= 0, ctx.rows * ctx.shape[1] + np.arange(ctx.shape[1]), 0).reshape(-1)
            picked = w_like.reshape(-1).index_select(0, _const(flat)).view(ctx.shape)
            return picked * _const((ctx.rows >= 0).astype(picked.dtype.np))
        from .rearrange import index_add
        rows = w_like.index_select(0, _const(ctx.idx)) * _const(ctx.scale).unsqueeze(1)
        return index_add(_zeros(ctx.shape, w_like), 0, _const(ctx.bag), rows)

    @staticmethod
    def backward(ctx, grad):
        from .rearrange import index_add
        weight = ctx.saved_tensors[3]  # (the rest, torch's kernel's results, say what ctx keeps)
        gw = gpsw = None
        D = ctx.shape[1]
        if ctx.mode == "max":
            n = ctx.weight_shape
            live = (ctx.rows >= 0).reshape(-1)
            flat = (ctx.rows * D + np.arange(D)).reshape(-1)[live]
            gw = index_add(_zeros((n[0] * D,), grad), 0, _const(flat), grad.reshape(-1)[_const(live)]).view(n)
        else:
            rows = grad.index_select(0, _const(ctx.bag))
            if ctx.needs_input_grad[0]:
                scaled = rows * _const(ctx.grad_scale).unsqueeze(1)
                gw = index_add(_zeros(ctx.weight_shape, grad), 0, _const(ctx.idx), scaled)
            if ctx.needs_input_grad[1]:
                picked = (rows * weight.index_select(0, _const(ctx.idx))).sum(1)
                gpsw = index_add(_zeros((ctx.n_idx,), grad), 0, _const(ctx.psw_pos), picked)
        return gw, gpsw, None, None, None, None, None, None

    @staticmethod
    def jvp(ctx, tw, tpsw, *_):
        out = EmbeddingBag._apply_linear(ctx, tw) if tw is not None else None
        if tpsw is not None:
            from .rearrange import index_add
            w = ctx.inputs[0]
            rows = w.index_select(0, _const(ctx.idx)) * tpsw.index_select(0, _const(ctx.psw_pos)).unsqueeze(1)
            term = index_add(_zeros(ctx.shape, w), 0, _const(ctx.bag), rows)
            out = term if out is None else out + term
        return out


def _bag_results(ctx, offset2bag, dtype):
    """torch's offset2bag (each index's bag), bag_size (how many indices count in each bag, zeros for "sum") and
    max_indices (for "max" the row of each bag's maximum, 0 for an empty bag; else bag_size again), in the
    indices' and offsets' promoted dtype"""
    n_bags = ctx.shape[0]
    sizes = np.zeros(n_bags, dtype) if ctx.mode == "sum" else np.bincount(ctx.bag, minlength=n_bags).astype(dtype)
    top = np.maximum(ctx.rows, 0).astype(dtype) if ctx.mode == "max" else sizes
    return offset2bag.astype(dtype), sizes, top


def _fast_sum(weight, psw, mode, padding_idx):
    """torch's CPU kernel takes its fast path (which skips offset2bag) for "sum" with float32 or float16 rows
    laid out contiguously, no padding_idx, and per-sample weights (if any) contiguous"""
    return (mode == "sum" and weight.dtype in (np.float32, np.float16) and padding_idx is None
            and weight.strides[1] == weight.itemsize and (psw is None or psw.strides[0] == psw.itemsize))


def _bag_offsets(input, offsets, include_last_offset):
    """flat indices, offsets (as torch's op takes them: with the last one, if included) and the number of bags, from
    (B, L) input or 1-d input with offsets"""
    idx = input._data
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(f"if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
        if idx.dtype == bool or idx.dtype.kind == "c":
            raise NotImplementedError(f"embedding_bag: \"arange_cpu\" not implemented for {input.dtype} (the indices "
                                      "of a 2-d input must be integers)")
        B, L = idx.shape
        return idx.reshape(-1), np.arange(0, B * L, L, idx.dtype) if L else np.zeros(B, idx.dtype), B
    if input.ndim != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    if not isinstance(offsets, Tensor) or offsets.ndim != 1:
        raise ValueError("offsets has to be a 1D Tensor")
    off = offsets._data
    if off.dtype.kind not in "iu":
        raise RuntimeError(f"embedding_bag: expected offsets of an integer dtype, got {offsets.dtype}")
    if len(off) and (off[0] != 0 or (np.diff(off) < 0).any() or off[-1] > len(idx)):
        raise RuntimeError(f"embedding_bag: offsets must start at 0, never decrease and stay within the input "
                           f"({len(idx)} indices), got {off.tolist()}")
    return idx, off, max(len(off) - 1, 0) if include_last_offset else len(off)


def _renorm_rows(weight, rows, max_norm, norm_type):
    """as torch: the looked-up rows of weight whose norm exceeds max_norm are scaled down in place"""
    w = weight._data
    norms = np.linalg.norm(w[rows], ord=norm_type, axis=1)
    w[rows] *= np.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)[:, None].astype(w.dtype)
    weight._version_counter[0] += 1


def _check_bag_args(input, weight, per_sample_weights):
    """torch's Python-level checks, in its order"""
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({list(per_sample_weights.shape)}) is not None, "
                         f"then it must have the same shape as the input ({list(input.shape)})")
    if not isinstance(weight, Tensor):
        raise TypeError(f"embedding_bag(): argument 'weight' must be Tensor, not {type(weight).__name__}")
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}")
    if not isinstance(input, Tensor):
        raise TypeError(f"embedding_bag(): argument 'input' must be Tensor, not {type(input).__name__}")


def _check_bag_indices(idx, weight):
    """what torch's kernel checks: integer indices, each a row of weight"""
    if idx.dtype.kind not in "iu":
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {idx.dtype} instead (while checking arguments for embedding_bag)")
    n = weight.shape[0]
    out_of_range = (idx < 0) | (idx >= n)
    if not out_of_range.any():  # (asked first: under vmap, nonzero's data-dependent shape cannot batch)
        return
    bad = np.nonzero(out_of_range)[0][0]
    raise RuntimeError(f"embedding_bag: Index {bad} of input takes value {idx[bad]} which is not in the valid range "
                       f"[0, {n})")


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """The sum, mean or max of the embeddings of each bag of indices, without building the (bag, L, D) tensor."""
    if isinstance(weight, Tensor) and isinstance(input, Tensor) and weight.dtype.np == np.int64 and \
            input.dtype.is_floating_point:
        warn_at_user_line("Argument order of nn.functional.embedding_bag was changed. Usage `embedding_bag(weight, "
                          "input, ...)` is deprecated, and should now be `embedding_bag(input, weight, ...)`.")
        weight, input = input, weight
    _check_bag_args(input, weight, per_sample_weights)
    idx, offsets_, n_bags = _bag_offsets(input, offsets, include_last_offset)
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and (scale_grad_by_freq or sparse):
        raise ValueError("max mode does not support scaling the gradient by the frequency" if scale_grad_by_freq
                         else "max mode does not support sparse weights")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    _check_bag_indices(idx, weight)
    if sparse:
        raise NotImplementedError("embedding_bag: sparse=True gives a sparse gradient, and microtorch has no sparse "
                                  "tensors; use sparse=False (the same values, as a dense gradient)")
    if padding_idx is not None:
        if not -weight.shape[0] <= padding_idx < weight.shape[0]:
            raise RuntimeError(f"embedding_bag: padding_idx must be within the number of embeddings "
                               f"({weight.shape[0]}), got {padding_idx}")
        padding_idx %= weight.shape[0]
    if max_norm is not None:
        _renorm_rows(weight, np.unique(idx), max_norm, norm_type)
    psw = per_sample_weights  # (torch's functional flattens it, as the input, only for 2-d input)
    psw = psw.reshape(-1) if psw is not None and psw.ndim != 1 else psw
    return EmbeddingBag.apply(weight, psw, idx, offsets_, n_bags, mode, padding_idx, bool(scale_grad_by_freq))


# ---- pdist ---------------------------------------------------------------------------------------------
def _pair_diffs(x):
    """x[i] - x[j] for every pair of rows i < j (in pdist's order), and the pairs"""
    i, j = np.triu_indices(x.shape[0], 1)
    return x.index_select(0, _const(i)) - x.index_select(0, _const(j)), i, j


def _dist_slope(d, dist, p):
    """d dist / d diff for dist = ||diff||_p (0 where the distance is 0, as torch)"""
    live = _const((dist._data != 0)[:, None].astype(d.dtype.np))
    safe = dist.masked_fill(_const(dist._data == 0), 1.0).unsqueeze(1)
    if p == 0:
        return d * 0
    if p == 1:
        return d.sign() * live
    if p == 2:
        return d / safe * live
    if p == float("inf"):
        return d.sign() * _const((np.abs(d._data) == dist._data[:, None]).astype(d.dtype.np)) * live
    return d.sign() * d.abs() ** (p - 1) / safe ** (p - 1) * live


class Pdist(Op):
    """||x_i - x_j||_p for i < j;  dx_i = sum_j g_ij * d dist_ij / d (x_i - x_j), dx_j the opposite"""
    _grad_fn_name = "PdistBackward0"
    _saved_names, _saved_values = ("self", "result"), {"p": "p"}

    @staticmethod
    def forward(ctx, x, p):
        ctx.p = p
        i, j = np.triu_indices(x.shape[0], 1)
        d = np.abs(x[i] - x[j])
        out = np.minimum(np.ceil(d), 1).sum(1) if p == 0 else d.max(1, initial=0) if p == float("inf") else \
            (d ** p).sum(1) ** (1 / p)
        out = np.asarray(out, x.dtype)
        ctx.save_for_backward(x, out)  # (torch's node keeps the distances too; backward recomputes them as a graph)
        return out

    @staticmethod
    def _dists(ctx, x):
        from .reduce import norm
        d, i, j = _pair_diffs(x)
        return d, norm(d, ctx.p, dim=1) if ctx.p != 0 else None, i, j

    @staticmethod
    def backward(ctx, grad):
        from .rearrange import index_add
        from .shape import cat
        x, _ = ctx.saved_tensors
        d, dist, i, j = Pdist._dists(ctx, x)
        if dist is None:
            return x * 0, None
        gd = _dist_slope(d, dist, ctx.p) * grad.unsqueeze(1)
        return index_add(x * 0, 0, _const(np.concatenate([i, j])), cat([gd, -gd])), None

    @staticmethod
    def jvp(ctx, t, _p):
        x = ctx.inputs[0]
        d, dist, i, j = Pdist._dists(ctx, x)
        if dist is None:
            return _zeros((len(i),), x)
        td = t.index_select(0, _const(i)) - t.index_select(0, _const(j))
        return (_dist_slope(d, dist, ctx.p) * td).sum(1)


def pdist(input, p=2):
    """The p-norm distance between every pair of rows of an (N, M) input: N(N-1)/2 values, row pairs in order."""
    if isinstance(p, Tensor) and p.numel() == 1:
        p = p.item()  # (a one-element tensor is a Scalar to torch's parser)
    if not isinstance(p, (int, float, np.number)) or isinstance(p, bool):
        raise TypeError(f"pdist(): argument 'p' (position 2) must be float, not {type(p).__name__}")
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not p >= 0:
        raise RuntimeError("pdist only supports non-negative p values")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"pdist only supports floating-point dtypes, got {input.dtype}")
    return Pdist.apply(input, float(p))


# ---- bilinear and gumbel_softmax --------------------------------------------------------------------------
def _check_bilinear(input1, input2, weight, bias):
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.ndim} and {input2.ndim}")
    for d, (a, b) in enumerate(zip(input1.shape[:-1], input2.shape[:-1])):
        if a != b:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {d}: got {a} and {b}")
    if not input1.dtype is input2.dtype is weight.dtype:
        raise RuntimeError(f"bilinear(): All tensors must have the same dtype, got input1: {input1.dtype}, input2: "
                           f"{input2.dtype}, weight: {weight.dtype}")
    if weight.ndim != 3:
        raise IndexError(f"bilinear(): Dimension out of range: weight must be 3-d (out, in1, in2), got "
                         f"{list(weight.shape)}")
    for k, (x, want) in enumerate(((input1, weight.shape[1]), (input2, weight.shape[2])), 1):
        if x.ndim == 0 or x.shape[-1] != want:
            raise RuntimeError(f"bilinear(): input{k} size does not match weight size: got "
                               f"{x.shape[-1] if x.ndim else 0} but expected {want}")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != weight.shape[0]):
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {bias.shape[-1] if bias.ndim else 0}"
                           f" but expected {weight.shape[0]}")


def bilinear(input1, input2, weight, bias=None):
    """y_o = x1^T W_o x2 + b_o over the last dims of input1 (.., I) and input2 (.., J); weight (O, I, J)"""
    _check_bilinear(input1, input2, weight, bias)
    batch = input1.shape[:-1]
    flat = Trilinear.apply(input1.reshape(-1, input1.shape[-1]), weight, input2.reshape(-1, input2.shape[-1]))
    out = flat.view(*batch, weight.shape[0])
    return out if bias is None else out + bias


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """softmax((logits + Gumbel noise) / tau): a differentiable sample of a category; hard=True gives the one-hot
    sample in the forward pass and the soft sample's gradient (straight-through)."""
    from .nn import softmax
    if not logits.dtype.is_floating_point:  # (the noise is drawn in the logits' dtype, as torch does)
        raise RuntimeError("gumbel_softmax: Exponential distribution is a continuous probability distribution. dtype "
                           f"must be a floating point but you specified {logits.dtype}")
    if not isinstance(tau, (int, float, np.number, Tensor)) or isinstance(tau, bool):
        raise TypeError(f"gumbel_softmax(): unsupported operand type(s) for /: 'Tensor' and '{type(tau).__name__}' "
                        "(tau is a positive number)")
    normalize_dims(dim, logits.ndim, "gumbel_softmax")
    if eps != 1e-10:
        warn_at_user_line("`eps` parameter is deprecated and has no effect.")
    from .._creation import empty_like
    gumbels = -empty_like(logits).exponential_().log()  # -log(Exp(1)) ~ Gumbel(0, 1), drawn as torch draws it
    if isinstance(tau, Tensor) and tau.dtype.is_complex:
        raise NotImplementedError(f'gumbel_softmax: "softmax_lastdim_kernel_impl" not implemented for {tau.dtype} '
                                  "(tau is a positive real number)")
    y_soft = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    if y_soft.shape != logits.shape:
        raise RuntimeError(f"gumbel_softmax: Index tensor must have the same number of dimensions as self tensor "
                           f"(tau {list(tau.shape)} broadcast the logits {list(logits.shape)})")
    one_hot = np.ones((), y_soft.dtype.np)
    if y_soft.ndim:
        index = y_soft._data.argmax(axis=dim)
        one_hot = np.zeros(y_soft.shape, y_soft.dtype.np)
        np.put_along_axis(one_hot, np.expand_dims(index, dim), 1.0, axis=dim)
    return Tensor._make(one_hot) - y_soft.detach() + y_soft


def assert_int_or_pair(arg, arg_name, message):
    """raise AssertionError(message.format(arg_name)) unless arg is an int or a pair"""
    try:
        ok = isinstance(arg, int) or len(arg) == 2
        text = None if ok else message.format(arg_name)
    except (TypeError, AttributeError) as e:  # (no len(), or a message that is no format string)
        raise type(e)(f"assert_int_or_pair(): {e}") from None
    if not ok:
        raise AssertionError(text)


# ---- conv_tbc ------------------------------------------------------------------------------------------
def _tbc(x, w, b, pad):
    """sum_k x_padded[t + k] @ w[k] + b in Tensor ops (time, batch, channel layout)"""
    from .pad import pad as pad_
    xp = pad_(x, (0, 0, 0, 0, pad, pad)) if pad else x
    steps = xp.shape[0] - w.shape[0] + 1
    out = sum(xp[k:k + steps] @ w[k] for k in range(w.shape[0]))
    return out if b is None else out + b


class ConvTbc(Op):
    """y[t] = sum_k x_pad[t+k] W[k] + b:  dx_pad[t+k] += g[t] W[k]^T,  dW[k] = sum_t x_pad[t+k]^T g[t],  db = sum g"""
    _grad_fn_name = "ConvTbcBackward0"
    _saved_names, _saved_values = ("self", "weight", "bias"), {"pad": "pad"}

    @staticmethod
    def forward(ctx, x, w, b, pad):
        ctx.pad = pad
        xp = np.pad(x, ((pad, pad), (0, 0), (0, 0)))
        windows = np.lib.stride_tricks.sliding_window_view(xp, w.shape[0], axis=0)  # (T_out, B, C_in, K)
        ctx.save_for_backward(x, w, b)  # (the bias too: torch's node keeps it, and pack hooks see it)
        return np.einsum("tbck,kco->tbo", windows, w) + b

    @staticmethod
    def backward(ctx, grad):
        from .pad import pad as pad_
        x, w, _bias = ctx.saved_tensors
        K, p, steps = w.shape[0], ctx.pad, grad.shape[0]
        xp = pad_(x, (0, 0, 0, 0, p, p)) if p else x
        total = xp.shape[0]
        gx = sum(pad_(grad @ w[k].t(), (0, 0, 0, 0, k, total - steps - k)) for k in range(K))
        gx = gx[p:p + x.shape[0]]
        gw = [xp[k:k + steps].reshape(-1, x.shape[2]).t() @ grad.reshape(-1, w.shape[2]) for k in range(K)]
        from .shape import stack
        return gx, stack(gw), grad.sum((0, 1)), None

    @staticmethod
    def jvp(ctx, tx, tw, tb, _pad):
        x, w = ctx.inputs[:2]
        out = 0
        if tx is not None:
            out = out + _tbc(tx, w, None, ctx.pad)
        if tw is not None:
            out = out + _tbc(x, tw, None, ctx.pad)
        return out if tb is None else out + tb


def conv_tbc(input, weight, bias, pad=0):
    """A 1-d convolution over time of (time, batch, channel) inputs; weight (kernel, in, out)."""
    if input.ndim != 3:
        raise RuntimeError("conv_tbc: Input must have 3 dims: time, batch, in_channel")
    if weight.ndim != 3:
        raise RuntimeError("conv_tbc: Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.")
    if bias.ndim != 1:
        raise RuntimeError("conv_tbc: Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("conv_tbc: Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("conv_tbc: Bias size must equal dim 2 in the weight tensor (output channels).")
    if input.shape[0] + 2 * pad < weight.shape[0]:
        raise RuntimeError(f"conv_tbc: the padded input ({input.shape[0] + 2 * pad} steps) is shorter than the kernel "
                           f"({weight.shape[0]})")
    if not input.dtype is weight.dtype is bias.dtype:
        raise RuntimeError(f"conv_tbc: expected input, weight and bias of one dtype, got {input.dtype}, "
                           f"{weight.dtype} and {bias.dtype}")
    return ConvTbc.apply(input, weight, bias, int(pad))
