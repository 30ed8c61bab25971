"""vmap of the linalg_more, pooling, upsampling, grid_sample, embedding_bag, distance, loss and attention
ops against torch.func.vmap: values, in_dims, and the per-example fallback exactly where torch has no
batching rule (torch warns "There is a performance drop" there, and so does microtorch); then
vmap(grad), vmap(jacrev) (the backward ops batch too) and jvp under vmap."""
import warnings
import zlib

import numpy as np
import pytest
import torch

import microtorch as mt
from microtorch.func import _batching

RNG = np.random.default_rng(13)


def R(*shape):
    return RNG.standard_normal(shape)


def I(high, *shape):  # noqa: E743  (int64 indices)
    return RNG.integers(0, high, shape)


def F(lib):
    return lib.nn.functional


X3, X4, X5 = R(3, 2, 2, 8), R(3, 2, 2, 6, 6), R(3, 2, 2, 4, 4, 4)
G4, G5 = RNG.uniform(-1.1, 1.1, (3, 2, 4, 5, 2)), RNG.uniform(-1.1, 1.1, (3, 2, 3, 3, 2, 3))
Q, K, V = R(3, 2, 2, 4, 5), R(3, 2, 2, 6, 5), R(3, 2, 2, 6, 5)
SIGNS = np.sign(R(3, 5))

# (name, f(lib, *inputs), in_dims, inputs); the inputs are float64 arrays or int64 indices
CASES = [
    ("addmv", lambda L, x, m, v: L.addmv(x, m, v), 0, [R(3, 4), R(3, 4, 2), R(3, 2)]),
    ("addmv x only", lambda L, x, m, v: L.addmv(x, m, v, beta=0.5, alpha=2), (0, None, None), [R(3, 4), R(4, 2), R(2)]),
    ("addmv mat only, beta=0 ignores NaN", lambda L, x, m, v: x.addmv(m, v, beta=0, alpha=-1), (None, 0, None),
     [np.full(4, np.nan), R(3, 4, 2), R(2)]),
    ("addr", lambda L, x, a, b: L.addr(x, a, b, alpha=3), 0, [R(3, 4, 2), R(3, 4), R(3, 2)]),
    ("addr vec2 only", lambda L, x, a, b: L.addr(x, a, b, beta=2), (None, None, 1), [R(4, 2), R(4), R(2, 3)]),
    ("baddbmm", lambda L, x, a, b: L.baddbmm(x, a, b), 0, [R(3, 2, 4, 2), R(3, 2, 4, 5), R(3, 2, 5, 2)]),
    ("baddbmm a only", lambda L, x, a, b: x.baddbmm(a, b, alpha=0.5), (None, 0, None), [R(2, 4, 2), R(3, 2, 4, 5),
                                                                                     R(2, 5, 2)]),
    ("addbmm", lambda L, x, a, b: L.addbmm(x, a, b, beta=0.5), 0, [R(3, 4, 2), R(3, 2, 4, 5), R(3, 2, 5, 2)]),
    ("addbmm b only", lambda L, x, a, b: x.addbmm(a, b), (None, None, 0), [R(4, 2), R(2, 4, 5), R(3, 2, 5, 2)]),
    ("cross", lambda L, a, b: L.cross(a, b, dim=-1), 0, [R(3, 2, 3), R(3, 2, 3)]),
    ("cross dim0 other unbatched", lambda L, a, b: a.cross(b, dim=0), (1, None), [R(3, 3, 2), R(3, 2)]),
    ("diag_embed", lambda L, a: L.diag_embed(a), 0, [R(3, 2, 3)]),
    ("diag_embed dims", lambda L, a: L.diag_embed(a, offset=1, dim1=0, dim2=2), 0, [R(3, 2, 3)]),
    ("diagflat", lambda L, a: L.diagflat(a, -1), 0, [R(3, 2, 3)]),
    ("vdot", lambda L, a, b: L.vdot(a, b), 0, [R(3, 4), R(3, 4)]),
    ("vdot other unbatched", lambda L, a, b: a.vdot(b), (0, None), [R(3, 4), R(4)]),
    ("dist", lambda L, a, b: L.dist(a, b), 0, [R(3, 2, 4), R(3, 2, 4)]),
    ("dist broadcast p3", lambda L, a, b: L.dist(a, b, 3), (0, None), [R(3, 2, 4), R(4)]),
    ("dist inf", lambda L, a, b: a.dist(b, float("inf")), (0, 0), [R(3, 2, 4), R(3, 2, 4)]),
    ("dist 0", lambda L, a, b: L.dist(a, b, 0), (0, None), [R(3, 2, 4), R(2, 4)]),
    ("max_pool3d", lambda L, x: F(L).max_pool3d(x, 2, return_indices=True), 0, [X5]),
    ("avg_pool3d", lambda L, x: F(L).avg_pool3d(x, 2, stride=1, padding=1, count_include_pad=False), 0, [X5]),
    ("adaptive_max_pool1d", lambda L, x: F(L).adaptive_max_pool1d(x, 3, return_indices=True), 0, [X3]),
    ("adaptive_max_pool2d", lambda L, x: F(L).adaptive_max_pool2d(x, (4, 3)), 1, [X4.swapaxes(0, 1)]),
    ("adaptive_max_pool3d", lambda L, x: F(L).adaptive_max_pool3d(x, 3), 0, [X5]),
    ("adaptive_avg_pool3d", lambda L, x: F(L).adaptive_avg_pool3d(x, 3), 0, [X5]),
    ("fractional_max_pool2d", lambda L, x, s: F(L).fractional_max_pool2d(x, 2, output_size=3, _random_samples=s),
     (0, None), [X4, RNG.random((2, 2, 2))]),
    ("max_unpool2d", lambda L, x: F(L).max_unpool2d(*F(L).max_pool2d(x, 2, return_indices=True), 2), 0, [X4]),
    ("max_unpool3d", lambda L, x: F(L).max_unpool3d(*F(L).max_pool3d(x, 2, return_indices=True), 2), 0, [X5]),
    ("nearest", lambda L, x: F(L).interpolate(x, scale_factor=2), 0, [X4]),
    ("nearest-exact 1d", lambda L, x: F(L).interpolate(x, size=5, mode="nearest-exact"), 0, [X3]),
    ("nearest-exact 2d", lambda L, x: F(L).interpolate(x, size=(5, 7), mode="nearest-exact"), 0, [X4]),
    ("nearest-exact 3d", lambda L, x: F(L).interpolate(x, size=(3, 5, 2), mode="nearest-exact"), 0, [X5]),
    ("linear", lambda L, x: F(L).interpolate(x, scale_factor=1.5, mode="linear"), 0, [X3]),
    ("bilinear", lambda L, x: F(L).interpolate(x, size=(5, 9), mode="bilinear", align_corners=True), 0, [X4]),
    ("bicubic", lambda L, x: F(L).interpolate(x, size=(5, 9), mode="bicubic"), 0, [X4]),
    ("trilinear", lambda L, x: F(L).interpolate(x, scale_factor=2, mode="trilinear"), 0, [X5]),
    ("area", lambda L, x: F(L).interpolate(x, size=(3, 4), mode="area"), 0, [X4]),
    ("bilinear antialias", lambda L, x: F(L).interpolate(x, size=(3, 4), mode="bilinear", antialias=True), 0, [X4]),
    ("bicubic antialias", lambda L, x: F(L).interpolate(x, scale_factor=0.6, mode="bicubic", antialias=True,
                                                        align_corners=True), 1, [X4.swapaxes(0, 1)]),
    ("pixel_shuffle", lambda L, x: F(L).pixel_shuffle(x, 2), 0, [R(3, 2, 8, 3, 3)]),
    ("affine_grid", lambda L, t: F(L).affine_grid(t, (2, 1, 4, 5), align_corners=False), 0, [R(3, 2, 2, 3)]),
    ("grid_sample", lambda L, x, g: F(L).grid_sample(x, g, align_corners=False), 0, [X4, G4]),
    ("grid_sample x only", lambda L, x, g: F(L).grid_sample(x, g, padding_mode="reflection", align_corners=True),
     (0, None), [X4, G4[0]]),
    ("grid_sample grid only", lambda L, x, g: F(L).grid_sample(x, g, mode="nearest", padding_mode="border",
                                                                align_corners=False), (None, 0), [X4[0], G4]),
    ("grid_sample 3d", lambda L, x, g: F(L).grid_sample(x, g, align_corners=False), 0, [X5, G5]),
    ("grid_sample bicubic", lambda L, x, g: F(L).grid_sample(x, g, mode="bicubic", padding_mode="reflection",
                                                              align_corners=False), 0, [X4, G4]),
    ("grid_sample bicubic grid only", lambda L, x, g: F(L).grid_sample(x, g, mode="bicubic", align_corners=True),
     (None, 0), [X4[0], G4]),
    ("embedding_bag weight", lambda L, w, i: F(L).embedding_bag(i, w, mode="mean"), (0, None), [R(3, 6, 3), I(6, 2, 3)]),
    ("embedding_bag indices", lambda L, w, i: F(L).embedding_bag(i, w, mode="max"), (None, 0), [R(6, 3), I(6, 3, 2, 3)]),
    ("embedding_bag scale_grad_by_freq", lambda L, w, i: F(L).embedding_bag(i, w, mode="sum", scale_grad_by_freq=True),
     (0, 0), [R(3, 6, 3), I(6, 3, 2, 3)]),
    ("embedding_bag offsets", lambda L, w, i, o: F(L).embedding_bag(i, w, o, mode="sum"), (0, None, None),
     [R(3, 6, 3), I(6, 5), np.array([0, 2])]),
    ("pdist", lambda L, x: F(L).pdist(x, p=1.5), 0, [R(3, 5, 2)]),
    ("F.bilinear", lambda L, a, b, w: F(L).bilinear(a, b, w), (0, 0, None), [R(3, 4, 2), R(3, 4, 3), R(5, 2, 3)]),
    ("conv_tbc", lambda L, x, w, b: F(L).conv_tbc(x, w, b, 1), (0, None, None), [R(3, 6, 2, 3), R(3, 3, 5), R(5)]),
    ("local_response_norm", lambda L, x: F(L).local_response_norm(x, 3), 0, [R(3, 2, 5, 3, 3)]),
    ("soft_margin_loss", lambda L, x, y: F(L).soft_margin_loss(x, y), (0, None), [R(3, 5), SIGNS[0]]),
    ("margin_ranking_loss", lambda L, a, b, y: F(L).margin_ranking_loss(a, b, y, reduction="sum"), 0,
     [R(3, 5), R(3, 5), SIGNS]),
    ("hinge_embedding_loss", lambda L, x, y: F(L).hinge_embedding_loss(x, y), 0, [R(3, 5), SIGNS]),
    ("cosine_embedding_loss", lambda L, a, b, y: F(L).cosine_embedding_loss(a, b, y), 0,
     [R(3, 4, 5), R(3, 4, 5), SIGNS[:, :4]]),
    ("triplet_margin_loss", lambda L, a, b, c: F(L).triplet_margin_loss(a, b, c), 0, [R(3, 4, 5)] * 3),
    ("multi_margin_loss", lambda L, x, t: F(L).multi_margin_loss(x, t, p=2, margin=0.5), 0, [R(3, 4, 5), I(5, 3, 4)]),
    ("multilabel_margin_loss", lambda L, x, t: F(L).multilabel_margin_loss(x, t), (0, None),
     [R(3, 4, 5), np.array([[1, 3, -1, 0, 0]] * 4)]),
    ("multilabel_soft_margin_loss", lambda L, x, y: F(L).multilabel_soft_margin_loss(x, y), 0,
     [R(3, 4, 5), (R(3, 4, 5) > 0).astype(np.float64)]),
    ("ctc_loss", lambda L, lp, t: F(L).ctc_loss(lp.log_softmax(-1), t, [6, 5], [3, 2]), (0, None),
     [R(3, 6, 2, 5), I(4, 2, 3) + 1]),
    ("attention 4-d", lambda L, q, k, v: F(L).scaled_dot_product_attention(q, k, v), 0, [Q, K, V]),
    ("attention 4-d causal, q only", lambda L, q, k, v: F(L).scaled_dot_product_attention(q, k, v, is_causal=True),
     (0, None, None), [Q, K[0], V[0]]),
    ("attention 4-d batched mask", lambda L, q, k, v, m: F(L).scaled_dot_product_attention(q, k, v, attn_mask=m), 0,
     [Q, K, V, R(3, 4, 6)]),
    ("attention 3-d", lambda L, q, k, v: F(L).scaled_dot_product_attention(q, k, v), 0, [Q[:, 0], K[:, 0], V[:, 0]]),
]
IDS = [c[0] for c in CASES]


def _lib_inputs(lib, arrays):
    return [torch.from_numpy(np.array(a)) if lib is torch else mt.tensor(np.array(a)) for a in arrays]


def _vmapped(lib, f, in_dims, arrays, transform=None):
    """lib's vmap of f (or of transform(f)); the result and the ops that fell back to a loop (warnings)"""
    fn = (lambda *a: f(lib, *a)) if transform is None else transform(lib, f)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = lib.func.vmap(fn, in_dims=in_dims)(*_lib_inputs(lib, arrays))
    return out, [str(w.message) for w in caught if "There is a performance drop" in str(w.message)]


def close(ours, theirs, tol=1e-10):
    if isinstance(theirs, (tuple, list)):
        for o, t in zip(ours, theirs, strict=True):
            close(o, t, tol)
        return
    assert tuple(ours.shape) == tuple(theirs.shape), (ours.shape, theirs.shape)
    assert ours.dtype.is_floating_point == theirs.dtype.is_floating_point
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-9, atol=tol)


@pytest.fixture(autouse=True)
def fresh_fallback_warnings(monkeypatch):
    """microtorch warns once per op class and process: each test sees its own first warning"""
    monkeypatch.setattr(_batching, "_warned", set())


# torch composes these of batched ops under a grad transform (no warning there, as in microtorch), but
# outside one it runs its composite kernel per example; microtorch composes them always. And torch loops
# over its _trilinear kernel for bilinear, which microtorch writes as one batched einsum.
TORCH_LOOPS_OUTSIDE_GRAD = {"diagflat", "margin_ranking_loss", "triplet_margin_loss", "F.bilinear"}


@pytest.mark.parametrize("name, f, in_dims, arrays", CASES, ids=IDS)
def test_vmap_as_torch_and_falls_back_exactly_where_torch_does(name, f, in_dims, arrays):
    theirs, their_drops = _vmapped(torch, f, in_dims, arrays)
    ours, our_drops = _vmapped(mt, f, in_dims, arrays)
    close(ours, theirs)
    if name in TORCH_LOOPS_OUTSIDE_GRAD:
        assert their_drops and not our_drops, (our_drops, their_drops)
    else:
        assert bool(our_drops) == bool(their_drops), (our_drops, their_drops)


def _grad_of_first(lib, f):
    """the per-example gradient of sum(f(...)^2) with respect to the first input"""
    def loss(x0, *rest):
        out = f(lib, x0, *rest)
        out = out[0] if isinstance(out, tuple) else out
        return (out * out).sum()
    return lib.func.grad(loss)


# torch cannot take these per-example gradients (its conv_tbc and CTC kernels fail under vmap(grad))
NO_TORCH_GRAD = {"conv_tbc", "ctc_loss"}
GRAD_CASES = [c for c in CASES if c[0] not in NO_TORCH_GRAD and np.asarray(c[3][0]).dtype.kind == "f"]


@pytest.mark.parametrize("name, f, in_dims, arrays", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_vmap_of_grad_as_torch(name, f, in_dims, arrays):
    theirs, their_drops = _vmapped(torch, f, in_dims, arrays, _grad_of_first)
    ours, our_drops = _vmapped(mt, f, in_dims, arrays, _grad_of_first)
    close(ours, theirs, tol=1e-9)
    if not their_drops:
        assert not our_drops, our_drops


JACREV = [
    ("bilinear", lambda L, x: F(L).interpolate(x, size=(3, 4), mode="bilinear"), [R(3, 1, 1, 5, 5)]),
    ("nearest", lambda L, x: F(L).interpolate(x, scale_factor=2), [R(3, 1, 1, 2, 3)]),
    ("nearest-exact", lambda L, x: F(L).interpolate(x, size=(3, 5), mode="nearest-exact"), [R(3, 1, 1, 2, 3)]),
    ("max_pool3d", lambda L, x: F(L).max_pool3d(x, 2), [R(3, 1, 1, 4, 4, 4)]),
    ("adaptive_max_pool2d", lambda L, x: F(L).adaptive_max_pool2d(x, 2), [R(3, 1, 2, 5, 5)]),
    ("grid_sample", lambda L, x, g: F(L).grid_sample(x, g, align_corners=False), [R(3, 1, 1, 5, 5),
                                                                                   R(3, 1, 2, 2, 2)]),
    ("grid_sample bicubic", lambda L, x, g: F(L).grid_sample(x, g, mode="bicubic", align_corners=False),
     [R(3, 1, 1, 4, 4), R(3, 1, 2, 2, 2)]),
    ("bicubic antialias", lambda L, x: F(L).interpolate(x, size=(2, 3), mode="bicubic", antialias=True),
     [R(3, 1, 1, 5, 5)]),
    ("addmv", lambda L, x, m, v: L.addmv(x, m, v), [R(3, 4), R(3, 4, 2), R(3, 2)]),
    ("cross", lambda L, a, b: L.cross(a, b, dim=-1), [R(3, 4, 3), R(3, 4, 3)]),
    ("dist", lambda L, a, b: L.dist(a, b, 3), [R(3, 4, 3), R(3, 4, 3)]),
]


@pytest.mark.parametrize("name, f, arrays", JACREV, ids=[j[0] for j in JACREV])
def test_vmap_of_jacrev_batches_the_backward_ops_as_torch(name, f, arrays):
    """jacrev vmaps the backward over a basis: its ops (TakeFlat, PutFlatAdd, Resample) have rules too, except
    nearest-exact's backward, which torch runs per example too"""
    def jac(lib, fn):
        return lambda x0, *rest: lib.func.jacrev(lambda y: fn(lib, y, *rest))(x0)
    theirs, their_drops = _vmapped(torch, f, 0, arrays, jac)
    ours, our_drops = _vmapped(mt, f, 0, arrays, jac)
    close(ours, theirs)
    assert bool(our_drops) == bool(their_drops) == (name == "nearest-exact"), (our_drops, their_drops)


@pytest.mark.parametrize("name", ["addr", "baddbmm", "diag_embed", "vdot", "dist broadcast p3", "bicubic",
                                  "bilinear antialias"])
def test_jvp_under_vmap_as_torch(name):
    """(torch's grid_sampler has no forward AD to compare with)"""
    _, f, in_dims, arrays = CASES[IDS.index(name)]
    tangent = np.random.default_rng(zlib.crc32(name.encode())).standard_normal(np.shape(arrays[0]))

    def run(lib):
        def one(x0, t0, *rest):
            return lib.func.jvp(lambda y: f(lib, y, *rest), (x0,), (t0,))
        dims = (in_dims,) * (len(arrays) + 1) if isinstance(in_dims, int) else (in_dims[0],) + tuple(in_dims)
        return lib.func.vmap(one, in_dims=dims)(*_lib_inputs(lib, [arrays[0], tangent] + list(arrays[1:])))
    close(run(mt), run(torch))


def test_out_dims_and_nested_vmap_as_torch():
    a, b = R(2, 3, 4, 3), R(2, 3, 4, 3)

    def run(lib):
        inner = lib.func.vmap(lambda x, y: lib.cross(x, y, dim=-1) + lib.dist(x, y), out_dims=1)
        return lib.func.vmap(inner, in_dims=(0, 1))(*_lib_inputs(lib, [a, b.swapaxes(0, 1)]))
    close(run(mt), run(torch))


def test_cross_map_lrn2d_runs_per_example_where_torch_refuses():
    """torch's CrossMapLRN2d is an autograd.Function without vmap support (torch raises); microtorch's is an op
    without a batching rule: it runs once per example, warns, and gives what torch gives example by example"""
    x = R(3, 2, 5, 3, 3)
    with pytest.raises(RuntimeError, match="autograd.Function with functorch transforms"):
        torch.func.vmap(torch.nn.CrossMapLRN2d(3))(torch.tensor(x))
    ours, drops = _vmapped(mt, lambda L, a: L.nn.CrossMapLRN2d(3)(a), 0, [x])
    assert drops and "CrossMapLRN2d" in drops[0]
    close(ours, torch.stack([torch.nn.CrossMapLRN2d(3)(torch.tensor(e)) for e in x]))
