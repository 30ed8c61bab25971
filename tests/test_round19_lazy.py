"""Lazy modules (nn.LazyLinear, LazyConv*, LazyConvTranspose*, LazyBatchNorm*, LazyInstanceNorm*) and their
UninitializedParameter / UninitializedBuffer, beside torch.

Dive into Deep Learning builds every model with them: `nn.Sequential(nn.LazyLinear(256), nn.ReLU(), nn.LazyLinear(10))`,
prints `net[0].weight` before and after the first call, and its `apply_init` runs a forward, then `net.apply(init)`.
Each case runs the same program with torch and with microtorch and compares reprs, values (under manual_seed the
initialized weights are torch's), gradients, warnings and errors.
"""
import copy
import pickle
import warnings

import numpy as np
import pytest

import microtorch

torch = pytest.importorskip("torch")

LIBS = {"torch": torch, "mt": microtorch}


def _plain(value):
    """A value both libraries can be compared by: tensors as arrays, reprs with the library's name taken out."""
    if isinstance(value, (torch.Tensor, microtorch.Tensor)):
        return ("tensor", value.detach().numpy().tolist(), str(value.dtype).split(".")[-1])
    if isinstance(value, (torch.Size, microtorch.Size)):
        return ("Size", tuple(value))
    if isinstance(value, (list, tuple)):
        return (list if isinstance(value, list) else tuple)(_plain(v) for v in value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value.replace("microtorch", "torch") if isinstance(value, str) else value
    return _plain(repr(value))  # (dtypes, devices)


def _run(program, lib):
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            result = program(lib)
        return _plain(result), [(w.category.__name__, str(w.message)) for w in seen]
    except Exception as e:
        return "raised", type(e).__name__, str(e)


def _same(program, *, message_words=None, tol=None):
    """program(lib) gives the same result and warnings with both, or raises the same type; message_words: the
    start of torch's message that microtorch's must start with too (default: its first 40 characters). tol: tensors
    compared to that relative tolerance (a matrix product's last bit), everything else exactly."""
    t, m = _run(program, torch), _run(program, microtorch)
    if t[0] == "raised":
        assert m[0] == "raised" and m[1] == t[1], (t, m)
        start = (message_words or t[2][:40]).replace("torch.", "microtorch.")
        assert m[2].startswith(start), (t[2], m[2])
    elif tol is None:
        assert t == m
    else:
        assert _skeleton(t) == _skeleton(m), (t, m)
        for got, want in zip(_arrays(m), _arrays(t)):
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol / 10)
    return t, m


def _skeleton(value):
    """value with each tensor's numbers left out (its dtype and shape kept)."""
    if isinstance(value, tuple) and len(value) == 3 and value[0] == "tensor":
        return ("tensor", np.shape(value[1]), value[2])
    if isinstance(value, (list, tuple)):
        return type(value)(_skeleton(v) for v in value)
    return value


def _arrays(value):
    if isinstance(value, tuple) and len(value) == 3 and value[0] == "tensor":
        yield np.array(value[1], dtype=float)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _arrays(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _arrays(v)


# ---- the classes -------------------------------------------------------------------------------
LAZY = ["LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyConv1d", "LazyConv2d", "LazyConv3d",
        "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyInstanceNorm1d",
        "LazyInstanceNorm2d", "LazyInstanceNorm3d", "LazyLinear"]


def test_names_are_torchs():
    assert sorted(n for n in dir(torch.nn) if n.startswith(("Lazy", "Uninitialized"))) == \
        sorted(n for n in dir(microtorch.nn) if n.startswith(("Lazy", "Uninitialized")))
    assert set(LAZY) <= set(microtorch.nn.__all__) and set(LAZY) <= set(microtorch.nn.modules.__all__)
    assert microtorch.nn.parameter.__all__ == torch.nn.parameter.__all__
    assert microtorch.nn.modules.lazy.__all__ == torch.nn.modules.lazy.__all__
    assert microtorch.nn.parameter.Buffer is microtorch.nn.Buffer
    for name in LAZY:
        mt_cls, t_cls = getattr(microtorch.nn, name), getattr(torch.nn, name)
        assert mt_cls.cls_to_become.__name__ == t_cls.cls_to_become.__name__
        assert issubclass(mt_cls, microtorch.nn.modules.lazy.LazyModuleMixin)
        assert [p for p in _params(mt_cls)] == [p for p in _params(t_cls)], name


def _params(cls):
    import inspect
    return [(p.name, p.default) for p in inspect.signature(cls).parameters.values()]


# (class, constructor arguments, first input's shape, a later input's shape)
CASES = [("LazyLinear", (5,), {}, (3, 7), (2, 4, 7)),
         ("LazyLinear", (4,), {"bias": False}, (3, 6), (1, 6)),
         ("LazyConv1d", (4, 3), {"padding": 1}, (2, 3, 9), (3, 9)),
         ("LazyConv2d", (6, 5), {"padding": 2}, (2, 1, 12, 12), (1, 1, 8, 8)),
         ("LazyConv2d", (4, 3), {"groups": 2, "bias": False, "padding_mode": "reflect", "padding": 1},
          (1, 4, 6, 6), (4, 5, 5)),
         ("LazyConv3d", (2, 2), {"stride": 2}, (1, 3, 4, 4, 4), (3, 4, 4, 4)),
         ("LazyConvTranspose1d", (4, 3), {"stride": 2, "output_padding": 1}, (2, 6, 5), (6, 3)),
         ("LazyConvTranspose2d", (4, 3), {"groups": 2, "dilation": 2}, (2, 6, 5, 5), (1, 6, 3, 3)),
         ("LazyConvTranspose3d", (2, 2), {}, (1, 3, 3, 3, 3), (2, 3, 2, 2, 2)),
         ("LazyBatchNorm1d", (), {}, (8, 3), (5, 3, 4)),
         ("LazyBatchNorm2d", (), {"momentum": None, "bias": False}, (4, 3, 5, 5), (2, 3, 2, 2)),
         ("LazyBatchNorm3d", (), {"affine": False}, (2, 3, 3, 3, 3), (2, 3, 2, 2, 2)),
         ("LazyInstanceNorm1d", (), {}, (2, 3, 6), (1, 3, 5)),
         ("LazyInstanceNorm2d", (), {"track_running_stats": False}, (2, 3, 4, 4), (1, 3, 3, 3)),
         ("LazyInstanceNorm3d", (), {"affine": False, "eps": 1e-3}, (2, 3, 3, 3, 3), (1, 3, 2, 2, 2))]
IDS = [f"{c[0]}-{i}" for i, c in enumerate(CASES)]


def _input(lib, shape, seed=0):
    return lib.tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32), requires_grad=True)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_before_the_first_call(case):
    name, args, kwargs, _, _ = case

    def program(lib):
        m = getattr(lib.nn, name)(*args, **kwargs)  # (torch 2.13 no longer warns here: _run records warnings)
        return (repr(m), m.has_uninitialized_params(), [(n, repr(p)) for n, p in m.named_parameters()],
                [(n, repr(b)) for n, b in m.named_buffers()], [(k, repr(v)) for k, v in m.state_dict().items()],
                type(m).__name__, m.training)
    _same(program)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_first_call_initializes_as_torch(case):
    """Seeded before construction and before the first call: torch's weights, outputs and gradients, and the
    module has become its eager class; a second call with another batch size gives torch's values too."""
    name, args, kwargs, shape, later = case

    def program(lib):
        lib.manual_seed(1)
        m = getattr(lib.nn, name)(*args, **kwargs)
        lib.manual_seed(2)
        x = _input(lib, shape)
        y = m(x)
        params = [(n, p.detach().clone()) for n, p in m.named_parameters()]  # (as initialized: forward keeps them)
        (y * y).sum().backward()
        x2 = _input(lib, later, seed=1)
        y2 = m(x2)
        y2.sum().backward()
        return (repr(m), type(m).__name__, m.has_uninitialized_params() if hasattr(m, "has_uninitialized_params")
                else None, params, y, x.grad, [(n, p.grad) for n, p in m.named_parameters()], y2, x2.grad,
                [(n, b) for n, b in m.named_buffers()], dict(m._forward_pre_hooks))
    t, m = _same(program, tol=1e-4)  # (a convolution's sums in another order: its last bits)
    assert t[0][:4] == m[0][:4]  # repr, class, and the initialized weights exactly


# ---- what an uninitialized parameter allows ------------------------------------------------------
ALLOWED = ["repr(p)", "str(p)", "p.size()", "p.size(0)", "p.dtype", "p.device", "p.requires_grad", "p.grad",
           "p.is_leaf", "p.grad_fn", "p.data", "p.is_floating_point()", "p.is_complex()", "p.float() is p",
           "p.cpu() is p", "p.double()", "type(p.double()).__name__", "isinstance(p, lib.nn.Parameter)",
           "isinstance(p, lib.Tensor)", "lib.nn.parameter.is_lazy(p)", "[p]", "p.ndim",
           "lib.nn.UninitializedParameter(requires_grad=False).requires_grad",
           "lib.nn.UninitializedParameter(dtype=lib.float64).dtype", "repr(lib.nn.UninitializedBuffer())",
           "lib.nn.UninitializedBuffer().requires_grad", "lib.nn.UninitializedBuffer().persistent",
           "repr(lib.nn.UninitializedBuffer().double())", "lib.nn.UninitializedBuffer().double().dtype",
           "copy.deepcopy(lib.nn.UninitializedParameter(dtype=lib.float64)).dtype",
           "p.__reduce_ex__(2)[1]", "type(pickle.loads(pickle.dumps(p))).__name__", "hash(p) == hash(p)"]
REFUSED = ["p.shape", "p + 1", "2 * p", "p * p", "p.numel()", "p.nelement()", "p.dim()", "len(p)", "p.sum()",
           "p.mean()", "p.exp()", "p[0]", "p == 1", "bool(p)", "p.tolist()", "p.item()", "p.detach()", "p.clone()",
           "p.zero_()", "p.requires_grad_(False)", "p.view(-1)", "lib.matmul(p, p)", "lib.cat([p, p])",
           "lib.add(p, 1)", "lib.nn.functional.linear(lib.ones(2), p)", "lib.nn.init.normal_(p)",
           "lib.nn.init.kaiming_uniform_(p)", "p.share_memory_()", "format(p)", "lib.nn.Parameter(p)",
           "sum(q.numel() for q in lib.nn.LazyLinear(3).parameters())", "lib.nn.LazyLinear(3).requires_grad_(False)",
           "lib.nn.LazyLinear(3).apply(lambda m: lib.nn.init.zeros_(m.weight))"]


@pytest.mark.parametrize("expr", ALLOWED)
def test_what_an_uninitialized_parameter_allows(expr):
    _same(lambda lib: eval(expr, {"lib": lib, "p": lib.nn.UninitializedParameter(), "copy": copy,
                                  "pickle": pickle}))


@pytest.mark.parametrize("expr", REFUSED)
def test_what_an_uninitialized_parameter_refuses(expr):
    """torch's exception type, and a message that names the op and the way out (call forward first)."""
    def program(lib):
        return eval(expr, {"lib": lib, "p": lib.nn.UninitializedParameter()})
    t, m = _run(program, torch), _run(program, microtorch)
    assert t[0] == m[0] == "raised" and t[1] == m[1], (t, m)
    if t[1] == "ValueError":
        assert m[2].startswith("Attempted to use an uninitialized parameter in `"), m[2]
        assert "Call `forward` with a dummy batch to initialize the parameters" in m[2]
    else:
        assert m[2] == t[2], (t, m)


def test_materialize():
    def program(lib):
        p, b = lib.nn.UninitializedParameter(), lib.nn.UninitializedBuffer(persistent=False)
        p.materialize((2, 3))
        b.materialize(4, dtype=lib.float64)
        return type(p).__name__, tuple(p.shape), p.requires_grad, p.is_leaf, type(b).__name__, tuple(b.shape), \
            b.dtype, b.persistent
    _same(program)
    _same(lambda lib: lib.nn.UninitializedParameter().materialize((-1,)), message_words="Trying to create tensor "
          "with negative dimension")


# ---- a lazy module's life ------------------------------------------------------------------------
def test_sequential_of_lazy_modules_d2l_lazy_initialization():
    """d2l's "Lazy Initialization" section."""
    def program(lib):
        net = lib.nn.Sequential(lib.nn.LazyLinear(256), lib.nn.ReLU(), lib.nn.LazyLinear(10))
        before = (repr(net), repr(net[0].weight), str(net[0].weight))
        lib.manual_seed(0)
        X = lib.rand(2, 20)
        y = net(X)
        return before, repr(net), tuple(net[0].weight.shape), [type(m).__name__ for m in net], y, \
            [(n, tuple(p.shape)) for n, p in net.named_parameters()]
    _same(program, tol=1e-6)


def test_optimizer_built_before_the_first_call():
    def program(lib):
        lib.manual_seed(0)
        m = lib.nn.LazyLinear(3)
        opt = lib.optim.Adam(m.parameters(), lr=0.1)
        for _ in range(2):
            opt.zero_grad()
            m(lib.ones(2, 5)).pow(2).sum().backward()
            opt.step()
        return opt.param_groups[0]["params"][0] is m.weight, m.weight, m.bias, len(opt.state)
    t, _ = _same(program, tol=1e-5)
    assert t[0][0] is True


def test_state_dict_into_a_lazy_module_materializes():
    def program(lib):
        lib.manual_seed(0)
        src = lib.nn.Sequential(lib.nn.Linear(5, 3), lib.nn.BatchNorm1d(3), lib.nn.Conv1d(3, 2, 1))
        dst = lib.nn.Sequential(lib.nn.LazyLinear(3), lib.nn.LazyBatchNorm1d(), lib.nn.LazyConv1d(2, 1))
        keys = dst.load_state_dict(src.state_dict())
        loaded = (repr(keys), repr(dst), dst[0].has_uninitialized_params(), type(dst[0].weight).__name__,
                  type(dst[1].running_mean).__name__, dst.state_dict())
        y = dst[0](lib.ones(2, 5))  # (in_features was 0: the first call reads it from the weight)
        return loaded, repr(dst[0]), y
    _same(program)


def test_loading_into_lazy_and_from_lazy():
    _same(lambda lib: repr(lib.nn.LazyLinear(3).load_state_dict(lib.nn.LazyLinear(3).state_dict())))
    _same(lambda lib: lib.nn.Linear(5, 3).load_state_dict(lib.nn.LazyLinear(3).state_dict()),
          message_words="Can't access the shape of an uninitialized parameter")

    def wrong_width(lib):
        m = lib.nn.LazyLinear(3)
        m.load_state_dict(lib.nn.Linear(5, 3).state_dict())
        return m(lib.ones(2, 4))
    _same(wrong_width)


def test_state_dict_keep_vars_and_buffers():
    _same(lambda lib: [(k, repr(v)) for k, v in lib.nn.LazyLinear(2).state_dict(keep_vars=True).items()])
    _same(lambda lib: [(k, repr(v)) for k, v in lib.nn.LazyBatchNorm2d().state_dict().items()])

    def after(lib):
        m = lib.nn.LazyBatchNorm2d()
        m(_input(lib, (2, 3, 2, 2)))
        return [(k, type(v).__name__, v.requires_grad) for k, v in m.state_dict().items()]
    _same(after)


def test_initialize_parameters_by_hand():
    def program(lib):
        lib.manual_seed(3)
        m = lib.nn.LazyLinear(3)
        m.initialize_parameters(lib.ones(2, 7))
        by_hand = (repr(m), type(m).__name__, m.weight, m.has_uninitialized_params(), len(m._forward_pre_hooks))
        m.initialize_parameters(lib.ones(2, 7))  # (nothing left to do)
        y = m(lib.ones(1, 7))
        return by_hand, repr(m), type(m).__name__, y, hasattr(m, "_initialize_hook")
    _same(program, tol=1e-6)


def test_apply_after_the_first_call_d2l_apply_init():
    """d2l's `apply_init`: a forward with a dummy batch, then net.apply(init) on the now eager layers."""
    def program(lib):
        nn = lib.nn

        def init_cnn(module):  # d2l.init_cnn
            if type(module) == nn.Linear or type(module) == nn.Conv2d:
                nn.init.xavier_uniform_(module.weight)
        lib.manual_seed(0)
        net = nn.Sequential(nn.LazyConv2d(4, kernel_size=3), nn.ReLU(), nn.Flatten(), nn.LazyLinear(2))
        net(lib.zeros(1, 1, 6, 6))
        lib.manual_seed(1)
        net.apply(init_cnn)
        return repr(net), net[0].weight, net[3].weight, net[3].bias
    _same(program)


def test_double_before_the_first_call():
    def program(lib):
        net = lib.nn.Sequential(lib.nn.LazyLinear(4), lib.nn.LazyBatchNorm1d()).double()
        before = [(n, repr(p), p.dtype) for n, p in net.named_parameters()] + \
            [(n, repr(b), b.dtype) for n, b in net.named_buffers()]
        y = net(lib.ones(3, 2, dtype=lib.float64))
        return before, y.dtype, [(n, p.dtype) for n, p in net.state_dict().items()]
    _same(program)


def test_deepcopy_and_pickle_of_a_lazy_module():
    def program(lib):
        lib.manual_seed(0)
        m = lib.nn.LazyLinear(3)
        twin, thawed = copy.deepcopy(m), pickle.loads(pickle.dumps(m))
        y = twin(lib.ones(1, 4))
        return repr(m), type(m).__name__, m.has_uninitialized_params(), repr(twin), y, repr(thawed), \
            repr(thawed.weight), thawed(lib.ones(1, 2)).shape
    _same(program, tol=1e-6)


def test_instance_norm_lazy_defaults_and_unbatched_quirk():
    """torch's LazyInstanceNorm defaults to affine=True, track_running_stats=True (InstanceNorm to False), and
    reads num_features from dim 1 even of an unbatched input."""
    _same(lambda lib: repr(lib.nn.LazyInstanceNorm1d()))
    _same(lambda lib: lib.nn.LazyInstanceNorm1d()(lib.ones(3, 5)))

    def not_affine(lib):
        m = lib.nn.LazyInstanceNorm1d(affine=False, track_running_stats=False)
        return m.has_uninitialized_params(), m(_input(lib, (2, 3, 5))).shape, repr(m)
    _same(not_affine)


def test_bad_first_inputs():
    _same(lambda lib: lib.nn.LazyConv2d(4, 3, groups=2)(lib.ones(1, 3, 8, 8)))
    _same(lambda lib: lib.nn.LazyConv2d(4, 3)(lib.ones(8, 8)), message_words="Expected 3D (unbatched) or 4D")
    _same(lambda lib: lib.nn.LazyLinear(3)(lib.ones(2, 4, dtype=lib.float64)),
          message_words="mat1 and mat2 must have the same dtype")
    _same(lambda lib: lib.nn.LazyBatchNorm2d()(lib.ones(4, 3)))
    t, m = _run(lambda lib: lib.nn.LazyLinear(3)(lib.tensor(1.0)), torch), \
        _run(lambda lib: lib.nn.LazyLinear(3)(lib.tensor(1.0)), microtorch)
    assert t[1] == m[1] == "IndexError" and "0-d" in m[2]
    t, m = _run(lambda lib: lib.nn.LazyBatchNorm1d()(lib.ones(4)), torch), \
        _run(lambda lib: lib.nn.LazyBatchNorm1d()(lib.ones(4)), microtorch)
    assert t[1] == m[1] == "IndexError" and "(N, C, ...)" in m[2]

    def second_call(lib):
        m = lib.nn.LazyLinear(3)
        m(lib.ones(2, 5))
        return m(lib.ones(2, 4))
    _same(second_call, message_words="mat1 and mat2 shapes cannot be multiplied (2x4 and 5x3)")


def test_custom_lazy_modules():
    def program(lib, define_init, materialize):
        class Scale(lib.nn.modules.lazy.LazyModuleMixin, lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = lib.nn.UninitializedParameter()

            def forward(self, x):
                return x * self.w
        if define_init:
            def initialize_parameters(self, x):
                if materialize:
                    self.w.materialize(x.shape)
                    lib.nn.init.ones_(self.w)
            Scale.initialize_parameters = initialize_parameters
        m = Scale()
        return m(lib.full((2,), 3.0)), repr(m), type(m).__name__
    _same(lambda lib: program(lib, False, False))
    _same(lambda lib: program(lib, True, False))
    _same(lambda lib: program(lib, True, True))
    _same(lambda lib: lib.nn.LazyLinear(2)._replicate_for_data_parallel())
    _same(lambda lib: lib.nn.modules.lazy.LazyModuleMixin.initialize_parameters(lib.nn.Linear(2, 2)))


def test_d2l_lenet_with_lazy_layers():
    """d2l's LeNet (chapter 7.6), its layer_summary, apply_init with init_cnn, and a training step, in both."""
    def program(lib):
        nn = lib.nn
        lib.manual_seed(0)
        net = nn.Sequential(
            nn.LazyConv2d(6, kernel_size=5, padding=2), nn.Sigmoid(), nn.AvgPool2d(kernel_size=2, stride=2),
            nn.LazyConv2d(16, kernel_size=5), nn.Sigmoid(), nn.AvgPool2d(kernel_size=2, stride=2),
            nn.Flatten(), nn.LazyLinear(120), nn.Sigmoid(), nn.LazyLinear(84), nn.Sigmoid(), nn.LazyLinear(10))
        summary, X = [], lib.randn(1, 1, 28, 28)
        for layer in net:  # d2l's layer_summary
            X = layer(X)
            summary.append(f"{layer.__class__.__name__} output shape:\t{tuple(X.shape)}")

        def init_cnn(module):
            if type(module) == nn.Linear or type(module) == nn.Conv2d:
                nn.init.xavier_uniform_(module.weight)
        net.apply(init_cnn)
        opt = lib.optim.SGD(net.parameters(), lr=0.1)
        X, y = lib.randn(4, 1, 28, 28), lib.tensor([0, 1, 2, 3])
        losses = []
        for _ in range(2):
            loss = nn.functional.cross_entropy(net(X), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return summary, repr(net), lib.tensor(losses), net[0].weight, net[-1].bias
    t, m = _same(program, tol=1e-4)
    assert t[0][:2] == m[0][:2], (t, m)  # the layer summary and the model's repr exactly


def test_d2l_batch_norm_mlp():
    """d2l's BNLeNet-style stack of LazyBatchNorm layers, trained one step in train mode, then evaluated."""
    def program(lib):
        nn = lib.nn
        lib.manual_seed(0)
        net = nn.Sequential(nn.LazyConv2d(3, kernel_size=3), nn.LazyBatchNorm2d(), nn.Sigmoid(), nn.Flatten(),
                            nn.LazyLinear(8), nn.LazyBatchNorm1d(), nn.Sigmoid(), nn.LazyLinear(2))
        X = lib.randn(4, 1, 6, 6)
        loss = net(X).pow(2).mean()
        loss.backward()
        net.eval()
        return repr(net), net(X), net[1].running_mean, net[5].running_var, net[5].num_batches_tracked, \
            net[4].weight.grad
    _same(program, tol=1e-4)


def test_lazy_batch_norm_loaded_from_a_state_dict_runs():
    """torch loads the running statistics and keeps num_features 0; the first call then runs (the module checks no
    channel count of its own: batch_norm checks its tensors')."""
    def program(lib):
        lib.manual_seed(0)
        src = lib.nn.BatchNorm2d(3)
        with lib.no_grad():
            src.running_mean += 1
            src.weight.mul_(2)
        lazy = lib.nn.LazyBatchNorm2d()
        lazy.load_state_dict(src.state_dict())
        y = lazy(lib.arange(96.).reshape(2, 3, 4, 4))
        return type(lazy).__name__, repr(lazy), y.detach(), lazy.running_mean
    _same(program, tol=1e-6)


@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("track", [True, False])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_given_another_channel_count(affine, track, training):
    """torch's error names the tensor that does not fit (running_mean first, then weight); with neither, it runs."""
    def program(lib):
        bn = lib.nn.BatchNorm2d(3, affine=affine, track_running_stats=track).train(training)
        return bn(lib.ones(2, 4, 3, 3)).shape
    _same(program)
