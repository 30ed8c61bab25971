"""The whole grad_fn graph a student sees (viz draws it node by node) is torch's: node names and edges, from
the output back to the leaves, beside torch 2.13; values and gradients too."""
import warnings

import numpy as np
import pytest
import torch

import microtorch as mt
from tests.saved_compare import graph_of, leaves_of


def _tri(T, shape):
    n = shape[-1]
    a = np.triu(np.arange(np.prod(shape), dtype=float).reshape(shape) / 10) + 3 * np.eye(n)
    return T.tensor(a, dtype=T.float64, requires_grad=True)


def _rhs(T, shape):
    return T.tensor(np.cos(np.arange(np.prod(shape), dtype=float)).reshape(shape), dtype=T.float64,
                    requires_grad=True)


GRAPHS = {
    "solve_triangular_batched_B": lambda T: (T.linalg.solve_triangular(_tri(T, (2, 2)), _rhs(T, (3, 2, 1)),
                                                                       upper=True),),
    "solve_triangular_batched_A": lambda T: (T.linalg.solve_triangular(_tri(T, (3, 2, 2)), _rhs(T, (2, 4)),
                                                                       upper=True),),
    "solve_triangular_right": lambda T: (T.linalg.solve_triangular(_tri(T, (4, 1, 2, 2)), _rhs(T, (3, 5, 2)),
                                                                   upper=True, left=False),),
    "triangular_solve_batched_B": lambda T: tuple(T.triangular_solve(_rhs(T, (3, 2, 1)), _tri(T, (2, 2)))),
    "triangular_solve_batched_A": lambda T: tuple(T.triangular_solve(_rhs(T, (2, 1)), _tri(T, (4, 1, 2, 2)))),
}


def _run(T, name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outs = GRAPHS[name](T)
    loss = sum((o * T.arange(o.numel(), dtype=T.float64).reshape(o.shape)).sum() for o in outs)
    leaves = leaves_of(outs[0].grad_fn)
    loss.backward()
    return outs, leaves


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_graph_values_and_gradients_as_torch(name):
    (theirs, t_leaves), (mine, m_leaves) = _run(torch, name), _run(mt, name)
    assert [graph_of(o) for o in mine] == [graph_of(o) for o in theirs]
    for m, t in zip(mine + tuple(m_leaves), theirs + tuple(t_leaves)):
        assert tuple(m.shape) == tuple(t.shape)
        np.testing.assert_allclose(np.asarray(m.detach()), t.detach().numpy(), rtol=1e-12, atol=1e-12)
    for m, t in zip(m_leaves, t_leaves):
        np.testing.assert_allclose(np.asarray(m.grad), t.grad.numpy(), rtol=1e-12, atol=1e-12)


SOLVES = {
    "vector": ((2, 2), (2,)), "batched_vector": ((3, 2, 2), (2,)), "batch_of_vectors": ((3, 2, 2), (3, 2)),
    "matrix": ((2, 2), (2, 3)), "batched_B": ((2, 2), (4, 2, 3)), "batched_A": ((4, 1, 2, 2), (3, 2, 1)),
}


@pytest.mark.parametrize("name", sorted(SOLVES))
@pytest.mark.parametrize("left", [True, False])
def test_linalg_solve_graph_as_torch(name, left):
    """torch's LinalgSolveExBackward0 takes a vector B and broadcast batches itself: no unsqueeze, expand or
    squeeze node."""
    sa, sb = SOLVES[name]
    if not left:
        sb = sb[:-2] + sb[-2:][::-1] if len(sb) >= 2 else sb
    results = []
    for T in (torch, mt):
        A = T.tensor(np.arange(np.prod(sa), dtype=float).reshape(sa) / 7 + 2 * np.eye(sa[-1]), dtype=T.float64,
                     requires_grad=True)
        B = _rhs(T, sb)
        try:
            x = T.linalg.solve(A, B, left=left)
        except RuntimeError as e:
            results.append(type(e))
            continue
        (x * T.arange(x.numel(), dtype=T.float64).reshape(x.shape)).sum().backward()
        results.append((graph_of(x), tuple(x.shape), np.asarray(x.detach()).round(10).tolist(),
                        np.asarray(A.grad).round(10).tolist(), np.asarray(B.grad).round(10).tolist()))
    assert results[1] == results[0]


def _x(T):
    return T.tensor(np.sin(np.arange(12.0)).reshape(2, 3, 2), dtype=T.float64, requires_grad=True)


SMALL = {
    "group_norm_no_affine": lambda T: T.nn.functional.group_norm(_x(T), 3),
    "group_norm_affine": lambda T: T.nn.functional.group_norm(_x(T), 3, _rhs(T, (3,)), _rhs(T, (3,))),
    "group_norm_weight_only": lambda T: T.nn.functional.group_norm(_x(T), 1, _rhs(T, (3,))),
    "copysign_number": lambda T: _x(T).copysign(-2.0),
    "copysign_tensor": lambda T: _x(T).copysign(_rhs(T, (2,))),
    "soft_margin_loss": lambda T: T.nn.functional.soft_margin_loss(_x(T), _rhs(T, (2, 3, 2)).detach().sign()),
    "embedding_bag": lambda T: T.nn.functional.embedding_bag(T.tensor([0, 1, 1]), _x(T).reshape(4, 3),
                                                             T.tensor([0, 1])),
    "embedding_bag_weighted": lambda T: T.nn.functional.embedding_bag(
        T.tensor([0, 1, 1]), _x(T).reshape(4, 3), T.tensor([0, 1]), mode="sum",
        per_sample_weights=_rhs(T, (3,))),
}


@pytest.mark.parametrize("name", sorted(SMALL))
def test_small_graphs_as_torch(name):
    graphs = []
    for T in (torch, mt):
        y = SMALL[name](T)
        y.sum().backward()
        graphs.append(graph_of(y))
    assert graphs[1] == graphs[0]


def test_soft_margin_loss_refuses_a_target_requiring_grad_when_called():
    for T in (torch, mt):
        with pytest.raises(RuntimeError, match="not differentiable with respect to argument 'target'"):
            T.nn.functional.soft_margin_loss(_x(T), _rhs(T, (2, 3, 2)))
        with T.no_grad():
            T.nn.functional.soft_margin_loss(_x(T), _rhs(T, (2, 3, 2)))


NANSUMS = {
    "all": lambda T, x: x.nansum(dtype=T.float32),
    "dim": lambda T, x: x.nansum(1, dtype=T.float32),
    "keepdim": lambda T, x: x.nansum(-1, keepdim=True, dtype=T.float32),
    "nanmean": lambda T, x: x.nanmean(1, dtype=T.float32),
    "same_dtype": lambda T, x: x.nansum(0, dtype=T.float64),
}


@pytest.mark.parametrize("name", sorted(NANSUMS))
def test_nansum_casts_inside_the_op_as_torch(name):
    """torch's NansumBackward0 links to the input itself (no ToCopyBackward0), saves it uncast, and casts the
    gradient back to the input's dtype; values, gradients, jvp and vmap beside torch."""
    out = []
    for T in (torch, mt):
        x = T.tensor(np.where(np.arange(12) % 5 == 0, np.nan, np.sin(np.arange(12.0))).reshape(3, 4),
                     dtype=T.float64, requires_grad=True)
        y = NANSUMS[name](T, x)
        (y * 3).sum().backward()
        _, tangent = T.func.jvp(lambda v: NANSUMS[name](T, v), (x.detach(),), (T.ones_like(x),))
        batched = T.func.vmap(lambda v: NANSUMS[name](T, v))(x.detach()[None].expand(2, 3, 4))
        out.append((graph_of(y), str(y.dtype).split(".")[-1], np.asarray(y.detach()).tolist(), str(x.grad.dtype),
                    np.asarray(x.grad).tolist(), np.asarray(tangent).tolist(), np.asarray(batched).tolist()))
    assert str(out[1]).replace("microtorch", "torch") == str(out[0])


UNIQUES = {
    "unique": lambda T, x: x.unique(),
    "unsorted": lambda T, x: T.unique(x, sorted=False),
    "with_inverse_counts": lambda T, x: T.unique(x, return_inverse=True, return_counts=True)[0],
    "dim": lambda T, x: T.unique(x.reshape(2, 3), dim=1),
    "consecutive": lambda T, x: T.unique_consecutive(x),
    "consecutive_dim": lambda T, x: x.reshape(2, 3).unique_consecutive(dim=0),
}


@pytest.mark.parametrize("name", sorted(UNIQUES))
def test_unique_is_recorded_without_a_derivative_as_torch(name):
    """torch records unique's values (Unique2Backward0, UniqueDimBackward0, UniqueConsecutiveBackward0); backward
    through them raises its NotImplementedError, and forward mode too. Before, microtorch's result did not require
    grad, so backward said something else."""
    out = []
    for T in (torch, mt):
        x = T.tensor([3.0, 1.0, 3.0, 3.0, 2.0, 1.0], dtype=T.float64, requires_grad=True)
        y = UNIQUES[name](T, x)
        with pytest.raises(NotImplementedError, match="the derivative for '(_unique2|unique_dim|unique_consecutive)' "
                                                      "is not implemented"):
            y.sum().backward()
        with pytest.raises(NotImplementedError, match="Trying to use forward AD with"):
            T.func.jvp(lambda v: UNIQUES[name](T, v), (x.detach(),), (T.ones_like(x),))
        out.append((graph_of(y), np.asarray(y.detach()).tolist(), y.requires_grad))
    assert out[1] == out[0]


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("use", ["both", "sign", "logabsdet"])
def test_slogdet_sign_is_differentiable_as_torch(dtype, use):
    """torch's slogdet records both outputs: a real sign's gradient is zero (A.grad stays None when only the sign is
    used), a complex sign's is i Im(conj(g) sign) through A^-H. Before, microtorch's sign did not require grad."""
    out = []
    for T in (torch, mt):
        base = np.array([[2.0, 1.0], [1.0, 3.0]])
        base = base + 1j * np.array([[0.5, -1], [0.2, 0.3]]) if dtype != "float64" else base
        A = T.tensor(base, dtype=getattr(T, dtype), requires_grad=True)
        sign, logabs = T.linalg.slogdet(A)
        s = (sign * (2 + 1j)).real if dtype != "float64" else sign * 2
        y = {"both": s + logabs, "sign": s, "logabsdet": logabs}[use]
        y.sum().backward()
        grad = None if A.grad is None else np.round(np.asarray(A.grad), 12).tolist()
        out.append((graph_of(sign), sign.requires_grad, sign.grad_fn is logabs.grad_fn, grad))
    assert out[1] == out[0]
