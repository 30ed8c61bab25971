"""torch.autograd.graph's gradient edges, version bumps, and mutation of saved tensors."""
import contextlib
from typing import NamedTuple, Optional

from .node import accumulator as _accumulator


class GradientEdge(NamedTuple):
    """Where a tensor's gradient is computed: its grad_fn (or a leaf's AccumulateGrad) and output slot."""
    node: object
    output_nr: int
    ownership_token: Optional[object] = None


def get_gradient_edge(tensor):
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require "
                           "gradients (call requires_grad_() on it, or take the edge of a tensor in the graph)")
    node = tensor.grad_fn if tensor.grad_fn is not None else _accumulator(tensor)
    return GradientEdge(node, tensor._output_nr)


def increment_version(tensor):
    """Mark tensors as modified in place (for changes made behind autograd's back, e.g. through .numpy()):
    backward then refuses saved copies of them, as after any in-place op."""
    for t in (tensor,) if hasattr(tensor, "_version_counter") else tensor:
        t._version_counter[0] += 1


class _AllowMutationOnSavedContext:
    """What `allow_mutation_on_saved_tensors()` yields (torch's context object)."""


@contextlib.contextmanager
def allow_mutation_on_saved_tensors():
    """Inside, a tensor saved for backward may be modified in place: backward uses the value it had when
    it was saved (each saved tensor is kept as a copy)."""
    from .graph import saved_tensors_hooks
    with saved_tensors_hooks(lambda t: t.detach().clone() if not t.requires_grad else t.clone(), lambda t: t):
        yield _AllowMutationOnSavedContext()


def set_warn_on_accumulate_grad_stream_mismatch(enabled):
    """A CUDA-stream warning switch: microtorch has no streams, so there is nothing to warn about."""


def set_override_stale_capture_stream(enabled):
    """A CUDA-graph-capture switch: microtorch has no streams, so it changes nothing."""


@contextlib.contextmanager
def region_activation_memory_budget(budget):
    """torch.compile's activation-memory budget for a region; eager code (all of microtorch) ignores it."""
    if not 0.0 <= budget <= 1.0:
        raise ValueError(f"budget must be in [0, 1], got {budget}")
    yield
