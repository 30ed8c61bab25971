"""The object collectives (all_gather_object, broadcast_object_list, gather_object, scatter_object_list) over a
group of one process.

torch sends a Python object by pickling it into a byte tensor and unpickling it on the other side, so a rank
that receives gets a copy (and an object that cannot be pickled fails with pickle's error). Here the one rank
receives from itself: it gets that same copy, made by a pickle round trip; the sending rank's own list is left
as it is, as in torch."""
import pickle

from ._collectives import check_root, check_root_list, root
from ._group import resolve


def _received(obj):
    return pickle.loads(pickle.dumps(obj))


def all_gather_object(object_list, obj, group=None):
    """object_list[i] = rank i's obj (a copy)."""
    resolve(group)
    if len(object_list) < 1:
        raise IndexError("list assignment index out of range (all_gather_object: object_list needs one entry per "
                         "rank; with world size 1 pass [None])")
    object_list[0] = _received(obj)


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Every rank's object_list becomes rank src's: here src is this rank, whose list stays as it is."""
    resolve(group)
    check_root("broadcast", root(src, group_src, default=0), "broadcast_object_list")
    if len(object_list) == 0:
        raise ValueError("not enough values to unpack (expected 2, got 0) (broadcast_object_list: object_list is "
                         "empty; give the list of objects to send)")


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    """object_gather_list[i] = rank i's obj (a copy), on rank dst only."""
    resolve(group)
    check_root_list(object_gather_list, root(dst, group_dst, default=0), "gather_list", "destination",
                    "gather_object", "object_gather_list=[None]")
    object_gather_list[0] = _received(obj)


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None, group=None,
                        group_src=None):
    """scatter_object_output_list[0] = scatter_object_input_list[rank] of rank src (a copy)."""
    resolve(group)
    src = root(src, group_src, default=0)
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size at least 1. "
                         "(scatter_object_list: pass [None])")
    if src == 0 and scatter_object_input_list is None:
        raise ValueError("source rank must provide non-None scatter_object_input_list (scatter_object_list: pass "
                         "the list of objects to send, one per rank)")
    check_root("broadcast", src, "scatter_object_list")
    scatter_object_output_list[0] = _received(scatter_object_input_list[0])
