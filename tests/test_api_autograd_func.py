"""The rest of torch.autograd's and torch.func's public API, against torch: gradient edges, version
bumps, mutation of saved tensors, the thread/layout switches, rearrange, debug_unwrap,
replace_all_batch_norm_modules_, functionalize."""
import numpy as np
import pytest
import torch

import microtorch as mt


def test_gradient_edges_as_torch():
    for lib in (torch, mt):
        g = lib.autograd.graph
        x = lib.ones(3, requires_grad=True)
        y = x * 2
        leaf, inner = g.get_gradient_edge(x), g.get_gradient_edge(y)
        assert isinstance(leaf, g.GradientEdge) and leaf.output_nr == 0
        assert leaf.node.name() == "torch::autograd::AccumulateGrad"
        assert inner.node is y.grad_fn and inner.node.name() == "MulBackward0"
        a, b = lib.ones(4, requires_grad=True).unbind()[2:]
        assert g.get_gradient_edge(b).output_nr == 3
        with pytest.raises(RuntimeError, match="does not require gradients"):
            g.get_gradient_edge(lib.ones(2))


def test_increment_version_as_torch():
    for lib in (torch, mt):
        x = lib.ones(3, requires_grad=True)
        y = x.clone()
        z = (y * y).sum()
        before = y._version
        lib.autograd.graph.increment_version(y)
        lib.autograd.graph.increment_version([y])
        assert y._version == before + 2
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.backward()


def test_allow_mutation_on_saved_tensors_as_torch():
    grads = []
    for lib in (torch, mt):
        with lib.autograd.graph.allow_mutation_on_saved_tensors():
            a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
            b = a.clone()
            out = (b * b).sum()
            b.mul_(10)  # would be an error outside the block
            out.backward()
        grads.append(a.grad.tolist())
    assert grads[0] == grads[1] == [2.0, 4.0, 6.0]


def test_switches_as_torch():
    for lib in (torch, mt):
        ag = lib.autograd
        with ag.set_multithreading_enabled(False):
            x = lib.ones(2, requires_grad=True)
            (x * 3).sum().backward()
        with ag.enforce_grad_layout_policy(False):
            (x * 3).sum().backward()
        assert x.grad.tolist() == [6.0, 6.0]
        ag.graph.set_warn_on_accumulate_grad_stream_mismatch(True)
        with pytest.raises(ValueError):
            with ag.graph.region_activation_memory_budget(2.0):
                pass


def test_nested_io_function_is_legacy_in_both():
    for lib in (torch, mt):
        class Double(lib.autograd.NestedIOFunction):
            def forward_extended(self, x):
                return x * 2
        with pytest.warns(DeprecationWarning) if lib is torch else _no_warning():
            f = Double()
        with pytest.raises(AttributeError):
            f(lib.ones(2, requires_grad=True))


class _no_warning:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


REARRANGE = [("b c h w -> b h w c", {}), ("b c (h w) -> b h w c", {"h": 2}), ("b c h w -> (b c) (h w)", {}),
             ("b ... -> ... b", {}), ("b c h w -> b (c h w)", {}), ("b c h w -> w h c b", {})]


@pytest.mark.parametrize("pattern, lengths", REARRANGE)
def test_rearrange_as_torch(pattern, lengths):
    data = np.arange(2 * 3 * 4 * 2, dtype=np.float64).reshape(2, 3, 4, 2)
    if "(h w) ->" in pattern:
        data = data.reshape(2, 3, 8)
    t = torch.func.rearrange(torch.tensor(data, requires_grad=True), pattern, **lengths)
    m = mt.func.rearrange(mt.tensor(data, requires_grad=True), pattern, **lengths)
    np.testing.assert_array_equal(m.detach().numpy(), t.detach().numpy())


def test_debug_unwrap_as_torch():
    for lib in (torch, mt):
        seen = []
        lib.func.vmap(lambda x: seen.append(tuple(lib.func.debug_unwrap(x).shape)) or x)(lib.ones(5, 3))
        plain = lib.ones(2)
        assert seen == [(5, 3)] and lib.func.debug_unwrap(plain) is plain


def test_replace_all_batch_norm_modules_as_torch():
    for lib in (torch, mt):
        net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4))
        assert lib.func.replace_all_batch_norm_modules_(net) is net
        bn = net[1]
        assert bn.running_mean is None and bn.running_var is None and not bn.track_running_stats
    x = np.random.default_rng(0).standard_normal((5, 3))
    tn, mn = torch.nn.BatchNorm1d(3).double(), mt.nn.BatchNorm1d(3).double()
    for lib, bn in ((torch, tn), (mt, mn)):
        lib.func.replace_all_batch_norm_modules_(bn)
        bn.eval()  # without running statistics it still normalizes with the batch's own
    np.testing.assert_allclose(mn(mt.tensor(x)).detach().numpy(), tn(torch.tensor(x)).detach().numpy(), atol=1e-6)


def test_functionalize_computes_as_the_function():
    def f(x):
        y = x.clone()
        y.add_(1)
        x.mul_(2)  # an input mutation is kept, as torch.func.functionalize promises
        return y * y
    for lib in (torch, mt):
        x = lib.tensor([1.0, 2.0])
        out = lib.func.functionalize(f)(x)
        assert out.tolist() == [4.0, 9.0] and x.tolist() == [2.0, 4.0]
