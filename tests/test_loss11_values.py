"""The pointwise losses' values beside torch 2.13: smooth_l1, huber, mse and l1 to the bit (their elementwise
kernels, then torch's sum and mean in its order of additions); soft_margin, binary_cross_entropy and
binary_cross_entropy_with_logits in torch's steps (log1p(exp(-y x)), which overflows to inf as torch's; (y - 1)
log1p(-p) - y log p; (1 - y) x - log sigmoid(x)), within an ulp or two where torch's vector log1p or the C library's log
differ from numpy's; and their edges (inf, NaN, p at 0 and 1) with their gradients."""
import numpy as np
import pytest
import torch

import microtorch as mt

INF, NAN = np.inf, np.nan
EXACT = ["smooth_l1_loss", "huber_loss", "mse_loss", "l1_loss"]
CLOSE = ["soft_margin_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits"]


def _data(name, n, dtype, rng):
    x = rng.standard_normal(n) * 3
    if name == "binary_cross_entropy":
        x = rng.random(n)
    y = np.sign(rng.standard_normal(n)) if name == "soft_margin_loss" else \
        rng.random(n) if name.startswith("binary") else rng.standard_normal(n)
    return x.astype(dtype), y.astype(dtype)


def _close(mine, theirs, dtype):
    """within two ulps (and as much absolutely, for values near 0)"""
    tol = 4.5e-16 if dtype == "float64" else 2.4e-7
    np.testing.assert_allclose(mine, theirs, rtol=tol, atol=tol)


def _both(name, x, y, reduction, **kw):
    return [getattr(lib.nn.functional, name)(lib.tensor(x), lib.tensor(y), reduction=reduction, **kw).numpy()
            for lib in (mt, torch)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name", EXACT + CLOSE)
def test_values_as_torch(name, reduction, dtype):
    rng = np.random.default_rng(7)
    for n in (1, 7, 100, 1000, 40000):  # (40000: torch's sum splits among threads above 32768)
        x, y = _data(name, n, dtype, rng)
        mine, theirs = _both(name, x, y, reduction)
        if name in EXACT:
            np.testing.assert_array_equal(mine, theirs)
        else:
            _close(mine, theirs, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_bce_with_logits_weights_as_torch(dtype):
    rng = np.random.default_rng(3)
    x, y = _data("binary_cross_entropy_with_logits", 500, dtype, rng)
    w, pw = (rng.random(500).astype(dtype) + 0.5 for _ in range(2))
    mine, theirs = (lib.nn.functional.binary_cross_entropy_with_logits(
        lib.tensor(x), lib.tensor(y), reduction="none", weight=lib.tensor(w), pos_weight=lib.tensor(pw)).numpy()
        for lib in (mt, torch))
    _close(mine, theirs, dtype)


EDGES = {
    "binary_cross_entropy_with_logits": ([INF, -INF, NAN, 0.0, 100.0, -100.0, 1e-30, 50.0],
                                         [1.0, 0.0, 0.5, 1.0, 0.0, 1.0, 0.0, 0.5]),
    "soft_margin_loss": ([INF, -INF, NAN, 0.0, 100.0, -100.0, -1000.0, 50.0],
                         [1.0, -1.0, 1.0, 1.0, -1.0, 1.0, 1.0, -1.0]),
    "binary_cross_entropy": ([0.0, 1.0, 0.5, 1e-45, 1.0, 0.0, 1.0, 0.3], [1.0, 0.0, 0.5, 1.0, 0.0, 1.0, 0.0, 0.0]),
    "huber_loss": ([INF, -INF, NAN, 0.0, 100.0, -100.0, 1e-30, 50.0], [1.0, 0.0, 0.5, 1.0, 0.0, 1.0, 0.0, -1.0]),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("name", list(EDGES))
def test_edges_and_their_gradients_as_torch(name, reduction, dtype):
    out = []
    for lib in (mt, torch):
        x = lib.tensor(EDGES[name][0], dtype=getattr(lib, dtype), requires_grad=True)
        loss = getattr(lib.nn.functional, name)(x, lib.tensor(EDGES[name][1], dtype=getattr(lib, dtype)),
                                                 reduction=reduction)
        loss.sum().backward()
        out.append((loss.detach().numpy(), x.grad.numpy()))
    for a, b in zip(*out):
        np.testing.assert_array_equal(a, b)


LAYOUTS = {
    "flat": lambda rng, dt: (rng.standard_normal(37), rng.standard_normal(37)),
    "rows": lambda rng, dt: (rng.standard_normal((5, 21)), rng.standard_normal((5, 21))),
    "target_broadcast": lambda rng, dt: (rng.standard_normal((6, 19)), rng.standard_normal(19)),
    "input_broadcast": lambda rng, dt: (rng.standard_normal((6, 1)), rng.standard_normal((6, 23))),
    "transposed": lambda rng, dt: (rng.standard_normal((23, 6)).T, rng.standard_normal((23, 6)).T),
    "strided": lambda rng, dt: (rng.standard_normal((6, 46))[:, ::2], rng.standard_normal((6, 23))),
    "threads": lambda rng, dt: (rng.standard_normal(40011), rng.standard_normal(40011)),
}


def _tensor(lib, a, dtype):
    """a tensor with a's values and layout (a transposed or strided array stays a view of one)"""
    if a.flags.c_contiguous:
        return lib.tensor(a.astype(dtype))
    if a.base is not None and a.base.shape == a.shape[::-1]:
        return lib.tensor(a.base.astype(dtype)).t()
    return lib.tensor(a.base.astype(dtype))[:, ::2]


@pytest.mark.filterwarnings("ignore:Using a target size")  # (torch's warning for the broadcast layouts, ours too)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["mean", "none"])
@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("name", ["smooth_l1_loss", "huber_loss"])
def test_gradients_are_torchs_bits_on_every_lane(name, layout, reduction, dtype):
    # torch's loop takes its vector formula on whole 64-byte steps of each row, its scalar one (which rounds
    # otherwise) on each row's tail and on inputs it cannot walk contiguously
    x, y = LAYOUTS[layout](np.random.default_rng(11), dtype)
    kw = {"beta": 0.7} if name == "smooth_l1_loss" else {"delta": 0.7}
    out = []
    for lib in (mt, torch):
        a, b = _tensor(lib, x, dtype).requires_grad_(), _tensor(lib, y, dtype).requires_grad_()
        loss = getattr(lib.nn.functional, name)(a, b, reduction=reduction, **kw)
        loss.backward(lib.ones_like(loss) * 0.37)
        out.append((a.grad.numpy(), b.grad.numpy()))
    for k, (mine, theirs) in enumerate(zip(*out)):  # (a broadcast input's gradient is summed back: in float64
        # in numpy's order, ops/shape.py's sum_to; an ulp)
        if layout != ("input_broadcast", "target_broadcast")[k] or dtype == "float32":
            np.testing.assert_array_equal(mine, theirs)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("p,weighted", [(1, False), (2, False), (1, True), (2, True)])
def test_multi_margin_loss_is_torchs_bits(p, weighted, reduction, dtype):
    # torch's kernel: each row's terms added in turn, then / C; the rows' sum in double; its gradient kernel's
    # 1 / (N C) (or 2 z / (N C)) in the input's dtype
    rng = np.random.default_rng(31)
    x = rng.standard_normal((23, 17)).astype(dtype)
    t = rng.integers(0, 17, 23)
    w = rng.random(17).astype(dtype) + 0.5
    out = []
    for lib in (mt, torch):
        a = lib.tensor(x, requires_grad=True)
        loss = lib.nn.functional.multi_margin_loss(a, lib.tensor(t), p=p, margin=0.7, reduction=reduction,
                                                   weight=lib.tensor(w) if weighted else None)
        loss.backward(lib.ones_like(loss) * 0.37)
        out.append((loss.detach().numpy(), a.grad.numpy()))
    for mine, theirs in zip(*out):
        np.testing.assert_array_equal(mine, theirs)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_multilabel_margin_loss_is_torchs_bits(reduction, dtype):
    # torch's kernel: a row's terms added in turn in double, the row's sum in the input's dtype (/ C there for
    # 'none'), the rows' total in double; its gradient a running sum of 1 / (N C) per margin broken
    rng = np.random.default_rng(41)
    x = rng.standard_normal((13, 11)).astype(dtype)
    t = np.full((13, 11), -1)
    for i in range(13):
        k = int(rng.integers(0, 11))
        t[i, :k] = rng.permutation(11)[:k]
    t[2, :3] = [4, 4, 1]  # (a repeated target class counts twice, as in torch's loop)
    out = []
    for lib in (mt, torch):
        a = lib.tensor(x, requires_grad=True)
        loss = lib.nn.functional.multilabel_margin_loss(a, lib.tensor(t), reduction=reduction)
        loss.backward(lib.ones_like(loss) * 0.37)
        out.append((loss.detach().numpy(), a.grad.numpy()))
    for mine, theirs in zip(*out):
        np.testing.assert_array_equal(mine, theirs)
