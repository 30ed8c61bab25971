"""The twenty-first round's findings (fuzz ranges from 4.95M and teaching code beside torch), each checked
against torch 2.13."""
import dataclasses
import pickle
import warnings

import numpy as np
import pytest
import torch as real_torch

import microtorch

LIBS = (real_torch, microtorch)


def _signed_zeros(rng, shape, dtype):
    x = np.where(rng.random(shape) < 0.5, -0.0, 0.0).astype(dtype)
    if x.size and rng.random() < 0.3:
        x.reshape(-1)[rng.integers(x.size)] = -1.0
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("seed", range(40))
def test_aminmax_keeps_torchs_zero(seed, dtype):
    """fuzz 4,989,557: aminmax of -0 and +0 along a dim is the first zero (numpy's is the last); over everything,
    the zero of max() and min(); 1 / x shows the sign."""
    rng = np.random.default_rng(seed)
    shape = tuple(int(n) for n in rng.integers(1, 24, size=int(rng.integers(1, 4))))
    x = _signed_zeros(rng, shape, dtype)
    dim = None if seed % 4 == 0 else int(rng.integers(-len(shape), len(shape)))
    keepdim = bool(seed % 3 == 0)
    kwargs = {} if dim is None else {"dim": dim}
    got = [lib.aminmax(lib.from_numpy(x.copy()), keepdim=keepdim, **kwargs) for lib in LIBS]
    for want, ours in zip(got[0], got[1]):
        assert np.array_equal(np.signbit(want.numpy()), np.signbit(ours.numpy())), (shape, dim)
        assert want.shape == ours.shape


def _nan_through_abs(lib, op, dim, correction, create_graph):
    """fuzz 5,049,949: |var| of a slice holding nan. abs's gradient is sgn(nan) = 0, which torch's sgn backward
    makes an exact zero: the second order through var's (x - mean), nan, stays 0."""
    a = lib.tensor([[0.0, 0.5], [0.25, 1.0]], dtype=lib.float64, requires_grad=True)
    x = lib.where(lib.tensor([[True, False], [True, True]]), a, lib.tensor(float("nan"), dtype=lib.float64))
    kwargs = {} if dim is None else {"dim": dim}
    y = getattr(lib, op)(x, correction=correction, **kwargs).abs()
    g, = lib.autograd.grad(y.sum() * 1.5, a, create_graph=True)
    g2, = lib.autograd.grad(g.sum(), a, create_graph=create_graph, allow_unused=True)
    return g.detach().numpy(), g2.detach().numpy(), g2.requires_grad


@pytest.mark.filterwarnings("ignore:.*degrees of freedom is")
@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("dim", [None, 0, 1])
@pytest.mark.parametrize("correction", [0, 1, 2, 5])
@pytest.mark.parametrize("op", ["var", "std"])
def test_second_order_of_abs_of_nan_variance(op, correction, dim, create_graph):
    want, ours = (_nan_through_abs(lib, op, dim, correction, create_graph) for lib in LIBS)
    for w, o in zip(want[:2], ours[:2]):
        np.testing.assert_array_equal(w, o)
    assert want[2] == ours[2]


def _dof_warnings(lib, name, shape, dim, correction):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        getattr(lib, name)(lib.ones(shape), correction=correction, **({} if dim is None else {"dim": dim}))
    return [(w.category, str(w.message).split(" (Triggered internally")[0], w.filename) for w in caught]


@pytest.mark.parametrize("shape, dim, correction", [
    ((3, 0), 0, 1), ((0, 3), 0, 1), ((0,), None, 1), ((0,), None, 0), ((3, 0), 0, 0), ((3, 0), 1, 0), ((3, 1), 1, 1),
    ((2,), None, 2.5), ((2,), None, 1.5), ((2,), None, -1), ((1,), None, 0), ((2, 3), (0, 1), 6), ((2, 3), (0, 1), 5),
    ((4, 2), None, 2)])
@pytest.mark.parametrize("name", ["var", "std", "var_mean", "std_mean"])
def test_variance_warns_without_degrees_of_freedom(name, shape, dim, correction):
    """torch warns, at the caller's line, where the reduction factor (input numel over output numel, 0 for an empty
    result) is at most the correction; microtorch said nothing."""
    want, ours = (_dof_warnings(lib, name, shape, dim, correction) for lib in LIBS)
    assert want == ours


def _draws_after(lib, build):
    lib.manual_seed(0)
    module = build(lib)
    return [p.detach().numpy().copy() for p in module.parameters()], lib.rand(3).numpy()


@pytest.mark.parametrize("build", [
    lambda lib: lib.nn.ConvTranspose2d(2, 3, 2), lambda lib: lib.nn.ConvTranspose1d(4, 2, 3, groups=2),
    lambda lib: lib.nn.ConvTranspose3d(1, 2, 2, bias=False), lambda lib: lib.nn.Conv2d(2, 3, 2)])
def test_transposed_convolution_draws_its_weights_once(build):
    """PyTorch's DCGAN tutorial: ConvTranspose2d drew its initial weights twice (the first time in the shape of a
    convolution's), so its weights and every later draw differed from torch's."""
    (want, want_next), (ours, ours_next) = (_draws_after(lib, build) for lib in LIBS)
    for w, o in zip(want, ours, strict=True):
        np.testing.assert_array_equal(w, o)
    np.testing.assert_array_equal(want_next, ours_next)


@pytest.mark.parametrize("make", [
    lambda lib: lib.ones(3, 2).t(), lambda lib: lib.ones(4, 3, 2).permute(2, 0, 1), lambda lib: lib.ones(4, 6)[:, ::2],
    lambda lib: lib.ones(5, 4)])
@pytest.mark.parametrize("how", ["functional", "module", "inplace"])
def test_dropout_draws_in_memory_order(make, how):
    """torch's dropout fills empty_like(input) with bernoulli_: a transposed input's mask is drawn as it lies in
    memory (a batch_first TransformerEncoderLayer's attention output is such a view)."""
    got = []
    for lib in LIBS:
        x = make(lib)
        lib.manual_seed(0)
        if how == "functional":
            y = lib.nn.functional.dropout(x, 0.5)
        elif how == "module":
            y = lib.nn.Dropout(0.3)(x)
        else:
            y = lib.nn.functional.dropout(x.clone(), 0.5, inplace=True)
        got.append(y.numpy())
    np.testing.assert_array_equal(*got)


def test_batch_first_encoder_layer_trains_as_torchs():
    got = []
    for lib in LIBS:
        lib.manual_seed(0)
        layer = lib.nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, batch_first=True, dropout=0.1)
        x = lib.rand(2, 5, 8)
        lib.manual_seed(1)
        got.append(layer(x).detach().numpy())
    np.testing.assert_allclose(*got, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("average", [True, False])
def test_multihead_attention_returns_the_dropped_weights(average):
    """torch returns the attention weights after dropout (zeros, and the others scaled by 1 / (1 - p))."""
    got = []
    for lib in LIBS:
        lib.manual_seed(0)
        mha = lib.nn.MultiheadAttention(4, 2, dropout=0.5)
        q = lib.randn(3, 2, 4)
        lib.manual_seed(1)
        out, weights = mha(q, q, q, average_attn_weights=average)
        got.append((out.detach().numpy(), weights.detach().numpy()))
    for w, o in zip(*got):
        np.testing.assert_allclose(w, o, rtol=1e-6, atol=1e-7)


def _sdpa_layouts(lib):
    lib.manual_seed(0)
    F = lib.nn.functional
    out = []
    for q in (lib.randn(3, 2, 5, 4).permute(1, 0, 2, 3), lib.randn(2, 5, 4, 3).permute(0, 1, 3, 2).transpose(1, 2),
              lib.randn(2, 5, 3, 4)[:, ::2].transpose(1, 2), lib.randn(2, 5, 3, 4).transpose(1, 2),
              lib.randn(2, 3, 5, 4)):
        c = lib.randn(q.shape)
        q = q.detach().requires_grad_()
        y = F.scaled_dot_product_attention(q, c, c)
        (y * lib.randn(y.shape)).sum().backward()
        out.append((y.stride(), q.grad.stride(), type(y.grad_fn).__name__))
    return out


def test_fused_attention_lays_out_its_output_as_the_query():
    """PyTorch's SDPA tutorial: q, k, v are transposed views of (B, L, H, D) buffers, and torch's fused CPU kernel
    gives an output in the query's layout, so y.transpose(1, 2).view(B, L, H * D) works; microtorch's was
    contiguous and that view raised."""
    want, ours = (_sdpa_layouts(lib) for lib in LIBS)
    assert want == ours


@pytest.mark.parametrize("shape", [(1, 2, 3, 2), (1, 3, 2), (2, 1, 4, 3)])
@pytest.mark.parametrize("mask_kind", ["bool", "float"])
@pytest.mark.parametrize("dropout_p", [0.0, 0.5])
def test_attention_mask_with_is_causal(shape, mask_kind, dropout_p):
    """torch's fused kernel (4-d, no dropout) applies an explicit mask and the causal one together; elsewhere its
    reference path refuses the pair."""
    got = []
    for lib in LIBS:
        lib.manual_seed(0)
        q = lib.randn(shape)
        n = shape[-2]
        m = lib.rand(n, n) > 0.3
        mask = m if mask_kind == "bool" else lib.where(m, 0.0, -2.0)
        try:
            y = lib.nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=mask, is_causal=True,
                                                               dropout_p=dropout_p)
            got.append(y.numpy())
        except RuntimeError as e:
            got.append(str(e))
    if isinstance(got[0], str):
        assert got[0] == got[1]
    else:
        np.testing.assert_allclose(*got, rtol=1e-6, atol=1e-7)


_LEGACY_LOSSES = {
    "nll_loss": lambda F, x, t, p: F.nll_loss(x.log_softmax(1), t, **p),
    "cross_entropy": lambda F, x, t, p: F.cross_entropy(x, t, **p),
    "mse_loss": lambda F, x, t, p: F.mse_loss(x, x.flip(0), **p),
    "l1_loss": lambda F, x, t, p: F.l1_loss(x, x.flip(0), **p),
    "binary_cross_entropy": lambda F, x, t, p: F.binary_cross_entropy(x.sigmoid(), x.flip(0).sigmoid(), **p),
    "binary_cross_entropy_with_logits": lambda F, x, t, p: F.binary_cross_entropy_with_logits(x, x.flip(0).sigmoid(),
                                                                                              **p),
    "smooth_l1_loss": lambda F, x, t, p: F.smooth_l1_loss(x, x.flip(0), **p),
    "kl_div": lambda F, x, t, p: F.kl_div(x.log_softmax(1), x.flip(0).softmax(1), **p),
}


@pytest.mark.parametrize("legacy", [{"size_average": False}, {"reduce": False}, {"size_average": True},
                                    {"size_average": False, "reduce": True, "reduction": "none"}, {}])
@pytest.mark.parametrize("name", sorted(_LEGACY_LOSSES))
def test_functional_losses_honour_size_average_and_reduce(name, legacy):
    """PyTorch's spatial transformer tutorial sums its test loss with F.nll_loss(..., size_average=False): torch
    warns that the arguments will go, and honours them; microtorch's functional losses ignored them."""
    got = []
    for lib in LIBS:
        lib.manual_seed(0)
        x, t = lib.randn(4, 3), lib.tensor([0, 2, 1, 2])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = _LEGACY_LOSSES[name](lib.nn.functional, x, t, dict(legacy))
        got.append((out.numpy(), [str(w.message) for w in caught if "size_average" in str(w.message)]))
    np.testing.assert_allclose(got[0][0], got[1][0], rtol=1e-6)
    assert got[0][1] == got[1][1]


@pytest.mark.parametrize("module", ["MSELoss", "L1Loss", "NLLLoss", "CrossEntropyLoss", "BCELoss"])
def test_loss_modules_warn_of_size_average(module):
    msgs = []
    for lib in LIBS:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            loss = getattr(lib.nn, module)(size_average=False)
        msgs.append(([str(w.message) for w in caught], loss.reduction))
    assert msgs[0] == msgs[1]


def _assigned(lib, target_shape, key, value_shape, requires_grad):
    lib.manual_seed(0)
    x = lib.zeros(target_shape)
    v = lib.randn(value_shape, requires_grad=requires_grad)
    y = x.clone() if not requires_grad else x.clone().requires_grad_(False)
    y[key] = v
    if requires_grad:
        (y * lib.arange(y.numel(), dtype=y.dtype).reshape(y.shape)).sum().backward()
        return y.detach().numpy(), v.grad.numpy()
    return y.numpy(), None


@pytest.mark.parametrize("target_shape, key, value_shape", [
    ((5,), 2, (1, 1)), ((5,), slice(3, 4), (1, 1, 1)), ((3, 4), 1, (1, 4)), ((2, 3), (slice(None), slice(1, 3)),
                                                                            (1, 1, 2)),
    ((3, 4), [0, 2], (1, 1, 4)), ((3, 4), (slice(None), [1]), (1, 3, 1)), ((2, 3), 0, (1, 1, 1))])
@pytest.mark.parametrize("requires_grad", [False, True])
def test_setitem_drops_the_values_leading_ones(target_shape, key, value_shape, requires_grad):
    """d2l's sequence chapter: multistep_preds[i] = net(...) of shape (1, 1); torch views the value without its
    leading size-1 dims before broadcasting it."""
    want, ours = (_assigned(lib, target_shape, key, value_shape, requires_grad) for lib in LIBS)
    np.testing.assert_array_equal(want[0], ours[0])
    if requires_grad:
        np.testing.assert_array_equal(want[1], ours[1])


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 (the type and message are compared with torch's)
        return type(e), str(e).split("(): ", 1)[-1] if str(e).startswith(("getitem(): ", "setitem(): ")) else str(e)
    return None


def _same_error(want, ours):
    """torch's type, and its message (microtorch may add a hint after it, in parentheses)"""
    assert (want is None) == (ours is None), (want, ours)
    if want is not None:
        ours = (ours[0], ours[1].split("(): ", 1)[1] if ours[1].startswith(("cat(): ", "masked_fill")) else ours[1])
        assert want[0] is ours[0] and (ours[1] == want[1] or ours[1].startswith(want[1] + " (") or
                                       ours[1].startswith(want[1] + ": shapes")), (want, ours)


def _set(x, key):
    x[key] = 3.0


@pytest.mark.parametrize("key", [0, 1, -1, 5, slice(None), slice(0, 1), (0,), (0, 0)])
def test_indexing_a_zero_dim_tensor_raises_torchs_errors(key):
    """The old tutorials' loss.data[0]: torch says to use item()."""
    for op in (lambda x: x[key], lambda x: _set(x, key)):
        _same_error(*(_error(lambda: op(lib.tensor(2.0))) for lib in LIBS))


@pytest.mark.parametrize("module", ["GRU", "LSTM", "RNN"])
@pytest.mark.parametrize("options", [{}, {"num_layers": 2, "bidirectional": True}, {"bias": False}])
def test_recurrent_layers_list_their_weights(module, options):
    """d2l's init_seq2seq walks a GRU's _flat_weights_names and _parameters."""
    got = []
    for lib in LIBS:
        lib.manual_seed(0)
        m = getattr(lib.nn, module)(3, 4, **options)
        got.append((m._flat_weights_names, m._all_weights, [tuple(w.shape) for w in m._flat_weights],
                    [[tuple(w.shape) for w in ws] for ws in m.all_weights], list(m._parameters)))
    assert got[0] == got[1]


@pytest.mark.parametrize("module", ["GRU", "LSTM", "RNN"])
@pytest.mark.parametrize("input_shape, state_shape, pair", [
    ((4, 2, 3), (2, 5), True), ((4, 3), (1, 2, 5), True), ((4, 2, 3), (1, 2, 5), False), ((4, 3), (1, 5), True)])
def test_recurrent_state_dims_are_checked_as_torch(module, input_shape, state_shape, pair):
    """An LSTM given one tensor for (h, c) fails as torch's does (it reads hx[1])."""
    got = []
    for lib in LIBS:
        m = getattr(lib.nn, module)(3, 5)
        hx = lib.zeros(state_shape)
        hx = (hx, hx) if module == "LSTM" and pair else hx
        got.append(_error(lambda: m(lib.ones(input_shape), hx)))
    _same_error(*got)


def test_reversed_flips_a_tensor():
    """d2l's BiRNNScratch: reversed(inputs) is inputs.flip(0) (FlipBackward0), a 0-d tensor itself."""
    for make in (lambda lib: lib.arange(6.0, requires_grad=True).reshape(3, 2), lambda lib: lib.tensor(2.0)):
        want, ours = (reversed(make(lib)) for lib in LIBS)
        np.testing.assert_array_equal(want.detach().numpy(), ours.detach().numpy())
        assert type(want.grad_fn).__name__ == type(ours.grad_fn).__name__


def _texts(lib, fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn(lib)
    return out, [str(w.message).split(" (Triggered internally")[0].replace("microtorch", "torch") for w in caught]


def _scheduler_first(lib):
    opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=0.1)
    sched = lib.optim.lr_scheduler.StepLR(opt, 1)
    sched.step()


def _two_groups(lib):
    return repr(lib.optim.SGD([{"params": [lib.zeros(1, requires_grad=True)], "weight_decay": 3},
                               {"params": [lib.zeros(1, requires_grad=True)]}], lr=0.01))


def _empty_optimizer(lib):
    opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=0.01)
    opt.param_groups.clear()
    return repr(opt)


@pytest.mark.parametrize("fn", [
    lambda lib: (lib.ones(2, requires_grad=True) * 2).grad, _scheduler_first, _two_groups, _empty_optimizer,
    lambda lib: lib.tensor(lib.ones(2)).tolist()])
def test_texts_are_torchs(fn):
    """The non-leaf .grad warning, the scheduler-order warning, the copy-construct warning and an optimizer's repr
    with several groups (a blank line between them), in torch 2.13's words."""
    assert _texts(real_torch, fn) == _texts(microtorch, fn)


def test_meshgrid_warns_in_torchs_words():
    import subprocess
    import sys
    code = ("import warnings, {0}\nwith warnings.catch_warnings(record=True) as w:\n    warnings.simplefilter('always')"
            "\n    {0}.meshgrid({0}.ones(2), {0}.ones(3)); {0}.meshgrid({0}.ones(2), {0}.ones(3))\n"
            "print([str(m.message).split(' (Triggered')[0] for m in w])")
    out = [subprocess.run([sys.executable, "-c", code.format(name)], capture_output=True, text=True, check=True).stdout
           for name in ("torch", "microtorch")]
    assert out[0].replace("torch.", "") == out[1].replace("microtorch.", "")


@pytest.mark.parametrize("array", [np.array([[1.5, True], [0.0, False]], dtype=object), np.array(["1"]),
                                   np.array([b"1"])])
@pytest.mark.parametrize("given_dtype", [False, True])
def test_arrays_of_objects_are_refused(array, given_dtype):
    """A pandas .values of mixed columns is an object array: torch refuses it even with a dtype; microtorch
    converted it."""
    got = []
    for lib in LIBS:
        kwargs = {"dtype": lib.float32} if given_dtype else {}
        err = _error(lambda: lib.tensor(array, **kwargs))
        got.append((err[0], err[1].split(". The only")[0].removeprefix("tensor(): ")))
    assert got[0] == got[1]


@pytest.mark.parametrize("draw", [lambda lib: lib.rand(100, dtype=lib.float16),
                                  lambda lib: lib.empty(40, dtype=lib.float16).uniform_(-3, 7),
                                  lambda lib: lib.rand(3, 5, dtype=lib.float16).t().contiguous()])
def test_half_uniform_draws_are_torchs(draw):
    """torch draws a half's uniform values as a float's (24 bits), then rounds them to half."""
    got = []
    for lib in LIBS:
        lib.manual_seed(5)
        got.append((draw(lib).numpy(), lib.rand(2).numpy()))
    for w, o in zip(*got):
        np.testing.assert_array_equal(w, o)


def _legendre_node(lib):
    class LegendrePolynomial3(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return 0.5 * (5 * x ** 3 - 3 * x)

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 1.5 * (5 * x ** 2 - 1)

    node = LegendrePolynomial3.apply(lib.ones(2, requires_grad=True)).grad_fn
    return type(node).__module__, type(node).__qualname__, repr(node).split(" object at")[0], node.name()


def test_a_custom_functions_node_is_named_as_torchs():
    """PyTorch's custom-function example: the node of a Function written in Python is a class of
    torch.autograd.function, shown with its module; built-in nodes keep their bare names."""
    want, ours = (_legendre_node(lib) for lib in LIBS)
    assert want[0].replace("torch.", "microtorch.", 1) == ours[0]
    assert want[1:] == (ours[1], ours[2].replace("microtorch.", "torch.", 1), ours[3])
    assert repr(microtorch.ones(1, requires_grad=True).mul(2).grad_fn).startswith("<MulBackward0 object at")


def _node_names(t):
    seen, out, stack = set(), [], [t.grad_fn]
    while stack:
        fn = stack.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        out.append(type(fn).__name__)
        stack += [f for f, _ in fn.next_functions]
    return out


@pytest.mark.parametrize("run", [lambda lib, x: lib.nn.GRU(4, 3, num_layers=2)(x)[1],
                                 lambda lib, x: lib.nn.GRUCell(4, 3)(x[0]),
                                 lambda lib, x: lib.nn.LSTMCell(4, 3)(x[0])[1],
                                 lambda lib, x: lib.nn.RNN(4, 3, bidirectional=True)(x)[1]])
def test_recurrent_graphs_split_gates_as_torch(run):
    """d2l's GRU graphs: torch's cells split the gates with unsafe_chunk (UnsafeSplitBackward0)."""
    got = []
    for lib in LIBS:
        lib.manual_seed(0)
        got.append(_node_names(run(lib, lib.randn(2, 1, 4, requires_grad=True))))
    assert got[0] == got[1]


def _linear_graph(lib, make):
    lib.manual_seed(0)
    lin = lib.nn.Linear(4, 3)
    x = make(lib).requires_grad_()
    y = lin(x)
    (y * lib.arange(y.numel()).reshape(y.shape)).sum().backward()
    return y.grad_fn.name(), y._version, y.stride(), x.grad.stride(), y.detach().numpy(), x.grad.numpy()


@pytest.mark.parametrize("make", [lambda lib: lib.randn(3, 2, 4).transpose(0, 1), lambda lib: lib.randn(2, 3, 4),
                                  lambda lib: lib.randn(3, 2, 5, 4).transpose(0, 1), lambda lib: lib.randn(2, 5, 3, 4),
                                  lambda lib: lib.randn(4), lambda lib: lib.randn(8, 4)[::2]])
def test_linear_of_a_strided_input_adds_its_bias_in_place(make):
    """Raschka's MHA with nn.MultiheadAttention(batch_first=True): torch folds only a contiguous input into addmm;
    another gets matmul, then the bias added in place (AddBackward0, version 1)."""
    want, ours = (_linear_graph(lib, make) for lib in LIBS)
    assert want[:4] == ours[:4]
    for w, o in zip(want[4:], ours[4:]):
        np.testing.assert_allclose(w, o, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["empty_cache", "memory_allocated", "max_memory_allocated", "memory_reserved",
                                  "max_memory_reserved", "memory_stats", "get_device_capability", "mem_get_info",
                                  "set_device", "reset_peak_memory_stats", "seed", "seed_all",
                                  "get_device_properties", "ipc_collect"])
def test_cuda_memory_counters_as_a_cpu_build(name):
    """Raschka's appendix A prints torch.cuda's memory counters: a CPU build of torch gives 0 and refuses the rest."""
    got = []
    for lib in LIBS:
        fn = getattr(lib.cuda, name)
        err = _error(lambda: fn(0) if name == "set_device" else fn())
        got.append(err[0] if err else fn(0) if name == "set_device" else fn())
    assert got[0] == got[1]


def test_dynamo_config_as_torchs():
    """The MHA notebook sets torch._dynamo.config.suppress_errors before torch.compile."""
    import importlib
    want, ours = (importlib.import_module(lib.__name__ + "._dynamo") for lib in LIBS)
    for name in ("suppress_errors", "cache_size_limit", "verbose", "recompile_limit", "capture_scalar_outputs"):
        assert getattr(want.config, name) == getattr(ours.config, name)
    ours.config.suppress_errors = True
    assert ours.config.suppress_errors is True
    ours.config.suppress_errors = False
    for mod in (want, ours):
        with pytest.raises(AttributeError, match="config.no_such_switch does not exist"):
            mod.config.no_such_switch = 1
        assert mod.is_compiling() is False and mod.reset() is None and mod.disable(lambda v: v + 1)(1) == 2


@pytest.mark.parametrize("op", [
    lambda lib, m: lib.tril(m), lambda lib, m: lib.triu(m, 1), lambda lib, m: m.masked_fill(m > 0, 0.0),
    lambda lib, m: lib.where(m > 0, m, 0.0), lambda lib, m: m.repeat_interleave(2, 0), lambda lib, m: m @ m.T,
    lambda lib, m: m.exp().sum(0), lambda lib, m: lib.flip(m, (0,))])
def test_ops_of_meta_tensors_stay_meta(op):
    """Raschka's memory-efficient loading builds the model under torch.device('meta'), its causal mask by
    triu(ones(...)): ops of meta tensors give meta tensors of torch's shape and dtype (they came back on the cpu)."""
    got = []
    for lib in LIBS:
        out = op(lib, lib.ones(3, 3, device="meta"))
        got.append((out.device.type, tuple(out.shape), str(out.dtype).split(".")[-1]))
    assert got[0] == got[1]
    with microtorch.device("meta"):
        mask = microtorch.triu(microtorch.ones(4, 4), diagonal=1)
    assert mask.is_meta and mask.shape == (4, 4)


def _projected_lstm(lib, options, batched):
    lib.manual_seed(0)
    m = lib.nn.LSTM(4, 6, **options)
    x = lib.randn(*((2, 5, 4) if batched else (5, 4)), requires_grad=True)
    out, (h, c) = m(x)
    (out.sum() + h.sum() * 2 + c.sum() * 3).backward()
    grads = [p.grad.numpy() for p in m.parameters()]
    return repr(m), m._flat_weights_names, tuple(out.shape), tuple(h.shape), tuple(c.shape), out.detach().numpy(), \
        x.grad.numpy(), grads


@pytest.mark.filterwarnings("ignore:LSTM with projections")
@pytest.mark.parametrize("options", [{"proj_size": 3}, {"proj_size": 2, "num_layers": 2, "bidirectional": True},
                                     {"proj_size": 3, "batch_first": True, "bias": False}])
@pytest.mark.parametrize("batched", [True, False])
def test_lstm_with_a_projection(options, batched):
    """LSTM(proj_size=p): h_t = W_hr (o * tanh(c_t)), of size p; c keeps hidden_size (it raised NotImplementedError)."""
    want, ours = (_projected_lstm(lib, options, batched) for lib in LIBS)
    assert want[:5] == (ours[0].replace("microtorch", "torch"),) + ours[1:5]
    for w, o in zip(want[5:7] + tuple(want[7]), ours[5:7] + tuple(ours[7])):
        np.testing.assert_allclose(w, o, rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("proj_size", [-1, 6, 7])
def test_lstm_projection_sizes_checked_as_torch(proj_size):
    _same_error(*(_error(lambda: lib.nn.LSTM(4, 6, proj_size=proj_size)) for lib in LIBS))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_cpu_autocast_to_a_full_dtype_switches_off_as_torch(dtype):
    """build-nanogpt runs under autocast(device_type='cpu', dtype=...): torch warns and runs as written for a dtype
    other than bfloat16 and float16; microtorch refused every CPU autocast."""
    got = []
    for lib in LIBS:
        lib.manual_seed(0)
        lin = lib.nn.Linear(4, 3)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with lib.autocast(device_type="cpu", dtype=getattr(lib, dtype)):
                y = lin(lib.randn(2, 4))
                enabled = lib.is_autocast_enabled("cpu")
        got.append((str(y.dtype).split(".")[-1], enabled, [str(w.message) for w in caught], y.detach().numpy()))
    assert got[0][:3] == got[1][:3]
    np.testing.assert_allclose(got[0][3], got[1][3], rtol=1e-6)


def test_random_sampler_with_replacement_draws_lazily():
    """minGPT's trainer: RandomSampler(replacement=True, num_samples=int(1e10)) and a few batches; torch draws 32
    at a time (microtorch drew all 1e10 first, a MemoryError)."""
    got = []
    for lib in LIBS:
        lib.manual_seed(3407)
        data = list(range(100))
        sampler = lib.utils.data.RandomSampler(data, replacement=True, num_samples=int(1e10))
        loader = lib.utils.data.DataLoader(data, sampler=sampler, batch_size=4)
        batches = iter(loader)
        got.append([next(batches).tolist() for _ in range(20)] + [len(sampler)])
    assert got[0] == got[1]


@dataclasses.dataclass
class _GPTConfig:
    block_size: int = 8
    n_embd: int = 16


def _checkpoint_loads(lib, writer, path, allow):
    """(what load gives or raises) for a checkpoint holding a dataclass, written by `writer`"""
    writer.manual_seed(0)
    writer.save({"model": writer.nn.Linear(2, 2).state_dict(), "config": _GPTConfig(), "step": 10}, path)
    lib.serialization.clear_safe_globals()
    try:
        if allow == "add":
            lib.serialization.add_safe_globals([_GPTConfig])
        if allow == "context":
            with lib.serialization.safe_globals([_GPTConfig]):
                back = lib.load(path)
            after = lib.serialization.get_safe_globals()
        else:
            back = lib.load(path)
            after = lib.serialization.get_safe_globals()
        return back["config"], back["step"], sorted(back["model"]), back["model"]["weight"].numpy(), after
    except pickle.UnpicklingError as e:
        return type(e), "add_safe_globals" in str(e)
    finally:
        lib.serialization.clear_safe_globals()


@pytest.mark.parametrize("allow", [None, "add", "context"])
@pytest.mark.parametrize("writer_is_torch", [False, True])
def test_a_checkpoint_with_a_dataclass_loads_once_allowed(allow, writer_is_torch, tmp_path):
    """build-nanogpt saves its config dataclass in the checkpoint: torch.load refuses it by default and names
    torch.serialization.add_safe_globals; once the class is allowed it loads (microtorch had no serialization)."""
    want = _checkpoint_loads(real_torch, real_torch, tmp_path / "t.pt", allow)
    writer = real_torch if writer_is_torch else microtorch
    ours = _checkpoint_loads(microtorch, writer, tmp_path / "m.pt", allow)
    assert len(want) == len(ours) and want[0] == ours[0]
    if len(want) == 2:
        assert want == ours
    else:
        assert want[1:3] == ours[1:3] and want[4] == ours[4] == [_GPTConfig] * (allow == "add")
        np.testing.assert_array_equal(want[3], ours[3])


@pytest.mark.parametrize("call", [
    lambda lib: lib.zeros(2, 8).masked_fill(lib.ones(2, 7).bool(), 0.0),
    lambda lib: lib.zeros(2, 8).masked_fill_(lib.ones(2, 7).bool(), 0.0),
    lambda lib: lib.cat([lib.zeros(2, 3), lib.zeros(3, 4)]),
    lambda lib: lib.cat([lib.zeros(2, 3, 5), lib.zeros(2, 4, 6)]),
    lambda lib: lib.cat([lib.zeros(2, 3), lib.zeros(2, 3, 1)]), lambda lib: lib.cat([lib.zeros(2, 3), lib.zeros(4)])])
def test_shape_errors_say_what_torchs_say(call):
    """Karpathy's lectures' usual mistakes: masked_fill's out-of-place form names the mask as tensor a (the sizes
    were swapped); cat names the one mismatched size, or the dims."""
    _same_error(*(_error(lambda: call(lib)) for lib in LIBS))


def test_tf32_switch_is_the_matmul_precision():
    """nanoGPT sets torch.backends.cuda.matmul.allow_tf32; Raschka's code sets the float32 matmul precision:
    in torch each reads the other."""
    got = []
    for lib in LIBS:
        seen = [lib.backends.cuda.matmul.allow_tf32]
        for precision in ("high", "medium", "highest"):
            lib.set_float32_matmul_precision(precision)
            seen.append(lib.backends.cuda.matmul.allow_tf32)
        for allowed in (True, False):
            lib.backends.cuda.matmul.allow_tf32 = allowed
            seen.append(lib.get_float32_matmul_precision())
        got.append(seen)
    assert got[0] == got[1]


@pytest.mark.parametrize("module", ["GRU", "RNN"])
@pytest.mark.parametrize("proj_size", [0, 2])
def test_rnn_and_gru_refuse_a_projection(module, proj_size):
    _same_error(*(_error(lambda: getattr(lib.nn, module)(4, 6, proj_size=proj_size)) for lib in LIBS))
