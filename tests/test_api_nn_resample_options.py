"""Three options of torch's resampling and bag ops, against torch 2.13: F.interpolate(antialias=True)
(bilinear, bicubic), F.grid_sample(mode='bicubic') and F.embedding_bag(scale_grad_by_freq=True); and the
corner cases where torch's interpolate kernels take shortcuts that scale_factor does not say.

Each: values, grad_fn names, gradients, second order and vmap (tests/op_oracle.py); forward mode
against torch's where torch has it, else against torch's Jacobian computed in reverse mode; errors.
"""
import warnings

import numpy as np
import pytest
import torch

import microtorch as mt
from op_oracle import check_op, close

R = np.random.default_rng(29)
X = R.standard_normal((2, 3, 9, 7))
GRID = R.uniform(-1.3, 1.3, (2, 4, 3, 2))
W = R.standard_normal((8, 3))


def F(lib):
    return lib.nn.functional


# ---- interpolate(antialias=True) ------------------------------------------------------------------------
AA = []
for _mode in ("bilinear", "bicubic"):
    for _kw in ({"size": (4, 3)}, {"size": (12, 5)}, {"scale_factor": 0.4}, {"scale_factor": (0.5, 1.6)},
                {"scale_factor": 0.45, "recompute_scale_factor": True}):
        for _ac in (False, True):
            AA.append((f"{_mode} {_kw} align_corners={_ac}", _mode, _kw, _ac))


@pytest.mark.parametrize("name, mode, kw, align_corners", AA, ids=[a[0] for a in AA])
def test_interpolate_antialias_as_torch(name, mode, kw, align_corners):
    check_op(lambda lib, x: F(lib).interpolate(x, mode=mode, align_corners=align_corners, antialias=True, **kw), X,
             grad_fn=f"Upsample{mode.capitalize()}2DAaBackward0")


def test_interpolate_antialias_in_float32_and_as_a_module_path():
    x = R.standard_normal((1, 2, 17, 13)).astype(np.float32)
    for mode in ("bilinear", "bicubic"):
        ours = F(mt).interpolate(mt.tensor(x), size=(5, 4), mode=mode, antialias=True)
        theirs = F(torch).interpolate(torch.tensor(x), size=(5, 4), mode=mode, antialias=True)
        assert ours.dtype == mt.float32
        close(ours, theirs, mode, tol=1e-6)


def test_interpolate_antialias_batches_under_vmap_as_torch():
    """torch has a batching rule for the antialiased kernels: no per-example loop, no warning"""
    def f(lib):
        return lambda x: F(lib).interpolate(x, size=(3, 4), mode="bicubic", antialias=True)
    xs = R.standard_normal((3, 2, 1, 8, 9))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = mt.func.vmap(f(mt))(mt.tensor(xs))
        grads = mt.func.vmap(mt.func.grad(lambda x: (f(mt)(x) ** 2).sum()))(mt.tensor(xs))
    close(ours, torch.func.vmap(f(torch))(torch.tensor(xs)), "vmap")
    close(grads, torch.func.vmap(torch.func.grad(lambda x: (f(torch)(x) ** 2).sum()))(torch.tensor(xs)), "vmap grad")


@pytest.mark.parametrize("mode, kw", [("bilinear", {"antialias": True}), ("bicubic", {"antialias": True}),
                                      ("nearest-exact", {}), ("trilinear", {}), ("area", {})])
def test_second_order_nodes_are_named_as_torchs(mode, kw):
    """the backward of a resampling op is its adjoint, an op of its own: <op>BackwardBackward0 in torch"""
    x = R.standard_normal((1, 1, 4, 5, 3) if mode == "trilinear" else (1, 1, 4, 5))
    names = []
    for lib in (torch, mt):
        xt = lib.tensor(x, requires_grad=True)
        y = F(lib).interpolate(xt, size=(3, 2, 2) if mode == "trilinear" else (3, 2), mode=mode, **kw)
        (g,) = lib.autograd.grad(y, xt, lib.ones_like(y, requires_grad=True), create_graph=True)
        names.append((y.grad_fn.name(), g.grad_fn.name()))
    assert names[1] == names[0]


@pytest.mark.parametrize("call", ["F.interpolate(x, size=3, mode='nearest', antialias=True)",
                                  "F.interpolate(x[0], size=3, mode='bilinear', antialias=True)",
                                  "F.interpolate(x[..., None], size=3, mode='bicubic', antialias=True)"])
def test_interpolate_antialias_errors_as_torch(call):
    for lib in (torch, mt):
        with pytest.raises(Exception) as caught:
            eval(call, {"F": F(lib), "x": lib.tensor(X)})
        if lib is torch:
            expected = type(caught.value)
    assert type(caught.value) is expected


# ---- where torch's kernels ignore scale_factor: a dim whose size stays, or (nearest) doubles ----------------
SHORTCUTS = [("nearest 1d stays", (1, 2, 5), dict(scale_factor=1.1, mode="nearest")),
             ("nearest 1d doubles", (1, 2, 5), dict(scale_factor=2.1, mode="nearest")),
             ("nearest 2d", (1, 2, 5, 4), dict(scale_factor=(1.1, 2.05), mode="nearest")),
             ("nearest 3d", (1, 2, 5, 4, 3), dict(scale_factor=(1.1, 2.0, 1.2), mode="nearest")),
             ("nearest-exact", (1, 2, 5, 4), dict(scale_factor=(1.199, 2.1), mode="nearest-exact")),
             ("linear", (1, 2, 5), dict(scale_factor=1.1, mode="linear")),
             ("bilinear", (1, 2, 5, 4), dict(scale_factor=(1.1, 0.6), mode="bilinear")),
             ("trilinear", (1, 2, 5, 4, 3), dict(scale_factor=(1.1, 2.0, 1.2), mode="trilinear")),
             ("bicubic", (1, 2, 5, 4), dict(scale_factor=(1.1, 0.6), mode="bicubic")),
             ("bilinear antialias", (1, 2, 5, 4), dict(scale_factor=(1.1, 0.6), mode="bilinear", antialias=True)),
             ("bicubic antialias", (1, 2, 5, 4), dict(scale_factor=(1.1, 0.6), mode="bicubic", antialias=True))]


@pytest.mark.parametrize("name, shape, kw", SHORTCUTS, ids=[c[0] for c in SHORTCUTS])
def test_interpolate_shortcuts_forward_backward_and_double_backward_as_torch(name, shape, kw):
    """torch's forward and backward kernels do not always agree here (nearest's backward, antialias's forward copy
    a dim whose size stays): microtorch follows each, and the double backward (the forward kernel again)"""
    x = R.standard_normal(shape)
    v = None
    results = []
    for lib in (torch, mt):
        xt = lib.tensor(x, requires_grad=True)
        y = F(lib).interpolate(xt, **kw)
        v = R.standard_normal(tuple(y.shape)) if v is None else v
        vt = lib.tensor(v, requires_grad=True)
        (g,) = lib.autograd.grad(y, xt, vt, create_graph=True)
        (gg,) = lib.autograd.grad((g * lib.tensor(np.arange(g.numel()).reshape(tuple(g.shape)))).sum(), vt)
        results.append((y, g, gg))
    for ours, theirs, what in zip(results[1], results[0], ("value", "grad", "double backward")):
        close(ours, theirs, what)


def test_antialias_to_width_one_follows_torchs_backward_where_its_forward_repeats_a_row():
    """torch 2.13's antialiased forward to an output of width 1 repeats its first row (its own backward is the
    adjoint of the right map); microtorch computes that map, so its Jacobian equals torch's backward's"""
    x = R.standard_normal((1, 1, 9, 5))
    f = {lib: (lambda a, lib=lib: F(lib).interpolate(a, size=(3, 1), mode="bilinear", antialias=True))
         for lib in (torch, mt)}
    theirs = f[torch](torch.tensor(x))
    assert torch.equal(theirs[0, 0, 1], theirs[0, 0, 0])  # (the repeated row; a fixed torch fails here)
    jac = torch.autograd.functional.jacobian(f[torch], torch.tensor(x))
    close(mt.func.jacrev(f[mt])(mt.tensor(x)), jac, "Jacobian")
    close(f[mt](mt.tensor(x)), torch.einsum("abcdefgh,efgh->abcd", jac, torch.tensor(x)), "value")


# ---- grid_sample(mode='bicubic') --------------------------------------------------------------------
BICUBIC = [(p, ac) for p in ("zeros", "border", "reflection") for ac in (False, True)]


@pytest.mark.parametrize("padding_mode, align_corners", BICUBIC, ids=[f"{p} align_corners={a}" for p, a in BICUBIC])
def test_grid_sample_bicubic_as_torch(padding_mode, align_corners):
    """(torch's grid_sampler has no forward mode: the jvp is checked against torch's Jacobian below)"""
    check_op(lambda lib, x, g: F(lib).grid_sample(x, g, "bicubic", padding_mode, align_corners), X[:, :, :5, :6],
             GRID, grad_fn="GridSampler2DBackward0", jvp=False)


@pytest.mark.parametrize("padding_mode", ["zeros", "reflection"])
def test_grid_sample_bicubic_forward_mode_equals_torchs_jacobian(padding_mode):
    x, g = R.standard_normal((1, 2, 4, 5)), R.uniform(-1.2, 1.2, (1, 2, 3, 2))

    def f(lib):
        return lambda a, b: F(lib).grid_sample(a, b, "bicubic", padding_mode, False)
    ours = mt.func.jacfwd(f(mt), argnums=(0, 1))(mt.tensor(x), mt.tensor(g))
    theirs = torch.func.jacrev(f(torch), argnums=(0, 1))(torch.tensor(x), torch.tensor(g))
    for o, t, what in zip(ours, theirs, ("d/dinput", "d/dgrid")):
        close(o, t, what)


def test_grid_sample_bicubic_gradgradcheck():
    x = mt.tensor(R.standard_normal((1, 1, 3, 4)), requires_grad=True)
    g = mt.tensor(R.uniform(-1.2, 1.2, (1, 2, 2, 2)), requires_grad=True)
    assert mt.autograd.gradgradcheck(lambda a, b: F(mt).grid_sample(a, b, "bicubic", "border", True), (x, g))


def test_grid_sample_bicubic_is_for_4d_input_as_torch():
    x, g = R.standard_normal((1, 1, 2, 3, 3)), np.zeros((1, 2, 2, 2, 3))
    with pytest.raises(RuntimeError, match="bicubic interpolation only supports 4D input"):
        F(torch).grid_sample(torch.tensor(x), torch.tensor(g), mode="bicubic", align_corners=False)
    with pytest.raises(RuntimeError, match="bicubic interpolation only supports 4D input"):
        F(mt).grid_sample(mt.tensor(x), mt.tensor(g), mode="bicubic", align_corners=False)


# ---- embedding_bag(scale_grad_by_freq=True) -------------------------------------------------------------
IDX1 = np.array([1, 1, 2, 3, 1, 5, 2, 7])  # 1 three times, 2 twice: torch's counts shift after a repeat
IDX2 = np.array([[1, 1, 2], [3, 1, 5]])
BAGS = [
    ("2-d sum", dict(input=IDX2, mode="sum")),
    ("2-d mean", dict(input=IDX2, mode="mean")),
    ("offsets mean", dict(input=IDX1, offsets=np.array([0, 3, 3, 6]), mode="mean")),
    ("offsets padding_idx", dict(input=IDX1, offsets=np.array([0, 4]), mode="sum", padding_idx=1)),
    ("include_last_offset", dict(input=IDX1, offsets=np.array([0, 2, 5]), mode="mean", include_last_offset=True)),
    ("no repeats", dict(input=np.array([4, 0, 6, 2]), offsets=np.array([0, 1]), mode="sum")),
]


def _bag(lib, w, spec, psw=None):
    kw = {k: lib.tensor(v) if isinstance(v, np.ndarray) else v for k, v in spec.items()}
    return F(lib).embedding_bag(weight=w, scale_grad_by_freq=True, per_sample_weights=psw, **kw)


@pytest.mark.parametrize("name, spec", BAGS, ids=[b[0] for b in BAGS])
def test_embedding_bag_scale_grad_by_freq_as_torch(name, spec):
    """(torch's embedding_bag has no forward mode: the jvp is checked against torch's Jacobian below)"""
    check_op(lambda lib, w: _bag(lib, w, spec), W, grad_fn="EmbeddingBagBackward0", jvp=False)


def test_embedding_bag_scale_grad_by_freq_with_per_sample_weights_as_torch():
    """(torch has no second order through per_sample_weights' gradient)"""
    spec = dict(input=IDX1, offsets=np.array([0, 5]), mode="sum")
    check_op(lambda lib, w, p: _bag(lib, w, spec, p), W, R.standard_normal(len(IDX1)), grad_fn="EmbeddingBagBackward0",
             jvp=False, second_order=False)


def test_embedding_bag_scale_grad_by_freq_leaves_the_forward_derivative_alone():
    """the option scales the gradient only: forward mode gives the op's own Jacobian (torch's jacrev without it)"""
    spec = dict(input=IDX1, offsets=np.array([0, 3]), mode="mean")
    ours = mt.func.jacfwd(lambda w: _bag(mt, w, spec))(mt.tensor(W))
    theirs = torch.func.jacrev(lambda w: F(torch).embedding_bag(torch.tensor(IDX1), w, torch.tensor([0, 3]),
                                                                mode="mean"))(torch.tensor(W))
    close(ours, theirs, "jacfwd")


def test_embedding_bag_module_and_vmap_with_scale_grad_by_freq_as_torch():
    grads = []
    for lib in (torch, mt):
        bag = lib.nn.EmbeddingBag.from_pretrained(lib.tensor(W), freeze=False, mode="sum", scale_grad_by_freq=True)
        bag(lib.tensor(IDX2)).pow(2).sum().backward()
        grads.append(bag.weight.grad)
    close(grads[1], grads[0], "module")
    idx = R.integers(0, 8, (3, 2, 4))  # a batch of 2-d inputs: torch and microtorch loop over it (no rule)

    def per_example(lib):
        loss = lambda w, i: (F(lib).embedding_bag(i, w, mode="mean", scale_grad_by_freq=True) ** 2).sum()  # noqa: E731
        return lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0))(lib.tensor(W), lib.tensor(idx))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        close(per_example(mt), per_example(torch), "vmap(grad)")


def test_embedding_bag_option_errors():
    w, i = mt.tensor(W), mt.tensor(IDX2)
    with pytest.raises(NotImplementedError, match="sparse.*sparse=False"):
        F(mt).embedding_bag(i, w, mode="sum", sparse=True)
    for lib in (torch, mt):
        with pytest.raises(ValueError, match="max mode does not support scaling the gradient by the frequency"):
            F(lib).embedding_bag(lib.tensor(IDX2), lib.tensor(W), mode="max", scale_grad_by_freq=True)
