"""torch.distributions' taught classes against torch 2.13: log_prob and its gradients, moments,
entropy, shapes of draws, argument errors, and draws whose frequencies match the probabilities."""
import numpy as np
import pytest
import torch

import microtorch as mt
from microtorch.distributions import Bernoulli, Categorical, Multinomial, Normal
from microtorch.distributions.multinomial import Multinomial as MultinomialFromSubmodule

LIBS = {"mt": mt, "torch": torch}


def both(values, requires_grad=False, dtype="float64"):
    arr = np.asarray(values, dtype=dtype)
    return (mt.tensor(arr, requires_grad=requires_grad), torch.tensor(arr, requires_grad=requires_grad))


def close(a, b, tol=1e-10):
    np.testing.assert_allclose(np.asarray(a.detach().numpy()), b.detach().numpy(), rtol=tol, atol=tol)


CASES = [  # (distribution, parameters, values to score)
    ("Normal", lambda p: {"loc": p[0], "scale": p[1]}, ([0.5, -1.0, 2.0], [1.0, 0.3, 2.5]), [0.1, -1.2, 7.0]),
    ("Bernoulli", lambda p: {"probs": p[0]}, ([0.2, 0.7, 0.5],), [1.0, 0.0, 1.0]),
    ("Bernoulli", lambda p: {"logits": p[0]}, ([-2.0, 0.3, 4.0],), [0.0, 0.0, 1.0]),
    ("Categorical", lambda p: {"probs": p[0]}, ([[0.2, 0.3, 0.5], [1.0, 1.0, 2.0]],), [2.0, 0.0]),
    ("Categorical", lambda p: {"logits": p[0]}, ([[0.1, -2.0, 3.0], [0.0, 0.0, 0.0]],), [1.0, 2.0]),
]


@pytest.mark.parametrize("name, kwargs, params, value", CASES)
def test_log_prob_entropy_and_their_gradients_match_torch(name, kwargs, params, value):
    pairs = [both(p, requires_grad=True) for p in params]
    dists = [getattr(lib.distributions, name)(**kwargs([pair[i] for pair in pairs]))
             for i, lib in enumerate(LIBS.values())]
    vals = both(value)
    outs = [d.log_prob(v).sum() + d.entropy().sum() for d, v in zip(dists, vals)]
    close(outs[0], outs[1])
    for pair in pairs:
        grads = [lib_grad for lib_grad in (mt.autograd.grad(outs[0], pair[0], retain_graph=True)[0],
                                           torch.autograd.grad(outs[1], pair[1], retain_graph=True)[0])]
        close(*grads)


def test_multinomial_log_prob_matches_torch_including_a_zero_probability():
    for probs, counts in [([0.2, 0.3, 0.5], [2.0, 3.0, 5.0]), ([0.0, 0.4, 0.6], [0.0, 4.0, 6.0])]:
        p, c = both(probs, requires_grad=True), both(counts)
        lps = [MultinomialFromSubmodule(10, p[0]).log_prob(c[0]),
               torch.distributions.Multinomial(10, p[1]).log_prob(c[1])]
        close(*lps)
        close(mt.autograd.grad(lps[0], p[0])[0], torch.autograd.grad(lps[1], p[1])[0])


def test_moments_shapes_and_repr_match_torch():
    m = Multinomial(10, mt.tensor([0.2, 0.3, 0.5], dtype=mt.float64))
    tm = torch.distributions.Multinomial(10, torch.tensor([0.2, 0.3, 0.5], dtype=torch.float64))
    close(m.mean, tm.mean)
    close(m.variance, tm.variance)
    assert (tuple(m.batch_shape), tuple(m.event_shape)) == (tuple(tm.batch_shape), tuple(tm.event_shape))
    assert tuple(m.sample((2, 4)).shape) == tuple(tm.sample((2, 4)).shape)
    n, tn = Normal(mt.zeros(3), mt.ones(3)), torch.distributions.Normal(torch.zeros(3), torch.ones(3))
    assert tuple(n.rsample((5,)).shape) == tuple(tn.rsample((5,)).shape)
    c = Categorical(probs=mt.ones(2, 4))
    assert tuple(c.sample((3,)).shape) == (3, 2) and c.sample().dtype == mt.int64
    assert tuple(Bernoulli(mt.full((2,), 0.5)).sample((3,)).shape) == (3, 2)
    reprs = [(Normal(0.0, 1.0), torch.distributions.Normal(0.0, 1.0)),
             (Categorical(probs=mt.ones(3)), torch.distributions.Categorical(probs=torch.ones(3))),
             (Bernoulli(0.3), torch.distributions.Bernoulli(0.3)), (m, tm)]
    for ours, theirs in reprs:
        assert repr(ours).replace("microtorch", "torch") == repr(theirs)


def test_rsample_carries_gradients_to_the_parameters_and_sample_does_not():
    loc, scale = mt.tensor(1.5, requires_grad=True), mt.tensor(2.0, requires_grad=True)
    d = Normal(loc, scale)
    mt.manual_seed(0)
    x = d.rsample((1000,))
    x.sum().backward()
    assert loc.grad.item() == 1000.0
    np.testing.assert_allclose(scale.grad.item(), ((x.detach() - 1.5) / 2.0).sum().item(), rtol=1e-6)
    assert not d.sample((3,)).requires_grad
    with pytest.raises(NotImplementedError, match="rsample"):
        Categorical(probs=mt.ones(3)).rsample()


def test_draws_follow_the_probabilities():
    mt.manual_seed(0)
    probs = mt.tensor([0.1, 0.6, 0.3], dtype=mt.float64)
    counts = Multinomial(20000, probs).sample()
    assert counts.sum().item() == 20000
    np.testing.assert_allclose((counts / 20000).numpy(), probs.numpy(), atol=0.02)
    freq = np.bincount(Categorical(probs=probs).sample((20000,)).numpy(), minlength=3) / 20000
    np.testing.assert_allclose(freq, probs.numpy(), atol=0.02)
    np.testing.assert_allclose(Bernoulli(mt.tensor(0.25)).sample((20000,)).mean().item(), 0.25, atol=0.02)
    z = Normal(3.0, 2.0).sample((20000,))
    np.testing.assert_allclose([z.mean().item(), z.std().item()], [3.0, 2.0], atol=0.1)


ERRORS = [
    lambda lib: lib.distributions.Normal(0.0, -1.0),
    lambda lib: lib.distributions.Categorical(probs=lib.tensor([-1.0, 1.0])),
    lambda lib: lib.distributions.Categorical(),
    lambda lib: lib.distributions.Bernoulli(probs=0.5, logits=0.0),
    lambda lib: lib.distributions.Bernoulli(1.5),
    lambda lib: lib.distributions.Categorical(probs=lib.tensor([0.5, 0.5])).log_prob(lib.tensor(3)),
    lambda lib: lib.distributions.Bernoulli(0.5).log_prob(lib.tensor(0.5)),
    lambda lib: lib.distributions.Multinomial(4, lib.tensor([0.5, 0.5])).log_prob(lib.tensor([3.0, 2.0])),
]


@pytest.mark.parametrize("make", ERRORS)
def test_bad_arguments_raise_torchs_value_error(make):
    with pytest.raises(ValueError) as theirs:
        make(torch)
    with pytest.raises(ValueError) as ours:
        make(mt)
    first = str(theirs.value).split(" but found")[0].split("(")[0]
    assert str(ours.value).startswith(first)


def test_validation_can_be_turned_off():
    d = Normal(0.0, -1.0, validate_args=False)
    assert d.scale.item() == -1.0
