"""add_/sub_ written straight into the tensor (ops/inplace_kernels.py) when nothing records them: the values
of the out-of-place op, the same memory, one version bump, and torch's behaviour wherever that path is
not taken (views, tracking, aliasing, integer tensors)."""
import numpy as np
import pytest
import torch

import microtorch as mt
from microtorch.ops import inplace

LIBS = [torch, mt]


def data(dtype=np.float64):
    r = np.random.default_rng(0)
    return r.standard_normal((5, 7)).astype(dtype), r.standard_normal((5, 7)).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op, alpha", [("add_", 1), ("add_", -0.01), ("sub_", 1), ("sub_", 3)])
def test_update_under_no_grad_is_the_out_of_place_result_in_the_same_memory(dtype, op, alpha, monkeypatch):
    a, b = data(dtype)
    monkeypatch.setattr(inplace, "apply_inplace", lambda *args, **kwargs: pytest.fail("took the general path"))
    x, y = mt.tensor(a.copy(), requires_grad=True), mt.tensor(b)
    ptr, version = x.data_ptr(), x._version
    with mt.no_grad():
        out = getattr(x, op)(y, alpha=alpha)
    expected = getattr(mt, op[:-1])(mt.tensor(a), mt.tensor(b), alpha=alpha).numpy()  # (the out-of-place op's)
    assert out is x and x.data_ptr() == ptr and x._version == version + 1
    assert np.array_equal(x.detach().numpy(), expected)
    t = torch.tensor(a.copy(), requires_grad=True)
    with torch.no_grad():
        getattr(t, op)(torch.tensor(b), alpha=alpha)
    if dtype == np.float32:  # (torch's fused multiply-add, followed: its bits)
        assert x.detach().numpy().tobytes() == t.detach().numpy().tobytes()
    np.testing.assert_allclose(x.detach().numpy(), t.detach().numpy(), rtol=1e-6 if dtype == np.float32 else 1e-14)


def test_sgd_step_updates_parameters_in_place_as_torch():
    a, g = data()
    results = []
    for L in LIBS:
        lin = L.nn.Linear(7, 5, dtype=L.float64)
        with L.no_grad():
            lin.weight.copy_(L.tensor(a))
        lin.weight.grad = L.tensor(g)
        alias, ptr, version = lin.weight.detach(), lin.weight.data_ptr(), lin.weight._version
        L.optim.SGD([lin.weight], lr=0.1).step()
        assert lin.weight.data_ptr() == ptr and lin.weight._version == version + 1
        results.append((lin.weight.detach().numpy().copy(), alias.numpy().copy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-14)
    assert np.array_equal(results[1][0], results[1][1])  # the detached alias sees the update


def _view_then_update(L):
    a, b = data()
    x = L.tensor(a, requires_grad=True)
    row = x[1]
    with L.no_grad():
        x.add_(L.tensor(b), alpha=2)
    return row.detach().numpy().copy(), type(row.grad_fn).__name__, row.requires_grad


def test_a_live_view_of_a_leaf_sees_the_update_and_gets_torchs_history():
    ours, theirs = _view_then_update(mt), _view_then_update(torch)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-14)
    assert ours[1:] == theirs[1:]


@pytest.mark.parametrize("case", ["tracked leaf", "aliased", "integer alpha float", "number"])
def test_other_cases_keep_torchs_behaviour(case):
    outcomes = []
    for L in LIBS:
        try:
            if case == "tracked leaf":  # grad mode on, x requires grad: torch refuses
                x = L.ones(3, requires_grad=True)
                x.add_(L.ones(3), alpha=0.5)
            elif case == "aliased":  # x.add_(x): the general path
                x = L.ones(3, dtype=L.float64)
                x.add_(x, alpha=0.5)
            elif case == "integer alpha float":
                x = L.ones(3, dtype=L.int64)
                x.add_(L.ones(3, dtype=L.int64), alpha=0.5)
            else:
                x = L.ones(3, dtype=L.float64)
                x.sub_(2.5, alpha=2)
            outcomes.append(x.detach().numpy().tolist())
        except Exception as e:  # noqa: BLE001 (the type is compared with torch's)
            outcomes.append(type(e).__name__)
    assert outcomes[0] == outcomes[1]


def test_a_numpy_alias_sees_the_update():
    x, y = mt.tensor(np.ones(4)), mt.tensor(np.full(4, 2.0))
    arr = x.numpy()
    x.add_(y, alpha=0.25)
    assert arr.tolist() == [1.5] * 4


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
@pytest.mark.parametrize("layouts", ["CC", "FF", "CF"])
def test_a_large_update_block_by_block_gives_the_out_of_place_values(dtype, layouts):
    """Larger than the 64 KiB temporary (and not a multiple of it): the same values as x - 0.3 * y in one piece."""
    r = np.random.default_rng(1)
    a, b = (r.standard_normal((300, 71)).astype(dtype) for _ in range(2))
    a, b = (np.asfortranarray(v) if order == "F" else v for v, order in zip((a, b), layouts))
    x, y = mt.tensor(a), mt.tensor(b)
    x._data, y._data = a.copy(order="K"), b  # (the layouts asked for)
    x.sub_(y, alpha=0.3)
    assert np.array_equal(x.numpy(), mt.sub(mt.tensor(a), mt.tensor(b), alpha=0.3).numpy())
    t = torch.tensor(a.copy())
    t.sub_(torch.tensor(b), alpha=0.3)
    if dtype == np.float32:  # (torch's fused multiply-add, followed: its bits)
        assert np.array_equal(x.numpy(), t.numpy())
    tol = 1e-6 if dtype == np.float32 else 1e-14  # (float64: torch fuses the multiply-add, one rounding less)
    np.testing.assert_allclose(x.numpy(), t.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("op", ["__iadd__", "__isub__"])
def test_augmented_assignment_under_no_grad_writes_into_the_tensor(op, monkeypatch):
    """A student's `w -= lr * w.grad`: the same values as w - lr * w.grad, in w's memory, one version more."""
    a, g = data()
    monkeypatch.setattr(inplace, "apply_inplace", lambda *args, **kwargs: pytest.fail("took the general path"))
    results = []
    for L in LIBS:
        w = L.tensor(a.copy(), requires_grad=True)
        ptr, version = w.data_ptr(), w._version
        with L.no_grad():
            step = L.tensor(g) * 0.1
            w2 = getattr(w, op)(step)
        assert w2 is w and w.data_ptr() == ptr and w._version == version + 1
        results.append(w.detach().numpy().copy())
    expected = (a + 0.1 * g) if op == "__iadd__" else (a - 0.1 * g)
    assert np.array_equal(results[1], expected)
    np.testing.assert_allclose(results[1], results[0], rtol=1e-14)


@pytest.mark.parametrize("other", [None, "a", 2.5])
def test_augmented_assignment_with_other_operands_keeps_torchs_behaviour(other):
    outcomes = []
    for L in LIBS:
        x = L.ones(3, dtype=L.float64)
        try:
            x -= other
            outcomes.append(x.numpy().tolist())
        except Exception as e:  # noqa: BLE001 (the type is compared with torch's)
            outcomes.append(type(e).__name__)
    assert outcomes[0] == outcomes[1]
