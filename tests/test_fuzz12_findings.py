"""What the twelfth round's fuzzing (seeds 1,300,000-1,799,999) found in microtorch, each beside torch 2.13:
activations of an empty tensor; signed zeros and infinities as torch's loops give them, lane by lane (softshrink,
maximum/minimum, fmax/fmin, logit's gradient); torch's exact zero through `g * 1`; the layouts of scans, roll, aminmax,
masked_fill and unreduced losses; changes through a detach()ed alias; the legacy constructor's alias; layer_norm's
gradient in its kernel's terms. (The binary ops' layouts have their own file, test_binary_layouts.py.)"""
import warnings

import numpy as np
import pytest
import torch

import microtorch

F_T, F_M = torch.nn.functional, microtorch.nn.functional


def _both(make):
    """make(L) on torch and microtorch, as numpy arrays"""
    return make(torch).detach().numpy(), make(microtorch).detach().numpy()


EMPTIES = {
    "logsumexp of a (2, 1, 0)": lambda L: L.logsumexp(L.zeros(2, 1, 0, dtype=L.float64), dim=1),
    "a column slice of a (3, 0)": lambda L: L.zeros(3, 4, dtype=L.float64)[:, :0],
    "a transposed (0, 3)": lambda L: L.zeros(0, 3, dtype=L.float64).t(),
    "a strided (4, 0)": lambda L: L.zeros(4, 0, dtype=L.float32)[::2],
}
ACTIVATIONS = ["celu", "elu", "selu", "gelu", "hardtanh", "hardswish", "softshrink", "hardshrink", "relu6", "silu"]


@pytest.mark.parametrize("empty", EMPTIES)
@pytest.mark.parametrize("name", ACTIVATIONS)
def test_an_activation_of_an_empty_tensor(name, empty):
    """The kernels' lane masks divided by a row length of 0 (celu of a (2, 0) logsumexp raised RuntimeError)."""
    t, m = _both(lambda L: getattr(L.nn.functional, name)(EMPTIES[empty](L)))
    assert t.shape == m.shape and t.dtype == m.dtype


def test_glu_of_an_empty_tensor_and_its_gradient():
    for L in (torch, microtorch):
        x = L.zeros(4, 0, dtype=L.float64, requires_grad=True)
        y = L.nn.functional.glu(x, 0)
        y.sum().backward()
        assert tuple(y.shape) == (2, 0) and tuple(x.grad.shape) == (4, 0)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("n", [1, 5, 8, 9, 17, 33, 100, 1000, 5003])
@pytest.mark.parametrize("value", [-0.3, -0.0, 0.0, 0.2, -0.7])
def test_softshrink_zeros_have_torch_signs(dtype, n, value):
    """torch's vector loop gives +0.0 inside [-lambd, lambd], its scalar loop (each row's tail) x * 0: -0.0 for a
    negative x. The bits, sign of zero included, are torch's."""
    t, m = _both(lambda L: F_T.softshrink(torch.full((n,), value, dtype=getattr(torch, dtype))) if L is torch
                 else F_M.softshrink(microtorch.full((n,), value, dtype=getattr(microtorch, dtype))))
    assert np.array_equal(t.view(np.uint8), m.view(np.uint8))


@pytest.mark.parametrize("view", ["columns", "transposed", "every other row"])
def test_softshrink_zero_signs_of_views(view):
    base = np.random.default_rng(3).uniform(-0.6, 0.6, (9, 40))
    take = {"columns": lambda x: x[:, :21], "transposed": lambda x: x.t(), "every other row": lambda x: x[::2]}[view]
    t, m = _both(lambda L: L.nn.functional.softshrink(take(L.tensor(base))))
    assert np.array_equal(np.signbit(t), np.signbit(m)) and np.array_equal(t, m)


def test_an_exact_zero_gradient_times_a_number_stays_exact():
    """abs's second derivative reaches atanh's backward as torch's exact zero (sgn's gradient); atanh's formula
    g * 1 / (1 - x^2) keeps it zero where x is 1 (torch: inf, from the other term; microtorch gave nan)."""
    out = []
    for L in (torch, microtorch):
        x = L.tensor([-2.0, 1.0, 0.5], dtype=L.float64, requires_grad=True)
        g, = L.autograd.grad(L.atanh(x).abs().sum(), x, create_graph=True)
        out.append(L.autograd.grad(g.sum(), x)[0].numpy())
    np.testing.assert_array_equal(*out)


SLICES = {"whole": np.s_[...], "columns": np.s_[:, :21], "every other row": np.s_[::2]}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("op", ["maximum", "minimum", "max", "min"])
@pytest.mark.parametrize("where", list(SLICES) + ["transposed columns", "a broadcast row"])
def test_maximum_of_zeros_of_opposite_signs(dtype, op, where):
    """Of 0.0 and -0.0 torch's vector loop gives the second operand, its scalar loop (each row's tail, a layout it
    does not vectorise) the first: maximum(a, -a) of a 4x2 with zeros was -0.0 in torch, 0.0 in microtorch."""
    rng = np.random.default_rng(7)
    a, b = (rng.choice([0.0, -0.0, 1.0, -1.0], (9, 40)).astype(dtype) for _ in range(2))

    def run(L):
        x, y = L.tensor(a), L.tensor(b)
        if where == "transposed columns":
            x, y = x[:, :21].t(), y[:, :21].t()
        elif where == "a broadcast row":
            x, y = x[:, :21], y[0, :21]
        else:
            x, y = x[SLICES[where]], y[SLICES[where]]
        return getattr(L, op)(x, y)
    t, m = _both(run)
    assert np.array_equal(np.signbit(t), np.signbit(m)) and np.array_equal(t, m)


@pytest.mark.parametrize("n", [1, 8, 9, 17, 100])
def test_maximum_of_signed_zero_vectors(n):
    for a in (np.zeros(n), -np.zeros(n)):
        t, m = _both(lambda L: L.maximum(L.tensor(a), L.tensor(-a)))
        assert np.array_equal(np.signbit(t), np.signbit(m))


def test_nan_gradient_lanes_of_a_transposed_slice():
    """The lane model walks a transposed slice by its memory rows, as torch's loop does (hardtanh passes a NaN's
    gradient on each row's tail only)."""
    base = np.random.default_rng(5).uniform(-2, 2, (9, 40))
    base[::2, ::3] = np.nan
    out = []
    for L in (torch, microtorch):
        x = L.tensor(base)[:, :21].t().requires_grad_()
        L.nn.functional.hardtanh(x).backward(L.ones(21, 9, dtype=L.float64))
        out.append(x.grad.numpy())
    np.testing.assert_array_equal(*out)


@pytest.mark.parametrize("call", ["roll(x, 1, 0)", "roll(x, 1)", "roll(x[:, ::2], 1, 1)", "roll(x, (1, 1), (0, 1))",
                                  "aminmax(x, dim=1).max", "aminmax(x, dim=1, keepdim=True).min",
                                  "aminmax(x, dim=-1).max", "aminmax(x).max"])
def test_roll_and_aminmax_results_are_laid_out_as_torch(call):
    """torch's roll and aminmax give C-ordered results (a later view() or reshape depends on it); microtorch's kept
    a permuted input's layout."""
    strides = []
    for L in (torch, microtorch):
        x = L.arange(60, dtype=L.float64).reshape(3, 4, 5).permute(2, 0, 1)
        y = eval("L." + call)
        strides.append((tuple(y.stride()), y.is_contiguous(), y.detach().numpy().tolist()))
    assert strides[0] == strides[1]


@pytest.mark.parametrize("op", ["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"])
@pytest.mark.parametrize("dim", [0, 1, 2])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_scans_are_laid_out_as_torch(op, dim, dtype):
    """torch's cumulative ops give C-ordered results of a permuted input (flatten(1) of a logcumsumexp was a view
    in microtorch, a copy in torch); values and gradients unchanged."""
    got = []
    for L in (torch, microtorch):
        x = L.tensor(np.random.default_rng(2).uniform(0.5, 1.5, (2, 3, 4)).astype(dtype)).permute(2, 1, 0)
        x.requires_grad_()
        out = getattr(L, op)(x, dim)
        y = out.values if op in ("cummax", "cummin") else out
        y.backward(L.ones_like(y))
        idx = tuple(out.indices.stride()) if op in ("cummax", "cummin") else None
        got.append((tuple(y.stride()), idx, y.detach().numpy(), x.grad.numpy()))
    assert got[0][:2] == got[1][:2]
    if op == "logcumsumexp" and dtype == "float32":  # (its float32 bits are not torch's yet: within a few ulp)
        np.testing.assert_allclose(got[0][2], got[1][2], rtol=1e-6)
    else:
        np.testing.assert_array_equal(got[0][2], got[1][2])
    np.testing.assert_allclose(got[0][3], got[1][3], rtol=1e-6)


@pytest.mark.parametrize("value", ["2.0", "L.tensor(2.0, dtype=L.float64)"])
@pytest.mark.parametrize("layout", ["permuted", "transposed", "broadcast mask", "sliced"])
def test_masked_fill_is_laid_out_as_torch(value, layout):
    """torch's masked_fill fills a C-ordered clone (a later matmul of a permuted input's fill recorded
    ViewBackward0 in torch, ReshapeAliasBackward0 in microtorch)."""
    got = []
    for L in (torch, microtorch):
        a = L.tensor(np.arange(24.0).reshape(2, 3, 4) - 11, requires_grad=True)
        x = {"permuted": a.permute(2, 0, 1), "transposed": a[0].t(), "broadcast mask": a.transpose(0, 2),
             "sliced": a[:, :, ::2]}[layout]
        mask = x[0] > 0 if layout == "broadcast mask" else x > 0
        y = L.masked_fill(x, mask, eval(value))
        y.backward(L.ones_like(y))
        got.append((tuple(y.stride()), y.detach().numpy().tolist(), a.grad.numpy().tolist()))
    assert got[0] == got[1]


ALIAS_PROGRAMS = {
    "a non-leaf's view, its base changed through detach": "b = a * 1; v = b[0]; b.detach().add_(1)",
    "the same under no_grad": "b = a * 1; v = b[0]\nwith L.no_grad(): b.detach().add_(1)",
    "a leaf's view, the leaf changed through detach": "v = a[0]; a.detach().add_(1)",
    "a view changed through its own detach": "b = a * 1; v = b[0]; v.detach().mul_(2)",
    "another view's detach": "b = a * 1; v = b[1]; b[0].detach().mul_(2)",
    "a detach of a view of the detach": "b = a * 1; v = b[0]; b.detach()[1].mul_(2)",
    "a split output, itself through detach": "b = a * 1; v = b.split([1, 1], 0)[1]; v.detach().relu_()",
    "a split output, another one through detach": "b = a * 1; v = b.unbind(0)[1]; b.unbind(0)[0].detach().mul_(2)",
    "a leaf's chunk through detach": "v = a.chunk(2)[0]; v.detach().add_(1)",
    "a write by index into the detach": "b = a * 1; v = b.unbind(0)[1]; d = b.detach(); d[0, 0] = 5.0",
    "a detach with an operand that requires grad": "b = a * 1; v = b[0]; b.detach().add_(a)",
    "no history: nothing to rebuild": "b = a.detach() * 1; v = b[0]; b.detach().add_(1)",
    ".data has a counter of its own": "b = a * 1; v = b.unbind(0)[1]; b.data.add_(1)",
    "an in-place view op on the detach": "v = a.split([1, 1], 0)[0]; a.detach().t_()",
    "squeeze_ of a split's source through detach": "b = a[:1] * 1; v = b.split([0, 3], -1)[0]; b.detach().squeeze_()",
}


@pytest.mark.parametrize("program", ALIAS_PROGRAMS)
def test_a_change_through_a_detached_alias_rebuilds_the_views(program):
    """detach() shares the version counter, so torch sees a change through it as a change of the tensor's memory:
    the views of that tensor get a new history (AsStridedBackward0), a split's outputs refuse to be used. microtorch
    kept their old history and ran on (seeds 1,441,468 and 1,574,211)."""
    seen = []
    for L in (torch, microtorch):
        scope = {"L": L, "a": L.zeros(2, 3, dtype=L.float64, requires_grad=True)}
        exec(ALIAS_PROGRAMS[program], scope)
        try:
            node = scope["v"].grad_fn
            y = (scope["v"] * 2).sum()
            y.backward()
            seen.append(("ok", node and node.name(), scope["a"].grad.numpy().tolist()))
        except RuntimeError as e:
            seen.append(("raised", str(e).split(".")[0].split("(): ")[-1]))  # (microtorch names the op first)
    assert seen[0] == seen[1]


@pytest.mark.parametrize("make", ["L.ones(3, dtype=L.float64)", "L.ones(3, dtype=L.int64)", "L.ones(2, 2).t()",
                                  "L.ones(3, requires_grad=True) * 2", "L.ones(3, requires_grad=True)"])
def test_the_legacy_constructor_of_a_tensor_is_its_alias(make):
    """torch.Tensor(t) aliases t: its memory, dtype, strides and version, with AliasBackward0 when t requires grad
    (microtorch made a new tensor without history, so no gradient reached t)."""
    seen = []
    for L in (torch, microtorch):
        y = eval(make)
        t = L.Tensor(y)
        row = [str(t.dtype).split(".")[-1], tuple(t.stride()), t._base is y, t.requires_grad,
               t.grad_fn and t.grad_fn.name()]
        if t.requires_grad:
            (t * 3).sum().backward()
            leaf = y if y.is_leaf else None
            row.append(leaf.grad.tolist() if leaf is not None else None)
        with L.no_grad():
            t.add_(1)
        row += [y.tolist(), y._version]
        seen.append(row)
    assert seen[0] == seen[1]


@pytest.mark.parametrize("create_graph", [False, True])
def test_layer_norm_gradient_with_an_infinite_gradient_is_torch_s(create_graph):
    """torch's layer_norm backward is a g + b x + c per row, with sums of g and g x: an inf in g makes the row NaN.
    microtorch's centred form left an inf where torch has NaN (seed 1,565,921)."""
    out = []
    for L in (torch, microtorch):
        x = L.tensor([[1.0, 1.0, 0.0], [0.5, -1.0, 2.0]], dtype=L.float64, requires_grad=True)
        y = L.nn.functional.layer_norm(x, (3,))
        g = L.tensor([[-np.inf, 0.5, 1.0], [0.25, 1.0, -2.0]], dtype=L.float64)
        gx, = L.autograd.grad(y, x, g, create_graph=create_graph)
        out.append(gx.detach().numpy())
    np.testing.assert_array_equal(*out)


def test_layer_norm_gradient_is_near_torch_s():
    """Within 3 ulp of the scale |g| / std(x), on 200 random rows (half of the values to the bit)."""
    rng = np.random.default_rng(0)
    for _ in range(100):
        shape = (int(rng.integers(1, 5)), int(rng.integers(3, 40)))
        x, g = rng.standard_normal(shape) * rng.uniform(0.1, 10), rng.standard_normal(shape)
        out = []
        for L in (torch, microtorch):
            t = L.tensor(x, requires_grad=True)
            L.nn.functional.layer_norm(t, t.shape[-1:]).backward(L.tensor(g))
            out.append(t.grad.numpy())
        scale = np.max(np.abs(g)) / np.std(x, axis=-1).min()
        assert np.max(np.abs(out[0] - out[1])) <= 3 * np.finfo(np.float64).eps * scale


@pytest.mark.parametrize("value", ["0.0", "L.tensor(2.0)"])
def test_masked_fill_broadcasts_the_tensor_to_the_mask(value):
    """torch's out-of-place masked_fill broadcasts the tensor to the mask's shape (C order), and its gradient is
    summed back; masked_fill_ refuses a result larger than the tensor. microtorch refused both."""
    got = []
    for L in (torch, microtorch):
        x = L.ones(3, requires_grad=True)
        mask = L.tensor([[True, False, True], [False, False, True]])
        y = L.masked_fill(x, mask, eval(value))
        (y * L.arange(6.0).reshape(2, 3)).sum().backward()
        with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
            L.ones(3).masked_fill_(mask, 0.0)
        got.append((tuple(y.shape), tuple(y.stride()), y.grad_fn.name(), y.tolist(), x.grad.tolist()))
    assert got[0] == got[1]


@pytest.mark.parametrize("op", ["fmax", "fmin"])
@pytest.mark.parametrize("n", [1, 9, 17, 100])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_fmax_and_fmin_of_signed_zeros_give_the_first(op, n, dtype):
    """torch's fmax/fmin give the first operand on a tie in every lane; numpy's the second (seed 1,503,084)."""
    for first in (np.zeros(n, dtype), -np.zeros(n, dtype)):
        t, m = _both(lambda L: getattr(L, op)(L.tensor(first), L.tensor(-first)))
        assert np.array_equal(np.signbit(t), np.signbit(m))


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("eps", [None, 0.0, 0.2])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_logit_gradient_at_zero_and_one(create_graph, eps, dtype):
    """torch's logit_backward kernel (what backward without create_graph runs) gives grad * inf at 0 and 1, so
    +inf at -0.0 for a positive grad, where its differentiable formula (with create_graph) divides by -0.0 (seeds
    1,428,355, 1,436,166, 1,491,154)."""
    out = []
    for L in (torch, microtorch):
        x = L.tensor([0.0, -0.0, 1.0, 1.0, 0.0, 0.5, 2.0, -1.0], dtype=getattr(L, dtype), requires_grad=True)
        g = L.tensor([1.0, 1.0, -1.0, 0.0, -2.0, 1.0, 1.0, 1.0], dtype=getattr(L, dtype))
        gx, = L.autograd.grad(L.logit(x, eps=eps), x, g, create_graph=create_graph)
        out.append(gx.detach().numpy())
    assert np.array_equal(out[0], out[1], equal_nan=True)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("n", [9, 16, 17, 18, 33, 65, 1000])
def test_logit_gradient_at_the_ends_by_lane(dtype, n):
    """torch's kernel takes grad * inf at 0 and 1 on each row's tail only; its vector lanes (128 bytes) divide, so
    -0.0 gives -inf there (seed 1,682,350: the gradient of a broadcast product's logit)."""
    out = []
    for L in (torch, microtorch):
        x = L.tensor(np.where(np.arange(n) % 3 == 0, -0.0, np.where(np.arange(n) % 3 == 1, 1.0, 0.0)).astype(dtype),
                     requires_grad=True)
        gx, = L.autograd.grad(L.logit(x), x, L.ones(n, dtype=getattr(L, dtype)))
        out.append(gx.numpy())
    assert np.array_equal(out[0], out[1], equal_nan=True)


LOSS_OPERANDS = {
    "transposed input": lambda L: (L.ones(3, 4, dtype=L.float64).t(), L.zeros(4, 3, dtype=L.float64)),
    "transposed target": lambda L: (L.ones(4, 3, dtype=L.float64), L.zeros(3, 4, dtype=L.float64).t()),
    "both permuted": lambda L: (L.ones(2, 3, 4, dtype=L.float64).permute(2, 0, 1),
                                L.zeros(4, 2, 3, dtype=L.float64).permute(0, 2, 1).transpose(1, 2)),
    "broadcast, transposed": lambda L: (L.arange(8.0, dtype=L.float64).reshape(2, 4, 1, 1).transpose(0, -1),
                                        L.ones((1, 1, 4, 2), dtype=L.float64)),
}


@pytest.mark.parametrize("loss", ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"])
@pytest.mark.parametrize("operands", LOSS_OPERANDS)
def test_unreduced_losses_are_laid_out_as_torch(loss, operands):
    """reduction='none' gives torch's elementwise layout (the strides of dims larger than 1): a later matmul of a
    transposed input's mse_loss recorded another node than torch's (seed 1,604,626)."""
    if loss == "huber_loss" and operands == "broadcast, transposed":
        pytest.skip("torch's huber_loss lays this one out by neither operand's order (left as it is)")
    got = []
    for L in (torch, microtorch):
        x, y = LOSS_OPERANDS[operands](L)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (broadcasting a target: torch's warning, in both)
            out = getattr(L.nn.functional, loss)(x, y, reduction="none")
        got.append(([s for s, n in zip(out.stride(), out.shape) if n > 1], out.is_contiguous(), out.tolist()))
    assert got[0] == got[1]


@pytest.mark.parametrize("dtype", ["float64", "float32", "complex64"])
def test_cumsum_of_negative_zeros_starts_from_plus_zero(dtype):
    """torch's scan adds from +0.0, so a run of -0.0 sums to +0.0 (a reciprocal then gave -inf in microtorch, inf in
    torch: seed 1,708,957)."""
    out = []
    for L in (torch, microtorch):
        a = L.tensor([[-0.0, -0.0, 1.0, -0.0], [1.0, -0.0, -0.0, -0.0]], dtype=getattr(L, dtype))
        r = L.cumsum(a, 1), L.cumsum(a, 0), L.cumsum(a[:, :1], 1)
        out.append([np.signbit(t.numpy().real).tolist() for t in r])
    assert out[0] == out[1]


@pytest.mark.parametrize("make", ["L.ones(2, 4, dtype=L.float64).t()", "L.ones(2, 3, 4, 5).permute(0, 2, 1, 3)",
                                  "L.ones(2, 3, 4, 5).to(memory_format=L.channels_last)"])
@pytest.mark.parametrize("pad", [(1, 1), (0, 0, 1, 1), (2, -1)])
def test_constant_pad_is_laid_out_as_torch(make, pad):
    """torch's constant pad gives C order (channels_last for a channels_last input): view() of a transposed
    input's pad raised in microtorch (seed 1,734,077)."""
    got = []
    for L in (torch, microtorch):
        y = L.nn.functional.pad(eval(make), pad)
        got.append((tuple(y.stride()), y.is_contiguous()))
    assert got[0] == got[1]


@pytest.mark.parametrize("op", ["triu", "tril"])
@pytest.mark.parametrize("diagonal", [1, 0, -1])
def test_triangles_are_laid_out_as_torch(op, diagonal):
    """torch's triu/tril are C-ordered: view() of a permuted input's triangle raised in microtorch (seed 1,833,023)."""
    got = []
    for L in (torch, microtorch):
        x = L.arange(48.0, dtype=L.float64).reshape(4, 2, 3, 2).permute(3, 1, 2, 0).requires_grad_()
        y = getattr(L, op)(x, diagonal)
        y.backward(L.ones_like(y))
        got.append((tuple(y.stride()), y.tolist(), x.grad.tolist()))
    assert got[0] == got[1]


@pytest.mark.parametrize("name", ["bessel_j0", "bessel_j1", "bessel_y0", "modified_bessel_i0", "modified_bessel_k0",
                                  "scaled_modified_bessel_k0", "airy_ai"])
def test_special_functions_keep_the_input_layout(name):
    got = []
    for L in (torch, microtorch):
        x = L.arange(1.0, 25.0, dtype=L.float64).reshape(2, 3, 4).permute(2, 0, 1) / 7
        y = getattr(L.special, name)(x)
        got.append((tuple(y.stride()), y.requires_grad))
    assert got[0] == got[1]


@pytest.mark.parametrize("shape", [(3,), (4, 3)])
def test_layer_norm_of_a_transposed_input_is_c_ordered(shape):
    """torch normalizes a C-ordered copy: a reshape of a transposed input's layer_norm was ReshapeAliasBackward0 in
    microtorch, ViewBackward0 in torch (seed 1,902,058)."""
    got = []
    for L in (torch, microtorch):
        x = L.arange(24.0, dtype=L.float64).reshape(2, 3, 4).transpose(1, 2).requires_grad_()
        y = L.nn.functional.layer_norm(x, shape)
        y.backward(L.ones_like(y))
        got.append((tuple(y.stride()), y.reshape(4, -1, 3).grad_fn.name(), tuple(x.grad.stride())))
    assert got[0] == got[1]


def test_a_detached_parameter_keeps_the_optimizer_s_fast_path():
    """state_dict() detaches every parameter, which links the parameter's version counter to it; an optimizer's
    update of the parameter itself still writes straight into its memory (only an alias of a tensor with views
    must take the general path), and the values are torch's."""
    from microtorch.ops import inplace_kernels
    got = []
    for L in (torch, microtorch):
        L.manual_seed(0)
        model = L.nn.Linear(4, 3, dtype=L.float64)
        with L.no_grad():
            model.weight.copy_(L.arange(12.0, dtype=L.float64).reshape(3, 4) / 10)
            model.bias.zero_()
        opt = L.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(2):
            model.state_dict()
            opt.zero_grad()
            model(L.ones(2, 4, dtype=L.float64)).pow(2).sum().backward()
            if L is microtorch:
                with L.no_grad():
                    assert inplace_kernels._unrecorded_self(model.weight)
            opt.step()
        got.append(model.weight.detach().numpy())
    np.testing.assert_allclose(got[0], got[1], rtol=1e-13, atol=1e-15)  # (products' last bits: tests/_machine.py)
