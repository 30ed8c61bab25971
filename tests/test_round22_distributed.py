"""microtorch.distributed, nn.parallel.DistributedDataParallel and utils.data.DistributedSampler against torch 2.13
with the gloo backend and world size 1: the same calls run with both libraries, side by side, and must give the same
values, dtypes, version bumps and autograd history, and torch's exception types with torch's message at the start
of ours (ours then names the fix). A world size above 1 cannot be compared (torch waits for peers): microtorch must
refuse it at once with a RuntimeError that says why.

torch's gloo group is made over tcp://127.0.0.1 on a free port and destroyed after each test; init_process_group
wraps sys.excepthook in both libraries (a '[rank0]: ' prefix), which the fixtures put back."""
import copy
import datetime
import os
import pickle
import re
import socket
import subprocess
import sys
import warnings

import numpy as np
import pytest

real_torch = pytest.importorskip("torch")
import torch.distributed  # noqa: E402,F401  (torch.distributed is not loaded by `import torch` alone)

import microtorch  # noqa: E402
import microtorch.distributed  # noqa: E402,F401

pytestmark = [pytest.mark.filterwarnings("ignore::FutureWarning"),  # (the deprecated names: see below)
              pytest.mark.filterwarnings("ignore::UserWarning:torch.distributed")]
LIBS = (microtorch, real_torch)
ENV = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "LOCAL_RANK")
dist_m, dist_t = microtorch.distributed, real_torch.distributed


def _port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _url():
    return f"tcp://127.0.0.1:{_port()}"


def _destroy_all():
    for lib in LIBS:
        if lib.distributed.is_initialized():
            lib.distributed.destroy_process_group()


@pytest.fixture(autouse=True)
def _clean(monkeypatch):
    """No group before or after a test, the launcher's variables unset, sys.excepthook as it was."""
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    _destroy_all()
    yield
    _destroy_all()


@pytest.fixture
def groups():
    """Both libraries' default group: world size 1, gloo."""
    for lib in LIBS:
        lib.distributed.init_process_group("gloo", init_method=_url(), rank=0, world_size=1)
    yield
    _destroy_all()


def _outcome(fn, lib):
    try:
        return "ok", fn(lib)
    except Exception as e:  # noqa: BLE001  (the outcome is compared)
        return type(e).__name__, str(e)


def _text(msg):
    """A message read the same way in both libraries: 'microtorch' as 'torch', a process group's address left out."""
    return re.sub(r"<[\w.]+ProcessGroup object at 0x[0-9a-f]+>", "<ProcessGroup>", msg.replace("microtorch", "torch"))


def _same(fn, prefix=True):
    """fn(lib) gives the same value in both libraries (compared as text, 'microtorch' read as 'torch'), or raises
    the same exception type; with prefix, torch's message starts ours ("contains": is in ours, after the name of
    the op that raised it)."""
    ours, theirs = _outcome(fn, microtorch), _outcome(fn, real_torch)
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] == "ok":
        assert _text(str(ours[1])) == _text(str(theirs[1]))
    elif prefix == "contains":
        assert _text(theirs[1]) in _text(ours[1]), (ours[1], theirs[1])
    elif prefix:
        assert _text(ours[1]).startswith(_text(theirs[1])), (ours[1], theirs[1])
    return ours


# ---- before init_process_group --------------------------------------------------------------------------------

BEFORE_INIT = {
    "get_rank": lambda L: L.distributed.get_rank(),
    "get_world_size": lambda L: L.distributed.get_world_size(),
    "get_backend": lambda L: L.distributed.get_backend(),
    "barrier": lambda L: L.distributed.barrier(),
    "all_reduce": lambda L: L.distributed.all_reduce(L.ones(2), op=L.distributed.ReduceOp.AVG),
    "broadcast": lambda L: L.distributed.broadcast(L.ones(2), src=0),
    "all_gather_object": lambda L: L.distributed.all_gather_object([None], 1),
    "new_group": lambda L: L.distributed.new_group([0]),
    "DistributedDataParallel": lambda L: L.nn.parallel.DistributedDataParallel(L.nn.Linear(2, 2)),
    "DistributedSampler": lambda L: L.utils.data.DistributedSampler(range(4)),
    "destroy_process_group": lambda L: L.distributed.destroy_process_group(),
    "queries": lambda L: (L.distributed.is_available(), L.distributed.is_initialized(), L.distributed.group.WORLD,
                          L.distributed.GroupMember.WORLD, L.distributed.GroupMember.NON_GROUP_MEMBER),
}


@pytest.mark.parametrize("name", list(BEFORE_INIT))
def test_before_init_process_group(name):
    kind, msg = _same(BEFORE_INIT[name])
    if name not in ("queries", "destroy_process_group"):
        assert (kind, msg) == ("ValueError", "Default process group has not been initialized, please make sure to "
                                             "call init_process_group.")


# ---- init_process_group ---------------------------------------------------------------------------------------

def _init(backend="gloo", url=True, **kw):
    def call(L):
        L.distributed.init_process_group(backend, **({"init_method": _url()} if url else {}), **kw)
        return L.distributed.get_rank(), L.distributed.get_world_size(), L.distributed.get_backend()
    return call


INIT = {
    "gloo": _init(rank=0, world_size=1),
    "GLOO": _init("GLOO", rank=0, world_size=1),
    "no backend": _init(None, rank=0, world_size=1),
    "cpu:gloo": _init("cpu:gloo", rank=0, world_size=1),
    "nccl": _init("nccl", rank=0, world_size=1),
    "cpu:gloo,cuda:nccl": _init("cpu:gloo,cuda:nccl", rank=0, world_size=1),
    "mpi": _init("mpi", rank=0, world_size=1),
    "xccl": _init("xccl", rank=0, world_size=1),
    "ucc": _init("ucc", rank=0, world_size=1),
    "unknown backend": _init("bogus", rank=0, world_size=1),
    "tcp without rank": _init(),
    "tcp without world_size": _init(rank=0),
    "rank and world_size in the URL": lambda L: (L.distributed.init_process_group(
        "gloo", init_method=_url() + "?rank=0&world_size=1"), L.distributed.get_world_size()),
    "both URL and arguments": lambda L: L.distributed.init_process_group(
        "gloo", init_method="tcp://127.0.0.1:29999?rank=0", rank=0, world_size=1),  # (refused before any binding)
    "tcp without port": lambda L: L.distributed.init_process_group("gloo", init_method="tcp://127.0.0.1", rank=0,
                                                                   world_size=1),
    "unknown scheme": lambda L: L.distributed.init_process_group("gloo", init_method="foo://x", rank=0,
                                                                 world_size=1),
    "world_size 0": _init(rank=0, world_size=0),
    "rank not an int": _init(rank="0", world_size=1),
    "device_id int": _init(rank=0, world_size=1, device_id=0),
    "timeout not a timedelta": _init(rank=0, world_size=1, timeout=5),
    "twice": lambda L: (_init(rank=0, world_size=1)(L), _init(rank=0, world_size=1)(L)),
}


@pytest.mark.parametrize("name", list(INIT))
def test_init_process_group_as_torch(name):
    _same(INIT[name])
    _destroy_all()


def test_init_device_id_cpu():
    _same(lambda L: L.distributed.init_process_group("gloo", init_method=_url(), rank=0, world_size=1,
                                                     device_id=L.device("cpu")))


@pytest.mark.parametrize("missing", ["RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"])
def test_env_rendezvous_reports_the_missing_variable(monkeypatch, missing):
    for name, value in (("RANK", "0"), ("WORLD_SIZE", "1"), ("MASTER_ADDR", "127.0.0.1"), ("MASTER_PORT", "1")):
        if name != missing:
            monkeypatch.setenv(name, value)
    kind, msg = _same(lambda L: L.distributed.init_process_group("gloo"))
    assert kind == "ValueError" and f"environment variable {missing} expected, but not set" in msg


def test_env_rendezvous_empty_and_bad_values(monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "1")
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", str(_port()))
    monkeypatch.setenv("RANK", "")
    assert _same(lambda L: L.distributed.init_process_group("gloo"))[0] == "ValueError"
    monkeypatch.setenv("RANK", "abc")
    assert _same(lambda L: L.distributed.init_process_group("gloo"))[0] == "ValueError"


def test_env_init_as_torchrun_sets_it(monkeypatch):
    """What torchrun --nproc_per_node=1 sets; arguments given to init_process_group win over the variables."""
    for name, value in (("RANK", "0"), ("WORLD_SIZE", "1"), ("MASTER_ADDR", "127.0.0.1"), ("LOCAL_RANK", "0")):
        monkeypatch.setenv(name, value)
    for lib in LIBS:
        monkeypatch.setenv("MASTER_PORT", str(_port()))
        lib.distributed.init_process_group(backend="gloo")
    _same(lambda L: (L.distributed.get_rank(), L.distributed.get_world_size(), L.distributed.get_backend(),
                     L.distributed.is_initialized(), L.distributed.get_node_local_rank()))
    _destroy_all()
    monkeypatch.setenv("RANK", "")
    for lib in LIBS:
        monkeypatch.setenv("MASTER_PORT", str(_port()))
        lib.distributed.init_process_group("gloo", rank=0, world_size=1)
    _same(lambda L: (L.distributed.get_rank(), L.distributed.get_world_size()))


@pytest.mark.parametrize("how", ["arguments", "env"])
def test_world_size_above_one_is_refused_at_once(monkeypatch, how):
    """torch would wait for the other processes (until its timeout); microtorch says it runs one."""
    if how == "env":
        for name, value in (("RANK", "2"), ("WORLD_SIZE", "4"), ("MASTER_ADDR", "127.0.0.1"), ("MASTER_PORT", "1")):
            monkeypatch.setenv(name, value)
        kw = {}
    else:
        kw = {"init_method": _url(), "rank": 0, "world_size": 2}
    with pytest.raises(RuntimeError) as info:
        dist_m.init_process_group("gloo", **kw)
    msg = str(info.value)
    assert "init_process_group" in msg and "one process" in msg and "torchrun" in msg
    assert ("world_size is 4" if how == "env" else "world_size is 2") in msg
    assert not dist_m.is_initialized()


def test_world_size_above_one_is_a_runtime_error_in_torch_too():
    """torch's error, after its (here short) timeout, is a RuntimeError too (DistStoreError)."""
    timeout = datetime.timedelta(seconds=1)
    with pytest.raises(RuntimeError):
        dist_t.init_process_group("gloo", init_method=_url(), rank=0, world_size=2, timeout=timeout)
    with pytest.raises(RuntimeError):
        dist_m.init_process_group("gloo", init_method=_url(), rank=0, world_size=2, timeout=timeout)


def test_rank_other_than_zero_is_refused():
    with pytest.raises(RuntimeError, match="the only rank is 0"):
        dist_m.init_process_group("gloo", init_method=_url(), rank=1, world_size=1)


def test_destroy_then_init_again(groups):
    _same(lambda L: (L.distributed.destroy_process_group(), L.distributed.is_initialized(), L.distributed.group.WORLD))
    _same(lambda L: L.distributed.destroy_process_group())
    _same(_init(rank=0, world_size=1))


# ---- reductions -----------------------------------------------------------------------------------------------

OPS = ["SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "PREMUL_SUM"]
DTYPES = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool", "complex64"]


def _reduction(fn, op, dtype):
    def run(L):
        x = L.tensor([1.5, -2.0, 0.0, 3.0]).to(getattr(L, dtype))
        out = L.zeros(4, dtype=getattr(L, dtype))
        before = (x._version, out._version)
        r = getattr(L.distributed.ReduceOp, op)
        if fn == "all_reduce":
            work = L.distributed.all_reduce(x, op=r)
        elif fn == "reduce":
            work = L.distributed.reduce(x, dst=0, op=r)
        else:
            work = L.distributed.reduce_scatter_tensor(out, x, op=r)
        return work, x.tolist(), out.tolist(), x.dtype, x._version - before[0], out._version - before[1]
    return run


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("fn", ["all_reduce", "reduce", "reduce_scatter_tensor"])
def test_reduction_each_op_and_dtype(groups, fn, op, dtype):
    """Values unchanged; AVG divides in place (a version bump, torch's error for integers); int16 and bitwise ops
    on floats refused as gloo refuses them. (torch's complex message for reduce is garbled, PREMUL_SUM's is
    pybind's: their types are compared.)"""
    garbled = op == "PREMUL_SUM" or (dtype == "complex64" and fn != "all_reduce")
    _same(_reduction(fn, op, dtype), prefix=not garbled)


def test_all_reduce_avg_history_and_leaf(groups):
    def nonleaf(L):
        t = L.zeros(2, requires_grad=True) * 1
        L.distributed.all_reduce(t, op=L.distributed.ReduceOp.AVG)
        return type(t.grad_fn).__name__, [type(n[0]).__name__ for n in t.grad_fn.next_functions], t._version
    _same(nonleaf)
    _same(lambda L: L.distributed.all_reduce(L.ones(2, requires_grad=True), op=L.distributed.ReduceOp.AVG))

    def under_no_grad(L):
        t = L.ones(2, requires_grad=True)
        with L.no_grad():
            L.distributed.all_reduce(t, op=L.distributed.ReduceOp.AVG)
        return t._version, t.tolist()
    _same(under_no_grad)
    _same(lambda L: (lambda t: (L.distributed.all_reduce(t), t._version, t.grad_fn))(L.ones(2, requires_grad=True)))


def test_reduce_op_type(groups):
    _same(lambda L: (int(L.distributed.ReduceOp.SUM), L.distributed.ReduceOp.AVG == 1, str(L.distributed.ReduceOp.AVG),
                     repr(L.distributed.ReduceOp.MAX), L.distributed.ReduceOp.MAX.name,
                     list(L.distributed.ReduceOp.RedOpType.__members__),
                     isinstance(L.distributed.ReduceOp.SUM, L.distributed.ReduceOp),
                     L.distributed.ReduceOp(L.distributed.ReduceOp.MAX) == L.distributed.ReduceOp.MAX))

    def wrapped(L):
        t = L.tensor([1.0, 4.0])
        L.distributed.all_reduce(t, op=L.distributed.ReduceOp(L.distributed.ReduceOp.AVG))
        return t.tolist(), t._version
    _same(wrapped)
    assert _same(lambda L: L.distributed.all_reduce(L.ones(2), op="sum"), prefix=False)[0] == "TypeError"


# ---- the other collectives ------------------------------------------------------------------------------------

def _written(call, requires_grad=False, nonleaf=False):
    """call(L, x, out) with an output that is plain, a leaf that requires grad or a non-leaf with history: the
    values written, both version bumps and the output's history."""
    def run(L):
        x, out = L.tensor([1.0, 2.0]), L.zeros(2, requires_grad=requires_grad)
        if nonleaf:
            out, x = out * 1, L.tensor([1.0, 2.0], requires_grad=True) * 1
        before = (x._version, out._version)
        work = call(L, x, out)
        edges = [type(n[0]).__name__ for n in out.grad_fn.next_functions] if out.grad_fn else None
        return work, out.tolist(), x._version - before[0], out._version - before[1], type(out.grad_fn).__name__, edges
    return run


WRITES = {
    "all_gather": lambda L, x, o: L.distributed.all_gather([o], x),
    "all_gather_into_tensor": lambda L, x, o: L.distributed.all_gather_into_tensor(o, x),
    "reduce_scatter_tensor": lambda L, x, o: L.distributed.reduce_scatter_tensor(o, x),
    "reduce_scatter_tensor AVG": lambda L, x, o: L.distributed.reduce_scatter_tensor(
        o, x, op=L.distributed.ReduceOp.AVG),
    "all_gather_single": lambda L, x, o: L.distributed.all_gather_single(o, x),
    "reduce_scatter_single": lambda L, x, o: L.distributed.reduce_scatter_single(o, x),
    "reduce_scatter": lambda L, x, o: L.distributed.reduce_scatter(o, [x]),
    "gather": lambda L, x, o: L.distributed.gather(x, [o]),
    "scatter": lambda L, x, o: L.distributed.scatter(o, [x]),
    "broadcast": lambda L, x, o: L.distributed.broadcast(o, src=0),
    "reduce": lambda L, x, o: L.distributed.reduce(o, dst=0),
    "reduce AVG": lambda L, x, o: L.distributed.reduce(o, dst=0, op=L.distributed.ReduceOp.AVG),
    "all_reduce": lambda L, x, o: L.distributed.all_reduce(o),
}


@pytest.mark.parametrize("output", ["plain", "leaf requiring grad", "non-leaf"])
@pytest.mark.parametrize("name", list(WRITES))
def test_collective_writes_as_gloo_does(groups, name, output):
    """Which ops copy_ into their output (a version bump, a CopyBackwards, torch's leaf or split-view error) and
    which leave it untouched."""
    split_view = name.startswith("all_gather_") and output != "plain"  # (ours: "copy_(): Output 0 of Split...")
    _same(_written(WRITES[name], output != "plain", output == "non-leaf"), prefix="contains" if split_view else True)


def _warnings(fn):
    def run(L):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            fn(L)
        return [(w.category.__name__, str(w.message)) for w in seen if w.category is FutureWarning]
    return run


WARNINGS = {
    "all_gather_into_tensor": lambda L: L.distributed.all_gather_into_tensor(_z(L, 2), _o(L, 2)),
    "reduce_scatter_tensor": lambda L: L.distributed.reduce_scatter_tensor(_z(L, 2), _o(L, 2)),
    "the new names": lambda L: (L.distributed.all_gather_single(_z(L, 2), _o(L, 2)),
                                L.distributed.reduce_scatter_single(_z(L, 2), _o(L, 2))),
    "DDP broadcast_buffers": lambda L: _ddp(L, L.nn.Linear(2, 2), broadcast_buffers=False),
    "DDP both buffer flags": lambda L: _ddp(L, L.nn.Linear(2, 2), broadcast_buffers=False, forward_sync_buffers=True),
    "DDP check_reduction": lambda L: _ddp(L, L.nn.Linear(2, 2), check_reduction=True),
}


@pytest.mark.parametrize("name", list(WARNINGS))
def test_deprecation_warnings(groups, name):
    """torch 2.13 renames all_gather_into_tensor and reduce_scatter_tensor (the old names warn) and retires some
    DDP arguments. (broadcast_buffers' warning is compared up to its first sentence: torch's goes on about
    buffers synced at init, which one process has not.)"""
    ours, theirs = _warnings(WARNINGS[name])(microtorch), _warnings(WARNINGS[name])(real_torch)
    assert [(c, m.split(". ")[0]) for c, m in ours] == [(c, m.split(". ")[0]) for c, m in theirs]


def test_all_gather_into_a_view(groups):
    def run(L):
        b = L.zeros(2, 3)
        L.distributed.all_gather([b[:, 1]], L.tensor([1.0, 2.0]))
        return b.tolist(), b._version
    _same(run)


def _z(L, *shape, dtype="float32"):
    return L.zeros(*shape, dtype=getattr(L, dtype))


def _o(L, *shape, dtype="float32"):
    return L.ones(*shape, dtype=getattr(L, dtype))


COLLECTIVE_ERRORS = {
    "broadcast src 1": lambda L: L.distributed.broadcast(_o(L, 2), src=1),
    "broadcast without src": lambda L: L.distributed.broadcast(_o(L, 2)),
    "broadcast src and group_src": lambda L: L.distributed.broadcast(_o(L, 2), 0, group_src=0),
    "broadcast group_src": lambda L: L.distributed.broadcast(_o(L, 2), group_src=0),
    "broadcast a list": lambda L: L.distributed.broadcast([1], src=0),
    "all_reduce a list": lambda L: L.distributed.all_reduce([1.0, 2.0]),
    "all_reduce 0-d and empty": lambda L: (lambda a, b: (L.distributed.all_reduce(a), L.distributed.all_reduce(b),
                                                         a.tolist(), b.tolist()))(L.tensor(5), L.tensor([])),
    "all_gather two outputs": lambda L: L.distributed.all_gather([_z(L, 2), _z(L, 2)], _o(L, 2)),
    "all_gather no output": lambda L: L.distributed.all_gather([], _o(L, 2)),
    "all_gather shape": lambda L: L.distributed.all_gather([_z(L, 3, 2)], _o(L, 2, 3)),
    "all_gather dtype": lambda L: L.distributed.all_gather([_z(L, 2, dtype="int64")], _o(L, 2)),
    "all_gather not a list": lambda L: L.distributed.all_gather(_z(L, 1), _o(L, 1)),
    "all_gather list of ints": lambda L: L.distributed.all_gather([1], _o(L, 1)),
    "all_gather_into_tensor size": lambda L: L.distributed.all_gather_into_tensor(_z(L, 3), _o(L, 2)),
    "all_gather_into_tensor stacked": lambda L: L.distributed.all_gather_into_tensor(_z(L, 1, 2), _o(L, 2)),
    "all_gather_into_tensor flat": lambda L: L.distributed.all_gather_into_tensor(_z(L, 4), _o(L, 2, 2)),
    "all_gather_into_tensor a list": lambda L: L.distributed.all_gather_into_tensor([_z(L, 1)], _o(L, 1)),
    "all_gather_into_tensor 0-d": lambda L: L.distributed.all_gather_into_tensor(L.tensor(0.0), L.tensor(3.0)),
    "reduce_scatter_tensor 2-d": lambda L: (lambda o: (L.distributed.reduce_scatter_tensor(o, _o(L, 2, 2)),
                                                       o.tolist()))(_z(L, 2, 2)),
    "reduce_scatter_tensor a list": lambda L: L.distributed.reduce_scatter_tensor([1], _o(L, 1)),
    "gather without list": lambda L: L.distributed.gather(_o(L, 2)),
    "gather dst 1": lambda L: L.distributed.gather(_o(L, 2), [_z(L, 2)], dst=1),
    "gather dst 1 without list": lambda L: L.distributed.gather(_o(L, 2), dst=1),
    "gather two outputs": lambda L: L.distributed.gather(_o(L, 2), [_z(L, 2), _z(L, 2)]),
    "gather shape": lambda L: L.distributed.gather(_o(L, 2), [_z(L, 3)]),
    "gather dtype": lambda L: L.distributed.gather(_o(L, 2), [_z(L, 2, dtype="float64")]),
    "gather complex": lambda L: L.distributed.gather(_o(L, 2, dtype="complex64"), [_z(L, 2, dtype="complex64")]),
    "gather list of ints": lambda L: L.distributed.gather(_o(L, 1), [1]),
    "scatter without list": lambda L: L.distributed.scatter(_z(L, 2)),
    "scatter src 1": lambda L: L.distributed.scatter(_z(L, 2), [_o(L, 2)], src=1),
    "scatter src 1 without list": lambda L: L.distributed.scatter(_z(L, 2), src=1),
    "scatter two inputs": lambda L: L.distributed.scatter(_z(L, 2), [_o(L, 2), _o(L, 2)]),
    "scatter shape": lambda L: L.distributed.scatter(_z(L, 3), [_o(L, 2)]),
    "scatter dtype": lambda L: L.distributed.scatter(_z(L, 2, dtype="float64"), [_o(L, 2)]),
    "reduce without dst": lambda L: L.distributed.reduce(_o(L, 1)),
    "reduce dst 1": lambda L: L.distributed.reduce(_o(L, 1), dst=1),
    "an unknown group": lambda L: L.distributed.all_reduce(_o(L, 2), group="x"),
    "barrier over an unknown group": lambda L: L.distributed.barrier(group="x"),
    "int16 broadcast": lambda L: L.distributed.broadcast(_o(L, 2, dtype="int16"), src=0),
    "int16 all_gather": lambda L: L.distributed.all_gather([_z(L, 2, dtype="int16")], _o(L, 2, dtype="int16")),
    "bool and complex all_gather": lambda L: [L.distributed.all_gather([_z(L, 2, dtype=d)], _o(L, 2, dtype=d))
                                              for d in ("bool", "complex64")],
}


@pytest.mark.parametrize("name", list(COLLECTIVE_ERRORS))
def test_collective_errors_and_edge_cases(groups, name):
    _same(COLLECTIVE_ERRORS[name])


def test_reduce_scatter_tensor_size_mismatch(groups):
    """(torch's message is a failed C++ check: the type is compared.)"""
    _same(lambda L: L.distributed.reduce_scatter_tensor(_z(L, 1), _o(L, 2)), prefix=False)
    _same(lambda L: L.distributed.reduce_scatter_tensor(_z(L, 2, dtype="float64"), _o(L, 2)), prefix=False)


def test_async_op_returns_finished_work(groups):
    def run(L):
        out = [_z(L, 2)]
        works = [L.distributed.all_reduce(_o(L, 2), async_op=True),
                 L.distributed.all_gather(out, L.tensor([3.0, 4.0]), async_op=True),
                 L.distributed.broadcast(_o(L, 2), src=0, async_op=True)]
        return ([(w.wait(), w.is_completed(), w.is_success(), [t.tolist() for t in w.result()],
                  [t.tolist() for t in w.get_future().wait()], [t.tolist() for t in w.get_future().value()])
                 for w in works], out[0].tolist(), L.distributed.barrier(async_op=True).wait(),
                L.distributed.barrier(), L.distributed.monitored_barrier())
    _same(run)


# ---- objects, groups, queries ---------------------------------------------------------------------------------

OBJECTS = {
    "all_gather_object": lambda L: (lambda o: (L.distributed.all_gather_object(o, {"a": 1, "b": [1, 2]}), o))([None]),
    "all_gather_object a tensor": lambda L: (lambda o, t: (L.distributed.all_gather_object(o, t), o[0] is t,
                                                           o[0].tolist(), o[0].requires_grad))(
        [None], L.ones(2, requires_grad=True)),
    "all_gather_object into []": lambda L: L.distributed.all_gather_object([], 1),
    "all_gather_object into two": lambda L: (lambda o: (L.distributed.all_gather_object(o, 1), o))([None, "x"]),
    "broadcast_object_list": lambda L: (lambda x: (L.distributed.broadcast_object_list(x, src=0), x))([1, "x", {}]),
    "broadcast_object_list without src": lambda L: (lambda x: (L.distributed.broadcast_object_list(x), x))([1]),
    "broadcast_object_list src 1": lambda L: L.distributed.broadcast_object_list([1], src=1),
    "broadcast_object_list []": lambda L: L.distributed.broadcast_object_list([], src=0),
    "gather_object": lambda L: (lambda o: (L.distributed.gather_object({"a": 1}, o, dst=0), o))([None]),
    "gather_object dst 1": lambda L: L.distributed.gather_object(1, [None], dst=1),
    "gather_object without list": lambda L: L.distributed.gather_object(1),
    "scatter_object_list": lambda L: (lambda o: (L.distributed.scatter_object_list(o, [{"a": 1}], src=0), o))([None]),
    "scatter_object_list without input": lambda L: L.distributed.scatter_object_list([None]),
    "scatter_object_list src 1": lambda L: L.distributed.scatter_object_list([None], [1], src=1),
}


@pytest.mark.parametrize("name", list(OBJECTS))
def test_object_collectives(groups, name):
    _same(OBJECTS[name])


def test_object_collectives_copy_what_they_receive(groups):
    sent = {"list": [1, 2]}
    got = [None]
    dist_m.all_gather_object(got, sent)
    assert got[0] == sent and got[0] is not sent  # (pickled across, as torch's)
    kept = [sent]
    dist_m.broadcast_object_list(kept, src=0)
    assert kept[0] is sent  # (the sender's own list is left alone)


GROUPS = {
    "queries": lambda L: (L.distributed.get_rank(), L.distributed.get_world_size(), L.distributed.get_backend(),
                          L.distributed.is_initialized(), L.distributed.group.WORLD is L.distributed.GroupMember.WORLD,
                          L.distributed.group.WORLD.rank(), L.distributed.group.WORLD.size(),
                          L.distributed.get_process_group_ranks(L.distributed.group.WORLD),
                          L.distributed.get_backend(L.distributed.group.WORLD)),
    "new_group": lambda L: (lambda g: (L.distributed.get_rank(g), L.distributed.get_world_size(g),
                                       L.distributed.get_backend(g), L.distributed.get_global_rank(g, 0),
                                       L.distributed.get_group_rank(g, 0), L.distributed.get_process_group_ranks(g),
                                       L.distributed.all_reduce(_o(L, 1), group=g)))(L.distributed.new_group([0])),
    "new_group of all": lambda L: L.distributed.get_process_group_ranks(L.distributed.new_group()),
    "new_group rank 1": lambda L: L.distributed.new_group([1]),
    "new_group twice rank 0": lambda L: L.distributed.new_group([0, 0]),
    "new_group nccl": lambda L: L.distributed.new_group([0], backend="nccl"),
    "get_global_rank of WORLD": lambda L: L.distributed.get_global_rank(L.distributed.group.WORLD, 1),
    "get_global_rank of None": lambda L: L.distributed.get_global_rank(None, 0),
    "get_global_rank outside": lambda L: L.distributed.get_global_rank(L.distributed.new_group([0]), 1),
    "get_group_rank of WORLD": lambda L: L.distributed.get_group_rank(L.distributed.group.WORLD, 3),
    "get_rank of a string": lambda L: L.distributed.get_rank("x"),
    "destroy a subgroup": lambda L: (lambda g: (
        L.distributed.destroy_process_group(g), L.distributed.get_world_size(),
        L.distributed.all_reduce(_o(L, 1), group=g)))(L.distributed.new_group()),
    "destroy a subgroup twice": lambda L: (lambda g: (
        L.distributed.destroy_process_group(g), L.distributed.destroy_process_group(g)))(L.distributed.new_group()),
    "availability": lambda L: (L.distributed.is_available(), L.distributed.is_gloo_available(),
                               L.distributed.is_nccl_available(), L.distributed.is_mpi_available(),
                               L.distributed.is_torchelastic_launched()),
    "get_node_local_rank": lambda L: L.distributed.get_node_local_rank(),
    "get_node_local_rank fallback": lambda L: L.distributed.get_node_local_rank(fallback_rank=0),
    "Backend": lambda L: (L.distributed.Backend("GLOO"), L.distributed.Backend("cpu:GLOO"), L.distributed.Backend.NCCL,
                          type(L.distributed.Backend("gloo")).__name__, L.distributed.default_pg_timeout),
    "Backend of a number": lambda L: L.distributed.Backend(3),
    "error classes": lambda L: [c.__name__ for c in L.distributed.DistNetworkError.__mro__[:4]],
}


@pytest.mark.parametrize("name", list(GROUPS))
def test_groups_and_queries(groups, name):
    _same(GROUPS[name])


def test_uncaught_exceptions_get_the_rank_prefix():
    """After init_process_group both libraries prefix each traceback line with '[rank0]: '."""
    code = ("import {lib}.distributed as dist\ndist.init_process_group('gloo', init_method='{url}', rank=0, "
            "world_size=1)\n1/0\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), PYTHONWARNINGS="ignore")
    outs = [subprocess.run([sys.executable, "-c", code.format(lib=lib, url=_url())], capture_output=True, text=True,
                           env=env, timeout=120).stderr for lib in ("microtorch", "torch")]
    lines = [[ln for ln in out.splitlines() if ln.startswith("[rank0]: ")] for out in outs]
    assert lines[0] == lines[1] and lines[0][-1] == "[rank0]: ZeroDivisionError: division by zero"


# ---- DistributedDataParallel ----------------------------------------------------------------------------------

def _ddp(L, module, **kw):
    return L.nn.parallel.DistributedDataParallel(module, **kw)


def test_ddp_wraps_as_torch(groups):
    def run(L):
        m = L.nn.Sequential(L.nn.Linear(2, 3), L.nn.BatchNorm1d(3))
        d = _ddp(L, m)
        return (repr(d), list(d.state_dict()), [n for n, _ in d.named_parameters()], [n for n, _ in d.named_buffers()],
                d.module is m, d.device_ids, d.output_device, d.dim, d.find_unused_parameters,
                d.require_backward_grad_sync, d.require_forward_param_sync, d.gradient_as_bucket_view, d.static_graph,
                d.device_type, d.device, d.training, d.forward_sync_buffers, d.parameters_to_ignore,
                d.broadcast_bucket_size, d.bucket_bytes_cap, d.mixed_precision, d.is_multi_device_module,
                type(d.no_sync()).__name__, d.process_group is L.distributed.group.WORLD,
                sorted(dict(d.named_modules())))
    _same(run)


DDP_CASES = {
    "device_ids [0] on a CPU module": lambda L: _ddp(L, L.nn.Linear(2, 2), device_ids=[0]),
    "two device_ids": lambda L: _ddp(L, L.nn.Linear(2, 2), device_ids=[0, 1]),
    "output_device": lambda L: _ddp(L, L.nn.Linear(2, 2), output_device=0),
    "device_ids []": lambda L: _ddp(L, L.nn.Linear(2, 2), device_ids=[]).device_ids,
    "no parameters": lambda L: _ddp(L, L.nn.ReLU()),
    "frozen parameters": lambda L: _ddp(L, L.nn.Linear(2, 2).requires_grad_(False)),
    "lazy parameters": lambda L: _ddp(L, L.nn.LazyLinear(2)),
    "no attribute passthrough": lambda L: _ddp(L, L.nn.Linear(2, 2)).weight,
    "load_state_dict with module. keys": lambda L: (lambda d: (d.load_state_dict(
        {"module.weight": L.ones(2, 2), "module.bias": L.zeros(2)}), d.module.weight.tolist()))(
        _ddp(L, L.nn.Linear(2, 2))),
    "output history": lambda L: (lambda y: (type(y.grad_fn).__name__, y.requires_grad))(
        _ddp(L, L.nn.Linear(2, 2))(L.ones(1, 2))),
}


@pytest.mark.parametrize("name", list(DDP_CASES))
def test_ddp_cases(groups, name):
    _same(DDP_CASES[name])


def _three_linears_class(L):
    class ThreeLinears(L.nn.Module):  # b and c never reach the output
        def __init__(self):
            super().__init__()
            self.a, self.c, self.b = L.nn.Linear(2, 2), L.nn.Linear(2, 2), L.nn.Linear(2, 2)

        def forward(self, x):
            return self.a(x)
    # (a module-level name, so that pickle finds the class)
    ThreeLinears.__qualname__ = ThreeLinears.__name__ = f"ThreeLinears_{L.__name__}"
    globals()[ThreeLinears.__name__] = ThreeLinears
    return ThreeLinears


_THREE_LINEARS = {L: _three_linears_class(L) for L in LIBS}


def _three_linears(L):
    return _THREE_LINEARS[L]()


def _first_lines(fn):
    """The error's first sentence and the line naming the parameters (ours then says more)."""
    def run(L):
        try:
            return fn(L)
        except RuntimeError as e:
            lines = str(e).split("\n")
            named = [ln for ln in lines if ln.startswith(("Parameter indices", "Parameter at index"))]
            raise RuntimeError(lines[0].split(". ")[0] + " | " + named[0].split(". ")[0]) from None
    return run


def _unused_then_forward(L):
    d, x = _ddp(L, _three_linears(L)), L.ones(1, 2)
    d(x).sum().backward()
    with L.no_grad():
        d(x)  # (no graph recorded: not checked)
    d.require_backward_grad_sync = False
    d(x)


def _backward_twice(L):
    d = _ddp(L, _three_linears(L))
    y = d(L.ones(1, 2)).sum()
    y.backward(retain_graph=True)
    y.backward()


def _unused_under_no_sync(L):
    d, x = _ddp(L, _three_linears(L)), L.ones(1, 2)
    with d.no_sync():
        y = d(x).sum()
        y.backward(retain_graph=True)
        y.backward()
    d.require_backward_grad_sync = False
    d(x).sum().backward()
    d(x).sum().backward()
    return d.module.a.weight.grad.tolist(), d.module.b.weight.grad


def _find_unused(L):
    d, x = _ddp(L, _three_linears(L), find_unused_parameters=True), L.ones(1, 2)
    d(x).sum().backward()
    y = d(x).sum()
    y.backward(retain_graph=True)
    y.backward()
    d(x)
    return d.module.a.weight.grad.tolist(), d.module.b.weight.grad, d.module.a.weight.grad._version


def _two_forwards_then_backwards(L):
    d, x = _ddp(L, L.nn.Linear(2, 2)), L.ones(1, 2)
    y, z = d(x), d(x)
    y.sum().backward()
    z.sum().backward()
    d(x)
    return d.module.weight.grad.tolist()


def _forward_without_backward(L):
    d, x = _ddp(L, L.nn.Linear(2, 2)), L.ones(1, 2)
    d(x)
    d(x).sum().backward()
    d(x).sum().backward()
    return d.module.weight.grad.tolist()


def _rewrapped(L):
    lin, x = L.nn.Linear(2, 2), L.ones(1, 2)
    first = _ddp(L, lin)
    first(x).sum().backward()
    del first  # (its hooks must not count for the next wrapper)
    second = _ddp(L, lin)
    second(x).sum().backward()
    second(x).sum().backward()
    return lin.weight.grad.tolist()


def _copied(how):
    def run(L):
        d = _ddp(L, _three_linears(L))
        d = copy.deepcopy(d) if how == "deepcopy" else pickle.loads(pickle.dumps(d))
        d(L.ones(1, 2)).sum().backward()
        d(L.ones(1, 2))  # (the copy keeps count: b and c got no gradient)
    return run


def _static_graph(L):
    d, x = _ddp(L, _three_linears(L), static_graph=True), L.ones(1, 2)
    for _ in range(3):
        d(x).sum().backward()
    y = d(x).sum()
    y.backward(retain_graph=True)
    y.backward()
    d(x)
    return d.module.a.weight.grad.tolist(), d.module.b.weight.grad


REDUCER = {
    "static_graph": _static_graph,
    "a deep copy": _first_lines(_copied("deepcopy")),
    "a pickled copy": _first_lines(_copied("pickle")),
    "a parameter without gradient": _first_lines(_unused_then_forward),
    "a second backward through the graph": _first_lines(_backward_twice),
    "unused parameters under no_sync": _unused_under_no_sync,
    "find_unused_parameters": _find_unused,
    "two forwards, then two backwards": _two_forwards_then_backwards,
    "a forward without backward": _forward_without_backward,
    "a model wrapped again": _rewrapped,
}


@pytest.mark.parametrize("name", list(REDUCER))
def test_ddp_reducer_accounting(groups, name):
    _same(REDUCER[name])


def test_no_sync_and_require_backward_grad_sync(groups):
    """Gradients accumulate the same with or without syncing; what changes is the flags and the versions of the
    gradients (torch copies the averaged gradient back after each synced backward)."""
    def run(L):
        L.manual_seed(0)
        d, x = _ddp(L, L.nn.Linear(2, 2)), L.tensor([[1.0, -2.0]])
        d(x).sum().backward()
        seen = [d.module.weight.grad._version]
        with d.no_sync():
            d(x).sum().backward()
            seen += [d.require_backward_grad_sync, d.require_forward_param_sync]
        seen += [d.require_backward_grad_sync, d.module.weight.grad._version]
        d.require_backward_grad_sync = False
        d(x).sum().backward()
        seen += [d.require_forward_param_sync, d.module.weight.grad._version]
        d.require_backward_grad_sync = True
        d(x).sum().backward()
        return seen, d.require_forward_param_sync, d.module.weight.grad._version, d.module.weight.grad.tolist()
    _same(run)


# ---- a nanoGPT training step under DDP ------------------------------------------------------------------------

def _gpt(L, vocab=13, n_embd=8, n_head=2, block_size=6):
    nn, F = L.nn, L.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.ln_2 = nn.LayerNorm(n_embd), nn.LayerNorm(n_embd)
            # (no bias on c_attn, as nanoGPT's bias=False: the keys' bias has a zero gradient, rounding noise that
            # AdamW would blow up to whole steps, in each library differently)
            self.c_attn, self.c_proj = nn.Linear(n_embd, 3 * n_embd, bias=False), nn.Linear(n_embd, n_embd)
            self.c_fc, self.mlp_proj = nn.Linear(n_embd, 4 * n_embd), nn.Linear(4 * n_embd, n_embd)

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(self.ln_1(x)).split(n_embd, dim=2)
            q, k, v = (t.view(B, T, n_head, C // n_head).transpose(1, 2) for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).contiguous().view(B, T, C)
            x = x + self.c_proj(y)
            return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(vocab, n_embd), nn.Embedding(block_size, n_embd)
            self.h, self.ln_f = nn.ModuleList([Block(), Block()]), nn.LayerNorm(n_embd)
            self.lm_head = nn.Linear(n_embd, vocab, bias=False)
            self.wte.weight = self.lm_head.weight  # weight tying, as nanoGPT

        def forward(self, idx, targets):
            pos = L.arange(0, idx.size(1), dtype=L.long)
            x = self.wte(idx) + self.wpe(pos)
            for block in self.h:
                x = block(x)
            logits = self.lm_head(self.ln_f(x))
            return logits, F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
    return GPT()


def _train(L, weights, batches, wrap, grad_accum_steps=2, steps=3):
    """build-nanogpt's loop: DDP, require_backward_grad_sync on the last micro step, the loss averaged with
    all_reduce(AVG), clip_grad_norm_, AdamW."""
    model = _gpt(L)
    model.load_state_dict({k: L.tensor(v) for k, v in weights.items()})
    if wrap:
        model = L.nn.parallel.DistributedDataParallel(model)
    raw_model = model.module if wrap else model
    optimizer = L.optim.AdamW(raw_model.parameters(), lr=1e-2, betas=(0.9, 0.95), weight_decay=0.1)
    losses, norms, grads = [], [], []
    for step in range(steps):
        optimizer.zero_grad()
        loss_accum = L.tensor(0.0)
        for micro_step in range(grad_accum_steps):
            x, y = (L.tensor(a) for a in batches[step * grad_accum_steps + micro_step])
            if wrap:
                model.require_backward_grad_sync = micro_step == grad_accum_steps - 1
            _, loss = model(x, y)
            loss = loss / grad_accum_steps
            loss_accum += loss.detach()
            loss.backward()
        if wrap:
            L.distributed.all_reduce(loss_accum, op=L.distributed.ReduceOp.AVG)
            L.distributed.barrier()
        norms.append(L.nn.utils.clip_grad_norm_(model.parameters(), 1.0).item())
        grads.append({n: p.grad.numpy().copy() for n, p in raw_model.named_parameters()})
        optimizer.step()
        losses.append(loss_accum.item())
    return losses, norms, grads, {k: v.numpy().copy() for k, v in raw_model.state_dict().items()}


def test_nanogpt_ddp_training_matches_torch(groups):
    real_torch.manual_seed(0)
    weights = {k: v.numpy().copy() for k, v in _gpt(real_torch).state_dict().items()}
    rs = np.random.RandomState(0)
    batches = [(rs.randint(0, 13, (3, 6)), rs.randint(0, 13, (3, 6))) for _ in range(6)]
    ours, theirs = _train(microtorch, weights, batches, True), _train(real_torch, weights, batches, True)
    unwrapped = _train(microtorch, weights, batches, False)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-5)
    for step, (g_ours, g_theirs) in enumerate(zip(ours[2], theirs[2])):
        assert list(g_ours) == list(g_theirs)
        for name in g_theirs:
            np.testing.assert_allclose(g_ours[name], g_theirs[name], rtol=1e-4, atol=1e-6, err_msg=f"{step} {name}")
    for name in theirs[3]:
        np.testing.assert_allclose(ours[3][name], theirs[3][name], rtol=1e-4, atol=1e-6, err_msg=name)
    # the average over one process is the process's own gradient: DDP changes nothing
    assert ours[0] == unwrapped[0]
    for g_ddp, g_plain in zip(ours[2], unwrapped[2]):
        for name in g_plain:
            np.testing.assert_array_equal(g_ddp[name], g_plain[name])


# ---- DistributedSampler ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [0, 1, 5, 7, 10, 13, 100])
def test_distributed_sampler_indices(n):
    for replicas in (1, 2, 3, 4):
        for rank in range(replicas):
            for shuffle in (True, False):
                for drop_last in (True, False):
                    for seed in (0, 3):
                        ours = microtorch.utils.data.DistributedSampler(
                            range(n), num_replicas=replicas, rank=rank, shuffle=shuffle, seed=seed, drop_last=drop_last)
                        theirs = real_torch.utils.data.DistributedSampler(
                            range(n), num_replicas=replicas, rank=rank, shuffle=shuffle, seed=seed, drop_last=drop_last)
                        for epoch in (0, 1, 7):
                            ours.set_epoch(epoch)
                            theirs.set_epoch(epoch)
                            assert list(ours) == list(theirs), (n, replicas, rank, shuffle, drop_last, seed, epoch)
                        assert (len(ours), ours.num_samples, ours.total_size) == \
                               (len(theirs), theirs.num_samples, theirs.total_size)


def test_distributed_sampler_large_and_errors():
    ours = microtorch.utils.data.distributed.DistributedSampler(range(5000), num_replicas=3, rank=1, seed=11)
    theirs = real_torch.utils.data.distributed.DistributedSampler(range(5000), num_replicas=3, rank=1, seed=11)
    ours.set_epoch(4)
    theirs.set_epoch(4)
    assert list(ours) == list(theirs)
    _same(lambda L: L.utils.data.DistributedSampler(range(4), num_replicas=2, rank=2))
    _same(lambda L: L.utils.data.DistributedSampler(range(4), num_replicas=2, rank=-1))
    _same(lambda L: L.utils.data.DistributedSampler(range(4), num_replicas=2))


def test_distributed_sampler_from_the_group_in_a_dataloader(groups):
    def run(L):
        data = L.utils.data.TensorDataset(L.arange(10.0))
        sampler = L.utils.data.DistributedSampler(data, shuffle=True, seed=5)
        loader = L.utils.data.DataLoader(data, batch_size=4, sampler=sampler)
        seen = []
        for epoch in range(2):
            sampler.set_epoch(epoch)
            seen.append([b[0].tolist() for b in loader])
        return sampler.num_replicas, sampler.rank, seen
    _same(run)


# ---- wiring ---------------------------------------------------------------------------------------------------

def test_namespaces_reach_as_torchs():
    """The imports teaching scripts make, and attribute access after a bare import."""
    code = ("import microtorch\nd = microtorch.distributed\nddp = microtorch.nn.parallel.DistributedDataParallel\n"
            "from microtorch.nn.parallel import DistributedDataParallel as DDP, DataParallel\n"
            "from microtorch.distributed import init_process_group, destroy_process_group\n"
            "import microtorch.distributed as dist\n"
            "from microtorch.utils.data.distributed import DistributedSampler\n"
            "assert DDP is ddp and DataParallel is microtorch.nn.DataParallel and dist is d\n"
            "assert DistributedSampler is microtorch.utils.data.DistributedSampler\n"
            "import sys; assert 'torch' not in sys.modules\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert set(dist_m.__all__) <= set(dir(dist_t)) | {"Work"}
