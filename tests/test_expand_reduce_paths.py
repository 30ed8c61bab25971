"""The paths that W6's reductions and views take, beside torch 2.13: expand's stride-0 view (made
without np.broadcast_to), the gradients of sum and mean (expanded views, or their quotient), mean as
a sum divided by n, sum_to's results, and t() on 0-, 1- and 2-d tensors."""
import warnings

import numpy as np
import pytest
import torch

import microtorch as mt

LIBS = (torch, mt)


def _layout(t):
    """What a caller can see of a tensor's memory: shape, strides, whether it is a view."""
    return tuple(t.shape), t.stride(), t._base is not None


def _base_and_transposed(lib):
    a = np.arange(12.0).reshape(3, 4)
    return lib.tensor(a), lib.tensor(a.T.copy()).t()  # the second: the same values, column-major


@pytest.mark.parametrize("make, size", [
    (lambda x: x[0, 0], (2, 3)),          # 0-d
    (lambda x: x[:, :1], (3, 5)),         # a column, contiguous after its base
    (lambda x: x[:1], (2, 3, 4)),         # a row, with a new leading dim
    (lambda x: x[:, 1:2], (2, 3, 6)),     # a column in the middle of its rows
    (lambda x: x[:0, :1], (0, 7)),        # empty
    (lambda x: x[:1, :1], (1, 1)),        # nothing repeated: a writable view
])
@pytest.mark.parametrize("transposed", [False, True])
def test_expand_is_torch_view(make, size, transposed):
    got = {}
    for lib in LIBS:
        base = _base_and_transposed(lib)[transposed]
        e = make(base).expand(*size)
        base.add_(1)  # the view sees the change and shares the version counter
        got[lib.__name__] = _layout(e), e.numpy().tolist(), e._version
    assert got["microtorch"] == got["torch"]


@pytest.mark.parametrize("src, size", [((1, 3, 1), (3, 1, 3, 1)), ((1, 3, 1), (3, 1, 3, 2)), ((3, 1, 1), (3, 2, 1)),
                                       ((2, 1), (2, 5)), ((1,), (4,))])
def test_expand_keeps_the_strides_of_size_one_dims_as_torch(src, size):
    """A size-1 dim that stays size 1 keeps its stride in torch (np.broadcast_to makes it 0)."""
    got = {}
    for lib in LIBS:
        x = lib.tensor(np.arange(float(np.prod(src))).reshape(src))
        got[lib.__name__] = _layout(x.expand(*size)), _layout(x.t().expand(*size[:-2], 3, 2)) if len(src) == 2 else 0
    assert got["microtorch"] == got["torch"]


def test_expanding_an_expanded_gradient_as_torch():
    """x.sum(1).sum(): the second backward expands the first's (already expanded) gradient."""
    got = {}
    for lib in LIBS:
        x = lib.tensor(np.arange(24.0).reshape(2, 3, 4), requires_grad=True)
        g, = lib.autograd.grad(x.sum(1).sum(), x)
        got[lib.__name__] = _layout(g), g.numpy().tolist()
    assert got["microtorch"] == got["torch"]


@pytest.mark.parametrize("op", ["add_", "mul_"])
def test_in_place_on_expanded_view_raises_as_torch(op):
    for lib in LIBS:
        e = lib.tensor([[1.0], [2.0]]).expand(2, 3)
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
            getattr(e, op)(2.0)


@pytest.mark.parametrize("shape, reduce", [
    ((2, 3), lambda x: x.sum()),
    ((2, 3), lambda x: x.sum(1)),
    ((2, 3), lambda x: x.sum((0, 1), keepdim=True)),
    ((6, 1), lambda x: x.mean()),
    ((2, 3, 4), lambda x: x.mean(1)),
    ((), lambda x: x.sum()),
    ((), lambda x: x.mean()),
])
def test_reduction_gradients_have_torch_layout(shape, reduce):
    got = {}
    for lib in LIBS:
        x = lib.tensor(np.arange(float(np.prod(shape))).reshape(shape), requires_grad=True)
        y = reduce(x)
        g, = lib.autograd.grad(y, x, lib.full(tuple(y.shape), 3.0, dtype=lib.float64))
        got[lib.__name__] = _layout(g), g.numpy().tolist(), y.grad_fn.name()
    assert got["microtorch"] == got["torch"]


def _names(node):
    """The nodes under node, depth first, each with its depth."""
    out, stack = [], [(node, 0)]
    while stack:
        n, depth = stack.pop()
        if n is not None:
            out.append((depth, n.name()))
            stack.extend((m, depth + 1) for m, _ in reversed(n.next_functions))
    return out


@pytest.mark.parametrize("shape, reduce", [
    ((), lambda x: x.sum()),                              # the gradient has the input's shape already:
    ((1, 1), lambda x: x.sum((0, 1), keepdim=True)),      # torch expands it all the same (a view)
    ((), lambda x: x.mean()),
    ((2, 3), lambda x: x.sum()),
    ((2, 3), lambda x: x.mean(1)),
])
def test_reduction_double_backward_graph_as_torch(shape, reduce):
    got = {}
    for lib in LIBS:
        x = lib.tensor(np.ones(shape), requires_grad=True)
        y = reduce(x)
        g, = lib.autograd.grad(y, x, lib.ones(tuple(y.shape), dtype=lib.float64, requires_grad=True),
                               create_graph=True)
        got[lib.__name__] = _names(g.grad_fn), g._base is not None
    assert got["microtorch"] == got["torch"]


@pytest.mark.parametrize("dtype", ["float16", "float64", "complex128"])
@pytest.mark.parametrize("shape, dim", [((100, 1), None), ((7, 33), 1), ((3, 4, 5), (0, 2))])
def test_mean_values_as_torch(dtype, shape, dim):
    rng = np.random.default_rng(5)
    a = rng.standard_normal(shape) * 10 + (1j * rng.standard_normal(shape) if "complex" in dtype else 0)
    a = a.astype(dtype)
    want, got = ((lib.tensor(a).mean() if dim is None else lib.tensor(a).mean(dim)).numpy() for lib in LIBS)
    assert got.dtype == want.dtype and got.shape == want.shape
    if dtype == "float16":  # a float32 sum divided in float32, then rounded once to float16: torch's bits
        np.testing.assert_array_equal(got, want)
    else:  # (numpy and torch add in different orders)
        np.testing.assert_allclose(got, want, rtol=1e-13)


@pytest.mark.parametrize("dim", [None, 0, 1])
def test_mean_of_nothing_is_nan_silently(dim):
    for lib in LIBS:
        x = lib.zeros(0, 3, dtype=lib.float64)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # (np.mean warned "Mean of empty slice"; torch does not)
            out = x.mean() if dim is None else x.mean(dim)
        assert np.isnan(out.numpy()).all() and tuple(out.shape) == ((), (3,), (0,))[0 if dim is None else dim + 1]


def test_sum_and_mean_refuse_as_torch():
    for lib in LIBS:
        x = lib.tensor([1, 2, 3])
        with pytest.raises(RuntimeError, match="mean"):
            x.mean()
        assert x.sum().dtype == lib.int64  # integers add up in int64
        y = lib.tensor([1.0, 2.0], requires_grad=True)
        with pytest.raises(RuntimeError):
            y.sum(dtype=lib.int64)


@pytest.mark.parametrize("x_shape, b_shape", [((100, 16), (16,)), ((100, 16), (1, 16)), ((100, 16), (100, 1)),
                                              ((4, 3, 2), (3, 1)), ((4, 3), ()), ((0, 3), (3,))])
def test_broadcast_gradient_summed_back_as_torch(x_shape, b_shape):
    got = {}
    rng = np.random.default_rng(2)
    x, b = rng.standard_normal(x_shape), rng.standard_normal(b_shape)
    for lib in LIBS:
        bt = lib.tensor(b, requires_grad=True)
        (lib.tensor(x) + bt).backward(lib.tensor(np.arange(np.prod(x_shape), dtype=float).reshape(x_shape)))
        got[lib.__name__] = tuple(bt.grad.shape), bt.grad.is_contiguous(), bt.grad.numpy()
    assert got["microtorch"][:2] == got["torch"][:2]
    np.testing.assert_allclose(got["microtorch"][2], got["torch"][2], rtol=1e-13)


@pytest.mark.parametrize("shape", [(), (3,), (3, 4)])
def test_t_as_torch(shape):
    got = {}
    for lib in LIBS:
        x = lib.tensor(np.arange(float(np.prod(shape))).reshape(shape), requires_grad=True)
        y = x.t()
        g, = lib.autograd.grad(y, x, lib.ones(tuple(y.shape), dtype=lib.float64))
        got[lib.__name__] = _layout(y), y.grad_fn.name(), y.detach().numpy().tolist(), g.numpy().tolist()
    assert got["microtorch"] == got["torch"]
    for lib in LIBS:
        with pytest.raises(RuntimeError, match="t\\(\\) expects a tensor with <= 2 dimensions"):
            lib.ones(2, 2, 2).t()


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "expanded", "every other row"])
@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_unsqueeze_strides_as_torch(layout, dim):
    """torch's stride for the new dim (that of the dim it goes before, times its size), whatever x's layout."""
    got = {}
    for lib in LIBS:
        x = lib.tensor(np.arange(12.0).reshape(4, 3))
        x = {"contiguous": x, "transposed": x.t(), "expanded": x[:, :1].expand(4, 5),
             "every other row": x[::2]}[layout]
        got[lib.__name__] = _layout(x.unsqueeze(dim)), x.unsqueeze(dim).numpy().tolist()
    assert got["microtorch"] == got["torch"]


@pytest.mark.parametrize("dims", [(0, 1), (-1, 0), (1, 1), (2, 0), (0, -3)])
def test_transpose_dims_as_torch(dims):
    got = {}
    for lib in LIBS:
        x = lib.tensor(np.arange(6.0).reshape(2, 3))
        try:
            got[lib.__name__] = _layout(x.transpose(*dims))
        except IndexError as e:
            got[lib.__name__] = "IndexError", "out of range" in str(e)
    assert got["microtorch"] == got["torch"]


@pytest.mark.parametrize("sizes", [(-1, 3), (2, -1, 3), (-1, -1, 3), (2, -1), (3, -1), (-1,), (2, -2), (2, 4)])
def test_expand_sizes_as_torch(sizes):
    """-1 keeps an existing dim's size; in a new leading dim torch refuses it (and names the last such dim)."""
    got = {}
    for lib in LIBS:
        try:
            got[lib.__name__] = _layout(lib.ones(3).expand(*sizes))
        except RuntimeError as e:
            got[lib.__name__] = "RuntimeError", str(e).split(" (-1 keeps")[0] if "leading" in str(e) else "size"
    assert got["microtorch"] == got["torch"]


def _cat(lib, xs, dim):
    return lib.cat(xs, dim)


def _stack(lib, xs, dim):
    return lib.stack(xs, dim)


@pytest.mark.parametrize("name, join, shapes, dim", [
    ("cat", _cat, [(2, 3), (2, 0), (2, 4)], 1),
    ("cat with a 1-d empty input", _cat, [(2, 3), (0,), (1, 3)], 0),
    ("stack", _stack, [(2, 3), (2, 3), (2, 3)], 1),
    ("stack of 0-d", _stack, [(), (), ()], 0),
])
def test_join_gradients_as_torch(name, join, shapes, dim):
    """cat's backward narrows the gradient (SliceBackward0), stack's selects (SelectBackward0): plain views."""
    rng = np.random.default_rng(4)
    arrays = [rng.standard_normal(s) for s in shapes]
    got = {}
    for lib in LIBS:
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        y = join(lib, xs, dim)
        gy = lib.tensor(np.arange(1.0, 1 + np.prod(y.shape)).reshape(tuple(y.shape)), requires_grad=True)
        gs = lib.autograd.grad(y, xs, gy, create_graph=True)
        got[lib.__name__] = [(tuple(g.shape), g._base is not None, _names(g.grad_fn) if g.grad_fn else None,
                              g.detach().numpy().tolist()) for g in gs]
    assert got["microtorch"] == got["torch"]


@pytest.mark.parametrize("shape, squeeze", [
    ((2, 1, 3), lambda x: x.squeeze()),
    ((2, 1, 3), lambda x: x.squeeze(1)),
    ((2, 1, 3), lambda x: x.squeeze(0)),               # nothing to squeeze
    ((2, 1, 3, 1), lambda x: x.squeeze((1, 3))),
])
def test_squeeze_backward_unsqueezes_as_torch(shape, squeeze):
    got = {}
    for lib in LIBS:
        x = lib.tensor(np.arange(float(np.prod(shape))).reshape(shape), requires_grad=True)
        y = squeeze(x)
        g, = lib.autograd.grad(y, x, lib.ones(tuple(y.shape), dtype=lib.float64, requires_grad=True),
                               create_graph=True)
        got[lib.__name__] = _layout(g), _names(g.grad_fn) if g.grad_fn else None
    assert got["microtorch"] == got["torch"]


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("keepdim", [False, True])
def test_max_min_dim_double_backward_as_torch(op, keepdim):
    """torch writes the gradient into zeros at the chosen indices with scatter (ScatterBackward0)."""
    a = np.array([[3.0, 1.0, 3.0], [0.0, 2.0, -1.0]])
    got = {}
    for lib in LIBS:
        x = lib.tensor(a, requires_grad=True)
        v = getattr(x, op)(1, keepdim=keepdim)[0]
        gy = lib.tensor(np.array([1.0, 2.0]).reshape(tuple(v.shape)), requires_grad=True)
        g, = lib.autograd.grad(v, x, gy, create_graph=True)
        gg, = lib.autograd.grad((g * g).sum(), gy)
        got[lib.__name__] = _names(g.grad_fn), g.detach().numpy().tolist(), gg.numpy().tolist()
    assert got["microtorch"] == got["torch"]


@pytest.mark.parametrize("shape, reps", [((2, 3), (2, 1)), ((3,), (2, 2)), ((2, 3), (1, 1)), ((3,), (2, 1, 1)),
                                         ((2, 3), (0, 1)), ((), (3,)), ((2, 1), (1, 3))])
def test_repeat_backward_as_torch(shape, reps):
    """torch sums new leading dims one by one, then splits repeated dims by one reshape and sums the repeats."""
    got = {}
    for lib in LIBS:
        x = lib.tensor(np.arange(1.0, 1 + np.prod(shape)).reshape(shape), requires_grad=True)
        y = x.repeat(*reps)
        gy = lib.tensor(np.arange(1.0, 1 + np.prod(y.shape)).reshape(tuple(y.shape)), requires_grad=True)
        g, = lib.autograd.grad(y, x, gy, create_graph=True)
        got[lib.__name__] = _names(g.grad_fn) if g.grad_fn else None, _layout(g), g.detach().numpy().tolist()
    assert got["microtorch"] == got["torch"]


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("values", [[[1.0, 3.0], [3.0, 0.0]], [[np.nan, 1.0], [np.nan, 2.0]], [5.0], 2.0])
def test_max_min_of_everything_double_backward_as_torch(op, values):
    """torch writes grad / count into zeros at the extremes (MaskedFillBackward1 over DivBackward0)."""
    got = {}
    for lib in LIBS:
        x = lib.tensor(values, dtype=lib.float64, requires_grad=True)
        gy = lib.tensor(3.0, dtype=lib.float64, requires_grad=True)
        g, = lib.autograd.grad(getattr(x, op)(), x, gy, create_graph=True)
        gg, = lib.autograd.grad((g * g).sum(), gy)
        got[lib.__name__] = _names(g.grad_fn), str(g.detach().numpy().tolist()), gg.item()
    assert got["microtorch"] == got["torch"]


def test_l1_norm_gradient_graph_as_torch():
    got = {}
    for lib in LIBS:
        x = lib.tensor([[1.0, -2.0], [0.0, 3.0]], requires_grad=True)
        g, = lib.autograd.grad(x.norm(p=1), x, lib.tensor(2.0, requires_grad=True), create_graph=True)
        got[lib.__name__] = _names(g.grad_fn), g.detach().numpy().tolist()
    assert got["microtorch"] == got["torch"]


@pytest.mark.parametrize("dim", [0, 2, -1, -3, 3, -4])
def test_stack_dims_as_torch(dim):
    """stack's new dim has one more place than the tensors' dims; beyond it torch raises IndexError (it wrapped)."""
    got = {}
    for lib in LIBS:
        xs = [lib.ones(2, 3), lib.zeros(2, 3)]
        try:
            got[lib.__name__] = tuple(lib.stack(xs, dim).shape)
        except IndexError:
            got[lib.__name__] = "IndexError"
    assert got["microtorch"] == got["torch"]


@pytest.mark.parametrize("join", ["cat", "stack"])
def test_joining_a_non_tensor_raises_as_torch(join):
    for lib in LIBS:
        with pytest.raises(TypeError):
            getattr(lib, join)([lib.ones(2, 3), np.ones((2, 3))])


@pytest.mark.parametrize("shape, args", [((3, 4, 5), (2,)), ((3, 4, 5), (2, 1)), ((3, 4, 5), ([1, 3], 1)),
                                         ((3, 4, 5), ([0, 3, 0], 0)), ((3, 4, 5), (0,)), ((0, 2), (0,)),
                                         ((3, 2), (-1,)), ((3, 4, 5), (10,))])
def test_split_as_torch(shape, args):
    """split's pieces (views of the input, SplitBackward0 / SplitWithSizesBackward0) and their gradient."""
    got = {}
    for lib in LIBS:
        x = lib.tensor(np.arange(float(np.prod(shape))).reshape(shape), requires_grad=True)
        try:
            pieces = x.split(*args)
        except RuntimeError as e:
            got[lib.__name__] = "RuntimeError", str(e)
            continue
        total = sum((p * (i + 1)).sum() for i, p in enumerate(pieces))
        g, = lib.autograd.grad(total, x) if pieces[0].numel() or len(pieces) > 1 else (None,)
        got[lib.__name__] = ([(tuple(p.shape), p._base is not None, p.stride() if p.numel() else "empty",
                               p.grad_fn.name(), p.detach().numpy().tolist()) for p in pieces],
                             None if g is None else g.numpy().tolist())
    assert got["microtorch"] == got["torch"]


@pytest.mark.parametrize("args", [(3,), ([],), (0,)])
def test_split_of_an_empty_dim_as_torch(args):
    """An empty dim split by a size gives one empty piece; by an empty list of sizes, none."""
    got = {lib.__name__: [tuple(p.shape) for p in lib.ones(0, 2).split(*args)] for lib in LIBS}
    assert got["microtorch"] == got["torch"]


def test_expand_strides_as_torch_on_random_layouts():
    """x.expand(...) has torch's shape, strides and values whatever x's layout (contiguous, transposed, every
    other row, itself expanded) and whichever dims are new (of size 1 or more) or stretched."""
    rng = np.random.default_rng(7)
    for _ in range(300):
        shape = tuple(int(n) for n in rng.integers(1, 4, int(rng.integers(1, 4))))
        layout, lead = int(rng.integers(4)), int(rng.integers(0, 3))
        got = {}
        for lib in LIBS:
            x = lib.tensor(np.arange(float(np.prod(shape))).reshape(shape))
            x = {0: x, 1: x.transpose(0, -1), 2: x[::2], 3: x[:1].expand(3, *shape[1:])}[layout]
            sizes = [int(rng.integers(1, 4)) for _ in range(lead)] if lib is torch else sizes
            stretch = [bool(rng.integers(2)) for _ in shape] if lib is torch else stretch
            target = sizes + [3 if n == 1 and s else n for n, s in zip(x.shape, stretch)]
            e = x.expand(*target)
            got[lib.__name__] = tuple(e.shape), e.stride(), e.numpy().tolist()
        assert got["microtorch"] == got["torch"], (shape, layout, target)
