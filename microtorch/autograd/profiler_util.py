"""The profiler's results: events, their averages per name, torch's table, a Chrome trace.

`autograd/profiler.py` records; this module only reads what it recorded. A `FunctionEvent`
is one op run (or one `record_function` range, or one backward node), with its time range
in microseconds, its parent and children, and the bytes its outputs took. `EventList` is
a list of them with torch's methods: `key_averages()` groups them by name (and by input
shapes when asked), `table()` prints torch's columns, `export_chrome_trace(path)` writes a
JSON file that chrome://tracing and Perfetto open.
"""
import gzip
import json
import os
import threading


class _OnTheCpu:
    """What torch's events and averages say beyond the CPU's times and bytes: no device, no
    stack, no flops counted (the attributes exist so that torch's code reading them runs)."""

    use_device = None
    device_type = "CPU"
    node_id = -1
    is_async = False
    is_remote = False
    is_legacy = False
    overload_name = ""
    flops = 0
    stack = ()
    scope = 0
    device_memory_usage = 0
    self_device_memory_usage = 0
    device_time_total = 0.0
    self_device_time_total = 0.0

    cpu_time_str = property(lambda self: format_time(self.cpu_time))
    cpu_time_total_str = property(lambda self: format_time(self.cpu_time_total))
    self_cpu_time_total_str = property(lambda self: format_time(self.self_cpu_time_total))


class FunctionEvent(_OnTheCpu):
    """One recorded range: `name` (`key`), `time_range` (start and end in us), `cpu_parent`,
    `cpu_children`, `input_shapes`, and the bytes it allocated (`cpu_memory_usage`, its
    children's included; `self_cpu_memory_usage` without them)."""

    count = 1

    def __init__(self, id, name, start_us, end_us, thread, input_shapes=None, own_memory=0,
                 sequence_nr=-1, is_user_annotation=False):
        self.id, self.name, self.thread = id, name, thread
        self.time_range = Interval(start_us, end_us)
        self.input_shapes = input_shapes
        self.own_memory = own_memory
        self.sequence_nr = sequence_nr
        self.is_user_annotation = is_user_annotation
        self.cpu_parent = None
        self.cpu_children = []

    @property
    def key(self):
        return self.name

    @property
    def cpu_time_total(self):
        return self.time_range.elapsed_us()

    cpu_time = cpu_time_total

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def cpu_memory_usage(self):
        return self.own_memory + sum(c.cpu_memory_usage for c in self.cpu_children)

    @property
    def self_cpu_memory_usage(self):
        return self.own_memory

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} cpu_time={self.cpu_time_str} "
                f"start_us={self.time_range.start:.3f} end_us={self.time_range.end:.3f} "
                f"cpu_children={[c.id for c in self.cpu_children]} thread={self.thread} "
                f"input_shapes={self.input_shapes} cpu_memory_usage={self.cpu_memory_usage}>")


class Interval:
    def __init__(self, start, end):
        self.start, self.end = start, end

    def elapsed_us(self):
        return self.end - self.start


class FunctionEventAvg(_OnTheCpu):
    """The events of one key (a name, or a name and input shapes) added up: `count`, the
    totals, and `cpu_time` (the average)."""

    cpu_parent = None
    is_user_annotation = False

    def __init__(self):
        self.key, self.count, self.input_shapes = None, 0, None
        self.cpu_time_total = self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = self.self_cpu_memory_usage = 0
        self.cpu_children = []

    def add(self, other):
        if self.key is None:  # the first event sets the key (and the shapes, when grouped by them)
            self.key, self.is_user_annotation = other.key, other.is_user_annotation
        elif other.key != self.key:
            raise AssertionError(f"Expected keys to match: {self.key} and {other.key}")
        self.count += other.count
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        return self

    __iadd__ = add

    @property
    def cpu_time(self):
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
                f"cpu_time={self.cpu_time_str} input_shapes={self.input_shapes or ''} "
                f"cpu_memory_usage={self.cpu_memory_usage}>")


class EventList(list):
    """A list of FunctionEvents (or of their averages) with torch's EventList methods."""

    def __init__(self, *args, profile_memory=False, use_device=None, with_flops=False):
        super().__init__(*args)
        self._profile_memory = profile_memory
        self._use_device = use_device

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def __str__(self):
        return self.table()

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        """One FunctionEventAvg per name (per name and input shapes with group_by_input_shape),
        in the order the names first appear."""
        groups = {}
        for e in self:
            key = (e.key, str(e.input_shapes)) if group_by_input_shape else e.key
            avg = groups.get(key)
            if avg is None:
                avg = groups[key] = FunctionEventAvg()
                if group_by_input_shape:
                    avg.input_shapes = e.input_shapes
            avg.add(e)
        return EventList(groups.values(), profile_memory=self._profile_memory)

    def total_average(self):
        total = FunctionEventAvg()
        for e in self:
            total.count += e.count
            total.cpu_time_total += e.cpu_time_total
            total.self_cpu_time_total += e.self_cpu_time_total
        total.key = "Total"
        return total

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        """torch's table: one row per entry, sorted by the attribute `sort_by` (largest first)."""
        return build_table(self, sort_by, row_limit, max_name_column_width, max_shapes_column_width, header,
                           top_level_events_only, time_unit, self._profile_memory)

    def export_chrome_trace(self, path):
        """Write the events as a Chrome trace (open it in chrome://tracing or ui.perfetto.dev)."""
        trace = json.dumps(chrome_trace(self, path, self._profile_memory))
        if str(path).endswith(".gz"):  # (tensorboard_trace_handler(use_gzip=True))
            with gzip.open(path, "wt") as f:
                f.write(trace)
        else:
            with open(path, "w") as f:
                f.write(trace)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """The stacks for a flame graph, one line per stack: microtorch records no Python stacks (torch
        2.13's events carry none either), so the file is empty, as torch's is."""
        open(path, "w").close()

    def supported_export_stacks_metrics(self):
        return ["self_cpu_time_total"]


# ---- the table -----------------------------------------------------------------------------
_COLUMN = 12
_SPACING = 2


def format_time(us):
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def format_memory(nbytes):
    kb = 1024
    for unit, size in (("GB", kb ** 3), ("MB", kb ** 2), ("KB", kb)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} B"


def _share(part, total):
    return "NaN" if total == 0 else f"{part * 100.0 / total:.2f}%"


def _in_unit(us, default, unit):
    scale = {"s": 1e6, "ms": 1e3, "us": 1.0}.get(unit)
    return default if scale is None else f"{us / scale:.3f}{unit}"


def build_table(events, sort_by, row_limit, name_width, shapes_width, header, top_level_only, time_unit,
                profile_memory):
    """The rows of torch's profiler table (same headers, widths and formats), as one string."""
    if len(events) == 0:
        return ""
    if sort_by is not None:
        events = sorted(events, key=lambda e: getattr(e, sort_by.replace("cuda", "device")), reverse=True)
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    headers += ["CPU Mem", "Self CPU Mem"] if profile_memory else []
    headers.append("# of Calls")
    widths = [_capped(max(len(e.key) for e in events) + 4, name_width)] + [_COLUMN] * (len(headers) - 1)
    has_shapes = any(e.input_shapes for e in events)
    if has_shapes:
        headers.append("Input Shapes")
        widths.append(_capped(max(len(str(e.input_shapes)) for e in events) + 4, shapes_width))
    row = "".join("{: >" + str(w) + "}" + " " * _SPACING for w in widths)
    rule = "".join("-" * w + " " * _SPACING for w in widths)
    total = sum(e.self_cpu_time_total for e in events)
    lines = []
    if header is not None:
        lines += ["=" * (sum(widths) + _SPACING * (len(widths) - 1)), header]
    lines += [rule, row.format(*headers), rule]
    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_only and e.cpu_parent is not None:
            continue
        shown += 1
        lines.append(row.format(*_row(e, total, name_width, shapes_width, time_unit, profile_memory, has_shapes)))
    lines += [rule, f"Self CPU time total: {_in_unit(total, format_time(total), time_unit)}"]
    return "\n".join(lines) + "\n"


def _capped(width, limit):
    return width if limit is None else min(width, limit)


def _row(e, total, name_width, shapes_width, time_unit, profile_memory, has_shapes):
    name = e.key if name_width is None or len(e.key) < name_width - 3 else e.key[:name_width - 3] + "..."
    values = [name, _share(e.self_cpu_time_total, total),
              _in_unit(e.self_cpu_time_total, e.self_cpu_time_total_str, time_unit),
              _share(e.cpu_time_total, total), _in_unit(e.cpu_time_total, e.cpu_time_total_str, time_unit),
              _in_unit(e.cpu_time, e.cpu_time_str, time_unit)]
    if profile_memory:
        values += [format_memory(e.cpu_memory_usage), format_memory(e.self_cpu_memory_usage)]
    values.append(e.count)
    if has_shapes:
        values.append(str(e.input_shapes)[:shapes_width])  # (a slice to None keeps it whole)
    return values


# ---- the Chrome trace ------------------------------------------------------------------------
def chrome_trace(events, path, profile_memory):
    """torch's trace layout: metadata, one complete ('X') event per range with its input shapes,
    and an instant ('i') '[memory]' event per recorded allocation when memory was profiled."""
    pid = os.getpid()
    base = min((e.time_range.start for e in events), default=0.0)
    trace = [{"ph": "M", "name": "process_name", "ts": base, "pid": pid, "tid": 0, "args": {"name": "python"}},
             {"ph": "M", "name": "process_labels", "ts": base, "pid": pid, "tid": 0, "args": {"labels": "CPU"}}]
    for tid in sorted({e.thread for e in events}):
        trace.append({"ph": "M", "name": "thread_name", "ts": base, "pid": pid, "tid": tid,
                      "args": {"name": f"thread {tid} (python)"}})
    for i, e in enumerate(events):
        args = {"External id": e.id, "Record function id": 0, "Ev Idx": i}
        if e.sequence_nr >= 0:
            args["Sequence number"] = e.sequence_nr
        if e.input_shapes is not None:
            args["Input Dims"] = e.input_shapes
        trace.append({"ph": "X", "cat": "user_annotation" if e.is_user_annotation else "cpu_op", "name": e.name,
                      "pid": pid, "tid": e.thread, "ts": e.time_range.start, "dur": e.cpu_time_total, "args": args})
        if profile_memory and e.own_memory:
            trace.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": pid,
                          "tid": e.thread, "ts": e.time_range.end,
                          "args": {"Bytes": e.own_memory, "Device Type": 0, "Device Id": -1}})
    trace += _flows(events, pid)
    return {"schemaVersion": 1, "deviceProperties": [], "profile_memory": int(profile_memory),
            "displayTimeUnit": "ms", "traceEvents": trace, "traceName": str(path),
            "baseTimeNanoseconds": 0, "host_name": os.uname().nodename if hasattr(os, "uname") else "",
            "trace_id": f"{pid:x}{threading.get_ident():x}".upper()}


def _flows(events, pid):
    """torch's arrows from a forward op to the backward node it recorded ('s' to 'f', keyed by the
    sequence number): the first event with a number is the op, the last its node (the evaluate_function
    range between them begins with the node)."""
    by_seq = {}
    for e in events:
        if e.sequence_nr >= 0:
            by_seq.setdefault(e.sequence_nr, []).append(e)
    flows = []
    for seq, group in by_seq.items():
        if len(group) >= 3:
            op, node = group[0], group[-1]
            flows.append({"ph": "s", "id": seq, "pid": pid, "tid": op.thread, "ts": op.time_range.start,
                          "cat": "fwdbwd", "name": "fwdbwd"})
            flows.append({"ph": "f", "id": seq, "pid": pid, "tid": node.thread, "ts": node.time_range.start,
                          "cat": "fwdbwd", "name": "fwdbwd", "bp": "e"})
    return flows
