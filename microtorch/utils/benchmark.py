"""torch.utils.benchmark's Timer and Measurement: time a statement the way torch's tutorials do
(`Timer(stmt, globals=...).timeit(n)`, `.blocked_autorange()`), and print the result as torch does."""
import textwrap
import timeit as _timeit

import numpy as np

_WARN_IQR, _WARN_IQR_GROSS = 0.1, 0.25  # (torch's thresholds: IQR over median)


def _trim(code):
    """Dedented, without the newline a triple-quoted string starts with, nor trailing blanks."""
    code = textwrap.dedent(code)
    return (code[1:] if code.startswith("\n") else code).rstrip()


class TaskSpec:
    """What a Timer measures (its statement, setup and labels), shared with its Measurements."""

    def __init__(self, stmt, setup, global_setup="", label=None, sub_label=None, description=None, env=None,
                 num_threads=1):
        self.stmt, self.setup, self.global_setup = stmt, setup, global_setup
        self.label, self.sub_label, self.description = label, sub_label, description
        self.env, self.num_threads = env, num_threads

    @property
    def title(self):
        sub = f": {self.sub_label}" if self.sub_label else ""
        if self.label is not None:
            return self.label + sub
        if "\n" not in self.stmt:
            return self.stmt + sub
        return f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n" + textwrap.indent(self.stmt, "  ")

    def setup_str(self):
        if self.setup in ("", "pass"):
            return ""
        return f"setup:\n{textwrap.indent(self.setup, '  ')}" if "\n" in self.setup else f"setup: {self.setup}"

    def summarize(self):
        parts = [p for p in (self.title, self.description or "", self.setup_str()) if p]
        return "\n".join(p + "\n" if "\n" in p else p for p in parts)


def select_unit(t):
    """The unit torch prints a time of t seconds in, and its size in seconds."""
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(int(np.floor(np.log10(t) // 3)), "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[unit]


class Measurement:
    """The times of number_per_run runs of a statement, raw_times[i] seconds for the i-th block."""

    def __init__(self, number_per_run, raw_times, task_spec, metadata=None):
        self.number_per_run, self.raw_times, self.task_spec, self.metadata = number_per_run, raw_times, task_spec, metadata

    def __getattr__(self, name):  # (the TaskSpec's fields, as torch forwards them)
        if name in ("stmt", "setup", "global_setup", "label", "sub_label", "description", "env", "num_threads"):
            return getattr(self.task_spec, name)
        raise AttributeError(f"'Measurement' object has no attribute {name!r}")

    @property
    def times(self):
        """Seconds per run, one per block."""
        return [t / self.number_per_run for t in self.raw_times]

    def _quantile(self, q):
        return float(np.quantile(np.array(self.times, dtype=np.float64), q))

    @property
    def median(self):
        return self._quantile(0.5)

    @property
    def mean(self):
        return float(np.mean(self.times))

    @property
    def iqr(self):
        return self._quantile(0.75) - self._quantile(0.25)

    @property
    def title(self):
        return self.task_spec.title

    def meets_confidence(self, threshold=_WARN_IQR):
        return self.iqr / self.median < threshold

    @property
    def has_warnings(self):
        return not self.meets_confidence(_WARN_IQR)

    def _warning(self):
        if self.meets_confidence(_WARN_IQR):
            return []
        why = ("This suggests significant environmental influence." if not self.meets_confidence(_WARN_IQR_GROSS)
               else "This could indicate system fluctuation.")
        return [f"  WARNING: Interquartile range is {self.iqr / self.median * 100:.1f}% of the median measurement.\n"
                f"           {why}"]

    def __repr__(self):
        n, median = len(self.raw_times), self.median
        unit, scale = select_unit(median)
        lines = [object.__repr__(self), self.task_spec.summarize(), f"  {'Median: ' if n > 1 else ''}{median / scale:.2f} {unit}"]
        if n >= 4:
            lo, hi = self._quantile(0.25), self._quantile(0.75)
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} ({lo / scale:.2f} to {hi / scale:.2f})")
        threads = f"{self.num_threads} thread{'s' if self.num_threads > 1 else ''}"
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
                     f"{'per measurement,' if n > 1 else ','} {threads}")
        return "\n".join(lines + self._warning()).strip()


class Timer:
    """Times `stmt` (a string) after `setup`, with `globals` (and `torch`, which is microtorch here)."""

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=_timeit.default_timer, globals=None,
                 label=None, sub_label=None, description=None, env=None, num_threads=1, language="python"):
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if language not in ("python", "py"):
            raise ValueError(f"Timer: language={language!r} is not supported here: microtorch times Python "
                             "statements only (C++ needs torch's compiled extension)")
        if global_setup:
            raise ValueError(f"global_setup is C++ only, got `{global_setup}`. Most likely this code can simply "
                             "be moved to `setup`.")
        import microtorch
        names = dict(globals or {})
        names.setdefault("torch", microtorch)
        stmt, setup = _trim(stmt), _trim(setup)
        self._timer = _timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=names)
        self._task_spec = TaskSpec(stmt, setup, global_setup, label, sub_label, description, env, num_threads)

    def _time(self, number):
        return max(self._timer.timeit(number), 1e-9)  # (no statement takes less than a nanosecond)

    def timeit(self, number=1000000):
        """Runs stmt number times (after a short warm-up) and returns one Measurement."""
        self._time(max(number // 100, 2))
        return Measurement(number, [self._time(number)], self._task_spec)

    def repeat(self, repeat=-1, number=-1):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _block_size(self, min_run_time):
        """Runs per block: enough that the timer's own overhead is negligible (this also warms up)."""
        overhead = float(np.median([self._time(0) for _ in range(5)]))
        number = 1
        while number * 10 <= 2147483647:
            took = self._time(number)
            if (overhead / took <= 1e-4 and took >= min_run_time / 1000) or took > min_run_time:
                break
            number *= 10
        return number

    def _blocks(self, number, min_run_time, stop, max_run_time=None, callback=None):
        times, total, can_stop = [], 0.0, False
        while total < min_run_time or not can_stop:
            t = self._time(number)
            times.append(t)
            total += t
            if callback:
                callback(number, t)
            can_stop = stop(times)
            if max_run_time and total > max_run_time:
                break
        return Measurement(number, times, self._task_spec)

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        """Blocks of runs until min_run_time seconds have been measured."""
        return self._blocks(self._block_size(min_run_time), min_run_time, lambda times: True, callback=callback)

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0, callback=None):
        """Blocks of runs until their IQR is below threshold times their median (or max_run_time is spent)."""
        number = self._block_size(0.05)

        def steady(times):
            return len(times) > 3 and Measurement(number, times, self._task_spec).meets_confidence(threshold)
        return self._blocks(number, min_run_time, steady, max_run_time, callback)
