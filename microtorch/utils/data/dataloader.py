"""DataLoader: iterate over a dataset in (shuffled) batches, collated into tensors.

Loading runs in the main process. num_workers > 0 emulates torch's worker processes there (_worker.py): each
worker's copy of the dataset and generators, worker_init_fn, get_worker_info(), and the batches dealt round-robin,
so that random augmentations give torch's numbers.
"""
import collections
import itertools
import os
import warnings

from ..._user_line import warn_at_user_line
from ._collate import default_collate, default_convert
from ._worker import STOP, Caught, Worker, get_worker_info  # noqa: F401 (get_worker_info: torch's name here too)
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler


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
        self._iterator = None  # persistent_workers: the one iterator, whose workers live on from epoch to epoch
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
        _check_worker_number(num_workers)

    @property
    def multiprocessing_context(self):
        return self._multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context):
        self._multiprocessing_context = _checked_context(context, self.num_workers)

    def __iter__(self):
        if self.num_workers > 0:
            return self._worker_iterator()
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

    def _worker_iterator(self):
        # with persistent_workers torch keeps its iterator: a later epoch resets it, no new seed, no new workers
        if self.persistent_workers and self._iterator is not None:
            self._iterator._reset(self)
            return self._iterator
        _check_worker_number(self.num_workers)
        iterator = _MultiProcessingDataLoaderIter(self)
        if self.persistent_workers:
            self._iterator = iterator
        return iterator

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


_END = object()


class _MultiProcessingDataLoaderIter:
    """iter(loader) with num_workers > 0, as torch's: index batches dealt round-robin to the workers, prefetch_factor
    per worker ahead, each fetched by its worker when dealt, and handed out in the order dealt. A worker whose
    IterableDataset is exhausted is passed over until the next epoch."""

    def __init__(self, loader):
        if loader.pin_memory:
            warn_at_user_line("'pin_memory' argument is set as true but no accelerator is found, then device pinned "
                              "memory won't be used.")
        _index_stream(loader)  # (torch starts the sampler here and again below: a sampler drawing in iter() draws
        # twice, the seed between)
        from ..._random import _rng
        base_seed = int(_rng(loader.generator).torch_integers(0, 2 ** 63, ()))  # torch's random_() of an int64
        if loader.prefetch_factor <= 0:
            raise AssertionError("prefetch_factor must be greater than 0 for MultiProcessingDataLoaderIter")
        self._loader, self._ahead = loader, loader.prefetch_factor * loader.num_workers
        self._workers = [Worker(loader, i, base_seed) for i in range(loader.num_workers)]
        for worker in self._workers:
            worker.start(loader.worker_init_fn)
        self._reset(loader, first=True)

    def _reset(self, loader, first=False):
        self._indices = _index_stream(loader)
        if not first:
            for worker in self._workers:
                worker.resume()
        self._running = [True] * len(self._workers)
        self._turns = itertools.cycle(self._workers)  # (each epoch starts again at worker 0)
        self._ready = collections.deque()  # outcomes of the dealt batches, in the order dealt
        for _ in range(self._ahead):
            self._deal()

    def _deal(self):
        """torch's _try_put_index: the sampler's next index batch to the next worker still running."""
        index = next(self._indices, _END)
        while index is not _END and any(self._running):
            worker = next(w for w in self._turns if self._running[w.id])
            outcome = worker.fetch(index)
            if outcome is not STOP:
                self._ready.append(outcome)
                return
            self._running[worker.id] = False  # torch deals a new index when it hears of the end
            index = next(self._indices, _END)

    def __iter__(self):
        return self

    def __next__(self):
        if not self._ready:
            raise StopIteration
        outcome = self._ready.popleft()
        self._deal()  # (torch deals the next batch before handing this one out, or raising its error)
        if isinstance(outcome, Caught):
            outcome.reraise()
        return outcome

    def __len__(self):
        return len(self._loader)


def _index_stream(loader):
    """What torch deals to workers: index batches (or indices, batch_size=None); for an IterableDataset only how
    many examples each batch takes (torch's infinite constant sampler)."""
    if loader._iterable:
        return itertools.repeat(loader.batch_size)
    return iter(loader.batch_sampler if loader.batch_sampler is not None else loader.sampler)


def _check_worker_number(num_workers):
    """torch's warning when more workers are asked for than this process may use (len(sched_getaffinity))."""
    if not num_workers:
        return
    affinity = hasattr(os, "sched_getaffinity")
    limit = len(os.sched_getaffinity(0)) if affinity else os.cpu_count()
    if limit is not None and num_workers <= limit:
        return
    if limit is None:
        suggested = "DataLoader is not able to compute a suggested max number of worker in current system."
    else:
        suggested = (f"Our suggested max number of worker in current system is {limit}"
                     f"{'' if affinity else ' (`cpuset` is not taken into account)'}, which is smaller than what this "
                     f"DataLoader is going to create.")
    # (from a line of this module, as torch's from its own: shown once per place, as torch's)
    warnings.warn(f"This DataLoader will create {num_workers} worker processes in total. {suggested} Please be aware "
                  f"that excessive worker creation might get DataLoader running slow or even freeze, lower the worker "
                  f"number to avoid potential slowness/freeze if necessary.", UserWarning, stacklevel=2)


def _checked_context(context, num_workers):
    """multiprocessing_context as torch checks it: a start method's name (made a context) or a context, and only
    with workers. No process starts here: it changes nothing else."""
    if context is None:
        return None
    if num_workers <= 0:
        raise ValueError(f"multiprocessing_context can only be used with multi-process loading (num_workers > 0), "
                         f"but got num_workers={num_workers}")
    import multiprocessing
    if isinstance(context, str):
        methods = multiprocessing.get_all_start_methods()
        if context not in methods:
            raise ValueError(f"multiprocessing_context option should specify a valid start method in {methods!r}, "
                             f"but got multiprocessing_context={context!r}")
        context = multiprocessing.get_context(context)
    if not isinstance(context, multiprocessing.context.BaseContext):
        raise TypeError(f"multiprocessing_context option should be a valid context object or a string specifying "
                        f"the start method, but got multiprocessing_context={context}")
    return context


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
