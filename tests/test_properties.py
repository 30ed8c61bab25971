"""Property tests: for shapes that broadcast and for random compositions of ops, microtorch's
values, grad_fn names, gradients and second derivatives agree with torch's."""
import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import microtorch as mt

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow],
                    derandomize=True)


def _close(a, b, what):
    assert tuple(a.shape) == tuple(b.shape), f"{what}: shape {tuple(a.shape)} vs {tuple(b.shape)}"
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(force=True) if isinstance(b, torch.Tensor)
                               else b, rtol=1e-6, atol=1e-8, err_msg=what)


def _pair(arr, requires_grad=True):
    return mt.tensor(arr, requires_grad=requires_grad), torch.tensor(arr, requires_grad=requires_grad)


def _check_grads(m_out, t_out, m_in, t_in, rng, second_order=False):
    v = rng.standard_normal(tuple(t_out.shape))
    mg = mt.autograd.grad(m_out, m_in, mt.tensor(v), allow_unused=True, create_graph=second_order)
    tg = torch.autograd.grad(t_out, t_in, torch.tensor(v), allow_unused=True, create_graph=second_order)
    for k, (a, b) in enumerate(zip(mg, tg)):
        if a is None or b is None:
            assert (a is None or not a.detach().numpy().any()) and (b is None or not b.detach().numpy().any())
            continue
        _close(a, b, f"gradient {k}")
    if not second_order:
        return
    ws = [rng.standard_normal(tuple(t.shape)) for t in t_in]
    m_terms = [(g * mt.tensor(w)).sum() for g, w in zip(mg, ws) if g is not None and g.requires_grad]
    t_terms = [(g * torch.tensor(w)).sum() for g, w in zip(tg, ws) if g is not None and g.requires_grad]
    if not t_terms:
        return
    assert m_terms, "torch's gradient is differentiable, microtorch's is not"
    m2 = mt.autograd.grad(sum(m_terms[1:], m_terms[0]), m_in, allow_unused=True)
    t2 = torch.autograd.grad(sum(t_terms[1:], t_terms[0]), t_in, allow_unused=True)
    for k, (a, b) in enumerate(zip(m2, t2)):
        if a is None or b is None:
            assert (a is None or not a.numpy().any()) and (b is None or not b.numpy(force=True).any())
            continue
        _close(a, b, f"second derivative {k}")


# ---- binary ops over every pair of broadcastable shapes ---------------------------------------
BINARY = {
    "add": lambda m, a, b: a + b,
    "sub": lambda m, a, b: a - b,
    "mul": lambda m, a, b: a * b,
    "div": lambda m, a, b: a / (b * b + 0.5),
    "pow": lambda m, a, b: (a * a + 0.5) ** b,
    "maximum": lambda m, a, b: m.maximum(a, b),
    "minimum": lambda m, a, b: m.minimum(a, b),
    "where": lambda m, a, b: m.where(a > b, a, b * 2),
    "add_alpha": lambda m, a, b: m.add(a, b, alpha=-1.5),
    "matmul_like": lambda m, a, b: (a.unsqueeze(-1) * b.unsqueeze(-1)).sum(-1),
}


@pytest.mark.parametrize("op", list(BINARY))
@SETTINGS
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=3),
       seed=st.integers(0, 2 ** 16))
def test_binary_ops_broadcast_like_torch(op, shapes, seed):
    rng = np.random.default_rng(seed)
    sa, sb = shapes.input_shapes
    ma, ta = _pair(rng.standard_normal(sa))
    mb, tb = _pair(rng.standard_normal(sb))
    mo, to = BINARY[op](mt, ma, mb), BINARY[op](torch, ta, tb)
    _close(mo, to, f"{op} forward")
    assert mo.grad_fn.name() == to.grad_fn.name()
    _check_grads(mo, to, [ma, mb], [ta, tb], rng, second_order=True)


@SETTINGS
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3),
       scalar=st.sampled_from([2, -1.5, 0.5]), seed=st.integers(0, 2 ** 16))
def test_tensor_scalar_and_zero_dim_mixes_like_torch(shapes, scalar, seed):
    rng = np.random.default_rng(seed)
    sa, sb = shapes.input_shapes
    arr = rng.standard_normal(sa)
    for dtype in ("float32", "float64"):
        ma = mt.tensor(arr, dtype=getattr(mt, dtype), requires_grad=True)
        ta = torch.tensor(arr, dtype=getattr(torch, dtype), requires_grad=True)
        zb = rng.standard_normal(())
        for f in (lambda m, x, z: x * scalar + z, lambda m, x, z: scalar - x / (z * z + 1),
                  lambda m, x, z: (x + m.ones(sb, dtype=m.float64)) * z):
            mo, to = f(mt, ma, mt.tensor(zb)), f(torch, ta, torch.tensor(zb))
            assert str(mo.dtype).split(".")[-1] == str(to.dtype).split(".")[-1]
            np.testing.assert_allclose(mo.detach().numpy(), to.detach().numpy(), rtol=1e-5, atol=1e-6)
            (gm,) = mt.autograd.grad(mo.sum(), ma)
            (gt,) = torch.autograd.grad(to.sum(), ta)
            assert gm.dtype.name == dtype
            np.testing.assert_allclose(gm.numpy(), gt.numpy(), rtol=1e-5, atol=1e-6)


# ---- reductions over random dims --------------------------------------------------------------
@SETTINGS
@given(shape=hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=4), data=st.data())
def test_reductions_over_random_dims_like_torch(shape, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16)))
    dims = tuple(sorted(data.draw(st.sets(st.integers(0, len(shape) - 1), min_size=1))))
    keepdim = data.draw(st.booleans())
    name = data.draw(st.sampled_from(["sum", "mean", "amax", "logsumexp", "var", "std", "norm", "prod"]))
    if name in ("var", "std") and int(np.prod([shape[d] for d in dims])) < 2:
        return
    if name == "norm":
        dims = dims[:2]  # torch.norm over three or more dims is not a vector norm
    ma, ta = _pair(rng.standard_normal(shape))
    if name == "norm":
        f = lambda m, x: x.norm(dim=dims, keepdim=keepdim)  # noqa: E731
    elif name == "prod":
        f = lambda m, x: x.prod(dims[0], keepdim=keepdim)  # noqa: E731
    else:
        f = lambda m, x: getattr(x, name)(dims, keepdim=keepdim)  # noqa: E731
    mo, to = f(mt, ma), f(torch, ta)
    _close(mo, to, name)
    assert mo.grad_fn.name() == to.grad_fn.name()
    _check_grads(mo, to, [ma], [ta], rng, second_order=name in ("sum", "mean", "logsumexp", "var", "prod"))


# ---- random compositions --------------------------------------------------------------------
UNARY = [
    ("tanh", lambda m, x: x.tanh()),
    ("sin", lambda m, x: x.sin()),
    ("sigmoid", lambda m, x: x.sigmoid()),
    ("square", lambda m, x: x * x),
    ("exp_small", lambda m, x: (x * 0.3).exp()),
    ("log1p_sq", lambda m, x: (x * x).log1p()),
    ("softplus", lambda m, x: torch.nn.functional.softplus(x) if m is torch else mt.ops.softplus(x)),
    ("relu", lambda m, x: x.relu()),
    ("neg", lambda m, x: -x),
    ("scale", lambda m, x: 2.5 * x - 1),
    ("sqrt", lambda m, x: (x * x + 1).sqrt()),
    ("clamp", lambda m, x: x.clamp(-0.5, 0.7)),
    ("softmax", lambda m, x: x.softmax(-1) if x.ndim else x),
    ("log_softmax", lambda m, x: x.log_softmax(0) if x.ndim else x),
    ("sum_last", lambda m, x: x.sum(-1) if x.ndim else x),
    ("mean_keep", lambda m, x: x.mean(0, keepdim=True) if x.ndim else x),
    ("amax_last", lambda m, x: x.amax(-1) if x.ndim else x),
    ("transpose", lambda m, x: x.transpose(0, -1) if x.ndim >= 2 else x),
    ("flatten", lambda m, x: x.flatten()),
    ("unsqueeze", lambda m, x: x.unsqueeze(0) if x.ndim < 4 else x),
    ("flip", lambda m, x: x.flip(0) if x.ndim else x),
    ("index_first", lambda m, x: x[0] if x.ndim and x.shape[0] > 1 else x),
    ("slice", lambda m, x: x[..., ::2] if x.ndim else x),
    ("repeat_index", lambda m, x: x[[0, 0, -1]] if x.ndim else x),
    ("mask", lambda m, x: x.masked_fill(x > 0.5, 0.0)),
    ("cumsum", lambda m, x: x.cumsum(0) if x.ndim else x),
]

BINARY_COMPOSE = [
    ("add", lambda m, a, b: a + b),
    ("mul", lambda m, a, b: a * b),
    ("sub", lambda m, a, b: a - b),
    ("div", lambda m, a, b: a / (b * b + 1)),
    ("maximum", lambda m, a, b: m.maximum(a, b)),
    ("where", lambda m, a, b: m.where(a > b, a, b)),
]


def _broadcasts(sa, sb):
    try:
        np.broadcast_shapes(sa, sb)
        return True
    except ValueError:
        return False


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(data=st.data())
def test_random_compositions_like_torch(data):
    seed = data.draw(st.integers(0, 2 ** 16), label="seed")
    rng = np.random.default_rng(seed)
    base = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4), label="shape")
    n_inputs = data.draw(st.integers(1, 3), label="inputs")
    m_pool, t_pool, m_in, t_in = [], [], [], []
    for _ in range(n_inputs):
        shape = tuple(s if rng.random() < 0.7 else 1 for s in base)[int(rng.integers(0, len(base))):]
        a, b = _pair(rng.standard_normal(shape))
        m_pool.append(a), t_pool.append(b), m_in.append(a), t_in.append(b)
    steps = data.draw(st.lists(st.tuples(st.booleans(), st.integers(0, 99), st.integers(0, 99), st.integers(0, 99)),
                               min_size=1, max_size=8), label="steps")
    trace = []
    for binary, k, i, j in steps:
        i, j = i % len(m_pool), j % len(m_pool)
        if binary and _broadcasts(tuple(m_pool[i].shape), tuple(m_pool[j].shape)):
            name, f = BINARY_COMPOSE[k % len(BINARY_COMPOSE)]
            mo, to = f(mt, m_pool[i], m_pool[j]), f(torch, t_pool[i], t_pool[j])
        else:
            name, f = UNARY[k % len(UNARY)]
            mo, to = f(mt, m_pool[i]), f(torch, t_pool[i])
        trace.append(name)
        _close(mo, to, " -> ".join(trace))
        assert (mo.grad_fn.name() if mo.grad_fn else None) == (to.grad_fn.name() if to.grad_fn else None), trace
        m_pool.append(mo), t_pool.append(to)
    out_m, out_t = m_pool[-1], t_pool[-1]
    if not out_t.requires_grad:
        return
    _check_grads(out_m, out_t, m_in, t_in, rng, second_order=data.draw(st.booleans(), label="2nd order"))
