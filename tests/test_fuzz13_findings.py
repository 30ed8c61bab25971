"""What the thirteenth round's fuzz ranges (seeds 2,100,000 and on) found, each beside torch 2.13.

- The layout of an elementwise result whose operands broadcast: torch's sort of the dims reads the strides of size-1
  dims too, and a number is an operand to it (so `x * 2` keeps x's size-1 strides, which a later broadcast reads).
  (tests/test_binary_layouts.py has the op-by-op cases.)
- sort, argsort and msort lay their values and indices out as the input (torch allocates them like empty_like).
- rrelu's result and noise are in C order whatever the input's layout.
- layer_norm without a bias adds 0, as torch's kernel does, so an input of -0.0 normalizes to +0.0.
"""
import numpy as np
import pytest
import torch

import microtorch as mt
from test_binary_layouts import _looks


def _seen(t):
    return tuple(t.shape), _looks(t)


def _column(L):
    return L.tensor(np.arange(2.0).reshape(1, 2, 1, 1))


CHAINS = {
    # seed 2127855: where of a permuted column against the column: torch's result is transposed
    "where": lambda L: L.where(_column(L).permute(1, 2, 0, 3) > _column(L), _column(L).permute(1, 2, 0, 3),
                               _column(L)),
    "add": lambda L: _column(L).permute(1, 2, 0, 3) + _column(L),
    "mul": lambda L: _column(L) * _column(L).permute(1, 2, 0, 3),
    # a number keeps the size-1 strides, which the broadcast after it reads
    "number, then broadcast": lambda L: (_column(L).permute(1, 2, 0, 3) / 4) + _column(L),
    "rsub, then broadcast": lambda L: (1 - _column(L).permute(1, 2, 0, 3)) * _column(L),
    "fmod, then broadcast": lambda L: L.fmod(_column(L).permute(1, 2, 0, 3), 1.5) - _column(L),
    "nan_to_num, then broadcast": lambda L: _column(L).permute(1, 2, 0, 3).nan_to_num() + _column(L),
    "both contiguous, same shape": lambda L: _column(L).permute(1, 2, 0, 3) * _column(L).permute(1, 2, 0, 3),
}


@pytest.mark.parametrize("name", list(CHAINS))
def test_broadcast_layout_with_size_1_dims_as_torch(name):
    assert _seen(CHAINS[name](mt)) == _seen(CHAINS[name](torch))


def _inputs(L):
    rng = np.random.default_rng(3)
    return {"transposed": L.tensor(rng.standard_normal((3, 4))).t(),
            "permuted": L.tensor(rng.standard_normal((2, 3, 4))).permute(2, 0, 1),
            "expanded": L.tensor(rng.standard_normal((1, 4))).expand(3, 4),
            "sliced": L.tensor(rng.standard_normal((4, 6)))[:, ::2],
            "contiguous": L.tensor(rng.standard_normal((3, 4))),
            # C-ordered by numpy's flags, but a size-1 dim's stride is not C order's: torch keeps it
            "size-1 dim permuted": L.tensor(rng.standard_normal((1, 3, 1))).permute(0, 2, 1)}


ORDER_OPS = {
    "sort": lambda L, x: L.sort(x, 0),
    "sort, last dim, descending": lambda L, x: x.sort(-1, descending=True),
    "sort, stable": lambda L, x: L.sort(x, dim=0, stable=True),
    "argsort": lambda L, x: L.argsort(x, 0),
    "msort": lambda L, x: L.msort(x),
    "rrelu (eval)": lambda L, x: L.nn.functional.rrelu(x),
    "float": lambda L, x: x.float(),
    "zeros_like": lambda L, x: L.zeros_like(x),
    "full_like, float32": lambda L, x: L.full_like(x, 2.0, dtype=L.float32),
    "rand_like": lambda L, x: (L.manual_seed(0), L.rand_like(x))[1],
    "mode's indices": lambda L, x: L.mode(x, 0, keepdim=True).indices,
    "kthvalue": lambda L, x: L.kthvalue(x, 1, -1, keepdim=True),
    "hardtanh": lambda L, x: L.nn.functional.hardtanh(x),
    "relu6": lambda L, x: L.nn.functional.relu6(x),
    "prelu": lambda L, x: L.nn.functional.prelu(x, L.tensor([0.25], dtype=x.dtype)),
    "flip": lambda L, x: L.flip(x, (0,)),
    "deg2rad": lambda L, x: L.deg2rad(x),
}


@pytest.mark.parametrize("layout", list(_inputs(mt)))
@pytest.mark.parametrize("op", list(ORDER_OPS))
def test_order_results_laid_out_as_torch(op, layout):
    ours, theirs = ORDER_OPS[op](mt, _inputs(mt)[layout]), ORDER_OPS[op](torch, _inputs(torch)[layout])
    ours, theirs = (r if isinstance(r, tuple) else (r,) for r in (ours, theirs))
    assert [_seen(t) for t in ours] == [_seen(t) for t in theirs]


def test_sorted_gradient_and_a_reshape_after_it_as_torch():
    """the values' node and a reshape of them: a view where torch's is one (its values are laid out as x)"""
    seen = []
    for L in (mt, torch):
        x = _inputs(L)["transposed"].clone().requires_grad_()
        v = L.sort(x, 0).values
        r = v.reshape(-1)
        (r * L.arange(12.0, dtype=r.dtype)).sum().backward()
        seen.append((v.grad_fn.name(), r.grad_fn.name(), x.grad.stride(), x.grad.numpy().tolist()))
    assert seen[0] == seen[1]


@pytest.mark.parametrize("training", [False, True])
def test_rrelu_noise_laid_out_as_torch(training):
    seen = []
    for L in (mt, torch):
        x = _inputs(L)["transposed"].clone().requires_grad_()
        out = L.nn.functional.rrelu(x, training=training)
        seen.append((out.stride(), out.grad_fn._saved_noise.stride()))
    assert seen[0] == seen[1]


@pytest.mark.parametrize("weight, bias", [(False, False), (True, False), (False, True), (True, True)])
def test_layer_norm_of_a_signed_zero_as_torch(weight, bias):
    """seed 2118005: torch's kernel computes (x - mean) rstd gamma + beta, with beta 0 when there is no bias"""
    seen = []
    for L in (mt, torch):
        x = L.tensor([[-0.0], [-0.0]], dtype=L.float64)
        w = L.tensor([2.0], dtype=L.float64) if weight else None
        b = L.tensor([-0.0], dtype=L.float64) if bias else None
        out = L.nn.functional.layer_norm(x, (1,), w, b)
        seen.append((np.signbit(out.numpy()).tolist(), (2.0 / out).numpy().tolist()))
    assert seen[0] == seen[1]


def _keys(L):
    """advanced indices: integer tensors of one and two dims, masks of one and two dims, indices apart"""
    return {"int at dim 1": (slice(None), L.tensor([0, 2])), "int at dim 0": (L.tensor([1, 0]),),
            "int of one at the last dim": (slice(None), slice(None), L.tensor([0])),
            "after slices with steps": (slice(None, None, 2), slice(0, None, 2), L.tensor([0])),
            "two ints": (slice(None), L.tensor([0, 1]), L.tensor([1, 0])),
            "two ints apart": (L.tensor([0, 1]), slice(None), L.tensor([1, 0])),
            "2-d int and int": (L.tensor([[0], [1]]), L.tensor([0, 2])),
            "2-d int, transposed": (slice(None), L.tensor([[0, 1], [1, 0], [0, 0]]).t()),
            "ellipsis": (Ellipsis, L.tensor([1])), "mask": (L.tensor([True, False]),),
            "mask at dim 1": (slice(None), L.tensor([True, False, True])),
            "2-d mask apart from an int": (L.tensor([[True, False, True], [False, True, True]]), slice(None),
                                           L.tensor([1, 0, 1, 0]))}


@pytest.mark.parametrize("perm", [(0, 1, 2), (2, 0, 1), (1, 0, 2), (0, 2, 1), (2, 1, 0)])
@pytest.mark.parametrize("key", list(_keys(torch)))
def test_advanced_index_laid_out_as_torch(key, perm):
    """torch's index kernel lays the result out by the restrided input and the indices (seed 2256515: a size-1
    stride of it decides whether a later matmul folds)"""
    seen = []
    for L in (mt, torch):
        x = L.tensor(np.arange(24.0).reshape(2, 3, 4)).permute(perm)
        try:
            seen.append(_seen(x[_keys(L)[key]]))
        except IndexError as e:
            seen.append(type(e))
    assert seen[0] == seen[1]


def test_matmul_of_an_indexed_column_folds_as_torch():
    """seed 2256515"""
    seen = []
    for L in (mt, torch):
        a = L.tensor(np.array([[[-1.0], [0.0], [2.0]]]), requires_grad=True)
        v = a[::2, 0::2, L.tensor([0])].unsqueeze(-2) @ L.tensor([3.0], dtype=L.float64)
        seen.append((v.grad_fn.name(), [f.name() for f, _ in v.grad_fn.next_functions if f is not None]))
    assert seen[0] == seen[1]


def test_a_0d_integer_tensor_index_is_a_select_as_torch():
    """torch reads x[i] for a 0-d integer tensor i as x[int(i)]: a view (SelectBackward0) that shares x's memory"""
    seen = []
    for L in (mt, torch):
        x = L.tensor(np.arange(6.0).reshape(3, 2), requires_grad=True)
        row = x[L.tensor(1)]
        base = L.tensor(np.arange(6.0).reshape(3, 2))
        base[L.tensor(2)].mul_(0)
        mixed = L.tensor(np.arange(6.0).reshape(3, 1, 2))[L.tensor([0]), :, L.tensor(1)]
        seen.append((row.grad_fn.name(), row.stride(), base.tolist(), tuple(mixed.shape)))
    assert seen[0] == seen[1]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("sizes", [(1, 1, 4, 1), (3, 2, 5, 4), (2, 7, 7, 7), (4, 1, 16, 3), (2, 3, 0, 2)])
def test_small_bmm_to_the_bit_as_torch(sizes, dtype):
    """torch's bmm of small matrices (k n m < 400) is its own loop, adding each element's products in order from 0"""
    b, n, k, m = sizes
    rng = np.random.default_rng(sum(sizes))
    x, y = rng.standard_normal((b, n, k)).astype(dtype), rng.standard_normal((b, k, m)).astype(dtype)
    x[0, 0, :] = -0.0  # (a row of -0.0 products: the loop's sum is +0.0)
    ours = mt.bmm(mt.tensor(x), mt.tensor(y)).numpy()
    theirs = torch.bmm(torch.tensor(x), torch.tensor(y)).numpy()
    assert ours.tobytes() == theirs.tobytes()


@pytest.mark.parametrize("layout", ["column by column", "four columns"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_mv_to_the_bit_as_torch(layout, dtype):
    """seed 15072: a batch times a vector, folded into torch's mv; MKL's gemv adds a column-major matrix's products
    in order (and a row-major one's when it has at most 4 columns), as microtorch now does"""
    from _machine import gemv_in_order
    rng = np.random.default_rng(4)
    shape = (40, 24) if layout == "column by column" else (40, 4)
    a = rng.standard_normal(shape[::-1]).astype(dtype).T if layout == "column by column" else \
        rng.standard_normal(shape).astype(dtype)
    v = rng.standard_normal(shape[1]).astype(dtype)
    ours = mt.mv(mt.tensor(a.T).t() if layout == "column by column" else mt.tensor(a), mt.tensor(v)).numpy()
    theirs = torch.mv(torch.tensor(a.T).t() if layout == "column by column" else torch.tensor(a),
                      torch.tensor(v)).numpy()
    if gemv_in_order():
        assert ours.tobytes() == theirs.tobytes()
    else:  # (another CPU's MKL: its own order, within the last bits)
        np.testing.assert_allclose(ours, theirs, rtol=1e-5 if dtype == "float32" else 1e-13)


def test_a_uint8_index_is_a_mask_as_torch():
    """torch reads a uint8 index tensor as a mask (its old masks), with a deprecation warning where it has dims"""
    import warnings
    seen = []
    for L in (mt, torch):
        x = L.tensor(np.arange(6.0).reshape(3, 2), requires_grad=True)
        mask = L.tensor([1, 0, 1], dtype=L.uint8)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            rows, one, zero_d = x[mask], x[mask, 1], x[L.tensor(1, dtype=L.uint8)]
            y = L.tensor(np.arange(6.0).reshape(3, 2))
            y[mask] = L.tensor([5.0, 6.0], dtype=L.float64)
        messages = [(str(w.message).split(" (Triggered")[0], w.filename) for w in caught]
        seen.append((rows.tolist(), rows.grad_fn.name(), one.tolist(), tuple(zero_d.shape), y.tolist(), messages))
    assert seen[0] == seen[1]


@pytest.mark.parametrize("make", ["from_numpy", "tensor", "as_tensor", "asarray", "tensor, float32"])
def test_a_numpy_array_read_backwards_is_refused_as_by_torch(make):
    """a[::-1] has a negative stride, which no tensor has: torch's ValueError, naming the fix; a copy is accepted"""
    calls = {"from_numpy": lambda L, a: L.from_numpy(a), "tensor": lambda L, a: L.tensor(a),
             "as_tensor": lambda L, a: L.as_tensor(a), "asarray": lambda L, a: L.asarray(a),
             "tensor, float32": lambda L, a: L.tensor(a, dtype=L.float32)}
    backwards = np.arange(6.0).reshape(2, 3)[::-1]
    with pytest.raises(ValueError, match="negative") as theirs:
        calls[make](torch, backwards)
    with pytest.raises(ValueError, match="array.copy()") as ours:
        calls[make](mt, backwards)
    assert "negative" in str(ours.value) and type(ours.value) is type(theirs.value)
    assert calls[make](mt, backwards.copy()).tolist() == calls[make](torch, backwards.copy()).tolist()
