"""torch.profiler.profile: the autograd profiler with activities, a schedule of steps, and a
callback when a recorded cycle is ready (tensorboard_trace_handler writes it to a directory)."""
import enum
import os
import warnings

from ..autograd import profiler as _autograd_profiler
from ..autograd.profiler_util import EventList


class ProfilerActivity(enum.Enum):
    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3
    DEVICE_STOPPED = 4


_RECORDING = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)


def supported_activities():
    """microtorch runs on the CPU only."""
    return {ProfilerActivity.CPU}


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """Which steps to record: after skip_first steps, cycles of `wait` idle steps, `warmup` steps
    and `active` recorded ones (the last one saves: on_trace_ready is called), `repeat` times
    (0: until the end). Returns step -> ProfilerAction, as torch's."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} (need >= 0), "
            f"active={active} (need > 0), repeat={repeat} (need >= 0), skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results", stacklevel=2)

    def schedule_fn(step):
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:
            step += wait   # the first cycle starts without its wait
        cycle = wait + warmup + active
        if repeat > 0 and step / cycle >= repeat:
            return ProfilerAction.NONE
        at = step % cycle
        if at < wait:
            return ProfilerAction.NONE
        if at < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if at < cycle - 1 else ProfilerAction.RECORD_AND_SAVE
    return schedule_fn


def _always_record(step):
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False, use_python_export=False):
    """An on_trace_ready callback that writes each recorded cycle as
    `<dir_name>/<worker_name>.<time in ns>.pt.trace.json` (worker_name: host_pid)."""
    import socket
    import time

    def handler_fn(prof):
        nonlocal worker_name
        try:
            os.makedirs(dir_name, exist_ok=True)
        except OSError as e:
            raise RuntimeError("Can't create directory: " + dir_name) from e
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        name = f"{worker_name}.{time.time_ns()}.pt.trace.json" + (".gz" if use_gzip else "")
        prof.export_chrome_trace(os.path.join(dir_name, name))
    return handler_fn


class profile(_autograd_profiler.profile):
    """torch.profiler.profile: records while the schedule says so (always, without one); call
    `prof.step()` at the end of each training step. Each step recorded is a `ProfilerStep*` range."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False, use_cuda=None,
                 custom_trace_id_callback=None):
        super().__init__(record_shapes=record_shapes, profile_memory=profile_memory, with_stack=with_stack,
                         with_flops=with_flops, use_cuda=bool(use_cuda))
        self.activities = set(activities) if activities else supported_activities()
        if self.activities - supported_activities():   # (torch's words on a machine without a GPU)
            warnings.warn("CUDA is not available, disabling CUDA profiling", UserWarning, stacklevel=2)
        self.acc_events = acc_events
        self.schedule = schedule if schedule is not None else _always_record
        self._stepped = schedule is not None   # torch marks steps only under a schedule
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.current_action = None
        self._step_range = None
        self._earlier = ()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        self.step_num = 0
        self.current_action = self.schedule(0)
        self._enter_action()

    def stop(self):
        self._close_step()
        if self.current_action in _RECORDING:
            self._save()
        self.current_action = None

    def step(self):
        """The end of one training step: record, save or idle as the schedule says for the next."""
        self._close_step()
        previous = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        if previous == ProfilerAction.RECORD_AND_SAVE or (previous in _RECORDING and
                                                          self.current_action not in _RECORDING):
            self._save()
        self._enter_action()

    def _enter_action(self):
        if self.current_action not in _RECORDING:
            return
        if self._recorder is None:
            if self.function_events is not None and not self.acc_events:
                warnings.warn("Warning: Profiler clears events at the end of each cycle. Only events from the current "
                              "cycle will be reported. To keep events across cycles, set acc_events=True.",
                              UserWarning, stacklevel=3)
            self._earlier = self.function_events if self.acc_events and self.function_events is not None else ()
            super().__enter__()
        if self._stepped and self._recorder is not None:
            self._step_range = _autograd_profiler.record_function("ProfilerStep*")  # (torch names every step so)
            self._step_range.__enter__()

    def _close_step(self):
        if self._step_range is not None:
            self._step_range.__exit__(None, None, None)
            self._step_range = None

    def _save(self):
        super().__exit__(None, None, None)
        if self._earlier:   # acc_events: the cycles before this one too
            self.function_events = EventList([*self._earlier, *self.function_events],
                                             profile_memory=self.profile_memory)
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def events(self):
        return self.function_events if self.function_events is not None else EventList()

    def export_chrome_trace(self, path, use_python_export=False):
        return super().export_chrome_trace(path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        return self.events().export_stacks(path, metric)

    def export_memory_timeline(self, path, device=None):
        raise NotImplementedError("export_memory_timeline is not available in microtorch: its profiler counts the "
                                  "bytes each op allocates (profile_memory=True, the 'CPU Mem' columns of table()) "
                                  "but keeps no timeline of the allocator.")
