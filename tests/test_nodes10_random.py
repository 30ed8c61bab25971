"""Random draws beside torch 2.13: a meta tensor draws nothing (the generator's next draw is the one it would have
been), and a tensor that is not contiguous is filled as torch's kernels fill it, in the order of its memory (a
transpose or a permutation as it lies in memory, a strided slice in its own order), one value at a time."""
import numpy as np
import pytest
import torch

import microtorch as mt

META = {
    "rand_like": lambda L, m: L.rand_like(m),
    "randn_like": lambda L, m: L.randn_like(m),
    "randint_like": lambda L, m: L.randint_like(m, 10),
    "randint_like_low_high": lambda L, m: L.randint_like(m, 3, 10),
    "normal_of_a_meta_mean": lambda L, m: L.normal(m, 1.0),
    "normal_of_a_meta_std": lambda L, m: L.normal(0.5, m),
    "multinomial": lambda L, m: L.multinomial(L.ones(3, 4, device="meta"), 2),
    "multinomial_replacement": lambda L, m: L.multinomial(L.ones(4, device="meta"), 6, replacement=True),
    "bernoulli": lambda L, m: L.bernoulli(m),
    "dropout": lambda L, m: L.nn.functional.dropout(m, 0.5),
    "init_uniform": lambda L, m: L.nn.init.uniform_(m),
    "init_normal": lambda L, m: L.nn.init.normal_(m),
    "init_trunc_normal": lambda L, m: L.nn.init.trunc_normal_(m),
}


@pytest.mark.parametrize("name", list(META))
def test_a_meta_tensor_draws_nothing(name):
    out = []
    for lib in (mt, torch):
        lib.manual_seed(0)
        r = META[name](lib, lib.empty(3, 4, device="meta"))
        out.append((tuple(r.shape), str(r.device), str(r.dtype).split(".")[1], lib.rand(3).tolist()))
    assert out[0] == out[1]


def _layouts(lib):
    return {
        "transposed": lib.zeros(3, 4).t(),
        "permuted": lib.zeros(2, 3, 4).permute(2, 0, 1),
        "transposed_large": lib.zeros(8, 5).t(),  # (16 or more values: normal_'s block path is for contiguous ones)
        "sliced_with_a_step": lib.zeros(10)[::3],
        "columns": lib.zeros(4, 5)[:, 1:4],
        "transposed_slice": lib.zeros(6, 8)[::2, ::2].t(),
    }


FILLS = {
    "rand_like": lambda L, t: L.rand_like(t),
    "randn_like": lambda L, t: L.randn_like(t),
    "randint_like": lambda L, t: L.randint_like(t, 50),
    "randn_like_float64": lambda L, t: L.randn_like(t, dtype=L.float64),
    "init_uniform": lambda L, t: L.nn.init.uniform_(t, -1.0, 2.0),
    "init_normal": lambda L, t: L.nn.init.normal_(t, 0.5, 2.0),
    "init_trunc_normal": lambda L, t: L.nn.init.trunc_normal_(t),
    "init_trunc_normal_narrow": lambda L, t: L.nn.init.trunc_normal_(t, a=1.0, b=1.5),
    "init_kaiming_uniform": lambda L, t: L.nn.init.kaiming_uniform_(t) if t.ndim > 1 else L.nn.init.uniform_(t),
    "init_xavier_normal": lambda L, t: L.nn.init.xavier_normal_(t) if t.ndim > 1 else L.nn.init.normal_(t),
}


@pytest.mark.parametrize("fill", list(FILLS))
@pytest.mark.parametrize("layout", ["transposed", "permuted", "transposed_large", "sliced_with_a_step", "columns",
                                    "transposed_slice"])
def test_a_tensor_that_is_not_contiguous_is_filled_in_torchs_order(layout, fill):
    out = []
    for lib in (mt, torch):
        lib.manual_seed(0)
        r = FILLS[fill](lib, _layouts(lib)[layout])
        out.append((r.double().numpy().copy(), tuple(r.stride()), lib.rand(2).tolist()))
    np.testing.assert_allclose(out[0][0], out[1][0], rtol=2e-7, atol=1e-12)
    assert out[0][1:] == out[1][1:]


# the Tensor methods (t.uniform_(), t.normal_()...) draw in _tensor_methods._random_fill, through _random.drawn_for
@pytest.mark.parametrize("method", ["uniform_", "normal_", "exponential_", "random_"])
def test_the_tensor_methods_fill_in_torchs_order(method):
    out = []
    for lib in (mt, torch):
        lib.manual_seed(0)
        t = lib.zeros(3, 4).t()
        getattr(t, method)()
        out.append(t.double().numpy().copy())
    np.testing.assert_allclose(out[0], out[1], rtol=2e-7)


# ---- binomial with an infinite count ------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(8))
def test_binomials_sampler_of_an_infinite_count_draws_as_torchs(seed):
    # torch's BTRS in IEEE arithmetic: inf for a positive u, NaN for a negative one (and NaN, inf - inf, for p > 1/2),
    # after torch's number of draws. (A NaN count loops forever in torch's sampler; ops reach this sampler only for
    # the counts torch samples: see this round's report for _torch_creation.binomial.)
    from microtorch._random import _rng
    count, prob = [np.inf, np.inf, 5.0, np.inf, 40.0], [0.5, 0.7, 0.3, 0.01, 0.6]
    torch.manual_seed(seed)
    theirs = torch.binomial(torch.tensor(count, dtype=torch.float64), torch.tensor(prob, dtype=torch.float64))
    then = torch.rand(2).tolist()
    mt.manual_seed(seed)
    mine = _rng(None).torch_binomial(np.array(count), np.array(prob))
    np.testing.assert_array_equal(mine, theirs.numpy())
    assert mt.rand(2).tolist() == then


@pytest.mark.parametrize("count, prob", [([-np.inf, 5.0], [0.5, 0.5]), ([5.0, 5.0], [np.nan, 0.5]),
                                         ([5.0, 5.0], [np.inf, 0.5]), ([5.0, 5.0], [-0.1, 0.5]),
                                         ([-3.0, 5.0], [0.5, 0.5]), ([np.inf, np.inf], [0.0, 1.0])])
def test_binomial_of_the_counts_and_probabilities_torch_does_not_sample(count, prob):
    out = []
    for lib in (mt, torch):
        lib.manual_seed(0)
        r = lib.binomial(lib.tensor(count), lib.tensor(prob))
        out.append((r.tolist(), lib.rand(2).tolist()))
    assert str(out[0]) == str(out[1])


def test_binomial_of_an_infinite_count_as_torch():
    out = []
    for lib in (mt, torch):
        lib.manual_seed(0)
        out.append((lib.binomial(lib.tensor([np.inf, 5.0]), lib.tensor([0.5, 0.5])).tolist(), lib.rand(2).tolist()))
    assert str(out[0]) == str(out[1])
