"""What the pointwise, special and linear-algebra ops show as `grad_fn._saved_<name>`, beside torch 2.13, value and
Python type, and what their pack hooks see: a number argument as the caller gave it (clamp(0, 1) shows 0 and 1,
lerp's and clamp_min's float32 0.1 shows 0.1), xlogy's and zeta's number kept as a number (no 0-d tensor packed),
the dims of cross and diag_embed as given (-1 read as 18446744073709551615), mm's and addmm's operand sizes, the LU
factors and int32 pivots that det, slogdet and solve keep (of A^T for det of a real C-contiguous A, of A itself for
solve, as torch's), svd's S, U, Vh in that order, cdist's p as a float; and the nodes of the double backwards
(tanh's and sigmoid's grad_output and output, relu's threshold, leaky_relu's slope, gelu's approximate, elu's int
scales). clamp_min and clamp_max by a tensor are torch's ClampMinBackward1 and ClampMaxBackward1; nextafter has
torch's gradient (grad where x != y, none to y); matrix_power(0) is torch's copy of I into A's clone."""
import numpy as np
import pytest
import torch

import microtorch as mt
from tests.saved_compare import STRIDES, assert_saves_as_torch, observe


def _a(T, dtype=None):
    return T.tensor([[0.5, 1.5, -2.0], [2.5, -1.0, 0.25]], dtype=dtype or T.float64, requires_grad=True)


def _b(T, dtype=None):
    return T.tensor([[1.5, -0.5, 3.0], [0.1, 0.2, 0.3]], dtype=dtype or T.float64, requires_grad=True)


def _c(T):
    return T.tensor([[1.5, -0.5, 3.0], [0.7, 0.8, -0.9]], dtype=T.float64)


def _v(T):
    return T.tensor([0.3, -1.2, 2.0], dtype=T.float64, requires_grad=True)


def _m(T):
    return T.tensor([[True, False, True], [False, True, True]])


def _d(T):
    """a constant of dyadic numbers (products and sums of them are exact: both libraries' values agree)"""
    return T.tensor([[1.5, -0.5, 3.0], [0.25, 0.75, -1.0]], dtype=T.float64)


def _ints(T):
    return T.tensor([[1.0, 2.0, -2.0], [3.0, -1.0, 0.0]], dtype=T.float64, requires_grad=True)


_SQ = [[1.0, 0.25, 0.5], [0.5, 1.125, 0.5], [0.25, 0.5625, 1.25]]


def _sq(T, dtype=None):
    """a C-contiguous square matrix whose LU factors, of it and of its transpose, are exact (no row swaps, pivots
    1: det 1, log|det| 0), so that both libraries' factors, determinants, inverses and solutions agree to the bit;
    its LU and its transpose's differ (det factors the transpose of a real C-contiguous matrix, solve the matrix)"""
    return T.tensor(_SQ, dtype=dtype or T.float64, requires_grad=True)


def _sq_slice(T):
    """_sq's numbers as a slice of a wider matrix: neither C- nor F-contiguous (det factors it as it is)"""
    return T.tensor([row + [9.0] for row in _SQ], dtype=T.float64, requires_grad=True)[:, :3]


def _spd(T):
    s = _sq(T)
    return s @ s.mT + T.eye(3, dtype=T.float64)


def _sv(T):
    """a matrix with an exact SVD (singular values 3 and 2) whose vectors' signs both libraries agree on"""
    return T.tensor([[0.0, 0.0, 3.0], [0.0, -2.0, 0.0]], dtype=T.float64, requires_grad=True)


def _grad(T, f, x):
    """the gradient of f(x).sum() as a function of x: its grad_fn is the node of f's backward"""
    return T.autograd.grad(f(x).sum(), x, create_graph=True)[0]


ELEMENTWISE = {
    "rpow_int_base": lambda T: 2 ** _a(T),
    "rpow_float_base": lambda T: 2.5 ** _ints(T),
    "pow_number_tensor": lambda T: T.pow(3, _a(T)),
    "leaky_relu_default": lambda T: T.nn.functional.leaky_relu(_a(T)),
    "leaky_relu_slope": lambda T: T.nn.functional.leaky_relu(_a(T), 0.2),
    "leaky_relu_double_backward": lambda T: _grad(T, lambda x: T.nn.functional.leaky_relu(x, 0.2), _a(T)),
    "elu_default": lambda T: T.nn.functional.elu(_a(T)),
    "elu_alpha": lambda T: T.nn.functional.elu(_a(T), alpha=0.5),
    "elu_double_backward": lambda T: _grad(T, lambda x: T.nn.functional.elu(x, 0.5), _a(T)),
    "gelu": lambda T: T.nn.functional.gelu(_a(T)),
    "gelu_tanh": lambda T: T.nn.functional.gelu(_a(T), approximate="tanh"),
    "gelu_double_backward": lambda T: _grad(T, lambda x: T.nn.functional.gelu(x, approximate="tanh"), _a(T)),
    "softplus_ints": lambda T: T.nn.functional.softplus(_a(T), 2, 5),
    "softplus_double_backward": lambda T: _grad(T, lambda x: T.nn.functional.softplus(x, 2, 5), _a(T)),
    "tanh_double_backward": lambda T: _grad(T, lambda x: x.tanh(), _ints(T)),
    "sigmoid_double_backward": lambda T: _grad(T, lambda x: x.sigmoid(), _a(T)),
    "relu_double_backward": lambda T: _grad(T, lambda x: x.relu(), _a(T)),
    "clamp_ints": lambda T: _a(T).clamp(0, 1),
    "clamp_min_only": lambda T: _a(T).clamp(min=0),
    "clamp_max_only": lambda T: T.clamp(_a(T), max=1),
    "clamp_mixed": lambda T: _a(T).clamp(-1.5, 1),
    "clamp_float32_bounds": lambda T: _a(T, T.float32).clamp(0.1, 0.7),
    "clamp_in_place": lambda T: _a(T).clone().clamp_(0, 1),
    "clip": lambda T: _a(T).clip(0.5),
    "clamp_tensors": lambda T: _a(T).clamp(_c(T)[0], _c(T)),
    "where": lambda T: T.where(_m(T), _a(T), _b(T)),
    "where_number": lambda T: T.where(_m(T), _a(T), 2.0),
    "where_number_first": lambda T: T.where(_m(T), 2.0, _a(T)),
    "where_comparison": lambda T: T.where(_c(T) > 0, _a(T), _b(T)),
    "angle_real": lambda T: _a(T).angle(),
    "angle_complex": lambda T: T.complex(_a(T), _c(T)).angle(),
}

POINTWISE = {
    "logit": lambda T: _a(T).logit(),
    "logit_eps": lambda T: _a(T).logit(0.1),
    "special_logit_eps": lambda T: T.special.logit(_a(T), eps=0.25),
    "logaddexp2": lambda T: T.logaddexp2(_a(T), _b(T)),
    "xlogy_float_other": lambda T: _a(T).xlogy(2.0),
    "xlogy_int_other": lambda T: T.xlogy(_a(T), 2),
    "xlogy_number_self": lambda T: T.xlogy(2.0, _b(T)),
    "xlog1py_number_other": lambda T: T.special.xlog1py(_a(T), 2.0),
    "xlog1py_int_self": lambda T: T.special.xlog1py(2, _b(T)),
    "lerp_half": lambda T: _a(T).lerp(_b(T), 0.5),
    "lerp_int_weight": lambda T: _a(T).lerp(_b(T), 1),
    "lerp_float32": lambda T: _a(T, T.float32).lerp(_b(T, T.float32), 0.1),
    "lerp_in_place": lambda T: _a(T).clone().lerp_(_b(T), 0.25),
    "clamp_min_float": lambda T: _a(T).clamp_min(0.0),
    "clamp_min_int": lambda T: _a(T).clamp_min(0),
    "clamp_min_float32": lambda T: _a(T, T.float32).clamp_min(0.1),
    "clamp_max_int": lambda T: _a(T).clamp_max(1),
    "clamp_min_in_place": lambda T: _a(T).clone().clamp_min_(0.5),
    "clamp_min_tensor": lambda T: _a(T).clamp_min(_b(T)),
    "clamp_min_tensor_broadcast": lambda T: T.clamp_min(_a(T), _b(T)[0]),
    "clamp_max_tensor": lambda T: _a(T).clamp_max(_c(T)[1]),
}

SPECIAL = {
    "digamma": lambda T: _a(T).digamma(),
    "polygamma_1": lambda T: _a(T).polygamma(1),
    "polygamma_2": lambda T: T.polygamma(2, _a(T)),
    "mvlgamma_1": lambda T: (_a(T).abs() + 2).mvlgamma(1),
    "mvlgamma_2": lambda T: (_a(T).abs() + 2).mvlgamma(p=2),
    "igamma": lambda T: T.igamma(_c(T).abs(), _a(T).abs()),
    "igammac": lambda T: T.igammac(_c(T).abs(), _a(T).abs()),
    "zeta": lambda T: T.special.zeta(_c(T).abs() + 2, _a(T).abs()),
    "zeta_number_self": lambda T: T.special.zeta(2.0, _a(T).abs()),
    "zeta_int_self": lambda T: T.special.zeta(3, _a(T).abs()),
    "frexp": lambda T: _a(T).frexp(),
    "frexp_float32": lambda T: T.frexp(_a(T, T.float32)).mantissa,
    "nextafter": lambda T: T.nextafter(_a(T), _b(T)),
    "nextafter_constant_other": lambda T: T.nextafter(_a(T), _c(T)),
}

LINALG = {
    "mm": lambda T: _a(T).mm(_b(T).t()),
    "matmul": lambda T: _a(T) @ _c(T).t(),
    "linear": lambda T: T.nn.functional.linear(_a(T), _b(T)),
    "matmul_folded": lambda T: _a(T)[None].expand(2, 2, 3) @ _b(T).t(),
    "mm_double_backward": lambda T: _grad(T, lambda x: x.mm(_d(T).t()).pow(2), _a(T)),
    "linear_bias": lambda T: T.nn.functional.linear(_a(T), _b(T), _v(T)[:2]),
    "addmm": lambda T: T.addmm(_v(T)[:2], _a(T), _b(T).t()),
    "addmm_float_scales": lambda T: T.addmm(_v(T)[:2], _a(T), _b(T).t(), beta=1.0, alpha=1.0),
    "addmm_matrix_bias": lambda T: T.addmm(_a(T)[:, :2], _a(T), _c(T).t()),
    "inv": lambda T: T.linalg.inv(_sq_slice(T)),
    "inverse": lambda T: T.inverse(_sq(T)),
    "matrix_power_negative": lambda T: _sq(T).matrix_power(-1),
    "matrix_power_zero": lambda T: _sq(T).matrix_power(0),
    "det_slice": lambda T: T.linalg.det(_sq_slice(T)),
    "det_contiguous": lambda T: T.linalg.det(_sq(T)),
    "det_transposed": lambda T: T.det(_sq(T).mT),
    "det_batch": lambda T: T.linalg.det(T.stack([_sq(T), _sq(T).mT])),
    "det_float32": lambda T: T.linalg.det(_sq(T, T.float32)),
    "slogdet": lambda T: T.linalg.slogdet(_sq(T))[1],
    "slogdet_slice": lambda T: T.slogdet(_sq_slice(T))[1],
    "logdet": lambda T: T.logdet(_sq(T)),
    "solve_vector": lambda T: T.linalg.solve(_sq_slice(T), _ints(T)[0]),
    "solve_matrix": lambda T: T.linalg.solve(_sq(T), _ints(T).t()),
    "solve_right": lambda T: T.linalg.solve(_sq(T), _ints(T), left=False),
    "solve_batch_of_b": lambda T: T.linalg.solve(_sq(T), T.ones(3, 3, 4, dtype=T.float64)),
    "solve_ex": lambda T: T.linalg.solve_ex(_sq(T), _ints(T).t())[0],
    "cross_dim": lambda T: T.cross(_a(T), _b(T), dim=1),
    "cross_negative_dim": lambda T: T.cross(_a(T), _b(T), dim=-1),
    "cross_no_dim": lambda T: T.cross(_sq(T), _sq(T).exp()),
    "linalg_cross_default": lambda T: T.linalg.cross(_a(T), _b(T)),
    "vdot": lambda T: T.vdot(_v(T), _v(T) * 2),
    "dist_default": lambda T: _a(T).dist(_c(T)),
    "dist_p_int": lambda T: _a(T).dist(_b(T), 3),
    "dist_p_float": lambda T: T.dist(_a(T), _b(T), p=2.5),
    "diag_embed_default": lambda T: _a(T).diag_embed(),
    "diag_embed_offset": lambda T: _v(T).diag_embed(1),
    "diag_embed_dims": lambda T: _a(T).diag_embed(0, 0, 2),
    "diag_embed_negative": lambda T: T.diag_embed(_a(T), -1, -1, -2),
    "diagflat": lambda T: T.diagflat(_v(T)),
    "diagflat_offset": lambda T: _a(T).diagflat(-1),
    "matrix_exp": lambda T: T.linalg.matrix_exp(_sq(T) / 4),
    "pinv": lambda T: T.linalg.pinv(_sv(T)),
    "pinverse": lambda T: T.pinverse(_sv(T).t()),
    "cholesky": lambda T: T.cholesky(_spd(T)),
    "cholesky_upper": lambda T: T.cholesky(_spd(T), upper=True),
    "svd_reduced": lambda T: T.linalg.svd(_sv(T), full_matrices=False),
    "svd_tall": lambda T: T.linalg.svd(_sv(T).t(), full_matrices=False),
    "svd_old": lambda T: T.svd(_sv(T)),
    "svdvals": lambda T: T.linalg.svdvals(_sv(T)),
    "cdist": lambda T: T.cdist(_a(T), _c(T)),
    "cdist_two_grads": lambda T: T.cdist(_a(T), _b(T)),
    "cdist_p1": lambda T: T.cdist(_a(T), _c(T), p=1),
    "cdist_p_int": lambda T: T.cdist(_a(T), _c(T), p=3),
    "cdist_p0": lambda T: T.cdist(_a(T), _c(T), p=0),
    "cdist_inf": lambda T: T.cdist(_a(T), _c(T), p=float("inf")),
    "cdist_batch": lambda T: T.cdist(_a(T)[None], _c(T)[None]),
}


@pytest.mark.parametrize("f", [pytest.param(f, id=k) for k, f in ELEMENTWISE.items()])
def test_elementwise_saves_as_torch(f):
    assert_saves_as_torch(f, skip=STRIDES)


@pytest.mark.parametrize("f", [pytest.param(f, id=k) for k, f in POINTWISE.items()])
def test_pointwise_saves_as_torch(f):
    assert_saves_as_torch(f, skip=STRIDES)


@pytest.mark.parametrize("f", [pytest.param(f, id=k) for k, f in SPECIAL.items()])
def test_special_saves_as_torch(f):
    assert_saves_as_torch(f, skip=STRIDES)


@pytest.mark.parametrize("f", [pytest.param(f, id=k) for k, f in LINALG.items()])
def test_linalg_saves_as_torch(f):
    assert_saves_as_torch(f, skip=STRIDES)


@pytest.mark.parametrize("f", [
    pytest.param(lambda T: T.linalg.cross(_a(T), _b(T), dim=-1 if T is torch else 1), id="dim_as_normalized"),
    pytest.param(lambda T: _a(T).clamp(0, 1) if T is torch else _a(T).clamp(0.0, 1.0), id="bound_as_float"),
    pytest.param(lambda T: _a(T).xlogy(2.0 if T is torch else T.tensor(2.0, dtype=T.float64)), id="number_as_tensor"),
])
def test_a_wrong_expectation_fails(f):
    """the comparison tells apart what torch shows: -1 and 1 as a dim, 0 and 0.0 as a bound, a number and a
    0-d tensor (which pack hooks see too)"""
    with pytest.raises(AssertionError):
        assert_saves_as_torch(f, skip=STRIDES)


def test_clamp_by_tensor_nodes_have_torch_edges():
    """clamp_min and clamp_max by a tensor: two edges (torch.clamp(x, min=t) is ClampBackward0, with three)"""
    for lib in (torch, mt):
        a, c = _a(lib), _b(lib)
        assert len(a.clamp_min(c).grad_fn.next_functions) == 2
        assert len(a.clamp(min=c).grad_fn.next_functions) == 3
        assert a.clamp(min=c).grad_fn.name() == "ClampBackward0"


@pytest.mark.parametrize("op", ["clamp_min", "clamp_max"])
def test_clamp_by_tensor_gradients_as_torch(op):
    """both gradients of the new nodes, ties and a NaN x included (clamp's formulas: x's where it is kept)"""
    out = []
    for lib in (torch, mt):
        x = lib.tensor([float("nan"), 1.0, 3.0, 2.0], dtype=lib.float64, requires_grad=True)
        bound = lib.tensor([2.0, 2.0, 2.0, 2.0], dtype=lib.float64, requires_grad=True)
        getattr(lib, op)(x, bound).backward(lib.tensor([1.0, 2.0, 3.0, 4.0], dtype=lib.float64))
        out.append((x.grad.tolist(), bound.grad.tolist()))
    assert out[0] == out[1]


def test_nextafter_gradient_as_torch():
    """torch's formula: the gradient passes to x where x != y (0 where they are equal), none to y; and forward mode"""
    grads = []
    for lib in (torch, mt):
        x = lib.tensor([0.5, 1.5, 2.0, -0.0], dtype=lib.float64, requires_grad=True)
        y = lib.tensor([[1.0, 1.0, 2.0, 0.0], [0.5, 2.0, 1.0, 1.0]], dtype=lib.float64, requires_grad=True)
        g = lib.tensor([[3.0, 5.0, 7.0, 9.0], [1.0, 2.0, 4.0, 8.0]], dtype=lib.float64)
        lib.nextafter(x, y).backward(g)
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(x.detach(), lib.tensor([1.0, 2.0, 3.0, 4.0], dtype=lib.float64))
            tangent = fw.unpack_dual(lib.nextafter(d, y.detach())).tangent
        grads.append((x.grad.tolist(), y.grad.tolist(), tangent.tolist()))
    assert grads[0] == grads[1]


def test_matrix_power_zero_as_torch():
    """A's clone overwritten by I: an inf in A leaves no NaN, and the gradient to A is 0"""
    res = []
    for lib in (torch, mt):
        a = lib.tensor([[0.5, float("inf")], [2.5, -1.0]], dtype=lib.float64, requires_grad=True)
        y = a.matrix_power(0)
        y.sum().backward()
        res.append((y.tolist(), a.grad.tolist(), y.grad_fn.name()))
    assert res[0] == res[1]


def test_solve_info_and_factors_of_a_unbroadcast():
    """a B with more batch dims than A: the info and the saved LU factors are A's own, as torch's"""
    res = []
    for lib in (torch, mt):
        a = lib.tensor([[0.5, 1.5], [2.5, -1.0]], dtype=lib.float64, requires_grad=True)
        x, info = lib.linalg.solve_ex(a, lib.ones(3, 2, 4, dtype=lib.float64))
        res.append((tuple(info.shape), tuple(x.grad_fn._saved_LU.shape), x.detach().tolist(), info.tolist()))
    assert res[0] == res[1]


def test_saved_sizes_stay_after_backward():
    """mm's operand sizes are ints, read after backward too (the tensors are freed)"""
    a, b = _a(mt), _b(mt)
    y = a.mm(b.t())
    y.sum().backward()
    assert y.grad_fn._saved_self_sym_sizes == (2, 3) and y.grad_fn._saved_mat2_sym_sizes == (3, 2)
    assert all(type(n) is int for n in y.grad_fn._saved_self_sym_sizes)
    with pytest.raises(RuntimeError, match="freed"):
        y.grad_fn._saved_self


def test_gradients_unchanged_by_what_is_kept():
    """det, slogdet and solve keep LU factors now: their gradients and values are torch's as before"""
    for f in (lambda T, A: T.linalg.det(A), lambda T, A: T.linalg.slogdet(A)[1],
              lambda T, A: T.linalg.solve(A, T.ones(3, 2, dtype=T.float64)).sum()):
        res = []
        for lib in (torch, mt):
            A = _sq(lib)
            y = f(lib, A)
            y.backward()
            res.append(np.asarray(A.grad.tolist()))
        np.testing.assert_allclose(res[0], res[1], rtol=1e-12, atol=1e-14)


def test_observe_sees_the_packs_of_a_kept_number():
    """xlogy(x, 2.0): torch packs x alone; so does microtorch (the 2.0 is kept as a number)"""
    f = POINTWISE["xlogy_float_other"]
    assert len(observe(mt, f)[1]) == len(observe(torch, f)[1]) == 1
