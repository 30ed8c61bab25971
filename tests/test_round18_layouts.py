"""One-input elementwise ops lay their result out as torch's TensorIterator does: in the input's order, with its
size-1 dims' strides (numpy keeps neither for a diagonal or a permutation). Those strides decide later whether a
matmul folds (MvBackward0) or takes bmm, whether view() works (fuzz seed 4,078,807: pow of a diagonal, then @)."""
import warnings

import pytest
import torch

import microtorch as mt

LAYOUTS = {
    "diagonal": lambda L: L.rand(2, 2, 1, 2, dtype=L.float64).diagonal(),
    "transposed": lambda L: L.rand(3, 4, dtype=L.float64).t(),
    "permuted": lambda L: L.rand(2, 3, 4, dtype=L.float64).permute(2, 0, 1),
    "size-1 permuted": lambda L: L.rand(3, 1, 4, dtype=L.float64).permute(1, 2, 0),
    "every other": lambda L: L.rand(4, 6, dtype=L.float64)[:, ::2],
}
OPS = {
    "neg": lambda L, v: -v, "pow 0": lambda L, v: L.pow(v, 0.0), "pow 2": lambda L, v: v ** 2,
    "pow 0.5": lambda L, v: v ** 0.5, "square": lambda L, v: v.square(), "relu": lambda L, v: v.relu(),
    "clamp": lambda L, v: v.clamp(0.2, 0.8), "clamp min": lambda L, v: v.clamp(min=0.3), "sign": lambda L, v: v.sign(),
    "sgn": lambda L, v: v.sgn(), "angle": lambda L, v: v.angle(), "trunc": lambda L, v: v.trunc(),
    "round": lambda L, v: v.round(), "round(decimals=2)": lambda L, v: v.round(decimals=2),
    "frac": lambda L, v: v.frac(), "atanh": lambda L, v: v.atanh(), "sinc": lambda L, v: v.sinc(),
    "logit": lambda L, v: v.logit(eps=0.1), "digamma": lambda L, v: v.digamma(),
    "polygamma": lambda L, v: L.polygamma(2, v), "gelu": lambda L, v: L.nn.functional.gelu(v),
    "softplus": lambda L, v: L.nn.functional.softplus(v, beta=2), "elu": lambda L, v: L.nn.functional.elu(v),
    "selu": lambda L, v: L.nn.functional.selu(v), "celu": lambda L, v: L.nn.functional.celu(v),
    "leaky_relu": lambda L, v: L.nn.functional.leaky_relu(v),
    "threshold": lambda L, v: L.nn.functional.threshold(v, 0.5, 2.0),
    "softshrink": lambda L, v: L.nn.functional.softshrink(v, 0.3),
    "hardshrink": lambda L, v: L.nn.functional.hardshrink(v, 0.3),
    "isnan": lambda L, v: v.isnan(), "isinf": lambda L, v: v.isinf(), "isfinite": lambda L, v: v.isfinite(),
    "isposinf": lambda L, v: v.isposinf(), "signbit": lambda L, v: v.signbit(),
    "logical_not": lambda L, v: L.logical_not(v), "bitwise_not": lambda L, v: ~(v > 0.5),
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("op", OPS)
def test_one_input_ops_lay_out_their_result_as_torch(op, layout):
    strides = []
    for L in (torch, mt):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            strides.append(OPS[op](L, LAYOUTS[layout](L)).stride())
    assert strides[1] == strides[0]


def test_a_relaid_result_is_still_the_one_saved():
    """relu saves its result: relaid, the saved tensor is the output itself, so changing it in place makes backward
    refuse, as torch's"""
    for L in (torch, mt):
        x = L.rand(2, 2, 1, 2, dtype=L.float64, requires_grad=True)
        y = x.diagonal().relu()
        assert y.grad_fn._saved_result.stride() == y.stride()
        y.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


def test_a_matmul_after_pow_of_a_diagonal_folds_as_torch():
    names = []
    for L in (torch, mt):
        v = L.pow(L.zeros(2, 2, 1, 2, dtype=L.float64, requires_grad=True).diagonal(), 0.0)
        out = v @ L.tensor([0.0, 1.0], dtype=L.float64)
        names.append([out.grad_fn.name()] + [n.name() for n, _ in out.grad_fn.next_functions if n is not None])
    assert names[0] == ["UnsafeViewBackward0", "MvBackward0"]
    assert names[1] == names[0]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("factory", ["rand_like", "randn_like", "randint_like"])
def test_random_like_factories_keep_the_size_one_dims_strides(factory, layout):
    """as empty_like (preserve_format): the input's strides, a size-1 dim's included, and torch's draws"""
    seen = []
    for L in (torch, mt):
        L.manual_seed(3)
        x = LAYOUTS[layout](L)
        out = getattr(L, factory)(x, 5) if factory == "randint_like" else getattr(L, factory)(x)
        seen.append((out.stride(), out.tolist()))
    assert seen[1] == seen[0]
