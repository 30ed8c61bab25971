"""DistributedSampler: the share of a dataset's indices that one of num_replicas processes visits.

Every process shuffles the same way (a generator seeded with seed + epoch, so set_epoch changes the order and
all processes agree on it), pads the list by repeating its start until it divides evenly (or, with drop_last,
cuts the tail off), and takes every num_replicas-th index starting at its rank. The order is torch's for the same
seed, epoch and sizes."""
import math

from .sampler import Sampler


def _from_group(value, ask):
    if value is not None:
        return value
    from ... import distributed
    if not distributed.is_available():
        raise RuntimeError("Requires distributed package to be available")
    return ask()  # (before init_process_group: torch's ValueError, which says to call it)


class DistributedSampler(Sampler):
    """Indices of `dataset` for process `rank` of num_replicas (both default to the process group's)."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        from ... import distributed
        num_replicas = _from_group(num_replicas, distributed.get_world_size)
        rank = _from_group(rank, distributed.get_rank)
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank, self.epoch = dataset, num_replicas, rank, 0
        self.drop_last, self.shuffle, self.seed = drop_last, shuffle, seed
        n = len(dataset)
        if drop_last and n % num_replicas:  # every replica gets the same count: drop the remainder
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:  # every replica gets the same count: pad up to a multiple
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def _order(self):
        n = len(self.dataset)
        if not self.shuffle:
            return list(range(n))
        from ..._creation import randperm
        from ..._random import Generator
        return randperm(n, generator=Generator().manual_seed(self.seed + self.epoch)).tolist()

    def __iter__(self):
        indices = self._order()
        if self.drop_last:
            indices = indices[:self.total_size]
        elif indices:  # repeat the list's start as often as needed to reach total_size
            short = self.total_size - len(indices)
            indices += (indices * math.ceil(short / len(indices)))[:short]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """The epoch that, with seed, picks the shuffle: call it before each epoch so the order changes."""
        self.epoch = epoch
