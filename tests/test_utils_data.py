"""microtorch.utils.data against torch.utils.data: the same datasets give batches of the same
structure, shapes, dtypes and (where no randomness is involved) the same values. Shuffled orders
come from microtorch's own random stream, so they are compared by what they must satisfy: a
permutation per epoch, reproducible under a seeded generator, different from epoch to epoch."""
import collections
import warnings

import numpy as np
import pytest
import torch
import torch.utils.data as tdata

import microtorch as mt
import microtorch.utils.data as mdata

LIBS = [(torch, tdata), (mt, mdata)]


def structure(batch):
    """Types (by name), shapes, dtypes and values of a batch, comparable across the libraries."""
    if isinstance(batch, (torch.Tensor, mt.Tensor)):
        return ("tensor", tuple(batch.shape), str(batch.dtype).split(".")[-1], batch.tolist())
    if isinstance(batch, dict):
        return {k: structure(v) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return (type(batch).__name__, [structure(b) for b in batch])
    return batch


def both(make):
    """make(lib, data) for torch and microtorch; the two structures."""
    return [structure(list(make(lib, data))) for lib, data in LIBS]


def _xy(lib):
    x = lib.tensor(np.arange(20.0).reshape(10, 2))
    y = lib.tensor(np.arange(10) % 3)
    return lib.utils.data.TensorDataset(x, y) if lib is torch else mdata.TensorDataset(x, y)


@pytest.mark.parametrize("kw", [dict(batch_size=4), dict(batch_size=4, drop_last=True), dict(batch_size=1),
                                dict(batch_size=10), dict(batch_size=None), dict(batch_size=3, num_workers=0)])
def test_sequential_batches_as_torch(kw):
    ours, theirs = both(lambda lib, data: data.DataLoader(_xy(lib), **kw))
    assert ours == theirs
    assert len(mdata.DataLoader(_xy(mt), **kw)) == len(tdata.DataLoader(_xy(torch), **kw))


class Pairs:
    """A dataset that is neither a Dataset subclass nor tensors: plain Python examples."""

    def __init__(self, examples):
        self.examples = examples

    def __len__(self):
        return len(self.examples)

    def __getitem__(self, i):
        return self.examples[i]


Point = collections.namedtuple("Point", "x y")
EXAMPLES = {
    "floats": [1.5, 2.5, 3.5],
    "ints": [1, 2, 3],
    "bools": [True, False, True],
    "strings": ["a", "b", "c"],
    "tuples": [(1, 2.0), (3, 4.0), (5, 6.0)],
    "lists": [[1, 2], [3, 4], [5, 6]],
    "dicts": [{"a": 1, "b": [1.0, 2.0]}, {"a": 2, "b": [3.0, 4.0]}, {"a": 3, "b": [5.0, 6.0]}],
    "namedtuples": [Point(1, 2.0), Point(3, 4.0), Point(5, 6.0)],
    "arrays": [np.ones((2, 2), np.float32) * i for i in range(3)],
    "numpy scalars": [np.float32(1.5), np.float32(2.5), np.float32(3.5)],
}


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_default_collate_as_torch(name):
    ex = EXAMPLES[name]
    ours, theirs = both(lambda lib, data: data.DataLoader(Pairs(ex), batch_size=2))
    assert ours == theirs
    assert structure(mdata.default_collate(ex)) == structure(tdata.default_collate(ex))
    assert structure(mdata.default_convert(ex[0])) == structure(tdata.default_convert(ex[0]))


def test_collate_errors_as_torch():
    for _, data in LIBS:
        with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
            data.default_collate([[1, 2], [3]])
        with pytest.raises(TypeError, match="default_collate: batch must contain tensors"):
            data.default_collate([object(), object()])


def test_collate_fn_and_getitems():
    def collate(batch):
        return [len(batch)] + [b[1].item() for b in batch]
    ours, theirs = both(lambda lib, data: data.DataLoader(_xy(lib), batch_size=4, collate_fn=collate))
    assert ours == theirs == ("list", [("list", [4, 0, 1, 2, 0]), ("list", [4, 1, 2, 0, 1]),
                                       ("list", [2, 2, 0])])


def _epoch_indices(loader):
    return [int(i) for batch in loader for i in batch[1]]


def test_shuffle_is_a_permutation_reproducible_with_a_generator():
    ds = mdata.TensorDataset(mt.arange(50), mt.arange(50))
    loaders = [mdata.DataLoader(ds, batch_size=8, shuffle=True, generator=mt.Generator().manual_seed(7))
               for _ in range(2)]
    first, again = _epoch_indices(loaders[0]), _epoch_indices(loaders[1])
    assert sorted(first) == list(range(50)) and first != list(range(50))
    assert first == again  # same seed, same order
    assert _epoch_indices(loaders[0]) != first  # the next epoch draws a new order from the generator
    assert [len(b[0]) for b in loaders[0]] == [len(b[0]) for b in tdata.DataLoader(
        tdata.TensorDataset(torch.arange(50), torch.arange(50)), batch_size=8, shuffle=True)]


def test_shuffle_without_a_generator_follows_manual_seed():
    ds = mdata.TensorDataset(mt.arange(30), mt.arange(30))
    orders = []
    for _ in range(2):
        mt.manual_seed(3)
        orders.append(_epoch_indices(mdata.DataLoader(ds, batch_size=4, shuffle=True)))
    assert orders[0] == orders[1] and sorted(orders[0]) == list(range(30))


@pytest.mark.parametrize("kw", [dict(), dict(replacement=True), dict(num_samples=7), dict(replacement=True,
                                                                                          num_samples=40)])
def test_random_sampler_as_torch(kw):
    t = list(tdata.RandomSampler(range(10), generator=torch.Generator().manual_seed(0), **kw))
    m = list(mdata.RandomSampler(range(10), generator=mt.Generator().manual_seed(0), **kw))
    assert len(m) == len(t) == len(mdata.RandomSampler(range(10), **kw))
    assert all(0 <= i < 10 for i in m)
    if not kw.get("replacement"):  # each index at most once per round of 10
        assert len(set(m[:10])) == min(10, len(m))


def test_samplers_as_torch():
    for lib, data in LIBS:
        assert list(data.SequentialSampler(range(5))) == [0, 1, 2, 3, 4]
    assert list(mdata.BatchSampler(mdata.SequentialSampler(range(10)), 3, False)) == \
        list(tdata.BatchSampler(tdata.SequentialSampler(range(10)), 3, False))
    assert list(mdata.BatchSampler(range(10), 3, True)) == list(tdata.BatchSampler(range(10), 3, True))
    assert len(mdata.BatchSampler(range(10), 3, True)) == 3 and len(mdata.BatchSampler(range(10), 3, False)) == 4
    sub = list(mdata.SubsetRandomSampler([4, 6, 8], generator=mt.Generator().manual_seed(1)))
    assert sorted(sub) == [4, 6, 8]
    w = list(mdata.WeightedRandomSampler([0.0, 1.0, 0.0, 1.0], 6, generator=mt.Generator().manual_seed(1)))
    assert len(w) == 6 and set(w) <= {1, 3}
    loader = mdata.DataLoader(_xy(mt), batch_sampler=[[0, 1], [5, 6, 7]])
    assert [len(b[0]) for b in loader] == [2, 3] and len(loader) == 2


@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.7], [0.25, 0.25, 0.5], [1.0 / 3] * 3, [10, 0]])
def test_random_split_as_torch(lengths):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = tdata.random_split(range(10), lengths, generator=torch.Generator().manual_seed(0))
        m = mdata.random_split(range(10), lengths, generator=mt.Generator().manual_seed(0))
    assert [len(s) for s in m] == [len(s) for s in t]
    assert sorted(i for s in m for i in s) == list(range(10))  # a partition of the dataset
    again = mdata.random_split(range(10), [len(s) for s in m], generator=mt.Generator().manual_seed(0))
    assert [list(s) for s in again] == [list(s) for s in m]


def test_datasets_as_torch():
    for lib, data in LIBS:
        a, b = data.TensorDataset(lib.arange(3)), data.TensorDataset(lib.arange(3, 7))
        cat = a + b
        assert isinstance(cat, data.ConcatDataset) and len(cat) == 7 and cat.cumulative_sizes == [3, 7]
        assert int(cat[4][0]) == 4 and int(cat[-1][0]) == 6
        sub = data.Subset(cat, [6, 0])
        assert [int(x[0]) for x in sub] == [6, 0]
        stack = data.StackDataset(a, a)
        assert len(stack) == 3 and [int(v[0]) for v in stack[1]] == [1, 1]
        named = data.StackDataset(left=a, right=a)
        assert sorted(named[0]) == ["left", "right"]


class Stream:
    """An iterable-style dataset of n squares (subclassing each library's IterableDataset)."""

    @staticmethod
    def make(data, n):
        class Squares(data.IterableDataset):
            def __iter__(self):
                return iter(i * i for i in range(n))

            def __len__(self):
                return n
        return Squares()


@pytest.mark.parametrize("kw", [dict(batch_size=3), dict(batch_size=3, drop_last=True), dict(batch_size=None)])
def test_iterable_dataset_as_torch(kw):
    ours, theirs = both(lambda lib, data: data.DataLoader(Stream.make(data, 8), **kw))
    assert ours == theirs
    assert len(mdata.DataLoader(Stream.make(mdata, 8), **kw)) == len(tdata.DataLoader(Stream.make(tdata, 8), **kw))
    chained = both(lambda lib, data: data.DataLoader(Stream.make(data, 2) + Stream.make(data, 3), batch_size=2))
    assert chained[0] == chained[1]


ERRORS = [
    ("DataLoader(ds, sampler=[0, 1], shuffle=True)", ValueError, "mutually exclusive with shuffle"),
    ("DataLoader(ds, batch_sampler=[[0]], batch_size=2)", ValueError, "batch_sampler option is mutually exclusive"),
    ("DataLoader(ds, batch_size=None, drop_last=True)", ValueError, "disables auto-batching"),
    ("DataLoader(ds, num_workers=-1)", ValueError, "num_workers option should be non-negative"),
    ("DataLoader(ds, prefetch_factor=2)", ValueError, "prefetch_factor option could only be specified"),
    ("DataLoader(ds, persistent_workers=True)", ValueError, "persistent_workers option needs num_workers > 0"),
    ("DataLoader(stream, shuffle=True)", ValueError, "expected unspecified shuffle option"),
    ("DataLoader(stream, sampler=[0])", ValueError, "expected unspecified sampler option"),
    ("BatchSampler(range(3), 0, False)", ValueError, "batch_size should be a positive integer value"),
    ("BatchSampler(range(3), 2, 1)", ValueError, "drop_last should be a boolean value"),
    ("RandomSampler(range(3), replacement=1)", TypeError, "replacement should be a boolean value"),
    ("RandomSampler(range(3), num_samples=0)", ValueError, "num_samples should be a positive integer"),
    ("random_split(range(10), [3, 3])", ValueError, "Sum of input lengths does not equal"),
    ("random_split(range(10), [1.5, -0.5])", ValueError, "Fraction at index 0 is not between 0 and 1"),
    ("ConcatDataset([])", AssertionError, "datasets should not be an empty iterable"),
    ("ConcatDataset([stream])", AssertionError, "ConcatDataset does not support IterableDataset"),
    ("TensorDataset(lib.ones(3), lib.ones(4))", AssertionError, "Size mismatch between tensors"),
    ("StackDataset()", ValueError, "At least one dataset should be passed"),
]


@pytest.mark.parametrize("call, exc, fragment", ERRORS)
def test_errors_as_torch(call, exc, fragment):
    for lib, data in LIBS:
        env = dict(vars(data), lib=lib, ds=data.TensorDataset(lib.ones(4)), stream=Stream.make(data, 3))
        with pytest.raises(exc, match=fragment):
            eval(call, env)


def test_training_loop_of_a_tutorial_runs():
    """The pattern every course uses: TensorDataset -> DataLoader(shuffle=True) -> epochs of SGD steps."""
    mt.manual_seed(0)
    x = mt.randn(64, 3)
    y = x @ mt.tensor([[1.0], [-2.0], [0.5]]) + 0.1
    loader = mdata.DataLoader(mdata.TensorDataset(x, y), batch_size=16, shuffle=True)
    model = mt.nn.Linear(3, 1)
    opt = mt.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(30):
        for xb, yb in loader:
            opt.zero_grad()
            loss = mt.nn.functional.mse_loss(model(xb), yb)
            loss.backward()
            opt.step()
    np.testing.assert_allclose(model.weight.detach().numpy(), [[1.0, -2.0, 0.5]], atol=1e-3)
    np.testing.assert_allclose(model.bias.detach().numpy(), [0.1], atol=1e-3)
