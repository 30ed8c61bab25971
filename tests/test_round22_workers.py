"""The twenty-second round: DataLoader(num_workers > 0) beside torch 2.13's worker processes.

microtorch emulates the workers in the main process (utils/data/_worker.py); torch really forks them. The numbers a
dataset draws in a worker (torch.rand, numpy's global generator, python's random), worker_init_fn's calls,
get_worker_info(), the order of an IterableDataset's batches and the main process's draws afterwards must be torch's.
torch's workers write what the test wants to see into a file, the only way out of their processes."""
import os
import random
import warnings

import numpy as np
import pytest
import torch

import microtorch as mt

LIBS = (torch, mt)


def plain(batch):
    """A batch as lists and numbers, comparable across the libraries."""
    if isinstance(batch, (torch.Tensor, mt.Tensor)):
        return batch.tolist()
    if isinstance(batch, (list, tuple)):
        return [plain(b) for b in batch]
    if isinstance(batch, dict):
        return {k: plain(v) for k, v in batch.items()}
    return batch


def draws_dataset(lib, n=7):
    """A map-style dataset whose examples are draws from the three global generators (random augmentations)."""
    class Draws:
        def __len__(self):
            return n

        def __getitem__(self, i):
            info = lib.utils.data.get_worker_info()
            return (i, -1 if info is None else info.id, lib.rand(2), float(np.random.rand()), random.random())
    return Draws()


def epochs(lib, dataset, n_epochs=1, seed=0, stop_after=None, **kw):
    """[[batch, ...] per epoch], then the main process's next draws of the three generators."""
    lib.manual_seed(seed)
    np.random.seed(seed)
    random.seed(seed)
    loader = lib.utils.data.DataLoader(dataset(lib), **kw)
    out = []
    for _ in range(n_epochs):
        out.append([])
        for batch in loader:
            out[-1].append(plain(batch))
            if stop_after is not None and len(out[-1]) == stop_after:
                break
    return out, lib.rand(3).tolist(), float(np.random.rand()), random.random()


def both(*args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (3 workers on a 2-core machine: torch's warning, tested below)
        return [epochs(lib, *args, **kw) for lib in LIBS]


@pytest.mark.parametrize("base_seed", [0, 1, 2 ** 32 - 1, 2 ** 32, 12345678901234567, 2 ** 63 - 1])
@pytest.mark.parametrize("worker_id", [0, 1, 7])
def test_numpy_seed_is_torchs_generate_state(base_seed, worker_id):
    from torch.utils.data._utils.worker import _generate_state

    from microtorch.utils.data import _worker
    assert _worker.numpy_seed(base_seed, worker_id) == _generate_state(base_seed, worker_id)


@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("num_workers", [1, 2, 3])
def test_draws_in_workers_are_torchs(num_workers, shuffle):
    theirs, ours = both(draws_dataset, batch_size=2, shuffle=shuffle, num_workers=num_workers)
    assert ours == theirs


@pytest.mark.parametrize("kw", [dict(batch_size=None), dict(batch_size=3, drop_last=True, prefetch_factor=1),
                                dict(batch_size=1, prefetch_factor=5, seed=7), dict(batch_size=4, seed=123)])
def test_batching_options_with_workers(kw):
    theirs, ours = both(draws_dataset, num_workers=2, **kw)
    assert ours == theirs


@pytest.mark.parametrize("persistent", [False, True])
@pytest.mark.parametrize("num_workers", [2, 3])
def test_two_epochs_with_and_without_persistent_workers(num_workers, persistent):
    """persistent: the workers' generators go on from the first epoch and no new base seed is drawn."""
    theirs, ours = both(draws_dataset, n_epochs=2, batch_size=2, shuffle=True, num_workers=num_workers,
                        persistent_workers=persistent)
    assert ours == theirs


@pytest.mark.parametrize("persistent", [False, True])
def test_an_epoch_left_early_then_a_whole_one(persistent):
    """The batches dealt ahead of a break are fetched all the same (torch's workers fetch them)."""
    theirs, ours = both(draws_dataset, n_epochs=2, stop_after=1, batch_size=1, num_workers=2,
                        persistent_workers=persistent)
    assert ours == theirs


def test_generator_given_draws_the_base_seed():
    """The base seed comes from the loader's generator: the global one is left as it was."""
    def run(lib):
        lib.manual_seed(0)
        gen = lib.Generator().manual_seed(5)
        loader = lib.utils.data.DataLoader(draws_dataset(lib), batch_size=2, shuffle=True, num_workers=2,
                                           generator=gen)
        return [plain(b) for b in loader], lib.rand(2).tolist(), lib.rand(2, generator=gen).tolist()
    assert run(mt) == run(torch)


def test_main_process_draws_between_iter_and_next():
    """iter() draws the base seed, and the shuffle's seed as it deals the first batches, before the loop's body."""
    def run(lib):
        lib.manual_seed(3)
        loader = lib.utils.data.DataLoader(draws_dataset(lib, 6), batch_size=2, shuffle=True, num_workers=2)
        it = iter(loader)
        mid = lib.rand(2).tolist()
        return mid, [plain(b) for b in it], lib.rand(2).tolist()
    assert run(mt) == run(torch)


def test_a_sampler_drawing_in_iter_draws_twice_around_the_base_seed():
    """torch starts the sampler before it draws the base seed and again when it deals the first batches (with
    batch_size=None: a BatchSampler would start it lazily)."""
    def run(lib):
        class Permuting:
            def __len__(self):
                return 6

            def __iter__(self):
                return iter(lib.randperm(6).tolist())
        lib.manual_seed(4)
        loader = lib.utils.data.DataLoader(draws_dataset(lib, 6), sampler=Permuting(), batch_size=None,
                                           num_workers=2)
        return [plain(b) for b in loader], lib.rand(2).tolist()
    assert run(mt) == run(torch)


def test_the_loop_body_runs_in_the_main_process():
    for lib in LIBS:
        infos = [lib.utils.data.get_worker_info() for _ in lib.utils.data.DataLoader(range(4), num_workers=2)]
        assert infos == [None] * 4


def _logging_init(lib, path):
    def init(worker_id):
        info = lib.utils.data.get_worker_info()
        line = (worker_id, info.id, info.num_workers, info.seed, lib.initial_seed(), round(float(np.random.rand()), 12),
                random.random(), lib.rand(1).item(), type(info).__name__)
        with open(path, "a") as f:
            f.write(repr(line) + "\n")
    return init


@pytest.mark.parametrize("persistent", [False, True])
def test_worker_init_fn_is_called_in_each_worker(tmp_path, persistent):
    """Once per worker (and epoch, unless persistent), with its id, inside the worker: its info and generators."""
    logs = []
    for lib in LIBS:
        path = tmp_path / f"{lib.__name__}.log"
        lib.manual_seed(1)
        loader = lib.utils.data.DataLoader(draws_dataset(lib, 4), batch_size=2, num_workers=2,
                                           worker_init_fn=_logging_init(lib, path), persistent_workers=persistent)
        batches = [plain(b) for _ in range(2) for b in loader]
        logs.append((sorted(path.read_text().splitlines()), batches, lib.rand(2).tolist()))
    assert logs[1] == logs[0]
    assert len(logs[1][0]) == (2 if persistent else 4)


def test_worker_init_fn_seeding_numpy_as_the_docs_do():
    """The reproducibility notes' worker_init_fn: numpy and random seeded from torch.initial_seed()."""
    def seed_worker(lib):
        def init(worker_id):
            worker_seed = lib.initial_seed() % 2 ** 32
            np.random.seed(worker_seed)
            random.seed(worker_seed)
        return init
    got = []
    for lib in LIBS:
        lib.manual_seed(0)
        loader = lib.utils.data.DataLoader(draws_dataset(lib, 5), batch_size=2, num_workers=2,
                                           worker_init_fn=seed_worker(lib), generator=lib.Generator().manual_seed(0))
        got.append([plain(b) for b in loader])
    assert got[1] == got[0]


def test_get_worker_info_inside_and_outside():
    """None in the main process; inside: the worker's id, count, seed and own copy of the dataset, read-only."""
    def seen(lib):
        class Probe:
            def __len__(self):
                return 4

            def __getitem__(self, i):
                info = lib.utils.data.get_worker_info()
                try:
                    info.id = 5
                    frozen = None
                except Exception as e:  # torch's is dataclasses.FrozenInstanceError
                    frozen = (type(e).__name__, str(e))
                return [i, info.id, info.num_workers, info.seed, info.dataset is self, type(info.dataset).__name__,
                        repr(info).split(", dataset=")[0], info.rng, info.worker_method, frozen]
        probe = Probe()
        lib.manual_seed(2)
        loader = lib.utils.data.DataLoader(probe, batch_size=None, num_workers=2)
        return lib.utils.data.get_worker_info(), list(loader), lib.utils.data.get_worker_info()
    theirs, ours = seen(torch), seen(mt)
    assert ours == theirs
    assert ours[0] is None and ours[1][0][4] is True


def test_collate_fn_runs_in_the_worker():
    def collate(lib):
        return lambda items: (lib.utils.data.get_worker_info().id, lib.rand(1).item(), items)
    got = [list(lib.utils.data.DataLoader(range(6), batch_size=2, num_workers=2, collate_fn=collate(lib)))
           for lib in LIBS if lib.manual_seed(0)]
    assert got[1] == got[0]


def test_a_workers_changes_to_its_dataset_stay_in_the_worker():
    def run(lib):
        class Counting:
            def __init__(self):
                self.calls = 0

            def __len__(self):
                return 6

            def __getitem__(self, i):
                self.calls += 1
                return self.calls
        ds = Counting()
        loader = lib.utils.data.DataLoader(ds, batch_size=2, num_workers=2, persistent_workers=True)
        return [plain(b) for _ in range(2) for b in loader], ds.calls
    assert run(mt) == run(torch)


def test_a_generator_in_the_dataset_is_copied_into_each_worker():
    """A dataset's own generators (torch's, numpy's, python's) start in every worker where the main process's is:
    torch's workers draw the same numbers (the classic pitfall), and the main process's generator is left as it was."""
    def run(lib):
        class OwnGenerators:
            def __init__(self):
                self.g = lib.Generator().manual_seed(0)
                self.np_rng, self.py_rng = np.random.default_rng(0), random.Random(0)

            def __len__(self):
                return 4

            def __getitem__(self, i):
                return lib.rand(1, generator=self.g).item(), float(self.np_rng.random()), self.py_rng.random()
        ds = OwnGenerators()
        loader = lib.utils.data.DataLoader(ds, batch_size=2, num_workers=2)
        return [plain(b) for b in loader], lib.rand(1, generator=ds.g).item(), float(ds.np_rng.random())
    theirs, ours = run(torch), run(mt)
    assert ours == theirs
    assert ours[0][0] == ours[0][1]


def stream_dataset(lib, lengths, split=True, draw=False):
    """An IterableDataset: worker w yields lengths[w] values of its own (split=True, by get_worker_info), or every
    worker the whole range (split=False: each example once per worker, as torch)."""
    class Stream(lib.utils.data.IterableDataset):
        def __iter__(self):
            info = lib.utils.data.get_worker_info()
            wid = -1 if info is None else info.id
            count = lengths[wid] if split and info is not None else lengths[0]
            for k in range(count):
                yield [100 * wid + k, lib.rand(1).item() if draw else 0.0]
    return Stream()


@pytest.mark.parametrize("lengths, batch_size, drop_last", [
    ([1, 3, 5], None, False), ([3, 1, 5], 2, False), ([3, 1, 5], 2, True), ([0, 4, 2], 3, False),
    ([5, 0, 0], 1, False), ([2, 2, 2], 2, False), ([7, 1, 0], 2, False)])
def test_iterable_dataset_split_by_worker_interleaves_as_torch(lengths, batch_size, drop_last):
    theirs, ours = both(lambda lib: stream_dataset(lib, lengths, draw=True), num_workers=3, batch_size=batch_size,
                        drop_last=drop_last)
    assert ours == theirs


@pytest.mark.parametrize("num_workers", [1, 2])
def test_iterable_dataset_not_split_gives_each_example_once_per_worker(num_workers):
    theirs, ours = both(lambda lib: stream_dataset(lib, [3], split=False), num_workers=num_workers, batch_size=2)
    assert ours == theirs
    assert len(ours[0][0]) == 2 * num_workers


@pytest.mark.parametrize("persistent", [False, True])
def test_iterable_dataset_two_epochs(persistent):
    theirs, ours = both(lambda lib: stream_dataset(lib, [2, 4], draw=True), n_epochs=2, num_workers=2, batch_size=1,
                        prefetch_factor=1, persistent_workers=persistent)
    assert ours == theirs


def test_docs_worker_init_fn_splitting_an_iterable_dataset():
    """torch's documented example: worker_init_fn narrows its worker's copy of the dataset to a share of the range."""
    def run(lib):
        class Range(lib.utils.data.IterableDataset):
            def __init__(self, start, end):
                self.start, self.end = start, end

            def __iter__(self):
                return iter(range(self.start, self.end))

        def init(worker_id):
            info = lib.utils.data.get_worker_info()
            ds = info.dataset
            per = -(-(ds.end - ds.start) // info.num_workers)
            ds.start, ds.end = ds.start + worker_id * per, min(ds.start + (worker_id + 1) * per, ds.end)
        loader = lib.utils.data.DataLoader(Range(3, 10), num_workers=2, worker_init_fn=init)
        return [plain(b) for b in loader], [plain(b) for b in lib.utils.data.DataLoader(Range(3, 10), num_workers=0)]
    assert run(mt) == run(torch)


def _error_dataset(lib, kind):
    class Failing:
        def __len__(self):
            return 4

        def __getitem__(self, i):
            if i == 3:
                raise kind("bad index 3")
            return i
    return Failing()


@pytest.mark.parametrize("kind", [ValueError, KeyError, IndexError])
def test_an_error_in_a_worker_is_raised_as_torchs(kind):
    """The same type, "Caught X in DataLoader worker process N." then the original traceback; the batches before."""
    got = []
    for lib in LIBS:
        loader = lib.utils.data.DataLoader(_error_dataset(lib, kind), batch_size=1, num_workers=2)
        seen = []
        with pytest.raises(kind) as info:
            for b in loader:
                seen.append(plain(b))
        text = info.value.args[0]
        got.append((seen, text.splitlines()[:2], text.rstrip().splitlines()[-1]))
    assert got[1] == got[0]
    assert got[1][1][0] == f"Caught {kind.__name__} in DataLoader worker process 1."


def test_an_error_in_worker_init_fn_comes_with_that_workers_first_batch():
    def init(worker_id):
        if worker_id == 1:
            raise RuntimeError("init failed")
    got = []
    for lib in LIBS:
        it = iter(lib.utils.data.DataLoader(range(6), num_workers=2, worker_init_fn=init))
        first = plain(next(it))
        with pytest.raises(RuntimeError, match="Caught RuntimeError in DataLoader worker process 1") as info:
            next(it)
        got.append((first, info.value.args[0].rstrip().splitlines()[-1]))
    assert got[1] == got[0]


ERRORS = [
    (dict(num_workers=-1), ValueError, "num_workers option should be non-negative; use num_workers=0 to disable "
                                       "multiprocessing."),
    (dict(timeout=-1), ValueError, "timeout option should be non-negative"),
    (dict(prefetch_factor=2), ValueError, "prefetch_factor option could only be specified in multiprocessing.let "
                                          "num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor "
                                          "to None."),
    (dict(num_workers=1, prefetch_factor=-1), ValueError, "prefetch_factor option should be non-negative"),
    (dict(persistent_workers=True), ValueError, "persistent_workers option needs num_workers > 0"),
    (dict(multiprocessing_context="fork"), ValueError, "multiprocessing_context can only be used with multi-process "
                                                       "loading (num_workers > 0), but got num_workers=0"),
    (dict(num_workers=1, multiprocessing_context="nope"), ValueError, "multiprocessing_context option should "
                                                                      "specify a valid start method in"),
    (dict(num_workers=1, multiprocessing_context=3), TypeError, "multiprocessing_context option should be a valid "
                                                                "context object or a string specifying the start "
                                                                "method, but got multiprocessing_context=3"),
]


@pytest.mark.parametrize("kw, exc, message", ERRORS)
def test_option_errors_as_torch(kw, exc, message):
    texts = []
    for lib in LIBS:
        with pytest.raises(exc) as info:
            lib.utils.data.DataLoader(range(4), **kw)
        texts.append(str(info.value))
    assert texts[1] == texts[0]
    assert texts[1].startswith(message)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # (torch's half-made iterator's __del__)
def test_prefetch_factor_zero_fails_when_iterating():
    texts = []
    for lib in LIBS:
        loader = lib.utils.data.DataLoader(range(4), num_workers=1, prefetch_factor=0)
        with pytest.raises(AssertionError) as info:
            iter(loader)
        texts.append(str(info.value))
    assert texts[1] == texts[0] == "prefetch_factor must be greater than 0 for MultiProcessingDataLoaderIter"


def test_a_start_method_is_accepted_and_changes_nothing():
    got = []
    for lib in LIBS:
        lib.manual_seed(0)
        loader = lib.utils.data.DataLoader(draws_dataset(lib, 4), batch_size=2, num_workers=2,
                                           multiprocessing_context="fork", timeout=5)
        got.append(([plain(b) for b in loader], type(loader.multiprocessing_context).__name__))
    assert got[1] == got[0]


def test_more_workers_than_cpus_warns_as_torch():
    """torch warns when the loader is made and again when its workers start; its text and category."""
    n = len(os.sched_getaffinity(0)) + 1
    seen = []
    for lib in LIBS:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            list(lib.utils.data.DataLoader(range(2), num_workers=n))
        seen.append([(w.category, str(w.message)) for w in caught])
    assert seen[1] == seen[0]
    assert len(seen[1]) == 2 and seen[1][0][1].startswith(f"This DataLoader will create {n} worker processes")


def test_no_warning_within_the_cpu_count():
    for lib in LIBS:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            list(lib.utils.data.DataLoader(range(2), num_workers=1))


def test_num_workers_zero_still_draws_in_the_main_process():
    theirs, ours = both(draws_dataset, batch_size=2, shuffle=True, num_workers=0)
    assert ours == theirs
    assert {b[1][0] for b in ours[0][0]} == {-1}
