"""The tensor collectives (all_reduce, broadcast, all_gather...) over a group of one process.

With one process every collective's result is its own input, but the tensors are touched as torch's gloo
backend touches them, so that what a student sees is torch's: an op that copies its result into an output
(all_gather, gather, all_gather_into_tensor, reduce_scatter_tensor) does it with copy_, which bumps the output's
version and refuses a leaf that requires grad; ReduceOp.AVG divides in place by the world size (div_), which
refuses an integer tensor with torch's message; the ops gloo leaves alone (all_reduce with SUM, MIN, ...,
broadcast, reduce, scatter's own data) neither change the tensor nor bump its version."""
import warnings

from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..ops.elementwise import DivScalar
from ..ops.inplace import apply_inplace
from ._group import resolve
from ._types import RedOpType, Work, as_red_op

_BITWISE = (RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR)
_TYPE_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def check_tensor(t, name, fn):
    if not isinstance(t, Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type torch.Tensor\n"
                        f"             but got {type(t)} instead. ({fn}: pass a tensor)")


def check_tensor_list(ts, name, fn):
    if not isinstance(ts, list):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type List[torch.Tensor]\n"
                        f"             but got {type(ts)} instead. ({fn}: pass a list of tensors)")
    if not all(isinstance(t, Tensor) for t in ts):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type List[torch.Tensor]\n"
                        f"             but got {type(ts)} with elements of type {[type(t) for t in ts]}. "
                        f"({fn}: pass a list of tensors)")


def _same_dtypes(tensors, fn):
    dtypes = [t.dtype for t in tensors]
    for d in dtypes[1:]:
        if d != dtypes[0]:
            raise ValueError(f"Invalid usage of tensors with different dtypesFound {dtypes[0]} and  {d} ({fn}: give "
                             "every tensor the same dtype)")


def _shape(t):
    return "(" + ", ".join(str(n) for n in t.shape) + ")"


def _check_size(gloo_op, expected, got, fn):
    if tuple(expected.shape) != tuple(got.shape):
        raise RuntimeError(f"ProcessGroupGloo::{gloo_op}: invalid tensor size at index 0 (expected {_shape(expected)}, "
                           f"got {_shape(got)}) ({fn}: with world size 1 the output has the input's shape)")


def root(global_rank, group_rank, default=None):
    """The src or dst rank a rooted collective names, given as a global or a group rank (the same here)."""
    if global_rank is not None and group_rank is not None:
        raise ValueError("Can't specify both group_rank and global_rank (pass src/dst or group_src/group_dst)")
    if global_rank is None and group_rank is None:
        if default is None:
            raise ValueError("Must specify global_rank or group_rank (pass src=0 or dst=0: rank 0 is the only one)")
        return default
    return global_rank if global_rank is not None else group_rank


def check_root(gloo_op, rank, fn):
    if rank != 0:
        raise RuntimeError(f"ProcessGroupGloo::{gloo_op}: invalid root rank: {rank} ({fn}: with world size 1 the "
                           "only rank is 0)")


def check_root_list(listed, rank, name, role, fn, fix):
    """torch's checks of a rooted collective's list (gather's gather_list, scatter's scatter_list): given on the root
    only, and there required. role: 'destination' or 'source'."""
    if rank != 0 and listed:
        raise ValueError(f"Argument ``{name}`` must NOT be specified on non-{role} ranks. ({fn}: with world size 1 "
                         f"the only rank, and so the {role}, is 0)")
    check_root(fn.split("_")[0], rank, fn)
    if not listed:
        raise ValueError(f"Argument ``{name}`` must be specified on {role} rank. ({fn}: pass {fix})")


def check_gloo_type(t, fn):
    """gloo, torch's CPU backend, has no int16 collectives (and no complex gather)."""
    if str(t.dtype).endswith("int16") or (fn == "gather" and t.dtype.is_complex):
        raise RuntimeError(f"Invalid scalar type ({fn}: torch's gloo backend cannot send a tensor of dtype "
                           f"{t.dtype}; convert it, e.g. to int32 with .int() or to real pairs with view_as_real)")


def _done(async_op, tensors):
    return Work(tensors) if async_op else None


def _check_reduction(t, op, fn, complex_error=RuntimeError):
    """torch's refusals of a reduction: most ops on complex tensors, bitwise ops on floating-point ones, and
    AVG (whose division makes a float) into an integer tensor."""
    if t.dtype.is_complex and op not in (RedOpType.SUM, RedOpType.AVG):
        raise complex_error(f"{fn} does not support {str(op)} on complex tensors (use ReduceOp.SUM or "
                            "ReduceOp.AVG, or reduce the real and imaginary parts apart)")
    check_gloo_type(t, fn)
    integral = not (t.dtype.is_floating_point or t.dtype.is_complex)
    if op in _BITWISE and not integral:
        raise RuntimeError(f"Cannot use ReduceOp.{op.name} with non-integral dtype ({fn}: bitwise reductions take "
                           "integer or bool tensors)")
    if op is RedOpType.AVG and integral:
        name = _TYPE_NAMES[str(t.dtype).split(".")[-1]]
        raise RuntimeError(f"result type Float can't be cast to the desired output type {name} ({fn}: ReduceOp.AVG "
                           "divides by the world size; reduce a floating-point tensor, or use ReduceOp.SUM)")


def _average_in_place(t):
    # gloo's AVG divides the result in place by the world size (a number: torch's div_.Scalar), which bumps the
    # version, records DivBackward1 on a tensor with history and refuses a leaf that requires grad, as in torch
    apply_inplace(t, lambda s: DivScalar.apply(s, 1), op="div_")


def all_reduce(tensor, op=RedOpType.SUM, group=None, async_op=False):
    """Reduce `tensor` across the group, in place: with one process it keeps its values."""
    check_tensor(tensor, "tensor", "all_reduce")
    op = as_red_op(op, "all_reduce")
    resolve(group)
    _check_reduction(tensor, op, "all_reduce", complex_error=ValueError)
    if op is RedOpType.AVG:
        _average_in_place(tensor)
    return _done(async_op, [tensor])


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copy rank src's `tensor` to every rank: with one process, src is this one and nothing moves."""
    check_tensor(tensor, "tensor", "broadcast")
    resolve(group)
    check_root("broadcast", root(src, group_src), "broadcast")
    check_gloo_type(tensor, "broadcast")
    return _done(async_op, [tensor])


def reduce(tensor, dst=None, op=RedOpType.SUM, group=None, async_op=False, group_dst=None):
    """Reduce `tensor` across the group into rank dst's."""
    check_tensor(tensor, "tensor", "reduce")
    op = as_red_op(op, "reduce")
    resolve(group)
    check_root("reduce", root(dst, group_dst), "reduce")
    _check_reduction(tensor, op, "reduce")
    if op is RedOpType.AVG:
        _average_in_place(tensor)
    return _done(async_op, [tensor])


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """tensor_list[i] = rank i's `tensor`: here tensor_list has one entry, which gets a copy of `tensor`."""
    check_tensor_list(tensor_list, "tensor_list", "all_gather")
    check_tensor(tensor, "tensor", "all_gather")
    _same_dtypes(tensor_list + [tensor], "all_gather")
    resolve(group)
    if len(tensor_list) != 1:
        raise RuntimeError(f"ProcessGroupGloo::allgather: invalid output tensor list at index 0 (expected length 1, "
                           f"got {len(tensor_list)}) (all_gather: give a list of world_size = 1 tensors)")
    _check_size("allgather", tensor, tensor_list[0], "all_gather")
    check_gloo_type(tensor, "all_gather")
    tensor_list[0].copy_(tensor.detach())
    return _done(async_op, tensor_list)


def _first_chunk(t, fn):
    """The part of t that rank 0's data fills (all of it, as a view that split() made, as torch's)."""
    if t.dim() == 0:
        raise RuntimeError(f"chunk expects at least a 1-dimensional tensor ({fn} splits along dim 0: give it "
                           "tensors of at least one dimension, e.g. t.reshape(1))")
    return t.split(max(t.shape[0], 1))[0]


def all_gather_single(output_tensor, input_tensor, group=None, async_op=False, fn="all_gather_single"):
    """Gather every rank's input_tensor into output_tensor, concatenated along dim 0."""
    check_tensor(input_tensor, "input_tensor", fn)
    check_tensor(output_tensor, "output_tensor", fn)
    resolve(group)
    if output_tensor.dtype != input_tensor.dtype:
        raise RuntimeError(f"ProcessGroupGloo::allgather: invalid tensor type at index 0 (expected "
                           f"{input_tensor.dtype}, got {output_tensor.dtype}) ({fn}: give the output the input's "
                           "dtype)")
    _check_size("allgather", input_tensor, output_tensor, fn)
    check_gloo_type(input_tensor, fn)
    _first_chunk(output_tensor, fn).copy_(input_tensor.detach())
    return _done(async_op, [output_tensor])


def reduce_scatter_single(output, input, op=RedOpType.SUM, group=None, async_op=False, fn="reduce_scatter_single"):
    """Reduce `input` across ranks and give rank i the i-th chunk along dim 0: here the whole of it."""
    check_tensor(input, "input", fn)
    check_tensor(output, "output", fn)
    op = as_red_op(op, fn)
    resolve(group)
    _check_reduction(input, op, fn)
    if output.dtype != input.dtype:
        raise RuntimeError(f"{fn}: the output's dtype {output.dtype} is not the input's {input.dtype} (give both "
                           "the same dtype)")
    if tuple(output.shape) != tuple(input.shape):
        raise RuntimeError(f"{fn}: output of shape {_shape(output)} times world size 1 does not make the input's "
                           f"shape {_shape(input)} (with world size 1 the output has the input's shape)")
    output.copy_(_first_chunk(input, fn))
    return _done(async_op, [output])


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """all_gather_single under its old name, which torch 2.13 deprecates (with a FutureWarning)."""
    warnings.warn("`torch.distributed.all_gather_into_tensor` is deprecated. Please use "
                  "`torch.distributed.all_gather_single` instead.", FutureWarning, stacklevel=2)
    return all_gather_single(output_tensor, input_tensor, group, async_op, fn="all_gather_into_tensor")


def reduce_scatter_tensor(output, input, op=RedOpType.SUM, group=None, async_op=False):
    """reduce_scatter_single under its old name, which torch 2.13 deprecates (with a FutureWarning)."""
    warnings.warn("`torch.distributed.reduce_scatter_tensor` is deprecated. Please use "
                  "`torch.distributed.reduce_scatter_single` instead.", FutureWarning, stacklevel=2)
    return reduce_scatter_single(output, input, op, group, async_op, fn="reduce_scatter_tensor")


def reduce_scatter(output, input_list, op=RedOpType.SUM, group=None, async_op=False):
    """Reduce input_list[i] across ranks into rank i's `output`: here output gets input_list[0]."""
    check_tensor(output, "output", "reduce_scatter")
    check_tensor_list(input_list, "input_list", "reduce_scatter")
    op = as_red_op(op, "reduce_scatter")
    resolve(group)
    _check_reduction(output, op, "reduce_scatter")
    if len(input_list) != 1:
        raise RuntimeError(f"reduce_scatter: input_list has {len(input_list)} tensors; give one per rank (world "
                           "size 1: one)")
    _same_dtypes([output] + input_list, "reduce_scatter")
    _check_size("reduce_scatter", input_list[0], output, "reduce_scatter")
    output.copy_(input_list[0])
    return _done(async_op, [output])


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """gather_list[i] = rank i's `tensor`, on rank dst only."""
    check_tensor(tensor, "tensor", "gather")
    if gather_list:
        check_tensor_list(gather_list, "gather_list", "gather")
        _same_dtypes([tensor] + gather_list, "gather")
    resolve(group)
    check_root_list(gather_list, root(dst, group_dst, default=0), "gather_list", "destination", "gather",
                    "gather_list=[torch.empty_like(tensor)]")
    if len(gather_list) != 1:
        raise RuntimeError(f"ProcessGroupGloo::gather: Incorrect output list size {len(gather_list)}. Output list "
                           "size should be 1, same as size of the process group.")
    _check_size("gather", tensor, gather_list[0], "gather")
    check_gloo_type(tensor, "gather")
    gather_list[0].copy_(tensor.detach())
    return _done(async_op, gather_list)


def _write_quietly(dst, src):
    """Write src's values into dst as gloo's scatter does, through memory: no version bump, no history."""
    if dst._data.flags.writeable:
        dst._data[...] = src._data
        return
    with no_grad():  # (a view numpy cannot write through: take the ordinary path)
        dst.copy_(src)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """Rank i's `tensor` gets scatter_list[i] of rank src's: here scatter_list[0]."""
    check_tensor(tensor, "tensor", "scatter")
    if scatter_list:
        check_tensor_list(scatter_list, "scatter_list", "scatter")
        _same_dtypes([tensor] + scatter_list, "scatter")
    resolve(group)
    check_root_list(scatter_list, root(src, group_src, default=0), "scatter_list", "source", "scatter",
                    "scatter_list=[the tensor to send]")
    if len(scatter_list) != 1:
        raise RuntimeError(f"ProcessGroupGloo::scatter: Incorrect input list size {len(scatter_list)}. Input list "
                           "size should be 1, same as size of the process group.")
    _check_size("scatter", tensor, scatter_list[0], "scatter")
    check_gloo_type(tensor, "scatter")
    _write_quietly(tensor, scatter_list[0])
    return _done(async_op, [tensor])


def barrier(group=None, async_op=False, device_ids=None, timeout=None):
    """Wait until every rank of the group arrives: with one process, at once."""
    resolve(group)
    return _done(async_op, [])


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    resolve(group)
