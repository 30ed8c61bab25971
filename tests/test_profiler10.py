"""The autograd profiler and torch.profiler beside torch 2.13: event names, counts and nesting
(never times), input shapes, memory, the table's layout, the Chrome trace, schedules, and that
profiling changes no value or gradient."""
import json
import re
import warnings

import numpy as np
import pytest
import torch
import torch.profiler

import microtorch as mt
import microtorch.profiler
from microtorch.autograd import function


def _data(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _profiled(lib, program, setup=lambda lib: (), **options):
    """Profile program(lib, *setup(lib)): what setup makes is made before the profile starts."""
    made = setup(lib)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with lib.autograd.profiler.profile(**options) as prof:
            program(lib, *made)
    return prof


def _tree(prof):
    """(name, parent's name) of every event, in the order they began."""
    events = prof.function_events if hasattr(prof, "function_events") else prof.events()
    return [(e.name, e.cpu_parent.name if e.cpu_parent is not None else None) for e in events]


def _top_level(prof):
    return [e.name for e in prof.function_events if e.cpu_parent is None]


def _tutorial_tensors(lib):
    # introyt/autogradyt_tutorial
    return (lib.tensor(_data(2, 3), requires_grad=True), lib.tensor(_data(2, 3, seed=1), requires_grad=True),
            lib.ones(2, 3, requires_grad=True))


def _tutorial(lib, x, y, z):
    for _ in range(10):
        z = (z / x) * y
    return z


def test_the_tutorials_lines_give_torchs_rows():
    ours, theirs = (_profiled(lib, _tutorial, _tutorial_tensors, use_cuda=False) for lib in (mt, torch))
    assert _tree(ours) == _tree(theirs)
    counts = {r.key: r.count for r in ours.key_averages()}
    assert counts == {r.key: r.count for r in theirs.key_averages()} == {"aten::div": 10, "aten::mul": 10}
    table = ours.key_averages().table(sort_by="self_cpu_time_total")
    assert table.splitlines()[:3] == theirs.key_averages().table(sort_by="self_cpu_time_total").splitlines()[:3]
    assert "aten::div" in table and table.splitlines()[-1].startswith("Self CPU time total: ")


# one op each, as the tutorials write them: the names torch's profiler gives the op a user called
OPS = {
    "mul": lambda lib, x, y: x * y, "mul_number": lambda lib, x, y: x * 2, "add": lambda lib, x, y: x + y,
    "add_number": lambda lib, x, y: x + 1, "rsub": lambda lib, x, y: 1 - x, "sub": lambda lib, x, y: x - y,
    "div": lambda lib, x, y: x / y, "div_number": lambda lib, x, y: x / 2, "neg": lambda lib, x, y: -x,
    "exp": lambda lib, x, y: x.exp(), "tanh": lambda lib, x, y: x.tanh(), "sigmoid": lambda lib, x, y: x.sigmoid(),
    "relu": lambda lib, x, y: x.relu(), "sum": lambda lib, x, y: x.sum(), "sum_dim": lambda lib, x, y: x.sum(1),
    "mean": lambda lib, x, y: x.mean(), "pow": lambda lib, x, y: x.pow(2), "pow_operator": lambda lib, x, y: x ** 2,
    "mm": lambda lib, x, y: x.mm(y.t()), "t": lambda lib, x, y: x.t(), "view": lambda lib, x, y: x.view(12),
    "unsqueeze": lambda lib, x, y: x.unsqueeze(0), "softmax": lambda lib, x, y: x.softmax(1),
    "log_softmax": lambda lib, x, y: lib.nn.functional.log_softmax(x, 1), "select": lambda lib, x, y: x[0],
    "slice": lambda lib, x, y: x[:, 1:3], "transpose": lambda lib, x, y: x.transpose(0, 1),
    "cat": lambda lib, x, y: lib.cat([x, y]), "stack": lambda lib, x, y: lib.stack([x, y]),
    "clone": lambda lib, x, y: x.clone(), "abs": lambda lib, x, y: x.abs(), "max": lambda lib, x, y: x.max(),
    "mse_loss": lambda lib, x, y: lib.nn.functional.mse_loss(x, y), "log1p": lambda lib, x, y: x.abs().log1p(),
}


@pytest.mark.parametrize("op", sorted(OPS))
def test_an_op_is_named_as_torch_names_it(op):
    def program(lib, x, y):
        with lib.autograd.profiler.record_function("op"):
            OPS[op](lib, x, y)
    ours, theirs = (_profiled(lib, program, lambda lib: (lib.tensor(_data(3, 4), requires_grad=True),
                                                         lib.tensor(_data(3, 4, seed=1))))
                    for lib in (mt, torch))
    # torch's children of an op are its kernels (aten::empty...); the op the user called is what matches
    assert [n for n, p in _tree(ours) if p == "op"] == [n for n, p in _tree(theirs) if p == "op" and
                                                        n != "aten::broadcast_tensors"]


# torch records the function the user called around the op that does the work (aten::matmul holding
# aten::mm); microtorch's public functions that choose their Function do too (profiler.composite)
COMPOSITE = {
    "matmul": lambda lib, x, y: x @ y.t(), "matmul_vector": lambda lib, x, y: x @ y[0],
    "reshape": lambda lib, x, y: x.reshape(12), "linear": lambda lib, x, y: lib.nn.functional.linear(x, y),
    "cross_entropy": lambda lib, x, y: lib.nn.functional.cross_entropy(x, _TARGETS[lib.__name__]),
}
_TARGETS = {"microtorch": mt.tensor([0, 1, 3]), "torch": torch.tensor([0, 1, 3])}  # (made outside the profile)


@pytest.mark.parametrize("op", sorted(COMPOSITE))
def test_a_composite_op_is_named_as_torch_names_it(op):
    OPS[op] = COMPOSITE[op]
    try:
        test_an_op_is_named_as_torch_names_it(op)
    finally:
        del OPS[op]


def _backward_program(lib, x, y):
    (x / y).tanh().sum().backward()


def _two_leaves(lib):
    return lib.tensor(_data(2, 3), requires_grad=True), lib.tensor(_data(2, 3, seed=1), requires_grad=True)


_EVALUATE = "autograd::engine::evaluate_function: "


def _node_tree(prof):
    """The backward part of the tree: evaluate_function ranges and the nodes inside them."""
    return [(n, p) for n, p in _tree(prof) if n.startswith("autograd::engine::evaluate_function: ")
            or (p or "").startswith("autograd::engine::evaluate_function: ")]


def test_backward_nodes_are_nested_and_counted_as_torchs():
    ours, theirs = (_profiled(lib, _backward_program, _two_leaves) for lib in (mt, torch))
    assert _node_tree(ours) == _node_tree(theirs)
    for e in ours.function_events:
        if e.name.startswith("autograd::engine::evaluate_function: "):
            assert [c.name for c in e.cpu_children] == [e.name.split(": ", 1)[1]]


def _children(prof, node):
    return sorted(c.name for e in prof.function_events if e.name == node for c in e.cpu_children)


def test_a_backward_node_holds_the_ops_its_backward_ran():
    ours, theirs = (_profiled(lib, _backward_program, _two_leaves) for lib in (mt, torch))
    assert _children(ours, "DivBackward0") == _children(theirs, "DivBackward0")


def test_every_backward_node_holds_the_ops_its_backward_ran():
    ours, theirs = (_profiled(lib, _backward_program, _two_leaves) for lib in (mt, torch))
    for node in ("SumBackward0", "TanhBackward0"):
        assert _children(ours, node) == _children(theirs, node)


def test_a_custom_function_is_named_by_its_class_as_in_torch():
    def program(lib, x):
        class Twice(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2
        Twice.apply(x).sum().backward()
    ours, theirs = (_profiled(lib, program, lambda lib: (lib.tensor(_data(3), requires_grad=True),))
                    for lib in (mt, torch))
    assert ("aten::mul", "Twice") in _tree(ours) and ("aten::mul", "Twice") in _tree(theirs)
    assert ("TwiceBackward", "autograd::engine::evaluate_function: TwiceBackward") in _tree(ours)
    assert _node_tree(ours) == _node_tree(theirs)


def test_record_function_as_a_block_and_as_a_decorator():
    @mt.autograd.profiler.record_function("helper")
    def helper(x):
        return x * 3

    x = mt.tensor(_data(3), requires_grad=True)
    with mt.profiler.profile() as prof:
        with mt.profiler.record_function("outer"):
            helper(x + 1)
    assert _tree(prof) == [("outer", None), ("aten::add", "outer"), ("helper", "outer"), ("aten::mul", "helper")]
    assert [e.is_user_annotation for e in prof.events()] == [True, False, True, False]
    assert np.array_equal(helper(x).detach().numpy(), x.detach().numpy() * 3)   # no profile: just the function


def test_self_time_is_total_minus_children():
    prof = _profiled(mt, _backward_program, _two_leaves)
    for e in prof.function_events:
        assert 0 <= e.self_cpu_time_total <= e.cpu_time_total
        assert e.self_cpu_time_total == pytest.approx(e.cpu_time_total - sum(c.cpu_time_total for c in e.cpu_children))
        if e.cpu_parent is not None:
            p = e.cpu_parent.time_range
            assert p.start <= e.time_range.start and e.time_range.end <= p.end
    top = sum(e.cpu_time_total for e in prof.function_events if e.cpu_parent is None)
    assert prof.self_cpu_time_total == pytest.approx(top)
    avg = prof.key_averages()
    assert sum(r.count for r in avg) == len(prof.function_events)
    assert all(r.cpu_time == pytest.approx(r.cpu_time_total / r.count) for r in avg)


def _recipe(lib):
    # recipes/recipes/profiler_recipe, with a small model
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 2))
    inputs = lib.tensor(_data(5, 4))
    with lib.profiler.profile(activities=[lib.profiler.ProfilerActivity.CPU], record_shapes=True,
                              profile_memory=True) as prof:
        with lib.profiler.record_function("model_inference"):
            out = model(inputs)
        out.sum().backward()
    return prof


def test_the_recipes_memory_columns_are_torchs():
    ours, theirs = _recipe(mt), _recipe(torch)
    ours_rows = {r.key: r for r in ours.key_averages()}
    theirs_rows = {r.key: r for r in theirs.key_averages()}
    for key in ("model_inference", "aten::addmm", "aten::relu"):
        assert ours_rows[key].cpu_memory_usage == theirs_rows[key].cpu_memory_usage
    assert ours_rows["model_inference"].self_cpu_memory_usage == theirs_rows["model_inference"].self_cpu_memory_usage
    table = ours.key_averages().table(sort_by="self_cpu_memory_usage", row_limit=10)
    assert "CPU Mem" in table and "Self CPU Mem" in table and "200 B" in table


def test_input_shapes_are_torchs_tensor_arguments():
    ours, theirs = _recipe(mt), _recipe(torch)

    def shapes(prof, name):   # (the forward's ops, and the backward's nodes)
        return [e.input_shapes for e in prof.events() if e.name == name and (
            e.cpu_parent is None or e.cpu_parent.name in ("model_inference", "aten::linear", _EVALUATE + name))]
    for name in ("aten::addmm", "aten::relu", "aten::t", "AddmmBackward0", "ReluBackward0", "TBackward0"):
        mine, torchs = shapes(ours, name), shapes(theirs, name)
        assert len(mine) == len(torchs)
        for a, b in zip(mine, torchs):   # torch lists its scalar arguments too (addmm's beta, alpha)
            assert a == b[:len(a)] and all(s == [] for s in b[len(a):])
    grouped = ours.key_averages(group_by_input_shape=True)
    assert {(r.key, str(r.input_shapes)) for r in grouped if r.key == "aten::addmm"} == {
        ("aten::addmm", "[[8], [5, 4], [4, 8]]"), ("aten::addmm", "[[2], [5, 8], [8, 2]]")}
    assert "Input Shapes" in grouped.table(sort_by="cpu_time_total", row_limit=10)


def test_the_chrome_trace_loads_with_torchs_keys(tmp_path):
    ours, theirs = _recipe(mt), _recipe(torch)
    ours.export_chrome_trace(str(tmp_path / "ours.json"))
    theirs.export_chrome_trace(str(tmp_path / "theirs.json"))
    mine, torchs = (json.load(open(tmp_path / f)) for f in ("ours.json", "theirs.json"))
    assert set(mine) <= set(torchs) and "traceEvents" in mine
    ops = [e for e in mine["traceEvents"] if e["ph"] == "X"]
    torch_op = next(e for e in torchs["traceEvents"] if e.get("cat") == "cpu_op")
    assert ops and all(set(e) == set(torch_op) for e in ops)
    assert {e["cat"] for e in ops} == {"cpu_op", "user_annotation"}
    assert [e["name"] for e in ops] == [e.name for e in ours.events()]
    assert any(e["ph"] == "i" and e["name"] == "[memory]" for e in mine["traceEvents"])

    def flows(trace):   # forward op -> its backward node, by sequence number
        return sorted((e["ph"], e["id"]) for e in trace["traceEvents"] if e.get("cat") == "fwdbwd")
    assert len(flows(mine)) == len(flows(torchs)) == 12
    seq = {e.name: e.sequence_nr for e in ours.events() if e.name in ("aten::relu", "ReluBackward0")}
    assert seq["aten::relu"] == seq["ReluBackward0"] >= 0


def test_profiling_changes_no_value_or_gradient():
    def step():
        mt.manual_seed(0)
        model = mt.nn.Sequential(mt.nn.Linear(4, 8), mt.nn.Tanh(), mt.nn.Linear(8, 1))
        x = mt.tensor(_data(16, 4))
        loss = mt.nn.functional.mse_loss(model(x), mt.tensor(_data(16, 1, seed=2)))
        loss.backward()
        return [loss.detach().numpy()] + [p.grad.numpy() for p in model.parameters()]
    plain = step()
    with mt.profiler.profile(profile_memory=True, record_shapes=True):
        profiled = step()
    assert all(a.tobytes() == b.tobytes() for a, b in zip(plain, profiled))
    assert not function._interceptors and not mt.autograd._hooks._listeners


def test_an_error_inside_the_block_leaves_nothing_registered():
    with pytest.raises(ValueError):
        with mt.autograd.profiler.profile() as prof:
            mt.ones(2) * 2
            raise ValueError("stop")
    assert not function._interceptors and not mt.autograd._hooks._listeners
    assert _top_level(prof) == ["aten::mul"]


def test_a_second_profile_inside_the_first_is_refused():
    with mt.autograd.profiler.profile():
        with pytest.raises(RuntimeError, match="one profile at a time"):
            with mt.autograd.profiler.profile():
                pass


def test_schedule_gives_torchs_actions():
    for kwargs in (dict(wait=1, warmup=1, active=2), dict(wait=2, warmup=1, active=3, repeat=2, skip_first=3),
                   dict(wait=5, warmup=1, active=1, skip_first=2, skip_first_wait=1)):
        ours, theirs = mt.profiler.schedule(**kwargs), torch.profiler.schedule(**kwargs)
        assert [ours(i).name for i in range(30)] == [theirs(i).name for i in range(30)]
    with pytest.warns(UserWarning, match="warmup"):
        mt.profiler.schedule(wait=0, warmup=0, active=1)
    with pytest.raises(AssertionError):
        mt.profiler.schedule(wait=0, warmup=0, active=0)


def _scheduled(lib):
    ready = []
    x = lib.ones(3)
    sched = lib.profiler.schedule(wait=1, warmup=1, active=2, repeat=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with lib.profiler.profile(schedule=sched,
                                  on_trace_ready=lambda p: ready.append((p.step_num, _tree(p)))) as prof:
            for i in range(10):
                x * i
                prof.step()
    return ready


def test_a_schedule_records_torchs_steps_and_calls_on_trace_ready():
    ours, theirs = _scheduled(mt), _scheduled(torch)
    assert [s for s, _ in ours] == [s for s, _ in theirs] == [4, 8]
    for (_, mine), (_, torchs) in zip(ours, theirs):
        assert mine == [(n, p) for n, p in torchs if p in (None, "ProfilerStep*")]


def test_without_a_schedule_steps_are_not_ranges_and_on_trace_ready_runs_once():
    ready = []
    with mt.profiler.profile(on_trace_ready=ready.append) as prof:
        for i in range(2):
            mt.ones(2) * i
            prof.step()
    assert ready == [prof] and _top_level(prof) == ["aten::mul", "aten::mul"]


def test_tensorboard_trace_handler_writes_a_trace(tmp_path):
    with mt.profiler.profile(on_trace_ready=mt.profiler.tensorboard_trace_handler(str(tmp_path), "w0")):
        mt.ones(2) * 2
    files = list(tmp_path.iterdir())
    assert len(files) == 1 and files[0].name.startswith("w0.") and files[0].name.endswith(".pt.trace.json")
    assert [e["name"] for e in json.load(open(files[0]))["traceEvents"] if e["ph"] == "X"] == ["aten::mul"]


def test_the_table_formats_as_torchs():
    from microtorch.autograd import profiler_util as ours
    from torch.autograd import profiler_util as theirs
    for us in (0.5, 999.9994, 1234.5, 2.5e6):
        assert ours.format_time(us) == theirs._format_time(us)
    for nbytes in (0, 200, -160, 4096, 3 * 1024 ** 2, -5 * 1024 ** 3):
        assert ours.format_memory(nbytes) == theirs._format_memory(nbytes)
    prof = _profiled(mt, _backward_program, _two_leaves)
    table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=3)
    assert len(table.splitlines()) == 3 + 3 + 2
    assert "autograd::engine::evaluate_function: torch::autograd..." in prof.key_averages().table()
    assert prof.key_averages().table(top_level_events_only=True).count("aten::div") == 1
    wide = prof.key_averages().table(max_name_column_width=None, row_limit=-1)
    assert "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad" in wide
    assert len(wide.splitlines()) == 3 + len(prof.key_averages()) + 2
    assert mt.autograd.profiler.profile().key_averages().table() == ""
    assert str(prof) == prof.function_events.table() and str(mt.autograd.profiler.profile()).startswith("<unfinished")


def test_torch_names_of_the_ops():
    name = mt.autograd.profiler.op_name
    ops = mt.ops
    assert name(ops.conv.MaxPool2d) == "aten::max_pool2d_with_indices"
    assert name(ops.elementwise.GradTimesLocal) == "aten::threshold_backward"   # relu's backward, as torch's
    assert name(ops.linalg.Matmul) == "aten::matmul"
    assert name(ops.loss.SmoothL1Loss) == "aten::smooth_l1_loss"
    assert name(ops.spectral.FftC2C) == "aten::_fft_c2c"


# bases of op families whose node carries a torch name but which no torch op matches (their subclasses do)
BASES = {"IndexedPad", "Resample"}


def _functions(cls=mt.autograd.Function):
    for sub in cls.__subclasses__():
        yield sub
        yield from _functions(sub)


def test_every_op_is_named_after_an_aten_op():
    for mode in ("reflect", "replicate", "circular"):   # (their classes are made on first use)
        for shape in ((1, 2, 5), (1, 2, 5, 5), (1, 1, 2, 5, 5)):
            mt.nn.functional.pad(mt.ones(*shape), (1, 1) * (len(shape) - 2), mode=mode)
    unknown, checked = set(), 0
    for cls in _functions():   # the ops whose nodes have torch's names (microtorch's helpers have none)
        name = mt.autograd.profiler.op_name(cls)
        torch_named = re.search(r"Backwards?\d+(_copy)?$", cls._backward_cls.__name__)
        if cls.__module__.startswith("microtorch.") and torch_named:
            checked += 1
            if not hasattr(torch.ops.aten, name[len("aten::"):]):
                unknown.add(cls.__name__)
    assert unknown == BASES and checked > 350
def test_a_double_backward_inside_a_range_is_nested_as_torchs():
    def program(lib, x):
        with lib.autograd.profiler.record_function("backward"):
            (g,) = lib.autograd.grad(x.tanh().sum(), x, create_graph=True)
        g.sum().backward()

    def tree(prof):   # the ranges and nodes (not the kernels inside torch's ops); torch also records the seed
        # (ones_like) and, in autograd.grad, the leaf it captures at
        return [(n, p) for n, p in _tree(prof) if ("Backward" in n or p in (None, "backward"))
                and n != "aten::ones_like"
                and not (n == _EVALUATE + "torch::autograd::AccumulateGrad" and p == "backward")]
    ours, theirs = (_profiled(lib, program, lambda lib: (lib.tensor([1.0, 2.0, 3.0], requires_grad=True),))
                    for lib in (mt, torch))
    assert tree(ours) == tree(theirs)
    assert (_EVALUATE + "TanhBackwardBackward0", None) in tree(ours)


def _cycles(lib, acc_events):
    sizes = []
    x = lib.ones(3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with lib.profiler.profile(activities=[lib.profiler.ProfilerActivity.CPU, lib.profiler.ProfilerActivity.CUDA],
                                  schedule=lib.profiler.schedule(wait=1, warmup=1, active=1), acc_events=acc_events,
                                  on_trace_ready=lambda p: sizes.append(len(p.events()))) as prof:
            for i in range(6):
                x * i
                prof.step()
    return sizes, sorted({str(w.message) for w in caught})


@pytest.mark.parametrize("acc_events", [False, True])
def test_cycles_keep_or_clear_their_events_as_torchs(acc_events):
    ours, theirs = _cycles(mt, acc_events), _cycles(torch, acc_events)
    assert ours[0] == [2, 4] if acc_events else [2, 2]   # a ProfilerStep* range and its mul per recorded step
    assert len(ours[0]) == len(theirs[0])
    cuda = "CUDA is not available, disabling CUDA profiling"
    assert cuda in ours[1] and cuda in theirs[1]   # (torch says that it clears the events once a process)
    assert any(w.startswith("Warning: Profiler clears events") for w in ours[1]) == (not acc_events)


def test_export_stacks_writes_torchs_empty_file(tmp_path):
    for lib in (mt, torch):
        with lib.profiler.profile(with_stack=True) as prof:
            lib.ones(2) * 2
        prof.export_stacks(str(tmp_path / "stacks.txt"), "self_cpu_time_total")
        assert (tmp_path / "stacks.txt").read_text() == ""


# every event name microtorch gives is one torch's profiler shows for the same line
SWEEP = {
    **{u: (lambda u: lambda lib, x, y, img: getattr(x, u)())(u) for u in (
        "abs acos asin atan ceil cos cosh erf erfc exp expm1 floor frac log log10 log1p log2 neg reciprocal round "
        "rsqrt sigmoid sign sin sinh sqrt tan tanh trunc relu square exp2 lgamma digamma erfinv deg2rad rad2deg "
        "double t clone flatten").split()},
    **{"F." + a: (lambda a: lambda lib, x, y, img: getattr(lib.nn.functional, a)(x))(a) for a in (
        "elu gelu leaky_relu silu softplus hardtanh mish logsigmoid relu6 selu celu hardswish hardsigmoid softsign "
        "tanhshrink softshrink hardshrink").split()},
    "prod": lambda lib, x, y, img: x.prod(), "max_dim": lambda lib, x, y, img: x.max(1),
    "var": lambda lib, x, y, img: x.var(), "logsumexp": lambda lib, x, y, img: x.logsumexp(1),
    "norm": lambda lib, x, y, img: x.norm(), "cumsum": lambda lib, x, y, img: x.cumsum(1),
    "clamp": lambda lib, x, y, img: x.clamp(0.2, 0.5), "atan2": lambda lib, x, y, img: lib.atan2(x, y),
    "lerp": lambda lib, x, y, img: lib.lerp(x, y, 0.3), "permute": lambda lib, x, y, img: x.permute(1, 0),
    "chunk": lambda lib, x, y, img: x.chunk(2),
    "gather": lambda lib, x, y, img: x.gather(1, lib.tensor([[0], [1], [2]])),
    "index": lambda lib, x, y, img: x[lib.tensor([0, 2])], "basic_index": lambda lib, x, y, img: x[0:2, 1],
    "setitem": lambda lib, x, y, img: x.clone().__setitem__(0, 1.0),
    "fill_": lambda lib, x, y, img: x.clone().fill_(2.0),
    "copy_": lambda lib, x, y, img: x.clone().copy_(y), "conv2d": lambda lib, x, y, img: lib.nn.functional.conv2d(
        img, lib.ones(3, 2, 3, 3)), "max_pool2d": lambda lib, x, y, img: lib.nn.functional.max_pool2d(img, 2),
    "unfold": lambda lib, x, y, img: lib.nn.functional.unfold(img, 2),
    "layer_norm": lambda lib, x, y, img: lib.nn.functional.layer_norm(x, (4,)),
    "interpolate": lambda lib, x, y, img: lib.nn.functional.interpolate(img, scale_factor=2, mode="bilinear"),
    "bce": lambda lib, x, y, img: lib.nn.functional.binary_cross_entropy(x, y),
    "xlog1py": lambda lib, x, y, img: lib.special.xlog1py(x, y),
    "sum_to": lambda lib, x, y, img: (x + lib.ones(4, requires_grad=True)).sum().backward(),
    "tanh_twice": lambda lib, x, y, img: lib.autograd.grad(x.tanh().sum(), x, create_graph=True)[0].sum().backward(),
    "relu_twice": lambda lib, x, y, img: lib.autograd.grad(x.relu().sum(), x, create_graph=True)[0].sum().backward(),
}


def _sweep_tensors(lib):
    rng = np.random.default_rng(0)
    return (lib.tensor(rng.uniform(0.1, 0.9, (3, 4)).astype(np.float32), requires_grad=True),
            lib.tensor(rng.uniform(0.1, 0.9, (3, 4)).astype(np.float32)),
            lib.tensor(rng.standard_normal((1, 2, 6, 6)).astype(np.float32), requires_grad=True))


@pytest.mark.parametrize("line", sorted(SWEEP))
def test_every_name_is_one_torch_shows(line):
    ours, theirs = (_profiled(lib, lambda lib, *t: SWEEP[line](lib, *t), _sweep_tensors) for lib in (mt, torch))
    names = {e.name for e in ours.function_events}
    assert names and names <= {e.name for e in theirs.function_events}


def test_inference_under_no_grad_is_recorded_as_torchs():
    def program(lib, x, w):
        with lib.no_grad():
            x * 2, x + 1, x / 2, -x, x.t(), x.relu(), x.tanh(), x.sum(), x.mm(w), x.pow(2), 1 - x
    ours, theirs = (_profiled(lib, program, lambda lib: (lib.tensor(_data(3, 4), requires_grad=True),
                                                         lib.tensor(_data(4, 2))))
                    for lib in (mt, torch))
    assert _top_level(ours) == _top_level(theirs) == [
        "aten::mul", "aten::add", "aten::div", "aten::neg", "aten::t", "aten::relu", "aten::tanh", "aten::sum",
        "aten::mm", "aten::pow", "aten::rsub"]
    assert all(e.sequence_nr == -1 for e in ours.function_events)   # no node recorded, none to point at


def test_a_disabled_profile_records_nothing():
    with mt.autograd.profiler.profile(enabled=False) as prof:
        mt.ones(2) * 2
    assert not function._interceptors and prof.key_averages().table() == "" and len(prof.key_averages()) == 0
