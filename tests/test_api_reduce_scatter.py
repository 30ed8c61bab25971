"""scatter_reduce and index_reduce (ops/reduce_scatter.py) against torch 2.13: values, gradients, second order,
forward mode, vmap, ties and zeros, the in-place forms, grad_fn names and errors."""
import warnings

import numpy as np
import pytest
import torch

import microtorch as mt
from op_oracle import check_op, close

rng = np.random.default_rng(0)
X, S = rng.standard_normal((3, 4)), rng.standard_normal((2, 4))
XT, ST = np.round(rng.standard_normal((3, 4))), np.round(rng.standard_normal((2, 4)))  # ties and zeros
IDX = np.array([[0, 2, 0, 1], [2, 2, 1, 0]])
REDUCTIONS = ["sum", "prod", "mean", "amax", "amin"]


@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("ties", [False, True])
def test_scatter_reduce_as_torch(reduce, include_self, ties):
    x, s = (XT, ST) if ties else (X, S)
    # (prod's tangent is compared with reverse mode below: torch 2.13's is zero)
    check_op(lambda L, a, b, i: a.scatter_reduce(0, i, b, reduce, include_self=include_self), x, s, IDX,
             grad_fn="ScatterReduceBackward0", grad_tol=1e-8, jvp=reduce != "prod")


@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_scatter_reduce_along_dim_1_as_torch(reduce):
    check_op(lambda L, a, b, i: L.scatter_reduce(a, 1, i, b, reduce), X.T.copy(), S.T.copy(),
             np.array([[0, 2], [1, 1], [2, 2], [0, 0]]), grad_tol=1e-8, jvp=reduce != "prod")


@pytest.mark.parametrize("x", [X, XT])
def test_prod_tangent_is_the_derivative(x):
    """jacfwd agrees with jacrev (torch 2.13's forward mode gives zeros for prod, which is not the derivative)."""
    idx = mt.tensor(IDX)
    for inc in (True, False):
        def f(a, b):
            return a.scatter_reduce(0, idx, b, "prod", include_self=inc)
        args = (mt.tensor(x), mt.tensor(np.where(ST == 0, 0.0, S)))
        for k in (0, 1):
            close(mt.func.jacfwd(f, argnums=k)(*args), mt.func.jacrev(f, argnums=k)(*args), "prod jacobian")


def test_prod_refuses_double_backward_with_two_zeros_in_a_place_as_torch():
    for lib in (torch, mt):
        x = lib.ones(2, dtype=lib.float64, requires_grad=True)
        s = lib.tensor([0.0, 0.0, 3.0], dtype=lib.float64, requires_grad=True)
        y = x.scatter_reduce(0, lib.tensor([0, 0, 1]), s, "prod")
        g, = lib.autograd.grad(y.sum(), s, create_graph=True)
        close(g, np.array([0.0, 0.0, 1.0]), "first order")
        assert g.grad_fn.name().endswith("Error")  # (torch::autograd::Error in torch)
        with pytest.raises(RuntimeError, match="Double backward is unsupported"):
            lib.autograd.grad(g.sum(), s)


@pytest.mark.parametrize("reduce", REDUCTIONS[1:])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce_as_torch(reduce, include_self):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's "index_reduce() is in beta"
        check_op(lambda L, a, b, i: a.index_reduce(0, i, b, reduce, include_self=include_self), X,
                 rng.standard_normal((3, 4)), np.array([0, 2, 0]), grad_fn="IndexReduceBackward0", grad_tol=1e-8,
                 jvp=False)
    for lib in (torch, mt):  # torch has no forward-mode formula for index_reduce
        with pytest.raises(NotImplementedError):
            lib.func.jvp(lambda a: a.index_reduce(0, lib.tensor([0, 2, 0]), a, reduce), (lib.tensor(X),),
                         (lib.tensor(X),))


def test_integer_mean_floors_and_inplace_forms_as_torch():
    out = []
    for lib in (torch, mt):
        ints = [lib.zeros(3, dtype=lib.int64).scatter_reduce(0, lib.tensor([0, 0, 1]), lib.tensor(v), "mean",
                                                            include_self=inc)
                for v, inc in (([1, 2, 4], True), ([-1, -2, 4], False))]
        y = lib.tensor(X, requires_grad=True)
        z = y * 1
        z.scatter_reduce_(0, lib.tensor(IDX), lib.tensor(S), "amax")
        w = y * 1
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            w.index_reduce_(0, lib.tensor([0, 1]), lib.tensor(S), "prod", include_self=False)
        g, = lib.autograd.grad((z.sin() + w.cos()).sum(), y)
        out.append(ints + [z, w, g, z.grad_fn.name(), w.grad_fn.name()])
    for a, b in zip(out[1][:5], out[0][:5]):
        close(a, b, "in place")
    assert out[1][5:] == out[0][5:]


def test_vmap_as_torch():
    Xb, Sb = rng.standard_normal((5, 3, 4)), rng.standard_normal((5, 2, 4))
    res = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # torch has a batching rule: no per-example loop, no warning
        for lib in (torch, mt):
            i = lib.tensor(IDX)
            a = lib.func.vmap(lambda x, s: x.scatter_reduce(0, i, s, "amax"))(lib.tensor(Xb), lib.tensor(Sb))
            b = lib.func.vmap(lambda x: x.scatter_reduce(0, i, lib.tensor(S), "mean", include_self=False),
                              in_dims=1)(lib.tensor(Xb).transpose(0, 1).contiguous())
            g = lib.func.vmap(lib.func.grad(lambda x, s: x.scatter_reduce(0, i, s, "amin").sin().sum(),
                                            argnums=(0, 1)))(lib.tensor(Xb), lib.tensor(Sb))
            res.append((a, b) + g)
    for p, q in zip(*res):
        close(p, q, "vmap")


ERRORS = [
    lambda L, x: x.scatter_reduce(0, L.tensor([[0, 5]]), x[:1, :2], "sum"),
    lambda L, x: x.scatter_reduce(0, L.tensor([[0, 1]]), x[:1, :2].float(), "sum"),
    lambda L, x: x.scatter_reduce(0, L.tensor([0, 1]), x[:1, :2], "sum"),
    lambda L, x: x.scatter_reduce(0, L.tensor([[0, 1, 1, 1, 1]]), x[:1, :2], "sum"),
    lambda L, x: x.scatter_reduce(0, L.tensor([[0, 1]]), x[:1, :2], "median"),
    lambda L, x: x.index_reduce(0, L.tensor([0, 5]), x[:2], "prod"),
    lambda L, x: x.index_reduce(0, L.tensor([0, 1]), x[:3], "prod"),
    lambda L, x: x.index_reduce(0, L.tensor([0, 1]), x[:2].float(), "prod"),
    lambda L, x: x.index_reduce(0, L.tensor([[0, 1]]), x[:2], "prod"),
    lambda L, x: x.index_reduce(0, L.tensor([0, 1]), x[:2], "sum"),
    lambda L, x: x.requires_grad_().scatter_reduce_(0, L.tensor([[0, 1]]), x[:1, :2].detach(), "sum"),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_errors_as_torch(k):
    kinds = []
    for lib in (torch, mt):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ERRORS[k](lib, lib.tensor(X))
            kinds.append(None)
        except Exception as e:  # noqa: BLE001 (the kind is what is compared)
            kinds.append(type(e))
    assert kinds[0] is not None and kinds[1] is kinds[0]
