"""MultivariateNormal against torch 2.13: fast.ai's meanshift draws, the draws of a seed bit for bit, log_prob,
entropy and the moments with their gradients, the three ways to give the matrix, batch broadcasting, expand,
repr, and torch's errors."""
import numpy as np
import pytest
import torch

import microtorch as mt
from microtorch.distributions.multivariate_normal import MultivariateNormal as MvnFromSubmodule

LIBS = (mt, torch)
COV = [[2.0, 0.5, 0.1], [0.5, 1.0, 0.2], [0.1, 0.2, 0.7]]
LOC = [1.0, -2.0, 0.5]


def both(values, dtype="float64", requires_grad=False):
    arr = np.asarray(values, dtype=dtype)
    return [lib.tensor(arr, requires_grad=requires_grad) for lib in LIBS]


def same(a, b):
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    assert a.dtype == getattr(mt, str(b.dtype).split(".")[1]) and tuple(a.shape) == tuple(b.shape)


def close(a, b, tol=1e-10):
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


def seeded(seed, make):
    """[make(mt), make(torch)], each run right after its library's manual_seed(seed)."""
    out = []
    for lib in LIBS:
        lib.manual_seed(seed)
        out.append(make(lib))
    return out


def matrix_of(kind, cov):
    """The covariance given as itself, as its inverse, or as its Cholesky factor (computed in float64 by torch)."""
    c = torch.tensor(cov, dtype=torch.float64)
    return {"covariance_matrix": c, "precision_matrix": torch.linalg.inv(c),
            "scale_tril": torch.linalg.cholesky(c)}[kind].numpy()


KINDS = ["covariance_matrix", "precision_matrix", "scale_tril"]


# ---- fast.ai part 2, meanshift: samples around centroids, concatenated ----------------------------------------------
def test_fastai_meanshift_draws_are_torchs():
    def draw(lib):
        centroids = lib.rand(6, 2) * 70 - 35
        mvn = lib.distributions.multivariate_normal.MultivariateNormal
        return lib.cat([mvn(c, lib.diag(lib.tensor([5.0, 5.0]))).sample((250,)) for c in centroids])
    ours, theirs = seeded(42, draw)
    same(ours, theirs)
    assert MvnFromSubmodule is mt.distributions.MultivariateNormal


# ---- draws -----------------------------------------------------------------------------------------------------------
SHAPES = [  # (loc's shape's batch, the matrix's batch, sample_shape)
    ((), (), ()), ((), (), (5,)), ((4,), (), (2, 3)), ((), (4,), (3,)), ((2, 1), (3,), (5,)), ((3,), (3,), (17,))]


@pytest.mark.parametrize("kind", ["covariance_matrix", "scale_tril"])
@pytest.mark.parametrize("loc_batch, mat_batch, sample_shape", SHAPES)
def test_samples_are_torchs_bit_for_bit(kind, loc_batch, mat_batch, sample_shape):
    # float64 and this covariance: microtorch's Cholesky (numpy's LAPACK) gives torch's factor to the bit here;
    # on other matrices, and most float32 ones, the two factors can differ in the last bit
    loc = np.broadcast_to(np.asarray(LOC), loc_batch + (3,)) + np.arange(np.prod(loc_batch) * 3).reshape(
        loc_batch + (3,))
    mat = np.broadcast_to(matrix_of(kind, COV), mat_batch + (3, 3)) * (1 + np.arange(np.prod(mat_batch))).reshape(
        mat_batch + (1, 1)) ** 0.5
    ours, theirs = seeded(7, lambda lib: lib.distributions.MultivariateNormal(
        lib.tensor(loc), **{kind: lib.tensor(mat)}).sample(sample_shape))
    same(ours, theirs)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_scale_tril_draws_torchs_numbers_in_both_dtypes(dtype):
    L = matrix_of("scale_tril", COV).astype(dtype)
    ours, theirs = seeded(3, lambda lib: lib.distributions.MultivariateNormal(
        lib.tensor(np.asarray(LOC, dtype)), scale_tril=lib.tensor(L)).rsample((40,)))
    same(ours, theirs)


def test_draws_of_a_precision_matrix_are_torchs_to_rounding():
    P = matrix_of("precision_matrix", COV)
    ours, theirs = seeded(5, lambda lib: lib.distributions.MultivariateNormal(
        lib.tensor(LOC, dtype=lib.float64), precision_matrix=lib.tensor(P)).sample((30,)))
    close(ours, theirs, 1e-12)


def test_draws_have_the_mean_and_covariance():
    mt.manual_seed(0)
    x = mt.distributions.MultivariateNormal(mt.tensor(LOC), mt.tensor(COV)).sample((20000,)).numpy()
    np.testing.assert_allclose(x.mean(0), LOC, atol=0.05)
    np.testing.assert_allclose(np.cov(x.T), COV, atol=0.05)


@pytest.mark.parametrize("kind", KINDS)
def test_rsample_gradients_reach_loc_and_the_matrix_as_torchs(kind):
    locs, mats = both(LOC, requires_grad=True), both(matrix_of(kind, COV), requires_grad=True)
    weights = np.arange(1.0, 1.0 + 4 * 3).reshape(4, 3)

    def draw(lib):
        i = LIBS.index(lib)
        return lib.distributions.MultivariateNormal(locs[i], **{kind: mats[i]}).rsample((4,))
    outs = seeded(11, draw)
    close(*outs, 1e-12)
    losses = [(o * lib.tensor(weights)).sum() for o, lib in zip(outs, LIBS)]
    for params in (locs, mats):
        close(*[lib.autograd.grad(loss, p, retain_graph=True)[0] for lib, loss, p in zip(LIBS, losses, params)])


def test_sample_has_no_gradient_and_rsample_has_one():
    loc = mt.zeros(2, requires_grad=True)
    d = mt.distributions.MultivariateNormal(loc, mt.eye(2))
    assert d.has_rsample and not d.sample((3,)).requires_grad and d.rsample((3,)).requires_grad


# ---- log_prob, entropy, moments --------------------------------------------------------------------------------------
BATCHES = [  # (loc, the covariance, values to score)
    (LOC, COV, [[0.0, 0.0, 0.0], [1.0, -2.0, 0.5], [3.0, 1.0, -4.0]]),
    ([[0.0, 1.0], [2.0, -1.0], [0.5, 0.5]], [[1.0, 0.3], [0.3, 2.0]], [[[0.1, 0.2]], [[1.0, -1.0]]]),
    ([0.0, 1.0], [[[1.0, 0.3], [0.3, 2.0]], [[4.0, -1.0], [-1.0, 1.0]]], [[0.1, 0.2], [1.0, -1.0]]),
    ([5.0], [[2.0]], [[4.0], [7.0]]),
]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("loc, cov, value", BATCHES)
def test_log_prob_and_entropy_and_their_gradients_are_torchs(kind, loc, cov, value):
    locs, mats, vals = both(loc, requires_grad=True), both(matrix_of(kind, cov), requires_grad=True), both(value)
    outs = []
    for i, lib in enumerate(LIBS):
        d = lib.distributions.MultivariateNormal(locs[i], **{kind: mats[i]})
        lp, h = d.log_prob(vals[i]), d.entropy()
        outs.append((lp, h, lp.sum() * 3 + h.sum()))
    close(outs[0][0], outs[1][0], 1e-12)
    close(outs[0][1], outs[1][1], 1e-12)
    for params in (locs, mats):
        grads = [lib.autograd.grad(o[2], p, retain_graph=True)[0] for lib, o, p in zip(LIBS, outs, params)]
        close(*grads, 1e-9)


def test_log_prob_in_float32_is_torchs_to_rounding():
    outs = []
    for lib in LIBS:
        d = lib.distributions.MultivariateNormal(lib.tensor(LOC), lib.tensor(COV))
        outs.append(d.log_prob(lib.tensor([[0.0, 0.0, 0.0], [2.0, 1.0, -1.0]])))
    assert outs[0].dtype == mt.float32
    close(*outs, 1e-5)


PROPERTIES = ["mean", "mode", "variance", "stddev", "covariance_matrix", "precision_matrix", "scale_tril"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("loc, cov", [(b[0], b[1]) for b in BATCHES])
def test_moments_matrices_and_shapes_are_torchs(kind, loc, cov):
    locs, mats = both(loc, requires_grad=True), both(matrix_of(kind, cov), requires_grad=True)
    ds = [lib.distributions.MultivariateNormal(locs[i], **{kind: mats[i]}) for i, lib in enumerate(LIBS)]
    assert (tuple(ds[0].batch_shape), tuple(ds[0].event_shape)) == (tuple(ds[1].batch_shape),
                                                                      tuple(ds[1].event_shape))
    for name in PROPERTIES:
        ours, theirs = getattr(ds[0], name), getattr(ds[1], name)
        close(ours, theirs, 1e-12)
        # gradients of each through to the covariance as it was given
        weights = np.arange(1.0, 1.0 + theirs.numel()).reshape(tuple(theirs.shape))
        grads = [lib.autograd.grad((v * lib.tensor(weights)).sum(), m[i], retain_graph=True,
                                   allow_unused=True)[0]
                 for i, (lib, v, m) in enumerate(zip(LIBS, (ours, theirs), [mats] * 2))]
        if grads[1] is None:
            assert grads[0] is None
        else:
            close(*grads, 1e-9)


def test_a_derived_matrix_read_first_under_no_grad_keeps_its_history():
    outs = []
    for lib in LIBS:
        d = lib.distributions.MultivariateNormal(lib.zeros(2), scale_tril=lib.eye(2).requires_grad_())
        with lib.no_grad():
            outs.append((d.covariance_matrix.requires_grad, d.precision_matrix.requires_grad))
    assert outs[0] == outs[1] == (True, True)


# ---- expand and repr -------------------------------------------------------------------------------------------------
def test_expand_is_torchs():
    def run(lib):
        d = lib.distributions.MultivariateNormal(lib.tensor(LOC, dtype=lib.float64), lib.tensor(COV, dtype=lib.float64))
        d.precision_matrix   # (derived before expand, so that expand carries it along)
        e = d.expand((4, 2))
        return e, e.sample((3,)), e.log_prob(lib.zeros(3, dtype=lib.float64)), e.entropy()
    ours, theirs = seeded(9, run)
    assert (tuple(ours[0].batch_shape), tuple(ours[0].event_shape)) == ((4, 2), (3,))
    assert repr(ours[0]).replace("microtorch", "torch") == repr(theirs[0])
    assert ours[0]._validate_args is True
    same(ours[1], theirs[1])
    close(ours[2], theirs[2], 1e-12)
    close(ours[3], theirs[3], 1e-12)
    for name in PROPERTIES:
        close(getattr(ours[0], name), getattr(theirs[0], name), 1e-12)


@pytest.mark.parametrize("make", [
    lambda lib: lib.distributions.MultivariateNormal(lib.zeros(3), lib.eye(3)),
    lambda lib: lib.distributions.MultivariateNormal(lib.zeros(2, 3), precision_matrix=lib.eye(3)),
    lambda lib: lib.distributions.MultivariateNormal(lib.zeros(1), scale_tril=lib.ones(1, 1)),
    lambda lib: lib.distributions.MultivariateNormal(lib.zeros(1, requires_grad=True), lib.ones(1, 1)),
])
def test_repr_is_torchs_before_and_after_a_matrix_is_derived(make):
    ours, theirs = make(mt), make(torch)
    assert repr(ours).replace("microtorch", "torch") == repr(theirs)
    ours.scale_tril, theirs.scale_tril
    ours.covariance_matrix, theirs.covariance_matrix
    assert repr(ours).replace("microtorch", "torch") == repr(theirs)


# ---- errors ----------------------------------------------------------------------------------------------------------
def mvn(lib, *args, **kw):
    return lib.distributions.MultivariateNormal(*args, **kw)


ERRORS = [
    lambda lib: mvn(lib, lib.tensor(0.0), lib.eye(1)),
    lambda lib: mvn(lib, lib.zeros(2)),
    lambda lib: mvn(lib, lib.zeros(2), lib.eye(2), scale_tril=lib.eye(2)),
    lambda lib: mvn(lib, lib.zeros(2), lib.eye(2), lib.eye(2), lib.eye(2)),
    lambda lib: mvn(lib, lib.zeros(2), lib.ones(2)),
    lambda lib: mvn(lib, lib.zeros(2), precision_matrix=lib.ones(2)),
    lambda lib: mvn(lib, lib.zeros(2), scale_tril=lib.ones(2)),
    lambda lib: mvn(lib, lib.zeros(2), lib.tensor([[1.0, 2.0], [2.0, 1.0]])),
    lambda lib: mvn(lib, lib.zeros(2), lib.tensor([[1.0, 0.5], [0.0, 1.0]])),
    lambda lib: mvn(lib, lib.zeros(2), lib.ones(2, 3)),
    lambda lib: mvn(lib, lib.tensor([0.0, float("nan")]), lib.eye(2)),
    lambda lib: mvn(lib, lib.zeros(2), precision_matrix=lib.tensor([[[1.0, 0.0], [0.0, 1.0]],
                                                                     [[1.0, 0.0], [0.0, -1.0]]])),
    lambda lib: mvn(lib, lib.zeros(2), scale_tril=lib.tensor([[1.0, 0.0], [1.0, -1.0]])),
    lambda lib: mvn(lib, lib.zeros(2), scale_tril=lib.ones(2, 2)),
    lambda lib: mvn(lib, lib.zeros(2), lib.eye(2)).log_prob(lib.ones(3)),
    lambda lib: mvn(lib, lib.zeros(2), lib.eye(2)).log_prob(lib.tensor(1.0)),
    lambda lib: mvn(lib, lib.zeros(3, 2), lib.eye(2)).log_prob(lib.ones(4, 2)),
    lambda lib: mvn(lib, lib.zeros(2), lib.eye(2)).log_prob(lib.tensor([1.0, float("nan")])),
    lambda lib: mvn(lib, lib.zeros(2), lib.eye(2)).log_prob([1.0, 2.0]),
]


@pytest.mark.parametrize("make", ERRORS)
def test_bad_arguments_raise_torchs_value_error_and_message(make):
    with pytest.raises(ValueError) as theirs:
        make(torch)
    with pytest.raises(ValueError) as ours:
        make(mt)
    assert str(ours.value).replace("microtorch", "torch") == str(theirs.value)


def test_without_validation_a_bad_covariance_reaches_cholesky_as_in_torch():
    errors = []
    for lib in LIBS:
        with pytest.raises(RuntimeError) as caught:
            mvn(lib, lib.zeros(2), lib.tensor([[1.0, 2.0], [2.0, 1.0]]), validate_args=False)
        errors.append(caught.value)
    assert type(errors[0]).__name__ == "LinAlgError" and str(errors[0]) == str(errors[1])
    d = mvn(mt, mt.zeros(2), scale_tril=mt.tensor([[1.0, 0.0], [1.0, -1.0]]), validate_args=False)
    assert d.log_prob(mt.tensor([1.0, float("nan")])).isnan().item()


def test_a_subclass_with_its_own_init_must_define_expand():
    class Mine(mt.distributions.MultivariateNormal):
        def __init__(self):
            super().__init__(mt.zeros(2), mt.eye(2))
    with pytest.raises(NotImplementedError, match="custom .expand"):
        Mine().expand((3,))
