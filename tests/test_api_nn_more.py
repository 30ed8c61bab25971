"""nn2's part of issue 13, against torch 2.13: normalisations (group, instance, RMS, local response) and
attention (scaled_dot_product_attention, MultiheadAttention, the Transformer family). Values, grad_fn
names, gradients, second order, jvp and vmap (tests/op_oracle.py); modules with torch's weights loaded
(outputs, gradients, masks, batch_first, train/eval, state_dict keys, repr, warnings)."""
import math
import warnings

import numpy as np
import pytest
import torch

import microtorch as mt
from op_oracle import check_op, close

R = np.random.default_rng(13)
X = R.standard_normal((2, 4, 3))
W4, B4 = R.standard_normal(4), R.standard_normal(4)
FLASH = "ScaledDotProductFlashAttentionForCpuBackward0"


def F(lib):
    return lib.nn.functional


# ---- normalisations -----------------------------------------------------------------------------
NORMS = [
    ("group_norm affine", lambda l, x, w, b: F(l).group_norm(x, 2, w, b), (X, W4, B4), "NativeGroupNormBackward0"),
    ("group_norm 1 group", lambda l, x: F(l).group_norm(x, 1), (X,), "NativeGroupNormBackward0"),
    ("group_norm 4d", lambda l, x, w: F(l).group_norm(x, 4, w, eps=0.1), (R.standard_normal((2, 4, 2, 2)), W4),
     "NativeGroupNormBackward0"),
    ("instance_norm", lambda l, x, w, b: F(l).instance_norm(x, weight=w, bias=b), (X, W4, B4), "ViewBackward0"),
    ("rms_norm", lambda l, x, w: F(l).rms_norm(x, (4, 3), w), (X, R.standard_normal((4, 3))), "MulBackward0"),
    ("rms_norm eps", lambda l, x: F(l).rms_norm(x, [3], eps=0.5), (X,), "MulBackward0"),
    ("local_response_norm 3d", lambda l, x: F(l).local_response_norm(x, 3, alpha=0.5, k=2.0), (X,), "DivBackward0"),
    ("local_response_norm 4d", lambda l, x: F(l).local_response_norm(x, 2, alpha=0.3, beta=0.6),
     (R.standard_normal((2, 5, 2, 3)),), "DivBackward0"),
]


@pytest.mark.parametrize("name, f, args, grad_fn", NORMS, ids=[n[0] for n in NORMS])
def test_norms_as_torch(name, f, args, grad_fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (vmap's one-example-at-a-time notice)
        check_op(f, *args, grad_fn=grad_fn)


def test_instance_norm_running_stats_as_torch():
    for lib in (torch, mt):
        rm, rv = lib.zeros(4, dtype=lib.float64), lib.ones(4, dtype=lib.float64)
        x = lib.tensor(X)
        y_train = F(lib).instance_norm(x, rm, rv, momentum=0.3)
        y_eval = F(lib).instance_norm(x, rm, rv, use_input_stats=False)
        if lib is torch:
            want = (y_train, y_eval, rm, rv)
    for a, b, what in zip((y_train, y_eval, rm, rv), want, ("train", "eval", "running_mean", "running_var")):
        close(a, b, what)


# ---- scaled dot-product attention ---------------------------------------------------------------
Q, K, V = R.standard_normal((2, 3, 4)), R.standard_normal((2, 5, 4)), R.standard_normal((2, 5, 2))
MASK = R.standard_normal((3, 5)) > 0
MASK[1] = False  # a query that may look nowhere: its output is 0 (and no NaN reaches the gradients)
Q4, K4, V4 = R.standard_normal((2, 2, 3, 4)), R.standard_normal((2, 2, 5, 4)), R.standard_normal((2, 2, 5, 4))
SDPA = [
    ("plain", lambda l, q, k, v: F(l).scaled_dot_product_attention(q, k, v), (Q, K, V), "UnsafeViewBackward0"),
    ("scale", lambda l, q, k, v: F(l).scaled_dot_product_attention(q, k, v, scale=0.3), (Q, K, V),
     "UnsafeViewBackward0"),
    ("causal", lambda l, q, k, v: F(l).scaled_dot_product_attention(q, k, v, is_causal=True), (Q, K, V),
     "UnsafeViewBackward0"),
    ("float mask", lambda l, q, k, v, m: F(l).scaled_dot_product_attention(q, k, v, attn_mask=m),
     (Q, K, V, R.standard_normal((2, 3, 5))), "UnsafeViewBackward0"),
    ("2d", lambda l, q, k, v: F(l).scaled_dot_product_attention(q, k, v), (Q[0], K[0], V[0]), "MmBackward0"),
    ("gqa", lambda l, q, k, v: F(l).scaled_dot_product_attention(q, k, v, enable_gqa=True),
     (R.standard_normal((2, 4, 3, 2)), R.standard_normal((2, 2, 5, 2)), R.standard_normal((2, 2, 5, 3))),
     "UnsafeViewBackward0"),
]


@pytest.mark.parametrize("name, f, args, grad_fn", SDPA, ids=[n[0] for n in SDPA])
def test_scaled_dot_product_attention_as_torch(name, f, args, grad_fn):
    check_op(f, *args, grad_fn=grad_fn)


def test_sdpa_bool_mask_and_dead_rows_as_torch():
    check_op(lambda l, q, k, v: F(l).scaled_dot_product_attention(q, k, v, attn_mask=l.tensor(MASK)), Q, K, V,
             grad_fn="UnsafeViewBackward0", vmap=False)


@pytest.mark.parametrize("kw", [{}, {"is_causal": True}, {"attn_mask": MASK}, {"scale": 0.7}])
def test_sdpa_4d_is_torch_fused_op(kw):
    """torch runs 4-d inputs without dropout as one op (no forward AD and no second order in torch)"""
    def f(l, q, k, v):
        extra = {n: (l.tensor(a) if isinstance(a, np.ndarray) else a) for n, a in kw.items()}
        return F(l).scaled_dot_product_attention(q, k, v, **extra)
    check_op(f, Q4, K4, V4, grad_fn=FLASH, second_order=False, jvp=False)
    # its jvp equals torch's forward mode through the unfused (3-d) computation
    m = [mt.tensor(a) for a in (Q4, K4, V4)]
    t = [torch.tensor(a.reshape(4, *a.shape[2:])) for a in (Q4, K4, V4)]
    tan = [R.standard_normal(a.shape) for a in (Q4, K4, V4)]
    _, jm = mt.func.jvp(lambda *a: f(mt, *a), tuple(m), tuple(mt.tensor(a) for a in tan))
    _, jt = torch.func.jvp(lambda *a: f(torch, *a), tuple(t), tuple(torch.tensor(a.reshape(4, *a.shape[2:]))
                                                                       for a in tan))
    close(jm, jt.reshape(jm.shape), "jvp")
    # and gradients of gradients through it agree with the composite computation
    x = [mt.tensor(a, requires_grad=True) for a in (Q4, K4, V4)]
    g = mt.autograd.grad((f(mt, *x) ** 2).sum(), x, create_graph=True)
    gg = mt.autograd.grad(sum((gi ** 2).sum() for gi in g), x)
    xt = [torch.tensor(a.reshape(4, *a.shape[2:]), requires_grad=True) for a in (Q4, K4, V4)]
    gt = torch.autograd.grad((f(torch, *xt) ** 2).sum(), xt, create_graph=True)
    ggt = torch.autograd.grad(sum((gi ** 2).sum() for gi in gt), xt)
    for a, b in zip(gg, ggt):
        close(a, b.reshape(a.shape), "second order")


def test_sdpa_errors_as_torch():
    q = Q
    for args, kw in [((q, K[:, :, :3], V), {}), ((q, K, V.astype(np.float32)), {}),
                     ((q, K, V), {"attn_mask": MASK, "is_causal": True})]:
        errs = []
        for lib in (torch, mt):
            with pytest.raises(Exception) as e:
                F(lib).scaled_dot_product_attention(*(lib.tensor(a) for a in args),
                                                    **{n: (lib.tensor(v) if isinstance(v, np.ndarray) else v)
                                                       for n, v in kw.items()})
            errs.append(e.value)
        assert type(errs[0]) is type(errs[1]), errs
        assert "attention" in str(errs[1]) or "dtype" in str(errs[1])


def test_sdpa_dropout_keeps_the_expectation():
    mt.manual_seed(0)
    q, k, v = mt.tensor(Q), mt.tensor(K), mt.tensor(V)
    mean = sum(F(mt).scaled_dot_product_attention(q, k, v, dropout_p=0.5) for _ in range(400)) / 400
    close(mean, F(mt).scaled_dot_product_attention(q, k, v), "mean over dropout masks", tol=0.15)


# ---- modules with torch's weights ------------------------------------------------------------------
def load_from(m, t):
    """microtorch module m gets torch module t's parameters and buffers (the keys must agree)"""
    assert list(m.state_dict()) == list(t.state_dict())
    m.load_state_dict({k: mt.tensor(v.detach().numpy().copy()) for k, v in t.state_dict().items()})


def same_outputs(t, m, inputs, kwargs=lambda lib: {}, grad=True, out=lambda o: o, tol=1e-9):
    """the two modules on the same inputs: outputs, and gradients of a weighted sum wrt inputs and parameters"""
    res = []
    for lib, mod in ((torch, t), (mt, m)):
        xs = [lib.tensor(a, requires_grad=grad) for a in inputs]
        with (torch.no_grad() if lib is torch else mt.no_grad()) if not grad else warnings.catch_warnings():
            o = out(mod(*xs, **kwargs(lib)))
        seed = lib.tensor(np.cos(np.arange(o.numel())).reshape(tuple(o.shape)))
        g = lib.autograd.grad((o * seed).sum(), xs + list(mod.parameters()), allow_unused=True) if grad else []
        res.append((o, g))
    close(res[1][0], res[0][0], "output", tol)
    for i, (a, b) in enumerate(zip(res[1][1], res[0][1])):
        assert (a is None) == (b is None), f"grad {i}: {a} vs {b}"
        if a is not None:
            close(a, b, f"grad {i}", tol)


def build(ctor):
    """ctor(lib) for both libraries, under the same seed; their warnings must be the same"""
    made, said = [], []
    for lib in (torch, mt):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            made.append(ctor(lib))
        said.append([str(x.message) for x in w])
    assert said[0] == said[1]
    t, m = made
    assert repr(m) == repr(t)
    load_from(m, t)
    return t, m


L_, S_, N_, E_ = 3, 4, 2, 4


def _mha_inputs(kw, self_attention):
    bf = kw.get("batch_first", False)
    shape = (lambda n, e=E_: (N_, n, e)) if bf else (lambda n, e=E_: (n, N_, e))
    q = R.standard_normal(shape(L_))
    if self_attention:
        return [q, q, q], L_
    return [q, R.standard_normal(shape(S_, kw.get("kdim", E_))), R.standard_normal(shape(S_, kw.get("vdim", E_)))], S_


MHA = [
    ("cross", {}, False, {}),
    ("self", {}, True, {}),
    ("batch_first", {"batch_first": True}, False, {}),
    ("no weights", {}, False, {"need_weights": False}),
    ("per-head weights", {}, False, {"average_attn_weights": False}),
    ("kdim vdim", {"kdim": 3, "vdim": 5}, False, {}),
    ("no bias", {"bias": False}, False, {}),
    ("bias_kv float mask", {"add_bias_kv": True}, False, {"attn_mask": R.standard_normal((L_, S_))}),
    ("zero_attn padding", {"add_zero_attn": True}, False, {"key_padding_mask": np.array([[0, 0, 0, 1]] * N_, bool)}),
    ("padding sdpa", {}, False, {"key_padding_mask": np.array([[0, 0, 0, 1]] * N_, bool), "need_weights": False}),
    ("causal hint", {}, True, {"attn_mask": np.triu(np.ones((L_, L_), bool), 1), "is_causal": True,
                               "need_weights": False}),
    ("3d mask everything", {"batch_first": True, "add_bias_kv": True, "add_zero_attn": True},
     False, {"attn_mask": R.standard_normal((N_ * 2, L_, S_)),
             "key_padding_mask": np.array([[1, 0, 0, 0]] * N_, bool)}),
]


@pytest.mark.parametrize("name, kw, self_attention, call", MHA, ids=[m[0] for m in MHA])
def test_multihead_attention_as_torch(name, kw, self_attention, call):
    t, m = build(lambda lib: lib.nn.MultiheadAttention(E_, 2, dtype=lib.float64, **kw))
    inputs, _ = _mha_inputs(kw, self_attention)
    kwargs = lambda lib: {n: (lib.tensor(v) if isinstance(v, np.ndarray) else v) for n, v in call.items()}  # noqa
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch: mixing bool and float masks is deprecated)
        if self_attention:  # the same tensor three times, as in self-attention
            _self_attention(t, m, inputs[0], kwargs)
        else:
            same_outputs(t, m, inputs, kwargs, out=lambda o: o[0])
            if call.get("need_weights", True):
                same_outputs(t, m, inputs, kwargs, out=lambda o: o[1])


def _self_attention(t, m, x, kwargs):
    class Self:
        def __init__(self, mod):
            self.mod = mod

        def __call__(self, x, **kw):
            return self.mod(x, x, x, **kw)[0]

        def parameters(self):
            return self.mod.parameters()
    same_outputs(Self(t), Self(m), [x], kwargs)


def test_multihead_attention_errors_as_torch():
    for args in [(5, 2), (4, 0)]:
        errs = []
        for lib in (torch, mt):
            with pytest.raises(Exception) as e:
                lib.nn.MultiheadAttention(*args)
            errs.append(e.value)
        assert type(errs[0]) is type(errs[1])
    t, m = build(lambda lib: lib.nn.MultiheadAttention(E_, 2, dtype=lib.float64))
    for lib, mod in ((torch, t), (mt, m)):
        with pytest.raises(AssertionError):
            mod(lib.zeros(3, 2, 5, dtype=lib.float64), lib.zeros(3, 2, 5, dtype=lib.float64),
                lib.zeros(3, 2, 5, dtype=lib.float64))
        with pytest.raises(RuntimeError, match="is_causal"):
            x = lib.zeros(3, 2, 4, dtype=lib.float64)
            mod(x, x, x, is_causal=True)


def _layer(kind, **kw):
    def ctor(lib):
        cls = getattr(lib.nn, kind)
        return cls(E_, 2, dim_feedforward=6, dropout=0.0, dtype=lib.float64, **kw)
    return ctor


def _stack(kind, layers=2, **kw):
    def ctor(lib):
        layer = _layer(kind + "Layer", **kw)(lib)
        return getattr(lib.nn, kind)(layer, layers, norm=lib.nn.LayerNorm(E_, dtype=lib.float64))
    return ctor


SRC, TGT = R.standard_normal((3, 2, E_)), R.standard_normal((5, 2, E_))
PAD = np.array([[False, False, True], [False, False, False]])


def _causal(lib, n):
    return lib.nn.Transformer.generate_square_subsequent_mask(n, dtype=lib.float64)


def _bf(a):
    return a.transpose(1, 0, 2).copy()


TRANSFORMERS = [
    ("encoder layer", _layer("TransformerEncoderLayer"), [SRC], lambda lib: {}),
    ("encoder layer norm_first gelu", _layer("TransformerEncoderLayer", norm_first=True, activation="gelu"), [SRC],
     lambda lib: {}),
    ("encoder layer causal", _layer("TransformerEncoderLayer"), [SRC], lambda lib: {"src_mask": _causal(lib, 3)}),
    ("encoder layer module activation", lambda lib: lib.nn.TransformerEncoderLayer(
        E_, 2, 6, 0.0, activation=lib.nn.GELU(), dtype=lib.float64), [SRC], lambda lib: {}),
    ("encoder", _stack("TransformerEncoder"), [SRC], lambda lib: {}),
    ("encoder causal", _stack("TransformerEncoder"), [SRC], lambda lib: {"mask": _causal(lib, 3)}),
    ("encoder batch_first padding", _stack("TransformerEncoder", batch_first=True), [_bf(SRC)],
     lambda lib: {"src_key_padding_mask": lib.tensor(PAD)}),
    ("decoder layer", _layer("TransformerDecoderLayer"), [TGT, SRC], lambda lib: {}),
    ("decoder layer norm_first masks", _layer("TransformerDecoderLayer", norm_first=True), [TGT, SRC],
     lambda lib: {"tgt_mask": _causal(lib, 5), "memory_key_padding_mask": lib.tensor(PAD)}),
    ("decoder", _stack("TransformerDecoder"), [TGT, SRC], lambda lib: {"tgt_mask": _causal(lib, 5)}),
    ("transformer", lambda lib: lib.nn.Transformer(E_, 2, 2, 2, 6, 0.0, dtype=lib.float64), [SRC, TGT],
     lambda lib: {"tgt_mask": _causal(lib, 5)}),
    ("transformer batch_first padding", lambda lib: lib.nn.Transformer(E_, 2, 1, 2, 6, 0.0, batch_first=True,
                                                                        dtype=lib.float64),
     [_bf(SRC), _bf(TGT)], lambda lib: {"src_key_padding_mask": lib.tensor(PAD),
                                         "memory_key_padding_mask": lib.tensor(PAD)}),
]


@pytest.mark.parametrize("name, ctor, inputs, kwargs", TRANSFORMERS, ids=[t[0] for t in TRANSFORMERS])
def test_transformers_as_torch(name, ctor, inputs, kwargs):
    t, m = build(ctor)
    t.eval(), m.eval()
    same_outputs(t, m, inputs, kwargs, tol=1e-8)
    t.train(), m.train()  # (dropout 0: training changes nothing but the path taken)
    same_outputs(t, m, inputs, kwargs, tol=1e-8)


def test_encoder_inference_fast_path_zeroes_padding_as_torch():
    """torch's encoder in eval mode under no_grad drops the padded positions (their output is 0)"""
    t, m = build(_stack("TransformerEncoder", batch_first=True))
    t.eval(), m.eval()
    same_outputs(t, m, [_bf(SRC)], lambda lib: {"src_key_padding_mask": lib.tensor(PAD)}, grad=False, tol=1e-8)


def test_transformer_dropout_trains_and_eval_is_deterministic():
    m = mt.nn.Transformer(E_, 2, 1, 1, 6, dropout=0.5, dtype=mt.float64)
    src, tgt = mt.tensor(SRC), mt.tensor(TGT)
    m.eval()
    close(m(src, tgt), m(src, tgt), "eval twice")
    m.train()
    assert not np.allclose(m(src, tgt).detach().numpy(), m(src, tgt).detach().numpy())


def test_transformer_errors_and_mask_as_torch():
    close(mt.nn.Transformer.generate_square_subsequent_mask(4), torch.nn.Transformer.generate_square_subsequent_mask(4),
          "causal mask")
    t, m = build(lambda lib: lib.nn.Transformer(E_, 2, 1, 1, 6, 0.0, dtype=lib.float64))
    for src, tgt in [(SRC, TGT[:, :1]), (SRC, R.standard_normal((5, 2, 3)))]:
        errs = []
        for lib, mod in ((torch, t), (mt, m)):
            with pytest.raises(RuntimeError) as e:
                mod(lib.tensor(src), lib.tensor(tgt))
            errs.append(str(e.value))
        assert errs[0] == errs[1]
    with pytest.raises(RuntimeError, match="relu/gelu"):
        mt.nn.TransformerEncoderLayer(4, 2, activation="tanh")


NORM_MODULES = [
    ("GroupNorm", lambda lib: lib.nn.GroupNorm(2, 4, dtype=lib.float64), (2, 4, 3)),
    ("GroupNorm no affine", lambda lib: lib.nn.GroupNorm(2, 4, affine=False, dtype=lib.float64), (2, 4, 3)),
    ("InstanceNorm1d affine", lambda lib: lib.nn.InstanceNorm1d(4, affine=True, dtype=lib.float64), (2, 4, 3)),
    ("InstanceNorm1d unbatched", lambda lib: lib.nn.InstanceNorm1d(4, dtype=lib.float64), (4, 3)),
    ("InstanceNorm2d running stats", lambda lib: lib.nn.InstanceNorm2d(4, affine=True, track_running_stats=True,
                                                                       dtype=lib.float64), (2, 4, 3, 2)),
    ("InstanceNorm3d", lambda lib: lib.nn.InstanceNorm3d(4, dtype=lib.float64), (2, 4, 3, 2, 2)),
    ("BatchNorm3d", lambda lib: lib.nn.BatchNorm3d(4, dtype=lib.float64), (2, 4, 3, 2, 2)),
    ("RMSNorm", lambda lib: lib.nn.RMSNorm([4, 3], dtype=lib.float64), (2, 4, 3)),
    ("RMSNorm eps", lambda lib: lib.nn.RMSNorm(3, eps=0.1, elementwise_affine=False), (2, 4, 3)),
    ("LocalResponseNorm", lambda lib: lib.nn.LocalResponseNorm(3), (2, 4, 3)),
]


@pytest.mark.parametrize("name, ctor, shape", NORM_MODULES, ids=[n[0] for n in NORM_MODULES])
def test_norm_modules_as_torch(name, ctor, shape):
    """repr, state_dict keys, outputs and gradients in train and eval mode, running statistics"""
    t, m = build(ctor)
    x = R.standard_normal(shape)
    for train in (True, False):
        t.train(train), m.train(train)
        same_outputs(t, m, [x])
    for (k, a), b in zip(t.state_dict().items(), m.state_dict().values()):
        close(b, a, k)


def test_cross_map_lrn2d_values_as_torch_and_true_gradients():
    """values as torch (including its running window, which keeps channel 0 once c passes the window);
    torch's hand-written backward is not the derivative of its forward (try torch.autograd.gradcheck on it),
    so the gradients are checked numerically"""
    x = R.standard_normal((2, 6, 2, 2))
    for size in (1, 2, 3, 4):
        t = torch.nn.CrossMapLRN2d(size, alpha=0.5, k=2)(torch.tensor(x))
        m = mt.nn.CrossMapLRN2d(size, alpha=0.5, k=2)(mt.tensor(x))
        close(m, t, f"size {size}")
    assert repr(mt.nn.CrossMapLRN2d(3)) == repr(torch.nn.CrossMapLRN2d(3))
    xm = mt.tensor(x[:, :4], requires_grad=True)
    mod = mt.nn.CrossMapLRN2d(3, alpha=0.5, k=2)
    assert mod(xm).grad_fn.name() == "CrossMapLRN2dBackward"
    assert mt.autograd.gradcheck(mod, (xm,))
    assert mt.autograd.gradgradcheck(mod, (xm,))
    assert mt.autograd.forward_ad is not None and _jvp_matches_numerical(mod, x[:, :4])
    with pytest.raises(ValueError, match="4D"):
        mod(mt.zeros(2, 3, 4))


def _jvp_matches_numerical(f, x, eps=1e-6):
    t = R.standard_normal(x.shape)
    _, jv = mt.func.jvp(f, (mt.tensor(x),), (mt.tensor(t),))
    numeric = (f(mt.tensor(x + eps * t)) - f(mt.tensor(x - eps * t))) / (2 * eps)
    close(jv, numeric, "jvp", tol=1e-6)
    return True


def test_norm_module_errors_as_torch():
    for ctor, shape in [(lambda lib: lib.nn.GroupNorm(3, 4), None),
                        (lambda lib: lib.nn.InstanceNorm1d(3), (2, 3, 4, 5)),
                        (lambda lib: lib.nn.InstanceNorm1d(3, affine=True), (2, 4, 5)),
                        (lambda lib: lib.nn.BatchNorm3d(3), (2, 3, 4))]:
        errs = []
        for lib in (torch, mt):
            with pytest.raises(Exception) as e:
                mod = ctor(lib)
                mod(lib.zeros(*shape))
            errs.append(e.value)
        assert type(errs[0]) is type(errs[1]) and str(errs[0]) == str(errs[1]), errs
    for lib in (torch, mt):
        with pytest.warns(UserWarning, match="does not match num_features"):
            lib.nn.InstanceNorm1d(3)(lib.zeros(2, 4, 5))


# ---- margin losses and CTC ----------------------------------------------------------------------------
XL = R.standard_normal((3, 4))
TM = np.array([0, 3, 1])
TML = np.array([[3, 0, -1, 1], [1, 2, 3, 0], [-1, 0, 0, 0]])
TML_REPEATS = np.array([[1, 1, -1, 1], [0, 0, 2, -1], [3, 3, 3, 3]])
LP = np.log(R.dirichlet(np.ones(5), (6, 3)))  # (T, N, C) log-probabilities
TG, IL, TL = np.array([[1, 2, 2], [3, 1, 0], [4, 0, 0]]), [6, 5, 4], [3, 2, 1]
TG_IMPOSSIBLE, IL_SHORT = np.array([[1, 1, 1], [3, 1, 0], [4, 0, 0]]), [4, 5, 4]  # 1 1 1 needs 5 frames
LOSSES = [
    ("multi_margin", lambda l, x: F(l).multi_margin_loss(x, l.tensor(TM)), XL, "MultiMarginLossBackward0"),
    ("multi_margin p=2 weight", lambda l, x: F(l).multi_margin_loss(x, l.tensor(TM), p=2, weight=l.tensor(W4)), XL,
     "MultiMarginLossBackward0"),
    ("multi_margin margin sum", lambda l, x: F(l).multi_margin_loss(x, l.tensor(TM), margin=0.3, reduction="sum"),
     XL, "MultiMarginLossBackward0"),
    ("multi_margin none", lambda l, x: F(l).multi_margin_loss(x, l.tensor(TM), reduction="none"), XL,
     "MultiMarginLossBackward0"),
    ("multi_margin unbatched", lambda l, x: F(l).multi_margin_loss(x, l.tensor(2), reduction="none"), XL[0],
     "MultiMarginLossBackward0"),
    ("multilabel_margin", lambda l, x: F(l).multilabel_margin_loss(x, l.tensor(TML)), XL,
     "MultilabelMarginLossBackward0"),
    ("multilabel_margin none", lambda l, x: F(l).multilabel_margin_loss(x, l.tensor(TML), reduction="none"), XL,
     "MultilabelMarginLossBackward0"),
    ("multilabel_margin repeats sum", lambda l, x: F(l).multilabel_margin_loss(x, l.tensor(TML_REPEATS),
                                                                                reduction="sum"), XL,
     "MultilabelMarginLossBackward0"),
    ("multilabel_margin unbatched", lambda l, x: F(l).multilabel_margin_loss(x, l.tensor(TML[0])), XL[0],
     "MultilabelMarginLossBackward0"),
    ("ctc mean", lambda l, lp: F(l).ctc_loss(lp, l.tensor(TG), l.tensor(IL), l.tensor(TL)), LP, "MeanBackward0"),
    ("ctc sum", lambda l, lp: F(l).ctc_loss(lp, l.tensor(TG), l.tensor(IL), l.tensor(TL), reduction="sum"), LP,
     "SumBackward0"),
    ("ctc none blank 4", lambda l, lp: F(l).ctc_loss(lp, l.tensor(TG % 4), l.tensor(IL), l.tensor(TL), blank=4,
                                                     reduction="none"), LP, "CtcLossBackward0"),
    ("ctc concatenated targets, list lengths", lambda l, lp: F(l).ctc_loss(lp, l.tensor([1, 2, 2, 3, 1, 4]), IL, TL,
                                                                           reduction="none"), LP, "CtcLossBackward0"),
    ("ctc zero_infinity none", lambda l, lp: F(l).ctc_loss(lp, l.tensor(TG_IMPOSSIBLE), l.tensor(IL_SHORT),
                                                           l.tensor(TL), reduction="none", zero_infinity=True), LP,
     "WhereBackward0"),
    ("ctc zero_infinity mean", lambda l, lp: F(l).ctc_loss(lp, l.tensor(TG_IMPOSSIBLE), l.tensor(IL_SHORT),
                                                           l.tensor(TL), zero_infinity=True), LP, "MeanBackward0"),
    ("ctc unbatched", lambda l, lp: F(l).ctc_loss(lp, l.tensor([1, 2]), l.tensor(6), l.tensor(2)), LP[:, 0],
     "MeanBackward0"),
    ("ctc unbatched none", lambda l, lp: F(l).ctc_loss(lp, l.tensor([1, 2]), l.tensor(6), l.tensor(2),
                                                       reduction="none"), LP[:, 0], "SqueezeBackward1"),
    ("ctc raw scores", lambda l, lp: F(l).ctc_loss(lp, l.tensor(TG), l.tensor(IL), l.tensor(TL)),
     R.standard_normal((6, 3, 5)), "MeanBackward0"),
]


@pytest.mark.parametrize("name, f, x, grad_fn", LOSSES, ids=[n[0] for n in LOSSES])
def test_margin_and_ctc_losses_as_torch(name, f, x, grad_fn):
    """values and gradients as torch (torch has neither forward mode nor a second derivative for these)"""
    check_op(f, x, grad_fn=grad_fn, second_order=False, jvp=False, vmap=False)
    # forward mode (which torch lacks) is the directional derivative
    t = R.standard_normal(x.shape)
    _, jv = mt.func.jvp(lambda a: f(mt, a), (mt.tensor(x),), (mt.tensor(t),))
    eps = 1e-6
    numeric = (f(mt, mt.tensor(x + eps * t)) - f(mt, mt.tensor(x - eps * t))) / (2 * eps)
    close(jv, numeric, "jvp", tol=1e-5)
    # the second derivative raises as in torch
    xm = mt.tensor(x, requires_grad=True)
    (g,) = mt.autograd.grad(f(mt, xm).sum(), xm, create_graph=True)
    # (unbatched: the unsqueeze's backward)
    assert g.grad_fn.name() in ("torch::autograd::NotImplemented", "SqueezeBackward1")
    with pytest.raises(RuntimeError, match="derivative for aten::.*_backward is not implemented"):
        mt.autograd.grad(g.sum(), xm)


def test_loss_modules_as_torch():
    for ctor, args in [(lambda lib: lib.nn.MultiMarginLoss(p=2, margin=0.5, weight=lib.tensor(W4)), (XL, TM)),
                       (lambda lib: lib.nn.MultiLabelMarginLoss(reduction="sum"), (XL, TML)),
                       (lambda lib: lib.nn.CTCLoss(blank=0, zero_infinity=True), (LP, TG, IL, TL)),
                       (lambda lib: lib.nn.NLLLoss2d(), (np.log(R.dirichlet(np.ones(3), (2, 2, 2))).transpose(0, 3, 1,
                                                                                                          2).copy(),
                                                          R.integers(0, 3, (2, 2, 2))))]:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            t, m = build(ctor)
        assert all(issubclass(x.category, FutureWarning) for x in w)
        outs = [mod(*(lib.tensor(a) for a in args)) for lib, mod in ((torch, t), (mt, m))]
        close(outs[1], outs[0], repr(m))
    for lib in (torch, mt):
        with pytest.raises(ValueError, match="only p == 1 and p == 2"):
            lib.nn.MultiMarginLoss(p=3)


def test_loss_errors_as_torch():
    cases = [lambda l: F(l).multi_margin_loss(l.tensor(XL), l.tensor([0, 1])),
             lambda l: F(l).multi_margin_loss(l.tensor(XL), l.tensor([0, 1, 9])),
             lambda l: F(l).multi_margin_loss(l.tensor(XL), l.tensor(TM), p=3),
             lambda l: F(l).multilabel_margin_loss(l.tensor(XL), l.tensor(TM)),
             lambda l: F(l).ctc_loss(l.tensor(LP), l.tensor(TG), l.tensor([7, 5, 4]), l.tensor(TL)),
             lambda l: F(l).ctc_loss(l.tensor(LP), l.tensor(TG), l.tensor(IL), l.tensor(TL), blank=7)]
    for case in cases:
        errs = []
        for lib in (torch, mt):
            with pytest.raises(Exception) as e:
                case(lib)
            errs.append(e.value)
        assert type(errs[1]) is type(errs[0]), errs


# ---- embedding_bag, pdist, bilinear, gumbel_softmax ------------------------------------------------------
WE = R.standard_normal((10, 3))
IDX, OFF = np.array([1, 2, 4, 5, 4, 3, 2, 9]), np.array([0, 2, 2, 5])  # bag 1 is empty
BAGS = [
    ("sum", dict(mode="sum")), ("mean", dict(mode="mean")), ("max", dict(mode="max")),
    ("mean padding_idx", dict(mode="mean", padding_idx=4)), ("sum include_last_offset", dict(mode="sum",
                                                                                            include_last_offset=True)),
]


def _numeric_jvp(f, x):
    t, eps = R.standard_normal(x.shape), 1e-6
    _, jv = mt.func.jvp(f, (mt.tensor(x),), (mt.tensor(t),))
    close(jv, (f(mt.tensor(x + eps * t)) - f(mt.tensor(x - eps * t))) / (2 * eps), "jvp", tol=1e-6)


@pytest.mark.parametrize("name, kw", BAGS, ids=[b[0] for b in BAGS])
def test_embedding_bag_as_torch(name, kw):
    f = lambda l, w: F(l).embedding_bag(l.tensor(IDX), w, l.tensor(OFF), **kw)  # noqa: E731
    check_op(f, WE, grad_fn="EmbeddingBagBackward0", second_order=False, jvp=False, vmap=False)
    _numeric_jvp(lambda w: f(mt, w), WE)  # (torch has no forward mode for it)


def test_embedding_bag_2d_and_per_sample_weights_as_torch():
    for mode in ("mean", "max"):
        check_op(lambda l, w: F(l).embedding_bag(l.tensor(IDX.reshape(2, 4)), w, mode=mode), WE,
                 grad_fn="EmbeddingBagBackward0", second_order=False, jvp=False, vmap=False)
    f = lambda l, w, p: F(l).embedding_bag(l.tensor(IDX), w, l.tensor(OFF), mode="sum", per_sample_weights=p)  # noqa
    check_op(f, WE, R.standard_normal(8), grad_fn="EmbeddingBagBackward0", second_order=False, jvp=False,
             vmap=False)


def test_embedding_bag_module_and_errors_as_torch():
    for ctor in [lambda lib: lib.nn.EmbeddingBag(10, 3, dtype=lib.float64),
                 lambda lib: lib.nn.EmbeddingBag(10, 3, mode="max", padding_idx=2, dtype=lib.float64),
                 lambda lib: lib.nn.EmbeddingBag.from_pretrained(lib.tensor(WE), mode="sum")]:
        t, m = build(ctor)
        outs = [mod(lib.tensor(IDX), lib.tensor(OFF)) for lib, mod in ((torch, t), (mt, m))]
        close(outs[1], outs[0], repr(m))
    t, m = build(lambda lib: lib.nn.EmbeddingBag(10, 3, max_norm=1.0, dtype=lib.float64))
    for lib, mod in ((torch, t), (mt, m)):
        mod(lib.tensor(IDX), lib.tensor(OFF))
    close(m.weight, t.weight, "max_norm renormalises the rows used, in place")
    cases = [lambda l: F(l).embedding_bag(l.tensor(IDX), l.tensor(WE), l.tensor(OFF), mode="avg"),
             lambda l: F(l).embedding_bag(l.tensor(IDX.reshape(2, 4)), l.tensor(WE), l.tensor(OFF)),
             lambda l: F(l).embedding_bag(l.tensor(IDX), l.tensor(WE)),
             lambda l: F(l).embedding_bag(l.tensor(IDX), l.tensor(WE), l.tensor(OFF), mode="mean",
                                          per_sample_weights=l.tensor(np.ones(8)))]
    for case in cases:
        errs = []
        for lib in (torch, mt):
            with pytest.raises(Exception) as e:
                case(lib)
            errs.append(e.value)
        assert type(errs[1]) is type(errs[0]), errs


@pytest.mark.parametrize("p", [2, 1, 3, 0.5, float("inf"), 0])
def test_pdist_as_torch(p):
    x = R.standard_normal((4, 3))
    check_op(lambda l, x: F(l).pdist(x, p), x, grad_fn="PdistBackward0", second_order=False, jvp=False, vmap=False)
    _numeric_jvp(lambda x: F(mt).pdist(x, p), x)  # (torch: no forward mode, and no second order:
    if p not in (0, 1, float("inf")):  # here the backward is Tensor ops, so it has one)
        xm = mt.tensor(x, requires_grad=True)
        assert mt.autograd.gradgradcheck(lambda a: F(mt).pdist(a, p), (xm,))


def test_pdist_errors_as_torch():
    for case in [lambda l: F(l).pdist(l.zeros(2, 3, 4)), lambda l: F(l).pdist(l.zeros(2, 3), -1)]:
        errs = []
        for lib in (torch, mt):
            with pytest.raises(RuntimeError) as e:
                case(lib)
            errs.append(str(e.value))
        assert errs[0] == errs[1]
    assert tuple(F(mt).pdist(mt.zeros(1, 3)).shape) == (0,)


BILINEAR = [("2d", (2, 3), (2, 4), False), ("2d bias", (2, 3), (2, 4), True), ("3d bias", (2, 2, 3), (2, 2, 4), True),
            ("1d bias", (3,), (4,), True)]


@pytest.mark.parametrize("name, s1, s2, has_bias", BILINEAR, ids=[b[0] for b in BILINEAR])
def test_bilinear_as_torch(name, s1, s2, has_bias):
    w, b = R.standard_normal((5, 3, 4)), R.standard_normal(5)
    if has_bias:
        check_op(lambda l, x1, x2, w, b: F(l).bilinear(x1, x2, w, b), R.standard_normal(s1), R.standard_normal(s2), w,
                 b, grad_fn="AddBackward0", vmap=len(s1) < 3)
    else:
        check_op(lambda l, x1, x2, w: F(l).bilinear(x1, x2, w), R.standard_normal(s1), R.standard_normal(s2), w,
                 grad_fn="ViewBackward0")


def test_bilinear_module_and_errors_as_torch():
    t, m = build(lambda lib: lib.nn.Bilinear(3, 4, 5, dtype=lib.float64))
    same_outputs(t, m, [R.standard_normal((2, 3)), R.standard_normal((2, 4))])
    build(lambda lib: lib.nn.Bilinear(3, 4, 5, bias=False))
    for args in [((2, 3), (3, 4), (5, 3, 4)), ((2, 2), (2, 4), (5, 3, 4)), ((2, 3), (2, 3), (5, 3, 4)),
                 ((2, 3), (2, 4), (5, 3, 4), (4,)), ((2, 2, 3), (2, 3, 4), (5, 3, 4)), ((3,), (2, 4), (5, 3, 4))]:
        errs = []
        for lib in (torch, mt):
            with pytest.raises(RuntimeError) as e:
                F(lib).bilinear(*(lib.zeros(*s) for s in args))
            errs.append(str(e.value))
        assert errs[0] == errs[1]


def test_gumbel_softmax_samples_and_straight_through():
    logits = mt.tensor(np.log([[0.7, 0.2, 0.1]]).repeat(4000, 0), requires_grad=True)
    mt.manual_seed(0)
    soft = F(mt).gumbel_softmax(logits, tau=0.5)
    assert soft.grad_fn.name() == "SoftmaxBackward0"
    close(soft.sum(-1), np.ones(4000), "rows sum to 1")
    hard = F(mt).gumbel_softmax(logits, hard=True)
    assert hard.grad_fn.name() == "AddBackward0"
    assert set(np.unique(hard.detach().numpy())) == {0.0, 1.0}
    close(hard.detach().numpy().mean(0), [0.7, 0.2, 0.1], "one-hot samples follow softmax(logits)", tol=0.03)
    (g,) = mt.autograd.grad((hard * mt.tensor([1.0, 2.0, 3.0])).sum(), logits)
    assert np.abs(g.numpy()).sum() > 0  # the soft sample's gradient passes straight through
    with pytest.warns(UserWarning, match="eps"):
        F(mt).gumbel_softmax(logits, eps=1e-3)


# ---- spectral_norm, Buffer, Container ----------------------------------------------------------------------
SPECTRAL = [("Linear", lambda lib: lib.nn.Linear(3, 4, dtype=lib.float64), (2, 3), {}),
            ("Conv2d 3 iterations", lambda lib: lib.nn.Conv2d(2, 3, 2, dtype=lib.float64), (1, 2, 4, 4),
             dict(n_power_iterations=3)),
            ("Linear dim=1", lambda lib: lib.nn.Linear(3, 4, dtype=lib.float64), (2, 3), dict(dim=1))]


@pytest.mark.parametrize("name, ctor, shape, kw", SPECTRAL, ids=[s[0] for s in SPECTRAL])
def test_spectral_norm_as_torch(name, ctor, shape, kw):
    """same u, v and weight_orig: outputs, gradients and the power-iteration buffers agree step by step (the
    buffers move in training mode only), and remove_spectral_norm leaves the normalised weight"""
    t = torch.nn.utils.spectral_norm(ctor(torch), **kw)
    m = mt.nn.utils.spectral_norm(ctor(mt), **kw)
    assert repr(m) == repr(t)
    load_from(m, t)
    x = R.standard_normal(shape)
    for step in range(3):
        if step == 2:
            t.eval(), m.eval()
        same_outputs(t, m, [x])
        for (k, a), b in zip(t.state_dict().items(), m.state_dict().values()):
            close(b, a, f"step {step}: {k}")
    torch.nn.utils.remove_spectral_norm(t), mt.nn.utils.remove_spectral_norm(m)
    assert list(m.state_dict()) == list(t.state_dict())
    close(m.weight, t.weight, "after remove_spectral_norm")


def test_spectral_norm_normalises_and_errors_as_torch():
    mt.manual_seed(0)  # (the power iteration's start is random: some starts need more than 50 steps to 1e-6)
    lin = mt.nn.utils.spectral_norm(mt.nn.Linear(5, 6, dtype=mt.float64), n_power_iterations=50)
    lin(mt.zeros(1, 5, dtype=mt.float64))
    close(np.linalg.svd(lin.weight.detach().numpy(), compute_uv=False)[0], 1.0, "largest singular value", tol=1e-6)
    for lib in (torch, mt):
        m = lib.nn.utils.spectral_norm(lib.nn.Linear(2, 2))
        with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
            lib.nn.utils.spectral_norm(m)
        with pytest.raises(ValueError, match="spectral_norm of 'bias' not found"):
            lib.nn.utils.remove_spectral_norm(m, "bias")
        with pytest.raises(ValueError, match="Expected n_power_iterations to be positive"):
            lib.nn.utils.spectral_norm(lib.nn.Linear(2, 2), n_power_iterations=0)


def test_buffer_as_torch():
    for lib in (torch, mt):
        b = lib.nn.Buffer(lib.ones(2))
        assert isinstance(b, lib.nn.Buffer) and type(b) is lib.Tensor and b.persistent
        assert not isinstance(lib.ones(2), lib.nn.Buffer)
        m = lib.nn.Module()
        m.x = lib.nn.Buffer(lib.ones(2), persistent=False)
        m.y = lib.nn.Buffer(lib.zeros(1))
        assert [n for n, _ in m.named_buffers()] == ["x", "y"] and list(m.state_dict()) == ["y"]
        assert lib.nn.Buffer(lib.ones(1, requires_grad=True)).requires_grad


def test_container_as_torch():
    reprs = []
    for lib in (torch, mt):
        with pytest.warns(FutureWarning, match="nn.Container` is deprecated"):
            c = lib.nn.Container(a=lib.nn.Linear(1, 2), b=lib.nn.ReLU())
        reprs.append(repr(c))
        assert [n for n, _ in c.named_children()] == ["a", "b"]
    assert reprs[0] == reprs[1]


# ---- AdaptiveLogSoftmaxWithLoss ---------------------------------------------------------------------------
def test_adaptive_log_softmax_as_torch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch: "Initializing zero-element tensors is a no-op")
        t, m = build(lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0, head_bias=True,
                                                                   dtype=lib.float64))
    x, target = R.standard_normal((6, 8)), np.array([0, 4, 9, 2, 7, 5])
    same_outputs(t, m, [x], lambda lib: {"target_": lib.tensor(target)}, out=lambda o: o.output)
    same_outputs(t, m, [x], lambda lib: {"target_": lib.tensor(target)}, out=lambda o: o.loss)
    same_outputs(t, m, [x[0]], lambda lib: {"target_": lib.tensor(target[0] + 8)}, out=lambda o: o.output)
    close(m.log_prob(mt.tensor(x)), t.log_prob(torch.tensor(x)), "log_prob")
    close(m.predict(mt.tensor(x)), t.predict(torch.tensor(x)), "predict")
    close(m.log_prob(mt.tensor(x)).exp().sum(1), np.ones(6), "a distribution over the classes")
    for lib, mod in ((torch, t), (mt, m)):
        with pytest.raises(RuntimeError, match="Target values should be in"):
            mod(lib.tensor(x), lib.tensor(target + 5))
        with pytest.raises(RuntimeError, match="same size in the batch"):
            mod(lib.tensor(x), lib.tensor(target[:2]))
        with pytest.raises(ValueError, match="cutoffs should be"):
            lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [6, 3])


LCE = [("plain", (5, 4), (3, 4), lambda: R.integers(0, 3, 5), {}),
       ("bias weight smoothing", (5, 4), (3, 4), lambda: R.integers(0, 3, 5),
        dict(linear_bias=True, weight=True, label_smoothing=0.1, reduction="sum")),
       ("ignore_index none", (5, 4), (3, 4), lambda: np.array([0, 2, 1, 2, 0]), dict(ignore_index=2, reduction="none")),
       ("K-dimensional", (5, 4), (3, 2, 4), lambda: R.integers(0, 3, (5, 2)), dict(linear_bias=True)),
       ("unbatched", (4,), (3, 4), lambda: np.array(1), {}),
       ("probabilities", (5, 4), (3, 4), lambda: R.dirichlet(np.ones(3), 5), {})]


@pytest.mark.parametrize("name, xs, ws, target, kw", LCE, ids=[c[0] for c in LCE])
def test_linear_cross_entropy_as_torch(name, xs, ws, target, kw):
    tgt, bias, cw = target(), R.standard_normal(ws[:-1]), R.uniform(0.5, 2, 3)

    def f(l, x, w):
        extra = dict(kw, linear_bias=l.tensor(bias) if kw.get("linear_bias") else None,
                     weight=l.tensor(cw) if kw.get("weight") else None)
        return F(l).linear_cross_entropy(x, w, l.tensor(tgt), **extra)
    check_op(f, R.standard_normal(xs), R.standard_normal(ws), vmap=False)


def test_linear_cross_entropy_module_and_options_as_torch():
    t, m = build(lambda lib: lib.nn.LinearCrossEntropyLoss(4, 3, out_features=(2,), bias=True, dtype=lib.float64,
                                                           label_smoothing=0.2))
    target = R.integers(0, 3, (5, 2))
    same_outputs(t, m, [R.standard_normal((5, 4))], lambda lib: {"target": lib.tensor(target)})
    assert repr(mt.nn.LinearCrossEntropyOptions()) == repr(torch.nn.LinearCrossEntropyOptions())
    t, m = build(lambda lib: lib.nn.LinearCrossEntropyLoss(
        4, 3, dtype=lib.float64, options=lib.nn.LinearCrossEntropyOptions(batch_chunk_size=2)))
    target = R.integers(0, 3, 5)
    same_outputs(t, m, [R.standard_normal((5, 4))], lambda lib: {"target": lib.tensor(target)})


def test_assert_int_or_pair_as_torch():
    for lib in (torch, mt):
        F(lib).assert_int_or_pair(3, "k", "{} bad")
        F(lib).assert_int_or_pair((1, 2), "k", "{} bad")
        with pytest.raises(AssertionError, match="^k bad$"):
            F(lib).assert_int_or_pair((1, 2, 3), "k", "{} bad")


def test_group_norm_vmap_over_weight_as_torch():
    """the batching rule folds a vmapped input into the batch; a vmapped weight runs example by example"""
    ws = R.standard_normal((3, 4))
    out = []
    for lib in (torch, mt):
        x = lib.tensor(X)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out.append(lib.func.vmap(lambda w: F(lib).group_norm(x, 2, w))(lib.tensor(ws)))
    close(out[1], out[0], "vmap over weight")


def _tiny_language_model(lib, vocab=20, width=8):
    """a causal encoder over token and position embeddings, as language-model lessons build one"""
    nn = lib.nn

    class TinyLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.tokens, self.positions = nn.Embedding(vocab, width), nn.Embedding(16, width)
            layer = nn.TransformerEncoderLayer(width, 2, 16, dropout=0.0)
            self.body = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            self.head = nn.Linear(width, vocab)

        def forward(self, ids):
            steps = ids.shape[0]
            h = self.tokens(ids) * math.sqrt(width) + self.positions(lib.arange(steps)).unsqueeze(1)
            mask = nn.Transformer.generate_square_subsequent_mask(steps)
            return self.head(self.body(h, mask=mask))
    return TinyLM()


def test_training_a_tiny_transformer_language_model_as_torch():
    """three SGD steps with gradient clipping from the same weights: the same float32 losses"""
    t = _tiny_language_model(torch)
    m = _tiny_language_model(mt)
    load_from(m, t)
    ids, nxt = R.integers(0, 20, (7, 3)), R.integers(0, 20, (7, 3))
    losses = []
    for lib, model in ((torch, t), (mt, m)):
        opt, seen = lib.optim.SGD(model.parameters(), lr=0.5), []
        for _ in range(3):
            loss = lib.nn.functional.cross_entropy(model(lib.tensor(ids)).reshape(-1, 20), lib.tensor(nxt).reshape(-1))
            opt.zero_grad()
            loss.backward()
            lib.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            opt.step()
            seen.append(loss.item())
        losses.append(seen)
    assert losses[1][2] < losses[1][0]
    close(np.array(losses[1]), np.array(losses[0]), "losses", tol=1e-5)


@pytest.mark.parametrize("pad", [0, 1, 2])
def test_conv_tbc_as_torch(pad):
    """torch has no forward mode for it: the jvp is checked numerically"""
    x, w, b = R.standard_normal((5, 2, 3)), R.standard_normal((2, 3, 4)), R.standard_normal(4)
    check_op(lambda l, x, w, b: F(l).conv_tbc(x, w, b, pad), x, w, b, grad_fn="ConvTbcBackward0", jvp=False,
             vmap=False, second_order=False)
    _numeric_jvp(lambda a: F(mt).conv_tbc(a, mt.tensor(w), mt.tensor(b), pad), x)
    _numeric_jvp(lambda a: F(mt).conv_tbc(mt.tensor(x), a, mt.tensor(b), pad), w)
    xm = [mt.tensor(a, requires_grad=True) for a in (x, w, b)]
    assert mt.autograd.gradgradcheck(lambda *a: F(mt).conv_tbc(*a, pad), xm)


def test_conv_tbc_errors_as_torch():
    x, w, b = np.zeros((5, 2, 3)), np.zeros((2, 3, 4)), np.zeros(4)
    for args in [(np.zeros((5, 3)), w, b), (x, np.zeros((2, 4, 4)), b), (x, w, np.zeros(3))]:
        errs = []
        for lib in (torch, mt):
            with pytest.raises(RuntimeError) as e:
                F(lib).conv_tbc(*(lib.tensor(a) for a in args))
            errs.append(str(e.value))
        assert errs[0] in errs[1]


def test_multihead_attention_merge_masks_as_torch():
    t, m = build(lambda lib: lib.nn.MultiheadAttention(E_, 2, batch_first=True, dtype=lib.float64))
    q, am, kpm = R.standard_normal((2, 3, E_)), R.standard_normal((3, 3)), R.standard_normal((2, 3))
    for a, k in [(None, None), (None, kpm), (am, None), (am, kpm), (R.standard_normal((4, 3, 3)), kpm)]:
        outs = [mod.merge_masks(None if a is None else lib.tensor(a), None if k is None else lib.tensor(k),
                                lib.tensor(q)) for lib, mod in ((torch, t), (mt, m))]
        assert outs[0][1] == outs[1][1]
        if outs[0][0] is not None:
            close(outs[1][0], outs[0][0], "merged mask")


@pytest.mark.parametrize("need_weights", [True, False])
def test_multihead_attention_gradgradcheck(need_weights):
    """second derivatives through both paths (need_weights=False runs the fused 4-d op, whose backward is
    Tensor ops here)"""
    mha = mt.nn.MultiheadAttention(4, 2, dtype=mt.float64)
    q = mt.tensor(R.standard_normal((2, 1, 4)), requires_grad=True)
    kv = mt.tensor(R.standard_normal((3, 1, 4)), requires_grad=True)
    assert mt.autograd.gradgradcheck(lambda a, b: mha(a, b, b, need_weights=need_weights)[0], (q, kv))


def test_transformer_encoder_layer_gradgradcheck():
    layer = mt.nn.TransformerEncoderLayer(4, 2, 3, dropout=0.0, dtype=mt.float64)
    x = mt.tensor(R.standard_normal((2, 1, 4)), requires_grad=True)
    assert mt.autograd.gradgradcheck(layer, (x,))


def test_unbatched_attention_and_transformers_as_torch():
    t, m = build(lambda lib: lib.nn.Transformer(E_, 2, 1, 1, 6, 0.0, dtype=lib.float64))
    same_outputs(t, m, [SRC[:, 0], TGT[:, 0]])
    t, m = build(_layer("TransformerEncoderLayer", batch_first=True))
    same_outputs(t, m, [SRC[:, 0]], lambda lib: {"src_key_padding_mask": lib.tensor(PAD[0])})
    t, m = build(lambda lib: lib.nn.MultiheadAttention(E_, 2, batch_first=True, dtype=lib.float64))
    same_outputs(t, m, [SRC[:, 0], TGT[:, 0], TGT[:, 0]], out=lambda o: o[1])
