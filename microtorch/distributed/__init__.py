"""microtorch.distributed: torch.distributed for one process (world size 1), as torch's with the gloo backend.

Teaching scripts (nanoGPT's train.py, build-nanogpt) import it at the top and, when torchrun launched them, call
init_process_group, wrap the model in DistributedDataParallel and use all_reduce, barrier, get_rank... With one
process every collective is its own answer, and these run end to end, with torch's results, version bumps and
errors. A world size above 1 needs other processes that microtorch cannot be: init_process_group refuses it
with a RuntimeError at once (torch would wait for them until its timeout).

is_available() is True. In torch it says whether this build has the distributed package, and code asks it
before using the package (`dist.is_available() and dist.is_initialized()`, DistributedSampler without
num_replicas): here the package is present and works, for the world size one process can have, so such code
should take the same path it takes with torch. Where that path needs more than one process, it meets the clear
refusal above rather than silently skipping distributed setup.
"""
from ._collectives import (all_gather, all_gather_into_tensor, all_gather_single, all_reduce, barrier,  # noqa: F401
                           broadcast, gather, monitored_barrier, reduce, reduce_scatter, reduce_scatter_single,
                           reduce_scatter_tensor, scatter)
from ._group import (GroupMember, ProcessGroup, destroy_process_group, get_backend,  # noqa: F401
                     get_default_backend_for_device, get_global_rank,
                     get_group_rank, get_node_local_rank, get_process_group_ranks, get_rank, get_world_size, group,
                     init_process_group, is_available, is_backend_available, is_gloo_available, is_initialized,
                     is_mpi_available, is_nccl_available, is_torchelastic_launched, is_ucc_available,
                     is_xccl_available, new_group)
from ._objects import all_gather_object, broadcast_object_list, gather_object, scatter_object_list  # noqa: F401
from ._types import (Backend, DistBackendError, DistError, DistNetworkError, DistStoreError, ReduceOp,  # noqa: F401
                     Work, default_pg_timeout)

__all__ = ["Backend", "DistBackendError", "DistError", "DistNetworkError", "DistStoreError", "GroupMember",
           "ProcessGroup", "ReduceOp", "Work", "all_gather", "all_gather_into_tensor", "all_gather_object",
           "all_gather_single", "all_reduce", "barrier", "broadcast", "broadcast_object_list", "default_pg_timeout",
           "destroy_process_group", "gather", "gather_object", "get_backend", "get_default_backend_for_device",
           "get_global_rank", "get_group_rank",
           "get_node_local_rank", "get_process_group_ranks", "get_rank", "get_world_size", "group",
           "init_process_group", "is_available", "is_backend_available", "is_gloo_available", "is_initialized",
           "is_mpi_available", "is_nccl_available", "is_torchelastic_launched", "is_ucc_available",
           "is_xccl_available", "monitored_barrier", "new_group", "reduce", "reduce_scatter", "reduce_scatter_single",
           "reduce_scatter_tensor", "scatter", "scatter_object_list"]
