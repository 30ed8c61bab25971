"""The smaller torch.* functions of microtorch/_torch_misc.py against torch 2.13: values and gradients (their
grad_fn names are those of the ops they are composed of), dtype information, samplers' shapes and ranges, the
in-place torch.f_(x) forms and errors."""
import warnings

import numpy as np
import pytest
import torch

import microtorch as mt
from op_oracle import close

rng = np.random.default_rng(0)


def r(*shape):
    return rng.standard_normal(shape)


CASES = {
    "tensordot 2": (lambda L, a, b: L.tensordot(a, b), r(2, 3, 4), r(3, 4, 5)),
    "tensordot pairs": (lambda L, a, b: L.tensordot(a, b, ([0, 2], [2, 0])), r(2, 3, 4), r(4, 5, 2)),
    "tensordot 0": (lambda L, a, b: L.tensordot(a, b, 0), r(2, 3), r(4)),
    "block_diag": (lambda L, a, b, c: L.block_diag(a, b, c), r(2, 3), r(3), r()),
    "cartesian_prod": (lambda L, a, b: L.cartesian_prod(a, b), r(3), r(2)),
    "combinations": (lambda L, a: L.combinations(a, 3), r(5)),
    "combinations with replacement": (lambda L, a: L.combinations(a, 2, with_replacement=True), r(3)),
    "trapezoid": (lambda L, y: L.trapezoid(y), r(3, 5)),
    "trapezoid x": (lambda L, y, x: L.trapezoid(y, x, dim=0), r(5, 3), r(5)),
    "trapezoid dx": (lambda L, y: L.trapz(y, dx=0.5), r(3, 5)),
    "cumulative_trapezoid": (lambda L, y, x: L.cumulative_trapezoid(y, x), r(3, 5), r(3, 5)),
    "gradient": (lambda L, f: L.stack(L.gradient(f)), r(4, 5)),
    "gradient spacing edge 2": (lambda L, f: L.gradient(f, spacing=[0.5], dim=1, edge_order=2)[0], r(4, 5)),
    "std_mean": (lambda L, x: L.stack(L.std_mean(x, 1)), r(3, 4)),
    "var_mean": (lambda L, x: L.stack(L.var_mean(x, 0, correction=0, keepdim=True)), r(3, 4)),
    "frobenius_norm": (lambda L, x: L.frobenius_norm(x, [0, 2]), r(3, 4, 2)),
    "nuclear_norm": (lambda L, x: L.nuclear_norm(x), r(4, 3)),
    "nuclear_norm dims": (lambda L, x: L.nuclear_norm(x, [0, 2], keepdim=True), r(4, 2, 3)),
    "complex": (lambda L, a, b: L.view_as_real(L.complex(a, b) * (1 - 2j)), r(3), r(3)),
    "polar": (lambda L, a, b: L.view_as_real(L.polar(a, b)), np.abs(r(3)), r(3)),
    "view_as_complex": (lambda L, a: L.view_as_real(L.view_as_complex(a) ** 2), r(3, 2)),
    "fill": (lambda L, x, v: L.fill(x, v) * x, r(3), r()),
    "rsub": (lambda L, x, y: L.rsub(x, y, alpha=2), r(3), r(3)),
    "broadcast_tensors": (lambda L, a, b: L.stack(L.broadcast_tensors(a, b)), r(3, 1), r(4)),
    "chain_matmul": (lambda L, a, b, c: L.chain_matmul(a, b, c), r(2, 3), r(3, 4), r(4, 2)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_values_and_gradients_as_torch(name):
    f, *arrays = CASES[name]
    outs, grads = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (chain_matmul's deprecation)
        for lib in (torch, mt):
            args = [lib.tensor(a, requires_grad=True) for a in arrays]
            y = f(lib, *args)
            seed = lib.tensor(np.random.default_rng(1).standard_normal(tuple(y.shape)))
            grads.append(lib.autograd.grad(y, args, seed, allow_unused=True))
            outs.append(y)
    close(outs[1], outs[0], name)
    for a, b in zip(grads[1], grads[0]):
        if a is not None or b is not None:
            close(a if a is not None else np.zeros(tuple(b.shape)), b, f"{name} gradient")


def test_vander_as_torch():
    """values as torch's; torch 2.13 cannot differentiate its own vander (an in-place step), so the gradient is
    checked numerically"""
    x = r(4)
    for args in ((), (6, True)):
        close(mt.vander(mt.tensor(x), *args), torch.vander(torch.tensor(x), *args), "vander")
        assert mt.autograd.gradcheck(lambda t: mt.vander(t, *args), (mt.tensor(x, requires_grad=True),))
    close(mt.vander(mt.tensor([1, 2, 3])), torch.vander(torch.tensor([1, 2, 3])), "integer vander")


@pytest.mark.parametrize("window", ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
                                    "kaiser_window"])
@pytest.mark.parametrize("n", [0, 1, 2, 7, 8])
def test_windows_as_torch(window, n):
    for periodic in (True, False):
        t, m = (getattr(lib, window)(n, periodic, dtype=lib.float64) for lib in (torch, mt))
        close(m, t, f"{window}({n}, {periodic})", 1e-12)
    assert getattr(mt, window)(4).dtype == mt.float32


def test_shapes_indices_and_sets_as_torch():
    assert tuple(mt.broadcast_shapes((2, 1), (3,), 1)) == tuple(torch.broadcast_shapes((2, 1), (3,), 1))
    for f in (lambda L: L.tril_indices(3, 4, 1), lambda L: L.triu_indices(4, 3, -1),
              lambda L: L.stack(L.unravel_index(L.tensor([5, 0, -1]), (2, 3))),
              lambda L: L.isin(L.tensor([1, 2, 3, 4]), L.tensor([2, 5, 4])),
              lambda L: L.isin(L.tensor([1, 2, 3]), 2, invert=True),
              lambda L: L.scalar_tensor(3), lambda L: L.asarray([1, 2]),
              lambda L: L.empty_permuted((2, 3), (1, 0)).shape,
              lambda L: L.histogramdd(L.tensor(np.arange(12.0).reshape(6, 2)), [2, 3]).hist):
        a, b = f(torch), f(mt)
        if isinstance(a, torch.Size):
            assert tuple(a) == tuple(b)
        else:
            close(b, a, "indices")
            assert str(b.dtype).split(".")[1] == str(a.dtype).split(".")[1]
    with pytest.raises(RuntimeError):
        mt.broadcast_shapes((2,), (3,))
    t = mt.ones(2)
    assert mt.asarray(t) is t and mt.asarray(t, copy=True) is not t


def test_dtype_information_as_torch():
    for name in ("float32", "float64", "float16"):
        a, b = torch.finfo(getattr(torch, name)), mt.finfo(getattr(mt, name))
        assert (a.bits, a.eps, a.max, a.min, a.tiny, a.resolution, a.dtype) == \
            (b.bits, b.eps, b.max, b.min, b.tiny, b.resolution, b.dtype)
    for name in ("int8", "int16", "int32", "int64", "uint8"):
        a, b = torch.iinfo(getattr(torch, name)), mt.iinfo(getattr(mt, name))
        assert (a.bits, a.max, a.min, a.dtype) == (b.bits, b.max, b.min, b.dtype)
    assert mt.finfo().eps == torch.finfo().eps
    names = ["bool", "uint8", "int8", "int32", "int64", "float16", "float32", "float64", "complex64"]
    for x in names:
        for y in names:
            assert mt.can_cast(getattr(mt, x), getattr(mt, y)) == torch.can_cast(getattr(torch, x), getattr(torch, y))
    for lib in (torch, mt):
        with pytest.raises(TypeError):
            lib.finfo(lib.int32)
        with pytest.raises(TypeError):
            lib.iinfo(lib.float32)
    assert mt.typename(mt.ones(2).double()) == "microtorch.DoubleTensor" and mt.typename(3) == "int"
    assert mt.typename(mt.nn.Linear(2, 2)) == "microtorch.nn.modules.linear.Linear"


def test_inplace_functions_and_predicates_as_torch():
    for name, args in (("abs_", ()), ("clamp_", (-0.5, 0.5)), ("sigmoid_", ()), ("zero_", ()), ("fill_", (2.0,)),
                       ("round_", ()), ("nan_to_num_", ())):
        vals, data = [], r(4)
        for lib in (torch, mt):
            x = lib.tensor(data)
            assert getattr(lib, name)(x, *args) is x
            vals.append(x)
        close(vals[1], vals[0], name)
    for lib in (torch, mt):
        x = lib.tensor([1.0, -2.0])
        assert not lib.is_conj(x) and lib.is_signed(x) and lib.is_same_size(x, x) and lib.is_nonzero(x[:1])
        assert [tuple(p.shape) for p in lib.split_with_sizes(x, [1, 1])] == [(1,), (1,)]


def test_samplers_generators_and_flags():
    gen = mt.Generator().manual_seed(3)
    c = mt.binomial(mt.full((1000,), 10.0), mt.full((1000,), 0.3), generator=gen)
    assert c.dtype == mt.float32 and 0 <= float(c.min()) and float(c.max()) <= 10 and abs(float(c.mean()) - 3) < 0.3
    p = mt.poisson(mt.full((1000,), 4.0))
    assert abs(float(p.mean()) - 4) < 0.4 and bool((p == p.round()).all())
    mt.manual_seed(5)
    a = mt.rand(3)
    mt.default_generator.manual_seed(5)
    assert mt.equal(mt.rand(3), a) and mt.default_generator.initial_seed() == 5
    mt.set_anomaly_enabled(True)
    assert mt.is_anomaly_enabled()
    mt.set_anomaly_enabled(False)
    assert not mt.is_anomaly_enabled()
    assert mt.newaxis is None and mt.has_lapack and mt.has_spectral


def test_embedding_renorm_as_torch():
    w = np.abs(r(5, 3)) * 3
    out = []
    for lib in (torch, mt):
        t = lib.tensor(w)
        with lib.no_grad():
            lib.embedding_renorm_(t, lib.tensor([0, 2, 2]), 1.0, 2.0)
        out.append(t)
    close(out[1], out[0], "embedding_renorm_", 1e-7)


def test_errors_as_torch():
    bad = [lambda L: L.tensordot(L.ones(2, 3), L.ones(4, 3), 1), lambda L: L.block_diag(L.ones(1, 1, 1)),
           lambda L: L.combinations(L.ones(2, 2)), lambda L: L.vander(L.ones(2, 2)),
           lambda L: L.gradient(L.ones(3), edge_order=3), lambda L: L.view_as_complex(L.ones(3, 3)),
           lambda L: L.view_as_real(L.ones(3))]
    for f in bad:
        kinds = []
        for lib in (torch, mt):
            try:
                f(lib)
                kinds.append(None)
            except Exception as e:  # noqa: BLE001 (the kind is what is compared)
                kinds.append(type(e))
        assert kinds[0] is not None and kinds[1] is kinds[0], f


def test_lowrank_decompositions_match_torch_where_exact():
    """torch's are randomized approximations; for a matrix of rank <= q they are exact, as microtorch's are"""
    a = r(6, 3) @ r(3, 5)
    for f in (lambda L, t: L.svd_lowrank(t, q=4), lambda L, t: L.pca_lowrank(t, q=4)):
        (ut, st, vt), (um, sm, vm) = f(torch, torch.tensor(a)), f(mt, mt.tensor(a))
        close(sm[:3], st[:3], "singular values", 1e-8)
        close(um[:, :3] @ mt.diag(sm[:3]) @ vm[:, :3].T, ut[:, :3] @ torch.diag(st[:3]) @ vt[:, :3].T, "product",
              1e-8)


@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min", "prod"])
def test_segment_reduce_as_torch(reduce):
    d = r(6, 2)
    res = []
    for lib in (torch, mt):
        t = lib.tensor(d, requires_grad=True)
        a = lib.segment_reduce(t, reduce, lengths=lib.tensor([2, 0, 4]), unsafe=True)
        b = lib.segment_reduce(t, reduce, offsets=lib.tensor([0, 2, 2, 6]), initial=0.5)
        g, = lib.autograd.grad((b * b).sum(), t)
        res.append([a, b, g])
    for x, y in zip(res[1], res[0]):
        close(x, y, f"segment_reduce {reduce}")
