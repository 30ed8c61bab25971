"""The twenty-second round's findings (teaching code from Raschka's ML book, Deep Learning with PyTorch, the
UvA course and dataflowr, run beside torch), each checked against torch 2.13."""
import pickle
import warnings

import numpy as np
import pytest
import torch as real_torch

import microtorch
from tests.torch_errors import error_of as _error, same_error as _same_error

LIBS = (real_torch, microtorch)


# ---- layouts: a fresh image, not a view of the padded buffer (Raschka ch. 17's gradient penalty .view) ----
def _conv_input_grad(lib, op, shape, **kw):
    lib.manual_seed(0)
    x = lib.randn(*shape, requires_grad=True)
    w = lib.randn(*(2, shape[1] // kw.get("groups", 1)) + (3,) * (len(shape) - 2))
    g, = lib.autograd.grad(getattr(lib.nn.functional, op)(x, w, **kw).sum(), x)
    return g


def _pool_input_grad(lib, op, shape, **kw):
    x = lib.ones(*shape, requires_grad=True)
    g, = lib.autograd.grad(getattr(lib.nn.functional, op)(x, 3, 2, **kw).sum(), x)
    return g


LAYOUT_CASES = {
    "conv1d padding": lambda lib: _conv_input_grad(lib, "conv1d", (4, 1, 8), padding=1),
    "conv2d padding": lambda lib: _conv_input_grad(lib, "conv2d", (4, 1, 8, 8), padding=1),
    "conv2d groups": lambda lib: _conv_input_grad(lib, "conv2d", (4, 2, 8, 8), padding=2, groups=2),
    "conv3d padding": lambda lib: _conv_input_grad(lib, "conv3d", (2, 1, 5, 5, 5), padding=1),
    "max_pool1d padding": lambda lib: _pool_input_grad(lib, "max_pool1d", (2, 3, 8), padding=1),
    "max_pool2d padding": lambda lib: _pool_input_grad(lib, "max_pool2d", (2, 3, 8, 8), padding=1),
    "avg_pool2d padding": lambda lib: _pool_input_grad(lib, "avg_pool2d", (2, 3, 8, 8), padding=1),
    "avg_pool3d padding": lambda lib: _pool_input_grad(lib, "avg_pool3d", (2, 3, 6, 6, 6), padding=1),
    "fold padding": lambda lib: lib.nn.functional.fold(lib.ones(2, 27, 36), (6, 6), 3, padding=1),
    "conv_transpose1d padding": lambda lib: lib.nn.functional.conv_transpose1d(lib.ones(2, 3, 5), lib.ones(3, 1, 4),
                                                                               stride=2, padding=1),
    "conv_transpose2d padding": lambda lib: lib.nn.functional.conv_transpose2d(lib.ones(2, 3, 5, 5),
                                                                               lib.ones(3, 1, 4, 4), stride=2, padding=1),
    "conv_transpose3d padding": lambda lib: lib.nn.functional.conv_transpose3d(
        lib.ones(2, 3, 4, 4, 4), lib.ones(3, 1, 3, 3, 3), stride=2, padding=1),
}


@pytest.mark.parametrize("case", sorted(LAYOUT_CASES))
def test_padded_results_are_contiguous_as_torchs(case):
    want, got = (LAYOUT_CASES[case](lib) for lib in LIBS)
    assert got.stride() == want.stride() and got.is_contiguous()
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)
    got.view(got.shape[0], -1)  # (the book's gradients.view(batch_size, -1))


# ---- data utilities ----
@pytest.mark.parametrize("batch", [[(1, "x"), (2, "y")], [{"a": "x", "b": (1, "s")}, {"a": "y", "b": (2, "t")}],
                                   [("p", ("q", 1.5)), ("r", ("s", 2.5))]])
def test_default_collate_keeps_strings_of_a_tuple_in_a_tuple(batch):
    want, got = (lib.utils.data.default_collate(batch) for lib in LIBS)
    assert repr(got).replace("microtorch", "torch") == repr(want)


def test_iterable_dataset_is_abstract():
    _same_error(lambda lib: lib.utils.data.IterableDataset())

    class Stream(microtorch.utils.data.IterableDataset):
        def __iter__(self):
            return iter(range(3))
    assert list(Stream()) == [0, 1, 2]


@pytest.mark.parametrize("init", ["kaiming_uniform_", "kaiming_normal_", "xavier_uniform_", "normal_"])
def test_zero_element_init_warns_as_torch(init):
    said = []
    for lib in LIBS:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            getattr(lib.nn.init, init)(lib.empty(0, 3))
        said.append([str(w.message) for w in caught])
    assert said[1] == said[0]


# ---- bucketize and searchsorted of a number; 0-d results stay 0-d ----
SEARCH_CASES = [
    lambda lib: lib.bucketize(3, lib.tensor([1, 5])),
    lambda lib: lib.bucketize(3, lib.tensor([1, 5]), out_int32=True, right=True),
    lambda lib: lib.bucketize(3.5, lib.tensor([1.0, 5.0])),
    lambda lib: lib.bucketize(True, lib.tensor([1, 5])),
    lambda lib: lib.bucketize(lib.tensor(3), lib.tensor([1, 5])),
    lambda lib: lib.searchsorted(lib.tensor([1, 5]), 3),
    lambda lib: lib.searchsorted(lib.tensor([1.0, 5.0]), 3.5, right=True),
    lambda lib: lib.searchsorted(lib.tensor([1, 5]), lib.tensor(3)),
    lambda lib: lib.searchsorted(lib.tensor([[1, 5], [2, 3]]), lib.tensor([[3], [4]])),
]


@pytest.mark.parametrize("case", range(len(SEARCH_CASES)))
def test_bucketize_of_a_number_and_of_a_0d_tensor(case):
    want, got = (SEARCH_CASES[case](lib) for lib in LIBS)
    assert got.shape == want.shape and str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("make", [lambda lib: lib.bucketize(3, lib.tensor([[1, 5]])),
                                  lambda lib: lib.bucketize(lib.tensor([3]), lib.tensor([[1, 5]])),
                                  lambda lib: lib.searchsorted(lib.tensor([[1, 5], [2, 3]]), 3)])
def test_bucketize_errors(make):
    _same_error(make)


# ---- errors in torch's types and words ----
ERROR_CASES = {
    "conv2d same, strided": lambda lib: lib.nn.functional.conv2d(lib.ones(1, 1, 5, 5), lib.ones(1, 1, 3, 3),
                                                                 padding="same", stride=2),
    "Conv2d same, strided": lambda lib: lib.nn.Conv2d(1, 1, 3, padding="same", stride=2),
    "index_add past the end": lambda lib: lib.zeros(3, 2).index_add(0, lib.tensor([0, 5]), lib.ones(2, 2)),
    "index_add negative": lambda lib: lib.zeros(3, 2).index_add(0, lib.tensor([0, -1]), lib.ones(2, 2)),
    "index_add_ dim 1": lambda lib: lib.zeros(3, 4).index_add_(1, lib.tensor([0, 9]), lib.ones(3, 2)),
    "index_add of one dim": lambda lib: lib.zeros(3).index_add(0, lib.tensor([0, 5]), lib.ones(2)),
    "to an unknown device": lambda lib: lib.ones(2).to("foo"),
    "factory on an unknown device": lambda lib: lib.ones(2, device="foo"),
    "module to an unknown device": lambda lib: lib.nn.Linear(2, 2).to("foo"),
    "iinfo of bool": lambda lib: lib.iinfo(lib.bool),
    "expand to fewer dims": lambda lib: lib.ones(2, 4).expand(4),
}


@pytest.mark.parametrize("case", sorted(ERROR_CASES))
def test_errors_as_torchs(case):
    _same_error(ERROR_CASES[case])


def _assign(key, shape):
    def run(lib):
        x = lib.ones(3, 4)
        x[key(lib) if callable(key) else key] = lib.ones(*shape)
    return run


SETITEM_CASES = {
    "row, too long": _assign(0, (3,)), "rows, too many": _assign(slice(0, 2), (3, 4)),
    "column": _assign((slice(None), 0), (4,)), "more dims than the slice": _assign(0, (2, 4)),
    "ellipsis": _assign((Ellipsis, 1), (2, 3)), "full slice": _assign(slice(None), (5,)),
    "index tensor": _assign(lambda lib: lib.tensor([0, 1]), (3, 4)),
    "mask": _assign(lambda lib: lib.tensor([True, False, True]), (3, 3)),
}


@pytest.mark.parametrize("case", sorted(SETITEM_CASES))
def test_setitem_shape_errors_are_expands(case):
    """Raschka ch. 12: x[0:2] = t of the wrong shape. torch expands the value to the slice (expand's errors)."""
    _same_error(SETITEM_CASES[case])


@pytest.mark.parametrize("src, dst", [((3,), (2,)), ((3, 4), (3, 2)), ((2, 4), (4,)), ((2, 3), (3, 4)),
                                      ((1, 2, 3), (2, 3)), ((2, 3), (2, 1, 3)), ((2, 3, 4), (2, 4)), ((2, 1), (3, 1))])
def test_copy_shape_errors(src, dst):
    _same_error(lambda lib: lib.ones(*dst).copy_(lib.ones(*src)))


@pytest.mark.parametrize("src, dst", [((1, 4), (2, 4)), ((4,), (3, 4)), ((1, 1, 2, 4), (2, 4))])
def test_copy_and_setitem_that_broadcast_still_work(src, dst):
    for lib in LIBS:
        y = lib.zeros(*dst)
        y[...] = lib.arange(4.0)[:src[-1]].expand(*src)  # (setitem drops the value's leading 1s)
        assert y.tolist() == np.broadcast_to(np.arange(4.0)[:src[-1]], dst).tolist()
        if len(src) <= len(dst):
            x = lib.zeros(*dst)
            x.copy_(lib.arange(4.0)[:src[-1]].expand(*src))
            assert x.tolist() == y.tolist()


# ---- what types print ----
@pytest.mark.parametrize("make", [lambda lib: lib.ones(2).shape, lambda lib: lib.float32, lambda lib: lib.device("cpu"),
                                  lambda lib: lib.finfo(lib.float32), lambda lib: lib.iinfo(lib.int8),
                                  lambda lib: lib.ones(2, requires_grad=True).sum().grad_fn,
                                  lambda lib: (lib.ones(2, requires_grad=True) * 2).grad_fn])
def test_type_names_print_as_torchs(make):
    want, got = (str(type(make(lib))) for lib in LIBS)
    assert got.replace("microtorch", "torch") == want


def test_size_dtype_device_still_pickle():
    for value in (microtorch.ones(2, 3).shape, microtorch.float64, microtorch.device("cpu")):
        assert pickle.loads(pickle.dumps(value)) == value


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64"])
def test_iinfo_repr(dtype):
    want, got = (repr(lib.iinfo(getattr(lib, dtype))) for lib in LIBS)
    assert got == want


# ---- Deep Learning with PyTorch and Understanding Deep Learning beside torch ----
def test_deepcopy_of_a_parameter_in_a_live_graph_is_a_new_leaf():
    """udlbook's lottery tickets retrain from copy.deepcopy checkpoints: the copy's gradient went to the original."""
    import copy
    got = []
    for lib in LIBS:
        p = lib.nn.Parameter(lib.zeros(2))
        p.grad, p.note = lib.ones(2), [1]
        y = p * 1.0  # noqa: F841  (p's graph stays alive)
        q = copy.deepcopy(p)
        assert q.grad is None and not hasattr(q, "note")  # (torch's Parameter copy: values and requires_grad only)
        (q * 2).sum().backward()
        got.append((q.grad.tolist(), p.grad.tolist()))
    assert got[1] == got[0] == ([2.0, 2.0], [1.0, 1.0])


def test_deepcopy_of_a_tensor_keeps_grad_and_attributes_not_hooks():
    import copy
    for lib in LIBS:
        x = lib.zeros(3, requires_grad=True)
        x.grad, x.note = lib.ones(3), [1]
        x.register_hook(lambda g: g * 10)
        z = x * 2  # noqa: F841
        y = copy.deepcopy(x)
        assert y.grad.tolist() == [1.0] * 3 and y.note == [1] and y.note is not x.note
        (y * 3).sum().backward()
        assert y.grad.tolist() == [4.0] * 3 and x.grad.tolist() == [1.0] * 3


def test_deepcopy_of_a_module_trains_its_own_weights():
    import copy
    grads = []
    for lib in LIBS:
        lib.manual_seed(0)
        m = lib.nn.Linear(2, 2)
        out = m(lib.ones(1, 2))  # noqa: F841
        m2 = copy.deepcopy(m)
        m2(lib.ones(1, 2)).sum().backward()
        grads.append((m.weight.grad, m2.weight.grad.tolist()))
    assert grads[1][0] is None and grads[1][1] == grads[0][1]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("seed", range(6))
def test_rrelu_training_bits(seed, dtype):
    """DLwPT ch. 6: the slope is drawn in double without a fused multiply-add, rounded to x's dtype, then x times it
    there; nan keeps its slope 1."""
    got = []
    for lib in LIBS:
        lib.manual_seed(seed)
        x = lib.randn(40, dtype=getattr(lib, dtype))
        x[3] = float("nan")
        x.requires_grad_()
        y = lib.nn.functional.rrelu(x, training=True)
        y.sum().backward()
        got.append((y.detach().numpy(), x.grad.numpy()))
    for want, ours in zip(*got):
        np.testing.assert_array_equal(ours, want)


@pytest.mark.parametrize("momentum", [None, 0.1, 0.3, 0.77])
@pytest.mark.parametrize("shape", [(5, 3), (4, 3, 6)])
def test_batch_norm_running_stats_bits(momentum, shape):
    """udlbook 11_3: momentum=None (a cumulative average, 1/n) and others: 1 - momentum in float32."""
    got = []
    for lib in LIBS:
        lib.manual_seed(1)
        bn = lib.nn.BatchNorm1d(3, affine=False, momentum=momentum)
        for i in range(4):
            bn(lib.randn(*shape) * (i + 1))
        got.append(np.concatenate([bn.running_mean.numpy(), bn.running_var.numpy()]))
    np.testing.assert_array_equal(got[1], got[0])


SCATTER_REDUCE_CASES = [
    lambda lib: lib.zeros(2, 3).scatter_(1, lib.tensor([[0], [1]]), lib.tensor([[3.0], [7.0]]), reduce="add"),
    lambda lib: lib.ones(2, 3).scatter_(1, lib.tensor([[0, 0], [1, 2]]), lib.tensor([[3.0, 2], [7, 5]]),
                                        reduce="multiply"),
    lambda lib: lib.ones(2, 3).scatter(1, lib.tensor([[0, 0], [1, 2]]), lib.tensor([[3.0, 2, 9], [7, 5, 9]]),
                                       reduce="add"),
    lambda lib: lib.ones(2, 3).scatter(1, lib.tensor([[0, 0], [1, 2]]), 2.5, reduce="multiply"),
    lambda lib: lib.ones(2, 3, dtype=lib.long).scatter_(1, lib.tensor([[0, 0], [1, 2]]), 2, reduce="add"),
    lambda lib: lib.zeros(3).scatter_(0, lib.tensor(1), 4.0, reduce="add"),
]


@pytest.mark.parametrize("case", range(len(SCATTER_REDUCE_CASES)))
def test_scatter_with_reduce(case):
    """DLwPT ch. 4: scatter_(dim, index, src, reduce='add'), torch's older scatter_reduce (deprecated with a tensor
    src: torch warns once a process)."""
    want, got = (SCATTER_REDUCE_CASES[case](lib) for lib in LIBS)
    assert got.dtype.is_floating_point == want.dtype.is_floating_point
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_scatter_with_reduce_has_no_derivative():
    for lib in LIBS:
        x = lib.zeros(2, 3, requires_grad=True)
        y = x.clone().scatter_(1, lib.tensor([[0], [1]]), 2.0, reduce="add")
        assert y.grad_fn.name() == "torch::autograd::NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::scatter_ is not implemented"):
            y.sum().backward()


LOSS_AND_LAYER_ERRORS = {
    "cross_entropy, float indices": lambda lib: lib.nn.functional.cross_entropy(lib.ones(2, 3), lib.ones(2)),
    "cross_entropy, double indices": lambda lib: lib.nn.functional.cross_entropy(
        lib.ones(2, 3), lib.ones(2, dtype=lib.float64)),
    "cross_entropy, int32 indices": lambda lib: lib.nn.functional.cross_entropy(
        lib.ones(2, 3), lib.ones(2, dtype=lib.int32)),
    "cross_entropy, long probabilities": lambda lib: lib.nn.functional.cross_entropy(
        lib.ones(2, 3), lib.ones(2, 3, dtype=lib.long)),
    "cross_entropy, (N, 1) target": lambda lib: lib.nn.CrossEntropyLoss()(lib.ones(2, 3),
                                                                          lib.zeros(2, 1, dtype=lib.long)),
    "nll_loss, (N, 1) target": lambda lib: lib.nn.functional.nll_loss(lib.ones(2, 3), lib.zeros(2, 1, dtype=lib.long)),
    "cross_entropy, image target": lambda lib: lib.nn.functional.cross_entropy(lib.ones(2, 3, 4),
                                                                               lib.zeros(2, 4, 1, dtype=lib.long)),
    "nll_loss, two targets of one row": lambda lib: lib.nn.functional.nll_loss(lib.ones(3), lib.tensor([2, 1])),
    "prelu, double input": lambda lib: lib.nn.PReLU()(lib.ones(3, dtype=lib.float64)),
    "prelu, double weight": lambda lib: lib.nn.functional.prelu(lib.ones(3), lib.ones(1, dtype=lib.float64)),
    "conv2d, double input": lambda lib: lib.nn.functional.conv2d(lib.ones(1, 1, 3, 3, dtype=lib.float64),
                                                                 lib.ones(1, 1, 3, 3)),
    "conv2d, double weight": lambda lib: lib.nn.functional.conv2d(lib.ones(1, 1, 3, 3),
                                                                  lib.ones(1, 1, 3, 3, dtype=lib.float64)),
    "conv2d, input smaller than the kernel": lambda lib: lib.nn.functional.conv2d(lib.ones(1, 1, 2, 5),
                                                                                  lib.ones(1, 1, 3, 3), padding=(0, 1)),
    "conv3d, input smaller than the kernel": lambda lib: lib.nn.functional.conv3d(lib.ones(1, 1, 2, 5, 5),
                                                                                  lib.ones(1, 1, 3, 3, 3)),
    "conv1d, dilated kernel": lambda lib: lib.nn.functional.conv1d(lib.ones(1, 1, 2), lib.ones(1, 1, 3), dilation=2),
    "MaxPool2d of 1x1": lambda lib: lib.nn.MaxPool2d(2)(lib.ones(1, 1, 1, 1)),
    "max_pool2d unbatched": lambda lib: lib.nn.functional.max_pool2d(lib.ones(3, 1, 5), 2),
    "avg_pool2d of 1x1": lambda lib: lib.nn.functional.avg_pool2d(lib.ones(1, 1, 1, 1), 2),
    "avg_pool1d": lambda lib: lib.nn.functional.avg_pool1d(lib.ones(1, 1, 1), 2),
    "max_pool1d": lambda lib: lib.nn.functional.max_pool1d(lib.ones(1, 1, 1), 2),
    "max_pool3d": lambda lib: lib.nn.functional.max_pool3d(lib.ones(1, 2, 1, 4, 4), 2),
    "avg_pool3d": lambda lib: lib.nn.functional.avg_pool3d(lib.ones(1, 2, 1, 4, 4), 2),
    "scatter_, first index out of bounds": lambda lib: lib.zeros(2, 3).scatter_(1, lib.tensor([[5], [9]]), 1.0),
    "scatter_, unknown reduce": lambda lib: lib.ones(2, 3).scatter_(1, lib.tensor([[0], [1]]), 2.0, reduce="mean"),
}


@pytest.mark.parametrize("case", sorted(LOSS_AND_LAYER_ERRORS))
def test_loss_and_layer_errors_as_torchs(case):
    _same_error(LOSS_AND_LAYER_ERRORS[case])


def test_cross_entropy_of_one_row_with_a_target_of_one_element():
    want, got = (lib.nn.functional.cross_entropy(lib.tensor([1.0, 2.0, 5.0]), lib.tensor([2])) for lib in LIBS)
    assert got.shape == want.shape and got.item() == want.item()


def test_optim_all_is_torchs_without_sparse_adam():
    assert microtorch.optim.__all__ == [n for n in real_torch.optim.__all__ if n != "SparseAdam"]


@pytest.mark.parametrize("make", [
    lambda lib: lib.nn.Conv1d(1, 1, 2)(lib.randn(1, 1, 4, dtype=lib.double)),
    lambda lib: lib.nn.functional.conv2d(lib.randn(1, 3, 4, 4), lib.randn(2, 3, 3, 3), lib.ones(2, dtype=lib.float64)),
    lambda lib: lib.nn.functional.conv2d(lib.randn(1, 3, 4, 4, dtype=lib.float64), lib.randn(2, 3, 3, 3),
                                         lib.ones(2, dtype=lib.float64)),
    lambda lib: lib.nn.Conv2d(3, 2, 3, bias=False)(lib.randn(1, 3, 4, 4, dtype=lib.float64))])
def test_convolution_dtype_errors(make):
    _same_error(make)


@pytest.mark.parametrize("how", ["deepcopy", "copy", "pickle"])
def test_a_copied_generator_continues_the_stream(how):
    """A dataset holding a torch.Generator is copied into each DataLoader worker: the copy draws what the original
    would (it failed on use before)."""
    import copy
    copies = {"deepcopy": copy.deepcopy, "copy": copy.copy, "pickle": lambda g: pickle.loads(pickle.dumps(g))}
    got = []
    for lib in LIBS:
        g = lib.Generator().manual_seed(3)
        lib.rand(2, generator=g)
        h = copies[how](g)
        got.append((lib.randn(20, generator=h).tolist(), lib.randn(20, generator=g).tolist(), h.initial_seed()))
    assert got[1] == got[0] and got[0][0] == got[0][1]


# ---- the UvA course (tutorials 7-17, practicals 2025) beside torch ----
@pytest.mark.parametrize("shape", [(8, 4, 1, 1), (8, 4, 1), (6, 4, 1, 1, 1), (8, 4, 1, 3)])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_backward_with_spatial_dims_of_one(shape, affine):
    """A ResNet bottleneck on a small image: BatchNorm in training mode over (N, C, 1, 1) (the gradient had the shape
    (N, C)). (With a batch of two, the variance of a channel can still differ in its last bit.)"""
    got = []
    for lib in LIBS:
        lib.manual_seed(0)
        bn = {3: lib.nn.BatchNorm1d, 4: lib.nn.BatchNorm2d, 5: lib.nn.BatchNorm3d}[len(shape)](4, affine=affine)
        x = lib.randn(*shape, requires_grad=True)
        (bn(x) * lib.arange(float(np.prod(shape))).view(shape)).sum().backward()
        got.append([x.grad.numpy()] + ([bn.weight.grad.numpy(), bn.bias.grad.numpy()] if affine else []))
    for want, ours in zip(*got):
        assert ours.shape == want.shape
        np.testing.assert_allclose(ours, want, rtol=1e-5, atol=1e-6)


UVA_ERRORS = {
    "set_grad_enabled of a str": lambda lib: lib.set_grad_enabled("x"),
    "set_grad_enabled of an int": lambda lib: lib.set_grad_enabled(1),
    "cross_entropy, 4-d target of an image": lambda lib: lib.nn.functional.cross_entropy(
        lib.ones(2, 16, 4, 4), lib.zeros(2, 1, 4, 4, dtype=lib.long)),
    "cross_entropy, 3-d input": lambda lib: lib.nn.functional.cross_entropy(lib.ones(2, 16, 5),
                                                                            lib.zeros(2, 1, 5, dtype=lib.long)),
    "multinomial of zeros": lambda lib: lib.multinomial(lib.zeros(1, 3), 1),
    "multinomial of a negative": lambda lib: lib.multinomial(lib.tensor([-0.1, 1.0]), 1),
    "index_add of another dtype": lambda lib: lib.zeros(3).index_add(0, lib.tensor([0, 1]),
                                                                     lib.ones(2, dtype=lib.float64)),
}


@pytest.mark.parametrize("case", sorted(UVA_ERRORS))
def test_uva_errors_as_torchs(case):
    _same_error(UVA_ERRORS[case])
    microtorch.set_grad_enabled(True)


def test_set_grad_enabled_of_a_bool_still_switches():
    with microtorch.set_grad_enabled(False):
        assert not microtorch.is_grad_enabled()
    assert microtorch.is_grad_enabled()


def test_positional_state_dict_warns_as_torch():
    said = []
    for lib in LIBS:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            keys = list(lib.nn.Linear(2, 2).state_dict(None, "pre."))
        said.append((keys, [(w.category, str(w.message)) for w in caught]))
    assert said[1] == said[0]


@pytest.mark.parametrize("make", [lambda lib: lib.arange(6).reshape(2, 3).t().view(lib.int32),
                                  lambda lib: lib.arange(6, dtype=lib.int32).reshape(2, 3).view(lib.int64),
                                  lambda lib: lib.tensor(1).view(lib.int32)])
def test_view_as_a_dtype_of_another_size_errors(make):
    """DLwPT ch. 3: x.t().view(torch.int32) is torch's RuntimeError about the last stride (it was a TypeError)."""
    _same_error(make)


@pytest.mark.parametrize("make", [lambda lib: lib.arange(6).reshape(2, 3).view(lib.int32),
                                  lambda lib: lib.arange(6).reshape(2, 3).view(lib.int8),
                                  lambda lib: lib.arange(8, dtype=lib.int8).view(lib.int64),
                                  lambda lib: lib.arange(6).reshape(2, 3).t().view(lib.float64)])
def test_view_as_a_dtype(make):
    want, got = (make(lib) for lib in LIBS)
    assert got.shape == want.shape and got.stride() == want.stride()
    np.testing.assert_array_equal(got.numpy(), want.numpy())


# ---- dataflowr (Lelarge's course) beside torch ----
SIZE_CASES = [
    lambda lib, m: lib.zeros((3, m.max())), lambda lib, m: lib.zeros(3, m.max()), lambda lib, m: lib.ones((m.max(),)),
    lambda lib, m: lib.empty(m.max(), 2), lambda lib, m: lib.full((2, m.max()), 1.5),
    lambda lib, m: lib.zeros(2).new_zeros((m.max(),)), lambda lib, m: lib.zeros(size=(m.min(), 2)),
]


@pytest.mark.parametrize("case", range(len(SIZE_CASES)))
def test_a_0d_integer_tensor_in_a_size(case):
    """packing sequences: zeros((batch, lengths.max())) reads the 0-d tensor as its int."""
    want, got = (SIZE_CASES[case](lib, lib.tensor([8, 4, 6])) for lib in LIBS)
    assert tuple(got.shape) == tuple(want.shape)


@pytest.mark.parametrize("make", [lambda lib: lib.zeros((3, lib.tensor(2.5))),
                                  lambda lib: lib.zeros((3, lib.tensor([2, 3])))])
def test_other_tensors_in_a_size_are_refused(make):
    for lib in LIBS:
        with pytest.raises(TypeError):
            make(lib)


@pytest.mark.parametrize("hard", [False, True])
def test_gumbel_softmax_draws_torchs_noise(hard):
    got = []
    for lib in LIBS:
        lib.manual_seed(0)
        logits = lib.tensor([[1.0, 2, 3], [0.5, -1, 0]], requires_grad=True)
        y = lib.nn.functional.gumbel_softmax(logits, tau=0.5, hard=hard)
        (y * lib.tensor([1.0, 2, 3])).sum().backward()
        got.append((y.detach().numpy(), logits.grad.numpy(), lib.rand(2).numpy()))
    for want, ours in zip(*got):
        np.testing.assert_allclose(ours, want, rtol=1e-6, atol=1e-7)


def _view_made_a_leaf(lib):
    x = (lib.ones(1, 3) * 2).squeeze(0)
    x.requires_grad = True
    x.sub_(1)


@pytest.mark.parametrize("make", [lambda lib: lib.nn.Linear(2, 3)(None), _view_made_a_leaf])
def test_dataflowr_errors(make):
    _same_error(make)


STATE_DICTS = [
    lambda lib: {"0.weight": lib.zeros(2, 2)},
    lambda lib: {"0.weight": lib.zeros(2, 2), "0.bias": lib.ones(3), "x": lib.ones(1)},
    lambda lib: {"0.weight": 3, "0.bias": lib.ones(2), "1.running_mean": lib.full((2,), 0.5)},
]


@pytest.mark.parametrize("case", range(len(STATE_DICTS)))
def test_a_failed_strict_load_has_loaded_what_matched(case):
    """Raschka's, DLwPT's, the UvA and dataflowr courses' checks: torch copies the entries that fit, then raises all
    the errors; a BatchNorm's missing num_batches_tracked is not missing in a dict without version metadata."""
    got = []
    for lib in LIBS:
        lib.manual_seed(0)
        m = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2))
        with pytest.raises(RuntimeError) as info:
            m.load_state_dict(STATE_DICTS[case](lib))
        got.append((str(info.value).replace("microtorch", "torch"), m[0].weight.tolist(), m[0].bias.tolist(),
                    m[1].running_mean.tolist()))
    assert got[1] == got[0]


def test_a_non_strict_load_reports_as_torch():
    want, got = (lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2)).load_state_dict(
        {"0.weight": lib.ones(2, 2)}, strict=False) for lib in LIBS)
    assert (got.missing_keys, got.unexpected_keys) == (want.missing_keys, want.unexpected_keys)


# ---- PyTorch's examples beside torch ----
@pytest.mark.parametrize("make", [
    lambda lib: lib.tensor(__import__("collections").deque([1.0, 2.0])), lambda lib: lib.tensor(range(3)),
    lambda lib: lib.tensor(__import__("array").array("f", [1, 2])),
    lambda lib: lib.tensor(__import__("collections").UserList([1, 2])),
    lambda lib: lib.tensor([__import__("collections").deque([1, 2]), __import__("collections").deque([3, 4])]),
    lambda lib: lib.tensor([range(2), range(2)])])
def test_tensor_of_other_sequences(make):
    """reinforce.py: torch.tensor(deque_of_returns)."""
    want, got = (make(lib) for lib in LIBS)
    assert repr(got).replace("microtorch", "torch") == repr(want)


@pytest.mark.parametrize("make", [lambda lib: lib.tensor(x for x in [1]), lambda lib: lib.tensor({1, 2}),
                                  lambda lib: lib.tensor({"a": 1})])
def test_tensor_of_what_is_no_sequence(make):
    _same_error(make)


def test_a_pickled_set_and_a_whole_model_load_as_torchs():
    import io
    for lib in LIBS:
        buffer = io.BytesIO()
        lib.save({1, 2}, buffer)
        buffer.seek(0)
        assert lib.load(buffer) == {1, 2}
        buffer = io.BytesIO()
        lib.save(lib.nn.Linear(2, 3), buffer)
        buffer.seek(0)
        with lib.serialization.safe_globals([lib.nn.Linear]):
            assert isinstance(lib.load(buffer), lib.nn.Linear)


EXAMPLE_ERRORS = {
    "to(0)": lambda lib: lib.zeros(2).to(0), "device(0)": lambda lib: lib.device(0),
    "zeros(device=0)": lambda lib: lib.zeros(2, device=0), "Linear.to(0)": lambda lib: lib.nn.Linear(2, 2).to(0),
    "LSTMCell input size": lambda lib: lib.nn.LSTMCell(1, 4)(lib.zeros(2, 3)),
    "LSTMCell batch of c": lambda lib: lib.nn.LSTMCell(1, 4)(lib.zeros(2, 1), (lib.zeros(2, 4), lib.zeros(3, 4))),
    "GRUCell batch": lambda lib: lib.nn.GRUCell(1, 4)(lib.zeros(2, 1), lib.zeros(3, 4)),
    "RNNCell hidden size": lambda lib: lib.nn.RNNCell(1, 4)(lib.zeros(1), lib.zeros(5)),
    "RNN of 4 dims": lambda lib: lib.nn.RNN(1, 4)(lib.zeros(5, 2, 1, 1)),
    "linear dtypes": lambda lib: lib.nn.functional.linear(lib.zeros(2, 1), lib.zeros(4, 1, dtype=lib.double)),
    "linear dtypes, bias": lambda lib: lib.nn.functional.linear(lib.zeros(2, 1), lib.zeros(4, 1, dtype=lib.double),
                                                                lib.zeros(4, dtype=lib.double)),
    "linear of bools": lambda lib: lib.nn.functional.linear(lib.ones(2, 2, dtype=lib.bool), lib.ones(2, 2, dtype=lib.bool)),
    "mm dtypes": lambda lib: lib.mm(lib.zeros(2, 1), lib.zeros(1, 4, dtype=lib.double)),
    "matmul of half": lambda lib: lib.zeros(2, 1) @ lib.zeros(1, 4, dtype=lib.half),
}


@pytest.mark.parametrize("case", sorted(EXAMPLE_ERRORS))
def test_example_errors_as_torchs(case):
    _same_error(EXAMPLE_ERRORS[case])


def test_to_of_an_index_and_a_tensor_is_a_type_error():
    for lib in LIBS:
        with pytest.raises(TypeError, match="invalid combination of arguments"):
            lib.zeros(2).to(0, lib.zeros(1, dtype=lib.long))


def test_a_one_layer_rnn_with_dropout_warns_and_flattens_nothing():
    said = []
    for lib in LIBS:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lstm = lib.nn.LSTM(4, 4, 1, dropout=0.5)
        said.append(([str(w.message) for w in caught], lstm.flatten_parameters()))
    assert said[1] == said[0]


# ---- Udacity's deep-learning-v2-pytorch and Zero to Mastery 05-09 beside torch ----
SIZE_OPS = [lambda s: s[1:], lambda s: s + (1,), lambda s: (1,) + s, lambda s: s * 2, lambda s: 2 * s, lambda s: s + s,
            lambda s: s[::-1], lambda s: s[0], lambda s: s[:0], lambda s: s[1:].numel()]


@pytest.mark.parametrize("case", range(len(SIZE_OPS)))
def test_slices_and_sums_of_a_size_are_sizes(case):
    want, got = (SIZE_OPS[case](lib.zeros(2, 3, 4).shape) for lib in LIBS)
    assert type(got).__name__ == type(want).__name__ and repr(got).replace("microtorch", "torch") == repr(want)


def test_size_of_other_items():
    _same_error(lambda lib: lib.Size([2.0]))
    want, got = (repr(lib.Size([np.int64(2), 3])) for lib in LIBS)
    assert got.replace("microtorch", "torch") == want


@pytest.mark.parametrize("fill", ["uniform_", "normal_"])
def test_fills_take_numpy_numbers(fill):
    """the weight-initialization notebook: m.weight.data.uniform_(-y, y) with y = 1.0 / np.sqrt(n)"""
    got = []
    for lib in LIBS:
        lib.manual_seed(0)
        got.append(getattr(lib.empty(5), fill)(-np.float64(0.5) if fill == "uniform_" else 0, np.float64(0.5)).tolist())
    assert got[1] == got[0]


UDACITY_ERRORS = {
    "bce of long targets": lambda lib: lib.nn.functional.binary_cross_entropy(lib.tensor([0.2, 0.7]), lib.tensor([1, 0])),
    "BCELoss of double targets": lambda lib: lib.nn.BCELoss()(lib.tensor([0.2, 0.7]),
                                                              lib.tensor([1.0, 0], dtype=lib.float64)),
    "bce of bool targets": lambda lib: lib.nn.functional.binary_cross_entropy(lib.tensor([0.2, 0.7]),
                                                                              lib.tensor([True, False])),
    "bce with logits of long targets": lambda lib: lib.nn.BCEWithLogitsLoss()(lib.tensor([0.2, 0.7]), lib.tensor([1, 0])),
    "label smoothing above 1": lambda lib: lib.nn.CrossEntropyLoss(label_smoothing=1.5)(lib.ones(2, 3),
                                                                                         lib.tensor([0, 1])),
    "LSTM of a double input": lambda lib: lib.nn.LSTM(3, 4)(lib.zeros(2, 1, 3).double()),
    "RNN of a float input, double weights": lambda lib: lib.nn.RNN(3, 4).double()(lib.zeros(2, 1, 3)),
    "attention, key and value dims": lambda lib: lib.nn.MultiheadAttention(8, 2, batch_first=True)(
        lib.ones(2, 3, 8), lib.ones(2, 4, 7), lib.ones(2, 4, 8)),
}


@pytest.mark.parametrize("case", sorted(UDACITY_ERRORS))
def test_udacity_errors_as_torchs(case):
    _same_error(UDACITY_ERRORS[case])


def test_bce_weight_of_integers_and_betas_as_a_tuple():
    want, got = (lib.nn.functional.binary_cross_entropy(lib.tensor([0.2, 0.7]), lib.tensor([1.0, 0]),
                                                        weight=lib.tensor([1, 2])) for lib in LIBS)
    assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1] and got.item() == want.item()
    for name in ("Adam", "AdamW"):
        want, got = (getattr(lib.optim, name)([lib.nn.Parameter(lib.ones(1))], betas=[0.5, 0.999]) for lib in LIBS)
        assert got.param_groups[0]["betas"] == want.param_groups[0]["betas"] == (0.5, 0.999)
        assert type(got.defaults["betas"]) is type(want.defaults["betas"])


@pytest.mark.parametrize("make", [lambda lib, x: x.squeeze(axis=0), lambda lib, x: x.count_nonzero(axis=0),
                                  lambda lib, x: np.squeeze(x, axis=0), lambda lib, x: lib.squeeze(x, axis=0),
                                  lambda lib, x: lib.count_nonzero(x, axis=0)])
def test_numpy_spellings_of_dim(make):
    """mnist-mlp: np.squeeze(images, axis=0) on a tensor calls its squeeze(axis=0)."""
    want, got = (make(lib, lib.ones(1, 2, 3)) for lib in LIBS)
    assert tuple(got.shape) == tuple(want.shape)


def _warned(make):
    said = []
    for lib in LIBS:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            make(lib)
        said.append([str(w.message) for w in caught])
    return said


@pytest.mark.parametrize("make", [
    lambda lib: lib.nn.functional.dropout2d(lib.ones(4, 6), 0.5),
    lambda lib: lib.nn.functional.dropout2d(lib.ones(2, 4, 6), 0.5),
    lambda lib: lib.nn.MultiheadAttention(8, 2)(lib.ones(3, 1, 8), lib.ones(3, 1, 8), lib.ones(3, 1, 8),
                                                attn_mask=lib.zeros(3, 3),
                                                key_padding_mask=lib.zeros(1, 3, dtype=lib.bool)),
    lambda lib: lib.nn.TransformerEncoderLayer(8, 2, 8, dropout=0.0)(
        lib.ones(3, 1, 8), src_mask=lib.zeros(3, 3), src_key_padding_mask=lib.zeros(1, 3, dtype=lib.bool))])
def test_deprecation_warnings_as_torchs(make):
    """mnist_rnn's dropout2d of a 2-d input; language_translation's masks of two types"""
    want, got = _warned(make)
    assert got == want


@pytest.mark.parametrize("sparsity", [0.1, 0.5, 0.9])
def test_init_sparse_draws_torchs_numbers(sparsity):
    got = []
    for lib in LIBS:
        lib.manual_seed(3)
        got.append(lib.nn.init.sparse_(lib.empty(7, 5), sparsity).tolist())
    assert got[1] == got[0]


def test_embedding_of_float_indices_names_the_legacy_class():
    _same_error(lambda lib: lib.nn.Embedding(5, 3)(lib.tensor([1.0]).double().float()))


def test_onnx_and_the_default_backend():
    import microtorch.onnx
    assert microtorch.onnx.is_in_onnx_export() is real_torch.onnx.is_in_onnx_export() is False
    with pytest.raises(RuntimeError, match="cannot export a model to ONNX"):
        microtorch.onnx.export(microtorch.nn.Linear(2, 2), (microtorch.ones(1, 2),), "model.onnx")
    for device in ("cpu", "cuda"):
        assert microtorch.distributed.get_default_backend_for_device(device) == \
            real_torch.distributed.get_default_backend_for_device(device)


# ---- bfloat16: a name nanoGPT's train.py lists, refused on use ----
def test_bfloat16_is_a_dtype_to_name_and_compare():
    """nanoGPT's train.py: ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, ...}[dtype]"""
    table = {"float32": microtorch.float32, "bfloat16": microtorch.bfloat16}
    assert table["bfloat16"] is microtorch.bfloat16 and microtorch.ones(2).dtype != microtorch.bfloat16
    assert microtorch.bfloat16.is_floating_point and microtorch.bfloat16.itemsize == real_torch.bfloat16.itemsize
    assert repr(microtorch.bfloat16) == "microtorch.bfloat16"


@pytest.mark.parametrize("use", [
    lambda: microtorch.zeros(2, dtype=microtorch.bfloat16), lambda: microtorch.tensor([1.0], dtype=microtorch.bfloat16),
    lambda: microtorch.ones(2).to(microtorch.bfloat16),
    lambda: microtorch.finfo(microtorch.bfloat16), lambda: microtorch.set_default_dtype(microtorch.bfloat16),
    lambda: microtorch.nn.Linear(2, 2).to(microtorch.bfloat16)])
def test_bfloat16_refuses_every_use_clearly(use):
    with pytest.raises(TypeError, match="microtorch has no bfloat16"):
        use()
    assert microtorch.get_default_dtype() is microtorch.float32


def test_cpu_autocast_to_bfloat16_refuses_as_float16():
    with pytest.raises(NotImplementedError, match="autocast"):
        with microtorch.autocast(device_type="cpu", dtype=microtorch.bfloat16):
            pass
