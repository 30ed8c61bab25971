"""Reductions beside torch 2.13: max/min over a dim of a 0-d tensor (values, indices, errors, and the
graph of their gradients to the fourth order: ScatterBackward0, GatherBackward0, ScatterAddBackward0;
torch's scatter nodes also have an edge to None for the zeros they scatter into, which ours leave out)."""
import numpy as np
import pytest
import torch

import microtorch as mt

LIBS = (torch, mt)


def _edges(fn):
    """The named edges (torch's scatter into zeros also has an edge to None for the zeros; ours does not)."""
    return [f.name() for f, _ in fn.next_functions if f is not None] if fn is not None else None


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("dim, keepdim", [(0, False), (-1, True)])
def test_max_min_over_a_dim_of_a_0d_tensor(op, dim, keepdim):
    got = {}
    for lib in LIBS:
        s = lib.tensor(2.5, dtype=lib.float64, requires_grad=True)
        w = lib.tensor(1.5, dtype=lib.float64, requires_grad=True)
        v, i = getattr(lib, op)(s, dim, keepdim)
        g, = lib.autograd.grad(v, s, w, create_graph=True)  # ScatterBackward0 (zeros, w)
        h, = lib.autograd.grad(g, w, lib.tensor(3.0, dtype=lib.float64, requires_grad=True), create_graph=True)
        u = lib.tensor(0.5, dtype=lib.float64, requires_grad=True)
        h2, = lib.autograd.grad(g, w, u, create_graph=True)  # GatherBackward0, whose own gradient
        k, = lib.autograd.grad(h2, u, lib.tensor(2.0, dtype=lib.float64, requires_grad=True),
                               create_graph=True)  # is ScatterAddBackward0
        got[lib] = (v.item(), i.item(), str(i.dtype).split(".")[1], tuple(v.shape), tuple(i.shape),
                    v.grad_fn.name(), g.item(), g.grad_fn.name(), _edges(g.grad_fn), h.item(), h.grad_fn.name(),
                    _edges(h.grad_fn), k.item(), k.grad_fn and k.grad_fn.name())
    assert got[mt] == got[torch]


@pytest.mark.parametrize("op", ["max", "min", "amax", "amin", "argmax", "argmin"])
@pytest.mark.parametrize("dim", [1, -2])
def test_a_dim_out_of_range_of_a_0d_tensor(op, dim):
    for lib in LIBS:
        with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-1, 0\]"):
            getattr(lib, op)(lib.tensor(1.0), dim)


def test_max_of_a_0d_tensor_in_forward_mode():
    got = {}
    for lib in LIBS:
        fwad = lib.autograd.forward_ad
        with fwad.dual_level():
            d = fwad.make_dual(lib.tensor(2.0, dtype=lib.float64), lib.tensor(4.0, dtype=lib.float64))
            got[lib] = fwad.unpack_dual(lib.max(d, 0).values).tangent.item()
    assert got[mt] == got[torch] == 4.0


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_max_min_over_a_dim_pick_torchs_values_and_indices(dtype):
    """Values from the array's max/min (not take_along_axis) except where a zero's sign depends on the index."""
    rng = np.random.default_rng(0)
    got = {lib: [] for lib in LIBS}
    for trial in range(120):
        shape = tuple(int(v) for v in rng.integers(1, 5, size=int(rng.integers(1, 4))))
        a = rng.choice([0.0, -0.0, 1.0, -1.0, np.nan, 2.0, np.inf, -np.inf], size=shape)
        a = {"int64": np.nan_to_num(a, posinf=3, neginf=-3), "bool": a != 0}.get(dtype, a)
        for lib in LIBS:
            x = lib.tensor(a).to(getattr(lib, dtype))
            for d in range(len(shape)):
                for op in ("max", "min"):
                    v, i = getattr(lib, op)(x, d, keepdim=bool(trial % 2))
                    vv = v.numpy().astype(float)
                    got[lib].append((np.signbit(vv).tolist(), np.nan_to_num(vv, nan=99).tolist(), i.numpy().tolist(),
                                     str(v.dtype).split(".")[1], tuple(v.shape)))
    assert got[mt] == got[torch]


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64"])
@pytest.mark.parametrize("call", [lambda x: x.prod(), lambda x: x.prod(1), lambda x: x.prod(1, keepdim=True),
                                  lambda x: x.all(1), lambda x: x.any(), lambda x: x.all()])
def test_prod_all_any_result_dtypes(dtype, call):
    got = {}
    for lib in LIBS:
        r = call(lib.tensor([[1, 0, 2], [3, 1, 1]]).to(getattr(lib, dtype)))
        got[lib] = str(r.dtype).split(".")[1], tuple(r.shape), r.numpy().tolist()
    assert got[mt] == got[torch]


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int32", "int64"])
def test_vector_norm_refuses_integers(dtype):
    for lib in LIBS:
        with pytest.raises(RuntimeError, match="linalg.vector_norm: Expected a floating point or complex tensor as "
                                               "input. Got"):
            lib.linalg.vector_norm(lib.tensor([1, 2]).to(getattr(lib, dtype)))


def test_float16_var_and_std_are_computed_in_float32_as_torch():
    rng = np.random.default_rng(5)
    got = {lib: [] for lib in LIBS}
    for _ in range(60):
        a = (rng.standard_normal((int(rng.integers(1, 6)), int(rng.integers(2, 40)))) * 10.0 ** rng.integers(-2, 3))
        for lib in LIBS:
            x = lib.tensor(a.astype(np.float16))
            for r in (x.var(), x.var(1), x.std(0, correction=0), x.std(), x.var(1, correction=0)):
                got[lib].append((str(r.dtype).split(".")[1], r.numpy().astype(float).tolist()))
    assert got[mt] == got[torch]


@pytest.mark.parametrize("values", [[1e300], [1e300, 1e300], [1e-300], [1e-300, 1e-300], [3e200, 4e200], [[1e300], [2.0]]])
@pytest.mark.parametrize("p", [2, 3, 1])
def test_norm_of_one_element_is_its_absolute_value(values, p):
    got = {}
    for lib in LIBS:
        x = lib.tensor(values, dtype=lib.float64, requires_grad=True)
        r = x.norm(p=p, dim=-1)
        r.sum().backward()
        got[lib] = [np.nan_to_num(v, nan=7.0).tolist() for v in (r.detach().numpy(), x.grad.numpy())]
    assert got[mt] == got[torch]


def test_reductions_and_their_gradients_at_nan_inf_and_equal_values():
    rng = np.random.default_rng(11)
    got = {lib: [] for lib in LIBS}
    for trial in range(150):
        shape = tuple(int(v) for v in rng.integers(1, 5, size=int(rng.integers(1, 4))))
        a = rng.standard_normal(shape)
        if trial % 5 == 0:
            a.flat[0] = [np.nan, np.inf, -np.inf, 0.0, 1e300][trial // 5 % 5]
        if trial % 7 == 0:
            a[...] = 2.5
        d, kd = int(rng.integers(0, len(shape))), bool(trial % 2)
        for lib in LIBS:
            for f in (lambda x: x.var(d, keepdim=kd), lambda x: x.std(d, keepdim=kd), lambda x: x.std(),
                      lambda x: x.max(d, keepdim=kd).values, lambda x: x.min(d, keepdim=kd).values,
                      lambda x: x.logsumexp((), keepdim=True), lambda x: x.norm(dim=()), lambda x: x.amax(d, kd)):
                x = lib.tensor(a, requires_grad=True)
                y = f(x)
                g, = lib.autograd.grad(y.sum(), x)
                got[lib].append([np.nan_to_num(v.detach().numpy(), nan=7e7, posinf=8e8, neginf=-8e8) for v in (y, g)])
    for ours, theirs in zip(got[mt], got[torch]):
        for u, v in zip(ours, theirs):
            assert u.shape == v.shape and np.allclose(u, v, rtol=1e-9, atol=1e-12)


def _tree(fn):
    return None if fn is None else [fn.name()] + [_tree(f) for f, _ in fn.next_functions]


@pytest.mark.parametrize("call", [lambda lib, x: x.mean(dtype=lib.float64), lambda lib, x: x.mean(1, dtype=lib.float64),
                                  lambda lib, x: x.prod(dtype=lib.float64), lambda lib, x: x.prod(1, dtype=lib.float64),
                                  lambda lib, x: x.norm(dtype=lib.float64), lambda lib, x: x.sum(1, dtype=lib.float64),
                                  lambda lib, x: lib.linalg.vector_norm(x, 3, dtype=lib.float64)])
def test_a_reduction_in_another_dtype_is_one_node(call):
    """torch computes in the dtype asked for inside the op (no ToCopyBackward0 before it); the gradient comes
    back in x's dtype."""
    got = {}
    for lib in LIBS:
        x = lib.tensor(np.arange(1.0, 7.0).reshape(2, 3), dtype=lib.float32, requires_grad=True)
        y = call(lib, x)
        g, = lib.autograd.grad(y.sum(), x, create_graph=True)
        got[lib] = (str(y.dtype).split(".")[1], _tree(y.grad_fn), y.detach().numpy().round(10).tolist(),
                    str(g.dtype).split(".")[1], _tree(g.grad_fn), g.detach().numpy().round(6).tolist())
    assert got[mt] == got[torch]


@pytest.mark.parametrize("x_dtype, dtype", [("float32", "float16"), ("float32", "int64"), ("float32", "complex64"),
                                            ("int64", "float64")])
def test_vector_norm_dtype_checks(x_dtype, dtype):
    messages = {}
    for lib in LIBS:
        with pytest.raises(RuntimeError) as e:
            lib.linalg.vector_norm(lib.tensor([1.0, 2.0]).to(getattr(lib, x_dtype)), dtype=getattr(lib, dtype))
        messages[lib] = str(e.value)
    assert messages[mt].startswith(messages[torch].split(" (convert")[0])


@pytest.mark.parametrize("x_dtype, dtype", [("int64", None), ("float32", "int64")])
def test_mean_dtype_checks(x_dtype, dtype):
    messages = {}
    for lib in LIBS:
        with pytest.raises(RuntimeError) as e:
            lib.tensor([1, 2]).to(getattr(lib, x_dtype)).mean(dtype=dtype and getattr(lib, dtype))
        messages[lib] = str(e.value)
    assert messages[mt].startswith(messages[torch])
