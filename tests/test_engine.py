"""The engine's behaviours, each checked against torch (or against a hand-derived value):
accumulation, retain_graph and freeing, re-used nodes, diamonds, inputs=, allow_unused,
higher order, a 100,000-op chain, grad modes, leaf rules, retain_grad, graph structure,
reprs, dtype promotion and the creation functions."""
import gc
import re
import tracemalloc
import warnings

import numpy as np
import pytest
import torch

import microtorch as mt
from microtorch.autograd import engine as mt_engine

LIBS = [mt, torch]


def npy(t):
    return t.detach().numpy() if t is not None else None


def both(fn):
    """Run fn(m) for microtorch and torch; return the two results."""
    return fn(mt), fn(torch)


def assert_same(a, b, rtol=1e-6, atol=1e-7):
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert_same(x, y, rtol, atol)
        return
    if a is None or b is None:
        assert a is None and b is None, f"{a} vs {b}"
        return
    if hasattr(b, "detach"):
        assert tuple(a.shape) == tuple(b.shape)
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
        a, b = npy(a), npy(b)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


# ---- accumulation, retain_graph, freeing ------------------------------------------------------
def test_grads_accumulate_over_backward_calls():
    def run(m):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = (x * x).sum()
        y.backward(retain_graph=True)
        first = x.grad.clone()
        y.backward()
        (x ** 3).sum().backward()
        return first, x.grad
    assert_same(*both(run))


def test_grad_is_a_fresh_tensor_and_zeroing_works():
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    g = mt.tensor([5.0, 7.0])
    (x * 1).backward(g)
    assert x.grad is not g and np.shares_memory(x.grad.numpy(), g.numpy()) is False
    x.grad = None
    (x * 2).sum().backward()
    assert_same(x.grad, torch.tensor([2.0, 2.0]))
    x.grad.zero_()
    assert (x.grad.numpy() == 0).all()


def test_second_backward_without_retain_graph_raises_torchs_error():
    for m in LIBS:
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = (x.exp() * x).sum()
        y.backward()
        with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
            y.backward()


def test_retain_graph_allows_a_second_backward():
    for m in LIBS:
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = (x.exp() * x).sum()
        y.backward(retain_graph=True)
        y.backward()
        assert np.allclose(npy(x.grad), 2 * (np.exp([1.0, 2.0]) * (1 + np.array([1.0, 2.0]))))


def test_saved_tensors_are_released_after_backward():
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    node = y.grad_fn
    assert len(node.saved_tensors) == 1
    y.sum().backward()
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        node.saved_tensors


def test_memory_is_returned_after_backward():
    x = mt.randn(250_000, dtype=mt.float64, requires_grad=True)  # 2 MB per array
    gc.collect()
    tracemalloc.start()
    try:
        y = x
        for _ in range(20):
            y = (y * 1.0001).tanh()
        loss = y.sum()
        held = tracemalloc.get_traced_memory()[0]
        loss.backward()
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    # 20 saved tanh outputs of 2 MB while the graph is alive; only x.grad (2 MB) stays after backward
    assert held > 18 * 2_000_000
    assert after < 6 * 2_000_000, f"{after / 1e6:.1f} MB still held after backward"
    assert loss.grad_fn is not None  # the graph object survives, its saved tensors do not


# ---- graph shapes -------------------------------------------------------------------------
def test_reused_node_b_is_a_plus_a_c_is_b_plus_b():
    def run(m):
        a = m.tensor([1.5, -2.0], requires_grad=True)
        b = a + a
        c = b + b
        c.sum().backward()
        return a.grad
    ga, gt = both(run)
    assert_same(ga, gt)
    np.testing.assert_allclose(npy(ga), [4.0, 4.0])


def test_diamond():
    def run(m):
        x = m.tensor([0.3, -1.2, 2.0], requires_grad=True)
        y1 = x * 2
        y2 = x.sin()
        z = (y1 * y2 + y1.exp() - y2).sum()
        z.backward()
        return x.grad
    assert_same(*both(run))


def test_deep_diamond_chain():
    def run(m):
        x = m.tensor([0.5, 1.5], requires_grad=True)
        y = x
        for _ in range(30):
            y = (y.sin() + y.cos()) * 0.7
        y.sum().backward()
        return x.grad
    assert_same(*both(run))


def test_same_leaf_twice_in_one_op():
    def run(m):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        (x * x).sum().backward()
        y = m.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        (y @ y).sum().backward()
        return x.grad, y.grad
    assert_same(*both(run))


def test_multiple_roots_and_grad_tensors():
    def run(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        a, b = x * 3, x.exp()
        m.autograd.backward([a, b], [m.tensor([1.0, -1.0]), m.tensor([0.5, 2.0])])
        return x.grad
    assert_same(*both(run))


def test_backward_with_gradient_argument():
    def run(m):
        x = m.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        y = x * x
        y.backward(gradient=m.tensor([[1.0, 0.0], [0.5, 2.0]]))
        return x.grad
    assert_same(*both(run))


# ---- inputs=, allow_unused, materialize_grads ---------------------------------------------
def test_backward_inputs_only_accumulates_into_those():
    def run(m):
        a = m.tensor([1.0, 2.0], requires_grad=True)
        b = m.tensor([3.0, 4.0], requires_grad=True)
        h = a * b
        (h * a).sum().backward(inputs=[a])
        return a.grad, b.grad
    (ga, gb), (ta, tb) = both(run)
    assert_same(ga, ta)
    assert gb is None and tb is None


def test_backward_inputs_with_a_non_leaf_retains_its_grad():
    def run(m):
        a = m.tensor([1.0, 2.0], requires_grad=True)
        h = a * 2
        (h * h).sum().backward(inputs=[h])
        return h.grad, a.grad
    (hm, am), (ht, at) = both(run)
    assert_same(hm, ht)
    assert am is None and at is None


def test_autograd_grad_does_not_touch_dot_grad():
    def run(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        w = m.tensor([3.0, -1.0], requires_grad=True)
        (gx,) = m.autograd.grad((x * w).sum(), x)
        return gx, x.grad, w.grad
    (gx, xg, wg), (tx, txg, twg) = both(run)
    assert_same(gx, tx)
    assert xg is None and wg is None and txg is None and twg is None


def test_grad_of_a_non_leaf_input():
    def run(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        h = x.exp()
        y = (h * h).sum()
        return m.autograd.grad(y, [h, x])
    assert_same(*both(run))


def test_allow_unused_and_materialize_grads():
    for m in LIBS:
        x = m.tensor([1.0, 2.0], requires_grad=True)
        unused = m.tensor([3.0], requires_grad=True)
        y = (x * 2).sum()
        with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
            m.autograd.grad(y, [x, unused], retain_graph=True)
        gx, gu = m.autograd.grad(y, [x, unused], allow_unused=True, retain_graph=True)
        assert gu is None
        gx, gu = m.autograd.grad(y, [x, unused], materialize_grads=True)
        assert npy(gu).tolist() == [0.0]
        with pytest.raises(ValueError):
            m.autograd.grad((x * 2).sum(), [x, unused], allow_unused=False, materialize_grads=True)


def test_grad_outputs_for_non_scalar_outputs():
    def run(m):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        return m.autograd.grad(x.sin(), x, grad_outputs=m.tensor([1.0, 0.5, -1.0]))
    assert_same(*both(run))


# ---- higher order ---------------------------------------------------------------------------
def test_grad_of_grad_of_grad():
    def run(m):
        x = m.tensor([0.5, -1.0, 2.0], requires_grad=True)
        y = (x ** 4 + x.sin() * x).sum()
        (g1,) = m.autograd.grad(y, x, create_graph=True)
        (g2,) = m.autograd.grad(g1.sum(), x, create_graph=True)
        (g3,) = m.autograd.grad(g2.sum(), x)
        return g1, g2, g3
    (g1, g2, g3), t = both(run)
    assert_same((g1, g2, g3), t)
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(npy(g3), 24 * x - 3 * np.sin(x) - x * np.cos(x))
    assert not g3.requires_grad and g1.requires_grad


def test_create_graph_backward_makes_grad_differentiable():
    def run(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = (x ** 3).sum()
        y.backward(create_graph=True)
        g = x.grad
        assert g.requires_grad
        (h,) = m.autograd.grad(g.sum(), x)
        return h
    assert_same(*both(run))


def test_hessian_vector_product_through_an_mlp():
    rng = np.random.default_rng(0)
    w1, w2, xin = rng.standard_normal((4, 3)), rng.standard_normal((3, 1)), rng.standard_normal((5, 4))
    v = rng.standard_normal((4, 3))

    def run(m):
        W1, W2 = m.tensor(w1, requires_grad=True), m.tensor(w2, requires_grad=True)
        out = ((m.tensor(xin) @ W1).tanh() @ W2).pow(2).mean()
        (g,) = m.autograd.grad(out, W1, create_graph=True)
        return m.autograd.grad((g * m.tensor(v)).sum(), [W1, W2])
    assert_same(*both(run))


# ---- the long chain -----------------------------------------------------------------------
def test_100000_op_chain_without_recursion_error():
    x = mt.tensor([1.0], dtype=mt.float64, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y + 0.0001
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0])
    np.testing.assert_allclose(y.detach().numpy(), [1.0 + 10.0], rtol=1e-9)
    del y  # dropping the chain must not recurse either
    gc.collect()


def test_long_chain_with_create_graph():
    x = mt.tensor([0.5], dtype=mt.float64, requires_grad=True)
    y = x
    for _ in range(2_000):
        y = y * 1.0
    (g,) = mt.autograd.grad((y * y).sum(), x, create_graph=True)
    (h,) = mt.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), [2.0])


# ---- grad modes -----------------------------------------------------------------------------
@pytest.mark.parametrize("m", LIBS, ids=["mt", "torch"])
def test_grad_modes_as_context_managers(m):
    x = m.tensor([1.0], requires_grad=True)
    with m.no_grad():
        assert not m.is_grad_enabled()
        y = x * 2
        with m.enable_grad():
            assert m.is_grad_enabled()
            z = x * 2
    assert not y.requires_grad and y.grad_fn is None and y.is_leaf
    assert z.requires_grad and z.grad_fn is not None
    with m.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert m.is_grad_enabled()
    with m.inference_mode():
        assert not (x * 2).requires_grad
        assert m.is_inference_mode_enabled()
    with m.inference_mode(False):
        assert (x * 2).requires_grad
    assert m.is_grad_enabled() and not m.is_inference_mode_enabled()


@pytest.mark.parametrize("m", LIBS, ids=["mt", "torch"])
def test_grad_modes_as_decorators(m):
    x = m.tensor([1.0], requires_grad=True)

    @m.no_grad()
    def f1():
        return x * 2

    @m.no_grad
    def f1b():
        return x * 2

    @m.enable_grad()
    def f2():
        return x * 2

    @m.set_grad_enabled(False)
    def f3():
        return x * 2

    assert m.is_grad_enabled(), "decorating with set_grad_enabled(False) must not switch grad off"

    @m.inference_mode()
    def f4():
        return x * 2

    @m.inference_mode
    def f4b():
        return x * 2

    assert not f1().requires_grad and not f1b().requires_grad
    assert not f3().requires_grad and not f4().requires_grad and not f4b().requires_grad
    with m.no_grad():
        assert f2().requires_grad
    assert m.is_grad_enabled()


@pytest.mark.parametrize("m", LIBS, ids=["mt", "torch"])
def test_set_grad_enabled_as_a_function(m):
    m.set_grad_enabled(False)
    try:
        assert not m.is_grad_enabled()
        assert not (m.tensor([1.0], requires_grad=True) * 2).requires_grad
    finally:
        m.set_grad_enabled(True)
    assert m.is_grad_enabled()


def test_grad_mode_is_restored_after_an_exception():
    with pytest.raises(ValueError):
        with mt.no_grad():
            raise ValueError
    assert mt.is_grad_enabled()


def test_backward_works_inside_no_grad():
    def run(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        with m.no_grad():
            y.backward()
        return x.grad
    assert_same(*both(run))


# ---- leaves, requires_grad, retain_grad -----------------------------------------------------
@pytest.mark.parametrize("m", LIBS, ids=["mt", "torch"])
def test_is_leaf_and_requires_grad_rules(m):
    a = m.tensor([1.0, 2.0])
    b = m.tensor([1.0, 2.0], requires_grad=True)
    assert a.is_leaf and not a.requires_grad
    assert b.is_leaf and b.requires_grad and b.grad_fn is None
    c = a * 2
    assert c.is_leaf and not c.requires_grad
    d = a * b
    assert not d.is_leaf and d.requires_grad
    e = d.detach()
    assert e.is_leaf and not e.requires_grad
    assert np.shares_memory(npy(e), npy(d))
    with pytest.raises(RuntimeError):
        d.requires_grad = False
    f = a.requires_grad_()
    assert f is a and a.requires_grad and a.is_leaf
    assert (d > 1).requires_grad is False
    assert d.argmax().requires_grad is False
    with pytest.raises(RuntimeError, match="(?i)only Tensors of floating point"):
        m.tensor([1, 2]).requires_grad_()
    with pytest.raises(RuntimeError, match="(?i)only Tensors of floating point"):
        m.tensor([1, 2], requires_grad=True) if m is torch else mt.tensor([1, 2], requires_grad=True)
    with pytest.raises(RuntimeError, match="(?i)only Tensors of floating point"):
        m.zeros(2, dtype=m.int64, requires_grad=True)
    g = m.ones(2, requires_grad=True)
    assert g.is_leaf and g.requires_grad


@pytest.mark.parametrize("m", LIBS, ids=["mt", "torch"])
def test_retain_grad(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    h = x * 3
    h.retain_grad()
    assert h.retains_grad and not x.retains_grad
    k = x * 4
    (h * h + k).sum().backward()
    np.testing.assert_allclose(npy(h.grad), [6.0, 12.0])
    with pytest.warns(UserWarning, match="is not a leaf Tensor"):
        assert k.grad is None


@pytest.mark.parametrize("m", LIBS, ids=["mt", "torch"])
def test_leaf_grad_dtype_and_shape_follow_the_leaf(m):
    x = m.tensor([[1.0, 2.0]], dtype=m.float64, requires_grad=True)
    (x * m.tensor([3.0, 4.0], dtype=m.float32)).sum().backward()
    assert x.grad.dtype == m.float64 and tuple(x.grad.shape) == (1, 2)
    b = m.tensor(2.0, requires_grad=True)
    (b * m.ones(3, 4)).sum().backward()
    assert tuple(b.grad.shape) == () and float(b.grad) == 12.0


# ---- graph structure ------------------------------------------------------------------------
def _names(node, depth=0, limit=6):
    if node is None or depth > limit:
        return None
    return (node.name(), tuple(_names(n, depth + 1) for n, _ in node.next_functions))


def test_next_functions_mirror_torch():
    def run(m):
        a = m.tensor([1.0, 2.0], requires_grad=True)
        b = m.tensor([3.0, 4.0], requires_grad=True)
        c = m.tensor([5.0, 6.0])
        out = ((a * b + a).exp() * c - b.sum()).mean()
        return _names(out.grad_fn), out
    (nm, out), (nt, _) = both(run)
    assert nm == nt
    # a leaf's AccumulateGrad node is shared by all its uses and points back at it
    add = out.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0].next_functions[0][0]
    acc_a_via_mul = add.next_functions[0][0].next_functions[0][0]
    acc_a_direct = add.next_functions[1][0]
    assert acc_a_via_mul is acc_a_direct
    assert acc_a_direct.name() == "torch::autograd::AccumulateGrad"
    assert acc_a_direct.variable.tolist() == [1.0, 2.0]
    assert acc_a_direct.next_functions == ()


def test_next_functions_output_numbers_and_constants():
    def run(m):
        x = m.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        p, q = x.split(1)
        y = q * 2 + p
        return [(n.name() if n is not None else None, nr) for n, nr in y.grad_fn.next_functions], \
               [(n.name() if n is not None else None, nr) for n, nr in y.grad_fn.next_functions[0][0].next_functions]
    assert both(run)[0] == both(run)[1]


def test_grad_fn_metadata_is_a_dict():
    y = mt.tensor([1.0], requires_grad=True) * 2
    y.grad_fn.metadata["note"] = "hello"
    assert y.grad_fn.metadata == {"note": "hello"}


# ---- repr -----------------------------------------------------------------------------------
REPR_CASES = [
    lambda m: m.tensor([1.0, 2.0]),
    lambda m: m.tensor([1.0, 2.0], requires_grad=True),
    lambda m: m.tensor([1.0, 2.0], requires_grad=True) * 2,
    lambda m: m.tensor([1.5, -2.25, 3.0]),
    lambda m: m.tensor(3.5),
    lambda m: m.tensor(3),
    lambda m: m.tensor(True),
    lambda m: m.tensor([1, 2, 3]),
    lambda m: m.tensor([True, False]),
    lambda m: m.tensor([[1.0, 2.0], [3.0, 4.0]]),
    lambda m: m.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=m.float64),
    lambda m: m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True),
    lambda m: m.tensor([0.1234567, 10.5]),
    lambda m: m.tensor([1e-5, 1.0]),
    lambda m: m.tensor([1e10, 1.0]),
    lambda m: m.tensor([float("inf"), float("nan"), 1.0]),
    lambda m: m.tensor([1, 2], dtype=m.int32),
    lambda m: m.zeros(0),
    lambda m: m.zeros(2, 0),
    lambda m: m.tensor([[1.5]], requires_grad=True).sum(),
    lambda m: m.tensor([1.0, 2.0], requires_grad=True).max(0),
    lambda m: m.arange(6).reshape(2, 3),
    lambda m: m.tensor([-1.0, 0.0, 1.0]),
    lambda m: m.tensor([100.0, 2.5]),
    lambda m: m.arange(2000.0),
    lambda m: m.arange(2000),
    lambda m: m.tensor([0.0, -0.0, 5.0]),
    lambda m: m.tensor([[1, -200], [3000, 4]]),
    lambda m: m.tensor(np.random.default_rng(0).standard_normal((40, 40))),
    lambda m: m.tensor(np.random.default_rng(1).standard_normal((2, 3, 4))).float(),
    lambda m: m.tensor(np.random.default_rng(2).standard_normal(30), requires_grad=True) * 1,
    lambda m: m.tensor(np.random.default_rng(3).standard_normal(100) * 1000),
    lambda m: m.tensor([1.0, 2.0], dtype=m.float16),
    lambda m: m.tensor([1 + 2j, -0.5j]),
    lambda m: m.tensor([[True, False], [False, False]]),
    lambda m: m.zeros(3, 0, 2, dtype=m.int64),
    lambda m: m.tensor([0.001, 12345.678]),
]


@pytest.mark.parametrize("k", range(len(REPR_CASES)))
def test_repr_like_torch(k):
    a, b = both(REPR_CASES[k])

    def norm(r):  # "microtorch." is longer than "torch.", so a suffix may wrap on one side only
        return re.sub(r",\s+(dtype=|grad_fn=|requires_grad=|size=)", r", \1", r.replace("microtorch", "torch"))
    assert norm(repr(a)) == norm(repr(b))


def test_repr_of_size_dtype_device():
    assert repr(mt.zeros(2, 3).shape) == "microtorch.Size([2, 3])"
    assert repr(mt.float64) == "microtorch.float64"
    assert str(mt.zeros(1).device) == "cpu"
    assert repr(mt.zeros(1).device) == repr(torch.zeros(1).device)


# ---- dtype promotion ----------------------------------------------------------------------
def _operand(m, kind):
    """tensor dims/0-dim of a dtype, or a python scalar"""
    if kind in ("py_bool", "py_int", "py_float"):
        return {"py_bool": True, "py_int": 2, "py_float": 2.5}[kind]
    shape, dt = kind.split(":")
    dtype = getattr(m, dt)
    return m.ones(3, dtype=dtype) if shape == "t" else m.tensor(1, dtype=dtype)


KINDS = ["t:bool", "t:int64", "t:int32", "t:uint8", "t:float32", "t:float64",
         "z:bool", "z:int64", "z:int32", "z:float32", "z:float64", "py_bool", "py_int", "py_float"]


@pytest.mark.parametrize("ka", KINDS[:11])
def test_result_type_and_op_dtypes_like_torch(ka):
    for kb in KINDS:
        rt_m = mt.result_type(_operand(mt, ka), _operand(mt, kb))
        rt_t = torch.result_type(_operand(torch, ka), _operand(torch, kb))
        assert rt_m.name == str(rt_t).split(".")[-1], (ka, kb)
        for op in ("add", "mul", "sub", "div", "maximum"):
            if op == "sub" and ("bool" in ka or "bool" in kb):
                continue
            if op == "maximum" and kb.startswith("py"):
                continue
            rm = getattr(mt, op)(_operand(mt, ka), _operand(mt, kb))
            rt = getattr(torch, op)(_operand(torch, ka), _operand(torch, kb))
            assert rm.dtype.name == str(rt.dtype).split(".")[-1], (op, ka, kb)
            np.testing.assert_allclose(rm.numpy().astype(float), rt.numpy().astype(float), rtol=1e-6)


def test_promote_types_like_torch():
    names = ["bool", "uint8", "int32", "int64", "float32", "float64"]
    for a in names:
        for b in names:
            assert mt.promote_types(getattr(mt, a), getattr(mt, b)).name == \
                str(torch.promote_types(getattr(torch, a), getattr(torch, b))).split(".")[-1]


def test_default_dtype_governs_python_floats():
    for m in LIBS:
        m.set_default_dtype(m.float64)
        try:
            assert m.tensor(1.0).dtype == m.float64
            assert m.zeros(2).dtype == m.float64
            assert (m.tensor([1, 2]) * 0.5).dtype == m.float64
            assert (m.ones(2, dtype=m.float32) * 0.5).dtype == m.float32
            assert m.arange(0.0, 1.0, 0.5).dtype == m.float64
        finally:
            m.set_default_dtype(m.float32)
        assert m.get_default_dtype() == m.float32
        assert m.tensor(1.0).dtype == m.float32


# ---- creation ---------------------------------------------------------------------------------
CREATION = [
    lambda m: m.tensor([[1, 2], [3, 4]]),
    lambda m: m.tensor([1, 2.5]),
    lambda m: m.tensor([True, False]),
    lambda m: m.tensor([[1.0]], dtype=m.float64),
    lambda m: m.tensor(np.arange(3, dtype=np.int32)),
    lambda m: m.tensor(np.float64(1.5)),
    lambda m: m.tensor(np.int32(3)),
    lambda m: m.tensor([np.float64(1.0), 2.0]),
    lambda m: m.tensor([np.int32(1), 2]),
    lambda m: m.tensor([[np.float16(1.0)]]),
    lambda m: m.as_tensor([1, 2, 3], dtype=m.float32),
    lambda m: m.from_numpy(np.array([1.0, 2.0])),
    lambda m: m.zeros(2, 3),
    lambda m: m.zeros((2, 3), dtype=m.int64),
    lambda m: m.ones(4),
    lambda m: m.ones([2, 2], dtype=m.bool),
    lambda m: m.full((2, 2), 7),
    lambda m: m.full((2, 2), 7.5),
    lambda m: m.full((2,), True),
    lambda m: m.empty(2, 3).shape,
    lambda m: m.arange(5),
    lambda m: m.arange(1, 4),
    lambda m: m.arange(0, 1, 0.25),
    lambda m: m.arange(1.0, 2.0, 0.3),
    lambda m: m.arange(5, dtype=m.float64),
    lambda m: m.linspace(0, 1, 5),
    lambda m: m.linspace(-1, 1, steps=3, dtype=m.float64),
    lambda m: m.eye(3),
    lambda m: m.eye(2, 3),
    lambda m: m.zeros_like(m.tensor([[1, 2]])),
    lambda m: m.ones_like(m.tensor([1.0, 2.0], dtype=m.float64)),
    lambda m: m.full_like(m.tensor([1, 2]), 3),
    lambda m: m.empty_like(m.tensor([1.0])).shape,
    lambda m: m.zeros_like(m.tensor([1, 2]), dtype=m.float32),
    lambda m: m.rand(2, 3).shape,
    lambda m: m.rand(2, 3).dtype,
    lambda m: m.randn(4).dtype,
    lambda m: m.randn(2, 2, dtype=m.float64).dtype,
    lambda m: m.randint(0, 5, (3,)).dtype,
    lambda m: m.randint(5, (2, 2)).shape,
    lambda m: m.rand_like(m.tensor([1.0, 2.0])).shape,
    lambda m: m.randn_like(m.tensor([1.0], dtype=m.float64)).dtype,
]


@pytest.mark.parametrize("k", range(len(CREATION)))
def test_creation_like_torch(k):
    a, b = both(CREATION[k])
    if hasattr(b, "detach"):
        assert_same(a, b)
        assert a.is_leaf and not a.requires_grad
    else:
        assert str(a).replace("microtorch", "torch") == str(b)


def test_random_ranges_and_seeding():
    mt.manual_seed(3)
    a = mt.rand(1000)
    mt.manual_seed(3)
    b = mt.rand(1000)
    assert (a.numpy() == b.numpy()).all()
    assert a.numpy().min() >= 0 and a.numpy().max() < 1
    r = mt.randint(2, 5, (1000,)).numpy()
    assert r.min() == 2 and r.max() == 4
    n = mt.randn(10_000).numpy()
    assert abs(n.mean()) < 0.05 and abs(n.std() - 1) < 0.05


def test_from_numpy_and_as_tensor_share_memory_tensor_copies():
    arr = np.array([1.0, 2.0])
    t1, t2, t3 = mt.from_numpy(arr), mt.as_tensor(arr), mt.tensor(arr)
    arr[0] = 9.0
    assert t1.tolist()[0] == 9.0 and t2.tolist()[0] == 9.0 and t3.tolist()[0] == 1.0
    assert t1.dtype is mt.float64


def test_creation_with_requires_grad():
    for m in LIBS:
        for t in (m.zeros(2, requires_grad=True), m.ones(2, requires_grad=True), m.rand(2, requires_grad=True),
                  m.randn(2, requires_grad=True), m.full((2,), 1.0, requires_grad=True),
                  m.arange(3.0, requires_grad=True), m.linspace(0, 1, 3, requires_grad=True),
                  m.eye(2, requires_grad=True), m.zeros_like(m.ones(2), requires_grad=True),
                  m.tensor([1.0], requires_grad=True)):
            assert t.requires_grad and t.is_leaf


# ---- attributes and conversions --------------------------------------------------------------
def test_attributes_and_conversions_like_torch():
    def run(m):
        x = m.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        return (tuple(x.shape), tuple(x.size()), x.size(1), x.size(-1), x.dim(), x.ndim, x.numel(),
                str(x.dtype).split(".")[-1], str(x.device), x.T.tolist(), x.mT.tolist(), x.detach().numpy().tolist(),
                x[0, 1].item(), x.tolist(), str(x.double().dtype).split(".")[-1], str(x.float().dtype).split(".")[-1],
                str(x.to(m.float64).dtype).split(".")[-1], x.clone().grad_fn.name(), x.contiguous() is x,
                x.detach().requires_grad, x._version, x.is_leaf, x.requires_grad, x.retains_grad,
                x.to(m.float32) is x, x.data.requires_grad, x.double().grad_fn.name())
    assert both(run)[0] == both(run)[1]


def test_numpy_of_a_tensor_that_requires_grad_raises_like_torch():
    for m in LIBS:
        with pytest.raises(RuntimeError, match=re.escape("Use tensor.detach().numpy()")):
            m.tensor([1.0], requires_grad=True).numpy()


def test_to_dtype_is_differentiable():
    def run(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x.double()
        (y * y).sum().backward()
        return x.grad, y.grad_fn.name()
    (g, n), (tg, tn) = both(run)
    assert_same(g, tg)
    assert n == tn


def test_version_counter_bumps_on_inplace():
    for m in LIBS:
        x = m.tensor([1.0, 2.0])
        v = x._version
        x.add_(1)
        x.mul_(2)
        assert x._version == v + 2


def test_no_warnings_in_a_plain_training_step():
    x = mt.randn(8, 4)
    w = mt.randn(4, 3, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loss = (x @ w).relu().sum()
        loss.backward()
        with mt.no_grad():
            w -= 0.1 * w.grad
        w.grad = None


def test_legacy_tensor_constructor_and_variable_like_torch():
    def run(m):
        from_list, sized, empty = m.Tensor([1, 2]), m.Tensor(2, 3), m.Tensor()
        return (repr(from_list), tuple(sized.shape), str(sized.dtype).split(".")[-1], repr(empty),
                str(m.Tensor([True]).dtype).split(".")[-1])
    a, b = both(run)
    assert (a[0].replace("microtorch", "torch"),) + a[1:] == b

    # the hook example of torch.autograd's (old) docs, in ../shared/seeds
    for m in LIBS:
        v = m.autograd.Variable(m.Tensor([0, 0, 0]), requires_grad=True)
        h = v.register_hook(lambda grad: grad * 2)
        v.backward(m.Tensor([1, 1, 1]))
        assert v.grad.data.tolist() == [2.0, 2.0, 2.0]
        h.remove()
        assert isinstance(v, m.autograd.Variable) and type(v) is m.Tensor
        t = m.ones(2)
        w = m.autograd.Variable(t)
        assert w is not t and not w.requires_grad and np.shares_memory(npy(w), npy(t))


def test_complex_random_tensors_have_random_imaginary_parts():
    """torch.randn/rand with a complex dtype draw both parts (randn: variance 1/2 each)."""
    import numpy as np
    import microtorch as mt
    mt.manual_seed(0)
    z = mt.randn(20000, dtype=mt.complex128)
    assert z.dtype is mt.complex128
    assert abs(np.var(z.imag.detach().numpy()) - 0.5) < 0.05
    assert abs(np.var(z.real.detach().numpy()) - 0.5) < 0.05
    u = mt.rand(20000, dtype=mt.complex64)
    assert 0 <= u.imag.numpy().min() and u.imag.numpy().max() < 1 and u.imag.numpy().mean() > 0.4


# ---- AccumulateGrad keeps a gradient nobody else holds (torch does not copy it) --------------
def _leaf_grad_memory(L, keep):
    """For nn.Linear's weight and bias and for a plain leaf: is .grad the gradient backward
    computed (the same memory, seen through a hook), as torch decides by reference count?"""
    L.manual_seed(0)
    lin = L.nn.Linear(6, 3, dtype=L.float64)
    y = L.randn(4, dtype=L.float64, requires_grad=True)
    seen, kept = {}, []
    for name, t in (("weight", lin.weight), ("bias", lin.bias), ("y", y)):
        t.register_hook(lambda g, name=name: (seen.__setitem__(name, g.data_ptr()), kept.append(g) if keep else None)
                        and None)
    (lin(L.randn(5, 6, dtype=L.float64)).sum() + (y * 2).sum()).backward()
    return {name: seen[name] == t.grad.data_ptr() for name, t in (("weight", lin.weight), ("bias", lin.bias), ("y", y))}


@pytest.mark.skipif(not mt_engine._COUNTED,
                    reason="references are counted on CPython 3.11 only; elsewhere .grad is a copy")
@pytest.mark.parametrize("keep", [False, True])
def test_accumulate_grad_keeps_an_unshared_gradient_as_torch(keep):
    m, t = both(lambda L: _leaf_grad_memory(L, keep))
    assert m == t == {"weight": not keep, "bias": not keep, "y": not keep}


def test_a_kept_gradient_is_not_changed_by_later_accumulation():
    for L in LIBS:
        y = L.ones(3, dtype=L.float64, requires_grad=True)
        kept = []
        y.register_hook(kept.append)
        (y * 2).sum().backward()
        (y * 2).sum().backward()
        assert kept[0].tolist() == [2.0, 2.0, 2.0] and y.grad.tolist() == [4.0, 4.0, 4.0]


def _mm_grad_layout(L):
    """Strides and second-order graph of mm's gradients, for row- and column-major operands."""
    L.manual_seed(0)
    out = []
    for a_colmajor in (False, True):
        a = L.randn(5, 4, dtype=L.float64).t() if a_colmajor else L.randn(4, 5, dtype=L.float64)
        a = a.detach().requires_grad_()
        w = L.randn(3, 5, dtype=L.float64, requires_grad=True)
        b = L.randn(3, dtype=L.float64, requires_grad=True)
        ga, gw = L.autograd.grad(L.nn.functional.linear(a, w, b).pow(2).sum(), (a, w), create_graph=True)
        for g in (ga, gw):
            names, f = [], g.grad_fn
            while f is not None and f.name() != "MmBackward0":
                names.append(f.name())
                f = f.next_functions[0][0]
            out.append((g.stride(), names + [f.name()], [n.name() if n else None for n, _ in f.next_functions]))
    return out


def test_mm_gradients_have_torchs_layout_and_graph():
    m, t = both(_mm_grad_layout)
    assert m == t


def test_gradient_shape_is_checked_against_the_node_it_flows_into():
    """torch keeps the shape a gradient must have on the node it flows into (a leaf's AccumulateGrad
    keeps the leaf's shape when it was made), so a leaf whose .data changed shape under a live graph
    gets torch's error."""
    def prog(T):
        x = T.ones(2, requires_grad=True)
        y = x * 2  # keeps x's AccumulateGrad alive
        x.data = T.ones(3)
        with pytest.raises(RuntimeError) as e:
            (x * 3).sum().backward()
        return str(e.value), y.shape
    m, t = both(prog)
    assert m[0] == t[0] == ("Function MulBackward0 returned an invalid gradient at index 0 - got [3] but expected "
                            "shape compatible with [2]")


@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_two_gradients_for_one_input_are_summed_as_torch(shape):
    """A tensor used twice gets two gradients, which the engine adds before passing them on (outside
    create_graph without recording: torch's input buffer). The sum is an ordinary tensor (0-d too):
    `.grad` can be changed in place, and a second backward adds into it."""
    def prog(T):
        x = T.full(shape, 2.0, dtype=T.float64, requires_grad=True)
        (x * x + x.sin()).sum().backward()
        first = x.grad.clone()
        x.grad.mul_(2)
        (x.exp() * x).sum().backward()
        g, = T.autograd.grad((x * x.cos()).sum(), x, create_graph=True)
        h, = T.autograd.grad((x * x).sum(), x)  # the sum of two gradients itself, as autograd.grad returns it
        h.add_(1)
        return (first, x.grad, type(x.grad.numpy()).__name__, g, g.requires_grad, g.grad_fn.name(), h,
                type(h.numpy()).__name__, np.array(h, copy=True).shape)
    m, t = both(prog)
    for a, b in zip(m, t):
        if isinstance(b, torch.Tensor):
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12)
        else:
            assert a == b
