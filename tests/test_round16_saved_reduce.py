"""What the reductions, softmax and log_softmax, nll_loss, the norms, group_norm, batch_norm and the pads show as
`grad_fn._saved_<name>`, beside torch 2.13, value and Python type: the dims as given (a negative one read as an
unsigned 64-bit int, x.sum(-1) shows (18446744073709551615,); a tuple in the order given; None or () where none was
given, as torch's), mean's numel, var's and std's correction (None where neither it nor a dim nor unbiased was given,
1 where a dim was), a vector norm's order as given (2 an int, 2.5 a float), nll_loss's reduction and ignore_index
(and its double backward's node, which keeps the target and the weight), group_norm's sizes and statistics, batch
norm's empty statistics in eval, and the pad widths. Pack hooks see nll_loss's total_weight after its weight, as
torch's; x.sum(None) and x.mean(None) are torch's SumBackward1 and MeanBackward1, which keep keepdim."""
import numpy as np
import pytest
import torch

import microtorch as mt
from tests.saved_compare import STRIDES, assert_saves_as_torch, describe, observe


def _a(T, dtype=None):
    return T.tensor([[0.5, 1.5, -2.0], [2.5, -1.0, 0.25]], dtype=dtype or T.float64, requires_grad=True)


def _b(T):
    return T.tensor([[1.5, -0.5, 3.0], [0.1, 0.2, 0.3]], dtype=T.float64, requires_grad=True)


def _c(T):
    return T.tensor([[1.5, -0.5, 3.0], [0.7, 0.8, -0.9]], dtype=T.float64)


def _v(T, requires_grad=True):
    return T.tensor([0.3, -1.2, 2.0], dtype=T.float64, requires_grad=requires_grad)


def _t(T):
    return T.tensor([1, 0])


def _x4(T, dtype=None):
    return T.tensor(np.sin(np.arange(32.0)).reshape(1, 2, 4, 4), dtype=dtype or T.float64, requires_grad=True)


def _grad(T, f, x):
    """the gradient of f(x) as a function of x: its grad_fn is the node of f's backward"""
    return T.autograd.grad(f(x).pow(2).sum(), x, create_graph=True)[0]


REDUCTIONS = {
    "sum_dim": lambda T: _a(T).sum(1),
    "sum_negative_dim": lambda T: _a(T).sum(-1),
    "sum_dims_in_given_order": lambda T: _a(T).sum((1, -2)),
    "sum_list_keepdim": lambda T: _a(T).sum([-1], keepdim=True),
    "sum_empty_dims": lambda T: _a(T).sum(()),
    "sum_empty_list": lambda T: _a(T).sum([]),
    "sum_dim_none": lambda T: _a(T).sum(None),
    "sum_dim_none_keepdim": lambda T: _a(T).sum(dim=None, keepdim=True),
    "sum_dtype": lambda T: T.sum(_a(T), -1, dtype=T.float32),
    "sum_0d": lambda T: _a(T)[0, 0].sum(-1),
    "sum_all": lambda T: _a(T).sum(),
    "mean_dim": lambda T: _a(T).mean(1),
    "mean_dims": lambda T: _a(T).mean((-1, 0), keepdim=True),
    "mean_empty_dims": lambda T: _a(T).mean(()),
    "mean_dim_none": lambda T: T.mean(_a(T), None),
    "mean_dim_none_keepdim": lambda T: _a(T).mean(None, keepdim=True),
    "mean_empty_input": lambda T: _a(T)[:, :0].mean(-1),
    "mean_0d": lambda T: _a(T)[0, 0].mean(0),
    "mean_all": lambda T: _a(T).mean(),
    "prod_dim": lambda T: _a(T).prod(1),
    "prod_negative_dim_keepdim": lambda T: _a(T).prod(-1, keepdim=True),
    "prod_dtype": lambda T: _a(T).prod(-2, dtype=T.float32),
    "prod_0d": lambda T: _a(T)[0, 0].prod(-1),
    "prod_all": lambda T: _a(T).prod(),
    "amax_dim": lambda T: _a(T).amax(1),
    "amax_default": lambda T: _a(T).amax(),
    "amax_dims_keepdim": lambda T: _a(T).amax((0, -1), keepdim=True),
    "amax_empty_dims": lambda T: _a(T).amax(()),
    "amin_negative_dim": lambda T: _a(T).amin(-1),
    "amin_list": lambda T: T.amin(_a(T), [1]),
    "amax_0d": lambda T: _a(T)[0, 0].amax(0),
    "max_all": lambda T: _a(T).max(),
    "max_dim": lambda T: _a(T).max(-1),
    "max_0d_backward": lambda T: _grad(T, lambda x: x.max(0)[0], _a(T)[0, 0]),
    "min_0d_backward_negative_dim": lambda T: _grad(T, lambda x: x.min(-1)[0], _a(T)[0, 0]),
    "logsumexp_dim": lambda T: _a(T).logsumexp(1),
    "logsumexp_negative_dims_keepdim": lambda T: _a(T).logsumexp((0, -1), keepdim=True),
    "logsumexp_list": lambda T: T.logsumexp(_a(T), [-2]),
    "logsumexp_empty_keepdim": lambda T: _a(T).logsumexp((), keepdim=True),
    "logsumexp_0d": lambda T: _a(T)[0, 0].logsumexp(0),
}

VARIANCES = {
    "var_default": lambda T: _a(T).var(),
    "var_dim": lambda T: _a(T).var(1),
    "var_negative_dim": lambda T: _a(T).var(-1),
    "var_dims": lambda T: _a(T).var([1, 0]),
    "var_dim_none": lambda T: _a(T).var(None),
    "var_dim_none_keepdim": lambda T: _a(T).var(None, keepdim=True),
    "var_keepdim_only": lambda T: _a(T).var(keepdim=True),
    "var_empty_dims": lambda T: _a(T).var(()),
    "var_correction": lambda T: _a(T).var(1, correction=0),
    "var_correction_float": lambda T: _a(T).var(1, correction=1.5),
    "var_correction_bool": lambda T: _a(T).var(correction=True),
    "var_correction_none": lambda T: _a(T).var(1, correction=None),
    "var_correction_no_dim": lambda T: _a(T).var(correction=2),
    "var_unbiased": lambda T: _a(T).var(1, unbiased=False),
    "var_unbiased_no_dim": lambda T: _a(T).var(unbiased=True),
    "var_unbiased_positional": lambda T: _a(T).var(False),
    "var_dim_unbiased_keepdim": lambda T: T.var(_a(T), -1, False, True),
    "std_default": lambda T: _a(T).std(),
    "std_dim": lambda T: _a(T).std(-1),
    "std_dim_none": lambda T: _a(T).std(None),
    "std_correction": lambda T: _a(T).std((0, -1), correction=0.5),
    "std_unbiased_positional": lambda T: _a(T).std(True),
    "var_mean_default": lambda T: T.var_mean(_a(T)),
    "var_mean_dim": lambda T: T.var_mean(_a(T), -1),
    "var_mean_dim_none": lambda T: T.var_mean(_a(T), None),
    "var_mean_keepdim_only": lambda T: T.var_mean(_a(T), keepdim=True),
    "var_mean_correction": lambda T: T.var_mean(_a(T), (0, 1), correction=0),
    "var_mean_unbiased": lambda T: T.var_mean(_a(T), unbiased=False),
    "std_mean_default": lambda T: T.std_mean(_a(T)),
    "std_mean_dims_keepdim": lambda T: T.std_mean(_a(T), (0, -1), keepdim=True),
    "std_mean_unbiased_positional": lambda T: T.std_mean(_a(T), True),
    "std_mean_correction": lambda T: T.std_mean(_a(T), correction=0),
}

NORMS = {
    "norm_default": lambda T: _a(T).norm(),
    "norm_dim": lambda T: _a(T).norm(dim=-1),
    "norm_p_int": lambda T: _a(T).norm(p=1),
    "norm_p_float": lambda T: _a(T).norm(p=3.5),
    "norm_p_inf": lambda T: _a(T).norm(p=float("inf")),
    "norm_p_minus_inf": lambda T: _a(T).norm(p=-float("inf"), dim=0),
    "norm_p_zero": lambda T: _a(T).norm(p=0),
    "norm_fro_dim": lambda T: _a(T).norm("fro", dim=1),
    "norm_dims": lambda T: _a(T).norm(2, (0, -1), True),
    "norm_fro_dims": lambda T: _a(T).norm("fro", dim=(0, 1)),
    "torch_norm_fro": lambda T: T.norm(_a(T), "fro"),
    "vector_norm_default": lambda T: T.linalg.vector_norm(_a(T)),
    "vector_norm_ord": lambda T: T.linalg.vector_norm(_a(T), 3),
    "vector_norm_float_ord": lambda T: T.linalg.vector_norm(_a(T), 2.0, 1),
    "vector_norm_negative_dims": lambda T: T.linalg.vector_norm(_a(T), 2, (-1, 0)),
    "vector_norm_empty_dims": lambda T: T.linalg.vector_norm(_a(T), 2, []),
    "vector_norm_dtype": lambda T: T.linalg.vector_norm(_a(T, T.float32), 1, 1, True, dtype=T.float64),
    "pairwise_distance": lambda T: T.nn.functional.pairwise_distance(_a(T), _c(T)),
    "pairwise_distance_p_int_keepdim": lambda T: T.nn.functional.pairwise_distance(_a(T), _c(T), 3, keepdim=True),
    "pairwise_distance_inf": lambda T: T.nn.functional.pairwise_distance(_a(T), _c(T), float("inf")),
    "pairwise_distance_1d": lambda T: T.nn.functional.pairwise_distance(_v(T), _v(T, False) * 2),
    "pairwise_distance_0d": lambda T: T.nn.functional.pairwise_distance(_v(T)[0], _v(T, False)[1]),
    "cosine_similarity": lambda T: T.nn.functional.cosine_similarity(_a(T), _b(T), dim=-1),
}

SOFTMAX = {
    "softmax": lambda T: T.nn.functional.softmax(_a(T), 1),
    "softmax_negative_dim": lambda T: T.nn.functional.softmax(_a(T), -1),
    "softmax_dim_minus_2": lambda T: _a(T).softmax(-2),
    "softmax_dtype": lambda T: _a(T).softmax(1, dtype=T.float32),
    "softmax_float32_last": lambda T: T.softmax(_a(T, T.float32), -1),
    "softmax_implicit_dim": lambda T: T.nn.functional.softmax(_v(T), None),
    "softmax_0d": lambda T: T.nn.functional.softmax(_a(T)[0, 0], -1),
    "softmax_tensor_dim": lambda T: T.nn.functional.softmax(_a(T), T.tensor(-1)),
    "log_softmax": lambda T: T.nn.functional.log_softmax(_a(T), 1),
    "log_softmax_negative_dim": lambda T: T.log_softmax(_a(T), -1),
    "log_softmax_0d": lambda T: _a(T)[0, 0].log_softmax(0),
    "log_softmax_float32_over": lambda T: _a(T, T.float32).log_softmax(0),
    "special_softmax": lambda T: T.special.softmax(_a(T), -1),
    "softmax_backward": lambda T: _grad(T, lambda x: x.softmax(-1), _a(T)),
    "softmax_backward_dim": lambda T: _grad(T, lambda x: x.softmax(0), _a(T)),
    "log_softmax_backward": lambda T: _grad(T, lambda x: x.log_softmax(-1), _a(T)),
    "log_softmax_backward_float32": lambda T: _grad(T, lambda x: x.log_softmax(-2), _a(T, T.float32)),
}


def _nll(T, x=None, target=None, **kw):
    return T.nn.functional.nll_loss(_a(T) if x is None else x, _t(T) if target is None else target, **kw)


def _zeros_target(T, *shape):
    return T.zeros(*shape, dtype=T.int64)


NLL = {
    "nll_loss": lambda T: _nll(T),
    "nll_loss_sum": lambda T: _nll(T, reduction="sum"),
    "nll_loss_none": lambda T: _nll(T, reduction="none"),
    "nll_loss_ignore_index": lambda T: _nll(T, ignore_index=1),
    "nll_loss_negative_ignore_index": lambda T: _nll(T, ignore_index=-1),
    "nll_loss_weight": lambda T: _nll(T, _a(T).log_softmax(1), weight=_v(T, False)),
    "nll_loss_weight_none": lambda T: _nll(T, weight=_v(T, False), reduction="none"),
    "nll_loss_1d_weight": lambda T: _nll(T, _a(T)[0], _t(T)[0], weight=_v(T, False)),
    "nll_loss_1d_none": lambda T: _nll(T, _a(T)[0], _t(T)[0], reduction="none"),
    "nll_loss_2d": lambda T: _nll(T, _x4(T).log_softmax(1), _zeros_target(T, 1, 4, 4)),
    "nll_loss_2d_weight_sum": lambda T: _nll(T, _x4(T), _zeros_target(T, 1, 4, 4), reduction="sum",
                                             weight=T.tensor([1.0, 2.0], dtype=T.float64)),
    "nll_loss_3d_input": lambda T: _nll(T, _x4(T).reshape(1, 2, 16), _zeros_target(T, 1, 16), ignore_index=1),
    "cross_entropy": lambda T: T.nn.functional.cross_entropy(_a(T), _t(T)),
    "cross_entropy_weight_none": lambda T: T.nn.functional.cross_entropy(_a(T), _t(T), weight=_v(T, False),
                                                                         reduction="none"),
    "nll_loss_backward": lambda T: _grad(T, lambda x: _nll(T, x), _a(T)),
    "nll_loss_backward_sum_ignore": lambda T: _grad(T, lambda x: _nll(T, x, reduction="sum", ignore_index=0), _a(T)),
    "nll_loss_backward_weight": lambda T: _grad(T, lambda x: _nll(T, x, weight=_v(T, False)), _a(T)),
    "nll_loss_backward_none": lambda T: _grad(T, lambda x: _nll(T, x, reduction="none"), _a(T)),
    "nll_loss_2d_backward": lambda T: _grad(T, lambda x: _nll(T, x, _zeros_target(T, 1, 4, 4)), _x4(T)),
}


def _group_norm(T, x, groups, *args, **kw):
    return T.nn.functional.group_norm(x, groups, *args, **kw)


def _batch_norm(T, x, training, *params, dtype=None, **kw):
    n = x.shape[1]
    stats = (T.zeros(n, dtype=dtype or T.float64), T.ones(n, dtype=dtype or T.float64)) if params != (None,) else \
        (None, None)
    weights = params if params and params != (None,) else ()
    return T.nn.functional.batch_norm(x, *stats, *weights, training=training, **kw)


NORMALIZATIONS = {
    "group_norm": lambda T: _group_norm(T, _a(T).reshape(2, 3, 1), 3),
    "group_norm_one_group": lambda T: _group_norm(T, _a(T).reshape(2, 3, 1), 1),
    "group_norm_weight_bias": lambda T: _group_norm(T, _a(T).reshape(2, 3, 1), 3, _v(T), _v(T)),
    "group_norm_constant_weight": lambda T: _group_norm(T, _a(T).reshape(2, 3, 1), 1, _v(T, False), _v(T, False)),
    "group_norm_eps": lambda T: _group_norm(T, _a(T).reshape(2, 3, 1), 3, eps=1e-3),
    "group_norm_int_eps": lambda T: _group_norm(T, _a(T).reshape(2, 3, 1), 3, eps=1),
    "group_norm_4d": lambda T: _group_norm(T, _x4(T), 2),
    "group_norm_4d_float32": lambda T: _group_norm(T, _x4(T, T.float32), 1, T.ones(2, requires_grad=True)),
    "group_norm_2d": lambda T: _group_norm(T, _x4(T).reshape(2, 16), 2),
    "batch_norm_eval": lambda T: _batch_norm(T, _a(T), False),
    "batch_norm_eval_weight": lambda T: _batch_norm(T, _a(T), False, _v(T), _v(T)),
    "batch_norm_eval_4d_eps": lambda T: _batch_norm(T, _x4(T), False, eps=0.1),
    "batch_norm_eval_float32": lambda T: _batch_norm(T, _x4(T, T.float32), False, dtype=T.float32),
    "batch_norm_train": lambda T: _batch_norm(T, _a(T), True, _v(T), _v(T)),
    "batch_norm_train_no_stats": lambda T: _batch_norm(T, _x4(T, T.float32), True, None),
}

PADS = {
    "pad": lambda T: T.nn.functional.pad(_a(T), (1, 1)),
    "pad_negative": lambda T: T.nn.functional.pad(_a(T), (-1, 1)),
    "pad_two_dims_value": lambda T: T.nn.functional.pad(_a(T), [1, 2, 0, 1], value=2.0),
    "pad_empty": lambda T: T.nn.functional.pad(_a(T), ()),
    "constant_pad_nd": lambda T: T.constant_pad_nd(_x4(T), (1, 1, 1, 1)),
    "pad_backward": lambda T: _grad(T, lambda x: T.nn.functional.pad(x, (1, 1)), _a(T)),
    "reflect_negative": lambda T: T.nn.functional.pad(_a(T)[None], (-1, 1), mode="reflect"),
    "replicate_2d": lambda T: T.nn.functional.pad(_x4(T), (1, 0, 1, 0), mode="replicate"),
}

ALL = {**REDUCTIONS, **VARIANCES, **NORMS, **SOFTMAX, **NLL, **NORMALIZATIONS, **PADS}


@pytest.mark.parametrize("name", ALL)
def test_saves_and_shows_as_torch(name):
    assert_saves_as_torch(ALL[name], skip=STRIDES)


def test_a_wrong_expectation_fails():
    """The comparison can fail: torch's node shows the dim as given, -1 (as 2**64 - 1), not wrapped to 1."""
    name, packs, before, twice, after = observe(mt, lambda T: _a(T).sum(-1), skip=STRIDES)
    assert before["_saved_dim"] == (("int", 18446744073709551615),)
    wrapped = observe(mt, lambda T: _a(T).sum(1), skip=STRIDES)
    assert wrapped[2]["_saved_dim"] != before["_saved_dim"]
    with pytest.raises(AssertionError):
        assert_saves_as_torch(lambda T: _a(T).sum(-1) if T is torch else _a(T).sum(1), skip=STRIDES)


def test_nll_loss_packs_total_weight_after_weight():
    """torch's nll_loss_forward returns total_weight beside the loss: its pack comes after the weight's."""
    shapes = []

    def pack(t):
        shapes.append(tuple(t.shape))
        return t
    with mt.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        _nll(mt, weight=_v(mt, False))
    assert shapes == [(2, 3), (2,), (3,), ()]


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("op", ["sum", "mean"])
def test_dim_none_keeps_keepdim_and_gradient(op, keepdim):
    """x.sum(None, keepdim=True) keeps x's dims as size 1, as torch's; the gradient is x.sum()'s."""
    results = []
    for T in (torch, mt):
        x = _a(T)
        y = getattr(x, op)(None, keepdim=keepdim)
        y.sum().backward()
        results.append((tuple(y.shape), y.detach().numpy().tolist(), x.grad.numpy().tolist()))
    assert results[0] == results[1]


def test_batch_norm_eval_gradient_unchanged_by_its_empty_statistics():
    """In eval, backward reads the running statistics (the node's saved ones are empty, as torch's)."""
    grads = []
    for T in (torch, mt):
        x, w = _x4(T), T.tensor([0.5, 2.0], dtype=T.float64, requires_grad=True)
        mean, var = T.tensor([0.1, -0.2], dtype=T.float64), T.tensor([0.5, 1.5], dtype=T.float64)
        T.nn.functional.batch_norm(x, mean, var, w, None, training=False).pow(2).sum().backward()
        grads.append((x.grad.numpy(), w.grad.numpy()))
    np.testing.assert_allclose(grads[1][0], grads[0][0], rtol=1e-14)
    np.testing.assert_allclose(grads[1][1], grads[0][1], rtol=1e-14)


def test_group_norm_statistics_are_torchs():
    """result1 and result2 are each group's mean and 1 / sqrt(var + eps), torch's to the bit (float32)."""
    nodes = [_group_norm(T, _x4(T, T.float32), 2, eps=1e-3).grad_fn for T in (torch, mt)]
    for name in ("_saved_result1", "_saved_result2"):
        want, got = (getattr(n, name).detach().numpy() for n in nodes)
        assert got.dtype == want.dtype and np.array_equal(got, want)


def test_cross_map_lrn2d_packs_its_input_and_output():
    """torch's legacy CrossMapLRN2d Function saves its input and its output (the output's last bits may differ)."""
    packs = [[(kind, shape, dtype) for kind, shape, dtype, _ in observe(T, lambda T: T.nn.CrossMapLRN2d(2)(_x4(T)))[1]]
             for T in (torch, mt)]
    assert packs[0] == packs[1] == [("tensor", (1, 2, 4, 4), "float64")] * 2


def _scatter_gather_nodes(T):
    """what the scatter and gather nodes of max's third-order graph at a 0-d input show (their saved tensors by
    shape and value, and torch's own ScatterAddBackward0's)"""
    x = _a(T)[0, 0]
    g = x.max(-1)[0]
    for _ in range(3):
        g = T.autograd.grad(g.pow(3), x, create_graph=True)[0]
    found, todo, seen = [], [g.grad_fn], set()
    while todo:
        node = todo.pop(0)
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if node.name() in ("ScatterBackward0", "GatherBackward0", "ScatterAddBackward0"):
            names = sorted(n for n in dir(node) if n.startswith("_saved_") and n not in ("_saved_names",
                                                                                         "_saved_values"))
            found.append((node.name(), [(n, describe(getattr(node, n), typed=True)) for n in names]))
        todo.extend(n for n, _ in node.next_functions)
    return found


def test_max_at_a_0d_input_scatters_and_gathers_as_torch():
    """max's backward at a 0-d input is torch's zeros.scatter(dim, index, grad), whose own backward gathers (and
    that one's scatters and adds): each node keeps max's index (and gather its input), and shows max's dim."""
    assert _scatter_gather_nodes(mt) == _scatter_gather_nodes(torch)
