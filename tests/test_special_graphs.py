"""Under create_graph, torch.special's gradients record torch's nodes (their Scalar overloads included): the
visualizer draws a double backward of these as torch would."""
import pytest
import torch

import microtorch as mt

FUNCTIONS = ["erfcx", "entr", "log_ndtr", "ndtri", "ndtr", "i0e", "i1e", "erf", "erfc", "erfinv", "expit", "logit",
             "xlog1py", "log1p", "expm1", "exp2", "sinc", "digamma", "gammaln", "i0", "i1", "psi", "round"]


def node_names(T, name):
    x = T.tensor([0.3, 0.45], dtype=T.float64, requires_grad=True)
    fn = getattr(T.special, name)
    y = fn(x, 0.5) if name == "xlog1py" else fn(x)
    (g,) = T.autograd.grad(y.sum(), x, create_graph=True)
    names, stack, seen = [], [g.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.append(node.name())
        stack.extend(n for n, _ in node.next_functions)
    return sorted(names), g.tolist()


@pytest.mark.parametrize("name", FUNCTIONS)
def test_double_backward_graph_is_torchs(name):
    if not hasattr(torch.special, name):
        pytest.skip(f"torch 2.13 has no special.{name}")
    (got, got_values), (want, want_values) = node_names(mt, name), node_names(torch, name)
    assert got == want
    assert got_values == pytest.approx(want_values, rel=1e-12, abs=1e-15)


def test_digamma_and_trigamma_are_torchs_bits():
    """float64 digamma and polygamma(1, x) as torch's kernels compute them (reflection, recurrence, series with
    fused multiply-adds): bit for bit, poles, zeros and infinities included."""
    import numpy as np
    r = np.random.default_rng(0)
    x = np.concatenate([r.uniform(-5, 30, 3000), [0.5, 1, 2, 10, 1e-3, -0.5, 1e5, 1e18, 0.0, -0.0, -3.0, np.inf,
                                                  -np.inf, np.nan]])
    for n in (0, 1):
        want = torch.polygamma(n, torch.tensor(x)).numpy()
        got = mt.polygamma(n, mt.tensor(x)).numpy()
        assert np.array_equal(got, want, equal_nan=True), n
