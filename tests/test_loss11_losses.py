"""The pointwise losses' backward beside torch 2.13, where the last round left them: mse_loss and
binary_cross_entropy differentiate through one node (MseLossBackwardBackward0, BinaryCrossEntropyBackwardBackward0)
whose own derivatives are torch's double-backward formulas (their nodes and values, in the input, the target and
the incoming gradient); l1_loss stays composed, as torch composes it; huber_loss and smooth_l1_loss at inf and NaN
inputs, targets and gradients, first, second and third order; and the forward-mode rules, which are torch's
backward formulas of each tangent (0 * inf is NaN there)."""
import numpy as np
import pytest
import torch

import microtorch as mt
from op_oracle import graph_names

INF, NAN = np.inf, np.nan
X = np.array([[0.3, -0.7, 1.2], [0.9, 0.1, -1.5]])
Y = np.array([[0.5, 0.2, -1.0], [1.0, 0.0, -0.2]])
P = np.array([[0.3, 0.7, 1e-13], [0.9, 0.0, 1.0]])  # (probabilities, with the ends and a value below the clamp)
Q = np.array([[0.5, 0.2, 1.0], [0.25, 0.0, 0.6]])
XI = np.array([[INF, -INF, INF, 0.3], [2.0, NAN, 0.5, 0.7]])
YI = np.array([[0.2, 1.0, INF, INF], [-INF, 0.1, 0.5, 0.0]])
LOSSES = {
    "mse": (lambda F, x, y, r: F.mse_loss(x, y, reduction=r), X, Y),
    "l1": (lambda F, x, y, r: F.l1_loss(x, y, reduction=r), X, Y),
    "bce": (lambda F, x, y, r: F.binary_cross_entropy(x, y, reduction=r), P, Q),
    "bce_weight": (lambda F, x, y, r: F.binary_cross_entropy(x, y, weight=_weight(x), reduction=r), P, Q),
    "huber_inf": (lambda F, x, y, r: F.huber_loss(x, y, reduction=r, delta=0.7), XI, YI),
    "smooth_l1_inf": (lambda F, x, y, r: F.smooth_l1_loss(x, y, reduction=r, beta=0.7), XI, YI),
    "mse_inf": (lambda F, x, y, r: F.mse_loss(x, y, reduction=r), XI, YI),
}


def _weight(x):
    lib = mt if isinstance(x, mt.Tensor) else torch
    return lib.tensor(np.linspace(0.5, 2.0, x.numel()).reshape(tuple(x.shape)), dtype=x.dtype)




def _arrays(ts):
    return [None if t is None else t.detach().numpy(force=True).copy() for t in ts]


def _orders(lib, name, reduction, dtype, gval=1.5):
    """the loss, its gradient in x and y for an incoming gradient v (which requires grad), the gradients of
    (gx u) and (gy u) in x, y and v, and the nodes of every one of them"""
    f, xs, ys = LOSSES[name]
    d = getattr(lib, dtype)
    x, y = lib.tensor(xs, dtype=d, requires_grad=True), lib.tensor(ys, dtype=d, requires_grad=True)
    loss = f(lib.nn.functional, x, y, reduction)
    v = lib.full(tuple(loss.shape), gval, dtype=d, requires_grad=True)
    grads = lib.autograd.grad(loss, (x, y), v, create_graph=True)
    u = lib.tensor(np.linspace(-1, 1, xs.size).reshape(xs.shape), dtype=d)
    out = {"loss": _arrays([loss]), "first": _arrays(grads),
           "names": [graph_names(loss)] + [graph_names(g) for g in grads]}
    for k, g in enumerate(grads):
        second = lib.autograd.grad(g, (x, y, v), u, allow_unused=True, create_graph=True)
        out[f"second{k}"] = _arrays(second)
        out[f"names{k}"] = [graph_names(s) for s in second]
    return out


def _same_values(a, b, rtol):
    for p, q in zip(a, b):
        assert (p is None) == (q is None)
        if p is not None:
            np.testing.assert_allclose(p, q, rtol=rtol, atol=0)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name", list(LOSSES))
def test_nodes_and_values_to_the_third_order_as_torch(name, reduction, dtype):
    mine, theirs = _orders(mt, name, reduction, dtype), _orders(torch, name, reduction, dtype)
    known_third = name.startswith("bce") and dtype  # torch's in-place mul_ keeps a clone (CloneBackward0) for the
    # target's third order: microtorch's in-place ops do not record one (ops/inplace.py, another row's)
    for key in ("names", "names0", "names1"):
        if key == "names1" and known_third:
            continue
        assert mine[key] == theirs[key], key
    # (float64: a few ulps, the order in which the 0-d gradient of v is summed back; float32: torch's logit in
    # the target's gradient, which ops/pointwise.py computes to 2e-7)
    rtol = 2e-15 if dtype == "float64" else 4e-7
    for key in ("loss", "first", "second0", "second1"):
        _same_values(mine[key], theirs[key], rtol)


@pytest.mark.parametrize("name", ["mse", "bce", "bce_weight"])
def test_the_gradient_is_one_node_with_torchs_edges_and_saved_tensors(name):
    seen = []
    for lib in (mt, torch):
        f, xs, ys = LOSSES[name]
        x, y = lib.tensor(xs, requires_grad=True), lib.tensor(ys, requires_grad=True)
        loss = f(lib.nn.functional, x, y, "mean")
        gx, gy = lib.autograd.grad(loss, (x, y), create_graph=True)
        node = gx.grad_fn
        saved = [node._saved_self, node._saved_target, node._saved_grad_output]
        seen.append((node.name(), len(node.next_functions), [n is None for n, _ in node.next_functions],
                     [s.detach().numpy().tolist() for s in saved], graph_names(gy)))
    assert seen[0] == seen[1]


@pytest.mark.parametrize("p", [0.0, 1.0, 1e-13, 1 - 1e-13, 1e-12, 2e-12])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_bce_first_order_at_the_clamp_as_torchs_kernel(p, dtype):
    # torch's kernel floors p (1 - p) at 1e-12 rounded to a float, whatever the dtype
    out = []
    for lib in (mt, torch):
        x = lib.tensor([p, 0.5], dtype=getattr(lib, dtype), requires_grad=True)
        y = lib.tensor([0.7, 0.2], dtype=getattr(lib, dtype), requires_grad=True)
        lib.nn.functional.binary_cross_entropy(x, y, reduction="sum").backward()
        out.append((x.grad.numpy(), y.grad.numpy()))
    np.testing.assert_array_equal(out[0][0], out[1][0])
    np.testing.assert_allclose(out[0][1], out[1][1], rtol=4e-7)


def test_binary_cross_entropy_refuses_a_weight_that_requires_grad():
    for lib in (mt, torch):
        w = lib.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="not differentiable with respect to argument 'weight'"):
            lib.nn.functional.binary_cross_entropy(lib.full((3,), 0.5), lib.full((3,), 0.2), weight=w)


FORWARD = {
    "mse_loss": (XI, YI), "huber_loss": (XI, YI), "smooth_l1_loss": (XI, YI),
    "binary_cross_entropy": (P, Q),
}


@pytest.mark.parametrize("tangents", ["x", "y", "xy"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name", list(FORWARD))
def test_forward_mode_is_torchs_formula_of_each_tangent(name, reduction, tangents):
    xs, ys = FORWARD[name]
    out = []
    for lib in (mt, torch):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            x, y = lib.tensor(xs), lib.tensor(ys)
            if "x" in tangents:
                x = fw.make_dual(x, lib.tensor(np.linspace(-1, 1, xs.size).reshape(xs.shape)))
            if "y" in tangents:
                y = fw.make_dual(y, lib.tensor(np.linspace(0.5, 2, xs.size).reshape(xs.shape)))
            loss = getattr(lib.nn.functional, name)(x, y, reduction=reduction)
            out.append(fw.unpack_dual(loss).tangent.numpy())
    np.testing.assert_allclose(out[0], out[1], rtol=2e-16, atol=0)


SAVED = {"mse_loss": {}, "smooth_l1_loss": {"beta": 0.5}, "huber_loss": {"delta": 0.7}, "soft_margin_loss": {},
         "binary_cross_entropy": {}, "binary_cross_entropy_with_logits": {}}


def _saved(node):
    out = []
    for name in sorted(a for a in dir(node) if a.startswith("_saved_") and a not in ("_saved_names", "_saved_values")):
        v = getattr(node, name)
        out.append((name, tuple(v.shape) if hasattr(v, "shape") else v))
    return out


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name", list(SAVED))
def test_nodes_show_torchs_saved_attributes(name, reduction):
    seen = []
    for lib in (mt, torch):
        x = lib.tensor([0.2, 0.7, 0.4], requires_grad=True)
        y = lib.tensor([1.0, -1.0, 1.0] if "margin" in name else [0.3, 0.9, 0.5], requires_grad="margin" not in name)
        loss = getattr(lib.nn.functional, name)(x, y, reduction=reduction, **SAVED[name])
        (gx,) = lib.autograd.grad(loss.sum(), x, create_graph=True)
        seen.append((_saved(loss.grad_fn), _saved(gx.grad_fn)))
    assert seen[0] == seen[1]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("pos_weight,weight", [(False, False), (True, False), (False, True), (True, True)])
def test_bce_with_logits_gradient_graph_as_torch(pos_weight, weight, reduction):
    # torch's binary_cross_entropy_with_logits_backward: t.add(1) (AddBackward1), the count's div_ (DivBackward1)
    seen = []
    for lib in (mt, torch):
        x = lib.tensor([0.2, -0.7, 1.4], requires_grad=True)
        y = lib.tensor([0.3, 0.9, 0.5], requires_grad=True)
        kw = {"pos_weight": lib.tensor([1.5, 0.5, 2.0])} if pos_weight else {}
        kw.update({"weight": lib.tensor([0.5, 1.0, 2.0])} if weight else {})
        loss = lib.nn.functional.binary_cross_entropy_with_logits(x, y, reduction=reduction, **kw)
        grads = lib.autograd.grad(loss, (x, y), lib.ones_like(loss), create_graph=True)
        seen.append(([graph_names(g) for g in grads], [g.detach().numpy().tolist() for g in grads]))
    assert seen[0] == seen[1]


CS_X = np.array([[0.3, -1.2, 0.5, 2.0], [0.0, 0.0, 0.0, 0.0], [1e-9, 0.0, 0.0, 0.0], [1e-11, -2e-11, 0.0, 3e-11]])
CS_Y = np.array([[1.0, 0.5, -0.25, 0.75], [0.2, 0.1, 0.3, 0.4], [1.0, 1.0, 1.0, 1.0], [0.5, -1.0, 2.0, 0.1]])


@pytest.mark.parametrize("eps", [1e-8, 1e-3])
def test_cosine_similarity_clamps_its_norms_outside_the_graph_as_torch(eps):
    # torch clones each norm and clamps the clone in place under no_grad: CloneBackward0, and a gradient that
    # flows as if unclamped (huge where a row is near 0); forward mode sees the clamp
    seen = []
    for lib in (mt, torch):
        x, y = lib.tensor(CS_X, requires_grad=True), lib.tensor(CS_Y, requires_grad=True)
        c = lib.nn.functional.cosine_similarity(x, y, dim=1, eps=eps)
        (gx,) = lib.autograd.grad(c.sum(), x)
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(lib.tensor(CS_X), lib.tensor(np.ones_like(CS_X)))
            t = fw.unpack_dual(lib.nn.functional.cosine_similarity(d, lib.tensor(CS_Y), dim=1, eps=eps)).tangent
        seen.append((graph_names(c), c.detach().numpy(), gx.numpy(), t.numpy()))
    assert seen[0][0] == seen[1][0]
    for a, b in zip(seen[0][1:], seen[1][1:]):
        np.testing.assert_allclose(a, b, rtol=1e-15)


def test_cosine_similarity_under_vmap_of_grad():
    out = []
    for lib in (mt, torch):
        f = lambda a, b: lib.nn.functional.cosine_similarity(a, b, dim=0).sum()  # noqa: E731
        out.append(lib.func.vmap(lib.func.grad(f))(lib.tensor(CS_X), lib.tensor(CS_Y)).numpy())
    np.testing.assert_allclose(out[0], out[1], rtol=1e-15)


def test_cosine_embedding_loss_epsilon_is_torchs_float():
    # torch adds EPSILON, a float constant (1e-12 rounded to float), to the squared magnitudes
    out = [lib.nn.functional.cosine_embedding_loss(lib.tensor(CS_X), lib.tensor(CS_Y), lib.tensor([1.0, -1, 1, 1]),
                                                   reduction="none").numpy() for lib in (mt, torch)]
    np.testing.assert_array_equal(out[0], out[1])


@pytest.mark.parametrize("name", ["mse_loss", "huber_loss", "smooth_l1_loss", "soft_margin_loss",
                                  "binary_cross_entropy", "binary_cross_entropy_with_logits", "l1_loss"])
def test_the_mean_of_no_elements_differentiates_as_torch(name):
    # (torch's factor 1/numel is a double division: inf, times no element; a Python division raised)
    seen = []
    for lib in (mt, torch):
        x = lib.zeros(0, 3, requires_grad=True)
        y = lib.zeros(0, 3, requires_grad=name != "soft_margin_loss")
        loss = getattr(lib.nn.functional, name)(x, y)
        (g,) = lib.autograd.grad(loss, x, create_graph=True)
        seen.append((str(loss.item()), tuple(g.shape), g.grad_fn.name()))
    assert seen[0] == seen[1]


@pytest.mark.parametrize("dtype", ["int64", "bool", "complex64"])
def test_huber_loss_has_no_kernel_for_these_dtypes_as_torch(dtype):
    for lib in (mt, torch):
        x = lib.ones(3, dtype=getattr(lib, dtype))
        with pytest.raises(NotImplementedError, match="not implemented for"):
            lib.nn.functional.huber_loss(x, x)


DTYPE_CASES = [("soft_margin_loss", "int64"), ("soft_margin_loss", "bool"), ("binary_cross_entropy", "int64"),
               ("binary_cross_entropy", "complex64"), ("binary_cross_entropy_with_logits", "int64"),
               ("binary_cross_entropy_with_logits", "complex64"), ("kl_div", "int64"), ("kl_div", "complex64"),
               ("hinge_embedding_loss", "bool"), ("hinge_embedding_loss", "complex64"),
               ("cosine_similarity", "complex64")]


@pytest.mark.filterwarnings("ignore:reduction")
@pytest.mark.parametrize("name,dtype", DTYPE_CASES)
def test_the_losses_refuse_dtypes_as_torch(name, dtype):
    seen = []
    for lib in (mt, torch):
        x = lib.ones(2, 3, dtype=getattr(lib, dtype))
        with pytest.raises((RuntimeError, NotImplementedError)) as info:
            getattr(lib.nn.functional, name)(x, x)
        seen.append((info.type, str(info.value)))
    assert seen[0][0] == seen[1][0]
    assert seen[1][1][:24] in seen[0][1]  # (torch's words, ours saying more after them)


@pytest.mark.parametrize("call", [
    lambda L, x: L.polar(x, x),
    lambda L, x: L.nn.functional.multi_margin_loss(x, L.zeros(2, dtype=L.long)),
    lambda L, x: L.nn.functional.multilabel_margin_loss(x, L.zeros(2, 3, dtype=L.long)),
])
def test_no_half_kernel_as_torch(call):
    seen = []
    for lib in (mt, torch):
        with pytest.raises(NotImplementedError) as info:
            call(lib, lib.ones(2, 3, dtype=lib.float16))
        seen.append(str(info.value))
    assert seen[1] in seen[0]
