"""Old uint8 masks in writes, index_put's own rules, and sort's `stable` form, each beside torch 2.13.

- x[mask] = v and index_put_: with one index that is a mask and a one-element value, torch writes through
  masked_fill_, which refuses a uint8 mask; otherwise a uint8 index is a mask, with torch's deprecation warning,
  pointed at the user's line.
- index_put takes its values as they are (no ExpandBackward0 before IndexPutBackward0), refuses values of another
  dtype, and checks a mask's shape with torch's message.
- sort and argsort: given `stable`, dim and descending go by name.
"""
import warnings

import numpy as np
import pytest
import torch

import microtorch as mt

LIBS = [torch, mt]


def _outcome(fn):
    """(values, warning count) or (exception type, message)."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            out = fn()
        except Exception as e:  # noqa: BLE001 (the kind of error is what is compared)
            return type(e).__name__, str(e)
    return np.asarray(out.detach().numpy()).tolist(), len(seen)


def _u8(L, values):
    return L.tensor(values, dtype=L.uint8)


def _set(x, key, value):
    x[key] = value
    return x


WRITES = {
    "x[u8] = number": lambda L: _set(L.zeros(3), _u8(L, [1, 0, 1]), 1.0),
    "x[u8] = 0-d tensor": lambda L: _set(L.zeros(3), _u8(L, [1, 0, 1]), L.tensor(7.0)),
    "x[u8] = vector": lambda L: _set(L.zeros(3), _u8(L, [1, 0, 1]), L.tensor([5.0, 6.0])),
    "x[u8 2-d] = number": lambda L: _set(L.zeros(2, 3), _u8(L, [[1, 0, 1], [0, 0, 1]]), 3.0),
    "x[u8 rows, 1:] = number": lambda L: _set(L.zeros(2, 3), (_u8(L, [1, 0]), slice(1, None)), 4.0),
    "x[:, u8] = number": lambda L: _set(L.zeros(2, 3), (slice(None), _u8(L, [1, 0, 1])), 4.0),
    "x[1, u8] = number": lambda L: _set(L.zeros(2, 3), (1, _u8(L, [1, 0, 1])), 4.0),
    "x[u8, u8] = number (two masks)": lambda L: _set(L.zeros(2, 3), (_u8(L, [1, 0]), _u8(L, [1, 0, 1])), 4.0),
    "x[0-d u8] = number": lambda L: _set(L.arange(3.0), L.tensor(1, dtype=L.uint8), 4.0),
    "x[u8 of the wrong shape] = number": lambda L: _set(L.zeros(3), _u8(L, [1, 0]), 4.0),
    "x[bool] = number": lambda L: _set(L.zeros(3), L.tensor([True, False, True]), 4.0),
    "index_put u8, 0-d": lambda L: L.arange(3.0).index_put((_u8(L, [1, 0, 1]),), L.tensor(2.0)),
    "index_put u8, one element": lambda L: L.arange(3.0).index_put((_u8(L, [1, 0, 1]),), L.tensor([5.0])),
    "index_put u8, vector": lambda L: L.arange(3.0).index_put((_u8(L, [1, 0, 1]),), L.tensor([5.0, 6.0])),
    "index_put u8, accumulate": lambda L: L.arange(3.0).index_put((_u8(L, [1, 0, 1]),), L.tensor([5.0, 6.0]), True),
    "index_put u8, accumulate 0-d": lambda L: L.arange(3.0).index_put((_u8(L, [1, 0, 1]),), L.tensor(5.0), True),
    "index_put_ u8, vector": lambda L: L.arange(3.0).index_put_((_u8(L, [1, 0, 1]),), L.tensor([5.0, 6.0])),
    "index_put_ u8, 0-d": lambda L: L.arange(3.0).index_put_((_u8(L, [1, 0, 1]),), L.tensor(5.0)),
    "index_put u8 2-d": lambda L: L.zeros(2, 3).index_put((_u8(L, [[1, 0, 1], [0, 0, 1]]),), L.tensor([1.0, 2, 3])),
    "index_put u8 rows, row": lambda L: L.zeros(2, 3).index_put((_u8(L, [1, 0]),), L.tensor([4.0, 5, 6])),
    "index_put u8 and int": lambda L: L.zeros(2, 3).index_put((_u8(L, [1, 0]), L.tensor([2])), L.tensor(4.0)),
    "index_put 0-d u8": lambda L: L.arange(3.0).index_put((L.tensor(1, dtype=L.uint8),), L.tensor(4.0)),
    "index_put bool, [1, 1] value": lambda L: L.zeros(3).index_put((L.tensor([True, False, True]),),
                                                                   L.tensor([[2.0]])),
    "index_put int, [1, 1] value": lambda L: L.zeros(3).index_put((L.tensor([0, 1]),), L.tensor([[2.0]])),
    "index_put float64 values": lambda L: L.zeros(3).index_put((L.tensor([0, 2]),),
                                                               L.tensor([2.0, 3], dtype=L.float64)),
    "index_put_ float64 values": lambda L: L.zeros(3).index_put_((L.tensor([0, 2]),), L.tensor([2.0], dtype=L.float64)),
    "index_put int64 values, accumulate": lambda L: L.zeros(3).index_put((L.tensor([0, 2]),), L.tensor([2, 3]), True),
    "index_put mask of the wrong shape": lambda L: L.zeros(2, 3).index_put((L.tensor([True, False, True]),),
                                                                          L.tensor(1.0)),
    "index_put, values that do not broadcast": lambda L: L.zeros(3).index_put((L.tensor([0, 1]),),
                                                                              L.tensor([1.0, 2, 3])),
    "masked_scatter u8": lambda L: L.zeros(3).masked_scatter(_u8(L, [1, 0, 1]), L.ones(3)),
    "masked_fill u8": lambda L: L.zeros(3).masked_fill(_u8(L, [1, 0, 1]), 1.0),
}


@pytest.mark.parametrize("case", WRITES)
def test_writes_through_masks_as_torch(case):
    want, got = (_outcome(lambda: WRITES[case](L)) for L in LIBS)
    assert got[0] == want[0], (got, want)
    if isinstance(want[0], list):
        assert got[1] == want[1], "the number of warnings differs"
    else:  # (microtorch names the op and the fix around torch's words)
        assert want[1].rstrip(".") in got[1]


@pytest.mark.parametrize("indices", [(None, [0, 2]), ([0], 3)])
def test_index_put_names_the_index_that_is_not_a_tensor(indices):
    """torch's TypeError, naming the element (its argument's number differs between function and method)"""
    bad = next(k for k, i in enumerate(indices) if not isinstance(i, list))
    for L in LIBS:
        key = tuple(L.tensor(i) if isinstance(i, list) else i for i in indices)
        with pytest.raises(TypeError, match=f"expected Tensor as element {bad} in argument"):
            L.zeros(2, 3).index_put(key, L.tensor(1.0))


def test_the_uint8_warning_points_at_the_users_line():
    for L in LIBS:
        mask, x = _u8(L, [1, 0, 1]), L.zeros(3)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            x[mask] = L.tensor([1.0, 2.0])
            x.index_put_((mask,), L.tensor([1.0, 2.0]))
            L.index_put(x, (mask,), L.tensor([1.0, 2.0]))
        assert [w.filename for w in seen] == [__file__] * 3, L.__name__
        assert "deprecated" in str(seen[0].message)


@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_takes_its_values_as_they_are(accumulate):
    """No ExpandBackward0 between a broadcast value and IndexPutBackward0; the value's gradient is summed back."""
    out = {}
    for L in LIBS:
        x = L.arange(6.0).reshape(2, 3).requires_grad_()
        v = L.tensor([10.0, 20, 30], requires_grad=True)
        y = x.index_put((L.tensor([1, 0, 1]),), v, accumulate)
        (y * L.arange(6.0).reshape(2, 3)).sum().backward()
        nexts = [type(f).__name__ if f is not None else None for f, _ in y.grad_fn.next_functions]
        out[L] = (y.detach().numpy().tolist(), x.grad.numpy().tolist(), v.grad.numpy().tolist(), nexts)
    assert out[mt] == out[torch]


def test_index_put_under_vmap_broadcasts_the_value():
    """the batching rule lines a broadcast value up from the right, as one example does"""
    def put(L, x, v):
        return L.index_put(x, (L.tensor([2, 0]),), v)
    xs, vs = np.arange(24.0).reshape(2, 3, 4), np.array([[1.0, 2, 3, 4], [5, 6, 7, 8]])
    got = mt.vmap(lambda x, v: put(mt, x, v))(mt.tensor(xs), mt.tensor(vs))
    want = torch.vmap(lambda x, v: put(torch, x, v))(torch.tensor(xs), torch.tensor(vs))
    np.testing.assert_array_equal(got.numpy(), want.numpy())


SORTS = {
    "sort(x, 0, True)": lambda L, x: L.sort(x, 0, True),
    "sort(x, 0, stable=True)": lambda L, x: L.sort(x, 0, stable=True),
    "sort(x, stable=True, dim=0)": lambda L, x: L.sort(x, stable=True, dim=0),
    "x.sort(0, stable=True)": lambda L, x: x.sort(0, stable=True),
    "x.sort(stable=True)": lambda L, x: x.sort(stable=True),
    "sort(x, 0, False, stable=True)": lambda L, x: L.sort(x, 0, False, stable=True),
    "argsort(x, 0, stable=True)": lambda L, x: L.argsort(x, 0, stable=True),
    "x.argsort(0, stable=False)": lambda L, x: x.argsort(0, stable=False),
    "x.argsort(dim=0, descending=True, stable=True)": lambda L, x: x.argsort(dim=0, descending=True, stable=True),
    "x.argsort(0, True)": lambda L, x: x.argsort(0, True),
}


@pytest.mark.parametrize("case", SORTS)
def test_stable_takes_dim_by_name_as_torch(case):
    def run(L):
        x = L.tensor([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]])
        out = SORTS[case](L, x)
        return out[0] if isinstance(out, tuple) else out
    want, got = (_outcome(lambda: run(L)) for L in LIBS)
    assert got[0] == want[0]
    if not isinstance(want[0], list):
        assert got[1].split(", but expected")[0] == want[1].split(", but expected")[0]  # (a method's list: no self)
