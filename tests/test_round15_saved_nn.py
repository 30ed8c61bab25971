"""What pooling, embedding, modulo, addcmul/addcdiv, complex(), the margin losses, logsigmoid and rrelu nodes save,
beside torch 2.13: the input and indices of the max pools (`_saved_self`, `_saved_result1`), the input of the average
pools, the indices of embedding, embedding_bag's indices, offsets and its kernel's bookkeeping results, the parts of
complex() that need a gradient, logsigmoid's buffer and rrelu's noise, seen by pack hooks and freed by backward (a
second backward raises), and the operands fmod, remainder and addcmul keep only for a gradient that needs them (a
second backward through a node that kept nothing passes, as torch's)."""
import numpy as np
import pytest
import torch

import microtorch as mt
from tests.saved_compare import assert_saves_as_torch, describe, graph_of, observe, saved_names


def _a(T, dtype=None):
    return T.tensor([[0.5, 1.5, -2.0], [2.5, -1.0, 0.25]], dtype=dtype or T.float64, requires_grad=True)


def _b(T):
    return T.tensor([[1.5, -0.5, 3.0], [0.1, 0.2, 0.3]], dtype=T.float64, requires_grad=True)


def _c(T, dtype=None):
    return T.tensor([[1.5, -0.5, 3.0], [0.7, 0.8, -0.9]], dtype=dtype or T.float64)


def _x4(T, dtype=None):
    return T.tensor(np.sin(np.arange(32.0)).reshape(1, 2, 4, 4), dtype=dtype or T.float64, requires_grad=True)


def _x5(T):
    return T.tensor(np.sin(np.arange(128.0)).reshape(1, 2, 4, 4, 4), dtype=T.float64, requires_grad=True)


def _i(T, values, dtype=None):
    return T.tensor(values, dtype=dtype or T.int64)


POOLS = {
    "max_pool2d": lambda T: T.nn.functional.max_pool2d(_x4(T), 2),
    "max_pool2d_indices": lambda T: T.nn.functional.max_pool2d(_x4(T), 2, return_indices=True),
    "max_pool2d_padded": lambda T: T.nn.functional.max_pool2d(_x4(T, T.float32), 3, 1, 1, ceil_mode=True),
    "max_pool2d_empty_batch": lambda T: T.nn.functional.max_pool2d(_x4(T)[:0], 2),
    "max_pool1d": lambda T: T.nn.functional.max_pool1d(_a(T)[None], 2),
    "max_pool1d_indices": lambda T: T.nn.functional.max_pool1d(_a(T)[None], 2, return_indices=True),
    "max_pool3d": lambda T: T.nn.functional.max_pool3d(_x5(T), 2),
    "max_pool3d_dilated": lambda T: T.nn.functional.max_pool3d(_x5(T), 2, padding=1, dilation=2),
    "max_pool3d_unbatched": lambda T: T.nn.functional.max_pool3d(_x5(T)[0], 2, return_indices=True),
    "avg_pool2d": lambda T: T.nn.functional.avg_pool2d(_x4(T), 2),
    "avg_pool2d_no_pad_count": lambda T: T.nn.functional.avg_pool2d(_x4(T), 3, 2, 1, count_include_pad=False),
    "avg_pool2d_divisor": lambda T: T.nn.functional.avg_pool2d(_x4(T), 2, divisor_override=3),
    "avg_pool2d_empty_batch": lambda T: T.nn.functional.avg_pool2d(_x4(T)[:0], 2),
    "avg_pool1d": lambda T: T.nn.functional.avg_pool1d(_a(T)[None], 2),
    "avg_pool3d": lambda T: T.nn.functional.avg_pool3d(_x5(T), 2, padding=1, ceil_mode=True),
    "avg_pool3d_empty_batch": lambda T: T.nn.functional.avg_pool3d(_x5(T)[:0], 2),
    "adaptive_max_pool2d": lambda T: T.nn.functional.adaptive_max_pool2d(_x4(T), (3, 2)),
    "adaptive_max_pool2d_unbatched": lambda T: T.nn.functional.adaptive_max_pool2d(_x4(T)[0], 2, True),
    "adaptive_max_pool1d": lambda T: T.nn.functional.adaptive_max_pool1d(_a(T)[None], 2),
    "adaptive_max_pool3d": lambda T: T.nn.functional.adaptive_max_pool3d(_x5(T), 2),
    "fractional_max_pool2d": lambda T: T.nn.functional.fractional_max_pool2d(
        _x4(T), 2, output_size=2, _random_samples=T.tensor([[[0.3, 0.6], [0.1, 0.9]]], dtype=T.float64)),
    "max_unpool2d": lambda T: T.nn.functional.max_unpool2d(*T.nn.functional.max_pool2d(_x4(T), 2,
                                                                                        return_indices=True), 2),
    "max_unpool1d": lambda T: T.nn.functional.max_unpool1d(*T.nn.functional.max_pool1d(_a(T)[None], 2,
                                                                                        return_indices=True), 2),
}


def _bag(T, input, weight=None, offsets=None, **kw):
    return T.nn.functional.embedding_bag(input, _a(T) if weight is None else weight, offsets, **kw)


EMBEDDING = {
    "embedding": lambda T: T.nn.functional.embedding(_i(T, [1, 0]), _a(T)),
    "embedding_2d_padding": lambda T: T.nn.functional.embedding(_i(T, [[1, 0], [1, 1]]), _a(T), padding_idx=0),
    "embedding_0d": lambda T: T.nn.functional.embedding(_i(T, 1), _a(T)),
    "embedding_empty": lambda T: T.nn.functional.embedding(_i(T, []), _a(T)),
    "bag_mean": lambda T: _bag(T, _i(T, [0, 1, 1]), offsets=_i(T, [0, 1])),
    "bag_sum": lambda T: _bag(T, _i(T, [0, 1, 1]), offsets=_i(T, [0, 1]), mode="sum"),
    "bag_sum_float32": lambda T: _bag(T, _i(T, [0, 1, 1]), _a(T, T.float32), _i(T, [0, 1]), mode="sum"),
    "bag_sum_float32_padding": lambda T: _bag(T, _i(T, [0, 1, 1]), _a(T, T.float32), _i(T, [0, 1]), mode="sum",
                                              padding_idx=0),
    "bag_sum_float32_strided": lambda T: _bag(T, _i(T, [0, 1, 1]), _a(T, T.float32).t().contiguous().t(),
                                              _i(T, [0, 1]), mode="sum"),
    "bag_max": lambda T: _bag(T, _i(T, [0, 1, 1]), offsets=_i(T, [0, 1]), mode="max"),
    "bag_max_padding": lambda T: _bag(T, _i(T, [1, 0, 1]), offsets=_i(T, [0, 1]), mode="max", padding_idx=1),
    "bag_max_empty_bag": lambda T: _bag(T, _i(T, [0, 1, 1, 0]), offsets=_i(T, [0, 2, 2]), mode="max"),
    "bag_mean_padding": lambda T: _bag(T, _i(T, [0, 1, 1]), offsets=_i(T, [0, 1]), padding_idx=1),
    "bag_2d": lambda T: _bag(T, _i(T, [[0, 1], [1, 1]])),
    "bag_2d_int32_max": lambda T: _bag(T, _i(T, [[0, 1], [1, 1]], T.int32), mode="max"),
    "bag_int32_indices": lambda T: _bag(T, _i(T, [0, 1, 1], T.int32), offsets=_i(T, [0, 1])),
    "bag_int32_offsets": lambda T: _bag(T, _i(T, [0, 1, 1]), offsets=_i(T, [0, 1], T.int32)),
    "bag_last_offset": lambda T: _bag(T, _i(T, [0, 1, 1, 0]), offsets=_i(T, [0, 1, 3]), mode="sum",
                                      include_last_offset=True),
    "bag_weights": lambda T: _bag(T, _i(T, [0, 1, 1, 0]), offsets=_i(T, [0, 2]), mode="sum",
                                  per_sample_weights=_b(T)[0].repeat(2)[:4]),
    "bag_weights_only": lambda T: _bag(T, _i(T, [0, 1, 1, 0]), _a(T).detach(), _i(T, [0, 2]), mode="sum",
                                       per_sample_weights=_b(T)[0].repeat(2)[:4]),
    "bag_constant_weights": lambda T: _bag(T, _i(T, [0, 1, 1, 0]), offsets=_i(T, [0, 2]), mode="sum",
                                           per_sample_weights=_c(T)[0].repeat(2)[:4]),
    "bag_freq": lambda T: _bag(T, _i(T, [0, 1, 1, 0]), offsets=_i(T, [0, 2]), mode="sum", scale_grad_by_freq=True),
    "bag_no_indices": lambda T: _bag(T, _i(T, []), offsets=_i(T, [0, 0])),
}

POINTWISE = {
    "fmod_constant": lambda T: _a(T).fmod(_c(T)),
    "fmod_both": lambda T: _a(T).fmod(_b(T)),
    "fmod_other_only": lambda T: _c(T).fmod(_b(T)),
    "fmod_broadcast": lambda T: _a(T).fmod(_c(T)[0]),
    "fmod_0d": lambda T: _a(T)[0, 0].fmod(_c(T)),
    "fmod_number": lambda T: _a(T).fmod(2.0),
    "remainder_constant": lambda T: _a(T).remainder(_c(T)),
    "remainder_float32_other": lambda T: _a(T).remainder(_c(T, T.float32)),
    "remainder_both": lambda T: _a(T).remainder(_b(T)),
    "remainder_other_only": lambda T: _c(T).remainder(_b(T)),
    "remainder_fn": lambda T: T.remainder(_a(T), _c(T)),
    "addcmul_constants": lambda T: _a(T).addcmul(_c(T), _c(T)),
    "addcmul_constants_value": lambda T: T.addcmul(_a(T), _c(T)[0], _c(T), value=2),
    "addcmul_tensor1": lambda T: _a(T).addcmul(_b(T), _c(T)),
    "addcmul_tensor2": lambda T: _a(T).addcmul(_c(T), _b(T)),
    "addcmul_both": lambda T: _a(T).addcmul(_b(T), _b(T)),
    "addcmul_no_self": lambda T: _c(T).addcmul(_c(T), _b(T)),
    "addcdiv_constants": lambda T: _a(T).addcdiv(_c(T), _c(T), value=0.5),
    "addcdiv_tensor1": lambda T: _a(T).addcdiv(_b(T), _c(T)),
    "addcdiv_tensor2": lambda T: _a(T).addcdiv(_c(T), _b(T)),
}

LOSSES_AND_ACTIVATIONS = {
    "multi_margin": lambda T: T.nn.functional.multi_margin_loss(_a(T), _i(T, [1, 0])),
    "multi_margin_weight": lambda T: T.nn.functional.multi_margin_loss(
        _a(T), _i(T, [2, 0]), weight=T.tensor([1.0, 2.0, 3.0], dtype=T.float64)),
    "multi_margin_p2_none": lambda T: T.nn.functional.multi_margin_loss(_a(T), _i(T, [1, 0]), p=2, margin=2,
                                                                        reduction="none"),
    "multi_margin_1d_sum": lambda T: T.nn.functional.multi_margin_loss(_a(T)[0], _i(T, [1]), reduction="sum"),
    "multi_margin_empty": lambda T: T.nn.functional.multi_margin_loss(_a(T)[:0], _i(T, [])),
    "multilabel_margin": lambda T: T.nn.functional.multilabel_margin_loss(_a(T), _i(T, [[1, -1, 0], [2, 0, -1]])),
    "multilabel_margin_1d": lambda T: T.nn.functional.multilabel_margin_loss(_a(T)[0], _i(T, [1, -1, 0]),
                                                                             reduction="none"),
    "multilabel_soft_margin": lambda T: T.nn.functional.multilabel_soft_margin_loss(_a(T), _c(T).sign().clamp(0)),
    "logsigmoid": lambda T: T.nn.functional.logsigmoid(_a(T)),
    "logsigmoid_float32": lambda T: T.nn.functional.logsigmoid(_a(T, T.float32)),
    "logsigmoid_0d": lambda T: T.nn.functional.logsigmoid(_a(T)[0, 0]),
    "logsigmoid_empty": lambda T: T.nn.functional.logsigmoid(_a(T)[:0]),
    "view_as_real": lambda T: T.view_as_real(T.complex(_a(T), _c(T))),
}


@pytest.mark.parametrize("name", sorted(POOLS))
def test_pools_save_their_input_and_indices_as_torch(name):
    assert_saves_as_torch(POOLS[name])


@pytest.mark.parametrize("name", sorted(EMBEDDING))
def test_embeddings_save_their_indices_as_torch(name):
    assert_saves_as_torch(EMBEDDING[name])


@pytest.mark.parametrize("name", sorted(POINTWISE))
def test_modulo_and_addcmul_save_only_what_a_gradient_needs(name):
    assert_saves_as_torch(POINTWISE[name])


@pytest.mark.parametrize("name", sorted(LOSSES_AND_ACTIVATIONS))
def test_losses_and_activations_save_as_torch(name):
    assert_saves_as_torch(LOSSES_AND_ACTIVATIONS[name])


def _observe_complex(T, f, names=None):
    """observe() for a complex result: backward from |sum|"""
    packs = []
    with T.autograd.graph.saved_tensors_hooks(lambda t: packs.append(describe(t)) or t, lambda t: t):
        y = f(T)
    node = y.grad_fn
    names = saved_names(node) if names is None else names
    before = {n: describe(getattr(node, n)) for n in names}
    y.sum().abs().backward()
    with pytest.raises(RuntimeError, match="second time"):
        y.sum().abs().backward()
    after = {}
    for n in names:
        try:
            after[n] = describe(getattr(node, n))
        except RuntimeError as e:
            after[n] = "raises" if "freed" in str(e) else str(e)
    return node.name(), packs, before, after


COMPLEX = {
    "real_only": lambda T: T.complex(_a(T), _c(T)),
    "imag_only": lambda T: T.complex(_c(T), _a(T)),
    "both": lambda T: T.complex(_a(T), _b(T)),
    "broadcast": lambda T: T.complex(_a(T), _b(T)[0]),
    "0d": lambda T: T.complex(_a(T)[0, 0], _c(T)[0, 0]),
    "float32": lambda T: T.complex(_a(T, T.float32), _c(T, T.float32)),
    "conj": lambda T: T.complex(_a(T), _c(T)).conj(),
}


@pytest.mark.parametrize("name", sorted(COMPLEX))
def test_complex_saves_the_parts_that_need_a_gradient(name):
    theirs = _observe_complex(torch, COMPLEX[name])
    assert _observe_complex(mt, COMPLEX[name], names=list(theirs[2])) == theirs


def _shapes(observed):
    """observe() with the tensors' values left out (torch's rrelu noise is unfilled memory where it draws none)"""
    def strip(v):
        if isinstance(v, tuple) and v[:1] == ("tensor",):
            return v[:3]
        return tuple(strip(x) for x in v) if isinstance(v, (tuple, list)) else v
    name, packs, before, twice, after = observed
    return name, strip(packs), {k: strip(v) for k, v in before.items()}, twice, after


@pytest.mark.parametrize("training", [False, True])
@pytest.mark.parametrize("inplace", [False, True])
def test_rrelu_saves_its_noise(training, inplace):
    def f(T):
        x = _a(T) if not inplace else _a(T) * 1
        return T.nn.functional.rrelu(x, training=training, inplace=inplace)
    theirs = observe(torch, f)
    mine = observe(mt, f, names=list(theirs[2]))
    assert _shapes(mine) == _shapes(theirs)
    if not training:  # (the noise torch leaves unfilled: zeros here)
        assert describe(mt.nn.functional.rrelu(_a(mt)).grad_fn._saved_noise)[3] == [0.0] * 6


def test_embedding_double_backward_node_saves_the_indices():
    def f(T):
        a = _a(T)
        y = T.nn.functional.embedding(_i(T, [[1, 0], [1, 1]]), a, padding_idx=0)
        (g,) = T.autograd.grad((y * y).sum(), a, create_graph=True)
        return g
    assert_saves_as_torch(f)


@pytest.mark.parametrize("op", ["max_pool2d", "avg_pool2d", "logsigmoid", "complex"])
def test_an_input_changed_in_place_after_the_op_is_refused_as_torch(op):
    def f(T):
        x = _x4(T) * 1
        y = {"max_pool2d": lambda: T.nn.functional.max_pool2d(x, 2),
             "avg_pool2d": lambda: T.nn.functional.avg_pool2d(x, 2),
             "logsigmoid": lambda: T.nn.functional.logsigmoid(x),
             "complex": lambda: T.view_as_real(T.complex(x, x.detach()))}[op]()
        with T.no_grad():
            x.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()
    f(torch)
    f(mt)


def test_the_comparison_can_fail():
    """fmod keeps its operands only for the divisor's gradient: a node that kept them and one that did not differ
    in what observe sees, and a wrong expectation of either fails."""
    kept = observe(mt, POINTWISE["fmod_both"])
    not_kept = observe(mt, POINTWISE["fmod_constant"])
    assert kept[3] == "raises" and not_kept[3] == "ok"
    assert observe(torch, POINTWISE["fmod_both"])[1:] != not_kept[1:]
    with pytest.raises(AssertionError):
        assert_saves_as_torch(lambda T: POOLS["avg_pool2d"](T) if T is torch else POOLS["max_pool2d"](T))


# ---- follow-ups: the adaptive average pools keep their input, unbatched pools are one node, int32 indices stay ----
def _x3(T, dtype=None):
    return T.tensor(np.cos(np.arange(30.0)).reshape(2, 3, 5), dtype=dtype or T.float64, requires_grad=True)


ADAPTIVE_AND_UNBATCHED = {
    "adaptive_avg_pool2d": lambda T: T.nn.functional.adaptive_avg_pool2d(_x4(T), (3, 2)),
    "adaptive_avg_pool2d_unbatched": lambda T: T.nn.functional.adaptive_avg_pool2d(_x4(T)[0], 3),
    "adaptive_avg_pool2d_float32": lambda T: T.nn.functional.adaptive_avg_pool2d(_x4(T, T.float32), (2, 3)),
    "adaptive_avg_pool2d_none": lambda T: T.nn.functional.adaptive_avg_pool2d(_x4(T), (None, 3)),
    "adaptive_avg_pool2d_empty_batch": lambda T: T.nn.functional.adaptive_avg_pool2d(_x4(T)[:0], 3),
    "adaptive_avg_pool2d_to_one": lambda T: T.nn.functional.adaptive_avg_pool2d(_x4(T), 1),
    "adaptive_avg_pool1d": lambda T: T.nn.functional.adaptive_avg_pool1d(_x3(T), 3),
    "adaptive_avg_pool1d_unbatched": lambda T: T.nn.functional.adaptive_avg_pool1d(_x3(T)[0], 2),
    "adaptive_avg_pool3d": lambda T: T.nn.functional.adaptive_avg_pool3d(_x5(T), (3, 2, 1)),
    "adaptive_avg_pool3d_unbatched": lambda T: T.nn.functional.adaptive_avg_pool3d(_x5(T)[0], 3),
    "AdaptiveAvgPool2d_module": lambda T: T.nn.AdaptiveAvgPool2d((3, 3))(_x4(T)),
    "max_pool2d_unbatched": lambda T: T.nn.functional.max_pool2d(_x4(T)[0], 2),
    "max_pool2d_unbatched_indices": lambda T: T.nn.functional.max_pool2d(_x4(T)[0], 3, 1, 1, return_indices=True),
    "max_pool2d_unbatched_ceil": lambda T: T.nn.functional.max_pool2d(_x3(T), 2, ceil_mode=True, dilation=(1, 2)),
    "avg_pool2d_unbatched": lambda T: T.nn.functional.avg_pool2d(_x4(T)[0], 2),
    "avg_pool2d_unbatched_padded": lambda T: T.nn.functional.avg_pool2d(_x3(T, T.float32), 3, 2, 1, True, False),
    "avg_pool2d_unbatched_divisor": lambda T: T.nn.functional.avg_pool2d(_x3(T), 2, divisor_override=3),
    "max_pool1d_unbatched": lambda T: T.nn.functional.max_pool1d(_x3(T)[0], 2),
    "max_pool1d_unbatched_indices": lambda T: T.nn.functional.max_pool1d(_x3(T)[0], 2, 1, 1, return_indices=True),
    "avg_pool1d_unbatched": lambda T: T.nn.functional.avg_pool1d(_x3(T)[0], 2),
    "avg_pool1d": lambda T: T.nn.functional.avg_pool1d(_x3(T), 3, 2, 1, count_include_pad=False),
    "MaxPool2d_module_unbatched": lambda T: T.nn.MaxPool2d(2)(_x3(T)),
    "AvgPool1d_module_unbatched": lambda T: T.nn.AvgPool1d(2)(_x3(T)[0]),
}


@pytest.mark.parametrize("name", sorted(ADAPTIVE_AND_UNBATCHED))
def test_adaptive_and_unbatched_pools_save_as_torch(name):
    assert_saves_as_torch(ADAPTIVE_AND_UNBATCHED[name])


def _first(y):
    return y[0] if isinstance(y, tuple) else y


def _leaf(y):
    node = y.grad_fn
    while node.next_functions:
        node = next(m for m, _ in node.next_functions if m is not None)
    return node.variable


@pytest.mark.parametrize("name", sorted(ADAPTIVE_AND_UNBATCHED))
def test_pool_graphs_values_and_gradients_as_torch(name):
    """the same nodes with the same edges (walking grad_fn.next_functions), the same values and input gradients
    (the adaptive pools' sums in another order than torch's: close, not equal)"""
    f = ADAPTIVE_AND_UNBATCHED[name]
    ours, theirs = _first(f(mt)), _first(f(torch))
    assert graph_of(ours) == graph_of(theirs)
    tol = 1e-6 if ours.dtype == mt.float32 else 1e-12
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=tol, atol=tol)
    for T, y in ((mt, ours), (torch, theirs)):
        y.backward(T.arange(float(y.numel()), dtype=y.dtype).reshape(y.shape))
    np.testing.assert_allclose(_leaf(ours).grad.numpy(), _leaf(theirs).grad.numpy(), rtol=tol, atol=tol)


def test_unbatched_pool_graph_is_one_node_and_the_graph_comparison_can_fail():
    y = mt.nn.functional.max_pool2d(_x4(mt)[0], 2)
    assert graph_of(y)[0][0] == "MaxPool2DWithIndicesBackward0" and y.grad_fn._saved_self.shape == (2, 4, 4)
    batched_then_squeezed = mt.nn.functional.max_pool2d(_x4(mt)[:1], 2).squeeze(0)
    assert graph_of(batched_then_squeezed) != graph_of(torch.nn.functional.max_pool2d(_x4(torch)[0], 2))


INT32_EMBEDDING = {
    "embedding_int32": lambda T: T.nn.functional.embedding(_i(T, [1, 0], T.int32), _a(T)),
    "embedding_int32_2d_padding": lambda T: T.nn.functional.embedding(_i(T, [[1, 0], [1, 1]], T.int32), _a(T),
                                                                      padding_idx=-1),
    "embedding_int32_0d_freq": lambda T: T.nn.functional.embedding(_i(T, 1, T.int32), _a(T), scale_grad_by_freq=True),
    "embedding_int32_empty": lambda T: T.nn.functional.embedding(_i(T, [], T.int32), _a(T, T.float32)),
    "Embedding_module_int32": lambda T: _embedding_module(T)(_i(T, [[1, 0]], T.int32)),
}


def _embedding_module(T):
    m = T.nn.Embedding(2, 3)
    with T.no_grad():
        m.weight.copy_(_a(T, T.float32))
    return m


@pytest.mark.parametrize("name", sorted(INT32_EMBEDDING))
def test_int32_indices_are_saved_as_int32(name):
    assert_saves_as_torch(INT32_EMBEDDING[name])


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_embedding_double_backward_node_keeps_the_indices_dtype(dtype):
    def f(T):
        a = _a(T)
        y = T.nn.functional.embedding(_i(T, [[1, 0], [1, 1]], getattr(T, dtype)), a, scale_grad_by_freq=True)
        (g,) = T.autograd.grad((y * y).sum(), a, create_graph=True)
        return g
    assert_saves_as_torch(f)


@pytest.mark.parametrize("dtype", ["int16", "uint8", "int8", "bool", "float32"])
def test_embedding_refuses_indices_other_than_int32_and_int64_as_torch(dtype):
    for T in (torch, mt):
        with pytest.raises(RuntimeError, match="Long, Int"):
            T.nn.functional.embedding(T.tensor([1, 0]).to(getattr(T, dtype)), _a(T))


def _fn(T, name):
    F = T.nn.functional
    return {"max_pool2d": lambda a: F.max_pool2d(a, 2, 1, 1), "avg_pool2d": lambda a: F.avg_pool2d(a, 2, 1, 1),
            "max_pool1d": lambda a: F.max_pool1d(a[0], 2), "avg_pool1d": lambda a: F.avg_pool1d(a[0], 3, 1, 1),
            "adaptive_avg_pool2d": lambda a: F.adaptive_avg_pool2d(a, (2, 3)),
            "adaptive_avg_pool1d": lambda a: F.adaptive_avg_pool1d(a[0], 3)}[name]


@pytest.mark.parametrize("name", ["max_pool2d", "avg_pool2d", "max_pool1d", "avg_pool1d", "adaptive_avg_pool2d",
                                  "adaptive_avg_pool1d"])
def test_unbatched_and_adaptive_pools_under_vmap_jvp_and_double_backward_as_torch(name):
    def run(T):
        x = T.tensor(np.sin(np.arange(120.0)).reshape(4, 2, 3, 5), dtype=T.float64, requires_grad=True)
        f = _fn(T, name)
        y = f(x[0])
        (g,) = T.autograd.grad(y.pow(2).sum(), x, create_graph=True)
        return [T.func.vmap(f)(x), T.func.jvp(f, (x[0],), (x[1],))[1], T.func.vmap(T.func.grad(lambda a: f(a).pow(2)
                .sum()))(x), T.autograd.grad(g.pow(2).sum(), x)[0]]
    for ours, theirs in zip(run(mt), run(torch)):
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12, atol=1e-12)


def test_an_adaptive_pool_input_changed_in_place_is_refused_as_torch():
    for T in (torch, mt):
        x = _x4(T) * 1
        y = T.nn.functional.adaptive_avg_pool2d(x, 3)
        with T.no_grad():
            x.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


POOL_ERRORS = {  # torch's words, which microtorch's message holds (after the op's name)
    "avg_pool2d_empty_channels": (lambda T: T.nn.functional.avg_pool2d(_x4(T)[:, :0], 2), "Expected 3D or 4D"),
    "avg_pool2d_unbatched_empty": (lambda T: T.nn.functional.avg_pool2d(_x4(T)[0, :0], 2), "Expected 3D or 4D"),
    "avg_pool2d_empty_height": (lambda T: T.nn.functional.avg_pool2d(_x4(T)[:, :, :0], 2), "Expected 3D or 4D"),
    "avg_pool1d_empty_channels": (lambda T: T.nn.functional.avg_pool1d(_x3(T)[:, :0], 2), "Expected 3D or 4D"),
    "avg_pool1d_unbatched_empty": (lambda T: T.nn.functional.avg_pool1d(_x3(T)[0, :0], 2), "Expected 3D or 4D"),
    "avg_pool2d_negative_pad": (lambda T: T.nn.functional.avg_pool2d(_x4(T), 2, padding=-1), "pad must be non-n"),
    "avg_pool2d_negative_pad_first": (lambda T: T.nn.functional.avg_pool2d(_x4(T)[:, :0], 2, padding=-1),
                                      "pad must be non-n"),
    "max_pool2d_negative_pad": (lambda T: T.nn.functional.max_pool2d(_x4(T), 2, padding=-1), "pad must be non-n"),
    "max_pool3d_negative_pad": (lambda T: T.nn.functional.max_pool3d(_x5(T), 2, padding=-1), "pad must be non-n"),
    "avg_pool3d_negative_pad": (lambda T: T.nn.functional.avg_pool3d(_x5(T), 2, padding=-1), "pad must be non-n"),
    "avg_pool2d_divisor_zero": (lambda T: T.nn.functional.avg_pool2d(_x4(T), 2, divisor_override=0), "divisor must"),
    "avg_pool3d_divisor_zero": (lambda T: T.nn.functional.avg_pool3d(_x5(T), 2, divisor_override=0), "divisor must"),
    "avg_pool3d_empty_channels": (lambda T: T.nn.functional.avg_pool3d(_x5(T)[:, :0], 2), "non-batch dimensions"),
    "avg_pool3d_unbatched_empty": (lambda T: T.nn.functional.avg_pool3d(_x5(T)[0, :0], 5), "non-batch dimensions"),
    "avg_pool2d_int32": (lambda T: T.nn.functional.avg_pool2d(_x4(T).int(), 2), "not implemented for 'Int'"),
    "avg_pool2d_empty_batch_bool": (lambda T: T.nn.functional.avg_pool2d(_x4(T)[:0].bool(), 2), "for 'Bool'"),
    "avg_pool1d_uint8": (lambda T: T.nn.functional.avg_pool1d(_x3(T).to(T.uint8), 2), "for 'Byte'"),
    "avg_pool2d_complex": (lambda T: T.nn.functional.avg_pool2d(_x4(T).to(T.complex64), 2), "for 'ComplexFloat'"),
    "avg_pool3d_half": (lambda T: T.nn.functional.avg_pool3d(_x5(T).half(), 2), "for 'Half'"),
    "avg_pool3d_int16": (lambda T: T.nn.functional.avg_pool3d(_x5(T).short(), 2), "for 'Short'"),
}


@pytest.mark.parametrize("name", sorted(POOL_ERRORS))
def test_pool_arguments_refused_as_torch(name):
    f, words = POOL_ERRORS[name]
    kinds = []
    for T in (torch, mt):
        with pytest.raises((RuntimeError, NotImplementedError), match=words) as info:
            f(T)
        kinds.append(info.type)
    assert kinds[0] is kinds[1]


@pytest.mark.parametrize("f", [lambda T: T.nn.functional.avg_pool2d(_x4(T).long(), 2),
                               lambda T: T.nn.functional.avg_pool3d(_x5(T).detach().long(), 2),
                               lambda T: T.nn.functional.avg_pool2d(_x4(T).half(), 2),
                               lambda T: T.nn.functional.avg_pool2d(_x4(T)[:0], 2)])
def test_pool_arguments_torch_accepts_still_work(f):
    ours, theirs = f(mt), f(torch)
    assert tuple(ours.shape) == tuple(theirs.shape) and str(ours.dtype)[-5:] == str(theirs.dtype)[-5:]
    np.testing.assert_allclose(ours.detach().float().numpy(), theirs.detach().float().numpy(), rtol=1e-3, atol=1e-3)
