"""A seed gives torch's random numbers: rand, randn, randint, randperm, uniform_, normal_, normal, the *_like forms,
Generator objects, the state functions and nn's initial weights, each compared with torch 2.13 bit for bit (float32
normals drawn 16 or more at a time too: tests/test_random_normal_bits.py has more of them)."""
import math

import numpy as np
import pytest
import torch

import microtorch as mt

SEEDS = [0, 7, 42, 123456789, 2 ** 40 + 5]

DRAWS = {
    "rand": lambda lib: lib.rand(5),
    "rand float64": lambda lib: lib.rand(2, 3, dtype=lib.float64),
    "rand complex": lambda lib: lib.view_as_real(lib.rand(3, dtype=lib.complex64)),
    "randn small": lambda lib: lib.randn(3, 4),
    "randn odd then even": lambda lib: lib.cat([lib.randn(3), lib.randn(2)]),
    "randn float64 blocks": lambda lib: lib.randn(40, dtype=lib.float64),
    "randn complex": lambda lib: lib.view_as_real(lib.randn(2, dtype=lib.complex128)),
    "randint": lambda lib: lib.randint(0, 10, (6,)),
    "randint wide": lambda lib: lib.randint(-5, 2 ** 40, (3,)),
    "randint high only": lambda lib: lib.randint(3, (4,)),
    "randperm": lambda lib: lib.randperm(12),
    "uniform_": lambda lib: lib.empty(2, 3).uniform_(-2, 5),
    "uniform_ float64": lambda lib: lib.empty(3, dtype=lib.float64).uniform_(),
    "normal_": lambda lib: lib.empty(5).normal_(2.0, 3.0),
    "normal numbers": lambda lib: lib.normal(2.0, 3.0, size=(4,)),
    "normal tensors": lambda lib: lib.normal(lib.zeros(3), lib.ones(3) * 2),
    "random_": lambda lib: lib.empty(4).random_(0, 100),
    "random_ int64": lambda lib: lib.empty(3, dtype=lib.int64).random_(10),
    "rand_like": lambda lib: lib.rand_like(lib.ones(2, 2)),
    "randn_like": lambda lib: lib.randn_like(lib.ones(3, dtype=lib.float64)),
    "Linear": lambda lib: lib.cat([p.detach().flatten() for p in lib.nn.Linear(4, 3).parameters()]),
    "Conv2d": lambda lib: lib.cat([p.detach().flatten() for p in lib.nn.Conv2d(2, 3, 2).parameters()]),
    "kaiming_normal_": lambda lib: lib.nn.init.kaiming_normal_(lib.empty(3, 4)),
    "xavier_uniform_": lambda lib: lib.nn.init.xavier_uniform_(lib.empty(3, 4)),
    "trunc_normal_": lambda lib: lib.nn.init.trunc_normal_(lib.empty(3, 4), std=0.02),
    "dropout": lambda lib: lib.nn.functional.dropout(lib.arange(1.0, 13.0).reshape(2, 3, 2), 0.4),
    "Dropout module": lambda lib: lib.nn.Dropout(0.25)(lib.arange(1.0, 13.0, dtype=lib.float64)),
    "dropout1d": lambda lib: lib.nn.functional.dropout1d(lib.arange(1.0, 13.0).reshape(2, 3, 2), 0.5),
    "alpha_dropout": lambda lib: lib.nn.functional.alpha_dropout(lib.arange(1.0, 13.0), 0.2, True),
    "bernoulli_": lambda lib: lib.empty(8).bernoulli_(0.3),
    "bernoulli float32": lambda lib: lib.bernoulli(lib.full((8,), 0.3)),
    "bernoulli float64": lambda lib: lib.bernoulli(lib.full((8,), 0.3, dtype=lib.float64)),
    "multinomial": lambda lib: lib.multinomial(lib.tensor([0.1, 0.2, 0.3, 0.4]), 3),
    "multinomial rows": lambda lib: lib.multinomial(lib.tensor([[1.0, 2.0, 3.0], [0.0, 5.0, 1.0]]), 2),
    "multinomial replacement": lambda lib: lib.multinomial(lib.tensor([[1.0, 2.0, 3.0], [0.0, 5.0, 1.0]],
                                                                      dtype=lib.float64), 4, True),
    "exponential_": lambda lib: lib.cat([lib.empty(5).exponential_(), lib.empty(4).exponential_(3.0)]),
    "exponential_ float64": lambda lib: lib.empty(5, dtype=lib.float64).exponential_(2.0),
    "cauchy_": lambda lib: lib.empty(4, dtype=lib.float64).cauchy_(1.0, 2.0),
    "geometric_": lambda lib: lib.empty(6).geometric_(0.3),
    "log_normal_": lambda lib: lib.empty(3, dtype=lib.float64).log_normal_(1.0, 0.5),
    "poisson": lambda lib: lib.poisson(lib.tensor([0.5, 3.0, 12.0, 50.0, 0.0, 7.5, 1000.0, 10.0], dtype=lib.float64)),
    "poisson float32": lambda lib: lib.poisson(lib.tensor([[2.0, 30.0], [0.1, 9.99]])),
    "binomial": lambda lib: lib.binomial(lib.tensor([10.0, 100.0, 1000.0, 5.0, 0.0, 50.0, 30.0, 20.0], dtype=lib.float64),
                                         lib.tensor([0.3, 0.2, 0.7, 0.9, 0.5, 0.5, 0.01, 1.0], dtype=lib.float64)),
    "binomial edges": lambda lib: lib.binomial(lib.tensor([5.0, 5.0, -3.0, 0.0, float("inf"), 5.0, 7.0]),
                                               lib.tensor([1.5, -0.5, 0.3, 0.5, 0.0, float("nan"), 0.4])),
    "binomial float32": lambda lib: lib.binomial(lib.tensor([10.0, 100.0, 40.0]), lib.tensor([0.3, 0.6, 0.95])),
    "Categorical": lambda lib: lib.distributions.Categorical(probs=lib.tensor([0.2, 0.5, 0.3])).sample((6,)),
    "Normal": lambda lib: lib.distributions.Normal(lib.zeros(3), lib.ones(3) * 2).sample(),
    "rrelu training": lambda lib: lib.nn.functional.rrelu(lib.tensor([[-1.0, 2.0, -3.0], [0.0, -0.5, 4.0]]),
                                                          training=True),
    "RReLU module": lambda lib: lib.nn.RReLU()(lib.tensor([-1.0, -2.0, 3.0], dtype=lib.float64)),
    "trunc_normal_ redrawn": lambda lib: lib.nn.init.trunc_normal_(lib.empty(10), mean=1.0, std=2.0, a=-1.0, b=3.0),
    "trunc_normal_ rejection": lambda lib: lib.nn.init.trunc_normal_(lib.empty(10), std=5.0, a=2.0, b=3.0),
    # float64 away from [0, 1) and N(0, 1): torch's kernels fuse `u * (high - low) + low` and `z * std + mean`
    "uniform_ float64 range": lambda lib: lib.empty(40, dtype=lib.float64).uniform_(-0.3, 0.9),
    "normal_ float64 few": lambda lib: lib.empty(7, dtype=lib.float64).normal_(1.3, 0.7),
    "normal_ float64 blocks": lambda lib: lib.empty(50, dtype=lib.float64).normal_(-2.0, 0.3),
    "normal numbers float64": lambda lib: lib.normal(0.5, 2.0, size=(20,), dtype=lib.float64),
    "Linear float64": lambda lib: lib.cat([p.detach().flatten() for p in lib.nn.Linear(5, 4, dtype=lib.float64)
                                           .parameters()]),
    "kaiming_normal_ float64": lambda lib: lib.nn.init.kaiming_normal_(lib.empty(20, 4, dtype=lib.float64)),
    "log_normal_ float64 many": lambda lib: lib.empty(20, dtype=lib.float64).log_normal_(0.3, 0.5),
}


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", DRAWS)
def test_a_seed_gives_torchs_numbers(name, seed):
    torch.manual_seed(seed)
    mt.manual_seed(seed)
    t, m = DRAWS[name](torch), DRAWS[name](mt)
    assert str(m.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_array_equal(m.numpy(), t.numpy())


@pytest.mark.parametrize("n", [16, 17, 37, 100])
def test_float32_normals_in_blocks_are_torchs_to_the_last_bits(n):
    for seed in SEEDS:
        torch.manual_seed(seed)
        mt.manual_seed(seed)
        t, m = torch.randn(n).numpy(), mt.randn(n).numpy()
        assert m.tobytes() == t.tobytes()
        assert mt.rand(3).tolist() == torch.rand(3).tolist()  # (the same number of draws was used)


def test_a_new_generator_starts_from_torchs_default_seed():
    """(torch seeds its global generator anew in each process; microtorch's starts from this same default seed,
    so that an unseeded notebook draws the same numbers on every run.)"""
    g_t, g_m = torch.Generator(), mt.Generator()
    assert g_m.initial_seed() == g_t.initial_seed()
    assert mt.rand(3, generator=g_m).tolist() == torch.rand(3, generator=g_t).tolist()


def test_generators_and_states_replay_as_torchs():
    for lib in (torch, mt):
        lib.manual_seed(3)
    g_t, g_m = torch.Generator().manual_seed(5), mt.Generator().manual_seed(5)
    assert mt.rand(3, generator=g_m).tolist() == torch.rand(3, generator=g_t).tolist()
    assert mt.randn(3, generator=g_m).tolist() == torch.randn(3, generator=g_t).tolist()
    state = mt.get_rng_state()
    first = mt.randn(3).tolist()  # (the odd count leaves a kept normal: the state holds it too)
    mt.set_rng_state(state)
    assert mt.randn(3).tolist() == first
    torch.manual_seed(3)
    assert first == torch.randn(3).tolist()


def test_a_seeded_model_trains_as_torchs():
    """The same initial weights and data give the same losses, step by step."""
    losses = []
    for lib in (torch, mt):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(3, 8), lib.nn.Tanh(), lib.nn.Linear(8, 1))
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        x, y = lib.randn(10, 3), lib.randn(10, 1)
        run = []
        for _ in range(5):
            opt.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            opt.step()
            run.append(loss.item())
        losses.append(run)
    assert np.allclose(losses[0], losses[1], rtol=1e-6, atol=0)
    assert math.isclose(losses[0][0], losses[1][0], rel_tol=1e-7)


def _data_orders(lib):
    data = lib.utils.data
    lib.manual_seed(0)
    loader = data.DataLoader(list(range(10)), batch_size=3, shuffle=True)
    epochs = [[b.tolist() for b in loader] for _ in range(2)]
    lib.manual_seed(1)
    pairs = data.TensorDataset(lib.arange(8.0), lib.arange(8))
    epochs.append([y.tolist() for _, y in data.DataLoader(pairs, batch_size=4, shuffle=True)])
    epochs.append(list(data.RandomSampler(range(5), replacement=True, num_samples=6)))
    train, test = data.random_split(range(10), [7, 3])
    return epochs + [list(train), list(test)]


def test_a_seeded_dataloader_shuffles_as_torchs():
    assert _data_orders(mt) == _data_orders(torch)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32", "uint8", "int8", "bool"])
def test_random_without_a_range_draws_torchs_numbers(dtype):
    torch.manual_seed(0)
    mt.manual_seed(0)
    t = torch.empty(3, dtype=getattr(torch, dtype)).random_().tolist()
    assert mt.empty(3, dtype=getattr(mt, dtype)).random_().tolist() == t


def lenet(lib):
    """The neural-networks tutorial's LeNet, in lib (torch or microtorch); tests/test_tutorials9_basics.py uses it too."""
    nn, F = lib.nn, lib.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.conv2 = nn.Conv2d(1, 6, 5), nn.Conv2d(6, 16, 5)
            self.fc1, self.fc2, self.fc3 = nn.Linear(16 * 5 * 5, 120), nn.Linear(120, 84), nn.Linear(84, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
            x = lib.flatten(F.max_pool2d(F.relu(self.conv2(x)), 2), 1)
            return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))
    return Net()


def _lenet_printout(lib):
    """The neural-networks tutorial's LeNet, seeded: its printed output, step by step."""
    nn = lib.nn
    lib.manual_seed(0)
    net, image = lenet(lib), lib.randn(1, 1, 32, 32)
    out = net(image)
    net.zero_grad()
    out.backward(lib.randn(1, 10))
    lines = [repr(out), repr(net.conv1.bias.grad)]
    target, opt = lib.randn(10).view(1, -1), lib.optim.SGD(net.parameters(), lr=0.01)
    for _ in range(3):
        opt.zero_grad()
        loss = nn.MSELoss()(net(image), target)
        loss.backward()
        opt.step()
        lines.append(repr(loss))
    return "\n".join(lines).replace("microtorch", "torch")


def test_a_seeded_tutorial_prints_what_torch_prints():
    assert _lenet_printout(mt) == _lenet_printout(torch)


def test_an_orthogonal_init_is_torchs():
    """(the same normal draw, then numpy's QR against torch's LAPACK: equal to float32's precision)"""
    torch.manual_seed(4)
    mt.manual_seed(4)
    t, m = torch.nn.init.orthogonal_(torch.empty(3, 5)), mt.nn.init.orthogonal_(mt.empty(3, 5))
    np.testing.assert_allclose(m.numpy(), t.numpy(), rtol=0, atol=1e-6)


def test_seeded_float64_sgd_steps_are_torchs():
    """A float64 model's start and its SGD steps, bit for bit (the start used to differ in the last bit)."""
    def steps(lib):
        lib.manual_seed(0)
        model = lib.nn.Linear(3, 1, dtype=lib.float64)
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        seen = []
        for _ in range(3):
            opt.zero_grad()
            model(lib.ones(2, 3, dtype=lib.float64)).sum().backward()
            opt.step()
            seen.append(model.weight.detach().numpy().tobytes())
        return seen
    assert steps(mt) == steps(torch)
