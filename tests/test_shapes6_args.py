"""Arguments of movedim, var/std and logsumexp beside torch 2.13 (exception types and what the messages
name), and var/std's two-pass arithmetic (the same numbers as numpy's np.var, which it replaced)."""
import numpy as np
import pytest
import torch

import microtorch as mt
from microtorch.ops import reduce as mt_reduce

LIBS = (torch, mt)
X = np.arange(12.0).reshape(2, 6) ** 1.5


def _outcome(f):
    try:
        r = f()
    except Exception as e:  # noqa: BLE001  (the type is what is compared)
        return type(e).__name__
    return tuple(r.shape), r.grad_fn and r.grad_fn.name(), np.round(r.detach().numpy(), 10).tolist()


@pytest.mark.parametrize("source, destination", [(None, 1), (0, None), ((0, 0), (1, 0)), ((0, 1), (1, 1)),
                                                 ((0, 1), (1,)), (2, 1), ((0, 1), (1, 0)), (-1, 0)])
def test_movedim_arguments(source, destination):
    got = {lib: _outcome(lambda: lib.movedim(lib.tensor(X, requires_grad=True), source, destination)) for lib in LIBS}
    assert got[mt] == got[torch]


@pytest.mark.parametrize("name", ["source", "destination"])
def test_movedim_names_the_repeated_argument(name):
    args = {"source": ((0, 0), (1, 0)), "destination": ((0, 1), (1, 1))}[name]
    for lib in LIBS:
        with pytest.raises(RuntimeError, match=f"movedim: repeated dim in `{name}`"):
            lib.movedim(lib.tensor(X), *args)


@pytest.mark.parametrize("op", ["var", "std"])
@pytest.mark.parametrize("args, kwargs", [((1,), {"unbiased": True, "correction": 0}),
                                          ((None,), {"unbiased": False, "correction": 1}),
                                          ((1, True), {}), ((None, False, True), {}), ((1,), {"correction": 0.5}),
                                          (((0, 1), False), {}), ((), {"dim": 1, "unbiased": False})])
def test_var_std_forms(op, args, kwargs):
    got = {lib: _outcome(lambda: getattr(lib, op)(lib.tensor(X, requires_grad=True), *args, **kwargs))
           for lib in LIBS}
    assert got[mt] == got[torch]


@pytest.mark.parametrize("op", ["var", "std"])
@pytest.mark.parametrize("unbiased", [True, False])
def test_var_std_positional_unbiased(op, unbiased):
    """torch's var(input, unbiased) form, in reduce's own function (the guard in front of it still reads a
    bool there as a wrong dim: see the report of this round)."""
    want = getattr(torch, op)(torch.tensor(X), unbiased)
    got = getattr(mt_reduce, op)(mt.tensor(X), unbiased)
    assert got.shape == () and np.isclose(got.item(), want.item(), rtol=1e-14)
    for kwargs in ({"keepdim": True}, {"correction": 0}):
        with pytest.raises(TypeError):
            getattr(torch, op)(torch.tensor(X), unbiased, **kwargs)
        with pytest.raises(TypeError, match=f"{op}\\(\\): {op}\\(input, unbiased\\) takes no other argument"):
            getattr(mt_reduce, op)(mt.tensor(X), unbiased, **kwargs)


@pytest.mark.parametrize("shape, dim, keepdim", [((2, 6), (), False), ((2, 6), [], False), ((2, 6), (), True),
                                                 ((3,), (), False), ((3,), (), True), ((0, 2), (), False),
                                                 ((0, 2), (), True), ((), (), False), ((2, 6), None, False),
                                                 ((2, 6), (0, 1), False)])
def test_logsumexp_over_no_dims(shape, dim, keepdim):
    a = np.linspace(-1, 2, int(np.prod(shape))).reshape(shape)
    got = {lib: _outcome(lambda: lib.logsumexp(lib.tensor(a, requires_grad=True), dim, keepdim)) for lib in LIBS}
    assert got[mt] == got[torch]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("dims", [None, (0,), (1,), (0, 1)])
@pytest.mark.parametrize("correction", [0, 1, 2, 0.5])
def test_variance_is_numpys_numbers(dtype, dims, correction):
    rng = np.random.default_rng(3)
    for shape in [(4, 5), (1, 7), (3, 1), (0, 3), (50, 40)]:
        a = (rng.standard_normal(shape) * 1e3 + 7).astype(dtype)
        a[0:1] = 2.5  # a row of equal values: exactly 0 where torch's Welford update gives 0
        with np.errstate(all="ignore"):  # (float32 accumulates in float64, as torch's Welford pass: round 20)
            want = np.var(a.astype(np.float64), axis=dims, ddof=correction).astype(dtype)
            if want.size > 1 and a.size > want.size * correction:
                top = np.max(a, axis=dims)
                want[(top == np.min(a, axis=dims)) & np.isfinite(top)] = 0
            got = mt_reduce._variance(a, dims, correction, False)
        assert got.dtype == want.dtype and np.array_equal(got, want, equal_nan=True)


_ERROR_CASES = [  # (shape, the call): torch's exception type, or torch's result shape
    ((2, 3), lambda x: x.view(-1, -4)), ((2, 3), lambda x: x.view(-1, -1)), ((2, 3), lambda x: x.reshape(-2, -1)),
    ((0,), lambda x: x.reshape(-1, 0)), ((0,), lambda x: x.reshape(-2, 0)), ((2, 3), lambda x: x.reshape(7, -1)),
    ((2, 3), lambda x: x.view(2, -1, 0)), ((1,), lambda x: x.split(-1, -2)), ((2, 3), lambda x: x.split([-1, 4], 1)),
    ((1, 1, 2), lambda x: x.narrow(-2, -2, -2)), ((0,), lambda x: x.narrow(0, 2, -1)), ((3,), lambda x: x.narrow(0, 2, 2)),
    ((), lambda x: x.unflatten(-3, (4, 2))), ((), lambda x: x.unflatten(0, (1,))), ((2, 3, 4), lambda x: x.permute(-3, 0, -4)),
    ((1, 1, 2), lambda x: x.permute(0, 0, 4)), ((2, 3), lambda x: x.permute(5, 0)), ((2, 3), lambda x: x.permute(0, 1, 2)),
    ((0,), lambda x: x.repeat(4, 4, 4, -2)), ((0,), lambda x: x.repeat(-1)), ((2, 0), lambda x: x.tile((3, -4))),
    ((2, 3), lambda x: x.repeat(-1, 1)), ((2, 3), lambda x: x.repeat()), ((2, 0), lambda x: x.expand()),
    ((1,), lambda x: x.sum_to_size()), ((2, 3), lambda x: x.sum_to_size(())), ((2, 3), lambda x: x.chunk(2, 5)),
]


@pytest.mark.parametrize("i", range(len(_ERROR_CASES)))
def test_shape_op_errors_in_torchs_order(i):
    shape, call = _ERROR_CASES[i]
    got = {}
    for lib in LIBS:
        try:
            got[lib] = tuple(call(lib.zeros(shape, requires_grad=True)).shape)
        except Exception as e:  # noqa: BLE001  (the type is what is compared)
            got[lib] = type(e).__name__
    assert got[mt] == got[torch]


def test_repeat_of_an_empty_dim_by_a_negative_count_is_empty():
    got = {}
    for lib in LIBS:
        y = lib.zeros(0, 2, requires_grad=True).repeat(-3, 2)  # (torch's backward of it fails in a reshape)
        got[lib] = tuple(y.shape), y.grad_fn.name()
    assert got[mt] == got[torch]


@pytest.mark.parametrize("call", [lambda lib, x: x.norm(dim=()), lambda lib, x: x.norm(p=2, dim=[], keepdim=True),
                                  lambda lib, x: lib.linalg.vector_norm(x, dim=()), lambda lib, x: x.norm(dim=(0, 1, 1)),
                                  lambda lib, x: x.norm(p="fro", dim=(0, 1, 2)), lambda lib, x: x.norm(p=1, dim=(0, 1)),
                                  lambda lib, x: x.norm(dim=(0, 1))])
def test_norm_dims_as_torch(call):
    got = {lib: _outcome(lambda: call(lib, lib.tensor(X[:, :3], requires_grad=True))) for lib in LIBS}
    assert got[mt] == got[torch]
