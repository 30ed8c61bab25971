"""Code from Andrej Karpathy's makemore lectures (Neural Networks: Zero to Hero), beside torch.

The bigram lecture samples names one character at a time, `torch.multinomial(p, num_samples=1, replacement=True,
generator=g)` after `torch.Generator().manual_seed(2147483647)`, and students check that they get the lecture's
"cexze.", "momasurailezitynn.", ... For a single sample (or none replaced) torch's CPU kernel draws exponentials and
takes the largest p / q (the Gumbel trick), not the running sum its many-sample path searches; microtorch used the
running sum, so the names differed. `Categorical.sample()` draws one sample too. The MLP lecture's broken cell
indexes `prob[torch.arange(32), Y]` with index tensors that do not broadcast: torch names the shapes before it looks
at any index's bounds.
"""
import numpy as np
import pytest

import microtorch

torch = pytest.importorskip("torch")

# a bigram table's first rows: counts + 1, normalized, as the lecture makes P
COUNTS = np.random.default_rng(0).integers(0, 400, size=(6, 6)) + 1


def _table(L):
    P = L.tensor(COUNTS).float()
    return P / P.sum(1, keepdim=True)


def _walk(L, steps=40):
    """The lecture's sampling loop: the next row is the character just drawn."""
    P = _table(L)
    g = L.Generator().manual_seed(2147483647)
    ix, seq = 0, []
    for _ in range(steps):
        ix = L.multinomial(P[ix], num_samples=1, replacement=True, generator=g).item()
        seq.append(ix)
    return seq


def test_the_lectures_sampling_loop_draws_torchs_characters():
    assert _walk(microtorch) == _walk(torch)


@pytest.mark.parametrize("replacement", [True, False])
@pytest.mark.parametrize("n", [1, 2, 5])
def test_multinomial_draws_as_torch(n, replacement):
    def draw(L):
        g = L.Generator().manual_seed(2147483647)
        samples = L.multinomial(_table(L), num_samples=n, replacement=replacement, generator=g)
        return samples.tolist(), L.rand(3, generator=g).tolist()  # (and the generator is left where torch's is)
    assert draw(microtorch) == draw(torch)


def test_categorical_sample_draws_as_torch():
    def draw(L):
        L.manual_seed(7)
        d = L.distributions.Categorical(probs=_table(L)[2])
        return [d.sample().item() for _ in range(30)], d.sample((4,)).tolist()
    assert draw(microtorch) == draw(torch)


@pytest.mark.parametrize("key", [
    lambda L: (L.arange(32), L.tensor([], dtype=L.long)),
    lambda L: (L.arange(3), L.arange(2)),
    lambda L: (L.tensor([9, 1]), L.arange(3)),
    lambda L: ([0, 1], [1, 2, 3]),
    lambda L: (L.tensor([True, False, True, False, False]), L.arange(3)),
])
def test_index_tensors_that_do_not_broadcast(key):
    def outcome(L):
        x = L.zeros(5, 4) if len(key(L)[0]) != 32 else L.zeros(0, 27)
        try:
            x[key(L)]
        except IndexError as e:
            return str(e)
    ours, theirs = outcome(microtorch), outcome(torch)
    assert theirs is not None and ours.endswith(theirs)


def test_the_tensor_class_prints_as_torchs():
    """Dive into Deep Learning's first chapter prints `type(A), type(B)` after converting to numpy and back."""
    assert str(type(microtorch.ones(2))) == str(type(torch.ones(2))).replace("torch", "microtorch")


def test_a_saved_dict_loads_as_a_dict(tmp_path):
    """d2l saves `{'x': x, 'y': y}` and prints what it loads: a dict, as torch's (a state dict stays ordered)."""
    for L in (microtorch, torch):
        L.save({"x": L.arange(4), "y": L.zeros(4)}, tmp_path / L.__name__)
        L.save(L.nn.Linear(2, 1).state_dict(), tmp_path / (L.__name__ + "_sd"))
    for name in ("", "_sd"):
        ours = microtorch.load(tmp_path / ("microtorch" + name))
        theirs = torch.load(tmp_path / ("torch" + name))
        assert type(ours) is type(theirs) and list(ours) == list(theirs)


IN_PLACE_ON_EXPANDED_VIEWS = {
    "a row of an expand": lambda b: b.expand(3, 2)[1].add_(1),
    "a column of an expand": lambda b: b.expand(3, 2)[:, 0].fill_(5),
    "a slice of a detached expand (fuzz 4,519,146)": lambda b: b[0].expand(2).detach()[..., 1:].mul_(3),
    "an element of a detached expand": lambda b: b[1].expand(2).detach()[0].mul_(3),
    "a row of a detached expand": lambda b: b.expand(3, 2).detach()[1].mul_(3),
    "a detached expand with each element twice": lambda b: b.expand(3, 2).detach()[..., 1:].mul_(3),
    "a row of an unsqueezed expand": lambda b: b.unsqueeze(0).expand(4, 2)[2].sub_(1),
    "the expand itself (overlapping)": lambda b: b.expand(3, 2).add_(1),
    "fill_ of the expand itself": lambda b: b.expand(3, 2).fill_(7),
}


@pytest.mark.parametrize("case", IN_PLACE_ON_EXPANDED_VIEWS)
def test_in_place_on_a_view_of_an_expanded_tensor(case):
    """A view of an expand() that holds no element twice is written into its memory, as torch writes into its
    storage; the expand itself (several elements in one place) is refused, fill_ aside."""
    def outcome(L):
        base = L.tensor([1.0, 2.0], dtype=L.float64)
        try:
            r = IN_PLACE_ON_EXPANDED_VIEWS[case](base)
        except RuntimeError as e:
            return "raised", str(e)[:60]
        return r.tolist(), base.tolist(), base._version
    assert outcome(microtorch) == outcome(torch)


def test_in_place_on_a_row_of_an_expand_of_a_result_with_history():
    def grads(L):
        x = L.tensor([1.0, 2.0], dtype=L.float64, requires_grad=True)
        y = x * 1.0
        y.expand(3, 2)[1].mul_(3)
        y.sum().backward()
        return y.tolist(), x.grad.tolist(), y.grad_fn.name()
    assert grads(microtorch) == grads(torch)


@pytest.mark.parametrize("bounds", ["min", "max", "both", "a vector min"])
def test_clamp_by_tensor_bounds_lays_out_as_torch(bounds):
    """An absent bound is no operand to torch: x (a size-1 dim with its own stride) clamped by a tensor of its shape
    comes out C-contiguous, so a matmul after it folds into mm (fuzz 4,567,838)."""
    def layout(L):
        x = L.matmul(L.zeros(1, 2, dtype=L.float64, requires_grad=True), L.tensor(np.arange(8.0).reshape(2, 2, 2)))
        t = L.ones(2, 1, 2, dtype=L.float64)
        r = {"min": lambda: L.clamp(x, min=t), "max": lambda: L.clamp(x, max=t), "both": lambda: L.clamp(x, t, t + 1),
             "a vector min": lambda: L.clamp(x, min=L.ones(2, dtype=L.float64))}[bounds]()
        return r.stride(), (r @ L.ones(2, 1, dtype=L.float64)).grad_fn.next_functions[0][0].name()
    assert layout(microtorch) == layout(torch)
