"""Sparse COO tensors (microtorch/sparse/), checked against torch 2.13: construction, reprs, coalescing, products
with dense matrices and their gradients, the errors of what is not supported, and a pygcn-style GCN trained
with Adam beside torch's."""
import warnings

import numpy as np
import pytest
import torch as real_torch

import microtorch
from tests.torch_errors import error_of, same_error

LIBS = (real_torch, microtorch)
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

I = [[0, 1, 1, 2, 0], [2, 0, 2, 1, 2]]  # (a duplicate at (0, 2): uncoalesced)
V = [3., 4., 5., 6., 1.]


def _s(lib, dtype=None, requires_grad=False, values=None):
    return lib.sparse_coo_tensor(lib.tensor(I), lib.tensor(V if values is None else values, dtype=dtype), (3, 3),
                                 requires_grad=requires_grad)


def _same_repr(want, got):
    assert repr(got).replace("microtorch", "torch") == repr(want)


def _np(t):
    t = t.to_dense() if t.is_sparse else t
    return t.detach().numpy()


# ---- construction and printing ------------------------------------------------------------------------------
REPRS = {
    "uncoalesced": lambda L: _s(L),
    "coalesced": lambda L: _s(L).coalesce(),
    "no size": lambda L: L.sparse_coo_tensor(L.tensor(I), L.tensor(V)),
    "float64": lambda L: _s(L, dtype=L.float64),
    "int values": lambda L: _s(L, values=[1, 2, 3, 4, 5]),
    "int32 values": lambda L: _s(L, dtype=L.int32),
    "requires_grad": lambda L: _s(L, requires_grad=True),
    "grad_fn": lambda L: L.sparse_coo_tensor(L.tensor(I), L.tensor(V, requires_grad=True), (3, 3)),
    "coalesce grad_fn": lambda L: L.sparse_coo_tensor(L.tensor(I), L.tensor(V, requires_grad=True)).coalesce(),
    "empty": lambda L: L.sparse_coo_tensor(L.zeros(2, 0, dtype=L.long), L.zeros(0), (3, 3)),
    "dense dim": lambda L: L.sparse_coo_tensor(L.tensor([[0, 1], [1, 0]]), L.tensor([[1., 2.], [3., 4.]])),
    "1-d": lambda L: L.sparse_coo_tensor(L.tensor([[0, 1, 0]]), L.tensor([1., 2., 5.]), (2,)),
    "t": lambda L: _s(L).t(),
    "times 2": lambda L: _s(L) * 2,
    "over 2": lambda L: _s(L) / 2,
    "neg": lambda L: -_s(L),
    "sum of two": lambda L: _s(L) + L.sparse_coo_tensor(L.tensor([[0, 2], [1, 1]]), L.tensor([1., 2.]), (3, 3)),
    "difference": lambda L: _s(L).coalesce() - _s(L).coalesce(),
    "double": lambda L: _s(L).double(),
    "to_sparse": lambda L: L.tensor([[0., 1.], [2., 0.]]).to_sparse(),
    "to_sparse(1)": lambda L: L.tensor([[0., 0.], [2., 0.]]).to_sparse(1),
    "legacy FloatTensor": lambda L: L.sparse.FloatTensor(L.tensor(I), L.tensor(V), L.Size([3, 3])),
    "legacy empty": lambda L: L.sparse.FloatTensor(3, 3),
    "sparse.sum dim": lambda L: L.sparse.sum(_s(L), 1),
    "sum(0) method": lambda L: _s(L).sum(0),
    "detach": lambda L: _s(L, requires_grad=True).detach(),
    "clone": lambda L: _s(L).clone(),
    "long": lambda L: _s(L).long(),
    "torch.t": lambda L: L.t(_s(L)),
    "torch.transpose": lambda L: L.transpose(_s(L), 0, 1),
    "torch.neg": lambda L: L.neg(_s(L)),
    "torch.add": lambda L: L.add(_s(L).coalesce(), _s(L).coalesce(), alpha=2),
    "torch.mul": lambda L: L.mul(_s(L), 3),
    "torch.clone": lambda L: L.clone(_s(L)),
}


@pytest.mark.parametrize("case", REPRS)
def test_repr(case):
    want, got = (REPRS[case](lib) for lib in LIBS)
    _same_repr(want, got)
    assert got.is_sparse and got.layout is microtorch.sparse_coo
    assert (got._nnz(), got.sparse_dim(), got.dense_dim(), got.is_coalesced(), tuple(got.shape), got.dim()) == \
        (want._nnz(), want.sparse_dim(), want.dense_dim(), want.is_coalesced(), tuple(want.shape), want.dim())
    assert got.dtype.name == str(want.dtype).split(".")[1] and got.requires_grad == want.requires_grad
    assert np.array_equal(_np(got), _np(want))


def test_metadata_and_layouts():
    want, got = (_s(lib) for lib in LIBS)
    assert type(got).__name__ == "Tensor" and isinstance(got, microtorch.Tensor) and microtorch.is_tensor(got)
    assert repr(microtorch.sparse_coo) == "microtorch.sparse_coo" and repr(microtorch.strided) == "microtorch.strided"
    assert type(microtorch.strided) is microtorch.layout and microtorch.strided != microtorch.sparse_coo
    assert microtorch.ones(2).layout is microtorch.strided and microtorch.ones(2).layout != "strided"
    assert not microtorch.ones(2).is_sparse and microtorch.zeros(2, layout=microtorch.strided).shape == (2,)
    assert got.type() == want.type().replace("torch", "microtorch") == "microtorch.sparse.FloatTensor"
    assert isinstance(got, microtorch.sparse.FloatTensor) and not isinstance(got, microtorch.FloatTensor)
    assert not isinstance(got.double(), microtorch.sparse.FloatTensor)
    assert (got.numel(), len(got), got.element_size(), got.is_contiguous()) == \
        (want.numel(), len(want), want.element_size(), want.is_contiguous())
    c = got.coalesce()
    assert c.coalesce() is c and got.to(microtorch.float32) is got and got.to_sparse() is got
    x = microtorch.ones(2)
    assert x.to_dense() is x
    import pickle
    assert pickle.loads(pickle.dumps(microtorch.sparse_coo)) is microtorch.sparse_coo


def test_indices_and_values():
    want, got = (_s(lib).coalesce() for lib in LIBS)
    for name in ("indices", "values", "_indices", "_values"):
        w, g = getattr(want, name)(), getattr(got, name)()
        assert np.array_equal(g.numpy(), w.numpy()) and g.dtype.name == str(w.dtype).split(".")[1]
    w, g = (lib.tensor(V).numpy() for lib in LIBS)
    assert np.array_equal(_s(microtorch)._values().numpy(), _s(real_torch)._values().numpy())
    assert np.array_equal(_s(microtorch)._indices().numpy(), _s(real_torch)._indices().numpy())


def test_values_share_memory_with_the_given_tensor():
    v = microtorch.tensor(V)
    s = microtorch.sparse_coo_tensor(microtorch.tensor(I), v, (3, 3))
    v.mul_(2)
    assert s._values().tolist() == [6., 8., 10., 12., 2.]


# ---- products -----------------------------------------------------------------------------------------------
def _dense(L, *shape, requires_grad=False):
    return L.arange(float(np.prod(shape))).reshape(*shape).sub(2.5).requires_grad_(requires_grad)


PRODUCTS = {
    "sparse.mm": lambda L, s, d: L.sparse.mm(s, d),
    "mm": lambda L, s, d: L.mm(s, d),
    "matmul": lambda L, s, d: L.matmul(s, d),
    "@": lambda L, s, d: s @ d,
    "spmm": lambda L, s, d: L.spmm(s, d),
    "method mm": lambda L, s, d: s.mm(d),
    "sparse.addmm": lambda L, s, d: L.sparse.addmm(L.ones(3, 2), s, d),
    "sparse.addmm beta alpha": lambda L, s, d: L.sparse.addmm(L.ones(1, 2), s, d, beta=0.5, alpha=2),
    "dense @ sparse": lambda L, s, d: d.t() @ s,
    "mm dense, sparse": lambda L, s, d: L.mm(d.t(), s),
    "sparse.mm dense, sparse": lambda L, s, d: L.sparse.mm(d.t(), s),
    "sparse @ vector": lambda L, s, d: s @ d[:, 0],
}


@pytest.mark.parametrize("case", PRODUCTS)
def test_product_values_nodes_and_dense_grad(case):
    outs, grads = [], []
    for L in LIBS:
        d = _dense(L, 3, 2, requires_grad=True)
        out = PRODUCTS[case](L, _s(L), d)
        out.backward(L.ones_like(out) * L.arange(1., out.numel() + 1).reshape(out.shape))
        outs.append(out)
        grads.append(d.grad)
    (want, got), (gw, gg) = outs, grads
    assert got.grad_fn.name() == want.grad_fn.name() and tuple(got.shape) == tuple(want.shape)
    assert not got.is_sparse and got.layout is microtorch.strided
    np.testing.assert_allclose(_np(got), _np(want), rtol=1e-6)
    np.testing.assert_allclose(gg.numpy(), gw.numpy(), rtol=1e-6)


@pytest.mark.parametrize("case", ["sparse.mm", "mm", "matmul", "spmm", "sparse.addmm beta alpha", "sparse @ vector"])
def test_grad_of_a_sparse_leaf(case):
    """sparse.mm gives a sparse leaf a sparse gradient at its entries; torch.mm a dense one (as torch)"""
    grads = []
    for L in LIBS:
        s = _s(L, requires_grad=True)
        out = PRODUCTS[case](L, s, _dense(L, 3, 2))
        out.backward(L.arange(1., out.numel() + 1).reshape(out.shape))
        grads.append(s.grad)
    want, got = grads
    assert got.is_sparse == want.is_sparse
    if want.is_sparse:
        _same_repr(want, got)
    np.testing.assert_allclose(_np(got), _np(want), rtol=1e-6)


VALUE_GRADS = {
    "to_dense": lambda L, s: s.to_dense() * L.arange(9.).reshape(3, 3),
    "coalesce to_dense": lambda L, s: s.coalesce().to_dense() * L.arange(9.).reshape(3, 3),
    "t to_dense": lambda L, s: s.t().to_dense() * L.arange(9.).reshape(3, 3),
    "sparse.mm": lambda L, s: L.sparse.mm(s, _dense(L, 3, 2)),
    "mm": lambda L, s: L.mm(s, _dense(L, 3, 2)),
    "scaled sum": lambda L, s: ((s * 2 - s / 4) + s).to_dense() ** 2,
    "double": lambda L, s: s.double().to_dense() * 3,
    "sparse.sum": lambda L, s: L.sparse.sum(s) * 2,
    "sparse.sum dim": lambda L, s: L.sparse.sum(s, 0).to_dense() * L.tensor([1., 2., 3.]),
    "values": lambda L, s: s.coalesce().values() * L.arange(4.),
    "neg clone": lambda L, s: (-s.clone()).to_dense() * L.arange(9.).reshape(3, 3),
}


@pytest.mark.parametrize("case", VALUE_GRADS)
def test_gradient_of_values(case):
    """the values of sparse_coo_tensor(indices, values) get the gradient at each of their indices"""
    results = []
    for L in LIBS:
        v = L.tensor(V, requires_grad=True)
        out = VALUE_GRADS[case](L, L.sparse_coo_tensor(L.tensor(I), v, (3, 3)))
        out.sum().backward()
        results.append((out, v.grad))
    (want, gw), (got, gg) = results
    assert got.grad_fn.name() == want.grad_fn.name()
    np.testing.assert_allclose(_np(got), _np(want), rtol=1e-6)
    np.testing.assert_allclose(gg.numpy(), gw.numpy(), rtol=1e-6)


def test_values_gradient_equals_the_dense_computation():
    rng = np.random.default_rng(0)
    idx = np.stack([rng.integers(0, 5, 12), rng.integers(0, 4, 12)])
    vals, d = rng.standard_normal(12), rng.standard_normal((4, 3))
    v = microtorch.tensor(vals, requires_grad=True)
    out = microtorch.sparse.mm(microtorch.sparse_coo_tensor(microtorch.tensor(idx), v, (5, 4)), microtorch.tensor(d))
    (out ** 2).sum().backward()
    dense = np.zeros((5, 4))
    np.add.at(dense, tuple(idx), vals)
    g_dense = 2 * (dense @ d) @ d.T  # d/dA of |A d|^2, read at each entry's index
    np.testing.assert_allclose(v.grad.numpy(), g_dense[tuple(idx)], rtol=1e-12)


SUMS = {
    "all": lambda L, s: L.sparse.sum(s),
    "dim 0": lambda L, s: L.sparse.sum(s, 0),
    "dim -1": lambda L, s: L.sparse.sum(s, -1),
    "dims (0, 1)": lambda L, s: L.sparse.sum(s, (0, 1)),
    "dtype": lambda L, s: L.sparse.sum(s, dtype=L.float64),
    "method": lambda L, s: s.sum(),
    "method dim": lambda L, s: s.sum(0),
}


@pytest.mark.parametrize("case", SUMS)
def test_sums(case):
    want, got = (SUMS[case](L, _s(L)) for L in LIBS)
    assert got.is_sparse == want.is_sparse and got.dtype.name == str(want.dtype).split(".")[1]
    np.testing.assert_allclose(_np(got), _np(want), rtol=1e-6)
    if want.is_sparse:
        _same_repr(want, got)


# ---- what is refused ----------------------------------------------------------------------------------------
ERRORS = {
    "indices uncoalesced": lambda L: _s(L).indices(),
    "values uncoalesced": lambda L: _s(L).values(),
    "view": lambda L: _s(L).view(9),
    "numpy": lambda L: _s(L).numpy(),
    "reshape": lambda L: _s(L).reshape(9),
    "exp": lambda L: _s(L).exp(),
    "torch.exp": lambda L: L.exp(_s(L)),
    "mean": lambda L: _s(L).mean(),
    "max": lambda L: _s(L).max(),
    "sparse + dense": lambda L: _s(L) + L.ones(3, 3),
    "sparse + number": lambda L: _s(L) + 1,
    "data_ptr": lambda L: _s(L).data_ptr(),
    "tolist": lambda L: _s(L).tolist(),
    "nbytes": lambda L: _s(L).nbytes,
    "equal": lambda L: L.equal(_s(L), _s(L)),
    "mm inner sizes": lambda L: L.sparse.mm(_s(L), L.ones(2, 2)),
    "mm dtypes": lambda L: L.sparse.mm(_s(L), L.ones(3, 2, dtype=L.float64)),
    "torch.mm dtypes": lambda L: L.mm(_s(L), L.ones(3, 2, dtype=L.float64)),
    "nnz mismatch": lambda L: L.sparse_coo_tensor(L.tensor(I), L.tensor(V[:3]), (3, 3)),
    "size rank": lambda L: L.sparse_coo_tensor(L.tensor(I), L.tensor(V), (3, 3, 2)),
    "dense dim rank": lambda L: L.sparse_coo_tensor(L.tensor(I), L.tensor([V, V]).t(), (3, 3)),
    "negative index": lambda L: L.sparse_coo_tensor(L.tensor([[0, -1]]), L.tensor([1., 2.])),
    "int requires_grad": lambda L: _s(L, values=[1, 2, 3, 4, 5], requires_grad=True),
    "to_sparse(0)": lambda L: L.ones(2, 2).to_sparse(0),
    "to_sparse(3)": lambda L: L.ones(2, 2).to_sparse(3),
    "sparse to_sparse(1)": lambda L: _s(L).to_sparse(1),
    "sparse.sum of dense": lambda L: L.sparse.sum(L.ones(2)),
    "sparse.sum dim": lambda L: L.sparse.sum(_s(L), 2),
}


@pytest.mark.parametrize("case", ERRORS)
def test_errors_as_torch(case):
    want_type, want = error_of(lambda: ERRORS[case](real_torch))
    got_type, got = error_of(lambda: ERRORS[case](microtorch))
    assert want_type is not None and got_type == want_type, (want, got)
    key = want.split(" (")[0].split(". This could be")[0][:60]
    if want_type != "NotImplementedError":
        assert key in got, (want, got)
    else:
        assert "SparseCPU" in got and "to_dense" in got, got


def test_out_of_range_index_is_refused_as_torch_checks_invariants():
    want_type, want = error_of(lambda: real_torch.sparse_coo_tensor(real_torch.tensor([[0, 3]]), real_torch.tensor(
        [1., 2.]), (2,), check_invariants=True))
    got_type, got = error_of(lambda: microtorch.sparse_coo_tensor(microtorch.tensor([[0, 3]]), microtorch.tensor(
        [1., 2.]), (2,)))
    assert got_type == want_type and want in got


UNSUPPORTED = {  # torch has these; microtorch refuses them clearly
    "sparse @ sparse": lambda s: s @ s,
    "sparse * sparse": lambda s: s * s,
    "abs": lambda s: s.abs(),
    "index": lambda s: s[0],
    "unsqueeze": lambda s: s.unsqueeze(0),
    "torch.add dense, sparse": lambda s: microtorch.ones(3, 3) + s,
    "np.asarray": lambda s: np.asarray(s),
    "save": lambda s: microtorch.save(s, "/dev/null"),
}


@pytest.mark.parametrize("case", UNSUPPORTED)
def test_unsupported_ops_refuse_clearly(case):
    with pytest.raises((NotImplementedError, TypeError, RuntimeError)) as info:
        UNSUPPORTED[case](_s(microtorch))
    assert "to_dense" in str(info.value) or "sparse" in str(info.value), str(info.value)
    assert type(info.value).__module__ == "builtins"


def test_dense_ops_are_untouched():
    a, b = microtorch.ones(2, 3), microtorch.ones(3, 4)
    assert (a @ b).grad_fn is None and microtorch.mm(a, b).tolist() == [[3.] * 4] * 2
    w = microtorch.nn.Parameter(microtorch.ones(3, 4))
    assert microtorch.matmul(a, w).grad_fn.name() == "MmBackward0"


# ---- teaching code ------------------------------------------------------------------------------------------
def _normalized_adjacency(n, seed):
    """pygcn's preprocessing: a random symmetric graph with self-loops, row-normalized, as COO arrays."""
    rng = np.random.default_rng(seed)
    edges = rng.integers(0, n, (3 * n, 2))
    adj = np.zeros((n, n))
    adj[edges[:, 0], edges[:, 1]] = 1
    adj = np.maximum(adj, adj.T) + np.eye(n)
    adj = adj / adj.sum(1, keepdims=True)
    rows, cols = np.nonzero(adj)
    return np.vstack((rows, cols)).astype(np.int64), adj[rows, cols].astype(np.float32)


def _gcn_losses(L, steps=5):
    n, f, h, c = 30, 8, 16, 3
    rng = np.random.default_rng(1)
    idx, vals = _normalized_adjacency(n, 2)
    adj = L.sparse.FloatTensor(L.from_numpy(idx), L.from_numpy(vals), L.Size((n, n)))  # sparse_mx_to_torch_sparse
    x = L.from_numpy(rng.standard_normal((n, f)).astype(np.float32))
    labels = L.from_numpy(rng.integers(0, c, n))
    w1 = L.nn.Parameter(L.from_numpy(rng.uniform(-0.25, 0.25, (f, h)).astype(np.float32)))
    w2 = L.nn.Parameter(L.from_numpy(rng.uniform(-0.25, 0.25, (h, c)).astype(np.float32)))
    b1 = L.nn.Parameter(L.zeros(h))
    opt = L.optim.Adam([w1, w2, b1], lr=0.01, weight_decay=5e-4)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        hidden = L.nn.functional.relu(L.spmm(adj, L.mm(x, w1)) + b1)
        out = L.sparse.mm(adj, hidden @ w2)
        loss = L.nn.functional.nll_loss(L.nn.functional.log_softmax(out, dim=1), labels)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, w1.detach().numpy()


def test_pygcn_two_layer_gcn_trains_as_torch():
    (want, w_want), (got, w_got) = (_gcn_losses(L) for L in LIBS)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(w_got, w_want, rtol=1e-5, atol=1e-7)
    assert got[-1] < got[0]


def _spmm_function(L):
    """pyGAT's SpecialSpmmFunction: builds the sparse matrix in forward, its backward indexes grad_output."""
    class SpecialSpmm(L.autograd.Function):
        @staticmethod
        def forward(ctx, indices, values, shape, b):
            a = L.sparse_coo_tensor(indices, values, shape)
            ctx.save_for_backward(a, b)
            ctx.N = shape[0]
            return L.matmul(a, b)

        @staticmethod
        def backward(ctx, grad_output):
            a, b = ctx.saved_tensors
            grad_values = grad_b = None
            if ctx.needs_input_grad[1]:
                grad_a_dense = grad_output.matmul(b.t())
                edge_idx = a._indices()[0, :] * ctx.N + a._indices()[1, :]
                grad_values = grad_a_dense.view(-1)[edge_idx]
            if ctx.needs_input_grad[3]:
                grad_b = a.t().matmul(grad_output)
            return None, grad_values, None, grad_b
    return SpecialSpmm


def test_pygat_special_spmm_function():
    results = []
    for L in LIBS:
        idx = L.tensor([[0, 1, 2, 2, 3], [1, 2, 0, 3, 3]])
        values = L.tensor([0.5, 1.5, -1., 2., 0.25], requires_grad=True)
        b = _dense(L, 4, 3, requires_grad=True)
        out = _spmm_function(L).apply(idx, values, L.Size([4, 4]), b)
        (out ** 2).sum().backward()
        results.append((out, values.grad, b.grad))
    for w, g in zip(*results):
        np.testing.assert_allclose(_np(g), _np(w), rtol=1e-6)


def test_gcn_example_to_sparse_and_back():
    """PyTorch's examples/gcn: adjacency.to_sparse(), coalesce, indices and values, sparse.mm"""
    outs = []
    for L in LIBS:
        adj = L.tensor([[1., 0., 1.], [0., 1., 0.], [1., 1., 1.]])
        s = adj.to_sparse().coalesce()
        rebuilt = L.sparse_coo_tensor(s.indices(), s.values() / 2, s.shape)
        outs.append((s.indices(), s.values(), L.sparse.mm(rebuilt, L.ones(3, 2))))
    for w, g in zip(*outs):
        assert np.array_equal(_np(g), _np(w))


def test_warns_once_about_invariants_as_torch():
    from microtorch import _user_line
    _user_line._WARNED_ONCE.discard("sparse_invariants")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        _s(microtorch)
        _s(microtorch)
    assert sum("Sparse invariant checks are implicitly disabled" in str(w.message) for w in seen) == 1


def test_forward_mode_through_a_sparse_op_is_refused_clearly():
    import microtorch.autograd.forward_ad as fwad
    s = microtorch.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2.0], (2, 2))
    with fwad.dual_level():
        x = fwad.make_dual(microtorch.ones(2, 2), microtorch.ones(2, 2))
        with pytest.raises(NotImplementedError, match="no forward-mode AD through sparse tensors"):
            microtorch.sparse.mm(s, x)


@pytest.mark.parametrize("make", [
    lambda lib: lib.zeros(2, 3, layout=lib.sparse_coo), lambda lib: lib.empty(2, 3, layout=lib.sparse_coo,
                                                                             dtype=lib.float64),
    lambda lib: lib.zeros_like(lib.ones(2), layout=lib.sparse_coo), lambda lib: lib.zeros(2, layout=lib.strided),
    lambda lib: lib.zeros(2, 2, layout=lib.sparse_coo, requires_grad=True)])
def test_factories_read_layout(make):
    def run(lib):
        out = make(lib)
        return (repr(out).replace("microtorch", "torch"), str(out.layout).replace("microtorch", "torch"),
                out.requires_grad, out.is_sparse)
    assert run(real_torch) == run(microtorch)


@pytest.mark.parametrize("make", [lambda lib: lib.ones(2, layout=lib.sparse_coo),
                                  lambda lib: lib.full((2,), 1.0, layout=lib.sparse_coo),
                                  lambda lib: lib.zeros(2, layout="strided")])
def test_factories_refuse_what_torch_refuses(make):
    errors = []
    for lib in (real_torch, microtorch):
        with pytest.raises(Exception) as info:
            make(lib)
        errors.append((type(info.value).__name__, str(info.value).replace("microtorch", "torch")))
    assert errors[0][0] == errors[1][0] and errors[0][1] in errors[1][1]
