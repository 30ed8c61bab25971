"""The twenty-third round's findings (teaching code run beside torch: the Annotated Transformer, yunjey's
tutorial, Stanford's CS231n and CS224n, fastbook, PINNs, labml), each checked against torch 2.13."""
import numpy as np
import pytest
import torch as real_torch

import microtorch
from tests.torch_errors import error_of, same_error

LIBS = (real_torch, microtorch)


# ---- a tuple of ints holding something else: torch's parser names the element and where it is ----
@pytest.mark.parametrize("make", [
    lambda lib: lib.zeros((1.5, 2)), lambda lib: lib.zeros((2, 1.5)), lambda lib: lib.zeros((2, None)),
    lambda lib: lib.flip(lib.ones(2, 2), (1.5,)), lambda lib: lib.flip(lib.ones(2, 2), (0, 1.5)),
    lambda lib: lib.ones(2, 2).new_full((2, 1.5), 1), lambda lib: lib.ones(2, 2).permute((0, 1.5)),
    lambda lib: lib.tile(lib.ones(2), (1, 1.5)), lambda lib: lib.full((2, 1.5), 1.0),
    lambda lib: lib.as_strided(lib.ones(4), (1.5, 2), (1, 1)),
    lambda lib: lib.as_strided(lib.ones(4), (2, 2.5), (1, 1)),
])
def test_a_tuple_of_ints_holding_a_float(make):
    same_error(make)


# ---- a product of two dtypes: the words of the kernel torch reaches ----
_DT = {"f32": "float32", "f64": "float64", "i64": "int64"}


@pytest.mark.parametrize("a,b", [("f32", "f64"), ("f64", "f32"), ("f32", "i64"), ("i64", "f32")])
@pytest.mark.parametrize("shapes,fn", [
    (((2, 3), (3,)), "mv"), (((1, 2, 3), (1, 3, 2)), "bmm"), (((3,), (3,)), "dot"), (((2, 3), (3, 2)), "mm"),
    (((3,), (3, 2)), "matmul"), (((2, 2, 3), (3,)), "matmul"), (((2, 3), (2, 3, 2)), "matmul"),
    (((2, 2, 3), (3, 2)), "matmul"), (((3,), (3,)), "matmul"), (((2, 3), (3,)), "matmul")])
def test_a_product_of_two_dtypes(a, b, shapes, fn):
    same_error(lambda lib: getattr(lib, fn)(lib.ones(*shapes[0], dtype=getattr(lib, _DT[a])),
                                             lib.ones(*shapes[1], dtype=getattr(lib, _DT[b]))))


# ---- conv_transpose's output padding and output_size, in torch's words ----
@pytest.mark.parametrize("n,stride,pad", [(1, 2, 2), (2, 2, 2), (2, 1, 1), (3, 2, 2)])
def test_conv_transpose_output_padding_too_large(n, stride, pad):
    same_error(lambda lib: getattr(lib.nn, f"ConvTranspose{n}d")(2, 3, 3, stride=stride, output_padding=pad)(
        lib.ones((1, 2) + (4,) * n)))


@pytest.mark.parametrize("shape,size", [((1, 2, 4, 4), (20, 20)), ((1, 2, 4, 4), [30, 30]), ((2, 4, 4), [30, 30])])
def test_conv_transpose_output_size_out_of_range(shape, size):
    same_error(lambda lib: lib.nn.ConvTranspose2d(2, 3, 3, stride=2)(lib.ones(*shape), output_size=size))


def test_size_and_stride_take_numpys_axis():
    for lib in LIBS:
        x = lib.ones(2, 3)
        assert (x.size(axis=1), x.stride(axis=0), x.size(axis=-2)) == (3, 3, 2)
    same_error(lambda lib: lib.ones(2).size(dim=0, axis=0))


# ---- distributions repeated over a larger batch (Normal, Bernoulli, Categorical, Uniform) ----
def _expanded_draws(lib, make, batch):
    lib.manual_seed(0)
    d = make(lib)
    e = d.expand(batch)
    x = e.sample((2,))
    return (tuple(e.batch_shape), tuple(e.event_shape), tuple(x.shape), x.numpy().copy(),
            e.log_prob(x).detach().numpy().copy(), e.entropy().detach().numpy().copy(), type(e).__name__,
            e._validate_args == d._validate_args, sorted(k for k in vars(e) if not k.startswith("_")))


@pytest.mark.parametrize("make,batch", [
    (lambda lib: lib.distributions.Normal(lib.tensor([0.0, 1.0, 2.0]), lib.tensor(2.0)), (4, 3)),
    (lambda lib: lib.distributions.Normal(0.0, 1.0), (2,)),
    (lambda lib: lib.distributions.Bernoulli(probs=lib.tensor([0.2, 0.7])), (3, 2)),
    (lambda lib: lib.distributions.Bernoulli(logits=lib.tensor([-1.0, 0.5])), (3, 2)),
    (lambda lib: lib.distributions.Categorical(logits=lib.tensor([[0.1, 1.0, -1.0], [2.0, 0.0, 0.0]])), (5, 2)),
    (lambda lib: lib.distributions.Categorical(probs=lib.tensor([0.2, 0.3, 0.5])), (4,)),
    (lambda lib: lib.distributions.Uniform(lib.tensor([0.0, 1.0]), lib.tensor([1.0, 3.0])), (2, 2)),
])
def test_expand_as_torchs(make, batch):
    want, got = (_expanded_draws(lib, make, batch) for lib in LIBS)
    assert want[:3] == got[:3] and want[6:] == got[6:]
    for a, b in zip(want[3:6], got[3:6]):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_expand_errors_as_torchs():
    same_error(lambda lib: lib.distributions.Normal(lib.zeros(3), 1.0).expand((4,)))
    same_error(lambda lib: lib.distributions.Bernoulli(lib.tensor([0.5, 0.5])).expand((2, 3)))


def test_multinomial_expand():
    def run(lib):
        lib.manual_seed(0)
        e = lib.distributions.Multinomial(5, lib.tensor([0.2, 0.3, 0.5])).expand((4,))
        x = e.sample((2,))
        return tuple(e.batch_shape), tuple(e.event_shape), x.tolist(), e.log_prob(x).tolist()
    want, got = (run(lib) for lib in LIBS)
    assert want[:3] == got[:3]
    np.testing.assert_allclose(want[3], got[3], rtol=1e-6)


# ---- numpy values in a checkpoint: loaded as numpy values, refused by a weights-only load as torch's ----
def _saved(lib, obj):
    import io
    buf = io.BytesIO()
    lib.save(obj, buf)
    buf.seek(0)
    return buf


@pytest.mark.parametrize("value", [np.arange(3.0), np.float64(2.5), np.int64(3), np.bool_(True), np.float32(1.5),
                                   np.array(7, np.int32)])
def test_numpy_values_in_a_checkpoint(value):
    import pickle
    for lib in LIBS:
        loaded = lib.load(_saved(lib, {"v": value, "epoch": 3}), weights_only=False)
        assert type(loaded["v"]) is type(value) and np.array_equal(loaded["v"], value) and loaded["epoch"] == 3
        with pytest.raises(pickle.UnpicklingError, match="Unsupported global: GLOBAL numpy._core.multiarray"):
            lib.load(_saved(lib, [value]))


def test_numpy_values_load_once_allowed():
    allowed = [np._core.multiarray.scalar, np._core.multiarray._reconstruct, np.ndarray, np.dtype,
               np.dtypes.Float64DType]
    for lib in LIBS:
        with lib.serialization.safe_globals(allowed):
            loaded = lib.load(_saved(lib, {"a": np.arange(2.0), "n": np.float64(0.5)}))
        assert loaded["a"].tolist() == [0.0, 1.0] and type(loaded["n"]) is np.float64


def test_the_typed_storage_warning_is_torchs():
    import warnings
    texts = []
    for lib in LIBS:
        lib.storage._reset_warn_typed_storage_removal()  # (it warns once per process: an earlier test may have)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            lib.tensor([10.0, 20.0, 30.0]).storage()
        texts.append([str(w.message) for w in seen if "TypedStorage" in str(w.message)])
    assert texts[0] == texts[1] and texts[0]


def test_a_number_to_a_float32_tensor_power_rounds_as_torchs():
    # labml's ALiBi slopes (2 ** -0.5 to the odd powers) are torch's bits; over many bases torch's float32 pow (SLEEF's,
    # within an ulp) and the double result rounded, which microtorch computes, differ by one ulp in a few percent
    alibi = [lib.pow(2.0 ** -0.5, lib.arange(1, 9, 2)).tolist() for lib in LIBS]
    assert alibi[0] == alibi[1]
    bases = np.random.default_rng(0).uniform(0.05, 4.0, 40)
    want, got = (np.array([lib.pow(float(b), lib.arange(-30, 31)).numpy() for b in bases]) for lib in LIBS)
    ulps = np.abs(want.view(np.int32).astype(np.int64) - got.view(np.int32))
    assert ulps.max() <= 1 and (ulps > 0).mean() < 0.03


# ---- element reads and writes in Python loops (fastbook's matmul from scratch): views and versions as torch's ----
def test_matmul_by_element_loops_is_torchs():
    def run(lib):
        lib.manual_seed(0)
        a, b = lib.randn(3, 5), lib.randn(5, 2)
        c = lib.zeros(3, 2)
        for i in range(3):
            for j in range(2):
                for k in range(5):
                    c[i, j] += a[i, k] * b[k, j]
        return c.numpy(), c._version, a._version
    want, got = (run(lib) for lib in LIBS)
    np.testing.assert_array_equal(want[0], got[0])
    assert want[1:] == got[1:]


@pytest.mark.parametrize("grad", [False, True])
def test_element_views_as_torchs(grad):
    def run(lib):
        x = lib.arange(6.0).reshape(2, 3).requires_grad_(grad)
        with lib.no_grad():
            e = x[1, -1]
            f = x[0]
        g = x[1, 2] if not grad else x.detach()[1, 2]
        y = lib.zeros(2, 3)
        v = y[1]
        y[0, 1] = 5.0
        y[-1, 0] = lib.tensor(2.0)
        y[1, 1] = 3  # (an int into a float tensor)
        return (e.item(), e.requires_grad, e._base is x, e.is_leaf, f.shape, f.requires_grad, g.item(), g._version,
                y.tolist(), y._version, v.tolist(), v._version, e.stride(), f.stride())
    assert run(real_torch) == run(microtorch)


@pytest.mark.parametrize("make", [lambda lib: lib.zeros(2, 3)[2, 0], lambda lib: lib.zeros(2, 3)[0, -4],
                                  lambda lib: lib.zeros(2, 3)[0, 0, 0],
                                  lambda lib: lib.zeros(2, 3).__setitem__((5, 0), 1.0),
                                  lambda lib: lib.zeros(2, dtype=lib.int64).__setitem__((0,), 2 ** 70)])
def test_element_errors_as_torchs(make):
    (wt, w), (gt, g) = (error_of(lambda lib=lib: make(lib)) for lib in LIBS)
    assert wt == gt and wt is not None and w.split(" (")[0] in g, (w, g)


# ---- a read-only numpy array made a tensor: torch's warning, and writes that work ----
def _read_only_cases(lib):
    import warnings
    owner = np.arange(6, dtype=np.float32)
    flagged = owner[:]  # (a view whose flag is off: its memory is writable)
    flagged.flags.writeable = False
    frozen = np.frombuffer(bytes(np.ones(3, np.float32).tobytes()), dtype=np.float32)  # (memory numpy cannot
    # write: a bytes object of its own, as torch writes into it)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        t, u = lib.from_numpy(flagged), lib.as_tensor(frozen)
    t[0] = 100.0
    t.add_(1)
    u.mul_(2)
    messages = [str(w.message).split(" (Triggered")[0] for w in seen]
    return t.tolist(), owner.tolist(), u.tolist(), messages[:1]


def test_a_read_only_numpy_array():
    want, got = (_read_only_cases(lib) for lib in LIBS)
    assert want[:3] == got[:3]
    assert not want[3] or want[3] == got[3]  # (torch warns once per process: a test before may have spent it)


# ---- float16 normal draws: torch's (whole blocks of 16 in float, then the last 16 anew), no inf, no warning ----
@pytest.mark.parametrize("n", [16, 17, 40, 1000, 4096])
@pytest.mark.parametrize("seed", [0, 7])
def test_float16_normal_draws_are_torchs(n, seed):
    import warnings

    def run(lib):
        lib.manual_seed(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            a = lib.randn(n, dtype=lib.float16)
            b = lib.empty(n, dtype=lib.float16).normal_(0.5, 2.0)
            c = lib.randn(n)  # (the stream goes on as torch's)
        return a.numpy(), b.numpy(), c.numpy()
    for want, got in zip(*(run(lib) for lib in LIBS)):
        np.testing.assert_array_equal(want, got)
    assert np.isfinite(run(microtorch)[0]).all()


def test_large_draws_are_torchs():
    # (drawn in slices: the stream and the values are those of one draw, as torch's)
    def run(lib):
        lib.manual_seed(3)
        w = lib.nn.Linear(1024, 1100).weight.detach()
        x = lib.empty(2_200_000).uniform_(-2, 3)
        y = lib.empty(1_100_000, dtype=lib.float64).uniform_()
        z = lib.randn(1_100_000)
        return w.numpy(), x.numpy(), y.numpy(), z.numpy(), lib.rand(3).numpy()
    for want, got in zip(*(run(lib) for lib in LIBS)):
        np.testing.assert_array_equal(want, got)


# ---- small names course code reaches for ----
def test_pinned_memory_on_the_cpu():
    for lib in LIBS:
        assert lib.ones(2).is_pinned() is False
    same_error(lambda lib: lib.ones(2).pin_memory())


def test_dynamo_and_cudnn_switches():
    import warnings

    def run(lib):
        import importlib
        dynamo = importlib.import_module(lib.__name__ + "._dynamo")
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            dynamo.config.inline_inbuilt_nn_modules = 1
        with lib.backends.cudnn.flags(enabled=True, deterministic=True, benchmark=False):
            inside = (lib.backends.cudnn.deterministic, lib.backends.cudnn.enabled)
        return inside, lib.backends.cudnn.deterministic, [(w.category.__name__, str(w.message)) for w in seen]
    assert run(real_torch) == run(microtorch)


def test_module_hook_containers_print_as_torchs():
    def run(lib):
        m = lib.nn.Linear(2, 2)
        m.register_forward_pre_hook(lambda mod, args: None)
        return [type(getattr(m, n)).__name__ for n in ("_forward_pre_hooks", "_forward_hooks", "_backward_hooks",
                                                        "_backward_pre_hooks")], len(m._forward_pre_hooks)
    assert run(real_torch) == run(microtorch)


# ---- meta tensors: nothing allocated however large, and torch's answers ----
def test_meta_factories_and_products_allocate_nothing():
    def run(lib):
        x = lib.rand(2 ** 10, 3, 2 ** 16, 2 ** 16, device="meta")
        y = lib.randn(2 ** 20, 2 ** 20, device="meta", dtype=lib.float64, requires_grad=True)
        with lib.device("meta"):
            big = lib.nn.Linear(2 ** 16, 2 ** 16)
        prod = x @ lib.ones(2 ** 16, 5, device="meta")
        s = (x * 2 + 1) / (x - 3)
        return (tuple(x.shape), str(x.dtype), tuple(y.shape), y.requires_grad, y.is_leaf, tuple(big.weight.shape),
                big.weight.is_meta, tuple(prod.shape), prod.is_meta, tuple(s.shape),
                tuple(lib.zeros(2 ** 30, 2 ** 10, device="meta").shape),
                tuple(lib.full((2 ** 33, 4), 2.5, device="meta").shape))
    assert repr(run(real_torch)) == repr(run(microtorch)).replace("microtorch", "torch")


def test_loading_into_a_meta_module():
    import warnings

    def run(lib):
        lib.manual_seed(0)
        sd = lib.nn.Linear(3, 2).state_dict()
        m = lib.nn.Linear(3, 2, device="meta")
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            result = m.load_state_dict(sd)
        before = m.weight.is_meta
        m.load_state_dict(sd, assign=True)
        return str(result), before, m.weight.is_meta, m.weight.tolist(), [str(w.message) for w in seen]
    assert run(real_torch) == run(microtorch)


@pytest.mark.parametrize("make", [lambda lib: lib.ones(1, device="meta").item(),
                                  lambda lib: lib.zeros(-1, device="meta"), lambda lib: lib.empty(2, -3)])
def test_meta_errors_as_torchs(make):
    same_error(make)


def test_the_copy_construct_warning_points_at_each_users_line():
    import warnings

    def run(lib):
        a = lib.ones(2)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("default")
            lib.tensor(a)
            lib.tensor(a)
        return [(w.filename == __file__, w.category.__name__) for w in seen]
    assert run(real_torch) == run(microtorch) == [(True, "UserWarning")] * 2


def test_a_view_across_contiguous_subspaces_says_torchs_words():
    same_error(lambda lib: lib.arange(9.0).reshape(3, 3).t().view(9))


def test_stateless_functional_call_and_conv_weight_formats():
    import warnings

    def run(lib):
        lib.manual_seed(0)
        m = lib.nn.Linear(2, 2)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            out = lib.nn.utils.stateless.functional_call(m, {"weight": lib.ones(2, 2)}, (lib.ones(2),))
        net = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3), lib.nn.ConvTranspose2d(4, 2, 3), lib.nn.Linear(2, 2))
        same = lib.nn.utils.convert_conv2d_weight_memory_format(net, lib.channels_last) is net
        y = net[0](lib.randn(1, 3, 5, 5))
        return (out.tolist(), [(w.category.__name__, str(w.message)) for w in seen], same, net[0].weight.stride(),
                net[1].weight.stride(), net[2].weight.stride(), y.stride())
    assert run(real_torch) == run(microtorch)
    same_error(lambda lib: lib.nn.ModuleList([lib.nn.Linear(2, 2)])(lib.ones(2)))


def test_a_legacy_autograd_function_warns_and_fails_in_torchs_words():
    import warnings

    def run(lib):
        class Legacy(lib.autograd.Function):
            def forward(self, x):
                return x * 2
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            made = Legacy()
        with pytest.raises(RuntimeError) as info:
            made(lib.ones(2, requires_grad=True))
        return [str(w.message).replace("microtorch", "torch") for w in seen], str(info.value)
    (want_warn, want), (got_warn, got) = (run(lib) for lib in LIBS)
    assert len(want_warn) == len(got_warn) == 1 and got_warn[0].startswith(want_warn[0]) and got.startswith(want)


@pytest.mark.parametrize("make", [lambda lib: lib.nn.functional.softmax(1, dim=0),
                                  lambda lib: lib.nn.functional.log_softmax(2.0, 0),
                                  lambda lib: lib.nn.Softmax(dim=1)(1), lambda lib: lib.softmax(1, 0)])
def test_softmax_of_a_number(make):
    same_error(make)  # (F.softmax is x.softmax in torch: an AttributeError; torch.softmax a TypeError)
