"""The process groups of one process: init_process_group, destroy_process_group, new_group and the questions
about them (get_rank, get_world_size, get_backend...), as torch.distributed's with world size 1.

The default group (group.WORLD) exists between init_process_group and destroy_process_group. It has one member,
rank 0; a world size above 1 would need other processes, which microtorch cannot be, so init_process_group
refuses it at once instead of waiting for peers that never come."""
import io
import os
import sys
from datetime import timedelta

from ._rendezvous import rendezvous
from ._types import Backend

NOT_INITIALIZED = "Default process group has not been initialized, please make sure to call init_process_group."


class ProcessGroup:
    """A group of processes that collectives run over; here always the one process, rank 0."""

    def __init__(self, backend, group_name):
        self._backend, self.group_name = backend, group_name

    def rank(self):
        return 0

    def size(self):
        return 1

    def name(self):
        return self._backend


class _World:
    default = None  # the default ProcessGroup, or None
    groups = {}  # every live group: {ProcessGroup: its global ranks}
    count = 0  # groups made since the default one (names subgroups '1', '2'...)


class _WorldMeta(type):
    @property
    def WORLD(cls):
        return _World.default


class GroupMember(metaclass=_WorldMeta):
    """GroupMember.WORLD is the default group (None before init_process_group)."""
    NON_GROUP_MEMBER = -100


class group(metaclass=_WorldMeta):
    """group.WORLD is the default group (None before init_process_group)."""


def is_available():
    return True


def is_initialized():
    return _World.default is not None


def _default():
    if _World.default is None:
        raise ValueError(NOT_INITIALIZED)
    return _World.default


def resolve(group_, collective=True):
    """The ProcessGroup a group= argument names (None: the default one)."""
    default = _default()
    if group_ is None:
        return default
    if isinstance(group_, ProcessGroup):  # (torch runs a collective even over a group destroyed since)
        return group_
    if collective:
        raise ValueError(f"Process group {group_} is not initialized in the world group map. Please initialize the "
                         "group first. (pass group=None, or a group that new_group made and that is not destroyed)")
    raise ValueError(f"Group {group_} is not registered, please create group with torch.distributed.new_group API")


def _check_device_id(device_id):
    from .._tensor import device as _device
    if device_id is None:
        return
    if isinstance(device_id, int) and not isinstance(device_id, bool):
        raise ValueError("device_id is an int, but no accelerator support is found from the current compilation. "
                         "Please use a different compiled version that supports your accelerator. (microtorch runs "
                         "on the CPU: leave device_id out)")
    if isinstance(device_id, _device) and device_id.type == "cpu":
        raise ValueError("init_process_group device_id parameter must be an accelerator with an index (microtorch "
                         "runs on the CPU: leave device_id out)")
    raise ValueError(f"device_id {device_id} does not match the current compilation's accelerator support: None. "
                     "Please use a different compiled version that supports your accelerator. (microtorch runs on "
                     "the CPU: leave device_id out)")


def _check_arguments(init_method, timeout, world_size, rank, store):
    if _World.default is not None:
        raise ValueError("trying to initialize the default process group twice! (call destroy_process_group() "
                         "first, or check dist.is_initialized() before init_process_group)")
    if store is not None and init_method is not None:
        raise AssertionError("Cannot specify both init_method and store.")
    if store is not None and not world_size > 0:
        raise AssertionError("world_size must be positive if using store")
    if store is not None and not rank >= 0:
        raise AssertionError("rank must be non-negative if using store")
    if timeout is not None and not isinstance(timeout, timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got {timeout} "
                        "(init_process_group: pass e.g. timeout=datetime.timedelta(minutes=30))")


_NOT_BUILT = {"nccl": "NCCL", "xccl": "XCCL"}


def _check_backend(backend):
    """torch's errors for a backend this build lacks (microtorch, like the CPU build of torch, has gloo)."""
    for part in backend.split(","):
        name = part.split(":")[-1]
        if name in _NOT_BUILT:
            raise RuntimeError(f"Distributed package doesn't have {_NOT_BUILT[name]} built in (microtorch runs on "
                               "the CPU: use backend='gloo', or leave backend out)")
        if name == "mpi":
            _check_mpi(name)
        if name == "ucc":
            raise AssertionError("Unknown c10d backend type UCC (microtorch has gloo only: use backend='gloo')")
        if name not in ("gloo", "undefined", "fake"):
            raise AssertionError(f"Unknown backend type {name} (init_process_group: use backend='gloo')")


def _check_mpi(backend):
    if backend == Backend.MPI:
        raise RuntimeError("Distributed package doesn't have MPI built in. MPI is only included if you build "
                           "PyTorch from source on a host that has MPI installed. (microtorch: use backend='gloo')")


def _check_one_process(rank, world_size):
    """Refuse what would need other processes: torch would wait for them until the timeout."""
    if world_size > 1:
        raise RuntimeError(
            f"init_process_group: world_size is {world_size} (this is rank {rank}), but microtorch runs in one "
            f"process only: its torch.distributed supports world_size 1, and the other {world_size - 1} "
            "process(es) can never join it (torch would wait for them until the timeout). Run the script without "
            "torchrun (plain `python script.py`), or with `torchrun --nproc_per_node=1`.")
    if world_size == 0:
        raise ValueError("TCPStore world size cannot be 0 (init_process_group: set WORLD_SIZE=1 or pass "
                         "world_size=1)")
    if world_size < 0:
        raise RuntimeError(f"init_process_group: world_size {world_size} is not a number of processes (gloo: "
                           f"rank < size. {rank} vs {world_size}); set WORLD_SIZE=1 or pass world_size=1")
    if rank != 0:
        raise RuntimeError(
            f"init_process_group: rank {rank} with world_size 1: the only rank is 0 (torch would wait for a "
            "rank-0 process to accept its connection until the timeout). Set RANK=0 or pass rank=0.")


def _prefix_tracebacks(rank):
    """torch prefixes each line of an uncaught exception's traceback with '[rank0]: ' from here on."""
    previous, prefix = sys.excepthook, f"[rank{rank}]"

    def _distributed_excepthook(*args):
        stderr, sys.stderr = sys.stderr, io.StringIO()
        try:
            previous(*args)
        finally:
            text, sys.stderr = sys.stderr.getvalue(), stderr
        sys.stderr.write("\n".join(f"{prefix}: {line}" if line != "" else "" for line in text.split("\n")))
        sys.stderr.flush()
    sys.excepthook = _distributed_excepthook


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    """Join the default process group: with microtorch, a group of one process (rank 0, world size 1).

    rank and world size come from `store`'s arguments, or the init_method URL and arguments, or (the default,
    env://) the environment torchrun sets. A world size above 1, or a rank other than 0, is refused with a
    RuntimeError (torch would wait for the other processes until its timeout)."""
    _check_arguments(init_method, timeout, world_size, rank, store)
    _check_device_id(device_id)
    backend = Backend("undefined" if backend is None else backend)
    _check_mpi(backend)
    if store is None:
        init_method = "env://" if init_method is None else init_method
        rank, world_size = rendezvous(init_method, rank, world_size)
    _check_one_process(rank, world_size)
    _check_backend(backend)
    _World.default = pg = ProcessGroup(backend, "0")
    _World.groups, _World.count = {pg: [0]}, 0
    _prefix_tracebacks(rank)


def destroy_process_group(group=None):
    """Leave `group` (None: the default group, and with it every group)."""
    if group == GroupMember.NON_GROUP_MEMBER:
        return
    pg = _World.default if group is None else group
    if pg is None:
        raise AssertionError("Process group cannot be None (destroy_process_group: nothing to destroy; "
                             "call init_process_group first, or check dist.is_initialized())")
    if pg not in _World.groups:
        raise ValueError("Invalid process group specified (destroy_process_group: it was destroyed already, or "
                         "was not made by new_group)")
    if pg is _World.default:
        _World.default, _World.groups, _World.count = None, {}, 0
    else:
        del _World.groups[pg]


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization=False,
              group_desc=None, device_id=None, sort_ranks=True):
    """A group of some of the ranks: here [0], the only one."""
    default = _default()
    ranks = [0] if ranks is None else list(ranks)
    if not ranks:
        raise TypeError("new_group: ranks is empty; give the ranks of the group, e.g. [0], or None for all")
    if len(set(ranks)) != len(ranks):
        raise ValueError(f"ranks list must not contain duplicate entries, got {ranks}")
    for r in ranks:
        if not 0 <= r < 1:
            raise ValueError(f"Rank {r} is out of range. Valid ranks are 0 to 0 (world_size=1)")
    backend = default.name() if backend is None else Backend(backend)
    _check_mpi(backend)
    _check_backend(backend)
    _World.count += 1
    pg = ProcessGroup(backend, str(_World.count))
    _World.groups[pg] = ranks
    return pg


def get_rank(group=None):
    resolve(group, collective=False)
    return 0


def get_world_size(group=None):
    resolve(group, collective=False)
    return 1


def get_backend(group=None):
    return resolve(group, collective=False).name()


def get_default_backend_for_device(device):
    """The backend torch picks for a device type: gloo for the CPU, nccl for cuda (which this machine lacks)."""
    kind = device if isinstance(device, str) else getattr(device, "type", str(device))
    backends = {"cpu": "gloo", "cuda": "nccl", "xpu": "xccl"}
    if kind.split(":")[0] not in backends:
        raise ValueError(f"Default backend not registered for device : {kind}")
    return backends[kind.split(":")[0]]


def get_process_group_ranks(group):
    ranks = _World.groups.get(resolve(group, collective=False))
    if ranks is None:
        raise ValueError(f"Group {group} is not registered, please create group with torch.distributed.new_group "
                         "API (it was destroyed)")
    return list(ranks)


def _registered_ranks(group):
    """The global ranks of a group new_group made, or torch's ValueError for one it did not (or that is destroyed)."""
    ranks = _World.groups.get(group) if isinstance(group, ProcessGroup) else None
    if ranks is None:
        raise ValueError(f"Group {group} is not registered, please create group with torch.distributed.new_group "
                         "API")
    return ranks


def get_global_rank(group, group_rank):
    """The global rank of `group`'s member group_rank."""
    if group is GroupMember.WORLD:
        return group_rank
    ranks = _registered_ranks(group)
    if not 0 <= group_rank < len(ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {group}")
    return ranks[group_rank]


def get_group_rank(group, global_rank):
    """The rank in `group` of the process whose global rank is global_rank."""
    if group is GroupMember.WORLD:
        return global_rank
    ranks = _registered_ranks(group)
    if global_rank not in ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {group}")
    return ranks.index(global_rank)


def is_gloo_available():
    return True


def is_nccl_available():
    return False


def is_mpi_available():
    return False


def is_ucc_available():
    return False


def is_xccl_available():
    return False


def is_backend_available(backend):
    return Backend(backend) in (Backend.GLOO, Backend.FAKE)


def is_torchelastic_launched():
    """True under torchrun (which sets TORCHELASTIC_RUN_ID)."""
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def get_node_local_rank(fallback_rank=None):
    """LOCAL_RANK from the environment (torchrun sets it), else fallback_rank."""
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError("LOCAL_RANK is not in the environment. Consider passing fallback_rank to allow "
                       "`get_node_local_rank` to work, assuming you are not running in a multi-device context and "
                       "want the code to run locally instead.")
