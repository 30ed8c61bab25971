"""The small types of torch.distributed: ReduceOp, Backend, the Dist*Error family, Work and its Future.

They hold no state of their own; the process group (`_group.py`) and the collectives (`_collectives.py`)
use them."""
import enum
from datetime import timedelta

default_pg_timeout = timedelta(minutes=30)  # torch's default for the gloo backend


class DistError(RuntimeError):
    """Raised by torch.distributed's communication layer (a RuntimeError, as torch's)."""


class DistBackendError(DistError):
    """The backend (gloo, nccl...) failed."""


class DistNetworkError(DistError):
    """A socket could not connect."""


class DistStoreError(DistError):
    """The key-value store that processes meet at timed out or failed."""


class _ReduceOpMeta(type):
    # torch's `isinstance(ReduceOp.SUM, ReduceOp)` is True: the enum member counts as a ReduceOp
    def __instancecheck__(cls, obj):
        return isinstance(obj, RedOpType) or type.__instancecheck__(cls, obj)


class RedOpType(int, enum.Enum):
    """The reduction a collective applies across processes (an int underneath, as torch's: int(SUM) == 0)."""
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8

    __str__ = enum.Enum.__str__  # 'RedOpType.SUM', not the int's '0'


class ReduceOp(metaclass=_ReduceOpMeta):
    """torch.distributed.ReduceOp: ReduceOp.SUM, .AVG, .PRODUCT, .MIN, .MAX, .BAND, .BOR, .BXOR (members of
    ReduceOp.RedOpType). ReduceOp(ReduceOp.MAX) wraps one; a collective takes either."""
    RedOpType = RedOpType

    def __init__(self, op):
        if not isinstance(op, RedOpType):
            raise TypeError(f"ReduceOp(): expected a ReduceOp.RedOpType such as ReduceOp.SUM, got {op!r}")
        self.op = op

    def __eq__(self, other):
        return self.op == (other.op if type(other) is ReduceOp else other)

    __hash__ = object.__hash__  # (torch's: an instance hashes by identity, not as its op)


for _member in RedOpType:
    setattr(ReduceOp, _member.name, _member)


def as_red_op(op, fn):
    """The RedOpType that `op` (a member or a ReduceOp instance) names, for collective `fn`."""
    if type(op) is ReduceOp:
        op = op.op
    if not isinstance(op, RedOpType):
        raise TypeError(f"{fn}(): op must be a torch.distributed.ReduceOp such as ReduceOp.SUM or ReduceOp.AVG, "
                        f"got {op!r}")
    if op is RedOpType.PREMUL_SUM:
        raise TypeError(f"{fn}(): ReduceOp.PREMUL_SUM needs a scale factor, which only torch's NCCL backend takes; "
                        "use ReduceOp.SUM and scale the tensor yourself")
    return op


class Backend(str):
    """torch.distributed.Backend: the backend names. Backend('GLOO') is the lowercase string 'gloo'."""
    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"
    XCCL = "xccl"
    FAKE = "fake"
    backend_list = [UNDEFINED, GLOO, NCCL, UCC, MPI, XCCL, FAKE]
    default_device_backend_map = {"cpu": GLOO, "cuda": NCCL, "xpu": XCCL, "mps": GLOO}

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError("Backend constructor parameter must be string-ish")
        known = getattr(Backend, name.upper(), Backend.UNDEFINED)
        return name.lower() if known == Backend.UNDEFINED else known


class Future:
    """torch.futures.Future as a finished collective gives it: already done, holding its tensors."""

    def __init__(self, value=None):
        self._value = value

    def done(self):
        return True

    def wait(self):
        return self._value

    def value(self):
        return self._value

    def then(self, callback):
        """A new Future holding callback(self) (called now: this one is already done)."""
        return Future(callback(self))

    def add_done_callback(self, callback):
        callback(self)

    def set_result(self, result):
        self._value = result


class Work:
    """What a collective called with async_op=True returns. With one process the work is done when the call
    returns, so wait() returns True at once."""

    def __init__(self, tensors=()):
        self._tensors = list(tensors)

    def wait(self, timeout=None):
        return True

    def is_completed(self):
        return True

    def is_success(self):
        return True

    def exception(self):
        return None

    def synchronize(self):
        pass

    def result(self):
        return self._tensors

    def get_future(self):
        return Future(self._tensors)

    def source_rank(self):
        return 0
