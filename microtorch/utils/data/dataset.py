"""Datasets: map-style (index -> example) and iterable-style (a stream of examples)."""
import bisect
import math
import typing
import warnings

T_co = typing.TypeVar("T_co", covariant=True)


class Dataset(typing.Generic[T_co]):
    """A map from an index to an example: subclasses define __getitem__ (and usually __len__)."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co], typing.Iterable[T_co]):
    """A stream of examples: subclasses define __iter__ (abstract, as torch's: a subclass without one cannot be
    made). The DataLoader batches what it yields."""

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Example i is (t[i] for t in tensors); all tensors share their first dimension."""

    def __init__(self, *tensors):
        if any(tensors[0].size(0) != t.size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors: TensorDataset needs the same first dimension in "
                                 f"each, got {[t.size(0) for t in tensors]}")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


class StackDataset(Dataset):
    """Example i is a tuple (positional datasets) or a dict (keyword datasets) of each one's example i."""

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like "
                             "input/output, but both types are given.")
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        self.datasets = args or kwargs
        parts = args or list(kwargs.values())
        self._length = len(parts[0])
        if any(len(d) != self._length for d in parts):
            raise ValueError("Size mismatch between datasets")

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self):
        return self._length


class ConcatDataset(Dataset):
    """The datasets one after the other; `cumulative_sizes[i]` is where dataset i ends."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        if any(isinstance(d, IterableDataset) for d in self.datasets):
            raise AssertionError("ConcatDataset does not support IterableDataset (use ChainDataset for streams)")
        self.cumulative_sizes = self.cumsum(self.datasets)

    @staticmethod
    def cumsum(sequence):
        out, total = [], 0
        for d in sequence:
            total += len(d)
            out.append(total)
        return out

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][idx - start]


class ChainDataset(IterableDataset):
    """Iterable datasets chained one after the other."""

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self):
        if not all(isinstance(d, IterableDataset) for d in self.datasets):
            raise AssertionError("ChainDataset only supports IterableDataset")
        return sum(len(d) for d in self.datasets)


class Subset(Dataset):
    """The examples of `dataset` at `indices`, in that order."""

    def __init__(self, dataset, indices):
        self.dataset, self.indices = dataset, indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=None):
    """Subsets of `dataset` with the given lengths (or fractions of it, summing to 1), drawn at random
    without overlap: one permutation by `generator` (or the global generator), cut into pieces."""
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        lengths = _lengths_of_fractions(lengths, len(dataset))
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset! (lengths "
                         f"{list(lengths)} sum to {sum(lengths)}, the dataset has {len(dataset)} examples)")
    from ..._creation import randperm
    indices = randperm(sum(lengths), generator=generator).tolist()
    out, start = [], 0
    for n in lengths:
        out.append(Subset(dataset, indices[start:start + n]))
        start += n
    return out


def _lengths_of_fractions(fractions, n):
    """floor(n * f) each, then the remainder handed out one by one from the first split on (as torch)."""
    lengths = []
    for i, frac in enumerate(fractions):
        if frac < 0 or frac > 1:
            raise ValueError(f"Fraction at index {i} is not between 0 and 1")
        lengths.append(math.floor(n * frac))
    for i in range(n - sum(lengths)):
        lengths[i % len(lengths)] += 1
    for i, length in enumerate(lengths):
        if length == 0:
            warnings.warn(f"Length of split at index {i} is 0. This might result in an empty dataset.",
                          stacklevel=3)
    return lengths
