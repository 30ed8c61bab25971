"""torch.autograd.profiler: where the time of a forward and backward pass goes.

    with microtorch.autograd.profiler.profile() as prof:
        loss = model(x).sum()
        loss.backward()
    print(prof.key_averages().table(sort_by="self_cpu_time_total"))

While a profile records, every `Function.apply` is timed (through `function.intercept`) under
torch's name for the op (`aten::mul`), and backward is timed from the engine's events: each
node as `autograd::engine::evaluate_function: MulBackward0` holding `MulBackward0`, which holds
the ops its backward ran. The engine reports a node once its backward has returned, so a
node's range starts where the previous node's ended. `record_function("name")` adds a range of
your own. With `profile_memory=True`, an op is charged the bytes of the outputs it made (new
arrays, not views of its inputs) and the range running when an array is freed gets them back:
a teaching approximation of torch's allocator counts. Profiling adds its own cost to what it
measures, as torch's does; nobody profiling costs nothing (the op hook is not registered).
"""
import contextlib
import re
import time
import warnings
import weakref
from threading import get_ident  # (get_native_id is a system call, as slow as a small op)

import numpy as np

from .._tensor import Tensor
from . import _hooks, function
from .node import AccumulateGrad
from .profiler_util import EventList, FunctionEvent, FunctionEventAvg  # noqa: F401  (torch's names, importable here)

_active = None   # the recording _Recorder (one at a time)


# ---- torch's names for the ops ----------------------------------------------------------------
# Where the node's name does not give torch's op: nodes named after what torch's op returns
# (matmul's UnsafeViewBackward0), digits inside a word, and the in-place ops.
_NAMES = {"Matmul": "matmul", "SumTo": "sum", "_BasicIndex": "slice", "Xlog1pyNumberInput": "special_xlog1py",
          "Xlog1pyNumberOther": "special_xlog1py", "Xlog1py": "special_xlog1py", "Im2col": "im2col",
          "Col2im": "col2im", "Im2colNd": "im2col", "Col2imNd": "col2im", "Deg2Rad": "deg2rad", "Rad2Deg": "rad2deg",
          "GridSampler2d": "grid_sampler_2d", "GridSampler3d": "grid_sampler_3d", "LdlFactor": "linalg_ldl_factor_ex",
          "LdlSolve": "linalg_ldl_solve", "RemainderOfNumber": "remainder", "Copy": "copy_", "CopySlices": "copy_",
          "IndexPutImpl": "_index_put_impl_",
          "Fill": "fill_", "FillTensor": "fill_", "Zero": "zero_"}
# torch's ops whose names begin with an underscore, which their nodes' names drop
_UNDERSCORED = frozenset(
    "to_copy trilinear unique2 unsafe_view reshape_alias euclidean_dist prelu_kernel prelu_kernel_backward "
    "fft_c2c fft_r2c fft_c2r pack_padded_sequence sparse_coo_tensor_with_dims_and_tensors sparse_addmm sparse_sum "
    "weight_norm_interface "
    "softmax_backward_data log_softmax_backward_data adaptive_avg_pool2d_backward "
    "scaled_dot_product_flash_attention_for_cpu upsample_bilinear2d_aa upsample_bilinear2d_aa_backward "
    "upsample_bicubic2d_aa upsample_bicubic2d_aa_backward upsample_nearest_exact1d upsample_nearest_exact1d_backward "
    "upsample_nearest_exact2d upsample_nearest_exact2d_backward upsample_nearest_exact3d "
    "upsample_nearest_exact3d_backward".split())
_PYTHON_FUNCTIONS = frozenset({"BackwardHookFunction", "CrossMapLRN2d"})  # torch's own are autograd.Functions too
_names = {}


def op_name(cls):
    """torch's profiler name of the op a Function class runs: `aten::mul` for Mul, the class's
    own name for a Function written in Python (outside microtorch, as torch names a custom one)."""
    name = _names.get(cls)
    if name is None:
        name = _names[cls] = _torch_name(cls)
    return name


def _torch_name(cls):
    if not cls.__module__.startswith("microtorch.") or cls.__name__ in _PYTHON_FUNCTIONS:
        return cls.__name__
    node = cls._backward_cls.__name__
    if cls.__name__ in _NAMES:
        base = _NAMES[cls.__name__]
    elif re.search(r"Backwards?\d+(_copy)?$", node):   # torch's node name: the op's name in CamelCase
        base = _snake(re.sub(r"Backwards?\d+(_copy)?$", "", node))
    else:                                                # an error node or a helper: the class's name
        base = _snake(cls.__name__.lstrip("_"))
    return "aten::" + ("_" + base if base in _UNDERSCORED else base)


def _snake(camel):
    """MaxPool2DWithIndices -> max_pool2d_with_indices, FftC2C -> fft_c2c, SmoothL1Loss -> smooth_l1_loss:
    a capital after a digit starts a word only when lower-case letters follow it."""
    camel = re.sub(r"(?<=\d)([A-Z])(?![a-z])", lambda m: m.group(1).lower(), camel)
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", camel).lower()


# ---- what a recording keeps ----------------------------------------------------------------------
class _Range:
    """One open or closed range: times in ns, its parent range, the bytes it is charged."""

    __slots__ = ("name", "start", "end", "parent", "shapes", "memory", "thread", "user", "seq", "folds")

    def __init__(self, name, start, parent, thread, shapes=None, user=False):
        self.name, self.start, self.end, self.parent = name, start, None, parent
        self.shapes, self.memory, self.thread, self.user, self.seq = shapes, 0, thread, user, -1
        self.folds = None  # an in-place op's range: the name of the out-of-place op that does its work


def _shapes(args):
    """record_shapes: each argument's shape, as torch shows them: a tensor's (or an index array's, which
    some ops take as a numpy array) shape, [] for anything else (a number, a dim, a list of tensors)."""
    return [list(a.shape) if isinstance(a, (Tensor, np.ndarray)) else [] for a in args]


def _root(array):
    """The array that owns the memory of `array` (numpy's chain of .base)."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


class _Recorder:
    """The ranges of one recording, per thread: the stack of open ones, and during backward
    where the running node began (the engine reports it when it is done)."""

    def __init__(self, record_shapes, profile_memory):
        self.record_shapes, self.profile_memory = record_shapes, profile_memory
        self.t0 = time.perf_counter_ns()
        self.ranges = []      # in the order they began
        self.stacks = {}      # thread -> open ranges, innermost last
        self.backwards = {}   # thread -> [[start, index into ranges, parent, pending accumulate]] per backward
        self.watched = {}     # id of a weak reference to an array an op made -> (the reference, its bytes)

    # -- ranges --
    def open(self, name, shapes=None, user=False):
        tid = get_ident()
        stack = self.stacks.setdefault(tid, [])
        r = _Range(name, time.perf_counter_ns(), stack[-1] if stack else None, tid, shapes, user)
        stack.append(r)
        self.ranges.append(r)
        return r

    def open_range(self, name, args, folds=None):
        """A range around a public function (_hooks.composite) or an in-place op; returns what closes it. folds: the
        op that does an in-place op's work shows as the in-place op itself (torch shows `aten::add_`, no
        `aten::add` inside it)."""
        stack = self.stacks.get(get_ident())
        if folds is not None and stack and stack[-1].name == name:  # (the same in-place op, entered again)
            return _nothing
        r = self.open(name, _shapes(args) if self.record_shapes else None)
        r.folds = folds
        return lambda: self.close(r)

    def close(self, r):
        r.end = time.perf_counter_ns()
        stack = self.stacks.get(r.thread, ())
        if r in stack:
            stack.remove(r)

    # -- ops --
    def run_op(self, cls, args, kwargs):
        name = op_name(cls)
        stack = self.stacks.get(get_ident())
        if stack and stack[-1].folds is not None and name in (stack[-1].folds, stack[-1].name):
            return self._folded(stack[-1], cls, args, kwargs)
        r = self.open(name, _shapes(args) if self.record_shapes else None)
        try:
            out = _run_rest(cls, args, kwargs)
        finally:
            self.close(r)
        first = out[0] if type(out) is tuple and out else out
        node = getattr(first, "grad_fn", None)
        if node is not None and type(node) is cls._backward_cls:  # the node it recorded: torch's sequence number
            r.seq = node._seq
        if self.profile_memory:
            self.charge(r, args, out)
        return out

    def _folded(self, r, cls, args, kwargs):
        """The op doing the work of the in-place op whose range r is: no range of its own, its node's sequence
        number is r's."""
        r.folds = None  # (once: another op of the same name inside it is an op of its own)
        out = _run_rest(cls, args, kwargs)
        node = getattr(out, "grad_fn", None)
        if node is not None and type(node) is cls._backward_cls:
            r.seq = node._seq
        return out

    def charge(self, r, args, out):
        """Charge r the bytes of out's new arrays, and watch them to give the bytes back when freed."""
        seen = {id(_root(a._data)) for a in args if isinstance(a, Tensor) and isinstance(a._data, np.ndarray)}
        for o in out if type(out) is tuple else (out,):
            if isinstance(o, Tensor) and isinstance(o._data, np.ndarray):
                root = _root(o._data)
                if id(root) not in seen:
                    seen.add(id(root))
                    r.memory += root.nbytes
                    ref = weakref.ref(root, self._gone)
                    self.watched[id(ref)] = ref, root.nbytes

    def _gone(self, ref):
        """An array an op made was freed: the range running now gets its bytes back."""
        watched = self.watched.pop(id(ref), None)
        if watched is not None:
            self.freed(watched[1])

    def freed(self, nbytes):
        stack = self.stacks.get(get_ident())
        if stack:
            stack[-1].memory -= nbytes
        else:  # torch's row for memory freed outside any op
            r = self.open("[memory]")
            self.close(r)
            r.end, r.memory = r.start, -nbytes   # (an instant: a backward node may take it, see _node_ran)

    # -- backward, from the engine's events --
    def on_event(self, event):
        kind = type(event).__name__
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, event, get_ident())

    def _started(self, event, tid):
        stack = self.stacks.get(tid)
        self.backwards.setdefault(tid, []).append([time.perf_counter_ns(), len(self.ranges),
                                                   stack[-1] if stack else None, None])

    def _node(self, event, tid):
        now = time.perf_counter_ns()
        runs = self.backwards.get(tid)
        if not runs:
            return
        run = runs[-1]
        self._end_accumulate(run)
        node = event.node
        if node.name() == "GraphRoot":
            run[0], run[1] = now, len(self.ranges)
        elif type(node) is AccumulateGrad:  # reported before it runs: its ranges stay open until it is done
            outer = self.open(_EVALUATE + node.name(), [] if self.record_shapes else None)
            run[3] = (outer, self.open(node.name(), self._grad_shapes(event)))
        else:
            self._node_ran(run, node, now, tid, self._grad_shapes(event))

    def _grad_shapes(self, event):
        """record_shapes: a node's inputs are the gradients it received (torch shows their shapes)."""
        return [list(g.shape) for g in event.incoming if g is not None] if self.record_shapes else None

    def _node_ran(self, run, node, now, tid, shapes):
        """The node that just returned ran since run[0]: its two ranges take the ranges begun since then
        (memory freed meanwhile outside any op is charged to the node)."""
        start, first, parent = run[0], run[1], run[2]
        outer = _Range(_EVALUATE + node.name(), start, parent, tid, [] if self.record_shapes else None)
        inner = _Range(node.name(), start, outer, tid, shapes)
        outer.end = inner.end = now
        outer.seq = inner.seq = node._seq
        taken = [outer, inner]
        for r in self.ranges[first:]:
            if r.parent is not parent or r.thread != tid:
                taken.append(r)
            elif r.name == "[memory]" and r.end == r.start:
                inner.memory += r.memory
            else:
                r.parent = inner
                taken.append(r)
        self.ranges[first:] = taken
        run[0], run[1] = now, len(self.ranges)

    def _end_accumulate(self, run):
        if run[3] is not None:
            outer, inner = run[3]
            self.close(inner)
            self.close(outer)
            run[3] = None
            run[0], run[1] = outer.end, len(self.ranges)

    def _accumulated(self, event, tid):
        runs = self.backwards.get(tid)
        if runs:
            self._end_accumulate(runs[-1])

    def _finished(self, event, tid):
        runs = self.backwards.get(tid)
        if runs:
            self._end_accumulate(runs.pop())

    # -- the end --
    def stop(self):
        """Close what is still open, stop watching arrays, and return the FunctionEvents."""
        now = time.perf_counter_ns()
        for r in self.ranges:
            if r.end is None:
                r.end = now
        self.watched.clear()   # (a dropped weak reference calls nothing)
        return self.events()

    def events(self):
        ranges = sorted(self.ranges, key=lambda r: (r.start, _depth(r)))
        threads = {}   # numbered 1, 2... in the order they appear
        events = {}
        for i, r in enumerate(ranges):
            thread = threads.setdefault(r.thread, len(threads) + 1)
            e = FunctionEvent(i + 1, r.name, (r.start - self.t0) / 1e3, (r.end - self.t0) / 1e3, thread,
                              r.shapes if r.shapes is not None else ([] if self.record_shapes else None),
                              r.memory, r.seq, is_user_annotation=r.user)
            parent = events.get(id(r.parent)) if r.parent is not None else None
            if parent is not None:
                e.cpu_parent = parent
                parent.cpu_children.append(e)
            events[id(r)] = e
        return EventList(events.values(), profile_memory=self.profile_memory)


_EVALUATE = "autograd::engine::evaluate_function: "


def _nothing():
    pass
_HANDLERS = {"BackwardStarted": _Recorder._started, "NodeExecuting": _Recorder._node,
             "GradAccumulated": _Recorder._accumulated, "BackwardFinished": _Recorder._finished}


def _depth(r):
    depth = 0
    while r.parent is not None:
        r, depth = r.parent, depth + 1
    return depth


def _on_apply(cls, args, kwargs):
    """The op hook: every Function.apply, timed by the recording profile."""
    recorder = _active
    if recorder is None:
        return NotImplemented
    return recorder.run_op(cls, args, kwargs)


def _run_rest(cls, args, kwargs):
    """What Function.apply would have done without this hook: the hooks after it, else the op."""
    chain = function._interceptors
    after = chain[chain.index(_on_apply) + 1:] if _on_apply in chain else ()
    for fn in after:
        result = fn(cls, args, kwargs)
        if result is not NotImplemented:
            return result
    return function.run(cls, args, kwargs)


def _start(record_shapes, profile_memory):
    global _active
    if _active is not None:
        raise RuntimeError("A profiler is already recording: microtorch records one profile at a time. Close the "
                           "outer `with profile(...)` block first, or profile inside it with record_function.")
    recorder = _Recorder(record_shapes, profile_memory)
    recorder.listener = _hooks.add_listener(recorder.on_event)
    function.intercept(_on_apply, first=True)
    _hooks.range_opener = recorder.open_range
    _active = recorder
    return recorder


def _stop(recorder):
    global _active
    if _active is recorder:
        _active = None
        function.stop_intercepting(_on_apply)
        _hooks.range_opener = None
    recorder.listener.remove()
    return recorder.stop()


class profile:
    """Record the ops run inside the block; then `key_averages()`, `table()`,
    `export_chrome_trace(path)`, `function_events`. profile_memory=True charges each op the bytes of
    the new arrays it returns (a teaching approximation of torch's allocator counts). CPU only:
    use_cuda, with_stack, with_flops and with_modules are accepted and record nothing more."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False, with_flops=False,
                 profile_memory=False, with_stack=False, with_modules=False, use_kineto=False, use_cpu=True,
                 experimental_config=None, acc_events=False, custom_trace_id_callback=None):
        if use_cuda:
            warnings.warn("The attribute `use_cuda` will be deprecated soon, please use ``use_device = 'cuda'`` "
                          "instead.", FutureWarning, stacklevel=2)
            warnings.warn("CUDA is not available, disabling CUDA profiling", UserWarning, stacklevel=2)
        self.enabled, self.record_shapes, self.profile_memory = enabled, record_shapes, profile_memory
        self.with_flops, self.with_stack, self.use_device = with_flops, with_stack, None
        self.function_events = None
        self._recorder = None

    def __enter__(self):
        if self.enabled:
            self.function_events = None
            self._recorder = _start(self.record_shapes, self.profile_memory)
        return self

    def __exit__(self, *exc):
        if self._recorder is not None:
            self.function_events = _stop(self._recorder)
            self._recorder = None
        return False

    def _events(self):
        return self.function_events if self.function_events is not None else EventList()

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        return self._events().key_averages(group_by_input_shape, group_by_stack_n, group_by_overload_name)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        return self._events().table(sort_by, row_limit, max_src_column_width, max_name_column_width,
                                    max_shapes_column_width, header, top_level_events_only, time_unit)

    def export_chrome_trace(self, path):
        return self._events().export_chrome_trace(path)

    def total_average(self):
        return self._events().total_average()

    @property
    def self_cpu_time_total(self):
        return self._events().self_cpu_time_total

    def __repr__(self):
        return "<unfinished torch.autograd.profile>" if self.function_events is None else repr(self.function_events)

    def __str__(self):
        return "<unfinished torch.autograd.profile>" if self.function_events is None else self.table()


class record_function(contextlib.ContextDecorator):
    """A named range of your own in the profile (`with record_function("step"):` or as a
    decorator); nothing happens when no profile is recording."""

    def __init__(self, name, args=None):
        self.name, self.args = name, args
        self._open = []   # (recorder, range) per entry: a decorated function may recurse

    def __enter__(self):
        recorder = _active
        self._open.append((recorder, recorder.open(self.name, user=True) if recorder is not None else None))
        return self

    def __exit__(self, *exc):
        recorder, r = self._open.pop()
        if r is not None:
            recorder.close(r)
        return False
