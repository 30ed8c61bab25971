"""The losses and distances of torch's top-level namespace (torch.kl_div, torch.cdist...) against torch
2.13 with tests/op_oracle.py: values, grad_fn names, gradients, second order, forward mode and vmap where
torch has them; ATen's signatures (an int reduction); errors of torch's type and text."""
import numpy as np
import pytest
import torch

import microtorch as mt
from op_oracle import check_op

R = np.random.default_rng(7)
A, B, C = (R.standard_normal((4, 3)) for _ in range(3))
SIGN = np.sign(R.standard_normal((4, 3)))
ROW_SIGN = np.array([1.0, -1.0, 1.0, -1.0])
PROBS = np.abs(R.standard_normal((4, 3))) + 0.1
PROBS /= PROBS.sum(1, keepdims=True)

CASES = [  # (name, f(lib, *tensors), arrays, grad_fn with reduction=1)
    ("kl_div", lambda lib, a, b, red: lib.kl_div(a, b, red), (A, PROBS)),
    ("kl_div log_target", lambda lib, a, b, red: lib.kl_div(a, b, red, log_target=True), (A, np.log(PROBS))),
    ("binary_cross_entropy_with_logits", lambda lib, a, b, red: lib.binary_cross_entropy_with_logits(a, b, None,
                                                                                                    None, red),
     (A, PROBS)),
    ("bce_with_logits weights", lambda lib, a, b, red: lib.binary_cross_entropy_with_logits(
        a, b, lib.tensor(np.abs(C)), lib.tensor(np.abs(C[0]) + 1), red), (A, PROBS)),
    ("cosine_embedding_loss", lambda lib, a, b, y, red: lib.cosine_embedding_loss(a, b, y, 0.1, red),
     (A, B, ROW_SIGN)),
    ("hinge_embedding_loss", lambda lib, a, y, red: lib.hinge_embedding_loss(a, y, 0.5, red), (A, SIGN)),
    ("margin_ranking_loss", lambda lib, a, b, y, red: lib.margin_ranking_loss(a, b, y, 0.2, red), (A, B, SIGN)),
    ("triplet_margin_loss", lambda lib, a, b, c, red: lib.triplet_margin_loss(a, b, c, 1.0, 2, 1e-6, False, red),
     (A, B, C)),
    ("triplet_margin_loss p=1 swap", lambda lib, a, b, c, red: lib.triplet_margin_loss(a, b, c, 2.0, 1, 1e-6, True,
                                                                                       red), (A, B, C)),
    ("poisson_nll_loss", lambda lib, a, b, red: lib.poisson_nll_loss(a, b, True, False, 1e-8, red), (A, PROBS * 3)),
    ("poisson_nll_loss full", lambda lib, a, b, red: lib.poisson_nll_loss(a.abs() + 0.1, b, False, True, 1e-8, red),
     (A, PROBS * 3)),
]


@pytest.mark.parametrize("reduction", [0, 1, 2, 7])   # 7: any other int means 'none', as in torch
@pytest.mark.parametrize("name, f, arrays", CASES, ids=[c[0] for c in CASES])
def test_loss_as_torch(name, f, arrays, reduction):
    grad_fn = None
    if reduction in (1, 2):
        grad_fn = "BinaryCrossEntropyWithLogitsBackward0" if "logits" in name else \
            ("MeanBackward0" if reduction == 1 else "SumBackward0")
    check_op(lambda lib, *ts: f(lib, *ts, reduction), *arrays, grad_fn=grad_fn,
             vmap=reduction in (0, 7) or "logits" not in name)


@pytest.mark.parametrize("name, f", [("cosine_similarity", lambda lib, a, b: lib.cosine_similarity(a, b, 1, 1e-8)),
                                     ("pairwise_distance", lambda lib, a, b: lib.pairwise_distance(a, b, 3.0, 1e-6,
                                                                                                   True))])
def test_similarity_as_torch(name, f):
    check_op(f, A, B, grad_fn="SumBackward1" if name == "cosine_similarity" else "NormBackward1")


# ---- cdist ----------------------------------------------------------------------------------------
SHAPES = [((3, 2), (4, 2)), ((2, 3, 2), (4, 2)), ((2, 1, 3, 2), (4, 5, 2)), ((30, 3), (5, 3)), ((2, 27, 2), (2, 4, 2))]


@pytest.mark.parametrize("p", [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, float("inf")])
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_cdist_as_torch(shapes, p):
    """torch's cdist has neither forward mode nor second order (its backward is not differentiable):
    values, gradients and vmap are compared here, the rest below."""
    x1, x2 = (R.standard_normal(s) for s in shapes)
    mm = p == 2.0 and max(shapes[0][-2], shapes[1][-2]) > 25
    check_op(lambda lib, a, b: lib.cdist(a, b, p), x1, x2, grad_fn="ViewBackward0" if mm else "CdistBackward0",
             second_order=False, jvp=False)


@pytest.mark.parametrize("mode, name", [("use_mm_for_euclid_dist", "ViewBackward0"),
                                        ("donot_use_mm_for_euclid_dist", "CdistBackward0"),
                                        ("use_mm_for_euclid_dist_if_necessary", "CdistBackward0")])
def test_cdist_compute_modes_as_torch(mode, name):
    check_op(lambda lib, a, b: lib.cdist(a, b, 2.0, mode), A, B, grad_fn=name, second_order=False, jvp=False)


@pytest.mark.parametrize("p, mode", [(1.5, "donot_use_mm_for_euclid_dist"), (2.0, "donot_use_mm_for_euclid_dist"),
                                     (3.0, "donot_use_mm_for_euclid_dist"), (2.0, "use_mm_for_euclid_dist")])
def test_cdist_jacobians_and_second_order(p, mode):
    """Beyond torch: jacfwd (forward mode) == jacrev == torch.autograd.functional.jacobian (row by row), and
    the second derivative passes gradgradcheck. (torch 2.13's own jacrev of cdist is wrong: its vmap of
    cdist's backward repeats one column's gradient; row-by-row torch.autograd.functional.jacobian is right.)"""
    x2 = R.standard_normal((5, 3))
    x1 = R.standard_normal((4, 3))
    want = torch.autograd.functional.jacobian(lambda a: torch.cdist(a, torch.tensor(x2), p, mode), torch.tensor(x1))

    def f(a):
        return mt.cdist(a, mt.tensor(x2), p, mode)
    for jac in (mt.func.jacrev, mt.func.jacfwd):
        np.testing.assert_allclose(jac(f)(mt.tensor(x1)).numpy(), want.numpy(), rtol=1e-10, atol=1e-12)
    a = mt.tensor(x1, requires_grad=True)
    b = mt.tensor(x2, requires_grad=True)
    assert mt.autograd.gradgradcheck(lambda u, v: mt.cdist(u, v, p, mode), (a, b))


def test_cdist_at_zero_distance_as_torch():
    """Equal rows: distance 0, gradient 0 there (torch's choice), not nan."""
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    for p in (1.0, 2.0, 3.0):
        check_op(lambda lib, a, b: lib.cdist(a, b, p), x, x.copy(), second_order=False, jvp=False, vmap=False)


BAD = [("cdist(a[0], b)", RuntimeError), ("cdist(a, b[:, :2])", RuntimeError), ("cdist(a, b, -1.0)", RuntimeError),
       ("cdist(a, b, 2.0, 'fast')", ValueError), ("cdist(a.long(), b)", RuntimeError),
       ("triplet_margin_loss(a, b, b[0])", RuntimeError),
       ("kl_div(a, b, 'mean')", TypeError), ("kl_div(a, b, 1.0)", TypeError), ("hinge_embedding_loss(a, b, 1.0, True)",
                                                                              TypeError)]


@pytest.mark.parametrize("call, exc", BAD)
def test_errors_as_torch(call, exc):
    texts = []
    for lib in (torch, mt):
        env = {"lib": lib, "a": lib.tensor(A), "b": lib.tensor(B)}
        with pytest.raises(exc) as info:
            eval("lib." + call, env)
        texts.append(str(info.value))
    if exc is TypeError:   # microtorch's text adds the fix after torch's
        assert texts[1].startswith(texts[0].split(" (position")[0])
    else:   # torch's text, after the op's name where torch's does not say it
        assert texts[0] in texts[1] and call.split("(")[0] in texts[1]


def test_margin_ranking_loss_broadcasts_as_torch():
    """torch.margin_ranking_loss (ATen) broadcasts where F.margin_ranking_loss insists on equal dims."""
    check_op(lambda lib, a, b, y: lib.margin_ranking_loss(a, b, y, 0.0, 0), A, B[0], SIGN[0], second_order=False)


@pytest.mark.parametrize("call", ["kl_div(a, p)", "binary_cross_entropy_with_logits(a, p)",
                                  "cosine_embedding_loss(a, b, y)", "hinge_embedding_loss(a, s)",
                                  "margin_ranking_loss(a, b, s)", "triplet_margin_loss(a, b, p)"])
def test_default_reduction_is_none_as_in_torch(call):
    """torch's Python bindings of these ATen ops default to reduction 0 (none), not ATen's Mean."""
    out = []
    for lib in (torch, mt):
        env = {"lib": lib, "a": lib.tensor(A), "b": lib.tensor(B), "p": lib.tensor(PROBS), "s": lib.tensor(SIGN),
               "y": lib.tensor(ROW_SIGN)}
        out.append(eval("lib." + call, env))
    assert out[0].ndim > 0
    np.testing.assert_allclose(out[1].numpy(), out[0].numpy(), rtol=1e-12)


def test_cosine_similarity_broadcasts_and_promotes_as_torch():
    check_op(lambda lib, a, b: lib.cosine_similarity(a, b, -1), A, B[0], vmap=False)
    check_op(lambda lib, a, b: lib.cosine_similarity(a, b, 1), np.array(0.5), B, vmap=False)
    for lib in (torch, mt):
        out = lib.cosine_similarity(lib.tensor([[1, 2, 3]]), lib.tensor([[3.0, 2.0, 1.0]]))
        assert str(out.dtype).endswith("float32") and abs(float(out) - 10 / 14) < 1e-6


MORE_BAD = [("kl_div(a.long(), b)", RuntimeError), ("kl_div(c, b)", RuntimeError), ("kl_div(a, 5)", TypeError),
            ("binary_cross_entropy_with_logits(c, b[0, :2])", NotImplementedError),
            ("binary_cross_entropy_with_logits(a, b.long())", RuntimeError),
            ("hinge_embedding_loss(a > 0, b)", RuntimeError), ("pairwise_distance(a > 0, b)", RuntimeError),
            ("pairwise_distance(a, [1.0])", TypeError), ("cosine_similarity(a, b[:, :2])", RuntimeError),
            ("cosine_similarity(a, b, 2)", IndexError), ("cosine_similarity(c, b)", RuntimeError),
            ("cosine_similarity(a.long(), b.long())", RuntimeError)]


@pytest.mark.parametrize("call, exc", MORE_BAD)
def test_more_errors_of_torchs_type(call, exc):
    for lib in (torch, mt):
        env = {"lib": lib, "a": lib.tensor(A), "b": lib.tensor(B), "c": lib.tensor(A + 1j * B)}
        with pytest.raises(exc) as info:
            eval("lib." + call, env)
        if lib is mt:   # microtorch's message names the op
            assert call.split("(")[0] in str(info.value)


def test_edge_values_as_torch():
    """An infinite input to hinge_embedding_loss (inf, not nan), an integer input (an integer loss), a complex
    target to binary_cross_entropy_with_logits (a complex loss), all as torch computes them."""
    x = np.array([[np.inf, -np.inf, np.nan], [1.0, -2.0, 0.5]])
    t = np.array([[1.0, -1.0, 1.0], [-1.0, 1.0, -1.0]])
    for call in ["hinge_embedding_loss(x, t)", "hinge_embedding_loss(x, t > 0)", "hinge_embedding_loss(i, t, 1.0, 2)",
                 "binary_cross_entropy_with_logits(x, c)",
                 "binary_cross_entropy_with_logits(x[1], c[1], None, None, 1)"]:
        out = []
        for lib in (torch, mt):
            env = {"lib": lib, "x": lib.tensor(x), "t": lib.tensor(t), "i": lib.tensor([[3, -1, 0]]),
                   "c": lib.tensor(t + 0.5j), "w": lib.tensor([0.5, 2.0, 1.0])}
            out.append(eval("lib." + call, env))
        assert str(out[1].dtype).split(".")[1] == str(out[0].dtype).split(".")[1], call
        np.testing.assert_allclose(out[1].numpy(), out[0].numpy(), rtol=1e-12, err_msg=call)


@pytest.mark.parametrize("p", [0.0, 1.0, 1.5, 2.0, 3.0, float("inf")])
def test_pdist_in_torchs_namespace_as_torch(p):
    """torch.pdist (nn.functional's op, nn_more.Pdist): values, PdistBackward0, gradients; p may be a 0-d tensor."""
    x = R.standard_normal((5, 3))
    check_op(lambda lib, a: lib.pdist(a, p), x, grad_fn="PdistBackward0", second_order=False, jvp=False, vmap=False)
    for lib in (torch, mt):
        np.testing.assert_allclose(lib.pdist(lib.tensor(x), lib.tensor(p)).numpy(),
                                   torch.pdist(torch.tensor(x), p).numpy(), rtol=1e-12)


@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("lengths", ["tensors", "tuples"])
def test_ctc_loss_in_torchs_namespace_as_torch(reduction, lengths):
    """torch.ctc_loss (nn.functional's, loss_more.py) with ATen's int reduction: values and gradients."""
    lp = R.standard_normal((6, 2, 4))
    targets = np.array([[1, 2], [1, 1]])
    il, tl = np.array([6, 5]), np.array([2, 1])

    def f(lib, x):
        lens = (lib.tensor(il), lib.tensor(tl)) if lengths == "tensors" else (tuple(il.tolist()), tuple(tl.tolist()))
        return lib.ctc_loss(x.log_softmax(2), lib.tensor(targets), *lens, 0, reduction)
    check_op(f, lp, second_order=False, jvp=False, vmap=False)


def test_ctc_loss_bad_arguments_of_torchs_type():
    for lib in (torch, mt):
        x = lib.tensor(R.standard_normal((6, 2, 4))).log_softmax(2)
        for call in ["ctc_loss(x, 0, 1, 2)", "ctc_loss(x, t, 'a', (1, 1))", "ctc_loss(x, t, (6, 6), (1, 1), 0, 'mean')"]:
            with pytest.raises(TypeError):
                eval("lib." + call, {"lib": lib, "x": x, "t": lib.tensor([[1], [2]])})
