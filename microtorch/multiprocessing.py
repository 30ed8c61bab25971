"""torch.multiprocessing: Python's multiprocessing under torch's name, so `import torch.multiprocessing as mp` and
`mp.Pool(...)` run unchanged. microtorch's tensors are numpy arrays underneath and pickle as such, so a worker gets a
copy (torch moves CPU tensors through shared memory instead; the sharing strategies are kept as names only)."""
import multiprocessing
import traceback
from multiprocessing import *  # noqa: F401,F403 (the module's whole API, as torch's re-exports it)

__all__ = multiprocessing.__all__ + ["get_all_sharing_strategies", "get_sharing_strategy", "set_sharing_strategy",
                                     "spawn", "start_processes", "ProcessContext", "ProcessRaisedException",
                                     "ProcessExitedException"]

_STRATEGIES = {"file_descriptor", "file_system"}
_strategy = "file_descriptor"


def get_all_sharing_strategies():
    return set(_STRATEGIES)


def get_sharing_strategy():
    return _strategy


def set_sharing_strategy(new_strategy):
    global _strategy
    if new_strategy not in _STRATEGIES:
        raise AssertionError(f"sharing strategy {new_strategy!r} is not one of {sorted(_STRATEGIES)}")
    _strategy = new_strategy


class ProcessException(Exception):
    def __init__(self, msg, error_index, pid):
        super().__init__(msg)
        self.msg, self.error_index, self.pid = msg, error_index, pid


class ProcessRaisedException(ProcessException):
    """A spawned process raised: the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """A spawned process exited with a non-zero code (or a signal) without raising."""

    def __init__(self, msg, error_index, pid, exit_code):
        super().__init__(msg, error_index, pid)
        self.exit_code = exit_code


def _wrap(fn, i, args, errors):
    """A worker: fn(i, *args), its traceback sent home if it raises."""
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass
    except Exception:
        errors.put(traceback.format_exc())
        raise SystemExit(1)


class ProcessContext:
    """The processes start_processes began, with join() raising the first failure as torch's does."""

    def __init__(self, processes, error_queues):
        self.processes, self.error_queues = processes, error_queues

    def pids(self):
        return [p.pid for p in self.processes]

    def join(self, timeout=None):
        """Wait for every process; True once all ended. A failed one raises, and the others are stopped."""
        for p in self.processes:
            p.join(timeout)
        for i, (p, errors) in enumerate(zip(self.processes, self.error_queues)):
            if p.exitcode not in (None, 0):
                for other in self.processes:
                    if other.is_alive():
                        other.terminate()
                if not errors.empty():
                    raise ProcessRaisedException(f"\n\n-- Process {i} terminated with the following error:\n"
                                                 + errors.get(), i, p.pid)
                raise ProcessExitedException(f"process {i} terminated with exit code {p.exitcode}", i, p.pid,
                                             p.exitcode)
        return all(p.exitcode is not None for p in self.processes)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Run fn(i, *args) in nprocs processes, i = 0..nprocs-1; join them (or return their ProcessContext)."""
    ctx = multiprocessing.get_context(start_method)
    queues = [ctx.SimpleQueue() for _ in range(nprocs)]
    processes = [ctx.Process(target=_wrap, args=(fn, i, args, q), daemon=daemon) for i, q in enumerate(queues)]
    for p in processes:
        p.start()
    context = ProcessContext(processes, queues)
    if not join:
        return context
    while not context.join():
        pass


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """start_processes with the 'spawn' start method (torch warns for any other and starts them with it)."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)
