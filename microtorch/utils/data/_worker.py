"""DataLoader workers, emulated in the main process.

torch's num_workers > 0 starts worker processes: each has a copy of the dataset and its own python, numpy and torch
generators, seeded from a base seed the loader draws; it calls worker_init_fn, then fetches the index batches dealt
to it. Here a worker is that copy and those generators' saved states, switched in around everything the worker
runs and switched back out after: the batches, the draws inside the dataset and the main process's later draws are
torch's, deterministically.
"""
import contextlib
import copy
import dataclasses
import itertools
import random
import sys
import traceback

import numpy as np

from ... import _random


@dataclasses.dataclass(frozen=True, slots=True)
class WorkerInfo:
    """What get_worker_info() returns inside a worker: torch's fields, read-only."""
    id: int
    num_workers: int
    seed: int
    dataset: object
    rng: object = None
    worker_method: str = "multiprocessing"


_current = [None]  # the WorkerInfo of the worker running now; None in the main process


def get_worker_info():
    """Inside a DataLoader worker: its WorkerInfo (id, num_workers, seed, its copy of the dataset); else None."""
    return _current[0]


def numpy_seed(base_seed, worker_id):
    """The four 32-bit words a worker seeds numpy's global generator with: numpy's SeedSequence over the worker id
    and the two halves of the base seed (torch writes that mixing out by hand, with the same result)."""
    entropy = [worker_id, base_seed & 0xFFFFFFFF, base_seed >> 32, 0]
    return [int(w) for w in np.random.SeedSequence(entropy).generate_state(4)]


def _swap(states):
    """Put `states` in place (python's, numpy's global and torch's default generator; None keeps those in place) and
    return the ones that were."""
    current = (random.getstate(), np.random.get_state(), _random._gen[0], _random._initial_seed[0])
    if states is not None:
        random.setstate(states[0])
        np.random.set_state(states[1])
        _random._gen[0], _random._initial_seed[0] = states[2], states[3]
    return current


def _copy_of(dataset):
    """The worker's own dataset: what the worker changes in it stays there, as in a forked process (a generator it
    holds starts where the main process's is, in every worker). One that cannot be deep-copied (it holds an open
    file) is copied shallowly, or at worst shared."""
    for make in (copy.deepcopy, copy.copy):
        try:
            return make(dataset)
        except Exception:  # (copying is best effort: any failure falls back to the next way)
            pass
    return dataset


STOP = object()  # what a worker answers once its IterableDataset is exhausted


class Worker:
    """One emulated worker process of a DataLoader iterator."""

    def __init__(self, loader, worker_id, base_seed):
        self.id, self._base_seed = worker_id, base_seed
        self._iterable, self._auto = loader._iterable, loader._auto_collation
        self._collate, self._drop_last = loader.collate_fn, loader.drop_last
        self.info = WorkerInfo(worker_id, loader.num_workers, base_seed + worker_id, _copy_of(loader.dataset))
        self._states, self._failed, self._stream, self._ended = None, None, None, False

    @contextlib.contextmanager
    def inside(self):
        """Run the block as this worker: its generators and WorkerInfo in place, the main process's put back after."""
        main, before = _swap(self._states), _current[0]
        _current[0] = self.info
        try:
            yield
        finally:
            _current[0] = before
            self._states = _swap(main)

    def start(self, init_fn):
        """torch's worker loop before its first task: seed, call worker_init_fn(id), make the fetcher. An error is
        kept for the worker's first task, as torch sends it."""
        seed = self.info.seed
        with self.inside():
            random.seed(seed)
            _random.manual_seed(seed)
            np.random.seed(numpy_seed(self._base_seed, self.id))
            try:
                if init_fn is not None:
                    init_fn(self.id)
                self._open()
            except Exception:
                self._failed = Caught(self.id)

    def resume(self):
        """A new epoch of persistent workers: the worker makes its fetcher anew (no new seed, no worker_init_fn)."""
        with self.inside():
            self._open()

    def _open(self):
        # an IterableDataset's copy starts a new iterator (a map-style fetcher keeps nothing)
        self._stream, self._ended = (iter(self.info.dataset) if self._iterable else None), False

    def fetch(self, index):
        """The collated batch for `index`, a Caught error, or STOP: what torch's worker sends back for a task."""
        if self._failed is not None:
            failed, self._failed = self._failed, None
            return failed
        with self.inside():
            try:
                return self._collate(self._next_stream(index) if self._iterable else self._read(index))
            except Exception as error:  # (torch's worker catches them all and sends them on)
                if self._iterable and isinstance(error, StopIteration):
                    self._ended = True
                    return STOP
                return Caught(self.id)

    def _read(self, index):
        dataset = self.info.dataset
        if not self._auto:
            return dataset[index]
        if getattr(dataset, "__getitems__", None):
            return dataset.__getitems__(index)
        return [dataset[i] for i in index]

    def _next_stream(self, size):
        if self._ended:
            raise StopIteration
        if not self._auto:
            return next(self._stream)
        batch = list(itertools.islice(self._stream, size))
        self._ended = len(batch) < size
        if not batch or (self._drop_last and len(batch) < size):
            raise StopIteration
        return batch


class _KeyErrorMessage(str):
    """A KeyError's message shown as written (KeyError shows its argument's repr)."""
    __slots__ = ()

    def __repr__(self):
        return self


class Caught:
    """An exception a worker raised, raised again in the main process as torch does: the same type, with torch's
    "Caught ... in DataLoader worker process N." and the original traceback as its message."""

    def __init__(self, worker_id):
        kind, error, tb = sys.exc_info()
        self.kind, self.where = kind, f"in DataLoader worker process {worker_id}"
        self.text = "".join(traceback.format_exception(kind, error, tb))

    def reraise(self):
        message = f"Caught {self.kind.__name__} {self.where}.\nOriginal {self.text}"
        if self.kind is KeyError:
            message = _KeyErrorMessage(message)
        elif getattr(self.kind, "message", None):
            raise self.kind(message=message)
        try:
            error = self.kind(message)
        except Exception:  # (an exception class that takes other arguments)
            raise RuntimeError(message) from None
        raise error
