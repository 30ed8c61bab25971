"""Calls written with torch's keyword names run unchanged on microtorch (issue 13, signatures).

Every function docs/api-coverage.md flagged for a keyword difference is called here the way torch's
documentation names its parameters (`torch.eq(input=a, other=b)`), on torch and on microtorch, and
the results compared. A renamed parameter that microtorch does not take fails with a TypeError."""
import numpy as np
import pytest

import microtorch

torch = pytest.importorskip("torch")

_RNG = np.random.default_rng(0)
A = _RNG.standard_normal((3, 4)).round(3)  # (no ties: sorts and top-k agree on the order)
B = _RNG.standard_normal((3, 4)).round(3)
SQ = _RNG.standard_normal((3, 3)).round(3)


def _both(array):
    return torch.tensor(array), microtorch.tensor(array)


def _arrays(value):
    """A result as a flat list of numpy arrays or plain values (tuples and named tuples unpacked)."""
    if isinstance(value, (tuple, list)):
        return [x for v in value for x in _arrays(v)]
    if hasattr(value, "detach"):
        return [value.detach().numpy()]
    return [value]


def _check(name, kwargs, namespace="", method=False):
    """Call `name` with keyword arguments (arrays become tensors) on both libraries and compare."""
    results = []
    for lib, pick in ((torch, 0), (microtorch, 1)):
        kw = {k: _both(v)[pick] if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
        if method:
            fn = getattr(kw.pop("self"), name)
        else:
            fn = getattr(getattr(lib, namespace) if namespace else lib, name)
        results.append(_arrays(fn(**kw)))
    expected, got = results
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-5, atol=1e-6)


BINARY = ["eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal", "not_equal",
          "logical_and", "logical_or", "logical_xor", "fmod", "remainder"]


@pytest.mark.parametrize("name", BINARY)
def test_binary_input_other(name):
    _check(name, dict(input=A, other=B))
    if not name.startswith("logical"):  # (torch's logical ops take a tensor only)
        _check(name, dict(input=A, other=0.5))


@pytest.mark.parametrize("name", ["eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal",
                                  "less_equal", "not_equal", "logical_and", "logical_or", "logical_xor"])
def test_binary_methods_take_other(name):
    _check(name, dict(self=A, other=B), method=True)


@pytest.mark.parametrize("name", ["ceil", "floor", "trunc", "fix", "round", "nonzero", "is_floating_point",
                                  "is_complex", "numel"])
def test_unary_input(name):
    _check(name, dict(input=A * 3))


@pytest.mark.parametrize("decimals", [0, 2, -1])
def test_round_decimals(decimals):
    _check("round", dict(input=A * 30, decimals=decimals))
    _check("round", dict(self=A * 30, decimals=decimals), method=True)


@pytest.mark.parametrize("name, kwargs", [
    ("cumsum", dict(input=A, dim=1)),
    ("diag", dict(input=SQ, diagonal=1)),
    ("tril", dict(input=SQ, diagonal=-1)),
    ("triu", dict(input=SQ, diagonal=1)),
    ("softmax", dict(input=A, dim=0)),
    ("log_softmax", dict(input=A, dim=1)),
    ("sort", dict(input=A, dim=0, descending=True, stable=True)),
    ("topk", dict(input=A, k=2)),
    ("topk", dict(input=A, k=2, dim=0, largest=False)),
    ("nonzero", dict(input=A > 0, as_tuple=True)),
])
def test_torch_keywords(name, kwargs):
    _check(name, kwargs)


def test_random_functions_take_input():
    probs = np.array([[0.2, 0.8], [0.5, 0.5]])
    t, m = _both(probs)
    assert microtorch.multinomial(input=m, num_samples=1).shape == torch.multinomial(input=t, num_samples=1).shape
    assert microtorch.bernoulli(input=m).shape == torch.bernoulli(input=t).shape


IDX = np.array([0, 2])


@pytest.mark.parametrize("name, kwargs", [
    ("mul_", dict(other=B)),
    ("add_", dict(other=B, alpha=2)),
    ("sub_", dict(other=B, alpha=2)),
    ("pow_", dict(exponent=2.0)),
    ("fmod_", dict(other=2.0)),
    ("addcmul_", dict(tensor1=A, tensor2=B, value=0.5)),
    ("lerp_", dict(end=B, weight=0.25)),
    ("index_add_", dict(dim=1, index=IDX, source=B[:, :2], alpha=3)),
    ("index_fill_", dict(dim=1, index=IDX, value=7.0)),
    ("masked_fill_", dict(mask=A > 0, value=-1.0)),
    ("clamp_min_", dict(min=0.1)),
])
def test_inplace_methods_take_torch_keywords(name, kwargs):
    def run(lib, pick):
        self = _both(A.copy())[pick]
        kw = {k: _both(v)[pick] if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
        getattr(self, name)(**kw)
        return self.numpy()
    np.testing.assert_allclose(run(microtorch, 1), run(torch, 0), rtol=1e-6)


def test_inplace_keyword_tensor_is_differentiated():
    """A tensor passed by keyword to an in-place method is an input of the graph like a positional one."""
    grads = []
    for lib, pick in ((torch, 0), (microtorch, 1)):
        a, b = (_both(v)[pick].requires_grad_() for v in (A, B))
        c = a * 1
        c.mul_(other=b)
        (c * c).sum().backward()
        grads.append((a.grad.numpy(), b.grad.numpy(), c.grad_fn.name()))
    (ta, tb, tname), (ma, mb, mname) = grads
    np.testing.assert_allclose(ma, ta, rtol=1e-6)
    np.testing.assert_allclose(mb, tb, rtol=1e-6)
    assert mname == tname


M3 = _RNG.standard_normal((2, 3, 3)).round(3)


@pytest.mark.parametrize("name, kwargs", [
    ("addmm", dict(input=SQ, mat1=SQ, mat2=SQ.T.copy(), beta=0.5, alpha=2)),
    ("addmm", dict(input=SQ, mat1=SQ, mat2=SQ)),
    ("mm", dict(input=SQ, mat2=SQ)),
    ("bmm", dict(input=M3, mat2=M3)),
    ("baddbmm", dict(input=M3, batch1=M3, batch2=M3, alpha=0.5)),
    ("detach", dict(input=A)),
])
def test_matrix_products_and_detach(name, kwargs):
    _check(name, kwargs)


@pytest.mark.parametrize("name, kwargs", [
    ("mm", dict(input=SQ, mat2=SQ)), ("bmm", dict(input=M3, mat2=M3)),
    ("addmm", dict(input=SQ, mat1=SQ, mat2=SQ)), ("baddbmm", dict(input=M3, batch1=M3, batch2=M3)),
])
def test_out_dtype_has_no_cpu_kernel(name, kwargs):
    """torch's CPU build has no kernel for out_dtype= (CUDA only): both raise NotImplementedError."""
    for lib, pick in ((torch, 0), (microtorch, 1)):
        kw = {k: _both(v)[pick] for k, v in kwargs.items()}
        with pytest.raises(NotImplementedError, match=name):
            getattr(lib, name)(**kw, out_dtype=lib.float64)


def test_promote_types_type1_type2():
    pairs = [("int32", "float32"), ("uint8", "int8"), ("float16", "int64"), ("complex64", "float64")]
    for a, b in pairs:
        got = microtorch.promote_types(type1=getattr(microtorch, a), type2=getattr(microtorch, b))
        assert str(got).split(".")[-1] == str(torch.promote_types(type1=getattr(torch, a),
                                                                  type2=getattr(torch, b))).split(".")[-1]


def test_rng_state_and_like_generators():
    state = microtorch.get_rng_state()
    first = microtorch.rand(3)
    microtorch.set_rng_state(new_state=state)
    assert microtorch.equal(microtorch.rand(3), first)
    x = microtorch.zeros(2, 3)
    for name, extra in (("rand_like", {}), ("randn_like", {}), ("randint_like", dict(high=5))):
        fn = getattr(microtorch, name)
        draws = [fn(x, **extra, generator=microtorch.Generator().manual_seed(7)) for _ in range(2)]
        assert microtorch.equal(draws[0], draws[1]) and draws[0].shape == x.shape
        assert getattr(torch, name)(torch.zeros(2, 3), **extra, generator=torch.Generator().manual_seed(7)).shape \
            == (2, 3)  # (torch takes the same keywords; its stream differs from numpy's)


def test_bernoulli_p():
    for lib, pick in ((torch, 0), (microtorch, 1)):
        x = _both(np.zeros(4000, np.float32))[pick]
        assert abs(float(lib.bernoulli(input=x, p=0.25).mean()) - 0.25) < 0.04
        assert abs(float(x.bernoulli(p=0.75).mean()) - 0.75) < 0.04
        ints = lib.zeros(5, dtype=lib.int64)
        assert str(lib.bernoulli(ints, p=0.5).dtype).endswith("int64")
        with pytest.raises(NotImplementedError):
            lib.bernoulli(ints)


SIX = _RNG.standard_normal((4, 6, 2)).round(3)


@pytest.mark.parametrize("name, kwargs", [
    ("swapaxes", dict(input=A, axis0=0, axis1=1)),
    ("swapdims", dict(input=A, dim0=1, dim1=0)),
    ("true_divide", dict(input=A, other=B)),
    ("tensor_split", dict(input=SIX, sections=3, dim=1)),
    ("tensor_split", dict(input=SIX, indices=[1, 4], dim=1)),
    ("tensor_split", dict(input=SIX, tensor_indices_or_sections=np.array([1, 3]), dim=0)),
    ("hsplit", dict(input=SIX, sections=2)),
    ("vsplit", dict(input=SIX, indices=[1, 3])),
    ("dsplit", dict(input=SIX, sections=2)),
])
def test_renamed_parameters(name, kwargs):
    _check(name, kwargs)


@pytest.mark.parametrize("name, kwargs", [
    ("swapaxes", dict(axis0=0, axis1=1)), ("true_divide", dict(other=B)), ("tensor_split", dict(indices=[2])),
    ("hsplit", dict(sections=2)),
])
def test_renamed_method_parameters(name, kwargs):
    _check(name, dict(self=A, **kwargs), method=True)


def test_true_divide_takes_no_rounding_mode():
    for lib, pick in ((torch, 0), (microtorch, 1)):
        with pytest.raises(TypeError):
            lib.true_divide(_both(A)[pick], _both(B)[pick], rounding_mode="floor")


def test_copy_and_map_take_other():
    for lib, pick in ((torch, 0), (microtorch, 1)):
        x, y = lib.zeros(2, 3, dtype=lib.float64), _both(A[:2, :3].copy())[pick]
        x.copy_(other=y, non_blocking=False)
        x.map_(other=y, callable=lambda a, b: a * b)
        np.testing.assert_allclose(x.numpy(), A[:2, :3] ** 2)


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_other_keyword(name):
    _check(name, dict(input=A, other=B))
    _check(name, dict(self=A, other=B), method=True)


def test_where_method_condition():
    _check("where", dict(self=A, condition=A > 0, other=B), method=True)


def test_vector_norm_x():
    _check("vector_norm", dict(x=A, ord=1, dim=1), namespace="linalg")


def test_orgqr_ormqr_input_names():
    tall = _RNG.standard_normal((4, 3))
    results = []
    for lib, pick in ((torch, 0), (microtorch, 1)):
        a, c = _both(tall)[pick], _both(tall[:, :2].copy())[pick]
        h, tau = lib.geqrf(a)
        results.append([lib.orgqr(input=h, input2=tau).numpy(),
                        lib.ormqr(input=h, input2=tau, input3=c, left=True, transpose=True).numpy()])
    for g, e in zip(*results[::-1]):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", ["l1_loss", "mse_loss"])
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_weighted_pointwise_losses(name, reduction):
    """F.l1_loss/F.mse_loss(weight=): values and gradients beside torch (microtorch ignored mse's weight)."""
    w = np.abs(B) + 0.1
    out = []
    for lib, pick in ((torch, 0), (microtorch, 1)):
        x, y, wt = (_both(v)[pick] for v in (A, B * 0.5, w))
        x.requires_grad_()
        loss = getattr(lib.nn.functional, name)(input=x, target=y, reduction=reduction, weight=wt)
        loss.sum().backward()
        out.append((loss.detach().numpy(), x.grad.numpy()))
    for g, e in zip(out[1], out[0]):
        np.testing.assert_allclose(g, e, rtol=1e-6)
    for lib, pick in ((torch, 0), (microtorch, 1)):
        with pytest.raises(ValueError):
            getattr(lib.nn.functional, name)(_both(A)[pick], _both(B)[pick], weight=lib.ones(4))


def test_split_tensor_keyword():
    _check("split", dict(tensor=SIX, split_size_or_sections=[1, 3], dim=0))
    _check("split", dict(self=SIX, split_size=2, dim=1), method=True)


def test_coverage_tool_reads_builtin_keywords_from_torch_stubs():
    """The report's keyword notes for builtins come from torch's type stubs: the names its parser takes."""
    import importlib.util
    import sys
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "tools" / "api_coverage.py"
    spec = importlib.util.spec_from_file_location("api_coverage_sig", path)
    tool = importlib.util.module_from_spec(spec)
    sys.modules["api_coverage_sig"] = tool
    spec.loader.exec_module(tool)
    assert set(tool.torch_params(torch.searchsorted, "searchsorted", False).params) >= {"sorted_sequence", "input"}
    assert "dividend" not in tool.torch_params(torch.true_divide, "true_divide", False).params
    dot = tool.torch_params(torch.Tensor.dot, "dot", True).params
    assert "tensor" in dot and "other" not in dot
    assert "Tensor" not in tool.torch_params(torch.max, "max", False).params  # (not read off "-> (Tensor, ...)")
    assert tool._signature_notes(torch.eq, microtorch.eq, "eq", False) == ""
    assert tool._signature_notes(torch.addmm, microtorch.addmm, "addmm", False) == ""


@pytest.mark.parametrize("name", ["tril_indices", "triu_indices"])
def test_triangle_indices_requires_grad(name):
    _check(name, dict(row=3, col=4, offset=1, requires_grad=False))
    for lib in (torch, microtorch):
        with pytest.raises(RuntimeError, match="floating point"):
            getattr(lib, name)(3, 3, requires_grad=True)  # (int64 indices cannot require grad)


@pytest.mark.parametrize("name", ["new_zeros", "new_ones"])
def test_new_filled_take_size_keyword(name):
    _check(name, dict(self=A, size=(2, 5), dtype=None), method=True)
    shapes = [tuple(getattr(lib.zeros(1), name)(size=[3]).shape) for lib in (torch, microtorch)]
    assert shapes[0] == shapes[1] == (3,)
    assert tuple(microtorch.zeros(1).new_empty(size=(2, 2)).shape) == tuple(torch.zeros(1).new_empty(size=(2, 2)).shape)


def test_rrelu_generator():
    """torch.rrelu / torch.rrelu_ / F.rrelu_ take generator=: the same seed draws the same slopes."""
    x = microtorch.tensor(-np.abs(A))
    seeded = [microtorch.rrelu(input=x, training=True, generator=microtorch.Generator().manual_seed(5))
              for _ in range(2)]
    assert microtorch.equal(*seeded)
    inplace = x.clone()
    microtorch.nn.functional.rrelu_(inplace, training=True, generator=microtorch.Generator().manual_seed(5))
    assert microtorch.equal(inplace, seeded[0])
    t = torch.tensor(-np.abs(A))
    assert torch.rrelu(input=t, training=True, generator=torch.Generator().manual_seed(5)).shape == t.shape
    slopes = (seeded[0] / x).numpy()
    assert np.all((slopes >= 1 / 8) & (slopes <= 1 / 3))


@pytest.mark.parametrize("kwargs", [dict(elements=np.array([1.0, 2.0, 5.0]), test_elements=np.array([2.0, 5.0])),
                                    dict(element=2.0, test_elements=np.array([2.0, 5.0])),
                                    dict(elements=np.array([1.0, 2.0]), test_element=2.0, invert=True)])
def test_isin_keywords(kwargs):
    _check("isin", kwargs)


def test_isin_needs_both_operands():
    for lib in (torch, microtorch):
        with pytest.raises(TypeError):
            lib.isin(lib.zeros(2))


@pytest.mark.parametrize("kwargs", [dict(tensor=A.astype(np.float32), other=2.5), dict(tensor=A, other=B),
                                    dict(scalar=2, tensor=A.astype(np.int32)), dict(scalar1=2, scalar2=1.5)])
def test_result_type_keywords(kwargs):
    got, want = [], []
    for lib, pick, out in ((torch, 0, want), (microtorch, 1, got)):
        out.append(str(lib.result_type(**{k: _both(v)[pick] if isinstance(v, np.ndarray) else v
                                          for k, v in kwargs.items()})).split(".")[-1])
    assert got == want


@pytest.mark.parametrize("decimals", [0, 2])
def test_round_of_bool_raises_as_torch(decimals):
    for lib in (torch, microtorch):
        with pytest.raises(NotImplementedError):
            lib.round(lib.tensor([True, False]), decimals=decimals)


def test_meshgrid_default_indexing_warns_once_as_torch():
    import warnings
    from microtorch import _creation
    _creation._MESHGRID_WARNED.clear()
    x, y = np.arange(3.0), np.arange(2.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        grids = [microtorch.meshgrid(microtorch.tensor(x), microtorch.tensor(y)) for _ in range(2)]
    assert [w.category for w in caught] == [UserWarning]
    for g, e in zip(grids[0], torch.meshgrid(torch.tensor(x), torch.tensor(y), indexing="ij")):
        np.testing.assert_array_equal(g.numpy(), e.numpy())
