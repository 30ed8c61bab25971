"""DataLoader: iterate over a dataset in (shuffled) batches, collated into tensors.

Loading runs in the main process: num_workers > 0 gives the same batches without worker processes
(numpy datasets here are small; the option is accepted so that torch code runs unchanged).
"""
import itertools

from ..._user_line import warn_at_user_line
from ._collate import default_collate, default_convert
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler


def get_worker_info():
    """None: the data are loaded in the main process, as torch reports there."""
    return None


class DataLoader:
    """Batches of `dataset`: batch_size examples each (shuffled if shuffle=True, by `generator`)."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        _check_worker_options(num_workers, timeout, prefetch_factor, persistent_workers)
        self.dataset, self.num_workers, self.timeout = dataset, num_workers, timeout
        self.pin_memory, self.pin_memory_device, self.worker_init_fn = pin_memory, pin_memory_device, worker_init_fn
        self.prefetch_factor = 2 if num_workers > 0 and prefetch_factor is None else prefetch_factor
        self.multiprocessing_context, self.persistent_workers, self.in_order = \
            multiprocessing_context, persistent_workers, in_order
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            _check_iterable_options(shuffle, sampler, batch_sampler)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                                 "and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with "
                             "drop_last")
        if sampler is None and not self._iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size, self.drop_last, self.sampler, self.batch_sampler, self.generator = \
            batch_size, drop_last, sampler, batch_sampler, generator
        self._auto_collation = batch_sampler is not None or (self._iterable and batch_size is not None)
        self.collate_fn = collate_fn or (default_collate if self._auto_collation else default_convert)

    def __iter__(self):
        from ..._random import _rng
        # torch's iterator draws a seed for its worker processes first (here none run): the draws after it, a
        # shuffle's order among them, are torch's for the same manual_seed
        _rng(self.generator).torch_integers(0, 2 ** 63, ())
        if self.pin_memory:
            warn_at_user_line("'pin_memory' argument is set as true but no accelerator is found, then device pinned "
                              "memory won't be used.")
        if self._iterable:
            return _SingleProcessDataLoaderIter(self, self._iter_stream())
        if self.batch_sampler is not None:
            batches = (self.collate_fn(self._fetch(indices)) for indices in self.batch_sampler)
        else:
            batches = (self.collate_fn(self.dataset[i]) for i in self.sampler)
        return _SingleProcessDataLoaderIter(self, batches)

    def _fetch(self, indices):
        getitems = getattr(self.dataset, "__getitems__", None)
        return getitems(indices) if callable(getitems) else [self.dataset[i] for i in indices]

    def _iter_stream(self):
        stream = iter(self.dataset)
        if self.batch_size is None:
            yield from (self.collate_fn(x) for x in stream)
            return
        while True:
            batch = list(itertools.islice(stream, self.batch_size))
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield self.collate_fn(batch)

    def __len__(self):
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        return len(self.batch_sampler if self.batch_sampler is not None else self.sampler)


class _SingleProcessDataLoaderIter:
    """iter(loader): its batches one by one, with len() the loader's (torch's iterator class, by its name)."""

    def __init__(self, loader, batches):
        self._loader, self._batches = loader, batches

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._batches)

    def __len__(self):
        return len(self._loader)


def _check_worker_options(num_workers, timeout, prefetch_factor, persistent_workers):
    if num_workers < 0:
        raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                         "multiprocessing.")
    if timeout < 0:
        raise ValueError("timeout option should be non-negative")
    if num_workers == 0 and prefetch_factor is not None:
        raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 "
                         "to enable multiprocessing, otherwise set prefetch_factor to None.")
    if prefetch_factor is not None and prefetch_factor < 0:
        raise ValueError("prefetch_factor option should be non-negative")
    if persistent_workers and num_workers == 0:
        raise ValueError("persistent_workers option needs num_workers > 0")


def _check_iterable_options(shuffle, sampler, batch_sampler):
    if shuffle not in (False, None):
        raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                         f"shuffle={shuffle}")
    if sampler is not None:
        raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, but got "
                         f"sampler={sampler}")
    if batch_sampler is not None:
        raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, but got "
                         f"batch_sampler={batch_sampler}")
