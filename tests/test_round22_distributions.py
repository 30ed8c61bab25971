"""Uniform, Independent, MixtureSameFamily and kl_divergence beside torch 2.13: values, gradients, grad_fn names,
draws after the same seed, shapes, reprs and errors."""
import warnings

import numpy as np
import pytest
import torch

import microtorch as mt
from microtorch.distributions.mixture_same_family import MixtureSameFamily as MixtureFromSubmodule

LIBS = (mt, torch)


def param(lib, values, requires_grad=True, dtype="float64"):
    return lib.tensor(np.asarray(values, dtype=dtype), requires_grad=requires_grad)


def grad_fn_name(t):
    return None if t.grad_fn is None else type(t.grad_fn).__name__


def side_by_side(make, bitwise=True, grad_bitwise=False, tol=1e-12):
    """make(lib) -> (tensor, [parameters]) after manual_seed(0): the two results agree in value (bit for bit or
    within tol), shape, dtype and grad_fn name, and so do the gradients of their sum."""
    outs = []
    for lib in LIBS:
        lib.manual_seed(0)
        outs.append(make(lib))
    (ours, our_params), (theirs, their_params) = outs
    a, b = ours.detach().numpy(), theirs.detach().numpy()
    assert a.shape == b.shape and a.dtype == b.dtype
    if bitwise:
        np.testing.assert_array_equal(a, b)
    else:
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    assert grad_fn_name(ours) == grad_fn_name(theirs)
    if theirs.requires_grad and their_params:
        g_ours = mt.autograd.grad(ours.sum(), our_params, allow_unused=True)
        g_theirs = torch.autograd.grad(theirs.sum(), their_params, allow_unused=True)
        for x, y in zip(g_ours, g_theirs):
            assert (x is None) == (y is None)
            if y is not None:
                if grad_bitwise:
                    np.testing.assert_array_equal(x.numpy(), y.numpy())
                else:
                    np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-10, atol=1e-12)
    return ours, theirs


def same_message(make, error):
    """make(lib) raises `error` in both libraries, with the same text (microtorch's names read as torch's)."""
    with pytest.raises(error) as theirs:
        make(torch)
    with pytest.raises(error) as ours:
        make(mt)
    assert str(ours.value).replace("microtorch", "torch") == str(theirs.value)


# ---- Uniform --------------------------------------------------------------------------------------------------
def uniform(lib, validate_args=None):
    low, high = param(lib, [0.0, 1.0, -2.0]), param(lib, [1.0, 3.0, 0.5])
    return lib.distributions.Uniform(low, high, validate_args=validate_args), [low, high]


@pytest.mark.parametrize("name", ["mean", "mode", "stddev", "variance"])
def test_uniform_moments_are_torchs_bit_for_bit(name):
    side_by_side(lambda lib: (getattr(uniform(lib)[0], name), uniform(lib)[1]), grad_bitwise=True)


@pytest.mark.parametrize("method, value", [("log_prob", [0.5, 2.0, 0.0]), ("cdf", [0.5, 2.0, -1.0]),
                                           ("icdf", [0.5, 0.25, 1.0]), ("entropy", None)])
def test_uniform_methods_and_their_gradients_match_torch(method, value):
    def make(lib):
        d, params = uniform(lib)
        args = () if value is None else (lib.tensor(np.asarray(value)),)
        return getattr(d, method)(*args), params
    side_by_side(make, grad_bitwise=True)


def test_uniform_log_prob_outside_is_minus_infinity_without_validation():
    ours, _ = side_by_side(lambda lib: (uniform(lib, validate_args=False)[0].log_prob(
        lib.tensor(np.array([1.0, 4.0, -3.0]))), uniform(lib)[1]))
    assert np.isneginf(ours.detach().numpy()).tolist() == [True, True, True]   # (high itself is outside)
    side_by_side(lambda lib: (uniform(lib, validate_args=False)[0].cdf(lib.tensor(np.array([-1.0, 4.0, 9.0]))), []))


@pytest.mark.parametrize("shape", [(), (5,), (2, 4)])
def test_uniform_rsample_draws_torchs_numbers_with_gradients(shape):
    ours, _ = side_by_side(lambda lib: (uniform(lib)[0].rsample(shape), uniform(lib)[1]), grad_bitwise=True)
    assert tuple(ours.shape) == tuple(shape) + (3,)
    side_by_side(lambda lib: (lib.distributions.Uniform(-1.0, 2.0).sample(shape), []))   # (float32 numbers)


def test_uniform_shapes_and_reprs_match_torch():
    cases = [lambda lib: lib.distributions.Uniform(0.0, 1.0), lambda lib: lib.distributions.Uniform(0, 2),
             lambda lib: lib.distributions.Uniform(lib.tensor(0.0), 1.0),
             lambda lib: lib.distributions.Uniform(lib.zeros(3), 1.0),
             lambda lib: lib.distributions.Uniform(lib.tensor([0.5]), lib.ones(2, 1) * 3)]
    for make in cases:
        ours, theirs = make(mt), make(torch)
        assert repr(ours).replace("microtorch", "torch") == repr(theirs)
        assert tuple(ours.batch_shape) == tuple(theirs.batch_shape) and tuple(ours.event_shape) == ()
        assert ours.low.dtype.__repr__().replace("microtorch", "torch") == repr(theirs.low.dtype)
        assert ours.has_rsample is theirs.has_rsample is True
    big = [make(lib).expand((4, 3)) for make, lib in zip((cases[3], cases[3]), LIBS)]
    assert tuple(big[0].batch_shape) == tuple(big[1].batch_shape) == (4, 3)


UNIFORM_ERRORS = [
    lambda lib: lib.distributions.Uniform(1.0, 0.0),
    lambda lib: lib.distributions.Uniform(lib.tensor([0.0, 2.0]), lib.tensor([1.0, 1.0])),
    lambda lib: lib.distributions.Uniform(0.0, float("nan")),
    lambda lib: lib.distributions.Uniform(lib.tensor([0.0, 1.0]), 3.0).log_prob(lib.tensor([0.5, 4.0])),
    lambda lib: lib.distributions.Uniform(lib.tensor([0.0, 1.0]), 3.0).cdf(lib.tensor([-0.5, 2.0])),
    lambda lib: lib.distributions.Uniform(0.0, 1.0).log_prob(0.5),
    lambda lib: lib.distributions.Uniform(lib.zeros(3), 1.0).log_prob(lib.zeros(2)),
]


@pytest.mark.parametrize("make", UNIFORM_ERRORS)
def test_uniform_refuses_what_torch_refuses_in_torchs_words(make):
    same_message(make, ValueError)


# ---- Independent ----------------------------------------------------------------------------------------------
def independent(lib, ndims=1):
    loc, scale = param(lib, [[0.5, -1.0, 2.0], [0.0, 1.0, 0.3]]), param(lib, [[1.0, 0.3, 2.5], [0.7, 1.2, 2.0]])
    return lib.distributions.Independent(lib.distributions.Normal(loc, scale), ndims), [loc, scale]


@pytest.mark.parametrize("ndims", [0, 1, 2])
@pytest.mark.parametrize("method", ["log_prob", "entropy", "rsample", "mean", "variance", "stddev"])
def test_independent_sums_the_base_over_the_reinterpreted_dims_as_torch(method, ndims):
    def make(lib):
        d, params = independent(lib, ndims)
        if method == "log_prob":
            return d.log_prob(lib.tensor(np.array([[0.1, -1.2, 7.0], [1.0, 2.0, 3.0]]))), params
        found = getattr(d, method)
        return (found() if callable(found) else found), params
    side_by_side(make, grad_bitwise=True)


def test_independent_shapes_flags_and_repr_match_torch():
    for ndims in (0, 1, 2):
        ours, theirs = independent(mt, ndims)[0], independent(torch, ndims)[0]
        assert (tuple(ours.batch_shape), tuple(ours.event_shape)) == (tuple(theirs.batch_shape),
                                                                      tuple(theirs.event_shape))
        assert repr(ours).replace("microtorch", "torch") == repr(theirs)
        assert tuple(ours.sample((4,)).shape) == tuple(theirs.sample((4,)).shape)
    flags = [lib.distributions.Independent(lib.distributions.Bernoulli(lib.full((3,), 0.5)), 1).has_rsample
             for lib in LIBS]
    assert flags == [False, False] and independent(mt)[0].has_rsample is True
    mvn = [lib.distributions.Independent(lib.distributions.MultivariateNormal(lib.zeros(4, 2), lib.eye(2)), 1)
           for lib in LIBS]
    assert tuple(mvn[0].event_shape) == tuple(mvn[1].event_shape) == (4, 2)
    side_by_side(lambda lib: (lib.distributions.Independent(lib.distributions.MultivariateNormal(
        lib.zeros(4, 2), lib.eye(2)), 1).log_prob(lib.ones(4, 2)), []))


def test_independent_and_uniform_expand_as_torch():
    def make(lib):
        base = lib.distributions.MultivariateNormal(lib.zeros(3, 2), lib.eye(2))
        return lib.distributions.Independent(base, 1).expand((4,))
    ours, theirs = make(mt), make(torch)
    assert repr(ours).replace("microtorch", "torch") == repr(theirs)
    assert (tuple(ours.batch_shape), tuple(ours.event_shape)) == ((4,), (3, 2))
    side_by_side(lambda lib: (make(lib).log_prob(lib.ones(4, 3, 2)), []))
    side_by_side(lambda lib: (lib.distributions.Uniform(lib.zeros(3), 2.0).expand((2, 3)).rsample((5,)), []))


def test_independent_refuses_too_many_dims_in_torchs_words():
    same_message(lambda lib: lib.distributions.Independent(lib.distributions.Normal(0.0, 1.0), 1), ValueError)
    same_message(lambda lib: independent(lib, 2)[0].log_prob(lib.zeros(2, 4, dtype=lib.float64)), ValueError)


# ---- MixtureSameFamily ----------------------------------------------------------------------------------------
def notebook_mixture(lib):
    """The normalizing-flows clustering notebook's two-Gaussian mixture (float32, as there)."""
    D = lib.distributions
    means = lib.tensor([[-1.0, 0.5], [1.0, -0.5]], requires_grad=True)
    return D.MixtureSameFamily(D.Categorical(lib.ones(2)), D.MultivariateNormal(means, 0.05 * lib.eye(2))), [means]


def test_the_notebooks_mixture_scores_and_draws_as_torch():
    x = np.array([[-1.0, 0.4], [0.9, -0.6], [0.0, 0.0]], dtype=np.float32)
    side_by_side(lambda lib: (notebook_mixture(lib)[0].log_prob(lib.tensor(x)), notebook_mixture(lib)[1]),
                 bitwise=False, tol=1e-5)
    ours, _ = side_by_side(lambda lib: (notebook_mixture(lib)[0].sample((200,)), []))
    assert tuple(ours.shape) == (200, 2)


def mixture(lib, comp):
    D = lib.distributions
    means, weights = param(lib, [[0.0, 0.0], [1.0, 1.5], [-2.0, 0.5]]), param(lib, [1.0, 2.0, 0.5])
    spread = param(lib, [[0.5, 1.0], [2.0, 0.3], [1.0, 1.0]])
    components = {"mvn": lambda: D.MultivariateNormal(means, scale_tril=lib.eye(2, dtype=lib.float64) * 0.7),
                  "independent": lambda: D.Independent(D.Normal(means, spread), 1),
                  "normal": lambda: D.Normal(means[:, 0], spread[:, 1]),
                  "uniform": lambda: D.Uniform(means[:, 0] - spread[:, 0], means[:, 1] + 2)}
    return D.MixtureSameFamily(D.Categorical(weights), components[comp]()), [means, weights, spread]


POINTS = {"mvn": [[0.1, 0.2], [1.0, 1.0], [3.0, -1.0]], "independent": [[0.1, 0.2], [1.0, 1.0], [3.0, -1.0]],
          "normal": [0.1, 1.0, -1.5], "uniform": [0.1, 1.0, -0.5]}


@pytest.mark.parametrize("comp", list(POINTS))
@pytest.mark.parametrize("method", ["log_prob", "mean", "variance", "sample", "cdf"])
def test_mixture_methods_match_torch(comp, method):
    if method == "cdf" and comp in ("mvn", "independent"):   # (no cdf in either library)
        with pytest.raises(NotImplementedError):
            mixture(torch, comp)[0].cdf(torch.zeros(2))
        with pytest.raises(NotImplementedError):
            mixture(mt, comp)[0].cdf(mt.zeros(2))
        return

    def make(lib):
        d, params = mixture(lib, comp)
        if method in ("log_prob", "cdf"):
            return getattr(d, method)(lib.tensor(np.asarray(POINTS[comp]))), params
        return (d.sample((6,)) if method == "sample" else getattr(d, method)), params
    side_by_side(make, bitwise=comp != "mvn", tol=1e-12)


def test_a_batch_of_mixtures_has_torchs_shapes_values_and_draws():
    def make(lib):
        D, rng = lib.distributions, np.random.default_rng(0)
        weights = param(lib, rng.random((3, 5)))
        loc, scale = param(lib, rng.standard_normal((3, 5, 2))), param(lib, rng.random((3, 5, 2)) + 0.1)
        components = D.Independent(D.Normal(loc, scale), 1)
        return D.MixtureSameFamily(D.Categorical(weights), components), [weights, loc, scale]
    x = np.random.default_rng(1).standard_normal((4, 3, 2))
    ours, theirs = make(mt)[0], make(torch)[0]
    assert (tuple(ours.batch_shape), tuple(ours.event_shape)) == ((3,), (2,)) == (tuple(theirs.batch_shape),
                                                                                 tuple(theirs.event_shape))
    side_by_side(lambda lib: (make(lib)[0].log_prob(lib.tensor(x)), make(lib)[1]))
    side_by_side(lambda lib: (make(lib)[0].sample((4,)), []))
    side_by_side(lambda lib: (make(lib)[0].variance, make(lib)[1]))


def test_mixture_reprs_shapes_and_flags_match_torch():
    for comp in POINTS:
        ours, theirs = mixture(mt, comp)[0], mixture(torch, comp)[0]
        assert repr(ours).replace("microtorch", "torch") == repr(theirs)
        assert (tuple(ours.batch_shape), tuple(ours.event_shape)) == (tuple(theirs.batch_shape),
                                                                      tuple(theirs.event_shape))
        assert ours.has_rsample is theirs.has_rsample is False
        assert ours.mixture_distribution.probs.shape == tuple(theirs.mixture_distribution.probs.shape)
    assert type(notebook_mixture(mt)[0]) is MixtureFromSubmodule
    # a mixture given logits derives no probs until something reads them (the repr shows what is there)
    given_logits = [lib.distributions.MixtureSameFamily(lib.distributions.Categorical(logits=lib.zeros(2)),
                                                        lib.distributions.Normal(lib.zeros(2), 1.0)) for lib in LIBS]
    assert repr(given_logits[0]).replace("microtorch", "torch") == repr(given_logits[1])
    assert [m.mean.item() for m in given_logits] == [0.0, 0.0]
    assert repr(given_logits[0]).replace("microtorch", "torch") == repr(given_logits[1])


def test_mixture_without_validation_scores_any_value_as_torch():
    def make(lib):
        D = lib.distributions
        # (float64: torch's float32 log is not always correctly rounded, numpy's is, so float32 may differ in a bit)
        high = lib.tensor([1.0, 2.0], dtype=lib.float64)
        m = D.MixtureSameFamily(D.Categorical(lib.ones(2, dtype=lib.float64)),
                                D.Uniform(lib.zeros(2, dtype=lib.float64), high, validate_args=False),
                                validate_args=False)
        return m.log_prob(lib.tensor([0.5, 1.5, 3.0], dtype=lib.float64)), []
    ours, _ = side_by_side(make)
    assert np.isneginf(ours.numpy()).tolist() == [False, False, True]


MIXTURE_ERRORS = [
    lambda lib: lib.distributions.MixtureSameFamily(lib.distributions.Normal(0.0, 1.0),
                                                    lib.distributions.Normal(lib.zeros(2), 1.0)),
    lambda lib: lib.distributions.MixtureSameFamily(lib.distributions.Categorical(lib.ones(2)), 3),
    lambda lib: lib.distributions.MixtureSameFamily(lib.distributions.Categorical(lib.ones(3, 2)),
                                                    lib.distributions.Normal(lib.zeros(4, 2), 1.0)),
    lambda lib: lib.distributions.MixtureSameFamily(lib.distributions.Categorical(lib.ones(3)),
                                                    lib.distributions.Normal(lib.zeros(2), 1.0)),
    lambda lib: notebook_mixture(lib)[0].log_prob(lib.tensor([[float("nan"), 0.0]])),
    lambda lib: notebook_mixture(lib)[0].log_prob(lib.zeros(3)),
    lambda lib: notebook_mixture(lib)[0].log_prob(lib.zeros(3, 2).tolist()),
    lambda lib: lib.distributions.MixtureSameFamily(lib.distributions.Categorical(lib.ones(2)),
                                                    lib.distributions.Uniform(lib.zeros(2), lib.tensor([1.0, 2.0]))
                                                    ).log_prob(lib.tensor(1.5)),
]
# (a float64 tensor with a grad_fn is left out of the printed ones: "microtorch.float64" is longer than torch's
# name, so its repr wraps elsewhere)


@pytest.mark.parametrize("make", MIXTURE_ERRORS)
def test_mixture_refuses_what_torch_refuses_in_torchs_words(make):
    same_message(make, ValueError)


# ---- kl_divergence --------------------------------------------------------------------------------------------
def kl_pair(lib, kind):
    D = lib.distributions
    a, b = param(lib, [0.0, 1.0, -2.0]), param(lib, [1.0, 0.5, 2.0])
    c, d = param(lib, [0.3, 1.0, 0.0]), param(lib, [2.0, 0.5, 0.1])
    pairs = {
        "normal": lambda: (D.Normal(a, b), D.Normal(c, d), [a, b, c, d]),
        "uniform": lambda: (D.Uniform(a, a + b), D.Uniform(c - 1, c + d + 1), [a, b, c, d]),
        "uniform_outside": lambda: (D.Uniform(a, a + b), D.Uniform(c, c + d), [a, b, c, d]),
        "uniform_normal": lambda: (D.Uniform(a, a + b), D.Normal(c, d), [a, b, c, d]),
        "normal_uniform": lambda: (D.Normal(a, b), D.Uniform(c, c + d), [a, b, c, d]),
        "independent": lambda: (D.Independent(D.Normal(a, b), 1), D.Independent(D.Normal(c, d), 1), [a, b, c, d]),
    }
    p_probs, q_probs = param(lib, [0.2, 0.0, 1.0, 0.5, 0.3]), param(lib, [0.4, 0.3, 0.6, 0.0, 1.0])
    pairs["bernoulli"] = lambda: (D.Bernoulli(p_probs), D.Bernoulli(q_probs), [p_probs, q_probs])
    pairs["bernoulli_logits"] = lambda: (D.Bernoulli(logits=a), D.Bernoulli(logits=c), [a, c])
    cp, cq = param(lib, [[0.2, 0.3, 0.5], [0.0, 0.5, 0.5]]), param(lib, [[0.4, 0.3, 0.3], [0.5, 0.0, 0.5]])
    pairs["categorical"] = lambda: (D.Categorical(cp), D.Categorical(cq), [cp, cq])
    pairs["categorical_logits"] = lambda: (D.Categorical(logits=cp), D.Categorical(logits=a), [cp, a])
    lp, lq = param(lib, [[[1.0, 0.0], [0.3, 2.0]], [[0.5, 0.0], [-0.2, 1.0]]]), param(lib, [[2.0, 0.0], [0.1, 0.7]])
    mp, mq = param(lib, [[0.0, 1.0], [2.0, 3.0]]), param(lib, [0.5, -1.0])
    pairs["mvn"] = lambda: (D.MultivariateNormal(mp, scale_tril=lp), D.MultivariateNormal(mq, scale_tril=lq),
                            [lp, lq, mp, mq])
    cov = param(lib, [[2.0, 0.3], [0.3, 1.0]])
    pairs["mvn_covariance"] = lambda: (D.MultivariateNormal(mq, cov), D.MultivariateNormal(
        mq.detach() * 0, lib.eye(2, dtype=lib.float64)), [cov, mq])
    p, q, params = pairs[kind]()
    return D.kl_divergence(p, q), params


@pytest.mark.parametrize("kind", ["normal", "uniform", "uniform_outside", "uniform_normal", "normal_uniform",
                                  "independent", "bernoulli", "bernoulli_logits", "categorical",
                                  "categorical_logits", "mvn", "mvn_covariance"])
def test_kl_divergence_closed_forms_match_torch(kind):
    side_by_side(lambda lib: kl_pair(lib, kind), bitwise=not kind.startswith("mvn"))


def test_the_vaes_kl_term_matches_torch():
    def make(lib):
        D = lib.distributions
        mu, log_var = param(lib, [[0.3, -0.2], [1.0, 2.0]]), param(lib, [[0.1, -0.5], [0.0, 0.3]])
        q = D.Independent(D.Normal(mu, (0.5 * log_var).exp()), 1)
        p = D.Independent(D.Normal(lib.zeros_like(mu), lib.ones_like(log_var)), 1)
        return D.kl_divergence(q, p).mean(), [mu, log_var]
    side_by_side(make, grad_bitwise=True)
    assert mt.distributions.kl.kl_divergence is mt.distributions.kl_divergence
    assert mt.distributions.kl.register_kl is mt.distributions.register_kl
    assert mt.distributions.uniform.Uniform is mt.distributions.Uniform
    assert mt.distributions.independent.Independent is mt.distributions.Independent


KL_REFUSALS = [
    (lambda D, lib: D.kl_divergence(D.Normal(0.0, 1.0), D.Categorical(lib.ones(2))), NotImplementedError),
    (lambda D, lib: D.kl_divergence(D.Independent(D.Normal(lib.zeros(2), 1.0), 1),
                                    D.MultivariateNormal(lib.zeros(2), lib.eye(2))), NotImplementedError),
    (lambda D, lib: D.kl_divergence(D.Normal(0.0, 1.0), D.Bernoulli(0.5)), NotImplementedError),
    (lambda D, lib: D.kl_divergence(D.Bernoulli(0.5), D.Normal(0.0, 1.0)), NotImplementedError),
    (lambda D, lib: D.kl_divergence(D.Independent(D.Normal(lib.zeros(2, 2), 1.0), 1),
                                    D.Independent(D.Normal(lib.zeros(2, 2), 1.0), 2)), NotImplementedError),
    (lambda D, lib: D.kl_divergence(D.MultivariateNormal(lib.zeros(2), lib.eye(2)),
                                    D.MultivariateNormal(lib.zeros(3), lib.eye(3))), ValueError),
    (lambda D, lib: D.kl_divergence(D.MixtureSameFamily(D.Categorical(lib.ones(2)), D.Normal(lib.zeros(2), 1.0)),
                                    D.MixtureSameFamily(D.Categorical(lib.ones(2)), D.Normal(lib.zeros(2), 1.0))),
     NotImplementedError),
]


@pytest.mark.parametrize("make, error", KL_REFUSALS)
def test_kl_divergence_refuses_what_torch_refuses_in_torchs_words(make, error):
    same_message(lambda lib: make(lib.distributions, lib), error)


def test_register_kl_picks_the_most_specific_pair_and_warns_when_ambiguous_as_torch():
    seen = []
    for lib in LIBS:
        D = lib.distributions

        class Left(D.Normal):
            pass

        class Right(D.Normal):
            pass

        @D.register_kl(Left, D.Normal)
        def _left(p, q):
            return lib.tensor(1.0)

        @D.register_kl(D.Normal, Right)
        def _right(p, q):
            return lib.tensor(2.0)
        n = D.Normal(0.0, 1.0)
        plain = D.kl_divergence(Left(0.0, 1.0), n).item(), D.kl_divergence(n, Right(0.0, 2.0)).item()
        inherited = D.kl_divergence(Right(0.0, 1.0), Left(0.0, 2.0)).item()   # (Normal/Normal's formula)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            tie = D.kl_divergence(Left(0.0, 1.0), Right(0.0, 1.0)).item()
        first = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
        D.register_kl(Left, Right)(lambda p, q: lib.tensor(3.0))   # (a new pair replaces what was found before)
        broken = D.kl_divergence(Left(0.0, 1.0), Right(0.0, 1.0)).item()
        with pytest.raises(NotImplementedError) as cross:
            D.kl_divergence(Left(0.0, 1.0), D.Bernoulli(0.5))
        seen.append((plain, inherited, tie, first, broken, str(cross.value)))
    assert seen[0] == seen[1]
    assert seen[0][3] == ["Ambiguous kl_divergence(Left, Right). Please register_kl(Left, Right)"]
